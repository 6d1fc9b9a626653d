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

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use k8s_openapi::api::core::v1::{NodeSelector, NodeSelectorRequirement, NodeSelectorTerm};
use k8s_openapi::api::resource::v1::{
    CapacityRequirements, CounterSet, Device, DeviceAttribute, DeviceClass, DeviceSelector,
    DeviceToleration, ResourceClaim, ResourceSlice,
};

use super::capacity::{self, DistinctAttribute};
use super::cel::{self, Selector};
use super::counters::{self, PoolCounters};
use super::taints;

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

/// A device: (driver, pool, device).
pub type DeviceId = (String, String, String);

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

/// Compiled CEL selectors, by expression; the verdicts of those that read only named parts
/// of a device (`cel::Read`), by expression and the values of those parts; and every verdict
/// by selector and device. A `Selectors` serves one set of slices for its whole life (a
/// scheduling run, a test case), so a device is known by its address.
#[derive(Default)]
pub struct Selectors(
    std::cell::RefCell<HashMap<String, std::rc::Rc<Result<Selector, String>>>>,
    std::cell::RefCell<HashMap<Projected, Result<bool, String>>>,
    std::cell::RefCell<DeviceVerdicts>,
);

/// Verdicts by (selector, device) address.
type DeviceVerdicts =
    std::collections::HashMap<(usize, usize), Result<bool, String>, foldhash::fast::FixedState>;

/// An expression and the values of the parts of a device it reads.
type Projected = (String, Vec<Option<String>>);

impl Selectors {
    /// `selector.matches(device)`, remembered per projection when the selector allows it.
    pub fn matches(
        &self,
        expression: &str,
        selector: &Selector,
        device: &cel::Device,
    ) -> Result<bool, String> {
        let Some(key) = selector.reads().and_then(|r| cel::projection(device, r)) else {
            return selector.matches(device);
        };
        let key = (expression.to_string(), key);
        if let Some(known) = self.1.borrow().get(&key) {
            return known.clone();
        }
        let verdict = selector.matches(device);
        self.1.borrow_mut().insert(key, verdict.clone());
        verdict
    }

    /// [`Self::matches`] for a device of the slices this `Selectors` serves, remembered by
    /// the selector's and the device's address (the allocator asks again for every pod).
    pub fn matches_device(
        &self,
        expression: &str,
        selector: &Selector,
        device: &cel::Device,
        at: &Device,
    ) -> Result<bool, String> {
        let key = (
            selector as *const Selector as usize,
            at as *const Device as usize,
        );
        if let Some(known) = self.2.borrow().get(&key) {
            return known.clone();
        }
        let verdict = self.matches(expression, selector, device);
        self.2.borrow_mut().insert(key, verdict.clone());
        verdict
    }

    /// The compiled selector of `expression` (compiled on first use).
    pub fn get(&self, expression: &str) -> std::rc::Rc<Result<Selector, String>> {
        let mut cache = self.0.borrow_mut();
        if let Some(compiled) = cache.get(expression) {
            return std::rc::Rc::clone(compiled);
        }
        let compiled = std::rc::Rc::new(Selector::compile(expression));
        cache.insert(expression.to_owned(), std::rc::Rc::clone(&compiled));
        compiled
    }
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

/// A resource pool as seen from one node (`Pool`).
struct Pool<'a> {
    driver: &'a str,
    name: &'a str,
    incomplete: bool,
    invalid: bool,
    /// The slices with devices that reach the node (`DeviceSlicesTargetingNode`).
    slices: Vec<&'a ResourceSlice>,
    /// With partitionable devices: the pool's counter sets by name, and its other slices
    /// with devices (`DeviceSlicesNotTargetingNode`), whose allocated devices consume counters
    /// too.
    counter_sets: BTreeMap<&'a str, &'a CounterSet>,
    not_targeting: Vec<&'a ResourceSlice>,
}

impl Pool<'_> {
    fn id(&self) -> String {
        format!("{}/{}", self.driver, self.name)
    }
}

/// The node an allocation is for: its name, and whether a slice's node selector selects it
/// (the caller's node-affinity matching, `nodeaffinity.NewNodeSelector(…).Match`).
pub struct NodeView<'n> {
    pub name: &'n str,
    pub selects: &'n dyn Fn(&NodeSelector) -> bool,
}

