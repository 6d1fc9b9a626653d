//! The order in which pods reach the scheduler, and the events between them. Plain pods just
//! arrive; JobSet creates a dependent replicated job's pods only once its dependencies are
//! `Complete` or `Ready`, and completed pods free their resources.

use std::ops::Range;

use crate::resolve::build::DependsOnStatus;

/// One event of a scenario, over workload pod indices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// The pod is created and queued, if every requirement holds; otherwise it is never created.
    Schedule {
        pod: usize,
        requires: Vec<Requirement>,
    },
    /// These pods finish: the bound ones free their node's resources.
    Complete { pods: Vec<usize> },
}

/// A `dependsOn` entry: the pods of replicated job `job` must all be running (`Ready`) or have
/// run (`Complete`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    pub pods: Range<usize>,
    pub job: String,
    pub status: DependsOnStatus,
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
        })
        .collect()
}
