//! `schedsim sweep`: every variant of every scenario, times seeds, in parallel.
//!
//! A run is (scenario, variant, seed); its index in that order is its identity. Each run's
//! `ChaCha8Rng` is derived from the master seed and that index only — never from the thread
//! or the shard — and drives its perturbations (arrival shuffle, node failures, pool jitter)
//! and the scheduler's tie-breaks. Runs fold into per-variant aggregates as they finish, so
//! results are identical at any thread count, and `--shard I/N` (runs whose index is I
//! modulo N) merges back into exactly the unsharded aggregates.
//!
//! A scenario's run is a snapshot ([`snapshot`]: scheduled once, [`Aggregate`]) or, when the
//! scenario has `spec.replay`, a replay over time ([`over_time`]: [`ReplayAggregate`]); both
//! are a [`Fold`], and everything else — batches, shards, rows, expectations, merge — is the
//! same for both.

pub mod aggregate;
pub mod chart;
mod daemon_pods;
pub mod over_time;
pub mod perturb;
mod snapshot;
pub mod table;

use std::collections::BTreeMap;

use rand::SeedableRng;
use rand::rngs::ChaCha8Rng;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use std::ops::Range;

use crate::error::InputError;
use crate::load::scenario::SweepSpec;
use crate::load::{Scenario, SweepLoader, SweepPlan, VariantName};
pub use aggregate::{Aggregate, Fold, RunStats, Summary};
pub use over_time::{ReplayAggregate, ReplayRun, ReplaySummary};

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
    /// The scenarios swept as snapshots.
    pub scenarios: Vec<ScenarioSweep>,
    /// The scenarios with `spec.replay`, each run a replay over time.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub replays: Vec<ScenarioSweep<ReplayVariant>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioSweep<V = VariantSweep> {
    pub name: String,
    pub file: String,
    pub seeds: u32,
    pub master_seed: u64,
    pub perturbations: Perturbations,
    pub variants: Vec<V>,
}

/// What varies from seed to seed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Perturbations {
    pub shuffle_arrivals: bool,
    pub node_failure_probability: f64,
    pub pool_jitter: f64,
}

/// A variant's runs: snapshots ([`Aggregate`], [`Summary`]) or replays ([`ReplayVariant`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct VariantSweep<A = Aggregate, S = Summary> {
    pub name: String,
    pub options: BTreeMap<String, String>,
    /// The raw, mergeable counts.
    pub aggregate: A,
    /// Derived from `aggregate` (recomputed after a merge).
    pub summary: S,
    /// `spec.expect` entries that apply to this variant, judged over its runs.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expectations: Vec<ExpectationResult>,
}

/// A replayed variant's runs.
pub type ReplayVariant = VariantSweep<ReplayAggregate, ReplaySummary>;

/// The variants of a [`Fold`]'s scenario.
type ScenarioOf<F> = ScenarioSweep<VariantSweep<F, <F as Fold>::Summary>>;

/// One run's row (`--runs`, JSON lines).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRow {
    pub run: u64,
    pub scenario: String,
    pub variant: String,
    pub seed: u32,
    #[serde(flatten)]
    pub figures: RunFigures,
}

/// A run's own figures: a snapshot's or a replay's.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum RunFigures {
    Snapshot(RunStats),
    Replay(ReplayRun),
}

/// Runs per variant of a scenario: `--seeds`, else its `spec.sweep.seeds`, else 1.
fn seeds_of(sweep: &SweepSpec, opts: &SweepOptions) -> u32 {
    opts.seeds.or(sweep.seeds).unwrap_or(1).max(1)
}

/// How many runs this sweep (or shard) does.
pub fn run_count(plans: &[SweepPlan], opts: &SweepOptions) -> u64 {
    let total: u64 = plans
        .iter()
        .map(|p| p.variants.len() as u64 * u64::from(seeds_of(&p.sweep, opts)))
        .sum();
    shard_len(0..total, opts.shard)
}

/// How many runs of `range` belong to the shard: those whose index is I modulo N.
fn shard_len(range: Range<u64>, shard: Option<(u64, u64)>) -> u64 {
    let (i, n) = shard.unwrap_or((0, 1));
    let below = |end: u64| end / n + u64::from(i < end % n);
    below(range.end) - below(range.start)
}

/// The k-th run of `range` in the shard.
fn shard_run(range: &Range<u64>, shard: Option<(u64, u64)>, k: u64) -> u64 {
    let (i, n) = shard.unwrap_or((0, 1));
    let first = range.start + (i + n - range.start % n) % n;
    first + k * n
}

