//! `DynamicResourcesArgs`: decoded strictly, not used.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::*;
use crate::error::InputError;
use crate::yaml::Document;

/// `DynamicResourcesArgs`: decoded strictly, not used.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
pub(super) struct RawDynamicResourcesArgs {
    pub(super) api_version: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) filter_timeout: Option<Value>,
    pub(super) binding_timeout: Option<Value>,
}

pub(super) fn apply(
    doc: &Document,
    file: &Path,
    path: &str,
    value: &Value,
    _args: &mut Args,
) -> Result<(), InputError> {
    let raw: RawDynamicResourcesArgs = doc.decode(file, path, value)?;
    check_type_meta(
        doc,
        file,
        path,
        "DynamicResources",
        &raw.api_version,
        &raw.kind,
    )
}
