//! The inputs: the experiment config fields that shape a trial's pods and the cluster's Helm
//! values (`master/pkg/schemas/expconf`, `helm/charts/determined/values.yaml`).

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::*;
use crate::model::validate::FieldError;

/// `null` reads as the default, as Determined's schema allows `null` for every section.
pub(super) fn null_default<'de, D, T>(d: D) -> Result<T, D::Error>
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
    pub(super) fn per_device(&self) -> DeviceImages {
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
    pub(super) fn for_device(&self, device: Device) -> &[String] {
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
