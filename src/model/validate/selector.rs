//! Selectors as the API server validates them in a pod it creates: label selectors
//! (`ValidateLabelSelector`, `k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go`),
//! pod affinity and anti-affinity terms (`validatePodAffinityTerm`,
//! `validateMatchLabelKeysAndMismatchLabelKeys`), topology spread selectors and node
//! selectors (`ValidateNodeSelector`, `validateNodeAffinity`), from
//! `kubernetes/kubernetes:pkg/apis/core/validation/validation.go`.
//!
//! A new pod is validated with `PodValidationOptions` all false: no invalid label value is
//! allowed in a pod-affinity, topology-spread or required node-affinity selector (preferred
//! node-affinity terms always allow them). Before validating, the API server merges
//! `matchLabelKeys` (`In`) and `mismatchLabelKeys` (`NotIn`) into the selectors of pod
//! affinity terms and (`MatchLabelKeysInPodTopologySpreadSelectorMerge`, on since 1.34) of
//! topology spread constraints, for the keys the pod has as labels
//! (`pkg/registry/core/pod/strategy.go`, `mutatePodAffinity`,
//! `mutateTopologySpreadConstraints`): a key both there and in the selector is then named
//! twice. kube-scheduler builds the same requirements (`newAffinityTerm`), so schedsim's
//! plugins keep reading the pod as written.
//!
//! Every selector value the API server accepts parses in kube-scheduler, so InterPodAffinity's
//! PreScore error on an invalid value (upstream's scoring test "invalid Affinity fails
//! PreScore") cannot happen to a pod that exists: it is refused here instead.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{
    Affinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, PodAffinityTerm,
    TopologySpreadConstraint, WeightedPodAffinityTerm,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

use super::meta::{Pairs, labels};
use super::{FieldError, invalid, required};
use crate::model::labels::{
    LenUnit, dns1123_label_errors, dns1123_subdomain_errors, label_value_errors,
    qualified_name_errors,
};

fn forbidden(errs: &mut Vec<FieldError>, path: String, detail: &str) {
    errs.push(FieldError {
        path,
        message: format!("Forbidden: {detail}"),
    });
}

/// `ValidateLabelName`: a qualified name.
pub fn label_name(key: &str, path: &str, errs: &mut Vec<FieldError>) {
    for m in qualified_name_errors(key) {
        invalid(errs, path.to_string(), key, &m);
    }
}

/// `ValidateLabelSelector` with `AllowInvalidLabelValueInSelector` as given.
pub fn label_selector(
    selector: Option<&LabelSelector>,
    allow_invalid_values: bool,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let Some(s) = selector else { return };
    labels(
        Pairs::Typed(s.match_labels.as_ref()),
        &format!("{path}.matchLabels"),
        errs,
    );
    for (i, r) in s.match_expressions.iter().flatten().enumerate() {
        let at = format!("{path}.matchExpressions[{i}]");
        label_selector_requirement(r, allow_invalid_values, &at, errs);
    }
}

/// `ValidateLabelSelectorRequirement` (`AllowUnknownOperatorInRequirement` false).
fn label_selector_requirement(
    r: &LabelSelectorRequirement,
    allow_invalid_values: bool,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let values = r.values.as_deref().unwrap_or(&[]);
    requirement(&r.operator, &r.key, values, false, path, errs);
    if !allow_invalid_values {
        label_values(values, &format!("{path}.values"), errs);
    }
}

/// The rules a label selector's and a node selector's requirements share: the values each
/// operator takes (`Gt`/`Lt` only in node selectors: `gt_lt`), and a key that is a label name.
fn requirement(
    operator: &str,
    key: &str,
    values: &[String],
    gt_lt: bool,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    match operator {
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
                forbidden(
                    errs,
                    format!("{path}.values"),
                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                );
            }
        }
        "Gt" | "Lt" if gt_lt => {
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
    label_name(key, &format!("{path}.key"), errs);
}

/// Each value a label value (`IsValidLabelValue`), errors at `values[i]`.
fn label_values(values: &[String], path: &str, errs: &mut Vec<FieldError>) {
    for (i, v) in values.iter().enumerate() {
        for m in label_value_errors(v) {
            invalid(errs, format!("{path}[{i}]"), v, &m);
        }
    }
}

