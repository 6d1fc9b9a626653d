//! DynamicResources: pods' ResourceClaims must be allocated on the node they go to. A port of
//! kubernetes 1.34 `pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go`:
//! `PreEnqueue` and `foreachPodResourceClaim` (every claim exists, is not being deleted, and
//! a generated one belongs to the pod), `PreFilter` (claims in use, device classes, the
//! allocated claims' node selectors), `Filter` (those node selectors, then the structured
//! allocator over the claims still to allocate: `cannot allocate all claims`), `PostFilter`
//! (deallocating an allocated claim that fits no node) and `Reserve`/`PreBind` (the allocation
//! recorded, the pod added to `reservedFor`, in [`DraManager::reserve`]).
//!
//! With DRAExtendedResource (alpha in 1.34), a pod's extended resources that a DeviceClass
//! backs (`nvidia.com/gpu` for NVIDIA's `gpu.nvidia.com`) get a claim of their own: the 1.34
//! plugin's `preFilterExtendedResources` (the in-memory claim, or the one an earlier cycle left,
//! `findExtendedResourceClaim`), `filterExtendedResources` (per node: nothing to do where the
//! node publishes every such resource and the pod has no claims of its own, `cannot fit
//! resource` for an extended resource neither published nor backed, `cannot schedule extended
//! resource claim` for an earlier cycle's claim), the allocator over it with the pod's claims,
//! PostFilter's deletion of an earlier cycle's claim, and PreBind's creation of the claim
//! ([`DraManager::create_extended_claim`]). The claim's requests are the same on every node
//! that needs it in 1.34 (`dra::extended`), so Filter's caches serve it as any claim.
//!
//! Every status it returns is `UnschedulableAndUnresolvable` (`statusUnschedulable`), so
//! DefaultPreemption never evicts pods to free devices: in 1.34 the plugin has no
//! `PreFilterExtensions` and its allocator sees the devices allocated at PreFilter, whatever
//! preemption removes.
//!
//! Speed, with the allocator's answers unchanged: a Filter verdict is cached per claim shape
//! (the specs of the claims to allocate) and node, and reused while no device the node
//! searches was taken or freed (the node's version). For a shape whose answer is a count (one
//! claim, one `exactly` request in ExactCount mode, no admin access, no constraints, at most
//! 32 devices) on a node without invalid pools, the verdict is "at least `count` free devices
//! match", with each device's CEL verdict cached per shape (with DRADeviceTaints, a device
//! whose `NoSchedule`/`NoExecute` taints the request does not all tolerate does not match: the
//! allocator checks taints after selection and never takes it): the allocator then takes, in
//! order, free devices that match until it has `count`, and fails only when there are fewer,
//! so the two agree; a CEL error on any of the node's devices falls back to the allocator
//! (whose error depends on the order it meets devices), and so does a node where some device
//! consumes counters or chooses its nodes itself (DRAPartitionableDevices: whether a free,
//! matching device is taken depends on the counters of its pool or on the node). Taking or
//! freeing a device that consumes counters moves the version of every node searching a
//! device of its pool that consumes counters (`DraManager`), so no cached verdict outlives a
//! change of the counters it read. With DRAConsumableCapacity no shape is counted when some
//! device allows multiple allocations or some claim holds a share of one: a device in use may
//! still have capacity for a share, and a free one may lack it; nor, gate or not, a request
//! with `capacity`. Taking or giving back a share moves the node's version as taking or
//! freeing a device does (`DraManager`). The allocator itself runs for other shapes and where
//! the pod is placed (its first solution: upstream's choice of devices).

use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap};

use k8s_openapi::api::core::v1::NodeSelector;
use k8s_openapi::api::resource::v1::{
    DeviceSelector, DeviceToleration, ResourceClaim, ResourceClaimSpec,
};

use crate::dra::allocator::{self, AllocateError, Allocation, Allocator, Features, NodeView};
use crate::dra::{cel, extended, resourceclaim, taints};
use crate::features::FeatureGates;
use crate::model::resources::is_extended_resource_name;
use crate::model::{Node, Pod};
use crate::sched::cluster::ResourceTable;
use crate::sched::dra_manager::{DraManager, RESERVED_FOR_MAX_SIZE};
use crate::sched::framework::{Code, Status};
use crate::sched::plugins::node_affinity;
use crate::sched::resource_set::ResourceSet;

