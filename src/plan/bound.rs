//! Sound lower bounds on the nodes a goal needs (capacity-planning.md §7.1): every pod the
//! goal needs placed holds its requests on a node that passes its static filters (node
//! name, cordon, taints, node selector and affinity) and whose allocatable holds them. So,
//! per resource, the cluster's allocatable must cover the sum of those pods' requests; and per
//! group of pods alike in where they may run (the existing nodes and the candidates whose
//! template passes those filters), what those nodes have free — the existing ones less the
//! pods bound there — plus what the added nodes of those candidates bring must cover the
//! group's requests. A point that leaves any of them short cannot meet the goal, whatever the
//! scheduler does (other pods only take more); the search simulates no such point.

use crate::load::Scenario;
use crate::load::scenario::PlanGoal;
use crate::model::resources::{self, ResourceList};
use crate::model::{Node, Pod};
use crate::sched::SchedulerConfig;
use crate::sched::framework::MessageFormat;
use crate::sched::plugins::registry::{ExtensionPoint, Plugin};
use crate::sched::plugins::{node_affinity, node_name, node_unschedulable, taint_toleration};

/// One covering condition: `have[r]` plus Σ over the candidates `per_node[t][r]` × added
/// nodes of `t` (for the candidates in `candidates`) must reach `need[r]`.
#[derive(Debug, Clone, PartialEq)]
struct Cover {
    need: ResourceList,
    have: ResourceList,
    /// The candidates whose nodes count.
    candidates: Vec<bool>,
}

/// The bounds of a plan.
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    covers: Vec<Cover>,
    /// Per candidate: resource → what one added node brings (its allocatable less its
    /// DaemonSets' pods' requests).
    pub per_node: Vec<ResourceList>,
}

impl Bound {
    /// From the scenario without additions (`base`) and, per candidate, the scenario with one
    /// node of it (`one`).
    pub fn new(goal: &PlanGoal, base: &Scenario, one: &[Scenario]) -> Self {
        let pods = goal_pods(goal, base);
        // Only what some node publishes is bounded: other resources (left to DRA, or
        // ignored by the fit) are not.
        let published: std::collections::HashSet<&String> = (std::iter::once(base).chain(one))
            .flat_map(|s| s.nodes.iter().flat_map(|n| n.allocatable.keys()))
            .collect();
        // A candidate that adds no node (a quota) has no template.
        let templates: Vec<Option<&Node>> = (one.iter())
            .map(|s| s.nodes.last().filter(|_| s.nodes.len() > base.nodes.len()))
            .collect();
        let per_node: Vec<ResourceList> = (one.iter())
            .map(|s| {
                let (have_t, have) = (capacity(s.nodes.iter()), capacity(base.nodes.iter()));
                let daemons = {
                    let mut d = requests(s.workloads.iter());
                    for (r, v) in requests(base.workloads.iter()) {
                        *d.entry(r).or_default() -= v;
                    }
                    d
                };
                (have_t.keys())
                    .map(|r| {
                        let added = have_t[r] - have.get(r).copied().unwrap_or(0);
                        (r.clone(), added - daemons.get(r).copied().unwrap_or(0))
                    })
                    .collect()
            })
            .collect();
        let bound_pods: Vec<&Pod> = bound_pods(base).collect();
        let mut covers = vec![Cover {
            need: requests(pods.iter().copied().chain(bound_pods.iter().copied())),
            have: capacity(base.nodes.iter()),
            candidates: vec![true; one.len()],
        }];
        // Pods by where they may run: the existing nodes and the candidates that pass their
        // static filters. Per such place, its pods and those of every place inside it can
        // use nothing else. The whole-cluster cover above holds the pods pinned to one node
        // (DaemonSets'), which would make a place of one node each.
        if goal.pending_pods_at_most.is_none() {
            let mut specs: Vec<(&Pod, Vec<&Pod>)> = Vec::new();
            for p in pods.iter().filter(|p| !pinned(p)) {
                match specs.iter_mut().find(|(r, _)| alike(r, p)) {
                    Some((_, members)) => members.push(p),
                    None => specs.push((p, vec![p])),
                }
            }
            let mut places: Vec<Place> = Vec::new();
            for (representative, members) in specs {
                let mut nodes = vec![0u64; base.nodes.len().div_ceil(64)];
                for (i, n) in base.nodes.iter().enumerate() {
                    if eligible(&base.config, representative, n) {
                        nodes[i / 64] |= 1 << (i % 64);
                    }
                }
                let candidates: Vec<bool> = (templates.iter())
                    .map(|t| t.is_some_and(|t| eligible(&base.config, representative, t)))
                    .collect();
                let need = requests(members.iter().copied());
                match (places.iter_mut()).find(|p| p.nodes == nodes && p.candidates == candidates) {
                    Some(p) => resources::add(&mut p.need, &need),
                    None => places.push(Place {
                        nodes,
                        candidates,
                        need,
                    }),
                }
            }
            for a in &places {
                let mut need = ResourceList::new();
                for b in places.iter().filter(|b| b.inside(a)) {
                    resources::add(&mut need, &b.need);
                }
                let on = |i: usize| a.nodes[i / 64] & (1 << (i % 64)) != 0;
                let names: std::collections::HashSet<&str> = (base.nodes.iter().enumerate())
                    .filter(|(i, _)| on(*i))
                    .map(|(_, n)| n.name.as_str())
                    .collect();
                let mut have = capacity(
                    base.nodes
                        .iter()
                        .filter(|n| names.contains(n.name.as_str())),
                );
                for p in &bound_pods {
                    if p.node_name.as_deref().is_some_and(|n| names.contains(n)) {
                        for (r, v) in pod_requests(p) {
                            *have.entry(r).or_default() -= v;
                        }
                    }
                }
                covers.push(Cover {
                    need,
                    have,
                    candidates: a.candidates.clone(),
                });
            }
        }
        for c in &mut covers {
            c.need.retain(|r, _| published.contains(r));
        }
        Bound { covers, per_node }
    }

