//! GPU sharing in the scheduler (`Open-Gpu-Share` and the six score plugins of the FGD
//! paper's simulator, `sched::gpu_share`), checked on random clusters and pods: every run is
//! replayed pod by pod beside the report, and at each step the pod went to a node that passed
//! every filter then, with the policy's best score among those nodes, on the GPUs its
//! `gpuSelMethod` picks; a pod left pending fitted nowhere.

mod common;

use std::path::PathBuf;

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use schedsim::load::{self, LoadOptions};
use schedsim::model::gpu_share::{GpuShare, MILLI};
use schedsim::report::ScenarioReport;
use schedsim::sched::PodPhase;
use schedsim::sched::gpu_share::frag::{NodeView, Typical, node_frag, typical_pods};
use schedsim::sched::gpu_share::policy::{self, Candidate, Policy};
use schedsim::sched::gpu_share::{self as share, Demand};

const MODELS: [&str; 3] = ["T4", "V100M16", "A10"];

struct TestNode {
    name: String,
    model: &'static str,
    cpu: i64,
    gpus: usize,
}

struct TestPod {
    name: String,
    cpu: i64,
    /// (milli, count, models) of the annotations; `None`: a CPU-only pod.
    gpu: Option<(i64, u32, &'static str)>,
}

fn random_cluster(rng: &mut ChaCha8Rng) -> (Vec<TestNode>, Vec<TestPod>) {
    let nodes = (0..rng.random_range(3..9))
        .map(|i| TestNode {
            name: format!("node-{i}"),
            model: MODELS[rng.random_range(0..MODELS.len())],
            cpu: [16, 32, 64][rng.random_range(0..3)] * 1000,
            gpus: [1, 2, 4, 8][rng.random_range(0..4)],
        })
        .collect();
    let pods = (0..rng.random_range(20..60))
        .map(|i| {
            let gpu = match rng.random_range(0..10) {
                0 => None,
                1..=5 => Some((100 * rng.random_range(1..10), 1, "")),
                6 => Some((500, 1, MODELS[rng.random_range(0..MODELS.len())])),
                _ => Some((MILLI, [1, 2, 4, 8][rng.random_range(0..4)], "")),
            };
            TestPod {
                name: format!("pod-{i:02}"),
                cpu: 1000 * rng.random_range(1..9),
                gpu,
            }
        })
        .collect();
    (nodes, pods)
}

fn plugin_name(policy: Policy) -> &'static str {
    schedsim::sched::plugins::registry::Plugin::of_policy(policy).name()
}

/// The scenario: the FGD simulator's scheduler set-up with one score plugin.
fn scenario(nodes: &[TestNode], pods: &[TestPod], policy: Policy, sel: &str) -> String {
    let mut y = String::from(
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: gpu-share}\nspec:\n  nodes:\n",
    );
    for n in nodes {
        y += &format!(
            "    - {{apiVersion: v1, kind: Node, metadata: {{name: {}, labels: {{alibabacloud.com/gpu-card-model: {}}}}}, status: {{allocatable: {{cpu: {}m, memory: 1Ti, pods: '110', alibabacloud.com/gpu-count: '{}'}}}}}}\n",
            n.name, n.model, n.cpu, n.gpus
        );
    }
    y += "  workloads:\n";
    for p in pods {
        let annotations = match p.gpu {
            None => String::new(),
            Some((milli, count, models)) => format!(
                ", annotations: {{alibabacloud.com/gpu-milli: '{milli}', alibabacloud.com/gpu-count: '{count}', alibabacloud.com/gpu-card-model: '{models}'}}"
            ),
        };
        y += &format!(
            "    - {{apiVersion: v1, kind: Pod, metadata: {{name: {}, namespace: default{annotations}}}, spec: {{containers: [{{name: c, image: i, resources: {{requests: {{cpu: {}m, memory: 1Gi}}}}}}]}}}}\n",
            p.name, p.cpu
        );
    }
    let args = match policy {
        Policy::DotProd => {
            "\n          - name: DotProductScore\n            args: {dimExtMethod: merge, normMethod: max}"
        }
        _ => "",
    };
    y += &format!(
        "  scheduler:\n    seed: 3\n    configuration:\n      apiVersion: kubescheduler.config.k8s.io/v1\n      kind: KubeSchedulerConfiguration\n      percentageOfNodesToScore: 100\n      profiles:\n        - plugins:\n            filter: {{enabled: [{{name: Open-Gpu-Share}}]}}\n            reserve: {{enabled: [{{name: Open-Gpu-Share}}]}}\n            score:\n              disabled: [{{name: '*'}}]\n              enabled: [{{name: {}, weight: 1000}}]\n          pluginConfig:\n          - name: Open-Gpu-Share\n            args: {{gpuSelMethod: {sel}}}{args}\n",
        plugin_name(policy)
    );
    y
}

