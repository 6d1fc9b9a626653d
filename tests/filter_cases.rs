//! Conformance of the single-node filter plugins against upstream's unit-test tables.
//!
//! `tests/data/k8s-filter-cases.yaml` is a verbatim copy of
//! `../shared/upstream-cases/k8s-filter-cases.yaml` (its header comment documents the schema).
//! Every NodeAffinity, TaintToleration, NodeUnschedulable, NodeName and NodeResourcesFit case is
//! run here; `InterPodAffinity` cases need every node's pods and run in tests/inter_pod_affinity_cases.rs.
//!
//! Each case runs the filters in upstream's order (NodeUnschedulable → NodeName →
//! TaintToleration → NodeAffinity → NodeResourcesFit; the first failure wins), and the case's own
//! `plugin` must be the one that decided. NodeAffinity's PreFilter is checked as well (see
//! [`check_pre_filter`]). Every mismatch of every case is collected, so one run lists them all.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use k8s_openapi::api::core::v1 as k8s;
use serde::Deserialize;
use serde_json::{Value, json};

use schedsim::features::FeatureGates;
use schedsim::model::objects::{node_from_k8s, pod_from_k8s};
use schedsim::model::{Node, Pod};
use schedsim::sched::cluster::{Cluster, PodRequest};
use schedsim::sched::framework::{MessageFormat, Status, names};
use schedsim::sched::plugins::{
    node_affinity, node_name, node_resources_fit, node_unschedulable, taint_toleration,
};
use schedsim::yaml::parse_documents;

const CASES_PATH: &str = "tests/data/k8s-filter-cases.yaml";
const CASES: &str = include_str!("data/k8s-filter-cases.yaml");

/// Documents in the case file (the header comment before the first `---` is not one).
const TOTAL_CASES: usize = 113;
/// Cases ported here, per plugin.
const PORTED: &[(&str, usize)] = &[
    ("NodeAffinity", 36),
    ("NodeResourcesFit", 28),
    ("TaintToleration", 19),
    ("NodeUnschedulable", 3),
    ("NodeName", 3),
];
/// Cases run elsewhere (tests/inter_pod_affinity_cases.rs): counted here, not run.
const SKIPPED: &[(&str, usize)] = &[("InterPodAffinity", 24)];

/// The message kube-scheduler records for a node that NodeAffinity's PreFilter narrowed away
/// (`framework.NewStatus(UnschedulableAndUnresolvable, "node(s) didn't satisfy plugin(s) [..]")`).
const ABSENT_NODE_REASON: &str = "node(s) didn't satisfy plugin(s) [NodeAffinity]";

