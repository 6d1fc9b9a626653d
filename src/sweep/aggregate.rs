//! What a sweep keeps of its runs: integer histograms and counts that add up, so runs fold
//! into them as they finish (memory stays bounded), threads and shards merge in any order,
//! and merged shards equal one unsharded sweep exactly. Means and percentiles are derived
//! only when the report is rendered.

use std::collections::BTreeMap;

use rand::rngs::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::{Perturbations, RunFigures};
use crate::error::InputError;
use crate::load::Scenario;
use crate::load::expect::Expectation;

/// What a sweep folds per variant: a snapshot's figures ([`Aggregate`]) or a replay's
/// ([`super::over_time::ReplayAggregate`]). Runs add up in any order, so threads and shards
/// merge exactly.
pub trait Fold: Default + Clone + Send {
    /// What one run contributes.
    type Run: Send;
    /// The figures the report derives from the aggregate.
    type Summary;
    /// One run: the variant's scenario perturbed by the run's RNG, run and measured; the
    /// expectations that apply to the variant's `options` are judged on it.
    fn run(
        scenario: &Scenario,
        options: &[(String, String)],
        rng: &mut ChaCha8Rng,
        p: &Perturbations,
    ) -> Result<Self::Run, InputError>;
    fn add(&mut self, run: &Self::Run);
    fn merge(&mut self, other: &Self);
    fn summary(&self) -> Self::Summary;
    fn runs(&self) -> u64;
    /// Expectation (`spec.expect[i]`) → runs in which it held.
    fn expectations_met(&self) -> &BTreeMap<String, u64>;
    /// Whether a run of this kind can judge the expectation.
    fn judges(e: &Expectation) -> bool;
    /// The run's row (`--runs`).
    fn row(run: Self::Run) -> RunFigures;
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Value → how many runs had it.
pub type Histogram = BTreeMap<u64, u64>;

/// The facts one run contributes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunStats {
    pub pods: u64,
    pub placed: u64,
    pub pending: u64,
    /// Allocated GPUs per thousand allocatable (0 when the cluster has none).
    pub gpu_allocation_permille: u64,
    /// Free GPUs on nodes whose free GPUs cannot host the largest pending GPU request.
    pub fragmented_gpus: u64,
    /// Workloads (`namespace/name`) whose pods were all placed.
    pub jobs_placed: Vec<String>,
    /// Every workload of the run.
    pub jobs: Vec<String>,
    /// Per pending pod, the reasons that kept it pending (and per TrainJob Kueue did not
    /// admit, `pending in Kueue`).
    pub pending_reasons: BTreeMap<String, u64>,
    /// TrainJobs Kueue did not admit: they have no pods, so nothing else counts them.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub queued_in_kueue: u64,
    /// Per expectation (`spec.expect[i]`): whether it held in this run.
    #[serde(skip_serializing_if = "BTreeMap::is_empty", default)]
    pub expectations: BTreeMap<String, bool>,
}

/// The runs of one variant, folded.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Aggregate {
    pub runs: u64,
    /// Runs in which every pod was placed.
    pub all_placed: u64,
    pub pending_pods: Histogram,
    pub gpu_allocation_permille: Histogram,
    pub fragmented_gpus: Histogram,
    /// Workload → runs in which all its pods were placed.
    pub jobs_placed: BTreeMap<String, u64>,
    /// Workload → runs it was part of.
    pub jobs_seen: BTreeMap<String, u64>,
    /// Reason → pending pods with it, summed over runs.
    pub pending_reasons: BTreeMap<String, u64>,
    /// Expectation (`spec.expect[i]`) → runs in which it held.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub expectations_met: BTreeMap<String, u64>,
}

impl Aggregate {
    pub fn add(&mut self, r: &RunStats) {
        self.runs += 1;
        self.all_placed += u64::from(r.pending == 0 && r.queued_in_kueue == 0);
        *self.pending_pods.entry(r.pending).or_default() += 1;
        *self
            .gpu_allocation_permille
            .entry(r.gpu_allocation_permille)
            .or_default() += 1;
        *self.fragmented_gpus.entry(r.fragmented_gpus).or_default() += 1;
        for j in &r.jobs {
            *self.jobs_seen.entry(j.clone()).or_default() += 1;
            self.jobs_placed.entry(j.clone()).or_default();
        }
        for j in &r.jobs_placed {
            *self.jobs_placed.entry(j.clone()).or_default() += 1;
        }
        for (reason, n) in &r.pending_reasons {
            *self.pending_reasons.entry(reason.clone()).or_default() += n;
        }
        for (e, held) in &r.expectations {
            *self.expectations_met.entry(e.clone()).or_default() += u64::from(*held);
        }
    }

