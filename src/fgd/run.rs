//! One run of the FGD experiment (reference `SchedulePods`): each pod of the arrival
//! sequence is placed on the best-scoring node that fits, or fails for good; after each, one
//! row of what the cluster holds and how fragmented it is (`ClusterGpuFragReport`).

use std::collections::HashMap;

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use super::arrivals::{arrivals, node_ranks};
use super::input::{GpuNode, TracePod};
use crate::sched::gpu_share::frag::{
    Amounts, CATEGORIES, NodeView, Typical, fragment, node_amounts,
};
use crate::sched::gpu_share::policy::{self, Candidate, Policy};

/// Pods a node takes at most (the reference's node pod capacity).
const MAX_PODS: u32 = 1001;

/// The cluster after one arrival, as the reference logs it (`[Alloc]` and `[Report]`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Row {
    pub arrived_milli: i64,
    pub used_milli: i64,
    /// Frag amount and ratio, rounded to 2 decimals as the reference prints them.
    pub frag_milli: f64,
    pub frag_ratio: f64,
}

/// Where one arriving pod went: the node (its index in the node list as given) and the
/// GPU indices it took there; `None` when it failed.
pub type Placement = Option<(usize, Vec<usize>)>;

/// A run's rows, its placements (in arrival order) and how many pods failed.
pub struct RunResult {
    pub total_gpus: i64,
    pub rows: Vec<Row>,
    pub placements: Vec<Placement>,
    pub failed: usize,
}

struct Node<'a> {
    spec: &'a GpuNode,
    /// Its index in the node list as given.
    index: usize,
    cpu_left: i64,
    mem_left: i64,
    pods: u32,
    gpu_left: Vec<i64>,
    /// The tags of its GPU pods ([`policy::tag`]).
    tags: u64,
    amounts: Amounts,
    frag: f64,
    /// Bumped at each placement: cached scores of older versions are stale.
    version: u32,
}

impl Node<'_> {
    fn view(&self) -> NodeView<'_> {
        NodeView::whole(self.cpu_left, &self.gpu_left, &self.spec.model)
    }

    /// What the policies read of it.
    fn candidate(&self) -> Candidate<'_> {
        Candidate {
            view: self.view(),
            frag: self.frag,
            tags: self.tags,
        }
    }

    fn fits(&self, pod: &TracePod) -> bool {
        if self.cpu_left < pod.cpu_milli
            || self.mem_left < pod.memory_mib
            || self.pods + 1 > MAX_PODS
        {
            return false;
        }
        if pod.milli == 0 {
            return true;
        }
        if self.gpu_left.is_empty() || !pod.allows(&self.spec.model) {
            return false;
        }
        if pod.shares() {
            self.gpu_left.iter().any(|&l| l >= pod.milli)
        } else {
            self.gpu_left.iter().filter(|&&l| l == 1000).count() >= pod.gpus as usize
        }
    }
}

