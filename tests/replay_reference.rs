//! What a replay does to stay fast and small must change nothing: it re-checks a pending
//! pod's failed cycle on the nodes that changed since instead of running it in full
//! (`sched::cycle::recheck`), and it forgets the groups of bound pods once empty
//! (`Scheduler::forget_empty_groups`). Every replay here runs both ways
//! (`SchedulerConfig::reference_run`) and must write the same report and the same pod records
//! — waits, messages, attempts, preemptions, nominations.

mod common;

use std::collections::BTreeMap;

use common::cli::tempdir;
use common::replay::{load, replay_scenario, repo};
use proptest::prelude::*;
use schedsim::load::Scenario;

/// The report (as JSON) and every pod's record, replayed with failed cycles re-checked and
/// run in full.
fn both_ways(scenario: &Scenario) -> [(String, String); 2] {
    [false, true].map(|full| {
        let mut s = scenario.clone();
        s.config.reference_run = full;
        let (report, pods) = replay_scenario(&s);
        let pods: BTreeMap<_, _> = pods
            .into_iter()
            .map(|(k, r)| (k, format!("{r:?}")))
            .collect();
        (
            serde_json::to_string_pretty(&report).unwrap(),
            format!("{pods:#?}"),
        )
    })
}

fn assert_same(scenario: &Scenario) {
    let [rechecked, full] = both_ways(scenario);
    assert_eq!(rechecked.0, full.0, "{}: reports differ", scenario.name);
    assert_eq!(rechecked.1, full.1, "{}: pod records differ", scenario.name);
}

/// The bundled openb replay (8,152 pods, a thousand of them retried while GPUs are short) and
/// the test traces with preemption, gangs and Kueue.
#[test]
fn the_test_replays_are_the_same_either_way() {
    for file in [
        "scenarios/replay/openb-default.yaml",
        "tests/data/replay/preemption.yaml",
        "tests/data/replay/small-trace.yaml",
        "tests/data/replay/kueue-trace.yaml",
        "tests/data/replay/two-nodes-five-jobs.yaml",
    ] {
        assert_same(&load(&repo(file)));
    }
}

/// A random cluster of GPU nodes, some tainted, some listing no GPUs, in zones the node tree
/// interleaves (so its walk is not in node order), and random jobs with priorities and grace
/// periods: requests in CPU and GPUs, so that a node's reason changes as pods come and go
/// (`Insufficient cpu`, `Insufficient nvidia.com/gpu`, both) and preemption finds victims on
/// some nodes and none on others.
fn random_scenario(nodes: &[(u8, u8, bool)], jobs: &[Job]) -> String {
    let mut s = String::from(
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: random}\nspec:\n  replay: {}\n  nodes:\n",
    );
    for (i, (gpus, cpus, tainted)) in nodes.iter().enumerate() {
        let taints = match tainted {
            true => ", spec: {taints: [{key: reserved, effect: NoSchedule}]}",
            false => "",
        };
        let gpus = match gpus {
            0 => String::new(),
            n => format!(", nvidia.com/gpu: \"{n}\""),
        };
        let zone = (i / 2) % 3;
        s += &format!(
            "    - {{apiVersion: v1, kind: Node, metadata: {{name: n{i}, labels: {{topology.kubernetes.io/zone: z{zone}}}}}{taints}, status: {{allocatable: {{cpu: \"{cpus}\", memory: 64Gi, pods: \"110\"{gpus}}}}}}}\n"
        );
    }
    s += "  workloads:\n";
    for (i, j) in jobs.iter().enumerate() {
        let tolerations = match j.tolerates {
            true => "tolerations: [{key: reserved, operator: Exists}], ",
            false => "",
        };
        s += &format!(
            "    - {{apiVersion: v1, kind: Pod, metadata: {{name: p{i}, annotations: {{schedsim.io/arrival: \"{}s\", schedsim.io/duration: \"{}s\"}}}}, spec: {{priority: {}, terminationGracePeriodSeconds: {}, {tolerations}containers: [{{name: c, image: i, resources: {{requests: {{cpu: \"{}\", nvidia.com/gpu: \"{}\"}}, limits: {{nvidia.com/gpu: \"{}\"}}}}}}]}}}}\n",
            j.at,
            j.run,
            j.priority * 100,
            j.grace,
            j.cpus,
            j.gpus,
            j.gpus
        );
    }
    s
}

