//! The FGD simulator's GPU-sharing plugins in the cycle (`sched::gpu_share`): the
//! `Open-Gpu-Share` Filter on a node's devices, its Reserve picking the pod's GPUs, and the
//! six score plugins.

use super::*;
use crate::model::gpu_share::MILLI;
use crate::sched::gpu_share::frag::{Typical, node_frag};
use crate::sched::gpu_share::policy::{self, Candidate, Policy};
use crate::sched::gpu_share::{self as share, Demand};
use crate::sched::profile::GpuSel;

/// What the GPU-sharing scores cost to compute, kept while it holds (as `schedsim fgd`'s run
/// keeps it): per node F(n) at the node's usage version, and per policy and pod demand each
/// node's raw score at its version. Every input of a score — the node's free CPU, its
/// devices, its pods' tags — changes only with a bind or unbind, which moves the version.
#[derive(Debug, Default)]
pub(crate) struct GpuScoreCache {
    frag: Vec<(u32, f64)>,
    shapes: HashMap<(Policy, Demand), Vec<(u32, i64)>>,
}

/// The demands [`GpuScoreCache`] keeps scores for before it starts again (a few hundred bytes
/// to a few hundred KB each: 16 bytes a node).
const SHAPES_KEPT: usize = 256;

/// Not computed yet (versions start at 0).
const UNSEEN: u32 = u32::MAX;

/// The GPUs a bound pod holds (its Reserve), to give back when it leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GpuTaken {
    pub devices: Vec<usize>,
    pub milli: i64,
    /// Its GpuClustering tag ([`policy::tag`]).
    pub tag: u64,
}

impl<'a> Scheduler<'a> {
    /// `Open-Gpu-Share`'s Filter on one node: a pod without GPU milli passes; one with it
    /// needs the node's GPUs, its model and room on its devices (`AllocateGpuId`). Every
    /// failure is `Unschedulable` with the reason `Node:<name>`, as upstream writes it.
    pub(super) fn gpu_status(&self, pod: &Pod, node: usize) -> Status {
        match self.gpu_passes(pod, node) {
            true => Status::success(),
            false => Status::new(
                Code::Unschedulable,
                Plugin::OpenGpuShare.name(),
                format!("Node:{}", self.cluster.nodes[node].name),
            ),
        }
    }

    /// Whether the profile runs `Open-Gpu-Share` at Filter and it has work for the pod.
    pub(super) fn gpu_filters(&self, pod: &Pod) -> bool {
        pod.gpu_share.is_some() && self.compiled().filters.contains(&Plugin::OpenGpuShare)
    }

    /// The Filter's verdict, without a status.
    pub(super) fn gpu_passes(&self, pod: &Pod, node: usize) -> bool {
        let Some(want) = pod.gpu_share.as_deref() else {
            return true;
        };
        let gpus = &self.cluster.gpus[node];
        gpus.shared && want.accepts(&gpus.model) && share::allocate(&gpus.left, want).is_some()
    }

    /// Reserve: the GPUs the pod takes on `node` — the ones it held before (a node list
    /// replaced), the indices it names, else those its profile's `gpuSelMethod` picks — when
    /// a profile serving it runs `Open-Gpu-Share` at Reserve or it names its indices (the
    /// plugin's cache then counts it, as it does a bound pod's annotation). `None` when it
    /// takes none or they do not fit.
    pub(super) fn reserve_gpus(
        &mut self,
        node: usize,
        pod: &Pod,
        before: Option<&GpuTaken>,
    ) -> Option<GpuTaken> {
        let demand = Demand::of(pod);
        let tag = policy::tag(&demand);
        if let Some(before) = before {
            let left = &self.cluster.gpus[node].left;
            let fits =
                (before.devices.iter()).all(|&d| left.get(d).is_some_and(|&l| l >= before.milli));
            return fits.then(|| self.take_gpus(node, before.devices.clone(), before.milli, tag));
        }
        let Some(want) = pod.gpu_share.as_deref() else {
            // A device plugin's GPUs: whole devices, or time-slicing replicas.
            let gpus = &self.cluster.gpus[node];
            if demand.gpus == 0 || gpus.left.is_empty() {
                return None;
            }
            let devices = gpus.plugin_devices(demand.gpus);
            let milli = match gpus.replicas {
                1 => MILLI,
                _ => gpus.replica_milli(),
            };
            return (!devices.is_empty()).then(|| self.take_gpus(node, devices, milli, tag));
        };
        let sel = self.gpu_sel(pod);
        if want.index.is_none() && sel.is_none() {
            return None;
        }
        let gpus = &self.cluster.gpus[node];
        if !gpus.shared {
            return None;
        }
        // The Filter's answer decides whether it fits; the selection, which GPUs.
        let fit = share::allocate(&gpus.left, want)?;
        let devices = match (
            want.index.is_some() || want.milli >= MILLI || want.count != 1,
            sel,
        ) {
            // Indices given, whole GPUs (`AllocateExclusiveGpuId`: the lowest free), and
            // shares of several GPUs (the reference panics there) take the Filter's answer.
            (true, _) | (false, None) => fit,
            (false, Some(GpuSel::BestFit)) => share::best_fit(&gpus.left, want.milli)
                .into_iter()
                .collect(),
            (false, Some(GpuSel::WorstFit)) => share::worst_fit(&gpus.left, want.milli)
                .into_iter()
                .collect(),
            (false, Some(GpuSel::Random)) => {
                let holding: Vec<usize> = (0..gpus.left.len())
                    .filter(|&d| gpus.left[d] >= want.milli)
                    .collect();
                vec![holding[self.rng.random_range(0..holding.len())]]
            }
            (false, Some(GpuSel::Fgd)) => {
                let candidate = self.gpu_candidate(node, &self.fgd_typical);
                let (_, device) = policy::score(Policy::Fgd, candidate, &demand, &self.fgd_typical);
                device.into_iter().collect()
            }
        };
        Some(self.take_gpus(node, devices, want.milli, tag))
    }

