//! Cluster events, their matching rules and the QueueingHint interface
//! (`staging/src/k8s.io/kube-scheduler/framework/types.go`: `ClusterEvent`, `ActionType`,
//! `Match`; `pkg/scheduler/backend/queue/scheduling_queue.go`: `QueueingHintMap`).

use super::{PodId, QueuedPod};

/// `EventResource`. `Pod` in a registration matches `AssignedPod` and `UnscheduledPod`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Resource {
    Pod,
    AssignedPod,
    UnscheduledPod,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    CSINode,
    CSIDriver,
    CSIStorageCapacity,
    ResourceClaim,
    ResourceSlice,
    DeviceClass,
    /// scheduler-plugins' PodGroup, registered by Coscheduling under its GVK name
    /// `podgroups.v1alpha1.scheduling.x-k8s.io` (`coscheduling.go`, `EventsToRegister`).
    PodGroup,
    /// `*`.
    WildCard,
}

impl Resource {
    pub fn parse(s: &str) -> Option<Resource> {
        use Resource::*;
        Some(match s {
            "Pod" => Pod,
            "AssignedPod" => AssignedPod,
            "UnscheduledPod" => UnscheduledPod,
            "Node" => Node,
            "PersistentVolume" => PersistentVolume,
            "PersistentVolumeClaim" => PersistentVolumeClaim,
            "StorageClass" => StorageClass,
            "CSINode" => CSINode,
            "CSIDriver" => CSIDriver,
            "CSIStorageCapacity" => CSIStorageCapacity,
            "ResourceClaim" => ResourceClaim,
            "ResourceSlice" => ResourceSlice,
            "DeviceClass" => DeviceClass,
            "PodGroup" | "podgroups.v1alpha1.scheduling.x-k8s.io" => PodGroup,
            "*" => WildCard,
            _ => return None,
        })
    }
}

/// `ActionType`, a bit set. Only the relations between the bits matter (`&` and `<=` in
/// `Match`); the values follow upstream's declaration order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Action(pub u32);

impl Action {
    pub const ADD: Action = Action(1 << 0);
    pub const DELETE: Action = Action(1 << 1);
    pub const UPDATE_NODE_ALLOCATABLE: Action = Action(1 << 2);
    pub const UPDATE_NODE_LABEL: Action = Action(1 << 3);
    pub const UPDATE_NODE_TAINT: Action = Action(1 << 4);
    pub const UPDATE_NODE_CONDITION: Action = Action(1 << 5);
    pub const UPDATE_NODE_ANNOTATION: Action = Action(1 << 6);
    pub const UPDATE_POD_LABEL: Action = Action(1 << 7);
    pub const UPDATE_POD_SCALE_DOWN: Action = Action(1 << 8);
    pub const UPDATE_POD_TOLERATION: Action = Action(1 << 9);
    pub const UPDATE_POD_SCHEDULING_GATES_ELIMINATED: Action = Action(1 << 10);
    pub const UPDATE_POD_GENERATED_RESOURCE_CLAIM: Action = Action(1 << 11);
    /// `updatePodOther`: a pod update that is none of the specific ones.
    pub const UPDATE_POD_OTHER: Action = Action(1 << 12);
    pub const ALL: Action = Action((1 << 13) - 1);
    /// Every update bit.
    pub const UPDATE: Action = Action(Self::ALL.0 & !Self::ADD.0 & !Self::DELETE.0);

    /// One action name or several joined by `|` (`Add`, `UpdateNodeLabel|UpdateNodeTaint`).
    pub fn parse(s: &str) -> Option<Action> {
        let mut bits = 0;
        for part in s.split('|') {
            bits |= match part.trim() {
                "Add" => Self::ADD,
                "Delete" => Self::DELETE,
                "UpdateNodeAllocatable" => Self::UPDATE_NODE_ALLOCATABLE,
                "UpdateNodeLabel" => Self::UPDATE_NODE_LABEL,
                "UpdateNodeTaint" => Self::UPDATE_NODE_TAINT,
                "UpdateNodeCondition" => Self::UPDATE_NODE_CONDITION,
                "UpdateNodeAnnotation" => Self::UPDATE_NODE_ANNOTATION,
                "UpdatePodLabel" => Self::UPDATE_POD_LABEL,
                "UpdatePodScaleDown" => Self::UPDATE_POD_SCALE_DOWN,
                "UpdatePodToleration" => Self::UPDATE_POD_TOLERATION,
                "UpdatePodSchedulingGatesEliminated" => {
                    Self::UPDATE_POD_SCHEDULING_GATES_ELIMINATED
                }
                "UpdatePodGeneratedResourceClaim" => Self::UPDATE_POD_GENERATED_RESOURCE_CLAIM,
                "Update" => Self::UPDATE,
                "All" => Self::ALL,
                _ => return None,
            }
            .0;
        }
        Some(Action(bits))
    }
}

/// `ClusterEvent`. A wildcard event (`*`/All) may aim at one pod: upstream passes that pod as
/// `newObj` of `EventForceActivate`; here it is `target`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClusterEvent {
    pub resource: Resource,
    pub action: Action,
    pub target: Option<PodId>,
}

