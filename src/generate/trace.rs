//! The synthetic replay trace (`schedsim generate --trace`, issue 26's figure "a synthetic
//! 30-day trace of 1,000,000 pods … on 5,000 nodes"): `trace.csv`, one row per job, and
//! `trace-scenario.yaml`, the bench cluster behind Kueue with `spec.replay.trace` mapping the
//! CSV's columns.
//!
//! The mix (README "Generating a replay trace" says where each number comes from):
//! - every job is pinned to one GPU pool (its model); a pool's jobs are drawn from [`SHAPES`]
//!   restricted to what fits its nodes, and the pools' shares of jobs balance their GPU demand;
//! - arrivals are a Poisson process with a diurnal and a weekly cycle, conditioned on the job
//!   count: the jobs' arrival times are independent draws from the rate, drawn in order;
//! - run times are log-normal; their scale is set per pool so that the GPU time the trace asks
//!   for is `--trace-load` percent of the pool's GPUs over the trace's days;
//! - queues by Zipf weights, with quotas in the same proportions.
//!
//! Memory does not grow with the trace: the generator runs twice over the same seeded job
//! stream (once to count jobs and GPU time, once to write), and writes row by row.

use std::fmt::Write as _;
use std::io::{self, Write};

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};

use super::{PoolTotals, kueue_objects, node_object, pool_totals, write_items};
use crate::model::Node;
use crate::model::resources;
use crate::trace::TraceColumns;
use crate::trace::units::{CpuUnit, MemoryUnit};

/// The shape of a generated trace.
#[derive(Debug, Clone, Copy)]
pub struct TraceBench {
    /// Pods in all (a gang row counts its pods).
    pub pods: u64,
    pub days: u32,
    pub queues: usize,
    /// GPU time asked for, in percent of the GPUs over the trace's days.
    pub load_percent: u32,
    pub seed: u64,
}

/// What a job is for: it sets the run time's scale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Interactive and debugging jobs: short.
    Dev,
    Batch,
    /// Multi-node training (a TrainJob's gang): long.
    Train,
}

impl Class {
    fn name(self) -> &'static str {
        match self {
            Class::Dev => "dev",
            Class::Batch => "batch",
            Class::Train => "train",
        }
    }

    /// The median run time relative to a batch job's.
    fn run_factor(self) -> f64 {
        match self {
            Class::Dev => 0.25,
            Class::Batch => 1.0,
            Class::Train => 2.0,
        }
    }
}

/// A kind of job: its class, GPUs per pod, pods, and its share of jobs in percent (before
/// the shapes a pool cannot hold are left out).
struct Shape {
    class: Class,
    gpus: u32,
    pods: u32,
    percent: f64,
}

const fn shape(class: Class, gpus: u32, pods: u32, percent: f64) -> Shape {
    Shape {
        class,
        gpus,
        pods,
        percent,
    }
}

/// The job mix: most jobs one GPU; multi-node gangs of 8-GPU pods are 8 % of jobs.
const SHAPES: [Shape; 9] = [
    shape(Class::Dev, 1, 1, 20.0),
    shape(Class::Batch, 1, 1, 40.0),
    shape(Class::Batch, 2, 1, 12.0),
    shape(Class::Batch, 4, 1, 10.0),
    shape(Class::Batch, 8, 1, 10.0),
    shape(Class::Train, 8, 2, 3.0),
    shape(Class::Train, 8, 4, 2.5),
    shape(Class::Train, 8, 8, 1.5),
    shape(Class::Train, 8, 16, 1.0),
];

