//! A `batch/v1` Job as the Job controller runs it: `min(parallelism, completions)` pods from
//! its template at a time, labelled with the Job's name (and, for an `Indexed` Job, each pod's
//! completion index). Follows kubernetes `pkg/controller/job/job_controller.go` (how many pods
//! are active), `pkg/apis/batch/v1/defaults.go` (parallelism 1, completions 1 when neither is
//! set, completionMode `NonIndexed`) and `pkg/apis/batch/validation/validation.go`
//! (`validateJobSpec`: non-negative counts, an `Indexed` Job's completions, a restart policy
//! of `OnFailure` or `Never` — the pod template's default `Always` is refused —, and
//! `successPolicy`, checked in [`super::completion`]).
//! A suspended Job has no pods until it is resumed (by Kueue, when it admits the Job).
//!
//! Pod names are `<job>-<i>` (the controller adds a random suffix; schedsim's are stable so
//! reports and timelines can name them).

use std::collections::BTreeMap;

use k8s_openapi::api::batch::v1::Job;

use crate::features::FeatureGates;
use crate::model::Pod;
use crate::model::objects;
use crate::model::validate::{self, FieldError};

/// `batch.kubernetes.io/job-name`, and the legacy `job-name` the controller still sets.
pub const JOB_NAME_LABELS: [&str; 2] = ["batch.kubernetes.io/job-name", "job-name"];
/// The label an Indexed Job's pods carry their completion index in (`PodIndexLabel`).
pub const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";

/// How many pods the Job controller keeps active (`podsCount` in Kueue's Job integration):
/// parallelism (default 1), at most completions.
pub fn pods_count(job: &Job) -> i64 {
    let spec = job.spec.as_ref();
    let parallelism = i64::from(spec.and_then(|s| s.parallelism).unwrap_or(1));
    match spec.and_then(|s| s.completions) {
        Some(c) => parallelism.min(i64::from(c)),
        None => parallelism,
    }
}

/// Whether the Job is suspended (`spec.suspend`): its controller creates no pods.
pub fn suspended(job: &Job) -> bool {
    job.spec.as_ref().and_then(|s| s.suspend) == Some(true)
}

/// The pods the Job runs once it is not suspended, each as kube-scheduler receives it; `path`
/// prefixes the field paths of errors.
pub fn job_pods(job: &Job, path: &str, gates: &FeatureGates) -> Result<Vec<Pod>, Vec<FieldError>> {
    let at = |field: &str| match path.is_empty() {
        true => field.to_string(),
        false => format!("{path}.{field}"),
    };
    let mut errs = Vec::new();
    // The Job's metadata is the loader's to validate (`validate::meta`); a JobSet names its.
    let name = job.metadata.name.clone().unwrap_or_default();
    let Some(spec) = &job.spec else {
        errs.push(FieldError::new(&at("spec"), "Required value".into()));
        return Err(errs);
    };
    for (field, v) in [
        ("spec.parallelism", spec.parallelism),
        ("spec.completions", spec.completions),
    ] {
        if let Some(v) = v.filter(|v| *v < 0) {
            errs.push(FieldError::new(
                &at(field),
                format!("Invalid value: {v}: must be greater than or equal to 0"),
            ));
        }
    }
    let restart = (spec.template.spec.as_ref())
        .and_then(|s| s.restart_policy.clone())
        .unwrap_or_else(|| "Always".into());
    if restart != "OnFailure" && restart != "Never" {
        errs.push(FieldError::new(
            &at("spec.template.spec.restartPolicy"),
            format!("Unsupported value: {restart:?}: supported values: \"OnFailure\", \"Never\""),
        ));
    }
    // `SetDefaults_Job`: with neither parallelism nor completions set, both default to 1.
    let completions = match (spec.completions, spec.parallelism) {
        (None, None) => Some(1),
        (c, _) => c,
    };
    errs.extend(super::completion::validate(spec, &at));
    let indexed = spec.completion_mode.as_deref() == Some("Indexed");
    if indexed && completions.is_none() {
        errs.push(FieldError::new(
            &at("spec.completions"),
            "Required value: when completion mode is Indexed".into(),
        ));
    }
    // `ValidateJob`: an Indexed Job's last pod's hostname is `<name>-<completions-1>` (a
    // JobSet's Jobs are named by its controller, whose webhook checks the names it makes).
    let top_level = path.is_empty();
    if let Some(last) = (completions.filter(|c| top_level && indexed && *c > 0)).map(|c| c - 1) {
        let hostname = format!("{name}-{last}");
        if !crate::model::labels::is_dns1123_label(&hostname) {
            errs.push(FieldError::new(
                &at("metadata.name"),
                format!(
                    "Invalid value: {}: will not able to create pod with invalid DNS label: {hostname}",
                    validate::quote(&name)
                ),
            ));
        }
    }
    // `ValidatePodTemplateSpec`, once `generateSelector` has labelled the template with the
    // Job's name.
    let mut template_meta = spec.template.metadata.clone().unwrap_or_default();
    let labels = template_meta.labels.get_or_insert_with(Default::default);
    for label in JOB_NAME_LABELS {
        labels
            .entry(label.to_string())
            .or_insert_with(|| name.clone());
    }
    errs.extend(validate::template_meta(
        Some(&template_meta),
        &at("spec.template"),
    ));
    if !errs.is_empty() {
        return Err(errs);
    }
    let count = pods_count(job);
    if crate::limits::PODS.exceeded_by(count.max(0) as u64) {
        return Err(vec![FieldError::new(
            &at("spec.parallelism"),
            crate::limits::PODS.message(format!("a Job of {count} pods")),
        )]);
    }
    let namespace = job
        .metadata
        .namespace
        .clone()
        .unwrap_or_else(|| "default".into());
    let mut metadata = spec.template.metadata.clone().unwrap_or_default();
    metadata.name = Some(name.clone());
    metadata.namespace = Some(namespace);
    let template = k8s_openapi::api::core::v1::Pod {
        metadata,
        spec: spec.template.spec.clone(),
        status: None,
    };
    let mut template = objects::pod_from_k8s(&template, &at("spec.template"), gates, &mut errs);
    if !errs.is_empty() {
        return Err(errs);
    }
    for label in JOB_NAME_LABELS {
        template.labels.insert(label.to_string(), name.clone());
    }
    template.workload = Some(name.clone());
    // The Job controller creates its pods with the Job as their controller reference.
    template.controller = Some(std::sync::Arc::new(crate::model::pod::ControllerRef {
        api_version: "batch/v1".into(),
        kind: "Job".into(),
        name: name.clone(),
        uid: job.metadata.uid.clone().unwrap_or_default(),
    }));
    Ok((0..count.max(0))
        .map(|i| {
            let mut p = template.clone();
            p.name = format!("{name}-{i}");
            if indexed {
                let labels: BTreeMap<String, String> =
                    [(COMPLETION_INDEX.to_string(), i.to_string())].into();
                p.labels.extend(labels);
            }
            p
        })
        .collect())
}
