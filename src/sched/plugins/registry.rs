//! The plugins schedsim knows, the extension points each implements, and the default
//! `multiPoint` list: kube-scheduler's `pkg/scheduler/framework/plugins/registry.go` and
//! `pkg/scheduler/apis/config/v1/default_plugins.go`.

use crate::sched::framework::names;

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

/// The plugins of the simulated scheduler's registry, by identity: the scheduling cycle
/// dispatches on this enum (static dispatch), a profile lists them per extension point.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Plugin {
    SchedulingGates,
    PrioritySort,
    NodeUnschedulable,
    NodeName,
    TaintToleration,
    NodeAffinity,
    NodePorts,
    NodeResourcesFit,
    VolumeRestrictions,
    NodeVolumeLimits,
    VolumeBinding,
    VolumeZone,
    PodTopologySpread,
    InterPodAffinity,
    DynamicResources,
    DefaultPreemption,
    NodeResourcesBalancedAllocation,
    ImageLocality,
    DefaultBinder,
    NodeDeclaredFeatures,
    /// scheduler-plugins' Coscheduling, built into its kube-scheduler.
    Coscheduling,
    /// The FGD paper's simulator's GPU-sharing Filter and Reserve (`sched::gpu_share`).
    OpenGpuShare,
    /// Its six score plugins (`sched::gpu_share::policy`).
    RandomScore,
    DotProductScore,
    GpuClusteringScore,
    GpuPackingScore,
    BestFitScore,
    FgdScore,
}

impl Plugin {
    /// The plugin's registered name (`pkg/scheduler/framework/plugins/names/names.go`).
    pub const fn name(self) -> &'static str {
        match self {
            Plugin::SchedulingGates => names::SCHEDULING_GATES,
            Plugin::PrioritySort => "PrioritySort",
            Plugin::NodeUnschedulable => names::NODE_UNSCHEDULABLE,
            Plugin::NodeName => names::NODE_NAME,
            Plugin::TaintToleration => names::TAINT_TOLERATION,
            Plugin::NodeAffinity => names::NODE_AFFINITY,
            Plugin::NodePorts => "NodePorts",
            Plugin::NodeResourcesFit => names::NODE_RESOURCES_FIT,
            Plugin::VolumeRestrictions => "VolumeRestrictions",
            Plugin::NodeVolumeLimits => "NodeVolumeLimits",
            Plugin::VolumeBinding => "VolumeBinding",
            Plugin::VolumeZone => "VolumeZone",
            Plugin::PodTopologySpread => names::POD_TOPOLOGY_SPREAD,
            Plugin::InterPodAffinity => names::INTER_POD_AFFINITY,
            Plugin::DynamicResources => "DynamicResources",
            Plugin::DefaultPreemption => names::DEFAULT_PREEMPTION,
            Plugin::NodeResourcesBalancedAllocation => names::NODE_RESOURCES_BALANCED_ALLOCATION,
            Plugin::ImageLocality => "ImageLocality",
            Plugin::DefaultBinder => "DefaultBinder",
            Plugin::NodeDeclaredFeatures => "NodeDeclaredFeatures",
            Plugin::Coscheduling => "Coscheduling",
            Plugin::OpenGpuShare => "Open-Gpu-Share",
            Plugin::RandomScore => "RandomScore",
            Plugin::DotProductScore => "DotProductScore",
            Plugin::GpuClusteringScore => "GpuClusteringScore",
            Plugin::GpuPackingScore => "GpuPackingScore",
            Plugin::BestFitScore => "BestFitScore",
            Plugin::FgdScore => "FGDScore",
        }
    }
}

impl Plugin {
    /// The score plugin of a GPU-sharing policy.
    pub fn of_policy(policy: crate::sched::gpu_share::policy::Policy) -> Plugin {
        use crate::sched::gpu_share::policy::Policy;
        match policy {
            Policy::Random => Plugin::RandomScore,
            Policy::DotProd => Plugin::DotProductScore,
            Policy::GpuClustering => Plugin::GpuClusteringScore,
            Policy::GpuPacking => Plugin::GpuPackingScore,
            Policy::BestFit => Plugin::BestFitScore,
            Policy::Fgd => Plugin::FgdScore,
        }
    }
}

impl std::fmt::Display for Plugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How schedsim treats a plugin name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Support {
    /// In the registry and simulated: the cycle runs it.
    Simulated(Plugin),
    /// In the registry; accepted and listed in profiles, but it cannot change a simulated
    /// placement (volumes, host ports, DRA claims, queue order within arrival order, binding).
    NoEffect(Plugin),
    /// In-tree, but not simulated: enabling it is an error.
    NotSimulated,
    /// A well-known out-of-tree plugin (kubernetes-sigs/scheduler-plugins, …): an error.
    OutOfTree,
    /// Was in-tree once; the text says what replaced it. An error.
    Removed(&'static str),
}

impl Support {
    /// The registry's plugin, for the names a profile may enable.
    pub fn plugin(self) -> Option<Plugin> {
        match self {
            Support::Simulated(p) | Support::NoEffect(p) => Some(p),
            _ => None,
        }
    }
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
    /// A plugin of the simulated scheduler's registry that the cycle runs.
    const fn simulated(plugin: Plugin, points: u16) -> Self {
        KnownPlugin::new(plugin.name(), Support::Simulated(plugin), points)
    }