fn run(dir: &std::path::Path, text: &str) -> ScenarioReport {
    let path = dir.join("scenario.yaml");
    std::fs::write(&path, text).unwrap();
    let loaded = load::load_files(&[PathBuf::from(&path)], &LoadOptions::default());
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    schedsim::simulate(&loaded.scenarios[0])
}

/// A node as the replay tracks it.
struct State {
    cpu_left: i64,
    left: Vec<i64>,
    tags: u64,
}

#[test]
fn every_placement_is_the_policys_best_feasible_node_on_the_gpus_it_picks() {
    let dir = common::cli::tempdir("gpu-share");
    for seed in 0..12u64 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let (nodes, pods) = random_cluster(&mut rng);
        let demands: Vec<Demand> = pods.iter().map(demand).collect();
        let typical = typical_pods(&demands);
        for policy in [
            Policy::DotProd,
            Policy::GpuClustering,
            Policy::GpuPacking,
            Policy::BestFit,
            Policy::Fgd,
        ] {
            let sel = if policy == Policy::Fgd {
                "FGDScore"
            } else {
                "best"
            };
            let report = run(&dir, &scenario(&nodes, &pods, policy, sel));
            let mut state: Vec<State> = (nodes.iter())
                .map(|n| State {
                    cpu_left: n.cpu,
                    left: vec![MILLI; n.gpus],
                    tags: 0,
                })
                .collect();
            for (p, (pod, d)) in report.pods.iter().zip(pods.iter().zip(&demands)) {
                let context = format!("seed {seed}, {policy:?}, {}", pod.name);
                let typical: &[Typical] = if policy == Policy::Fgd { &typical } else { &[] };
                let candidate = |i: usize| {
                    let s = &state[i];
                    let view = NodeView::whole(s.cpu_left, &s.left, nodes[i].model);
                    Candidate {
                        view,
                        frag: if typical.is_empty() {
                            0.0
                        } else {
                            node_frag(view, typical)
                        },
                        tags: s.tags,
                    }
                };
                let feasible: Vec<usize> = (0..nodes.len())
                    .filter(|&i| {
                        state[i].cpu_left >= pod.cpu
                            && fits_gpus(&state[i].left, nodes[i].model, pod)
                    })
                    .collect();
                let Some(node) = p.node.as_ref() else {
                    assert_eq!(p.status, PodPhase::Unschedulable, "{context}");
                    assert!(
                        feasible.is_empty(),
                        "{context}: pending, yet {feasible:?} fit"
                    );
                    continue;
                };
                let chosen = nodes.iter().position(|n| &n.name == node).unwrap();
                assert!(feasible.contains(&chosen), "{context}: {node} did not fit");
                if feasible.len() > 1 {
                    let score = |i: usize| policy::score(policy, candidate(i), d, typical).0;
                    let best = feasible.iter().map(|&i| score(i)).max().unwrap();
                    assert_eq!(score(chosen), best, "{context}: {node} is not a best node");
                }
                // The GPUs: FGD's own device, else the fullest that holds the share; whole
                // GPUs the lowest free.
                let expected: Vec<usize> = match pod.gpu {
                    None => Vec::new(),
                    Some((milli, 1, _)) if milli < MILLI && policy == Policy::Fgd => {
                        (policy::score(Policy::Fgd, candidate(chosen), d, typical).1)
                            .into_iter()
                            .collect()
                    }
                    Some((milli, 1, _)) if milli < MILLI => {
                        share::best_fit(&state[chosen].left, milli)
                            .into_iter()
                            .collect()
                    }
                    Some((_, count, _)) => {
                        policy::whole_devices(&state[chosen].left, count as usize)
                    }
                };
                assert_eq!(p.gpu_indices, expected, "{context}: GPUs on {node}");
                let s = &mut state[chosen];
                s.cpu_left -= pod.cpu;
                if let Some((milli, _, _)) = pod.gpu {
                    for &g in &expected {
                        s.left[g] -= milli;
                    }
                    s.tags |= policy::tag(d);
                }
            }
            // The report's free milli per GPU is the replay's.
            for (n, s) in report.nodes.iter().zip(&state) {
                assert_eq!(
                    n.gpu_share.as_ref().unwrap().free_milli,
                    s.left,
                    "seed {seed}, {policy:?}"
                );
            }
        }
    }
}