pub const NAME: &str = "DynamicResources";
/// Filter: the allocator found no devices for every claim on the node.
pub const CANNOT_ALLOCATE_ALL_CLAIMS: &str = "cannot allocate all claims";
/// Filter: an allocated claim's node selector does not select the node.
pub const NOT_AVAILABLE_ON_NODE: &str = "resourceclaim not available on the node";
/// PreFilter: an allocated claim has the most reservations it can take, none the pod's.
pub const CLAIM_IN_USE: &str = "resourceclaim in use";
/// PostFilter, for a pod without claims to deallocate.
pub const NO_NEW_CLAIMS_TO_DEALLOCATE: &str = "no new claims to deallocate";
pub const DEALLOCATION_COMPLETED: &str = "deallocation of ResourceClaim completed";
pub const STILL_NOT_SCHEDULABLE: &str = "still not schedulable";
/// PostFilter, after deleting the extended-resource claim of an earlier cycle.
pub const DELETION_COMPLETED: &str = "deletion of ResourceClaim completed";
/// Filter: the pod's extended-resource claim is one an earlier cycle created.
pub const CANNOT_SCHEDULE_EXTENDED_CLAIM: &str = "cannot schedule extended resource claim";
/// Filter: an extended resource the node does not publish and no DeviceClass backs.
pub const CANNOT_FIT_RESOURCE: &str = "cannot fit resource";

/// `statusUnschedulable`: always `UnschedulableAndUnresolvable`.
fn unschedulable(reason: impl Into<String>) -> Status {
    Status::new(Code::UnschedulableAndUnresolvable, NAME, reason.into())
}

/// The allocator's optional features, from the gates (`structured.Features`).
pub fn features(gates: &FeatureGates) -> Features {
    Features {
        prioritized_list: gates.dra_prioritized_list,
        admin_access: gates.dra_admin_access,
        partitionable_devices: gates.dra_partitionable_devices,
        consumable_capacity: gates.dra_consumable_capacity,
        device_taints: gates.dra_device_taints,
    }
}

/// `foreachPodResourceClaim`: the pod's claims (namespace, name), in `spec.resourceClaims`
/// order, or the error that holds the pod back. A template claim the controller decided not
/// to create is skipped.
pub fn pod_claims(m: &DraManager, pod: &Pod) -> Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for pc in &pod.resource_claims {
        let name = match resourceclaim::name(pod, pc) {
            Ok(Some(n)) => n,
            Ok(None) => continue,
            Err(e) => return Err(e.message().to_string()),
        };
        let Some(claim) = m.claim(&pod.namespace, name.name) else {
            // The assume cache's `NotFoundError` for the "ResourceClaim" cache.
            return Err(format!(
                "could not find ResourceClaim \"{}/{}\"",
                pod.namespace, name.name
            ));
        };
        if claim.metadata.deletion_timestamp.is_some() {
            return Err(format!("resourceclaim {:?} is being deleted", name.name));
        }
        if name.must_check_owner {
            resourceclaim::is_for_pod(pod, claim)?;
        }
        out.push((pod.namespace.clone(), name.name.to_string()));
    }
    Ok(out)
}

/// `PreEnqueue`: a pod whose claims are not all there waits outside the active queue.
pub fn pre_enqueue(m: &DraManager, pod: &Pod) -> Status {
    match pod_claims(m, pod) {
        Ok(_) => Status::success(),
        Err(e) => unschedulable(e),
    }
}

/// The plugin's cycle state for one pod (`stateData`).
#[derive(Debug, Default)]
pub struct CycleState {
    /// The pod's claims, as (namespace, name).
    pub claims: Vec<(String, String)>,
    /// Per claim, then for the extended-resource claim: the node selector of its allocation
    /// (`availableOnNodes`).
    available_on: Vec<Option<NodeSelector>>,
    /// The claims the scheduler allocates (not allocated at PreFilter), by index.
    pub to_allocate: Vec<usize>,
    /// The pod's extended-resource claim (`claimStore`'s last), with DRAExtendedResource.
    pub extended: Option<Box<ExtendedClaim>>,
    /// The cache entry of the specs of `to_allocate`, then of the extended-resource claim if
    /// it is to allocate.
    shape: usize,
    /// Allocated claims whose node selector failed some node (`unavailableClaims`); the
    /// extended-resource claim is index `claims.len()`.
    unavailable: RefCell<BTreeSet<usize>>,
}

impl CycleState {
    /// No claim at all: the plugin has nothing to do for the pod (`claims.empty()`).
    pub fn is_empty(&self) -> bool {
        self.claims.is_empty() && self.extended.is_none()
    }

    /// The shape of the pod's claims when the plugin reads nothing else of the pod: every
    /// claim is still to allocate and there is no extended-resource claim, so Filter's
    /// verdicts are the shape's on each node's devices, and PostFilter finds nothing to
    /// deallocate.
    pub fn fresh_claims_shape(&self) -> Option<usize> {
        (self.extended.is_none() && self.to_allocate.len() == self.claims.len())
            .then_some(self.shape)
    }
}

/// The special claim for a pod's extended resources backed by DRA, as Filter sees it.
#[derive(Debug)]
pub struct ExtendedClaim {
    /// The claim, with the requests Filter gives it on every node that needs it
    /// (`createDeviceRequests`): in memory (`<extended-resources>`) or, from `existing`, the
    /// one an earlier cycle created.
    pub claim: ResourceClaim,
    /// (namespace, name) of the claim of an earlier cycle.
    pub existing: Option<(String, String)>,
    /// The earlier cycle's claim has requests: Filter fails every node, and PostFilter
    /// deletes it.
    stale: bool,
    /// The earlier cycle's claim is allocated: there is nothing to allocate.
    pub allocated: bool,
    /// The pod's extended resources (table bits) a DeviceClass backs, and those none does.
    backed: ResourceSet,
    unbacked: ResourceSet,
}

