//! `schedsim check [PATH…]`: run the scenarios and enforce their `spec.expect`. Exit 0 when
//! every expectation is met, 1 when one is not (each failure says expected and actual), 2 on
//! bad input. Writes `check.junit.xml`, `check.md` and `placements.csv` into `--out`.

use std::path::PathBuf;

use clap::Args;
use rayon::prelude::*;

use crate::error::exit_code;
use crate::load::LoadOptions;
use crate::report::{self, ScenarioReport, ci};

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Scenario files or folders (default: the bundled scenarios/).
    pub paths: Vec<PathBuf>,
    /// Folder for report files (created if missing).
    #[arg(long, default_value = "reports")]
    pub out: PathBuf,
    /// A KubeSchedulerConfiguration for every scenario, in place of their own.
    #[arg(long, value_name = "FILE")]
    pub scheduler_config: Option<PathBuf>,
    /// `upstream` (default: each cycle samples the nodes as kube-scheduler's
    /// `percentageOfNodesToScore` does) or `all` (every node examined for every pod), in place
    /// of each scenario's `spec.scheduler.nodeSampling`.
    #[arg(long, value_enum, value_name = "MODE")]
    pub node_sampling: Option<crate::sched::sampling::NodeSampling>,
    /// Rewrite every scenario's `spec.expect` from its actual outcome (each pod's status and
    /// pool, node or message; the pending count), keeping the rest of each file as it is.
    #[arg(long)]
    pub bless: bool,
}

pub fn run(args: &CheckArgs) -> i32 {
    let paths = super::paths_or_default(&args.paths);
    let options = LoadOptions {
        scheduler_config: args.scheduler_config.clone(),
        node_sampling: args.node_sampling,
        ..Default::default()
    };
    let mut loaded = match super::load_scenarios(&paths, &options) {
        Ok(l) => l,
        Err(code) => return code,
    };
    if args.paths.is_empty() {
        super::leave_out_replays(&mut loaded);
    }
    let reports: Vec<ScenarioReport> = loaded.scenarios.par_iter().map(crate::simulate).collect();
    if args.bless {
        return bless(&loaded, &reports);
    }
    let checked: Vec<(&ScenarioReport, Vec<crate::report::ci::Verdict>)> = loaded
        .scenarios
        .par_iter()
        .zip(&reports)
        .map(|(s, r)| {
            let mut verdicts = crate::check::check(s, r);
            verdicts.extend(replay_verdicts(s, &options));
            (r, verdicts)
        })
        .collect();
    let (mut total, mut failed) = (0, 0);
    for (r, verdicts) in &checked {
        if verdicts.is_empty() {
            continue;
        }
        let unmet = verdicts.iter().filter(|v| !v.met()).count();
        total += verdicts.len();
        failed += unmet;
        println!(
            "{} {} ({}): {} expectation(s), {} unmet",
            if unmet == 0 { "ok  " } else { "FAIL" },
            r.name,
            r.file,
            verdicts.len(),
            unmet
        );
        for v in verdicts.iter().filter(|v| !v.met()) {
            println!("  ✗ {} ({}, {})", v.title, v.at, v.path);
            for f in &v.failures {
                println!("      {f}");
            }
        }
    }
    println!("{} of {total} expectation(s) met", total - failed);
    let mut code = exit_code::SUCCESS;
    let all: Vec<&ScenarioReport> = reports.iter().collect();
    for (name, contents) in [
        ("check.junit.xml", ci::junit(&checked)),
        ("check.md", ci::markdown(&checked)),
        ("placements.csv", ci::placements_csv(&all)),
    ] {
        if let Err(e) = report::write_atomic(&args.out.join(name), contents.as_bytes()) {
            eprintln!("error: cannot write {}: {e}", args.out.join(name).display());
            code = exit_code::BAD_INPUT;
        }
    }
    if !loaded.errors.is_empty() || code != exit_code::SUCCESS {
        exit_code::BAD_INPUT
    } else if failed > 0 {
        exit_code::EXPECTATIONS_NOT_MET
    } else {
        exit_code::SUCCESS
    }
}

/// A replay's expectations (`spec.expect[].replay`, those not restricted to sweep variants),
/// checked by replaying the scenario; a replay that cannot run fails each of them with its
/// error.
/// A scenario whose Kueue workloads a snapshot admission decided at load is loaded again, as
/// `schedsim replay` loads it, for Kueue to admit them over time.
fn replay_verdicts(
    scenario: &crate::load::Scenario,
    options: &LoadOptions,
) -> Vec<crate::report::ci::Verdict> {
    let checked =
        |e: &&crate::load::expect::Expectation| e.spec.replay.is_some() && e.spec.variant.is_none();
    if !scenario.expectations.iter().any(|e| checked(&e)) {
        return Vec::new();
    }
    let queued = (scenario.kueue.as_ref()).is_some_and(|k| !k.workloads.is_empty());
    let reloaded = queued.then(|| {
        let options = LoadOptions {
            kueue_over_time: true,
            ..options.clone()
        };
        let loaded = crate::load::load_files(std::slice::from_ref(&scenario.file), &options);
        (loaded.scenarios.into_iter()).find(|s| s.name == scenario.name)
    });
    let scenario = match &reloaded {
        Some(Some(s)) => s,
        _ => scenario,
    };
    match crate::replay::replay(scenario, crate::replay::Sinks::default()) {
        Ok(report) => crate::replay::expect::check(scenario, &report),
        Err(e) => (scenario.expectations.iter())
            .filter(checked)
            .map(|x| crate::report::ci::Verdict {
                title: x.title(),
                path: x.path.clone(),
                at: x.at.clone(),
                failures: vec![format!("the replay failed: {e}")],
            })
            .collect(),
    }
}

/// Rewrites the expectations of every scenario file from its outcomes; refuses when a scenario
/// did not load (its file's documents would not line up with the outcomes).
fn bless(loaded: &crate::load::Loaded, reports: &[ScenarioReport]) -> i32 {
    if !loaded.errors.is_empty() {
        eprintln!("error: not blessing: fix the errors above first");
        return exit_code::BAD_INPUT;
    }
    let mut files: Vec<(
        &std::path::Path,
        Vec<(&crate::load::Scenario, &ScenarioReport)>,
    )> = Vec::new();
    let mut code = exit_code::SUCCESS;
    for (s, r) in loaded.scenarios.iter().zip(reports) {
        // Bless writes a snapshot's expectations; a replay's limits are a planner's choice.
        if s.expectations.iter().any(|e| e.spec.replay.is_some()) {
            eprintln!(
                "error: not blessing {}: scenario {} has replay expectations (spec.expect[].replay), which bless would drop; edit them by hand",
                s.file.display(),
                s.name
            );
            code = exit_code::BAD_INPUT;
            files.retain(|(f, _)| *f != s.file.as_path());
            continue;
        }
        match files.iter_mut().find(|(f, _)| *f == s.file.as_path()) {
            Some((_, list)) => list.push((s, r)),
            None => files.push((s.file.as_path(), vec![(s, r)])),
        }
    }
    for (file, outcomes) in files {
        match crate::check::bless::bless_file(file, &outcomes) {
            Ok(()) => println!(
                "blessed {} ({} scenario(s))",
                file.display(),
                outcomes.len()
            ),
            Err(e) => {
                eprintln!("error: {e}");
                code = exit_code::BAD_INPUT;
            }
        }
    }
    code
}
