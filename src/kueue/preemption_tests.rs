//! Kueue's preemption tables, ported as data: `tests/data/kueue/preemption-cases.yaml`
//! (preemption_test.go `TestPreemption`) and `candidates-ordering-cases.yaml`
//! (`TestCandidatesOrdering`); each file's header documents its schema. Every mismatch of
//! every case is collected, so one run lists them all.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::api::{self, ClusterQueue};
use super::preemption::{FrBits, Holder, KeyOrder, Preemption, Preemptor, insert_in_order};
use super::quota::{QueueId, QuotaTree};
use super::tables::{amount, run_table};
use super::tests::AdmittedSpec;

const PREEMPTION_CASES: &str = include_str!("../../tests/data/kueue/preemption-cases.yaml");
const ORDERING_CASES: &str = include_str!("../../tests/data/kueue/candidates-ordering-cases.yaml");

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Shared {
    objects: Vec<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Case {
    name: String,
    #[allow(dead_code)] // documents where the case comes from
    source: String,
    queues: String,
    #[serde(default)]
    objects: Vec<Value>,
    #[serde(default)]
    admitted: Vec<AdmittedSpec>,
    incoming: Incoming,
    #[serde(rename = "targetCQ")]
    target_cq: String,
    want: Want,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Incoming {
    #[allow(dead_code)] // names the preemptor as upstream does
    name: String,
    #[serde(default)]
    priority: i32,
    #[serde(default)]
    created_at: i64,
    pod_sets: Vec<IncomingPodSet>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct IncomingPodSet {
    #[allow(dead_code)] // names the pod set as upstream does
    name: String,
    count: i64,
    requests: BTreeMap<String, String>,
    flavors: BTreeMap<String, FlavorMode>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FlavorMode {
    flavor: String,
    mode: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Want {
    preempted: BTreeMap<String, String>,
}

/// The ClusterQueues of a case, sorted by name as the loader sorts them.
fn cluster_queues(values: &[Value]) -> Vec<ClusterQueue> {
    let mut queues: Vec<ClusterQueue> = (values.iter())
        .filter(|v| v["kind"] == "ClusterQueue")
        .map(|v| api::unchecked::cluster_queue(v).expect("ClusterQueue"))
        .collect();
    queues.sort_by(|a, b| a.name.cmp(&b.name));
    queues
}

fn holders(admitted: &[AdmittedSpec], queues: &[ClusterQueue], bits: &mut FrBits) -> Vec<Holder> {
    let mut holders: Vec<Holder> = (admitted.iter())
        .map(|a| {
            let a = a.admitted();
            Holder {
                mask: bits.learn(a.usage.keys()),
                key: format!("{}/{}", a.namespace, a.name),
                key_order: 0,
                queue: (queues.iter())
                    .position(|q| q.name == a.cluster_queue)
                    .unwrap_or(usize::MAX),
                priority: a.priority,
                created: a.created,
                reserved: a.reserved,
                evicted: a.evicted,
                usage: a.usage,
            }
        })
        .collect();
    order_keys(&mut holders);
    holders
}

/// Each holder's `key_order` among the keys of `holders`.
fn order_keys(holders: &mut [Holder]) {
    let keys = KeyOrder::new(holders.iter().map(|h| h.key.clone()));
    for h in holders {
        h.key_order = keys.of(&h.key);
    }
}

fn run_case(shared: &Shared, case: &Case) -> Vec<String> {
    let mut values: Vec<Value> = (shared.objects.iter())
        .filter(|v| case.queues == "shared" || v["kind"] != "ClusterQueue")
        .cloned()
        .collect();
    values.extend(case.objects.iter().cloned());
    let queues = cluster_queues(&values);
    let cohorts: Vec<_> = (values.iter())
        .filter(|v| v["kind"] == "Cohort")
        .map(|v| api::unchecked::cohort(v).expect("Cohort"))
        .collect();
    let (mut tree, _) = QuotaTree::new(&queues, &cohorts);
    let ids: Vec<QueueId> = (queues.iter())
        .map(|q| tree.queue(&q.name).expect("queue"))
        .collect();
    let mut bits = FrBits::default();
    let holders = holders(&case.admitted, &queues, &mut bits);
    let mut by_queue = vec![Vec::new(); queues.len()];
    for (i, h) in holders.iter().enumerate() {
        insert_in_order(&mut by_queue[h.queue], &holders, i, h);
    }
    for h in &holders {
        h.add_usage(&mut tree, &ids);
    }
    // `TotalRequestsFor`: count × request per assigned flavor; zero requests need no flavor.
    let mut usage = BTreeMap::new();
    let mut frs = BTreeSet::new();
    for ps in &case.incoming.pod_sets {
        for (resource, q) in &ps.requests {
            let v = amount(resource, q).saturating_mul(ps.count);
            let Some(f) = ps.flavors.get(resource) else {
                continue;
            };
            let fr = (f.flavor.clone(), resource.clone());
            if f.mode == "Preempt" {
                frs.insert(fr.clone());
            }
            if v != 0 {
                *usage.entry(fr).or_insert(0) += v;
            }
        }
    }
    let Some(queue) = queues.iter().position(|q| q.name == case.target_cq) else {
        return vec![format!("unknown target ClusterQueue {}", case.target_cq)];
    };
    let preemptor = Preemptor {
        queue,
        priority: case.incoming.priority,
        created: case.incoming.created_at,
    };
    let before = tree.clone();
    let preemption = Preemption {
        queues: &queues,
        ids: &ids,
        holders: &holders,
        by_queue: &by_queue,
        fr_bits: &bits,
    };
    let targets = preemption.targets(&mut tree, &preemptor, &usage, &frs);
    let got: BTreeMap<String, String> = (targets.iter())
        .map(|t| {
            let name = holders[t.holder].key.trim_start_matches('/').to_string();
            (name, t.reason.as_str().to_string())
        })
        .collect();
    let mut problems = Vec::new();
    if got != case.want.preempted {
        problems.push(format!("preempted {got:?}, want {:?}", case.want.preempted));
    }
    if format!("{tree:?}") != format!("{before:?}") {
        problems.push("the snapshot was not restored".into());
    }
    problems
}

#[test]
fn preemption_cases_agree_with_upstream() {
    let (ran, failures) = run_table(
        "preemption-cases.yaml",
        PREEMPTION_CASES,
        |c: &Case| &c.name,
        run_case,
    );
    assert!(ran >= 30, "only {ran} cases ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct OrderingCase {
    name: String,
    #[allow(dead_code)] // documents where the case comes from
    source: String,
    #[serde(rename = "preemptorCQ")]
    preemptor_cq: String,
    workloads: Vec<OrderingWorkload>,
    want: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct OrderingWorkload {
    name: String,
    cluster_queue: String,
    #[serde(default)]
    priority: i32,
    #[serde(default)]
    admitted_at: i64,
    #[serde(default)]
    evicted: bool,
}

/// The candidates of a preemptor whose queue takes any workload of its own and of its cohort:
/// the order `targets` tries them in is `CandidatesOrdering`.
#[test]
fn candidates_ordering_agrees_with_upstream() {
    let docs = crate::yaml::parse_documents(
        ORDERING_CASES.to_string(),
        Path::new("candidates-ordering-cases.yaml"),
    )
    .expect("case file parses");
    let (mut failures, mut ran) = (Vec::new(), 0);
    for doc in docs.iter().filter(|d| !d.value.is_null()) {
        let case: OrderingCase = serde_json::from_value(doc.value.clone())
            .unwrap_or_else(|e| panic!("case shape: {e}: {}", doc.value["name"]));
        ran += 1;
        let mut names: Vec<String> = vec![case.preemptor_cq.clone()];
        names.extend(case.workloads.iter().map(|w| w.cluster_queue.clone()));
        names.sort();
        names.dedup();
        let queues: Vec<ClusterQueue> = (names.iter())
            .map(|n| ClusterQueue {
                name: n.clone(),
                ..ClusterQueue::default()
            })
            .collect();
        let queue_of = |n: &str| queues.iter().position(|q| q.name == n).expect("queue");
        let mut holders: Vec<Holder> = (case.workloads.iter())
            .map(|w| Holder {
                key: w.name.clone(),
                key_order: 0,
                queue: queue_of(&w.cluster_queue),
                priority: w.priority,
                created: 0,
                reserved: w.admitted_at,
                evicted: w.evicted,
                mask: 0,
                usage: BTreeMap::new(),
            })
            .collect();
        order_keys(&mut holders);
        let mut order: Vec<usize> = (0..holders.len()).collect();
        let preemption = Preemption {
            queues: &queues,
            ids: &[],
            holders: &holders,
            by_queue: &[],
            fr_bits: &FrBits::default(),
        };
        let preemptor = queue_of(&case.preemptor_cq);
        order.sort_by(|&a, &b| preemption.order(preemptor, a, b));
        let got: Vec<String> = order.iter().map(|&i| holders[i].key.clone()).collect();
        if got != case.want {
            failures.push(format!(
                "{}: order {got:?}, want {:?}",
                case.name, case.want
            ));
        }
    }
    assert!(ran >= 5, "only {ran} cases ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
