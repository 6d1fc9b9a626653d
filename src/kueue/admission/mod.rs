//! The admission cycle: per ClusterQueue a queue of pending workloads; each cycle takes every
//! queue's head, assigns flavors against a snapshot (asking preemption what it could free),
//! and admits, or preempts for, the entries in Kueue's order while the quota still fits. A
//! port of kubernetes-sigs/kueue `pkg/scheduler/scheduler.go` at v0.20 (main): `schedule`,
//! `nominate`, `processEntry`, `updateAssignmentIfNeeded` (with
//! RecomputeAssignmentUponPreemptionTargetsOverlap, on by default), `makeClassicalIterator`,
//! `reserveCapacityForUnreclaimablePreempt`, `quotaResourcesToReserve`, `fits`,
//! `markPreemptionOutcome`; `pkg/cache/queue/cluster_queue.go` (`RequeueIfNotPresent`:
//! StrictFIFO puts a head back, BestEffortFIFO parks it among the inadmissible workloads
//! unless it waits for a preemption or failed after nomination, and with it, when it did not
//! fit, the workloads equivalent to it: [`equivalence`]) and
//! `pkg/controller/core/workload_controller.go` (`getQueueBlocker`).
//!
//! Preemption is classical (see [`preemption`](super::preemption)). A victim's quota is
//! released before the next cycle (its pods terminate at once); it is requeued as the job
//! reconciler requeues a workload evicted by preemption, except one owned by a single pod
//! (SkipReassignmentForPodOwnedWorkloads, on by default), which ends with its pod. Released
//! quota requeues the parked workloads of the victims' cohorts, as Kueue does when a
//! workload's quota reservation goes away. Admitting a workload requeues nothing, so the cycles
//! stop at a fixed point: a cycle that admits, parks and evicts nothing would repeat forever.
//!
//! Not simulated: fair sharing, admission checks, partial admission, topology-aware
//! scheduling, the flavor scan position a later cycle resumes from.

mod cycle;
mod equivalence;
#[cfg(test)]
mod equivalence_tests;
mod heap;
pub mod live;
mod memo;
mod model;
use memo::{LastNomination, Remembered, RememberingOracle, Simulations};
mod pods_ready;
mod setup;
mod stop;
mod update;

pub use model::*;

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashSet, VecDeque};
use std::rc::Rc;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::api::{ClusterQueue, Cohort, FlavorResource, ResourceFlavor, StopPolicy};
use super::assigner::Refusals;
use super::assigner::{Assigner, Assignment, Mode};
use super::preemption::{self, FrBits, Holder, KeyOrder, Oracle, Preemption, Preemptor, Target};
use super::quota::{QueueId, QuotaTree};
use crate::features::FeatureGates;
use crate::sched::plugins::inter_pod_affinity::{NamespaceLabels, labels_of, selector_matches};

/// Why a head went back to its queue (`RequeueReason`, for `RequeueIfNotPresent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Requeue {
    NoFit,
    NoCandidates,
    NamespaceMismatch,
    Inactive,
    FailedAfterNomination,
    PendingPreemption,
}

/// The queue key of `baseCompareFunc`: higher priority first, then the queue-order time
/// (`GetQueueOrderTimestamp`: creation, or the last PodsReady-timeout eviction), then the
/// list's order (a replay's arrival order; Kueue's is the UID), then the workload.
type QueueKey = (std::cmp::Reverse<i32>, i64, u64, usize);

/// A head nominated in a cycle.
struct Entry {
    key: QueueKey,
    queue: usize,
    nominated: Rc<Nominated>,
}

/// What a nomination found: flavors, preemption targets, and the condition message they
/// give. Shared between the heads that look alike to the assigner in a cycle and after it,
/// while their quota tree is unchanged (most heads of a busy queue are answered this way).
struct Nominated {
    /// Shared with the condition messages ([`Message::of`]) that word it when read.
    assignment: Arc<Assignment>,
    targets: Vec<Target>,
}

impl Nominated {
    fn new((assignment, targets): (Assignment, Vec<Target>)) -> Rc<Self> {
        Rc::new(Nominated {
            assignment: Arc::new(assignment),
            targets,
        })
    }

    fn message(&self) -> Message {
        Message::of(&self.assignment)
    }
}

