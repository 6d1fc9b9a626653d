//! The unschedulable pool (`unschedulable_pods.go`): pods that failed and wait for an event,
//! and gated pods (PreEnqueue failed). Upstream's map is unordered; this one is ordered by
//! pod id so that iteration never depends on hashing.

use std::collections::BTreeMap;

use super::PodId;

#[derive(Debug, Default, Clone)]
pub struct UnschedulablePods {
    /// Each pod and whether it is gated.
    pods: BTreeMap<PodId, bool>,
    gated: usize,
}

impl UnschedulablePods {
    pub fn insert(&mut self, id: PodId, gated: bool) {
        if let Some(was) = self.pods.insert(id, gated) {
            self.gated -= usize::from(was);
        }
        self.gated += usize::from(gated);
    }

    pub fn remove(&mut self, id: PodId) -> bool {
        match self.pods.remove(&id) {
            Some(was) => {
                self.gated -= usize::from(was);
                true
            }
            None => false,
        }
    }

    pub fn contains(&self, id: PodId) -> bool {
        self.pods.contains_key(&id)
    }

    pub fn ids(&self) -> impl Iterator<Item = PodId> + '_ {
        self.pods.keys().copied()
    }

    /// Pods that failed a scheduling attempt (the `unschedulable` gauge).
    pub fn len_unschedulable(&self) -> usize {
        self.pods.len() - self.gated
    }

    /// Gated pods (the `gated` gauge).
    pub fn len_gated(&self) -> usize {
        self.gated
    }
}
