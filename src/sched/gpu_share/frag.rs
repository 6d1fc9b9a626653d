//! Fragmentation as the FGD paper defines it (reference: `pkg/utils/frag.go`,
//! `GetTypicalPods` in `pkg/utils/typical_pods.go`): the target workload (the trace's most
//! frequent pod classes, weighted by frequency) and how much of a node's idle GPU milli those
//! classes could not use.

use std::collections::HashMap;

use super::Demand;

/// A pod class (c, μ, k, τ): CPU milli, milli per GPU, GPU count, allowed models; and
/// whether its GPUs are a device plugin's (on a time-sliced node, k replicas).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Class {
    pub cpu: i64,
    pub milli: i64,
    pub gpus: u32,
    pub spec: String,
    pub plugin: bool,
}

impl Class {
    pub fn of(pod: &Demand) -> Self {
        Class {
            cpu: pod.cpu_milli,
            milli: pod.milli,
            gpus: pod.gpus,
            spec: pod.spec.clone(),
            plugin: pod.plugin,
        }
    }

    fn allows(&self, model: &str) -> bool {
        crate::model::gpu_share::accepts(&self.spec, model)
    }
}

/// A class of the target workload and its weight.
#[derive(Debug, Clone, PartialEq)]
pub struct Typical {
    pub class: Class,
    pub weight: f64,
}

/// Percentage of the trace's pods the target workload covers (`threshold 95`).
const COVERAGE_PERCENT: f64 = 95.0;

/// The target workload of a trace (its original pods, before tuning): classes by count,
/// ties by key (c, μ, k, τ) descending, taken until they cover 95 % of the pods (the class
/// crossing the line included); weights are their shares of what was taken.
pub fn typical_pods<'a>(pods: impl IntoIterator<Item = &'a Demand>) -> Vec<Typical> {
    let mut counts: HashMap<Class, usize> = HashMap::new();
    let mut total = 0;
    for p in pods {
        *counts.entry(Class::of(p)).or_default() += 1;
        total += 1;
    }
    let mut classes: Vec<(Class, usize)> = counts.into_iter().collect();
    classes.sort_by(|(a, n), (b, m)| m.cmp(n).then_with(|| b.cmp(a)));
    let mut taken = Vec::new();
    let mut cumulative = 0;
    for (class, count) in classes {
        if cumulative as f64 >= COVERAGE_PERCENT * total as f64 / 100.0 {
            break;
        }
        cumulative += count;
        taken.push((class, count));
    }
    (taken.into_iter())
        .map(|(class, count)| Typical {
            class,
            weight: (count as f64 / total as f64) / (cumulative as f64 / total as f64),
        })
        .collect()
}

/// The target workload of a scenario's pods (its workloads and existing pods), as the FGD
/// simulator makes it of the pods it is given.
pub fn target_workload<'p>(pods: impl Iterator<Item = &'p crate::model::Pod>) -> Vec<Typical> {
    let demands: Vec<Demand> = pods.map(Demand::of).collect();
    typical_pods(&demands)
}

/// What fragmentation reads of a node: its free CPU, its devices' free milli, its model, and
/// the milli of one time-slicing replica (1000 on a node that is not time-sliced).
#[derive(Debug, Clone, Copy)]
pub struct NodeView<'a> {
    pub cpu_left: i64,
    pub gpu_left: &'a [i64],
    pub model: &'a str,
    pub replica_milli: i64,
}

impl<'a> NodeView<'a> {
    /// A node of whole GPUs.
    pub fn whole(cpu_left: i64, gpu_left: &'a [i64], model: &'a str) -> Self {
        NodeView {
            cpu_left,
            gpu_left,
            model,
            replica_milli: crate::model::gpu_share::MILLI,
        }
    }
}

/// The categories of `frag.go`'s `FragRatioDataMap`, in its order.
pub const CATEGORIES: usize = 7;

/// Their names, as `frag.go` writes them.
pub const CATEGORY_NAMES: [&str; CATEGORIES] = [
    "q1_lack_both",
    "q2_lack_gpu",
    "q3_satisfied",
    "q4_lack_cpu",
    "xl_satisfied",
    "xr_lack_cpu",
    "no_access",
];
const Q1_LACK_BOTH: usize = 0;
const Q2_LACK_GPU: usize = 1;
const Q3_SATISFIED: usize = 2;
const Q4_LACK_CPU: usize = 3;
const XL_SATISFIED: usize = 4;
const XR_LACK_CPU: usize = 5;
const NO_ACCESS: usize = 6;

/// A node's (or the cluster's) idle GPU milli by category, each summed over the target
/// workload's classes weighted by frequency (`NodeGpuShareFragAmount`): they add up to
/// the idle milli.
pub type Amounts = [f64; CATEGORIES];

