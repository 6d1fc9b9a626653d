//! The six scoring policies of the FGD experiments and their GPU choice inside a node
//! (reference: `pkg/simulator/plugin/*_score.go`, device choice in
//! `pkg/type/open-gpu-share/utils`). Every score is an integer in 0..=100, higher wins.

use super::Demand;
use super::frag::{NodeView, Typical, node_frag};

/// MAXC and MAXG: the fixed normalisers of DotProd and BestFit (128 cores, 8 GPUs).
const MAX_CPU: f64 = 128_000.0;
const MAX_GPU: f64 = 8_000.0;

/// A scoring policy, named as the experiments' directories name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, clap::ValueEnum)]
pub enum Policy {
    Random,
    DotProd,
    GpuClustering,
    GpuPacking,
    BestFit,
    Fgd,
}

impl Policy {
    pub const ALL: [Policy; 6] = [
        Policy::Random,
        Policy::DotProd,
        Policy::GpuClustering,
        Policy::GpuPacking,
        Policy::BestFit,
        Policy::Fgd,
    ];

    /// `sc_policy` of the result files.
    pub fn label(self) -> &'static str {
        match self {
            Policy::Random => "01-Random",
            Policy::DotProd => "02-DotProd",
            Policy::GpuClustering => "03-GpuClustering",
            Policy::GpuPacking => "04-GpuPacking",
            Policy::BestFit => "05-BestFit",
            Policy::Fgd => "06-FGD",
        }
    }
}

/// What a policy reads of a node.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    pub view: NodeView<'a>,
    /// F(n) now (FGD only).
    pub frag: f64,
    /// The tags of the GPU pods on it ([`tag`]).
    pub tags: u64,
}

/// A node's score for `pod` and, for a sharing pod under FGD, the device that reaches it.
/// BestFit's is the raw score, normalised over the feasible nodes by [`normalise`].
pub fn score(
    policy: Policy,
    node: Candidate<'_>,
    pod: &Demand,
    typical: &[Typical],
) -> (i64, Option<usize>) {
    let free_cpu = node.view.cpu_left as f64;
    let free_gpu: i64 = node.view.gpu_left.iter().sum();
    let (c, g) = (pod.cpu_milli as f64, pod.total_milli() as f64);
    match policy {
        Policy::Random => (0, None),
        Policy::DotProd => {
            // Both vectors normalised by the maxima, their dot product over their length.
            let mut dot = 0.0;
            dot += (free_cpu / MAX_CPU) * (c / MAX_CPU);
            dot += (free_gpu as f64 / MAX_GPU) * (g / MAX_GPU);
            dot /= 2.0;
            ((100.0 * (1.0 - dot)) as i64, None)
        }
        Policy::GpuClustering => (gpu_clustering(node, pod, free_gpu), None),
        Policy::GpuPacking => (gpu_packing(node.view.gpu_left, pod), None),
        Policy::BestFit => {
            let mut left = 0.0;
            left += (free_cpu - c) / MAX_CPU * 0.5;
            left += (free_gpu as f64 - g) / MAX_GPU * 0.5;
            (((1.0 - left) * 100.0) as i64, None)
        }
        Policy::Fgd => fgd(node, pod, typical),
    }
}

/// A pod's GPU tag as a bit (`GetGpuAffinityFromPodAnnotation`): bit 0 for a pod sharing a
/// GPU, bit k for one taking k whole GPUs (`"k-gpu"`); none for a CPU-only pod.
pub fn tag(pod: &Demand) -> u64 {
    match pod.gpus {
        0 => 0,
        _ if pod.shares() => 1,
        k => 1u64.checked_shl(k).unwrap_or(1 << 63),
    }
}

