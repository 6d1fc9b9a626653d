//! Resource lists in canonical integer units and the pod request rules of upstream.
//!
//! Units: `cpu` in milli-CPU (`MilliValue()`), everything else in base units (`Value()`):
//! bytes for memory and ephemeral-storage, counts for pods and extended resources such as
//! `nvidia.com/gpu` or `nvidia.com/mig-1g.5gb`.

use std::collections::BTreeMap;

pub const CPU: &str = "cpu";
pub const MEMORY: &str = "memory";
pub const EPHEMERAL_STORAGE: &str = "ephemeral-storage";
pub const PODS: &str = "pods";

/// Resources that count whole GPUs, by preference: a node advertising several (the Alibaba
/// trace nodes carry `nvidia.com/gpu` and `alibabacloud.com/gpu-count`) counts the first.
pub const GPU_RESOURCES: &[&str] = &[
    "nvidia.com/gpu",
    "amd.com/gpu",
    "alibabacloud.com/gpu-count",
];

/// The whole GPUs a resource list counts: its amount of the first of [`GPU_RESOURCES`] it
/// names (a pod's request, a node's allocatable).
pub fn gpus(list: &ResourceList) -> Option<i64> {
    GPU_RESOURCES.iter().find_map(|r| list.get(*r).copied())
}

/// Default requests the scorers assume for a container that sets none
/// (`pkg/scheduler/util/pod_resources.go`: `DefaultMilliCPURequest`, `DefaultMemoryRequest`).
pub const DEFAULT_MILLI_CPU_REQUEST: i64 = 100;
pub const DEFAULT_MEMORY_REQUEST: i64 = 200 * 1024 * 1024;

/// Resource name → amount in canonical units. Ordered, so output is deterministic.
pub type ResourceList = BTreeMap<String, i64>;

/// `addResourceList` of component-helpers.
pub fn add(into: &mut ResourceList, other: &ResourceList) {
    for (k, v) in other {
        *into.entry(k.clone()).or_insert(0) += v;
    }
}

/// `maxResourceList` of component-helpers: per-resource maximum.
pub fn max(into: &mut ResourceList, other: &ResourceList) {
    for (k, v) in other {
        let e = into.entry(k.clone()).or_insert(*v);
        if *v > *e {
            *e = *v;
        }
    }
}

/// One container's (defaulted) requests and whether it is a restartable init container.
pub struct ContainerRequests<'a> {
    pub requests: &'a ResourceList,
    pub restartable: bool,
}

/// The inputs of `resource.PodRequests`: each container's (defaulted) requests, the pod-level
/// requests (`spec.resources`, PodLevelResources) and the pod overhead.
pub struct PodResources<'a> {
    pub containers: Vec<&'a ResourceList>,
    pub init_containers: Vec<ContainerRequests<'a>>,
    pub pod_level: &'a ResourceList,
    pub overhead: &'a ResourceList,
}

/// Resources a pod may set at pod level (`IsSupportedPodLevelResource`).
const POD_LEVEL_RESOURCES: &[&str] = &[CPU, MEMORY];

/// The pod's effective request, as `resource.PodRequests` computes it
/// (`kubernetes/component-helpers:resource/helpers.go`):
/// `max(sum(containers) + sidecars, max_i(init_i + sidecars started before i))`, then pod-level
/// cpu/memory requests replace the computed ones, then the overhead is added.
///
/// `non_missing` gives the values a container's *missing* requests take (the scorers' 100m /
/// 200Mi defaults); pass an empty list for the filter's exact requests.
pub fn pod_requests(pod: &PodResources<'_>, non_missing: &ResourceList) -> ResourceList {
    let with_defaults = |r: &ResourceList| -> ResourceList {
        let mut r = r.clone();
        for (k, v) in non_missing {
            r.entry(k.clone()).or_insert(*v);
        }
        r
    };
    let mut reqs = ResourceList::new();
    for c in &pod.containers {
        add(&mut reqs, &with_defaults(c));
    }
    let mut sidecars = ResourceList::new();
    let mut init_max = ResourceList::new();
    for ic in &pod.init_containers {
        let own = with_defaults(ic.requests);
        let effective = if ic.restartable {
            add(&mut reqs, &own);
            add(&mut sidecars, &own);
            sidecars.clone()
        } else {
            let mut tmp = own;
            add(&mut tmp, &sidecars);
            tmp
        };
        max(&mut init_max, &effective);
    }
    max(&mut reqs, &init_max);
    for (k, v) in pod.pod_level {
        if POD_LEVEL_RESOURCES.contains(&k.as_str()) {
            reqs.insert(k.clone(), *v);
        }
    }
    add(&mut reqs, pod.overhead);
    reqs
}

