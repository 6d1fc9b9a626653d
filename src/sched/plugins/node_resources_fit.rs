//! `NodeResourcesFit`: does the node have room for the pod's requests (filter), and how much
//! room is left (score, `LeastAllocated` by default).
//! Sources: `pkg/scheduler/framework/plugins/noderesources/fit.go` (`fitsRequest`),
//! `least_allocated.go`, `resource_allocation.go`.

use std::borrow::Cow;

use crate::sched::cluster::{CPU, MEMORY, NodeResources, PodRequest, ResourceTable};
use crate::sched::framework::{Code, MAX_NODE_SCORE, Status, names};

pub const REASON_TOO_MANY_PODS: &str = "Too many pods";

/// One resource the node lacks (upstream's `InsufficientResource`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InsufficientResource {
    pub resource: String,
    pub reason: Cow<'static, str>,
    pub requested: i64,
    pub used: i64,
    pub capacity: i64,
    /// The request exceeds the node's allocatable: preemption cannot help.
    pub unresolvable: bool,
}

fn reason_for(name: &str) -> Cow<'static, str> {
    match name {
        "cpu" => "Insufficient cpu".into(),
        "memory" => "Insufficient memory".into(),
        "ephemeral-storage" => "Insufficient ephemeral-storage".into(),
        other => format!("Insufficient {other}").into(),
    }
}

/// `fitsRequest`: every resource the node lacks, in upstream's order (pods, cpu, memory,
/// ephemeral-storage, then extended resources — sorted by name here, where upstream's Go map
/// order is random).
pub fn fits_request(
    req: &PodRequest,
    node: NodeResources<'_>,
    table: &ResourceTable,
) -> Vec<InsufficientResource> {
    let mut out = Vec::new();
    if node.pod_count + 1 > node.allowed_pods {
        out.push(InsufficientResource {
            resource: "pods".into(),
            reason: REASON_TOO_MANY_PODS.into(),
            requested: 1,
            used: node.pod_count,
            capacity: node.allowed_pods,
            unresolvable: false,
        });
    }
    for &(i, amount) in &req.sparse {
        if amount > 0 && amount > node.allocatable[i] - node.requested[i] {
            out.push(InsufficientResource {
                resource: table.name(i).to_string(),
                reason: reason_for(table.name(i)),
                requested: amount,
                used: node.requested[i],
                capacity: node.allocatable[i],
                unresolvable: amount > node.allocatable[i],
            });
        }
    }
    out
}

/// The hot-path twin of [`fits_request`]: only whether the pod fits.
#[inline]
pub fn fits(req: &PodRequest, node: NodeResources<'_>) -> bool {
    node.pod_count < node.allowed_pods
        && req
            .sparse
            .iter()
            .all(|&(i, amount)| amount <= 0 || amount <= node.allocatable[i] - node.requested[i])
}

/// Filter: `Unschedulable` with every reason, or `UnschedulableAndUnresolvable` when some
/// request exceeds the node's allocatable.
pub fn filter(req: &PodRequest, node: NodeResources<'_>, table: &ResourceTable) -> Status {
    let insufficient = fits_request(req, node, table);
    if insufficient.is_empty() {
        return Status::success();
    }
    let code = if insufficient.iter().any(|r| r.unresolvable) {
        Code::UnschedulableAndUnresolvable
    } else {
        Code::Unschedulable
    };
    Status {
        code,
        plugin: names::NODE_RESOURCES_FIT,
        reasons: insufficient.into_iter().map(|r| r.reason).collect(),
    }
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
