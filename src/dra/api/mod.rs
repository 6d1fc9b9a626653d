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

use std::collections::BTreeSet;

use k8s_openapi::api::resource::v1::{DeviceClass, ResourceClaimSpec};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

mod claims;
mod counters;
mod fields;
mod request_policy;
mod selectors;
mod slices;
mod taints;
pub mod v1beta1;

pub use claims::{validate_resource_claim, validate_resource_claim_template};
pub use request_policy::CAPACITY_REQUEST_POLICY_DISCRETE_MAX_OPTIONS;
pub use slices::validate_resource_slice;

use crate::model::quantity::Quantity;
use fields::*;
use selectors::validate_selectors;

/// The versions Kubernetes 1.34 serves for DeviceClass, ResourceSlice, ResourceClaim and
/// ResourceClaimTemplate, all of which schedsim reads. `v1beta2` is field for field `v1`
/// (Kubernetes copied `v1` from it in 1.34: both convert to the internal types with generated
/// code only, and their `defaults.go` are the same), so both decode into
/// `k8s_openapi::api::resource::v1`. `v1beta1` has another shape (requests without
/// `exactly`, devices with `basic`): `v1beta1` converts it.
pub const API_VERSIONS: &[&str] = &[
    "resource.k8s.io/v1",
    "resource.k8s.io/v1beta2",
    v1beta1::API_VERSION,
];

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
pub(super) fn validate_meta(errs: &mut Errs, meta: &ObjectMeta, namespaced: bool) {
    use crate::model::validate::meta::{KindMeta, Meta, NameRule, validate};
    let rule = KindMeta {
        kind: "",
        name: NameRule::Subdomain,
        namespaced,
    };
    errs.extend(validate(rule, Meta::of(meta), ""));
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

/// `validateSet`'s uniqueness check: `Duplicate` at the index of each repeated key.
pub(super) fn duplicates<'a>(errs: &mut Errs, keys: impl Iterator<Item = &'a str>, path: &str) {
    let mut seen = BTreeSet::new();
    for (i, key) in keys.enumerate() {
        if !seen.insert(key) {
            duplicate(errs, &index(path, i), key);
        }
    }
}

/// A quantity as `Quantity.UnmarshalJSON` decodes it (the API server refuses the object when
/// it does not parse: `ErrFormatWrong` and its kin).
pub(super) fn quantity(errs: &mut Errs, path: &str, q: &K8sQuantity) -> Option<Quantity> {
    match q.0.parse::<Quantity>() {
        Ok(q) => Some(q),
        Err(_) => {
            invalid(errs, path, &q.0, crate::model::quantity::ERR_FORMAT_WRONG);
            None
        }
    }
}
