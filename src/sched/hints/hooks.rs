//! [`PluginHints`]: the plugins' QueueingHints and PreEnqueue as the scheduling queue asks
//! them, for the profile that schedules each pod.

use std::collections::BTreeSet;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{NodeAffinity, TopologySpreadConstraint};

use super::fit::{self, ExtendedClasses};
use super::pods::{self, SpreadContext};
use super::register::{Hint, Registration, registrations};
use super::{HintResult, Payload, for_target, node};
use crate::features::FeatureGates;
use crate::model::Pod;
use crate::sched::SchedulerConfig;
use crate::sched::plugins::pod_topology_spread::Services;
use crate::sched::plugins::registry::{ExtensionPoint, Plugin, known_plugin};
use crate::sched::queue::{ClusterEvent, PodId, QueueHooks, QueuedPod, QueueingHint};

/// What one profile's hints read.
struct ProfileHints {
    scheduler_name: String,
    registrations: Vec<Registration>,
    /// `NodeAffinityArgs.addedAffinity`.
    added_affinity: Option<NodeAffinity>,
    /// `PodTopologySpreadArgs` (`None`: the system defaults).
    spread_defaults: Option<Vec<TopologySpreadConstraint>>,
    /// The PreEnqueue plugins in the profile's order, DefaultPreemption last when enabled
    /// (with SchedulerAsyncPreemption it gates a pod while its preemption runs).
    pre_enqueue: Vec<Plugin>,
}

/// The QueueingHints and PreEnqueue plugins of the configured profiles, for the scheduling
/// queue ([`QueueHooks`]). `L` finds a queued pod's object by its id; a pod it does not know
/// gets Queue from every hint (an error, as upstream treats one) and is never gated.
///
/// A pod is served by the profile its `schedulerName` names, or by the first when the
/// configuration serves every pod ([`SchedulerConfig::profile_of`]).
pub struct PluginHints<L: Fn(PodId) -> Option<Arc<Pod>>> {
    lookup: L,
    gates: FeatureGates,
    profiles: Vec<ProfileHints>,
    first_serves_all: bool,
    services: Services,
    extended_classes: ExtendedClasses,
    /// Pods whose preemption is still running (DefaultPreemption's PreEnqueue gates them).
    preempting: BTreeSet<PodId>,
}

impl<L: Fn(PodId) -> Option<Arc<Pod>>> PluginHints<L> {
    pub fn new(lookup: L, config: &SchedulerConfig) -> Self {
        let gates = config.feature_gates;
        let profiles = (config.profiles().iter())
            .map(|p| {
                let mut pre_enqueue = p.framework.at(ExtensionPoint::PreEnqueue).to_vec();
                if p.framework
                    .runs(ExtensionPoint::PostFilter, Plugin::DefaultPreemption)
                {
                    pre_enqueue.push(Plugin::DefaultPreemption);
                }
                ProfileHints {
                    scheduler_name: p.scheduler_name.clone(),
                    registrations: registrations(p, &gates),
                    added_affinity: p.added_affinity.clone(),
                    spread_defaults: p.spread_default_constraints.clone(),
                    pre_enqueue,
                }
            })
            .collect();
        PluginHints {
            lookup,
            gates,
            profiles,
            first_serves_all: config.profiles.is_empty() || config.serves_every_pod,
            services: Services::new(&config.services, &config.controller_selectors),
            extended_classes: (gates.dra_extended_resource)
                .then(|| crate::dra::extended::device_class_mapping(&config.dra.classes)),
            preempting: BTreeSet::new(),
        }
    }

    /// Marks a pod's preemption as running (it stays gated by DefaultPreemption) or done.
    pub fn set_preempting(&mut self, pod: PodId, running: bool) {
        match running {
            true => self.preempting.insert(pod),
            false => self.preempting.remove(&pod),
        };
    }

    fn profile_of(&self, pod: &Pod) -> Option<&ProfileHints> {
        match self.first_serves_all {
            true => self.profiles.first(),
            false => (self.profiles.iter()).find(|p| p.scheduler_name == pod.scheduler_name),
        }
    }