/// Runs done between two writes of run rows: what bounds the rows held at once.
const RUNS_PER_CHUNK: u64 = 4096;

/// Variants loaded at once, per thread: enough to keep every thread busy when variants have
/// few seeds, few enough that memory holds a handful of clusters.
const VARIANTS_PER_THREAD: usize = 2;

/// What a sweep does with the run rows it produces, in run order (`--runs`).
pub type RowSink<'a> = &'a mut dyn FnMut(&[RunRow]) -> std::io::Result<()>;

/// Runs the sweep: each scenario's variants are loaded a few at a time and dropped once their
/// runs are done; runs fold into their variant's aggregate as they finish, and their rows (with
/// `keep_runs`) go to `rows` in run order, a chunk at a time. Memory is bounded by a few loaded
/// variants and one chunk of rows, whatever the number of seeds. `progress` is called once per
/// finished run (from any thread). Returns the report and the errors of variants that did not
/// load or whose runs failed (a replay's trace that cannot be read), each once (the others are
/// reported).
pub fn run(
    plans: &[SweepPlan],
    loader: &mut SweepLoader<'_>,
    opts: &SweepOptions,
    progress: &(dyn Fn() + Sync),
    rows: RowSink<'_>,
) -> std::io::Result<(SweepReport, Vec<InputError>)> {
    let mut report = SweepReport {
        shard: opts
            .shard
            .filter(|&(_, n)| n > 1)
            .map(|(i, n)| format!("{i}/{n}")),
        scenarios: Vec::new(),
        replays: Vec::new(),
    };
    let mut errors = Vec::new();
    let mut first_run = 0u64;
    for plan in plans {
        let mut sweep = PlanSweep {
            plan,
            opts,
            first_run,
            progress,
            rows: &mut *rows,
            errors: &mut errors,
        };
        match plan.replay {
            true => report.replays.extend(sweep.run::<ReplayAggregate>(loader)?),
            false => report.scenarios.extend(sweep.run::<Aggregate>(loader)?),
        }
        first_run += plan.variants.len() as u64 * u64::from(seeds_of(&plan.sweep, opts));
    }
    Ok((report, errors))
}

/// One scenario's part of a sweep.
struct PlanSweep<'a, 'r> {
    plan: &'a SweepPlan,
    opts: &'a SweepOptions,
    /// The index of the scenario's first run.
    first_run: u64,
    progress: &'a (dyn Fn() + Sync),
    rows: RowSink<'r>,
    errors: &'a mut Vec<InputError>,
}

impl PlanSweep<'_, '_> {
    /// The scenario's variants, loaded a few at a time, each run `F`'s way; `None` when no
    /// variant loaded.
    fn run<F: Fold>(
        &mut self,
        loader: &mut SweepLoader<'_>,
    ) -> std::io::Result<Option<ScenarioOf<F>>> {
        let (plan, opts) = (self.plan, self.opts);
        let batch_size = VARIANTS_PER_THREAD * rayon::current_num_threads().max(1);
        let seeds = seeds_of(&plan.sweep, opts);
        let mut master = opts.seed;
        let p = Perturbations {
            shuffle_arrivals: opts.shuffle_arrivals.unwrap_or(plan.sweep.shuffle_arrivals),
            node_failure_probability: opts
                .node_failure_probability
                .or(plan.sweep.node_failure_probability)
                .unwrap_or(0.0),
            pool_jitter: opts.pool_jitter.or(plan.sweep.pool_jitter).unwrap_or(0.0),
        };
        let mut variants = Vec::new();
        for start in (0..plan.variants.len()).step_by(batch_size) {
            let end = (start + batch_size).min(plan.variants.len());
            let mut loaded: Vec<(usize, Scenario)> = Vec::new();
            for v in start..end {
                match loader.variant(plan, v) {
                    Ok(s) => loaded.push((v, s)),
                    Err(mut e) => self.errors.append(&mut e),
                }
            }
            // The master seed defaults to the scheduler seed of the first variant that loads.
            master = master.or(loaded.first().map(|(_, s)| s.config.seed));
            let Some(master) = master else {
                continue;
            };
            let batch = Batch {
                seeds,
                master,
                perturbations: &p,
                first_run: self.first_run,
                loaded: &loaded,
                names: &plan.variants,
                scenario: &plan.name,
            };
            let mut aggregates = vec![F::default(); loaded.len()];
            let failed = batch.run(opts, self.progress, &mut *self.rows, &mut aggregates)?;
            // A run fails as every run of its variant would (a trace that cannot be read):
            // each error is said once.
            for e in failed {
                if !self.errors.contains(&e) {
                    self.errors.push(e);
                }
            }
            for ((v, scenario), aggregate) in loaded.iter().zip(aggregates) {
                variants.push(variant_sweep(&plan.variants[*v], scenario, aggregate));
            }
        }
        Ok((!variants.is_empty()).then(|| ScenarioSweep {
            name: plan.name.clone(),
            file: plan.file.display().to_string(),
            seeds,
            master_seed: master.unwrap_or(0),
            perturbations: p,
            variants,
        }))
    }
}

