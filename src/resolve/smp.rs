//! Kubernetes strategic merge patch (SMP) over `serde_json::Value`.
//!
//! A port of `StrategicMergePatch` from `k8s.io/apimachinery/pkg/util/strategicpatch/patch.go`
//! (v0.36): `mergeMap`, `mergeSlice`, `mergeSliceWithSpecialElements`,
//! `mergeSliceWithoutSpecialElements`, `normalizeElementOrder`, `mergeSortedSlice` and
//! `deduplicateScalars`. Go reads each field's `patchStrategy`/`patchMergeKey` struct tags by
//! reflection; here a table ([`Schema`], [`field_schema`], [`list_meta`]) holds the tags of the
//! types schedsim patches (`k8s.io/api` core/v1 and batch/v1, jobset v1alpha2).
//!
//! In short: maps merge recursively, `null` deletes a key, scalars and lists without a strategy
//! are replaced, merge-keyed lists are merged item by item and merge lists of scalars are unions.
//! As upstream, a patch value whose key is absent from the original is copied verbatim (nested
//! `null`s and directives included).
//!
//! Where this port differs from upstream (none of it reachable from a typed Go marshal, which is
//! what Kubeflow Trainer sends):
//! * A field missing from the table is merged as a plain map (maps merged, lists replaced);
//!   upstream fails with "unable to find api field in struct …" when a field unknown to the Go
//!   type is present on both sides.
//! * The `kubectl apply` directives `$retainKeys`, `$setElementOrder/<list>` and
//!   `$deleteFromPrimitiveList/<list>` are rejected with [`SmpError::UnsupportedDirective`].
//!   `$patch: delete|replace` is supported.

use serde_json::{Map, Value};

/// The Kubernetes types whose patch metadata drives a merge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Schema {
    /// `core/v1.PodTemplateSpec`.
    PodTemplateSpec,
    /// `meta/v1.ObjectMeta`.
    ObjectMeta,
    /// `core/v1.PodSpec`.
    PodSpec,
    /// `core/v1.Container`; also `EphemeralContainer`, whose shared fields carry the same tags.
    Container,
    /// `core/v1.Volume` (no tagged fields).
    Volume,
    /// `core/v1.Affinity` (no tagged fields: its term lists are replaced).
    Affinity,
    /// `core/v1.PodSecurityContext` (no tagged fields).
    PodSecurityContext,
    /// `core/v1.SecurityContext` (no tagged fields).
    SecurityContext,
    /// `core/v1.ResourceRequirements` (no tagged fields: `claims` is replaced).
    ResourceRequirements,
    /// `batch/v1.JobTemplateSpec`.
    JobTemplateSpec,
    /// `batch/v1.JobSpec`.
    JobSpec,
    /// jobset `v1alpha2.JobSetSpec`.
    JobSetSpec,
    /// jobset `v1alpha2.ReplicatedJob`.
    ReplicatedJob,
}

/// A list field with `patchStrategy:"merge"` and a `patchMergeKey`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListMeta {
    /// The field that identifies an item (`patchMergeKey`).
    pub merge_key: &'static str,
    /// The items' schema; `None` when they have no tagged fields of their own.
    pub element: Option<Schema>,
}

