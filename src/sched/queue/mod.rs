//! kube-scheduler's scheduling queue over virtual time (`pkg/scheduler/backend/queue`, the
//! behaviour of 1.34+: QueueingHints on, `SchedulerPopFromBackoffQ` on, async preemption on).
//!
//! Time is never read from a clock: every operation that depends on it takes `now`, a
//! [`Time`] since the simulation start, so a discrete-event loop drives the queue with
//! [`PriorityQueue::next_timer`], [`PriorityQueue::flush`] and [`PriorityQueue::pop`].
//! The queue knows pods only by a [`PodId`] plus what ordering needs ([`QueuePod`]); plugins
//! reach it through [`QueueHooks`] (QueueingHints and PreEnqueue), so it depends on none.
//! Every collection is ordered (`BTreeMap`/`BTreeSet`): no hash order reaches any output.

pub mod active;
pub mod backoff;
pub mod events;
pub mod nominator;
pub mod priority_queue;
pub mod unschedulable;

use std::collections::BTreeSet;
use std::sync::Arc;

pub use active::QueueSort;
pub use events::{Action, ClusterEvent, HintRegistry, NoHooks, QueueHooks, QueueingHint, Resource};
pub use priority_queue::{Failure, PriorityQueue, QueueError, QueueName, Strategy};

/// Virtual time: milliseconds since the simulation start.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Time(pub u64);

impl Time {
    pub const fn from_secs(s: u64) -> Time {
        Time(s * 1000)
    }
    pub fn plus(self, ms: u64) -> Time {
        Time(self.0.saturating_add(ms))
    }
    /// `time.Truncate(backoffQOrderingWindowDuration)`: the start of the 1-s window.
    pub fn align_to_window(self) -> Time {
        Time(self.0 - self.0 % backoff::ORDERING_WINDOW_MS)
    }
}

/// The caller's identity for a pod (upstream keys by namespace/name and UID).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PodId(pub u32);

/// What the queue needs to know of a pod: its id, `spec.priority`, namespace/name (the last
/// tie-break of the order) and `status.nominatedNodeName` (the nominator's input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuePod {
    pub id: PodId,
    pub priority: i32,
    /// `namespace/name`, made once ([`namespaced_name`]): every insertion into activeQ or
    /// backoffQ keys the pod by it.
    pub namespaced_name: Arc<str>,
    pub nominated_node: Option<String>,
    /// `namespace/name` of the Coscheduling PodGroup its `scheduling.x-k8s.io/pod-group`
    /// label names: Coscheduling's QueueSort orders it by that group's time.
    pub pod_group: Option<String>,
}

/// A pod's `namespace/name`, the last tie-break of activeQ's order.
pub fn namespaced_name(namespace: &str, name: &str) -> Arc<str> {
    format!("{namespace}/{name}").into()
}

/// `framework.QueuedPodInfo`: the pod plus the queue's bookkeeping.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedPod {
    pub pod: QueuePod,
    /// Arrival sequence number, given at the first `add`; the tie-break after `timestamp`.
    pub seq: u64,
    /// Set at `add`, reset to `now` at every failed attempt (`AddUnschedulableIfNotPresent`).
    pub timestamp: Time,
    /// Set the first time the pod enters activeQ (`InitialAttemptTimestamp`: metrics, and
    /// Coscheduling's QueueSort).
    pub initial_attempt: Option<Time>,
    /// The time the QueueSort plugin compares it by, and the arrival sequence as its
    /// tie-break (0 under Coscheduling): fixed when it enters activeQ or backoffQ.
    pub sort_time: Time,
    pub sort_seq: u64,
    /// Pops so far.
    pub attempts: u32,
    /// Failures with rejector plugins (1.34+, PR #128748): the backoff exponent.
    pub unschedulable_count: u32,
    /// Consecutive failures without any plugin (errors); takes precedence when > 0.
    pub consecutive_errors: u32,
    pub unschedulable_plugins: BTreeSet<String>,
    pub pending_plugins: BTreeSet<String>,
    /// The PreEnqueue plugin that gates the pod (`GatingPlugin`); `Some` means `Gated()`.
    pub gating_plugin: Option<String>,
}

impl QueuedPod {
    pub fn gated(&self) -> bool {
        self.gating_plugin.is_some()
    }
}

/// The queue's knobs (KubeSchedulerConfiguration `podInitialBackoffSeconds`,
/// `podMaxBackoffSeconds`; `podMaxInUnschedulablePodsDuration` is a scheduler option).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QueueConfig {
    /// `DefaultPodInitialBackoffDuration`, 1 s.
    pub initial_backoff_ms: u64,
    /// `DefaultPodMaxBackoffDuration`, 10 s; 0 disables backoff (newest master).
    pub max_backoff_ms: u64,
    /// `DefaultPodMaxInUnschedulablePodsDuration`, 5 min.
    pub max_in_unschedulable_ms: u64,
    /// Phase of the 30-s `flushUnschedulablePodsLeftover` ticker: ticks at `phase + 30 s·k`
    /// (upstream's `wait.Until` starts when the scheduler starts, unaligned).
    pub leftover_flush_phase_ms: u64,
    /// The profiles' common QueueSort plugin.
    pub queue_sort: QueueSort,
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            initial_backoff_ms: 1_000,
            max_backoff_ms: 10_000,
            max_in_unschedulable_ms: 300_000,
            leftover_flush_phase_ms: 0,
            queue_sort: QueueSort::PrioritySort,
        }
    }
}

/// The leftover flush period (`wait.Until(..., 30*time.Second, ...)` in `Run`).
pub const LEFTOVER_FLUSH_PERIOD_MS: u64 = 30_000;
