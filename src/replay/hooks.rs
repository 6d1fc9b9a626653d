//! The replay's bridge to the plugins' QueueingHints, until `sched::hints` carries each
//! default plugin's own: every plugin that can reject a pod registers every cluster event and
//! answers Queue (kube-scheduler with QueueingHints off behaves so), and SchedulingGates
//! gates a pod while it has gates left.

use std::sync::Arc;

use crate::model::{Node, Pod};
use crate::sched::SchedulerConfig;
use crate::sched::plugins::registry::ExtensionPoint;
use crate::sched::profile::Profile;
use crate::sched::queue::{
    Action, ClusterEvent, HintRegistry, PodId, QueueHooks, QueuedPod, QueueingHint, Resource,
};

/// What a cluster event carried (upstream's oldObj/newObj).
#[derive(Debug, Clone)]
pub enum Payload {
    None,
    Pod {
        old: Option<Arc<Pod>>,
        new: Option<Arc<Pod>>,
    },
    Node {
        old: Option<Arc<Node>>,
        new: Option<Arc<Node>>,
    },
}

/// Every plugin that can reject a pod, registered for every event.
pub fn registry(profile: &Profile, _gates: &crate::features::FeatureGates) -> HintRegistry {
    let mut plugins: Vec<String> = [
        ExtensionPoint::PreEnqueue,
        ExtensionPoint::PreFilter,
        ExtensionPoint::Filter,
        ExtensionPoint::Permit,
    ]
    .iter()
    .flat_map(|p| profile.framework.at(*p))
    .map(|p| p.name().to_string())
    .collect();
    plugins.sort();
    plugins.dedup();
    HintRegistry::new(vec![(
        ClusterEvent::new(Resource::WildCard, Action::ALL),
        plugins,
    )])
}

/// The hooks the queue asks.
pub struct PluginHints<L> {
    lookup: L,
}

impl<L: Fn(PodId) -> Option<Arc<Pod>>> PluginHints<L> {
    pub fn new(lookup: L, _config: &SchedulerConfig) -> Self {
        PluginHints { lookup }
    }
}

impl<L: Fn(PodId) -> Option<Arc<Pod>>> QueueHooks<Payload> for PluginHints<L> {
    fn hint(
        &self,
        _: &str,
        _: &ClusterEvent,
        _: &QueuedPod,
        _: &ClusterEvent,
        _: &Payload,
    ) -> Result<QueueingHint, String> {
        Ok(QueueingHint::Queue)
    }

    fn pre_enqueue(&self, pod: &QueuedPod) -> Option<String> {
        let p = (self.lookup)(pod.pod.id)?;
        (!p.scheduling_gates.is_empty()).then(|| "SchedulingGates".to_string())
    }
}

/// The events an update of an unscheduled pod makes.
pub fn pod_update_events(old: &Pod, new: &Pod) -> Vec<ClusterEvent> {
    let action = match !old.scheduling_gates.is_empty() && new.scheduling_gates.is_empty() {
        true => Action::UPDATE_POD_SCHEDULING_GATES_ELIMINATED,
        false => Action::UPDATE_POD_OTHER,
    };
    vec![ClusterEvent::new(Resource::UnscheduledPod, action)]
}

/// The events an update of a node makes.
pub fn node_update_events(_old: &Node, _new: &Node) -> Vec<ClusterEvent> {
    vec![ClusterEvent::new(Resource::Node, Action::UPDATE)]
}
