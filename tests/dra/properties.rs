//! Properties of DynamicResources over random clusters: a device more never makes a node
//! infeasible; no device is ever allocated to two claims; GPUs as DRA devices place pods
//! exactly where the same GPUs as `nvidia.com/gpu` do when nothing else tells them apart.

use std::collections::HashSet;
use std::sync::Arc;

use k8s_openapi::api::core::v1::PodResourceClaim;
use k8s_openapi::api::resource::v1::{
    CELDeviceSelector, Device, DeviceAttribute, DeviceClass, DeviceClassSpec, DeviceRequest,
    DeviceSelector, ExactDeviceRequest, ResourceClaimSpec, ResourceClaimTemplate,
    ResourceClaimTemplateSpec, ResourcePool, ResourceSlice, ResourceSliceSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use proptest::prelude::*;
use schedsim::dra::Inventory;
use schedsim::model::resources::ResourceList;
use schedsim::model::{Node, Pod};
use schedsim::sched::{PodPhase, SchedulerConfig, feasible_nodes, schedule};

const MODELS: [&str; 2] = ["a", "b"];

pub(super) fn node(i: usize, gpus: i64) -> Node {
    let mut allocatable: ResourceList = [("cpu".to_string(), 64_000), ("pods".to_string(), 110)]
        .into_iter()
        .collect();
    if gpus > 0 {
        allocatable.insert("nvidia.com/gpu".into(), gpus);
    }
    Node {
        name: format!("node-{i}"),
        labels: [("kubernetes.io/hostname".to_string(), format!("node-{i}"))]
            .into_iter()
            .collect(),
        taints: Vec::new(),
        unschedulable: false,
        allocatable,
        pool: None,
    }
}

/// Node `i`'s slice: a device per entry of `models` (indices into [`MODELS`]).
fn slice(i: usize, models: &[usize]) -> ResourceSlice {
    ResourceSlice {
        metadata: ObjectMeta {
            name: Some(format!("node-{i}-slice")),
            ..Default::default()
        },
        spec: ResourceSliceSpec {
            driver: "gpu.example.com".into(),
            node_name: Some(format!("node-{i}")),
            pool: ResourcePool {
                name: format!("node-{i}"),
                generation: 1,
                resource_slice_count: 1,
            },
            devices: Some(
                (models.iter().enumerate())
                    .map(|(d, &m)| Device {
                        name: format!("gpu-{d}"),
                        attributes: Some(
                            [(
                                "model".to_string(),
                                DeviceAttribute {
                                    string: Some(MODELS[m].into()),
                                    ..Default::default()
                                },
                            )]
                            .into_iter()
                            .collect(),
                        ),
                        ..Default::default()
                    })
                    .collect(),
            ),
            ..Default::default()
        },
    }
}

fn class() -> DeviceClass {
    DeviceClass {
        metadata: ObjectMeta {
            name: Some("gpu".into()),
            ..Default::default()
        },
        spec: DeviceClassSpec {
            selectors: Some(vec![selector("device.driver == 'gpu.example.com'")]),
            ..Default::default()
        },
    }
}

fn selector(expression: &str) -> DeviceSelector {
    DeviceSelector {
        cel: Some(CELDeviceSelector {
            expression: expression.into(),
        }),
    }
}

/// A template for `count` devices, of one model or any.
fn template(count: i64, model: Option<usize>) -> ResourceClaimTemplate {
    ResourceClaimTemplate {
        metadata: ObjectMeta {
            name: Some(template_name(count, model)),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: ResourceClaimTemplateSpec {
            metadata: None,
            spec: ResourceClaimSpec {
                devices: Some(k8s_openapi::api::resource::v1::DeviceClaim {
                    requests: Some(vec![DeviceRequest {
                        name: "gpus".into(),
                        exactly: Some(ExactDeviceRequest {
                            device_class_name: "gpu".into(),
                            allocation_mode: Some("ExactCount".into()),
                            count: Some(count),
                            selectors: model.map(|m| {
                                vec![selector(&format!(
                                    "device.attributes['gpu.example.com'].model == '{}'",
                                    MODELS[m]
                                ))]
                            }),
                            ..Default::default()
                        }),
                        ..Default::default()
                    }]),
                    ..Default::default()
                }),
            },
        },
    }
}

fn template_name(count: i64, model: Option<usize>) -> String {
    match model {
        Some(m) => format!("gpus-{count}-{}", MODELS[m]),
        None => format!("gpus-{count}"),
    }
}

fn pod(i: usize, cpu: i64, priority: i32) -> Pod {
    let requests: ResourceList = [("cpu".to_string(), cpu)].into_iter().collect();
    Pod {
        name: format!("p-{i}"),
        namespace: "default".into(),
        uid: format!("uid-{i}"),
        priority,
        score_requests: requests.clone().into(),
        requests: requests.into(),
        ..Default::default()
    }
}

/// A pod claiming through the template for `count` devices of `model`.
fn claiming_pod(i: usize, count: i64, model: Option<usize>, cpu: i64, priority: i32) -> Pod {
    let mut p = pod(i, cpu, priority);
    p.resource_claims = vec![PodResourceClaim {
        name: "gpus".into(),
        resource_claim_template_name: Some(template_name(count, model)),
        ..Default::default()
    }];
    p
}

/// The inventory of the slices, the class and every template, with the pods' claims made by
/// the resourceclaim controller.
fn inventory(slices: Vec<ResourceSlice>, pods: &mut [Pod]) -> Inventory {
    let mut inv = Inventory::default();
    inv.classes.insert("gpu".into(), class());
    inv.slices = slices;
    for count in 1..=4 {
        for model in [None, Some(0), Some(1)] {
            inv.insert_template(template(count, model));
        }
    }
    for p in pods.iter_mut() {
        schedsim::dra::controller::sync_pod(&mut inv, p, 1);
    }
    inv
}

fn config(inv: Inventory) -> SchedulerConfig {
    SchedulerConfig {
        seed: 5,
        dra: Arc::new(inv),
        ..Default::default()
    }
}

/// Per node, the models of its devices.
fn cluster() -> impl Strategy<Value = Vec<Vec<usize>>> {
    prop::collection::vec(prop::collection::vec(0..MODELS.len(), 0..5), 1..5)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// The allocator is exhaustive and an ExactCount request is satisfied by any enough
    /// matching devices: one more device (with a fresh name) never makes a feasible node
    /// infeasible for a pod.
    #[test]
    fn adding_a_device_never_shrinks_the_feasible_nodes(
        devices in cluster(),
        count in 1..4i64,
        model in prop::option::of(0..MODELS.len()),
        at in any::<prop::sample::Index>(),
        added in 0..MODELS.len(),
    ) {
        let nodes: Vec<Node> = (0..devices.len()).map(|i| node(i, 0)).collect();
        let feasible = |devices: &[Vec<usize>]| {
            let mut pods = vec![claiming_pod(0, count, model, 100, 0)];
            let slices = devices.iter().enumerate().map(|(i, d)| slice(i, d)).collect();
            let inv = inventory(slices, &mut pods);
            let found: HashSet<String> =
                feasible_nodes(nodes.clone(), &[], &pods[0], &config(inv)).into_iter().collect();
            found
        };
        let before = feasible(&devices);
        let mut more = devices.clone();
        more[at.index(devices.len())].push(added);
        let after = feasible(&more);
        prop_assert!(before.is_subset(&after), "{before:?} not within {after:?}");
    }

    /// Over a whole run, with preemption freeing devices, no device is ever held by two
    /// allocated claims, and every scheduled claiming pod holds its claim's devices.
    #[test]
    fn no_device_is_allocated_twice(
        devices in cluster(),
        specs in prop::collection::vec(
            (1..4i64, prop::option::of(0..MODELS.len()), 0..40_000i64, 0..3i32),
            1..12,
        ),
    ) {
        let nodes: Vec<Node> = (0..devices.len()).map(|i| node(i, 0)).collect();
        let mut pods: Vec<Pod> = (specs.iter().enumerate())
            .map(|(i, &(count, model, cpu, priority))| claiming_pod(i, count, model, cpu, priority))
            .collect();
        let slices = devices.iter().enumerate().map(|(i, d)| slice(i, d)).collect();
        let inv = inventory(slices, &mut pods);
        let outcome = schedule(nodes, &[], &pods, &config(inv));
        // Every pod got its claim from the controller (preempted pods' claims are deleted).
        let preempted = outcome.pods.iter().filter(|o| o.phase == PodPhase::Preempted).count();
        prop_assert_eq!(outcome.dra_claims.len() + preempted, pods.len());
        let mut seen = HashSet::new();
        for claim in &outcome.dra_claims {
            let results = (claim.status.iter())
                .filter_map(|s| s.allocation.as_ref()?.devices.as_ref())
                .flat_map(|d| d.results.iter().flatten());
            for r in results {
                let id = (r.driver.clone(), r.pool.clone(), r.device.clone());
                prop_assert!(seen.insert(id.clone()), "{id:?} allocated twice");
            }
        }
        for (p, o) in pods.iter().zip(&outcome.pods) {
            if o.phase != PodPhase::Scheduled {
                continue;
            }
            let reserved = outcome.dra_claims.iter().any(|c| {
                let status = c.status.as_ref();
                status.is_some_and(|s| s.allocation.is_some())
                    && (status.and_then(|s| s.reserved_for.as_ref()))
                        .is_some_and(|r| r.iter().any(|r| r.uid == p.uid))
            });
            prop_assert!(reserved, "{} scheduled without its claim", p.name);
        }
    }

    /// GPUs published as DRA devices (one class, claims that only count) and as
    /// `nvidia.com/gpu`: nothing but the GPUs tells nodes apart, so every pod lands on the
    /// same node, or stays pending, in both.
    #[test]
    fn dra_and_extended_resources_place_alike(
        gpus in prop::collection::vec(0..9usize, 1..6),
        wants in prop::collection::vec((1..4i64, 0..4_000i64), 1..14),
    ) {
        let plain_nodes: Vec<Node> = (gpus.iter().enumerate()).map(|(i, &g)| node(i, g as i64)).collect();
        let plain_pods: Vec<Pod> = (wants.iter().enumerate())
            .map(|(i, &(count, cpu))| {
                let mut p = pod(i, cpu, 0);
                p.requests.insert("nvidia.com/gpu".into(), count);
                p
            })
            .collect();
        let plain = schedule(plain_nodes, &[], &plain_pods, &config(Inventory::default()));

        let dra_nodes: Vec<Node> = (0..gpus.len()).map(|i| node(i, 0)).collect();
        let mut dra_pods: Vec<Pod> = (wants.iter().enumerate())
            .map(|(i, &(count, cpu))| claiming_pod(i, count, None, cpu, 0))
            .collect();
        let slices = (gpus.iter().enumerate()).map(|(i, &g)| slice(i, &vec![0; g])).collect();
        let inv = inventory(slices, &mut dra_pods);
        let dra = schedule(dra_nodes, &[], &dra_pods, &config(inv));

        let placed = |o: &schedsim::sched::Outcome| -> Vec<Option<usize>> {
            o.pods.iter().map(|p| p.node).collect()
        };
        prop_assert_eq!(placed(&plain), placed(&dra));
    }
}
