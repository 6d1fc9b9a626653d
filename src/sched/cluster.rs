//! The cluster as the scheduler tracks it: nodes with dense, integer resource vectors and the
//! usage of the pods bound to them. Usage updates in place after every bind.

use std::collections::BTreeSet;

use crate::model::resources::{self, ResourceList};
use crate::model::{Node, Pod};
use crate::sched::device_room::DeviceRoom;
use crate::sched::gpu_share::NodeGpus;
use crate::sched::resource_set::ResourceSet;

/// Dense indices of the resource names of one scenario. cpu, memory and ephemeral-storage come
/// first (upstream checks them in that order); extended resources follow, sorted by name.
#[derive(Debug, Clone)]
pub struct ResourceTable {
    names: Vec<String>,
}

pub const CPU: usize = 0;
pub const MEMORY: usize = 1;
pub const EPHEMERAL_STORAGE: usize = 2;

impl ResourceTable {
    pub fn new<'a>(lists: impl IntoIterator<Item = &'a ResourceList>) -> Self {
        let mut scalars = BTreeSet::new();
        for list in lists {
            for name in list.keys() {
                if ![
                    resources::CPU,
                    resources::MEMORY,
                    resources::EPHEMERAL_STORAGE,
                    resources::PODS,
                ]
                .contains(&name.as_str())
                {
                    scalars.insert(name.clone());
                }
            }
        }
        let mut names = vec![
            resources::CPU.into(),
            resources::MEMORY.into(),
            resources::EPHEMERAL_STORAGE.into(),
        ];
        names.extend(scalars);
        ResourceTable { names }
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    pub fn name(&self, i: usize) -> &str {
        &self.names[i]
    }

    pub fn index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// Dense vector of a resource list (names not in the table are dropped: nothing requests them).
    pub fn dense(&self, list: &ResourceList) -> Vec<i64> {
        self.names
            .iter()
            .map(|n| list.get(n).copied().unwrap_or(0))
            .collect()
    }

    /// Sparse (index, amount) pairs of the non-zero entries, in table order.
    pub fn sparse(&self, list: &ResourceList) -> Vec<(usize, i64)> {
        self.names
            .iter()
            .enumerate()
            .filter_map(|(i, n)| list.get(n).copied().filter(|v| *v != 0).map(|v| (i, v)))
            .collect()
    }

    /// Back to a named list, dropping zeros.
    pub fn named(&self, dense: &[i64]) -> ResourceList {
        self.names
            .iter()
            .zip(dense)
            .filter(|(_, v)| **v != 0)
            .map(|(n, v)| (n.clone(), *v))
            .collect()
    }
}

/// A pod's requests in the table's indices.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PodRequest {
    /// Non-zero exact requests (filtering; BalancedAllocation).
    pub sparse: Vec<(usize, i64)>,
    /// cpu and memory with the scorers' defaults for missing container requests.
    pub nonzero_cpu: i64,
    pub nonzero_memory: i64,
    /// The resources NodeResourcesFit leaves to DynamicResources on a node that does not
    /// publish them (DRAExtendedResource; see `node_resources_fit::dra_delegable`).
    pub dra_delegable: ResourceSet,
}

impl PodRequest {
    pub fn new(table: &ResourceTable, pod: &Pod) -> Self {
        PodRequest {
            sparse: table.sparse(&pod.requests),
            nonzero_cpu: pod.score_requests.get(resources::CPU).copied().unwrap_or(0),
            nonzero_memory: pod
                .score_requests
                .get(resources::MEMORY)
                .copied()
                .unwrap_or(0),
            dra_delegable: ResourceSet::default(),
        }
    }

    pub fn get(&self, index: usize) -> i64 {
        self.sparse
            .iter()
            .find(|(i, _)| *i == index)
            .map_or(0, |(_, v)| *v)
    }
}

