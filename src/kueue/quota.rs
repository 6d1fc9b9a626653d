//! The quota tree: ClusterQueues and Cohorts as resource nodes, what each may still use, and
//! usage flowing up past a node's local quota. A port of kubernetes-sigs/kueue
//! `pkg/cache/scheduler/resource_node.go` (`available`, `potentialAvailable`, `addUsage`,
//! `removeUsage`, `accumulateFromChild`), `clusterqueue_snapshot.go` (`BorrowingWith`) and
//! `pkg/scheduler/preemption/classical/hierarchical_preemption.go`
//! (`FindHeightOfLowestSubtreeThatFits`). Amounts saturate instead of overflowing, as Kueue's
//! `resources.Amount` does.

use std::collections::BTreeMap;

use super::api::{ClusterQueue, Cohort, FlavorResource, ResourceQuota};

/// A ClusterQueue or a Cohort.
#[derive(Debug, Clone)]
struct Node {
    name: String,
    parent: Option<usize>,
    child_cohorts: Vec<usize>,
    child_queues: Vec<usize>,
    quotas: BTreeMap<FlavorResource, ResourceQuota>,
    /// The node's own quota plus what its children lend it.
    subtree_quota: BTreeMap<FlavorResource, i64>,
    /// What counts against `subtree_quota`: a queue's usage; for a cohort, its children's
    /// usage past their local quota.
    usage: BTreeMap<FlavorResource, i64>,
}

/// Every ClusterQueue and Cohort of a scenario, linked into trees.
#[derive(Debug, Clone)]
pub struct QuotaTree {
    nodes: Vec<Node>,
    queues: BTreeMap<String, usize>,
    cohorts: BTreeMap<String, usize>,
}

/// A ClusterQueue of the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QueueId(pub(super) usize);

impl QuotaTree {
    /// Links queues to their cohorts (a cohort named but not defined exists implicitly, with
    /// no quota) and cohorts to their parents. A parent link that would close a cycle is left
    /// out and reported: Kueue marks such cohorts' queues inactive.
    pub fn new(queues: &[ClusterQueue], cohorts: &[Cohort]) -> (QuotaTree, Vec<String>) {
        let mut tree = QuotaTree {
            nodes: Vec::new(),
            queues: BTreeMap::new(),
            cohorts: BTreeMap::new(),
        };
        let mut warnings = Vec::new();
        for c in cohorts {
            let id = tree.cohort(&c.name);
            tree.nodes[id].quotas = c.quotas.clone();
        }
        for c in cohorts {
            let Some(parent) = &c.parent else { continue };
            let (id, parent) = (tree.cohorts[&c.name], tree.cohort(parent));
            if tree.ancestors(parent).any(|a| a == id) || parent == id {
                warnings.push(format!(
                    "Cohort {:?}: parent {:?} would close a cycle; Kueue deactivates the queues of a cohort cycle",
                    c.name,
                    c.parent.as_deref().unwrap_or("")
                ));
                continue;
            }
            tree.nodes[id].parent = Some(parent);
            tree.nodes[parent].child_cohorts.push(id);
        }
        for q in queues {
            let id = tree.nodes.len();
            tree.nodes.push(Node::new(&q.name, q.quotas.clone()));
            tree.queues.insert(q.name.clone(), id);
            if let Some(cohort) = &q.cohort {
                let parent = tree.cohort(cohort);
                tree.nodes[id].parent = Some(parent);
                tree.nodes[parent].child_queues.push(id);
            }
        }
        let roots: Vec<usize> = (0..tree.nodes.len())
            .filter(|&i| tree.nodes[i].parent.is_none())
            .collect();
        for root in roots {
            tree.update_subtree(root);
        }
        (tree, warnings)
    }

    fn cohort(&mut self, name: &str) -> usize {
        if let Some(&id) = self.cohorts.get(name) {
            return id;
        }
        let id = self.nodes.len();
        self.nodes.push(Node::new(name, BTreeMap::new()));
        self.cohorts.insert(name.to_string(), id);
        id
    }

    pub fn queue(&self, name: &str) -> Option<QueueId> {
        self.queues.get(name).map(|&i| QueueId(i))
    }

    pub(super) fn ancestors(&self, node: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(self.nodes[node].parent, |&p| self.nodes[p].parent)
    }

