//! DRA objects through a scenario's `spec.objects`: every kind inline, from files with many
//! documents, from `List` dumps and folders (NVIDIA's published objects in `fixtures/dra/`),
//! at the versions schedsim reads; what it refuses, with positions and exit code 2.

use std::path::{Path, PathBuf};
use std::process::Command;

use schedsim::load::{LoadOptions, Scenario, load_files};

pub fn load(file: &Path) -> schedsim::load::Loaded {
    load_files(&[file.to_path_buf()], &LoadOptions::default())
}

pub fn load_one(file: &Path) -> Scenario {
    let mut loaded = load(file);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    loaded.scenarios.remove(0)
}

pub fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/dra")
        .join(name)
}

/// A fresh folder for this test's files.
pub fn tempdir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("schedsim-dra-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const SCENARIO_HEAD: &str =
    "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  objects:\n";

#[test]
fn nvidias_published_objects_load_from_a_folder() {
    let s = load_one(&data("fixtures-scenario.yaml"));
    let dra = &s.config.dra;
    assert_eq!(
        dra.classes.keys().collect::<Vec<_>>(),
        [
            "compute-domain-daemon.nvidia.com",
            "compute-domain-default-channel.nvidia.com",
            "gpu.nvidia.com",
            "mig.nvidia.com",
            "vfio.gpu.nvidia.com",
        ]
    );
    let devices: Vec<(String, usize)> = (dra.slices.iter())
        .map(|s| {
            (
                s.spec.node_name.clone().unwrap(),
                s.spec.devices.as_ref().map_or(0, Vec::len),
            )
        })
        .collect();
    // The folder's files in path order: a100-mig, a100, h100.
    assert_eq!(
        devices,
        [
            ("a100-mig-node-0".to_string(), 21),
            ("a100-node-0".to_string(), 8),
            ("h100-node-0".to_string(), 8),
        ]
    );
    assert_eq!(dra.templates().count(), 1);
    // The shared claim, and one generated for each of the two trainers.
    assert_eq!(dra.claims().count(), 3);
    assert!(dra.allocated_devices().is_empty());
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
}

#[test]
fn every_kind_loads_inline_from_multi_document_files_and_list_dumps() {
    let dir = tempdir("kinds");
    std::fs::write(
        dir.join("classes.yaml"),
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: a.example.com}\n---\n\
         apiVersion: resource.k8s.io/v1beta2\nkind: DeviceClass\nmetadata: {name: b.example.com}\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("dump.yaml"),
        r#"apiVersion: v1
kind: List
items:
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: n-0-slice}
  spec: {driver: a.example.com, nodeName: n-0, pool: {name: n-0, resourceSliceCount: 1}, devices: [{name: d-0}]}
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaimTemplate
  metadata: {name: t, namespace: ns}
  spec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: a.example.com}}]}}}
"#,
    )
    .unwrap();
    let scenario = dir.join("s.yaml");
    std::fs::write(
        &scenario,
        format!(
            "{SCENARIO_HEAD}  - file: classes.yaml\n  - file: dump.yaml\n  - apiVersion: resource.k8s.io/v1\n    kind: ResourceClaim\n    metadata: {{name: c}}\n    spec: {{devices: {{requests: [{{name: r, exactly: {{deviceClassName: b.example.com}}}}]}}}}\n"
        ),
    )
    .unwrap();
    let s = load_one(&scenario);
    let dra = &s.config.dra;
    assert_eq!(
        dra.classes.keys().collect::<Vec<_>>(),
        ["a.example.com", "b.example.com"]
    );
    assert_eq!(dra.slices.len(), 1);
    assert!(dra.template("ns", "t").is_some());
    // A namespaced object without a namespace is in `default`, defaulted as the API server
    // defaults it.
    let claim = dra.claim("default", "c").expect("claim default/c");
    let exact = claim
        .spec
        .devices
        .as_ref()
        .unwrap()
        .requests
        .as_ref()
        .unwrap()[0]
        .exactly
        .as_ref()
        .unwrap();
    assert_eq!(exact.allocation_mode.as_deref(), Some("ExactCount"));
    assert_eq!(exact.count, Some(1));
}

