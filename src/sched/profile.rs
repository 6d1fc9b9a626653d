//! Scheduling profiles from a `KubeSchedulerConfiguration` (`kubescheduler.config.k8s.io/v1`).
//!
//! A profile is resolved exactly as kube-scheduler resolves it:
//!
//! 1. **Defaults** (`pkg/scheduler/apis/config/v1/defaults.go`, `SetDefaults_KubeSchedulerConfiguration`):
//!    no `profiles` → one profile; a single profile without `schedulerName` is
//!    `default-scheduler`; plugin args get their defaults (`SetDefaults_*Args`).
//! 2. **Plugin merge** (`pkg/scheduler/apis/config/v1/default_plugins.go`, `mergePlugins` /
//!    `mergePluginSet`): the user's plugin sets are merged into the default `multiPoint` list
//!    ([`DEFAULT_MULTI_POINT`]); `disabled: [{name: "*"}]` drops every default of that set; a
//!    user-enabled default plugin replaces the default in place (keeping the user's weight);
//!    other user plugins are appended.
//! 3. **Validation** (`pkg/scheduler/apis/config/validation/validation.go`,
//!    `validation_pluginargs.go`), with upstream's messages.
//! 4. **Framework expansion** (`pkg/scheduler/framework/runtime/framework.go`, `NewFramework`,
//!    `updatePluginList`, `expandMultiPointPlugins`, `getScoreWeights`): each extension point
//!    gets its specific plugins plus the `multiPoint` plugins that implement it and are not
//!    disabled there; a plugin configured at a specific point overrides its `multiPoint` entry;
//!    a score plugin's weight is the first one configured (`score`, then `multiPoint`), and a
//!    weight of 0 (or none) counts as 1.
//!
//! What a simulation does not need is read and checked, then ignored: `leaderElection`,
//! `clientConnection`, `parallelism`, `podInitialBackoffSeconds`, `podMaxBackoffSeconds`,
//! `enableProfiling`, `enableContentionProfiling`, `delayCacheUntilActive`, and the plugins
//! listed as [`Support::NoEffect`] (schedsim's pods bind no volumes or host ports).
//! `extenders` are an error: an extender is an HTTP service schedsim cannot call.
//!
//! As upstream, `pluginConfig` for a plugin that is not enabled is accepted (and its args
//! validated), plugin score weights are not range-checked (a negative weight is kept), and a
//! plugin without an args type (`TaintToleration`, …) takes any args unread.
//!
//! Divergences from upstream, all deliberate and all stricter:
//! - plugin names outside the in-tree registry (unknown, removed or out-of-tree, see
//!   [`KNOWN_PLUGINS`]) are errors everywhere, also in `disabled` and `pluginConfig` (upstream
//!   silently ignores both there; a typo would silently leave the default in effect);
//! - `NodeResourcesFit` args are validated even when the plugin is not enabled (upstream only
//!   validates them in `NewFit`, because `validatePluginConfig` keys them as
//!   `"NodeResourcesFitArgs"`), and `type: RequestedToCapacityRatio` without
//!   `requestedToCapacityRatio` is an error (upstream dereferences a nil pointer);
//! - Kubernetes objects inside args (`addedAffinity`, `defaultConstraints`) are decoded with
//!   k8s-openapi, which ignores unknown fields there (upstream's strict decoding rejects them);
//! - only the first error is reported, and validation errors of a later profile may be
//!   reported before a cross-profile one (`validateCommonQueueSort`).

use std::collections::{HashMap, HashSet};
use std::path::Path;

use k8s_openapi::api::core::v1::{
    Container, NodeAffinity, NodeSelectorTerm, PodSpec, TopologySpreadConstraint,
};
use serde::Deserialize;
use serde_json::Value;

use crate::error::InputError;
use crate::features::FeatureGates;
use crate::load::validate::validate_pod_spec;
use crate::load::yaml::Document;
use crate::model::labels::is_qualified_name;
use crate::sched::framework::names;

/// `v1.DefaultSchedulerName`.
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";
/// The one configuration version kube-scheduler still reads (v1beta3 was removed in v1.29).
pub const API_VERSION: &str = "kubescheduler.config.k8s.io/v1";
pub const KIND: &str = "KubeSchedulerConfiguration";
/// `config.MaxCustomPriorityScore`: shape scores are 0..=10, scaled ×10 to node scores.
pub const MAX_CUSTOM_PRIORITY_SCORE: i64 = 10;
/// Upper bound of a `ResourceSpec` weight (`validateResources`).
pub const MAX_RESOURCE_WEIGHT: i64 = 100;

// ---------------------------------------------------------------------------------------------
// Resolved profile
// ---------------------------------------------------------------------------------------------

/// One resolved scheduling profile: which of schedsim's plugins run where, and their args.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub scheduler_name: String,
    /// `SchedulingGates` is enabled at PreEnqueue.
    pub scheduling_gates: bool,
    /// Which filter plugins are enabled at Filter.
    pub filters: Filters,
    /// Score weight per plugin; 0 = not a score plugin of this profile.
    pub weights: Weights,
    /// `NodeResourcesFitArgs`.
    pub fit: FitArgs,
    /// `NodeResourcesBalancedAllocationArgs.resources` (default cpu 1, memory 1).
    pub balanced_resources: Vec<ResourceSpec>,
    /// `NodeAffinityArgs.addedAffinity`.
    pub added_affinity: Option<NodeAffinity>,
    /// `InterPodAffinityArgs.hardPodAffinityWeight` (default 1).
    pub hard_pod_affinity_weight: i64,
    /// `InterPodAffinityArgs.ignorePreferredTermsOfExistingPods`.
    pub ignore_preferred_terms_of_existing_pods: bool,
    /// `DefaultPreemption` is enabled at PostFilter.
    pub preemption: bool,
    /// The profile's `percentageOfNodesToScore`, else the global one; `None` when neither is
    /// set (upstream default 0 = adaptive). Parsed and validated only.
    pub percentage_of_nodes_to_score: Option<i32>,
    /// `PodTopologySpreadArgs`: `None` = `defaultingType: System` (the built-in default
    /// constraints); `Some(list)` = `defaultingType: List` with these constraints (may be empty).
    pub spread_default_constraints: Option<Vec<TopologySpreadConstraint>>,
    /// scheduler-plugins' `Coscheduling` is enabled at Permit: pods labelled
    /// `scheduling.x-k8s.io/pod-group` are gang-scheduled.
    pub coscheduling: bool,
    /// `CoschedulingArgs.permitWaitingTimeSeconds`: how long members wait at Permit when their
    /// PodGroup sets no `scheduleTimeoutSeconds` (default 60).
    pub permit_waiting_seconds: Option<u32>,
}

/// Filter plugins enabled at the Filter extension point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Filters {
    pub node_unschedulable: bool,
    pub node_name: bool,
    pub taint_toleration: bool,
    pub node_affinity: bool,
    pub node_resources_fit: bool,
    pub pod_topology_spread: bool,
    pub inter_pod_affinity: bool,
}

/// Score weights; 0 = the plugin is not enabled at Score.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Weights {
    pub taint_toleration: i64,
    pub node_affinity: i64,
    pub node_resources_fit: i64,
    pub balanced_allocation: i64,
    pub pod_topology_spread: i64,
    pub inter_pod_affinity: i64,
    pub image_locality: i64,
}

/// `NodeResourcesFitArgs`, defaulted (`SetDefaults_NodeResourcesFitArgs`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FitArgs {
    pub strategy: ScoringStrategy,
    /// `scoringStrategy.resources`, weights 1..=100 (0 defaults to 1).
    pub resources: Vec<ResourceSpec>,
    /// Filter only: resources the fit check ignores.
    pub ignored_resources: Vec<String>,
    /// Filter only: resource groups (`example.com` for `example.com/*`) the fit check ignores.
    pub ignored_resource_groups: Vec<String>,
}

/// `ScoringStrategy.type`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScoringStrategy {
    LeastAllocated,
    MostAllocated,
    /// `requestedToCapacityRatio.shape` as configured: (utilization 0..=100, score 0..=10),
    /// utilization strictly increasing.
    RequestedToCapacityRatio {
        shape: Vec<(i64, i64)>,
    },
}

/// `ResourceSpec`: a resource name and its weight.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceSpec {
    pub name: String,
    pub weight: i64,
}

/// `defaultResourceSpec` (`pkg/scheduler/apis/config/v1/defaults.go`): cpu 1, memory 1.
pub fn default_resources() -> Vec<ResourceSpec> {
    ResourceSpec::list(&[("cpu", 1), ("memory", 1)])
}

impl ResourceSpec {
    /// Specs from (name, weight) pairs.
    pub fn list(specs: &[(&str, i64)]) -> Vec<ResourceSpec> {
        specs
            .iter()
            .map(|(name, weight)| ResourceSpec {
                name: name.to_string(),
                weight: *weight,
            })
            .collect()
    }
}

impl Default for FitArgs {
    fn default() -> Self {
        FitArgs {
            strategy: ScoringStrategy::LeastAllocated,
            resources: default_resources(),
            ignored_resources: Vec::new(),
            ignored_resource_groups: Vec::new(),
        }
    }
}

