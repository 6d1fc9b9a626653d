//! `EventsToRegister` of each plugin with QueueingHints on, and a profile's
//! `QueueingHintMap` (`buildQueueingHintMap` over `fillEnqueueExtensions`'s plugins).

use crate::features::FeatureGates;
use crate::sched::plugins::registry::{ExtensionPoint, Plugin};
use crate::sched::profile::Profile;
use crate::sched::queue::{Action, ClusterEvent, HintRegistry, Resource};

/// The QueueingHint functions, one per upstream `QueueingHintFn`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Hint {
    FitPod,
    FitNode,
    FitDeviceClass,
    NodeAffinityNode,
    NodeUnschedulableNode,
    NodeUnschedulableToleration,
    TaintTolerationNode,
    TaintTolerationToleration,
    InterPodAffinityAssignedPod,
    InterPodAffinityTargetPod,
    InterPodAffinityNode,
    SpreadAssignedPod,
    SpreadTargetPod,
    SpreadNode,
    GatesEliminated,
    DraClaim,
    DraPod,
    PreemptionPodDeleted,
}

impl Hint {
    /// The upstream function's name (test tables name hints by it).
    pub fn upstream_name(self) -> &'static str {
        match self {
            Hint::FitPod => "isSchedulableAfterPodEvent",
            Hint::FitNode
            | Hint::NodeAffinityNode
            | Hint::NodeUnschedulableNode
            | Hint::TaintTolerationNode
            | Hint::InterPodAffinityNode
            | Hint::SpreadNode => "isSchedulableAfterNodeChange",
            Hint::FitDeviceClass => "isSchedulableAfterDeviceClassEvent",
            Hint::NodeUnschedulableToleration | Hint::TaintTolerationToleration => {
                "isSchedulableAfterPodTolerationChange"
            }
            Hint::InterPodAffinityAssignedPod | Hint::SpreadAssignedPod => {
                "isSchedulableAfterAssignedPodChange"
            }
            Hint::InterPodAffinityTargetPod => "isSchedulableAfterTargetPodUpdateLabel",
            Hint::SpreadTargetPod => "isSchedulableAfterTargetPodChange",
            Hint::GatesEliminated => "isSchedulableAfterUpdateTargetPodSchedulingGatesEliminated",
            Hint::DraClaim => "isSchedulableAfterClaimChange",
            Hint::DraPod => "isSchedulableAfterPodChange",
            Hint::PreemptionPodDeleted => "isPodSchedulableAfterPodDeletion",
        }
    }
}

/// One `ClusterEventWithHint`; `hint: None` is upstream's nil `QueueingHintFn` (Queue).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registration {
    pub plugin: Plugin,
    pub event: ClusterEvent,
    pub hint: Option<Hint>,
}

