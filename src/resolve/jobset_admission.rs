//! What the API server does to a JobSet on create, in its order (kubernetes-sigs/jobset
//! v0.12.0, the release Kubeflow Trainer v2.3 builds against; its webhooks are installed by
//! default): the CRD's defaults, the mutating webhook (`pkg/webhooks/jobset_webhook.go`
//! `Default`), the CRD schema and CEL rules of `JobSetSpec`
//! (`config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml`), then the validating webhook
//! (`ValidateCreate`) with JobSet's feature gates at their defaults (InPlaceRestart and
//! RestartJob off). A JobSet the webhook refuses is never created: a JobSet workload is refused
//! at load, and a TrainJob whose JobSet is refused gets no pods (Trainer's controller reports
//! the webhook's answer in a `TrainJobResourcesCreationFailed` event and retries).
//!
//! The webhook's plain errors are wrapped as `field.InternalError(nil, err)`, so the API server
//! prints them as `<nil>: Internal error: …`; schedsim gives them the path of the field they are
//! about. No PersistentVolumeClaim exists in a scenario, so the checks against an existing PVC
//! of the same name never apply.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use crate::model::crd::{CrdCheck, items, join};
use crate::model::labels::{
    LenUnit, dns1035_label_errors, dns1123_subdomain_errors, label_value_errors,
};
use crate::model::validate::{FieldError, invalid, validate_domain_prefixed_path};

/// JobSet's name for the validating webhook (`vjobset.kb.io`).
pub const WEBHOOK: &str = "vjobset.kb.io";
const MAX_INT32: i64 = i32::MAX as i64;
const TOO_LONG: &str = "must be no more than 63 characters";

/// The spec as the webhooks and the CRD's schema see it: defaulted.
fn defaulted(value: &Value) -> Value {
    let mut spec = value.get("spec").cloned().unwrap_or_else(|| json!({}));
    default(&mut spec);
    spec
}

/// What the JobSet CRD's schema and rules refuse of this object, once defaulted.
pub fn crd_errors(value: &Value) -> Vec<FieldError> {
    let mut c = CrdCheck::new();
    crd(&defaulted(value), "spec", &mut c);
    c.finish()
}

/// What JobSet's validating webhook refuses of an object the API server validated.
pub fn webhook_errors(value: &Value) -> Vec<FieldError> {
    let name = value["metadata"]["name"].as_str().unwrap_or("");
    validate_create(name, &defaulted(value))
}

/// The CRD's defaults and the mutating webhook's (`Default`), on a JobSetSpec.
pub fn default(spec: &mut Value) {
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    spec.entry("successPolicy")
        .or_insert_with(|| json!({"operator": "All"}));
    spec.entry("startupPolicy")
        .or_insert_with(|| json!({"startupPolicyOrder": "AnyOrder"}));
    if let Some(jobs) = spec.get_mut("replicatedJobs").and_then(Value::as_array_mut) {
        for rjob in jobs.iter_mut().filter_map(Value::as_object_mut) {
            rjob.entry("replicas").or_insert(json!(1));
            rjob.entry("groupName").or_insert(json!("default"));
            let job = rjob.entry("template").or_insert_with(|| json!({}));
            let Some(job_spec) = job
                .as_object_mut()
                .map(|j| j.entry("spec").or_insert_with(|| json!({})))
                .and_then(Value::as_object_mut)
            else {
                continue;
            };
            job_spec.entry("completionMode").or_insert(json!("Indexed"));
            if let Some(pod) = job_spec
                .get_mut("template")
                .and_then(Value::as_object_mut)
                .map(|t| t.entry("spec").or_insert_with(|| json!({})))
                .and_then(Value::as_object_mut)
            {
                let restart = pod.entry("restartPolicy").or_insert(json!(""));
                if restart.as_str() == Some("") {
                    *restart = json!("OnFailure");
                }
            }
        }
    }
    if let Some(network) = spec
        .entry("network")
        .or_insert_with(|| json!({}))
        .as_object_mut()
    {
        network.entry("enableDNSHostnames").or_insert(json!(true));
        network
            .entry("publishNotReadyAddresses")
            .or_insert(json!(true));
    }
    if let Some(fp) = spec.get_mut("failurePolicy").and_then(Value::as_object_mut) {
        fp.entry("restartStrategy").or_insert(json!("Recreate"));
        if let Some(rules) = fp.get_mut("rules").and_then(Value::as_array_mut) {
            for (i, rule) in rules.iter_mut().enumerate() {
                if let Some(r) = rule.as_object_mut()
                    && r.get("name")
                        .and_then(Value::as_str)
                        .is_none_or(str::is_empty)
                {
                    r.insert("name".into(), json!(format!("failurePolicyRule{i}")));
                }
            }
        }
    }
    if let Some(policies) = spec
        .get_mut("volumeClaimPolicies")
        .and_then(Value::as_array_mut)
    {
        for p in policies.iter_mut().filter_map(Value::as_object_mut) {
            let retention = p.entry("retentionPolicy").or_insert_with(|| json!({}));
            if let Some(r) = retention.as_object_mut() {
                r.entry("whenDeleted").or_insert(json!("Delete"));
            }
        }
    }
}

