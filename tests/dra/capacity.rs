//! Devices shared by capacity (DRAConsumableCapacity) through the whole scheduler: Filter's
//! fast paths (its cached verdicts, its count of free devices) must answer as the allocator
//! does once shares of a device are taken, and the gate decides whether a device is shared.

use schedsim::sched::PodPhase;

use super::load::{load_one, tempdir};

/// One GPU that allows multiple allocations, 40Gi of memory, 10Gi to a claim that asks for
/// none; `pods` pods whose claims (one ExactCount request, no constraints, no capacity: the
/// shape Filter would count) come from one template.
fn scenario(gate: bool, pods: usize) -> String {
    let mut s = format!(
        r#"apiVersion: schedsim.io/v1alpha1
kind: Scenario
metadata: {{name: shared-gpu}}
spec:
  scheduler:
    featureGates: {{DRAConsumableCapacity: {gate}}}
  nodes:
  - apiVersion: v1
    kind: Node
    metadata: {{name: n-0}}
    status: {{allocatable: {{cpu: "32", memory: 64Gi, pods: "110"}}}}
  objects:
  - apiVersion: resource.k8s.io/v1
    kind: DeviceClass
    metadata: {{name: gpu.example.com}}
    spec: {{selectors: [{{cel: {{expression: "device.driver == 'gpu.example.com'"}}}}]}}
  - apiVersion: resource.k8s.io/v1
    kind: ResourceSlice
    metadata: {{name: n-0-gpus}}
    spec:
      driver: gpu.example.com
      nodeName: n-0
      pool: {{name: n-0, resourceSliceCount: 1}}
      devices:
      - name: gpu-0
        allowMultipleAllocations: true
        capacity:
          memory: {{value: 40Gi, requestPolicy: {{default: 10Gi, validRange: {{min: 10Gi}}}}}}
  - apiVersion: resource.k8s.io/v1
    kind: ResourceClaimTemplate
    metadata: {{name: gpu, namespace: ml}}
    spec: {{spec: {{devices: {{requests: [{{name: gpu, exactly: {{deviceClassName: gpu.example.com}}}}]}}}}}}
  workloads:
"#
    );
    for i in 0..pods {
        s.push_str(&format!(
            "  - apiVersion: v1\n    kind: Pod\n    metadata: {{name: p-{i}, namespace: ml}}\n    spec:\n      containers: [{{name: main, image: x, resources: {{claims: [{{name: gpu}}]}}}}]\n      resourceClaims: [{{name: gpu, resourceClaimTemplateName: gpu}}]\n"
        ));
    }
    s
}

const CANNOT_ALLOCATE: &str = "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.";

/// The pods' (status, message) after a run of [`scenario`].
fn run(gate: bool, pods: usize) -> (Vec<(PodPhase, String)>, schedsim::report::ScenarioReport) {
    let dir = tempdir(&format!("capacity-{gate}"));
    let path = dir.join("s.yaml");
    std::fs::write(&path, scenario(gate, pods)).unwrap();
    let s = load_one(&path);
    let report = schedsim::simulate(&s);
    let pods = (report.pods.iter())
        .map(|p| (p.status, p.message.clone()))
        .collect();
    (pods, report)
}

/// Four claims take 10Gi each of the one GPU; the fifth finds no capacity left although no
/// claim holds the GPU whole. A Filter that counted free devices (a share leaves the device
/// "free") or kept its verdict past a share would place it, or place only the first.
#[test]
fn shares_fill_a_gpu_by_capacity_and_the_fast_paths_agree() {
    let (pods, report) = run(true, 5);
    for (i, (status, message)) in pods.iter().enumerate() {
        match i {
            0..4 => assert_eq!(
                (*status, message.as_str()),
                (PodPhase::Scheduled, ""),
                "p-{i}"
            ),
            _ => assert_eq!(
                (*status, message.as_str()),
                (PodPhase::Unschedulable, CANNOT_ALLOCATE),
                "p-{i}"
            ),
        }
    }
    assert_eq!(report.dra_claims.len(), 4);
    for claim in &report.dra_claims {
        assert_eq!(claim.devices, ["gpu.example.com/n-0/gpu-0"]);
        let taken = &claim.consumed_capacity["gpu.example.com/n-0/gpu-0"];
        assert_eq!(taken["memory"], "10Gi", "{}", claim.name);
    }
    let usage = &report.nodes[0].dra[0];
    assert_eq!((usage.allocated, usage.free), (1, 0));
    assert_eq!(usage.shared_capacity["memory"], "40Gi/40Gi");
}

/// With the gate off the same GPU is allocated whole, as upstream's allocator does with the
/// feature off: one pod gets it, and its claim records no share.
#[test]
fn with_the_gate_off_a_shareable_gpu_is_allocated_whole() {
    let (pods, report) = run(false, 3);
    assert_eq!(pods[0], (PodPhase::Scheduled, String::new()));
    for (status, message) in &pods[1..] {
        assert_eq!(
            (*status, message.as_str()),
            (PodPhase::Unschedulable, CANNOT_ALLOCATE)
        );
    }
    assert_eq!(report.dra_claims.len(), 1);
    assert!(report.dra_claims[0].consumed_capacity.is_empty());
}

/// A slice that shares devices loads with a warning only when the gate is off (the devices
/// are then allocated whole), and so does a claim template that requests capacity (the
/// request is then ignored).
#[test]
fn shared_devices_and_capacity_requests_warn_only_with_the_gate_off() {
    for gate in [true, false] {
        let dir = tempdir(&format!("capacity-warn-{gate}"));
        let path = dir.join("s.yaml");
        let text = scenario(gate, 1).replace(
            "exactly: {deviceClassName: gpu.example.com}",
            "exactly: {deviceClassName: gpu.example.com, capacity: {requests: {memory: 10Gi}}}",
        );
        std::fs::write(&path, text).unwrap();
        let s = load_one(&path);
        match gate {
            true => assert!(s.warnings.is_empty(), "{:?}", s.warnings),
            false => {
                assert_eq!(s.warnings.len(), 2, "{:?}", s.warnings);
                assert!(s.warnings[0].ends_with(
                    "allowMultipleAllocations (DRAConsumableCapacity is off: such a device is allocated whole)"
                ));
                assert!(s.warnings[1].starts_with(
                    "feature gate DRAConsumableCapacity is off: 1 ResourceClaim(s) and template(s) request device capacity (capacity.requests), such as ResourceClaimTemplate ml/gpu ("
                ));
            }
        }
    }
}

/// With the gate off a request's `capacity` is ignored, as by the stable allocator a
/// kube-scheduler with the gate off runs: the first claim takes the GPU whole, the next finds
/// it taken (no Filter error about the feature).
#[test]
fn with_the_gate_off_capacity_requests_are_ignored() {
    let dir = tempdir("capacity-ignored");
    let path = dir.join("s.yaml");
    let text = scenario(false, 2).replace(
        "exactly: {deviceClassName: gpu.example.com}",
        "exactly: {deviceClassName: gpu.example.com, capacity: {requests: {memory: 10Gi}}}",
    );
    std::fs::write(&path, text).unwrap();
    let report = schedsim::simulate(&load_one(&path));
    let pods: Vec<_> = (report.pods.iter())
        .map(|p| (p.status, p.message.as_str()))
        .collect();
    assert_eq!(
        pods,
        [
            (PodPhase::Scheduled, ""),
            (PodPhase::Unschedulable, CANNOT_ALLOCATE)
        ]
    );
    assert!(report.dra_claims[0].consumed_capacity.is_empty());
}
