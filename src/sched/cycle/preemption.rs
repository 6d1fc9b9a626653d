//! DefaultPreemption (PostFilter): when a pod fits nowhere, find nodes where evicting
//! lower-priority pods would make room, and either preempt or explain why not.
//! Sources: `pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go`
//! (`SelectVictimsOnNode`, `PodEligibleToPreemptOthers`) and
//! `pkg/scheduler/framework/preemption/preemption.go` (`Preempt`, `findCandidates`,
//! `pickOneNodeForPreemption`), with PodDisruptionBudgets as `crate::sched::pdb` reads them.

use super::{Bound, Scheduler};
use crate::model::Pod;
use crate::sched::cluster::PodRequest;
use crate::sched::diagnosis::{self, Diagnosis};
use crate::sched::framework::{Code, Status, names};
use crate::sched::plugins::node_resources_fit;

pub enum Result {
    /// Evict `(node, pod)` victims and bind the pod to `node`.
    Preempt {
        node: usize,
        victims: Vec<(usize, usize)>,
    },
    /// No preemption: the `preemption: …` part of the message.
    Message(String),
}

struct Candidate {
    node: usize,
    /// Victims with their priorities, highest priority first.
    victims: Vec<(usize, i32)>,
    /// How many victims violate a PodDisruptionBudget (`numViolatingVictim`).
    pdb_violations: usize,
}

/// `might_help`: the nodes whose status is `Unschedulable`, in node order
/// (`nodesWherePreemptionMightHelp`).
pub(crate) fn post_filter(
    s: &mut Scheduler<'_>,
    pod: &Pod,
    request: &PodRequest,
    might_help: &[u32],
) -> Result {
    if pod.never_preempt {
        return Result::Message(format!(
            "preemption: {}",
            diagnosis::NOT_ELIGIBLE_PREEMPTION_POLICY_NEVER
        ));
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
        false,
    );
    let mut candidates = Vec::new();
    let mut no_victims: Option<u16> = None;
    for &node in might_help {
        let node = node as usize;
        match select_victims_on_node(s, node, pod, request) {
            NodeVerdict::Victims(victims, pdb_violations) => candidates.push(Candidate {
                node,
                victims,
                pdb_violations,
            }),
            NodeVerdict::NoVictims => {
                let i = *no_victims.get_or_insert_with(|| {
                    fit_error.intern(Status::new(
                        Code::UnschedulableAndUnresolvable,
                        names::DEFAULT_PREEMPTION,
                        diagnosis::NO_PREEMPTION_VICTIMS,
                    ))
                });
                fit_error.assign(node, Some(0), i);
            }
            NodeVerdict::StillFails(status) => {
                let i = fit_error.intern(status);
                fit_error.assign(node, Some(0), i);
            }
        }
    }
    if let Some(best) = pick_one_node(candidates) {
        let victims = best.victims.iter().map(|(v, _)| (best.node, *v)).collect();
        return Result::Preempt {
            node: best.node,
            victims,
        };
    }
    Result::Message(format!(
        "preemption: {}",
        diagnosis::fit_error_message(s.cluster.len(), &fit_error)
    ))
}

/// What evicting lower-priority pods would do on one node.
enum NodeVerdict {
    /// No pod on the node has a lower priority.
    NoVictims,
    /// Even without every lower-priority pod the pod does not fit: the filter's status.
    StillFails(Status),
    /// The pods to evict, with their priorities, and how many violate a budget.
    Victims(Vec<(usize, i32)>, usize),
}

/// `SelectVictimsOnNode`: remove every lower-priority pod; if the pod then passes the filters
/// that look at bound pods (NodeResourcesFit, PodTopologySpread, InterPodAffinity; the others
/// passed already, or the node would be unresolvable), add back ("reprieve") as many as
/// possible, each only if the pod still passes them all: first the pods whose eviction would
/// violate a PodDisruptionBudget, then the others, the most important first in each group.
fn select_victims_on_node(
    s: &mut Scheduler<'_>,
    node: usize,
    pod: &Pod,
    request: &PodRequest,
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
    let status = s.bound_filters_without(pod, node, &all);
    if !status.is_success() {
        return NodeVerdict::StillFails(status);
    }
    // DynamicResources sees the devices allocated at PreFilter, whoever is removed: its
    // verdict on the node stands.
    let status = s.dra_status(pod, node);
    if !status.is_success() {
        return NodeVerdict::StillFails(status);
    }
    // MoreImportantPod: higher priority first; among equals, the one that started first. A pod
    // without a start time was bound during the simulation, after every pod that has one.
    potential.sort_by(|a, b| {
        let started = |x: &Bound| (x.started.0.is_none(), x.started.0.clone(), x.started.1);
        b.priority
            .cmp(&a.priority)
            .then_with(|| started(a).cmp(&started(b)))
    });
    let (order, violating) = pdb_order(s, &potential);
    // Removed while trying: the victims so far and the pods not tried yet.
    let mut victims: Vec<(usize, i32)> = Vec::new();
    let (mut ranks, mut pdb_violations) = (Vec::new(), 0);
    for (k, &i) in order.iter().enumerate() {
        let b = &potential[i];
        trial.add(&b.request);
        let fits = node_resources_fit::fits(request, trial.view()) && {
            let removed: Vec<usize> = victims
                .iter()
                .map(|(v, _)| *v)
                .chain(order[k + 1..].iter().map(|&j| potential[j].pod))
                .collect();
            s.bound_filters_without(pod, node, &removed).is_success()
        };
        if !fits {
            trial.remove(&b.request);
            victims.push((b.pod, b.priority));
            ranks.push(i);
            pdb_violations += usize::from(violating[i]);
        }
    }
    // Back in MoreImportantPod order.
    let mut ranked: Vec<_> = ranks.into_iter().zip(victims).collect();
    ranked.sort_by_key(|(rank, _)| *rank);
    NodeVerdict::Victims(ranked.into_iter().map(|(_, v)| v).collect(), pdb_violations)
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

/// `pickOneNodeForPreemption`: fewest PodDisruptionBudget violations, then lowest
/// highest-victim priority, then lowest sum of priorities, then fewest victims, then the first
/// node.
fn pick_one_node(candidates: Vec<Candidate>) -> Option<Candidate> {
    candidates.into_iter().min_by_key(|c| {
        let highest = c.victims.iter().map(|(_, p)| *p).max().unwrap_or(i32::MIN);
        // Upstream offsets each priority by MaxInt32+1 so that the sum stays positive.
        let sum: i64 = c
            .victims
            .iter()
            .map(|(_, p)| i64::from(*p) + i64::from(i32::MAX) + 1)
            .sum();
        (c.pdb_violations, highest, sum, c.victims.len(), c.node)
    })
}
