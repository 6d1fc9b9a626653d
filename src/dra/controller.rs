//! The resourceclaim controller, for the pods of a scenario: a port of kubernetes
//! `pkg/controller/resourceclaim/controller.go` (`syncPod`: `handleClaim` for each pod claim,
//! `findPodResourceClaim`, then `reserveForPod` for a bound pod), with the API server's
//! `generateName` (`staging/src/k8s.io/apiserver/pkg/storage/names/generate.go`).
//!
//! For a pod claim with `resourceClaimTemplateName`, the controller creates a ResourceClaim
//! from the template in the pod's namespace, owned by the pod and annotated with the pod
//! claim's name, and records its name in the pod's `status.resourceClaimStatuses`. A pod
//! claim with `resourceClaimName` names an existing claim, which several pods may share.
//!
//! Names: the API server appends 5 random characters of `bcdfghjklmnpqrstvwxz2456789` to
//! `generateName`. schedsim draws them from a hash of the scenario seed, the pod's namespace
//! and name, the pod claim's name and the template's name, so a scenario gets the same claim
//! names in every run; a name already taken is drawn again, as the controller retries after
//! the API server's `AlreadyExists`. A pod without a UID gets one the same way
//! (`model::generated_names::pod_uid`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PodResourceClaimStatus;
use k8s_openapi::api::resource::v1::{ResourceClaim, ResourceClaimConsumerReference};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

use super::api::RESERVED_FOR_MAX_SIZE;
use super::inventory::Inventory;
use super::resourceclaim::{self, NameError};
use crate::model::Pod;
use crate::model::generated_names::{generated_name, stable_hash};

/// `resourceapi.PodResourceClaimAnnotation`: the pod claim a generated claim is for.
pub const POD_CLAIM_NAME_ANNOTATION: &str = "resource.kubernetes.io/pod-claim-name";
/// The controller's `maxBaseLen`: room for a hyphen and 5 random characters in 63.
const MAX_BASE_LEN: usize = 57;

/// The `generateName` of the claim for pod claim `claim` of pod `pod`: `<pod>-<claim>-`, or,
/// when longer than 57 bytes, both names cut in proportion to their length and joined by one
/// hyphen (`handleClaim`; upstream's cut leaves no trailing hyphen).
pub fn generate_name(pod: &str, claim: &str) -> String {
    let base = format!("{pod}-{claim}-");
    if base.len() <= MAX_BASE_LEN {
        return base;
    }
    let cut = |s: &str| {
        let n = s.len() * MAX_BASE_LEN / base.len();
        s.get(..n).unwrap_or(s).to_string()
    };
    format!("{}-{}", cut(pod), cut(claim))
}

/// A pod claim the controller could not handle (its `FailedResourceClaimCreation` event):
/// the pod keeps no claim for it, and the scheduler's PreEnqueue holds the pod back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub pod_claim: String,
    /// `PodResourceClaim <name>: <error>`, as the event says.
    pub message: String,
}

/// `syncPod`: creates the claims `pod` still needs from their templates and records them in
/// its `status.resourceClaimStatuses`; then, for a bound pod, reserves its allocated claims
/// for it. `seed` draws the names (see the module comment).
pub fn sync_pod(inventory: &mut Inventory, pod: &mut Pod, seed: u64) -> Vec<Failure> {
    let mut failures = Vec::new();
    let mut created: BTreeMap<String, String> = BTreeMap::new();
    for index in 0..pod.resource_claims.len() {
        let pod_claim = pod.resource_claims[index].name.clone();
        match handle_claim(inventory, pod, index, seed) {
            Ok(Some(claim)) => {
                created.insert(pod_claim, claim);
            }
            Ok(None) => {}
            Err(e) => failures.push(Failure {
                message: format!("PodResourceClaim {pod_claim}: {e}"),
                pod_claim,
            }),
        }
    }
    // The controller applies the new entries to the pod's status (a list keyed by name).
    for (name, claim) in created {
        let status = PodResourceClaimStatus {
            name,
            resource_claim_name: Some(claim),
        };
        match (pod.resource_claim_statuses.iter_mut()).find(|s| s.name == status.name) {
            Some(old) => *old = status,
            None => pod.resource_claim_statuses.push(status),
        }
    }
    if pod.node_name.is_some() {
        reserve_for_bound_pod(inventory, pod);
    }
    failures
}

