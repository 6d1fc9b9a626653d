//! `schedsim sweep [PATH…]`: every variant of every scenario × seeds, in parallel, aggregated
//! (a scenario with `spec.replay` is replayed over time in each run);
//! `schedsim merge FILE…`: shard outputs combined into the sweep's aggregates.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use crate::error::exit_code;
use crate::load::{LoadOptions, Selection, SweepLoader};
use crate::report;
use crate::sweep::{self, SweepOptions, SweepReport};

#[derive(Debug, Args)]
pub struct SweepArgs {
    /// Scenario files or folders (default: the bundled scenarios/).
    pub paths: Vec<PathBuf>,
    /// Runs per variant (default: each scenario's `spec.sweep.seeds`, else 1).
    #[arg(long)]
    pub seeds: Option<u32>,
    /// Master seed every run's RNG derives from (default: the scenario's `scheduler.seed`).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Keep only these options of a variant dimension: `--set inventory=h100,a100`.
    #[arg(long = "set", value_name = "DIMENSION=OPTION[,OPTION…]", value_parser = parse_set)]
    pub set: Vec<(String, Vec<String>)>,
    /// Shuffle the arrival order of workload items in each run.
    #[arg(long)]
    pub shuffle_arrivals: bool,
    /// Each node is down for a run with this probability.
    #[arg(long, value_name = "P", value_parser = parse_probability)]
    pub node_failure: Option<f64>,
    /// Each pool's node count varies uniformly by up to this fraction (0.1 = ±10%).
    #[arg(long, value_name = "FRACTION", value_parser = parse_probability)]
    pub pool_jitter: Option<f64>,
    /// Run only the I-th of N disjoint slices of the runs (0-based); `schedsim merge` adds the
    /// shards' outputs up.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<(u64, u64)>,
    /// Also write one JSON line per run to this file.
    #[arg(long, value_name = "FILE")]
    pub runs: Option<PathBuf>,
    /// A KubeSchedulerConfiguration for every scenario, in place of their own.
    #[arg(long, value_name = "FILE")]
    pub scheduler_config: Option<PathBuf>,
    /// `upstream` (default: each cycle samples the nodes as kube-scheduler's
    /// `percentageOfNodesToScore` does) or `all` (every node examined for every pod), in place
    /// of each scenario's `spec.scheduler.nodeSampling`.
    #[arg(long, value_enum, value_name = "MODE")]
    pub node_sampling: Option<crate::sched::sampling::NodeSampling>,
    #[command(flatten)]
    pub output: super::OutputArgs,
    /// Also draw per-scenario distributions (CDFs of pending pods and GPU allocation, one line
    /// per variant; for a replayed scenario, each figure's spread over the runs, a box per
    /// variant) into `<out>/<scenario>-sweep/`.
    #[arg(long)]
    pub charts: bool,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// `sweep --format json` outputs of the shards of one sweep.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    #[command(flatten)]
    pub output: super::OutputArgs,
}

fn parse_set(s: &str) -> Result<(String, Vec<String>), String> {
    let (dim, options) = s
        .split_once('=')
        .ok_or_else(|| format!("expected DIMENSION=OPTION[,OPTION…], got {s:?}"))?;
    let options: Vec<String> = options
        .split(',')
        .map(str::trim)
        .filter(|o| !o.is_empty())
        .map(String::from)
        .collect();
    if dim.trim().is_empty() || options.is_empty() {
        return Err(format!("expected DIMENSION=OPTION[,OPTION…], got {s:?}"));
    }
    Ok((dim.trim().to_string(), options))
}

fn parse_probability(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(p) if (0.0..=1.0).contains(&p) => Ok(p),
        _ => Err(format!("expected a number from 0 to 1, got {s:?}")),
    }
}

