//! `PodTopologySpreadArgs` (`ValidatePodTopologySpreadArgs`, `SetDefaults_PodTopologySpreadArgs`).

use std::path::Path;

use k8s_openapi::api::core::v1::TopologySpreadConstraint;
use serde::Deserialize;
use serde_json::Value;

use super::*;
use crate::error::InputError;
use crate::model::labels::is_qualified_name;
use crate::sched::framework::names;
use crate::yaml::Document;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawPodTopologySpreadArgs {
    pub(super) api_version: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) default_constraints: Option<Vec<TopologySpreadConstraint>>,
    #[serde(default)]
    pub(super) defaulting_type: String,
}

/// `SetDefaults_PodTopologySpreadArgs` + `ValidatePodTopologySpreadArgs`.
pub(super) fn spread_args(
    doc: &Document,
    file: &Path,
    path: &str,
    raw: RawPodTopologySpreadArgs,
) -> Result<Option<Vec<TopologySpreadConstraint>>, InputError> {
    let defaulting = if raw.defaulting_type.is_empty() {
        "System"
    } else {
        raw.defaulting_type.as_str()
    };
    let constraints = raw.default_constraints.unwrap_or_default();
    let t_path = format!("{path}.defaultingType");
    match defaulting {
        "System" if !constraints.is_empty() => {
            return Err(doc.error(
                file,
                &t_path,
                invalid(quoted("System"), "when .defaultConstraints are not empty"),
            ));
        }
        "System" | "List" => {}
        other => {
            return Err(doc.error(
                file,
                &t_path,
                format!("Unsupported value: {other:?}: supported values: \"System\", \"List\""),
            ));
        }
    }
    let c_path = format!("{path}.defaultConstraints");
    for (i, c) in constraints.iter().enumerate() {
        let p = format!("{c_path}[{i}]");
        if c.max_skew <= 0 {
            return Err(doc.error(
                file,
                &format!("{p}.maxSkew"),
                invalid(c.max_skew, "not in valid range (0, inf)"),
            ));
        }
        if c.topology_key.is_empty() {
            return Err(doc.error(
                file,
                &format!("{p}.topologyKey"),
                "Required value: can not be empty".to_string(),
            ));
        }
        if !is_qualified_name(&c.topology_key) {
            return Err(doc.error(
                file,
                &format!("{p}.topologyKey"),
                invalid(quoted(&c.topology_key), QUALIFIED_NAME_MESSAGE),
            ));
        }
        match c.when_unsatisfiable.as_str() {
            "" => {
                return Err(doc.error(
                    file,
                    &format!("{p}.whenUnsatisfiable"),
                    "Required value: can not be empty".to_string(),
                ));
            }
            "DoNotSchedule" | "ScheduleAnyway" => {}
            other => {
                return Err(doc.error(
                    file,
                    &format!("{p}.whenUnsatisfiable"),
                    format!(
                        "Unsupported value: {other:?}: supported values: \"DoNotSchedule\", \
                         \"ScheduleAnyway\""
                    ),
                ));
            }
        }
        if c.label_selector.is_some() {
            return Err(doc.error(
                file,
                &format!("{p}.labelSelector"),
                "Forbidden: constraint must not define a selector, as they deduced for each pod"
                    .to_string(),
            ));
        }
        if constraints[..i].iter().any(|o| {
            o.topology_key == c.topology_key && o.when_unsatisfiable == c.when_unsatisfiable
        }) {
            return Err(doc.error(
                file,
                &p,
                format!(
                    "Duplicate value: \"{{{}, {}}}\"",
                    c.topology_key, c.when_unsatisfiable
                ),
            ));
        }
    }
    Ok((defaulting == "List").then_some(constraints))
}

pub(super) fn apply(
    doc: &Document,
    file: &Path,
    path: &str,
    value: &Value,
    args: &mut Args,
) -> Result<(), InputError> {
    let raw: RawPodTopologySpreadArgs = doc.decode(file, path, value)?;
    check_type_meta(
        doc,
        file,
        path,
        names::POD_TOPOLOGY_SPREAD,
        &raw.api_version,
        &raw.kind,
    )?;
    args.spread_default_constraints = spread_args(doc, file, path, raw)?;
    Ok(())
}
