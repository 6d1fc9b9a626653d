//! One `Allocate` call: the checks before searching (`validateDeviceRequest`) and the
//! depth-first search with backtracking (`allocateOne`, `isSelectable`, `selectorsMatch`,
//! `allocateDevice`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use k8s_openapi::api::resource::v1::{
    CapacityRequirements, DeviceCapacity, DeviceClass, DeviceSelector, DeviceTaint,
    DeviceToleration, ResourceClaim,
};

use super::constraints::{Constraint, MatchAttribute};
use super::pools::{Candidate, Pool, device_reaches};
use super::{ALLOCATION_RESULTS_MAX_SIZE, Allocator, NodeView};
use crate::dra::DeviceId;
use crate::dra::capacity::{self, DistinctAttribute};
use crate::dra::cel;
use crate::dra::counters::{self, PoolCounters};
use crate::dra::taints;

/// A request or subrequest (`requestAccessor`).
pub(super) struct Request<'a> {
    pub(super) name: &'a str,
    /// The parent of a subrequest.
    pub(super) parent: Option<&'a str>,
    pub(super) class_name: &'a str,
    pub(super) mode: &'a str,
    pub(super) count: i64,
    pub(super) admin_access: Option<bool>,
    pub(super) selectors: &'a [DeviceSelector],
    pub(super) capacity: Option<&'a CapacityRequirements>,
    pub(super) tolerations: &'a [DeviceToleration],
}

impl Request<'_> {
    /// `request` or `parent/subrequest`.
    pub(super) fn full_name(&self) -> String {
        match self.parent {
            Some(p) => format!("{p}/{}", self.name),
            None => self.name.to_owned(),
        }
    }

    fn admin(&self) -> bool {
        self.admin_access.unwrap_or(false)
    }
}

pub(super) struct RequestData<'a> {
    pub(super) request: Request<'a>,
    pub(super) class: &'a DeviceClass,
    pub(super) num_devices: usize,
    /// For allocation mode All: the devices, decided up front.
    pub(super) all_devices: Option<Vec<Candidate<'a>>>,
}

/// (claim, request, subrequest).
pub(super) type RequestKey = (usize, usize, usize);

/// Why the search does not take a device for a request: the first of its checks the device
/// fails, in the search's order.
#[derive(Debug, Clone, Copy)]
pub(super) enum Refusal<'a> {
    /// Allocated to another claim, or picked in this search (with admin access: for this
    /// claim).
    InUse,
    Unselectable(Unselectable),
    /// The request's share does not fit (DRAConsumableCapacity).
    Capacity(capacity::Misfit<'a>),
    /// What it consumes exceeds its pool's counters, or partitionable devices are off.
    Counters,
    /// An untolerated `NoSchedule` or `NoExecute` taint (DRADeviceTaints).
    Taint(&'a DeviceTaint),
    /// The claim's constraint of this index refuses it beside the devices picked.
    Constraint(usize),
}

/// Why `isSelectable` is false.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unselectable {
    /// The class's selector of this index is false.
    ClassSelector(usize),
    /// The request's selector of this index is false.
    RequestSelector(usize),
    /// The device chooses its nodes, and not this one.
    OtherNode,
}

/// Why the search stops without a solution.
pub(super) enum Stop {
    /// `errAllocationResultMaxSizeExceeded`: backtrack further.
    MaxSize,
    Error(String),
}

pub(super) struct Internal<'a> {
    pub(super) request: String,
    pub(super) tolerations: &'a [DeviceToleration],
    pub(super) candidate: Candidate<'a>,
    pub(super) admin_access: Option<bool>,
    /// A share of a device that allows multiple allocations, and the capacity it takes.
    pub(super) share: Option<capacity::Consumed>,
}

