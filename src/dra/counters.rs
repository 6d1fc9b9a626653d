//! Partitionable devices (`DRAPartitionableDevices`): counter sets that a pool's slices share
//! (`spec.sharedCounters`, in slices without devices) and the counters each device consumes
//! from them (`consumesCounters`). A port of the counter parts of kubernetes
//! `staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/allocator_stable.go`
//! (`checkAvailableCounters`, `deallocateCountersForDevice`) and of
//! `internal/incubating/pools_incubating.go` (`getAndValidateCounterSets`,
//! `validateDeviceCounterConsumption`).
//!
//! Counter values are `resource.Quantity` and upstream adds and compares them exactly, so they
//! are held here exactly (see [`Exact`] for values past 10^1000).

use std::collections::{BTreeMap, HashSet};

use k8s_openapi::api::resource::v1::{Counter, CounterSet, Device, ResourceSlice};
use num_bigint::BigInt;

use super::DeviceId;
use crate::model::quantity::Quantity;

/// A counter value, exact: whole nano-units (no parsed quantity is finer), plus a count of
/// "huge" units for values of 10^`HUGE_EXPONENT` and beyond (whose exact value would take
/// gigabytes: `1e999999999` parses). Values compare by their huge units first: exact for
/// every value below the bound, and a consistent order past it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Default)]
struct Exact {
    huge: i64,
    nanos: BigInt,
}

/// Past `10^HUGE_EXPONENT` a value is held as huge units.
const HUGE_EXPONENT: i32 = 1000;

impl Exact {
    /// A counter's value. An unparsable one (the API server refuses it, so only a caller
    /// that skips validation can pass one) counts as zero.
    fn of(counter: &Counter) -> Exact {
        let Ok(q) = counter.value.0.parse::<Quantity>() else {
            return Exact::default();
        };
        let (m, e) = q.as_decimal();
        let ten = BigInt::from(10);
        match e {
            _ if m == BigInt::ZERO => Exact::default(),
            e if e > HUGE_EXPONENT => Exact {
                huge: if m < BigInt::ZERO { -1 } else { 1 },
                nanos: BigInt::ZERO,
            },
            e if e >= -9 => Exact {
                huge: 0,
                nanos: m * ten.pow((e + 9).unsigned_abs()),
            },
            // Quantities round to nano-units when parsed; kept for completeness.
            e => Exact {
                huge: 0,
                nanos: m / ten.pow((-9 - e).unsigned_abs()),
            },
        }
    }

    fn add(&self, other: &Exact) -> Exact {
        Exact {
            huge: self.huge.saturating_add(other.huge),
            nanos: &self.nanos + &other.nanos,
        }
    }

    fn sub(&self, other: &Exact) -> Exact {
        Exact {
            huge: self.huge.saturating_sub(other.huge),
            nanos: &self.nanos - &other.nanos,
        }
    }

    fn less_than(&self, other: &Exact) -> bool {
        self < other
    }
}

/// Counter set name → counter name → value.
type Sets = BTreeMap<String, BTreeMap<String, Exact>>;

/// `getAndValidateCounterSets`: the counter sets of a pool's counter-set slices, by name; a
/// name declared twice makes the pool invalid.
pub fn counter_sets<'a>(
    slices: &[&'a ResourceSlice],
) -> Result<BTreeMap<&'a str, &'a CounterSet>, String> {
    let mut sets = BTreeMap::new();
    for set in slices
        .iter()
        .flat_map(|s| s.spec.shared_counters.iter().flatten())
    {
        if sets.insert(set.name.as_str(), set).is_some() {
            return Err(format!("duplicate counter set name {}", set.name));
        }
    }
    Ok(sets)
}

/// `validateDeviceCounterConsumption`: every counter a device of `slices` consumes exists in
/// the pool's counter sets; otherwise the pool is invalid.
pub fn check_consumption(
    sets: &BTreeMap<&str, &CounterSet>,
    slices: &[&ResourceSlice],
) -> Result<(), String> {
    let devices = slices.iter().flat_map(|s| s.spec.devices.iter().flatten());
    for consumption in devices.flat_map(|d| d.consumes_counters.iter().flatten()) {
        let Some(set) = sets.get(consumption.counter_set.as_str()) else {
            return Err(format!("counter set {} not found", consumption.counter_set));
        };
        if let Some(name) = (consumption.counters.keys()).find(|n| !set.counters.contains_key(*n)) {
            return Err(format!(
                "counter {name} not found in counter set {}",
                set.name
            ));
        }
    }
    Ok(())
}

/// Whether a device consumes counters.
pub fn consumes(device: &Device) -> bool {
    device
        .consumes_counters
        .as_ref()
        .is_some_and(|c| !c.is_empty())
}

