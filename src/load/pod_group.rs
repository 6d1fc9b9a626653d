//! `PodGroup` objects: scheduler-plugins' `scheduling.x-k8s.io/v1alpha1` (Coscheduling) and
//! Volcano's `scheduling.volcano.sh/v1beta1`. Read leniently, as the API server reads them;
//! the fields the gang simulation uses are validated as their CRDs validate them.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;

use crate::model::objects::parse_resource_list;
use crate::model::pod::GangScheduler;
use crate::model::pod_group::PodGroup;
use crate::model::validate::FieldError;

pub const COSCHEDULING_API_VERSION: &str = "scheduling.x-k8s.io/v1alpha1";
pub const VOLCANO_API_VERSION: &str = "scheduling.volcano.sh/v1beta1";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodGroupDoc {
    #[serde(default)]
    pub api_version: String,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: PodGroupSpec,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodGroupSpec {
    #[serde(default)]
    pub min_member: Option<i64>,
    #[serde(default)]
    pub min_resources: Option<BTreeMap<String, Quantity>>,
    /// Coscheduling only: how long members wait at Permit.
    #[serde(default)]
    pub schedule_timeout_seconds: Option<i64>,
}

/// Converts a PodGroup document; errors carry field paths relative to it.
pub fn pod_group(doc: &PodGroupDoc) -> Result<PodGroup, Vec<FieldError>> {
    let mut errs = Vec::new();
    let scheduler = match doc.api_version.as_str() {
        COSCHEDULING_API_VERSION => GangScheduler::Coscheduling,
        VOLCANO_API_VERSION => GangScheduler::Volcano,
        other => {
            errs.push(FieldError {
                path: "apiVersion".into(),
                message: format!(
                    "unsupported apiVersion {other:?} for kind PodGroup (expected {COSCHEDULING_API_VERSION:?} or {VOLCANO_API_VERSION:?})"
                ),
            });
            GangScheduler::Coscheduling
        }
    };
    let name = doc.metadata.name.clone().unwrap_or_default();
    // Both CRDs: `minMember` has minimum 1 (Coscheduling) / 0 (Volcano), default 1.
    let min_member = doc.spec.min_member.unwrap_or(1);
    let floor = if scheduler == GangScheduler::Volcano {
        0
    } else {
        1
    };
    if min_member < floor || min_member > i64::from(i32::MAX) {
        errs.push(FieldError {
            path: "spec.minMember".into(),
            message: format!(
                "Invalid value: {min_member}: spec.minMember in body should be greater than or equal to {floor}"
            ),
        });
    }
    let timeout = doc.spec.schedule_timeout_seconds;
    if timeout.is_some_and(|t| t < 0 || t > i64::from(i32::MAX)) {
        errs.push(FieldError {
            path: "spec.scheduleTimeoutSeconds".into(),
            message: format!(
                "Invalid value: {}: must be a non-negative int32",
                timeout.unwrap_or(0)
            ),
        });
    }
    let min_resources = doc
        .spec
        .min_resources
        .as_ref()
        .map(|r| parse_resource_list(Some(r), "spec.minResources", &mut errs));
    if !errs.is_empty() {
        return Err(errs);
    }
    Ok(PodGroup {
        scheduler,
        namespace: doc
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into()),
        name,
        min_member: min_member as u32,
        min_resources,
        schedule_timeout_seconds: timeout.map(|t| t as u32),
    })
}
