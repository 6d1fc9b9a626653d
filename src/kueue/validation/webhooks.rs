//! Kueue's validating webhooks on create, as installed by default (kubernetes-sigs/kueue
//! `pkg/webhooks/`): `clusterqueue_webhook.go` `ValidateClusterQueue`, `cohort_webhook.go`
//! `validateCohort`, `resourceflavor_webhook.go` `ValidateResourceFlavor`, and
//! `workload_webhook.go` `ValidateWorkload` (the rules a Workload's spec and status can break),
//! with the feature gates at their defaults (ConcurrentAdmission off: its policy is not checked;
//! WorkloadValidateResourcesAreNonNegative and WorkloadValidationForPodSetMetadata on). The
//! webhook sees the object after the CRD accepted it, converted to v1beta2. Rules the CRD's
//! own rules always catch first (preemption, fungibility preference) are not repeated.
//! Map keys are walked in sorted order where Go ranges over a map.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::Value;

use crate::model::crd::items;
use crate::model::quantity::Quantity;
use crate::model::validate::meta::{self, Pairs};
use crate::model::validate::selector::{label_name, label_selector};
use crate::model::validate::{FieldError, invalid};

/// `apimachineryvalidation.IsNegativeErrorMsg`.
const NEGATIVE: &str = "must be greater than or equal to 0";

/// `ValidateClusterQueue` (`validateClusterQueueSpec` and `validateAdmissionCheckOnFlavors`).
pub fn cluster_queue(spec: &Value, has_cohort: bool) -> Vec<FieldError> {
    let mut errs = Vec::new();
    resource_groups(spec, has_cohort, true, false, &mut errs);
    if let Some(selector) = spec.get("namespaceSelector")
        && let Ok(s) = serde_json::from_value::<LabelSelector>(selector.clone())
    {
        label_selector(Some(&s), false, "spec.namespaceSelector", &mut errs);
    }
    fair_sharing(spec, &mut errs);
    let groups = items(spec, "resourceGroups");
    let total_flavors: usize = groups.iter().map(|g| items(g, "flavors").len()).sum();
    if total_flavors > 256 {
        errs.push(FieldError::new(
            "spec.resourceGroups",
            format!("Invalid value: {total_flavors}: total number of flavors across all resourceGroups must be ≤ 256, got {total_flavors}"),
        ));
    }
    let total_covered: usize = groups
        .iter()
        .map(|g| items(g, "coveredResources").len())
        .sum();
    if total_covered > 256 {
        errs.push(FieldError::new(
            "spec.resourceGroups",
            format!("Invalid value: {total_covered}: total number of covered resources across all resourceGroups must be ≤ 256, got {total_covered}"),
        ));
    }
    for (i, g) in groups.iter().enumerate() {
        let total: usize = (items(g, "flavors").iter())
            .map(|f| items(f, "resources").len())
            .sum();
        if total > 512 {
            errs.push(FieldError::new(
                &format!("spec.resourceGroups[{i}]"),
                format!("Invalid value: {total}: number of flavor-resource combinations in a resourceGroup must be ≤ 512, got {total}"),
            ));
        }
    }
    // validateAdmissionCheckOnFlavors: each onFlavors entry must be a flavor of the queue
    // (the supported values listed sorted; Go lists its set unordered).
    let flavors: BTreeSet<&str> = (groups.iter())
        .flat_map(|g| items(g, "flavors"))
        .filter_map(|f| f.get("name").and_then(Value::as_str))
        .collect();
    let checks = spec.pointer("/admissionChecksStrategy/admissionChecks");
    for (i, check) in checks
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        for (j, f) in items(check, "onFlavors").iter().enumerate() {
            let f = f.as_str().unwrap_or("");
            if !flavors.contains(f) {
                let supported: Vec<String> = flavors.iter().map(|f| format!("{f:?}")).collect();
                let mut message = format!("Unsupported value: {f:?}");
                if !supported.is_empty() {
                    message += &format!(": supported values: {}", supported.join(", "));
                }
                errs.push(FieldError::new(
                    &format!("spec.admissionChecksStrategy.admissionChecks[{i}].onFlavors[{j}]"),
                    message,
                ));
            }
        }
    }
    errs
}

