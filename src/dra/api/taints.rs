//! Device taints and request tolerations as the API server validates them (Kubernetes 1.34
//! `pkg/apis/resource/validation/validation.go`: `validateDeviceTaint`,
//! `validateDeviceToleration`, `validateSlice` with `DeviceTaintsMaxLength` and
//! `DeviceTolerationsMaxLength`) and defaults them (`SetDefaults_DeviceToleration`: no
//! operator means `Equal`). Not checked: the syntax of keys and values (`ValidateLabelName`,
//! `validateLabelValue`), which the allocator only compares.

use k8s_openapi::api::resource::v1::{DeviceTaint, DeviceToleration};

use super::DEVICE_TAINTS_MAX_LENGTH;
use super::fields::*;

/// `DeviceTolerationsMaxLength`.
pub const DEVICE_TOLERATIONS_MAX_LENGTH: usize = 16;

/// `validDeviceTaintEffects` in 1.34 (`None` came later), sorted as `sets.List` prints them.
const EFFECTS: &str = "\"NoExecute\", \"NoSchedule\"";

fn effect_supported(effect: &str) -> bool {
    matches!(effect, "NoExecute" | "NoSchedule")
}

/// `validateSlice(device.Taints, DeviceTaintsMaxLength, validateDeviceTaint, …)`: each taint,
/// then the count.
pub(super) fn validate_taints(errs: &mut Errs, taints: Option<&[DeviceTaint]>, path: &str) {
    let taints = taints.unwrap_or(&[]);
    for (i, taint) in taints.iter().enumerate() {
        let effect_path = child(&index(path, i), "effect");
        match taint.effect.as_str() {
            "" => required(errs, &effect_path, ""),
            e if !effect_supported(e) => not_supported(errs, &effect_path, e, EFFECTS),
            _ => {}
        }
    }
    if taints.len() > DEVICE_TAINTS_MAX_LENGTH {
        too_many(errs, path, taints.len(), DEVICE_TAINTS_MAX_LENGTH);
    }
}

/// `validateSlice(request.Tolerations, DeviceTolerationsMaxLength, validateDeviceToleration,
/// …)` for a request's or subrequest's tolerations.
pub(super) fn validate_tolerations(
    errs: &mut Errs,
    tolerations: Option<&[DeviceToleration]>,
    path: &str,
) {
    let tolerations = tolerations.unwrap_or(&[]);
    for (i, t) in tolerations.iter().enumerate() {
        let at = index(path, i);
        let value = t.value.as_deref().unwrap_or("");
        match t.operator.as_deref().unwrap_or("") {
            "Exists" if !value.is_empty() => invalid(
                errs,
                &child(&at, "value"),
                value,
                "must be empty for operator `Exists`",
            ),
            "Exists" | "Equal" => {}
            "" => required(errs, &child(&at, "operator"), ""),
            other => not_supported(
                errs,
                &child(&at, "operator"),
                other,
                "\"Equal\", \"Exists\"",
            ),
        }
        match t.effect.as_deref().unwrap_or("") {
            "" => {}
            e if !effect_supported(e) => not_supported(errs, &child(&at, "effect"), e, EFFECTS),
            _ => {}
        }
    }
    if tolerations.len() > DEVICE_TOLERATIONS_MAX_LENGTH {
        too_many(errs, path, tolerations.len(), DEVICE_TOLERATIONS_MAX_LENGTH);
    }
}

/// `SetDefaults_DeviceToleration`.
pub(super) fn set_defaults(tolerations: Option<&mut Vec<DeviceToleration>>) {
    for t in tolerations.into_iter().flatten() {
        if t.operator.as_deref().unwrap_or("").is_empty() {
            t.operator = Some("Equal".into());
        }
    }
}

/// `field.NotSupported` of a string value; `supported`: the quoted list.
fn not_supported(errs: &mut Errs, path: &str, value: &str, supported: &str) {
    push(
        errs,
        path,
        format!("Unsupported value: {value:?}: supported values: {supported}"),
    );
}
