//! `waitForPodsReady` over time, for a replay's Kueue ([`super::live`]): the workload
//! controller's side of it (kubernetes-sigs/kueue `pkg/controller/core/workload_controller.go`
//! `reconcileNotReadyTimeout`, `admittedNotReadyWorkload`, `triggerDeactivation`, and the
//! backoff branch of `Reconcile`; `pkg/workload/workload.go` `UpdateRequeueState`).
//!
//! - An admitted workload waits for PodsReady from its `Admitted` condition's time
//!   (`WaitForStart`), or, once ready, from the time it lost a pod (`WaitForRecovery`, when
//!   `recoveryTimeout` is set). Conditions are stored to the second, so deadlines count from
//!   the whole second. Each wait is one timer, not a scan.
//! - At the deadline, still not ready: if `backoffLimitCount` is set and `count + 1` exceeds
//!   it, the workload is deactivated (`RequeuingLimitExceeded`: evicted as `Deactivated`, never
//!   requeued); otherwise evicted (`PodsReadyTimeout`, `Exceeded the PodsReady timeout
//!   <namespace>/<name>`), `count` += 1 and `requeueAt` = now + `WaitTime(count)`, stored to
//!   the second. Until then it is held back (`backoffWaitingTimeExpired`: not even a cohort's
//!   requeue moves it); then its `Requeued` condition comes back and it joins its heap.
//! - The spin guard: a workload evicted twice with nothing else happening in between (no
//!   workload ready, no job gone, no arrival, quota change or pod end) will go round for ever,
//!   as in Kueue; its timers then no longer keep a replay going ([`PodsReady::only_spinning`]).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::{State, Waiting};
use crate::kueue::config::WaitForPodsReady;

/// The PodsReady condition of a workload, as far as its timeouts read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Condition {
    /// Not admitted (pending, in backoff, deactivated).
    #[default]
    Unadmitted,
    /// Admitted, its pods not all ready yet: evicted at `deadline` (ms).
    WaitForStart {
        deadline: u64,
    },
    Ready,
    /// It was ready and lost a pod: evicted at `deadline` unless recovery is not checked.
    WaitForRecovery {
        deadline: Option<u64>,
    },
}

/// One workload's state (kept per place of the replay's Kueue; compact).
#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    condition: Condition,
    /// `status.requeueState.count`.
    count: u32,
    /// `status.requeueState.requeueAt` (ms), while it waits for its backoff.
    requeue_at: Option<u64>,
    /// Bumped whenever a timer set for the slot no longer holds.
    generation: u32,
    /// [`PodsReady::progress`] at its last eviction by the timeout.
    evicted_at: Option<u64>,
    /// Its last two evictions had nothing else happen between them.
    spinning: bool,
}

/// What a due timer asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Due {
    /// Its PodsReady wait is over.
    Timeout(usize),
    /// Its backoff is over: it joins its heap.
    Requeue(usize),
}

/// What the timeout does to a workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Verdict {
    /// `RequeuingLimitExceeded`.
    Deactivate,
    /// Evicted (`PodsReadyTimeout`), held back until its backoff is over (unless it is not
    /// requeued: a pod's workload ends with its pod).
    Evict,
}

/// The workload controller's PodsReady timers and requeue state.
pub(super) struct PodsReady {
    pub config: WaitForPodsReady,
    slots: Vec<Slot>,
    /// (when, place, generation), earliest first.
    timers: BinaryHeap<Reverse<(u64, usize, u32)>>,
    /// Bumped whenever something happened that may let pods start or quota free.
    progress: u64,
}

/// The whole second a condition's time is stored at (ms).
fn second_of(ms: u64) -> u64 {
    ms - ms % 1000
}

/// A duration in ns as whole ms, rounded up (never shorter than written).
fn ms_of(ns: i64) -> u64 {
    (ns.max(0) as u64).div_ceil(1_000_000)
}

impl PodsReady {
    pub fn new(config: WaitForPodsReady) -> Self {
        PodsReady {
            config,
            slots: Vec::new(),
            timers: BinaryHeap::new(),
            progress: 0,
        }
    }

    /// Place `w` holds a new workload.
    pub fn arrive(&mut self, w: usize) {
        if self.slots.len() <= w {
            self.slots.resize(w + 1, Slot::default());
        }
        self.reset(w);
        self.progress += 1;
    }

    /// The workload at `w` is gone (finished, deleted).
    pub fn gone(&mut self, w: usize) {
        self.reset(w);
        self.progress += 1;
    }

    fn reset(&mut self, w: usize) {
        let generation = self.slots[w].generation.wrapping_add(1);
        self.slots[w] = Slot {
            generation,
            ..Slot::default()
        };
    }

    /// Something that may change what workloads can do happened (a quota change, a pod's end).
    pub fn note_progress(&mut self) {
        self.progress += 1;
    }

    /// Workload `w` was admitted at `now` (ms): it waits for its pods.
    pub fn admitted(&mut self, w: usize, now: u64) {
        let deadline = second_of(now).saturating_add(ms_of(self.config.timeout_ns));
        let slot = &mut self.slots[w];
        slot.condition = Condition::WaitForStart { deadline };
        slot.requeue_at = None;
        self.arm(w, deadline);
    }

    /// Workload `w` lost its quota otherwise (preempted): nothing is timed any more.
    pub fn unadmitted(&mut self, w: usize) {
        let slot = &mut self.slots[w];
        slot.condition = Condition::Unadmitted;
        slot.generation = slot.generation.wrapping_add(1);
    }