/// Why a merge failed. The messages follow upstream's (`mergepatch/errors.go`, `patch.go`);
/// values are rendered as JSON where Go prints them with `%v`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SmpError {
    /// The original or the patch is not a JSON object (`ErrBadJSONDoc`).
    #[error("invalid JSON document")]
    BadJsonDoc,
    /// An item of a merge-keyed list lacks the key (`ErrNoMergeKey`).
    #[error("map: {map} does not contain declared merge key: {key}")]
    NoMergeKey { map: String, key: &'static str },
    /// A `$patch` value other than `delete`/`replace` (`ErrBadPatchType`).
    #[error("unknown patch type: {directive} in map: {map}")]
    BadPatchType { directive: String, map: String },
    /// `$patch: merge` inside a list.
    #[error("merging lists cannot yet be specified in the patch")]
    MergeDirectiveInList,
    /// Maps in a merge list of scalars.
    #[error("cannot merge lists without merge key for type {0}")]
    NoMergeKeyForList(&'static str),
    /// A merge list whose items are lists (`ErrNoListOfLists`).
    #[error("lists of lists are not supported")]
    ListOfLists,
    /// A merge list whose items differ in type (or are `null`, on which Go panics).
    #[error("list element types are not identical: {0}")]
    MixedListTypes(String),
    /// A scalar where a map is required (`ErrBadArgType`).
    #[error("expected a {expected}, but received a {actual}")]
    BadArgType {
        expected: &'static str,
        actual: &'static str,
    },
    /// A `kubectl apply` parallel-list directive, which this port does not implement.
    #[error("unsupported directive: {0}")]
    UnsupportedDirective(String),
}

const DIRECTIVE: &str = "$patch";

/// Patch metadata of one field.
#[derive(Clone, Copy)]
enum FieldMeta {
    /// An object of a known type.
    Struct(Schema),
    /// `patchStrategy:"merge"` with a `patchMergeKey`.
    Keyed(ListMeta),
    /// `patchStrategy:"merge"` on a list of scalars: union.
    Scalars,
}

/// The table: struct tags from `k8s.io/api` core/v1 and batch/v1 types.go and jobset
/// `api/jobset/v1alpha2/jobset_types.go`. Every other field is merged as a map or replaced.
fn lookup(schema: Schema, field: &str) -> Option<FieldMeta> {
    use FieldMeta::{Keyed, Scalars, Struct};
    use Schema::*;
    let keyed = |merge_key, element| Some(Keyed(ListMeta { merge_key, element }));
    match (schema, field) {
        (PodTemplateSpec | JobTemplateSpec, "metadata") => Some(Struct(ObjectMeta)),
        (PodTemplateSpec, "spec") => Some(Struct(PodSpec)),
        (JobTemplateSpec, "spec") => Some(Struct(JobSpec)),
        (JobSpec, "template") => Some(Struct(PodTemplateSpec)),
        (JobSetSpec, "replicatedJobs") => keyed("name", Some(ReplicatedJob)),
        (ReplicatedJob, "template") => Some(Struct(JobTemplateSpec)),
        (ReplicatedJob, "dependsOn") => keyed("name", None),
        (ObjectMeta, "finalizers") => Some(Scalars),
        (ObjectMeta, "ownerReferences") => keyed("uid", None),
        (PodSpec, "containers" | "initContainers" | "ephemeralContainers") => {
            keyed("name", Some(Container))
        }
        // `merge,retainKeys`: retainKeys only matters to `$retainKeys`, which is unsupported.
        (PodSpec, "volumes") => keyed("name", Some(Volume)),
        (PodSpec, "resourceClaims") => keyed("name", None),
        (PodSpec, "imagePullSecrets" | "schedulingGates") => keyed("name", None),
        (PodSpec, "hostAliases") => keyed("ip", None),
        // The list-map keys are topologyKey + whenUnsatisfiable, the patch merge key only the first.
        (PodSpec, "topologySpreadConstraints") => keyed("topologyKey", None),
        (PodSpec, "affinity") => Some(Struct(Affinity)),
        (PodSpec, "securityContext") => Some(Struct(PodSecurityContext)),
        (PodSpec | Container, "resources") => Some(Struct(ResourceRequirements)),
        (Container, "env") => keyed("name", None),
        (Container, "volumeMounts") => keyed("mountPath", None),
        (Container, "ports") => keyed("containerPort", None),
        (Container, "volumeDevices") => keyed("devicePath", None),
        (Container, "securityContext") => Some(Struct(SecurityContext)),
        _ => None,
    }
}

/// The merge key and element schema of the merge-keyed list at `field` of a `schema` object,
/// e.g. `(PodSpec, "containers")` → `name`/[`Schema::Container`]; `None` for other fields.
pub fn list_meta(schema: Schema, field: &str) -> Option<ListMeta> {
    match lookup(schema, field) {
        Some(FieldMeta::Keyed(meta)) => Some(meta),
        _ => None,
    }
}

/// The schema of the object-valued `field` of a `schema` object, e.g. `(PodTemplateSpec,
/// "spec")` → [`Schema::PodSpec`]; `None` if it is not a known struct (it merges as a plain map).
pub fn field_schema(schema: Schema, field: &str) -> Option<Schema> {
    match lookup(schema, field) {
        Some(FieldMeta::Struct(s)) => Some(s),
        _ => None,
    }
}

/// Applies `patch` onto `original` as `StrategicMergePatch(original, patch, <schema type>)`
/// does and returns the result. Both must be JSON objects (`null` counts as `{}`, as Go's
/// unmarshal into a map does).
pub fn strategic_merge(original: &Value, patch: &Value, schema: Schema) -> Result<Value, SmpError> {
    let empty = Map::new();
    let patch = match patch {
        Value::Object(p) => p,
        Value::Null => &empty,
        _ => return Err(SmpError::BadJsonDoc),
    };
    let original = match original {
        Value::Object(o) => o.clone(),
        Value::Null => Map::new(),
        _ => return Err(SmpError::BadJsonDoc),
    };
    merge_map(original, patch, Some(schema)).map(Value::Object)
}

/// `mergeMap`: a `$patch` directive acts on the whole map; otherwise each patch key is merged
/// into `original` (`null` deletes, absent keys are copied, same-typed maps and lists recurse,
/// everything else is replaced).
fn merge_map(
    mut original: Map<String, Value>,
    patch: &Map<String, Value>,
    schema: Option<Schema>,
) -> Result<Map<String, Value>, SmpError> {
    if let Some(directive) = patch.get(DIRECTIVE) {
        // handleDirectiveInMergeMap
        return match directive.as_str() {
            Some("replace") => {
                let mut replaced = patch.clone();
                replaced.shift_remove(DIRECTIVE);
                Ok(replaced)
            }
            Some("delete") => Ok(Map::new()),
            _ => Err(bad_patch_type(directive, patch)),
        };
    }
    if let Some(key) = patch.keys().find(|k| is_parallel_list_directive(k)) {
        return Err(SmpError::UnsupportedDirective(key.clone()));
    }
    for (key, patch_value) in patch {
        if patch_value.is_null() {
            original.shift_remove(key);
            continue;
        }
        let Some(value) = original.get_mut(key) else {
            original.insert(key.clone(), patch_value.clone());
            continue;
        };
        let meta = schema.and_then(|s| lookup(s, key));
        match (value, patch_value) {
            (Value::Object(o), Value::Object(p)) => {
                let child = match meta {
                    Some(FieldMeta::Struct(s)) => Some(s),
                    _ => None,
                };
                *o = merge_map(std::mem::take(o), p, child)?;
            }
            (Value::Array(o), Value::Array(p)) => {
                *o = match meta {
                    Some(FieldMeta::Keyed(list)) => merge_slice(std::mem::take(o), p, Some(list))?,
                    Some(FieldMeta::Scalars) => merge_slice(std::mem::take(o), p, None)?,
                    _ => p.clone(),
                };
            }
            (value, patch_value) => *value = patch_value.clone(),
        }
    }
    Ok(original)
}

fn is_parallel_list_directive(key: &str) -> bool {
    key == "$retainKeys"
        || key.starts_with("$setElementOrder")
        || key.starts_with("$deleteFromPrimitiveList")
}

/// `mergeSlice` for a `patchStrategy:"merge"` list; `meta` is `None` for a list of scalars.
/// Scalars are unioned (`deduplicateScalars`); maps are merged by key after applying the
/// `$patch` items. The result is ordered by `normalizeElementOrder`: patch items in patch
/// order, original-only items in original order, interleaved by `mergeSortedSlice`.
fn merge_slice(
    original: Vec<Value>,
    patch: &[Value],
    meta: Option<ListMeta>,
) -> Result<Vec<Value>, SmpError> {
    if original.is_empty() && patch.is_empty() {
        return Ok(original);
    }
    let of_maps = element_kind(&original, patch)? == Kind::Object;
    let (original, patch, merged) = match (of_maps, meta) {
        (true, Some(meta)) => {
            let (original, patch) =
                merge_slice_with_special_elements(original, patch, meta.merge_key)?;
            let merged = merge_slice_without_special_elements(original.clone(), &patch, meta)?;
            (original, patch, merged)
        }
        // The only merge list of scalars in the table is ObjectMeta.finalizers ([]string).
        (true, None) => return Err(SmpError::NoMergeKeyForList("string")),
        (false, _) => {
            let both = original.iter().chain(patch).cloned().collect();
            (original, patch.to_vec(), deduplicate_scalars(both))
        }
    };
    let key = meta.map(|m| m.merge_key);
    let (patch_items, server_only) = match key {
        None => merged.into_iter().partition(|v| patch.contains(v)),
        Some(key) => partition_maps(merged, &patch, key)?,
    };
    normalize_element_order(patch_items, server_only, &patch, &original, key)
}

/// `mergeSliceWithSpecialElements`: applies the `$patch` items of a list of maps — `delete`
/// removes the original items with that key, `replace` makes the other patch items the new
/// original — and returns the original and the remaining patch items.
fn merge_slice_with_special_elements(
    mut original: Vec<Value>,
    patch: &[Value],
    key: &'static str,
) -> Result<(Vec<Value>, Vec<Value>), SmpError> {
    let mut plain = Vec::new();
    let mut replace = false;
    for item in patch {
        let Some(directive) = item.get(DIRECTIVE) else {
            plain.push(item.clone());
            continue;
        };
        match directive.as_str() {
            Some("delete") => {
                let Some(value) = item.get(key) else {
                    return Err(no_merge_key(item, key));
                };
                original.retain(|o| o.get(key) != Some(value));
            }
            Some("replace") => replace = true,
            Some("merge") => return Err(SmpError::MergeDirectiveInList),
            _ => return Err(bad_patch_type(directive, item)),
        }
    }
    Ok(if replace {
        (plain, Vec::new())
    } else {
        (original, plain)
    })
}

/// `mergeSliceWithoutSpecialElements`: merges each patch item into the first original item
/// with the same key, or appends it.
fn merge_slice_without_special_elements(
    mut original: Vec<Value>,
    patch: &[Value],
    meta: ListMeta,
) -> Result<Vec<Value>, SmpError> {
    for item in patch {
        let value = merge_key_value(item, meta.merge_key)?;
        match original
            .iter()
            .position(|o| o.get(meta.merge_key) == Some(value))
        {
            Some(i) => {
                if let (Value::Object(o), Value::Object(p)) = (&mut original[i], item) {
                    *o = merge_map(std::mem::take(o), p, meta.element)?;
                }
            }
            None => original.push(item.clone()),
        }
    }
    Ok(original)
}

/// `partitionMapsByPresentInList`: splits `merged` into the items whose key is in `patch` and
/// the rest, keeping their order.
fn partition_maps(
    merged: Vec<Value>,
    patch: &[Value],
    key: &'static str,
) -> Result<(Vec<Value>, Vec<Value>), SmpError> {
    let (mut in_patch, mut server_only) = (Vec::new(), Vec::new());
    for item in merged {
        let value = merge_key_value(&item, key)?;
        if patch.iter().any(|p| p.get(key) == Some(value)) {
            in_patch.push(item);
        } else {
            server_only.push(item);
        }
    }
    Ok((in_patch, server_only))
}

/// `normalizeElementOrder`: sorts the patch items by `patch_order` and the server-only items
/// by `server_order`, then interleaves them with [`merge_sorted_slice`].
fn normalize_element_order(
    patch_items: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    key: Option<&'static str>,
) -> Result<Vec<Value>, SmpError> {
    let patch_items = normalize_slice_order(patch_items, patch_order, key)?;
    let server_only = normalize_slice_order(server_only, server_order, key)?;
    Ok(merge_sorted_slice(
        server_only,
        patch_items,
        server_order,
        key,
    ))
}

/// `normalizeSliceOrder`: a stable sort by position in `order`; for maps, every item in both
/// lists must carry the key and `$patch: delete` items go last. Every item reaching here is
/// found in `order` (see [`merge_slice`]), so Go's `less` is a strict order and any stable sort
/// agrees with `sort.SliceStable`.
fn normalize_slice_order(
    to_sort: Vec<Value>,
    order: &[Value],
    key: Option<&'static str>,
) -> Result<Vec<Value>, SmpError> {
    let (mut sorted, deleted): (Vec<Value>, Vec<Value>) = match key {
        Some(key) => {
            for item in to_sort.iter().chain(order) {
                merge_key_value(item, key)?;
            }
            to_sort
                .into_iter()
                .partition(|v| v.get(DIRECTIVE).and_then(Value::as_str) != Some("delete"))
        }
        None => (to_sort, Vec::new()),
    };
    sorted.sort_by_key(|v| index(order, v, key).unwrap_or(usize::MAX));
    sorted.extend(deleted);
    Ok(sorted)
}

/// `mergeSortedSlice`: walks both lists, emitting the server-only item first only when both
/// items are in `server_order` and the server-only one comes earlier there; otherwise the
/// patch item goes first. So `[A,B,C]` + `[B',D]` → `[A,B',D,C]` and `[A,B]` + `[C]` →
/// `[C,A,B]`.
fn merge_sorted_slice(
    server_only: Vec<Value>,
    patch_items: Vec<Value>,
    server_order: &[Value],
    key: Option<&str>,
) -> Vec<Value> {
    let mut out = Vec::with_capacity(server_only.len() + patch_items.len());
    let mut left = server_only.into_iter().peekable();
    let mut right = patch_items.into_iter().peekable();
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => matches!(
                (index(server_order, l, key), index(server_order, r, key)),
                (Some(li), Some(ri)) if li < ri
            ),
        };
        out.extend(if take_left { left.next() } else { right.next() });
    }
    out
}

