//! schedsim: what pod-template overrides do to kube-scheduler placement on GPU clusters.
//!
//! The pipeline (DESIGN.md §1): [`load`] reads scenario files into typed objects, `resolve`
//! turns workloads into pods, [`sched`] simulates kube-scheduler, [`report`] renders outcomes.

pub mod bench;
pub mod cli;
pub mod error;
pub mod features;
pub mod load;
pub mod model;
pub mod report;
pub mod sched;

/// Schedules one loaded scenario and builds its report (the `run` pipeline for one scenario).
pub fn simulate(scenario: &load::Scenario) -> report::ScenarioReport {
    let outcome = sched::schedule(
        scenario.nodes.clone(),
        &scenario.existing_pods,
        &scenario.workloads,
        &scenario.config,
    );
    report::ScenarioReport::new(scenario, &outcome)
}
