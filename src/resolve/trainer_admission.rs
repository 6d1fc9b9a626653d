//! What the API server refuses of Kubeflow Trainer's objects on create (kubeflow/trainer
//! v2.3.0, whose webhooks the release installs by default), beyond the override checks of
//! `patches`:
//!
//! - `TrainingRuntime` / `ClusterTrainingRuntime`: their CRD (`manifests/base/crds/`: the
//!   `mlPolicy` rules, and the JobSet template, whose schema is JobSet's own, see
//!   [`super::jobset_admission::crd`]), then the webhook (`pkg/webhooks/
//!   {trainingruntime,clustertrainingruntime}_webhook.go` `validateReplicatedJobs`): an
//!   ancestor job runs one replica and has its container. A ClusterTrainingRuntime labelled
//!   `trainer.kubeflow.org/support: deprecated` is accepted with the webhook's warning.
//! - `TrainJob`: its CRD's rules on the fields schedsim reads (the name is an RFC 1035 label,
//!   `activeDeadlineSeconds`, `managedBy`, `runtimeRef`, the initializers' `storageUri`), then
//!   the runtime plugins' `Validate` the webhook runs (`pkg/runtime/framework/plugins/`: jobset's
//!   initializer checks, the reserved env of torch, MPI and XGBoost, Flux's `numProcPerNode`).
//!
//! The JobSet a TrainJob's runtime makes is checked when Trainer creates it
//! ([`super::jobset_admission::train_job_jobset`]): JobSet's webhook, not Trainer's, decides it.

use serde_json::Value;

use super::runtime::{ANCESTOR_LABEL, TrainingRuntime};
use super::trainjob::TrainJob;
use crate::model::crd::{CrdCheck, items, join};
use crate::model::validate::FieldError;

/// `runtimePatches`' and the ancestors' container for each ancestor label value.
const ANCESTOR_CONTAINERS: &[(&str, &str)] = &[
    ("trainer", "node"),
    ("model-initializer", "model-initializer"),
    ("dataset-initializer", "dataset-initializer"),
];

/// What a (Cluster)TrainingRuntime's CRD refuses (empty: valid).
pub fn runtime_crd(value: &Value) -> Vec<FieldError> {
    let spec = value.get("spec").unwrap_or(&Value::Null);
    let mut c = CrdCheck::new();
    if let Some(ml) = spec.get("mlPolicy") {
        let at = "spec.mlPolicy";
        let policies = ["torch", "mpi", "jax", "xgboost", "flux"];
        if policies.iter().filter(|p| ml.get(**p).is_some()).count() > 1 {
            c.rule(at, "object", "Only one of the policy can be configured");
        }
        c.one_of(
            ml.pointer("/mpi/mpiImplementation"),
            "spec.mlPolicy.mpi.mpiImplementation",
            &["OpenMPI", ""],
        );
        c.max_length(
            ml.pointer("/mpi/sshAuthMountPath"),
            "spec.mlPolicy.mpi.sshAuthMountPath",
            4096,
        );
        if ml
            .pointer("/flux/numProcPerNode")
            .and_then(Value::as_i64)
            .is_some_and(|n| n < 1)
        {
            c.rule(
                "spec.mlPolicy.flux.numProcPerNode",
                "integer",
                "NumProcPerNode in fluxPolicy must be >= 1",
            );
        }
    }
    c.one_of(
        spec.pointer("/podGroupPolicy/volcano/networkTopology/mode"),
        "spec.podGroupPolicy.volcano.networkTopology.mode",
        &["hard", "soft"],
    );
    if let Some(template) = spec.pointer("/template/spec") {
        super::jobset_admission::crd(template, "spec.template.spec", &mut c);
    }
    c.finish()
}

/// What the runtime webhooks refuse of a runtime the API server validated (empty: created).
pub fn runtime_webhook(value: &Value) -> Vec<FieldError> {
    if webhook_skipped(value) {
        return Vec::new();
    }
    replicated_jobs(value.get("spec").unwrap_or(&Value::Null))
}

/// The runtime webhooks' objectSelector (`charts/kubeflow-trainer/templates/webhook/
/// validating_webhook_configuration.yaml`) skips runtimes labelled
/// `trainer.kubeflow.org/webhook-validation: disabled`, as the built-in ones are.
fn webhook_skipped(value: &Value) -> bool {
    value.pointer("/metadata/labels/trainer.kubeflow.org~1webhook-validation")
        == Some(&Value::from("disabled"))
}

