//! Why a pod is pending, worded exactly as kube-scheduler's `FitError.Error()` words it
//! (`pkg/scheduler/framework/types.go`) and the DefaultPreemption PostFilter appends
//! (`pkg/scheduler/framework/preemption/preemption.go`).

use std::collections::BTreeMap;

use super::framework::{Code, Status};

/// `NoNodeAvailableMsg`.
pub const NO_NODE_AVAILABLE_MSG: &str = "0/{} nodes are available";
/// `ErrNoNodesAvailable`.
pub const ERR_NO_NODES_AVAILABLE: &str = "no nodes available to schedule pods";
pub const PREEMPTION_NOT_HELPFUL: &str = "Preemption is not helpful for scheduling";
pub const NO_PREEMPTION_VICTIMS: &str = "No preemption victims found for incoming pod";
pub const NOT_ELIGIBLE_PREEMPTION_POLICY_NEVER: &str =
    "not eligible due to preemptionPolicy=Never.";

/// The statuses of one failed scheduling attempt.
#[derive(Debug, Clone, Default)]
pub struct Diagnosis {
    /// Per-node status, for the nodes that were evaluated (in node order).
    pub node_statuses: Vec<(usize, Status)>,
    /// Status of the nodes that were not evaluated (PreFilter narrowed them away).
    pub absent: Option<Status>,
    pub pre_filter_msg: Option<String>,
    pub post_filter_msg: Option<String>,
}

/// `FitError.Error()`.
pub fn fit_error_message(num_all_nodes: usize, d: &Diagnosis) -> String {
    let mut msg = format!("0/{num_all_nodes} nodes are available:");
    if let Some(pre) = &d.pre_filter_msg {
        msg.push_str(&format!(" {pre}."));
    } else {
        let mut histogram: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, s) in &d.node_statuses {
            for r in &s.reasons {
                *histogram.entry(r).or_insert(0) += 1;
            }
        }
        let absent = num_all_nodes.saturating_sub(d.node_statuses.len());
        if absent > 0 {
            for r in d.absent.iter().flat_map(|s| &s.reasons) {
                *histogram.entry(r).or_insert(0) += absent;
            }
        }
        // sort.Strings on "<count> <reason>": byte order, so "10 …" sorts before "2 …".
        let mut entries: Vec<String> = histogram.iter().map(|(r, c)| format!("{c} {r}")).collect();
        entries.sort();
        if !entries.is_empty() {
            msg.push_str(&format!(" {}.", entries.join(", ")));
        }
    }
    if let Some(post) = &d.post_filter_msg {
        msg.push_str(&format!(" {post}"));
    }
    msg
}

/// Nodes where removing pods might help (`nodesWherePreemptionMightHelp`): those whose status
/// is `Unschedulable`, not `UnschedulableAndUnresolvable`.
pub fn preemption_might_help(status: &Status) -> bool {
    status.code == Code::Unschedulable
}
