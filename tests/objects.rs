//! `spec.objects`: Kubernetes objects of any supported kind, routed by apiVersion and kind to
//! the stores the typed fields fill — from folders, `List` dumps and multi-document files.

mod common;

use std::path::PathBuf;

use common::cli::schedsim;
use schedsim::load::{LoadOptions, load_files};

fn load(file: &str) -> schedsim::load::Loaded {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(file);
    load_files(&[path], &LoadOptions::default())
}

#[test]
fn a_folder_of_dumps_loads_as_the_typed_fields_do() {
    let routed = load("tests/data/objects/cluster/objects-scenario.yaml");
    let typed = load("tests/data/objects/typed.yaml");
    assert!(routed.errors.is_empty(), "{:?}", routed.errors);
    assert!(typed.errors.is_empty(), "{:?}", typed.errors);
    let (a, b) = (&routed.scenarios[0], &typed.scenarios[0]);
    assert_eq!(a.nodes, b.nodes);
    // The bound pod is an existing pod, the pending ones are workloads (the folder's in
    // path order, then the inline one), the Succeeded one is left out.
    assert_eq!(a.existing_pods, b.existing_pods);
    assert_eq!(a.workloads, b.workloads);
    assert_eq!(a.steps, b.steps);
    assert_eq!(a.config.namespaces, b.config.namespaces);
    assert_eq!(
        a.warnings,
        [
            "spec.objects: 1 pod in phase Succeeded or Failed left out: kube-scheduler does not see terminal pods"
        ]
    );
    let (ra, rb) = (schedsim::simulate(a), schedsim::simulate(b));
    let placed =
        |r: &schedsim::report::ScenarioReport| serde_json::to_value(&r.pods).unwrap().to_string();
    assert_eq!(placed(&ra), placed(&rb));
    // The priority class reached the pods through spec.objects.
    assert!(
        a.workloads
            .iter()
            .any(|p| p.name == "finetune-0" && p.priority == 1000)
    );
}

#[test]
fn objects_of_unknown_kinds_or_versions_are_errors_with_positions() {
    let out = schedsim(&["run", "tests/data/objects/bad-objects.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    for expected in [
        "bad-objects.yaml:8:11: spec.objects[0].kind: schedsim does not read objects of kind \"Nod\" (did you mean \"Node\"?); spec.objects takes Node, Pod,",
        "bad-objects.yaml:10:17: spec.objects[1].apiVersion: no matches for kind \"Node\" in version \"v2\" (schedsim reads it at v1)",
        "bad-objects.yaml:13:5: spec.objects[2].kind: kind not set",
        "bad-objects.yaml:15:5: spec.objects[3].apiVersion: apiVersion not set",
        "bad-objects.yaml:18:11: spec.objects[4].kind: schedsim does not read objects of kind \"CronJob\"; spec.objects takes Node, Pod,",
        "bad-objects.yaml:20:17: spec.objects[5].apiVersion: no matches for kind \"Deployment\" in version \"apps/v1beta1\" (schedsim reads it at apps/v1); Kubernetes 1.16 stopped serving Deployment at apps/v1beta1",
    ] {
        assert!(
            stderr.contains(expected),
            "missing {expected:?} in:\n{stderr}"
        );
    }
}

#[test]
fn a_bad_object_in_a_referenced_file_names_that_file() {
    let dir = common::cli::tempdir("objects-bad-file");
    std::fs::write(
        dir.join("s.yaml"),
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  objects:\n  - file: more.yaml\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("more.yaml"),
        "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Sevice\nmetadata: {name: b}\n",
    )
    .unwrap();
    let s = dir.join("s.yaml");
    let out = schedsim(&["run", s.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("more.yaml:6:7: kind: schedsim does not read objects of kind \"Sevice\""),
        "{stderr}"
    );
}

/// Pods that use DRA claims load without a warning and are scheduled by DynamicResources: a
/// claim whose device class does not exist keeps its pod pending with PreFilter's reason.
#[test]
fn pods_with_resource_claims_are_checked_by_dynamic_resources() {
    let loaded = load("tests/data/objects/resource-claims.yaml");
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let s = &loaded.scenarios[0];
    let claims: Vec<usize> = s
        .workloads
        .iter()
        .map(|p| p.resource_claims.len())
        .collect();
    assert_eq!(claims, [0, 1]);
    assert!(s.warnings.is_empty(), "{:?}", s.warnings);
    let r = schedsim::simulate(s);
    let messages: Vec<&str> = r.pods.iter().map(|p| p.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "",
            "0/1 nodes are available: request gpu: device class gpu.nvidia.com does not exist. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
        ]
    );
}
