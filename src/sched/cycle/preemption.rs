//! DefaultPreemption (PostFilter): when a pod fits nowhere, find nodes where evicting
//! lower-priority pods would make room, and either preempt or explain why not.
//! Sources: `pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go`
//! (`PodEligibleToPreemptOthers`, `GetOffsetAndNumCandidates`, `SelectVictimsOnNode`) and
//! `pkg/scheduler/framework/preemption/preemption.go` (`Preempt`, `findCandidates`,
//! `DryRunPreemption`, `pickOneNodeForPreemption`), with PodDisruptionBudgets as
//! `crate::sched::pdb` reads them (`filterPodsWithPDBViolation`).

use std::cmp::Reverse;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use rand::RngExt;

use super::recheck::DryRun;
use super::{Bound, Nominating, Scheduler};
use crate::model::Pod;
use crate::sched::cluster::PodRequest;
use crate::sched::diagnosis::{self, Diagnosis};
use crate::sched::framework::{Code, Status, names};
use crate::sched::plugins::node_resources_fit;
use crate::sched::sampling;

pub enum Result {
    /// Evict `(node, pod)` victims and bind the pod to `node`; `pdb_violations` of the
    /// victims violate a PodDisruptionBudget (`Victims.NumPDBViolations`).
    Preempt {
        node: usize,
        victims: Vec<(usize, usize)>,
        pdb_violations: usize,
    },
    /// No preemption: the `preemption: …` part of the message, and what becomes of the
    /// pod's nomination (`Preempt` clears it when no node is a candidate; a pod not eligible,
    /// or a dry run that failed with an error, returns no result).
    Fail(String, Nominating),
}

impl Scheduler<'_> {
    /// Preemption nominates the preemptor and leaves its victims on their nodes, for the
    /// caller to delete them gracefully (see [`Scheduler::start_terminating`]) and to retry
    /// the preemptor once they are gone.
    pub(crate) fn let_victims_terminate(&mut self) {
        self.victims_terminate = true;
    }
}

/// `PodEligibleToPreemptOthers`' reason when a victim of an earlier preemption is still
/// terminating on the pod's nominated node.
pub const NOT_ELIGIBLE_TERMINATING_ON_NOMINATED_NODE: &str =
    "not eligible due to a terminating pod on the nominated node.";

/// A node where preemption would make room (`candidate`): its victims, most important
/// first, and how many of them a PodDisruptionBudget protects (`Victims.NumPDBViolations`).
#[derive(Debug, Clone)]
struct Candidate {
    node: usize,
    victims: Vec<Victim>,
    /// How many victims violate a PodDisruptionBudget (`numViolatingVictim`).
    pdb_violations: usize,
}

#[derive(Debug, Clone)]
struct Victim {
    pod: usize,
    priority: i32,
    /// When it started (see [`Bound::started`]); earlier sorts first.
    started: StartKey,
}

/// `GetPodStartTime` as an order: a pod without `status.startTime` counts as starting now,
/// after every given time, in bind order.
type StartKey = (bool, Option<Time>, u64);

fn start_key(b: &Bound) -> StartKey {
    (b.started.0.is_none(), b.started.0.clone(), b.started.1)
}

/// `DryRunPreemption`'s result: candidates that violate no PodDisruptionBudget, and those
/// that do (`nonViolatingCandidates`, `violatingCandidates`), each in the order found.
#[derive(Debug, Default)]
struct Candidates {
    non_violating: Vec<Candidate>,
    violating: Vec<Candidate>,
}

impl Candidates {
    /// `candidateList.add` (`preemption.go`): each list holds at most `wanted` (its capacity,
    /// `numCandidates`); a candidate past it is dropped. While no candidate violates no budget
    /// the dry run goes on, so violating candidates beyond the first `wanted` are never picked
    /// (upstream's TestDryRunPreemption "preemption looks past numCandidates until a non-PDB
    /// violating node is found").
    fn add(&mut self, c: Candidate, wanted: usize) {
        let list = match c.pdb_violations {
            0 => &mut self.non_violating,
            _ => &mut self.violating,
        };
        if list.len() < wanted {
            list.push(c);
        }
    }

