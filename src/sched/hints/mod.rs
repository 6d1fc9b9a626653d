//! The QueueingHints and `EventsToRegister` of kube-scheduler's plugins: which cluster events
//! each enabled plugin of a profile registers ([`registry`]), and, for a pod one of them
//! rejected, whether such an event may make it schedulable ([`PluginHints`], the queue's
//! [`QueueHooks`](super::queue::QueueHooks)), plus the update events a node or pod change
//! splits into ([`node_update_events`], [`pod_update_events`]).
//!
//! Read against the newest copies of upstream (kubernetes master, 2026, QueueingHints locked
//! on): `pkg/scheduler/framework/plugins/*/` `EventsToRegister` and `isSchedulableAfter…`,
//! `pkg/scheduler/framework/events.go` (`NodeSchedulingPropertiesChange`,
//! `PodSchedulingPropertiesChange`), `pkg/scheduler/scheduler.go` (`buildQueueingHintMap`),
//! `pkg/scheduler/framework/runtime/framework.go` (`fillEnqueueExtensions`); scheduler-plugins'
//! `pkg/coscheduling/coscheduling.go`. Where the copies differ, the choices are:
//!
//! - **TargetPod.** Master registers the pending pod's own updates as `TargetPod/…`
//!   (SchedulingGates, NodeUnschedulable, InterPodAffinity, PodTopologySpread). The queue here
//!   sees a pending pod's own updates as `UnscheduledPod/…` (the events [`pod_update_events`]
//!   gives it) and no other unscheduled pod's, so those registrations are `UnscheduledPod/…`
//!   and their hint first checks that the updated pod is the queued one (Skip otherwise).
//! - **No added `Node/UpdateNodeTaint`.** Up to 1.36 `buildQueueingHintMap` registered
//!   `Node/UpdateNodeTaint` (hint Queue) for every plugin that registers `Node/Add` without it;
//!   master dropped that with the QueueingHints gate (PR #138708). Not added here.
//! - **Plugins that cannot reject a pod here register nothing**: NodePorts, the volume plugins
//!   and NodeDeclaredFeatures (no effect in schedsim), and the plugins upstream skips because
//!   they implement none of PreEnqueue, PreFilter, Filter, Reserve, Permit (PrioritySort,
//!   NodeResourcesBalancedAllocation, ImageLocality, DefaultBinder).
//! - **DRA.** The events carry no ResourceClaim, ResourceSlice or DeviceClass, so the hints
//!   that read one (DynamicResources' claim hint, NodeResourcesFit's DeviceClass hint with
//!   DRAExtendedResource) answer Queue, as upstream does on an unexpected object; the
//!   DynamicResources pod hint checks only that the updated pod is the queued one, and its
//!   PreEnqueue is left to the caller.
//! - **Identity.** Upstream compares UIDs; a schedsim pod may have none, so two pods are the
//!   same when their UIDs are equal, or, when either has none, their namespace and name.

mod changes;
mod fit;
mod hooks;
mod node;
mod pods;
mod register;

use std::sync::Arc;

pub use changes::{node_update_events, pod_update_events};
pub use hooks::PluginHints;
pub use register::{Hint, Registration, events_to_register, registry};

use crate::model::{Node, Pod};
use crate::sched::queue::QueueingHint;

/// What an event carried: upstream's `oldObj`/`newObj` (`old` is `None` for an add, `new` for
/// a delete). Events about other objects (ResourceClaims, DeviceClasses, PodGroups) and the
/// queue's own timers carry `None`.
#[derive(Debug, Clone, Default)]
pub enum Payload {
    #[default]
    None,
    Pod {
        old: Option<Arc<Pod>>,
        new: Option<Arc<Pod>>,
    },
    Node {
        old: Option<Arc<Node>>,
        new: Option<Arc<Node>>,
    },
}

/// A hint's answer; an `Err` counts as Queue (`isPodWorthRequeuing`).
pub type HintResult = Result<QueueingHint, String>;

impl Payload {
    /// `util.As[*v1.Pod]`: the old and new pod, an error when the event carried no pod.
    fn pods(&self) -> Result<(Option<&Pod>, Option<&Pod>), String> {
        match self {
            Payload::Pod { old, new } if old.is_some() || new.is_some() => {
                Ok((old.as_deref(), new.as_deref()))
            }
            _ => Err("the event carried no pod".into()),
        }
    }

    /// `util.As[*v1.Node]`: the old and new node, an error when the event carried no node.
    fn nodes(&self) -> Result<(Option<&Node>, Option<&Node>), String> {
        match self {
            Payload::Node { old, new } if old.is_some() || new.is_some() => {
                Ok((old.as_deref(), new.as_deref()))
            }
            _ => Err("the event carried no node".into()),
        }
    }
}

/// `Queue` when `cond`, else `QueueSkip`.
fn queue_if(cond: bool) -> HintResult {
    Ok(match cond {
        true => QueueingHint::Queue,
        false => QueueingHint::QueueSkip,
    })
}

/// Whether two pods are the same object (see the module doc: UID, else namespace/name).
fn same_pod(a: &Pod, b: &Pod) -> bool {
    if !a.uid.is_empty() && !b.uid.is_empty() {
        a.uid == b.uid
    } else {
        a.namespace == b.namespace && a.name == b.name
    }
}

/// `spec.nodeName` is set.
fn is_bound(p: &Pod) -> bool {
    p.node_name.as_deref().is_some_and(|n| !n.is_empty())
}

/// `status.nominatedNodeName` is set.
fn is_nominated(p: &Pod) -> bool {
    p.nominated_node_name
        .as_deref()
        .is_some_and(|n| !n.is_empty())
}

/// The hint of a `TargetPod` registration mapped onto `UnscheduledPod` (module doc): Skip
/// unless the updated pod is the queued one, then `then`.
fn for_target(
    target: &Pod,
    payload: &Payload,
    then: impl FnOnce(Option<&Pod>, &Pod) -> HintResult,
) -> HintResult {
    let (old, new) = payload.pods()?;
    let new = new.ok_or("a pod update without the new pod")?;
    match same_pod(new, target) {
        true => then(old, new),
        false => Ok(QueueingHint::QueueSkip),
    }
}
