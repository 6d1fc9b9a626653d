//! A sweep run's world: the variant's scenario changed by the run's RNG, in a fixed draw
//! order (scheduler seed, pool jitter per pool, failure per node, arrival shuffle) so a seed
//! always gives the same world.

use rand::rngs::ChaCha8Rng;
use rand::seq::SliceRandom;
use rand::{Rng, RngExt};

use super::Perturbations;
use crate::load::Scenario;
use crate::model::{Node, Pod};
use crate::sched::SchedulerConfig;
use crate::sched::plan::Step;

const HOSTNAME: &str = "kubernetes.io/hostname";

/// What one run schedules.
pub struct World<'s> {
    pub nodes: Vec<Node>,
    pub existing: Vec<Pod>,
    /// The workload pods: the scenario's, with the DaemonSet pods of the perturbed nodes.
    pub pods: std::borrow::Cow<'s, [Pod]>,
    pub steps: Vec<Step>,
    pub config: SchedulerConfig,
}

pub fn perturb<'s>(s: &'s Scenario, p: &Perturbations, rng: &mut ChaCha8Rng) -> World<'s> {
    let mut config = s.config.clone();
    config.seed = rng.next_u64();
    // A sweep keeps reasons, not every pending pod's verdict per node.
    config.drop_node_verdicts = true;
    let mut nodes = s.nodes.clone();
    if p.pool_jitter > 0.0 {
        nodes = jitter_pools(nodes, p.pool_jitter, rng);
    }
    if p.node_failure_probability > 0.0 {
        let q = p.node_failure_probability.clamp(0.0, 1.0);
        nodes.retain(|_| !rng.random_bool(q));
    }
    let existing = s
        .existing_pods
        .iter()
        .filter(|e| {
            e.node_name
                .as_ref()
                .is_some_and(|n| nodes.iter().any(|node| &node.name == n))
        })
        .cloned()
        .collect();
    let steps = if p.shuffle_arrivals && s.units.len() > 1 {
        let mut order: Vec<usize> = (0..s.units.len()).collect();
        order.shuffle(rng);
        let end = s.units.last().map_or(0, |u| u.end);
        order
            .iter()
            .flat_map(|&u| s.steps[s.units[u].clone()].iter().cloned())
            .chain(s.steps[end..].iter().cloned())
            .collect()
    } else {
        s.steps.clone()
    };
    let (pods, steps) = super::daemon_pods::follow_nodes(s, &nodes, steps);
    World {
        nodes,
        existing,
        pods,
        steps,
        config,
    }
}

/// Each pool's size varies uniformly within ±`fraction`: nodes past the new size are dropped,
/// new ones are copies of the pool's first node (`<name>-jitter-<k>`).
fn jitter_pools(nodes: Vec<Node>, fraction: f64, rng: &mut ChaCha8Rng) -> Vec<Node> {
    let mut pools: Vec<(String, Vec<Node>)> = Vec::new();
    for n in nodes {
        let pool = n.pool().to_string();
        match pools.iter_mut().find(|(p, _)| *p == pool) {
            Some((_, members)) => members.push(n),
            None => pools.push((pool, vec![n])),
        }
    }
    let mut out = Vec::new();
    for (_, mut members) in pools {
        let factor = 1.0 + rng.random_range(-fraction..=fraction);
        let target = (members.len() as f64 * factor).round().max(0.0) as usize;
        let template = members[0].clone();
        members.truncate(target);
        for k in members.len()..target {
            let mut n = template.clone();
            n.name = format!("{}-jitter-{k}", template.name);
            if n.labels.contains_key(HOSTNAME) {
                n.labels.insert(HOSTNAME.into(), n.name.clone());
            }
            members.push(n);
        }
        out.extend(members);
    }
    out
}
