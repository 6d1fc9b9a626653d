//! `InterPodAffinityArgs` (`ValidateInterPodAffinityArgs`).

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::*;
use crate::error::InputError;
use crate::sched::framework::names;
use crate::yaml::Document;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawInterPodAffinityArgs {
    pub(super) api_version: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) hard_pod_affinity_weight: Option<i32>,
    #[serde(default)]
    pub(super) ignore_preferred_terms_of_existing_pods: bool,
}

/// `ValidateInterPodAffinityArgs`; `SetDefaults_InterPodAffinityArgs` (weight 1).
pub(super) fn apply(
    doc: &Document,
    file: &Path,
    path: &str,
    value: &Value,
    args: &mut Args,
) -> Result<(), InputError> {
    let raw: RawInterPodAffinityArgs = doc.decode(file, path, value)?;
    check_type_meta(
        doc,
        file,
        path,
        names::INTER_POD_AFFINITY,
        &raw.api_version,
        &raw.kind,
    )?;
    let w = raw.hard_pod_affinity_weight.unwrap_or(1);
    if !(0..=100).contains(&w) {
        return Err(doc.error(
            file,
            &format!("{path}.hardPodAffinityWeight"),
            invalid(w, "not in valid range [0, 100]"),
        ));
    }
    args.hard_pod_affinity_weight = i64::from(w);
    args.ignore_preferred_terms_of_existing_pods = raw.ignore_preferred_terms_of_existing_pods;
    Ok(())
}
