//! The `resource.k8s.io/v1` objects as the API server admits them: defaulted
//! (`pkg/apis/resource/v1/defaults.go`) and validated, for the fields the allocator reads: a
//! port of kubernetes `pkg/apis/resource/validation/validation.go` (`ValidateDeviceClass`,
//! `ValidateResourceSlice`, `ValidateResourceClaim`, `ValidateResourceClaimTemplate`, and for
//! claims already allocated in a cluster dump `validateResourceClaimStatusUpdate`), with the
//! name syntax of apimachinery's `pkg/api/validate/content` and the messages of
//! `pkg/util/validation/field/errors.go` (both in `fields`). Ported from kubernetes `main` at
//! commit `009801d930e2e3c8b3671a3ec28e31a2f64865ac`; the limits are those of
//! `resource.k8s.io/v1`.
//!
//! A DRA object the API server would refuse cannot exist in a real cluster, so the loader
//! refuses it; anything it accepts loads. Deviations, each because upstream's text cannot be
//! reproduced or the field is not simulated:
//! - A map key is a dotted path segment (`attributes.productName`), as everywhere in schedsim
//!   (upstream writes `attributes[productName]`), so the position finds the key.
//! - An attribute with several values prints the attribute as JSON; upstream prints the Go
//!   struct with its pointer addresses.
//! - CEL selectors are compiled with schedsim's CEL (`dra::cel`), which has no type checker:
//!   an expression that is not a bool (`must evaluate to bool …`) and the cost limit are not
//!   checked here; such a selector fails when the allocator runs it.
//! - An empty driver name is only `Required` (as declarative validation reports it; the
//!   handwritten check also adds the DNS-subdomain message for "").
//! - Not checked (not read by the allocator, or not simulated): configs, the syntax of taint
//!   and toleration keys and values (`taints` has the rest of their rules), binding
//!   conditions, the syntax of counter names (`counters` has the rest of the counters' rules).
//! - A quantity that does not parse is refused with `ErrFormatWrong` at its field (the API
//!   server fails to decode the object); a request policy's zero `step` is refused (upstream's
//!   validation divides by it, which fails the request).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use k8s_openapi::api::core::v1::{NodeSelectorRequirement, NodeSelectorTerm};
use k8s_openapi::api::resource::v1::{
    CapacityRequestPolicy, Device, DeviceAttribute, DeviceClaim, DeviceClass, DeviceSelector,
    ResourceClaim, ResourceClaimSpec, ResourceClaimStatus, ResourceClaimTemplate, ResourceSlice,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

mod counters;
mod fields;
mod taints;

use super::capacity;
use super::cel::Selector;
use crate::model::quantity::Quantity;
use crate::model::validate::validate_node_selector;
use fields::*;

/// The versions schedsim reads. `v1beta2` is field for field `v1` (Kubernetes copied `v1`
/// from it in 1.34: both convert to the internal types with generated code only, and their
/// `defaults.go` are the same), so both decode into `k8s_openapi::api::resource::v1`.
/// `v1beta1` is not: its requests and devices have another shape (no `exactly`, `basic`).
pub const API_VERSIONS: &[&str] = &["resource.k8s.io/v1", "resource.k8s.io/v1beta2"];

/// `DeviceRequestsMaxSize`, also the limit of a constraint's request list.
pub const DEVICE_REQUESTS_MAX_SIZE: usize = 32;
/// `FirstAvailableDeviceRequestMaxSize`.
pub const FIRST_AVAILABLE_MAX_SIZE: usize = 8;
/// `DeviceSelectorsMaxSize`.
pub const DEVICE_SELECTORS_MAX_SIZE: usize = 32;
/// `DeviceConstraintsMaxSize`.
pub const DEVICE_CONSTRAINTS_MAX_SIZE: usize = 32;
/// `CELSelectorExpressionMaxLength`.
pub const CEL_SELECTOR_EXPRESSION_MAX_LENGTH: usize = 10240;
/// `ResourceSliceMaxDevices`.
pub const RESOURCE_SLICE_MAX_DEVICES: usize = 128;
/// `ResourceSliceMaxDevicesWithAdvancedFeatures`: when a device has taints, consumes counters
/// or has list attributes.
pub const RESOURCE_SLICE_MAX_DEVICES_ADVANCED: usize = 64;
/// `ResourceSliceMaxAttributesAndCapacitiesPerDevice`.
pub const MAX_ATTRIBUTES_AND_CAPACITIES: usize = 32;
/// `ResourceSliceMaxAttributeValuesPerDevice`.
pub const MAX_ATTRIBUTE_VALUES: usize = 48;
/// `DeviceAttributeMaxValueLength`.
pub const ATTRIBUTE_MAX_VALUE_LENGTH: usize = 64;
/// `DeviceMaxIDLength`.
pub const DEVICE_MAX_ID_LENGTH: usize = 32;
/// `DeviceMaxDomainLength`.
pub const DEVICE_MAX_DOMAIN_LENGTH: usize = 63;
/// `DeviceTaintsMaxLength`.
pub const DEVICE_TAINTS_MAX_LENGTH: usize = 16;
/// `PoolNameMaxLength`.
pub const POOL_NAME_MAX_LENGTH: usize = 253;
/// `DriverNameMaxLength` (`ValidateCSIDriverName`'s 63).
pub const DRIVER_NAME_MAX_LENGTH: usize = 63;
/// `ResourceClaimReservedForMaxSize`.
pub const RESERVED_FOR_MAX_SIZE: usize = 256;
/// `AllocationResultsMaxSize`.
pub const ALLOCATION_RESULTS_MAX_SIZE: usize = 32;

// ---- object metadata (`corevalidation.ValidateObjectMeta`) ----

/// `ValidateObjectMeta` with `NameIsDNSSubdomain`, which every DRA kind uses
/// (`model::validate::meta`, the rules of every kind). The name is the one the API server
/// generated from `generateName` when only that was given.
fn validate_meta(errs: &mut Errs, meta: &ObjectMeta, namespaced: bool) {
    use crate::model::validate::meta::{KindMeta, Meta, NameRule, validate};
    let rule = KindMeta {
        kind: "",
        name: NameRule::Subdomain,
        namespaced,
    };
    errs.extend(validate(rule, Meta::of(meta), ""));
}

// ---- selectors ----

/// `validateSelectorSlice` and `validateSelector`: at most 32, each with a CEL expression
/// that compiles.
fn validate_selectors(errs: &mut Errs, selectors: Option<&[DeviceSelector]>, path: &str) {
    let selectors = selectors.unwrap_or(&[]);
    if selectors.len() > DEVICE_SELECTORS_MAX_SIZE {
        too_many(errs, path, selectors.len(), DEVICE_SELECTORS_MAX_SIZE);
        return;
    }
    for (i, s) in selectors.iter().enumerate() {
        let at = index(path, i);
        match &s.cel {
            None => required(errs, &child(&at, "cel"), ""),
            Some(cel) => {
                validate_cel_expression(errs, &cel.expression, &child(&at, "cel.expression"))
            }
        }
    }
}

/// `validateCELExpression`: at most 10240 bytes (longer ones are not compiled), and it
/// compiles (`convertCELErrorToValidationError`: an invalid expression is quoted whole).
fn validate_cel_expression(errs: &mut Errs, expression: &str, path: &str) {
    if expression.len() > CEL_SELECTOR_EXPRESSION_MAX_LENGTH {
        too_long(errs, path, CEL_SELECTOR_EXPRESSION_MAX_LENGTH);
        return;
    }
    if let Err(detail) = Selector::compile(expression) {
        invalid(errs, path, expression, &detail);
    }
}

// ---- defaulting (`pkg/apis/resource/v1/defaults.go`) ----

/// `SetDefaults_ExactDeviceRequest` and `SetDefaults_DeviceSubRequest`: the allocation mode
/// defaults to `ExactCount`, and its count (unset or 0) to 1. The API server defaults before
/// it validates, so a claim with `count: 0` is one device.
pub fn set_defaults(spec: &mut ResourceClaimSpec) {
    fn default(mode: &mut Option<String>, count: &mut Option<i64>) {
        if mode.as_deref().unwrap_or("").is_empty() {
            *mode = Some("ExactCount".into());
        }
        if mode.as_deref() == Some("ExactCount") && count.unwrap_or(0) == 0 {
            *count = Some(1);
        }
    }
    for request in spec
        .devices
        .iter_mut()
        .flat_map(|d| d.requests.iter_mut().flatten())
    {
        if let Some(exact) = &mut request.exactly {
            default(&mut exact.allocation_mode, &mut exact.count);
            taints::set_defaults(exact.tolerations.as_mut());
        }
        for sub in request.first_available.iter_mut().flatten() {
            default(&mut sub.allocation_mode, &mut sub.count);
            taints::set_defaults(sub.tolerations.as_mut());
        }
    }
}

// ---- DeviceClass ----

/// `ValidateDeviceClass`: the name, the selectors, and `extendedResourceName`.
pub fn validate_device_class(class: &DeviceClass) -> Errs {
    let mut errs = Vec::new();
    validate_meta(&mut errs, &class.metadata, false);
    validate_selectors(&mut errs, class.spec.selectors.as_deref(), "spec.selectors");
    // `v1helper.IsExtendedResourceName`: not native, and a qualified name once prefixed
    // with `requests.` (as quota names it).
    if let Some(name) = &class.spec.extended_resource_name
        && !(crate::model::resources::is_extended_resource_name(name)
            && crate::model::labels::is_qualified_name(&format!("requests.{name}")))
    {
        invalid(
            &mut errs,
            "spec.extendedResourceName",
            name,
            "must be a valid extended resource name",
        );
    }
    errs
}

// ---- ResourceClaim and ResourceClaimTemplate ----

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

/// `validateSet`'s uniqueness check: `Duplicate` at the index of each repeated key.
fn duplicates<'a>(errs: &mut Errs, keys: impl Iterator<Item = &'a str>, path: &str) {
    let mut seen = BTreeSet::new();
    for (i, key) in keys.enumerate() {
        if !seen.insert(key) {
            duplicate(errs, &index(path, i), key);
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

// ---- ResourceSlice ----

/// `ValidateResourceSlice`: driver, pool, exactly one way of selecting nodes, and devices.
pub fn validate_resource_slice(slice: &ResourceSlice) -> Errs {
    let mut errs = Vec::new();
    let spec = &slice.spec;
    validate_meta(&mut errs, &slice.metadata, false);
    validate_driver_name(&mut errs, &spec.driver, "spec.driver");
    validate_pool_name(&mut errs, &spec.pool.name, "spec.pool.name");
    if spec.pool.resource_slice_count <= 0 {
        invalid_raw(
            &mut errs,
            "spec.pool.resourceSliceCount",
            spec.pool.resource_slice_count,
            "must be greater than zero",
        );
    }
    if spec.pool.generation < 0 {
        invalid_raw(
            &mut errs,
            "spec.pool.generation",
            spec.pool.generation,
            "must be greater than or equal to zero",
        );
    }
    let mut set = Vec::new();
    match spec.node_name.as_deref() {
        Some("") => invalid(
            &mut errs,
            "spec.nodeName",
            "",
            "must be either unset or set to a non-empty string",
        ),
        Some(name) => {
            set.push("`nodeName`");
            validate_dns_subdomain(&mut errs, name, "spec.nodeName");
        }
        None => {}
    }
    if let Some(selector) = &spec.node_selector {
        set.push("`nodeSelector`");
        validate_node_selector(selector, "spec.nodeSelector", &mut errs);
        if selector.node_selector_terms.len() != 1 {
            invalid_raw(
                &mut errs,
                "spec.nodeSelector.nodeSelectorTerms",
                go_terms(&selector.node_selector_terms),
                "must have exactly one node selector term",
            );
        }
    }
    for (field, value, name) in [
        ("spec.allNodes", spec.all_nodes, "`allNodes`"),
        (
            "spec.perDeviceNodeSelection",
            spec.per_device_node_selection,
            "`perDeviceNodeSelection`",
        ),
    ] {
        match value {
            Some(true) => set.push(name),
            Some(false) => invalid_raw(
                &mut errs,
                field,
                false,
                "must be either unset or set to true",
            ),
            None => {}
        }
    }
    const ONE_OF: &str = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required";
    match set.len() {
        0 => required(&mut errs, "spec", ONE_OF),
        1 => {}
        _ => invalid(
            &mut errs,
            "spec",
            &format!("{{{}}}", set.join(", ")),
            &format!("{ONE_OF}, but multiple fields are set"),
        ),
    }
    if spec.shared_counters.is_some() && spec.devices.is_some() {
        invalid(
            &mut errs,
            "spec",
            "",
            "only one of `sharedCounters` or `devices` is allowed",
        );
    }
    let devices = spec.devices.as_deref().unwrap_or(&[]);
    let advanced = devices.iter().any(|d| {
        d.taints.as_ref().is_some_and(|t| !t.is_empty())
            || d.consumes_counters.as_ref().is_some_and(|c| !c.is_empty())
            || d.attributes.iter().flatten().any(|(_, a)| has_list(a))
    });
    let max = if advanced {
        RESOURCE_SLICE_MAX_DEVICES_ADVANCED
    } else {
        RESOURCE_SLICE_MAX_DEVICES
    };
    if devices.len() > max {
        too_many(&mut errs, "spec.devices", devices.len(), max);
    } else {
        let per_device = spec.per_device_node_selection == Some(true);
        for (i, d) in devices.iter().enumerate() {
            validate_device(&mut errs, d, &index("spec.devices", i), per_device);
        }
        duplicates(
            &mut errs,
            devices.iter().map(|d| d.name.as_str()),
            "spec.devices",
        );
    }
    counters::validate_shared_counters(&mut errs, spec.shared_counters.as_deref());
    errs
}

/// A list-valued attribute (`bools`, `ints`, `strings`, `versions`).
fn has_list(a: &DeviceAttribute) -> bool {
    a.bools.is_some() || a.ints.is_some() || a.strings.is_some() || a.versions.is_some()
}

/// `attributeAndCapacityMaxKeyLength`: domain/ID.
const MAX_KEY_LENGTH: usize = DEVICE_MAX_DOMAIN_LENGTH + 1 + DEVICE_MAX_ID_LENGTH;

/// `validateDevice`.
fn validate_device(errs: &mut Errs, device: &Device, path: &str, per_device_node_selection: bool) {
    validate_dns_label(errs, &device.name, &child(path, "name"));
    let empty_attributes = BTreeMap::new();
    let empty_capacity = BTreeMap::new();
    let attributes = device.attributes.as_ref().unwrap_or(&empty_attributes);
    let capacity = device.capacity.as_ref().unwrap_or(&empty_capacity);
    let entries = attributes.len() + capacity.len();
    if entries > MAX_ATTRIBUTES_AND_CAPACITIES {
        invalid_raw(
            errs,
            path,
            entries,
            &format!(
                "the total number of attributes and capacities must not exceed {MAX_ATTRIBUTES_AND_CAPACITIES}"
            ),
        );
    }
    let values: usize = attributes.values().map(attribute_values).sum();
    if values > MAX_ATTRIBUTE_VALUES {
        invalid_raw(
            errs,
            path,
            values,
            &format!("the total number of attribute values must not exceed {MAX_ATTRIBUTE_VALUES}"),
        );
    }
    let attributes_path = child(path, "attributes");
    for (key, attribute) in attributes {
        validate_qualified_name(errs, key, &attributes_path);
        let at = child(&attributes_path, &truncate_key(key, MAX_KEY_LENGTH));
        validate_attribute(errs, attribute, &at);
    }
    let capacity_path = child(path, "capacity");
    let multiple = device.allow_multiple_allocations == Some(true);
    for (key, c) in capacity {
        validate_qualified_name(errs, key, &capacity_path);
        let at = child(&capacity_path, &truncate_key(key, MAX_KEY_LENGTH));
        match &c.request_policy {
            Some(_) if !multiple => forbidden(
                errs,
                &child(&at, "requestPolicy"),
                "allowMultipleAllocations must be true",
            ),
            Some(policy) => validate_request_policy(errs, &c.value, policy, &at),
            None => {}
        }
    }
    taints::validate_taints(errs, device.taints.as_deref(), &child(path, "taints"));
    counters::validate_consumes_counters(errs, device.consumes_counters.as_deref(), path);
    let (node_name, selector, all) = (&device.node_name, &device.node_selector, device.all_nodes);
    if per_device_node_selection {
        const ONE_OF: &str = "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec";
        let mut set = Vec::new();
        match node_name.as_deref() {
            Some("") => invalid(errs, &child(path, "nodeName"), "", "must not be empty"),
            Some(name) => {
                set.push("`nodeName`");
                validate_dns_subdomain(errs, name, &child(path, "nodeName"));
            }
            None => {}
        }
        if let Some(s) = selector {
            set.push("`nodeSelector`");
            validate_node_selector(s, &child(path, "nodeSelector"), errs);
        }
        match all {
            Some(true) => set.push("`allNodes`"),
            Some(false) => invalid_raw(
                errs,
                &child(path, "allNodes"),
                false,
                "must be either unset or set to true",
            ),
            None => {}
        }
        match set.len() {
            0 => required(errs, path, ONE_OF),
            1 => {}
            _ => invalid(errs, path, &format!("{{{}}}", set.join(", ")), ONE_OF),
        }
    } else if node_name.is_some() || selector.is_some() || all.is_some() {
        invalid_raw(
            errs,
            path,
            "null",
            "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
        );
    }
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

/// `CapacityRequestPolicyDiscreteMaxOptions`.
pub const CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS: usize = 10;

/// A quantity as `Quantity.UnmarshalJSON` decodes it (the API server refuses the object when
/// it does not parse: `ErrFormatWrong` and its kin).
fn quantity(errs: &mut Errs, path: &str, q: &K8sQuantity) -> Option<Quantity> {
    match q.0.parse::<Quantity>() {
        Ok(q) => Some(q),
        Err(_) => {
            invalid(errs, path, &q.0, crate::model::quantity::ERR_FORMAT_WRONG);
            None
        }
    }
}

/// `validateMultiAllocatableDeviceCapacity`: the request policy of a capacity (at `at`) of a
/// device that allows multiple allocations (`validateRequestPolicy`,
/// `validateValidRequestValues`, `validateRequestPolicyValidValues`,
/// `validateRequestPolicyRange`, `validateRequestPolicyRangeStep`).
fn validate_request_policy(
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

/// `numEntriesDeviceAttribute`: a scalar counts one, a list each of its items.
fn attribute_values(a: &DeviceAttribute) -> usize {
    let lists = [
        a.bools.as_ref().map_or(0, Vec::len),
        a.ints.as_ref().map_or(0, Vec::len),
        a.strings.as_ref().map_or(0, Vec::len),
        a.versions.as_ref().map_or(0, Vec::len),
    ];
    match lists.iter().sum() {
        0 => 1,
        n => n,
    }
}

/// `truncateIfTooLong`: a long key in a field path keeps its start and end.
fn truncate_key(key: &str, max: usize) -> String {
    let max = max.max(16);
    if key.len() <= max {
        return key.to_string();
    }
    let remaining = max - 3;
    let (head, tail) = (remaining.div_ceil(2), remaining / 2);
    match (key.get(..head), key.get(key.len() - tail..)) {
        (Some(h), Some(t)) => format!("{h}...{t}"),
        _ => key.to_string(),
    }
}

/// semver.org 2.0.0 (`semverRe`; `\d` is ASCII in Go's RE2).
static SEMVER: LazyLock<regex::Regex> = LazyLock::new(|| {
    let numeric = "(0|[1-9][0-9]*)";
    let pre = "(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)";
    let build = "[0-9a-zA-Z-]+";
    regex::Regex::new(&format!(
        r"^{numeric}\.{numeric}\.{numeric}(-{pre}(\.{pre})*)?(\+{build}(\.{build})*)?$"
    ))
    .expect("the semver pattern compiles")
});

/// `validateDeviceAttribute`: exactly one value; strings and versions at most 64 bytes,
/// versions semantic versions, lists not empty.
fn validate_attribute(errs: &mut Errs, a: &DeviceAttribute, path: &str) {
    let string_value = |errs: &mut Errs, v: &str, at: &str| {
        if v.len() > ATTRIBUTE_MAX_VALUE_LENGTH {
            too_long(errs, at, ATTRIBUTE_MAX_VALUE_LENGTH);
        }
    };
    let version_value = |errs: &mut Errs, v: &str, at: &str| {
        if !SEMVER.is_match(v) {
            invalid(
                errs,
                at,
                v,
                "must be a string compatible with semver.org spec 2.0.0",
            );
        }
        string_value(errs, v, at);
    };
    let mut fields = usize::from(a.bool.is_some()) + usize::from(a.int.is_some());
    if let Some(v) = &a.string {
        fields += 1;
        string_value(errs, v, &child(path, "string"));
    }
    if let Some(v) = &a.version {
        fields += 1;
        version_value(errs, v, &child(path, "version"));
    }
    let empty_list = |errs: &mut Errs, name: &str, go_type: &str| {
        invalid_raw(
            errs,
            &child(path, name),
            format!("[]{go_type}{{}}"),
            "must not be empty if specified",
        )
    };
    if let Some(v) = &a.bools {
        fields += 1;
        if v.is_empty() {
            empty_list(errs, "bools", "bool");
        }
    }
    if let Some(v) = &a.ints {
        fields += 1;
        if v.is_empty() {
            empty_list(errs, "ints", "int64");
        }
    }
    if let Some(v) = &a.strings {
        fields += 1;
        if v.is_empty() {
            empty_list(errs, "strings", "string");
        }
        for (i, s) in v.iter().enumerate() {
            string_value(errs, s, &index(&child(path, "strings"), i));
        }
    }
    if let Some(v) = &a.versions {
        fields += 1;
        if v.is_empty() {
            empty_list(errs, "versions", "string");
        }
        for (i, s) in v.iter().enumerate() {
            version_value(errs, s, &index(&child(path, "versions"), i));
        }
    }
    match fields {
        0 => invalid(errs, path, "", "exactly one value must be specified"),
        1 => {}
        _ => invalid_raw(
            errs,
            path,
            serde_json::to_string(a).unwrap_or_default(),
            "exactly one value must be specified",
        ),
    }
}

/// Node selector terms as Go's `%#v` prints the internal type (`[]core.NodeSelectorTerm`).
fn go_terms(terms: &[NodeSelectorTerm]) -> String {
    if terms.is_empty() {
        return "[]core.NodeSelectorTerm(nil)".into();
    }
    let requirements =
        |list: &Option<Vec<NodeSelectorRequirement>>| match list.as_deref() {
            None | Some([]) => "[]core.NodeSelectorRequirement(nil)".to_string(),
            Some(list) => {
                let items: Vec<String> = list
                .iter()
                .map(|r| {
                    let values = match r.values.as_deref() {
                        None | Some([]) => "[]string(nil)".to_string(),
                        Some(v) => format!(
                            "[]string{{{}}}",
                            v.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", ")
                        ),
                    };
                    format!(
                        "core.NodeSelectorRequirement{{Key:{:?}, Operator:{:?}, Values:{values}}}",
                        r.key, r.operator
                    )
                })
                .collect();
                format!("[]core.NodeSelectorRequirement{{{}}}", items.join(", "))
            }
        };
    let items: Vec<String> = terms
        .iter()
        .map(|t| {
            format!(
                "core.NodeSelectorTerm{{MatchExpressions:{}, MatchFields:{}}}",
                requirements(&t.match_expressions),
                requirements(&t.match_fields)
            )
        })
        .collect();
    format!("[]core.NodeSelectorTerm{{{}}}", items.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semver_follows_the_spec() {
        for ok in [
            "1.2.3",
            "12.4.0",
            "1.0.0-alpha.1",
            "1.0.0+build.5",
            "0.0.0-0a",
        ] {
            assert!(SEMVER.is_match(ok), "{ok}");
        }
        for bad in ["1.2", "01.2.3", "1.2.3-", "1.2.3-01", "v1.2.3", "١.2.3"] {
            assert!(!SEMVER.is_match(bad), "{bad}");
        }
    }

    #[test]
    fn long_keys_are_truncated_in_the_middle() {
        assert_eq!(truncate_key("short", 96), "short");
        let key = format!("{}/{}", "d".repeat(90), "n".repeat(20));
        let t = truncate_key(&key, 96);
        assert_eq!(t.len(), 96);
        assert!(t.starts_with("ddd") && t.ends_with("nnn") && t.contains("..."));
    }
}
