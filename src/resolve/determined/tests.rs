//! Trials resolved from the Determined examples and Helm values.

use super::*;

fn data(name: &str) -> Value {
    let path = format!(
        "{}/tests/data/determined/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_saphyr::from_str::<Value>(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn values(name: &str) -> ClusterDefaults {
    ClusterDefaults::from_value(&data(name)).expect("valid Helm values")
}

fn experiment(name: &str) -> ExperimentConfig {
    ExperimentConfig::from_value(&data(name)).expect("valid experiment config")
}

fn with_slots(mut exp: ExperimentConfig, slots: i64) -> ExperimentConfig {
    exp.resources.slots_per_trial = Some(slots);
    exp
}

fn resolve(exp: &ExperimentConfig, defaults: &ClusterDefaults) -> TrialPods {
    trial_pods(exp, defaults, PodSpecMerge::StrategicMerge)
        .unwrap_or_else(|e| panic!("unexpected errors: {e:#?}"))
}

fn container<'a>(pod: &'a Value, name: &str) -> &'a Value {
    find_container(pod, name).unwrap_or_else(|| panic!("no container {name}: {pod:#}"))
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(|i| i.get("name").and_then(Value::as_str))
        .collect()
}

fn has_warning(t: &TrialPods, needle: &str) -> bool {
    t.warnings.iter().any(|w| w.contains(needle))
}

// --- seed 003: the "Specifying Custom Pod Specs" guide -----------------------------------

#[test]
fn seed003_default_gpu_pod_spec() {
    let t = resolve(
        &experiment("gpu-trial.yaml"),
        &values("seed003-values.yaml"),
    );
    let pod = &t.pod_spec;
    assert_eq!((t.pods, t.slots_per_pod), (1, 1));
    assert_eq!(pod["metadata"]["labels"]["customLabel"], "gpu-label");
    assert_eq!(
        pod["metadata"]["labels"]["determined.ai/task_type"],
        "TRIAL"
    );
    assert_eq!(
        pod["metadata"]["labels"]["determined.ai/resource_pool"],
        "default"
    );
    assert_eq!(names(&pod["spec"]["containers"]), [DETERMINED_CONTAINER]);
    assert_eq!(
        names(&pod["spec"]["initContainers"]),
        [DETERMINED_INIT_CONTAINER]
    );
    let det = container(pod, DETERMINED_CONTAINER);
    // The default's mount, after Determined's own.
    assert_eq!(
        names(&det["volumeMounts"]),
        ["det-shm-volume", "example-volume"]
    );
    assert_eq!(det["volumeMounts"][1]["mountPath"], "/example-data");
    assert_eq!(det["resources"]["limits"]["nvidia.com/gpu"], "1");
    assert_eq!(det["resources"]["requests"]["nvidia.com/gpu"], "1");
    assert_eq!(det["workingDir"], WORK_DIR);
    assert_eq!(
        names(&pod["spec"]["volumes"]),
        [
            "example-volume",
            "det-shm-volume",
            "archive-volume",
            "entrypoint-volume",
            "additional-files-volume"
        ]
    );
    assert_eq!(pod["spec"]["restartPolicy"], "Never");
    assert_eq!(pod["spec"]["priorityClassName"], MEDIUM_PRIORITY_CLASS);
    assert!(pod["spec"].get("schedulerName").is_none());
    assert_eq!(
        t.provenance["metadata.labels.customLabel"],
        "default gpuPodSpec"
    );
    assert_eq!(
        t.provenance["spec.volumes[name=example-volume].hostPath.path"],
        "default gpuPodSpec"
    );
    assert_eq!(
        t.provenance["spec.containers[name=determined-container].volumeMounts[mountPath=/example-data].name"],
        "default gpuPodSpec"
    );
    assert_eq!(
        t.provenance["spec.containers[name=determined-container].image"],
        DETERMINED_SOURCE
    );
    assert!(t.warnings.is_empty(), "{:#?}", t.warnings);
}

