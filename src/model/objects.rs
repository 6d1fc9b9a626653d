//! Kubernetes objects → model objects: quantities parsed, pods defaulted as the API server
//! defaults them (`SetDefaults_Pod`: a container's request defaults to its limit, per resource),
//! and their specs validated. Their metadata is validated by the loader, once per object, as
//! the object's kind says (`validate::meta`): a pod made from a template has its controller's
//! name.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;

use super::validate::{FieldError, invalid, validate_pod_spec};
use crate::features::FeatureGates;
use crate::model::pod::{ContainerExtendedRequest, ControllerRef, PodGroupRef};
use crate::model::quantity::Quantity;
use crate::model::resources::{self, ContainerRequests, PodResources, ResourceList};
use crate::model::{Node, Pod};

/// Parses a resource list into canonical integers (milli-CPU, base units otherwise).
pub fn parse_resource_list(
    list: Option<&BTreeMap<String, K8sQuantity>>,
    path: &str,
    errs: &mut Vec<FieldError>,
) -> ResourceList {
    let mut out = ResourceList::new();
    for (name, q) in list.into_iter().flatten() {
        let p = format!("{path}.{name}");
        let parsed = q.0.parse::<Quantity>().map(|q| {
            if name == resources::CPU {
                q.milli_value()
            } else {
                q.value()
            }
        });
        match parsed {
            Ok(v) => {
                out.insert(name.clone(), v);
            }
            Err(e) => errs.push(FieldError {
                path: p,
                message: format!("{:?}: {e}", q.0),
            }),
        }
    }
    out
}

/// Converts a Node. `path` is the node's field path inside its document.
pub fn node_from_k8s(node: &k8s::Node, path: &str, errs: &mut Vec<FieldError>) -> Node {
    let spec = node.spec.as_ref();
    let status = node.status.as_ref();
    let allocatable = parse_resource_list(
        status.and_then(|s| s.allocatable.as_ref()),
        &sub(path, "status.allocatable"),
        errs,
    );
    for (i, t) in spec
        .and_then(|s| s.taints.as_ref())
        .into_iter()
        .flatten()
        .enumerate()
    {
        if !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&t.effect.as_str()) {
            errs.push(FieldError {
                path: sub(path, &format!("spec.taints[{i}].effect")),
                message: format!(
                    "Unsupported value: {:?}: supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
                    t.effect
                ),
            });
        }
    }
    Node {
        name: node.metadata.name.clone().unwrap_or_default(),
        labels: node.metadata.labels.clone().unwrap_or_default(),
        taints: spec.and_then(|s| s.taints.clone()).unwrap_or_default(),
        unschedulable: spec.and_then(|s| s.unschedulable).unwrap_or(false),
        allocatable,
        pool: None,
    }
}

