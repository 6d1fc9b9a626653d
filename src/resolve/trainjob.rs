//! `TrainJob` (`trainer.kubeflow.org/v1alpha1`; the `v2alpha1` spelling of some docs is accepted):
//! the fields that decide what pods a job gets.
//! Source: `kubeflow/trainer@v2.1.0:pkg/apis/trainer/v1alpha1/trainjob_types.go`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{EnvVar, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const API_VERSIONS: &[&str] = &[
    "trainer.kubeflow.org/v1alpha1",
    "trainer.kubeflow.org/v2alpha1",
];

#[derive(Debug, Clone, Deserialize)]
pub struct TrainJob {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: TrainJobSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TrainJobSpec {
    #[serde(default)]
    pub runtime_ref: RuntimeRef,
    #[serde(default)]
    pub trainer: Option<Trainer>,
    #[serde(default)]
    pub initializer: Option<Initializer>,
    #[serde(default)]
    pub pod_template_overrides: Vec<PodTemplateOverride>,
    /// Labels/annotations for the JobSet (v2.1).
    #[serde(default)]
    pub labels: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub annotations: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub suspend: Option<bool>,
    #[serde(default)]
    pub managed_by: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeRef {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub api_group: Option<String>,
    /// `ClusterTrainingRuntime` (default) or `TrainingRuntime`.
    #[serde(default)]
    pub kind: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Trainer {
    #[serde(default)]
    pub image: Option<String>,
    #[serde(default)]
    pub command: Option<Vec<String>>,
    #[serde(default)]
    pub args: Option<Vec<String>>,
    #[serde(default)]
    pub env: Vec<EnvVar>,
    #[serde(default)]
    pub num_nodes: Option<i32>,
    #[serde(default)]
    pub resources_per_node: Option<ResourceRequirements>,
    /// `int` (HEAD) or `auto`/`cpu`/`gpu`/int (v2.1).
    #[serde(default)]
    pub num_proc_per_node: Option<Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct Initializer {
    #[serde(default)]
    pub dataset: Option<InitializerSpec>,
    #[serde(default)]
    pub model: Option<InitializerSpec>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializerSpec {
    #[serde(default)]
    pub storage_uri: Option<String>,
    #[serde(default)]
    pub env: Vec<EnvVar>,
    #[serde(default)]
    pub secret_ref: Option<Value>,
}

/// One `podTemplateOverrides[]` entry (v2.1 `PodTemplateOverride`).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodTemplateOverride {
    #[serde(default)]
    pub target_jobs: Vec<TargetJob>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<OverrideMetadata>,
    /// A `PodSpecOverride`, kept as JSON: it is a strategic merge patch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<Value>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct TargetJob {
    #[serde(default)]
    pub name: String,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct OverrideMetadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

impl TrainJob {
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or("")
    }

    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or("default")
    }
}
