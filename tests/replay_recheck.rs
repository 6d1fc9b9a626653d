//! A replay re-checks a pending pod's failed cycle on the nodes that changed since, instead of
//! running it in full (`sched::cycle::recheck`). The re-check must change nothing: every
//! replay here runs both ways (`SchedulerConfig::full_failed_cycles`) and must write the same
//! report and the same pod records — waits, messages, attempts, preemptions, nominations.

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
        s.config.full_failed_cycles = full;
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

/// A random cluster of GPU nodes, some tainted, and random jobs with priorities and grace
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
        s += &format!(
            "    - {{apiVersion: v1, kind: Node, metadata: {{name: n{i}}}{taints}, status: {{allocatable: {{cpu: \"{cpus}\", memory: 64Gi, pods: \"110\", nvidia.com/gpu: \"{gpus}\"}}}}}}\n"
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

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]
    #[test]
    fn random_replays_are_the_same_either_way(
        nodes in prop::collection::vec((1u8..=8, 4u8..=16, prop::bool::weighted(0.2)), 1..7),
        jobs in prop::collection::vec(job(), 1..40),
    ) {
        let dir = tempdir("replay-recheck");
        let file = dir.join("random.yaml");
        std::fs::write(&file, random_scenario(&nodes, &jobs)).unwrap();
        let [rechecked, full] = both_ways(&load(&file));
        prop_assert_eq!(rechecked.0, full.0);
        prop_assert_eq!(rechecked.1, full.1);
    }
}
