//! The QueueingHints of the plugins that read only the node and the pod's own spec:
//! NodeAffinity (`nodeaffinity/node_affinity.go`), NodeUnschedulable
//! (`nodeunschedulable/node_unschedulable.go`) and TaintToleration
//! (`tainttoleration/taint_toleration.go`), each through its filter's own matching.

use k8s_openapi::api::core::v1::{NodeAffinity, Taint};

use super::{HintResult, queue_if};
use crate::features::FeatureGates;
use crate::model::{Node, Pod};
use crate::sched::plugins::node_affinity::{required_match, terms_match};
use crate::sched::plugins::node_unschedulable::TAINT_NODE_UNSCHEDULABLE;
use crate::sched::plugins::taint_toleration::{find_untolerated, tolerations_tolerate_taint};
use crate::sched::queue::QueueingHint;

/// NodeAffinity's `isSchedulableAfterNodeChange`: the node must pass the scheduler-enforced
/// `addedAffinity` and the pod's required affinity and selector; an update counts only if the
/// node did not match before. A term that cannot be parsed is an error (Queue).
pub(super) fn node_affinity(
    pod: &Pod,
    added: Option<&NodeAffinity>,
    old: Option<&Node>,
    new: Option<&Node>,
) -> HintResult {
    let new = new.ok_or("NodeAffinity registers no node delete")?;
    let enforced = added.and_then(|a| {
        a.required_during_scheduling_ignored_during_execution
            .as_ref()
    });
    if enforced.is_some_and(|s| !terms_match(&s.node_selector_terms, new)) {
        return Ok(QueueingHint::QueueSkip);
    }
    if !required_match(pod, new)? {
        return Ok(QueueingHint::QueueSkip);
    }
    match old {
        None => Ok(QueueingHint::Queue),
        Some(old) => queue_if(!required_match(pod, old)?),
    }
}

/// NodeUnschedulable's `isSchedulableAfterNodeChange`: a schedulable node added, or a node
/// turned schedulable.
pub(super) fn node_unschedulable(old: Option<&Node>, new: Option<&Node>) -> HintResult {
    let new = new.ok_or("NodeUnschedulable registers no node delete")?;
    queue_if(!new.unschedulable && old.is_none_or(|old| old.unschedulable))
}

/// NodeUnschedulable's `isSchedulableAfterPodTolerationChange` for the queued pod itself:
/// it now tolerates `node.kubernetes.io/unschedulable:NoSchedule`.
pub(super) fn tolerates_unschedulable(new: &Pod, gates: &FeatureGates) -> HintResult {
    let taint = Taint {
        key: TAINT_NODE_UNSCHEDULABLE.into(),
        effect: "NoSchedule".into(),
        ..Default::default()
    };
    queue_if(tolerations_tolerate_taint(&new.tolerations, &taint, gates))
}

/// TaintToleration's `isSchedulableAfterNodeChange`: a node with an untolerated
/// `NoSchedule`/`NoExecute` taint (an added node counts as having had one) now has none.
pub(super) fn taint_toleration(
    pod: &Pod,
    old: Option<&Node>,
    new: Option<&Node>,
    gates: &FeatureGates,
) -> HintResult {
    let new = new.ok_or("TaintToleration registers no node delete")?;
    let untolerated = |n: &Node| find_untolerated(&n.taints, &pod.tolerations, gates).is_some();
    queue_if(old.is_none_or(untolerated) && !untolerated(new))
}
