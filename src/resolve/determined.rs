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

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1 as k8s;
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value, json};

use super::provenance;
use super::smp::{self, Schema};
use crate::features::FeatureGates;
use crate::load::objects;
use crate::load::validate::FieldError;

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

const LABEL_PREFIX: &str = "determined.ai/";
const INIT_WORK_DIR: &str = "/run/determined/temp/";
const INIT_TAR_SRC: &str = "/run/determined/temp/tar/src";
const INIT_TAR_DST: &str = "/run/determined/temp/tar/dst";
const INIT_ENTRYPOINT: &str = "/run/determined/temp/k8_init_container_entrypoint.sh";
const DEFAULT_WORKSPACE: &str = "Uncategorized";
const DEFAULT_POOL: &str = "default";
const DEFAULT_NAMESPACE: &str = "default";
/// Placeholder for the master's cluster id (a UUID) when [`ClusterDefaults::cluster_id`] is unset.
const DEFAULT_CLUSTER_ID: &str = "00000000-0000-0000-0000-000000000000";
/// Image defaults: the Helm chart's `defaultImages` in the stored `values.yaml` (the release's
/// `expconf.DefaultCPUImage`/`DefaultCUDAImage` change with every release).
const DEFAULT_CPU_IMAGE: &str = "determinedai/pytorch-ngc:0.36.0";
const DEFAULT_CUDA_IMAGE: &str = "determinedai/pytorch-ngc:0.36.0";
const DEFAULT_ROCM_IMAGE: &str =
    "determinedai/environments:rocm-5.6-pytorch-1.3-tf-2.10-rocm-mpich-0736b6d";

// ------------------------------------------------------------------------------------------
// Inputs
// ------------------------------------------------------------------------------------------

/// `null` reads as the default, as Determined's schema allows `null` for every section.
fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

/// The fields of a Determined experiment config (`master/pkg/schemas/expconf`, snake_case as
/// in its YAML) that shape the trial's pods. Unknown fields are ignored.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ExperimentConfig {
    pub name: Option<String>,
    /// The workspace the experiment belongs to (label `determined.ai/workspace`).
    pub workspace: Option<String>,
    #[serde(deserialize_with = "null_default")]
    pub environment: EnvironmentConfig,
    #[serde(deserialize_with = "null_default")]
    pub resources: ResourcesConfig,
    /// `bind_mounts`: hostPath volumes `det-host-volume-<i>` (`volumes.go:
    /// dockerMountsToHostVolumes`).
    #[serde(deserialize_with = "null_default")]
    pub bind_mounts: Vec<BindMount>,
}

impl ExperimentConfig {
    /// Decodes an experiment config; errors name the field path.
    pub fn from_value(value: &Value) -> Result<Self, Vec<FieldError>> {
        decode(value, "")
    }
}

/// `environment` (`expconf.EnvironmentConfigV0`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct EnvironmentConfig {
    /// A string, or a map `cpu`/`cuda` (`gpu` before 0.17.6)/`rocm`.
    pub image: Option<RuntimeImage>,
    /// A list of `NAME=value`, or a map `cpu`/`cuda` (`gpu`)/`rocm` of such lists.
    pub environment_variables: Option<RuntimeEnv>,
    /// Port name → port; become the `determined-container`'s `containerPort`s.
    #[serde(deserialize_with = "null_default")]
    pub ports: BTreeMap<String, i32>,
    pub force_pull_image: Option<bool>,
    /// A Kubernetes Pod (`apiVersion`, `kind`, `metadata`, `spec`).
    pub pod_spec: Option<Value>,
}

/// `resources` (`expconf.ResourcesConfigV0`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ResourcesConfig {
    /// Default 1 (schema default).
    pub slots_per_trial: Option<i64>,
    /// Empty: the default compute pool (aux pool for 0 slots).
    pub resource_pool: Option<String>,
    /// Makes Determined create a PriorityClass `<id>-priorityclass` with this value.
    pub priority: Option<i32>,
    pub is_single_node: Option<bool>,
}

/// One `bind_mounts` entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct BindMount {
    pub host_path: String,
    pub container_path: String,
    pub read_only: bool,
    /// Docker propagation (`rprivate`, `rslave`, `rshared`).
    pub propagation: Option<String>,
}

/// An image for every device type, or one per device type.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RuntimeImage {
    All(String),
    PerDevice(DeviceImages),
}

/// Images per device type.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct DeviceImages {
    pub cpu: Option<String>,
    #[serde(alias = "gpu")]
    pub cuda: Option<String>,
    pub rocm: Option<String>,
}

impl RuntimeImage {
    fn per_device(&self) -> DeviceImages {
        match self {
            RuntimeImage::All(s) => DeviceImages {
                cpu: Some(s.clone()),
                cuda: Some(s.clone()),
                rocm: Some(s.clone()),
            },
            RuntimeImage::PerDevice(d) => d.clone(),
        }
    }
}

/// Environment variables for every device type, or per device type.
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum RuntimeEnv {
    All(Vec<String>),
    PerDevice(DeviceEnv),
}

/// Environment variables per device type.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct DeviceEnv {
    #[serde(deserialize_with = "null_default")]
    pub cpu: Vec<String>,
    #[serde(alias = "gpu", deserialize_with = "null_default")]
    pub cuda: Vec<String>,
    #[serde(deserialize_with = "null_default")]
    pub rocm: Vec<String>,
}

impl RuntimeEnv {
    fn for_device(&self, device: Device) -> &[String] {
        match (self, device) {
            (RuntimeEnv::All(v), _) => v,
            (RuntimeEnv::PerDevice(d), Device::Cpu) => &d.cpu,
            (RuntimeEnv::PerDevice(d), Device::Cuda) => &d.cuda,
            (RuntimeEnv::PerDevice(d), Device::Rocm) => &d.rocm,
        }
    }
}

/// The subset of the Determined Helm chart's values (`helm/charts/determined/values.yaml`,
/// camelCase) that shapes task pods. Unknown values are ignored.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ClusterDefaults {
    /// Required by the chart (`required "A valid Values.maxSlotsPerPod entry is required!"`).
    pub max_slots_per_pod: Option<i64>,
    /// `gpu` (default; `cuda` in master.yaml), `cpu` or `rocm`.
    pub slot_type: Option<String>,
    #[serde(deserialize_with = "null_default")]
    pub slot_resource_requests: SlotResourceRequests,
    /// `coscheduler` makes pods use the coscheduler plugin (`schedulerName` and pod-group
    /// labels).
    pub default_scheduler: Option<String>,
    #[serde(deserialize_with = "null_default")]
    pub task_container_defaults: TaskContainerDefaults,
    #[serde(deserialize_with = "null_default")]
    pub default_images: HelmDefaultImages,
    /// Entries are passed verbatim (snake_case) into master.yaml `resource_pools`; unset means
    /// the chart's default `[{pool_name: default}]`.
    pub resource_pools: Option<Vec<ResourcePool>>,
    pub default_compute_resource_pool: Option<String>,
    pub default_aux_resource_pool: Option<String>,
    #[serde(deserialize_with = "null_default")]
    pub resource_manager: ResourceManagerValues,
    /// Not a Helm value: the master's cluster id, which names the node label Determined uses to
    /// disable nodes (`determined.ai/cluster-id-<id>`). A placeholder when unset.
    pub cluster_id: Option<String>,
}

impl ClusterDefaults {
    /// Decodes Helm values; errors name the field path.
    pub fn from_value(value: &Value) -> Result<Self, Vec<FieldError>> {
        decode(value, "")
    }
}

/// `slotResourceRequests` (with `slotType: cpu`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SlotResourceRequests {
    /// CPUs per slot.
    pub cpu: Option<f64>,
}

/// `taskContainerDefaults` (rendered into master.yaml `task_container_defaults` by
/// `templates/master-config.yaml`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct TaskContainerDefaults {
    pub cpu_pod_spec: Option<Value>,
    pub gpu_pod_spec: Option<Value>,
    pub cpu_image: Option<String>,
    pub gpu_image: Option<String>,
    /// `host` makes pods use the host network.
    pub network_mode: Option<String>,
    pub force_pull_image: Option<bool>,
}

/// `defaultImages`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct HelmDefaultImages {
    pub cpu_image: Option<String>,
    pub gpu_image: Option<String>,
    pub rocm_image: Option<String>,
}

/// `resourceManager`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct ResourceManagerValues {
    pub default_namespace: Option<String>,
}

/// One `resourcePools` entry (master.yaml `ResourcePoolConfig`, snake_case).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ResourcePool {
    pub pool_name: String,
    pub kubernetes_namespace: Option<String>,
    pub task_container_defaults: Option<PoolTaskContainerDefaults>,
}

/// A pool's `task_container_defaults` (`model.TaskContainerDefaultsConfig`, snake_case).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct PoolTaskContainerDefaults {
    pub cpu_pod_spec: Option<Value>,
    pub gpu_pod_spec: Option<Value>,
    pub image: Option<RuntimeImage>,
    pub network_mode: Option<String>,
    pub force_pull_image: Option<bool>,
    pub kubernetes: Option<KubernetesTaskContainerDefaults>,
}

/// `task_container_defaults.kubernetes`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct KubernetesTaskContainerDefaults {
    pub max_slots_per_pod: Option<i64>,
}

/// How the task's `environment.pod_spec` combines with the default pod spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PodSpecMerge {
    /// Current releases (since PR #5728, 2023-01): strategic merge patch of the task's pod spec over
    /// the default, the task's values winning.
    #[default]
    StrategicMerge,
    /// Older releases: the task's pod spec, when set, replaced the default entirely.
    Replace,
}

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

