//! Synthetic GPU clusters and workloads for benchmarks: the shape of the target
//! (5,000 nodes × 10,000 pods, GPU requests, selectors, taints, tolerations, 20 distinct pod
//! templates), generated deterministically from a seed.

use std::collections::BTreeMap;
use std::time::Instant;

use k8s_openapi::api::core::v1::Affinity;
use k8s_openapi::api::core::v1::{
    NodeAffinity, NodeSelectorRequirement, NodeSelectorTerm, PreferredSchedulingTerm, Taint,
    Toleration,
};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use serde::Serialize;

use crate::model::resources::{self, ResourceList};
use crate::model::{Node, Pod};
use crate::sched::plan::Step;
use crate::sched::{PodPhase, SchedulerConfig};

/// A GPU node shape: (pool, GPU product, GPUs per node, milli-CPU, memory GiB, share of nodes in %).
const SHAPES: &[(&str, &str, i64, i64, i64, u32)] = &[
    ("a100-p4d", "NVIDIA-A100-SXM4-40GB", 8, 95_690, 1_100, 20),
    ("h100-p5", "NVIDIA-H100-80GB-HBM3", 8, 191_450, 1_900, 10),
    ("l4-g6", "NVIDIA-L4", 4, 47_810, 180, 20),
    ("t4-g4dn", "Tesla-T4", 1, 3_920, 14, 20),
    ("cpu-m5", "", 0, 15_890, 56, 30),
];
const ZONES: &[&str] = &["us-east-1a", "us-east-1b", "us-east-1c"];

/// Nodes in pools by [`SHAPES`], spread over three zones; GPU pools carry the GPU taint.
pub fn nodes(count: usize) -> Vec<Node> {
    let mut out = Vec::with_capacity(count);
    let mut i = 0;
    for (s, &(pool, product, gpus, cpu, mem_gib, share)) in SHAPES.iter().enumerate() {
        let n = if s == SHAPES.len() - 1 {
            count - out.len()
        } else {
            count * share as usize / 100
        };
        for _ in 0..n {
            let name = format!("{pool}-{i:05}");
            let mut labels: BTreeMap<String, String> = [
                ("kubernetes.io/hostname", name.as_str()),
                ("karpenter.sh/nodepool", pool),
                ("topology.kubernetes.io/zone", ZONES[i % ZONES.len()]),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
            let mut allocatable: ResourceList = [
                (resources::CPU.to_string(), cpu),
                (resources::MEMORY.to_string(), mem_gib << 30),
                (resources::PODS.to_string(), 110),
            ]
            .into_iter()
            .collect();
            let mut taints = Vec::new();
            if gpus > 0 {
                labels.insert("nvidia.com/gpu.product".into(), product.into());
                labels.insert("nvidia.com/gpu.count".into(), gpus.to_string());
                allocatable.insert("nvidia.com/gpu".into(), gpus);
                taints.push(Taint {
                    key: "nvidia.com/gpu".into(),
                    value: Some("true".into()),
                    effect: "NoSchedule".into(),
                    ..Default::default()
                });
            }
            out.push(Node {
                name,
                labels,
                taints,
                unschedulable: false,
                allocatable,
                pool: None,
            });
            i += 1;
        }
    }
    out
}

/// `count` pods drawn (seeded) from `templates` distinct templates: GPU pods select a product
/// and tolerate the taint, some prefer a zone; the rest are CPU pods.
pub fn pods(count: usize, templates: usize, seed: u64) -> Vec<Pod> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let shapes: Vec<Pod> = (0..templates).map(|t| template(t, &mut rng)).collect();
    (0..count)
        .map(|i| {
            let mut p = shapes[rng.random_range(0..shapes.len())].clone();
            p.name = format!("{}-{i:05}", p.name);
            p
        })
        .collect()
}

/// Gives every pod required anti-affinity to the pods of its template on the same host (the
/// shape of scheduler_perf's PodAntiAffinity workload) and a preferred zone spread over them
/// (`ScheduleAnyway`, maxSkew 1), labelling it with its template.
pub fn with_anti_affinity_and_zone_spread(pods: &mut [Pod]) {
    use k8s_openapi::api::core::v1::{PodAffinityTerm, PodAntiAffinity, TopologySpreadConstraint};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
    for p in pods {
        let template = p
            .name
            .rsplit_once('-')
            .map_or(p.name.clone(), |(t, _)| t.to_string());
        p.labels.insert("template".into(), template.clone());
        let selector = LabelSelector {
            match_labels: Some([("template".to_string(), template)].into_iter().collect()),
            match_expressions: None,
        };
        let term = PodAffinityTerm {
            label_selector: Some(selector.clone()),
            topology_key: "kubernetes.io/hostname".into(),
            ..Default::default()
        };
        let affinity = p.affinity.get_or_insert_with(Default::default);
        affinity.pod_anti_affinity = Some(PodAntiAffinity {
            required_during_scheduling_ignored_during_execution: Some(vec![term]),
            preferred_during_scheduling_ignored_during_execution: None,
        });
        p.topology_spread_constraints = vec![TopologySpreadConstraint {
            max_skew: 1,
            topology_key: "topology.kubernetes.io/zone".into(),
            when_unsatisfiable: "ScheduleAnyway".into(),
            label_selector: Some(selector),
            ..Default::default()
        }];
    }
}

