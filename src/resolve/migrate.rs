//! `podTemplateOverrides` (Trainer v2.1) → `runtimePatches` (v2.2+), as the RuntimePatches guide's
//! migration section shows (shared/seeds/004): all overrides become one entry of one manager
//! (by default the Kubeflow SDK's), each targeted job one `replicatedJobs[]` item whose pod
//! template carries the override's metadata and spec. Overrides that target the same job are
//! composed with the same strategic merge patch, in order, so applying the entry equals
//! applying the overrides one after the other.

use serde_json::{Map, Value, json};

use super::patches::omit_empty;
use super::smp::{self, Schema};

/// The manager the Kubeflow SDK writes (`trainer.kubeflow.org/kubeflow-sdk`).
pub const SDK_MANAGER: &str = "trainer.kubeflow.org/kubeflow-sdk";

/// Rewrites one TrainJob object; `Ok(None)` when it has no `podTemplateOverrides`. Returns the
/// new object and notes for the user.
pub fn train_job(job: &Value, manager: &str) -> Result<Option<(Value, Vec<String>)>, String> {
    let Some(overrides) = job
        .pointer("/spec/podTemplateOverrides")
        .and_then(Value::as_array)
    else {
        return Ok(None);
    };
    let mut notes = Vec::new();
    // Job name → composed PodTemplateSpec patch, in order of first appearance.
    let mut jobs: Vec<(String, Value)> = Vec::new();
    for (i, o) in overrides.iter().enumerate() {
        let mut patch = Map::new();
        if let Some(meta) = o.get("metadata").and_then(Value::as_object) {
            let kept: Map<String, Value> = meta
                .iter()
                .filter(|(k, _)| *k == "labels" || *k == "annotations")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            if !kept.is_empty() {
                patch.insert("metadata".into(), Value::Object(kept));
            }
        }
        if let Some(spec) = o.get("spec") {
            patch.insert("spec".into(), omit_empty(spec));
        }
        let patch = Value::Object(patch);
        let targets = o
            .get("targetJobs")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut seen = Vec::new();
        for t in targets {
            let Some(name) = t.get("name").and_then(Value::as_str) else {
                return Err(format!(
                    "spec.podTemplateOverrides[{i}].targetJobs: an entry without a name"
                ));
            };
            if seen.contains(&name.to_string()) {
                continue;
            }
            seen.push(name.to_string());
            match jobs.iter_mut().find(|(n, _)| n == name) {
                Some((_, composed)) => {
                    *composed = smp::strategic_merge(composed, &patch, Schema::PodTemplateSpec)
                        .map_err(|e| e.to_string())?;
                }
                None => jobs.push((name.to_string(), patch.clone())),
            }
        }
    }
    let replicated_jobs: Vec<Value> = jobs
        .into_iter()
        .map(|(name, pod)| json!({"name": name, "template": {"spec": {"template": pod}}}))
        .collect();
    let mut template = Map::new();
    let mut jobset_meta = Map::new();
    let mut out = job.clone();
    let spec = out
        .get_mut("spec")
        .and_then(Value::as_object_mut)
        .ok_or("a TrainJob without spec")?;
    spec.remove("podTemplateOverrides");
    // v2.2 removed spec.labels/annotations; they now sit on the JobSet template of a patch.
    for key in ["labels", "annotations"] {
        if let Some(v) = spec.remove(key) {
            jobset_meta.insert(key.to_string(), v);
            notes.push(format!("spec.{key} moved to runtimePatches[].trainingRuntimeSpec.template.metadata.{key} (v2.2 removed spec.{key})"));
        }
    }
    if !jobset_meta.is_empty() {
        template.insert("metadata".into(), Value::Object(jobset_meta));
    }
    template.insert("spec".into(), json!({"replicatedJobs": replicated_jobs}));
    spec.insert(
        "runtimePatches".into(),
        json!([{"manager": manager, "trainingRuntimeSpec": {"template": Value::Object(template)}}]),
    );
    if spec
        .get("trainer")
        .and_then(|t| t.get("resourcesPerNode"))
        .is_some()
    {
        notes.push(
            "spec.trainer.resourcesPerNode: v2.2+ merges it into the runtime's resources per resource name, where v2.1 replaced them"
                .into(),
        );
    }
    Ok(Some((out, notes)))
}

/// Rewrites every TrainJob found anywhere in a document (a TrainJob, a `List`, or a Scenario's
/// inline workloads). Returns the notes, each prefixed with the TrainJob's name.
pub fn document(doc: &mut Value, manager: &str) -> Result<Vec<String>, String> {
    let mut notes = Vec::new();
    visit(doc, manager, &mut notes)?;
    Ok(notes)
}

fn visit(v: &mut Value, manager: &str, notes: &mut Vec<String>) -> Result<(), String> {
    if v.get("kind").and_then(Value::as_str) == Some("TrainJob") {
        if let Some((new, job_notes)) = train_job(v, manager)? {
            let name = v
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            notes.extend(
                job_notes
                    .into_iter()
                    .map(|n| format!("TrainJob {name}: {n}")),
            );
            *v = new;
        }
        return Ok(());
    }
    match v {
        Value::Object(m) => m.values_mut().try_for_each(|x| visit(x, manager, notes)),
        Value::Array(a) => a.iter_mut().try_for_each(|x| visit(x, manager, notes)),
        _ => Ok(()),
    }
}
