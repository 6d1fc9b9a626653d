//! Recording a cycle for `schedsim explain` ([`crate::sched::explain`]): the Filter verdicts
//! of every node, from the same per-node checks the diagnosis of a pending pod runs; the
//! scores come from `select_host` itself, so an explanation is what the cycle computed.

use super::*;
use crate::sched::explain::{Explanation, FEASIBLE, NOT_EVALUATED};
use crate::sched::framework::names;
use crate::sched::plugins::registry::Plugin;

impl<'a> Scheduler<'a> {
    /// Whether the run records this pod's cycles.
    pub(super) fn explains(&self, pod: &Pod) -> bool {
        (self.config.explain.as_ref()).is_some_and(|pods| pods.contains(&pod.key()))
    }

    /// After a Filter pass that found feasible nodes: every node's verdict, the profile's
    /// Score weights; the scores follow in `select_host`. (Without a feasible node the
    /// explanation is made from the diagnosis PostFilter gets: [`Self::explain_failure`].)
    pub(super) fn start_explanation(
        &self,
        pod: &Pod,
        t: usize,
        request: &PodRequest,
        bound_filters: &BoundPodFilters,
        evaluated: &Evaluated,
    ) -> Explanation {
        let (d, _) = self.diagnose(pod, t, request, bound_filters, true);
        let mut feasible = vec![false; self.cluster.len()];
        for f in &self.feasible {
            feasible[f.node as usize] = true;
        }
        let verdicts = (0..self.cluster.len())
            .map(|n| match (d.node_status.get(n), feasible[n]) {
                (_, true) => FEASIBLE,
                (Some(&s), false) if s != PASS => s,
                _ => NOT_EVALUATED,
            })
            .collect();
        self.explanation(evaluated, failures(&d), verdicts)
    }

    /// An explanation with its verdicts, before the scores.
    fn explanation(
        &self,
        evaluated: &Evaluated,
        failures: Vec<(String, String)>,
        verdicts: Vec<u16>,
    ) -> Explanation {
        Explanation {
            profile: self.profile().scheduler_name.clone(),
            evaluated_nodes: evaluated.nodes,
            feasible_nodes: evaluated.feasible,
            failures,
            verdicts,
            scored: Vec::new(),
            weights: self.score_weights(),
            ties: Vec::new(),
            chosen: None,
            node_names: Arc::from([]),
            pre_filter: Default::default(),
            devices: Vec::new(),
            devices_elsewhere: Vec::new(),
            preemption: None,
        }
    }

    /// The explanation of a cycle that found no feasible node, from its diagnosis (after the
    /// Filter pass, or a PreFilter's rejection): the cycle's node counts come with its
    /// outcome ([`Self::record_explanation`]).
    pub(super) fn explain_failure(&mut self, d: &Diagnosis) {
        self.explaining = Some(self.explanation_of(d));
    }

    /// An explanation (without scores) from a diagnosis' per-node statuses; its node counts
    /// come from the cycle's outcome ([`Self::record_explanation`]).
    fn explanation_of(&self, d: &Diagnosis) -> Explanation {
        let verdicts = (0..self.cluster.len())
            .map(|n| match d.node_status.get(n) {
                Some(&s) if s != PASS => s,
                Some(_) => FEASIBLE,
                None => NOT_EVALUATED,
            })
            .collect();
        let none = Evaluated {
            nodes: 0,
            feasible: 0,
        };
        self.explanation(&none, failures(d), verdicts)
    }

