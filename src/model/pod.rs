//! A pod as the scheduler sees it: identity, the fields the plugins read, and its requests
//! already computed by the upstream rules.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Affinity, Toleration, TopologySpreadConstraint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::resources::ResourceList;
use super::shared::Shared;

/// The maps and the affinity that copies of a pod share are [`Shared`] (copied when one of
/// them writes to it).
#[derive(Debug, PartialEq, Default)]
pub struct Pod {
    pub name: String,
    pub namespace: String,
    /// `metadata.uid`. In a scenario that uses DRA, the loader gives a pod without one a
    /// stable UID, as the API server gives every pod one: claims name their pod by it (owner
    /// references, `reservedFor`).
    pub uid: String,
    pub labels: Shared<BTreeMap<String, String>>,
    /// The workload the pod belongs to (a TrainJob, a Determined task, a Deployment, …), for
    /// grouping reports.
    pub workload: Option<String>,
    /// The pod's controller (its owner reference with `controller: true`): what created it,
    /// and what the disruption controller reads its expected scale from. Shared by the pods
    /// of one controller.
    pub controller: Option<std::sync::Arc<ControllerRef>>,
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
    pub node_selector: Shared<BTreeMap<String, String>>,
    pub affinity: Shared<Option<Affinity>>,
    pub tolerations: Vec<Toleration>,
    pub scheduling_gates: Vec<String>,
    /// Effective request for filtering (`resource.PodRequests`).
    pub requests: Shared<ResourceList>,
    /// Request for scoring: missing cpu/memory container requests count as 100m / 200Mi.
    pub score_requests: Shared<ResourceList>,
    pub has_restartable_init_container: bool,
    /// `status.startTime` of a pod that is already running (preemption spares older pods).
    pub start_time: Option<Time>,
    /// Its status lists the `Ready` condition with a status other than `True`, or it is bound
    /// in phase `Pending` without a `Ready` condition (a pod dumped from a cluster). Every other
    /// bound pod is taken as Running and Ready, as the simulation binds them: what the
    /// disruption controller counts as healthy and the Eviction API guards (`IsPodReady`).
    pub not_ready: bool,
    /// `status.phase` is `Pending` on a bound pod (a dump: its containers not started yet). The
    /// Eviction API deletes such a pod without asking its budgets (`canIgnorePDB`).
    pub phase_pending: bool,
    /// `metadata.deletionTimestamp`: the pod is terminating (a `kubectl get pods` dump holds
    /// such pods). It still holds its node's resources; PodTopologySpread does not count it
    /// (`countPodsMatchSelector`), and kube-scheduler never schedules it (`skipPodSchedule`).
    pub deletion_timestamp: Option<Time>,
    /// `status.nominatedNodeName`: where an earlier preemption nominated the pod to run.
    pub nominated_node_name: Option<String>,
    /// `spec.terminationGracePeriodSeconds` as written (`None`: the API server defaults it to
    /// 30); see [`Pod::termination_grace_ms`].
    pub termination_grace_period_seconds: Option<i64>,
    /// Its `DisruptionTarget` condition is `True` with reason `PreemptionByScheduler`: with a
    /// deletion timestamp, a victim of kube-scheduler's preemption still terminating
    /// (`podTerminatingByPreemption`).
    pub disrupted_by_preemption: bool,
    pub topology_spread_constraints: Vec<TopologySpreadConstraint>,
    /// The gang the pod belongs to, from its labels or annotations.
    pub pod_group: Option<PodGroupRef>,
    /// `spec.resourceClaims`: the DRA claims the pod uses (by name or from a template).
    pub resource_claims: Vec<k8s_openapi::api::core::v1::PodResourceClaim>,
    /// `status.resourceClaimStatuses`: the ResourceClaim generated for each template claim,
    /// as the pod came or as the loader's resourceclaim controller recorded it
    /// (`dra::controller`).
    pub resource_claim_statuses: Vec<k8s_openapi::api::core::v1::PodResourceClaimStatus>,
    /// Each container's requests of extended resources, what DynamicResources turns into the
    /// requests of the pod's extended-resource claim when DRAExtendedResource is on
    /// (`dra::extended`).
    pub extended_requests: Vec<ContainerExtendedRequest>,
    /// Its share of GPUs from the FGD simulator's annotations (`Open-Gpu-Share`).
    pub gpu_share: Option<std::sync::Arc<super::gpu_share::GpuShare>>,
    /// What cluster-autoscaler's drainability rules read of it (`schedsim plan`'s removals).
    pub drain: DrainFacts,
}

