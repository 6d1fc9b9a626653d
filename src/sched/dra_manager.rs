//! The DRA objects as the scheduler sees them while it runs: kube-scheduler's
//! `DefaultDRAManager` (`pkg/scheduler/framework/plugins/dynamicresources/dra_manager.go`:
//! `claimTracker` over the claims' assume cache, the allocated-devices index of
//! `allocateddevices.go`) and, where bound pods go away, what the resourceclaim controller
//! (`pkg/controller/resourceclaim/controller.go`, `syncClaim`) does to their claims.
//!
//! The scenario's inventory is shared and never copied: claims the run changes (allocated,
//! reserved, deallocated, deleted, and the extended-resource claims it creates) live in an
//! overlay. Devices are numbered once; per node it
//! keeps the devices the allocator searches there and a version that moves whenever one of
//! them is taken or freed, so the plugin can cache its Filter verdicts per node. With
//! DRAPartitionableDevices, taking or freeing a device that consumes counters also moves the
//! version of every node that searches a device of its pool consuming counters: whether
//! that device fits depends on it.
//!
//! With DRAConsumableCapacity a result with a `shareID` is a share of a device that allows
//! multiple allocations (`foreachAllocatedDevice`'s shared callback): it does not hold the
//! device, but the capacity it takes adds to the device's `AggregatedCapacity` until its
//! claim is deallocated. Taking or giving back a share moves the versions as taking or
//! freeing a device does.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

use k8s_openapi::api::resource::v1::{
    AllocationResult, Device, DeviceAllocationResult, DeviceRequestAllocationResult, ResourceClaim,
    ResourceClaimConsumerReference, ResourceClaimStatus, ResourceSlice,
};

use crate::dra::DeviceId;
use crate::dra::Inventory;
use crate::dra::allocator::{self, NodeView};
use crate::dra::capacity::{self, Consumed};
use crate::dra::{counters, extended, resourceclaim};
use crate::model::{Node, Pod};
use crate::sched::plugins::node_affinity;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

/// `resourceapi.ResourceClaimReservedForMaxSize`: `CanBeReserved` holds below it.
pub const RESERVED_FOR_MAX_SIZE: usize = 256;

/// `resourceapi.Finalizer`, which the scheduler adds when it allocates a claim.
pub const FINALIZER: &str = "resource.kubernetes.io/delete-protection";

/// What the run has done to the scenario's claims, and which devices are in use.
pub struct DraManager {
    inventory: Arc<Inventory>,
    /// Claims changed during the run, by namespace and name: `Some` the current object,
    /// `None` deleted.
    changed: HashMap<String, HashMap<String, Option<ResourceClaim>>>,
    /// Devices allocated to claims (admin-access results excluded), as the allocator takes them.
    allocated: HashSet<DeviceId>,
    /// Capacity held by shares, per device (`AggregatedCapacity`).
    consumed: capacity::Aggregated,
    /// DRAConsumableCapacity is on and some device allows multiple allocations or some claim
    /// holds a share: a claim's allocation is then no count of free devices.
    shares_capacity: bool,
    /// Device numbers by id: one per (driver, pool, device), whatever slice lists it.
    device_index: HashMap<DeviceId, u32>,
    /// Slots: one per device entry of every slice (`slot_offset[slice] + position`), with its
    /// device number.
    slot_offset: Vec<u32>,
    slot_device: Vec<u32>,
    /// Per device: allocated to a claim.
    in_use: Vec<bool>,
    /// Per device: the node whose own slice publishes it (`spec.nodeName`), else `None`.
    device_node: Vec<Option<String>>,
    /// Per device: it consumes counters.
    device_consumes: Vec<bool>,
    /// With partitionable devices, per pool: the nodes that search a device of it that
    /// consumes counters.
    counter_nodes: HashMap<(String, String), Vec<usize>>,
    /// The allocator's optional features (the scheduler's gates).
    features: allocator::Features,
    /// Slices by `spec.nodeName`; slices for all nodes or selected nodes; slices by pool.
    slices_by_node: HashMap<String, Vec<usize>>,
    shared_slices: Vec<usize>,
    slices_by_pool: HashMap<(String, String), Vec<usize>>,
    /// Per node (cluster order): the slices the allocator needs for it (see
    /// [`allocator::Allocator::allocate_among`]), its searched devices and whether a pool
    /// reaching it is invalid, and its version.
    nodes: Vec<NodeDevices>,
    node_by_name: HashMap<String, usize>,
    /// Moves when a device of a slice for all or selected nodes is taken or freed: such a
    /// device may be searched on any node.
    pub global_version: u32,
    /// Compiled CEL selectors, by expression, shared by every allocation of the run.
    pub selectors: allocator::Selectors,
    /// Extended resource name → the DeviceClass backing it (DRAExtendedResource; the classes
    /// do not change during a run, so it is built once).
    extended_classes: BTreeMap<String, String>,
    /// Pod UID → the extended-resource claims naming it as controller, by namespace and
    /// name (what `findExtendedResourceClaim` looks for among all claims).
    extended_claims: HashMap<String, Vec<(String, String)>>,
}

