//! The API server's validation of the pod fields schedsim reads
//! (`kubernetes/kubernetes:pkg/apis/core/validation/validation.go`), with its messages.
//!
//! A pod the API server would reject never reaches the scheduler in a real cluster, so
//! schedsim rejects it at load instead of simulating something that cannot exist.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{NodeSelector, NodeSelectorRequirement, PodSpec, Toleration};

use crate::features::FeatureGates;

/// One field error: path relative to the document, and the upstream-style message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub path: String,
    pub message: String,
}

impl FieldError {
    pub fn new(path: &str, message: String) -> FieldError {
        FieldError {
            path: path.to_string(),
            message,
        }
    }
}

pub(crate) fn invalid(errs: &mut Vec<FieldError>, path: String, value: &str, detail: &str) {
    errs.push(FieldError {
        path,
        message: format!("Invalid value: {value:?}: {detail}"),
    });
}

fn required(errs: &mut Vec<FieldError>, path: String, detail: &str) {
    errs.push(FieldError {
        path,
        message: format!("Required value: {detail}"),
    });
}

fn not_supported(errs: &mut Vec<FieldError>, path: String, value: &str, supported: &[&str]) {
    let list: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
    errs.push(FieldError {
        path,
        message: format!(
            "Unsupported value: {value:?}: supported values: {}",
            list.join(", ")
        ),
    });
}

/// `ValidateLabelName` (apimachinery `meta/v1/validation`): a label key, each message of
/// `IsQualifiedName` an error.
pub fn validate_label_name(key: &str, path: &str, errs: &mut Vec<FieldError>) {
    for m in super::labels::label_key_errors(key) {
        invalid(errs, path.to_string(), key, &m);
    }
}

/// `ValidateLabels`: every key and value of a label map, keys in sorted order.
pub fn validate_labels<'a>(
    labels: impl IntoIterator<Item = (&'a String, &'a String)>,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let mut sorted: Vec<(&String, &String)> = labels.into_iter().collect();
    sorted.sort();
    for (k, v) in sorted {
        validate_label_name(k, path, errs);
        for m in super::labels::label_value_errors(v) {
            invalid(errs, path.to_string(), v, &m);
        }
    }
}

/// `ValidateLabelSelector` with the default options (values must be label values).
pub fn validate_label_selector(
    selector: &k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    if let Some(labels) = &selector.match_labels {
        validate_labels(labels, &format!("{path}.matchLabels"), errs);
    }
    for (i, e) in selector.match_expressions.iter().flatten().enumerate() {
        let at = format!("{path}.matchExpressions[{i}]");
        let values = e.values.as_deref().unwrap_or_default();
        match e.operator.as_str() {
            "In" | "NotIn" if values.is_empty() => required(
                errs,
                format!("{at}.values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            ),
            "In" | "NotIn" => {}
            "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(FieldError {
                path: format!("{at}.values"),
                message:
                    "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                        .into(),
            }),
            "Exists" | "DoesNotExist" => {}
            other => invalid(
                errs,
                format!("{at}.operator"),
                other,
                "not a valid selector operator",
            ),
        }
        validate_label_name(&e.key, &format!("{at}.key"), errs);
        for (v, value) in values.iter().enumerate() {
            for m in super::labels::label_value_errors(value) {
                invalid(errs, format!("{at}.values[{v}]"), value, &m);
            }
        }
    }
}

/// `ValidateAnnotations` (apimachinery `api/validation/objectmeta.go`): keys are qualified
/// names (checked lowercased), and all of them fit in 256 KiB.
pub fn validate_annotations<'a>(
    annotations: impl IntoIterator<Item = (&'a String, &'a String)>,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let mut sorted: Vec<(&String, &String)> = annotations.into_iter().collect();
    sorted.sort();
    let mut total = 0usize;
    for (k, v) in sorted {
        for m in super::labels::label_key_errors(&k.to_lowercase()) {
            invalid(errs, path.to_string(), k, &m);
        }
        total += k.len() + v.len();
    }
    const LIMIT: usize = 256 * 1024;
    if total > LIMIT {
        errs.push(FieldError::new(
            path,
            format!("Too long: may not be more than {LIMIT} bytes"),
        ));
    }
}

