//! Kueue's classical preemption: which admitted workloads to evict so that a pending one fits.
//! A port of kubernetes-sigs/kueue `pkg/scheduler/preemption/preemption.go`
//! (`classicalPreemptions`, `fillBackWorkloads`, `workloadFits`,
//! `queueUnderNominalInResourcesNeedingPreemption`, `preemptionMessage`),
//! `classical/hierarchical_preemption.go` (`classifyPreemptionVariant`,
//! `collectCandidatesForHierarchicalReclaim`, `collectCandidatesInSubtree`),
//! `classical/candidate_generator.go` (the candidate order and `candidateIsValid`),
//! `common/ordering.go` (`CandidatesOrdering`), `common/preemption_policy.go`
//! (`SatisfiesPreemptionPolicy`) and `preemption_oracle.go` (`SimulatePreemption`), at Kueue
//! v0.20 (main). Fair sharing, admission fair sharing and TAS are not simulated.
//!
//! Kueue breaks the last tie between candidates by UID, which is random; schedsim has no UIDs
//! and uses the workload's `namespace/name` instead, so ties resolve the same way every run.

use std::collections::{BTreeMap, BTreeSet};

use super::api::{ClusterQueue, FlavorResource, PreemptionPolicy};
use super::assigner::{FrName, Possibility, PreemptionOracle};
use super::quota::{FrIdsOf, QueueId, QuotaTree};

/// A workload that holds quota in a ClusterQueue: a possible victim.
#[derive(Debug, Clone)]
pub struct Holder {
    /// `namespace/name`: the last tie-break (Kueue's is the UID).
    pub key: String,
    /// The position of `key` among the keys of every workload that may hold quota, so that
    /// the tie-break compares integers (see [`KeyOrder`]).
    pub key_order: u32,
    /// Index of its ClusterQueue.
    pub queue: usize,
    pub priority: i32,
    /// The queue-order timestamp (creation), in seconds.
    pub created: i64,
    /// When its quota was reserved, in seconds.
    pub reserved: i64,
    /// Already being evicted (an `Evicted` condition): such candidates go first.
    pub evicted: bool,
    /// Its flavor-resources as [`FrBits`].
    pub mask: u128,
    /// The quota it holds per flavor and resource (a resource with a flavor and 0 counts as
    /// used, as `WorkloadUsesResources` reads the admission).
    pub usage: BTreeMap<FlavorResource, i64>,
    /// The quota trees' ids of `usage`'s flavor-resources, when known ([`Self::count_in`]):
    /// candidates are taken out of snapshots and put back again and again, so by id.
    pub fr_ids: FrIdsOf,
}

impl Holder {
    /// Its usage counted in `tree`, the tree it holds quota in from now: the ids of its
    /// flavor-resources there are found (new ones registered) and kept for the snapshots.
    pub fn count_in(&mut self, tree: &mut QuotaTree, ids: &[QueueId]) {
        self.fr_ids = tree.ids_of(self.usage.keys());
        self.add_usage(tree, ids);
    }

    /// Its usage counted in `tree` (`ids`: the tree's id of each ClusterQueue).
    pub fn add_usage(&self, tree: &mut QuotaTree, ids: &[QueueId]) {
        let q = ids[self.queue];
        match self.ids_in(tree) {
            Some(f) => {
                (f.iter().zip(self.usage.values())).for_each(|(&f, &v)| tree.add_usage_id(q, f, v))
            }
            None => (self.usage.iter()).for_each(|(fr, &v)| tree.add_usage(q, fr, v)),
        }
    }

    /// Its usage taken out of `tree`.
    pub fn remove_usage(&self, tree: &mut QuotaTree, ids: &[QueueId]) {
        let q = ids[self.queue];
        match self.ids_in(tree) {
            Some(f) => (f.iter().zip(self.usage.values()))
                .for_each(|(&f, &v)| tree.remove_usage_id(q, f, v)),
            None => (self.usage.iter()).for_each(|(fr, &v)| tree.remove_usage(q, fr, v)),
        }
    }

