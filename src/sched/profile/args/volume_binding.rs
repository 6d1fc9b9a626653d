//! `VolumeBindingArgs` (`ValidateVolumeBindingArgs`).

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::*;
use crate::error::InputError;
use crate::yaml::Document;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct RawVolumeBindingArgs {
    pub(super) api_version: Option<String>,
    pub(super) kind: Option<String>,
    pub(super) bind_timeout_seconds: Option<i64>,
    pub(super) shape: Option<Vec<RawShapePoint>>,
}

/// `ValidateVolumeBindingArgs`; the args are checked, then unused (no volumes are simulated).
pub(super) fn apply(
    doc: &Document,
    file: &Path,
    path: &str,
    value: &Value,
    _args: &mut Args,
) -> Result<(), InputError> {
    let raw: RawVolumeBindingArgs = doc.decode(file, path, value)?;
    check_type_meta(
        doc,
        file,
        path,
        "VolumeBinding",
        &raw.api_version,
        &raw.kind,
    )?;
    if let Some(t) = raw.bind_timeout_seconds
        && t < 0
    {
        return Err(doc.error(
            file,
            &format!("{path}.bindTimeoutSeconds"),
            invalid(
                t,
                "invalid BindTimeoutSeconds, should not be a negative value",
            ),
        ));
    }
    if let Some(shape) = &raw.shape {
        validate_function_shape(doc, file, &format!("{path}.shape"), shape)?;
    }
    Ok(())
}
