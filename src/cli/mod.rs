//! The command line: one module per subcommand.

pub mod bench;
pub mod check;
pub mod completions;
pub mod explain;
pub mod fgd;
pub mod generate;
pub mod migrate;
pub mod plan;
pub mod replay;
pub mod resolve;
pub mod run;
pub mod sweep;

use clap::{Parser, Subcommand};

use crate::error::exit_code;
use crate::limits;

#[derive(Debug, Parser)]
#[command(
    name = "schedsim",
    version,
    about = "Simulates kube-scheduler placement of GPU training pods, and what pod-template overrides do to it"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Let scenarios read files anywhere: by default a `file:` reference must stay inside the
    /// scenario's folder tree or the working directory (symlinks resolved), since scenario
    /// files may come from pull requests.
    #[arg(long, global = true)]
    pub allow_any_path: bool,
}

/// What `schedsim schema` describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum SchemaOf {
    /// The Scenario input format.
    Scenario,
    /// `schedsim explain`'s `explain.json`.
    Explain,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Schedule the workloads of scenario files and report placement and pending reasons.
    Run(run::RunArgs),
    /// Time the scheduler (synthetic GPU cluster or scenario files): pods/s and peak memory.
    Bench(bench::BenchArgs),
    /// Show the pods each TrainJob becomes: per replicated job the pod count and the resolved
    /// pod template, with `--explain` where every field came from.
    Resolve(resolve::ResolveArgs),
    /// Rewrite `podTemplateOverrides` (Trainer v2.1) as an equivalent `runtimePatches` entry.
    Migrate(migrate::MigrateArgs),
    /// Run every variant of the scenarios × seeds (shuffles, node failures, pool jitter) in
    /// parallel and aggregate: placement probability, pending pods, GPU allocation and
    /// fragmentation, pending reasons; a scenario with `spec.replay` is replayed in each run,
    /// and its waits, jobs finished and GPU time aggregated.
    Sweep(sweep::SweepArgs),
    /// Replay scenarios over time (`spec.replay`): arrivals, run durations, kube-scheduler's
    /// queue with backoff and requeueing; report waits, GPU time and a time series.
    Replay(replay::ReplayArgs),
    /// The FGD paper's GPU-sharing experiment: pod lists × scoring policies (Random, DotProd,
    /// GpuClustering, GpuPacking, BestFit, FGD) × seeds on the openb cluster, written as the
    /// reference simulator's allocation and fragmentation CSVs.
    Fgd(fgd::FgdArgs),
    /// The cheapest nodes to add for a goal (`spec.plan`: candidate node types with prices
    /// and bounds; every pod placed, named workloads placed, at most N pending, GPU
    /// allocation): searched in order of cost with the exact simulator, per candidate alone
    /// and mixed, with the cost frontier and why one node fewer misses the goal.
    Plan(plan::PlanArgs),
    /// Why pods landed where they did, or pend: for chosen pods (by name, workload, or every
    /// pending one) their last cycle node by node — each node's first failing Filter plugin,
    /// each scored node's score per Score plugin (raw, normalized, weight), the ranking, the
    /// tie the seeded pick broke, and `--node` set beside the chosen node.
    Explain(explain::ExplainArgs),
    /// Combine the JSON outputs of `sweep --shard I/N` runs into the sweep's aggregates.
    Merge(sweep::MergeArgs),
    /// Run the scenarios and enforce their `spec.expect` (exit 1 when one is unmet); writes
    /// JUnit XML, a Markdown summary and a CSV of placements.
    Check(check::CheckArgs),
    /// Write the benchmark cluster as input files: one Scenario file, `kubectl get nodes -o
    /// yaml|json` dumps, pod files (List, one document per pod, YAML anchors), and scenarios
    /// that load them.
    Generate(generate::GenerateArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(completions::CompletionsArgs),
    /// Print the JSON Schema of the Scenario format (editors validate and complete with it),
    /// or of an output (`schedsim schema explain`: `explain.json`).
    Schema {
        #[arg(value_enum, default_value_t = SchemaOf::Scenario)]
        of: SchemaOf,
    },
}

/// Where a command's reports go and what it prints.
#[derive(Debug, clap::Args)]
pub struct OutputArgs {
    /// Output format on stdout (default: table on a terminal, json otherwise).
    #[arg(long, value_enum)]
    pub format: Option<run::Format>,
    /// Folder for report files (created if missing).
    #[arg(long, default_value = "reports")]
    pub out: std::path::PathBuf,
}

impl OutputArgs {
    /// Writes `<stem>.json` and `<stem>.txt` atomically into the folder and prints one of
    /// them; the exit code is `BAD_INPUT` when a file could not be written.
    pub fn emit(&self, stem: &str, json: &str, table: &str) -> i32 {
        self.emit_with_summary(stem, json, table, None)
    }

