//! Score and select: the profile's weighted scores over the feasible nodes and upstream's
//! uniform tie-break (`prioritizeNodes`, and `selectHost`'s reservoir sampling in 1.27–1.34).

use super::*;
use crate::sched::explain::{Explanation, PluginScore, ScoredNode};
use crate::sched::framework::names;

impl<'a> Scheduler<'a> {
    /// NormalizeScore, weights, and a seeded uniform pick among the top-scored nodes. With
    /// `explain`, each feasible node's score per plugin and the tie go into it.
    pub(super) fn select_host(
        &mut self,
        pod: &Pod,
        request: &PodRequest,
        spread: Option<&SpreadSpec>,
        mut explain: Option<&mut Explanation>,
    ) -> usize {
        let mut gpu_parts = Vec::new();
        let gpu_scores = self.gpu_scores(pod, explain.is_some().then_some(&mut gpu_parts));
        let compiled = &self.profiles[self.current];
        let (profile, w) = (&compiled.profile, compiled.weights);
        let (hard_weight, ignore_existing) = (
            profile.hard_pod_affinity_weight,
            profile.ignore_preferred_terms_of_existing_pods,
        );
        let spread = spread.filter(|_| w.pod_topology_spread != 0);
        let mut spread_raw: Vec<Option<i64>> = Vec::new();
        let spread_scores: Vec<i64> = match spread.filter(|s| !s.score.is_empty()) {
            Some(s) => {
                let nodes: Vec<usize> = self.feasible.iter().map(|f| f.node as usize).collect();
                let tally = &self.tallies[s.index].1;
                if explain.is_some() {
                    spread_raw = pod_topology_spread::raw_scores(&s.score, &nodes, tally);
                }
                pod_topology_spread::score(&s.score, &nodes, tally)
            }
            None => Vec::new(),
        };
        // InterPodAffinity's score, when the pod or a bound pod has pod (anti-)affinity terms.
        let (pref_affinity, pref_anti) = inter_pod_affinity::preferred_terms(pod);
        let mut pod_affinity: Vec<i64> = Vec::new();
        // `IgnorePreferredTermsOfExistingPods`: PreScore skips a pod without preferred terms.
        let has_preferred = !pref_affinity.is_empty() || !pref_anti.is_empty();
        let active = w.inter_pod_affinity != 0
            && (has_preferred || !ignore_existing && self.bound_with_pod_affinity > 0);
        let scores = active
            .then(|| {
                self.with_topology(|s, topo| {
                    let (ns, nodes) = (&s.config.namespaces, &s.cluster.nodes);
                    inter_pod_affinity::pre_score(
                        pod,
                        s.bound_pods(&Removed::default()),
                        ns,
                        topo,
                        nodes,
                        hard_weight,
                    )
                })
            })
            .flatten();
        let mut pod_affinity_raw: Vec<i64> = Vec::new();
        if let (Some(scores), true) = (&scores, explain.is_some())
            && let Some(pf) = self.pre_filter_explained.as_mut()
        {
            pf.inter_pod_affinity_score =
                scores.describe_scores(&self.topology, &self.cluster.nodes);
        }
        if let Some(scores) = scores {
            pod_affinity = self
                .feasible
                .iter()
                .map(|f| inter_pod_affinity::score(&scores, f.node as usize))
                .collect();
            if explain.is_some() {
                pod_affinity_raw = pod_affinity.clone();
            }
            inter_pod_affinity::normalize(&mut pod_affinity);
        }
        let max_affinity = self.feasible.iter().map(|f| f.affinity).max().unwrap_or(0);
        let max_taint = self.feasible.iter().map(|f| f.taint).max().unwrap_or(0);
        let mut best = i64::MIN;
        let mut ties: Vec<u32> = Vec::new();
        for (i, f) in self.feasible.iter().enumerate() {
            let affinity = normalize(f.affinity, max_affinity, false);
            let taint = normalize(f.taint, max_taint, true);
            let inter_pod = pod_affinity.get(i).copied().unwrap_or(0);
            let spread = spread_scores.get(i).copied().unwrap_or(0);
            let total = w.node_affinity * affinity
                + w.taint_toleration * taint
                + w.pod_topology_spread * spread
                + w.inter_pod_affinity * inter_pod
                + gpu_scores.get(i).copied().unwrap_or(0)
                + f.resources;
            if let Some(e) = explain.as_deref_mut() {
                let (fit, balanced) = self.resource_scores(request, f.node as usize);
                let part = |plugin, raw, normalized, weight| PluginScore {
                    plugin,
                    raw,
                    normalized,
                    weight,
                };
                let mut scores = vec![
                    part(names::NODE_RESOURCES_FIT, fit, fit, w.node_resources_fit),
                    part(
                        names::NODE_RESOURCES_BALANCED_ALLOCATION,
                        balanced,
                        balanced,
                        w.balanced_allocation,
                    ),
                    part(names::TAINT_TOLERATION, f.taint, taint, w.taint_toleration),
                    part(names::NODE_AFFINITY, f.affinity, affinity, w.node_affinity),
                    part(
                        names::POD_TOPOLOGY_SPREAD,
                        spread_raw.get(i).copied().flatten().unwrap_or(0),
                        spread,
                        w.pod_topology_spread,
                    ),
                    part(
                        names::INTER_POD_AFFINITY,
                        pod_affinity_raw.get(i).copied().unwrap_or(0),
                        inter_pod,
                        w.inter_pod_affinity,
                    ),
                ];
                for (plugin, weight, normalized) in &gpu_parts {
                    scores.push(part(plugin, normalized[i], normalized[i], *weight));
                }
                scores.retain(|s| s.weight != 0);
                e.scored.push(ScoredNode {
                    node: f.node as usize,
                    scores,
                    total,
                });
            }
            if total > best {
                best = total;
                ties.clear();
            }
            if total == best {
                ties.push(f.node);
            }
        }
        if let Some(e) = explain.as_deref_mut() {
            e.ties = ties.iter().map(|&n| n as usize).collect();
            e.ties.sort_unstable();
        }
        let chosen = match ties.len() {
            1 => ties[0] as usize,
            // The feasible nodes come in the Filter pass's order, which moves from pod to pod
            // (and upstream's, from parallel workers, varies): the seeded pick counts the ties
            // in node order instead, so that it does not depend on where the pass started.
            n => {
                let pick = self.rng.random_range(0..n);
                match ties.is_sorted() {
                    true => ties[pick] as usize,
                    false => *ties.select_nth_unstable(pick).1 as usize,
                }
            }
        };
        if let Some(e) = explain {
            e.chosen = Some(chosen);
        }
        chosen
    }

