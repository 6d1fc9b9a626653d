//! The command line as a user meets it: exit codes, error messages with file:line:col and
//! field paths, and that good scenarios still run next to bad ones.

mod common;
use common::cli::{ok, tempdir};

use std::path::Path;
use std::process::Output;

/// Runs schedsim with reports going to a private folder.
fn schedsim(args: &[&str]) -> Output {
    let out = tempdir("cli");
    let mut all = args.to_vec();
    all.extend(["--out", out.to_str().unwrap()]);
    common::cli::schedsim(&all)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn run_bad(file: &str) -> String {
    let o = schedsim(&["run", &format!("tests/data/bad/{file}"), "--format", "json"]);
    assert_eq!(o.status.code(), Some(2), "{file}: {}", stderr(&o));
    stderr(&o)
}

#[test]
fn unknown_scenario_field_suggests_the_right_one() {
    let err = run_bad("unknown-field.yaml");
    assert!(
        err.contains(
            "tests/data/bad/unknown-field.yaml:7:16: spec.existingPod: unknown field `existingPod`"
        ) && err.contains("(did you mean `existingPods`?)"),
        "{err}"
    );
}

#[test]
fn yaml_syntax_error_has_a_position() {
    let err = run_bad("syntax-error.yaml");
    assert!(
        err.contains("tests/data/bad/syntax-error.yaml:3:6: "),
        "{err}"
    );
}

#[test]
fn pods_the_api_server_rejects_are_errors_with_field_paths() {
    let err = run_bad("invalid-pod.yaml");
    for expected in [
        "invalid-pod.yaml:14:32: spec.workloads[0].spec.tolerations[0].operator: Invalid value: \"b\": value must be empty when `operator` is 'Exists'",
        "spec.workloads[0].spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'",
        "invalid-pod.yaml:24:31: spec.workloads[0].spec.containers[0].resources.requests.cpu: \"2 cores\": quantities must match the regular expression",
    ] {
        assert!(err.contains(expected), "missing {expected:?} in\n{err}");
    }
}

#[test]
fn duplicate_node_names_are_rejected() {
    let err = run_bad("duplicate-nodes.yaml");
    assert!(
        err.contains("duplicate-nodes.yaml:7:7: spec.nodes[1]: duplicate node name \"n-1\""),
        "{err}"
    );
}

#[test]
fn missing_files_are_named() {
    let err = run_bad("missing-file.yaml");
    assert!(
        err.contains(
            "missing-file.yaml:6:13: spec.nodes[0].file: cannot load \"no-such-inventory.yaml\""
        ),
        "{err}"
    );
    let o = schedsim(&["run", "tests/data/bad/nothing-here.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("nothing-here.yaml: no such file or directory"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn good_scenarios_still_run_next_to_bad_ones() {
    let o = schedsim(&["run", "tests/data/bad/mixed.yaml", "--format", "json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "mixed.yaml:7:79: spec.nodes[0].pool.template.status.allocatable.cpu: \"4x\""
        ),
        "{}",
        stderr(&o)
    );
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    let names: Vec<&str> = report["scenarios"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["good"]);
    assert_eq!(report["scenarios"][0]["pods"][0]["status"], "Scheduled");
}

#[test]
fn usage_errors_exit_2() {
    let o = common::cli::schedsim(&["run", "--format", "xml"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn reports_are_written_to_out() {
    let out = tempdir("out");
    let target = out.join("nested/reports");
    let o = common::cli::schedsim(&[
        "run",
        "tests/data/bad/mixed.yaml",
        "--format",
        "table",
        "--out",
        target.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(target.join("run.json")).unwrap()).unwrap();
    assert_eq!(json["scenarios"][0]["name"], "good");
    assert!(Path::new(&target.join("run.txt")).exists());
    let leftovers: Vec<_> = std::fs::read_dir(&target)
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left behind");
}

#[test]
fn message_format_selects_the_release_wording() {
    let message = |extra: &[&str]| {
        let mut args = vec!["run", "tests/data/taint-message.yaml", "--format", "json"];
        args.extend_from_slice(extra);
        let o = schedsim(&args);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        report["scenarios"][0]["pods"][0]["message"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(
        message(&[]),
        "0/1 nodes are available: 1 node(s) had untolerated taint(s). no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    );
    assert_eq!(
        message(&["--message-format", "1.34"]),
        "0/1 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    );
}

#[test]
fn type_errors_in_kubernetes_objects_name_the_field() {
    let err = run_bad("wrong-type.yaml");
    assert!(
        err.contains("wrong-type.yaml:9:29: spec.nodes[0].spec.unschedulable: invalid type: string \"maybe\", expected a boolean"),
        "{err}"
    );
    assert!(
        err.contains("wrong-type.yaml:15:20: spec.scheduler.sed: unknown field `sed`, expected one of `seed`, `messageFormat`, `featureGates`, `addedAffinity`, `configuration`, `nodeSampling` (did you mean `seed`?)"),
        "{err}"
    );
}

#[test]
fn a_file_without_scenarios_is_an_error_not_silence() {
    let o = schedsim(&["run", "fixtures/nodes/cpu-m5.yaml"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("fixtures/nodes/cpu-m5.yaml: no Scenario document"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn invalid_train_jobs_name_the_override_entry() {
    let err = run_bad("trainjob-invalid.yaml");
    for expected in [
        "trainjob-invalid.yaml:19:33: spec.workloads[0].spec.podTemplateOverrides[1].targetJobs[0].name: Invalid value: \"trainer\": must not have targetJob that doesn't exist in the runtime job template",
        "trainjob-invalid.yaml:31:24: spec.workloads[1].spec.podTemplateOverrides[0].spec.containers[0].env: Invalid value: \"node\": must not have envs for the dataset-initializer, model-initializer, node containers",
        "trainjob-invalid.yaml:32:25: spec.workloads[1].spec.podTemplateOverrides[0].spec.containers[1].name: Invalid value: \"trainer\": must not have container that doesn't exist in the runtime job node",
        "trainjob-invalid.yaml:43:13: spec.workloads[2].spec.podTemplateOverrides[1]: the merged pod of replicated job \"node\" is invalid: spec.volumes[0].persistentVolumeClaim: Forbidden: may not specify more than 1 volume type (set by podTemplateOverrides[1])",
        "trainjob-invalid.yaml:50:28: spec.workloads[3].spec.runtimeRef.name: Invalid value: \"torch-distributed-gpu\": clustertrainingruntimes.trainer.kubeflow.org \"torch-distributed-gpu\" not found: specified clusterTrainingRuntime must be created before the TrainJob is created",
    ] {
        assert!(err.contains(expected), "missing {expected:?} in\n{err}");
    }
}

#[test]
fn initializers_complete_before_the_trainer_unless_kept_running() {
    let o = schedsim(&["run", "tests/data/initializers.yaml", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let report: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let statuses = |i: usize| -> Vec<(String, String)> {
        report["scenarios"][i]["pods"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    p["name"].as_str().unwrap().to_string(),
                    p["status"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let s = |a: &str, b: &str| (a.to_string(), b.to_string());
    assert_eq!(
        statuses(0),
        [
            s("cached-job-dataset-initializer-0-0", "Succeeded"),
            s("cached-job-node-0-0", "Scheduled")
        ]
    );
    assert_eq!(
        statuses(1),
        [
            s("cached-job-dataset-initializer-0-0", "Scheduled"),
            s("cached-job-node-0-0", "Unschedulable")
        ]
    );
    assert!(
        report["scenarios"][1]["pods"][1]["message"]
            .as_str()
            .unwrap()
            .starts_with("0/1 nodes are available: 1 Insufficient cpu."),
        "{}",
        report["scenarios"][1]["pods"][1]["message"]
    );
}

#[test]
fn determined_rejections_point_into_the_experiment() {
    let err = run_bad("determined-invalid.yaml");
    for expected in [
        "determined/seed003-task.yaml:13:9: environment.pod_spec.spec.imagePullSecrets: invalid type: map, expected a sequence",
        "determined-invalid.yaml:17:65: spec.workloads[1].determined.experiment.resources.slots_per_trial: invalid resource request: slots (12) must be < or a multiple of max_slots_per_pod (8)",
    ] {
        assert!(err.contains(expected), "missing {expected:?} in\n{err}");
    }
}

#[test]
fn priority_admission_rejects_what_the_api_server_rejects() {
    let err = run_bad("priority-invalid.yaml");
    for expected in [
        "PriorityClass \"high\" is already marked as default. Only one default can exist",
        "spec.workloads[0].spec.priorityClassName: pods \"missing\" is forbidden: no PriorityClass with name nope was found",
        "spec.workloads[1].spec.priorityClassName: pods \"mismatch\" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 1000 from the given PriorityClass name",
    ] {
        assert!(err.contains(expected), "missing {expected:?} in\n{err}");
    }
}

#[test]
fn topology_spread_constraints_the_api_server_rejects_are_errors() {
    let err = run_bad("invalid-spread.yaml");
    for expected in [
        "invalid-spread.yaml:15:23: spec.workloads[0].spec.topologySpreadConstraints[0].maxSkew: Invalid value: 0: must be greater than zero",
        "spec.workloads[0].spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}: Duplicate value: \"{zone, DoNotSchedule}\"",
        "spec.workloads[0].spec.topologySpreadConstraints[2].minDomains: Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway",
        "spec.workloads[0].spec.topologySpreadConstraints[3].whenUnsatisfiable: Unsupported value: \"Maybe\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\"",
        "spec.workloads[0].spec.topologySpreadConstraints[3].nodeTaintsPolicy: Unsupported value: \"Always\": supported values: \"Honor\", \"Ignore\"",
    ] {
        assert!(err.contains(expected), "missing {expected:?} in\n{err}");
    }
}

#[test]
fn completions_cover_every_subcommand() {
    for shell in ["bash", "zsh", "fish"] {
        let script = ok(&["completions", shell]);
        for sub in ["run", "sweep", "merge", "check", "resolve", "schema"] {
            assert!(script.contains(sub), "{shell} completion lacks {sub}");
        }
    }
}
