//! Sweep tables: per variant the chance everything is placed, the pending-pod and GPU
//! distributions, fragmentation and the commonest reasons; per workload its chance to be
//! fully placed in each variant. A replayed scenario's: per variant and per group, each
//! figure's median over the runs with its least and most.

use std::fmt::Write as _;

use tabled::builder::Builder;
use tabled::settings::Style;
use tabled::{Table, Tabled};

use crate::sweep::aggregate::{Fold, Histogram, quantile};
use crate::sweep::over_time::{FIGURES, Figure, Unit};
use crate::sweep::{ReplayVariant, ScenarioSweep, SweepReport, VariantSweep};
use crate::trace::clock::format_duration;

#[derive(Tabled)]
struct VariantRow {
    #[tabled(rename = "Variant")]
    variant: String,
    #[tabled(rename = "Runs")]
    runs: u64,
    #[tabled(rename = "All placed")]
    all_placed: String,
    #[tabled(rename = "Pending pods mean / p50 / p90 / p99 / max")]
    pending: String,
    #[tabled(rename = "GPU allocated mean / p50")]
    gpu: String,
    #[tabled(rename = "Fragmented GPUs mean / p90")]
    fragmented: String,
    #[tabled(rename = "Top pending reasons (pods per run)")]
    reasons: String,
}

#[derive(Tabled)]
struct ExpectRow {
    #[tabled(rename = "")]
    met: &'static str,
    #[tabled(rename = "Expectation")]
    expectation: String,
    #[tabled(rename = "Variant")]
    variant: String,
    #[tabled(rename = "Held in")]
    held: String,
}

#[derive(Tabled)]
struct JobRow {
    #[tabled(rename = "Workload")]
    job: String,
    #[tabled(rename = "Variant")]
    variant: String,
    #[tabled(rename = "Fully placed")]
    placed: String,
}

pub fn render(report: &SweepReport) -> String {
    let mut out = String::new();
    if let Some(shard) = &report.shard {
        let _ = writeln!(
            out,
            "shard {shard} (merge the shards for the sweep's figures)"
        );
    }
    for s in &report.scenarios {
        render_scenario(s, &mut out);
    }
    for s in &report.replays {
        render_replay(s, &mut out);
    }
    out
}

fn percent(p: f64) -> String {
    format!("{:.1}%", 100.0 * p)
}

/// The scenario's line: its matrix, seeds and perturbations.
fn heading<V>(s: &ScenarioSweep<V>, what: &str, out: &mut String) {
    let p = &s.perturbations;
    let _ = writeln!(
        out,
        "Sweep {} ({}): {} variant(s) x {} seed(s), master seed {}{what}; shuffle arrivals {}, node failure p={}, pool jitter ±{}",
        s.name,
        s.file,
        s.variants.len(),
        s.seeds,
        s.master_seed,
        if p.shuffle_arrivals { "on" } else { "off" },
        p.node_failure_probability,
        p.pool_jitter
    );
}