/// One run: `sorted` is the trace sorted by name, `typical` its target workload.
pub fn run(
    nodes: &[GpuNode],
    sorted: &[TracePod],
    typical: &[Typical],
    policy: Policy,
    seed: i64,
    ratio: f64,
) -> Result<RunResult, String> {
    let mut by_name: Vec<(usize, &GpuNode)> = nodes.iter().enumerate().collect();
    by_name.sort_by(|a, b| a.1.name.cmp(&b.1.name));
    let total_gpus: i64 = nodes.iter().map(|n| n.gpus as i64).sum();
    let mut sequence = arrivals(sorted, seed, ratio, total_gpus * 1000)?;
    let ranks = node_ranks(&mut sequence.rng, by_name.len());
    // Nodes in tie-break order: the reference's renamed nodes sorted by name.
    let mut order: Vec<usize> = (0..by_name.len()).collect();
    order.sort_by_key(|&i| ranks[i]);
    let mut cluster: Vec<Node> = (order.iter())
        .map(|&i| {
            let (index, spec) = by_name[i];
            let mut n = Node {
                spec,
                index,
                cpu_left: spec.cpu_milli,
                mem_left: spec.memory_mib,
                pods: 0,
                gpu_left: vec![1000; spec.gpus],
                tags: 0,
                amounts: [0.0; CATEGORIES],
                frag: 0.0,
                version: 0,
            };
            n.amounts = node_amounts(n.view(), typical);
            n.frag = fragment(&n.amounts);
            n
        })
        .collect();
    // Random's own draws (the reference's cannot be replayed): seeded by the run's seed.
    let mut random = ChaCha8Rng::seed_from_u64(seed as u64);
    let mut cache = ScoreCache::default();
    let mut rows = Vec::with_capacity(sequence.order.len());
    let mut placements = Vec::with_capacity(sequence.order.len());
    let (mut arrived, mut used, mut failed) = (0i64, 0i64, 0usize);
    let mut feasible: Vec<usize> = Vec::new();
    let mut scores: Vec<(i64, Option<usize>)> = Vec::new();
    for &p in &sequence.order {
        let pod = &sorted[p];
        arrived += pod.total_milli();
        feasible.clear();
        feasible.extend((0..cluster.len()).filter(|&n| cluster[n].fits(pod)));
        let chosen = match feasible.len() {
            0 => None,
            1 => Some((feasible[0], None)),
            _ if policy == Policy::Random => {
                Some((feasible[random.random_range(0..feasible.len())], None))
            }
            _ => {
                let shape = cache.shape(pod);
                scores.clear();
                for &n in &feasible {
                    let node = &cluster[n];
                    scores.push(cache.score(n, node.version, shape, || {
                        policy::score(policy, node.candidate(), pod, typical)
                    }));
                }
                if policy == Policy::BestFit {
                    let lo = scores.iter().map(|s| s.0).min().unwrap_or(0);
                    let hi = scores.iter().map(|s| s.0).max().unwrap_or(0);
                    for s in &mut scores {
                        s.0 = policy::normalise(s.0, lo, hi);
                    }
                }
                // Highest score; among equals the first in tie-break order.
                let mut best = 0;
                for i in 1..scores.len() {
                    if scores[i].0 > scores[best].0 {
                        best = i;
                    }
                }
                Some((feasible[best], scores[best].1))
            }
        };
        match chosen {
            None => {
                failed += 1;
                placements.push(None);
            }
            Some((n, device)) => {
                let node = &mut cluster[n];
                let devices = devices_for(policy, node, pod, (device, typical), &mut random);
                for &d in &devices {
                    node.gpu_left[d] -= pod.milli;
                }
                placements.push(Some((node.index, devices)));
                node.cpu_left -= pod.cpu_milli;
                node.mem_left -= pod.memory_mib;
                node.pods += 1;
                node.tags |= policy::tag(pod);
                node.version += 1;
                node.amounts = node_amounts(node.view(), typical);
                node.frag = fragment(&node.amounts);
                used += pod.total_milli();
            }
        }
        // `ClusterGpuFragReport`: the nodes' amounts added by category, then the fragment
        // and the idle milli from those sums.
        let mut amounts = [0.0; CATEGORIES];
        for n in &cluster {
            for (a, x) in amounts.iter_mut().zip(&n.amounts) {
                *a += x;
            }
        }
        let frag = fragment(&amounts);
        let idle: f64 = amounts.iter().sum();
        rows.push(Row {
            arrived_milli: arrived,
            used_milli: used,
            frag_milli: round2(frag),
            frag_ratio: round2(100.0 * frag / idle),
        });
    }
    Ok(RunResult {
        total_gpus,
        rows,
        placements,
        failed,
    })
}

/// The devices a placed pod takes on its node.
fn devices_for(
    policy: Policy,
    node: &Node,
    pod: &TracePod,
    (fgd_device, typical): (Option<usize>, &[Typical]),
    random: &mut ChaCha8Rng,
) -> Vec<usize> {
    if pod.gpus == 0 {
        return Vec::new();
    }
    if !pod.shares() {
        return policy::whole_devices(&node.gpu_left, pod.gpus as usize);
    }
    let fits: Vec<usize> = (0..node.gpu_left.len())
        .filter(|&i| node.gpu_left[i] >= pod.milli)
        .collect();
    let device = match policy {
        Policy::Random => fits[random.random_range(0..fits.len())],
        // The single feasible node is taken without scoring: FGD's device is then found here.
        Policy::Fgd => fgd_device.unwrap_or_else(|| fgd_device_of(node, pod, typical)),
        _ => policy::best_fit_device(&node.gpu_left, pod.milli).expect("a device that fits"),
    };
    vec![device]
}

/// FGD's device for a sharing pod on a node taken without scoring (the only one that fits).
fn fgd_device_of(node: &Node, pod: &TracePod, typical: &[Typical]) -> usize {
    (policy::score(Policy::Fgd, node.candidate(), pod, typical).1).expect("a device that fits")
}

/// Python's `round(x, 2)` (correctly rounded, ties to even), which Rust's formatting matches.
pub fn round2(x: f64) -> f64 {
    format!("{x:.2}").parse().expect("a formatted number")
}

/// A remembered score: the node version it was computed at, the score and FGD's device.
#[derive(Clone, Copy, Default)]
struct Scored {
    version: Option<u32>,
    score: i64,
    device: Option<usize>,
}

/// Scores by node and pod shape, valid while the node's version is unchanged.
#[derive(Default)]
struct ScoreCache {
    shapes: HashMap<(i64, i64, u32, String), usize>,
    by_node: Vec<Vec<Scored>>,
}