/// One case, as the header comment of the case file describes it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)] // `source`, `notes`, `derived` document the case; they are parsed to pin the schema.
struct Case {
    name: String,
    source: String,
    plugin: String,
    #[serde(default)]
    notes: Option<String>,
    #[serde(default)]
    derived: bool,
    node: Value,
    #[serde(default)]
    other_nodes: Vec<Value>,
    #[serde(default)]
    existing_pods: Vec<Value>,
    pod: Value,
    expect: Expect,
    #[serde(default)]
    feature_gates: FeatureGates,
    #[serde(default)]
    scheduler_config: Option<CaseSchedulerConfig>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    fits: bool,
    reason: String,
    #[serde(default)]
    reasons: Option<Vec<String>>,
    #[serde(default)]
    code: Option<String>,
    #[serde(default, rename = "preFilterReason")]
    pre_filter_reason: Option<String>,
    #[serde(default)]
    reason_pre_v1_35: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct CaseSchedulerConfig {
    #[serde(rename = "NodeAffinityArgs")]
    node_affinity_args: NodeAffinityArgs,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct NodeAffinityArgs {
    added_affinity: k8s::NodeAffinity,
}

/// Every document of the case file: (plugin, raw value).
fn documents() -> Vec<(String, Value)> {
    let docs = parse_documents(CASES.to_string(), Path::new(CASES_PATH))
        .unwrap_or_else(|e| panic!("{CASES_PATH} does not parse: {e:?}"));
    docs.into_iter()
        .map(|d| {
            let plugin = d
                .value
                .get("plugin")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            (plugin, d.value)
        })
        .collect()
}

/// The node of a case, converted as the loader converts nodes. API-server validation errors
/// are ignored: upstream's unit tests build objects that bypass the API server.
///
/// Upstream's per-plugin unit tests never run NodeResourcesFit on the nodes of the other
/// plugins' cases, which declare no `status.allocatable` (so allow 0 pods). Such nodes get room
/// for one pod (`pods: 1`) so that the composite's last stage (NodeResourcesFit) can pass; the
/// pods of those cases request nothing.
fn build_node(case: &Case) -> Result<Node, String> {
    let mut value = case.node.clone();
    let has_allocatable = value
        .pointer("/status/allocatable")
        .is_some_and(|a| !a.is_null());
    if !has_allocatable {
        let obj = value.as_object_mut().ok_or("node is not a mapping")?;
        let status = obj.entry("status").or_insert_with(|| json!({}));
        let status = status
            .as_object_mut()
            .ok_or("node.status is not a mapping")?;
        status.insert("allocatable".into(), json!({ "pods": "1" }));
    }
    let k8s_node: k8s::Node =
        serde_json::from_value(value).map_err(|e| format!("node does not decode: {e}"))?;
    let mut errs = Vec::new();
    Ok(node_from_k8s(&k8s_node, "", &mut errs))
}

/// A pod fragment (`spec` + optional `metadata`) converted as the loader converts pods;
/// validation errors ignored as for nodes.
fn build_pod(fragment: &Value, gates: &FeatureGates, what: &str) -> Result<Pod, String> {
    let k8s_pod: k8s::Pod = serde_json::from_value(fragment.clone())
        .map_err(|e| format!("{what} does not decode: {e}"))?;
    let mut errs = Vec::new();
    Ok(pod_from_k8s(&k8s_pod, "", gates, &mut errs))
}

/// What the filters of one cycle decide for the case's pod on the case's node.
struct Verdict {
    /// The first failing filter's status (or success), in upstream filter order.
    filter: Status,
    pre_filter: node_affinity::PreFilter,
}

/// Runs NodeUnschedulable → NodeName → TaintToleration → NodeAffinity → NodeResourcesFit (the
/// default plugins' filter order, as `cycle.rs` composes them); the first failure wins.
fn run_filters(
    pod: &Pod,
    node: &Node,
    existing: &[Pod],
    gates: &FeatureGates,
    added: Option<&k8s::NodeAffinity>,
    format: MessageFormat,
) -> Verdict {
    let pre_filter = node_affinity::pre_filter(pod, added);
    let static_filters = [
        node_unschedulable::filter(pod, node, gates),
        node_name::filter(pod, node),
        taint_toleration::filter(pod, node, gates, format),
        node_affinity::filter(pod, node, added),
    ];
    if let Some(failed) = static_filters.into_iter().find(|s| !s.is_success()) {
        return Verdict {
            filter: failed,
            pre_filter,
        };
    }
    let all: Vec<&Pod> = std::iter::once(pod).chain(existing).collect();
    let mut cluster = Cluster::new(vec![node.clone()], &all);
    for p in existing {
        let request = PodRequest::new(&cluster.table, p);
        cluster.account(0, &request, 1);
    }
    let request = PodRequest::new(&cluster.table, pod);
    let filter = node_resources_fit::filter(&request, cluster.resources(0), &cluster.table);
    Verdict { filter, pre_filter }
}

/// Position of a NodeResourcesFit reason in `fitsRequest`'s fixed order; extended ("scalar")
/// resources come last, in Go map order upstream.
fn fixed_rank(reason: &str) -> Option<usize> {
    [
        "Too many pods",
        "Insufficient cpu",
        "Insufficient memory",
        "Insufficient ephemeral-storage",
    ]
    .iter()
    .position(|r| *r == reason)
}

/// Compares reasons in order, except that the scalar-resource reasons (after pods, cpu, memory,
/// ephemeral-storage) are compared as a set: upstream iterates them in Go's random map order,
/// the crate sorts them by name.
fn same_reasons(expected: &[String], actual: &[String]) -> bool {
    let split = |rs: &[String]| -> (Vec<String>, BTreeSet<String>) {
        let fixed = rs
            .iter()
            .filter(|r| fixed_rank(r).is_some())
            .cloned()
            .collect();
        let scalar = rs
            .iter()
            .filter(|r| fixed_rank(r).is_none())
            .cloned()
            .collect();
        (fixed, scalar)
    };
    let scalars_last = |rs: &[String]| {
        rs.iter()
            .skip_while(|r| fixed_rank(r).is_some())
            .all(|r| fixed_rank(r).is_none())
    };
    expected.len() == actual.len() && scalars_last(actual) && split(expected) == split(actual)
}

/// Checks one filter verdict against the case's expectation.
fn check_filter(case: &Case, status: &Status, expected_reason: &str, label: &str) -> Vec<String> {
    let mut out = Vec::new();
    let e = &case.expect;
    let fail = |what: &str, expected: &dyn std::fmt::Debug, actual: &dyn std::fmt::Debug| {
        format!(
            "{} [{}] {label}: {what}: expected {expected:?}, got {actual:?}",
            case.name, case.plugin
        )
    };
    if status.is_success() != e.fits {
        out.push(fail("fits", &e.fits, &status.is_success()));
        if !status.is_success() {
            out.push(fail("(status)", &"Success", &status));
        }
        return out;
    }
    if e.fits {
        return out;
    }
    if status.plugin != case.plugin {
        out.push(fail("deciding plugin", &case.plugin, &status.plugin));
    }
    let actual: Vec<String> = status.reasons.iter().map(|r| r.to_string()).collect();
    match &e.reasons {
        Some(reasons) => {
            if !same_reasons(reasons, &actual) {
                out.push(fail("reasons", reasons, &actual));
            }
            if reasons.first().map(String::as_str) != Some(expected_reason) {
                out.push(fail(
                    "(case file) reasons[0] vs reason",
                    &expected_reason,
                    reasons,
                ));
            }
        }
        None => {
            if actual != [expected_reason] {
                out.push(fail("reason", &[expected_reason], &actual));
            }
        }
    }
    match &e.code {
        Some(code) if *code == format!("{:?}", status.code) => {}
        Some(code) => out.push(fail("code", code, &status.code)),
        None => out.push(fail(
            "(case file) expect.code missing",
            &"a code",
            &status.code,
        )),
    }
    out
}

/// NodeAffinity's PreFilter. With `expect.preFilterReason`, PreFilter must reject the pod with
/// that message (the case's code), or narrow the nodes to a set without this node (which
/// kube-scheduler reports as [`ABSENT_NODE_REASON`]). Without it, PreFilter must not reject
/// the pod, and may narrow this node away only if Filter rejects it too (PreFilter only
/// narrows).
fn check_pre_filter(case: &Case, node: &Node, v: &Verdict) -> Vec<String> {
    use node_affinity::PreFilter;
    let name = format!("{} [{}] PreFilter", case.name, case.plugin);
    let excluded = |names: &BTreeSet<String>| !names.contains(&node.name);
    match (&case.expect.pre_filter_reason, &v.pre_filter) {
        (Some(reason), PreFilter::Reject(status)) => {
            let mut out = Vec::new();
            if status.message() != *reason {
                out.push(format!(
                    "{name}: reason: expected {reason:?}, got {:?}",
                    status.message()
                ));
            }
            if status.plugin != names::NODE_AFFINITY {
                out.push(format!(
                    "{name}: plugin: expected NodeAffinity, got {:?}",
                    status.plugin
                ));
            }
            if case.expect.code.as_deref() != Some(&format!("{:?}", status.code)) {
                out.push(format!(
                    "{name}: code: expected {:?}, got {:?}",
                    case.expect.code, status.code
                ));
            }
            out
        }
        (Some(reason), PreFilter::NodeNames(names)) if excluded(names) => {
            if reason == ABSENT_NODE_REASON {
                vec![]
            } else {
                vec![format!(
                    "{name}: expected a reject with {reason:?}, got NodeNames {names:?} \
                     (node {:?} absent: {ABSENT_NODE_REASON:?})",
                    node.name
                )]
            }
        }
        (Some(reason), other) => {
            vec![format!(
                "{name}: expected a reject with {reason:?}, got {other:?}"
            )]
        }
        (None, PreFilter::Reject(status)) => {
            vec![format!("{name}: expected no reject, got {status:?}")]
        }
        (None, PreFilter::NodeNames(names)) if excluded(names) && v.filter.is_success() => {
            vec![format!(
                "{name}: narrowed to {names:?}, excluding node {:?} that Filter accepts",
                node.name
            )]
        }
        (None, _) => vec![],
    }
}

/// Runs one case; returns its mismatches.
fn run_case(case: &Case) -> Vec<String> {
    let gates = case.feature_gates;
    let node = match build_node(case) {
        Ok(n) => n,
        Err(e) => return vec![format!("{} [{}]: {e}", case.name, case.plugin)],
    };
    let pod = match build_pod(&case.pod, &gates, "pod") {
        Ok(p) => p,
        Err(e) => return vec![format!("{} [{}]: {e}", case.name, case.plugin)],
    };
    let mut existing = Vec::new();
    for (i, fragment) in case.existing_pods.iter().enumerate() {
        match build_pod(fragment, &gates, &format!("existingPods[{i}]")) {
            // Every existing pod of these cases is bound to the case's node.
            Ok(p) if p.node_name.as_deref() == Some(node.name.as_str()) => existing.push(p),
            Ok(p) => {
                return vec![format!(
                    "{} [{}]: existingPods[{i}] is bound to {:?}, not to the case's node {:?}",
                    case.name, case.plugin, p.node_name, node.name
                )];
            }
            Err(e) => return vec![format!("{} [{}]: {e}", case.name, case.plugin)],
        }
    }
    if !case.other_nodes.is_empty() {
        return vec![format!(
            "{} [{}]: otherNodes is only supported for InterPodAffinity",
            case.name, case.plugin
        )];
    }
    let added = case
        .scheduler_config
        .as_ref()
        .map(|c| &c.node_affinity_args.added_affinity);

    let mut out = Vec::new();
    let current = run_filters(
        &pod,
        &node,
        &existing,
        &gates,
        added,
        MessageFormat::Current,
    );
    out.extend(check_filter(
        case,
        &current.filter,
        &case.expect.reason,
        "Filter",
    ));
    out.extend(check_pre_filter(case, &node, &current));

    // Kubernetes 1.25–1.34 wording: only TaintToleration's reason differs
    // (`expect.reason_pre_v1_35`); every other verdict must be the same.
    let v1_34 = run_filters(&pod, &node, &existing, &gates, added, MessageFormat::V1_34);
    let old_reason = case
        .expect
        .reason_pre_v1_35
        .as_deref()
        .unwrap_or(&case.expect.reason);
    out.extend(check_filter(
        case,
        &v1_34.filter,
        old_reason,
        "Filter (1.34 messages)",
    ));
    if case.plugin == names::TAINT_TOLERATION
        && !case.expect.fits
        && case.expect.reason_pre_v1_35.is_none()
    {
        out.push(format!(
            "{} [{}]: (case file) failing TaintToleration case lacks reason_pre_v1_35",
            case.name, case.plugin
        ));
    }
    out
}

#[test]
fn upstream_filter_cases() {
    let docs = documents();
    assert_eq!(docs.len(), TOTAL_CASES, "documents in {CASES_PATH}");

    let mut failures: Vec<String> = Vec::new();
    let mut ported: BTreeMap<String, usize> = BTreeMap::new();
    let mut skipped: BTreeMap<String, usize> = BTreeMap::new();
    let mut seen_names = BTreeSet::new();
    let mut passed = 0;
    for (plugin, value) in docs {
        let name = value
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("<unnamed>")
            .to_string();
        if !seen_names.insert(name.clone()) {
            failures.push(format!("{name}: duplicate case name"));
        }
        if SKIPPED.iter().any(|(p, _)| *p == plugin) {
            *skipped.entry(plugin).or_default() += 1;
            continue;
        }
        if !PORTED.iter().any(|(p, _)| *p == plugin) {
            failures.push(format!("{name}: unknown plugin {plugin:?}"));
            continue;
        }
        let case: Case = match serde_json::from_value(value) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{name} [{plugin}]: case does not decode: {e}"));
                continue;
            }
        };
        *ported.entry(plugin).or_default() += 1;
        let case_failures = run_case(&case);
        if case_failures.is_empty() {
            passed += 1;
        }
        failures.extend(case_failures);
    }

