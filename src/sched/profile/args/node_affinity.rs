//! `NodeAffinityArgs` (`ValidateNodeAffinityArgs`).

use std::path::Path;

use k8s_openapi::api::core::v1::{Container, NodeAffinity, NodeSelectorTerm, PodSpec};
use serde::Deserialize;
use serde_json::Value;

use super::*;
use crate::error::InputError;
use crate::features::FeatureGates;
use crate::model::validate::validate_pod_spec;
use crate::sched::framework::names;
use crate::yaml::Document;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawNodeAffinityArgs {
    pub(super) api_version: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) added_affinity: Option<NodeAffinity>,
}

/// `ValidateNodeAffinityArgs`: the required node selector and the preferred terms must parse
/// (`nodeaffinity.NewNodeSelector`, `NewPreferredSchedulingTerms`; terms of weight 0 are
/// skipped). Checked with the API server's node-selector validation.
pub(super) fn validate_added_affinity(
    doc: &Document,
    file: &Path,
    path: &str,
    affinity: &NodeAffinity,
) -> Result<(), InputError> {
    let mut affinity = affinity.clone();
    for term in affinity
        .preferred_during_scheduling_ignored_during_execution
        .iter_mut()
        .flatten()
    {
        if term.weight == 0 {
            term.preference = NodeSelectorTerm::default();
        }
        term.weight = 1;
    }
    const PREFIX: &str = "\u{0}";
    let spec = PodSpec {
        containers: vec![Container {
            name: "c".into(),
            image: Some("i".into()),
            ..Default::default()
        }],
        affinity: Some(k8s_openapi::api::core::v1::Affinity {
            node_affinity: Some(affinity),
            ..Default::default()
        }),
        ..Default::default()
    };
    let mut errs = Vec::new();
    validate_pod_spec(
        &spec,
        &Default::default(),
        PREFIX,
        &FeatureGates::default(),
        &mut errs,
    );
    match errs.into_iter().next() {
        None => Ok(()),
        Some(e) => {
            let rest = e
                .path
                .strip_prefix(&format!("{PREFIX}.affinity.nodeAffinity"))
                .unwrap_or("");
            Err(doc.error(file, &format!("{path}{rest}"), e.message))
        }
    }
}

pub(super) fn apply(
    doc: &Document,
    file: &Path,
    path: &str,
    value: &Value,
    args: &mut Args,
) -> Result<(), InputError> {
    let raw: RawNodeAffinityArgs = doc.decode(file, path, value)?;
    check_type_meta(
        doc,
        file,
        path,
        names::NODE_AFFINITY,
        &raw.api_version,
        &raw.kind,
    )?;
    if let Some(affinity) = &raw.added_affinity {
        validate_added_affinity(doc, file, &format!("{path}.addedAffinity"), affinity)?;
    }
    args.added_affinity = raw.added_affinity;
    Ok(())
}
