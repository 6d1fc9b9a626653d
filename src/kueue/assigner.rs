//! Flavor assignment: for each pod set of a workload, per resource group, the first flavor (in
//! the ClusterQueue's order) whose labels and taints the pod set accepts and whose quota fits,
//! under the ClusterQueue's flavor fungibility. A port of kubernetes-sigs/kueue
//! `pkg/scheduler/flavorassigner/flavorassigner.go` (`assignFlavors`, `findFlavorForPodSets`,
//! `checkFlavorForPodSets`, `flavorSelector`, `fitsResourceQuota`, `isPreferred`,
//! `shouldTryNextFlavor`, `Assignment.Message`), with the FlavorFungibility gate on (its
//! default). Every message is upstream's, verbatim.
//!
//! Not (yet) simulated: topology-aware scheduling, partial admission, workload slices, fair
//! sharing, the scan position a later cycle resumes from (`LastAssignment`): each assignment
//! starts at the first flavor.

use std::collections::BTreeMap;
use std::sync::Arc;

use smallvec::SmallVec;

use k8s_openapi::api::core::v1::{
    Affinity, NodeSelectorRequirement, NodeSelectorTerm, Taint, Toleration,
};

use super::api::{ClusterQueue, FlavorFungibility, FlavorResource, FungibilityPreference};
use super::api::{ResourceFlavor, ResourceGroup, ResourceQuota};
use super::quota::{QueueId, QuotaTree};
use crate::features::FeatureGates;
use crate::model::quantity::{Format, Quantity};
use crate::model::resources;
use crate::model::shared::Shared;
use crate::sched::plugins::{node_affinity, taint_toleration};

/// A group of identical pods of a workload, with their per-pod requests in Kueue's units.
/// Equal and hashed as a whole (`admission::equivalence`): workloads whose pod sets are equal
/// get the same flavors. The requests, node selector and affinity are the pod's own, shared:
/// a replay makes a workload per job, and copying them was most of that.
#[derive(Debug, Default, PartialEq)]
pub struct PodSet {
    pub name: Arc<str>,
    pub count: i64,
    pub requests: Shared<BTreeMap<String, i64>>,
    pub tolerations: Vec<Toleration>,
    pub node_selector: Shared<BTreeMap<String, String>>,
    pub affinity: Shared<Option<Affinity>>,
}

impl Clone for PodSet {
    fn clone(&self) -> Self {
        PodSet {
            name: Arc::clone(&self.name),
            count: self.count,
            requests: self.requests.share(),
            tolerations: self.tolerations.clone(),
            node_selector: self.node_selector.share(),
            affinity: self.affinity.share(),
        }
    }
}

/// A pod set's flavors as they are found.
type Choices = SmallVec<[FlavorChoice; 4]>;
/// Reasons as they are found.
type Reasons = SmallVec<[Reason; 4]>;

/// `FlavorAssignmentMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mode {
    NoFit,
    Preempt,
    Fit,
}

/// What preemption could do for a flavor (`preemptioncommon.PreemptionPossibility`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Possibility {
    NoCandidates,
    Preempt,
    Reclaim,
}

/// The preemption simulation the assigner asks (`preemptionOracle.SimulatePreemption`): for
/// a flavor-resource (flavor, resource) and the quantity needed, what preemption could do and
/// how far the queue would borrow after it.
pub trait PreemptionOracle {
    /// `id`: the flavor-resource's id in the assigner's quota tree.
    fn simulate(
        &self,
        queue: QueueId,
        fr: FrName,
        id: Option<usize>,
        quantity: i64,
    ) -> (Possibility, usize);
}

/// A flavor-resource by its names: (flavor, resource).
pub type FrName<'n> = (&'n str, &'n str);

/// An oracle that finds no victims: what Kueue finds when no preemption policy applies.
pub struct NoPreemption;

impl PreemptionOracle for NoPreemption {
    fn simulate(&self, _: QueueId, _: FrName, _: Option<usize>, _: i64) -> (Possibility, usize) {
        (Possibility::NoCandidates, 0)
    }
}

/// `preemptionMode`, ordered worst to best.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum PreemptionMode {
    NoFit,
    NoCandidates,
    Preempt,
    Reclaim,
    Fit,
}

impl PreemptionMode {
    fn assignment_mode(self) -> Mode {
        match self {
            PreemptionMode::NoFit => Mode::NoFit,
            PreemptionMode::Fit => Mode::Fit,
            _ => Mode::Preempt,
        }
    }
}

