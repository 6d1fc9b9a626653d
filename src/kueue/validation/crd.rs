//! Kueue's CRD schemas as the API server applies them (kubernetes-sigs/kueue
//! `config/components/crd/bases/kueue.x-k8s.io_*.yaml`, generated from the
//! `+kubebuilder:validation` markers and `XValidation` rules of `apis/kueue/v1beta{1,2}/`):
//! the schema constraints and CEL rules of the fields users write, with the CRD's defaults
//! applied first where a rule reads them.

use serde_json::Value;

use crate::model::crd::{CrdCheck, items, join};

/// The version an object is written at: v1beta1 spells the cohort `cohort` and allows the
/// fungibility values `Borrow`/`Preempt`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    V1beta1,
    V1beta2,
}

const STOP_POLICIES: &[&str] = &["None", "Hold", "HoldAndDrain"];
const TAINT_EFFECTS: &str =
    "supported taint effect values: 'NoSchedule', 'PreferNoSchedule', 'NoExecute'";
const EFFECTS: &[&str] = &["NoSchedule", "PreferNoSchedule", "NoExecute"];

/// `ClusterQueueSpec`.
pub fn cluster_queue(spec: &Value, version: Version, c: &mut CrdCheck) {
    let at = "spec";
    let cohort_field = match version {
        Version::V1beta1 => "cohort",
        Version::V1beta2 => "cohortName",
    };
    c.subdomain(spec.get(cohort_field), &join(at, cohort_field));
    resource_groups(spec, at, c);
    if let Some(strategy) = spec.get("admissionChecksStrategy") {
        let at = "spec.admissionChecksStrategy";
        c.required(strategy, "admissionChecks", at);
        let checks = strategy.get("admissionChecks");
        let list_at = join(at, "admissionChecks");
        c.max_items(checks, &list_at, 64);
        c.min_items(checks, &list_at, 1);
        c.unique_keys(checks, &list_at, "name");
        for (i, check) in items(strategy, "admissionChecks").iter().enumerate() {
            let at = format!("{list_at}[{i}]");
            c.required(check, "name", &at);
            c.max_length(check.get("name"), &join(&at, "name"), 316);
            c.min_length(check.get("name"), &join(&at, "name"), 1);
            let flavors_at = join(&at, "onFlavors");
            c.max_items(check.get("onFlavors"), &flavors_at, 64);
            c.unique_set(check.get("onFlavors"), &flavors_at);
            for (j, f) in items(check, "onFlavors").iter().enumerate() {
                c.subdomain(Some(f), &format!("{flavors_at}[{j}]"));
            }
        }
    }
    if let Some(scope) = spec.get("admissionScope") {
        c.required(scope, "admissionMode", "spec.admissionScope");
        c.one_of(
            scope.get("admissionMode"),
            "spec.admissionScope.admissionMode",
            &["UsageBasedAdmissionFairSharing", "NoAdmissionFairSharing"],
        );
    }
    if let Some(policy) = spec.get("concurrentAdmissionPolicy") {
        let at = "spec.concurrentAdmissionPolicy";
        c.required(policy, "migration", at);
        if let Some(migration) = policy.get("migration") {
            let at = "spec.concurrentAdmissionPolicy.migration";
            c.required(migration, "mode", at);
            c.max_length(migration.get("mode"), &join(at, "mode"), 253);
            c.one_of(
                migration.get("mode"),
                &join(at, "mode"),
                &["TryPreferredFlavors", "RetainFirstAdmission"],
            );
            c.subdomain(
                migration.pointer("/constraints/lastAcceptableFlavorName"),
                &join(at, "constraints.lastAcceptableFlavorName"),
            );
        }
    }
    fair_sharing(spec, c);
    flavor_fungibility(spec, version, c);
    namespace_selector(spec.get("namespaceSelector"), "spec.namespaceSelector", c);
    preemption(spec, c);
    c.one_of(
        spec.get("queueingStrategy"),
        "spec.queueingStrategy",
        &["StrictFIFO", "BestEffortFIFO"],
    );
    c.one_of(spec.get("stopPolicy"), "spec.stopPolicy", STOP_POLICIES);
    // `borrowingLimit must be nil when cohort is empty`, on the whole spec.
    let has_cohort = spec.get(cohort_field).is_some_and(|v| !v.is_null());
    let borrows = items(spec, "resourceGroups").iter().any(|rg| {
        (items(rg, "flavors").iter()).any(|f| {
            items(f, "resources")
                .iter()
                .any(|r| r.get("borrowingLimit").is_some())
        })
    });
    if !has_cohort && borrows {
        c.rule(
            at,
            "object",
            "borrowingLimit must be nil when cohort is empty",
        );
    }
}

