//! `DefaultPreemptionArgs` (`ValidateDefaultPreemptionArgs`).

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::*;
use crate::error::InputError;
use crate::sched::framework::names;
use crate::yaml::Document;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawDefaultPreemptionArgs {
    pub(super) api_version: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) min_candidate_nodes_percentage: Option<i32>,
    pub(super) min_candidate_nodes_absolute: Option<i32>,
}

/// `ValidateDefaultPreemptionArgs` (with `SetDefaults_DefaultPreemptionArgs`: 10 %, 100).
pub(super) fn validate_preemption_args(
    doc: &Document,
    file: &Path,
    path: &str,
    raw: &RawDefaultPreemptionArgs,
) -> Result<PreemptionArgs, InputError> {
    let defaults = PreemptionArgs::default();
    let pct =
        (raw.min_candidate_nodes_percentage).unwrap_or(defaults.min_candidate_nodes_percentage);
    let abs = (raw.min_candidate_nodes_absolute).unwrap_or(defaults.min_candidate_nodes_absolute);
    let pct_path = format!("{path}.minCandidateNodesPercentage");
    let abs_path = format!("{path}.minCandidateNodesAbsolute");
    if !(0..=100).contains(&pct) {
        return Err(doc.error(file, &pct_path, invalid(pct, "not in valid range [0, 100]")));
    }
    if abs < 0 {
        return Err(doc.error(file, &abs_path, invalid(abs, "not in valid range [0, inf)")));
    }
    if pct == 0 && abs == 0 {
        return Err(doc.error(
            file,
            &pct_path,
            invalid(
                pct,
                "cannot be zero at the same time as minCandidateNodesAbsolute",
            ),
        ));
    }
    Ok(PreemptionArgs {
        min_candidate_nodes_percentage: pct,
        min_candidate_nodes_absolute: abs,
    })
}

pub(super) fn apply(
    doc: &Document,
    file: &Path,
    path: &str,
    value: &Value,
    args: &mut Args,
) -> Result<(), InputError> {
    let raw: RawDefaultPreemptionArgs = doc.decode(file, path, value)?;
    check_type_meta(
        doc,
        file,
        path,
        names::DEFAULT_PREEMPTION,
        &raw.api_version,
        &raw.kind,
    )?;
    args.preemption = validate_preemption_args(doc, file, path, &raw)?;
    Ok(())
}
