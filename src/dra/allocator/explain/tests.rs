//! `explain_among` on hand-built classes, slices and claims (written as upstream's
//! `allocator_testing.go` builds them: driver `driver-a`, pool `pool-1`, node `node-1`).

use std::collections::{BTreeMap, HashSet};

use k8s_openapi::api::core::v1::NodeSelector;
use k8s_openapi::api::resource::v1::{
    DeviceClass, DeviceClassSpec, ResourceClaim, ResourceClaimSpec, ResourceSlice,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use super::super::{Allocation, Allocator, Features, NodeView, Selectors};
use super::{ClaimDevices, NOT_NEEDED, RequestDevices, USABLE_ALONE};
use crate::dra::DeviceId;
use crate::dra::capacity;

fn yaml<T: serde::de::DeserializeOwned>(text: &str) -> T {
    serde_saphyr::from_str(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn class(name: &str, expressions: &[&str]) -> DeviceClass {
    let selectors = (expressions.iter())
        .map(|e| format!("- cel: {{expression: '{e}'}}\n"))
        .collect::<String>();
    DeviceClass {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: DeviceClassSpec {
            selectors: (!selectors.is_empty()).then(|| yaml(&selectors)),
            ..Default::default()
        },
    }
}

/// A slice of `spec` (YAML), named `name`.
fn slice(name: &str, spec: &str) -> ResourceSlice {
    ResourceSlice {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: yaml(spec),
    }
}

/// The one slice of pool `pool-1` on `node-1`, with `devices` (a YAML list).
fn devices(devices: &str) -> ResourceSlice {
    pool_slice(1, devices)
}

/// Slice `slice-1` of pool `pool-1` (of `slices` slices) on `node-1`, with `devices`.
fn pool_slice(slices: usize, devices: &str) -> ResourceSlice {
    let devices = devices.replace('\n', "\n  ");
    let spec = format!(
        "driver: driver-a
pool: {{name: pool-1, generation: 1, resourceSliceCount: {slices}}}
nodeName: node-1
devices:
  {devices}"
    );
    slice("slice-1", &spec)
}

/// Claim `default/<name>` with `devices` (a `DeviceClaim` in YAML).
fn claim(name: &str, devices: &str) -> ResourceClaim {
    ResourceClaim {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..Default::default()
        },
        spec: ResourceClaimSpec {
            devices: Some(yaml(devices)),
        },
        ..Default::default()
    }
}

const DRIVER_A: &str = r#"device.driver == "driver-a""#;
const A100: &str = r#"device.attributes["driver-a"].model == "a100""#;
/// [`A100`] as a request's selectors.
const A100_SELECTORS: &str =
    r#"[{cel: {expression: 'device.attributes["driver-a"].model == "a100"'}}]"#;

/// Two devices of model a100, one t4, one a100 again.
const GPUS: &str = r#"
- {name: dev-0, attributes: {model: {string: a100}}}
- {name: dev-1, attributes: {model: {string: t4}}}
- {name: dev-2, attributes: {model: {string: a100}}}
- {name: dev-3, attributes: {model: {string: a100}}}"#;

struct Case {
    features: Features,
    allocated: HashSet<DeviceId>,
    consumed: capacity::Aggregated,
    classes: Vec<DeviceClass>,
    slices: Vec<ResourceSlice>,
    claims: Vec<ResourceClaim>,
}

impl Case {
    fn new(
        classes: Vec<DeviceClass>,
        slices: Vec<ResourceSlice>,
        claims: Vec<ResourceClaim>,
    ) -> Case {
        Case {
            features: Features::default(),
            allocated: HashSet::new(),
            consumed: capacity::Aggregated::new(),
            classes,
            slices,
            claims,
        }
    }

    /// `allocate_among`'s answer and the explanation, whose picks must be that answer's.
    fn explain(&self) -> (Option<Vec<Allocation>>, Vec<ClaimDevices>) {
        let classes: BTreeMap<String, DeviceClass> = (self.classes.iter())
            .map(|c| (c.metadata.name.clone().unwrap_or_default(), c.clone()))
            .collect();
        let selectors = Selectors::default();
        let allocator = Allocator {
            features: self.features,
            allocated: &self.allocated,
            consumed: &self.consumed,
            classes: &classes,
            slices: &self.slices,
            selectors: &selectors,
        };
        let selects = |_: &NodeSelector| false;
        let node = NodeView {
            name: "node-1",
            selects: &selects,
        };
        let claims: Vec<&ResourceClaim> = self.claims.iter().collect();
        let slices: Vec<&ResourceSlice> = self.slices.iter().collect();
        let allocation = allocator.allocate_among(&node, &claims, &slices).unwrap();
        let explained = allocator.explain_among(&node, &claims, &slices).unwrap();
        assert_eq!(explained.len(), claims.len());
        for (i, claim) in explained.iter().enumerate() {
            for request in &claim.requests {
                let want: Vec<String> = (allocation.iter())
                    .flat_map(|a| &a[i].devices)
                    .filter(|d| d.request == request.request)
                    .map(|d| format!("{}/{}/{}", d.driver, d.pool, d.device))
                    .collect();
                assert_eq!(request.picked, want, "{}", request.request);
            }
        }
        (allocation, explained)
    }
}

/// The request's other devices (without `driver-a/pool-1/`) and their reasons.
fn others(request: &RequestDevices) -> Vec<(&str, &str)> {
    (request.others.iter())
        .map(|o| {
            let device = o
                .device
                .strip_prefix("driver-a/pool-1/")
                .unwrap_or(&o.device);
            (device, o.reason.as_str())
        })
        .collect()
}

fn picked(request: &RequestDevices) -> Vec<&str> {
    (request.picked.iter())
        .map(|d| d.strip_prefix("driver-a/pool-1/").unwrap_or(d))
        .collect()
}

const ONE_GPU: &str = "requests:\n- {name: req-0, exactly: {deviceClassName: gpu}}";

#[test]
fn picks_are_the_allocation_and_a_later_device_is_not_needed() {
    let case = Case::new(
        vec![class("gpu", &[DRIVER_A])],
        vec![devices(GPUS)],
        vec![
            claim(
                "claim-0",
                "requests:
- {name: req-0, exactly: {deviceClassName: gpu, count: 2}}
- {name: req-1, exactly: {deviceClassName: gpu}}",
            ),
            claim("claim-1", ONE_GPU),
        ],
    );
    let (allocation, explained) = case.explain();
    assert!(allocation.is_some());
    let [first, second] = &explained[..] else {
        panic!("{explained:?}")
    };
    assert_eq!(first.claim, "default/claim-0");
    let (req0, req1) = (&first.requests[0], &first.requests[1]);
    assert_eq!(
        (req0.request.as_str(), req0.count, req0.used),
        ("req-0", 2, true)
    );
    assert_eq!(
        (req0.mode.as_str(), req0.device_class.as_str()),
        ("ExactCount", "gpu")
    );
    assert_eq!(picked(req0), ["dev-0", "dev-1"]);
    assert_eq!(
        others(req0),
        [
            (
                "dev-2",
                "picked for another request of this pod: req-1 of claim default/claim-0"
            ),
            (
                "dev-3",
                "picked for another request of this pod: req-0 of claim default/claim-1"
            ),
        ]
    );
    assert_eq!(picked(req1), ["dev-2"]);
    assert_eq!(
        others(req1)[0],
        (
            "dev-0",
            "picked for another request of this pod: req-0 of claim default/claim-0"
        )
    );
    let only = &second.requests[0];
    assert_eq!(picked(only), ["dev-3"]);
    assert_eq!(others(only).len(), 3);

    // One claim for one device: the search stops at the first, the rest were not needed.
    let case = Case::new(
        vec![class("gpu", &[DRIVER_A])],
        vec![devices(GPUS)],
        vec![claim("claim-0", ONE_GPU)],
    );
    let (_, explained) = case.explain();
    let request = &explained[0].requests[0];
    assert_eq!(picked(request), ["dev-0"]);
    assert_eq!(
        others(request),
        [
            ("dev-1", NOT_NEEDED),
            ("dev-2", NOT_NEEDED),
            ("dev-3", NOT_NEEDED)
        ]
    );
}

#[test]
fn a_class_selector_names_the_first_that_is_false() {
    let other_driver = slice(
        "slice-b",
        "driver: driver-b
pool: {name: pool-b, generation: 1, resourceSliceCount: 1}
nodeName: node-1
devices: [{name: dev-b}]",
    );
    let case = Case::new(
        vec![class("gpu", &[DRIVER_A, A100])],
        vec![devices(GPUS), other_driver],
        vec![claim("claim-0", ONE_GPU)],
    );
    let (_, explained) = case.explain();
    let request = &explained[0].requests[0];
    assert_eq!(picked(request), ["dev-0"]);
    assert_eq!(
        others(request),
        [
            (
                "dev-1",
                r#"DeviceClass gpu selector is false: device.attributes["driver-a"].model == "a100""#
            ),
            ("dev-2", NOT_NEEDED),
            ("dev-3", NOT_NEEDED),
            (
                "driver-b/pool-b/dev-b",
                r#"DeviceClass gpu selector is false: device.driver == "driver-a""#
            ),
        ]
    );
}

#[test]
fn a_request_selector_is_checked_after_the_class_selectors() {
    let case = Case::new(
        vec![class(
            "gpu",
            &[r#"device.attributes["driver-a"].model != "h100""#],
        )],
        vec![devices(&format!(
            "{GPUS}\n- {{name: dev-4, attributes: {{model: {{string: h100}}}}}}"
        ))],
        vec![claim(
            "claim-0",
            &format!(
                "requests:
- name: req-0
  exactly: {{deviceClassName: gpu, count: 2, selectors: {A100_SELECTORS}}}"
            ),
        )],
    );
    let (_, explained) = case.explain();
    let request = &explained[0].requests[0];
    assert_eq!(picked(request), ["dev-0", "dev-2"]);
    assert_eq!(
        others(request),
        [
            (
                "dev-1",
                r#"request selector is false: device.attributes["driver-a"].model == "a100""#
            ),
            ("dev-3", NOT_NEEDED),
            (
                "dev-4",
                r#"DeviceClass gpu selector is false: device.attributes["driver-a"].model != "h100""#
            ),
        ]
    );
}

#[test]
fn a_device_allocated_before_is_in_use() {
    let mut case = Case::new(
        vec![class("gpu", &[DRIVER_A])],
        vec![devices(GPUS)],
        vec![claim("claim-0", ONE_GPU)],
    );
    case.allocated
        .insert(("driver-a".into(), "pool-1".into(), "dev-0".into()));
    let (_, explained) = case.explain();
    let request = &explained[0].requests[0];
    assert_eq!(picked(request), ["dev-1"]);
    assert_eq!(others(request)[0], ("dev-0", "allocated to another claim"));
}

#[test]
fn an_untolerated_taint_is_named() {
    let tainted = r#"
- {name: dev-0, taints: [{key: gpu-health, value: bad, effect: NoSchedule}]}
- {name: dev-1, taints: [{key: maintenance, effect: NoExecute}]}
- {name: dev-2, taints: [{key: gpu-health, value: bad, effect: None}]}"#;
    let claims = vec![claim(
        "claim-0",
        "requests:
- name: req-0
  exactly:
    deviceClassName: gpu
    tolerations: [{key: maintenance, operator: Exists, effect: NoExecute}]",
    )];
    let mut case = Case::new(
        vec![class("gpu", &[DRIVER_A])],
        vec![devices(tainted)],
        claims,
    );
    case.features.device_taints = true;
    let (_, explained) = case.explain();
    let request = &explained[0].requests[0];
    assert_eq!(picked(request), ["dev-1"]);
    assert_eq!(
        others(request),
        [
            ("dev-0", "untolerated taint gpu-health=bad:NoSchedule"),
            ("dev-2", NOT_NEEDED)
        ]
    );
}

#[test]
fn a_match_attribute_constraint_rules_out_devices_beside_the_picked_ones() {
    let numa = r#"
- {name: dev-0, attributes: {numa: {int: 0}}}
- {name: dev-1, attributes: {numa: {int: 1}}}
- {name: dev-2, attributes: {numa: {int: 0}}}
- {name: dev-3}"#;
    let claims = vec![claim(
        "claim-0",
        "requests:
- {name: req-0, exactly: {deviceClassName: gpu}}
- {name: req-1, exactly: {deviceClassName: gpu}}
constraints: [{matchAttribute: driver-a/numa}]",
    )];
    let case = Case::new(vec![class("gpu", &[DRIVER_A])], vec![devices(numa)], claims);
    let (_, explained) = case.explain();
    let (req0, req1) = (&explained[0].requests[0], &explained[0].requests[1]);
    assert_eq!((picked(req0), picked(req1)), (vec!["dev-0"], vec!["dev-2"]));
    assert_eq!(
        others(req1),
        [
            (
                "dev-0",
                "picked for another request of this pod: req-0 of claim default/claim-0"
            ),
            (
                "dev-1",
                "does not match constraint matchAttribute driver-a/numa"
            ),
            (
                "dev-3",
                "has no attribute driver-a/numa of constraint matchAttribute"
            ),
        ]
    );
    assert_eq!(
        others(req0)[0],
        (
            "dev-1",
            "does not match constraint matchAttribute driver-a/numa"
        )
    );
}

#[test]
fn exhausted_counters_name_their_set_and_a_judged_device_takes_none() {
    // Set `big` comes first by name and has room: `cs` is the set exceeded.
    let consuming = |name: &str, gi: u32| {
        format!(
            "- name: {name}
  consumesCounters:
  - {{counterSet: big, counters: {{memory: {{value: 1Gi}}}}}}
  - {{counterSet: cs, counters: {{memory: {{value: {gi}Gi}}}}}}"
        )
    };
    let devices = [
        consuming("dev-0", 5),
        consuming("dev-1", 5),
        consuming("dev-2", 3),
        consuming("dev-3", 3),
    ]
    .join("\n");
    let slices = vec![
        pool_slice(2, &devices),
        slice(
            "slice-2",
            "driver: driver-a
pool: {name: pool-1, generation: 1, resourceSliceCount: 2}
nodeName: node-1
sharedCounters:
- {name: big, counters: {memory: {value: 100Gi}}}
- {name: cs, counters: {memory: {value: 8Gi}}}",
        ),
    ];
    let mut case = Case::new(
        vec![class("gpu", &[DRIVER_A])],
        slices,
        vec![claim("claim-0", ONE_GPU)],
    );
    case.features.partitionable_devices = true;
    let (_, explained) = case.explain();
    let request = &explained[0].requests[0];
    assert_eq!(picked(request), ["dev-0"]);
    // dev-2 fits beside dev-0 (3Gi + 5Gi of 8Gi); so does dev-3 once dev-2's are put back.
    assert_eq!(
        others(request),
        [
            ("dev-1", "not enough counters in counter set cs"),
            ("dev-2", NOT_NEEDED),
            ("dev-3", NOT_NEEDED),
        ]
    );
}

#[test]
fn exhausted_capacity_is_named() {
    let shared = r#"
- name: dev-0
  allowMultipleAllocations: true
  capacity: {memory: {value: 8Gi}}
- name: dev-1
  allowMultipleAllocations: true
  capacity: {memory: {value: 8Gi}}"#;
    let claims = vec![claim(
        "claim-0",
        "requests:
- name: req-0
  exactly: {deviceClassName: gpu, capacity: {requests: {memory: 4Gi}}}",
    )];
    let mut case = Case::new(
        vec![class("gpu", &[DRIVER_A])],
        vec![devices(shared)],
        claims,
    );
    case.features.consumable_capacity = true;
    let held = BTreeMap::from([("memory".to_string(), "6Gi".parse().unwrap())]);
    case.consumed
        .insert(("driver-a".into(), "pool-1".into(), "dev-0".into()), held);
    let (_, explained) = case.explain();
    let request = &explained[0].requests[0];
    assert_eq!(picked(request), ["dev-1"]);
    assert_eq!(others(request), [("dev-0", "not enough capacity memory")]);
}

#[test]
fn first_available_says_which_subrequest_was_used() {
    let claims = vec![claim(
        "claim-0",
        &format!(
            "requests:
- name: req-0
  firstAvailable:
  - {{name: big, deviceClassName: gpu, count: 5}}
  - {{name: a100, deviceClassName: gpu, selectors: {A100_SELECTORS}}}
  - {{name: any, deviceClassName: gpu}}"
        ),
    )];
    let mut case = Case::new(vec![class("gpu", &[DRIVER_A])], vec![devices(GPUS)], claims);
    case.features.prioritized_list = true;
    let (_, explained) = case.explain();
    let [big, a100, any] = &explained[0].requests[..] else {
        panic!("{explained:?}")
    };
    assert_eq!(
        [&big.request, &a100.request, &any.request],
        ["req-0/big", "req-0/a100", "req-0/any"]
    );
    assert_eq!([big.used, a100.used, any.used], [false, true, false]);
    assert!(big.picked.is_empty() && any.picked.is_empty());
    assert_eq!(picked(a100), ["dev-0"]);
    let in_a100 = "picked for another request of this pod: req-0/a100 of claim default/claim-0";
    let not_big =
        "usable, but the search found no allocation with this subrequest and used req-0/a100";
    assert_eq!(
        others(big),
        [
            ("dev-0", in_a100),
            ("dev-1", not_big),
            ("dev-2", not_big),
            ("dev-3", not_big)
        ]
    );
    assert_eq!(
        others(a100),
        [
            (
                "dev-1",
                r#"request selector is false: device.attributes["driver-a"].model == "a100""#
            ),
            ("dev-2", NOT_NEEDED),
            ("dev-3", NOT_NEEDED),
        ]
    );
    let not_any = "usable, but subrequest req-0/a100 came first and was used";
    assert_eq!(others(any)[1], ("dev-1", not_any));
}

#[test]
fn all_mode_lists_the_devices_that_do_not_match() {
    let claims = vec![claim(
        "claim-0",
        &format!(
            "requests:
- name: req-0
  exactly: {{deviceClassName: gpu, allocationMode: All, selectors: {A100_SELECTORS}}}"
        ),
    )];
    let case = Case::new(vec![class("gpu", &[DRIVER_A])], vec![devices(GPUS)], claims);
    let (_, explained) = case.explain();
    let request = &explained[0].requests[0];
    assert_eq!((request.mode.as_str(), request.count), ("All", 3));
    assert_eq!(picked(request), ["dev-0", "dev-2", "dev-3"]);
    assert_eq!(
        others(request),
        [(
            "dev-1",
            r#"request selector is false: device.attributes["driver-a"].model == "a100""#
        )]
    );
}

#[test]
fn a_device_choosing_other_nodes_is_not_available() {
    let slices = vec![slice(
        "slice-1",
        "driver: driver-a
pool: {name: pool-1, generation: 1, resourceSliceCount: 1}
perDeviceNodeSelection: true
devices:
- {name: dev-0, nodeName: node-2}
- {name: dev-1, nodeName: node-1}",
    )];
    let mut case = Case::new(
        vec![class("gpu", &[DRIVER_A])],
        slices,
        vec![claim("claim-0", ONE_GPU)],
    );
    case.features.partitionable_devices = true;
    let (_, explained) = case.explain();
    let request = &explained[0].requests[0];
    assert_eq!(picked(request), ["dev-1"]);
    assert_eq!(others(request), [("dev-0", "not available on this node")]);
}

#[test]
fn without_an_allocation_each_device_is_judged_on_its_own() {
    let claims = vec![claim(
        "claim-0",
        "requests:\n- {name: req-0, exactly: {deviceClassName: gpu, count: 4}}",
    )];
    let mut case = Case::new(vec![class("gpu", &[DRIVER_A])], vec![devices(GPUS)], claims);
    case.allocated
        .insert(("driver-a".into(), "pool-1".into(), "dev-2".into()));
    let (allocation, explained) = case.explain();
    assert_eq!(allocation, None);
    let request = &explained[0].requests[0];
    assert!(!request.used && request.picked.is_empty());
    assert_eq!(
        others(request),
        [
            ("dev-0", USABLE_ALONE),
            ("dev-1", USABLE_ALONE),
            ("dev-2", "allocated to another claim"),
            ("dev-3", USABLE_ALONE),
        ]
    );
}

#[test]
fn a_cel_error_past_the_picked_devices_is_the_reason() {
    // dev-1 has no model: the selector fails to evaluate, after the search was done.
    let gpus = r#"
- {name: dev-0, attributes: {model: {string: a100}}}
- {name: dev-1}"#;
    let case = Case::new(
        vec![class("gpu", &[A100])],
        vec![devices(gpus)],
        vec![claim("claim-0", ONE_GPU)],
    );
    let (_, explained) = case.explain();
    let request = &explained[0].requests[0];
    assert_eq!(picked(request), ["dev-0"]);
    let (device, reason) = others(request)[0];
    assert_eq!(device, "dev-1");
    assert!(
        reason.starts_with(
            "class gpu: selector #0 on device driver-a/pool-1/dev-1: CEL runtime error"
        ),
        "{reason}"
    );
}