/// `CohortSpec` (v1beta2; v1alpha1's has the same fields).
pub fn cohort(spec: &Value, c: &mut CrdCheck) {
    c.subdomain(spec.get("parentName"), "spec.parentName");
    resource_groups(spec, "spec", c);
    fair_sharing(spec, c);
}

/// `LocalQueueSpec`.
pub fn local_queue(spec: &Value, c: &mut CrdCheck) {
    c.subdomain(spec.get("clusterQueue"), "spec.clusterQueue");
    c.one_of(spec.get("stopPolicy"), "spec.stopPolicy", STOP_POLICIES);
    fair_sharing(spec, c);
}

/// A CEL rule of a toleration: whether it holds.
type TolerationRule<'a> = dyn Fn(&Value) -> bool + 'a;

/// `ResourceFlavorSpec`.
pub fn resource_flavor(spec: &Value, c: &mut CrdCheck) {
    c.max_items(spec.get("nodeLabels"), "spec.nodeLabels", 8);
    c.subdomain(spec.get("topologyName"), "spec.topologyName");
    let taints_at = "spec.nodeTaints";
    c.max_items(spec.get("nodeTaints"), taints_at, 8);
    for (i, t) in items(spec, "nodeTaints").iter().enumerate() {
        let at = format!("{taints_at}[{i}]");
        c.required(t, "effect", &at);
        c.required(t, "key", &at);
    }
    if !(items(spec, "nodeTaints").iter()).all(|t| {
        t.get("effect")
            .and_then(Value::as_str)
            .is_some_and(|e| EFFECTS.contains(&e))
    }) {
        c.rule(taints_at, "array", TAINT_EFFECTS);
    }
    let tolerations = items(spec, "tolerations");
    let tol_at = "spec.tolerations";
    c.max_items(spec.get("tolerations"), tol_at, 8);
    let str_of = |t: &Value, f: &str| t.get(f).and_then(Value::as_str).map(str::to_string);
    let rules: [(&str, &TolerationRule<'_>); 5] = [
        (
            "operator must be Exists when 'key' is empty, which means 'match all values and all keys'",
            &|t| t.get("key").is_some() || str_of(t, "operator").as_deref() == Some("Exists"),
        ),
        (
            "effect must be 'NoExecute' when 'tolerationSeconds' is set",
            &|t| {
                t.get("tolerationSeconds").is_none()
                    || str_of(t, "effect").as_deref() == Some("NoExecute")
            },
        ),
        (
            "supported toleration values: 'Equal'(default), 'Exists'",
            &|t| str_of(t, "operator").is_none_or(|o| o == "Equal" || o == "Exists"),
        ),
        ("a value must be empty when 'operator' is 'Exists'", &|t| {
            str_of(t, "operator").as_deref() != Some("Exists") || t.get("value").is_none()
        }),
        (TAINT_EFFECTS, &|t| {
            str_of(t, "effect").is_none_or(|e| EFFECTS.contains(&e.as_str()))
        }),
    ];
    for (message, holds) in rules {
        if !tolerations.iter().all(holds) {
            c.rule(tol_at, "array", message);
        }
    }
    if spec.get("topologyName").is_some() && spec.get("nodeLabels").is_none_or(|l| size(l) < 1) {
        c.rule(
            "spec",
            "object",
            "at least one nodeLabel is required when topology is set",
        );
    }
}

/// `WorkloadPriorityClass`: `value` is required.
pub fn workload_priority_class(doc: &Value, c: &mut CrdCheck) {
    c.required(doc, "value", "");
    c.max_length(doc.get("description"), "description", 2048);
}

/// `resourceGroups` of a ClusterQueue or Cohort.
fn resource_groups(spec: &Value, at: &str, c: &mut CrdCheck) {
    let groups_at = join(at, "resourceGroups");
    c.max_items(spec.get("resourceGroups"), &groups_at, 16);
    for (g, rg) in items(spec, "resourceGroups").iter().enumerate() {
        let at = format!("{groups_at}[{g}]");
        c.required(rg, "coveredResources", &at);
        c.required(rg, "flavors", &at);
        let covered_at = join(&at, "coveredResources");
        c.max_items(rg.get("coveredResources"), &covered_at, 64);
        c.min_items(rg.get("coveredResources"), &covered_at, 1);
        let flavors_at = join(&at, "flavors");
        c.max_items(rg.get("flavors"), &flavors_at, 64);
        c.min_items(rg.get("flavors"), &flavors_at, 1);
        c.unique_keys(rg.get("flavors"), &flavors_at, "name");
        let covered = items(rg, "coveredResources").len();
        for (f, flavor) in items(rg, "flavors").iter().enumerate() {
            let at = format!("{flavors_at}[{f}]");
            c.required(flavor, "name", &at);
            c.required(flavor, "resources", &at);
            c.subdomain(flavor.get("name"), &join(&at, "name"));
            let res_at = join(&at, "resources");
            c.max_items(flavor.get("resources"), &res_at, 64);
            c.min_items(flavor.get("resources"), &res_at, 1);
            c.unique_keys(flavor.get("resources"), &res_at, "name");
            for (r, quota) in items(flavor, "resources").iter().enumerate() {
                let at = format!("{res_at}[{r}]");
                c.required(quota, "name", &at);
                c.required(quota, "nominalQuota", &at);
                for field in ["nominalQuota", "borrowingLimit", "lendingLimit"] {
                    c.quantity(quota.get(field), &join(&at, field));
                }
            }
        }
        if !(items(rg, "flavors").iter()).all(|f| items(f, "resources").len() == covered) {
            c.rule(
                &at,
                "object",
                "flavors must have the same number of resources as the coveredResources",
            );
        }
    }
}

fn fair_sharing(spec: &Value, c: &mut CrdCheck) {
    c.quantity(
        spec.pointer("/fairSharing/weight"),
        "spec.fairSharing.weight",
    );
}

/// `flavorFungibility`, defaulted (`{}`, `MayStopSearch`, `TryNextFlavor`) before its rule.
fn flavor_fungibility(spec: &Value, version: Version, c: &mut CrdCheck) {
    let Some(f) = spec.get("flavorFungibility") else {
        return;
    };
    let at = "spec.flavorFungibility";
    let (borrow, preempt): (&[&str], &[&str]) = match version {
        Version::V1beta1 => (
            &["MayStopSearch", "TryNextFlavor", "Borrow"],
            &["MayStopSearch", "TryNextFlavor", "Preempt"],
        ),
        Version::V1beta2 => (
            &["MayStopSearch", "TryNextFlavor"],
            &["MayStopSearch", "TryNextFlavor"],
        ),
    };
    c.one_of(
        f.get("preference"),
        &join(at, "preference"),
        &["BorrowingOverPreemption", "PreemptionOverBorrowing"],
    );
    c.one_of(f.get("whenCanBorrow"), &join(at, "whenCanBorrow"), borrow);
    c.one_of(
        f.get("whenCanPreempt"),
        &join(at, "whenCanPreempt"),
        preempt,
    );
    let value = |field: &str, default: &'static str| {
        f.get(field)
            .and_then(Value::as_str)
            .unwrap_or(default)
            .to_string()
    };
    if f.get("preference").is_some()
        && !(value("whenCanBorrow", "MayStopSearch") == "TryNextFlavor"
            && value("whenCanPreempt", "TryNextFlavor") == "TryNextFlavor")
    {
        c.rule(
            at,
            "object",
            "preference can only be set when both whenCanBorrow and whenCanPreempt are TryNextFlavor",
        );
    }
}