impl Default for Profile {
    /// Upstream's default profile (`getDefaultPlugins` + `SetDefaults_*`).
    fn default() -> Self {
        Profile {
            scheduler_name: DEFAULT_SCHEDULER_NAME.into(),
            scheduling_gates: true,
            filters: Filters {
                node_unschedulable: true,
                node_name: true,
                taint_toleration: true,
                node_affinity: true,
                node_resources_fit: true,
                pod_topology_spread: true,
                inter_pod_affinity: true,
            },
            weights: Weights {
                taint_toleration: 3,
                node_affinity: 2,
                node_resources_fit: 1,
                balanced_allocation: 1,
                pod_topology_spread: 2,
                inter_pod_affinity: 2,
                image_locality: 1,
            },
            fit: FitArgs::default(),
            balanced_resources: default_resources(),
            added_affinity: None,
            hard_pod_affinity_weight: 1,
            ignore_preferred_terms_of_existing_pods: false,
            preemption: true,
            percentage_of_nodes_to_score: None,
            spread_default_constraints: None,
            coscheduling: false,
            permit_waiting_seconds: None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Extension points and the plugins schedsim knows
// ---------------------------------------------------------------------------------------------

/// The framework's extension points, in `getExtensionPoints` order (framework.go).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ExtensionPoint {
    PreFilter,
    Filter,
    PostFilter,
    Reserve,
    PreScore,
    Score,
    PreBind,
    Bind,
    PostBind,
    Permit,
    PreEnqueue,
    QueueSort,
}

impl ExtensionPoint {
    pub const ALL: [ExtensionPoint; 12] = [
        ExtensionPoint::PreFilter,
        ExtensionPoint::Filter,
        ExtensionPoint::PostFilter,
        ExtensionPoint::Reserve,
        ExtensionPoint::PreScore,
        ExtensionPoint::Score,
        ExtensionPoint::PreBind,
        ExtensionPoint::Bind,
        ExtensionPoint::PostBind,
        ExtensionPoint::Permit,
        ExtensionPoint::PreEnqueue,
        ExtensionPoint::QueueSort,
    ];

    /// The field of `Plugins` in the configuration file.
    pub fn field(self) -> &'static str {
        match self {
            ExtensionPoint::PreFilter => "preFilter",
            ExtensionPoint::Filter => "filter",
            ExtensionPoint::PostFilter => "postFilter",
            ExtensionPoint::Reserve => "reserve",
            ExtensionPoint::PreScore => "preScore",
            ExtensionPoint::Score => "score",
            ExtensionPoint::PreBind => "preBind",
            ExtensionPoint::Bind => "bind",
            ExtensionPoint::PostBind => "postBind",
            ExtensionPoint::Permit => "permit",
            ExtensionPoint::PreEnqueue => "preEnqueue",
            ExtensionPoint::QueueSort => "queueSort",
        }
    }

    /// The Go interface name upstream's messages use (`FilterPlugin`, …).
    pub fn interface(self) -> &'static str {
        match self {
            ExtensionPoint::PreFilter => "PreFilterPlugin",
            ExtensionPoint::Filter => "FilterPlugin",
            ExtensionPoint::PostFilter => "PostFilterPlugin",
            ExtensionPoint::Reserve => "ReservePlugin",
            ExtensionPoint::PreScore => "PreScorePlugin",
            ExtensionPoint::Score => "ScorePlugin",
            ExtensionPoint::PreBind => "PreBindPlugin",
            ExtensionPoint::Bind => "BindPlugin",
            ExtensionPoint::PostBind => "PostBindPlugin",
            ExtensionPoint::Permit => "PermitPlugin",
            ExtensionPoint::PreEnqueue => "PreEnqueuePlugin",
            ExtensionPoint::QueueSort => "QueueSortPlugin",
        }
    }

    const fn bit(self) -> u16 {
        1 << self as u16
    }
}

const PRE_FILTER: u16 = ExtensionPoint::PreFilter.bit();
const FILTER: u16 = ExtensionPoint::Filter.bit();
const POST_FILTER: u16 = ExtensionPoint::PostFilter.bit();
const RESERVE: u16 = ExtensionPoint::Reserve.bit();
const PRE_SCORE: u16 = ExtensionPoint::PreScore.bit();
const SCORE: u16 = ExtensionPoint::Score.bit();
const PRE_BIND: u16 = ExtensionPoint::PreBind.bit();
const BIND: u16 = ExtensionPoint::Bind.bit();
const PRE_ENQUEUE: u16 = ExtensionPoint::PreEnqueue.bit();
const QUEUE_SORT: u16 = ExtensionPoint::QueueSort.bit();
const PERMIT: u16 = ExtensionPoint::Permit.bit();
const POST_BIND: u16 = ExtensionPoint::PostBind.bit();

/// How schedsim treats a plugin name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// In-tree and simulated.
    Simulated,
    /// In-tree; accepted, but it cannot change a simulated placement (volumes, host ports,
    /// DRA claims, queue order within arrival order, binding).
    NoEffect,
    /// In-tree, but not simulated: enabling it is an error.
    NotSimulated,
    /// A well-known out-of-tree plugin (kubernetes-sigs/scheduler-plugins, …): an error.
    OutOfTree,
    /// Was in-tree once; the text says what replaced it. An error.
    Removed(&'static str),
}

/// A plugin name schedsim recognises, with the extension points upstream's plugin implements
/// (bit set over [`ExtensionPoint`]) — they decide `multiPoint` expansion and the
/// "does not extend" check.
#[derive(Debug, Clone, Copy)]
pub struct KnownPlugin {
    pub name: &'static str,
    pub support: Support,
    points: u16,
}

impl KnownPlugin {
    const fn new(name: &'static str, support: Support, points: u16) -> Self {
        KnownPlugin {
            name,
            support,
            points,
        }
    }

    pub fn implements(&self, point: ExtensionPoint) -> bool {
        self.points & point.bit() != 0
    }

    /// Whether the simulated scheduler's registry has this plugin: kube-scheduler's in-tree
    /// registry, plus the scheduler-plugins plugins schedsim simulates (Coscheduling).
    pub fn is_in_tree(&self) -> bool {
        matches!(
            self.support,
            Support::Simulated | Support::NoEffect | Support::NotSimulated
        )
    }
}

/// Every plugin name schedsim recognises: the in-tree registry
/// (`pkg/scheduler/framework/plugins/registry.go`, `NewInTreeRegistry`), removed in-tree
/// plugins, and common out-of-tree ones. Extend this list to support a plugin.
pub const KNOWN_PLUGINS: &[KnownPlugin] = &[
    KnownPlugin::new(names::SCHEDULING_GATES, Support::Simulated, PRE_ENQUEUE),
    KnownPlugin::new("PrioritySort", Support::NoEffect, QUEUE_SORT),
    KnownPlugin::new(names::NODE_UNSCHEDULABLE, Support::Simulated, FILTER),
    KnownPlugin::new(names::NODE_NAME, Support::Simulated, FILTER),
    KnownPlugin::new(
        names::TAINT_TOLERATION,
        Support::Simulated,
        FILTER | PRE_SCORE | SCORE,
    ),
    KnownPlugin::new(
        names::NODE_AFFINITY,
        Support::Simulated,
        PRE_FILTER | FILTER | PRE_SCORE | SCORE,
    ),
    KnownPlugin::new("NodePorts", Support::NoEffect, PRE_FILTER | FILTER),
    KnownPlugin::new(
        names::NODE_RESOURCES_FIT,
        Support::Simulated,
        PRE_FILTER | FILTER | PRE_SCORE | SCORE,
    ),
    KnownPlugin::new("VolumeRestrictions", Support::NoEffect, PRE_FILTER | FILTER),
    KnownPlugin::new("NodeVolumeLimits", Support::NoEffect, PRE_FILTER | FILTER),
    KnownPlugin::new(
        "VolumeBinding",
        Support::NoEffect,
        PRE_FILTER | FILTER | RESERVE | PRE_BIND | PRE_SCORE | SCORE,
    ),
    KnownPlugin::new("VolumeZone", Support::NoEffect, PRE_FILTER | FILTER),
    KnownPlugin::new(
        names::POD_TOPOLOGY_SPREAD,
        Support::Simulated,
        PRE_FILTER | FILTER | PRE_SCORE | SCORE,
    ),
    KnownPlugin::new(
        names::INTER_POD_AFFINITY,
        Support::Simulated,
        PRE_FILTER | FILTER | PRE_SCORE | SCORE,
    ),
    KnownPlugin::new(
        "DynamicResources",
        Support::NoEffect,
        PRE_ENQUEUE | PRE_FILTER | FILTER | POST_FILTER | RESERVE | PRE_BIND,
    ),
    KnownPlugin::new(names::DEFAULT_PREEMPTION, Support::Simulated, POST_FILTER),
    KnownPlugin::new(
        names::NODE_RESOURCES_BALANCED_ALLOCATION,
        Support::Simulated,
        PRE_SCORE | SCORE,
    ),
    // Scored by the integrator when nodes report images; no effect otherwise.
    KnownPlugin::new("ImageLocality", Support::NoEffect, SCORE),
    KnownPlugin::new("DefaultBinder", Support::NoEffect, BIND),
    KnownPlugin::new(
        "NodeDeclaredFeatures",
        Support::NoEffect,
        PRE_FILTER | FILTER,
    ),
    KnownPlugin::new("GangScheduling", Support::NotSimulated, 0),
    // Removed from kube-scheduler.
    KnownPlugin::new(
        "NodeResourcesLeastAllocated",
        Support::Removed("use NodeResourcesFit with scoringStrategy.type LeastAllocated"),
        0,
    ),
    KnownPlugin::new(
        "NodeResourcesMostAllocated",
        Support::Removed("use NodeResourcesFit with scoringStrategy.type MostAllocated"),
        0,
    ),
    KnownPlugin::new(
        "RequestedToCapacityRatio",
        Support::Removed("use NodeResourcesFit with scoringStrategy.type RequestedToCapacityRatio"),
        0,
    ),
    KnownPlugin::new(
        "SelectorSpread",
        Support::Removed("PodTopologySpread's system default constraints replace it"),
        0,
    ),
    KnownPlugin::new("NodeLabel", Support::Removed("use NodeAffinity"), 0),
    KnownPlugin::new(
        "ServiceAffinity",
        Support::Removed("use InterPodAffinity"),
        0,
    ),
    KnownPlugin::new("NodePreferAvoidPods", Support::Removed("use taints"), 0),
    KnownPlugin::new(
        "EBSLimits",
        Support::Removed("NodeVolumeLimits checks volume limits"),
        0,
    ),
    KnownPlugin::new(
        "GCEPDLimits",
        Support::Removed("NodeVolumeLimits checks volume limits"),
        0,
    ),
    KnownPlugin::new(
        "AzureDiskLimits",
        Support::Removed("NodeVolumeLimits checks volume limits"),
        0,
    ),
    KnownPlugin::new(
        "CinderLimits",
        Support::Removed("NodeVolumeLimits checks volume limits"),
        0,
    ),
    // kubernetes-sigs/scheduler-plugins and other out-of-tree plugins.
    // Built into scheduler-plugins' kube-scheduler; its gangs are simulated (`sched::gang`).
    KnownPlugin::new(
        "Coscheduling",
        Support::Simulated,
        QUEUE_SORT | PRE_FILTER | POST_FILTER | PERMIT | RESERVE | POST_BIND,
    ),
    KnownPlugin::new("CapacityScheduling", Support::OutOfTree, 0),
    KnownPlugin::new("NodeResourceTopologyMatch", Support::OutOfTree, 0),
    KnownPlugin::new("NodeResourcesAllocatable", Support::OutOfTree, 0),
    KnownPlugin::new("TargetLoadPacking", Support::OutOfTree, 0),
    KnownPlugin::new("LoadVariationRiskBalancing", Support::OutOfTree, 0),
    KnownPlugin::new("LowRiskOverCommitment", Support::OutOfTree, 0),
    KnownPlugin::new("PreemptionToleration", Support::OutOfTree, 0),
    KnownPlugin::new("TopologicalSort", Support::OutOfTree, 0),
    KnownPlugin::new("NetworkOverhead", Support::OutOfTree, 0),
    KnownPlugin::new("PodState", Support::OutOfTree, 0),
    KnownPlugin::new("QOSSort", Support::OutOfTree, 0),
    KnownPlugin::new("SySched", Support::OutOfTree, 0),
    KnownPlugin::new("CrossNodePreemption", Support::OutOfTree, 0),
];

