//! Determined (`determined-ai/determined`) trials on Kubernetes: an experiment config and the
//! cluster's Helm values → the pod of one trial, how many of them, and what each requests.
//!
//! What Determined does, in order (paths in `determined-ai/determined`, master HEAD
//! `c1e9c6d7b` unless noted; where the code and the docs disagree, the code is followed):
//!
//! 1. **Validation at submission.** The experiment config is checked against the expconf JSON
//!    schema (`schemas/expconf/v0/environment.json`, sanity validator
//!    `master/pkg/schemas/schemas.go: GetSanityValidator` with the `disallowProperties`
//!    extension): a key `image`, `command`, `args`, `ports` or `lifecycle` (and a few snake_case
//!    names no Kubernetes container has) in *any* container of `environment.pod_spec` rejects
//!    the experiment. Then `ResolveResources` → `kubernetesResourcePool.ValidateResources`
//!    (`master/internal/rm/kubernetesrm/resource_pool.go`): `slots_per_trial` must be
//!    `<= max_slots_per_pod` or a multiple of it (`<=` on one pod when `is_single_node`).
//! 2. **Default pod spec.** `master/pkg/model/task_container_defaults.go: MergeIntoExpConfig`
//!    picks `gpu_pod_spec` when `slots_per_trial > 0`, else `cpu_pod_spec`, from the task
//!    container defaults of the trial's resource pool: the cluster-level ones merged with the
//!    pool's (`kubernetesrm.ResourceManager.TaskContainerDefaults` →
//!    `TaskContainerDefaultsConfig.Merge`: a pod spec set at pool level replaces the cluster's
//!    pod spec of that kind whole; the other kind stays cluster-level). Before PR #9233
//!    (2024-04) the pool's `task_container_defaults` replaced the cluster's entirely.
//! 3. **Merge.** `schemas.Merge(config.RawEnvironment, &env)` →
//!    `master/pkg/schemas/expconf/environment_config.go: PodSpec.Merge`:
//!    `strategicpatch.StrategicMergePatch(json(default), json(user), k8sV1.Pod)` — the user's
//!    pod spec is a strategic merge patch over the default ([`PodSpecMerge::StrategicMerge`],
//!    since PR #5728, 2023-01). Before, `Merge` was `DeepCopyInto` of the user's pod over
//!    the default's, i.e. the user's pod spec replaced the default whole
//!    ([`PodSpecMerge::Replace`]). Both sides are first decoded into a typed `k8sV1.Pod` and
//!    re-encoded with `json.Marshal` (see `go_pod_roundtrip`): unknown fields are dropped,
//!    fields Go's `omitempty` drops cannot override the default, and — **derived from code, untested upstream** — a user
//!    pod spec without `spec.containers` marshals `"containers": null`, which strategic merge
//!    patch reads as "delete": the default's containers (its `determined-container` settings and
//!    sidecars) are dropped. No upstream test covers that case.
//! 4. **Slots → pods.** `resource_pool.go: assignResources`: a trial of `N > max_slots_per_pod`
//!    slots becomes `N / max_slots_per_pod` pods of exactly `max_slots_per_pod` slots each;
//!    `N <= max_slots_per_pod` is one pod of `N` slots (0 slots: one CPU pod). There is no uneven
//!    split: `N` not a multiple is rejected by `ValidateResources` ("invalid resource request:
//!    slots (12) must be < or a multiple of max_slots_per_pod (8)") and would never be
//!    scheduled. The pods are one `batch/v1` Job with `parallelism = completions = pods`
//!    (`spec.go: configureJobSpec`).
//! 5. **Determined's construction** (`master/internal/rm/kubernetesrm/spec.go: createSpec`,
//!    `configureJobSpec`, `modifyPodSpec`; `volumes.go`; the older pod-based `configurePodSpec`
//!    does the same): name and namespace overwritten; `determined.ai/…` labels set;
//!    `schedulerName` (coscheduler only) and `priorityClassName` set when empty; a
//!    `DoesNotExist` requirement on `determined.ai/cluster-id-<id>` appended to the first
//!    required node-selector term; the user's containers other than `determined-container`
//!    kept, then Determined's `determined-container` appended, which takes from the pod spec's
//!    `determined-container` only `env` and `envFrom` (appended after Determined's),
//!    `resources.limits`/`requests` of names Determined did not set, `volumeMounts` and
//!    `volumeDevices` (appended) and `securityContext` (with `runAsUser`/`runAsGroup`
//!    overwritten); Determined's volumes appended; `hostNetwork` from
//!    `task_container_defaults.network_mode`; `determined-init-container` appended to
//!    `initContainers`; `restartPolicy: Never`.
//!
//! Not modelled (no effect on scheduling): the container command, the init container's
//! arguments, the per-file `subPath` mounts of the run archives, the master-address and
//! task-identity environment variables, and the `determined.ai/user|task_id|container_id|
//! allocation_id` and `determined` labels (their values are ids the simulator does not have).

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::provenance;
use super::smp::{self, Schema};

