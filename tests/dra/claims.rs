//! Pods and their ResourceClaims (`dra::controller`, the resourceclaim controller run once by
//! the loader over every pod): a claim per pod from a template, named as the controller and
//! the API server name it, the same in every run; shared claims; claims of TrainJob, Job,
//! timeline and bound pods; what already allocated claims hold.

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::PodResourceClaim;
use schedsim::dra::controller::{POD_CLAIM_NAME_ANNOTATION, generate_name};
use schedsim::dra::resourceclaim::{self, NameError};
use schedsim::load::Scenario;
use schedsim::model::Pod;

use super::load::{data, load_one, tempdir};

fn pod<'s>(s: &'s Scenario, name: &str) -> &'s Pod {
    (s.workloads.iter().chain(&s.existing_pods))
        .find(|p| p.name == name)
        .unwrap_or_else(|| panic!("pod {name}"))
}

/// The ResourceClaim pod claim `claim` of `pod` names.
fn claim_of(pod: &Pod, claim: &str) -> String {
    let pc = (pod.resource_claims.iter())
        .find(|c| c.name == claim)
        .expect("pod claim");
    resourceclaim::name(pod, pc)
        .expect("named")
        .expect("a claim")
        .name
        .to_string()
}

#[test]
fn each_pod_gets_its_own_claim_from_a_template_and_shares_a_named_one() {
    let s = load_one(&data("fixtures-scenario.yaml"));
    let dra = &s.config.dra;
    let (t0, t1) = (pod(&s, "trainer-0"), pod(&s, "trainer-1"));
    let (c0, c1) = (claim_of(t0, "gpu"), claim_of(t1, "gpu"));
    assert_ne!(c0, c1);
    for (p, name) in [(t0, &c0), (t1, &c1)] {
        // `<pod>-<pod claim>-` and 5 characters of the API server's alphabet.
        let prefix = format!("{}-gpu-", p.name);
        let suffix = name.strip_prefix(&prefix).expect("generateName prefix");
        assert_eq!(suffix.len(), 5, "{name}");
        assert!(
            suffix
                .bytes()
                .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b))
        );
        let claim = dra.claim("team-a", name).expect("generated claim");
        assert_eq!(
            claim.metadata.generate_name.as_deref(),
            Some(prefix.as_str())
        );
        assert_eq!(
            claim.metadata.annotations.as_ref().unwrap()[POD_CLAIM_NAME_ANNOTATION],
            "gpu"
        );
        let owner = &claim.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.name.as_str(), owner.controller),
            ("Pod", p.name.as_str(), Some(true))
        );
        assert_eq!(owner.uid, p.uid);
        assert!(resourceclaim::is_for_pod(p, claim).is_ok());
        // The template's claim spec, defaulted.
        let template = dra.template("team-a", "one-h100").unwrap();
        assert_eq!(claim.spec, template.spec.spec);
        assert!(claim.status.is_none());
    }
    // Not each other's.
    assert!(resourceclaim::is_for_pod(t1, dra.claim("team-a", &c0).unwrap()).is_err());
    // Both notebooks name the one shared claim; no claim is generated for them.
    for p in ["notebook-0", "notebook-1"] {
        assert_eq!(claim_of(pod(&s, p), "mig"), "shared-mig");
        assert!(pod(&s, p).resource_claim_statuses.is_empty());
    }
    assert_eq!(dra.claims().count(), 3);
    let uids: BTreeSet<&str> = s.workloads.iter().map(|p| p.uid.as_str()).collect();
    assert_eq!(uids.len(), s.workloads.len());
}

#[test]
fn claim_names_are_the_same_in_every_run_and_follow_the_seed() {
    let names = |s: &Scenario| -> Vec<String> {
        ["trainer-0", "trainer-1"]
            .iter()
            .map(|p| claim_of(pod(s, p), "gpu"))
            .collect()
    };
    let first = names(&load_one(&data("fixtures-scenario.yaml")));
    assert_eq!(first, names(&load_one(&data("fixtures-scenario.yaml"))));
    let dir = tempdir("seed");
    let text = std::fs::read_to_string(data("fixtures-scenario.yaml"))
        .unwrap()
        .replace("seed: 7", "seed: 8")
        .replace(
            "../../../fixtures/dra",
            &format!("{}/fixtures/dra", env!("CARGO_MANIFEST_DIR")),
        );
    std::fs::write(dir.join("s.yaml"), text).unwrap();
    let other = names(&load_one(&dir.join("s.yaml")));
    assert_ne!(first, other);
}