/// The category of a class on a node (`GetNodePodFrag`).
fn category(node: NodeView<'_>, c: &Class) -> usize {
    let cpu_ok = node.cpu_left >= c.cpu;
    if c.milli == 0 {
        return if cpu_ok { XL_SATISFIED } else { XR_LACK_CPU };
    }
    if !c.allows(node.model) {
        return NO_ACCESS;
    }
    let need = need_per_gpu(node, c);
    let usable = match c.plugin && need < crate::model::gpu_share::MILLI {
        // Replicas: as many per device as its free milli holds.
        true => (node.gpu_left.iter()).map(|&l| (l / need) as usize).sum(),
        false => node.gpu_left.iter().filter(|&&l| l >= need).count(),
    };
    match (usable >= c.gpus as usize, cpu_ok) {
        (true, true) => Q3_SATISFIED,
        (true, false) => Q4_LACK_CPU,
        (false, true) => Q2_LACK_GPU,
        (false, false) => Q1_LACK_BOTH,
    }
}

/// The milli a class needs of each GPU it takes on the node: a device plugin's GPU on a
/// time-sliced node is one replica.
fn need_per_gpu(node: NodeView<'_>, c: &Class) -> i64 {
    match c.plugin {
        true => node.replica_milli,
        false => c.milli,
    }
}

/// A node's amounts: a satisfied class still counts the devices too small for it as
/// lacking GPU; for every other category all idle milli is that category's.
pub fn node_amounts(node: NodeView<'_>, typical: &[Typical]) -> Amounts {
    let mut amounts = [0.0; CATEGORIES];
    let idle: i64 = node.gpu_left.iter().sum();
    for t in typical {
        let at = category(node, &t.class);
        if at == Q3_SATISFIED {
            let need = need_per_gpu(node, &t.class);
            let small: i64 = (node.gpu_left.iter()).filter(|&&l| l < need).sum();
            amounts[Q2_LACK_GPU] += t.weight * small as f64;
            amounts[Q3_SATISFIED] += t.weight * (idle - small) as f64;
        } else {
            amounts[at] += t.weight * idle as f64;
        }
    }
    amounts
}

/// The fragment: every category but q3_satisfied, summed in the categories' order
/// (`FragAmountSumExceptQ3`). A CPU-only class counts every idle GPU (xl_satisfied).
pub fn fragment(amounts: &Amounts) -> f64 {
    let mut out = 0.0;
    for (i, a) in amounts.iter().enumerate() {
        if i != Q3_SATISFIED {
            out += a;
        }
    }
    out
}

/// F(n): the idle GPU milli of the node the target workload cannot use.
pub fn node_frag(node: NodeView<'_>, typical: &[Typical]) -> f64 {
    fragment(&node_amounts(node, typical))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typical(cpu: i64, milli: i64, gpus: u32, weight: f64) -> Typical {
        Typical {
            class: Class {
                cpu,
                milli,
                gpus,
                spec: String::new(),
                plugin: false,
            },
            weight,
        }
    }

    /// `frag_test.go`: with only the class (6000 mCPU, 465 milli, 1 GPU, p = 0.0933), a node
    /// with 1000 mCPU free and [200, 1000, 1000, 500] lacks CPU: all 2700 milli are fragments.
    #[test]
    fn a_node_short_of_cpu_is_all_fragment_for_the_class() {
        let node = NodeView::whole(1000, &[200, 1000, 1000, 500], "1080");
        let f = node_frag(node, &[typical(6000, 465, 1, 0.0933)]);
        assert!((f - 251.91).abs() < 1e-9, "{f}");
    }

    #[test]
    fn satisfied_class_counts_only_devices_too_small() {
        let node = NodeView::whole(64_000, &[200, 1000, 1000, 500], "T4");
        // 465 milli on one GPU: 200 is a fragment, the rest usable.
        assert_eq!(node_frag(node, &[typical(1000, 465, 1, 1.0)]), 200.0);
        // A CPU-only class: every idle GPU is a fragment.
        assert_eq!(node_frag(node, &[typical(1000, 0, 0, 1.0)]), 2700.0);
        // A model the class does not allow: all of it.
        let mut t = typical(1000, 465, 1, 1.0);
        t.class.spec = "V100M16|V100M32".into();
        assert_eq!(node_frag(node, &[t]), 2700.0);
    }

    #[test]
    fn the_target_workload_covers_95_percent_by_count() {
        let pod = |cpu, milli| Demand {
            cpu_milli: cpu,
            gpus: u32::from(milli > 0),
            milli,
            spec: String::new(),
            plugin: false,
        };
        let mut pods = vec![pod(1000, 500); 90];
        pods.extend(vec![pod(2000, 0); 6]);
        pods.extend(vec![pod(3000, 0); 4]);
        let t = typical_pods(&pods);
        // 90 + 6 = 96 ≥ 95: two classes, weights 90/96 and 6/96.
        assert_eq!(t.len(), 2);
        assert!((t[0].weight - 90.0 / 96.0).abs() < 1e-12);
        assert_eq!(t[1].class.cpu, 2000);
    }
}
