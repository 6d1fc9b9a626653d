//! The three override APIs of a TrainJob, turned into one ordered list of strategic merge
//! patches for the one engine (`smp.rs`), after the admission webhook's checks.
//!
//! - `podTemplateOverrides` (Trainer v2.1): per entry, per targeted job, a PodTemplateSpec patch
//!   (`pkg/runtime/core/trainingruntime.go: mergePodTemplateOverrides` @v2.1.0).
//! - `runtimePatches` (v2.2+): entries in list order; each replicated-job patch is a
//!   JobTemplateSpec patch of the job with that name (v2.3+ merges the whole JobSetSpec with
//!   `replicatedJobs` merged by name, then restores runtime order — the same result for the
//!   fields a patch may carry). JobSet metadata changes no pod.
//! - `templateOverrides` (the PR #3199 proposal, never shipped): managers in list order, each
//!   manager's `job` and `pod` entries by `time` (jobs first at equal times); a `job` entry
//!   without `targetJobs` patches the JobSet. This order is schedsim's definition.
//!
//! Validation messages are upstream's (`pkg/runtime/framework/plugins/jobset/jobset.go:
//! Validate`), at the entry that causes them.

use serde_json::{Map, Value, json};

use super::runtime::{ANCESTOR_DATASET_INITIALIZER, ANCESTOR_MODEL_INITIALIZER, NODE};
use super::trainjob::{OverrideMetadata, TrainJob};
use crate::model::validate::{FieldError, validate_domain_prefixed_path};

/// Which Trainer release's build rules apply.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    /// v2.1: `podTemplateOverrides`; `resourcesPerNode` replaces the trainer's resources.
    V2_1,
    /// The current release: `resourcesPerNode` is merged per resource name.
    Current,
}

/// What a patch applies to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// A PodTemplateSpec patch.
    Pod,
    /// A JobTemplateSpec patch (Job metadata and the pod template under `spec.template`).
    Job,
}

/// One strategic merge patch onto one replicated job.
#[derive(Debug, Clone)]
pub struct Patch {
    /// `podTemplateOverrides[0]`, `runtimePatches[1] (kueue.x-k8s.io/manager)`, …
    pub source: String,
    /// The field path of the entry, for errors.
    pub path: String,
    pub manager: Option<String>,
    pub job: String,
    pub level: Level,
    pub patch: Value,
}

/// The patches of a TrainJob, in application order.
#[derive(Debug, Clone)]
pub struct Patches {
    pub generation: Generation,
    pub patches: Vec<Patch>,
    /// `(manager, time)` per manager entry; a missing time is stamped with the scenario clock,
    /// as the mutating webhook stamps `now`. Time never affects the merge.
    pub stamps: Vec<(String, String)>,
}

const PATCHES_PATH: &str = "spec.runtimePatches";
const OVERRIDES_PATH: &str = "spec.podTemplateOverrides";
const TEMPLATE_OVERRIDES_PATH: &str = "spec.templateOverrides";
/// `MaxItems` of `runtimePatches`.
const MAX_RUNTIME_PATCHES: usize = 16;
/// `MaxLength` of `runtimePatches[].manager`.
const MAX_MANAGER_LENGTH: usize = 253;

