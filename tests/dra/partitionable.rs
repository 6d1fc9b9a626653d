//! Partitionable devices over whole runs (DRAPartitionableDevices): the scheduler's fast paths
//! (Filter verdicts cached per node version, the count shortcut at Filter and Reserve) must
//! answer as the allocator does when taking one device uses up a counter set that devices on
//! the same node, or on other nodes, consume too.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{NodeSelector, PodResourceClaim};
use k8s_openapi::api::resource::v1::{
    DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice,
};
use proptest::prelude::*;
use schedsim::dra::Inventory;
use schedsim::dra::allocator::{Allocator, Features, NodeView, Selectors};
use schedsim::features::FeatureGates;
use schedsim::model::resources::ResourceList;
use schedsim::model::{Node, Pod};
use schedsim::sched::plugins::node_affinity::terms_match;
use schedsim::sched::{Outcome, PodPhase, SchedulerConfig, schedule};
use serde_json::json;

pub(super) const DRIVER: &str = "gpu.example.com";
/// What a claim's selector asks of a device's `size` (the counter it consumes).
const SIZES: [Option<&str>; 3] = [None, Some(">= 8"), Some("< 8")];

/// A node with room for every pod and no extended resources.
fn node(i: usize) -> Node {
    super::properties::node(i, 0)
}

pub(super) fn from<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).expect("a valid object")
}

/// One pool whose counter set `memory` (`capacity`) all its devices share: device `i` sits on
/// node `devices[i].0` and consumes `devices[i].1`. Published as one slice per node, or as
/// one slice choosing nodes per device; the counter set in a slice of its own.
fn slices(
    nodes: usize,
    capacity: i64,
    devices: &[(usize, i64)],
    per_device: bool,
) -> Vec<ResourceSlice> {
    let device = |i: usize, size: i64, node: Option<usize>| {
        let mut d = json!({
            "name": format!("gpu-{i}"),
            "attributes": {"size": {"int": size}},
            "consumesCounters": [{"counterSet": "memory", "counters": {"memory": {"value": size.to_string()}}}],
        });
        if let Some(n) = node {
            d["nodeName"] = json!(format!("node-{n}"));
        }
        d
    };
    let count = if per_device { 2 } else { nodes + 1 };
    let pool = json!({"name": "shared", "generation": 1, "resourceSliceCount": count});
    let mut out = vec![from::<ResourceSlice>(json!({
        "metadata": {"name": "counters"},
        "spec": {
            "driver": DRIVER, "pool": pool, "nodeName": "node-0",
            "sharedCounters": [{"name": "memory", "counters": {"memory": {"value": capacity.to_string()}}}],
        },
    }))];
    let placed = |n: usize| {
        devices
            .iter()
            .enumerate()
            .filter(move |(_, d)| d.0 % nodes == n)
    };
    if per_device {
        let all: Vec<_> = (devices.iter().enumerate())
            .map(|(i, &(n, size))| device(i, size, Some(n % nodes)))
            .collect();
        out.push(from(json!({
            "metadata": {"name": "devices"},
            "spec": {"driver": DRIVER, "pool": pool, "perDeviceNodeSelection": true, "devices": all},
        })));
    } else {
        for n in 0..nodes {
            let own: Vec<_> = placed(n)
                .map(|(i, &(_, size))| device(i, size, None))
                .collect();
            out.push(from(json!({
                "metadata": {"name": format!("node-{n}")},
                "spec": {"driver": DRIVER, "pool": pool, "nodeName": format!("node-{n}"), "devices": own},
            })));
        }
    }
    out
}

fn template_name(count: i64, size: usize) -> String {
    format!("gpus-{count}-{size}")
}