    /// As [`emit`](Self::emit); a terminal gets the table `summary` makes instead of the
    /// full table when one is given (the full table is in `<stem>.txt`). It is made only
    /// then: a summary of a cluster-sized run is a pass over every row of the report.
    pub fn emit_with_summary(
        &self,
        stem: &str,
        json: &str,
        table: &str,
        summary: Option<&dyn Fn() -> String>,
    ) -> i32 {
        use crate::error::terminal_safe;
        use std::io::{IsTerminal, Write};
        let table = terminal_safe(table);
        let table = table.as_ref();
        let mut code = crate::error::exit_code::SUCCESS;
        for (ext, contents) in [("json", json), ("txt", table)] {
            let path = self.out.join(format!("{stem}.{ext}"));
            if let Err(e) = crate::report::write_atomic(&path, contents.as_bytes()) {
                eprintln!("error: cannot write {}: {e}", path.display());
                code = crate::error::exit_code::BAD_INPUT;
            }
        }
        let terminal = std::io::stdout().is_terminal();
        let format = self.format.unwrap_or(if terminal {
            run::Format::Table
        } else {
            run::Format::Json
        });
        let made: String;
        let text = match (format, summary) {
            (run::Format::Table, Some(make)) if terminal => {
                made = terminal_safe(&make()).into_owned();
                &made
            }
            (run::Format::Table, _) => table,
            (run::Format::Json, _) => json,
        };
        let _ = std::io::stdout().lock().write_all(text.as_bytes());
        code
    }
}

/// The bundled scenarios that are replays (`scenarios/replay/`) are for `schedsim replay`:
/// `run` and `check` on the bundled folder leave them out.
pub fn leave_out_replays(loaded: &mut crate::load::Loaded) {
    loaded.scenarios.retain(|s| s.replay.is_none());
}

/// Loads the scenarios under `paths`, printing every load error; `Err(exit code)` when the
/// paths themselves are wrong.
/// The paths given, or the bundled scenarios when none is.
pub fn paths_or_default(paths: &[std::path::PathBuf]) -> Vec<std::path::PathBuf> {
    match paths.is_empty() {
        true => vec![run::default_scenarios()],
        false => paths.to_vec(),
    }
}

/// The scenario files of the paths given (the bundled scenarios when none is), or exit code 2
/// with the error said.
pub fn scenario_files_or_exit(
    paths: &[std::path::PathBuf],
) -> Result<Vec<std::path::PathBuf>, i32> {
    crate::load::scenario_files(&paths_or_default(paths)).map_err(|e| {
        eprintln!("error: {e}");
        exit_code::BAD_INPUT
    })
}

pub fn load_scenarios(
    paths: &[std::path::PathBuf],
    options: &crate::load::LoadOptions,
) -> Result<crate::load::Loaded, i32> {
    let files = crate::load::scenario_files(paths).map_err(|e| {
        eprintln!("error: {e}");
        crate::error::exit_code::BAD_INPUT
    })?;
    let loaded = crate::load::load_files(&files, options);
    for e in &loaded.errors {
        eprintln!("error: {e}");
    }
    Ok(loaded)
}

/// Counts typed on the command line that size a synthetic cluster (`bench`, `generate`):
/// refused up front, past the limits a scenario of that size would meet, before anything is
/// built. `what` names each count as the user typed it (`--nodes 2000000`).
pub fn check_synthetic_counts(nodes: (&str, u64), pods: (&str, u64)) -> Result<(), i32> {
    for (limit, (what, count)) in [(limits::NODES, nodes), (limits::PODS, pods)] {
        if limit.exceeded_by(count) {
            eprintln!("error: {}", limit.message(what));
            return Err(exit_code::BAD_INPUT);
        }
    }
    Ok(())
}

/// Runs the parsed command; returns the process exit code.
pub fn main(cli: Cli) -> i32 {
    crate::load::paths::set_allow_any_path(cli.allow_any_path);
    match cli.command {
        Command::Run(args) => run::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Resolve(args) => resolve::run(&args),
        Command::Migrate(args) => migrate::run(&args),
        Command::Sweep(args) => sweep::run(&args),
        Command::Merge(args) => sweep::merge(&args),
        Command::Replay(args) => replay::run(&args),
        Command::Fgd(args) => fgd::run(&args),
        Command::Plan(args) => plan::run(&args),
        Command::Explain(args) => explain::run(&args),
        Command::Check(args) => check::run(&args),
        Command::Completions(args) => completions::run(&args),
        Command::Generate(args) => generate::run(&args),
        Command::Schema { of } => {
            match of {
                SchemaOf::Scenario => print!("{}", crate::load::scenario::schema_json()),
                SchemaOf::Explain => print!("{}", crate::explain::report::schema_json()),
            }
            crate::error::exit_code::SUCCESS
        }
    }
}
