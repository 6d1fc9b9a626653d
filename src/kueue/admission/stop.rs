//! Stopped queues (`spec.stopPolicy: Hold` or `HoldAndDrain` on a ClusterQueue or LocalQueue),
//! as Kueue treats them. A stopped ClusterQueue is inactive (`pkg/cache/scheduler/
//! clusterqueue.go`: reason `Stopped`): the queue manager pops none of its workloads
//! (`pkg/cache/queue/manager.go` `heads`), and the scheduler's snapshot leaves it out
//! (`snapshot.go` `skipInactiveCQReason`) — its admitted workloads are no preemption
//! candidates, while its quota and usage stay in its cohort. A stopped LocalQueue is not in
//! the queue manager at all (`localqueue_controller.go`): its workloads are never queued.
//! Pending workloads get `QuotaReserved=False` with `LocalQueue <name> is inactive` or
//! `ClusterQueue <name> is inactive` (`workload_controller.go` `getQueueBlocker`; reason
//! `Inadmissible`, as schedsim's other conditions, which follow Kueue's legacy reasons).
//! Workloads already admitted keep running under `Hold`; under `HoldAndDrain` they are
//! evicted (`reconcileOnLocalQueueActiveState`, then `reconcileOnClusterQueueActiveState`):
//! `Evicted` with reason `LocalQueueStopped` / `ClusterQueueStopped` and message `The
//! LocalQueue is stopped` / `The ClusterQueue is stopped`, their quota released.
//!
//! A queue's stop policy may change in a timeline step (`admission/update`): a ClusterQueue
//! stopped has its pending workloads marked inactive and none popped, a LocalQueue stopped
//! takes its pending workloads out of the queue manager, and `HoldAndDrain` evicts what the
//! queue admitted (they wait again); `None` again, the queue goes on.

use std::collections::BTreeMap;

use super::{Decision, Drain, Objects, Victim, Workload};
use crate::kueue::api::{ClusterQueue, StopPolicy};

/// The stop policy of a LocalQueue (namespace, name) among the stopped ones.
pub(super) fn local_queue(
    stopped: &BTreeMap<(String, String), StopPolicy>,
    queue: &(String, String),
) -> StopPolicy {
    stopped.get(queue).copied().unwrap_or_default()
}

/// The stop policy of a ClusterQueue (none for an unknown one).
pub(super) fn cluster_queue(objects: &Objects, name: &str) -> StopPolicy {
    (objects.cluster_queues.iter())
        .find(|q| q.name == name)
        .map_or(StopPolicy::None, |q| q.stop_policy)
}

/// The condition message of a workload whose LocalQueue is stopped.
pub(super) fn local_queue_message(queue: &str) -> String {
    format!("LocalQueue {queue} is inactive")
}

/// The admitted workloads a `HoldAndDrain` queue evicts at the start: the LocalQueue's
/// policy decides first, as the workload controller reconciles it first.
pub(super) fn drains(objects: &Objects) -> Vec<Drain> {
    (objects.admitted.iter().enumerate())
        .filter_map(|(i, a)| {
            let queue = (a.namespace.clone(), a.queue_name.clone());
            if local_queue(&objects.stopped_local_queues, &queue) == StopPolicy::HoldAndDrain {
                Some(Drain {
                    victim: Victim::Admitted(i),
                    step: None,
                    reason: "LocalQueueStopped",
                    message: "The LocalQueue is stopped".into(),
                })
            } else if cluster_queue(objects, &a.cluster_queue) == StopPolicy::HoldAndDrain {
                Some(Drain {
                    victim: Victim::Admitted(i),
                    step: None,
                    reason: "ClusterQueueStopped",
                    message: "The ClusterQueue is stopped".into(),
                })
            } else {
                None
            }
        })
        .collect()
}

/// The queues as they are in the end (timeline steps stop some and create others).
pub(super) struct Queues<'q> {
    pub cluster_queues: &'q [ClusterQueue],
    pub stopped_local_queues: &'q BTreeMap<(String, String), StopPolicy>,
}

/// What the user should know about each stopped queue that holds workloads: how many it
/// keeps from admission, and what became of those it had admitted.
pub(super) fn warnings(
    objects: &Objects,
    queues: Queues,
    workloads: &[Workload],
    decisions: &[Decision],
    drained: &[Drain],
) -> Vec<String> {
    let mut out = Vec::new();
    let evicted = |i: usize| drained.iter().any(|d| d.victim == Victim::Admitted(i));
    for q in queues.cluster_queues {
        if q.stop_policy == StopPolicy::None {
            continue;
        }
        let pending = (decisions.iter())
            .filter(|d| d.cluster_queue.as_deref() == Some(&q.name) && d.admitted.is_none())
            .count();
        let (kept, gone) = (objects.admitted.iter().enumerate())
            .filter(|(_, a)| a.cluster_queue == q.name)
            .fold((0, 0), |(k, g), (i, _)| match evicted(i) {
                true => (k, g + 1),
                false => (k + 1, g),
            });
        if let Some(w) = held(pending, kept, gone) {
            out.push(format!(
                "ClusterQueue {:?} is stopped (stopPolicy: {}): {w}",
                q.name,
                q.stop_policy.as_str()
            ));
        }
    }
    for ((ns, name), policy) in queues.stopped_local_queues {
        let pending = (workloads.iter().zip(decisions))
            .filter(|(w, d)| &w.namespace == ns && &w.queue_name == name && d.admitted.is_none())
            .count();
        let mine: BTreeMap<usize, bool> = (objects.admitted.iter().enumerate())
            .filter(|(_, a)| &a.namespace == ns && &a.queue_name == name)
            .map(|(i, _)| (i, evicted(i)))
            .collect();
        let gone = mine.values().filter(|e| **e).count();
        if let Some(w) = held(pending, mine.len() - gone, gone) {
            out.push(format!(
                "LocalQueue {ns}/{name} is stopped (stopPolicy: {}): {w}",
                policy.as_str()
            ));
        }
    }
    out
}

/// `N workloads wait…; M admitted workloads keep running…; K were evicted…`, or nothing when
/// the queue holds none.
fn held(pending: usize, kept: usize, gone: usize) -> Option<String> {
    let n = |k: usize, what: &str| match k {
        1 => format!("1 {what}"),
        k => format!("{k} {what}s"),
    };
    let mut parts = Vec::new();
    if pending > 0 {
        parts.push(format!(
            "{} wait{} and will not be admitted while it is stopped",
            n(pending, "workload"),
            if pending == 1 { "s" } else { "" }
        ));
    }
    if kept > 0 {
        parts.push(format!(
            "{} admitted before keep{} running with {} quota",
            n(kept, "workload"),
            if kept == 1 { "s" } else { "" },
            if kept == 1 { "its" } else { "their" }
        ));
    }
    if gone > 0 {
        parts.push(format!(
            "{} admitted before {} evicted and {} pods deleted",
            n(gone, "workload"),
            if gone == 1 { "is" } else { "are" },
            if gone == 1 { "its" } else { "their" }
        ));
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stopped_queue_without_workloads_says_nothing() {
        assert_eq!(held(0, 0, 0), None);
        assert_eq!(
            held(1, 2, 0).as_deref(),
            Some(
                "1 workload waits and will not be admitted while it is stopped; 2 workloads admitted before keep running with their quota"
            )
        );
        assert_eq!(
            held(0, 0, 1).as_deref(),
            Some("1 workload admitted before is evicted and its pods deleted")
        );
    }
}