fn run(scenario: &Path) -> (Option<i32>, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_schedsim"))
        .args(["run", scenario.to_str().unwrap()])
        .output()
        .expect("run schedsim");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn other_versions_and_repeated_names_are_refused_with_positions() {
    let dir = tempdir("refused");
    let scenario = dir.join("s.yaml");
    std::fs::write(
        &scenario,
        format!(
            "{SCENARIO_HEAD}{}",
            r#"  - apiVersion: resource.k8s.io/v1alpha3
    kind: ResourceClaim
    metadata: {name: c}
  - apiVersion: resource.k8s.io/v1
    kind: DeviceClass
    metadata: {name: gpu.example.com}
  - apiVersion: resource.k8s.io/v1
    kind: DeviceClass
    metadata: {name: gpu.example.com}
  - apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: c, namespace: a}
  - apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: c, namespace: b}
  - apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata: {name: c, namespace: a}
  - apiVersion: resource.k8s.io/v1
    kind: ResourceSlice
    metadata: {name: s}
    spec: {driver: gpu.example.com, allNodes: true, pool: {name: p, resourceSliceCount: 1}}
  - apiVersion: resource.k8s.io/v1
    kind: ResourceSlice
    metadata: {name: s}
    spec: {driver: gpu.example.com, allNodes: true, pool: {name: p, resourceSliceCount: 1}}
  - apiVersion: resource.k8s.io/v1
    kind: ResourceSlice
    metadata: {name: t}
    spec: {driver: Bad_Driver, allNodes: true, pool: {name: p, resourceSliceCount: 1}}
"#
        ),
    )
    .unwrap();
    let (code, stderr) = run(&scenario);
    assert_eq!(code, Some(2), "{stderr}");
    for expected in [
        "s.yaml:6:17: spec.objects[0].apiVersion: no matches for kind \"ResourceClaim\" in version \"resource.k8s.io/v1alpha3\" (schedsim reads it at resource.k8s.io/v1, resource.k8s.io/v1beta2, resource.k8s.io/v1beta1)",
        "s.yaml:14:22: spec.objects[2].metadata.name: deviceclasses.resource.k8s.io \"gpu.example.com\" already exists",
        "s.yaml:23:22: spec.objects[5].metadata.name: resourceclaims.resource.k8s.io \"c\" already exists in namespace \"a\"",
        "s.yaml:30:22: spec.objects[7].metadata.name: resourceslices.resource.k8s.io \"s\" already exists",
        "s.yaml:35:20: spec.objects[8].spec.driver: Invalid value: \"Bad_Driver\": a lowercase RFC 1123 subdomain",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in:\n{stderr}"
        );
    }
    assert_eq!(stderr.matches("already exists").count(), 3, "{stderr}");
}

#[test]
fn slices_with_features_the_allocator_does_not_simulate_load_with_a_warning() {
    let dir = tempdir("unsimulated");
    let scenario = dir.join("s.yaml");
    std::fs::write(
        &scenario,
        format!(
            "{SCENARIO_HEAD}{}",
            r#"  - apiVersion: resource.k8s.io/v1
    kind: ResourceSlice
    metadata: {name: counters}
    spec:
      driver: gpu.example.com
      nodeName: n-0
      pool: {name: n-0, resourceSliceCount: 2}
      sharedCounters: [{name: gpu-0-counter-set, counters: {memory: {value: 40Gi}}}]
  - apiVersion: resource.k8s.io/v1
    kind: ResourceSlice
    metadata: {name: tainted}
    spec:
      driver: gpu.example.com
      nodeName: n-0
      pool: {name: n-0, resourceSliceCount: 2}
      devices: [{name: gpu-0, taints: [{key: example.com/unhealthy, effect: NoSchedule}]}]
  - apiVersion: resource.k8s.io/v1
    kind: ResourceSlice
    metadata: {name: binding}
    spec:
      driver: other.example.com
      nodeName: n-0
      pool: {name: n-0, resourceSliceCount: 1}
      devices: [{name: nic-0, bindingConditions: [Ready], bindingFailureConditions: [Failed], attributes: {lanes: {ints: [1, 2]}}}]
  - apiVersion: resource.k8s.io/v1alpha3
    kind: DeviceTaintRule
    metadata: {name: drain}
    spec:
      taint: {key: example.com/drain, effect: NoExecute}
"#
        ),
    )
    .unwrap();
    let s = load_one(&scenario);
    assert_eq!(s.config.dra.slices.len(), 3);
    assert_eq!(s.warnings.len(), 4, "{:?}", s.warnings);
    let w = &s.warnings[0];
    assert!(
        w.starts_with("1 ResourceSlice(s) use DRA features behind the DRAPartitionableDevices gate, which is off (spec.scheduler.featureGates turns it on), such as ResourceSlice counters (")
            && w.ends_with("): sharedCounters (the allocator leaves the slice out)"),
        "{w}"
    );
    let w = &s.warnings[1];
    assert!(
        w.starts_with("feature gate DRADeviceTaints is off: 1 ResourceSlice(s) have device taints, such as ResourceSlice tainted (")
            && w.ends_with("the allocator of a kube-scheduler with the gate off does: enable the gate in spec.scheduler.featureGates to keep a device from requests that do not tolerate its NoSchedule and NoExecute taints"),
        "{w}"
    );
    let w = &s.warnings[2];
    assert!(
        w.starts_with("1 DeviceTaintRule(s), such as DeviceTaintRule drain (")
            && w.ends_with("), are not simulated: the taints they add to devices are ignored"),
        "{w}"
    );
    let w = &s.warnings[3];
    assert!(
        w.starts_with("1 ResourceSlice(s) use DRA features schedsim does not simulate, such as ResourceSlice binding (")
            && w.ends_with("): bindingConditions, list-type attributes (DRAListTypeAttributes; a selector that meets such a device fails)"),
        "{w}"
    );
    // With both gates on, counter sets and taints are simulated: what is left is the rule and
    // the binding conditions.
    let on = dir.join("on.yaml");
    let text = std::fs::read_to_string(&scenario).unwrap();
    let gated = text.replacen(
        "spec:\n",
        "spec:\n  scheduler:\n    featureGates: {DRAPartitionableDevices: true, DRADeviceTaints: true}\n",
        1,
    );
    assert_ne!(gated, text);
    std::fs::write(&on, gated).unwrap();
    let s = load_one(&on);
    assert_eq!(s.warnings.len(), 2, "{:?}", s.warnings);
    assert!(
        s.warnings[0].contains("DeviceTaintRule drain"),
        "{:?}",
        s.warnings
    );
    assert!(
        s.warnings[1].ends_with("): bindingConditions, list-type attributes (DRAListTypeAttributes; a selector that meets such a device fails)"),
        "{:?}",
        s.warnings
    );
}

