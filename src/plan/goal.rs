//! A plan's goal (`spec.plan.goal`) judged on a run's report.

use serde::Serialize;

use crate::load::scenario::PlanGoal;
use crate::report::ScenarioReport;
use crate::sched::PodPhase;

/// What one evaluated point reached.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reached {
    /// Every condition of the goal holds.
    pub met: bool,
    /// Workload pods not scheduled (or run to completion).
    pub pending_pods: u64,
    /// GPUs allocated over GPUs of every node, %.
    pub gpu_allocation: f64,
    /// The named workloads with a pod not scheduled.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workloads_not_placed: Vec<String>,
    /// The named workloads Kueue did not admit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workloads_not_admitted: Vec<String>,
}

/// A pod not placed, with kube-scheduler's message: what "why not one node fewer" and "why
/// not more" show.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingPod {
    /// `namespace/name`.
    pub pod: String,
    pub message: String,
}

/// Whether a pod counts as placed: bound (or ran to completion).
pub fn placed(status: PodPhase) -> bool {
    matches!(status, PodPhase::Scheduled | PodPhase::Succeeded)
}

/// The goal on a report. With no condition given, every pod must be placed.
pub fn judge(goal: &PlanGoal, report: &ScenarioReport) -> Reached {
    let pending_pods = report.pods.iter().filter(|p| !placed(p.status)).count() as u64;
    let (used, total) = (report.nodes.iter())
        .filter_map(|n| n.gpus())
        .fold((0, 0), |(u, t), (_, total, used)| (u + used, t + total));
    let gpu_allocation = match total {
        0 => 0.0,
        _ => 100.0 * used as f64 / total as f64,
    };
    let workloads_not_placed: Vec<String> = (goal.workloads_placed.iter())
        .filter(|w| {
            let pods = (report.pods.iter())
                .filter(|p| workload_key(&p.namespace, p.workload.as_deref(), &p.name) == **w);
            let mut any = false;
            let all = pods.inspect(|_| any = true).all(|p| placed(p.status));
            !(any && all)
        })
        .cloned()
        .collect();
    // Kueue's report names a workload `namespace/name`; one it never saw is not admitted.
    let workloads_not_admitted: Vec<String> = (goal.workloads_admitted.iter())
        .filter(|w| {
            let admitted = (report.kueue.iter().flat_map(|k| &k.workloads))
                .find(|k| format!("{}/{}", k.namespace, k.name) == **w)
                .is_some_and(|k| k.admitted);
            !admitted
        })
        .cloned()
        .collect();
    let none_given = goal.all_placed.is_none()
        && goal.pending_pods_at_most.is_none()
        && goal.workloads_placed.is_empty()
        && goal.gpu_allocation_at_least.is_none()
        && goal.workloads_admitted.is_empty();
    let met = (goal.all_placed != Some(true) && !none_given || pending_pods == 0)
        && goal.pending_pods_at_most.is_none_or(|n| pending_pods <= n)
        && workloads_not_placed.is_empty()
        && workloads_not_admitted.is_empty()
        && goal
            .gpu_allocation_at_least
            .is_none_or(|g| gpu_allocation >= g);
    Reached {
        met,
        pending_pods,
        gpu_allocation: (gpu_allocation * 100.0).round() / 100.0,
        workloads_not_placed,
        workloads_not_admitted,
    }
}

/// `namespace/workload` of a pod of a workload, `namespace/name` of a plain pod: what
/// `workloadsPlaced` names.
pub fn workload_key(namespace: &str, workload: Option<&str>, name: &str) -> String {
    format!("{namespace}/{}", workload.unwrap_or(name))
}