/// `splitmix64`: spreads (master seed, run index) over the seed space.
fn mix(master: u64, run: u64) -> u64 {
    let mut z = master ^ run.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// Loaded variants of one scenario whose runs are done together.
struct Batch<'a> {
    seeds: u32,
    master: u64,
    perturbations: &'a Perturbations,
    /// The index of the scenario's first run.
    first_run: u64,
    /// (variant index in the matrix, its scenario).
    loaded: &'a [(usize, Scenario)],
    names: &'a [VariantName],
    scenario: &'a str,
}

/// What a chunk of runs folds into: the aggregates by loaded variant, the rows, the errors of
/// the runs that failed (by run).
type Folded<F> = (BTreeMap<usize, F>, Vec<RunRow>, Vec<(u64, InputError)>);

impl Batch<'_> {
    /// Every run of the loaded variants that belongs to the shard, in parallel, a chunk at a
    /// time, folded into `aggregates` (one per loaded variant); each chunk's rows go to `sink`
    /// in run order. Returns the errors of the runs that failed, in run order.
    fn run<F: Fold>(
        &self,
        opts: &SweepOptions,
        progress: &(dyn Fn() + Sync),
        sink: RowSink<'_>,
        aggregates: &mut [F],
    ) -> std::io::Result<Vec<InputError>> {
        let seeds = u64::from(self.seeds);
        let ranges: Vec<Range<u64>> = self
            .loaded
            .iter()
            .map(|(v, _)| {
                let start = self.first_run + *v as u64 * seeds;
                start..start + seeds
            })
            .collect();
        // Shard-local run k of the batch is run k - offsets[i] of loaded variant i, where
        // offsets[i] <= k < offsets[i + 1].
        let mut offsets = vec![0u64];
        for r in &ranges {
            offsets.push(offsets[offsets.len() - 1] + shard_len(r.clone(), opts.shard));
        }
        let total = offsets[offsets.len() - 1];
        let this = self;
        let mut errors = Vec::new();
        for chunk in (0..total).step_by(RUNS_PER_CHUNK as usize) {
            let chunk_end = (chunk + RUNS_PER_CHUNK).min(total);
            let empty = || -> Folded<F> { (BTreeMap::new(), Vec::new(), Vec::new()) };
            let (folded, mut rows, mut failed) = (chunk..chunk_end)
                .into_par_iter()
                .fold(empty, |(mut aggs, mut rows, mut failed), k| {
                    let i = offsets.partition_point(|&o| o <= k) - 1;
                    let run = shard_run(&ranges[i], opts.shard, k - offsets[i]);
                    let seed = (run - ranges[i].start) as u32;
                    let (v, scenario) = &this.loaded[i];
                    let name = &this.names[*v];
                    // Seeded by (master, seed): the same seed of two variants sees the same
                    // chance.
                    let mut rng = ChaCha8Rng::seed_from_u64(mix(this.master, u64::from(seed)));
                    match F::run(scenario, &name.options, &mut rng, this.perturbations) {
                        Ok(stats) => {
                            aggs.entry(i).or_default().add(&stats);
                            if opts.keep_runs {
                                rows.push(RunRow {
                                    run,
                                    scenario: this.scenario.to_string(),
                                    variant: name.name.clone(),
                                    seed,
                                    figures: F::row(stats),
                                });
                            }
                        }
                        Err(e) => failed.push((run, e)),
                    }
                    progress();
                    (aggs, rows, failed)
                })
                .reduce(empty, |(mut a, mut ra, mut fa), (b, rb, fb)| {
                    for (i, agg) in b {
                        a.entry(i).or_default().merge(&agg);
                    }
                    ra.extend(rb);
                    fa.extend(fb);
                    (a, ra, fa)
                });
            for (i, agg) in folded {
                aggregates[i].merge(&agg);
            }
            if opts.keep_runs {
                rows.sort_by_key(|r| r.run);
                sink(&rows)?;
            }
            failed.sort_by_key(|(run, _)| *run);
            errors.extend(failed.into_iter().map(|(_, e)| e));
        }
        Ok(errors)
    }
}