/// A node's view of the devices.
#[derive(Debug, Default, Clone)]
pub struct NodeDevices {
    pub slices: Vec<usize>,
    /// The slots of the devices the allocator searches on the node, in its order.
    pub devices: Vec<u32>,
    /// Some pool that reaches the node is invalid.
    pub invalid_pool: bool,
    /// Some searched device comes from a slice for all or selected nodes.
    pub shared: bool,
    /// Some searched device consumes counters or chooses its nodes itself: whether the
    /// allocator takes it depends on more than it being free and matching (the plugin's
    /// count shortcut does not apply).
    pub partitionable: bool,
    pub version: u32,
}

fn key_of(claim: &ResourceClaim) -> (String, String) {
    (
        claim.metadata.namespace.clone().unwrap_or_default(),
        claim.metadata.name.clone().unwrap_or_default(),
    )
}

/// The UIDs of the pods an extended-resource claim names as controller.
fn extended_owners(claim: &ResourceClaim) -> Vec<String> {
    let annotated = (claim.metadata.annotations.as_ref())
        .and_then(|a| a.get(extended::EXTENDED_RESOURCE_CLAIM_ANNOTATION))
        .is_some_and(|v| v == "true");
    match annotated {
        true => (claim.metadata.owner_references.iter().flatten())
            .filter(|o| o.controller == Some(true))
            .map(|o| o.uid.clone())
            .collect(),
        false => Vec::new(),
    }
}

/// The devices a claim's allocation holds (`foreachAllocatedDevice`): every result but
/// those with admin access.
pub fn allocated_devices_of(claim: &ResourceClaim) -> impl Iterator<Item = DeviceId> + '_ {
    (claim.status.iter())
        .filter_map(|s| s.allocation.as_ref()?.devices.as_ref())
        .flat_map(|d| d.results.iter().flatten())
        .filter(|r| r.admin_access != Some(true))
        .map(|r| (r.driver.clone(), r.pool.clone(), r.device.clone()))
}

/// What a claim's allocation holds (`foreachAllocatedDevice`): the devices it holds whole,
/// and with DRAConsumableCapacity its shares (results with a `shareID`) with the capacity
/// each takes. Admin-access results hold nothing.
pub fn holdings(
    claim: &ResourceClaim,
    consumable: bool,
) -> (Vec<DeviceId>, Vec<(DeviceId, Consumed)>) {
    let (mut whole, mut shares) = (Vec::new(), Vec::new());
    let results = (claim.status.iter())
        .filter_map(|s| s.allocation.as_ref()?.devices.as_ref())
        .flat_map(|d| d.results.iter().flatten())
        .filter(|r| r.admin_access != Some(true));
    for r in results {
        let id = (r.driver.clone(), r.pool.clone(), r.device.clone());
        match (consumable, &r.share_id) {
            (true, Some(_)) => {
                let taken = r.consumed_capacity.as_ref().map(capacity::from_status);
                shares.push((id, taken.unwrap_or_default()));
            }
            _ => whole.push(id),
        }
    }
    (whole, shares)
}

