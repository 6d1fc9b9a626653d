//! `schedsim sweep`: every variant of every scenario, times seeds, in parallel.
//!
//! A run is (scenario, variant, seed); its index in that order is its identity. Each run's
//! `ChaCha8Rng` is derived from the master seed and that index only — never from the thread
//! or the shard — and drives its perturbations (arrival shuffle, node failures, pool jitter)
//! and the scheduler's tie-breaks. Runs fold into per-variant [`Aggregate`]s as they finish,
//! so results are identical at any thread count, and `--shard I/N` (runs whose index is I
//! modulo N) merges back into exactly the unsharded aggregates.

pub mod aggregate;
pub mod chart;
mod daemon_pods;
pub mod perturb;
pub mod table;

use std::collections::BTreeMap;

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::load::SweepScenario;
use crate::model::resources::GPU_RESOURCES;
use crate::sched::{Outcome, PodPhase};
pub use aggregate::{Aggregate, RunStats, Summary};

/// Command-line settings of a sweep (each overrides the scenario's `spec.sweep`).
#[derive(Debug, Clone, Default)]
pub struct SweepOptions {
    pub seeds: Option<u32>,
    /// Master seed (default: the scenario's `scheduler.seed`).
    pub seed: Option<u64>,
    pub shuffle_arrivals: Option<bool>,
    pub node_failure_probability: Option<f64>,
    pub pool_jitter: Option<f64>,
    /// `(I, N)`: run the I-th of N slices.
    pub shard: Option<(u64, u64)>,
    /// Keep one row per run.
    pub keep_runs: bool,
}

/// The whole sweep's result: the format `sweep --format json` prints and `merge` reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SweepReport {
    /// `I/N` for one shard's output; absent for a whole (or merged) sweep.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    pub scenarios: Vec<ScenarioSweep>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioSweep {
    pub name: String,
    pub file: String,
    pub seeds: u32,
    pub master_seed: u64,
    pub perturbations: Perturbations,
    pub variants: Vec<VariantSweep>,
}

/// What varies from seed to seed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Perturbations {
    pub shuffle_arrivals: bool,
    pub node_failure_probability: f64,
    pub pool_jitter: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VariantSweep {
    pub name: String,
    pub options: BTreeMap<String, String>,
    /// The raw, mergeable counts.
    pub aggregate: Aggregate,
    /// Derived from `aggregate` (recomputed after a merge).
    pub summary: Summary,
    /// `spec.expect` entries that apply to this variant, judged over its runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expectations: Vec<ExpectationResult>,
}

/// One run's row (`--runs`, JSON lines).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRow {
    pub run: u64,
    pub scenario: String,
    pub variant: String,
    pub seed: u32,
    #[serde(flatten)]
    pub stats: RunStats,
}

/// Runs per variant of a scenario: `--seeds`, else its `spec.sweep.seeds`, else 1.
fn seeds_of(s: &SweepScenario, opts: &SweepOptions) -> u32 {
    opts.seeds.or(s.sweep.seeds).unwrap_or(1).max(1)
}

/// How many runs this sweep (or shard) does.
pub fn run_count(scenarios: &[SweepScenario], opts: &SweepOptions) -> u64 {
    let total: u64 = scenarios
        .iter()
        .map(|s| s.variants.len() as u64 * u64::from(seeds_of(s, opts)))
        .sum();
    match opts.shard {
        Some((i, n)) => total / n + u64::from(i < total % n),
        None => total,
    }
}

/// One run to do.
struct Job {
    run: u64,
    scenario: usize,
    variant: usize,
    seed: u32,
}

/// Runs the sweep; `progress` is called once per finished run (from any thread).
pub fn run(
    scenarios: &[SweepScenario],
    opts: &SweepOptions,
    progress: &(dyn Fn() + Sync),
) -> (SweepReport, Vec<RunRow>) {
    let settings: Vec<(u32, u64, Perturbations)> = scenarios
        .iter()
        .map(|s| {
            let seeds = seeds_of(s, opts);
            let master = opts
                .seed
                .unwrap_or_else(|| s.variants.first().map_or(0, |v| v.scenario.config.seed));
            let p = Perturbations {
                shuffle_arrivals: opts.shuffle_arrivals.unwrap_or(s.sweep.shuffle_arrivals),
                node_failure_probability: opts
                    .node_failure_probability
                    .or(s.sweep.node_failure_probability)
                    .unwrap_or(0.0),
                pool_jitter: opts.pool_jitter.or(s.sweep.pool_jitter).unwrap_or(0.0),
            };
            (seeds, master, p)
        })
        .collect();
    let jobs = plan(scenarios, &settings, opts.shard);
    // Slot of each (scenario, variant) in the flat aggregate vector.
    let mut slot = Vec::new();
    let mut slots = 0;
    for s in scenarios {
        slot.push(slots);
        slots += s.variants.len();
    }
    let empty = || (vec![Aggregate::default(); slots], Vec::new());
    let (aggregates, mut rows) = jobs
        .par_iter()
        .fold(empty, |(mut aggs, mut rows), job| {
            let sc = &scenarios[job.scenario];
            let (_, master, p) = &settings[job.scenario];
            let stats = run_one(sc, job, *master, p);
            aggs[slot[job.scenario] + job.variant].add(&stats);
            if opts.keep_runs {
                rows.push(RunRow {
                    run: job.run,
                    scenario: sc.name.clone(),
                    variant: sc.variants[job.variant].name.clone(),
                    seed: job.seed,
                    stats,
                });
            }
            progress();
            (aggs, rows)
        })
        .reduce(empty, |(mut a, mut ra), (b, rb)| {
            for (x, y) in a.iter_mut().zip(&b) {
                x.merge(y);
            }
            ra.extend(rb);
            (a, ra)
        });
    rows.sort_by_key(|r| r.run);
    let report = SweepReport {
        shard: opts
            .shard
            .filter(|&(_, n)| n > 1)
            .map(|(i, n)| format!("{i}/{n}")),
        scenarios: scenarios
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let (seeds, master, p) = &settings[i];
                ScenarioSweep {
                    name: s.name.clone(),
                    file: s.file.display().to_string(),
                    seeds: *seeds,
                    master_seed: *master,
                    perturbations: p.clone(),
                    variants: s
                        .variants
                        .iter()
                        .enumerate()
                        .map(|(v, variant)| {
                            let aggregate = aggregates[slot[i] + v].clone();
                            let mut expectations: Vec<ExpectationResult> = variant
                                .scenario
                                .expectations
                                .iter()
                                .filter(|e| e.applies_to(&variant.options))
                                .map(|e| ExpectationResult {
                                    path: e.path.clone(),
                                    title: e.title(),
                                    required_share: e.spec.share.unwrap_or(1.0),
                                    met_runs: 0,
                                    met: false,
                                })
                                .collect();
                            judge(&mut expectations, &aggregate);
                            VariantSweep {
                                name: variant.name.clone(),
                                options: variant.options.iter().cloned().collect(),
                                summary: aggregate.summary(),
                                aggregate,
                                expectations,
                            }
                        })
                        .collect(),
                }
            })
            .collect(),
    };
    (report, rows)
}

