//! A replay's report: the summary people plan with (waits, jobs, GPU time), per group and per
//! pool, and the time series; as JSON, a terminal table and CSV. Durations are milliseconds
//! in JSON and CSV, and written for people in the table.

use serde::Serialize;

use super::engine::Ended;
use super::histogram::Histogram;
use super::metrics::{GPU_MILLI, GpuCount, Group, Sample};
use crate::trace::clock::format_duration;

/// The report's version (bumped when a field changes meaning).
pub const REPLAY_SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplayReport {
    pub schema_version: u32,
    pub name: String,
    pub file: String,
    pub warnings: Vec<String>,
    /// When the replay ended (ms after its start).
    pub end_ms: u64,
    pub scheduling_attempts: u64,
    pub existing_pods_evicted: u64,
    /// Every pod and job.
    pub summary: GroupReport,
    /// Per queue (namespace), priority and class.
    pub groups: Vec<GroupReport>,
    pub pools: Vec<PoolReport>,
    /// GPU-hours used over GPU-hours of capacity, every pool, in percent (two decimals).
    pub gpu_allocation_percent: f64,
    pub series: SeriesReport,
    /// The share of pods that waited at most each wait (the CDF's steps, thinned).
    pub wait_cdf: Vec<(u64, f64)>,
}

/// Waits (ms): nearest-rank percentiles.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct WaitReport {
    pub count: u64,
    pub p50: Option<u64>,
    pub p90: Option<u64>,
    pub p95: Option<u64>,
    pub p99: Option<u64>,
    pub max: Option<u64>,
    pub mean: Option<u64>,
    /// False once more than 16,384 distinct waits were seen: percentiles are then within
    /// 0.1 % below the true value (the maximum stays exact).
    pub exact: bool,
}