    /// `updateCohortResourceNode` / `updateClusterQueueResourceNode`.
    fn update_subtree(&mut self, id: usize) {
        let own: BTreeMap<FlavorResource, i64> = (self.nodes[id].quotas.iter())
            .map(|(fr, q)| (fr.clone(), q.nominal))
            .collect();
        self.nodes[id].subtree_quota = own;
        let children: Vec<usize> = (self.nodes[id].child_cohorts.iter())
            .chain(&self.nodes[id].child_queues)
            .copied()
            .collect();
        for child in children {
            self.update_subtree(child);
            let lent: Vec<(FlavorResource, i64)> = (self.nodes[child].subtree_quota.iter())
                .map(|(fr, q)| (fr.clone(), q.saturating_sub(self.local_quota(child, fr))))
                .collect();
            for (fr, q) in lent {
                let e = self.nodes[id].subtree_quota.entry(fr).or_insert(0);
                *e = e.saturating_add(q);
            }
        }
    }

    fn subtree(&self, id: usize, fr: &FlavorResource) -> i64 {
        self.nodes[id].subtree_quota.get(fr).copied().unwrap_or(0)
    }

    fn usage_of(&self, id: usize, fr: &FlavorResource) -> i64 {
        self.nodes[id].usage.get(fr).copied().unwrap_or(0)
    }

    /// The part of a node's quota it keeps from its parent: all but its `lendingLimit`
    /// (without a lending limit, everything is lent).
    fn local_quota(&self, id: usize, fr: &FlavorResource) -> i64 {
        match self.nodes[id].quotas.get(fr).and_then(|q| q.lending_limit) {
            Some(lending) => self.subtree(id, fr).saturating_sub(lending).max(0),
            None => 0,
        }
    }

    fn local_available(&self, id: usize, fr: &FlavorResource) -> i64 {
        (self
            .local_quota(id, fr)
            .saturating_sub(self.usage_of(id, fr)))
        .max(0)
    }

    fn available_at(&self, id: usize, fr: &FlavorResource) -> i64 {
        let node = &self.nodes[id];
        let Some(parent) = node.parent else {
            return self.subtree(id, fr).saturating_sub(self.usage_of(id, fr));
        };
        let mut from_parent = self.available_at(parent, fr);
        if let Some(limit) = node.quotas.get(fr).and_then(|q| q.borrowing_limit) {
            let local = self.local_quota(id, fr);
            let stored_in_parent = self.subtree(id, fr).saturating_sub(local);
            let used_in_parent = (self.usage_of(id, fr).saturating_sub(local)).max(0);
            let most = (stored_in_parent.saturating_sub(used_in_parent)).saturating_add(limit);
            from_parent = from_parent.min(most);
        }
        self.local_available(id, fr).saturating_add(from_parent)
    }

    fn potential_at(&self, id: usize, fr: &FlavorResource) -> i64 {
        let node = &self.nodes[id];
        let Some(parent) = node.parent else {
            return self.subtree(id, fr);
        };
        let mut most = self
            .local_quota(id, fr)
            .saturating_add(self.potential_at(parent, fr));
        if let Some(limit) = node.quotas.get(fr).and_then(|q| q.borrowing_limit) {
            most = most.min(self.subtree(id, fr).saturating_add(limit));
        }
        most
    }

    /// What the queue can use now without preempting (`ClusterQueueSnapshot.Available`).
    pub fn available(&self, q: QueueId, fr: &FlavorResource) -> i64 {
        self.available_at(q.0, fr).max(0)
    }

    /// The most the queue could ever use (`PotentialAvailable`).
    pub fn potential_available(&self, q: QueueId, fr: &FlavorResource) -> i64 {
        self.potential_at(q.0, fr)
    }

    pub fn quota(&self, q: QueueId, fr: &FlavorResource) -> ResourceQuota {
        self.nodes[q.0].quotas.get(fr).copied().unwrap_or_default()
    }

    pub fn usage(&self, q: QueueId, fr: &FlavorResource) -> i64 {
        self.usage_of(q.0, fr)
    }

    pub fn has_parent(&self, q: QueueId) -> bool {
        self.nodes[q.0].parent.is_some()
    }

    /// Usage past the node's subtree quota (a queue's nominal quota) with `val` more
    /// (`BorrowingWith` of ClusterQueueSnapshot and CohortSnapshot).
    fn borrowing_with(&self, id: usize, fr: &FlavorResource, val: i64) -> bool {
        self.subtree(id, fr) < self.usage_of(id, fr).saturating_add(val)
    }

    pub fn add_usage(&mut self, q: QueueId, fr: &FlavorResource, val: i64) {
        self.add_usage_at(q.0, fr, val);
    }

    fn add_usage_at(&mut self, id: usize, fr: &FlavorResource, val: i64) {
        let local = self.local_available(id, fr);
        let e = self.nodes[id].usage.entry(fr.clone()).or_insert(0);
        *e = e.saturating_add(val);
        if let Some(parent) = self.nodes[id].parent
            && val > local
        {
            self.add_usage_at(parent, fr, val - local);
        }
    }

