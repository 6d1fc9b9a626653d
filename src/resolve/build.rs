//! TrainJob + runtime → replicated jobs with their final pod templates and pod counts, in the
//! order Kubeflow Trainer builds them (`kubeflow/trainer:pkg/runtime/core/trainingruntime.go`
//! `newRuntimeInfo`, the ML-policy plugins, and `pkg/runtime/framework/plugins/jobset/builder.go`):
//!
//! 1. the runtime's JobSet template;
//! 2. `podTemplateOverrides`, in list order, a strategic merge patch per targeted job (v2.1);
//! 3. pod counts: template parallelism, the ML policy's `numNodes`, the TrainJob's `numNodes`;
//! 4. ML-policy env (Torch: the TrainJob's env, then `PET_*` and the rendezvous port; MPI),
//!    PodGroup labels;
//! 5. the TrainJob's initializer and trainer fields (image, command, args, `resourcesPerNode`
//!    replacing the container's resources as v2.1's builder does, env) — they win;
//! 6. JobSet's labels and volume claims, then API-server defaulting.
//!
//! Each stage is recorded so `resolve --explain` can say where every field came from.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::Runtimes;
use super::ml_policy::{TORCH_MASTER_PORT, mpi_policy, pod_count, torch_env};
use super::patches::{self, Generation, Level, Patch};
use super::provenance::{self, Provenance, Tracker};
use super::runtime::{
    ANCESTOR_DATASET_INITIALIZER, ANCESTOR_LABEL, ANCESTOR_MODEL_INITIALIZER, ANCESTOR_TRAINER,
    LAUNCHER, NODE, RuntimeKind, TrainingRuntime,
};
use super::smp::{self, Schema};
use super::template::*;
use super::trainjob::TrainJob;
use crate::model::validate::FieldError;
pub use crate::sched::plan::DependsOnStatus;

/// One replicated job of a resolved TrainJob.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedJob {
    pub name: String,
    /// JobSet `replicas`: how many Jobs.
    pub replicas: i32,
    /// Job `parallelism` = `completions`: pods per Job.
    pub parallelism: i32,
    pub depends_on: Vec<(String, DependsOnStatus)>,
    /// `trainer.kubeflow.org/trainjob-ancestor-step` of the Job template.
    pub ancestor: Option<String>,
    /// The final PodTemplateSpec.
    pub pod_template: PodTemplate,
    /// Field path → stage, when tracking was asked for.
    pub provenance: Provenance,
}

/// A resolved pod template. TrainJobs alike but for their name share one (see `alike`): each
/// job's own name replaces the stand-in's when the template is read.
#[derive(Clone)]
pub struct PodTemplate {
    shared: std::sync::Arc<Value>,
    /// `(stand-in, name)`.
    rename: Option<std::sync::Arc<(String, String)>>,
}

impl PodTemplate {
    pub fn new(value: Value) -> Self {
        PodTemplate {
            shared: std::sync::Arc::new(value),
            rename: None,
        }
    }

    /// The template, with the job's own name in it.
    pub fn value(&self) -> std::borrow::Cow<'_, Value> {
        match &self.rename {
            None => std::borrow::Cow::Borrowed(&self.shared),
            Some(r) => {
                let mut v = (*self.shared).clone();
                super::rename::replace_in_value(&mut v, &r.0, &r.1);
                std::borrow::Cow::Owned(v)
            }
        }
    }

    /// The same template read with `from` replaced by `to`.
    pub(super) fn renamed(&self, from: &str, to: &str) -> Self {
        let shared = match self.rename {
            None => std::sync::Arc::clone(&self.shared),
            Some(_) => std::sync::Arc::new(self.value().into_owned()),
        };
        PodTemplate {
            shared,
            rename: Some(std::sync::Arc::new((from.to_string(), to.to_string()))),
        }
    }
}