    /// The dry run stops once it has a candidate that violates no budget and `wanted` in all.
    fn enough(&self, wanted: usize) -> bool {
        !self.non_violating.is_empty() && self.non_violating.len() + self.violating.len() >= wanted
    }

    /// The non-violating candidates, then the violating ones.
    fn into_list(self) -> Vec<Candidate> {
        let mut all = self.non_violating;
        all.extend(self.violating);
        all
    }
}

/// `might_help`: the nodes whose status is `Unschedulable`, in node order
/// (`NodesForStatusCode`; upstream's order is a map's, so any order is one it could take).
pub(crate) fn post_filter(
    s: &mut Scheduler<'_>,
    pod: &Pod,
    request: &PodRequest,
    might_help: &[u32],
) -> Result {
    if let Some(reason) = not_eligible(s, pod, might_help) {
        if s.explains(pod) {
            s.preemption_explained = Some(explain(s, might_help.len(), &[], None));
        }
        return Result::Fail(format!("preemption: {reason}"), Nominating::Noop);
    }
    // Nodes never tried keep the "absent" status of the new FitError; only counts are needed
    // for its message.
    let mut fit_error = Diagnosis::uniform(
        s.cluster.len(),
        Status::new(
            Code::UnschedulableAndUnresolvable,
            names::DEFAULT_PREEMPTION,
            diagnosis::PREEMPTION_NOT_HELPFUL,
        ),
        s.keep_failed_nodes,
    );
    s.dry_run = DryRun::Unknown;
    let mut candidates = Candidates::default();
    let mut errors: Vec<String> = Vec::new();
    if !might_help.is_empty() {
        // `GetOffsetAndNumCandidates`: a random first node, and how many candidates to find.
        let n = might_help.len();
        let offset = s.preemption_rng.random_range(0..n);
        s.preemption_draw = Some(n);
        let wanted = sampling::num_candidates(s.profile().preemption, n);
        let mut no_victims: Option<u16> = None;
        for i in 0..n {
            let node = might_help[(offset + i) % n] as usize;
            match select_victims_on_node(s, node, pod, request) {
                NodeVerdict::Victims(victims, _) if victims.is_empty() => {
                    let name = &s.cluster.nodes[node].name;
                    errors.push(format!("expected at least one victim pod on node {name:?}"));
                }
                NodeVerdict::Victims(victims, pdb_violations) => {
                    let candidate = Candidate {
                        node,
                        victims,
                        pdb_violations,
                    };
                    candidates.add(candidate, wanted);
                    if candidates.enough(wanted) {
                        break;
                    }
                }
                NodeVerdict::NoVictims => {
                    let i =
                        *no_victims.get_or_insert_with(|| fit_error.intern(no_victims_status()));
                    fit_error.assign(node, Some(0), i);
                }
                NodeVerdict::StillFails(status) => {
                    let i = fit_error.intern(status);
                    fit_error.assign(node, Some(0), i);
                }
            }
        }
    }
    let candidates = candidates.into_list();
    let picked = pick_one_node(&candidates);
    if s.explains(pod) {
        s.preemption_explained = Some(explain(s, might_help.len(), &candidates, picked));
    }
    if let Some(best) = picked.map(|i| &candidates[i]) {
        let victims = best.victims.iter().map(|v| (best.node, v.pod)).collect();
        return Result::Preempt {
            node: best.node,
            victims,
            pdb_violations: best.pdb_violations,
        };
    }
    // `Preempt`: with no candidate, the dry run's errors are the status (an aggregate's
    // message: brackets around several).
    if !errors.is_empty() {
        let message = match errors.len() {
            1 => errors.remove(0),
            _ => format!("[{}]", errors.join(", ")),
        };
        return Result::Fail(format!("preemption: {message}"), Nominating::Noop);
    }
    let message = diagnosis::fit_error_message(s.cluster.len(), &fit_error);
    if s.keep_failed_nodes {
        s.dry_run = DryRun::Verdicts(fit_error);
    }
    Result::Fail(format!("preemption: {message}"), Nominating::Clear)
}

