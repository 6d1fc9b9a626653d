//! Small helpers on JSON values and field errors shared by the Determined modules.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::model::validate::FieldError;

pub(super) fn decode<T: serde::de::DeserializeOwned>(
    value: &Value,
    path: &str,
) -> Result<T, Vec<FieldError>> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let inner = e.path().to_string();
        let at = match (path.is_empty(), inner == ".") {
            (true, true) => String::new(),
            (true, false) => inner,
            (false, true) => path.to_string(),
            (false, false) => format!("{path}.{inner}"),
        };
        vec![FieldError {
            path: at,
            message: e.into_inner().to_string(),
        }]
    })
}

pub(super) fn field_error(path: &str, message: String) -> FieldError {
    FieldError {
        path: path.to_string(),
        message,
    }
}

pub(super) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

pub(super) fn take_object(map: &mut Map<String, Value>, key: &str) -> Map<String, Value> {
    match map.shift_remove(key) {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

pub(super) fn object_entry<'a>(
    map: &'a mut Map<String, Value>,
    key: &str,
) -> &'a mut Map<String, Value> {
    let v = map.entry(key).or_insert_with(|| json!({}));
    if !v.is_object() {
        *v = json!({});
    }
    v.as_object_mut().expect("an object")
}

pub(super) fn str_field<'a>(map: &'a Map<String, Value>, key: &str) -> &'a str {
    map.get(key).and_then(Value::as_str).unwrap_or("")
}

pub(super) fn find_container<'a>(pod: &'a Value, name: &str) -> Option<&'a Value> {
    pod.pointer("/spec/containers")?
        .as_array()?
        .iter()
        .find(|c| c.get("name").and_then(Value::as_str) == Some(name))
}

pub(super) fn container_names(pod: &Value) -> Vec<String> {
    pod.pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("name").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// The fields of `default` (metadata and spec, one level down) that `user` does not set: what a
/// replacing pod spec loses.
pub(super) fn replaced_fields(default: &Value, user: &Value) -> Vec<String> {
    let mut lost = BTreeSet::new();
    for section in ["metadata", "spec"] {
        let Some(Value::Object(d)) = default.get(section) else {
            continue;
        };
        for key in d.keys() {
            if user.get(section).and_then(|u| u.get(key)).is_none() {
                lost.insert(format!("{section}.{key}"));
            }
        }
    }
    lost.into_iter().collect()
}

pub(super) fn describe_list(items: &[String], one: &str, many: &str) -> String {
    format!(
        "{} {}",
        items.join(", "),
        if items.len() == 1 { one } else { many }
    )
}

/// `spec.go: validatePodLabelValue`: a value that is not a valid label value has disallowed
/// characters replaced by `_`, leading non-alphanumerics stripped, is cut to 63 characters and
/// has trailing non-alphanumerics stripped; `invalid_value` if still invalid.
pub(super) fn pod_label_value(value: &str) -> String {
    if is_label_value(value) {
        return value.to_string();
    }
    let replaced: String = value
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut fixed = replaced
        .trim_start_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_string();
    fixed.truncate(63);
    let fixed = fixed.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
    if is_label_value(fixed) {
        fixed.to_string()
    } else {
        "invalid_value".into()
    }
}

pub(super) fn is_label_value(v: &str) -> bool {
    v.is_empty()
        || (v.len() <= 63
            && v.starts_with(|c: char| c.is_ascii_alphanumeric())
            && v.ends_with(|c: char| c.is_ascii_alphanumeric())
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
}
