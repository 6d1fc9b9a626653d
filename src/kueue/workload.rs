//! Kueue `Workload` objects as `kubectl get workloads.kueue.x-k8s.io -A -o yaml` prints them:
//! the workloads already admitted when the simulation starts. One with a quota reservation
//! holds its admission's usage (and may be preempted); the others hold nothing. Read
//! leniently, as the API server reads them; the fields follow kubernetes-sigs/kueue
//! `apis/kueue/v1beta{1,2}/workload_types.go` (`spec.priority`, `status.admission`
//! {clusterQueue, podSetAssignments [{flavors, resourceUsage}]}, `status.conditions`), and
//! the usage is what `workload.Info` charges: per pod set, each resource's `resourceUsage`
//! on its assigned flavor.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};
use serde::Deserialize;

use super::admission::Admitted;
use super::api::safe_value;
use crate::model::quantity::Quantity;
use crate::model::resources;
use crate::model::validate::FieldError;

/// What schedsim reads of a Workload object.
#[derive(Debug, Clone)]
pub struct WorkloadObject {
    /// The quota it holds, when Kueue reserved quota for it and it has not finished.
    pub admitted: Option<Admitted>,
    /// Its `namespace/name`.
    pub key: String,
}

#[derive(Deserialize)]
struct Doc {
    #[serde(default)]
    metadata: ObjectMeta,
    #[serde(default)]
    spec: Spec,
    #[serde(default)]
    status: Status,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Spec {
    #[serde(default)]
    priority: Option<i32>,
    #[serde(default)]
    queue_name: Option<String>,
}

#[derive(Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Status {
    #[serde(default)]
    admission: Option<AdmissionSpec>,
    #[serde(default)]
    conditions: Vec<Condition>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct AdmissionSpec {
    #[serde(default)]
    cluster_queue: String,
    #[serde(default)]
    pod_set_assignments: Vec<PodSetAssignmentSpec>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PodSetAssignmentSpec {
    #[serde(default)]
    flavors: BTreeMap<String, String>,
    #[serde(default)]
    resource_usage: BTreeMap<String, K8sQuantity>,
}

/// Whether the condition of that type is `True`, and since when (seconds since the epoch).
fn condition(conditions: &[Condition], kind: &str) -> Option<i64> {
    (conditions.iter())
        .find(|c| c.type_ == kind && c.status == "True")
        .map(|c| c.last_transition_time.0.as_second())
}

/// Decodes a Workload object.
pub fn workload_object(value: &serde_json::Value) -> Result<WorkloadObject, Vec<FieldError>> {
    let refused = super::validation::check("Workload", value);
    if !refused.is_empty() {
        return Err(refused);
    }
    let d: Doc = serde_json::from_value(value.clone())
        .map_err(|e| vec![FieldError::new("", e.to_string())])?;
    let name = d.metadata.name.clone().unwrap_or_default();
    if name.is_empty() {
        return Err(vec![FieldError::new(
            "metadata.name",
            "Required value".into(),
        )]);
    }
    let namespace = (d.metadata.namespace.clone()).unwrap_or_else(|| "default".into());
    let owner = (d.metadata.owner_references.iter().flatten())
        .find(|o| o.controller == Some(true))
        .or_else(|| d.metadata.owner_references.iter().flatten().next())
        .map(|o| (o.kind.clone(), o.name.clone()));
    let reserved = condition(&d.status.conditions, "QuotaReserved");
    let finished = condition(&d.status.conditions, "Finished").is_some();
    let admitted = match (&d.status.admission, reserved) {
        (Some(a), Some(reserved)) if !finished && !a.cluster_queue.is_empty() => {
            let mut usage: BTreeMap<(String, String), i64> = BTreeMap::new();
            for (i, ps) in a.pod_set_assignments.iter().enumerate() {
                for (resource, flavor) in &ps.flavors {
                    let Some(q) = ps.resource_usage.get(resource) else {
                        continue;
                    };
                    let q: Quantity = q.0.parse().map_err(|e| {
                        vec![FieldError::new(
                            &format!(
                                "status.admission.podSetAssignments[{i}].resourceUsage.{resource}"
                            ),
                            format!("{e}"),
                        )]
                    })?;
                    let v = safe_value(&q, resource == resources::CPU);
                    let e = usage.entry((flavor.clone(), resource.clone())).or_insert(0);
                    *e = e.saturating_add(v);
                }
            }
            let created =
                (d.metadata.creation_timestamp.as_ref()).map_or(reserved, |t| t.0.as_second());
            Some(Admitted {
                namespace: namespace.clone(),
                name: name.clone(),
                cluster_queue: a.cluster_queue.clone(),
                queue_name: d.spec.queue_name.clone().unwrap_or_default(),
                priority: d.spec.priority.unwrap_or(0),
                created,
                reserved,
                evicted: condition(&d.status.conditions, "Evicted").is_some(),
                usage,
                owner: owner.clone(),
            })
        }
        _ => None,
    };
    Ok(WorkloadObject {
        admitted,
        key: format!("{namespace}/{name}"),
    })
}