/// σ of the run times' logarithm: openb's finished GPU pods (`openb_pod_list_default.csv`,
/// deletion − scheduled time of the 2,054 GPU pods not `Running`) have 1.67.
const RUN_SIGMA: f64 = 1.7;
/// The standard normal draw is cut at ±3 σ: no run is a year long.
const RUN_Z_LIMIT: f64 = 3.0;
/// The shortest run, in seconds.
const MIN_RUN: u64 = 60;
/// The diurnal cycle's amplitude: the rate at its peak is (1 + A) / (1 − A) = 4 times the
/// rate at its trough, as openb's arrivals by hour of the day are (peak 550, trough 137).
const DIURNAL_AMPLITUDE: f64 = 0.6;
/// The hour of the day when arrivals peak.
const PEAK_HOUR: f64 = 14.0;
/// The arrival rate on Saturdays and Sundays relative to weekdays; the trace starts on a Monday.
const WEEKEND_RATE: f64 = 0.6;
/// Share of jobs with the `high` priority, one in five as in the Kueue benchmark.
const HIGH_PRIORITY_IN: u32 = 5;

/// The node label that names a node's GPU model (GPU feature discovery's), which the trace's
/// `gpu_model` column gives and the replay turns into a required node affinity.
pub const GPU_MODEL_LABEL: &str = "nvidia.com/gpu.product";

/// The CSV's header: job totals over its `nodes` pods (CPU in cores, memory in GiB), submit
/// time and run time in seconds.
pub const HEADER: &str =
    "id,submit,duration,nodes,gpus,cpu,memory_gib,gpu_model,queue,priority,class";

/// How `spec.replay.trace.columns` maps the CSV.
pub fn columns() -> TraceColumns {
    let col = |name: &str| Some(name.to_string());
    TraceColumns {
        duration: col("duration"),
        cpu: col("cpu"),
        cpu_unit: CpuUnit::Cores,
        memory: col("memory_gib"),
        memory_unit: MemoryUnit::GiB,
        gpus: col("gpus"),
        gpu_model: col("gpu_model"),
        queue: col("queue"),
        priority: col("priority"),
        class: col("class"),
        nodes: col("nodes"),
        ..TraceColumns::new("id", "submit")
    }
}

/// A GPU pool's nodes (the smallest of each resource, so every pod fits every node), its
/// shapes and its draw weights.
struct GpuPool {
    name: String,
    model: String,
    nodes: u32,
    gpus: u32,
    cpu_milli: i64,
    memory: i64,
    /// Indexes into [`SHAPES`] of what fits, with cumulative percents.
    shapes: Vec<(usize, f64)>,
    /// The pool's GPUs over the trace, in GPU-seconds.
    capacity: f64,
}

impl GpuPool {
    /// A pod's share of one node's `total` for `gpus` GPUs, times `percent` / 100.
    fn share(&self, total: i64, gpus: u32, percent: u32) -> i64 {
        (i128::from(total) * i128::from(gpus) * i128::from(percent) / (i128::from(self.gpus) * 100))
            as i64
    }

    /// Expected GPU count × pods × run factor of one of this pool's jobs.
    fn mean_work(&self) -> f64 {
        let total = self.shapes.last().map_or(0.0, |s| s.1);
        (self.shapes.iter())
            .map(|&(i, _)| {
                let s = &SHAPES[i];
                s.percent * f64::from(s.gpus * s.pods) * s.class.run_factor()
            })
            .sum::<f64>()
            / total
    }
}

/// One drawn job, before its arrival and run time are known.
#[derive(Debug, Clone, Copy)]
struct Draw {
    pool: usize,
    shape: usize,
    queue: usize,
    high: bool,
    cpu_percent: u32,
    memory_percent: u32,
    /// The run time's standard normal draw, cut at ±[`RUN_Z_LIMIT`].
    z: f64,
}

impl Draw {
    fn shape(&self) -> &'static Shape {
        &SHAPES[self.shape]
    }

    /// The run time before its pool's scale: the class factor × e^(σz).
    fn unscaled_run(&self) -> f64 {
        self.shape().class.run_factor() * (RUN_SIGMA * self.z).exp()
    }

    /// GPUs × pods × [`Draw::unscaled_run`].
    fn unscaled_work(&self) -> f64 {
        f64::from(self.shape().gpus * self.shape().pods) * self.unscaled_run()
    }
}

