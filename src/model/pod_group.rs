//! PodGroups as the gang schedulers see them: scheduler-plugins' `scheduling.x-k8s.io/v1alpha1`
//! (Coscheduling), Volcano's `scheduling.volcano.sh/v1beta1`, and the group the lightweight
//! coscheduling labels describe.

use std::collections::BTreeMap;

use super::Pod;
use super::pod::GangScheduler;
use super::resources::ResourceList;

/// A PodGroup object (`scheduling.x-k8s.io/v1alpha1` or `scheduling.volcano.sh/v1beta1`), or
/// the group the lightweight coscheduling labels describe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodGroup {
    pub scheduler: GangScheduler,
    pub namespace: String,
    pub name: String,
    pub min_member: u32,
    /// Integer units as the scheduler counts them (milli-CPU, bytes, devices).
    pub min_resources: Option<ResourceList>,
    pub schedule_timeout_seconds: Option<u32>,
}

impl PodGroup {
    pub fn key(&self) -> PodGroupKey {
        (self.scheduler, self.namespace.clone(), self.name.clone())
    }

    pub fn full_name(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }
}

pub type PodGroupKey = (GangScheduler, String, String);

/// The PodGroups of a scenario, by scheduler, namespace and name.
pub type PodGroups = BTreeMap<PodGroupKey, PodGroup>;

/// The gang a pod belongs to, if it names one.
pub fn key_of(pod: &Pod) -> Option<PodGroupKey> {
    pod.pod_group
        .as_ref()
        .map(|g| (g.scheduler, pod.namespace.clone(), g.name.clone()))
}

/// The group a pod belongs to: its PodGroup object, or for the lightweight labels the group
/// they describe. `None` for a Coscheduling or Volcano pod whose PodGroup does not exist.
pub fn group_of(pod: &Pod, groups: &PodGroups) -> Option<PodGroup> {
    let g = pod.pod_group.as_ref()?;
    match g.scheduler {
        GangScheduler::LightweightCoscheduling => Some(PodGroup {
            scheduler: g.scheduler,
            namespace: pod.namespace.clone(),
            name: g.name.clone(),
            min_member: g.min_available.unwrap_or(1),
            min_resources: None,
            schedule_timeout_seconds: None,
        }),
        _ => groups.get(&key_of(pod)?).cloned(),
    }
}