/// What cluster-autoscaler's drainability rules (`simulator/drainability/rules`, helpers in
/// `utils/drain/drain.go` and `utils/pod/pod.go`) read of a pod beyond its controller and
/// namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DrainFacts {
    /// The `kubernetes.io/config.mirror` annotation: a static pod's mirror (`IsMirrorPod`),
    /// which goes with its node.
    pub mirror: bool,
    /// `cluster-autoscaler.kubernetes.io/safe-to-evict`: `"true"` is `Some(true)`, `"false"`
    /// `Some(false)`, any other value is no annotation.
    pub safe_to_evict: Option<bool>,
    /// A `hostPath` volume, or an `emptyDir` not in memory, that the
    /// `cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes` annotation does not name
    /// (`HasBlockingLocalStorage`).
    pub blocking_local_storage: bool,
    /// `IsPodTerminal`: phase `Failed`, or `Succeeded` with `restartPolicy` `Never` or
    /// `OnFailure`.
    pub terminal: bool,
}

impl Clone for Pod {
    /// A copy that shares the [`Shared`] fields with `self` (copied when either writes).
    fn clone(&self) -> Self {
        Pod {
            name: self.name.clone(),
            namespace: self.namespace.clone(),
            uid: self.uid.clone(),
            labels: self.labels.share(),
            workload: self.workload.clone(),
            controller: self.controller.clone(),
            node_name: self.node_name.clone(),
            scheduler_name: self.scheduler_name.clone(),
            priority: self.priority,
            priority_class: self.priority_class.clone(),
            priority_given: self.priority_given,
            never_preempt: self.never_preempt,
            preemption_policy_given: self.preemption_policy_given,
            node_selector: self.node_selector.share(),
            affinity: self.affinity.share(),
            tolerations: self.tolerations.clone(),
            scheduling_gates: self.scheduling_gates.clone(),
            requests: self.requests.share(),
            score_requests: self.score_requests.share(),
            has_restartable_init_container: self.has_restartable_init_container,
            start_time: self.start_time.clone(),
            not_ready: self.not_ready,
            phase_pending: self.phase_pending,
            deletion_timestamp: self.deletion_timestamp.clone(),
            nominated_node_name: self.nominated_node_name.clone(),
            termination_grace_period_seconds: self.termination_grace_period_seconds,
            disrupted_by_preemption: self.disrupted_by_preemption,
            topology_spread_constraints: self.topology_spread_constraints.clone(),
            pod_group: self.pod_group.clone(),
            resource_claims: self.resource_claims.clone(),
            resource_claim_statuses: self.resource_claim_statuses.clone(),
            extended_requests: self.extended_requests.clone(),
            gpu_share: self.gpu_share.clone(),
            drain: self.drain,
        }
    }
}

/// One container's request of an extended resource (`IsExtendedResourceName`, not zero),
/// after defaulting: what upstream's `createDeviceRequests` and `createRequestMappings`
/// (kubernetes 1.34 `pkg/scheduler/framework/plugins/dynamicresources/dynamicresources.go`)
/// read from `spec.initContainers` then `spec.containers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerExtendedRequest {
    /// The container's index in the init containers followed by the containers.
    pub container: usize,
    pub container_name: String,
    /// The resource's index among the container's request names, sorted.
    pub index: usize,
    pub resource: String,
    pub quantity: i64,
}

/// How a pod names its gang. Each gang scheduler has its own marker.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Default,
    serde::Serialize,
    schemars::JsonSchema,
)]
pub enum GangScheduler {
    /// scheduler-plugins' Coscheduling: label `scheduling.x-k8s.io/pod-group` naming a
    /// `scheduling.x-k8s.io/v1alpha1` PodGroup (Kubeflow Trainer's `podGroupPolicy.coscheduling`).
    #[default]
    Coscheduling,
    /// Volcano: annotation `scheduling.k8s.io/group-name` naming a `scheduling.volcano.sh`
    /// PodGroup (Kubeflow Trainer's `podGroupPolicy.volcano`).
    Volcano,
    /// The label-only coscheduling of scheduler-plugins before PodGroup CRDs (what
    /// Determined's `coscheduler` sets): `pod-group.scheduling.sigs.k8s.io/name` and
    /// `…/min-available`.
    LightweightCoscheduling,
}

/// A pod's gang: which scheduler's marker names it, and the group's name (in the pod's
/// namespace). `min_available` is the lightweight coscheduling label's value.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct PodGroupRef {
    pub scheduler: GangScheduler,
    pub name: String,
    pub min_available: Option<u32>,
}

/// Labels and annotations that put a pod into a gang.
pub const POD_GROUP_LABEL: &str = "scheduling.x-k8s.io/pod-group";
pub const VOLCANO_GROUP_ANNOTATION: &str = "scheduling.k8s.io/group-name";
pub const LIGHTWEIGHT_GROUP_LABEL: &str = "pod-group.scheduling.sigs.k8s.io/name";
pub const LIGHTWEIGHT_MIN_AVAILABLE_LABEL: &str = "pod-group.scheduling.sigs.k8s.io/min-available";

