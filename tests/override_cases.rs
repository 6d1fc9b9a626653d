//! Conformance of the TrainJob build (runtime + `podTemplateOverrides` → replicated jobs) against
//! the podTemplateOverrides cases of `../shared/upstream-cases/kubeflow-override-cases.md`
//! (Kubeflow Trainer v2.1 semantics).
//!
//! Data: `tests/data/override-cases/`:
//! * `runtimes.yaml` — fixture R0 (`test-runtime`) and the runtimes the cases build on;
//! * `build-cases.yaml` (A1–A6), `validation-cases.yaml` (B1–B4), `derived-cases.yaml`
//!   (D1–D7, D9, lettered sub-cases). The header of `build-cases.yaml` documents the schema.
//!
//! Each case is resolved with [`find_runtime`] + [`build`] and the resolved pod template of every
//! replicated job is compared with the fields the case asserts ("expected is a subset of actual",
//! see [`Matcher`]): schedsim adds JobSet labels, `restartPolicy`, requests-from-limits defaulting
//! etc. that upstream's JobSet does not have, so only asserted fields are compared. List order
//! follows the case's confidence: UPSTREAM-UNIT cases compare env / volumes / volumeMounts /
//! tolerations as sets (upstream's `cmpopts.SortSlices`), UPSTREAM-INTEG and DERIVED cases compare
//! every list in order. Every mismatch of every case is collected, so one run lists them all.
//!
//! Not ported here:
//! * RuntimePatches cases (v2.2+ API; a later issue): A7, A8, A9, A10, A11, B12, B13, B14, B15,
//!   B16, C1–C7 (mutating-webhook `time` stamping), D8 (unknown replicatedJob via JobSet-level SMP).
//! * A12 (v2.0 `podSpecOverrides`): does not map — schedsim's TrainJob has no `podSpecOverrides`
//!   field (it is ignored as an unknown field) and v2.0's duplicate-target rejection (B17) is not
//!   modelled; the v2.1 equivalents are A4/A5.
//! * B5–B11 and B17: out of scope — they are update-time webhook checks (old vs new TrainJob,
//!   `suspend` transitions, the live JobSet's `replicatedJobsStatus[].active`, a failing JobSet
//!   lookup, v2.0's cross-override duplicate check). schedsim resolves a single TrainJob
//!   snapshot; it models neither updates, suspension, nor JobSet state.
//! * A13 (the RuntimePatches twin of A6) is RuntimePatches as well.
//!
//! A property test at the end checks that an empty override is the identity and that applying
//! the same override twice equals applying it once.

mod common;
use common::build_cases::*;
use common::props::*;
use common::{Confidence, Matcher};

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use schedsim::resolve::Runtimes;
use schedsim::resolve::build::{BuildOptions, build, find_runtime};
use schedsim::resolve::runtime::TrainingRuntime;
use schedsim::resolve::smp::{Schema, strategic_merge};
use schedsim::resolve::trainjob::TrainJob;

const RUNTIMES: &str = include_str!("data/override-cases/runtimes.yaml");
const CASE_FILES: &[(&str, &str)] = &[
    (
        "build-cases.yaml",
        include_str!("data/override-cases/build-cases.yaml"),
    ),
    (
        "validation-cases.yaml",
        include_str!("data/override-cases/validation-cases.yaml"),
    ),
    (
        "derived-cases.yaml",
        include_str!("data/override-cases/derived-cases.yaml"),
    ),
];

/// The case ids of the data files, in file order.
const PORTED: &[&str] = &[
    "A1", "A2", "A3", "A4", "A5", "A6", //
    "B1", "B2", "B3", "B4", //
    "D1a", "D1b", "D1c", "D2a", "D2b", "D3a", "D3b", "D3c", "D4a", "D4b", "D5a", "D5b", "D6",
    "D7-merge", "D7-build", "D9a", "D9b", "D9c",
];

const BUILD: BuildOptions<'static> = BuildOptions {
    overrides: true,
    track: false,
    clock: schedsim::resolve::build::DEFAULT_CLOCK,
};

