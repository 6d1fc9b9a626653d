//! GPUs as devices that pods share, as the FGD paper's simulator schedules them (reference:
//! hkust-adsl/kubernetes-scheduler-simulator at `8f3d641`): a node's GPUs are devices of
//! 1000 milli each with the node's model; a pod takes a share of one GPU or whole GPUs
//! (`model::gpu_share`); the `Open-Gpu-Share` plugin filters on the devices and picks the
//! pod's GPUs at Reserve (`pkg/simulator/plugin/open_gpu_share.go`, its cache's
//! `AllocateGpuId` in `pkg/type/open-gpu-share/cache/gpunodeinfo.go`); six score plugins
//! (`policy`) and the paper's fragmentation (`frag`) read the same devices.
//!
//! The plugin keeps its own record of the devices, apart from the scheduler's `NodeInfo`:
//! its Filter sees the devices as bound pods hold them, never the what-ifs of the
//! nominated pods or of preemption's victims (they free no device), as upstream's does.
//!
//! The same devices stand for the GPUs a device plugin hands out, so that one record says
//! which GPU each pod holds whatever its form: a node without `alibabacloud.com/gpu-count`
//! has the devices of its whole-GPU resource (`nvidia.com/gpu`, …; with NVIDIA
//! time-slicing, `nvidia.com/gpu.replicas` replicas of each), and a pod asking for k of
//! them takes k whole devices — or, time-sliced, k replicas of 1000/replicas milli each,
//! each on the device with the fewest replicas taken (the device plugin's `distributed`
//! policy, `internal/rm/allocate.go`). kube-scheduler itself counts those resources
//! (NodeResourcesFit); only `Open-Gpu-Share` filters on the devices, and only on nodes with
//! `alibabacloud.com/gpu-count`.

pub mod frag;
pub mod policy;

use crate::model::gpu_share::{GPU_COUNT, GPU_MODEL, GpuShare, MILLI};

/// NVIDIA time-slicing: how many replicas of each GPU the node advertises (the device
/// plugin's GPU feature discovery label).
pub const REPLICAS_LABEL: &str = "nvidia.com/gpu.replicas";
/// The time-sliced resource under `renameByDefault`.
pub const SHARED_RESOURCE: &str = "nvidia.com/gpu.shared";
use crate::model::{Node, Pod, resources};

/// What the policies and fragmentation read of a pod (`simontype.PodResource`): its CPU
/// (the scorers' non-zero request), k GPUs of μ milli each, the models it accepts.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Demand {
    pub cpu_milli: i64,
    /// k: GPUs, or 1 for a pod sharing one; 0 for a pod without GPUs.
    pub gpus: u32,
    /// μ: milli of each GPU; 0 for a pod without GPUs.
    pub milli: i64,
    /// τ: the accepted models as written (`A|B`), empty for any.
    pub spec: String,
    /// Its GPUs are a device plugin's (`nvidia.com/gpu`, …), not the annotations' share: on
    /// a time-sliced node each is a replica.
    pub plugin: bool,
}

impl Demand {
    /// A scheduled pod's demand (`GetPodResource`): its annotations' share, else the
    /// whole GPUs it requests of a device plugin.
    pub fn of(pod: &Pod) -> Self {
        let cpu_milli = (pod.score_requests.get(resources::CPU).copied()).unwrap_or(0);
        match pod.gpu_share.as_deref() {
            Some(s) => Demand {
                cpu_milli,
                gpus: s.count,
                milli: s.milli,
                spec: s.models.clone(),
                plugin: false,
            },
            None => {
                let k = whole_gpus(pod);
                Demand {
                    cpu_milli,
                    gpus: k,
                    milli: if k > 0 { MILLI } else { 0 },
                    spec: String::new(),
                    plugin: k > 0,
                }
            }
        }
    }

    /// g = μ·k, the GPU milli the pod asks for.
    pub fn total_milli(&self) -> i64 {
        self.milli * i64::from(self.gpus)
    }

    /// Whether it takes a share of one device (`IsGpuShare`).
    pub fn shares(&self) -> bool {
        self.gpus == 1 && self.milli < MILLI
    }
}

/// A node's GPUs as the plugin's cache holds them: the model, each device's free milli,
/// and the tags of the GPU pods on it (GpuClustering reads them).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NodeGpus {
    pub model: String,
    pub left: Vec<i64>,
    /// Its devices are `alibabacloud.com/gpu-count`'s (the ones `Open-Gpu-Share` shares).
    pub shared: bool,
    /// Time-slicing replicas per device (1: whole GPUs).
    pub replicas: i64,
    /// Per tag bit ([`policy::tag`]): how many of the node's pods carry it.
    tag_counts: Vec<(u64, u32)>,
}