/// `index`: the position of the first item of `list` with the same merge-key value as `item`
/// (the same value, for scalars).
fn index(list: &[Value], item: &Value, key: Option<&str>) -> Option<usize> {
    let wanted = identity(item, key);
    list.iter().position(|v| identity(v, key) == wanted)
}

/// What [`index`] compares: the merge-key value of a map (`None` if absent), or the scalar.
fn identity<'a>(item: &'a Value, key: Option<&str>) -> Option<&'a Value> {
    match key {
        Some(key) => item.get(key),
        None => Some(item),
    }
}

/// `deduplicateScalars`: drops repeated values, moving the last item into each hole (so the
/// order is not kept; [`normalize_element_order`] restores it).
fn deduplicate_scalars(mut items: Vec<Value>) -> Vec<Value> {
    let mut i = 0;
    while i + 1 < items.len() {
        let mut j = i + 1;
        while j < items.len() {
            if items[i] == items[j] {
                items.swap_remove(j);
            } else {
                j += 1;
            }
        }
        i += 1;
    }
    items
}

/// Go's dynamic type of a decoded JSON value (`reflect.TypeOf`), as far as SMP tells them apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Null,
    Bool,
    Int,
    Float,
    String,
    Array,
    Object,
}

impl Kind {
    fn of(v: &Value) -> Kind {
        match v {
            Value::Null => Kind::Null,
            Value::Bool(_) => Kind::Bool,
            // apimachinery's json decoder yields int64 where the number fits, else float64.
            Value::Number(n) if n.is_i64() => Kind::Int,
            Value::Number(_) => Kind::Float,
            Value::String(_) => Kind::String,
            Value::Array(_) => Kind::Array,
            Value::Object(_) => Kind::Object,
        }
    }

