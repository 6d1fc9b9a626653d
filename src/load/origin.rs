//! Where an object came from (file, document, field path) and how an item of a scenario list
//! becomes objects: inline, `{file: PATH}` (one file, many documents), `{file: FOLDER}` (every
//! manifest under it), with `List` documents expanded into their items. Each object is
//! admitted as the API server admits it on create ([`Origin::admit_with`]): its metadata
//! validated (`model::validate::meta`), a name generated from `generateName`.

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use serde_json::Value;

use super::scenario::{self, FileRef};
use super::{Errors, Loader, paths};
use crate::error::InputError;
use crate::model::validate::FieldError;
use crate::model::validate::meta::{self, Meta};
use crate::yaml::{Document, join_path};

/// Where an object came from: its file, document and field path inside the document.
#[derive(Debug, Clone)]
pub(super) struct Origin {
    pub file: PathBuf,
    pub doc: Rc<Document>,
    pub path: String,
    /// The `(apiVersion, kind)` a typed List (`NodeList`, …) gives an item that names neither
    /// (`decodeToList`, apimachinery's `unstructured/helpers.go`).
    pub list_type: Option<Rc<(String, String)>>,
}

impl Origin {
    pub fn new(file: &Path, doc: &Rc<Document>, path: &str) -> Origin {
        Origin {
            file: file.to_path_buf(),
            doc: doc.clone(),
            path: path.to_string(),
            list_type: None,
        }
    }

    pub fn value(&self) -> &Value {
        value_at(&self.doc.value, &self.path)
    }

    /// The object's `kind`, if it has one (or its typed List gives it one).
    pub fn kind(&self) -> Option<&str> {
        (self.value().get("kind").and_then(Value::as_str))
            .or(self.list_type.as_ref().map(|t| t.1.as_str()))
    }

    /// The object's `apiVersion`, as [`Origin::kind`].
    pub fn api_version(&self) -> Option<&str> {
        (self.value().get("apiVersion").and_then(Value::as_str))
            .or(self.list_type.as_ref().map(|t| t.0.as_str()))
    }

    /// The name the API server gives an object that has only a `generateName`
    /// (`names.SimpleNameGenerator`: the prefix, cut to 58 bytes, and five characters): made
    /// stable from where the object is, so runs repeat.
    pub fn generated_name(&self, kind: &str) -> Option<String> {
        let metadata = &self.value()["metadata"];
        let name = metadata["name"].as_str().unwrap_or("");
        let prefix = metadata["generateName"].as_str().unwrap_or("");
        if !name.is_empty() || prefix.is_empty() {
            return None;
        }
        let file = self.file.file_name().unwrap_or_default().to_string_lossy();
        let namespace = metadata["namespace"].as_str().unwrap_or("");
        let hash = crate::model::generated_names::stable_hash(&[
            kind, namespace, prefix, &file, &self.path,
        ]);
        Some(crate::model::generated_names::generated_name(prefix, hash))
    }