/// Collects and validates the TrainJob's overrides against the runtime's replicated jobs.
/// `apply` false gives no patches (the runtime-only baseline).
pub fn collect(
    job: &TrainJob,
    rjobs: &[Value],
    clock: &str,
    apply: bool,
) -> Result<Patches, Vec<FieldError>> {
    let spec = &job.spec;
    let used = [
        !spec.pod_template_overrides.is_empty(),
        !spec.runtime_patches.is_empty(),
        !spec.template_overrides.is_empty(),
    ];
    if used.iter().filter(|u| **u).count() > 1 {
        return Err(vec![FieldError {
            path: "spec".into(),
            message: "Forbidden: podTemplateOverrides (Trainer v2.1), runtimePatches (v2.2+) and templateOverrides (proposal) are alternatives: set only one".into(),
        }]);
    }
    let generation = if used[0] {
        Generation::V2_1
    } else {
        Generation::Current
    };
    let mut out = Patches {
        generation,
        patches: Vec::new(),
        stamps: Vec::new(),
    };
    let mut errs = Vec::new();
    validate_trainer(job, &mut errs);
    let check = JobCheck { rjobs };
    if used[0] {
        pod_template_overrides(job, &check, &mut out, &mut errs);
    } else if used[1] {
        runtime_patches(job, &check, clock, &mut out, &mut errs);
    } else if used[2] {
        template_overrides(job, &check, clock, &mut out, &mut errs);
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    if !apply {
        out.patches.clear();
    }
    Ok(out)
}

fn pod_template_overrides(
    job: &TrainJob,
    check: &JobCheck<'_>,
    out: &mut Patches,
    errs: &mut Vec<FieldError>,
) {
    for (i, o) in job.spec.pod_template_overrides.iter().enumerate() {
        let at = format!("{OVERRIDES_PATH}[{i}]");
        let patch = pod_patch(o.metadata.as_ref(), o.spec.as_ref());
        // The loop runs over the runtime's jobs, so a job named twice is patched once.
        for rjob in check.rjobs {
            let name = job_name(rjob);
            if o.target_jobs.iter().any(|t| t.name == name) {
                if let Some(spec) = &o.spec {
                    check.pod_spec(spec, rjob, &format!("{at}.spec"), errs);
                }
                out.patches.push(Patch {
                    source: format!("podTemplateOverrides[{i}]"),
                    path: at.clone(),
                    manager: None,
                    job: name.to_string(),
                    level: Level::Pod,
                    patch: patch.clone(),
                });
            }
        }
        for (t, target) in o.target_jobs.iter().enumerate() {
            if !check.has_job(&target.name) {
                errs.push(invalid(
                    format!("{at}.targetJobs[{t}].name"),
                    &target.name,
                    "must not have targetJob that doesn't exist in the runtime job template",
                ));
            }
        }
    }
}

fn runtime_patches(
    job: &TrainJob,
    check: &JobCheck<'_>,
    clock: &str,
    out: &mut Patches,
    errs: &mut Vec<FieldError>,
) {
    let list = &job.spec.runtime_patches;
    if list.len() > MAX_RUNTIME_PATCHES {
        errs.push(FieldError {
            path: PATCHES_PATH.into(),
            message: format!(
                "Too many: {}: must have at most {MAX_RUNTIME_PATCHES} items",
                list.len()
            ),
        });
    }
    for (i, p) in list.iter().enumerate() {
        let at = format!("{PATCHES_PATH}[{i}]");
        validate_manager(&p.manager, &format!("{at}.manager"), errs);
        if list[..i].iter().any(|q| q.manager == p.manager) {
            errs.push(FieldError {
                path: at.clone(),
                message: format!("Duplicate value: {{\"manager\":{:?}}}", p.manager),
            });
        }
        out.stamps.push((
            p.manager.clone(),
            p.time.clone().unwrap_or_else(|| clock.to_string()),
        ));
        let source = format!("runtimePatches[{i}] ({})", p.manager);
        let rjob_patches = p
            .training_runtime_spec
            .as_ref()
            .and_then(|s| s.template.as_ref())
            .and_then(|t| t.spec.as_ref());
        for (j, rp) in rjob_patches
            .into_iter()
            .flat_map(|s| &s.replicated_jobs)
            .enumerate()
        {
            let rp_at = format!("{at}.trainingRuntimeSpec.template.spec.replicatedJobs[{j}]");
            let Some(rjob) = check.job(&rp.name) else {
                errs.push(invalid(
                    format!("{rp_at}.name"),
                    &rp.name,
                    "must not have replicated job that doesn't exist in the runtime job template",
                ));
                continue;
            };
            let template = rp.template.clone().unwrap_or_else(|| json!({}));
            if let Some(spec) = template.pointer("/spec/template/spec") {
                check.pod_spec(
                    spec,
                    rjob,
                    &format!("{rp_at}.template.spec.template.spec"),
                    errs,
                );
            }
            out.patches.push(Patch {
                source: source.clone(),
                path: rp_at,
                manager: Some(p.manager.clone()),
                job: rp.name.clone(),
                level: Level::Job,
                patch: omit_empty(&template),
            });
        }
    }
}

fn template_overrides(
    job: &TrainJob,
    check: &JobCheck<'_>,
    clock: &str,
    out: &mut Patches,
    errs: &mut Vec<FieldError>,
) {
    let list = &job.spec.template_overrides;
    for (i, m) in list.iter().enumerate() {
        let at = format!("{TEMPLATE_OVERRIDES_PATH}[{i}]");
        validate_manager(&m.manager, &format!("{at}.manager"), errs);
        if list[..i].iter().any(|q| q.manager == m.manager) {
            errs.push(FieldError {
                path: at.clone(),
                message: format!("Duplicate value: {{\"manager\":{:?}}}", m.manager),
            });
        }
        out.stamps.push((m.manager.clone(), clock.to_string()));
        // Entries by time (RFC 3339 with a fixed layout sorts as text); a missing time is the
        // clock, i.e. now; job entries before pod entries at equal times.
        let mut entries: Vec<(&str, usize, Level)> = m
            .job
            .iter()
            .enumerate()
            .map(|(k, e)| (e.time.as_deref().unwrap_or(clock), k, Level::Job))
            .chain(
                m.pod
                    .iter()
                    .enumerate()
                    .map(|(k, e)| (e.time.as_deref().unwrap_or(clock), k, Level::Pod)),
            )
            .collect();
        entries.sort_by(|a, b| {
            a.0.cmp(b.0)
                .then((a.2 == Level::Pod).cmp(&(b.2 == Level::Pod)))
                .then(a.1.cmp(&b.1))
        });
        for (_, k, level) in entries {
            let (kind, e) = match level {
                Level::Job => ("job", &m.job[k]),
                Level::Pod => ("pod", &m.pod[k]),
            };
            let entry_at = format!("{at}.{kind}[{k}]");
            let source = format!("templateOverrides[{i}].{kind}[{k}] ({})", m.manager);
            for (t, target) in e.target_jobs.iter().enumerate() {
                if !check.has_job(&target.name) {
                    errs.push(invalid(
                        format!("{entry_at}.targetJobs[{t}].name"),
                        &target.name,
                        "must not have targetJob that doesn't exist in the runtime job template",
                    ));
                }
            }
            // A job entry without targets patches the JobSet, which changes no pod.
            for rjob in check.rjobs {
                let name = job_name(rjob);
                if !e.target_jobs.iter().any(|t| t.name == name) {
                    continue;
                }
                let patch = match level {
                    Level::Pod => {
                        if let Some(spec) = &e.spec {
                            check.pod_spec(spec, rjob, &format!("{entry_at}.spec"), errs);
                        }
                        pod_patch(e.metadata.as_ref(), e.spec.as_ref())
                    }
                    Level::Job => {
                        if let Some(spec) =
                            e.spec.as_ref().and_then(|s| s.pointer("/template/spec"))
                        {
                            check.pod_spec(
                                spec,
                                rjob,
                                &format!("{entry_at}.spec.template.spec"),
                                errs,
                            );
                        }
                        pod_patch(e.metadata.as_ref(), e.spec.as_ref())
                    }
                };
                out.patches.push(Patch {
                    source: source.clone(),
                    path: entry_at.clone(),
                    manager: Some(m.manager.clone()),
                    job: name.to_string(),
                    level,
                    patch,
                });
            }
        }
    }
}

/// `{metadata: {labels, annotations}, spec}`, as v2.1 builds the patch of an override.
fn pod_patch(metadata: Option<&OverrideMetadata>, spec: Option<&Value>) -> Value {
    let mut patch = Map::new();
    if let Some(m) = metadata {
        let mut meta = Map::new();
        if let Some(l) = &m.labels {
            meta.insert("labels".into(), json!(l));
        }
        if let Some(a) = &m.annotations {
            meta.insert("annotations".into(), json!(a));
        }
        if !meta.is_empty() {
            patch.insert("metadata".into(), Value::Object(meta));
        }
    }
    if let Some(spec) = spec {
        patch.insert("spec".into(), omit_empty(spec));
    }
    Value::Object(patch)
}

/// Upstream marshals the typed override, whose fields are `omitempty`: nulls and empty lists
/// never reach the merge (an override's `tolerations: []` keeps the runtime's tolerations).
pub fn omit_empty(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(_, x)| !x.is_null() && !x.as_array().is_some_and(Vec::is_empty))
                .map(|(k, x)| (k.clone(), omit_empty(x)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(omit_empty).collect()),
        other => other.clone(),
    }
}