    /// Keeps the explanation of pod `id`'s cycle that ended in `outcome`: the one the cycle
    /// built, or, for a cycle that found no feasible node (or stopped at a PreFilter), the
    /// verdicts its diagnosis gives each node. A pod held at its gates, or never judged node
    /// by node (no profile serves it, it is terminating), had no Filter pass to explain.
    pub(super) fn record_explanation(&mut self, id: usize, pod: &Pod, outcome: &PodOutcome) {
        let mut e = match self.explaining.take() {
            Some(e) => e,
            None => match outcome.diagnosis.as_deref() {
                Some(d)
                    if outcome.phase != PodPhase::SchedulingGated && !d.node_status.is_empty() =>
                {
                    self.explanation_of(d)
                }
                _ => return,
            },
        };
        // A nominated pod's retry does not preempt again: the dry run that nominated it
        // still explains why it went there.
        if e.preemption.is_none() {
            e.preemption = (self
                .explained
                .get(&id)
                .and_then(|old| old.preemption.clone()))
            .map(|p| crate::sched::explain::Preemption { earlier: true, ..p });
        }
        if let Some(evaluated) = outcome.evaluated {
            (e.evaluated_nodes, e.feasible_nodes) = (evaluated.nodes, evaluated.feasible);
        }
        e.node_names = self.node_names();
        e.pre_filter = self.pre_filter_explained.take().unwrap_or_default();
        if (self.profile().framework).runs(ExtensionPoint::PreFilter, Plugin::NodeAffinity) {
            let added = self.profile().added_affinity.as_ref();
            e.pre_filter.node_affinity = node_affinity::describe(pod, added);
        }
        // The node the cycle chose; a later step (a gang's Permit, preemption) may still
        // leave the pod unscheduled.
        if outcome.phase == PodPhase::Scheduled {
            e.chosen = outcome.node;
            if let Some(node) = outcome.node {
                e.devices = self.dra_explain(node);
            }
        }
        for name in &self.config.explain_nodes {
            let Some(node) = self.cluster.index_of(name).filter(|&n| Some(n) != e.chosen) else {
                continue;
            };
            let devices = self.dra_explain(node);
            if !devices.is_empty() {
                e.devices_elsewhere.push((node, devices));
            }
        }
        self.explained.insert(id, e);
    }

    /// What PodTopologySpread's and InterPodAffinity's PreFilter (and the spread's PreScore)
    /// counted for the pod, kept for the cycle's explanation.
    pub(super) fn explain_pre_filter(
        &mut self,
        spread: Option<&SpreadSpec>,
        bound_filters: &BoundPodFilters,
    ) {
        let nodes = &self.cluster.nodes;
        let score = spread.filter(|sp| !sp.score.is_empty()).and_then(|sp| {
            let tally = &self.tallies.get(sp.index)?.1;
            Some(pod_topology_spread::describe_score(&sp.score, tally, nodes))
        });
        self.pre_filter_explained = Some(crate::sched::explain::PreFilterState {
            node_affinity: None,
            topology_spread_filter: (bound_filters.spread.as_ref())
                .map(|s| pod_topology_spread::describe_filter(s, nodes))
                .unwrap_or_default(),
            topology_spread_score: score.unwrap_or_default(),
            inter_pod_affinity: (bound_filters.affinity.as_ref())
                .map(|a| inter_pod_affinity::describe(a, &self.topology, nodes)),
            ..Default::default()
        });
    }

    /// The nodes' names, made once per node list.
    fn node_names(&mut self) -> Arc<[String]> {
        let nodes = &self.cluster.nodes;
        (self.node_names)
            .get_or_insert_with(|| nodes.iter().map(|n| n.name.clone()).collect())
            .clone()
    }

    /// The Score plugins of the cycle's profile with their weights, those that run.
    fn score_weights(&self) -> Vec<(&'static str, i64)> {
        let w = self.compiled().weights;
        let gpu = (crate::sched::gpu_share::policy::Policy::ALL.into_iter())
            .zip(w.gpu_share)
            .map(|(p, weight)| (Plugin::of_policy(p).name(), weight));
        [
            (names::NODE_RESOURCES_FIT, w.node_resources_fit),
            (
                names::NODE_RESOURCES_BALANCED_ALLOCATION,
                w.balanced_allocation,
            ),
            (names::TAINT_TOLERATION, w.taint_toleration),
            (names::NODE_AFFINITY, w.node_affinity),
            (names::POD_TOPOLOGY_SPREAD, w.pod_topology_spread),
            (names::INTER_POD_AFFINITY, w.inter_pod_affinity),
        ]
        .into_iter()
        .chain(gpu)
        .filter(|(_, weight)| *weight != 0)
        .collect()
    }
}

/// The diagnosis' statuses as the explanation keeps them: plugin and reasons, joined as
/// kube-scheduler joins them (node verdicts index them).
fn failures(d: &Diagnosis) -> Vec<(String, String)> {
    (d.statuses.iter())
        .map(|s| (s.plugin.to_string(), s.reasons.join(", ")))
        .collect()
}
