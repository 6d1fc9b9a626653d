//! SchedulingEquivalenceHashing against Kueue's own tables: the ClusterQueue's bulk moves
//! (`tests/data/kueue/equivalence-queue-cases.yaml`, cluster_queue_test.go) and the hash
//! (`tests/data/kueue/scheduling-hash-cases.yaml`, workload_test.go), both headers
//! documenting their schema; and the feature over time, in a replay's Kueue.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde::Deserialize;

use super::equivalence::Class;
use super::live::Kueue;
use super::{Objects, Requeue, State, Workload};
use crate::features::FeatureGates;
use crate::kueue::api::{ClusterQueue, QueueingStrategy, ResourceFlavor, ResourceGroup};
use crate::kueue::api::{ResourceQuota, StopPolicy};
use crate::kueue::assigner::PodSet;
use crate::kueue::tables::{PodSetSpec, pod_set, run_table};
use crate::sched::plugins::inter_pod_affinity::NamespaceLabels;

/// One ClusterQueue `cq` of `strategy` with `cpu` millicores of flavor `default`, its
/// LocalQueue `ns/lq`.
fn objects(strategy: QueueingStrategy, cpu: i64) -> Objects {
    let queue = ClusterQueue {
        name: "cq".into(),
        resource_groups: [ResourceGroup {
            covered_resources: vec!["cpu".into()],
            flavors: vec!["default".into()],
        }]
        .into(),
        quotas: [(
            ("default".to_string(), "cpu".to_string()),
            ResourceQuota {
                nominal: cpu,
                ..ResourceQuota::default()
            },
        )]
        .into(),
        queueing_strategy: strategy,
        namespace_selector: Some(Default::default()),
        stop_policy: StopPolicy::None,
        ..ClusterQueue::default()
    };
    Objects {
        flavors: [("default".to_string(), ResourceFlavor::default())].into(),
        cluster_queues: vec![queue],
        local_queues: [(("ns".to_string(), "lq".to_string()), "cq".to_string())].into(),
        ..Objects::default()
    }
}