fn inventory(slices: Vec<ResourceSlice>, pods: &mut [Pod]) -> Inventory {
    let mut templates = Vec::new();
    for count in 1..=2 {
        for (s, size) in SIZES.iter().enumerate() {
            let selectors: Vec<_> = (size.iter())
                .map(|c| json!({"cel": {"expression": format!("device.attributes['{DRIVER}'].size {c}")}}))
                .collect();
            templates.push(json!({
                "metadata": {"name": template_name(count, s), "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
                    "deviceClassName": "gpu", "allocationMode": "ExactCount",
                    "count": count, "selectors": selectors,
                }}]}}},
            }));
        }
    }
    gpu_inventory(slices, templates, pods)
}

/// Class `gpu` (every device of [`DRIVER`]), the slices and templates, and the claims the
/// controller makes for the pods.
pub(super) fn gpu_inventory(
    slices: Vec<ResourceSlice>,
    templates: Vec<serde_json::Value>,
    pods: &mut [Pod],
) -> Inventory {
    let mut inv = Inventory::default();
    let class: DeviceClass = from(json!({
        "metadata": {"name": "gpu"},
        "spec": {"selectors": [{"cel": {"expression": format!("device.driver == '{DRIVER}'")}}]},
    }));
    inv.classes.insert("gpu".into(), class);
    inv.slices = slices;
    for t in templates {
        inv.insert_template(from::<ResourceClaimTemplate>(t));
    }
    for p in pods.iter_mut() {
        schedsim::dra::controller::sync_pod(&mut inv, p, 1);
    }
    inv
}

fn claiming_pod(i: usize, count: i64, size: usize) -> Pod {
    pod_claiming(i, template_name(count, size))
}