/// A node's status in the FitError of a dry run that found no candidate.
fn no_victims_status() -> Status {
    Status::new(
        Code::UnschedulableAndUnresolvable,
        names::DEFAULT_PREEMPTION,
        diagnosis::NO_PREEMPTION_VICTIMS,
    )
}

/// A node's verdict in the dry run as a FitError records it (see [`post_filter`]); `None`
/// when preemption would find victims there.
pub(super) fn dry_run_status(
    s: &mut Scheduler<'_>,
    node: usize,
    pod: &Pod,
    request: &PodRequest,
) -> Option<Status> {
    match select_victims_on_node(s, node, pod, request) {
        NodeVerdict::NoVictims => Some(no_victims_status()),
        NodeVerdict::StillFails(status) => Some(status),
        NodeVerdict::Victims(..) => None,
    }
}

/// `PodEligibleToPreemptOthers`: `preemptionPolicy: Never`, or a victim of an earlier
/// preemption (terminating, `DisruptionTarget` by the scheduler) still on the pod's nominated
/// node — unless the filters found that node `UnschedulableAndUnresolvable`, which is every
/// node but those preemption might help.
fn not_eligible(s: &Scheduler<'_>, pod: &Pod, might_help: &[u32]) -> Option<&'static str> {
    if pod.never_preempt {
        return Some(diagnosis::NOT_ELIGIBLE_PREEMPTION_POLICY_NEVER);
    }
    let node = (pod.nominated_node_name.as_deref()).and_then(|n| s.cluster.index_of(n))?;
    let resolvable = might_help.binary_search(&(node as u32)).is_ok();
    let terminating_victim = (s.bound[node].iter())
        .any(|b| b.priority < pod.priority && s.bound_pod(b.pod).terminating_by_preemption());
    (resolvable && terminating_victim).then_some(NOT_ELIGIBLE_TERMINATING_ON_NOMINATED_NODE)
}

/// What evicting lower-priority pods would do on one node.
enum NodeVerdict {
    /// No pod on the node has a lower priority.
    NoVictims,
    /// Even without every lower-priority pod the pod does not fit: the filter's status.
    StillFails(Status),
    /// The pods to evict, most important first, and how many of them violate a budget.
    Victims(Vec<Victim>, usize),
}

/// `SelectVictimsOnNode`: remove every lower-priority pod; if the pod then passes the filters
/// that look at bound pods (NodeResourcesFit, PodTopologySpread, InterPodAffinity; the others
/// passed already, or the node would be unresolvable), add back ("reprieve") as many as
/// possible, each only if the pod still passes them all: first the pods whose eviction would
/// violate a PodDisruptionBudget, then the others, the most important first in each group.
/// The filters run as `RunFilterPluginsWithNominatedPods` runs them: with the pods of equal or
/// higher priority nominated to the node, and without them.
fn select_victims_on_node(
    s: &mut Scheduler<'_>,
    node: usize,
    pod: &Pod,
    request: &PodRequest,
) -> NodeVerdict {
    match s.nominated_on(node).map(|n| n.pods.clone()) {
        Some(nominated) => s.with_pods_on(node, &nominated, |s| {
            victims_on_node(s, node, pod, request, &nominated)
        }),
        None => victims_on_node(s, node, pod, request, &[]),
    }
}

/// [`select_victims_on_node`] with the `nominated` pods bound to the node for the while.
fn victims_on_node(
    s: &mut Scheduler<'_>,
    node: usize,
    pod: &Pod,
    request: &PodRequest,
    nominated: &[usize],
) -> NodeVerdict {
    let mut potential: Vec<Bound> = s.bound[node]
        .iter()
        .filter(|b| b.priority < pod.priority)
        .cloned()
        .collect();
    if potential.is_empty() {
        return NodeVerdict::NoVictims;
    }
    let mut trial = s.cluster.clone_node(node);
    for b in &potential {
        trial.remove(&b.request);
    }
    let status = node_resources_fit::filter(request, trial.view(), &s.cluster.table);
    if !status.is_success() {
        return NodeVerdict::StillFails(status);
    }
    let all: Vec<usize> = potential.iter().map(|b| b.pod).collect();
    let status = bound_filters_without(s, pod, node, &all, nominated);
    if !status.is_success() {
        return NodeVerdict::StillFails(status);
    }
    // DynamicResources sees the devices allocated at PreFilter, whoever is removed: its
    // verdict on the node stands.
    let status = s.dra_status(pod, node);
    if !status.is_success() {
        return NodeVerdict::StillFails(status);
    }
    // Open-Gpu-Share reads its own record of the devices, which the victims' removal in a
    // what-if does not change: its verdict stands too.
    if s.gpu_filters(pod) {
        let status = s.gpu_status(pod, node);
        if !status.is_success() {
            return NodeVerdict::StillFails(status);
        }
    }
    // MoreImportantPod: higher priority first; among equals, the one that started first. A pod
    // without a start time was bound during the simulation, after every pod that has one.
    potential.sort_by(|a, b| {
        b.priority
            .cmp(&a.priority)
            .then_with(|| start_key(a).cmp(&start_key(b)))
    });
    let (order, violating) = pdb_order(s, &potential);
    // Removed while trying: the victims so far and the pods not tried yet.
    let mut victims: Vec<Victim> = Vec::new();
    let (mut ranks, mut pdb_violations) = (Vec::new(), 0);
    for (k, &i) in order.iter().enumerate() {
        let b = &potential[i];
        trial.add(&b.request);
        let fits = node_resources_fit::fits(request, trial.view()) && {
            let removed: Vec<usize> = victims
                .iter()
                .map(|v| v.pod)
                .chain(order[k + 1..].iter().map(|&j| potential[j].pod))
                .collect();
            bound_filters_without(s, pod, node, &removed, nominated).is_success()
        };
        if !fits {
            trial.remove(&b.request);
            victims.push(Victim {
                pod: b.pod,
                priority: b.priority,
                started: start_key(b),
            });
            ranks.push(i);
            pdb_violations += usize::from(violating[i]);
        }
    }
    // Back in MoreImportantPod order.
    let mut ranked: Vec<_> = ranks.into_iter().zip(victims).collect();
    ranked.sort_by_key(|(rank, _)| *rank);
    NodeVerdict::Victims(ranked.into_iter().map(|(_, v)| v).collect(), pdb_violations)
}

/// PodTopologySpread's and InterPodAffinity's verdict on `node` without the bound pods
/// `removed`: with the `nominated` pods (bound for the while) and, when that passes, without
/// them too.
fn bound_filters_without(
    s: &mut Scheduler<'_>,
    pod: &Pod,
    node: usize,
    removed: &[usize],
    nominated: &[usize],
) -> Status {
    let status = s.bound_filters_without(pod, node, removed);
    if !status.is_success() || nominated.is_empty() {
        return status;
    }
    let all: Vec<usize> = removed.iter().chain(nominated).copied().collect();
    s.bound_filters_without(pod, node, &all)
}

/// `filterPodsWithPDBViolation` over the potential victims (most important first): the order
/// to reprieve them in (violating ones first, each group in its order) and, per victim,
/// whether it violates a budget.
fn pdb_order(s: &Scheduler<'_>, potential: &[Bound]) -> (Vec<usize>, Vec<bool>) {
    let violating = match s.budgets.is_empty() {
        true => vec![false; potential.len()],
        false => (s.budgets).violations(potential.iter().map(|b| (b.pod, s.bound_pod(b.pod)))),
    };
    let mut order: Vec<usize> = (0..potential.len()).collect();
    order.sort_by_key(|&i| !violating[i]);
    (order, violating)
}

/// `pickOneNodeForPreemption`: the fewest PodDisruptionBudget violations, then the lowest
/// highest victim priority, the lowest sum of priorities (each offset by MaxInt32+1 to stay
/// positive), the fewest victims, the latest start among the highest-priority victims
/// (`GetEarliestPodStartTime`), then the first candidate. Returns its index.
fn pick_one_node(candidates: &[Candidate]) -> Option<usize> {
    (0..candidates.len()).min_by_key(|&i| pick_key(&candidates[i]))
}

/// A candidate's place in `pickOneNodeForPreemption`'s order, criterion by criterion.
type PickKey = (usize, i32, i64, usize, Reverse<Option<StartKey>>);

/// What [`pick_one_node`] compares, in its order ([`CRITERIA`] names them).
fn pick_key(c: &Candidate) -> PickKey {
    let highest = (c.victims.iter().map(|v| v.priority).max()).unwrap_or(i32::MIN);
    let sum: i64 = (c.victims.iter())
        .map(|v| i64::from(v.priority) + i64::from(i32::MAX) + 1)
        .sum();
    let earliest_of_highest = (c.victims.iter())
        .filter(|v| v.priority == highest)
        .map(|v| v.started.clone())
        .min();
    (
        c.pdb_violations,
        highest,
        sum,
        c.victims.len(),
        Reverse(earliest_of_highest),
    )
}

/// The criteria of `pickOneNodeForPreemption`, in order, as the explanation names them.
pub const CRITERIA: [&str; 6] = [
    "fewest PodDisruptionBudget violations",
    "lowest highest victim priority",
    "lowest sum of victim priorities",
    "fewest victims",
    "latest start of the highest-priority victims",
    "found first",
];

/// The first criterion on which candidate key `lost` ranks after `won`.
fn lost_on(won: &PickKey, lost: &PickKey) -> &'static str {
    let differs = [
        won.0 != lost.0,
        won.1 != lost.1,
        won.2 != lost.2,
        won.3 != lost.3,
        won.4 != lost.4,
    ];
    let at = differs
        .iter()
        .position(|&d| d)
        .unwrap_or(CRITERIA.len() - 1);
    CRITERIA[at]
}