    /// Its flavor-resources' ids, when found in a tree of `tree`'s generation.
    fn ids_in(&self, tree: &QuotaTree) -> Option<&[usize]> {
        (self.fr_ids.generation == tree.fr_generation()).then_some(&self.fr_ids.ids[..])
    }
}

/// The keys of every workload that may hold quota, sorted: a holder's `key_order` is its
/// key's place among them.
pub struct KeyOrder(Vec<String>);

impl KeyOrder {
    pub fn new(keys: impl IntoIterator<Item = String>) -> KeyOrder {
        let mut keys: Vec<String> = keys.into_iter().collect();
        keys.sort_unstable();
        KeyOrder(keys)
    }

    pub fn of(&self, key: &str) -> u32 {
        self.0.partition_point(|k| k.as_str() < key) as u32
    }
}

/// Flavor-resources as bits, so that "does this holder use any of these" costs one AND
/// instead of string comparisons (the check runs for every holder of every candidate queue).
/// The last bit stands for every flavor-resource past the first 127: a hit there is checked
/// exactly. Bits go in the order flavor-resources are first seen; the map is only looked up
/// (per holder admitted), so it hashes.
#[derive(Debug, Clone, Default)]
pub struct FrBits(hashbrown::HashMap<FlavorResource, u32, foldhash::fast::FixedState>);

/// A flavor-resource by its names, looked up in [`FrBits`] without allocating: it hashes as
/// the pair of owned strings does.
struct Named<'n>(FrName<'n>);

impl std::hash::Hash for Named<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.0.hash(state);
        self.0.1.hash(state);
    }
}

impl hashbrown::Equivalent<FlavorResource> for Named<'_> {
    fn equivalent(&self, key: &FlavorResource) -> bool {
        self.0.0 == key.0 && self.0.1 == key.1
    }
}

const OVERFLOW: u32 = 127;

impl FrBits {
    /// How many bits a mask has (the last one standing for every flavor-resource past it).
    pub const COUNT: usize = OVERFLOW as usize + 1;

    /// The bits set in `mask`, lowest first.
    pub fn bits(mask: u128) -> impl Iterator<Item = usize> {
        let mut rest = mask;
        std::iter::from_fn(move || {
            (rest != 0).then(|| {
                let bit = rest.trailing_zeros() as usize;
                rest &= rest - 1;
                bit
            })
        })
    }

    /// The mask of `frs`, giving new flavor-resources a bit.
    pub fn learn<'f>(&mut self, frs: impl IntoIterator<Item = &'f FlavorResource>) -> u128 {
        self.learn_named(frs.into_iter().map(|(f, r)| (f.as_str(), r.as_str())))
    }

    /// [`Self::learn`] by names (allocating only for a flavor-resource new to it).
    pub fn learn_named<'f>(&mut self, frs: impl IntoIterator<Item = FrName<'f>>) -> u128 {
        let mut mask = 0;
        for fr in frs {
            let next = (self.0.len() as u32).min(OVERFLOW);
            let bit = match self.0.get(&Named(fr)) {
                Some(&bit) => bit,
                None => *(self.0.entry((fr.0.to_string(), fr.1.to_string()))).or_insert(next),
            };
            mask |= 1u128 << bit;
        }
        mask
    }

    /// The mask of `frs`, from known flavor-resources only (no holder uses the others).
    pub fn mask<'f>(&self, frs: impl IntoIterator<Item = &'f FlavorResource>) -> u128 {
        (frs.into_iter())
            .filter_map(|fr| self.0.get(fr))
            .fold(0, |m, &bit| m | 1u128 << bit)
    }
}

/// The workload that needs the quota.
#[derive(Debug, Clone)]
pub struct Preemptor {
    pub queue: usize,
    pub priority: i32,
    pub created: i64,
}

