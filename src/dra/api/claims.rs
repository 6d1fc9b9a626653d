//! ResourceClaims and ResourceClaimTemplates as the API server admits them
//! (`ValidateResourceClaim`, `ValidateResourceClaimTemplate`, `validateDeviceClaim`, and for
//! claims already allocated `validateResourceClaimStatusUpdate`).

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::resource::v1::{
    DeviceClaim, ResourceClaim, ResourceClaimSpec, ResourceClaimStatus, ResourceClaimTemplate,
};

use super::fields::*;
use super::selectors::validate_selectors;
use super::{
    ALLOCATION_RESULTS_MAX_SIZE, DEVICE_CONSTRAINTS_MAX_SIZE, DEVICE_REQUESTS_MAX_SIZE,
    FIRST_AVAILABLE_MAX_SIZE, RESERVED_FOR_MAX_SIZE, duplicates, quantity, taints, validate_meta,
};
use crate::model::validate::validate_node_selector;

/// The request names of a claim and each request's subrequests (`gatherRequestNames`).
struct RequestNames(BTreeMap<String, Option<BTreeSet<String>>>);

impl RequestNames {
    fn of(claim: &DeviceClaim) -> Self {
        let names = (claim.requests.iter().flatten())
            .map(|r| {
                let subs = (r.first_available.as_deref())
                    .filter(|s| !s.is_empty())
                    .map(|s| s.iter().map(|s| s.name.clone()).collect());
                (r.name.clone(), subs)
            })
            .collect();
        RequestNames(names)
    }

    /// `requestNames.Has`: `request` or `request/subrequest`.
    fn has(&self, reference: &str) -> bool {
        let segments: Vec<&str> = reference.split('/').collect();
        match segments.as_slice() {
            [request] => self.0.contains_key(*request),
            [request, sub] => {
                matches!(self.0.get(*request), Some(Some(subs)) if subs.contains(*sub))
            }
            _ => false,
        }
    }
}

const REQUEST_REFERENCE: &str = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'";

/// `validateRequestNameRef`.
fn validate_request_reference(errs: &mut Errs, name: &str, path: &str, names: &RequestNames) {
    let segments: Vec<&str> = name.split('/').collect();
    if segments.len() > 2 {
        invalid(errs, path, name, REQUEST_REFERENCE);
        return;
    }
    for s in &segments {
        validate_dns_label(errs, s, path);
    }
    if !names.has(name) {
        invalid(errs, path, name, REQUEST_REFERENCE);
    }
}

/// `validateDeviceAllocationMode`, after defaulting (`SetDefaults_ExactDeviceRequest`).
fn validate_allocation_mode(errs: &mut Errs, mode: Option<&str>, count: Option<i64>, path: &str) {
    let count = count.unwrap_or(0);
    match mode.unwrap_or("") {
        "All" => {
            if count != 0 {
                invalid_raw(
                    errs,
                    &child(path, "count"),
                    count,
                    "must not be specified when allocationMode is 'All'",
                );
            }
        }
        "ExactCount" => {
            if count <= 0 {
                invalid_raw(
                    errs,
                    &child(path, "count"),
                    count,
                    "must be greater than zero",
                );
            }
        }
        other => push(
            errs,
            &child(path, "allocationMode"),
            format!("Unsupported value: {other:?}: supported values: \"All\", \"ExactCount\""),
        ),
    }
}

