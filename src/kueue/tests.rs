//! Kueue's own unit-test tables, ported as data: `tests/data/kueue/flavor-assigner-cases.yaml`
//! (flavorassigner_test.go `TestAssignFlavors`; its header documents the schema). Every
//! mismatch of every case is collected, so one run lists them all.

use std::collections::BTreeMap;
use std::path::Path;

use k8s_openapi::api::core::v1::{Affinity, Toleration};
use serde::Deserialize;
use serde_json::Value;

use super::api::{self, FlavorResource, ResourceFlavor};
use super::assigner::{Assigner, Mode, PodSet, Possibility, PreemptionOracle};
use super::quota::{QueueId, QuotaTree};
use crate::features::FeatureGates;
use crate::model::quantity::Quantity;
use crate::model::resources;

const CASES: &str = include_str!("../../tests/data/kueue/flavor-assigner-cases.yaml");

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Case {
    name: String,
    #[allow(dead_code)] // documents where the case comes from
    source: String,
    #[serde(default)]
    flavors: Vec<Value>,
    cluster_queue: Value,
    #[serde(default)]
    usage: BTreeMap<String, String>,
    #[serde(default)]
    secondary_cluster_queue: Option<Value>,
    #[serde(default)]
    secondary_usage: BTreeMap<String, String>,
    #[serde(default)]
    cohorts: Vec<Value>,
    #[serde(default)]
    simulation: BTreeMap<String, Simulation>,
    pod_sets: Vec<PodSetSpec>,
    want: Want,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Simulation {
    possibility: String,
    #[serde(default)]
    borrowing: usize,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct PodSetSpec {
    name: String,
    count: i64,
    #[serde(default)]
    requests: BTreeMap<String, String>,
    #[serde(default)]
    tolerations: Vec<Toleration>,
    #[serde(default)]
    node_selector: BTreeMap<String, String>,
    #[serde(default)]
    affinity: Option<Affinity>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Want {
    mode: String,
    #[serde(default)]
    borrowing: usize,
    #[serde(default)]
    message: String,
    pod_sets: Vec<WantPodSet>,
    #[serde(default)]
    usage: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WantPodSet {
    name: String,
    #[serde(default)]
    flavors: BTreeMap<String, WantFlavor>,
    #[serde(default)]
    reasons: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct WantFlavor {
    flavor: String,
    mode: String,
}

/// The test oracle of flavorassigner_test.go: the listed answer, else `Preempt, 0`.
struct TableOracle(BTreeMap<FlavorResource, (Possibility, usize)>);

impl PreemptionOracle for TableOracle {
    fn simulate(&self, _: QueueId, fr: &FlavorResource, _: i64) -> (Possibility, usize) {
        self.0.get(fr).copied().unwrap_or((Possibility::Preempt, 0))
    }
}

fn flavor_resource(key: &str) -> FlavorResource {
    let (f, r) = key.split_once('/').expect("FLAVOR/RESOURCE");
    (f.to_string(), r.to_string())
}

/// A quantity in Kueue's units for the resource (cpu in millis).
fn amount(resource: &str, q: &str) -> i64 {
    let q: Quantity = q.parse().expect("quantity");
    if resource == resources::CPU {
        q.milli_value()
    } else {
        q.value()
    }
}

fn amounts(map: &BTreeMap<String, String>) -> BTreeMap<FlavorResource, i64> {
    (map.iter())
        .map(|(k, v)| {
            let fr = flavor_resource(k);
            let a = amount(&fr.1, v);
            (fr, a)
        })
        .collect()
}

fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Fit => "Fit",
        Mode::Preempt => "Preempt",
        Mode::NoFit => "NoFit",
    }
}

fn run(case: &Case) -> Vec<String> {
    let mut problems = Vec::new();
    let flavors: BTreeMap<String, ResourceFlavor> = (case.flavors.iter())
        .map(|v| api::resource_flavor(v).expect("flavor"))
        .map(|f| (f.name.clone(), f))
        .collect();
    let queue = api::cluster_queue(&case.cluster_queue).expect("clusterQueue");
    let mut queues = vec![queue.clone()];
    if let Some(v) = &case.secondary_cluster_queue {
        queues.push(api::cluster_queue(v).expect("secondaryClusterQueue"));
    }
    let cohorts: Vec<_> = (case.cohorts.iter())
        .map(|v| api::cohort(v).expect("cohort"))
        .collect();
    let (mut tree, _) = QuotaTree::new(&queues, &cohorts);
    let id = tree.queue(&queue.name).unwrap();
    for (fr, v) in amounts(&case.usage) {
        tree.add_usage(id, &fr, v);
    }
    if let Some(second) = queues.get(1) {
        let sid = tree.queue(&second.name).unwrap();
        for (fr, v) in amounts(&case.secondary_usage) {
            tree.add_usage(sid, &fr, v);
        }
    }
    let oracle = TableOracle(
        (case.simulation.iter())
            .map(|(k, s)| {
                let p = match s.possibility.as_str() {
                    "NoCandidates" => Possibility::NoCandidates,
                    "Preempt" => Possibility::Preempt,
                    "Reclaim" => Possibility::Reclaim,
                    other => panic!("possibility {other}"),
                };
                (flavor_resource(k), (p, s.borrowing))
            })
            .collect(),
    );
    let gates = FeatureGates::default();
    let pod_sets: Vec<PodSet> = (case.pod_sets.iter())
        .map(|p| PodSet {
            name: p.name.clone(),
            count: p.count,
            requests: (p.requests.iter())
                .map(|(r, q)| (r.clone(), amount(r, q)))
                .collect(),
            tolerations: p.tolerations.clone(),
            node_selector: p.node_selector.clone(),
            affinity: p.affinity.clone(),
        })
        .collect();
    let assigner = Assigner {
        queue: &queue,
        id,
        tree: &tree,
        flavors: &flavors,
        oracle: &oracle,
        gates: &gates,
    };
    let got = assigner.assign(&pod_sets);
    let mut check = |what: &str, got: String, want: String| {
        if got != want {
            problems.push(format!("{what}: got {got:?}, want {want:?}"));
        }
    };
    check("mode", mode_name(got.mode()).into(), case.want.mode.clone());
    check(
        "borrowing",
        got.borrowing.to_string(),
        case.want.borrowing.to_string(),
    );
    check("message", got.message(), case.want.message.clone());
    check(
        "usage",
        format!("{:?}", got.usage),
        format!("{:?}", amounts(&case.want.usage)),
    );
    check(
        "pod sets",
        got.pod_sets.len().to_string(),
        case.want.pod_sets.len().to_string(),
    );
    for (g, w) in got.pod_sets.iter().zip(&case.want.pod_sets) {
        check("pod set name", g.name.clone(), w.name.clone());
        let flavors = |m: Vec<(String, String, String)>| format!("{m:?}");
        check(
            &format!("{} flavors", w.name),
            flavors(
                (g.flavors.iter())
                    .map(|(r, c)| (r.clone(), c.flavor.clone(), mode_name(c.mode).into()))
                    .collect(),
            ),
            flavors(
                (w.flavors.iter())
                    .map(|(r, c)| (r.clone(), c.flavor.clone(), c.mode.clone()))
                    .collect(),
            ),
        );
        check(
            &format!("{} reasons", w.name),
            format!("{:?}", g.reasons),
            format!("{:?}", w.reasons),
        );
    }
    problems
}

#[test]
fn flavor_assigner_cases_agree_with_upstream() {
    let docs =
        crate::yaml::parse_documents(CASES.to_string(), Path::new("flavor-assigner-cases.yaml"))
            .expect("case file parses");
    let mut failures = Vec::new();
    let mut ran = 0;
    for doc in docs.iter().filter(|d| !d.value.is_null()) {
        let case: Case = serde_json::from_value(doc.value.clone()).expect("case shape");
        ran += 1;
        for p in run(&case) {
            failures.push(format!("{}: {p}", case.name));
        }
    }
    assert!(ran >= 2, "only {ran} cases ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