// ------------------------------------------------------------------------------------------
// Resolution
// ------------------------------------------------------------------------------------------

/// The device type of the trial's slots (`device.Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Device {
    Cpu,
    Cuda,
    Rocm,
}

/// A default pod spec and where it was configured.
struct DefaultSpec<'a> {
    value: &'a Value,
    /// Its path in the Helm values, for errors and warnings.
    path: String,
    /// Its provenance label.
    label: String,
}

/// The task container defaults in effect for the trial's pool.
struct Effective<'a> {
    pool: String,
    namespace: String,
    default_spec: Option<DefaultSpec<'a>>,
    max_slots_per_pod: Option<i64>,
    max_slots_path: String,
    host_network: bool,
    network_mode: String,
    force_pull_image: bool,
    images: DeviceImages,
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

/// The pool, namespace and task container defaults in effect: the cluster's merged with the
/// pool's (`kubernetesrm.ResourceManager.TaskContainerDefaults` →
/// `TaskContainerDefaultsConfig.Merge`: pool-level pod specs, image, network mode replace the
/// cluster's field by field; `kubernetes.max_slots_per_pod` overrides `maxSlotsPerPod`
/// (`kubernetes_resource_manager.go: New`)).
fn effective_defaults<'a>(
    exp: &ExperimentConfig,
    defaults: &'a ClusterDefaults,
    slots: i64,
) -> Result<Effective<'a>, FieldError> {
    let requested = exp.resources.resource_pool.as_deref().unwrap_or("");
    let pool_name = if requested.is_empty() {
        // `ResolveResourcePool`: the default aux pool for zero-slot tasks, else the compute pool.
        let default = if slots == 0 {
            &defaults.default_aux_resource_pool
        } else {
            &defaults.default_compute_resource_pool
        };
        default.clone().unwrap_or_else(|| DEFAULT_POOL.into())
    } else {
        requested.to_string()
    };
    // Unset `resourcePools`: the chart's default, one pool `default` without settings.
    let (index, pool): (usize, Option<&'a ResourcePool>) = match &defaults.resource_pools {
        None if pool_name == DEFAULT_POOL => (0, None),
        None => {
            return Err(field_error(
                "resources.resource_pool",
                format!("resource pool {pool_name:?} does not exist (pools: {DEFAULT_POOL})"),
            ));
        }
        Some(pools) => match pools.iter().position(|p| p.pool_name == pool_name) {
            Some(i) => (i, Some(&pools[i])),
            None => {
                let known: Vec<&str> = pools.iter().map(|p| p.pool_name.as_str()).collect();
                return Err(field_error(
                    "resources.resource_pool",
                    format!(
                        "resource pool {pool_name:?} does not exist (pools: {})",
                        known.join(", ")
                    ),
                ));
            }
        },
    };
    let tcd = &defaults.task_container_defaults;
    let ptcd = pool.and_then(|p| p.task_container_defaults.as_ref());
    let pool_path = format!("resourcePools[{index}].task_container_defaults");
    let gpu = slots > 0;
    let (cluster_spec, cluster_path, cluster_label, pool_spec, pool_key) = if gpu {
        (
            tcd.gpu_pod_spec.as_ref(),
            "taskContainerDefaults.gpuPodSpec",
            "default gpuPodSpec",
            ptcd.and_then(|t| t.gpu_pod_spec.as_ref()),
            "gpu_pod_spec",
        )
    } else {
        (
            tcd.cpu_pod_spec.as_ref(),
            "taskContainerDefaults.cpuPodSpec",
            "default cpuPodSpec",
            ptcd.and_then(|t| t.cpu_pod_spec.as_ref()),
            "cpu_pod_spec",
        )
    };
    let default_spec = match (pool_spec.filter(|v| !v.is_null()), cluster_spec) {
        (Some(v), _) => Some(DefaultSpec {
            value: v,
            path: format!("{pool_path}.{pool_key}"),
            label: format!("default {pool_key} of resource pool {pool_name}"),
        }),
        (None, Some(v)) if !v.is_null() => Some(DefaultSpec {
            value: v,
            path: cluster_path.into(),
            label: cluster_label.into(),
        }),
        _ => None,
    };
    let (max_slots_per_pod, max_slots_path) = match ptcd
        .and_then(|t| t.kubernetes.as_ref())
        .and_then(|k| k.max_slots_per_pod)
    {
        Some(m) => (Some(m), format!("{pool_path}.kubernetes.max_slots_per_pod")),
        None => (defaults.max_slots_per_pod, "maxSlotsPerPod".into()),
    };
    let network_mode = ptcd
        .and_then(|t| t.network_mode.clone())
        .filter(|m| !m.is_empty())
        .or_else(|| tcd.network_mode.clone())
        .unwrap_or_else(|| "bridge".into());
    // Image: the chart writes `task_container_defaults.image` from `cpuImage`+`gpuImage`.
    let mut images = DeviceImages {
        cpu: defaults.default_images.cpu_image.clone(),
        cuda: defaults.default_images.gpu_image.clone(),
        rocm: defaults.default_images.rocm_image.clone(),
    };
    if let (Some(cpu), Some(gpu)) = (&tcd.cpu_image, &tcd.gpu_image) {
        images.cpu = Some(cpu.clone());
        images.cuda = Some(gpu.clone());
    }
    if let Some(pool_images) = ptcd.and_then(|t| t.image.as_ref()).map(|i| i.per_device()) {
        images.cpu = pool_images.cpu.or(images.cpu);
        images.cuda = pool_images.cuda.or(images.cuda);
        images.rocm = pool_images.rocm.or(images.rocm);
    }
    let namespace = pool
        .and_then(|p| p.kubernetes_namespace.clone())
        .filter(|n| !n.is_empty())
        .or_else(|| defaults.resource_manager.default_namespace.clone())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| DEFAULT_NAMESPACE.into());
    Ok(Effective {
        pool: pool_name,
        namespace,
        default_spec,
        max_slots_per_pod,
        max_slots_path,
        host_network: network_mode == "host",
        network_mode,
        force_pull_image: ptcd.and_then(|t| t.force_pull_image).unwrap_or(false)
            || tcd.force_pull_image.unwrap_or(false),
        images,
    })
}

/// `ValidateResources` and `assignResources` (`resource_pool.go`): (pods, slots per pod).
fn split_slots(slots: i64, eff: &Effective, single_node: bool) -> Result<(usize, i64), FieldError> {
    let Some(max) = eff.max_slots_per_pod else {
        return Err(field_error(
            &eff.max_slots_path,
            "A valid Values.maxSlotsPerPod entry is required!".into(),
        ));
    };
    if max < 0 {
        return Err(field_error(
            &eff.max_slots_path,
            "max_slots_per_pod must be >= 0".into(),
        ));
    }
    if slots == 0 {
        return Ok((1, 0));
    }
    if single_node {
        if slots > max {
            return Err(field_error(
                "resources.slots_per_trial",
                format!(
                    "invalid resource request: slots ({slots}) must be < max_slots_per_pod \
                     ({max}) on single pod"
                ),
            ));
        }
        return Ok((1, slots));
    }
    if max == 0 {
        // ValidateResources computes `slots % 0` (a runtime panic); assignResources logs this.
        return Err(field_error(
            "resources.slots_per_trial",
            format!(
                "set max_slots_per_pod > 0 to schedule tasks with slots ({slots} requested, \
                 max_slots_per_pod 0 at {})",
                eff.max_slots_path
            ),
        ));
    }
    if slots <= max {
        return Ok((1, slots));
    }
    if slots % max != 0 {
        return Err(field_error(
            "resources.slots_per_trial",
            format!(
                "invalid resource request: slots ({slots}) must be < or a multiple of \
                 max_slots_per_pod ({max})"
            ),
        ));
    }
    let pods = slots / max;
    if crate::limits::PODS.exceeded_by(pods as u64) {
        return Err(field_error(
            "resources.slots_per_trial",
            crate::limits::PODS.message(format!("a trial of {pods} pods")),
        ));
    }
    Ok((pods as usize, max))
}

/// `configureUniqueName`: `det-<first 8 chars of the cluster id>-<description>`.
fn job_name(defaults: &ClusterDefaults, exp: &ExperimentConfig) -> String {
    let id = defaults.cluster_id.as_deref().unwrap_or(DEFAULT_CLUSTER_ID);
    let prefix: String = id.chars().take(8).collect();
    let description: String = exp
        .name
        .as_deref()
        .unwrap_or("trial")
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let description = description.trim_matches('-');
    let description = if description.is_empty() {
        "trial"
    } else {
        description
    };
    let mut name = format!("det-{prefix}-{description}");
    name.truncate(52);
    name.trim_end_matches('-').to_string()
}

// ------------------------------------------------------------------------------------------
// Go's typed round trip and Determined's validation
// ------------------------------------------------------------------------------------------

