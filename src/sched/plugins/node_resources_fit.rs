//! `NodeResourcesFit`: does the node have room for the pod's requests (filter), and how much
//! room is left (score, `LeastAllocated` by default, or the profile's scoring strategy).
//! Sources: `pkg/scheduler/framework/plugins/noderesources/fit.go` (`fitsRequest`,
//! `nodeResourceStrategyTypeMap`), `resource_allocation.go`, `least_allocated.go`,
//! `most_allocated.go`, `requested_to_capacity_ratio.go`,
//! `pkg/scheduler/framework/plugins/helper/shape_score.go`.

use std::borrow::Cow;

use crate::model::resources::is_extended_resource_name;
use crate::sched::cluster::{
    CPU, EPHEMERAL_STORAGE, MEMORY, NodeResources, PodRequest, ResourceTable,
};
use crate::sched::framework::{Code, MAX_NODE_SCORE, Status, names};
use crate::sched::profile::{FitArgs, MAX_CUSTOM_PRIORITY_SCORE, ResourceSpec, ScoringStrategy};
use crate::sched::resource_set::ResourceSet;

pub const REASON_TOO_MANY_PODS: &str = "Too many pods";

/// What a node lacks for a pod (upstream's list of `InsufficientResource`): the pod count
/// and a set of [`ResourceTable`] indices, so diagnosing thousands of nodes for every pending
/// pod allocates nothing per node.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Insufficient {
    pods: bool,
    resources: ResourceSet,
    /// Some request exceeds the node's allocatable: preemption cannot help.
    unresolvable: bool,
}

impl Insufficient {
    pub fn is_empty(&self) -> bool {
        !self.pods && self.resources.is_empty()
    }

    /// The filter's status: `Unschedulable` with every reason in upstream's order (pods, cpu,
    /// memory, ephemeral-storage, then extended resources — by name here, where upstream's Go
    /// map order is random), or `UnschedulableAndUnresolvable` when a request exceeds the
    /// node's allocatable.
    pub fn status(&self, table: &ResourceTable) -> Status {
        if self.is_empty() {
            return Status::success();
        }
        let mut reasons: Vec<Cow<'static, str>> = Vec::new();
        if self.pods {
            reasons.push(REASON_TOO_MANY_PODS.into());
        }
        for i in 0..table.len() {
            if self.resources.contains(i) {
                reasons.push(match table.name(i) {
                    "cpu" => "Insufficient cpu".into(),
                    "memory" => "Insufficient memory".into(),
                    "ephemeral-storage" => "Insufficient ephemeral-storage".into(),
                    other => format!("Insufficient {other}").into(),
                });
            }
        }
        let code = if self.unresolvable {
            Code::UnschedulableAndUnresolvable
        } else {
            Code::Unschedulable
        };
        Status {
            code,
            plugin: names::NODE_RESOURCES_FIT,
            reasons,
        }
    }
}

/// Whether `amount` of a resource does not fit (`fitsRequest`: only positive requests count).
#[inline]
fn lacks(amount: i64, allocatable: i64, requested: i64) -> bool {
    amount > 0 && amount > allocatable - requested
}

/// Whether this node leaves resource `i` of the pod to DynamicResources: it is delegable and
/// the node does not publish it (see [`dra_delegable`]).
#[inline]
fn left_to_dra(req: &PodRequest, node: NodeResources<'_>, i: usize) -> bool {
    !req.dra_delegable.is_empty() && req.dra_delegable.contains(i) && !node.published.contains(i)
}

/// `fitsRequest`: everything the node lacks for the pod.
pub fn check(req: &PodRequest, node: NodeResources<'_>) -> Insufficient {
    let mut out = Insufficient {
        pods: node.pod_count + 1 > node.allowed_pods,
        ..Default::default()
    };
    for &(i, amount) in &req.sparse {
        if lacks(amount, node.allocatable[i], node.requested[i]) && !left_to_dra(req, node, i) {
            out.resources.insert(i);
            out.unresolvable |= amount > node.allocatable[i];
        }
    }
    out
}

/// The hot path: whether the pod fits, stopping at the first shortage.
#[inline]
pub fn fits(req: &PodRequest, node: NodeResources<'_>) -> bool {
    node.pod_count < node.allowed_pods
        && !req.sparse.iter().any(|&(i, amount)| {
            lacks(amount, node.allocatable[i], node.requested[i]) && !left_to_dra(req, node, i)
        })
}

/// With DRAExtendedResource on, the requested resources NodeResourcesFit does not check on a
/// node whose allocatable does not list them, leaving them to DynamicResources: kubernetes
/// 1.34 `fit.go` (`withDeviceClass` at PreFilter, then `fitsRequest`). When the pod requests
/// some extended resource (`IsExtendedResourceName`), those a DeviceClass backs (`backed`,
/// the scheduler's extended-resource mapping); otherwise PreFilter builds no mapping and every
/// scalar resource it requests (hugepages, `kubernetes.io/` names) is left to DRA where the
/// node does not list it. A node that lists a resource, even as 0, is checked as always (the
/// device plugin's path); 1.35 also leaves a listed 0 to DRA.
pub fn dra_delegable(
    req: &PodRequest,
    table: &ResourceTable,
    backed: impl Fn(&str) -> bool,
) -> ResourceSet {
    let scalars = || (req.sparse.iter()).filter(|&&(i, _)| is_scalar_resource_name(table.name(i)));
    // `resourceToDeviceClass` is nil unless the pod requests an extended resource.
    let has_mapping = (req.sparse.iter()).any(|&(i, _)| is_extended_resource_name(table.name(i)));
    scalars()
        .filter(|&&(i, _)| !has_mapping || backed(table.name(i)))
        .map(|&(i, _)| i)
        .collect()
}

