//! Kueue's SchedulingEquivalenceHashing (`pkg/features/kube_features.go`: beta, off in v0.17,
//! on by default since v0.18): in a BestEffortFIFO ClusterQueue, once a workload cannot be
//! admitted because its quota does not fit, the workloads equivalent to it are set aside
//! among the inadmissible workloads without being evaluated, until the inadmissible
//! workloads are requeued (kubernetes-sigs/kueue v0.20):
//!
//! - `pkg/cache/queue/cluster_queue.go` `requeueIfNotPresent`: a head that goes among the
//!   inadmissible workloads (not put back at once) with requeue reason `NoFit` or
//!   `PreemptionNoCandidates` records its hash (`hashToBulkMoveReason`) and
//!   `handleInadmissibleHash` moves every workload of its heap with the same hash there too
//!   (BestEffortFIFO only: a StrictFIFO queue puts its head back, and never records one).
//!   Other reasons (namespace mismatch, inactive queue, a failure after nomination, a
//!   pending preemption) record nothing. The sticky preemptor of a BestEffortFIFO queue is its
//!   head whenever it waits in the heap, so a bulk move never finds it there.
//! - `PushOrUpdate`: a workload added to the queue (created, or requeued after an eviction)
//!   whose hash is recorded goes straight among the inadmissible workloads (BestEffortFIFO).
//! - `inadmissible_workloads.go` `queueInadmissibleWorkloads`: requeueing a ClusterQueue's
//!   inadmissible workloads (quota released in its cohort tree, the queue changed) forgets
//!   its recorded hashes.
//!
//! **The hash** (`pkg/workload/workload.go` `computeSchedulingHash`) is of the effective
//! priority and, per pod set, its name, `utilpod.SpecShape` of its template (each container's
//! and init container's requests and ports, `nodeSelector`, `affinity`, `tolerations`,
//! `runtimeClassName`, `priority`, `topologySpreadConstraints`, `overhead`,
//! `resourceClaims`, pod-level requests), its effective count and requests, `minCount` and
//! `topologyRequest` (and, under the alpha ConcurrentAdmission, an annotation). schedsim's
//! class is the workload's priority and its pod sets as Kueue's flavor assignment reads
//! them ([`PodSet`]: name, count, per-pod requests, tolerations, node selector, affinity),
//! numbered by their structure ([`Shapes`]). Workloads Kueue hashes alike are in one class
//! (every field schedsim keeps is hashed). Workloads of one class may still hash apart in
//! Kueue when their templates differ only where admission never looks: how the requests are
//! split between containers, ports, runtime class, spread constraints, claims, `minCount`
//! (partial admission) and topology requests (neither simulated). Kueue evaluates those one
//! by one and finds the same flavors (its flavor assignment reads none of it), while
//! schedsim sets them aside with the first: the same admissions, with fewer workloads
//! carrying a message of their own.
//!
//! **Messages.** A workload set aside is not evaluated, so nothing writes its `QuotaReserved`
//! condition: one never evaluated has none (Kueue's `scheduler_afs_test.go`: "wl-b2 has no
//! Pending condition because SchedulingEquivalenceHashing bulk-moves it to inadmissible
//! before individual evaluation"), one evaluated before keeps its last message. Kueue's
//! workload controller writes `Bypassed scheduling evaluation because an equivalent workload
//! recently failed` (`workload_controller.go` `shouldCheckEquivalenceHash`) only with
//! UnadmittedWorkloadsObservability's granular reasons, and then only over a
//! `PendingEvaluation` (or legacy `Pending`, `Suspended`, `Deactivated`) condition; schedsim's
//! conditions follow Kueue's legacy reasons, where it never does. The report says which
//! workloads were set aside ([`Decision::bypassed`](super::Decision)).

use std::collections::{HashMap, HashSet};

use foldhash::fast::FixedState;
use std::hash::{Hash, Hasher};

use super::{QueueKey, State};
use crate::kueue::api::QueueingStrategy;
use crate::kueue::assigner::PodSet;

/// A scheduling equivalence class: the pod sets' number ([`Shapes`]) and the priority.
pub(super) type Class = (u32, i32);

/// Distinct pod-set shapes a replay numbers before it forgets those no workload in flight
/// uses (a trace's rows mostly differ in their requests).
const POD_SETS_KEPT: usize = 4_096;

/// Pod sets numbered by their structure: workloads with equal pod sets get the same number
/// (and the same flavors). A number is never given twice, so what is remembered by number
/// stays right after the shapes no one uses are forgotten.
#[derive(Debug)]
pub(super) struct Shapes {
    ids: HashMap<Vec<PodSet>, u32, FixedState>,
    next: u32,
    /// How many shapes a replay keeps before it forgets the unused ones.
    limit: usize,
}

