//! How many nodes a scheduling cycle and a preemption look at: kube-scheduler's sampling.
//!
//! Upstream: `numFeasibleNodesToFind` and `findNodesThatPassFilters` in
//! `pkg/scheduler/schedule_one.go` (the Filter pass examines nodes from `nextStartNodeIndex`
//! and stops once it has found enough feasible ones; the index then moves past the nodes it
//! processed), `calculateNumCandidates` and `GetOffsetAndNumCandidates` in
//! `pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go` (preemption's dry
//! run starts at a random node and stops once it has enough candidates).
//!
//! Upstream filters nodes in parallel (16 workers), so which feasible nodes it finds before it
//! stops can vary from run to run; schedsim examines them one at a time in the node tree's
//! order, so a seed gives one answer.

use super::profile::PreemptionArgs;

/// `minFeasibleNodesToFind`: below this many nodes every node is examined, and no cycle looks
/// for fewer feasible nodes.
pub const MIN_FEASIBLE_NODES_TO_FIND: usize = 100;
/// `minFeasibleNodesPercentageToFind`: the adaptive percentage's floor.
pub const MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND: i64 = 5;

/// Whether a cycle samples the nodes as kube-scheduler does, or examines every node.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    clap::ValueEnum,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum NodeSampling {
    /// kube-scheduler's `percentageOfNodesToScore` sampling: a cycle stops once it has found
    /// `numFeasibleNodesToFind` feasible nodes, starting where the previous one stopped; a
    /// profile without Score plugins takes the first feasible node.
    #[default]
    Upstream,
    /// Every node is examined for every pod, whatever the profile's `percentageOfNodesToScore`
    /// (a profile without Score plugins then picks among all feasible nodes).
    All,
}

/// `numFeasibleNodesToFind`: once a cycle has found this many feasible nodes among
/// `num_all_nodes`, it stops looking. `percentage` is the profile's `percentageOfNodesToScore`,
/// else the global one; `None` or 0 is adaptive (50 % less 1 % per 125 nodes, at least 5 %).
pub fn num_feasible_nodes_to_find(percentage: Option<i32>, num_all_nodes: usize) -> usize {
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND {
        return num_all_nodes;
    }
    // Upstream computes in int32: clusters past 21 million nodes overflow there, not here.
    let n = num_all_nodes as i64;
    let mut percentage = i64::from(percentage.unwrap_or(0));
    if percentage == 0 {
        percentage = (50 - n / 125).max(MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND);
    }
    let num_nodes = (n * percentage / 100) as usize;
    num_nodes.max(MIN_FEASIBLE_NODES_TO_FIND)
}

/// `calculateNumCandidates`: how many preemption candidates the dry run looks for among
/// `num_nodes` nodes where preemption might help (never more than there are).
pub fn num_candidates(args: PreemptionArgs, num_nodes: usize) -> usize {
    let n = num_nodes as i64 * i64::from(args.min_candidate_nodes_percentage) / 100;
    let n = n.max(i64::from(args.min_candidate_nodes_absolute));
    (n as usize).min(num_nodes)
}

/// How many nodes of a list of `len` a walk from `start` processed when it stopped at the
/// node at `stop` (inclusive: it was examined), as `processedNodes` counts them.
pub fn processed_until(start: usize, stop: usize, len: usize) -> usize {
    if len == 0 {
        return 0;
    }
    (stop + len - start % len) % len + 1
}
