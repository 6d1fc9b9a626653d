//! Kueue end to end: objects refused as their CRDs refuse them (with positions), the reasons a
//! workload waits before quota is counted, the flavors injected into admitted pods and
//! TrainJobs (with `resolve --explain` provenance), and the report's Kueue block.

mod common;

use common::cli::{ok, schedsim};
use serde_json::Value;

fn run_json(path: &str) -> Value {
    serde_json::from_str(&ok(&["run", path, "--format", "json"])).expect("JSON report")
}

fn kueue_workload<'a>(report: &'a Value, name: &str) -> &'a Value {
    (report["scenarios"][0]["kueue"]["workloads"]
        .as_array()
        .unwrap()
        .iter())
    .find(|w| w["name"] == name)
    .unwrap_or_else(|| panic!("no Kueue workload {name}"))
}

fn pod<'a>(report: &'a Value, name: &str) -> &'a Value {
    (report["scenarios"][0]["pods"].as_array().unwrap().iter())
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no pod {name}"))
}

#[test]
fn kueue_objects_are_refused_as_their_crds_refuse_them() {
    let out = schedsim(&["run", "tests/data/kueue/bad-kueue.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for expected in [
        "bad-kueue.yaml:13:24: spec.objects[1].metadata.name: resourceflavors.kueue.x-k8s.io \"default\" already exists",
        "spec.objects[2].spec: Invalid value: \"object\": borrowingLimit must be nil when cohort is empty",
        "spec.objects[3].spec.resourceGroups[0].flavors[0].resources[0].name: Invalid value: \"memory\": must match the name in coveredResources",
        "spec.objects[3].spec.resourceGroups[0].flavors[0].resources[1].nominalQuota: Invalid value: \"-1\": must be greater than or equal to 0",
        "spec.objects[3].spec.resourceGroups[0].flavors[0].resources[1].lendingLimit: Invalid value: \"2\": must be less than or equal to the nominalQuota",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in:\n{stderr}"
        );
    }
    // The webhook never sees an object its CRD refused.
    assert!(
        !stderr.contains("spec.objects[2].spec.resourceGroups"),
        "{stderr}"
    );
}

#[test]
fn workloads_wait_in_kueue_with_its_own_messages() {
    let r = run_json("tests/data/kueue/queues.yaml");
    let cases = [
        (
            "no-local-queue",
            "Inadmissible",
            "LocalQueue missing doesn't exist",
        ),
        (
            "no-cluster-queue",
            "Inadmissible",
            "ClusterQueue gone doesn't exist",
        ),
        (
            "selector",
            "Pending",
            "workload namespace doesn't match ClusterQueue selector",
        ),
        (
            "no-priority-class",
            "WorkloadPriorityClassNotFound",
            "WorkloadPriorityClass \"nope\" not found",
        ),
        (
            "admitted",
            "QuotaReserved",
            "Quota reserved in ClusterQueue open",
        ),
    ];
    for (name, reason, message) in cases {
        let w = kueue_workload(&r, name);
        assert_eq!(w["reason"], reason, "{name}: {w}");
        assert_eq!(w["message"], message, "{name}: {w}");
        // Pods Kueue has not admitted keep its scheduling gate.
        let p = pod(&r, name);
        let gated = p["status"] == "SchedulingGated";
        assert_eq!(gated, name != "admitted", "{name}: {p}");
    }
    // The admitted pod got the flavor's node selector: it lands on n1, not the emptier n2.
    assert_eq!(pod(&r, "admitted")["node"], "n1");
    // Kueue admits a pod whose label conflicts with its own, but cannot start it.
    let conflict = kueue_workload(&r, "label-conflict");
    assert_eq!(conflict["admitted"], true);
    assert_eq!(pod(&r, "label-conflict")["status"], "SchedulingGated");
    let warnings: Vec<&str> = (r["scenarios"][0]["warnings"].as_array().unwrap().iter())
        .map(|w| w.as_str().unwrap())
        .collect();
    let warned = |text: &str| warnings.iter().any(|w| w.contains(text));
    assert!(
        warned(
            "Kueue cannot start it: invalid admission check PodSetUpdate: conflict for labels: conflict for key=kueue.x-k8s.io/podset, value1=other, value2=main; it stays gated"
        ),
        "{warnings:?}"
    );
    // A workload arriving on the timeline is admitted by Kueue in that step, and created then.
    let late = kueue_workload(&r, "late");
    // Cycles count on from the start's (two: admit, then set aside the rest).
    assert_eq!(
        (late["admitted"].as_bool(), late["cycle"].as_u64()),
        (Some(true), Some(3))
    );
    let later = &r["scenarios"][0]["timeline"][1];
    assert_eq!(later["changes"][0]["pod"], "ns/late");
    assert_eq!(later["changes"][0]["before"], "not created yet");
    // A pod without the label is not Kueue's.
    assert_eq!(pod(&r, "not-queued")["status"], "Scheduled");
    assert!(
        (r["scenarios"][0]["kueue"]["workloads"]
            .as_array()
            .unwrap()
            .iter())
        .all(|w| w["name"] != "not-queued")
    );
}

#[test]
fn the_report_gives_flavors_quota_and_the_admitted_but_unschedulable_trap() {
    let r = run_json("scenarios/kueue-admitted-unschedulable.yaml");
    let w1 = kueue_workload(&r, "resnet-1");
    assert_eq!(w1["podSets"][0]["flavors"]["nvidia.com/gpu"], "a100");
    assert_eq!(w1["podSets"][0]["requests"]["nvidia.com/gpu"], "16");
    assert_eq!(w1["scheduler"]["admittedButUnschedulable"], false);
    let w2 = kueue_workload(&r, "resnet-2");
    assert_eq!(w2["admitted"], true);
    assert_eq!(w2["scheduler"]["admittedButUnschedulable"], true);
    assert!(
        (w2["scheduler"]["message"].as_str().unwrap())
            .starts_with("0/4 nodes are available: 2 Insufficient nvidia.com/gpu"),
        "{w2}"
    );
    let w3 = kueue_workload(&r, "resnet-3");
    assert_eq!(w3["admitted"], false);
    assert_eq!(
        w3["message"],
        "couldn't assign flavors to pod set node: insufficient unused quota for nvidia.com/gpu in flavor a100, 16 more needed"
    );
    // A TrainJob Kueue keeps suspended has no pods.
    assert!(
        (r["scenarios"][0]["pods"].as_array().unwrap().iter()).all(|p| p["workload"] != "resnet-3")
    );
    let gpu = (r["scenarios"][0]["kueue"]["clusterQueues"][0]["resources"].as_array())
        .unwrap()
        .iter()
        .find(|q| q["resource"] == "nvidia.com/gpu")
        .unwrap()
        .clone();
    assert_eq!(gpu["usage"], "32");
    assert_eq!(gpu["nominal"], "32");
    assert_eq!(gpu["borrowed"], "0");
}