impl DraManager {
    pub fn new(inventory: Arc<Inventory>, nodes: &[Node], features: allocator::Features) -> Self {
        let mut device_index = HashMap::new();
        let mut device_node = Vec::new();
        let mut device_consumes = Vec::new();
        let mut slot_offset = Vec::new();
        let mut slot_device = Vec::new();
        let mut slices_by_node: HashMap<String, Vec<usize>> = HashMap::new();
        let mut shared_slices = Vec::new();
        let mut slices_by_pool: HashMap<(String, String), Vec<usize>> = HashMap::new();
        for (i, slice) in inventory.slices.iter().enumerate() {
            let spec = &slice.spec;
            match spec.node_name.as_deref().filter(|n| !n.is_empty()) {
                Some(n) => slices_by_node.entry(n.to_string()).or_default().push(i),
                None => shared_slices.push(i),
            }
            (slices_by_pool.entry((spec.driver.clone(), spec.pool.name.clone())))
                .or_default()
                .push(i);
            slot_offset.push(slot_device.len() as u32);
            for d in spec.devices.iter().flatten() {
                let id = (spec.driver.clone(), spec.pool.name.clone(), d.name.clone());
                let next = device_node.len() as u32;
                let number = *device_index.entry(id).or_insert_with(|| {
                    device_node.push(spec.node_name.clone().filter(|n| !n.is_empty()));
                    device_consumes.push(false);
                    next
                });
                device_consumes[number as usize] |= counters::consumes(d);
                slot_device.push(number);
            }
        }
        if features.partitionable_devices {
            shared_slices.extend(unready_counter_pools(&inventory, &slices_by_pool, features));
            shared_slices.sort_unstable();
            shared_slices.dedup();
        }
        let mut allocated = HashSet::new();
        let mut consumed = capacity::Aggregated::new();
        let mut shares_capacity = features.consumable_capacity
            && (inventory.slices.iter())
                .flat_map(|s| s.spec.devices.iter().flatten())
                .any(|d| d.allow_multiple_allocations == Some(true));
        for claim in inventory.claims() {
            let (whole, shares) = holdings(claim, features.consumable_capacity);
            allocated.extend(whole);
            for (id, taken) in shares {
                capacity::insert(&mut consumed, &id, &taken);
                shares_capacity = true;
            }
        }
        let mut in_use = vec![false; device_node.len()];
        for id in &allocated {
            if let Some(&i) = device_index.get(id) {
                in_use[i as usize] = true;
            }
        }
        let mut extended_claims: HashMap<String, Vec<(String, String)>> = HashMap::new();
        for claim in inventory.claims() {
            for uid in extended_owners(claim) {
                extended_claims.entry(uid).or_default().push(key_of(claim));
            }
        }
        let extended_classes = extended::device_class_mapping(&inventory.classes);
        let mut m = DraManager {
            extended_classes,
            extended_claims,
            inventory,
            changed: HashMap::new(),
            allocated,
            consumed,
            shares_capacity,
            device_index,
            slot_offset,
            slot_device,
            in_use,
            device_node,
            device_consumes,
            counter_nodes: HashMap::new(),
            features,
            slices_by_node,
            shared_slices,
            slices_by_pool,
            nodes: Vec::new(),
            node_by_name: HashMap::new(),
            global_version: 0,
            selectors: allocator::Selectors::default(),
        };
        m.reindex(nodes);
        m
    }

    /// The node list changed (cordon, failure, new nodes): per-node views are rebuilt.
    pub fn reindex(&mut self, nodes: &[Node]) {
        if self.inventory.slices.is_empty() {
            // No device anywhere: every node's view is empty (see `node`).
            return;
        }
        self.node_by_name = (nodes.iter().enumerate())
            .map(|(i, n)| (n.name.clone(), i))
            .collect();
        self.nodes = nodes.iter().map(|n| self.node_devices(n)).collect();
        self.counter_nodes.clear();
        if !self.features.partitionable_devices {
            return;
        }
        for (n, view) in self.nodes.iter().enumerate() {
            let mut pools: Vec<(String, String)> = (view.devices.iter())
                .map(|&slot| self.device(slot))
                .filter(|(_, d)| counters::consumes(d))
                .map(|(s, _)| (s.spec.driver.clone(), s.spec.pool.name.clone()))
                .collect();
            pools.sort_unstable();
            pools.dedup();
            for pool in pools {
                self.counter_nodes.entry(pool).or_default().push(n);
            }
        }
    }

