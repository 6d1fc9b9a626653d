//! Scheduler profiles from a KubeSchedulerConfiguration: scoring strategies, plugins switched
//! off, profiles chosen by schedulerName, and the errors a bad configuration gets.

mod common;

use std::path::PathBuf;

use common::cli::{ok, schedsim, tempdir};
use schedsim::load::{self, LoadOptions};
use schedsim::report::model::ScenarioReport;
use schedsim::sched::PodPhase;

fn run_with(file: &str, options: &LoadOptions) -> Vec<ScenarioReport> {
    let loaded = load::load_files(&[PathBuf::from(file)], options);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    loaded.scenarios.iter().map(schedsim::simulate).collect()
}

fn status_of<'a>(r: &'a ScenarioReport, pod: &str) -> (&'a PodPhase, Option<&'a str>, &'a str) {
    let p = r.pods.iter().find(|p| p.name == pod).unwrap();
    (&p.status, p.node.as_deref(), p.message.as_str())
}

#[test]
fn gpu_bin_packing_leaves_whole_nodes_for_the_trainers() {
    let r = run_with("scenarios/scheduler-profiles.yaml", &LoadOptions::default());
    let trainers = |s: &ScenarioReport| {
        ["finetune-trainer-0", "finetune-trainer-1"].map(|p| *status_of(s, p).0)
    };
    assert_eq!(trainers(&r[0]), [PodPhase::Unschedulable; 2]);
    assert_eq!(trainers(&r[1]), [PodPhase::Scheduled; 2]);
    // Packed: the notebooks share two nodes.
    let nodes: std::collections::BTreeSet<_> = r[1]
        .pods
        .iter()
        .filter(|p| p.name.starts_with("notebook-"))
        .filter_map(|p| p.node.clone())
        .collect();
    assert_eq!(nodes.len(), 2, "{nodes:?}");
}

#[test]
fn the_command_line_configuration_replaces_the_scenarios() {
    let options = LoadOptions {
        scheduler_config: Some("fixtures/scheduler-config/gpu-bin-packing.yaml".into()),
        ..Default::default()
    };
    let r = run_with("scenarios/scheduler-profiles.yaml", &options);
    assert_eq!(
        *status_of(&r[0], "finetune-trainer-1").0,
        PodPhase::Scheduled
    );
    // Through the binary too.
    let out = ok(&[
        "run",
        "scenarios/scheduler-profiles.yaml",
        "--format",
        "json",
        "--out",
        tempdir("profiles-cli").to_str().unwrap(),
        "--scheduler-config",
        "fixtures/scheduler-config/gpu-bin-packing.yaml",
    ]);
    assert!(!out.contains("Insufficient nvidia.com/gpu"), "{out}");
}

#[test]
fn profiles_are_chosen_by_scheduler_name() {
    let r = run_with("scenarios/scheduler-profiles.yaml", &LoadOptions::default());
    let s = &r[2];
    for p in ["packed-0", "packed-1", "packed-2"] {
        assert!(status_of(s, p).1.unwrap().starts_with("a100-"), "{p}");
    }
    for p in ["etl-0", "etl-1"] {
        assert!(status_of(s, p).1.unwrap().starts_with("cpu-"), "{p}");
    }
    let (phase, node, message) = status_of(s, "volcano-job-0");
    assert_eq!((*phase, node), (PodPhase::Unschedulable, None));
    assert_eq!(
        message,
        "schedsim: no scheduler profile is named \"volcano\" (profiles: \"default-scheduler\", \"gpu-packer\"); kube-scheduler leaves the pod to that scheduler, so it stays Pending"
    );
}

