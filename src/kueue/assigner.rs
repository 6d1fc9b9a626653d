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

use k8s_openapi::api::core::v1::{
    Affinity, NodeSelectorRequirement, NodeSelectorTerm, Taint, Toleration,
};

use super::api::{ClusterQueue, FlavorFungibility, FlavorResource, FungibilityPreference};
use super::api::{ResourceFlavor, ResourceQuota};
use super::quota::{QueueId, QuotaTree};
use crate::features::FeatureGates;
use crate::model::quantity::{Format, Quantity};
use crate::model::resources;
use crate::sched::plugins::{node_affinity, taint_toleration};

/// A group of identical pods of a workload, with their per-pod requests in Kueue's units.
#[derive(Debug, Clone, Default)]
pub struct PodSet {
    pub name: String,
    pub count: i64,
    pub requests: BTreeMap<String, i64>,
    pub tolerations: Vec<Toleration>,
    pub node_selector: BTreeMap<String, String>,
    pub affinity: Option<Affinity>,
}

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
/// a flavor-resource and the quantity needed, what preemption could do and how far the
/// queue would borrow after it.
pub trait PreemptionOracle {
    fn simulate(&self, queue: QueueId, fr: &FlavorResource, quantity: i64) -> (Possibility, usize);
}

/// An oracle that finds no victims: what Kueue finds when no preemption policy applies.
pub struct NoPreemption;

impl PreemptionOracle for NoPreemption {
    fn simulate(&self, _: QueueId, _: &FlavorResource, _: i64) -> (Possibility, usize) {
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

/// One resource's flavor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlavorChoice {
    pub flavor: String,
    pub mode: Mode,
    pub borrow: usize,
}

/// A pod set's flavors per resource and, when not all fit, why.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PodSetAssignment {
    pub name: String,
    pub count: i64,
    pub flavors: BTreeMap<String, FlavorChoice>,
    /// `Status.reasons`, sorted as `Status.Message` sorts them.
    pub reasons: Vec<String>,
    /// Total requests of the pod set (with `pods` when the queue covers it).
    pub requests: BTreeMap<String, i64>,
}

impl PodSetAssignment {
    /// `RepresentativeMode`: the worst mode among its flavors.
    pub fn mode(&self) -> Mode {
        if self.reasons.is_empty() {
            return Mode::Fit;
        }
        (self.flavors.values().map(|f| f.mode).min()).unwrap_or(Mode::NoFit)
    }

    fn message(&self) -> String {
        self.reasons.join(", ")
    }
}

/// Flavors for every pod set, the quota they take, and how far they borrow.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Assignment {
    pub pod_sets: Vec<PodSetAssignment>,
    pub borrowing: usize,
    pub usage: BTreeMap<FlavorResource, i64>,
}

impl Assignment {
    /// `RepresentativeMode`: the worst pod set's (NoFit without any).
    pub fn mode(&self) -> Mode {
        (self.pod_sets.iter().map(PodSetAssignment::mode).min()).unwrap_or(Mode::NoFit)
    }

    /// `Assignment.Message`: each pod set that does not fit, with its reasons.
    pub fn message(&self) -> String {
        (self.pod_sets.iter())
            .filter(|ps| !ps.reasons.is_empty())
            .map(|ps| {
                format!(
                    "couldn't assign flavors to pod set {}: {}",
                    ps.name,
                    ps.message()
                )
            })
            .collect::<Vec<_>>()
            .join("; ")
    }

