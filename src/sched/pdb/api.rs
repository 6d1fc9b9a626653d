//! A `policy/v1` PodDisruptionBudget as the API server admits it: `ValidatePodDisruptionBudget`
//! (kubernetes 1.34 `pkg/apis/policy/validation/validation.go`) with its messages, on create
//! (`AllowInvalidLabelValueInSelector` false), and the status a dump carries checked as
//! `ValidatePodDisruptionBudgetStatusUpdate` checks a status update (the counts
//! non-negative). Metadata is the loader's (`Origin::admit_with`).
//!
//! There is no defaulting in `policy/v1` (`pkg/apis/policy/v1/defaults.go` defaults nothing
//! of the spec): a budget with neither `minAvailable` nor `maxUnavailable` is valid, and the
//! disruption controller gives it no disruptions (its expected count is 0).

use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde_json::{Value, json};

use super::{Budget, Status, UnhealthyPolicy};
use crate::model::validate::FieldError;
use crate::model::validate::intstr::{
    NEGATIVE, int_or_string_json, not_more_than_100_percent, positive_int_or_percent, selector_json,
};
use crate::model::validate::selector::label_selector;

/// The apiVersion schedsim reads; `policy/v1beta1` was removed in 1.25.
pub const API_VERSION: &str = "policy/v1";

/// The values of `spec.unhealthyPodEvictionPolicy` (`supportedUnhealthyPodEvictionPolicies`,
/// listed sorted as `sets.String.List` lists them).
const POLICIES: &[&str] = &["AlwaysAllow", "IfHealthyBudget"];

/// The budget as the simulation reads it, or every field error (paths under `at`). The
/// caller fills [`Budget::pod_scales`].
pub fn budget(pdb: &PodDisruptionBudget, at: &str) -> Result<Budget, Vec<FieldError>> {
    let mut errs = Vec::new();
    let path = |p: &str| crate::yaml::join_path(at, p);
    let spec = pdb.spec.clone().unwrap_or_default();
    if spec.min_available.is_some() && spec.max_unavailable.is_some() {
        errs.push(FieldError::new(
            &path("spec"),
            format!(
                "Invalid value: {}: minAvailable and maxUnavailable cannot be both set",
                internal_spec_json(&spec)
            ),
        ));
    }
    for (field, v) in [
        ("spec.minAvailable", &spec.min_available),
        ("spec.maxUnavailable", &spec.max_unavailable),
    ] {
        if let Some(v) = v {
            positive_int_or_percent(&mut errs, &path(field), v);
            not_more_than_100_percent(&mut errs, &path(field), v);
        }
    }
    label_selector(
        spec.selector.as_ref(),
        false,
        &path("spec.selector"),
        &mut errs,
    );
    let policy = match spec.unhealthy_pod_eviction_policy.as_deref() {
        None | Some("IfHealthyBudget") => UnhealthyPolicy::IfHealthyBudget,
        Some("AlwaysAllow") => UnhealthyPolicy::AlwaysAllow,
        Some(other) => {
            let list: Vec<String> = POLICIES.iter().map(|s| format!("{s:?}")).collect();
            errs.push(FieldError::new(
                &path("spec.unhealthyPodEvictionPolicy"),
                format!(
                    "Unsupported value: {other:?}: supported values: {}",
                    list.join(", ")
                ),
            ));
            UnhealthyPolicy::IfHealthyBudget
        }
    };
    let status = pdb.status.as_ref().map(|s| {
        for (field, v) in [
            ("status.disruptionsAllowed", s.disruptions_allowed),
            ("status.currentHealthy", s.current_healthy),
            ("status.desiredHealthy", s.desired_healthy),
            ("status.expectedPods", s.expected_pods),
        ] {
            if let Some(v) = v.filter(|v| *v < 0) {
                errs.push(FieldError::new(
                    &path(field),
                    format!("Invalid value: {v}: {NEGATIVE}"),
                ));
            }
        }
        Status {
            disruptions_allowed: s.disruptions_allowed.unwrap_or(0),
            current_healthy: s.current_healthy.unwrap_or(0),
            desired_healthy: s.desired_healthy.unwrap_or(0),
            expected_pods: s.expected_pods.unwrap_or(0),
            disrupted_pods: (s.disrupted_pods.iter().flatten())
                .map(|(k, _)| k.clone())
                .collect(),
        }
    });
    if !errs.is_empty() {
        return Err(errs);
    }
    Ok(Budget {
        namespace: (pdb.metadata.namespace.clone()).unwrap_or_else(|| "default".into()),
        name: pdb.metadata.name.clone().unwrap_or_default(),
        selector: spec.selector,
        min_available: spec.min_available,
        max_unavailable: spec.max_unavailable,
        unhealthy_policy: policy,
        pod_scales: Default::default(),
        status,
    })
}

/// The internal `policy.PodDisruptionBudgetSpec` as `field.Error` renders a struct value: JSON
/// with the Go field names (the internal type has no JSON tags), in declaration order.
fn internal_spec_json(spec: &k8s_openapi::api::policy::v1::PodDisruptionBudgetSpec) -> String {
    let opt = |v: Option<Value>| v.unwrap_or(Value::Null);
    let fields = [
        (
            "MinAvailable",
            opt(spec.min_available.as_ref().map(int_or_string_json)),
        ),
        ("Selector", opt(spec.selector.as_ref().map(selector_json))),
        (
            "MaxUnavailable",
            opt(spec.max_unavailable.as_ref().map(int_or_string_json)),
        ),
        (
            "UnhealthyPodEvictionPolicy",
            opt(spec
                .unhealthy_pod_eviction_policy
                .as_ref()
                .map(|p| json!(p))),
        ),
    ];
    let body: Vec<String> = fields.iter().map(|(k, v)| format!("{k:?}:{v}")).collect();
    format!("{{{}}}", body.join(","))
}