/// `IsExtendedResourceName` of `pkg/apis/core/v1/helper`: a domain-prefixed name outside
/// `kubernetes.io/`, not starting with `requests.`.
pub fn is_extended_resource_name(name: &str) -> bool {
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    !native && !name.starts_with("requests.")
}

/// `IsOvercommitAllowed`: only native resources other than hugepages may have requests < limits.
pub fn is_overcommit_allowed(name: &str) -> bool {
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    native && !name.starts_with("hugepages-")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rl(cpu: i64, mem: i64) -> ResourceList {
        [(CPU.to_string(), cpu), (MEMORY.to_string(), mem)]
            .into_iter()
            .collect()
    }

    /// The worked example in the doc comment of `computePodResourceRequest` (fit.go).
    #[test]
    fn init_containers_take_the_max() {
        let (ic1, ic2, c1, c2) = (rl(2000, 1), rl(2000, 3), rl(2000, 1), rl(1000, 1));
        let inits = [
            ContainerRequests {
                requests: &ic1,
                restartable: false,
            },
            ContainerRequests {
                requests: &ic2,
                restartable: false,
            },
        ];
        let none = ResourceList::new();
        let pod = PodResources {
            containers: vec![&c1, &c2],
            init_containers: inits.into(),
            pod_level: &none,
            overhead: &none,
        };
        assert_eq!(pod_requests(&pod, &none), rl(3000, 3));
    }

    #[test]
    fn sidecars_add_to_everything_after_them() {
        // TestPodResourceRequests "restartable init container" shapes: sidecar 1, init 5, container 1.
        let one = rl(1, 0);
        let five = rl(5, 0);
        let inits = [
            ContainerRequests {
                requests: &one,
                restartable: true,
            },
            ContainerRequests {
                requests: &five,
                restartable: false,
            },
        ];
        let none = ResourceList::new();
        let pod = PodResources {
            containers: vec![&one],
            init_containers: inits.into(),
            pod_level: &none,
            overhead: &none,
        };
        // max(container 1 + sidecar 1, init 5 + sidecar 1) = 6
        assert_eq!(pod_requests(&pod, &none)[CPU], 6);
    }

    #[test]
    fn missing_requests_take_scoring_defaults() {
        let empty = ResourceList::new();
        let defaults = rl(DEFAULT_MILLI_CPU_REQUEST, DEFAULT_MEMORY_REQUEST);
        let pod = PodResources {
            containers: vec![&empty, &empty],
            init_containers: vec![],
            pod_level: &empty,
            overhead: &empty,
        };
        assert_eq!(
            pod_requests(&pod, &defaults),
            rl(200, 2 * DEFAULT_MEMORY_REQUEST)
        );
    }

    #[test]
    fn pod_level_requests_replace_cpu_and_memory_then_overhead_adds() {
        let c = rl(1000, 10);
        let pod_level = rl(4000, 0);
        let overhead = rl(250, 5);
        let pod = PodResources {
            containers: vec![&c],
            init_containers: vec![],
            pod_level: &pod_level,
            overhead: &overhead,
        };
        assert_eq!(pod_requests(&pod, &ResourceList::new()), rl(4250, 5));
    }

    #[test]
    fn extended_resource_names() {
        assert!(is_extended_resource_name("nvidia.com/gpu"));
        assert!(!is_extended_resource_name("kubernetes.io/something"));
        assert!(!is_extended_resource_name("cpu"));
        assert!(!is_overcommit_allowed("nvidia.com/gpu"));
        assert!(!is_overcommit_allowed("hugepages-2Mi"));
        assert!(is_overcommit_allowed("memory"));
    }
}
