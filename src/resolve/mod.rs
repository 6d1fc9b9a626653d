//! Workloads → pods. A plain Pod is one pod; a TrainJob is resolved against its runtime through
//! the override merge into replicated jobs, and each replicated job into its pods, with the
//! order in which JobSet creates them (`dependsOn`).

pub mod alike;
pub mod apps;
pub mod build;
pub mod completion;
pub mod determined;
pub mod job;
pub mod jobset;
pub mod jobset_admission;
pub mod migrate;
mod ml_policy;
pub mod patches;
pub mod provenance;
mod rename;
pub mod runtime;
pub mod smp;
mod template;
pub mod trainer_admission;
pub mod trainjob;

use std::collections::HashMap;

use k8s_openapi::api::core::v1::PodTemplateSpec;
use serde_json::Value;

use crate::features::FeatureGates;
use crate::model::Pod;
use crate::model::objects;
use crate::model::pod::GangScheduler;
use crate::model::pod_group::PodGroup;
use crate::model::resources::ResourceList;
use crate::model::validate::FieldError;
use crate::sched::plan::{Requirement, Step};
use build::{BuildOptions, DependsOnStatus, ResolvedTrainJob};
use runtime::{RuntimeKind, TrainingRuntime};
use smp::Schema;
use trainjob::TrainJob;

/// The runtimes of a scenario, by name (cluster-scoped) and by namespace and name.
#[derive(Debug, Clone, Default)]
pub struct Runtimes {
    pub cluster: HashMap<String, TrainingRuntime>,
    pub namespaced: HashMap<(String, String), TrainingRuntime>,
}

impl Runtimes {
    /// Adds a runtime; returns the one it replaces, if any (a duplicate name).
    pub fn insert(&mut self, runtime: TrainingRuntime) -> Option<TrainingRuntime> {
        let name = runtime.name().to_string();
        match runtime.kind {
            RuntimeKind::ClusterTrainingRuntime => self.cluster.insert(name, runtime),
            RuntimeKind::TrainingRuntime => {
                let ns = runtime.namespace().unwrap_or("default").to_string();
                self.namespaced.insert((ns, name), runtime)
            }
        }
    }
}

/// What happens to initializer pods once they have run (a scenario option).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum InitializerLifecycle {
    /// They complete and free their resources before the pods that depend on them arrive.
    #[default]
    Complete,
    /// They keep their resources (e.g. to see the peak footprint of a job).
    KeepRunning,
}

/// The pods of one TrainJob and the steps that bring them to the scheduler.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainJobPods {
    pub resolved: ResolvedTrainJob,
    pub pods: Vec<Pod>,
    /// Steps over `pods` indices (0-based within this TrainJob).
    pub steps: Vec<Step>,
    /// The PodGroup Trainer creates for the runtime's `podGroupPolicy`.
    pub pod_group: Option<PodGroup>,
    /// Why the JobSet Trainer creates for it is refused (JobSet's webhook), when it is: the
    /// TrainJob then gets none of `pods` (they stand for its pod sets, as Kueue counts them).
    pub jobset_refused: Option<String>,
}

