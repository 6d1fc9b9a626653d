//! `schedsim bench`: time the scheduler on a synthetic GPU cluster (or on scenario files) and
//! report pods/s and peak memory. Single-threaded per scenario, as kube-scheduler schedules.

use std::path::PathBuf;

use clap::Args;

use crate::bench::{self, BenchResult};
use crate::error::exit_code;
use crate::load::LoadOptions;
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
    /// Instead of scheduling, resolve this many TrainJobs (three overrides each) against the
    /// shipped Kubeflow runtimes in `fixtures/runtimes/`.
    #[arg(long)]
    pub resolve: Option<usize>,
    /// Synthetic cluster: every pod has required anti-affinity to its template's pods on the
    /// same host and a preferred (ScheduleAnyway) zone spread over them.
    #[arg(long)]
    pub anti_affinity: bool,
    /// Synthetic DRA cluster instead (`generate --dra`'s `dra-scenario.yaml`, loaded as a user
    /// would): `--nodes` GPU nodes with 8 GPUs each published in ResourceSlices, `--pods` pods
    /// each claiming GPUs through a ResourceClaimTemplate with a CEL selector.
    #[arg(long)]
    pub dra: bool,
    /// Print JSON instead of a line per run.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: &BenchArgs) -> i32 {
    if let Some(count) = args.resolve {
        // Each TrainJob makes a few pods; the pod limit bounds them as a scenario's.
        let what = format!("--resolve {count}");
        if let Err(code) = super::check_synthetic_counts(("", 0), (&what, count as u64)) {
            return code;
        }
        return resolve(count, args.seed);
    }
    if args.paths.is_empty() {
        let (nodes, pods) = (
            format!("--nodes {}", args.nodes),
            format!("--pods {}", args.pods),
        );
        let counts = (
            (nodes.as_str(), args.nodes as u64),
            (pods.as_str(), args.pods as u64),
        );
        if let Err(code) = super::check_synthetic_counts(counts.0, counts.1) {
            return code;
        }
    }
    let mut results: Vec<BenchResult> = Vec::new();
    let mut code = exit_code::SUCCESS;
    if args.dra && args.paths.is_empty() {
        match dra(args) {
            Ok(r) => results.push(r),
            Err(code) => return code,
        }
    } else if args.paths.is_empty() {
        let nodes = bench::nodes(args.nodes);
        let mut pods = bench::pods(args.pods, args.templates.max(1), args.seed);
        if args.anti_affinity {
            bench::with_anti_affinity_and_zone_spread(&mut pods);
        }
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
        let start = std::time::Instant::now();
        let loaded = match super::load_scenarios(&args.paths, &LoadOptions::default()) {
            Ok(l) => l,
            Err(code) => return code,
        };
        let load_seconds = start.elapsed().as_secs_f64();
        if !loaded.errors.is_empty() {
            code = exit_code::BAD_INPUT;
        }
        for s in &loaded.scenarios {
            let mut result = bench::measure(
                &s.name,
                s.nodes.clone(),
                &s.existing_pods,
                &s.workloads,
                &s.steps,
                &s.config,
            );
            result.whole_run = Some(bench::whole_run(s, load_seconds));
            result.peak_rss_mib = bench::peak_rss_mib();
            results.push(result);
        }
        crate::release_at_exit(loaded);
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
            if let Some(w) = &r.whole_run {
                println!(
                    "  whole run: load {:.3} s (all files) + schedule and report {:.3} s = {:.3} s = {:.0} pods/s, run.json {:.1} MB",
                    w.load_seconds,
                    w.schedule_and_report_seconds,
                    w.seconds,
                    w.pods_per_second,
                    w.report_json_bytes as f64 / 1e6
                );
            }
        }
    }
    code
}

/// The DRA benchmark: writes `generate --dra`'s scenario to a temporary file, loads it and
/// times scheduling it (loading is not timed: `bench FILE` times it).
fn dra(args: &BenchArgs) -> Result<BenchResult, i32> {
    let yaml = crate::generate::dra_scenario_yaml(args.nodes, args.pods, args.seed);
    let dir = std::env::temp_dir().join(format!("schedsim-bench-dra-{}", std::process::id()));
    let file = dir.join("dra-scenario.yaml");
    let written = std::fs::create_dir_all(&dir).and_then(|_| std::fs::write(&file, yaml));
    if let Err(e) = written {
        eprintln!("error: {}: {e}", file.display());
        return Err(exit_code::BAD_INPUT);
    }
    let loaded = super::load_scenarios(std::slice::from_ref(&file), &LoadOptions::default());
    let _ = std::fs::remove_dir_all(&dir);
    let loaded = loaded?;
    let Some(s) = loaded.scenarios.first() else {
        return Err(exit_code::BAD_INPUT);
    };
    let name = format!(
        "synthetic DRA {} nodes x 8 GPUs, {} pods with a ResourceClaimTemplate each",
        args.nodes, args.pods
    );
    let result = bench::measure(
        &name,
        s.nodes.clone(),
        &s.existing_pods,
        &s.workloads,
        &s.steps,
        &s.config,
    );
    crate::release_at_exit(loaded);
    Ok(result)
}

/// Times resolving `count` TrainJobs into pods on one thread.
fn resolve(count: usize, seed: u64) -> i32 {
    use crate::resolve::{self, InitializerLifecycle, build::BuildOptions};
    let runtimes = match bench::shipped_runtimes() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return exit_code::BAD_INPUT;
        }
    };
    let names: Vec<String> = bench::SHIPPED_RUNTIMES
        .iter()
        .map(|s| s.to_string())
        .collect();
    if let Some(missing) = names.iter().find(|n| !runtimes.cluster.contains_key(*n)) {
        eprintln!("error: the shipped runtime {missing:?} is not in fixtures/runtimes/");
        return exit_code::BAD_INPUT;
    }
    let jobs = bench::train_jobs(count, &names, seed);
    let gates = crate::features::FeatureGates::default();
    let opts = BuildOptions::default();
    let start = std::time::Instant::now();
    let mut pods = 0;
    for job in &jobs {
        match resolve::train_job_pods(job, &runtimes, opts, &gates, InitializerLifecycle::Complete)
        {
            Ok(p) => pods += p.pods.len(),
            Err(e) => {
                eprintln!("error: TrainJob {}: {e:?}", job.name());
                return exit_code::BAD_INPUT;
            }
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "resolved {count} TrainJobs (3 overrides each, {} runtimes) into {pods} pods in {seconds:.3} s = {:.0} TrainJobs/s, peak RSS {}",
        names.len(),
        count as f64 / seconds.max(1e-9),
        bench::peak_rss_mib().map_or("n/a".to_string(), |m| format!("{m:.0} MiB"))
    );
    exit_code::SUCCESS
}