    fn node_devices(&self, node: &Node) -> NodeDevices {
        let own = self
            .slices_by_node
            .get(&node.name)
            .map_or(&[][..], Vec::as_slice);
        let mut pools: Vec<(&str, &str)> = (own.iter().chain(&self.shared_slices))
            .map(|&i| {
                let spec = &self.inventory.slices[i].spec;
                (spec.driver.as_str(), spec.pool.name.as_str())
            })
            .collect();
        pools.sort_unstable();
        pools.dedup();
        let mut slices: Vec<usize> = (pools.iter())
            .flat_map(|(d, p)| &self.slices_by_pool[&(d.to_string(), p.to_string())])
            .copied()
            .collect();
        slices.sort_unstable();
        slices.dedup();
        let refs = self.slice_refs(&slices);
        let selects = |s: &k8s_openapi::api::core::v1::NodeSelector| {
            node_affinity::terms_match(&s.node_selector_terms, node)
        };
        let view = NodeView {
            name: &node.name,
            selects: &selects,
        };
        let (found, invalid_pool) = allocator::searched_devices(&refs, &view, self.features);
        let (mut shared, mut partitionable) = (false, false);
        let devices = (found.iter())
            .map(|&(s, d)| {
                shared |= s.spec.node_name.as_deref().is_none_or(str::is_empty);
                partitionable |=
                    counters::consumes(d) || s.spec.per_device_node_selection == Some(true);
                let at = (refs.iter())
                    .position(|r| std::ptr::eq(*r, s))
                    .expect("from refs");
                let position = (s.spec.devices.iter().flatten())
                    .position(|x| std::ptr::eq(x, d))
                    .expect("from the slice");
                self.slot_offset[slices[at]] + position as u32
            })
            .collect();
        NodeDevices {
            slices,
            devices,
            invalid_pool,
            shared,
            partitionable,
            version: 0,
        }
    }

    pub fn inventory(&self) -> &Inventory {
        &self.inventory
    }

    /// The slices at `indices`, for the allocator.
    pub fn slice_refs(&self, indices: &[usize]) -> Vec<&ResourceSlice> {
        indices.iter().map(|&i| &self.inventory.slices[i]).collect()
    }

    /// A node's view, by its index in the cluster.
    pub fn node(&self, node: usize) -> &NodeDevices {
        static NONE: NodeDevices = NodeDevices {
            slices: Vec::new(),
            devices: Vec::new(),
            invalid_pool: false,
            shared: false,
            partitionable: false,
            version: 0,
        };
        self.nodes.get(node).unwrap_or(&NONE)
    }

    /// The device in slot `slot`: its slice and the device object.
    pub fn device(&self, slot: u32) -> (&ResourceSlice, &Device) {
        let slice = self.slot_offset.partition_point(|&o| o <= slot) - 1;
        let s = &self.inventory.slices[slice];
        let position = (slot - self.slot_offset[slice]) as usize;
        let device = (s.spec.devices.iter().flatten())
            .nth(position)
            .expect("a slot is a device of its slice");
        (s, device)
    }

    /// Whether the device in slot `slot` is allocated to a claim.
    pub fn is_in_use(&self, slot: u32) -> bool {
        self.in_use[self.slot_device[slot as usize] as usize]
    }

    /// How many slots there are (device entries of every slice).
    pub fn slots(&self) -> usize {
        self.slot_device.len()
    }

    /// The devices allocated to claims, as the allocator reads them.
    pub fn allocated(&self) -> &HashSet<DeviceId> {
        &self.allocated
    }

    /// The capacity shares hold, per device, as the allocator reads it.
    pub fn consumed(&self) -> &capacity::Aggregated {
        &self.consumed
    }

    /// DRAConsumableCapacity.
    pub fn consumable_capacity(&self) -> bool {
        self.features.consumable_capacity
    }

    /// DRADeviceTaints.
    pub fn device_taints(&self) -> bool {
        self.features.device_taints
    }

    /// With DRAConsumableCapacity, some device allows multiple allocations or some claim
    /// holds a share: Filter's count of free devices does not apply (with the gate off every
    /// device is allocated whole, and the count holds).
    pub fn shares_capacity(&self) -> bool {
        self.shares_capacity
    }

    /// The DeviceClass backing an extended resource, if one does (`DeviceClassMapping`).
    pub fn extended_class(&self, resource: &str) -> Option<&str> {
        self.extended_classes.get(resource).map(String::as_str)
    }

