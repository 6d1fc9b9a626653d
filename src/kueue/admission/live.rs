//! Kueue over time, for `schedsim replay`: a workload joins its ClusterQueue's heap when it
//! arrives, admission cycles run whenever something changed, a finished or deleted workload
//! releases its quota, and the requeue of a cohort's inadmissible workloads that a release
//! asks for (`QueueAssociatedInadmissibleWorkloadsAfter`, `pkg/controller/core/
//! workload_controller.go`) waits for the batch period (`pkg/cache/queue/
//! inadmissible_workloads.go`: `requeueBatchPeriod`, 1 s; requests for one cohort tree
//! coalesce). The cycles are [`super`]'s, so admission decides exactly as in a snapshot. A
//! finished workload's place is taken by a later arrival: memory follows the workloads in
//! flight, not the trace.
//!
//! `waitForPodsReady` runs over time ([`super::pods_ready`], the manager Configuration's
//! settings): the replay says when an admitted workload's pods are ready, the timeouts evict
//! it, its backoff holds it back, and `blockAdmission` makes a cycle wait
//! ([`super::cycle`]).
//!
//! Not simulated over time: admission checks, and Kueue's cycle pacing (a cycle takes no
//! time).

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use super::pods_ready::{Due, PodsReady, Verdict};
use super::{Objects, State, Victim, Waiting, Workload};
use crate::features::FeatureGates;
use crate::kueue::assigner::Assignment;
use crate::kueue::config::RequeuingTimestamp;
use crate::sched::plugins::inter_pod_affinity::NamespaceLabels;

/// `requeueBatchPeriod`, in milliseconds.
pub const REQUEUE_BATCH_MS: u64 = 1_000;

/// What admission changed.
#[derive(Debug, Clone)]
pub enum Change {
    /// A workload was admitted: its flavors per pod set, in its ClusterQueue.
    Admitted {
        workload: usize,
        assignment: Assignment,
        cluster_queue: Option<String>,
    },
    /// A workload lost its quota to a preemption, or to the drain of its stopped queue
    /// (`preempted` false); its pods are deleted. `requeued`: it waits in its queue again;
    /// else it ended (a plain pod's workload, whose pod Kueue deletes).
    Evicted {
        workload: usize,
        message: String,
        requeued: bool,
        preempted: bool,
    },
    /// A workload admitted before the start (a Workload object) was preempted, or drained.
    EvictedAdmitted {
        key: String,
        message: String,
        preempted: bool,
    },
    /// The PodsReady timeout evicted a workload (its pods are deleted). `requeued`: it comes
    /// back after its backoff; else it ended (a plain pod's workload).
    PodsReadyTimeout { workload: usize, requeued: bool },
    /// A workload past `backoffLimitCount` was deactivated: its pods are deleted and it is
    /// never admitted again.
    Deactivated { workload: usize },
}

/// A replay's Kueue.
pub struct Kueue<'a> {
    st: State<'a>,
    /// Places of finished workloads, for later arrivals.
    free: Vec<usize>,
    next_order: u64,
    cycle: usize,
    /// Roots of the quota tree whose inadmissible workloads are requeued at the given time.
    requeue_at: BTreeMap<usize, u64>,
    /// `waitForPodsReady`, when the Configuration turns it on.
    pods_ready: Option<PodsReady>,
    /// What the workload controller did since the last cycles (PodsReady timeouts).
    pending: Vec<Change>,
    /// Timeline steps still to come that create or change a LocalQueue or create a
    /// ClusterQueue: until they are past, a workload whose queue is missing or stopped waits
    /// for it (else it is never queued).
    creations_left: BTreeSet<usize>,
}

impl<'a> Kueue<'a> {
    pub fn new(
        objects: &'a Objects,
        namespaces: &'a NamespaceLabels,
        gates: &'a FeatureGates,
    ) -> Self {
        let mut st = State::new(objects, Cow::Owned(Vec::new()), namespaces, gates, true);
        if let Some(live) = &mut st.live {
            live.tracking = objects.pods_ready.is_some();
            live.block_admission = objects
                .pods_ready
                .as_ref()
                .is_some_and(|p| p.block_admission);
        }
        Kueue {
            st,
            free: Vec::new(),
            next_order: 0,
            cycle: 0,
            requeue_at: BTreeMap::new(),
            pods_ready: objects.pods_ready.clone().map(PodsReady::new),
            pending: Vec::new(),
            creations_left: (objects.updates.iter())
                .filter(|u| {
                    !u.local_queues.is_empty()
                        || (u.cluster_queues.iter())
                            .any(|q| objects.cluster_queues.iter().all(|o| o.name != q.name))
                })
                .map(|u| u.step)
                .collect(),
        }
    }

