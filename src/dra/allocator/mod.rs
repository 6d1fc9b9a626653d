//! The structured-parameters allocator: which devices of the ResourceSlices a node can reach
//! satisfy a pod's ResourceClaims. A port of kubernetes
//! `staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/allocator_stable.go`
//! (`Allocate`, `validateDeviceRequest`, `allocateOne`, `isSelectable`, `selectorsMatch`,
//! `allocateDevice`, `matchAttributeConstraint`, `lookupAttribute`, `createNodeSelector`) and
//! the pool gathering of `internal/incubating/pools_incubating.go` (`GatherPools`,
//! `checkSlicesInPool`): an exhaustive depth-first search that takes the first complete
//! solution, claim by claim, request by request, device by device.
//!
//! With DRAConsumableCapacity it follows `internal/experimental/allocator_experimental.go`
//! where that differs: devices that allow multiple allocations are shared by capacity,
//! requests carry `capacity.requests`, and `distinctAttribute` constraints apply
//! (`dra::capacity`). With the gate off it behaves as the experimental allocator with the
//! feature off: a request with capacity requests is an error, and a device that allows
//! multiple allocations is allocated whole (kube-scheduler 1.34 picks the stable allocator
//! when no experimental feature is on, which ignores the fields; the API server drops them
//! with the gate off, so no cluster holds them).
//!
//! Upstream visits pools in Go map order, which is random; schedsim visits them sorted by
//! driver and pool name, so that the same inputs always give the same devices.
//!
//! Partitionable devices (`DRAPartitionableDevices`) follow the stable allocator of the
//! version `tests/data/dra/allocator-cases.yaml` names, where they moved from the
//! experimental one: pools as `pools_incubating.go` builds them (counter-set slices join
//! every node's pool, a pool whose devices consume unknown counters is invalid), per-device
//! node selection in `isSelectable` and `createNodeSelector`, the counters in
//! `allocateDevice` (`dra::counters`). Upstream caches a pool's available counters per
//! `Allocator` by pool name alone; schedsim computes them per `Allocate` by driver and pool,
//! which is the same unless two drivers name a pool alike. Devices shared by capacity
//! (`DRAConsumableCapacity`) follow the 1.34 experimental allocator (`dra::capacity`), and
//! with both features that of the table's version (a shared device's counters count once).
//! Not
//! simulated: binding conditions. Device taints (`DRADeviceTaints`) are checked in
//! `allocateDevice` as upstream's stable allocator does (`dra::taints`).

use std::collections::{BTreeMap, HashMap, HashSet};

use k8s_openapi::api::core::v1::NodeSelector;
use k8s_openapi::api::resource::v1::{DeviceClass, DeviceToleration, ResourceClaim, ResourceSlice};

use super::DeviceId;
use super::capacity;

mod constraints;
mod explain;
mod node_selector;
mod pools;
mod search;
mod selectors;

pub use explain::{ClaimDevices, DeviceReason, RequestDevices};
pub use node_selector::allocation_of;
pub use pools::{searched_devices, unready_pools};
pub use selectors::Selectors;

use node_selector::node_selector;
use pools::{gather_pools, pool_devices};
use search::{Run, Stop};

/// `resourceapi.AllocationResultsMaxSize`.
pub const ALLOCATION_RESULTS_MAX_SIZE: usize = 32;

/// Why allocation failed with an error rather than finding no devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllocateError {
    /// Wraps `ErrFailedAllocationOnNode`: allocation failed on this node only (the scheduler
    /// reports it as the node's reason, and an error only when every node fails).
    OnNode(String),
    /// Allocation cannot work for these claims (a missing class, a CEL error, …).
    Fatal(String),
}

impl AllocateError {
    pub fn message(&self) -> &str {
        match self {
            AllocateError::OnNode(m) | AllocateError::Fatal(m) => m,
        }
    }
}

/// The optional features the allocator honours (`internal.Features`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Features {
    /// DRAPrioritizedList: `firstAvailable` requests.
    pub prioritized_list: bool,
    /// DRAAdminAccess.
    pub admin_access: bool,
    /// DRAPartitionableDevices: counter sets, devices consuming counters, per-device node
    /// selection.
    pub partitionable_devices: bool,
    /// DRAConsumableCapacity.
    pub consumable_capacity: bool,
    /// DRADeviceTaints: untolerated `NoSchedule`/`NoExecute` taints keep a device.
    pub device_taints: bool,
}

/// One allocated device (`DeviceRequestAllocationResult`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct DeviceResult {
    /// The request, or `request/subrequest`.
    pub request: String,
    pub driver: String,
    pub pool: String,
    pub device: String,
    pub admin_access: Option<bool>,
    /// A share of a device that allows multiple allocations ([`capacity::share_id`]).
    pub share_id: Option<String>,
    /// The capacity the share takes, canonical quantities by name; `None` when it takes none.
    pub consumed_capacity: Option<BTreeMap<String, String>>,
    /// The (sub)request's tolerations, copied as upstream copies them, gate or not.
    pub tolerations: Option<Vec<DeviceToleration>>,
}

/// A claim's allocation (`AllocationResult` without configs).
#[derive(Debug, Clone, PartialEq)]
pub struct Allocation {
    pub devices: Vec<DeviceResult>,
    /// Where the devices can be used; `None`: everywhere.
    pub node_selector: Option<NodeSelector>,
}