/// A workload of `ns/lq` whose pod set `main` is one pod of `cpu` (millicores).
fn workload(name: &str, cpu: i64) -> Workload {
    Workload {
        namespace: "ns".into(),
        name: name.into(),
        queue_name: "lq".into(),
        priority: 0,
        created: 0,
        owned_by_pod: false,
        pod_sets: vec![PodSet {
            name: "main".into(),
            count: 1,
            requests: BTreeMap::from([("cpu".to_string(), cpu)]).into(),
            ..PodSet::default()
        }],
        blocked: None,
    }
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct QueueCase {
    name: String,
    #[allow(dead_code)] // documents where the case comes from
    source: String,
    #[serde(default)]
    strategy: Option<QueueingStrategy>,
    #[serde(default)]
    heap: Vec<Named>,
    #[serde(default)]
    recorded: Vec<String>,
    steps: Vec<Step>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Named {
    name: String,
    hash: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Step {
    #[serde(default)]
    bulk_move: Option<String>,
    #[serde(default)]
    push: Option<Named>,
    #[serde(default)]
    requeue: Option<Named>,
    #[serde(default)]
    reason: Option<String>,
    #[serde(default)]
    queue_inadmissible: bool,
    #[serde(default)]
    want: Option<QueueWant>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct QueueWant {
    moved: Option<usize>,
    active: Option<usize>,
    inadmissible: Option<usize>,
    recorded: Option<Vec<String>>,
}

/// The workloads a case names, in order: the heap's, then the steps'.
fn named(case: &QueueCase) -> Vec<Named> {
    let steps = (case.steps.iter()).flat_map(|s| s.push.iter().chain(&s.requeue));
    case.heap.iter().chain(steps).cloned().collect()
}

fn run_queue_case(_: &(), case: &QueueCase) -> Vec<String> {
    let mut problems = Vec::new();
    let strategy = case.strategy.unwrap_or(QueueingStrategy::BestEffortFIFO);
    let objects = objects(strategy, 64_000);
    let named = named(case);
    // Each hash a shape of its own: as many cpu as its place among the case's hashes.
    let mut hashes: Vec<&str> = Vec::new();
    let all = (case.recorded.iter().map(String::as_str))
        .chain(named.iter().map(|n| n.hash.as_str()))
        .chain(case.steps.iter().filter_map(|s| s.bulk_move.as_deref()));
    for h in all {
        if !hashes.contains(&h) {
            hashes.push(h);
        }
    }
    let cpu_of = |hash: &str| 1000 * (1 + hashes.iter().position(|h| *h == hash).unwrap() as i64);
    let workloads: Vec<Workload> = (named.iter())
        .map(|n| workload(&n.name, cpu_of(&n.hash)))
        .collect();
    let (namespaces, gates) = (NamespaceLabels::new(), FeatureGates::default());
    let mut st = State::new(&objects, Cow::Owned(workloads), &namespaces, &gates, false);
    let heap = case.heap.len();
    for w in 0..named.len() {
        st.enqueue(w, w as u64, w < heap);
    }
    let class_of = |st: &mut State, hash: &str| -> Class {
        let pod_sets = workload("", cpu_of(hash)).pod_sets;
        (st.shapes.id(&pod_sets), 0)
    };
    for h in &case.recorded {
        let class = class_of(&mut st, h);
        st.set_aside[0].insert(class);
    }
    let index = |name: &str| named.iter().position(|n| n.name == name).unwrap();
    for (i, step) in case.steps.iter().enumerate() {
        let mut moved = None;
        if let Some(h) = &step.bulk_move {
            let class = class_of(&mut st, h);
            moved = Some(st.set_aside_class(0, class));
        }
        if let Some(n) = &step.push {
            let key = st.queue_key(index(&n.name));
            st.push(0, key);
        }
        if let Some(n) = &step.requeue {
            let why = match step.reason.as_deref() {
                Some("NoFit") => Requeue::NoFit,
                Some("PreemptionNoCandidates") => Requeue::NoCandidates,
                Some("NamespaceMismatch") => Requeue::NamespaceMismatch,
                Some("Generic") => Requeue::Inactive,
                other => panic!("{}: unknown reason {other:?}", case.name),
            };
            let key = st.queue_key(index(&n.name));
            st.requeue_if_not_present(0, key, why);
        }
        if step.queue_inadmissible {
            st.requeue_inadmissible(0);
        }
        let Some(want) = &step.want else { continue };
        let mut check = |what: &str, got: usize, want: Option<usize>| {
            if let Some(want) = want
                && got != want
            {
                problems.push(format!("step {i}: {what} {got}, want {want}"));
            }
        };
        check("moved", moved.unwrap_or(0), want.moved);
        check("active", st.heaps[0].len(), want.active);
        check("inadmissible", st.parked[0].len(), want.inadmissible);
        if let Some(recorded) = &want.recorded {
            let mut got: Vec<&str> = Vec::new();
            for h in &hashes {
                let class = class_of(&mut st, h);
                if st.set_aside[0].contains(&class) {
                    got.push(h);
                }
            }
            let mut want: Vec<&str> = recorded.iter().map(String::as_str).collect();
            want.sort_by_key(|h| hashes.iter().position(|x| x == h));
            if got != want {
                problems.push(format!("step {i}: recorded {got:?}, want {want:?}"));
            }
        }
    }
    problems
}

#[test]
fn queue_cases_agree_with_upstream() {
    let (ran, problems) = run_table(
        "equivalence-queue-cases.yaml",
        include_str!("../../../tests/data/kueue/equivalence-queue-cases.yaml"),
        |c: &QueueCase| &c.name,
        run_queue_case,
    );
    assert!(ran >= 10, "only {ran} cases ran");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct HashCase {
    name: String,
    #[allow(dead_code)] // documents where the case comes from
    source: String,
    a: HashWorkload,
    b: HashWorkload,
    same: bool,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct HashWorkload {
    #[allow(dead_code)] // the identity the hash leaves out
    namespace: String,
    #[allow(dead_code)]
    name: String,
    #[serde(default)]
    priority: i32,
    pod_sets: Vec<PodSetSpec>,
}

fn run_hash_case(_: &(), case: &HashCase) -> Vec<String> {
    let objects = objects(QueueingStrategy::BestEffortFIFO, 64_000);
    let workloads: Vec<Workload> = [&case.a, &case.b]
        .into_iter()
        .map(|w| Workload {
            priority: w.priority,
            pod_sets: w.pod_sets.iter().map(pod_set).collect(),
            ..workload("", 0)
        })
        .collect();
    let (namespaces, gates) = (NamespaceLabels::new(), FeatureGates::default());
    let st = State::new(&objects, Cow::Owned(workloads), &namespaces, &gates, false);
    let same = st.class(0) == st.class(1);
    match same == case.same {
        true => Vec::new(),
        false => vec![format!("same class: {same}, want {}", case.same)],
    }
}

#[test]
fn hash_cases_agree_with_upstream() {
    let (ran, problems) = run_table(
        "scheduling-hash-cases.yaml",
        include_str!("../../../tests/data/kueue/scheduling-hash-cases.yaml"),
        |c: &HashCase| &c.name,
        run_hash_case,
    );
    assert!(ran >= 8, "only {ran} cases ran");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// Over time: a workload equivalent to one that did not fit is set aside as it arrives,
/// until a release requeues the inadmissible workloads a batch period later and forgets the
/// class (even with none of them left); with the gate off, each is evaluated.
#[test]
fn a_replays_kueue_sets_aside_equivalent_arrivals_until_the_requeue() {
    const NO_FIT: &str = "couldn't assign flavors to pod set main: insufficient unused quota for cpu in flavor default, 4 more needed";
    let objects = objects(QueueingStrategy::BestEffortFIFO, 8_000);
    let namespaces = NamespaceLabels::new();
    let run = |gates: &FeatureGates| -> BTreeMap<&str, Vec<String>> {
        let mut k = Kueue::new(&objects, &namespaces, gates);
        let mut seen = BTreeMap::new();
        let mut slots = Vec::new();
        for name in ["a", "b", "c"] {
            slots.push(k.arrive(workload(name, 6_000)).unwrap());
        }
        k.settle(0);
        seen.insert("settled", k.messages());
        // Equivalent to the one that did not fit: set aside as it arrives, unevaluated.
        slots.push(k.arrive(workload("d", 6_000)).unwrap());
        k.settle(100);
        seen.insert("d arrived", k.messages());
        k.gone(slots[0]);
        k.settle(200);
        seen.insert("timer", vec![format!("{:?}", k.next_timer())]);
        assert!(k.requeue_due(1_200));
        k.settle(1_200);
        seen.insert("requeued", k.messages());
        // The requeue forgot the class: once it is recorded again and every workload of it
        // is gone, the next requeue forgets it too, and an equivalent arrival is evaluated.
        for &w in &slots[1..] {
            k.gone(w);
        }
        k.settle(1_300);
        assert!(!k.requeue_due(2_300));
        let e = k.arrive(workload("e", 6_000)).unwrap();
        k.settle(2_400);
        seen.insert("e arrived", vec![k.message(e)]);
        seen
    };
    let on = run(&FeatureGates::default());
    let admitted = "Quota reserved in ClusterQueue cq";
    assert_eq!(on["settled"], [admitted, NO_FIT, ""]);
    assert_eq!(on["d arrived"], [admitted, NO_FIT, "", ""]);
    assert_eq!(on["timer"], ["Some(1200)"]);
    // b is admitted in a's place; c did not fit, and d was set aside with it.
    assert_eq!(on["requeued"][1..], [admitted, NO_FIT, ""]);
    assert_eq!(on["e arrived"], [admitted]);
    let off = run(&FeatureGates {
        scheduling_equivalence_hashing: false,
        ..FeatureGates::default()
    });
    assert_eq!(off["settled"], [admitted, NO_FIT, NO_FIT]);
    assert_eq!(off["d arrived"], [admitted, NO_FIT, NO_FIT, NO_FIT]);
    assert_eq!(off["requeued"][1..], [admitted, NO_FIT, NO_FIT]);
    assert_eq!(off["e arrived"], [admitted]);
}
