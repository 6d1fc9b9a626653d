//! `NodeResourcesFitArgs` (`ValidateNodeResourcesFitArgs`, `SetDefaults_NodeResourcesFitArgs`).

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::*;
use crate::error::InputError;
use crate::model::labels::is_qualified_name;
use crate::sched::framework::names;
use crate::yaml::Document;

/// `NodeResourcesFitArgs` (`types_pluginargs.go`).
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawFitArgs {
    pub(super) api_version: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) ignored_resources: Option<Vec<String>>,
    pub(super) ignored_resource_groups: Option<Vec<String>>,
    pub(super) scoring_strategy: Option<RawScoringStrategy>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawScoringStrategy {
    #[serde(rename = "type", default)]
    pub(super) kind: String,
    pub(super) resources: Option<Vec<RawResourceSpec>>,
    pub(super) requested_to_capacity_ratio: Option<RawRequestedToCapacityRatio>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRequestedToCapacityRatio {
    pub(super) shape: Option<Vec<RawShapePoint>>,
}

/// `SetDefaults_NodeResourcesFitArgs` + `ValidateNodeResourcesFitArgs`.
pub(super) fn fit_args(
    doc: &Document,
    file: &Path,
    path: &str,
    raw: RawFitArgs,
) -> Result<FitArgs, InputError> {
    let ignored_resources = raw.ignored_resources.unwrap_or_default();
    for (i, r) in ignored_resources.iter().enumerate() {
        if !is_qualified_name(r) {
            return Err(doc.error(
                file,
                &format!("{path}.ignoredResources[{i}]"),
                invalid(quoted(r), QUALIFIED_NAME_MESSAGE),
            ));
        }
    }
    let ignored_resource_groups = raw.ignored_resource_groups.unwrap_or_default();
    for (i, g) in ignored_resource_groups.iter().enumerate() {
        let at = format!("{path}.ignoredResourceGroups[{i}]");
        if g.contains('/') {
            return Err(doc.error(
                file,
                &at,
                invalid(quoted(g), "resource group name can't contain '/'"),
            ));
        }
        if !is_qualified_name(g) {
            return Err(doc.error(file, &at, invalid(quoted(g), QUALIFIED_NAME_MESSAGE)));
        }
    }
    let Some(strategy) = raw.scoring_strategy else {
        return Ok(FitArgs {
            ignored_resources,
            ignored_resource_groups,
            ..FitArgs::default()
        });
    };
    let s_path = format!("{path}.scoringStrategy");
    const SUPPORTED: [&str; 3] = [
        "LeastAllocated",
        "MostAllocated",
        "RequestedToCapacityRatio",
    ];
    if !SUPPORTED.contains(&strategy.kind.as_str()) {
        return Err(doc.error(
            file,
            &format!("{s_path}.type"),
            format!(
                "Unsupported value: {:?}: supported values: {}",
                strategy.kind,
                SUPPORTED.map(quoted).join(", ")
            ),
        ));
    }
    let resources = resource_specs(
        &format!("{s_path}.resources"),
        strategy.resources,
        |spec, at| {
            if spec.weight <= 0 || spec.weight > MAX_RESOURCE_WEIGHT {
                Err(doc.error(
                    file,
                    &format!("{at}.weight"),
                    invalid(
                        spec.weight,
                        &format!(
                            "resource weight of {} not in valid range (0, 100]",
                            spec.name
                        ),
                    ),
                ))
            } else {
                Ok(())
            }
        },
    )?;
    let shape = match strategy.requested_to_capacity_ratio {
        Some(r) => {
            let shape_path = format!("{s_path}.requestedToCapacityRatio.shape");
            let shape = r.shape.unwrap_or_default();
            validate_function_shape(doc, file, &shape_path, &shape)?;
            Some(
                shape
                    .iter()
                    .map(|p| (i64::from(p.utilization), i64::from(p.score)))
                    .collect(),
            )
        }
        None => None,
    };
    let strategy = match strategy.kind.as_str() {
        "LeastAllocated" => ScoringStrategy::LeastAllocated,
        "MostAllocated" => ScoringStrategy::MostAllocated,
        _ => match shape {
            Some(shape) => ScoringStrategy::RequestedToCapacityRatio { shape },
            None => {
                return Err(doc.error(
                    file,
                    &format!("{s_path}.requestedToCapacityRatio"),
                    "Required value: requestedToCapacityRatio.shape must be set for scoring \
                     strategy RequestedToCapacityRatio"
                        .to_string(),
                ));
            }
        },
    };
    Ok(FitArgs {
        strategy,
        resources,
        ignored_resources,
        ignored_resource_groups,
    })
}

pub(super) fn apply(
    doc: &Document,
    file: &Path,
    path: &str,
    value: &Value,
    args: &mut Args,
) -> Result<(), InputError> {
    let raw: RawFitArgs = doc.decode(file, path, value)?;
    check_type_meta(
        doc,
        file,
        path,
        names::NODE_RESOURCES_FIT,
        &raw.api_version,
        &raw.kind,
    )?;
    args.fit = fit_args(doc, file, path, raw)?;
    Ok(())
}
