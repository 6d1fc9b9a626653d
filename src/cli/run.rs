//! `schedsim run [PATH…]`: load, schedule every scenario (in parallel), report.

use std::path::PathBuf;

use clap::{Args, ValueEnum};
use rayon::prelude::*;

use crate::error::exit_code;
use crate::load::LoadOptions;
use crate::report::{self, RunReport};
use crate::sched::framework::MessageFormat;

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Table,
    Json,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// Scenario files or folders (default: the bundled scenarios/).
    pub paths: Vec<PathBuf>,
    #[command(flatten)]
    pub output: super::OutputArgs,
    /// Message wording: `current` (Kubernetes ≥ 1.35) or `1.34`.
    #[arg(long, value_enum)]
    pub message_format: Option<MessageFormat>,
    /// A KubeSchedulerConfiguration file whose profiles schedule every scenario, in place of
    /// the scenarios' own (compare LeastAllocated with GPU bin-packing on the same workload).
    #[arg(long, value_name = "FILE")]
    pub scheduler_config: Option<PathBuf>,
    /// `upstream` (default: each cycle samples the nodes as kube-scheduler's
    /// `percentageOfNodesToScore` does) or `all` (every node examined for every pod), in place
    /// of each scenario's `spec.scheduler.nodeSampling`.
    #[arg(long, value_enum, value_name = "MODE")]
    pub node_sampling: Option<crate::sched::sampling::NodeSampling>,
    /// On a terminal, print every row of every table (by default a table stops after 20 rows
    /// and names the file with the rest, `<out>/run.txt`).
    #[arg(long)]
    pub full_table: bool,
    /// List, for each pending pod, the nodes behind each verdict in the JSON report (by
    /// default each verdict gives only its node count, which keeps reports of cluster-sized
    /// runs small).
    #[arg(long)]
    pub node_lists: bool,
    /// Also draw charts (SVG and PNG) into `<out>/<scenario>/` and an `index.html` with the
    /// tables and charts.
    #[arg(long)]
    pub charts: bool,
}

/// The bundled scenarios: `./scenarios` when present, else the source tree's.
pub fn default_scenarios() -> PathBuf {
    let local = PathBuf::from("scenarios");
    if local.is_dir() {
        local
    } else {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios")
    }
}

pub fn run(args: &RunArgs) -> i32 {
    let paths = super::paths_or_default(&args.paths);
    let options = LoadOptions {
        message_format: args.message_format,
        scheduler_config: args.scheduler_config.clone(),
        node_lists: args.node_lists,
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
    let report = RunReport::new(loaded.scenarios.par_iter().map(crate::simulate).collect());
    let json = report::to_json(&report);
    let table = report::table::render(&report);
    let full = args.output.out.join("run.txt");
    let summary = || report::table::render_summary(&report, &full.display().to_string());
    let summary = (!args.full_table).then_some(&summary as &dyn Fn() -> String);
    let mut written = args.output.emit_with_summary("run", &json, &table, summary);
    if args.charts {
        let scenarios: Vec<_> = loaded.scenarios.iter().zip(&report.scenarios).collect();
        let pages = crate::explain::write_pending_pages(&scenarios, &args.output.out);
        if let Err(e) = pages.and_then(|explained| {
            report::chart::write_all(&scenarios, &table, &args.output.out, &explained)
        }) {
            eprintln!("error: cannot write charts: {e}");
            written = exit_code::BAD_INPUT;
        }
    }
    let code = if loaded.errors.is_empty() {
        written
    } else {
        exit_code::BAD_INPUT
    };
    crate::release_at_exit((loaded, report));
    code
}