/// What `PodSpec.Merge` does to each side before the strategic merge: `json.Unmarshal` into a
/// `k8sV1.Pod` (a type error rejects the config; unknown fields are dropped) and `json.Marshal`
/// back. Go's `omitempty` then drops empty lists, empty maps, empty strings and `false` of
/// plain (non-pointer) fields, so such a value in the task's pod spec cannot clear the default's
/// (`tolerations: []` keeps the default tolerations). `apiVersion`, `kind` and `status` are left
/// out.
///
/// The caller adds the one non-`omitempty` list that matters: a missing `spec.containers`
/// marshals as `null`.
fn go_pod_roundtrip(raw: &Value, path: &str, errs: &mut Vec<FieldError>) -> Option<Value> {
    let Value::Object(map) = raw else {
        errs.push(field_error(
            path,
            format!("expected a Pod object, got {}", type_name(raw)),
        ));
        return None;
    };
    let mut input = map.clone();
    for key in ["apiVersion", "kind", "status"] {
        input.shift_remove(key);
    }
    let pod: k8s::Pod = match serde_path_to_error::deserialize(&Value::Object(input)) {
        Ok(p) => p,
        Err(e) => {
            let inner = e.path().to_string();
            let at = if inner == "." {
                path.to_string()
            } else {
                format!("{path}.{inner}")
            };
            errs.push(field_error(&at, e.into_inner().to_string()));
            return None;
        }
    };
    let mut out = serde_json::to_value(&pod).ok()?;
    if let Value::Object(m) = &mut out {
        m.shift_remove("apiVersion");
        m.shift_remove("kind");
        // k8s-openapi writes a missing `containers` as `[]`; Go's is a nil slice (see above).
        let had_containers = map
            .get("spec")
            .and_then(|s| s.get("containers"))
            .is_some_and(|c| !c.is_null());
        if !had_containers && let Some(Value::Object(spec)) = m.get_mut("spec") {
            spec.shift_remove("containers");
        }
    }
    omit_empty(&mut out);
    Some(out)
}

/// Map-typed fields (`map[string]…` with `omitempty`): empty → omitted.
const GO_MAP_FIELDS: &[&str] = &[
    "labels",
    "annotations",
    "nodeSelector",
    "limits",
    "requests",
    "overhead",
    "matchLabels",
];
/// Plain `bool` fields with `omitempty`: `false` → omitted.
const GO_PLAIN_BOOLS: &[&str] = &[
    "hostNetwork",
    "hostPID",
    "hostIPC",
    "stdin",
    "stdinOnce",
    "tty",
];
/// Lists without `omitempty`: kept even when empty.
const GO_REQUIRED_LISTS: &[&str] = &["containers", "nodeSelectorTerms"];
/// Strings without `omitempty`: kept even when empty.
const GO_REQUIRED_STRINGS: &[&str] = &[
    "name",
    "mountPath",
    "devicePath",
    "key",
    "operator",
    "topologyKey",
    "whenUnsatisfiable",
    "ip",
    "path",
    "claimName",
    "fieldPath",
];

fn omit_empty(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for child in map.values_mut() {
                omit_empty(child);
            }
            map.retain(|key, v| {
                let k = key.as_str();
                !match v {
                    Value::Null => true,
                    Value::Array(a) => a.is_empty() && !GO_REQUIRED_LISTS.contains(&k),
                    Value::Object(o) => o.is_empty() && GO_MAP_FIELDS.contains(&k),
                    Value::String(s) => s.is_empty() && !GO_REQUIRED_STRINGS.contains(&k),
                    Value::Bool(false) => GO_PLAIN_BOOLS.contains(&k),
                    _ => false,
                }
            });
        }
        Value::Array(items) => items.iter_mut().for_each(omit_empty),
        _ => {}
    }
}

/// Container keys the expconf schema rejects in `environment.pod_spec.spec.containers[*]`
/// (`schemas/expconf/v0/environment.json`, `disallowProperties`, the version without `env`
/// and `env_from`). The snake_case names never match a Kubernetes field, so in effect only
/// `image`, `command`, `args`, `ports` and `lifecycle` are rejected — in every container, not
/// only `determined-container`.
const EXPCONF_DISALLOWED_CONTAINER_KEYS: &[(&str, &str)] = &[
    (
        "image",
        "container Image is not configurable, set it in the experiment config",
    ),
    ("command", "container Command is not configurable"),
    ("args", "container Args are not configurable"),
    ("working_dir", "container WorkingDir is not configurable"),
    ("ports", "container Ports are not configurable"),
    (
        "liveness_probe",
        "container LivenessProbe is not configurable",
    ),
    (
        "readiness_probe",
        "container ReadinessProbe is not configurable",
    ),
    (
        "startup_probe",
        "container StartupProbe is not configurable",
    ),
    ("lifecycle", "container Lifecycle is not configurable"),
    (
        "termination_message_path",
        "container TerminationMessagePath is not configurable",
    ),
    (
        "termination_message_policy",
        "container TerminationMessagePolicy is not configurable",
    ),
    (
        "image_pull_policy",
        "container ImagePullPolicy is not configurable, set it in the experiment config",
    ),
    (
        "security_context",
        "container SecurityContext is not configurable, set it in the experiment config",
    ),
];

/// The expconf schema's checks of `environment.pod_spec` (sanity validation at submission).
fn check_expconf_schema(raw: &Value, errs: &mut Vec<FieldError>) {
    for (key, message) in [
        ("name", "pod Name is not a configurable option"),
        ("name_space", "pod NameSpace is not a configurable option"),
    ] {
        if raw.get(key).is_some() {
            errs.push(field_error(&format!("{USER_SOURCE}.{key}"), message.into()));
        }
    }
    let containers = raw
        .get("spec")
        .and_then(|s| s.get("containers"))
        .and_then(Value::as_array);
    for (i, c) in containers.into_iter().flatten().enumerate() {
        for (key, message) in EXPCONF_DISALLOWED_CONTAINER_KEYS {
            if c.get(*key).is_some() {
                errs.push(field_error(
                    &format!("{USER_SOURCE}.spec.containers[{i}].{key}"),
                    (*message).into(),
                ));
            }
        }
    }
}

/// `master/pkg/model: validatePodSpec`, run on the task container defaults when the master
/// starts. `terminationMessagePath`, `terminationMessagePolicy` and `imagePullPolicy` are
/// checked with `check.Match(value, "")`, a regular expression that matches everything, so
/// they are never rejected (they are ignored later, see [`IGNORED_REASONS`]).
fn validate_default_pod_spec(pod: &Value, path: &str, errs: &mut Vec<FieldError>) {
    let meta = pod.get("metadata");
    if meta.and_then(|m| m.get("name")).is_some() {
        errs.push(field_error(
            &format!("{path}.metadata.name"),
            "pod Name is not a configurable option".into(),
        ));
    }
    if meta.and_then(|m| m.get("namespace")).is_some() {
        errs.push(field_error(
            &format!("{path}.metadata.namespace"),
            "pod Namespace is not a configurable option".into(),
        ));
    }
    if pod.pointer("/spec/hostNetwork") == Some(&Value::Bool(true)) {
        errs.push(field_error(
            &format!("{path}.spec.hostNetwork"),
            "host networking must be configured via master.yaml".into(),
        ));
    }
    let containers = pod.pointer("/spec/containers").and_then(Value::as_array);
    for (i, c) in containers.into_iter().flatten().enumerate() {
        if c.get("name").and_then(Value::as_str) != Some(DETERMINED_CONTAINER) {
            continue;
        }
        for (key, message) in [
            (
                "image",
                "container Image is not configurable, set it in the experiment config",
            ),
            ("command", "container Command is not configurable"),
            ("args", "container Args are not configurable"),
            ("workingDir", "container WorkingDir is not configurable"),
            ("ports", "container Ports are not configurable"),
            (
                "livenessProbe",
                "container LivenessProbe is not configurable",
            ),
            (
                "readinessProbe",
                "container ReadinessProbe is not configurable",
            ),
            ("startupProbe", "container StartupProbe is not configurable"),
            ("lifecycle", "container Lifecycle is not configurable"),
        ] {
            if c.get(key).is_some() {
                errs.push(field_error(
                    &format!("{path}.spec.containers[{i}].{key}"),
                    message.into(),
                ));
            }
        }
    }
}

/// Validates the trial's pod as the API server validates the Job's pod template; an error names
/// the pod field and who set it.
fn validate_final_pod(
    pod: &Value,
    prov: &BTreeMap<String, String>,
    default_path: Option<&str>,
    errs: &mut Vec<FieldError>,
) {
    use serde::Deserialize as _;
    let typed = match k8s::Pod::deserialize(pod) {
        Ok(p) => p,
        Err(e) => {
            errs.push(field_error(
                USER_SOURCE,
                format!("the trial pod does not decode: {e}"),
            ));
            return;
        }
    };
    let mut pod_errs = Vec::new();
    objects::pod_from_k8s(&typed, "", &FeatureGates::default(), &mut pod_errs);
    for e in pod_errs {
        let keyed = super::keyed_path(pod, &e.path);
        let mut sources: Vec<&str> = prov
            .iter()
            .filter(|(p, _)| p.starts_with(&keyed) || keyed.starts_with(p.as_str()))
            .map(|(_, s)| s.as_str())
            .collect();
        sources.sort_unstable();
        sources.dedup();
        let path = if sources.contains(&USER_SOURCE) || default_path.is_none() {
            USER_SOURCE
        } else if sources.iter().any(|s| s.starts_with("default")) {
            default_path.unwrap_or(USER_SOURCE)
        } else {
            USER_SOURCE
        };
        errs.push(field_error(
            path,
            format!(
                "the trial pod is invalid: {}: {} (set by {})",
                e.path,
                e.message,
                if sources.is_empty() {
                    DETERMINED_SOURCE.to_string()
                } else {
                    sources.join(", ")
                }
            ),
        ));
    }
}

// ------------------------------------------------------------------------------------------
// Determined's construction
// ------------------------------------------------------------------------------------------

/// Where a field of the merged pod came from, for warnings.
struct Origins<'a> {
    user: Option<&'a Value>,
    default: Option<&'a Value>,
    default_path: String,
}

