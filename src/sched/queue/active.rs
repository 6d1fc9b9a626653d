//! activeQ, the in-flight pods and the events received while they are in flight
//! (`active_queue.go`).
//!
//! Order: the profile's QueueSort plugin [`QueueSort`]. Both compare priority first (higher
//! first) and then a time: PrioritySort (`queuesort/priority_sort.go`) the pod's `Timestamp`,
//! Coscheduling (scheduler-plugins `pkg/coscheduling/coscheduling.go`, `Less`) its PodGroup's
//! time. The time a pod is compared by is fixed when it enters its queue
//! ([`QueuedPod::sort_time`]): upstream's heap re-sifts a pod only when it is added or
//! updated, even when Coscheduling's comparator would now answer otherwise. Ties: PrioritySort
//! stops at the timestamp upstream; the arrival sequence breaks them here, so the order is
//! total and deterministic. Coscheduling breaks them by the pod's `namespace/name`.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;

use super::{ClusterEvent, PodId, QueuedPod, Time};

/// The QueueSort plugin ordering activeQ (and the pods of backoffQ whose backoff ends alike).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum QueueSort {
    /// `PrioritySort`: priority, then `Timestamp` (reset at every failed attempt).
    #[default]
    PrioritySort,
    /// scheduler-plugins' `Coscheduling.Less`: priority, then `GetCreationTimestamp` — for a
    /// member of an existing PodGroup the time the group last failed scheduling
    /// (`lastFailedSchedulePG`, set by PostFilter's rejection and Unreserve, cleared when
    /// Permit lets the group through) or else the group's creation time; for any other pod its
    /// `InitialAttemptTimestamp` — then `namespace/name` as one string.
    Coscheduling,
}

/// The activeQ key of a pod: priority, the time it is compared by, the arrival sequence (0
/// under Coscheduling, which has no such tie-break), and `namespace/name`.
pub type SortKey = (Reverse<i32>, Time, u64, Arc<str>);

pub fn sort_key(p: &QueuedPod) -> SortKey {
    (
        Reverse(p.pod.priority),
        p.sort_time,
        p.sort_seq,
        Arc::clone(&p.pod.namespaced_name),
    )
}

/// `Less` of the QueueSort plugin, with the tie-break.
pub fn less(a: &QueuedPod, b: &QueuedPod) -> bool {
    sort_key(a) < sort_key(b)
}

/// One entry of `inFlightEvents`: a pod's pop marker (a hole once the pod is done) or an event.
#[derive(Debug, Clone)]
enum Logged<P> {
    Popped(PodId),
    Done,
    Event(ClusterEvent, P),
}

/// activeQ plus `inFlightPods` / `inFlightEvents` and the scheduling-cycle counter.
#[derive(Debug, Clone)]
pub struct ActiveQueue<P> {
    heap: BTreeSet<(SortKey, PodId)>,
    /// Each in-flight pod and the absolute index of its pop marker in `log`.
    in_flight: BTreeMap<PodId, u64>,
    log: VecDeque<Logged<P>>,
    /// Absolute index of `log[0]`.
    log_start: u64,
    cycle: u64,
}

impl<P: Clone> Default for ActiveQueue<P> {
    fn default() -> Self {
        ActiveQueue {
            heap: BTreeSet::new(),
            in_flight: BTreeMap::new(),
            log: VecDeque::new(),
            log_start: 0,
            cycle: 0,
        }
    }
}

impl<P: Clone> ActiveQueue<P> {
    pub fn insert(&mut self, pod: &QueuedPod) {
        self.heap.insert((sort_key(pod), pod.pod.id));
    }

    pub fn remove(&mut self, pod: &QueuedPod) -> bool {
        self.heap.remove(&(sort_key(pod), pod.pod.id))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    pub fn first(&self) -> Option<PodId> {
        self.heap.first().map(|k| k.1)
    }

    /// Pods in pop order.
    pub fn ids(&self) -> impl Iterator<Item = PodId> + '_ {
        self.heap.iter().map(|k| k.1)
    }

    /// `unlockedMoveEntityToInFlight`: the cycle counter moves and the pod is in flight.
    pub fn start_flight(&mut self, id: PodId) {
        self.cycle += 1;
        let index = self.log_start + self.log.len() as u64;
        self.log.push_back(Logged::Popped(id));
        self.in_flight.insert(id, index);
    }

    pub fn scheduling_cycle(&self) -> u64 {
        self.cycle
    }

    pub fn is_in_flight(&self, id: PodId) -> bool {
        self.in_flight.contains_key(&id)
    }

    pub fn in_flight(&self) -> impl Iterator<Item = PodId> + '_ {
        self.in_flight.keys().copied()
    }

    /// `addEventIfAnyInFlight`.
    pub fn record_if_any_in_flight(&mut self, event: ClusterEvent, payload: &P) -> bool {
        if self.in_flight.is_empty() {
            return false;
        }
        self.log.push_back(Logged::Event(event, payload.clone()));
        true
    }

    /// `addEventsIfPodInFlight`.
    pub fn record_if_in_flight(&mut self, id: PodId, events: &[ClusterEvent], payload: &P) -> bool {
        if !self.in_flight.contains_key(&id) {
            return false;
        }
        for e in events {
            self.log.push_back(Logged::Event(*e, payload.clone()));
        }
        true
    }

    /// `clusterEventsForPod`: the events recorded after the pod's pop; `None` when it is not
    /// in flight.
    pub fn events_since_pop(&self, id: PodId) -> Option<Vec<(ClusterEvent, P)>> {
        let start = (*self.in_flight.get(&id)? - self.log_start) as usize;
        Some(
            self.log
                .iter()
                .skip(start + 1)
                .filter_map(|l| match l {
                    Logged::Event(e, p) => Some((*e, p.clone())),
                    _ => None,
                })
                .collect(),
        )
    }

    /// `done`: the pod leaves flight; events no remaining in-flight pod can see are dropped.
    pub fn done(&mut self, id: PodId) {
        let Some(index) = self.in_flight.remove(&id) else {
            return;
        };
        self.log[(index - self.log_start) as usize] = Logged::Done;
        while matches!(self.log.front(), Some(Logged::Done | Logged::Event(..))) {
            self.log.pop_front();
            self.log_start += 1;
        }
    }

    /// The in-flight log as upstream's test lists it: pods (by id) and events, in order.
    pub fn log(&self) -> Vec<Result<PodId, ClusterEvent>> {
        self.log
            .iter()
            .filter_map(|l| match l {
                Logged::Popped(id) => Some(Ok(*id)),
                Logged::Done => None,
                Logged::Event(e, _) => Some(Err(*e)),
            })
            .collect()
    }
}