/// Converts a Pod: defaulting, validation, and the effective requests.
pub fn pod_from_k8s(
    pod: &k8s::Pod,
    path: &str,
    gates: &FeatureGates,
    errs: &mut Vec<FieldError>,
) -> Pod {
    let empty = k8s::PodSpec::default();
    let spec = pod.spec.as_ref().unwrap_or(&empty);
    let spec_path = sub(path, "spec");
    // The API server merges `matchLabelKeys` into the selectors when it creates a pod
    // (`applyMatchLabelKeysAndMismatchLabelKeys`, registry/core/pod/strategy.go). A pod it
    // created already (a dump: `uid` or `creationTimestamp` set) holds the merged selectors;
    // merging again would name each key twice and refuse every such pod.
    let no_labels = BTreeMap::new();
    let created = pod.metadata.uid.is_some() || pod.metadata.creation_timestamp.is_some();
    let labels = match created {
        true => &no_labels,
        false => pod.metadata.labels.as_ref().unwrap_or(&no_labels),
    };
    validate_pod_spec(spec, labels, &spec_path, gates, errs);

    let containers: Vec<ResourceList> = spec
        .containers
        .iter()
        .enumerate()
        .map(|(i, c)| container_requests(c, &format!("{spec_path}.containers[{i}]"), errs))
        .collect();
    let init: Vec<(ResourceList, bool)> = spec
        .init_containers
        .iter()
        .flatten()
        .enumerate()
        .map(|(i, c)| {
            let restartable = c.restart_policy.as_deref() == Some("Always");
            (
                container_requests(c, &format!("{spec_path}.initContainers[{i}]"), errs),
                restartable,
            )
        })
        .collect();
    let overhead = parse_resource_list(
        spec.overhead.as_ref(),
        &format!("{spec_path}.overhead"),
        errs,
    );
    let pod_level = pod_level_requests(
        spec.resources.as_ref(),
        &format!("{spec_path}.resources"),
        errs,
    );
    let resources = PodResources {
        containers: containers.iter().collect(),
        init_containers: init
            .iter()
            .map(|(r, restartable)| ContainerRequests {
                requests: r,
                restartable: *restartable,
            })
            .collect(),
        pod_level: &pod_level,
        overhead: &overhead,
    };
    let requests = resources::pod_requests(&resources, &ResourceList::new());
    let non_missing: ResourceList = [
        (
            resources::CPU.to_string(),
            resources::DEFAULT_MILLI_CPU_REQUEST,
        ),
        (
            resources::MEMORY.to_string(),
            resources::DEFAULT_MEMORY_REQUEST,
        ),
    ]
    .into_iter()
    .collect();
    let score_requests = resources::pod_requests(&resources, &non_missing);

    // Bound and not started; an unbound pod the simulation binds is taken as running.
    let phase_pending = (pod.status.as_ref()).and_then(|s| s.phase.as_deref()) == Some("Pending")
        && spec.node_name.as_deref().is_some_and(|n| !n.is_empty());
    Pod {
        name: pod.metadata.name.clone().unwrap_or_default(),
        uid: pod.metadata.uid.clone().unwrap_or_default(),
        namespace: pod
            .metadata
            .namespace
            .clone()
            .unwrap_or_else(|| "default".into()),
        labels: pod.metadata.labels.clone().unwrap_or_default().into(),
        workload: None,
        controller: controller_ref(&pod.metadata),
        node_name: spec.node_name.clone().filter(|n| !n.is_empty()),
        scheduler_name: spec
            .scheduler_name
            .clone()
            .unwrap_or_else(|| "default-scheduler".into()),
        priority: spec.priority.unwrap_or(0),
        priority_class: spec.priority_class_name.clone().filter(|c| !c.is_empty()),
        priority_given: spec.priority.is_some(),
        never_preempt: spec.preemption_policy.as_deref() == Some("Never"),
        preemption_policy_given: spec.preemption_policy.is_some(),
        node_selector: spec.node_selector.clone().unwrap_or_default().into(),
        affinity: spec.affinity.clone().into(),
        tolerations: spec.tolerations.clone().unwrap_or_default(),
        scheduling_gates: spec
            .scheduling_gates
            .iter()
            .flatten()
            .map(|g| g.name.clone())
            .collect(),
        requests: requests.into(),
        score_requests: score_requests.into(),
        has_restartable_init_container: init.iter().any(|(_, r)| *r),
        start_time: pod.status.as_ref().and_then(|s| s.start_time.clone()),
        not_ready: match (pod.status.as_ref().and_then(|s| s.conditions.as_ref()))
            .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
        {
            Some(ready) => ready.status != "True",
            // `IsPodReady` without the condition: false; a hand-written pod without a status
            // is taken as running.
            None => phase_pending,
        },
        phase_pending,
        deletion_timestamp: pod.metadata.deletion_timestamp.clone(),
        nominated_node_name: (pod.status.as_ref())
            .and_then(|s| s.nominated_node_name.clone())
            .filter(|n| !n.is_empty()),
        termination_grace_period_seconds: spec.termination_grace_period_seconds,
        disrupted_by_preemption: disrupted_by_preemption(pod),
        topology_spread_constraints: spec.topology_spread_constraints.clone().unwrap_or_default(),
        resource_claims: spec.resource_claims.clone().unwrap_or_default(),
        resource_claim_statuses: (pod.status.as_ref())
            .and_then(|s| s.resource_claim_statuses.clone())
            .unwrap_or_default(),
        extended_requests: extended_requests(
            (spec.init_containers.iter().flatten()).zip(init.iter().map(|(r, _)| r)),
            spec.containers.iter().zip(&containers),
        ),
        gpu_share: (pod.metadata.annotations.as_ref())
            .and_then(super::gpu_share::GpuShare::of)
            .map(std::sync::Arc::new),
        drain: drain_facts(pod),
        pod_group: PodGroupRef::of(
            pod.metadata.labels.as_ref().unwrap_or(&BTreeMap::new()),
            pod.metadata
                .annotations
                .as_ref()
                .unwrap_or(&BTreeMap::new()),
        ),
    }
}

