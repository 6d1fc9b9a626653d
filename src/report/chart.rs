//! Charts of a scenario's outcome (plotters; SVG and PNG, the PNG text drawn with the bundled
//! DejaVu Sans so no system font library is needed): the placement map, GPU allocation per
//! pool, pending pods by reason, and the override effect; plus an `index.html` that shows the
//! tables and charts together with no external assets.

use std::collections::BTreeMap;
use std::path::Path;

use plotters::coord::Shift;
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::model::ScenarioReport;
use super::rows::{draw_row_mesh, row_labels};
pub(crate) use super::style::{FONT, colour, register_font};
use crate::model::resources::GPU_RESOURCES;
use crate::sched::PodPhase;

const FREE: RGBColor = RGBColor(225, 228, 232);
const FRAGMENTED: RGBColor = RGBColor(214, 39, 40);
const ALLOCATED: RGBColor = RGBColor(31, 119, 180);
const FGD_FRAGMENT: RGBColor = RGBColor(255, 127, 14);

/// The largest GPU request of a pending pod (0 without one): free GPUs on a node with fewer
/// free than this are fragmented — no pending pod can use them.
fn largest_pending_gpu_request(s: &ScenarioReport, requests: &[i64]) -> i64 {
    s.pods
        .iter()
        .zip(requests)
        .filter(|(p, _)| !matches!(p.status, PodPhase::Scheduled | PodPhase::Succeeded))
        .map(|(_, r)| *r)
        .max()
        .unwrap_or(0)
}

/// Per pool (and GPU product): allocated, free and fragmented GPUs.
fn pool_gpus(s: &ScenarioReport, largest: i64) -> Vec<(String, [i64; 3])> {
    let mut pools: BTreeMap<String, [i64; 3]> = BTreeMap::new();
    for n in &s.nodes {
        let Some((_, total, used)) = n.gpus() else {
            continue;
        };
        let label = match &n.gpu_product {
            Some(p) => format!("{} ({p})", n.pool),
            None => n.pool.clone(),
        };
        let e = pools.entry(label).or_default();
        let free = total - used;
        e[0] += used;
        if free > 0 && free < largest {
            e[2] += free;
        } else {
            e[1] += free;
        }
    }
    pools.into_iter().collect()
}

/// Per pool (and GPU model) of shared GPUs, in milli: allocated, free that the target
/// workload can use, and the FGD paper's fragment (free that it cannot).
fn pool_gpu_share(s: &ScenarioReport) -> Vec<(String, Vec<i64>)> {
    let mut pools: BTreeMap<String, [f64; 3]> = BTreeMap::new();
    for n in &s.nodes {
        let Some(g) = &n.gpu_share else { continue };
        let label = match g.model.is_empty() {
            true => n.pool.clone(),
            false => format!("{} ({})", n.pool, g.model),
        };
        let e = pools.entry(label).or_default();
        let free: i64 = g.free_milli.iter().sum();
        let total = g.free_milli.len() as i64 * crate::model::gpu_share::MILLI;
        e[0] += (total - free) as f64;
        e[1] += free as f64 - g.fragment_milli;
        e[2] += g.fragment_milli;
    }
    (pools.into_iter())
        .map(|(l, v)| (l, v.iter().map(|x| x.round() as i64).collect()))
        .collect()
}

