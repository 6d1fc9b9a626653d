//! The allocator against upstream's table (`allocatortesting/allocator_testing.go`),
//! transcribed as data into `tests/data/dra/allocator-cases.yaml`.

use std::collections::{BTreeMap, HashSet};

use k8s_openapi::api::core::v1::NodeSelector;
use k8s_openapi::api::resource::v1::{DeviceClass, ResourceClaim, ResourceSlice};
use serde::Deserialize;

use schedsim::dra::allocator::{
    AllocateError, Allocation, Allocator, DeviceResult, Features, NodeView, Selectors,
};
use schedsim::dra::capacity;
use schedsim::model::Node;
use schedsim::sched::plugins::node_affinity::terms_match;

const CASES: &str = include_str!("../data/dra/allocator-cases.yaml");

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Case {
    name: String,
    #[serde(default)]
    features: Vec<String>,
    node: Option<NodeSpec>,
    #[serde(default)]
    classes: Vec<DeviceClass>,
    #[serde(default)]
    slices: Vec<ResourceSlice>,
    #[serde(default)]
    claims: Vec<ResourceClaim>,
    #[serde(default)]
    allocated: Vec<DeviceRef>,
    /// Capacity already consumed by shares of devices (upstream `allocatedCapacityDevices`).
    #[serde(default)]
    allocated_capacity: Vec<CapacityRef>,
    expect: Expect,
}

