//! The command line: one module per subcommand.

pub mod bench;
pub mod migrate;
pub mod resolve;
pub mod run;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "schedsim",
    version,
    about = "Simulates kube-scheduler placement of GPU training pods, and what pod-template overrides do to it"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
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
}

/// Loads the scenarios under `paths`, printing every load error; `Err(exit code)` when the
/// paths themselves are wrong.
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

/// Runs the parsed command; returns the process exit code.
pub fn main(cli: Cli) -> i32 {
    match cli.command {
        Command::Run(args) => run::run(&args),
        Command::Bench(args) => bench::run(&args),
        Command::Resolve(args) => resolve::run(&args),
        Command::Migrate(args) => migrate::run(&args),
    }
}
