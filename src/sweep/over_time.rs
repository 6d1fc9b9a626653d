//! Sweeps over time: a scenario with `spec.replay`, swept as variants × seeds, each run a
//! replay ([`crate::replay::replay`]) of the variant's scenario perturbed by the run's RNG —
//! the scheduler's tie-break seed, pool jitter, node failures, the order of workload items
//! that arrive at the same time. A run keeps only its replay's figures ([`FIGURES`]: waits,
//! jobs finished, pods pending at the end, GPU allocation and GPU-hours), for the whole
//! replay and per group (queue, priority, class), as integers; they fold into histograms per
//! variant, which add up exactly across threads and shards. No run keeps its pods' records.

use std::borrow::Cow;
use std::collections::BTreeMap;

use rand::rngs::ChaCha8Rng;
use serde::{Deserialize, Serialize};

use super::aggregate::{Distribution, Fold, Histogram};
use super::{Perturbations, RunFigures, perturb};
use crate::error::InputError;
use crate::load::Scenario;
use crate::load::expect::Expectation;
use crate::replay::report::{GroupReport, ReplayReport};

/// How a figure's integers read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Milliseconds.
    Duration,
    Count,
    /// Hundredths of a percent.
    BasisPoints,
    /// Thousandths of a GPU-hour.
    MilliGpuHours,
}

impl Unit {
    /// Integer ÷ scale = the summary's value (ms, a count, percent, GPU-hours).
    pub fn scale(self) -> f64 {
        match self {
            Unit::Duration | Unit::Count => 1.0,
            Unit::BasisPoints => 100.0,
            Unit::MilliGpuHours => 1000.0,
        }
    }
}

/// A figure of a replay, measured once per run.
pub struct Figure {
    /// Its key in run rows and aggregates, where it is an integer in `unit`.
    pub key: &'static str,
    /// Its key in the summary, in the unit's [`Unit::scale`]d reading.
    pub summary_key: &'static str,
    pub title: &'static str,
    /// Its table column's header.
    pub column: &'static str,
    pub unit: Unit,
    /// A group's figure (queue, priority, class), when groups have it.
    group: Option<fn(&GroupReport) -> Option<u64>>,
    /// The whole replay's figure, when it is not its `all` group's.
    whole: Option<fn(&ReplayReport) -> Option<u64>>,
}

impl Figure {
    fn of_replay(&self, r: &ReplayReport) -> Option<u64> {
        match (self.whole, self.group) {
            (Some(whole), _) => whole(r),
            (None, Some(group)) => group(&r.summary),
            (None, None) => None,
        }
    }

    /// Measured per group too.
    pub fn per_group(&self) -> bool {
        self.group.is_some()
    }
}

/// Thousandths of the report's GPU-hours (which it rounds to thousandths).
fn milli(hours: f64) -> u64 {
    (hours * 1000.0).round() as u64
}

/// GPU-hours of capacity over the replay, in thousandths; `None` without GPUs.
fn capacity(r: &ReplayReport) -> Option<u64> {
    let c: u64 = r.pools.iter().map(|p| milli(p.gpu_hours_capacity)).sum();
    (c > 0).then_some(c)
}

/// GPU-hours allocated on the nodes (existing pods' included), in thousandths.
fn allocated(r: &ReplayReport) -> u64 {
    r.pools.iter().map(|p| milli(p.gpu_hours_used)).sum()
}

