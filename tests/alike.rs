//! TrainJobs alike but for their name share one resolution (`resolve::alike`): every job must
//! still get exactly what resolving it on its own gives, whatever its name.

use schedsim::bench::{SHIPPED_RUNTIMES, shipped_runtimes};
use schedsim::features::FeatureGates;
use schedsim::resolve::alike::Alike;
use schedsim::resolve::build::{BuildOptions, DEFAULT_CLOCK};
use schedsim::resolve::trainjob::TrainJob;
use schedsim::resolve::{InitializerLifecycle, train_job_pods};
use serde_json::{Value, json};

/// Specs that exercise what resolution embeds a name in: labels, env, claim volumes (JobSet),
/// PodGroups, MPI secrets, and overrides that themselves name a job.
fn specs() -> Vec<Value> {
    vec![
        json!({}),
        json!({"trainer": {"numNodes": 3, "resourcesPerNode": {"requests": {"cpu": "2", "nvidia.com/gpu": "1"}, "limits": {"nvidia.com/gpu": "1"}}}}),
        json!({"runtimePatches": [{"manager": "trainer.kubeflow.org/kubeflow-sdk", "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [{"name": "node", "template": {"spec": {"template": {"spec": {
            "nodeSelector": {"pool": "a100"},
            "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"jobset.sigs.k8s.io/jobset-name": "job-00001"}}}]}}
        }}}}}]}}}}]}),
        // The stand-ins themselves in the input: such a shape must not be shared wrongly.
        json!({"trainer": {"env": [{"name": "X", "value": "qzqzqzqzq-xkxkxkxkx-qzq-xkx"}]}}),
    ]
}

fn names() -> Vec<String> {
    [
        "a",
        "q",
        "x",
        "qz",
        "tj",
        "job-00001",
        "job-00002",
        "qzqzqzqzq",
        "llm-finetune-7b",
    ]
    .into_iter()
    .map(str::to_string)
    .chain(["j".repeat(63), format!("a{}", "0".repeat(62))])
    .collect()
}

#[test]
fn alike_jobs_resolve_exactly_as_on_their_own() {
    let runtimes = shipped_runtimes().expect("fixtures/runtimes loads");
    let gates = FeatureGates::default();
    for overrides in [true, false] {
        let opts = BuildOptions {
            overrides,
            track: false,
            clock: DEFAULT_CLOCK,
        };
        // One cache across every job, as a scenario has.
        let alike = Alike::default();
        for runtime in SHIPPED_RUNTIMES {
            for (s, spec) in specs().into_iter().enumerate() {
                for name in names() {
                    let mut value = json!({"metadata": {"name": name, "namespace": "ml", "labels": {"team": "a"}}, "spec": spec});
                    value["spec"]["runtimeRef"] = json!({"name": runtime});
                    let job: TrainJob = serde_json::from_value(value).unwrap();
                    let direct = train_job_pods(
                        &job,
                        &runtimes,
                        opts,
                        &gates,
                        InitializerLifecycle::Complete,
                    );
                    let shared = alike.train_job_pods(
                        &job,
                        &runtimes,
                        opts,
                        &gates,
                        InitializerLifecycle::Complete,
                    );
                    assert_eq!(
                        format!("{shared:?}"),
                        format!("{direct:?}"),
                        "runtime {runtime}, job {name}, spec {spec}, overrides {overrides}"
                    );
                    let unmade = alike.unmade(
                        &job,
                        &runtimes,
                        opts,
                        &gates,
                        InitializerLifecycle::Complete,
                    );
                    // Ordinary jobs do share their shape (a stand-in as short as "a" occurs
                    // in other strings, and the input of spec 3 holds the stand-ins).
                    if name.len() > 2 && !name.starts_with("qz") && s != 3 {
                        assert!(unmade.is_some(), "{runtime} {name} {spec} is not shared");
                    }
                    if let Some(unmade) = unmade {
                        let pods = direct.as_ref().unwrap().pods.iter();
                        let keys: Vec<String> = pods.clone().map(|p| p.key()).collect();
                        assert_eq!(unmade.keys(), keys, "{runtime} {name}");
                        let workloads: Vec<String> =
                            pods.filter_map(|p| p.workload.clone()).collect();
                        assert_eq!(unmade.workloads(), workloads, "{runtime} {name}");
                    }
                }
            }
        }
    }
}