fn template(t: usize, rng: &mut ChaCha8Rng) -> Pod {
    let gpu_shapes: Vec<_> = SHAPES.iter().filter(|s| s.2 > 0).collect();
    let mut requests = ResourceList::new();
    let mut p = Pod {
        namespace: "bench".into(),
        scheduler_name: "default-scheduler".into(),
        ..Default::default()
    };
    if t % 5 == 4 {
        p.name = format!("cpu-t{t:02}");
        requests.insert(resources::CPU.into(), 500 * rng.random_range(1..=8));
        requests.insert(resources::MEMORY.into(), rng.random_range(1..=16) << 30);
    } else {
        let &&(_, product, max_gpus, cpu, mem_gib, _) = &gpu_shapes[t % gpu_shapes.len()];
        let gpus = [1, 2, 4, 8]
            .into_iter()
            .filter(|g| *g <= max_gpus)
            .nth(rng.random_range(0..4) % 4)
            .unwrap_or(1);
        p.name = format!("gpu-t{t:02}");
        requests.insert("nvidia.com/gpu".into(), gpus);
        requests.insert(resources::CPU.into(), cpu * gpus / max_gpus / 2);
        requests.insert(
            resources::MEMORY.into(),
            (mem_gib << 30) * gpus / max_gpus / 2,
        );
        p.node_selector
            .insert("nvidia.com/gpu.product".into(), product.into());
        p.tolerations.push(Toleration {
            key: Some("nvidia.com/gpu".into()),
            operator: Some("Exists".into()),
            effect: Some("NoSchedule".into()),
            ..Default::default()
        });
        if t.is_multiple_of(3) {
            let zone = ZONES[t % ZONES.len()];
            let term = NodeSelectorTerm {
                match_expressions: Some(vec![NodeSelectorRequirement {
                    key: "topology.kubernetes.io/zone".into(),
                    operator: "In".into(),
                    values: Some(vec![zone.into()]),
                }]),
                match_fields: None,
            };
            p.affinity = Some(Affinity {
                node_affinity: Some(NodeAffinity {
                    preferred_during_scheduling_ignored_during_execution: Some(vec![
                        PreferredSchedulingTerm {
                            weight: 50,
                            preference: term,
                        },
                    ]),
                    required_during_scheduling_ignored_during_execution: None,
                }),
                ..Default::default()
            })
            .into();
        }
    }
    p.score_requests = requests.clone().into();
    p.requests = requests.into();
    p
}

/// Figures of one timed scheduling run.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BenchResult {
    pub name: String,
    pub nodes: usize,
    pub pods: usize,
    /// Pods that were placed: running, or ran to completion.
    pub scheduled: usize,
    pub pending: usize,
    pub seconds: f64,
    pub pods_per_second: f64,
    /// Peak resident memory of the process so far (VmHWM), in MiB.
    pub peak_rss_mib: Option<f64>,
    /// On scenario files: the whole run as `schedsim run` does it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub whole_run: Option<WholeRun>,
}

/// The phases a user waits for: reading the files, then scheduling and writing the report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WholeRun {
    /// Reading, parsing and resolving every scenario file given (shared by their scenarios).
    pub load_seconds: f64,
    /// `run`'s work for this scenario: scheduling (twice when TrainJobs carry overrides, for
    /// the override effect), the report model, its JSON and its tables.
    pub schedule_and_report_seconds: f64,
    pub seconds: f64,
    pub pods_per_second: f64,
    pub report_json_bytes: usize,
}

/// Times `run`'s work on one loaded scenario, after `load_seconds` of loading.
pub fn whole_run(scenario: &crate::load::Scenario, load_seconds: f64) -> WholeRun {
    let start = Instant::now();
    let report = crate::report::RunReport::new(vec![crate::simulate(scenario)]);
    let json = crate::report::to_json(&report);
    let table = crate::report::table::render(&report);
    let run = start.elapsed().as_secs_f64();
    let seconds = load_seconds + run;
    let pods = scenario.workloads.len();
    std::hint::black_box(&table);
    crate::release_at_exit(report);
    WholeRun {
        load_seconds,
        schedule_and_report_seconds: run,
        seconds,
        pods_per_second: pods as f64 / seconds.max(1e-9),
        report_json_bytes: json.len(),
    }
}

