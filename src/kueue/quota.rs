//! The quota tree: ClusterQueues and Cohorts as resource nodes, what each may still use, and
//! usage flowing up past a node's local quota. A port of kubernetes-sigs/kueue
//! `pkg/cache/scheduler/resource_node.go` (`available`, `potentialAvailable`, `addUsage`,
//! `removeUsage`, `accumulateFromChild`), `clusterqueue_snapshot.go` (`BorrowingWith`) and
//! `pkg/scheduler/preemption/classical/hierarchical_preemption.go`
//! (`FindHeightOfLowestSubtreeThatFits`). Amounts saturate instead of overflowing, as Kueue's
//! `resources.Amount` does.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::api::{ClusterQueue, Cohort, FlavorResource, ResourceGroup, ResourceQuota};

/// A ClusterQueue or a Cohort.
#[derive(Debug, Clone)]
struct Node {
    name: String,
    parent: Option<usize>,
    child_cohorts: Vec<usize>,
    child_queues: Vec<usize>,
    /// Per flavor-resource id (see [`QuotaTree::frs`]).
    quotas: Vec<Option<ResourceQuota>>,
    /// The node's own quota plus what its children lend it.
    subtree_quota: Vec<i64>,
}

/// Every ClusterQueue and Cohort of a scenario, linked into trees. The shape and quotas are
/// shared between a tree and its snapshots; only usage is copied (admission takes a snapshot
/// every cycle and the preemption oracle another per workload).
#[derive(Debug, Clone)]
pub struct QuotaTree {
    nodes: Arc<Vec<Node>>,
    queues: Arc<BTreeMap<String, usize>>,
    cohorts: Arc<BTreeMap<String, usize>>,
    /// Flavor-resources as dense ids: the nodes' amounts are vectors indexed by them, so the
    /// tree walks of every availability check compare no strings.
    frs: Arc<FrIds>,
    /// Per node, for a queue, the ids of the flavor-resources of its resource groups (by
    /// group, flavor and covered resource) with the groups they were found for: the flavor
    /// assigner reads them by place, not by name. Forgotten when a flavor-resource is
    /// registered after the tree was built (an id once `None` may then exist).
    places: Arc<Vec<Option<Places>>>,
    /// What counts against each node's `subtree_quota`, per node and flavor-resource id
    /// (`node * frs + id`): a queue's usage; for a cohort, its children's usage past their
    /// local quota.
    usage: Vec<i64>,
}

/// A queue's flavor-resource ids by place, and the resource groups they are of.
#[derive(Debug)]
struct Places {
    groups: Arc<[ResourceGroup]>,
    ids: Vec<Vec<Vec<Option<usize>>>>,
}

/// A ClusterQueue of the tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct QueueId(pub(super) usize);

impl QuotaTree {
    /// Makes this tree a copy of `from`, reusing its usage buffer: admission copies the live
    /// tree into the same snapshot every cycle.
    pub fn copy_from(&mut self, from: &QuotaTree) {
        fn share<T>(to: &mut Arc<T>, from: &Arc<T>) {
            if !Arc::ptr_eq(to, from) {
                *to = Arc::clone(from);
            }
        }
        share(&mut self.nodes, &from.nodes);
        share(&mut self.queues, &from.queues);
        share(&mut self.cohorts, &from.cohorts);
        share(&mut self.frs, &from.frs);
        share(&mut self.places, &from.places);
        self.usage.clone_from(&from.usage);
    }

