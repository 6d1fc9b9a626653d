//! `schedsim plan`: the cheapest nodes to add to each scenario with `spec.plan` for its goal
//! (`crate::plan`).

use std::path::PathBuf;

use clap::Args;

use super::OutputArgs;
use crate::error::exit_code;
use crate::load::LoadOptions;
use crate::load::plan::PlanLoader;
use crate::plan::{self, SearchOptions};

#[derive(Debug, Args)]
pub struct PlanArgs {
    /// Scenario files or folders (default: the bundled `scenarios/`); those with
    /// `spec.plan` are planned.
    pub paths: Vec<PathBuf>,
    /// Points (counts of added nodes) simulated at most per scenario; each is one whole run.
    #[arg(long, default_value_t = SearchOptions::default().max_evaluations)]
    pub max_evaluations: usize,
    /// Also draw charts (SVG and PNG) into `<out>/<scenario>-plan/` — the cost frontier beside
    /// every simulated point, pending pods per candidate alone, the nodes of each removal
    /// group that can go — and `<out>/plan.html` with the tables and charts.
    #[arg(long)]
    pub charts: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn run(args: &PlanArgs) -> i32 {
    let paths = super::paths_or_default(&args.paths);
    let files = match super::scenario_files_or_exit(&paths) {
        Ok(f) => f,
        Err(code) => return code,
    };
    let limit = crate::limits::PLAN_EVALUATIONS;
    if limit.exceeded_by(args.max_evaluations as u64) {
        let asked = format!("--max-evaluations {}", args.max_evaluations);
        eprintln!("error: {}", limit.message(asked));
        return exit_code::BAD_INPUT;
    }
    let options = LoadOptions::default();
    let mut loader = PlanLoader::new(&options);
    let (targets, mut errors) = loader.targets(&files);
    let search = SearchOptions {
        max_evaluations: args.max_evaluations,
    };
    let mut reports = Vec::new();
    let mut specs = Vec::new();
    for target in &targets {
        match plan::plan(&mut loader, target, search) {
            Ok(r) => {
                reports.push(r);
                specs.push(&target.spec);
            }
            Err(mut e) => errors.append(&mut e),
        }
    }
    for e in &errors {
        eprintln!("error: {e}");
    }
    if targets.is_empty() && errors.is_empty() {
        eprintln!(
            "error: no scenario with spec.plan in {}",
            paths
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
        return exit_code::BAD_INPUT;
    }
    let json = serde_json::to_string_pretty(&serde_json::json!({ "plans": reports }))
        .expect("plan reports serialize");
    let table = plan::report::render(&reports);
    let mut code = args.output.emit("plan", &(json + "\n"), &table);
    let pairs: Vec<_> = reports.iter().zip(specs).collect();
    if args.charts
        && let Err(e) = plan::chart::write_plan_charts(&pairs, &table, &args.output.out)
    {
        eprintln!("error: cannot write charts: {e}");
        code = exit_code::BAD_INPUT;
    }
    if !errors.is_empty() {
        return exit_code::BAD_INPUT;
    }
    match (code, reports.iter().any(|r| !r.unmet.is_empty())) {
        (exit_code::SUCCESS, true) => exit_code::EXPECTATIONS_NOT_MET,
        _ => code,
    }
}
