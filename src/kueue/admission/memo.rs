//! What admission remembers between nominations: per cohort tree, the nominations and the
//! preemption oracle's answers while its usage is unchanged; per workload, its last
//! nomination while no flavor-resource it read changed in its tree. A reference switch
//! ([`State::remember`]) computes every nomination; `kueue::properties` compares the two.

use std::cell::RefCell;
use std::rc::Rc;

use super::{Nominated, State};
use crate::kueue::api::PreemptionPolicy;
use crate::kueue::assigner::{self, FrName, Possibility, PreemptionOracle, Refusals};
use crate::kueue::preemption::{FrBits, Oracle};
use crate::kueue::quota::{QueueId, QuotaTree};

/// What an assignment depends on besides the quota: the queue, the pod sets, and the
/// preemptor's priority and (only under LowerOrNewerEqualPriority) its creation time.
pub(super) type AssignKey = (usize, u32, i32, Option<i64>);

/// What the preemption oracle's answer depends on besides the quota and the flavor-resource:
/// the queue, the quantity, and the preemptor's priority and (as in [`AssignKey`]) its
/// creation time.
pub(super) type SimulateKey = (QueueId, i64, i32, Option<i64>);

/// Looked up per nomination (never iterated into the output): foldhash, fixed seed.
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;

/// The oracle's answers by what they depend on, then by flavor-resource (a few, by their
/// ids in the tree they were asked in).
pub(super) type Simulations = HashMap<SimulateKey, Vec<(usize, (Possibility, usize))>>;

/// What nominations in one quota tree found since its usage last changed.
#[derive(Default)]
pub(super) struct Remembered {
    nominations: HashMap<AssignKey, Rc<Nominated>>,
    /// The oracle's answers: workloads of a trace differ in their requests, so they rarely
    /// share a nomination, but the flavor-resource they cannot get (GPUs, in a few sizes) is
    /// asked about again and again.
    simulations: Simulations,
}

/// A workload's nomination and what it read: its ClusterQueue and flavor-resources (as
/// [`FrBits`]), and when.
pub(super) struct LastNomination {
    nominated: Rc<Nominated>,
    queue: usize,
    frs: u128,
    at: u64,
}

/// The oracle, answering from [`Remembered::simulations`] what it was asked before.
pub(super) struct RememberingOracle<'o> {
    pub(super) oracle: &'o Oracle<'o>,
    pub(super) known: &'o RefCell<Simulations>,
    /// The preemptor's creation time when the answer depends on it.
    pub(super) created: Option<i64>,
}

impl PreemptionOracle for RememberingOracle<'_> {
    fn simulate(
        &self,
        queue: QueueId,
        fr: FrName,
        id: Option<usize>,
        quantity: i64,
    ) -> (Possibility, usize) {
        // A flavor-resource with no quota anywhere has no id to remember it by.
        let Some(f) = id else {
            return self.oracle.simulate(queue, fr, id, quantity);
        };
        let priority = self.oracle.preemptor.priority;
        let key = (queue, quantity, priority, self.created);
        let known = (self.known.borrow().get(&key))
            .and_then(|frs| frs.iter().find(|(known, _)| *known == f))
            .map(|(_, answer)| *answer);
        if let Some(answer) = known {
            return answer;
        }
        let answer = self.oracle.simulate(queue, fr, id, quantity);
        (self.known.borrow_mut().entry(key).or_default()).push((f, answer));
        answer
    }
}

