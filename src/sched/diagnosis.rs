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

/// The statuses of one failed scheduling attempt: how many nodes got each distinct status
/// (nodes a PreFilter narrowed away carry the "absent" status) and, when the run keeps them,
/// which nodes.
#[derive(Debug, Clone, Default)]
pub struct Diagnosis {
    /// Distinct statuses, indexed by `counts` and `node_status`.
    pub statuses: Vec<Status>,
    /// Per status, how many nodes have it.
    pub counts: Vec<usize>,
    /// Per node, in node order: index into `statuses`. Empty when the run keeps only counts
    /// ([`SchedulerConfig::drop_node_verdicts`](super::SchedulerConfig)): a per-node verdict
    /// costs 2 bytes per node per pending pod, and filling it a pass over every node.
    pub node_status: Vec<u16>,
    pub pre_filter_msg: Option<String>,
    pub post_filter_msg: Option<String>,
}

impl Diagnosis {
    /// Every one of `num_nodes` nodes with the same status; `keep_nodes`: fill `node_status`.
    pub fn uniform(num_nodes: usize, status: Status, keep_nodes: bool) -> Self {
        Diagnosis {
            statuses: vec![status],
            counts: vec![num_nodes],
            node_status: if keep_nodes {
                vec![0; num_nodes]
            } else {
                Vec::new()
            },
            ..Default::default()
        }
    }

    /// The plugins that rejected the pod on some node (`Diagnosis.UnschedulablePlugins`,
    /// `schedule_one.go`): what the scheduling queue asks for QueueingHints.
    pub fn unschedulable_plugins(&self) -> std::collections::BTreeSet<String> {
        (self.statuses.iter().zip(&self.counts))
            .filter(|(_, n)| **n > 0)
            .map(|(s, _)| s)
            .filter(|s| {
                matches!(
                    s.code,
                    Code::Unschedulable | Code::UnschedulableAndUnresolvable
                )
            })
            .filter(|s| !s.plugin.is_empty())
            .map(|s| s.plugin.to_string())
            .collect()
    }

    /// Index of `status`, adding it (with no node yet) if new; there are only a handful per
    /// pod.
    pub fn intern(&mut self, status: Status) -> u16 {
        match self.statuses.iter().position(|s| *s == status) {
            Some(i) => i as u16,
            None => {
                self.statuses.push(status);
                self.counts.push(0);
                (self.statuses.len() - 1) as u16
            }
        }
    }

    /// Moves `node` from status `from` (`None`: it had none yet) to status `to`.
    pub fn assign(&mut self, node: usize, from: Option<u16>, to: u16) {
        if let Some(from) = from {
            self.counts[from as usize] -= 1;
        }
        self.counts[to as usize] += 1;
        if !self.node_status.is_empty() {
            self.node_status[node] = to;
        }
    }

    /// How many nodes have each status.
    pub fn status_counts(&self) -> &[usize] {
        &self.counts
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
        for (status, &count) in d.statuses.iter().zip(per_status) {
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
