//! schedsim: what pod-template overrides do to kube-scheduler placement on GPU clusters.
//!
//! The pipeline (DESIGN.md §1): [`load`] reads scenario files into typed objects, `resolve`
//! turns workloads into pods, [`sched`] simulates kube-scheduler, [`report`] renders outcomes.

pub mod error;
pub mod features;
pub mod load;
pub mod model;
pub mod sched;
