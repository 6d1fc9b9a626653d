//! Charts of a sweep: per scenario, the distributions of pending pods and GPU allocation over
//! the runs, one line per variant (plotters, with the report charts' font and page).

use std::path::Path;

use crate::report::chart::{
    Chart, escape, folder, page_head, page_tail, register_font, write_chart,
};

/// A sweep's distributions: per scenario, the CDF of pending pods and of GPU allocation over
/// the runs, one line per variant; SVG and PNG into `<out>/<scenario>-sweep/`.
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
    html.push_str(&page_tail(tables));
    crate::report::write_atomic(&out.join("sweep.html"), html.as_bytes())
        .map_err(|e| e.to_string())?;
    Ok(())
}