    /// NodeResourcesFit's and NodeResourcesBalancedAllocation's scores of a node, each
    /// unweighted (the Filter pass keeps only their weighted sum); 0 for one that does not
    /// run or skips the pod.
    fn resource_scores(&self, request: &PodRequest, node: usize) -> (i64, i64) {
        let compiled = self.compiled();
        let w = compiled.weights;
        let res = self.cluster.resources(node);
        let fit = match (w.node_resources_fit, &compiled.fit) {
            (0, _) => 0,
            (_, Some(f)) => f.score(request, res),
            (_, None) => node_resources_fit::score_least_allocated(request, res),
        };
        let balanced = match (w.balanced_allocation, &compiled.balanced) {
            (0, _) => 0,
            (_, Some(b)) if b.skips(request) => 0,
            (_, Some(b)) => b.score(request, res),
            (_, None) if node_resources_balanced_allocation::skips(request) => 0,
            (_, None) => node_resources_balanced_allocation::score(request, res),
        };
        (fit, balanced)
    }
}

/// `helper.DefaultNormalizeScore(MaxNodeScore, reverse, scores)`.
pub(super) fn normalize(score: i64, max: i64, reverse: bool) -> i64 {
    if max == 0 {
        return if reverse { 100 } else { 0 };
    }
    let s = 100 * score / max;
    if reverse { 100 - s } else { s }
}
