//! Device taints over whole runs (DRADeviceTaints): the scheduler's fast paths (Filter
//! verdicts cached per claim shape and node, the count shortcut at Filter and Reserve) must
//! answer as the allocator does when some devices are tainted and one template tolerates the
//! taint while another does not.

use std::collections::HashSet;
use std::sync::Arc;

use k8s_openapi::api::core::v1::NodeSelector;
use k8s_openapi::api::resource::v1::{DeviceToleration, ResourceClaim, ResourceSlice};
use proptest::prelude::*;
use schedsim::dra::Inventory;
use schedsim::dra::allocator::{Allocator, Features, NodeView, Selectors};
use schedsim::features::FeatureGates;
use schedsim::model::{Node, Pod};
use schedsim::sched::plugins::node_affinity::terms_match;
use schedsim::sched::{Outcome, PodPhase, SchedulerConfig, schedule};
use serde_json::json;

use super::partitionable::{DRIVER, claim_of, from, gpu_inventory, pod_claiming};

const KEY: &str = "example.com/maintenance";

/// Node `n`'s slice: a GPU per entry of `effects`, tainted with that effect when there is one.
fn slice(n: usize, effects: &[Option<&str>]) -> ResourceSlice {
    let devices: Vec<_> = (effects.iter().enumerate())
        .map(|(i, effect)| match effect {
            Some(e) => json!({"name": format!("gpu-{i}"), "taints": [{"key": KEY, "effect": e}]}),
            None => json!({"name": format!("gpu-{i}")}),
        })
        .collect();
    from(json!({
        "metadata": {"name": format!("node-{n}")},
        "spec": {
            "driver": DRIVER, "nodeName": format!("node-{n}"),
            "pool": {"name": format!("node-{n}"), "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }))
}

/// What a template tolerates: nothing, `NoSchedule` taints of the key, or every taint.
const TOLERATIONS: [&str; 3] = ["none", "no-schedule", "all"];

fn tolerations(which: usize) -> serde_json::Value {
    match which {
        0 => json!([]),
        1 => json!([{"key": KEY, "operator": "Exists", "effect": "NoSchedule"}]),
        _ => json!([{"operator": "Exists"}]),
    }
}

fn template_name(count: i64, which: usize) -> String {
    format!("gpus-{count}-{}", TOLERATIONS[which])
}

fn inventory(slices: Vec<ResourceSlice>, pods: &mut [Pod]) -> Inventory {
    let mut templates = Vec::new();
    for count in 1..=2 {
        for which in 0..TOLERATIONS.len() {
            templates.push(json!({
                "metadata": {"name": template_name(count, which), "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
                    "deviceClassName": "gpu", "allocationMode": "ExactCount",
                    "count": count, "tolerations": tolerations(which),
                }}]}}},
            }));
        }
    }
    gpu_inventory(slices, templates, pods)
}

/// The devices of a claim's allocation, with the tolerations each result carries.
fn devices_of(claim: &ResourceClaim) -> Vec<(String, Option<Vec<DeviceToleration>>)> {
    (claim.status.as_ref())
        .and_then(|s| s.allocation.as_ref()?.devices.as_ref())
        .into_iter()
        .flat_map(|d| d.results.iter().flatten())
        .map(|r| (format!("{}/{}", r.pool, r.device), r.tolerations.clone()))
        .collect()
}

fn run(
    effects: &[Vec<Option<&str>>],
    wants: &[(i64, usize)],
    taints: bool,
) -> (Vec<Pod>, Outcome, Arc<Inventory>) {
    let cluster: Vec<Node> = (0..effects.len())
        .map(|i| super::properties::node(i, 0))
        .collect();
    let mut pods: Vec<Pod> = (wants.iter().enumerate())
        .map(|(i, &(count, which))| pod_claiming(i, template_name(count, which)))
        .collect();
    let slices = (effects.iter().enumerate())
        .map(|(n, e)| slice(n, e))
        .collect();
    let inv = Arc::new(inventory(slices, &mut pods));
    let config = SchedulerConfig {
        seed: 5,
        dra: Arc::clone(&inv),
        feature_gates: FeatureGates {
            dra_device_taints: taints,
            ..Default::default()
        },
        ..Default::default()
    };
    let outcome = schedule(cluster, &[], &pods, &config);
    (pods, outcome, inv)
}