/// A variant's part of the report: its aggregate, and the expectations that apply to it
/// judged over its runs.
fn variant_sweep<F: Fold>(
    name: &VariantName,
    scenario: &Scenario,
    aggregate: F,
) -> VariantSweep<F, F::Summary> {
    let mut expectations: Vec<ExpectationResult> = scenario
        .expectations
        .iter()
        .filter(|e| e.applies_to(&name.options) && F::judges(e))
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
        name: name.name.clone(),
        options: name.options.iter().cloned().collect(),
        summary: aggregate.summary(),
        aggregate,
        expectations,
    }
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
fn judge<F: Fold>(expectations: &mut [ExpectationResult], aggregate: &F) {
    for e in expectations {
        e.met_runs = (aggregate.expectations_met().get(&e.path))
            .copied()
            .unwrap_or(0);
        e.met = e.met_runs as f64 >= e.required_share * aggregate.runs() as f64 - 1e-9;
    }
}

impl SweepReport {
    /// Expectations that did not hold in enough runs, as (scenario, variant, expectation).
    pub fn unmet(&self) -> Vec<(&str, &str, &ExpectationResult)> {
        let mut out = unmet_in(&self.scenarios);
        out.extend(unmet_in(&self.replays));
        out
    }
}

fn unmet_in<A, S>(
    scenarios: &[ScenarioSweep<VariantSweep<A, S>>],
) -> Vec<(&str, &str, &ExpectationResult)> {
    (scenarios.iter())
        .flat_map(|s| {
            s.variants.iter().flat_map(move |v| {
                (v.expectations.iter())
                    .filter(|e| !e.met)
                    .map(move |e| (s.name.as_str(), v.name.as_str(), e))
            })
        })
        .collect()
}

/// Adds shard reports into one: the aggregates sum; the summaries are derived again.
pub fn merge(reports: Vec<SweepReport>) -> Result<SweepReport, String> {
    let mut reports = reports.into_iter();
    let Some(mut merged) = reports.next() else {
        return Err("nothing to merge".into());
    };
    for r in reports {
        if shape(&r.scenarios) != shape(&merged.scenarios)
            || shape(&r.replays) != shape(&merged.replays)
        {
            return Err(
                "the reports are of different sweeps (scenarios, variants, seeds or master seeds differ)"
                    .into(),
            );
        }
        add_up(&mut merged.scenarios, &r.scenarios);
        add_up(&mut merged.replays, &r.replays);
    }
    merged.shard = None;
    derive(&mut merged.scenarios);
    derive(&mut merged.replays);
    Ok(merged)
}

/// What two shards of one sweep share: per scenario, its name, seeds, master seed and
/// variants.
fn shape<A, S>(
    scenarios: &[ScenarioSweep<VariantSweep<A, S>>],
) -> Vec<(String, u32, u64, Vec<String>)> {
    (scenarios.iter())
        .map(|s| {
            let variants = s.variants.iter().map(|v| v.name.clone()).collect();
            (s.name.clone(), s.seeds, s.master_seed, variants)
        })
        .collect()
}

fn add_up<F: Fold>(into: &mut [ScenarioOf<F>], from: &[ScenarioOf<F>]) {
    for (s, t) in into.iter_mut().zip(from) {
        for (v, w) in s.variants.iter_mut().zip(&t.variants) {
            v.aggregate.merge(&w.aggregate);
        }
    }
}

/// The summaries and verdicts, derived again from the aggregates.
fn derive<F: Fold>(scenarios: &mut [ScenarioOf<F>]) {
    for s in scenarios {
        for v in &mut s.variants {
            v.summary = v.aggregate.summary();
            judge(&mut v.expectations, &v.aggregate);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shard arithmetic enumerates exactly the runs of a range whose index is I modulo N.
    #[test]
    fn shard_runs_are_the_runs_congruent_to_the_shard() {
        for n in 1..5u64 {
            for i in 0..n {
                for start in 0..9u64 {
                    for end in start..start + 9 {
                        let want: Vec<u64> = (start..end).filter(|r| r % n == i).collect();
                        let shard = Some((i, n));
                        let len = shard_len(start..end, shard);
                        let got: Vec<u64> = (0..len)
                            .map(|k| shard_run(&(start..end), shard, k))
                            .collect();
                        assert_eq!(got, want, "shard {i}/{n} of {start}..{end}");
                    }
                }
            }
        }
    }
}
