//! Loading for `schedsim plan`: the scenarios with `spec.plan`, their candidates checked, and
//! each evaluated point — the scenario with some nodes of each candidate added — loaded as a
//! scenario of its own (the added nodes get their DaemonSets' pods as any node does).

use std::collections::HashMap;
use std::path::PathBuf;
use std::rc::Rc;

use super::scenario::PlanSpec;
use super::{LoadOptions, Loader, Scenario};
use crate::error::InputError;
use crate::yaml::Document;

/// A scenario with `spec.plan`, not loaded yet.
#[derive(Debug)]
pub struct PlanTarget {
    pub name: String,
    pub file: PathBuf,
    pub spec: PlanSpec,
    doc: Rc<Document>,
}

/// Reads plan scenarios and loads them with additions; files read once are kept parsed.
pub struct PlanLoader<'o> {
    loader: Loader<'o>,
}

impl<'o> PlanLoader<'o> {
    pub fn new(options: &'o LoadOptions) -> Self {
        PlanLoader {
            loader: Loader {
                cache: HashMap::new(),
                options,
                plan_counts: None,
            },
        }
    }

    /// The scenarios of the files that have `spec.plan` (their candidates checked), and the
    /// errors of those that cannot be read.
    pub fn targets(&mut self, files: &[PathBuf]) -> (Vec<PlanTarget>, Vec<InputError>) {
        let (mut out, mut errors) = (Vec::new(), Vec::new());
        for (file, doc, sd) in self.loader.scenario_docs(files, &mut errors) {
            let Some(spec) = sd.spec.plan else { continue };
            let checked = check(&file, &doc, &spec).and_then(|()| {
                match (spec.goal.over_time(), sd.spec.replay.is_some()) {
                    (true, false) => Err(doc.error(
                        &file,
                        "spec.plan.goal",
                        "a wait goal needs spec.replay: each point is replayed over time",
                    )),
                    (true, true) if !spec.goal.workloads_admitted.is_empty() => Err(doc.error(
                        &file,
                        "spec.plan.goal.workloadsAdmitted",
                        "workloadsAdmitted is judged on one run, not with a wait goal's replay",
                    )),
                    _ => Ok(()),
                }
            });
            match checked {
                Ok(()) => out.push(PlanTarget {
                    name: sd.metadata.name,
                    file,
                    spec,
                    doc,
                }),
                Err(e) => errors.push(e),
            }
        }
        (out, errors)
    }

    /// The target's scenario with `counts[i]` nodes of candidate `i` added.
    pub fn load(
        &mut self,
        target: &PlanTarget,
        counts: &[u32],
    ) -> Result<Scenario, Vec<InputError>> {
        self.loader.plan_counts = Some(counts.to_vec());
        let scenario = self.loader.scenario(&target.file, &target.doc);
        self.loader.plan_counts = None;
        scenario
    }
}