/// The Preempted condition's reason (`kueue.InClusterQueueReason`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Reason {
    InClusterQueue,
    InCohortReclamation,
    InCohortReclaimWhileBorrowing,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::InClusterQueue => "InClusterQueue",
            Reason::InCohortReclamation => "InCohortReclamation",
            Reason::InCohortReclaimWhileBorrowing => "InCohortReclaimWhileBorrowing",
        }
    }

    /// `HumanReadablePreemptionReasons`.
    pub fn human(self) -> &'static str {
        match self {
            Reason::InClusterQueue => "prioritization in the ClusterQueue",
            Reason::InCohortReclamation => "reclamation within the cohort",
            Reason::InCohortReclaimWhileBorrowing => {
                "reclamation within the cohort while borrowing"
            }
        }
    }
}

/// A victim and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Target {
    pub holder: usize,
    pub reason: Reason,
}

/// `preemptionMessage`, with `UNKNOWN` for the UIDs schedsim does not have (Kueue prints the
/// same when a workload has none).
pub fn message(reason: Reason, preemptor_path: &str, preemptee_path: &str) -> String {
    format!(
        "Preempted to accommodate a workload (UID: UNKNOWN, JobUID: UNKNOWN) due to {}; preemptor path: {preemptor_path}; preemptee path: {preemptee_path}",
        reason.human()
    )
}

/// `preemptionVariant`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    WithinQueue,
    HierarchicalReclaim,
    ReclaimWithoutBorrowing,
    ReclaimWhileBorrowing,
}

impl Variant {
    fn reason(self) -> Reason {
        match self {
            Variant::WithinQueue => Reason::InClusterQueue,
            Variant::HierarchicalReclaim | Variant::ReclaimWithoutBorrowing => {
                Reason::InCohortReclamation
            }
            Variant::ReclaimWhileBorrowing => Reason::InCohortReclaimWhileBorrowing,
        }
    }
}

/// The flavor-resources that need preemption, their [`FrBits`] mask and their quota-tree ids.
struct Wanted<'f> {
    frs: &'f BTreeSet<FlavorResource>,
    mask: u128,
    ids: Vec<usize>,
}

#[derive(Clone, Copy)]
struct Candidate {
    holder: usize,
    /// The holder's queue.
    queue: usize,
    /// Which list it came from: hierarchical advantage 0, priority 1, own queue 2.
    list: u8,
    /// The cohort below which the candidate's queue must be over quota (the lowest common
    /// ancestor with the preemptor's queue); none for the preemptor's own queue.
    lca: Option<usize>,
    variant: Variant,
    /// Its [`rank`], kept beside it so that sorting reads no holder.
    rank: Rank,
}

/// `CandidatesOrdering`'s keys: not evicted, in the preemptor's queue (`queue`), priority,
/// reservation time (negated: the most recent first), the key (as its order).
type Rank = (bool, bool, i32, i64, u32);

fn rank(h: &Holder, queue: usize) -> Rank {
    (
        !h.evicted,
        h.queue == queue,
        h.priority,
        h.reserved.saturating_neg(),
        h.key_order,
    )
}

/// The order `GetTargets` tries candidates in: the evicted ones first, then by list
/// (hierarchical advantage, priority, own queue), each list in `CandidatesOrdering`; the
/// holder makes it total.
type TryOrder = (bool, u8, Rank, usize);

fn try_order(c: &Candidate) -> TryOrder {
    (c.rank.0, c.list, c.rank, c.holder)
}

/// A holder's place among the holders of its queue: [`TryOrder`] restricted to one queue,
/// where the list and "in the preemptor's queue" are the same for all. Each queue's holders
/// are kept in this order, so candidates are read in order without sorting.
pub fn queue_order(h: &Holder, holder: usize) -> (bool, i32, i64, u32, usize) {
    (
        !h.evicted,
        h.priority,
        h.reserved.saturating_neg(),
        h.key_order,
        holder,
    )
}

/// Puts holder `h` (`holder`, not yet in `holders`) into its queue's list (what
/// [`Preemption::by_queue`] holds) at its place in [`queue_order`].
pub fn insert_in_order(list: &mut Vec<usize>, holders: &[Holder], h: usize, holder: &Holder) {
    let at = list.partition_point(|&x| queue_order(&holders[x], x) < queue_order(holder, h));
    list.insert(at, h);
}

