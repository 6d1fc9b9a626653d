//! The reverse question: which existing nodes can go, every pod on them placed elsewhere
//! (`spec.plan.remove`), saving the most per hour.
//!
//! A removal is judged as cluster-autoscaler's scale-down simulates one
//! (capacity-planning.md §2; `simulator/cluster.go`, `core/scaledown/planner`), with the
//! exact scheduler in place of its Filter-only first fit:
//! - the scenario runs as `schedsim run` runs it; its end state is the cluster to shrink (pods
//!   still pending stay pending and take no part);
//! - each pod of a removed node is judged by CA's drainability rules (`drainability`): it
//!   stays with the node (DaemonSet, mirror, terminal), moves, or blocks the node's removal;
//! - the PodDisruptionBudgets must allow every pod that moves, all removed nodes together (CA's
//!   `RemainingPdbTracker` across the nodes of one pass): per budget, the moving pods it
//!   selects are at most its `disruptionsAllowed`;
//! - the moving pods are scheduled, in node then pod order, onto the cluster where every other
//!   pod stays put and each removed node is a pod-less copy tainted
//!   `ToBeDeletedByClusterAutoscaler:NoSchedule` (CA's ghost node, so topology domains keep
//!   counting). The removal holds when every moving pod lands on a node that stays.
//!
//! Placement is not monotone in the nodes removed, so every set the answer names is simulated
//! as a whole. The search starts from Karpenter's multi-node consolidation (the longest
//! prefix, in disruption order, that can go, found by a k-ary search; `multinodeconsolidation.go`)
//! and extends it node by node in the same order as CA's scale-down does. A sound upper bound
//! on the savings (per resource and per budget, a fractional knapsack over what the removed
//! nodes take out of the cluster's free capacity) says when the answer is proven the best;
//! short of it, a proof walk visits the sets in order of savings down to the answer's (each
//! ruled out by a capacity it exceeds, or simulated) and betters or proves it.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use k8s_openapi::api::core::v1::Taint;
use rayon::prelude::*;
use serde::Serialize;

use super::drainability::{Drain, drain};
use super::goal::PendingPod;
use crate::load::Scenario;
use crate::load::scenario::PlanRemoval;
use crate::model::resources::ResourceList;
use crate::model::{Node, Pod};
use crate::sched::PodPhase;
use crate::sched::pdb::Budgets;
use crate::sched::plugins::inter_pod_affinity::selector_matches;

/// The taint cluster-autoscaler puts on a node it is removing (`taints.ToBeDeletedTaint`).
pub const TO_BE_DELETED_TAINT: &str = "ToBeDeletedByClusterAutoscaler";

/// Sets simulated together (in parallel): a constant, so the sets simulated — the report's —
/// are the same at any thread count.
const BATCH: usize = 8;

/// Pods not moved that a failed removal keeps for the report.
const PENDING_KEPT: usize = 20;