/// `granularMode`: the preemption mode and how far up the cohort tree quota comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Granular {
    preemption: PreemptionMode,
    borrowing: usize,
}

const WORST: Granular = Granular {
    preemption: PreemptionMode::NoFit,
    borrowing: usize::MAX,
};
const BEST: Granular = Granular {
    preemption: PreemptionMode::Fit,
    borrowing: 0,
};

/// `isPreferred`: whether `a` is better than `b` under the queue's fungibility preference.
fn is_preferred(a: Granular, b: Granular, f: &FlavorFungibility) -> bool {
    if a.preemption == PreemptionMode::NoFit {
        return false;
    }
    if b.preemption == PreemptionMode::NoFit {
        return true;
    }
    let (a_none, b_none) = (
        a.preemption == PreemptionMode::NoCandidates,
        b.preemption == PreemptionMode::NoCandidates,
    );
    if a_none != b_none {
        return !a_none;
    }
    if f.preference == Some(FungibilityPreference::PreemptionOverBorrowing) {
        if a.borrowing != b.borrowing {
            return a.borrowing < b.borrowing;
        }
        return a.preemption > b.preemption;
    }
    if a.preemption != b.preemption {
        return a.preemption > b.preemption;
    }
    a.borrowing < b.borrowing
}

/// `shouldTryNextFlavor`.
fn should_try_next(mode: Granular, f: &FlavorFungibility) -> bool {
    matches!(
        mode.preemption,
        PreemptionMode::NoFit | PreemptionMode::NoCandidates
    ) || (matches!(
        mode.preemption,
        PreemptionMode::Preempt | PreemptionMode::Reclaim
    ) && f.try_next_when_can_preempt)
        || (mode.borrowing != 0 && f.try_next_when_can_borrow)
}

/// A flavor-resource of a queue by its places in the queue's resource groups: the group,
/// the flavor in it, the resource among its covered resources. An assignment holds places,
/// not names: it allocates nothing per resource, and [`Assignment::names`] gives the names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Place {
    pub group: usize,
    pub flavor: usize,
    pub resource: usize,
}

/// One resource's flavor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FlavorChoice {
    pub place: Place,
    pub mode: Mode,
    pub borrow: usize,
}

/// The quota an assignment takes in one flavor-resource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    pub place: Place,
    pub amount: i64,
}

/// One of `Status.reasons`: why a flavor does not fit, kept as the numbers and the places of
/// the names in the queue's resource groups, and worded (upstream's text, verbatim) only
/// when read ([`Assignment::reasons`]): most nominations end without a fit and their
/// message is never read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reason {
    /// `resource %s unavailable in ClusterQueue`.
    Unavailable { resource: String },
    /// `flavor %s not found`.
    NotFound { group: usize, flavor: usize },
    /// `untolerated taint %s in flavor %s` (the taint as Go prints it).
    Taint {
        group: usize,
        flavor: usize,
        taint: String,
    },
    /// `flavor %s doesn't match node affinity`.
    Affinity { group: usize, flavor: usize },
    /// `insufficient quota for %s in flavor %s, previously considered podsets requests (%s) +
    /// current podset request (%s) > maximum capacity (%s)`.
    Quota {
        group: usize,
        flavor: usize,
        resource: usize,
        assumed: i64,
        request: i64,
        capacity: i64,
    },
    /// `insufficient unused quota for %s in flavor %s, %s more needed`.
    Unused {
        group: usize,
        flavor: usize,
        resource: usize,
        more: i64,
    },
}

impl Reason {
    /// The reason as `flavorassigner.go` words it; names are the places in `groups`.
    fn text(&self, groups: &[ResourceGroup]) -> String {
        let flavor = |g: usize, f: usize| &groups[g].flavors[f];
        let resource = |g: usize, r: usize| &groups[g].covered_resources[r];
        match *self {
            Reason::Unavailable { ref resource } => {
                format!("resource {resource} unavailable in ClusterQueue")
            }
            Reason::NotFound { group, flavor: f } => {
                format!("flavor {} not found", flavor(group, f))
            }
            Reason::Taint {
                group,
                flavor: f,
                ref taint,
            } => format!("untolerated taint {taint} in flavor {}", flavor(group, f)),
            Reason::Affinity { group, flavor: f } => {
                format!("flavor {} doesn't match node affinity", flavor(group, f))
            }
            Reason::Quota {
                group,
                flavor: f,
                resource: r,
                assumed,
                request,
                capacity,
            } => {
                let r = resource(group, r);
                format!(
                    "insufficient quota for {r} in flavor {}, previously considered podsets requests ({}) + current podset request ({}) > maximum capacity ({})",
                    flavor(group, f),
                    quantity_string(r, assumed),
                    quantity_string(r, request),
                    quantity_string(r, capacity),
                )
            }
            Reason::Unused {
                group,
                flavor: f,
                resource: r,
                more,
            } => {
                let r = resource(group, r);
                format!(
                    "insufficient unused quota for {r} in flavor {}, {} more needed",
                    flavor(group, f),
                    quantity_string(r, more)
                )
            }
        }
    }
}

