//! Which devices an allocation on a node picked for each request of a pod's claims, and why
//! every other device the search reaches was not picked (`schedsim explain`). Upstream has no
//! such view: the search of [`Allocator::allocate_among`] runs again, then each device is put
//! through the search's own checks for each (sub)request, in the search's order
//! (`allocateOne`, `isSelectable`, `allocateDevice` of `allocator_stable.go`), beside the
//! devices the solution picked; the first check it fails is its reason.
//!
//! A device is judged against the solution as a whole, not against the moment the search
//! reached it: one that a later request's pick rules out is reported so. When the search finds
//! no solution, each device is judged against a search that picked nothing yet, which says
//! which devices could serve each request on their own.

use std::collections::{BTreeSet, HashMap};

use k8s_openapi::api::resource::v1::{DeviceTaint, ResourceClaim, ResourceSlice};
use serde::Serialize;

use super::constraints::{Constraint, lookup_attribute};
use super::pools::Candidate;
use super::search::{Refusal, RequestKey, Run, Unselectable, claim_key};
use super::{AllocateError, Allocator, NodeView, solve};
use crate::dra::DeviceId;
use crate::dra::capacity::{self, Misfit};
use crate::dra::counters::PoolCounters;

/// One claim's requests and their devices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClaimDevices {
    /// `namespace/name`.
    pub claim: String,
    /// Its requests in order, each subrequest of a `firstAvailable` request in its own entry.
    pub requests: Vec<RequestDevices>,
}

/// One request or subrequest: the devices picked for it and why the others were not.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RequestDevices {
    /// `request`, or `request/subrequest`.
    pub request: String,
    pub device_class: String,
    /// `ExactCount` or `All`.
    pub mode: String,
    /// The devices it needs: its count, or for `All` the devices that match it.
    pub count: usize,
    /// Whether the allocation served it: not for a subrequest left unused, nor for any request
    /// when no allocation was found.
    pub used: bool,
    /// `driver/pool/device`, in the allocation's order.
    pub picked: Vec<String>,
    /// Every other device the search reaches on the node, in its order.
    pub others: Vec<DeviceReason>,
}

/// A device not picked for a request, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeviceReason {
    /// `driver/pool/device`.
    pub device: String,
    pub reason: String,
}

/// The reason of a device that passes every check of a request the allocation served.
const NOT_NEEDED: &str =
    "usable, not needed: the search takes devices in order and the request was complete";

/// The reason of a device that passes every check when no allocation was found.
const USABLE_ALONE: &str =
    "usable alone, but no allocation of all the pod's claims was found on this node";

