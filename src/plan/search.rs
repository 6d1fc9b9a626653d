//! The search over points (counts of added nodes per candidate), in order of cost.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};

use rayon::prelude::*;

use super::bound::Bound;
use super::estimate::Estimator;
use super::goal::{Reached, judge, placed};
use super::report::{
    AddReport, Answer, CandidateAnswer, FewerNode, FrontierPoint, PendingPod, PlanReport,
    QuotaSetting, Status,
};
use crate::error::InputError;
use crate::load::Scenario;
use crate::load::plan::{PlanLoader, PlanTarget};

/// How far the search may go.
#[derive(Debug, Clone, Copy)]
pub struct SearchOptions {
    /// Points simulated at most (each is one whole run of the scenario).
    pub max_evaluations: usize,
}

impl Default for SearchOptions {
    fn default() -> Self {
        SearchOptions {
            max_evaluations: 128,
        }
    }
}

/// Points the cost-ordered walk may visit (simulated or ruled out by the bound) before it
/// stops: memory for the visited set, whatever the budget.
const MAX_VISITED: usize = 1_000_000;

/// Rounds of the bin-packing estimate before the walk.
const GREEDY_ROUNDS: usize = 16;

/// Points simulated together (in parallel): a constant, so the points simulated — the
/// report's — are the same at any thread count.
const BATCH: usize = 8;

/// Pending pods a point keeps for the report ("why not one node fewer").
const PENDING_KEPT: usize = 20;

/// One simulated point.
#[derive(Debug, Clone)]
struct Evaluation {
    reached: Reached,
    pending: Vec<PendingPod>,
    /// The nodes the bin-packing estimate would add for its pending pods.
    more: Vec<u32>,
}

/// The search's state: the scenario, the bound, the points simulated.
struct Search<'l, 'o> {
    loader: &'l mut PlanLoader<'o>,
    target: &'l PlanTarget,
    bound: Bound,
    estimator: Estimator,
    /// Cost of one node of each candidate, in millionths.
    prices: Vec<i128>,
    least: Vec<u32>,
    /// Per candidate, the count below which the bound rules every point out.
    floors: Vec<u32>,
    most: Vec<u32>,
    evaluated: HashMap<Vec<u32>, Evaluation>,
    /// The order points were simulated in (the frontier reads it).
    order: Vec<Vec<u32>>,
    budget: usize,
    /// Points the bound ruled out.
    ruled_out: usize,
}

/// The target's plan: the cheapest nodes to add for its goal (with candidates), and the
/// existing nodes that can go (with removal groups).
pub fn plan(
    loader: &mut PlanLoader<'_>,
    target: &PlanTarget,
    options: SearchOptions,
) -> Result<PlanReport, Vec<InputError>> {
    let base = loader.load(target, &vec![0; target.spec.candidates.len()])?;
    let remove = (!target.spec.remove.is_empty())
        .then(|| super::removal::remove(&base, &target.spec.remove, options.max_evaluations));
    let add = match target.spec.candidates.is_empty() {
        true => None,
        false => Some(add(loader, target, options, base)?),
    };
    let mut report = PlanReport {
        name: target.name.clone(),
        file: target.file.display().to_string(),
        add,
        remove,
        unmet: Vec::new(),
    };
    if let Some(expect) = &target.spec.expect {
        report.unmet = super::report::unmet(expect, &report);
    }
    Ok(report)
}