/// A pod set's flavors per resource and, when not all fit, why.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PodSetAssignment {
    pub name: Arc<str>,
    pub count: i64,
    /// Sorted by resource name ([`Assignment::flavors`] names them). Inline, as are the
    /// reasons and the usage: most nominations are computed, read once and dropped.
    pub flavors: SmallVec<[FlavorChoice; 4]>,
    /// `Status.reasons`, as found: [`Assignment::reasons`] words and sorts them.
    pub reasons: SmallVec<[Reason; 4]>,
    /// Why the flavors tried before those that fit were not taken. Kueue drops these once a
    /// flavor fits; they are kept for `schedsim explain` ([`Assignment::passed_over`]). A
    /// `Vec`: mostly empty, and kept with every admission.
    pub passed_over: Vec<Reason>,
}

impl PodSetAssignment {
    /// `RepresentativeMode`: the worst mode among its flavors.
    pub fn mode(&self) -> Mode {
        if self.reasons.is_empty() {
            return Mode::Fit;
        }
        (self.flavors.iter().map(|f| f.mode).min()).unwrap_or(Mode::NoFit)
    }
}

/// Flavors for every pod set, the quota they take, and how far they borrow.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Assignment {
    pub pod_sets: Vec<PodSetAssignment>,
    pub borrowing: usize,
    /// Sorted by flavor name, then resource name ([`Self::usage`] names them).
    usage: SmallVec<[Usage; 4]>,
    /// The queue's resource groups, which places and reasons name flavors and resources in.
    groups: Arc<[ResourceGroup]>,
}

