//! YAML and JSON documents as JSON values, with the position of any field on demand.
//!
//! Kubernetes itself reads YAML by converting it to JSON first (sigs.k8s.io/yaml), so typed
//! objects are decoded from `serde_json::Value` exactly as the API server would decode them
//! (a label written `gpu: true` is a bool, not a string, and is rejected the same way).
//! Positions cost nothing until an error asks for one: the file's text is kept, and the first
//! lookup re-reads it once with positions (see [`build`]), so every error still points at its
//! line and column.
//!
//! A text whose first character is `{` or `[` is read as JSON (a stream of values, such as
//! `kubectl get -o json` prints) by serde_json, an order of magnitude faster than YAML; JSON
//! is YAML too, so the position pass reads it the same way.

mod build;
mod scalar;
mod skim;

use std::borrow::Cow;
use std::cell::OnceCell;
use std::fmt;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::error::{InputError, Position};
use crate::limits;
use build::{Ctx, PosChildren, PosNode};

/// One document of a file.
#[derive(Debug, Clone)]
pub struct Document {
    pub value: Value,
    source: Rc<Source>,
    /// The document's index among all documents of its file (empty ones included).
    index: usize,
    /// Field paths whose values a merge patch replaced → where the patch wrote them.
    redirects: Vec<(String, String)>,
    /// Where `value` sits in the document as written: empty for a whole document, the field
    /// path of an object written inside another ([`Document::nested`]). Paths given to this
    /// document's methods are relative to `value` and reported with this prefix.
    prefix: String,
}

/// Where a document's text is, to find positions when an error needs one.
struct Source {
    text: Text,
    positions: OnceCell<Vec<(usize, PosNode)>>,
}

/// A text given in memory is kept; a file is read again, which keeps a gigabyte-sized dump
/// out of memory while it is simulated.
enum Text {
    Kept(String),
    File { path: PathBuf, bytes: u64 },
}

impl Source {
    /// The text, unless the file changed size since it was loaded.
    fn text(&self) -> Option<Cow<'_, str>> {
        match &self.text {
            Text::Kept(t) => Some(Cow::Borrowed(t)),
            Text::File { path, bytes } => std::fs::read_to_string(path)
                .ok()
                .filter(|t| t.len() as u64 == *bytes)
                .map(Cow::Owned),
        }
    }
}

impl fmt::Debug for Source {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {
        match &self.text {
            Text::Kept(t) => write!(f, "Source({} bytes)", t.len()),
            Text::File { path, .. } => write!(f, "Source({})", path.display()),
        }
    }
}

impl Document {
    /// Position of `path`, or of its nearest enclosing field that has one.
    pub fn position(&self, path: &str) -> Option<Position> {
        let path = self.redirected(&join_path(&self.prefix, path));
        let docs = self.source.positions.get_or_init(|| {
            self.source
                .text()
                .and_then(|text| build::build(&text, true).ok())
                .map(|docs| {
                    docs.into_iter()
                        .filter_map(|d| Some((d.index, d.positions?)))
                        .collect()
                })
                .unwrap_or_default()
        });
        let root = &docs.iter().find(|(i, _)| *i == self.index)?.1;
        Some(locate(root, &segments(&path)))
    }

    /// `path` rewritten into the merge patch that set it, if one did (the latest wins).
    fn redirected(&self, path: &str) -> String {
        for (at, from) in self.redirects.iter().rev() {
            if let Some(rest) = path.strip_prefix(at.as_str())
                && (rest.is_empty() || rest.starts_with(['.', '[']))
            {
                return format!("{from}{rest}");
            }
        }
        path.to_string()
    }

    /// An error at field `path` of this document.
    pub fn error(&self, file: &Path, path: &str, message: impl Into<String>) -> InputError {
        InputError::new(file, message)
            .at(self.position(path))
            .field(join_path(&self.prefix, path))
    }

    /// The object at field `path` of this document as a document of its own (an inline
    /// KubeSchedulerConfiguration in a Scenario): its paths are relative to it, and its
    /// errors point into this document.
    pub fn nested(&self, path: &str) -> Document {
        let value = path
            .split('.')
            .filter(|p| !p.is_empty())
            .try_fold(&self.value, |v, part| field_or_index(v, part))
            .cloned()
            .unwrap_or(Value::Null);
        Document {
            value,
            source: self.source.clone(),
            index: self.index,
            redirects: self.redirects.clone(),
            prefix: join_path(&self.prefix, path),
        }
    }

