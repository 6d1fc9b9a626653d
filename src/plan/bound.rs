//! A sound lower bound on the nodes a goal needs (capacity-planning.md §7.1): every pod the
//! goal needs placed holds its requests on some node (NodeResourcesFit), so per resource the
//! cluster's allocatable must cover their sum. A point whose additions leave a resource short
//! cannot meet the goal, whatever the scheduler does; the search evaluates no such point.

use std::collections::BTreeMap;

use crate::load::Scenario;
use crate::load::scenario::PlanGoal;
use crate::model::resources::{self, ResourceList};

/// Per resource: how much the goal's pods need beyond what the cluster has without
/// additions, and what one more node of each candidate brings (its allocatable less its
/// DaemonSets' pods' requests).
#[derive(Debug, Clone, PartialEq)]
pub struct Bound {
    /// resource → shortfall at the least additions (`min` of every candidate); ≤ 0: none.
    pub deficit: BTreeMap<String, i64>,
    /// Per candidate: resource → net amount one node adds.
    pub per_node: Vec<BTreeMap<String, i64>>,
}

impl Bound {
    /// From the scenario at the least additions (`base`) and, per candidate, the scenario
    /// with one more node of it.
    pub fn new(goal: &PlanGoal, base: &Scenario, one_more: &[Scenario]) -> Self {
        let (mut need, have) = (demand(goal, base), capacity(base));
        // Only what some node publishes is bounded: other resources (left to DRA, or
        // ignored by the fit) are not.
        let published: std::collections::HashSet<&String> = (std::iter::once(base).chain(one_more))
            .flat_map(|s| s.nodes.iter().flat_map(|n| n.allocatable.keys()))
            .collect();
        need.retain(|r, _| published.contains(r));
        let names: Vec<&String> = need.keys().collect();
        let deficit = (names.iter())
            .map(|r| {
                let short = need[*r] - have.get(*r).copied().unwrap_or(0);
                ((*r).clone(), short)
            })
            .collect();
        let per_node = (one_more.iter())
            .map(|s| {
                let (need_t, have_t) = (demand(goal, s), capacity(s));
                (names.iter())
                    .map(|r| {
                        let added = have_t.get(*r).copied().unwrap_or(0)
                            - have.get(*r).copied().unwrap_or(0);
                        let daemons = need_t.get(*r).copied().unwrap_or(0) - need[*r];
                        ((*r).clone(), added - daemons)
                    })
                    .collect()
            })
            .collect();
        Bound { deficit, per_node }
    }

    /// The first resource `extra` (nodes added beyond the least, per candidate) leaves short,
    /// or `None` when the bound allows the point.
    pub fn short_of(&self, extra: &[u32]) -> Option<&str> {
        self.deficit.iter().find_map(|(r, &deficit)| {
            let brought: i64 = (self.per_node.iter().zip(extra))
                .map(|(n, &k)| n.get(r).copied().unwrap_or(0) * i64::from(k))
                .sum();
            (brought < deficit).then_some(r.as_str())
        })
    }
}

/// What the goal's pods request, summed per resource (and `pods`, one each): every workload
/// pod (all must be placed) less, for `pendingPodsAtMost: N`, the N largest requests of each
/// resource; with only named workloads to place, theirs; the bound pods of the cluster
/// always. A GPU-allocation goal alone needs nothing placed.
fn demand(goal: &PlanGoal, s: &Scenario) -> ResourceList {
    let every_pod = goal.all_placed == Some(true)
        || goal.pending_pods_at_most.is_some()
        || (goal.workloads_placed.is_empty() && goal.gpu_allocation_at_least.is_none());
    let named = |p: &&crate::model::Pod| {
        let key = format!(
            "{}/{}",
            p.namespace,
            p.workload.as_deref().unwrap_or(&p.name)
        );
        goal.workloads_placed.contains(&key)
    };
    let pods: Vec<&crate::model::Pod> = match every_pod {
        true => s.workloads.iter().collect(),
        false => s.workloads.iter().filter(named).collect(),
    };
    let mut per_resource: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for p in &pods {
        for (r, &v) in p.requests.iter() {
            per_resource.entry(r.clone()).or_default().push(v);
        }
        per_resource
            .entry(resources::PODS.into())
            .or_default()
            .push(1);
    }
    let spared = match (goal.all_placed, goal.pending_pods_at_most) {
        (Some(true), _) | (_, None) => 0,
        (_, Some(n)) => n as usize,
    };
    let mut out: ResourceList = (per_resource.into_iter())
        .map(|(r, mut amounts)| {
            amounts.sort_unstable_by(|a, b| b.cmp(a));
            (r, amounts.iter().skip(spared).sum())
        })
        .collect();
    let node_names: std::collections::HashSet<&str> =
        s.nodes.iter().map(|n| n.name.as_str()).collect();
    for p in &s.existing_pods {
        if p.node_name
            .as_deref()
            .is_some_and(|n| node_names.contains(n))
        {
            for (r, &v) in p.requests.iter() {
                *out.entry(r.clone()).or_default() += v;
            }
            *out.entry(resources::PODS.into()).or_default() += 1;
        }
    }
    out
}

/// The nodes' allocatable, summed per resource.
fn capacity(s: &Scenario) -> ResourceList {
    let mut out = ResourceList::new();
    for n in &s.nodes {
        for (r, &v) in &n.allocatable {
            *out.entry(r.clone()).or_default() += v;
        }
    }
    out
}