    pub fn merge(&mut self, other: &Aggregate) {
        self.runs += other.runs;
        self.all_placed += other.all_placed;
        for (mine, theirs) in [
            (&mut self.pending_pods, &other.pending_pods),
            (
                &mut self.gpu_allocation_permille,
                &other.gpu_allocation_permille,
            ),
            (&mut self.fragmented_gpus, &other.fragmented_gpus),
        ] {
            add_into(mine, theirs);
        }
        for (mine, theirs) in [
            (&mut self.jobs_placed, &other.jobs_placed),
            (&mut self.jobs_seen, &other.jobs_seen),
            (&mut self.pending_reasons, &other.pending_reasons),
            (&mut self.expectations_met, &other.expectations_met),
        ] {
            add_into(mine, theirs);
        }
    }

    /// The derived figures of the report.
    pub fn summary(&self) -> Summary {
        let runs = self.runs.max(1) as f64;
        Summary {
            all_placed_probability: self.all_placed as f64 / runs,
            pending_pods: Distribution::of(&self.pending_pods, 1.0),
            gpu_allocation_percent: Distribution::of(&self.gpu_allocation_permille, 10.0),
            fragmented_gpus: Distribution::of(&self.fragmented_gpus, 1.0),
            job_placed_probability: self
                .jobs_seen
                .iter()
                .map(|(j, seen)| {
                    let placed = self.jobs_placed.get(j).copied().unwrap_or(0);
                    (j.clone(), placed as f64 / (*seen).max(1) as f64)
                })
                .collect(),
            pending_reasons_per_run: self
                .pending_reasons
                .iter()
                .map(|(r, n)| (r.clone(), *n as f64 / runs))
                .collect(),
        }
    }
}

fn add_into<K: Ord + Clone>(into: &mut BTreeMap<K, u64>, from: &BTreeMap<K, u64>) {
    for (k, v) in from {
        *into.entry(k.clone()).or_default() += v;
    }
}

/// Derived figures of one variant.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub all_placed_probability: f64,
    pub pending_pods: Distribution,
    pub gpu_allocation_percent: Distribution,
    pub fragmented_gpus: Distribution,
    pub job_placed_probability: BTreeMap<String, f64>,
    /// Pending pods per run with each reason, on average.
    pub pending_reasons_per_run: BTreeMap<String, f64>,
}

/// Mean and nearest-rank percentiles of a histogram.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Distribution {
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

impl Distribution {
    /// Values are histogram keys divided by `scale`.
    pub fn of(h: &Histogram, scale: f64) -> Distribution {
        let n: u64 = h.values().sum();
        let sum: f64 = h.iter().map(|(v, c)| *v as f64 * *c as f64).sum();
        let rank = |p: f64| quantile(h, p).map_or(0.0, |v| v as f64 / scale);
        Distribution {
            mean: if n == 0 { 0.0 } else { sum / n as f64 / scale },
            p50: rank(0.50),
            p90: rank(0.90),
            p99: rank(0.99),
            max: h.keys().next_back().map_or(0.0, |v| *v as f64 / scale),
        }
    }
}

/// Nearest rank: the smallest value with at least ⌈p·n⌉ of the histogram's n runs at or below
/// it (`None` when it is empty).
pub fn quantile(h: &Histogram, p: f64) -> Option<u64> {
    let n: u64 = h.values().sum();
    let want = ((p * n as f64).ceil() as u64).max(1);
    let mut seen = 0;
    for (v, c) in h {
        seen += c;
        if seen >= want {
            return Some(*v);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(pending: u64, jobs_placed: &[&str]) -> RunStats {
        RunStats {
            pods: 100,
            placed: 100 - pending,
            pending,
            gpu_allocation_permille: 500 + pending,
            fragmented_gpus: pending * 2,
            jobs: vec!["ml/a".into(), "ml/b".into()],
            jobs_placed: jobs_placed.iter().map(|s| s.to_string()).collect(),
            pending_reasons: [("Insufficient nvidia.com/gpu".to_string(), pending)].into(),
            queued_in_kueue: 0,
            expectations: [("spec.expect[0]".to_string(), pending == 0)].into(),
        }
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let mut a = Aggregate::default();
        for p in 1..=100 {
            a.add(&run(p, &[]));
        }
        let d = a.summary().pending_pods;
        assert_eq!((d.p50, d.p90, d.p99, d.max), (50.0, 90.0, 99.0, 100.0));
        assert_eq!(d.mean, 50.5);
    }

    #[test]
    fn merging_in_any_split_equals_adding_all() {
        let runs: Vec<RunStats> = (0..20)
            .map(|i| run(i % 4, if i % 3 == 0 { &["ml/a"] } else { &[] }))
            .collect();
        let mut whole = Aggregate::default();
        runs.iter().for_each(|r| whole.add(r));
        for split in 0..runs.len() {
            let (mut left, mut right) = (Aggregate::default(), Aggregate::default());
            runs[..split].iter().for_each(|r| left.add(r));
            runs[split..].iter().for_each(|r| right.add(r));
            right.merge(&left);
            assert_eq!(right, whole, "split at {split}");
        }
        let s = whole.summary();
        assert_eq!(s.job_placed_probability["ml/a"], 7.0 / 20.0);
        assert_eq!(s.job_placed_probability["ml/b"], 0.0);
        assert_eq!(s.all_placed_probability, 5.0 / 20.0);
    }
}
