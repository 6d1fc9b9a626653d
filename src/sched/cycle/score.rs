//! Score and select: the profile's weighted scores over the feasible nodes and upstream's
//! uniform tie-break (`prioritizeNodes`, and `selectHost`'s reservoir sampling in 1.27–1.34).

use super::*;

impl<'a> Scheduler<'a> {
    /// NormalizeScore, weights, and a seeded uniform pick among the top-scored nodes.
    pub(super) fn select_host(&mut self, pod: &Pod, spread: Option<&SpreadSpec>) -> usize {
        let gpu_scores = self.gpu_scores(pod);
        let compiled = &self.profiles[self.current];
        let (profile, w) = (&compiled.profile, compiled.weights);
        let (hard_weight, ignore_existing) = (
            profile.hard_pod_affinity_weight,
            profile.ignore_preferred_terms_of_existing_pods,
        );
        let spread = spread.filter(|_| w.pod_topology_spread != 0);
        let spread_scores: Vec<i64> = match spread.filter(|s| !s.score.is_empty()) {
            Some(s) => {
                let nodes: Vec<usize> = self.feasible.iter().map(|f| f.node as usize).collect();
                pod_topology_spread::score(&s.score, &nodes, &self.tallies[s.index].1)
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
        if let Some(scores) = scores {
            pod_affinity = self
                .feasible
                .iter()
                .map(|f| inter_pod_affinity::score(&scores, f.node as usize))
                .collect();
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
            if total > best {
                best = total;
                ties.clear();
            }
            if total == best {
                ties.push(f.node);
            }
        }
        if ties.len() == 1 {
            return ties[0] as usize;
        }
        // The feasible nodes come in the Filter pass's order, which moves from pod to pod (and
        // upstream's, from parallel workers, varies): the seeded pick counts the ties in node
        // order instead, so that it does not depend on where the pass started.
        let pick = self.rng.random_range(0..ties.len());
        match ties.is_sorted() {
            true => ties[pick] as usize,
            false => *ties.select_nth_unstable(pick).1 as usize,
        }
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