/// `validateReplicatedJobs`: a job whose template carries an ancestor label runs one
/// replica and has the ancestor's container.
fn replicated_jobs(spec: &Value) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let rjobs = spec
        .pointer("/template/spec/replicatedJobs")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    for (i, rjob) in rjobs.iter().enumerate() {
        let at = format!("spec.template.spec.replicatedJobs[{i}]");
        let ancestor = rjob
            .pointer("/template/metadata/labels")
            .and_then(|l| l.get(ANCESTOR_LABEL))
            .and_then(Value::as_str);
        let Some(&(ancestor, container)) =
            ancestor.and_then(|a| ANCESTOR_CONTAINERS.iter().find(|(x, _)| *x == a))
        else {
            continue;
        };
        let replicas = rjob.get("replicas").and_then(Value::as_i64).unwrap_or(1);
        if replicas != 1 {
            errs.push(FieldError::new(
                &format!("{at}.replicas"),
                format!("Invalid value: {replicas}: always must be 1"),
            ));
        }
        let containers = rjob
            .pointer("/template/spec/template/spec/containers")
            .cloned()
            .unwrap_or(Value::Null);
        let has = (containers.as_array().into_iter().flatten())
            .any(|c| c.get("name").and_then(Value::as_str) == Some(container));
        if !has {
            errs.push(FieldError::new(
                &format!("{at}.template.spec.template.spec.containers"),
                format!(
                    "Invalid value: {containers}: must contain the required container for the ancestor: {ancestor}"
                ),
            ));
        }
    }
    errs
}

/// The webhook's warning for a deprecated ClusterTrainingRuntime.
pub fn runtime_warning(value: &Value) -> Option<String> {
    let deprecated =
        value["metadata"]["labels"]["trainer.kubeflow.org/support"].as_str() == Some("deprecated");
    let cluster = value["kind"].as_str() == Some("ClusterTrainingRuntime");
    (deprecated && cluster && !webhook_skipped(value)).then(|| {
        format!(
            "ClusterTrainingRuntime \"{}\" is deprecated and will be removed in a future release of Kubeflow Trainer. See runtime deprecation policy: https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html#runtime-deprecation-policy",
            value["metadata"]["name"].as_str().unwrap_or("")
        )
    })
}

/// The TrainJob CRD's rules on the fields schedsim reads (beyond `patches`' own).
pub fn train_job(value: &Value) -> Vec<FieldError> {
    let mut c = CrdCheck::new();
    let spec = value.get("spec").unwrap_or(&Value::Null);
    c.required(value, "spec", "");
    c.required(spec, "runtimeRef", "spec");
    if let Some(r) = spec.get("runtimeRef") {
        c.required(r, "name", "spec.runtimeRef");
        c.max_length(r.get("name"), "spec.runtimeRef.name", 253);
        c.min_length(r.get("name"), "spec.runtimeRef.name", 1);
        c.max_length(r.get("apiGroup"), "spec.runtimeRef.apiGroup", 253);
        c.max_length(r.get("kind"), "spec.runtimeRef.kind", 253);
    }
    c.minimum(
        spec.get("activeDeadlineSeconds"),
        "spec.activeDeadlineSeconds",
        1,
    );
    c.max_length(spec.get("managedBy"), "spec.managedBy", 253);
    if let Some(m) = spec.get("managedBy").and_then(Value::as_str)
        && ![
            "trainer.kubeflow.org/trainjob-controller",
            "kueue.x-k8s.io/multikueue",
        ]
        .contains(&m)
    {
        c.rule(
            "spec.managedBy",
            "string",
            "ManagedBy must be trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue if set",
        );
    }
    if let Some(t) = spec.get("trainer") {
        c.max_length(t.get("image"), "spec.trainer.image", 500);
        for list in ["command", "args", "env"] {
            c.max_items(t.get(list), &format!("spec.trainer.{list}"), 128);
        }
        c.unique_keys(t.get("env"), "spec.trainer.env", "name");
    }
    for which in ["dataset", "model"] {
        let Some(init) = spec.pointer(&format!("/initializer/{which}")) else {
            continue;
        };
        let at = format!("spec.initializer.{which}");
        let uri_at = join(&at, "storageUri");
        c.max_length(init.get("storageUri"), &uri_at, 2048);
        if let Some(uri) = init.get("storageUri").and_then(Value::as_str)
            && !(uri.is_empty() || is_uri(uri))
        {
            c.rule(
                &uri_at,
                "string",
                "storageUri may be empty, or it must be a valid URI (scheme://...)",
            );
        }
        c.max_items(init.get("env"), &join(&at, "env"), 128);
        c.unique_keys(init.get("env"), &join(&at, "env"), "name");
    }
    // The name rules are on the object: `metadata.name` is an RFC 1035 label of at most 63.
    let name = value["metadata"]["name"].as_str().unwrap_or("");
    if !name.is_empty() {
        let b = name.as_bytes();
        let rfc1035 = b[0].is_ascii_lowercase()
            && (b[b.len() - 1].is_ascii_lowercase() || b[b.len() - 1].is_ascii_digit())
            && b.iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-');
        if !rfc1035 {
            c.rule(
                "",
                "object",
                "metadata.name must match RFC 1035 DNS label format",
            );
        }
        if name.chars().count() > 63 {
            c.rule(
                "",
                "object",
                "metadata.name must be no more than 63 characters",
            );
        }
    }
    c.finish()
}

/// `^[A-Za-z][A-Za-z0-9+.-]*://.+$`.
fn is_uri(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once("://") else {
        return false;
    };
    let b = scheme.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphabetic()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'-'))
        && !rest.is_empty()
        && !rest.contains('\n')
}