impl PartialEq for PodTemplate {
    /// As the templates read, keys in order (as `resolve` prints them).
    fn eq(&self, other: &Self) -> bool {
        fn same(a: &Value, b: &Value) -> bool {
            match (a, b) {
                (Value::Object(a), Value::Object(b)) => {
                    a.len() == b.len()
                        && a.iter()
                            .zip(b)
                            .all(|((ka, va), (kb, vb))| ka == kb && same(va, vb))
                }
                (Value::Array(a), Value::Array(b)) => {
                    a.len() == b.len() && a.iter().zip(b).all(|(a, b)| same(a, b))
                }
                (a, b) => a == b,
            }
        }
        same(&self.value(), &other.value())
    }
}

impl std::fmt::Debug for PodTemplate {
    /// As the template reads, whether shared or not.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.value().fmt(f)
    }
}

impl ResolvedJob {
    pub fn pod_count(&self) -> i32 {
        self.replicas.max(0) * self.parallelism.max(0)
    }
}

/// A TrainJob resolved against its runtime.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedTrainJob {
    pub name: String,
    pub namespace: String,
    /// `ClusterTrainingRuntime/torch-distributed`.
    pub runtime: String,
    pub jobs: Vec<ResolvedJob>,
    pub warnings: Vec<String>,
    /// The TrainJob has overrides of some API (whether or not they were applied).
    pub has_overrides: bool,
    /// `(manager, time)` of `runtimePatches` / `templateOverrides` entries.
    pub stamps: Vec<(String, String)>,
    /// JobSet's `network.enableDNSHostnames` (webhook default true): JobSet then creates a
    /// headless Service selecting the pods by `jobset.sigs.k8s.io/jobset-name`.
    pub headless_service: bool,
}

/// What to apply.
#[derive(Debug, Clone, Copy)]
pub struct BuildOptions<'a> {
    /// Apply the TrainJob's overrides (off: the runtime-only baseline of the override effect).
    pub overrides: bool,
    /// Record provenance for every field.
    pub track: bool,
    /// The scenario clock (RFC 3339): the `time` stamped on manager entries that have none.
    pub clock: &'a str,
}

/// The scenario clock when a scenario sets none.
pub const DEFAULT_CLOCK: &str = "2026-01-01T00:00:00Z";

impl Default for BuildOptions<'_> {
    fn default() -> Self {
        BuildOptions {
            overrides: true,
            track: false,
            clock: DEFAULT_CLOCK,
        }
    }
}

pub const OVERRIDES_PATH: &str = "spec.podTemplateOverrides";

/// Finds the TrainJob's runtime (`runtimeRef.kind` defaults to `ClusterTrainingRuntime`).
pub fn find_runtime<'r>(
    job: &TrainJob,
    runtimes: &'r Runtimes,
) -> Result<&'r TrainingRuntime, FieldError> {
    let r = &job.spec.runtime_ref;
    let kind = r
        .kind
        .as_deref()
        .unwrap_or(RuntimeKind::ClusterTrainingRuntime.as_str());
    // Upstream reports this at `spec.runtimeRef` (`spec.RuntimeRef` for cluster runtimes); the
    // name is the precise place.
    let field = "spec.runtimeRef.name";
    let (found, plural, what) = match kind {
        "TrainingRuntime" => (
            runtimes
                .namespaced
                .get(&(job.namespace().to_string(), r.name.clone())),
            "trainingruntimes",
            "trainingRuntime",
        ),
        "ClusterTrainingRuntime" => (
            runtimes.cluster.get(&r.name),
            "clustertrainingruntimes",
            "clusterTrainingRuntime",
        ),
        other => {
            return Err(FieldError {
                path: "spec.runtimeRef.kind".into(),
                message: format!(
                    "Unsupported value: {other:?}: supported values: \"ClusterTrainingRuntime\", \"TrainingRuntime\""
                ),
            });
        }
    };
    found.ok_or_else(|| FieldError {
        path: field.into(),
        message: format!(
            "Invalid value: {:?}: {plural}.trainer.kubeflow.org {:?} not found: specified {what} must be created before the TrainJob is created",
            r.name, r.name
        ),
    })
}