/// The `JobSetSpec` schema at `at` (`spec` of a JobSet, `spec.template.spec` of a runtime,
/// whose CRD embeds it).
pub fn crd(spec: &Value, at: &str, c: &mut CrdCheck) {
    if let Some(coordinator) = spec.get("coordinator") {
        c.required(coordinator, "replicatedJob", &join(at, "coordinator"));
    }
    if let Some(fp) = spec.get("failurePolicy") {
        let fp_at = join(at, "failurePolicy");
        c.one_of(
            fp.get("restartStrategy"),
            &join(&fp_at, "restartStrategy"),
            &["Recreate", "BlockingRecreate", "InPlaceRestart"],
        );
        for (i, rule) in items(fp, "rules").iter().enumerate() {
            let rule_at = format!("{fp_at}.rules[{i}]");
            c.required(rule, "action", &rule_at);
            c.required(rule, "name", &rule_at);
            c.one_of(
                rule.get("action"),
                &join(&rule_at, "action"),
                &[
                    "FailJobSet",
                    "RestartJobSet",
                    "RestartJobSetAndIgnoreMaxRestarts",
                    "RestartJob",
                    "RestartJobAndIgnoreMaxRestarts",
                ],
            );
        }
    }
    let jobs_at = join(at, "replicatedJobs");
    c.unique_keys(spec.get("replicatedJobs"), &jobs_at, "name");
    for (i, rjob) in items(spec, "replicatedJobs").iter().enumerate() {
        let rjob_at = format!("{jobs_at}[{i}]");
        c.required(rjob, "name", &rjob_at);
        c.required(rjob, "template", &rjob_at);
        if let Some(job_spec) = rjob.pointer("/template/spec") {
            c.required(job_spec, "template", &join(&rjob_at, "template.spec"));
        }
        let deps_at = join(&rjob_at, "dependsOn");
        c.max_items(rjob.get("dependsOn"), &deps_at, 5);
        c.unique_keys(rjob.get("dependsOn"), &deps_at, "name");
        for (d, dep) in items(rjob, "dependsOn").iter().enumerate() {
            let dep_at = format!("{deps_at}[{d}]");
            c.required(dep, "name", &dep_at);
            c.required(dep, "status", &dep_at);
            c.one_of(
                dep.get("status"),
                &join(&dep_at, "status"),
                &["Ready", "Complete"],
            );
        }
    }
    if let Some(startup) = spec.get("startupPolicy") {
        let s_at = join(at, "startupPolicy");
        c.required(startup, "startupPolicyOrder", &s_at);
        c.one_of(
            startup.get("startupPolicyOrder"),
            &join(&s_at, "startupPolicyOrder"),
            &["AnyOrder", "InOrder"],
        );
    }
    if let Some(success) = spec.get("successPolicy") {
        let s_at = join(at, "successPolicy");
        c.required(success, "operator", &s_at);
        c.one_of(
            success.get("operator"),
            &join(&s_at, "operator"),
            &["All", "Any"],
        );
    }
    c.minimum(
        spec.get("ttlSecondsAfterFinished"),
        &join(at, "ttlSecondsAfterFinished"),
        0,
    );
    let vcp_at = join(at, "volumeClaimPolicies");
    c.max_items(spec.get("volumeClaimPolicies"), &vcp_at, 50);
    for (i, policy) in items(spec, "volumeClaimPolicies").iter().enumerate() {
        let p_at = format!("{vcp_at}[{i}]");
        c.max_items(policy.get("templates"), &join(&p_at, "templates"), 50);
        c.one_of(
            policy.pointer("/retentionPolicy/whenDeleted"),
            &join(&p_at, "retentionPolicy.whenDeleted"),
            &["Delete", "Retain"],
        );
        let namespaced = items(policy, "templates").iter().any(|t| {
            t.pointer("/metadata/namespace")
                .and_then(Value::as_str)
                .is_some_and(|n| !n.is_empty())
        });
        if namespaced {
            c.rule(
                &p_at,
                "object",
                "namespace cannot be set for VolumeClaimPolicies templates",
            );
        }
    }
    let in_order = spec.pointer("/startupPolicy/startupPolicyOrder") == Some(&json!("InOrder"));
    if in_order
        && items(spec, "replicatedJobs")
            .iter()
            .any(|r| r.get("dependsOn").is_some())
    {
        c.rule(
            at,
            "object",
            "StartupPolicy and DependsOn APIs are mutually exclusive",
        );
    }
}

