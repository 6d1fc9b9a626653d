//! Preemption over time, as kube-scheduler does it (1.33+, async preemption on): a preemptor's
//! cycle fails — Unschedulable, with the node its PostFilter chose as its nomination — and
//! its victims are deleted gracefully; the preemptor is retried when they are gone.
//!
//! - The nomination (`handleSchedulingFailure` in `pkg/scheduler/schedule_one.go`): the
//!   nominator records it (`AddNominatedPod`), the pod's `status.nominatedNodeName` follows
//!   (the queue's `Update`), and a nomination that moves away from a node is, to the pods of
//!   lower or equal priority, an assigned pod deleted from it (`updatePodInSchedulingQueue`,
//!   `deletePodFromSchedulingQueue`, `getLEPriorityPreCheck` in `eventhandlers.go`). The
//!   scheduler's Filter counts the nominated pods ([`crate::sched::cycle`]'s `nominated`).
//! - The victims (`Executor.prepareCandidateAsync`, `framework/preemption/executor.go`): pods
//!   of lower priority nominated to the node lose their nomination; each victim not already
//!   terminating gets the `DisruptionTarget` condition and is deleted with its
//!   `terminationGracePeriodSeconds`. Until then it keeps its node's resources (the scheduler
//!   cache sees it terminating); then it leaves its node, the queue hears `AssignedPod/Delete`,
//!   and its controller creates it again (a scenario's existing pod is gone for good).
//! - A pod bound leaves the nominator (`assume`) and loses its `nominatedNodeName` (the API
//!   server clears it at binding, kubernetes#132443).

use std::sync::Arc;

use super::{Engine, Timer, queue_pod};
use crate::model::Pod;
use crate::replay::metrics::pod_gpu_milli;
use crate::sched::cycle::{Nominating, PodOutcome};
use crate::sched::hints::Payload;
use crate::sched::queue::{Action, ClusterEvent, PodId, QueuedPod, Resource, Time};

/// What a failed cycle's preemption decided, by node name (a timeline step during the cycle
/// may renumber the nodes).
pub(super) struct Decided {
    nominating: Option<Option<String>>,
    victims: Vec<usize>,
}

impl Engine<'_, '_> {
    /// The scheduler's nominations follow the queue's nominator (`NominatedPodsForNode` reads
    /// the queue): copied before a cycle when they changed.
    pub(super) fn sync_nominations(&mut self) {
        let nominator = self.queue.nominator();
        if nominator.generation() == self.nominations_seen {
            return;
        }
        self.nominations_seen = nominator.generation();
        let all = (nominator.all()).map(|(node, pods)| {
            (
                node.to_string(),
                pods.iter().map(|p| p.0 as usize).collect(),
            )
        });
        self.s.set_nominations(all.collect::<Vec<_>>());
    }

    /// What the cycle's outcome does to the pod's nomination and which pods it preempts, with
    /// the node by name.
    pub(super) fn decided(&self, outcome: &PodOutcome) -> Decided {
        let name = |n: usize| self.s.cluster.nodes[n].name.clone();
        Decided {
            nominating: match outcome.nominating {
                Nominating::Noop => None,
                Nominating::Set(node) => Some(Some(name(node))),
                Nominating::Clear => Some(None),
            },
            victims: outcome.victims.clone(),
        }
    }

    /// After pod `id`'s failed cycle (it is back in the queue): its nomination as the cycle
    /// decided, then, if it preempted, the lower-priority pods nominated to its node lose
    /// their nomination and its victims start terminating.
    pub(super) fn after_failure(&mut self, id: u32, decided: Decided) {
        match &decided.nominating {
            // `AddNominatedPod` with `ModeNoop`: the pod's own nomination, put last.
            None => self.queue.add_nominated_pod(PodId(id), None),
            Some(node) => self.set_nomination(id, node.clone()),
        }
        let Some(Some(node)) = decided.nominating else {
            return;
        };
        let priority = self.live.get(&id).map_or(i32::MAX, |l| l.pod.priority);
        let lower: Vec<u32> = (self.queue.nominated_pods_for_node(&node).into_iter())
            .filter(|p| p.priority < priority)
            .map(|p| p.id.0)
            .collect();
        for pod in lower {
            self.set_nomination(pod, None);
        }
        for victim in decided.victims {
            self.delete_gracefully(victim, &node);
        }
    }

    /// `ModeOverride`: the nominator and the pod's `status.nominatedNodeName` say `node`
    /// (`None`: cleared). The status update reaches the queue; a nomination moved away from a
    /// node frees it for the pods of lower or equal priority.
    fn set_nomination(&mut self, id: u32, node: Option<String>) {
        let override_to = node.as_deref().unwrap_or("");
        self.queue.add_nominated_pod(PodId(id), Some(override_to));
        let Some(live) = self.live.get_mut(&id) else {
            return;
        };
        let old = Arc::clone(&live.pod);
        if old.nominated_node_name == node {
            return;
        }
        let new = Arc::new(Pod {
            nominated_node_name: node,
            ..(*old).clone()
        });
        self.replace_pod(id, Arc::clone(&new));
        if self.queue.location(PodId(id)).is_some() {
            // A status change: `PodSchedulingPropertiesChange` finds none of its kinds.
            let event = ClusterEvent::new(Resource::UnscheduledPod, Action::UPDATE_POD_OTHER);
            let payload = Payload::Pod {
                old: Some(Arc::clone(&old)),
                new: Some(Arc::clone(&new)),
            };
            let now = Time(self.now);
            (self.queue).update(now, queue_pod(id, &new), &[event], &payload, &self.hints);
        }
        if old.nominated_node_name.is_some() {
            self.nomination_gone(&old);
        }
    }