    fn take_gpus(&mut self, node: usize, devices: Vec<usize>, milli: i64, tag: u64) -> GpuTaken {
        self.cluster.gpus[node].change(&devices, milli, tag, 1);
        GpuTaken {
            devices,
            milli,
            tag,
        }
    }

    /// Gives back the GPUs a pod leaving `node` held.
    pub(super) fn release_gpus(&mut self, node: usize, taken: &GpuTaken) {
        (self.cluster.gpus[node]).change(&taken.devices, taken.milli, taken.tag, -1);
    }

    /// The `gpuSelMethod` of the profile serving `pod`, when it runs `Open-Gpu-Share` at
    /// Reserve.
    fn gpu_sel(&self, pod: &Pod) -> Option<GpuSel> {
        let i = self.config.profile_of(pod)?;
        let p = &self.profiles.get(i)?.profile;
        (p.framework
            .runs(ExtensionPoint::Reserve, Plugin::OpenGpuShare))
        .then_some(p.gpu_sel)
        .flatten()
    }

    /// What the policies read of a node.
    fn gpu_candidate<'s>(&'s self, node: usize, typical: &[Typical]) -> Candidate<'s> {
        let view = self.cluster.gpu_view(node);
        Candidate {
            view,
            frag: if typical.is_empty() {
                0.0
            } else {
                node_frag(view, typical)
            },
            tags: self.cluster.gpus[node].tags(),
        }
    }

    /// A node's raw score under `policy` for `demand`, from the cache while the node is
    /// unchanged.
    fn gpu_raw_score(
        &self,
        cache: &mut GpuScoreCache,
        policy: Policy,
        demand: &Demand,
        node: usize,
    ) -> i64 {
        let version = self.cluster.version(node);
        let n = self.cluster.len();
        if let Some(scores) = cache.shapes.get(&(policy, demand.clone()))
            && scores[node].0 == version
        {
            return scores[node].1;
        }
        let typical: &[Typical] = match policy {
            Policy::Fgd => &self.fgd_typical,
            _ => &[],
        };
        let mut candidate = self.gpu_candidate(node, &[]);
        if !typical.is_empty() {
            cache.frag.resize(n, (UNSEEN, 0.0));
            if cache.frag[node].0 != version {
                cache.frag[node] = (version, node_frag(candidate.view, typical));
            }
            candidate.frag = cache.frag[node].1;
        }
        let score = policy::score(policy, candidate, demand, typical).0;
        let key = (policy, demand.clone());
        if cache.shapes.len() >= SHAPES_KEPT && !cache.shapes.contains_key(&key) {
            cache.shapes.clear();
        }
        let scores = cache
            .shapes
            .entry(key)
            .or_insert_with(|| vec![(UNSEEN, 0); n]);
        scores[node] = (version, score);
        score
    }

    /// The weighted scores of the GPU-sharing score plugins the profile runs, per feasible
    /// node (empty when it runs none). BestFitScore is normalised over the feasible nodes
    /// (its NormalizeScore); RandomScore gives 100 to one feasible node drawn at PreScore
    /// (counted in node order), 0 to the others; FGDScore gives 100 to a pod without
    /// requests.
    /// The GPU-sharing score plugins' weighted sum per feasible node; `parts` gets each
    /// plugin's normalized scores and weight (for an explained cycle).
    pub(super) fn gpu_scores(
        &mut self,
        pod: &Pod,
        mut parts: Option<&mut Vec<(&'static str, i64, Vec<i64>)>>,
    ) -> Vec<i64> {
        let weights = self.compiled().weights.gpu_share;
        if weights.iter().all(|w| *w == 0) {
            return Vec::new();
        }
        let demand = Demand::of(pod);
        let mut total = vec![0; self.feasible.len()];
        for (policy, weight) in Policy::ALL.into_iter().zip(weights) {
            if weight == 0 {
                continue;
            }
            let scores: Vec<i64> = match policy {
                Policy::Random => {
                    let mut nodes: Vec<u32> = self.feasible.iter().map(|f| f.node).collect();
                    nodes.sort_unstable();
                    let drawn = nodes[self.rng.random_range(0..nodes.len())];
                    (self.feasible.iter())
                        .map(|f| if f.node == drawn { 100 } else { 0 })
                        .collect()
                }
                Policy::Fgd if pod.requests.is_empty() => vec![100; self.feasible.len()],
                _ => {
                    let mut cache = std::mem::take(&mut self.gpu_score_cache);
                    let raw: Vec<i64> = (self.feasible.iter())
                        .map(|f| self.gpu_raw_score(&mut cache, policy, &demand, f.node as usize))
                        .collect();
                    self.gpu_score_cache = cache;
                    match policy {
                        Policy::BestFit => {
                            let lo = raw.iter().copied().min().unwrap_or(0);
                            let hi = raw.iter().copied().max().unwrap_or(0);
                            raw.iter().map(|&s| policy::normalise(s, lo, hi)).collect()
                        }
                        _ => raw,
                    }
                }
            };
            for (t, s) in total.iter_mut().zip(&scores) {
                *t += weight * s;
            }
            if let Some(parts) = parts.as_deref_mut() {
                parts.push((Plugin::of_policy(policy).name(), weight, scores));
            }
        }
        total
    }
}