// ---- case schema --------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)] // `title`, `source`, `notes` document the case; parsed to pin the schema.
struct Case {
    id: String,
    title: String,
    source: String,
    confidence: Confidence,
    #[serde(default)]
    notes: Option<String>,
    #[serde(default)]
    train_job: Option<Value>,
    #[serde(default)]
    merge: Option<MergeInput>,
    expect: Expect,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct MergeInput {
    original: Value,
    patches: Vec<Value>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Expect {
    #[serde(default)]
    jobs: Option<Vec<ExpectJob>>,
    #[serde(default)]
    errors: Option<Vec<ExpectError>>,
    #[serde(default)]
    merged: Option<Value>,
}

// ---- loading ------------------------------------------------------------------------------

fn runtimes() -> Runtimes {
    runtimes_of(documents("runtimes.yaml", RUNTIMES))
}

fn cases() -> Vec<Case> {
    load_cases(CASE_FILES)
}

// ---- matcher ------------------------------------------------------------------------------

/// "Expected is a subset of actual" over JSON, with the list-order rule of one case.
///
/// * map: every expected key must match; actual may have more keys, unless the expected map is
///   written `{$exact: {...}}`.
/// * `null`: the field must be absent (or `null`).
/// * list: same length, items matched pairwise (each expected item a subset of its actual item),
///   in order or — for unordered lists — after sorting both by merge key. `{$ordered: [...]}`
///   / `{$unordered: [...]}` force the rule for one list.
/// * scalar: equal.
#[test]
fn matcher_rules() {
    let failures = |confidence, expected: Value, actual: Value| {
        let mut m = Matcher::new(confidence);
        m.check(&expected, Some(&actual), "", "");
        m.failures
    };
    let env = |names: &[&str]| -> Value {
        json!({"env": names.iter().map(|n| json!({"name": n, "value": "1"})).collect::<Vec<_>>()})
    };
    let (unit, integ) = (Confidence::UpstreamUnit, Confidence::UpstreamInteg);
    // Subset: extra actual keys are fine, a missing or different one is not.
    assert!(failures(integ, json!({"a": 1}), json!({"a": 1, "b": 2})).is_empty());
    assert_eq!(failures(integ, json!({"a": 1}), json!({"a": 2})).len(), 1);
    assert_eq!(
        failures(integ, json!({"$exact": {"a": 1}}), json!({"a": 1, "b": 2})).len(),
        1
    );
    // null = absent.
    assert!(failures(integ, json!({"a": null}), json!({"b": 1})).is_empty());
    assert_eq!(
        failures(integ, json!({"a": null}), json!({"a": 1})).len(),
        1
    );
    // Lists: the length is exact; env order matters for INTEG, not for UNIT.
    assert_eq!(failures(unit, env(&["A"]), env(&["A", "B"])).len(), 1);
    assert!(failures(unit, env(&["B", "A"]), env(&["A", "B"])).is_empty());
    assert_eq!(failures(integ, env(&["B", "A"]), env(&["A", "B"])).len(), 1);
    assert!(
        failures(
            integ,
            json!({"env": {"$unordered": [{"name": "B"}, {"name": "A"}]}}),
            env(&["A", "B"])
        )
        .is_empty()
    );
    // Lists other than env/volumes/volumeMounts/tolerations keep their order under UNIT.
    assert_eq!(
        failures(
            unit,
            json!({"args": ["b", "a"]}),
            json!({"args": ["a", "b"]})
        )
        .len(),
        1
    );
}

// ---- running the cases --------------------------------------------------------------------

fn run_case(case: &Case, runtimes: &Runtimes) -> Vec<String> {
    let mut m = Matcher::new(case.confidence);
    if let Some(merge) = &case.merge {
        let expected = case
            .expect
            .merged
            .as_ref()
            .expect("merge case needs expect.merged");
        let merged = merge
            .patches
            .iter()
            .try_fold(merge.original.clone(), |acc, p| {
                strategic_merge(&acc, p, Schema::PodTemplateSpec)
            });
        match merged {
            Ok(merged) => m.check(expected, Some(&merged), "merged", ""),
            Err(e) => m.fail("merged", format!("strategic_merge failed: {e}")),
        }
        return m.failures;
    }
    let doc = case
        .train_job
        .clone()
        .expect("case needs trainJob or merge");
    let job: TrainJob = serde_json::from_value(doc).expect("trainJob deserializes");
    let runtime = match find_runtime(&job, runtimes) {
        Ok(r) => r,
        Err(e) => {
            m.fail("runtimeRef", format!("{}: {}", e.path, e.message));
            return m.failures;
        }
    };
    let result = build(&job, runtime, BUILD);
    match (&case.expect.errors, &case.expect.jobs, result) {
        (Some(expected), None, Err(errs)) => check_errors(&mut m, expected, &errs),
        (Some(_), None, Ok(resolved)) => m.fail(
            "build",
            format!(
                "expected errors, build succeeded with jobs {:?}",
                job_names(&resolved)
            ),
        ),
        (None, Some(expected), Ok(resolved)) => check_jobs(&mut m, expected, &resolved),
        (None, Some(_), Err(errs)) => m.fail(
            "build",
            format!("expected success, build failed: {}", render(&errs)),
        ),
        _ => panic!("case {}: expect needs exactly one of jobs/errors", case.id),
    }
    m.failures
}

#[test]
fn data_files_hold_exactly_the_ported_cases() {
    let ids: Vec<String> = cases().into_iter().map(|c| c.id).collect();
    assert_eq!(ids, PORTED, "case ids in tests/data/override-cases/");
}

#[test]
fn override_cases() {
    let runtimes = runtimes();
    let results = cases()
        .into_iter()
        .map(|case| {
            let failures = run_case(&case, &runtimes);
            (case.id, case.title, failures)
        })
        .collect();
    assert_cases_pass("override", results);
}

// ---- properties ---------------------------------------------------------------------------

/// R0 whose `node` pod has an initContainer [`INIT`] and the given fields set directly.
fn property_runtime(fields: &PodFields) -> TrainingRuntime {
    let mut doc = documents("runtimes.yaml", RUNTIMES)
        .into_iter()
        .find(|d| d.pointer("/metadata/name") == Some(&json!("test-runtime")))
        .expect("R0 in runtimes.yaml");
    doc["metadata"]["name"] = json!("prop-runtime");
    let jobs = doc
        .pointer_mut("/spec/template/spec/replicatedJobs")
        .and_then(Value::as_array_mut)
        .expect("R0 has replicatedJobs");
    let node = jobs
        .iter_mut()
        .find(|j| j["name"] == "node")
        .expect("R0 has a node job");
    let pod = &mut node["template"]["spec"]["template"];
    let mut init = json!({"name": INIT, "image": "test:runtime"});
    if let Some(env) = &fields.init_env {
        init["env"] = json!(env);
    }
    pod["spec"]["initContainers"] = json!([init]);
    if let Some(s) = &fields.node_selector {
        pod["spec"]["nodeSelector"] = json!(s);
    }
    if let Some(t) = &fields.tolerations {
        pod["spec"]["tolerations"] = json!(t);
    }
    if let Some(v) = &fields.volumes {
        let list = pod["spec"]["volumes"].as_array_mut().expect("R0 volumes");
        list.extend(v.iter().cloned());
    }
    if let Some(l) = &fields.labels {
        pod["metadata"] = json!({"labels": l});
    }
    runtime_from(doc)
}

/// `{targetJobs: [{name: node}], …}` setting the given fields.
fn override_of(fields: &PodFields) -> Value {
    let mut spec = Map::new();
    if let Some(s) = &fields.node_selector {
        spec.insert("nodeSelector".into(), json!(s));
    }
    if let Some(t) = &fields.tolerations {
        spec.insert("tolerations".into(), json!(t));
    }
    if let Some(env) = &fields.init_env {
        spec.insert("initContainers".into(), json!([{"name": INIT, "env": env}]));
    }
    if let Some(v) = &fields.volumes {
        spec.insert("volumes".into(), json!(v));
    }
    let mut o = json!({"targetJobs": [{"name": "node"}]});
    if !spec.is_empty() {
        o["spec"] = Value::Object(spec);
    }
    if let Some(l) = &fields.labels {
        o["metadata"] = json!({"labels": l});
    }
    o
}

fn empty_override() -> Value {
    json!({"targetJobs": [{"name": "node"}]})
}

/// The replicated jobs of a TrainJob on `runtime` with these overrides.
fn resolve(runtime: &TrainingRuntime, overrides: &[Value]) -> Result<JobSummary, String> {
    let job: TrainJob = serde_json::from_value(json!({
        "apiVersion": "trainer.kubeflow.org/v1alpha1",
        "kind": "TrainJob",
        "metadata": {"name": "prop", "namespace": "default"},
        "spec": {
            "runtimeRef": {"kind": "TrainingRuntime", "name": "prop-runtime"},
            "trainer": {"image": "test:trainjob"},
            "podTemplateOverrides": overrides,
        },
    }))
    .map_err(|e| e.to_string())?;
    let resolved = build(&job, runtime, BUILD).map_err(|e| render(&e))?;
    Ok(summary(&resolved))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// An override with only `targetJobs` changes nothing, alone or next to another override.
    #[test]
    fn empty_override_is_the_identity(base in pod_fields(), fields in pod_fields()) {
        let runtime = property_runtime(&base);
        let o = override_of(&fields);
        let e = empty_override();
        let none = resolve(&runtime, &[]).map_err(TestCaseError::fail)?;
        prop_assert_eq!(&none, &resolve(&runtime, std::slice::from_ref(&e)).map_err(TestCaseError::fail)?);
        let once = resolve(&runtime, std::slice::from_ref(&o)).map_err(TestCaseError::fail)?;
        prop_assert_eq!(&once, &resolve(&runtime, &[o.clone(), e.clone()]).map_err(TestCaseError::fail)?);
        prop_assert_eq!(&once, &resolve(&runtime, &[e, o]).map_err(TestCaseError::fail)?);
    }

    /// Two identical overrides give what one gives (the merge is idempotent).
    #[test]
    fn same_override_twice_equals_once(base in pod_fields(), fields in pod_fields()) {
        let runtime = property_runtime(&base);
        let o = override_of(&fields);
        let once = resolve(&runtime, std::slice::from_ref(&o)).map_err(TestCaseError::fail)?;
        let twice = resolve(&runtime, &[o.clone(), o]).map_err(TestCaseError::fail)?;
        prop_assert_eq!(once, twice);
    }
}

/// The property generators cover every field kind the properties are about.
#[test]
fn property_fields_reach_the_node_pod() {
    let fields = PodFields {
        node_selector: Some(BTreeMap::from([("pool".into(), "a".into())])),
        tolerations: Some(vec![json!({"key": "b", "operator": "Exists"})]),
        init_env: Some(vec![json!({"name": "A", "value": "b"})]),
        volumes: Some(vec![json!({"name": "data", "emptyDir": {}})]),
        labels: Some(BTreeMap::from([("team".into(), "c".into())])),
    };
    let runtime = property_runtime(&PodFields {
        node_selector: None,
        tolerations: None,
        init_env: None,
        volumes: None,
        labels: None,
    });
    let resolved = resolve(&runtime, &[override_of(&fields)]).expect("resolves");
    let node = &resolved.iter().find(|j| j.0 == "node").expect("node job").3;
    let mut m = Matcher::new(Confidence::Derived);
    m.check(
        &json!({
            "metadata": {"labels": {"team": "c"}},
            "spec": {
                "nodeSelector": {"$exact": {"pool": "a"}},
                "tolerations": [{"key": "b", "operator": "Exists"}],
                "initContainers": [{"name": INIT, "env": [{"name": "A", "value": "b"}]}],
                "volumes": [{"name": "data"}, {"name": "initializer"}],
            },
        }),
        Some(node),
        "node",
        "",
    );
    assert!(m.failures.is_empty(), "{:#?}", m.failures);
    let names: BTreeSet<&str> = resolved.iter().map(|j| j.0.as_str()).collect();
    assert_eq!(
        names,
        BTreeSet::from(["dataset-initializer", "model-initializer", "node"])
    );
}