    /// Pod `id` is now `pod` (its status changed): the scheduler and the hints see it so.
    fn replace_pod(&mut self, id: u32, pod: Arc<Pod>) {
        if let Some(live) = self.live.get_mut(&id) {
            live.pod = Arc::clone(&pod);
        }
        self.s.admit(id as usize, Arc::clone(&pod));
        self.shared.borrow_mut().insert(id, pod);
    }

    /// A pod nominated to a node no longer is (its nomination moved, or it was deleted): the
    /// pods of lower or equal priority hear `AssignedPod/Delete` of it.
    pub(super) fn nomination_gone(&mut self, old: &Arc<Pod>) {
        let priority = old.priority;
        let lower_or_equal = move |p: &QueuedPod| p.pod.priority <= priority;
        self.queue.move_all_to_active_or_backoff(
            Time(self.now),
            ClusterEvent::new(Resource::AssignedPod, Action::DELETE),
            &Payload::Pod {
                old: Some(Arc::clone(old)),
                new: None,
            },
            Some(&lower_or_equal),
            &self.hints,
        );
    }

    /// Pod `id` is being bound: it leaves the nominator (`assume`) and its
    /// `nominatedNodeName` is cleared.
    pub(super) fn nomination_bound(&mut self, id: u32) {
        self.queue.delete_nominated_pod(PodId(id));
        let Some(live) = self.live.get(&id) else {
            return;
        };
        if live.pod.nominated_node_name.is_some() {
            let pod = Arc::new(Pod {
                nominated_node_name: None,
                ..(*live.pod).clone()
            });
            self.replace_pod(id, pod);
        }
    }

    /// A victim on `node` is deleted with its grace period (`PreemptPod`): unless it is
    /// terminating already, it gets the `DisruptionTarget` condition and a deletion
    /// timestamp, and leaves its node when the grace period is over.
    fn delete_gracefully(&mut self, victim: usize, node: &str) {
        // A victim waiting at Permit is rejected there instead (`prepareCandidate`:
        // `RejectWaitingPod`), and its gang's waiting members with it.
        if victim <= u32::MAX as usize && self.waiting_preempted(victim as u32) {
            return;
        }
        let Some(n) = self.s.cluster.index_of(node) else {
            return;
        };
        let workload = (victim <= u32::MAX as usize).then_some(victim as u32);
        let pod: Arc<Pod> = match workload {
            Some(id) => match self.live.get(&id).and_then(|l| l.assigned.clone()) {
                Some(assigned) => assigned,
                None => return,
            },
            None => Arc::new((*self.s.pod_handle(victim)).clone()),
        };
        if pod.is_terminating() {
            return;
        }
        let terminating = Arc::new(Pod {
            deletion_timestamp: Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                Default::default(),
            )),
            disrupted_by_preemption: true,
            ..(*pod).clone()
        });
        let mut generation = 0;
        if let Some(live) = workload.and_then(|id| self.live.get_mut(&id)) {
            // Its run is over: it is only terminating now.
            live.generation += 1;
            live.preemptions += 1;
            generation = live.generation;
            live.assigned = Some(Arc::clone(&terminating));
            if let Some(job) = self.jobs.get(&live.job) {
                self.metrics.preempted(job.key());
            }
        }
        self.s
            .start_terminating(n, victim, Arc::clone(&terminating));
        let at = self.now.saturating_add(pod.termination_grace_ms());
        self.cluster_event(
            ClusterEvent::new(Resource::AssignedPod, Action::UPDATE_POD_OTHER),
            Payload::Pod {
                old: Some(pod),
                new: Some(terminating),
            },
        );
        self.add_timer(at, Timer::Terminate(victim, generation));
    }

    /// A victim's grace period is over: it leaves its node and the queue hears it; a workload
    /// pod's controller creates it again and it is queued anew (a Volcano task waits for a
    /// session).
    pub(super) fn terminated(&mut self, victim: usize, generation: u32) {
        if victim > u32::MAX as usize {
            return self.existing_terminated(victim);
        }
        let id = victim as u32;
        let holds =
            (self.live.get(&id)).is_some_and(|l| l.generation == generation && l.bound.is_some());
        if !holds {
            return;
        }
        let Some(assigned) = self.unbind(id) else {
            return;
        };
        let Some(live) = self.live.get(&id) else {
            return;
        };
        let (gpus, pod) = (live.gpus, Arc::clone(&live.pod));
        self.metrics.pending_added(gpus);
        self.assigned_pod_deleted(Some(assigned));
        self.requeue_pod(id, &pod);
    }

    /// An existing pod's grace period is over: it is gone, unless something took it off its
    /// node meanwhile.
    fn existing_terminated(&mut self, victim: usize) {
        let pod = self.s.pod_handle(victim);
        let node = (pod.node_name.as_deref()).and_then(|n| self.s.cluster.index_of(n));
        let Some(node) = node.filter(|&n| self.s.bound_ids(n).contains(&victim)) else {
            return;
        };
        let pod = Arc::new((*pod).clone());
        self.s.unbind(node, victim);
        self.s.dra_pod_deleted(victim);
        self.metrics.unbound(node, pod_gpu_milli(&pod));
        self.existing_evicted += 1;
        self.assigned_pod_deleted(Some(pod));
    }
}