/// Filter.
pub fn filter(req: &PodRequest, node: NodeResources<'_>, table: &ResourceTable) -> Status {
    check(req, node).status(table)
}

/// `leastRequestedScore`: `(capacity − requested) × 100 / capacity`, 0 when over capacity.
pub fn least_requested_score(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 || requested > capacity {
        return 0;
    }
    // Go's division: the most negative value divided by -1 is itself, not a panic.
    ((capacity - requested) * MAX_NODE_SCORE).wrapping_div(capacity)
}

/// Score, `LeastAllocated` over cpu and memory with weight 1 each, on the node's
/// "non-zero" requests plus the pod's (missing requests count as 100m / 200Mi).
pub fn score_least_allocated(req: &PodRequest, node: NodeResources<'_>) -> i64 {
    let pairs = [
        (
            node.nonzero_requested[0] + req.nonzero_cpu,
            node.allocatable[CPU],
        ),
        (
            node.nonzero_requested[1] + req.nonzero_memory,
            node.allocatable[MEMORY],
        ),
    ];
    let (mut score, mut weights) = (0, 0);
    for (requested, allocatable) in pairs {
        if allocatable == 0 {
            continue;
        }
        score += least_requested_score(requested, allocatable);
        weights += 1;
    }
    if weights == 0 { 0 } else { score / weights }
}

/// `mostRequestedScore`: `requested × 100 / capacity`, requested capped at capacity (pods
/// without requests get the non-zero defaults, so the sum may exceed the node).
pub fn most_requested_score(requested: i64, capacity: i64) -> i64 {
    if capacity == 0 {
        return 0;
    }
    (requested.min(capacity) * MAX_NODE_SCORE).wrapping_div(capacity)
}

/// `helper.BuildBrokenLinearFunction`: the piecewise-linear function through `shape`
/// (utilization, score) points, flat before the first and after the last point, with Go's
/// truncating integer division between points.
pub fn broken_linear(shape: &[(i64, i64)], p: i64) -> i64 {
    for (i, &(utilization, score)) in shape.iter().enumerate() {
        if p <= utilization {
            if i == 0 {
                return score;
            }
            let (u0, s0) = shape[i - 1];
            return s0 + (score - s0) * (p - u0) / (utilization - u0);
        }
    }
    shape.last().map_or(0, |&(_, s)| s)
}

/// `scaledUtilization` (requested_to_capacity_ratio.go): `requested × max / capacity` with
/// requested clamped to `[0, capacity]`, exact in 128-bit arithmetic.
fn scaled_utilization(requested: i64, capacity: i64, max: i64) -> i64 {
    if capacity <= 0 || requested <= 0 {
        return 0;
    }
    if requested >= capacity {
        return max;
    }
    (i128::from(requested) * i128::from(max) / i128::from(capacity)) as i64
}

/// `IsScalarResourceName` (`pkg/scheduler/util`): extended, hugepages, `kubernetes.io/`-prefixed
/// and attachable-volume resources. Only these count as scalar resources in `NodeInfo`.
pub fn is_scalar_resource_name(name: &str) -> bool {
    is_extended_resource_name(name)
        || name.starts_with("hugepages-")
        || name.contains("kubernetes.io/")
        || name.starts_with("attachable-volumes-")
}

/// Where a configured resource's numbers live in the scenario's [`ResourceTable`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResourceSlot {
    Cpu,
    Memory,
    EphemeralStorage,
    /// A scalar resource at this table index.
    Scalar(usize),
    /// Not a resource any node or pod of the scenario has (or not one `NodeInfo` tracks):
    /// allocatable is 0 on every node, so the resource is skipped.
    Absent,
}

impl ResourceSlot {
    pub(crate) fn resolve(name: &str, table: &ResourceTable) -> Self {
        match name {
            "cpu" => ResourceSlot::Cpu,
            "memory" => ResourceSlot::Memory,
            "ephemeral-storage" => ResourceSlot::EphemeralStorage,
            _ if is_scalar_resource_name(name) => table
                .index(name)
                .map_or(ResourceSlot::Absent, ResourceSlot::Scalar),
            _ => ResourceSlot::Absent,
        }
    }

    /// The pod's request of this resource: `calculatePodResourceRequest`, with the non-zero
    /// cpu/memory defaults unless `use_requested` (BalancedAllocation uses exact requests).
    #[inline]
    pub(crate) fn pod_request(self, request: &PodRequest, use_requested: bool) -> i64 {
        match self {
            ResourceSlot::Cpu if !use_requested => request.nonzero_cpu,
            ResourceSlot::Memory if !use_requested => request.nonzero_memory,
            ResourceSlot::Cpu => request.get(CPU),
            ResourceSlot::Memory => request.get(MEMORY),
            ResourceSlot::EphemeralStorage => request.get(EPHEMERAL_STORAGE),
            ResourceSlot::Scalar(i) => request.get(i),
            ResourceSlot::Absent => 0,
        }
    }