/// The cheapest point that meets the target's goal, per candidate alone and mixed; `base` is
/// the scenario with nothing added.
fn add(
    loader: &mut PlanLoader<'_>,
    target: &PlanTarget,
    options: SearchOptions,
    base: Scenario,
) -> Result<AddReport, Vec<InputError>> {
    let candidates = &target.spec.candidates;
    let least: Vec<u32> = candidates.iter().map(|c| c.min).collect();
    let most: Vec<u32> = candidates.iter().map(|c| c.max).collect();
    let none = vec![0; candidates.len()];
    let one: Vec<Scenario> = (0..candidates.len())
        .map(|t| {
            let mut counts = none.clone();
            counts[t] = 1;
            loader.load(target, &counts)
        })
        .collect::<Result<_, _>>()?;
    let bound = match target.spec.goal.over_time() {
        true => Bound::new(&target.spec.goal, &base, &one).without_covers(),
        false => Bound::new(&target.spec.goal, &base, &one),
    };
    let prices: Vec<i128> = (candidates.iter())
        .map(|c| (c.price_per_hour.unwrap_or(1.0) * 1e6).round() as i128)
        .collect();
    let estimator = Estimator {
        // A candidate that adds no node (a quota) has no template.
        templates: (one.iter())
            .map(|s| {
                (s.nodes.len() > base.nodes.len())
                    .then(|| s.nodes.last().cloned())
                    .flatten()
            })
            .collect(),
        per_node: bound.per_node.clone(),
        prices: prices.clone(),
        config: base.config.clone(),
    };
    drop((base, one));
    // Below a candidate's floor no point meets the goal: the walks start there.
    let floors = bound.floors();
    let mut s = Search {
        loader,
        target,
        bound,
        estimator,
        prices,
        least,
        floors,
        most,
        evaluated: HashMap::new(),
        order: Vec::new(),
        budget: options.max_evaluations.max(1),
        ruled_out: 0,
    };
    // Each candidate alone, each with a share of the budget (half of it for them all), then
    // every mix, both in order of cost.
    let n = candidates.len();
    let share = (s.budget / (2 * n)).max(1);
    let mut per_candidate: Vec<CandidateAnswer> = Vec::new();
    for t in (0..n).filter(|_| n > 1) {
        let rest = s.budget;
        s.budget = rest.min(share);
        let found = s.walk(Some(t))?;
        s.budget = rest - (rest.min(share) - s.budget);
        per_candidate.push(s.candidate_answer(t, found));
    }
    // A first answer from the bin-packing estimate, bettered candidate by candidate; the walk
    // in order of cost then proves it cheapest or finds a cheaper one.
    let incumbent = match s.greedy()? {
        Some(x) => Some(s.descend(x)?),
        None => None,
    };
    let found = s.walk_from(None, incumbent)?;
    // Why not one node fewer: simulated even where the bound rules it out, for the pods it
    // leaves pending and their messages.
    if let Some(p) = &found.point {
        let fewer: Vec<Vec<u32>> = (0..p.len())
            .filter(|&t| p[t] > s.least[t])
            .map(|t| {
                let mut q = p.clone();
                q[t] -= 1;
                q
            })
            .collect();
        s.evaluate(&fewer)?;
    }
    Ok(s.report(found, per_candidate))
}

/// A point judged by replaying it over time (a wait goal): its pods' waits, and the first
/// pods never bound with their last messages.
fn replayed(
    goal: &crate::load::scenario::PlanGoal,
    scenario: &Scenario,
    candidates: usize,
) -> Result<Evaluation, InputError> {
    use crate::replay::{PodRecord, Sinks};
    let mut pods: Vec<super::goal::Waited> = Vec::new();
    let mut pending: Vec<PendingPod> = Vec::new();
    let mut record = |r: &PodRecord| {
        let job = if r.job.is_empty() { &r.name } else { &r.job };
        let wait = r.first_bind.map(|b| b.saturating_sub(r.arrival));
        let workload = format!("{}/{job}", r.namespace);
        pods.push(super::goal::Waited::of(goal, &r.queue, &workload, wait));
        if r.first_bind.is_none() && pending.len() < PENDING_KEPT {
            pending.push(PendingPod {
                pod: format!("{}/{}", r.namespace, r.name),
                message: r.message.clone().unwrap_or_default(),
            });
        }
    };
    let sinks = Sinks {
        pod_record: Some(&mut record),
        sample: None,
        progress: None,
    };
    let report = crate::replay::replay(scenario, sinks)?;
    Ok(Evaluation {
        reached: super::goal::judge_replay(goal, &report, &pods),
        pending,
        more: vec![0; candidates],
    })
}

/// What a walk found: the cheapest point meeting the goal, and whether every cheaper point
/// was simulated or ruled out (else the budget ran out first).
struct Found {
    point: Option<Vec<u32>>,
    proven: bool,
}