/// What cluster-autoscaler's drainability rules read of the pod (`model::pod::DrainFacts`).
fn drain_facts(pod: &k8s::Pod) -> super::pod::DrainFacts {
    let annotations = pod.metadata.annotations.as_ref();
    let annotation = |key: &str| annotations.and_then(|a| a.get(key)).map(String::as_str);
    let spec = pod.spec.as_ref();
    // `getNonBlockingVolumes`: the annotation's comma-separated volume names.
    let named_safe: Vec<&str> =
        (annotation("cluster-autoscaler.kubernetes.io/safe-to-evict-local-volumes"))
            .map(|v| v.split(',').collect())
            .unwrap_or_default();
    let blocking_local_storage = (spec.and_then(|s| s.volumes.as_ref()).into_iter().flatten())
        .filter(|v| {
            v.host_path.is_some()
                || v.empty_dir
                    .as_ref()
                    .is_some_and(|e| e.medium.as_deref() != Some("Memory"))
        })
        .any(|v| !named_safe.contains(&v.name.as_str()));
    let phase = (pod.status.as_ref()).and_then(|s| s.phase.as_deref());
    let restart = spec.and_then(|s| s.restart_policy.as_deref());
    let terminal = phase == Some("Failed")
        || (phase == Some("Succeeded") && matches!(restart, Some("Never" | "OnFailure")));
    super::pod::DrainFacts {
        mirror: annotation("kubernetes.io/config.mirror").is_some(),
        safe_to_evict: match annotation("cluster-autoscaler.kubernetes.io/safe-to-evict") {
            Some("true") => Some(true),
            Some("false") => Some(false),
            _ => None,
        },
        blocking_local_storage,
        terminal,
    }
}

/// The pod's first `DisruptionTarget` condition is `True` with reason `PreemptionByScheduler`
/// (the first one decides, as `podTerminatingByPreemption` reads them).
fn disrupted_by_preemption(pod: &k8s::Pod) -> bool {
    let conditions = (pod.status.as_ref()).and_then(|s| s.conditions.as_ref());
    (conditions.into_iter().flatten())
        .find(|c| c.type_ == super::pod::DISRUPTION_TARGET)
        .is_some_and(|c| {
            c.status == "True"
                && c.reason.as_deref() == Some(super::pod::REASON_PREEMPTION_BY_SCHEDULER)
        })
}

/// The owner reference with `controller: true`, as `metav1.GetControllerOf` finds it.
pub fn controller_ref(
    metadata: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
) -> Option<std::sync::Arc<ControllerRef>> {
    let owner =
        (metadata.owner_references.iter().flatten()).find(|r| r.controller == Some(true))?;
    Some(std::sync::Arc::new(ControllerRef {
        api_version: owner.api_version.clone(),
        kind: owner.kind.clone(),
        name: owner.name.clone(),
        uid: owner.uid.clone(),
    }))
}

/// The containers' requests of extended resources, init containers first, each with the
/// resource's index among the container's sorted request names (a `ResourceList` is sorted).
fn extended_requests<'c>(
    init: impl Iterator<Item = (&'c k8s::Container, &'c ResourceList)>,
    containers: impl Iterator<Item = (&'c k8s::Container, &'c ResourceList)>,
) -> Vec<ContainerExtendedRequest> {
    let mut out = Vec::new();
    for (i, (c, requests)) in init.chain(containers).enumerate() {
        for (index, (resource, &quantity)) in requests.iter().enumerate() {
            if quantity != 0 && resources::is_extended_resource_name(resource) {
                out.push(ContainerExtendedRequest {
                    container: i,
                    container_name: c.name.clone(),
                    index,
                    resource: resource.clone(),
                    quantity,
                });
            }
        }
    }
    out
}

