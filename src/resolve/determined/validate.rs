//! Determined's validation: the expconf schema's disallowed container keys, the default pod
//! specs of the Helm values, and the final pod.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as k8s;
use serde_json::Value;

use super::*;
use crate::features::FeatureGates;
use crate::model::objects;
use crate::model::validate::FieldError;

/// Container keys the expconf schema rejects in `environment.pod_spec.spec.containers[*]`
/// (`schemas/expconf/v0/environment.json`, `disallowProperties`, the version without `env`
/// and `env_from`). The snake_case names never match a Kubernetes field, so in effect only
/// `image`, `command`, `args`, `ports` and `lifecycle` are rejected — in every container, not
/// only `determined-container`.
pub(super) const EXPCONF_DISALLOWED_CONTAINER_KEYS: &[(&str, &str)] = &[
    (
        "image",
        "container Image is not configurable, set it in the experiment config",
    ),
    ("command", "container Command is not configurable"),
    ("args", "container Args are not configurable"),
    ("working_dir", "container WorkingDir is not configurable"),
    ("ports", "container Ports are not configurable"),
    (
        "liveness_probe",
        "container LivenessProbe is not configurable",
    ),
    (
        "readiness_probe",
        "container ReadinessProbe is not configurable",
    ),
    (
        "startup_probe",
        "container StartupProbe is not configurable",
    ),
    ("lifecycle", "container Lifecycle is not configurable"),
    (
        "termination_message_path",
        "container TerminationMessagePath is not configurable",
    ),
    (
        "termination_message_policy",
        "container TerminationMessagePolicy is not configurable",
    ),
    (
        "image_pull_policy",
        "container ImagePullPolicy is not configurable, set it in the experiment config",
    ),
    (
        "security_context",
        "container SecurityContext is not configurable, set it in the experiment config",
    ),
];

/// The expconf schema's checks of `environment.pod_spec` (sanity validation at submission).
pub(super) fn check_expconf_schema(raw: &Value, errs: &mut Vec<FieldError>) {
    for (key, message) in [
        ("name", "pod Name is not a configurable option"),
        ("name_space", "pod NameSpace is not a configurable option"),
    ] {
        if raw.get(key).is_some() {
            errs.push(field_error(&format!("{USER_SOURCE}.{key}"), message.into()));
        }
    }
    let containers = raw
        .get("spec")
        .and_then(|s| s.get("containers"))
        .and_then(Value::as_array);
    for (i, c) in containers.into_iter().flatten().enumerate() {
        for (key, message) in EXPCONF_DISALLOWED_CONTAINER_KEYS {
            if c.get(*key).is_some() {
                errs.push(field_error(
                    &format!("{USER_SOURCE}.spec.containers[{i}].{key}"),
                    (*message).into(),
                ));
            }
        }
    }
}

/// `master/pkg/model: validatePodSpec`, run on the task container defaults when the master
/// starts. `terminationMessagePath`, `terminationMessagePolicy` and `imagePullPolicy` are
/// checked with `check.Match(value, "")`, a regular expression that matches everything, so
/// they are never rejected (they are ignored later, see [`IGNORED_REASONS`]).
pub(super) fn validate_default_pod_spec(pod: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let meta = pod.get("metadata");
    if meta.and_then(|m| m.get("name")).is_some() {
        errs.push(field_error(
            &format!("{path}.metadata.name"),
            "pod Name is not a configurable option".into(),
        ));
    }
    if meta.and_then(|m| m.get("namespace")).is_some() {
        errs.push(field_error(
            &format!("{path}.metadata.namespace"),
            "pod Namespace is not a configurable option".into(),
        ));
    }
    if pod.pointer("/spec/hostNetwork") == Some(&Value::Bool(true)) {
        errs.push(field_error(
            &format!("{path}.spec.hostNetwork"),
            "host networking must be configured via master.yaml".into(),
        ));
    }
    let containers = pod.pointer("/spec/containers").and_then(Value::as_array);
    for (i, c) in containers.into_iter().flatten().enumerate() {
        if c.get("name").and_then(Value::as_str) != Some(DETERMINED_CONTAINER) {
            continue;
        }
        for (key, message) in [
            (
                "image",
                "container Image is not configurable, set it in the experiment config",
            ),
            ("command", "container Command is not configurable"),
            ("args", "container Args are not configurable"),
            ("workingDir", "container WorkingDir is not configurable"),
            ("ports", "container Ports are not configurable"),
            (
                "livenessProbe",
                "container LivenessProbe is not configurable",
            ),
            (
                "readinessProbe",
                "container ReadinessProbe is not configurable",
            ),
            ("startupProbe", "container StartupProbe is not configurable"),
            ("lifecycle", "container Lifecycle is not configurable"),
        ] {
            if c.get(key).is_some() {
                errs.push(field_error(
                    &format!("{path}.spec.containers[{i}].{key}"),
                    message.into(),
                ));
            }
        }
    }
}

/// Validates the trial's pod as the API server validates the Job's pod template; an error names
/// the pod field and who set it.
pub(super) fn validate_final_pod(
    pod: &Value,
    prov: &BTreeMap<String, String>,
    default_path: Option<&str>,
    errs: &mut Vec<FieldError>,
) {
    use serde::Deserialize as _;
    let typed = match k8s::Pod::deserialize(pod) {
        Ok(p) => p,
        Err(e) => {
            errs.push(field_error(
                USER_SOURCE,
                format!("the trial pod does not decode: {e}"),
            ));
            return;
        }
    };
    let mut pod_errs = Vec::new();
    objects::pod_from_k8s(&typed, "", &FeatureGates::default(), &mut pod_errs);
    for e in pod_errs {
        let keyed = crate::resolve::keyed_path(pod, &e.path);
        let mut sources: Vec<&str> = prov
            .iter()
            .filter(|(p, _)| p.starts_with(&keyed) || keyed.starts_with(p.as_str()))
            .map(|(_, s)| s.as_str())
            .collect();
        sources.sort_unstable();
        sources.dedup();
        let path = if sources.contains(&USER_SOURCE) || default_path.is_none() {
            USER_SOURCE
        } else if sources.iter().any(|s| s.starts_with("default")) {
            default_path.unwrap_or(USER_SOURCE)
        } else {
            USER_SOURCE
        };
        errs.push(field_error(
            path,
            format!(
                "the trial pod is invalid: {}: {} (set by {})",
                e.path,
                e.message,
                if sources.is_empty() {
                    DETERMINED_SOURCE.to_string()
                } else {
                    sources.join(", ")
                }
            ),
        ));
    }
}