    /// Decode the value at `path` (empty = whole document) into a typed object; a type error
    /// names the field path and its position.
    pub fn decode<T: DeserializeOwned>(
        &self,
        file: &Path,
        path: &str,
        value: &Value,
    ) -> Result<T, InputError> {
        // The fast decoder first; only a failure is decoded again to learn its field path.
        if let Ok(t) = T::deserialize(value) {
            return Ok(t);
        }
        serde_path_to_error::deserialize(value).map_err(|e| {
            let inner = e.path().to_string();
            let full = join_path(path, if inner == "." { "" } else { &inner });
            let message = e.into_inner().to_string();
            let message = match did_you_mean(&message) {
                Some(hint) => format!("{message} (did you mean `{hint}`?)"),
                None => (integer_range(&message))
                    .or_else(|| self.unquoted_hint(&full, &message))
                    .unwrap_or(message),
            };
            self.error(file, &full, message)
        })
    }

    /// For a string field given an unquoted YAML number or boolean (`version: 1.10`,
    /// `enabled: yes`): the message in the user's terms, quoting what they wrote.
    fn unquoted_hint(&self, path: &str, message: &str) -> Option<String> {
        let rest = message.strip_prefix("invalid type: ")?;
        let (found, expected) = rest.split_once(", expected ")?;
        if expected != "a string" {
            return None;
        }
        let kind = if found.starts_with("boolean") {
            "a boolean"
        } else if found.starts_with("integer") || found.starts_with("floating point") {
            "a number"
        } else {
            return None;
        };
        let at = self.position(path)?;
        let text = self.source.text()?;
        let line = text.lines().nth(at.line.checked_sub(1)? as usize)?;
        let written: String = line
            .chars()
            .skip(at.column.saturating_sub(1) as usize)
            .take_while(|c| !matches!(c, ',' | '}' | ']' | '#'))
            .collect();
        let written = excerpt(written.trim(), 40);
        Some(format!(
            "expected a string, found {kind}: YAML reads an unquoted {written} as {kind}; quote it (\"{written}\")"
        ))
    }

    /// This document with the JSON merge patch (RFC 7386) at field `patch_path` applied to the
    /// top-level field `key`. Positions follow the values: a replaced value's positions are
    /// those of the patch, so errors in patched parts point into the patch.
    pub fn merge_patched(&self, key: &str, patch_path: &str) -> Document {
        let patch = patch_path
            .split('.')
            .try_fold(&self.value, |v, part| field_or_index(v, part))
            .cloned()
            .unwrap_or(Value::Null);
        let mut out = self.clone();
        let target = match &mut out.value {
            Value::Object(m) => m.entry(key.to_string()).or_insert(Value::Null),
            other => other,
        };
        merge_patch(target, &patch, key, patch_path, &mut out.redirects);
        out
    }
}

/// Whether YAML reads `s`, written plain, back as the same string (not a number, boolean or
/// null), so a writer may leave it unquoted.
pub fn reads_as_string(s: &str) -> bool {
    matches!(scalar::resolve_plain(s), Ok(Value::String(t)) if t == s)
}

/// serde's "invalid value: integer `N`, expected u32" in the user's terms: the number and the
/// range the field takes.
fn integer_range(message: &str) -> Option<String> {
    let rest = message.strip_prefix("invalid value: integer `")?;
    let (n, ty) = rest.split_once("`, expected ")?;
    let (min, max): (i128, i128) = match ty {
        "u8" => (0, u8::MAX.into()),
        "u16" => (0, u16::MAX.into()),
        "u32" => (0, u32::MAX.into()),
        "u64" | "usize" => (0, u64::MAX.into()),
        "i8" => (i8::MIN.into(), i8::MAX.into()),
        "i16" => (i16::MIN.into(), i16::MAX.into()),
        "i32" => (i32::MIN.into(), i32::MAX.into()),
        "i64" | "isize" => (i64::MIN.into(), i64::MAX.into()),
        _ => return None,
    };
    let value: i128 = n.parse().ok()?;
    Some(if value < min {
        format!("{n} is less than this field takes (at least {min})")
    } else {
        format!("{n} is more than this field takes (at most {max})")
    })
}