/// What a written trace holds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceSummary {
    pub jobs: u64,
    pub pods: u64,
    /// GPUs of the cluster.
    pub gpus: i64,
    /// GPU-seconds the jobs ask for in all.
    pub gpu_seconds: u64,
    /// The trace's span in seconds.
    pub span: u64,
}

impl TraceSummary {
    /// GPU time asked for over the GPU time the cluster has during the trace's span.
    pub fn demand(&self) -> f64 {
        self.gpu_seconds as f64 / (self.gpus as f64 * self.span as f64)
    }
}

/// A trace ready to write: the pools, the job count and each pool's run-time scale, from a
/// first pass over the seeded job stream.
pub struct TracePlan {
    bench: TraceBench,
    pools: Vec<GpuPool>,
    /// Cumulative weights of the pools' shares of jobs.
    pool_weights: Vec<f64>,
    /// Cumulative Zipf weights of the queues.
    queue_weights: Vec<u64>,
    jobs: u64,
    /// Seconds per unscaled run, per pool.
    scale: Vec<f64>,
}

impl TracePlan {
    /// Plans a trace over `nodes` (the bench cluster: pools by `karpenter.sh/nodepool`, GPU
    /// model in [`GPU_MODEL_LABEL`]). Fails when the cluster has no GPU node.
    pub fn new(nodes: &[Node], bench: &TraceBench) -> Result<TracePlan, String> {
        let pools = gpu_pools(nodes, bench.days);
        if pools.is_empty() {
            return Err(format!(
                "--nodes {} makes no GPU node: the trace needs one (--nodes 5 or more)",
                nodes.len()
            ));
        }
        // A pool's share of jobs is its GPUs over its jobs' mean work, so that one run-time
        // scale gives every pool about the same load.
        let mut pool_weights = Vec::with_capacity(pools.len());
        let mut sum = 0.0;
        for p in &pools {
            sum += p.capacity / p.mean_work();
            pool_weights.push(sum);
        }
        let queues = bench.queues.max(1);
        let queue_weights = (1..=queues as u64)
            .scan(0, |sum, q| {
                *sum += zipf_weight(q);
                Some(*sum)
            })
            .collect();
        let mut plan = TracePlan {
            bench: *bench,
            pools,
            pool_weights,
            queue_weights,
            jobs: 0,
            scale: Vec::new(),
        };
        let mut work = vec![0.0; plan.pools.len()];
        let mut jobs = 0;
        plan.each_job(|d| {
            work[d.pool] += d.unscaled_work();
            jobs += 1;
        });
        let load = f64::from(bench.load_percent) / 100.0;
        plan.scale = (plan.pools.iter().zip(&work))
            .map(|(p, &w)| if w > 0.0 { load * p.capacity / w } else { 1.0 })
            .collect();
        plan.jobs = jobs;
        Ok(plan)
    }

    pub fn jobs(&self) -> u64 {
        self.jobs
    }

    /// Draws every job of the trace in order from the seed, until their pods make
    /// `bench.pods`: the last jobs are drawn among those that fit the pods left.
    fn each_job(&self, mut f: impl FnMut(&Draw)) {
        let mut rng = ChaCha8Rng::seed_from_u64(self.bench.seed);
        let mut left = self.bench.pods;
        while left > 0 {
            let draw = loop {
                let d = self.draw(&mut rng);
                if u64::from(d.shape().pods) <= left {
                    break d;
                }
            };
            left -= u64::from(draw.shape().pods);
            f(&draw);
        }
    }

