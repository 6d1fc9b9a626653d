//! DaemonSet pods that follow a run's perturbed nodes: a node the perturbation takes away
//! takes its daemon pods with it (the DaemonSet controller wants none there), and a node it
//! adds (a pool's jitter copy) gets a pod of every DaemonSet that should run on it, arriving
//! with the DaemonSet's other pods, as cluster-autoscaler counts a new node's DaemonSet
//! overhead. Without DaemonSets, or with the scenario's own nodes, the scenario's pods and
//! steps are used as they are.

use std::borrow::Cow;
use std::collections::HashSet;

use crate::load::Scenario;
use crate::model::{Node, Pod};
use crate::resolve::apps::Naming;
use crate::resolve::apps::daemonset::target_node;
use crate::sched::plan::{Requirement, Step};

/// The pods and steps of a run on `nodes`, the scenario's initial nodes perturbed.
pub fn follow_nodes<'s>(
    s: &'s Scenario,
    nodes: &[Node],
    steps: Vec<Step>,
) -> (Cow<'s, [Pod]>, Vec<Step>) {
    if s.daemon_sets.is_empty() {
        return (Cow::Borrowed(&s.workloads), steps);
    }
    let now: HashSet<&str> = nodes.iter().map(|n| n.name.as_str()).collect();
    let before: HashSet<&str> = s.nodes.iter().map(|n| n.name.as_str()).collect();
    let removed: HashSet<&str> = before.difference(&now).copied().collect();
    let added: Vec<&Node> = (nodes.iter())
        .filter(|n| !before.contains(n.name.as_str()))
        .collect();
    if removed.is_empty() && added.is_empty() {
        return (Cow::Borrowed(&s.workloads), steps);
    }
    // Old index → new index, daemon pods of removed nodes left out.
    let mut map: Vec<Option<usize>> = Vec::with_capacity(s.workloads.len());
    let mut pods: Vec<Pod> = Vec::with_capacity(s.workloads.len());
    for p in &s.workloads {
        if target_node(p).is_some_and(|n| removed.contains(n)) {
            map.push(None);
        } else {
            map.push(Some(pods.len()));
            pods.push(p.clone());
        }
    }
    let mut steps = remap(steps, &map);
    let mut naming = Naming {
        seed: s.config.seed,
        taken: (s.workloads.iter().chain(&s.existing_pods))
            .map(Pod::key)
            .collect(),
    };
    let gates = &s.config.feature_gates;
    // New pods per arrival: the start (`None`) or a timeline step.
    let mut arrivals: Vec<(Option<usize>, usize)> = Vec::new();
    for ds in &s.daemon_sets {
        for n in added.iter().filter(|n| ds.pods.should_run(n, gates)) {
            let name = naming.generate(&ds.pods.namespace, &ds.pods.name, &n.name);
            arrivals.push((ds.arrives, pods.len()));
            pods.push(ds.pods.pod_for(&n.name, name));
        }
    }
    for (arrives, pod) in arrivals.into_iter().rev() {
        let at = match arrives {
            None => 0,
            // Before the step's checkpoint: with the step's arrivals.
            Some(k) => (steps.iter().enumerate())
                .filter(|(_, s)| matches!(s, Step::Checkpoint { .. }))
                .nth(k)
                .map_or(steps.len(), |(i, _)| i),
        };
        let schedule = Step::Schedule {
            pod,
            requires: Vec::new(),
        };
        steps.insert(at, schedule);
    }
    (Cow::Owned(pods), steps)
}

/// The steps over the kept pods' new indices; a removed pod's `Schedule` is dropped. No
/// requirement's range holds a removed pod (daemon pods are nobody's dependency).
fn remap(steps: Vec<Step>, map: &[Option<usize>]) -> Vec<Step> {
    let range = |r: std::ops::Range<usize>| {
        if r.is_empty() {
            return 0..0;
        }
        match (map[r.start], map[r.end - 1]) {
            (Some(a), Some(b)) => a..b + 1,
            _ => 0..0,
        }
    };
    steps
        .into_iter()
        .filter_map(|s| match s {
            Step::Schedule { pod, requires } => map[pod].map(|pod| Step::Schedule {
                pod,
                requires: (requires.into_iter())
                    .map(|r| Requirement {
                        pods: range(r.pods.clone()),
                        ..r
                    })
                    .collect(),
            }),
            Step::Complete { pods } => Some(Step::Complete {
                pods: pods.into_iter().filter_map(|p| map[p]).collect(),
            }),
            other => Some(other),
        })
        .collect()
}
