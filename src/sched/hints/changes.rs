//! The update events a changed node or pod splits into: kubernetes
//! `pkg/scheduler/framework/events.go` (`NodeSchedulingPropertiesChange`,
//! `PodSchedulingPropertiesChange`), as far as schedsim's [`Node`] and [`Pod`] carry the
//! fields (node conditions and annotations, and pod annotations, are not modelled, so they
//! never change).

use crate::model::{Node, Pod};
use crate::sched::queue::{Action, ClusterEvent, Resource};

/// `NodeSchedulingPropertiesChange(new, old)`: one event per kind of change, in upstream's
/// order — `spec.unschedulable` turned off (as `UpdateNodeTaint`), allocatable, labels,
/// taints. Empty when nothing the scheduler reads changed.
pub fn node_update_events(old: &Node, new: &Node) -> Vec<ClusterEvent> {
    let changes = [
        // extractNodeSpecUnschedulableChange: only the change to schedulable counts.
        (
            old.unschedulable && !new.unschedulable,
            Action::UPDATE_NODE_TAINT,
        ),
        (
            old.allocatable != new.allocatable,
            Action::UPDATE_NODE_ALLOCATABLE,
        ),
        (old.labels != new.labels, Action::UPDATE_NODE_LABEL),
        (old.taints != new.taints, Action::UPDATE_NODE_TAINT),
    ];
    (changes.into_iter())
        .filter(|(changed, _)| *changed)
        .map(|(_, action)| ClusterEvent::new(Resource::Node, action))
        .collect()
}

/// `PodSchedulingPropertiesChange(new, old)`: `AssignedPod/…` for a bound pod (by the new
/// pod's `spec.nodeName`), `UnscheduledPod/…` otherwise; one event per kind of change in
/// upstream's order — labels, a request scaled down, scheduling gates all removed,
/// tolerations added, the generated ResourceClaims recorded — or the general `Update` when
/// none of them changed.
pub fn pod_update_events(old: &Pod, new: &Pod) -> Vec<ClusterEvent> {
    let resource = match new.node_name.as_deref().is_some_and(|n| !n.is_empty()) {
        true => Resource::AssignedPod,
        false => Resource::UnscheduledPod,
    };
    let changes = [
        (old.labels != new.labels, Action::UPDATE_POD_LABEL),
        (scaled_down(old, new), Action::UPDATE_POD_SCALE_DOWN),
        (
            !old.scheduling_gates.is_empty() && new.scheduling_gates.is_empty(),
            Action::UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
        ),
        // Tolerations can only be added (API validation), so a new length is a change.
        (
            old.tolerations.len() != new.tolerations.len(),
            Action::UPDATE_POD_TOLERATION,
        ),
        (
            old.resource_claim_statuses != new.resource_claim_statuses,
            Action::UPDATE_POD_GENERATED_RESOURCE_CLAIM,
        ),
    ];
    let events: Vec<ClusterEvent> = (changes.into_iter())
        .filter(|(changed, _)| *changed)
        .map(|(_, action)| ClusterEvent::new(resource, action))
        .collect();
    match events.is_empty() {
        true => vec![ClusterEvent::new(resource, Action::UPDATE)],
        false => events,
    }
}

/// `extractPodScaleDown`: some request of the old pod is gone or smaller in the new one.
fn scaled_down(old: &Pod, new: &Pod) -> bool {
    (old.requests.iter()).any(|(name, &was)| new.requests.get(name).is_none_or(|&now| was > now))
}