impl<'a> Allocator<'a> {
    /// For each claim, each (sub)request: the devices [`Self::allocate_among`] picks over the
    /// same inputs, and for every other device the search reaches on `node`, the first reason
    /// it could not serve that request beside them (or that it could, but the request was
    /// complete before the search reached it). When no allocation is found, nothing is picked
    /// and each device is judged on its own (why not on this node); the devices of an invalid
    /// pool, which makes `allocate_among` fail on this node, are not searched, so not listed.
    /// An error is `allocate_among`'s. Meant for the few pods a user asks about: it searches
    /// again.
    pub fn explain_among(
        &self,
        node: &NodeView,
        claims: &[&'a ResourceClaim],
        slices: &[&'a ResourceSlice],
    ) -> Result<Vec<ClaimDevices>, AllocateError> {
        let mut run = self.start(node, claims, slices)?;
        let found = solve(&mut run)?;
        if !found {
            // A failed search leaves the counters of refused devices taken, as upstream's does.
            run = self.start(node, claims, slices)?;
        }
        let saved = Saved::of(&run);
        let mut out = Vec::with_capacity(claims.len());
        for (ci, claim) in claims.iter().enumerate() {
            let count = (claim.spec.devices.as_ref())
                .and_then(|d| d.requests.as_ref())
                .map_or(0, Vec::len);
            let mut requests = Vec::new();
            for ri in 0..count {
                let keys: Vec<RequestKey> = (0..)
                    .map(|si| (ci, ri, si))
                    .take_while(|k| run.requests.contains_key(k))
                    .collect();
                let used = found.then(|| used_subrequest(&run, &keys)).flatten();
                for (si, &key) in keys.iter().enumerate() {
                    let usable = usable_reason(&run, &keys, si, found, used);
                    let used = used == Some(si);
                    requests.push(explain_request(&mut run, &saved, key, used, &usable));
                }
            }
            out.push(ClaimDevices {
                claim: claim_key(claim),
                requests,
            });
        }
        Ok(out)
    }
}

/// Of a request's subrequests (a plain request's one), the one the solution used: the one
/// with picks, else the first that needs no device.
fn used_subrequest(run: &Run, keys: &[RequestKey]) -> Option<usize> {
    if run.requests[&keys[0]].request.parent.is_none() {
        return Some(0);
    }
    let ci = keys[0].0;
    let picked = |k: &RequestKey| {
        let name = run.requests[k].request.full_name();
        run.result[ci].iter().any(|d| d.request == name)
    };
    (keys.iter().position(picked)).or_else(|| {
        (keys.iter()).position(|k| {
            let data = &run.requests[k];
            data.request.mode != "All" && data.num_devices == 0
        })
    })
}

/// The reason of a device that passes every check of `keys[si]`, given whether the search
/// found a solution and which subrequest it used.
fn usable_reason(
    run: &Run,
    keys: &[RequestKey],
    si: usize,
    found: bool,
    used: Option<usize>,
) -> String {
    let name = |i: usize| run.requests[&keys[i]].request.full_name();
    match used {
        _ if !found => USABLE_ALONE.into(),
        Some(u) if u == si => NOT_NEEDED.into(),
        Some(u) if si < u => format!(
            "usable, but the search found no allocation with this subrequest and used {}",
            name(u)
        ),
        Some(u) => format!("usable, but subrequest {} came first and was used", name(u)),
        None => "usable, but the allocation used no subrequest's devices".into(),
    }
}

fn explain_request<'a>(
    run: &mut Run<'a, '_>,
    saved: &Saved,
    key: RequestKey,
    used: bool,
    usable: &str,
) -> RequestDevices {
    let data = &run.requests[&key];
    let name = data.request.full_name();
    let picked: Vec<Candidate<'a>> = (run.result[key.0].iter())
        .filter(|d| d.request == name)
        .map(|d| d.candidate)
        .collect();
    let picked_ids: BTreeSet<DeviceId> = picked.iter().map(Candidate::id).collect();
    let mut out = RequestDevices {
        request: name,
        device_class: data.request.class_name.to_string(),
        mode: data.request.mode.to_string(),
        count: data.num_devices,
        used,
        picked: picked.iter().map(device_name).collect(),
        others: Vec::new(),
    };
    for i in 0..run.devices.len() {
        let c = run.devices[i];
        if picked_ids.contains(&c.id()) {
            continue;
        }
        let reason = match judge(run, key, c) {
            Ok(None) => usable.to_string(),
            Ok(Some(refusal)) => describe(run, key, c, refusal),
            Err(e) => e,
        };
        saved.restore(run);
        out.others.push(DeviceReason {
            device: device_name(&c),
            reason,
        });
    }
    out
}

/// The search's checks of `c` for the request: those of `allocateOne`'s loop for ExactCount;
/// for All, those that pick its devices up front, then `allocateDevice` (here a constraint
/// refuses a device rather than failing the allocation). `None`: the device was taken.
fn judge<'a>(
    run: &mut Run<'a, '_>,
    key: RequestKey,
    c: Candidate<'a>,
) -> Result<Option<Refusal<'a>>, String> {
    let data = &run.requests[&key];
    if data.request.mode != "All" {
        return run.try_device(key, c);
    }
    let (class, selectors, capacity) = (data.class, data.request.selectors, data.request.capacity);
    if let Some(refusal) = run.unfit(key, class, selectors, capacity, &c)? {
        return Ok(Some(refusal));
    }
    run.allocate_device(key, c, false)
}