/// One chart's data.
pub(crate) enum Chart {
    Placement(Placement),
    /// A horizontal bar chart: caption, axis, bars (label, stacked values), series.
    Bars {
        caption: &'static str,
        axis: &'static str,
        bars: Vec<(String, Vec<i64>)>,
        series: Vec<(&'static str, RGBColor)>,
    },
    /// Step lines of cumulative shares of runs, one per sweep variant.
    Cdf {
        caption: &'static str,
        axis: &'static str,
        lines: Vec<(String, Vec<(f64, f64)>)>,
    },
    /// Per row (a sweep's variant), a figure's spread over the runs ([`super::rows::draw_boxes`]).
    Boxes {
        caption: String,
        axis: String,
        rows: Vec<(String, Option<super::rows::Spread>)>,
    },
    /// Lines over an x axis (a replay's time series, its wait CDF): straight lines between
    /// the points, or steps (each value holds until the next).
    Lines {
        caption: String,
        x_axis: &'static str,
        y_axis: &'static str,
        lines: Vec<(String, Vec<(f64, f64)>)>,
        steps: bool,
    },
    /// Series of points over an x axis, each point marked; a series joined as steps when it
    /// says so (a plan's cost frontier beside its simulated points).
    Points {
        caption: String,
        x_axis: &'static str,
        y_axis: &'static str,
        series: Vec<PointSeries>,
    },
    /// Lines over an x axis, each with a shaded band around it: points (x, low, middle, high),
    /// a median over seeds between two quantiles.
    Bands {
        caption: String,
        x_axis: &'static str,
        y_axis: &'static str,
        lines: Vec<(String, Vec<[f64; 4]>)>,
    },
}

/// A series of [`Chart::Points`]: its name, its points, and whether they are joined as steps.
pub(crate) type PointSeries = (String, Vec<(f64, f64)>, bool);

/// The placement map: per pool, its nodes (for big clusters, the pool as one row), each a row
/// of GPU cells coloured by the workload holding them.
pub(crate) struct Placement {
    /// Per pool: its rows.
    pools: Vec<(String, Vec<Row>)>,
    workloads: Vec<String>,
}

/// A node's name (or "N nodes" for a pool's total row) and its GPU cells.
type Row = (String, Vec<Cell>);

#[derive(Clone, Copy, PartialEq)]
enum Cell {
    Workload(usize),
    /// Held by pods that were running before the scenario (`spec.existingPods`).
    Existing,
    Free,
    Fragmented,
}

const EXISTING: RGBColor = RGBColor(90, 90, 90);

/// Above this many GPU nodes, the map shows each pool as one row.
const MAP_NODES: usize = 200;
/// The legend names at most this many workloads (the last colour is "other workloads").
const MAP_WORKLOADS: usize = 20;

impl Chart {
    fn size(&self) -> (u32, u32) {
        match self {
            Chart::Placement(p) => {
                let rows: usize = p.pools.iter().map(|(_, r)| r.len()).sum();
                let legend_rows = 1 + p.workloads.len() / 5;
                (
                    1000,
                    (110 + 20 * legend_rows + 16 * rows + 30 * p.pools.len()).min(4000) as u32,
                )
            }
            Chart::Cdf { lines, .. } | Chart::Lines { lines, .. } => {
                (1100, 470 + 20 * lines.len() as u32)
            }
            Chart::Bands { lines, .. } => (1100, 470 + 20 * lines.len() as u32),
            Chart::Points { series, .. } => (1100, 470 + 20 * series.len() as u32),
            Chart::Boxes { rows, .. } => (1200, 130 + 34 * rows.len() as u32),
            Chart::Bars { bars, series, .. } => {
                let legend = if series.len() > 1 {
                    24 * series.len() as u32 + 30
                } else {
                    0
                };
                (1200, 130 + legend + 34 * bars.len() as u32)
            }
        }
    }

    fn draw<DB: DrawingBackend>(&self, area: &DrawingArea<DB, Shift>) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        area.fill(&WHITE).map_err(|e| e.to_string())?;
        match self {
            Chart::Bars {
                caption,
                axis,
                bars,
                series,
            } => draw_bars(area, caption, axis, bars, series),
            Chart::Placement(p) => draw_placement(area, p),
            Chart::Boxes {
                caption,
                axis,
                rows,
            } => super::rows::draw_boxes(area, caption, axis, rows),
            Chart::Cdf {
                caption,
                axis,
                lines,
            } => draw_lines(area, caption, (axis, "share of runs"), lines, true),
            Chart::Lines {
                caption,
                x_axis,
                y_axis,
                lines,
                steps,
            } => draw_lines(area, caption, (x_axis, y_axis), lines, *steps),
            Chart::Bands {
                caption,
                x_axis,
                y_axis,
                lines,
            } => draw_bands(area, caption, (x_axis, y_axis), lines),
            Chart::Points {
                caption,
                x_axis,
                y_axis,
                series,
            } => draw_points(area, caption, (x_axis, y_axis), series),
        }
    }
}