/// Resolves a TrainJob and makes its pods. Errors carry field paths relative to the TrainJob.
pub fn train_job_pods(
    job: &TrainJob,
    runtimes: &Runtimes,
    opts: BuildOptions,
    gates: &FeatureGates,
    initializers: InitializerLifecycle,
) -> Result<TrainJobPods, Vec<FieldError>> {
    let runtime = build::find_runtime(job, runtimes).map_err(|e| vec![e])?;
    let resolved = build::build(job, runtime, opts)?;
    let total: u64 = (resolved.jobs.iter())
        .map(|j| j.replicas.max(0) as u64 * j.parallelism.max(0) as u64)
        .sum();
    if crate::limits::PODS.exceeded_by(total) {
        return Err(vec![FieldError {
            path: "spec".into(),
            message: crate::limits::PODS.message(format!("a TrainJob of {total} pods")),
        }]);
    }
    let mut pods = Vec::new();
    let mut ranges: HashMap<&str, std::ops::Range<usize>> = HashMap::new();
    for rjob in &resolved.jobs {
        let template = template_pod(job, &rjob.pod_template.value(), gates)
            .map_err(|errs| attribute(job, runtime, &rjob.name, errs))?;
        let start = pods.len();
        for j in 0..rjob.replicas.max(0) {
            for k in 0..rjob.parallelism.max(0) {
                let mut p = template.clone();
                let job_name = format!("{}-{}-{j}", job.name(), rjob.name);
                p.name = format!("{job_name}-{k}");
                for (key, value) in [
                    (jobset::JOB_INDEX_LABEL, j.to_string()),
                    ("batch.kubernetes.io/job-name", job_name.clone()),
                    ("batch.kubernetes.io/job-completion-index", k.to_string()),
                ] {
                    p.labels.insert(key.to_string(), value);
                }
                pods.push(p);
            }
        }
        ranges.insert(&rjob.name, start..pods.len());
    }
    // JobSet creates a dependent replicated job only once its dependencies are Complete (or
    // Ready), so dependencies arrive first; completed dependencies free their resources.
    let mut steps = Vec::new();
    let mut done: Vec<&str> = Vec::new();
    let mut pending: Vec<&build::ResolvedJob> = resolved.jobs.iter().collect();
    while !pending.is_empty() {
        let ready = pending
            .iter()
            .position(|j| {
                j.depends_on
                    .iter()
                    .all(|(d, _)| done.contains(&d.as_str()) || !ranges.contains_key(d.as_str()))
            })
            .unwrap_or(0);
        let rjob = pending.remove(ready);
        let mut requires = Vec::new();
        let mut completes = Vec::new();
        for (dep, status) in &rjob.depends_on {
            let Some(range) = ranges.get(dep.as_str()) else {
                continue;
            };
            requires.push(Requirement {
                pods: range.clone(),
                job: dep.clone(),
                status: *status,
                by: crate::sched::plan::Waiter::JobSet,
            });
            if *status == DependsOnStatus::Complete
                && initializers == InitializerLifecycle::Complete
            {
                completes.extend(range.clone());
            }
        }
        completes.retain(|p| {
            !steps
                .iter()
                .any(|s| matches!(s, Step::Complete { pods } if pods.contains(p)))
        });
        if !completes.is_empty() {
            steps.push(Step::Complete { pods: completes });
        }
        for pod in ranges[rjob.name.as_str()].clone() {
            steps.push(Step::Schedule {
                pod,
                requires: requires.clone(),
            });
        }
        done.push(&rjob.name);
    }
    for p in &mut pods {
        p.workload = Some(job.name().to_string());
    }
    let pod_group = match runtime.spec.pod_group_policy.as_ref() {
        Some(policy) => pod_group(job, policy, &resolved, gates),
        None => None,
    };
    let counts: Vec<(&str, i32, i32)> = (resolved.jobs.iter())
        .map(|j| (j.name.as_str(), j.replicas, j.parallelism))
        .collect();
    let jobset_refused =
        jobset_admission::train_job_jobset(job.name(), &runtime.spec.template.spec, &counts);
    Ok(TrainJobPods {
        resolved,
        pods,
        steps,
        pod_group,
        jobset_refused,
    })
}

/// The PodGroup Trainer's coscheduling / Volcano plugin creates for a TrainJob
/// (`pkg/runtime/framework/plugins/{coscheduling,volcano}`): named after the TrainJob,
/// `minMember` = Σ pod-set counts (initializers included; a Job's `replicas` is not
/// multiplied in), `minResources` = Σ count × the pod's requests as
/// `resource.PodRequests` computes them on the runtime's typed template: requests only,
/// since a CRD's embedded pod spec is never defaulted (a GPU given only as a limit counts 0).
fn pod_group(
    job: &TrainJob,
    policy: &runtime::PodGroupPolicy,
    resolved: &ResolvedTrainJob,
    gates: &FeatureGates,
) -> Option<PodGroup> {
    use serde::Deserialize;
    let scheduler = if policy.coscheduling.is_some() {
        GangScheduler::Coscheduling
    } else if policy.volcano.is_some() {
        GangScheduler::Volcano
    } else {
        return None;
    };
    let mut min_member = 0u32;
    let mut min_resources = ResourceList::new();
    for rjob in &resolved.jobs {
        let count = rjob.parallelism.max(0);
        min_member += count as u32;
        let mut template = rjob.pod_template.value().into_owned();
        for list in ["containers", "initContainers"] {
            if let Some(cs) = template["spec"][list].as_array_mut() {
                for c in cs {
                    if let Some(r) = c.get_mut("resources").and_then(Value::as_object_mut) {
                        r.remove("limits");
                    }
                }
            }
        }
        // Stripping limits breaks the API server's rules (a GPU request needs its limit);
        // those were checked on the real template, so they are not errors here.
        let spec = PodTemplateSpec::deserialize(&template).unwrap_or_default();
        let pod = k8s_openapi::api::core::v1::Pod {
            spec: spec.spec,
            ..Default::default()
        };
        let pod = objects::pod_from_k8s(&pod, "", gates, &mut Vec::new());
        for (name, v) in &pod.requests {
            *min_resources.entry(name.clone()).or_default() += v * i64::from(count);
        }
    }
    let timeout = policy
        .coscheduling
        .as_ref()
        .and_then(|c| c.get("scheduleTimeoutSeconds"))
        .and_then(Value::as_u64)
        .map(|t| t as u32);
    Some(PodGroup {
        scheduler,
        namespace: job.namespace().to_string(),
        name: job.name().to_string(),
        min_member,
        min_resources: Some(min_resources),
        schedule_timeout_seconds: timeout.or(Some(60)),
    })
}