impl ExtendedClaim {
    /// `filterExtendedResources` on a node that publishes `published`: `Err` fails the node;
    /// `Ok(false)` when the node needs no claim (the pod has no claims of its own, and the
    /// node publishes every backed resource or the claim is already allocated).
    fn on_node(&self, user_claims: bool, published: &ResourceSet) -> Result<bool, Verdict> {
        if self.stale {
            return Err(Verdict::CannotScheduleExtendedClaim);
        }
        if !self.unbacked.is_subset(published) {
            return Err(Verdict::CannotFitResource);
        }
        let needs_dra = !self.backed.is_subset(published);
        Ok(user_claims || (needs_dra && !self.allocated))
    }

    /// Whether Reserve handles the claim on a node that publishes `published` (Filter passed
    /// it there).
    pub fn needed_on(&self, user_claims: bool, published: &ResourceSet) -> bool {
        self.on_node(user_claims, published) == Ok(true)
    }

    /// Whether the scheduler allocates the claim (it is not allocated yet).
    fn to_allocate(&self) -> bool {
        !self.allocated
    }
}

/// `hasDeviceClassMappedExtendedResource`: the pod requests an extended resource
/// (`v1helper.IsExtendedResourceName`, so not an implicit `deviceclass.resource.kubernetes.io/`
/// name) that a DeviceClass backs.
pub fn has_backed_extended_resource(m: &DraManager, pod: &Pod) -> bool {
    (pod.requests.iter()).any(|(name, &q)| {
        q != 0 && is_extended_resource_name(name) && m.extended_class(name).is_some()
    })
}

/// `preFilterExtendedResources`: the pod's extended-resource claim, when DRAExtendedResource
/// is on and the pod requests an extended resource a DeviceClass backs.
fn extended_claim(m: &DraManager, pod: &Pod, table: &ResourceTable) -> Option<ExtendedClaim> {
    if !has_backed_extended_resource(m, pod) {
        return None;
    }
    let (mut backed, mut unbacked) = (ResourceSet::default(), ResourceSet::default());
    for (name, &q) in &pod.requests {
        if q == 0 || !is_extended_resource_name(name) {
            continue;
        }
        let Some(i) = table.index(name) else { continue };
        match m.extended_class(name) {
            Some(_) => backed.insert(i),
            None => unbacked.insert(i),
        }
    }
    let existing = m.extended_claim_of(pod);
    let base = match &existing {
        Some((ns, name)) => m
            .claim(ns, name)
            .expect("found by extended_claim_of")
            .clone(),
        None => extended::in_memory_claim(pod),
    };
    let stale = extended::has_requests(&base);
    let allocated = (base.status.as_ref()).is_some_and(|s| s.allocation.is_some());
    let requests = extended::device_requests(pod, m.extended_classes());
    Some(ExtendedClaim {
        claim: extended::with_requests(&base, requests),
        existing,
        stale,
        allocated,
        backed,
        unbacked,
    })
}

/// What PreFilter decides.
#[derive(Debug)]
pub enum PreFilter {
    /// No claims: Filter has nothing to do (the state has no claims).
    Skip,
    /// `UnschedulableAndUnresolvable` on every node.
    Reject(Status),
    /// An error status (the cycle fails with it).
    Error(String),
    Run(CycleState),
}

/// `PreFilter`. `table` is the cluster's resource table, for the extended-resource claim.
pub fn pre_filter(
    m: &DraManager,
    cache: &mut FilterCache,
    pod: &Pod,
    gates: &FeatureGates,
    table: &ResourceTable,
) -> PreFilter {
    let claims = match pod_claims(m, pod) {
        Ok(c) => c,
        Err(e) => return PreFilter::Reject(unschedulable(e)),
    };
    let extended = match gates.dra_extended_resource {
        true => extended_claim(m, pod, table),
        false => None,
    };
    if claims.is_empty() && extended.is_none() {
        return PreFilter::Skip;
    }
    let mut state = CycleState {
        available_on: vec![None; claims.len() + 1],
        ..Default::default()
    };
    let mut specs: Vec<&ResourceClaimSpec> = Vec::new();
    for (index, (ns, name)) in claims.iter().enumerate() {
        let claim = m.claim(ns, name).expect("pod_claims found it");
        if in_use(claim, pod) {
            return PreFilter::Reject(unschedulable(CLAIM_IN_USE));
        }
        match claim.status.as_ref().and_then(|s| s.allocation.as_ref()) {
            Some(a) => state.available_on[index] = a.node_selector.clone(),
            None => {
                state.to_allocate.push(index);
                specs.push(&claim.spec);
                if let Some(reject) = check_requests(m, claim, gates) {
                    return reject;
                }
            }
        }
    }
    // The extended-resource claim comes last; its requests are not validated (upstream
    // leaves an earlier cycle's claim to Filter).
    if let Some(x) = &extended {
        if in_use(&x.claim, pod) {
            return PreFilter::Reject(unschedulable(CLAIM_IN_USE));
        }
        match x.claim.status.as_ref().and_then(|s| s.allocation.as_ref()) {
            Some(a) => state.available_on[claims.len()] = a.node_selector.clone(),
            None => specs.push(&x.claim.spec),
        }
    }
    state.shape = cache.shape_of(m, &specs);
    state.claims = claims;
    state.extended = extended.map(Box::new);
    PreFilter::Run(state)
}