/// The default `multiPoint` list of `getDefaultPlugins` (default_plugins.go), with
/// `DynamicResources` inserted before `DefaultPreemption` as `applyFeatureGates` does while
/// `DynamicResourceAllocation` is enabled (GA, on by default). Weights where upstream sets one.
pub const DEFAULT_MULTI_POINT: &[(&str, Option<i32>)] = &[
    (names::SCHEDULING_GATES, None),
    ("PrioritySort", None),
    (names::NODE_UNSCHEDULABLE, None),
    (names::NODE_NAME, None),
    (names::TAINT_TOLERATION, Some(3)),
    (names::NODE_AFFINITY, Some(2)),
    ("NodePorts", None),
    (names::NODE_RESOURCES_FIT, Some(1)),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    (names::POD_TOPOLOGY_SPREAD, Some(2)),
    (names::INTER_POD_AFFINITY, Some(2)),
    ("DynamicResources", None),
    (names::DEFAULT_PREEMPTION, None),
    (names::NODE_RESOURCES_BALANCED_ALLOCATION, Some(1)),
    ("ImageLocality", Some(1)),
    ("DefaultBinder", None),
];

/// The entry of [`KNOWN_PLUGINS`] for `name`.
pub fn known_plugin(name: &str) -> Option<&'static KnownPlugin> {
    KNOWN_PLUGINS.iter().find(|p| p.name == name)
}

/// Why `name` cannot be used, or `None` when it is an in-tree plugin schedsim accepts.
pub fn plugin_name_error(name: &str) -> Option<String> {
    match known_plugin(name).map(|p| p.support) {
        Some(Support::Simulated | Support::NoEffect) => None,
        Some(Support::NotSimulated) => Some(format!(
            "plugin {name:?} is not simulated; schedsim simulates {}",
            simulated_list()
        )),
        Some(Support::OutOfTree) => Some(format!(
            "plugin {name:?} is not an in-tree plugin; schedsim simulates in-tree plugins only"
        )),
        Some(Support::Removed(instead)) => Some(format!(
            "plugin {name:?} was removed from kube-scheduler; {instead}"
        )),
        None => Some(match suggest(name) {
            Some(s) => format!("unknown plugin {name:?} (did you mean {s:?}?)"),
            None => format!("unknown plugin {name:?}"),
        }),
    }
}

fn simulated_list() -> String {
    KNOWN_PLUGINS
        .iter()
        .filter(|p| p.support == Support::Simulated)
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The closest in-tree plugin name (Jaro-Winkler ≥ 0.8).
fn suggest(name: &str) -> Option<&'static str> {
    KNOWN_PLUGINS
        .iter()
        .filter(|p| p.is_in_tree())
        .map(|p| (strsim::jaro_winkler(name, p.name), p.name))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n)
}

// ---------------------------------------------------------------------------------------------
// The configuration file, as upstream's v1 types (strict: unknown fields are errors)
// ---------------------------------------------------------------------------------------------