impl WaitReport {
    pub fn of(h: &Histogram) -> Self {
        WaitReport {
            count: h.count(),
            p50: h.quantile(0.5),
            p90: h.quantile(0.9),
            p95: h.quantile(0.95),
            p99: h.quantile(0.99),
            max: h.max(),
            mean: h.mean(),
            exact: h.exact(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GroupReport {
    /// `all`, `queue`, `priority` or `class`.
    pub dimension: String,
    pub value: String,
    pub pods_arrived: u64,
    pub pods_started: u64,
    pub pods_finished: u64,
    pub pods_withdrawn: u64,
    pub jobs_arrived: u64,
    pub jobs_started: u64,
    pub jobs_finished: u64,
    /// Jobs Kueue admitted (at least once).
    pub jobs_admitted: u64,
    pub preemptions: u64,
    /// Evictions of jobs by Kueue's PodsReady timeout (`PodsReadyTimeout`).
    pub pods_ready_timeouts: u64,
    /// Jobs Kueue deactivated past `backoffLimitCount` (`RequeuingLimitExceeded`).
    pub jobs_deactivated: u64,
    /// Kueue's first admission − arrival, per job it admitted.
    pub admission_wait: WaitReport,
    /// First bind − arrival, per pod.
    pub pod_wait: WaitReport,
    /// The last pod's first bind − arrival, per job.
    pub job_wait: WaitReport,
    /// Pods still pending at the end: how long they had waited.
    pub pending_wait: WaitReport,
    pub gpu_hours_requested: f64,
    pub gpu_hours_used: f64,
}

/// GPU-hours of GPU milli·ms, rounded to a thousandth of a GPU-hour so the JSON is stable.
fn hours(gpu_milli_ms: u128) -> f64 {
    let gpu_ms = match gpu_milli_ms % GPU_MILLI as u128 {
        0 => (gpu_milli_ms / GPU_MILLI as u128) as f64,
        _ => gpu_milli_ms as f64 / GPU_MILLI as f64,
    };
    (gpu_ms / 3_600_000.0 * 1000.0).round() / 1000.0
}

impl GroupReport {
    fn of(dimension: &str, value: &str, g: &Group) -> Self {
        GroupReport {
            dimension: dimension.to_string(),
            value: value.to_string(),
            pods_arrived: g.pods_arrived,
            pods_started: g.pods_started,
            pods_finished: g.pods_finished,
            pods_withdrawn: g.pods_withdrawn,
            jobs_arrived: g.jobs_arrived,
            jobs_started: g.jobs_started,
            jobs_finished: g.jobs_finished,
            jobs_admitted: g.jobs_admitted,
            preemptions: g.preemptions,
            pods_ready_timeouts: g.pods_ready_timeouts,
            jobs_deactivated: g.jobs_deactivated,
            admission_wait: WaitReport::of(&g.admission_wait),
            pod_wait: WaitReport::of(&g.pod_wait),
            job_wait: WaitReport::of(&g.job_wait),
            pending_wait: WaitReport::of(&g.pending_wait),
            gpu_hours_requested: hours(g.gpu_ms_requested),
            gpu_hours_used: hours(g.gpu_ms_used),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolReport {
    pub name: String,
    pub gpu_hours_capacity: f64,
    pub gpu_hours_used: f64,
    /// Used over capacity, in percent (two decimals).
    pub allocation_percent: f64,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeriesReport {
    pub step_ms: u64,
    pub pools: Vec<String>,
    pub points: Vec<PointReport>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PointReport {
    pub at_ms: u64,
    pub running: u64,
    pub pending: u64,
    /// Pods whose job waits for Kueue's admission.
    pub queued: u64,
    pub allocated_gpus: GpuCount,
    pub capacity_gpus: GpuCount,
    pub fragmented_gpus: GpuCount,
    pub pool_allocated_gpus: Vec<GpuCount>,
}

impl From<&Sample> for PointReport {
    fn from(s: &Sample) -> Self {
        PointReport {
            at_ms: s.at,
            running: s.running,
            pending: s.pending,
            queued: s.queued,
            allocated_gpus: GpuCount(s.allocated_gpus),
            capacity_gpus: GpuCount(s.capacity_gpus),
            fragmented_gpus: GpuCount(s.fragmented_gpus),
            pool_allocated_gpus: s.pools.iter().copied().map(GpuCount).collect(),
        }
    }
}

/// The CDF keeps at most this many steps.
const CDF_POINTS: usize = 200;

fn percent(part: u128, whole: u128) -> f64 {
    match whole {
        0 => 0.0,
        _ => ((part as f64 / whole as f64) * 10_000.0).round() / 100.0,
    }
}

impl ReplayReport {
    pub fn new(name: &str, file: &str, warnings: Vec<String>, ended: &Ended) -> Self {
        let m = &ended.metrics;
        let empty = Group::default();
        let all = m.group("all", "").unwrap_or(&empty);
        let groups = (m.groups())
            .filter(|((d, _), _)| *d != "all")
            .map(|((d, v), g)| GroupReport::of(d, v, g))
            .collect();
        let pools = (m.pools.iter().enumerate())
            .map(|(i, name)| PoolReport {
                name: name.clone(),
                gpu_hours_capacity: hours(m.pool_capacity_ms[i]),
                gpu_hours_used: hours(m.pool_used_ms[i]),
                allocation_percent: percent(m.pool_used_ms[i], m.pool_capacity_ms[i]),
            })
            .collect();
        let cdf = all.pod_wait.cdf();
        let stride = cdf.len().div_ceil(CDF_POINTS).max(1);
        let mut wait_cdf: Vec<(u64, f64)> = cdf.iter().step_by(stride).copied().collect();
        if let Some(last) = cdf.last()
            && wait_cdf.last() != Some(last)
        {
            wait_cdf.push(*last);
        }
        ReplayReport {
            schema_version: REPLAY_SCHEMA_VERSION,
            name: name.to_string(),
            file: file.to_string(),
            warnings,
            end_ms: ended.end,
            scheduling_attempts: ended.attempts,
            existing_pods_evicted: ended.existing_evicted,
            summary: GroupReport::of("all", "", all),
            groups,
            pools,
            gpu_allocation_percent: percent(
                m.pool_used_ms.iter().sum(),
                m.pool_capacity_ms.iter().sum(),
            ),
            series: SeriesReport {
                step_ms: m.series.step_ms,
                pools: m.pools.clone(),
                points: m.series.points.iter().map(PointReport::from).collect(),
            },
            wait_cdf,
        }
    }

    /// The summary for a terminal.
    pub fn table(&self) -> String {
        use std::fmt::Write;
        let d = |ms: Option<u64>| ms.map_or("-".to_string(), format_duration);
        let s = &self.summary;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "{} ({}): replayed {}",
            self.name,
            self.file,
            format_duration(self.end_ms)
        );
        let _ = writeln!(
            out,
            "  pods: {} arrived, {} started, {} finished, {} withdrawn, {} preempted; {} scheduling attempts",
            s.pods_arrived,
            s.pods_started,
            s.pods_finished,
            s.pods_withdrawn,
            s.preemptions,
            self.scheduling_attempts
        );
        let _ = writeln!(
            out,
            "  jobs: {} arrived, {} started, {} finished",
            s.jobs_arrived, s.jobs_started, s.jobs_finished
        );
        if s.jobs_admitted > 0 {
            let w = &s.admission_wait;
            let _ = writeln!(
                out,
                "  Kueue: {} jobs admitted; admission wait p50 {}  p95 {}  max {}",
                s.jobs_admitted,
                d(w.p50),
                d(w.p95),
                d(w.max)
            );
        }
        if s.pods_ready_timeouts + s.jobs_deactivated > 0 {
            let _ = writeln!(
                out,
                "  Kueue waitForPodsReady: {} evictions (PodsReadyTimeout), {} jobs deactivated (RequeuingLimitExceeded)",
                s.pods_ready_timeouts, s.jobs_deactivated
            );
        }
        let w = &s.pod_wait;
        let _ = writeln!(
            out,
            "  pod wait: p50 {}  p90 {}  p95 {}  p99 {}  max {}",
            d(w.p50),
            d(w.p90),
            d(w.p95),
            d(w.p99),
            d(w.max)
        );
        if s.pending_wait.count > 0 {
            let _ = writeln!(
                out,
                "  still pending at the end: {} pods, waiting up to {}",
                s.pending_wait.count,
                d(s.pending_wait.max)
            );
        }
        let _ = writeln!(
            out,
            "  GPU-hours: {:.1} requested, {:.1} used",
            s.gpu_hours_requested, s.gpu_hours_used
        );
        let mut rows: Vec<[String; 7]> = vec![[
            "group".into(),
            "pods".into(),
            "finished".into(),
            "wait p50".into(),
            "wait p90".into(),
            "wait p99".into(),
            "GPU-h used".into(),
        ]];
        for g in &self.groups {
            rows.push([
                format!("{}={}", g.dimension, g.value),
                g.pods_arrived.to_string(),
                g.pods_finished.to_string(),
                d(g.pod_wait.p50),
                d(g.pod_wait.p90),
                d(g.pod_wait.p99),
                format!("{:.1}", g.gpu_hours_used),
            ]);
        }
        let mut table = tabled::builder::Builder::from_iter(rows).build();
        table.with(tabled::settings::Style::sharp());
        let _ = writeln!(out, "{table}");
        let mut pools: Vec<[String; 4]> = vec![[
            "pool".into(),
            "GPU-h capacity".into(),
            "GPU-h used".into(),
            "allocation".into(),
        ]];
        for p in self.pools.iter().filter(|p| p.gpu_hours_capacity > 0.0) {
            pools.push([
                p.name.clone(),
                format!("{:.1}", p.gpu_hours_capacity),
                format!("{:.1}", p.gpu_hours_used),
                format!("{:.2} %", p.allocation_percent),
            ]);
        }
        if pools.len() > 1 {
            let mut table = tabled::builder::Builder::from_iter(pools).build();
            table.with(tabled::settings::Style::sharp());
            let _ = writeln!(out, "{table}");
        }
        for w in &self.warnings {
            let _ = writeln!(out, "warning: {w}");
        }
        out
    }
}

/// The time series as CSV: a header, then a row per sample.
pub fn series_header(pools: &[String]) -> Vec<String> {
    let mut h: Vec<String> = [
        "at_ms",
        "running",
        "pending",
        "queued",
        "allocated_gpus",
        "capacity_gpus",
        "fragmented_gpus",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    h.extend(pools.iter().map(|p| format!("allocated_gpus[{p}]")));
    h
}

/// A point of the series as a CSV row, in [`series_header`]'s order.
pub fn point_row(p: &PointReport) -> Vec<String> {
    let mut row = vec![
        p.at_ms.to_string(),
        p.running.to_string(),
        p.pending.to_string(),
        p.queued.to_string(),
        p.allocated_gpus.to_string(),
        p.capacity_gpus.to_string(),
        p.fragmented_gpus.to_string(),
    ];
    row.extend(p.pool_allocated_gpus.iter().map(GpuCount::to_string));
    row
}