/// An allocated claim that cannot take another consumer and is not the pod's: `resourceclaim
/// in use`.
fn in_use(claim: &ResourceClaim, pod: &Pod) -> bool {
    let reserved = (claim.status.as_ref())
        .and_then(|s| s.reserved_for.as_ref())
        .map_or(0, Vec::len);
    let allocated = (claim.status.as_ref()).is_some_and(|s| s.allocation.is_some());
    allocated
        && reserved >= RESERVED_FOR_MAX_SIZE
        && !resourceclaim::is_reserved_for_pod(pod, claim)
}

/// PreFilter's checks of a claim to allocate: every request names a device class that exists
/// (`validateDeviceClass`), subrequests need DRAPrioritizedList.
fn check_requests(
    m: &DraManager,
    claim: &ResourceClaim,
    gates: &FeatureGates,
) -> Option<PreFilter> {
    let key = format!(
        "{}/{}",
        claim.metadata.namespace.as_deref().unwrap_or(""),
        claim.metadata.name.as_deref().unwrap_or("")
    );
    let validate = |class: &str, request: &str| {
        if class.is_empty() {
            return Some(PreFilter::Error(format!(
                "request {request}: unsupported request type"
            )));
        }
        (!m.inventory().classes.contains_key(class)).then(|| {
            PreFilter::Reject(unschedulable(format!(
                "request {request}: device class {class} does not exist"
            )))
        })
    };
    let requests = (claim.spec.devices.as_ref()).and_then(|d| d.requests.as_ref());
    for request in requests.into_iter().flatten() {
        if let Some(exactly) = &request.exactly {
            if let Some(r) = validate(&exactly.device_class_name, &request.name) {
                return Some(r);
            }
        } else if let Some(subs) = request.first_available.as_ref().filter(|s| !s.is_empty()) {
            if !gates.dra_prioritized_list {
                return Some(PreFilter::Reject(unschedulable(format!(
                    "resource claim {key}, request {}: has subrequests, but the DRAPrioritizedList feature is disabled",
                    request.name
                ))));
            }
            for sub in subs {
                let name = format!("{}/{}", request.name, sub.name);
                if let Some(r) = validate(&sub.device_class_name, &name) {
                    return Some(r);
                }
            }
        } else {
            return Some(PreFilter::Reject(unschedulable(format!(
                "resource claim {key}, request {}: unknown request type",
                request.name
            ))));
        }
    }
    None
}

/// A node's Filter verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    CannotAllocate,
    NotAvailable,
    /// The extended-resource claim is one an earlier cycle created.
    CannotScheduleExtendedClaim,
    /// An extended resource the node does not publish and no DeviceClass backs.
    CannotFitResource,
    /// The allocator failed: the scheduling cycle fails with this error.
    Error(String),
}

impl Verdict {
    /// The node's status (success for `Pass`; an `Error` is not a node status).
    pub fn status(&self) -> Status {
        match self {
            Verdict::Pass => Status::success(),
            Verdict::CannotAllocate => unschedulable(CANNOT_ALLOCATE_ALL_CLAIMS),
            Verdict::NotAvailable => unschedulable(NOT_AVAILABLE_ON_NODE),
            Verdict::CannotScheduleExtendedClaim => unschedulable(CANNOT_SCHEDULE_EXTENDED_CLAIM),
            Verdict::CannotFitResource => unschedulable(CANNOT_FIT_RESOURCE),
            Verdict::Error(e) => Status::new(Code::Error, NAME, e.clone()),
        }
    }
}

const UNKNOWN: u8 = 0;
const NO: u8 = 1;
const YES: u8 = 2;
const CEL_ERROR: u8 = 3;

/// Filter verdicts per claim shape and node, reused while the node's devices stand still, and
/// CEL verdicts per selector and device.
#[derive(Default)]
pub struct FilterCache {
    /// Shapes by their requests' names (then compared whole).
    index: HashMap<String, Vec<usize>>,
    shapes: Vec<Shape>,
    expr_index: HashMap<String, usize>,
    exprs: Vec<ExprCache>,
    /// Per device slot: whether the device converts to a CEL value (UNKNOWN, YES, NO); every
    /// selector reads that first.
    converts: Vec<u8>,
    /// The distinct values of each set of parts selectors read, per device slot: selectors
    /// that read the same parts (a template per product and size) share them.
    projections: Projections,
}