/// `ValidateCreate` on a defaulted JobSetSpec of the JobSet `name`.
pub fn validate_create(name: &str, spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let internal = |errs: &mut Vec<FieldError>, path: &str, m: String| {
        errs.push(FieldError::new(path, format!("Internal error: {m}")));
    };
    let str_at = |v: &Value, p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    if str_at(spec, "/failurePolicy/restartStrategy") == "InPlaceRestart" {
        internal(
            &mut errs,
            "spec.failurePolicy.restartStrategy",
            "InPlaceRestart restart strategy cannot be set when InPlaceRestart feature gate is disabled".into(),
        );
    }
    let rjobs = items(spec, "replicatedJobs");
    if rjobs
        .first()
        .is_some_and(|r| r.get("dependsOn").is_some_and(|d| !d.is_null()))
    {
        internal(
            &mut errs,
            "spec.replicatedJobs[0].dependsOn",
            "DependsOn can't be set for the first ReplicatedJob".into(),
        );
    }
    let subdomain = str_at(spec, "/network/subdomain");
    if !subdomain.is_empty() {
        let at = "spec.network.subdomain".to_string();
        for m in dns1123_subdomain_errors(&subdomain, LenUnit::Characters) {
            invalid(&mut errs, at.clone(), &subdomain, &m);
        }
        for m in dns1035_label_errors(&subdomain) {
            let m = if m.contains(TOO_LONG) {
                ".spec.network.subdomain is too long, must be less than 63 characters".into()
            } else {
                m
            };
            invalid(&mut errs, at.clone(), &subdomain, &m);
        }
    }
    if let Some(manager) = spec.get("managedBy").and_then(Value::as_str) {
        validate_domain_prefixed_path(manager, "spec.managedBy", &mut errs);
        if manager.len() > 63 {
            errs.push(FieldError::new(
                "spec.managedBy",
                "Too long: may not be more than 63 bytes".into(),
            ));
        }
    }
    let mut names: BTreeSet<&str> = BTreeSet::new();
    for (i, rjob) in rjobs.iter().enumerate() {
        let at = format!("spec.replicatedJobs[{i}]");
        let rjob_name = rjob.get("name").and_then(Value::as_str).unwrap_or("");
        names.insert(rjob_name);
        let replicas = rjob.get("replicas").and_then(Value::as_i64).unwrap_or(1);
        let job = rjob.pointer("/template/spec").unwrap_or(&Value::Null);
        let parallelism = job.get("parallelism").and_then(Value::as_i64).unwrap_or(1);
        if parallelism.saturating_mul(replicas) > MAX_INT32 {
            internal(
                &mut errs,
                &at,
                format!(
                    "the product of replicas and parallelism must not exceed {MAX_INT32} for replicatedJob '{rjob_name}'"
                ),
            );
        }
        let group = rjob.get("groupName").and_then(Value::as_str).unwrap_or("");
        for m in dns1035_label_errors(group) {
            let m = if m.contains(TOO_LONG) {
                ".spec.replicatedJob[].groupName is too long, must be less than 63 characters"
                    .into()
            } else {
                m
            };
            invalid(&mut errs, format!("{at}.groupName"), group, &m);
        }
        let longest_job = format!("{name}-{rjob_name}-{}", replicas - 1);
        for m in dns1035_label_errors(&longest_job) {
            let m = if m.contains(TOO_LONG) {
                "JobSet name is too long, job names generated for this JobSet will exceed 63 characters".into()
            } else {
                m
            };
            invalid(&mut errs, format!("{at}.name"), &longest_job, &m);
        }
        let indexed = job.get("completionMode").and_then(Value::as_str) == Some("Indexed");
        if indexed && let Some(completions) = job.get("completions").and_then(Value::as_i64) {
            let longest_pod = format!(
                "{name}-{rjob_name}-{}-{}-abcde",
                replicas - 1,
                completions - 1
            );
            for m in dns1035_label_errors(&longest_pod) {
                let m = if m.contains(TOO_LONG) {
                    "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters".into()
                } else {
                    m
                };
                // Upstream reports the longest job name here too.
                invalid(&mut errs, format!("{at}.name"), &longest_job, &m);
            }
        }
        for (d, dep) in items(rjob, "dependsOn").iter().enumerate() {
            let on = dep.get("name").and_then(Value::as_str).unwrap_or("");
            if !names.contains(on) {
                internal(
                    &mut errs,
                    &format!("{at}.dependsOn[{d}].name"),
                    format!("replicatedJob: {rjob_name} cannot depend on replicatedJob: {on}"),
                );
            }
        }
    }
    for (t, target) in items(
        spec.get("successPolicy").unwrap_or(&Value::Null),
        "targetReplicatedJobs",
    )
    .iter()
    .enumerate()
    {
        let target = target.as_str().unwrap_or("");
        if !names.contains(target) {
            internal(
                &mut errs,
                &format!("spec.successPolicy.targetReplicatedJobs[{t}]"),
                format!(
                    "invalid replicatedJob name '{target}' does not appear in .spec.ReplicatedJobs"
                ),
            );
        }
    }
    if let Some(fp) = spec.get("failurePolicy") {
        failure_policy(fp, &names, &mut errs);
    }
    if let Some(coordinator) = spec.get("coordinator") {
        if let Some(m) = coordinator_error(coordinator, rjobs) {
            internal(&mut errs, "spec.coordinator", m);
        }
        let endpoint = format!(
            "{name}-{}-{}-{}.{}",
            str_at(coordinator, "/replicatedJob"),
            coordinator
                .get("jobIndex")
                .and_then(Value::as_i64)
                .unwrap_or(0),
            coordinator
                .get("podIndex")
                .and_then(Value::as_i64)
                .unwrap_or(0),
            if subdomain.is_empty() {
                name
            } else {
                &subdomain
            }
        );
        let label_errs = label_value_errors(&endpoint);
        if !label_errs.is_empty() {
            internal(
                &mut errs,
                "spec.coordinator",
                format!(
                    "spec will lead to invalid label value {endpoint:?} for coordinator label \"jobset.sigs.k8s.io/coordinator\" (long JobSet / ReplicatedJob / SubDomain name?): {}",
                    label_errs.join(", ")
                ),
            );
        }
    }
    volume_claim_policies(name, spec, rjobs, &mut errs);
    errs
}