#[test]
fn long_names_are_cut_in_proportion_before_the_suffix() {
    let (pod_name, claim) = ("p".repeat(50), "c".repeat(20));
    // 50 + 1 + 20 + 1 = 72 > 57: 50·57/72 = 39, 20·57/72 = 15.
    let base = generate_name(&pod_name, &claim);
    assert_eq!(base, format!("{}-{}", "p".repeat(39), "c".repeat(15)));
    let dir = tempdir("long");
    std::fs::write(
        dir.join("s.yaml"),
        format!(
            r#"apiVersion: schedsim.io/v1alpha1
kind: Scenario
metadata: {{name: s}}
spec:
  objects:
  - apiVersion: resource.k8s.io/v1
    kind: ResourceClaimTemplate
    metadata: {{name: t}}
    spec: {{spec: {{devices: {{requests: [{{name: r, exactly: {{deviceClassName: gpu.example.com}}}}]}}}}}}
  workloads:
  - apiVersion: v1
    kind: Pod
    metadata: {{name: {pod_name}}}
    spec:
      containers: [{{name: main, image: busybox}}]
      resourceClaims: [{{name: {claim}, resourceClaimTemplateName: t}}]
"#
        ),
    )
    .unwrap();
    let s = load_one(&dir.join("s.yaml"));
    let name = claim_of(&s.workloads[0], &claim);
    assert_eq!(name.len(), base.len() + 5);
    assert!(name.starts_with(&base) && name.len() <= 63, "{name}");
    assert!(s.config.dra.claim("default", &name).is_some());
}

#[test]
fn trainjob_job_timeline_and_bound_pods_get_their_claims() {
    let s = load_one(&data("trainjob-claims.yaml"));
    let dra = &s.config.dra;
    // The runtimePatches entry added the pod claim to both trainer pods.
    let trainers: Vec<&Pod> = (s.workloads.iter())
        .filter(|p| p.workload.as_deref() == Some("llama"))
        .collect();
    assert_eq!(trainers.len(), 2);
    let mut generated = BTreeSet::new();
    for p in trainers
        .iter()
        .copied()
        .chain((s.workloads.iter()).filter(|p| p.name.starts_with("eval-") || p.name == "late"))
    {
        assert_eq!(
            p.resource_claims,
            [PodResourceClaim {
                name: "gpus".into(),
                resource_claim_template_name: Some("eight-gpus".into()),
                ..Default::default()
            }],
            "{}",
            p.name
        );
        let name = claim_of(p, "gpus");
        assert!(name.starts_with(&format!("{}-gpus-", p.name)), "{name}");
        let claim = dra.claim("team-a", &name).expect("generated");
        assert_eq!(claim.metadata.labels.as_ref().unwrap()["team"], "a");
        assert_eq!(
            claim.metadata.annotations.as_ref().unwrap()["note"],
            "from-template"
        );
        generated.insert(name);
    }
    assert_eq!(generated.len(), 5); // 2 trainers, 2 Job pods, the timeline's pod
    let baseline = s.baseline.as_ref().expect("the TrainJobs have overrides");
    let base = |name: &str| baseline.pods.iter().find(|p| p.name == name).unwrap();
    // llama's runtime-only baseline has no claims: the override added them.
    assert!(base("llama-node-0-0").resource_claims.is_empty());
    // mistral's runtime has the claim: its baseline pods are the same pods (same UIDs) and
    // find the claims made for them (the controller's findPodResourceClaim), not new ones.
    for name in ["mistral-node-0-0", "mistral-node-0-1"] {
        let (with, without) = (pod(&s, name), base(name));
        assert_eq!(with.uid, without.uid);
        assert_eq!(claim_of(with, "gpus"), claim_of(without, "gpus"));
        assert!(claim_of(with, "gpus").starts_with(&format!("{name}-gpus-")));
    }
    assert_eq!(dra.claims().count(), 8);
    // The bound pod's allocated claim is now reserved for it (the controller's reserveForPod),
    // and its devices are held, except the one allocated with admin access.
    let running = pod(&s, "running");
    assert_eq!(running.uid, "3f4e1c2a-9b7d-4e2f-8a1b-2c3d4e5f6a7b");
    let shared = dra.claim("team-a", "running-gpus").unwrap();
    assert!(resourceclaim::is_reserved_for_pod(running, shared));
    let held: BTreeSet<String> = (dra.allocated_devices().into_iter())
        .map(|(driver, pool, device)| format!("{driver}/{pool}/{device}"))
        .collect();
    assert_eq!(
        held,
        BTreeSet::from([
            "gpu.nvidia.com/h100-node-0/gpu-0".to_string(),
            "gpu.nvidia.com/h100-node-0/gpu-1".to_string(),
        ])
    );
}

