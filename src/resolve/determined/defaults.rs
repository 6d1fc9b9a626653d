//! The task container defaults in effect for a trial's resource pool
//! (`task_container_defaults.go: MergeIntoExpConfig`, `TaskContainerDefaultsConfig.Merge`).

use serde_json::Value;

use super::*;
use crate::model::validate::FieldError;

/// The device type of the trial's slots (`device.Type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Device {
    Cpu,
    Cuda,
    Rocm,
}

/// A default pod spec and where it was configured.
pub(super) struct DefaultSpec<'a> {
    pub(super) value: &'a Value,
    /// Its path in the Helm values, for errors and warnings.
    pub(super) path: String,
    /// Its provenance label.
    pub(super) label: String,
}

/// The task container defaults in effect for the trial's pool.
pub(super) struct Effective<'a> {
    pub(super) pool: String,
    pub(super) namespace: String,
    pub(super) default_spec: Option<DefaultSpec<'a>>,
    pub(super) max_slots_per_pod: Option<i64>,
    pub(super) max_slots_path: String,
    pub(super) host_network: bool,
    pub(super) network_mode: String,
    pub(super) force_pull_image: bool,
    pub(super) images: DeviceImages,
}

/// The pool, namespace and task container defaults in effect: the cluster's merged with the
/// pool's (`kubernetesrm.ResourceManager.TaskContainerDefaults` →
/// `TaskContainerDefaultsConfig.Merge`: pool-level pod specs, image, network mode replace the
/// cluster's field by field; `kubernetes.max_slots_per_pod` overrides `maxSlotsPerPod`
/// (`kubernetes_resource_manager.go: New`)).
pub(super) fn effective_defaults<'a>(
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