    /// This bound without its covers: a replay's pods come and go, so the requests of all of
    /// them at once bound nothing.
    pub fn without_covers(self) -> Bound {
        Bound {
            covers: Vec::new(),
            per_node: self.per_node,
        }
    }

    /// The fewest nodes of each candidate any point meeting the goal has: where a cover
    /// counts one candidate's nodes alone, that candidate must bring its shortfall.
    pub fn floors(&self) -> Vec<u32> {
        let mut floors = vec![0u32; self.per_node.len()];
        for c in &self.covers {
            let mut only = (0..c.candidates.len()).filter(|&t| c.candidates[t]);
            let (Some(t), None) = (only.next(), only.next()) else {
                continue;
            };
            for (r, &need) in &c.need {
                let short = need - c.have.get(r).copied().unwrap_or(0);
                let per = self.per_node[t].get(r).copied().unwrap_or(0);
                if short > 0 && per > 0 {
                    let k = u32::try_from((short + per - 1) / per).unwrap_or(u32::MAX);
                    floors[t] = floors[t].max(k);
                }
            }
        }
        floors
    }

    /// The first resource `added` (nodes per candidate) leaves short, or `None` when the
    /// bounds allow the point.
    pub fn short_of(&self, added: &[u32]) -> Option<&str> {
        self.covers.iter().find_map(|c| {
            c.need.iter().find_map(|(r, &need)| {
                let brought: i64 = (self.per_node.iter().zip(added).zip(&c.candidates))
                    .filter(|(_, counts)| **counts)
                    .map(|((n, &k), _)| n.get(r).copied().unwrap_or(0) * i64::from(k))
                    .sum();
                (c.have.get(r).copied().unwrap_or(0) + brought < need).then_some(r.as_str())
            })
        })
    }
}

/// Where some pods may run: existing nodes (a bit each) and candidates; and what they request.
struct Place {
    nodes: Vec<u64>,
    candidates: Vec<bool>,
    need: ResourceList,
}

impl Place {
    /// Every node and candidate of `self` is one of `other`'s.
    fn inside(&self, other: &Place) -> bool {
        (self.nodes.iter().zip(&other.nodes)).all(|(a, b)| a & !b == 0)
            && (self.candidates.iter().zip(&other.candidates)).all(|(a, b)| !a || *b)
    }
}

/// The workload pods the goal needs placed: all of them (`pendingPodsAtMost: N` spares the N
/// largest of each resource: see [`requests_sparing`]), or the named workloads' alone; none
/// for a GPU-allocation goal alone.
fn goal_pods<'s>(goal: &PlanGoal, s: &'s Scenario) -> Vec<&'s Pod> {
    let every_pod = goal.all_placed == Some(true)
        || goal.pending_pods_at_most.is_some()
        || (goal.workloads_placed.is_empty()
            && goal.gpu_allocation_at_least.is_none()
            && goal.workloads_admitted.is_empty());
    let named = |p: &&Pod| {
        let key = super::goal::workload_key(&p.namespace, p.workload.as_deref(), &p.name);
        goal.workloads_placed.contains(&key)
    };
    match every_pod {
        true if goal.all_placed != Some(true) && goal.pending_pods_at_most.is_some() => {
            requests_sparing(s, goal.pending_pods_at_most.unwrap_or(0))
        }
        true => s.workloads.iter().collect(),
        false => s.workloads.iter().filter(named).collect(),
    }
}