/// Pod-level requests (`spec.resources`, PodLevelResources), a missing request defaulting to
/// the pod-level limit.
fn pod_level_requests(
    res: Option<&k8s::ResourceRequirements>,
    path: &str,
    errs: &mut Vec<FieldError>,
) -> ResourceList {
    let mut requests = parse_resource_list(
        res.and_then(|r| r.requests.as_ref()),
        &format!("{path}.requests"),
        errs,
    );
    let limits = parse_resource_list(
        res.and_then(|r| r.limits.as_ref()),
        &format!("{path}.limits"),
        errs,
    );
    for (name, limit) in limits {
        requests.entry(name).or_insert(limit);
    }
    requests
}

/// A container's requests after defaulting (missing request := limit), validated against
/// its limits as `ValidateResourceRequirements` does.
fn container_requests(c: &k8s::Container, path: &str, errs: &mut Vec<FieldError>) -> ResourceList {
    let res = c.resources.as_ref();
    let req_path = format!("{path}.resources.requests");
    let lim_path = format!("{path}.resources.limits");
    let mut requests = parse_resource_list(res.and_then(|r| r.requests.as_ref()), &req_path, errs);
    let limits = parse_resource_list(res.and_then(|r| r.limits.as_ref()), &lim_path, errs);
    let raw = |list: Option<&BTreeMap<String, K8sQuantity>>, k: &str| {
        list.and_then(|l| l.get(k))
            .map(|q| q.0.clone())
            .unwrap_or_default()
    };
    for (list, at) in [
        (res.and_then(|r| r.requests.as_ref()), &req_path),
        (res.and_then(|r| r.limits.as_ref()), &lim_path),
    ] {
        for (name, q) in list.into_iter().flatten() {
            if let Ok(q) = q.0.parse::<Quantity>() {
                validate_quantity_value(name, &q, &format!("{at}.{name}"), errs);
            }
        }
    }
    for (name, limit) in &limits {
        match requests.get(name) {
            None => {
                requests.insert(name.clone(), *limit);
            }
            Some(req) => {
                let req_raw = raw(res.and_then(|r| r.requests.as_ref()), name);
                let lim_raw = raw(res.and_then(|r| r.limits.as_ref()), name);
                if req != limit && !resources::is_overcommit_allowed(name) {
                    invalid(
                        errs,
                        format!("{req_path}.{name}"),
                        &req_raw,
                        &format!("must be equal to {name} limit of {lim_raw}"),
                    );
                } else if req > limit {
                    invalid(
                        errs,
                        format!("{req_path}.{name}"),
                        &req_raw,
                        &format!("must be less than or equal to {name} limit of {lim_raw}"),
                    );
                }
            }
        }
    }
    for name in requests.keys() {
        if !resources::is_overcommit_allowed(name) && !limits.contains_key(name) {
            errs.push(FieldError {
                path: format!("{lim_path}.{name}"),
                message: "Required value: Limit must be set for non overcommitable resources"
                    .into(),
            });
        }
    }
    requests
}

/// `ValidateResourceQuantityValue` (`pkg/apis/core/validation/validation.go`): not negative,
/// and a whole number for integer resources (extended resources such as `nvidia.com/gpu`);
/// the value is quoted in its canonical form (`Quantity.String()`), as the API server does.
fn validate_quantity_value(name: &str, q: &Quantity, path: &str, errs: &mut Vec<FieldError>) {
    if q.is_negative() {
        invalid(
            errs,
            path.to_string(),
            &q.canonical(),
            "must be greater than or equal to 0",
        );
    }
    if resources::is_extended_resource_name(name) && q.milli_value() % 1000 != 0 {
        invalid(errs, path.to_string(), &q.canonical(), "must be an integer");
    }
}

fn sub(path: &str, child: &str) -> String {
    crate::yaml::join_path(path, child)
}