impl Origins<'_> {
    /// Where the pod field at JSON pointer `pointer` was configured: the task's pod spec if it
    /// sets the field, else the default's path in the Helm values.
    fn base(&self, pointer: &str) -> &str {
        if self.user.and_then(|u| u.pointer(pointer)).is_some() || self.default.is_none() {
            USER_SOURCE
        } else {
            &self.default_path
        }
    }

    /// The config path of the pod field at JSON pointer `pointer` (no escaped keys).
    fn of(&self, pointer: &str) -> String {
        let field = pointer.trim_start_matches('/').replace('/', ".");
        format!("{}.{field}", self.base(pointer))
    }

    /// The config path of field `key` of the `determined-container`.
    fn of_container_field(&self, key: &str) -> String {
        let has = |pod: Option<&Value>| {
            pod.and_then(|p| find_container(p, DETERMINED_CONTAINER))
                .and_then(|c| c.get(key))
                .is_some()
        };
        let base = if has(self.user) || self.default.is_none() {
            USER_SOURCE
        } else {
            self.default_path.as_str()
        };
        format!("{base}.spec.containers[{DETERMINED_CONTAINER}].{key}")
    }
}

/// Why Determined ignores a field of the pod spec's `determined-container`.
const IGNORED_REASONS: &[(&str, &str)] = &[
    ("image", "Determined sets the image from environment.image"),
    ("command", "Determined runs its own entrypoint"),
    ("args", "Determined runs its own entrypoint"),
    (
        "workingDir",
        "Determined sets the working directory to /run/determined/workdir",
    ),
    ("ports", "Determined sets the ports from environment.ports"),
    (
        "imagePullPolicy",
        "Determined sets it from environment.force_pull_image",
    ),
];

/// Everything Determined adds to a pod, for one trial.
struct Builder<'a> {
    exp: &'a ExperimentConfig,
    defaults: &'a ClusterDefaults,
    eff: &'a Effective<'a>,
    origins: &'a Origins<'a>,
    /// The resource manager's slot type.
    slot_type: Device,
    /// The device type of this pod's image and environment (CPU when it has no slots).
    device: Device,
    slots: i64,
    pods: usize,
    slots_per_pod: i64,
    job_name: &'a str,
}