    fn go_type(self) -> &'static str {
        match self {
            Kind::Null => "nil",
            Kind::Bool => "bool",
            Kind::Int => "int64",
            Kind::Float => "float64",
            Kind::String => "string",
            Kind::Array => "[]interface {}",
            Kind::Object => "map[string]interface {}",
        }
    }
}

/// `sliceElementType`: the common kind of the items of both (not both empty) lists.
fn element_kind(original: &[Value], patch: &[Value]) -> Result<Kind, SmpError> {
    let mut kinds = original.iter().chain(patch).map(Kind::of);
    let first = kinds.next().unwrap_or(Kind::Null);
    if first == Kind::Array {
        return Err(SmpError::ListOfLists);
    }
    if first == Kind::Null || kinds.any(|k| k != first) {
        let lists = Value::Array(vec![original.to_vec().into(), patch.to_vec().into()]);
        return Err(SmpError::MixedListTypes(lists.to_string()));
    }
    Ok(first)
}

/// The merge-key value of a list item, which must be a map holding the key.
fn merge_key_value<'a>(item: &'a Value, key: &'static str) -> Result<&'a Value, SmpError> {
    match item {
        Value::Object(map) => map.get(key).ok_or_else(|| no_merge_key(item, key)),
        other => Err(SmpError::BadArgType {
            expected: Kind::Object.go_type(),
            actual: Kind::of(other).go_type(),
        }),
    }
}

fn no_merge_key(item: &Value, key: &'static str) -> SmpError {
    SmpError::NoMergeKey {
        map: item.to_string(),
        key,
    }
}

