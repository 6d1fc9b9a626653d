//! `NodeResourcesBalancedAllocation`: favour nodes whose resources would be equally used.
//! Source: `pkg/scheduler/framework/plugins/noderesources/balanced_allocation.go`
//! (`balancedResourceScorer`, v1.26–v1.34 formula; PR #135573 later changed it, its exact form
//! is not yet confirmed upstream) and `resource_allocation.go` (which resources count).

use crate::sched::cluster::{CPU, MEMORY, NodeResources, PodRequest, ResourceTable};
use crate::sched::framework::MAX_NODE_SCORE;
use crate::sched::plugins::node_resources_fit::ResourceSlot;
use crate::sched::profile::ResourceSpec;

/// PreScore skips best-effort pods (no cpu or memory request at all).
pub fn skips(req: &PodRequest) -> bool {
    req.get(CPU) == 0 && req.get(MEMORY) == 0
}

/// `balancedResourceScorer` on the exact requests (`useRequested: true`) over cpu and memory:
/// fractions capped at 1, score `(1 − std) × 100` truncated, where std of two fractions is
/// `|f1 − f2| / 2`.
pub fn score(req: &PodRequest, node: NodeResources<'_>) -> i64 {
    balanced_resource_score([CPU, MEMORY].into_iter().filter_map(|r| {
        let allocatable = node.allocatable[r];
        (allocatable != 0).then(|| fraction(node.requested[r] + req.get(r), allocatable))
    }))
}

#[inline]
fn fraction(requested: i64, allocatable: i64) -> f64 {
    (requested as f64 / allocatable as f64).min(1.0)
}

/// `balancedResourceScorer`: `(1 − std) × MaxNodeScore`, truncated. Two fractions:
/// `std = |f1 − f2| / 2`; more: the population standard deviation, summed in order as upstream
/// does; fewer: 0.
fn balanced_resource_score(fractions: impl Iterator<Item = f64> + Clone) -> i64 {
    let (mut n, mut total, mut first) = (0usize, 0.0f64, [0.0f64; 2]);
    for f in fractions.clone() {
        if n < 2 {
            first[n] = f;
        }
        total += f;
        n += 1;
    }
    let std = match n {
        2 => ((first[0] - first[1]) / 2.0).abs(),
        n if n > 2 => {
            let mean = total / n as f64;
            let sum = fractions.fold(0.0, |sum, f| sum + (f - mean) * (f - mean));
            (sum / n as f64).sqrt()
        }
        _ => 0.0,
    };
    ((1.0 - std) * MAX_NODE_SCORE as f64) as i64
}

/// BalancedAllocation over the profile's `NodeResourcesBalancedAllocationArgs.resources`,
/// compiled against one scenario's [`ResourceTable`]. For the default cpu/memory list it
/// scores exactly as [`score`].
#[derive(Debug, Clone)]
pub struct BalancedScorer {
    resources: Vec<ResourceSlot>,
}

impl BalancedScorer {
    pub fn new(resources: &[ResourceSpec], table: &ResourceTable) -> Self {
        BalancedScorer {
            resources: resources
                .iter()
                .map(|r| ResourceSlot::resolve(&r.name, table))
                .collect(),
        }
    }

    /// PreScore's best-effort check (`isBestEffortPod`): the pod requests none of the
    /// configured resources.
    pub fn skips(&self, req: &PodRequest) -> bool {
        self.resources.iter().all(|s| s.pod_request(req, true) == 0)
    }

    /// Score of the pod on the node, 0..=100. Resources the node lacks, and scalar resources
    /// the pod does not request, are left out (`calculateResourceAllocatableRequest`).
    pub fn score(&self, req: &PodRequest, node: NodeResources<'_>) -> i64 {
        balanced_resource_score(self.resources.iter().filter_map(|slot| {
            let (allocatable, requested) = slot.allocatable_requested(req, node, true);
            (allocatable != 0).then(|| fraction(requested, allocatable))
        }))
    }
}

#[cfg(test)]
mod tests {
    //! `TestNodeResourcesBalancedAllocation` (balanced_allocation_test.go, the v1.26–v1.34
    //! table), as (allocatable, existing pods' exact requests, pod's exact requests) per node.

    use super::*;
    use crate::model::resources::ResourceList;
    use crate::sched::profile::default_resources;

    const GPU: &str = "nvidia.com/gpu";

