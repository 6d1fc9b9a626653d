//! The DRA part of a report: per node, the devices of each DeviceClass its own ResourceSlices
//! publish, allocated and free at the end of the run; and the allocated ResourceClaims with
//! their devices and the pods they are reserved for. A device belongs to every class whose
//! CEL selectors all match it (as the allocator decides); DRA GPUs are counted in the GPU
//! charts and pool table like `nvidia.com/gpu` (see [`is_gpu_class`]). A device shared by
//! capacity (DRAConsumableCapacity) counts as allocated while any share holds it; the claims
//! say how much of it each takes (`consumedCapacity`).

use std::collections::{BTreeMap, HashSet};

use k8s_openapi::api::resource::v1::{DeviceClass, ResourceClaim};
use serde::Serialize;

use crate::dra::DeviceId;
use crate::dra::Inventory;
use crate::dra::allocator::Selectors;
use crate::dra::{capacity, cel, extended};
use crate::model::Pod;
use crate::model::quantity::Quantity;
use crate::model::resources::GPU_RESOURCES;

/// The devices of one DeviceClass on a node.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct DeviceClassUsage {
    pub device_class: String,
    pub allocated: i64,
    pub free: i64,
    /// Of the class's devices that allow multiple allocations: per capacity, what shares take
    /// and the total (`consumed/total`, canonical quantities). Empty without such devices.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub shared_capacity: BTreeMap<String, String>,
}

/// An allocated ResourceClaim at the end of the run.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimReport {
    pub namespace: String,
    pub name: String,
    /// `driver/pool/device` of each allocated device, as `status.allocation` lists them.
    pub devices: Vec<String>,
    /// The pods in `status.reservedFor`, by name.
    pub reserved_for: Vec<String>,
    /// DRAConsumableCapacity: per device the claim holds a share of (`driver/pool/device`), the
    /// capacity its shares take (`consumedCapacity`, summed when several requests share it).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub consumed_capacity: BTreeMap<String, BTreeMap<String, String>>,
}

/// Whether a class's devices are GPUs for the charts: it names a GPU extended resource
/// (`spec.extendedResourceName`, as NVIDIA's `gpu.nvidia.com` class does) or is that class.
pub fn is_gpu_class(class: &DeviceClass) -> bool {
    let name = class.metadata.name.as_deref().unwrap_or("");
    let extended = class.spec.extended_resource_name.as_deref().unwrap_or("");
    name == "gpu.nvidia.com" || GPU_RESOURCES.contains(&extended)
}

