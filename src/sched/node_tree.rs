//! The scheduler cache's node tree: the order in which a scheduling cycle meets the nodes.
//!
//! Upstream: `pkg/scheduler/backend/cache/node_tree.go` (`pkg/scheduler/internal/cache/` before
//! 1.33) and `GetZoneKey` in `k8s.io/component-helpers/node/topology/helpers.go`. Nodes are
//! grouped by zone (region and zone labels); within a zone they keep the order they were added
//! in, zones the order they first appeared in, and the snapshot's node list (`list`) takes one
//! node of each zone in turn. A scenario's node order stands for the order the scheduler's
//! informer added them (a `kubectl get nodes` dump lists them by name, as the informer's
//! initial list does); timeline events add, remove and relabel nodes as the cache's event
//! handlers would.

use std::collections::HashMap;

use crate::model::Node;

/// `v1.LabelFailureDomainBetaZone`, read before the GA label.
pub const BETA_ZONE: &str = "failure-domain.beta.kubernetes.io/zone";
/// `v1.LabelTopologyZone`.
pub const ZONE: &str = "topology.kubernetes.io/zone";
/// `v1.LabelFailureDomainBetaRegion`, read before the GA label.
pub const BETA_REGION: &str = "failure-domain.beta.kubernetes.io/region";
/// `v1.LabelTopologyRegion`.
pub const REGION: &str = "topology.kubernetes.io/region";

/// `GetZoneKey`: `region:\0:zone`, the deprecated beta labels first; `""` without either.
pub fn zone_key(node: &Node) -> String {
    let label = |beta: &str, ga: &str| {
        (node.labels.get(beta))
            .or_else(|| node.labels.get(ga))
            .cloned()
            .unwrap_or_default()
    };
    let zone = label(BETA_ZONE, ZONE);
    let region = label(BETA_REGION, REGION);
    if region.is_empty() && zone.is_empty() {
        return String::new();
    }
    format!("{region}:\0:{zone}")
}

/// `nodeTree`: the node names of each zone, and the zones in the order they appeared.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeTree {
    zones: Vec<String>,
    tree: HashMap<String, Vec<String>>,
    num_nodes: usize,
}

impl NodeTree {
    /// `newNodeTree`: the nodes added in order.
    pub fn new<'n>(nodes: impl IntoIterator<Item = &'n Node>) -> Self {
        let mut tree = NodeTree::default();
        for n in nodes {
            tree.add(n);
        }
        tree
    }

    /// `addNode`: at the end of its zone; a node already there is left alone.
    pub fn add(&mut self, node: &Node) {
        let zone = zone_key(node);
        match self.tree.get_mut(&zone) {
            Some(names) if names.contains(&node.name) => return,
            Some(names) => names.push(node.name.clone()),
            None => {
                self.zones.push(zone.clone());
                self.tree.insert(zone, vec![node.name.clone()]);
            }
        }
        self.num_nodes += 1;
    }

    /// `removeNode`: an emptied zone goes too. Upstream's error for a node it does not hold.
    pub fn remove(&mut self, node: &Node) -> Result<(), String> {
        let zone = zone_key(node);
        if let Some(names) = self.tree.get_mut(&zone)
            && let Some(at) = names.iter().position(|n| *n == node.name)
        {
            names.remove(at);
            if names.is_empty() {
                self.tree.remove(&zone);
                self.zones.retain(|z| *z != zone);
            }
            self.num_nodes -= 1;
            return Ok(());
        }
        Err(format!(
            "node {:?} in group {zone:?} was not found",
            node.name
        ))
    }

    /// `updateNode`: a node whose zone changed moves to the end of its new zone.
    pub fn update(&mut self, old: &Node, new: &Node) {
        if zone_key(old) == zone_key(new) {
            return;
        }
        // Upstream ignores whether the old node was there.
        let _ = self.remove(old);
        self.add(new);
    }

    /// `list`: one node of each zone in turn, zone by zone, until every node is listed.
    pub fn list(&self) -> Vec<&str> {
        let mut out = Vec::with_capacity(self.num_nodes);
        let zones: Vec<&Vec<String>> = self.zones.iter().map(|z| &self.tree[z]).collect();
        let longest = zones.iter().map(|z| z.len()).max().unwrap_or(0);
        for i in 0..longest {
            out.extend(zones.iter().filter_map(|z| z.get(i)).map(String::as_str));
        }
        out
    }

    /// The zones (zone keys) and their nodes, in the tree's order.
    pub fn zones(&self) -> impl Iterator<Item = (&str, &[String])> {
        (self.zones.iter()).map(|z| (z.as_str(), self.tree[z].as_slice()))
    }

    pub fn len(&self) -> usize {
        self.num_nodes
    }

    pub fn is_empty(&self) -> bool {
        self.num_nodes == 0
    }

    /// What the cache's event handlers do when the node list becomes `new`: removed nodes
    /// leave, nodes whose zone changed move, added nodes join in `new`'s order.
    pub fn follow(&mut self, old: &[Node], new: &[Node]) {
        let old_by_name: HashMap<&str, &Node> = old.iter().map(|n| (n.name.as_str(), n)).collect();
        let new_names: std::collections::HashSet<&str> =
            new.iter().map(|n| n.name.as_str()).collect();
        for n in old.iter().filter(|n| !new_names.contains(n.name.as_str())) {
            let _ = self.remove(n);
        }
        for n in new {
            match old_by_name.get(n.name.as_str()) {
                Some(before) => self.update(before, n),
                None => self.add(n),
            }
        }
    }
}
