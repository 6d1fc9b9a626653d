//! What a scheduling cycle saw, for `schedsim explain` (issue 29): every node's Filter verdict,
//! and each feasible node's score per Score plugin (raw, normalized, weight) with the total and
//! the tie the seeded pick broke; the PreFilter/PreScore state, preemption's dry run and the
//! DRA devices of the chosen node (and of nodes asked about). Recorded only for the pods asked
//! about, in their last cycle.

use serde::Serialize;

/// One explained cycle. Kept compact, since every pending pod of a cluster may be explained:
/// two bytes of verdict per node, and parts only for the nodes that were scored.
#[derive(Debug, Clone, PartialEq)]
pub struct Explanation {
    /// The profile (`schedulerName`) that ran the cycle.
    pub profile: String,
    /// Nodes the Filter pass looked at before it stopped (`percentageOfNodesToScore`), and
    /// those it found feasible.
    pub evaluated_nodes: usize,
    pub feasible_nodes: usize,
    /// The distinct failures: the Filter plugin and its reason (kube-scheduler's text).
    pub failures: Vec<(String, String)>,
    /// Per node, in node order: [`FEASIBLE`], [`NOT_EVALUATED`], or an index into `failures`.
    pub verdicts: Vec<u16>,
    /// The nodes that were scored, in the Filter pass's order.
    pub scored: Vec<ScoredNode>,
    /// The Score plugins that ran, with their weights, in the profile's order.
    pub weights: Vec<(&'static str, i64)>,
    /// The nodes that share the best total (node indices), when the scores ran.
    pub ties: Vec<usize>,
    /// The node the cycle chose (by the seeded pick among `ties` when there are several),
    /// even when a later step (a gang's Permit) left the pod unscheduled.
    pub chosen: Option<usize>,
    /// The nodes' names at the cycle (a timeline may change the node list later).
    pub node_names: std::sync::Arc<[String]>,
    /// DynamicResources on the chosen node: per claim and request, the devices picked and
    /// why each other device there was not.
    pub devices: Vec<crate::dra::allocator::ClaimDevices>,
    /// The same on each node asked about (`--node`) other than the chosen one, by node:
    /// there nothing is picked when the claims cannot all be allocated.
    pub devices_elsewhere: Vec<(usize, Vec<crate::dra::allocator::ClaimDevices>)>,
    /// What the PreFilter and PreScore plugins computed for the pod, shown once per cycle.
    pub pre_filter: PreFilterState,
    /// DefaultPreemption's dry run, when the cycle found no feasible node and it ran; kept
    /// from an earlier cycle when a later one (the nominated pod's retry) did not preempt.
    pub preemption: Option<Preemption>,
}

/// What DefaultPreemption's dry run found (`DryRunPreemption`) and how it picked
/// (`pickOneNodeForPreemption`).
#[derive(Debug, Clone, PartialEq)]
pub struct Preemption {
    /// The nodes preemption might help (not `UnschedulableAndUnresolvable`).
    pub might_help: usize,
    /// The candidates, in the order the dry run found them (it starts at a random node and
    /// stops once it has enough: `numCandidates`).
    pub candidates: Vec<PreemptionCandidate>,
    /// The candidate picked, by index.
    pub chosen: Option<usize>,
    /// Why there was no preemption (`preemption: …`), when there was none.
    pub message: Option<String>,
    /// From an earlier cycle of the pod (the one that nominated it).
    pub earlier: bool,
}

/// A node where evicting lower-priority pods would make room.
#[derive(Debug, Clone, PartialEq)]
pub struct PreemptionCandidate {
    /// By name: a nominated pod's later cycle keeps the dry run, and a timeline may have
    /// changed the node list in between.
    pub node: String,
    /// `namespace/name` and priority, most important first.
    pub victims: Vec<(String, i32)>,
    /// Victims a PodDisruptionBudget protects.
    pub pdb_violations: usize,
    /// The first criterion of `pickOneNodeForPreemption` on which it lost to the chosen
    /// candidate (`None` for the chosen one).
    pub lost_on: Option<&'static str>,
}

/// Passed every Filter plugin.
pub const FEASIBLE: u16 = u16::MAX;
/// Passed the filters that ran, but the Filter pass had found enough feasible nodes before it
/// reached this one (`percentageOfNodesToScore`).
pub const NOT_EVALUATED: u16 = u16::MAX - 1;

/// A scored node: each plugin's part, and the total.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoredNode {
    pub node: usize,
    pub scores: Vec<PluginScore>,
    /// Σ weight × normalized score.
    pub total: i64,
}

/// A node's Filter verdict, for the report.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase", tag = "kind")]
pub enum Verdict {
    /// Passed every Filter plugin.
    Feasible,
    /// The first Filter plugin that failed it, and its reason.
    Failed { plugin: String, reason: String },
    /// Passed the filters that ran, but the Filter pass stopped before it.
    NotEvaluated,
}

impl Explanation {
    /// Node `n`'s verdict.
    pub fn verdict(&self, n: usize) -> Verdict {
        match self.verdicts[n] {
            FEASIBLE => Verdict::Feasible,
            NOT_EVALUATED => Verdict::NotEvaluated,
            i => {
                let (plugin, reason) = &self.failures[i as usize];
                Verdict::Failed {
                    plugin: plugin.clone(),
                    reason: reason.clone(),
                }
            }
        }
    }
}

/// One Score plugin's part of a node's total.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginScore {
    pub plugin: &'static str,
    /// What Score returned, before NormalizeScore (the same as `normalized` for the plugins
    /// that have no NormalizeScore).
    pub raw: i64,
    /// 0–100 after NormalizeScore.
    pub normalized: i64,
    pub weight: i64,
}

impl PluginScore {
    /// Its contribution to the total.
    pub fn weighted(&self) -> i64 {
        self.weight * self.normalized
    }
}

/// The PreFilter/PreScore results that narrow or weigh the nodes, once per cycle: the nodes
/// NodeAffinity's PreFilter names and the pod's node constraints; PodTopologySpread's
/// matching pods per domain (Filter's global minimum too); InterPodAffinity's counts per
/// topology pair.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreFilterState {
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_affinity: Option<NodeAffinityState>,
    /// `whenUnsatisfiable: DoNotSchedule` constraints (Filter).
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub topology_spread_filter: Vec<SpreadCounts>,
    /// `ScheduleAnyway` constraints, the profile's defaults included (Score).
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub topology_spread_score: Vec<SpreadCounts>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub inter_pod_affinity: Option<AffinityCounts>,
    /// InterPodAffinity's PreScore: the weight per topology pair each node's raw score sums.
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub inter_pod_affinity_score: Vec<DomainScore>,
    /// Pairs of `inter_pod_affinity_score` not listed (a report lists the first few).
    #[serde(default)]
    #[serde(skip_serializing_if = "crate::sched::framework::is_zero")]
    pub inter_pod_affinity_score_omitted: usize,
}

impl PreFilterState {
    pub fn is_empty(&self) -> bool {
        *self == PreFilterState::default()
    }
}

pub use crate::sched::plugins::inter_pod_affinity::{AffinityCounts, DomainScore};
pub use crate::sched::plugins::node_affinity::NodeAffinityState;
pub use crate::sched::plugins::pod_topology_spread::{DomainCount, SpreadCounts};