    /// One job; always the same number of draws from `rng`.
    fn draw(&self, rng: &mut ChaCha8Rng) -> Draw {
        let pool = pick(&self.pool_weights, rng.random::<f64>());
        let shapes = &self.pools[pool].shapes;
        let total = shapes.last().map_or(0.0, |s| s.1);
        let at = rng.random::<f64>() * total;
        let shape = shapes[shapes.partition_point(|s| s.1 <= at).min(shapes.len() - 1)].0;
        let queue_total = *self.queue_weights.last().unwrap_or(&1);
        let q = rng.random_range(0..queue_total);
        let queue = self.queue_weights.partition_point(|&w| w <= q);
        let high = rng.random_range(0..HIGH_PRIORITY_IN) == 0;
        let cpu_percent = rng.random_range(25..=90);
        let memory_percent = rng.random_range(25..=90);
        // Box–Muller: a standard normal from two uniforms.
        let (u1, u2) = (1.0 - rng.random::<f64>(), rng.random::<f64>());
        let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
        Draw {
            pool,
            shape,
            queue,
            high,
            cpu_percent,
            memory_percent,
            z: z.clamp(-RUN_Z_LIMIT, RUN_Z_LIMIT),
        }
    }

    /// Writes `trace.csv`, a row per job in arrival order.
    pub fn write_csv(&self, out: &mut dyn Write) -> io::Result<TraceSummary> {
        let mut arrivals = Arrivals::new(self.bench.seed, self.jobs, self.bench.days);
        let mut summary = TraceSummary {
            jobs: 0,
            pods: 0,
            gpus: self.pools.iter().map(|p| p.capacity_gpus()).sum(),
            gpu_seconds: 0,
            span: arrivals.span,
        };
        writeln!(out, "{HEADER}")?;
        let mut line = String::new();
        let mut result = Ok(());
        self.each_job(|d| {
            if result.is_err() {
                return;
            }
            let pool = &self.pools[d.pool];
            let s = d.shape();
            let run = (self.scale[d.pool] * d.unscaled_run()).round() as u64;
            let run = run.max(MIN_RUN);
            let cores = (pool.share(pool.cpu_milli, s.gpus, d.cpu_percent) / 1000).max(1);
            let gib = (pool.share(pool.memory, s.gpus, d.memory_percent) >> 30).max(1);
            let (gpus, pods) = (u64::from(s.gpus * s.pods), i64::from(s.pods));
            line.clear();
            let _ = writeln!(
                line,
                "job-{:07},{},{run},{pods},{gpus},{},{},{},team-{:02},{},{}",
                summary.jobs,
                arrivals.next(),
                cores * pods,
                gib * pods,
                pool.model,
                d.queue,
                if d.high { "high" } else { "low" },
                s.class.name(),
            );
            summary.jobs += 1;
            summary.pods += u64::from(s.pods);
            summary.gpu_seconds += gpus * run;
            result = out.write_all(line.as_bytes());
        });
        result.map(|()| summary)
    }

    /// Writes `trace-scenario.yaml`: `nodes` (the cluster the plan was made for) without their
    /// GPU taint — every job asks for a GPU model by node affinity, so no pod could stray onto
    /// a GPU node, and a replayed row's pod has no toleration (openb's GPU nodes have no taint
    /// either) —, Kueue's objects — a ResourceFlavor per GPU pool selecting its model, a
    /// ClusterQueue, Namespace and LocalQueue per queue with quotas in the queues' proportions —
    /// and `spec.replay` reading `trace_file` through [`columns`].
    pub fn write_scenario(
        &self,
        nodes: &[Node],
        trace_file: &str,
        out: &mut dyn Write,
    ) -> io::Result<()> {
        let TraceBench {
            pods, days, queues, ..
        } = self.bench;
        let totals = pool_totals(nodes);
        let flavors: Vec<(&PoolTotals, Value)> = (totals.iter())
            .filter_map(|t| {
                let pool = self.pools.iter().find(|p| p.name == t.name)?;
                Some((t, json!({"nodeLabels": {GPU_MODEL_LABEL: pool.model}})))
            })
            .collect();
        let weights: Vec<u64> = (1..=queues.max(1) as u64).map(zipf_weight).collect();
        let objects = kueue_objects(&flavors, &weights);
        let columns = serde_json::to_value(columns()).map_err(io::Error::other)?;
        let replay = json!({"replay": {"trace": {
            "file": trace_file,
            "columns": columns,
            "gpuModelLabel": GPU_MODEL_LABEL,
            "priorities": {"high": 1000, "low": 100},
            "localQueue": "default",
        }}});
        let mut spec = String::new();
        super::write_yaml(&replay, 2, &mut spec);
        write!(
            out,
            "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata:\n  name: trace-{pods}-pods-{days}d-on-{}\nspec:\n  scheduler:\n    seed: 1\n{spec}  nodes:\n",
            nodes.len()
        )?;
        let untainted = nodes.iter().map(|n| {
            let mut n = n.clone();
            n.taints.clear();
            node_object(&n)
        });
        write_items(out, 2, untainted)?;
        out.write_all(b"  objects:\n")?;
        write_items(out, 2, objects)
    }
}

