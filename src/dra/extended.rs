//! Extended resources backed by DRA (KEP-5004, the `DRAExtendedResource` gate): a pod that
//! asks `nvidia.com/gpu: 1` may get a device of the DeviceClass that names that resource,
//! through a ResourceClaim the scheduler writes for it. The pieces that are pure functions of
//! the objects, as kube-scheduler 1.34 has them (the gate is alpha and off by default in 1.34
//! and 1.35, beta and on from 1.36):
//!
//! - which DeviceClass backs which extended resource (`DeviceClassMapping`,
//!   `pkg/scheduler/framework/plugins/dynamicresources/extended/util.go`);
//! - the requests of the pod's special claim (`createDeviceRequests`), the in-memory claim
//!   PreFilter starts from (`preFilterExtendedResources`), the claim of an earlier cycle it
//!   looks for (`findExtendedResourceClaim`) and the `pod.status.extendedResourceClaimStatus`
//!   PreBind writes (`createRequestMappings`), all in
//!   `pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go`.
//!
//! Where 1.34 differs from later releases, schedsim follows 1.34 (its code wins over the KEP):
//! - A class maps one name: its `extendedResourceName`, or else its implicit name
//!   `deviceclass.resource.kubernetes.io/<class>` (later releases map both).
//! - Only names `v1helper.IsExtendedResourceName` accepts are allocated through DRA: the
//!   implicit names, under `kubernetes.io/`, never are (`IsDRAExtendedResourceName` came later).
//! - The claim asks, per container, for every extended resource of the pod that a class
//!   backs, also those the node's device plugin provides when the claim is needed for another
//!   resource or for the pod's own claims, and an init container's request adds to the other
//!   containers' (later releases leave device-plugin resources out and reuse init requests).
//! - Upstream orders the requests by Go map iteration (random); schedsim sorts them by name,
//!   as later releases do.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ContainerExtendedResourceRequest;
use k8s_openapi::api::resource::v1::{
    DeviceClaim, DeviceClass, DeviceRequest, ExactDeviceRequest, ResourceClaim, ResourceClaimSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::model::Pod;

/// `resourceapi.ResourceDeviceClassPrefix`: a class without `extendedResourceName` backs
/// this prefix followed by its name.
pub const RESOURCE_DEVICE_CLASS_PREFIX: &str = "deviceclass.resource.kubernetes.io/";
/// `resourceapi.ExtendedResourceClaimAnnotation`, set to "true" on the special claim.
pub const EXTENDED_RESOURCE_CLAIM_ANNOTATION: &str =
    "resource.kubernetes.io/extended-resource-claim";
/// `specialClaimInMemName`: the claim's name until PreBind creates it (not a valid name, so
/// it cannot clash with a real claim).
pub const SPECIAL_CLAIM_IN_MEM_NAME: &str = "<extended-resources>";

/// Extended resource name → the name of the DeviceClass that backs it (`DeviceClassMapping`).
/// Several classes naming one resource: the newest (`creationTimestamp`) wins, then the first
/// by name.
pub fn device_class_mapping(classes: &BTreeMap<String, DeviceClass>) -> BTreeMap<String, String> {
    let mut by_resource: BTreeMap<String, Vec<&DeviceClass>> = BTreeMap::new();
    for (name, class) in classes {
        let resource = match &class.spec.extended_resource_name {
            Some(r) => r.clone(),
            None => format!("{RESOURCE_DEVICE_CLASS_PREFIX}{name}"),
        };
        by_resource.entry(resource).or_default().push(class);
    }
    (by_resource.into_iter())
        .map(|(resource, mut classes)| {
            classes.sort_by(|a, b| {
                (unix_nano(b).cmp(&unix_nano(a)))
                    .then_with(|| a.metadata.name.cmp(&b.metadata.name))
            });
            let class = classes[0].metadata.name.clone().unwrap_or_default();
            (resource, class)
        })
        .collect()
}

/// `CreationTimestamp.UnixNano()` as Go computes it: seconds × 10⁹ + nanoseconds in wrapping
/// 64-bit arithmetic, from the zero time (year 1) when the class has none.
fn unix_nano(class: &DeviceClass) -> i64 {
    const ZERO_TIME_UNIX_SECONDS: i64 = -62_135_596_800;
    let (seconds, nanos) = match &class.metadata.creation_timestamp {
        Some(t) => (t.0.as_second(), i64::from(t.0.subsec_nanosecond())),
        None => (ZERO_TIME_UNIX_SECONDS, 0),
    };
    seconds.wrapping_mul(1_000_000_000).wrapping_add(nanos)
}

/// The name of a request of the special claim: `container-<i>-request-<j>`, `i` the
/// container's index in the init containers then the containers, `j` the resource's index
/// among the container's sorted request names.
fn request_name(container: usize, index: usize) -> String {
    format!("container-{container}-request-{index}")
}

/// `createDeviceRequests`: one ExactCount request per container and extended resource of the
/// pod that a class backs, for the container's quantity, sorted by name.
pub fn device_requests(pod: &Pod, mapping: &BTreeMap<String, String>) -> Vec<DeviceRequest> {
    let mut requests: Vec<DeviceRequest> = (pod.extended_requests.iter())
        .filter_map(|r| {
            let class = mapping.get(&r.resource).filter(|c| !c.is_empty())?;
            Some(DeviceRequest {
                name: request_name(r.container, r.index),
                exactly: Some(ExactDeviceRequest {
                    device_class_name: class.clone(),
                    allocation_mode: Some("ExactCount".into()),
                    count: Some(r.quantity),
                    ..Default::default()
                }),
                first_available: None,
            })
        })
        .collect();
    requests.sort_by(|a, b| a.name.cmp(&b.name));
    requests
}

/// The claim PreFilter starts from when no earlier cycle left one: in the pod's namespace,
/// owned by the pod, annotated, with no requests yet (`preFilterExtendedResources`); PreBind
/// gives it a name from `generateName`.
pub fn in_memory_claim(pod: &Pod) -> ResourceClaim {
    ResourceClaim {
        metadata: ObjectMeta {
            namespace: Some(pod.namespace.clone()),
            name: Some(SPECIAL_CLAIM_IN_MEM_NAME.into()),
            generate_name: Some(format!("{}-extended-resources-", pod.name)),
            owner_references: Some(vec![super::controller::pod_controller_ref(pod)]),
            annotations: Some(BTreeMap::from([(
                EXTENDED_RESOURCE_CLAIM_ANNOTATION.to_string(),
                "true".to_string(),
            )])),
            ..Default::default()
        },
        spec: ResourceClaimSpec::default(),
        status: None,
    }
}

/// The claim with `requests` as its device requests.
pub fn with_requests(claim: &ResourceClaim, requests: Vec<DeviceRequest>) -> ResourceClaim {
    let mut claim = claim.clone();
    claim.spec.devices = Some(DeviceClaim {
        requests: Some(requests),
        ..Default::default()
    });
    claim
}

/// `findExtendedResourceClaim`'s test: the claim is annotated as an extended-resource claim
/// and an owner reference names the pod (name and UID) as its controller.
pub fn is_claim_of(claim: &ResourceClaim, pod: &Pod) -> bool {
    let annotated = (claim.metadata.annotations.as_ref())
        .and_then(|a| a.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION))
        .is_some_and(|v| v == "true");
    annotated
        && (claim.metadata.owner_references.iter().flatten())
            .any(|o| o.name == pod.name && o.controller == Some(true) && o.uid == pod.uid)
}

