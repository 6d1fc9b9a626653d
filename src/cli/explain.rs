//! `schedsim explain`: what chosen pods' last scheduling cycles saw, node by node
//! (`crate::explain`).

use std::path::PathBuf;

use clap::Args;

use super::OutputArgs;
use crate::error::exit_code;
use crate::explain::{self, Ask, ExplainReport};
use crate::load::LoadOptions;

#[derive(Debug, Args)]
pub struct ExplainArgs {
    /// Scenario files or folders (default: the bundled `scenarios/`).
    pub paths: Vec<PathBuf>,
    /// A pod to explain, `namespace/name` (repeatable).
    #[arg(long = "pod")]
    pub pods: Vec<String>,
    /// Every pod of a workload (TrainJob, Job, Determined task …), `namespace/name`
    /// (repeatable).
    #[arg(long = "workload")]
    pub workloads: Vec<String>,
    /// Every pod whose labels match this selector, as `kubectl -l` takes one
    /// (`app=web,tier in (gpu)`).
    #[arg(long, short = 'l')]
    pub selector: Option<String>,
    /// Every pod the run leaves unscheduled (the default when no pod, workload or selector
    /// is given).
    #[arg(long)]
    pub pending: bool,
    /// Scored nodes listed per pod, best first; the others are counted.
    #[arg(long, default_value_t = 10)]
    pub top: usize,
    /// List every node: its verdict and scores.
    #[arg(long)]
    pub all_nodes: bool,
    /// A node to set beside the chosen one, plugin by plugin ("why not there"; repeatable).
    #[arg(long = "node")]
    pub nodes: Vec<String>,
    /// On a terminal, print every pod (by default the first 10, and the file with the rest,
    /// `<out>/explain.txt`).
    #[arg(long)]
    pub full_table: bool,
    /// Also write one self-contained page per scenario (`<out>/explain-<scenario>.html`,
    /// sortable tables) and `<out>/explain.html`, which links them.
    #[arg(long)]
    pub html: bool,
    #[command(flatten)]
    pub output: OutputArgs,
}

pub fn run(args: &ExplainArgs) -> i32 {
    let selector = match args
        .selector
        .as_deref()
        .map(explain::selector::Selector::parse)
    {
        Some(Err(e)) => {
            eprintln!("error: --selector {e}");
            return exit_code::BAD_INPUT;
        }
        Some(Ok(s)) => Some(s),
        None => None,
    };
    let mut loaded = match super::load_scenarios(
        &super::paths_or_default(&args.paths),
        &LoadOptions::default(),
    ) {
        Ok(l) => l,
        Err(code) => return code,
    };
    // A replay's pods come from its trace, over time: `schedsim replay` schedules them.
    for s in loaded.scenarios.iter().filter(|s| s.replay.is_some()) {
        if !args.paths.is_empty() {
            eprintln!(
                "warning: {} ({}) replays a trace over time (spec.replay); explain leaves it out: `schedsim replay` runs it",
                s.name,
                s.file.display()
            );
        }
    }
    super::leave_out_replays(&mut loaded);
    let named = !args.pods.is_empty() || !args.workloads.is_empty() || selector.is_some();
    let ask = Ask {
        pods: args.pods.clone(),
        workloads: args.workloads.clone(),
        selector,
        pending: args.pending || !named,
        top: args.top,
        all_nodes: args.all_nodes,
        nodes: args.nodes.clone(),
    };
    let scenarios = match (loaded.scenarios.iter())
        .map(|s| explain::explain(s, &ask))
        .collect::<Result<Vec<_>, String>>()
    {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return exit_code::BAD_INPUT;
        }
    };
    let report = ExplainReport {
        schema_version: explain::report::SCHEMA_VERSION,
        scenarios,
    };
    let asked: Vec<&String> = (args.pods.iter().chain(&args.workloads))
        .filter(|key| !named_anywhere(&loaded.scenarios, key))
        .collect();
    for key in &asked {
        eprintln!("warning: no pod or workload {key:?} in the scenarios");
    }
    // A node asked about that no cycle could set beside the chosen one: a typo, most often.
    for node in &args.nodes {
        let listed = (report.scenarios.iter().flat_map(|s| &s.pods))
            .filter_map(|p| p.cycle.as_ref())
            .any(|c| c.compared.iter().any(|cmp| &cmp.node == node));
        let exists = (loaded.scenarios.iter()).any(|s| s.nodes.iter().any(|n| &n.name == node));
        if !listed && !exists {
            eprintln!("warning: no node {node:?} in the scenarios");
        }
    }
    let json = serde_json::to_string_pretty(&report).expect("explanations serialize");
    let full = args.output.out.join("explain.txt");
    let summary = || explain::report::render_summary(&report, &full.display().to_string());
    let summary = (!args.full_table).then_some(&summary as &dyn Fn() -> String);
    let mut code = args.output.emit_with_summary(
        "explain",
        &(json + "\n"),
        &explain::report::render(&report),
        summary,
    );
    if args.html
        && let Err(e) = explain::html::write_pages(&report, &args.output.out)
    {
        eprintln!("error: cannot write the pages: {e}");
        code = exit_code::BAD_INPUT;
    }
    match loaded.errors.is_empty() {
        true => code,
        false => exit_code::BAD_INPUT,
    }
}

/// Whether some scenario has a workload pod or workload `namespace/name`.
fn named_anywhere(scenarios: &[crate::load::Scenario], key: &str) -> bool {
    (scenarios.iter().flat_map(|s| &s.workloads)).any(|p| {
        p.key() == key
            || (p.workload.as_ref()).is_some_and(|w| format!("{}/{w}", p.namespace) == key)
    })
}
