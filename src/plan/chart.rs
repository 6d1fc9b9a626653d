//! A plan's charts (`schedsim plan --charts`): the cost frontier beside every simulated point,
//! pending pods against each candidate's count alone, and the nodes of each removal group that
//! can go; SVG and PNG into `<out>/<scenario>-plan/` and `<out>/plan.html` with the tables.

use std::path::Path;

use plotters::style::RGBColor;

use super::report::{AddReport, FrontierPoint, PlanReport};
use crate::load::scenario::PlanSpec;
use crate::report::chart::{
    Chart, escape, folder, page_head, page_tail, register_font, write_chart,
};

const CAN_GO: RGBColor = RGBColor(46, 139, 87);
const BLOCKED: RGBColor = RGBColor(200, 50, 50);
const STAYS: RGBColor = RGBColor(170, 170, 170);

/// The charts of each plan (with the `spec.plan` it answers), and the page that shows them.
pub fn write_plan_charts(
    plans: &[(&PlanReport, &PlanSpec)],
    tables: &str,
    out: &Path,
) -> Result<(), String> {
    register_font();
    let mut html = page_head("schedsim plan");
    for (r, spec) in plans {
        let dir = out.join(format!("{}-plan", folder(&r.name)));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        html.push_str(&format!(
            "<h2>{}</h2>\n<p>{}</p>\n",
            escape(&r.name),
            escape(&r.file)
        ));
        for (name, chart) in charts(r, spec) {
            html.push_str(&write_chart(&dir.join(name), &chart)?);
            html.push('\n');
        }
    }
    html.push_str(&page_tail(tables));
    crate::report::write_atomic(&out.join("plan.html"), html.as_bytes()).map_err(|e| e.to_string())
}

/// The charts of one plan, by file name.
fn charts(r: &PlanReport, spec: &PlanSpec) -> Vec<(&'static str, Chart)> {
    let mut out = Vec::new();
    if let Some(add) = &r.add
        && !add.points.is_empty()
    {
        out.push(("cost-frontier", frontier(add)));
        out.push(("per-candidate", per_candidate(add, spec)));
    }
    if let Some(rm) = &r.remove {
        let bars = (rm.candidates.iter())
            .map(|(group, &nodes)| {
                let can_go = i64::from(rm.removed.get(group).copied().unwrap_or(0));
                let blocked = rm.blocked.iter().filter(|b| &b.group == group).count() as i64;
                let stays = i64::from(nodes) - can_go - blocked;
                (group.clone(), vec![can_go, blocked, stays])
            })
            .collect();
        out.push((
            "removal",
            Chart::Bars {
                caption: "Nodes per removal group: can go, blocked by a pod, stay",
                axis: "nodes",
                bars,
                series: vec![
                    ("can go", CAN_GO),
                    ("blocked (a pod cannot be drained)", BLOCKED),
                    ("stay", STAYS),
                ],
            },
        ));
    }
    out
}

/// Pending pods (for a wait goal, the p95 wait) against the cost of every simulated point, the
/// frontier (the best found at each cost or less) as steps, and the answer. A point whose p95
/// is "never" has no place on a wait axis and is left out.
fn frontier(add: &AddReport) -> Chart {
    let waits = add.points.iter().any(|p| p.wait_p95_ms.is_some());
    let xy = |p: &FrontierPoint| match waits {
        true => p
            .wait_p95_ms
            .flatten()
            .map(|ms| (p.cost, ms as f64 / 60_000.0)),
        false => Some((p.cost, p.pending_pods as f64)),
    };
    let mut series = vec![
        (
            "simulated points".to_string(),
            add.points.iter().filter_map(xy).collect(),
            false,
        ),
        (
            "frontier: the best found at that cost or less".to_string(),
            add.frontier.iter().filter_map(xy).collect(),
            true,
        ),
    ];
    let answer = (add.answer.as_ref())
        .and_then(|a| (add.points.iter()).find(|p| p.added == a.added && p.met));
    if let Some(point) = answer.and_then(xy) {
        series.push(("answer".to_string(), vec![point], false));
    }
    let (caption, y_axis) = match waits {
        true => (
            "Cost frontier: pod wait p95 per replayed point",
            "pod wait p95 (minutes)",
        ),
        false => (
            "Cost frontier: pending pods per simulated point",
            "pending pods",
        ),
    };
    Chart::Points {
        caption: caption.into(),
        x_axis: "cost per hour",
        y_axis,
        series,
    }
}

/// Per candidate, pending pods against its count with every other candidate at its `min`
/// (the points each candidate's own walk simulated).
fn per_candidate(add: &AddReport, spec: &PlanSpec) -> Chart {
    let series = (spec.candidates.iter())
        .map(|c| {
            let mut line: Vec<(f64, f64)> = (add.points.iter())
                .filter(|p| {
                    (spec.candidates.iter())
                        .filter(|o| o.name != c.name)
                        .all(|o| p.added.get(&o.name).copied().unwrap_or(0) == o.min)
                })
                .map(|p| {
                    let k = p.added.get(&c.name).copied().unwrap_or(0);
                    (f64::from(k), p.pending_pods as f64)
                })
                .collect();
            line.sort_by(|a, b| a.0.total_cmp(&b.0));
            (c.name.clone(), line, true)
        })
        .filter(|(_, line, _)| !line.is_empty())
        .collect();
    Chart::Points {
        caption: "Pending pods per candidate alone (the others at their min)".into(),
        x_axis: "nodes added",
        y_axis: "pending pods",
        series,
    }
}
