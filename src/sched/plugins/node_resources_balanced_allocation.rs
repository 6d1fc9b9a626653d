//! `NodeResourcesBalancedAllocation`: favour nodes whose cpu and memory would be equally used.
//! Source: `pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go` (v1.26–v1.34
//! formula; PR #135573 later changed it, its exact form is not yet confirmed upstream).

use crate::sched::cluster::{CPU, MEMORY, NodeResources, PodRequest};
use crate::sched::framework::MAX_NODE_SCORE;

/// PreScore skips best-effort pods (no cpu or memory request at all).
pub fn skips(req: &PodRequest) -> bool {
    req.get(CPU) == 0 && req.get(MEMORY) == 0
}

/// `balancedResourceScorer` on the exact requests (`useRequested: true`): fractions capped at
/// 1, score `(1 − std) × 100` truncated, where std of two fractions is `|f1 − f2| / 2`.
pub fn score(req: &PodRequest, node: NodeResources<'_>) -> i64 {
    let mut fractions = [0.0f64; 2];
    let mut n = 0;
    for r in [CPU, MEMORY] {
        let allocatable = node.allocatable[r];
        if allocatable == 0 {
            continue;
        }
        let requested = node.requested[r] + req.get(r);
        fractions[n] = (requested as f64 / allocatable as f64).min(1.0);
        n += 1;
    }
    let std = if n == 2 {
        ((fractions[0] - fractions[1]) / 2.0).abs()
    } else {
        0.0
    };
    ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
}
