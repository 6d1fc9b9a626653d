//! Renaming inside resolved objects: every occurrence of one name replaced by another, in
//! strings and map keys. `resolve::alike` resolves TrainJobs that differ only in their name
//! once, under a stand-in name, and renames the result for each of them.

use serde_json::Value;

/// `s` with every `from` replaced by `to` (left alone, not reallocated, when it has none).
pub(super) fn replace(s: &mut String, from: &str, to: &str) {
    if s.contains(from) {
        *s = s.replace(from, to);
    }
}

/// `v` with every `from` replaced by `to` in its strings and map keys, at any depth.
pub(super) fn replace_in_value(v: &mut Value, from: &str, to: &str) {
    match v {
        Value::String(s) => replace(s, from, to),
        Value::Array(items) => items.iter_mut().for_each(|i| replace_in_value(i, from, to)),
        Value::Object(map) => {
            if map.keys().any(|k| k.contains(from)) {
                *map = std::mem::take(map)
                    .into_iter()
                    .map(|(k, v)| (k.replace(from, to), v))
                    .collect();
            }
            map.values_mut().for_each(|i| replace_in_value(i, from, to));
        }
        _ => {}
    }
}
