//! Go's typed round trip of a pod spec (`json.Unmarshal` into `k8sV1.Pod`, `json.Marshal`
//! with `omitempty`), as `PodSpec.Merge` does before the strategic merge.

use k8s_openapi::api::core::v1 as k8s;
use serde_json::Value;

use super::*;
use crate::model::validate::FieldError;

/// What `PodSpec.Merge` does to each side before the strategic merge: `json.Unmarshal` into a
/// `k8sV1.Pod` (a type error rejects the config; unknown fields are dropped) and `json.Marshal`
/// back. Go's `omitempty` then drops empty lists, empty maps, empty strings and `false` of
/// plain (non-pointer) fields, so such a value in the task's pod spec cannot clear the default's
/// (`tolerations: []` keeps the default tolerations). `apiVersion`, `kind` and `status` are left
/// out.
///
/// The caller adds the one non-`omitempty` list that matters: a missing `spec.containers`
/// marshals as `null`.
pub(super) fn go_pod_roundtrip(
    raw: &Value,
    path: &str,
    errs: &mut Vec<FieldError>,
) -> Option<Value> {
    let Value::Object(map) = raw else {
        errs.push(field_error(
            path,
            format!("expected a Pod object, got {}", type_name(raw)),
        ));
        return None;
    };
    let mut input = map.clone();
    for key in ["apiVersion", "kind", "status"] {
        input.shift_remove(key);
    }
    let pod: k8s::Pod = match serde_path_to_error::deserialize(&Value::Object(input)) {
        Ok(p) => p,
        Err(e) => {
            let inner = e.path().to_string();
            let at = if inner == "." {
                path.to_string()
            } else {
                format!("{path}.{inner}")
            };
            errs.push(field_error(&at, e.into_inner().to_string()));
            return None;
        }
    };
    let mut out = serde_json::to_value(&pod).ok()?;
    if let Value::Object(m) = &mut out {
        m.shift_remove("apiVersion");
        m.shift_remove("kind");
        // k8s-openapi writes a missing `containers` as `[]`; Go's is a nil slice (see above).
        let had_containers = map
            .get("spec")
            .and_then(|s| s.get("containers"))
            .is_some_and(|c| !c.is_null());
        if !had_containers && let Some(Value::Object(spec)) = m.get_mut("spec") {
            spec.shift_remove("containers");
        }
    }
    omit_empty(&mut out);
    Some(out)
}

/// Map-typed fields (`map[string]…` with `omitempty`): empty → omitted.
pub(super) const GO_MAP_FIELDS: &[&str] = &[
    "labels",
    "annotations",
    "nodeSelector",
    "limits",
    "requests",
    "overhead",
    "matchLabels",
];
/// Plain `bool` fields with `omitempty`: `false` → omitted.
pub(super) const GO_PLAIN_BOOLS: &[&str] = &[
    "hostNetwork",
    "hostPID",
    "hostIPC",
    "stdin",
    "stdinOnce",
    "tty",
];
/// Lists without `omitempty`: kept even when empty.
pub(super) const GO_REQUIRED_LISTS: &[&str] = &["containers", "nodeSelectorTerms"];
/// Strings without `omitempty`: kept even when empty.
pub(super) const GO_REQUIRED_STRINGS: &[&str] = &[
    "name",
    "mountPath",
    "devicePath",
    "key",
    "operator",
    "topologyKey",
    "whenUnsatisfiable",
    "ip",
    "path",
    "claimName",
    "fieldPath",
];

pub(super) fn omit_empty(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for child in map.values_mut() {
                omit_empty(child);
            }
            map.retain(|key, v| {
                let k = key.as_str();
                !match v {
                    Value::Null => true,
                    Value::Array(a) => a.is_empty() && !GO_REQUIRED_LISTS.contains(&k),
                    Value::Object(o) => o.is_empty() && GO_MAP_FIELDS.contains(&k),
                    Value::String(s) => s.is_empty() && !GO_REQUIRED_STRINGS.contains(&k),
                    Value::Bool(false) => GO_PLAIN_BOOLS.contains(&k),
                    _ => false,
                }
            });
        }
        Value::Array(items) => items.iter_mut().for_each(omit_empty),
        _ => {}
    }
}