    /// A plugin of the registry that cannot change a simulated placement.
    const fn no_effect(plugin: Plugin, points: u16) -> Self {
        KnownPlugin::new(plugin.name(), Support::NoEffect(plugin), points)
    }

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
            Support::Simulated(_) | Support::NoEffect(_) | Support::NotSimulated
        )
    }
}

/// Every plugin name schedsim recognises: the in-tree registry
/// (`pkg/scheduler/framework/plugins/registry.go`, `NewInTreeRegistry`), removed in-tree
/// plugins, and common out-of-tree ones. A new plugin is one line here (and a [`Plugin`]
/// variant), then its code at its extension points in `sched::cycle`.
pub const REGISTRY: &[KnownPlugin] = &[
    KnownPlugin::simulated(Plugin::SchedulingGates, PRE_ENQUEUE),
    KnownPlugin::no_effect(Plugin::PrioritySort, QUEUE_SORT),
    KnownPlugin::simulated(Plugin::NodeUnschedulable, FILTER),
    KnownPlugin::simulated(Plugin::NodeName, FILTER),
    KnownPlugin::simulated(Plugin::TaintToleration, FILTER | PRE_SCORE | SCORE),
    KnownPlugin::simulated(
        Plugin::NodeAffinity,
        PRE_FILTER | FILTER | PRE_SCORE | SCORE,
    ),
    KnownPlugin::no_effect(Plugin::NodePorts, PRE_FILTER | FILTER),
    KnownPlugin::simulated(
        Plugin::NodeResourcesFit,
        PRE_FILTER | FILTER | PRE_SCORE | SCORE,
    ),
    KnownPlugin::no_effect(Plugin::VolumeRestrictions, PRE_FILTER | FILTER),
    KnownPlugin::no_effect(Plugin::NodeVolumeLimits, PRE_FILTER | FILTER),
    KnownPlugin::no_effect(
        Plugin::VolumeBinding,
        PRE_FILTER | FILTER | RESERVE | PRE_BIND | PRE_SCORE | SCORE,
    ),
    KnownPlugin::no_effect(Plugin::VolumeZone, PRE_FILTER | FILTER),
    KnownPlugin::simulated(
        Plugin::PodTopologySpread,
        PRE_FILTER | FILTER | PRE_SCORE | SCORE,
    ),
    KnownPlugin::simulated(
        Plugin::InterPodAffinity,
        PRE_FILTER | FILTER | PRE_SCORE | SCORE,
    ),
    KnownPlugin::simulated(
        Plugin::DynamicResources,
        PRE_ENQUEUE | PRE_FILTER | FILTER | POST_FILTER | RESERVE | PRE_BIND,
    ),
    KnownPlugin::simulated(Plugin::DefaultPreemption, POST_FILTER),
    KnownPlugin::simulated(Plugin::NodeResourcesBalancedAllocation, PRE_SCORE | SCORE),
    // Scored by the integrator when nodes report images; no effect otherwise.
    KnownPlugin::no_effect(Plugin::ImageLocality, SCORE),
    KnownPlugin::no_effect(Plugin::DefaultBinder, BIND),
    KnownPlugin::no_effect(Plugin::NodeDeclaredFeatures, PRE_FILTER | FILTER),
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
    KnownPlugin::simulated(
        Plugin::Coscheduling,
        QUEUE_SORT | PRE_FILTER | POST_FILTER | PERMIT | RESERVE | POST_BIND,
    ),
    // hkust-adsl/kubernetes-scheduler-simulator (the FGD paper's simulator,
    // `pkg/simulator/plugin/`): GPU sharing by annotations (`sched::gpu_share`).
    KnownPlugin::simulated(Plugin::OpenGpuShare, FILTER | RESERVE),
    KnownPlugin::simulated(Plugin::RandomScore, PRE_SCORE | SCORE),
    KnownPlugin::simulated(Plugin::DotProductScore, SCORE),
    KnownPlugin::simulated(Plugin::GpuClusteringScore, SCORE),
    KnownPlugin::simulated(Plugin::GpuPackingScore, SCORE),
    KnownPlugin::simulated(Plugin::BestFitScore, SCORE),
    KnownPlugin::simulated(Plugin::FgdScore, SCORE),
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

/// The entry of [`REGISTRY`] for `name`.
pub fn known_plugin(name: &str) -> Option<&'static KnownPlugin> {
    REGISTRY.iter().find(|p| p.name == name)
}

/// Why `name` cannot be used, or `None` when it is an in-tree plugin schedsim accepts.
pub fn plugin_name_error(name: &str) -> Option<String> {
    match known_plugin(name).map(|p| p.support) {
        Some(Support::Simulated(_) | Support::NoEffect(_)) => None,
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
    REGISTRY
        .iter()
        .filter(|p| matches!(p.support, Support::Simulated(_)))
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The closest in-tree plugin name (Jaro-Winkler ≥ 0.8).
pub(crate) fn suggest(name: &str) -> Option<&'static str> {
    REGISTRY
        .iter()
        .filter(|p| p.is_in_tree())
        .map(|p| (strsim::jaro_winkler(name, p.name), p.name))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, n)| n)
}