    let expected_ported: BTreeMap<String, usize> =
        PORTED.iter().map(|(p, n)| (p.to_string(), *n)).collect();
    let expected_skipped: BTreeMap<String, usize> =
        SKIPPED.iter().map(|(p, n)| (p.to_string(), *n)).collect();
    if ported != expected_ported {
        failures.push(format!(
            "ported cases per plugin: expected {expected_ported:?}, got {ported:?}"
        ));
    }
    if skipped != expected_skipped {
        failures.push(format!(
            "skipped cases per plugin: expected {expected_skipped:?}, got {skipped:?}"
        ));
    }
    let total: usize = ported.values().sum();
    eprintln!("{passed}/{total} ported cases pass; skipped: {skipped:?}");
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The copy in `tests/data` must stay a verbatim copy of the shared case file.
#[test]
fn case_file_is_verbatim_copy() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shared_dir = manifest.join("../shared");
    if !shared_dir.is_dir() {
        eprintln!(
            "{} not present; skipping the comparison",
            shared_dir.display()
        );
        return;
    }
    let shared = shared_dir.join("upstream-cases/k8s-filter-cases.yaml");
    let text = std::fs::read_to_string(&shared)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", shared.display()));
    assert!(
        text == CASES,
        "{CASES_PATH} differs from {}",
        shared.display()
    );
}