/// Resolves a TrainJob into its replicated jobs.
pub fn build(
    job: &TrainJob,
    runtime: &TrainingRuntime,
    opts: BuildOptions,
) -> Result<ResolvedTrainJob, Vec<FieldError>> {
    // Trainer's webhook runs the runtime's plugins on the TrainJob first.
    let refused = super::trainer_admission::plugins(job, runtime);
    if !refused.is_empty() {
        return Err(refused);
    }
    let rjobs = runtime.replicated_jobs();
    let patches = patches::collect(job, rjobs, opts.clock, opts.overrides)?;

    let ml = runtime.spec.ml_policy.as_ref();
    let mut warnings = Vec::new();
    let mut jobs = Vec::with_capacity(rjobs.len());
    for rjob in rjobs {
        let name = rjob
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let mut job_template = rjob.get("template").cloned().unwrap_or_else(|| json!({}));
        let mut stages = Stages::new(
            opts.track,
            job_template
                .pointer("/spec/template")
                .unwrap_or(&Value::Null),
        );
        let mut set_lists: Vec<SetList> = Vec::new();
        for p in patches.patches.iter().filter(|p| p.job == name) {
            let error = |e: smp::SmpError| {
                vec![FieldError {
                    path: p.path.clone(),
                    message: e.to_string(),
                }]
            };
            match p.level {
                Level::Job => {
                    job_template =
                        smp::strategic_merge(&job_template, &p.patch, Schema::JobTemplateSpec)
                            .map_err(error)?;
                }
                Level::Pod => {
                    let pod = object_entry(&mut job_template, "spec")
                        .entry("template")
                        .or_insert_with(|| json!({}));
                    *pod = smp::strategic_merge(pod, &p.patch, Schema::PodTemplateSpec)
                        .map_err(error)?;
                }
            }
            if let Some(manager) = &p.manager {
                lint_replaced_lists(p, manager, &name, &mut set_lists, &mut warnings);
            }
            stages.record(
                job_template
                    .pointer("/spec/template")
                    .unwrap_or(&Value::Null),
                &p.source,
            );
        }
        let ancestor = job_template
            .pointer("/metadata/labels")
            .and_then(|l| l.get(ANCESTOR_LABEL))
            .and_then(Value::as_str)
            .map(str::to_string);
        let mut template = job_template
            .pointer_mut("/spec/template")
            .map(Value::take)
            .unwrap_or_else(|| json!({}));

        let parallelism_template = job_template
            .pointer("/spec/parallelism")
            .and_then(Value::as_i64)
            .unwrap_or(1) as i32;
        let mut replicas = rjob.get("replicas").and_then(Value::as_i64).unwrap_or(1) as i32;
        let is_trainer = ancestor.as_deref() == Some(ANCESTOR_TRAINER);
        let parallelism = pod_count(job, ml, &name, is_trainer, parallelism_template);
        if ancestor.is_some() {
            // builder.go forces replicas to 1 for the ancestor jobs.
            replicas = 1;
        }

        let trainer = job.spec.trainer.as_ref();
        let mpi_node = ml
            .and_then(|m| m.mpi.as_ref())
            .is_some_and(|m| m.run_launcher_as_node == Some(true))
            && name == NODE;
        let gets_trainer_fields = is_trainer || mpi_node;
        // The current release merges resourcesPerNode into the trainer per resource name
        // (`MergeResourceRequirements`, v2.3+) before the ML policy; v2.1 replaces it later.
        if patches.generation == Generation::Current
            && gets_trainer_fields
            && let Some(res) = trainer.and_then(|t| t.resources_per_node.as_ref())
        {
            let patch = json!({"spec": {"containers": [{"name": NODE, "resources": res}]}});
            if has_container(&template, NODE) {
                template = smp::strategic_merge(&template, &patch, Schema::PodTemplateSpec)
                    .map_err(|e| {
                        vec![FieldError {
                            path: "spec.trainer.resourcesPerNode".into(),
                            message: e.to_string(),
                        }]
                    })?;
                stages.record(&template, "spec.trainer.resourcesPerNode");
            } else {
                warnings.push(missing_node_container(
                    runtime,
                    &name,
                    "spec.trainer.resourcesPerNode",
                ));
            }
        }

        // Torch (`plugins/torch/torch.go`): the TrainJob's env first, then the rendezvous env and
        // port on the trainer container.
        if is_trainer && let Some(torch) = ml.and_then(|m| m.torch.as_ref()) {
            if has_container(&template, NODE) {
                upsert_trainer_env(&mut template, trainer, &mut stages);
                let env = torch_env(job, torch, parallelism, &template);
                upsert_env(&mut template, NODE, &env);
                upsert_port(&mut template, NODE, TORCH_MASTER_PORT);
                stages.record(&template, "mlPolicy.torch");
            } else {
                warnings.push(missing_node_container(
                    runtime,
                    &name,
                    "the Torch policy's PET_* env",
                ));
            }
        }

        if let Some(mpi) = ml.and_then(|m| m.mpi.as_ref())
            && (name == NODE || name == LAUNCHER)
        {
            mpi_policy(&mut template, job, mpi, &name);
            stages.record(&template, "mlPolicy.mpi");
        }

        if let Some(pg) = runtime.spec.pod_group_policy.as_ref() {
            if pg.coscheduling.is_some() {
                set_meta(
                    &mut template,
                    "labels",
                    "scheduling.x-k8s.io/pod-group",
                    job.name(),
                );
                stages.record(&template, "podGroupPolicy.coscheduling");
            } else if pg.volcano.is_some() {
                set_meta(
                    &mut template,
                    "annotations",
                    "scheduling.k8s.io/group-name",
                    job.name(),
                );
                stages.record(&template, "podGroupPolicy.volcano");
            }
        }

        for (ancestor_name, spec, field) in [
            (
                ANCESTOR_DATASET_INITIALIZER,
                job.spec
                    .initializer
                    .as_ref()
                    .and_then(|i| i.dataset.as_ref()),
                "spec.initializer.dataset",
            ),
            (
                ANCESTOR_MODEL_INITIALIZER,
                job.spec.initializer.as_ref().and_then(|i| i.model.as_ref()),
                "spec.initializer.model",
            ),
        ] {
            if ancestor.as_deref() == Some(ancestor_name)
                && let Some(spec) = spec
            {
                let mut env: Vec<Value> = Vec::new();
                if let Some(uri) = &spec.storage_uri {
                    env.push(json!({"name": "STORAGE_URI", "value": uri}));
                }
                env.extend(
                    spec.env
                        .iter()
                        .map(|e| serde_json::to_value(e).unwrap_or(Value::Null)),
                );
                if upsert_env(&mut template, ancestor_name, &env) {
                    if let Some(secret) = &spec.secret_ref
                        && let Some(c) = container_mut(&mut template, ancestor_name)
                        && let Some(list) = c
                            .entry("envFrom")
                            .or_insert_with(|| json!([]))
                            .as_array_mut()
                    {
                        list.push(json!({"secretRef": secret}));
                    }
                    stages.record(&template, field);
                } else {
                    warnings.push(format!(
                        "{field} applies to container {ancestor_name:?}, which replicated job {name:?} of {} {:?} does not have: it has no effect",
                        runtime.kind.as_str(),
                        runtime.name()
                    ));
                }
            }
        }

        if gets_trainer_fields && let Some(t) = trainer {
            let resources = t
                .resources_per_node
                .as_ref()
                .filter(|_| patches.generation == Generation::V2_1)
                .map(|r| {
                    // v2.1 `builder.go: Trainer` replaces the resources with the parts that are set.
                    let mut res = Map::new();
                    if let Some(l) = &r.limits {
                        res.insert("limits".into(), json!(l));
                    }
                    if let Some(q) = &r.requests {
                        res.insert("requests".into(), json!(q));
                    }
                    Value::Object(res)
                });
            let fields: [(&str, &str, Option<Value>); 4] = [
                ("image", "image", t.image.clone().map(Value::String)),
                ("command", "command", t.command.as_ref().map(|c| json!(c))),
                ("args", "args", t.args.as_ref().map(|a| json!(a))),
                ("resources", "resourcesPerNode", resources),
            ];
            for (field, source, value) in fields {
                if let Some(value) = value {
                    if let Some(c) = container_mut(&mut template, NODE) {
                        c.insert(field.to_string(), value);
                        stages.record(&template, &format!("spec.trainer.{source}"));
                    } else {
                        warnings.push(missing_node_container(
                            runtime,
                            &name,
                            &format!("spec.trainer.{source}"),
                        ));
                    }
                }
            }
            if !t.env.is_empty() && !upsert_trainer_env(&mut template, Some(t), &mut stages) {
                warnings.push(missing_node_container(runtime, &name, "spec.trainer.env"));
            }
        }

        jobset_labels(&mut template, job.name(), &name, replicas);
        add_claim_volumes(&mut template, &runtime.spec.template.spec, job.name());
        stages.record(&template, "jobset");
        api_server_defaults(&mut template);
        stages.record(&template, "defaulting");

        let depends_on = rjob
            .get("dependsOn")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|d| {
                let on = d.get("name")?.as_str()?.to_string();
                let status = match d.get("status").and_then(Value::as_str) {
                    Some("Ready") => DependsOnStatus::Ready,
                    _ => DependsOnStatus::Complete,
                };
                Some((on, status))
            })
            .collect();
        jobs.push(ResolvedJob {
            name,
            replicas,
            parallelism,
            depends_on,
            ancestor,
            pod_template: PodTemplate::new(template),
            provenance: stages.into_provenance(),
        });
    }
    Ok(ResolvedTrainJob {
        headless_service: runtime.spec.template.spec["network"]["enableDNSHostnames"]
            .as_bool()
            .unwrap_or(true),
        name: job.name().to_string(),
        namespace: job.namespace().to_string(),
        runtime: format!("{}/{}", runtime.kind.as_str(), runtime.name()),
        jobs,
        warnings,
        has_overrides: !(job.spec.pod_template_overrides.is_empty()
            && job.spec.runtime_patches.is_empty()
            && job.spec.template_overrides.is_empty()),
        stamps: patches.stamps,
    })
}