/// Per node name: the usage of each class that selects some device of the node's own slices
/// (by class name).
pub fn node_usage(
    inventory: &Inventory,
    claims: &[ResourceClaim],
) -> BTreeMap<String, Vec<DeviceClassUsage>> {
    let allocated: HashSet<DeviceId> = claims
        .iter()
        .flat_map(crate::sched::dra_manager::allocated_devices_of)
        .collect();
    let mut consumed = capacity::Aggregated::new();
    for (id, taken) in claims
        .iter()
        .flat_map(|c| crate::sched::dra_manager::holdings(c, true).1)
    {
        capacity::insert(&mut consumed, &id, &taken);
    }
    // Per node and class: capacity name → (consumed, total) over its shared devices.
    type Shared = BTreeMap<String, (Quantity, Quantity)>;
    let mut shared: BTreeMap<(String, String), Shared> = BTreeMap::new();
    let selectors = Selectors::default();
    let mut out: BTreeMap<String, BTreeMap<String, DeviceClassUsage>> = BTreeMap::new();
    for slice in &inventory.slices {
        let Some(node) = slice.spec.node_name.as_deref().filter(|n| !n.is_empty()) else {
            continue;
        };
        for device in slice.spec.devices.iter().flatten() {
            // Every field declared: a class selector may read any of them.
            let view = cel::Device::of(&slice.spec.driver, device, true);
            let id = (
                slice.spec.driver.clone(),
                slice.spec.pool.name.clone(),
                device.name.clone(),
            );
            let used = allocated.contains(&id);
            for (name, class) in &inventory.classes {
                if !selected(class, &view, &selectors) {
                    continue;
                }
                let usage = (out.entry(node.to_string()).or_default())
                    .entry(name.clone())
                    .or_insert_with(|| DeviceClassUsage {
                        device_class: name.clone(),
                        allocated: 0,
                        free: 0,
                        shared_capacity: BTreeMap::new(),
                    });
                match used {
                    true => usage.allocated += 1,
                    false => usage.free += 1,
                }
                if device.allow_multiple_allocations == Some(true) {
                    let sums = shared.entry((node.to_string(), name.clone())).or_default();
                    for (cap, c) in device.capacity.iter().flatten() {
                        let Some(total) = capacity::parse(&c.value) else {
                            continue;
                        };
                        let zero = Quantity::from_decimal(0.into(), 0, total.format);
                        let taken = consumed.get(&id).and_then(|t| t.get(cap)).unwrap_or(&zero);
                        let (sum_taken, sum_total) = sums
                            .entry(cap.clone())
                            .or_insert_with(|| (zero.clone(), zero.clone()));
                        *sum_taken = capacity::add(sum_taken, taken);
                        *sum_total = capacity::add(sum_total, &total);
                    }
                }
            }
        }
    }
    for ((node, class), sums) in shared {
        if let Some(usage) = out.get_mut(&node).and_then(|c| c.get_mut(&class)) {
            usage.shared_capacity = (sums.into_iter())
                .map(|(cap, (taken, total))| {
                    (cap, format!("{}/{}", taken.canonical(), total.canonical()))
                })
                .collect();
        }
    }
    (out.into_iter())
        .map(|(node, classes)| (node, classes.into_values().collect()))
        .collect()
}

/// Every selector of the class matches the device (an error selects nothing).
fn selected(class: &DeviceClass, device: &cel::Device, selectors: &Selectors) -> bool {
    (class.spec.selectors.iter().flatten()).all(|s| {
        let Some(expression) = s.cel.as_ref().map(|c| c.expression.as_str()) else {
            return true;
        };
        match &*selectors.get(expression) {
            Ok(selector) => selectors.matches(expression, selector, device) == Ok(true),
            Err(_) => false,
        }
    })
}

/// The allocated claims, by namespace and name.
pub fn claims(claims: &[ResourceClaim]) -> Vec<ClaimReport> {
    (claims.iter())
        .filter_map(|c| {
            let status = c.status.as_ref()?;
            let allocation = status.allocation.as_ref()?;
            Some(ClaimReport {
                namespace: c.metadata.namespace.clone().unwrap_or_default(),
                name: c.metadata.name.clone().unwrap_or_default(),
                devices: (allocation.devices.iter())
                    .flat_map(|d| d.results.iter().flatten())
                    .map(|r| format!("{}/{}/{}", r.driver, r.pool, r.device))
                    .collect(),
                reserved_for: (status.reserved_for.iter().flatten())
                    .map(|r| r.name.clone())
                    .collect(),
                consumed_capacity: consumed_capacity(allocation),
            })
        })
        .collect()
}

/// The capacity an allocation's shares take, per device.
fn consumed_capacity(
    allocation: &k8s_openapi::api::resource::v1::AllocationResult,
) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut per_device: BTreeMap<String, capacity::Consumed> = BTreeMap::new();
    for r in (allocation.devices.iter()).flat_map(|d| d.results.iter().flatten()) {
        let Some(taken) = r
            .consumed_capacity
            .as_ref()
            .filter(|_| r.share_id.is_some())
        else {
            continue;
        };
        let id = format!("{}/{}/{}", r.driver, r.pool, r.device);
        let sum = per_device.entry(id).or_default();
        for (name, q) in capacity::from_status(taken) {
            let total = sum
                .get(&name)
                .map_or_else(|| q.clone(), |have| capacity::add(have, &q));
            sum.insert(name, total);
        }
    }
    (per_device.into_iter())
        .map(|(id, c)| {
            (
                id,
                (c.iter())
                    .map(|(k, q)| (k.clone(), q.canonical()))
                    .collect(),
            )
        })
        .collect()
}

