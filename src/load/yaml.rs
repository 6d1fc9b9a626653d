//! YAML documents as JSON values with a position for every field.
//!
//! Kubernetes itself reads YAML by converting it to JSON first (sigs.k8s.io/yaml), so typed
//! objects are decoded from `serde_json::Value` exactly as the API server would decode them
//! (a label written `gpu: true` is a bool, not a string, and is rejected the same way). The
//! position index maps each field path to its line and column, so any later error — a bad
//! quantity, a toleration the API server rejects — can point at the place in the file.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use serde::Deserialize;
use serde::de::{self, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use serde_saphyr::Spanned;

use crate::error::{InputError, Position};

/// One YAML document of a file.
#[derive(Debug, Clone)]
pub struct Document {
    pub value: Value,
    /// Field path (`spec.containers[0].name`) → position of the value.
    positions: HashMap<String, Position>,
}

impl Document {
    /// Position of `path`, or of its nearest enclosing field that has one.
    pub fn position(&self, path: &str) -> Option<Position> {
        let mut p = path;
        loop {
            if let Some(pos) = self.positions.get(p) {
                return Some(*pos);
            }
            if p.is_empty() {
                return None;
            }
            p = parent_path(p);
        }
    }

    /// An error at field `path` of this document.
    pub fn error(&self, file: &Path, path: &str, message: impl Into<String>) -> InputError {
        InputError::new(file, message)
            .at(self.position(path))
            .field(path)
    }

    /// Decode the value at `path` (empty = whole document) into a typed object; a type error
    /// names the field path and its position.
    pub fn decode<T: DeserializeOwned>(
        &self,
        file: &Path,
        path: &str,
        value: &Value,
    ) -> Result<T, InputError> {
        serde_path_to_error::deserialize(value).map_err(|e| {
            let inner = e.path().to_string();
            let full = join_path(path, if inner == "." { "" } else { &inner });
            let message = e.into_inner().to_string();
            let message = match did_you_mean(&message) {
                Some(hint) => format!("{message} (did you mean `{hint}`?)"),
                None => message,
            };
            self.error(file, &full, message)
        })
    }
}

impl Document {
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
        merge_patch(target, &patch, key, patch_path, &mut out.positions);
        out
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

/// RFC 7386 on `target` (at `at`), moving the positions of replaced values from `from`.
fn merge_patch(
    target: &mut Value,
    patch: &Value,
    at: &str,
    from: &str,
    positions: &mut HashMap<String, Position>,
) {
    let Value::Object(fields) = patch else {
        *target = patch.clone();
        let under = |p: &str, root: &str| {
            p == root || p.starts_with(&format!("{root}.")) || p.starts_with(&format!("{root}["))
        };
        positions.retain(|p, _| !under(p, at));
        let moved: Vec<(String, Position)> = positions
            .iter()
            .filter(|(p, _)| under(p, from))
            .map(|(p, pos)| (format!("{at}{}", &p[from.len()..]), *pos))
            .collect();
        positions.extend(moved);
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Some(pos) = positions.get(from).copied() {
        positions.entry(at.to_string()).or_insert(pos);
    }
    let Value::Object(t) = target else {
        unreachable!("made an object above")
    };
    for (k, v) in fields {
        let (child_at, child_from) = (format!("{at}.{k}"), format!("{from}.{k}"));
        if v.is_null() {
            t.remove(k);
            positions.retain(|p, _| {
                !(p == &child_at
                    || p.starts_with(&format!("{child_at}."))
                    || p.starts_with(&format!("{child_at}[")))
            });
        } else {
            let slot = t.entry(k.clone()).or_insert(Value::Null);
            merge_patch(slot, v, &child_at, &child_from, positions);
        }
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

/// `a.b[2].c` → `a.b[2]`; `a.b[2]` → `a.b`; `a` → ``.
fn parent_path(p: &str) -> &str {
    match p.rfind(['.', '[']) {
        Some(i) => &p[..i],
        None => "",
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

/// Parses every document of a YAML file; empty documents are skipped.
pub fn parse_documents(text: &str, file: &Path) -> Result<Vec<Document>, InputError> {
    let nodes: Vec<Spanned<Node>> = serde_saphyr::from_multiple(text).map_err(|e| {
        let position = e.location().map(|l| Position {
            line: l.line() as u32,
            column: l.column() as u32,
        });
        let message = e.without_snippet().to_string();
        InputError::new(file, strip_location(&message)).at(position)
    })?;
    Ok(nodes
        .into_iter()
        .filter(|n| !matches!(n.value, Node::Null))
        .map(|n| {
            let mut positions = HashMap::new();
            let value = n.into_value(String::new(), &mut positions);
            Document { value, positions }
        })
        .collect())
}

/// serde-saphyr prefixes messages with `error: line L column C: `; we print the position ourselves.
fn strip_location(message: &str) -> String {
    let m = message.strip_prefix("error: ").unwrap_or(message);
    // libyaml-style suffix: "… at line 3, column 6"
    let m = match m.rfind(" at line ") {
        Some(i)
            if m[i + 9..]
                .split(", column ")
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())) =>
        {
            &m[..i]
        }
        _ => m,
    };
    if let Some((head, tail)) = m.strip_prefix("line ").and_then(|r| r.split_once(": "))
        && head
            .split(" column ")
            .all(|p| p.chars().all(|c| c.is_ascii_digit()))
    {
        return tail.to_string();
    }
    m.to_string()
}

/// An untyped YAML node whose children carry their positions.
#[derive(Debug)]
enum Node {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Seq(Vec<Spanned<Node>>),
    Map(Vec<(String, Spanned<Node>)>),
}

trait IntoValue {
    fn into_value(self, path: String, positions: &mut HashMap<String, Position>) -> Value;
}

impl IntoValue for Spanned<Node> {
    fn into_value(self, path: String, positions: &mut HashMap<String, Position>) -> Value {
        let loc = self.referenced;
        if loc.line() > 0 {
            positions.insert(
                path.clone(),
                Position {
                    line: loc.line() as u32,
                    column: loc.column() as u32,
                },
            );
        }
        match self.value {
            Node::Null => Value::Null,
            Node::Bool(b) => Value::Bool(b),
            Node::Number(n) => Value::Number(n),
            Node::String(s) => Value::String(s),
            Node::Seq(items) => Value::Array(
                items
                    .into_iter()
                    .enumerate()
                    .map(|(i, n)| n.into_value(format!("{path}[{i}]"), positions))
                    .collect(),
            ),
            Node::Map(entries) => {
                let mut map = Map::with_capacity(entries.len());
                for (k, v) in entries {
                    let child = join_path(&path, &k);
                    map.insert(k, v.into_value(child, positions));
                }
                Value::Object(map)
            }
        }
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
        Node::deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Node, E> {
        Ok(Node::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Node, E> {
        Ok(Node::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Node, E> {
        Ok(Node::Number(v.into()))
    }
    fn visit_i128<E: de::Error>(self, v: i128) -> Result<Node, E> {
        Ok(Node::String(v.to_string()))
    }
    fn visit_u128<E: de::Error>(self, v: u128) -> Result<Node, E> {
        Ok(Node::String(v.to_string()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Node, E> {
        Number::from_f64(v)
            .map(Node::Number)
            .ok_or_else(|| E::custom("non-finite numbers are not valid in Kubernetes objects"))
    }
    fn visit_str<E>(self, v: &str) -> Result<Node, E> {
        Ok(Node::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Node, E> {
        Ok(Node::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element::<Spanned<Node>>()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries: Vec<(String, Spanned<Node>)> =
            Vec::with_capacity(map.size_hint().unwrap_or(0));
        while let Some(key) = map.next_key::<Node>()? {
            let key = match key {
                Node::String(s) => s,
                Node::Bool(b) => b.to_string(),
                Node::Number(n) => n.to_string(),
                Node::Null => "null".to_string(),
                _ => return Err(de::Error::custom("mapping keys must be scalars")),
            };
            let value = map.next_value::<Spanned<Node>>()?;
            entries.push((key, value));
        }
        Ok(Node::Map(entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_point_at_values() {
        let text = "a: 1\n---\nkind: Pod\nspec:\n  containers:\n  - name: x\n    image: y\n";
        let docs = parse_documents(text, Path::new("f.yaml")).unwrap();
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
        let err = parse_documents("a:\n  b: 1\n c: 2\n", Path::new("f.yaml")).unwrap_err();
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
            "---\n# only a comment\n---\na: 1\n---\n",
            Path::new("f.yaml"),
        )
        .unwrap();
        assert_eq!(docs.len(), 1);
    }
}
