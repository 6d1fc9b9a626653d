//! Device taints and request tolerations (`DRADeviceTaints`), as the structured allocator
//! honours them: a port of kubernetes
//! `staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/allocator_stable.go`
//! (`taintPreventsAllocation`, `taintTolerated`) and
//! `staging/src/k8s.io/dynamic-resource-allocation/resourceclaim/toleration.go`
//! (`ToleratesTaint`).
//!
//! Upstream checks taints in `allocateDevice`, after the device was found selectable and its
//! counters were taken, for every request (admin access included) and for each device of an
//! "All" request (which then cannot be satisfied). With the feature off taints are ignored.
//! The tolerations of the (sub)request are copied into each result, gate or not.

use k8s_openapi::api::resource::v1::{Device, DeviceTaint, DeviceToleration};

/// `taintPreventsAllocation`: some `NoSchedule` or `NoExecute` taint of the device is not
/// tolerated. Other effects (`None`, unknown ones) never prevent allocation.
pub fn prevents_allocation(device: &Device, tolerations: &[DeviceToleration]) -> bool {
    preventing(device, tolerations).is_some()
}

/// The first taint that [`prevents_allocation`].
pub fn preventing<'d>(
    device: &'d Device,
    tolerations: &[DeviceToleration],
) -> Option<&'d DeviceTaint> {
    device.taints.iter().flatten().find(|taint| {
        matches!(taint.effect.as_str(), "NoSchedule" | "NoExecute")
            && !tolerations.iter().any(|t| tolerates(t, taint))
    })
}

/// Whether the device has taints at all (a caller that counts devices cheaply can then
/// fall back to the allocator, or check each device with [`prevents_allocation`]).
pub fn tainted(device: &Device) -> bool {
    device.taints.as_ref().is_some_and(|t| !t.is_empty())
}

/// `ToleratesTaint`: an empty effect or key matches any; `Exists` matches any value, `Equal`
/// (or no operator) the same value; an unknown operator matches nothing.
pub fn tolerates(toleration: &DeviceToleration, taint: &DeviceTaint) -> bool {
    let effect = toleration.effect.as_deref().unwrap_or("");
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or("");
    if !key.is_empty() && key != taint.key {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or("") {
        "" | "Equal" => {
            toleration.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or("")
        }
        "Exists" => true,
        _ => false,
    }
}