/// `validateDeviceClaim` (`spec.devices`): requests, their subrequests, and constraints.
fn validate_device_claim(errs: &mut Errs, claim: &DeviceClaim, path: &str) {
    let names = RequestNames::of(claim);
    let requests = claim.requests.as_deref().unwrap_or(&[]);
    let requests_path = child(path, "requests");
    if requests.len() > DEVICE_REQUESTS_MAX_SIZE {
        too_many(
            errs,
            &requests_path,
            requests.len(),
            DEVICE_REQUESTS_MAX_SIZE,
        );
    } else {
        for (i, r) in requests.iter().enumerate() {
            let at = index(&requests_path, i);
            validate_dns_label(errs, &r.name, &child(&at, "name"));
            let subs = r.first_available.as_deref().filter(|s| !s.is_empty());
            match (&r.exactly, subs) {
                (None, None) => required(
                    errs,
                    &at,
                    "exactly one of `exactly` or `firstAvailable` is required",
                ),
                (Some(_), Some(_)) => invalid_raw(
                    errs,
                    &at,
                    "null",
                    "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
                ),
                (None, Some(subs)) => {
                    let subs_path = child(&at, "firstAvailable");
                    if subs.len() > FIRST_AVAILABLE_MAX_SIZE {
                        too_many(errs, &subs_path, subs.len(), FIRST_AVAILABLE_MAX_SIZE);
                    } else {
                        for (j, s) in subs.iter().enumerate() {
                            let sub_at = index(&subs_path, j);
                            validate_dns_label(errs, &s.name, &child(&sub_at, "name"));
                            validate_device_class_name(
                                errs,
                                &s.device_class_name,
                                &child(&sub_at, "deviceClassName"),
                            );
                            validate_selectors(
                                errs,
                                s.selectors.as_deref(),
                                &child(&sub_at, "selectors"),
                            );
                            validate_allocation_mode(
                                errs,
                                s.allocation_mode.as_deref(),
                                s.count,
                                &sub_at,
                            );
                            validate_capacity_requests(errs, s.capacity.as_ref(), &sub_at);
                            taints::validate_tolerations(
                                errs,
                                s.tolerations.as_deref(),
                                &child(&sub_at, "tolerations"),
                            );
                        }
                        duplicates(errs, subs.iter().map(|s| s.name.as_str()), &subs_path);
                    }
                }
                (Some(exact), None) => {
                    let exact_at = child(&at, "exactly");
                    validate_device_class_name(
                        errs,
                        &exact.device_class_name,
                        &child(&exact_at, "deviceClassName"),
                    );
                    validate_selectors(
                        errs,
                        exact.selectors.as_deref(),
                        &child(&exact_at, "selectors"),
                    );
                    validate_allocation_mode(
                        errs,
                        exact.allocation_mode.as_deref(),
                        exact.count,
                        &exact_at,
                    );
                    validate_capacity_requests(errs, exact.capacity.as_ref(), &exact_at);
                    taints::validate_tolerations(
                        errs,
                        exact.tolerations.as_deref(),
                        &child(&exact_at, "tolerations"),
                    );
                }
            }
        }
        duplicates(
            errs,
            requests.iter().map(|r| r.name.as_str()),
            &requests_path,
        );
    }
    let constraints = claim.constraints.as_deref().unwrap_or(&[]);
    let constraints_path = child(path, "constraints");
    if constraints.len() > DEVICE_CONSTRAINTS_MAX_SIZE {
        too_many(
            errs,
            &constraints_path,
            constraints.len(),
            DEVICE_CONSTRAINTS_MAX_SIZE,
        );
        return;
    }
    for (i, c) in constraints.iter().enumerate() {
        let at = index(&constraints_path, i);
        let refs = c.requests.as_deref().unwrap_or(&[]);
        let refs_path = child(&at, "requests");
        if refs.len() > DEVICE_REQUESTS_MAX_SIZE {
            too_many(errs, &refs_path, refs.len(), DEVICE_REQUESTS_MAX_SIZE);
        } else {
            for (k, r) in refs.iter().enumerate() {
                validate_request_reference(errs, r, &index(&refs_path, k), &names);
            }
            duplicates(errs, refs.iter().map(String::as_str), &refs_path);
        }
        match (&c.match_attribute, &c.distinct_attribute) {
            (Some(name), _) => {
                validate_fully_qualified_name(errs, name, &child(&at, "matchAttribute"))
            }
            (None, Some(name)) => {
                validate_fully_qualified_name(errs, name, &child(&at, "distinctAttribute"))
            }
            (None, None) => required(errs, &child(&at, "matchAttribute"), ""),
        }
    }
}