    /// Links queues to their cohorts (a cohort named but not defined exists implicitly, with
    /// no quota) and cohorts to their parents. A parent link that would close a cycle is left
    /// out and reported: Kueue marks such cohorts' queues inactive.
    pub fn new(queues: &[ClusterQueue], cohorts: &[Cohort]) -> (QuotaTree, Vec<String>) {
        let mut frs = FrIds::default();
        for fr in (queues.iter().flat_map(|q| q.quotas.keys()))
            .chain(cohorts.iter().flat_map(|c| c.quotas.keys()))
        {
            frs.id_or_add(fr);
        }
        frs.generation = next_generation();
        let mut tree = QuotaTree {
            nodes: Arc::new(Vec::new()),
            queues: Arc::new(BTreeMap::new()),
            cohorts: Arc::new(BTreeMap::new()),
            frs: Arc::new(frs),
            places: Arc::new(Vec::new()),
            usage: Vec::new(),
        };
        let mut warnings = Vec::new();
        for c in cohorts {
            let id = tree.cohort(&c.name);
            let quotas = tree.dense(&c.quotas);
            tree.nodes_mut()[id].quotas = quotas;
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
            tree.nodes_mut()[id].parent = Some(parent);
            tree.nodes_mut()[parent].child_cohorts.push(id);
        }
        for q in queues {
            let id = tree.nodes.len();
            let quotas = tree.dense(&q.quotas);
            let frs = tree.frs.len();
            tree.nodes_mut().push(Node::new(&q.name, quotas, frs));
            Arc::make_mut(&mut tree.queues).insert(q.name.clone(), id);
            if let Some(cohort) = &q.cohort {
                let parent = tree.cohort(cohort);
                tree.nodes_mut()[id].parent = Some(parent);
                tree.nodes_mut()[parent].child_queues.push(id);
            }
        }
        tree.usage = vec![0; tree.nodes.len() * tree.frs.len()];
        let mut places: Vec<Option<Places>> = (0..tree.nodes.len()).map(|_| None).collect();
        for q in queues {
            let ids = (q.resource_groups.iter())
                .map(|g| {
                    (g.flavors.iter())
                        .map(|f| {
                            (g.covered_resources.iter())
                                .map(|r| tree.fr_id(f, r))
                                .collect()
                        })
                        .collect()
                })
                .collect();
            places[tree.queues[&q.name]] = Some(Places {
                groups: Arc::clone(&q.resource_groups),
                ids,
            });
        }
        tree.places = Arc::new(places);
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
        let n = self.frs.len();
        self.nodes_mut().push(Node::new(name, vec![None; n], n));
        self.usage.resize(self.nodes.len() * n, 0);
        Arc::make_mut(&mut self.cohorts).insert(name.to_string(), id);
        id
    }

    /// The nodes, to change (a snapshot gets its own copy).
    fn nodes_mut(&mut self) -> &mut Vec<Node> {
        Arc::make_mut(&mut self.nodes)
    }

    pub fn queue(&self, name: &str) -> Option<QueueId> {
        self.queues.get(name).map(|&i| QueueId(i))
    }