#[test]
fn an_admitted_trainjob_carries_kueues_runtime_patch_in_its_provenance() {
    let out = ok(&[
        "resolve",
        "scenarios/kueue-gpu-flavors.yaml",
        "--job",
        "team-a/llama-a",
        "--explain",
    ]);
    for expected in [
        "node-pool: a100-spot  # runtimePatches[0] (kueue.x-k8s.io/manager)",
        "key: cloud.google.com/gke-spot  # runtimePatches[0] (kueue.x-k8s.io/manager)",
        "kueue.x-k8s.io/podset: node  # runtimePatches[0] (kueue.x-k8s.io/manager)",
    ] {
        assert!(out.contains(expected), "missing {expected:?} in:\n{out}");
    }
}

#[test]
fn borrowing_workloads_are_admitted_up_to_the_borrowing_and_lending_limits() {
    let r = run_json("scenarios/kueue-cohort-borrowing.yaml");
    let admitted: Vec<&str> = (r["scenarios"][0]["kueue"]["workloads"]
        .as_array()
        .unwrap()
        .iter())
    .filter(|w| w["admitted"] == true)
    .map(|w| w["name"].as_str().unwrap())
    .collect();
    assert_eq!(admitted, ["train-1", "train-2", "train-3"]);
    assert_eq!(kueue_workload(&r, "train-3")["borrowing"], 1);
    let team_a = &r["scenarios"][0]["kueue"]["clusterQueues"][0];
    assert_eq!(team_a["name"], "team-a");
    assert_eq!(team_a["resources"][0]["borrowed"], "8");
}

#[test]
fn strict_fifo_blocks_behind_its_head_and_best_effort_does_not() {
    let r = run_json("scenarios/kueue-strict-fifo.yaml");
    let state = |ns: &str, name: &str| {
        (r["scenarios"][0]["kueue"]["workloads"]
            .as_array()
            .unwrap()
            .iter())
        .find(|w| w["namespace"] == ns && w["name"] == name)
        .map(|w| w["admitted"] == true)
        .unwrap()
    };
    assert!(!state("strict", "huge") && !state("strict", "small-1") && !state("strict", "small-2"));
    assert!(!state("best-effort", "huge"));
    assert!(state("best-effort", "small-1") && state("best-effort", "small-2"));
}