impl PodGroupRef {
    /// The gang named by a pod's labels and annotations, if any.
    pub fn of(
        labels: &BTreeMap<String, String>,
        annotations: &BTreeMap<String, String>,
    ) -> Option<Self> {
        let named = |scheduler, name: &String| {
            (!name.is_empty()).then(|| PodGroupRef {
                scheduler,
                name: name.clone(),
                min_available: None,
            })
        };
        if let Some(g) = labels
            .get(POD_GROUP_LABEL)
            .and_then(|n| named(GangScheduler::Coscheduling, n))
        {
            return Some(g);
        }
        if let Some(g) = annotations
            .get(VOLCANO_GROUP_ANNOTATION)
            .and_then(|n| named(GangScheduler::Volcano, n))
        {
            return Some(g);
        }
        let mut g = labels
            .get(LIGHTWEIGHT_GROUP_LABEL)
            .and_then(|n| named(GangScheduler::LightweightCoscheduling, n))?;
        g.min_available = labels
            .get(LIGHTWEIGHT_MIN_AVAILABLE_LABEL)
            .and_then(|v| v.parse().ok());
        Some(g)
    }
}

/// An owner reference with `controller: true` (`metav1.GetControllerOf`), in the pod's
/// namespace.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ControllerRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    /// Empty when the manifest gave none (a hand-written owner reference).
    pub uid: String,
}

impl ControllerRef {
    /// The API group of `api_version` (`apps` of `apps/v1`, empty for the core group).
    pub fn group(&self) -> &str {
        self.api_version
            .rsplit_once('/')
            .map_or("", |(group, _)| group)
    }

    /// Whether `self` names the object `kind`/`name` with `uid` (an empty UID on either side
    /// matches any: a hand-written manifest has none).
    pub fn names(&self, kind: &str, name: &str, uid: &str) -> bool {
        self.kind == kind
            && self.name == name
            && (self.uid.is_empty() || uid.is_empty() || self.uid == uid)
    }
}

impl Pod {
    /// The kind of the pod's controller, if it has one.
    pub fn controller_kind(&self) -> Option<&str> {
        self.controller.as_deref().map(|c| c.kind.as_str())
    }

    /// `namespace/name`, the way kube-scheduler logs a pod.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// `metadata.deletionTimestamp` is set.
    pub fn is_terminating(&self) -> bool {
        self.deletion_timestamp.is_some()
    }

    /// `podTerminatingByPreemption` (`defaultpreemption/default_preemption.go`): terminating
    /// because kube-scheduler preempted it.
    pub fn terminating_by_preemption(&self) -> bool {
        self.is_terminating() && self.disrupted_by_preemption
    }

    /// How long a graceful deletion of the bound pod leaves it on its node, in milliseconds:
    /// `spec.terminationGracePeriodSeconds`, 30 when not written (`SetDefaults_PodSpec`,
    /// `DefaultTerminationGracePeriodSeconds`); the API server accepts a negative value and
    /// deletes with 1 second (`podStrategy.CheckGracefulDelete`,
    /// `pkg/registry/core/pod/strategy.go`).
    pub fn termination_grace_ms(&self) -> u64 {
        let seconds = self
            .termination_grace_period_seconds
            .unwrap_or(DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS);
        match seconds {
            s if s < 0 => 1000,
            s => (s as u64).saturating_mul(1000),
        }
    }
}

/// `v1.DefaultTerminationGracePeriodSeconds`.
pub const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS: i64 = 30;

/// `v1.DisruptionTarget`, the condition type preemption sets on its victims.
pub const DISRUPTION_TARGET: &str = "DisruptionTarget";
/// `v1.PodReasonPreemptionByScheduler`.
pub const REASON_PREEMPTION_BY_SCHEDULER: &str = "PreemptionByScheduler";

#[cfg(test)]
mod tests {
    use super::Pod;

    /// `terminationGracePeriodSeconds`: 30 s when not written, a negative value deletes with
    /// 1 s (`CheckGracefulDelete`), 0 at once, and the largest int64 saturates.
    #[test]
    fn the_grace_period_is_what_a_deletion_waits() {
        let grace = |s: Option<i64>| {
            Pod {
                termination_grace_period_seconds: s,
                ..Pod::default()
            }
            .termination_grace_ms()
        };
        assert_eq!(grace(None), 30_000);
        assert_eq!(grace(Some(5)), 5_000);
        assert_eq!(grace(Some(0)), 0);
        assert_eq!(grace(Some(-5)), 1_000);
        assert_eq!(grace(Some(i64::MAX)), u64::MAX);
    }
}
