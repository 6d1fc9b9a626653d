//! Where every field of a resolved pod template came from.
//!
//! The template is flattened to its leaves, with list items of merge-keyed lists addressed by
//! their key (`spec.containers[name=node].env[name=PET_NNODES].value`) so that inserting an item
//! does not renumber its neighbours. After each stage of the build (runtime, each override, each
//! TrainJob field, defaulting), the leaves that are new or changed are attributed to that stage.

use std::collections::BTreeMap;

use serde_json::Value;

use super::smp::{self, Schema};

/// Field path → the stage that set its current value.
pub type Provenance = BTreeMap<String, String>;

/// The leaves of a value: path → value. Empty objects and lists are leaves too.
pub fn flatten(value: &Value, schema: Option<Schema>) -> BTreeMap<String, Value> {
    let mut out = BTreeMap::new();
    walk(value, schema, String::new(), &mut out);
    out
}

fn walk(value: &Value, schema: Option<Schema>, path: String, out: &mut BTreeMap<String, Value>) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                let child = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match (v, schema.and_then(|s| smp::list_meta(s, k))) {
                    (Value::Array(items), Some(meta)) if !items.is_empty() => {
                        for (i, item) in items.iter().enumerate() {
                            let key = item.get(meta.merge_key).map(scalar_text);
                            let item_path = match key {
                                Some(k) => format!("{child}[{}={k}]", meta.merge_key),
                                None => format!("{child}[{i}]"),
                            };
                            walk(item, meta.element, item_path, out);
                        }
                    }
                    _ => walk(v, schema.and_then(|s| smp::field_schema(s, k)), child, out),
                }
            }
        }
        Value::Array(items) if !items.is_empty() => {
            for (i, item) in items.iter().enumerate() {
                walk(item, None, format!("{path}[{i}]"), out);
            }
        }
        _ => {
            out.insert(path, value.clone());
        }
    }
}

/// The outermost list addressed by index in a path (`spec.tolerations[0].key` →
/// `spec.tolerations`): lists without a merge key, which a patch replaces whole.
pub fn atomic_list(path: &str) -> Option<&str> {
    let bytes = path.as_bytes();
    (0..bytes.len().saturating_sub(1))
        .find(|&i| bytes[i] == b'[' && bytes[i + 1].is_ascii_digit())
        .map(|i| &path[..i])
}

fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Tracks one template through the build stages.
#[derive(Debug, Clone, Default)]
pub struct Tracker {
    leaves: BTreeMap<String, Value>,
    pub provenance: Provenance,
}

impl Tracker {
    /// Records `value` as the result of `stage`: new or changed leaves are attributed to it,
    /// vanished leaves are forgotten.
    ///
    /// A list without a merge key is replaced whole, so when any of its items changed, every
    /// leaf under it belongs to the stage (an unchanged value at the same index is a new item).
    pub fn record(&mut self, value: &Value, schema: Schema, stage: &str) {
        let leaves = flatten(value, Some(schema));
        let changed = |path: &String, v: &Value| self.leaves.get(path) != Some(v);
        let mut replaced_lists: Vec<&str> = leaves
            .iter()
            .filter(|(path, v)| changed(path, v))
            .chain(
                self.leaves
                    .iter()
                    .filter(|(path, _)| !leaves.contains_key(*path)),
            )
            .filter_map(|(path, _)| atomic_list(path))
            .collect();
        replaced_lists.sort_unstable();
        replaced_lists.dedup();
        let in_replaced = |path: &str| {
            atomic_list(path).is_some_and(|l| replaced_lists.binary_search(&l).is_ok())
        };
        let mut provenance: Provenance = self
            .provenance
            .iter()
            .filter(|(p, _)| leaves.contains_key(*p))
            .map(|(p, s)| (p.clone(), s.clone()))
            .collect();
        for (path, v) in &leaves {
            if changed(path, v) || in_replaced(path) {
                provenance.insert(path.clone(), stage.to_string());
            }
        }
        self.provenance = provenance;
        self.leaves = leaves;
    }
}