/// A refusal in words, naming its cause. Reads the run as the refusal left it (counters).
fn describe<'a>(
    run: &mut Run<'a, '_>,
    key: RequestKey,
    c: Candidate<'a>,
    refusal: Refusal<'a>,
) -> String {
    let data = &run.requests[&key];
    let expression = |selectors: &[k8s_openapi::api::resource::v1::DeviceSelector], i: usize| {
        (selectors[i].cel.as_ref()).map_or(String::new(), |c| c.expression.clone())
    };
    match refusal {
        Refusal::InUse => in_use(run, &c.id()),
        Refusal::Unselectable(Unselectable::ClassSelector(i)) => {
            let class = data.class.spec.selectors.as_deref().unwrap_or(&[]);
            format!(
                "DeviceClass {} selector is false: {}",
                data.request.class_name,
                expression(class, i)
            )
        }
        Refusal::Unselectable(Unselectable::RequestSelector(i)) => format!(
            "request selector is false: {}",
            expression(data.request.selectors, i)
        ),
        Refusal::Unselectable(Unselectable::OtherNode) => "not available on this node".into(),
        Refusal::Capacity(misfit) => capacity_reason(misfit),
        Refusal::Counters if !run.alloc.features.partitionable_devices => {
            "consumes counters, which need DRAPartitionableDevices".into()
        }
        Refusal::Counters => {
            match (run.counters.get_mut(&c.pool)).and_then(|p| p.short_set(c.device)) {
                Some(set) => format!("not enough counters in counter set {set}"),
                None => "not enough counters".into(),
            }
        }
        Refusal::Taint(taint) => format!("untolerated taint {}", taint_text(taint)),
        Refusal::Constraint(i) => {
            let (kind, attribute) = match &run.constraints[key.0][i] {
                Constraint::Match(m) => ("matchAttribute", &m.attribute),
                Constraint::Distinct(d) => ("distinctAttribute", &d.attribute),
            };
            if lookup_attribute(&c, attribute).is_none() {
                format!("has no attribute {attribute} of constraint {kind}")
            } else if kind == "matchAttribute" {
                format!("does not match constraint matchAttribute {attribute}")
            } else {
                format!("repeats a value of constraint distinctAttribute {attribute}")
            }
        }
    }
}

/// Why a device is in use: allocated before, or picked by this search.
fn in_use(run: &Run, id: &DeviceId) -> String {
    if run.alloc.allocated.contains(id) {
        return "allocated to another claim".into();
    }
    let mut picks =
        (run.result.iter().enumerate()).flat_map(|(ci, r)| r.iter().map(move |d| (ci, d)));
    match picks.find(|(_, d)| &d.candidate.id() == id) {
        Some((ci, d)) => format!(
            "picked for another request of this pod: {} of claim {}",
            d.request,
            claim_key(run.claims[ci])
        ),
        None => "picked for another request of this pod".into(),
    }
}

fn capacity_reason(misfit: Misfit) -> String {
    match misfit {
        Misfit::Missing(name) => format!("has no capacity {name}"),
        Misfit::Unparsable(name) => format!("capacity {name} is not a quantity"),
        Misfit::Policy(name) => format!("capacity {name} request policy refuses the share"),
        Misfit::Exhausted(name) => format!("not enough capacity {name}"),
    }
}

/// `key=value:effect`, or `key:effect` without a value (as `kubectl taint` writes them).
fn taint_text(taint: &DeviceTaint) -> String {
    match taint.value.as_deref().filter(|v| !v.is_empty()) {
        Some(value) => format!("{}={value}:{}", taint.key, taint.effect),
        None => format!("{}:{}", taint.key, taint.effect),
    }
}

fn device_name(c: &Candidate) -> String {
    let (driver, pool, device) = c.id();
    format!("{driver}/{pool}/{device}")
}

/// The search's state at its solution (or start), which judging a device may change (it can
/// take counters, join constraints, be picked): put back after each device.
struct Saved {
    constraints: Vec<Vec<Constraint>>,
    allocating: HashMap<DeviceId, BTreeSet<usize>>,
    counters: HashMap<usize, PoolCounters>,
    allocating_capacity: capacity::Aggregated,
    picks: Vec<usize>,
}

impl Saved {
    fn of(run: &Run) -> Saved {
        Saved {
            constraints: run.constraints.clone(),
            allocating: run.allocating.clone(),
            counters: run.counters.clone(),
            allocating_capacity: run.allocating_capacity.clone(),
            picks: run.result.iter().map(Vec::len).collect(),
        }
    }

    fn restore(&self, run: &mut Run) {
        run.constraints.clone_from(&self.constraints);
        run.allocating.clone_from(&self.allocating);
        run.counters.clone_from(&self.counters);
        run.allocating_capacity
            .clone_from(&self.allocating_capacity);
        for (result, &len) in run.result.iter_mut().zip(&self.picks) {
            result.truncate(len);
        }
    }
}

#[cfg(test)]
mod tests;