/// The buffers of a cycle: its heads, its entries and its requeued heads, empty between
/// cycles.
#[derive(Default)]
struct Buffers {
    heads: Vec<(usize, QueueKey)>,
    entries: VecDeque<Entry>,
    requeue: Vec<(usize, QueueKey, Requeue)>,
}

/// Runs Kueue's admission over `workloads` (in creation order) until nothing changes.
pub fn admit(
    objects: &Objects,
    workloads: &[Workload],
    namespaces: &NamespaceLabels,
    gates: &FeatureGates,
) -> Admission {
    admit_cycles(objects, workloads, namespaces, gates, usize::MAX)
}

/// [`admit`] over a timeline: admission settles at the start, then after each step's
/// finished workloads release their quota and its arrivals join their queues.
pub fn admit_over(
    objects: &Objects,
    workloads: &[Workload],
    timeline: &Timeline,
    namespaces: &NamespaceLabels,
    gates: &FeatureGates,
) -> Admission {
    run(objects, workloads, timeline, namespaces, gates, usize::MAX)
}

/// The state the cycles change: quota, who holds it, the queues.
struct State<'a> {
    objects: &'a Objects,
    /// The workloads (a replay's: the ones in flight, a finished one's place taken by a later
    /// arrival).
    workloads: Cow<'a, [Workload]>,
    gates: &'a FeatureGates,
    namespaces: &'a NamespaceLabels,
    /// ClusterQueue name → index.
    by_name: BTreeMap<String, usize>,
    /// The ClusterQueues and Cohorts as they are now (timeline steps replace some, and
    /// create ClusterQueues, which take the next indices).
    cluster_queues: Cow<'a, [ClusterQueue]>,
    cohorts: Cow<'a, [Cohort]>,
    /// The ResourceFlavors and LocalQueues as they are now (timeline steps create some).
    flavors: Cow<'a, BTreeMap<String, ResourceFlavor>>,
    local_queues: Cow<'a, BTreeMap<(String, String), String>>,
    stopped_local_queues: Cow<'a, BTreeMap<(String, String), StopPolicy>>,
    /// Workloads outside the queue manager: their LocalQueue or ClusterQueue does not exist
    /// (yet), or their LocalQueue is stopped. Kueue queues them when it is created or
    /// released (`AddLocalQueue`, `AddClusterQueue` of `pkg/cache/queue/manager.go`).
    orphans: BTreeSet<usize>,
    /// Per ClusterQueue: inactive (a missing flavor, or stopped).
    inactive: Vec<bool>,
    ids: Vec<QueueId>,
    tree: QuotaTree,
    /// The last cycle's snapshot, for the next cycle to copy the tree into.
    spare_snapshot: Option<QuotaTree>,
    /// A cycle's buffers, kept for the next (a congested replay runs millions of cycles).
    spare: Buffers,
    holders: Vec<Holder>,
    /// Every key a holder may have: a holder's `key_order`.
    keys: KeyOrder,
    fr_bits: FrBits,
    /// Per ClusterQueue, the holders that hold quota now, in `preemption::queue_order`.
    by_queue: Vec<Vec<usize>>,
    /// The holder of each queued workload while it is admitted.
    holder_of: Vec<Option<usize>>,
    /// What each holder is.
    holder_is: Vec<Victim>,
    heaps: Vec<heap::Heap>,
    parked: Vec<heap::Keys>,
    /// Per BestEffortFIFO queue, the workload waiting for its preemptions: it stays at the
    /// head until admitted (`preemptorWorkload`, sticky; Kueue#6929).
    sticky: Vec<Option<QueueKey>>,
    released: Released,
    /// The timeline step being settled (`None`: the start).
    phase: Option<usize>,
    /// Each workload's creation time (s): its own `metadata.creationTimestamp` or the
    /// scenario's start for those present at the start; for one arriving in a timeline step,
    /// the API server's stamp at its creation, a second after the last cycle before the step.
    created: Vec<i64>,
    /// Each workload's queue-order time (s, `workload.Ordering.GetQueueOrderTimestamp`): its
    /// creation, or, with `requeuingStrategy.timestamp: Eviction`, the time the PodsReady
    /// timeout evicted it, until it is admitted again (the Evicted condition is reset then).
    /// The heaps and a preemptor's `LowerOrNewerEqualPriority` read it.
    ordered: Vec<i64>,
    /// Per workload, its place among equal keys in a heap (see [`QueueKey`]).
    order: Vec<u64>,
    /// The first cycle's time (s): after the admitted workloads' times and the creation of
    /// every workload present at the start; cycle `c` reserves quota at `start + c`.
    start: i64,
    /// How often each workload preempted each victim: the same pair three times means the
    /// cycles go round (a preemptor whose freed quota others take first).
    repeats: BTreeMap<(usize, Victim), usize>,
    livelock: Option<(usize, Victim)>,
    /// Per workload, its pod sets as a number: workloads with the same pod sets get the same
    /// flavors.
    pod_sets_id: Vec<u32>,
    /// Pod sets → their number.
    shapes: equivalence::Shapes,
    /// Per ClusterQueue, the equivalence classes set aside since its inadmissible workloads
    /// were last requeued (`hashToBulkMoveReason`, see [`equivalence`]).
    set_aside: Vec<HashSet<equivalence::Class, foldhash::fast::FixedState>>,
    /// Per ClusterQueue, whether a workload was set aside unevaluated since its inadmissible
    /// workloads were last requeued (only then does a requeue have flags to clear).
    bypassing: Vec<bool>,
    /// Per root of the quota tree, the assignments (and preemption targets) nominations found
    /// since its usage last changed. Heads that look alike to the assigner get the same answer
    /// from the same quota, and after a release every parked workload of a cohort comes back,
    /// to be nominated against an unchanged cohort one after another.
    assigned: BTreeMap<usize, Remembered>,
    /// Per workload, its last nomination, valid while none of the quota it read changed:
    /// after a release every parked workload of the cohort is nominated again, and most read
    /// other flavors than the one released.
    last: Vec<Option<LastNomination>>,
    /// Per workload, its pod sets' [`Refusals`] in the ClusterQueue they were found for: the
    /// flavors' labels and taints do not change, so its nominations share them.
    refused: Vec<Option<(usize, Refusals)>>,
    /// Per cohort tree (by its root's node id), when the usage of each flavor-resource (as
    /// its [`FrBits`] bit) last changed there, on the clock of [`Self::changes`]: trees share
    /// flavors but not quota, so a change in one leaves the others' nominations standing.
    fr_changed: Vec<[u64; FrBits::COUNT]>,
    /// Changes of usage so far (holders added or released).
    changes: u64,
    /// Whether nominations are answered from what earlier ones found ([`Self::assigned`],
    /// [`Self::last`]); off, every nomination is computed: the reference the tests compare
    /// against.
    remember: bool,
    /// A replay's Kueue: its clock and what it recycles.
    live: Option<LiveClock>,
    /// The cycle waiting for every admitted workload to be PodsReady (a replay's, under
    /// `waitForPodsReady.blockAdmission`): no other cycle runs meanwhile.
    blocked: Option<cycle::Pass>,
    out: Admission,
}