/// The dry run for `schedsim explain`: the candidates with their victims by name, and on
/// which criterion each lost to the one picked.
fn explain(
    s: &Scheduler<'_>,
    might_help: usize,
    candidates: &[Candidate],
    picked: Option<usize>,
) -> crate::sched::explain::Preemption {
    let won = picked.map(|i| pick_key(&candidates[i]));
    let candidates = (candidates.iter().enumerate())
        .map(|(i, c)| crate::sched::explain::PreemptionCandidate {
            node: s.cluster.nodes[c.node].name.clone(),
            victims: (c.victims.iter())
                .map(|v| (s.bound_pod(v.pod).key(), v.priority))
                .collect(),
            pdb_violations: c.pdb_violations,
            lost_on: (won.as_ref())
                .filter(|_| picked != Some(i))
                .map(|w| lost_on(w, &pick_key(c))),
        })
        .collect();
    crate::sched::explain::Preemption {
        might_help,
        candidates,
        chosen: picked,
        message: None,
        earlier: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each criterion in turn decides: the first that differs is the one named.
    #[test]
    fn the_first_criterion_that_differs_is_named() {
        let won: PickKey = (0, 10, 100, 2, Reverse(Some((false, None, 5))));
        let mut keys: Vec<PickKey> = vec![
            (1, 0, 0, 0, Reverse(None)),
            (0, 20, 0, 0, Reverse(None)),
            (0, 10, 200, 0, Reverse(None)),
            (0, 10, 100, 3, Reverse(None)),
            (0, 10, 100, 2, Reverse(Some((false, None, 4)))),
        ];
        keys.push(won.clone());
        for (key, want) in keys.iter().zip(CRITERIA) {
            assert!(won <= *key, "{key:?} would have won");
            assert_eq!(lost_on(&won, key), want);
        }
    }
}