fn draw_bars<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    axis: &str,
    bars: &[(String, Vec<i64>)],
    series: &[(&'static str, RGBColor)],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let n = bars.len();
    let max = bars
        .iter()
        .map(|(_, v)| v.iter().sum::<i64>())
        .max()
        .unwrap_or(1)
        .max(1);
    // The first bar on top: segment n-1 is bars[0].
    let (labels, label_area) = row_labels(bars.iter().map(|(l, _)| l));
    // A legend gets a band of its own above the bars.
    let legend_rows = if series.len() > 1 { 1 } else { 0 };
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (FONT, 20))
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(label_area)
        .build_cartesian_2d(
            0i64..max + max / 20 + 1,
            (0..n + legend_rows).into_segmented(),
        )
        .map_err(|e| e.to_string())?;
    draw_row_mesh(&mut chart, &labels, n + legend_rows + 1, axis)?;
    for (k, &(name, color)) in series.iter().enumerate() {
        let start = move |i: usize| -> i64 {
            let v = &bars[n - 1 - i].1;
            v[..k.min(v.len())].iter().sum()
        };
        chart
            .draw_series(
                Histogram::horizontal(&chart)
                    .style(color.filled())
                    .margin(6)
                    .baseline_func(move |v: &SegmentValue<usize>| match v {
                        SegmentValue::Exact(i) | SegmentValue::CenterOf(i) if *i < n => start(*i),
                        _ => 0,
                    })
                    // A histogram bar runs from the baseline to the value: give its end.
                    .data((0..n).map(move |i| {
                        let v = &bars[n - 1 - i].1;
                        (i, start(i) + v.get(k).copied().unwrap_or(0))
                    })),
            )
            .map_err(|e| e.to_string())?
            .label(name)
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 12, y + 6)], color.filled()));
    }
    if legend_rows > 0 {
        chart
            .configure_series_labels()
            .border_style(BLACK)
            .background_style(WHITE)
            .label_font((FONT, 13))
            .position(SeriesLabelPosition::UpperRight)
            .draw()
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn draw_placement<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    p: &Placement,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let text = |size: u32| (FONT, size).into_font().color(&BLACK);
    area.draw_text("Placement map: one cell per GPU", &text(20), (14, 10))
        .map_err(|e| e.to_string())?;
    let legend: Vec<(String, RGBColor)> = p
        .workloads
        .iter()
        .enumerate()
        .map(|(i, w)| (w.clone(), colour(i)))
        .chain([
            ("existing pods".to_string(), EXISTING),
            ("free".to_string(), FREE),
            (
                "fragmented (too few GPUs for any pending pod)".to_string(),
                FRAGMENTED,
            ),
        ])
        .collect();
    let (mut x, mut y) = (14, 42);
    for (name, c) in &legend {
        let width = 30 + 8 * name.chars().count() as i32;
        if x + width > 990 {
            x = 14;
            y += 20;
        }
        area.draw(&Rectangle::new([(x, y), (x + 12, y + 12)], c.filled()))
            .map_err(|e| e.to_string())?;
        area.draw_text(name, &text(13), (x + 16, y))
            .map_err(|e| e.to_string())?;
        x += width;
    }
    y += 34;
    let (left, right) = (150, 990);
    for (pool, rows) in &p.pools {
        area.draw_text(pool, &text(14), (14, y))
            .map_err(|e| e.to_string())?;
        y += 20;
        for (node, row) in rows {
            area.draw_text(node, &text(11), (24, y))
                .map_err(|e| e.to_string())?;
            // Cells of 14 px, or, when a row has more cells than fit (a big pool's total),
            // runs of equal cells drawn to scale.
            let px = (14.0f64).min(f64::from(right - left) / row.len().max(1) as f64);
            let x = |k: usize| left + (k as f64 * px).round() as i32;
            let mut k = 0;
            while k < row.len() {
                let run = if px >= 4.0 {
                    1
                } else {
                    row[k..].iter().take_while(|c| **c == row[k]).count()
                };
                let c = match row[k] {
                    Cell::Workload(i) => colour(i),
                    Cell::Existing => EXISTING,
                    Cell::Free => FREE,
                    Cell::Fragmented => FRAGMENTED,
                };
                let gap = i32::from(px >= 4.0);
                let x1 = x(k + run).max(x(k) + 1) - gap;
                area.draw(&Rectangle::new([(x(k), y), (x1, y + 12)], c.filled()))
                    .map_err(|e| e.to_string())?;
                k += run;
            }
            y += 16;
        }
        y += 10;
    }
    Ok(())
}