/// Per set of read parts: each slot's projection as a number (`u32::MAX`: not yet), and the
/// numbers of the distinct projections.
#[derive(Default)]
struct Projections(HashMap<Vec<cel::Read>, ReadSet>);

/// One set of read parts: each slot's projection number, and the numbers by projection.
type ReadSet = (Vec<u32>, HashMap<Vec<Option<String>>, u32>);

impl Projections {
    /// The number of the projection of the (converting) device in `slot` on `reads`.
    fn of(&mut self, m: &DraManager, reads: &[cel::Read], slot: u32, device: &cel::Device) -> u32 {
        let (slots, ids) = match self.0.get_mut(reads) {
            Some(entry) => entry,
            None => self.0.entry(reads.to_vec()).or_default(),
        };
        if slots.len() <= slot as usize {
            slots.resize(m.slots(), u32::MAX);
        }
        if slots[slot as usize] == u32::MAX {
            let key = cel::projection_of_converting(device, reads);
            let next = ids.len() as u32;
            slots[slot as usize] = *ids.entry(key).or_insert(next);
        }
        slots[slot as usize]
    }
}

/// One CEL selector's verdicts: per device slot, and per distinct value of what it reads
/// (`cel::projection`), so that devices alike in those are evaluated once.
struct ExprCache {
    selector: std::rc::Rc<Result<cel::Selector, String>>,
    slots: Vec<u8>,
    /// By projection number (see [`Projections`]).
    by_projection: HashMap<u32, u8>,
}

struct Shape {
    /// The specs of the claims to allocate.
    specs: Vec<ResourceClaimSpec>,
    /// Per node: (node version, global version, verdict) of the last allocation check.
    verdicts: Vec<(u32, u32, u8)>,
    counted: Option<Counted>,
}

/// A shape whose allocation is a count of matching free devices.
struct Counted {
    /// The class's selectors, then the request's (`isSelectable`'s order), in `exprs`.
    exprs: Vec<usize>,
    count: usize,
    /// The request's tolerations: with DRADeviceTaints a device whose taints they do not
    /// all tolerate is never taken (`allocateDevice`), so it does not count.
    tolerations: Vec<DeviceToleration>,
    /// Per device slot: UNKNOWN, NO, YES or CEL_ERROR.
    matches: Vec<u8>,
}

const NOT_CACHED: (u32, u32, u8) = (u32::MAX, u32::MAX, UNKNOWN);

impl FilterCache {
    /// Node indices changed: verdicts are dropped (shapes and CEL verdicts stay).
    pub fn reindex(&mut self, nodes: usize) {
        for s in &mut self.shapes {
            s.verdicts = vec![NOT_CACHED; nodes];
        }
    }

    fn shape_of(&mut self, m: &DraManager, specs: &[&ResourceClaimSpec]) -> usize {
        // Claims from one template have equal specs: found by a cheap key, then compared.
        let key = (specs.iter())
            .flat_map(|s| s.devices.iter().flat_map(|d| d.requests.iter().flatten()))
            .map(|r| r.name.as_str())
            .collect::<Vec<_>>()
            .join("/");
        let bucket = self.index.entry(key).or_default();
        let same = |shape: &Shape| {
            shape.specs.len() == specs.len() && shape.specs.iter().zip(specs).all(|(a, b)| a == *b)
        };
        if let Some(&i) = bucket.iter().find(|&&i| same(&self.shapes[i])) {
            return i;
        }
        bucket.push(self.shapes.len());
        let counted = match specs {
            [spec] => counted(m, spec).map(|(expressions, count, tolerations)| Counted {
                exprs: (expressions.into_iter())
                    .map(|e| self.expr_of(m, e))
                    .collect(),
                count,
                tolerations,
                matches: vec![UNKNOWN; m.slots()],
            }),
            _ => None,
        };
        self.shapes.push(Shape {
            specs: specs.iter().map(|&s| s.clone()).collect(),
            verdicts: Vec::new(),
            counted,
        });
        self.shapes.len() - 1
    }

    fn expr_of(&mut self, m: &DraManager, expression: String) -> usize {
        if let Some(&i) = self.expr_index.get(&expression) {
            return i;
        }
        self.exprs.push(ExprCache {
            selector: m.selectors.get(&expression),
            slots: vec![UNKNOWN; m.slots()],
            by_projection: HashMap::new(),
        });
        self.expr_index.insert(expression, self.exprs.len() - 1);
        self.exprs.len() - 1
    }
}