/// `preemption`, defaulted (`reclaimWithinCohort: Never`, `borrowWithinCohort: {policy:
/// Never}`) before its rule.
fn preemption(spec: &Value, c: &mut CrdCheck) {
    let Some(p) = spec.get("preemption") else {
        return;
    };
    let at = "spec.preemption";
    let never_lower = &["Never", "LowerPriority"];
    c.one_of(
        p.pointer("/borrowWithinCohort/policy"),
        "spec.preemption.borrowWithinCohort.policy",
        never_lower,
    );
    c.one_of(
        p.get("reclaimWithinCohort"),
        "spec.preemption.reclaimWithinCohort",
        &["Never", "LowerPriority", "Any"],
    );
    c.one_of(
        p.get("withinClusterQueue"),
        "spec.preemption.withinClusterQueue",
        &["Never", "LowerPriority", "LowerOrNewerEqualPriority"],
    );
    let reclaim = p.get("reclaimWithinCohort").and_then(Value::as_str);
    let borrow = p.get("borrowWithinCohort").map(|b| {
        b.get("policy")
            .and_then(Value::as_str)
            .unwrap_or("Never")
            .to_string()
    });
    if reclaim.is_none_or(|r| r == "Never") && borrow.is_some_and(|b| b != "Never") {
        c.rule(
            at,
            "object",
            "reclaimWithinCohort=Never and borrowWithinCohort.Policy!=Never",
        );
    }
}