    /// `calculateResourceAllocatableRequest` (resource_allocation.go): the node's allocatable
    /// and requested-after-binding amounts; `(0, 0)` for a scalar resource the pod does not
    /// request ("bypass scoring on this resource") or one the node does not have. cpu and
    /// memory use the node's non-zero requests unless `use_requested`; everything else its
    /// exact requests.
    #[inline]
    pub(crate) fn allocatable_requested(
        self,
        request: &PodRequest,
        node: NodeResources<'_>,
        use_requested: bool,
    ) -> (i64, i64) {
        let pod = self.pod_request(request, use_requested);
        match self {
            ResourceSlot::Cpu | ResourceSlot::Memory => {
                let (i, nonzero) = if self == ResourceSlot::Cpu {
                    (CPU, node.nonzero_requested[0])
                } else {
                    (MEMORY, node.nonzero_requested[1])
                };
                let used = if use_requested {
                    node.requested[i]
                } else {
                    nonzero
                };
                (node.allocatable[i], used + pod)
            }
            ResourceSlot::EphemeralStorage => (
                node.allocatable[EPHEMERAL_STORAGE],
                node.requested[EPHEMERAL_STORAGE] + pod,
            ),
            ResourceSlot::Scalar(_) if pod == 0 => (0, 0),
            ResourceSlot::Scalar(i) => (node.allocatable[i], node.requested[i] + pod),
            ResourceSlot::Absent => (0, 0),
        }
    }
}

/// Whether `args` score exactly as [`score_least_allocated`] (the fast default path):
/// `LeastAllocated` over cpu and memory with equal weights, in either order. Ignored
/// resources do not apply to scoring.
pub fn is_default(args: &FitArgs) -> bool {
    let [a, b] = args.resources.as_slice() else {
        return false;
    };
    args.strategy == ScoringStrategy::LeastAllocated
        && a.weight == b.weight
        && matches!(
            (a.name.as_str(), b.name.as_str()),
            ("cpu", "memory") | ("memory", "cpu")
        )
}

#[derive(Debug, Clone)]
enum Strategy {
    Least,
    Most,
    /// Shape points with scores scaled to node scores (× MaxNodeScore / MaxCustomPriorityScore).
    Ratio(Vec<(i64, i64)>),
}

/// The profile's `NodeResourcesFit` score, compiled against one scenario's [`ResourceTable`]
/// (`resourceAllocationScorer.score` with the strategy's scorer).
#[derive(Debug, Clone)]
pub struct FitScorer {
    strategy: Strategy,
    resources: Vec<(ResourceSlot, i64)>,
}

impl FitScorer {
    pub fn new(args: &FitArgs, table: &ResourceTable) -> Self {
        let strategy = match &args.strategy {
            ScoringStrategy::LeastAllocated => Strategy::Least,
            ScoringStrategy::MostAllocated => Strategy::Most,
            ScoringStrategy::RequestedToCapacityRatio { shape } => Strategy::Ratio(
                shape
                    .iter()
                    .map(|&(u, s)| (u, s * (MAX_NODE_SCORE / MAX_CUSTOM_PRIORITY_SCORE)))
                    .collect(),
            ),
        };
        FitScorer {
            strategy,
            resources: args
                .resources
                .iter()
                .map(|ResourceSpec { name, weight }| (ResourceSlot::resolve(name, table), *weight))
                .collect(),
        }
    }

    /// Score of the pod on the node, 0..=100.
    pub fn score(&self, request: &PodRequest, node: NodeResources<'_>) -> i64 {
        let (mut node_score, mut weight_sum) = (0i64, 0i64);
        let resources = self.resources.iter().filter_map(|&(slot, weight)| {
            let (allocatable, requested) = slot.allocatable_requested(request, node, false);
            (allocatable != 0).then_some((requested, allocatable, weight))
        });
        match &self.strategy {
            // leastResourceScorer / mostResourceScorer: weighted mean, truncated.
            Strategy::Least | Strategy::Most => {
                let per_resource = if matches!(self.strategy, Strategy::Least) {
                    least_requested_score
                } else {
                    most_requested_score
                };
                for (requested, allocatable, weight) in resources {
                    node_score += per_resource(requested, allocatable) * weight;
                    weight_sum += weight;
                }
                if weight_sum == 0 {
                    0
                } else {
                    node_score / weight_sum
                }
            }
            // buildRequestedToCapacityRatioScorerFunction: resources scoring 0 are left out of
            // the mean, which is rounded (math.Round: half away from zero).
            Strategy::Ratio(shape) => {
                for (requested, allocatable, weight) in resources {
                    let utilization = if requested > allocatable {
                        100
                    } else {
                        scaled_utilization(requested, allocatable, 100)
                    };
                    let score = broken_linear(shape, utilization);
                    if score > 0 {
                        node_score += score * weight;
                        weight_sum += weight;
                    }
                }
                if weight_sum == 0 {
                    0
                } else {
                    (node_score as f64 / weight_sum as f64).round() as i64
                }
            }
        }
    }
}