    pub fn remove_usage(&mut self, q: QueueId, fr: &FlavorResource, val: i64) {
        self.remove_usage_at(q.0, fr, val);
    }

    fn remove_usage_at(&mut self, id: usize, fr: &FlavorResource, val: i64) {
        let stored_in_parent = self
            .usage_of(id, fr)
            .saturating_sub(self.local_quota(id, fr));
        let e = self.nodes[id].usage.entry(fr.clone()).or_insert(0);
        *e = e.saturating_sub(val);
        if let Some(parent) = self.nodes[id].parent
            && stored_in_parent > 0
        {
            self.remove_usage_at(parent, fr, val.min(stored_in_parent));
        }
    }

    /// The top of the queue's tree: its root cohort, or the queue itself without a cohort.
    pub fn root_of(&self, q: QueueId) -> usize {
        self.ancestors(q.0).last().unwrap_or(q.0)
    }

    /// The cohorts directly below a cohort.
    pub(super) fn child_cohorts(&self, node: usize) -> &[usize] {
        &self.nodes[node].child_cohorts
    }

    /// The ClusterQueues directly below a cohort.
    pub(super) fn child_queues(&self, node: usize) -> &[usize] {
        &self.nodes[node].child_queues
    }

    /// `buildCQPath`: `/root/…/parent/queue`.
    pub fn path(&self, q: QueueId) -> String {
        let mut parts: Vec<&str> = self.ancestors(q.0).map(|n| &*self.nodes[n].name).collect();
        parts.reverse();
        parts.push(&self.nodes[q.0].name);
        format!("/{}", parts.join("/"))
    }

    /// `IsWithinNominalInResources`: the node's usage within its subtree quota for each of
    /// `frs`.
    pub(super) fn within_nominal<'f>(
        &self,
        node: usize,
        frs: impl IntoIterator<Item = &'f FlavorResource>,
    ) -> bool {
        frs.into_iter()
            .all(|fr| self.subtree(node, fr) >= self.usage_of(node, fr))
    }

    /// `QuantitiesFitInQuota`: whether `requests` fit in the node's subtree quota on top of
    /// its usage, and what of them exceeds the quota it keeps locally.
    pub(super) fn fits_in_quota(
        &self,
        node: usize,
        requests: &BTreeMap<FlavorResource, i64>,
    ) -> (bool, BTreeMap<FlavorResource, i64>) {
        let mut fits = true;
        let mut remaining = BTreeMap::new();
        for (fr, &v) in requests {
            if self.subtree(node, fr) < self.usage_of(node, fr).saturating_add(v) {
                fits = false;
            }
            let rest = v.saturating_sub(self.local_available(node, fr)).max(0);
            remaining.insert(fr.clone(), rest);
        }
        (fits, remaining)
    }

    /// `ClusterQueueSnapshot.BorrowingWith`: usage past the queue's nominal quota with `val`
    /// more.
    pub fn queue_borrowing_with(&self, q: QueueId, fr: &FlavorResource, val: i64) -> bool {
        self.quota(q, fr).nominal < self.usage_of(q.0, fr).saturating_add(val)
    }

    /// `getNodeHeight`: 1 for a cohort of queues, one more per level of child cohorts.
    fn height(&self, id: usize) -> usize {
        let node = &self.nodes[id];
        let children = node.child_cohorts.len() + node.child_queues.len();
        (node.child_cohorts.iter())
            .map(|&c| self.height(c) + 1)
            .fold(children.min(1), usize::max)
    }

    /// `FindHeightOfLowestSubtreeThatFits`: how far up the tree the queue must borrow for
    /// `val` more (0: within its nominal quota), and whether that subtree is smaller than the
    /// whole tree (reclaiming within it could help).
    pub fn borrowing_height(&self, q: QueueId, fr: &FlavorResource, val: i64) -> (usize, bool) {
        let parent = self.nodes[q.0].parent;
        if !self.borrowing_with(q.0, fr, val) || parent.is_none() {
            return (0, parent.is_some());
        }
        let mut remaining = val.saturating_sub(self.local_available(q.0, fr));
        let mut root = q.0;
        for node in self.ancestors(q.0) {
            root = node;
            if !self.borrowing_with(node, fr, remaining) {
                return (self.height(node), self.nodes[node].parent.is_some());
            }
            remaining = remaining.saturating_sub(self.local_available(node, fr));
        }
        (self.height(root), false)
    }
}

impl Node {
    fn new(name: &str, quotas: BTreeMap<FlavorResource, ResourceQuota>) -> Node {
        Node {
            name: name.to_string(),
            parent: None,
            child_cohorts: Vec::new(),
            child_queues: Vec::new(),
            quotas,
            subtree_quota: BTreeMap::new(),
            usage: BTreeMap::new(),
        }
    }
}
