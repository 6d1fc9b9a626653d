//! `TaintToleration`: filter on `NoSchedule`/`NoExecute` taints, score on `PreferNoSchedule`.
//! Sources: `kubernetes/api:core/v1/toleration.go` (`ToleratesTaint`),
//! `kubernetes/component-helpers:scheduling/corev1/helpers.go` (`FindMatchingUntoleratedTaint`),
//! `pkg/scheduler/framework/plugins/tainttoleration/taint_toleration.go`.

use k8s_openapi::api::core::v1::{Taint, Toleration};

use crate::features::FeatureGates;
use crate::model::{Node, Pod};
use crate::sched::framework::{Code, MessageFormat, Status, names};

/// Filter reason since Kubernetes 1.35 (PR #134740).
pub const ERR_REASON_UNTOLERATED: &str = "node(s) had untolerated taint(s)";

/// `Toleration.ToleratesTaint`.
pub fn tolerates_taint(t: &Toleration, taint: &Taint, gates: &FeatureGates) -> bool {
    let effect = t.effect.as_deref().unwrap_or("");
    if !effect.is_empty() && effect != taint.effect {
        return false;
    }
    let key = t.key.as_deref().unwrap_or("");
    if !key.is_empty() && key != taint.key {
        return false;
    }
    let value = t.value.as_deref().unwrap_or("");
    let taint_value = taint.value.as_deref().unwrap_or("");
    match t.operator.as_deref().unwrap_or("") {
        "" | "Equal" => value == taint_value,
        "Exists" => true,
        op @ ("Lt" | "Gt") if gates.taint_toleration_comparison_operators => {
            match (taint_value.parse::<i64>(), value.parse::<i64>()) {
                (Ok(tv), Ok(v)) => {
                    if op == "Lt" {
                        tv < v
                    } else {
                        tv > v
                    }
                }
                _ => false,
            }
        }
        _ => false,
    }
}

/// `TolerationsTolerateTaint`.
pub fn tolerations_tolerate_taint(
    tolerations: &[Toleration],
    taint: &Taint,
    gates: &FeatureGates,
) -> bool {
    tolerations.iter().any(|t| tolerates_taint(t, taint, gates))
}

/// `FindMatchingUntoleratedTaint` with `DoNotScheduleTaintsFilterFunc`: the first
/// `NoSchedule`/`NoExecute` taint no toleration tolerates.
pub fn find_untolerated<'a>(
    taints: &'a [Taint],
    tolerations: &[Toleration],
    gates: &FeatureGates,
) -> Option<&'a Taint> {
    taints
        .iter()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .find(|t| !tolerations_tolerate_taint(tolerations, t, gates))
}

pub fn filter(pod: &Pod, node: &Node, gates: &FeatureGates, format: MessageFormat) -> Status {
    match find_untolerated(&node.taints, &pod.tolerations, gates) {
        None => Status::success(),
        Some(taint) => {
            let reason = match format {
                MessageFormat::Current => ERR_REASON_UNTOLERATED.into(),
                MessageFormat::V1_34 => format!(
                    "node(s) had untolerated taint {{{}: {}}}",
                    taint.key,
                    taint.value.as_deref().unwrap_or("")
                )
                .into(),
            };
            Status {
                code: Code::UnschedulableAndUnresolvable,
                plugin: names::TAINT_TOLERATION,
                reasons: vec![reason],
            }
        }
    }
}

/// Score (before normalisation): the number of `PreferNoSchedule` taints not tolerated by the
/// pod's tolerations whose effect is empty or `PreferNoSchedule` (PreScore's selection).
pub fn score(pod: &Pod, node: &Node, gates: &FeatureGates) -> i64 {
    let tolerations: Vec<Toleration> = pod
        .tolerations
        .iter()
        .filter(|t| {
            matches!(
                t.effect.as_deref(),
                None | Some("") | Some("PreferNoSchedule")
            )
        })
        .cloned()
        .collect();
    node.taints
        .iter()
        .filter(|t| {
            t.effect == "PreferNoSchedule" && !tolerations_tolerate_taint(&tolerations, t, gates)
        })
        .count() as i64
}
