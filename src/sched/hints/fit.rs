//! NodeResourcesFit's QueueingHints (`noderesources/fit.go`: `isSchedulableAfterPodEvent`,
//! `isSchedulableAfterPodScaleDown`, `isSchedulableAfterNodeChange`, `isFit`,
//! `haveAnyRequestedResourcesIncreased`). `isFit` is the plugin's own filter
//! ([`node_resources_fit::fits`]) on the node with nothing bound, without the ignored
//! resources (upstream's `Fits` passes none).

use std::collections::BTreeMap;

use super::{HintResult, is_bound, is_nominated, queue_if, same_pod};
use crate::model::resources::{CPU, EPHEMERAL_STORAGE, MEMORY, PODS};
use crate::model::{Node, Pod};
use crate::sched::cluster::{NodeResources, PodRequest, ResourceTable};
use crate::sched::plugins::node_resources_fit::{self, dra_delegable, is_scalar_resource_name};
use crate::sched::queue::QueueingHint;
use crate::sched::resource_set::ResourceSet;

/// Extended resource name → DeviceClass, with DRAExtendedResource on
/// (`dra::extended::device_class_mapping`); `None` with the gate off.
pub(super) type ExtendedClasses = Option<BTreeMap<String, String>>;

/// `isSchedulableAfterPodEvent`: a deleted pod frees resources if it was bound or nominated;
/// an update counts if it scaled down a resource the queued pod requests (or is the queued
/// pod's own scale-down).
pub(super) fn after_pod_event(target: &Pod, old: Option<&Pod>, new: Option<&Pod>) -> HintResult {
    match (old, new) {
        (Some(deleted), None) => queue_if(is_bound(deleted) || is_nominated(deleted)),
        (Some(old), Some(new)) => queue_if(after_scale_down(target, old, new)),
        _ => Err("NodeResourcesFit registers no pod add".into()),
    }
}

/// `isSchedulableAfterPodScaleDown`.
fn after_scale_down(target: &Pod, old: &Pod, new: &Pod) -> bool {
    if same_pod(new, target) {
        return true;
    }
    if !is_bound(new) {
        return false;
    }
    let get = |p: &Pod, r: &str| p.requests.get(r).copied().unwrap_or(0);
    (target.requests.iter())
        .filter(|(_, v)| **v != 0)
        .any(|(r, _)| {
            let counted = matches!(r.as_str(), CPU | MEMORY | EPHEMERAL_STORAGE)
                || is_scalar_resource_name(r);
            counted && get(old, r) > get(new, r)
        })
}

/// `isSchedulableAfterNodeChange`: the node (with nothing bound) must fit the pod; an added
/// node then counts, an updated one only if allocatable grew for something the pod requests
/// (or the pod count).
pub(super) fn after_node_change(
    target: &Pod,
    old: Option<&Node>,
    new: Option<&Node>,
    classes: &ExtendedClasses,
) -> HintResult {
    let Some(new) = new else {
        return Ok(QueueingHint::QueueSkip);
    };
    let empty = EmptyNode::new(target, new, classes);
    if !empty.fits() {
        return Ok(QueueingHint::QueueSkip);
    }
    match old {
        None => Ok(QueueingHint::Queue),
        Some(old) => queue_if(requested_increased(target, old, &empty)),
    }
}

/// The pod's request against one node with nothing bound, as the filter reads them.
struct EmptyNode<'a> {
    node: &'a Node,
    table: ResourceTable,
    request: PodRequest,
    allocatable: Vec<i64>,
    published: ResourceSet,
}

impl<'a> EmptyNode<'a> {
    fn new(pod: &Pod, node: &'a Node, classes: &ExtendedClasses) -> Self {
        let table = ResourceTable::new([&pod.requests, &node.allocatable]);
        let mut request = PodRequest::new(&table, pod);
        if let Some(classes) = classes {
            request.dra_delegable = dra_delegable(&request, &table, |r| classes.contains_key(r));
        }
        EmptyNode {
            allocatable: table.dense(&node.allocatable),
            published: (node.allocatable.keys())
                .filter_map(|r| table.index(r))
                .collect(),
            node,
            table,
            request,
        }
    }

    /// `isFit`.
    fn fits(&self) -> bool {
        let requested = vec![0; self.table.len()];
        node_resources_fit::fits(
            &self.request,
            NodeResources {
                allocatable: &self.allocatable,
                requested: &requested,
                nonzero_requested: [0, 0],
                pod_count: 0,
                allowed_pods: allowed_pods(self.node),
                published: &self.published,
            },
        )
    }

    /// `shouldDelegateResourceToDRA` on this node for table index `i`.
    fn left_to_dra(&self, i: usize) -> bool {
        self.request.dra_delegable.contains(i) && !self.published.contains(i)
    }
}

fn allowed_pods(node: &Node) -> i64 {
    node.allocatable.get(PODS).copied().unwrap_or(0)
}

/// `haveAnyRequestedResourcesIncreased(pod, old, new)`.
fn requested_increased(pod: &Pod, old: &Node, new: &EmptyNode<'_>) -> bool {
    if allowed_pods(new.node) > allowed_pods(old) {
        return true;
    }
    let grew = |r: &str| {
        let get = |n: &Node| n.allocatable.get(r).copied().unwrap_or(0);
        get(new.node) > get(old)
    };
    (pod.requests.iter())
        .filter(|(_, v)| **v != 0)
        .any(|(r, _)| match r.as_str() {
            CPU | MEMORY | EPHEMERAL_STORAGE => grew(r),
            _ if is_scalar_resource_name(r) => {
                grew(r) || new.table.index(r).is_some_and(|i| new.left_to_dra(i))
            }
            _ => false,
        })
}
