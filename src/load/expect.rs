//! `spec.expect`: what a scenario asserts about its outcome, as written in the Scenario format.
//! `check` evaluates these against a run's report.

use std::collections::BTreeMap;

use regex::Regex;
use serde::Deserialize;

use crate::sched::PodPhase;

/// One entry of `spec.expect`, as written.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExpectSpec {
    /// Shown in reports (default: the expectation's field path).
    #[serde(default)]
    pub name: Option<String>,
    /// The pods it is about: one pod (`namespace/name`, or `name` in `default`) …
    #[serde(default)]
    pub pod: Option<String>,
    /// … every pod of a workload (TrainJob or Determined trial name) …
    #[serde(default)]
    pub workload: Option<String>,
    /// … or every workload pod with these labels.
    #[serde(default)]
    pub selector: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub status: Option<PodPhase>,
    #[serde(default)]
    pub node: Option<String>,
    /// The node is one of these.
    #[serde(default)]
    pub nodes: Option<Vec<String>>,
    #[serde(default)]
    pub pool: Option<String>,
    /// The node carries these labels.
    #[serde(default)]
    pub node_labels: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub message: Option<MessageMatch>,
    /// Scenario-wide: at most this many pods not placed.
    #[serde(default)]
    pub pending_pods_at_most: Option<usize>,
    /// Scenario-wide: at least this percentage of GPUs allocated.
    #[serde(default)]
    pub gpu_allocation_at_least: Option<f64>,
    /// Scenario-wide: these workloads (`namespace/name` or `name`) have every pod placed.
    #[serde(default)]
    pub fully_placed: Option<Vec<String>>,
    /// Replays only (`schedsim replay`, and `check` on a scenario with `spec.replay`): limits
    /// on waits, pods left pending and GPU allocation over the replay.
    #[serde(default)]
    pub replay: Option<ReplayExpect>,
    /// Sweeps only: the variants it applies to — `dimension=option` pairs, comma-separated,
    /// all of which the variant must have (default: every variant). `check` skips these.
    #[serde(default)]
    pub variant: Option<String>,
    /// Sweeps only: the share of a variant's runs in which it must hold (default 1).
    #[serde(default)]
    pub share: Option<f64>,
}

/// What a replay must achieve, for every pod or for one group (a queue, a priority, a class).
/// Waits are durations (`30m`); percentiles are nearest-rank over the pods (or jobs) that
/// started.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReplayExpect {
    /// Only the pods of this queue (namespace, or the trace's queue column).
    #[serde(default)]
    pub queue: Option<String>,
    /// Only the pods of this priority.
    #[serde(default)]
    pub priority: Option<i32>,
    /// Only the pods of this class (workload kind, or the trace's class column).
    #[serde(default)]
    pub class: Option<String>,
    /// Pod waits (first bind − arrival) at most these, by percentile: `p50`, `p90`, `p95`,
    /// `p99`, `max`.
    #[serde(default)]
    pub pod_wait_at_most: BTreeMap<String, String>,
    /// Job waits (until the job's last pod first bound) at most these, by percentile.
    #[serde(default)]
    pub job_wait_at_most: BTreeMap<String, String>,
    /// At most this many pods still pending when the replay ends.
    #[serde(default)]
    pub pending_at_end_at_most: Option<u64>,
    /// GPU-hours used over GPU-hours of capacity, in percent, at least this (every pool).
    #[serde(default)]
    pub gpu_allocation_at_least: Option<f64>,
}

/// The percentiles a replay expectation may name.
pub const WAIT_PERCENTILES: [&str; 5] = ["p50", "p90", "p95", "p99", "max"];

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MessageMatch {
    #[serde(default)]
    pub contains: Option<String>,
    #[serde(default)]
    pub regex: Option<String>,
}

/// A checked, compiled expectation.
#[derive(Debug, Clone)]
pub struct Expectation {
    /// `spec.expect[3]`, for reports.
    pub path: String,
    /// `file:line`.
    pub at: String,
    pub spec: ExpectSpec,
    pub regex: Option<Regex>,
}

