//! The resolved profile: which plugins run where, with their args defaulted
//! (the internal `config.KubeSchedulerProfile` of `pkg/scheduler/apis/config/types.go`).

use k8s_openapi::api::core::v1::{NodeAffinity, TopologySpreadConstraint};

use super::*;

/// `PermitWaitingTimeSeconds` default of CoschedulingArgs (scheduler-plugins
/// `apis/config/v1/defaults.go`), used when a PodGroup sets no `scheduleTimeoutSeconds`.
pub const DEFAULT_PERMIT_WAITING_SECONDS: u32 = 60;

/// `defaultPodGroupRejectPercentage` of CoschedulingArgs (scheduler-plugins
/// `apis/config/v1/defaults.go`).
pub const DEFAULT_POD_GROUP_REJECT_PERCENTAGE: u32 = 10;

/// One resolved scheduling profile: which of schedsim's plugins run where, and their args.
#[derive(Debug, Clone, PartialEq)]
pub struct Profile {
    pub scheduler_name: String,
    /// The plugins at each extension point, in the order the framework runs them.
    pub framework: Framework,
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
    /// The profile's `percentageOfNodesToScore`, else the global one; `None` when neither is
    /// set (upstream default 0 = adaptive): how many feasible nodes a cycle looks for
    /// (`numFeasibleNodesToFind`).
    pub percentage_of_nodes_to_score: Option<i32>,
    /// `PodTopologySpreadArgs`: `None` = `defaultingType: System` (the built-in default
    /// constraints); `Some(list)` = `defaultingType: List` with these constraints (may be empty).
    pub spread_default_constraints: Option<Vec<TopologySpreadConstraint>>,
    /// `CoschedulingArgs.permitWaitingTimeSeconds`: how long members wait at Permit when their
    /// PodGroup sets no `scheduleTimeoutSeconds` (default 60).
    pub permit_waiting_seconds: Option<u32>,
    /// `CoschedulingArgs.podGroupBackoffSeconds`: how long a PodGroup that PostFilter rejected
    /// is refused at PreFilter (default 0, off).
    pub pod_group_backoff_seconds: u32,
    /// `CoschedulingArgs.podGroupRejectPercentage`: PostFilter spares the waiting members
    /// while at most this percentage of `minMember` is unassigned (default 10).
    pub pod_group_reject_percentage: u32,
    /// `DefaultPreemptionArgs`: how many candidate nodes preemption's dry run looks for.
    pub preemption: PreemptionArgs,
    /// The configuration's `podInitialBackoffSeconds` and `podMaxBackoffSeconds` (one queue
    /// serves every profile; each carries them): the scheduling queue's backoff in a replay.
    pub backoff_seconds: (u64, u64),
    /// `Open-Gpu-Share`'s `gpuSelMethod`: how Reserve picks a pod's GPUs.
    pub gpu_sel: Option<GpuSel>,
}

/// `gpuSelMethod` of the FGD simulator's `Open-Gpu-Share` (`allocateGpuIdFunc`): a sharing
/// pod's GPU is the fullest that holds its share, the emptiest, a uniform draw among those
/// that hold it, or the one FGDScore found best; whole GPUs are the lowest free ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuSel {
    BestFit,
    WorstFit,
    Random,
    Fgd,
}

/// `DefaultPreemptionArgs`, defaulted (`SetDefaults_DefaultPreemptionArgs`: 10 %, 100).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreemptionArgs {
    pub min_candidate_nodes_percentage: i32,
    pub min_candidate_nodes_absolute: i32,
}

impl Default for PreemptionArgs {
    fn default() -> Self {
        PreemptionArgs {
            min_candidate_nodes_percentage: 10,
            min_candidate_nodes_absolute: 100,
        }
    }
}

/// The plugins a profile runs at each extension point, in order, and the score weights: what
/// `NewFramework` builds from the merged plugin sets (`framework.go: updatePluginList`,
/// `expandMultiPointPlugins`, `getScoreWeights`). The scheduling cycle runs these lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Framework {
    /// Per extension point (indexed by `ExtensionPoint as usize`), the plugins in run order.
    points: [Vec<Plugin>; 12],
    /// The weight of each plugin at Score.
    weights: Vec<(Plugin, i64)>,
}

