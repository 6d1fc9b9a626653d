//! `schedsim generate`: write the benchmark cluster as the files users have (one Scenario
//! file, `kubectl get nodes -o yaml|json` dumps, pod files), so every whole-process figure
//! can be reproduced with one command; `--trace` writes the synthetic replay trace.

use std::path::PathBuf;

use clap::Args;

use crate::error::exit_code;
use crate::generate::trace::{TraceBench, TracePlan};
use crate::generate::{Cluster, KueueBench, write_all, write_dra, write_trace};

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// Folder to write the files into (created if missing).
    #[arg(long, default_value = "bench-inputs")]
    pub out: PathBuf,
    #[arg(long, default_value_t = 5000)]
    pub nodes: usize,
    #[arg(long, default_value_t = 10000)]
    pub pods: usize,
    /// Distinct pod templates (as `schedsim bench --templates`).
    #[arg(long, default_value_t = 20)]
    pub templates: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// TrainJobs (four pods each) in `kueue-scenario.yaml`.
    #[arg(long, default_value_t = 10000)]
    pub kueue_jobs: usize,
    /// ClusterQueues in `kueue-scenario.yaml` (and the trace's queues with `--trace`), split
    /// over two cohorts.
    #[arg(long, default_value_t = 20)]
    pub kueue_queues: usize,
    /// Write only `dra-scenario.yaml`: `--nodes` GPU nodes (half A100, half H100) each with
    /// the ResourceSlice NVIDIA's DRA driver publishes, and `--pods` pods each claiming GPUs
    /// through a ResourceClaimTemplate that selects by CEL.
    #[arg(long)]
    pub dra: bool,
    /// Write only the synthetic replay trace: `trace.csv` (a row per job: 1/2/4/8-GPU pods and
    /// gangs of 8-GPU pods, Poisson arrivals with a daily and weekly cycle, log-normal run
    /// times, `--kueue-queues` queues) and `trace-scenario.yaml` (the `--nodes` cluster behind
    /// Kueue, replaying it).
    #[arg(long)]
    pub trace: bool,
    /// Pods in the trace (a gang's row counts its pods).
    #[arg(long, default_value_t = 1_000_000)]
    pub trace_pods: u64,
    /// Days the trace's arrivals span.
    #[arg(long, default_value_t = 30, value_parser = clap::value_parser!(u32).range(1..=3650))]
    pub trace_days: u32,
    /// GPU time the trace asks for, in percent of the cluster's GPUs over its days (run times
    /// are scaled to it).
    #[arg(long, default_value_t = 75, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub trace_load: u32,
}

pub fn run(args: &GenerateArgs) -> i32 {
    if args.trace {
        return trace(args);
    }
    // The Kueue scenario's TrainJobs have four pods each.
    let (pods, jobs) = (args.pods as u64, args.kueue_jobs as u64);
    let (what, most) = match args.dra || pods >= jobs.saturating_mul(4) {
        true => (format!("--pods {pods}"), pods),
        false => (
            format!("--kueue-jobs {jobs} (four pods each)"),
            jobs.saturating_mul(4),
        ),
    };
    let nodes = format!("--nodes {}", args.nodes);
    if let Err(code) = super::check_synthetic_counts((&nodes, args.nodes as u64), (&what, most)) {
        return code;
    }
    let written = if args.dra {
        write_dra(args.nodes, args.pods, args.seed, &args.out)
    } else {
        let cluster = Cluster::new(args.nodes, args.pods, args.templates, args.seed);
        let kueue = KueueBench {
            jobs: args.kueue_jobs,
            queues: args.kueue_queues,
            seed: args.seed,
        };
        write_all(&cluster, &kueue, &args.out)
    };
    report(args, written)
}

/// Prints the files written, or the error.
fn report(args: &GenerateArgs, written: std::io::Result<Vec<(String, u64)>>) -> i32 {
    match written {
        Ok(files) => {
            for (file, bytes) in files {
                println!(
                    "{} ({:.1} MB)",
                    args.out.join(file).display(),
                    bytes as f64 / 1e6
                );
            }
            exit_code::SUCCESS
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {e}", args.out.display());
            exit_code::BAD_INPUT
        }
    }
}

/// `--trace`: the synthetic replay trace and its scenario, with a line saying what it holds.
fn trace(args: &GenerateArgs) -> i32 {
    let nodes = format!("--nodes {}", args.nodes);
    let pods = format!("--trace-pods {}", args.trace_pods);
    let counts = (
        (nodes.as_str(), args.nodes as u64),
        (pods.as_str(), args.trace_pods),
    );
    if let Err(code) = super::check_synthetic_counts(counts.0, counts.1) {
        return code;
    }
    let cluster = crate::bench::nodes(args.nodes);
    let bench = TraceBench {
        pods: args.trace_pods,
        days: args.trace_days,
        queues: args.kueue_queues,
        load_percent: args.trace_load,
        seed: args.seed,
    };
    let plan = match TracePlan::new(&cluster, &bench) {
        Ok(plan) => plan,
        Err(message) => {
            eprintln!("error: {message}");
            return exit_code::BAD_INPUT;
        }
    };
    let written = write_trace(&cluster, &plan, &args.out);
    let summary = written.as_ref().ok().map(|(_, s)| *s);
    let code = report(args, written.map(|(files, _)| files));
    if let Some(s) = summary {
        println!(
            "{} jobs, {} pods over {} days; GPU time asked for: {:.1}% of {} GPUs",
            s.jobs,
            s.pods,
            args.trace_days,
            100.0 * s.demand(),
            s.gpus
        );
    }
    code
}
