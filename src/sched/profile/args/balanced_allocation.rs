//! `NodeResourcesBalancedAllocationArgs` (`ValidateNodeResourcesBalancedAllocationArgs`).

use std::collections::HashSet;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::*;
use crate::error::InputError;
use crate::sched::framework::names;
use crate::yaml::Document;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawBalancedAllocationArgs {
    pub(super) api_version: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) resources: Option<Vec<RawResourceSpec>>,
}

/// `SetDefaults_NodeResourcesBalancedAllocationArgs` +
/// `ValidateNodeResourcesBalancedAllocationArgs`: unique names, weight exactly 1.
pub(super) fn balanced_args(
    doc: &Document,
    file: &Path,
    path: &str,
    raw: RawBalancedAllocationArgs,
) -> Result<Vec<ResourceSpec>, InputError> {
    let seen = std::cell::RefCell::new(HashSet::new());
    resource_specs(&format!("{path}.resources"), raw.resources, |spec, at| {
        if !seen.borrow_mut().insert(spec.name.clone()) {
            return Err(doc.error(
                file,
                &format!("{at}.name"),
                format!("Duplicate value: {:?}", spec.name),
            ));
        }
        if spec.weight != 1 {
            return Err(doc.error(
                file,
                &format!("{at}.weight"),
                invalid(spec.weight, "must be 1"),
            ));
        }
        Ok(())
    })
}

pub(super) fn apply(
    doc: &Document,
    file: &Path,
    path: &str,
    value: &Value,
    args: &mut Args,
) -> Result<(), InputError> {
    let raw: RawBalancedAllocationArgs = doc.decode(file, path, value)?;
    let plugin = names::NODE_RESOURCES_BALANCED_ALLOCATION;
    check_type_meta(doc, file, path, plugin, &raw.api_version, &raw.kind)?;
    args.balanced_resources = balanced_args(doc, file, path, raw)?;
    Ok(())
}