/// A queue whose holders may be candidates, as `collectCandidatesInSubtree` and
/// `getCandidatesFromCQ` find it.
#[derive(Clone, Copy)]
struct Source {
    queue: usize,
    lca: Option<usize>,
    /// Hierarchical advantage 0, priority 1, the preemptor's own queue 2.
    list: u8,
    advantage: bool,
}

/// The candidates of some [`Source`]s in [`TryOrder`], each queue read (and its holders
/// classified) only as far as the search goes: it usually stops after a few, or drops whole
/// queues as they come back within their quota. Collecting, classifying and sorting every
/// holder of a cohort for each question dominated admission at cluster size.
struct Walk<'w> {
    preemption: &'w Preemption<'w>,
    preemptor: &'w Preemptor,
    wanted: &'w Wanted<'w>,
    /// In a borrowing attempt candidates reclaiming without borrowing are not valid.
    borrowing: bool,
    sources: Vec<Source>,
    /// Per source: how far its queue is read, and its next candidate (`None`: not read yet).
    read: Vec<usize>,
    heads: Vec<Option<Candidate>>,
    /// Sources dropped or read to the end.
    done: Vec<bool>,
}

impl<'w> Walk<'w> {
    fn new(
        preemption: &'w Preemption<'w>,
        preemptor: &'w Preemptor,
        wanted: &'w Wanted<'w>,
        sources: &[Source],
        borrowing: bool,
    ) -> Walk<'w> {
        // In a borrowing attempt, another queue's holders without a hierarchical advantage
        // are all ReclaimWithoutBorrowing when borrowing within the cohort is forbidden
        // ([`Preemption::classify`]): none is valid, and the queue is not read at all. A
        // congested cohort asks this of every parked workload it requeues.
        let forbidden = borrow_within_cohort_forbidden(&preemption.queues[preemptor.queue]);
        let done = (sources.iter())
            .map(|s| borrowing && forbidden && s.list != 2 && !s.advantage)
            .collect();
        Walk {
            preemption,
            preemptor,
            wanted,
            borrowing,
            sources: sources.to_vec(),
            read: vec![0; sources.len()],
            heads: vec![None; sources.len()],
            done,
        }
    }

    /// The next candidate of source `s`, reading on in its queue.
    fn advance(&mut self, s: usize) -> Option<Candidate> {
        let (p, source) = (self.preemption, self.sources[s]);
        let list = &p.by_queue[source.queue];
        while let Some(&h) = list.get(self.read[s]) {
            self.read[s] += 1;
            let holder = &p.holders[h];
            let Some(variant) = p.classify(holder, self.preemptor, self.wanted, source.advantage)
            else {
                continue;
            };
            // `candidateIsValid`: no reclaiming without borrowing while borrowing.
            if self.borrowing && variant == Variant::ReclaimWithoutBorrowing {
                continue;
            }
            return Some(Candidate {
                holder: h,
                queue: source.queue,
                list: source.list,
                lca: source.lca,
                variant,
                rank: rank(holder, self.preemptor.queue),
            });
        }
        None
    }

    /// Whether source `s` has any candidate at all.
    fn any(&mut self, s: usize) -> bool {
        self.head(s).is_some()
    }

    fn head(&mut self, s: usize) -> Option<Candidate> {
        if self.heads[s].is_none() && !self.done[s] {
            self.heads[s] = self.advance(s);
            self.done[s] = self.heads[s].is_none();
        }
        self.heads[s]
    }

    /// The next candidate among the queues still valid (`candidateIsValid`'s quota part). A
    /// queue found back within its quota is dropped with all its candidates: validity is the
    /// same for all of a queue's candidates and, as the search only removes usage, once lost
    /// it stays lost.
    fn next(&mut self, snapshot: &QuotaTree) -> Option<Candidate> {
        loop {
            let (s, c) = (0..self.sources.len())
                .filter_map(|s| Some((s, self.head(s)?)))
                .min_by_key(|(_, c)| try_order(c))?;
            if !self.preemption.queue_valid(snapshot, &c, &self.wanted.ids) {
                self.done[s] = true;
                self.heads[s] = None;
                continue;
            }
            self.heads[s] = None;
            return Some(c);
        }
    }
}

