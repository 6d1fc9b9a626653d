//! What a replay measures as it goes: per pod and per job its arrival, first bind and end,
//! folded at once into per-group summaries (waits as [`Histogram`]s, GPU time), GPU time per
//! pool integrated over the run, and a time series of the cluster's state. Nothing is kept
//! per pod after the pod is gone: memory follows the cluster and the pods in flight.

use std::collections::BTreeMap;

use super::histogram::Histogram;
use crate::model::Node;
use crate::model::resources::gpus;

/// The dimensions summaries are grouped by.
pub const DIMENSIONS: [&str; 3] = ["queue", "priority", "class"];

/// One group's figures (all pods, one queue, one priority, one class).
#[derive(Debug, Clone, Default)]
pub struct Group {
    pub pods_arrived: u64,
    pub pods_started: u64,
    pub pods_finished: u64,
    pub pods_withdrawn: u64,
    pub jobs_arrived: u64,
    pub jobs_started: u64,
    pub jobs_finished: u64,
    /// Jobs Kueue admitted (at least once).
    pub jobs_admitted: u64,
    /// Per job Kueue admitted: its first admission − its arrival (ms).
    pub admission_wait: Histogram,
    /// Per pod: first bind − arrival (ms).
    pub pod_wait: Histogram,
    /// Per job: the time its last pod first bound − its arrival (ms).
    pub job_wait: Histogram,
    /// Per pod still pending at the end: how long it had waited (a lower bound of its wait).
    pub pending_wait: Histogram,
    /// GPU milli × the run time the workload asked for (ms), for pods with a known run time.
    pub gpu_ms_requested: u128,
    /// GPU milli × the time pods held them (ms).
    pub gpu_ms_used: u128,
    pub preemptions: u64,
    /// Evictions of jobs by Kueue's PodsReady timeout (`waitForPodsReady`).
    pub pods_ready_timeouts: u64,
    /// Jobs Kueue deactivated past `backoffLimitCount` (`RequeuingLimitExceeded`).
    pub jobs_deactivated: u64,
}

/// A pod's life, as it is folded into the summaries.
#[derive(Debug, Clone, Copy)]
pub struct PodLife {
    pub arrival: u64,
    pub first_bind: Option<u64>,
    pub gpus: i64,
    pub requested_ms: Option<u64>,
    pub used_ms: u64,
    pub preemptions: u32,
}

/// One point of the time series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sample {
    pub at: u64,
    pub running: u64,
    pub pending: u64,
    /// Pods whose job waits for Kueue's admission (they do not exist yet).
    pub queued: u64,
    /// GPU milli allocated, of capacity, and fragmented (free on nodes with less than the
    /// largest pending request).
    pub allocated_gpus: i64,
    pub capacity_gpus: i64,
    pub fragmented_gpus: i64,
    /// Per pool: GPU milli allocated.
    pub pools: Vec<i64>,
}

/// The steps the adaptive series may take: each a multiple of the one before, so thinning
/// keeps exact sample points.
const LADDER_MS: [u64; 13] = [
    1_000, 2_000, 10_000, 30_000, 60_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000,
    21_600_000, 43_200_000, 86_400_000,
];
/// The series in memory never holds more points than this.
pub const MAX_POINTS: usize = 2_000;

/// The time series kept in memory (for the report and the charts): its step grows along
/// [`LADDER_MS`] (then doubles) from the user's step or 1 s, thinning the points it has, so
/// it never holds more than [`MAX_POINTS`]. A user's fixed step is streamed apart
/// ([`Metrics::sample_until`]).
#[derive(Debug, Clone)]
pub struct Series {
    pub step_ms: u64,
    pub points: Vec<Sample>,
}

impl Series {
    pub fn new(step: Option<u64>) -> Self {
        Series {
            step_ms: step.unwrap_or(LADDER_MS[0]),
            points: Vec::new(),
        }
    }