    /// The time Kueue stamps on what happens at replay time `ms` (seconds, as the API server
    /// stores timestamps): the start is after every timestamp of the workloads admitted
    /// before it.
    pub fn seconds(&self, ms: u64) -> i64 {
        (self.st.objects.now).saturating_add((ms / 1000) as i64)
    }

    /// Queues a workload (its `created` already set). Returns its number, or why Kueue never
    /// admits it (the QuotaReserved condition's message: no LocalQueue, a stopped one, …).
    pub fn arrive(&mut self, workload: Workload) -> Result<usize, String> {
        let st = &mut self.st;
        let w = match self.free.pop() {
            Some(w) => {
                st.workloads.to_mut()[w] = workload;
                w
            }
            None => {
                st.workloads.to_mut().push(workload);
                st.holder_of.push(None);
                st.created.push(0);
                st.ordered.push(0);
                st.order.push(0);
                if let Some(live) = &mut st.live {
                    live.ready.push(false);
                }
                st.pod_sets_id.push(0);
                st.last.push(None);
                st.refused.push(None);
                st.workloads.len() - 1
            }
        };
        st.created[w] = st.workloads[w].created;
        st.ordered[w] = st.workloads[w].created;
        st.last[w] = None;
        st.refused[w] = None;
        st.holder_of[w] = None;
        st.number_pod_sets(w);
        let order = self.next_order;
        self.next_order += 1;
        if let Some(p) = &mut self.pods_ready {
            p.arrive(w);
        }
        match st.enqueue(w, order, true) {
            Some(_) => Ok(w),
            None if st.orphans.contains(&w) && !self.creations_left.is_empty() => Ok(w),
            None => {
                st.orphans.remove(&w);
                let message = st.out.decisions[w].message.to_string();
                self.free.push(w);
                Err(message)
            }
        }
    }

    /// Workload `w` finished or was deleted: its quota (if it held any) is released, which
    /// requeues its cohort's inadmissible workloads a batch period later, and its place is
    /// freed.
    pub fn gone(&mut self, w: usize) {
        let st = &mut self.st;
        st.finish(w, 0);
        st.orphans.remove(&w);
        let key = st.queue_key(w);
        for q in 0..st.heaps.len() {
            st.heaps[q].remove(&st.pod_sets_id, &key);
            st.parked[q].remove(&key);
            if st.sticky[q] == Some(key) {
                st.sticky[q] = None;
            }
        }
        st.released.requeue.retain(|(_, k)| k.3 != w);
        st.repeats
            .retain(|(by, victim), _| *by != w && *victim != Victim::Queued(w));
        if let Some(pass) = &mut st.blocked {
            pass.forget(w);
        }
        if let Some(p) = &mut self.pods_ready {
            p.gone(w);
        }
        self.free.push(w);
    }

    /// Whether Kueue waits for admitted workloads' pods to be ready (`waitForPodsReady`).
    pub fn tracks_pods_ready(&self) -> bool {
        self.pods_ready.is_some()
    }

    /// Workload `w`'s QuotaReserved condition message as it stands: why it waits (its last
    /// nomination's flavor assignment, or what evicted it).
    pub fn message(&self, w: usize) -> String {
        self.st.out.decisions[w].message.to_string()
    }

    /// Every nomination computed anew, nothing remembered: the reference for tests.
    #[cfg(test)]
    pub fn remember_nothing(&mut self) {
        self.st.remember = false;
    }

    /// Each queued workload's condition message (tests compare them).
    #[cfg(test)]
    pub fn messages(&self) -> Vec<String> {
        (self.st.out.decisions.iter())
            .map(|d| d.message.to_string())
            .collect()
    }

    /// The workload as queued.
    pub fn workload(&self, w: usize) -> &Workload {
        &self.st.workloads[w]
    }

    /// Admission cycles at replay time `now` until nothing changes. Returns the evictions,
    /// then the admissions, in Kueue's order.
    pub fn settle(&mut self, now: u64) -> Vec<Change> {
        let seconds = self.seconds(now);
        if let Some(live) = &mut self.st.live {
            live.now = seconds;
        }
        self.st.settle(&mut self.cycle, usize::MAX);
        if self.st.livelock.take().is_some() {
            // Said once (a warning); counting starts again.
            self.st.repeats.clear();
        }
        let mut changes = std::mem::take(&mut self.pending);
        let st = &mut self.st;
        for e in std::mem::take(&mut st.out.evictions) {
            changes.push(evicted(st, &mut self.pods_ready, e.victim, e.message, true));
        }
        for w in std::mem::take(&mut st.out.order) {
            let d = &st.out.decisions[w];
            let Some((_, assignment)) = &d.admitted else {
                continue;
            };
            if let Some(p) = &mut self.pods_ready {
                p.admitted(w, now);
            }
            changes.push(Change::Admitted {
                workload: w,
                assignment: assignment.clone(),
                cluster_queue: d.cluster_queue.clone(),
            });
        }
        if let Some(live) = &mut st.live {
            for root in std::mem::take(&mut live.requeue_roots) {
                self.requeue_at
                    .entry(root)
                    .or_insert(now.saturating_add(REQUEUE_BATCH_MS));
            }
        }
        changes
    }