    /// Extended resource name → DeviceClass, for every class.
    pub fn extended_classes(&self) -> &BTreeMap<String, String> {
        &self.extended_classes
    }

    /// `findExtendedResourceClaim`: the extended-resource claim an earlier cycle created for
    /// the pod, if it still exists (the first by namespace and name; upstream takes the first
    /// the informer lists).
    pub fn extended_claim_of(&self, pod: &Pod) -> Option<(String, String)> {
        let keys = self.extended_claims.get(&pod.uid)?;
        (keys.iter())
            .filter(|(ns, name)| {
                self.claim(ns, name)
                    .is_some_and(|c| extended::is_claim_of(c, pod))
            })
            .min()
            .cloned()
    }

    /// PreBind's `Create` of the pod's extended-resource claim: the claim Filter built for the
    /// node gets a name from its `generateName` (the API server's five characters, drawn from a
    /// hash of `seed` and the pod as the resourceclaim controller draws them), and is then
    /// allocated and reserved for the pod as any claim ([`DraManager::reserve`]). Returns its
    /// name.
    pub fn create_extended_claim(
        &mut self,
        mut claim: ResourceClaim,
        pod: &Pod,
        allocation: AllocationResult,
        seed: u64,
    ) -> String {
        let base = claim.metadata.generate_name.clone().unwrap_or_default();
        let name = (0u32..)
            .map(|attempt| {
                let hash = crate::model::generated_names::stable_hash(&[
                    &seed.to_string(),
                    &pod.namespace,
                    &pod.name,
                    &pod.uid,
                    extended::SPECIAL_CLAIM_IN_MEM_NAME,
                    &attempt.to_string(),
                ]);
                crate::model::generated_names::generated_name(&base, hash)
            })
            .find(|n| self.claim(&pod.namespace, n).is_none())
            .expect("some drawn name is free");
        claim.metadata.name = Some(name.clone());
        claim.status = None;
        (self.extended_claims.entry(pod.uid.clone()).or_default())
            .push((pod.namespace.clone(), name.clone()));
        self.set_claim(claim);
        self.reserve(&pod.namespace, &name, pod, Some(allocation));
        name
    }

    /// Whether the pod may hold claims: its own, or an extended-resource claim.
    pub fn holds_claims(&self, pod: &Pod) -> bool {
        !pod.resource_claims.is_empty() || self.extended_claims.contains_key(&pod.uid)
    }

    /// Deletes a claim (PostFilter's and Unreserve's `deleteClaim`, after the finalizer is
    /// removed): the devices it held are free again.
    pub fn delete_claim(&mut self, namespace: &str, name: &str) {
        let Some(claim) = self.claim(namespace, name).cloned() else {
            return;
        };
        self.hold(&claim, false);
        (self.changed.entry(namespace.to_string()).or_default()).insert(name.to_string(), None);
    }

    /// The claim `namespace/name` as it is now (`ResourceClaims().Get`).
    pub fn claim(&self, namespace: &str, name: &str) -> Option<&ResourceClaim> {
        match self.changed.get(namespace).and_then(|n| n.get(name)) {
            Some(changed) => changed.as_ref(),
            None => self.inventory.claim(namespace, name),
        }
    }

    /// Every claim as it is now, by namespace and name.
    pub fn claims(&self) -> Vec<&ResourceClaim> {
        let mut out: BTreeMap<(String, String), &ResourceClaim> = BTreeMap::new();
        for c in self.inventory.claims() {
            out.insert(key_of(c), c);
        }
        for (ns, changed) in &self.changed {
            for (name, c) in changed {
                let k = (ns.clone(), name.clone());
                match c {
                    Some(c) => out.insert(k, c),
                    None => out.remove(&k),
                };
            }
        }
        out.into_values().collect()
    }

    /// The claims of a pod's `spec.resourceClaims` that exist, with their keys.
    fn pod_claim_keys(&self, pod: &Pod) -> Vec<(String, String)> {
        (pod.resource_claims.iter())
            .filter_map(|pc| resourceclaim::name(pod, pc).ok().flatten())
            .map(|n| (pod.namespace.clone(), n.name.to_string()))
            .filter(|(ns, name)| self.claim(ns, name).is_some())
            .collect()
    }