/// `validateCohort`: fair sharing and resource groups; limits need a parent, and a lending
/// limit may exceed the nominal quota.
pub fn cohort(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    fair_sharing(spec, &mut errs);
    let has_parent = spec
        .get("parentName")
        .and_then(Value::as_str)
        .is_some_and(|p| !p.is_empty());
    resource_groups(spec, has_parent, false, true, &mut errs);
    errs
}

/// `ValidateResourceFlavor`: node labels, taint keys, values and uniqueness, toleration keys.
pub fn resource_flavor(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let labels: BTreeMap<String, String> = spec
        .get("nodeLabels")
        .and_then(|l| serde_json::from_value(l.clone()).ok())
        .unwrap_or_default();
    meta::labels(Pairs::Typed(Some(&labels)), "spec.nodeLabels", &mut errs);
    let mut seen: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for (i, t) in items(spec, "nodeTaints").iter().enumerate() {
        let at = format!("spec.nodeTaints[{i}]");
        let key = t.get("key").and_then(Value::as_str).unwrap_or("");
        let value = t.get("value").and_then(Value::as_str).unwrap_or("");
        let effect = t.get("effect").and_then(Value::as_str).unwrap_or("");
        label_name(key, &format!("{at}.key"), &mut errs);
        let value_errs = crate::model::labels::label_value_errors(value);
        if !value_errs.is_empty() {
            invalid(
                &mut errs,
                format!("{at}.value"),
                value,
                &value_errs.join(";"),
            );
        }
        let keys = seen.entry(effect).or_default();
        if !keys.insert(key) {
            errs.push(FieldError::new(
                &at,
                format!(
                    "Duplicate value: {}: taints must be unique by key and effect pair",
                    taint_json(key, value, effect)
                ),
            ));
        }
    }
    tolerations(items(spec, "tolerations"), "spec.tolerations", &mut errs);
    errs
}

/// A `corev1.Taint` as the error prints it: JSON in field order, empty fields left out.
fn taint_json(key: &str, value: &str, effect: &str) -> String {
    let mut m = serde_json::Map::new();
    for (k, v) in [("key", key), ("value", value), ("effect", effect)] {
        if !v.is_empty() {
            m.insert(k.into(), Value::String(v.into()));
        }
    }
    Value::Object(m).to_string()
}

/// `validateTolerations` (Kueue's extract): a non-empty key must be a label name.
fn tolerations(list: &[Value], at: &str, errs: &mut Vec<FieldError>) {
    for (i, t) in list.iter().enumerate() {
        if let Some(key) = t
            .get("key")
            .and_then(Value::as_str)
            .filter(|k| !k.is_empty())
        {
            label_name(key, &format!("{at}[{i}].key"), errs);
        }
    }
}