/// What the state of a replay's Kueue ([`live`]) adds: the time, the cohorts whose parked
/// workloads wait for the requeue batch, and holder slots to reuse.
#[derive(Debug, Default)]
struct LiveClock {
    /// Now, in seconds: quota reserved now is stamped with it.
    now: i64,
    /// Roots of the quota tree whose inadmissible workloads are to be requeued (Kueue
    /// batches the requests: `requeueBatchPeriod`).
    requeue_roots: BTreeSet<usize>,
    /// Holders released in the current cycle (reused from the next one on: the cycle still
    /// names them as preemption targets).
    released_holders: Vec<usize>,
    free_holders: Vec<usize>,
    /// `waitForPodsReady` is on: each admitted workload is PodsReady or not ([`pods_ready`]).
    tracking: bool,
    /// `waitForPodsReady.blockAdmission`.
    block_admission: bool,
    /// Per workload, whether it holds quota and is PodsReady (`WorkloadsNotReady` of the
    /// cache holds the others).
    ready: Vec<bool>,
    /// Workloads holding quota that are not PodsReady.
    not_ready: usize,
}

/// [`admit`] for at most `max_cycles` scheduling cycles (Kueue's unit tests run one).
pub fn admit_cycles(
    objects: &Objects,
    workloads: &[Workload],
    namespaces: &NamespaceLabels,
    gates: &FeatureGates,
    max_cycles: usize,
) -> Admission {
    let timeline = Timeline::default();
    run(objects, workloads, &timeline, namespaces, gates, max_cycles)
}

