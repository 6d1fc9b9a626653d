//! `schedsim replay PATH…`: replays each scenario's workloads over time (`spec.replay`) and
//! reports waits, GPU time and the time series. Scenarios run in parallel; each replay is
//! sequential, as kube-scheduler's queue is.

use std::path::PathBuf;

use clap::Args;
use indicatif::{MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use crate::error::exit_code;
use crate::load::LoadOptions;
use crate::replay::{self, PodRecord, ReplayReport, Sinks};
use crate::report::AtomicFile;

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Scenario files or folders with `spec.replay` (default: the bundled scenarios/replay/).
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub output: super::OutputArgs,
    /// Also write every pod's life (arrival, Kueue admission, first bind, end, node, attempts;
    /// for a pod still pending, its last cycle's message; for one still queued, its job's
    /// Kueue message) to `<out>/replay-<scenario>-pods.csv`, one row per pod as it ends.
    #[arg(long)]
    pub pods_csv: bool,
    /// Also draw charts (SVG and PNG) into `<out>/<scenario>-replay/` — GPUs allocated per
    /// pool over time with the fragmented ones, pods running and pending, the CDF of waits —
    /// and `<out>/replay.html` with the tables and charts.
    #[arg(long)]
    pub charts: bool,
    /// A KubeSchedulerConfiguration file whose profiles schedule every scenario.
    #[arg(long, value_name = "FILE")]
    pub scheduler_config: Option<PathBuf>,
    /// `upstream` (default) or `all`: how each cycle samples the nodes.
    #[arg(long, value_enum, value_name = "MODE")]
    pub node_sampling: Option<crate::sched::sampling::NodeSampling>,
}

/// A scenario's bar: the simulated time replayed, against `until` when it is known.
fn replay_bar(scenario: &crate::load::Scenario) -> ProgressBar {
    let until = scenario.replay.as_ref().and_then(|r| r.until_ms);
    let (bar, template) = match until {
        Some(ms) => (
            ProgressBar::new(ms / 1000),
            "{prefix} {bar:30} replayed {msg} of the span, {elapsed}",
        ),
        None => (
            ProgressBar::new_spinner(),
            "{prefix} {spinner} replayed {msg}, {elapsed}",
        ),
    };
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar.set_prefix(scenario.name.clone());
    bar
}

/// The bundled replay scenarios.
fn default_replays() -> PathBuf {
    super::run::default_scenarios().join("replay")
}

pub fn run(args: &ReplayArgs) -> i32 {
    let paths = match args.paths.is_empty() {
        true => vec![default_replays()],
        false => args.paths.clone(),
    };
    let options = LoadOptions {
        scheduler_config: args.scheduler_config.clone(),
        node_sampling: args.node_sampling,
        kueue_over_time: true,
        ..Default::default()
    };
    let loaded = match super::load_scenarios(&paths, &options) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if let Err(e) = std::fs::create_dir_all(&args.output.out) {
        eprintln!("error: cannot create {}: {e}", args.output.out.display());
        return exit_code::BAD_INPUT;
    }
    // One bar per scenario on a terminal (hidden otherwise: CI logs stay clean).
    let progress = match std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        true => MultiProgress::with_draw_target(ProgressDrawTarget::stderr()),
        false => MultiProgress::with_draw_target(ProgressDrawTarget::hidden()),
    };
    type Replayed = Result<(ReplayReport, Vec<crate::report::ci::Verdict>), String>;
    let results: Vec<Replayed> = loaded
        .scenarios
        .par_iter()
        .filter(|s| s.replay.is_some() || !args.paths.is_empty())
        .map(|s| {
            let report = replay_one(s, args, &progress)?;
            let verdicts = replay::expect::check(s, &report);
            Ok((report, verdicts))
        })
        .collect();
    let mut code = match loaded.errors.is_empty() {
        true => exit_code::SUCCESS,
        false => exit_code::BAD_INPUT,
    };
    let mut reports = Vec::new();
    let mut unmet = 0;
    for r in results {
        match r {
            Ok((report, verdicts)) => {
                for v in verdicts.iter().filter(|v| !v.met()) {
                    unmet += 1;
                    eprintln!("expectation not met: {} ({}, {})", v.title, v.at, v.path);
                    for f in &v.failures {
                        eprintln!("    {f}");
                    }
                }
                reports.push(report)
            }
            Err(e) => {
                eprintln!("error: {e}");
                code = exit_code::BAD_INPUT;
            }
        }
    }
    let json = serde_json::to_string_pretty(&reports).unwrap_or_default() + "\n";
    let table: String = reports.iter().map(ReplayReport::table).collect();
    let written = args.output.emit("replay", &json, &table);
    if written != exit_code::SUCCESS {
        code = written;
    }
    if args.charts
        && let Err(e) = replay::chart::write_replay_charts(&reports, &table, &args.output.out)
    {
        eprintln!("error: cannot write charts: {e}");
        code = exit_code::BAD_INPUT;
    }
    crate::release_at_exit((loaded, reports));
    match (code, unmet) {
        (exit_code::SUCCESS, 1..) => exit_code::EXPECTATIONS_NOT_MET,
        _ => code,
    }
}

