//! Nominated-node bookkeeping (`nominator.go`): which pods are nominated to which node, in
//! the order they were nominated, so that Filter can count them (`NominatedPodsForNode`).

use std::collections::BTreeMap;

use super::PodId;

#[derive(Debug, Default, Clone)]
pub struct Nominator {
    by_node: BTreeMap<String, Vec<PodId>>,
    node_of: BTreeMap<PodId, String>,
    /// Bumped at every change, for a caller that mirrors the nominations.
    generation: u64,
}

impl Nominator {
    /// `addNominatedPod`: `node_override` is a `ModeOverride` nominating info; without it the
    /// pod's own `nominatedNodeName` counts, and a pod without one is not nominated. Any
    /// earlier nomination of the pod is dropped first.
    pub fn add(&mut self, id: PodId, own: Option<&str>, node_override: Option<&str>) {
        self.delete(id);
        let Some(node) = node_override.or(own).filter(|n| !n.is_empty()) else {
            return;
        };
        self.node_of.insert(id, node.to_string());
        self.by_node.entry(node.to_string()).or_default().push(id);
        self.generation += 1;
    }

    /// `deleteNominatedPodIfExists`.
    pub fn delete(&mut self, id: PodId) {
        let Some(node) = self.node_of.remove(&id) else {
            return;
        };
        self.generation += 1;
        if let Some(list) = self.by_node.get_mut(&node) {
            list.retain(|p| *p != id);
            if list.is_empty() {
                self.by_node.remove(&node);
            }
        }
    }

    /// `UpdateNominatedPod`: keep a nomination the update does not carry (set by the
    /// scheduler, not yet written to the pod), else take the pod's new one.
    pub fn update(&mut self, id: PodId, old_own: Option<&str>, new_own: Option<&str>) {
        let kept = if old_own.is_none() && new_own.is_none() {
            self.node_of.get(&id).cloned()
        } else {
            None
        };
        self.add(id, new_own, kept.as_deref());
    }

    pub fn pods_for_node(&self, node: &str) -> &[PodId] {
        self.by_node.get(node).map(Vec::as_slice).unwrap_or(&[])
    }

    pub fn node_of(&self, id: PodId) -> Option<&str> {
        self.node_of.get(&id).map(String::as_str)
    }

    pub fn nodes(&self) -> usize {
        self.by_node.len()
    }

    /// Every node's nominated pods, in nomination order.
    pub fn all(&self) -> impl Iterator<Item = (&str, &[PodId])> {
        (self.by_node.iter()).map(|(node, pods)| (node.as_str(), pods.as_slice()))
    }

    /// Changes so far: equal generations mean equal nominations.
    pub fn generation(&self) -> u64 {
        self.generation
    }
}