fn run(
    objects: &Objects,
    workloads: &[Workload],
    timeline: &Timeline,
    namespaces: &NamespaceLabels,
    gates: &FeatureGates,
    max_cycles: usize,
) -> Admission {
    run_with(
        objects,
        workloads,
        timeline,
        (namespaces, gates),
        max_cycles,
        true,
    )
}

/// [`admit_over`] with every nomination computed, nothing remembered: the reference for tests.
#[cfg(test)]
pub fn admit_over_computing(
    objects: &Objects,
    workloads: &[Workload],
    timeline: &Timeline,
    namespaces: &NamespaceLabels,
    gates: &FeatureGates,
) -> Admission {
    run_with(
        objects,
        workloads,
        timeline,
        (namespaces, gates),
        usize::MAX,
        false,
    )
}

fn run_with(
    objects: &Objects,
    workloads: &[Workload],
    timeline: &Timeline,
    (namespaces, gates): (&NamespaceLabels, &FeatureGates),
    max_cycles: usize,
    remember: bool,
) -> Admission {
    let mut st = State::new(objects, Cow::Borrowed(workloads), namespaces, gates, false);
    st.remember = remember;
    st.start = (workloads.iter().enumerate())
        .filter(|(i, _)| timeline.arrive.get(*i).copied().flatten().is_none())
        .map(|(_, w)| w.created.saturating_add(1))
        .fold(objects.now, i64::max);
    let mut queue_of: Vec<Option<usize>> = vec![None; workloads.len()];
    for (i, q) in queue_of.iter_mut().enumerate() {
        let present = timeline.arrive.get(i).copied().flatten().is_none();
        *q = st.enqueue(i, i as u64, present);
    }
    let mut cycle = 0;
    let mut settled = st.settle(&mut cycle, max_cycles);
    st.out.holding.push(st.holding());
    for (k, finishing) in timeline.finish.iter().enumerate() {
        if !settled {
            break;
        }
        st.phase = Some(k);
        for update in objects.updates.iter().filter(|u| u.step == k) {
            let roots = st.update_queues(update);
            st.released.roots.extend(roots);
            let arrived = |i: usize| {
                timeline
                    .arrive
                    .get(i)
                    .copied()
                    .flatten()
                    .is_none_or(|a| a < k)
            };
            for (i, q) in st.adopt_orphans(arrived) {
                queue_of[i] = Some(q);
            }
        }
        for &w in finishing {
            st.finish(w, k);
        }
        for (i, q) in queue_of.iter_mut().enumerate() {
            if timeline.arrive.get(i).copied().flatten() != Some(k) {
                continue;
            }
            // Newer than every workload before it: Kueue's LowerOrNewerEqualPriority
            // preempts by this order (one waiting for its queue too, should a step create it).
            st.created[i] = st.start.saturating_add(cycle as i64 + 1);
            st.ordered[i] = st.created[i];
            // Queued as its queues are now (a step may have stopped or created them).
            *q = st.enqueue(i, i as u64, true);
        }
        settled = st.settle(&mut cycle, max_cycles);
        st.out.holding.push(st.holding());
    }
    for (q, heap) in st.heaps.iter().enumerate() {
        for key in heap.iter() {
            st.out.decisions[key.3].waiting = Waiting::Heap;
        }
        for key in &st.parked[q] {
            st.out.decisions[key.3].waiting = Waiting::Inadmissible;
        }
    }
    let queues = stop::Queues {
        cluster_queues: &st.cluster_queues,
        stopped_local_queues: &st.stopped_local_queues,
    };
    let stopped = stop::warnings(
        objects,
        queues,
        workloads,
        &st.out.decisions,
        &st.out.drained,
    );
    st.out.warnings.extend(stopped);
    st.out.queues = st.usage();
    st.out
}