fn missing_node_container(runtime: &TrainingRuntime, job: &str, field: &str) -> String {
    format!(
        "{field} applies to container {NODE:?} of the trainer job, which replicated job {job:?} of {} {:?} does not have: it has no effect",
        runtime.kind.as_str(),
        runtime.name()
    )
}

/// The TrainJob's `trainer.env` on the trainer container; true when there was a container.
fn upsert_trainer_env(
    template: &mut Value,
    trainer: Option<&super::trainjob::Trainer>,
    stages: &mut Stages,
) -> bool {
    let env: Vec<Value> = trainer
        .into_iter()
        .flat_map(|t| &t.env)
        .map(|e| serde_json::to_value(e).unwrap_or(Value::Null))
        .collect();
    if env.is_empty() {
        return has_container(template, NODE);
    }
    let done = upsert_env(template, NODE, &env);
    if done {
        stages.record(template, "spec.trainer.env");
    }
    done
}

/// A list an earlier manager set: its field, the manager, and its items (each item's leaves).
type SetList = (String, String, Vec<BTreeMap<String, Value>>);

/// Warns when a manager's patch replaces a list (one without a merge key, such as
/// `tolerations`) that another manager's patch set on the same job and drops some of its
/// items — easy to miss, and what kubernetes-sigs/kueue#15161 reported.
fn lint_replaced_lists(
    p: &Patch,
    manager: &str,
    job: &str,
    set_lists: &mut Vec<SetList>,
    warnings: &mut Vec<String>,
) {
    let schema = match p.level {
        Level::Pod => Schema::PodTemplateSpec,
        Level::Job => Schema::JobTemplateSpec,
    };
    let leaves = provenance::flatten(&p.patch, Some(schema));
    let mut lists: Vec<&str> = leaves
        .keys()
        .filter_map(|path| provenance::atomic_list(path))
        .collect();
    lists.dedup();
    for list in lists {
        // Items: the leaves under `list[i]`, keyed by their path below the item.
        let mut items: BTreeMap<usize, BTreeMap<String, Value>> = BTreeMap::new();
        for (path, v) in leaves.range(list.to_string()..) {
            let Some(rest) = path.strip_prefix(list).and_then(|r| r.strip_prefix('[')) else {
                break;
            };
            let Some((index, below)) = rest.split_once(']') else {
                continue;
            };
            if let Ok(i) = index.parse::<usize>() {
                items
                    .entry(i)
                    .or_default()
                    .insert(below.to_string(), v.clone());
            }
        }
        let items: Vec<BTreeMap<String, Value>> = items.into_values().collect();
        let field = list
            .strip_prefix("spec.template.")
            .unwrap_or(list)
            .to_string();
        match set_lists.iter_mut().find(|(l, _, _)| *l == field) {
            Some((_, earlier, before)) => {
                let dropped = before.iter().filter(|item| !items.contains(item)).count();
                if earlier != manager && dropped > 0 {
                    warnings.push(format!(
                        "{} replaces the {field} that manager {earlier:?} set on replicated job {job:?}: the list has no merge key, so {dropped} of {earlier:?}'s entries are dropped",
                        p.source
                    ));
                }
                *earlier = manager.to_string();
                *before = items;
            }
            None => set_lists.push((field, manager.to_string(), items)),
        }
    }
}