/// The admitted workloads and the queues they are in: what preemption chooses from.
pub struct Preemption<'a> {
    pub queues: &'a [ClusterQueue],
    pub ids: &'a [QueueId],
    pub holders: &'a [Holder],
    /// Per queue, the holders that still hold quota, in [`queue_order`].
    pub by_queue: &'a [Vec<usize>],
    pub fr_bits: &'a FrBits,
}

/// `SatisfiesPreemptionPolicy`.
fn satisfies(policy: PreemptionPolicy, preemptor: &Preemptor, candidate: &Holder) -> bool {
    let lower = preemptor.priority > candidate.priority;
    match policy {
        PreemptionPolicy::Never => false,
        PreemptionPolicy::LowerPriority => lower,
        PreemptionPolicy::LowerOrNewerEqualPriority => {
            lower
                || (preemptor.priority == candidate.priority
                    && preemptor.created < candidate.created)
        }
        PreemptionPolicy::Any => true,
    }
}

impl Preemption<'_> {
    /// `GetTargets` with classical preemption: the victims that let `usage` fit in the
    /// preemptor's queue, none when no set of candidates does. `snapshot` is left as it was.
    pub fn targets(
        &self,
        snapshot: &mut QuotaTree,
        preemptor: &Preemptor,
        usage: &BTreeMap<FlavorResource, i64>,
        frs: &BTreeSet<FlavorResource>,
    ) -> Vec<Target> {
        if self.hopeless(snapshot, preemptor, usage, frs) {
            return Vec::new();
        }
        self.search(snapshot, preemptor, usage, frs)
    }

    /// [`Self::targets`] without the [`Self::hopeless`] shortcut: `classicalPreemptions`'
    /// attempts over the candidates.
    pub(super) fn search(
        &self,
        snapshot: &mut QuotaTree,
        preemptor: &Preemptor,
        usage: &BTreeMap<FlavorResource, i64>,
        frs: &BTreeSet<FlavorResource>,
    ) -> Vec<Target> {
        let queue = &self.queues[preemptor.queue];
        let id = self.ids[preemptor.queue];
        let wanted = Wanted {
            frs,
            mask: self.fr_bits.mask(frs.iter()),
            ids: snapshot.fr_ids(frs),
        };
        let forbidden = borrow_within_cohort_forbidden(queue);
        let preempt: Vec<Option<usize>> = frs.iter().map(|fr| snapshot.id(fr)).collect();
        let under_nominal = under_nominal(snapshot, id, &preempt);
        let sources = self.sources(snapshot, preemptor, usage, &wanted);
        let mut any = Walk::new(self, preemptor, &wanted, &sources, false);
        let has = |list: u8, walk: &mut Walk| {
            (0..sources.len()).any(|s| sources[s].list == list && walk.any(s))
        };
        let no_hierarchy = !has(0, &mut any);
        let no_other = no_hierarchy && !has(1, &mut any);
        let attempts: &[bool] = if no_other || (forbidden && !under_nominal) {
            &[true]
        } else if forbidden && no_hierarchy {
            &[false, true]
        } else {
            &[true, false]
        };
        // Without borrowing, `usage` must fit in the preemptor's queue's nominal quota, and
        // only evicting that queue's own workloads changes its usage: when none is a source
        // and the queue would borrow already, that attempt evicts every candidate in vain (a
        // congested cohort asks this of each parked workload too big for its own quota).
        let own_queue = sources.iter().any(|s| s.list == 2);
        let nominal_possible = own_queue
            || usage
                .iter()
                .all(|(fr, &v)| !snapshot.queue_borrowing_with(id, fr, v));
        for &borrowing in attempts {
            if !borrowing && !nominal_possible {
                continue;
            }
            let mut targets: Vec<Target> = Vec::new();
            let mut walk = Walk::new(self, preemptor, &wanted, &sources, borrowing);
            while let Some(c) = walk.next(snapshot) {
                let target = Target {
                    holder: c.holder,
                    reason: c.variant.reason(),
                };
                self.remove(snapshot, target.holder);
                targets.push(target);
                if fits(snapshot, id, usage, borrowing) {
                    let targets = self.fill_back(snapshot, id, usage, targets, borrowing);
                    for t in &targets {
                        self.add(snapshot, t.holder);
                    }
                    return targets;
                }
            }
            for t in &targets {
                self.add(snapshot, t.holder);
            }
        }
        Vec::new()
    }

    /// Whether [`Self::targets`] certainly finds none, without searching the cohort. With
    /// borrowing within the cohort forbidden and the queue at its nominal quota in a wanted
    /// resource, the only attempt borrows, where just the queue's own workloads and those of
    /// subtrees it has a hierarchical advantage over are valid candidates: with neither,
    /// nothing is found. A congested cohort asks this of nearly every parked workload it
    /// requeues. `preemption_tests::the_hopeless_shortcut_changes_no_answer` checks it
    /// against [`Self::search`].
    pub(super) fn hopeless(
        &self,
        snapshot: &QuotaTree,
        preemptor: &Preemptor,
        usage: &BTreeMap<FlavorResource, i64>,
        frs: &BTreeSet<FlavorResource>,
    ) -> bool {
        let preempt: Vec<Option<usize>> = frs.iter().map(|fr| snapshot.id(fr)).collect();
        self.hopeless_by_id(snapshot, preemptor, &snapshot.amounts(usage), &preempt)
    }

    /// [`Self::hopeless`] with the usage and the flavor-resources that need preemption given
    /// by their ids in `snapshot` (`None`: no quota for it anywhere), as the assigner has
    /// them: nothing to allocate for the question asked most.
    pub fn hopeless_by_id(
        &self,
        snapshot: &QuotaTree,
        preemptor: &Preemptor,
        amounts: &[(Option<usize>, i64)],
        preempt: &[Option<usize>],
    ) -> bool {
        let queue = &self.queues[preemptor.queue];
        let id = self.ids[preemptor.queue];
        borrow_within_cohort_forbidden(queue)
            && !under_nominal(snapshot, id, preempt)
            && queue.preemption.within_cluster_queue == PreemptionPolicy::Never
            && !(self.subtrees(snapshot, preemptor, amounts)).any(|(_, advantage)| advantage)
    }

    /// The queues to take candidates from: the preemptor's own (list 2), those over which it
    /// has a hierarchical advantage (list 0), and those it may only take by priority (list 1).
    fn sources(
        &self,
        snapshot: &QuotaTree,
        preemptor: &Preemptor,
        usage: &BTreeMap<FlavorResource, i64>,
        wanted: &Wanted,
    ) -> Vec<Source> {
        let queue = &self.queues[preemptor.queue];
        let mut out = Vec::new();
        if queue.preemption.within_cluster_queue != PreemptionPolicy::Never {
            out.push(Source {
                queue: preemptor.queue,
                lca: None,
                list: 2,
                advantage: false,
            });
        }
        let mut previous = None;
        let amounts = snapshot.amounts(usage);
        for (root, advantage) in self.subtrees(snapshot, preemptor, &amounts) {
            let source = Source {
                queue: 0,
                lca: Some(root),
                list: if advantage { 0 } else { 1 },
                advantage,
            };
            self.in_subtree(
                snapshot, root, previous, source, preemptor, wanted, &mut out,
            );
            previous = Some(root);
        }
        out
    }

    /// The cohorts above the preemptor's queue whose subtrees its reclaim searches, lowest
    /// first, each with whether the preemptor has a hierarchical advantage there: `usage`
    /// fits in the quota of the queue or of a cohort below (`collectCandidatesForHierarchicalReclaim`).
    fn subtrees<'s>(
        &self,
        snapshot: &'s QuotaTree,
        preemptor: &Preemptor,
        amounts: &[(Option<usize>, i64)],
    ) -> impl Iterator<Item = (usize, bool)> + 's {
        let node = self.ids[preemptor.queue].0;
        let reclaims = self.queues[preemptor.queue]
            .preemption
            .reclaim_within_cohort
            != PreemptionPolicy::Never;
        let mut remaining = amounts.to_vec();
        let mut advantage = reclaims && snapshot.fits_in_quota(node, &mut remaining);
        (snapshot.ancestors(node))
            .take_while(move |_| reclaims)
            .map(move |root| {
                let here = advantage;
                advantage = advantage || snapshot.fits_in_quota(root, &mut remaining);
                (root, here)
            })
    }

    /// `collectCandidatesInSubtree`: queues over their quota below `cohort`, skipping the
    /// subtree already visited and subtrees within their quota.
    #[allow(clippy::too_many_arguments)]
    fn in_subtree(
        &self,
        snapshot: &QuotaTree,
        cohort: usize,
        skip: Option<usize>,
        source: Source,
        preemptor: &Preemptor,
        wanted: &Wanted,
        out: &mut Vec<Source>,
    ) {
        for &child in snapshot.child_cohorts(cohort) {
            if Some(child) == skip || snapshot.within_nominal(child, &wanted.ids) {
                continue;
            }
            self.in_subtree(snapshot, child, skip, source, preemptor, wanted, out);
        }
        for &child in snapshot.child_queues(cohort) {
            let Some(q) = self.ids.iter().position(|id| id.0 == child) else {
                continue;
            };
            if q == preemptor.queue || snapshot.within_nominal(child, &wanted.ids) {
                continue;
            }
            out.push(Source { queue: q, ..source });
        }
    }

    /// `classifyPreemptionVariant` (`None`: never).
    fn classify(
        &self,
        h: &Holder,
        preemptor: &Preemptor,
        wanted: &Wanted,
        advantage: bool,
    ) -> Option<Variant> {
        let hit = h.mask & wanted.mask;
        let exact = hit & (1u128 << OVERFLOW) == 0;
        if hit == 0 || (!exact && !h.usage.keys().any(|fr| wanted.frs.contains(fr))) {
            return None;
        }
        let queue = &self.queues[preemptor.queue];
        let same = h.queue == preemptor.queue;
        let policy = if same {
            queue.preemption.within_cluster_queue
        } else {
            queue.preemption.reclaim_within_cohort
        };
        if !satisfies(policy, preemptor, h) {
            return None;
        }
        if same {
            return Some(Variant::WithinQueue);
        }
        if advantage {
            return Some(Variant::HierarchicalReclaim);
        }
        if borrow_within_cohort_forbidden(queue) {
            return Some(Variant::ReclaimWithoutBorrowing);
        }
        let above_threshold = h.priority >= preemptor.priority
            || (queue.preemption.borrow_within_cohort_max_priority).is_some_and(|t| h.priority > t);
        Some(if above_threshold {
            Variant::ReclaimWithoutBorrowing
        } else {
            Variant::ReclaimWhileBorrowing
        })
    }

    /// `CandidatesOrdering` of two holders, for a preemptor in queue `queue`: evicted first,
    /// other queues before the preemptor's, lower priority first, more recently admitted
    /// first, then the key ([`rank`]).
    #[cfg(test)]
    pub(super) fn order(&self, queue: usize, a: usize, b: usize) -> std::cmp::Ordering {
        let rank_of = |h: usize| rank(&self.holders[h], queue);
        (rank_of(a), a).cmp(&(rank_of(b), b))
    }

    /// `candidateIsValid` but for its borrowing check: earlier removals may have brought the
    /// candidate's queue (or a cohort below the common ancestor) back within its quota. The
    /// same for every candidate of a queue.
    fn queue_valid(&self, snapshot: &QuotaTree, c: &Candidate, ids: &[usize]) -> bool {
        if c.list == 2 {
            return true; // the preemptor's own queue
        }
        let node = self.ids[c.queue].0;
        if snapshot.within_nominal(node, ids) {
            return false;
        }
        for ancestor in snapshot.ancestors(node) {
            if Some(ancestor) == c.lca {
                break;
            }
            if snapshot.within_nominal(ancestor, ids) {
                return false;
            }
        }
        true
    }

    /// `fillBackWorkloads`: in reverse order, every target but the last that the preemptor
    /// still fits without is spared.
    fn fill_back(
        &self,
        snapshot: &mut QuotaTree,
        id: QueueId,
        usage: &BTreeMap<FlavorResource, i64>,
        mut targets: Vec<Target>,
        borrowing: bool,
    ) -> Vec<Target> {
        for i in (0..targets.len().saturating_sub(1)).rev() {
            self.add(snapshot, targets[i].holder);
            if fits(snapshot, id, usage, borrowing) {
                targets.swap_remove(i);
            } else {
                self.remove(snapshot, targets[i].holder);
            }
        }
        targets
    }

    pub fn remove(&self, snapshot: &mut QuotaTree, holder: usize) {
        self.holders[holder].remove_usage(snapshot, self.ids);
    }

    pub fn add(&self, snapshot: &mut QuotaTree, holder: usize) {
        self.holders[holder].add_usage(snapshot, self.ids);
    }
}

