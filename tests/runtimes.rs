//! The shipped Kubeflow runtimes load unmodified and build the pods Trainer would make.

use schedsim::bench::{SHIPPED_RUNTIMES, shipped_runtimes};
use schedsim::features::FeatureGates;
use schedsim::resolve::build::BuildOptions;
use schedsim::resolve::trainjob::TrainJob;
use schedsim::resolve::{InitializerLifecycle, TrainJobPods, train_job_pods};
use schedsim::sched::plan::Step;
use serde_json::{Value, json};

fn resolve(runtime: &str, spec: Value) -> TrainJobPods {
    let runtimes = shipped_runtimes().expect("fixtures/runtimes loads");
    let mut trainjob = json!({"metadata": {"name": "tj", "namespace": "ml"}, "spec": spec});
    trainjob["spec"]["runtimeRef"] = json!({"name": runtime});
    let job: TrainJob = serde_json::from_value(trainjob).unwrap();
    let opts = BuildOptions {
        overrides: true,
        track: true,
        clock: schedsim::resolve::build::DEFAULT_CLOCK,
    };
    train_job_pods(
        &job,
        &runtimes,
        opts,
        &FeatureGates::default(),
        InitializerLifecycle::Complete,
    )
    .unwrap_or_else(|e| panic!("{runtime}: {e:?}"))
}

fn counts(p: &TrainJobPods) -> Vec<(String, i32)> {
    p.resolved
        .jobs
        .iter()
        .map(|j| (j.name.clone(), j.pod_count()))
        .collect()
}

fn env(p: &TrainJobPods, job: &str, name: &str) -> Option<String> {
    let template = &*p
        .resolved
        .jobs
        .iter()
        .find(|j| j.name == job)?
        .pod_template
        .value();
    let node = template["spec"]["containers"]
        .as_array()?
        .iter()
        .find(|c| c["name"] == "node")?;
    node["env"]
        .as_array()?
        .iter()
        .find(|e| e["name"] == name)
        .map(|e| e["value"].as_str().unwrap_or("").to_string())
}

#[test]
fn every_shipped_runtime_builds_its_pods() {
    let spec =
        json!({"trainer": {"numNodes": 3, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 8}}}});
    let expected: &[(&str, &[(&str, i32)])] = &[
        ("torch-distributed", &[("node", 3)]),
        (
            "torch-distributed-with-cache",
            &[("dataset-initializer", 1), ("node", 3)],
        ),
        (
            "torchtune-llama3.2-1b",
            &[
                ("dataset-initializer", 1),
                ("model-initializer", 1),
                ("node", 3),
            ],
        ),
        (
            "torchtune-llama3.2-3b",
            &[
                ("dataset-initializer", 1),
                ("model-initializer", 1),
                ("node", 3),
            ],
        ),
        (
            "torchtune-qwen2.5-1.5b",
            &[
                ("dataset-initializer", 1),
                ("model-initializer", 1),
                ("node", 3),
            ],
        ),
        // MPI with runLauncherAsNode: numNodes - 1 workers plus the launcher.
        ("deepspeed-distributed", &[("node", 2), ("launcher", 1)]),
        ("mlx-distributed", &[("node", 2), ("launcher", 1)]),
        ("jax-distributed", &[("node", 3)]),
        ("xgboost-distributed", &[("node", 3)]),
    ];
    assert_eq!(expected.len(), SHIPPED_RUNTIMES.len());
    for (runtime, jobs) in expected {
        let p = resolve(runtime, spec.clone());
        let want: Vec<(String, i32)> = jobs.iter().map(|(n, c)| (n.to_string(), *c)).collect();
        assert_eq!(counts(&p), want, "{runtime}");
        assert_eq!(
            p.pods.len() as i32,
            want.iter().map(|(_, c)| c).sum::<i32>(),
            "{runtime}"
        );
        for pod in &p.pods {
            assert_eq!(pod.workload.as_deref(), Some("tj"));
            assert_eq!(pod.labels["jobset.sigs.k8s.io/jobset-name"], "tj");
        }
    }
}

