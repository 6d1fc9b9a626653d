//! `schedsim fgd`: the FGD paper's experiment matrix — workloads × scoring policies × seeds —
//! on the openb GPU cluster, written as the reference simulator's analysis CSVs.

use std::path::{Path, PathBuf};
use std::time::Instant;

use clap::Args;

use crate::error::exit_code;
use crate::fgd::charts;
use crate::fgd::experiment::{FILES, Matrix, Workload, run_and_write};
use crate::fgd::input::read_nodes;
use crate::sched::gpu_share::policy::Policy;

#[derive(Debug, Args)]
pub struct FgdArgs {
    /// Pod lists (`openb_pod_list_<workload>.csv`; default: the bundled default, gpuspec33
    /// and multigpu50 lists). Each row is one pod: `name,cpu_milli,memory_mib,num_gpu,
    /// gpu_milli[,gpu_spec]`.
    pub pods: Vec<PathBuf>,
    /// The GPU node list (`sn,cpu_milli,memory_mib,gpu,model`; default: the bundled openb
    /// list of 1,213 GPU nodes).
    #[arg(long, value_name = "FILE")]
    pub nodes: Option<PathBuf>,
    /// Scoring policies (repeat or comma-separate; default: all six).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub policy: Vec<Policy>,
    /// Seeds: `A..B` (inclusive) or a comma-separated list.
    #[arg(long, default_value = "42..51", value_parser = parse_seeds)]
    pub seeds: Seeds,
    /// Workload inflation: the arrivals' GPU request as a multiple of the cluster's GPUs.
    #[arg(long, default_value_t = 1.3)]
    pub tune: f64,
    /// Run only shard I of N of the matrix (cells whose index ≡ I mod N).
    #[arg(long, value_name = "I/N", value_parser = super::sweep::parse_shard)]
    pub shard: Option<(u64, u64)>,
    /// Folder for the result files.
    #[arg(long, default_value = "reports/fgd")]
    pub out: PathBuf,
    /// Also draw the paper's charts (SVG and PNG) into the output folder: per workload, the
    /// unallocated and the fragmented GPUs against the arrived workload (one line per policy,
    /// the median over seeds in a 25–75 % band), and the unallocated GPUs at 100 % arrived.
    #[arg(long)]
    pub charts: bool,
}

/// The seeds of a matrix.
#[derive(Debug, Clone)]
pub struct Seeds(pub Vec<i64>);

/// Seeds one command takes: they are listed in memory (the runs are made and written a chunk
/// at a time).
const MAX_SEEDS: usize = 1_000_000;

fn parse_seeds(s: &str) -> Result<Seeds, String> {
    let bad = || format!("expected A..B or a list like 42,43, got {s:?}");
    if let Some((a, b)) = s.split_once("..") {
        let a: i64 = a.trim().parse().map_err(|_| bad())?;
        let b: i64 = b.trim().parse().map_err(|_| bad())?;
        if b < a || (b - a) as u128 >= MAX_SEEDS as u128 {
            return Err(format!(
                "{s:?}: at most {MAX_SEEDS} seeds, from low to high"
            ));
        }
        return Ok(Seeds((a..=b).collect()));
    }
    let seeds: Result<Vec<i64>, _> = s.split(',').map(|x| x.trim().parse()).collect();
    seeds.map(Seeds).map_err(|_| bad())
}

fn bundled(file: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/openb")
        .join(file)
}

pub fn run(args: &FgdArgs) -> i32 {
    let started = Instant::now();
    let nodes_path =
        (args.nodes.clone()).unwrap_or_else(|| bundled("openb_node_list_gpu_node.csv"));
    let pod_paths = if args.pods.is_empty() {
        ["default", "gpuspec33", "multigpu50"]
            .map(|w| bundled(&format!("openb_pod_list_{w}.csv")))
            .to_vec()
    } else {
        args.pods.clone()
    };
    if !(args.tune.is_finite() && args.tune >= 0.0) {
        eprintln!("error: --tune {}: expected a finite number ≥ 0", args.tune);
        return exit_code::BAD_INPUT;
    }
    let nodes = match read_nodes(&nodes_path) {
        Ok(n) => n,
        Err(e) => {
            eprintln!("error: {e}");
            return exit_code::BAD_INPUT;
        }
    };
    let mut workloads = Vec::new();
    for p in &pod_paths {
        match Workload::read(p) {
            Ok(w) => workloads.push(w),
            Err(e) => {
                eprintln!("error: {e}");
                return exit_code::BAD_INPUT;
            }
        }
    }
    // In the policies' id order, as the reference's result files list them.
    let mut policies = if args.policy.is_empty() {
        Policy::ALL.to_vec()
    } else {
        args.policy.clone()
    };
    policies.sort();
    policies.dedup();
    let matrix = Matrix {
        workloads: workloads.len(),
        policies: &policies,
        seeds: &args.seeds.0,
    };
    let select = |i: u64| args.shard.is_none_or(|(shard, of)| i % of == shard);
    let runs = matrix.len() / args.shard.map_or(1, |(_, of)| of);
    if args.charts && runs > charts::MAX_RUNS {
        eprintln!(
            "error: --charts keeps every run's curves: at most {} runs ({runs} asked); draw fewer seeds or a shard",
            charts::MAX_RUNS
        );
        return exit_code::BAD_INPUT;
    }
    let mut curves = charts::SeedCurves::default();
    let keep = |c: &crate::fgd::experiment::Cell| {
        if args.charts {
            curves.add(c);
        }
    };
    let made = run_and_write(
        &args.out, &nodes, &workloads, &matrix, select, args.tune, keep,
    );
    let drawn = match (&made, args.charts) {
        (Ok(_), true) => Some(charts::write_charts(&args.out, &workloads, &curves)),
        _ => None,
    };
    match made {
        Ok(made) => {
            for f in FILES {
                println!("wrote {}", args.out.join(f).display());
            }
            match drawn {
                Some(Ok(paths)) => {
                    for p in paths {
                        println!("wrote {} (.svg, .png)", p.display());
                    }
                }
                Some(Err(e)) => {
                    eprintln!("error: drawing the charts: {e}");
                    return exit_code::BAD_INPUT;
                }
                None => {}
            }
            println!(
                "{made} runs ({} nodes, {} workloads) in {:.2} s",
                nodes.len(),
                workloads.len(),
                started.elapsed().as_secs_f64()
            );
            exit_code::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            exit_code::BAD_INPUT
        }
    }
}