/// GpuClustering: a GPU pod prefers nodes whose GPU pods all carry its tag, then nodes with
/// its tag among others, then empty nodes; b adds up to 25 for how full the node is.
fn gpu_clustering(node: Candidate<'_>, pod: &Demand, free_gpu: i64) -> i64 {
    let mine = tag(pod);
    if mine == 0 {
        return 0;
    }
    let b = 100 / 4 * (8000 - free_gpu) / 8000;
    if node.tags & mine != 0 {
        if node.tags.count_ones() == 1 {
            75 + b
        } else {
            50 + b
        }
    } else if node.tags == 0 {
        25 + b
    } else {
        b
    }
}

/// GpuPacking: partly used devices first, then partly used nodes, then empty nodes.
pub fn gpu_packing(gpu_left: &[i64], pod: &Demand) -> i64 {
    if pod.gpus == 0 {
        return 0;
    }
    let free = gpu_left.iter().filter(|&&l| l == 1000).count() as i64;
    if free == gpu_left.len() as i64 {
        return (33 - free).max(free);
    }
    let mut by_left: Vec<(i64, usize)> = (gpu_left.iter().copied().enumerate())
        .map(|(i, l)| (l, i))
        .collect();
    by_left.sort_unstable();
    let picked: Vec<i64> = (by_left.into_iter())
        .filter(|&(l, _)| l >= pod.milli)
        .take(pod.gpus as usize)
        .map(|(l, _)| l)
        .collect();
    let unused = picked.iter().filter(|&&l| l == 1000).count() as i64;
    if unused > 0 {
        return (50 - unused).max(33);
    }
    let sum: i64 = picked.iter().map(|l| l * 100 / 1000).sum();
    (100 - sum / 10).max(50)
}

/// σ(ΔF / 1000) as a score: ⌊100 σ⌋.
fn sigmoid_score(delta: f64) -> i64 {
    let sigmoid = 1.0 / (1.0 + (-(delta / 1000.0)).exp());
    (sigmoid * 100.0) as i64
}

/// FGD: how much placing the pod lowers the node's fragmentation.
fn fgd(node: Candidate<'_>, pod: &Demand, typical: &[Typical]) -> (i64, Option<usize>) {
    let mut left = node.view.gpu_left.to_vec();
    let frag_after = |left: &[i64]| {
        let view = NodeView {
            cpu_left: node.view.cpu_left - pod.cpu_milli,
            gpu_left: left,
            ..node.view
        };
        node_frag(view, typical)
    };
    if pod.shares() {
        let mut best: (i64, Option<usize>) = (-1, None);
        for i in 0..left.len() {
            if left[i] < pod.milli {
                continue;
            }
            left[i] -= pod.milli;
            let s = sigmoid_score(node.frag - frag_after(&left));
            left[i] += pod.milli;
            if s > best.0 {
                best = (s, Some(i));
            }
        }
        return best;
    }
    for i in whole_devices(&left, pod.gpus as usize) {
        left[i] = 0;
    }
    (sigmoid_score(node.frag - frag_after(&left)), None)
}

/// The `k` lowest-index free devices.
pub fn whole_devices(gpu_left: &[i64], k: usize) -> Vec<usize> {
    (0..gpu_left.len())
        .filter(|&i| gpu_left[i] == 1000)
        .take(k)
        .collect()
}

/// Best fit inside a node: the device with the least free milli that holds the share,
/// the lowest index among equals.
pub fn best_fit_device(gpu_left: &[i64], milli: i64) -> Option<usize> {
    (0..gpu_left.len())
        .filter(|&i| gpu_left[i] >= milli)
        .min_by_key(|&i| (gpu_left[i], i))
}