/// Whether the claim has device requests (`Spec.Devices.Requests != nil`): one an earlier
/// cycle created has them, and Filter refuses to reuse it.
pub fn has_requests(claim: &ResourceClaim) -> bool {
    (claim.spec.devices.as_ref())
        .and_then(|d| d.requests.as_ref())
        .is_some_and(|r| !r.is_empty())
}

/// `createRequestMappings`: for each request of the claim, the container and the resource it
/// stands for, in container order then by resource name.
pub fn request_mappings(claim: &ResourceClaim, pod: &Pod) -> Vec<ContainerExtendedResourceRequest> {
    let names: Vec<&str> = (claim.spec.devices.iter())
        .flat_map(|d| d.requests.iter().flatten())
        .map(|r| r.name.as_str())
        .collect();
    (pod.extended_requests.iter())
        .filter(|r| names.contains(&request_name(r.container, r.index).as_str()))
        .map(|r| ContainerExtendedResourceRequest {
            container_name: r.container_name.clone(),
            resource_name: r.resource.clone(),
            request_name: request_name(r.container, r.index),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::pod::ContainerExtendedRequest;
    use k8s_openapi::api::resource::v1::DeviceClassSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    fn class(name: &str, extended: Option<&str>, created: Option<&str>) -> (String, DeviceClass) {
        let class = DeviceClass {
            metadata: ObjectMeta {
                name: Some(name.into()),
                creation_timestamp: created.map(|t| Time(t.parse().unwrap())),
                ..Default::default()
            },
            spec: DeviceClassSpec {
                extended_resource_name: extended.map(str::to_string),
                ..Default::default()
            },
        };
        (name.to_string(), class)
    }

    #[test]
    fn a_class_maps_its_explicit_name_or_else_its_implicit_one() {
        let classes = BTreeMap::from([
            class("gpu.nvidia.com", Some("nvidia.com/gpu"), None),
            class("mig.nvidia.com", None, None),
        ]);
        let mapping = device_class_mapping(&classes);
        assert_eq!(
            mapping.into_iter().collect::<Vec<_>>(),
            [
                (
                    "deviceclass.resource.kubernetes.io/mig.nvidia.com".to_string(),
                    "mig.nvidia.com".to_string()
                ),
                ("nvidia.com/gpu".to_string(), "gpu.nvidia.com".to_string()),
            ]
        );
    }

    #[test]
    fn the_newest_class_wins_then_the_first_by_name() {
        let classes = BTreeMap::from([
            class(
                "b-old",
                Some("example.com/gpu"),
                Some("2025-01-01T00:00:00Z"),
            ),
            class(
                "c-new",
                Some("example.com/gpu"),
                Some("2025-06-01T00:00:00Z"),
            ),
            class("x", Some("example.com/fpga"), None),
            class("a", Some("example.com/fpga"), None),
        ]);
        let mapping = device_class_mapping(&classes);
        assert_eq!(mapping["example.com/gpu"], "c-new");
        assert_eq!(mapping["example.com/fpga"], "a");
    }

    fn pod() -> Pod {
        let req =
            |container, name: &str, index, resource: &str, quantity| ContainerExtendedRequest {
                container,
                container_name: name.into(),
                index,
                resource: resource.into(),
                quantity,
            };
        Pod {
            name: "p".into(),
            namespace: "ns".into(),
            uid: "uid-1".into(),
            extended_requests: vec![
                req(0, "init", 0, "example.com/gpu", 2),
                req(1, "main", 2, "example.com/gpu", 1),
                req(1, "main", 3, "example.com/nic", 1),
            ],
            ..Default::default()
        }
    }

    #[test]
    fn requests_are_per_container_and_mapped_resource_sorted_by_name() {
        let mapping = BTreeMap::from([("example.com/gpu".to_string(), "gpu".to_string())]);
        let requests = device_requests(&pod(), &mapping);
        let got: Vec<(&str, &str, Option<i64>)> = (requests.iter())
            .map(|r| {
                let e = r.exactly.as_ref().unwrap();
                (r.name.as_str(), e.device_class_name.as_str(), e.count)
            })
            .collect();
        assert_eq!(
            got,
            [
                ("container-0-request-0", "gpu", Some(2)),
                ("container-1-request-2", "gpu", Some(1))
            ]
        );
        let claim = with_requests(&in_memory_claim(&pod()), requests);
        let mappings: Vec<(String, String, String)> = (request_mappings(&claim, &pod())
            .into_iter())
        .map(|m| (m.container_name, m.resource_name, m.request_name))
        .collect();
        assert_eq!(
            mappings,
            [
                (
                    "init".into(),
                    "example.com/gpu".into(),
                    "container-0-request-0".into()
                ),
                (
                    "main".into(),
                    "example.com/gpu".into(),
                    "container-1-request-2".into()
                ),
            ]
        );
    }

    #[test]
    fn the_claim_of_a_pod_is_annotated_and_controlled_by_it() {
        let pod = pod();
        let claim = in_memory_claim(&pod);
        assert!(is_claim_of(&claim, &pod));
        assert!(!has_requests(&claim));
        let other = Pod {
            uid: "uid-2".into(),
            ..pod.clone()
        };
        assert!(!is_claim_of(&claim, &other));
        let mut unannotated = claim.clone();
        unannotated.metadata.annotations = None;
        assert!(!is_claim_of(&unannotated, &pod));
    }
}