/// Writes `<path>.svg` and `<path>.png` (atomically: the PNG through a temporary file and a
/// rename); returns the SVG text.
pub(crate) fn write_chart(path: &Path, chart: &Chart) -> Result<String, String> {
    let size = chart.size();
    let mut svg = String::new();
    {
        let area = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        chart.draw(&area)?;
        area.present().map_err(|e| e.to_string())?;
    }
    super::write_atomic(&path.with_extension("svg"), svg.as_bytes()).map_err(|e| e.to_string())?;
    let png = path.with_extension("png");
    // The backend picks the image format from the extension.
    let tmp = crate::interrupt::TempFile::beside_keeping_extension(&png);
    let drawn = (|| {
        {
            let area = BitMapBackend::new(tmp.path(), size).into_drawing_area();
            chart.draw(&area)?;
            area.present().map_err(|e| e.to_string())?;
        }
        std::fs::rename(tmp.path(), &png).map_err(|e| e.to_string())
    })();
    if drawn.is_err() {
        let _ = std::fs::remove_file(tmp.path());
    }
    drawn?;
    Ok(svg)
}

/// The map's cells: each node's GPUs, allocated ones coloured by the workload (TrainJob,
/// trial, or the pod itself) holding them, free ones grey or, when too few for any pending
/// pod, red.
fn placement(s: &ScenarioReport, gpu_requests: &[i64], largest: i64) -> Placement {
    let mut workloads: Vec<String> = Vec::new();
    let mut by_node: BTreeMap<&str, Vec<(usize, i64)>> = BTreeMap::new();
    for (p, &gpus) in s.pods.iter().zip(gpu_requests) {
        let (Some(node), PodPhase::Scheduled, true) = (p.node.as_deref(), p.status, gpus > 0)
        else {
            continue;
        };
        let w = match &p.workload {
            Some(w) => format!("{}/{w}", p.namespace),
            None => format!("{}/{}", p.namespace, p.name),
        };
        let i = match workloads.iter().position(|x| *x == w) {
            Some(i) => i,
            None => {
                workloads.push(w);
                workloads.len() - 1
            }
        };
        by_node.entry(node).or_default().push((i, gpus));
    }
    let mut pools: Vec<(String, Vec<Row>)> = Vec::new();
    let mut gpu_nodes = 0;
    for n in &s.nodes {
        let Some((_, total, used)) = n.gpus() else {
            continue;
        };
        gpu_nodes += 1;
        let mut row: Vec<Cell> = Vec::with_capacity(total.max(0) as usize);
        for &(w, g) in by_node.get(n.name.as_str()).into_iter().flatten() {
            row.extend((0..g.max(0)).map(|_| Cell::Workload(w)));
        }
        // What the workloads do not account for is held by existing pods.
        row.truncate(used.max(0) as usize);
        row.resize(used.max(0) as usize, Cell::Existing);
        let free = total - used;
        let fragmented = free > 0 && free < largest;
        row.extend((0..free.max(0)).map(|_| match fragmented {
            true => Cell::Fragmented,
            false => Cell::Free,
        }));
        let label = match &n.gpu_product {
            Some(p) => format!("{} ({p})", n.pool),
            None => n.pool.clone(),
        };
        let row = (n.name.clone(), row);
        match pools.iter_mut().find(|(l, _)| *l == label) {
            Some((_, rows)) => rows.push(row),
            None => pools.push((label, vec![row])),
        }
    }
    // The legend names the workloads holding the most GPUs; the rest share one colour.
    let mut held: Vec<(usize, usize)> = (0..workloads.len()).map(|w| (w, 0)).collect();
    for (_, rows) in &pools {
        for (_, row) in rows {
            for c in row {
                if let Cell::Workload(w) = c {
                    held[*w].1 += 1;
                }
            }
        }
    }
    held.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    if held.len() > MAP_WORKLOADS {
        let mut rank = vec![MAP_WORKLOADS - 1; workloads.len()];
        for (r, (w, _)) in held.iter().take(MAP_WORKLOADS - 1).enumerate() {
            rank[*w] = r;
        }
        let others = workloads.len() - (MAP_WORKLOADS - 1);
        workloads = held
            .iter()
            .take(MAP_WORKLOADS - 1)
            .map(|(w, _)| workloads[*w].clone())
            .chain([format!("{others} other workloads")])
            .collect();
        for (_, rows) in &mut pools {
            for (_, row) in rows.iter_mut() {
                for c in row.iter_mut() {
                    if let Cell::Workload(w) = c {
                        *w = rank[*w];
                    }
                }
            }
        }
    }
    if gpu_nodes > MAP_NODES {
        for (_, rows) in &mut pools {
            let nodes = rows.len();
            let mut all: Vec<Cell> = rows.drain(..).flat_map(|(_, r)| r).collect();
            all.sort_by_key(|c| match c {
                Cell::Workload(i) => *i,
                Cell::Existing => usize::MAX - 2,
                Cell::Fragmented => usize::MAX - 1,
                Cell::Free => usize::MAX,
            });
            *rows = vec![(format!("{nodes} nodes"), all)];
        }
    }
    Placement { pools, workloads }
}

