//! Which devices an allocation on a node searches: the resource pools the node reaches
//! (`GatherPools`, `buildPool`, `checkSlicesInPool` of `pools_incubating.go`) and their
//! devices in search order.

use std::collections::{BTreeMap, HashSet};

use k8s_openapi::api::core::v1::NodeSelector;
use k8s_openapi::api::resource::v1::{CounterSet, Device, ResourceSlice};

use super::{Features, NodeView};
use crate::dra::DeviceId;
use crate::dra::counters;

/// A resource pool as seen from one node (`Pool`).
pub(super) struct Pool<'a> {
    pub(super) driver: &'a str,
    pub(super) name: &'a str,
    pub(super) incomplete: bool,
    pub(super) invalid: bool,
    /// The slices with devices that reach the node (`DeviceSlicesTargetingNode`).
    pub(super) slices: Vec<&'a ResourceSlice>,
    /// With partitionable devices: the pool's counter sets by name, and its other slices
    /// with devices (`DeviceSlicesNotTargetingNode`), whose allocated devices consume counters
    /// too.
    pub(super) counter_sets: BTreeMap<&'a str, &'a CounterSet>,
    pub(super) not_targeting: Vec<&'a ResourceSlice>,
}

impl Pool<'_> {
    pub(super) fn id(&self) -> String {
        format!("{}/{}", self.driver, self.name)
    }
}

/// `NodeMatches`.
pub(super) fn node_matches(
    node: &NodeView,
    name: Option<&str>,
    all: bool,
    selector: Option<&NodeSelector>,
) -> bool {
    match (name.filter(|n| !n.is_empty()), all, selector) {
        (Some(n), _, _) => node.name == n,
        (None, true, _) => true,
        (None, false, Some(s)) => (node.selects)(s),
        _ => false,
    }
}

/// Whether a slice declares counter sets (`len(SharedCounters) > 0`).
pub(super) fn has_counter_sets(slice: &ResourceSlice) -> bool {
    slice
        .spec
        .shared_counters
        .as_ref()
        .is_some_and(|c| !c.is_empty())
}

/// Whether a slice reaches the node in `GatherPools`: a slice with counter sets always (with
/// partitionable devices; without, it and any slice choosing nodes per device are skipped),
/// one for nodes by its node name, all nodes or node selector, one choosing per device when
/// one of its devices does.
pub(super) fn reaches(slice: &ResourceSlice, node: &NodeView, features: Features) -> bool {
    let spec = &slice.spec;
    if !features.partitionable_devices
        && (spec.per_device_node_selection.is_some() || has_counter_sets(slice))
    {
        return false;
    }
    let (name, all) = (spec.node_name.as_deref(), spec.all_nodes.unwrap_or(false));
    if has_counter_sets(slice) {
        true
    } else if name.is_some_and(|n| !n.is_empty()) || all || spec.node_selector.is_some() {
        node_matches(node, name, all, spec.node_selector.as_ref())
    } else if spec.per_device_node_selection == Some(true) {
        (spec.devices.iter().flatten()).any(|d| device_reaches(d, node))
    } else {
        false
    }
}

/// A device's own node selection (`perDeviceNodeSelection`) selects the node.
pub(super) fn device_reaches(device: &Device, node: &NodeView) -> bool {
    let all = device.all_nodes.unwrap_or(false);
    node_matches(
        node,
        device.node_name.as_deref(),
        all,
        device.node_selector.as_ref(),
    )
}

/// `GatherPools` and `buildPool`: per pool, the newest generation's slices that reach the
/// node, whether it is complete, and whether it is valid (device names unique; with
/// partitionable devices, counter set names unique and every consumed counter declared).
pub(super) fn gather_pools<'a>(
    slices: &[&'a ResourceSlice],
    node: &NodeView,
    features: Features,
) -> Vec<Pool<'a>> {
    let mut pools: BTreeMap<(&str, &str), Vec<&ResourceSlice>> = BTreeMap::new();
    for &slice in slices {
        let spec = &slice.spec;
        if !reaches(slice, node, features) {
            continue;
        }
        let list = pools.entry((&spec.driver, &spec.pool.name)).or_default();
        match list.first().map(|s| s.spec.pool.generation) {
            Some(g) if spec.pool.generation < g => {}
            Some(g) if spec.pool.generation > g => *list = vec![slice],
            _ => list.push(slice),
        }
    }
    let mut out = Vec::new();
    for ((driver, name), list) in pools {
        let (generation, count) = (
            list[0].spec.pool.generation,
            list[0].spec.pool.resource_slice_count,
        );
        let mut all_slices = None;
        if list.len() as i64 != count {
            // `checkSlicesInPool`: slices for other nodes count toward completeness, and a newer
            // generation anywhere makes this one obsolete.
            let same_pool = slices
                .iter()
                .filter(|s| s.spec.driver == driver && s.spec.pool.name == name);
            if same_pool
                .clone()
                .any(|s| s.spec.pool.generation > generation)
            {
                continue;
            }
            let all: Vec<&ResourceSlice> = same_pool
                .filter(|s| s.spec.pool.generation == generation)
                .copied()
                .collect();
            if all.len() as i64 != count {
                out.push(Pool {
                    driver,
                    name,
                    incomplete: true,
                    invalid: false,
                    slices: Vec::new(),
                    counter_sets: BTreeMap::new(),
                    not_targeting: Vec::new(),
                });
                continue;
            }
            all_slices = Some(all);
        }
        out.push(build_pool(driver, name, list, all_slices, features));
    }
    out
}