#[test]
fn torch_policy_sets_the_rendezvous_env_and_resources_per_node() {
    let p = resolve(
        "torch-distributed",
        json!({"trainer": {"numNodes": 4, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 8, "cpu": "32"}}}}),
    );
    assert_eq!(env(&p, "node", "PET_NNODES").as_deref(), Some("4"));
    assert_eq!(
        env(&p, "node", "PET_NPROC_PER_NODE").as_deref(),
        Some("auto")
    );
    assert_eq!(
        env(&p, "node", "PET_MASTER_ADDR").as_deref(),
        Some("tj-node-0-0.tj")
    );
    assert_eq!(
        p.pods[0].requests["nvidia.com/gpu"], 8,
        "requests default to the resourcesPerNode limits"
    );
    assert_eq!(p.pods[0].requests["cpu"], 32_000);
    let names: Vec<&str> = p.pods.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        ["tj-node-0-0", "tj-node-0-1", "tj-node-0-2", "tj-node-0-3"]
    );
    let prov = &p.resolved.jobs[0].provenance;
    assert_eq!(
        prov["spec.containers[name=node].env[name=PET_NNODES].value"],
        "mlPolicy.torch"
    );
    assert_eq!(
        prov["spec.containers[name=node].resources.limits.nvidia.com/gpu"],
        "spec.trainer.resourcesPerNode"
    );
    assert_eq!(
        prov["spec.containers[name=node].resources.requests.nvidia.com/gpu"],
        "defaulting"
    );
    assert_eq!(prov["spec.containers[name=node].image"], "runtime");
}

#[test]
fn cpu_only_torch_jobs_run_one_process_per_cpu() {
    let p = resolve(
        "torch-distributed",
        json!({"trainer": {"resourcesPerNode": {"requests": {"cpu": "6"}}}}),
    );
    assert_eq!(env(&p, "node", "PET_NPROC_PER_NODE").as_deref(), Some("6"));
    assert_eq!(
        env(&p, "node", "PET_NNODES").as_deref(),
        Some("1"),
        "the runtime's numNodes"
    );
}

#[test]
fn mpi_launcher_gets_hostfile_and_slots() {
    let p = resolve(
        "deepspeed-distributed",
        json!({"trainer": {"numNodes": 2, "resourcesPerNode": {"limits": {"nvidia.com/gpu": 4}}}}),
    );
    assert_eq!(
        env(&p, "launcher", "OMPI_MCA_orte_set_default_slots").as_deref(),
        Some("4")
    );
    assert_eq!(
        env(&p, "launcher", "OMPI_MCA_orte_default_hostfile").as_deref(),
        Some("/etc/mpi/hostfile")
    );
    let launcher = &p
        .resolved
        .jobs
        .iter()
        .find(|j| j.name == "launcher")
        .unwrap()
        .pod_template
        .value();
    let volumes: Vec<&str> = launcher["spec"]["volumes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert!(
        volumes.contains(&"mpi-ssh-auth") && volumes.contains(&"mpi-hostfile"),
        "{volumes:?}"
    );
}

#[test]
fn initializers_arrive_first_and_complete_before_the_trainer() {
    let p = resolve("torchtune-llama3.2-1b", json!({"trainer": {"numNodes": 2}}));
    // dataset-initializer (pod 0), model-initializer (pod 1), then both complete, then node pods.
    let kinds: Vec<String> = p
        .steps
        .iter()
        .map(|s| match s {
            Step::Schedule { pod, requires } => {
                format!("schedule {} ({} deps)", p.pods[*pod].name, requires.len())
            }
            Step::Complete { pods } => format!("complete {pods:?}"),
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "schedule tj-dataset-initializer-0-0 (0 deps)",
            "schedule tj-model-initializer-0-0 (0 deps)",
            "complete [0, 1]",
            "schedule tj-node-0-0 (2 deps)",
            "schedule tj-node-0-1 (2 deps)",
        ]
    );
    // Trainer's env wins over the runtime's for the initializers' STORAGE_URI.
    let p = resolve(
        "torchtune-llama3.2-1b",
        json!({"initializer": {"dataset": {"storageUri": "hf://my/dataset"}}}),
    );
    let template = p.resolved.jobs[0].pod_template.value();
    let ds = &template["spec"]["containers"][0]["env"];
    assert_eq!(
        ds[0],
        json!({"name": "STORAGE_URI", "value": "hf://my/dataset"})
    );
}