/// Writes `<dir>/<chart>.svg` and `.png` for each chart (atomically: the PNG through a
/// temporary file and a rename); returns the SVG texts by chart name for the index page.
/// `gpu_requests` are the pods' GPU requests, in report order.
pub fn write_charts(
    s: &ScenarioReport,
    gpu_requests: &[i64],
    dir: &Path,
) -> Result<Vec<(String, String)>, String> {
    register_font();
    let largest = largest_pending_gpu_request(s, gpu_requests);
    let mut charts: Vec<(&str, Chart)> = vec![(
        "placement-map",
        Chart::Placement(placement(s, gpu_requests, largest)),
    )];
    let pools = pool_gpus(s, largest);
    if !pools.is_empty() {
        charts.push((
            "gpu-allocation",
            Chart::Bars {
                caption: "GPUs per pool",
                axis: "GPUs",
                bars: pools.into_iter().map(|(l, v)| (l, v.to_vec())).collect(),
                series: vec![
                    ("allocated", ALLOCATED),
                    ("free", FREE),
                    ("fragmented (too few for any pending pod)", FRAGMENTED),
                ],
            },
        ));
    }
    if s.gpu_share_fragmentation.is_some() {
        charts.push((
            "gpu-share-fragmentation",
            Chart::Bars {
                caption: "GPU milli per pool, FGD fragmentation",
                axis: "GPU milli",
                bars: pool_gpu_share(s),
                series: vec![
                    ("allocated", ALLOCATED),
                    ("free, usable by the target workload", FREE),
                    (
                        "FGD fragment (free, unusable by the target workload)",
                        FGD_FRAGMENT,
                    ),
                ],
            },
        ));
    }
    let reasons = pending_reasons(s);
    if !reasons.is_empty() {
        charts.push((
            "pending-reasons",
            Chart::Bars {
                caption: "Pending pods by reason",
                axis: "pods",
                bars: reasons
                    .into_iter()
                    .map(|(r, n)| (r, vec![n as i64]))
                    .collect(),
                series: vec![("pending pods", FRAGMENTED)],
            },
        ));
    }
    if !s.override_effects.is_empty() {
        let bars = s
            .override_effects
            .iter()
            .flat_map(|e| {
                let job = format!("{}/{}", e.namespace, e.train_job);
                [
                    (
                        format!("{job} with overrides"),
                        vec![e.with_overrides.scheduled as i64, 0],
                    ),
                    (
                        format!("{job} runtime only"),
                        vec![0, e.without_overrides.scheduled as i64],
                    ),
                ]
            })
            .collect();
        charts.push((
            "override-effect",
            Chart::Bars {
                caption: "Placed pods with and without the overrides",
                axis: "pods placed",
                bars,
                series: vec![
                    ("with overrides", ALLOCATED),
                    ("runtime only", RGBColor(255, 127, 14)),
                ],
            },
        ));
    }
    if let Some(k) = &s.kueue {
        let bars = kueue_quota(k);
        if !bars.is_empty() {
            charts.push((
                "kueue-quota",
                Chart::Bars {
                    caption: "Kueue quota per ClusterQueue and flavor",
                    axis: "quota (GPUs; cores, GiB or units for other resources)",
                    bars,
                    series: vec![
                        ("used within nominal quota", ALLOCATED),
                        ("borrowed from the cohort", RGBColor(255, 127, 14)),
                        ("unused nominal quota", FREE),
                    ],
                },
            ));
        }
    }
    let mut svgs = Vec::new();
    for (name, chart) in charts {
        svgs.push((name.to_string(), write_chart(&dir.join(name), &chart)?));
    }
    Ok(svgs)
}