#[test]
fn seed003_default_cpu_pod_spec_for_zero_slots() {
    let exp = with_slots(experiment("gpu-trial.yaml"), 0);
    let t = resolve(&exp, &values("seed003-values.yaml"));
    let pod = &t.pod_spec;
    assert_eq!((t.pods, t.slots_per_pod), (1, 0));
    assert_eq!(pod["metadata"]["labels"]["customLabel"], "cpu-label");
    // The sidecar is kept, before Determined's container.
    assert_eq!(
        names(&pod["spec"]["containers"]),
        ["sidecar-container", DETERMINED_CONTAINER]
    );
    assert_eq!(
        container(pod, "sidecar-container")["image"],
        "alpine:latest"
    );
    let det = container(pod, DETERMINED_CONTAINER);
    assert!(det.get("resources").is_none(), "{det:#}");
    assert_eq!(det["image"], "my/cpu:1");
    assert!(
        det["env"]
            .as_array()
            .unwrap()
            .contains(&json!({"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}))
    );
    assert_eq!(
        t.provenance["spec.containers[name=sidecar-container].image"],
        "default cpuPodSpec"
    );
}

#[test]
fn seed003_task_pod_spec_as_written_is_rejected() {
    // The guide's example writes `imagePullSecrets: {name: regcred}`, a map where the Pod
    // has a list: Determined's decode into k8sV1.Pod fails the same way.
    let errs = trial_pods(
        &experiment("seed003-task.yaml"),
        &values("seed003-values.yaml"),
        PodSpecMerge::StrategicMerge,
    )
    .unwrap_err();
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_eq!(errs[0].path, "environment.pod_spec.spec.imagePullSecrets");
    assert!(errs[0].message.contains("expected a sequence"), "{errs:#?}");
}

#[test]
fn seed003_task_pod_spec_merged_over_default() {
    let exp = experiment("seed003-task-fixed.yaml");
    let t = resolve(&exp, &values("seed003-values.yaml"));
    let pod = &t.pod_spec;
    // The task's label wins over the default's.
    assert_eq!(
        pod["metadata"]["labels"]["customLabel"],
        "task-specific-label"
    );
    assert_eq!(t.provenance["metadata.labels.customLabel"], USER_SOURCE);
    assert_eq!(pod["spec"]["serviceAccountName"], "checkpoint-writer");
    assert_eq!(
        pod["spec"]["imagePullSecrets"],
        json!([{"name": "regcred"}])
    );
    assert_eq!(
        pod["spec"]["tolerations"][0]["key"],
        "tained-nodegroup-name"
    );
    // The default's volume stays (the task sets no volumes)...
    assert_eq!(names(&pod["spec"]["volumes"])[0], "example-volume");
    // ...but its determined-container mount is gone: the task's pod spec has no
    // containers, marshalled as `containers: null`, a delete in strategic merge patch.
    let det = container(pod, DETERMINED_CONTAINER);
    assert_eq!(names(&det["volumeMounts"]), ["det-shm-volume"]);
    assert!(
        has_warning(&t, "environment.pod_spec.spec.containers is not set"),
        "{:#?}",
        t.warnings
    );
}

#[test]
fn seed003_task_pod_spec_replaces_default_in_older_releases() {
    let exp = experiment("seed003-task-fixed.yaml");
    let t = trial_pods(&exp, &values("seed003-values.yaml"), PodSpecMerge::Replace).unwrap();
    let pod = &t.pod_spec;
    assert_eq!(
        pod["metadata"]["labels"]["customLabel"],
        "task-specific-label"
    );
    assert_eq!(
        names(&pod["spec"]["volumes"]),
        [
            "det-shm-volume",
            "archive-volume",
            "entrypoint-volume",
            "additional-files-volume"
        ]
    );
    assert!(
        has_warning(&t, "spec.containers, spec.volumes are not applied"),
        "{:#?}",
        t.warnings
    );
}

// --- strategic merge vs replace ------------------------------------------------------------

#[test]
fn merge_keeps_default_toleration_and_node_selector_replace_loses_them() {
    let defaults = values("merge-values.yaml");
    let exp = experiment("merge-experiment.yaml");

    let merged = resolve(&exp, &defaults);
    let spec = &merged.pod_spec["spec"];
    assert_eq!(
        spec["nodeSelector"],
        json!({"gpu-type": "a100", "topology.kubernetes.io/zone": "us-east-1a"})
    );
    assert_eq!(
        spec["tolerations"],
        json!([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])
    );
    let det = container(&merged.pod_spec, DETERMINED_CONTAINER);
    assert_eq!(det["resources"]["requests"]["memory"], "32Gi");
    assert_eq!(names(&det["volumeMounts"]), ["det-shm-volume", "datasets"]);
    assert_eq!(
        merged.provenance["spec.nodeSelector.gpu-type"],
        "default gpuPodSpec"
    );
    assert_eq!(
        merged.provenance["spec.nodeSelector.topology.kubernetes.io/zone"],
        USER_SOURCE
    );

    let replaced = trial_pods(&exp, &defaults, PodSpecMerge::Replace).unwrap();
    let spec = &replaced.pod_spec["spec"];
    assert_eq!(
        spec["nodeSelector"],
        json!({"topology.kubernetes.io/zone": "us-east-1a"})
    );
    assert!(spec.get("tolerations").is_none());
    let det = container(&replaced.pod_spec, DETERMINED_CONTAINER);
    assert!(det["resources"]["requests"].get("memory").is_none());
    assert!(has_warning(&replaced, "spec.tolerations"));
}

#[test]
fn empty_list_in_task_pod_spec_cannot_clear_default_tolerations() {
    // `tolerations: []` is dropped by Go's omitempty before the merge.
    let mut exp = experiment("merge-experiment.yaml");
    exp.environment.pod_spec.as_mut().unwrap()["spec"]["tolerations"] = json!([]);
    let t = resolve(&exp, &values("merge-values.yaml"));
    assert_eq!(
        t.pod_spec["spec"]["tolerations"][0]["key"],
        "nvidia.com/gpu"
    );
}

#[test]
fn merge_orders_merge_keyed_lists_as_upstream_test() {
    // master/pkg/schemas/expconf/experiment_config_test.go: TestPodSpecMerge —
    // imagePullSecrets of the winning pod spec come first.
    let defaults = ClusterDefaults {
        max_slots_per_pod: Some(8),
        task_container_defaults: TaskContainerDefaults {
            gpu_pod_spec: Some(json!({"spec": {
                "hostname": "e1HostName", "serviceAccountName": "e1ServiceAccount",
                "imagePullSecrets": [{"name": "e1Secret"}]}})),
            ..Default::default()
        },
        ..Default::default()
    };
    let mut exp = ExperimentConfig::default();
    exp.environment.pod_spec = Some(json!({"spec": {
        "hostname": "e0HostName", "subdomain": "e0SubDomain",
        "imagePullSecrets": [{"name": "e0Secret"}]}}));
    let t = resolve(&exp, &defaults);
    let spec = &t.pod_spec["spec"];
    assert_eq!(spec["hostname"], "e0HostName");
    assert_eq!(spec["subdomain"], "e0SubDomain");
    assert_eq!(spec["serviceAccountName"], "e1ServiceAccount");
    assert_eq!(
        spec["imagePullSecrets"],
        json!([{"name": "e0Secret"}, {"name": "e1Secret"}])
    );
}

// --- slots → pods ------------------------------------------------------------------------

#[test]
fn slots_split_into_pods_of_max_slots_per_pod() {
    let defaults = values("seed003-values.yaml"); // maxSlotsPerPod: 8
    let exp = experiment("gpu-trial.yaml");
    for (slots, pods, per_pod) in [(8, 1, 8), (16, 2, 8), (6, 1, 6), (1, 1, 1), (0, 1, 0)] {
        let t = resolve(&with_slots(exp.clone(), slots), &defaults);
        assert_eq!((t.pods, t.slots_per_pod), (pods, per_pod), "{slots} slots");
        let det = container(&t.pod_spec, DETERMINED_CONTAINER);
        if per_pod > 0 {
            // The GPU request is per pod: limits and requests.
            for list in ["limits", "requests"] {
                assert_eq!(
                    det["resources"][list]["nvidia.com/gpu"],
                    per_pod.to_string(),
                    "{slots} slots"
                );
            }
        } else {
            assert!(det.get("resources").is_none());
        }
        let parallelism = det["env"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == "DET_KUBERNETES_JOB_PARALLELISM")
            .unwrap();
        assert_eq!(parallelism["value"], pods.to_string());
    }
}

#[test]
fn uneven_slots_are_rejected_not_split() {
    let defaults = values("seed003-values.yaml");
    let errs = trial_pods(
        &with_slots(experiment("gpu-trial.yaml"), 12),
        &defaults,
        PodSpecMerge::StrategicMerge,
    )
    .unwrap_err();
    assert_eq!(
        errs,
        [FieldError {
            path: "resources.slots_per_trial".into(),
            message: "invalid resource request: slots (12) must be < or a multiple of \
                      max_slots_per_pod (8)"
                .into(),
        }]
    );
}

#[test]
fn single_node_trial_must_fit_one_pod() {
    let mut exp = with_slots(experiment("gpu-trial.yaml"), 16);
    exp.resources.is_single_node = Some(true);
    let errs = trial_pods(
        &exp,
        &values("seed003-values.yaml"),
        PodSpecMerge::StrategicMerge,
    )
    .unwrap_err();
    assert!(errs[0].message.contains("on single pod"), "{errs:#?}");
}

#[test]
fn missing_max_slots_per_pod_is_a_chart_error() {
    let mut defaults = values("seed003-values.yaml");
    defaults.max_slots_per_pod = None;
    let errs = trial_pods(
        &experiment("gpu-trial.yaml"),
        &defaults,
        PodSpecMerge::StrategicMerge,
    )
    .unwrap_err();
    assert_eq!(errs[0].path, "maxSlotsPerPod");
}

// --- overwritten and ignored fields --------------------------------------------------------

#[test]
fn overwritten_and_ignored_fields_warn() {
    let t = resolve(
        &experiment("overwrite-experiment.yaml"),
        &values("merge-values.yaml"),
    );
    let pod = &t.pod_spec;
    for needle in [
        "environment.pod_spec.metadata.name is overwritten",
        "environment.pod_spec.metadata.namespace is overwritten",
        "environment.pod_spec.metadata.labels[determined.ai/task_type] is overwritten",
        "environment.pod_spec.spec.hostNetwork is overwritten",
        "environment.pod_spec.spec.restartPolicy is overwritten: Determined always sets Never",
        "environment.pod_spec.spec.containers[determined-container].workingDir is ignored: \
         Determined sets the working directory to /run/determined/workdir",
        "environment.pod_spec.spec.containers[determined-container].livenessProbe is ignored",
        "environment.pod_spec.spec.containers[determined-container].imagePullPolicy is ignored",
        "environment.pod_spec.spec.containers[determined-container].resources.limits[nvidia.com/gpu] \
         is ignored: Determined sets nvidia.com/gpu: 2",
        "environment.pod_spec.spec.containers[determined-container].securityContext.runAsUser is ignored",
    ] {
        assert!(
            has_warning(&t, needle),
            "missing {needle:?} in {:#?}",
            t.warnings
        );
    }
    assert_ne!(pod["metadata"]["name"], "my-pod");
    assert_eq!(pod["metadata"]["namespace"], "default");
    assert_eq!(
        pod["metadata"]["labels"]["determined.ai/task_type"],
        "TRIAL"
    );
    assert!(pod["spec"].get("hostNetwork").is_none());
    assert_eq!(pod["spec"]["restartPolicy"], "Never");
    let det = container(pod, DETERMINED_CONTAINER);
    assert_eq!(det["workingDir"], WORK_DIR);
    assert_eq!(det["imagePullPolicy"], "IfNotPresent");
    assert!(det.get("livenessProbe").is_none());
    // Kept: env after Determined's, envFrom, memory, the GPU count from the slots.
    let env = names(&det["env"]);
    assert_eq!(env.last(), Some(&"MY_FLAG"));
    assert!(
        env.iter().position(|n| *n == "DET_KUBERNETES_POD_IP")
            < env.iter().position(|n| *n == "MY_FLAG")
    );
    assert_eq!(det["envFrom"][0]["configMapRef"]["name"], "training-config");
    assert_eq!(det["resources"]["limits"]["memory"], "64Gi");
    assert_eq!(det["resources"]["limits"]["nvidia.com/gpu"], "2");
    assert_eq!(det["resources"]["requests"]["nvidia.com/gpu"], "2");
    assert_eq!(det["securityContext"], json!({"privileged": false}));
    assert_eq!(
        t.provenance["spec.containers[name=determined-container].env[name=MY_FLAG].value"],
        USER_SOURCE
    );
    assert_eq!(
        t.provenance["spec.containers[name=determined-container].resources.limits.nvidia.com/gpu"],
        DETERMINED_SOURCE
    );
}

#[test]
fn expconf_schema_rejects_image_in_any_task_container() {
    let errs = trial_pods(
        &experiment("rejected-experiment.yaml"),
        &values("merge-values.yaml"),
        PodSpecMerge::StrategicMerge,
    )
    .unwrap_err();
    let got: Vec<(&str, &str)> = errs
        .iter()
        .map(|e| (e.path.as_str(), e.message.as_str()))
        .collect();
    assert_eq!(
        got,
        [
            (
                "environment.pod_spec.spec.containers[0].image",
                "container Image is not configurable, set it in the experiment config"
            ),
            (
                "environment.pod_spec.spec.containers[0].command",
                "container Command is not configurable"
            ),
            (
                "environment.pod_spec.spec.containers[1].image",
                "container Image is not configurable, set it in the experiment config"
            ),
        ]
    );
}

#[test]
fn default_determined_container_image_is_a_master_config_error() {
    let mut defaults = values("merge-values.yaml");
    defaults
        .task_container_defaults
        .gpu_pod_spec
        .as_mut()
        .unwrap()["spec"]["containers"][0]["image"] = json!("my/image:1");
    let errs = trial_pods(
        &experiment("gpu-trial.yaml"),
        &defaults,
        PodSpecMerge::StrategicMerge,
    )
    .unwrap_err();
    assert_eq!(
        errs[0].path,
        "taskContainerDefaults.gpuPodSpec.spec.containers[0].image"
    );
}

#[test]
fn dev_shm_mount_in_default_collides_with_determined_shm() {
    // A common chart pattern mounts an emptyDir at /dev/shm; Determined mounts its own
    // det-shm-volume there, and the API server rejects the duplicate mount path.
    let errs = trial_pods(
        &experiment("gpu-trial.yaml"),
        &values("shm-values.yaml"),
        PodSpecMerge::StrategicMerge,
    )
    .unwrap_err();
    assert_eq!(errs.len(), 1, "{errs:#?}");
    assert_eq!(errs[0].path, "taskContainerDefaults.gpuPodSpec");
    assert!(
        errs[0].message.contains("\"/dev/shm\": must be unique")
            && errs[0].message.contains("default gpuPodSpec"),
        "{errs:#?}"
    );
}

// --- pools, scheduler, affinity ------------------------------------------------------------

#[test]
fn pool_defaults_replace_cluster_pod_spec_and_max_slots() {
    let defaults = values("pools-values.yaml");
    let mut exp = with_slots(experiment("gpu-trial.yaml"), 8);
    exp.resources.resource_pool = Some("a100".into());
    exp.environment.image = None; // the pool's image applies
    let t = resolve(&exp, &defaults);
    assert_eq!((t.pods, t.slots_per_pod), (2, 4));
    assert_eq!(t.resource_pool, "a100");
    let pod = &t.pod_spec;
    assert_eq!(pod["metadata"]["namespace"], "team-a");
    // The pool's gpu_pod_spec replaces the cluster's whole: no cluster nodeSelector.
    assert_eq!(pod["spec"]["nodeSelector"], json!({"pool": "a100"}));
    assert_eq!(
        t.provenance["spec.nodeSelector.pool"],
        "default gpu_pod_spec of resource pool a100"
    );
    assert_eq!(container(pod, DETERMINED_CONTAINER)["image"], "my/a100:1");

    // A CPU task in the same pool still gets the cluster-level cpuPodSpec.
    let t = resolve(&with_slots(exp, 0), &defaults);
    assert_eq!(
        t.pod_spec["metadata"]["labels"]["customLabel"],
        "cluster-cpu"
    );

    // The default pool: cluster-level gpuPodSpec and maxSlotsPerPod.
    let t = resolve(&with_slots(experiment("gpu-trial.yaml"), 8), &defaults);
    assert_eq!((t.pods, t.slots_per_pod), (1, 8));
    assert_eq!(t.pod_spec["spec"]["nodeSelector"], json!({"gpu": "any"}));
}

#[test]
fn unknown_pool_is_an_error() {
    let mut exp = experiment("gpu-trial.yaml");
    exp.resources.resource_pool = Some("nope".into());
    let errs = trial_pods(
        &exp,
        &values("pools-values.yaml"),
        PodSpecMerge::StrategicMerge,
    )
    .unwrap_err();
    assert_eq!(errs[0].path, "resources.resource_pool");
}

#[test]
fn coscheduler_sets_scheduler_and_pod_group_labels() {
    let mut defaults = values("seed003-values.yaml");
    defaults.default_scheduler = Some(COSCHEDULER.into());
    let t = resolve(&with_slots(experiment("gpu-trial.yaml"), 16), &defaults);
    let pod = &t.pod_spec;
    assert_eq!(pod["spec"]["schedulerName"], COSCHEDULER);
    assert_eq!(
        pod["metadata"]["labels"]["pod-group.scheduling.sigs.k8s.io/min-available"],
        "2"
    );
    assert_eq!(
        pod["metadata"]["labels"]["pod-group.scheduling.sigs.k8s.io/name"],
        pod["metadata"]["name"]
    );
}

#[test]
fn priority_makes_a_priority_class_only_when_the_pod_names_none() {
    let mut exp = experiment("gpu-trial.yaml");
    exp.resources.priority = Some(42);
    let t = resolve(&exp, &values("seed003-values.yaml"));
    let (name, value) = t.priority_class.clone().unwrap();
    assert_eq!(value, 42);
    assert_eq!(t.pod_spec["spec"]["priorityClassName"], name);

    exp.environment.pod_spec = Some(json!({"spec": {"priorityClassName": "team-high"}}));
    let t = resolve(&exp, &values("seed003-values.yaml"));
    assert!(t.priority_class.is_none());
    assert_eq!(t.pod_spec["spec"]["priorityClassName"], "team-high");
}

#[test]
fn node_disable_requirement_goes_to_first_term_only() {
    let mut defaults = values("seed003-values.yaml");
    defaults.cluster_id = Some("abc".into());
    let t = resolve(&experiment("affinity-experiment.yaml"), &defaults);
    let terms = &t.pod_spec["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        ["nodeSelectorTerms"];
    let disabled = json!({"key": "determined.ai/cluster-id-abc", "operator": "DoesNotExist"});
    assert_eq!(
        terms[0]["matchExpressions"].as_array().unwrap().last(),
        Some(&disabled)
    );
    assert!(
        !terms[1]["matchExpressions"]
            .as_array()
            .unwrap()
            .contains(&disabled)
    );
    let term0 = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution\
                 .nodeSelectorTerms[0]";
    assert_eq!(
        t.provenance[&format!("{term0}.matchExpressions[0].key")],
        USER_SOURCE
    );
    assert_eq!(
        t.provenance[&format!("{term0}.matchExpressions[1].key")],
        DETERMINED_SOURCE
    );

    // Without a node affinity, Determined creates one.
    let t = resolve(&experiment("gpu-trial.yaml"), &defaults);
    assert_eq!(
        t.pod_spec["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"],
        json!([{"matchExpressions": [disabled]}])
    );
}

#[test]
fn label_values_are_sanitized_as_upstream() {
    assert_eq!(pod_label_value("default"), "default");
    assert_eq!(pod_label_value("my pool!"), "my_pool");
    assert_eq!(pod_label_value("-x-"), "x");
    assert_eq!(pod_label_value(&"a".repeat(70)), "a".repeat(63));
}

#[test]
fn experiment_config_errors_name_the_field() {
    let errs = ExperimentConfig::from_value(
        &json!({"resources": {"slots_per_trial": "eight"}, "searcher": {"name": "single"}}),
    )
    .unwrap_err();
    assert_eq!(errs[0].path, "resources.slots_per_trial");
    // Image as a string or a per-device map; null sections are defaults.
    let exp = ExperimentConfig::from_value(
        &json!({"environment": {"image": {"cpu": "c", "gpu": "g"}}, "resources": null}),
    )
    .unwrap();
    assert_eq!(
        exp.environment.image.unwrap().per_device().cuda.as_deref(),
        Some("g")
    );
}