/// What a replay sweep measures per run, in the report's order.
pub const FIGURES: [Figure; 15] = [
    Figure {
        key: "podWaitP50Ms",
        summary_key: "podWaitP50Ms",
        title: "pod wait p50",
        column: "pod wait\np50",
        unit: Unit::Duration,
        group: Some(|g| g.pod_wait.p50),
        whole: None,
    },
    Figure {
        key: "podWaitP90Ms",
        summary_key: "podWaitP90Ms",
        title: "pod wait p90",
        column: "pod wait\np90",
        unit: Unit::Duration,
        group: Some(|g| g.pod_wait.p90),
        whole: None,
    },
    Figure {
        key: "podWaitP99Ms",
        summary_key: "podWaitP99Ms",
        title: "pod wait p99",
        column: "pod wait\np99",
        unit: Unit::Duration,
        group: Some(|g| g.pod_wait.p99),
        whole: None,
    },
    Figure {
        key: "podWaitMaxMs",
        summary_key: "podWaitMaxMs",
        title: "pod wait max",
        column: "pod wait\nmax",
        unit: Unit::Duration,
        group: Some(|g| g.pod_wait.max),
        whole: None,
    },
    Figure {
        key: "jobWaitP50Ms",
        summary_key: "jobWaitP50Ms",
        title: "job wait p50",
        column: "job wait\np50",
        unit: Unit::Duration,
        group: Some(|g| g.job_wait.p50),
        whole: None,
    },
    Figure {
        key: "jobWaitP95Ms",
        summary_key: "jobWaitP95Ms",
        title: "job wait p95",
        column: "job wait\np95",
        unit: Unit::Duration,
        group: Some(|g| g.job_wait.p95),
        whole: None,
    },
    // Kueue's part of the wait (a replay without Kueue has none).
    Figure {
        key: "admissionWaitP95Ms",
        summary_key: "admissionWaitP95Ms",
        title: "Kueue admission wait p95",
        column: "admission\nwait p95",
        unit: Unit::Duration,
        group: Some(|g| g.admission_wait.p95),
        whole: None,
    },
    Figure {
        key: "jobsFinished",
        summary_key: "jobsFinished",
        title: "jobs finished",
        column: "jobs\nfinished",
        unit: Unit::Count,
        group: Some(|g| Some(g.jobs_finished)),
        whole: None,
    },
    Figure {
        key: "preemptions",
        summary_key: "preemptions",
        title: "preemptions",
        column: "preemp-\ntions",
        unit: Unit::Count,
        group: Some(|g| Some(g.preemptions)),
        whole: None,
    },
    // Kueue's evictions by its PodsReady timeout and its deactivations past
    // `backoffLimitCount`: figures of the replays (and groups) whose jobs Kueue admitted.
    Figure {
        key: "podsReadyTimeouts",
        summary_key: "podsReadyTimeouts",
        title: "Kueue PodsReady timeouts",
        column: "PodsReady\ntimeouts",
        unit: Unit::Count,
        group: Some(|g| (g.jobs_admitted > 0).then_some(g.pods_ready_timeouts)),
        whole: None,
    },
    Figure {
        key: "jobsDeactivated",
        summary_key: "jobsDeactivated",
        title: "Kueue jobs deactivated",
        column: "jobs de-\nactivated",
        unit: Unit::Count,
        group: Some(|g| (g.jobs_admitted > 0).then_some(g.jobs_deactivated)),
        whole: None,
    },
    Figure {
        key: "pendingAtEnd",
        summary_key: "pendingAtEnd",
        title: "pods pending at the end",
        column: "pending\nat end",
        unit: Unit::Count,
        group: Some(|g| Some(g.pending_wait.count)),
        whole: None,
    },
    Figure {
        key: "gpuAllocationBasisPoints",
        summary_key: "gpuAllocationPercent",
        title: "GPU allocation (time-weighted)",
        column: "GPU\nallocated",
        unit: Unit::BasisPoints,
        group: None,
        whole: Some(|r| {
            capacity(r)?;
            Some((r.gpu_allocation_percent * 100.0).round() as u64)
        }),
    },
    // A group's pods' GPU-hours; the whole replay's are the nodes', so that used and idle
    // add up to the capacity.
    Figure {
        key: "gpuMilliHoursUsed",
        summary_key: "gpuHoursUsed",
        title: "GPU-hours used",
        column: "GPU-h\nused",
        unit: Unit::MilliGpuHours,
        group: Some(|g| Some(milli(g.gpu_hours_used))),
        whole: Some(|r| capacity(r).map(|_| allocated(r))),
    },
    Figure {
        key: "gpuMilliHoursIdle",
        summary_key: "gpuHoursIdle",
        title: "GPU-hours idle",
        column: "GPU-h\nidle",
        unit: Unit::MilliGpuHours,
        group: None,
        whole: Some(|r| Some(capacity(r)?.saturating_sub(allocated(r)))),
    },
];

