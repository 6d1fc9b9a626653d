//! How the simulated kube-scheduler is configured: the profiles, the feature gates, what the
//! plugins read of the scenario besides pods and nodes (namespaces, PodGroups, Services,
//! controllers, DRA objects, budgets), and which profile serves a pod.

use std::sync::Arc;

use crate::features::FeatureGates;
use crate::model::Pod;
use crate::sched::framework::MessageFormat;
use crate::sched::plugins::registry::{ExtensionPoint, Plugin};
use crate::sched::plugins::{inter_pod_affinity, pod_topology_spread};
use crate::sched::profile::Profile;
use crate::sched::sampling::NodeSampling;

/// How the simulated kube-scheduler is configured.
#[derive(Debug, Clone, Default)]
pub struct SchedulerConfig {
    /// Seeds the tie-break between equally scored nodes.
    pub seed: u64,
    pub message_format: MessageFormat,
    pub feature_gates: FeatureGates,
    /// The profiles of a `KubeSchedulerConfiguration`, each serving the pods that name its
    /// `schedulerName`. Empty: upstream's default profile (see [`SchedulerConfig::profiles`]).
    pub profiles: Vec<Profile>,
    /// The first profile serves every pod, whatever `schedulerName` it names (a scenario
    /// without a KubeSchedulerConfiguration).
    pub serves_every_pod: bool,
    /// Namespace labels, for pod affinity terms' `namespaceSelector`.
    pub namespaces: inter_pod_affinity::NamespaceLabels,
    /// The PodGroups gang members name.
    pub pod_groups: crate::model::pod_group::PodGroups,
    /// Services' selectors (JobSet's headless Service per TrainJob): PodTopologySpread's
    /// default constraints select pods by them.
    pub services: Vec<pod_topology_spread::ServiceSelector>,
    /// The `apps/v1` ReplicaSets' and StatefulSets' selectors, for the default spreading.
    pub controller_selectors: Vec<pod_topology_spread::ControllerSelector>,
    /// Keep only the count of nodes per verdict of each pending pod once its message is
    /// written, not which nodes (reports list them only with `run --node-lists`; sweeps and
    /// benchmarks never do): a per-node verdict costs 2 bytes per node per pending pod, 100 KB
    /// each on a 50,000-node cluster).
    pub drop_node_verdicts: bool,
    /// The plain reference of what a replay does to stay fast and small, which must not change
    /// the output (`tests/replay_reference.rs` compares both): every failed cycle runs in full
    /// (a failure kept for pods alike is reused only on an unchanged cluster, never re-checked
    /// on the nodes that changed since), and groups of bound pods are kept once empty.
    pub reference_run: bool,
    /// The DRA objects (DeviceClasses, ResourceSlices, ResourceClaims with those generated
    /// for pods, templates) the DynamicResources plugin reads; shared, never copied.
    pub dra: std::sync::Arc<crate::dra::Inventory>,
    /// The PodDisruptionBudgets preemption and the Eviction API honour.
    pub pdbs: Arc<Vec<crate::sched::pdb::Budget>>,
    /// kube-scheduler's node sampling (`percentageOfNodesToScore`), or every node examined.
    pub node_sampling: NodeSampling,
    /// `schedsim explain`: the workload pods (`namespace/name`) whose cycles are recorded
    /// node by node ([`crate::sched::explain`]); none when `None`.
    pub explain: Option<Arc<std::collections::HashSet<String>>>,
    /// `schedsim explain --node`: nodes where an explained pod's DRA devices are judged too,
    /// beside the chosen node.
    pub explain_nodes: Vec<String>,
}

impl SchedulerConfig {
    /// The profiles in effect: the configured ones, or upstream's default profile running the
    /// gang plugin its pods name (the scenario then stands for a cluster whose scheduler has
    /// it).
    pub fn profiles(&self) -> Vec<Profile> {
        if self.profiles.is_empty() {
            vec![Profile::default_with_coscheduling()]
        } else {
            self.profiles.clone()
        }
    }

    /// Whether the profile serving `pod` runs Coscheduling (gangs named by the
    /// `scheduling.x-k8s.io/pod-group` label).
    pub fn runs_coscheduling(&self, pod: &Pod) -> bool {
        match self.profile_of(pod) {
            Some(i) => self.profiles.get(i).is_none_or(|p| {
                p.framework
                    .runs(ExtensionPoint::Permit, Plugin::Coscheduling)
            }),
            None => false,
        }
    }

    /// The CoschedulingArgs of the profile that schedules `pod` (defaulted; the defaults when
    /// no profile does).
    pub fn coscheduling_args(&self, pod: &Pod) -> crate::sched::profile::CoschedulingArgs {
        let profile = self.profile_of(pod).and_then(|i| self.profiles.get(i));
        match profile {
            Some(p) => p.coscheduling_args(),
            None => Profile::default().coscheduling_args(),
        }
    }

    /// The index of the profile that schedules `pod`, if one does.
    pub fn profile_of(&self, pod: &Pod) -> Option<usize> {
        if self.profiles.is_empty() || self.serves_every_pod {
            return Some(0);
        }
        self.profiles
            .iter()
            .position(|p| p.scheduler_name == pod.scheduler_name)
    }
}
