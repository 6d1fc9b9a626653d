//! The InterPodAffinity cases of `tests/data/k8s-filter-cases.yaml` (transcribed from
//! `interpodaffinity/filtering_test.go` `TestRequiredAffinitySingleNode` /
//! `TestRequiredAffinityMultipleNodes`, plus GPU-shaped derived cases): PreFilter over the
//! existing pods of every node, then Filter on the case's node.

use schedsim::features::FeatureGates;
use schedsim::model::objects::{node_from_k8s, pod_from_k8s};
use schedsim::model::{Node, Pod};
use schedsim::sched::framework::names;
use std::collections::BTreeMap;

use schedsim::sched::plugins::inter_pod_affinity::{
    BoundGroup, NamespaceLabels, PodTerms, Topology, filter, pre_filter,
};
use serde_json::Value;

const CASES: &str = include_str!("data/k8s-filter-cases.yaml");
const EXPECTED_CASES: usize = 24;

fn node(v: &Value) -> Node {
    let k: k8s_openapi::api::core::v1::Node =
        serde_json::from_value(v.clone()).expect("node fragment");
    node_from_k8s(&k, "", &mut Vec::new())
}

/// A pod fragment; a missing namespace is the test default, "".
fn pod(v: &Value) -> Pod {
    let mut v = v.clone();
    if v.pointer("/metadata/namespace").is_none() {
        v["metadata"]["namespace"] = Value::String(String::new());
    }
    if v.pointer("/metadata/name").is_none() {
        v["metadata"]["name"] = Value::String("incoming".into());
    }
    let k: k8s_openapi::api::core::v1::Pod = serde_json::from_value(v).expect("pod fragment");
    // API-server validation is not part of these unit tables.
    pod_from_k8s(&k, "", &FeatureGates::default(), &mut Vec::new())
}

/// The namespaces `filtering_test.go` registers for its namespaceSelector cases.
fn namespaces() -> NamespaceLabels {
    [("subteam1.team1", "team1"), ("subteam1.team2", "team2")]
        .into_iter()
        .map(|(ns, team)| {
            (
                ns.to_string(),
                [("team".to_string(), team.to_string())]
                    .into_iter()
                    .collect(),
            )
        })
        .collect()
}

#[test]
fn upstream_inter_pod_affinity_cases() {
    let docs: Vec<Value> = serde_saphyr::from_multiple(CASES).expect("case file parses");
    let cases: Vec<&Value> = docs
        .iter()
        .filter(|d| d["plugin"] == "InterPodAffinity")
        .collect();
    assert_eq!(
        cases.len(),
        EXPECTED_CASES,
        "InterPodAffinity cases in the case file"
    );
    let mut failures = Vec::new();
    for case in &cases {
        let name = case["name"].as_str().unwrap_or("?");
        let target = node(&case["node"]);
        let mut nodes = vec![target.clone()];
        nodes.extend(
            case["otherNodes"]
                .as_array()
                .into_iter()
                .flatten()
                .map(node),
        );
        let existing: Vec<Pod> = case["existingPods"]
            .as_array()
            .into_iter()
            .flatten()
            .map(pod)
            .collect();
        let terms: Vec<Option<PodTerms>> = existing.iter().map(PodTerms::compile).collect();
        // Every pod its own signature: no memo hits, the plain algorithm.
        let on_node: Vec<BTreeMap<usize, i64>> = existing
            .iter()
            .map(|p| {
                nodes
                    .iter()
                    .position(|n| Some(n.name.as_str()) == p.node_name.as_deref())
                    .map(|i| BTreeMap::from([(i, 1)]))
                    .unwrap_or_default()
            })
            .collect();
        let bound = existing
            .iter()
            .zip(&terms)
            .enumerate()
            .filter(|(i, _)| !on_node[*i].is_empty())
            .map(|(i, (p, t))| BoundGroup {
                pod: p,
                terms: t.as_ref(),
                labels_signature: i as u32,
                terms_signature: i as u32,
                nodes: &on_node[i],
            });
        let incoming = pod(&case["pod"]);
        let mut topology = Topology::default();
        let state = pre_filter(&incoming, bound, &namespaces(), &mut topology, &nodes);
        // The target node is the first.
        let status = filter(&state, 0);
        let expect = &case["expect"];
        let fits = expect["fits"].as_bool().unwrap_or(false);
        if status.is_success() != fits {
            failures.push(format!("{name}: fits expected {fits}, got {status:?}"));
            continue;
        }
        if !fits {
            let reason = expect["reason"].as_str().unwrap_or("");
            if status.message() != reason {
                failures.push(format!(
                    "{name}: reason expected {reason:?}, got {:?}",
                    status.message()
                ));
            }
            if expect["code"].as_str() != Some(format!("{:?}", status.code).as_str()) {
                failures.push(format!(
                    "{name}: code expected {}, got {:?}",
                    expect["code"], status.code
                ));
            }
            if status.plugin != names::INTER_POD_AFFINITY {
                failures.push(format!("{name}: plugin {:?}", status.plugin));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases fail:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}