/// `validation.IsDomainPrefixedPath` (apimachinery `pkg/util/validation/validation.go`): a
/// DNS-subdomain host, `/`, and an HTTP path.
pub fn validate_domain_prefixed_path(value: &str, path: &str, errs: &mut Vec<FieldError>) {
    if value.is_empty() {
        errs.push(FieldError::new(path, "Required value".into()));
        return;
    }
    let Some((host, rest)) = value
        .split_once('/')
        .filter(|(h, p)| !h.is_empty() && !p.is_empty())
    else {
        invalid(
            errs,
            path.to_string(),
            value,
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        );
        return;
    };
    for m in super::labels::dns1123_subdomain_errors(host) {
        invalid(errs, path.to_string(), host, &m);
    }
    if !rest
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "/-._~%!$&'()*+,;=:".contains(c))
    {
        invalid(
            errs,
            path.to_string(),
            rest,
            "Invalid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')",
        );
    }
}

const TAINT_EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];

/// Validates the scheduling-relevant parts of a pod spec at `path` (`spec`).
pub fn validate_pod_spec(
    spec: &PodSpec,
    path: &str,
    gates: &FeatureGates,
    errs: &mut Vec<FieldError>,
) {
    if spec.containers.is_empty() {
        required(errs, format!("{path}.containers"), "");
    }
    let volumes = validate_volumes(spec, path, errs);
    let empty = Vec::new();
    for (kind, list) in [
        ("containers", &spec.containers),
        (
            "initContainers",
            spec.init_containers.as_ref().unwrap_or(&empty),
        ),
    ] {
        let mut names = BTreeSet::new();
        for (i, c) in list.iter().enumerate() {
            let at = format!("{path}.{kind}[{i}]");
            if c.name.is_empty() {
                required(errs, format!("{at}.name"), "");
            } else if !names.insert(c.name.clone()) {
                errs.push(FieldError {
                    path: format!("{at}.name"),
                    message: format!("Duplicate value: {:?}", c.name),
                });
            }
            if c.image.as_deref().unwrap_or("").is_empty() {
                required(errs, format!("{at}.image"), "");
            }
            validate_container_refs(c, &at, &volumes, errs);
        }
    }
    for (i, t) in spec.tolerations.iter().flatten().enumerate() {
        validate_toleration(t, &format!("{path}.tolerations[{i}]"), gates, errs);
    }
    let mut gate_names = BTreeSet::new();
    for (i, g) in spec.scheduling_gates.iter().flatten().enumerate() {
        if !gate_names.insert(g.name.clone()) {
            errs.push(FieldError {
                path: format!("{path}.schedulingGates[{i}]"),
                message: format!("Duplicate value: {:?}", g.name),
            });
        }
    }
    validate_topology_spread_constraints(spec, path, errs);
    let node_affinity = spec
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref());
    if let Some(required_terms) = node_affinity.and_then(|na| {
        na.required_during_scheduling_ignored_during_execution
            .as_ref()
    }) {
        validate_node_selector(
            required_terms,
            &format!("{path}.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"),
            errs,
        );
    }
    for (i, term) in node_affinity
        .and_then(|na| {
            na.preferred_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .into_iter()
        .flatten()
        .enumerate()
    {
        let p = format!(
            "{path}.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
        );
        if !(1..=100).contains(&term.weight) {
            invalid(
                errs,
                format!("{p}.weight"),
                &term.weight.to_string(),
                "must be in the range 1-100",
            );
        }
        validate_selector_term(&term.preference, &format!("{p}.preference"), errs);
    }
}

/// `validateTopologySpreadConstraints` (`pkg/apis/core/validation/validation.go`).
fn validate_topology_spread_constraints(spec: &PodSpec, path: &str, errs: &mut Vec<FieldError>) {
    let constraints = spec.topology_spread_constraints.as_deref().unwrap_or(&[]);
    let positive = |errs: &mut Vec<FieldError>, path: String, v: i32| {
        if v <= 0 {
            errs.push(FieldError {
                path,
                message: format!("Invalid value: {v}: must be greater than zero"),
            });
        }
    };
    for (i, c) in constraints.iter().enumerate() {
        let at = format!("{path}.topologySpreadConstraints[{i}]");
        positive(errs, format!("{at}.maxSkew"), c.max_skew);
        if c.topology_key.is_empty() {
            required(errs, format!("{at}.topologyKey"), "can not be empty");
        }
        let when = c.when_unsatisfiable.as_str();
        if !matches!(when, "DoNotSchedule" | "ScheduleAnyway") {
            not_supported(
                errs,
                format!("{at}.whenUnsatisfiable"),
                when,
                &["DoNotSchedule", "ScheduleAnyway"],
            );
        }
        if let Some(min) = c.min_domains {
            if when != "DoNotSchedule" {
                errs.push(FieldError {
                    path: format!("{at}.minDomains"),
                    message: format!(
                        "Invalid value: {min}: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when}"
                    ),
                });
            } else {
                positive(errs, format!("{at}.minDomains"), min);
            }
        }
        let repeated = constraints[i + 1..].iter().any(|r| {
            r.topology_key == c.topology_key && r.when_unsatisfiable == c.when_unsatisfiable
        });
        if repeated {
            errs.push(FieldError {
                path: format!("{at}.{{topologyKey, whenUnsatisfiable}}"),
                message: format!("Duplicate value: \"{{{}, {}}}\"", c.topology_key, when),
            });
        }
        for (field, policy) in [
            ("nodeAffinityPolicy", &c.node_affinity_policy),
            ("nodeTaintsPolicy", &c.node_taints_policy),
        ] {
            if let Some(p) = policy.as_deref()
                && !matches!(p, "Honor" | "Ignore")
            {
                not_supported(errs, format!("{at}.{field}"), p, &["Honor", "Ignore"]);
            }
        }
    }
}

/// `ValidateVolumes`: unique names, exactly one volume source each. Returns the names.
fn validate_volumes(spec: &PodSpec, path: &str, errs: &mut Vec<FieldError>) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (i, v) in spec.volumes.iter().flatten().enumerate() {
        let at = format!("{path}.volumes[{i}]");
        if !names.insert(v.name.clone()) {
            errs.push(FieldError {
                path: format!("{at}.name"),
                message: format!("Duplicate value: {:?}", v.name),
            });
        }
        let json = serde_json::to_value(v).unwrap_or_default();
        let sources: Vec<&String> = json
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
            .filter(|k| *k != "name")
            .collect();
        match sources.as_slice() {
            [] => required(errs, at, "must specify a volume type"),
            [_] => {}
            [_, second, ..] => errs.push(FieldError {
                path: format!("{at}.{second}"),
                message: "Forbidden: may not specify more than 1 volume type".into(),
            }),
        }
    }
    names
}