/// `buildPool`: a complete pool, valid or not. `all`: every slice of its generation, when
/// some do not reach the node.
pub(super) fn build_pool<'a>(
    driver: &'a str,
    name: &'a str,
    slices: Vec<&'a ResourceSlice>,
    all: Option<Vec<&'a ResourceSlice>>,
    features: Features,
) -> Pool<'a> {
    let invalid = Pool {
        driver,
        name,
        incomplete: false,
        invalid: true,
        slices: Vec::new(),
        counter_sets: BTreeMap::new(),
        not_targeting: Vec::new(),
    };
    let (counter_slices, device_slices): (Vec<&ResourceSlice>, Vec<&ResourceSlice>) =
        (slices.iter()).partition(|s| features.partitionable_devices && has_counter_sets(s));
    let mut seen = HashSet::new();
    let unique = (device_slices.iter())
        .flat_map(|s| s.spec.devices.iter().flatten())
        .all(|d| seen.insert(d.name.as_str()));
    if !unique {
        return invalid;
    }
    let mut pool = Pool {
        driver,
        name,
        incomplete: false,
        invalid: false,
        slices: device_slices,
        counter_sets: BTreeMap::new(),
        not_targeting: Vec::new(),
    };
    if !features.partitionable_devices {
        return pool;
    }
    let Ok(sets) = counters::counter_sets(&counter_slices) else {
        return invalid;
    };
    if counters::check_consumption(&sets, &slices).is_err() {
        return invalid;
    }
    if let Some(all) = all.filter(|all| all.len() != slices.len()) {
        // Upstream tells the slices it already has apart by name.
        let names: HashSet<&str> = (slices.iter())
            .filter_map(|s| s.metadata.name.as_deref())
            .collect();
        pool.not_targeting = (all.into_iter())
            .filter(|s| !names.contains(s.metadata.name.as_deref().unwrap_or("")))
            .collect();
        if counters::check_consumption(&sets, &pool.not_targeting).is_err() {
            return invalid;
        }
    }
    pool.counter_sets = sets;
    pool
}

/// The devices `Allocate` searches, in its order: those of the complete, valid pools.
pub(super) fn pool_devices<'a>(pools: &[Pool<'a>]) -> Vec<Candidate<'a>> {
    (pools.iter().enumerate())
        .filter(|(_, p)| !p.incomplete && !p.invalid)
        .flat_map(|(pool, p)| p.slices.iter().map(move |&s| (pool, s)))
        .flat_map(|(pool, s)| {
            (s.spec.devices.iter().flatten()).map(move |d| Candidate {
                slice: s,
                device: d,
                pool,
            })
        })
        .collect()
}

/// Whether some pool reaching `node` is incomplete or invalid: then it matters to an
/// allocation there even when it has no device for the node (an error instead of "no
/// devices", or a request for all devices refused).
pub fn unready_pools(slices: &[&ResourceSlice], node: &NodeView, features: Features) -> bool {
    (gather_pools(slices, node, features).iter()).any(|p| p.incomplete || p.invalid)
}

/// The devices [`Allocator::allocate_among`] would search on `node`, in its order, and whether
/// some pool reaching the node is invalid (then a failed allocation is an error, not "no
/// devices").
pub fn searched_devices<'a>(
    slices: &[&'a ResourceSlice],
    node: &NodeView,
    features: Features,
) -> (Vec<(&'a ResourceSlice, &'a Device)>, bool) {
    let pools = gather_pools(slices, node, features);
    let invalid = pools.iter().any(|p| p.invalid);
    let devices = pool_devices(&pools)
        .into_iter()
        .map(|c| (c.slice, c.device))
        .collect();
    (devices, invalid)
}

#[derive(Clone, Copy)]
pub(super) struct Candidate<'a> {
    pub(super) slice: &'a ResourceSlice,
    pub(super) device: &'a Device,
    /// Its pool, by index in [`Run::pools`].
    pub(super) pool: usize,
}

impl Candidate<'_> {
    pub(super) fn id(&self) -> DeviceId {
        (
            self.slice.spec.driver.clone(),
            self.slice.spec.pool.name.clone(),
            self.device.name.clone(),
        )
    }
}