/// `NodeMatches`.
fn node_matches(
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
fn has_counter_sets(slice: &ResourceSlice) -> bool {
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
fn reaches(slice: &ResourceSlice, node: &NodeView, features: Features) -> bool {
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
fn device_reaches(device: &Device, node: &NodeView) -> bool {
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
fn gather_pools<'a>(
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
fn build_pool<'a>(
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
fn pool_devices<'a>(pools: &[Pool<'a>]) -> Vec<Candidate<'a>> {
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

/// A request or subrequest (`requestAccessor`).
struct Request<'a> {
    name: &'a str,
    /// The parent of a subrequest.
    parent: Option<&'a str>,
    class_name: &'a str,
    mode: &'a str,
    count: i64,
    admin_access: Option<bool>,
    selectors: &'a [DeviceSelector],
    capacity: Option<&'a CapacityRequirements>,
    tolerations: &'a [DeviceToleration],
}

impl Request<'_> {
    /// `request` or `parent/subrequest`.
    fn full_name(&self) -> String {
        match self.parent {
            Some(p) => format!("{p}/{}", self.name),
            None => self.name.to_owned(),
        }
    }

    fn admin(&self) -> bool {
        self.admin_access.unwrap_or(false)
    }
}

struct RequestData<'a> {
    request: Request<'a>,
    class: &'a DeviceClass,
    num_devices: usize,
    /// For allocation mode All: the devices, decided up front.
    all_devices: Option<Vec<Candidate<'a>>>,
}

#[derive(Clone, Copy)]
struct Candidate<'a> {
    slice: &'a ResourceSlice,
    device: &'a Device,
    /// Its pool, by index in [`Run::pools`].
    pool: usize,
}

impl Candidate<'_> {
    fn id(&self) -> DeviceId {
        (
            self.slice.spec.driver.clone(),
            self.slice.spec.pool.name.clone(),
            self.device.name.clone(),
        )
    }
}

/// (claim, request, subrequest).
type RequestKey = (usize, usize, usize);

/// A claim's constraint: `matchAttribute` or `distinctAttribute`.
enum Constraint {
    Match(MatchAttribute),
    Distinct(DistinctAttribute),
}

impl Constraint {
    fn add(&mut self, request: &str, sub: Option<&str>, c: &Candidate) -> bool {
        match self {
            Constraint::Match(m) => m.add(request, sub, c),
            Constraint::Distinct(d) => d.add(request, sub, lookup_attribute(c, &d.attribute)),
        }
    }

    fn remove(&mut self, request: &str, sub: Option<&str>) {
        match self {
            Constraint::Match(m) => m.remove(request, sub),
            Constraint::Distinct(d) => d.remove(request, sub),
        }
    }
}

/// `matchAttributeConstraint`.
struct MatchAttribute {
    requests: BTreeSet<String>,
    attribute: String,
    first: Option<DeviceAttribute>,
    devices: usize,
}

impl MatchAttribute {
    fn applies(&self, request: &str, sub: Option<&str>) -> bool {
        self.requests.is_empty()
            || self.requests.contains(request)
            || sub.is_some_and(|s| self.requests.contains(&format!("{request}/{s}")))
    }

    fn add(&mut self, request: &str, sub: Option<&str>, c: &Candidate) -> bool {
        if !self.applies(request, sub) {
            return true;
        }
        let Some(attribute) = lookup_attribute(c, &self.attribute) else {
            return false;
        };
        let Some(first) = &self.first else {
            self.first = Some(attribute.clone());
            self.devices = 1;
            return true;
        };
        let same = if attribute.string.is_some() {
            first.string.is_some() && attribute.string == first.string
        } else if attribute.int.is_some() {
            first.int.is_some() && attribute.int == first.int
        } else if attribute.bool.is_some() {
            first.bool.is_some() && attribute.bool == first.bool
        } else if attribute.version.is_some() {
            first.version.is_some() && attribute.version == first.version
        } else {
            false
        };
        if same {
            self.devices += 1;
        }
        same
    }