/// The extended-resource claims of the run (DRAExtendedResource), by the UID of the pod that
/// controls them: what the pods' `status.extendedResourceClaimStatus` say.
pub struct ExtendedClaims<'c>(std::collections::HashMap<&'c str, Vec<&'c ResourceClaim>>);

impl<'c> ExtendedClaims<'c> {
    pub fn new(claims: &'c [ResourceClaim]) -> Self {
        let mut by_pod: std::collections::HashMap<&str, Vec<&ResourceClaim>> = Default::default();
        for claim in claims {
            let annotated = (claim.metadata.annotations.as_ref())
                .and_then(|a| a.get(extended::EXTENDED_RESOURCE_CLAIM_ANNOTATION))
                .is_some_and(|v| v == "true");
            let owners = (claim.metadata.owner_references.iter().flatten())
                .filter(|o| annotated && o.controller == Some(true));
            for owner in owners {
                by_pod.entry(owner.uid.as_str()).or_default().push(claim);
            }
        }
        ExtendedClaims(by_pod)
    }

    /// The pod's `status.extendedResourceClaimStatus` (PreBind's `createRequestMappings`).
    pub fn status_of(
        &self,
        pod: &Pod,
    ) -> Option<k8s_openapi::api::core::v1::PodExtendedResourceClaimStatus> {
        let claim =
            (self.0.get(pod.uid.as_str())?.iter()).find(|c| extended::is_claim_of(c, pod))?;
        Some(k8s_openapi::api::core::v1::PodExtendedResourceClaimStatus {
            request_mappings: extended::request_mappings(claim, pod),
            resource_claim_name: claim.metadata.name.clone().unwrap_or_default(),
        })
    }
}

/// A node's DRA GPUs: (allocated + free, allocated) of its first GPU class by name (two GPU
/// classes may select the same devices).
pub fn gpus(inventory: &Inventory, usage: &[DeviceClassUsage]) -> Option<(i64, i64)> {
    (usage.iter())
        .find(|u| (inventory.classes.get(&u.device_class)).is_some_and(is_gpu_class))
        .map(|u| (u.allocated + u.free, u.allocated))
}

/// GPUs each pod holds through its allocated claims (devices a GPU class selects), by
/// (namespace, pod name): what the charts count for DRA pods, as `nvidia.com/gpu` requests
/// for the others. A claim shared by several pods counts for each.
pub fn pod_gpus(
    inventory: &Inventory,
    claims: &[ClaimReport],
) -> std::collections::HashMap<(String, String), i64> {
    let selectors = Selectors::default();
    let gpu_classes: Vec<&DeviceClass> = inventory
        .classes
        .values()
        .filter(|c| is_gpu_class(c))
        .collect();
    let mut gpus: HashSet<String> = HashSet::new();
    for slice in &inventory.slices {
        for device in slice.spec.devices.iter().flatten() {
            // Every field declared: a class selector may read any of them.
            let view = cel::Device::of(&slice.spec.driver, device, true);
            if gpu_classes.iter().any(|c| selected(c, &view, &selectors)) {
                gpus.insert(format!(
                    "{}/{}/{}",
                    slice.spec.driver, slice.spec.pool.name, device.name
                ));
            }
        }
    }
    let mut out = std::collections::HashMap::new();
    for c in claims {
        let held = c.devices.iter().filter(|d| gpus.contains(*d)).count() as i64;
        for pod in c.reserved_for.iter().filter(|_| held > 0) {
            *out.entry((c.namespace.clone(), pod.clone())).or_insert(0) += held;
        }
    }
    out
}