/// A manager name: the CRD's `MaxLength=253`, then `validation.IsDomainPrefixedPath`.
fn validate_manager(manager: &str, at: &str, errs: &mut Vec<FieldError>) {
    if manager.len() > MAX_MANAGER_LENGTH {
        errs.push(FieldError {
            path: at.into(),
            message: format!("Too long: may not be more than {MAX_MANAGER_LENGTH} bytes"),
        });
    }
    validate_domain_prefixed_path(manager, at, errs);
}

/// The TrainJob's own fields the CRD bounds: `trainer.numNodes` (`Minimum=0`) and
/// `trainer.numProcPerNode` (CEL `self >= 1`; v2.1 also took `auto`, `cpu`, `gpu`).
fn validate_trainer(job: &TrainJob, errs: &mut Vec<FieldError>) {
    let Some(t) = &job.spec.trainer else { return };
    if let Some(n) = t.num_nodes.filter(|n| *n < 0) {
        errs.push(FieldError {
            path: "spec.trainer.numNodes".into(),
            message: format!("Invalid value: {n}: spec.trainer.numNodes in body should be greater than or equal to 0"),
        });
    }
    if let Some(n) = t
        .num_proc_per_node
        .as_ref()
        .and_then(Value::as_i64)
        .filter(|n| *n < 1)
    {
        errs.push(FieldError {
            path: "spec.trainer".into(),
            message: format!(
                "Invalid value: {n}: numProcPerNode must be greater than or equal to 1"
            ),
        });
    }
}