/// At most `max` characters of `s`, with `…` when cut.
fn excerpt(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(max).collect::<String>())
    }
}

/// `a` or `a[3]`: an object field, then list indices.
fn field_or_index<'v>(v: &'v Value, part: &str) -> Option<&'v Value> {
    let (name, rest) = part.split_once('[').unwrap_or((part, ""));
    let mut v = if name.is_empty() { v } else { v.get(name)? };
    for index in rest.split('[') {
        if let Some(i) = index.strip_suffix(']') {
            v = v.get(i.parse::<usize>().ok()?)?;
        }
    }
    Some(v)
}

/// RFC 7386 on `target` (at `at`), recording that replaced values now come from `from`.
fn merge_patch(
    target: &mut Value,
    patch: &Value,
    at: &str,
    from: &str,
    redirects: &mut Vec<(String, String)>,
) {
    let Value::Object(fields) = patch else {
        *target = patch.clone();
        redirects.push((at.to_string(), from.to_string()));
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
        redirects.push((at.to_string(), from.to_string()));
    }
    let Value::Object(t) = target else {
        unreachable!("made an object above")
    };
    for (k, v) in fields {
        if v.is_null() {
            t.remove(k);
        } else {
            let slot = t.entry(k.clone()).or_insert(Value::Null);
            merge_patch(slot, v, &join_path(at, k), &join_path(from, k), redirects);
        }
    }
}

/// A field path split into keys and list indices: `a.b[2].c` → `a`, `b`, `[2]`, `c`. Keys may
/// contain dots themselves (`nvidia.com/gpu`); [`locate`] joins segments back as needed.
fn segments(path: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (name, mut rest) = part.split_once('[').map_or((part, ""), |(n, r)| (n, r));
        if !name.is_empty() {
            out.push(name);
        }
        while let Some(end) = rest.find(']') {
            out.push(&part[part.len() - rest.len() - 1..part.len() - rest.len() + end + 1]);
            rest = rest[end + 1..].trim_start_matches('[');
        }
    }
    out
}

/// The position of the deepest node on `segments` below `node`.
fn locate(node: &PosNode, segments: &[&str]) -> Position {
    let Some(first) = segments.first() else {
        return node.at;
    };
    match &node.children {
        PosChildren::Seq(items) => first
            .strip_prefix('[')
            .and_then(|i| i.strip_suffix(']'))
            .and_then(|i| i.parse::<usize>().ok())
            .and_then(|i| items.get(i))
            .map_or(node.at, |child| locate(child, &segments[1..])),
        PosChildren::Map(fields) => {
            // The key may itself contain dots: try `a`, then `a.b`, …
            let mut key = String::new();
            for (n, s) in segments.iter().enumerate() {
                if n > 0 {
                    key.push('.');
                }
                key.push_str(s);
                if let Some((_, child)) = fields.iter().find(|(k, _)| *k == key) {
                    return locate(child, &segments[n + 1..]);
                }
            }
            node.at
        }
        PosChildren::Leaf => node.at,
    }
}

/// For serde's "unknown field `x`, expected one of `a`, `b`" (or variant) messages, the
/// closest expected name.
fn did_you_mean(message: &str) -> Option<String> {
    let rest = message
        .strip_prefix("unknown field `")
        .or_else(|| message.strip_prefix("unknown variant `"))?;
    let (unknown, expected) = rest.split_once('`')?;
    expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(|candidate| (strsim::jaro_winkler(unknown, candidate), candidate))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, c)| c.to_string())
}

/// How Go's `encoding/json` names a JSON value's type in an `UnmarshalTypeError`
/// (`json: cannot unmarshal <type> into …`).
pub fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Joins a parent path and a child path as serde_path_to_error prints them.
pub fn join_path(parent: &str, child: &str) -> String {
    match (parent.is_empty(), child.is_empty()) {
        (_, true) => parent.to_string(),
        (true, false) => child.to_string(),
        (false, false) if child.starts_with('[') => format!("{parent}{child}"),
        (false, false) => format!("{parent}.{child}"),
    }
}