/// `validateFailurePolicy`.
fn failure_policy(fp: &Value, names: &BTreeSet<&str>, errs: &mut Vec<FieldError>) {
    let internal = |errs: &mut Vec<FieldError>, path: String, m: String| {
        errs.push(FieldError::new(&path, format!("Internal error: {m}")));
    };
    let rules = items(fp, "rules");
    let restart_job = rules.iter().any(|r| {
        matches!(
            r.get("action").and_then(Value::as_str),
            Some("RestartJob" | "RestartJobAndIgnoreMaxRestarts")
        )
    });
    if restart_job {
        // The RestartJob gate is off by default: the only error.
        internal(
            errs,
            "spec.failurePolicy.rules".into(),
            "RestartJob and RestartJobAndIgnoreMaxRestarts failure policy actions are not allowed when RestartJob feature gate is disabled".into(),
        );
        return;
    }
    let mut by_name: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, rule) in rules.iter().enumerate() {
        let at = format!("spec.failurePolicy.rules[{i}]");
        let name = rule.get("name").and_then(Value::as_str).unwrap_or("");
        let len = name.len();
        if !(1..=128).contains(&len) {
            internal(
                errs,
                format!("{at}.name"),
                format!(
                    "invalid failure policy rule name of length {len}, the rule name must be at least 1 characters long and at most 128 characters long"
                ),
            );
        }
        by_name.entry(name).or_default().push(i);
        if !rule_name_ok(name) {
            internal(
                errs,
                format!("{at}.name"),
                format!(
                    "invalid failure policy rule name '{name}', a failure policy rule name must start with an alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'"
                ),
            );
        }
        for (t, target) in items(rule, "targetReplicatedJobs").iter().enumerate() {
            let target = target.as_str().unwrap_or("");
            if !names.contains(target) {
                internal(
                    errs,
                    format!("{at}.targetReplicatedJobs[{t}]"),
                    format!(
                        "invalid replicatedJob name '{target}' in failure policy does not appear in .spec.ReplicatedJobs"
                    ),
                );
            }
        }
        for (r, reason) in items(rule, "onJobFailureReasons").iter().enumerate() {
            let reason = reason.as_str().unwrap_or("");
            if ![
                "BackoffLimitExceeded",
                "DeadlineExceeded",
                "FailedIndexes",
                "MaxFailedIndexesExceeded",
                "PodFailurePolicy",
            ]
            .contains(&reason)
            {
                internal(
                    errs,
                    format!("{at}.onJobFailureReasons[{r}]"),
                    format!(
                        "invalid job failure reason '{reason}' in failure policy is not a recognized job failure reason"
                    ),
                );
            }
        }
    }
    for (name, indices) in by_name.into_iter().filter(|(_, i)| i.len() > 1) {
        let list: Vec<String> = indices.iter().map(usize::to_string).collect();
        internal(
            errs,
            "spec.failurePolicy.rules".into(),
            format!(
                "rule names are not unique, rules with indices [{}] all have the same name '{name}'",
                list.join(" ")
            ),
        );
    }
}