impl Search<'_, '_> {
    fn cost(&self, counts: &[u32]) -> i128 {
        (self.prices.iter().zip(counts))
            .map(|(p, &k)| p * i128::from(k))
            .sum()
    }

    /// Walks the points from the least in order of cost (ties: fewer nodes of the first
    /// candidates), only candidate `only` varying when given, simulating a batch at a time
    /// those the bound allows, until one meets the goal and no cheaper one is left.
    fn walk(&mut self, only: Option<usize>) -> Result<Found, Vec<InputError>> {
        self.walk_from(only, None)
    }

    /// The start of the walks: each candidate at its floor (and its min).
    fn start(&self) -> Vec<u32> {
        (0..self.least.len())
            .map(|t| self.least[t].max(self.floors[t]).min(self.most[t]))
            .collect()
    }

    /// Simulates one point against the budget; `None` when the budget is spent.
    fn try_point(&mut self, x: &[u32]) -> Result<Option<&Evaluation>, Vec<InputError>> {
        if !self.evaluated.contains_key(x) {
            if self.budget == 0 {
                return Ok(None);
            }
            self.budget -= 1;
            self.evaluate(&[x.to_vec()])?;
        }
        Ok(self.evaluated.get(x))
    }

    /// From the start, adds what the estimate says the pending pods need, until a point
    /// meets the goal (a few rounds at most).
    fn greedy(&mut self) -> Result<Option<Vec<u32>>, Vec<InputError>> {
        let mut x = self.start();
        for _ in 0..GREEDY_ROUNDS {
            let Some(e) = self.try_point(&x)? else {
                return Ok(None);
            };
            if e.reached.met {
                return Ok(Some(x));
            }
            let more = e.more.clone();
            let next: Vec<u32> = (0..x.len())
                .map(|t| x[t].saturating_add(more[t]).min(self.most[t]))
                .collect();
            if next == x {
                return Ok(None);
            }
            x = next;
        }
        Ok(None)
    }

