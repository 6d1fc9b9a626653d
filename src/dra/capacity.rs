//! Consumable capacity (`DRAConsumableCapacity`, alpha and off in 1.34): a device that
//! `allowMultipleAllocations` can be allocated to several claims at once, each taking a share
//! of its capacity; `distinctAttribute` constraints ask a claim's devices to differ in an
//! attribute. A port of the 1.34 experimental allocator's helpers
//! (`staging/src/k8s.io/dynamic-resource-allocation/structured/internal/experimental/`
//! `consumable_capacity.go`: `CmpRequestOverCapacity`, `calculateConsumedCapacity`,
//! `roundUpRange`, `roundUpValidValues`, `violatesPolicy`, `GetConsumedCapacityFromRequest`;
//! `constraint.go`: `distinctAttributeConstraint`; `internal/types_experimental.go`:
//! `ConsumedCapacity`, `ConsumedCapacityCollection`), which `dra::allocator` calls where
//! `allocator_experimental.go` does.
//!
//! Quantities are compared exactly (`Quantity.Cmp`); the step arithmetic of a `validRange`
//! uses `Quantity.Value()` (whole units, rounded up) with Go's wrapping int64 arithmetic, as
//! upstream does. A quantity that does not parse (the API server would not have decoded it)
//! makes the device unusable rather than panicking.

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::api::resource::v1::{
    CapacityRequestPolicy, CapacityRequestPolicyRange, CapacityRequirements, DeviceAttribute,
    DeviceCapacity,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use num_bigint::BigInt;

use super::DeviceId;
use crate::model::quantity::{Format, Quantity};

/// Capacity consumed on one device, by capacity name (`ConsumedCapacity`).
pub type Consumed = BTreeMap<String, Quantity>;

/// Capacity consumed per device by the shares allocated so far (`ConsumedCapacityCollection`;
/// the allocator's `AggregatedCapacity`).
pub type Aggregated = HashMap<DeviceId, Consumed>;

pub fn parse(q: &K8sQuantity) -> Option<Quantity> {
    q.0.parse().ok()
}

/// `a + b`, exactly.
pub fn add(a: &Quantity, b: &Quantity) -> Quantity {
    let ((ma, ea), (mb, eb)) = (a.as_decimal(), b.as_decimal());
    let e = ea.min(eb);
    let scale = |m: BigInt, from: i32| m * BigInt::from(10).pow((from - e) as u32);
    Quantity::from_decimal(scale(ma, ea) + scale(mb, eb), e, a.format)
}

fn negate(q: &Quantity) -> Quantity {
    let (m, e) = q.as_decimal();
    Quantity::from_decimal(-m, e, q.format)
}

/// `ConsumedCapacityCollection.Insert`: the share's capacity adds to the device's.
pub fn insert(all: &mut Aggregated, id: &DeviceId, share: &Consumed) {
    let device = all.entry(id.clone()).or_default();
    for (name, q) in share {
        let sum = device
            .get(name)
            .map_or_else(|| q.clone(), |have| add(have, q));
        device.insert(name.clone(), sum);
    }
}

/// `ConsumedCapacityCollection.Remove`: the share's capacity is given back; a device whose
/// shares are all gone has no entry (consumed nothing, as upstream reads a missing one).
pub fn remove(all: &mut Aggregated, id: &DeviceId, share: &Consumed) {
    let Some(device) = all.get_mut(id) else {
        return;
    };
    for (name, q) in share {
        if let Some(have) = device.get_mut(name) {
            *have = add(have, &negate(q));
        }
    }
    if device.values().all(Quantity::is_zero) {
        all.remove(id);
    }
}

/// The capacity a share records, as the claim's status writes it (`consumedCapacity`).
pub fn to_status(consumed: &Consumed) -> BTreeMap<String, K8sQuantity> {
    (consumed.iter())
        .map(|(name, q)| (name.clone(), K8sQuantity(q.canonical())))
        .collect()
}

/// A share's capacity read back from a claim's status; names whose quantity does not parse
/// are left out.
pub fn from_status(consumed: &BTreeMap<String, K8sQuantity>) -> Consumed {
    (consumed.iter())
        .filter_map(|(name, q)| Some((name.clone(), parse(q)?)))
        .collect()
}

/// `CmpRequestOverCapacity`: the request's share (each of the device's capacities as
/// [`consumed_by`] works it out) respects the capacity's request policy and fits beside what
/// shares already hold (`current`) and what this allocation attempt is taking (`allocating`).
/// A request naming a capacity the device lacks does not fit (upstream's error is only
/// logged: the device is skipped).
pub fn fits(
    current: Option<&Consumed>,
    requests: Option<&CapacityRequirements>,
    capacity: &BTreeMap<String, DeviceCapacity>,
    allocating: Option<&Consumed>,
) -> bool {
    misfit(current, requests, capacity, allocating).is_none()
}

/// Why a share does not [`fits`]: the first capacity that refuses it, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Misfit<'c> {
    /// The request names a capacity the device lacks.
    Missing(&'c str),
    /// The capacity's value, or the share, is not a quantity.
    Unparsable(&'c str),
    /// The share breaks the capacity's request policy.
    Policy(&'c str),
    /// The share does not fit beside what other shares hold.
    Exhausted(&'c str),
}

/// [`fits`], naming the capacity that refuses the share.
pub fn misfit<'c>(
    current: Option<&Consumed>,
    requests: Option<&'c CapacityRequirements>,
    capacity: &'c BTreeMap<String, DeviceCapacity>,
    allocating: Option<&Consumed>,
) -> Option<Misfit<'c>> {
    let requested = requests.and_then(|r| r.requests.as_ref());
    if let Some(name) = requested.and_then(|r| r.keys().find(|n| !capacity.contains_key(*n))) {
        return Some(Misfit::Missing(name));
    }
    for (name, cap) in capacity {
        let (Some(total), Some(consumed)) = (parse(&cap.value), consume(requested, name, cap))
        else {
            return Some(Misfit::Unparsable(name));
        };
        if violates_policy(&consumed, cap.request_policy.as_ref()) {
            return Some(Misfit::Policy(name));
        }
        let mut sum = current
            .and_then(|c| c.get(name))
            .map_or_else(|| consumed.clone(), |have| add(have, &consumed));
        if let Some(taking) = allocating.and_then(|a| a.get(name)) {
            sum = add(&sum, taking);
        }
        if sum.cmp_value(&total).is_gt() {
            return Some(Misfit::Exhausted(name));
        }
    }
    None
}

/// `GetConsumedCapacityFromRequest`: what a share takes of each of the device's capacities,
/// requested or not.
pub fn consumed_by(
    requests: Option<&CapacityRequirements>,
    capacity: &BTreeMap<String, DeviceCapacity>,
) -> Consumed {
    let requested = requests.and_then(|r| r.requests.as_ref());
    (capacity.iter())
        .filter_map(|(name, cap)| Some((name.clone(), consume(requested, name, cap)?)))
        .collect()
}

fn consume(
    requested: Option<&BTreeMap<String, K8sQuantity>>,
    name: &str,
    cap: &DeviceCapacity,
) -> Option<Quantity> {
    let value = match requested.and_then(|r| r.get(name)) {
        Some(q) => Some(parse(q)?),
        None => None,
    };
    calculate_consumed(value, cap)
}

/// `calculateConsumedCapacity`: no request takes the policy's default, else the whole
/// capacity; a request is rounded up to the policy's range or valid values.
fn calculate_consumed(requested: Option<Quantity>, cap: &DeviceCapacity) -> Option<Quantity> {
    let policy = cap.request_policy.as_ref();
    let Some(requested) = requested else {
        return match policy.and_then(|p| p.default.as_ref()) {
            Some(default) => parse(default),
            None => parse(&cap.value),
        };
    };
    let Some(policy) = policy else {
        return Some(requested);
    };
    if let Some(range) = &policy.valid_range {
        return round_up_range(requested, range);
    }
    match &policy.valid_values {
        Some(values) => Some(round_up_valid_values(requested, values)),
        None => Some(requested),
    }
}

/// `roundUpRange`: below `min` takes `min`; with a `step`, up to the next `min + n·step`
/// (in whole units, `resource.NewQuantity(…, BinarySI)`).
fn round_up_range(requested: Quantity, range: &CapacityRequestPolicyRange) -> Option<Quantity> {
    let min = parse(&range.min)?;
    if requested.cmp_value(&min).is_lt() {
        return Some(min);
    }
    let Some(step) = range.step.as_ref() else {
        return Some(requested);
    };
    let (step, min) = (parse(step)?.value(), min.value());
    if step == 0 {
        // Go divides by zero here; validation never lets a zero step through.
        return Some(requested);
    }
    let added = requested.value().wrapping_sub(min);
    let mut n = added.wrapping_div(step);
    if added.wrapping_rem(step) != 0 {
        n = n.wrapping_add(1);
    }
    let value = min.wrapping_add(step.wrapping_mul(n));
    Some(Quantity::from_decimal(
        BigInt::from(value),
        0,
        Format::BinarySI,
    ))
}

/// `roundUpValidValues`: the first valid value at least the request (validation keeps them
/// sorted), else the request itself.
fn round_up_valid_values(requested: Quantity, values: &[K8sQuantity]) -> Quantity {
    (values.iter().filter_map(parse))
        .find(|v| requested.cmp_value(v).is_le())
        .unwrap_or(requested)
}

/// `violatesPolicy`. Upstream compares with the default as Go structs; numerically equal
/// values agree with that for every policy validation admits (its default obeys the policy).
fn violates_policy(requested: &Quantity, policy: Option<&CapacityRequestPolicy>) -> bool {
    let Some(policy) = policy else {
        return false;
    };
    if (policy.default.as_ref().and_then(parse)).is_some_and(|d| d.cmp_value(requested).is_eq()) {
        return false;
    }
    if let Some(range) = &policy.valid_range {
        return violates_range(requested, range);
    }
    match policy.valid_values.as_deref() {
        Some(values) if !values.is_empty() => {
            !(values.iter().filter_map(parse)).any(|v| requested.cmp_value(&v).is_eq())
        }
        _ => false,
    }
}

/// `violateValidRange`: above `max`, or off the steps from `min` (whole units).
fn violates_range(requested: &Quantity, range: &CapacityRequestPolicyRange) -> bool {
    let max = range.max.as_ref().and_then(parse);
    if max.is_some_and(|max| requested.cmp_value(&max).is_gt()) {
        return true;
    }
    let (Some(step), Some(min)) = (range.step.as_ref().and_then(parse), parse(&range.min)) else {
        return false;
    };
    match step.value() {
        0 => false,
        step => {
            requested
                .value()
                .wrapping_sub(min.value())
                .wrapping_rem(step)
                != 0
        }
    }
}

/// `distinctAttributeConstraint` as 1.34 has it: the value each request (by its name, a
/// subrequest's by its parent's) last added, which a new device must not repeat. A request
/// with several devices keeps only its latest value, and removing one of them forgets the
/// request's (later releases keep every device's value).
#[derive(Debug, Clone)]
pub struct DistinctAttribute {
    pub requests: std::collections::BTreeSet<String>,
    pub attribute: String,
    values: BTreeMap<String, DeviceAttribute>,
    devices: usize,
}

impl DistinctAttribute {
    pub fn new(requests: std::collections::BTreeSet<String>, attribute: String) -> Self {
        DistinctAttribute {
            requests,
            attribute,
            values: BTreeMap::new(),
            devices: 0,
        }
    }

    fn applies(&self, request: &str, sub: Option<&str>) -> bool {
        self.requests.is_empty()
            || self.requests.contains(request)
            || sub.is_some_and(|s| self.requests.contains(&format!("{request}/{s}")))
    }

    /// `add`, given the device's attribute (`lookupAttribute`).
    pub fn add(
        &mut self,
        request: &str,
        sub: Option<&str>,
        found: Option<&DeviceAttribute>,
    ) -> bool {
        if !self.applies(request, sub) {
            return true;
        }
        let Some(attribute) = found else {
            return false;
        };
        if self.devices > 0 && !self.values.values().all(|seen| distinct(attribute, seen)) {
            return false;
        }
        self.values.insert(request.to_string(), attribute.clone());
        self.devices += 1;
        true
    }

    pub fn remove(&mut self, request: &str, sub: Option<&str>) {
        if !self.applies(request, sub) {
            return;
        }
        self.values.remove(request);
        self.devices = self.devices.saturating_sub(1);
    }
}

/// `matchesAttribute` for one value seen: differs from it (a value of an unknown type never
/// does).
fn distinct(a: &DeviceAttribute, seen: &DeviceAttribute) -> bool {
    if let Some(s) = &a.string {
        seen.string.as_ref() != Some(s)
    } else if let Some(i) = a.int {
        seen.int != Some(i)
    } else if let Some(b) = a.bool {
        seen.bool != Some(b)
    } else if let Some(v) = &a.version {
        seen.version.as_ref() != Some(v)
    } else {
        false
    }
}

/// A share's ID, `status.allocation.devices.results[].shareID`: upstream draws a random UUID
/// (`GenerateShareID`); schedsim derives one from the claim and the result's position so a
/// scenario always writes the same IDs, and two shares of a device never get the same one.
pub fn share_id(namespace: &str, claim: &str, result: usize) -> String {
    let parts = [namespace, claim, &result.to_string()];
    let (hi, lo) = (
        crate::model::generated_names::stable_hash(&parts),
        crate::model::generated_names::stable_hash(&[&parts[..], &["share"]].concat()),
    );
    // RFC 4122 version 4 layout: 8-4-4-4-12 hex digits.
    let hi = (hi & 0xffff_ffff_ffff_0fff) | 0x0000_0000_0000_4000;
    let lo = (lo & 0x3fff_ffff_ffff_ffff) | 0x8000_0000_0000_0000;
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        hi >> 32,
        (hi >> 16) & 0xffff,
        hi & 0xffff,
        lo >> 48,
        lo & 0xffff_ffff_ffff
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> K8sQuantity {
        K8sQuantity(s.into())
    }

    fn memory(
        value: &str,
        policy: Option<CapacityRequestPolicy>,
    ) -> BTreeMap<String, DeviceCapacity> {
        BTreeMap::from([(
            "memory".to_string(),
            DeviceCapacity {
                value: q(value),
                request_policy: policy,
            },
        )])
    }

    fn ask(memory: &str) -> CapacityRequirements {
        CapacityRequirements {
            requests: Some(BTreeMap::from([("memory".to_string(), q(memory))])),
        }
    }

    fn range(min: &str, step: Option<&str>, max: Option<&str>) -> CapacityRequestPolicy {
        CapacityRequestPolicy {
            default: Some(q(min)),
            valid_range: Some(CapacityRequestPolicyRange {
                min: q(min),
                step: step.map(q),
                max: max.map(q),
            }),
            valid_values: None,
        }
    }

    fn taken(
        requests: Option<&CapacityRequirements>,
        cap: &BTreeMap<String, DeviceCapacity>,
    ) -> String {
        consumed_by(requests, cap)["memory"].canonical()
    }

    #[test]
    fn requests_round_up_to_the_policy() {
        let stepped = memory("40Gi", Some(range("5Gi", Some("5Gi"), Some("40Gi"))));
        assert_eq!(taken(Some(&ask("12Gi")), &stepped), "15Gi");
        assert_eq!(taken(Some(&ask("1Gi")), &stepped), "5Gi");
        assert_eq!(taken(None, &stepped), "5Gi", "the default");
        assert_eq!(
            taken(None, &memory("40Gi", None)),
            "40Gi",
            "no policy: all of it"
        );
        let values = memory(
            "40Gi",
            Some(CapacityRequestPolicy {
                default: Some(q("10Gi")),
                valid_range: None,
                valid_values: Some(vec![q("10Gi"), q("20Gi")]),
            }),
        );
        assert_eq!(taken(Some(&ask("11Gi")), &values), "20Gi");
        // Past the last valid value the request stays as it is, and violates the policy.
        assert_eq!(taken(Some(&ask("30Gi")), &values), "30Gi");
        assert!(!fits(None, Some(&ask("30Gi")), &values, None));
    }

    #[test]
    fn a_share_fits_beside_the_others_within_the_maximum() {
        let cap = memory("40Gi", Some(range("5Gi", Some("5Gi"), Some("20Gi"))));
        let held = Consumed::from([("memory".to_string(), "20Gi".parse().unwrap())]);
        let taking = Consumed::from([("memory".to_string(), "10Gi".parse().unwrap())]);
        assert!(fits(Some(&held), Some(&ask("20Gi")), &cap, None));
        assert!(!fits(Some(&held), Some(&ask("20Gi")), &cap, Some(&taking)));
        assert!(!fits(None, Some(&ask("25Gi")), &cap, None), "above max");
        let gpu = CapacityRequirements {
            requests: Some(BTreeMap::from([("cores".to_string(), q("1"))])),
        };
        assert!(
            !fits(None, Some(&gpu), &cap, None),
            "a capacity the device lacks"
        );
    }

    #[test]
    fn shares_add_up_and_go_back() {
        let id: DeviceId = ("d".into(), "p".into(), "gpu-0".into());
        let share = Consumed::from([("memory".to_string(), "1.5Gi".parse().unwrap())]);
        let mut all = Aggregated::new();
        insert(&mut all, &id, &share);
        insert(&mut all, &id, &share);
        assert_eq!(all[&id]["memory"].canonical(), "3Gi");
        remove(&mut all, &id, &share);
        remove(&mut all, &id, &share);
        assert!(all.is_empty());
    }

    /// 1.34 keeps one value per request: a request's third device is compared with its second
    /// only.
    #[test]
    fn distinct_attribute_keeps_the_last_value_of_each_request() {
        let s = |v: &str| DeviceAttribute {
            string: Some(v.into()),
            ..Default::default()
        };
        let mut d = DistinctAttribute::new(Default::default(), "d/a".into());
        assert!(d.add("r", None, Some(&s("x"))));
        assert!(!d.add("r", None, Some(&s("x"))));
        assert!(d.add("r", None, Some(&s("y"))));
        assert!(d.add("r", None, Some(&s("x"))));
        assert!(!d.add("other", None, None), "no attribute");
        d.remove("r", None);
        assert!(d.add("other", None, Some(&s("x"))));
    }

    #[test]
    fn share_ids_are_uuids_that_differ_by_claim_and_result() {
        let a = share_id("ml", "c", 0);
        assert_eq!(a.len(), 36);
        assert_eq!(&a[14..15], "4");
        assert_ne!(a, share_id("ml", "c", 1));
        assert_ne!(a, share_id("ml2", "c", 0));
        assert_eq!(a, share_id("ml", "c", 0));
    }
}