    /// When the next requeue of inadmissible workloads is due (of a cohort tree that has
    /// some: nothing else could make one wait there before the requeue is due), or the next
    /// PodsReady timeout or end of a backoff.
    pub fn next_timer(&mut self) -> Option<u64> {
        let pods_ready = self.pods_ready.as_mut().and_then(PodsReady::next_timer);
        self.next_requeue().into_iter().chain(pods_ready).min()
    }

    fn next_requeue(&self) -> Option<u64> {
        let st = &self.st;
        let waiting = |root: usize| {
            (0..st.parked.len())
                .any(|q| !st.parked[q].is_empty() && st.tree.root_of(st.ids[q]) == root)
        };
        (self.requeue_at.iter())
            .filter(|(root, _)| waiting(**root))
            .map(|(_, at)| *at)
            .min()
    }

    /// Whether Kueue's timers can still change anything: not when the only ones left are
    /// those of workloads the PodsReady timeout evicts again and again with nothing else
    /// happening (they would go round for ever, as in Kueue).
    pub fn timers_may_change(&mut self) -> bool {
        self.next_requeue().is_some()
            || (self.pods_ready.as_mut())
                .is_some_and(|p| p.next_timer().is_some() && !p.only_spinning())
    }

    /// The workloads the PodsReady timeout evicts again and again (`namespace/name`, their
    /// requeue count).
    pub fn spinning(&self) -> Vec<(String, u32)> {
        let Some(p) = &self.pods_ready else {
            return Vec::new();
        };
        (p.spinning().into_iter())
            .map(|(w, count)| {
                let wl = &self.st.workloads[w];
                (format!("{}/{}", wl.namespace, wl.name), count)
            })
            .collect()
    }

    /// Something that may let pods start or quota free happened outside Kueue (a pod ended,
    /// the nodes changed): workloads that went round may do better now.
    pub fn note_progress(&mut self) {
        if let Some(p) = &mut self.pods_ready {
            p.note_progress();
        }
    }

    /// The job of admitted workload `w` says its pods are (not) all ready at `now` (ms).
    /// Returns whether a cycle waiting for PodsReady may go on.
    pub fn set_pods_ready(&mut self, w: usize, ready: bool, now: u64) -> bool {
        let Some(p) = &mut self.pods_ready else {
            return false;
        };
        let Some(live) = &mut self.st.live else {
            return false;
        };
        match p.set_ready(w, ready, now) {
            Some(true) => {
                live.ready[w] = true;
                live.not_ready -= 1;
                live.not_ready == 0 && self.st.blocked.is_some()
            }
            Some(false) => {
                live.ready[w] = false;
                live.not_ready += 1;
                false
            }
            None => false,
        }
    }

    /// The workload controller at `now`: PodsReady timeouts evict or deactivate, backoffs
    /// that are over requeue; with the cohorts' requeues due ([`Self::requeue_due`]).
    /// Returns whether anything changed.
    pub fn due(&mut self, now: u64) -> bool {
        let mut any = self.requeue_due(now);
        while let Some(due) = self.pods_ready.as_mut().and_then(|p| p.pop_due(now)) {
            any = true;
            match due {
                Due::Timeout(w) => self.time_out(w, now),
                Due::Requeue(w) => self.back_from_backoff(w),
            }
        }
        any
    }

    /// `reconcileNotReadyTimeout` past its deadline.
    fn time_out(&mut self, w: usize, now: u64) {
        let seconds = self.seconds(now);
        let Some(p) = &mut self.pods_ready else {
            return;
        };
        let (requeued, timestamp) = (!self.st.workloads[w].owned_by_pod, p.config.timestamp);
        match p.timed_out(w, now, requeued) {
            Verdict::Deactivate => {
                // `Evict` with reason Deactivated and the cause in the message.
                let message = "The workload is deactivated due to exceeding the maximum number of re-queuing retries";
                self.st
                    .release_for_pods_ready(w, "Deactivated", message.into());
                self.pending.push(Change::Deactivated { workload: w });
            }
            Verdict::Evict => {
                let wl = &self.st.workloads[w];
                let message = format!(
                    "Exceeded the PodsReady timeout {}/{}",
                    wl.namespace, wl.name
                );
                // The job reconciler clears the admission: QuotaReserved=False, Pending.
                self.st.release_for_pods_ready(w, "Pending", message);
                if timestamp == RequeuingTimestamp::Eviction {
                    self.st.ordered[w] = seconds;
                }
                self.pending.push(Change::PodsReadyTimeout {
                    workload: w,
                    requeued,
                });
            }
        }
    }

