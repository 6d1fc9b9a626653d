//! The simulated kube-scheduler: framework vocabulary, plugins, the scheduling cycle,
//! preemption and the pending-pod diagnosis.

pub mod cluster;
pub mod cycle;
pub mod device_room;
pub mod diagnosis;
pub mod dra_manager;
pub mod explain;
pub mod framework;
pub mod gang;
pub mod gpu_share;
pub mod hints;
pub mod node_tree;
pub mod pdb;
pub mod plan;
pub mod plugins;
pub mod profile;
pub mod queue;
pub mod resource_set;
pub mod sampling;
pub mod simulation;

pub use cycle::{PodOutcome, PodPhase, SchedulerConfig, feasible_nodes};
pub use simulation::{Outcome, schedule, schedule_plan};