fn bad_patch_type(directive: &Value, map: &impl serde::Serialize) -> SmpError {
    let directive = match directive {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let map = serde_json::to_string(map).unwrap_or_default();
    SmpError::BadPatchType { directive, map }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn merge(original: Value, patch: Value, schema: Schema) -> Value {
        strategic_merge(&original, &patch, schema).expect("merge succeeds")
    }

    /// Applies the patches in order, each onto the previous result.
    fn merge_all(original: Value, patches: &[Value], schema: Schema) -> Value {
        patches
            .iter()
            .fold(original, |acc, p| merge(acc, p.clone(), schema))
    }

    fn keys(list: &Value, key: &str) -> Vec<String> {
        list.as_array()
            .map(|items| {
                items
                    .iter()
                    .map(|i| i[key].as_str().unwrap_or("?").to_string())
                    .collect()
            })
            .unwrap_or_default()
    }

    fn env(pairs: &[(&str, &str)]) -> Value {
        pairs
            .iter()
            .map(|(n, v)| json!({"name": n, "value": v}))
            .collect()
    }

    // ---- §D derived cases -------------------------------------------------------------

    #[test]
    fn d1_tolerations_are_replaced_wholesale() {
        let runtime = json!({"tolerations": [{"key": "a", "operator": "Exists"}]});
        let patch =
            json!({"tolerations": [{"key": "b", "operator": "Exists", "effect": "NoSchedule"}]});
        let merged = merge(runtime, patch, Schema::PodSpec);
        assert_eq!(
            merged["tolerations"],
            json!([{"key": "b", "operator": "Exists", "effect": "NoSchedule"}])
        );
        // Two patches: the last one's list only.
        let merged = merge_all(
            merged,
            &[json!({"tolerations": [{"key": "c", "operator": "Exists"}]})],
            Schema::PodSpec,
        );
        assert_eq!(
            merged["tolerations"],
            json!([{"key": "c", "operator": "Exists"}])
        );
    }

    #[test]
    fn d2_node_selector_is_merged_per_key() {
        let runtime = json!({"nodeSelector": {"pool": "gpu", "zone": "a"}});
        let patch = json!({"nodeSelector": {"zone": "b", "accel": "h100"}});
        let merged = merge(runtime, patch, Schema::PodSpec);
        assert_eq!(
            merged["nodeSelector"],
            json!({"pool": "gpu", "zone": "b", "accel": "h100"})
        );
    }

    #[test]
    fn node_selector_keeps_runtime_keys() {
        let runtime = json!({"spec": {"nodeSelector": {"pool": "gpu", "zone": "a"}}});
        let patch = json!({"spec": {"nodeSelector": {"accelerator": "h100"}}});
        let merged = merge(runtime, patch, Schema::PodTemplateSpec);
        assert_eq!(
            merged["spec"]["nodeSelector"],
            json!({"pool": "gpu", "zone": "a", "accelerator": "h100"})
        );
    }

    #[test]
    fn d3_merge_keyed_list_ordering() {
        let container = |e: Value| json!({"containers": [{"name": "c", "env": e}]});
        let cases = [
            (
                env(&[("A", "1"), ("B", "1"), ("C", "1")]),
                env(&[("B", "2"), ("D", "2")]),
                env(&[("A", "1"), ("B", "2"), ("D", "2"), ("C", "1")]),
            ),
            (
                env(&[("A", "1"), ("B", "1")]),
                env(&[("C", "2")]),
                env(&[("C", "2"), ("A", "1"), ("B", "1")]),
            ),
            (
                env(&[("INIT_ENV", "original_init"), ("DATASET_PATH", "runtime")]),
                env(&[
                    ("INIT_ENV", "override_init"),
                    ("NEW_VALUE", "from_overrides"),
                ]),
                env(&[
                    ("INIT_ENV", "override_init"),
                    ("NEW_VALUE", "from_overrides"),
                    ("DATASET_PATH", "runtime"),
                ]),
            ),
        ];
        for (runtime, patch, expected) in cases {
            let merged = merge(container(runtime), container(patch), Schema::PodSpec);
            assert_eq!(merged["containers"][0]["env"], expected);
        }
        // The same rule on containers.
        let names = |ns: &[&str]| -> Value { ns.iter().map(|n| json!({"name": n})).collect() };
        let merged = merge(
            json!({"containers": names(&["a", "b", "c"])}),
            json!({"containers": names(&["b", "d"])}),
            Schema::PodSpec,
        );
        assert_eq!(keys(&merged["containers"], "name"), ["a", "b", "d", "c"]);
    }

    #[test]
    fn d4_volume_mounts_merge_on_mount_path() {
        let runtime = json!({"containers": [{"name": "node",
            "volumeMounts": [{"name": "initializer", "mountPath": "/workspace"}]}]});
        let same_path = json!({"containers": [{"name": "node",
            "volumeMounts": [{"name": "data", "mountPath": "/workspace"}]}]});
        let merged = merge(runtime.clone(), same_path, Schema::PodSpec);
        assert_eq!(
            merged["containers"][0]["volumeMounts"],
            json!([{"name": "data", "mountPath": "/workspace"}])
        );
        let other_path = json!({"containers": [{"name": "node",
            "volumeMounts": [{"name": "initializer", "mountPath": "/data"}]}]});
        let merged = merge(runtime, other_path, Schema::PodSpec);
        assert_eq!(
            merged["containers"][0]["volumeMounts"],
            json!([
                {"name": "initializer", "mountPath": "/data"},
                {"name": "initializer", "mountPath": "/workspace"}
            ])
        );
    }

    #[test]
    fn d5_affinity_struct_merge_replaces_term_lists() {
        let term = |zone: &str| json!({"matchExpressions": [{"key": "zone", "operator": "In", "values": [zone]}]});
        let anti = json!({"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": "kubernetes.io/hostname", "labelSelector": {"matchLabels": {"app": "x"}}}
        ]});
        let runtime = json!({"affinity": {
            "podAntiAffinity": anti,
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [term("a"), term("b")]}}
        }});
        let patch = json!({"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term("c")]}}}});
        let merged = merge(runtime, patch, Schema::PodSpec);
        assert_eq!(
            merged["affinity"],
            json!({
                "podAntiAffinity": anti,
                "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [term("c")]}}
            })
        );
    }

    #[test]
    fn d6_same_name_volumes_merge_their_fields() {
        let runtime = json!({"volumes": [{"name": "data", "emptyDir": {}}]});
        let patch =
            json!({"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "pvc"}}]});
        let merged = merge(runtime, patch, Schema::PodSpec);
        assert_eq!(
            merged["volumes"],
            json!([{"name": "data", "emptyDir": {}, "persistentVolumeClaim": {"claimName": "pvc"}}])
        );
    }

    #[test]
    fn d7_unknown_container_is_added_first() {
        let runtime = json!({"containers": [{"name": "node", "image": "img"}]});
        let mounts = json!([{"name": "data", "mountPath": "/data"}]);
        let patch = json!({"containers": [{"name": "trainer", "volumeMounts": mounts}]});
        let merged = merge(runtime, patch, Schema::PodSpec);
        assert_eq!(
            merged["containers"],
            json!([{"name": "trainer", "volumeMounts": mounts}, {"name": "node", "image": "img"}])
        );
    }

    // ---- §A build cases (the merge part) ---------------------------------------------

    #[test]
    fn a1_overrides_on_dataset_initializer() {
        let runtime = json!({"spec": {
            "initContainers": [{"name": "override-init-container", "image": "test:runtime",
                "env": env(&[("INIT_ENV", "original_init"), ("DATASET_PATH", "runtime")])}],
            "containers": [{"name": "dataset-initializer",
                "volumeMounts": [{"name": "initializer", "mountPath": "/workspace/dataset"}]}],
            "volumes": [{"name": "initializer", "persistentVolumeClaim": {"claimName": "initializer"}}]
        }});
        let toleration =
            json!({"key": "example.com/gpu", "operator": "Exists", "effect": "NoSchedule"});
        let patch = json!({"spec": {
            "initContainers": [{"name": "override-init-container",
                "env": env(&[("INIT_ENV", "override_init"), ("NEW_VALUE", "from_overrides")])}],
            "containers": [{"name": "dataset-initializer", "volumeMounts": [
                {"name": "initializer_secret", "mountPath": "initializer_secret_mount_path"},
                {"name": "initializer_claim", "mountPath": "initializer_claim_mount_path"}]}],
            "nodeSelector": {"node.kubernetes.io/instance-type": "p5.48xlarge"},
            "schedulingGates": [{"name": "kueue.x-k8s.io/admission"}],
            "tolerations": [toleration],
            "volumes": [
                {"name": "initializer_secret", "secret": {"secretName": "initializer_secret_name"}},
                {"name": "initializer_claim", "persistentVolumeClaim": {"claimName": "initializer_claim_name"}}]
        }});
        let spec = merge(runtime, patch, Schema::PodTemplateSpec)["spec"].take();
        let init = &spec["initContainers"][0];
        assert_eq!(init["image"], "test:runtime");
        assert_eq!(
            keys(&init["env"], "name"),
            ["INIT_ENV", "NEW_VALUE", "DATASET_PATH"]
        );
        assert_eq!(init["env"][0]["value"], "override_init");
        assert_eq!(
            keys(&spec["containers"][0]["volumeMounts"], "mountPath"),
            [
                "initializer_secret_mount_path",
                "initializer_claim_mount_path",
                "/workspace/dataset"
            ]
        );
        assert_eq!(
            keys(&spec["volumes"], "name"),
            ["initializer_secret", "initializer_claim", "initializer"]
        );
        assert_eq!(
            spec["schedulingGates"],
            json!([{"name": "kueue.x-k8s.io/admission"}])
        );
        assert_eq!(spec["tolerations"], json!([toleration]));
    }

    #[test]
    fn a2_nil_affinity_is_a_no_op() {
        let runtime = json!({"spec": {"containers": [{"name": "node"}]}});
        for patch in [json!({"spec": {"affinity": null}}), json!({"spec": {}})] {
            assert_eq!(
                merge(runtime.clone(), patch, Schema::PodTemplateSpec),
                runtime
            );
        }
    }

    #[test]
    fn a3_labels_and_annotations_merge_per_key() {
        let runtime = json!({"metadata": {"labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}}});
        let patch = json!({"metadata": {"labels": {"k1": "v1"}, "annotations": {"a1": "v1"}}});
        let merged = merge(runtime, patch, Schema::PodTemplateSpec);
        assert_eq!(
            merged["metadata"],
            json!({
                "labels": {"trainer.kubeflow.org/trainjob-ancestor-step": "trainer", "k1": "v1"},
                "annotations": {"a1": "v1"}
            })
        );
    }

    #[test]
    fn a4_two_patches_on_one_job_both_apply() {
        let runtime = json!({"spec": {"containers": [{"name": "node", "image": "test:runtime",
            "command": ["runtime"], "args": ["runtime"], "resources": {"requests": {"cpu": "1"}}}]}});
        let patches = [
            json!({"spec": {"nodeSelector": {"node.kubernetes.io/instance-type": "p5.48xlarge"}}}),
            json!({"spec": {"serviceAccountName": "test-sa"}}),
        ];
        let merged = merge_all(runtime.clone(), &patches, Schema::PodTemplateSpec);
        assert_eq!(
            merged["spec"]["nodeSelector"],
            json!({"node.kubernetes.io/instance-type": "p5.48xlarge"})
        );
        assert_eq!(merged["spec"]["serviceAccountName"], "test-sa");
        assert_eq!(merged["spec"]["containers"], runtime["spec"]["containers"]);
    }

    #[test]
    fn a5_later_patch_wins_on_the_same_key() {
        let patches = [
            json!({"spec": {"nodeSelector": {"node.kubernetes.io/instance-type": "p5.48xlarge"}}}),
            json!({"spec": {"nodeSelector": {"node.kubernetes.io/instance-type": "p5en.48xlarge"}}}),
        ];
        let merged = merge_all(json!({"spec": {}}), &patches, Schema::PodTemplateSpec);
        assert_eq!(
            merged["spec"]["nodeSelector"],
            json!({"node.kubernetes.io/instance-type": "p5en.48xlarge"})
        );
    }

    #[test]
    fn a6_init_container_env_order_with_metadata() {
        let runtime = json!({"spec": {"initContainers": [{"name": "override-init-container",
            "image": "test:runtime",
            "env": env(&[("INIT_ENV", "original_init"), ("DATASET_PATH", "runtime")])}]}});
        let patch = json!({
            "metadata": {"labels": {"override-label-key": "override-label-value"}},
            "spec": {"serviceAccountName": "override-sa", "initContainers": [{
                "name": "override-init-container",
                "env": env(&[("INIT_ENV", "override_init"), ("NEW_VALUE", "from_overrides")])}]}
        });
        let merged = merge(runtime, patch, Schema::PodTemplateSpec);
        assert_eq!(
            merged,
            json!({
                "spec": {
                    "initContainers": [{"name": "override-init-container", "image": "test:runtime",
                        "env": env(&[("INIT_ENV", "override_init"), ("NEW_VALUE", "from_overrides"),
                            ("DATASET_PATH", "runtime")])}],
                    "serviceAccountName": "override-sa"
                },
                "metadata": {"labels": {"override-label-key": "override-label-value"}}
            })
        );
    }

    // ---- nulls, directives, errors ---------------------------------------------------

    #[test]
    fn null_deletes_a_key() {
        let runtime =
            json!({"nodeSelector": {"pool": "gpu", "zone": "a"}, "serviceAccountName": "sa"});
        let patch =
            json!({"nodeSelector": {"zone": null}, "serviceAccountName": null, "hostname": null});
        assert_eq!(
            merge(runtime, patch, Schema::PodSpec),
            json!({"nodeSelector": {"pool": "gpu"}})
        );
    }

    #[test]
    fn absent_keys_are_copied_verbatim() {
        // As upstream: nested nulls and directives under a new key are not interpreted.
        let patch = json!({"nodeSelector": {"zone": null}, "affinity": {"$patch": "delete"}});
        assert_eq!(merge(json!({}), patch.clone(), Schema::PodSpec), patch);
    }

    #[test]
    fn patch_delete_removes_a_list_item() {
        let runtime =
            json!({"containers": [{"name": "node"}, {"name": "sidecar"}, {"name": "logger"}]});
        let patch = json!({"containers": [{"name": "sidecar", "$patch": "delete"}, {"name": "node", "image": "x"}]});
        let merged = merge(runtime, patch, Schema::PodSpec);
        assert_eq!(
            merged["containers"],
            json!([{"name": "node", "image": "x"}, {"name": "logger"}])
        );
    }

    #[test]
    fn patch_replace_replaces_a_map_or_list() {
        let runtime = json!({"affinity": {"nodeAffinity": {"x": 1}, "podAffinity": {"y": 2}},
            "containers": [{"name": "a"}, {"name": "b"}]});
        let patch = json!({"affinity": {"$patch": "replace", "podAntiAffinity": {"z": 3}},
            "containers": [{"$patch": "replace"}, {"name": "c"}]});
        let merged = merge(runtime, patch, Schema::PodSpec);
        assert_eq!(merged["affinity"], json!({"podAntiAffinity": {"z": 3}}));
        assert_eq!(merged["containers"], json!([{"name": "c"}]));
        // `$patch: delete` on a map field empties it (handleDirectiveInMergeMap).
        let merged = merge(
            merged,
            json!({"affinity": {"$patch": "delete"}}),
            Schema::PodSpec,
        );
        assert_eq!(merged["affinity"], json!({}));
    }

    #[test]
    fn finalizers_are_a_deduplicated_union() {
        let runtime = json!({"metadata": {"finalizers": ["a", "b"]}});
        let patch = json!({"metadata": {"finalizers": ["c", "a"]}});
        let merged = merge(runtime, patch, Schema::PodTemplateSpec);
        assert_eq!(merged["metadata"]["finalizers"], json!(["c", "a", "b"]));
    }

    #[test]
    fn owner_references_merge_by_uid() {
        let runtime =
            json!({"ownerReferences": [{"uid": "1", "name": "a"}, {"uid": "2", "name": "b"}]});
        let patch = json!({"ownerReferences": [{"uid": "2", "controller": true}]});
        let merged = merge(runtime, patch, Schema::ObjectMeta);
        assert_eq!(
            merged["ownerReferences"],
            json!([{"uid": "1", "name": "a"}, {"uid": "2", "name": "b", "controller": true}])
        );
    }

    #[test]
    fn jobset_spec_merges_replicated_jobs_by_name() {
        let job = |name: &str, ctr_env: Value| {
            json!({"name": name, "replicas": 1, "template": {"spec": {"template": {"spec": {
                "containers": [{"name": name, "env": ctr_env}]}}}}})
        };
        let runtime = json!({"replicatedJobs": [
            job("dataset-initializer", env(&[("A", "1")])),
            job("node", env(&[("A", "1"), ("B", "1")]))
        ]});
        let patch = json!({"replicatedJobs": [
            {"name": "node", "template": {"metadata": {"labels": {"job-k": "v"}},
                "spec": {"template": {"spec": {"containers": [{"name": "node", "env": env(&[("B", "2")])}]}}}}},
            {"name": "extra", "template": {"spec": {"parallelism": 2}}}
        ]});
        let merged = merge(runtime, patch, Schema::JobSetSpec);
        let jobs = &merged["replicatedJobs"];
        // `node` merged in place, the unknown `extra` added after it, `dataset-initializer` kept.
        assert_eq!(keys(jobs, "name"), ["dataset-initializer", "node", "extra"]);
        assert_eq!(jobs[1]["replicas"], 1);
        assert_eq!(
            jobs[1]["template"]["metadata"]["labels"],
            json!({"job-k": "v"})
        );
        assert_eq!(
            jobs[1]["template"]["spec"]["template"]["spec"]["containers"][0]["env"],
            env(&[("A", "1"), ("B", "2")])
        );
        assert_eq!(
            jobs[2],
            json!({"name": "extra", "template": {"spec": {"parallelism": 2}}})
        );
    }

    #[test]
    fn item_without_merge_key_is_an_error() {
        let runtime = json!({"containers": [{"name": "node"}]});
        let err = strategic_merge(
            &runtime,
            &json!({"containers": [{"image": "x"}]}),
            Schema::PodSpec,
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            r#"map: {"image":"x"} does not contain declared merge key: name"#
        );
        let err = strategic_merge(
            &runtime,
            &json!({"containers": [{"$patch": "delete"}]}),
            Schema::PodSpec,
        )
        .unwrap_err();
        assert!(matches!(err, SmpError::NoMergeKey { key: "name", .. }));
    }

    #[test]
    fn malformed_patches_are_errors() {
        let runtime = json!({"containers": [{"name": "node"}]});
        let cases = [
            (
                json!({"containers": [{"name": "x", "$patch": "merge"}]}),
                SmpError::MergeDirectiveInList,
            ),
            (
                json!({"containers": ["node"]}),
                SmpError::MixedListTypes(r#"[[{"name":"node"}],["node"]]"#.into()),
            ),
            (
                json!({"containers": [["node"]]}),
                SmpError::MixedListTypes(r#"[[{"name":"node"}],[["node"]]]"#.into()),
            ),
            (
                json!({"$patch": "bogus"}),
                SmpError::BadPatchType {
                    directive: "bogus".into(),
                    map: r#"{"$patch":"bogus"}"#.into(),
                },
            ),
            (
                json!({"$retainKeys": ["containers"]}),
                SmpError::UnsupportedDirective("$retainKeys".into()),
            ),
            (
                json!({"$setElementOrder/containers": [{"name": "node"}]}),
                SmpError::UnsupportedDirective("$setElementOrder/containers".into()),
            ),
        ];
        for (patch, expected) in cases {
            assert_eq!(
                strategic_merge(&runtime, &patch, Schema::PodSpec),
                Err(expected)
            );
        }
        let meta = json!({"finalizers": ["a"]});
        assert_eq!(
            strategic_merge(
                &meta,
                &json!({"finalizers": [{"name": "b"}]}),
                Schema::ObjectMeta
            ),
            Err(SmpError::MixedListTypes(r#"[["a"],[{"name":"b"}]]"#.into()))
        );
        assert_eq!(
            strategic_merge(
                &json!({"finalizers": []}),
                &json!({"finalizers": [{"name": "b"}]}),
                Schema::ObjectMeta
            ),
            Err(SmpError::NoMergeKeyForList("string"))
        );
        assert_eq!(
            strategic_merge(
                &json!({"env": [{"name": "A"}]}),
                &json!({"env": ["A"]}),
                Schema::Container
            )
            .map_err(|e| e.to_string()),
            Err(r#"list element types are not identical: [[{"name":"A"}],["A"]]"#.into())
        );
        assert_eq!(
            strategic_merge(&json!([]), &json!({}), Schema::PodSpec),
            Err(SmpError::BadJsonDoc)
        );
        assert_eq!(
            strategic_merge(&runtime, &json!("x"), Schema::PodSpec),
            Err(SmpError::BadJsonDoc)
        );
        assert_eq!(
            strategic_merge(&Value::Null, &Value::Null, Schema::PodSpec),
            Ok(json!({}))
        );
    }

    #[test]
    fn table_lookups() {
        let meta = |merge_key, element| Some(ListMeta { merge_key, element });
        assert_eq!(
            list_meta(Schema::PodSpec, "containers"),
            meta("name", Some(Schema::Container))
        );
        assert_eq!(
            list_meta(Schema::PodSpec, "volumes"),
            meta("name", Some(Schema::Volume))
        );
        assert_eq!(
            list_meta(Schema::PodSpec, "topologySpreadConstraints"),
            meta("topologyKey", None)
        );
        assert_eq!(list_meta(Schema::PodSpec, "hostAliases"), meta("ip", None));
        assert_eq!(
            list_meta(Schema::Container, "volumeMounts"),
            meta("mountPath", None)
        );
        assert_eq!(
            list_meta(Schema::Container, "ports"),
            meta("containerPort", None)
        );
        assert_eq!(
            list_meta(Schema::JobSetSpec, "replicatedJobs"),
            meta("name", Some(Schema::ReplicatedJob))
        );
        assert_eq!(
            list_meta(Schema::ObjectMeta, "ownerReferences"),
            meta("uid", None)
        );
        for (schema, field) in [
            (Schema::PodSpec, "tolerations"),
            (Schema::PodSpec, "readinessGates"),
            (Schema::Container, "envFrom"),
            (Schema::ObjectMeta, "finalizers"),
            (Schema::ResourceRequirements, "claims"),
        ] {
            assert_eq!(list_meta(schema, field), None, "{field}");
        }
        assert_eq!(
            field_schema(Schema::PodTemplateSpec, "spec"),
            Some(Schema::PodSpec)
        );
        assert_eq!(
            field_schema(Schema::PodSpec, "affinity"),
            Some(Schema::Affinity)
        );
        assert_eq!(
            field_schema(Schema::ReplicatedJob, "template"),
            Some(Schema::JobTemplateSpec)
        );
        assert_eq!(
            field_schema(Schema::JobTemplateSpec, "spec"),
            Some(Schema::JobSpec)
        );
        assert_eq!(
            field_schema(Schema::JobSpec, "template"),
            Some(Schema::PodTemplateSpec)
        );
        assert_eq!(field_schema(Schema::PodSpec, "nodeSelector"), None);
    }

    // ---- properties -------------------------------------------------------------------

    const CONTAINERS: &[&str] = &["node", "sidecar", "init", "trainer"];
    const ENV: &[&str] = &["A", "B", "C", "D", "E"];
    const PATHS: &[&str] = &["/data", "/model", "/cache", "/tmp"];
    const VOLUMES: &[&str] = &["data", "model", "cache"];
    const LABELS: &[&str] = &["pool", "zone", "accelerator"];
    const VALUES: &[&str] = &["0", "1", "x"];

    /// A list of items with unique keys from `pool`, in random order.
    fn keyed<T: std::fmt::Debug + Clone + 'static>(
        pool: &'static [&'static str],
        body: impl Strategy<Value = T> + 'static,
    ) -> impl Strategy<Value = Vec<(&'static str, T)>> {
        proptest::collection::btree_map(proptest::sample::select(pool), body, 0..=pool.len())
            .prop_map(|m| m.into_iter().collect::<Vec<_>>())
            .prop_shuffle()
    }

    fn value() -> impl Strategy<Value = &'static str> {
        proptest::sample::select(VALUES)
    }

    fn container() -> impl Strategy<Value = Value> {
        (
            proptest::option::of(value()),
            proptest::option::of(keyed(ENV, value())),
            proptest::option::of(keyed(PATHS, proptest::sample::select(VOLUMES))),
        )
            .prop_map(|(image, env, mounts)| {
                let mut c = Map::new();
                if let Some(image) = image {
                    c.insert("image".into(), json!(image));
                }
                if let Some(env) = env {
                    let items = env.iter().map(|(n, v)| json!({"name": n, "value": v}));
                    c.insert("env".into(), items.collect());
                }
                if let Some(mounts) = mounts {
                    let items = mounts
                        .iter()
                        .map(|(p, n)| json!({"name": n, "mountPath": p}));
                    c.insert("volumeMounts".into(), items.collect());
                }
                Value::Object(c)
            })
    }

    /// PodSpec-shaped JSON without nulls or directives.
    fn pod_spec() -> impl Strategy<Value = Value> {
        (
            proptest::option::of(keyed(CONTAINERS, container())),
            proptest::option::of(proptest::collection::btree_map(
                proptest::sample::select(LABELS),
                value(),
                0..=LABELS.len(),
            )),
            proptest::option::of(proptest::collection::vec(value(), 0..3)),
            proptest::option::of(keyed(VOLUMES, any::<bool>())),
        )
            .prop_map(|(containers, selector, tolerations, volumes)| {
                let mut spec = Map::new();
                if let Some(containers) = containers {
                    let items = containers.into_iter().map(|(name, mut c)| {
                        c["name"] = json!(name);
                        c
                    });
                    spec.insert("containers".into(), items.collect());
                }
                if let Some(selector) = selector {
                    spec.insert("nodeSelector".into(), json!(selector));
                }
                if let Some(tolerations) = tolerations {
                    let items = tolerations
                        .iter()
                        .map(|k| json!({"key": k, "operator": "Exists"}));
                    spec.insert("tolerations".into(), items.collect());
                }
                if let Some(volumes) = volumes {
                    let items = volumes.iter().map(|(name, pvc)| {
                        if *pvc {
                            json!({"name": name, "persistentVolumeClaim": {"claimName": name}})
                        } else {
                            json!({"name": name, "emptyDir": {}})
                        }
                    });
                    spec.insert("volumes".into(), items.collect());
                }
                Value::Object(spec)
            })
    }

    fn assert_unique(list: &Value, key: &str) -> Result<(), TestCaseError> {
        let all = keys(list, key);
        let mut seen = all.clone();
        seen.sort();
        seen.dedup();
        prop_assert_eq!(seen.len(), all.len(), "duplicate {} in {}", key, list);
        Ok(())
    }

    /// `sub` in the order `all` has them.
    fn in_order(all: &[String], sub: &[String]) -> Vec<String> {
        all.iter().filter(|n| sub.contains(n)).cloned().collect()
    }

    proptest! {
        #[test]
        fn empty_patch_is_identity(original in pod_spec()) {
            prop_assert_eq!(merge(original.clone(), json!({}), Schema::PodSpec), original);
        }

        #[test]
        fn patch_is_idempotent(original in pod_spec(), patch in pod_spec()) {
            let once = merge(original, patch.clone(), Schema::PodSpec);
            prop_assert_eq!(merge(once.clone(), patch, Schema::PodSpec), once);
        }

        #[test]
        fn merge_keyed_lists_keep_one_entry_per_key(original in pod_spec(), patch in pod_spec()) {
            let merged = merge(original.clone(), patch.clone(), Schema::PodSpec);
            assert_unique(&merged["containers"], "name")?;
            assert_unique(&merged["volumes"], "name")?;
            let empty = Vec::new();
            for c in merged["containers"].as_array().unwrap_or(&empty) {
                assert_unique(&c["env"], "name")?;
                assert_unique(&c["volumeMounts"], "mountPath")?;
            }
            // Every container is kept; patch items keep patch order, the others original order.
            let result = keys(&merged["containers"], "name");
            let from_patch = keys(&patch["containers"], "name");
            let from_runtime: Vec<String> = keys(&original["containers"], "name")
                .into_iter()
                .filter(|n| !from_patch.contains(n))
                .collect();
            prop_assert_eq!(result.len(), from_patch.len() + from_runtime.len());
            prop_assert_eq!(in_order(&result, &from_patch), from_patch);
            prop_assert_eq!(in_order(&result, &from_runtime), from_runtime);
        }
    }

    #[test]
    fn deduplicate_scalars_matches_go() {
        // Go moves the last item into each duplicate's slot.
        let out = deduplicate_scalars(vec![json!("a"), json!("b"), json!("a"), json!("c")]);
        assert_eq!(out, [json!("a"), json!("b"), json!("c")]);
        let out = deduplicate_scalars(vec![json!(1), json!(1), json!(2), json!(3)]);
        assert_eq!(out, [json!(1), json!(3), json!(2)]);
    }

    #[test]
    fn ports_merge_by_container_port() {
        let runtime = json!({"ports": [{"containerPort": 80}, {"containerPort": 443}]});
        let patch = json!({"ports": [{"containerPort": 443, "name": "https"}]});
        let merged = merge(runtime, patch, Schema::Container);
        assert_eq!(
            merged["ports"],
            json!([{"containerPort": 80}, {"containerPort": 443, "name": "https"}])
        );
    }
}