/// How sure the removal answer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum RemovalStatus {
    /// No set saves more: the savings reach the upper bound, or every node that may go goes.
    Optimal,
    /// The most found; the upper bound leaves room for more.
    BestFound,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RemovalReport {
    pub status: RemovalStatus,
    /// Per removal group: nodes that go.
    pub removed: BTreeMap<String, u32>,
    pub nodes: Vec<String>,
    /// Per hour.
    pub savings: f64,
    /// No set of the groups' nodes saves more than this per hour.
    pub upper_bound_savings: f64,
    /// Per removal group: nodes it selects.
    pub candidates: BTreeMap<String, u32>,
    /// Where the pods of the removed nodes land.
    pub moves: Vec<Move>,
    /// Nodes a pod keeps from going, whatever else goes.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blocked: Vec<BlockedNode>,
    /// The next node in order that could not go with the answer's, and why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub why_not_more: Option<NotRemoved>,
    /// Workload pods pending at the end of the run, before any removal.
    pub pending_before: u64,
    /// Sets simulated, and sets ruled out without a simulation: over a budget's allowed
    /// disruptions, or (in the proof walk) over the free capacity of some resource.
    pub evaluations: usize,
    pub ruled_out: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Move {
    pub pod: String,
    pub from: String,
    pub to: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockedNode {
    pub node: String,
    pub group: String,
    /// `namespace/name` of the first pod that blocks it.
    pub pod: String,
    /// cluster-autoscaler's `BlockingPodReason`.
    pub reason: String,
    pub message: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NotRemoved {
    pub node: String,
    pub group: String,
    /// The budget that does not allow one more pod to move, when that is why.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<String>,
    /// Pods that would find no node, with kube-scheduler's messages.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<PendingPod>,
}

/// The cluster at the end of the scenario's run.
struct Settled {
    nodes: Vec<Node>,
    /// Per node: the pods bound there (with `nodeName` set).
    on_node: Vec<Vec<Pod>>,
    pending: u64,
}

impl Settled {
    fn of(scenario: &Scenario) -> Settled {
        let outcome = scenario.schedule(&scenario.config);
        let nodes = outcome.cluster.nodes.clone();
        let mut on_node = vec![Vec::new(); nodes.len()];
        let gone: std::collections::HashSet<usize> =
            outcome.preempted_existing.iter().copied().collect();
        for (i, p) in scenario.existing_pods.iter().enumerate() {
            let node = p
                .node_name
                .as_deref()
                .and_then(|n| outcome.cluster.index_of(n));
            if let (false, Some(n)) = (gone.contains(&i), node) {
                on_node[n].push(p.clone());
            }
        }
        let mut pending = 0;
        for (p, o) in scenario.workloads.iter().zip(&outcome.pods) {
            match (o.phase, o.node) {
                (PodPhase::Scheduled, Some(n)) => {
                    let mut bound = p.clone();
                    bound.node_name = Some(nodes[n].name.clone());
                    bound.nominated_node_name = None;
                    bound.scheduling_gates.clear();
                    on_node[n].push(bound);
                }
                (PodPhase::Succeeded, _) => {}
                _ => pending += 1,
            }
        }
        Settled {
            nodes,
            on_node,
            pending,
        }
    }
}

/// A node that may go: its group, price, and its pods' fates.
struct Candidate {
    node: usize,
    group: usize,
    /// Millionths per hour.
    price: i128,
    /// Indices into the node's pods of those that move.
    moving: Vec<usize>,
}

/// What the proof walk found: a set saving more than the incumbent, and whether no set saves
/// more than the answer (the walk's find, or else the incumbent).
struct Walk {
    found: Option<(Vec<usize>, Vec<Move>)>,
    proven: bool,
}

/// Drop lists the proof walk may visit before it stops: memory for its heap, whatever the
/// budget.
const MAX_VISITED: usize = 200_000;

/// What one simulated set came to.
#[derive(Debug, Clone)]
enum Verdict {
    Moved(Vec<Move>),
    /// A budget does not allow this pod to move as well.
    Budget {
        budget: String,
    },
    Pending(Vec<PendingPod>),
}

struct Search<'a> {
    scenario: &'a Scenario,
    groups: &'a [PlanRemoval],
    settled: Settled,
    candidates: Vec<Candidate>,
    /// Per budget: disruptions it allows at the end of the run.
    allowed: Vec<i32>,
    dims: Dimensions,
    budget: usize,
    evaluations: usize,
    ruled_out: usize,
}

/// The most valuable set of the groups' nodes that can go.
pub fn remove(
    scenario: &Scenario,
    groups: &[PlanRemoval],
    max_evaluations: usize,
) -> RemovalReport {
    let (mut s, blocked, matched) = Search::new(scenario, groups, max_evaluations);
    let bound = s.upper_bound();
    let (mut chosen, mut moves, mut why_not_more) = s.search(bound);
    let mut savings: i128 = chosen.iter().map(|&c| s.candidates[c].price).sum();
    let all_go = chosen.len() == s.capped(&(0..s.candidates.len()).collect::<Vec<_>>()).len();
    let mut proven = all_go || savings as f64 >= bound - 0.5;
    if !proven {
        let walk = s.prove(savings);
        proven = walk.proven;
        if let Some((set, set_moves)) = walk.found {
            savings = set.iter().map(|&c| s.candidates[c].price).sum();
            (chosen, moves) = (set, set_moves);
            // Asked of the greedy pass's set, not of this one.
            why_not_more = None;
        }
    }
    let status = match proven {
        true => RemovalStatus::Optimal,
        false => RemovalStatus::BestFound,
    };
    let mut removed: BTreeMap<String, u32> = groups.iter().map(|g| (g.name.clone(), 0)).collect();
    for &c in &chosen {
        *removed
            .get_mut(&groups[s.candidates[c].group].name)
            .expect("group") += 1;
    }
    let mut nodes: Vec<String> = (chosen.iter())
        .map(|&c| s.settled.nodes[s.candidates[c].node].name.clone())
        .collect();
    nodes.sort();
    RemovalReport {
        status,
        removed,
        nodes,
        savings: savings as f64 / 1e6,
        // Savings are whole millionths, so the bound's floor is one too.
        upper_bound_savings: bound.floor() / 1e6,
        candidates: matched,
        moves,
        blocked,
        why_not_more,
        pending_before: s.settled.pending,
        evaluations: s.evaluations,
        ruled_out: s.ruled_out,
    }
}

/// Whether the named nodes can go together (none blocked, the budgets allow their pods, and
/// every pod lands elsewhere), and what the search's upper bound on the savings is: the
/// judge `remove` uses, for tests that compare its answer with every set.
pub fn can_go(scenario: &Scenario, groups: &[PlanRemoval], nodes: &[String]) -> (bool, f64) {
    let (mut s, _, _) = Search::new(scenario, groups, usize::MAX);
    let set: Option<Vec<usize>> = (nodes.iter())
        .map(|name| {
            (0..s.candidates.len()).find(|&c| &s.settled.nodes[s.candidates[c].node].name == name)
        })
        .collect();
    let bound = s.upper_bound() / 1e6;
    let ok = set.is_some_and(|set| matches!(s.evaluate(&[set])[0], Verdict::Moved(_)));
    (ok, bound)
}

impl<'a> Search<'a> {
    /// The scenario's end state, its nodes judged: the groups' candidates in disruption
    /// order, the blocked nodes, and the nodes each group selects.
    fn new(
        scenario: &'a Scenario,
        groups: &'a [PlanRemoval],
        max_evaluations: usize,
    ) -> (Search<'a>, Vec<BlockedNode>, BTreeMap<String, u32>) {
        let settled = Settled::of(scenario);
        let budgets = &scenario.config.pdbs;
        let all = settled.on_node.iter().flatten().enumerate();
        let mut tracker = Budgets::new(budgets, all.clone(), |_| true, |_, _| true);
        // Every pod is bound: counted healthy as the simulation counts them when it binds them.
        for (id, pod) in all {
            tracker.count(id, pod, 1);
        }
        let allowed: Vec<i32> = (0..budgets.len())
            .map(|i| tracker.counts(i).disruptions_allowed)
            .collect();
        let mut candidates = Vec::new();
        let mut blocked = Vec::new();
        let mut matched: BTreeMap<String, u32> =
            groups.iter().map(|g| (g.name.clone(), 0)).collect();
        for (n, node) in settled.nodes.iter().enumerate() {
            let Some(group) = groups.iter().position(|g| selects(g, node)) else {
                continue;
            };
            *matched
                .get_mut(&groups[group].name)
                .expect("every group counted") += 1;
            let mut moving = Vec::new();
            let mut blocker = None;
            for (i, pod) in settled.on_node[n].iter().enumerate() {
                match drain(pod, budgets, &allowed) {
                    Drain::Stays => {}
                    Drain::Moves if pod.resource_claims.is_empty() => moving.push(i),
                    Drain::Moves => {
                        blocker = Some((
                            pod,
                            "NotSimulated".to_string(),
                            "schedsim: moving a pod with ResourceClaims is not simulated"
                                .to_string(),
                        ));
                        break;
                    }
                    Drain::Blocks { reason, message } => {
                        blocker = Some((pod, reason.to_string(), message));
                        break;
                    }
                }
            }
            match blocker {
                Some((pod, reason, message)) => blocked.push(BlockedNode {
                    node: node.name.clone(),
                    group: groups[group].name.clone(),
                    pod: pod.key(),
                    reason,
                    message,
                }),
                None => candidates.push(Candidate {
                    node: n,
                    group,
                    price: (groups[group].price_per_hour.unwrap_or(1.0) * 1e6).round() as i128,
                    moving,
                }),
            }
        }
        // Disruption order: the least utilized first (by what its moving pods request, the
        // measure CA's scale-down eligibility reads), then the dearer, then by name.
        let utilization = |c: &Candidate| {
            let node = &settled.nodes[c.node];
            let pods = &settled.on_node[c.node];
            (node.allocatable.iter())
                .filter(|(r, q)| r.as_str() != "pods" && **q > 0)
                .map(|(r, &q)| {
                    let used: i64 = (c.moving.iter())
                        .map(|&i| pods[i].requests.get(r).copied().unwrap_or(0))
                        .sum();
                    used as f64 / q as f64
                })
                .fold(0.0f64, f64::max)
        };
        candidates.sort_by(|a, b| {
            (utilization(a).total_cmp(&utilization(b)))
                .then(b.price.cmp(&a.price))
                .then_with(|| settled.nodes[a.node].name.cmp(&settled.nodes[b.node].name))
        });
        let mut s = Search {
            scenario,
            groups,
            settled,
            candidates,
            allowed,
            dims: Dimensions::default(),
            budget: max_evaluations.max(1),
            evaluations: 0,
            ruled_out: 0,
        };
        s.dims = s.dimensions();
        (s, blocked, matched)
    }
}

/// The group's nodes: of its pool and matching its selector, when given.
fn selects(group: &PlanRemoval, node: &Node) -> bool {
    group.pool.as_deref().is_none_or(|p| node.pool() == p)
        && (group.selector.as_ref()).is_none_or(|s| selector_matches(s, &node.labels))
}

impl Search<'_> {
    /// `order` without the nodes past their group's `max` (the first ones in order stay).
    fn capped(&self, order: &[usize]) -> Vec<usize> {
        let mut taken = vec![0u32; self.groups.len()];
        (order.iter().copied())
            .filter(|&c| {
                let g = self.candidates[c].group;
                let fits = self.groups[g].max.is_none_or(|m| taken[g] < m);
                taken[g] += u32::from(fits);
                fits
            })
            .collect()
    }

    /// The longest prefix in disruption order that can go (a k-ary search, which placement
    /// not being monotone makes a start, not an answer), then each later node in order added
    /// when the set with it can go.
    fn search(&mut self, bound: f64) -> (Vec<usize>, Vec<Move>, Option<NotRemoved>) {
        let order = self.capped(&(0..self.candidates.len()).collect::<Vec<_>>());
        let (mut lo, mut hi) = (0usize, order.len() + 1);
        let mut moves = Vec::new();
        while hi - lo > 1 && self.evaluations < self.budget {
            let room = (self.budget - self.evaluations).min(BATCH);
            let span = hi - lo - 1;
            let mut ks: Vec<usize> = (1..=room.min(span))
                .map(|j| lo + (span * j).div_ceil(room.min(span)))
                .collect();
            ks.dedup();
            let sets: Vec<Vec<usize>> = ks.iter().map(|&k| order[..k].to_vec()).collect();
            let verdicts = self.evaluate(&sets);
            let best = (ks.iter().zip(&verdicts))
                .filter(|(_, v)| matches!(v, Verdict::Moved(_)))
                .max_by_key(|(k, _)| **k);
            if let Some((&k, Verdict::Moved(m))) = best {
                lo = k;
                moves = m.clone();
            }
            hi = (ks.iter().zip(&verdicts))
                .filter(|(k, v)| **k > lo && !matches!(v, Verdict::Moved(_)))
                .map(|(k, _)| *k)
                .min()
                .unwrap_or(hi);
        }
        let mut chosen: Vec<usize> = order[..lo].to_vec();
        let mut savings: i128 = chosen.iter().map(|&c| self.candidates[c].price).sum();
        let mut why_not = None;
        let mut next = 0;
        let full = |s: &Self, chosen: &[usize], c: usize| {
            let g = s.candidates[c].group;
            let taken = chosen
                .iter()
                .filter(|&&o| s.candidates[o].group == g)
                .count();
            s.groups[g].max.is_some_and(|m| taken as u32 >= m)
        };
        // Later nodes in disruption order: the rest of `order`, then the nodes its cap left
        // out (candidates are in disruption order already).
        let mut in_order = vec![false; self.candidates.len()];
        for &c in &order {
            in_order[c] = true;
        }
        let rest: Vec<usize> = (order[lo..].iter().copied())
            .chain((0..self.candidates.len()).filter(|&c| !in_order[c]))
            .collect();
        while next < rest.len() && self.evaluations < self.budget && (savings as f64) < bound - 0.5
        {
            let room = (self.budget - self.evaluations).min(BATCH);
            let batch: Vec<usize> = (rest[next..].iter().copied())
                .filter(|&c| !full(self, &chosen, c))
                .take(room)
                .collect();
            if batch.is_empty() {
                break;
            }
            let sets: Vec<Vec<usize>> = (batch.iter())
                .map(|&c| chosen.iter().copied().chain([c]).collect())
                .collect();
            let verdicts = self.evaluate(&sets);
            let accepted = verdicts.iter().position(|v| matches!(v, Verdict::Moved(_)));
            let tried = accepted.map_or(batch.len(), |a| a + 1);
            match accepted {
                Some(a) => {
                    chosen.push(batch[a]);
                    savings += self.candidates[batch[a]].price;
                    if let Verdict::Moved(m) = &verdicts[a] {
                        moves = m.clone();
                    }
                    // The nodes before it failed against a smaller set; CA's pass does not
                    // try them again either. Why not more is asked of the new set.
                    why_not = None;
                }
                None if why_not.is_none() => {
                    why_not = (batch.iter().zip(&verdicts))
                        .next()
                        .map(|(&c, v)| self.not_removed(c, v));
                }
                None => {}
            }
            let last = batch[tried - 1];
            next = rest.iter().position(|&c| c == last).expect("in rest") + 1;
        }
        (chosen, moves, why_not)
    }

    /// The proof walk: the sets of candidates in order of savings, highest first — the
    /// candidates dropped from all of them, the cheapest drops first (each subset once: a
    /// drop list grows by the next candidate or swaps its last for the next). A set over its
    /// group's `max` is passed over; one over a dimension's capacity is ruled out; the others
    /// are simulated, a batch at a time in parallel. The first that can go saves the most.
    /// The walk ends proven at the incumbent's savings, or unproven when the budget or
    /// [`MAX_VISITED`] runs out.
    fn prove(&mut self, incumbent: i128) -> Walk {
        let n = self.candidates.len();
        let mut items: Vec<usize> = (0..n).collect();
        items.sort_by_key(|&c| (self.candidates[c].price, c));
        let total: i128 = self.candidates.iter().map(|c| c.price).sum();
        let dims = self.dims.capacity.len();
        let full: Vec<i64> = (0..dims)
            .map(|k| self.dims.weights.iter().map(|w| w[k]).sum())
            .collect();
        let mut group_size = vec![0u32; self.groups.len()];
        for c in &self.candidates {
            group_size[c.group] += 1;
        }
        let mut heap: BinaryHeap<Reverse<(i128, Vec<u32>)>> = BinaryHeap::new();
        heap.push(Reverse((0, Vec::new())));
        let mut visited = 0usize;
        loop {
            let mut batch: Vec<Vec<usize>> = Vec::new();
            let mut ended = None;
            while batch.len() < BATCH {
                let Some(Reverse((dropped_price, dropped))) = heap.pop() else {
                    ended = Some(true);
                    break;
                };
                if total - dropped_price <= incumbent {
                    ended = Some(true);
                    break;
                }
                visited += 1;
                if visited > MAX_VISITED {
                    ended = Some(false);
                    break;
                }
                let next = dropped.last().map_or(0, |&l| l as usize + 1);
                if next < n {
                    let price = |i: usize| self.candidates[items[i]].price;
                    let mut grown = dropped.clone();
                    grown.push(next as u32);
                    heap.push(Reverse((dropped_price + price(next), grown)));
                    if let Some(&last) = dropped.last() {
                        let mut swapped = dropped.clone();
                        *swapped.last_mut().expect("not empty") = next as u32;
                        let p = dropped_price - price(last as usize) + price(next);
                        heap.push(Reverse((p, swapped)));
                    }
                }
                let mut gone = vec![false; n];
                for &i in &dropped {
                    gone[items[i as usize]] = true;
                }
                let mut kept_per_group = group_size.clone();
                let mut sums = full.clone();
                for (c, _) in gone.iter().enumerate().filter(|(_, g)| **g) {
                    kept_per_group[self.candidates[c].group] -= 1;
                    for (k, sum) in sums.iter_mut().enumerate() {
                        *sum -= self.dims.weights[c][k];
                    }
                }
                let over_max = (self.groups.iter().zip(&kept_per_group))
                    .any(|(g, &k)| g.max.is_some_and(|m| k > m));
                if over_max {
                    continue;
                }
                if (sums.iter().zip(&self.dims.capacity)).any(|(s, c)| s > c) {
                    self.ruled_out += 1;
                    continue;
                }
                batch.push((0..n).filter(|&c| !gone[c]).collect());
            }
            let room = self.budget.saturating_sub(self.evaluations);
            if batch.len() > room {
                batch.truncate(room);
                ended = Some(false);
            }
            let verdicts = self.evaluate(&batch);
            if let Some((set, Verdict::Moved(moves))) = batch
                .into_iter()
                .zip(verdicts)
                .find(|(_, v)| matches!(v, Verdict::Moved(_)))
            {
                return Walk {
                    found: Some((set, moves)),
                    proven: true,
                };
            }
            if let Some(proven) = ended {
                return Walk {
                    found: None,
                    proven,
                };
            }
        }
    }

    fn not_removed(&self, c: usize, v: &Verdict) -> NotRemoved {
        let cand = &self.candidates[c];
        NotRemoved {
            node: self.settled.nodes[cand.node].name.clone(),
            group: self.groups[cand.group].name.clone(),
            budget: match v {
                Verdict::Budget { budget } => Some(budget.clone()),
                _ => None,
            },
            pending: match v {
                Verdict::Pending(p) => p.clone(),
                _ => Vec::new(),
            },
        }
    }

    /// Judges the sets (candidate indices): the budgets first, then a simulation each, in
    /// parallel.
    fn evaluate(&mut self, sets: &[Vec<usize>]) -> Vec<Verdict> {
        let checked: Vec<Option<Verdict>> = sets.iter().map(|s| self.budgets_refuse(s)).collect();
        let simulate: Vec<&Vec<usize>> = (sets.iter().zip(&checked))
            .filter(|(_, c)| c.is_none())
            .map(|(s, _)| s)
            .collect();
        self.ruled_out += sets.len() - simulate.len();
        self.evaluations += simulate.len();
        let mut simulated = simulate
            .par_iter()
            .map(|s| self.simulate(s))
            .collect::<Vec<_>>()
            .into_iter();
        (checked.into_iter())
            .map(|c| c.unwrap_or_else(|| simulated.next().expect("one per set")))
            .collect()
    }

    /// CA's remaining-budget tracker over the set, node by node: the first moving pod a budget
    /// no longer allows.
    fn budgets_refuse(&self, set: &[usize]) -> Option<Verdict> {
        let budgets = &self.scenario.config.pdbs;
        if budgets.is_empty() {
            return None;
        }
        let mut left = self.allowed.clone();
        for &c in set {
            let cand = &self.candidates[c];
            for &i in &cand.moving {
                let pod = &self.settled.on_node[cand.node][i];
                let mine: Vec<usize> = (0..budgets.len())
                    .filter(|&b| budgets[b].selects(pod))
                    .collect();
                if let Some(&b) = mine.iter().find(|&&b| left[b] < 1) {
                    return Some(Verdict::Budget {
                        budget: format!("{}/{}", budgets[b].namespace, budgets[b].name),
                    });
                }
                for b in mine {
                    left[b] -= 1;
                }
            }
        }
        None
    }

    /// The set's nodes turned into tainted, pod-less ghosts; their moving pods scheduled onto
    /// the rest of the cluster.
    fn simulate(&self, set: &[usize]) -> Verdict {
        let settled = &self.settled;
        let mut removed = vec![false; settled.nodes.len()];
        for &c in set {
            removed[self.candidates[c].node] = true;
        }
        let mut nodes = settled.nodes.clone();
        for (node, _) in nodes.iter_mut().zip(&removed).filter(|(_, r)| **r) {
            node.taints.push(Taint {
                key: TO_BE_DELETED_TAINT.into(),
                value: Some("0".into()),
                effect: "NoSchedule".into(),
                time_added: None,
            });
        }
        let staying: Vec<Pod> = (settled.on_node.iter().zip(&removed))
            .filter(|(_, r)| !**r)
            .flat_map(|(pods, _)| pods.iter().cloned())
            .collect();
        let mut from = Vec::new();
        let moving: Vec<Pod> = (set.iter())
            .flat_map(|&c| {
                let cand = &self.candidates[c];
                cand.moving.iter().map(move |&i| (cand.node, i))
            })
            .map(|(n, i)| {
                let mut p = settled.on_node[n][i].clone();
                p.node_name = None;
                from.push(n);
                p
            })
            .collect();
        let outcome = crate::sched::schedule(nodes, &staying, &moving, &self.scenario.config);
        let mut moves = Vec::new();
        let mut pending = Vec::new();
        for ((pod, o), &n) in moving.iter().zip(&outcome.pods).zip(&from) {
            match (o.phase, o.node) {
                (PodPhase::Scheduled, Some(to)) if !removed[to] => moves.push(Move {
                    pod: pod.key(),
                    from: settled.nodes[n].name.clone(),
                    to: settled.nodes[to].name.clone(),
                }),
                (PodPhase::Scheduled, Some(_)) => pending.push(PendingPod {
                    pod: pod.key(),
                    message: format!(
                        "only a node being removed takes it (it tolerates the {TO_BE_DELETED_TAINT} taint)"
                    ),
                }),
                _ => pending.push(PendingPod {
                    pod: pod.key(),
                    message: o.message.clone(),
                }),
            }
        }
        match pending.is_empty() {
            true => Verdict::Moved(moves),
            false => {
                pending.truncate(PENDING_KEPT);
                Verdict::Pending(pending)
            }
        }
    }

    /// What each candidate takes out of the cluster, per dimension — each resource (its pods
    /// that move, plus its own free room, against the free room of every node) and each budget
    /// (its pods the budget selects, against the disruptions it allows). A set can go only if
    /// its sum stays within every capacity.
    fn dimensions(&self) -> Dimensions {
        let settled = &self.settled;
        let free: Vec<ResourceList> = (settled.nodes.iter().zip(&settled.on_node))
            .map(|(node, pods)| {
                let mut free = node.allocatable.clone();
                for p in pods {
                    for (r, q) in p.requests.iter() {
                        *free.entry(r.clone()).or_insert(0) -= q;
                    }
                    if let Some(slots) = free.get_mut("pods") {
                        *slots -= 1;
                    }
                }
                free.values_mut().for_each(|q| *q = (*q).max(0));
                free
            })
            .collect();
        let mut resources: Vec<&String> = free.iter().flat_map(|f| f.keys()).collect();
        resources.sort();
        resources.dedup();
        let mut d = Dimensions {
            capacity: Vec::new(),
            weights: vec![Vec::new(); self.candidates.len()],
        };
        for r in resources {
            d.capacity
                .push(free.iter().map(|f| f.get(r).copied().unwrap_or(0)).sum());
            for (c, w) in self.candidates.iter().zip(&mut d.weights) {
                let pods = &settled.on_node[c.node];
                let moving: i64 = (c.moving.iter())
                    .map(|&i| match r.as_str() {
                        "pods" => 1,
                        _ => pods[i].requests.get(r).copied().unwrap_or(0),
                    })
                    .sum();
                w.push(moving + free[c.node].get(r).copied().unwrap_or(0));
            }
        }
        for (b, budget) in self.scenario.config.pdbs.iter().enumerate() {
            d.capacity.push(i64::from(self.allowed[b].max(0)));
            for (c, w) in self.candidates.iter().zip(&mut d.weights) {
                let pods = &settled.on_node[c.node];
                let covered = (c.moving.iter()).filter(|&&i| budget.selects(&pods[i]));
                w.push(covered.count() as i64);
            }
        }
        d
    }

    /// No set of the candidates saves more per hour (millionths): per dimension, the
    /// fractional knapsack of the candidates' prices and weights; and per group, its dearest
    /// `max` nodes.
    fn upper_bound(&self) -> f64 {
        let d = &self.dims;
        let mut best = f64::INFINITY;
        for (k, &capacity) in d.capacity.iter().enumerate() {
            let items: Vec<(i128, i64)> = (self.candidates.iter().zip(&d.weights))
                .map(|(c, w)| (c.price, w[k]))
                .collect();
            best = best.min(fractional_knapsack(&items, capacity));
        }
        let per_group: i128 = (0..self.groups.len())
            .map(|g| {
                let mut prices: Vec<i128> = (self.candidates.iter())
                    .filter(|c| c.group == g)
                    .map(|c| c.price)
                    .collect();
                prices.sort_unstable_by(|a, b| b.cmp(a));
                let take = self.groups[g].max.map_or(prices.len(), |m| m as usize);
                prices.iter().take(take).sum::<i128>()
            })
            .sum();
        best.min(per_group as f64)
    }
}

/// Per dimension (resources, then budgets): what the cluster has, and what each candidate
/// takes of it when removed.
#[derive(Debug, Clone, Default)]
struct Dimensions {
    capacity: Vec<i64>,
    /// Per candidate, per dimension.
    weights: Vec<Vec<i64>>,
}

/// The fractional knapsack's optimum: items `(value, weight)` taken whole by value per weight
/// (weightless ones first), the last one in part, up to `capacity`.
fn fractional_knapsack(items: &[(i128, i64)], capacity: i64) -> f64 {
    let weightless: i128 = items.iter().filter(|(_, w)| *w <= 0).map(|(v, _)| v).sum();
    let mut sorted: Vec<(i128, i64)> = items.iter().copied().filter(|(_, w)| *w > 0).collect();
    // By value per weight, highest first (a.0 / a.1 > b.0 / b.1 without dividing).
    sorted.sort_by(|a, b| (b.0 * i128::from(a.1)).cmp(&(a.0 * i128::from(b.1))));
    let (mut value, mut left) = (weightless as f64, capacity.max(0) as f64);
    for (v, w) in sorted {
        if (w as f64) <= left {
            value += v as f64;
            left -= w as f64;
        } else {
            value += v as f64 * left / w as f64;
            break;
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::fractional_knapsack;

    #[test]
    fn fractional_knapsack_takes_the_best_ratio_first() {
        // Ratios 3, 1, 1; capacity 5: 3 for weight 1, then 4 of weight at ratio 1.
        let items = [(2, 2), (3, 1), (3, 3)];
        assert!((fractional_knapsack(&items, 5) - 7.0).abs() < 1e-9);
        // Weightless items are free.
        assert_eq!(fractional_knapsack(&[(4, 0), (1, 10)], 0), 4.0);
    }
}
