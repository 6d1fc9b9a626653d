//! schedsim: what pod-template overrides do to kube-scheduler placement on GPU clusters.
//!
//! The pipeline (DESIGN.md §1): [`load`] reads scenario files into typed objects, `resolve`
//! turns workloads into pods, [`sched`] simulates kube-scheduler, [`report`] renders outcomes.

pub mod bench;
pub mod check;
pub mod cli;
pub mod dra;
pub mod error;
pub mod explain;
pub mod features;
pub mod fgd;
pub mod generate;
pub mod interrupt;
pub mod kueue;
pub mod limits;
pub mod load;
pub mod model;
pub mod plan;
pub mod replay;
pub mod report;
pub mod resolve;
pub mod sched;
pub mod sweep;
pub mod trace;
pub mod yaml;

/// Hands a command's large results to the operating system instead of freeing them: the
/// process exits right after the command, and freeing the millions of small allocations of
/// a cluster-sized run (documents, pods, reports) one by one costs a tenth of the run.
pub fn release_at_exit<T>(value: T) {
    std::mem::forget(value);
}

/// Schedules one loaded scenario and builds its report (the `run` pipeline for one scenario).
/// When TrainJobs carry overrides, the scenario is scheduled a second time without them, and
/// the report says what the overrides changed.
pub fn simulate(scenario: &load::Scenario) -> report::ScenarioReport {
    let schedule = |pods: &[model::Pod], steps: &[sched::plan::Step]| {
        sched::schedule_plan(
            scenario.nodes.clone(),
            &scenario.existing_pods,
            pods,
            steps,
            &scenario.config,
        )
    };
    let outcome = schedule(&scenario.workloads, &scenario.steps);
    let mut report = report::ScenarioReport::new(scenario, &scenario.workloads, &outcome);
    if let Some(base) = &scenario.baseline {
        let without = report::ScenarioReport::placements(
            scenario,
            &base.pods,
            &schedule(&base.pods, &base.steps),
        );
        let (with_index, without_index) = (
            report::model::ReportIndex::new(&report),
            report::model::ReportIndex::new(&without),
        );
        let effects = (scenario.train_jobs.iter())
            .filter(|j| j.has_overrides)
            .map(|j| {
                report::model::OverrideEffect::compare(
                    &j.name,
                    &j.namespace,
                    &with_index,
                    &without_index,
                )
            })
            .collect();
        report.override_effects = effects;
    }
    report
}
