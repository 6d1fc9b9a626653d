//! Object metadata, names and selectors as the API server validates them, as data:
//! - `tests/data/validation/names.yaml`: apimachinery's tables of good and bad names, label
//!   keys and label values, run through `schedsim::model::labels`, and exact messages;
//! - `tests/data/validation/objects.yaml`: one object per case in a scenario's `spec.objects`;
//!   the load reports exactly the case's errors (path and message, each with a position);
//! - `tests/data/validation/pdb.yaml`: PodDisruptionBudgets, in the same format.

mod common;

use std::collections::BTreeMap;

use common::objects::{ObjectError, object_errors};
use schedsim::model::labels::{self, LenUnit};
use serde::Deserialize;
use serde_json::Value;

const NAMES: &str = include_str!("data/validation/names.yaml");
const OBJECTS: &str = include_str!("data/validation/objects.yaml");
const PDB: &str = include_str!("data/validation/pdb.yaml");

fn parse(text: &str, name: &str) -> Value {
    let docs = schedsim::yaml::parse_documents(text.to_string(), std::path::Path::new(name))
        .expect("case file parses");
    docs[0].value.clone()
}

/// `{$string: {repeat, count}}` is a long string, `{$concat: [...]}` joins strings.
fn expand(v: &Value) -> Value {
    match v {
        Value::Object(m) if m.len() == 1 && m.contains_key("$string") => {
            let r = &m["$string"];
            let count = r["count"].as_u64().unwrap() as usize;
            Value::from(r["repeat"].as_str().unwrap().repeat(count))
        }
        Value::Object(m) if m.len() == 1 && m.contains_key("$concat") => {
            let parts = m["$concat"].as_array().unwrap();
            Value::from(
                parts
                    .iter()
                    .map(|p| expand(p).as_str().unwrap().to_string())
                    .collect::<String>(),
            )
        }
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), expand(v))).collect()),
        Value::Array(items) => Value::Array(items.iter().map(expand).collect()),
        other => other.clone(),
    }
}

fn with_messages(text: &str, messages: &BTreeMap<String, String>) -> String {
    let mut out = text.to_string();
    for (name, long) in messages {
        out = out.replace(&format!("<{name}>"), long);
    }
    out
}

/// The errors of the function a table names.
fn errors_of(function: &str, value: &str) -> Vec<String> {
    match function {
        "IsDNS1123Label" => labels::dns1123_label_errors(value, LenUnit::Characters),
        "IsDNS1123Subdomain" => labels::dns1123_subdomain_errors(value, LenUnit::Characters),
        "IsQualifiedName" => labels::qualified_name_errors(value),
        "IsValidLabelValue" => labels::label_value_errors(value),
        other => panic!("no function {other}"),
    }
}

/// The predicate the hot paths use, which must agree with the messages.
fn is_valid(function: &str, value: &str) -> bool {
    match function {
        "IsDNS1123Label" => labels::is_dns1123_label(value),
        "IsDNS1123Subdomain" => labels::is_dns1123_subdomain(value),
        "IsQualifiedName" => labels::is_qualified_name(value),
        "IsValidLabelValue" => labels::is_valid_label_value(value),
        other => panic!("no function {other}"),
    }
}

#[test]
fn names_and_labels_are_checked_as_apimachinery_checks_them() {
    let table = expand(&parse(NAMES, "names.yaml"));
    let messages: BTreeMap<String, String> =
        serde_json::from_value(table["messages"].clone()).unwrap();
    let mut failures = Vec::new();
    let mut count = 0;
    for (function, lists) in table["functions"].as_object().unwrap() {
        for (list, good) in [("good", true), ("bad", false)] {
            for v in lists[list].as_array().unwrap() {
                let v = v.as_str().expect("a string");
                count += 1;
                let errs = errors_of(function, v);
                if errs.is_empty() != good || is_valid(function, v) != good {
                    failures.push(format!("{function}({v:?}): expected {list}, got {errs:?}"));
                }
            }
        }
    }
    for case in table["messages_cases"].as_array().unwrap() {
        let function = case["function"].as_str().unwrap();
        let value = case["value"].as_str().unwrap();
        let expected: Vec<String> = (case["messages"].as_array().unwrap().iter())
            .map(|m| with_messages(m.as_str().unwrap(), &messages))
            .collect();
        count += 1;
        let got = errors_of(function, value);
        if got != expected {
            failures.push(format!(
                "{function}({value:?}):\n  expected {expected:#?}\n  got {got:#?}"
            ));
        }
    }
    assert!(count >= 200, "{count} cases");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

type Case = common::objects::ObjectCase<Expected>;

#[derive(Debug, Deserialize)]
struct Expected {
    path: String,
    #[serde(default)]
    message: Option<String>,
    /// The start of the message, when it holds a generated name.
    #[serde(default)]
    prefix: Option<String>,
}

#[test]
fn objects_are_validated_as_the_api_server_validates_them() {
    object_cases(OBJECTS, "objects", 50);
}

/// `tests/data/validation/pdb.yaml`: PodDisruptionBudgets.
#[test]
fn pod_disruption_budgets_are_validated_as_the_api_server_validates_them() {
    object_cases(PDB, "pdb", 30);
}

/// Runs a table of object cases (at least `min` of them).
fn object_cases(text: &str, name: &str, min: usize) {
    let table = parse(text, &format!("{name}.yaml"));
    let messages: BTreeMap<String, String> =
        serde_json::from_value(table["messages"].clone()).unwrap();
    let cases: Vec<Case> = serde_json::from_value(table["cases"].clone()).expect("case shape");
    assert!(cases.len() >= min, "{} cases", cases.len());
    let dir = std::env::temp_dir().join(format!("schedsim-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let got = object_errors(&dir, &format!("case-{i}"), &expand(&case.object));
        let matches = |g: &ObjectError, e: &Expected| {
            g.path == e.path
                && match (&e.message, &e.prefix) {
                    (Some(m), _) => g.message == with_messages(m, &messages),
                    (None, Some(p)) => g.message.starts_with(&with_messages(p, &messages)),
                    (None, None) => false,
                }
        };
        let same = got.len() == case.errors.len()
            && got.iter().zip(&case.errors).all(|(g, e)| matches(g, e));
        if !same {
            failures.push(format!(
                "{}:\n  expected {:#?}\n  got {:#?}",
                case.name, case.errors, got
            ));
        } else if let Some(g) = got.iter().find(|g| !g.positioned) {
            failures.push(format!("{}: no position for {}", case.name, g.path));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