/// `ValidateWorkload` on create: pod set resources (no `pods` key, nothing negative), label and
/// annotation syntax of the pod set templates, at most one `minCount`, and the admission a
/// quota reservation needs.
pub fn workload(doc: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let spec = doc.get("spec").unwrap_or(&Value::Null);
    let mut with_min = 0;
    for (i, ps) in items(spec, "podSets").iter().enumerate() {
        let at = format!("spec.podSets[{i}]");
        let template = ps.get("template").unwrap_or(&Value::Null);
        let pairs = |field: &str| {
            Pairs::Json(
                template
                    .pointer(&format!("/metadata/{field}"))
                    .and_then(Value::as_object),
            )
        };
        let at_meta = |field: &str| format!("{at}.template.metadata.{field}");
        meta::labels(pairs("labels"), &at_meta("labels"), &mut errs);
        meta::annotations(pairs("annotations"), &at_meta("annotations"), &mut errs);
        for kind in ["initContainers", "containers"] {
            let list = template.pointer(&format!("/spec/{kind}"));
            for (c, container) in list
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let at = format!("{at}.template.spec.{kind}[{c}].resources");
                resource_list(
                    container.pointer("/resources/requests"),
                    &format!("{at}.requests"),
                    &mut errs,
                );
                resource_list(
                    container.pointer("/resources/limits"),
                    &format!("{at}.limits"),
                    &mut errs,
                );
            }
        }
        if let Some(res) = template.pointer("/spec/resources") {
            let at = format!("{at}.template.spec.resources");
            resource_list(res.get("requests"), &format!("{at}.requests"), &mut errs);
            resource_list(res.get("limits"), &format!("{at}.limits"), &mut errs);
        }
        with_min += usize::from(ps.get("minCount").is_some_and(|m| !m.is_null()));
    }
    if with_min > 1 {
        errs.push(FieldError::new(
            "spec.podSets",
            format!("Invalid value: {with_min}: at most one podSet can use minCount"),
        ));
    }
    let status = doc.get("status").unwrap_or(&Value::Null);
    let reserved = items(status, "conditions").iter().any(|c| {
        c.get("type").and_then(Value::as_str) == Some("QuotaReserved")
            && c.get("status").and_then(Value::as_str) == Some("True")
    });
    if reserved {
        match status.get("admission") {
            None | Some(Value::Null) => errs.push(FieldError::new(
                "status.admission",
                "Required value: must be set while the QuotaReserved condition is true".into(),
            )),
            Some(admission) => {
                let names: BTreeSet<&str> = (items(spec, "podSets").iter())
                    .map(|ps| ps.get("name").and_then(Value::as_str).unwrap_or("main"))
                    .collect();
                for (i, psa) in items(admission, "podSetAssignments").iter().enumerate() {
                    let at = format!("status.admission.podSetAssignments[{i}]");
                    let name = psa.get("name").and_then(Value::as_str).unwrap_or("main");
                    if !names.contains(name) {
                        errs.push(FieldError::new(
                            &format!("{at}.name"),
                            format!("Not found: {name:?}"),
                        ));
                    }
                    // Each resource's usage is per pod: a multiple of the count (Kueue prints
                    // the count's pointer, `%d` of a `*int32`; schedsim prints the count).
                    let count = psa.get("count").and_then(Value::as_i64).unwrap_or(0);
                    let usage = psa.get("resourceUsage").and_then(Value::as_object);
                    for (resource, q) in usage.into_iter().flatten().filter(|_| count > 0) {
                        let Some(v) = quantity(Some(q)) else { continue };
                        // `resources.ResourceValue`: cpu in millicores, others as values.
                        let amount = match resource.as_str() {
                            "cpu" => v.milli_value(),
                            _ => v.value(),
                        };
                        if amount % count != 0 {
                            invalid(
                                &mut errs,
                                format!("{at}.resourceUsage[{resource}]"),
                                &v.canonical(),
                                &format!("is not a multiple of {count}"),
                            );
                        }
                    }
                }
            }
        }
    }
    // validateReclaimablePods: each names a pod set and reclaims at most its count.
    let counts: Vec<(&str, i64)> = (items(spec, "podSets").iter())
        .map(|ps| {
            let name = ps.get("name").and_then(Value::as_str).unwrap_or("main");
            (name, ps.get("count").and_then(Value::as_i64).unwrap_or(1))
        })
        .collect();
    for rp in items(status, "reclaimablePods") {
        let name = rp.get("name").and_then(Value::as_str).unwrap_or("");
        let count = rp.get("count").and_then(Value::as_i64).unwrap_or(0);
        let at = format!("status.reclaimablePods[{name}]");
        match counts.iter().find(|(n, _)| *n == name) {
            None => {
                let known: Vec<String> = counts.iter().map(|(n, _)| format!("{n:?}")).collect();
                errs.push(FieldError::new(
                    &format!("{at}.name"),
                    format!(
                        "Unsupported value: {name:?}: supported values: {}",
                        known.join(", ")
                    ),
                ));
            }
            Some(&(_, size)) if count > size => errs.push(FieldError::new(
                &format!("{at}.count"),
                format!("Invalid value: {count}: should be less or equal to {size}"),
            )),
            Some(_) => {}
        }
    }
    errs
}

/// `validateResourceList`: the `pods` key is Kueue's, and no quantity may be negative.
fn resource_list(list: Option<&Value>, at: &str, errs: &mut Vec<FieldError>) {
    let Some(map) = list.and_then(Value::as_object) else {
        return;
    };
    for (name, q) in map {
        let path = format!("{at}[{name}]");
        if name == "pods" {
            invalid(
                errs,
                path.clone(),
                "pods",
                "the key is reserved for internal kueue use",
            );
        }
        if let Some(q) = quantity(Some(q))
            && q.is_negative()
        {
            invalid(errs, path, &q.canonical(), NEGATIVE);
        }
    }
}