impl State<'_> {
    /// A holder of the flavor-resources `mask` came to or went from queue `q`: nominations
    /// in its tree that read any of them no longer hold (a holder with 0 of one counts: it
    /// is a preemption candidate).
    pub(super) fn usage_changed(&mut self, q: usize, mask: u128) {
        self.changes += 1;
        let root = self.tree.root_of(self.ids[q]);
        if self.fr_changed.len() <= root {
            self.fr_changed.resize(root + 1, [0; FrBits::COUNT]);
        }
        for bit in FrBits::bits(mask) {
            self.fr_changed[root][bit] = self.changes;
        }
    }

    /// Usage changed in queue `q`: what was assigned in its tree no longer holds.
    pub(super) fn quota_changed(&mut self, q: usize) {
        let root = self.tree.root_of(self.ids[q]);
        // Emptied in place: the tree's next nominations fill the same tables again.
        if let Some(remembered) = self.assigned.get_mut(&root) {
            remembered.nominations.clear();
            remembered.simulations.clear();
        }
    }

    /// [`Self::assign`] against the quota as it is (a snapshot just taken), answered from
    /// earlier nominations in the same tree when nothing has changed since.
    pub(super) fn assign_now(
        &mut self,
        snapshot: &mut QuotaTree,
        by_queue: &[Vec<usize>],
        w: usize,
        q: usize,
    ) -> Rc<Nominated> {
        let policies = &self.queues()[q].preemption;
        let newer = [
            policies.within_cluster_queue,
            policies.reclaim_within_cohort,
        ]
        .contains(&PreemptionPolicy::LowerOrNewerEqualPriority);
        let workload = &self.workloads[w];
        let key = (
            q,
            self.pod_sets_id[w],
            workload.priority,
            newer.then_some(self.ordered[w]),
        );
        if !matches!(self.refused[w], Some((rq, _)) if rq == q) {
            let refusals = Refusals::new(
                &self.queues()[q],
                &self.flavors,
                self.gates,
                &self.workloads[w].pod_sets,
            );
            self.refused[w] = Some((q, refusals));
        }
        if !self.remember {
            return Nominated::new(self.assign(snapshot, by_queue, w, q, None));
        }
        let frs = match &self.last[w] {
            Some(last) if last.queue == q => {
                if self.unchanged_since(q, last.frs, last.at) {
                    return Rc::clone(&last.nominated);
                }
                last.frs
            }
            _ => {
                // The workload's refusals in this queue, found above.
                let refusals = (self.refused[w].as_ref()).map(|(_, r)| r);
                let queue = &self.cluster_queues[q];
                let read = refusals.map(|r| assigner::flavor_resources_read(queue, r));
                self.fr_bits.learn_named(read.into_iter().flatten())
            }
        };
        let found = self.assign_in_tree(snapshot, by_queue, w, q, key);
        self.last[w] = Some(LastNomination {
            nominated: Rc::clone(&found),
            queue: q,
            frs,
            at: self.changes,
        });
        found
    }

    /// Whether no usage of the flavor-resources `frs` changed in queue `q`'s tree since `at`.
    fn unchanged_since(&self, q: usize, frs: u128, at: u64) -> bool {
        let root = self.tree.root_of(self.ids[q]);
        (self.fr_changed.get(root))
            .is_none_or(|changed| FrBits::bits(frs).all(|bit| changed[bit] <= at))
    }

    /// [`Self::assign`], answered from the nominations of workloads alike in the same tree
    /// since its usage last changed.
    fn assign_in_tree(
        &mut self,
        snapshot: &mut QuotaTree,
        by_queue: &[Vec<usize>],
        w: usize,
        q: usize,
        key: AssignKey,
    ) -> Rc<Nominated> {
        let root = self.tree.root_of(self.ids[q]);
        if let Some(known) = self
            .assigned
            .get(&root)
            .and_then(|m| m.nominations.get(&key))
        {
            return Rc::clone(known);
        }
        let remembered = self.assigned.entry(root).or_default();
        let simulations = RefCell::new(std::mem::take(&mut remembered.simulations));
        let memo = Some((&simulations, key.3));
        let found = Nominated::new(self.assign(snapshot, by_queue, w, q, memo));
        let remembered = self.assigned.entry(root).or_default();
        remembered.simulations = simulations.into_inner();
        remembered.nominations.insert(key, Rc::clone(&found));
        found
    }
}