impl Assignment {
    /// The (flavor, resource) names of a place.
    pub fn names(&self, p: Place) -> FrName<'_> {
        let g = &self.groups[p.group];
        (&g.flavors[p.flavor], &g.covered_resources[p.resource])
    }

    /// A pod set's flavors as (resource, flavor) names with the choice, by resource name.
    pub fn flavors<'a>(
        &'a self,
        ps: &'a PodSetAssignment,
    ) -> impl Iterator<Item = (&'a str, &'a str, &'a FlavorChoice)> + 'a {
        (ps.flavors.iter()).map(|c| {
            let (flavor, resource) = self.names(c.place);
            (resource, flavor, c)
        })
    }

    /// The quota it takes, by flavor-resource names, in their order.
    pub fn usage(&self) -> impl Iterator<Item = (FrName<'_>, i64)> + '_ {
        (self.usage.iter()).map(|u| (self.names(u.place), u.amount))
    }

    /// [`Self::usage`] as a map.
    pub fn usage_map(&self) -> BTreeMap<FlavorResource, i64> {
        (self.usage())
            .map(|((f, r), v)| ((f.to_string(), r.to_string()), v))
            .collect()
    }

    /// `RepresentativeMode`: the worst pod set's (NoFit without any).
    pub fn mode(&self) -> Mode {
        (self.pod_sets.iter().map(PodSetAssignment::mode).min()).unwrap_or(Mode::NoFit)
    }

    /// A pod set's `Status.reasons`, worded and sorted as `Status.Message` sorts them.
    pub fn reasons(&self, ps: &PodSetAssignment) -> Vec<String> {
        let mut out: Vec<String> = (ps.reasons.iter()).map(|r| r.text(&self.groups)).collect();
        out.sort();
        out
    }

    /// Why a pod set's flavors that fit were not the first tried, worded as
    /// [`Self::reasons`] words them.
    pub fn passed_over(&self, ps: &PodSetAssignment) -> Vec<String> {
        let mut out: Vec<String> = (ps.passed_over.iter())
            .map(|r| r.text(&self.groups))
            .collect();
        out.sort();
        out
    }

    /// `Assignment.Message`: each pod set that does not fit, with its reasons.
    pub fn message(&self) -> String {
        (self.pod_sets.iter())
            .filter(|ps| !ps.reasons.is_empty())
            .map(|ps| {
                format!(
                    "couldn't assign flavors to pod set {}: {}",
                    ps.name,
                    self.reasons(ps).join(", ")
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    /// Adds a pod set's assignment; `requests` are its total requests.
    fn append(&mut self, ps: PodSetAssignment, requests: &[(&str, i64)]) {
        for choice in &ps.flavors {
            self.borrowing = self.borrowing.max(choice.borrow);
            let (flavor, resource) = self.names(choice.place);
            let amount = request_of(requests, resource).unwrap_or(0);
            let at =
                (self.usage).binary_search_by(|u| self.names(u.place).cmp(&(flavor, resource)));
            match at {
                Ok(i) => self.usage[i].amount = self.usage[i].amount.saturating_add(amount),
                Err(i) => self.usage.insert(
                    i,
                    Usage {
                        place: choice.place,
                        amount,
                    },
                ),
            }
        }
        self.pod_sets.push(ps);
    }

    /// What the quota tree reads of a usage: its id there and the amount.
    pub fn amounts(&self, tree: &QuotaTree, q: QueueId) -> SmallVec<[(Option<usize>, i64); 8]> {
        (self.usage.iter())
            .map(|u| (self.fr_id(tree, q, u.place), u.amount))
            .collect()
    }

    /// The id in `tree` of the flavor-resource at `place` of queue `q`.
    pub fn fr_id(&self, tree: &QuotaTree, q: QueueId, place: Place) -> Option<usize> {
        tree.id_at(q, &self.groups, (place.group, place.flavor, place.resource))
    }
}

/// A resource's quantity among `requests` (sorted by resource).
fn request_of(requests: &[(&str, i64)], resource: &str) -> Option<i64> {
    (requests.binary_search_by(|(r, _)| (*r).cmp(resource)).ok()).map(|i| requests[i].1)
}

/// What flavor assignment reads: the queue, its place in the quota tree, the flavors.
pub struct Assigner<'a> {
    pub queue: &'a ClusterQueue,
    pub id: QueueId,
    pub tree: &'a QuotaTree,
    pub flavors: &'a BTreeMap<String, ResourceFlavor>,
    pub oracle: &'a dyn PreemptionOracle,
    pub gates: &'a FeatureGates,
}

impl Assigner<'_> {
    /// `assignFlavors`: pod sets in order; the first that cannot get flavors ends the
    /// assignment.
    pub fn assign(&self, pod_sets: &[PodSet]) -> Assignment {
        let refusals = Refusals::new(self.queue, self.flavors, self.gates, pod_sets);
        self.assign_refused(pod_sets, &refusals)
    }

    /// [`Self::assign`] with the pod sets' [`Refusals`] in this queue known.
    pub fn assign_refused(&self, pod_sets: &[PodSet], refusals: &Refusals) -> Assignment {
        let mut assignment = Assignment {
            pod_sets: Vec::with_capacity(pod_sets.len()),
            groups: Arc::clone(&self.queue.resource_groups),
            ..Assignment::default()
        };
        let counts_pods = self.queue.group_of(resources::PODS).is_some();
        for (i, ps) in pod_sets.iter().enumerate() {
            let requests = total_requests(ps, counts_pods);
            let mut chosen: SmallVec<[FlavorChoice; 4]> = SmallVec::new();
            let (mut reasons, mut passed_over) = (SmallVec::new(), Vec::new());
            // Kueue ranges over a Go map here (random order); sorted order is one of its
            // orders, and the reasons are sorted before they are shown.
            for &(resource, quantity) in &requests {
                let group = self.queue.group_index_of(resource);
                if group.is_none() && quantity == 0 {
                    continue;
                }
                // A group's flavor, once found, covers every resource of the group.
                if group.is_some() && chosen.iter().any(|c| Some(c.place.group) == group) {
                    continue;
                }
                let refused = |g: usize, f: usize| refusals.of(i, g, f);
                let start = reasons.len();
                let found = self.find_flavor(
                    refused,
                    (&requests, resource, group),
                    &assignment.usage,
                    (&mut chosen, &mut reasons, &mut passed_over),
                );
                if !found {
                    // The reasons are this resource's alone.
                    chosen.clear();
                    passed_over.clear();
                    reasons.drain(..start);
                    break;
                }
            }
            chosen.sort_by_key(|c| assignment.names(c.place).1);
            // `atLeastOnePodsAssignmentFailed`: requests, but no flavor for any of them.
            let failed = !requests.is_empty() && chosen.is_empty();
            let done = PodSetAssignment {
                name: Arc::clone(&ps.name),
                count: ps.count,
                flavors: chosen,
                reasons,
                passed_over,
            };
            assignment.append(done, &requests);
            if failed {
                break;
            }
        }
        assignment
    }

    /// `findFlavorForPodSets`: the flavor for every resource of `resource`'s group (`group`),
    /// added to `chosen` with the reasons the other flavors were not (none when one fits)
    /// added to `reasons` (to `passed_over` when one fits). Returns whether a flavor was
    /// found.
    fn find_flavor<'r>(
        &self,
        refused: impl Fn(usize, usize) -> Option<&'r Reason>,
        (requests, resource, group): (&[(&str, i64)], &str, Option<usize>),
        assigned: &[Usage],
        (chosen, reasons, passed_over): (&mut Choices, &mut Reasons, &mut Vec<Reason>),
    ) -> bool {
        let Some(g) = group else {
            let resource = resource.to_string();
            reasons.push(Reason::Unavailable { resource });
            return false;
        };
        let start = reasons.len();
        let covered = &self.queue.resource_groups[g].covered_resources;
        // The pod set's requests of the group's resources, with their places in it.
        let wanted: SmallVec<[(usize, &str, i64); 4]> = (requests.iter())
            .filter_map(|&(r, v)| covered.iter().position(|c| c == r).map(|i| (i, r, v)))
            .collect();
        let fungibility = &self.queue.flavor_fungibility;
        let (mut best, mut best_mode) = (SmallVec::<[FlavorChoice; 4]>::new(), WORST);
        for (f, name) in self.queue.resource_groups[g].flavors.iter().enumerate() {
            if let Some(why) = refused(g, f) {
                reasons.push(why.clone());
                continue;
            }
            let mut choices = SmallVec::<[FlavorChoice; 4]>::new();
            let mut mode = BEST;
            for &(place, r, val) in &wanted {
                let groups = &self.queue.resource_groups;
                let id = self.tree.id_at(self.id, groups, (g, f, place));
                let at = Place {
                    group: g,
                    flavor: f,
                    resource: place,
                };
                let used = (assigned.iter())
                    .find(|u| u.place == at)
                    .map_or(0, |u| u.amount);
                let quota = self.tree.quota_of(self.id, id);
                let (preemption, borrow, why) =
                    self.fits_quota(at, (name, r, id), used, val, quota);
                reasons.extend(why);
                let this = Granular {
                    preemption,
                    borrowing: borrow,
                };
                if is_preferred(mode, this, fungibility) {
                    mode = this;
                }
                if mode.preemption == PreemptionMode::NoFit {
                    continue;
                }
                choices.push(FlavorChoice {
                    place: at,
                    mode: preemption.assignment_mode(),
                    borrow,
                });
            }
            if !should_try_next(mode, fungibility) {
                (best, best_mode) = (choices, mode);
                break;
            }
            if is_preferred(mode, best_mode, fungibility) {
                (best, best_mode) = (choices, mode);
            }
        }
        if best_mode.preemption == PreemptionMode::Fit {
            passed_over.extend(reasons.drain(start..));
        }
        chosen.extend_from_slice(&best);
        !best.is_empty()
    }

    /// `fitsResourceQuota`: the preemption mode, the borrowing height and the reason, for
    /// the flavor-resource at `(group, flavor, resource)` (its names, its quota tree id).
    fn fits_quota(
        &self,
        Place {
            group,
            flavor,
            resource,
        }: Place,
        (flavor_name, resource_name, id): (&str, &str, Option<usize>),
        assumed: i64,
        request: i64,
        quota: ResourceQuota,
    ) -> (PreemptionMode, usize, Option<Reason>) {
        let available = self.tree.available_of(self.id, id);
        let max_capacity = self.tree.potential_available_of(self.id, id);
        let val = assumed.saturating_add(request);
        if val > max_capacity {
            let reason = Reason::Quota {
                group,
                flavor,
                resource,
                assumed,
                request,
                capacity: max_capacity,
            };
            return (PreemptionMode::NoFit, 0, Some(reason));
        }
        let (borrow, may_reclaim) = self.tree.borrowing_height_of(self.id, id, val);
        if val <= available {
            return (PreemptionMode::Fit, borrow, None);
        }
        let reason = Reason::Unused {
            group,
            flavor,
            resource,
            more: val - available,
        };
        if quota.nominal >= val || may_reclaim || self.can_preempt_while_borrowing() {
            let fr = (flavor_name, resource_name);
            let (possibility, borrow_after) = self.oracle.simulate(self.id, fr, id, val);
            let mode = match possibility {
                Possibility::NoCandidates => PreemptionMode::NoCandidates,
                Possibility::Preempt => PreemptionMode::Preempt,
                Possibility::Reclaim => PreemptionMode::Reclaim,
            };
            return (mode, borrow_after, Some(reason));
        }
        (PreemptionMode::NoFit, borrow, Some(reason))
    }

    /// `canPreemptWhileBorrowing` (fair sharing off).
    fn can_preempt_while_borrowing(&self) -> bool {
        self.queue.preemption.borrow_within_cohort != super::api::PreemptionPolicy::Never
    }
}

/// A pod set's total requests, sorted by resource (with `pods` when the queue covers it).
fn total_requests(ps: &PodSet, counts_pods: bool) -> SmallVec<[(&str, i64); 8]> {
    let mut requests: SmallVec<[(&str, i64); 8]> = (ps.requests.iter())
        .map(|(r, v)| (r.as_str(), v.saturating_mul(ps.count)))
        .collect();
    if counts_pods {
        match requests.binary_search_by(|(r, _)| (*r).cmp(resources::PODS)) {
            Ok(i) => requests[i].1 = ps.count,
            Err(i) => requests.insert(i, (resources::PODS, ps.count)),
        }
    }
    requests
}

/// Per pod set, per flavor of each of a queue's resource groups, why the pod set cannot use
/// the flavor (`checkFlavorForPodSets`). It depends on the pod sets and the flavors only: a
/// workload's nominations in a queue share it.
#[derive(Debug, Clone)]
pub struct Refusals {
    /// Per pod set, the flavors of every group in order (`flavors` per pod set), in one list:
    /// a nomination reads it from a workload's cold memory.
    refused: Vec<Option<Reason>>,
    flavors: usize,
    pod_sets: usize,
    /// Where each group's flavors start in a pod set's list.
    starts: Vec<usize>,
}

impl Refusals {
    pub fn new(
        queue: &ClusterQueue,
        flavors: &BTreeMap<String, ResourceFlavor>,
        gates: &FeatureGates,
        pod_sets: &[PodSet],
    ) -> Refusals {
        let mut starts = Vec::with_capacity(queue.resource_groups.len());
        let mut next = 0;
        for g in queue.resource_groups.iter() {
            starts.push(next);
            next += g.flavors.len();
        }
        let refused = (pod_sets.iter())
            .flat_map(|ps| {
                let groups = queue.resource_groups.iter().enumerate();
                (groups
                    .flat_map(|(group, g)| g.flavors.iter().enumerate().map(move |f| (group, f))))
                .map(move |(group, (flavor, name))| {
                    Some(match refusal(flavors, gates, name, ps)? {
                        Refusal::NotFound => Reason::NotFound { group, flavor },
                        Refusal::Taint(taint) => Reason::Taint {
                            group,
                            flavor,
                            taint: go_taint(taint),
                        },
                        Refusal::Affinity => Reason::Affinity { group, flavor },
                    })
                })
            })
            .collect();
        Refusals {
            refused,
            flavors: next,
            pod_sets: pod_sets.len(),
            starts,
        }
    }

    /// Why pod set `ps` cannot use flavor `flavor` of group `group`, if it cannot.
    fn of(&self, ps: usize, group: usize, flavor: usize) -> Option<&Reason> {
        self.refused[ps * self.flavors + self.starts[group] + flavor].as_ref()
    }
}

/// Why a pod set cannot use a flavor (`checkFlavorForPodSets`).
enum Refusal<'f> {
    NotFound,
    Taint(&'f Taint),
    Affinity,
}

/// `checkFlavorForPodSets`'s verdict for flavor `name`.
fn refusal<'f>(
    flavors: &'f BTreeMap<String, ResourceFlavor>,
    gates: &FeatureGates,
    name: &str,
    ps: &PodSet,
) -> Option<Refusal<'f>> {
    let Some(flavor) = flavors.get(name) else {
        return Some(Refusal::NotFound);
    };
    let untolerated = (flavor.node_taints.iter())
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .find(|t| {
            !(ps.tolerations.iter().chain(&flavor.tolerations))
                .any(|tol| taint_toleration::tolerates_taint(tol, t, gates))
        });
    if let Some(taint) = untolerated {
        return Some(Refusal::Taint(taint));
    }
    (!flavor_selector_matches(ps, &flavor.node_labels)).then_some(Refusal::Affinity)
}

