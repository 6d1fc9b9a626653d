//! `schedsim explain` (issue 29): for chosen pods, what their last scheduling cycle saw — every
//! node's Filter verdict, summarized by reason; each scored node's score per Score plugin
//! (raw, normalized, weight, weighted), its total and rank; the tie the seeded pick broke;
//! for a node asked about, why it lost to the chosen one, plugin by plugin. Once per pod: the
//! PreFilter/PreScore counts (`pre_filter`), preemption's candidates (`preemption`), the gang's
//! members, the Kueue flavors (`kueue`) and the DRA devices (`devices`).
//!
//! The run is the scenario's `run`, with the chosen pods' cycles recorded
//! ([`crate::sched::explain`]): recording reads what the cycle computes and draws nothing, so
//! placements are those of `run` (tested).

pub mod devices;
pub mod html;
pub mod kueue;
pub mod pre_filter;
pub mod preemption;
pub mod report;
pub mod selector;

use std::collections::HashSet;
use std::sync::Arc;

use crate::load::Scenario;
use crate::sched::PodPhase;
pub use report::{ExplainReport, PodExplanation};

/// Which pods to explain and how much to show.
#[derive(Debug, Clone, Default)]
pub struct Ask {
    /// `namespace/name` of pods.
    pub pods: Vec<String>,
    /// `namespace/workload`: every pod of these workloads.
    pub workloads: Vec<String>,
    /// Every pod whose labels match (`kubectl -l` syntax).
    pub selector: Option<selector::Selector>,
    /// Every pod the run leaves unscheduled.
    pub pending: bool,
    /// Scored nodes listed per pod, best first (the rest summarized).
    pub top: usize,
    /// Every node's verdict and scores, not only the top ones.
    pub all_nodes: bool,
    /// Nodes to compare with the chosen one ("why not there").
    pub nodes: Vec<String>,
}

/// The explanations of `ask`'s pods in one scenario, or the limit the request goes over.
pub fn explain(scenario: &Scenario, ask: &Ask) -> Result<report::ScenarioExplanation, String> {
    let mut wanted: HashSet<String> = (scenario.workloads.iter())
        .filter(|p| {
            let key = p.key();
            let workload = p.workload.as_ref().map(|w| format!("{}/{w}", p.namespace));
            ask.pods.contains(&key)
                || workload.is_some_and(|w| ask.workloads.contains(&w))
                || (ask.selector.as_ref()).is_some_and(|s| s.matches(&p.labels))
        })
        .map(|p| p.key())
        .collect();
    if ask.pending {
        // Which pods pend is known after a run; the explained run schedules the same.
        let plain = scenario.schedule(&scenario.config);
        for (p, o) in scenario.workloads.iter().zip(&plain.pods) {
            if !matches!(o.phase, PodPhase::Scheduled | PodPhase::Succeeded) {
                wanted.insert(p.key());
            }
        }
    }
    within_limits(scenario, wanted.len(), ask)?;
    Ok(explain_pods(scenario, wanted, ask))
}

/// Refuses, up front, an explanation whose records would grow with pods × nodes past the
/// product's limits (`crate::limits`).
fn within_limits(scenario: &Scenario, pods: usize, ask: &Ask) -> Result<(), String> {
    let cells = (pods as u64).saturating_mul(scenario.nodes.len() as u64);
    let what = || format!("{pods} pods × {} nodes", scenario.nodes.len());
    let limits = [
        (crate::limits::EXPLAIN_VERDICTS, true),
        (crate::limits::EXPLAIN_NODE_LINES, ask.all_nodes),
    ];
    for (limit, applies) in limits {
        if applies && limit.exceeded_by(cells) {
            return Err(format!("{}: {}", scenario.name, limit.message(what())));
        }
    }
    Ok(())
}

/// The explanations of the `wanted` pods (`namespace/name`) in one scenario: its run with
/// their cycles recorded.
pub fn explain_pods(
    scenario: &Scenario,
    wanted: HashSet<String>,
    ask: &Ask,
) -> report::ScenarioExplanation {
    let wanted = Arc::new(wanted);
    let mut config = scenario.config.clone();
    config.explain = Some(Arc::clone(&wanted));
    config.explain_nodes = ask.nodes.clone();
    config.drop_node_verdicts = false;
    let outcome = scenario.schedule(&config);
    report::ScenarioExplanation::new(scenario, &outcome, &wanted, ask)
}

/// `run --charts`: a page per scenario that leaves pods pending, explaining them
/// (`explain-<scenario>.html`, as `explain --pending --html` writes it), for `index.html` to
/// link. Returns the scenarios that got one.
pub fn write_pending_pages(
    scenarios: &[(&Scenario, &crate::report::ScenarioReport)],
    out: &std::path::Path,
) -> Result<HashSet<String>, String> {
    use rayon::prelude::*;
    let ask = Ask {
        pending: true,
        top: 10,
        ..Default::default()
    };
    let explained: Vec<report::ScenarioExplanation> = (scenarios.par_iter())
        .filter_map(|(scenario, r)| {
            let pending: HashSet<String> = (r.pods.iter())
                .filter(|p| !matches!(p.status, PodPhase::Scheduled | PodPhase::Succeeded))
                .map(|p| format!("{}/{}", p.namespace, p.name))
                .collect();
            if pending.is_empty() {
                return None;
            }
            // A page past the limits is left out; the run and its charts stand.
            if let Err(e) = within_limits(scenario, pending.len(), &ask) {
                eprintln!("warning: no explain page: {e}");
                return None;
            }
            Some(explain_pods(scenario, pending, &ask))
        })
        .collect();
    for s in &explained {
        html::write_scenario_page(s, out)?;
    }
    Ok(explained.into_iter().map(|s| s.name).collect())
}
