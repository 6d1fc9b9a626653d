//! The API server's validation of the pod fields schedsim reads
//! (`kubernetes/kubernetes:pkg/apis/core/validation/validation.go`), with its messages.
//!
//! A pod the API server would reject never reaches the scheduler in a real cluster, so
//! schedsim rejects it at load instead of simulating something that cannot exist.
//!
//! Object metadata, for every kind, is [`meta`]'s ([`object_meta`] is the entry point);
//! label selectors, affinity terms and node selectors are [`selector`]'s; int-or-percent
//! fields [`intstr`]'s.

pub mod intstr;
pub mod meta;
pub mod selector;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use k8s_openapi::api::core::v1::{PodSpec, Toleration};

use crate::features::FeatureGates;
pub use meta::{object_meta, template_meta};
pub use selector::validate_node_selector;

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

/// `field.Invalid` of a string value, quoted as Go's `%q` quotes it.
pub(crate) fn invalid(errs: &mut Vec<FieldError>, path: String, value: &str, detail: &str) {
    errs.push(FieldError {
        path,
        message: format!("Invalid value: {}: {detail}", quote(value)),
    });
}

/// Go's `strconv.Quote` (`%q`), as the API server quotes a value in its messages: printable
/// characters as they are (`unicode.IsPrint`: letters, marks, numbers, punctuation, symbols
/// and the ASCII space), `\"` and `\\`, `\a \b \f \n \r \t \v`, other control characters
/// as `\xNN`, other non-printable characters (format characters such as bidi controls and
/// zero-width spaces, separators, unassigned code points) as `\uNNNN` or `\UNNNNNNNN`.
pub fn quote(s: &str) -> String {
    static NON_PRINTABLE: LazyLock<regex::Regex> =
        LazyLock::new(|| regex::Regex::new(r"^[\p{C}\p{Z}]$").expect("a valid class"));
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    let mut buf = [0u8; 4];
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            ' '..='~' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if !c.is_ascii() && !NON_PRINTABLE.is_match(c.encode_utf8(&mut buf)) => out.push(c),
            c if (c as u32) < 0x10000 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

pub(crate) fn required(errs: &mut Vec<FieldError>, path: String, detail: &str) {
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
    for m in super::labels::dns1123_subdomain_errors(host, super::labels::LenUnit::Characters) {
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
/// `labels` are the pod's own: the API server merges `matchLabelKeys` with them before it
/// validates the selectors (see [`selector`]).
pub fn validate_pod_spec(
    spec: &PodSpec,
    labels: &BTreeMap<String, String>,
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
    validate_topology_spread_constraints(spec, labels, path, errs);
    meta::labels(
        meta::Pairs::Typed(spec.node_selector.as_ref()),
        &format!("{path}.nodeSelector"),
        errs,
    );
    if let Some(affinity) = &spec.affinity {
        selector::pod_affinity(affinity, labels, &format!("{path}.affinity"), errs);
    }
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
            errs.push(FieldError {
                path: format!("{p}.weight"),
                message: format!("Invalid value: {}: must be in the range 1-100", term.weight),
            });
        }
        // "we always allow invalid label-value for preferred affinity".
        selector::node_selector_term(&term.preference, true, &format!("{p}.preference"), errs);
    }
}

/// `validateTopologySpreadConstraints` (`pkg/apis/core/validation/validation.go`).
fn validate_topology_spread_constraints(
    spec: &PodSpec,
    labels: &BTreeMap<String, String>,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
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
        selector::spread_selector(c, labels, &at, errs);
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
