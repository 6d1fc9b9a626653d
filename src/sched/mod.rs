//! The simulated kube-scheduler: framework vocabulary, plugins, the scheduling cycle,
//! preemption and the pending-pod diagnosis.

pub mod cluster;
pub mod cycle;
pub mod diagnosis;
pub mod framework;
pub mod gang;
pub mod plan;
pub mod plugins;
pub mod preemption;
pub mod profile;
pub mod simulation;

pub use cycle::{Outcome, PodOutcome, PodPhase, SchedulerConfig, feasible_nodes};
pub use simulation::{schedule, schedule_plan};
