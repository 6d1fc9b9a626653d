//! The arrival sequence of one run (`SortClusterPods` and `TunePodsByNodeTotalResource` in
//! the reference's `pkg/simulator/simulator.go`): the trace's pods sorted by name and
//! shuffled, then cloned (tune-up) or thinned (tune-down) until their GPU request is `ratio`
//! times the cluster's GPUs, all with Go's `math/rand` seeded with the run's seed.

use super::gorand::GoRand;
use super::input::TracePod;
use crate::limits;

/// The pods in arrival order (indices into the name-sorted trace: clones repeat an index)
/// and the generator, whose next draws order the nodes ([`node_ranks`]).
pub struct Arrivals {
    pub order: Vec<usize>,
    pub rng: GoRand,
}

/// `sorted` must be sorted by name. `total_gpu_milli`: the cluster's GPUs × 1000. Tuning up
/// stops with an error past [`limits::FGD_ARRIVALS`] pods, and a pod list that asks for no
/// GPU cannot be tuned (the reference panics: `podTotalMilliGpuReq <= 0`).
pub fn arrivals(
    sorted: &[TracePod],
    seed: i64,
    ratio: f64,
    total_gpu_milli: i64,
) -> Result<Arrivals, String> {
    let mut rng = GoRand::new(seed);
    // `rand.Seed(seed)` is followed by one `rand.Int()` printed to the debug log.
    rng.int63();
    let mut order: Vec<usize> = (0..sorted.len()).collect();
    rng.shuffle(&mut order);
    let mut sum: i64 = sorted.iter().map(|p| p.total_milli()).sum();
    let target = ratio * total_gpu_milli as f64;
    if ratio > 0.0 && sum == 0 {
        return Err(format!(
            "the pod list asks for no GPU: it cannot be tuned to {ratio} times the cluster's GPUs (use --tune 0)"
        ));
    }
    if ratio > 0.0 && !sorted.is_empty() {
        if (sum as f64) < target {
            // tuneUpPods: draw a pod of the sorted trace and append a clone while the sum
            // plus its per-GPU milli (not its total: the reference's test) stays within.
            loop {
                let i = rng.intn(sorted.len());
                if (sum + sorted[i].milli) as f64 > target {
                    break;
                }
                sum += sorted[i].total_milli();
                order.push(i);
                if limits::FGD_ARRIVALS.exceeded_by(order.len() as u64) {
                    return Err(limits::FGD_ARRIVALS.message(format!(
                        "tuning to {ratio} times the cluster's GPUs: {}+ pods",
                        order.len()
                    )));
                }
            }
        } else {
            // tuneDownPods: remove a random pod of the current sequence while above.
            while sum as f64 > target && !order.is_empty() {
                let at = rng.intn(order.len());
                sum -= sorted[order.remove(at)].total_milli();
            }
        }
    }
    Ok(Arrivals { order, rng })
}

/// Each node's tie-break rank (`Perm` over the nodes sorted by name, drawn after tuning):
/// the reference renames node i `"%04d-" + name` with `perm[i]`, and the scheduler prefers
/// the lexicographically smallest name among equal scores.
pub fn node_ranks(rng: &mut GoRand, nodes: usize) -> Vec<usize> {
    rng.perm(nodes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sched::gpu_share::Demand;

    fn pods(n: usize) -> Vec<TracePod> {
        (0..n)
            .map(|i| TracePod {
                name: format!("p{i:03}"),
                memory_mib: 0,
                demand: Demand {
                    cpu_milli: 1000,
                    gpus: u32::from(i % 3 != 0),
                    milli: if i % 3 == 0 {
                        0
                    } else {
                        250 * (i as i64 % 4 + 1)
                    },
                    spec: String::new(),
                    plugin: false,
                },
            })
            .collect()
    }

    /// Tuning up keeps the shuffled originals first and appends only clones, stops at the
    /// target, and is the same for the same seed (and not for another).
    #[test]
    fn tuning_up_appends_clones_deterministically() {
        let trace = pods(60);
        let total: i64 = trace.iter().map(|p| p.total_milli()).sum();
        let a = arrivals(&trace, 42, 1.3, total).unwrap();
        let b = arrivals(&trace, 42, 1.3, total).unwrap();
        let c = arrivals(&trace, 43, 1.3, total).unwrap();
        assert_eq!(a.order, b.order);
        assert_ne!(a.order, c.order);
        let mut originals = a.order[..60].to_vec();
        originals.sort_unstable();
        assert_eq!(originals, (0..60).collect::<Vec<_>>());
        let sum: i64 = a.order.iter().map(|&i| trace[i].total_milli()).sum();
        assert!(a.order.len() > 60 && sum as f64 <= 1.3 * total as f64);
    }

    /// Tuning down removes pods until the request is within the target.
    #[test]
    fn tuning_down_removes_until_within() {
        let trace = pods(60);
        let total: i64 = trace.iter().map(|p| p.total_milli()).sum();
        let a = arrivals(&trace, 7, 0.5, total).unwrap();
        let sum: i64 = a.order.iter().map(|&i| trace[i].total_milli()).sum();
        assert!(sum as f64 <= 0.5 * total as f64 && a.order.len() < 60);
    }
}