    /// The next sample time after the last one taken.
    pub fn next_at(&self) -> u64 {
        self.points.last().map_or(0, |p| p.at + self.step_ms)
    }

    /// Adds a point; when full, the series thins itself to the next step.
    pub fn push(&mut self, sample: Sample) {
        self.points.push(sample);
        if self.points.len() <= MAX_POINTS {
            return;
        }
        let next = LADDER_MS
            .iter()
            .copied()
            .find(|s| *s > self.step_ms && s.is_multiple_of(self.step_ms))
            .unwrap_or(self.step_ms * 2);
        self.step_ms = next;
        self.points.retain(|p| p.at.is_multiple_of(next));
    }
}

/// The replay counts GPUs in milli, so that a pod sharing a GPU (`Open-Gpu-Share`) counts
/// its share: 1000 is one GPU.
pub const GPU_MILLI: i64 = 1000;

/// The GPU milli a pod holds: its share (milli of each of its GPUs) when it has one, else the
/// whole GPUs it asks for (the first GPU resource it names).
pub fn pod_gpu_milli(pod: &crate::model::Pod) -> i64 {
    match pod.gpu_share.as_deref() {
        Some(s) => s.milli.saturating_mul(i64::from(s.count)),
        None => gpus(&pod.requests).unwrap_or(0).saturating_mul(GPU_MILLI),
    }
}

/// A node's GPU milli (its allocatable of the first GPU resource it lists).
pub fn node_gpu_milli(node: &Node) -> i64 {
    gpus(&node.allocatable)
        .unwrap_or(0)
        .saturating_mul(GPU_MILLI)
}

/// GPUs counted in milli, written as GPUs: a whole number while they are whole, else with
/// three decimals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub struct GpuCount(pub i64);

impl GpuCount {
    pub fn as_f64(self) -> f64 {
        self.0 as f64 / GPU_MILLI as f64
    }
}

impl std::fmt::Display for GpuCount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 % GPU_MILLI {
            0 => write!(f, "{}", self.0 / GPU_MILLI),
            _ => write!(f, "{:.3}", self.as_f64()),
        }
    }
}

impl serde::Serialize for GpuCount {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 % GPU_MILLI {
            0 => s.serialize_i64(self.0 / GPU_MILLI),
            _ => s.serialize_f64(self.as_f64()),
        }
    }
}

/// A node's pool as the placement charts name it: `pool (GPU product)`.
pub fn pool_name(node: &Node) -> String {
    match node.gpu_product() {
        Some(p) if p != node.pool() => format!("{} ({p})", node.pool()),
        _ => node.pool().to_string(),
    }
}

/// The replay's measurements.
#[derive(Debug, Clone)]
pub struct Metrics {
    /// The groups, in the order they were first seen ([`Self::groups`] sorts them).
    groups: Vec<Group>,
    /// (dimension, value) → its group's index; ("all", "") is every pod.
    group_index: BTreeMap<(&'static str, String), usize>,
    /// (queue, priority, class) → the indices of the four groups a pod of it counts in:
    /// every event of a pod updates them (millions in a long replay), found with one hash.
    groups_of: GroupsOf,
    /// Pool names, in the order they first appear.
    pub pools: Vec<String>,
    node_pool: Vec<usize>,
    node_capacity: Vec<i64>,
    node_used: Vec<i64>,
    /// Per pool, GPU milli of capacity and in use now (kept as pods bind and go, so an event
    /// costs the pools, not the nodes).
    pool_capacity: Vec<i64>,
    pool_used: Vec<i64>,
    /// Nodes with GPUs by their free GPU milli: free → (nodes): what fragmentation reads.
    free_nodes: BTreeMap<i64, u64>,
    /// The user's fixed step, streamed, and its next sample time.
    stream_step: Option<u64>,
    next_stream: u64,
    /// Per pool: GPU milli·ms allocated and of capacity, integrated over the run.
    pub pool_used_ms: Vec<u128>,
    pub pool_capacity_ms: Vec<u128>,
    /// Pending pods' GPU milli (request → how many), for the fragmentation view.
    pending_gpus: BTreeMap<i64, u64>,
    pub running: u64,
    pub pending: u64,
    /// Pods whose job waits for Kueue's admission.
    pub queued: u64,
    /// The time up to which GPU time has been integrated.
    integrated_to: u64,
    pub series: Series,
}

/// [`Metrics::groups_of`]'s map; looked up per event, never iterated: foldhash, fixed seed.
type GroupsOf = hashbrown::HashMap<(String, i32, String), [usize; 4], foldhash::fast::FixedState>;

/// A (queue, priority, class) as the events name it, looked up in [`GroupsOf`] without
/// allocating: it hashes as the tuple of owned strings does.
struct GroupKey<'a>(&'a str, i32, &'a str);

impl std::hash::Hash for GroupKey<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
        self.1.hash(state);
        self.2.hash(state);
    }
}