/// Reads and parses a YAML or JSON file. Only regular files are read: a FIFO or device
/// would block or never end.
pub fn read_documents(file: &Path) -> Result<Vec<Document>, InputError> {
    let meta = std::fs::metadata(file).map_err(|e| InputError::new(file, io_message(&e)))?;
    if !meta.is_file() {
        let what = if meta.is_dir() {
            "a folder"
        } else {
            "not a regular file (a FIFO, socket or device)"
        };
        return Err(InputError::new(
            file,
            format!("cannot read it: it is {what}"),
        ));
    }
    if limits::FILE_BYTES.exceeded_by(meta.len()) {
        return Err(InputError::new(
            file,
            limits::FILE_BYTES.message(format!("{} bytes", meta.len())),
        ));
    }
    let bytes = std::fs::read(file).map_err(|e| InputError::new(file, io_message(&e)))?;
    let text = String::from_utf8(bytes).map_err(|e| {
        InputError::new(
            file,
            format!(
                "not UTF-8 text (invalid byte at offset {}); Kubernetes manifests are UTF-8",
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    let values = parse_values(&text, file)?;
    let source = Source {
        text: Text::File {
            path: file.to_path_buf(),
            bytes: text.len() as u64,
        },
        positions: OnceCell::new(),
    };
    drop(text);
    Ok(documents(values, source))
}

/// An I/O error in the user's terms.
pub fn io_message(e: &std::io::Error) -> String {
    match e.kind() {
        std::io::ErrorKind::NotFound => "no such file or directory".into(),
        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
        _ => e.to_string(),
    }
}

/// Parses every document of a YAML or JSON text; empty documents are skipped.
pub fn parse_documents(text: String, file: &Path) -> Result<Vec<Document>, InputError> {
    let values = parse_values(&text, file)?;
    let source = Source {
        text: Text::Kept(text),
        positions: OnceCell::new(),
    };
    Ok(documents(values, source))
}

/// The non-empty documents of a text, each with its index among all its documents.
fn documents(values: Vec<(usize, Value)>, source: Source) -> Vec<Document> {
    let source = Rc::new(source);
    values
        .into_iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(index, value)| Document {
            value,
            source: source.clone(),
            index,
            redirects: Vec::new(),
            prefix: String::new(),
        })
        .collect()
}

/// The value of every document of a YAML or JSON text.
fn parse_values(text: &str, file: &Path) -> Result<Vec<(usize, Value)>, InputError> {
    if limits::FILE_BYTES.exceeded_by(text.len() as u64) {
        return Err(InputError::new(
            file,
            limits::FILE_BYTES.message(format!("{} bytes", text.len())),
        ));
    }
    let at = |p: Option<Position>, m: String| InputError::new(file, m).at(p);
    let looks_like_json = text
        .trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n'])
        .starts_with(['{', '[']);
    Ok(if looks_like_json {
        match json_documents(text) {
            Ok(v) => v,
            // `{a: 1}` is YAML's flow style, not JSON: read it as YAML unless the file says JSON.
            Err(json_error) => match build::build(text, false) {
                Ok(docs) if file.extension().is_none_or(|e| e != "json") => {
                    docs.into_iter().map(|d| (d.index, d.value)).collect()
                }
                _ => return Err(at(json_error.position, json_error.message)),
            },
        }
    } else {
        // The skimmed text builds the same values faster; an error is reported (and its
        // position found) in the text as written.
        skim::skim(text)
            .and_then(|skimmed| build::build(&skimmed, false).ok())
            .map_or_else(|| build::build(text, false), Ok)
            .map_err(|e| at(e.position, e.message))?
            .into_iter()
            .map(|d| (d.index, d.value))
            .collect()
    })
}

/// Every value of a JSON text (one, or a stream), with the fields the simulation never reads
/// dropped as the YAML path drops them.
fn json_documents(text: &str) -> Result<Vec<(usize, Value)>, build::BuildError> {
    /// A document decoded with the object-root skipping of [`build::Filtered`].
    struct Root(Value);
    impl<'de> serde::Deserialize<'de> for Root {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            serde::de::DeserializeSeed::deserialize(build::Filtered(Ctx::ObjectRoot), d).map(Root)
        }
    }
    let mut out = Vec::new();
    for (index, value) in serde_json::Deserializer::from_str(text)
        .into_iter::<Root>()
        .enumerate()
    {
        if limits::DOCUMENTS.exceeded_by(index as u64 + 1) {
            return Err(build::BuildError {
                position: None,
                message: limits::DOCUMENTS.message(format!("document {}", index + 1)),
            });
        }
        let Root(value) = value.map_err(|e| build::BuildError {
            position: Some(Position {
                line: e.line() as u32,
                column: e.column() as u32,
            }),
            message: json_message(&e),
        })?;
        out.push((index, value));
    }
    Ok(out)
}

/// serde_json's message without the position it appends (we print positions ourselves).
fn json_message(e: &serde_json::Error) -> String {
    let m = e.to_string();
    let m = match m.rfind(" at line ") {
        Some(i) => m[..i].to_string(),
        None => m,
    };
    if m == "recursion limit exceeded" {
        "a JSON value nested more than 128 levels deep, the fixed limit of schedsim's JSON reader (YAML files may nest up to SCHEDSIM_MAX_NESTING levels)".into()
    } else {
        format!("invalid JSON: {m}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_point_at_values() {
        let text = "a: 1\n---\nkind: Pod\nspec:\n  containers:\n  - name: x\n    image: y\n";
        let docs = parse_documents(text.into(), Path::new("f.yaml")).unwrap();
        assert_eq!(docs.len(), 2);
        let d = &docs[1];
        assert_eq!(
            d.position("spec.containers[0].image"),
            Some(Position {
                line: 7,
                column: 12
            })
        );
        // Unknown paths fall back to the nearest parent with a position.
        assert_eq!(
            d.position("spec.containers[0].resources.requests"),
            d.position("spec.containers[0]")
        );
    }

    #[test]
    fn syntax_errors_have_positions() {
        let err = parse_documents("a:\n  b: 1\n c: 2\n".into(), Path::new("f.yaml")).unwrap_err();
        assert!(err.position.is_some(), "{err}");
    }

    #[test]
    fn unknown_fields_get_a_suggestion() {
        let msg =
            "unknown field `existingPod`, expected one of `nodes`, `existingPods`, `workloads`";
        assert_eq!(did_you_mean(msg).as_deref(), Some("existingPods"));
        assert_eq!(
            did_you_mean("unknown field `zzz`, expected `nodes` or `workloads`"),
            None
        );
        assert_eq!(did_you_mean("invalid type: string"), None);
    }

    #[test]
    fn empty_documents_are_skipped() {
        let docs = parse_documents(
            "---\n# only a comment\n---\na: 1\n---\n".into(),
            Path::new("f.yaml"),
        )
        .unwrap();
        assert_eq!(docs.len(), 1);
    }

    #[test]
    fn unquoted_numbers_and_booleans_in_string_fields_are_explained() {
        let text = "labels: {rack: 08, gpu: yes, zone: us-1}\n";
        let docs = parse_documents(text.into(), Path::new("f.yaml")).unwrap();
        let d = &docs[0];
        let labels = &d.value["labels"];
        let err = d
            .decode::<std::collections::BTreeMap<String, String>>(
                Path::new("f.yaml"),
                "labels",
                labels,
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "f.yaml:1:16: labels.rack: expected a string, found a number: YAML reads an unquoted 08 as a number; quote it (\"08\")"
        );
    }

    #[test]
    fn json_texts_and_yaml_flow_style_both_load() {
        let json = "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"a\", \"managedFields\": [{}]}}\n{\"kind\": \"Pod\"}";
        let docs = parse_documents(json.into(), Path::new("f.json")).unwrap();
        assert_eq!(docs.len(), 2);
        assert_eq!(docs[0].value["metadata"], serde_json::json!({"name": "a"}));
        let flow = "{kind: Pod, metadata: {name: a}}\n";
        let docs = parse_documents(flow.into(), Path::new("f.yaml")).unwrap();
        assert_eq!(docs[0].value["kind"], "Pod");
        assert!(parse_documents(flow.into(), Path::new("f.json")).is_err());
    }

    #[test]
    fn duplicate_keys_are_errors_with_a_position() {
        let err = parse_documents("a: 1\nb: 2\na: 3\n".into(), Path::new("f.yaml")).unwrap_err();
        assert_eq!(
            err.to_string(),
            "f.yaml:3:1: duplicate key \"a\": a key may appear only once in a mapping"
        );
    }
}
