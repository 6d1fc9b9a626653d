//! The Filter pass of a cycle (`findNodesThatFitPod` and `findNodesThatPassFilters` in
//! `pkg/scheduler/schedule_one.go`): the nominated node first, then the template's candidates
//! in the node tree's order from `nextStartNodeIndex`, stopping once `numFeasibleNodesToFind`
//! are feasible ([`crate::sched::sampling`]); the start then moves past the nodes processed.

use std::ops::ControlFlow;

use super::template::StaticVerdicts;
use super::*;

/// Each node's position in the node tree's list.
pub(super) fn tree_positions(tree: &NodeTree, nodes: &[Node]) -> Vec<u32> {
    let index: HashMap<&str, u32> = (nodes.iter().enumerate())
        .map(|(i, n)| (n.name.as_str(), i as u32))
        .collect();
    let mut position = vec![0; nodes.len()];
    for (p, name) in tree.list().into_iter().enumerate() {
        position[index[name] as usize] = p as u32;
    }
    position
}

/// The nodes that could take `pod` now (every filter passes), given the `existing` bound pods.
pub fn feasible_nodes(
    nodes: Vec<Node>,
    existing: &[Pod],
    pod: &Pod,
    config: &SchedulerConfig,
) -> Vec<String> {
    let all: Vec<&Pod> = existing.iter().chain([pod]).collect();
    let config = SchedulerConfig {
        node_sampling: NodeSampling::All,
        ..config.clone()
    };
    let mut s = Scheduler::new(
        Cluster::new(nodes, &all),
        &config,
        std::slice::from_ref(pod),
        existing,
    );
    for (i, p) in existing.iter().enumerate() {
        if let Some(node) = p.node_name.as_deref().and_then(|n| s.cluster.index_of(n)) {
            s.bind(node, existing_pod_id(i), p);
        }
    }
    let t = s.template_for(pod);
    if s.statics(t).pre_filter_reject.is_some() {
        return Vec::new();
    }
    let request = s.pod_request(pod);
    let (_, bound_filters) = s.pre_filter_bound(pod);
    if let Ok(Some(_)) | Err(_) = s.dra_pre_filter(pod) {
        return Vec::new();
    }
    if s.find_feasible(pod, t, &request, &bound_filters).is_err() {
        return Vec::new();
    }
    let mut nodes: Vec<usize> = s.feasible.iter().map(|f| f.node as usize).collect();
    nodes.sort_unstable();
    nodes
        .into_iter()
        .map(|n| s.cluster.nodes[n].name.clone())
        .collect()
}

impl<'a> Scheduler<'a> {
    /// Runs the Filter pass for `pod` into `self.feasible`: how many nodes it examined, or
    /// the cycle's outcome when it ends here (the nominated node passed every filter, or a
    /// Filter failed with an error).
    pub(super) fn filter_pass(
        &mut self,
        pod: &Pod,
        t: usize,
        request: &PodRequest,
        bound_filters: &BoundPodFilters,
    ) -> ControlFlow<PodOutcome, Evaluated> {
        // "NominatedNodeName" can be set in a previous cycle by preemption: that node is tried
        // first, and taken if it passes every filter (`evaluateNominatedNode`).
        let nominated = (pod.nominated_node_name.as_deref()).and_then(|n| self.cluster.index_of(n));
        let nominated_failed = match nominated {
            Some(node) => match self.passes_filters(pod, t, request, bound_filters, node) {
                Ok(true) => {
                    let mut outcome = scheduled(node);
                    outcome.evaluated = Some(Evaluated {
                        nodes: 1,
                        feasible: 1,
                    });
                    return ControlFlow::Break(outcome);
                }
                Ok(false) => Some(node),
                // Upstream logs the error and goes on to every node.
                Err(_) => None,
            },
            None => None,
        };
        let (mut processed, error) = match self.find_feasible(pod, t, request, bound_filters) {
            Ok(processed) => (processed, None),
            Err((processed, e)) => (processed, Some(e)),
        };
        if let Some(node) = nominated_failed
            && !self.walked(t, node, processed)
        {
            // Its status from the first try is among the statuses `processedNodes` counts.
            processed += 1;
        }
        // Advanced whether or not the pass failed, "to make sure that all the nodes have a
        // chance to be searched".
        self.next_start = (self.next_start + processed) % self.cluster.len();
        let evaluated = Evaluated {
            nodes: processed,
            feasible: self.feasible.len(),
        };
        match error {
            // `RunFilterPlugins`' wrapping of a Filter error.
            Some(e) => ControlFlow::Break(scheduler_error(format!(
                "running {:?} filter plugin: {e}",
                dynamic_resources::NAME
            ))),
            None => ControlFlow::Continue(evaluated),
        }
    }