/// One node, GPUs 0 and 1 tainted `NoSchedule` for maintenance, 2 and 3 not. Pods of a
/// template without tolerations take 2 and 3, and a third such pod stays pending though two
/// GPUs are free (the count shortcut must not count them); pods whose template tolerates the
/// taint then take 0 and 1, each result carrying the toleration. With the gate off the taints
/// are ignored: four of the five pods get GPUs in order.
#[test]
fn tainted_gpus_go_only_to_pods_that_tolerate_them() {
    let effects = vec![vec![Some("NoSchedule"), Some("NoSchedule"), None, None]];
    let wants = [(1, 0), (1, 0), (1, 0), (1, 1), (1, 1)];
    let (pods, outcome, _) = run(&effects, &wants, true);
    let got: Vec<_> = (pods.iter())
        .map(|p| devices_of(claim_of(&outcome, p)))
        .collect();
    let tolerated = Some(vec![from::<DeviceToleration>(
        json!({"key": KEY, "operator": "Exists", "effect": "NoSchedule"}),
    )]);
    assert_eq!(
        got,
        [
            vec![("node-0/gpu-2".to_string(), None)],
            vec![("node-0/gpu-3".to_string(), None)],
            vec![],
            vec![("node-0/gpu-0".to_string(), tolerated.clone())],
            vec![("node-0/gpu-1".to_string(), tolerated)],
        ]
    );
    assert_eq!(outcome.pods[2].phase, PodPhase::Unschedulable);
    let (pods, outcome, _) = run(&effects, &wants, false);
    let got: Vec<_> = (pods.iter())
        .map(|p| {
            devices_of(claim_of(&outcome, p))
                .into_iter()
                .map(|d| d.0)
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(
        got,
        [
            vec!["node-0/gpu-0"],
            vec!["node-0/gpu-1"],
            vec!["node-0/gpu-2"],
            vec!["node-0/gpu-3"],
            vec![],
        ]
    );
}

fn effect() -> impl Strategy<Value = Option<&'static str>> {
    prop_oneof![
        Just(None),
        Just(Some("NoSchedule")),
        Just(Some("NoExecute")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Pods of templates with and without tolerations claim GPUs, some tainted, on a few
    /// nodes (devices are never freed, so a pod that fits at the end fitted when it was
    /// tried). No bound pod holds a device whose taints its template does not tolerate, and
    /// every pending pod is one the allocator, run afresh on the final state, fits on no
    /// node: the cached and counted verdicts were the allocator's.
    #[test]
    fn fast_verdicts_with_taints_are_the_allocators(
        effects in prop::collection::vec(prop::collection::vec(effect(), 1..5), 1..4),
        wants in prop::collection::vec((1..3i64, 0..TOLERATIONS.len()), 1..10),
    ) {
        let (pods, outcome, inv) = run(&effects, &wants, true);
        let taken: HashSet<(String, String, String)> = (outcome.dra_claims.iter())
            .filter_map(|c| c.status.as_ref()?.allocation.as_ref()?.devices.as_ref())
            .flat_map(|d| d.results.iter().flatten())
            .map(|r| (r.driver.clone(), r.pool.clone(), r.device.clone()))
            .collect();
        let selectors = Selectors::default();
        let allocator = Allocator {
            features: Features { device_taints: true, ..Default::default() },
            allocated: &taken,
            consumed: &Default::default(),
            classes: &inv.classes,
            slices: &inv.slices,
            selectors: &selectors,
        };
        for ((pod, o), &(_, which)) in pods.iter().zip(&outcome.pods).zip(&wants) {
            let claim = claim_of(&outcome, pod);
            let held = devices_of(claim);
            match o.phase {
                PodPhase::Scheduled => {
                    prop_assert!(!held.is_empty(), "{} bound without devices", pod.name);
                    for (device, _) in &held {
                        let (node, gpu) = device.split_once('/').expect("pool/device");
                        let n: usize = node["node-".len()..].parse().expect("node index");
                        let i: usize = gpu["gpu-".len()..].parse().expect("gpu index");
                        let ok = match effects[n][i] {
                            None => true,
                            Some("NoSchedule") => which >= 1,
                            Some(_) => which == 2,
                        };
                        prop_assert!(ok, "{} holds {device} tolerating {}", pod.name, TOLERATIONS[which]);
                    }
                }
                _ => {
                    prop_assert!(held.is_empty());
                    for n in 0..effects.len() {
                        let node = super::properties::node(n, 0);
                        let selects = |s: &NodeSelector| terms_match(&s.node_selector_terms, &node);
                        let view = NodeView { name: &node.name, selects: &selects };
                        let fits = allocator.allocate(&view, &[claim]);
                        prop_assert!(
                            matches!(fits, Ok(None)),
                            "{} pending, but the allocator gives {fits:?} on {}", pod.name, node.name
                        );
                    }
                }
            }
        }
    }
}