pub(super) fn parse_shard(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("expected I/N with 0 <= I < N, got {s:?}");
    let (i, n) = s.split_once('/').ok_or_else(bad)?;
    let (i, n): (u64, u64) = (
        i.trim().parse().map_err(|_| bad())?,
        n.trim().parse().map_err(|_| bad())?,
    );
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

pub fn run(args: &SweepArgs) -> i32 {
    let paths = super::paths_or_default(&args.paths);
    let files = match super::scenario_files_or_exit(&paths) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let options = LoadOptions {
        scheduler_config: args.scheduler_config.clone(),
        node_sampling: args.node_sampling,
        kueue_over_time: true,
        ..Default::default()
    };
    let select: Selection = args.set.clone();
    let mut loader = SweepLoader::new(&options);
    let (plans, errors) = loader.plans(&files, &select);
    for e in &errors {
        eprintln!("error: {e}");
    }
    let opts = SweepOptions {
        seeds: args.seeds,
        seed: args.seed,
        shuffle_arrivals: args.shuffle_arrivals.then_some(true),
        node_failure_probability: args.node_failure,
        pool_jitter: args.pool_jitter,
        shard: args.shard,
        keep_runs: args.runs.is_some(),
    };
    // Run rows are streamed into the file as they come, a chunk of runs at a time.
    let mut rows_file = match args.runs.as_deref().map(report::AtomicFile::create) {
        Some(Err(e)) => {
            let path = args.runs.as_deref().unwrap_or_else(|| "".as_ref());
            eprintln!("error: cannot write {}: {e}", path.display());
            return exit_code::BAD_INPUT;
        }
        Some(Ok(f)) => Some(f),
        None => None,
    };
    let mut write_rows = |rows: &[sweep::RunRow]| -> std::io::Result<()> {
        let Some(file) = rows_file.as_mut() else {
            return Ok(());
        };
        for r in rows {
            serde_json::to_writer(&mut *file, r)?;
            file.write_all(b"\n")?;
        }
        Ok(())
    };
    let bar = progress_bar(sweep::run_count(&plans, &opts));
    let result = sweep::run(&plans, &mut loader, &opts, &|| bar.inc(1), &mut write_rows);
    bar.finish_and_clear();
    let (report, variant_errors) = match result {
        Ok(r) => r,
        Err(e) => {
            let path = args.runs.as_deref().unwrap_or_else(|| "".as_ref());
            eprintln!("error: cannot write {}: {e}", path.display());
            return exit_code::BAD_INPUT;
        }
    };
    for e in &variant_errors {
        eprintln!("error: {e}");
    }
    let mut code = if errors.is_empty() && variant_errors.is_empty() {
        exit_code::SUCCESS
    } else {
        exit_code::BAD_INPUT
    };
    if let (Some(file), Some(path)) = (rows_file, &args.runs)
        && let Err(e) = file.commit()
    {
        eprintln!("error: cannot write {}: {e}", path.display());
        code = exit_code::BAD_INPUT;
    }
    if args.charts
        && let Err(e) = crate::sweep::chart::write_sweep_charts(
            &report,
            &crate::sweep::table::render(&report),
            &args.output.out,
        )
    {
        eprintln!("error: cannot write charts: {e}");
        code = exit_code::BAD_INPUT;
    }
    let written = write_report(&report, &args.output).max(code);
    let unmet = report.unmet();
    for (scenario, variant, e) in &unmet {
        eprintln!(
            "unmet: {scenario} [{variant}]: {} held in {} runs, needs {:.0}%",
            e.title,
            e.met_runs,
            100.0 * e.required_share
        );
    }
    if written == exit_code::SUCCESS && !unmet.is_empty() {
        exit_code::EXPECTATIONS_NOT_MET
    } else {
        written
    }
}

pub fn merge(args: &MergeArgs) -> i32 {
    let mut reports = Vec::new();
    for f in &args.files {
        let parsed = std::fs::read_to_string(f)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<SweepReport>(&t).map_err(|e| e.to_string()));
        match parsed {
            Ok(r) => reports.push(r),
            Err(e) => {
                eprintln!("error: {}: {e}", f.display());
                return exit_code::BAD_INPUT;
            }
        }
    }
    match sweep::merge(reports) {
        Ok(merged) => {
            let written = write_report(&merged, &args.output);
            if written == exit_code::SUCCESS && !merged.unmet().is_empty() {
                exit_code::EXPECTATIONS_NOT_MET
            } else {
                written
            }
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit_code::BAD_INPUT
        }
    }
}

/// Writes `sweep.json` and `sweep.txt` atomically and prints one of them.
fn write_report(report: &SweepReport, output: &super::OutputArgs) -> i32 {
    let mut json = serde_json::to_string_pretty(report).expect("report serializes");
    json.push('\n');
    output.emit("sweep", &json, &crate::sweep::table::render(report))
}

/// A bar on stderr when it is a terminal; hidden otherwise (CI logs stay clean).
fn progress_bar(total: u64) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::with_draw_target(Some(total), ProgressDrawTarget::stderr());
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {pos}/{len} runs, {per_sec}, eta {eta}")
    {
        bar.set_style(style);
    }
    bar
}
