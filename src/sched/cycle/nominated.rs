//! Pods nominated to nodes, as a cycle's filters count them. A pod nominated by an earlier
//! preemption waits for its victims to terminate; meanwhile, when the Filter of another pod
//! runs on that node, the nominated pods of equal or higher priority are added to the node
//! first (`addGENominatedPods`) and the filters must pass both with them and without them
//! (`RunFilterPluginsWithNominatedPods`, kubernetes
//! `pkg/scheduler/framework/runtime/framework.go`): a pod yields the room freed for a pod it
//! must not overtake, and takes room freed for a lower-priority one. Preemption's dry run
//! (`SelectVictimsOnNode`) asks the same question with the victims removed.
//!
//! The nominations are the scheduling queue's nominator (`backend/queue/nominator.go`), which
//! the caller keeps here ([`Scheduler::nominate`], [`Scheduler::set_nominations`]). The
//! filters with nominated pods added are run by binding those pods for a moment: what the
//! plugins' `AddPod` PreFilter extensions compute is what their PreFilter computes with the
//! pod bound.

use super::*;

/// Which pods are nominated to which node, in nomination order (`NominatedPodsForNode`).
#[derive(Debug, Default)]
pub(crate) struct Nominations {
    by_node: BTreeMap<String, Vec<usize>>,
    node_of: HashMap<usize, String>,
}

/// A node where pods of equal or higher priority than the pod in the cycle are nominated,
/// and what the filters that read a node's pods say with them added.
#[derive(Debug)]
pub(super) struct NominatedNode {
    pub node: usize,
    /// The nominated pods of equal or higher priority, in nomination order.
    pub pods: Vec<usize>,
    /// NodeResourcesFit with them added (success when it passes or does not run).
    fit: Status,
    /// PodTopologySpread and InterPodAffinity with them added.
    spread: Status,
    affinity: Status,
}

impl NominatedNode {
    /// The first pass passes: the pod fits with the nominated pods added.
    pub fn passes(&self) -> bool {
        self.fit.is_success() && self.spread.is_success() && self.affinity.is_success()
    }

    /// The first pass's status of one of the filters that read the node's pods.
    pub fn status(&self, plugin: Plugin) -> &Status {
        match plugin {
            Plugin::NodeResourcesFit => &self.fit,
            Plugin::PodTopologySpread => &self.spread,
            _ => &self.affinity,
        }
    }
}

