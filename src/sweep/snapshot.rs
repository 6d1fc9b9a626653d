//! A snapshot run of a sweep: the variant's scenario perturbed by the run's RNG, scheduled
//! once (`sched::schedule_plan`), and measured — pods placed and pending, GPU allocation,
//! fragmentation, the reasons pods pend, the workloads fully placed — into [`RunStats`].

use std::collections::BTreeMap;

use rand::rngs::ChaCha8Rng;

use super::aggregate::{Aggregate, Fold, RunStats, Summary};
use super::{Perturbations, RunFigures, perturb};
use crate::error::InputError;
use crate::load::Scenario;
use crate::load::expect::Expectation;
use crate::model::resources::GPU_RESOURCES;
use crate::sched::{Outcome, PodPhase};

impl Fold for Aggregate {
    type Run = RunStats;
    type Summary = Summary;

    /// Schedules the perturbed world and measures it.
    fn run(
        scenario: &Scenario,
        options: &[(String, String)],
        rng: &mut ChaCha8Rng,
        p: &Perturbations,
    ) -> Result<RunStats, InputError> {
        let world = perturb::perturb(scenario, p, rng);
        let outcome = crate::sched::schedule_plan(
            world.nodes,
            &world.existing,
            &world.pods,
            &world.steps,
            &world.config,
        );
        let mut stats = stats(&world.pods, &outcome);
        if let Some(k) = &scenario.kueue {
            kueue_stats(k, &mut stats);
        }
        let judged = |e: &Expectation| e.applies_to(options) && Self::judges(e);
        if scenario.expectations.iter().any(judged) {
            let report = crate::report::ScenarioReport::new(scenario, &world.pods, &outcome);
            for (e, held) in (scenario.expectations.iter())
                .zip(crate::check::holds(scenario, &report))
                .filter(|(e, _)| judged(e))
            {
                stats.expectations.insert(e.path.clone(), held);
            }
        }
        Ok(stats)
    }

    fn add(&mut self, run: &RunStats) {
        Aggregate::add(self, run);
    }

    fn merge(&mut self, other: &Self) {
        Aggregate::merge(self, other);
    }

    fn summary(&self) -> Summary {
        Aggregate::summary(self)
    }

    fn runs(&self) -> u64 {
        self.runs
    }

    fn expectations_met(&self) -> &BTreeMap<String, u64> {
        &self.expectations_met
    }

    /// Every expectation but a replay's limits, which only a replay measures.
    fn judges(e: &Expectation) -> bool {
        e.spec.replay.is_none()
    }

    fn row(run: RunStats) -> RunFigures {
        RunFigures::Snapshot(run)
    }
}

/// What a run contributes to its variant's aggregate.
pub fn stats(pods: &[crate::model::Pod], outcome: &Outcome) -> RunStats {
    let placed_phase = |p: PodPhase| matches!(p, PodPhase::Scheduled | PodPhase::Succeeded);
    let placed = outcome
        .pods
        .iter()
        .filter(|o| placed_phase(o.phase))
        .count() as u64;
    let cluster = &outcome.cluster;
    let gpu = GPU_RESOURCES
        .iter()
        .find_map(|r| cluster.table.index(r).map(|i| (*r, i)));
    // Per node: free GPUs; the largest GPU request of a pending pod.
    let (mut total, mut used, mut free) = (0i64, 0i64, Vec::new());
    if let Some((_, i)) = gpu {
        for n in 0..cluster.len() {
            let res = cluster.resources(n);
            total += res.allocatable[i];
            used += res.requested[i];
            free.push(res.allocatable[i] - res.requested[i]);
        }
    }
    let largest_pending = gpu.map_or(0, |(name, _)| {
        pods.iter()
            .zip(&outcome.pods)
            .filter(|(_, o)| !placed_phase(o.phase))
            .filter_map(|(p, _)| p.requests.get(name).copied())
            .max()
            .unwrap_or(0)
    });
    let fragmented: i64 = free.iter().filter(|&&f| f > 0 && f < largest_pending).sum();
    let mut jobs: BTreeMap<String, bool> = BTreeMap::new();
    for (p, o) in pods.iter().zip(&outcome.pods) {
        if let Some(w) = &p.workload {
            *jobs.entry(format!("{}/{w}", p.namespace)).or_insert(true) &= placed_phase(o.phase);
        }
    }
    let mut reasons: BTreeMap<String, u64> = BTreeMap::new();
    for o in outcome.pods.iter().filter(|o| !placed_phase(o.phase)) {
        for r in pending_reasons(o) {
            *reasons.entry(r).or_default() += 1;
        }
    }
    RunStats {
        pods: pods.len() as u64,
        placed,
        pending: pods.len() as u64 - placed,
        gpu_allocation_permille: if total > 0 {
            (used * 1000 / total) as u64
        } else {
            0
        },
        fragmented_gpus: fragmented as u64,
        jobs_placed: jobs
            .iter()
            .filter(|(_, all)| **all)
            .map(|(j, _)| j.clone())
            .collect(),
        jobs: jobs.into_keys().collect(),
        pending_reasons: reasons,
        queued_in_kueue: 0,
        expectations: BTreeMap::new(),
    }
}

/// TrainJobs that Kueue keeps suspended have no pods: they count as seen and not placed, so a
/// run with one is not "all placed". (A queued Pod is a gated pending pod already.)
fn kueue_stats(k: &crate::load::kueue::KueueOutcome, stats: &mut RunStats) {
    let decisions = &k.admission.decisions;
    for ((w, d), kind) in k.workloads.iter().zip(decisions).zip(&k.kinds) {
        if *kind == "TrainJob" && d.admitted.is_none() && d.finished.is_none() {
            let key = format!("{}/{}", w.namespace, w.name);
            if let Err(at) = stats.jobs.binary_search(&key) {
                stats.jobs.insert(at, key);
            }
            stats.queued_in_kueue += 1;
            *stats
                .pending_reasons
                .entry("pending in Kueue".to_string())
                .or_default() += 1;
        }
    }
}

/// The distinct reasons a pending pod's nodes gave, or its status when no node was tried.
fn pending_reasons(o: &crate::sched::PodOutcome) -> Vec<String> {
    let mut out: Vec<String> = match (&o.diagnosis, o.phase) {
        (Some(d), PodPhase::Unschedulable) if d.pre_filter_msg.is_none() => d
            .statuses
            .iter()
            .flat_map(|s| s.reasons.iter().map(|r| r.to_string()))
            .collect(),
        _ => Vec::new(),
    };
    if out.is_empty() {
        out.push(crate::report::model::pending_reason(o.phase, &o.message));
    }
    out.sort();
    out.dedup();
    out
}
