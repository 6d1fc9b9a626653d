//! `NodeResourcesFit`: does the node have room for the pod's requests (filter), and how much
//! room is left (score, `LeastAllocated` by default).
//! Sources: `pkg/scheduler/framework/plugins/noderesources/fit.go` (`fitsRequest`),
//! `least_allocated.go`, `resource_allocation.go`.

use std::borrow::Cow;

use crate::sched::cluster::{CPU, MEMORY, NodeResources, PodRequest, ResourceTable};
use crate::sched::framework::{Code, MAX_NODE_SCORE, Status, names};

pub const REASON_TOO_MANY_PODS: &str = "Too many pods";

/// The most resource names one scenario may use (bit 0 of [`Insufficient`] is the pod count).
pub const MAX_RESOURCES: usize = 127;

/// What a node lacks for a pod (upstream's list of `InsufficientResource`), as a bit set:
/// bit 0 is the pod count, bit `1 + i` resource `i` of the [`ResourceTable`]. Kept as bits so
/// diagnosing thousands of nodes for every pending pod allocates nothing per node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Insufficient {
    bits: u128,
    /// Some request exceeds the node's allocatable: preemption cannot help.
    unresolvable: bool,
}

impl Insufficient {
    pub fn is_empty(&self) -> bool {
        self.bits == 0
    }

    /// The filter's status: `Unschedulable` with every reason in upstream's order (pods, cpu,
    /// memory, ephemeral-storage, then extended resources — by name here, where upstream's Go
    /// map order is random), or `UnschedulableAndUnresolvable` when a request exceeds the
    /// node's allocatable.
    pub fn status(&self, table: &ResourceTable) -> Status {
        if self.is_empty() {
            return Status::success();
        }
        let mut reasons: Vec<Cow<'static, str>> = Vec::new();
        if self.bits & 1 != 0 {
            reasons.push(REASON_TOO_MANY_PODS.into());
        }
        for i in 0..table.len() {
            if self.bits & (1u128 << (i + 1)) != 0 {
                reasons.push(match table.name(i) {
                    "cpu" => "Insufficient cpu".into(),
                    "memory" => "Insufficient memory".into(),
                    "ephemeral-storage" => "Insufficient ephemeral-storage".into(),
                    other => format!("Insufficient {other}").into(),
                });
            }
        }
        let code = if self.unresolvable {
            Code::UnschedulableAndUnresolvable
        } else {
            Code::Unschedulable
        };
        Status {
            code,
            plugin: names::NODE_RESOURCES_FIT,
            reasons,
        }
    }
}

/// Whether `amount` of a resource does not fit (`fitsRequest`: only positive requests count).
#[inline]
fn lacks(amount: i64, allocatable: i64, requested: i64) -> bool {
    amount > 0 && amount > allocatable - requested
}

/// `fitsRequest`: everything the node lacks for the pod.
pub fn check(req: &PodRequest, node: NodeResources<'_>) -> Insufficient {
    let mut out = Insufficient::default();
    if node.pod_count + 1 > node.allowed_pods {
        out.bits |= 1;
    }
    for &(i, amount) in &req.sparse {
        if lacks(amount, node.allocatable[i], node.requested[i]) {
            out.bits |= 1u128 << (i + 1);
            out.unresolvable |= amount > node.allocatable[i];
        }
    }
    out
}

/// The hot path: whether the pod fits, stopping at the first shortage.
#[inline]
pub fn fits(req: &PodRequest, node: NodeResources<'_>) -> bool {
    node.pod_count < node.allowed_pods
        && !req
            .sparse
            .iter()
            .any(|&(i, amount)| lacks(amount, node.allocatable[i], node.requested[i]))
}

/// Filter.
pub fn filter(req: &PodRequest, node: NodeResources<'_>, table: &ResourceTable) -> Status {
    check(req, node).status(table)
}

/// `leastRequestedScore`: `(capacity − requested) × 100 / capacity`, 0 when over capacity.
pub fn least_requested_score(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 || requested > capacity {
        return 0;
    }
    (capacity - requested) * MAX_NODE_SCORE / capacity
}

/// Score, `LeastAllocated` over cpu and memory with weight 1 each, on the node's
/// "non-zero" requests plus the pod's (missing requests count as 100m / 200Mi).
pub fn score_least_allocated(req: &PodRequest, node: NodeResources<'_>) -> i64 {
    let pairs = [
        (
            node.nonzero_requested[0] + req.nonzero_cpu,
            node.allocatable[CPU],
        ),
        (
            node.nonzero_requested[1] + req.nonzero_memory,
            node.allocatable[MEMORY],
        ),
    ];
    let (mut score, mut weights) = (0, 0);
    for (requested, allocatable) in pairs {
        if allocatable == 0 {
            continue;
        }
        score += least_requested_score(requested, allocatable);
        weights += 1;
    }
    if weights == 0 { 0 } else { score / weights }
}