impl Default for Shapes {
    fn default() -> Self {
        Shapes {
            ids: HashMap::default(),
            next: 0,
            limit: POD_SETS_KEPT,
        }
    }
}

impl Shapes {
    /// The number of `pod_sets`.
    pub(super) fn id(&mut self, pod_sets: &[PodSet]) -> u32 {
        if let Some(&id) = self.ids.get(pod_sets) {
            return id;
        }
        let id = self.next;
        // Four billion distinct shapes would take as many arrivals.
        self.next = self.next.wrapping_add(1);
        self.ids.insert(pod_sets.to_vec(), id);
        id
    }
}

/// Equal pod sets hash alike: the fields that tell pod sets apart, the affinity only by its
/// presence (rare, and deep).
impl Hash for PodSet {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name.hash(state);
        self.count.hash(state);
        self.requests.hash(state);
        self.node_selector.hash(state);
        self.tolerations.len().hash(state);
        for t in &self.tolerations {
            (&t.key, &t.operator, &t.value, &t.effect).hash(state);
            t.toleration_seconds.hash(state);
        }
        self.affinity.is_some().hash(state);
    }
}

/// Pod sets hold no floating-point numbers: equality is an equivalence.
impl Eq for PodSet {}

impl State<'_> {
    /// Numbers workload `w`'s pod sets. A replay first forgets, once it has numbered
    /// [`POD_SETS_KEPT`] shapes (or twice what it kept last time), the shapes that neither a
    /// workload in its places nor a recorded class names: memory follows the workloads in
    /// flight, never the trace.
    pub(super) fn number_pod_sets(&mut self, w: usize) {
        let shapes = &mut self.shapes;
        if self.live.is_some() && shapes.ids.len() >= shapes.limit {
            let in_use: HashSet<u32> = (self.pod_sets_id.iter().copied())
                .chain(self.set_aside.iter().flatten().map(|c| c.0))
                .collect();
            shapes.ids.retain(|_, id| in_use.contains(id));
            shapes.limit = POD_SETS_KEPT.max(2 * shapes.ids.len());
        }
        self.pod_sets_id[w] = shapes.id(&self.workloads[w].pod_sets);
    }

    /// Workload `w`'s scheduling equivalence class.
    pub(super) fn class(&self, w: usize) -> Class {
        (self.pod_sets_id[w], self.workloads[w].priority)
    }

    /// Whether ClusterQueue `q` sets equivalent workloads aside: the gate is on and it is
    /// BestEffortFIFO.
    fn hashing(&self, q: usize) -> bool {
        self.gates.scheduling_equivalence_hashing
            && self.cluster_queues[q].queueing_strategy == QueueingStrategy::BestEffortFIFO
    }

    /// `handleInadmissibleHash`: records workload `w`'s class in ClusterQueue `q` (its head,
    /// just set aside as it did not fit) and moves every workload of the heap in that class
    /// among the inadmissible workloads. Returns how many moved.
    pub(super) fn set_aside_equivalents(&mut self, q: usize, w: usize) -> usize {
        if !self.hashing(q) {
            return 0;
        }
        let class = self.class(w);
        self.set_aside_class(q, class)
    }

    /// [`Self::set_aside_equivalents`] for a class.
    pub(super) fn set_aside_class(&mut self, q: usize, class: Class) -> usize {
        self.set_aside[q].insert(class);
        let moved = self.heaps[q].take_class(&self.pod_sets_id, class);
        for key in &moved {
            self.park_unevaluated(q, *key);
        }
        moved.len()
    }

    /// `PushOrUpdate` of a workload new to ClusterQueue `q`'s heap: among the inadmissible
    /// workloads at once if its class is set aside, else in the heap.
    pub(super) fn push(&mut self, q: usize, key: QueueKey) {
        if self.hashing(q) && self.set_aside[q].contains(&self.class(key.3)) {
            self.park_unevaluated(q, key);
        } else {
            self.heaps[q].insert(&self.pod_sets_id, key);
        }
    }

    fn park_unevaluated(&mut self, q: usize, key: QueueKey) {
        self.parked[q].insert(key);
        self.out.decisions[key.3].bypassed = true;
        self.bypassing[q] = true;
    }

    /// `queueInadmissibleWorkloads` for ClusterQueue `q`: its inadmissible workloads back in
    /// its heap, its recorded classes forgotten. Returns whether any came back.
    pub(super) fn requeue_inadmissible(&mut self, q: usize) -> bool {
        self.set_aside[q].clear();
        let parked = std::mem::take(&mut self.parked[q]);
        if std::mem::take(&mut self.bypassing[q]) {
            for key in &parked {
                self.out.decisions[key.3].bypassed = false;
            }
        }
        let any = !parked.is_empty();
        self.heaps[q].append(&self.pod_sets_id, parked);
        any
    }
}