/// One `Allocate` call.
pub(super) struct Run<'a, 'c> {
    pub(super) alloc: &'c Allocator<'a>,
    pub(super) node: &'c NodeView<'c>,
    pub(super) claims: &'c [&'a ResourceClaim],
    pub(super) pools: Vec<Pool<'a>>,
    /// The devices of the complete, valid pools, in search order (pools by driver and name,
    /// slices and devices as listed).
    pub(super) devices: Vec<Candidate<'a>>,
    pub(super) requests: HashMap<RequestKey, RequestData<'a>>,
    pub(super) constraints: Vec<Vec<Constraint>>,
    /// `isSelectable`'s verdicts: `None` when selectable.
    pub(super) matches: HashMap<(DeviceId, RequestKey), Option<Unselectable>>,
    /// Devices picked so far, with the claims they are picked for.
    pub(super) allocating: HashMap<DeviceId, BTreeSet<usize>>,
    /// Per pool (by index), its counters once a device consuming them was tried.
    pub(super) counters: HashMap<usize, PoolCounters>,
    /// Capacity the shares picked so far take, per device (`allocatingCapacity`).
    pub(super) allocating_capacity: capacity::Aggregated,
    pub(super) result: Vec<Vec<Internal<'a>>>,
}

pub(super) fn claim_key(c: &ResourceClaim) -> String {
    match &c.metadata.namespace {
        Some(ns) if !ns.is_empty() => format!("{ns}/{}", c.metadata.name.as_deref().unwrap_or("")),
        _ => c.metadata.name.clone().unwrap_or_default(),
    }
}
impl<'a> Run<'a, '_> {
    /// The checks `Allocate` makes before searching, and each request's data.
    pub(super) fn validate(&mut self) -> Result<(), String> {
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
                    let (class, selectors) = (data.class, data.request.selectors);
                    if (self.unfit(key, class, selectors, data.request.capacity, &c)?).is_none() {
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
    /// chooses its nodes selects this one (cached per device and request). `None` when
    /// selectable, else the first check that fails.
    fn selectable(
        &mut self,
        key: RequestKey,
        class: &'a DeviceClass,
        selectors: &'a [DeviceSelector],
        c: &Candidate,
    ) -> Result<Option<Unselectable>, String> {
        let id = c.id();
        if let Some(&m) = self.matches.get(&(id.clone(), key)) {
            return Ok(m);
        }
        let class_selectors = class.spec.selectors.as_deref().unwrap_or(&[]);
        let m = if let Some(i) = self.first_false(key.0, c, Some(class), class_selectors)? {
            Some(Unselectable::ClassSelector(i))
        } else if let Some(i) = self.first_false(key.0, c, None, selectors)? {
            Some(Unselectable::RequestSelector(i))
        } else if c.slice.spec.per_device_node_selection == Some(true)
            && !device_reaches(c.device, self.node)
        {
            Some(Unselectable::OtherNode)
        } else {
            None
        };
        self.matches.insert((id, key), m);
        Ok(m)
    }

    /// `selectorsMatch`: `None` when every selector matches, else the index of the first
    /// that does not.
    fn first_false(
        &self,
        ci: usize,
        c: &Candidate,
        class: Option<&DeviceClass>,
        selectors: &[DeviceSelector],
    ) -> Result<Option<usize>, String> {
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
                Ok(false) => return Ok(Some(i)),
                Err(e) => {
                    let (d, p, n) = c.id();
                    return Err(owner(&format!(
                        "selector #{i} on device {d}/{p}/{n}: CEL runtime error: {e}"
                    )));
                }
            }
        }
        Ok(None)
    }

    /// What the search asks of a device before trying to allocate it, in its order:
    /// [`Self::selectable`], then that the request's share fits (DRAConsumableCapacity). An
    /// "All" request's devices are those that pass.
    pub(super) fn unfit(
        &mut self,
        key: RequestKey,
        class: &'a DeviceClass,
        selectors: &'a [DeviceSelector],
        capacity: Option<&'a CapacityRequirements>,
        c: &Candidate<'a>,
    ) -> Result<Option<Refusal<'a>>, String> {
        if let Some(u) = self.selectable(key, class, selectors, c)? {
            return Ok(Some(Refusal::Unselectable(u)));
        }
        Ok(self.capacity_misfit(capacity, c).map(Refusal::Capacity))
    }

    /// `allocateOne`'s checks of one device for an ExactCount request, in its order: free
    /// (with admin access: of this claim), [`Self::unfit`], [`Self::allocate_device`]. `None`
    /// when the device is taken.
    pub(super) fn try_device(
        &mut self,
        key: RequestKey,
        c: Candidate<'a>,
    ) -> Result<Option<Refusal<'a>>, String> {
        let data = &self.requests[&key];
        let id = c.id();
        let admin = data.request.admin();
        if (admin && self.in_use_by_claim(&id, key.0)) || (!admin && self.in_use(&id)) {
            return Ok(Some(Refusal::InUse));
        }
        let (class, selectors, capacity) =
            (data.class, data.request.selectors, data.request.capacity);
        if let Some(refusal) = self.unfit(key, class, selectors, capacity, &c)? {
            return Ok(Some(refusal));
        }
        self.allocate_device(key, c, false)
    }

    fn in_use(&self, id: &DeviceId) -> bool {
        self.alloc.allocated.contains(id) || self.allocating.get(id).is_some_and(|c| !c.is_empty())
    }

    fn in_use_by_claim(&self, id: &DeviceId, ci: usize) -> bool {
        self.allocating.get(id).is_some_and(|c| c.contains(&ci))
    }

    /// `allocateOne`: (claim, request, subrequest, device) to fill next; `in_sub` when working
    /// on one particular subrequest.
    pub(super) fn allocate_one(
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
            if (self.allocate_device(key, c, true).map_err(Stop::Error)?).is_some() {
                return Ok(false);
            }
            let done = self.allocate_one((ci, ri, si, di + 1), in_sub);
            if !matches!(done, Ok(true)) {
                self.deallocate(key);
            }
            return done;
        }
        for i in 0..self.devices.len() {
            let c = self.devices[i];
            if (self.try_device(key, c).map_err(Stop::Error)?).is_some() {
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
    /// it and the claim's constraints allow it (`None`), else says why not; `must`
    /// (allocation mode All) makes a constraint violation an error. As upstream, the
    /// counters of a device that a taint or constraint then refuses are not given back for
    /// the rest of this search.
    pub(super) fn allocate_device(
        &mut self,
        key: RequestKey,
        c: Candidate<'a>,
        must: bool,
    ) -> Result<Option<Refusal<'a>>, String> {
        let (ci, _, _) = key;
        let data = &self.requests[&key];
        let id = c.id();
        let admin = data.request.admin();
        let multiple = self.allows_multiple(&c);
        if (!multiple && admin && self.in_use_by_claim(&id, ci)) || (!admin && self.in_use(&id)) {
            return Ok(Some(Refusal::InUse));
        }
        if !self.take_counters(c) {
            return Ok(Some(Refusal::Counters));
        }
        let data = &self.requests[&key];
        // After the counters, as upstream: a tainted device's counters stay taken for the rest
        // of this search, as those of a device a constraint refuses do.
        if self.alloc.features.device_taints
            && let Some(taint) = taints::preventing(c.device, data.request.tolerations)
        {
            return Ok(Some(Refusal::Taint(taint)));
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
                return Ok(Some(Refusal::Constraint(i)));
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
            if let Some(misfit) = self.capacity_misfit(data.request.capacity, &c) {
                return Ok(Some(Refusal::Capacity(misfit)));
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
        Ok(None)
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

    /// `CmpRequestOverCapacity` for the device, when the feature is on: `None` when the
    /// request's share fits, else the capacity that refuses it.
    fn capacity_misfit(
        &self,
        requests: Option<&'a CapacityRequirements>,
        c: &Candidate<'a>,
    ) -> Option<capacity::Misfit<'a>> {
        if !self.alloc.features.consumable_capacity {
            return None;
        }
        static NONE: BTreeMap<String, DeviceCapacity> = BTreeMap::new();
        let id = c.id();
        capacity::misfit(
            self.alloc.consumed.get(&id),
            requests,
            c.device.capacity.as_ref().unwrap_or(&NONE),
            self.allocating_capacity.get(&id),
        )
    }
}