impl NodeGpus {
    /// The node's devices: `alibabacloud.com/gpu-count` of its allocatable
    /// (`GetGpuCountOfNode`, which reads the node's capacity: schedsim's nodes keep their
    /// allocatable), each of 1000 milli, and the `alibabacloud.com/gpu-card-model` label.
    pub fn of(node: &Node) -> Self {
        let replicas = (node.labels.get(REPLICAS_LABEL))
            .and_then(|r| r.parse::<i64>().ok())
            .filter(|r| *r > 1)
            .unwrap_or(1);
        let shared = node.allocatable.get(GPU_COUNT).copied();
        let (count, replicas) = match shared {
            Some(count) => (count, 1),
            None => {
                let plugin = resources::gpus(&node.allocatable)
                    .or_else(|| node.allocatable.get(SHARED_RESOURCE).copied())
                    .unwrap_or(0);
                (plugin / replicas, replicas)
            }
        };
        let model = match node.labels.get(GPU_MODEL) {
            Some(m) => m.clone(),
            None => node.gpu_product().unwrap_or_default().to_string(),
        };
        NodeGpus {
            model,
            left: vec![MILLI; count.max(0) as usize],
            shared: shared.is_some(),
            replicas,
            tag_counts: Vec::new(),
        }
    }

    /// The devices a device plugin hands a pod asking for `k` of its GPUs: the lowest free
    /// whole devices, or, time-sliced, one replica at a time on the device with the most
    /// milli free (the fewest replicas taken), the lowest index among equals.
    pub fn plugin_devices(&self, k: u32) -> Vec<usize> {
        if self.replicas == 1 {
            return policy::whole_devices(&self.left, k as usize);
        }
        let slice = self.replica_milli();
        let mut left = self.left.clone();
        let mut taken = Vec::with_capacity(k as usize);
        for _ in 0..k {
            let Some(d) = worst_fit(&left, slice) else {
                break;
            };
            left[d] -= slice;
            taken.push(d);
        }
        taken
    }

    /// The milli one time-slicing replica stands for.
    pub fn replica_milli(&self) -> i64 {
        MILLI / self.replicas
    }

    /// The union of its pods' tags.
    pub fn tags(&self) -> u64 {
        self.tag_counts.iter().fold(0, |all, (bit, _)| all | bit)
    }

    /// Takes `milli` of each of `devices` for a pod with tag `tag` (`sign` -1 gives them back).
    pub fn change(&mut self, devices: &[usize], milli: i64, tag: u64, sign: i64) {
        for &d in devices {
            if let Some(left) = self.left.get_mut(d) {
                *left -= sign * milli;
            }
        }
        if tag == 0 {
            return;
        }
        match self.tag_counts.iter().position(|(bit, _)| *bit == tag) {
            Some(i) if sign < 0 => {
                self.tag_counts[i].1 -= 1;
                if self.tag_counts[i].1 == 0 {
                    self.tag_counts.remove(i);
                }
            }
            Some(i) => self.tag_counts[i].1 += 1,
            None if sign > 0 => self.tag_counts.push((tag, 1)),
            None => {}
        }
    }
}

/// The whole GPUs a pod asks a device plugin for (`nvidia.com/gpu`, …, or the time-sliced
/// `nvidia.com/gpu.shared`).
pub fn whole_gpus(pod: &Pod) -> u32 {
    let k = resources::gpus(&pod.requests)
        .or_else(|| pod.requests.get(SHARED_RESOURCE).copied())
        .unwrap_or(0);
    u32::try_from(k.max(0)).unwrap_or(u32::MAX)
}

/// The Filter's question (`GpuNodeInfo.AllocateGpuId`): the GPUs the pod could take on a
/// node with these devices free, or `None` when it does not fit. A pod asking for no GPUs
/// (count 0) fits nowhere; indices given in advance must all have room; one GPU: the
/// fullest device that holds the share, the lowest index among equals; several: the devices
/// in index order, each taking as many of the pod's shares as it holds.
pub fn allocate(left: &[i64], share: &GpuShare) -> Option<Vec<usize>> {
    if share.count == 0 || left.is_empty() {
        return None;
    }
    if let Some(index) = &share.index {
        let room = |&d: &usize| left.get(d).is_some_and(|&l| l >= share.milli);
        return index.iter().all(room).then(|| index.clone());
    }
    if share.count == 1 {
        return best_fit(left, share.milli).map(|d| vec![d]);
    }
    let mut left = left.to_vec();
    let mut taken = Vec::with_capacity(share.count as usize);
    let mut d = 0;
    while d < left.len() && taken.len() < share.count as usize {
        if left[d] >= share.milli {
            taken.push(d);
            left[d] -= share.milli;
        } else {
            d += 1;
        }
    }
    (taken.len() == share.count as usize).then_some(taken)
}

