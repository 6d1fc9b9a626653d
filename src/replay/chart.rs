//! A replay's charts (`schedsim replay --charts`): per scenario, GPUs allocated over time per
//! pool with the fragmented ones, pods running and pending over time, and the CDF of pod
//! waits; SVG and PNG into `<out>/<scenario>-replay/` and `<out>/replay.html` with the tables.

use std::path::Path;

use super::report::ReplayReport;
use crate::report::chart::{
    Chart, escape, folder, page_head, page_tail, register_font, write_chart,
};

/// The time axis' unit for a span of `ms`: hours up to two days, then days.
fn time_unit(ms: u64) -> (f64, &'static str) {
    match ms <= 2 * 86_400_000 {
        true => (3_600_000.0, "time (hours)"),
        false => (86_400_000.0, "time (days)"),
    }
}

/// The wait axis' unit for waits up to `ms`: minutes up to two hours, then hours.
pub(crate) fn wait_unit(ms: u64) -> (f64, &'static str) {
    match ms <= 2 * 3_600_000 {
        true => (60_000.0, "wait (minutes)"),
        false => (3_600_000.0, "wait (hours)"),
    }
}

pub fn write_replay_charts(
    reports: &[ReplayReport],
    tables: &str,
    out: &Path,
) -> Result<(), String> {
    register_font();
    let mut html = page_head("schedsim replay");
    for r in reports {
        let dir = out.join(format!("{}-replay", folder(&r.name)));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        html.push_str(&format!("<h2>{}</h2>\n", escape(&r.name)));
        let points = &r.series.points;
        let (scale, x_axis) = time_unit(r.end_ms);
        let x = |at: u64| at as f64 / scale;
        let mut gpus: Vec<(String, Vec<(f64, f64)>)> = (r.series.pools.iter().enumerate())
            .filter(|(i, _)| points.iter().any(|p| p.pool_allocated_gpus[*i].0 > 0))
            .map(|(i, pool)| {
                let line = points
                    .iter()
                    .map(|p| (x(p.at_ms), p.pool_allocated_gpus[i].as_f64()));
                (pool.clone(), line.collect())
            })
            .collect();
        gpus.push((
            "fragmented (free, too few for the largest pending request)".into(),
            points
                .iter()
                .map(|p| (x(p.at_ms), p.fragmented_gpus.as_f64()))
                .collect(),
        ));
        let mut pods = vec![
            (
                "running".to_string(),
                points
                    .iter()
                    .map(|p| (x(p.at_ms), p.running as f64))
                    .collect(),
            ),
            (
                "pending".to_string(),
                points
                    .iter()
                    .map(|p| (x(p.at_ms), p.pending as f64))
                    .collect(),
            ),
        ];
        if points.iter().any(|p| p.queued > 0) {
            pods.push((
                "queued for Kueue".to_string(),
                points
                    .iter()
                    .map(|p| (x(p.at_ms), p.queued as f64))
                    .collect(),
            ));
        }
        let max_wait = r.wait_cdf.last().map_or(0, |(w, _)| *w);
        let (wait_scale, wait_axis) = wait_unit(max_wait);
        let cdf = vec![(
            "every pod".to_string(),
            (r.wait_cdf.iter())
                .map(|(w, share)| (*w as f64 / wait_scale, *share))
                .collect(),
        )];
        let charts = [
            (
                "gpu-allocation",
                "GPUs allocated per pool over time",
                x_axis,
                "GPUs",
                gpus,
                false,
            ),
            (
                "pods",
                "Pods running and pending over time",
                x_axis,
                "pods",
                pods,
                false,
            ),
            (
                "wait-cdf",
                "Pod waits (first bind − arrival)",
                wait_axis,
                "share of pods",
                cdf,
                true,
            ),
        ];
        for (name, caption, x_axis, y_axis, lines, steps) in charts {
            let chart = Chart::Lines {
                caption: caption.to_string(),
                x_axis,
                y_axis,
                lines,
                steps,
            };
            html.push_str(&write_chart(&dir.join(name), &chart)?);
            html.push('\n');
        }
    }
    html.push_str(&page_tail(tables));
    crate::report::write_atomic(&out.join("replay.html"), html.as_bytes())
        .map_err(|e| e.to_string())
}