/// The count a claim's allocation comes down to, if it does (see the module comment): the
/// CEL expressions a device must pass, in order, the count and the request's tolerations.
fn counted(
    m: &DraManager,
    spec: &ResourceClaimSpec,
) -> Option<(Vec<String>, usize, Vec<DeviceToleration>)> {
    if m.shares_capacity() {
        // A device in use may still have capacity, and one that is free may lack it.
        return None;
    }
    let devices = spec.devices.as_ref()?;
    if devices.constraints.as_ref().is_some_and(|c| !c.is_empty()) {
        return None;
    }
    let [request] = devices.requests.as_deref()? else {
        return None;
    };
    let exactly = request.exactly.as_ref()?;
    let count = exactly.count.unwrap_or(1);
    let exact_count = exactly.allocation_mode.as_deref().unwrap_or("ExactCount") == "ExactCount";
    let selectors = exactly.selectors.as_deref().unwrap_or(&[]);
    let class = m.inventory().classes.get(&exactly.device_class_name)?;
    let usable = exact_count
        && exactly.admin_access.is_none()
        // With the gate off the allocator refuses it; with it on, devices may lack capacity.
        && exactly.capacity.is_none()
        && (1..=allocator::ALLOCATION_RESULTS_MAX_SIZE as i64).contains(&count)
        && selectors.iter().all(|s| s.cel.is_some());
    let class_selectors = class.spec.selectors.as_deref().unwrap_or(&[]);
    let expressions = (class_selectors.iter().chain(selectors))
        .filter_map(|s: &DeviceSelector| Some(s.cel.as_ref()?.expression.clone()))
        .collect();
    let tolerations = exactly.tolerations.clone().unwrap_or_default();
    usable.then_some((expressions, count as usize, tolerations))
}

/// Filter's verdict on one node when it is known without work: the extended-resource claim
/// decides it alone, or the pod's claims all need allocating and the cached verdict of their
/// shape on the node is current. `published`: the resources the node's allocatable lists.
#[inline]
pub fn known_verdict(
    m: &DraManager,
    cache: &FilterCache,
    state: &CycleState,
    node_index: usize,
    published: &ResourceSet,
) -> Option<bool> {
    if let Some(x) = &state.extended {
        match x.on_node(!state.claims.is_empty(), published) {
            Err(_) => return Some(false),
            Ok(false) => return Some(true),
            Ok(true) if x.allocated => return None,
            Ok(true) => {}
        }
    }
    if state.to_allocate.len() != state.claims.len() {
        return None;
    }
    let (v, g, verdict) = *cache.shapes[state.shape].verdicts.get(node_index)?;
    let current = v == m.node(node_index).version && g == m.global_version;
    match verdict {
        YES if current => Some(true),
        NO if current => Some(false),
        _ => None,
    }
}

/// `Filter` on one node; `published`: the resources the node's allocatable lists.
#[allow(clippy::too_many_arguments)]
pub fn filter(
    m: &DraManager,
    cache: &mut FilterCache,
    state: &CycleState,
    pod: &Pod,
    node_index: usize,
    node: &Node,
    published: &ResourceSet,
    gates: &FeatureGates,
) -> Verdict {
    if let Some(x) = &state.extended {
        match x.on_node(!state.claims.is_empty(), published) {
            Err(verdict) => return verdict,
            Ok(false) => return Verdict::Pass,
            Ok(true) => {}
        }
    }
    let mut unavailable = Vec::new();
    for (index, selector) in state.available_on.iter().enumerate() {
        if let Some(s) = selector
            && !node_affinity::terms_match(&s.node_selector_terms, node)
        {
            unavailable.push(index);
        }
    }
    if !state.to_allocate.is_empty() || state.extended.as_ref().is_some_and(|x| x.to_allocate()) {
        match allocation_verdict(m, cache, state, pod, node_index, node, gates) {
            Verdict::Pass => {}
            other => return other,
        }
    }
    if !unavailable.is_empty() {
        state.unavailable.borrow_mut().extend(unavailable);
        return Verdict::NotAvailable;
    }
    Verdict::Pass
}

/// Whether the claims to allocate can be allocated on the node: the cached verdict, the count,
/// or the allocator.
fn allocation_verdict(
    m: &DraManager,
    cache: &mut FilterCache,
    state: &CycleState,
    pod: &Pod,
    node_index: usize,
    node: &Node,
    gates: &FeatureGates,
) -> Verdict {
    let view = m.node(node_index);
    let versions = (view.version, m.global_version);
    let FilterCache {
        shapes,
        exprs,
        converts,
        projections,
        ..
    } = cache;
    let shape = &mut shapes[state.shape];
    if shape.verdicts.len() <= node_index {
        shape.verdicts.resize(node_index + 1, NOT_CACHED);
    }
    let (v, g, cached) = shape.verdicts[node_index];
    if (v, g) == versions && cached != UNKNOWN {
        return if cached == YES {
            Verdict::Pass
        } else {
            Verdict::CannotAllocate
        };
    }
    let counted = match (&mut shape.counted, view.invalid_pool || view.partitionable) {
        (Some(c), false) => count_fits(m, c, exprs, (converts, projections), &view.devices),
        _ => None,
    };
    let fits = match counted {
        Some(fits) => fits,
        None => match allocate(m, state, pod, node_index, node, gates) {
            Ok(Some(_)) => true,
            Ok(None) => false,
            Err(e) => return Verdict::Error(e.message().to_string()),
        },
    };
    shape.verdicts[node_index] = (versions.0, versions.1, if fits { YES } else { NO });
    if fits {
        Verdict::Pass
    } else {
        Verdict::CannotAllocate
    }
}

