//! One admission cycle (`schedule()` of `pkg/scheduler/scheduler.go`): the heads nominated
//! against a snapshot, then processed in the classical order (`processEntry`), then the ones
//! not admitted requeued (`requeueAndUpdate`).
//!
//! A cycle is a [`Pass`] that may wait: with `waitForPodsReady.blockAdmission`, an entry about
//! to be admitted while an admitted workload is not PodsReady blocks the scheduler
//! (`waitForPodsReadyIfNeeded`: `cache.WaitForPodsReady` waits on a condition variable until
//! every workload in the cache is PodsReady). Time passes in a replay meanwhile; once the
//! last one is ready (or leaves the cache, evicted or finished) the same pass goes on from
//! that entry, against its snapshot taken before the wait, as the blocked goroutine does.

use std::collections::{BTreeSet, VecDeque};

use super::{Entry, Nominated, QueueKey, Requeue, State, Victim, Waiting, reserve};
use crate::kueue::api::{PreemptionPolicy, QueueingStrategy};
use crate::kueue::assigner::{Assignment, Mode};
use crate::kueue::preemption::{Holder, insert_in_order};
use crate::kueue::quota::QuotaTree;

/// A cycle under way: what `schedule()` holds between nominating its heads and requeueing
/// those not admitted.
pub(super) struct Pass {
    cycle: usize,
    snapshot: QuotaTree,
    /// The holders per queue as the cycle started, when they are not the live lists less
    /// [`Self::added`] and plus [`Self::removed`]: the lists of the active queues, or a copy
    /// made when the pass waits (other events change the live lists meanwhile).
    at_start: Option<Vec<Vec<usize>>>,
    /// Holders the pass admitted, and holders it evicted (their places are not reused
    /// before the pass ends).
    added: Vec<usize>,
    removed: Vec<usize>,
    /// Entries not processed yet, in the iterator's order.
    entries: VecDeque<Entry>,
    requeue: Vec<(usize, QueueKey, Requeue)>,
    /// Holders preempted in this cycle.
    preempted: BTreeSet<usize>,
    admitted: usize,
    evicted: usize,
    /// The entry that waits for every admitted workload to be PodsReady.
    waiting: Option<Entry>,
    /// Holders that released their quota while the pass waited (evicted, finished): they
    /// are preempted no more. Their places are not reused before the pass ends.
    pub(super) gone: BTreeSet<usize>,
}

impl Pass {
    /// Workload `w` is gone (finished, deleted) while the pass waits: it is no entry any more.
    pub(super) fn forget(&mut self, w: usize) {
        if self.waiting.as_ref().is_some_and(|e| e.key.3 == w) {
            self.waiting = None;
        }
        self.entries.retain(|e| e.key.3 != w);
        self.requeue.retain(|(_, k, _)| k.3 != w);
    }

    /// Every workload of the pass, back to its queue's heap (as if the cycle had not
    /// popped it).
    pub(super) fn keys(self) -> impl Iterator<Item = (usize, QueueKey)> {
        (self.waiting.into_iter().chain(self.entries))
            .map(|e| (e.queue, e.key))
            .chain(self.requeue.into_iter().map(|(q, k, _)| (q, k)))
    }
}