    fn append(&mut self, ps: PodSetAssignment) {
        for (resource, choice) in &ps.flavors {
            self.borrowing = self.borrowing.max(choice.borrow);
            let fr = (choice.flavor.clone(), resource.clone());
            let amount = ps.requests.get(resource).copied().unwrap_or(0);
            let e = self.usage.entry(fr).or_insert(0);
            *e = e.saturating_add(amount);
        }
        self.pod_sets.push(ps);
    }
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
        let mut assignment = Assignment::default();
        let counts_pods = self.queue.group_of(resources::PODS).is_some();
        for ps in pod_sets {
            let mut requests: BTreeMap<String, i64> = (ps.requests.iter())
                .map(|(r, v)| (r.clone(), v.saturating_mul(ps.count)))
                .collect();
            if counts_pods {
                requests.insert(resources::PODS.into(), ps.count);
            }
            let mut flavors: Option<BTreeMap<String, FlavorChoice>> = Some(BTreeMap::new());
            let mut reasons = Vec::new();
            // Kueue ranges over a Go map here (random order); sorted order is one of its
            // orders, and the reasons are sorted before they are shown.
            for (resource, &quantity) in &requests {
                if self.queue.group_of(resource).is_none() && quantity == 0 {
                    continue;
                }
                let assigned = flavors.as_ref().is_some_and(|f| f.contains_key(resource));
                if assigned {
                    continue;
                }
                let (found, status) = self.find_flavor(ps, &requests, resource, &assignment.usage);
                if found.is_empty() {
                    flavors = None;
                    reasons = status;
                    break;
                }
                flavors.get_or_insert_default().extend(found);
                reasons.extend(status);
            }
            reasons.sort();
            let flavors: BTreeMap<String, FlavorChoice> = (flavors.unwrap_or_default().into_iter())
                .filter(|(r, _)| requests.contains_key(r))
                .collect();
            // `atLeastOnePodsAssignmentFailed`: requests, but no flavor for any of them.
            let failed = !requests.is_empty() && flavors.is_empty();
            assignment.append(PodSetAssignment {
                name: ps.name.clone(),
                count: ps.count,
                flavors,
                reasons,
                requests,
            });
            if failed {
                break;
            }
        }
        assignment
    }

    /// `findFlavorForPodSets`: the flavor for every resource of `resource`'s group.
    fn find_flavor(
        &self,
        ps: &PodSet,
        requests: &BTreeMap<String, i64>,
        resource: &str,
        assigned: &BTreeMap<FlavorResource, i64>,
    ) -> (BTreeMap<String, FlavorChoice>, Vec<String>) {
        let Some(group) = self.queue.group_of(resource) else {
            return (
                BTreeMap::new(),
                vec![format!("resource {resource} unavailable in ClusterQueue")],
            );
        };
        let mut reasons = Vec::new();
        let wanted: Vec<(&String, i64)> = (requests.iter())
            .filter(|(r, _)| group.covered_resources.contains(r))
            .map(|(r, v)| (r, *v))
            .collect();
        let fungibility = &self.queue.flavor_fungibility;
        let (mut best, mut best_mode) = (BTreeMap::new(), WORST);
        for name in &group.flavors {
            if let Some(why) = self.check_flavor(name, ps) {
                reasons.push(why);
                continue;
            }
            let mut choices = BTreeMap::new();
            let mut mode = BEST;
            for &(r, val) in &wanted {
                let fr = (name.clone(), r.clone());
                let used = assigned.get(&fr).copied().unwrap_or(0);
                let quota = self.tree.quota(self.id, &fr);
                let (preemption, borrow, why) = self.fits_quota(&fr, used, val, quota);
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
                let choice = FlavorChoice {
                    flavor: name.clone(),
                    mode: preemption.assignment_mode(),
                    borrow,
                };
                choices.insert(r.clone(), choice);
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
            reasons.clear();
        }
        (best, reasons)
    }

    /// `checkFlavorForPodSets`: why the pod set cannot use the flavor, if it cannot.
    fn check_flavor(&self, name: &str, ps: &PodSet) -> Option<String> {
        refusal(self.flavors, self.gates, name, ps).map(|r| r.message(name))
    }

    /// `fitsResourceQuota`: the preemption mode, the borrowing height and the reasons.
    fn fits_quota(
        &self,
        fr: &FlavorResource,
        assumed: i64,
        request: i64,
        quota: ResourceQuota,
    ) -> (PreemptionMode, usize, Vec<String>) {
        let available = self.tree.available(self.id, fr);
        let max_capacity = self.tree.potential_available(self.id, fr);
        let val = assumed.saturating_add(request);
        let (flavor, resource) = fr;
        if val > max_capacity {
            let reason = format!(
                "insufficient quota for {resource} in flavor {flavor}, previously considered podsets requests ({}) + current podset request ({}) > maximum capacity ({})",
                quantity_string(resource, assumed),
                quantity_string(resource, request),
                quantity_string(resource, max_capacity),
            );
            return (PreemptionMode::NoFit, 0, vec![reason]);
        }
        let (borrow, may_reclaim) = self.tree.borrowing_height(self.id, fr, val);
        if val <= available {
            return (PreemptionMode::Fit, borrow, Vec::new());
        }
        let reason = format!(
            "insufficient unused quota for {resource} in flavor {flavor}, {} more needed",
            quantity_string(resource, val - available)
        );
        if quota.nominal >= val || may_reclaim || self.can_preempt_while_borrowing() {
            let (possibility, borrow_after) = self.oracle.simulate(self.id, fr, val);
            let mode = match possibility {
                Possibility::NoCandidates => PreemptionMode::NoCandidates,
                Possibility::Preempt => PreemptionMode::Preempt,
                Possibility::Reclaim => PreemptionMode::Reclaim,
            };
            return (mode, borrow_after, vec![reason]);
        }
        (PreemptionMode::NoFit, borrow, vec![reason])
    }

    /// `canPreemptWhileBorrowing` (fair sharing off).
    fn can_preempt_while_borrowing(&self) -> bool {
        self.queue.preemption.borrow_within_cohort != super::api::PreemptionPolicy::Never
    }
}

/// Why a pod set cannot use a flavor (`checkFlavorForPodSets`).
enum Refusal<'f> {
    NotFound,
    Taint(&'f Taint),
    Affinity,
}

impl Refusal<'_> {
    fn message(&self, name: &str) -> String {
        match self {
            Refusal::NotFound => format!("flavor {name} not found"),
            Refusal::Taint(taint) => {
                format!("untolerated taint {} in flavor {name}", go_taint(taint))
            }
            Refusal::Affinity => format!("flavor {name} doesn't match node affinity"),
        }
    }
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

/// The flavor-resources an assignment of `pod_sets` in `queue` reads: every covered resource
/// of every flavor some pod set may use. Quota anywhere else cannot change its outcome.
pub fn flavor_resources_read(
    queue: &ClusterQueue,
    flavors: &BTreeMap<String, ResourceFlavor>,
    gates: &FeatureGates,
    pod_sets: &[PodSet],
) -> Vec<FlavorResource> {
    let mut out = Vec::new();
    for group in &queue.resource_groups {
        for name in &group.flavors {
            if pod_sets
                .iter()
                .all(|ps| refusal(flavors, gates, name, ps).is_some())
            {
                continue;
            }
            out.extend((group.covered_resources.iter()).map(|r| (name.clone(), r.clone())));
        }
    }
    out
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
