//! Sweep tables: per variant the chance everything is placed, the pending-pod and GPU
//! distributions, fragmentation and the commonest reasons; per workload its chance to be
//! fully placed in each variant.

use std::fmt::Write as _;

use tabled::settings::Style;
use tabled::{Table, Tabled};

use crate::sweep::{ScenarioSweep, SweepReport};

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
    out
}

fn percent(p: f64) -> String {
    format!("{:.1}%", 100.0 * p)
}

fn render_scenario(s: &ScenarioSweep, out: &mut String) {
    let p = &s.perturbations;
    let _ = writeln!(
        out,
        "Sweep {} ({}): {} variant(s) x {} seed(s), master seed {}; shuffle arrivals {}, node failure p={}, pool jitter ±{}",
        s.name,
        s.file,
        s.variants.len(),
        s.seeds,
        s.master_seed,
        if p.shuffle_arrivals { "on" } else { "off" },
        p.node_failure_probability,
        p.pool_jitter
    );
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
    let expectations: Vec<ExpectRow> = s
        .variants
        .iter()
        .flat_map(|v| {
            v.expectations.iter().map(|e| ExpectRow {
                met: if e.met { "ok" } else { "FAIL" },
                expectation: e.title.clone(),
                variant: v.name.clone(),
                held: format!(
                    "{}/{} runs (needs {})",
                    e.met_runs,
                    v.aggregate.runs,
                    percent(e.required_share)
                ),
            })
        })
        .collect();
    if !expectations.is_empty() {
        let _ = writeln!(out, "{}", Table::new(expectations).with(Style::rounded()));
    }
    if !jobs.is_empty() {
        let mut jobs = jobs;
        jobs.sort_by(|a, b| a.job.cmp(&b.job));
        let _ = writeln!(out, "{}", Table::new(jobs).with(Style::rounded()));
    }
    out.push('\n');
}