fn validate_claim_spec(errs: &mut Errs, spec: &ResourceClaimSpec, path: &str) {
    if let Some(devices) = &spec.devices {
        validate_device_claim(errs, devices, &child(path, "devices"));
    }
}

/// `ValidateResourceClaim`, and for a claim that comes with a status (a cluster dump: the
/// scheduler wrote it through the status subresource) what `validateResourceClaimStatusUpdate`
/// checks of a new status: its reservations and its allocation.
pub fn validate_resource_claim(claim: &ResourceClaim) -> Errs {
    let mut errs = Vec::new();
    validate_meta(&mut errs, &claim.metadata, true);
    validate_claim_spec(&mut errs, &claim.spec, "spec");
    if let Some(status) = &claim.status {
        let names = RequestNames::of(claim.spec.devices.as_ref().unwrap_or(&Default::default()));
        validate_claim_status(&mut errs, status, &names);
    }
    errs
}

fn validate_claim_status(errs: &mut Errs, status: &ResourceClaimStatus, names: &RequestNames) {
    let reserved = status.reserved_for.as_deref().unwrap_or(&[]);
    let reserved_path = "status.reservedFor";
    if reserved.len() > RESERVED_FOR_MAX_SIZE {
        too_many(errs, reserved_path, reserved.len(), RESERVED_FOR_MAX_SIZE);
    } else {
        for (i, r) in reserved.iter().enumerate() {
            let at = index(reserved_path, i);
            for (field, value) in [
                ("resource", &r.resource),
                ("name", &r.name),
                ("uid", &r.uid),
            ] {
                if value.is_empty() {
                    required(errs, &child(&at, field), "");
                }
            }
        }
        duplicates(errs, reserved.iter().map(|r| r.uid.as_str()), reserved_path);
    }
    if !reserved.is_empty() && status.allocation.is_none() {
        forbidden(
            errs,
            reserved_path,
            "may not be specified when `allocated` is not set",
        );
    }
    let Some(allocation) = &status.allocation else {
        return;
    };
    let results = (allocation.devices.as_ref())
        .and_then(|d| d.results.as_deref())
        .unwrap_or(&[]);
    let results_path = "status.allocation.devices.results";
    if results.len() > ALLOCATION_RESULTS_MAX_SIZE {
        too_many(
            errs,
            results_path,
            results.len(),
            ALLOCATION_RESULTS_MAX_SIZE,
        );
    } else {
        for (i, r) in results.iter().enumerate() {
            let at = index(results_path, i);
            validate_request_reference(errs, &r.request, &child(&at, "request"), names);
            validate_driver_name(errs, &r.driver, &child(&at, "driver"));
            validate_pool_name(errs, &r.pool, &child(&at, "pool"));
            validate_dns_label(errs, &r.device, &child(&at, "device"));
        }
    }
    if let Some(selector) = &allocation.node_selector {
        validate_node_selector(selector, "status.allocation.nodeSelector", errs);
    }
}

/// `ValidateResourceClaimTemplate`: its name and the claim spec it stamps out (`spec.spec`).
pub fn validate_resource_claim_template(template: &ResourceClaimTemplate) -> Errs {
    let mut errs = Vec::new();
    validate_meta(&mut errs, &template.metadata, true);
    validate_claim_spec(&mut errs, &template.spec.spec, "spec.spec");
    errs
}

/// A request's `capacity.requests`: validation.go checks nothing there, but a quantity that
/// does not parse fails to decode.
fn validate_capacity_requests(
    errs: &mut Errs,
    capacity: Option<&k8s_openapi::api::resource::v1::CapacityRequirements>,
    at: &str,
) {
    let requests = capacity.and_then(|c| c.requests.as_ref());
    for (name, q) in requests.into_iter().flatten() {
        let path = child(&child(&child(at, "capacity"), "requests"), name);
        quantity(errs, &path, q);
    }
}