#[derive(Debug, Deserialize)]
struct CapacityRef {
    driver: String,
    pool: String,
    device: String,
    capacity: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
struct NodeSpec {
    name: String,
    #[serde(default)]
    labels: BTreeMap<String, String>,
}

#[derive(Debug, Deserialize)]
struct DeviceRef {
    driver: String,
    pool: String,
    device: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Expect {
    results: Option<Vec<ResultSpec>>,
    #[serde(default)]
    unsatisfiable: bool,
    error: Option<String>,
    error_match: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResultSpec {
    #[serde(default)]
    devices: Vec<DeviceSpec>,
    node_selector: Option<NodeSelector>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DeviceSpec {
    request: String,
    driver: String,
    pool: String,
    device: String,
    admin_access: Option<bool>,
    #[serde(rename = "shareID")]
    share_id: Option<String>,
    consumed_capacity: Option<BTreeMap<String, String>>,
    tolerations: Option<Vec<k8s_openapi::api::resource::v1::DeviceToleration>>,
}

/// Upstream's matcher replaces every share ID the allocator drew (random UUIDs) with this one.
const FIXED_SHARE_ID: &str = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa";

fn canonical(q: &str) -> String {
    let parsed: schedsim::model::quantity::Quantity = q.parse().expect("a quantity");
    parsed.canonical()
}

fn node(spec: Option<&NodeSpec>) -> Node {
    let k8s = k8s_openapi::api::core::v1::Node {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: spec.map(|s| s.name.clone()),
            labels: spec.map(|s| s.labels.clone()),
            ..Default::default()
        },
        ..Default::default()
    };
    let mut errors = Vec::new();
    schedsim::model::objects::node_from_k8s(&k8s, "node", &mut errors)
}

/// What a case allocates against, but the slices.
struct Fixture {
    features: Features,
    classes: BTreeMap<String, DeviceClass>,
    allocated: HashSet<(String, String, String)>,
    consumed: capacity::Aggregated,
    node: Node,
}

impl Fixture {
    fn of(case: &Case) -> Fixture {
        Fixture {
            features: Features {
                prioritized_list: case.features.iter().any(|f| f == "DRAPrioritizedList"),
                admin_access: case.features.iter().any(|f| f == "DRAAdminAccess"),
                partitionable_devices: (case.features.iter())
                    .any(|f| f == "DRAPartitionableDevices"),
                consumable_capacity: case.features.iter().any(|f| f == "DRAConsumableCapacity"),
                device_taints: case.features.iter().any(|f| f == "DRADeviceTaints"),
            },
            classes: (case.classes.iter())
                .map(|c| (c.metadata.name.clone().unwrap_or_default(), c.clone()))
                .collect(),
            allocated: (case.allocated.iter())
                .map(|d| (d.driver.clone(), d.pool.clone(), d.device.clone()))
                .collect(),
            consumed: (case.allocated_capacity.iter())
                .map(|d| {
                    let id = (d.driver.clone(), d.pool.clone(), d.device.clone());
                    let taken = (d.capacity.iter())
                        .map(|(name, q)| (name.clone(), q.parse().expect("a quantity")))
                        .collect();
                    (id, taken)
                })
                .collect(),
            node: node(case.node.as_ref()),
        }
    }

    /// The case's claims allocated from `slices`.
    fn allocate(
        &self,
        case: &Case,
        slices: &[ResourceSlice],
    ) -> Result<Option<Vec<Allocation>>, AllocateError> {
        let selectors = Selectors::default();
        let allocator = Allocator {
            features: self.features,
            allocated: &self.allocated,
            consumed: &self.consumed,
            classes: &self.classes,
            slices,
            selectors: &selectors,
        };
        let selects = |s: &NodeSelector| terms_match(&s.node_selector_terms, &self.node);
        let view = NodeView {
            name: &self.node.name,
            selects: &selects,
        };
        let claims: Vec<&ResourceClaim> = case.claims.iter().collect();
        allocator.allocate(&view, &claims)
    }
}

fn run(case: &Case) -> Result<(), String> {
    let got = Fixture::of(case).allocate(case, &case.slices);
    let want = &case.expect;
    match (got, &want.results, want.unsatisfiable, &want.error) {
        (Ok(Some(mut got)), Some(results), _, _) => {
            for d in got.iter_mut().flat_map(|a| &mut a.devices) {
                if d.share_id.is_some() {
                    d.share_id = Some(FIXED_SHARE_ID.into());
                }
            }
            let want: Vec<Allocation> = (results.iter())
                .map(|r| Allocation {
                    devices: (r.devices.iter())
                        .map(|d| DeviceResult {
                            request: d.request.clone(),
                            driver: d.driver.clone(),
                            pool: d.pool.clone(),
                            device: d.device.clone(),
                            admin_access: d.admin_access,
                            share_id: d.share_id.clone(),
                            consumed_capacity: (d.consumed_capacity.as_ref()).map(|c| {
                                (c.iter()).map(|(k, q)| (k.clone(), canonical(q))).collect()
                            }),
                            tolerations: d.tolerations.clone(),
                        })
                        .collect(),
                    node_selector: r.node_selector.clone(),
                })
                .collect();
            (got == want)
                .then_some(())
                .ok_or_else(|| format!("got {got:#?}\nwant {want:#?}"))
        }
        (Ok(None), None, true, None) => Ok(()),
        (Err(e), None, _, Some(expected)) => {
            let message = e.message();
            let ok = match want.error_match.as_deref().unwrap_or("substring") {
                "exact" => message == expected,
                "regexp" => regex_lite_match(expected, message),
                _ => message.contains(expected.as_str()),
            };
            ok.then_some(())
                .ok_or_else(|| format!("error {message:?}, want {expected:?}"))
        }
        (got, ..) => Err(format!("got {got:?}, want {want:?}")),
    }
}

/// The Go tests' regexps are literal text with `.*` gaps: each piece appears in order.
fn regex_lite_match(pattern: &str, text: &str) -> bool {
    let mut rest = text;
    for piece in pattern
        .trim_start_matches('^')
        .trim_end_matches('$')
        .split(".*")
    {
        let piece = piece.replace('\\', "");
        match rest.find(piece.as_str()) {
            Some(at) => rest = &rest[at + piece.len()..],
            None => return false,
        }
    }
    true
}

/// Properties over every upstream case that allocates: no device goes to two requests
/// (admin access and shares of a device that allows multiple allocations aside) nor is one
/// already in use; and a copy of a pool's device under a new
/// name never makes an allocation that succeeded fail (requests for exact counts only: "All"
/// asks for every device, so a new one can break it; and a device without the attributes a
/// selector reads is a CEL error upstream too).
#[test]
fn allocations_never_reuse_a_device_and_more_devices_never_hurt() {
    let (mut checked, mut grown) = (0, 0);
    for case in &super::cases::<Case>(CASES, "allocator-cases.yaml") {
        let fixture = Fixture::of(case);
        let Ok(Some(got)) = fixture.allocate(case, &case.slices) else {
            continue;
        };
        checked += 1;
        let mut seen = HashSet::new();
        for d in got.iter().flat_map(|a| &a.devices) {
            let id = (d.driver.clone(), d.pool.clone(), d.device.clone());
            if d.admin_access != Some(true) && d.share_id.is_none() {
                assert!(
                    seen.insert(id.clone()),
                    "{}: {id:?} allocated twice",
                    case.name
                );
                assert!(
                    !fixture.allocated.contains(&id),
                    "{}: {id:?} already in use",
                    case.name
                );
            }
        }
        let exact_only = (case.claims.iter())
            .flat_map(|c| {
                c.spec
                    .devices
                    .iter()
                    .flat_map(|d| d.requests.iter().flatten())
            })
            .all(|r| {
                r.exactly
                    .as_ref()
                    .is_some_and(|e| e.allocation_mode.as_deref() != Some("All"))
            });
        let Some(slice) = case.slices.first() else {
            continue;
        };
        if !exact_only {
            continue;
        }
        let mut slices = case.slices.clone();
        let mut extra = slice
            .spec
            .devices
            .iter()
            .flatten()
            .next()
            .cloned()
            .unwrap_or_default();
        extra.name = "schedsim-extra-device".into();
        slices[0]
            .spec
            .devices
            .get_or_insert_with(Vec::new)
            .push(extra);
        let after = fixture.allocate(case, &slices);
        assert!(
            matches!(after, Ok(Some(_))),
            "{}: one device more and allocation gives {after:?}",
            case.name
        );
        grown += 1;
    }
    assert!(
        checked >= 40 && grown >= 25,
        "checked {checked}, grown {grown}"
    );
}

#[test]
fn allocator_agrees_with_upstream_cases() {
    let cases: Vec<Case> = super::cases(CASES, "allocator-cases.yaml");
    let mut failures = Vec::new();
    for case in &cases {
        if let Err(e) = run(case) {
            failures.push(format!("{}: {e}", case.name));
        }
    }
    assert!(cases.len() >= 20, "only {} cases", cases.len());
    assert!(
        failures.is_empty(),
        "{} of {} cases fail:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}

/// Not in upstream's table, but what `allocateDevice` in `allocator_stable.go` does: a device
/// takes its counters before the claim's constraints are checked, and a constraint that then
/// refuses it does not give them back. Here device-2 is tried for req-1 after device-1 and
/// refused by `matchAttribute`, and its 4 units stay taken: device-3 no longer fits beside
/// device-1, and every other order fails the same way. Without that, device-1 and device-3
/// would fit exactly.
#[test]
fn counters_of_a_device_a_constraint_refuses_stay_taken() {
    let device = |name: &str, group: i64| {
        format!(
            "{{name: {name}, attributes: {{group: {{int: {group}}}}}, consumesCounters: [{{counterSet: gpu, counters: {{memory: {{value: 4Gi}}}}}}]}}"
        )
    };
    let case = format!(
        r#"
name: constraint-keeps-counters
features: [DRAPartitionableDevices]
node: {{name: node-1, labels: {{region: region-1, planet: earth}}}}
classes:
- metadata: {{name: class-a}}
  spec: {{selectors: [{{cel: {{expression: 'device.driver == "driver-a"'}}}}]}}
slices:
- metadata: {{name: counters}}
  spec:
    driver: driver-a
    pool: {{name: pool-1, generation: 1, resourceSliceCount: 2}}
    nodeName: node-1
    sharedCounters: [{{name: gpu, counters: {{memory: {{value: 8Gi}}}}}}]
- metadata: {{name: devices}}
  spec:
    driver: driver-a
    pool: {{name: pool-1, generation: 1, resourceSliceCount: 2}}
    nodeName: node-1
    devices: [{}, {}, {}]
claims:
- metadata: {{name: claim-0}}
  spec:
    devices:
      requests:
      - {{name: req-0, exactly: {{deviceClassName: class-a, allocationMode: ExactCount, count: 1}}}}
      - {{name: req-1, exactly: {{deviceClassName: class-a, allocationMode: ExactCount, count: 1}}}}
      constraints: [{{matchAttribute: driver-a/group}}]
expect: {{unsatisfiable: true}}
"#,
        device("device-1", 1),
        device("device-2", 2),
        device("device-3", 1)
    );
    let case = inline_case(&case);
    run(&case).unwrap();
    // The same devices without device-2 fit: its counters are what is missing.
    assert_fits_without(case, 1);
}

/// Not in upstream's table, but what `allocateDevice` in `allocator_experimental.go` does with
/// a device shared by capacity that consumes counters: its rollback gives back the share's
/// capacity, not its counters. Here req-0 first takes a share of device-1 (4 of the 8 units),
/// req-1 then cannot have both whole devices, and req-0 moves on to device-4, which consumes
/// nothing: device-1's 4 units stay taken, so device-2 and device-3 still do not fit. Without
/// device-1 they do.
#[test]
fn counters_of_a_share_given_back_stay_taken() {
    let case = r#"
name: share-keeps-counters
features: [DRAPartitionableDevices, DRAConsumableCapacity]
node: {name: node-1, labels: {region: region-1, planet: earth}}
classes:
- metadata: {name: class-a}
  spec: {selectors: [{cel: {expression: 'device.driver == "driver-a"'}}]}
slices:
- metadata: {name: counters}
  spec:
    driver: driver-a
    pool: {name: pool-1, generation: 1, resourceSliceCount: 2}
    nodeName: node-1
    sharedCounters: [{name: gpu, counters: {memory: {value: 8Gi}}}]
- metadata: {name: devices}
  spec:
    driver: driver-a
    pool: {name: pool-1, generation: 1, resourceSliceCount: 2}
    nodeName: node-1
    devices:
    - {name: device-1, allowMultipleAllocations: true, attributes: {kind: {string: shared}}, consumesCounters: [{counterSet: gpu, counters: {memory: {value: 4Gi}}}]}
    - {name: device-4, allowMultipleAllocations: true, attributes: {kind: {string: shared}}}
    - {name: device-2, attributes: {kind: {string: whole}}, consumesCounters: [{counterSet: gpu, counters: {memory: {value: 4Gi}}}]}
    - {name: device-3, attributes: {kind: {string: whole}}, consumesCounters: [{counterSet: gpu, counters: {memory: {value: 4Gi}}}]}
claims:
- metadata: {name: claim-0}
  spec:
    devices:
      requests:
      - {name: req-0, exactly: {deviceClassName: class-a, allocationMode: ExactCount, count: 1, selectors: [{cel: {expression: 'device.attributes["driver-a"].kind == "shared"'}}]}}
      - {name: req-1, exactly: {deviceClassName: class-a, allocationMode: ExactCount, count: 2, selectors: [{cel: {expression: 'device.attributes["driver-a"].kind == "whole"'}}]}}
expect: {unsatisfiable: true}
"#;
    let case = inline_case(case);
    run(&case).unwrap();
    // Without device-1, device-4, device-2 and device-3 fit.
    assert_fits_without(case, 0);
}

/// A case written inline, in the table's form.
fn inline_case(case: &str) -> Case {
    let mut lines = case.trim().lines();
    let first = lines.next().unwrap_or_default();
    let text = format!(
        "cases:\n- {first}\n{}",
        lines.map(|l| format!("  {l}\n")).collect::<String>()
    );
    (super::cases::<Case>(&text, "inline").pop()).expect("one case")
}

/// The case's claims can be allocated once device `index` of its second slice is gone.
fn assert_fits_without(mut case: Case, index: usize) {
    let devices = case.slices[1].spec.devices.as_mut().expect("devices");
    devices.remove(index);
    let got = Fixture::of(&case).allocate(&case, &case.slices);
    assert!(matches!(got, Ok(Some(_))), "{got:?}");
}