impl State<'_> {
    fn queues(&self) -> &[ClusterQueue] {
        &self.cluster_queues
    }

    /// Scheduling cycles until nothing changes (or `max_cycles` in all); false when admission
    /// cannot settle.
    fn settle(&mut self, cycle: &mut usize, max_cycles: usize) -> bool {
        let objects = self.objects;
        // A guard against a preemption ping-pong Kueue's policies should never allow.
        let most = *cycle + 4 * (self.workloads.len() + objects.admitted.len()) + 16;
        // A cycle that waited for PodsReady goes on first; while it waits, no other runs.
        if self.blocked.is_some() && self.resume().is_none() {
            return true;
        }
        while *cycle < max_cycles {
            self.observe_evictions();
            if let Some(live) = &mut self.live {
                let released = std::mem::take(&mut live.released_holders);
                live.free_holders.extend(released);
            }
            let queues = &self.cluster_queues;
            let stopped = |q: usize| queues[q].stop_policy != StopPolicy::None;
            let ids = &self.pod_sets_id;
            let mut heads = std::mem::take(&mut self.spare.heads);
            heads.extend(
                (self.heaps.iter_mut().enumerate())
                    .filter(|(q, _)| !stopped(*q))
                    .filter_map(|(q, heap)| match self.sticky[q] {
                        Some(key) if heap.remove(ids, &key) => Some((q, key)),
                        _ => heap.pop_first(ids).map(|k| (q, k)),
                    }),
            );
            if heads.is_empty() {
                self.spare.heads = heads;
                return true;
            }
            if *cycle == most {
                self.out.warnings.push(format!(
                    "Kueue admission stopped after {most} cycles without settling; the queues' preemption policies keep evicting each other's workloads"
                ));
                for (q, key) in heads {
                    self.heaps[q].insert(&self.pod_sets_id, key);
                }
                return false;
            }
            *cycle += 1;
            let Some((admitted, parked, evicted)) = self.cycle(*cycle, heads) else {
                return true; // waiting for PodsReady
            };
            if let Some((by, victim)) = self.livelock {
                let workloads = &self.workloads;
                let w = &workloads[by];
                let victim = match victim {
                    Victim::Queued(v) => {
                        format!("{}/{}", workloads[v].namespace, workloads[v].name)
                    }
                    Victim::Admitted(a) => format!(
                        "{}/{}",
                        objects.admitted[a].namespace, objects.admitted[a].name
                    ),
                };
                self.out.warnings.push(format!(
                    "Kueue admission does not settle: {}/{} preempted {victim} three times, as other workloads take the quota its preemptions free before it is admitted (the starvation Kueue's alpha PrioritizePreemptorWorkloads gate, off by default, addresses); admission stopped after cycle {cycle}",
                    w.namespace, w.name
                ));
                return false;
            }
            if admitted == 0 && parked == 0 && evicted == 0 {
                return true; // every head would come back to the same answer
            }
        }
        true
    }

    /// Which queued workloads hold quota now.
    fn holding(&self) -> Vec<bool> {
        self.holder_of.iter().map(Option::is_some).collect()
    }

    /// A workload finishes in timeline step `step`: its quota is released, which requeues the
    /// parked workloads of its cohort.
    fn finish(&mut self, w: usize, step: usize) {
        self.out.decisions[w].finished = Some(step);
        if let Some(h) = self.holder_of[w] {
            let queue = self.holders[h].queue;
            self.release(h);
            let root = self.tree.root_of(self.ids[queue]);
            match &mut self.live {
                // A replay's: requeued a batch period later, even while a cycle waits.
                Some(live) => live.requeue_roots.insert(root),
                None => self.released.roots.insert(root),
            };
        }
    }

    /// A workload starts holding quota.
    fn hold(&mut self, what: Victim, mut holder: Holder) {
        holder.mask = self.fr_bits.learn(holder.usage.keys());
        self.usage_changed(holder.queue, holder.mask);
        holder.key_order = match (what, &self.live) {
            // A replay's workloads are not known in advance: their tie-break (Kueue's is the
            // UID) is their arrival order, after the workloads admitted before the start.
            (Victim::Queued(w), Some(_)) => {
                (self.objects.admitted.len() as u64).saturating_add(self.order[w]) as u32
            }
            _ => self.keys.of(&holder.key),
        };
        holder.count_in(&mut self.tree, &self.ids);
        self.quota_changed(holder.queue);
        let reused = self.live.as_mut().and_then(|l| l.free_holders.pop());
        let h = reused.unwrap_or(self.holders.len());
        preemption::insert_in_order(&mut self.by_queue[holder.queue], &self.holders, h, &holder);
        match reused {
            Some(h) => {
                self.holders[h] = holder;
                self.holder_is[h] = what;
            }
            None => {
                self.holders.push(holder);
                self.holder_is.push(what);
            }
        }
        if let Victim::Queued(w) = what {
            self.holder_of[w] = Some(h);
            // Admitted: the Evicted condition is reset (`SetQuotaReservation`), so it is
            // ordered by its creation again; its pods are not ready yet.
            self.ordered[w] = self.created[w];
            if let Some(live) = self.live.as_mut().filter(|l| l.tracking) {
                live.ready[w] = false;
                live.not_ready += 1;
            }
        }
    }

    /// A holder loses its quota.
    fn release(&mut self, h: usize) {
        let holder = &self.holders[h];
        holder.remove_usage(&mut self.tree, &self.ids);
        self.by_queue[holder.queue].retain(|&x| x != h);
        self.usage_changed(self.holders[h].queue, self.holders[h].mask);
        self.quota_changed(self.holders[h].queue);
        if let Victim::Queued(w) = self.holder_is[h] {
            self.holder_of[w] = None;
            if let Some(live) = self.live.as_mut().filter(|l| l.tracking) {
                match live.ready[w] {
                    true => live.ready[w] = false,
                    false => live.not_ready -= 1,
                }
            }
        }
        if let Some(live) = &mut self.live {
            live.released_holders.push(h);
        }
        if let Some(pass) = &mut self.blocked {
            pass.gone.insert(h);
        }
    }

    fn preemptor(&self, w: usize, q: usize) -> Preemptor {
        Preemptor {
            queue: q,
            priority: self.workloads[w].priority,
            created: self.ordered[w],
        }
    }

    /// `getAssignments`: flavors (the assigner asking the preemption oracle) and, when the
    /// assignment needs preemption, its targets (`GetTargets`). `memo`: the oracle's answers
    /// against this very quota (and the creation time they depend on), when it is the
    /// tree's own.
    fn assign(
        &self,
        snapshot: &mut QuotaTree,
        by_queue: &[Vec<usize>],
        w: usize,
        q: usize,
        memo: Option<(&RefCell<Simulations>, Option<i64>)>,
    ) -> (Assignment, Vec<Target>) {
        let preemption = || Preemption {
            queues: self.queues(),
            ids: &self.ids,
            holders: &self.holders,
            by_queue,
            fr_bits: &self.fr_bits,
        };
        let preemptor = self.preemptor(w, q);
        let assignment = {
            let oracle = Oracle {
                preemption: preemption(),
                preemptor: preemptor.clone(),
                base: snapshot,
                snapshot: RefCell::new(None),
            };
            let remembering = memo.map(|(known, created)| RememberingOracle {
                oracle: &oracle,
                known,
                created,
            });
            let assigner = Assigner {
                queue: &self.queues()[q],
                id: self.ids[q],
                tree: snapshot,
                flavors: &self.flavors,
                oracle: match &remembering {
                    Some(r) => r,
                    None => &oracle,
                },
                gates: self.gates,
            };
            let pod_sets = &self.workloads[w].pod_sets;
            match &self.refused[w] {
                Some((rq, refusals)) if *rq == q => assigner.assign_refused(pod_sets, refusals),
                _ => assigner.assign(pod_sets),
            }
        };
        if assignment.mode() != Mode::Preempt {
            return (assignment, Vec::new());
        }
        let needing = (assignment.pod_sets.iter())
            .flat_map(|ps| ps.flavors.iter())
            .filter(|c| c.mode == Mode::Preempt);
        // Most heads that need preemption have no candidates at all: asked by id first.
        let id = self.ids[q];
        let preempt: smallvec::SmallVec<[Option<usize>; 8]> = (needing.clone())
            .map(|c| assignment.fr_id(snapshot, id, c.place))
            .collect();
        let amounts = assignment.amounts(snapshot, id);
        if preemption().hopeless_by_id(snapshot, &preemptor, &amounts, &preempt) {
            return (assignment, Vec::new());
        }
        let frs: BTreeSet<FlavorResource> = (needing.map(|c| assignment.names(c.place)))
            .map(|(f, r)| (f.to_string(), r.to_string()))
            .collect();
        let usage = assignment.usage_map();
        let targets = preemption().search(snapshot, &preemptor, &usage, &frs);
        (assignment, targets)
    }

    /// `IssuePreemptions` for one target: the victim's quota is released (its pods terminate
    /// at once; the cycle itself reads its snapshot), and it is requeued (or ends, for a pod's
    /// workload) once Kueue observes the eviction.
    fn evict(&mut self, cycle: usize, by: usize, q: usize, t: Target) {
        let victim_queue = self.holders[t.holder].queue;
        let message = preemption::message(
            t.reason,
            &self.tree.path(self.ids[q]),
            &self.tree.path(self.ids[victim_queue]),
        );
        let victim = self.holder_is[t.holder];
        self.release(t.holder);
        let index = self.out.evictions.len();
        self.out.evictions.push(Eviction {
            victim,
            step: self.phase,
            by,
            cycle,
            reason: t.reason,
            message: message.clone(),
        });
        self.out.decisions[by].preempted.push(index);
        let seen = self.repeats.entry((by, victim)).or_insert(0);
        *seen += 1;
        if *seen == 3 && self.livelock.is_none() {
            self.livelock = Some((by, victim));
        }
        if let Victim::Queued(v) = victim {
            self.out.order.retain(|&x| x != v);
            let d = &mut self.out.decisions[v];
            d.admitted = None;
            d.evicted = Some(index);
            d.message = message.into();
            if self.workloads[v].owned_by_pod {
                d.reason = "Preempted";
                d.waiting = Waiting::Nowhere;
            } else {
                d.reason = "Pending";
                d.waiting = Waiting::Heap;
                self.released
                    .requeue
                    .push((victim_queue, self.queue_key(v)));
            }
        }
        let root = self.tree.root_of(self.ids[victim_queue]);
        self.released.roots.insert(root);
    }

    /// What Kueue does once it observes the evictions of the last cycle (between cycles, as
    /// the Workload updates arrive): evicted workloads back in their queues, and the parked
    /// workloads of their cohorts requeued (`QueueInadmissibleWorkloads`).
    fn observe_evictions(&mut self) {
        let released = std::mem::take(&mut self.released);
        for (q, key) in released.requeue {
            self.push(q, key);
        }
        if let Some(live) = &mut self.live {
            // Kueue requeues them a batch period later (see [`live`]).
            live.requeue_roots.extend(released.roots);
            return;
        }
        for q in 0..self.cluster_queues.len() {
            if released.roots.contains(&self.tree.root_of(self.ids[q])) {
                self.requeue_inadmissible(q);
            }
        }
    }
}