#[derive(Debug, Clone)]
struct Job {
    at: u16,
    run: u16,
    cpus: u8,
    gpus: u8,
    priority: i32,
    grace: u8,
    tolerates: bool,
}

fn job() -> impl Strategy<Value = Job> {
    (
        (0u16..900, 1u16..1200),
        (1u8..=12, 0u8..=4),
        (0i32..3, 0u8..40, any::<bool>()),
    )
        .prop_map(
            |((at, run), (cpus, gpus), (priority, grace, tolerates))| Job {
                at,
                run,
                cpus,
                gpus,
                priority,
                grace,
                tolerates,
            },
        )
}

/// [`random_scenario`] replayed both ways, in a fresh directory named `dir`.
fn same_either_way(dir: &str, nodes: &[(u8, u8, bool)], jobs: &[Job]) -> Result<(), TestCaseError> {
    let dir = tempdir(dir);
    let file = dir.join("random.yaml");
    std::fs::write(&file, random_scenario(nodes, jobs)).unwrap();
    let [rechecked, full] = both_ways(&load(&file));
    prop_assert_eq!(rechecked.0, full.0);
    prop_assert_eq!(rechecked.1, full.1);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    #[test]
    fn random_replays_are_the_same_either_way(
        nodes in prop::collection::vec((1u8..=8, 4u8..=16, prop::bool::weighted(0.2)), 1..7),
        jobs in prop::collection::vec(job(), 1..40),
    ) {
        same_either_way("replay-recheck", &nodes, &jobs)?;
    }

    /// Clusters large enough for kube-scheduler to sample (over 100 nodes, so a Filter pass
    /// stops once enough are feasible), some nodes listing no GPUs: the pass that skips nodes
    /// without room for a pod's GPUs (`sched::device_room`) finds what the full pass finds.
    #[test]
    fn a_walk_over_the_nodes_with_room_finds_the_same_nodes(
        nodes in prop::collection::vec((0u8..=4, 4u8..=16, prop::bool::weighted(0.1)), 100..200),
        jobs in prop::collection::vec(job(), 1..120),
    ) {
        same_either_way("replay-room", &nodes, &jobs)?;
    }
}

/// Thousands of short jobs, each labelling its pods with its own name (as a Job's controller
/// does), on two zones: their groups empty and are forgotten while pods with required
/// anti-affinity and `DoNotSchedule` spread constraints keep reading the groups left, and
/// label sets seen again (every third pod has only the shared label) come back.
#[test]
fn forgetting_empty_groups_changes_no_placement() {
    let mut s = String::from(
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: groups}\nspec:\n  replay: {}\n  nodes:\n",
    );
    for i in 0..4 {
        s += &format!(
            "    - {{apiVersion: v1, kind: Node, metadata: {{name: n{i}, labels: {{kubernetes.io/hostname: n{i}, topology.kubernetes.io/zone: z{}}}}}, status: {{allocatable: {{cpu: \"8\", memory: 64Gi, pods: \"110\"}}}}}}\n",
            i % 2
        );
    }
    s += "  workloads:\n";
    for i in 0..900 {
        let app = ["a", "b", "c"][i % 3];
        let labels = match i % 3 {
            0 => format!("{{app: {app}}}"),
            _ => format!("{{app: {app}, job: j{i}}}"),
        };
        let constraints = match i % 5 {
            0 => {
                "affinity: {podAntiAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {matchLabels: {app: a}}, topologyKey: kubernetes.io/hostname}]}}, "
            }
            1 => {
                "topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: DoNotSchedule, labelSelector: {matchLabels: {app: b}}}], "
            }
            _ => "",
        };
        s += &format!(
            "    - {{apiVersion: v1, kind: Pod, metadata: {{name: p{i}, labels: {labels}, annotations: {{schedsim.io/arrival: \"{}s\", schedsim.io/duration: \"{}s\"}}}}, spec: {{{constraints}containers: [{{name: c, image: i, resources: {{requests: {{cpu: \"{}\"}}}}}}]}}}}\n",
            i * 2,
            30 + (i * 7919) % 300,
            1 + i % 3
        );
    }
    let dir = tempdir("replay-groups");
    let file = dir.join("groups.yaml");
    std::fs::write(&file, s).unwrap();
    assert_same(&load(&file));
}