    fn set_claim(&mut self, claim: ResourceClaim) {
        let (ns, name) = key_of(&claim);
        self.changed
            .entry(ns)
            .or_default()
            .insert(name, Some(claim));
    }

    /// Marks devices taken or freed, moving the versions of the nodes that search them.
    fn mark(&mut self, id: &DeviceId, used: bool) {
        if used {
            self.allocated.insert(id.clone());
        } else {
            self.allocated.remove(id);
        }
        let Some(&i) = self.device_index.get(id) else {
            return;
        };
        self.in_use[i as usize] = used;
        self.touch(id, i);
    }

    /// Takes (`held`) or gives back what a claim's allocation holds: its devices and shares.
    fn hold(&mut self, claim: &ResourceClaim, held: bool) {
        let (whole, shares) = holdings(claim, self.features.consumable_capacity);
        for id in &whole {
            self.mark(id, held);
        }
        for (id, taken) in &shares {
            match held {
                true => capacity::insert(&mut self.consumed, id, taken),
                false => capacity::remove(&mut self.consumed, id, taken),
            }
            self.shares_capacity = true;
            if let Some(&i) = self.device_index.get(id) {
                self.touch(id, i);
            }
        }
    }

    /// A device's use changed: the versions of the nodes that search it move, and with
    /// DRAPartitionableDevices those of every node searching a device of its pool that
    /// consumes counters, when it consumes some.
    fn touch(&mut self, id: &DeviceId, i: u32) {
        if self.features.partitionable_devices && self.device_consumes[i as usize] {
            let pool = (id.0.clone(), id.1.clone());
            for &n in self.counter_nodes.get(&pool).into_iter().flatten() {
                self.nodes[n].version += 1;
            }
        }
        match self.device_node[i as usize]
            .as_ref()
            .and_then(|n| self.node_by_name.get(n))
        {
            Some(&n) => self.nodes[n].version += 1,
            None => self.global_version += 1,
        }
    }

    /// Reserve + PreBind (`bindClaim`): the claim gets `allocation` if it had none (with the
    /// scheduler's finalizer), and the pod is added to `status.reservedFor`.
    pub fn reserve(
        &mut self,
        namespace: &str,
        name: &str,
        pod: &Pod,
        allocation: Option<AllocationResult>,
    ) {
        let Some(mut claim) = self.claim(namespace, name).cloned() else {
            return;
        };
        if let Some(mut allocation) = allocation {
            // Share IDs from the claim's final name: an extended-resource claim had none when
            // the allocator ran.
            let (ns, claim_name) = key_of(&claim);
            let results =
                (allocation.devices.iter_mut()).flat_map(|d| d.results.iter_mut().flatten());
            for (i, r) in results.enumerate() {
                if r.share_id.is_some() {
                    r.share_id = Some(capacity::share_id(&ns, &claim_name, i));
                }
            }
            let status = claim
                .status
                .get_or_insert_with(ResourceClaimStatus::default);
            status.allocation = Some(allocation);
            let finalizers = claim.metadata.finalizers.get_or_insert_with(Vec::new);
            if !finalizers.iter().any(|f| f == FINALIZER) {
                finalizers.push(FINALIZER.to_string());
            }
            self.hold(&claim, true);
        }
        let status = claim
            .status
            .get_or_insert_with(ResourceClaimStatus::default);
        let reserved = status.reserved_for.get_or_insert_with(Vec::new);
        if !reserved.iter().any(|r| r.uid == pod.uid) {
            reserved.push(ResourceClaimConsumerReference {
                api_group: None,
                resource: "pods".into(),
                name: pod.name.clone(),
                uid: pod.uid.clone(),
            });
        }
        self.set_claim(claim);
    }

