//! Why a pod is pending, worded exactly as kube-scheduler's `FitError.Error()` words it
//! (`pkg/scheduler/framework/types.go`) and the DefaultPreemption PostFilter appends
//! (`pkg/scheduler/framework/preemption/preemption.go`).

use std::collections::BTreeMap;

use super::framework::{Code, Status};

/// `ErrNoNodesAvailable`.
pub const ERR_NO_NODES_AVAILABLE: &str = "no nodes available to schedule pods";
pub const PREEMPTION_NOT_HELPFUL: &str = "Preemption is not helpful for scheduling";
pub const NO_PREEMPTION_VICTIMS: &str = "No preemption victims found for incoming pod";
pub const NOT_ELIGIBLE_PREEMPTION_POLICY_NEVER: &str =
    "not eligible due to preemptionPolicy=Never.";

/// The statuses of one failed scheduling attempt: every node's status (nodes a PreFilter
/// narrowed away carry the "absent" status), stored once per distinct status.
#[derive(Debug, Clone, Default)]
pub struct Diagnosis {
    /// Distinct statuses, indexed by `node_status`.
    pub statuses: Vec<Status>,
    /// Per node, in node order: index into `statuses`. Empty when the run keeps only
    /// counts ([`SchedulerConfig::drop_node_verdicts`](super::SchedulerConfig)).
    pub node_status: Vec<u16>,
    /// Per status, how many nodes have it; filled when `node_status` is dropped.
    pub counts: Vec<usize>,
    pub pre_filter_msg: Option<String>,
    pub post_filter_msg: Option<String>,
}

impl Diagnosis {
    /// Every one of `num_nodes` nodes with the same status.
    pub fn uniform(num_nodes: usize, status: Status) -> Self {
        Diagnosis {
            statuses: vec![status],
            node_status: vec![0; num_nodes],
            ..Default::default()
        }
    }

    /// Index of `status`, adding it if new (there are only a handful per pod).
    pub fn intern(&mut self, status: Status) -> u16 {
        match self.statuses.iter().position(|s| *s == status) {
            Some(i) => i as u16,
            None => {
                self.statuses.push(status);
                (self.statuses.len() - 1) as u16
            }
        }
    }

    /// How many nodes have each status.
    pub fn status_counts(&self) -> Vec<usize> {
        if self.node_status.is_empty() {
            return self.counts.clone();
        }
        let mut counts = vec![0usize; self.statuses.len()];
        for &s in &self.node_status {
            counts[s as usize] += 1;
        }
        counts
    }

    /// Keeps the count per status and drops the per-node vector (2 bytes per node).
    pub fn drop_node_status(&mut self) {
        self.counts = self.status_counts();
        self.node_status = Vec::new();
    }

    pub fn status_of(&self, node: usize) -> &Status {
        &self.statuses[self.node_status[node] as usize]
    }
}

/// `FitError.Error()`: `0/N nodes are available: <PreFilterMsg>.` or the sorted histogram of
/// reasons, then the PostFilter message.
pub fn fit_error_message(num_all_nodes: usize, d: &Diagnosis) -> String {
    let mut msg = format!("0/{num_all_nodes} nodes are available:");
    if let Some(pre) = &d.pre_filter_msg {
        msg.push_str(&format!(" {pre}."));
    } else {
        let per_status = d.status_counts();
        let mut histogram: BTreeMap<&str, usize> = BTreeMap::new();
        for (status, count) in d.statuses.iter().zip(per_status) {
            for r in &status.reasons {
                *histogram.entry(r).or_insert(0) += count;
            }
        }
        // sort.Strings on "<count> <reason>": byte order, so "10 …" sorts before "2 …".
        let mut entries: Vec<String> = histogram
            .iter()
            .filter(|(_, c)| **c > 0)
            .map(|(r, c)| format!("{c} {r}"))
            .collect();
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