/// The flavor-resources an assignment in `queue` of the pod sets `refusals` are of reads:
/// every covered resource of every flavor some pod set may use. Quota anywhere else cannot
/// change its outcome.
pub fn flavor_resources_read<'q>(
    queue: &'q ClusterQueue,
    refusals: &'q Refusals,
) -> impl Iterator<Item = FrName<'q>> + 'q {
    let groups = queue.resource_groups.iter().enumerate();
    (groups.flat_map(|(g, group)| group.flavors.iter().enumerate().map(move |f| (g, group, f))))
        .filter(move |&(g, _, (f, _))| {
            (0..refusals.pod_sets).any(|ps| refusals.of(ps, g, f).is_none())
        })
        .flat_map(|(_, group, (_, name))| {
            (group.covered_resources.iter()).map(move |r| (name.as_str(), r.as_str()))
        })
}

/// `flavorSelector(...).Match`: the pod set's nodeSelector and required node affinity,
/// restricted to the flavor's own label keys, against a node carrying the flavor's labels.
fn flavor_selector_matches(ps: &PodSet, labels: &BTreeMap<String, String>) -> bool {
    let selector_ok = (ps.node_selector.iter())
        .filter(|(k, _)| labels.contains_key(*k))
        .all(|(k, v)| labels.get(k) == Some(v));
    let required = (ps.affinity.as_ref())
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|n| {
            n.required_during_scheduling_ignored_during_execution
                .as_ref()
        });
    let Some(required) = required else {
        return selector_ok;
    };
    if !selector_ok {
        return false;
    }
    // A term's expressions on the flavor's own label keys.
    fn kept<'t>(
        t: &'t NodeSelectorTerm,
        labels: &'t BTreeMap<String, String>,
    ) -> impl Iterator<Item = &'t NodeSelectorRequirement> {
        (t.match_expressions.iter().flatten()).filter(|e| labels.contains_key(&e.key))
    }
    let terms = &required.node_selector_terms;
    // A term left empty matches every flavor: the terms are ORed.
    terms.is_empty()
        || terms.iter().any(|t| kept(t, labels).next().is_none())
        || terms
            .iter()
            .any(|t| node_affinity::requirements_match(kept(t, labels), labels))
}