/// The figure with this aggregate key.
pub fn figure(key: &str) -> Option<&'static Figure> {
    FIGURES.iter().find(|f| f.key == key)
}

/// One replay's figures (a run row of `--runs`). A figure the replay has none of (no pod
/// started: no wait; no GPUs: no allocation) is absent.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayRun {
    pub figures: BTreeMap<&'static str, u64>,
    /// Group (`queue=team-a`, `priority=100`, `class=TrainJob`) → its figures.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub groups: BTreeMap<String, BTreeMap<&'static str, u64>>,
    /// Per expectation (`spec.expect[i]`) with `replay` limits: whether it held.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub expectations: BTreeMap<String, bool>,
}

impl ReplayRun {
    pub fn of(report: &ReplayReport) -> Self {
        let figures = (FIGURES.iter())
            .filter_map(|f| Some((f.key, f.of_replay(report)?)))
            .collect();
        let groups = (report.groups.iter())
            .map(|g| {
                let figures = (FIGURES.iter())
                    .filter_map(|f| Some((f.key, f.group?(g)?)))
                    .collect();
                (format!("{}={}", g.dimension, g.value), figures)
            })
            .collect();
        ReplayRun {
            figures,
            groups,
            expectations: BTreeMap::new(),
        }
    }
}

/// A replayed variant's runs, folded: per figure, value → runs with it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayAggregate {
    pub runs: u64,
    pub figures: BTreeMap<String, Histogram>,
    /// Group → figure → value → runs with it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub groups: BTreeMap<String, BTreeMap<String, Histogram>>,
    /// Expectation (`spec.expect[i]`) → runs in which it held.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub expectations_met: BTreeMap<String, u64>,
}

/// Derived figures of a replayed variant: each figure's distribution over the runs that had
/// it, in its summary unit (ms, counts, percent, GPU-hours).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplaySummary {
    pub figures: BTreeMap<String, Distribution>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub groups: BTreeMap<String, BTreeMap<String, Distribution>>,
}

/// Adds one run's figures.
fn count(into: &mut BTreeMap<String, Histogram>, figures: &BTreeMap<&'static str, u64>) {
    for (&key, &v) in figures {
        let h = match into.get_mut(key) {
            Some(h) => h,
            None => into.entry(key.to_string()).or_default(),
        };
        *h.entry(v).or_default() += 1;
    }
}

fn add_histograms(into: &mut BTreeMap<String, Histogram>, from: &BTreeMap<String, Histogram>) {
    for (key, h) in from {
        let mine = into.entry(key.clone()).or_default();
        for (v, n) in h {
            *mine.entry(*v).or_default() += n;
        }
    }
}

/// Each figure's distribution, under its summary key.
fn distributions(figures: &BTreeMap<String, Histogram>) -> BTreeMap<String, Distribution> {
    (figures.iter())
        .filter_map(|(key, h)| {
            let f = figure(key)?;
            Some((
                f.summary_key.to_string(),
                Distribution::of(h, f.unit.scale()),
            ))
        })
        .collect()
}

/// The run's scenario: the variant's, with the perturbed world in place of its own.
fn perturbed(scenario: &Scenario, world: perturb::World<'_>) -> Scenario {
    let mut run = Scenario {
        nodes: world.nodes,
        existing_pods: world.existing,
        steps: world.steps,
        config: world.config,
        ..scenario.clone()
    };
    if let Cow::Owned(pods) = world.pods {
        run.workloads = pods;
    }
    run
}

impl Fold for ReplayAggregate {
    type Run = ReplayRun;
    type Summary = ReplaySummary;

    /// Replays the perturbed scenario, keeping only its figures.
    fn run(
        scenario: &Scenario,
        options: &[(String, String)],
        rng: &mut ChaCha8Rng,
        p: &Perturbations,
    ) -> Result<ReplayRun, InputError> {
        let world = perturb::perturb(scenario, p, rng);
        let run = perturbed(scenario, world);
        let report = crate::replay::replay(&run, crate::replay::Sinks::default())?;
        let mut stats = ReplayRun::of(&report);
        for e in run.expectations.iter().filter(|e| e.applies_to(options)) {
            if let Some(v) = crate::replay::expect::verdict(e, &report) {
                stats.expectations.insert(e.path.clone(), v.met());
            }
        }
        Ok(stats)
    }