/// Nodes plus their live usage, in structure-of-arrays form for the hot loop.
#[derive(Debug, Clone)]
pub struct Cluster {
    pub nodes: Vec<Node>,
    pub table: ResourceTable,
    width: usize,
    allocatable: Vec<i64>,
    requested: Vec<i64>,
    nonzero_requested: Vec<[i64; 2]>,
    pod_count: Vec<i64>,
    allowed_pods: Vec<i64>,
    /// Per node: the resources its allocatable lists, even as 0 (see [`NodeResources`]).
    published: Vec<ResourceSet>,
    /// Bumped whenever a node's usage changes, so per-node results can be cached.
    version: Vec<u32>,
    /// Node indices by name (the first node of a name).
    by_name: std::collections::HashMap<String, u32>,
    /// The nodes with room for a few devices of each extended resource.
    room: DeviceRoom,
    /// Per node: its GPUs as `Open-Gpu-Share` tracks them (`sched::gpu_share`).
    pub gpus: Vec<NodeGpus>,
}

/// One node's resource view, as `NodeInfo` offers it to the resource plugins.
#[derive(Debug, Clone, Copy)]
pub struct NodeResources<'a> {
    pub allocatable: &'a [i64],
    pub requested: &'a [i64],
    pub nonzero_requested: [i64; 2],
    pub pod_count: i64,
    pub allowed_pods: i64,
    /// The resources (table bits) the node's `status.allocatable` lists, whatever the amount:
    /// upstream's `NodeInfo.Allocatable.ScalarResources` has a key for each, which is how
    /// 1.34 tells a device-plugin resource from one left to DRA.
    pub published: &'a ResourceSet,
}

impl Cluster {
    pub fn new(nodes: Vec<Node>, pods: &[&Pod]) -> Self {
        let table = ResourceTable::new(
            nodes
                .iter()
                .map(|n| &n.allocatable)
                .chain(pods.iter().map(|p| &*p.requests)),
        );
        let width = table.len();
        let mut allocatable = Vec::with_capacity(nodes.len() * width);
        let mut allowed_pods = Vec::with_capacity(nodes.len());
        let mut published = Vec::with_capacity(nodes.len());
        for n in &nodes {
            allocatable.extend(table.dense(&n.allocatable));
            allowed_pods.push(n.allocatable.get(resources::PODS).copied().unwrap_or(0));
            published.push(
                (n.allocatable.keys())
                    .filter_map(|name| table.index(name))
                    .collect(),
            );
        }
        let mut by_name = std::collections::HashMap::with_capacity(nodes.len());
        for (i, n) in nodes.iter().enumerate() {
            by_name.entry(n.name.clone()).or_insert(i as u32);
        }
        Cluster {
            gpus: nodes.iter().map(NodeGpus::of).collect(),
            by_name,
            room: DeviceRoom::default(),
            requested: vec![0; allocatable.len()],
            nonzero_requested: vec![[0, 0]; nodes.len()],
            pod_count: vec![0; nodes.len()],
            version: vec![0; nodes.len()],
            nodes,
            table,
            width,
            allocatable,
            allowed_pods,
            published,
        }
    }

    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).map(|&i| i as usize)
    }

    pub fn resources(&self, node: usize) -> NodeResources<'_> {
        let r = node * self.width..(node + 1) * self.width;
        NodeResources {
            allocatable: &self.allocatable[r.clone()],
            requested: &self.requested[r],
            nonzero_requested: self.nonzero_requested[node],
            pod_count: self.pod_count[node],
            allowed_pods: self.allowed_pods[node],
            published: &self.published[node],
        }
    }

    /// Adds (or, with `sign = -1`, removes) a pod's usage on a node.
    pub fn account(&mut self, node: usize, request: &PodRequest, sign: i64) {
        let base = node * self.width;
        for &(i, v) in &request.sparse {
            let (allocatable, requested) = (self.allocatable[base + i], self.requested[base + i]);
            self.requested[base + i] = requested + sign * v;
            if i > EPHEMERAL_STORAGE && self.published[node].contains(i) {
                let before = allocatable - requested;
                (self.room).changed(node, i, before, before - sign * v);
            }
        }
        self.nonzero_requested[node][0] += sign * request.nonzero_cpu;
        self.nonzero_requested[node][1] += sign * request.nonzero_memory;
        self.pod_count[node] += sign;
        self.version[node] = self.version[node].wrapping_add(1);
    }

    /// What GPU sharing's policies and fragmentation read of a node: its free CPU (allocatable
    /// less the exact requests bound there, as the FGD simulator's `NodeResource` has it) and
    /// its devices.
    pub fn gpu_view(&self, node: usize) -> crate::sched::gpu_share::frag::NodeView<'_> {
        let gpus = &self.gpus[node];
        let r = self.resources(node);
        crate::sched::gpu_share::frag::NodeView {
            cpu_left: r.allocatable[CPU] - r.requested[CPU],
            gpu_left: &gpus.left,
            model: &gpus.model,
            replica_milli: gpus.replica_milli(),
        }
    }

    /// The resources (table bits) the node's allocatable lists.
    pub fn published(&self, node: usize) -> &ResourceSet {
        &self.published[node]
    }

    /// The node's usage version: equal versions mean equal usage.
    pub fn version(&self, node: usize) -> u32 {
        self.version[node]
    }

    /// Indexes the nodes by the devices they have free (see [`DeviceRoom`]), over their
    /// `slot`s (a permutation: the Filter pass's order), from now on.
    pub fn index_devices(&mut self, slot: &[u32]) {
        let w = self.width;
        self.room = DeviceRoom::new(slot, w, EPHEMERAL_STORAGE + 1, |node, r| {
            (self.published[node].contains(r))
                .then(|| self.allocatable[node * w + r] - self.requested[node * w + r])
        });
    }

    /// The slots of the nodes that do not list resource `r` or have at least `amount` of it
    /// free, as a bitset, when that is indexed (see [`Self::index_devices`]).
    pub fn slots_with_room(&self, r: usize, amount: i64) -> Option<&[u64]> {
        self.room.slots_with_room(r, amount)
    }

    pub fn allocatable_named(&self, node: usize) -> ResourceList {
        let mut list = self.table.named(self.resources(node).allocatable);
        list.insert(resources::PODS.into(), self.allowed_pods[node]);
        list
    }

    pub fn requested_named(&self, node: usize) -> ResourceList {
        let mut list = self.table.named(self.resources(node).requested);
        list.insert(resources::PODS.into(), self.pod_count[node]);
        list
    }
}