    fn remove(&mut self, request: &str, sub: Option<&str>) {
        if !self.applies(request, sub) {
            return;
        }
        self.devices -= 1;
        if self.devices == 0 {
            self.first = None;
        }
    }
}

/// `lookupAttribute`: the fully qualified name, or the bare id for the driver's own domain.
fn lookup_attribute<'d>(c: &Candidate<'d>, name: &str) -> Option<&'d DeviceAttribute> {
    let attributes = c.device.attributes.as_ref()?;
    if let Some(a) = attributes.get(name) {
        return Some(a);
    }
    let (domain, id) = name.split_once('/')?;
    (domain == c.slice.spec.driver)
        .then(|| attributes.get(id))
        .flatten()
}

/// Why the search stops without a solution.
enum Stop {
    /// `errAllocationResultMaxSizeExceeded`: backtrack further.
    MaxSize,
    Error(String),
}

struct Internal<'a> {
    request: String,
    tolerations: &'a [DeviceToleration],
    candidate: Candidate<'a>,
    admin_access: Option<bool>,
    /// A share of a device that allows multiple allocations, and the capacity it takes.
    share: Option<capacity::Consumed>,
}

/// One `Allocate` call.
struct Run<'a, 'c> {
    alloc: &'c Allocator<'a>,
    node: &'c NodeView<'c>,
    claims: &'c [&'a ResourceClaim],
    pools: Vec<Pool<'a>>,
    /// The devices of the complete, valid pools, in search order (pools by driver and name,
    /// slices and devices as listed).
    devices: Vec<Candidate<'a>>,
    requests: HashMap<RequestKey, RequestData<'a>>,
    constraints: Vec<Vec<Constraint>>,
    matches: HashMap<(DeviceId, RequestKey), bool>,
    /// Devices picked so far, with the claims they are picked for.
    allocating: HashMap<DeviceId, BTreeSet<usize>>,
    /// Per pool (by index), its counters once a device consuming them was tried.
    counters: HashMap<usize, PoolCounters>,
    /// Capacity the shares picked so far take, per device (`allocatingCapacity`).
    allocating_capacity: capacity::Aggregated,
    result: Vec<Vec<Internal<'a>>>,
}

