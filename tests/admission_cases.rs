//! Upstream's admission tables as data: what the API server, a CRD or a webhook refuses on
//! create, for Kueue (`tests/data/kueue/admission-cases.yaml`), JobSet
//! (`tests/data/jobset/admission-cases.yaml`) and Kubeflow Trainer
//! (`tests/data/trainer/admission-cases.yaml`). Each file's header gives its sources and
//! schema.

use std::path::Path;

use serde::Deserialize;
use serde_json::{Value, json};

use schedsim::model::validate::FieldError;

#[derive(Debug, Deserialize)]
struct Case {
    name: String,
    source: String,
    #[serde(default)]
    layer: Option<String>,
    object: Value,
    #[serde(default)]
    generate: Option<Value>,
    #[serde(default)]
    refused: Option<String>,
    #[serde(default)]
    errors: Option<Vec<Want>>,
}

#[derive(Debug, Deserialize)]
struct Want {
    path: String,
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    detail: Option<String>,
    /// Upstream's expected text, to be found in the message (JobSet's tests compare so).
    #[serde(default)]
    contains: Option<String>,
}

fn cases<T: serde::de::DeserializeOwned>(file: &str) -> Vec<T> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{file}: {e}"));
    let docs = schedsim::yaml::parse_documents(text, &path)
        .unwrap_or_else(|e| panic!("{file} does not parse: {e:?}"));
    (docs.into_iter())
        .filter(|d| !d.value.is_null())
        .map(|d| {
            let name = d.value["name"].clone();
            serde_json::from_value(d.value).unwrap_or_else(|e| panic!("{file}: {name}: {e}"))
        })
        .collect()
}

/// The message prefix of each `field.ErrorType`.
fn prefix(kind: &str) -> &'static str {
    match kind {
        "Invalid" => "Invalid value",
        "Duplicate" => "Duplicate value",
        "Required" => "Required value",
        "NotSupported" => "Unsupported value",
        "Forbidden" => "Forbidden",
        "NotFound" => "Not found",
        "TooMany" => "Too many",
        "TooLong" => "Too long",
        "Internal" => "Internal error",
        other => panic!("unknown error type {other}"),
    }
}

/// Compares errors as upstream's tests do: path and type in order, the detail when given.
fn compare(case: &Case, got: &[FieldError], failures: &mut Vec<String>) {
    let Some(want) = &case.errors else {
        return;
    };
    let tag = format!("{} ({})", case.name, case.source);
    if want.len() != got.len() {
        failures.push(format!("{tag}: want {} errors, got {got:#?}", want.len()));
        return;
    }
    for (w, g) in want.iter().zip(got) {
        let ok = w.path == g.path
            && g.message.starts_with(prefix(&w.kind))
            && w.detail
                .as_ref()
                .is_none_or(|d| g.message.ends_with(d.as_str()))
            && w.contains
                .as_ref()
                .is_none_or(|c| g.message.contains(c.as_str()));
        if !ok {
            failures.push(format!("{tag}: want {w:?}, got {g:?}"));
        }
    }
}

/// The Go helpers' big resource groups (`makeFlavors`, `makeCoveredResources`, …).
fn generate(object: &mut Value, how: &Value) {
    let quota = |r: &str| json!({"name": r, "nominalQuota": "1"});
    let group = |flavors: Vec<Value>, covered: Vec<String>| json!({"coveredResources": covered, "flavors": flavors});
    let n = |k: &str| how.get(k).and_then(Value::as_u64).map(|n| n as usize);
    let groups = if let Some(f) = n("flavors") {
        let flavors = (0..f)
            .map(|i| json!({"name": format!("f{i:03}"), "resources": [quota("cpu")]}))
            .collect();
        vec![group(flavors, vec!["cpu".into()])]
    } else if let Some(r) = n("coveredResources") {
        let names: Vec<String> = (0..r).map(|i| format!("res{i:03}")).collect();
        let flavor = json!({"name": "default", "resources": names.iter().map(|n| quota(n)).collect::<Vec<_>>()});
        vec![group(vec![flavor], names)]
    } else if let Some(fr) = how.get("combinations").and_then(Value::as_array) {
        let (f, r) = (fr[0].as_u64().unwrap(), fr[1].as_u64().unwrap());
        let names: Vec<String> = (0..r).map(|i| format!("res{i:03}")).collect();
        let flavors = (0..f)
            .map(|i| json!({"name": format!("f{i:03}"), "resources": names.iter().map(|n| quota(n)).collect::<Vec<_>>()}))
            .collect();
        vec![group(flavors, names)]
    } else if let Some(r) = n("resources") {
        let names: Vec<String> = (0..r).map(|i| format!("r{i}")).collect();
        let flavor = json!({"name": "flavor", "resources": names.iter().map(|n| json!({"name": n, "nominalQuota": "0"})).collect::<Vec<_>>()});
        vec![group(vec![flavor], names)]
    } else if let Some(f) = n("flavorsInGroup") {
        let flavors = (0..f)
            .map(|i| json!({"name": format!("f{i}"), "resources": [{"name": "cpu", "nominalQuota": "0"}]}))
            .collect();
        vec![group(flavors, vec!["cpu".into()])]
    } else {
        panic!("unknown generator {how}");
    };
    object["spec"]["resourceGroups"] = Value::Array(groups);
}