    /// A resource list as (name, amount) pairs.
    type Entries<'a> = &'a [(&'a str, i64)];

    fn list(entries: &[(&str, i64)]) -> ResourceList {
        entries.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    /// Scores with `resources` (and, for cpu/memory, also with the fast [`score`]).
    fn scores(
        resources: &[(&str, i64)],
        pod: &[(&str, i64)],
        nodes: &[(Entries, Entries)],
    ) -> Vec<i64> {
        let specs = ResourceSpec::list(resources);
        let lists: Vec<ResourceList> = nodes
            .iter()
            .map(|(a, _)| list(a))
            .chain([list(pod)])
            .collect();
        let table = ResourceTable::new(lists.iter());
        let request = PodRequest {
            dra_delegable: Default::default(),
            sparse: table.sparse(&list(pod)),
            nonzero_cpu: 0,
            nonzero_memory: 0,
        };
        let scorer = BalancedScorer::new(&specs, &table);
        nodes
            .iter()
            .map(|(a, r)| {
                let allocatable = table.dense(&list(a));
                let requested = table.dense(&list(r));
                let node = NodeResources {
                    published: &Default::default(),
                    allocatable: &allocatable,
                    requested: &requested,
                    nonzero_requested: [0, 0],
                    pod_count: 0,
                    allowed_pods: 110,
                };
                let s = scorer.score(&request, node);
                if specs == default_resources() {
                    assert_eq!(s, score(&request, node), "fast path differs");
                    assert_eq!(scorer.skips(&request), skips(&request));
                }
                s
            })
            .collect()
    }

    const CPU_MEM: &[(&str, i64)] = &[("cpu", 1), ("memory", 1)];

    #[test]
    fn node_resources_balanced_allocation() {
        let n = |c: i64, m: i64| [("cpu", c), ("memory", m)];
        let (n4k, n6k, n10k20k, n10k50k) = (
            n(4000, 10000),
            n(6000, 10000),
            n(10000, 20000),
            n(10000, 50000),
        );
        let cpu_and_memory = [("cpu", 3000), ("memory", 5000)];
        let cpu_only = [("cpu", 3000), ("memory", 0)];
        // nothing scheduled, nothing requested
        assert_eq!(
            scores(CPU_MEM, &[], &[(&n4k, &[]), (&n4k, &[])]),
            [100, 100]
        );
        // nothing scheduled, resources requested, differently sized nodes
        assert_eq!(
            scores(CPU_MEM, &cpu_and_memory, &[(&n4k, &[]), (&n6k, &[])]),
            [87, 100]
        );
        // no resources requested, pods scheduled with resources
        let node1: [(&str, i64); 2] = [("cpu", 6000), ("memory", 0)];
        let node2: [(&str, i64); 2] = [("cpu", 6000), ("memory", 5000)];
        assert_eq!(
            scores(CPU_MEM, &[], &[(&n10k20k, &node1), (&n10k20k, &node2)]),
            [70, 82]
        );
        // resources requested, pods scheduled with resources
        assert_eq!(
            scores(
                CPU_MEM,
                &cpu_and_memory,
                &[(&n10k20k, &cpu_only), (&n10k20k, &cpu_and_memory)]
            ),
            [82, 95]
        );
        // resources requested, pods scheduled with resources, differently sized nodes
        assert_eq!(
            scores(
                CPU_MEM,
                &cpu_and_memory,
                &[(&n10k20k, &cpu_only), (&n10k50k, &cpu_and_memory)]
            ),
            [82, 80]
        );
        // requested resources at node capacity
        assert_eq!(
            scores(
                CPU_MEM,
                &cpu_only,
                &[(&n6k, &cpu_only), (&n6k, &cpu_and_memory)]
            ),
            [50, 75]
        );
        // zero node resources, pods scheduled with resources
        assert_eq!(
            scores(CPU_MEM, &[], &[(&[], &cpu_only), (&[], &cpu_and_memory)]),
            [100, 100]
        );
    }

    /// "include scalar resource on a node for balanced resource allocation" and "node without
    /// the scalar resource results to a higher score".
    #[test]
    fn scalar_resources() {
        let with_gpu = [("cpu", 3500), ("memory", 40000), (GPU, 8)];
        let without_gpu = [("cpu", 3500), ("memory", 40000)];
        let n1 = [("cpu", 3000), ("memory", 5000), (GPU, 3)];
        let n2 = [("cpu", 3000), ("memory", 5000)];
        assert_eq!(
            scores(
                &[("cpu", 1), ("memory", 1), (GPU, 1)],
                &[("memory", 0), (GPU, 1)],
                &[(&with_gpu, &n1), (&with_gpu, &n2)]
            ),
            [70, 65]
        );
        let cpu_only = [("cpu", 3000)];
        assert_eq!(
            scores(
                &[("cpu", 1), (GPU, 1)],
                &[],
                &[(&with_gpu, &cpu_only), (&without_gpu, &cpu_only)]
            ),
            [100, 100]
        );
    }

    #[test]
    fn best_effort_pods_are_skipped() {
        let table = ResourceTable::new([&list(&[(GPU, 1)])]);
        let scorer = BalancedScorer::new(
            &[ResourceSpec {
                name: GPU.into(),
                weight: 1,
            }],
            &table,
        );
        let gpu_pod = PodRequest {
            dra_delegable: Default::default(),
            sparse: table.sparse(&list(&[(GPU, 1)])),
            nonzero_cpu: 100,
            nonzero_memory: 200,
        };
        let cpu_pod = PodRequest {
            dra_delegable: Default::default(),
            sparse: table.sparse(&list(&[("cpu", 1)])),
            nonzero_cpu: 1,
            nonzero_memory: 200,
        };
        assert!(!scorer.skips(&gpu_pod));
        assert!(scorer.skips(&cpu_pod));
    }
}