/// A `metav1.LabelSelector`'s schema: each expression needs a key and an operator.
fn namespace_selector(selector: Option<&Value>, at: &str, c: &mut CrdCheck) {
    let Some(s) = selector else { return };
    for (i, e) in items(s, "matchExpressions").iter().enumerate() {
        let at = format!("{at}.matchExpressions[{i}]");
        c.required(e, "key", &at);
        c.required(e, "operator", &at);
    }
}

/// `Workload` (kubectl dumps carry its status, which Kueue wrote through the same schema).
pub fn workload(doc: &Value, version: Version, c: &mut CrdCheck) {
    let spec = doc.get("spec").unwrap_or(&Value::Null);
    let sets_at = "spec.podSets";
    if version == Version::V1beta1 {
        c.required(spec, "podSets", "spec");
    }
    c.max_items(spec.get("podSets"), sets_at, 18);
    c.min_items(spec.get("podSets"), sets_at, 1);
    c.unique_keys(spec.get("podSets"), sets_at, "name");
    for (i, ps) in items(spec, "podSets").iter().enumerate() {
        let at = format!("{sets_at}[{i}]");
        if version == Version::V1beta1 {
            c.required(ps, "count", &at);
        }
        c.required(ps, "template", &at);
        pod_set_name(ps.get("name"), &join(&at, "name"), c);
        c.minimum(ps.get("count"), &join(&at, "count"), 0);
        c.minimum(ps.get("minCount"), &join(&at, "minCount"), 1);
        let count = ps.get("count").and_then(Value::as_i64).unwrap_or(1);
        if let Some(min) = ps.get("minCount").and_then(Value::as_i64)
            && min > count
        {
            c.rule(
                &at,
                "object",
                "minCount should be positive and less or equal to count",
            );
        }
    }
    c.subdomain(spec.get("queueName"), "spec.queueName");
    let Some(admission) = doc.pointer("/status/admission") else {
        return;
    };
    let at = "status.admission";
    c.subdomain(admission.get("clusterQueue"), &join(at, "clusterQueue"));
    let psa_at = join(at, "podSetAssignments");
    c.max_items(admission.get("podSetAssignments"), &psa_at, 18);
    c.unique_keys(admission.get("podSetAssignments"), &psa_at, "name");
    for (i, psa) in items(admission, "podSetAssignments").iter().enumerate() {
        let at = format!("{psa_at}[{i}]");
        pod_set_name(psa.get("name"), &join(&at, "name"), c);
        c.minimum(psa.get("count"), &join(&at, "count"), 0);
        for (k, v) in psa
            .get("flavors")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            c.subdomain(Some(v), &format!("{at}.flavors.{k}"));
        }
        for (k, v) in (psa.get("resourceUsage").and_then(Value::as_object))
            .into_iter()
            .flatten()
        {
            c.quantity(Some(v), &format!("{at}.resourceUsage.{k}"));
        }
    }
    let reserved = items(doc.get("status").unwrap_or(&Value::Null), "conditions")
        .iter()
        .any(|cond| {
            cond.get("type").and_then(Value::as_str) == Some("QuotaReserved")
                && cond.get("status").and_then(Value::as_str) == Some("True")
        });
    if reserved && items(spec, "podSets").len() != items(admission, "podSetAssignments").len() {
        c.rule(
            "",
            "object",
            "podSetAssignments must have the same number of podSets as the spec",
        );
    }
}

/// A pod set name: `maxLength: 63`, a DNS-1123 label.
fn pod_set_name(name: Option<&Value>, at: &str, c: &mut CrdCheck) {
    c.max_length(name, at, 63);
    c.pattern(name, at, "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", |s| {
        !s.contains('.') && crate::model::labels::is_subdomain_syntax(s)
    });
}

fn size(v: &Value) -> usize {
    v.as_object().map_or(0, |m| m.len())
}
