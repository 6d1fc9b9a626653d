//! Slots → pods: `ValidateResources` and `assignResources` (`kubernetesrm/resource_pool.go`).

use super::*;
use crate::model::validate::FieldError;

/// `ValidateResources` and `assignResources` (`resource_pool.go`): (pods, slots per pod).
pub(super) fn split_slots(
    slots: i64,
    eff: &Effective,
    single_node: bool,
) -> Result<(usize, i64), FieldError> {
    let Some(max) = eff.max_slots_per_pod else {
        return Err(field_error(
            &eff.max_slots_path,
            "A valid Values.maxSlotsPerPod entry is required!".into(),
        ));
    };
    if max < 0 {
        return Err(field_error(
            &eff.max_slots_path,
            "max_slots_per_pod must be >= 0".into(),
        ));
    }
    if slots == 0 {
        return Ok((1, 0));
    }
    if single_node {
        if slots > max {
            return Err(field_error(
                "resources.slots_per_trial",
                format!(
                    "invalid resource request: slots ({slots}) must be < max_slots_per_pod \
                     ({max}) on single pod"
                ),
            ));
        }
        return Ok((1, slots));
    }
    if max == 0 {
        // ValidateResources computes `slots % 0` (a runtime panic); assignResources logs this.
        return Err(field_error(
            "resources.slots_per_trial",
            format!(
                "set max_slots_per_pod > 0 to schedule tasks with slots ({slots} requested, \
                 max_slots_per_pod 0 at {})",
                eff.max_slots_path
            ),
        ));
    }
    if slots <= max {
        return Ok((1, slots));
    }
    if slots % max != 0 {
        return Err(field_error(
            "resources.slots_per_trial",
            format!(
                "invalid resource request: slots ({slots}) must be < or a multiple of \
                 max_slots_per_pod ({max})"
            ),
        ));
    }
    let pods = slots / max;
    if crate::limits::PODS.exceeded_by(pods as u64) {
        return Err(field_error(
            "resources.slots_per_trial",
            crate::limits::PODS.message(format!("a trial of {pods} pods")),
        ));
    }
    Ok((pods as usize, max))
}