    /// Lowers each candidate's count of a point that meets the goal, in turn, to the least
    /// that still meets it by bisection (placement is not monotone: the walk, not this, is
    /// what proves an answer cheapest).
    fn descend(&mut self, mut x: Vec<u32>) -> Result<(i128, Vec<u32>), Vec<InputError>> {
        let start = self.start();
        for t in 0..x.len() {
            let (mut lo, mut hi) = (start[t], x[t]);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                let mut y = x.clone();
                y[t] = mid;
                let met = match self.bound.short_of(&y) {
                    Some(_) => false,
                    None => match self.try_point(&y)? {
                        Some(e) => e.reached.met,
                        None => break,
                    },
                };
                match met {
                    true => hi = mid,
                    false => lo = mid + 1,
                }
            }
            x[t] = hi;
        }
        Ok((self.cost(&x), x))
    }

    fn walk_from(
        &mut self,
        only: Option<usize>,
        incumbent: Option<(i128, Vec<u32>)>,
    ) -> Result<Found, Vec<InputError>> {
        // The bound only grows with nodes: short at the most, short everywhere.
        let mut most = self.least.clone();
        for t in (0..most.len()).filter(|&t| only.is_none_or(|o| o == t)) {
            most[t] = self.most[t];
        }
        if self.bound.short_of(&most).is_some() {
            return Ok(Found {
                point: None,
                proven: true,
            });
        }
        let mut heap: BinaryHeap<Reverse<(i128, Vec<u32>)>> = BinaryHeap::new();
        let mut seen: HashSet<Vec<u32>> = HashSet::new();
        // From the floors of the candidates that vary (the points below are ruled out).
        let start: Vec<u32> = (0..self.least.len())
            .map(|t| match only.is_none_or(|o| o == t) {
                true => self.least[t].max(self.floors[t]).min(self.most[t]),
                false => self.least[t],
            })
            .collect();
        heap.push(Reverse((self.cost(&start), start.clone())));
        seen.insert(start);
        let mut best: Option<(i128, Vec<u32>)> = incumbent;
        // The visited set filled up: some points were never walked.
        let mut truncated = false;
        loop {
            let mut batch: Vec<Vec<u32>> = Vec::new();
            while batch.len() < BATCH {
                let Some(Reverse((cost, point))) = heap.pop() else {
                    break;
                };
                if best.as_ref().is_some_and(|(c, _)| cost >= *c) {
                    heap.push(Reverse((cost, point)));
                    break;
                }
                for t in 0..point.len() {
                    if only.is_some_and(|o| o != t) || point[t] >= self.most[t] {
                        continue;
                    }
                    let mut next = point.clone();
                    next[t] += 1;
                    if seen.len() >= MAX_VISITED {
                        truncated = true;
                    } else if seen.insert(next.clone()) {
                        heap.push(Reverse((self.cost(&next), next)));
                    }
                }
                if self.bound.short_of(&point).is_some() {
                    self.ruled_out += 1;
                    continue;
                }
                if self.evaluated.contains_key(&point) || self.budget > 0 {
                    batch.push(point);
                } else {
                    // Out of budget: what is left is unknown.
                    return Ok(Found {
                        point: best.map(|(_, p)| p),
                        proven: false,
                    });
                }
                if !self.evaluated.contains_key(batch.last().expect("pushed")) {
                    self.budget -= 1;
                }
                if self.budget == 0 {
                    break;
                }
            }
            if batch.is_empty() {
                // Every point cheaper than the best is simulated or ruled out; without a
                // best, none meets the goal (or the visited set is full).
                return Ok(Found {
                    proven: !truncated,
                    point: best.map(|(_, p)| p),
                });
            }
            self.evaluate(&batch)?;
            for point in batch {
                let cost = self.cost(&point);
                if self.evaluated[&point].reached.met
                    && best.as_ref().is_none_or(|(c, p)| (cost, &point) < (*c, p))
                {
                    best = Some((cost, point));
                }
            }
            if self.budget == 0 && best.is_none() {
                return Ok(Found {
                    point: None,
                    proven: false,
                });
            }
        }
    }

    /// Simulates the points not simulated yet: loaded one after another, run in parallel.
    fn evaluate(&mut self, points: &[Vec<u32>]) -> Result<(), Vec<InputError>> {
        let fresh: Vec<&Vec<u32>> = (points.iter())
            .filter(|p| !self.evaluated.contains_key(*p))
            .collect();
        let scenarios: Vec<Scenario> = (fresh.iter())
            .map(|p| self.loader.load(self.target, p))
            .collect::<Result<_, _>>()?;
        let goal = &self.target.spec.goal;
        let estimator = &self.estimator;
        if goal.over_time() {
            let results: Vec<Evaluation> = (scenarios.par_iter())
                .map(|scenario| replayed(goal, scenario, self.most.len()))
                .collect::<Result<_, InputError>>()
                .map_err(|e| vec![e])?;
            for (p, e) in fresh.into_iter().zip(results) {
                self.order.push(p.clone());
                self.evaluated.insert(p.clone(), e);
            }
            return Ok(());
        }
        let results: Vec<Evaluation> = (scenarios.par_iter())
            .map(|scenario| {
                let report = crate::simulate(scenario);
                let unplaced: Vec<&crate::model::Pod> =
                    (scenario.workloads.iter().zip(&report.pods))
                        .filter(|(_, p)| !placed(p.status))
                        .map(|(pod, _)| pod)
                        .collect();
                let more = estimator.more(&unplaced);
                let pending = (report.pods.iter())
                    .filter(|p| !placed(p.status))
                    .take(PENDING_KEPT)
                    .map(|p| PendingPod {
                        pod: format!("{}/{}", p.namespace, p.name),
                        message: p.message.clone(),
                    })
                    .collect();
                Evaluation {
                    reached: judge(goal, &report),
                    pending,
                    more,
                }
            })
            .collect();
        for (p, e) in fresh.into_iter().zip(results) {
            self.order.push(p.clone());
            self.evaluated.insert(p.clone(), e);
        }
        Ok(())
    }

    fn named(&self, counts: &[u32]) -> BTreeMap<String, u32> {
        (self.target.spec.candidates.iter().zip(counts))
            .map(|(c, &k)| (c.name.clone(), k))
            .collect()
    }

    fn candidate_answer(&self, t: usize, found: Found) -> CandidateAnswer {
        let name = self.target.spec.candidates[t].name.clone();
        let mut most = self.least.clone();
        most[t] = self.most[t];
        CandidateAnswer {
            candidate: name,
            count: found.point.as_ref().map(|p| p[t]),
            cost: found.point.as_ref().map(|p| self.cost(p) as f64 / 1e6),
            proven: found.proven,
            short_of_at_most: self.bound.short_of(&most).map(str::to_string),
        }
    }

    fn report(&self, found: Found, per_candidate: Vec<CandidateAnswer>) -> AddReport {
        let candidates = &self.target.spec.candidates;
        let all_most = self.bound.short_of(&self.most).map(str::to_string);
        let status = match (&found.point, found.proven) {
            (Some(_), true) => Status::Optimal,
            (Some(_), false) => Status::BestFound,
            (None, _) if all_most.is_some() => Status::Infeasible,
            (None, true) => Status::Infeasible,
            (None, false) => Status::Unknown,
        };
        let answer = found.point.as_ref().map(|p| Answer {
            added: self.named(p),
            nodes: (candidates.iter().zip(p))
                .filter(|(c, _)| c.quota.is_none())
                .map(|(_, &k)| u64::from(k))
                .sum(),
            quotas: (candidates.iter().zip(p))
                .filter_map(|(c, &k)| c.quota.as_ref().map(|q| (c, q, k)))
                .map(|(c, q, k)| QuotaSetting {
                    candidate: c.name.clone(),
                    cluster_queue: q.cluster_queue.clone(),
                    flavor: q.flavor.clone(),
                    resource: q.resource.clone(),
                    nominal_quota: q.nominal_quota(k),
                })
                .collect(),
            cost: self.cost(p) as f64 / 1e6,
            reached: self.evaluated[p].reached.clone(),
        });
        // Why not one node fewer: each candidate of the answer with one node less.
        let fewer = (found.point.iter())
            .flat_map(|p| {
                (0..p.len())
                    .filter(|&t| p[t] > self.least[t])
                    .map(move |t| {
                        let mut q = p.clone();
                        q[t] -= 1;
                        (t, q)
                    })
            })
            .map(|(t, q)| FewerNode {
                candidate: candidates[t].name.clone(),
                added: self.named(&q),
                cost: self.cost(&q) as f64 / 1e6,
                short_of: self.bound.short_of(&q).map(str::to_string),
                reached: self.evaluated.get(&q).map(|e| e.reached.clone()),
                pending: self
                    .evaluated
                    .get(&q)
                    .map(|e| e.pending.clone())
                    .unwrap_or_default(),
            })
            .collect();
        // The frontier: points in order of cost, each better than every cheaper one (fewer
        // pending pods; for a wait goal, a lower p95 wait first).
        let mut points: Vec<&Vec<u32>> = self.order.iter().collect();
        points.sort_by_key(|p| (self.cost(p), (*p).clone()));
        let all: Vec<FrontierPoint> = (points.into_iter())
            .map(|p| {
                let reached = &self.evaluated[p].reached;
                FrontierPoint {
                    added: self.named(p),
                    cost: self.cost(p) as f64 / 1e6,
                    pending_pods: reached.pending_pods,
                    wait_p95_ms: reached.wait_p95_ms,
                    met: reached.met,
                }
            })
            .collect();
        let mut frontier: Vec<FrontierPoint> = Vec::new();
        for p in &all {
            if frontier.last().is_none_or(|f| !p.worse_than(f)) {
                frontier.push(p.clone());
            }
        }
        AddReport {
            status,
            answer,
            short_of_at_most: all_most,
            per_candidate,
            why_not_fewer: fewer,
            frontier,
            points: all,
            lower_bound_cost: self.cost(&self.start()) as f64 / 1e6,
            evaluations: self.evaluated.len(),
            ruled_out_by_bound: self.ruled_out,
        }
    }
}