/// A taint as Go's `%s` prints the struct value: `{key value effect <nil>}` (a set
/// `timeAdded` prints as `time.Time.String` in UTC).
fn go_taint(t: &Taint) -> String {
    let added = t.time_added.as_ref().map_or("<nil>".to_string(), |time| {
        time.0.strftime("%Y-%m-%d %H:%M:%S +0000 UTC").to_string()
    });
    format!(
        "{{{} {} {} {added}}}",
        t.key,
        t.value.as_deref().unwrap_or(""),
        t.effect
    )
}

/// `ResourceFormatter.ResourceQuantityString`: cpu as millicores in decimal SI, memory and
/// ephemeral storage in canonical binary SI, others in decimal SI.
pub fn quantity_string(resource: &str, v: i64) -> String {
    use num_bigint::BigInt;
    match resource {
        resources::CPU => {
            Quantity::from_decimal(BigInt::from(v), -3, Format::DecimalSI).canonical()
        }
        "memory" | "ephemeral-storage" => {
            let preferred =
                Quantity::from_decimal(BigInt::from(v), 0, Format::BinarySI).canonical();
            match preferred.parse::<Quantity>() {
                Ok(q) => q.canonical(),
                Err(_) => preferred,
            }
        }
        r if r.starts_with("hugepages-") => {
            let preferred =
                Quantity::from_decimal(BigInt::from(v), 0, Format::BinarySI).canonical();
            preferred
                .parse::<Quantity>()
                .map_or(preferred, |q| q.canonical())
        }
        _ => Quantity::from_decimal(BigInt::from(v), 0, Format::DecimalSI).canonical(),
    }
}
