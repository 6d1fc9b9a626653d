//! Where an object came from (file, document, field path) and how an item of a scenario list
//! becomes objects: inline, `{file: PATH}` (one file, many documents), `{file: FOLDER}` (every
//! manifest under it), with `List` documents expanded into their items.

use std::path::{Path, PathBuf};
use std::rc::Rc;

use serde_json::Value;

use super::scenario::{self, FileRef};
use super::{Errors, Loader, paths};
use crate::error::InputError;
use crate::model::validate::FieldError;
use crate::yaml::{Document, join_path};

/// Where an object came from: its file, document and field path inside the document.
#[derive(Debug, Clone)]
pub(super) struct Origin {
    pub file: PathBuf,
    pub doc: Rc<Document>,
    pub path: String,
}

impl Origin {
    pub fn value(&self) -> &Value {
        value_at(&self.doc.value, &self.path)
    }

    /// The object's `kind`, if it has one.
    pub fn kind(&self) -> Option<&str> {
        self.value().get("kind").and_then(Value::as_str)
    }

    pub fn error(&self, message: String) -> InputError {
        self.doc.error(&self.file, &self.path, message)
    }

    pub fn error_at(&self, child: &str, message: String) -> InputError {
        self.doc
            .error(&self.file, &join_path(&self.path, child), message)
    }

    /// `file:line:col` of the object, for warnings.
    pub fn describe(&self) -> String {
        match self.doc.position(&self.path) {
            Some(p) => format!("{}:{}:{}", self.file.display(), p.line, p.column),
            None => self.file.display().to_string(),
        }
    }

    pub fn decode<T: serde::de::DeserializeOwned>(&self) -> Result<T, InputError> {
        self.doc.decode(&self.file, &self.path, self.value())
    }

    pub fn expect_kind(&self, kind: &str) -> Result<(), InputError> {
        match self.kind() {
            Some(k) if k == kind => Ok(()),
            None => Ok(()),
            Some(other) => Err(self.error_at(
                "kind",
                format!(
                    "expected a {kind} here, found kind {other:?}{}",
                    unsupported_hint(other)
                ),
            )),
        }
    }

    /// Positions the field errors of a result.
    pub fn check_all<T>(&self, result: Result<T, Vec<FieldError>>) -> Result<T, Errors> {
        result.map_err(|errs| {
            errs.into_iter()
                .map(|e| {
                    self.doc
                        .error(&self.file, &join_path(&self.path, &e.path), e.message)
                })
                .collect()
        })
    }

    /// Runs a conversion that collects field errors, turning them into positioned errors.
    pub fn check<T>(&self, convert: impl FnOnce(&mut Vec<FieldError>) -> T) -> Result<T, Errors> {
        let mut errs = Vec::new();
        let out = convert(&mut errs);
        if errs.is_empty() {
            Ok(out)
        } else {
            Err(errs
                .into_iter()
                .map(|e| self.doc.error(&self.file, &e.path, e.message))
                .collect())
        }
    }
}

