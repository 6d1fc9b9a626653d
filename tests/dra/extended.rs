//! Extended resources backed by DRA (DRAExtendedResource): upstream's extended-resource cases
//! of the DynamicResources and NodeResourcesFit tests as scenarios
//! (`tests/data/dra/extended-resource-cases.yaml`), and the load's warning about implicit
//! extended resource names.

use schedsim::load::{LoadOptions, load_files};

use super::load::tempdir;
use super::plugin::run_cases;

#[test]
fn upstream_extended_resource_cases_hold() {
    run_cases(
        include_str!("../data/dra/extended-resource-cases.yaml"),
        "extended-resource-cases.yaml",
        20,
    );
}

/// A pod asking an implicit name (`deviceclass.resource.kubernetes.io/<class>`) is told that
/// 1.34 allocates nothing for it, with the gate on; with it off, nothing is said.
#[test]
fn implicit_extended_resource_names_are_warned_about_with_the_gate_on() {
    let dir = tempdir("implicit-extended-names");
    let scenario = |gate: bool| {
        format!(
            "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {{name: implicit}}\nspec:\n  scheduler: {{featureGates: {{DRAExtendedResource: {gate}}}}}\n  nodes: [{{apiVersion: v1, kind: Node, metadata: {{name: node-0}}, status: {{allocatable: {{cpu: \"1\", pods: \"1\"}}}}}}]\n  objects: [{{apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {{name: gpu}}}}]\n  workloads:\n  - {{apiVersion: v1, kind: Pod, metadata: {{name: p}}, spec: {{containers: [{{name: c, image: i, resources: {{requests: {{deviceclass.resource.kubernetes.io/gpu: \"1\"}}}}}}]}}}}\n"
        )
    };
    for gate in [true, false] {
        let file = dir.join(format!("gate-{gate}.yaml"));
        std::fs::write(&file, scenario(gate)).unwrap();
        let loaded = load_files(&[file], &LoadOptions::default());
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        let warnings = &loaded.scenarios[0].warnings;
        let warned = warnings.iter().any(|w| {
            w.starts_with("feature gate DRAExtendedResource: 1 pod(s) request an implicit extended resource name, such as pod default/p")
        });
        assert_eq!(warned, gate, "{warnings:?}");
    }
}

/// `cannot fit resource`: with NodeResourcesFit's Filter disabled, DynamicResources meets an
/// extended resource the node does not publish and no DeviceClass backs (not in upstream's
/// table, whose Filter tests have no such node).
#[test]
fn a_resource_nobody_provides_cannot_fit() {
    let dir = tempdir("cannot-fit-resource");
    std::fs::write(
        dir.join("config.yaml"),
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n  plugins: {filter: {disabled: [{name: NodeResourcesFit}]}}\n",
    )
    .unwrap();
    let file = dir.join("scenario.yaml");
    std::fs::write(
        &file,
        r#"apiVersion: schedsim.io/v1alpha1
kind: Scenario
metadata: {name: cannot-fit-resource}
spec:
  scheduler:
    featureGates: {DRAExtendedResource: true}
    configuration: {file: config.yaml}
  nodes: [{apiVersion: v1, kind: Node, metadata: {name: worker}, status: {allocatable: {cpu: "8", pods: "110"}}}]
  objects:
  - {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: my-resource-class}, spec: {extendedResourceName: example.com/gpu}}
  - {apiVersion: resource.k8s.io/v1, kind: ResourceSlice, metadata: {name: worker-some-driver}, spec: {driver: some-driver, nodeName: worker, pool: {name: worker, generation: 1, resourceSliceCount: 1}, devices: [{name: instance-1}]}}
  workloads:
  - apiVersion: v1
    kind: Pod
    metadata: {name: my-pod, namespace: default}
    spec:
      containers: [{name: main, image: busybox, resources: {limits: {example.com/gpu: "1", example.com/other: "1"}}}]
"#,
    )
    .unwrap();
    let loaded = load_files(&[file], &LoadOptions::default());
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let report = schedsim::simulate(&loaded.scenarios[0]);
    assert_eq!(
        report.pods[0].message,
        "0/1 nodes are available: 1 cannot fit resource. still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    );
    assert!(report.dra_claims.is_empty());
}