    /// A failed cycle kept in `failures` happens again: the Filter pass walks the same nodes
    /// and the preemption dry run draws its offset again.
    pub(super) fn replay(&mut self, preemption_draw: Option<usize>, outcome: &PodOutcome) {
        let processed = outcome.evaluated.map_or(0, |e| e.nodes);
        self.next_start = (self.next_start + processed) % self.cluster.len();
        if let Some(nodes) = preemption_draw {
            self.preemption_rng.random_range(0..nodes);
        }
    }

    /// `findNodesThatPassFilters`: walks the template's candidates in the node tree's order
    /// from `nextStartNodeIndex`, keeping those that pass the per-pod filters (resources, the
    /// bound pods' filters, DynamicResources; where pods it yields to are nominated, also with
    /// them added) with their resource scores, until it has found
    /// `numFeasibleNodesToFind` of them. Returns how many nodes it processed (the candidates
    /// and the nodes between them, which failed a static filter), or the first Filter error.
    ///
    /// A template's pods share one request, so a node's fit and resource score are cached on
    /// the candidate and recomputed only when the node's usage changed since.
    pub(super) fn find_feasible(
        &mut self,
        pod: &Pod,
        t: usize,
        request: &PodRequest,
        bound_filters: &BoundPodFilters,
    ) -> Result<usize, (usize, String)> {
        let mut seen_version = std::mem::take(&mut self.templates[t].seen_version);
        let mut resources = std::mem::take(&mut self.templates[t].resources);
        let mut feasible = std::mem::take(&mut self.feasible);
        feasible.clear();
        let template = self.statics(t);
        let candidates = &template.candidates;
        let len = template.scan_len as usize;
        let (start, to_find) = (self.next_start, self.nodes_to_find(len));
        let compiled = &self.profiles[self.current];
        let (filter_fit, weights) = (compiled.fit_filter, compiled.weights);
        let balanced = weights.balanced_allocation != 0
            && match &compiled.balanced {
                Some(b) => !b.skips(request),
                None => !node_resources_balanced_allocation::skips(request),
            };
        let dra_filters = self.dra_filters();
        let gpu_filter = self.gpu_filters(pod);
        let nominated = !self.nominated_here.is_empty();
        // Candidate `i`: `Some` ends the walk, with the nodes processed or the error.
        let mut visit = |i: usize| -> Option<Result<usize, (usize, String)>> {
            let c = &candidates[i];
            let node = c.node as usize;
            let version = self.cluster.version(node);
            if seen_version[i] != version {
                seen_version[i] = version;
                let res = self.cluster.resources(node);
                resources[i] = if !filter_fit || node_resources_fit::fits(request, res) {
                    let mut score = 0;
                    if weights.node_resources_fit != 0 {
                        score += weights.node_resources_fit
                            * match &compiled.fit {
                                Some(f) => f.score(request, res),
                                None => node_resources_fit::score_least_allocated(request, res),
                            };
                    }
                    if balanced {
                        score += weights.balanced_allocation
                            * match &compiled.balanced {
                                Some(b) => b.score(request, res),
                                None => node_resources_balanced_allocation::score(request, res),
                            };
                    }
                    score
                } else {
                    NOT_FEASIBLE
                };
            }
            if resources[i] == NOT_FEASIBLE || !bound_filters.pass(node) {
                return None;
            }
            if gpu_filter && !self.gpu_passes(pod, node) {
                return None;
            }
            if nominated && self.nominated_on(node).is_some_and(|n| !n.passes()) {
                return None;
            }
            if dra_filters {
                match self.dra_passes(pod, node) {
                    Ok(true) => {}
                    Ok(false) => return None,
                    Err(e) => {
                        let processed = sampling::processed_until(start, c.pos as usize, len);
                        return Some(Err((processed - 1, e)));
                    }
                }
            }
            feasible.push(Feasible {
                node: c.node,
                affinity: c.affinity,
                taint: c.taint,
                resources: resources[i],
            });
            (feasible.len() == to_find)
                .then(|| Ok(sampling::processed_until(start, c.pos as usize, len)))
        };
        // The nodes NodeResourcesFit might pass: a walk skips those a device count rules out
        // (their visit would find them infeasible), in its own order all the same.
        let room = match filter_fit && !self.config.reference_run {
            true => (request.sparse.iter())
                .find_map(|&(r, amount)| self.cluster.slots_with_room(r, amount)),
            false => None,
        };
        let slots = self.cluster.len();
        let in_walk = |k: usize| template.scan.as_ref().map_or(k, |order| order[k] as usize);
        let end = if to_find > candidates.len() && !dra_filters {
            // Enough can never be found: the whole walk, in any order (the pick reads none).
            match room {
                Some(room) => (template.candidate_slots.common(room, 0, slots)).for_each(|k| {
                    visit(in_walk(k));
                }),
                None => (0..candidates.len()).for_each(|i| {
                    visit(i);
                }),
            }
            None
        } else {
            let offset = if len == 0 { 0 } else { (start % len) as u32 };
            // The first candidate walked (its place in the walk's order), then on and round.
            let first = match &template.scan {
                None => candidates.partition_point(|c| c.pos < offset),
                Some(order) => order.partition_point(|&i| candidates[i as usize].pos < offset),
            };
            match (&template.scan, room) {
                (_, Some(room)) => {
                    let from = match first < candidates.len() {
                        true => self.tree_position[candidates[in_walk(first)].node as usize],
                        false => slots as u32,
                    } as usize;
                    let set = &template.candidate_slots;
                    (set.common(room, from, slots)
                        .chain(set.common(room, 0, from)))
                    .find_map(|k| visit(in_walk(k)))
                }
                (None, None) => ((first..candidates.len()).find_map(&mut visit))
                    .or_else(|| (0..first).find_map(&mut visit)),
                (Some(order), None) => {
                    (order[first..].iter().chain(&order[..first])).find_map(|&i| visit(i as usize))
                }
            }
        };
        self.templates[t].seen_version = seen_version;
        self.templates[t].resources = resources;
        self.feasible = feasible;
        end.unwrap_or(Ok(len))
    }