#[cfg(test)]
mod scoring_tests {
    //! Upstream's scoring test tables, transcribed: `least_allocated_test.go`
    //! (`TestLeastAllocatedScoringStrategy`), `most_allocated_test.go`
    //! (`TestMostAllocatedScoringStrategy`), `requested_to_capacity_ratio_test.go`
    //! (`TestRequestedToCapacityRatioScoringStrategy`, `TestBrokenLinearFunction`,
    //! `TestResourceBinPackingSingleExtended`, `TestResourceBinPackingMultipleExtended`) and
    //! `fit_test.go` (`TestFitScore`). Each node is given as upstream's `NodeInfo` sees it:
    //! allocatable, the existing pods' summed requests (exact and non-zero), and the incoming
    //! pod's requests (exact, and non-zero cpu/memory). Pods built with `st.MakePod()` without
    //! `.Req` have no containers, so their non-zero requests are 0 too. Error cases (invalid
    //! weights) are config validation and live in tests/profile_config.rs.

    use super::*;
    use crate::model::resources::{DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST};

    const FOO: &str = "intel.com/foo";
    const BAR: &str = "intel.com/bar";
    /// `extendedRes` of the upstream tests.
    const XYZ: &str = "abc.com/xyz";

    /// The incoming pod: exact requests by name and non-zero (cpu, memory).
    struct TestPod<'a> {
        exact: &'a [(&'a str, i64)],
        nonzero: (i64, i64),
    }

    /// A pod whose containers all request cpu and memory: non-zero = exact.
    fn pod<'a>(exact: &'a [(&'a str, i64)]) -> TestPod<'a> {
        let get = |n: &str| exact.iter().find(|(k, _)| *k == n).map_or(0, |(_, v)| *v);
        TestPod {
            exact,
            nonzero: (get("cpu"), get("memory")),
        }
    }

    /// `st.MakePod().Obj()`: no containers at all.
    fn empty_pod() -> TestPod<'static> {
        TestPod {
            exact: &[],
            nonzero: (0, 0),
        }
    }

    struct TestNode<'a> {
        allocatable: &'a [(&'a str, i64)],
        /// Existing pods' summed exact requests.
        requested: &'a [(&'a str, i64)],
        /// Existing pods' summed non-zero (cpu, memory).
        nonzero: (i64, i64),
    }

    /// A node whose existing pods request cpu and memory explicitly: non-zero = exact.
    fn node<'a>(
        allocatable: &'a [(&'a str, i64)],
        requested: &'a [(&'a str, i64)],
    ) -> TestNode<'a> {
        let get = |n: &str| {
            requested
                .iter()
                .find(|(k, _)| *k == n)
                .map_or(0, |(_, v)| *v)
        };
        TestNode {
            allocatable,
            requested,
            nonzero: (get("cpu"), get("memory")),
        }
    }

    fn list(entries: &[(&str, i64)]) -> crate::model::resources::ResourceList {
        entries.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    fn rs(specs: &[(&str, i64)]) -> Vec<ResourceSpec> {
        ResourceSpec::list(specs)
    }

    /// Scores of the pod on each node under `args`.
    fn scores(args: &FitArgs, pod: &TestPod, nodes: &[TestNode]) -> Vec<i64> {
        let lists: Vec<_> = nodes
            .iter()
            .map(|n| list(n.allocatable))
            .chain([list(pod.exact)])
            .collect();
        let table = ResourceTable::new(lists.iter());
        let request = PodRequest {
            dra_delegable: ResourceSet::default(),
            sparse: table.sparse(&list(pod.exact)),
            nonzero_cpu: pod.nonzero.0,
            nonzero_memory: pod.nonzero.1,
        };
        let scorer = FitScorer::new(args, &table);
        nodes
            .iter()
            .map(|n| {
                let allocatable = table.dense(&list(n.allocatable));
                let requested = table.dense(&list(n.requested));
                let res = NodeResources {
                    published: &ResourceSet::default(),
                    allocatable: &allocatable,
                    requested: &requested,
                    nonzero_requested: [n.nonzero.0, n.nonzero.1],
                    pod_count: 0,
                    allowed_pods: 110,
                };
                let s = scorer.score(&request, res);
                if is_default(args) {
                    assert_eq!(s, score_least_allocated(&request, res), "fast path differs");
                }
                s
            })
            .collect()
    }

    fn least(resources: &[(&str, i64)]) -> FitArgs {
        FitArgs {
            strategy: ScoringStrategy::LeastAllocated,
            resources: rs(resources),
            ..FitArgs::default()
        }
    }

    fn most(resources: &[(&str, i64)]) -> FitArgs {
        FitArgs {
            strategy: ScoringStrategy::MostAllocated,
            ..least(resources)
        }
    }

    fn ratio(resources: &[(&str, i64)], shape: &[(i64, i64)]) -> FitArgs {
        FitArgs {
            strategy: ScoringStrategy::RequestedToCapacityRatio {
                shape: shape.to_vec(),
            },
            ..least(resources)
        }
    }

    const DEFAULT: &[(&str, i64)] = &[("cpu", 1), ("memory", 1)];
    const WITH_XYZ: &[(&str, i64)] = &[("cpu", 1), ("memory", 1), (XYZ, 1)];

    #[test]
    fn least_allocated_scoring_strategy() {
        let a = least(DEFAULT);
        let n = |c, m| [("cpu", c), ("memory", m)];
        let (n4k, n6k, n10k20k, n10k50k) = (
            n(4000, 10000),
            n(6000, 10000),
            n(10000, 20000),
            n(10000, 50000),
        );
        let req = [("cpu", 3000), ("memory", 5000)];
        // nothing scheduled, nothing requested
        assert_eq!(
            scores(&a, &empty_pod(), &[node(&n4k, &[]), node(&n4k, &[])]),
            [100, 100]
        );
        // nothing scheduled, resources requested, differently sized nodes
        assert_eq!(
            scores(&a, &pod(&req), &[node(&n4k, &[]), node(&n6k, &[])]),
            [37, 50]
        );
        // no resources requested, pods scheduled (pods without containers)
        assert_eq!(
            scores(&a, &empty_pod(), &[node(&n4k, &[]), node(&n4k, &[])]),
            [100, 100]
        );
        // no resources requested, pods scheduled with resources
        assert_eq!(
            scores(
                &a,
                &empty_pod(),
                &[
                    node(&n10k20k, &[("cpu", 6000), ("memory", 0)]),
                    node(&n10k20k, &[("cpu", 6000), ("memory", 5000)]),
                ]
            ),
            [70, 57]
        );
        // resources requested, pods scheduled with resources
        assert_eq!(
            scores(
                &a,
                &pod(&req),
                &[
                    node(&n10k20k, &[("cpu", 3000), ("memory", 0)]),
                    node(&n10k20k, &[("cpu", 3000), ("memory", 5000)]),
                ]
            ),
            [57, 45]
        );
        // resources requested, pods scheduled with resources, differently sized nodes
        assert_eq!(
            scores(
                &a,
                &pod(&req),
                &[
                    node(&n10k20k, &[("cpu", 3000), ("memory", 0)]),
                    node(&n10k50k, &[("cpu", 3000), ("memory", 5000)]),
                ]
            ),
            [57, 60]
        );
        // requested resources exceed node capacity
        assert_eq!(
            scores(
                &a,
                &pod(&[("cpu", 3000), ("memory", 0)]),
                &[
                    node(&n4k, &[("cpu", 3000), ("memory", 0)]),
                    node(&n4k, &[("cpu", 3000), ("memory", 5000)]),
                ]
            ),
            [50, 25]
        );
        // zero node resources, pods scheduled with resources
        assert_eq!(
            scores(
                &a,
                &empty_pod(),
                &[
                    node(&[], &[("cpu", 3000), ("memory", 0)]),
                    node(&[], &[("cpu", 3000), ("memory", 5000)]),
                ]
            ),
            [0, 0]
        );
        // different weight on CPU and memory
        assert_eq!(
            scores(
                &least(&[("memory", 2), ("cpu", 1)]),
                &pod(&req),
                &[node(&n4k, &[]), node(&n6k, &[])]
            ),
            [41, 50]
        );
        // bypass extended resource if the pod does not request
        assert_eq!(
            scores(
                &least(WITH_XYZ),
                &pod(&req),
                &[
                    node(&n6k, &[]),
                    node(&[("cpu", 6000), ("memory", 10000), (XYZ, 4)], &[]),
                ]
            ),
            [50, 50]
        );
        // honor extended resource if the pod requests
        assert_eq!(
            scores(
                &least(WITH_XYZ),
                &pod(&[("cpu", 3000), ("memory", 5000), (XYZ, 2)]),
                &[
                    node(&[("cpu", 6000), ("memory", 10000), (XYZ, 4)], &[]),
                    node(&[("cpu", 6000), ("memory", 10000), (XYZ, 10)], &[]),
                ]
            ),
            [50, 60]
        );
        // if the node doesn't have a resource
        assert_eq!(
            scores(
                &least(&[(XYZ, 2), ("cpu", 1), ("memory", 1)]),
                &pod(&[("cpu", 3000), ("memory", 4000)]),
                &[
                    node(&n6k, &[]),
                    node(&[("cpu", 6000), ("memory", 10000), (XYZ, 4)], &[]),
                ]
            ),
            [55, 55]
        );
    }

    #[test]
    fn most_allocated_scoring_strategy() {
        let a = most(DEFAULT);
        let n = |c, m| [("cpu", c), ("memory", m)];
        let (n4k, n6k, n10k20k) = (n(4000, 10000), n(6000, 10000), n(10000, 20000));
        let req = [("cpu", 3000), ("memory", 5000)];
        // nothing scheduled, nothing requested
        assert_eq!(
            scores(&a, &empty_pod(), &[node(&n4k, &[]), node(&n4k, &[])]),
            [0, 0]
        );
        // nothing scheduled, resources requested, differently sized nodes
        assert_eq!(
            scores(&a, &pod(&req), &[node(&n4k, &[]), node(&n6k, &[])]),
            [62, 50]
        );
        // no resources requested, pods scheduled with resources
        assert_eq!(
            scores(
                &a,
                &empty_pod(),
                &[
                    node(&n10k20k, &[("cpu", 6000), ("memory", 0)]),
                    node(&n10k20k, &[("cpu", 6000), ("memory", 5000)]),
                ]
            ),
            [30, 42]
        );
        // resources requested, pods scheduled with resources
        assert_eq!(
            scores(
                &a,
                &pod(&req),
                &[
                    node(&n10k20k, &[("cpu", 3000), ("memory", 0)]),
                    node(&n10k20k, &[("cpu", 3000), ("memory", 5000)]),
                ]
            ),
            [42, 55]
        );
        // resources requested equal node capacity
        assert_eq!(
            scores(
                &a,
                &pod(&[("cpu", 5000), ("memory", 9000)]),
                &[node(&n(5000, 10000), &[]), node(&n(10000, 9000), &[]),]
            ),
            [95, 75]
        );
        // different weight on CPU and memory
        assert_eq!(
            scores(
                &most(&[("memory", 2), ("cpu", 1)]),
                &pod(&req),
                &[node(&n4k, &[]), node(&n6k, &[])]
            ),
            [58, 50]
        );
        // no resources requested, pods scheduled, nonzero request for resource: one container
        // without requests (100m / 200Mi); node1 already has two such pods.
        let (c, m) = (DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST);
        let small = [("cpu", 250), ("memory", 1000 * 1024 * 1024)];
        let defaults_pod = TestPod {
            exact: &[],
            nonzero: (c, m),
        };
        let busy = TestNode {
            allocatable: &small,
            requested: &[],
            nonzero: (2 * c, 2 * m),
        };
        assert_eq!(
            scores(&a, &defaults_pod, &[busy, node(&small, &[])]),
            [80, 30]
        );
        // bypass extended resource if the pod does not request
        assert_eq!(
            scores(
                &most(WITH_XYZ),
                &pod(&req),
                &[
                    node(&n6k, &[]),
                    node(&[("cpu", 6000), ("memory", 10000), (XYZ, 4)], &[]),
                ]
            ),
            [50, 50]
        );
        // honor extended resource if the pod request
        assert_eq!(
            scores(
                &most(WITH_XYZ),
                &pod(&[("cpu", 3000), ("memory", 5000), (XYZ, 2)]),
                &[
                    node(&[("cpu", 6000), ("memory", 10000), (XYZ, 4)], &[]),
                    node(&[("cpu", 6000), ("memory", 10000), (XYZ, 10)], &[]),
                ]
            ),
            [50, 40]
        );
        // if the node doesn't have a resource
        assert_eq!(
            scores(
                &most(&[(XYZ, 2), ("cpu", 1), ("memory", 1)]),
                &pod(&[("cpu", 3000), ("memory", 4000)]),
                &[
                    node(&n6k, &[]),
                    node(&[("cpu", 6000), ("memory", 10000), (XYZ, 4)], &[]),
                ]
            ),
            [45, 45]
        );
    }

    #[test]
    fn requested_to_capacity_ratio_scoring_strategy() {
        let a = ratio(DEFAULT, &[(0, 10), (100, 0)]);
        let n = |c, m| [("cpu", c), ("memory", m)];
        let (n4k, n6k) = (n(4000, 10000), n(6000, 10000));
        // nothing scheduled, nothing requested (existing pods have no containers)
        assert_eq!(
            scores(&a, &empty_pod(), &[node(&n4k, &[]), node(&n4k, &[])]),
            [100, 100]
        );
        // nothing scheduled, resources requested, differently sized nodes
        assert_eq!(
            scores(
                &a,
                &pod(&[("cpu", 3000), ("memory", 5000)]),
                &[node(&n4k, &[]), node(&n6k, &[])]
            ),
            [38, 50]
        );
        // no resources requested, pods scheduled with resources
        assert_eq!(
            scores(
                &a,
                &empty_pod(),
                &[
                    node(&n4k, &[("cpu", 3000), ("memory", 5000)]),
                    node(&n6k, &[("cpu", 3000), ("memory", 5000)]),
                ]
            ),
            [38, 50]
        );
    }

    #[test]
    fn broken_linear_function() {
        type Points<'a> = &'a [(i64, i64)];
        // (shape, [(p, expected)])
        let cases: &[(Points, Points)] = &[
            (
                &[(10, 1), (90, 9)],
                &[
                    (-10, 1),
                    (0, 1),
                    (9, 1),
                    (10, 1),
                    (15, 1),
                    (19, 1),
                    (20, 2),
                    (89, 8),
                    (90, 9),
                    (99, 9),
                    (100, 9),
                    (110, 9),
                ],
            ),
            (
                &[(0, 2), (40, 10), (100, 0)],
                &[
                    (-10, 2),
                    (0, 2),
                    (20, 6),
                    (30, 8),
                    (40, 10),
                    (70, 5),
                    (100, 0),
                    (110, 0),
                ],
            ),
            (
                &[(0, 2), (40, 2), (100, 2)],
                &[
                    (-10, 2),
                    (0, 2),
                    (20, 2),
                    (30, 2),
                    (40, 2),
                    (70, 2),
                    (100, 2),
                    (110, 2),
                ],
            ),
        ];
        for (shape, assertions) in cases {
            for &(p, want) in *assertions {
                assert_eq!(broken_linear(shape, p), want, "shape {shape:?} p={p}");
            }
        }
    }

    #[test]
    fn resource_bin_packing_single_extended() {
        let a = ratio(&[(FOO, 1)], &[(0, 0), (100, 1)]);
        let mib = 1024 * 1024;
        let n1 = [("cpu", 4000), ("memory", 10000 * mib), (FOO, 8)];
        let n2 = [("cpu", 4000), ("memory", 10000 * mib), (FOO, 4)];
        // nothing scheduled, nothing requested
        assert_eq!(
            scores(&a, &empty_pod(), &[node(&n1, &[]), node(&n2, &[])]),
            [0, 0]
        );
        // resources requested, pods scheduled with less resources
        assert_eq!(
            scores(&a, &pod(&[(FOO, 2)]), &[node(&n1, &[]), node(&n2, &[])]),
            [2, 5]
        );
        // resources requested, pods scheduled with resources, on node with existing pod running
        assert_eq!(
            scores(
                &a,
                &pod(&[(FOO, 2)]),
                &[node(&n1, &[]), node(&n2, &[(FOO, 2)])]
            ),
            [2, 10]
        );
        // resources requested, pods scheduled with more resources
        assert_eq!(
            scores(&a, &pod(&[(FOO, 4)]), &[node(&n1, &[]), node(&n2, &[])]),
            [5, 10]
        );
    }

    #[test]
    fn resource_bin_packing_multiple_extended() {
        let a = ratio(&[(FOO, 3), (BAR, 5)], &[(0, 0), (100, 1)]);
        let mib = 1024 * 1024;
        let n1 = [("cpu", 4000), ("memory", 10000 * mib), (FOO, 8), (BAR, 4)];
        let n2 = [("cpu", 4000), ("memory", 10000 * mib), (FOO, 4), (BAR, 8)];
        let pod1 = [(FOO, 2), (BAR, 2)];
        let pod2 = [(FOO, 4), (BAR, 2)];
        // nothing scheduled, nothing requested
        assert_eq!(
            scores(&a, &empty_pod(), &[node(&n1, &[]), node(&n2, &[])]),
            [0, 0]
        );
        // resources requested, pods scheduled with less resources
        assert_eq!(
            scores(&a, &pod(&pod1), &[node(&n1, &[]), node(&n2, &[])]),
            [4, 3]
        );
        // resources requested, pods scheduled with resources, on node with existing pod running
        assert_eq!(
            scores(&a, &pod(&pod1), &[node(&n1, &[]), node(&n2, &pod2)]),
            [4, 7]
        );
        // resources requested, pods scheduled with more resources
        assert_eq!(
            scores(&a, &pod(&pod2), &[node(&n1, &[]), node(&n2, &[])]),
            [5, 5]
        );
    }

    /// `TestFitScore` (fit_test.go), without the DRA-backed extended-resource cases. Sidecar
    /// (restartable init container) requests are summed into the existing pod's requests, as
    /// `resourcehelper.PodRequests` does.
    #[test]
    fn fit_score() {
        let n = |c, m| [("cpu", c), ("memory", m)];
        let (n4k, n6k) = (n(4000, 10000), n(6000, 10000));
        let existing = |nodes: [&'static [(&'static str, i64)]; 2]| nodes;
        let [e1, e2] = existing([
            &[("cpu", 2000), ("memory", 4000)],
            &[("cpu", 1000), ("memory", 2000)],
        ]);
        let big = [("cpu", 3000), ("memory", 5000)];
        let small = [("cpu", 1000), ("memory", 2000)];
        let nodes = || [node(&n4k, e1), node(&n6k, e2)];
        assert_eq!(
            scores(&ratio(DEFAULT, &[(0, 10), (100, 0)]), &pod(&big), &nodes()),
            [10, 32],
            "RequestedToCapacityRatio case1"
        );
        assert_eq!(
            scores(&ratio(DEFAULT, &[(0, 0), (100, 10)]), &pod(&big), &nodes()),
            [95, 68],
            "RequestedToCapacityRatio case2"
        );
        assert_eq!(
            scores(&most(DEFAULT), &pod(&small), &nodes()),
            [67, 36],
            "MostAllocated"
        );
        assert_eq!(
            scores(&least(DEFAULT), &pod(&small), &nodes()),
            [32, 63],
            "LeastAllocated"
        );
        // with sidecar container: node1's pod requests 1000/2000 plus a sidecar of 1000/2000
        let sidecar_nodes = || [node(&n4k, e1), node(&n4k, e2)];
        assert_eq!(
            scores(&most(DEFAULT), &pod(&small), &sidecar_nodes()),
            [67, 45],
            "MostAllocated with sidecar"
        );
        assert_eq!(
            scores(&least(DEFAULT), &pod(&small), &sidecar_nodes()),
            [32, 55],
            "LeastAllocated with sidecar"
        );
    }

    #[test]
    fn default_detection() {
        assert!(is_default(&FitArgs::default()));
        assert!(is_default(&least(&[("memory", 3), ("cpu", 3)])));
        assert!(!is_default(&least(&[("memory", 2), ("cpu", 1)])));
        assert!(!is_default(&least(WITH_XYZ)));
        assert!(!is_default(&most(DEFAULT)));
    }

    #[test]
    fn scalar_resource_names() {
        assert!(is_scalar_resource_name("nvidia.com/gpu"));
        assert!(is_scalar_resource_name("hugepages-2Mi"));
        assert!(is_scalar_resource_name("kubernetes.io/something"));
        assert!(is_scalar_resource_name("attachable-volumes-csi-x"));
        assert!(!is_scalar_resource_name("pods"));
        assert!(!is_scalar_resource_name("storage"));
        assert!(!is_scalar_resource_name("cpu"));
    }
}

