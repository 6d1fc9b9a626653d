//! Charts of a sweep: per scenario, the distributions of pending pods and GPU allocation over
//! the runs, one line per variant; per replayed scenario, one box chart per figure, a box per
//! variant (plotters, with the report charts' font and page).

use std::path::Path;

use crate::report::chart::{
    Chart, escape, folder, page_head, page_tail, register_font, write_chart,
};
use crate::sweep::aggregate::{Histogram, quantile};
use crate::sweep::over_time::{FIGURES, Figure, Unit};
use crate::sweep::{ReplayVariant, ScenarioSweep};

/// A sweep's distributions: per scenario, the CDF of pending pods and of GPU allocation over
/// the runs, one line per variant; per replayed scenario, each figure's spread over the runs,
/// a box per variant; SVG and PNG into `<out>/<scenario>-sweep/`, and `<out>/sweep.html`.
pub fn write_sweep_charts(
    report: &crate::sweep::SweepReport,
    tables: &str,
    out: &Path,
) -> Result<(), String> {
    register_font();
    let mut html = page_head("schedsim sweep");
    for s in &report.scenarios {
        let dir = out.join(format!("{}-sweep", folder(&s.name)));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let lines =
            |pick: &dyn Fn(&crate::sweep::Aggregate) -> &crate::sweep::aggregate::Histogram,
             scale: f64| {
                s.variants
                    .iter()
                    .map(|v| {
                        let h = pick(&v.aggregate);
                        let n: u64 = h.values().sum();
                        let mut seen = 0;
                        let points: Vec<(f64, f64)> = h
                            .iter()
                            .map(|(x, c)| {
                                seen += c;
                                (*x as f64 / scale, seen as f64 / n.max(1) as f64)
                            })
                            .collect();
                        (v.name.clone(), points)
                    })
                    .collect::<Vec<_>>()
            };
        for (name, caption, axis, lines) in [
            (
                "pending-pods-cdf",
                "Pending pods per run (cumulative share of runs)",
                "pending pods",
                lines(&|a| &a.pending_pods, 1.0),
            ),
            (
                "gpu-allocation-cdf",
                "GPU allocation per run (cumulative share of runs)",
                "GPUs allocated (%)",
                lines(&|a| &a.gpu_allocation_permille, 10.0),
            ),
        ] {
            let chart = Chart::Cdf {
                caption,
                axis,
                lines,
            };
            if name == "pending-pods-cdf" {
                html.push_str(&format!("<h2>{}</h2>\n", escape(&s.name)));
            }
            html.push_str(&write_chart(&dir.join(name), &chart)?);
            html.push('\n');
        }
    }
    for s in &report.replays {
        html.push_str(&format!("<h2>{}</h2>\n", escape(&s.name)));
        for svg in replay_charts(s, out)? {
            html.push_str(&svg);
            html.push('\n');
        }
    }
    html.push_str(&page_tail(tables));
    crate::report::write_atomic(&out.join("sweep.html"), html.as_bytes())
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// A replayed scenario's charts, one per figure some run had: their SVG texts.
fn replay_charts(s: &ScenarioSweep<ReplayVariant>, out: &Path) -> Result<Vec<String>, String> {
    let dir = out.join(format!("{}-sweep", folder(&s.name)));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let mut svgs = Vec::new();
    for f in &FIGURES {
        let histograms: Vec<(&String, Option<&Histogram>)> = (s.variants.iter())
            .map(|v| (&v.name, v.aggregate.figures.get(f.key)))
            .collect();
        let most = (histograms.iter())
            .filter_map(|(_, h)| (*h)?.keys().next_back())
            .max();
        let Some(&most) = most else {
            continue;
        };
        let (scale, axis) = axis(f, most);
        let rows = (histograms.into_iter())
            .map(|(name, h)| {
                let spread = h.and_then(|h| {
                    let at = |p: f64| quantile(h, p).map(|v| v as f64 / scale);
                    Some([at(0.0)?, at(0.25)?, at(0.5)?, at(0.75)?, at(1.0)?])
                });
                (name.clone(), spread)
            })
            .collect();
        let chart = Chart::Boxes {
            caption: format!("{} over the runs, per variant", capitalised(f.title)),
            axis: format!("{axis} — line: least to most, box: middle half, tick: median"),
            rows,
        };
        svgs.push(write_chart(&dir.join(file_name(f.summary_key)), &chart)?);
    }
    Ok(svgs)
}

/// The axis of a figure whose largest value is `most` (an integer in its unit): the divisor
/// from its integers, and the axis' title.
fn axis(f: &Figure, most: u64) -> (f64, String) {
    match f.unit {
        Unit::Duration => {
            let (scale, title) = crate::replay::chart::wait_unit(most);
            (scale, title.to_string())
        }
        Unit::Count => (1.0, f.title.to_string()),
        Unit::BasisPoints => (f.unit.scale(), "GPUs allocated over the replay (%)".into()),
        Unit::MilliGpuHours => (f.unit.scale(), f.title.to_string()),
    }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map_or_else(String::new, |first| first.to_uppercase().chain(c).collect())
}

/// `podWaitP50Ms` → `pod-wait-p50-ms`.
fn file_name(key: &str) -> String {
    let mut out = String::new();
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('-');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}