    /// The backoff is over: `Requeued` is true again and the workload joins its heap.
    fn back_from_backoff(&mut self, w: usize) {
        if let Some(p) = &mut self.pods_ready {
            p.requeued(w);
        }
        let st = &mut self.st;
        let q = (st.out.decisions[w].cluster_queue.as_deref()).and_then(|cq| st.queue_index(cq));
        if let Some(q) = q {
            // `PushOrUpdate`: among the inadmissible workloads at once when its equivalence
            // class is set aside.
            let key = st.queue_key(w);
            st.push(q, key);
            st.out.decisions[w].waiting = match st.parked[q].contains(&key) {
                true => Waiting::Inadmissible,
                false => Waiting::Heap,
            };
        }
    }

    /// Requeues the inadmissible workloads of the cohort trees whose batch period is over
    /// (`queueInadmissibleWorkloads`). Returns whether any came back.
    pub fn requeue_due(&mut self, now: u64) -> bool {
        let due: Vec<usize> = (self.requeue_at.iter())
            .filter(|(_, at)| **at <= now)
            .map(|(root, _)| *root)
            .collect();
        let mut any = false;
        for root in due {
            self.requeue_at.remove(&root);
            let st = &mut self.st;
            for q in 0..st.heaps.len() {
                if st.tree.root_of(st.ids[q]) == root {
                    any |= st.requeue_inadmissible(q);
                }
            }
        }
        any
    }

    /// Timeline step `step` (at replay time `now`) changes Kueue's objects
    /// ([`State::update_queues`]): the changed queues' cohort trees' inadmissible workloads
    /// are requeued a batch period later, as after a release; what a stopped queue drains is
    /// evicted; workloads waiting for a queue created or released join it. Returns whether
    /// the step changed any.
    pub fn update(&mut self, step: usize, now: u64) -> bool {
        let objects = self.st.objects;
        let mut any = false;
        for update in objects.updates.iter().filter(|u| u.step == step) {
            any = true;
            self.note_progress();
            // Requeues due, by a queue of their tree: the tree may be numbered anew.
            let due: Vec<(usize, u64)> = (std::mem::take(&mut self.requeue_at).into_iter())
                .flat_map(|(root, at)| {
                    self.st
                        .queues_of_roots([root])
                        .into_iter()
                        .map(move |q| (q, at))
                })
                .collect();
            let drained_before = self.st.out.drained.len();
            let changed = self.st.update_queues(update);
            for d in self.st.out.drained.split_off(drained_before) {
                let change = evicted(&self.st, &mut self.pods_ready, d.victim, d.message, false);
                self.pending.push(change);
            }
            for (q, at) in due {
                for root in self.st.roots_of_queues(&[q]) {
                    let e = self.requeue_at.entry(root).or_insert(at);
                    *e = (*e).min(at);
                }
            }
            for root in changed {
                self.requeue_at
                    .entry(root)
                    .or_insert(now.saturating_add(REQUEUE_BATCH_MS));
            }
            self.st.adopt_orphans(|_| true);
        }
        self.creations_left.remove(&step);
        any
    }

    /// What admission noticed since the last call (inactive queues, a livelock, …).
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.st.out.warnings)
    }
}

/// A workload Kueue evicted (a preemption, a drain), as a change for the replay: its pods are
/// deleted; a queued job waits in its queue again, a plain pod's workload ends.
fn evicted(
    st: &State,
    pods_ready: &mut Option<PodsReady>,
    victim: Victim,
    message: String,
    preempted: bool,
) -> Change {
    match victim {
        Victim::Queued(w) => {
            if let Some(p) = pods_ready {
                p.unadmitted(w);
            }
            Change::Evicted {
                workload: w,
                message,
                requeued: !st.workloads[w].owned_by_pod,
                preempted,
            }
        }
        Victim::Admitted(a) => {
            let a = &st.objects.admitted[a];
            Change::EvictedAdmitted {
                key: format!("{}/{}", a.namespace, a.name),
                message,
                preempted,
            }
        }
    }
}
