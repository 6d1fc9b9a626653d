//! Snapshot tests of every bundled scenario: each pod's placement and message, and the table a
//! person reads. A change in scheduling behaviour shows up as a snapshot diff.

mod common;

use std::path::PathBuf;

use common::cli::ok_with_threads;
use schedsim::load::{self, LoadOptions};
use schedsim::report::{RunReport, table};

fn scenario_files() -> Vec<PathBuf> {
    load::scenario_files(&[PathBuf::from("scenarios")]).expect("scenarios/ exists")
}

#[test]
fn every_bundled_scenario_loads_and_matches_its_snapshot() {
    let files = scenario_files();
    assert!(
        files.len() >= 10,
        "expected the bundled scenarios, found {files:?}"
    );
    for file in files {
        let loaded = load::load_files(std::slice::from_ref(&file), &LoadOptions::default());
        assert!(
            loaded.errors.is_empty(),
            "{}: {:?}",
            file.display(),
            loaded.errors
        );
        assert!(
            !loaded.scenarios.is_empty(),
            "{}: no Scenario documents",
            file.display()
        );
        let report = RunReport {
            scenarios: loaded.scenarios.iter().map(schedsim::simulate).collect(),
        };
        let pods: Vec<_> = report
            .scenarios
            .iter()
            .map(|s| {
                let pods: Vec<_> = s
                    .pods
                    .iter()
                    .map(|p| serde_json::json!({"pod": format!("{}/{}", p.namespace, p.name), "node": p.node, "status": p.status, "message": p.message}))
                    .collect();
                serde_json::json!({"scenario": s.name, "pods": pods})
            })
            .collect();
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        insta::assert_json_snapshot!(format!("{name}.pods"), pods);
        insta::assert_snapshot!(format!("{name}.table"), table::render(&report));
    }
}

/// Same inputs and seed give byte-identical output at any thread count.
#[test]
fn output_is_identical_at_any_thread_count() {
    let run = |threads: &str| {
        let out =
            std::env::temp_dir().join(format!("schedsim-threads-{threads}-{}", std::process::id()));
        ok_with_threads(
            &[
                "run",
                "scenarios",
                "--format",
                "json",
                "--out",
                out.to_str().unwrap(),
            ],
            threads,
        )
    };
    let one = run("1");
    assert!(!one.is_empty());
    assert!(
        one == run("2") && one == run("4"),
        "output differs between thread counts"
    );
}

/// The JSON carries every node's verdict for a pending pod, grouped by identical status.
/// The JSON report of one bundled scenario.
fn report_json(file: &str) -> serde_json::Value {
    let loaded = load::load_files(&[PathBuf::from(file)], &LoadOptions::default());
    serde_json::to_value(schedsim::simulate(&loaded.scenarios[0])).unwrap()
}

#[test]
fn json_explains_each_node() {
    let json = report_json("scenarios/gpu-taints.yaml");
    let pending = &json["pods"][0];
    assert_eq!(pending["status"], "Unschedulable");
    let verdicts = pending["verdicts"].as_array().unwrap();
    let nodes: usize = verdicts
        .iter()
        .map(|v| v["nodes"].as_array().unwrap().len())
        .sum();
    assert_eq!(
        nodes,
        json["nodes"].as_array().unwrap().len(),
        "every node has exactly one verdict"
    );
    let taint = verdicts
        .iter()
        .find(|v| v["plugin"] == "TaintToleration")
        .expect("a taint verdict");
    assert_eq!(taint["code"], "UnschedulableAndUnresolvable");
    assert_eq!(taint["reasons"][0], "node(s) had untolerated taint(s)");
    assert_eq!(json["nodes"][0]["allocatable"]["nvidia.com/gpu"], 8);
}

#[test]
fn partly_placed_workloads_are_flagged_stuck_with_what_they_hold() {
    let json = report_json("scenarios/topology-spread.yaml");
    // resnet-spread: 3 of 4 trainers bound; llm-anyway runs whole, so it is not listed.
    assert_eq!(
        json["stuckWorkloads"],
        serde_json::json!([{
            "workload": "resnet-spread",
            "namespace": "vision",
            "pods": 4,
            "scheduled": 3,
            "succeeded": 0,
            "pending": 1,
            "holding": {"nvidia.com/gpu": 24}
        }])
    );
}