/// Volume mounts name existing volumes at unique paths; an env var has a value or a source.
fn validate_container_refs(
    c: &k8s_openapi::api::core::v1::Container,
    at: &str,
    volumes: &BTreeSet<String>,
    errs: &mut Vec<FieldError>,
) {
    let mut paths = BTreeSet::new();
    for (j, m) in c.volume_mounts.iter().flatten().enumerate() {
        if !volumes.contains(&m.name) {
            errs.push(FieldError {
                path: format!("{at}.volumeMounts[{j}].name"),
                message: format!("Not found: {:?}", m.name),
            });
        }
        if !paths.insert(m.mount_path.clone()) {
            invalid(
                errs,
                format!("{at}.volumeMounts[{j}].mountPath"),
                &m.mount_path,
                "must be unique",
            );
        }
    }
    for (j, e) in c.env.iter().flatten().enumerate() {
        if e.value.as_deref().is_some_and(|v| !v.is_empty()) && e.value_from.is_some() {
            invalid(
                errs,
                format!("{at}.env[{j}].valueFrom"),
                "",
                "may not be specified when `value` is not empty",
            );
        }
    }
}

/// `ValidateTolerations`.
fn validate_toleration(
    t: &Toleration,
    path: &str,
    gates: &FeatureGates,
    errs: &mut Vec<FieldError>,
) {
    let key = t.key.as_deref().unwrap_or("");
    let operator = t.operator.as_deref().unwrap_or("");
    let value = t.value.as_deref().unwrap_or("");
    let effect = t.effect.as_deref().unwrap_or("");
    if key.is_empty() && operator != "Exists" {
        invalid(
            errs,
            format!("{path}.operator"),
            operator,
            "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
        );
    }
    if t.toleration_seconds.is_some() && effect != "NoExecute" {
        invalid(
            errs,
            format!("{path}.effect"),
            effect,
            "effect must be 'NoExecute' when `tolerationSeconds` is set",
        );
    }
    match operator {
        "" | "Equal" => {}
        "Exists" => {
            if !value.is_empty() {
                invalid(
                    errs,
                    format!("{path}.operator"),
                    value,
                    "value must be empty when `operator` is 'Exists'",
                );
            }
        }
        "Lt" | "Gt" if gates.taint_toleration_comparison_operators => {
            if value.parse::<i64>().is_err() {
                invalid(
                    errs,
                    format!("{path}.value"),
                    value,
                    "value must be a valid integer when `operator` is 'Lt' or 'Gt'",
                );
            }
        }
        _ => {
            let supported: &[&str] = if gates.taint_toleration_comparison_operators {
                &["Equal", "Exists", "Gt", "Lt"]
            } else {
                &["Equal", "Exists"]
            };
            not_supported(errs, format!("{path}.operator"), operator, supported);
        }
    }
    if !effect.is_empty() && !TAINT_EFFECTS.contains(&effect) {
        not_supported(errs, format!("{path}.effect"), effect, TAINT_EFFECTS);
    }
}