    fn add(&mut self, run: &ReplayRun) {
        self.runs += 1;
        count(&mut self.figures, &run.figures);
        for (group, figures) in &run.groups {
            let into = match self.groups.get_mut(group) {
                Some(g) => g,
                None => self.groups.entry(group.clone()).or_default(),
            };
            count(into, figures);
        }
        for (e, held) in &run.expectations {
            *self.expectations_met.entry(e.clone()).or_default() += u64::from(*held);
        }
    }

    fn merge(&mut self, other: &Self) {
        self.runs += other.runs;
        add_histograms(&mut self.figures, &other.figures);
        for (group, figures) in &other.groups {
            add_histograms(self.groups.entry(group.clone()).or_default(), figures);
        }
        for (e, n) in &other.expectations_met {
            *self.expectations_met.entry(e.clone()).or_default() += n;
        }
    }

    fn summary(&self) -> ReplaySummary {
        ReplaySummary {
            figures: distributions(&self.figures),
            groups: (self.groups.iter())
                .map(|(g, figures)| (g.clone(), distributions(figures)))
                .collect(),
        }
    }

    fn runs(&self) -> u64 {
        self.runs
    }

    fn expectations_met(&self) -> &BTreeMap<String, u64> {
        &self.expectations_met
    }

    /// The expectations with `replay` limits: a replay measures nothing else.
    fn judges(e: &Expectation) -> bool {
        e.spec.replay.is_some()
    }

    fn row(run: ReplayRun) -> RunFigures {
        RunFigures::Replay(run)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(wait: Option<u64>, finished: u64, group: &str) -> ReplayRun {
        let mut figures: BTreeMap<&'static str, u64> = [("jobsFinished", finished)].into();
        if let Some(w) = wait {
            figures.insert("podWaitP50Ms", w);
        }
        ReplayRun {
            groups: [(group.to_string(), figures.clone())].into(),
            figures,
            expectations: [("spec.expect[0]".to_string(), finished > 2)].into(),
        }
    }

    #[test]
    fn merging_in_any_split_equals_adding_all() {
        let runs: Vec<ReplayRun> = (0..12)
            .map(|i| {
                let wait = (i % 4 != 0).then_some(1000 * (i % 3));
                run(wait, i % 5, if i % 2 == 0 { "queue=a" } else { "queue=b" })
            })
            .collect();
        let mut whole = ReplayAggregate::default();
        runs.iter().for_each(|r| whole.add(r));
        for split in 0..runs.len() {
            let (mut left, mut right) = (ReplayAggregate::default(), ReplayAggregate::default());
            runs[..split].iter().for_each(|r| left.add(r));
            runs[split..].iter().for_each(|r| right.add(r));
            right.merge(&left);
            assert_eq!(right, whole, "split at {split}");
        }
        // Runs without a wait are left out of its distribution, not counted as 0.
        assert_eq!(whole.figures["podWaitP50Ms"].values().sum::<u64>(), 9);
        assert_eq!(whole.expectations_met["spec.expect[0]"], 4);
        let s = whole.summary();
        assert_eq!(s.figures["jobsFinished"].max, 4.0);
        assert_eq!(s.groups["queue=a"]["jobsFinished"].max, 4.0);
    }

    #[test]
    fn summary_keys_read_in_their_units() {
        let mut a = ReplayAggregate::default();
        a.add(&ReplayRun {
            figures: [
                ("gpuAllocationBasisPoints", 4250),
                ("gpuMilliHoursUsed", 1500),
            ]
            .into(),
            ..Default::default()
        });
        let s = a.summary();
        assert_eq!(s.figures["gpuAllocationPercent"].p50, 42.5);
        assert_eq!(s.figures["gpuHoursUsed"].p50, 1.5);
    }
}