#[test]
fn missing_templates_and_unallocated_claims_of_bound_pods_are_warnings() {
    let dir = tempdir("missing");
    std::fs::write(
        dir.join("s.yaml"),
        r#"apiVersion: schedsim.io/v1alpha1
kind: Scenario
metadata: {name: s}
spec:
  nodes:
  - apiVersion: v1
    kind: Node
    metadata: {name: n-0}
    status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
  objects:
  - apiVersion: resource.k8s.io/v1
    kind: ResourceClaimTemplate
    metadata: {name: t}
    spec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu.example.com}}]}}}
  - apiVersion: resource.k8s.io/v1
    kind: ResourceClaim
    metadata:
      name: mine
      annotations: {resource.kubernetes.io/pod-claim-name: r}
      ownerReferences:
      - {apiVersion: v1, kind: Pod, name: recorded, uid: 11111111-2222-4333-8444-555555555555, controller: true}
    spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu.example.com}}]}}
  existingPods:
  - apiVersion: v1
    kind: Pod
    metadata: {name: bound}
    spec:
      nodeName: n-0
      containers: [{name: main, image: busybox}]
      resourceClaims: [{name: r, resourceClaimTemplateName: t}]
  workloads:
  - apiVersion: v1
    kind: Pod
    metadata: {name: orphan}
    spec:
      containers: [{name: main, image: busybox}]
      resourceClaims: [{name: r, resourceClaimTemplateName: missing}]
  - apiVersion: v1
    kind: Pod
    metadata: {name: recorded, uid: 11111111-2222-4333-8444-555555555555}
    spec:
      containers: [{name: main, image: busybox}]
      resourceClaims: [{name: r, resourceClaimTemplateName: t}]
    status:
      resourceClaimStatuses: [{name: r, resourceClaimName: mine}]
"#,
    )
    .unwrap();
    let s = load_one(&dir.join("s.yaml"));
    // The missing template leaves the pod claim unresolved, as upstream's PreEnqueue sees it.
    let orphan = pod(&s, "orphan");
    assert!(orphan.resource_claim_statuses.is_empty());
    assert_eq!(
        resourceclaim::name(orphan, &orphan.resource_claims[0]),
        Err(NameError::NotCreatedYet(
            "pod \"default/orphan\": ResourceClaim not created yet".into()
        ))
    );
    // A pod whose status already names its claim keeps it: nothing new is generated.
    assert_eq!(claim_of(pod(&s, "recorded"), "r"), "mine");
    // The bound pod got a claim, unallocated.
    let bound = claim_of(pod(&s, "bound"), "r");
    assert!(bound.starts_with("bound-r-"));
    assert_eq!(s.config.dra.claims().count(), 2);
    let warnings = s.warnings.join("\n");
    for expected in [
        "1 pod claim(s) got no ResourceClaim from the resourceclaim controller (FailedResourceClaimCreation), such as pod default/orphan (",
        "): PodResourceClaim r: resource claim template \"missing\": resourceclaimtemplate.resource.k8s.io \"missing\" not found (kube-scheduler holds such pods back until their claims exist)",
        "1 claim(s) of bound pods hold no devices, such as pod default/bound (",
        &format!("), pod claim r: its ResourceClaim default/{bound} is not allocated"),
    ] {
        assert!(
            warnings.contains(expected),
            "missing {expected:?} in:\n{warnings}"
        );
    }
}
