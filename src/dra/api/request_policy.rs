//! The request policy of a capacity of a device shared by capacity
//! (`validateMultiAllocatableDeviceCapacity`).

use k8s_openapi::api::resource::v1::CapacityRequestPolicy;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;

use super::fields::*;
use super::{duplicates, quantity};
use crate::dra::capacity;
use crate::model::quantity::Quantity;

/// `CapacityRequestPolicyDiscreteMaxOptions`.
pub const CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS: usize = 10;

/// `validateMultiAllocatableDeviceCapacity`: the request policy of a capacity (at `at`) of a
/// device that allows multiple allocations (`validateRequestPolicy`,
/// `validateValidRequestValues`, `validateRequestPolicyValidValues`,
/// `validateRequestPolicyRange`, `validateRequestPolicyRangeStep`).
pub(super) fn validate_request_policy(
    errs: &mut Errs,
    value: &K8sQuantity,
    policy: &CapacityRequestPolicy,
    at: &str,
) {
    let Some(capacity) = quantity(errs, &child(at, "value"), value) else {
        return;
    };
    let path = &child(at, "requestPolicy");
    let values = policy.valid_values.as_deref().unwrap_or(&[]);
    if !values.is_empty() && policy.valid_range.is_some() {
        forbidden(
            errs,
            path,
            r#"exactly one policy can be specified, cannot specify "validValues" and "validRange" at the same time"#,
        );
        return;
    }
    let default = match &policy.default {
        Some(d) => quantity(errs, &child(path, "default"), d),
        None if !values.is_empty() => {
            return required(
                errs,
                &child(path, "default"),
                "required when validValues is defined",
            );
        }
        None if policy.valid_range.is_some() => {
            return required(
                errs,
                &child(path, "default"),
                "required when validRange is defined",
            );
        }
        None => return,
    };
    let Some(default) = default else {
        return;
    };
    let cap = capacity.canonical();
    if !values.is_empty() {
        let at = child(path, "validValues");
        let parsed: Vec<Option<Quantity>> = (values.iter().enumerate())
            .map(|(i, v)| quantity(errs, &index(&at, i), v))
            .collect();
        for (i, pair) in parsed.windows(2).enumerate() {
            if let [Some(a), Some(b)] = pair
                && a.cmp_value(b).is_gt()
            {
                invalid(
                    errs,
                    &index(&at, i + 1),
                    &b.canonical(),
                    "values must be sorted in ascending order",
                );
            }
        }
        let mut found = false;
        if values.len() > CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS {
            too_many(
                errs,
                &at,
                values.len(),
                CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS,
            );
        } else {
            for (i, option) in parsed.iter().enumerate() {
                let Some(option) = option else { continue };
                if option.cmp_value(&capacity).is_gt() {
                    invalid(
                        errs,
                        &index(&at, i),
                        &option.canonical(),
                        &format!("option is larger than capacity value: {cap}"),
                    );
                }
                found |= option.cmp_value(&default).is_eq();
            }
            // `quantityKey`: options alike in whole units are duplicates.
            let keys: Vec<String> = parsed
                .iter()
                .flatten()
                .map(|q| q.value().to_string())
                .collect();
            duplicates(errs, keys.iter().map(String::as_str), &at);
        }
        if !found {
            invalid(
                errs,
                &at,
                &default.canonical(),
                "default value is not valid according to the requestPolicy",
            );
        }
        return;
    }
    let Some(range) = &policy.valid_range else {
        return;
    };
    let at = child(path, "validRange");
    let Some(min) = quantity(errs, &child(&at, "min"), &range.min) else {
        return;
    };
    let (min_path, max_path, step_path) =
        (child(&at, "min"), child(&at, "max"), child(&at, "step"));
    if min.cmp_value(&capacity).is_gt() {
        invalid(
            errs,
            &min_path,
            &min.canonical(),
            &format!("min is larger than capacity value: {cap}"),
        );
    }
    if default.cmp_value(&min).is_lt() {
        invalid(
            errs,
            &min_path,
            &default.canonical(),
            &format!("default is less than min: {}", min.canonical()),
        );
    }
    let max = range
        .max
        .as_ref()
        .and_then(|m| quantity(errs, &max_path, m));
    if let Some(max) = &max {
        if min.cmp_value(max).is_gt() {
            invalid(
                errs,
                &max_path,
                &min.canonical(),
                &format!("min is larger than max: {}", max.canonical()),
            );
        }
        if max.cmp_value(&capacity).is_gt() {
            invalid(
                errs,
                &max_path,
                &max.canonical(),
                &format!("max is larger than capacity value: {cap}"),
            );
        }
        if default.cmp_value(max).is_gt() {
            invalid(
                errs,
                &max_path,
                &default.canonical(),
                &format!("default is more than max: {}", max.canonical()),
            );
        }
    }
    let Some(step) = range
        .step
        .as_ref()
        .and_then(|s| quantity(errs, &step_path, s))
    else {
        return;
    };
    let added = capacity::add(&min, &step);
    if added.cmp_value(&capacity).is_gt() {
        invalid(
            errs,
            &step_path,
            &step.canonical(),
            &format!(
                "one step {} is larger than capacity value: {cap}",
                added.canonical()
            ),
        );
    }
    if step.value() == 0 {
        // Upstream's `added % stepVal` divides by zero: the API server fails the request.
        invalid(
            errs,
            &step_path,
            &step.canonical(),
            "a step of zero fails the API server's validation (division by zero)",
        );
        return;
    }
    for value in std::iter::once(&default).chain(max.as_ref()) {
        if value
            .value()
            .wrapping_sub(min.value())
            .wrapping_rem(step.value())
            != 0
        {
            invalid(
                errs,
                &step_path,
                &value.canonical(),
                &format!(
                    "value is not a multiple of a given step ({}) from ({})",
                    step.canonical(),
                    min.canonical()
                ),
            );
        }
    }
}