/// `EventsToRegister` of `plugin` with QueueingHints on, in upstream's order (see the module
/// doc of `sched::hints` for `TargetPod`). Empty for the plugins that register nothing here.
pub fn events_to_register(plugin: Plugin, gates: &FeatureGates) -> Vec<Registration> {
    use Action as A;
    use Resource::*;
    let on = |resource, action: Action| ClusterEvent::new(resource, action);
    let or = |actions: &[Action]| Action(actions.iter().fold(0, |bits, a| bits | a.0));
    let events: Vec<(ClusterEvent, Option<Hint>)> = match plugin {
        // schedulinggates/scheduling_gates.go: TargetPod/UpdatePodSchedulingGatesEliminated.
        Plugin::SchedulingGates => vec![(
            on(UnscheduledPod, A::UPDATE_POD_SCHEDULING_GATES_ELIMINATED),
            Some(Hint::GatesEliminated),
        )],
        // nodeunschedulable/node_unschedulable.go.
        Plugin::NodeUnschedulable => vec![
            (
                on(Node, or(&[A::ADD, A::UPDATE_NODE_TAINT])),
                Some(Hint::NodeUnschedulableNode),
            ),
            (
                on(UnscheduledPod, A::UPDATE_POD_TOLERATION),
                Some(Hint::NodeUnschedulableToleration),
            ),
        ],
        // nodename/node_name.go: no hint, "always retried with backoff".
        Plugin::NodeName => vec![(on(Node, A::ADD), None)],
        // tainttoleration/taint_toleration.go.
        Plugin::TaintToleration => vec![
            (
                on(Node, or(&[A::ADD, A::UPDATE_NODE_TAINT])),
                Some(Hint::TaintTolerationNode),
            ),
            (
                on(Pod, A::UPDATE_POD_TOLERATION),
                Some(Hint::TaintTolerationToleration),
            ),
        ],
        // nodeaffinity/node_affinity.go.
        Plugin::NodeAffinity => vec![(
            on(Node, or(&[A::ADD, A::UPDATE_NODE_LABEL])),
            Some(Hint::NodeAffinityNode),
        )],
        // noderesources/fit.go (InPlacePodVerticalScaling is GA: UpdatePodScaleDown).
        Plugin::NodeResourcesFit => {
            let mut events = vec![
                (
                    on(Pod, or(&[A::DELETE, A::UPDATE_POD_SCALE_DOWN])),
                    Some(Hint::FitPod),
                ),
                (
                    on(Node, or(&[A::ADD, A::UPDATE_NODE_ALLOCATABLE])),
                    Some(Hint::FitNode),
                ),
            ];
            if gates.dra_extended_resource {
                events.push((
                    on(DeviceClass, or(&[A::ADD, A::UPDATE])),
                    Some(Hint::FitDeviceClass),
                ));
            }
            events
        }
        // podtopologyspread/plugin.go.
        Plugin::PodTopologySpread => vec![
            (
                on(AssignedPod, or(&[A::ADD, A::UPDATE_POD_LABEL, A::DELETE])),
                Some(Hint::SpreadAssignedPod),
            ),
            (
                on(
                    UnscheduledPod,
                    or(&[A::UPDATE_POD_TOLERATION, A::UPDATE_POD_LABEL]),
                ),
                Some(Hint::SpreadTargetPod),
            ),
            (
                on(
                    Node,
                    or(&[
                        A::ADD,
                        A::DELETE,
                        A::UPDATE_NODE_LABEL,
                        A::UPDATE_NODE_TAINT,
                    ]),
                ),
                Some(Hint::SpreadNode),
            ),
        ],
        // interpodaffinity/plugin.go.
        Plugin::InterPodAffinity => vec![
            (
                on(AssignedPod, or(&[A::ADD, A::UPDATE_POD_LABEL, A::DELETE])),
                Some(Hint::InterPodAffinityAssignedPod),
            ),
            (
                on(UnscheduledPod, A::UPDATE_POD_LABEL),
                Some(Hint::InterPodAffinityTargetPod),
            ),
            (
                on(Node, or(&[A::ADD, A::UPDATE_NODE_LABEL])),
                Some(Hint::InterPodAffinityNode),
            ),
        ],
        // dynamicresources/dynamicresources.go (DynamicResourceAllocation is GA).
        Plugin::DynamicResources => vec![
            (
                on(
                    Node,
                    or(&[A::ADD, A::UPDATE_NODE_LABEL, A::UPDATE_NODE_ALLOCATABLE]),
                ),
                None,
            ),
            (
                on(ResourceClaim, or(&[A::ADD, A::UPDATE])),
                Some(Hint::DraClaim),
            ),
            (
                on(Pod, A::UPDATE_POD_GENERATED_RESOURCE_CLAIM),
                Some(Hint::DraPod),
            ),
            (on(DeviceClass, or(&[A::ADD, A::UPDATE])), None),
            (on(ResourceSlice, or(&[A::ADD, A::UPDATE])), None),
        ],
        // defaultpreemption/default_preemption.go with SchedulerAsyncPreemption on.
        Plugin::DefaultPreemption => {
            vec![(on(Pod, A::DELETE), Some(Hint::PreemptionPodDeleted))]
        }
        // scheduler-plugins coscheduling.go: no hint functions.
        Plugin::Coscheduling => vec![
            (on(Pod, A::ADD), None),
            (on(PodGroup, or(&[A::ADD, A::UPDATE])), None),
        ],
        // The FGD simulator's Open-Gpu-Share has no EnqueueExtensions: the framework registers
        // every event for it (`allClusterEvents`, framework.go's `fillEventToPluginMap`).
        Plugin::OpenGpuShare => vec![(on(WildCard, A::ALL), None)],
        // No effect in schedsim, or no PreEnqueue/PreFilter/Filter/Reserve/Permit upstream.
        Plugin::RandomScore
        | Plugin::DotProductScore
        | Plugin::GpuClusteringScore
        | Plugin::GpuPackingScore
        | Plugin::BestFitScore
        | Plugin::FgdScore
        | Plugin::PrioritySort
        | Plugin::NodePorts
        | Plugin::VolumeRestrictions
        | Plugin::NodeVolumeLimits
        | Plugin::VolumeBinding
        | Plugin::VolumeZone
        | Plugin::NodeResourcesBalancedAllocation
        | Plugin::ImageLocality
        | Plugin::DefaultBinder
        | Plugin::NodeDeclaredFeatures => Vec::new(),
    };
    (events.into_iter())
        .map(|(event, hint)| Registration {
            plugin,
            event,
            hint,
        })
        .collect()
}

/// The plugins a profile enables at any extension point, in [`Plugin`] order (upstream
/// builds them in map order; the hint map's behaviour does not depend on it).
pub(super) fn enabled_plugins(profile: &Profile) -> Vec<Plugin> {
    let mut plugins: Vec<Plugin> = (ExtensionPoint::ALL.iter())
        .flat_map(|&point| profile.framework.at(point).iter().copied())
        .collect();
    plugins.sort();
    plugins.dedup();
    plugins
}

/// Every registration of the profile's enabled plugins.
pub(super) fn registrations(profile: &Profile, gates: &FeatureGates) -> Vec<Registration> {
    (enabled_plugins(profile).into_iter())
        .flat_map(|p| events_to_register(p, gates))
        .collect()
}

/// The profile's `QueueingHintMap`: each registered event with the plugins that registered
/// it, events in first-registration order.
pub fn registry(profile: &Profile, gates: &FeatureGates) -> HintRegistry {
    let mut entries: Vec<(ClusterEvent, Vec<String>)> = Vec::new();
    for r in registrations(profile, gates) {
        let name = r.plugin.name().to_string();
        match entries.iter_mut().find(|(e, _)| *e == r.event) {
            Some((_, plugins)) => plugins.push(name),
            None => entries.push((r.event, vec![name])),
        }
    }
    HintRegistry::new(entries)
}
