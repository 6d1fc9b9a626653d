//! What the API server refuses of Kueue's objects at create, in its order: the CRD's schema and
//! CEL rules ([`crd`]), then — only when they pass, as the validating admission webhook runs
//! after the object is validated — Kueue's webhook ([`webhooks`]). Both read the object as
//! written (JSON); `kueue::api` decodes it only once it is accepted.
//!
//! Versions: kubernetes-sigs/kueue at v0.20 (main), its CRDs for v1beta1 and v1beta2 and its
//! webhooks with their default feature gates. LocalQueue, Cohort and WorkloadPriorityClass
//! have no webhook rule beyond their CRD's on create (LocalQueue's `clusterQueue`
//! immutability applies to updates, which a scenario never makes).

pub mod crd;
mod webhooks;

use serde_json::Value;

use crate::model::crd::CrdCheck;
use crate::model::validate::FieldError;
use crd::Version;

/// The errors creating a Kueue object of `kind` would give (empty: accepted): the CRD's, or
/// when the CRD accepts it, the webhook's.
pub fn check(kind: &str, value: &Value) -> Vec<FieldError> {
    let refused = crd_errors(kind, value);
    if !refused.is_empty() {
        return refused;
    }
    webhook_errors(kind, value)
}

fn version(value: &Value) -> Version {
    match value.get("apiVersion").and_then(Value::as_str) {
        Some("kueue.x-k8s.io/v1beta1") => Version::V1beta1,
        _ => Version::V1beta2,
    }
}

/// What the CRD's schema and CEL rules refuse.
pub fn crd_errors(kind: &str, value: &Value) -> Vec<FieldError> {
    let version = version(value);
    let spec = value.get("spec").unwrap_or(&Value::Null);
    let mut c = CrdCheck::new();
    match kind {
        "ClusterQueue" => crd::cluster_queue(spec, version, &mut c),
        "Cohort" => crd::cohort(spec, &mut c),
        "LocalQueue" => crd::local_queue(spec, &mut c),
        "ResourceFlavor" => crd::resource_flavor(spec, &mut c),
        "WorkloadPriorityClass" => crd::workload_priority_class(value, &mut c),
        "Workload" => crd::workload(value, version, &mut c),
        _ => {}
    }
    c.finish()
}

/// What Kueue's validating webhook refuses (of an object its CRD accepted).
pub fn webhook_errors(kind: &str, value: &Value) -> Vec<FieldError> {
    let spec = value.get("spec").unwrap_or(&Value::Null);
    match kind {
        "ClusterQueue" => {
            let cohort = match version(value) {
                Version::V1beta1 => "cohort",
                Version::V1beta2 => "cohortName",
            };
            let has_cohort = spec
                .get(cohort)
                .and_then(Value::as_str)
                .is_some_and(|c| !c.is_empty());
            webhooks::cluster_queue(spec, has_cohort)
        }
        "Cohort" => webhooks::cohort(spec),
        "ResourceFlavor" => webhooks::resource_flavor(spec),
        "Workload" => webhooks::workload(value),
        _ => Vec::new(),
    }
}
