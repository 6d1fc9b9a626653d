//! One object through a scenario's `spec.objects`, for the tables of what the API server
//! refuses (`tests/validation.rs`, `tests/dra/validation.rs`).

use serde::Deserialize;
use serde_json::{Value, json};

/// A case of such a table: an object and the errors (of type `E`) its load reports.
#[derive(Debug, Deserialize)]
pub struct ObjectCase<E> {
    pub name: String,
    pub object: Value,
    #[serde(default = "Vec::new")]
    pub errors: Vec<E>,
}

/// An error the load reported: its field path relative to the object, its message, and
/// whether it has a position.
#[derive(Debug)]
pub struct ObjectError {
    pub path: String,
    pub message: String,
    pub positioned: bool,
}

/// The errors loading a scenario whose only object is `object` reports; the scenario is
/// written to `dir/<name>.json`.
pub fn object_errors(dir: &std::path::Path, name: &str, object: &Value) -> Vec<ObjectError> {
    let scenario = json!({
        "apiVersion": "schedsim.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "validation"},
        "spec": {"objects": [object]},
    });
    let file = dir.join(format!("{name}.json"));
    std::fs::write(&file, serde_json::to_string_pretty(&scenario).unwrap()).unwrap();
    let loaded = schedsim::load::load_files(&[file], &Default::default());
    (loaded.errors.into_iter())
        .map(|e| {
            let field = e.field.unwrap_or_default();
            let path = (field.strip_prefix("spec.objects[0]"))
                .map(|p| p.trim_start_matches('.').to_string())
                .unwrap_or(field);
            ObjectError {
                path,
                message: e.message,
                positioned: e.position.is_some_and(|p| p.line > 0),
            }
        })
        .collect()
}