/// `^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`.
fn rule_name_ok(name: &str) -> bool {
    let b = name.as_bytes();
    let inner = |c: &u8| c.is_ascii_alphanumeric() || matches!(c, b'_' | b',' | b':');
    !b.is_empty()
        && b[0].is_ascii_alphabetic()
        && (b.len() == 1
            || (b[1..].iter().all(inner)
                && (b[b.len() - 1].is_ascii_alphanumeric() || b[b.len() - 1] == b'_')))
}

/// `validateCoordinator`: the first problem, if any.
fn coordinator_error(coordinator: &Value, rjobs: &[Value]) -> Option<String> {
    let target = coordinator
        .get("replicatedJob")
        .and_then(Value::as_str)
        .unwrap_or("");
    let Some(rjob) = rjobs
        .iter()
        .find(|r| r.get("name").and_then(Value::as_str) == Some(target))
    else {
        return Some(format!("coordinator replicatedJob {target} does not exist"));
    };
    let replicas = rjob.get("replicas").and_then(Value::as_i64).unwrap_or(1);
    let job_index = coordinator
        .get("jobIndex")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if job_index < 0 || job_index >= replicas {
        return Some(format!(
            "coordinator job index {job_index} is invalid for replicatedJob {target}"
        ));
    }
    let job = rjob.pointer("/template/spec").unwrap_or(&Value::Null);
    let completions = job.get("completions").and_then(Value::as_i64);
    let indexed = job.get("completionMode").and_then(Value::as_str) == Some("Indexed");
    let Some(completions) = completions.filter(|_| indexed) else {
        return Some(
            "job for coordinator pod must be indexed completion mode, and completions number must be set".into(),
        );
    };
    let pod_index = coordinator
        .get("podIndex")
        .and_then(Value::as_i64)
        .unwrap_or(0);
    if pod_index < 0 || pod_index >= completions {
        return Some(format!(
            "coordinator pod index {pod_index} is invalid for replicatedJob {target} job index {job_index}"
        ));
    }
    None
}

