//! Replays a scenario over time (`schedsim replay`, issue 26): workloads arrive at the times
//! their annotations or a trace give, kube-scheduler's queue schedules them one cycle at a
//! time, bound pods run for their duration and free what they held, and the run is measured
//! as it goes (waits, GPU time, a time series).
//!
//! - [`source`]: what arrives when (the scenario's workloads, a trace's rows, streamed).
//! - [`trace_pods`]: a trace row as pods.
//! - [`engine`]: the event loop, with gangs waiting at Permit, Volcano's sessions placing
//!   its gangs whole, and the Job controllers that decide when a job is done.
//! - [`metrics`] and [`histogram`]: the measurements, bounded by the pods in flight.

pub mod chart;
pub mod engine;
pub mod expect;
pub mod histogram;
pub mod metrics;
pub mod report;
pub mod source;
pub mod trace_pods;

use std::path::Path;

use crate::error::InputError;
use crate::load::Scenario;
pub use engine::{PodRecord, Sinks};
pub use report::ReplayReport;

/// Replays one scenario. `sinks` receive the pod records and samples as they come (for the
/// CSV files). Errors: the scenario has no `spec.replay`, or its trace cannot be read.
pub fn replay(scenario: &Scenario, sinks: Sinks<'_>) -> Result<ReplayReport, InputError> {
    let Some(spec) = &scenario.replay else {
        return Err(InputError::new(
            &scenario.file,
            "no spec.replay: add `replay: {}` to the scenario's spec to replay its workloads over time",
        )
        .field("spec"));
    };
    let mut plan = source::plan(scenario, spec);
    let trace = match &spec.trace {
        Some(t) => Some((
            crate::trace::open(&t.path, &t.columns)?,
            trace_pods::TracePods::new(t),
        )),
        None => None,
    };
    let mut warnings = scenario.warnings.clone();
    warnings.extend(unsupported(scenario));
    let sources = source::Sources::new(std::mem::take(&mut plan.arrivals), trace);
    let ended = engine::Engine::new(scenario, spec, plan, sources, sinks).run()?;
    warnings.extend(ended.warnings.iter().cloned());
    Ok(ReplayReport::new(
        &scenario.name,
        &scenario.file.display().to_string(),
        warnings,
        &ended,
    ))
}

/// The nodes the scenario's timeline adds.
fn added_nodes(steps: &[crate::sched::plan::Step]) -> impl Iterator<Item = &crate::model::Node> {
    steps.iter().flat_map(|st| match st {
        crate::sched::plan::Step::Event(crate::sched::plan::Event::AddNodes(nodes)) => {
            nodes.as_slice()
        }
        _ => &[],
    })
}

/// The pools of the time series, in its columns' order: the scenario's nodes', then those of
/// the nodes its timeline adds.
pub fn pools(scenario: &Scenario) -> Vec<String> {
    let mut m = metrics::Metrics::new(&scenario.nodes, None);
    m.declare_pools(added_nodes(&scenario.steps));
    m.pools
}

/// What the replay does not simulate in time yet, said once per scenario.
fn unsupported(scenario: &Scenario) -> Vec<String> {
    let mut out = Vec::new();
    let over_time = scenario.replay.as_ref().is_some_and(|r| r.kueue_over_time);
    if !over_time
        && scenario
            .kueue
            .as_ref()
            .is_some_and(|k| !k.workloads.is_empty())
    {
        out.push(
            "the scenario's own Kueue workloads were admitted once, at load, as in a snapshot (the scenario was loaded for a snapshot run; `schedsim replay` and `sweep` admit them over time): those admitted arrive as pods, the others never do"
                .to_string(),
        );
    }
    out
}

/// The path a replay's per-scenario file gets: `<out>/replay-<scenario>-<what>.csv`.
pub fn csv_path(out: &Path, scenario: &str, what: &str) -> std::path::PathBuf {
    out.join(format!("replay-{scenario}-{what}.csv"))
}
