//! The podTemplateOverrides scenarios (`scenarios/overrides-*.yaml`: the operator-guide examples of
//! `shared/seeds/000` and `001`, and the cases where the docs and the code disagree), run through
//! the built binary as a user runs them. Each file is snapshotted twice: what
//! `schedsim resolve --explain` prints (the merged pod templates and where every field came from)
//! and the `run` table (placement, pending messages, the override effect). The semantic tests below
//! pin the claims the scenarios exist for, independently of snapshot review.

mod common;
use common::cli::{ok, tempdir};

use std::path::PathBuf;

use serde_json::Value;

const NODE_SELECTOR: &str = "scenarios/overrides-node-selector-merged-not-replaced.yaml";
const TOLERATIONS: &str = "scenarios/overrides-tolerations-replaced.yaml";
const MERGE_STRATEGY: &str = "scenarios/overrides-merge-strategy.yaml";

/// A fresh report folder for `run --out`.
fn out_dir(tag: &str) -> String {
    tempdir(&format!("overrides-{tag}"))
        .to_str()
        .unwrap()
        .to_string()
}

fn json(args: &[&str]) -> Value {
    serde_json::from_str(&ok(args)).expect("JSON output")
}

/// `scenarios/overrides-*.yaml`, sorted, as paths relative to the crate root.
fn override_scenarios() -> Vec<String> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios");
    let mut files: Vec<String> = std::fs::read_dir(&dir)
        .expect("scenarios/ exists")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("overrides-") && n.ends_with(".yaml"))
        .map(|n| format!("scenarios/{n}"))
        .collect();
    files.sort();
    files
}

/// The replicated job `name` of the only TrainJob in a `resolve --format json` output.
fn replicated_job<'a>(resolved: &'a Value, name: &str) -> &'a Value {
    let jobs = resolved["trainJobs"][0]["replicatedJobs"]
        .as_array()
        .expect("replicatedJobs");
    jobs.iter()
        .find(|j| j["name"] == name)
        .unwrap_or_else(|| panic!("no replicated job {name:?} in {resolved:#}"))
}

#[test]
fn every_override_scenario_matches_its_snapshots() {
    let files = override_scenarios();
    assert!(
        files.len() >= 10,
        "expected the override scenarios, found {files:?}"
    );
    let out = out_dir("snapshots");
    for file in &files {
        let stem = file
            .trim_start_matches("scenarios/")
            .trim_end_matches(".yaml");
        let resolved = ok(&["resolve", file, "--explain"]);
        assert!(
            resolved.contains("podTemplateOverrides["),
            "{file}: no field attributed to an override:\n{resolved}"
        );
        insta::assert_snapshot!(format!("{stem}.resolve"), resolved);
        let table = ok(&["run", file, "--format", "table", "--out", &out]);
        insta::assert_snapshot!(format!("{stem}.run"), table);
    }
}

/// The docs say an override's nodeSelector replaces the runtime's; the code merges it per key.
#[test]
fn node_selector_is_merged_per_key() {
    let resolved = json(&["resolve", NODE_SELECTOR, "--format", "json", "--explain"]);
    let node = replicated_job(&resolved, "node");
    let selector = node["podTemplate"]["spec"]["nodeSelector"]
        .as_object()
        .expect("a nodeSelector");
    let mut keys: Vec<&str> = selector.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["accelerator", "pool", "zone"], "{selector:?}");
    assert_eq!(selector["accelerator"], "nvidia-tesla-v100");
    assert_eq!(selector["pool"], "gpu-training");
    assert_eq!(selector["zone"], "us-east-1a");
    let provenance = &node["provenance"];
    assert_eq!(
        provenance["spec.nodeSelector.accelerator"], "podTemplateOverrides[0]",
        "{provenance:#}"
    );
    assert_eq!(
        provenance["spec.nodeSelector.pool"], "runtime",
        "{provenance:#}"
    );
    assert_eq!(
        provenance["spec.nodeSelector.zone"], "runtime",
        "{provenance:#}"
    );

    // Placement: the one node with all three labels takes one trainer; the other trainer stays
    // pending although V100 nodes matching only the override's key are free.
    let out = out_dir("node-selector");
    let report = json(&["run", NODE_SELECTOR, "--format", "json", "--out", &out]);
    let scenario = &report["scenarios"][0];
    let pod = |name: &str| {
        scenario["pods"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no pod {name}"))
            .clone()
    };
    assert_eq!(pod("v100-finetune-node-0-0")["node"], "v100-1a-0");
    let pending = pod("v100-finetune-node-0-1");
    assert_eq!(pending["status"], "Unschedulable", "{pending:#}");
    let message = pending["message"].as_str().unwrap();
    assert!(
        message.contains("9 node(s) didn't match Pod's node affinity/selector"),
        "{message}"
    );
    let effect = &scenario["overrideEffects"][0];
    assert_eq!(effect["trainJob"], "v100-finetune");
    assert_eq!(
        effect["becameUnschedulable"],
        serde_json::json!(["v100-finetune-node-0-1"]),
        "{effect:#}"
    );
}