    /// Runs one hint function for `target`.
    fn evaluate(
        &self,
        hint: Hint,
        target: &Pod,
        profile: &ProfileHints,
        payload: &Payload,
    ) -> HintResult {
        let spread = || SpreadContext {
            defaults: profile.spread_defaults.as_deref(),
            services: &self.services,
        };
        let gates = &self.gates;
        match hint {
            Hint::FitPod => {
                let (old, new) = payload.pods()?;
                fit::after_pod_event(target, old, new)
            }
            Hint::FitNode => {
                let (old, new) = payload.nodes()?;
                fit::after_node_change(target, old, new, &self.extended_classes)
            }
            Hint::NodeAffinityNode => {
                let (old, new) = payload.nodes()?;
                node::node_affinity(target, profile.added_affinity.as_ref(), old, new)
            }
            Hint::NodeUnschedulableNode => {
                let (old, new) = payload.nodes()?;
                node::node_unschedulable(old, new)
            }
            Hint::NodeUnschedulableToleration => for_target(target, payload, |_, new| {
                node::tolerates_unschedulable(new, gates)
            }),
            Hint::TaintTolerationNode => {
                let (old, new) = payload.nodes()?;
                node::taint_toleration(target, old, new, gates)
            }
            Hint::InterPodAffinityAssignedPod => {
                let (old, new) = payload.pods()?;
                pods::affinity_assigned_pod(target, old, new)
            }
            Hint::InterPodAffinityNode => {
                let (old, new) = payload.nodes()?;
                pods::affinity_node(target, old, new)
            }
            Hint::SpreadAssignedPod => {
                let (old, new) = payload.pods()?;
                pods::spread_assigned_pod(target, old, new, &spread())
            }
            Hint::SpreadTargetPod => for_target(target, payload, |old, new| {
                pods::spread_target_pod(target, old, new, &spread())
            }),
            Hint::SpreadNode => {
                let (old, new) = payload.nodes()?;
                pods::spread_node(target, old, new, &spread())
            }
            // The queued pod's own update: Queue (DynamicResources would still check its
            // claims exist, which the caller's PreEnqueue does).
            Hint::TaintTolerationToleration
            | Hint::InterPodAffinityTargetPod
            | Hint::GatesEliminated
            | Hint::DraPod => for_target(target, payload, |_, _| Ok(QueueingHint::Queue)),
            // Events without the object the hint reads (module doc): Queue.
            Hint::FitDeviceClass | Hint::DraClaim => Ok(QueueingHint::Queue),
            // "the preemption plugin should not make the decision of when to requeue".
            Hint::PreemptionPodDeleted => Ok(QueueingHint::QueueSkip),
        }
    }

    /// Whether `plugin`'s PreEnqueue gates `pod` (DynamicResources' is the caller's).
    fn gates_pod(&self, plugin: Plugin, id: PodId, pod: &Pod) -> bool {
        match plugin {
            Plugin::SchedulingGates => !pod.scheduling_gates.is_empty(),
            Plugin::DefaultPreemption => self.preempting.contains(&id),
            _ => false,
        }
    }
}

impl<L: Fn(PodId) -> Option<Arc<Pod>>> QueueHooks<Payload> for PluginHints<L> {
    fn hint(
        &self,
        plugin: &str,
        registered: &ClusterEvent,
        pod: &QueuedPod,
        _event: &ClusterEvent,
        payload: &Payload,
    ) -> HintResult {
        let target = (self.lookup)(pod.pod.id).ok_or("the queued pod is unknown")?;
        let profile = self
            .profile_of(&target)
            .ok_or("no profile serves the pod")?;
        let plugin = known_plugin(plugin).and_then(|k| k.support.plugin());
        let registration = (profile.registrations.iter())
            .find(|r| Some(r.plugin) == plugin && r.event == *registered);
        match registration.and_then(|r| r.hint) {
            Some(hint) => self.evaluate(hint, &target, profile, payload),
            // defaultQueueingHintFn.
            None => Ok(QueueingHint::Queue),
        }
    }

    /// `runPreEnqueuePlugins`: the previous gating plugin first, then the profile's.
    fn pre_enqueue(&self, queued: &QueuedPod) -> Option<String> {
        let id = queued.pod.id;
        let pod = (self.lookup)(id)?;
        let profile = self.profile_of(&pod)?;
        let previous = (queued.gating_plugin.as_deref())
            .and_then(known_plugin)
            .and_then(|k| k.support.plugin());
        (previous
            .into_iter()
            .chain(profile.pre_enqueue.iter().copied()))
        .find(|&p| self.gates_pod(p, id, &pod))
        .map(|p| p.name().to_string())
    }
}