fn demand(p: &TestPod) -> Demand {
    let (milli, gpus, models) = p.gpu.unwrap_or((0, 0, ""));
    Demand {
        cpu_milli: p.cpu,
        gpus,
        milli,
        spec: models.to_string(),
        plugin: false,
    }
}

fn fits_gpus(left: &[i64], model: &str, pod: &TestPod) -> bool {
    let Some((milli, count, models)) = pod.gpu else {
        return true;
    };
    let want = GpuShare {
        milli,
        count,
        models: models.to_string(),
        index: None,
    };
    want.accepts(model) && share::allocate(left, &want).is_some()
}

/// Without a profile running Open-Gpu-Share, kube-scheduler reads no annotation: the pods are
/// placed by their requests, hold no GPUs, and the run warns; a share of several GPUs warns
/// too.
#[test]
fn annotations_without_the_plugin_are_ignored_with_a_warning() {
    let dir = common::cli::tempdir("gpu-share-warn");
    let nodes = [TestNode {
        name: "t4-0".into(),
        model: "T4",
        cpu: 16_000,
        gpus: 1,
    }];
    let pods: Vec<TestPod> = (0..3)
        .map(|i| TestPod {
            name: format!("p{i}"),
            cpu: 1000,
            gpu: Some((600, if i == 2 { 2 } else { 1 }, "")),
        })
        .collect();
    let text = scenario(&nodes, &pods, Policy::GpuPacking, "best");
    let without =
        text.split("  scheduler:").next().unwrap().to_string() + "  scheduler: {seed: 1}\n";
    let r = run(&dir, &without);
    assert!(
        r.pods
            .iter()
            .all(|p| p.node.as_deref() == Some("t4-0") && p.gpu_indices.is_empty())
    );
    assert!(r.warnings[0].starts_with("3 pod(s), such as default/p0, carry alibabacloud.com/gpu-milli but no scheduler profile runs Open-Gpu-Share"), "{:?}", r.warnings);
    assert!(
        r.warnings[1].starts_with("1 pod(s), such as default/p2, ask for a share of several GPUs"),
        "{:?}",
        r.warnings
    );
    // With it: 600 milli fits once on the one GPU; the others fail with the plugin's reason.
    let r = run(&dir, &text);
    assert_eq!(r.pods[0].gpu_indices, [0]);
    assert_eq!(r.pods[1].node, None);
    assert!(
        r.pods[1]
            .message
            .starts_with("0/1 nodes are available: 1 Node:t4-0."),
        "{}",
        r.pods[1].message
    );
    assert_eq!(r.warnings.len(), 1, "{:?}", r.warnings);
}