/// A copy of one node's usage to try changes on (preemption's "what if these pods left").
#[derive(Debug, Clone)]
pub struct NodeTrial {
    allocatable: Vec<i64>,
    requested: Vec<i64>,
    nonzero_requested: [i64; 2],
    pod_count: i64,
    allowed_pods: i64,
    published: ResourceSet,
}

impl NodeTrial {
    pub fn view(&self) -> NodeResources<'_> {
        NodeResources {
            allocatable: &self.allocatable,
            requested: &self.requested,
            nonzero_requested: self.nonzero_requested,
            pod_count: self.pod_count,
            allowed_pods: self.allowed_pods,
            published: &self.published,
        }
    }

    pub fn add(&mut self, request: &PodRequest) {
        self.change(request, 1);
    }

    pub fn remove(&mut self, request: &PodRequest) {
        self.change(request, -1);
    }

    fn change(&mut self, request: &PodRequest, sign: i64) {
        for &(i, v) in &request.sparse {
            self.requested[i] += sign * v;
        }
        self.nonzero_requested[0] += sign * request.nonzero_cpu;
        self.nonzero_requested[1] += sign * request.nonzero_memory;
        self.pod_count += sign;
    }
}

impl Cluster {
    pub fn clone_node(&self, node: usize) -> NodeTrial {
        let r = self.resources(node);
        NodeTrial {
            allocatable: r.allocatable.to_vec(),
            requested: r.requested.to_vec(),
            nonzero_requested: r.nonzero_requested,
            pod_count: r.pod_count,
            allowed_pods: r.allowed_pods,
            published: r.published.clone(),
        }
    }
}