/// A scenario with one tainted node and one pod that does not tolerate it, under `config`.
fn tainted_node_scenario(dir: &std::path::Path, config: &str) -> PathBuf {
    std::fs::write(dir.join("config.yaml"), config).unwrap();
    let file = dir.join("scenario.yaml");
    std::fs::write(
        &file,
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: tainted}\nspec:\n  nodes:\n    - pool: {count: 1, namePrefix: gpu-, template: {spec: {taints: [{key: nvidia.com/gpu, effect: NoSchedule}]}, status: {allocatable: {cpu: \"8\", pods: \"10\"}}}}\n  workloads:\n    - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: busybox, resources: {requests: {cpu: \"16\"}}}]}}\n  scheduler:\n    configuration: {file: config.yaml}\n",
    )
    .unwrap();
    file
}

#[test]
fn disabled_plugins_do_not_filter_or_post_filter() {
    let dir = tempdir("profiles-disabled");
    // The pod's (node, message) under a profile with `plugins`.
    let outcome = |plugins: &str| {
        let config = format!(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n{plugins}"
        );
        let file = tainted_node_scenario(&dir, &config);
        let r = run_with(file.to_str().unwrap(), &LoadOptions::default());
        let (_, node, message) = status_of(&r[0], "p");
        (node.map(str::to_string), message.to_string())
    };
    // Everything on: the taint wins (first failing filter), preemption adds its part.
    assert_eq!(
        outcome("").1,
        "0/1 nodes are available: 1 node(s) had untolerated taint(s). no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    );
    // TaintToleration off at Filter and DefaultPreemption off: resources decide, and the one
    // PostFilter left is DynamicResources'.
    assert_eq!(
        outcome("profiles:\n- plugins:\n    filter:\n      disabled: [{name: TaintToleration}]\n    postFilter:\n      disabled: [{name: DefaultPreemption}]\n").1,
        "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate"
    );
    // Both PostFilter plugins off: the FitError alone.
    assert_eq!(
        outcome("profiles:\n- plugins:\n    filter:\n      disabled: [{name: TaintToleration}]\n    postFilter:\n      disabled: [{name: DefaultPreemption}, {name: DynamicResources}]\n").1,
        "0/1 nodes are available: 1 Insufficient cpu."
    );
    // NodeResourcesFit off too: the pod lands on the node.
    assert_eq!(
        outcome("profiles:\n- plugins:\n    multiPoint:\n      disabled: [{name: TaintToleration}, {name: NodeResourcesFit}]\n").0.as_deref(),
        Some("gpu-0")
    );
}

#[test]
fn gangs_need_a_profile_that_runs_coscheduling() {
    let with = |config: &str| {
        let options = LoadOptions {
            scheduler_config: Some(config.into()),
            ..Default::default()
        };
        let r = run_with("scenarios/gangs.yaml", &options);
        r[0].pods
            .iter()
            .filter(|p| p.name.starts_with("llm-pretrain-") && p.status == PodPhase::Scheduled)
            .count()
    };
    // scheduler-plugins' profile: the gang binds nothing.
    assert_eq!(
        with("fixtures/scheduler-config/scheduler-plugins-coscheduling.yaml"),
        0
    );
    // kube-scheduler's default profile ignores the pod-group label: two of three trainers bind.
    assert_eq!(with("fixtures/scheduler-config/docs-minimal.yaml"), 2);
}

#[test]
fn configuration_errors_point_at_the_file() {
    let dir = tempdir("profiles-errors");
    let file = tainted_node_scenario(
        &dir,
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- plugins:\n    score:\n      enabled: [{name: NodeResourceFit, weight: 2}]\n",
    );
    let out = schedsim(&["run", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    let config = dir.join("config.yaml");
    assert!(
        stderr.contains(&format!(
            "{}:6:24: profiles[0].plugins.score.enabled[0].name: unknown plugin \"NodeResourceFit\" (did you mean \"NodeResourcesFit\"?)",
            config.display()
        )),
        "{stderr}"
    );
    std::fs::remove_file(&config).unwrap();
    let out = schedsim(&["run", file.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "{}:10:27: spec.scheduler.configuration.file: cannot load \"config.yaml\"",
            file.display()
        )),
        "{stderr}"
    );
}

/// `spec.scheduler.configuration` may hold the KubeSchedulerConfiguration itself: the same
/// profile as the file gives the same placements, and an error inside it points into the
/// scenario with the full field path.
#[test]
fn an_inline_configuration_is_read_as_its_file_is() {
    let dir = tempdir("profiles-inline");
    let scenario = std::fs::read_to_string("scenarios/scheduler-profiles.yaml").unwrap();
    let config = std::fs::read_to_string("fixtures/scheduler-config/gpu-bin-packing.yaml").unwrap();
    let inline: String = config
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| format!("      {l}\n"))
        .collect();
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/");
    let text = scenario
        .replace(
            "    configuration: {file: ../fixtures/scheduler-config/gpu-bin-packing.yaml}\n",
            &format!("    configuration:\n{inline}"),
        )
        .replace("../fixtures/", fixtures);
    assert_ne!(text, scenario);
    let file = dir.join("inline.yaml");
    std::fs::write(&file, &text).unwrap();
    let placements = |reports: &[ScenarioReport]| -> Vec<(String, Option<String>)> {
        reports[1]
            .pods
            .iter()
            .map(|p| (p.name.clone(), p.node.clone()))
            .collect()
    };
    let from_file = run_with("scenarios/scheduler-profiles.yaml", &LoadOptions::default());
    let inline = run_with(file.to_str().unwrap(), &LoadOptions::default());
    assert_eq!(placements(&inline), placements(&from_file));
    // A bad weight inside it: the error names the scenario file, its line and the full path.
    let bad = text.replace("weight: 10\n", "weight: -10\n");
    assert_ne!(bad, text);
    std::fs::write(&file, &bad).unwrap();
    let loaded = load::load_files(std::slice::from_ref(&file), &LoadOptions::default());
    let errors: Vec<String> = loaded.errors.iter().map(|e| e.to_string()).collect();
    assert!(
        errors.iter().any(|e| e.contains("inline.yaml:")
            && e.contains("spec.scheduler.configuration.profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight")),
        "{errors:?}"
    );
}