/// At least `count` free devices of the node match; `None` when a selector errs on one of
/// them (the allocator decides then).
fn count_fits(
    m: &DraManager,
    c: &mut Counted,
    exprs: &mut [ExprCache],
    (converts, projections): (&mut Vec<u8>, &mut Projections),
    devices: &[u32],
) -> Option<bool> {
    let mut free = 0;
    for &slot in devices {
        match device_verdict(m, c, exprs, (converts, projections), slot) {
            CEL_ERROR => return None,
            YES if !m.is_in_use(slot) => free += 1,
            _ => {}
        }
    }
    Some(free >= c.count)
}

/// Whether the device in `slot` counts for the shape (cached per slot): YES when it passes
/// the selectors (`isSelectable`: the first selector that fails or errs decides) and, with
/// DRADeviceTaints, the request tolerates its taints (`allocateDevice` checks them after
/// selection, so a CEL error still comes first); NO or CEL_ERROR otherwise.
fn device_verdict(
    m: &DraManager,
    c: &mut Counted,
    exprs: &mut [ExprCache],
    (converts, projections): (&mut Vec<u8>, &mut Projections),
    slot: u32,
) -> u8 {
    let known = c.matches[slot as usize];
    if known != UNKNOWN {
        return known;
    }
    let mut verdict = YES;
    for &e in &c.exprs {
        verdict = expr_verdict(m, (converts, projections), &mut exprs[e], slot);
        if verdict != YES {
            break;
        }
    }
    if verdict == YES
        && m.device_taints()
        && taints::prevents_allocation(m.device(slot).1, &c.tolerations)
    {
        verdict = NO;
    }
    c.matches[slot as usize] = verdict;
    verdict
}

/// Reserve's allocation when Filter decided by a count (see [`counted`]): the first free
/// devices of the node that pass the claim's selectors, in the allocator's search order —
/// what its search picks for such a claim, as it never backtracks there
/// ([`allocator::allocation_of`]). `None`: the allocator has to run (another shape, an
/// invalid pool, partitionable devices, a selector error).
pub fn counted_allocation(
    m: &DraManager,
    cache: &mut FilterCache,
    state: &CycleState,
    node_index: usize,
) -> Option<Vec<Allocation>> {
    let [index] = state.to_allocate[..] else {
        return None;
    };
    let view = m.node(node_index);
    let FilterCache {
        shapes,
        exprs,
        converts,
        projections,
        ..
    } = cache;
    let c = shapes[state.shape]
        .counted
        .as_mut()
        .filter(|_| !view.invalid_pool && !view.partitionable)?;
    let (ns, name) = &state.claims[index];
    let claim = m.claim(ns, name)?;
    let devices = claim.spec.devices.as_ref()?;
    let request = &devices.requests.as_deref()?.first()?.name;
    let mut picked = Vec::with_capacity(c.count);
    for &slot in &view.devices {
        match device_verdict(m, c, exprs, (converts, projections), slot) {
            CEL_ERROR => return None,
            YES if !m.is_in_use(slot) && picked.len() < c.count => picked.push(m.device(slot)),
            _ => {}
        }
    }
    let allocation = allocator::allocation_of(request, &c.tolerations, &picked).ok()?;
    (picked.len() == c.count).then(|| vec![allocation])
}

/// One selector's verdict on the device in `slot`: cached per slot, and per projection when
/// the selector reads only named parts of the device.
fn expr_verdict(
    m: &DraManager,
    (converts, projections): (&mut Vec<u8>, &mut Projections),
    e: &mut ExprCache,
    slot: u32,
) -> u8 {
    let known = e.slots[slot as usize];
    if known != UNKNOWN {
        return known;
    }
    if converts.len() <= slot as usize {
        converts.resize(m.slots(), UNKNOWN);
    }
    let (slice, device) = m.device(slot);
    let view = cel::Device::of(&slice.spec.driver, device, m.consumable_capacity());
    let verdict = match &*e.selector {
        Err(_) => CEL_ERROR,
        Ok(selector) => {
            let eval = || match selector.matches(&view) {
                Ok(true) => YES,
                Ok(false) => NO,
                Err(_) => CEL_ERROR,
            };
            match selector.reads() {
                None => eval(),
                Some(reads) => {
                    let converts = &mut converts[slot as usize];
                    if *converts == UNKNOWN {
                        *converts = if cel::converts(&view) { YES } else { NO };
                    }
                    match *converts {
                        YES => {
                            let id = projections.of(m, reads, slot, &view);
                            *e.by_projection.entry(id).or_insert_with(eval)
                        }
                        _ => CEL_ERROR,
                    }
                }
            }
        }
    };
    e.slots[slot as usize] = verdict;
    verdict
}

