//! The API server's validation of DRA objects (`dra::api`), as data: each case of
//! `tests/data/dra/validation-cases.yaml` is one object in a scenario's `spec.objects`, and
//! the load reports exactly its errors (field path and message, each with a position), or
//! none when the API server accepts it.

use serde::Deserialize;
use serde_json::Value;

const CASES: &str = include_str!("../data/dra/validation-cases.yaml");

#[derive(Debug, Deserialize)]
struct Table {
    /// Upstream's long texts, by the `<NAME>` that stands for them in messages.
    messages: std::collections::BTreeMap<String, String>,
    cases: Vec<Case>,
}

type Case = crate::common::objects::ObjectCase<Expected>;

#[derive(Debug, Deserialize, PartialEq, Eq)]
struct Expected {
    path: String,
    message: String,
}

/// Expands the table's shorthands for big objects: `{$repeat: {count, item}}` is a list of
/// `count` items, `{$repeatMap: {count, key, value}}` a map of `count` entries, and
/// `{$string: {repeat, count, before, after}}` a long string (`before` and `after` around
/// the repeats, when given); `{i}` in an item's strings or a key is the
/// index.
fn expand(v: &Value, i: Option<usize>) -> Value {
    let index = |s: &str| match i {
        Some(i) => s.replace("{i}", &i.to_string()),
        None => s.to_string(),
    };
    match v {
        Value::Object(m) if m.len() == 1 && m.contains_key("$repeat") => {
            let r = &m["$repeat"];
            let n = r["count"].as_u64().unwrap() as usize;
            Value::Array((0..n).map(|k| expand(&r["item"], Some(k))).collect())
        }
        Value::Object(m) if m.len() == 1 && m.contains_key("$repeatMap") => {
            let r = &m["$repeatMap"];
            let n = r["count"].as_u64().unwrap() as usize;
            let key = r["key"].as_str().unwrap();
            Value::Object(
                (0..n)
                    .map(|k| {
                        (
                            key.replace("{i}", &k.to_string()),
                            expand(&r["value"], Some(k)),
                        )
                    })
                    .collect(),
            )
        }
        Value::Object(m) if m.len() == 1 && m.contains_key("$string") => {
            let r = &m["$string"];
            let around = |k: &str| r[k].as_str().unwrap_or("").to_string();
            let middle =
                (r["repeat"].as_str().unwrap()).repeat(r["count"].as_u64().unwrap() as usize);
            Value::from(around("before") + &middle + &around("after"))
        }
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, v)| (index(k), expand(v, i))).collect())
        }
        Value::Array(items) => Value::Array(items.iter().map(|x| expand(x, i)).collect()),
        Value::String(s) => Value::from(index(s)),
        other => other.clone(),
    }
}

/// The errors loading a scenario with `object` as its only object reports, relative to it.
fn load_errors(dir: &std::path::Path, name: &str, object: &Value) -> Vec<(Expected, bool)> {
    (crate::common::objects::object_errors(dir, name, object).into_iter())
        .map(|e| {
            let expected = Expected {
                path: e.path,
                message: e.message,
            };
            (expected, e.positioned)
        })
        .collect()
}

#[test]
fn dra_objects_are_validated_as_the_api_server_validates_them() {
    let docs = schedsim::yaml::parse_documents(
        CASES.to_string(),
        std::path::Path::new("validation-cases.yaml"),
    )
    .expect("case file parses");
    let table: Table = serde_json::from_value(docs[0].value.clone()).expect("case shape");
    let mut cases = table.cases;
    for case in &mut cases {
        for e in &mut case.errors {
            for (name, text) in &table.messages {
                e.message = e.message.replace(&format!("<{name}>"), text);
            }
        }
    }
    assert!(cases.len() >= 50, "{} cases", cases.len());
    let dir = std::env::temp_dir().join(format!("schedsim-dra-validation-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut failures = Vec::new();
    for case in &cases {
        let object = expand(&case.object, None);
        let got = load_errors(&dir, &case.name, &object);
        let messages: Vec<&Expected> = got.iter().map(|(e, _)| e).collect();
        if messages != case.errors.iter().collect::<Vec<_>>() {
            failures.push(format!(
                "{}:\n  expected {:#?}\n  got {:#?}",
                case.name, case.errors, messages
            ));
        } else if let Some((e, _)) = got.iter().find(|(_, positioned)| !positioned) {
            failures.push(format!("{}: no position for {}", case.name, e.path));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