impl GpuPool {
    fn capacity_gpus(&self) -> i64 {
        i64::from(self.nodes) * i64::from(self.gpus)
    }
}

/// Queue `q`'s weight (1-based), Zipf's 1/q in integers.
fn zipf_weight(q: u64) -> u64 {
    1_000_000 / q
}

/// The index of the first cumulative weight above `u` × the total.
fn pick(cumulative: &[f64], u: f64) -> usize {
    let at = u * cumulative.last().copied().unwrap_or(0.0);
    cumulative
        .partition_point(|&w| w <= at)
        .min(cumulative.len() - 1)
}

/// The GPU pools of `nodes` (by `karpenter.sh/nodepool`), sorted by name, with their shapes.
fn gpu_pools(nodes: &[Node], days: u32) -> Vec<GpuPool> {
    let mut pools: std::collections::BTreeMap<String, GpuPool> = Default::default();
    for n in nodes {
        let get = |r: &str| n.allocatable.get(r).copied().unwrap_or(0);
        let gpus = u32::try_from(get("nvidia.com/gpu")).unwrap_or(0);
        let Some(model) = n.labels.get(GPU_MODEL_LABEL).filter(|_| gpus > 0) else {
            continue;
        };
        let name = n.labels.get("karpenter.sh/nodepool").cloned();
        let name = name.unwrap_or_else(|| model.to_lowercase());
        let (cpu, memory) = (get(resources::CPU), get(resources::MEMORY));
        let pool = pools.entry(name.clone()).or_insert(GpuPool {
            name,
            model: model.clone(),
            nodes: 0,
            gpus,
            cpu_milli: cpu,
            memory,
            shapes: Vec::new(),
            capacity: 0.0,
        });
        pool.nodes += 1;
        pool.gpus = pool.gpus.min(gpus);
        pool.cpu_milli = pool.cpu_milli.min(cpu);
        pool.memory = pool.memory.min(memory);
    }
    let span = f64::from(days) * 86_400.0;
    let mut out: Vec<GpuPool> = pools.into_values().collect();
    for p in &mut out {
        let mut sum = 0.0;
        for (i, s) in SHAPES.iter().enumerate() {
            if s.gpus <= p.gpus && s.pods <= p.nodes {
                sum += s.percent;
                p.shapes.push((i, sum));
            }
        }
        p.capacity = p.capacity_gpus() as f64 * span;
    }
    out
}

/// Arrival times in order: `jobs` independent draws from the trace's rate over its days (a
/// Poisson process conditioned on its count), drawn smallest first — the next is the least of
/// the draws still to come, all above the last — and mapped through the rate's cumulative.
struct Arrivals {
    rng: ChaCha8Rng,
    left: u64,
    /// The last draw, as a fraction of the cumulative rate.
    last: f64,
    /// The cumulative rate at the start of each hour (in rate × hours), and at the end.
    cumulative: Vec<f64>,
    hour: usize,
    span: u64,
}