/// `selector` with a requirement `key <op> (value)` added for each key the pod has as a
/// label (`applyLabelKeysToLabelSelector`).
fn merged(
    selector: Option<&LabelSelector>,
    keys: &[(&[String], &str)],
    pod_labels: &BTreeMap<String, String>,
) -> Option<LabelSelector> {
    let mut s = selector?.clone();
    for (keys, op) in keys {
        for key in keys.iter() {
            if let Some(v) = pod_labels.get(key) {
                s.match_expressions
                    .get_or_insert_with(Vec::new)
                    .push(LabelSelectorRequirement {
                        key: key.clone(),
                        operator: op.to_string(),
                        values: Some(vec![v.clone()]),
                    });
            }
        }
    }
    Some(s)
}

/// `validateMatchLabelKeysAndMismatchLabelKeys`, on the merged selector.
fn match_label_keys(
    path: &str,
    match_keys: &[String],
    mismatch_keys: &[String],
    selector: Option<&LabelSelector>,
    errs: &mut Vec<FieldError>,
) {
    for (field, keys) in [
        ("matchLabelKeys", match_keys),
        ("mismatchLabelKeys", mismatch_keys),
    ] {
        // `validateLabelKeys`.
        if keys.is_empty() {
            continue;
        }
        if selector.is_none() {
            forbidden(
                errs,
                format!("{path}.{field}"),
                "must not be specified when labelSelector is not set",
            );
            continue;
        }
        for (i, key) in keys.iter().enumerate() {
            label_name(key, &format!("{path}.{field}[{i}]"), errs);
        }
    }
    if let Some(s) = selector {
        let index: BTreeMap<&str, usize> = (match_keys.iter().enumerate())
            .map(|(i, k)| (k.as_str(), i))
            .collect();
        let mut seen: BTreeSet<&str> = s
            .match_labels
            .iter()
            .flatten()
            .map(|(k, _)| k.as_str())
            .collect();
        for r in s.match_expressions.iter().flatten() {
            if let Some(i) = index.get(r.key.as_str())
                && seen.contains(r.key.as_str())
            {
                // Upstream's path: the term's, indexed.
                invalid(
                    errs,
                    format!("{path}[{i}]"),
                    &r.key,
                    "exists in both matchLabelKeys and labelSelector",
                );
            }
            seen.insert(&r.key);
        }
    }
    for (i, k) in match_keys.iter().enumerate() {
        if mismatch_keys.contains(k) {
            invalid(
                errs,
                format!("{path}.matchLabelKeys[{i}]"),
                k,
                "exists in both matchLabelKeys and mismatchLabelKeys",
            );
        }
    }
}

/// `validatePodAffinityTerm`.
fn pod_affinity_term(
    t: &PodAffinityTerm,
    pod_labels: &BTreeMap<String, String>,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let match_keys = t.match_label_keys.as_deref().unwrap_or(&[]);
    let mismatch_keys = t.mismatch_label_keys.as_deref().unwrap_or(&[]);
    let keys = [(match_keys, "In"), (mismatch_keys, "NotIn")];
    let selector = merged(t.label_selector.as_ref(), &keys, pod_labels);
    label_selector(
        selector.as_ref(),
        false,
        &format!("{path}.labelSelector"),
        errs,
    );
    label_selector(
        t.namespace_selector.as_ref(),
        false,
        &format!("{path}.namespaceSelector"),
        errs,
    );
    for ns in t.namespaces.iter().flatten() {
        for m in dns1123_label_errors(ns, LenUnit::Characters) {
            // Upstream's path says `namespace`.
            invalid(errs, format!("{path}.namespace"), ns, &m);
        }
    }
    match_label_keys(path, match_keys, mismatch_keys, selector.as_ref(), errs);
    if t.topology_key.is_empty() {
        required(errs, format!("{path}.topologyKey"), "can not be empty");
    }
    label_name(&t.topology_key, &format!("{path}.topologyKey"), errs);
}