    /// Whether `node` passes every filter for the pod in the cycle, with the pods nominated
    /// there and without them (`evaluateNominatedNode`'s Filter on one node). A node NodeAffinity's PreFilter result leaves out fails its
    /// Filter too: both read the same terms.
    pub(super) fn passes_filters(
        &self,
        pod: &Pod,
        t: usize,
        request: &PodRequest,
        bound_filters: &BoundPodFilters,
        node: usize,
    ) -> Result<bool, String> {
        let fits = || {
            !self.compiled().fit_filter
                || node_resources_fit::fits(request, self.cluster.resources(node))
        };
        if self.statics(t).static_verdict.get(node) != PASS
            || !fits()
            || !bound_filters.pass(node)
            || self.nominated_on(node).is_some_and(|n| !n.passes())
            || (self.gpu_filters(pod) && !self.gpu_passes(pod, node))
        {
            return Ok(false);
        }
        match self.dra_filters() {
            true => self.dra_passes(pod, node),
            false => Ok(true),
        }
    }

    /// Whether the Filter pass that started at `nextStartNodeIndex` and processed `processed`
    /// nodes came to `node`.
    pub(super) fn walked(&self, t: usize, node: usize, processed: usize) -> bool {
        let template = self.statics(t);
        let len = template.scan_len as usize;
        let tree = &self.tree_position;
        let position = match &template.static_verdict {
            StaticVerdicts::Dense(_) => tree[node] as usize,
            StaticVerdicts::Narrowed { nodes, .. } => {
                if nodes
                    .binary_search_by_key(&(node as u32), |&(n, _)| n)
                    .is_err()
                {
                    return false;
                }
                (nodes.iter())
                    .filter(|&&(i, _)| tree[i as usize] < tree[node])
                    .count()
            }
        };
        if len == 0 {
            return false;
        }
        (position + len - self.next_start % len) % len < processed
    }

    /// `numFeasibleNodesToFind` for a walk over `len` nodes with the current profile: 1 for a
    /// profile without Score plugins (`hasScoring`; schedsim has no extenders), all of them
    /// when the run examines every node.
    fn nodes_to_find(&self, len: usize) -> usize {
        let profile = self.profile();
        match self.config.node_sampling {
            NodeSampling::All => usize::MAX,
            NodeSampling::Upstream if profile.framework.at(ExtensionPoint::Score).is_empty() => 1,
            NodeSampling::Upstream => {
                sampling::num_feasible_nodes_to_find(profile.percentage_of_nodes_to_score, len)
            }
        }
    }
}
