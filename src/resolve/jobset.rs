//! A JobSet (`jobset.x-k8s.io/v1alpha2`) as the JobSet controller runs it: each replicated job
//! `replicas` times (default 1) as a Job named `<jobset>-<replicatedJob>-<index>`, each Job's
//! pods as the Job controller runs them ([`super::job`]), labelled with the JobSet's labels
//! (kubernetes-sigs/jobset `pkg/controller/jobset_controller.go` `constructJob` /
//! `labelAndAnnotateObject`). A suspended JobSet has no pods until it is resumed (by Kueue,
//! when it admits it). `dependsOn` and startup policies are not simulated: every replicated
//! job starts at once (a warning says so when a JobSet uses them).

use k8s_openapi::api::batch::v1::{Job, JobSpec, JobTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;

use super::completion::{self, Completion};
use super::job::job_pods;
use crate::features::FeatureGates;
use crate::model::Pod;
use crate::model::validate::FieldError;

pub const API_VERSIONS: &[&str] = &["jobset.x-k8s.io/v1alpha2"];
pub const JOBSET_NAME_LABEL: &str = "jobset.sigs.k8s.io/jobset-name";
pub const REPLICATED_JOB_LABEL: &str = "jobset.sigs.k8s.io/replicatedjob-name";
/// The index of a replicated job's Job, set on the Job's pods with the labels below.
pub const JOB_INDEX_LABEL: &str = "jobset.sigs.k8s.io/job-index";

/// The labels JobSet puts on every pod of a replicated job (`jobset_controller.go`
/// `labelAndAnnotateObject`); the Job index is added per Job.
pub fn pod_labels(jobset: &str, rjob: &str, replicas: i32) -> [(&'static str, String); 4] {
    [
        (JOBSET_NAME_LABEL, jobset.to_string()),
        (REPLICATED_JOB_LABEL, rjob.to_string()),
        (
            "jobset.sigs.k8s.io/replicatedjob-replicas",
            replicas.to_string(),
        ),
        ("jobset.sigs.k8s.io/restart-attempt", "0".to_string()),
    ]
}

#[derive(Debug, Clone, Deserialize)]
pub struct JobSet {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: JobSetSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct JobSetSpec {
    #[serde(default)]
    pub replicated_jobs: Vec<ReplicatedJob>,
    #[serde(default)]
    pub suspend: Option<bool>,
    #[serde(default)]
    pub startup_policy: Option<serde_json::Value>,
    #[serde(default)]
    pub success_policy: Option<completion::JobSetSuccessPolicy>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReplicatedJob {
    pub name: String,
    #[serde(default)]
    pub replicas: Option<i32>,
    pub template: JobTemplateSpec,
    #[serde(default)]
    pub depends_on: Option<serde_json::Value>,
}

/// Whether the JobSet is suspended: no Job, no pod.
pub fn suspended(js: &JobSet) -> bool {
    js.spec.suspend == Some(true)
}

/// The pods the JobSet runs once it is not suspended, and what it uses that schedsim does
/// not simulate.
pub fn jobset_pods(
    js: &JobSet,
    gates: &FeatureGates,
) -> Result<(Vec<Pod>, Vec<String>), Vec<FieldError>> {
    let name = js.metadata.name.clone().unwrap_or_default();
    let mut errs = Vec::new();
    // The pod limit before any pod exists (replicas may be anything).
    let total: u64 = (js.spec.replicated_jobs.iter())
        .map(|r| {
            let job = Job {
                spec: r.template.spec.clone(),
                ..Job::default()
            };
            (r.replicas.unwrap_or(1).max(0) as u64)
                .saturating_mul(super::job::pods_count(&job).max(0) as u64)
        })
        .fold(0, u64::saturating_add);
    if crate::limits::PODS.exceeded_by(total) {
        return Err(vec![FieldError::new(
            "spec.replicatedJobs",
            crate::limits::PODS.message(format!("a JobSet of {total} pods")),
        )]);
    }
    let mut pods = Vec::new();
    let mut notes = Vec::new();
    if js.spec.startup_policy.is_some()
        || js
            .spec
            .replicated_jobs
            .iter()
            .any(|r| r.depends_on.is_some())
    {
        notes.push(format!(
            "JobSet {name}: startupPolicy and dependsOn are not simulated; every replicated job starts at once"
        ));
    }
    // The CRD requires neither replicated jobs nor non-negative replicas: the controller then
    // creates no Job, and says nothing; schedsim says so.
    if js.spec.replicated_jobs.is_empty() {
        notes.push(format!(
            "JobSet {name} has no replicatedJobs: it creates no Job"
        ));
    }
    for (i, rjob) in js.spec.replicated_jobs.iter().enumerate() {
        let path = format!("spec.replicatedJobs[{i}]");
        // The Jobs it creates carry the template's labels and annotations.
        errs.extend(crate::model::validate::template_meta(
            rjob.template.metadata.as_ref(),
            &format!("{path}.template"),
        ));
        let replicas = rjob.replicas.unwrap_or(1);
        if replicas <= 0 {
            notes.push(format!(
                "JobSet {name}: replicated job {} has {replicas} replicas: it creates no Job",
                rjob.name
            ));
        }
        for j in 0..replicas.max(0) {
            let mut metadata = rjob.template.metadata.clone().unwrap_or_default();
            metadata.name = Some(format!("{name}-{}-{j}", rjob.name));
            metadata.namespace = js.metadata.namespace.clone();
            let job = Job {
                metadata,
                spec: Some(webhook_defaults(
                    rjob.template.spec.clone().unwrap_or_default(),
                )),
                status: None,
            };
            match job_pods(&job, &format!("{path}.template"), gates) {
                Ok(mut job_pods) => {
                    for p in &mut job_pods {
                        let labels = pod_labels(&name, &rjob.name, replicas);
                        for (k, v) in labels.into_iter().chain([(JOB_INDEX_LABEL, j.to_string())]) {
                            p.labels.insert(k.to_string(), v);
                        }
                        p.workload = Some(name.clone());
                    }
                    pods.extend(job_pods);
                }
                Err(mut e) => {
                    // One replica's errors stand for all of them.
                    errs.append(&mut e);
                    break;
                }
            }
        }
    }
    if errs.is_empty() {
        Ok((pods, notes))
    } else {
        Err(errs)
    }
}

/// When the JobSet is done, for a replay: its Jobs, `<jobset>-<replicatedJob>-<index>` (the
/// webhook's `Indexed` by default), and its `successPolicy`.
pub fn completion(js: &JobSet) -> Completion {
    let name = js.metadata.name.clone().unwrap_or_default();
    let mut jobs = Vec::new();
    for rjob in &js.spec.replicated_jobs {
        let mut spec = rjob.template.spec.clone().unwrap_or_default();
        spec.completion_mode.get_or_insert_with(|| "Indexed".into());
        for j in 0..rjob.replicas.unwrap_or(1).max(0) {
            let job = format!("{name}-{}-{j}", rjob.name);
            jobs.push(completion::child(job, Some(rjob.name.clone()), &spec));
        }
    }
    Completion {
        jobs,
        policy: completion::set_policy(js.spec.success_policy.as_ref()),
    }
}

/// The JobSet webhook's defaults for a replicated job's Job (`pkg/webhooks/jobset_webhook.go`
/// `Default`): completion mode `Indexed`, pod restart policy `OnFailure`.
fn webhook_defaults(mut spec: JobSpec) -> JobSpec {
    spec.completion_mode.get_or_insert_with(|| "Indexed".into());
    (spec.template.spec.get_or_insert_default().restart_policy)
        .get_or_insert_with(|| "OnFailure".into());
    spec
}