/// kube-scheduler's min–max normalisation of BestFit's raw scores over the feasible nodes.
pub fn normalise(raw: i64, lo: i64, hi: i64) -> i64 {
    if hi == lo {
        0
    } else {
        (raw - lo) * 100 / (hi - lo)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(gpus: u32, milli: i64) -> Demand {
        Demand {
            cpu_milli: 1000,
            gpus,
            milli,
            spec: String::new(),
            plugin: false,
        }
    }

    /// `gpu_packing_score_test.go`.
    #[test]
    fn gpu_packing_scores_of_the_reference_tests() {
        assert_eq!(gpu_packing(&[200, 1000, 1000, 500], &pod(2, 1000)), 48);
        assert_eq!(gpu_packing(&[1000; 4], &pod(2, 1000)), 29);
        assert_eq!(gpu_packing(&[1000; 8], &pod(2, 1000)), 25);
        assert_eq!(gpu_packing(&[200, 1000, 1000, 500], &pod(2, 200)), 93);
    }

    fn candidate(cpu_left: i64, gpu_left: &[i64]) -> Candidate<'_> {
        Candidate {
            view: NodeView::whole(cpu_left, gpu_left, "T4"),
            frag: 0.0,
            tags: 0,
        }
    }

    /// DotProd: 100·(1 − ½(C·c/MAXC² + G·g/MAXG²)), truncated; BestFit's raw score:
    /// 100·(1 − ½(C−c)/MAXC − ½(G−g)/MAXG), truncated (worked by hand).
    #[test]
    fn dot_product_and_best_fit_scores_on_hand_made_nodes() {
        let p = Demand {
            cpu_milli: 16_000,
            ..pod(1, 500)
        };
        // C = 64000, G = 4000: ½(0.5·0.125 + 0.5·0.0625) = 0.046875 → 95.3125 → 95.
        let node = candidate(64_000, &[1000; 4]);
        assert_eq!(score(Policy::DotProd, node, &p, &[]).0, 95);
        // ½·48000/128000 + ½·3500/8000 = 0.1875 + 0.21875 = 0.40625 → 59.375 → 59.
        assert_eq!(score(Policy::BestFit, node, &p, &[]).0, 59);
        // A full node scores higher under BestFit: C = 16000, G = 500 → 1 − 0 → 100.
        assert_eq!(
            score(Policy::BestFit, candidate(16_000, &[500]), &p, &[]).0,
            100
        );
        assert_eq!(normalise(59, 59, 100), 0);
        assert_eq!(normalise(80, 59, 100), 51);
        assert_eq!(normalise(70, 70, 70), 0);
    }

    #[test]
    fn best_fit_takes_the_fullest_device_that_holds_the_share() {
        assert_eq!(best_fit_device(&[1000, 300, 500, 300], 300), Some(1));
        assert_eq!(best_fit_device(&[1000, 300, 500], 400), Some(2));
        assert_eq!(best_fit_device(&[100, 200], 400), None);
        assert_eq!(whole_devices(&[1000, 0, 1000, 1000], 2), vec![0, 2]);
    }

    #[test]
    fn fgd_scores_fifty_when_fragmentation_does_not_change() {
        assert_eq!(sigmoid_score(0.0), 50);
        assert!(sigmoid_score(2000.0) > 80);
        assert!(sigmoid_score(-2000.0) < 20);
    }

    #[test]
    fn gpu_clustering_prefers_nodes_of_the_pods_kind() {
        let view = NodeView::whole(0, &[1000; 8], "");
        let node = |tags| Candidate {
            view,
            frag: 0.0,
            tags,
        };
        let (share, two) = (pod(1, 500), pod(2, 1000));
        assert_eq!((tag(&share), tag(&two), tag(&pod(0, 0))), (1, 4, 0));
        assert_eq!(gpu_clustering(node(1), &share, 8000), 75);
        assert_eq!(gpu_clustering(node(1 | 4), &share, 4000), 62);
        assert_eq!(gpu_clustering(node(0), &share, 8000), 25);
        assert_eq!(gpu_clustering(node(4), &share, 0), 25);
        // One whole GPU and two whole GPUs are different tags.
        assert_eq!(gpu_clustering(node(2), &two, 8000), 0);
        assert_eq!(gpu_clustering(node(0), &pod(0, 0), 0), 0);
    }
}
