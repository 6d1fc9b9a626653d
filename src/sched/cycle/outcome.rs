//! What a scheduling cycle says about a pod: its phase, the node, the message, the diagnosis,
//! the victims of its preemption, its gang, and how many nodes it examined.

use std::sync::Arc;

use serde::Serialize;

use crate::model::pod::GangScheduler;
use crate::sched::diagnosis::Diagnosis;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub enum PodPhase {
    Scheduled,
    Unschedulable,
    SchedulingGated,
    /// Bound, then evicted, as its message says: by DefaultPreemption to make room for a
    /// higher-priority pod, by Kueue (a preemption, or a stopped queue's drain), or with its
    /// node gone (a DaemonSet pod, which its controller does not create again).
    Preempted,
    /// Ran to completion (an initializer whose dependents need it `Complete`); its node is
    /// where it ran, its resources are free again.
    Succeeded,
    /// Never created: JobSet waits for a `dependsOn` dependency that did not run.
    Waiting,
    /// The scheduling cycle failed with an error, not a fit failure (condition reason
    /// `SchedulerError`, `schedule_one.go` `handleSchedulingFailure`): no PostFilter runs, and
    /// the pod is retried like an unschedulable one.
    SchedulerError,
}

impl PodPhase {
    /// Pending in the scheduling queue: retried when the cluster changes.
    pub fn is_retried(self) -> bool {
        matches!(self, PodPhase::Unschedulable | PodPhase::SchedulerError)
    }
}

/// What a gang member's report says about its gang.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GangNote {
    /// `namespace/name` of the PodGroup.
    pub pod_group: String,
    pub scheduler: GangScheduler,
    pub min_member: u32,
    /// Pods of the group that existed at the attempt.
    pub members: usize,
    /// Members that could be placed (already bound, or passed every filter).
    pub placed: usize,
    /// Whether the gang reached its quorum and was bound.
    pub bound: bool,
}

impl GangNote {
    /// One line for tables: "gang ml/llm: 6 of minMember 8 could be placed (8 pods exist),
    /// none bound".
    pub fn summary(&self) -> String {
        format!(
            "gang {}: {} of minMember {} could be placed ({} pod(s) exist), {}",
            self.pod_group,
            self.placed,
            self.min_member,
            self.members,
            if self.bound { "bound" } else { "none bound" }
        )
    }
}

/// How many nodes a cycle's Filter pass examined and how many of them were feasible
/// (`ScheduleResult.EvaluatedNodes` and `FeasibleNodes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Evaluated {
    pub nodes: usize,
    pub feasible: usize,
}

/// What a failed cycle does to the pod's nomination (`NominatingInfo` in
/// `pkg/scheduler/schedule_one.go`, as `handleSchedulingFailure` passes it to the nominator
/// and to the pod's `status.nominatedNodeName`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Nominating {
    /// `ModeNoop`: the pod keeps the nomination it has (a cycle that succeeded, a PostFilter
    /// that returned no result).
    #[default]
    Noop,
    /// `ModeOverride` to a node: preemption chose it and its victims are terminating.
    Set(usize),
    /// `clearNominatedNode`: no node is left for it (no nodes, an error, no PostFilter
    /// plugin, no preemption candidate, a rejection at Reserve or Permit).
    Clear,
}

/// What happened to one pod.
#[derive(Debug, Clone)]
pub struct PodOutcome {
    pub phase: PodPhase,
    pub node: Option<usize>,
    /// The condition / event message kube-scheduler would record ("" when scheduled).
    pub message: String,
    /// Shared with the failure the scheduler keeps for pods alike, which gives it again to
    /// each of them while it holds (copied when either writes to it).
    pub diagnosis: Option<Arc<Diagnosis>>,
    /// Pods preempted to make room for this one (pod ids, see [`Outcome`]).
    pub victims: Vec<usize>,
    /// How many of `victims` a PodDisruptionBudget protected (`Victims.NumPDBViolations`):
    /// kube-scheduler preempts them all the same, preferring nodes with fewer.
    pub pdb_violations: usize,
    /// For a gang member: how far its gang got.
    pub gang: Option<GangNote>,
    /// The cycle's Filter pass, when it ran.
    pub evaluated: Option<Evaluated>,
    /// What a failed cycle does to the pod's nomination.
    pub nominating: Nominating,
}