/// NVIDIA's quickstart at `resource.k8s.io/v1beta1` (`fixtures/dra-v1beta1/`): its templates
/// load as the API server converts them (a request's fields in `exactly`, v1beta1's
/// defaults), and their pods get devices.
#[test]
fn nvidia_v1beta1_templates_load_converted_and_their_pods_get_devices() {
    let s = load_one(&data("v1beta1-scenario.yaml"));
    let dra = &s.config.dra;
    let single = dra.template("gpu-test1", "single-gpu").expect("template");
    let request = &single
        .spec
        .spec
        .devices
        .as_ref()
        .unwrap()
        .requests
        .as_ref()
        .unwrap()[0];
    let exact = request.exactly.as_ref().expect("exactly");
    assert_eq!(exact.device_class_name, "gpu.nvidia.com");
    assert_eq!(
        (exact.allocation_mode.as_deref(), exact.count),
        (Some("ExactCount"), Some(1))
    );
    let mig = dra.template("gpu-test4", "mig-devices").expect("template");
    let devices = mig.spec.spec.devices.as_ref().unwrap();
    assert_eq!(devices.requests.as_ref().unwrap().len(), 4);
    assert_eq!(
        devices.constraints.as_ref().unwrap()[0]
            .match_attribute
            .as_deref(),
        Some("gpu.nvidia.com/parentUUID")
    );
    let report = schedsim::simulate(&s);
    let placed: Vec<(&str, Option<&str>)> = (report.pods.iter())
        .map(|p| (p.name.as_str(), p.node.as_deref()))
        .collect();
    assert_eq!(
        placed,
        [
            ("pod-0", Some("a100-mig-node-0")),
            ("pod1", Some("a100-node-0")),
            ("pod2", Some("a100-node-0")),
        ]
    );
    let sizes: Vec<usize> = report.dra_claims.iter().map(|c| c.devices.len()).collect();
    assert_eq!(sizes.iter().sum::<usize>(), 6, "{sizes:?}");
    assert!(
        sizes.contains(&4),
        "the four MIG devices of one claim: {sizes:?}"
    );
}

/// A ResourceSlice written at `v1beta1` (devices' fields under `basic`) is the slice written at
/// `v1`: NVIDIA's A100 node's slice, both ways.
#[test]
fn a_v1beta1_slice_is_its_v1_slice() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/dra/resourceslice-a100-node.yaml");
    let text = std::fs::read_to_string(&fixture).unwrap();
    let docs = schedsim::yaml::parse_documents(text, &fixture).unwrap();
    let mut v1 = docs.into_iter().find(|d| !d.value.is_null()).unwrap().value;
    let mut v1beta1 = v1.clone();
    v1beta1["apiVersion"] = "resource.k8s.io/v1beta1".into();
    for device in v1beta1["spec"]["devices"].as_array_mut().unwrap() {
        let name = device["name"].clone();
        let mut basic = device.as_object().unwrap().clone();
        basic.remove("name");
        *device = serde_json::json!({"name": name, "basic": basic});
    }
    v1["metadata"]["name"] = "as-v1".into();
    v1beta1["metadata"]["name"] = "as-v1beta1".into();
    let dir = tempdir("v1beta1-slice");
    let scenario = dir.join("s.yaml");
    let objects = serde_json::to_string(&serde_json::json!([v1, v1beta1])).unwrap();
    std::fs::write(&scenario, format!("{SCENARIO_HEAD}    {objects}\n")).unwrap();
    let s = load_one(&scenario);
    let slices = &s.config.dra.slices;
    assert_eq!(slices.len(), 2);
    let mut second = slices[1].clone();
    second.metadata.name = slices[0].metadata.name.clone();
    assert_eq!(slices[0], second);
}