/// What the allocator reads besides the claims.
pub struct Allocator<'a> {
    pub features: Features,
    /// Devices allocated to other claims.
    pub allocated: &'a HashSet<DeviceId>,
    /// Capacity that other claims' shares hold, per device (`AggregatedCapacity`).
    pub consumed: &'a capacity::Aggregated,
    pub classes: &'a BTreeMap<String, DeviceClass>,
    pub slices: &'a [ResourceSlice],
    pub selectors: &'a Selectors,
}

/// The node an allocation is for: its name, and whether a slice's node selector selects it
/// (the caller's node-affinity matching, `nodeaffinity.NewNodeSelector(…).Match`).
pub struct NodeView<'n> {
    pub name: &'n str,
    pub selects: &'n dyn Fn(&NodeSelector) -> bool,
}

impl<'a> Allocator<'a> {
    /// `Allocate`: one allocation per claim, `None` when they cannot all be allocated on
    /// `node`, an error when allocation cannot work at all (unknown class, CEL error, …).
    pub fn allocate(
        &self,
        node: &NodeView,
        claims: &[&'a ResourceClaim],
    ) -> Result<Option<Vec<Allocation>>, AllocateError> {
        let all: Vec<&'a ResourceSlice> = self.slices.iter().collect();
        self.allocate_among(node, claims, &all)
    }

    /// [`Self::allocate`] over `slices` instead of every slice: the same answer as long as
    /// `slices` holds every slice of each pool that has a slice reaching the node (the
    /// scheduler passes a node's own slices, the slices for all or selected nodes, and the
    /// rest of their pools), since `GatherPools` reads no other.
    pub fn allocate_among(
        &self,
        node: &NodeView,
        claims: &[&'a ResourceClaim],
        slices: &[&'a ResourceSlice],
    ) -> Result<Option<Vec<Allocation>>, AllocateError> {
        let mut run = self.start(node, claims, slices)?;
        if !solve(&mut run)? {
            // Not fatal for other nodes; upstream surfaces it only when every node fails.
            if run.pools.iter().any(|p| p.invalid) {
                return Err(AllocateError::OnNode(
                    "invalid resource pools were encountered".into(),
                ));
            }
            return Ok(None);
        }
        let mut out = Vec::with_capacity(claims.len());
        for (devices, claim) in run.result.iter().zip(claims) {
            let at = devices
                .iter()
                .map(|d| (d.candidate.slice, d.candidate.device));
            let node_selector = node_selector(at).map_err(|e| {
                let name = claim.metadata.name.as_deref().unwrap_or("");
                AllocateError::Fatal(format!("create NodeSelector for claim {name}: {e}"))
            })?;
            out.push(Allocation {
                node_selector,
                devices: (devices.iter().enumerate())
                    .map(|(i, d)| {
                        let (driver, pool, device) = d.candidate.id();
                        let share = d.share.as_ref();
                        let (ns, name) = (&claim.metadata.namespace, &claim.metadata.name);
                        DeviceResult {
                            request: d.request.clone(),
                            driver,
                            pool,
                            device,
                            admin_access: d.admin_access,
                            share_id: share.map(|_| {
                                capacity::share_id(
                                    ns.as_deref().unwrap_or(""),
                                    name.as_deref().unwrap_or(""),
                                    i,
                                )
                            }),
                            consumed_capacity: (share.filter(|c| !c.is_empty())).map(|c| {
                                (c.iter().map(|(k, q)| (k.clone(), q.canonical()))).collect()
                            }),
                            tolerations: (!d.tolerations.is_empty())
                                .then(|| d.tolerations.to_vec()),
                        }
                    })
                    .collect(),
            });
        }
        Ok(Some(out))
    }

    /// An `Allocate` call over `slices`, its requests checked, before its search.
    fn start<'c>(
        &'c self,
        node: &'c NodeView<'c>,
        claims: &'c [&'a ResourceClaim],
        slices: &[&'a ResourceSlice],
    ) -> Result<Run<'a, 'c>, AllocateError> {
        let pools = gather_pools(slices, node, self.features);
        let devices = pool_devices(&pools);
        let mut run = Run {
            alloc: self,
            node,
            claims,
            devices,
            pools,
            requests: HashMap::new(),
            constraints: Vec::new(),
            matches: HashMap::new(),
            allocating: HashMap::new(),
            counters: HashMap::new(),
            allocating_capacity: HashMap::new(),
            result: (0..claims.len()).map(|_| Vec::new()).collect(),
        };
        run.validate().map_err(AllocateError::Fatal)?;
        Ok(run)
    }
}

/// The search of a started run: whether it found a solution, which the run then holds.
fn solve(run: &mut Run) -> Result<bool, AllocateError> {
    match run.allocate_one((0, 0, 0, 0), false) {
        Ok(found) => Ok(found),
        // The first claim's requests alone exceed the limit (`errAllocationResultMaxSizeExceeded`
        // is only absorbed between claims, and `Allocate` returns it as it is).
        Err(Stop::MaxSize) => Err(AllocateError::Fatal("allocation max size exceeded".into())),
        Err(Stop::Error(e)) => Err(AllocateError::Fatal(e)),
    }
}