/// `handleClaim`: the claim generated for pod claim `index`, if one had to be found or made.
fn handle_claim(
    inventory: &mut Inventory,
    pod: &Pod,
    index: usize,
    seed: u64,
) -> Result<Option<String>, String> {
    let pod_claim = &pod.resource_claims[index];
    match resourceclaim::name(pod, pod_claim) {
        Err(NameError::NotCreatedYet(_)) => {}
        Err(NameError::Unsupported(m)) => {
            return Err(format!("checking for claim before creating it: {m}"));
        }
        Ok(None) => return Ok(None),
        Ok(Some(name)) => {
            // Recorded in the pod's status: still there and still the pod's? Otherwise it
            // was deleted or replaced, and the controller creates a new one.
            if let Some(claim) = inventory.claim(&pod.namespace, name.name)
                && (!name.must_check_owner || resourceclaim::is_for_pod(pod, claim).is_ok())
            {
                return Ok(None);
            }
        }
    }
    let Some(template_name) = &pod_claim.resource_claim_template_name else {
        return Ok(None);
    };
    if let Some(orphan) = find_pod_resource_claim(inventory, pod, &pod_claim.name) {
        return Ok(Some(orphan));
    }
    let Some(template) = inventory.template(&pod.namespace, template_name) else {
        return Err(format!(
            "resource claim template {template_name:?}: resourceclaimtemplate.resource.k8s.io {template_name:?} not found"
        ));
    };
    let mut annotations = (template.spec.metadata.as_ref())
        .and_then(|m| m.annotations.clone())
        .unwrap_or_default();
    annotations.insert(POD_CLAIM_NAME_ANNOTATION.into(), pod_claim.name.clone());
    let generate_name = generate_name(&pod.name, &pod_claim.name);
    let name = (0u32..)
        .map(|attempt| {
            let attempt = attempt.to_string();
            let hash = stable_hash(&[
                &seed.to_string(),
                &pod.namespace,
                &pod.name,
                &pod_claim.name,
                template_name,
                &attempt,
            ]);
            generated_name(&generate_name, hash)
        })
        .find(|n| inventory.claim(&pod.namespace, n).is_none())
        .expect("some drawn name is free");
    let claim = ResourceClaim {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            generate_name: Some(generate_name),
            namespace: Some(pod.namespace.clone()),
            owner_references: Some(vec![pod_controller_ref(pod)]),
            annotations: Some(annotations),
            labels: (template.spec.metadata.as_ref()).and_then(|m| m.labels.clone()),
            ..ObjectMeta::default()
        },
        spec: template.spec.spec.clone(),
        status: None,
    };
    inventory.insert_claim(claim);
    Ok(Some(name))
}

/// `findPodResourceClaim`: a claim the pod controls (an earlier run of the controller that
/// failed before updating the pod's status) annotated with this pod claim's name.
fn find_pod_resource_claim(inventory: &Inventory, pod: &Pod, pod_claim: &str) -> Option<String> {
    inventory
        .claims_owned_by(&pod.uid)
        .find(|c| {
            (c.metadata.annotations.as_ref())
                .and_then(|a| a.get(POD_CLAIM_NAME_ANNOTATION))
                .is_some_and(|a| a == pod_claim)
        })
        .and_then(|c| c.metadata.name.clone())
}

/// `syncPod` for a pod already on a node: each of its claims that is allocated but not
/// reserved for it gets the pod in `status.reservedFor` (`reserveForPod`), while the claim
/// can take another consumer (`CanBeReserved`).
fn reserve_for_bound_pod(inventory: &mut Inventory, pod: &Pod) {
    let mut reserve = Vec::new();
    for pod_claim in &pod.resource_claims {
        let Ok(Some(name)) = resourceclaim::name(pod, pod_claim) else {
            continue;
        };
        let Some(claim) = inventory.claim(&pod.namespace, name.name) else {
            continue;
        };
        if name.must_check_owner && resourceclaim::is_for_pod(pod, claim).is_err() {
            continue;
        }
        let status = claim.status.as_ref();
        let reserved = status
            .and_then(|s| s.reserved_for.as_ref())
            .map_or(0, Vec::len);
        if status.is_some_and(|s| s.allocation.is_some())
            && !resourceclaim::is_reserved_for_pod(pod, claim)
            && reserved < RESERVED_FOR_MAX_SIZE
        {
            reserve.push(name.name.to_string());
        }
    }
    for name in reserve {
        let Some(mut claim) = inventory.claim(&pod.namespace, &name).cloned() else {
            continue;
        };
        let status = claim.status.get_or_insert_with(Default::default);
        status
            .reserved_for
            .get_or_insert_with(Vec::new)
            .push(ResourceClaimConsumerReference {
                api_group: None,
                resource: "pods".into(),
                name: pod.name.clone(),
                uid: pod.uid.clone(),
            });
        inventory.insert_claim(claim);
    }
}

/// The pod as the controller of a claim made for it (`metav1.NewControllerRef`): the claim
/// goes when the pod goes, and finds its pod by this reference.
pub fn pod_controller_ref(pod: &Pod) -> OwnerReference {
    OwnerReference {
        api_version: "v1".into(),
        kind: "Pod".into(),
        name: pod.name.clone(),
        uid: pod.uid.clone(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_cut_in_proportion() {
        assert_eq!(
            generate_name("trainer-node-0-0", "gpu"),
            "trainer-node-0-0-gpu-"
        );
        // 40 + 1 + 30 + 1 = 72 > 57: 40·57/72 = 31, 30·57/72 = 23.
        let (pod, claim) = ("p".repeat(40), "c".repeat(30));
        assert_eq!(
            generate_name(&pod, &claim),
            format!("{}-{}", "p".repeat(31), "c".repeat(23))
        );
    }
}