/// Per ClusterQueue, flavor and resource: usage within the nominal quota, usage borrowed
/// past it, and nominal quota left unused. GPU resources only when the queues cover any;
/// otherwise every resource, CPU in cores and memory in GiB.
fn kueue_quota(k: &super::kueue::KueueReport) -> Vec<(String, Vec<i64>)> {
    let covered = |r: &str| GPU_RESOURCES.contains(&r);
    let any_gpu =
        (k.cluster_queues.iter()).any(|q| q.resources.iter().any(|r| covered(&r.resource)));
    let amount = |resource: &str, q: &str| -> i64 {
        let Ok(q) = q.parse::<crate::model::quantity::Quantity>() else {
            return 0;
        };
        match resource {
            "memory" => q.value() >> 30,
            _ => q.value(),
        }
    };
    (k.cluster_queues.iter())
        .flat_map(|q| q.resources.iter().map(move |r| (q, r)))
        .filter(|(_, r)| !any_gpu || covered(&r.resource))
        .map(|(q, r)| {
            let (usage, nominal) = (
                amount(&r.resource, &r.usage),
                amount(&r.resource, &r.nominal),
            );
            let label = format!("{} · {} · {}", q.name, r.flavor, r.resource);
            let within = usage.min(nominal);
            (
                label,
                vec![within, usage - within, (nominal - usage).max(0)],
            )
        })
        .collect()
}

/// Pending pods per reason (a pod counts once for each reason it was given).
fn pending_reasons(s: &ScenarioReport) -> Vec<(String, usize)> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for p in s
        .pods
        .iter()
        .filter(|p| !matches!(p.status, PodPhase::Scheduled | PodPhase::Succeeded))
    {
        let mut reasons: Vec<String> = p
            .verdicts
            .iter()
            .flat_map(|v| v.reasons.iter().cloned())
            .collect();
        if reasons.is_empty() {
            reasons.push(super::model::pending_reason(p.status, &p.message));
        }
        reasons.sort();
        reasons.dedup();
        for r in reasons {
            *counts.entry(r).or_default() += 1;
        }
    }
    let mut out: Vec<(String, usize)> = counts.into_iter().collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    out
}