/// One pool's counters during one `Allocate`: what remains after the devices already
/// allocated (the allocator's `availableCounters`, computed on first use), and what the
/// devices picked so far consume (`consumedCounters`).
#[derive(Clone)]
pub struct PoolCounters {
    available: Sets,
    consumed: Sets,
}

impl PoolCounters {
    /// The pool's counter sets less what its allocated devices consume: those of every slice
    /// of the pool, whether or not it targets the node. A remainder may go negative (then
    /// nothing fits, as upstream treats it).
    pub fn new<'s>(
        sets: &BTreeMap<&str, &CounterSet>,
        slices: impl Iterator<Item = &'s ResourceSlice>,
        allocated: &HashSet<DeviceId>,
    ) -> PoolCounters {
        let mut available: Sets = (sets.iter())
            .map(|(name, set)| {
                let counters = (set.counters.iter())
                    .map(|(c, v)| (c.clone(), Exact::of(v)))
                    .collect();
                (name.to_string(), counters)
            })
            .collect();
        for slice in slices {
            let spec = &slice.spec;
            for device in spec.devices.iter().flatten() {
                let id = (
                    spec.driver.clone(),
                    spec.pool.name.clone(),
                    device.name.clone(),
                );
                if !allocated.contains(&id) {
                    continue;
                }
                for consumption in device.consumes_counters.iter().flatten() {
                    let Some(set) = available.get_mut(&consumption.counter_set) else {
                        continue;
                    };
                    for (name, value) in &consumption.counters {
                        if let Some(left) = set.get_mut(name) {
                            *left = left.sub(&Exact::of(value));
                        }
                    }
                }
            }
        }
        PoolCounters {
            available,
            consumed: Sets::new(),
        }
    }

    /// `checkAvailableCounters`: takes what the device consumes if, with it, no counter of
    /// any of the pool's sets is consumed beyond what remains; otherwise takes nothing.
    pub fn take(&mut self, device: &Device) -> bool {
        self.add(device);
        let exceeded = self.exceeded().is_some();
        if exceeded {
            self.release(device);
        }
        !exceeded
    }

    /// The counter set [`Self::take`] would find exceeded with the device, if any; takes
    /// nothing.
    pub fn short_set(&mut self, device: &Device) -> Option<String> {
        self.add(device);
        let set = self.exceeded().map(str::to_owned);
        self.release(device);
        set
    }

    fn add(&mut self, device: &Device) {
        for consumption in device.consumes_counters.iter().flatten() {
            let set = self
                .consumed
                .entry(consumption.counter_set.clone())
                .or_default();
            for (name, value) in &consumption.counters {
                let used = set.entry(name.clone()).or_default();
                *used = used.add(&Exact::of(value));
            }
        }
    }

    /// The first counter set, by name, some counter of which is consumed beyond what remains.
    fn exceeded(&self) -> Option<&str> {
        let zero = Exact::default();
        let over = self.available.iter().find(|(set, counters)| {
            counters.iter().any(|(name, left)| {
                let used = self.consumed.get(*set).and_then(|c| c.get(name));
                left.less_than(used.unwrap_or(&zero))
            })
        });
        over.map(|(set, _)| set.as_str())
    }

    /// `deallocateCountersForDevice`: gives back what the device consumes.
    pub fn release(&mut self, device: &Device) {
        for consumption in device.consumes_counters.iter().flatten() {
            let Some(set) = self.consumed.get_mut(&consumption.counter_set) else {
                continue;
            };
            for (name, value) in &consumption.counters {
                if let Some(used) = set.get_mut(name) {
                    *used = used.sub(&Exact::of(value));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counter(v: &str) -> Counter {
        Counter {
            value: k8s_openapi::apimachinery::pkg::api::resource::Quantity(v.into()),
        }
    }

    #[test]
    fn exact_arithmetic_across_suffixes() {
        let (gi, m) = (Exact::of(&counter("1Gi")), Exact::of(&counter("1024Mi")));
        assert_eq!(gi.sub(&m), Exact::default());
        let (half, milli) = (Exact::of(&counter("0.5")), Exact::of(&counter("500m")));
        assert!(!half.less_than(&milli) && !milli.less_than(&half));
        assert!(milli.less_than(&Exact::of(&counter("501m"))));
        assert!(Exact::of(&counter("-1")).less_than(&Exact::default()));
        // Past int64: still exact.
        let big = Exact::of(&counter("9Ei")).add(&Exact::of(&counter("9Ei")));
        assert!(Exact::of(&counter("17Ei")).less_than(&big));
        // Hostile exponents neither hang nor lose the order.
        let huge = Exact::of(&counter("1e999999999"));
        assert!(big.less_than(&huge) && Exact::of(&counter("-1e999999999")).less_than(&big));
        assert!(
            huge.sub(&huge.add(&Exact::of(&counter("1"))))
                .less_than(&Exact::default())
        );
        assert_eq!(Exact::of(&counter("1e1000")).huge, 0);
    }
}