/// The structured allocator on one node for the claims to allocate (`Allocate`), the
/// extended-resource claim last.
pub fn allocate(
    m: &DraManager,
    state: &CycleState,
    _pod: &Pod,
    node_index: usize,
    node: &Node,
    gates: &FeatureGates,
) -> Result<Option<Vec<Allocation>>, AllocateError> {
    let extended = (state.extended.iter()).filter(|x| x.to_allocate());
    let claims: Vec<&ResourceClaim> = (state.to_allocate.iter())
        .map(|&i| {
            let (ns, name) = &state.claims[i];
            m.claim(ns, name).expect("resolved at PreFilter")
        })
        .chain(extended.map(|x| &x.claim))
        .collect();
    with_allocator(m, node_index, node, gates, |alloc, view, slices| {
        alloc.allocate_among(view, &claims, slices)
    })
}

/// What [`allocate`] would pick on the node, and why each other device there was not picked,
/// per claim and request (`schedsim explain`).
pub fn explain_devices(
    m: &DraManager,
    state: &CycleState,
    node_index: usize,
    node: &Node,
    gates: &FeatureGates,
) -> Result<Vec<crate::dra::allocator::ClaimDevices>, AllocateError> {
    let extended = (state.extended.iter()).filter(|x| x.to_allocate());
    let claims: Vec<&ResourceClaim> = (state.to_allocate.iter())
        .filter_map(|&i| {
            let (ns, name) = &state.claims[i];
            m.claim(ns, name)
        })
        .chain(extended.map(|x| &x.claim))
        .collect();
    if claims.is_empty() {
        return Ok(Vec::new());
    }
    with_allocator(m, node_index, node, gates, |alloc, view, slices| {
        alloc.explain_among(view, &claims, slices)
    })
}

/// The allocator over the manager's devices, the node as it sees it, and the slices that
/// reach the node.
fn with_allocator<T>(
    m: &DraManager,
    node_index: usize,
    node: &Node,
    gates: &FeatureGates,
    f: impl FnOnce(&Allocator, &NodeView, &[&k8s_openapi::api::resource::v1::ResourceSlice]) -> T,
) -> T {
    let inventory = m.inventory();
    let alloc = Allocator {
        features: features(gates),
        allocated: m.allocated(),
        consumed: m.consumed(),
        classes: &inventory.classes,
        slices: &inventory.slices,
        selectors: &m.selectors,
    };
    let selects = |s: &NodeSelector| node_affinity::terms_match(&s.node_selector_terms, node);
    let view = NodeView {
        name: &node.name,
        selects: &selects,
    };
    let slices = m.slice_refs(&m.node(node_index).slices);
    f(&alloc, &view, &slices)
}

/// What PostFilter does to a claim.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PostFilterAction {
    /// Deallocates the claim (namespace, name).
    Deallocate(String, String),
    /// Deletes the extended-resource claim (namespace, name) an earlier cycle created.
    Delete(String, String),
}

/// `PostFilter`: an allocated claim that was not available on some node and that no other
/// pod reserves is deallocated, for a later attempt to allocate it elsewhere; otherwise an
/// extended-resource claim of an earlier cycle is deleted. Upstream picks the unavailable
/// claim at random (map order); schedsim the first in the pod's order, the extended-resource
/// claim last. Returns the status reason and what to do.
pub fn post_filter(
    m: &DraManager,
    state: Option<&CycleState>,
    pod: &Pod,
) -> (&'static str, Option<PostFilterAction>) {
    let Some(state) = state.filter(|s| !s.is_empty()) else {
        return (NO_NEW_CLAIMS_TO_DEALLOCATE, None);
    };
    let earlier = state.extended.as_ref().and_then(|x| x.existing.clone());
    for &index in state.unavailable.borrow().iter() {
        if index == state.claims.len() {
            // The extended-resource claim: an earlier cycle's is deleted below.
            match earlier {
                Some(_) => break,
                None => continue,
            }
        }
        let (ns, name) = &state.claims[index];
        let Some(claim) = m.claim(ns, name) else {
            continue;
        };
        let reserved = (claim.status.as_ref()).and_then(|s| s.reserved_for.as_deref());
        let free = match reserved {
            None | Some([]) => true,
            Some([only]) => only.uid == pod.uid,
            Some(_) => false,
        };
        if free {
            let action = PostFilterAction::Deallocate(ns.clone(), name.clone());
            return (DEALLOCATION_COMPLETED, Some(action));
        }
    }
    if let Some((ns, name)) = earlier {
        return (DELETION_COMPLETED, Some(PostFilterAction::Delete(ns, name)));
    }
    (STILL_NOT_SCHEDULABLE, None)
}