/// Records stages when asked to.
struct Stages(Option<Tracker>);

impl Stages {
    fn new(track: bool, template: &Value) -> Self {
        let mut t = track.then(Tracker::default);
        if let Some(t) = &mut t {
            t.record(template, Schema::PodTemplateSpec, "runtime");
        }
        Stages(t)
    }

    fn record(&mut self, template: &Value, stage: &str) {
        if let Some(t) = &mut self.0 {
            t.record(template, Schema::PodTemplateSpec, stage);
        }
    }

    fn into_provenance(self) -> Provenance {
        self.0.map(|t| t.provenance).unwrap_or_default()
    }
}

/// When the TrainJob is done, for a replay: the JobSet its runtime makes — its replicated
/// jobs as resolved (Indexed Jobs of `parallelism` = `completions` pods, the runtime's Job
/// `successPolicy` read as the Job controller reads it) and the runtime's JobSet
/// `successPolicy`.
pub fn completion(
    resolved: &ResolvedTrainJob,
    jobset_spec: &Value,
) -> super::completion::Completion {
    use super::completion::{ChildJob, Completion, JobSetSuccessPolicy, rules, set_policy};
    let job_policy = |rjob: &str| -> Option<k8s_openapi::api::batch::v1::SuccessPolicy> {
        let list = jobset_spec.get("replicatedJobs")?.as_array()?;
        let r = list
            .iter()
            .find(|r| r.get("name") == Some(&Value::from(rjob)))?;
        serde_json::from_value(r.pointer("/template/spec/successPolicy")?.clone()).ok()
    };
    let mut jobs = Vec::new();
    for rjob in &resolved.jobs {
        let pods = rjob.parallelism.max(0) as u32;
        let success_rules = job_policy(&rjob.name)
            .map(|p| rules(&p, pods))
            .unwrap_or_default();
        for j in 0..rjob.replicas.max(0) {
            jobs.push(ChildJob {
                name: format!("{}-{}-{j}", resolved.name, rjob.name),
                replicated_job: Some(rjob.name.clone()),
                completions: Some(pods),
                parallelism: pods,
                indexed: true,
                success_rules: success_rules.clone(),
                pods: pods as usize,
            });
        }
    }
    let policy = (jobset_spec.get("successPolicy"))
        .and_then(|v| serde_json::from_value::<JobSetSuccessPolicy>(v.clone()).ok());
    Completion {
        jobs,
        policy: set_policy(policy.as_ref()),
    }
}
