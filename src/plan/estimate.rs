//! A first answer fast, as the cluster autoscaler's bin-packing estimate finds one
//! (`estimator/binpacking_estimator.go`; capacity-planning.md §1.2, with GPUs in): the pods a
//! run left pending, grouped by spec, each group given to the candidate that hosts it most
//! cheaply by its requests, and per candidate as many nodes as the groups' requests sum to.
//! Only a guess: the search simulates every point it proposes.

use crate::model::resources::{self, ResourceList};
use crate::model::{Node, Pod};
use crate::sched::SchedulerConfig;

use super::bound::{alike, eligible, pod_requests};

/// What the estimate reads: the candidates' template nodes, what a node of each brings, its
/// price.
pub struct Estimator {
    pub templates: Vec<Option<Node>>,
    pub per_node: Vec<ResourceList>,
    pub prices: Vec<i128>,
    pub config: SchedulerConfig,
}

impl Estimator {
    /// Nodes to add per candidate for `pending`.
    pub fn more(&self, pending: &[&Pod]) -> Vec<u32> {
        let n = self.templates.len();
        let mut groups: Vec<(&Pod, ResourceList)> = Vec::new();
        for p in pending {
            let r = pod_requests(p);
            match groups.iter_mut().find(|(q, _)| alike(q, p)) {
                Some((_, sum)) => resources::add(sum, &r),
                None => groups.push((p, r)),
            }
        }
        let mut per_candidate: Vec<ResourceList> = vec![ResourceList::new(); n];
        for (pod, sum) in &groups {
            let cheapest = (0..n)
                .filter(|&t| {
                    self.templates[t]
                        .as_ref()
                        .is_some_and(|node| eligible(&self.config, pod, node))
                })
                .filter_map(|t| {
                    self.nodes_for(t, sum)
                        .map(|k| (self.prices[t] * i128::from(k), t))
                })
                .min();
            if let Some((_, t)) = cheapest {
                resources::add(&mut per_candidate[t], sum);
            }
        }
        (0..n)
            .map(|t| self.nodes_for(t, &per_candidate[t]).unwrap_or(0))
            .collect()
    }

    /// Nodes of candidate `t` that hold `demand` by the sums of its resources, or `None` when
    /// a node brings none of one of them.
    fn nodes_for(&self, t: usize, demand: &ResourceList) -> Option<u32> {
        let mut k = 0i64;
        for (r, &v) in demand {
            if v <= 0 {
                continue;
            }
            let per = self.per_node[t].get(r).copied().unwrap_or(0);
            if per <= 0 {
                return None;
            }
            k = k.max((v + per - 1) / per);
        }
        Some(u32::try_from(k).unwrap_or(u32::MAX))
    }
}