/// `queueUnderNominalInResourcesNeedingPreemption`: the queue's usage below its nominal
/// quota in every flavor-resource that needs preemption.
/// (`preempt`: their ids, see [`Preemption::hopeless_by_id`]).
fn under_nominal(snapshot: &QuotaTree, id: QueueId, preempt: &[Option<usize>]) -> bool {
    (preempt.iter()).all(|&f| snapshot.quota_of(id, f).nominal > snapshot.usage_by_id(id, f))
}

/// `IsBorrowingWithinCohortForbidden`.
fn borrow_within_cohort_forbidden(queue: &ClusterQueue) -> bool {
    queue.preemption.borrow_within_cohort == PreemptionPolicy::Never
}

/// `workloadFits`: every flavor-resource available, and without borrowing when not allowed.
fn fits(
    snapshot: &QuotaTree,
    id: QueueId,
    usage: &BTreeMap<FlavorResource, i64>,
    borrowing: bool,
) -> bool {
    usage.iter().all(|(fr, &v)| {
        (borrowing || !snapshot.queue_borrowing_with(id, fr, v)) && v <= snapshot.available(id, fr)
    })
}

/// The oracle the flavor assigner asks (`PreemptionOracle.SimulatePreemption`): preemption
/// run for one flavor-resource against its own copy of the cycle's snapshot.
pub struct Oracle<'a> {
    pub preemption: Preemption<'a>,
    pub preemptor: Preemptor,
    /// The cycle's snapshot; copied on the first question only (most assignments fit or
    /// cannot fit at all and never ask).
    pub base: &'a QuotaTree,
    pub snapshot: std::cell::RefCell<Option<QuotaTree>>,
}

