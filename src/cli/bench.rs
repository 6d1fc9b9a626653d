//! `schedsim bench`: time the scheduler on a synthetic GPU cluster (or on scenario files) and
//! report pods/s and peak memory. Single-threaded per scenario, as kube-scheduler schedules.

use std::path::PathBuf;

use clap::Args;

use crate::bench::{self, BenchResult};
use crate::error::exit_code;
use crate::load::{self, LoadOptions};
use crate::sched::SchedulerConfig;

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Scenario files or folders to time instead of the synthetic cluster.
    pub paths: Vec<PathBuf>,
    /// Synthetic cluster: number of nodes.
    #[arg(long, default_value_t = 5000)]
    pub nodes: usize,
    /// Synthetic cluster: number of pods.
    #[arg(long, default_value_t = 10000)]
    pub pods: usize,
    /// Synthetic cluster: number of distinct pod templates.
    #[arg(long, default_value_t = 20)]
    pub templates: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Print JSON instead of a line per run.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &BenchArgs) -> i32 {
    let mut results: Vec<BenchResult> = Vec::new();
    let mut code = exit_code::SUCCESS;
    if args.paths.is_empty() {
        let nodes = bench::nodes(args.nodes);
        let pods = bench::pods(args.pods, args.templates.max(1), args.seed);
        let config = SchedulerConfig {
            seed: args.seed,
            ..Default::default()
        };
        let name = format!(
            "synthetic {} nodes x {} pods, {} templates",
            args.nodes, args.pods, args.templates
        );
        let steps = crate::sched::plan::in_order(pods.len());
        results.push(bench::measure(&name, nodes, &[], &pods, &steps, &config));
    } else {
        let files = match load::scenario_files(&args.paths) {
            Ok(f) => f,
            Err(e) => {
                eprintln!("error: {e}");
                return exit_code::BAD_INPUT;
            }
        };
        let loaded = load::load_files(&files, &LoadOptions::default());
        for e in &loaded.errors {
            eprintln!("error: {e}");
            code = exit_code::BAD_INPUT;
        }
        for s in &loaded.scenarios {
            results.push(bench::measure(
                &s.name,
                s.nodes.clone(),
                &s.existing_pods,
                &s.workloads,
                &s.steps,
                &s.config,
            ));
        }
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&results).expect("serializes")
        );
    } else {
        for r in &results {
            println!(
                "{}: {} pods on {} nodes ({} scheduled, {} pending) in {:.3} s = {:.0} pods/s, peak RSS {}",
                r.name,
                r.pods,
                r.nodes,
                r.scheduled,
                r.pending,
                r.seconds,
                r.pods_per_second,
                r.peak_rss_mib
                    .map_or("n/a".to_string(), |m| format!("{m:.0} MiB"))
            );
        }
    }
    code
}