impl ScoreCache {
    fn shape(&mut self, pod: &TracePod) -> usize {
        let next = self.shapes.len();
        *(self.shapes)
            .entry((pod.cpu_milli, pod.milli, pod.gpus, pod.spec.clone()))
            .or_insert(next)
    }

    fn score(
        &mut self,
        node: usize,
        version: u32,
        shape: usize,
        compute: impl FnOnce() -> (i64, Option<usize>),
    ) -> (i64, Option<usize>) {
        if self.by_node.len() <= node {
            self.by_node.resize(node + 1, Vec::new());
        }
        let slots = &mut self.by_node[node];
        if slots.len() <= shape {
            slots.resize(shape + 1, Scored::default());
        }
        let slot = &mut slots[shape];
        if slot.version != Some(version) {
            let (score, device) = compute();
            *slot = Scored {
                version: Some(version),
                score,
                device,
            };
        }
        (slot.score, slot.device)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::gpu_share::frag::typical_pods;

    fn node(name: &str, gpus: usize) -> GpuNode {
        GpuNode {
            name: name.into(),
            cpu_milli: 32_000,
            memory_mib: 65_536,
            gpus,
            model: "T4".into(),
        }
    }

    fn pod(name: &str, cpu: i64, gpus: u32, milli: i64) -> TracePod {
        TracePod {
            name: name.into(),
            memory_mib: 1024,
            demand: crate::sched::gpu_share::Demand {
                cpu_milli: cpu,
                gpus,
                milli,
                spec: String::new(),
                plugin: false,
            },
        }
    }

    /// Equal scores go to the node first in the seeded node order (`Perm` after tuning),
    /// whatever the policy.
    #[test]
    fn ties_go_to_the_node_of_lowest_rank() {
        let nodes: Vec<GpuNode> = (0..6).map(|i| node(&format!("n{i}"), 2)).collect();
        let pods = vec![pod("p0", 1000, 0, 0)];
        for seed in [42, 43, 44] {
            // The ranks the run draws: after the arrivals' draws, with no tuning (ratio 0).
            let mut sequence = crate::fgd::arrivals::arrivals(&pods, seed, 0.0, 12_000).unwrap();
            let ranks = crate::fgd::arrivals::node_ranks(&mut sequence.rng, nodes.len());
            let first = (0..nodes.len()).min_by_key(|&i| ranks[i]).unwrap();
            for policy in [Policy::GpuPacking, Policy::Fgd, Policy::DotProd] {
                let typical = typical_pods(pods.iter().map(|p| &p.demand));
                let result = run(&nodes, &pods, &typical, policy, seed, 0.0).unwrap();
                assert_eq!(
                    result.placements[0],
                    Some((first, vec![])),
                    "{policy:?} {seed}"
                );
            }
        }
    }

    /// Sharing pods take the fullest device that holds them (best fit), whole-GPU pods the
    /// lowest free ones; a pod that fits nowhere fails and still counts as arrived.
    #[test]
    fn devices_and_failures() {
        let nodes = vec![node("a", 4)];
        let pods = vec![
            pod("p0", 1000, 1, 600),
            pod("p1", 1000, 1, 300),
            pod("p2", 1000, 2, 1000),
            pod("p3", 1000, 1, 500),
            pod("p4", 1000, 2, 1000),
        ];
        let typical = typical_pods(pods.iter().map(|p| &p.demand));
        let result = run(&nodes, &pods, &typical, Policy::BestFit, 1, 0.0).unwrap();
        let placed: Vec<Placement> = result.placements.clone();
        // Arrival order is shuffled: check by pod instead of by position.
        let mut sequence = crate::fgd::arrivals::arrivals(&pods, 1, 0.0, 4000).unwrap();
        let _ = crate::fgd::arrivals::node_ranks(&mut sequence.rng, 1);
        let order = sequence.order;
        let mut left = vec![1000i64; 4];
        for (at, &p) in order.iter().enumerate() {
            let pod = &pods[p];
            match &placed[at] {
                Some((0, devices)) => {
                    if pod.shares() {
                        assert_eq!(Some(devices[0]), policy::best_fit_device(&left, pod.milli));
                    } else {
                        assert_eq!(devices, &policy::whole_devices(&left, pod.gpus as usize));
                    }
                    for &d in devices {
                        left[d] -= pod.milli;
                    }
                }
                None => {
                    let free = left.iter().filter(|&&l| l == 1000).count();
                    assert!(!pod.shares() && free < pod.gpus as usize, "{pod:?} failed");
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(result.rows.last().unwrap().arrived_milli, 5400);
        assert!(
            result.failed > 0,
            "two 2-GPU pods and three shares cannot all fit on 4 GPUs"
        );
        assert_eq!(result.failed, placed.iter().filter(|p| p.is_none()).count());
    }
}
