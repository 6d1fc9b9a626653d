//! Shared by the override-case tests: a JSON matcher ("expected is a subset of actual", with
//! per-list order rules) and the confidence levels of transcribed cases.

#![allow(dead_code)]

pub mod build_cases;
pub mod cli;
pub mod objects;
pub mod process;
pub mod props;
pub mod replay;

use serde::Deserialize;
use serde_json::{Map, Value};

/// How sure a case is of upstream's behaviour; UPSTREAM-UNIT cases do not assert the order of
/// [`UNIT_UNORDERED`] lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub enum Confidence {
    #[serde(rename = "UPSTREAM-UNIT")]
    UpstreamUnit,
    #[serde(rename = "UPSTREAM-INTEG")]
    UpstreamInteg,
    #[serde(rename = "UPSTREAM-WEBHOOK-UNIT")]
    UpstreamWebhookUnit,
    #[serde(rename = "DERIVED")]
    Derived,
    /// A rule of schedsim's own, with no upstream behaviour to compare with.
    #[serde(rename = "SCHEDSIM")]
    Schedsim,
}

/// Lists whose order upstream's unit tests do not assert (`cmpOpts` of
/// `pkg/runtime/core/trainingruntime_test.go`: EnvVar, Volume, VolumeMount, Toleration).
pub const UNIT_UNORDERED: &[&str] = &["env", "volumes", "volumeMounts", "tolerations"];

/// "Expected is a subset of actual" over JSON, with the list-order rule of one case.
///
/// * map: every expected key must match; actual may have more keys, unless the expected map is
///   written `{$exact: {...}}`.
/// * `null`: the field must be absent (or `null`).
/// * list: same length, items matched pairwise (each expected item a subset of its actual item),
///   in order or — for unordered lists — after sorting both by merge key. `{$ordered: [...]}`
///   / `{$unordered: [...]}` force the rule for one list.
/// * scalar: equal.
pub struct Matcher {
    /// UPSTREAM-UNIT: [`UNIT_UNORDERED`] lists are compared as sets.
    unit_order: bool,
    pub failures: Vec<String>,
}

impl Matcher {
    pub fn new(confidence: Confidence) -> Self {
        Matcher {
            unit_order: confidence == Confidence::UpstreamUnit,
            failures: Vec::new(),
        }
    }

    pub fn fail(&mut self, path: &str, what: String) {
        self.failures.push(format!("{path}: {what}"));
    }

    pub fn check(&mut self, expected: &Value, actual: Option<&Value>, path: &str, field: &str) {
        match expected {
            Value::Null => {
                if let Some(a) = actual.filter(|a| !a.is_null()) {
                    self.fail(path, format!("expected absent, found {a}"));
                }
            }
            Value::Object(exp) => {
                if let Some((directive, inner)) = directive(exp) {
                    match directive {
                        "$exact" => self.check_map(inner, actual, path, true),
                        "$ordered" => self.check_list(inner, actual, path, field, Some(true)),
                        "$unordered" => self.check_list(inner, actual, path, field, Some(false)),
                        other => panic!("{path}: unknown directive {other}"),
                    }
                } else {
                    self.check_map(expected, actual, path, false);
                }
            }
            Value::Array(_) => self.check_list(expected, actual, path, field, None),
            scalar => match actual {
                Some(a) if a == scalar => {}
                Some(a) => self.fail(path, format!("expected {scalar}, found {a}")),
                None => self.fail(path, format!("expected {scalar}, found nothing")),
            },
        }
    }