impl Builder<'_> {
    /// `configureJobSpec` over the merged pod spec. Returns the pod and the PriorityClass
    /// Determined creates, if any.
    fn build(&self, merged: Value, w: &mut Vec<String>) -> (Value, Option<(String, i32)>) {
        let mut pod = match merged {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        pod.shift_remove("apiVersion");
        pod.shift_remove("kind");
        pod.shift_remove("status");
        let mut meta = take_object(&mut pod, "metadata");
        let mut spec = take_object(&mut pod, "spec");

        // Name, namespace.
        for (key, value, what) in [
            (
                "name",
                self.job_name.to_string(),
                "Determined names the trial's Job",
            ),
            (
                "namespace",
                self.eff.namespace.clone(),
                "Determined launches the trial in the resource pool's namespace",
            ),
        ] {
            if let Some(old) = meta.get(key).and_then(Value::as_str)
                && !old.is_empty()
                && old != value
            {
                w.push(format!(
                    "{} is overwritten: {what} ({value})",
                    self.origins.of(&format!("/metadata/{key}"))
                ));
            }
            meta.insert(key.into(), Value::String(value));
        }

        // Labels.
        let mut labels = take_object(&mut meta, "labels");
        let workspace = self.exp.workspace.as_deref().unwrap_or(DEFAULT_WORKSPACE);
        for (key, value) in [
            ("workspace", pod_label_value(workspace)),
            ("resource_pool", pod_label_value(&self.eff.pool)),
            ("task_type", "TRIAL".to_string()),
        ] {
            let key = format!("{LABEL_PREFIX}{key}");
            if let Some(old) = labels.get(&key).and_then(Value::as_str)
                && old != value
            {
                let pointer = format!(
                    "/metadata/labels/{}",
                    key.replace('~', "~0").replace('/', "~1")
                );
                w.push(format!(
                    "{}.metadata.labels[{key}] is overwritten: Determined sets it to {value:?}",
                    self.origins.base(&pointer)
                ));
            }
            labels.insert(key, Value::String(value));
        }

        // modifyPodSpec: scheduler and priority class.
        if self.defaults.default_scheduler.as_deref().map(str::trim) == Some(COSCHEDULER) {
            if str_field(&spec, "schedulerName").is_empty() {
                spec.insert("schedulerName".into(), COSCHEDULER.into());
            }
            if str_field(&spec, "schedulerName") == COSCHEDULER {
                let min_available = if self.slot_type == Device::Cuda && self.slots_per_pod > 0 {
                    (self.slots + self.slots_per_pod - 1) / self.slots_per_pod
                } else {
                    0
                };
                labels
                    .entry("pod-group.scheduling.sigs.k8s.io/name")
                    .or_insert_with(|| self.job_name.into());
                labels
                    .entry("pod-group.scheduling.sigs.k8s.io/min-available")
                    .or_insert_with(|| min_available.to_string().into());
            }
        }
        let mut priority_class = None;
        if str_field(&spec, "priorityClassName").is_empty() {
            let name = match self.exp.resources.priority {
                Some(p) => {
                    let name = format!("{}-priorityclass", self.job_name);
                    priority_class = Some((name.clone(), p));
                    name
                }
                None => MEDIUM_PRIORITY_CLASS.to_string(),
            };
            spec.insert("priorityClassName".into(), name.into());
        }
        meta.insert("labels".into(), Value::Object(labels));

        // addNodeDisabledAffinityToPodSpec.
        let cluster_id = self
            .defaults
            .cluster_id
            .as_deref()
            .unwrap_or(DEFAULT_CLUSTER_ID);
        add_node_selector_requirement(
            &mut spec,
            json!({"key": format!("determined.ai/cluster-id-{cluster_id}"), "operator": "DoesNotExist"}),
        );

        // Containers: the others kept, Determined's appended.
        let containers = match spec.shift_remove("containers") {
            Some(Value::Array(c)) => c,
            _ => Vec::new(),
        };
        let (det_specs, mut containers): (Vec<Value>, Vec<Value>) = containers
            .into_iter()
            .partition(|c| c.get("name").and_then(Value::as_str) == Some(DETERMINED_CONTAINER));
        let (det_mounts, volumes) = self.volumes();
        containers.push(self.determined_container(&det_specs, det_mounts, w));
        spec.insert("containers".into(), Value::Array(containers));

        let mut all_volumes = match spec.shift_remove("volumes") {
            Some(Value::Array(v)) => v,
            _ => Vec::new(),
        };
        all_volumes.extend(volumes);
        spec.insert("volumes".into(), Value::Array(all_volumes));

        // hostNetwork from task_container_defaults.network_mode.
        if spec.get("hostNetwork") == Some(&Value::Bool(true)) && !self.eff.host_network {
            w.push(format!(
                "{} is overwritten: Determined sets hostNetwork from \
                 task_container_defaults.network_mode ({})",
                self.origins.of("/spec/hostNetwork"),
                self.eff.network_mode
            ));
        }
        if self.eff.host_network {
            spec.insert("hostNetwork".into(), true.into());
        } else {
            spec.shift_remove("hostNetwork");
        }

        let mut init = match spec.shift_remove("initContainers") {
            Some(Value::Array(v)) => v,
            _ => Vec::new(),
        };
        init.push(self.init_container());
        spec.insert("initContainers".into(), Value::Array(init));

        if let Some(old) = spec.get("restartPolicy").and_then(Value::as_str)
            && old != "Never"
        {
            w.push(format!(
                "{} is overwritten: Determined always sets Never",
                self.origins.of("/spec/restartPolicy")
            ));
        }
        spec.insert("restartPolicy".into(), "Never".into());

        let mut out = Map::new();
        out.insert("apiVersion".into(), "v1".into());
        out.insert("kind".into(), "Pod".into());
        out.insert("metadata".into(), Value::Object(meta));
        out.insert("spec".into(), Value::Object(spec));
        (Value::Object(out), priority_class)
    }

    /// The image for this pod's device type.
    fn image(&self) -> String {
        let exp_images = self
            .exp
            .environment
            .image
            .as_ref()
            .map(RuntimeImage::per_device)
            .unwrap_or_default();
        let pick = |exp: &Option<String>, tcd: &Option<String>, fallback: &str| {
            exp.clone()
                .or_else(|| tcd.clone())
                .unwrap_or_else(|| fallback.to_string())
        };
        let images = &self.eff.images;
        match self.device {
            Device::Cpu => pick(&exp_images.cpu, &images.cpu, DEFAULT_CPU_IMAGE),
            Device::Cuda => pick(&exp_images.cuda, &images.cuda, DEFAULT_CUDA_IMAGE),
            Device::Rocm => pick(&exp_images.rocm, &images.rocm, DEFAULT_ROCM_IMAGE),
        }
    }

    fn pull_policy(&self) -> &'static str {
        let force = self
            .exp
            .environment
            .force_pull_image
            .unwrap_or(self.eff.force_pull_image);
        if force { "Always" } else { "IfNotPresent" }
    }

    /// `configureResourcesRequirements`: the slots of one pod as limits and requests.
    fn slot_resources(&self) -> Map<String, Value> {
        let mut list = Map::new();
        match self.slot_type {
            Device::Cpu => {
                let per_slot = self.defaults.slot_resource_requests.cpu.unwrap_or(0.0);
                // int64(cpu * float32(slots) * 1000) as a DecimalSI milli-quantity.
                let milli = (per_slot as f32 * self.slots_per_pod as f32 * 1000.0) as i64;
                let q = if milli % 1000 == 0 {
                    (milli / 1000).to_string()
                } else {
                    format!("{milli}m")
                };
                list.insert("cpu".into(), q.into());
            }
            Device::Cuda if self.slots_per_pod > 0 => {
                list.insert(
                    "nvidia.com/gpu".into(),
                    self.slots_per_pod.to_string().into(),
                );
            }
            Device::Rocm if self.slots_per_pod > 0 => {
                list.insert("amd.com/gpu".into(), self.slots_per_pod.to_string().into());
            }
            _ => {}
        }
        list
    }

    /// `configureEnvVars`: Determined's variables (a Go map, so in no particular order upstream;
    /// sorted here), then `DET_AGENT_ID` and `DET_KUBERNETES_POD_IP` from the downward API.
    fn env(&self) -> Vec<Value> {
        let mut vars: BTreeMap<String, String> = BTreeMap::new();
        if let Some(env) = &self.exp.environment.environment_variables {
            for item in env.for_device(self.device) {
                let (k, v) = item.split_once('=').unwrap_or((item, ""));
                vars.insert(k.to_string(), v.to_string());
            }
        }
        let slot_ids: Vec<String> = (0..self.slots_per_pod).map(|i| i.to_string()).collect();
        vars.insert("DET_SLOT_IDS".into(), format!("[{}]", slot_ids.join(",")));
        vars.insert(
            "DET_CLUSTER_ID".into(),
            self.defaults
                .cluster_id
                .clone()
                .unwrap_or_else(|| DEFAULT_CLUSTER_ID.into()),
        );
        if self.device == Device::Cpu {
            vars.insert("NVIDIA_VISIBLE_DEVICES".into(), "void".into());
        }
        vars.insert(
            "DET_KUBERNETES_JOB_PARALLELISM".into(),
            self.pods.to_string(),
        );
        let mut env: Vec<Value> = vars
            .into_iter()
            .map(|(name, value)| {
                if value.is_empty() {
                    json!({"name": name})
                } else {
                    json!({"name": name, "value": value})
                }
            })
            .collect();
        env.push(json!({"name": "DET_AGENT_ID", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}));
        env.push(json!({"name": "DET_KUBERNETES_POD_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}));
        env
    }

    /// `configureVolumes` (`volumes.go`): the `determined-container`'s mounts and the volumes:
    /// bind mounts as `det-host-volume-<i>`, `det-shm-volume` at `/dev/shm`, and the run-archive
    /// volumes of the init container.
    fn volumes(&self) -> (Vec<Value>, Vec<Value>) {
        let mut mounts = Vec::new();
        let mut volumes = Vec::new();
        for (i, b) in self.exp.bind_mounts.iter().enumerate() {
            let name = format!("det-host-volume-{i}");
            let mut mount = json!({"name": name, "mountPath": b.container_path});
            if b.read_only {
                mount["readOnly"] = true.into();
            }
            let propagation = match b.propagation.as_deref() {
                Some("rprivate") => Some("None"),
                Some("rslave") => Some("HostToContainer"),
                Some("rshared") => Some("Bidirectional"),
                _ => None,
            };
            if let Some(p) = propagation {
                mount["mountPropagation"] = p.into();
            }
            mounts.push(mount);
            volumes.push(json!({"name": name, "hostPath": {"path": b.host_path}}));
        }
        mounts.push(json!({"name": "det-shm-volume", "mountPath": "/dev/shm"}));
        volumes.push(json!({"name": "det-shm-volume", "emptyDir": {"medium": "Memory"}}));
        let config_map = self.job_name;
        volumes.push(json!({"name": "archive-volume", "configMap": {"name": config_map}}));
        volumes.push(json!({
            "name": "entrypoint-volume",
            "configMap": {
                "name": config_map,
                "items": [{"key": "k8_init_container_entrypoint.sh", "path": "k8_init_container_entrypoint.sh"}],
                "defaultMode": 0o555,
            }
        }));
        volumes.push(json!({"name": "additional-files-volume", "emptyDir": {}}));
        (mounts, volumes)
    }

    /// `configureInitContainer` (without its arguments, which count the run archives). No
    /// resources: it requests nothing.
    fn init_container(&self) -> Value {
        json!({
            "name": DETERMINED_INIT_CONTAINER,
            "image": self.image(),
            "imagePullPolicy": self.pull_policy(),
            "command": [INIT_ENTRYPOINT],
            "workingDir": INIT_WORK_DIR,
            "volumeMounts": [
                {"name": "archive-volume", "mountPath": INIT_TAR_SRC, "readOnly": true},
                {"name": "entrypoint-volume", "mountPath": INIT_WORK_DIR, "readOnly": true},
                {"name": "additional-files-volume", "mountPath": INIT_TAR_DST},
            ],
        })
    }

    /// Determined's `determined-container`, with what it keeps of the pod spec's
    /// `determined-container`(s).
    fn determined_container(
        &self,
        specs: &[Value],
        det_mounts: Vec<Value>,
        w: &mut Vec<String>,
    ) -> Value {
        let slot_list = self.slot_resources();
        let mut limits = slot_list.clone();
        let mut requests = slot_list;
        let mut env = self.env();
        let mut env_from = Vec::new();
        let mut mounts = det_mounts;
        let mut devices = Vec::new();
        let mut security_context = None;
        for spec in specs {
            let Value::Object(c) = spec else { continue };
            for (key, value) in c {
                match (key.as_str(), value) {
                    ("name", _) => {}
                    ("env", Value::Array(v)) => env.extend(v.iter().cloned()),
                    ("envFrom", Value::Array(v)) => env_from.extend(v.iter().cloned()),
                    ("volumeMounts", Value::Array(v)) => mounts.extend(v.iter().cloned()),
                    ("volumeDevices", Value::Array(v)) => devices.extend(v.iter().cloned()),
                    ("securityContext", Value::Object(sc)) => {
                        if security_context.is_none() {
                            let mut sc = sc.clone();
                            for k in ["runAsUser", "runAsGroup"] {
                                if sc.shift_remove(k).is_some() {
                                    w.push(format!(
                                        "{}.{k} is ignored: Determined sets runAsUser and \
                                         runAsGroup from the agent user group",
                                        self.origins.of_container_field("securityContext")
                                    ));
                                }
                            }
                            security_context = Some(Value::Object(sc));
                        }
                    }
                    ("resources", Value::Object(r)) => {
                        for (rkey, rvalue) in r {
                            let target = match rkey.as_str() {
                                "limits" => &mut limits,
                                "requests" => &mut requests,
                                _ => {
                                    w.push(format!(
                                        "{}.{rkey} is ignored: Determined keeps only resources \
                                         limits and requests",
                                        self.origins.of_container_field("resources")
                                    ));
                                    continue;
                                }
                            };
                            for (name, q) in rvalue.as_object().into_iter().flatten() {
                                if let Some(set) = target.get(name) {
                                    if set != q {
                                        w.push(format!(
                                            "{}.{rkey}[{name}] is ignored: Determined sets \
                                             {name}: {} from the trial's slots",
                                            self.origins.of_container_field("resources"),
                                            set.as_str().unwrap_or_default()
                                        ));
                                    }
                                } else {
                                    target.insert(name.clone(), q.clone());
                                }
                            }
                        }
                    }
                    (other, _) => {
                        let reason = IGNORED_REASONS
                            .iter()
                            .find(|(k, _)| *k == other)
                            .map(|(_, r)| *r)
                            .unwrap_or(
                                "Determined builds its own determined-container and keeps only \
                                 env, envFrom, resources, volumeMounts, volumeDevices and \
                                 securityContext",
                            );
                        w.push(format!(
                            "{} is ignored: {reason}",
                            self.origins.of_container_field(other)
                        ));
                    }
                }
            }
        }
        let mut c = Map::new();
        c.insert("name".into(), DETERMINED_CONTAINER.into());
        c.insert("image".into(), self.image().into());
        c.insert("imagePullPolicy".into(), self.pull_policy().into());
        c.insert("env".into(), Value::Array(env));
        if !env_from.is_empty() {
            c.insert("envFrom".into(), Value::Array(env_from));
        }
        let mut resources = Map::new();
        if !limits.is_empty() {
            resources.insert("limits".into(), Value::Object(limits));
        }
        if !requests.is_empty() {
            resources.insert("requests".into(), Value::Object(requests));
        }
        if !resources.is_empty() {
            c.insert("resources".into(), Value::Object(resources));
        }
        c.insert("volumeMounts".into(), Value::Array(mounts));
        if !devices.is_empty() {
            c.insert("volumeDevices".into(), Value::Array(devices));
        }
        c.insert("workingDir".into(), WORK_DIR.into());
        // environment.ports: a Go map, in no particular order upstream; by name here.
        let ports: Vec<Value> = self
            .exp
            .environment
            .ports
            .values()
            .map(|p| json!({"containerPort": p}))
            .collect();
        if !ports.is_empty() {
            c.insert("ports".into(), Value::Array(ports));
        }
        if let Some(sc) = security_context {
            c.insert("securityContext".into(), sc);
        }
        Value::Object(c)
    }
}

/// `addNodeSelectorRequirement(pod, req, addOnLabel)`: appends `req` to the `matchExpressions`
/// of the first required node-selector term (creating the affinity, the selector and the term
/// as needed), unless an equal requirement is there. Other terms, ORed with the first, do not
/// get it.
fn add_node_selector_requirement(spec: &mut Map<String, Value>, req: Value) {
    let affinity = object_entry(spec, "affinity");
    let node_affinity = object_entry(affinity, "nodeAffinity");
    let required = object_entry(
        node_affinity,
        "requiredDuringSchedulingIgnoredDuringExecution",
    );
    let terms = required
        .entry("nodeSelectorTerms")
        .or_insert_with(|| json!([]));
    if !terms.is_array() {
        *terms = json!([]);
    }
    let terms = terms.as_array_mut().expect("an array");
    if terms.is_empty() {
        terms.push(json!({}));
    }
    let first = terms[0].as_object_mut().expect("a node selector term");
    let exprs = first.entry("matchExpressions").or_insert_with(|| json!([]));
    if let Value::Array(items) = exprs
        && !items.contains(&req)
    {
        items.push(req);
    }
}

// ------------------------------------------------------------------------------------------
// Helpers
// ------------------------------------------------------------------------------------------

fn decode<T: serde::de::DeserializeOwned>(value: &Value, path: &str) -> Result<T, Vec<FieldError>> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let inner = e.path().to_string();
        let at = match (path.is_empty(), inner == ".") {
            (true, true) => String::new(),
            (true, false) => inner,
            (false, true) => path.to_string(),
            (false, false) => format!("{path}.{inner}"),
        };
        vec![FieldError {
            path: at,
            message: e.into_inner().to_string(),
        }]
    })
}