    /// A pod no longer holds its claims (it was deleted, evicted, preempted or finished, or a
    /// gang member was unreserved): it leaves each claim's `reservedFor`, and a claim nobody
    /// reserves any more is deallocated, as the resourceclaim controller does in `syncClaim`
    /// (the allocation is removed with the scheduler's finalizer). `deleted`: the pod is gone
    /// for good, and the claims generated for it (owned by it) are deleted with it.
    ///
    /// The pod's extended-resource claim is deleted whenever the pod lets it go: it belongs
    /// to one scheduling attempt (Unreserve deletes it, a deleted pod's is garbage-collected,
    /// and a later cycle never reuses one).
    pub fn release(&mut self, pod: &Pod, deleted: bool) {
        if let Some((ns, name)) = self.extended_claim_of(pod) {
            self.delete_claim(&ns, &name);
        }
        for (ns, name) in self.pod_claim_keys(pod) {
            let Some(mut claim) = self.claim(&ns, &name).cloned() else {
                continue;
            };
            let owned = resourceclaim::is_for_pod(pod, &claim).is_ok();
            let Some(status) = claim.status.as_mut() else {
                if deleted && owned {
                    self.changed.entry(ns).or_default().insert(name, None);
                }
                continue;
            };
            if let Some(reserved) = status.reserved_for.as_mut() {
                reserved.retain(|r| r.uid != pod.uid);
            }
            let unreserved = status.reserved_for.as_ref().is_none_or(Vec::is_empty);
            if unreserved && status.allocation.is_some() {
                self.hold(&claim, false);
                let status = claim.status.as_mut().expect("checked");
                status.allocation = None;
                status.reserved_for = None;
                if let Some(f) = claim.metadata.finalizers.as_mut() {
                    f.retain(|f| f != FINALIZER);
                }
            }
            if deleted && owned && unreserved {
                self.changed.entry(ns).or_default().insert(name, None);
            } else {
                self.set_claim(claim);
            }
        }
    }

    /// PostFilter's deallocation (`UpdateStatus` with no allocation and no reservations).
    pub fn deallocate(&mut self, namespace: &str, name: &str) {
        let Some(mut claim) = self.claim(namespace, name).cloned() else {
            return;
        };
        self.hold(&claim, false);
        if let Some(status) = claim.status.as_mut() {
            status.allocation = None;
            status.reserved_for = None;
            status.devices = None;
        }
        self.set_claim(claim);
    }
}

/// With partitionable devices, the slices of the pools that declare counter sets and matter
/// on every node: `GatherPools` puts a slice of counter sets in its pool on every node, so
/// on a node none of the pool's other slices reach, the pool has no device but is still
/// there, and it changes an allocation only when it is incomplete or invalid (checked once,
/// from a node no slice names: such a node sees exactly that). The pools some slice reaches
/// otherwise come with it.
fn unready_counter_pools<'i>(
    inventory: &'i Inventory,
    slices_by_pool: &'i HashMap<(String, String), Vec<usize>>,
    features: allocator::Features,
) -> impl Iterator<Item = usize> + 'i {
    let nowhere = |_: &k8s_openapi::api::core::v1::NodeSelector| false;
    (slices_by_pool.values())
        .filter(move |pool| {
            let refs: Vec<&ResourceSlice> = pool.iter().map(|&i| &inventory.slices[i]).collect();
            let counters = |s: &&ResourceSlice| {
                s.spec
                    .shared_counters
                    .as_ref()
                    .is_some_and(|c| !c.is_empty())
            };
            let view = NodeView {
                name: "",
                selects: &nowhere,
            };
            refs.iter().any(counters) && allocator::unready_pools(&refs, &view, features)
        })
        .flatten()
        .copied()
}

/// The allocator's result as the claim's `status.allocation`.
pub fn allocation_result(a: &allocator::Allocation) -> AllocationResult {
    AllocationResult {
        devices: Some(DeviceAllocationResult {
            config: None,
            results: Some(
                (a.devices.iter())
                    .map(|d| DeviceRequestAllocationResult {
                        request: d.request.clone(),
                        driver: d.driver.clone(),
                        pool: d.pool.clone(),
                        device: d.device.clone(),
                        admin_access: d.admin_access,
                        share_id: d.share_id.clone(),
                        consumed_capacity: (d.consumed_capacity.as_ref()).map(|c| {
                            (c.iter())
                                .map(|(k, q)| (k.clone(), Quantity(q.clone())))
                                .collect()
                        }),
                        tolerations: d.tolerations.clone(),
                        ..Default::default()
                    })
                    .collect(),
            ),
        }),
        node_selector: a.node_selector.clone(),
        allocation_timestamp: None,
    }
}