impl Loader<'_> {
    /// The objects an item stands for: those of a referenced file or folder, or the item itself.
    pub(super) fn resolve_item(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        path: &str,
        item: &Value,
    ) -> Result<Vec<Origin>, Errors> {
        if item.get("file").is_none() {
            return Ok(expand_lists(Origin {
                file: file.to_path_buf(),
                doc: doc.clone(),
                path: path.to_string(),
            }));
        }
        let r: FileRef = doc.decode(file, path, item).map_err(|e| vec![e])?;
        let target = file.parent().unwrap_or(Path::new(".")).join(&r.file);
        let refused = |why: String| {
            vec![doc.error(
                file,
                &join_path(path, "file"),
                format!("cannot load {:?}: {why}", r.file),
            )]
        };
        paths::check_reference(file, &target).map_err(refused)?;
        let folder = target.is_dir();
        let files = if folder {
            manifests(&target).map_err(|e| refused(crate::yaml::io_message(&e)))?
        } else {
            vec![target]
        };
        let mut out = Vec::new();
        for target in files {
            paths::check_reference(file, &target).map_err(refused)?;
            let docs = self
                .documents(&target)
                .map_err(|e| refused(e.to_string()))?;
            for d in docs.iter() {
                // A folder of manifests often holds the scenario itself.
                if folder && d.value.get("kind").and_then(Value::as_str) == Some(scenario::KIND) {
                    continue;
                }
                out.extend(expand_lists(Origin {
                    file: target.clone(),
                    doc: d.clone(),
                    path: String::new(),
                }));
            }
        }
        Ok(out)
    }

    /// The objects an item stands for, decoded as `kind` and converted; every error of every
    /// object is collected.
    pub(super) fn typed_items<K: serde::de::DeserializeOwned, T>(
        &mut self,
        origins: Vec<Origin>,
        kind: &str,
        convert: impl Fn(&K, &str, &mut Vec<FieldError>) -> T,
    ) -> Result<Vec<(T, Origin)>, Errors> {
        let mut out = Vec::new();
        let mut errors = Vec::new();
        for origin in origins {
            let converted = origin
                .expect_kind(kind)
                .and_then(|_| origin.decode::<K>())
                .map_err(|e| vec![e])
                .and_then(|k| origin.check(|errs| convert(&k, &origin.path, errs)));
            match converted {
                Ok(t) => out.push((t, origin)),
                Err(mut e) => errors.append(&mut e),
            }
        }
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors)
        }
    }
}

/// The `.yaml`, `.yml` and `.json` files under a folder, recursively, in sorted path order
/// (symlinked folders are followed once).
pub(super) fn manifests(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    fn walk(
        dir: &Path,
        out: &mut Vec<PathBuf>,
        seen: &mut std::collections::HashSet<PathBuf>,
    ) -> std::io::Result<()> {
        if !seen.insert(std::fs::canonicalize(dir)?) {
            return Ok(());
        }
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                walk(&path, out, seen)?;
            } else if is_manifest(&path) {
                out.push(path);
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, &mut out, &mut Default::default())?;
    out.sort();
    Ok(out)
}

/// A file a folder scan reads: `*.yaml`, `*.yml`, `*.json`.
fn is_manifest(path: &Path) -> bool {
    path.is_file()
        && path
            .extension()
            .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
}

/// ` (did you mean "x"?)` for the closest known name, if any is close.
pub(super) fn suggestion(name: &str, known: &[String]) -> String {
    known
        .iter()
        .map(|k| (strsim::jaro_winkler(name, k), k))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| format!(" (did you mean {k:?}?)"))
        .unwrap_or_default()
}

fn unsupported_hint(kind: &str) -> &'static str {
    match kind {
        "TrainingRuntime" | "ClusterTrainingRuntime" => " (runtimes belong in spec.runtimes)",
        _ => "",
    }
}

/// Expands `List`/`NodeList`/`PodList` documents into their items; empty documents are none.
pub(super) fn expand_lists(origin: Origin) -> Vec<Origin> {
    let kind = origin.kind().unwrap_or("");
    if kind == "List" || kind.ends_with("List") {
        let n = origin
            .value()
            .get("items")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        (0..n)
            .flat_map(|i| {
                expand_lists(Origin {
                    path: join_path(&origin.path, &format!("items[{i}]")),
                    ..origin.clone()
                })
            })
            .collect()
    } else {
        vec![origin]
    }
}

/// The value at a field path produced by [`join_path`].
fn value_at<'v>(root: &'v Value, path: &str) -> &'v Value {
    let mut v = root;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (name, rest) = part.split_once('[').unwrap_or((part, ""));
        if !name.is_empty() {
            v = v.get(name).unwrap_or(&Value::Null);
        }
        for idx in rest.split('[').filter(|s| !s.is_empty()) {
            let i: usize = idx.trim_end_matches(']').parse().unwrap_or(usize::MAX);
            v = v.get(i).unwrap_or(&Value::Null);
        }
    }
    v
}
