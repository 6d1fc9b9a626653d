//! The build-case harness shared by the PodTemplateOverrides and RuntimePatches case tables:
//! the expected jobs and errors of a case, runtime documents, and the checks.

use serde::Deserialize;
use serde_json::Value;

use schedsim::model::validate::FieldError;
use schedsim::resolve::build::ResolvedTrainJob;
use schedsim::resolve::runtime::{RuntimeKind, TrainingRuntime};

use super::Matcher;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExpectJob {
    pub name: String,
    pub replicas: i32,
    /// `parallelism` = `completions` of the Job template.
    pub parallelism: i32,
    /// The Job template's `trainer.kubeflow.org/trainjob-ancestor-step` label.
    #[serde(default)]
    pub ancestor: Option<String>,
    pub pod_template: Value,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ExpectError {
    pub path_prefix: String,
    pub message: String,
}

pub fn documents(name: &str, text: &str) -> Vec<Value> {
    serde_saphyr::from_multiple::<Value>(text).unwrap_or_else(|e| panic!("{name}: {e}"))
}

pub fn runtime_from(doc: Value) -> TrainingRuntime {
    // `TrainingRuntime.kind` is `#[serde(skip)]`: it comes from the document's kind.
    let kind = match doc.get("kind").and_then(Value::as_str) {
        Some("ClusterTrainingRuntime") => RuntimeKind::ClusterTrainingRuntime,
        Some("TrainingRuntime") => RuntimeKind::TrainingRuntime,
        other => panic!("runtime document: unexpected kind {other:?}"),
    };
    let mut runtime: TrainingRuntime =
        serde_json::from_value(doc).unwrap_or_else(|e| panic!("runtime document: {e}"));
    runtime.kind = kind;
    runtime
}

pub fn check_errors(m: &mut Matcher, expected: &[ExpectError], actual: &[FieldError]) {
    if expected.len() != actual.len() {
        m.fail(
            "errors",
            format!(
                "expected {} errors, found {}: {}",
                expected.len(),
                actual.len(),
                render(actual)
            ),
        );
        return;
    }
    for (i, (e, a)) in expected.iter().zip(actual).enumerate() {
        if !a.path.starts_with(&e.path_prefix) {
            m.fail(
                &format!("errors[{i}].path"),
                format!(
                    "expected a path under {:?}, found {:?}",
                    e.path_prefix, a.path
                ),
            );
        }
        if !a.message.contains(&e.message) {
            m.fail(
                &format!("errors[{i}].message"),
                format!("expected to contain {:?}, found {:?}", e.message, a.message),
            );
        }
    }
}

pub fn check_jobs(m: &mut Matcher, expected: &[ExpectJob], resolved: &ResolvedTrainJob) {
    let want: Vec<&str> = expected.iter().map(|j| j.name.as_str()).collect();
    let got = job_names(resolved);
    if want != got {
        m.fail(
            "jobs",
            format!("expected replicated jobs {want:?}, found {got:?}"),
        );
    }
    for exp in expected {
        let path = format!("jobs[{}]", exp.name);
        let Some(act) = resolved.jobs.iter().find(|j| j.name == exp.name) else {
            continue;
        };
        if act.replicas != exp.replicas {
            m.fail(
                &format!("{path}.replicas"),
                format!("expected {}, found {}", exp.replicas, act.replicas),
            );
        }
        if act.parallelism != exp.parallelism {
            m.fail(
                &format!("{path}.parallelism"),
                format!("expected {}, found {}", exp.parallelism, act.parallelism),
            );
        }
        if exp.ancestor.is_some() && act.ancestor != exp.ancestor {
            m.fail(
                &format!("{path}.ancestor"),
                format!("expected {:?}, found {:?}", exp.ancestor, act.ancestor),
            );
        }
        m.check(
            &exp.pod_template,
            Some(&act.pod_template.value()),
            &format!("{path}.podTemplate"),
            "",
        );
    }
}

pub fn job_names(resolved: &ResolvedTrainJob) -> Vec<&str> {
    resolved.jobs.iter().map(|j| j.name.as_str()).collect()
}

pub fn render(errs: &[FieldError]) -> String {
    let parts: Vec<String> = errs
        .iter()
        .map(|e| format!("{}: {}", e.path, e.message))
        .collect();
    format!("[{}]", parts.join("; "))
}

/// Runs a case table: prints one line per case (its failures under it) and fails the test
/// naming every failed case. `results` are `(id, title, failures)`.
pub fn assert_cases_pass(kind: &str, results: Vec<(String, String, Vec<String>)>) {
    use std::fmt::Write as _;
    let width = results.iter().map(|(id, _, _)| id.len()).max().unwrap_or(0);
    let mut report = String::new();
    let mut failed = Vec::new();
    for (id, title, failures) in &results {
        let status = if failures.is_empty() { "ok" } else { "FAIL" };
        let _ = writeln!(report, "{id:<width$} {status:<4} {title}");
        for f in failures {
            let _ = writeln!(report, "{:width$} - {f}", "");
        }
        if !failures.is_empty() {
            failed.push(id.clone());
        }
    }
    println!("{report}");
    assert!(
        failed.is_empty(),
        "{} of {} {kind} cases failed: {failed:?}\n{report}",
        failed.len(),
        results.len()
    );
}

/// The cases of `files` (`(name, YAML text)`), each document one case.
pub fn load_cases<C: serde::de::DeserializeOwned>(files: &[(&str, &str)]) -> Vec<C> {
    files
        .iter()
        .flat_map(|(name, text)| {
            documents(name, text).into_iter().map(move |doc| {
                let id = doc.get("id").cloned().unwrap_or(Value::Null);
                serde_json::from_value::<C>(doc)
                    .unwrap_or_else(|e| panic!("{name}: case {id}: {e}"))
            })
        })
        .collect()
}

/// Runtime documents as the lookup the build uses; a name may appear once.
pub fn runtimes_of(docs: Vec<Value>) -> schedsim::resolve::Runtimes {
    let mut all = schedsim::resolve::Runtimes::default();
    for doc in docs {
        let runtime = runtime_from(doc);
        let name = runtime.name().to_string();
        assert!(all.insert(runtime).is_none(), "duplicate runtime {name}");
    }
    all
}

/// A resolved TrainJob's replicated jobs as `(name, replicas, parallelism, pod template)`.
pub type JobSummary = Vec<(String, i32, i32, Value)>;

pub fn summary(r: &ResolvedTrainJob) -> JobSummary {
    r.jobs
        .iter()
        .map(|j| {
            (
                j.name.clone(),
                j.replicas,
                j.parallelism,
                j.pod_template.value().into_owned(),
            )
        })
        .collect()
}
