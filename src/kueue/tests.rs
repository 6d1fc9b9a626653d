//! Kueue's own unit-test tables, ported as data: `tests/data/kueue/flavor-assigner-cases.yaml`
//! (flavorassigner_test.go `TestAssignFlavors`; its header documents the schema). Every
//! mismatch of every case is collected, so one run lists them all.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::admission;
use super::api::{self, FlavorResource, ResourceFlavor};
use super::assigner::{Assigner, FrName, Mode, PodSet, Possibility, PreemptionOracle};
use super::quota::{QueueId, QuotaTree};
use super::tables::{PodSetSpec, amounts, flavor_resource, pod_set, run_table};
use crate::features::FeatureGates;

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
    fn simulate(
        &self,
        _: QueueId,
        (f, r): FrName,
        _: Option<usize>,
        _: i64,
    ) -> (Possibility, usize) {
        let fr = (f.to_string(), r.to_string());
        self.0
            .get(&fr)
            .copied()
            .unwrap_or((Possibility::Preempt, 0))
    }
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
        .map(|v| api::unchecked::resource_flavor(v).expect("flavor"))
        .map(|f| (f.name.clone(), f))
        .collect();
    let queue = api::unchecked::cluster_queue(&case.cluster_queue).expect("clusterQueue");
    let mut queues = vec![queue.clone()];
    if let Some(v) = &case.secondary_cluster_queue {
        queues.push(api::unchecked::cluster_queue(v).expect("secondaryClusterQueue"));
    }
    let cohorts: Vec<_> = (case.cohorts.iter())
        .map(|v| api::unchecked::cohort(v).expect("cohort"))
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
    let pod_sets: Vec<PodSet> = case.pod_sets.iter().map(pod_set).collect();
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
        format!("{:?}", got.usage_map()),
        format!("{:?}", amounts(&case.want.usage)),
    );
    check(
        "pod sets",
        got.pod_sets.len().to_string(),
        case.want.pod_sets.len().to_string(),
    );
    for (g, w) in got.pod_sets.iter().zip(&case.want.pod_sets) {
        check("pod set name", g.name.to_string(), w.name.clone());
        let flavors = |m: Vec<(String, String, String)>| format!("{m:?}");
        check(
            &format!("{} flavors", w.name),
            flavors(
                (got.flavors(g))
                    .map(|(r, f, c)| (r.into(), f.into(), mode_name(c.mode).into()))
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
            format!("{:?}", got.reasons(g)),
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

// scheduler_test.go `TestSchedule`: `tests/data/kueue/scheduler-cases.yaml` (its header
// documents the schema), run through `admit_cycles`.

const SCHEDULE_CASES: [(&str, &str); 2] = [
    (
        "scheduler-cases.yaml",
        include_str!("../../tests/data/kueue/scheduler-cases.yaml"),
    ),
    (
        "scheduler-preemption-cases.yaml",
        include_str!("../../tests/data/kueue/scheduler-preemption-cases.yaml"),
    ),
];

type Labels = BTreeMap<String, BTreeMap<String, String>>;

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Fixture {
    #[serde(default)]
    objects: Vec<Value>,
    #[serde(default)]
    namespaces: Labels,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScheduleCase {
    name: String,
    #[allow(dead_code)] // documents where the case comes from
    source: String,
    #[serde(default)]
    objects: Vec<Value>,
    #[serde(default)]
    namespaces: Labels,
    #[serde(default)]
    usage: BTreeMap<String, BTreeMap<String, String>>,
    #[serde(default)]
    admitted: Vec<AdmittedSpec>,
    workloads: Vec<WorkloadSpec>,
    #[serde(default)]
    cycles: Option<usize>,
    /// Gates other than their defaults (`spec.scheduler.featureGates`' names).
    #[serde(default, rename = "featureGates")]
    feature_gates: FeatureGates,
    want: ScheduleWant,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct WorkloadSpec {
    namespace: String,
    name: String,
    queue: String,
    #[serde(default)]
    priority: i32,
    #[serde(default)]
    created_at: i64,
    pod_sets: Vec<PodSetSpec>,
}

/// A workload holding quota before the cycle (the schema of the preemption tables).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct AdmittedSpec {
    #[serde(default)]
    pub namespace: String,
    pub name: String,
    pub cluster_queue: String,
    #[serde(default)]
    pub priority: i32,
    #[serde(default)]
    pub admitted_at: i64,
    #[serde(default)]
    pub created_at: i64,
    #[serde(default)]
    pub evicted: bool,
    pub usage: BTreeMap<String, String>,
}

impl AdmittedSpec {
    pub(super) fn admitted(&self) -> admission::Admitted {
        admission::Admitted {
            namespace: self.namespace.clone(),
            name: self.name.clone(),
            cluster_queue: self.cluster_queue.clone(),
            priority: self.priority,
            created: self.created_at,
            reserved: self.admitted_at,
            evicted: self.evicted,
            usage: amounts(&self.usage),
            owner: None,
            ..admission::Admitted::default()
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ScheduleWant {
    /// "ns/name" → pod set → resource → flavor.
    #[serde(default)]
    admitted: BTreeMap<String, BTreeMap<String, BTreeMap<String, String>>>,
    #[serde(default)]
    heap: Vec<String>,
    #[serde(default)]
    inadmissible: Vec<String>,
    #[serde(default)]
    messages: BTreeMap<String, String>,
    /// "ns/name" → the Preempted condition's reason.
    #[serde(default)]
    preempted: BTreeMap<String, String>,
    /// The workloads set aside unevaluated by SchedulingEquivalenceHashing (checked when
    /// given).
    #[serde(default)]
    bypassed: Option<Vec<String>>,
    /// "ns/name" → the cycle that admitted it.
    #[serde(default, rename = "admittedInCycle")]
    admitted_in_cycle: BTreeMap<String, usize>,
}

/// The objects as `Loader::kueue_objects` collects them (ClusterQueues sorted by name).
fn schedule_objects(values: &[Value]) -> admission::Objects {
    let mut objects = admission::Objects::default();
    for v in values {
        match v["kind"].as_str().unwrap_or("") {
            "ResourceFlavor" => {
                let f = api::unchecked::resource_flavor(v).expect("ResourceFlavor");
                objects.flavors.insert(f.name.clone(), f);
            }
            "ClusterQueue" => (objects.cluster_queues)
                .push(api::unchecked::cluster_queue(v).expect("ClusterQueue")),
            "Cohort" => objects
                .cohorts
                .push(api::unchecked::cohort(v).expect("Cohort")),
            "LocalQueue" => {
                let q = api::unchecked::local_queue(v).expect("LocalQueue");
                objects
                    .local_queues
                    .insert((q.namespace, q.name), q.cluster_queue);
            }
            "WorkloadPriorityClass" => {
                let c = api::unchecked::workload_priority_class(v).expect("WorkloadPriorityClass");
                objects.priority_classes.insert(c.name, c.value);
            }
            other => panic!("unexpected kind {other:?}"),
        }
    }
    objects.cluster_queues.sort_by(|a, b| a.name.cmp(&b.name));
    objects
}

fn run_schedule(shared: &Fixture, case: &ScheduleCase) -> Vec<String> {
    let mut problems = Vec::new();
    let all: Vec<Value> = (shared.objects.iter())
        .chain(&case.objects)
        .cloned()
        .collect();
    let mut objects = schedule_objects(&all);
    for (cq, usage) in &case.usage {
        objects.admitted.push(admission::Admitted {
            name: format!("usage-of-{cq}"),
            cluster_queue: cq.clone(),
            usage: amounts(usage),
            ..admission::Admitted::default()
        });
    }
    objects
        .admitted
        .extend(case.admitted.iter().map(AdmittedSpec::admitted));
    let mut namespaces = shared.namespaces.clone();
    namespaces.extend(case.namespaces.clone());
    let workloads: Vec<admission::Workload> = (case.workloads.iter())
        .map(|w| admission::Workload {
            namespace: w.namespace.clone(),
            name: w.name.clone(),
            queue_name: w.queue.clone(),
            priority: w.priority,
            created: w.created_at,
            owned_by_pod: false,
            pod_sets: w.pod_sets.iter().map(pod_set).collect(),
            blocked: None,
        })
        .collect();
    let got = admission::admit_cycles(
        &objects,
        &workloads,
        &namespaces,
        &case.feature_gates,
        case.cycles.unwrap_or(1),
    );
    let keys: Vec<String> = (workloads.iter())
        .map(|w| format!("{}/{}", w.namespace, w.name))
        .collect();
    let want = &case.want;
    let admitted_keys: Vec<String> = (case.admitted.iter())
        .map(|a| format!("{}/{}", a.namespace, a.name))
        .collect();
    let mut got_preempted = BTreeMap::new();
    for e in &got.evictions {
        let key = match e.victim {
            admission::Victim::Queued(w) => keys[w].clone(),
            admission::Victim::Admitted(a) => admitted_keys
                .get(a.wrapping_sub(case.usage.len()))
                .cloned()
                .unwrap_or_else(|| format!("usage #{a}")),
        };
        got_preempted.insert(key, e.reason.as_str().to_string());
    }
    if got_preempted != want.preempted {
        problems.push(format!(
            "preempted {got_preempted:?}, want {:?}",
            want.preempted
        ));
    }
    let named = (want.admitted.keys())
        .chain(&want.heap)
        .chain(&want.inadmissible)
        .chain(want.messages.keys());
    for key in named {
        if !keys.contains(key) && !admitted_keys.contains(key) {
            problems.push(format!("want names unknown workload {key}"));
        }
    }
    for (key, d) in keys.iter().zip(&got.decisions) {
        let got_flavors = d.admitted.as_ref().map(|(_, a)| {
            (a.pod_sets.iter())
                .map(|ps| {
                    let flavors = (a.flavors(ps))
                        .map(|(r, f, _)| (r.to_string(), f.to_string()))
                        .collect::<BTreeMap<_, _>>();
                    (ps.name.to_string(), flavors)
                })
                .collect::<BTreeMap<_, _>>()
        });
        let want_flavors = want.admitted.get(key).cloned();
        if got_flavors != want_flavors {
            problems.push(format!(
                "{key}: admitted {got_flavors:?}, want {want_flavors:?} ({:?})",
                d.message
            ));
        }
        let want_waiting = if want.heap.contains(key) {
            admission::Waiting::Heap
        } else if want.inadmissible.contains(key) {
            admission::Waiting::Inadmissible
        } else {
            admission::Waiting::Nowhere
        };
        if d.waiting != want_waiting {
            problems.push(format!(
                "{key}: waiting {:?}, want {want_waiting:?} ({:?})",
                d.waiting, d.message
            ));
        }
        if let Some(m) = want.messages.get(key)
            && *m != d.message.text()
        {
            problems.push(format!("{key}: message {:?}, want {m:?}", d.message));
        }
        if let Some(bypassed) = &want.bypassed
            && d.bypassed != bypassed.contains(key)
        {
            problems.push(format!("{key}: bypassed {}", d.bypassed));
        }
        if let Some(&c) = want.admitted_in_cycle.get(key)
            && d.admitted.as_ref().map(|(cycle, _)| *cycle) != Some(c)
        {
            problems.push(format!(
                "{key}: admitted {:?}, want in cycle {c}",
                d.admitted
            ));
        }
    }
    problems
}

/// Kueue's integration tests of SchedulingEquivalenceHashing (`tests/data/kueue/
/// equivalence-cases.yaml`), run until admission settles, with the gate off for contrast.
#[test]
fn equivalence_cases_agree_with_upstream() {
    let (ran, problems) = run_table(
        "equivalence-cases.yaml",
        include_str!("../../tests/data/kueue/equivalence-cases.yaml"),
        |c: &ScheduleCase| &c.name,
        run_schedule,
    );
    assert!(ran >= 4, "only {ran} cases ran");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn schedule_cases_agree_with_upstream() {
    let mut failures = Vec::new();
    for (file, text) in SCHEDULE_CASES {
        let (ran, mut problems) = run_table(file, text, |c: &ScheduleCase| &c.name, run_schedule);
        assert!(ran >= 10, "{file}: only {ran} cases ran");
        failures.append(&mut problems);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