/// `validateVolumeClaimPolicies` (no PVC exists beforehand in a scenario).
fn volume_claim_policies(name: &str, spec: &Value, rjobs: &[Value], errs: &mut Vec<FieldError>) {
    let mut seen: BTreeSet<&str> = BTreeSet::new();
    for (i, policy) in items(spec, "volumeClaimPolicies").iter().enumerate() {
        for (j, template) in items(policy, "templates").iter().enumerate() {
            let at = format!("spec.volumeClaimPolicies[{i}].template[{j}].name");
            let claim = template
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or("");
            if seen.contains(claim) {
                invalid(
                    errs,
                    at.clone(),
                    claim,
                    "names must be unique for VolumeClaimPolicies template",
                );
            }
            for m in dns1123_subdomain_errors(claim, LenUnit::Characters) {
                invalid(errs, at.clone(), claim, &m);
            }
            if format!("{claim}-{name}").len() > 63 {
                invalid(
                    errs,
                    at.clone(),
                    claim,
                    "VolumeClaimPolicies template name is too long",
                );
            }
            let mut mounted = false;
            for (r, rjob) in rjobs.iter().enumerate() {
                let pod = rjob
                    .pointer("/template/spec/template/spec")
                    .unwrap_or(&Value::Null);
                for (v, volume) in items(pod, "volumes").iter().enumerate() {
                    if volume.get("name").and_then(Value::as_str) == Some(claim) {
                        invalid(
                            errs,
                            format!(
                                "spec.replicatedJobs[{r}].template.spec.template.spec.volumes[{v}].name"
                            ),
                            claim,
                            &format!(
                                "volume name conflicts with VolumeClaimPolicy template name: {claim}"
                            ),
                        );
                    }
                }
                mounted |= ["initContainers", "containers"].iter().any(|k| {
                    items(pod, k).iter().any(|c| {
                        items(c, "volumeMounts")
                            .iter()
                            .any(|m| m.get("name").and_then(Value::as_str) == Some(claim))
                    })
                });
            }
            if !mounted {
                errs.push(FieldError::new(
                    "spec.replicatedJobs",
                    format!("Invalid value: \"array\": replicatedJob containers don't have a matching volumeMount: {claim} from VolumeClaimPolicies"),
                ));
            }
            seen.insert(claim);
        }
    }
}

/// The JobSet Trainer creates for a resolved TrainJob (`jobset/builder.go`: the runtime's
/// template, named after the TrainJob, each replicated job's `replicas` and — as
/// `SyncParallelCount` sets them — `parallelism` and `completions` from its pod count), as
/// JobSet's webhooks answer it: `None` when it is created, else Trainer's event message
/// (`TrainJobResourcesCreationFailed`, cut at 950 characters as the controller cuts it).
/// `jobs`: each replicated job's name, replicas and pods per Job.
pub fn train_job_jobset(name: &str, template: &Value, jobs: &[(&str, i32, i32)]) -> Option<String> {
    let mut spec = template.clone();
    if let Some(rjobs) = spec.get_mut("replicatedJobs").and_then(Value::as_array_mut) {
        for rjob in rjobs.iter_mut() {
            let rjob_name = rjob.get("name").and_then(Value::as_str).unwrap_or("");
            let Some(&(_, replicas, count)) = jobs.iter().find(|j| j.0 == rjob_name) else {
                continue;
            };
            if let Some(r) = rjob.as_object_mut() {
                r.insert("replicas".into(), json!(replicas));
                let template = r.entry("template").or_insert_with(|| json!({}));
                if let Some(t) = template.as_object_mut() {
                    let job = t.entry("spec").or_insert_with(|| json!({}));
                    if let Some(j) = job.as_object_mut() {
                        j.insert("parallelism".into(), json!(count));
                        j.insert("completions".into(), json!(count));
                    }
                }
            }
        }
    }
    default(&mut spec);
    let errs = validate_create(name, &spec);
    if errs.is_empty() {
        return None;
    }
    let err = denial(name, &errs);
    let mut message: String = err.chars().take(950).collect();
    message = format!("TrainJob resources reconciliation failed: {message}");
    if err.chars().count() > 950 {
        message.push_str(" ...");
    }
    Some(message)
}

/// The message the API server answers a refused JobSet with.
pub fn denial(name: &str, errs: &[FieldError]) -> String {
    let list: Vec<String> = errs
        .iter()
        .map(|e| match e.path.as_str() {
            "" => e.message.clone(),
            p => format!("{p}: {}", e.message),
        })
        .collect();
    let body = match list.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    format!(
        "admission webhook {WEBHOOK:?} denied the request: JobSet.jobset.x-k8s.io {name:?} is invalid: {body}"
    )
}
