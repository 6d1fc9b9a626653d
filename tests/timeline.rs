//! Timelines: the state after each step, pods tried again after events, and the errors a bad
//! step gets.

mod common;

use std::path::PathBuf;

use common::cli::{schedsim, tempdir};
use schedsim::load::{self, LoadOptions};
use schedsim::report::model::ScenarioReport;

fn run(file: &str) -> ScenarioReport {
    let loaded = load::load_files(&[PathBuf::from(file)], &LoadOptions::default());
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    schedsim::simulate(&loaded.scenarios[0])
}

/// `pod: before → after` for every change of a step.
fn changes(r: &ScenarioReport, step: &str) -> Vec<String> {
    let t = r
        .timeline
        .iter()
        .find(|t| t.step == step)
        .unwrap_or_else(|| panic!("no step {step:?}"));
    t.changes
        .iter()
        .map(|c| format!("{}: {} → {}", c.pod, c.before, c.after))
        .collect()
}

#[test]
fn the_bundled_timeline_moves_pods_as_its_events_say() {
    let r = run("scenarios/timeline.yaml");
    let steps: Vec<&str> = r.timeline.iter().map(|t| t.step.as_str()).collect();
    assert_eq!(
        steps,
        [
            "initial arrival",
            "data validation passed",
            "quota admitted",
            "step 3: 1 workload item(s) arrive",
            "step 4: fail a100-p4d-0",
            "autoscaler adds two p5 nodes",
            "step 6: complete pytorch-with-gates",
            "step 7: drain a100-p4d-1",
            "step 8: uncordon a100-p4d-1",
        ]
    );
    // One gate left: nothing moves; the last one removed: both trainers run.
    assert!(changes(&r, "data validation passed").is_empty());
    assert_eq!(changes(&r, "quota admitted").len(), 2);
    // The failed node's pods are evicted and pending (the pool is full), then land on the new
    // nodes.
    let failed = changes(&r, "step 4: fail a100-p4d-0");
    assert_eq!(failed.len(), 2);
    assert!(
        failed
            .iter()
            .all(|c| c.contains("Scheduled on a100-p4d-0 → Unschedulable"))
    );
    let scaled = changes(&r, "autoscaler adds two p5 nodes");
    assert!(
        scaled
            .iter()
            .all(|c| c.contains("Unschedulable → Scheduled on h100-p5-"))
    );
    // Draining moves the node's pods elsewhere; nothing is left on it.
    let drained = changes(&r, "step 7: drain a100-p4d-1");
    assert!(!drained.is_empty());
    assert!(
        drained
            .iter()
            .all(|c| c.contains("on a100-p4d-1 → Scheduled on "))
    );
    assert!(
        r.pods
            .iter()
            .all(|p| p.node.as_deref() != Some("a100-p4d-1")
                || p.status != schedsim::sched::PodPhase::Scheduled)
    );
    assert!(
        r.nodes.iter().all(|n| n.name != "a100-p4d-0"),
        "failed node is gone"
    );
}

#[test]
fn pending_gangs_and_dependents_are_retried_after_a_step() {
    let r = run("tests/data/timeline-retry.yaml");
    let initial = &r.timeline[0];
    assert_eq!(initial.pods.get("Unschedulable"), Some(&3), "{initial:?}");
    assert_eq!(initial.pods.get("Waiting"), Some(&2));
    let mut after = changes(&r, "scale up");
    after.sort();
    assert_eq!(
        after,
        [
            "ml/curated-dataset-initializer-0-0: Unschedulable → Succeeded on big-0",
            "ml/curated-node-0-0: Waiting → Scheduled on big-0",
            // JobSet's headless Service makes the system default spread apply to trainers.
            "ml/curated-node-0-1: Waiting → Scheduled on gpu-0",
            "ml/pair-0: Unschedulable → Scheduled on big-0",
            "ml/pair-1: Unschedulable → Scheduled on gpu-0",
        ]
    );
}

#[test]
fn a_bad_timeline_step_names_the_field_and_suggests() {
    let dir = tempdir("timeline");
    let file = dir.join("bad-timeline.yaml");
    std::fs::write(
        &file,
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: bad}\nspec:\n  nodes:\n    - pool: {count: 2, namePrefix: gpu-, template: {status: {allocatable: {cpu: \"8\", pods: \"10\"}}}}\n  timeline:\n    - cordon: [gpu-7, gpu-1]\n    - drain: [gpu-0]\n      uncordon: [gpu-0]\n    - complete: {workloads: [trainer]}\n",
    )
    .unwrap();
    let out = schedsim(&["run", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let f = file.display();
    for expected in [
        format!(
            "{f}:8:16: spec.timeline[0].cordon[0]: no node \"gpu-7\" (did you mean \"gpu-1\"?)"
        ),
        format!(
            "{f}:9:7: spec.timeline[1]: a timeline step needs exactly one of removeSchedulingGates, cordon, uncordon, drain, failNodes, complete, addNodes, arrive, kueue"
        ),
        format!("{f}:11:30: spec.timeline[2].complete.workloads[0]: no workload \"trainer\""),
    ] {
        assert!(
            stderr.contains(&expected),
            "missing {expected:?} in:\n{stderr}"
        );
    }
    std::fs::write(
        &file,
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: bad}\nspec:\n  timeline:\n    - cordn: [gpu-0]\n",
    )
    .unwrap();
    let out = schedsim(&["run", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!(
        "{f}:6:14: spec.timeline[0].cordn: unknown field `cordn`, expected one of `name`, `at`, `removeSchedulingGates`, `cordon`, `uncordon`, `drain`, `failNodes`, `complete`, `addNodes`, `arrive`, `kueue` (did you mean `cordon`?)"
    )));
}