#[cfg(test)]
mod dra_delegation_tests {
    //! DRAExtendedResource in 1.34's `fitsRequest`: which requests are left to DRA, and on
    //! which nodes.

    use super::*;
    use crate::model::resources::ResourceList;
    use crate::sched::cluster::Cluster;

    const GPU: &str = "example.com/gpu";
    const OTHER: &str = "example.com/other";
    const HUGEPAGES: &str = "hugepages-1Gi";

    fn list(entries: &[(&str, i64)]) -> ResourceList {
        entries.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    /// The pod's lack on each node, with `example.com/gpu` backed by a DeviceClass.
    fn lacks_per_node(pod: &[(&str, i64)], nodes: &[&[(&str, i64)]]) -> Vec<Vec<String>> {
        let nodes: Vec<crate::model::Node> = (nodes.iter())
            .map(|a| crate::model::Node {
                name: String::new(),
                labels: Default::default(),
                taints: Vec::new(),
                unschedulable: false,
                allocatable: list(a),
                pool: None,
            })
            .collect();
        let pod = crate::model::Pod {
            requests: list(pod).into(),
            ..Default::default()
        };
        let cluster = Cluster::new(nodes, &[&pod]);
        let mut request = PodRequest::new(&cluster.table, &pod);
        request.dra_delegable = dra_delegable(&request, &cluster.table, |r| r == GPU);
        (0..cluster.len())
            .map(|n| {
                let status = check(&request, cluster.resources(n)).status(&cluster.table);
                assert_eq!(status.is_success(), fits(&request, cluster.resources(n)));
                status.reasons.iter().map(|r| r.to_string()).collect()
            })
            .collect()
    }

    #[test]
    fn a_backed_resource_is_left_to_dra_where_the_node_does_not_list_it() {
        let pod = [(GPU, 1), (OTHER, 1)];
        let got = lacks_per_node(
            &pod,
            &[
                &[("pods", 10), (OTHER, 1)],
                &[("pods", 10), (GPU, 0), (OTHER, 1)],
                &[("pods", 10)],
            ],
        );
        assert_eq!(
            got,
            [
                vec![],
                vec![format!("Insufficient {GPU}")],
                vec![format!("Insufficient {OTHER}")],
            ]
        );
    }

    #[test]
    fn without_extended_resources_every_unlisted_scalar_is_left_to_dra() {
        let got = lacks_per_node(
            &[(HUGEPAGES, 1 << 30)],
            &[&[("pods", 10)], &[("pods", 10), (HUGEPAGES, 0)]],
        );
        assert_eq!(got, [vec![], vec![format!("Insufficient {HUGEPAGES}")]]);
    }

    // Kubernetes bounds neither the resource names of a cluster nor those of a pod: reasons
    // and DRA delegation hold past the resource set's inline bits.

    /// 300 filler resources that sort before the ones under test, so those get indices past 128.
    fn fillers(amount: i64) -> Vec<(String, i64)> {
        (0..300)
            .map(|i| (format!("aaa.example.com/r{i:03}"), amount))
            .collect()
    }

    #[test]
    fn reasons_name_resources_past_the_first_128() {
        let fill = fillers(1);
        let mut node: Vec<(&str, i64)> = fill.iter().map(|(n, a)| (n.as_str(), *a)).collect();
        node.push(("pods", 1));
        let pod = [
            ("aaa.example.com/r250", 2),
            ("aaa.example.com/r002", 2),
            (OTHER, 1),
        ];
        let got = lacks_per_node(&pod, &[&node]);
        assert_eq!(
            got,
            [vec![
                "Insufficient aaa.example.com/r002".to_string(),
                "Insufficient aaa.example.com/r250".to_string(),
                format!("Insufficient {OTHER}"),
            ]]
        );
    }

    #[test]
    fn a_backed_resource_past_the_first_128_is_left_to_dra() {
        let fill = fillers(0);
        let mut node: Vec<(&str, i64)> = fill.iter().map(|(n, a)| (n.as_str(), *a)).collect();
        node.push(("pods", 10));
        let mut listing_gpu = node.clone();
        listing_gpu.push((GPU, 0));
        let got = lacks_per_node(&[(GPU, 1)], &[&node, &listing_gpu]);
        assert_eq!(got, [vec![], vec![format!("Insufficient {GPU}")]]);
    }
}
