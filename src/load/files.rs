//! Finding scenario files: the paths given on the command line, folders searched for files
//! that hold a Scenario document.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::origin::manifests;
use super::scenario;
use crate::error::InputError;
use crate::yaml;

/// Scenario files found under `paths`, in sorted order. Folders are searched recursively
/// for `*.yaml`, `*.yml` and `*.json` files that hold a Scenario document, in any valid YAML
/// or JSON spelling; symlinked folders are followed once (a loop is not followed again).
/// Finding no Scenario at all is an error naming the paths.
pub fn scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, InputError> {
    let mut files = BTreeSet::new();
    for p in paths {
        if p.is_dir() {
            let found = manifests(p).map_err(|e| InputError::new(p, yaml::io_message(&e)))?;
            files.extend(found.into_iter().filter(|f| declares_scenario(f)));
        } else if p.exists() {
            files.insert(p.clone());
        } else {
            return Err(InputError::new(p, "no such file or directory"));
        }
    }
    if files.is_empty() {
        let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(InputError::new(
            Path::new(&names.join(", ")),
            format!(
                "no Scenario document (apiVersion: {}, kind: Scenario) in any .yaml, .yml or .json file here",
                scenario::API_VERSION
            ),
        ));
    }
    Ok(files.into_iter().collect())
}

/// Whether a file holds a Scenario document (other files in a folder, such as node
/// inventories, are not scenarios). Files that never mention the kind are not parsed; a file
/// that mentions it but does not parse counts, so that loading it reports its error.
fn declares_scenario(path: &Path) -> bool {
    let kind = scenario::KIND.as_bytes();
    let mentions =
        std::fs::read(path).is_ok_and(|bytes| bytes.windows(kind.len()).any(|w| w == kind));
    mentions
        && yaml::read_documents(path).map_or(true, |docs| {
            docs.iter()
                .any(|d| d.value.get("kind").and_then(Value::as_str) == Some(scenario::KIND))
        })
}