mod config;
mod defaults;
mod pods;
mod roundtrip;
mod slots;
#[cfg(test)]
mod tests;
mod validate;
mod values;

use crate::model::validate::FieldError;
pub use config::*;
use defaults::*;
use pods::*;
use roundtrip::*;
use slots::*;
use validate::*;
use values::*;

/// `model.DeterminedK8ContainerName`.
pub const DETERMINED_CONTAINER: &str = "determined-container";
/// `spec.go: configureInitContainer`.
pub const DETERMINED_INIT_CONTAINER: &str = "determined-init-container";
/// The task working directory (`model.DefaultWorkDir`; the docs say the same).
pub const WORK_DIR: &str = "/run/determined/workdir";
/// The PriorityClass `modifyPodSpec` gives a pod without one (Helm chart
/// `templates/priority-classes.yaml`: value 50).
pub const MEDIUM_PRIORITY_CLASS: &str = "determined-medium-priority";
/// `spec.go`: `coscheduler`, the only `defaultScheduler` the Helm chart passes through that
/// still changes pods at HEAD.
pub const COSCHEDULER: &str = "coscheduler";
/// Provenance source of fields from the experiment's pod spec.
pub const USER_SOURCE: &str = "environment.pod_spec";
/// Provenance source of fields Determined sets itself.
pub const DETERMINED_SOURCE: &str = "determined";

pub(super) const LABEL_PREFIX: &str = "determined.ai/";
pub(super) const INIT_WORK_DIR: &str = "/run/determined/temp/";
pub(super) const INIT_TAR_SRC: &str = "/run/determined/temp/tar/src";
pub(super) const INIT_TAR_DST: &str = "/run/determined/temp/tar/dst";
pub(super) const INIT_ENTRYPOINT: &str = "/run/determined/temp/k8_init_container_entrypoint.sh";
pub(super) const DEFAULT_WORKSPACE: &str = "Uncategorized";
pub(super) const DEFAULT_POOL: &str = "default";
pub(super) const DEFAULT_NAMESPACE: &str = "default";
/// Placeholder for the master's cluster id (a UUID) when [`ClusterDefaults::cluster_id`] is unset.
pub(super) const DEFAULT_CLUSTER_ID: &str = "00000000-0000-0000-0000-000000000000";
/// Image defaults: the Helm chart's `defaultImages` in the stored `values.yaml` (the release's
/// `expconf.DefaultCPUImage`/`DefaultCUDAImage` change with every release).
pub(super) const DEFAULT_CPU_IMAGE: &str = "determinedai/pytorch-ngc:0.36.0";
pub(super) const DEFAULT_CUDA_IMAGE: &str = "determinedai/pytorch-ngc:0.36.0";
pub(super) const DEFAULT_ROCM_IMAGE: &str =
    "determinedai/environments:rocm-5.6-pytorch-1.3-tf-2.10-rocm-mpich-0736b6d";

