//! The resolved profile: which plugins run where, with their args defaulted
//! (the internal `config.KubeSchedulerProfile` of `pkg/scheduler/apis/config/types.go`).

use k8s_openapi::api::core::v1::{NodeAffinity, TopologySpreadConstraint};

use super::*;

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