/// An override's tolerations replace the runtime's list (and a later override's list replaces an
/// earlier one), so the trainers lose the nvidia.com/gpu toleration and the GPU pools.
#[test]
fn tolerations_are_replaced_and_pods_become_unschedulable() {
    let out = out_dir("tolerations");
    let report = json(&["run", TOLERATIONS, "--format", "json", "--out", &out]);
    let effects = report["scenarios"][0]["overrideEffects"]
        .as_array()
        .expect("override effects");
    assert_eq!(effects.len(), 2, "{effects:#?}");
    for effect in effects {
        let lost = effect["becameUnschedulable"]
            .as_array()
            .unwrap_or_else(|| panic!("no becameUnschedulable in {effect:#}"));
        assert!(!lost.is_empty(), "{effect:#}");
        // Only the dataset initializer was placed (it ran to completion); no trainer was.
        assert_eq!(effect["withOverrides"]["scheduled"], 1, "{effect:#}");
    }
    assert_eq!(effects[0]["trainJob"], "llama-sft-high-priority");

    for job in ["llama-sft-high-priority", "llama-sft-two-overrides"] {
        let resolved = json(&["resolve", TOLERATIONS, "--job", job, "--format", "json"]);
        let tolerations = &replicated_job(&resolved, "node")["podTemplate"]["spec"]["tolerations"];
        assert_eq!(
            tolerations,
            &serde_json::json!([{"key": "training-workload", "operator": "Equal",
                                 "value": "high-priority", "effect": "NoSchedule"}]),
            "{job}"
        );
    }
}

/// Seed 000 "Merge Strategy": of two overrides setting serviceAccountName, the later wins.
#[test]
fn later_override_wins() {
    let resolved = json(&["resolve", MERGE_STRATEGY, "--format", "json", "--explain"]);
    let node = replicated_job(&resolved, "node");
    assert_eq!(
        node["podTemplate"]["spec"]["serviceAccountName"],
        "custom-sa"
    );
    assert_eq!(
        node["provenance"]["spec.serviceAccountName"],
        "podTemplateOverrides[1]"
    );
}

/// A list without a patch strategy (tolerations) is replaced as a whole, so every field of its
/// items comes from the override that set it. Provenance is diffed leaf by leaf at list indices,
/// so a leaf whose value happens to equal the runtime's at the same index (`effect: NoSchedule`)
/// is still attributed to `runtime`.
#[test]
fn replaced_tolerations_are_attributed_to_the_override() {
    let resolved = json(&[
        "resolve",
        TOLERATIONS,
        "--job",
        "llama-sft-high-priority",
        "--format",
        "json",
        "--explain",
    ]);
    let provenance = replicated_job(&resolved, "node")["provenance"]
        .as_object()
        .unwrap()
        .clone();
    let tolerations: Vec<_> = provenance
        .iter()
        .filter(|(path, _)| path.starts_with("spec.tolerations"))
        .collect();
    assert!(!tolerations.is_empty());
    for (path, stage) in tolerations {
        assert_eq!(stage, "podTemplateOverrides[0]", "{path}");
    }
}
