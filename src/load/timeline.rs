//! `spec.timeline`: each step's events, checked against the nodes and pods that exist then.

use std::path::Path;
use std::rc::Rc;

use super::origin::Origin;
use super::{Errors, Loader, scenario, suggestion};
use crate::model::Node;
use crate::sched::plan::{Event, PodSelector};
use crate::yaml::{Document, join_path};

impl Loader<'_> {
    /// The nodes of a step's `addNodes` (`path` is the step's), read before the workloads:
    /// DaemonSets make pods for them.
    pub(super) fn added_nodes(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        path: &str,
        items: &[serde_json::Value],
    ) -> Result<Vec<(Node, Origin)>, Errors> {
        let mut added = Vec::new();
        let mut errors = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match self.node_item(file, doc, &join_path(path, &format!("addNodes[{i}]")), item) {
                Ok(mut list) => added.append(&mut list),
                Err(mut e) => errors.append(&mut e),
            }
        }
        if errors.is_empty() {
            Ok(added)
        } else {
            Err(errors)
        }
    }

    /// A timeline step's events, checked against the nodes and pods that exist: node names
    /// (the step's new nodes, `added`, are added to `node_names`), pod keys, workload names.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn timeline_events(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        path: &str,
        step: &scenario::TimelineStep,
        added: Option<Result<Vec<(Node, Origin)>, Errors>>,
        node_names: &mut Vec<String>,
        pod_names: &[String],
        workload_names: &[String],
    ) -> Result<Vec<Event>, Errors> {
        let at = |child: &str| doc.error(file, &join_path(path, child), "");
        let with = |child: &str, message: String| {
            let mut e = at(child);
            e.message = message;
            e
        };
        let actions = [
            step.remove_scheduling_gates.is_some(),
            step.cordon.is_some(),
            step.uncordon.is_some(),
            step.drain.is_some(),
            step.fail_nodes.is_some(),
            step.complete.is_some(),
            step.add_nodes.is_some(),
            step.arrive.is_some(),
            step.kueue.is_some(),
        ];
        if actions.iter().filter(|a| **a).count() != 1 {
            return Err(vec![with(
                "",
                "a timeline step needs exactly one of removeSchedulingGates, cordon, uncordon, drain, failNodes, complete, addNodes, arrive, kueue".into(),
            )]);
        }
        let unknown = |field: &str, names: &[String], known: &[String], what: &str| {
            names
                .iter()
                .enumerate()
                .filter(|(_, n)| !known.contains(n))
                .map(|(i, n)| {
                    with(
                        &format!("{field}[{i}]"),
                        format!("no {what} {n:?}{}", suggestion(n, known)),
                    )
                })
                .collect::<Vec<_>>()
        };
        let selector = |field: &str, pods: &[String], workloads: &[String]| {
            if pods.is_empty() && workloads.is_empty() {
                return Err(vec![with(field, "name the pods or workloads".into())]);
            }
            let mut errs = unknown(&format!("{field}.pods"), pods, pod_names, "workload pod");
            errs.extend(unknown(
                &format!("{field}.workloads"),
                workloads,
                workload_names,
                "workload",
            ));
            if errs.is_empty() {
                Ok(PodSelector {
                    pods: pods.to_vec(),
                    workloads: workloads.to_vec(),
                })
            } else {
                Err(errs)
            }
        };
        let mut errors = Vec::new();
        let mut events = Vec::new();
        if let Some(g) = &step.remove_scheduling_gates {
            match selector("removeSchedulingGates", &g.pods, &g.workloads) {
                Ok(pods) => events.push(Event::RemoveSchedulingGates {
                    pods,
                    gates: g.gates.clone(),
                }),
                Err(mut e) => errors.append(&mut e),
            }
        }
        if let Some(c) = &step.complete {
            match selector("complete", &c.pods, &c.workloads) {
                Ok(pods) => events.push(Event::Complete(pods)),
                Err(mut e) => errors.append(&mut e),
            }
        }
        for (field, names, event) in [
            (
                "cordon",
                &step.cordon,
                Event::Cordon as fn(Vec<String>) -> Event,
            ),
            ("uncordon", &step.uncordon, Event::Uncordon),
            ("drain", &step.drain, Event::Drain),
            ("failNodes", &step.fail_nodes, Event::FailNodes),
        ] {
            if let Some(names) = names {
                errors.extend(unknown(field, names, node_names, "node"));
                events.push(event(names.clone()));
            }
        }
        if let Some(parsed) = added {
            let mut nodes = Vec::new();
            match parsed {
                Ok(list) => {
                    for (n, at) in list {
                        if node_names.contains(&n.name) {
                            errors.push(at.error(format!("duplicate node name {:?}", n.name)));
                        }
                        node_names.push(n.name.clone());
                        nodes.push(n);
                    }
                }
                Err(mut e) => errors.append(&mut e),
            }
            events.push(Event::AddNodes(nodes));
        }
        if let Some(names) = &step.fail_nodes {
            node_names.retain(|n| !names.contains(n));
        }
        if errors.is_empty() {
            Ok(events)
        } else {
            Err(errors)
        }
    }
}

/// A timeline step's default name: its position and action.
pub(super) fn describe_step(k: usize, step: &scenario::TimelineStep) -> String {
    let list = |v: &Option<Vec<String>>| v.as_ref().map(|v| v.join(", "));
    let selector = |pods: &[String], workloads: &[String]| {
        pods.iter()
            .chain(workloads)
            .cloned()
            .collect::<Vec<_>>()
            .join(", ")
    };
    let action = if let Some(g) = &step.remove_scheduling_gates {
        format!(
            "remove scheduling gates of {}",
            selector(&g.pods, &g.workloads)
        )
    } else if let Some(n) = list(&step.cordon) {
        format!("cordon {n}")
    } else if let Some(n) = list(&step.uncordon) {
        format!("uncordon {n}")
    } else if let Some(n) = list(&step.drain) {
        format!("drain {n}")
    } else if let Some(n) = list(&step.fail_nodes) {
        format!("fail {n}")
    } else if let Some(c) = &step.complete {
        format!("complete {}", selector(&c.pods, &c.workloads))
    } else if let Some(n) = &step.add_nodes {
        format!("add {} node item(s)", n.len())
    } else if let Some(a) = &step.arrive {
        format!("{} workload item(s) arrive", a.len())
    } else if let Some(k) = &step.kueue {
        format!("{} Kueue queue item(s) change", k.len())
    } else {
        "nothing".into()
    };
    format!("step {}: {action}", k + 1)
}