    pub(super) fn ancestors(&self, node: usize) -> impl Iterator<Item = usize> + '_ {
        std::iter::successors(self.nodes[node].parent, |&p| self.nodes[p].parent)
    }

    /// Quotas by flavor-resource id.
    fn dense(
        &self,
        quotas: &BTreeMap<FlavorResource, ResourceQuota>,
    ) -> Vec<Option<ResourceQuota>> {
        let mut out = vec![None; self.frs.len()];
        for (fr, q) in quotas {
            if let Some(f) = self.id(fr) {
                out[f] = Some(*q);
            }
        }
        out
    }

    /// The id of a flavor-resource, `None` when no queue or cohort has quota for it.
    pub(super) fn id(&self, fr: &FlavorResource) -> Option<usize> {
        self.frs.get(&fr.0, &fr.1)
    }

    /// [`Self::id`] by the flavor's and the resource's names (nothing to allocate).
    pub fn fr_id(&self, flavor: &str, resource: &str) -> Option<usize> {
        self.frs.get(flavor, resource)
    }

    /// [`Self::fr_id`] of the flavor-resource at a place of queue `q`'s resource groups
    /// `groups`, without comparing names; `None` when not known by place (ask by name).
    pub fn place_id(
        &self,
        q: QueueId,
        groups: &Arc<[ResourceGroup]>,
        (group, flavor, resource): (usize, usize, usize),
    ) -> Option<Option<usize>> {
        let p = self.places.get(q.0)?.as_ref()?;
        if !Arc::ptr_eq(&p.groups, groups) {
            return None;
        }
        Some(*p.ids.get(group)?.get(flavor)?.get(resource)?)
    }

    /// The id of the flavor-resource at a place of queue `q`'s resource groups `groups`: by
    /// place when the tree knows the queue's places ([`Self::place_id`]), else by its names.
    pub fn id_at(
        &self,
        q: QueueId,
        groups: &Arc<[ResourceGroup]>,
        at: (usize, usize, usize),
    ) -> Option<usize> {
        self.place_id(q, groups, at).unwrap_or_else(|| {
            let g = &groups[at.0];
            self.fr_id(&g.flavors[at.1], &g.covered_resources[at.2])
        })
    }

    /// Names the table of flavor-resource ids: trees of one generation give every id the
    /// same flavor-resource ([`FrIdsOf`] keeps ids found in one).
    pub fn fr_generation(&self) -> u64 {
        self.frs.generation
    }

    /// The ids of `frs`, each registered (with no quota anywhere) when new.
    pub fn ids_of<'f>(&mut self, frs: impl IntoIterator<Item = &'f FlavorResource>) -> FrIdsOf {
        let ids = frs.into_iter().map(|fr| self.id_or_add(fr)).collect();
        FrIdsOf {
            generation: self.fr_generation(),
            ids,
        }
    }

    /// The id of a flavor-resource, registered (with no quota anywhere) when new.
    fn id_or_add(&mut self, fr: &FlavorResource) -> usize {
        if let Some(f) = self.id(fr) {
            return f;
        }
        let frs = Arc::make_mut(&mut self.frs);
        let f = frs.id_or_add(fr);
        // Another tree of this generation may give the id to another flavor-resource.
        frs.generation = next_generation();
        self.places = Arc::new(Vec::new());
        for n in self.nodes_mut() {
            n.quotas.push(None);
            n.subtree_quota.push(0);
        }
        // Each node's row grows by one.
        let old = std::mem::take(&mut self.usage);
        self.usage = (old.chunks(f.max(1)).take(self.nodes.len()))
            .flat_map(|row| row.iter().copied().take(f).chain([0]))
            .collect();
        self.usage.resize(self.nodes.len() * (f + 1), 0);
        f
    }

    /// `updateCohortResourceNode` / `updateClusterQueueResourceNode`.
    fn update_subtree(&mut self, id: usize) {
        let own: Vec<i64> = (self.nodes[id].quotas.iter())
            .map(|q| q.map_or(0, |q| q.nominal))
            .collect();
        self.nodes_mut()[id].subtree_quota = own;
        let children: Vec<usize> = (self.nodes[id].child_cohorts.iter())
            .chain(&self.nodes[id].child_queues)
            .copied()
            .collect();
        for child in children {
            self.update_subtree(child);
            for f in 0..self.frs.len() {
                let lent =
                    self.nodes[child].subtree_quota[f].saturating_sub(self.local_quota(child, f));
                let e = &mut self.nodes_mut()[id].subtree_quota[f];
                *e = e.saturating_add(lent);
            }
        }
    }

    fn subtree(&self, id: usize, f: usize) -> i64 {
        self.nodes[id].subtree_quota[f]
    }

    fn usage_of(&self, id: usize, f: usize) -> i64 {
        self.usage[id * self.frs.len() + f]
    }

    /// The part of a node's quota it keeps from its parent: all but its `lendingLimit`
    /// (without a lending limit, everything is lent).
    fn local_quota(&self, id: usize, f: usize) -> i64 {
        match self.nodes[id].quotas[f].and_then(|q| q.lending_limit) {
            Some(lending) => self.subtree(id, f).saturating_sub(lending).max(0),
            None => 0,
        }
    }

    fn local_available(&self, id: usize, f: usize) -> i64 {
        (self.local_quota(id, f).saturating_sub(self.usage_of(id, f))).max(0)
    }

    fn available_at(&self, id: usize, f: usize) -> i64 {
        let node = &self.nodes[id];
        let Some(parent) = node.parent else {
            return self.subtree(id, f).saturating_sub(self.usage_of(id, f));
        };
        let mut from_parent = self.available_at(parent, f);
        if let Some(limit) = node.quotas[f].and_then(|q| q.borrowing_limit) {
            let local = self.local_quota(id, f);
            let stored_in_parent = self.subtree(id, f).saturating_sub(local);
            let used_in_parent = (self.usage_of(id, f).saturating_sub(local)).max(0);
            let most = (stored_in_parent.saturating_sub(used_in_parent)).saturating_add(limit);
            from_parent = from_parent.min(most);
        }
        self.local_available(id, f).saturating_add(from_parent)
    }

    fn potential_at(&self, id: usize, f: usize) -> i64 {
        let node = &self.nodes[id];
        let Some(parent) = node.parent else {
            return self.subtree(id, f);
        };
        let mut most = self
            .local_quota(id, f)
            .saturating_add(self.potential_at(parent, f));
        if let Some(limit) = node.quotas[f].and_then(|q| q.borrowing_limit) {
            most = most.min(self.subtree(id, f).saturating_add(limit));
        }
        most
    }

    /// What the queue can use now without preempting (`ClusterQueueSnapshot.Available`).
    pub fn available(&self, q: QueueId, fr: &FlavorResource) -> i64 {
        self.available_of(q, self.id(fr))
    }

    /// [`Self::available`] by the flavor-resource's id ([`Self::fr_id`]).
    pub fn available_of(&self, q: QueueId, f: Option<usize>) -> i64 {
        f.map_or(0, |f| self.available_at(q.0, f).max(0))
    }

    /// The most the queue could ever use (`PotentialAvailable`), by the flavor-resource's id.
    pub fn potential_available_of(&self, q: QueueId, f: Option<usize>) -> i64 {
        f.map_or(0, |f| self.potential_at(q.0, f))
    }

    pub fn quota(&self, q: QueueId, fr: &FlavorResource) -> ResourceQuota {
        self.quota_of(q, self.id(fr))
    }

    /// [`Self::quota`] by the flavor-resource's id.
    pub fn quota_of(&self, q: QueueId, f: Option<usize>) -> ResourceQuota {
        (f.and_then(|f| self.nodes[q.0].quotas[f])).unwrap_or_default()
    }

    pub fn usage(&self, q: QueueId, fr: &FlavorResource) -> i64 {
        self.id(fr).map_or(0, |f| self.usage_of(q.0, f))
    }

    /// [`Self::usage`] by the flavor-resource's id.
    pub fn usage_by_id(&self, q: QueueId, f: Option<usize>) -> i64 {
        f.map_or(0, |f| self.usage_of(q.0, f))
    }

    pub fn has_parent(&self, q: QueueId) -> bool {
        self.nodes[q.0].parent.is_some()
    }

    /// Usage past the node's subtree quota (a queue's nominal quota) with `val` more
    /// (`BorrowingWith` of ClusterQueueSnapshot and CohortSnapshot).
    fn borrowing_with(&self, id: usize, f: usize, val: i64) -> bool {
        self.subtree(id, f) < self.usage_of(id, f).saturating_add(val)
    }

    pub fn add_usage(&mut self, q: QueueId, fr: &FlavorResource, val: i64) {
        let f = self.id_or_add(fr);
        self.add_usage_at(q.0, f, val);
    }

    /// [`Self::add_usage`] by the flavor's and the resource's names (allocating only for a
    /// flavor-resource new to the tree).
    pub fn add_usage_named(&mut self, q: QueueId, (flavor, resource): (&str, &str), val: i64) {
        let f = match self.fr_id(flavor, resource) {
            Some(f) => f,
            None => self.id_or_add(&(flavor.to_string(), resource.to_string())),
        };
        self.add_usage_at(q.0, f, val);
    }

    fn add_usage_at(&mut self, id: usize, f: usize, val: i64) {
        let local = self.local_available(id, f);
        let at = id * self.frs.len() + f;
        self.usage[at] = self.usage[at].saturating_add(val);
        if let Some(parent) = self.nodes[id].parent
            && val > local
        {
            self.add_usage_at(parent, f, val - local);
        }
    }

    pub fn remove_usage(&mut self, q: QueueId, fr: &FlavorResource, val: i64) {
        let f = self.id_or_add(fr);
        self.remove_usage_at(q.0, f, val);
    }

    /// [`Self::add_usage`] of the flavor-resource with id `f` (of [`Self::fr_generation`]).
    pub fn add_usage_id(&mut self, q: QueueId, f: usize, val: i64) {
        self.add_usage_at(q.0, f, val);
    }

    /// [`Self::remove_usage`] of the flavor-resource with id `f`.
    pub fn remove_usage_id(&mut self, q: QueueId, f: usize, val: i64) {
        self.remove_usage_at(q.0, f, val);
    }

    fn remove_usage_at(&mut self, id: usize, f: usize, val: i64) {
        let stored_in_parent = self.usage_of(id, f).saturating_sub(self.local_quota(id, f));
        let at = id * self.frs.len() + f;
        self.usage[at] = self.usage[at].saturating_sub(val);
        if let Some(parent) = self.nodes[id].parent
            && stored_in_parent > 0
        {
            self.remove_usage_at(parent, f, val.min(stored_in_parent));
        }
    }

    /// The top of the queue's tree: its root cohort, or the queue itself without a cohort.
    pub fn root_of(&self, q: QueueId) -> usize {
        self.root_of_node(q.0)
    }

    /// The root of the cohort tree a node (queue or cohort) is in.
    pub fn root_of_node(&self, node: usize) -> usize {
        self.ancestors(node).last().unwrap_or(node)
    }

    /// A cohort's node, when it exists.
    pub fn cohort_id(&self, name: &str) -> Option<usize> {
        self.cohorts.get(name).copied()
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

    /// The ids of `frs` that have quota or usage somewhere (the others are within every
    /// node's quota: nothing uses them), for [`Self::within_nominal`] in loops.
    pub(super) fn fr_ids<'f>(
        &self,
        frs: impl IntoIterator<Item = &'f FlavorResource>,
    ) -> Vec<usize> {
        frs.into_iter().filter_map(|fr| self.id(fr)).collect()
    }

    /// `IsWithinNominalInResources`: the node's usage within its subtree quota for each of
    /// the flavor-resources `ids` (see [`Self::fr_ids`]).
    pub(super) fn within_nominal(&self, node: usize, ids: &[usize]) -> bool {
        ids.iter()
            .all(|&f| self.subtree(node, f) >= self.usage_of(node, f))
    }

    /// Amounts by flavor-resource id (`None`: no queue or cohort has quota for it), for
    /// [`Self::fits_in_quota`].
    pub(super) fn amounts(
        &self,
        requests: &BTreeMap<FlavorResource, i64>,
    ) -> Vec<(Option<usize>, i64)> {
        (requests.iter()).map(|(fr, &v)| (self.id(fr), v)).collect()
    }

    /// `QuantitiesFitInQuota`: whether `requests` ([`Self::amounts`]) fit in the node's
    /// subtree quota on top of its usage; `requests` becomes what of them exceeds the quota
    /// it keeps locally.
    pub(super) fn fits_in_quota(&self, node: usize, requests: &mut [(Option<usize>, i64)]) -> bool {
        let mut fits = true;
        for (f, v) in requests {
            let (quota, used, local) = match *f {
                Some(f) => (
                    self.subtree(node, f),
                    self.usage_of(node, f),
                    self.local_available(node, f),
                ),
                None => (0, 0, 0),
            };
            if quota < used.saturating_add(*v) {
                fits = false;
            }
            *v = v.saturating_sub(local).max(0);
        }
        fits
    }

    /// `ClusterQueueSnapshot.BorrowingWith`: usage past the queue's nominal quota with `val`
    /// more.
    pub fn queue_borrowing_with(&self, q: QueueId, fr: &FlavorResource, val: i64) -> bool {
        self.quota(q, fr).nominal < self.usage(q, fr).saturating_add(val)
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
        self.borrowing_height_of(q, self.id(fr), val)
    }

    /// [`Self::borrowing_height`] by the flavor-resource's id.
    pub fn borrowing_height_of(&self, q: QueueId, f: Option<usize>, val: i64) -> (usize, bool) {
        let parent = self.nodes[q.0].parent;
        let Some(f) = f else {
            // No quota for it anywhere: the whole tree is short of it.
            let root = self.ancestors(q.0).last().unwrap_or(q.0);
            return match (val > 0, parent) {
                (false, _) | (_, None) => (0, parent.is_some()),
                (true, Some(_)) => (self.height(root), false),
            };
        };
        let fr = f;
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

/// Flavor-resource → dense id, looked up by flavor, then resource.
#[derive(Debug, Clone, Default)]
struct FrIds {
    by_flavor: BTreeMap<String, BTreeMap<String, usize>>,
    len: usize,
    /// Tables of one generation give every id the same flavor-resource: a table gets a new
    /// generation when built and when it gives out an id.
    generation: u64,
}

/// A new [`FrIds::generation`] (0 is none: never equal to a table's).
fn next_generation() -> u64 {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Ids of some flavor-resources in the tables of one generation ([`QuotaTree::ids_of`]).
#[derive(Debug, Clone, Default)]
pub struct FrIdsOf {
    pub generation: u64,
    pub ids: Vec<usize>,
}

impl FrIds {
    fn get(&self, flavor: &str, resource: &str) -> Option<usize> {
        self.by_flavor.get(flavor)?.get(resource).copied()
    }

    fn id_or_add(&mut self, (flavor, resource): &FlavorResource) -> usize {
        let next = self.len;
        let id = *(self.by_flavor.entry(flavor.clone()).or_default())
            .entry(resource.clone())
            .or_insert(next);
        if id == next {
            self.len += 1;
        }
        id
    }

    fn len(&self) -> usize {
        self.len
    }
}

impl Node {
    fn new(name: &str, quotas: Vec<Option<ResourceQuota>>, frs: usize) -> Node {
        Node {
            name: name.to_string(),
            parent: None,
            child_cohorts: Vec::new(),
            child_queues: Vec::new(),
            quotas,
            subtree_quota: vec![0; frs],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flavor-resource no quota names (a running Workload's usage can have one) gets an id
    /// later; the usage already counted, in every node, and the snapshots taken before, stay.
    #[test]
    fn a_new_flavor_resource_keeps_the_usage_counted() {
        let fr = |f: &str| (f.to_string(), "nvidia.com/gpu".to_string());
        let quota = |nominal| ResourceQuota {
            nominal,
            ..ResourceQuota::default()
        };
        let queue = |name: &str, nominal| ClusterQueue {
            name: name.into(),
            cohort: Some("all".into()),
            quotas: BTreeMap::from([(fr("a100"), quota(nominal))]),
            ..ClusterQueue::default()
        };
        let (mut tree, _) = QuotaTree::new(&[queue("a", 4), queue("b", 8)], &[]);
        let (a, b) = (tree.queue("a").unwrap(), tree.queue("b").unwrap());
        tree.add_usage(a, &fr("a100"), 6); // borrows 2 from the cohort
        tree.add_usage(b, &fr("a100"), 3);
        let before = tree.clone();
        tree.add_usage(b, &fr("h100"), 2);
        assert_eq!(tree.usage(a, &fr("a100")), 6);
        assert_eq!(tree.usage(b, &fr("a100")), 3);
        assert_eq!(tree.usage(b, &fr("h100")), 2);
        assert_eq!(tree.available(a, &fr("a100")), 3);
        assert_eq!(tree.available(b, &fr("a100")), 3);
        assert_eq!(before.usage(b, &fr("h100")), 0);
        assert_eq!(before.available(a, &fr("a100")), 3);
        tree.remove_usage(a, &fr("a100"), 6);
        assert_eq!(tree.available(a, &fr("a100")), 9);
        assert_eq!(before.usage(a, &fr("a100")), 6);
        // A snapshot copied into again takes the tree's shape and usage, new ids included.
        let mut snapshot = before.clone();
        snapshot.add_usage(a, &fr("a100"), 1);
        snapshot.copy_from(&tree);
        assert_eq!(format!("{snapshot:?}"), format!("{tree:?}"));
        assert_eq!(snapshot.usage(b, &fr("h100")), 2);
        assert_eq!(snapshot.available(a, &fr("a100")), 9);
    }

    /// A place's id is the id of its names, for the groups the tree was built with only, and
    /// is not known by place once a flavor-resource is registered later.
    #[test]
    fn places_give_the_ids_of_their_names() {
        let groups: Arc<[ResourceGroup]> = Arc::from(vec![ResourceGroup {
            covered_resources: vec!["cpu".into(), "nvidia.com/gpu".into()],
            flavors: vec!["a100".into(), "h100".into(), "missing".into()],
        }]);
        let quota = ResourceQuota::default();
        let quotas = (["a100", "h100"].iter())
            .flat_map(|f| {
                ["cpu", "nvidia.com/gpu"].map(|r| ((f.to_string(), r.to_string()), quota))
            })
            .collect();
        let queue = ClusterQueue {
            name: "a".into(),
            resource_groups: Arc::clone(&groups),
            quotas,
            ..ClusterQueue::default()
        };
        let (mut tree, _) = QuotaTree::new(&[queue], &[]);
        let a = tree.queue("a").unwrap();
        for (f, flavor) in groups[0].flavors.iter().enumerate() {
            for (r, resource) in groups[0].covered_resources.iter().enumerate() {
                let by_name = tree.fr_id(flavor, resource);
                assert_eq!(tree.place_id(a, &groups, (0, f, r)), Some(by_name));
            }
        }
        assert_eq!(tree.place_id(a, &groups, (0, 2, 0)), Some(None));
        let copy: Arc<[ResourceGroup]> = Arc::from(groups.to_vec());
        assert_eq!(tree.place_id(a, &copy, (0, 0, 0)), None);
        tree.add_usage(a, &("missing".into(), "cpu".into()), 1);
        assert_eq!(tree.place_id(a, &groups, (0, 2, 0)), None);
    }
}
