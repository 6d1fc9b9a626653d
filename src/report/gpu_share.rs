//! GPU sharing in the run report: each pod's GPU indices (`Open-Gpu-Share`'s Reserve), each
//! node's devices, and the cluster's fragmentation as the FGD paper defines it
//! (`sched::gpu_share::frag`: the idle GPU milli the target workload cannot use) — named
//! `gpuShareFragmentation` so that it is not taken for the report's `fragmented` GPUs (free
//! whole GPUs on nodes with too few for the largest pending request).

use std::collections::BTreeMap;

use serde::Serialize;

use crate::model::Pod;
use crate::model::gpu_share::MILLI;
use crate::sched::Outcome;
use crate::sched::gpu_share::frag::{self, Amounts, CATEGORIES, CATEGORY_NAMES, Typical};

/// One node's GPUs at the end of the run.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeGpuShare {
    /// `alibabacloud.com/gpu-card-model`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub model: String,
    /// Each GPU's free milli, by index.
    pub free_milli: Vec<i64>,
    /// F(n): the free milli the target workload cannot use.
    pub fragment_milli: f64,
    /// Its GPUs are `alibabacloud.com/gpu-count`'s, which pods share through the annotations.
    #[serde(skip)]
    pub shared: bool,
}

impl NodeGpuShare {
    /// GPUs in use (a share taken of them) and GPUs.
    pub fn gpus_in_use(&self) -> (i64, i64) {
        let busy = self.free_milli.iter().filter(|&&l| l < MILLI).count();
        (busy as i64, self.free_milli.len() as i64)
    }
}

/// One class of the target workload.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetClass {
    pub cpu_milli: i64,
    /// Milli of each GPU.
    pub gpu_milli: i64,
    pub gpus: u32,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub models: String,
    /// Its GPUs are a device plugin's (`nvidia.com/gpu`, …): one replica each on a
    /// time-sliced node.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub device_plugin: bool,
    /// Its share of the target workload.
    pub weight: f64,
}

/// The cluster's fragmentation (`ClusterGpuFragReport`).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GpuShareFragmentation {
    /// The pod classes covering 95 % of the scenario's pods, by frequency
    /// (`GetTypicalPods`).
    pub target_workload: Vec<TargetClass>,
    /// GPU milli of the nodes' devices, and how much of it is free.
    pub gpu_milli: i64,
    pub idle_milli: i64,
    /// The free milli the target workload cannot use, and its share of the free milli (%).
    pub fragment_milli: f64,
    pub fragment_ratio: f64,
    /// The free milli by category (`frag.go`'s `FragRatioDataMap`), each weighted by the
    /// target workload.
    pub categories: BTreeMap<&'static str, f64>,
}

/// The GPU-sharing view of a run: `None` when no node has `alibabacloud.com/gpu-count`
/// GPUs.
pub struct GpuShareView {
    pub nodes: Vec<Option<NodeGpuShare>>,
    pub fragmentation: GpuShareFragmentation,
}

impl GpuShareView {
    pub fn new(workloads: &[Pod], existing: &[Pod], outcome: &Outcome) -> Option<Self> {
        let cluster = &outcome.cluster;
        if cluster.gpus.iter().all(|g| g.left.is_empty()) {
            return None;
        }
        let typical = frag::target_workload(workloads.iter().chain(existing));
        let mut total: Amounts = [0.0; CATEGORIES];
        let mut gpu_milli = 0;
        let nodes = (0..cluster.len())
            .map(|i| {
                let gpus = &cluster.gpus[i];
                if gpus.left.is_empty() {
                    return None;
                }
                gpu_milli += gpus.left.len() as i64 * MILLI;
                let amounts = frag::node_amounts(cluster.gpu_view(i), &typical);
                for (t, a) in total.iter_mut().zip(amounts) {
                    *t += a;
                }
                Some(NodeGpuShare {
                    model: gpus.model.clone(),
                    free_milli: gpus.left.clone(),
                    fragment_milli: round2(frag::fragment(&amounts)),
                    shared: gpus.shared,
                })
            })
            .collect();
        let idle: i64 = cluster.gpus.iter().flat_map(|g| &g.left).sum();
        let fragment = frag::fragment(&total);
        Some(GpuShareView {
            nodes,
            fragmentation: GpuShareFragmentation {
                target_workload: typical.iter().map(target_class).collect(),
                gpu_milli,
                idle_milli: idle,
                fragment_milli: round2(fragment),
                fragment_ratio: match idle {
                    0 => 0.0,
                    _ => round2(100.0 * fragment / idle as f64),
                },
                categories: (CATEGORY_NAMES.into_iter().zip(total))
                    .map(|(name, a)| (name, round2(a)))
                    .collect(),
            },
        })
    }
}

fn target_class(t: &Typical) -> TargetClass {
    TargetClass {
        cpu_milli: t.class.cpu,
        gpu_milli: t.class.milli,
        gpus: t.class.gpus,
        models: t.class.spec.clone(),
        device_plugin: t.class.plugin,
        weight: t.weight,
    }
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}