impl hashbrown::Equivalent<(String, i32, String)> for GroupKey<'_> {
    fn equivalent(&self, key: &(String, i32, String)) -> bool {
        self.0 == key.0 && self.1 == key.1 && self.2 == key.2
    }
}

impl Metrics {
    pub fn new(nodes: &[Node], sample: Option<u64>) -> Self {
        let mut m = Metrics {
            groups: Vec::new(),
            group_index: BTreeMap::new(),
            groups_of: GroupsOf::default(),
            pools: Vec::new(),
            node_pool: Vec::new(),
            node_capacity: Vec::new(),
            node_used: Vec::new(),
            pool_capacity: Vec::new(),
            pool_used: Vec::new(),
            free_nodes: BTreeMap::new(),
            stream_step: sample,
            next_stream: 0,
            pool_used_ms: Vec::new(),
            pool_capacity_ms: Vec::new(),
            pending_gpus: BTreeMap::new(),
            running: 0,
            pending: 0,
            queued: 0,
            integrated_to: 0,
            series: Series::new(sample),
        };
        m.nodes_changed(nodes, &[]);
        m
    }

    /// Pools known up front (nodes a timeline adds), so the series' columns stay fixed.
    pub fn declare_pools<'n>(&mut self, nodes: impl Iterator<Item = &'n Node>) {
        for n in nodes {
            self.pool_index(&pool_name(n));
        }
    }

    fn pool_index(&mut self, name: &str) -> usize {
        match self.pools.iter().position(|p| p == name) {
            Some(i) => i,
            None => {
                self.pools.push(name.to_string());
                self.pool_used_ms.push(0);
                self.pool_capacity_ms.push(0);
                self.pool_used.push(0);
                self.pool_capacity.push(0);
                self.pools.len() - 1
            }
        }
    }

    /// The node list changed: `used` gives each new node's GPUs in use.
    pub fn nodes_changed(&mut self, nodes: &[Node], used: &[i64]) {
        self.node_pool = nodes
            .iter()
            .map(|n| self.pool_index(&pool_name(n)))
            .collect();
        self.node_capacity = nodes.iter().map(node_gpu_milli).collect();
        self.node_used = (0..nodes.len())
            .map(|i| used.get(i).copied().unwrap_or(0))
            .collect();
        self.pool_capacity.iter_mut().for_each(|c| *c = 0);
        self.pool_used.iter_mut().for_each(|u| *u = 0);
        self.free_nodes.clear();
        for i in 0..self.node_pool.len() {
            let pool = self.node_pool[i];
            self.pool_capacity[pool] += self.node_capacity[i];
            self.pool_used[pool] += self.node_used[i];
            self.count_free(i, 1);
        }
    }

    /// Counts node `i`'s free GPUs in (`sign` 1) or out (-1) of [`Self::free_nodes`].
    fn count_free(&mut self, i: usize, sign: i64) {
        if self.node_capacity[i] <= 0 {
            return;
        }
        let free = self.node_capacity[i] - self.node_used[i];
        let n = self.free_nodes.entry(free).or_default();
        *n = n.saturating_add_signed(sign);
        if *n == 0 {
            self.free_nodes.remove(&free);
        }
    }

    fn use_gpus(&mut self, node: usize, gpus: i64) {
        if node >= self.node_used.len() {
            return;
        }
        self.count_free(node, -1);
        self.node_used[node] += gpus;
        self.pool_used[self.node_pool[node]] += gpus;
        self.count_free(node, 1);
    }

    /// Integrates GPU time up to `now` (the state has been constant since the last call).
    pub fn advance(&mut self, now: u64) {
        let dt = u128::from(now.saturating_sub(self.integrated_to));
        if dt > 0 {
            for pool in 0..self.pools.len() {
                self.pool_capacity_ms[pool] += dt * self.pool_capacity[pool].max(0) as u128;
                self.pool_used_ms[pool] += dt * self.pool_used[pool].max(0) as u128;
            }
        }
        self.integrated_to = self.integrated_to.max(now);
    }

    /// How many samples the fixed step will have streamed once it reaches `until`.
    pub fn stream_points_until(&self, until: u64) -> Option<u64> {
        let step = self.stream_step?;
        Some(until.div_ceil(step))
    }

    /// Takes the samples due before `until` (the state is that after every event before):
    /// the user's fixed step into `out`, the series' own into memory.
    pub fn sample_until(&mut self, until: u64, out: &mut dyn FnMut(&Sample)) {
        if let Some(step) = self.stream_step {
            while self.next_stream < until {
                out(&self.sample(self.next_stream));
                self.next_stream += step;
            }
        }
        while self.series.next_at() < until {
            let sample = self.sample(self.series.next_at());
            self.series.push(sample);
        }
    }

    /// The replay ends at `now`: the samples before it, then the state at the end (in the
    /// stream, and in the series unless it has a point there).
    pub fn finish(&mut self, now: u64, out: &mut dyn FnMut(&Sample)) {
        self.sample_until(now, out);
        let last = self.sample(now);
        if self.stream_step.is_some() {
            out(&last);
        }
        if self.series.points.last().map(|p| p.at) != Some(now) {
            self.series.points.push(last);
        }
    }

    /// The state now, as a sample at `at`.
    pub fn sample(&self, at: u64) -> Sample {
        let largest = self.pending_gpus.keys().next_back().copied().unwrap_or(0);
        let fragmented = (self.free_nodes.range(1..largest.max(1)))
            .map(|(free, nodes)| free * *nodes as i64)
            .sum();
        Sample {
            at,
            running: self.running,
            pending: self.pending,
            queued: self.queued,
            allocated_gpus: self.pool_used.iter().sum(),
            capacity_gpus: self.pool_capacity.iter().sum(),
            fragmented_gpus: fragmented,
            pools: self.pool_used.clone(),
        }
    }

    /// The groups by (dimension, value), in that order; ("all", "") is every pod.
    pub fn groups(&self) -> impl Iterator<Item = (&(&'static str, String), &Group)> {
        (self.group_index.iter()).map(|(k, &i)| (k, &self.groups[i]))
    }

    /// The group of a (dimension, value).
    pub fn group(&self, dimension: &'static str, value: &str) -> Option<&Group> {
        let i = self.group_index.get(&(dimension, value.to_string()))?;
        Some(&self.groups[*i])
    }

    /// Applies `f` to each group a pod counts in: all pods, its queue, its priority, its class.
    fn each(&mut self, key: (&str, i32, &str), f: impl Fn(&mut Group)) {
        let ids = match self.groups_of.get(&GroupKey(key.0, key.1, key.2)) {
            Some(ids) => *ids,
            None => {
                let values = [
                    String::new(),
                    key.0.to_string(),
                    key.1.to_string(),
                    key.2.to_string(),
                ];
                let dimensions = std::iter::once("all").chain(DIMENSIONS);
                let mut ids = [0; 4];
                for ((id, dimension), value) in ids.iter_mut().zip(dimensions).zip(values) {
                    let next = self.groups.len();
                    *id = *self.group_index.entry((dimension, value)).or_insert(next);
                    if *id == next {
                        self.groups.push(Group::default());
                    }
                }
                let owned = (key.0.to_string(), key.1, key.2.to_string());
                self.groups_of.insert(owned, ids);
                ids
            }
        };
        for i in ids {
            f(&mut self.groups[i]);
        }
    }

    pub fn job_arrived(&mut self, key: (&str, i32, &str), pods: u64) {
        self.each(key, |g| {
            g.jobs_arrived += 1;
            g.pods_arrived += pods;
        });
    }

    /// A job's controller made another pod.
    pub fn pod_arrived(&mut self, key: (&str, i32, &str)) {
        self.each(key, |g| g.pods_arrived += 1);
    }

    pub fn job_started(&mut self, key: (&str, i32, &str), wait: u64) {
        self.each(key, |g| {
            g.jobs_started += 1;
            g.job_wait.add(wait);
        });
    }

    /// Kueue admitted a job for the first time, `wait` after its arrival.
    pub fn job_admitted(&mut self, key: (&str, i32, &str), wait: u64) {
        self.each(key, |g| {
            g.jobs_admitted += 1;
            g.admission_wait.add(wait);
        });
    }

    pub fn job_finished(&mut self, key: (&str, i32, &str)) {
        self.each(key, |g| g.jobs_finished += 1);
    }

    pub fn pod_started(&mut self, key: (&str, i32, &str), wait: u64) {
        self.each(key, |g| {
            g.pods_started += 1;
            g.pod_wait.add(wait);
        });
    }

    pub fn preempted(&mut self, key: (&str, i32, &str)) {
        self.each(key, |g| g.preemptions += 1);
    }

    /// Kueue's PodsReady timeout evicted a job.
    pub fn pods_ready_timeout(&mut self, key: (&str, i32, &str)) {
        self.each(key, |g| g.pods_ready_timeouts += 1);
    }

    /// Kueue deactivated a job.
    pub fn job_deactivated(&mut self, key: (&str, i32, &str)) {
        self.each(key, |g| g.jobs_deactivated += 1);
    }

    /// A pod is gone (finished, withdrawn) or the replay ended with it: its GPU time, and its
    /// wait so far if it never started.
    pub fn pod_ended(
        &mut self,
        key: (&str, i32, &str),
        life: PodLife,
        finished: bool,
        withdrawn: bool,
        now: u64,
    ) {
        let gpus = life.gpus.max(0) as u128;
        self.each(key, |g| {
            g.gpu_ms_used += gpus * u128::from(life.used_ms);
            if let Some(r) = life.requested_ms {
                g.gpu_ms_requested += gpus * u128::from(r);
            }
            if finished {
                g.pods_finished += 1;
            }
            if withdrawn {
                g.pods_withdrawn += 1;
            }
            if life.first_bind.is_none() && !withdrawn {
                g.pending_wait.add(now.saturating_sub(life.arrival));
            }
        });
    }

    pub fn bound(&mut self, node: usize, gpus: i64) {
        self.use_gpus(node, gpus);
    }

    pub fn unbound(&mut self, node: usize, gpus: i64) {
        self.use_gpus(node, -gpus);
    }

    pub fn pending_added(&mut self, gpus: i64) {
        self.pending += 1;
        *self.pending_gpus.entry(gpus).or_default() += 1;
    }

    pub fn pending_removed(&mut self, gpus: i64) {
        self.pending = self.pending.saturating_sub(1);
        if let Some(n) = self.pending_gpus.get_mut(&gpus) {
            *n -= 1;
            if *n == 0 {
                self.pending_gpus.remove(&gpus);
            }
        }
    }
}