fn claim_key(c: &ResourceClaim) -> String {
    match &c.metadata.namespace {
        Some(ns) if !ns.is_empty() => format!("{ns}/{}", c.metadata.name.as_deref().unwrap_or("")),
        _ => c.metadata.name.clone().unwrap_or_default(),
    }
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
        match run.allocate_one((0, 0, 0, 0), false) {
            Ok(true) => {}
            Ok(false) => {
                // Not fatal for other nodes; upstream surfaces it only when every node fails.
                if run.pools.iter().any(|p| p.invalid) {
                    return Err(AllocateError::OnNode(
                        "invalid resource pools were encountered".into(),
                    ));
                }
                return Ok(None);
            }
            // The first claim's requests alone exceed the limit (`errAllocationResultMaxSizeExceeded`
            // is only absorbed between claims, and `Allocate` returns it as it is).
            Err(Stop::MaxSize) => {
                return Err(AllocateError::Fatal("allocation max size exceeded".into()));
            }
            Err(Stop::Error(e)) => return Err(AllocateError::Fatal(e)),
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
}

impl<'a> Run<'a, '_> {
    /// The checks `Allocate` makes before searching, and each request's data.
    fn validate(&mut self) -> Result<(), String> {
        for (ci, claim) in self.claims.iter().enumerate() {
            let devices = claim.spec.devices.as_ref();
            let mut min_devices = 0;
            for (ri, request) in devices
                .and_then(|d| d.requests.as_ref())
                .into_iter()
                .flatten()
                .enumerate()
            {
                let subs = request.first_available.as_deref().unwrap_or(&[]);
                if !subs.is_empty() && !self.alloc.features.prioritized_list {
                    return Err(format!(
                        "claim {}, request {}: has subrequests, but the DRAPrioritizedList feature is disabled",
                        claim_key(claim),
                        request.name
                    ));
                }
                // With DRAConsumableCapacity off, `capacity` requests are read as absent: every
                // feature schedsim simulates besides it is one the stable allocator supports, and
                // `NewAllocator` (structured/allocator.go) picks the stable allocator, which does not
                // know the field (the experimental one, picked only when a feature outside the stable
                // set is on, refuses such requests; KEP-5075: "when using the allocator in stable
                // mode, no logs related to the DRAConsumableCapacity feature will be emitted").
                if !subs.is_empty() {
                    let mut least = usize::MAX;
                    for (si, sub) in subs.iter().enumerate() {
                        let data = self.request_data(
                            ci,
                            Request {
                                name: &sub.name,
                                parent: Some(&request.name),
                                class_name: &sub.device_class_name,
                                mode: sub.allocation_mode.as_deref().unwrap_or("ExactCount"),
                                count: sub.count.unwrap_or(1),
                                admin_access: None,
                                selectors: sub.selectors.as_deref().unwrap_or(&[]),
                                capacity: sub.capacity.as_ref(),
                                tolerations: sub.tolerations.as_deref().unwrap_or(&[]),
                            },
                            (ci, ri, si),
                        )?;
                        least = least.min(data.num_devices);
                        self.requests.insert((ci, ri, si), data);
                    }
                    min_devices += least;
                } else {
                    let exact = request.exactly.as_ref();
                    let data = self.request_data(
                        ci,
                        Request {
                            name: &request.name,
                            parent: None,
                            class_name: exact.map_or("", |e| e.device_class_name.as_str()),
                            mode: (exact.and_then(|e| e.allocation_mode.as_deref()))
                                .unwrap_or("ExactCount"),
                            count: exact.and_then(|e| e.count).unwrap_or(1),
                            admin_access: exact.and_then(|e| e.admin_access),
                            selectors: (exact.and_then(|e| e.selectors.as_deref())).unwrap_or(&[]),
                            capacity: exact.and_then(|e| e.capacity.as_ref()),
                            tolerations: (exact.and_then(|e| e.tolerations.as_deref()))
                                .unwrap_or(&[]),
                        },
                        (ci, ri, 0),
                    )?;
                    min_devices += data.num_devices;
                    self.requests.insert((ci, ri, 0), data);
                }
            }
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE {
                return Err(format!(
                    "claim {}: number of requested devices {min_devices} exceeds the claim limit of {ALLOCATION_RESULTS_MAX_SIZE}",
                    claim_key(claim)
                ));
            }
            let mut constraints = Vec::new();
            for (i, c) in devices
                .and_then(|d| d.constraints.as_ref())
                .into_iter()
                .flatten()
                .enumerate()
            {
                let requests = c.requests.iter().flatten().cloned().collect();
                constraints.push(match (&c.match_attribute, &c.distinct_attribute) {
                    (Some(attribute), _) => Constraint::Match(MatchAttribute {
                        requests,
                        attribute: attribute.clone(),
                        first: None,
                        devices: 0,
                    }),
                    (None, Some(attribute)) => {
                        Constraint::Distinct(DistinctAttribute::new(requests, attribute.clone()))
                    }
                    (None, None) => {
                        return Err(format!(
                            "claim {}, constraint #{i}: empty constraint (unsupported constraint type?)",
                            claim_key(claim)
                        ));
                    }
                });
            }
            self.constraints.push(constraints);
        }
        Ok(())
    }

    /// `validateDeviceRequest`.
    fn request_data(
        &mut self,
        ci: usize,
        request: Request<'a>,
        key: RequestKey,
    ) -> Result<RequestData<'a>, String> {
        let claim = claim_key(self.claims[ci]);
        for (i, s) in request.selectors.iter().enumerate() {
            if s.cel.is_none() {
                return Err(format!(
                    "claim {claim}, request {}, selector #{i}: CEL expression empty (unsupported selector type?)",
                    request.name
                ));
            }
        }
        if !self.alloc.features.admin_access && request.admin_access.is_some() {
            return Err(format!(
                "claim {claim}, request {}: admin access is requested, but the feature is disabled",
                request.name
            ));
        }
        if request.class_name.is_empty() {
            return Err(format!(
                "claim {claim}, request {}: missing device class name (unsupported request type?)",
                request.name
            ));
        }
        let Some(class) = self.alloc.classes.get(request.class_name) else {
            return Err(format!(
                "claim {claim}, request {}: could not retrieve device class {}: deviceclass.resource.k8s.io \"{}\" not found",
                request.name, request.class_name, request.class_name
            ));
        };
        let mut data = RequestData {
            request,
            class,
            num_devices: 0,
            all_devices: None,
        };
        match data.request.mode {
            "ExactCount" => data.num_devices = data.request.count.max(0) as usize,
            "All" => {
                let mut all = Vec::new();
                for p in &self.pools {
                    if p.incomplete {
                        return Err(format!(
                            "claim {claim}, request {}: asks for all devices, but resource pool {} is currently being updated",
                            data.request.name,
                            p.id()
                        ));
                    }
                    if p.invalid {
                        return Err(format!(
                            "claim {claim}, request {}: asks for all devices, but resource pool {} is currently invalid",
                            data.request.name,
                            p.id()
                        ));
                    }
                }
                // Every pool is complete and valid here, so these are all the node's devices.
                for c in self.devices.clone() {
                    if self.selectable(key, data.class, data.request.selectors, &c)?
                        && self.capacity_fits(data.request.capacity, &c)
                    {
                        all.push(c);
                    }
                }
                data.num_devices = all.len();
                data.all_devices = Some(all);
            }
            other => {
                return Err(format!(
                    "claim {claim}, request {}: unsupported count mode {other}",
                    data.request.name
                ));
            }
        }
        Ok(data)
    }

    /// `isSelectable`: the class's and the request's selectors all match, and a device that
    /// chooses its nodes selects this one (cached per device and request).
    fn selectable(
        &mut self,
        key: RequestKey,
        class: &'a DeviceClass,
        selectors: &'a [DeviceSelector],
        c: &Candidate,
    ) -> Result<bool, String> {
        let id = c.id();
        if let Some(&m) = self.matches.get(&(id.clone(), key)) {
            return Ok(m);
        }
        let class_selectors = class.spec.selectors.as_deref().unwrap_or(&[]);
        let m = self.selectors_match(key.0, c, Some(class), class_selectors)?
            && self.selectors_match(key.0, c, None, selectors)?
            && (c.slice.spec.per_device_node_selection != Some(true)
                || device_reaches(c.device, self.node));
        self.matches.insert((id, key), m);
        Ok(m)
    }

    /// `selectorsMatch`.
    fn selectors_match(
        &self,
        ci: usize,
        c: &Candidate,
        class: Option<&DeviceClass>,
        selectors: &[DeviceSelector],
    ) -> Result<bool, String> {
        let owner = |what: &str| match class {
            Some(class) => format!(
                "class {}: {what}",
                class.metadata.name.as_deref().unwrap_or("")
            ),
            None => format!("claim {}: {what}", claim_key(self.claims[ci])),
        };
        for (i, s) in selectors.iter().enumerate() {
            let Some(expression) = s.cel.as_ref().map(|c| c.expression.as_str()) else {
                continue;
            };
            let compiled = self.alloc.selectors.get(expression);
            let selector = match &*compiled {
                Ok(s) => s,
                Err(e) => return Err(owner(&format!("selector #{i}: CEL compile error: {e}"))),
            };
            let consumable = self.alloc.features.consumable_capacity;
            let device = cel::Device::of(&c.slice.spec.driver, c.device, consumable);
            match (self.alloc.selectors).matches_device(expression, selector, &device, c.device) {
                Ok(true) => {}
                Ok(false) => return Ok(false),
                Err(e) => {
                    let (d, p, n) = c.id();
                    return Err(owner(&format!(
                        "selector #{i} on device {d}/{p}/{n}: CEL runtime error: {e}"
                    )));
                }
            }
        }
        Ok(true)
    }

    fn in_use(&self, id: &DeviceId) -> bool {
        self.alloc.allocated.contains(id) || self.allocating.get(id).is_some_and(|c| !c.is_empty())
    }

    fn in_use_by_claim(&self, id: &DeviceId, ci: usize) -> bool {
        self.allocating.get(id).is_some_and(|c| c.contains(&ci))
    }

    /// `allocateOne`: (claim, request, subrequest, device) to fill next; `in_sub` when working
    /// on one particular subrequest.
    fn allocate_one(
        &mut self,
        r: (usize, usize, usize, usize),
        in_sub: bool,
    ) -> Result<bool, Stop> {
        let (ci, ri, si, di) = r;
        if ci >= self.claims.len() {
            return Ok(true);
        }
        let requests = (self.claims[ci].spec.devices.as_ref())
            .and_then(|d| d.requests.as_ref())
            .map_or(0, Vec::len);
        if ri >= requests {
            return match self.allocate_one((ci + 1, 0, 0, 0), false) {
                Err(Stop::MaxSize) => Ok(false),
                other => other,
            };
        }
        let key = (ci, ri, si);
        if !in_sub && self.requests[&key].request.parent.is_some() {
            let mut all_exceeded = true;
            for sub in 0.. {
                if !self.requests.contains_key(&(ci, ri, sub)) {
                    return if all_exceeded {
                        Err(Stop::MaxSize)
                    } else {
                        Ok(false)
                    };
                }
                match self.allocate_one((ci, ri, sub, di), true) {
                    Err(Stop::MaxSize) => continue,
                    Err(e) => return Err(e),
                    Ok(true) => return Ok(true),
                    Ok(false) => all_exceeded = false,
                }
            }
        }
        let data = &self.requests[&key];
        let all_mode = data.request.mode == "All";
        if all_mode && data.all_devices.as_ref().is_none_or(Vec::is_empty) {
            return Ok(false);
        }
        if di >= data.num_devices {
            return self.allocate_one((ci, ri + 1, 0, 0), false);
        }
        if self.result[ci].len() + data.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE {
            return Err(Stop::MaxSize);
        }
        if all_mode {
            let c = data.all_devices.as_ref().expect("all mode")[di];
            if !self.allocate_device(key, c, true).map_err(Stop::Error)? {
                return Ok(false);
            }
            let done = self.allocate_one((ci, ri, si, di + 1), in_sub);
            if !matches!(done, Ok(true)) {
                self.deallocate(key);
            }
            return done;
        }
        let admin = data.request.admin();
        for i in 0..self.devices.len() {
            let c = self.devices[i];
            let id = c.id();
            if (admin && self.in_use_by_claim(&id, ci)) || (!admin && self.in_use(&id)) {
                continue;
            }
            let data = &self.requests[&key];
            let (class, selectors) = (data.class, data.request.selectors);
            if !self
                .selectable(key, class, selectors, &c)
                .map_err(Stop::Error)?
            {
                continue;
            }
            if !self.capacity_fits(self.requests[&key].request.capacity, &c) {
                continue;
            }
            if !self.allocate_device(key, c, false).map_err(Stop::Error)? {
                continue;
            }
            match self.allocate_one((ci, ri, si, di + 1), in_sub) {
                Ok(true) => return Ok(true),
                other => {
                    self.deallocate(key);
                    other?;
                }
            }
        }
        Ok(false)
    }

    /// `allocateDevice`: takes the device for the request if it is free, its counters allow
    /// it and the claim's constraints allow it; `must` (allocation mode All) makes a
    /// constraint violation an error. As upstream, the counters of a device that a
    /// constraint then refuses are not given back for the rest of this search.
    fn allocate_device(
        &mut self,
        key: RequestKey,
        c: Candidate<'a>,
        must: bool,
    ) -> Result<bool, String> {
        let (ci, _, _) = key;
        let data = &self.requests[&key];
        let id = c.id();
        let admin = data.request.admin();
        let multiple = self.allows_multiple(&c);
        if (!multiple && admin && self.in_use_by_claim(&id, ci)) || (!admin && self.in_use(&id)) {
            return Ok(false);
        }
        if !self.take_counters(c) {
            return Ok(false);
        }
        let data = &self.requests[&key];
        // After the counters, as upstream: a tainted device's counters stay taken for the rest
        // of this search, as those of a device a constraint refuses do.
        if self.alloc.features.device_taints
            && taints::prevents_allocation(c.device, data.request.tolerations)
        {
            return Ok(false);
        }
        let (base, sub) = match data.request.parent {
            Some(p) => (p, Some(data.request.name)),
            None => (data.request.name, None),
        };
        let constraints = &mut self.constraints[ci];
        for i in 0..constraints.len() {
            if !constraints[i].add(base, sub, &c) {
                if must {
                    let (d, p, n) = id;
                    return Err(format!(
                        "claim {}, request {}: cannot add device {d}/{p}/{n} because a claim constraint would not be satisfied",
                        claim_key(self.claims[ci]),
                        data.request.name
                    ));
                }
                for earlier in &mut constraints[..i] {
                    earlier.remove(base, sub);
                }
                return Ok(false);
            }
        }
        let claims = self.allocating.entry(id.clone()).or_default();
        if !multiple {
            claims.insert(ci);
        }
        let mut share = None;
        if self.alloc.features.consumable_capacity {
            // Checked again as upstream does; this fails only for a device of an "All"
            // request that this attempt's earlier shares filled, and upstream then returns
            // without undoing the constraints and the device's mark above.
            if !self.capacity_fits(data.request.capacity, &c) {
                return Ok(false);
            }
            if multiple {
                let empty = BTreeMap::new();
                let device_capacity = c.device.capacity.as_ref().unwrap_or(&empty);
                let taken = capacity::consumed_by(data.request.capacity, device_capacity);
                capacity::insert(&mut self.allocating_capacity, &id, &taken);
                share = Some(taken);
            }
        }
        self.result[ci].push(Internal {
            request: data.request.full_name(),
            tolerations: data.request.tolerations,
            candidate: c,
            admin_access: admin.then_some(true),
            share,
        });
        Ok(true)
    }

    /// The rollback of the last [`Self::allocate_device`] for `key`'s claim.
    fn deallocate(&mut self, key: RequestKey) {
        let ci = key.0;
        let Some(last) = self.result[ci].pop() else {
            return;
        };
        let data = &self.requests[&key];
        let (base, sub) = match data.request.parent {
            Some(p) => (p, Some(data.request.name)),
            None => (data.request.name, None),
        };
        for c in &mut self.constraints[ci] {
            c.remove(base, sub);
        }
        let id = last.candidate.id();
        if let Some(claims) = self.allocating.get_mut(&id) {
            claims.remove(&ci);
        }
        // A share keeps its counters, as upstream's rollback gives them back only for a device
        // taken whole.
        if self.alloc.features.partitionable_devices
            && last.share.is_none()
            && counters::consumes(last.candidate.device)
            && let Some(pool) = self.counters.get_mut(&last.candidate.pool)
        {
            pool.release(last.candidate.device);
        }
        if let Some(taken) = &last.share {
            capacity::remove(&mut self.allocating_capacity, &id, taken);
        }
    }

    /// `allocateDevice`'s counter check: without partitionable devices a device that
    /// consumes counters is never taken; with them it is when what it consumes still fits in
    /// its pool's counter sets, and then its consumption counts until it is deallocated. A
    /// device shared by capacity whose capacity some share already holds (allocated, or in
    /// this attempt) is not checked again (`skipCounterCheck` in the experimental allocator
    /// of the version `tests/data/dra/allocator-cases.yaml` names): its counters count once.
    fn take_counters(&mut self, c: Candidate<'a>) -> bool {
        if !counters::consumes(c.device) {
            return true;
        }
        if !self.alloc.features.partitionable_devices {
            return false;
        }
        let id = c.id();
        if self.allows_multiple(&c)
            && (self.alloc.consumed.contains_key(&id) || self.allocating_capacity.contains_key(&id))
        {
            return true;
        }
        let pool = &self.pools[c.pool];
        let allocated = self.alloc.allocated;
        let counters = self.counters.entry(c.pool).or_insert_with(|| {
            let slices = pool.slices.iter().chain(&pool.not_targeting).copied();
            PoolCounters::new(&pool.counter_sets, slices, allocated)
        });
        counters.take(c.device)
    }

    /// Whether the device is shared by capacity: it allows multiple allocations and the
    /// feature is on.
    fn allows_multiple(&self, c: &Candidate) -> bool {
        self.alloc.features.consumable_capacity && c.device.allow_multiple_allocations == Some(true)
    }

    /// `CmpRequestOverCapacity` for the device, when the feature is on.
    fn capacity_fits(&self, requests: Option<&CapacityRequirements>, c: &Candidate) -> bool {
        if !self.alloc.features.consumable_capacity {
            return true;
        }
        let id = c.id();
        let empty = BTreeMap::new();
        capacity::fits(
            self.alloc.consumed.get(&id),
            requests,
            c.device.capacity.as_ref().unwrap_or(&empty),
            self.allocating_capacity.get(&id),
        )
    }
}