/// Pod `p-{i}`, whose claim `gpus` comes from `template`.
pub(super) fn pod_claiming(i: usize, template: String) -> Pod {
    let requests: ResourceList = [("cpu".to_string(), 100)].into_iter().collect();
    Pod {
        name: format!("p-{i}"),
        namespace: "default".into(),
        uid: format!("uid-{i}"),
        score_requests: requests.clone().into(),
        requests: requests.into(),
        resource_claims: vec![PodResourceClaim {
            name: "gpus".into(),
            resource_claim_template_name: Some(template),
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// The claim the controller made for `pod`, as the run left it.
pub(super) fn claim_of<'o>(outcome: &'o Outcome, pod: &Pod) -> &'o ResourceClaim {
    (outcome.dra_claims.iter())
        .find(|c| (c.metadata.owner_references.iter().flatten()).any(|o| o.uid == pod.uid))
        .expect("the controller made the pod's claim")
}

/// The devices allocated at the end of a run.
fn allocated(outcome: &Outcome) -> HashSet<(String, String, String)> {
    (outcome.dra_claims.iter())
        .filter_map(|c| c.status.as_ref()?.allocation.as_ref()?.devices.as_ref())
        .flat_map(|d| d.results.iter().flatten())
        .map(|r| (r.driver.clone(), r.pool.clone(), r.device.clone()))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Pods claim devices of a pool whose counter set is shared across nodes, one after the
    /// other (devices are never freed, so a pod that fits at the end fitted when it was
    /// tried). Every bound pod holds an allocation, allocations never consume more than the
    /// counter set holds, and every pending pod is one the allocator, run afresh on the final
    /// state, fits on no node: the cached and counted verdicts were the allocator's.
    #[test]
    fn fast_verdicts_with_counters_are_the_allocators(
        nodes in 1..4usize,
        capacity in 4..12i64,
        devices in prop::collection::vec((0..4usize, 1..9i64), 1..7),
        per_device in any::<bool>(),
        wants in prop::collection::vec((1..3i64, 0..SIZES.len()), 1..10),
    ) {
        let cluster: Vec<Node> = (0..nodes).map(node).collect();
        let mut pods: Vec<Pod> = (wants.iter().enumerate())
            .map(|(i, &(count, size))| claiming_pod(i, count, size))
            .collect();
        let inv = Arc::new(inventory(slices(nodes, capacity, &devices, per_device), &mut pods));
        let config = SchedulerConfig {
            seed: 5,
            dra: Arc::clone(&inv),
            feature_gates: FeatureGates { dra_partitionable_devices: true, ..Default::default() },
            ..Default::default()
        };
        let outcome = schedule(cluster.clone(), &[], &pods, &config);
        let taken = allocated(&outcome);
        let used: i64 = (devices.iter().enumerate())
            .filter(|(i, _)| taken.contains(&(DRIVER.into(), "shared".into(), format!("gpu-{i}"))))
            .map(|(_, d)| d.1)
            .sum();
        prop_assert!(used <= capacity, "{used} of {capacity} consumed");
        let selectors = Selectors::default();
        let allocator = Allocator {
            features: Features { partitionable_devices: true, ..Default::default() },
            allocated: &taken,
            consumed: &Default::default(),
            classes: &inv.classes,
            slices: &inv.slices,
            selectors: &selectors,
        };
        for (pod, o) in pods.iter().zip(&outcome.pods) {
            let claim = claim_of(&outcome, pod);
            let allocation = claim.status.as_ref().and_then(|s| s.allocation.as_ref());
            match o.phase {
                PodPhase::Scheduled => prop_assert!(allocation.is_some(), "{} bound without devices", pod.name),
                _ => {
                    prop_assert!(allocation.is_none());
                    for n in &cluster {
                        let selects = |s: &NodeSelector| terms_match(&s.node_selector_terms, n);
                        let view = NodeView { name: &n.name, selects: &selects };
                        let fits = allocator.allocate(&view, &[claim]);
                        prop_assert!(
                            matches!(fits, Ok(None)),
                            "{} pending, but the allocator gives {fits:?} on {}", pod.name, n.name
                        );
                    }
                }
            }
        }
    }
}

/// The case the property is about, spelled out: 8 units of memory shared by a whole GPU and
/// two halves on node-0 and a half on node-1, all in one pool. A pod takes a half; the whole
/// GPU no longer fits though it is free; a second half fits, and then no half fits on either
/// node though two are free.
#[test]
fn taking_a_partition_makes_the_whole_device_unavailable() {
    let devices = [(0, 8), (0, 4), (0, 4), (1, 4)];
    let wants: [(i64, usize); 4] = [(1, 2), (1, 1), (1, 2), (1, 2)];
    for per_device in [false, true] {
        let cluster: Vec<Node> = (0..2).map(node).collect();
        let mut pods: Vec<Pod> = (wants.iter().enumerate())
            .map(|(i, &(count, size))| claiming_pod(i, count, size))
            .collect();
        let inv = inventory(slices(2, 8, &devices, per_device), &mut pods);
        let config = SchedulerConfig {
            seed: 5,
            dra: Arc::new(inv),
            feature_gates: FeatureGates {
                dra_partitionable_devices: true,
                ..Default::default()
            },
            ..Default::default()
        };
        let outcome = schedule(cluster, &[], &pods, &config);
        let placed: Vec<Option<usize>> = outcome.pods.iter().map(|p| p.node).collect();
        // p-0 takes a half (4 of 8); p-1 wants the whole GPU: pending; p-2 takes another half
        // (8 of 8); p-3 finds the counter set used up on both nodes.
        assert_eq!(placed.len(), 4);
        assert_eq!(placed[1], None, "per device {per_device}: {placed:?}");
        assert_eq!(placed[3], None, "per device {per_device}: {placed:?}");
        assert!(placed[0].is_some() && placed[2].is_some(), "{placed:?}");
        let by_pod: BTreeMap<String, bool> = (pods.iter())
            .map(|p| {
                let c = claim_of(&outcome, p);
                let a = c.status.as_ref().and_then(|s| s.allocation.as_ref());
                (p.name.clone(), a.is_some())
            })
            .collect();
        assert_eq!(by_pod.values().filter(|&&a| a).count(), 2, "{by_pod:?}");
    }
}

/// With the gate off (the 1.34 default) the counter-set slice is not read and a device that
/// consumes counters is never allocated, as upstream's allocator does with the feature off:
/// the count shortcut, which would see free matching devices, must not place the pods.
#[test]
fn without_the_gate_devices_consuming_counters_stay_free() {
    let mut pods: Vec<Pod> = (0..3).map(|i| claiming_pod(i, 1, 0)).collect();
    let inv = inventory(slices(2, 8, &[(0, 4), (1, 4)], false), &mut pods);
    let config = SchedulerConfig {
        seed: 5,
        dra: Arc::new(inv),
        ..Default::default()
    };
    let outcome = schedule((0..2).map(node).collect(), &[], &pods, &config);
    assert!(outcome.pods.iter().all(|p| p.node.is_none()));
    assert!(allocated(&outcome).is_empty());
}

/// A pool whose slice of counter sets names node-0 is part of every node's view (its counter
/// sets always join it), so when its devices consume an unknown counter set it is invalid on
/// node-1 too, which has no device of it: a claim for all devices fails there, as the
/// allocator run directly says, though node-1's own device would do. (node-0 is cordoned, so
/// node-1 alone decides.)
#[test]
fn an_invalid_pool_of_counter_sets_reaches_every_node() {
    let mut slices = slices(1, 8, &[(0, 4)], false);
    let consumption = (slices[1].spec.devices.as_mut().unwrap()[0]
        .consumes_counters
        .as_mut())
    .unwrap();
    consumption[0].counter_set = "unknown".into();
    slices.push(from(json!({
        "metadata": {"name": "node-1-plain"},
        "spec": {"driver": DRIVER, "pool": {"name": "node-1", "generation": 1, "resourceSliceCount": 1},
                 "nodeName": "node-1", "devices": [{"name": "gpu-x", "attributes": {"size": {"int": 1}}}]},
    })));
    let mut inv = inventory(slices, &mut []);
    inv.insert_template(from(json!({
        "metadata": {"name": "all", "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
            "deviceClassName": "gpu", "allocationMode": "All"}}]}}},
    })));
    let mut pod = claiming_pod(0, 1, 0);
    pod.resource_claims[0].resource_claim_template_name = Some("all".into());
    schedsim::dra::controller::sync_pod(&mut inv, &mut pod, 1);
    let inv = Arc::new(inv);
    let mut cluster: Vec<Node> = (0..2).map(node).collect();
    cluster[0].unschedulable = true;
    let config = SchedulerConfig {
        seed: 5,
        dra: Arc::clone(&inv),
        feature_gates: FeatureGates {
            dra_partitionable_devices: true,
            ..Default::default()
        },
        ..Default::default()
    };
    let outcome = schedule(cluster.clone(), &[], std::slice::from_ref(&pod), &config);
    let claim = claim_of(&outcome, &pod);
    let selectors = Selectors::default();
    let none = HashSet::new();
    let allocator = Allocator {
        features: Features {
            partitionable_devices: true,
            ..Default::default()
        },
        allocated: &none,
        consumed: &Default::default(),
        classes: &inv.classes,
        slices: &inv.slices,
        selectors: &selectors,
    };
    let selects = |s: &NodeSelector| terms_match(&s.node_selector_terms, &cluster[1]);
    let view = NodeView {
        name: &cluster[1].name,
        selects: &selects,
    };
    let expected =
        "asks for all devices, but resource pool gpu.example.com/shared is currently invalid";
    let got = allocator.allocate(&view, &[claim]);
    assert!(
        got.as_ref().is_err_and(|e| e.message().ends_with(expected)),
        "{got:?}"
    );
    assert_eq!(outcome.pods[0].node, None);
    let message = &outcome.pods[0].message;
    assert!(message.contains(expected), "{message}");
}
