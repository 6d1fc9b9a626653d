//! The API server's rules for partitionable devices' counters (`validateCounterSet`,
//! `validateDeviceCounterConsumption` and the `validateSet` calls on `sharedCounters` and
//! `consumesCounters` in kubernetes `pkg/apis/resource/validation/validation.go`, with the
//! limits of `pkg/apis/resource/types.go`). A counter's value is a quantity, which the API
//! server refuses to decode when it does not parse (reported as schedsim reports any bad
//! quantity). Not checked: the syntax of counter names.

use std::collections::BTreeMap;

use k8s_openapi::api::resource::v1::{Counter, CounterSet, DeviceCounterConsumption};

use super::fields::*;
use super::{Errs, duplicates};
use crate::model::quantity::Quantity;

/// `ResourceSliceMaxCounterSets`.
pub const MAX_COUNTER_SETS: usize = 8;
/// `ResourceSliceMaxCountersPerCounterSet`.
pub const MAX_COUNTERS_PER_SET: usize = 32;
/// `ResourceSliceMaxDeviceCounterConsumptionsPerDevice`.
pub const MAX_CONSUMPTIONS_PER_DEVICE: usize = 2;
/// `ResourceSliceMaxCountersPerDeviceCounterConsumption`.
pub const MAX_COUNTERS_PER_CONSUMPTION: usize = 32;

/// `spec.sharedCounters`: at most 8 sets with unique names, each named and with counters.
pub(super) fn validate_shared_counters(errs: &mut Errs, sets: Option<&[CounterSet]>) {
    let path = "spec.sharedCounters";
    let sets = sets.unwrap_or(&[]);
    if sets.len() > MAX_COUNTER_SETS {
        return too_many(errs, path, sets.len(), MAX_COUNTER_SETS);
    }
    for (i, set) in sets.iter().enumerate() {
        let at = index(path, i);
        if set.name.is_empty() {
            required(errs, &child(&at, "name"), "");
        }
        validate_counters(
            errs,
            &set.counters,
            MAX_COUNTERS_PER_SET,
            &child(&at, "counters"),
        );
    }
    duplicates(errs, sets.iter().map(|s| s.name.as_str()), path);
}

/// A device's `consumesCounters`: at most 2, from distinct counter sets, each naming its set
/// and with counters.
pub(super) fn validate_consumes_counters(
    errs: &mut Errs,
    consumptions: Option<&[DeviceCounterConsumption]>,
    device: &str,
) {
    let path = child(device, "consumesCounters");
    let consumptions = consumptions.unwrap_or(&[]);
    if consumptions.len() > MAX_CONSUMPTIONS_PER_DEVICE {
        return too_many(errs, &path, consumptions.len(), MAX_CONSUMPTIONS_PER_DEVICE);
    }
    for (i, c) in consumptions.iter().enumerate() {
        let at = index(&path, i);
        if c.counter_set.is_empty() {
            required(errs, &child(&at, "counterSet"), "");
        }
        let counters = child(&at, "counters");
        validate_counters(errs, &c.counters, MAX_COUNTERS_PER_CONSUMPTION, &counters);
    }
    duplicates(
        errs,
        consumptions.iter().map(|c| c.counter_set.as_str()),
        &path,
    );
}

/// `validateMap` of counters: required, at most `max`, each value a quantity.
fn validate_counters(
    errs: &mut Errs,
    counters: &BTreeMap<String, Counter>,
    max: usize,
    path: &str,
) {
    if counters.is_empty() {
        return required(errs, path, "");
    }
    if counters.len() > max {
        return too_many(errs, path, counters.len(), max);
    }
    for (name, counter) in counters {
        let value = &counter.value.0;
        if let Err(e) = value.parse::<Quantity>() {
            push(
                errs,
                &child(&child(path, name), "value"),
                format!("{value:?}: {e}"),
            );
        }
    }
}