/// `validateResourceGroups`: resource names, resources and flavors each in one group only,
/// and each flavor's quotas (`validateFlavorQuotas`).
fn resource_groups(
    spec: &Value,
    has_parent: bool,
    nominal_bounds_lending: bool,
    is_cohort: bool,
    errs: &mut Vec<FieldError>,
) {
    let mut seen_resources: BTreeSet<&str> = BTreeSet::new();
    let mut seen_flavors: BTreeSet<&str> = BTreeSet::new();
    for (i, g) in items(spec, "resourceGroups").iter().enumerate() {
        let at = format!("spec.resourceGroups[{i}]");
        let covered: Vec<&str> = (items(g, "coveredResources").iter())
            .map(|r| r.as_str().unwrap_or(""))
            .collect();
        for (j, name) in covered.iter().enumerate() {
            let path = format!("{at}.coveredResources[{j}]");
            label_name(name, &path, errs);
            if !seen_resources.insert(name) {
                errs.push(FieldError::new(&path, format!("Duplicate value: {name:?}")));
            }
        }
        for (j, f) in items(g, "flavors").iter().enumerate() {
            let at = format!("{at}.flavors[{j}]");
            flavor_quotas(
                f,
                &covered,
                has_parent,
                nominal_bounds_lending,
                is_cohort,
                &at,
                errs,
            );
            let name = f.get("name").and_then(Value::as_str).unwrap_or("");
            if !seen_flavors.insert(name) {
                errs.push(FieldError::new(
                    &format!("{at}.name"),
                    format!("Duplicate value: {name:?}"),
                ));
            }
        }
    }
}

fn flavor_quotas(
    flavor: &Value,
    covered: &[&str],
    has_parent: bool,
    nominal_bounds_lending: bool,
    is_cohort: bool,
    at: &str,
    errs: &mut Vec<FieldError>,
) {
    let limit_needs = if is_cohort { "parent" } else { "cohort" };
    for (k, rq) in items(flavor, "resources")
        .iter()
        .enumerate()
        .take(covered.len())
    {
        let at = format!("{at}.resources[{k}]");
        let name = rq.get("name").and_then(Value::as_str).unwrap_or("");
        if name != covered[k] {
            invalid(
                errs,
                format!("{at}.name"),
                name,
                "must match the name in coveredResources",
            );
        }
        let nominal = quantity(rq.get("nominalQuota"));
        negative(nominal.as_ref(), &format!("{at}.nominalQuota"), errs);
        if let Some(limit) = quantity(rq.get("borrowingLimit")) {
            let path = format!("{at}.borrowingLimit");
            if !has_parent {
                let detail = format!("must be nil when {limit_needs} is empty");
                invalid(errs, path.clone(), &limit.canonical(), &detail);
            }
            negative(Some(&limit), &path, errs);
        }
        if let Some(lend) = quantity(rq.get("lendingLimit")) {
            let path = format!("{at}.lendingLimit");
            negative(Some(&lend), &path, errs);
            if !has_parent {
                let detail = format!("must be nil when {limit_needs} is empty");
                invalid(errs, path.clone(), &lend.canonical(), &detail);
            }
            if nominal_bounds_lending && nominal.as_ref().is_some_and(|n| lend.cmp_value(n).is_gt())
            {
                invalid(
                    errs,
                    path,
                    &lend.canonical(),
                    "must be less than or equal to the nominalQuota",
                );
            }
        }
    }
}

/// `validateFairSharing`: a weight is not negative, and not so small it rounds to zero.
fn fair_sharing(spec: &Value, errs: &mut Vec<FieldError>) {
    let Some(w) = quantity(spec.pointer("/fairSharing/weight")) else {
        return;
    };
    let nano: Quantity = "1n".parse().expect("1n is a quantity");
    if w.is_negative() {
        invalid(errs, "spec.fairSharing".into(), &w.canonical(), NEGATIVE);
    }
    if !w.is_negative() && !w.is_zero() && w.cmp_value(&nano).is_le() {
        invalid(
            errs,
            "spec.fairSharing".into(),
            &w.canonical(),
            "When not 0, weight must be > 10e-9",
        );
    }
}

fn negative(q: Option<&Quantity>, path: &str, errs: &mut Vec<FieldError>) {
    if let Some(q) = q.filter(|q| q.is_negative()) {
        invalid(errs, path.to_string(), &q.canonical(), NEGATIVE);
    }
}

/// A quantity the CRD already accepted (a string or a number).
fn quantity(v: Option<&Value>) -> Option<Quantity> {
    match v? {
        Value::String(s) => s.parse().ok(),
        Value::Number(n) => n.to_string().parse().ok(),
        _ => None,
    }
}
