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
        // Replays have their own snapshots (tests/replay.rs).
        if loaded.scenarios.iter().all(|s| s.replay.is_some()) {
            continue;
        }
        let report = RunReport::new(loaded.scenarios.iter().map(schedsim::simulate).collect());
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

/// The JSON report of one bundled scenario, with or without node lists.
fn report_json_with(file: &str, node_lists: bool) -> serde_json::Value {
    let options = LoadOptions {
        node_lists,
        ..Default::default()
    };
    let loaded = load::load_files(&[PathBuf::from(file)], &options);
    serde_json::to_value(schedsim::simulate(&loaded.scenarios[0])).unwrap()
}

/// The JSON report of one bundled scenario.
fn report_json(file: &str) -> serde_json::Value {
    report_json_with(file, false)
}

/// A pending pod's verdicts count every node once, and the counts are the message's.
#[test]
fn json_explains_each_node() {
    let json = report_json("scenarios/pending-messages.yaml");
    let pending = &json["pods"][0];
    assert_eq!(pending["status"], "Unschedulable");
    let verdicts = pending["verdicts"].as_array().unwrap();
    let counted: u64 = verdicts.iter().map(|v| v["count"].as_u64().unwrap()).sum();
    assert_eq!(
        counted as usize,
        json["nodes"].as_array().unwrap().len(),
        "every node has exactly one verdict"
    );
    let message = pending["message"].as_str().unwrap();
    for v in verdicts {
        assert!(v.get("nodes").is_none(), "node lists only on request");
        for reason in v["reasons"].as_array().unwrap() {
            let said = format!("{} {}", v["count"], reason.as_str().unwrap());
            assert!(message.contains(&said), "{said:?} in {message:?}");
        }
    }
    let taint = verdicts
        .iter()
        .find(|v| v["plugin"] == "TaintToleration")
        .expect("a taint verdict");
    assert_eq!(taint["code"], "UnschedulableAndUnresolvable");
    assert_eq!(taint["reasons"][0], "node(s) had untolerated taint(s)");

    let listed = report_json_with("scenarios/pending-messages.yaml", true);
    for v in listed["pods"][0]["verdicts"].as_array().unwrap() {
        assert_eq!(
            v["nodes"].as_array().unwrap().len() as u64,
            v["count"].as_u64().unwrap(),
            "{v}"
        );
    }
    assert_eq!(
        listed["pods"][0]["verdicts"][0]["nodes"][0],
        "gke-ml-prod-l4-pool-7f3a9c21-2xq8"
    );
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
