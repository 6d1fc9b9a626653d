//! YAML output with an end-of-line comment per field, for `resolve --explain`: every leaf of a
//! resolved pod template says which stage set it (`# podTemplateOverrides[1]`).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use crate::resolve::smp::{self, Schema};

/// Renders `value` as block YAML at `indent`; leaves whose field path (as
/// [`crate::resolve::provenance::flatten`] writes it, relative to `schema`) has a comment get it.
pub fn render(
    value: &Value,
    schema: Option<Schema>,
    comments: &BTreeMap<String, String>,
    indent: usize,
) -> String {
    let mut out = String::new();
    emit_map_body(value, schema, "", comments, indent, &mut out);
    out
}

fn comment(comments: &BTreeMap<String, String>, path: &str) -> String {
    comments
        .get(path)
        .map(|c| format!("  # {c}"))
        .unwrap_or_default()
}

/// A scalar (or empty collection) on one line.
pub fn scalar(v: &Value) -> String {
    match v {
        Value::Object(m) if m.is_empty() => "{}".into(),
        Value::Array(a) if a.is_empty() => "[]".into(),
        Value::String(s) => {
            let plain = serde_saphyr::to_string(s).unwrap_or_else(|_| format!("{s:?}"));
            let plain = plain.trim_end().to_string();
            if plain.contains('\n') {
                serde_json::to_string(s).unwrap_or_default()
            } else {
                plain
            }
        }
        other => other.to_string(),
    }
}

fn is_leaf(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => true,
    }
}

fn key_text(k: &str) -> String {
    scalar(&Value::String(k.to_string()))
}

/// The entries of a map, one per line, at `indent`.
fn emit_map_body(
    value: &Value,
    schema: Option<Schema>,
    path: &str,
    comments: &BTreeMap<String, String>,
    indent: usize,
    out: &mut String,
) {
    let Value::Object(map) = value else {
        let _ = writeln!(
            out,
            "{}{}{}",
            " ".repeat(indent),
            scalar(value),
            comment(comments, path)
        );
        return;
    };
    for (i, (k, v)) in map.iter().enumerate() {
        let _ = i;
        emit_entry(k, v, schema, path, comments, indent, None, out);
    }
}

/// One `key: value` entry; `prefix` replaces the indentation of the first line (for `- ` items).
#[allow(clippy::too_many_arguments)]
fn emit_entry(
    k: &str,
    v: &Value,
    schema: Option<Schema>,
    path: &str,
    comments: &BTreeMap<String, String>,
    indent: usize,
    prefix: Option<&str>,
    out: &mut String,
) {
    let child = if path.is_empty() {
        k.to_string()
    } else {
        format!("{path}.{k}")
    };
    let lead = prefix
        .map(str::to_string)
        .unwrap_or_else(|| " ".repeat(indent));
    if is_leaf(v) {
        let _ = writeln!(
            out,
            "{lead}{}: {}{}",
            key_text(k),
            scalar(v),
            comment(comments, &child)
        );
        return;
    }
    let _ = writeln!(out, "{lead}{}:", key_text(k));
    match v {
        Value::Object(_) => emit_map_body(
            v,
            schema.and_then(|s| smp::field_schema(s, k)),
            &child,
            comments,
            indent + 2,
            out,
        ),
        Value::Array(items) => {
            let meta = schema.and_then(|s| smp::list_meta(s, k));
            for (i, item) in items.iter().enumerate() {
                let item_path = match meta.and_then(|m| item.get(m.merge_key).map(|key| (m, key))) {
                    Some((m, key)) => format!("{child}[{}={}]", m.merge_key, plain(key)),
                    None => format!("{child}[{i}]"),
                };
                let element = meta.and_then(|m| m.element);
                match item {
                    Value::Object(m) if !m.is_empty() => {
                        let item_indent = indent + 2;
                        for (j, (ik, iv)) in m.iter().enumerate() {
                            let first = format!("{}- ", " ".repeat(indent));
                            let prefix = (j == 0).then_some(first.as_str());
                            emit_entry(
                                ik,
                                iv,
                                element,
                                &item_path,
                                comments,
                                item_indent,
                                prefix,
                                out,
                            );
                        }
                    }
                    other => {
                        let _ = writeln!(
                            out,
                            "{}- {}{}",
                            " ".repeat(indent),
                            scalar(other),
                            comment(comments, &item_path)
                        );
                    }
                }
            }
        }
        _ => {}
    }
}

fn plain(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