impl Framework {
    pub(crate) fn new(points: [Vec<Plugin>; 12], weights: Vec<(Plugin, i64)>) -> Self {
        Framework { points, weights }
    }

    /// The plugins at `point`, in run order.
    pub fn at(&self, point: ExtensionPoint) -> &[Plugin] {
        &self.points[point as usize]
    }

    /// Whether `plugin` runs at `point`.
    pub fn runs(&self, point: ExtensionPoint, plugin: Plugin) -> bool {
        self.at(point).contains(&plugin)
    }

    /// The plugin's score weight; 0 when it does not run at Score.
    pub fn weight(&self, plugin: Plugin) -> i64 {
        self.weights
            .iter()
            .find(|(p, _)| *p == plugin)
            .map_or(0, |(_, w)| *w)
    }

    /// Takes `plugin` off `point`, as a `disabled` entry at that point does.
    pub fn disable(&mut self, point: ExtensionPoint, plugin: Plugin) {
        self.points[point as usize].retain(|p| *p != plugin);
        if point == ExtensionPoint::Score {
            self.weights.retain(|(p, _)| *p != plugin);
        }
    }

    /// The score weights of the plugins the cycle simulates.
    pub fn weights(&self) -> Weights {
        Weights {
            taint_toleration: self.weight(Plugin::TaintToleration),
            node_affinity: self.weight(Plugin::NodeAffinity),
            node_resources_fit: self.weight(Plugin::NodeResourcesFit),
            balanced_allocation: self.weight(Plugin::NodeResourcesBalancedAllocation),
            pod_topology_spread: self.weight(Plugin::PodTopologySpread),
            inter_pod_affinity: self.weight(Plugin::InterPodAffinity),
            image_locality: self.weight(Plugin::ImageLocality),
            gpu_share: crate::sched::gpu_share::policy::Policy::ALL
                .map(|policy| self.weight(Plugin::of_policy(policy))),
        }
    }
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
    /// The GPU-sharing score plugins', in [`crate::sched::gpu_share::policy::Policy::ALL`]'s
    /// order.
    pub gpu_share: [i64; 6],
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

/// `CoschedulingArgs` as the plugin reads them, defaulted (`SetDefaults_CoschedulingArgs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CoschedulingArgs {
    pub permit_waiting_seconds: u32,
    pub pod_group_backoff_seconds: u32,
    pub pod_group_reject_percentage: u32,
}

impl Profile {
    /// The profile's CoschedulingArgs, defaulted.
    pub fn coscheduling_args(&self) -> CoschedulingArgs {
        CoschedulingArgs {
            permit_waiting_seconds: (self.permit_waiting_seconds)
                .unwrap_or(DEFAULT_PERMIT_WAITING_SECONDS),
            pod_group_backoff_seconds: self.pod_group_backoff_seconds,
            pod_group_reject_percentage: self.pod_group_reject_percentage,
        }
    }

    /// Upstream's default profile running scheduler-plugins' Coscheduling as its sample
    /// configuration does: what a scenario without a scheduler configuration stands for, so
    /// that the gangs its pods name are scheduled as gangs.
    pub fn default_with_coscheduling() -> Self {
        Profile {
            framework: coscheduling_framework(),
            ..Profile::default()
        }
    }
}

impl Default for Profile {
    /// Upstream's default profile (`getDefaultPlugins` + `SetDefaults_*`).
    fn default() -> Self {
        Profile {
            scheduler_name: DEFAULT_SCHEDULER_NAME.into(),
            framework: default_framework(),
            fit: FitArgs::default(),
            balanced_resources: default_resources(),
            added_affinity: None,
            hard_pod_affinity_weight: 1,
            ignore_preferred_terms_of_existing_pods: false,
            percentage_of_nodes_to_score: None,
            spread_default_constraints: None,
            permit_waiting_seconds: None,
            pod_group_backoff_seconds: 0,
            pod_group_reject_percentage: DEFAULT_POD_GROUP_REJECT_PERCENTAGE,
            preemption: PreemptionArgs::default(),
            backoff_seconds: (1, 10),
            gpu_sel: None,
        }
    }
}