/// One pod of a replicated job, converted and validated as the API server would.
fn template_pod(
    job: &TrainJob,
    template: &Value,
    gates: &FeatureGates,
) -> Result<Pod, Vec<FieldError>> {
    use serde::Deserialize;
    let spec = match PodTemplateSpec::deserialize(template) {
        Ok(t) => t,
        // Decode again, slower, for the field path of the error.
        Err(_) => {
            return Err(
                match serde_path_to_error::deserialize::<_, PodTemplateSpec>(template) {
                    Err(e) => vec![FieldError {
                        path: e.path().to_string(),
                        message: e.into_inner().to_string(),
                    }],
                    Ok(_) => Vec::new(),
                },
            );
        }
    };
    // The pods the JobSet's Jobs create carry the template's labels and annotations.
    let mut errs = crate::model::validate::template_meta(spec.metadata.as_ref(), "");
    let mut metadata = spec.metadata.unwrap_or_default();
    metadata.name = Some(job.name().to_string());
    metadata.namespace = Some(job.namespace().to_string());
    let pod = k8s_openapi::api::core::v1::Pod {
        metadata,
        spec: spec.spec,
        status: None,
    };
    let p = objects::pod_from_k8s(&pod, "", gates, &mut errs);
    if errs.is_empty() { Ok(p) } else { Err(errs) }
}

/// Names the stage that put each invalid field into the merged pod: the errors are re-resolved
/// with provenance, and an error on a field an override touched points at that override.
fn attribute(
    job: &TrainJob,
    runtime: &TrainingRuntime,
    rjob: &str,
    errs: Vec<FieldError>,
) -> Vec<FieldError> {
    let opts = BuildOptions {
        overrides: true,
        track: true,
        ..Default::default()
    };
    let tracked = build::build(job, runtime, opts).ok();
    // Patch sources in application order, with the entry path each came from.
    let rjobs = runtime.replicated_jobs();
    let order: Vec<(String, String)> = patches::collect(job, rjobs, opts.clock, true)
        .map(|p| {
            p.patches
                .into_iter()
                .filter(|p| p.job == rjob)
                .map(|p| (p.source, p.path))
                .collect()
        })
        .unwrap_or_default();
    let resolved = tracked
        .as_ref()
        .and_then(|t| t.jobs.iter().find(|j| j.name == rjob));
    errs.into_iter()
        .map(|e| {
            // The invalid field and the object holding it (a volume with two sources was made
            // by whoever added the second one).
            let keyed = resolved.map(|r| {
                let k = keyed_path(&r.pod_template.value(), &e.path);
                match k.rfind(['.', '[']) {
                    Some(i) if k[..i].ends_with(']') => k[..i].to_string(),
                    _ => k,
                }
            });
            let sources: Vec<&str> = match (resolved, &keyed) {
                (Some(r), Some(k)) => {
                    let mut s: Vec<&str> = r
                        .provenance
                        .iter()
                        .filter(|(path, _)| path.starts_with(k.as_str()) || k.starts_with(path.as_str()))
                        .map(|(_, src)| src.as_str())
                        .collect();
                    s.sort_unstable();
                    s.dedup();
                    s
                }
                _ => Vec::new(),
            };
            // The last patch that touched the field.
            let culprit = order.iter().rev().find(|(source, _)| sources.contains(&source.as_str()));
            let pod_field = e.path.clone();
            match culprit {
                Some((c, path)) => FieldError {
                    path: path.clone(),
                    message: format!(
                        "the merged pod of replicated job {rjob:?} is invalid: {pod_field}: {} (set by {c})",
                        e.message
                    ),
                },
                None => FieldError {
                    path: "spec.runtimeRef".into(),
                    message: format!(
                        "the pod of replicated job {rjob:?} from {} is invalid: {pod_field}: {}",
                        runtime.name(),
                        e.message
                    ),
                },
            }
        })
        .collect()
}

/// `spec.containers[1].image` → `spec.containers[name=trainer].image`, the form provenance uses.
pub fn keyed_path(template: &Value, path: &str) -> String {
    let mut out = String::new();
    let mut value = template;
    let mut schema = Some(Schema::PodTemplateSpec);
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (field, index) = match part.split_once('[') {
            Some((f, rest)) => (f, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(field);
        let meta = schema.and_then(|s| smp::list_meta(s, field));
        let next_schema = schema.and_then(|s| smp::field_schema(s, field));
        value = value.get(field).unwrap_or(&Value::Null);
        match index {
            Some(i) => {
                let item = value.get(i).unwrap_or(&Value::Null);
                match meta.and_then(|m| {
                    item.get(m.merge_key)
                        .and_then(Value::as_str)
                        .map(|k| (m, k))
                }) {
                    Some((m, k)) => out.push_str(&format!("[{}={k}]", m.merge_key)),
                    None => out.push_str(&format!("[{i}]")),
                }
                schema = meta.and_then(|m| m.element);
                value = item;
            }
            None => schema = next_schema,
        }
    }
    out
}