fn render_scenario(s: &ScenarioSweep, out: &mut String) {
    heading(s, "", out);
    let rows = s.variants.iter().map(|v| {
        let m = &v.summary;
        let d = &m.pending_pods;
        let mut reasons: Vec<(&String, &f64)> = m.pending_reasons_per_run.iter().collect();
        reasons.sort_by(|a, b| b.1.total_cmp(a.1).then(a.0.cmp(b.0)));
        VariantRow {
            variant: v.name.clone(),
            runs: v.aggregate.runs,
            all_placed: percent(m.all_placed_probability),
            pending: format!(
                "{:.2} / {} / {} / {} / {}",
                d.mean, d.p50, d.p90, d.p99, d.max
            ),
            gpu: format!(
                "{:.1}% / {:.1}%",
                m.gpu_allocation_percent.mean, m.gpu_allocation_percent.p50
            ),
            fragmented: format!("{:.2} / {}", m.fragmented_gpus.mean, m.fragmented_gpus.p90),
            reasons: if reasons.is_empty() {
                "-".into()
            } else {
                reasons
                    .iter()
                    .take(3)
                    .map(|(r, n)| format!("{n:.2} {r}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            },
        }
    });
    let _ = writeln!(out, "{}", Table::new(rows).with(Style::rounded()));
    let jobs: Vec<JobRow> = s
        .variants
        .iter()
        .flat_map(|v| {
            v.summary
                .job_placed_probability
                .iter()
                .map(|(j, p)| JobRow {
                    job: j.clone(),
                    variant: v.name.clone(),
                    placed: percent(*p),
                })
        })
        .collect();
    expectations(&s.variants, out);
    if !jobs.is_empty() {
        let mut jobs = jobs;
        jobs.sort_by(|a, b| a.job.cmp(&b.job));
        let _ = writeln!(out, "{}", Table::new(jobs).with(Style::rounded()));
    }
    out.push('\n');
}

/// Per variant, its expectations and the runs they held in.
fn expectations<F: Fold>(variants: &[VariantSweep<F, F::Summary>], out: &mut String) {
    let rows: Vec<ExpectRow> = variants
        .iter()
        .flat_map(|v| {
            v.expectations.iter().map(|e| ExpectRow {
                met: if e.met { "ok" } else { "FAIL" },
                expectation: e.title.clone(),
                variant: v.name.clone(),
                held: format!(
                    "{}/{} runs (needs {})",
                    e.met_runs,
                    v.aggregate.runs(),
                    percent(e.required_share)
                ),
            })
        })
        .collect();
    if !rows.is_empty() {
        let _ = writeln!(out, "{}", Table::new(rows).with(Style::rounded()));
    }
}

/// A figure's integer as people read it.
fn reading(f: &Figure, v: u64) -> String {
    let x = v as f64 / f.unit.scale();
    match f.unit {
        Unit::Duration => format_duration(v),
        Unit::Count => v.to_string(),
        Unit::BasisPoints => format!("{x:.2}%"),
        // A small replay's GPU-hours keep their hundredths.
        Unit::MilliGpuHours if x < 10.0 => format!("{x:.2}"),
        Unit::MilliGpuHours => format!("{x:.1}"),
    }
}

/// The median over the runs and, when they differ, the least–most under it; `-` when no run
/// had the figure.
fn spread(f: &Figure, h: Option<&Histogram>) -> String {
    let Some(h) = h.filter(|h| !h.is_empty()) else {
        return "-".into();
    };
    let median = quantile(h, 0.5).map_or_else(String::new, |v| reading(f, v));
    match (h.keys().next(), h.keys().next_back()) {
        (Some(lo), Some(hi)) if lo != hi => {
            format!("{median}\n{}–{}", reading(f, *lo), reading(f, *hi))
        }
        _ => median,
    }
}

fn render_replay(s: &ScenarioSweep<ReplayVariant>, out: &mut String) {
    heading(s, ", replayed over time", out);
    let _ = writeln!(
        out,
        "Per figure, the median over the runs and under it the least–most."
    );
    // The figures some run had (a replay without Kueue has no admission wait).
    let shown: Vec<&Figure> = (FIGURES.iter())
        .filter(|f| (s.variants.iter()).any(|v| v.aggregate.figures.contains_key(f.key)))
        .collect();
    let mut header = vec!["Variant".to_string(), "Runs".to_string()];
    header.extend(shown.iter().map(|f| f.column.to_string()));
    let mut table = Builder::from_iter([header]);
    for v in &s.variants {
        let a = &v.aggregate;
        let mut row = vec![v.name.clone(), a.runs.to_string()];
        row.extend(shown.iter().map(|f| spread(f, a.figures.get(f.key))));
        table.push_record(row);
    }
    let _ = writeln!(out, "{}", table.build().with(Style::rounded()));
    // Per group, the variants side by side.
    let per_group: Vec<&Figure> = (shown.iter().copied()).filter(|f| f.per_group()).collect();
    let mut groups: Vec<&String> = (s.variants.iter())
        .flat_map(|v| v.aggregate.groups.keys())
        .collect();
    groups.sort();
    groups.dedup();
    if !groups.is_empty() {
        let mut header = vec!["Group".to_string(), "Variant".to_string()];
        header.extend(per_group.iter().map(|f| f.column.to_string()));
        let mut table = Builder::from_iter([header]);
        for g in groups {
            for v in &s.variants {
                let Some(figures) = v.aggregate.groups.get(g) else {
                    continue;
                };
                let mut row = vec![g.clone(), v.name.clone()];
                row.extend(per_group.iter().map(|f| spread(f, figures.get(f.key))));
                table.push_record(row);
            }
        }
        let _ = writeln!(out, "{}", table.build().with(Style::rounded()));
    }
    expectations(&s.variants, out);
    out.push('\n');
}