/// The fullest device that holds `milli`, the lowest index among equals.
pub fn best_fit(left: &[i64], milli: i64) -> Option<usize> {
    (0..left.len())
        .filter(|&i| left[i] >= milli)
        .min_by_key(|&i| (left[i], i))
}

/// The emptiest device that holds `milli`, the lowest index among equals.
pub fn worst_fit(left: &[i64], milli: i64) -> Option<usize> {
    (0..left.len())
        .filter(|&i| left[i] >= milli)
        .min_by_key(|&i| (-left[i], i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn share(milli: i64, count: u32) -> GpuShare {
        GpuShare {
            milli,
            count,
            models: String::new(),
            index: None,
        }
    }

    /// `AllocateGpuId`: best fit for one GPU, greedy in index order for several.
    #[test]
    fn the_filter_finds_gpus_as_the_plugin_cache_does() {
        let left = [1000, 300, 500, 300];
        assert_eq!(allocate(&left, &share(300, 1)), Some(vec![1]));
        assert_eq!(allocate(&left, &share(400, 1)), Some(vec![2]));
        assert_eq!(allocate(&left, &share(1000, 1)), Some(vec![0]));
        assert_eq!(allocate(&left, &share(1000, 2)), None);
        assert_eq!(
            allocate(&[1000, 0, 1000], &share(1000, 2)),
            Some(vec![0, 2])
        );
        // Shares of several GPUs pack onto one device while it holds them.
        assert_eq!(allocate(&left, &share(300, 4)), Some(vec![0, 0, 0, 1]));
        // No GPUs asked, or a node without GPUs: no fit.
        assert_eq!(allocate(&left, &share(300, 0)), None);
        assert_eq!(allocate(&[], &share(300, 1)), None);
        // Indices given in advance must have room.
        let given = GpuShare {
            index: Some(vec![2]),
            ..share(500, 1)
        };
        assert_eq!(allocate(&left, &given), Some(vec![2]));
        assert_eq!(allocate(&[1000, 1000, 400], &given), None);
        assert_eq!(worst_fit(&left, 300), Some(0));
        assert_eq!(best_fit(&[100, 200], 400), None);
    }

    /// Time-slicing: 4 replicas of each of 2 GPUs; replicas go to the device with the
    /// fewest taken, so a pod's 3 replicas spread 0, 1, 0.
    #[test]
    fn time_sliced_replicas_go_to_the_least_used_device() {
        let node = Node {
            labels: [(REPLICAS_LABEL.to_string(), "4".to_string())].into(),
            allocatable: [("nvidia.com/gpu".to_string(), 8)].into(),
            ..Default::default()
        };
        let mut gpus = NodeGpus::of(&node);
        assert_eq!(
            (gpus.left.len(), gpus.replicas, gpus.replica_milli()),
            (2, 4, 250)
        );
        assert!(!gpus.shared);
        assert_eq!(gpus.plugin_devices(3), vec![0, 1, 0]);
        gpus.change(&[0, 1, 0], 250, 0, 1);
        assert_eq!(gpus.left, vec![500, 750]);
        assert_eq!(gpus.plugin_devices(2), vec![1, 0]);
        // Whole GPUs: the lowest free ones.
        let whole = Node {
            allocatable: [("nvidia.com/gpu".to_string(), 4)].into(),
            ..Default::default()
        };
        let mut gpus = NodeGpus::of(&whole);
        gpus.change(&[1], 1000, 0, 1);
        assert_eq!(gpus.plugin_devices(2), vec![0, 2]);
    }

    #[test]
    fn tags_follow_the_pods_on_the_node() {
        let mut gpus = NodeGpus {
            model: "T4".into(),
            left: vec![1000; 2],
            replicas: 1,
            ..Default::default()
        };
        gpus.change(&[0], 500, 1, 1);
        gpus.change(&[1], 1000, 2, 1);
        gpus.change(&[0], 200, 1, 1);
        assert_eq!((gpus.tags(), gpus.left.clone()), (3, vec![300, 0]));
        gpus.change(&[1], 1000, 2, -1);
        gpus.change(&[0], 500, 1, -1);
        assert_eq!((gpus.tags(), gpus.left.clone()), (1, vec![800, 1000]));
    }
}
