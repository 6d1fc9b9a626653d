//! Property-test generators shared by the override suites: random pod fields an override can
//! set, and the small vocabularies they draw from.

use std::collections::BTreeMap;

use proptest::prelude::*;
use serde_json::{Value, json};

pub const SELECTOR_KEYS: &[&str] = &["pool", "zone", "accel", "tier"];
pub const LABEL_KEYS: &[&str] = &["team", "zone", "tier"];
pub const SMALL_VALUES: &[&str] = &["a", "b", "c"];
pub const ENV_NAMES: &[&str] = &["A", "B", "C", "D", "E"];
pub const VOLUME_NAMES: &[&str] = &["data", "scratch", "cache"];
pub const TOLERATION_KEYS: &[&str] = &["a", "b", "nvidia.com/gpu"];
pub const EFFECTS: &[&str] = &["", "NoSchedule", "NoExecute"];
/// The non-reserved initContainer of the property runtime's `node` job.
pub const INIT: &str = "prop-init";

/// A random subset of the pod fields an override can set (each `None` = not set).
#[derive(Debug, Clone)]
pub struct PodFields {
    pub node_selector: Option<BTreeMap<String, String>>,
    pub tolerations: Option<Vec<Value>>,
    pub init_env: Option<Vec<Value>>,
    pub volumes: Option<Vec<Value>>,
    pub labels: Option<BTreeMap<String, String>>,
}

pub fn pick(list: &'static [&'static str]) -> impl Strategy<Value = String> {
    (0..list.len()).prop_map(move |i| list[i].to_string())
}

pub fn string_map(
    keys: &'static [&'static str],
) -> impl Strategy<Value = BTreeMap<String, String>> {
    prop::collection::btree_map(pick(keys), pick(SMALL_VALUES), 0..=keys.len())
}

/// Items with distinct keys, in random order.
pub fn keyed_list<S: Strategy<Value = Value>>(
    keys: &'static [&'static str],
    item: impl Fn(String) -> S + Clone + 'static,
) -> impl Strategy<Value = Vec<Value>> {
    prop::sample::subsequence(keys, 0..=keys.len())
        .prop_flat_map(move |names| {
            names
                .into_iter()
                .map(|n| item(n.to_string()))
                .collect::<Vec<_>>()
        })
        .prop_shuffle()
}

pub fn toleration() -> impl Strategy<Value = Value> {
    (
        pick(TOLERATION_KEYS),
        any::<bool>(),
        pick(EFFECTS),
        pick(SMALL_VALUES),
    )
        .prop_map(|(key, exists, effect, value)| {
            let mut t = json!({"key": key, "operator": if exists { "Exists" } else { "Equal" }});
            if !exists {
                t["value"] = json!(value);
            }
            if !effect.is_empty() {
                t["effect"] = json!(effect);
            }
            t
        })
}

pub fn pod_fields() -> impl Strategy<Value = PodFields> {
    let env = keyed_list(ENV_NAMES, |n| {
        pick(SMALL_VALUES).prop_map(move |v| json!({"name": n.clone(), "value": v}))
    });
    let volumes = keyed_list(VOLUME_NAMES, |n| {
        prop_oneof![
            Just(json!({"emptyDir": {}})),
            Just(json!({"emptyDir": {"medium": "Memory"}})),
            pick(SMALL_VALUES).prop_map(|c| json!({"persistentVolumeClaim": {"claimName": c}})),
        ]
        .prop_map(move |mut source| {
            source["name"] = json!(n.clone());
            source
        })
    });
    (
        prop::option::of(string_map(SELECTOR_KEYS)),
        prop::option::of(prop::collection::vec(toleration(), 0..3)),
        prop::option::of(env),
        prop::option::of(volumes),
        prop::option::of(string_map(LABEL_KEYS)),
    )
        .prop_map(
            |(node_selector, tolerations, init_env, volumes, labels)| PodFields {
                node_selector,
                tolerations,
                init_env,
                volumes,
                labels,
            },
        )
}