#[test]
fn kueue_preempts_running_workloads_by_reclamation_and_priority_and_their_pods_go() {
    let r = run_json("scenarios/kueue-preemption.yaml");
    let k = &r["scenarios"][0]["kueue"];
    let evictions = k["evictions"].as_array().unwrap();
    let seen: Vec<(&str, &str, &str, &str)> = (evictions.iter())
        .map(|e| {
            (
                e["victim"].as_str().unwrap(),
                e["preemptor"].as_str().unwrap(),
                e["reason"].as_str().unwrap(),
                e["pods"][0].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            (
                "research/trainjob-sweep-c-71e9b",
                "production/llm-finetune",
                "InCohortReclamation",
                "research/sweep-c-node-0-0-t2w8c"
            ),
            (
                "research/trainjob-sweep-b-8a2c4",
                "research/urgent-eval",
                "InClusterQueue",
                "research/sweep-b-node-0-0-m4k9d"
            ),
        ]
    );
    assert_eq!(
        evictions[0]["message"],
        "Preempted to accommodate a workload (UID: UNKNOWN, JobUID: UNKNOWN) due to reclamation within the cohort; preemptor path: /ml/production; preemptee path: /ml/research"
    );
    for name in ["llm-finetune", "urgent-eval"] {
        let w = kueue_workload(&r, name);
        assert_eq!(w["admitted"], true, "{w}");
        assert_eq!(w["cycle"], 2, "{w}");
    }
    // The new pods take the GPUs the evicted pods freed.
    assert_eq!(pod(&r, "llm-finetune-node-0-0")["node"], "h100-2");
    assert_eq!(pod(&r, "urgent-eval-node-0-0")["node"], "h100-1");
    let held: Vec<(&str, bool)> = (k["admittedBefore"].as_array().unwrap().iter())
        .map(|w| (w["name"].as_str().unwrap(), w["admitted"] == true))
        .collect();
    assert_eq!(
        held,
        [
            ("trainjob-sweep-a-5d1f0", true),
            ("trainjob-sweep-b-8a2c4", false),
            ("trainjob-sweep-c-71e9b", false),
            ("trainjob-serve-eval-0c3d8", true),
        ]
    );
}

#[test]
fn a_preempting_pod_stays_at_the_head_and_a_preempted_pod_is_deleted() {
    let r = run_json("tests/data/kueue/pod-reclaim.yaml");
    let a2 = kueue_workload(&r, "a2");
    assert_eq!(a2["reason"], "Preempted");
    assert_eq!(
        a2["evicted"],
        "Preempted to accommodate a workload (UID: UNKNOWN, JobUID: UNKNOWN) due to reclamation within the cohort; preemptor path: /gpus/team-b; preemptee path: /gpus/team-a"
    );
    assert!((r["scenarios"][0]["pods"].as_array().unwrap().iter()).all(|p| p["name"] != "a2"));
    // b1 waited one cycle for the eviction, at its queue's head before huge-1 and huge-2.
    let b1 = kueue_workload(&r, "b1");
    assert_eq!(
        (b1["cycle"].as_u64(), &b1["preempted"][0]),
        (Some(4), &"team-a/a2".into())
    );
    assert_eq!(pod(&r, "b1")["status"], "Scheduled");
    let a3 = kueue_workload(&r, "a3");
    assert_eq!(a3["admitted"], false);
    assert_eq!(
        a3["message"],
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor h100, 8 more needed"
    );
}

#[test]
fn workload_objects_without_quota_are_left_out_with_a_warning_and_bad_ones_are_errors() {
    let dir = common::cli::tempdir("kueue-workload-objects");
    let scenario = |workload: &str| {
        format!(
            "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {{name: s}}\nspec:\n  nodes:\n  - {{apiVersion: v1, kind: Node, metadata: {{name: node-1}}, status: {{allocatable: {{cpu: 8, nvidia.com/gpu: 8, pods: 110}}}}}}\n  objects:\n  - {{apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {{name: f}}}}\n  - apiVersion: kueue.x-k8s.io/v1beta2\n    kind: ClusterQueue\n    metadata: {{name: cq}}\n    spec:\n      namespaceSelector: {{}}\n      resourceGroups: [{{coveredResources: [nvidia.com/gpu], flavors: [{{name: f, resources: [{{name: nvidia.com/gpu, nominalQuota: 8}}]}}]}}]\n{workload}"
        )
    };
    std::fs::write(
        dir.join("pending.yaml"),
        scenario("  - {apiVersion: kueue.x-k8s.io/v1beta1, kind: Workload, metadata: {name: w, namespace: ns}, spec: {queueName: q, podSets: [{name: main, count: 1, template: {spec: {containers: [{name: c}]}}}]}}\n"),
    )
    .unwrap();
    let out = ok(&[
        "run",
        dir.join("pending.yaml").to_str().unwrap(),
        "--format",
        "json",
    ]);
    let r: Value = serde_json::from_str(&out).unwrap();
    let warnings = r["scenarios"][0]["warnings"].to_string();
    assert!(
        warnings.contains("Workload ns/w (") && warnings.contains("holds no quota"),
        "{warnings}"
    );
    std::fs::write(
        dir.join("bad.yaml"),
        scenario("  - apiVersion: kueue.x-k8s.io/v1beta2\n    kind: Workload\n    metadata: {name: w, namespace: ns}\n    spec: {podSets: [{name: main, template: {spec: {containers: [{name: c}]}}}]}\n    status:\n      admission:\n        clusterQueue: cq\n        podSetAssignments:\n        - {name: main, flavors: {nvidia.com/gpu: f}, resourceUsage: {nvidia.com/gpu: lots}}\n      conditions:\n      - {type: QuotaReserved, status: \"True\", reason: QuotaReserved, message: m, lastTransitionTime: \"2026-11-25T06:00:00Z\"}\n"),
    )
    .unwrap();
    let out = schedsim(&["run", dir.join("bad.yaml").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad.yaml:23:86: spec.objects[2].status.admission.podSetAssignments[0].resourceUsage.nvidia.com/gpu: Invalid value: \"lots\": status.admission.podSetAssignments[0].resourceUsage.nvidia.com/gpu in body should match '^(\\+|-)?"),
        "{stderr}"
    );
}

#[test]
fn kueue_cannot_admit_a_trainjob_written_with_v2_1_overrides() {
    let dir = common::cli::tempdir("kueue-v21-overrides");
    let scenario = std::fs::read_to_string("scenarios/kueue-gpu-flavors.yaml").unwrap();
    // The first TrainJob gets a v2.1 override; the runtime path is made absolute.
    let scenario = scenario
        .replace(
            "file: ../fixtures/runtimes/torch_distributed.yaml",
            &format!(
                "file: {}/fixtures/runtimes/torch_distributed.yaml",
                env!("CARGO_MANIFEST_DIR")
            ),
        )
        .replacen(
            "        runtimeRef: {name: torch-distributed}\n",
            "        runtimeRef: {name: torch-distributed}\n        podTemplateOverrides:\n          - targetJobs: [{name: node}]\n            spec: {serviceAccountName: trainer}\n",
            1,
        );
    std::fs::write(dir.join("s.yaml"), scenario).unwrap();
    let out = schedsim(&[
        "run",
        dir.join("s.yaml").to_str().unwrap(),
        "--allow-any-path",
    ]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("spec.workloads[0].spec.podTemplateOverrides: Kueue admitted this TrainJob and records the admission as a runtimePatches entry of manager kueue.x-k8s.io/manager (Trainer v2.2+), but the TrainJob uses spec.podTemplateOverrides"),
        "{stderr}"
    );
}

#[test]
fn finished_jobs_free_quota_and_late_jobs_preempt_over_the_timeline() {
    let r = run_json("scenarios/kueue-timeline.yaml");
    let s = &r["scenarios"][0];
    let change = |step: usize, pod: &str| -> (String, String) {
        let c = (s["timeline"][step]["changes"].as_array().unwrap().iter())
            .find(|c| c["pod"] == pod)
            .unwrap_or_else(|| panic!("no change of {pod} in step {step}"));
        (
            c["before"].as_str().unwrap().to_string(),
            c["after"].as_str().unwrap().to_string(),
        )
    };
    // Step 1: train-a finishes; train-c is admitted and created on the node train-a left.
    assert_eq!(
        change(1, "ml/train-c-node-0-0"),
        ("not created yet".into(), "Scheduled on h100-1".into())
    );
    // Step 2: urgent preempts train-c (its pod is deleted) and takes its node.
    assert_eq!(change(2, "ml/train-c-node-0-0").1, "Preempted");
    assert_eq!(
        change(2, "ml/urgent-node-0-0").1,
        "Scheduled on h100-1".to_string()
    );
    // Step 3: train-b finishes; train-c is admitted again and its pod created again.
    assert_eq!(
        change(3, "ml/train-c-node-0-0"),
        ("Preempted".into(), "Scheduled on h100-0".into())
    );
    let k = &s["kueue"];
    assert_eq!(kueue_workload(&r, "train-a")["finishedInStep"], 1);
    assert_eq!(kueue_workload(&r, "train-a")["admitted"], false);
    assert_eq!(kueue_workload(&r, "train-c")["admitted"], true);
    assert_eq!(k["evictions"][0]["step"], 2);
    assert_eq!(k["evictions"][0]["pods"][0], "ml/train-c-node-0-0");
    assert_eq!(k["clusterQueues"][0]["resources"][0]["usage"], "16");
}

#[test]
fn a_trainjob_preempted_before_its_pods_exist_gets_none() {
    let r = run_json("tests/data/kueue/trainjob-reclaim.yaml");
    let k = &r["scenarios"][0]["kueue"];
    assert_eq!(k["evictions"][0]["victim"], "team-a/a2");
    let a2 = kueue_workload(&r, "a2");
    // Suspended and requeued (a TrainJob is not pod-owned): pending, its eviction on record.
    assert_eq!(
        (a2["admitted"].as_bool(), a2["reason"].as_str()),
        (Some(false), Some("Pending"))
    );
    assert!(
        a2["evicted"]
            .as_str()
            .unwrap()
            .starts_with("Preempted to accommodate")
    );
    let pods: Vec<&str> = (r["scenarios"][0]["pods"].as_array().unwrap().iter())
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(pods, ["a1-node-0-0", "b1", "huge-1", "huge-2"]);
}

#[test]
fn batch_jobs_run_as_the_job_controller_runs_them_and_wait_suspended_in_kueue() {
    let r = run_json("tests/data/kueue/jobs.yaml");
    let s = &r["scenarios"][0];
    let pods: Vec<&str> = (s["pods"].as_array().unwrap().iter())
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    // min(parallelism 4, completions 8) pods of the admitted Job; none of the one Kueue keeps
    // suspended or of the suspended Job; the Indexed Job's two.
    assert_eq!(
        pods,
        [
            "plain-0", "plain-1", "sweep-0", "sweep-1", "sweep-2", "sweep-3"
        ]
    );
    let sweep = kueue_workload(&r, "sweep");
    assert_eq!(
        (sweep["kind"].as_str(), sweep["admitted"].as_bool()),
        (Some("Job"), Some(true))
    );
    assert_eq!(sweep["podSets"][0]["count"], 4);
    assert_eq!(sweep["podSets"][0]["requests"]["nvidia.com/gpu"], "8");
    let second = kueue_workload(&r, "second");
    assert_eq!(second["admitted"], false);
    assert!(
        (s["warnings"].as_array().unwrap().iter())
            .any(|w| w.as_str().unwrap().starts_with("Job held (")),
        "{}",
        s["warnings"]
    );
}

#[test]
fn a_job_is_refused_as_the_api_server_refuses_it() {
    let dir = common::cli::tempdir("bad-job");
    std::fs::write(
        dir.join("s.yaml"),
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  workloads:\n  - apiVersion: batch/v1\n    kind: Job\n    metadata: {name: j}\n    spec:\n      parallelism: -1\n      template:\n        spec:\n          containers: [{name: c, image: busybox}]\n  - apiVersion: batch/v1\n    kind: Job\n    metadata: {name: k}\n    spec:\n      completionMode: Indexed\n      parallelism: 2\n      template:\n        spec:\n          restartPolicy: Never\n          containers: [{name: c, image: busybox}]\n",
    )
    .unwrap();
    let out = schedsim(&["run", dir.join("s.yaml").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for expected in [
        "spec.workloads[0].spec.parallelism: Invalid value: -1: must be greater than or equal to 0",
        "spec.workloads[0].spec.template.spec.restartPolicy: Unsupported value: \"Always\": supported values: \"OnFailure\", \"Never\"",
        "spec.workloads[1].spec.completions: Required value: when completion mode is Indexed",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in:\n{stderr}"
        );
    }
}

/// SchedulingEquivalenceHashing, checked by hand (tests/data/kueue/equivalence.yaml's header
/// has the cycles): equal Jobs behind one that did not fit are set aside unevaluated, so the
/// small Job behind them is admitted sooner; with the gate off each is a head in turn.
#[test]
fn equal_jobs_behind_one_that_did_not_fit_are_set_aside_unevaluated() {
    const THREE_MORE: &str = "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor h100, 3 more needed";
    const RESERVED: &str = "Quota reserved in ClusterQueue team";
    // Per workload: the cycle that admitted it, its message, whether it was set aside.
    let summary = |r: &Value| -> Vec<(String, Option<u64>, String, bool)> {
        (r["scenarios"][0]["kueue"]["workloads"]
            .as_array()
            .unwrap()
            .iter())
        .map(|w| {
            (
                w["name"].as_str().unwrap().to_string(),
                w["cycle"].as_u64(),
                w["message"].as_str().unwrap().to_string(),
                w["bypassed"].as_bool().unwrap_or(false),
            )
        })
        .collect()
    };
    let row = |name: &str, cycle: Option<u64>, message: &str, bypassed: bool| {
        (name.to_string(), cycle, message.to_string(), bypassed)
    };
    let on = run_json("tests/data/kueue/equivalence.yaml");
    assert_eq!(
        summary(&on),
        [
            row("big-1", Some(1), RESERVED, false),
            row("big-2", Some(2), RESERVED, false),
            row("big-3", Some(5), RESERVED, false),
            row("big-4", None, THREE_MORE, false),
            row("big-5", None, "", true),
            row("small", Some(4), RESERVED, false),
        ]
    );
    let table = ok(&[
        "run",
        "tests/data/kueue/equivalence.yaml",
        "--format",
        "table",
    ]);
    assert!(
        table.contains("pending: set aside unevaluated, as an equivalent workload did not fit"),
        "{table}"
    );
    // The gate off: each equal Job is evaluated in a cycle of its own.
    let dir = common::cli::tempdir("kueue-equivalence-off");
    let scenario = std::fs::read_to_string("tests/data/kueue/equivalence.yaml").unwrap();
    let scenario = scenario.replacen(
        "spec:\n",
        "spec:\n  scheduler: {featureGates: {SchedulingEquivalenceHashing: false}}\n",
        1,
    );
    std::fs::write(dir.join("s.yaml"), scenario).unwrap();
    let off = run_json(dir.join("s.yaml").to_str().unwrap());
    assert_eq!(
        summary(&off),
        [
            row("big-1", Some(1), RESERVED, false),
            row("big-2", Some(2), RESERVED, false),
            row("big-3", Some(7), RESERVED, false),
            row("big-4", None, THREE_MORE, false),
            row("big-5", None, THREE_MORE, false),
            row("small", Some(6), RESERVED, false),
        ]
    );
}

/// The generated Kueue cluster with in-queue preemption added to every ClusterQueue: a
/// high-priority job preempts its queue's low-priority ones, and before it is admitted a
/// borrower of the cohort takes the freed quota, again and again (Kueue#6929). schedsim stops
/// and names the pair instead of cycling.
#[test]
fn a_preemption_livelock_is_reported_not_cycled() {
    let dir = common::cli::tempdir("kueue-livelock");
    let out = dir.to_str().unwrap();
    ok(&[
        "generate",
        "--nodes",
        "500",
        "--pods",
        "10",
        "--kueue-jobs",
        "1000",
        "--kueue-queues",
        "20",
        "--out",
        out,
    ]);
    let file = dir.join("kueue-scenario.yaml");
    let text = std::fs::read_to_string(&file).unwrap().replace(
        "        reclaimWithinCohort: Any\n",
        "        reclaimWithinCohort: Any\n        withinClusterQueue: LowerPriority\n",
    );
    std::fs::write(&file, &text).unwrap();
    let r = run_json(file.to_str().unwrap());
    let warnings = r["scenarios"][0]["warnings"].to_string();
    // SchedulingEquivalenceHashing sets aside the jobs equivalent to a head that did not
    // fit, so the heads come in another order than with the gate off (Kueue v0.17's
    // default), and another pair is the first to repeat.
    assert!(
        warnings.contains("Kueue admission does not settle: team-18/job-00538 preempted team-16/job-00016 three times"),
        "{warnings}"
    );
    let off = text.replace(
        "  scheduler:\n",
        "  scheduler:\n    featureGates: {SchedulingEquivalenceHashing: false}\n",
    );
    std::fs::write(&file, off).unwrap();
    let r = run_json(file.to_str().unwrap());
    let warnings = r["scenarios"][0]["warnings"].to_string();
    assert!(
        warnings.contains("Kueue admission does not settle: team-18/job-00078 preempted team-18/job-00138 three times"),
        "{warnings}"
    );
}

#[test]
fn jobsets_get_a_pod_set_per_replicated_job_and_wait_suspended_in_kueue() {
    let r = run_json("tests/data/kueue/jobsets.yaml");
    let s = &r["scenarios"][0];
    let pods: Vec<&str> = (s["pods"].as_array().unwrap().iter())
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(pods.len(), 10, "{pods:?}");
    assert!(pods.contains(&"train-workers-1-1") && !pods.iter().any(|p| p.starts_with("third-")));
    let train = kueue_workload(&r, "train");
    assert_eq!(train["kind"], "JobSet");
    let sets: Vec<(&str, u64)> = (train["podSets"].as_array().unwrap().iter())
        .map(|p| (p["name"].as_str().unwrap(), p["count"].as_u64().unwrap()))
        .collect();
    assert_eq!(sets, [("driver", 1), ("workers", 4)]);
    assert_eq!(train["podSets"][1]["requests"]["nvidia.com/gpu"], "8");
    let third = kueue_workload(&r, "third");
    assert_eq!(third["admitted"], false);
    assert_eq!(
        third["message"],
        "couldn't assign flavors to pod set workers: insufficient unused quota for nvidia.com/gpu in flavor h100, 8 more needed"
    );
}

#[test]
fn a_determined_trials_pods_that_name_a_queue_go_through_kueues_pod_integration() {
    let r = run_json("tests/data/kueue/determined.yaml");
    let first = kueue_workload(&r, "gpt-pretrain-16-0");
    assert_eq!(
        (first["kind"].as_str(), first["admitted"].as_bool()),
        (Some("Pod"), Some(true))
    );
    let second = kueue_workload(&r, "gpt-pretrain-16-1");
    assert_eq!(second["admitted"], false);
    assert_eq!(pod(&r, "gpt-pretrain-16-0")["status"], "Scheduled");
    assert_eq!(pod(&r, "gpt-pretrain-16-1")["status"], "SchedulingGated");
}

/// The JobSet CRD requires neither replicated jobs nor non-negative replicas: such a JobSet
/// loads, creates no Job, and a warning says so.
#[test]
fn a_jobset_without_jobs_loads_and_creates_no_pods() {
    let dir = common::cli::tempdir("empty-jobset");
    std::fs::write(
        dir.join("s.yaml"),
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  workloads:\n  - {apiVersion: jobset.x-k8s.io/v1alpha2, kind: JobSet, metadata: {name: empty}, spec: {}}\n  - apiVersion: jobset.x-k8s.io/v1alpha2\n    kind: JobSet\n    metadata: {name: none}\n    spec:\n      replicatedJobs:\n      - name: w\n        replicas: -1\n        template: {spec: {template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}}}\n",
    )
    .unwrap();
    let r = run_json(dir.join("s.yaml").to_str().unwrap());
    let s = &r["scenarios"][0];
    assert_eq!(s["pods"].as_array().unwrap().len(), 0);
    let warnings = s["warnings"].to_string();
    assert!(
        warnings.contains("JobSet empty has no replicatedJobs: it creates no Job")
            && warnings
                .contains("JobSet none: replicated job w has -1 replicas: it creates no Job"),
        "{warnings}"
    );
}

/// The preemption scenario with its two jobs arriving in a timeline step: the running sweeps'
/// pods keep their GPUs until that step, when Kueue's evictions delete them.
#[test]
fn running_workloads_preempted_in_a_timeline_step_lose_their_pods_in_that_step() {
    let dir = common::cli::tempdir("kueue-preempt-later");
    let text = std::fs::read_to_string("scenarios/kueue-preemption.yaml").unwrap();
    let (head, jobs) = text.split_once("  workloads:\n").unwrap();
    let jobs: String = jobs.lines().map(|l| format!("    {l}\n")).collect();
    let head = head.replace(
        "file: ../fixtures/runtimes/torch_distributed.yaml",
        &format!(
            "file: {}/fixtures/runtimes/torch_distributed.yaml",
            env!("CARGO_MANIFEST_DIR")
        ),
    );
    let scenario = format!("{head}  timeline:\n    - name: jobs arrive\n      arrive:\n{jobs}");
    std::fs::write(dir.join("s.yaml"), scenario).unwrap();
    let out = ok(&[
        "run",
        dir.join("s.yaml").to_str().unwrap(),
        "--format",
        "json",
        "--allow-any-path",
    ]);
    let r: Value = serde_json::from_str(&out).unwrap();
    let s = &r["scenarios"][0];
    assert_eq!(s["kueue"]["evictions"][0]["step"], 1);
    let preempted = s["preemptedExistingPods"].to_string();
    assert!(
        preempted.contains("research/sweep-c-node-0-0-t2w8c")
            && preempted.contains("research/sweep-b-node-0-0-m4k9d"),
        "{preempted}"
    );
    assert_eq!(pod(&r, "llm-finetune-node-0-0")["node"], "h100-2");
    assert_eq!(pod(&r, "urgent-eval-node-0-0")["node"], "h100-1");
}

/// The JobSet webhook defaults a replicated job to `Indexed` completion and an `OnFailure`
/// restart policy: a JobSet that sets neither loads; with parallelism but no completions, the
/// API server refuses the `Indexed` Job the controller would create.
#[test]
fn a_jobsets_jobs_get_the_jobset_webhooks_defaults() {
    let dir = common::cli::tempdir("jobset-defaults");
    let scenario = |counts: &str| {
        format!(
            "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {{name: s}}\nspec:\n  nodes:\n  - pool: {{count: 1, namePrefix: n-, template: {{status: {{allocatable: {{cpu: 8, memory: 8Gi, pods: \"110\"}}}}}}}}\n  workloads:\n  - apiVersion: jobset.x-k8s.io/v1alpha2\n    kind: JobSet\n    metadata: {{name: js}}\n    spec:\n      replicatedJobs:\n      - name: w\n        replicas: 2\n        template: {{spec: {{{counts}template: {{spec: {{containers: [{{name: c, image: busybox}}]}}}}}}}}\n"
        )
    };
    std::fs::write(
        dir.join("ok.yaml"),
        scenario("parallelism: 2, completions: 2, "),
    )
    .unwrap();
    let r = run_json(dir.join("ok.yaml").to_str().unwrap());
    assert_eq!(r["scenarios"][0]["pods"].as_array().unwrap().len(), 4);
    std::fs::write(dir.join("bad.yaml"), scenario("parallelism: 2, ")).unwrap();
    let out = schedsim(&["run", dir.join("bad.yaml").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("spec.workloads[0].spec.replicatedJobs[0].template.spec.completions: Required value: when completion mode is Indexed"),
        "{stderr}"
    );
}

/// `SetDefaults_Job`: an `Indexed` Job that sets neither parallelism nor completions gets one
/// of each, and runs one pod.
#[test]
fn an_indexed_job_without_counts_runs_one_pod() {
    let dir = common::cli::tempdir("indexed-job");
    std::fs::write(
        dir.join("s.yaml"),
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  nodes:\n  - pool: {count: 1, namePrefix: n-, template: {status: {allocatable: {cpu: 8, memory: 8Gi, pods: \"110\"}}}}\n  workloads:\n  - apiVersion: batch/v1\n    kind: Job\n    metadata: {name: one}\n    spec:\n      completionMode: Indexed\n      template: {spec: {restartPolicy: Never, containers: [{name: c, image: busybox}]}}\n",
    )
    .unwrap();
    let r = run_json(dir.join("s.yaml").to_str().unwrap());
    assert_eq!(pod(&r, "one-0")["status"], "Scheduled");
    assert_eq!(r["scenarios"][0]["pods"].as_array().unwrap().len(), 1);
}

#[test]
fn stopped_queues_drain_through_the_local_queue_and_are_never_reclaimed_from() {
    let r = run_json("tests/data/kueue/stop-policy.yaml");
    let k = &r["scenarios"][0]["kueue"];
    // HoldAndDrain on the LocalQueue evicts its admitted workload, its ClusterQueue running.
    let evictions = k["evictions"].as_array().unwrap();
    assert_eq!(evictions.len(), 1, "{evictions:?}");
    let e = &evictions[0];
    assert_eq!(e["victim"], "team-a/pod-batch-1-0a1b2");
    assert_eq!(e["reason"], "LocalQueueStopped");
    assert_eq!(e["message"], "The LocalQueue is stopped");
    assert_eq!(e["pods"][0], "team-a/batch-1");
    assert!(
        e.get("preemptor").is_none() && e.get("cycle").is_none(),
        "{e}"
    );
    // The Hold ClusterQueue's borrowed GPUs are no reclamation candidates.
    let urgent = kueue_workload(&r, "urgent");
    assert_eq!(urgent["admitted"], false, "{urgent}");
    assert_eq!(
        urgent["message"],
        "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor gpu, 4 more needed"
    );
    let held = &k["clusterQueues"][0];
    assert_eq!(
        (&held["name"], &held["stopPolicy"]),
        (&"held".into(), &"Hold".into())
    );
    let warnings = r["scenarios"][0]["warnings"].as_array().unwrap();
    assert!(
        warnings.iter().any(|w| w
            == "ClusterQueue \"held\" is stopped (stopPolicy: Hold): 1 workload admitted before keeps running with its quota"),
        "{warnings:?}"
    );
}

/// A workload arriving in a timeline step is created then: newer than those before it, so
/// LowerOrNewerEqualPriority lets an older pending workload of the same priority preempt it
/// (Kueue's preemption_test.go, "Should preempt newer Workloads with the same priority when
/// there is not enough quota"). Before, every queued workload had the scenario's start as its
/// creation time and the preemption was missed.
#[test]
fn a_workload_arriving_later_is_newer_for_lower_or_newer_equal_priority() {
    let r = run_json("tests/data/kueue/newer-equal-priority.yaml");
    let evictions = r["scenarios"][0]["kueue"]["evictions"].as_array().unwrap();
    assert_eq!(evictions.len(), 1, "{evictions:?}");
    let e = &evictions[0];
    assert_eq!(
        (&e["victim"], &e["preemptor"]),
        (&"team/newer".into(), &"team/older".into())
    );
    assert_eq!(e["reason"], "InClusterQueue");
    assert_eq!(kueue_workload(&r, "older")["admitted"], true);
    assert_eq!(pod(&r, "older")["status"], "Scheduled");
}

/// A written `metadata.creationTimestamp` orders Kueue's queue: the workload listed second
/// but created first is admitted first.
#[test]
fn a_written_creation_timestamp_orders_the_queue() {
    let dir = common::cli::tempdir("kueue-created");
    let file = dir.join("s.yaml");
    let text = std::fs::read_to_string("tests/data/kueue/newer-equal-priority.yaml")
        .unwrap()
        .replace(
            "        name: first\n",
            "        name: first\n        creationTimestamp: \"2026-01-01T00:00:10Z\"\n",
        )
        .replace(
            "        name: older\n",
            "        name: older\n        creationTimestamp: \"2026-01-01T00:00:05Z\"\n",
        );
    std::fs::write(&file, text).unwrap();
    let r = run_json(file.to_str().unwrap());
    // `older` (5 CPUs) goes first now and takes the quota `first` (4) cannot share.
    let older = kueue_workload(&r, "older");
    assert_eq!(older["admitted"], true, "{older}");
    let first = kueue_workload(&r, "first");
    assert_eq!(first["admitted"], false, "{first}");
}

/// `kueue-timeline.yaml` on three nodes, its timeline replaced by `steps`.
fn quota_scenario(tag: &str, steps: &str) -> String {
    let text = std::fs::read_to_string("scenarios/kueue-timeline.yaml").unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    let head = text[..text.find("  timeline:").unwrap()]
        .replace("count: 2", "count: 3")
        .replace("../fixtures/", &format!("{root}/fixtures/"));
    let file = common::cli::tempdir(tag).join("s.yaml");
    std::fs::write(&file, format!("{head}  timeline:\n{steps}")).unwrap();
    file.to_string_lossy().into_owned()
}

/// A ClusterQueue item with the `team` queue's flavor and `gpus` of nominal quota.
fn team_queue(name: &str, gpus: u32) -> String {
    format!(
        "        - apiVersion: kueue.x-k8s.io/v1beta2\n          kind: ClusterQueue\n          metadata: {{name: {name}}}\n          spec:\n            namespaceSelector: {{}}\n            resourceGroups:\n              - coveredResources: [nvidia.com/gpu]\n                flavors:\n                  - name: h100\n                    resources: [{{name: nvidia.com/gpu, nominalQuota: {gpus}}}]\n"
    )
}

/// A timeline step raises the ClusterQueue's quota: Kueue admits the waiting TrainJob in that
/// step, and its pod is created and scheduled on the node left free.
#[test]
fn a_timeline_step_raises_a_cluster_queues_quota() {
    let steps = format!(
        "    - name: raise\n      kueue:\n{}",
        team_queue("team", 24)
    );
    let r = run_json(&quota_scenario("kueue-raise", &steps));
    let s = &r["scenarios"][0];
    // Step 0 is the initial arrival.
    let c = (s["timeline"][1]["changes"].as_array().unwrap().iter())
        .find(|c| c["pod"] == "ml/train-c-node-0-0")
        .expect("train-c's pod changes in the step");
    assert_eq!(c["before"], "not created yet");
    assert_eq!(c["after"], "Scheduled on h100-0");
    assert_eq!(kueue_workload(&r, "train-c")["admitted"], true);
    assert_eq!(
        s["kueue"]["clusterQueues"][0]["resources"][0]["usage"],
        "24"
    );
}

/// `quota_scenario` with a fourth TrainJob, `train-d`, in LocalQueue `team-b` of namespace
/// `ml`, which the scenario does not define.
fn new_team_scenario(tag: &str, steps: &str) -> String {
    let file = quota_scenario(tag, steps);
    let text = std::fs::read_to_string(&file).unwrap().replace(
        "  timeline:\n",
        "    - <<: *job\n      metadata: {name: train-d, namespace: ml, labels: {kueue.x-k8s.io/queue-name: team-b}}\n  timeline:\n",
    );
    std::fs::write(&file, text).unwrap();
    file
}

const TEAM_B_LOCAL_QUEUE: &str = "        - {apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: team-b, namespace: ml}, spec: {clusterQueue: team-b}}\n";

/// A team's LocalQueue, then its ClusterQueue, created by timeline steps: its workload waits
/// for the LocalQueue, then for the ClusterQueue, then joins it (Kueue's `AddLocalQueue` and
/// `AddClusterQueue`), is admitted, and its pod takes the node train-a and train-b left free.
#[test]
fn timeline_steps_create_a_teams_queues() {
    let steps = format!(
        "    - name: local queue\n      kueue:\n{TEAM_B_LOCAL_QUEUE}    - name: cluster queue\n      kueue:\n{}",
        team_queue("team-b", 8)
    );
    let r = run_json(&new_team_scenario("kueue-new-team", &steps));
    let s = &r["scenarios"][0];
    let change = |step: usize| {
        (s["timeline"][step]["changes"]
            .as_array()
            .into_iter()
            .flatten())
        .find(|c| c["pod"] == "ml/train-d-node-0-0")
        .cloned()
    };
    // Step 0 is the initial arrival; nothing happens to train-d in the first step.
    assert_eq!(change(1), None);
    let c = change(2).expect("train-d's pod changes when its ClusterQueue is created");
    assert_eq!(c["before"], "not created yet");
    assert_eq!(c["after"], "Scheduled on h100-0");
    assert_eq!(kueue_workload(&r, "train-d")["admitted"], true);
    let team_b = (s["kueue"]["clusterQueues"].as_array().unwrap().iter())
        .find(|q| q["name"] == "team-b")
        .expect("team-b is reported");
    assert_eq!(team_b["resources"][0]["usage"], "8");
    // Without the ClusterQueue, the workload waits for it, with Kueue's message.
    let r = run_json(&new_team_scenario(
        "kueue-new-lq",
        &format!("    - name: local queue\n      kueue:\n{TEAM_B_LOCAL_QUEUE}"),
    ));
    let d = kueue_workload(&r, "train-d");
    assert_eq!(d["admitted"], false, "{d}");
    assert_eq!(d["message"], "ClusterQueue team-b doesn't exist", "{d}");
}

/// What Kueue's API refuses in a step is refused with its place: a LocalQueue's
/// `spec.clusterQueue` is immutable. So are a ResourceFlavor changed and kinds a step does
/// not simulate, which say so.
#[test]
fn a_timeline_kueue_step_refuses_what_the_api_refuses() {
    let items = [
        "        - {apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: default, namespace: ml}, spec: {clusterQueue: other}}\n",
        "        - {apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {name: h100}, spec: {nodeLabels: {node-pool: a100}}}\n",
        "        - {apiVersion: kueue.x-k8s.io/v1beta2, kind: WorkloadPriorityClass, metadata: {name: later}, value: 5}\n",
    ];
    let steps = format!("    - name: bad\n      kueue:\n{}", items.concat());
    let out = schedsim(&["run", &quota_scenario("kueue-bad-step", &steps)]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for expected in [
        "spec.timeline[0].kueue[0].spec.clusterQueue: Invalid value: \"string\": field is immutable",
        "spec.timeline[0].kueue[1].metadata.name: ResourceFlavor \"h100\" exists already and a timeline step changes it: a ResourceFlavor changed over time is not simulated",
        "spec.timeline[0].kueue[2].kind: a timeline step's kueue items are ClusterQueues, Cohorts, LocalQueues and ResourceFlavors; a WorkloadPriorityClass created or changed over time is not simulated",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in:\n{stderr}"
        );
    }
}

/// A ClusterQueue held by a step admits nothing while held, even once quota frees; released
/// by a later step, it admits its waiting workload then.
#[test]
fn a_cluster_queue_held_by_a_step_admits_once_released() {
    let held = team_queue("team", 16).replace(
        "          spec:\n",
        "          spec:\n            stopPolicy: Hold\n",
    );
    let hold = format!("    - name: hold\n      kueue:\n{held}");
    let complete = "    - name: train-a finishes\n      complete: {workloads: [train-a]}\n";
    let r = run_json(&quota_scenario("kueue-hold", &format!("{hold}{complete}")));
    let c = kueue_workload(&r, "train-c");
    assert_eq!(c["admitted"], false, "{c}");
    assert_eq!(c["message"], "ClusterQueue team is inactive", "{c}");
    let warnings = r["scenarios"][0]["warnings"].to_string();
    assert!(
        warnings.contains("ClusterQueue \\\"team\\\" is stopped (stopPolicy: Hold): 1 workload waits and will not be admitted while it is stopped"),
        "{warnings}"
    );
    let release = format!(
        "    - name: release\n      kueue:\n{}",
        team_queue("team", 16)
    );
    let r = run_json(&quota_scenario(
        "kueue-release",
        &format!("{hold}{complete}{release}"),
    ));
    let s = &r["scenarios"][0];
    let c = (s["timeline"][3]["changes"].as_array().into_iter().flatten())
        .find(|c| c["pod"] == "ml/train-c-node-0-0")
        .expect("train-c's pod is created when the queue is released");
    assert_eq!(c["before"], "not created yet");
    assert_eq!(kueue_workload(&r, "train-c")["admitted"], true);
}

/// `HoldAndDrain` set by a step evicts what the ClusterQueue admitted: train-a's and
/// train-b's pods are deleted in that step with Kueue's message, the evictions are reported
/// as the stopped queue's, and a later step releasing the queue admits them again.
#[test]
fn hold_and_drain_set_by_a_step_evicts_the_queues_workloads() {
    let drain = team_queue("team", 16).replace(
        "          spec:\n",
        "          spec:\n            stopPolicy: HoldAndDrain\n",
    );
    let steps = format!(
        "    - name: drain\n      kueue:\n{drain}    - name: release\n      kueue:\n{}",
        team_queue("team", 16)
    );
    let r = run_json(&quota_scenario("kueue-drain", &steps));
    let s = &r["scenarios"][0];
    let change = |step: usize, pod: &str| {
        (s["timeline"][step]["changes"]
            .as_array()
            .into_iter()
            .flatten())
        .find(|c| c["pod"] == pod)
        .cloned()
        .unwrap_or_else(|| panic!("{pod} changes in step {step}"))
    };
    // Deleted by Kueue (the timeline's `Preempted`, as for any eviction), with its reason.
    let a = change(1, "ml/train-a-node-0-0");
    assert_eq!(
        (a["after"].as_str(), a["message"].as_str()),
        (
            Some("Preempted"),
            Some("deleted: Kueue evicted ml/train-a: The ClusterQueue is stopped")
        ),
        "{a}"
    );
    let evictions = s["kueue"]["evictions"].as_array().unwrap();
    let drained: Vec<(&str, &str, &str)> = (evictions.iter())
        .map(|e| {
            let text = |k: &str| e[k].as_str().unwrap_or("");
            (text("victim"), text("reason"), text("message"))
        })
        .collect();
    // In the queue's order of preemption candidates: the last admitted first.
    assert_eq!(
        drained,
        [
            (
                "ml/train-b",
                "ClusterQueueStopped",
                "The ClusterQueue is stopped"
            ),
            (
                "ml/train-a",
                "ClusterQueueStopped",
                "The ClusterQueue is stopped"
            ),
        ]
    );
    assert_eq!(evictions[1]["step"], 1);
    assert_eq!(evictions[1]["pods"][0], "ml/train-a-node-0-0");
    // Released, the queue admits train-a and train-b again (first by creation).
    let again = change(2, "ml/train-a-node-0-0");
    assert!(
        again["after"].as_str().unwrap().starts_with("Scheduled on"),
        "{again}"
    );
    assert_eq!(kueue_workload(&r, "train-a")["admitted"], true);
    assert_eq!(kueue_workload(&r, "train-c")["admitted"], false);
}

/// A LocalQueue drained by a step: its admitted workloads are evicted as the LocalQueue's
/// (`LocalQueueStopped`), and its waiting one leaves the queue, marked inactive.
#[test]
fn hold_and_drain_on_a_local_queue_evicts_its_workloads() {
    let lq = "        - {apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: default, namespace: ml}, spec: {clusterQueue: team, stopPolicy: HoldAndDrain}}\n";
    let r = run_json(&quota_scenario(
        "kueue-lq-drain",
        &format!("    - name: drain\n      kueue:\n{lq}"),
    ));
    let evictions = r["scenarios"][0]["kueue"]["evictions"].as_array().unwrap();
    let reasons: Vec<(&str, &str)> = (evictions.iter())
        .map(|e| {
            (
                e["victim"].as_str().unwrap(),
                e["message"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        reasons,
        [
            ("ml/train-b", "The LocalQueue is stopped"),
            ("ml/train-a", "The LocalQueue is stopped"),
        ]
    );
    assert_eq!(evictions[0]["reason"], "LocalQueueStopped");
    let c = kueue_workload(&r, "train-c");
    assert_eq!(c["message"], "LocalQueue default is inactive", "{c}");
    assert_eq!(kueue_workload(&r, "train-a")["admitted"], false);
}

/// A workload arriving after a step stopped its LocalQueue is not queued: it waits outside
/// the queue manager, marked inactive, even once quota frees.
#[test]
fn a_workload_arriving_at_a_stopped_local_queue_waits() {
    let lq = "        - {apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: default, namespace: ml}, spec: {clusterQueue: team, stopPolicy: Hold}}\n";
    let steps = format!(
        "    - name: hold\n      kueue:\n{lq}    - name: late arrives\n      arrive:\n        - <<: *job\n          metadata: {{name: late, namespace: ml, labels: {{kueue.x-k8s.io/queue-name: default}}}}\n    - name: train-a finishes\n      complete: {{workloads: [train-a]}}\n"
    );
    let r = run_json(&quota_scenario("kueue-lq-late", &steps));
    let late = kueue_workload(&r, "late");
    assert_eq!(late["admitted"], false, "{late}");
    assert_eq!(late["message"], "LocalQueue default is inactive", "{late}");
}

/// A Workload admitted before the run whose ClusterQueue a step drains: its job's existing
/// pod runs until that step and is deleted there, with Kueue's message.
#[test]
fn a_step_drains_a_workload_admitted_before_the_run() {
    let text = std::fs::read_to_string("scenarios/kueue-stop-policy.yaml").unwrap();
    let root = env!("CARGO_MANIFEST_DIR");
    let head = text[..text.find("  expect:").unwrap()]
        .replacen("        stopPolicy: HoldAndDrain\n", "", 1)
        .replace("../fixtures/", &format!("{root}/fixtures/"));
    let step = "  timeline:\n    - name: drain research\n      kueue:\n        - <<: *cq\n          spec:\n            cohortName: ml\n            stopPolicy: HoldAndDrain\n            namespaceSelector: {}\n            resourceGroups:\n              - coveredResources: [nvidia.com/gpu]\n                flavors:\n                  - name: h100\n                    resources:\n                      - {name: nvidia.com/gpu, nominalQuota: 8}\n";
    let file = common::cli::tempdir("kueue-drain-admitted").join("s.yaml");
    std::fs::write(&file, format!("{head}{step}")).unwrap();
    let r = run_json(file.to_str().unwrap());
    let s = &r["scenarios"][0];
    let sweep = (s["kueue"]["evictions"].as_array().unwrap().iter())
        .find(|e| e["victim"] == "research/trainjob-sweep-a-5d1f0")
        .expect("the admitted sweep is drained");
    assert_eq!(sweep["step"], 1, "{sweep}");
    assert_eq!(sweep["reason"], "ClusterQueueStopped", "{sweep}");
    assert_eq!(
        sweep["pods"][0], "research/sweep-a-node-0-0-q7x2m",
        "{sweep}"
    );
    // Its node is free from that step on: production's 16-GPU fine-tune borrows the drained
    // quota and lands on both nodes then, not before.
    let changes = s["timeline"][1]["changes"].to_string();
    for pod in ["llm-finetune-node-0-0", "llm-finetune-node-0-1"] {
        let created = format!(
            "\"pod\":\"production/{pod}\",\"before\":\"not created yet\",\"after\":\"Scheduled on"
        );
        assert!(changes.contains(&created), "{pod}: {changes}");
    }
}
