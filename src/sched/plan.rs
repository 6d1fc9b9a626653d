//! The order in which pods reach the scheduler, and the events between them. Plain pods just
//! arrive; JobSet creates a dependent replicated job's pods only once its dependencies are
//! `Complete` or `Ready`, and completed pods free their resources.

use std::ops::Range;

/// How a dependent replicated job waits for another (JobSet `dependsOn[].status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum DependsOnStatus {
    /// Every pod of the dependency has completed.
    Complete,
    /// Every pod of the dependency is running.
    Ready,
}

/// One event of a scenario, over workload pod indices.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// The pod is created and queued, if every requirement holds; otherwise it is never created.
    Schedule {
        pod: usize,
        requires: Vec<Requirement>,
    },
    /// These pods finish: the bound ones free their node's resources.
    Complete { pods: Vec<usize> },
    /// The start of a timeline step: pods listed after it arrive in that step, after the
    /// state before it is recorded (and never in the same queue batch as earlier arrivals).
    StepStart,
    /// A change to the cluster or the pods after the initial arrival (a timeline step).
    Event(Event),
    /// The end of a timeline step: pending pods are tried again (the step's events moved them
    /// back to the active queue), then the state is recorded for the report.
    Checkpoint { name: String },
}

/// What happens in a timeline step, in the spirit of scheduler_perf's opcodes.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The gating controller removes scheduling gates (`None`: all of them).
    RemoveSchedulingGates {
        pods: PodSelector,
        gates: Option<Vec<String>>,
    },
    /// `kubectl cordon`: `spec.unschedulable = true`.
    Cordon(Vec<String>),
    Uncordon(Vec<String>),
    /// `kubectl drain --ignore-daemonsets`: cordon, then evict every pod on the nodes but
    /// DaemonSet pods; their controllers create them again, so workload pods are queued anew.
    Drain(Vec<String>),
    /// The nodes disappear; their pods are evicted and queued anew (DaemonSet pods are not:
    /// their controller wants none on a node that is gone).
    FailNodes(Vec<String>),
    /// The selected pods run to completion and free their resources.
    Complete(PodSelector),
    /// The selected pods are deleted by their controller (Kueue suspending a preempted job):
    /// bound ones free their node's resources, none is re-created.
    Delete {
        pods: PodSelector,
        message: String,
    },
    /// The selected pods are created again and queued (Kueue admitting a job it suspended).
    Recreate {
        pods: PodSelector,
        message: String,
    },
    AddNodes(Vec<crate::model::Node>),
}

/// Workload pods named by `namespace/name`, or all pods of the named workloads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodSelector {
    pub pods: Vec<String>,
    pub workloads: Vec<String>,
}

impl PodSelector {
    pub fn matches(&self, pod: &crate::model::Pod) -> bool {
        self.pods.contains(&pod.key())
            || pod
                .workload
                .as_ref()
                .is_some_and(|w| self.workloads.contains(w))
    }
}

/// A `dependsOn` entry: the pods of replicated job `job` must all be running (`Ready`) or have
/// run (`Complete`). A StatefulSet's `OrderedReady` creation is one too: `job` is then the pod
/// of the next lower ordinal, which must be running.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub pods: Range<usize>,
    pub job: String,
    pub status: DependsOnStatus,
    pub by: Waiter,
}

/// The controller that holds a pod back until its requirement holds.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Waiter {
    /// JobSet, for a replicated job's `dependsOn`.
    #[default]
    JobSet,
    /// The StatefulSet of this name, whose `podManagementPolicy: OrderedReady` creates pod
    /// N+1 only once pod N is Running and Ready (`pkg/controller/statefulset`).
    StatefulSet(String),
}

/// Every pod arrives in order, with no dependencies.
pub fn in_order(pods: usize) -> Vec<Step> {
    (0..pods)
        .map(|pod| Step::Schedule {
            pod,
            requires: Vec::new(),
        })
        .collect()
}

/// Shifts a workload's steps so that its pod indices start at `offset`.
pub fn offset(steps: Vec<Step>, offset: usize) -> Vec<Step> {
    steps
        .into_iter()
        .map(|s| match s {
            Step::Schedule { pod, requires } => Step::Schedule {
                pod: pod + offset,
                requires: requires
                    .into_iter()
                    .map(|r| Requirement {
                        pods: r.pods.start + offset..r.pods.end + offset,
                        ..r
                    })
                    .collect(),
            },
            Step::Complete { pods } => Step::Complete {
                pods: pods.into_iter().map(|p| p + offset).collect(),
            },
            other => other,
        })
        .collect()
}

/// The scheduling queue's order (`PrioritySort`, `pkg/scheduler/framework/plugins/queuesort`):
/// pods that are waiting at the same time are popped by priority, highest first, then in
/// arrival order. Pods arrive together until an event (a completion) or a pod that JobSet
/// creates only after its dependencies ran; each such group is ordered on its own.
pub fn queue_order(steps: &[Step], priority: impl Fn(usize) -> i32) -> Vec<Step> {
    let mut out = Vec::with_capacity(steps.len());
    let mut waiting: Vec<Step> = Vec::new();
    let flush = |waiting: &mut Vec<Step>, out: &mut Vec<Step>| {
        // Stable: equal priorities keep arrival order.
        waiting.sort_by_key(|s| match s {
            Step::Schedule { pod, .. } => std::cmp::Reverse(priority(*pod)),
            _ => std::cmp::Reverse(i32::MIN),
        });
        out.append(waiting);
    };
    for step in steps {
        match step {
            Step::Schedule { requires, .. } if requires.is_empty() => waiting.push(step.clone()),
            _ => {
                flush(&mut waiting, &mut out);
                out.push(step.clone());
            }
        }
    }
    flush(&mut waiting, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waiting_pods_pop_by_priority_then_arrival() {
        let priorities = [0, 100, 0, 100, 5];
        let mut steps = in_order(3);
        steps.push(Step::Complete { pods: vec![0] });
        steps.extend([3, 4].map(|pod| Step::Schedule {
            pod,
            requires: Vec::new(),
        }));
        let order: Vec<String> = queue_order(&steps, |p| priorities[p])
            .iter()
            .map(|s| match s {
                Step::Schedule { pod, .. } => format!("s{pod}"),
                Step::Complete { pods } => format!("c{pods:?}"),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(order, ["s1", "s0", "s2", "c[0]", "s3", "s4"]);
    }
}
