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
    /// Replayed: the 95th percentile of the pods' waits in ms (`None`: a pod in the top 5 %
    /// was never bound).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_p95_ms: Option<Option<u64>>,
    /// Replayed: the queues whose p95 wait is over their limit.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queues_over: Vec<String>,
}

/// One replayed pod, as a wait goal reads it: a few bytes, as a trace holds millions.
#[derive(Debug, Clone, Copy)]
pub struct Waited {
    /// Its queue's place among the goal's `queueWaitP95AtMost` keys, when the goal names it.
    pub queue: Option<u32>,
    /// Its workload's (`namespace/job`, the pod's own name without a job) place in the goal's
    /// `workloadsPlaced`, when the goal names it.
    pub workload: Option<u32>,
    /// First bind − arrival; `None`: never bound.
    pub wait: Option<u64>,
}

impl Waited {
    /// The record of a replayed pod in `queue`, of `workload`, for `goal`.
    pub fn of(goal: &PlanGoal, queue: &str, workload: &str, wait: Option<u64>) -> Waited {
        let place = |i: Option<usize>| i.map(|i| i as u32);
        Waited {
            queue: place(goal.queue_wait_p95_at_most.keys().position(|q| q == queue)),
            workload: place(goal.workloads_placed.iter().position(|w| w == workload)),
            wait,
        }
    }
}

/// The nearest-rank 95th percentile of `waits`, a never-bound pod (`None`) waiting forever:
/// `None` when one of those is the percentile, or no pod waited.
fn p95(mut waits: Vec<Option<u64>>) -> Option<u64> {
    if waits.is_empty() {
        return Some(0);
    }
    waits.sort_by_key(|w| w.unwrap_or(u64::MAX));
    let rank = ((0.95 * waits.len() as f64).ceil() as usize).clamp(1, waits.len());
    waits[rank - 1]
}

/// The goal on a replay: its pods' waits, and its report's GPU allocation (GPU-hours used over
/// capacity). A pod counts as placed once bound.
pub fn judge_replay(
    goal: &PlanGoal,
    report: &crate::replay::ReplayReport,
    pods: &[Waited],
) -> Reached {
    use crate::trace::clock::parse_duration;
    let limit = |w: &String| parse_duration(w).unwrap_or(0);
    let pending_pods = pods.iter().filter(|p| p.wait.is_none()).count() as u64;
    let overall = p95(pods.iter().map(|p| p.wait).collect());
    let queues_over: Vec<String> = (goal.queue_wait_p95_at_most.iter().enumerate())
        .filter(|(i, (_, w))| {
            let of = |p: &&Waited| p.queue == Some(*i as u32);
            let waits = pods.iter().filter(of).map(|p| p.wait);
            p95(waits.collect()).is_none_or(|p| p > limit(w))
        })
        .map(|(_, (q, _))| q.clone())
        .collect();
    let workloads_not_placed: Vec<String> = (goal.workloads_placed.iter().enumerate())
        .filter(|(i, _)| {
            let mut of = (pods.iter())
                .filter(|p| p.workload == Some(*i as u32))
                .peekable();
            of.peek().is_none() || of.any(|p| p.wait.is_none())
        })
        .map(|(_, w)| w.clone())
        .collect();
    let wait_ok =
        (goal.wait_p95_at_most.as_ref()).is_none_or(|w| overall.is_some_and(|p| p <= limit(w)));
    let met = (goal.all_placed != Some(true) || pending_pods == 0)
        && goal.pending_pods_at_most.is_none_or(|n| pending_pods <= n)
        && workloads_not_placed.is_empty()
        && goal.workloads_admitted.is_empty()
        && goal
            .gpu_allocation_at_least
            .is_none_or(|g| report.gpu_allocation_percent >= g)
        && wait_ok
        && queues_over.is_empty();
    Reached {
        met,
        pending_pods,
        gpu_allocation: report.gpu_allocation_percent,
        workloads_not_placed,
        workloads_not_admitted: Vec::new(),
        wait_p95_ms: Some(overall),
        queues_over,
    }
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
        wait_p95_ms: None,
        queues_over: Vec::new(),
    }
}

/// `namespace/workload` of a pod of a workload, `namespace/name` of a plain pod: what
/// `workloadsPlaced` names.
pub fn workload_key(namespace: &str, workload: Option<&str>, name: &str) -> String {
    format!("{namespace}/{}", workload.unwrap_or(name))
}