impl Expectation {
    /// Validates an entry: a pod assertion needs exactly one selection; a regex must compile.
    /// Errors are (field under the entry, message).
    pub fn new(path: String, at: String, spec: ExpectSpec) -> Result<Self, (String, String)> {
        let selections = [
            spec.pod.is_some(),
            spec.workload.is_some(),
            spec.selector.is_some(),
        ]
        .iter()
        .filter(|s| **s)
        .count();
        let pod_checks = spec.status.is_some()
            || spec.node.is_some()
            || spec.nodes.is_some()
            || spec.pool.is_some()
            || spec.node_labels.is_some()
            || spec.message.is_some();
        let scenario_checks = spec.pending_pods_at_most.is_some()
            || spec.gpu_allocation_at_least.is_some()
            || spec.fully_placed.is_some()
            || spec.replay.is_some();
        if let Some(r) = &spec.replay {
            check_replay(r)?;
        }
        if selections > 1 {
            return Err((
                String::new(),
                "name the pods one way: pod, workload or selector".into(),
            ));
        }
        if pod_checks && selections == 0 {
            return Err((
                String::new(),
                "a pod check (status, node, nodes, pool, nodeLabels, message) needs pod, workload or selector".into(),
            ));
        }
        if !pod_checks && !scenario_checks {
            return Err((String::new(), "the expectation checks nothing".into()));
        }
        if let Some(share) = spec.share
            && !(0.0..=1.0).contains(&share)
        {
            return Err((
                "share".into(),
                format!("{share} is not a share from 0 to 1"),
            ));
        }
        let regex = match spec.message.as_ref() {
            Some(MessageMatch {
                contains: None,
                regex: None,
            }) => {
                return Err(("message".into(), "give contains or regex".into()));
            }
            Some(MessageMatch { regex: Some(r), .. }) => {
                Some(Regex::new(r).map_err(|e| ("message.regex".to_string(), e.to_string()))?)
            }
            _ => None,
        };
        Ok(Expectation {
            path,
            at,
            spec,
            regex,
        })
    }

    /// The report's name for it.
    pub fn title(&self) -> String {
        self.spec.name.clone().unwrap_or_else(|| self.path.clone())
    }
}

/// A replay expectation's own checks: one group at most, known percentiles, valid durations.
fn check_replay(r: &ReplayExpect) -> Result<(), (String, String)> {
    let groups = [r.queue.is_some(), r.priority.is_some(), r.class.is_some()];
    if groups.iter().filter(|g| **g).count() > 1 {
        return Err((
            "replay".into(),
            "name one group: queue, priority or class".into(),
        ));
    }
    for (field, limits) in [
        ("podWaitAtMost", &r.pod_wait_at_most),
        ("jobWaitAtMost", &r.job_wait_at_most),
    ] {
        for (p, d) in limits {
            let at = format!("replay.{field}.{p}");
            if !WAIT_PERCENTILES.contains(&p.as_str()) {
                return Err((
                    at,
                    format!(
                        "unknown percentile {p:?}; use one of {}",
                        WAIT_PERCENTILES.join(", ")
                    ),
                ));
            }
            crate::trace::clock::parse_duration(d).map_err(|e| (at, e))?;
        }
    }
    let checks = !r.pod_wait_at_most.is_empty()
        || !r.job_wait_at_most.is_empty()
        || r.pending_at_end_at_most.is_some()
        || r.gpu_allocation_at_least.is_some();
    match checks {
        true => Ok(()),
        false => Err(("replay".into(), "the expectation checks nothing".into())),
    }
}

impl Expectation {
    /// Whether it applies to a sweep variant with these (dimension, option) pairs.
    pub fn applies_to(&self, options: &[(String, String)]) -> bool {
        let Some(v) = self.spec.variant.as_deref() else {
            return true;
        };
        // A scenario without variants has the one variant `base`.
        if options.is_empty() {
            return v.trim() == "base";
        }
        v.split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .all(|pair| options.iter().any(|(d, o)| format!("{d}={o}") == pair))
    }
}