fn invalid(path: String, value: &str, detail: &str) -> FieldError {
    FieldError {
        path,
        message: format!("Invalid value: {value:?}: {detail}"),
    }
}

fn job_name(rjob: &Value) -> &str {
    rjob.get("name").and_then(Value::as_str).unwrap_or("")
}

/// The runtime's replicated jobs, for the webhook's name checks.
struct JobCheck<'a> {
    rjobs: &'a [Value],
}

impl JobCheck<'_> {
    fn job(&self, name: &str) -> Option<&Value> {
        self.rjobs.iter().find(|j| job_name(j) == name)
    }

    fn has_job(&self, name: &str) -> bool {
        self.job(name).is_some()
    }

    /// A pod-spec patch for `rjob`: its containers and init containers must exist in the
    /// runtime's job (upstream pools both kinds of names), no env on the reserved containers,
    /// and no container fields the override types do not have. Upstream validates after
    /// merging and so never sees unknown names; schedsim checks the runtime's own names.
    fn pod_spec(&self, spec: &Value, rjob: &Value, at: &str, errs: &mut Vec<FieldError>) {
        let job = job_name(rjob);
        // `PodSpecPatch.terminationGracePeriodSeconds`: `Minimum=0`.
        if let Some(t) = spec
            .get("terminationGracePeriodSeconds")
            .and_then(Value::as_i64)
            .filter(|t| *t < 0)
        {
            let field = format!("{at}.terminationGracePeriodSeconds");
            errs.push(FieldError {
                path: field.clone(),
                message: format!(
                    "Invalid value: {t}: {field} in body should be greater than or equal to 0"
                ),
            });
        }
        let pod_spec = rjob.pointer("/template/spec/template/spec");
        let names: Vec<&str> = ["initContainers", "containers"]
            .iter()
            .flat_map(|k| {
                pod_spec
                    .and_then(|s| s.get(*k))
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
            })
            .filter_map(|c| c.get("name").and_then(Value::as_str))
            .collect();
        for (kind, what) in [
            ("initContainers", "initContainer"),
            ("containers", "container"),
        ] {
            for (c, item) in spec
                .get(kind)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let name = item.get("name").and_then(Value::as_str).unwrap_or("");
                let item_at = format!("{at}.{kind}[{c}]");
                if !names.contains(&name) {
                    errs.push(invalid(
                        format!("{item_at}.name"),
                        name,
                        &format!(
                            "must not have {what} that doesn't exist in the runtime job {job}"
                        ),
                    ));
                }
                let has_env = item
                    .get("env")
                    .and_then(Value::as_array)
                    .is_some_and(|e| !e.is_empty());
                if kind == "containers"
                    && has_env
                    && [
                        ANCESTOR_DATASET_INITIALIZER,
                        ANCESTOR_MODEL_INITIALIZER,
                        NODE,
                    ]
                    .contains(&name)
                {
                    errs.push(invalid(
                        format!("{item_at}.env"),
                        name,
                        "must not have envs for the dataset-initializer, model-initializer, node containers",
                    ));
                }
                if kind == "containers" {
                    for field in ["image", "command", "args", "resources"] {
                        if item.get(field).is_some() {
                            errs.push(FieldError {
                                path: format!("{item_at}.{field}"),
                                message: format!(
                                    "Forbidden: {field} cannot be overridden: the override's container type has no such field (the TrainJob API prunes it); use spec.trainer"
                                ),
                            });
                        }
                    }
                }
            }
        }
    }
}