impl Scheduler<'_> {
    /// The nominator records pod `id` on `node`, or drops its nomination (`None`): a
    /// nomination moves to the end of its node's list (`AddNominatedPod` deletes first).
    pub(crate) fn nominate(&mut self, id: usize, node: Option<&str>) {
        let n = &mut self.nominations;
        let old = n.node_of.remove(&id);
        if let Some(old) = &old
            && let Some(list) = n.by_node.get_mut(old)
        {
            list.retain(|p| *p != id);
            if list.is_empty() {
                n.by_node.remove(old);
            }
        }
        if let Some(node) = node {
            n.node_of.insert(id, node.to_string());
            n.by_node.entry(node.to_string()).or_default().push(id);
        }
        // A node not in the cluster changes no node's filters.
        for name in old.iter().map(String::as_str).chain(node) {
            match self.cluster.index_of(name) {
                Some(index) => self.changed(index),
                None => self.mutations += 1,
            }
        }
    }

    /// Whether the nominator records pod `id`.
    pub(crate) fn is_nominated(&self, id: usize) -> bool {
        self.nominations.node_of.contains_key(&id)
    }

    /// Replaces every nomination with the nominator's: per node name, the pods in nomination
    /// order. The nodes whose list differs are the ones that changed.
    pub(crate) fn set_nominations(
        &mut self,
        by_node: impl IntoIterator<Item = (String, Vec<usize>)>,
    ) {
        let n = &mut self.nominations;
        let old = std::mem::take(&mut n.by_node);
        n.node_of.clear();
        for (node, pods) in by_node {
            for &p in &pods {
                n.node_of.insert(p, node.clone());
            }
            if !pods.is_empty() {
                n.by_node.insert(node, pods);
            }
        }
        let new = &self.nominations.by_node;
        let changed: Vec<Option<usize>> = (old.iter())
            .filter(|(node, pods)| new.get(*node) != Some(pods))
            .map(|(node, _)| node)
            .chain(new.keys().filter(|node| !old.contains_key(*node)))
            .map(|name| self.cluster.index_of(name))
            .collect();
        // A node not in the cluster changes no node's filters.
        for node in changed {
            match node {
                Some(node) => self.changed(node),
                None => self.mutations += 1,
            }
        }
    }

    /// `addGENominatedPods` on every node, before the Filter pass of pod `id`: the nodes
    /// where pods of equal or higher priority (other than the pod) are nominated, in node
    /// order, with the filters' first pass on each. Nothing to do without nominations.
    pub(super) fn prepare_nominated(&mut self, id: usize, pod: &Pod, request: &PodRequest) {
        self.nominated_here.clear();
        if self.nominations.by_node.is_empty() {
            return;
        }
        let mut nodes: Vec<(usize, Vec<usize>)> = (self.nominations.by_node.iter())
            .filter_map(|(name, ids)| {
                let node = self.cluster.index_of(name)?;
                let pods: Vec<usize> = (ids.iter().copied())
                    .filter(|&p| {
                        p != id
                            && self
                                .known_pod(p)
                                .is_some_and(|n| n.priority >= pod.priority)
                    })
                    .collect();
                (!pods.is_empty()).then_some((node, pods))
            })
            .collect();
        nodes.sort_unstable_by_key(|(node, _)| *node);
        for (node, pods) in nodes {
            let fit_filter = self.compiled().fit_filter;
            let (fit, spread, affinity) = self.with_pods_on(node, &pods, |s| {
                let fit = match fit_filter {
                    true => node_resources_fit::check(request, s.cluster.resources(node))
                        .status(&s.cluster.table),
                    false => Status::success(),
                };
                let (_, filters) = s.pre_filter_bound(pod);
                let spread = filters.status(Plugin::PodTopologySpread, node);
                (fit, spread, filters.status(Plugin::InterPodAffinity, node))
            });
            self.nominated_here.push(NominatedNode {
                node,
                pods,
                fit,
                spread,
                affinity,
            });
        }
    }

    /// The node's nominated pods of equal or higher priority, for the pod in the cycle.
    #[inline]
    pub(super) fn nominated_on(&self, node: usize) -> Option<&NominatedNode> {
        match self.nominated_here.is_empty() {
            true => None,
            false => (self.nominated_here.binary_search_by_key(&node, |n| n.node))
                .ok()
                .map(|i| &self.nominated_here[i]),
        }
    }

    /// Runs `f` with `pods` bound to `node` for the while: a what-if, after which the state
    /// is as before (so a failed cycle kept since stays valid).
    pub(super) fn with_pods_on<T>(
        &mut self,
        node: usize,
        pods: &[usize],
        f: impl FnOnce(&mut Self) -> T,
    ) -> T {
        let mutations = self.mutations;
        for &p in pods {
            let pod = self.pod_handle(p);
            self.bind(node, p, &pod);
        }
        let out = f(self);
        for &p in pods.iter().rev() {
            if let Some(b) = self.take_off(node, p) {
                self.elect_representative(b.group, p);
            }
        }
        self.mutations = mutations;
        self.changes.rewind(mutations);
        out
    }

    /// A pod the scheduler knows by id, if it does.
    fn known_pod(&self, id: usize) -> Option<&Pod> {
        if let Some(p) = self.terminating_pod(id) {
            return Some(p);
        }
        (self
            .pods
            .get(id)
            .or_else(|| self.live.get(&id).map(|p| &**p)))
        .or_else(|| self.existing.get(usize::MAX.wrapping_sub(id)))
    }
}