/// Schedules `pods` on `nodes` once, by `steps`, and measures it.
pub fn measure(
    name: &str,
    nodes: Vec<Node>,
    existing: &[Pod],
    pods: &[Pod],
    steps: &[Step],
    config: &SchedulerConfig,
) -> BenchResult {
    let n = nodes.len();
    // Nothing renders the pending pods' per-node verdicts here: keep only their messages.
    let config = SchedulerConfig {
        drop_node_verdicts: true,
        ..config.clone()
    };
    let start = Instant::now();
    let outcome = crate::sched::schedule_plan(nodes, existing, pods, steps, &config);
    let seconds = start.elapsed().as_secs_f64();
    let count = |phases: &[PodPhase]| {
        outcome
            .pods
            .iter()
            .filter(|p| phases.contains(&p.phase))
            .count()
    };
    // Succeeded pods (initializers) ran; they are neither pending nor still running.
    let scheduled = count(&[PodPhase::Scheduled, PodPhase::Succeeded]);
    BenchResult {
        name: name.to_string(),
        nodes: n,
        pods: pods.len(),
        scheduled,
        pending: pods.len() - scheduled,
        seconds,
        pods_per_second: pods.len() as f64 / seconds.max(1e-9),
        peak_rss_mib: peak_rss_mib(),
        whole_run: None,
    }
}

/// Peak resident set size from `/proc/self/status` (Linux), in MiB.
pub fn peak_rss_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// The ClusterTrainingRuntimes Kubeflow Trainer ships (`manifests/base/runtimes/`).
pub const SHIPPED_RUNTIMES: &[&str] = &[
    "deepspeed-distributed",
    "jax-distributed",
    "mlx-distributed",
    "torch-distributed",
    "torch-distributed-with-cache",
    "torchtune-llama3.2-1b",
    "torchtune-llama3.2-3b",
    "torchtune-qwen2.5-1.5b",
    "xgboost-distributed",
];

/// The runtimes in `fixtures/runtimes/`, read from `fixtures/runtimes/` (the working directory's, else
/// the source tree's).
pub fn shipped_runtimes() -> Result<crate::resolve::Runtimes, String> {
    let local = std::path::PathBuf::from("fixtures/runtimes");
    let dir = if local.is_dir() {
        local
    } else {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/runtimes")
    };
    let mut runtimes = crate::resolve::Runtimes::default();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    for file in files {
        for doc in crate::yaml::read_documents(&file).map_err(|e| e.to_string())? {
            if doc.value.get("kind").and_then(serde_json::Value::as_str)
                == Some("ClusterTrainingRuntime")
            {
                let runtime: crate::resolve::runtime::TrainingRuntime =
                    serde_json::from_value(doc.value.clone())
                        .map_err(|e| format!("{}: {e}", file.display()))?;
                runtimes.insert(runtime);
            }
        }
    }
    Ok(runtimes)
}

/// `count` TrainJobs over the given runtimes, each with three overrides of the `node` job:
/// GPU placement (nodeSelector, tolerations), storage (a volume mounted into `node`), identity
/// (service account, image pull secrets, labels).
pub fn train_jobs(
    count: usize,
    runtimes: &[String],
    seed: u64,
) -> Vec<crate::resolve::trainjob::TrainJob> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    (0..count)
        .map(|i| {
            let runtime = &runtimes[i % runtimes.len().max(1)];
            let product = SHAPES[rng.random_range(0..4)].1;
            let job = serde_json::json!({
                "apiVersion": "trainer.kubeflow.org/v1alpha1",
                "kind": "TrainJob",
                "metadata": {"name": format!("job-{i:05}"), "namespace": format!("team-{}", i % 7)},
                "spec": {
                    "runtimeRef": {"name": runtime},
                    "trainer": {"numNodes": rng.random_range(1..=4), "resourcesPerNode": {"limits": {"nvidia.com/gpu": 8}}},
                    "podTemplateOverrides": [
                        {"targetJobs": [{"name": "node"}], "spec": {
                            "nodeSelector": {"nvidia.com/gpu.product": product},
                            "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]}},
                        {"targetJobs": [{"name": "node"}], "spec": {
                            "volumes": [{"name": "checkpoints", "persistentVolumeClaim": {"claimName": format!("ckpt-{i}")}}],
                            "containers": [{"name": "node", "volumeMounts": [{"name": "checkpoints", "mountPath": "/checkpoints"}]}]}},
                        {"targetJobs": [{"name": "node"}], "metadata": {"labels": {"team": format!("team-{}", i % 7)}},
                         "spec": {"serviceAccountName": "trainer", "imagePullSecrets": [{"name": "registry"}]}}
                    ]
                }
            });
            serde_json::from_value(job).expect("generated TrainJob is well-formed")
        })
        .collect()
}
