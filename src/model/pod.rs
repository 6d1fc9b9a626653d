//! A pod as the scheduler sees it: identity, the fields the plugins read, and its requests
//! already computed by the upstream rules.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Affinity, Toleration, TopologySpreadConstraint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::resources::ResourceList;

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Pod {
    pub name: String,
    pub namespace: String,
    pub labels: BTreeMap<String, String>,
    /// The workload the pod belongs to (a TrainJob, a Determined task), for grouping reports.
    pub workload: Option<String>,
    pub node_name: Option<String>,
    pub scheduler_name: String,
    pub priority: i32,
    /// `spec.priorityClassName`, resolved to `priority` by the loader.
    pub priority_class: Option<String>,
    /// `spec.priority` was written in the pod (not computed from a class).
    pub priority_given: bool,
    /// `spec.preemptionPolicy == Never`.
    pub never_preempt: bool,
    /// `spec.preemptionPolicy` was written in the pod (a class's policy does not override it).
    pub preemption_policy_given: bool,
    pub node_selector: BTreeMap<String, String>,
    pub affinity: Option<Affinity>,
    pub tolerations: Vec<Toleration>,
    pub scheduling_gates: Vec<String>,
    /// Effective request for filtering (`resource.PodRequests`).
    pub requests: ResourceList,
    /// Request for scoring: missing cpu/memory container requests count as 100m / 200Mi.
    pub score_requests: ResourceList,
    pub has_restartable_init_container: bool,
    /// `status.startTime` of a pod that is already running (preemption spares older pods).
    pub start_time: Option<Time>,
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
}

impl Pod {
    /// `namespace/name`, the way kube-scheduler logs a pod.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}