    /// The object as the API server holds it once created: with its generated name, if it
    /// had only a `generateName`.
    pub fn admitted_value(&self) -> Cow<'_, Value> {
        let value = self.value();
        match self.generated_name(self.kind().unwrap_or("")) {
            Some(name) => {
                let mut v = value.clone();
                v["metadata"]["name"] = Value::from(name);
                Cow::Owned(v)
            }
            None => Cow::Borrowed(value),
        }
    }

    /// The object's metadata validated as the API server validates `kind`'s on create
    /// (`ValidateObjectMetaAccessor` with the kind's name rule and scope).
    pub fn check_meta(&self, kind: &str) -> Result<(), Errors> {
        let generated = self.generated_name(kind);
        let Some(mut m) = Meta::of_json(&self.value()["metadata"]) else {
            return Ok(()); // decoding it says what is wrong
        };
        if let Some(name) = &generated {
            m.name = name;
        }
        self.check_all(match meta::validate(meta::kind_meta(kind), m, "") {
            errs if errs.is_empty() => Ok(()),
            errs => Err(errs),
        })
    }

    /// An object of `kind`, admitted: `convert` (decoding and checking it) and its metadata's
    /// validation, with the errors of both.
    pub fn admit_with<T>(
        &self,
        kind: &str,
        convert: impl FnOnce() -> Result<T, Errors>,
    ) -> Result<T, Errors> {
        self.expect_kind(kind).map_err(|e| vec![e])?;
        match (self.check_meta(kind), convert()) {
            (Ok(()), converted) => converted,
            (Err(mut errs), Err(more)) => {
                errs.extend(more);
                Err(errs)
            }
            (Err(errs), Ok(_)) => Err(errs),
        }
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

    /// The object decoded as the API server holds it ([`Origin::admitted_value`]).
    pub fn decode<T: serde::de::DeserializeOwned>(&self) -> Result<T, InputError> {
        self.doc
            .decode(&self.file, &self.path, &self.admitted_value())
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

    /// The errors a check found (a CRD's, a webhook's), positioned; none: accepted.
    pub fn refuse_any(&self, errs: Vec<FieldError>) -> Result<(), Errors> {
        match errs.is_empty() {
            true => Ok(()),
            false => self.check_all(Err(errs)),
        }
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
            return expand_lists(Origin::new(file, doc, path));
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
        let mut errors = Vec::new();
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
                match expand_lists(Origin::new(&target, d, "")) {
                    Ok(origins) => out.extend(origins),
                    Err(e) => errors.extend(e),
                }
            }
        }
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors)
        }
    }

    /// The objects an item stands for, admitted as `kind` (metadata validated) and converted;
    /// every error of every object is collected.
    pub(super) fn typed_items<K: serde::de::DeserializeOwned, T>(
        &mut self,
        origins: Vec<Origin>,
        kind: &str,
        convert: impl Fn(&K, &str, &mut Vec<FieldError>) -> T,
    ) -> Result<Vec<(T, Origin)>, Errors> {
        let mut out = Vec::new();
        let mut errors = Vec::new();
        for origin in origins {
            let converted = origin.admit_with(kind, || {
                (origin.decode::<K>())
                    .map_err(|e| vec![e])
                    .and_then(|k| origin.check(|errs| convert(&k, &origin.path, errs)))
            });
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
/// An item that is no object is refused as `kubectl` refuses it (`decodeToUnstructured`
/// unmarshals each item into a map); a typed List's items without `apiVersion` and `kind` take
/// the List's (a `NodeList`'s are Nodes), a `List`'s null item has none.
pub(super) fn expand_lists(origin: Origin) -> Result<Vec<Origin>, Errors> {
    let kind = origin.kind().unwrap_or("");
    if kind != "List" && !kind.ends_with("List") {
        return Ok(vec![origin]);
    }
    let item_kind = kind.strip_suffix("List").unwrap_or("");
    let list_type = (!item_kind.is_empty()).then(|| {
        let api_version = origin.api_version().unwrap_or("").to_string();
        Rc::new((api_version, item_kind.to_string()))
    });
    let items = origin.value().get("items").and_then(Value::as_array);
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for (i, item) in items.into_iter().flatten().enumerate() {
        let path = join_path(&origin.path, &format!("items[{i}]"));
        let not_an_object = match item {
            Value::Object(_) => None,
            Value::Null if list_type.is_none() => Some(("kind", "kind not set".to_string())),
            Value::Null => None,
            other => Some((
                "",
                format!(
                    "json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                    crate::yaml::json_type(other)
                ),
            )),
        };
        if let Some((field, message)) = not_an_object {
            errors.push(
                origin
                    .doc
                    .error(&origin.file, &join_path(&path, field), message),
            );
            continue;
        }
        let item = Origin {
            path,
            list_type: list_type.clone(),
            ..origin.clone()
        };
        match expand_lists(item) {
            Ok(items) => out.extend(items),
            Err(e) => errors.extend(e),
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
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