fn field_error(path: &str, message: String) -> FieldError {
    FieldError {
        path: path.to_string(),
        message,
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

fn take_object(map: &mut Map<String, Value>, key: &str) -> Map<String, Value> {
    match map.shift_remove(key) {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

fn object_entry<'a>(map: &'a mut Map<String, Value>, key: &str) -> &'a mut Map<String, Value> {
    let v = map.entry(key).or_insert_with(|| json!({}));
    if !v.is_object() {
        *v = json!({});
    }
    v.as_object_mut().expect("an object")
}

fn str_field<'a>(map: &'a Map<String, Value>, key: &str) -> &'a str {
    map.get(key).and_then(Value::as_str).unwrap_or("")
}

fn find_container<'a>(pod: &'a Value, name: &str) -> Option<&'a Value> {
    pod.pointer("/spec/containers")?
        .as_array()?
        .iter()
        .find(|c| c.get("name").and_then(Value::as_str) == Some(name))
}

fn container_names(pod: &Value) -> Vec<String> {
    pod.pointer("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.get("name").and_then(Value::as_str).map(str::to_string))
        .collect()
}

/// The fields of `default` (metadata and spec, one level down) that `user` does not set: what a
/// replacing pod spec loses.
fn replaced_fields(default: &Value, user: &Value) -> Vec<String> {
    let mut lost = BTreeSet::new();
    for section in ["metadata", "spec"] {
        let Some(Value::Object(d)) = default.get(section) else {
            continue;
        };
        for key in d.keys() {
            if user.get(section).and_then(|u| u.get(key)).is_none() {
                lost.insert(format!("{section}.{key}"));
            }
        }
    }
    lost.into_iter().collect()
}

fn describe_list(items: &[String], one: &str, many: &str) -> String {
    format!(
        "{} {}",
        items.join(", "),
        if items.len() == 1 { one } else { many }
    )
}

/// `spec.go: validatePodLabelValue`: a value that is not a valid label value has disallowed
/// characters replaced by `_`, leading non-alphanumerics stripped, is cut to 63 characters and
/// has trailing non-alphanumerics stripped; `invalid_value` if still invalid.
fn pod_label_value(value: &str) -> String {
    if is_label_value(value) {
        return value.to_string();
    }
    let replaced: String = value
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut fixed = replaced
        .trim_start_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_string();
    fixed.truncate(63);
    let fixed = fixed.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
    if is_label_value(fixed) {
        fixed.to_string()
    } else {
        "invalid_value".into()
    }
}

fn is_label_value(v: &str) -> bool {
    v.is_empty()
        || (v.len() <= 63
            && v.starts_with(|c: char| c.is_ascii_alphanumeric())
            && v.ends_with(|c: char| c.is_ascii_alphanumeric())
            && v.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(name: &str) -> Value {
        let path = format!(
            "{}/tests/data/determined/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        serde_saphyr::from_str::<Value>(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    fn values(name: &str) -> ClusterDefaults {
        ClusterDefaults::from_value(&data(name)).expect("valid Helm values")
    }

    fn experiment(name: &str) -> ExperimentConfig {
        ExperimentConfig::from_value(&data(name)).expect("valid experiment config")
    }

    fn with_slots(mut exp: ExperimentConfig, slots: i64) -> ExperimentConfig {
        exp.resources.slots_per_trial = Some(slots);
        exp
    }

    fn resolve(exp: &ExperimentConfig, defaults: &ClusterDefaults) -> TrialPods {
        trial_pods(exp, defaults, PodSpecMerge::StrategicMerge)
            .unwrap_or_else(|e| panic!("unexpected errors: {e:#?}"))
    }

    fn container<'a>(pod: &'a Value, name: &str) -> &'a Value {
        find_container(pod, name).unwrap_or_else(|| panic!("no container {name}: {pod:#}"))
    }

    fn names(list: &Value) -> Vec<&str> {
        list.as_array()
            .into_iter()
            .flatten()
            .filter_map(|i| i.get("name").and_then(Value::as_str))
            .collect()
    }

    fn has_warning(t: &TrialPods, needle: &str) -> bool {
        t.warnings.iter().any(|w| w.contains(needle))
    }

    // --- seed 003: the "Specifying Custom Pod Specs" guide -----------------------------------

    #[test]
    fn seed003_default_gpu_pod_spec() {
        let t = resolve(
            &experiment("gpu-trial.yaml"),
            &values("seed003-values.yaml"),
        );
        let pod = &t.pod_spec;
        assert_eq!((t.pods, t.slots_per_pod), (1, 1));
        assert_eq!(pod["metadata"]["labels"]["customLabel"], "gpu-label");
        assert_eq!(
            pod["metadata"]["labels"]["determined.ai/task_type"],
            "TRIAL"
        );
        assert_eq!(
            pod["metadata"]["labels"]["determined.ai/resource_pool"],
            "default"
        );
        assert_eq!(names(&pod["spec"]["containers"]), [DETERMINED_CONTAINER]);
        assert_eq!(
            names(&pod["spec"]["initContainers"]),
            [DETERMINED_INIT_CONTAINER]
        );
        let det = container(pod, DETERMINED_CONTAINER);
        // The default's mount, after Determined's own.
        assert_eq!(
            names(&det["volumeMounts"]),
            ["det-shm-volume", "example-volume"]
        );
        assert_eq!(det["volumeMounts"][1]["mountPath"], "/example-data");
        assert_eq!(det["resources"]["limits"]["nvidia.com/gpu"], "1");
        assert_eq!(det["resources"]["requests"]["nvidia.com/gpu"], "1");
        assert_eq!(det["workingDir"], WORK_DIR);
        assert_eq!(
            names(&pod["spec"]["volumes"]),
            [
                "example-volume",
                "det-shm-volume",
                "archive-volume",
                "entrypoint-volume",
                "additional-files-volume"
            ]
        );
        assert_eq!(pod["spec"]["restartPolicy"], "Never");
        assert_eq!(pod["spec"]["priorityClassName"], MEDIUM_PRIORITY_CLASS);
        assert!(pod["spec"].get("schedulerName").is_none());
        assert_eq!(
            t.provenance["metadata.labels.customLabel"],
            "default gpuPodSpec"
        );
        assert_eq!(
            t.provenance["spec.volumes[name=example-volume].hostPath.path"],
            "default gpuPodSpec"
        );
        assert_eq!(
            t.provenance["spec.containers[name=determined-container].volumeMounts[mountPath=/example-data].name"],
            "default gpuPodSpec"
        );
        assert_eq!(
            t.provenance["spec.containers[name=determined-container].image"],
            DETERMINED_SOURCE
        );
        assert!(t.warnings.is_empty(), "{:#?}", t.warnings);
    }

    #[test]
    fn seed003_default_cpu_pod_spec_for_zero_slots() {
        let exp = with_slots(experiment("gpu-trial.yaml"), 0);
        let t = resolve(&exp, &values("seed003-values.yaml"));
        let pod = &t.pod_spec;
        assert_eq!((t.pods, t.slots_per_pod), (1, 0));
        assert_eq!(pod["metadata"]["labels"]["customLabel"], "cpu-label");
        // The sidecar is kept, before Determined's container.
        assert_eq!(
            names(&pod["spec"]["containers"]),
            ["sidecar-container", DETERMINED_CONTAINER]
        );
        assert_eq!(
            container(pod, "sidecar-container")["image"],
            "alpine:latest"
        );
        let det = container(pod, DETERMINED_CONTAINER);
        assert!(det.get("resources").is_none(), "{det:#}");
        assert_eq!(det["image"], "my/cpu:1");
        assert!(
            det["env"]
                .as_array()
                .unwrap()
                .contains(&json!({"name": "NVIDIA_VISIBLE_DEVICES", "value": "void"}))
        );
        assert_eq!(
            t.provenance["spec.containers[name=sidecar-container].image"],
            "default cpuPodSpec"
        );
    }

    #[test]
    fn seed003_task_pod_spec_as_written_is_rejected() {
        // The guide's example writes `imagePullSecrets: {name: regcred}`, a map where the Pod
        // has a list: Determined's decode into k8sV1.Pod fails the same way.
        let errs = trial_pods(
            &experiment("seed003-task.yaml"),
            &values("seed003-values.yaml"),
            PodSpecMerge::StrategicMerge,
        )
        .unwrap_err();
        assert_eq!(errs.len(), 1, "{errs:#?}");
        assert_eq!(errs[0].path, "environment.pod_spec.spec.imagePullSecrets");
        assert!(errs[0].message.contains("expected a sequence"), "{errs:#?}");
    }

    #[test]
    fn seed003_task_pod_spec_merged_over_default() {
        let exp = experiment("seed003-task-fixed.yaml");
        let t = resolve(&exp, &values("seed003-values.yaml"));
        let pod = &t.pod_spec;
        // The task's label wins over the default's.
        assert_eq!(
            pod["metadata"]["labels"]["customLabel"],
            "task-specific-label"
        );
        assert_eq!(t.provenance["metadata.labels.customLabel"], USER_SOURCE);
        assert_eq!(pod["spec"]["serviceAccountName"], "checkpoint-writer");
        assert_eq!(
            pod["spec"]["imagePullSecrets"],
            json!([{"name": "regcred"}])
        );
        assert_eq!(
            pod["spec"]["tolerations"][0]["key"],
            "tained-nodegroup-name"
        );
        // The default's volume stays (the task sets no volumes)...
        assert_eq!(names(&pod["spec"]["volumes"])[0], "example-volume");
        // ...but its determined-container mount is gone: the task's pod spec has no
        // containers, marshalled as `containers: null`, a delete in strategic merge patch.
        let det = container(pod, DETERMINED_CONTAINER);
        assert_eq!(names(&det["volumeMounts"]), ["det-shm-volume"]);
        assert!(
            has_warning(&t, "environment.pod_spec.spec.containers is not set"),
            "{:#?}",
            t.warnings
        );
    }

    #[test]
    fn seed003_task_pod_spec_replaces_default_in_older_releases() {
        let exp = experiment("seed003-task-fixed.yaml");
        let t = trial_pods(&exp, &values("seed003-values.yaml"), PodSpecMerge::Replace).unwrap();
        let pod = &t.pod_spec;
        assert_eq!(
            pod["metadata"]["labels"]["customLabel"],
            "task-specific-label"
        );
        assert_eq!(
            names(&pod["spec"]["volumes"]),
            [
                "det-shm-volume",
                "archive-volume",
                "entrypoint-volume",
                "additional-files-volume"
            ]
        );
        assert!(
            has_warning(&t, "spec.containers, spec.volumes are not applied"),
            "{:#?}",
            t.warnings
        );
    }

    // --- strategic merge vs replace ------------------------------------------------------------

    #[test]
    fn merge_keeps_default_toleration_and_node_selector_replace_loses_them() {
        let defaults = values("merge-values.yaml");
        let exp = experiment("merge-experiment.yaml");

        let merged = resolve(&exp, &defaults);
        let spec = &merged.pod_spec["spec"];
        assert_eq!(
            spec["nodeSelector"],
            json!({"gpu-type": "a100", "topology.kubernetes.io/zone": "us-east-1a"})
        );
        assert_eq!(
            spec["tolerations"],
            json!([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])
        );
        let det = container(&merged.pod_spec, DETERMINED_CONTAINER);
        assert_eq!(det["resources"]["requests"]["memory"], "32Gi");
        assert_eq!(names(&det["volumeMounts"]), ["det-shm-volume", "datasets"]);
        assert_eq!(
            merged.provenance["spec.nodeSelector.gpu-type"],
            "default gpuPodSpec"
        );
        assert_eq!(
            merged.provenance["spec.nodeSelector.topology.kubernetes.io/zone"],
            USER_SOURCE
        );

        let replaced = trial_pods(&exp, &defaults, PodSpecMerge::Replace).unwrap();
        let spec = &replaced.pod_spec["spec"];
        assert_eq!(
            spec["nodeSelector"],
            json!({"topology.kubernetes.io/zone": "us-east-1a"})
        );
        assert!(spec.get("tolerations").is_none());
        let det = container(&replaced.pod_spec, DETERMINED_CONTAINER);
        assert!(det["resources"]["requests"].get("memory").is_none());
        assert!(has_warning(&replaced, "spec.tolerations"));
    }

    #[test]
    fn empty_list_in_task_pod_spec_cannot_clear_default_tolerations() {
        // `tolerations: []` is dropped by Go's omitempty before the merge.
        let mut exp = experiment("merge-experiment.yaml");
        exp.environment.pod_spec.as_mut().unwrap()["spec"]["tolerations"] = json!([]);
        let t = resolve(&exp, &values("merge-values.yaml"));
        assert_eq!(
            t.pod_spec["spec"]["tolerations"][0]["key"],
            "nvidia.com/gpu"
        );
    }

    #[test]
    fn merge_orders_merge_keyed_lists_as_upstream_test() {
        // master/pkg/schemas/expconf/experiment_config_test.go: TestPodSpecMerge —
        // imagePullSecrets of the winning pod spec come first.
        let defaults = ClusterDefaults {
            max_slots_per_pod: Some(8),
            task_container_defaults: TaskContainerDefaults {
                gpu_pod_spec: Some(json!({"spec": {
                    "hostname": "e1HostName", "serviceAccountName": "e1ServiceAccount",
                    "imagePullSecrets": [{"name": "e1Secret"}]}})),
                ..Default::default()
            },
            ..Default::default()
        };
        let mut exp = ExperimentConfig::default();
        exp.environment.pod_spec = Some(json!({"spec": {
            "hostname": "e0HostName", "subdomain": "e0SubDomain",
            "imagePullSecrets": [{"name": "e0Secret"}]}}));
        let t = resolve(&exp, &defaults);
        let spec = &t.pod_spec["spec"];
        assert_eq!(spec["hostname"], "e0HostName");
        assert_eq!(spec["subdomain"], "e0SubDomain");
        assert_eq!(spec["serviceAccountName"], "e1ServiceAccount");
        assert_eq!(
            spec["imagePullSecrets"],
            json!([{"name": "e0Secret"}, {"name": "e1Secret"}])
        );
    }

    // --- slots → pods ------------------------------------------------------------------------

    #[test]
    fn slots_split_into_pods_of_max_slots_per_pod() {
        let defaults = values("seed003-values.yaml"); // maxSlotsPerPod: 8
        let exp = experiment("gpu-trial.yaml");
        for (slots, pods, per_pod) in [(8, 1, 8), (16, 2, 8), (6, 1, 6), (1, 1, 1), (0, 1, 0)] {
            let t = resolve(&with_slots(exp.clone(), slots), &defaults);
            assert_eq!((t.pods, t.slots_per_pod), (pods, per_pod), "{slots} slots");
            let det = container(&t.pod_spec, DETERMINED_CONTAINER);
            if per_pod > 0 {
                // The GPU request is per pod: limits and requests.
                for list in ["limits", "requests"] {
                    assert_eq!(
                        det["resources"][list]["nvidia.com/gpu"],
                        per_pod.to_string(),
                        "{slots} slots"
                    );
                }
            } else {
                assert!(det.get("resources").is_none());
            }
            let parallelism = det["env"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["name"] == "DET_KUBERNETES_JOB_PARALLELISM")
                .unwrap();
            assert_eq!(parallelism["value"], pods.to_string());
        }
    }

    #[test]
    fn uneven_slots_are_rejected_not_split() {
        let defaults = values("seed003-values.yaml");
        let errs = trial_pods(
            &with_slots(experiment("gpu-trial.yaml"), 12),
            &defaults,
            PodSpecMerge::StrategicMerge,
        )
        .unwrap_err();
        assert_eq!(
            errs,
            [FieldError {
                path: "resources.slots_per_trial".into(),
                message: "invalid resource request: slots (12) must be < or a multiple of \
                          max_slots_per_pod (8)"
                    .into(),
            }]
        );
    }

    #[test]
    fn single_node_trial_must_fit_one_pod() {
        let mut exp = with_slots(experiment("gpu-trial.yaml"), 16);
        exp.resources.is_single_node = Some(true);
        let errs = trial_pods(
            &exp,
            &values("seed003-values.yaml"),
            PodSpecMerge::StrategicMerge,
        )
        .unwrap_err();
        assert!(errs[0].message.contains("on single pod"), "{errs:#?}");
    }

    #[test]
    fn missing_max_slots_per_pod_is_a_chart_error() {
        let mut defaults = values("seed003-values.yaml");
        defaults.max_slots_per_pod = None;
        let errs = trial_pods(
            &experiment("gpu-trial.yaml"),
            &defaults,
            PodSpecMerge::StrategicMerge,
        )
        .unwrap_err();
        assert_eq!(errs[0].path, "maxSlotsPerPod");
    }

    // --- overwritten and ignored fields --------------------------------------------------------

    #[test]
    fn overwritten_and_ignored_fields_warn() {
        let t = resolve(
            &experiment("overwrite-experiment.yaml"),
            &values("merge-values.yaml"),
        );
        let pod = &t.pod_spec;
        for needle in [
            "environment.pod_spec.metadata.name is overwritten",
            "environment.pod_spec.metadata.namespace is overwritten",
            "environment.pod_spec.metadata.labels[determined.ai/task_type] is overwritten",
            "environment.pod_spec.spec.hostNetwork is overwritten",
            "environment.pod_spec.spec.restartPolicy is overwritten: Determined always sets Never",
            "environment.pod_spec.spec.containers[determined-container].workingDir is ignored: \
             Determined sets the working directory to /run/determined/workdir",
            "environment.pod_spec.spec.containers[determined-container].livenessProbe is ignored",
            "environment.pod_spec.spec.containers[determined-container].imagePullPolicy is ignored",
            "environment.pod_spec.spec.containers[determined-container].resources.limits[nvidia.com/gpu] \
             is ignored: Determined sets nvidia.com/gpu: 2",
            "environment.pod_spec.spec.containers[determined-container].securityContext.runAsUser is ignored",
        ] {
            assert!(
                has_warning(&t, needle),
                "missing {needle:?} in {:#?}",
                t.warnings
            );
        }
        assert_ne!(pod["metadata"]["name"], "my-pod");
        assert_eq!(pod["metadata"]["namespace"], "default");
        assert_eq!(
            pod["metadata"]["labels"]["determined.ai/task_type"],
            "TRIAL"
        );
        assert!(pod["spec"].get("hostNetwork").is_none());
        assert_eq!(pod["spec"]["restartPolicy"], "Never");
        let det = container(pod, DETERMINED_CONTAINER);
        assert_eq!(det["workingDir"], WORK_DIR);
        assert_eq!(det["imagePullPolicy"], "IfNotPresent");
        assert!(det.get("livenessProbe").is_none());
        // Kept: env after Determined's, envFrom, memory, the GPU count from the slots.
        let env = names(&det["env"]);
        assert_eq!(env.last(), Some(&"MY_FLAG"));
        assert!(
            env.iter().position(|n| *n == "DET_KUBERNETES_POD_IP")
                < env.iter().position(|n| *n == "MY_FLAG")
        );
        assert_eq!(det["envFrom"][0]["configMapRef"]["name"], "training-config");
        assert_eq!(det["resources"]["limits"]["memory"], "64Gi");
        assert_eq!(det["resources"]["limits"]["nvidia.com/gpu"], "2");
        assert_eq!(det["resources"]["requests"]["nvidia.com/gpu"], "2");
        assert_eq!(det["securityContext"], json!({"privileged": false}));
        assert_eq!(
            t.provenance["spec.containers[name=determined-container].env[name=MY_FLAG].value"],
            USER_SOURCE
        );
        assert_eq!(
            t.provenance["spec.containers[name=determined-container].resources.limits.nvidia.com/gpu"],
            DETERMINED_SOURCE
        );
    }

    #[test]
    fn expconf_schema_rejects_image_in_any_task_container() {
        let errs = trial_pods(
            &experiment("rejected-experiment.yaml"),
            &values("merge-values.yaml"),
            PodSpecMerge::StrategicMerge,
        )
        .unwrap_err();
        let got: Vec<(&str, &str)> = errs
            .iter()
            .map(|e| (e.path.as_str(), e.message.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "environment.pod_spec.spec.containers[0].image",
                    "container Image is not configurable, set it in the experiment config"
                ),
                (
                    "environment.pod_spec.spec.containers[0].command",
                    "container Command is not configurable"
                ),
                (
                    "environment.pod_spec.spec.containers[1].image",
                    "container Image is not configurable, set it in the experiment config"
                ),
            ]
        );
    }

    #[test]
    fn default_determined_container_image_is_a_master_config_error() {
        let mut defaults = values("merge-values.yaml");
        defaults
            .task_container_defaults
            .gpu_pod_spec
            .as_mut()
            .unwrap()["spec"]["containers"][0]["image"] = json!("my/image:1");
        let errs = trial_pods(
            &experiment("gpu-trial.yaml"),
            &defaults,
            PodSpecMerge::StrategicMerge,
        )
        .unwrap_err();
        assert_eq!(
            errs[0].path,
            "taskContainerDefaults.gpuPodSpec.spec.containers[0].image"
        );
    }

    #[test]
    fn dev_shm_mount_in_default_collides_with_determined_shm() {
        // A common chart pattern mounts an emptyDir at /dev/shm; Determined mounts its own
        // det-shm-volume there, and the API server rejects the duplicate mount path.
        let errs = trial_pods(
            &experiment("gpu-trial.yaml"),
            &values("shm-values.yaml"),
            PodSpecMerge::StrategicMerge,
        )
        .unwrap_err();
        assert_eq!(errs.len(), 1, "{errs:#?}");
        assert_eq!(errs[0].path, "taskContainerDefaults.gpuPodSpec");
        assert!(
            errs[0].message.contains("\"/dev/shm\": must be unique")
                && errs[0].message.contains("default gpuPodSpec"),
            "{errs:#?}"
        );
    }

    // --- pools, scheduler, affinity ------------------------------------------------------------

    #[test]
    fn pool_defaults_replace_cluster_pod_spec_and_max_slots() {
        let defaults = values("pools-values.yaml");
        let mut exp = with_slots(experiment("gpu-trial.yaml"), 8);
        exp.resources.resource_pool = Some("a100".into());
        exp.environment.image = None; // the pool's image applies
        let t = resolve(&exp, &defaults);
        assert_eq!((t.pods, t.slots_per_pod), (2, 4));
        assert_eq!(t.resource_pool, "a100");
        let pod = &t.pod_spec;
        assert_eq!(pod["metadata"]["namespace"], "team-a");
        // The pool's gpu_pod_spec replaces the cluster's whole: no cluster nodeSelector.
        assert_eq!(pod["spec"]["nodeSelector"], json!({"pool": "a100"}));
        assert_eq!(
            t.provenance["spec.nodeSelector.pool"],
            "default gpu_pod_spec of resource pool a100"
        );
        assert_eq!(container(pod, DETERMINED_CONTAINER)["image"], "my/a100:1");

        // A CPU task in the same pool still gets the cluster-level cpuPodSpec.
        let t = resolve(&with_slots(exp, 0), &defaults);
        assert_eq!(
            t.pod_spec["metadata"]["labels"]["customLabel"],
            "cluster-cpu"
        );

        // The default pool: cluster-level gpuPodSpec and maxSlotsPerPod.
        let t = resolve(&with_slots(experiment("gpu-trial.yaml"), 8), &defaults);
        assert_eq!((t.pods, t.slots_per_pod), (1, 8));
        assert_eq!(t.pod_spec["spec"]["nodeSelector"], json!({"gpu": "any"}));
    }

    #[test]
    fn unknown_pool_is_an_error() {
        let mut exp = experiment("gpu-trial.yaml");
        exp.resources.resource_pool = Some("nope".into());
        let errs = trial_pods(
            &exp,
            &values("pools-values.yaml"),
            PodSpecMerge::StrategicMerge,
        )
        .unwrap_err();
        assert_eq!(errs[0].path, "resources.resource_pool");
    }

    #[test]
    fn coscheduler_sets_scheduler_and_pod_group_labels() {
        let mut defaults = values("seed003-values.yaml");
        defaults.default_scheduler = Some(COSCHEDULER.into());
        let t = resolve(&with_slots(experiment("gpu-trial.yaml"), 16), &defaults);
        let pod = &t.pod_spec;
        assert_eq!(pod["spec"]["schedulerName"], COSCHEDULER);
        assert_eq!(
            pod["metadata"]["labels"]["pod-group.scheduling.sigs.k8s.io/min-available"],
            "2"
        );
        assert_eq!(
            pod["metadata"]["labels"]["pod-group.scheduling.sigs.k8s.io/name"],
            pod["metadata"]["name"]
        );
    }

    #[test]
    fn priority_makes_a_priority_class_only_when_the_pod_names_none() {
        let mut exp = experiment("gpu-trial.yaml");
        exp.resources.priority = Some(42);
        let t = resolve(&exp, &values("seed003-values.yaml"));
        let (name, value) = t.priority_class.clone().unwrap();
        assert_eq!(value, 42);
        assert_eq!(t.pod_spec["spec"]["priorityClassName"], name);

        exp.environment.pod_spec = Some(json!({"spec": {"priorityClassName": "team-high"}}));
        let t = resolve(&exp, &values("seed003-values.yaml"));
        assert!(t.priority_class.is_none());
        assert_eq!(t.pod_spec["spec"]["priorityClassName"], "team-high");
    }

    #[test]
    fn node_disable_requirement_goes_to_first_term_only() {
        let mut defaults = values("seed003-values.yaml");
        defaults.cluster_id = Some("abc".into());
        let t = resolve(&experiment("affinity-experiment.yaml"), &defaults);
        let terms = &t.pod_spec["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
            ["nodeSelectorTerms"];
        let disabled = json!({"key": "determined.ai/cluster-id-abc", "operator": "DoesNotExist"});
        assert_eq!(
            terms[0]["matchExpressions"].as_array().unwrap().last(),
            Some(&disabled)
        );
        assert!(
            !terms[1]["matchExpressions"]
                .as_array()
                .unwrap()
                .contains(&disabled)
        );
        let term0 = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution\
                     .nodeSelectorTerms[0]";
        assert_eq!(
            t.provenance[&format!("{term0}.matchExpressions[0].key")],
            USER_SOURCE
        );
        assert_eq!(
            t.provenance[&format!("{term0}.matchExpressions[1].key")],
            DETERMINED_SOURCE
        );

        // Without a node affinity, Determined creates one.
        let t = resolve(&experiment("gpu-trial.yaml"), &defaults);
        assert_eq!(
            t.pod_spec["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
                ["nodeSelectorTerms"],
            json!([{"matchExpressions": [disabled]}])
        );
    }

    #[test]
    fn label_values_are_sanitized_as_upstream() {
        assert_eq!(pod_label_value("default"), "default");
        assert_eq!(pod_label_value("my pool!"), "my_pool");
        assert_eq!(pod_label_value("-x-"), "x");
        assert_eq!(pod_label_value(&"a".repeat(70)), "a".repeat(63));
    }

    #[test]
    fn experiment_config_errors_name_the_field() {
        let errs = ExperimentConfig::from_value(
            &json!({"resources": {"slots_per_trial": "eight"}, "searcher": {"name": "single"}}),
        )
        .unwrap_err();
        assert_eq!(errs[0].path, "resources.slots_per_trial");
        // Image as a string or a per-device map; null sections are defaults.
        let exp = ExperimentConfig::from_value(
            &json!({"environment": {"image": {"cpu": "c", "gpu": "g"}}, "resources": null}),
        )
        .unwrap();
        assert_eq!(
            exp.environment.image.unwrap().per_device().cuda.as_deref(),
            Some("g")
        );
    }
}
