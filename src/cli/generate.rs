//! `schedsim generate`: write the benchmark cluster as the files users have (one Scenario
//! file, `kubectl get nodes -o yaml|json` dumps, pod files), so every whole-process figure
//! can be reproduced with one command.

use std::path::PathBuf;

use clap::Args;

use crate::error::exit_code;
use crate::generate::{Cluster, KueueBench, write_all, write_dra};

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
    /// ClusterQueues in `kueue-scenario.yaml`, split over two cohorts.
    #[arg(long, default_value_t = 20)]
    pub kueue_queues: usize,
    /// Write only `dra-scenario.yaml`: `--nodes` GPU nodes (half A100, half H100) each with
    /// the ResourceSlice NVIDIA's DRA driver publishes, and `--pods` pods each claiming GPUs
    /// through a ResourceClaimTemplate that selects by CEL.
    #[arg(long)]
    pub dra: bool,
}

pub fn run(args: &GenerateArgs) -> i32 {
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
