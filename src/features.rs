//! Feature gates that change scheduling behaviour, with upstream's names and defaults
//! (Kubernetes 1.34, `pkg/features/kube_features.go`; Kueue's at v0.20, its own
//! `pkg/features/kube_features.go`). A scenario sets them in `spec.scheduler.featureGates`:
//! schedsim has one map for kube-scheduler's gates and Kueue's (a cluster sets Kueue's in its
//! Configuration's `featureGates` or the manager's `--feature-gates`). Kueue's other gates are
//! at their defaults.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct FeatureGates {
    /// `TaintTolerationComparisonOperators` (alpha, off by default): tolerations with `Gt`/`Lt`.
    #[serde(default)]
    pub taint_toleration_comparison_operators: bool,
    /// `DRAPrioritizedList` (beta, on by default): claim requests with `firstAvailable`.
    #[serde(default = "on", rename = "DRAPrioritizedList")]
    pub dra_prioritized_list: bool,
    /// `DRAAdminAccess` (beta, on by default): requests with `adminAccess`.
    #[serde(default = "on", rename = "DRAAdminAccess")]
    pub dra_admin_access: bool,
    /// `DRAExtendedResource` (alpha, off by default in 1.34 and 1.35): extended resources
    /// backed by DRA devices through a DeviceClass's `extendedResourceName`, as kube-scheduler
    /// 1.34 allocates them (`dra::extended`, `sched::plugins::dynamic_resources`).
    #[serde(default, rename = "DRAExtendedResource")]
    pub dra_extended_resource: bool,
    /// `DRAPartitionableDevices` (alpha since 1.33, off by default in 1.34 and 1.35; beta and
    /// on from 1.36): counter sets shared by a
    /// pool's devices (`sharedCounters`, `consumesCounters`) and per-device node selection
    /// (`dra::counters`, `dra::allocator`).
    #[serde(default, rename = "DRAPartitionableDevices")]
    pub dra_partitionable_devices: bool,
    /// `DRAConsumableCapacity` (alpha, off by default in 1.34 and 1.35; beta and on from
    /// 1.36): devices that `allowMultipleAllocations`, requests with `capacity.requests`, and
    /// `distinctAttribute` constraints, as the structured allocator shares devices by capacity
    /// (`dra::capacity`).
    #[serde(default, rename = "DRAConsumableCapacity")]
    pub dra_consumable_capacity: bool,
    /// `DRADeviceTaints` (alpha since 1.33, off by default in 1.34 and 1.35; beta and on from
    /// 1.36): a device's `NoSchedule`/`NoExecute` taints keep it from requests that do not
    /// tolerate them (`dra::taints`).
    #[serde(default, rename = "DRADeviceTaints")]
    pub dra_device_taints: bool,
    /// Kueue's `SchedulingEquivalenceHashing` (beta; off in v0.17, on by default since
    /// v0.18): a BestEffortFIFO ClusterQueue sets aside, unevaluated, the workloads equivalent
    /// to one that did not fit (`kueue::admission::equivalence`).
    #[serde(default = "on")]
    pub scheduling_equivalence_hashing: bool,
}

fn on() -> bool {
    true
}

impl Default for FeatureGates {
    fn default() -> Self {
        FeatureGates {
            taint_toleration_comparison_operators: false,
            dra_prioritized_list: true,
            dra_admin_access: true,
            dra_extended_resource: false,
            dra_partitionable_devices: false,
            dra_consumable_capacity: false,
            dra_device_taints: false,
            scheduling_equivalence_hashing: true,
        }
    }
}