/// The runs of this shard, in run order.
fn plan(
    scenarios: &[SweepScenario],
    settings: &[(u32, u64, Perturbations)],
    shard: Option<(u64, u64)>,
) -> Vec<Job> {
    let (index, count) = shard.unwrap_or((0, 1));
    let mut jobs = Vec::new();
    let mut run = 0u64;
    for (s, sc) in scenarios.iter().enumerate() {
        for variant in 0..sc.variants.len() {
            for seed in 0..settings[s].0 {
                if run % count == index {
                    jobs.push(Job {
                        run,
                        scenario: s,
                        variant,
                        seed,
                    });
                }
                run += 1;
            }
        }
    }
    jobs
}

/// `splitmix64`: spreads (master seed, run index) over the seed space.
fn mix(master: u64, run: u64) -> u64 {
    let mut z = master ^ run.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// One run: perturb the variant's scenario with the run's RNG, schedule, measure.
fn run_one(sc: &SweepScenario, job: &Job, master: u64, p: &Perturbations) -> RunStats {
    let scenario = &sc.variants[job.variant].scenario;
    // Seeded by (master, variant, seed): the same seed of two variants sees the same chance.
    let mut rng = ChaCha8Rng::seed_from_u64(mix(master, u64::from(job.seed)));
    let world = perturb::perturb(scenario, p, &mut rng);
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
    let options = &sc.variants[job.variant].options;
    if scenario.expectations.iter().any(|e| e.applies_to(options)) {
        let report = crate::report::ScenarioReport::new(scenario, &world.pods, &outcome);
        for (e, held) in scenario
            .expectations
            .iter()
            .zip(crate::check::holds(scenario, &report))
        {
            if e.applies_to(options) {
                stats.expectations.insert(e.path.clone(), held);
            }
        }
    }
    stats
}

/// A variant's expectation: how often it held against how often it must.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExpectationResult {
    pub path: String,
    pub title: String,
    /// The share of runs it must hold in.
    pub required_share: f64,
    /// Derived from the aggregate: runs it held in, and whether that is enough.
    pub met_runs: u64,
    pub met: bool,
}

/// The expectations of a variant, judged on its aggregate.
fn judge(expectations: &mut [ExpectationResult], aggregate: &Aggregate) {
    for e in expectations {
        e.met_runs = aggregate
            .expectations_met
            .get(&e.path)
            .copied()
            .unwrap_or(0);
        e.met = e.met_runs as f64 >= e.required_share * aggregate.runs as f64 - 1e-9;
    }
}

impl SweepReport {
    /// Expectations that did not hold in enough runs, as (scenario, variant, expectation).
    pub fn unmet(&self) -> Vec<(&str, &str, &ExpectationResult)> {
        self.scenarios
            .iter()
            .flat_map(|s| {
                s.variants.iter().flat_map(move |v| {
                    v.expectations
                        .iter()
                        .filter(|e| !e.met)
                        .map(move |e| (s.name.as_str(), v.name.as_str(), e))
                })
            })
            .collect()
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

/// Adds shard reports into one: the aggregates sum; the summaries are derived again.
pub fn merge(reports: Vec<SweepReport>) -> Result<SweepReport, String> {
    let mut reports = reports.into_iter();
    let Some(mut merged) = reports.next() else {
        return Err("nothing to merge".into());
    };
    for r in reports {
        let shape = |r: &SweepReport| -> Vec<(String, u32, u64, Vec<String>)> {
            r.scenarios
                .iter()
                .map(|s| {
                    (
                        s.name.clone(),
                        s.seeds,
                        s.master_seed,
                        s.variants.iter().map(|v| v.name.clone()).collect(),
                    )
                })
                .collect()
        };
        if shape(&r) != shape(&merged) {
            return Err(
                "the reports are of different sweeps (scenarios, variants, seeds or master seeds differ)"
                    .into(),
            );
        }
        for (s, t) in merged.scenarios.iter_mut().zip(&r.scenarios) {
            for (v, w) in s.variants.iter_mut().zip(&t.variants) {
                v.aggregate.merge(&w.aggregate);
            }
        }
    }
    merged.shard = None;
    for s in &mut merged.scenarios {
        for v in &mut s.variants {
            v.summary = v.aggregate.summary();
            judge(&mut v.expectations, &v.aggregate);
        }
    }
    Ok(merged)
}