impl Arrivals {
    fn new(seed: u64, jobs: u64, days: u32) -> Self {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(1);
        let hours = days as usize * 24;
        let mut cumulative = Vec::with_capacity(hours + 1);
        let mut sum = 0.0;
        cumulative.push(sum);
        for h in 0..hours {
            sum += rate(h);
            cumulative.push(sum);
        }
        Arrivals {
            rng,
            left: jobs,
            last: 0.0,
            cumulative,
            hour: 0,
            span: u64::from(days) * 86_400,
        }
    }

    /// The next arrival, in whole seconds from the trace's start.
    fn next(&mut self) -> u64 {
        let v = 1.0 - self.rng.random::<f64>();
        self.last = 1.0 - (1.0 - self.last) * v.powf(1.0 / self.left.max(1) as f64);
        self.left = self.left.saturating_sub(1);
        let c = &self.cumulative;
        let hours = c.len() - 1;
        let at = self.last * c[hours];
        while self.hour + 1 < hours && c[self.hour + 1] <= at {
            self.hour += 1;
        }
        let into = (at - c[self.hour]) / rate(self.hour);
        let seconds = (self.hour as f64 + into.clamp(0.0, 1.0)) * 3600.0;
        (seconds as u64).min(self.span - 1)
    }
}

/// The arrival rate in hour `h` of the trace, relative to a weekday's mean: a daily cosine
/// peaking at [`PEAK_HOUR`], lower at weekends.
fn rate(h: usize) -> f64 {
    let hour_of_day = (h % 24) as f64 + 0.5;
    let daily =
        1.0 + DIURNAL_AMPLITUDE * (std::f64::consts::TAU * (hour_of_day - PEAK_HOUR) / 24.0).cos();
    if h / 24 % 7 >= 5 {
        daily * WEEKEND_RATE
    } else {
        daily
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(nodes: usize, pods: u64) -> (Vec<Node>, TracePlan) {
        let nodes = crate::bench::nodes(nodes);
        let bench = TraceBench {
            pods,
            days: 2,
            queues: 4,
            load_percent: 75,
            seed: 1,
        };
        let plan = TracePlan::new(&nodes, &bench).unwrap();
        (nodes, plan)
    }

    #[test]
    fn shapes_a_pool_cannot_hold_are_left_out() {
        let (_, plan) = plan(20, 10);
        let t4 = plan.pools.iter().find(|p| p.name == "t4-g4dn").unwrap();
        assert!(t4.shapes.iter().all(|&(i, _)| SHAPES[i].gpus == 1));
        // 4 A100 nodes: gangs of 2 and 4, not 8 or 16.
        let a100 = plan.pools.iter().find(|p| p.name == "a100-p4d").unwrap();
        let most = a100.shapes.iter().map(|&(i, _)| SHAPES[i].pods).max();
        assert_eq!((a100.nodes, most), (4, Some(4)));
    }

    #[test]
    fn the_pods_come_out_exact() {
        let (_, plan) = plan(50, 1234);
        let mut pods = 0;
        plan.each_job(|d| pods += u64::from(d.shape().pods));
        assert_eq!(pods, 1234);
    }

    #[test]
    fn arrivals_are_sorted_and_inside_the_span() {
        let mut a = Arrivals::new(7, 10_000, 3);
        let times: Vec<u64> = (0..10_000).map(|_| a.next()).collect();
        assert!(times.is_sorted());
        assert!(*times.last().unwrap() < 3 * 86_400);
        // The diurnal cycle: more arrive in the afternoon hour than at 2 in the morning.
        let in_hour = |h: u64| times.iter().filter(|t| *t / 3600 % 24 == h).count();
        assert!(
            in_hour(14) > 2 * in_hour(2),
            "{} {}",
            in_hour(14),
            in_hour(2)
        );
    }

    #[test]
    fn no_gpu_node_is_an_error() {
        let nodes = crate::bench::nodes(3);
        let bench = TraceBench {
            pods: 1,
            days: 1,
            queues: 1,
            load_percent: 75,
            seed: 1,
        };
        let err = TracePlan::new(&nodes, &bench).err().unwrap();
        assert!(err.contains("makes no GPU node"), "{err}");
    }
}