/// Evictions issued but not yet observed.
#[derive(Default)]
struct Released {
    requeue: Vec<(usize, QueueKey)>,
    roots: BTreeSet<usize>,
}

/// `ValidateAdmissibility`'s namespace check: a ClusterQueue without a selector admits no
/// namespace (`LabelSelectorAsSelector(nil)` is `Nothing`); `{}` admits every namespace.
fn namespace_admitted(
    selector: Option<&LabelSelector>,
    namespaces: &NamespaceLabels,
    w: &Workload,
) -> bool {
    selector.is_some_and(|s| {
        let empty = s.match_labels.as_ref().is_none_or(|m| m.is_empty())
            && s.match_expressions.as_ref().is_none_or(|e| e.is_empty());
        empty || selector_matches(s, &labels_of(namespaces, &w.namespace))
    })
}

/// `quotaResourcesToReserve`: what a head that needs preemption but found no candidates holds
/// for the rest of the cycle, so that lower entries of the cohort cannot take it.
fn reserve(
    a: &Assignment,
    queue: &ClusterQueue,
    tree: &QuotaTree,
    id: QueueId,
) -> Vec<(FlavorResource, i64)> {
    (a.usage())
        .map(|((f, r), usage)| {
            let fr = &(f.to_string(), r.to_string());
            let quota = queue.quotas.get(fr).copied().unwrap_or_default();
            let used = tree.usage(id, fr);
            let v = if a.borrowing > 0 {
                match quota.borrowing_limit {
                    None => usage,
                    Some(limit) => {
                        usage.min(quota.nominal.saturating_add(limit).saturating_sub(used))
                    }
                }
            } else {
                usage.min(quota.nominal.saturating_sub(used)).max(0)
            };
            (fr.clone(), v)
        })
        .collect()
}