    /// The job of an admitted workload says its pods are (not) all ready at `now`. Returns
    /// the change of its condition: `Some(true)` ready, `Some(false)` no longer ready.
    pub fn set_ready(&mut self, w: usize, ready: bool, now: u64) -> Option<bool> {
        let slot = self.slots.get_mut(w)?;
        match (slot.condition, ready) {
            (Condition::Unadmitted, _) | (Condition::Ready, true) => None,
            (Condition::WaitForStart { .. } | Condition::WaitForRecovery { .. }, true) => {
                slot.condition = Condition::Ready;
                slot.generation = slot.generation.wrapping_add(1);
                self.progress += 1;
                Some(true)
            }
            (Condition::Ready, false) => {
                let deadline = (self.config.recovery_timeout_ns)
                    .map(|r| second_of(now).saturating_add(ms_of(r)));
                slot.condition = Condition::WaitForRecovery { deadline };
                if let Some(at) = deadline {
                    self.arm(w, at);
                }
                Some(false)
            }
            (_, false) => None,
        }
    }

    fn arm(&mut self, w: usize, at: u64) {
        let slot = &mut self.slots[w];
        slot.generation = slot.generation.wrapping_add(1);
        self.timers.push(Reverse((at, w, slot.generation)));
    }

    /// Whether a timer still holds.
    fn holds(&self, (_, w, generation): (u64, usize, u32)) -> bool {
        self.slots
            .get(w)
            .is_some_and(|s| s.generation == generation)
    }

    /// When the next timer is due.
    pub fn next_timer(&mut self) -> Option<u64> {
        while let Some(Reverse(t)) = self.timers.peek().copied() {
            if self.holds(t) {
                return Some(t.0);
            }
            self.timers.pop();
        }
        None
    }

    /// The next timer due at `now`, and what it asks for.
    pub fn pop_due(&mut self, now: u64) -> Option<Due> {
        while let Some(Reverse(t)) = self.timers.peek().copied() {
            if t.0 > now {
                return None;
            }
            self.timers.pop();
            if !self.holds(t) {
                continue;
            }
            let w = t.1;
            let slot = &self.slots[w];
            if slot.requeue_at.is_some() {
                return Some(Due::Requeue(w));
            }
            match slot.condition {
                Condition::WaitForStart { .. }
                | Condition::WaitForRecovery { deadline: Some(_) } => {
                    return Some(Due::Timeout(w));
                }
                _ => {}
            }
        }
        None
    }

    /// Workload `w`'s wait timed out at `now`: deactivated past the requeue limit
    /// (`triggerDeactivation`), else evicted with its requeue state updated. `requeued`: it
    /// is to come back (not a pod's workload).
    pub fn timed_out(&mut self, w: usize, now: u64, requeued: bool) -> Verdict {
        let progress = self.progress;
        let limit = self.config.backoff_limit_count;
        let slot = &mut self.slots[w];
        slot.condition = Condition::Unadmitted;
        if limit.is_some_and(|l| i64::from(slot.count) + 1 > i64::from(l)) {
            slot.generation = slot.generation.wrapping_add(1);
            return Verdict::Deactivate;
        }
        slot.count += 1;
        slot.spinning = slot.evicted_at == Some(progress);
        slot.evicted_at = Some(progress);
        if !requeued {
            slot.generation = slot.generation.wrapping_add(1);
            return Verdict::Evict;
        }
        let wait_ms = ms_of(self.config.backoff_ns(slot.count));
        let at = second_of(now.saturating_add(wait_ms));
        slot.requeue_at = Some(at);
        self.arm(w, at);
        Verdict::Evict
    }

    /// Workload `w`'s backoff is over (`RequeueAt` cleared, `Requeued` true again).
    pub fn requeued(&mut self, w: usize) {
        self.slots[w].requeue_at = None;
    }

    /// Whether workload `w` goes round without effect: its last two evictions had nothing
    /// happen between them, and nothing happened since.
    fn goes_round(&self, w: usize) -> bool {
        let slot = &self.slots[w];
        slot.spinning && slot.evicted_at == Some(self.progress)
    }

    /// Whether every timer left belongs to a workload that goes round without effect.
    pub fn only_spinning(&self) -> bool {
        (self.timers.iter())
            .filter(|Reverse(t)| self.holds(*t))
            .all(|Reverse((_, w, _))| self.goes_round(*w))
    }

    /// The places of the workloads that go round, with their requeue counts.
    pub fn spinning(&self) -> Vec<(usize, u32)> {
        let mut out: Vec<(usize, u32)> = (self.timers.iter())
            .filter(|Reverse(t)| self.holds(*t))
            .map(|Reverse((_, w, _))| (*w, self.slots[*w].count))
            .filter(|(w, _)| self.goes_round(*w))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

impl State<'_> {
    /// The workload controller evicts admitted workload `w` (`Evict`; the job reconciler
    /// then deletes its pods and clears its admission): its quota is released, its
    /// QuotaReserved condition says why, and its cohort's inadmissible workloads are requeued
    /// a batch period later (`QueueAssociatedInadmissibleWorkloadsAfter`), even while a cycle
    /// waits for PodsReady.
    pub(super) fn release_for_pods_ready(
        &mut self,
        w: usize,
        reason: &'static str,
        message: String,
    ) {
        if let Some(h) = self.holder_of[w] {
            let queue = self.holders[h].queue;
            self.release(h);
            let root = self.tree.root_of(self.ids[queue]);
            if let Some(live) = &mut self.live {
                live.requeue_roots.insert(root);
            }
        }
        self.out.order.retain(|&x| x != w);
        let d = &mut self.out.decisions[w];
        d.admitted = None;
        d.reason = reason;
        d.message = message.into();
        d.waiting = Waiting::Nowhere;
    }
}