impl PreemptionOracle for Oracle<'_> {
    fn simulate(
        &self,
        queue: QueueId,
        fr: FrName,
        id: Option<usize>,
        quantity: i64,
    ) -> (Possibility, usize) {
        let hopeless =
            (self.preemption).hopeless_by_id(self.base, &self.preemptor, &[(id, quantity)], &[id]);
        if hopeless {
            let borrow = self.base.borrowing_height_of(queue, id, quantity).0;
            return (Possibility::NoCandidates, borrow);
        }
        let fr = &(fr.0.to_string(), fr.1.to_string());
        let usage = BTreeMap::from([(fr.clone(), quantity)]);
        let frs = BTreeSet::from([fr.clone()]);
        // The copy holds the base's usage (every question restores it): the shortcut, just
        // asked by id, would answer the same; the search alone is left.
        let mut copy = self.snapshot.borrow_mut();
        let snapshot = copy.get_or_insert_with(|| self.base.clone());
        let targets = (self.preemption).search(snapshot, &self.preemptor, &usage, &frs);
        if targets.is_empty() {
            return (
                Possibility::NoCandidates,
                snapshot.borrowing_height(queue, fr, quantity).0,
            );
        }
        for t in &targets {
            self.preemption.remove(snapshot, t.holder);
        }
        let borrow = snapshot.borrowing_height(queue, fr, quantity).0;
        for t in &targets {
            self.preemption.add(snapshot, t.holder);
        }
        let own = (targets.iter())
            .any(|t| self.preemption.holders[t.holder].queue == self.preemptor.queue);
        (
            if own {
                Possibility::Preempt
            } else {
                Possibility::Reclaim
            },
            borrow,
        )
    }
}
