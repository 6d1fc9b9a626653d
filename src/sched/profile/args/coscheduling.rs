//! scheduler-plugins' `CoschedulingArgs` (`apis/config/v1/types.go`).

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::*;
use crate::error::InputError;
use crate::yaml::Document;

/// scheduler-plugins' `CoschedulingArgs` (`apis/config/v1/types.go`); the kube-client fields
/// are read and ignored.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawCoschedulingArgs {
    pub(super) api_version: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) permit_waiting_time_seconds: Option<i64>,
    pub(super) pod_group_backoff_seconds: Option<i64>,
    pub(super) pod_group_reject_percentage: Option<i64>,
    /// Removed in newer releases; older configs carry it.
    #[serde(rename = "deniedPGExpirationTimeSeconds")]
    pub(super) denied_pg_expiration_time_seconds: Option<i64>,
    #[allow(dead_code)]
    pub(super) kube_master: Option<String>,
    #[allow(dead_code)]
    pub(super) kube_config_path: Option<String>,
}

/// scheduler-plugins' `New`: a negative (or, here, past-u32) duration is an error.
pub(super) fn apply(
    doc: &Document,
    file: &Path,
    path: &str,
    value: &Value,
    args: &mut Args,
) -> Result<(), InputError> {
    let raw: RawCoschedulingArgs = doc.decode(file, path, value)?;
    check_type_meta(doc, file, path, "Coscheduling", &raw.api_version, &raw.kind)?;
    for (field, v) in [
        ("permitWaitingTimeSeconds", raw.permit_waiting_time_seconds),
        ("podGroupBackoffSeconds", raw.pod_group_backoff_seconds),
        (
            "deniedPGExpirationTimeSeconds",
            raw.denied_pg_expiration_time_seconds,
        ),
    ] {
        if let Some(t) = v.filter(|t| *t < 0 || *t > i64::from(u32::MAX)) {
            return Err(doc.error(
                file,
                &format!("{path}.{field}"),
                invalid(t, "must be a non-negative number of seconds"),
            ));
        }
    }
    // `ValidateCoschedulingArgs` (apis/config/validation/validation_pluginargs.go).
    if let Some(p) = raw
        .pod_group_reject_percentage
        .filter(|p| !(0..=100).contains(p))
    {
        return Err(doc.error(
            file,
            &format!("{path}.podGroupRejectPercentage"),
            invalid(p, "must be between 0 and 100"),
        ));
    }
    args.permit_waiting_seconds = raw.permit_waiting_time_seconds.map(|t| t as u32);
    args.pod_group_backoff_seconds = raw.pod_group_backoff_seconds.unwrap_or(0) as u32;
    if let Some(p) = raw.pod_group_reject_percentage {
        args.pod_group_reject_percentage = p as u32;
    }
    Ok(())
}