/// A file-system-safe folder name for a scenario.
pub(crate) fn folder(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Every scenario's charts into `<out>/<scenario>/`, and `<out>/index.html` with the tables and
/// the charts inline (no external assets).
/// A scenario's `schedsim explain` page, beside `index.html`.
pub fn explain_page(scenario: &str) -> String {
    format!("explain-{}.html", folder(scenario))
}

/// `explained`: the scenarios with an explain page of their pending pods, which their part
/// of `index.html` links.
pub fn write_all(
    scenarios: &[(&crate::load::Scenario, &ScenarioReport)],
    tables: &str,
    out: &Path,
    explained: &std::collections::HashSet<String>,
) -> Result<(), String> {
    let mut html = page_head("schedsim report");
    for (scenario, report) in scenarios {
        let dir = out.join(folder(&report.name));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        // DRA pods hold the GPUs of their allocated claims.
        let dra_gpus = match report.dra_claims.is_empty() {
            true => Default::default(),
            false => super::dra::pod_gpus(&scenario.config.dra, &report.dra_claims),
        };
        let gpu_requests: Vec<i64> = scenario
            .workloads
            .iter()
            .map(|p| {
                crate::model::resources::gpus(&p.requests)
                    .or_else(|| {
                        dra_gpus
                            .get(&(p.namespace.clone(), p.name.clone()))
                            .copied()
                    })
                    .unwrap_or(0)
            })
            .collect();
        let svgs = write_charts(report, &gpu_requests, &dir)?;
        html.push_str(&format!(
            "<h2>{}</h2>\n<p>{}</p>\n",
            escape(&report.name),
            escape(&report.file)
        ));
        if explained.contains(&report.name) {
            html.push_str(&format!(
                "<p><a href=\"{}\">Why pods pend: every node's verdict and score</a></p>\n",
                explain_page(&report.name)
            ));
        }
        for (_, svg) in svgs {
            html.push_str(&svg);
            html.push('\n');
        }
    }
    html.push_str(&page_tail(tables));
    super::write_atomic(&out.join("index.html"), html.as_bytes()).map_err(|e| e.to_string())
}

/// The start of a self-contained report page.
pub(crate) fn page_head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>\n<style>body{{font-family:sans-serif;margin:2em;max-width:1200px}}pre{{font-size:12px;overflow-x:auto;background:#f6f8fa;padding:1em}}svg{{max-width:100%;height:auto;border:1px solid #ddd;margin:.5em 0}}</style></head><body>\n<h1>{title}</h1>\n"
    )
}

/// The tables and the end of a report page.
pub(crate) fn page_tail(tables: &str) -> String {
    format!(
        "<h2>Tables</h2>\n<pre>{}</pre>\n</body></html>\n",
        escape(tables)
    )
}

pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Lines with a legend, one per series: steps (each value holds until the next, as a CDF's)
/// or straight lines between the points. The y axis starts at 0.
fn draw_lines<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    (x_axis, y_axis): (&str, &str),
    lines: &[(String, Vec<(f64, f64)>)],
    steps: bool,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let max_x = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(x, _)| *x))
        .fold(1.0f64, f64::max);
    let max_y = lines
        .iter()
        .flat_map(|(_, p)| p.iter().map(|(_, y)| *y))
        .fold(1.0f64, f64::max);
    let (chart_area, legend_area) = area.split_vertically(420);
    let mut chart = xy_chart(
        &chart_area,
        caption,
        (x_axis, y_axis),
        (max_x * 1.05, max_y * 1.05),
    )?;
    for (i, (_, points)) in lines.iter().enumerate() {
        let drawn: Vec<(f64, f64)> = match steps {
            // A step function: each value's share holds until the next value.
            true => {
                let mut out: Vec<(f64, f64)> = vec![(0.0, 0.0)];
                for &(x, y) in points {
                    let last = out.last().map_or(0.0, |p| p.1);
                    out.push((x, last));
                    out.push((x, y));
                }
                out.push((max_x * 1.05, out.last().map_or(0.0, |p| p.1)));
                out
            }
            false => points.clone(),
        };
        chart
            .draw_series(LineSeries::new(drawn, colour(i).stroke_width(2)))
            .map_err(|e| e.to_string())?;
    }
    draw_legend(&legend_area, lines.iter().map(|(name, _)| name))
}