/// The runtime plugins' `Validate` for a TrainJob on its runtime.
pub fn plugins(job: &TrainJob, runtime: &TrainingRuntime) -> Vec<FieldError> {
    let mut errs = Vec::new();
    initializers(job, runtime, &mut errs);
    let ml = runtime.spec.ml_policy.as_ref();
    let env: Vec<&str> = (job.spec.trainer.iter())
        .flat_map(|t| &t.env)
        .map(|e| e.name.as_str())
        .collect();
    let reserved = |names: &[&str]| {
        let mut found: Vec<&str> = env.iter().copied().filter(|e| names.contains(e)).collect();
        found.sort();
        found.dedup();
        found
    };
    let env_value = || {
        job.spec
            .trainer
            .as_ref()
            .map(|t| serde_json::to_string(&t.env).unwrap_or_default())
            .unwrap_or_default()
    };
    let mut reserved_error = |names: &[&str]| {
        let found = reserved(names);
        if !found.is_empty() {
            errs.push(FieldError::new(
                "spec.trainer.env",
                format!(
                    "Invalid value: {}: must not have reserved envs, invalid envs configured: [{}]",
                    env_value(),
                    found.join(" ")
                ),
            ));
        }
    };
    if ml.is_some_and(|m| m.torch.is_some()) {
        reserved_error(&[
            "PET_NNODES",
            "PET_NPROC_PER_NODE",
            "PET_NODE_RANK",
            "PET_MASTER_ADDR",
            "PET_MASTER_PORT",
        ]);
    }
    if ml.is_some_and(|m| m.mpi.is_some()) {
        reserved_error(&[
            "OMPI_MCA_orte_default_hostfile",
            "OMPI_MCA_plm_rsh_args",
            "OMPI_MCA_orte_keep_fqdn_hostnames",
            "OMPI_MCA_orte_set_default_slots",
        ]);
    }
    if ml.is_some_and(|m| m.xgboost.is_some()) {
        let xgboost = [
            "DMLC_TRACKER_URI",
            "DMLC_TRACKER_PORT",
            "DMLC_TASK_ID",
            "DMLC_NUM_WORKER",
        ];
        for (i, name) in env.iter().enumerate() {
            if xgboost.contains(name) {
                errs.push(FieldError::new(
                    &format!("spec.trainer.env[{i}]"),
                    format!("Forbidden: {name} is reserved for the XGBoost runtime"),
                ));
            }
        }
    }
    if let Some(flux) = ml.and_then(|m| m.flux.as_ref()) {
        let n = (job.spec.trainer.as_ref())
            .and_then(|t| t.num_proc_per_node.as_ref())
            .and_then(Value::as_i64)
            .or_else(|| flux.get("numProcPerNode").and_then(Value::as_i64))
            .unwrap_or(1);
        if n < 1 {
            errs.push(FieldError::new(
                "spec.trainer.numProcPerNode",
                format!("Invalid value: {n}: must be greater than or equal to 1 for Flux TrainJob"),
            ));
        }
    }
    errs
}

/// The jobset plugin's initializer checks: a TrainJob with a dataset (model) initializer needs
/// the runtime's `dataset-initializer` (`model-initializer`) job, its container of that name,
/// and that container's `initializer` volume mount.
fn initializers(job: &TrainJob, runtime: &TrainingRuntime, errs: &mut Vec<FieldError>) {
    let init = job.spec.initializer.as_ref();
    let r = &job.spec.runtime_ref;
    let reference = serde_json::json!({
        "name": r.name,
        "apiGroup": r.api_group.as_deref().unwrap_or("trainer.kubeflow.org"),
        "kind": r.kind.as_deref().unwrap_or("ClusterTrainingRuntime"),
    });
    for (wanted, input, name) in [
        (
            init.is_some_and(|i| i.dataset.is_some()),
            "datasetConfig",
            "dataset-initializer",
        ),
        (
            init.is_some_and(|i| i.model.is_some()),
            "modelConfig",
            "model-initializer",
        ),
    ] {
        if !wanted {
            continue;
        }
        let problem = match runtime
            .replicated_jobs()
            .iter()
            .find(|j| j.get("name").and_then(Value::as_str) == Some(name))
        {
            None => format!("must have {name} job when trainJob is configured with input {input}"),
            Some(rjob) => {
                let pod = rjob
                    .pointer("/template/spec/template/spec")
                    .unwrap_or(&Value::Null);
                let named = |c: &&Value| c.get("name").and_then(Value::as_str) == Some(name);
                let in_init = items(pod, "initContainers").iter().any(|c| named(&c));
                match items(pod, "containers").iter().find(named) {
                    None if !in_init => {
                        format!("must have container with name - {name} in the {name} job")
                    }
                    found => {
                        let mounted = found.is_some_and(|c| {
                            items(c, "volumeMounts").iter().any(|m| {
                                m.get("name").and_then(Value::as_str) == Some("initializer")
                            })
                        });
                        if mounted {
                            continue;
                        }
                        format!(
                            "must have volumeMount with name - initializer in container {name} of the {name} job"
                        )
                    }
                }
            }
        };
        errs.push(FieldError::new(
            "spec.runtimeRef",
            format!("Invalid value: {reference}: {problem}"),
        ));
    }
}