/// `KubeSchedulerConfiguration` (`staging/src/k8s.io/kube-scheduler/config/v1/types.go`).
/// Fields that cannot change a simulated placement are decoded (so typos are caught) and
/// otherwise ignored.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct RawConfig {
    api_version: String,
    kind: String,
    parallelism: Option<i32>,
    /// `componentbaseconfigv1alpha1.LeaderElectionConfiguration`.
    leader_election: Option<serde_json::Map<String, Value>>,
    /// `componentbaseconfigv1alpha1.ClientConnectionConfiguration`.
    client_connection: Option<serde_json::Map<String, Value>>,
    enable_profiling: Option<bool>,
    enable_contention_profiling: Option<bool>,
    percentage_of_nodes_to_score: Option<i32>,
    pod_initial_backoff_seconds: Option<i64>,
    pod_max_backoff_seconds: Option<i64>,
    profiles: Option<Vec<RawProfile>>,
    extenders: Option<Vec<Value>>,
    delay_cache_until_active: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawProfile {
    scheduler_name: Option<String>,
    percentage_of_nodes_to_score: Option<i32>,
    plugins: Option<RawPlugins>,
    plugin_config: Option<Vec<RawPluginConfig>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawPlugins {
    pre_enqueue: Option<RawPluginSet>,
    queue_sort: Option<RawPluginSet>,
    pre_filter: Option<RawPluginSet>,
    filter: Option<RawPluginSet>,
    post_filter: Option<RawPluginSet>,
    pre_score: Option<RawPluginSet>,
    score: Option<RawPluginSet>,
    reserve: Option<RawPluginSet>,
    permit: Option<RawPluginSet>,
    pre_bind: Option<RawPluginSet>,
    bind: Option<RawPluginSet>,
    post_bind: Option<RawPluginSet>,
    multi_point: Option<RawPluginSet>,
}

impl RawPlugins {
    fn point(&self, p: ExtensionPoint) -> Option<&RawPluginSet> {
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
struct RawPluginSet {
    enabled: Option<Vec<RawPlugin>>,
    disabled: Option<Vec<RawPlugin>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlugin {
    name: String,
    weight: Option<i32>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPluginConfig {
    name: String,
    args: Option<Value>,
}

/// `ResourceSpec` of the plugin args.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawResourceSpec {
    #[serde(default)]
    name: String,
    #[serde(default)]
    weight: i64,
}

/// `UtilizationShapePoint`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawShapePoint {
    #[serde(default)]
    utilization: i32,
    #[serde(default)]
    score: i32,
}

/// `NodeResourcesFitArgs` (`types_pluginargs.go`).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawFitArgs {
    api_version: Option<String>,
    kind: Option<String>,
    ignored_resources: Option<Vec<String>>,
    ignored_resource_groups: Option<Vec<String>>,
    scoring_strategy: Option<RawScoringStrategy>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawScoringStrategy {
    #[serde(rename = "type", default)]
    kind: String,
    resources: Option<Vec<RawResourceSpec>>,
    requested_to_capacity_ratio: Option<RawRequestedToCapacityRatio>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRequestedToCapacityRatio {
    shape: Option<Vec<RawShapePoint>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawBalancedAllocationArgs {
    api_version: Option<String>,
    kind: Option<String>,
    resources: Option<Vec<RawResourceSpec>>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawInterPodAffinityArgs {
    api_version: Option<String>,
    kind: Option<String>,
    hard_pod_affinity_weight: Option<i32>,
    #[serde(default)]
    ignore_preferred_terms_of_existing_pods: bool,
}

/// scheduler-plugins' `CoschedulingArgs` (`apis/config/v1/types.go`); the kube-client fields
/// are read and ignored.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawCoschedulingArgs {
    api_version: Option<String>,
    kind: Option<String>,
    permit_waiting_time_seconds: Option<i64>,
    pod_group_backoff_seconds: Option<i64>,
    /// Removed in newer releases; older configs carry it.
    #[serde(rename = "deniedPGExpirationTimeSeconds")]
    denied_pg_expiration_time_seconds: Option<i64>,
    #[allow(dead_code)]
    kube_master: Option<String>,
    #[allow(dead_code)]
    kube_config_path: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawNodeAffinityArgs {
    api_version: Option<String>,
    kind: Option<String>,
    added_affinity: Option<NodeAffinity>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawPodTopologySpreadArgs {
    api_version: Option<String>,
    kind: Option<String>,
    default_constraints: Option<Vec<TopologySpreadConstraint>>,
    #[serde(default)]
    defaulting_type: String,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawDefaultPreemptionArgs {
    api_version: Option<String>,
    kind: Option<String>,
    min_candidate_nodes_percentage: Option<i32>,
    min_candidate_nodes_absolute: Option<i32>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawVolumeBindingArgs {
    api_version: Option<String>,
    kind: Option<String>,
    bind_timeout_seconds: Option<i64>,
    shape: Option<Vec<RawShapePoint>>,
}

/// `DynamicResourcesArgs`: decoded strictly, not used.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct RawDynamicResourcesArgs {
    api_version: Option<String>,
    kind: Option<String>,
    filter_timeout: Option<Value>,
    binding_timeout: Option<Value>,
}

// ---------------------------------------------------------------------------------------------
// Plugin sets: merge and expansion
// ---------------------------------------------------------------------------------------------

/// One `Plugin` entry, with the field path it came from (`None` for upstream's defaults).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub name: String,
    pub weight: Option<i32>,
    pub at: Option<String>,
}

impl Entry {
    fn default_plugin(name: &str, weight: Option<i32>) -> Self {
        Entry {
            name: name.into(),
            weight,
            at: None,
        }
    }
}

/// `PluginSet`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PluginSet {
    pub enabled: Vec<Entry>,
    pub disabled: Vec<Entry>,
}

/// `mergePluginSet` (default_plugins.go), line for line: disabled defaults are dropped
/// (`*` drops all), a custom plugin that is also a default replaces it in place (the last
/// custom entry of that name wins), every other custom plugin is appended in order —
/// duplicates included, which the framework rejects later.
pub(crate) fn merge_plugin_set(default: &PluginSet, custom: &PluginSet) -> PluginSet {
    let mut disabled: Vec<Entry> = Vec::new();
    let mut disabled_names: HashSet<&str> = HashSet::new();
    for d in custom.disabled.iter().chain(&default.disabled) {
        disabled.push(Entry {
            name: d.name.clone(),
            weight: None,
            at: d.at.clone(),
        });
        disabled_names.insert(&d.name);
    }
    let mut custom_index: HashMap<&str, usize> = HashMap::new();
    for (i, e) in custom.enabled.iter().enumerate() {
        custom_index.insert(&e.name, i);
    }
    let mut replaced: HashSet<usize> = HashSet::new();
    let mut enabled = Vec::new();
    if !disabled_names.contains("*") {
        for d in &default.enabled {
            if disabled_names.contains(d.name.as_str()) {
                continue;
            }
            match custom_index.get(d.name.as_str()) {
                Some(&i) => {
                    enabled.push(custom.enabled[i].clone());
                    replaced.insert(i);
                }
                None => enabled.push(d.clone()),
            }
        }
    }
    for (i, e) in custom.enabled.iter().enumerate() {
        if !replaced.contains(&i) {
            enabled.push(e.clone());
        }
    }
    PluginSet { enabled, disabled }
}

/// `Plugins`: the `multiPoint` set and one set per extension point (indexed by
/// `ExtensionPoint as usize`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Plugins {
    pub multi_point: PluginSet,
    pub points: [PluginSet; 12],
}

impl Plugins {
    /// `getDefaultPlugins`.
    pub fn defaults() -> Self {
        Plugins {
            multi_point: PluginSet {
                enabled: DEFAULT_MULTI_POINT
                    .iter()
                    .map(|(n, w)| Entry::default_plugin(n, *w))
                    .collect(),
                disabled: Vec::new(),
            },
            points: Default::default(),
        }
    }

    /// `mergePlugins`.
    pub fn merge(&self, custom: &Plugins) -> Plugins {
        Plugins {
            multi_point: merge_plugin_set(&self.multi_point, &custom.multi_point),
            points: std::array::from_fn(|i| merge_plugin_set(&self.points[i], &custom.points[i])),
        }
    }

    fn point(&self, p: ExtensionPoint) -> &PluginSet {
        &self.points[p as usize]
    }
}

/// A framework error with the field it is best reported at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PluginError {
    pub message: String,
    pub at: Option<String>,
}

fn plugin_error(message: String, at: &Option<String>) -> PluginError {
    PluginError {
        message,
        at: at.clone(),
    }
}

/// The plugins that run at `point`, in order: `updatePluginList` on the specific set, then
/// `expandMultiPointPlugins` (framework.go). Every name must be in [`KNOWN_PLUGINS`].
pub(crate) fn plugins_at(
    plugins: &Plugins,
    point: ExtensionPoint,
) -> Result<Vec<Entry>, PluginError> {
    let implements = |name: &str| known_plugin(name).is_some_and(|p| p.implements(point));
    let set = plugins.point(point);
    let mut specific: Vec<&Entry> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for e in &set.enabled {
        if !implements(&e.name) {
            return Err(plugin_error(
                format!(
                    "plugin {:?} does not extend {} plugin",
                    e.name,
                    point.interface()
                ),
                &e.at,
            ));
        }
        if !seen.insert(&e.name) {
            return Err(plugin_error(
                format!(
                    "plugin {:?} already registered as {:?}",
                    e.name,
                    point.interface()
                ),
                &e.at,
            ));
        }
        specific.push(e);
    }
    if set.disabled.iter().any(|d| d.name == "*") {
        return Ok(specific.into_iter().cloned().collect());
    }
    let disabled: HashSet<&str> = set.disabled.iter().map(|d| d.name.as_str()).collect();
    let mut overrides: HashSet<&str> = HashSet::new();
    let mut multi: Vec<&Entry> = Vec::new();
    let mut multi_seen: HashSet<&str> = HashSet::new();
    for e in &plugins.multi_point.enabled {
        if !implements(&e.name) || disabled.contains(e.name.as_str()) {
            continue;
        }
        if seen.contains(e.name.as_str()) {
            overrides.insert(&e.name);
            continue;
        }
        if !multi_seen.insert(&e.name) {
            return Err(plugin_error(
                format!(
                    "plugin {:?} already registered as {:?}",
                    e.name,
                    point.interface()
                ),
                &e.at,
            ));
        }
        multi.push(e);
    }
    let (first, rest): (Vec<&Entry>, Vec<&Entry>) = specific
        .into_iter()
        .partition(|e| overrides.contains(e.name.as_str()));
    Ok(first
        .into_iter()
        .chain(multi)
        .chain(rest)
        .cloned()
        .collect())
}

/// `getScoreWeights` (framework.go): the first weight configured for each score plugin, in
/// `score.enabled` then `multiPoint.enabled` order; 0 (or none) counts as 1.
pub(crate) fn score_weights(plugins: &Plugins) -> HashMap<String, i64> {
    let mut weights = HashMap::new();
    for e in plugins
        .point(ExtensionPoint::Score)
        .enabled
        .iter()
        .chain(&plugins.multi_point.enabled)
    {
        if !known_plugin(&e.name).is_some_and(|p| p.implements(ExtensionPoint::Score)) {
            continue;
        }
        weights.entry(e.name.clone()).or_insert(match e.weight {
            None | Some(0) => 1,
            Some(w) => i64::from(w),
        });
    }
    weights
}

// ---------------------------------------------------------------------------------------------
// from_document
// ---------------------------------------------------------------------------------------------

/// Field errors are built in upstream's `field.Error` wording.
fn invalid(value: impl std::fmt::Display, detail: &str) -> String {
    format!("Invalid value: {value}: {detail}")
}

fn quoted(s: &str) -> String {
    format!("{s:?}")
}

/// Resolves the profiles of one `KubeSchedulerConfiguration` document.
pub fn from_document(doc: &Document, file: &Path) -> Result<Vec<Profile>, InputError> {
    let err = |path: &str, msg: String| doc.error(file, path, msg);
    let api_version = doc.value.get("apiVersion").and_then(Value::as_str);
    let kind = doc.value.get("kind").and_then(Value::as_str);
    if kind != Some(KIND) {
        return Err(err(
            "kind",
            match kind {
                Some(k) => format!("kind {k:?} is not a {KIND}"),
                None => format!("missing kind (expected {KIND})"),
            },
        ));
    }
    if api_version != Some(API_VERSION) {
        return Err(err(
            "apiVersion",
            match api_version {
                Some(v) => format!(
                    "apiVersion {v:?} is not supported: kube-scheduler reads {KIND} {API_VERSION} \
                     (v1beta2 and v1beta3 were removed)"
                ),
                None => format!("missing apiVersion (expected {API_VERSION})"),
            },
        ));
    }
    let raw: RawConfig = doc.decode(file, "", &doc.value)?;

    if let Some(p) = raw.parallelism
        && p <= 0
    {
        return Err(err(
            "parallelism",
            invalid(p, "should be an integer value greater than zero"),
        ));
    }
    validate_percentage(
        doc,
        file,
        "percentageOfNodesToScore",
        raw.percentage_of_nodes_to_score,
    )?;
    let initial = raw.pod_initial_backoff_seconds.unwrap_or(1);
    if initial <= 0 {
        return Err(err(
            "podInitialBackoffSeconds",
            invalid(initial, "must be greater than 0"),
        ));
    }
    let max = raw.pod_max_backoff_seconds.unwrap_or(10);
    if max < initial {
        return Err(err(
            "podMaxBackoffSeconds",
            invalid(
                max,
                "must be greater than or equal to PodInitialBackoffSeconds",
            ),
        ));
    }
    if raw.extenders.as_ref().is_some_and(|e| !e.is_empty()) {
        return Err(err(
            "extenders",
            "extenders are not simulated: schedsim cannot call a scheduler extender".into(),
        ));
    }

    let raw_profiles = raw.profiles.unwrap_or_default();
    if raw_profiles.is_empty() {
        return Ok(vec![Profile {
            percentage_of_nodes_to_score: raw.percentage_of_nodes_to_score,
            ..Profile::default()
        }]);
    }
    let single = raw_profiles.len() == 1;
    let mut profiles = Vec::with_capacity(raw_profiles.len());
    let mut names_seen: HashMap<String, usize> = HashMap::new();
    let mut queue_sorts: Vec<PluginSet> = Vec::new();
    for (i, rp) in raw_profiles.iter().enumerate() {
        let path = format!("profiles[{i}]");
        let name = match &rp.scheduler_name {
            None if single => DEFAULT_SCHEDULER_NAME.to_string(),
            None => String::new(),
            Some(n) => n.clone(),
        };
        if name.is_empty() {
            return Err(err(
                &format!("{path}.schedulerName"),
                "Required value".into(),
            ));
        }
        if let Some(&first) = names_seen.get(&name) {
            return Err(err(
                &format!("{path}.schedulerName"),
                format!(
                    "Duplicate value: {name:?} (also profiles[{first}].schedulerName): \
                     every profile needs a unique schedulerName"
                ),
            ));
        }
        names_seen.insert(name.clone(), i);
        let (profile, queue_sort) =
            resolve_profile(doc, file, &path, rp, name, raw.percentage_of_nodes_to_score)?;
        queue_sorts.push(queue_sort);
        profiles.push(profile);
    }
    // validateCommonQueueSort: one queue for all profiles.
    if let Some(first) = queue_sorts.first() {
        let len = first.enabled.len();
        if len > 1 {
            return Err(err(
                "profiles[0].plugins.queueSort.enabled",
                invalid(len, "only one queue sort plugin can be enabled"),
            ));
        }
        let key = |s: &PluginSet| -> (Vec<(String, Option<i32>)>, Vec<String>) {
            (
                s.enabled
                    .iter()
                    .map(|e| (e.name.clone(), e.weight))
                    .collect(),
                s.disabled.iter().map(|e| e.name.clone()).collect(),
            )
        };
        for (i, qs) in queue_sorts.iter().enumerate().skip(1) {
            if key(qs) != key(first) {
                return Err(err(
                    &format!("profiles[{i}].plugins.queueSort"),
                    "queueSort must be the same for all profiles".into(),
                ));
            }
        }
    }
    Ok(profiles)
}

fn validate_percentage(
    doc: &Document,
    file: &Path,
    path: &str,
    value: Option<i32>,
) -> Result<(), InputError> {
    match value {
        Some(v) if !(0..=100).contains(&v) => {
            Err(doc.error(file, path, invalid(v, "not in valid range [0-100]")))
        }
        _ => Ok(()),
    }
}

/// The user's plugin set at `path` (`profiles[0].plugins.filter`), every name checked.
fn user_set(
    doc: &Document,
    file: &Path,
    path: &str,
    raw: Option<&RawPluginSet>,
) -> Result<PluginSet, InputError> {
    let mut set = PluginSet::default();
    let Some(raw) = raw else {
        return Ok(set);
    };
    for (kind, list, out) in [
        ("enabled", &raw.enabled, &mut set.enabled),
        ("disabled", &raw.disabled, &mut set.disabled),
    ] {
        for (j, p) in list.iter().flatten().enumerate() {
            let at = format!("{path}.{kind}[{j}]");
            if !(kind == "disabled" && p.name == "*")
                && let Some(msg) = plugin_name_error(&p.name)
            {
                return Err(doc.error(file, &format!("{at}.name"), msg));
            }
            out.push(Entry {
                name: p.name.clone(),
                weight: p.weight,
                at: Some(at),
            });
        }
    }
    Ok(set)
}

/// The plugin args of one profile, defaulted.
struct Args {
    fit: FitArgs,
    balanced_resources: Vec<ResourceSpec>,
    added_affinity: Option<NodeAffinity>,
    hard_pod_affinity_weight: i64,
    ignore_preferred_terms_of_existing_pods: bool,
    spread_default_constraints: Option<Vec<TopologySpreadConstraint>>,
    permit_waiting_seconds: Option<u32>,
}

fn resolve_profile(
    doc: &Document,
    file: &Path,
    path: &str,
    rp: &RawProfile,
    scheduler_name: String,
    global_percentage: Option<i32>,
) -> Result<(Profile, PluginSet), InputError> {
    validate_percentage(
        doc,
        file,
        &format!("{path}.percentageOfNodesToScore"),
        rp.percentage_of_nodes_to_score,
    )?;
    let plugins_path = format!("{path}.plugins");
    let merged = match &rp.plugins {
        None => Plugins::defaults(),
        Some(raw) => {
            let mut custom = Plugins {
                multi_point: user_set(
                    doc,
                    file,
                    &format!("{plugins_path}.multiPoint"),
                    raw.multi_point.as_ref(),
                )?,
                ..Default::default()
            };
            for p in ExtensionPoint::ALL {
                custom.points[p as usize] = user_set(
                    doc,
                    file,
                    &format!("{plugins_path}.{}", p.field()),
                    raw.point(p),
                )?;
            }
            Plugins::defaults().merge(&custom)
        }
    };
    let args = plugin_args(doc, file, path, rp)?;

    // The framework.
    let framework_err =
        |e: PluginError| doc.error(file, e.at.as_deref().unwrap_or(&plugins_path), e.message);
    let mut at: HashMap<ExtensionPoint, Vec<Entry>> = HashMap::new();
    for p in ExtensionPoint::ALL {
        at.insert(p, plugins_at(&merged, p).map_err(framework_err)?);
    }
    let queue_sorts = at[&ExtensionPoint::QueueSort].len();
    if queue_sorts != 1 {
        return Err(doc.error(
            file,
            &plugins_path,
            format!(
                "only one queue sort plugin required for profile with scheduler name \
                 {scheduler_name:?}, but got {queue_sorts}"
            ),
        ));
    }
    if at[&ExtensionPoint::Bind].is_empty() {
        return Err(doc.error(
            file,
            &plugins_path,
            format!(
                "at least one bind plugin is needed for profile with scheduler name \
                 {scheduler_name:?}"
            ),
        ));
    }
    let has = |p: ExtensionPoint, name: &str| at[&p].iter().any(|e| e.name == name);
    let weights = score_weights(&merged);
    let weight = |name: &str| {
        if has(ExtensionPoint::Score, name) {
            weights.get(name).copied().unwrap_or(1)
        } else {
            0
        }
    };
    let filter = |name: &str| has(ExtensionPoint::Filter, name);
    let profile = Profile {
        scheduler_name,
        scheduling_gates: has(ExtensionPoint::PreEnqueue, names::SCHEDULING_GATES),
        filters: Filters {
            node_unschedulable: filter(names::NODE_UNSCHEDULABLE),
            node_name: filter(names::NODE_NAME),
            taint_toleration: filter(names::TAINT_TOLERATION),
            node_affinity: filter(names::NODE_AFFINITY),
            node_resources_fit: filter(names::NODE_RESOURCES_FIT),
            pod_topology_spread: filter(names::POD_TOPOLOGY_SPREAD),
            inter_pod_affinity: filter(names::INTER_POD_AFFINITY),
        },
        weights: Weights {
            taint_toleration: weight(names::TAINT_TOLERATION),
            node_affinity: weight(names::NODE_AFFINITY),
            node_resources_fit: weight(names::NODE_RESOURCES_FIT),
            balanced_allocation: weight(names::NODE_RESOURCES_BALANCED_ALLOCATION),
            pod_topology_spread: weight(names::POD_TOPOLOGY_SPREAD),
            inter_pod_affinity: weight(names::INTER_POD_AFFINITY),
            image_locality: weight("ImageLocality"),
        },
        fit: args.fit,
        balanced_resources: args.balanced_resources,
        added_affinity: args.added_affinity,
        hard_pod_affinity_weight: args.hard_pod_affinity_weight,
        ignore_preferred_terms_of_existing_pods: args.ignore_preferred_terms_of_existing_pods,
        preemption: has(ExtensionPoint::PostFilter, names::DEFAULT_PREEMPTION),
        percentage_of_nodes_to_score: rp.percentage_of_nodes_to_score.or(global_percentage),
        spread_default_constraints: args.spread_default_constraints,
        coscheduling: has(ExtensionPoint::Permit, "Coscheduling"),
        permit_waiting_seconds: args.permit_waiting_seconds,
    };
    Ok((profile, merged.point(ExtensionPoint::QueueSort).clone()))
}

/// Decodes and validates `pluginConfig` (`PluginConfig.decodeNestedObjects`,
/// `validatePluginConfig`, the `SetDefaults_*Args` functions).
fn plugin_args(
    doc: &Document,
    file: &Path,
    path: &str,
    rp: &RawProfile,
) -> Result<Args, InputError> {
    let mut args = Args {
        fit: FitArgs::default(),
        balanced_resources: default_resources(),
        added_affinity: None,
        hard_pod_affinity_weight: 1,
        ignore_preferred_terms_of_existing_pods: false,
        spread_default_constraints: None,
        permit_waiting_seconds: None,
    };
    let mut seen: HashSet<&str> = HashSet::new();
    for (j, pc) in rp.plugin_config.iter().flatten().enumerate() {
        let pc_path = format!("{path}.pluginConfig[{j}]");
        if let Some(msg) = plugin_name_error(&pc.name) {
            return Err(doc.error(file, &format!("{pc_path}.name"), msg));
        }
        if !seen.insert(&pc.name) {
            return Err(doc.error(file, &pc_path, format!("Duplicate value: {:?}", pc.name)));
        }
        let a_path = format!("{pc_path}.args");
        let value = pc.args.clone().unwrap_or(Value::Null);
        let value = if value.is_null() {
            Value::Object(Default::default())
        } else {
            value
        };
        match pc.name.as_str() {
            names::NODE_RESOURCES_FIT => {
                let raw: RawFitArgs = doc.decode(file, &a_path, &value)?;
                check_type_meta(doc, file, &a_path, &pc.name, &raw.api_version, &raw.kind)?;
                args.fit = fit_args(doc, file, &a_path, raw)?;
            }
            names::NODE_RESOURCES_BALANCED_ALLOCATION => {
                let raw: RawBalancedAllocationArgs = doc.decode(file, &a_path, &value)?;
                check_type_meta(doc, file, &a_path, &pc.name, &raw.api_version, &raw.kind)?;
                args.balanced_resources = balanced_args(doc, file, &a_path, raw)?;
            }
            names::INTER_POD_AFFINITY => {
                let raw: RawInterPodAffinityArgs = doc.decode(file, &a_path, &value)?;
                check_type_meta(doc, file, &a_path, &pc.name, &raw.api_version, &raw.kind)?;
                let w = raw.hard_pod_affinity_weight.unwrap_or(1);
                if !(0..=100).contains(&w) {
                    return Err(doc.error(
                        file,
                        &format!("{a_path}.hardPodAffinityWeight"),
                        invalid(w, "not in valid range [0, 100]"),
                    ));
                }
                args.hard_pod_affinity_weight = i64::from(w);
                args.ignore_preferred_terms_of_existing_pods =
                    raw.ignore_preferred_terms_of_existing_pods;
            }
            names::NODE_AFFINITY => {
                let raw: RawNodeAffinityArgs = doc.decode(file, &a_path, &value)?;
                check_type_meta(doc, file, &a_path, &pc.name, &raw.api_version, &raw.kind)?;
                if let Some(affinity) = &raw.added_affinity {
                    validate_added_affinity(
                        doc,
                        file,
                        &format!("{a_path}.addedAffinity"),
                        affinity,
                    )?;
                }
                args.added_affinity = raw.added_affinity;
            }
            names::POD_TOPOLOGY_SPREAD => {
                let raw: RawPodTopologySpreadArgs = doc.decode(file, &a_path, &value)?;
                check_type_meta(doc, file, &a_path, &pc.name, &raw.api_version, &raw.kind)?;
                args.spread_default_constraints = spread_args(doc, file, &a_path, raw)?;
            }
            names::DEFAULT_PREEMPTION => {
                let raw: RawDefaultPreemptionArgs = doc.decode(file, &a_path, &value)?;
                check_type_meta(doc, file, &a_path, &pc.name, &raw.api_version, &raw.kind)?;
                validate_preemption_args(doc, file, &a_path, &raw)?;
            }
            "VolumeBinding" => {
                let raw: RawVolumeBindingArgs = doc.decode(file, &a_path, &value)?;
                check_type_meta(doc, file, &a_path, &pc.name, &raw.api_version, &raw.kind)?;
                if let Some(t) = raw.bind_timeout_seconds
                    && t < 0
                {
                    return Err(doc.error(
                        file,
                        &format!("{a_path}.bindTimeoutSeconds"),
                        invalid(
                            t,
                            "invalid BindTimeoutSeconds, should not be a negative value",
                        ),
                    ));
                }
                if let Some(shape) = &raw.shape {
                    validate_function_shape(doc, file, &format!("{a_path}.shape"), shape)?;
                }
            }
            "Coscheduling" => {
                let raw: RawCoschedulingArgs = doc.decode(file, &a_path, &value)?;
                check_type_meta(doc, file, &a_path, &pc.name, &raw.api_version, &raw.kind)?;
                // scheduler-plugins' `New`: a negative backoff is an error.
                for (field, v) in [
                    ("permitWaitingTimeSeconds", raw.permit_waiting_time_seconds),
                    ("podGroupBackoffSeconds", raw.pod_group_backoff_seconds),
                    (
                        "deniedPGExpirationTimeSeconds",
                        raw.denied_pg_expiration_time_seconds,
                    ),
                ] {
                    if let Some(t) = v.filter(|t| *t < 0 || *t > i64::from(u32::MAX)) {
                        return Err(doc.error(
                            file,
                            &format!("{a_path}.{field}"),
                            invalid(t, "must be a non-negative number of seconds"),
                        ));
                    }
                }
                args.permit_waiting_seconds = raw.permit_waiting_time_seconds.map(|t| t as u32);
            }
            "DynamicResources" => {
                let raw: RawDynamicResourcesArgs = doc.decode(file, &a_path, &value)?;
                check_type_meta(doc, file, &a_path, &pc.name, &raw.api_version, &raw.kind)?;
            }
            // Plugins without an args type: upstream passes the args through unread.
            _ => {}
        }
    }
    Ok(args)
}

/// The embedded `TypeMeta` of plugin args must name this plugin's args kind
/// (`PluginConfig.decodeNestedObjects`).
fn check_type_meta(
    doc: &Document,
    file: &Path,
    path: &str,
    plugin: &str,
    api_version: &Option<String>,
    kind: &Option<String>,
) -> Result<(), InputError> {
    if let Some(v) = api_version
        && v != API_VERSION
    {
        return Err(doc.error(
            file,
            &format!("{path}.apiVersion"),
            format!("args apiVersion {v:?} is not supported (expected {API_VERSION})"),
        ));
    }
    let want = format!("{plugin}Args");
    if let Some(k) = kind
        && *k != want
    {
        return Err(doc.error(
            file,
            &format!("{path}.kind"),
            format!(
                "args for plugin {plugin} were not of type {want}.kubescheduler.config.k8s.io, \
                 got {k}.kubescheduler.config.k8s.io"
            ),
        ));
    }
    Ok(())
}

/// `SetDefaults_NodeResourcesFitArgs` + `ValidateNodeResourcesFitArgs`.
fn fit_args(
    doc: &Document,
    file: &Path,
    path: &str,
    raw: RawFitArgs,
) -> Result<FitArgs, InputError> {
    let ignored_resources = raw.ignored_resources.unwrap_or_default();
    for (i, r) in ignored_resources.iter().enumerate() {
        if !is_qualified_name(r) {
            return Err(doc.error(
                file,
                &format!("{path}.ignoredResources[{i}]"),
                invalid(quoted(r), QUALIFIED_NAME_MESSAGE),
            ));
        }
    }
    let ignored_resource_groups = raw.ignored_resource_groups.unwrap_or_default();
    for (i, g) in ignored_resource_groups.iter().enumerate() {
        let at = format!("{path}.ignoredResourceGroups[{i}]");
        if g.contains('/') {
            return Err(doc.error(
                file,
                &at,
                invalid(quoted(g), "resource group name can't contain '/'"),
            ));
        }
        if !is_qualified_name(g) {
            return Err(doc.error(file, &at, invalid(quoted(g), QUALIFIED_NAME_MESSAGE)));
        }
    }
    let Some(strategy) = raw.scoring_strategy else {
        return Ok(FitArgs {
            ignored_resources,
            ignored_resource_groups,
            ..FitArgs::default()
        });
    };
    let s_path = format!("{path}.scoringStrategy");
    const SUPPORTED: [&str; 3] = [
        "LeastAllocated",
        "MostAllocated",
        "RequestedToCapacityRatio",
    ];
    if !SUPPORTED.contains(&strategy.kind.as_str()) {
        return Err(doc.error(
            file,
            &format!("{s_path}.type"),
            format!(
                "Unsupported value: {:?}: supported values: {}",
                strategy.kind,
                SUPPORTED.map(quoted).join(", ")
            ),
        ));
    }
    let resources = resource_specs(
        &format!("{s_path}.resources"),
        strategy.resources,
        |spec, at| {
            if spec.weight <= 0 || spec.weight > MAX_RESOURCE_WEIGHT {
                Err(doc.error(
                    file,
                    &format!("{at}.weight"),
                    invalid(
                        spec.weight,
                        &format!(
                            "resource weight of {} not in valid range (0, 100]",
                            spec.name
                        ),
                    ),
                ))
            } else {
                Ok(())
            }
        },
    )?;
    let shape = match strategy.requested_to_capacity_ratio {
        Some(r) => {
            let shape_path = format!("{s_path}.requestedToCapacityRatio.shape");
            let shape = r.shape.unwrap_or_default();
            validate_function_shape(doc, file, &shape_path, &shape)?;
            Some(
                shape
                    .iter()
                    .map(|p| (i64::from(p.utilization), i64::from(p.score)))
                    .collect(),
            )
        }
        None => None,
    };
    let strategy = match strategy.kind.as_str() {
        "LeastAllocated" => ScoringStrategy::LeastAllocated,
        "MostAllocated" => ScoringStrategy::MostAllocated,
        _ => match shape {
            Some(shape) => ScoringStrategy::RequestedToCapacityRatio { shape },
            None => {
                return Err(doc.error(
                    file,
                    &format!("{s_path}.requestedToCapacityRatio"),
                    "Required value: requestedToCapacityRatio.shape must be set for scoring \
                     strategy RequestedToCapacityRatio"
                        .to_string(),
                ));
            }
        },
    };
    Ok(FitArgs {
        strategy,
        resources,
        ignored_resources,
        ignored_resource_groups,
    })
}

const QUALIFIED_NAME_MESSAGE: &str = "a qualified name must consist of alphanumeric characters, \
    '-', '_' or '.', and must start and end with an alphanumeric character, with an optional DNS \
    subdomain prefix and '/' (e.g. 'example.com/MyName')";

/// Defaulted `ResourceSpec`s (empty list → cpu 1, memory 1; weight 0 → 1), each checked.
fn resource_specs(
    path: &str,
    raw: Option<Vec<RawResourceSpec>>,
    check: impl Fn(&ResourceSpec, &str) -> Result<(), InputError>,
) -> Result<Vec<ResourceSpec>, InputError> {
    let raw = raw.unwrap_or_default();
    if raw.is_empty() {
        return Ok(default_resources());
    }
    let mut out = Vec::with_capacity(raw.len());
    for (i, r) in raw.into_iter().enumerate() {
        let spec = ResourceSpec {
            name: r.name,
            weight: if r.weight == 0 { 1 } else { r.weight },
        };
        check(&spec, &format!("{path}[{i}]"))?;
        out.push(spec);
    }
    Ok(out)
}

/// `SetDefaults_NodeResourcesBalancedAllocationArgs` +
/// `ValidateNodeResourcesBalancedAllocationArgs`: unique names, weight exactly 1.
fn balanced_args(
    doc: &Document,
    file: &Path,
    path: &str,
    raw: RawBalancedAllocationArgs,
) -> Result<Vec<ResourceSpec>, InputError> {
    let seen = std::cell::RefCell::new(HashSet::new());
    resource_specs(&format!("{path}.resources"), raw.resources, |spec, at| {
        if !seen.borrow_mut().insert(spec.name.clone()) {
            return Err(doc.error(
                file,
                &format!("{at}.name"),
                format!("Duplicate value: {:?}", spec.name),
            ));
        }
        if spec.weight != 1 {
            return Err(doc.error(
                file,
                &format!("{at}.weight"),
                invalid(spec.weight, "must be 1"),
            ));
        }
        Ok(())
    })
}

/// `validateFunctionShape` (validation_pluginargs.go).
fn validate_function_shape(
    doc: &Document,
    file: &Path,
    path: &str,
    shape: &[RawShapePoint],
) -> Result<(), InputError> {
    if shape.is_empty() {
        return Err(doc.error(
            file,
            path,
            "Required value: at least one point must be specified".to_string(),
        ));
    }
    for i in 1..shape.len() {
        if shape[i - 1].utilization >= shape[i].utilization {
            return Err(doc.error(
                file,
                &format!("{path}[{i}].utilization"),
                invalid(
                    shape[i].utilization,
                    "values must be sorted in increasing order",
                ),
            ));
        }
    }
    for (i, p) in shape.iter().enumerate() {
        if !(0..=100).contains(&p.utilization) {
            return Err(doc.error(
                file,
                &format!("{path}[{i}].utilization"),
                invalid(p.utilization, "not in valid range [0, 100]"),
            ));
        }
        if !(0..=MAX_CUSTOM_PRIORITY_SCORE as i32).contains(&p.score) {
            return Err(doc.error(
                file,
                &format!("{path}[{i}].score"),
                invalid(p.score, "not in valid range [0, 10]"),
            ));
        }
    }
    Ok(())
}

/// `SetDefaults_PodTopologySpreadArgs` + `ValidatePodTopologySpreadArgs`.
fn spread_args(
    doc: &Document,
    file: &Path,
    path: &str,
    raw: RawPodTopologySpreadArgs,
) -> Result<Option<Vec<TopologySpreadConstraint>>, InputError> {
    let defaulting = if raw.defaulting_type.is_empty() {
        "System"
    } else {
        raw.defaulting_type.as_str()
    };
    let constraints = raw.default_constraints.unwrap_or_default();
    let t_path = format!("{path}.defaultingType");
    match defaulting {
        "System" if !constraints.is_empty() => {
            return Err(doc.error(
                file,
                &t_path,
                invalid(quoted("System"), "when .defaultConstraints are not empty"),
            ));
        }
        "System" | "List" => {}
        other => {
            return Err(doc.error(
                file,
                &t_path,
                format!("Unsupported value: {other:?}: supported values: \"System\", \"List\""),
            ));
        }
    }
    let c_path = format!("{path}.defaultConstraints");
    for (i, c) in constraints.iter().enumerate() {
        let p = format!("{c_path}[{i}]");
        if c.max_skew <= 0 {
            return Err(doc.error(
                file,
                &format!("{p}.maxSkew"),
                invalid(c.max_skew, "not in valid range (0, inf)"),
            ));
        }
        if c.topology_key.is_empty() {
            return Err(doc.error(
                file,
                &format!("{p}.topologyKey"),
                "Required value: can not be empty".to_string(),
            ));
        }
        if !is_qualified_name(&c.topology_key) {
            return Err(doc.error(
                file,
                &format!("{p}.topologyKey"),
                invalid(quoted(&c.topology_key), QUALIFIED_NAME_MESSAGE),
            ));
        }
        match c.when_unsatisfiable.as_str() {
            "" => {
                return Err(doc.error(
                    file,
                    &format!("{p}.whenUnsatisfiable"),
                    "Required value: can not be empty".to_string(),
                ));
            }
            "DoNotSchedule" | "ScheduleAnyway" => {}
            other => {
                return Err(doc.error(
                    file,
                    &format!("{p}.whenUnsatisfiable"),
                    format!(
                        "Unsupported value: {other:?}: supported values: \"DoNotSchedule\", \
                         \"ScheduleAnyway\""
                    ),
                ));
            }
        }
        if c.label_selector.is_some() {
            return Err(doc.error(
                file,
                &format!("{p}.labelSelector"),
                "Forbidden: constraint must not define a selector, as they deduced for each pod"
                    .to_string(),
            ));
        }
        if constraints[..i].iter().any(|o| {
            o.topology_key == c.topology_key && o.when_unsatisfiable == c.when_unsatisfiable
        }) {
            return Err(doc.error(
                file,
                &p,
                format!(
                    "Duplicate value: \"{{{}, {}}}\"",
                    c.topology_key, c.when_unsatisfiable
                ),
            ));
        }
    }
    Ok((defaulting == "List").then_some(constraints))
}

/// `ValidateDefaultPreemptionArgs` (with `SetDefaults_DefaultPreemptionArgs`: 10 %, 100).
fn validate_preemption_args(
    doc: &Document,
    file: &Path,
    path: &str,
    raw: &RawDefaultPreemptionArgs,
) -> Result<(), InputError> {
    let pct = raw.min_candidate_nodes_percentage.unwrap_or(10);
    let abs = raw.min_candidate_nodes_absolute.unwrap_or(100);
    let pct_path = format!("{path}.minCandidateNodesPercentage");
    let abs_path = format!("{path}.minCandidateNodesAbsolute");
    if !(0..=100).contains(&pct) {
        return Err(doc.error(file, &pct_path, invalid(pct, "not in valid range [0, 100]")));
    }
    if abs < 0 {
        return Err(doc.error(file, &abs_path, invalid(abs, "not in valid range [0, inf)")));
    }
    if pct == 0 && abs == 0 {
        return Err(doc.error(
            file,
            &pct_path,
            invalid(
                pct,
                "cannot be zero at the same time as minCandidateNodesAbsolute",
            ),
        ));
    }
    Ok(())
}

/// `ValidateNodeAffinityArgs`: the required node selector and the preferred terms must parse
/// (`nodeaffinity.NewNodeSelector`, `NewPreferredSchedulingTerms`; terms of weight 0 are
/// skipped). Checked with the API server's node-selector validation.
fn validate_added_affinity(
    doc: &Document,
    file: &Path,
    path: &str,
    affinity: &NodeAffinity,
) -> Result<(), InputError> {
    let mut affinity = affinity.clone();
    for term in affinity
        .preferred_during_scheduling_ignored_during_execution
        .iter_mut()
        .flatten()
    {
        if term.weight == 0 {
            term.preference = NodeSelectorTerm::default();
        }
        term.weight = 1;
    }
    const PREFIX: &str = "\u{0}";
    let spec = PodSpec {
        containers: vec![Container {
            name: "c".into(),
            image: Some("i".into()),
            ..Default::default()
        }],
        affinity: Some(k8s_openapi::api::core::v1::Affinity {
            node_affinity: Some(affinity),
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut errs = Vec::new();
    validate_pod_spec(&spec, PREFIX, &FeatureGates::default(), &mut errs);
    match errs.into_iter().next() {
        None => Ok(()),
        Some(e) => {
            let rest = e
                .path
                .strip_prefix(&format!("{PREFIX}.affinity.nodeAffinity"))
                .unwrap_or("");
            Err(doc.error(file, &format!("{path}{rest}"), e.message))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(enabled: &[(&str, Option<i32>)], disabled: &[&str]) -> PluginSet {
        PluginSet {
            enabled: enabled
                .iter()
                .map(|(n, w)| Entry {
                    name: n.to_string(),
                    weight: *w,
                    at: None,
                })
                .collect(),
            disabled: disabled
                .iter()
                .map(|n| Entry {
                    name: n.to_string(),
                    weight: None,
                    at: None,
                })
                .collect(),
        }
    }

    fn names_weights(s: &PluginSet) -> (Vec<(String, Option<i32>)>, Vec<String>) {
        (
            s.enabled
                .iter()
                .map(|e| (e.name.clone(), e.weight))
                .collect(),
            s.disabled.iter().map(|e| e.name.clone()).collect(),
        )
    }

    /// `TestMergePlugins` (pkg/scheduler/apis/config/v1/default_plugins_test.go): every case
    /// of one plugin set (the upstream cases use `Filter` or `MultiPoint`, merged alike).
    #[test]
    fn merge_plugin_set_matches_upstream() {
        type Case<'a> = (
            &'a str,
            PluginSet, // custom
            PluginSet, // default
            PluginSet, // expected
        );
        let d12 = || set(&[("DefaultPlugin1", None), ("DefaultPlugin2", None)], &[]);
        let p123 = || {
            set(
                &[("Plugin1", None), ("Plugin2", None), ("Plugin3", None)],
                &[],
            )
        };
        let cases: Vec<Case> = vec![
            (
                "AppendCustomPlugin",
                set(&[("CustomPlugin", None)], &[]),
                d12(),
                set(
                    &[
                        ("DefaultPlugin1", None),
                        ("DefaultPlugin2", None),
                        ("CustomPlugin", None),
                    ],
                    &[],
                ),
            ),
            (
                "InsertAfterDefaultPlugins2",
                set(
                    &[("CustomPlugin", None), ("DefaultPlugin2", None)],
                    &["DefaultPlugin2"],
                ),
                d12(),
                set(
                    &[
                        ("DefaultPlugin1", None),
                        ("CustomPlugin", None),
                        ("DefaultPlugin2", None),
                    ],
                    &["DefaultPlugin2"],
                ),
            ),
            (
                "InsertBeforeAllPlugins",
                set(
                    &[
                        ("CustomPlugin", None),
                        ("DefaultPlugin1", None),
                        ("DefaultPlugin2", None),
                    ],
                    &["*"],
                ),
                d12(),
                set(
                    &[
                        ("CustomPlugin", None),
                        ("DefaultPlugin1", None),
                        ("DefaultPlugin2", None),
                    ],
                    &["*"],
                ),
            ),
            (
                "ReorderDefaultPlugins",
                set(
                    &[("DefaultPlugin2", None), ("DefaultPlugin1", None)],
                    &["*"],
                ),
                d12(),
                set(
                    &[("DefaultPlugin2", None), ("DefaultPlugin1", None)],
                    &["*"],
                ),
            ),
            ("ApplyNilCustomPlugin", set(&[], &[]), d12(), d12()),
            (
                "CustomPluginOverrideDefaultPlugin",
                set(&[("Plugin1", Some(2)), ("Plugin3", Some(3))], &[]),
                p123(),
                set(
                    &[
                        ("Plugin1", Some(2)),
                        ("Plugin2", None),
                        ("Plugin3", Some(3)),
                    ],
                    &[],
                ),
            ),
            (
                "OrderPreserveAfterOverride",
                set(&[("Plugin2", Some(2)), ("Plugin1", Some(1))], &[]),
                p123(),
                set(
                    &[
                        ("Plugin1", Some(1)),
                        ("Plugin2", Some(2)),
                        ("Plugin3", None),
                    ],
                    &[],
                ),
            ),
            (
                "RepeatedCustomPlugin",
                set(
                    &[
                        ("Plugin1", None),
                        ("Plugin2", Some(2)),
                        ("Plugin3", None),
                        ("Plugin2", Some(4)),
                    ],
                    &[],
                ),
                p123(),
                set(
                    &[
                        ("Plugin1", None),
                        ("Plugin2", Some(4)),
                        ("Plugin3", None),
                        ("Plugin2", Some(2)),
                    ],
                    &[],
                ),
            ),
            (
                "Append custom MultiPoint plugin",
                set(&[("CustomPlugin", None)], &[]),
                d12(),
                set(
                    &[
                        ("DefaultPlugin1", None),
                        ("DefaultPlugin2", None),
                        ("CustomPlugin", None),
                    ],
                    &[],
                ),
            ),
            (
                "Append disabled Multipoint plugins",
                set(
                    &[("CustomPlugin", None), ("CustomPlugin2", None)],
                    &["DefaultPlugin2"],
                ),
                d12(),
                set(
                    &[
                        ("DefaultPlugin1", None),
                        ("CustomPlugin", None),
                        ("CustomPlugin2", None),
                    ],
                    &["DefaultPlugin2"],
                ),
            ),
            (
                "override default MultiPoint plugins with custom value",
                set(&[("DefaultPlugin", Some(5))], &[]),
                set(&[("DefaultPlugin", None)], &[]),
                set(&[("DefaultPlugin", Some(5))], &[]),
            ),
            (
                "disabled MultiPoint plugin in default set",
                set(&[("CustomPlugin", None)], &[]),
                set(&[("DefaultPlugin", None)], &["DefaultPlugin2"]),
                set(
                    &[("DefaultPlugin", None), ("CustomPlugin", None)],
                    &["DefaultPlugin2"],
                ),
            ),
            (
                "multipoint with only disabled gets merged",
                set(&[], &["DefaultPlugin"]),
                set(&[("DefaultPlugin", None)], &[]),
                set(&[], &["DefaultPlugin"]),
            ),
        ];
        for (name, custom, default, want) in cases {
            let got = merge_plugin_set(&default, &custom);
            assert_eq!(names_weights(&got), names_weights(&want), "{name}");
        }
    }

    /// "disabled MultiPoint plugin in default set for specific extension point"
    /// (TestMergePlugins): a default `Score.Disabled` survives the merge of an empty custom set.
    #[test]
    fn default_disabled_survives_merge() {
        let default = set(&[], &["DefaultPlugin2"]);
        let got = merge_plugin_set(&default, &PluginSet::default());
        assert_eq!(names_weights(&got), (vec![], vec!["DefaultPlugin2".into()]));
    }

    #[test]
    fn default_list_is_known_and_in_tree() {
        for (name, _) in DEFAULT_MULTI_POINT {
            let p = known_plugin(name).unwrap_or_else(|| panic!("{name} unknown"));
            assert!(p.is_in_tree(), "{name}");
            assert!(plugin_name_error(name).is_none(), "{name}");
        }
    }

    #[test]
    fn suggestions() {
        assert_eq!(suggest("NodeResourceFit"), Some("NodeResourcesFit"));
        assert_eq!(suggest("TaintTolerations"), Some("TaintToleration"));
        assert_eq!(suggest("Zzz"), None);
        // Out-of-tree names are never suggested; simulated scheduler-plugins ones are.
        assert_ne!(suggest("CapacitySchedulin"), Some("CapacityScheduling"));
        assert_eq!(suggest("Coschedulin"), Some("Coscheduling"));
    }

    /// One specific extension point's set: (point, enabled, disabled).
    type PointSet<'a> = (ExtensionPoint, &'a [(&'a str, Option<i32>)], &'a [&'a str]);

    /// A profile's plugins as `NewFramework` receives them (no merge with the defaults).
    fn raw_plugins(
        multi: &[(&str, Option<i32>)],
        multi_disabled: &[&str],
        points: &[PointSet],
    ) -> Plugins {
        let mut p = Plugins {
            multi_point: set(multi, multi_disabled),
            ..Default::default()
        };
        for (point, enabled, disabled) in points {
            p.points[*point as usize] = set(enabled, disabled);
        }
        p
    }

    /// Every extension point's plugins as `ListPlugins` shows them: names, and for Score the
    /// weight `getScoreWeights` assigns.
    fn listed(p: &Plugins) -> Vec<(ExtensionPoint, Vec<(String, i64)>)> {
        let weights = score_weights(p);
        ExtensionPoint::ALL
            .into_iter()
            .map(|point| {
                let list = plugins_at(p, point)
                    .unwrap()
                    .into_iter()
                    .map(|e| {
                        let w = if point == ExtensionPoint::Score {
                            weights[&e.name]
                        } else {
                            0
                        };
                        (e.name, w)
                    })
                    .collect();
                (point, list)
            })
            .filter(|(_, l): &(_, Vec<_>)| !l.is_empty())
            .collect()
    }

    fn want(
        points: &[(ExtensionPoint, &[(&str, i64)])],
    ) -> Vec<(ExtensionPoint, Vec<(String, i64)>)> {
        let mut v: Vec<_> = points
            .iter()
            .map(|(p, l)| (*p, l.iter().map(|(n, w)| (n.to_string(), *w)).collect()))
            .collect();
        v.sort_by_key(|(p, _)| ExtensionPoint::ALL.iter().position(|q| q == p));
        v
    }

    /// `TestNewFrameworkMultiPointExpansion` (pkg/scheduler/framework/runtime/framework_test.go)
    /// with real plugins in the fake plugins' roles: `testPlugin` → NodeAffinity (PreFilter,
    /// Filter, PreScore, Score), `scorePlugin1` → TaintToleration (Filter, PreScore, Score),
    /// `scorePlugin2` → PodTopologySpread, `scoreWithNormalizePlugin1` → ImageLocality (Score),
    /// `queueSortPlugin` → PrioritySort, `bindPlugin` → DefaultBinder. The expected lists are
    /// upstream's, restricted to the points our plugins implement.
    #[test]
    fn multi_point_expansion_matches_upstream() {
        use ExtensionPoint::*;
        const NA: &str = "NodeAffinity";
        const TT: &str = "TaintToleration";
        const PTS: &str = "PodTopologySpread";
        const IL: &str = "ImageLocality";
        // plugin expansion
        assert_eq!(
            listed(&raw_plugins(&[(NA, Some(5))], &[], &[])),
            want(&[
                (PreFilter, &[(NA, 0)]),
                (Filter, &[(NA, 0)]),
                (PreScore, &[(NA, 0)]),
                (Score, &[(NA, 5)])
            ])
        );
        // disable MultiPoint plugin at some extension points
        assert_eq!(
            listed(&raw_plugins(
                &[(NA, None)],
                &[],
                &[(PreScore, &[], &[NA]), (Score, &[], &[NA])]
            )),
            want(&[(PreFilter, &[(NA, 0)]), (Filter, &[(NA, 0)])])
        );
        // Multiple MultiPoint plugins
        assert_eq!(
            listed(&raw_plugins(&[(NA, None), (TT, None)], &[], &[])),
            want(&[
                (PreFilter, &[(NA, 0)]),
                (Filter, &[(NA, 0), (TT, 0)]),
                (PreScore, &[(NA, 0), (TT, 0)]),
                (Score, &[(NA, 1), (TT, 1)]),
            ])
        );
        // disable MultiPoint extension
        assert_eq!(
            listed(&raw_plugins(
                &[(NA, None), (TT, None)],
                &[],
                &[(PreScore, &[], &["*"])]
            )),
            want(&[
                (PreFilter, &[(NA, 0)]),
                (Filter, &[(NA, 0), (TT, 0)]),
                (Score, &[(NA, 1), (TT, 1)]),
            ])
        );
        // Reorder MultiPoint plugins (specified extension takes precedence)
        let got = listed(&raw_plugins(
            &[(IL, None), (NA, None), (TT, None)],
            &[],
            &[(Score, &[(TT, None), (NA, None)], &[])],
        ));
        assert_eq!(
            got.iter().find(|(p, _)| *p == Score).unwrap().1,
            want(&[(Score, &[(TT, 1), (NA, 1), (IL, 1)])])[0].1
        );
        // Reorder MultiPoint plugins (specified extension only takes precedence when it exists
        // in MultiPoint)
        let got = listed(&raw_plugins(
            &[(NA, None), (TT, None)],
            &[],
            &[(Score, &[(IL, None), (TT, None), (NA, None)], &[])],
        ));
        assert_eq!(
            got.iter().find(|(p, _)| *p == Score).unwrap().1,
            want(&[(Score, &[(TT, 1), (NA, 1), (IL, 1)])])[0].1
        );
        // Override MultiPoint plugins weights
        let got = listed(&raw_plugins(
            &[(NA, None), (TT, None)],
            &[],
            &[(Score, &[(TT, Some(5)), (NA, Some(3))], &[])],
        ));
        assert_eq!(
            got.iter().find(|(p, _)| *p == Score).unwrap().1,
            want(&[(Score, &[(TT, 5), (NA, 3)])])[0].1
        );
        // disable and enable MultiPoint plugins with '*' (the framework ignores
        // multiPoint.disabled; mergePlugins already applied it)
        assert_eq!(
            listed(&raw_plugins(
                &[("PrioritySort", None), ("DefaultBinder", None), (TT, None)],
                &["*"],
                &[]
            )),
            want(&[
                (Filter, &[(TT, 0)]),
                (PreScore, &[(TT, 0)]),
                (Score, &[(TT, 1)]),
                (Bind, &[("DefaultBinder", 0)]),
                (QueueSort, &[("PrioritySort", 0)]),
            ])
        );
        // disable and enable MultiPoint plugin by name
        assert_eq!(
            listed(&raw_plugins(
                &[("DefaultBinder", None), ("PrioritySort", None), (TT, None)],
                &[TT],
                &[]
            )),
            want(&[
                (Filter, &[(TT, 0)]),
                (PreScore, &[(TT, 0)]),
                (Score, &[(TT, 1)]),
                (Bind, &[("DefaultBinder", 0)]),
                (QueueSort, &[("PrioritySort", 0)]),
            ])
        );
        // Expect 'already registered' error
        let err =
            plugins_at(&raw_plugins(&[(NA, None), (NA, None)], &[], &[]), PreFilter).unwrap_err();
        assert_eq!(
            err.message,
            r#"plugin "NodeAffinity" already registered as "PreFilterPlugin""#
        );
        // Override MultiPoint plugins weights and avoid a plugin being loaded multiple times
        let got = listed(&raw_plugins(
            &[(NA, None), (TT, None)],
            &[],
            &[(Score, &[(TT, Some(5)), (PTS, Some(5)), (NA, Some(3))], &[])],
        ));
        assert_eq!(
            got.iter().find(|(p, _)| *p == Score).unwrap().1,
            want(&[(Score, &[(TT, 5), (NA, 3), (PTS, 5)])])[0].1
        );
    }

    /// `updatePluginList`: a specific point only takes plugins that implement it, once.
    #[test]
    fn specific_points_are_checked() {
        let p = raw_plugins(
            &[],
            &[],
            &[(ExtensionPoint::Score, &[("NodeUnschedulable", None)], &[])],
        );
        assert_eq!(
            plugins_at(&p, ExtensionPoint::Score).unwrap_err().message,
            r#"plugin "NodeUnschedulable" does not extend ScorePlugin plugin"#
        );
        let p = raw_plugins(
            &[],
            &[],
            &[(
                ExtensionPoint::Filter,
                &[("NodeName", None), ("NodeName", None)],
                &[],
            )],
        );
        assert_eq!(
            plugins_at(&p, ExtensionPoint::Filter).unwrap_err().message,
            r#"plugin "NodeName" already registered as "FilterPlugin""#
        );
    }

    /// The default plugins expand to the default profile.
    #[test]
    fn defaults_expand_to_the_default_profile() {
        let plugins = Plugins::defaults();
        let at = |p| {
            plugins_at(&plugins, p)
                .unwrap()
                .into_iter()
                .map(|e| e.name)
                .collect::<Vec<_>>()
        };
        assert_eq!(
            at(ExtensionPoint::Filter),
            [
                "NodeUnschedulable",
                "NodeName",
                "TaintToleration",
                "NodeAffinity",
                "NodePorts",
                "NodeResourcesFit",
                "VolumeRestrictions",
                "NodeVolumeLimits",
                "VolumeBinding",
                "VolumeZone",
                "PodTopologySpread",
                "InterPodAffinity",
                "DynamicResources",
            ]
        );
        assert_eq!(
            at(ExtensionPoint::Score),
            [
                "TaintToleration",
                "NodeAffinity",
                "NodeResourcesFit",
                "VolumeBinding",
                "PodTopologySpread",
                "InterPodAffinity",
                "NodeResourcesBalancedAllocation",
                "ImageLocality",
            ]
        );
        assert_eq!(at(ExtensionPoint::QueueSort), ["PrioritySort"]);
        assert_eq!(at(ExtensionPoint::Bind), ["DefaultBinder"]);
        assert_eq!(
            at(ExtensionPoint::PostFilter),
            ["DynamicResources", "DefaultPreemption"]
        );
        let w = score_weights(&plugins);
        assert_eq!(w["TaintToleration"], 3);
        assert_eq!(w["VolumeBinding"], 1, "no weight counts as 1");
    }
}
