//! Gang scheduling: the bundled `gangs` scenario and the Permit-timeout path, asserted pod by
//! pod (the scenario snapshots hold the full text; these say what must be true of it).

use std::path::PathBuf;

use schedsim::load::{self, LoadOptions};
use schedsim::report::model::{PodReport, ScenarioReport};
use schedsim::sched::PodPhase;

fn run(file: &str) -> ScenarioReport {
    let loaded = load::load_files(&[PathBuf::from(file)], &LoadOptions::default());
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    schedsim::simulate(&loaded.scenarios[0])
}

fn pods_of<'a>(r: &'a ScenarioReport, prefix: &str) -> Vec<&'a PodReport> {
    r.pods
        .iter()
        .filter(|p| p.name.starts_with(prefix))
        .collect()
}

#[test]
fn a_gang_that_does_not_fully_fit_binds_nothing() {
    let r = run("scenarios/gangs.yaml");
    let pretrain = pods_of(&r, "llm-pretrain-");
    assert_eq!(pretrain.len(), 3);
    assert!(
        pretrain
            .iter()
            .all(|p| p.status == PodPhase::Unschedulable && p.node.is_none())
    );
    assert_eq!(pretrain[0].message, "optimistic rejection in PostFilter");
    assert_eq!(pretrain[1].message, "optimistic rejection in PostFilter");
    assert!(pretrain[2].message.ends_with(
        ", PodGroup ml/llm-pretrain gets rejected due to Pod llm-pretrain-node-0-2 is unschedulable even after PostFilter"
    ), "{}", pretrain[2].message);
    let note = pretrain[0].gang.as_ref().unwrap();
    assert_eq!(
        (note.min_member, note.members, note.placed, note.bound),
        (3, 3, 2, false)
    );
    // The next gang gets the GPUs the rolled-back one never held.
    assert!(
        pods_of(&r, "finetune-")
            .iter()
            .all(|p| p.status == PodPhase::Scheduled)
    );
}

#[test]
fn without_a_gang_policy_the_same_shape_is_stuck() {
    let r = run("scenarios/gangs.yaml");
    let stuck: Vec<_> = r
        .stuck_workloads
        .iter()
        .map(|w| w.workload.as_str())
        .collect();
    assert_eq!(stuck, ["eval-no-gang"]);
}

#[test]
fn coscheduling_pre_filter_messages_are_upstream_s() {
    let r = run("scenarios/gangs.yaml");
    let init = &pods_of(&r, "curate-then-train-dataset-initializer-")[0];
    assert!(init.message.starts_with(
        "0/4 nodes are available: pre-filter pod curate-then-train-dataset-initializer-0-0 cannot find enough sibling pods, current pods number: 1, minMember of group: 3. "
    ), "{}", init.message);
    assert!(
        pods_of(&r, "curate-then-train-node-")
            .iter()
            .all(|p| p.status == PodPhase::Waiting)
    );
    let gap = &pods_of(&r, "llm-70b-")[0];
    assert!(gap.message.starts_with(
        "0/4 nodes are available: resource gap: map[nvidia.com/gpu:{{16 0} {<nil>}  DecimalSI}]. no new claims to deallocate, preemption: "
    ), "{}", gap.message);
    let orphan = &pods_of(&r, "orphan-")[0];
    assert_eq!(orphan.message, "PodGroup not found");
    assert!(
        pods_of(&r, "det-trial-")
            .iter()
            .all(|p| p.status == PodPhase::Scheduled)
    );
    assert!(
        pods_of(&r, "tokenize-volcano-")
            .iter()
            .all(|p| p.status == PodPhase::Scheduled)
    );
}

#[test]
fn members_waiting_at_permit_time_out_together() {
    let r = run("tests/data/gang-timeout.yaml");
    let messages: Vec<&str> = r.pods.iter().map(|p| p.message.as_str()).collect();
    assert_eq!(
        messages[0],
        "rejected due to timeout after waiting 30s at plugin Coscheduling"
    );
    assert!(
        messages[1..9]
            .iter()
            .all(|m| *m == "rejection in Unreserve")
    );
    // The tenth failed its filters; the gap (1 of 10) was within 10%, so PostFilter added nothing.
    assert!(messages[9].starts_with("0/3 nodes are available: 3 Insufficient nvidia.com/gpu."));
    assert!(!messages[9].contains("PodGroup"), "{}", messages[9]);
    assert!(r.pods.iter().all(|p| p.node.is_none()));
    assert!(
        r.nodes
            .iter()
            .all(|n| n.allocated.get("nvidia.com/gpu").copied().unwrap_or(0) == 0)
    );
}

/// `podGroupRejectPercentage` 0: any unassigned member makes PostFilter reject the waiting
/// nine at once ("optimistic rejection in PostFilter"), where the default 10 % let them wait.
#[test]
fn pod_group_reject_percentage_decides_the_optimistic_rejection() {
    let dir = std::env::temp_dir().join(format!("schedsim-gangs-pct-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("gang-timeout.yaml");
    let text = std::fs::read_to_string("tests/data/gang-timeout.yaml").unwrap();
    let config = "spec:\n  scheduler:\n    configuration:\n      apiVersion: kubescheduler.config.k8s.io/v1\n      kind: KubeSchedulerConfiguration\n      profiles:\n        - plugins:\n            queueSort: {enabled: [{name: Coscheduling}], disabled: [{name: \"*\"}]}\n            preFilter: {enabled: [{name: Coscheduling}]}\n            postFilter: {enabled: [{name: Coscheduling}]}\n            permit: {enabled: [{name: Coscheduling}]}\n            reserve: {enabled: [{name: Coscheduling}]}\n          pluginConfig: [{name: Coscheduling, args: {podGroupRejectPercentage: 0}}]\n";
    std::fs::write(&file, text.replacen("spec:\n", config, 1)).unwrap();
    let r = run(file.to_str().unwrap());
    let messages: Vec<&str> = r.pods.iter().map(|p| p.message.as_str()).collect();
    assert!(
        messages[..9]
            .iter()
            .all(|m| *m == "optimistic rejection in PostFilter"),
        "{messages:?}"
    );
    assert!(
        messages[9].ends_with(
            "PodGroup ml/ring gets rejected due to Pod ring-9 is unschedulable even after PostFilter"
        ),
        "{}",
        messages[9]
    );
}

#[test]
fn a_bad_pod_group_is_an_error_at_its_field() {
    let dir = std::env::temp_dir().join(format!("schedsim-gangs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad-pod-group.yaml");
    std::fs::write(
        &file,
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: bad}\nspec:\n  workloads:\n    - apiVersion: scheduling.x-k8s.io/v1alpha1\n      kind: PodGroup\n      metadata: {name: g}\n      spec:\n        minMember: 0\n        minResources: {cpu: lots}\n",
    )
    .unwrap();
    let loaded = load::load_files(std::slice::from_ref(&file), &LoadOptions::default());
    let errors: Vec<String> = loaded.errors.iter().map(ToString::to_string).collect();
    let file = file.display();
    assert_eq!(
        errors,
        [
            format!(
                "{file}:10:20: spec.workloads[0].spec.minMember: Invalid value: 0: spec.minMember in body should be greater than or equal to 1"
            ),
            format!(
                "{file}:11:29: spec.workloads[0].spec.minResources.cpu: \"lots\": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
            ),
        ]
    );
}