/// `ValidateNodeSelector`: at least one term, every requirement well-formed.
pub fn validate_node_selector(selector: &NodeSelector, path: &str, errs: &mut Vec<FieldError>) {
    if selector.node_selector_terms.is_empty() {
        required(
            errs,
            format!("{path}.nodeSelectorTerms"),
            "must have at least one node selector term",
        );
    }
    for (i, term) in selector.node_selector_terms.iter().enumerate() {
        validate_selector_term(term, &format!("{path}.nodeSelectorTerms[{i}]"), errs);
    }
}

fn validate_selector_term(
    term: &k8s_openapi::api::core::v1::NodeSelectorTerm,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    for (j, r) in term.match_expressions.iter().flatten().enumerate() {
        validate_requirement(r, &format!("{path}.matchExpressions[{j}]"), errs);
    }
    for (j, r) in term.match_fields.iter().flatten().enumerate() {
        validate_field_requirement(r, &format!("{path}.matchFields[{j}]"), errs);
    }
}

/// `ValidateNodeSelectorRequirement` (`pkg/apis/core/validation/validation.go`): `Gt`/`Lt` need
/// exactly one value, and nothing more — a bound that is not an integer is accepted by the API
/// server and only fails when the scheduler parses the term (see
/// `node_affinity::unparsable_term_warnings`), so it is a warning, not an error.
fn validate_requirement(r: &NodeSelectorRequirement, path: &str, errs: &mut Vec<FieldError>) {
    let values = r.values.as_deref().unwrap_or(&[]);
    match r.operator.as_str() {
        "In" | "NotIn" => {
            if values.is_empty() {
                required(
                    errs,
                    format!("{path}.values"),
                    "must be specified when `operator` is 'In' or 'NotIn'",
                );
            }
        }
        "Exists" | "DoesNotExist" => {
            if !values.is_empty() {
                errs.push(FieldError {
                    path: format!("{path}.values"),
                    message: "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'".into(),
                });
            }
        }
        "Gt" | "Lt" => {
            if values.len() != 1 {
                required(
                    errs,
                    format!("{path}.values"),
                    "must be specified single value when `operator` is 'Lt' or 'Gt'",
                );
            }
        }
        op => invalid(
            errs,
            format!("{path}.operator"),
            op,
            "not a valid selector operator",
        ),
    }
    if r.key.is_empty() {
        invalid(
            errs,
            format!("{path}.key"),
            "",
            "name part must be non-empty",
        );
    }
}

/// `ValidateNodeFieldSelectorRequirement`: only `metadata.name`, `In`/`NotIn`, one value.
fn validate_field_requirement(r: &NodeSelectorRequirement, path: &str, errs: &mut Vec<FieldError>) {
    match r.operator.as_str() {
        "In" | "NotIn" => {
            if r.values.as_ref().is_none_or(|v| v.len() != 1) {
                required(
                    errs,
                    format!("{path}.values"),
                    "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
                );
            }
        }
        op => invalid(
            errs,
            format!("{path}.operator"),
            op,
            "not a valid selector operator",
        ),
    }
    if r.key != "metadata.name" {
        invalid(
            errs,
            format!("{path}.key"),
            &r.key,
            "not a valid field selector key",
        );
    }
}