/// Marked points with a legend, a series joined as steps when it says so. The axes start at 0.
fn draw_points<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    (x_axis, y_axis): (&str, &str),
    series: &[PointSeries],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let points = || series.iter().flat_map(|(_, p, _)| p.iter());
    let max_x = points().map(|p| p.0).fold(1.0f64, f64::max);
    let max_y = points().map(|p| p.1).fold(1.0f64, f64::max);
    let (chart_area, legend_area) = area.split_vertically(420);
    let mut chart = xy_chart(
        &chart_area,
        caption,
        (x_axis, y_axis),
        (max_x * 1.05, max_y * 1.1),
    )?;
    for (i, (_, points, joined)) in series.iter().enumerate() {
        if *joined {
            // Each value holds until the next point's.
            let mut steps: Vec<(f64, f64)> = Vec::new();
            for &(x, y) in points {
                if let Some(&(_, last)) = steps.last() {
                    steps.push((x, last));
                }
                steps.push((x, y));
            }
            chart
                .draw_series(LineSeries::new(steps, colour(i).stroke_width(2)))
                .map_err(|e| e.to_string())?;
        }
        let marks = points
            .iter()
            .map(|&p| Circle::new(p, 4, colour(i).filled()));
        chart.draw_series(marks).map_err(|e| e.to_string())?;
    }
    draw_legend(&legend_area, series.iter().map(|(name, _, _)| name))
}

/// Lines with a legend, each over a shaded band from its low to its high points (the band
/// at a fifth of the line's colour). The y axis starts at 0.
fn draw_bands<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    caption: &str,
    (x_axis, y_axis): (&str, &str),
    lines: &[(String, Vec<[f64; 4]>)],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let points = || lines.iter().flat_map(|(_, p)| p.iter());
    let max_x = points().map(|p| p[0]).fold(1.0f64, f64::max);
    let max_y = points().map(|p| p[3]).fold(1.0f64, f64::max);
    let (chart_area, legend_area) = area.split_vertically(420);
    let mut chart = xy_chart(
        &chart_area,
        caption,
        (x_axis, y_axis),
        (max_x * 1.02, max_y * 1.05),
    )?;
    for (i, (_, points)) in lines.iter().enumerate() {
        let band: Vec<(f64, f64)> = (points.iter().map(|p| (p[0], p[3])))
            .chain(points.iter().rev().map(|p| (p[0], p[1])))
            .collect();
        chart
            .draw_series(std::iter::once(Polygon::new(
                band,
                colour(i).mix(0.2).filled(),
            )))
            .map_err(|e| e.to_string())?;
        let middle = points.iter().map(|p| (p[0], p[2]));
        chart
            .draw_series(LineSeries::new(middle, colour(i).stroke_width(2)))
            .map_err(|e| e.to_string())?;
    }
    draw_legend(&legend_area, lines.iter().map(|(name, _)| name))
}

/// A legend under a chart: one coloured mark and name per series, in the series' colours.
fn draw_legend<'n, DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    names: impl Iterator<Item = &'n String>,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let text = (FONT, 13).into_font().color(&BLACK);
    for (i, name) in names.enumerate() {
        let y = 10 + 20 * i as i32;
        area.draw(&Rectangle::new([(80, y), (100, y + 4)], colour(i).filled()))
            .map_err(|e| e.to_string())?;
        area.draw_text(name, &text, (108, y - 5))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// An x–y chart from 0 to `(top_x, top_y)` with its caption, mesh and axis names drawn.
fn xy_chart<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    caption: &str,
    (x_axis, y_axis): (&str, &str),
    (top_x, top_y): (f64, f64),
) -> Result<ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>, String>
where
    DB::ErrorType: 'static,
{
    let mut chart = ChartBuilder::on(area)
        .caption(caption, (FONT, 20))
        .margin(14)
        .x_label_area_size(40)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..top_x, 0f64..top_y)
        .map_err(|e| e.to_string())?;
    chart
        .configure_mesh()
        .x_desc(x_axis)
        .y_desc(y_axis)
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 14))
        .draw()
        .map_err(|e| e.to_string())?;
    Ok(chart)
}