/// `spec.plan` beyond its types: candidates named once each with a DNS label (it names their
/// nodes), `min` ≤ `max`, prices not negative, a goal's percentage within 0–100.
fn check(file: &std::path::Path, doc: &Document, spec: &PlanSpec) -> Result<(), InputError> {
    let at = |path: String, message: String| doc.error(file, &path, message);
    if spec.candidates.is_empty() && spec.remove.is_empty() {
        return Err(at(
            "spec.plan".into(),
            "a plan needs candidates (nodes to add) or remove (nodes that may go)".into(),
        ));
    }
    for (i, c) in spec.candidates.iter().enumerate() {
        let path = format!("spec.plan.candidates[{i}]");
        let before = spec.candidates[..i].iter().map(|o| o.name.as_str());
        name_once(&c.name, before, "candidate").map_err(|m| at(format!("{path}.name"), m))?;
        let given = [
            c.template.is_some(),
            c.from_node.is_some(),
            c.quota.is_some(),
        ];
        if given.iter().filter(|g| **g).count() != 1 {
            let message = "a candidate has one of template, fromNode and quota".to_string();
            return Err(at(path, message));
        }
        if let Some(Err(e)) = c.quota.as_ref().map(|q| q.step_units()) {
            return Err(at(format!("{path}.quota.step"), e));
        }
        if c.min > c.max {
            let message = format!("min {} is above max {}", c.min, c.max);
            return Err(at(format!("{path}.min"), message));
        }
        price(c.price_per_hour).map_err(|m| at(format!("{path}.pricePerHour"), m))?;
    }
    for (i, g) in spec.remove.iter().enumerate() {
        let path = format!("spec.plan.remove[{i}]");
        let before = spec.remove[..i].iter().map(|o| o.name.as_str());
        name_once(&g.name, before, "group").map_err(|m| at(format!("{path}.name"), m))?;
        if g.pool.is_none() && g.selector.is_none() {
            let message = "a removal group names its nodes by pool or selector".to_string();
            return Err(at(path, message));
        }
        let mut errs = Vec::new();
        let selector_path = format!("{path}.selector");
        crate::model::validate::selector::label_selector(
            g.selector.as_ref(),
            false,
            &selector_path,
            &mut errs,
        );
        if let Some(e) = errs.into_iter().next() {
            return Err(at(e.path, e.message));
        }
        price(g.price_per_hour).map_err(|m| at(format!("{path}.pricePerHour"), m))?;
    }
    if let Some(e) = &spec.expect {
        for name in e.added_at_most.keys() {
            if !spec.candidates.iter().any(|c| &c.name == name) {
                let message = format!("no candidate is named {name:?}");
                return Err(at(format!("spec.plan.expect.addedAtMost.{name}"), message));
            }
        }
        for name in e.removed_at_least.keys() {
            if !spec.remove.iter().any(|g| &g.name == name) {
                let message = format!("no removal group is named {name:?}");
                return Err(at(
                    format!("spec.plan.expect.removedAtLeast.{name}"),
                    message,
                ));
            }
        }
        let adds = e.feasible.is_some() || e.nodes_at_most.is_some() || e.cost_at_most.is_some();
        if adds && spec.candidates.is_empty() {
            let message = "limits on the nodes added, but the plan has no candidates".to_string();
            return Err(at("spec.plan.expect".into(), message));
        }
        if e.savings_at_least.is_some() && spec.remove.is_empty() {
            let message = "savingsAtLeast, but the plan has no removal groups".to_string();
            return Err(at("spec.plan.expect.savingsAtLeast".into(), message));
        }
    }
    let waits = (spec
        .goal
        .wait_p95_at_most
        .iter()
        .map(|w| ("waitP95AtMost".to_string(), w)))
    .chain(
        (spec.goal.queue_wait_p95_at_most.iter())
            .map(|(q, w)| (format!("queueWaitP95AtMost.{q}"), w)),
    );
    for (field, w) in waits {
        if let Err(e) = crate::trace::clock::parse_duration(w) {
            return Err(at(format!("spec.plan.goal.{field}"), e));
        }
    }
    if let Some(g) = spec.goal.gpu_allocation_at_least
        && !(0.0..=100.0).contains(&g)
    {
        let message = format!("{g} is not a percentage (0 to 100)");
        return Err(at("spec.plan.goal.gpuAllocationAtLeast".into(), message));
    }
    Ok(())
}

/// A name of the plan's (it names nodes or groups in the answer): a DNS label, not used by
/// one `before` it.
fn name_once<'n>(
    name: &str,
    mut before: impl Iterator<Item = &'n str>,
    what: &str,
) -> Result<(), String> {
    let problems =
        crate::model::labels::dns1123_label_errors(name, crate::model::labels::LenUnit::Characters);
    if !problems.is_empty() {
        return Err(format!("Invalid value: {name:?}: {}", problems.join("; ")));
    }
    match before.any(|o| o == name) {
        true => Err(format!("duplicate {what} {name:?}")),
        false => Ok(()),
    }
}

/// A price per hour: finite and not negative.
fn price(p: Option<f64>) -> Result<(), String> {
    match p {
        Some(p) if !(p.is_finite() && p >= 0.0) => Err(format!("{p} is not a price")),
        _ => Ok(()),
    }
}