#[test]
fn kueue_admission_cases_agree_with_upstream() {
    use schedsim::kueue::validation::{crd_errors, webhook_errors};
    let cases: Vec<Case> = cases("tests/data/kueue/admission-cases.yaml");
    assert!(cases.len() >= 90, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for mut case in cases {
        if let Some(how) = case.generate.take() {
            generate(&mut case.object, &how);
        }
        let object = &mut case.object;
        if object.get("apiVersion").is_none() {
            object["apiVersion"] = json!("kueue.x-k8s.io/v1beta2");
        }
        let kind = object["kind"].as_str().unwrap().to_string();
        let tag = format!("{} ({})", case.name, case.source);
        match case.layer.as_deref() {
            Some("webhook") => {
                let got = webhook_errors(&kind, &case.object);
                if case.errors.is_none() && !got.is_empty() {
                    failures.push(format!("{tag}: want accepted, got {got:#?}"));
                }
                compare(&case, &got, &mut failures);
            }
            Some("api") => {
                let crd = crd_errors(&kind, &case.object);
                let webhook = if crd.is_empty() {
                    webhook_errors(&kind, &case.object)
                } else {
                    Vec::new()
                };
                let (by, got) = match (crd.is_empty(), webhook.is_empty()) {
                    (false, _) => (Some("crd"), crd),
                    (true, false) => (Some("webhook"), webhook),
                    (true, true) => (None, Vec::new()),
                };
                if by != case.refused.as_deref() {
                    failures.push(format!(
                        "{tag}: want refused by {:?}, got {by:?}: {got:#?}",
                        case.refused
                    ));
                    continue;
                }
                compare(&case, &got, &mut failures);
            }
            other => panic!("{tag}: unknown layer {other:?}"),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[derive(Debug, Deserialize)]
struct JobSetCase {
    name: String,
    source: String,
    layer: String,
    jobset: Value,
    #[serde(default)]
    want: Vec<String>,
    #[serde(default)]
    refused: Option<String>,
    #[serde(default)]
    defaulted: Option<serde_json::Map<String, Value>>,
}

/// `path: message`, as the API server prints a field error.
fn printed(errs: &[FieldError]) -> Vec<String> {
    (errs.iter())
        .map(|e| match e.path.as_str() {
            "" => e.message.clone(),
            p => format!("{p}: {}", e.message),
        })
        .collect()
}

#[test]
fn jobset_admission_cases_agree_with_upstream() {
    use schedsim::model::crd::CrdCheck;
    use schedsim::resolve::jobset_admission::{crd, default, validate_create};
    let cases: Vec<JobSetCase> = cases("tests/data/jobset/admission-cases.yaml");
    assert!(cases.len() >= 50, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for case in cases {
        let tag = format!("{} ({})", case.name, case.source);
        let name = case.jobset["metadata"]["name"].as_str().unwrap_or("");
        let mut spec = case.jobset["spec"].clone();
        let (by, got) = match case.layer.as_str() {
            "webhook" => (None, validate_create(name, &spec)),
            "default" => {
                default(&mut spec);
                for (pointer, want) in case.defaulted.iter().flatten() {
                    if spec.pointer(pointer) != Some(want) {
                        failures.push(format!(
                            "{tag}: {pointer} is {:?}, want {want}",
                            spec.pointer(pointer)
                        ));
                    }
                }
                continue;
            }
            "api" => {
                default(&mut spec);
                let mut c = CrdCheck::new();
                crd(&spec, "spec", &mut c);
                let schema = c.finish();
                match schema.is_empty() {
                    false => (Some("crd"), schema),
                    true => {
                        let errs = validate_create(name, &spec);
                        ((!errs.is_empty()).then_some("webhook"), errs)
                    }
                }
            }
            other => panic!("{tag}: unknown layer {other}"),
        };
        if case.layer == "api" && by != case.refused.as_deref() {
            failures.push(format!(
                "{tag}: want refused by {:?}, got {by:?}: {got:#?}",
                case.refused
            ));
            continue;
        }
        let lines = printed(&got);
        if case.want.is_empty() && !lines.is_empty() {
            failures.push(format!("{tag}: want accepted, got {lines:#?}"));
        }
        for want in &case.want {
            if !lines.iter().any(|l| l.contains(want.as_str())) {
                failures.push(format!("{tag}: no error contains {want:?}: {lines:#?}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[derive(Debug, Deserialize)]
struct TrainerCase {
    name: String,
    source: String,
    runtime: Value,
    errors: Vec<String>,
    #[serde(default)]
    warning: Option<String>,
}

#[test]
fn trainer_admission_cases_agree_with_upstream() {
    use schedsim::resolve::trainer_admission::{runtime_crd, runtime_warning, runtime_webhook};
    let cases: Vec<TrainerCase> = cases("tests/data/trainer/admission-cases.yaml");
    assert!(cases.len() >= 7, "only {} cases", cases.len());
    let mut failures = Vec::new();
    for case in cases {
        let tag = format!("{} ({})", case.name, case.source);
        let crd = runtime_crd(&case.runtime);
        if !crd.is_empty() {
            failures.push(format!("{tag}: the CRD refuses it: {crd:#?}"));
            continue;
        }
        let got = runtime_webhook(&case.runtime);
        let paths: Vec<&str> = got.iter().map(|e| e.path.as_str()).collect();
        if paths != case.errors || !got.iter().all(|e| e.message.starts_with("Invalid value")) {
            failures.push(format!("{tag}: want {:?}, got {got:#?}", case.errors));
        }
        if runtime_warning(&case.runtime) != case.warning {
            failures.push(format!(
                "{tag}: want warning {:?}, got {:?}",
                case.warning,
                runtime_warning(&case.runtime)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}