/// With N pods allowed to pend, a sound bound cannot tell which: the N pods of the largest
/// requests (by their largest share of any one resource's total) are left out.
fn requests_sparing(s: &Scenario, n: u64) -> Vec<&Pod> {
    let totals = requests(s.workloads.iter());
    let share = |p: &Pod| {
        pod_requests(p)
            .iter()
            .map(|(r, v)| *v as f64 / totals.get(r).copied().unwrap_or(1).max(1) as f64)
            .fold(0.0, f64::max)
    };
    let mut pods: Vec<&Pod> = s.workloads.iter().collect();
    pods.sort_by(|a, b| share(b).total_cmp(&share(a)));
    // Leaving out the N largest by one measure is not the largest saving for every
    // resource: spare more — every pod whose share reaches the N-th's — to stay sound.
    let cut = pods.get(n as usize).map_or(0.0, |p| share(p));
    pods.retain(|p| share(p) < cut);
    pods
}

/// The existing pods bound to a node of the scenario.
fn bound_pods(s: &Scenario) -> impl Iterator<Item = &Pod> {
    let names: std::collections::HashSet<&str> = s.nodes.iter().map(|n| n.name.as_str()).collect();
    (s.existing_pods.iter())
        .filter(move |p| p.node_name.as_deref().is_some_and(|n| names.contains(n)))
}

/// A pod's requests, with `pods`: 1.
pub(super) fn pod_requests(p: &Pod) -> ResourceList {
    let mut r: ResourceList = (*p.requests).clone();
    r.insert(resources::PODS.into(), 1);
    r
}

fn requests<'p>(pods: impl Iterator<Item = &'p Pod>) -> ResourceList {
    let mut out = ResourceList::new();
    for p in pods {
        resources::add(&mut out, &pod_requests(p));
    }
    out
}

fn capacity<'n>(nodes: impl Iterator<Item = &'n Node>) -> ResourceList {
    let mut out = ResourceList::new();
    for n in nodes {
        resources::add(&mut out, &n.allocatable);
    }
    out
}

/// A pod bound for one node by name (a DaemonSet's: `spec.nodeName`, or a `metadata.name`
/// field selector).
fn pinned(p: &Pod) -> bool {
    p.node_name.is_some()
        || (p.affinity.as_ref().as_ref())
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|a| {
                a.required_during_scheduling_ignored_during_execution
                    .as_ref()
            })
            .is_some_and(|s| {
                s.node_selector_terms
                    .iter()
                    .any(|t| t.match_fields.is_some())
            })
}

/// Two pods the static filters and the fit treat alike.
pub(super) fn alike(a: &Pod, b: &Pod) -> bool {
    a.scheduler_name == b.scheduler_name
        && a.node_selector == b.node_selector
        && a.affinity == b.affinity
        && a.tolerations == b.tolerations
        && a.requests == b.requests
}

/// Whether `node` passes the static filters the pod's profile runs and, empty, holds its
/// requests: a superset of the nodes the pod can be placed on.
pub(super) fn eligible(config: &SchedulerConfig, pod: &Pod, node: &Node) -> bool {
    let profiles = config.profiles();
    let Some(profile) = config.profile_of(pod).and_then(|i| profiles.get(i)) else {
        return false;
    };
    let runs = |p: Plugin| profile.framework.runs(ExtensionPoint::Filter, p);
    let gates = &config.feature_gates;
    let passes = |plugin: Plugin, status: &dyn Fn() -> bool| !runs(plugin) || status();
    passes(Plugin::NodeUnschedulable, &|| {
        node_unschedulable::filter(pod, node, gates).is_success()
    }) && passes(Plugin::NodeName, &|| {
        node_name::filter(pod, node).is_success()
    }) && passes(Plugin::TaintToleration, &|| {
        taint_toleration::filter(pod, node, gates, MessageFormat::default()).is_success()
    }) && passes(Plugin::NodeAffinity, &|| {
        node_affinity::filter(pod, node, profile.added_affinity.as_ref()).is_success()
    }) && passes(Plugin::NodeResourcesFit, &|| fits_empty(pod, node, gates))
}

/// The pod's requests fit the node's allocatable (what it does not publish counts as 0, but
/// with DRAExtendedResource a device-plugin name may be DRA's instead: then it fits).
fn fits_empty(pod: &Pod, node: &Node, gates: &crate::features::FeatureGates) -> bool {
    pod.requests
        .iter()
        .all(|(r, &v)| match node.allocatable.get(r) {
            Some(&a) => v <= a,
            None => {
                v == 0
                    || gates.dra_extended_resource
                    || ![
                        resources::CPU,
                        resources::MEMORY,
                        resources::EPHEMERAL_STORAGE,
                    ]
                    .contains(&r.as_str())
                        && !resources::is_extended_resource_name(r)
            }
        })
}