impl ClusterEvent {
    pub const fn new(resource: Resource, action: Action) -> ClusterEvent {
        ClusterEvent {
            resource,
            action,
            target: None,
        }
    }

    /// `EventUnschedulableTimeout`: the leftover flush's event.
    pub const UNSCHEDULABLE_TIMEOUT: ClusterEvent =
        ClusterEvent::new(Resource::WildCard, Action::ALL);

    /// `EventForceActivate` aimed at one pod (`Activate` of an in-flight pod).
    pub fn force_activate(pod: PodId) -> ClusterEvent {
        ClusterEvent {
            target: Some(pod),
            ..Self::UNSCHEDULABLE_TIMEOUT
        }
    }

    /// `EventUnscheduledPodUpdate` (`UnscheduledPod`/Update).
    pub const UNSCHEDULED_POD_UPDATE: ClusterEvent =
        ClusterEvent::new(Resource::UnscheduledPod, Action::UPDATE);

    /// `ClusterEventIsWildCard`.
    pub fn is_wildcard(&self) -> bool {
        self.resource == Resource::WildCard && self.action == Action::ALL
    }

    /// `ClusterEvent.Match`: does this registration match `incoming`? The incoming event must
    /// be the same or more specific; a wildcard registration matches everything, and an
    /// incoming wildcard matches only a registration whose resource is `*`.
    pub fn matches(&self, incoming: &ClusterEvent) -> bool {
        let resource_ok = self.resource == Resource::WildCard
            || self.resource == incoming.resource
            || (self.resource == Resource::Pod
                && matches!(
                    incoming.resource,
                    Resource::AssignedPod | Resource::UnscheduledPod
                ));
        self.is_wildcard()
            || (resource_ok
                && self.action.0 & incoming.action.0 != 0
                && incoming.action.0 <= self.action.0)
    }

    /// `Resource/Action[|Action]`, or `UnschedulableTimeout`.
    pub fn parse(s: &str) -> Option<ClusterEvent> {
        if s == "UnschedulableTimeout" {
            return Some(Self::UNSCHEDULABLE_TIMEOUT);
        }
        let (resource, action) = s.split_once('/')?;
        Some(ClusterEvent::new(
            Resource::parse(resource)?,
            Action::parse(action)?,
        ))
    }
}

/// `fwk.QueueingHint`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueingHint {
    Queue,
    QueueSkip,
}

/// Which plugins registered which events (`QueueingHintMap` of one profile), in registration
/// order. A plugin without a hint function is registered all the same: its hook answers
/// Queue (`defaultQueueingHintFn`).
#[derive(Debug, Clone, Default)]
pub struct HintRegistry {
    entries: Vec<(ClusterEvent, Vec<String>)>,
}

impl HintRegistry {
    pub fn new(entries: Vec<(ClusterEvent, Vec<String>)>) -> HintRegistry {
        HintRegistry { entries }
    }

    pub fn entries(&self) -> &[(ClusterEvent, Vec<String>)] {
        &self.entries
    }

    /// `isEventOfInterest`: a wildcard, or an event some registration matches.
    pub fn is_of_interest(&self, event: &ClusterEvent) -> bool {
        event.is_wildcard() || self.entries.iter().any(|(e, _)| e.matches(event))
    }

    /// `GatingPluginEvents` + `MatchAnyClusterEvent`: did `plugin` register an event that
    /// matches `event`?
    pub fn plugin_matches(&self, plugin: &str, event: &ClusterEvent) -> bool {
        self.entries
            .iter()
            .any(|(e, plugins)| plugins.iter().any(|p| p == plugin) && e.matches(event))
    }
}

/// The plugins as the queue sees them. `P` is the caller's event payload (upstream's
/// `oldObj`/`newObj`), kept with in-flight events and handed back to the hints.
pub trait QueueHooks<P> {
    /// The QueueingHint `plugin` registered for `registered` (upstream's
    /// `QueueingHintFunction`), asked about `event` on `pod`. An `Err` counts as Queue
    /// (`isPodWorthRequeuing`: "treat the event as Queue").
    fn hint(
        &self,
        plugin: &str,
        registered: &ClusterEvent,
        pod: &QueuedPod,
        event: &ClusterEvent,
        payload: &P,
    ) -> Result<QueueingHint, String>;

    /// `runPreEnqueuePlugins`: the plugin that gates `pod`, if any (run the previous gating
    /// plugin first, as upstream does, when `pod.gating_plugin` is set).
    fn pre_enqueue(&self, _pod: &QueuedPod) -> Option<String> {
        None
    }
}

/// Hooks with no plugins: every hint says Queue, nothing gates.
pub struct NoHooks;

impl<P> QueueHooks<P> for NoHooks {
    fn hint(
        &self,
        _: &str,
        _: &ClusterEvent,
        _: &QueuedPod,
        _: &ClusterEvent,
        _: &P,
    ) -> Result<QueueingHint, String> {
        Ok(QueueingHint::Queue)
    }
}