/// Replays one scenario, streaming its CSV files.
fn replay_one(
    scenario: &crate::load::Scenario,
    args: &ReplayArgs,
    progress: &MultiProgress,
) -> Result<ReplayReport, String> {
    let out = &args.output.out;
    let series_path = replay::csv_path(out, &scenario.name, "series");
    let open = |path: &PathBuf| {
        AtomicFile::create(path).map_err(|e| format!("cannot write {}: {e}", path.display()))
    };
    let mut pods_csv = match args.pods_csv {
        true => {
            let mut w =
                csv::Writer::from_writer(open(&replay::csv_path(out, &scenario.name, "pods"))?);
            w.write_record(POD_COLUMNS).map_err(|e| e.to_string())?;
            Some(w)
        }
        false => None,
    };
    let mut pod_error: Option<String> = None;
    let mut write_pod = |r: &PodRecord| {
        if let Some(w) = pods_csv.as_mut()
            && let Err(e) = w.write_record(pod_row(r))
        {
            pod_error.get_or_insert(e.to_string());
        }
    };
    let bar = progress.add(replay_bar(scenario));
    let until = scenario.replay.as_ref().and_then(|r| r.until_ms);
    let mut show = |now: u64| {
        bar.set_message(crate::trace::clock::format_duration(now));
        match until {
            Some(_) => bar.set_position(now / 1000),
            None => bar.tick(),
        }
    };
    // A fixed step (`spec.replay.sample`) streams every sample to the CSV as it comes;
    // otherwise the series in memory is written at the end.
    let stream = scenario
        .replay
        .as_ref()
        .is_some_and(|r| r.sample_ms.is_some());
    let mut series = match stream {
        true => {
            let mut w = csv::Writer::from_writer(open(&series_path)?);
            w.write_record(replay::report::series_header(&replay::pools(scenario)))
                .map_err(|e| e.to_string())?;
            Some(w)
        }
        false => None,
    };
    let mut series_error: Option<String> = None;
    let mut write_sample = |s: &replay::metrics::Sample| {
        if let Some(w) = series.as_mut()
            && let Err(e) = w.write_record(replay::report::point_row(&s.into()))
        {
            series_error.get_or_insert(e.to_string());
        }
    };
    let sinks = Sinks {
        // Without `--pods-csv` the replay makes no records.
        pod_record: match args.pods_csv {
            true => Some(&mut write_pod),
            false => None,
        },
        sample: Some(&mut write_sample),
        progress: Some(&mut show),
    };
    let report = replay::replay(scenario, sinks).map_err(|e| e.to_string());
    bar.finish_and_clear();
    let report = report?;
    if let Some(e) = pod_error.or(series_error) {
        return Err(e);
    }
    if let Some(w) = pods_csv {
        let file = w.into_inner().map_err(|e| e.to_string())?;
        file.commit().map_err(|e| e.to_string())?;
    }
    let series = match series {
        Some(w) => w,
        None => {
            let mut w = csv::Writer::from_writer(open(&series_path)?);
            let mut write = || -> Result<(), csv::Error> {
                w.write_record(replay::report::series_header(&report.series.pools))?;
                for p in &report.series.points {
                    w.write_record(replay::report::point_row(p))?;
                }
                Ok(())
            };
            write().map_err(|e| format!("cannot write {}: {e}", series_path.display()))?;
            w
        }
    };
    let file = series.into_inner().map_err(|e| e.to_string())?;
    file.commit()
        .map_err(|e| format!("cannot write {}: {e}", series_path.display()))?;
    Ok(report)
}

const POD_COLUMNS: [&str; 17] = [
    "namespace",
    "name",
    "job",
    "queue",
    "priority",
    "class",
    "gpus",
    "arrival_ms",
    "admitted_ms",
    "first_bind_ms",
    "end_ms",
    "wait_ms",
    "node",
    "attempts",
    "preemptions",
    "state",
    "message",
];

fn pod_row(r: &PodRecord) -> [String; 17] {
    let opt = |v: Option<u64>| v.map_or(String::new(), |v| v.to_string());
    [
        r.namespace.clone(),
        r.name.clone(),
        r.job.clone(),
        r.queue.clone(),
        r.priority.to_string(),
        r.class.clone(),
        r.gpus.to_string(),
        r.arrival.to_string(),
        opt(r.admitted),
        opt(r.first_bind),
        opt(r.end),
        opt(r.first_bind.map(|b| b - r.arrival)),
        r.node.clone().unwrap_or_default(),
        r.attempts.to_string(),
        r.preemptions.to_string(),
        r.state.to_string(),
        r.message.clone().unwrap_or_default(),
    ]
}