impl State<'_> {
    /// One `schedule()`: nominate the heads, then process them in the classical order.
    /// Returns how many were admitted, parked and evicted; `None` when the pass waits for
    /// PodsReady (kept in `self.blocked`).
    pub(super) fn cycle(
        &mut self,
        cycle: usize,
        heads: Vec<(usize, QueueKey)>,
    ) -> Option<(usize, usize, usize)> {
        let pass = self.nominate(cycle, heads);
        self.process(pass)
    }

    /// The pass that waited goes on, if no admitted workload is waiting for its pods any
    /// more: its waiting entry is admitted (with the nomination it had), then the rest.
    /// Returns what it did when it finished, `None` while it (still or again) waits.
    pub(super) fn resume(&mut self) -> Option<(usize, usize, usize)> {
        if self.admission_blocked() {
            return None;
        }
        let mut pass = self.blocked.take()?;
        if let Some(e) = pass.waiting.take() {
            self.admit_entry(&mut pass, e);
        }
        self.process(pass)
    }

    /// `nominate`: the heads' flavors against the snapshot taken as the cycle starts.
    fn nominate(&mut self, cycle: usize, heads: Vec<(usize, QueueKey)>) -> Pass {
        let inactive = std::mem::take(&mut self.inactive);
        let mut snapshot = match self.spare_snapshot.take() {
            Some(mut spare) => {
                spare.copy_from(&self.tree);
                spare
            }
            None => self.tree.clone(),
        };
        // The holders per queue as the cycle starts. An inactive ClusterQueue is not in the
        // snapshot: its workloads are no candidates. Otherwise they are the live lists, copied
        // only before the cycle first changes them (most cycles of a congested cohort admit
        // and evict nothing).
        let mut at_start: Option<Vec<Vec<usize>>> = None;
        if inactive.iter().any(|&i| i) {
            let mut lists = self.by_queue.clone();
            for (q, holders) in lists.iter_mut().enumerate() {
                if inactive[q] {
                    holders.clear();
                }
            }
            at_start = Some(lists);
        }
        let live = std::mem::take(&mut self.by_queue);
        let by_queue = at_start.as_deref().unwrap_or(&live);
        let mut entries = std::mem::take(&mut self.spare.entries);
        let mut requeue = std::mem::take(&mut self.spare.requeue);
        for &(q, key) in &heads {
            let w = key.3;
            self.out.decisions[w].bypassed = false;
            let queue = &self.cluster_queues[q];
            if inactive[q] {
                self.out.decisions[w].message =
                    format!("ClusterQueue {} is inactive", queue.name).into();
                requeue.push((q, key, Requeue::Inactive));
            } else if !super::namespace_admitted(
                queue.namespace_selector.as_ref(),
                self.namespaces,
                &self.workloads[w],
            ) {
                self.out.decisions[w].message =
                    "workload namespace doesn't match ClusterQueue selector".into();
                requeue.push((q, key, Requeue::NamespaceMismatch));
            } else {
                let nominated = self.assign_now(&mut snapshot, by_queue, w, q);
                self.out.decisions[w].message = nominated.message();
                entries.push_back(Entry {
                    key,
                    queue: q,
                    nominated,
                });
            }
        }
        self.by_queue = live;
        self.inactive = inactive;
        let mut heads = heads;
        heads.clear();
        self.spare.heads = heads;
        // makeClassicalIterator: not borrowing first, then priority, then queue order.
        (entries.make_contiguous()).sort_by_key(|e| (e.nominated.assignment.borrowing, e.key));
        Pass {
            cycle,
            snapshot,
            at_start,
            added: Vec::new(),
            removed: Vec::new(),
            entries,
            requeue,
            preempted: BTreeSet::new(),
            admitted: 0,
            evicted: 0,
            waiting: None,
            gone: BTreeSet::new(),
        }
    }

    /// The pass's entries in order, until one must wait for PodsReady; then the requeue.
    fn process(&mut self, mut pass: Pass) -> Option<(usize, usize, usize)> {
        while let Some(e) = pass.entries.pop_front() {
            let Some(e) = self.process_entry(&mut pass, e) else {
                continue;
            };
            // `waitForPodsReadyIfNeeded` blocks: the entry keeps its nomination, the pass its
            // snapshot and lists as they are.
            let w = e.key.3;
            let d = &mut self.out.decisions[w];
            d.reason = "Waiting";
            d.message = "waiting for all admitted workloads to be in PodsReady condition".into();
            pass.at_start = Some(self.lists_at_start(&pass));
            pass.waiting = Some(e);
            self.blocked = Some(pass);
            return None;
        }
        Some(self.requeue_heads(pass))
    }

    /// `processEntry` for one entry; gives the entry back when it is to be admitted but
    /// admission waits for PodsReady.
    fn process_entry(&mut self, pass: &mut Pass, mut e: Entry) -> Option<Entry> {
        let (q, id, w) = (e.queue, self.ids[e.queue], e.key.3);
        // `fits` is read after the checks below (none of which changes the snapshot before
        // it): it is computed only for an entry that gets that far.
        let mut deferred = false;
        if (e.nominated.targets.iter()).any(|t| pass.preempted.contains(&t.holder)) {
            // updateAssignmentIfNeeded: the assignment again, with the victims of the
            // cycle's other preemptions gone.
            let others: Vec<usize> = pass.preempted.iter().copied().collect();
            let mut gone = self.lists_at_start(pass);
            let snapshot = &mut pass.snapshot;
            for &h in &others {
                self.holders[h].remove_usage(snapshot, &self.ids);
                gone[self.holders[h].queue].retain(|&x| x != h);
            }
            let nominated = Nominated::new(self.assign(snapshot, &gone, w, q, None));
            for &h in &others {
                self.holders[h].add_usage(snapshot, &self.ids);
            }
            self.out.decisions[w].message = nominated.message();
            deferred = nominated.assignment.mode() == Mode::Fit;
            e.nominated = nominated;
        }
        let snapshot = &mut pass.snapshot;
        let (assignment, targets) = (&e.nominated.assignment, &e.nominated.targets);
        let mode = assignment.mode();
        let d = &mut self.out.decisions[w];
        if mode == Mode::NoFit {
            pass.requeue.push((q, e.key, Requeue::NoFit));
            return None;
        }
        if mode == Mode::Preempt && targets.is_empty() {
            if self.cluster_queues[q].preemption.reclaim_within_cohort != PreemptionPolicy::Any {
                for (fr, v) in reserve(assignment, &self.cluster_queues[q], snapshot, id) {
                    snapshot.add_usage(id, &fr, v);
                }
            }
            pass.requeue.push((q, e.key, Requeue::NoCandidates));
            return None;
        }
        if deferred {
            d.message = "Workload has overlapping preemption targets with another workload, but will fit after these preemptions complete".into();
            for (fr, v) in assignment.usage() {
                snapshot.add_usage_named(id, fr, v);
            }
            pass.requeue.push((q, e.key, Requeue::PendingPreemption));
            return None;
        }
        if targets.iter().any(|t| pass.preempted.contains(&t.holder)) {
            d.message = "Workload has overlapping preemption targets with another workload".into();
            pass.requeue
                .push((q, e.key, Requeue::FailedAfterNomination));
            return None;
        }
        if !self.fits(snapshot, &pass.preempted, &e) {
            self.out.decisions[w].message =
                "Workload no longer fits after processing another workload".into();
            pass.requeue
                .push((q, e.key, Requeue::FailedAfterNomination));
            return None;
        }
        pass.preempted.extend(targets.iter().map(|t| t.holder));
        for (fr, v) in assignment.usage() {
            snapshot.add_usage_named(id, fr, v);
        }
        if mode == Mode::Preempt {
            let count = e.nominated.targets.len();
            for t in &e.nominated.targets {
                // A victim gone while the pass waited (evicted, finished) is not evicted again
                // (`IssuePreemptions` skips an evicted workload).
                if !pass.gone.contains(&t.holder) {
                    self.evict(pass.cycle, w, q, *t);
                    pass.removed.push(t.holder);
                }
            }
            pass.evicted += count;
            let d = &mut self.out.decisions[w];
            d.message
                .push_str(&format!(". Pending the preemption of {count} workload(s)"));
            pass.requeue.push((q, e.key, Requeue::PendingPreemption));
            if self.cluster_queues[q].queueing_strategy == QueueingStrategy::BestEffortFIFO {
                self.sticky[q] = Some(e.key);
            }
            return None;
        }
        if self.admission_blocked() {
            return Some(e);
        }
        self.admit_entry(pass, e);
        None
    }

    /// `admit`: the entry's workload reserves its quota.
    fn admit_entry(&mut self, pass: &mut Pass, e: Entry) {
        let (q, w, cycle) = (e.queue, e.key.3, pass.cycle);
        if self.sticky[q] == Some(e.key) {
            self.sticky[q] = None;
        }
        let workload = &self.workloads[w];
        self.hold(
            Victim::Queued(w),
            Holder {
                key: format!("{}/{}", workload.namespace, workload.name),
                key_order: 0,
                queue: q,
                priority: workload.priority,
                created: self.created[w],
                reserved: (self.live.as_ref())
                    .map_or(self.start.saturating_add(cycle as i64), |l| l.now),
                evicted: false,
                mask: 0,
                usage: e.nominated.assignment.usage_map(),
                fr_ids: Default::default(),
            },
        );
        let d = &mut self.out.decisions[w];
        d.reason = "QuotaReserved";
        d.message = format!(
            "Quota reserved in ClusterQueue {}",
            self.cluster_queues[q].name
        )
        .into();
        let assignment = Assignment::clone(&e.nominated.assignment);
        d.last_admitted = Some((cycle, assignment.clone()));
        d.admitted = Some((cycle, assignment));
        d.waiting = Waiting::Nowhere;
        self.out.order.push(w);
        pass.added.extend(self.holder_of[w]);
        pass.admitted += 1;
    }

    /// `requeueAndUpdate` of the heads not admitted: back to the heap, or parked among the
    /// inadmissible workloads. Returns how many were admitted, parked and evicted.
    fn requeue_heads(&mut self, mut pass: Pass) -> (usize, usize, usize) {
        let mut parked = 0;
        for (q, key, why) in pass.requeue.drain(..) {
            parked += usize::from(self.requeue_if_not_present(q, key, why));
        }
        self.spare.requeue = pass.requeue;
        self.spare.entries = pass.entries;
        self.spare_snapshot = Some(pass.snapshot);
        (pass.admitted, parked, pass.evicted)
    }

    /// `RequeueIfNotPresent` of a head not admitted: back in its heap at once (StrictFIFO
    /// but for a namespace mismatch; BestEffortFIFO after a failure after nomination or for
    /// a pending preemption), else among the inadmissible workloads, with the workloads
    /// equivalent to it when it did not fit (`SchedulingEquivalenceHashing`). Returns whether
    /// it was set aside.
    pub(super) fn requeue_if_not_present(&mut self, q: usize, key: QueueKey, why: Requeue) -> bool {
        let immediate = match self.cluster_queues[q].queueing_strategy {
            QueueingStrategy::StrictFIFO => why != Requeue::NamespaceMismatch,
            QueueingStrategy::BestEffortFIFO => matches!(
                why,
                Requeue::FailedAfterNomination | Requeue::PendingPreemption
            ),
        };
        if immediate {
            self.heaps[q].insert(&self.pod_sets_id, key);
            return false;
        }
        self.parked[q].insert(key);
        if matches!(why, Requeue::NoFit | Requeue::NoCandidates) {
            self.set_aside_equivalents(q, key.3);
        }
        true
    }

    /// `fits` (`ClusterQueueSnapshot.Fits`): the entry's usage available with the cycle's
    /// victims and its own targets gone.
    fn fits(&self, snapshot: &mut QuotaTree, preempted: &BTreeSet<usize>, e: &Entry) -> bool {
        let gone: BTreeSet<usize> = (preempted.iter().copied())
            .chain(e.nominated.targets.iter().map(|t| t.holder))
            .collect();
        for &h in &gone {
            self.holders[h].remove_usage(snapshot, &self.ids);
        }
        let id = self.ids[e.queue];
        let usage = e.nominated.assignment.usage();
        let ok = usage
            .into_iter()
            .all(|((f, r), v)| snapshot.available_of(id, snapshot.fr_id(f, r)) >= v);
        for &h in &gone {
            self.holders[h].add_usage(snapshot, &self.ids);
        }
        ok
    }

    /// The holders per queue as the pass started: most passes admit or evict a few
    /// workloads, and only rarely read the lists they started with.
    fn lists_at_start(&self, pass: &Pass) -> Vec<Vec<usize>> {
        if let Some(lists) = &pass.at_start {
            return lists.clone();
        }
        let mut lists = self.by_queue.clone();
        for &h in &pass.added {
            lists[self.holders[h].queue].retain(|&x| x != h);
        }
        for &h in &pass.removed {
            let holder = &self.holders[h];
            insert_in_order(&mut lists[holder.queue], &self.holders, h, holder);
        }
        lists
    }

    /// `PodsReadyForAllAdmittedWorkloads` is false under `blockAdmission`: some workload
    /// holding quota is not PodsReady.
    pub(super) fn admission_blocked(&self) -> bool {
        (self.live.as_ref()).is_some_and(|l| l.block_admission && l.not_ready > 0)
    }
}
