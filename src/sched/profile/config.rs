//! The configuration file, as upstream's v1 types (`staging/src/k8s.io/kube-scheduler/config/v1/types.go`);
//! strict: unknown fields are errors.

use serde::Deserialize;
use serde_json::Value;

use super::*;

/// `KubeSchedulerConfiguration` (`staging/src/k8s.io/kube-scheduler/config/v1/types.go`).
/// Fields that cannot change a simulated placement are decoded (so typos are caught) and
/// otherwise ignored.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub(super) struct RawConfig {
    pub(super) api_version: String,
    pub(super) kind: String,
    pub(super) parallelism: Option<i32>,
    /// `componentbaseconfigv1alpha1.LeaderElectionConfiguration`.
    pub(super) leader_election: Option<serde_json::Map<String, Value>>,
    /// `componentbaseconfigv1alpha1.ClientConnectionConfiguration`.
    pub(super) client_connection: Option<serde_json::Map<String, Value>>,
    pub(super) enable_profiling: Option<bool>,
    pub(super) enable_contention_profiling: Option<bool>,
    pub(super) percentage_of_nodes_to_score: Option<i32>,
    pub(super) pod_initial_backoff_seconds: Option<i64>,
    pub(super) pod_max_backoff_seconds: Option<i64>,
    pub(super) profiles: Option<Vec<RawProfile>>,
    pub(super) extenders: Option<Vec<Value>>,
    pub(super) delay_cache_until_active: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawProfile {
    pub(super) scheduler_name: Option<String>,
    pub(super) percentage_of_nodes_to_score: Option<i32>,
    pub(super) plugins: Option<RawPlugins>,
    pub(super) plugin_config: Option<Vec<RawPluginConfig>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawPlugins {
    pub(super) pre_enqueue: Option<RawPluginSet>,
    pub(super) queue_sort: Option<RawPluginSet>,
    pub(super) pre_filter: Option<RawPluginSet>,
    pub(super) filter: Option<RawPluginSet>,
    pub(super) post_filter: Option<RawPluginSet>,
    pub(super) pre_score: Option<RawPluginSet>,
    pub(super) score: Option<RawPluginSet>,
    pub(super) reserve: Option<RawPluginSet>,
    pub(super) permit: Option<RawPluginSet>,
    pub(super) pre_bind: Option<RawPluginSet>,
    pub(super) bind: Option<RawPluginSet>,
    pub(super) post_bind: Option<RawPluginSet>,
    pub(super) multi_point: Option<RawPluginSet>,
}

impl RawPlugins {
    pub(super) fn point(&self, p: ExtensionPoint) -> Option<&RawPluginSet> {
        match p {
            ExtensionPoint::PreFilter => self.pre_filter.as_ref(),
            ExtensionPoint::Filter => self.filter.as_ref(),
            ExtensionPoint::PostFilter => self.post_filter.as_ref(),
            ExtensionPoint::Reserve => self.reserve.as_ref(),
            ExtensionPoint::PreScore => self.pre_score.as_ref(),
            ExtensionPoint::Score => self.score.as_ref(),
            ExtensionPoint::PreBind => self.pre_bind.as_ref(),
            ExtensionPoint::Bind => self.bind.as_ref(),
            ExtensionPoint::PostBind => self.post_bind.as_ref(),
            ExtensionPoint::Permit => self.permit.as_ref(),
            ExtensionPoint::PreEnqueue => self.pre_enqueue.as_ref(),
            ExtensionPoint::QueueSort => self.queue_sort.as_ref(),
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPluginSet {
    pub(super) enabled: Option<Vec<RawPlugin>>,
    pub(super) disabled: Option<Vec<RawPlugin>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPlugin {
    pub(super) name: String,
    pub(super) weight: Option<i32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPluginConfig {
    pub(super) name: String,
    pub(super) args: Option<Value>,
}