/// `validateAffinity`'s pod affinity and anti-affinity, for a pod with these labels.
pub fn pod_affinity(
    affinity: &Affinity,
    pod_labels: &BTreeMap<String, String>,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let sections = [
        (
            "podAffinity",
            affinity.pod_affinity.as_ref().map(|a| {
                (
                    &a.required_during_scheduling_ignored_during_execution,
                    &a.preferred_during_scheduling_ignored_during_execution,
                )
            }),
        ),
        (
            "podAntiAffinity",
            affinity.pod_anti_affinity.as_ref().map(|a| {
                (
                    &a.required_during_scheduling_ignored_during_execution,
                    &a.preferred_during_scheduling_ignored_during_execution,
                )
            }),
        ),
    ];
    for (name, terms) in sections {
        let Some((required_terms, preferred)) = terms else {
            continue;
        };
        let at = format!("{path}.{name}");
        for (i, t) in required_terms.iter().flatten().enumerate() {
            let p = format!("{at}.requiredDuringSchedulingIgnoredDuringExecution[{i}]");
            pod_affinity_term(t, pod_labels, &p, errs);
        }
        for (j, w) in preferred.iter().flatten().enumerate() {
            weighted_term(w, pod_labels, &at, j, errs);
        }
    }
}

/// `validateWeightedPodAffinityTerms`, one term.
fn weighted_term(
    w: &WeightedPodAffinityTerm,
    pod_labels: &BTreeMap<String, String>,
    at: &str,
    j: usize,
    errs: &mut Vec<FieldError>,
) {
    let p = format!("{at}.preferredDuringSchedulingIgnoredDuringExecution[{j}]");
    if !(1..=100).contains(&w.weight) {
        errs.push(FieldError {
            path: format!("{p}.weight"),
            message: format!("Invalid value: {}: must be in the range 1-100", w.weight),
        });
    }
    pod_affinity_term(
        &w.pod_affinity_term,
        pod_labels,
        &format!("{p}.podAffinityTerm"),
        errs,
    );
}

/// A topology spread constraint's `matchLabelKeys` and `labelSelector`, after the merge.
pub fn spread_selector(
    c: &TopologySpreadConstraint,
    pod_labels: &BTreeMap<String, String>,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let keys = c.match_label_keys.as_deref().unwrap_or(&[]);
    let selector = merged(c.label_selector.as_ref(), &[(keys, "In")], pod_labels);
    match_label_keys(path, keys, &[], selector.as_ref(), errs);
    label_selector(
        selector.as_ref(),
        false,
        &format!("{path}.labelSelector"),
        errs,
    );
}

/// `ValidateNodeSelector`: at least one term, every requirement well-formed; values must be
/// label values unless `allow_invalid_values` (`AllowInvalidLabelValueInRequiredNodeAffinity`).
pub fn validate_node_selector(selector: &NodeSelector, path: &str, errs: &mut Vec<FieldError>) {
    if selector.node_selector_terms.is_empty() {
        required(
            errs,
            format!("{path}.nodeSelectorTerms"),
            "must have at least one node selector term",
        );
    }
    for (i, term) in selector.node_selector_terms.iter().enumerate() {
        node_selector_term(term, false, &format!("{path}.nodeSelectorTerms[{i}]"), errs);
    }
}

/// `ValidateNodeSelectorTerm`.
pub(super) fn node_selector_term(
    term: &NodeSelectorTerm,
    allow_invalid_values: bool,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    for (j, r) in term.match_expressions.iter().flatten().enumerate() {
        let at = format!("{path}.matchExpressions[{j}]");
        node_selector_requirement(r, allow_invalid_values, &at, errs);
    }
    for (j, r) in term.match_fields.iter().flatten().enumerate() {
        node_field_requirement(r, &format!("{path}.matchFields[{j}]"), errs);
    }
}

/// `ValidateNodeSelectorRequirement`: `Gt`/`Lt` need exactly one value, and nothing more — a
/// bound that is not an integer is accepted by the API server and only fails when the
/// scheduler parses the term (see `node_affinity::unparsable_term_warnings`), so it is a
/// warning, not an error.
fn node_selector_requirement(
    r: &NodeSelectorRequirement,
    allow_invalid_values: bool,
    path: &str,
    errs: &mut Vec<FieldError>,
) {
    let values = r.values.as_deref().unwrap_or(&[]);
    requirement(&r.operator, &r.key, values, true, path, errs);
    if !allow_invalid_values {
        label_values(values, &format!("{path}.values"), errs);
    }
}

/// `ValidateNodeFieldSelectorRequirement`: only `metadata.name`, `In`/`NotIn`, one value,
/// a node name.
fn node_field_requirement(r: &NodeSelectorRequirement, path: &str, errs: &mut Vec<FieldError>) {
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
    } else {
        for (i, v) in r.values.iter().flatten().enumerate() {
            for m in dns1123_subdomain_errors(v, LenUnit::Characters) {
                invalid(errs, format!("{path}.values[{i}]"), v, &m);
            }
        }
    }
}
