//! `SchedulingGates` (PreEnqueue): a pod with gates never enters the scheduling queue.
//! Source: `pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go`;
//! the condition text comes from `pkg/registry/core/pod/strategy.go` (`applySchedulingGatedCondition`).

use crate::model::Pod;
use crate::sched::framework::{Code, Status, names};

/// `PodScheduled=False` condition message the API server sets on a gated pod.
pub const GATED_CONDITION_MESSAGE: &str = "Scheduling is blocked due to non-empty scheduling gates";
/// The condition reason.
pub const GATED_CONDITION_REASON: &str = "SchedulingGated";

/// PreEnqueue: `waiting for scheduling gates: [a b]` (Go's `%v` of a string slice).
pub fn pre_enqueue(pod: &Pod) -> Status {
    if pod.scheduling_gates.is_empty() {
        return Status::success();
    }
    Status::new(
        Code::UnschedulableAndUnresolvable,
        names::SCHEDULING_GATES,
        format!(
            "waiting for scheduling gates: [{}]",
            pod.scheduling_gates.join(" ")
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `TestPreEnqueue` of scheduling_gates_test.go.
    #[test]
    fn upstream_pre_enqueue_cases() {
        let mut pod = Pod::default();
        assert!(pre_enqueue(&pod).is_success());
        pod.scheduling_gates = vec!["foo".into(), "bar".into()];
        let s = pre_enqueue(&pod);
        assert_eq!(s.code, Code::UnschedulableAndUnresolvable);
        assert_eq!(s.message(), "waiting for scheduling gates: [foo bar]");
    }
}