    pub fn check_map(&mut self, expected: &Value, actual: Option<&Value>, path: &str, exact: bool) {
        let Some(exp) = expected.as_object() else {
            panic!("{path}: $exact needs a map");
        };
        let empty = Map::new();
        let act = match actual {
            None => &empty,
            Some(Value::Object(a)) => a,
            Some(other) => return self.fail(path, format!("expected a map, found {other}")),
        };
        if actual.is_none() && exp.values().any(|v| !v.is_null()) {
            return self.fail(path, format!("expected {expected}, found nothing"));
        }
        for (k, v) in exp {
            self.check(v, act.get(k), &join(path, k), k);
        }
        if exact {
            let extra: Vec<&String> = act.keys().filter(|k| !exp.contains_key(*k)).collect();
            if !extra.is_empty() {
                self.fail(
                    path,
                    format!(
                        "unexpected keys {extra:?} (actual {})",
                        Value::Object(act.clone())
                    ),
                );
            }
        }
    }

    pub fn check_list(
        &mut self,
        expected: &Value,
        actual: Option<&Value>,
        path: &str,
        field: &str,
        ordered: Option<bool>,
    ) {
        let Some(exp) = expected.as_array() else {
            panic!("{path}: $ordered/$unordered need a list");
        };
        let act = match actual {
            Some(Value::Array(a)) => a,
            Some(other) => return self.fail(path, format!("expected a list, found {other}")),
            None => return self.fail(path, format!("expected {expected}, found nothing")),
        };
        if exp.len() != act.len() {
            return self.fail(
                path,
                format!(
                    "expected {} items, found {}: expected {}, actual {}",
                    exp.len(),
                    act.len(),
                    strip_directives(expected),
                    Value::Array(act.clone())
                ),
            );
        }
        let ordered = ordered.unwrap_or(!(self.unit_order && UNIT_UNORDERED.contains(&field)));
        let exp_keys: Vec<String> = exp.iter().map(|v| sort_key(v, field)).collect();
        let act_keys: Vec<String> = act.iter().map(|v| sort_key(v, field)).collect();
        let same_items = sorted(&exp_keys) == sorted(&act_keys);
        if ordered && (exp_keys == act_keys || !same_items) {
            for (i, (e, a)) in exp.iter().zip(act).enumerate() {
                self.check(e, Some(a), &format!("{path}[{i}]"), field);
            }
            return;
        }
        if ordered {
            // Same items in another order: say so once, then compare the items by key.
            self.fail(
                path,
                format!("expected order {exp_keys:?}, found {act_keys:?}"),
            );
        }
        let mut exp: Vec<&Value> = exp.iter().collect();
        let mut act: Vec<&Value> = act.iter().collect();
        exp.sort_by_key(|v| sort_key(v, field));
        act.sort_by_key(|v| sort_key(v, field));
        for (e, a) in exp.into_iter().zip(act) {
            let key = sort_key(e, field);
            self.check(e, Some(a), &format!("{path}[{key}]"), field);
        }
    }
}

/// A map that is a single `$directive`.
pub fn directive(map: &Map<String, Value>) -> Option<(&str, &Value)> {
    match map.iter().next() {
        Some((k, v)) if map.len() == 1 && k.starts_with('$') => Some((k.as_str(), v)),
        _ => None,
    }
}

/// The expected value without `$exact`/`$ordered`/`$unordered` wrappers, for messages.
pub fn strip_directives(v: &Value) -> Value {
    match v {
        Value::Object(m) => match directive(m) {
            Some((_, inner)) => strip_directives(inner),
            None => Value::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), strip_directives(v)))
                    .collect(),
            ),
        },
        Value::Array(items) => Value::Array(items.iter().map(strip_directives).collect()),
        other => other.clone(),
    }
}

/// What an unordered list is sorted by: its merge key (`mountPath` for volumeMounts; key,
/// operator and effect for tolerations; `name` otherwise).
pub fn sort_key(item: &Value, field: &str) -> String {
    let item = strip_directives(item);
    let get = |k: &str| {
        item.get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    match field {
        "volumeMounts" => get("mountPath"),
        "tolerations" => format!("{}/{}/{}", get("key"), get("operator"), get("effect")),
        _ if item.get("name").is_some() => get("name"),
        _ => item.to_string(),
    }
}

pub fn sorted(keys: &[String]) -> Vec<&String> {
    let mut v: Vec<&String> = keys.iter().collect();
    v.sort();
    v
}

pub fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}