/// The pods of one trial.
#[derive(Debug, Clone)]
pub struct TrialPods {
    /// The pod every one of the trial's pods is made from (`apiVersion`, `kind`, `metadata`,
    /// `spec`): the template of the trial's Job. `metadata.name` is the Job's name; the Job
    /// controller names the pods `<name>-<suffix>`.
    pub pod_spec: Value,
    /// How many pods (the Job's `parallelism` and `completions`).
    pub pods: usize,
    /// Slots (GPUs, or CPUs with `slotType: cpu`) each pod requests.
    pub slots_per_pod: i64,
    /// Fields Determined overwrote or ignored, and merges that dropped something.
    pub warnings: Vec<String>,
    /// Field path (keyed as in [`provenance`]) → who set it: `environment.pod_spec`, the default
    /// pod spec (`default gpuPodSpec`, `default cpuPodSpec`, or a resource pool's), or
    /// `determined`.
    pub provenance: BTreeMap<String, String>,
    /// The resource pool the trial runs in.
    pub resource_pool: String,
    /// The PriorityClass Determined creates for `resources.priority` (name, value), which the
    /// pod uses when its pod spec names none.
    pub priority_class: Option<(String, i32)>,
}

/// The pods of one trial of `exp` on a cluster installed with `defaults`.
///
/// Errors carry paths in the experiment config (`environment.pod_spec.spec.containers[0].image`,
/// `resources.slots_per_trial`); errors in the cluster's defaults carry paths in the Helm values
/// (`taskContainerDefaults.gpuPodSpec.spec…`, `resourcePools[0].task_container_defaults…`).
pub fn trial_pods(
    exp: &ExperimentConfig,
    defaults: &ClusterDefaults,
    merge: PodSpecMerge,
) -> Result<TrialPods, Vec<FieldError>> {
    let mut errs = Vec::new();
    let mut warnings = Vec::new();

    let slots = exp.resources.slots_per_trial.unwrap_or(1);
    if slots < 0 {
        errs.push(field_error(
            "resources.slots_per_trial",
            format!("must be >= 0, got {slots}"),
        ));
    }
    let slot_type = match defaults.slot_type.as_deref() {
        None | Some("gpu" | "cuda") => Device::Cuda,
        Some("cpu") => Device::Cpu,
        Some("rocm") => Device::Rocm,
        Some(other) => {
            errs.push(field_error(
                "slotType",
                format!("unsupported slot type {other:?}: expected gpu, cpu or rocm"),
            ));
            Device::Cuda
        }
    };
    if slot_type == Device::Cpu && defaults.slot_resource_requests.cpu.is_none() {
        errs.push(field_error(
            "slotResourceRequests.cpu",
            "required with slotType: cpu".to_string(),
        ));
    }
    let eff = match effective_defaults(exp, defaults, slots) {
        Ok(e) => e,
        Err(e) => {
            errs.push(e);
            return Err(errs);
        }
    };
    let single_node = exp.resources.is_single_node.unwrap_or(false);
    let (pods, slots_per_pod) = match split_slots(slots.max(0), &eff, single_node) {
        Ok(split) => split,
        Err(e) => {
            errs.push(e);
            (1, 0)
        }
    };

    // The typed decode/encode of both sides, and the validation of each.
    let default_norm = eff.default_spec.as_ref().and_then(|d| {
        let norm = go_pod_roundtrip(d.value, &d.path, &mut errs)?;
        validate_default_pod_spec(&norm, &d.path, &mut errs);
        Some(norm)
    });
    let user_raw = exp.environment.pod_spec.as_ref().filter(|v| !v.is_null());
    if let Some(raw) = user_raw {
        check_expconf_schema(raw, &mut errs);
    }
    let user_norm = user_raw.and_then(|raw| go_pod_roundtrip(raw, USER_SOURCE, &mut errs));
    if !errs.is_empty() {
        return Err(errs);
    }

    let default_label = eff.default_spec.as_ref().map(|d| d.label.clone());
    let default_path = eff.default_spec.as_ref().map(|d| d.path.clone());
    let merged = match (&user_norm, &default_norm) {
        (None, None) => json!({}),
        (None, Some(d)) => d.clone(),
        (Some(u), None) => u.clone(),
        (Some(u), Some(d)) => match merge {
            PodSpecMerge::Replace => {
                let lost = replaced_fields(d, u);
                if !lost.is_empty() {
                    warnings.push(format!(
                        "{USER_SOURCE} replaces the {} (releases before strategic merge): its {} \
                         not applied",
                        default_label.as_deref().unwrap_or_default(),
                        describe_list(&lost, "is", "are"),
                    ));
                }
                u.clone()
            }
            PodSpecMerge::StrategicMerge => {
                let mut patch = u.clone();
                let user_has_containers = user_raw
                    .and_then(|r| r.get("spec"))
                    .and_then(|s| s.get("containers"))
                    .is_some_and(|c| !c.is_null());
                if !user_has_containers {
                    // json.Marshal of a nil `Containers` (no omitempty) → `null` → delete.
                    patch
                        .as_object_mut()
                        .expect("a pod is an object")
                        .entry("spec")
                        .or_insert_with(|| json!({}))
                        .as_object_mut()
                        .expect("spec is an object")
                        .insert("containers".into(), Value::Null);
                    let dropped = container_names(d);
                    if !dropped.is_empty() {
                        warnings.push(format!(
                            "{USER_SOURCE}.spec.containers is not set, so the strategic merge \
                             drops the containers of the {} ({}): Determined marshals the \
                             missing list as null, which strategic merge patch reads as a delete",
                            default_label.as_deref().unwrap_or_default(),
                            dropped.join(", ")
                        ));
                    }
                }
                match smp::strategic_merge(d, &patch, Schema::PodTemplateSpec) {
                    Ok(m) => m,
                    Err(e) => {
                        return Err(vec![field_error(
                            USER_SOURCE,
                            format!(
                                "strategic merge over the {} failed: {e}",
                                default_label.as_deref().unwrap_or_default()
                            ),
                        )]);
                    }
                }
            }
        },
    };

    // Who set what, for warnings: under Replace the default contributes nothing once the task
    // has a pod spec.
    let origins = Origins {
        user: user_norm.as_ref(),
        default: match (merge, &user_norm) {
            (PodSpecMerge::Replace, Some(_)) => None,
            _ => default_norm.as_ref(),
        },
        default_path: default_path.clone().unwrap_or_default(),
    };
    let device = if slots_per_pod == 0 {
        Device::Cpu
    } else {
        slot_type
    };
    let job_name = job_name(defaults, exp);
    let builder = Builder {
        exp,
        defaults,
        eff: &eff,
        origins: &origins,
        slot_type,
        device,
        slots,
        pods,
        slots_per_pod,
        job_name: &job_name,
    };
    let (pod, priority_class) = builder.build(merged.clone(), &mut warnings);

    // Provenance: a leaf the merge produced and Determined kept is the user's if the user's pod
    // spec has it, else the default's; everything else is Determined's.
    let merged_leaves = provenance::flatten(&merged, Some(Schema::PodTemplateSpec));
    let user_leaves = user_norm
        .as_ref()
        .map(|u| provenance::flatten(u, Some(Schema::PodTemplateSpec)))
        .unwrap_or_default();
    let mut prov = BTreeMap::new();
    for (path, value) in provenance::flatten(&pod, Some(Schema::PodTemplateSpec)) {
        let source = if path == "apiVersion" || path == "kind" {
            DETERMINED_SOURCE.to_string()
        } else if merged_leaves.get(&path) == Some(&value) {
            if user_leaves.get(&path) == Some(&value) || default_label.is_none() {
                USER_SOURCE.to_string()
            } else {
                default_label.clone().unwrap_or_default()
            }
        } else {
            DETERMINED_SOURCE.to_string()
        };
        prov.insert(path, source);
    }

    // The API server validates the Job's pod template; a pod it would reject never runs.
    validate_final_pod(&pod, &prov, default_path.as_deref(), &mut errs);
    if !errs.is_empty() {
        return Err(errs);
    }

    Ok(TrialPods {
        pod_spec: pod,
        pods,
        slots_per_pod,
        warnings,
        provenance: prov,
        resource_pool: eff.pool.clone(),
        priority_class,
    })
}
