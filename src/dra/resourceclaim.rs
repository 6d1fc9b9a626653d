//! Which ResourceClaim a pod's claim names, and whether a claim belongs to or is reserved for
//! a pod: a port of kubernetes
//! `staging/src/k8s.io/dynamic-resource-allocation/resourceclaim/resourceclaim.go` (`Name`,
//! `IsForPod`, `IsReservedForPod`), which the resourceclaim controller and the scheduler's
//! DynamicResources plugin both use.

use k8s_openapi::api::core::v1::PodResourceClaim;
use k8s_openapi::api::resource::v1::ResourceClaim;

use crate::model::Pod;

/// `resourceclaim.ErrClaimNotFound`.
pub const ERR_CLAIM_NOT_FOUND: &str = "ResourceClaim not created yet";
/// `resourceclaim.ErrAPIUnsupported`.
pub const ERR_API_UNSUPPORTED: &str = "none of the supported fields are set";

/// The ResourceClaim a pod claim refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClaimName<'p> {
    pub name: &'p str,
    /// The claim was generated for the pod: [`is_for_pod`] must hold before it is used.
    pub must_check_owner: bool,
}

/// Why a pod claim names no ResourceClaim yet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameError {
    /// A template claim the controller has not generated a claim for (`ErrClaimNotFound`).
    NotCreatedYet(String),
    /// Neither `resourceClaimName` nor `resourceClaimTemplateName` (`ErrAPIUnsupported`).
    Unsupported(String),
}

impl NameError {
    /// Upstream's error text.
    pub fn message(&self) -> &str {
        match self {
            NameError::NotCreatedYet(m) | NameError::Unsupported(m) => m,
        }
    }
}

/// `resourceclaim.Name`: the claim named by `resourceClaimName`, or the one
/// `status.resourceClaimStatuses` records for a template claim. `Ok(None)`: the controller
/// recorded that no claim is needed, and the pod claim is ignored.
pub fn name<'p>(
    pod: &'p Pod,
    claim: &'p PodResourceClaim,
) -> Result<Option<ClaimName<'p>>, NameError> {
    if let Some(name) = &claim.resource_claim_name {
        return Ok(Some(ClaimName {
            name,
            must_check_owner: false,
        }));
    }
    if claim.resource_claim_template_name.is_some() {
        return match pod
            .resource_claim_statuses
            .iter()
            .find(|s| s.name == claim.name)
        {
            Some(status) => Ok(status.resource_claim_name.as_deref().map(|name| ClaimName {
                name,
                must_check_owner: true,
            })),
            None => Err(NameError::NotCreatedYet(format!(
                "pod \"{}/{}\": {ERR_CLAIM_NOT_FOUND}",
                pod.namespace, pod.name
            ))),
        };
    }
    Err(NameError::Unsupported(format!(
        "pod \"{}/{}\", spec.resourceClaim {:?}: {ERR_API_UNSUPPORTED}",
        pod.namespace, pod.name, claim.name
    )))
}

/// `metav1.IsControlledBy`: the claim's controller owner reference is the pod (by UID).
fn controlled_by(claim: &ResourceClaim, pod: &Pod) -> bool {
    (claim.metadata.owner_references.iter().flatten())
        .find(|r| r.controller == Some(true))
        .is_some_and(|r| r.uid == pod.uid)
}

/// `resourceclaim.IsForPod`: a claim generated for the pod is in its namespace and controlled
/// by it.
pub fn is_for_pod(pod: &Pod, claim: &ResourceClaim) -> Result<(), String> {
    let namespace = claim.metadata.namespace.as_deref().unwrap_or("");
    if namespace != pod.namespace || !controlled_by(claim, pod) {
        return Err(format!(
            "ResourceClaim {namespace}/{} was not created for pod {}/{} (pod is not owner)",
            claim.metadata.name.as_deref().unwrap_or(""),
            pod.namespace,
            pod.name
        ));
    }
    Ok(())
}

/// `resourceclaim.IsReservedForPod`: the claim's `status.reservedFor` lists the pod's UID.
pub fn is_reserved_for_pod(pod: &Pod, claim: &ResourceClaim) -> bool {
    (claim.status.iter())
        .flat_map(|s| s.reserved_for.iter().flatten())
        .any(|r| r.uid == pod.uid)
}