/// The allocation of `devices` (in order) for request `request` without admin access: what
/// [`Allocator::allocate_among`] returns when its search picks exactly them. For a caller
/// that knows the pick: a single claim with one ExactCount request and no constraints takes
/// the first free devices that pass its selectors, in the search order, as the search never
/// backtracks there (devices without counters). `tolerations`: the request's, copied into
/// each result. An error is `createNodeSelector`'s.
pub fn allocation_of(
    request: &str,
    tolerations: &[DeviceToleration],
    devices: &[(&ResourceSlice, &Device)],
) -> Result<Allocation, String> {
    Ok(Allocation {
        node_selector: node_selector(devices.iter().copied())?,
        devices: (devices.iter())
            .map(|(slice, device)| DeviceResult {
                request: request.to_string(),
                driver: slice.spec.driver.clone(),
                pool: slice.spec.pool.name.clone(),
                device: device.name.clone(),
                admin_access: None,
                tolerations: (!tolerations.is_empty()).then(|| tolerations.to_vec()),
                ..Default::default()
            })
            .collect(),
    })
}

/// `createNodeSelector` over the allocated devices: a node-local device pins the allocation
/// to its node; node selectors add up into one term. A device of a slice that chooses nodes
/// per device brings its own node name or selector; such a selector (which validation does
/// not limit to one term, unlike a slice's) with several terms is an error.
fn node_selector<'s>(
    devices: impl IntoIterator<Item = (&'s ResourceSlice, &'s Device)>,
) -> Result<Option<NodeSelector>, String> {
    let mut term = NodeSelectorTerm::default();
    for (slice, device) in devices {
        let spec = &slice.spec;
        let (name, selector) = match spec.per_device_node_selection == Some(true) {
            true => (&device.node_name, &device.node_selector),
            false => (&spec.node_name, &spec.node_selector),
        };
        if let Some(name) = name.as_ref().filter(|n| !n.is_empty()) {
            return Ok(Some(NodeSelector {
                node_selector_terms: vec![NodeSelectorTerm {
                    match_fields: Some(vec![NodeSelectorRequirement {
                        key: "metadata.name".into(),
                        operator: "In".into(),
                        values: Some(vec![name.clone()]),
                    }]),
                    ..Default::default()
                }],
            }));
        }
        match selector.as_ref().map(|s| s.node_selector_terms.as_slice()) {
            None | Some([]) => {}
            Some([only]) => {
                add_requirements(only.match_fields.as_deref(), &mut term.match_fields);
                add_requirements(
                    only.match_expressions.as_deref(),
                    &mut term.match_expressions,
                );
            }
            Some(terms) => {
                return Err(format!(
                    "unsupported ResourceSlice.NodeSelector with {} terms",
                    terms.len()
                ));
            }
        }
    }
    let has = |r: &Option<Vec<NodeSelectorRequirement>>| r.as_ref().is_some_and(|r| !r.is_empty());
    Ok(
        (has(&term.match_fields) || has(&term.match_expressions)).then(|| NodeSelector {
            node_selector_terms: vec![term],
        }),
    )
}

/// `addNewNodeSelectorRequirements`: each requirement once (values compared as sets).
fn add_requirements(
    from: Option<&[NodeSelectorRequirement]>,
    to: &mut Option<Vec<NodeSelectorRequirement>>,
) {
    for r in from.unwrap_or(&[]) {
        let values: BTreeSet<&String> = r.values.iter().flatten().collect();
        let list = to.get_or_insert_with(Vec::new);
        let known = list.iter().any(|e| {
            e.key == r.key
                && e.operator == r.operator
                && e.values.iter().flatten().collect::<BTreeSet<_>>() == values
        });
        if !known {
            list.push(r.clone());
        }
    }
}
