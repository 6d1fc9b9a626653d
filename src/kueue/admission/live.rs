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
//! Not simulated over time: `waitForPodsReady` (its eviction and requeue backoff), admission
//! checks, and Kueue's cycle pacing (a cycle takes no time).

use std::borrow::Cow;
use std::collections::BTreeMap;

use super::{Objects, State, Victim, Workload};
use crate::features::FeatureGates;
use crate::kueue::assigner::Assignment;
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
    /// A workload lost its quota to a preemption (its pods are deleted). `requeued`: it waits
    /// in its queue again; else it ended (a plain pod's workload, whose pod Kueue deletes).
    Evicted {
        workload: usize,
        message: String,
        requeued: bool,
    },
    /// A workload admitted before the start (a Workload object) was preempted.
    EvictedAdmitted { key: String, message: String },
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
}

impl<'a> Kueue<'a> {
    pub fn new(
        objects: &'a Objects,
        namespaces: &'a NamespaceLabels,
        gates: &'a FeatureGates,
    ) -> Self {
        Kueue {
            st: State::new(objects, Cow::Owned(Vec::new()), namespaces, gates, true),
            free: Vec::new(),
            next_order: 0,
            cycle: 0,
            requeue_at: BTreeMap::new(),
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
                st.order.push(0);
                st.pod_sets_id.push(0);
                st.last.push(None);
                st.refused.push(None);
                st.workloads.len() - 1
            }
        };
        st.created[w] = st.workloads[w].created;
        st.last[w] = None;
        st.refused[w] = None;
        st.holder_of[w] = None;
        st.number_pod_sets(w);
        let order = self.next_order;
        self.next_order += 1;
        match st.enqueue(w, order, true) {
            Some(_) => Ok(w),
            None => {
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
        let key = st.queue_key(w);
        for q in 0..st.heaps.len() {
            st.heaps[q].remove(&key);
            st.parked[q].remove(&key);
            if st.sticky[q] == Some(key) {
                st.sticky[q] = None;
            }
        }
        st.released.requeue.retain(|(_, k)| k.3 != w);
        st.repeats
            .retain(|(by, victim), _| *by != w && *victim != Victim::Queued(w));
        self.free.push(w);
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
        let mut changes = Vec::new();
        let st = &mut self.st;
        for e in std::mem::take(&mut st.out.evictions) {
            changes.push(match e.victim {
                Victim::Queued(w) => Change::Evicted {
                    workload: w,
                    message: e.message,
                    requeued: !st.workloads[w].owned_by_pod,
                },
                Victim::Admitted(a) => {
                    let a = &st.objects.admitted[a];
                    Change::EvictedAdmitted {
                        key: format!("{}/{}", a.namespace, a.name),
                        message: e.message,
                    }
                }
            });
        }
        for w in std::mem::take(&mut st.out.order) {
            let d = &st.out.decisions[w];
            let Some((_, assignment)) = &d.admitted else {
                continue;
            };
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
    /// some: nothing else could make one wait there before the requeue is due).
    pub fn next_timer(&self) -> Option<u64> {
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

    /// Timeline step `step` (at replay time `now`) replaces ClusterQueues and Cohorts: their
    /// cohort trees' inadmissible workloads are requeued a batch period later, as after a
    /// release. Returns whether the step changed any.
    pub fn update(&mut self, step: usize, now: u64) -> bool {
        let objects = self.st.objects;
        let mut any = false;
        for update in objects.updates.iter().filter(|u| u.step == step) {
            any = true;
            for root in self.st.update_queues(update) {
                self.requeue_at
                    .entry(root)
                    .or_insert(now.saturating_add(REQUEUE_BATCH_MS));
            }
        }
        any
    }

    /// What admission noticed since the last call (inactive queues, a livelock, …).
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.st.out.warnings)
    }
}
