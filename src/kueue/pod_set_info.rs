//! What Kueue writes into an admitted workload's pods: the pod set of a pod template, and
//! the pod set info of an admission (`pkg/podset/podset.go`: `FromAssignment`, `Merge`) with
//! the labels `getPodSetsInfoFromStatus` adds (`pkg/controller/jobframework/reconciler.go`).

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Toleration;

use super::admission::{Objects, Workload};
use super::assigner::{Assignment, PodSet};
use crate::model::Pod;

/// `podconstants.SchedulingGateName`: the gate on a queued pod until admission.
pub const ADMISSION_GATE: &str = "kueue.x-k8s.io/admission";
const POD_SET_LABEL: &str = "kueue.x-k8s.io/podset";
const LOCAL_QUEUE_LABEL: &str = "kueue.x-k8s.io/local-queue-name";
const CLUSTER_QUEUE_LABEL: &str = "kueue.x-k8s.io/cluster-queue-name";

/// The pod set `name` of `count` pods like `pod`.
pub fn pod_set(name: Arc<str>, pod: &Pod, count: i64) -> PodSet {
    PodSet {
        name,
        count,
        requests: pod.requests.share(),
        tolerations: pod.tolerations.clone(),
        node_selector: pod.node_selector.share(),
        affinity: pod.affinity.share(),
    }
}

/// `podset.PodSetInfo` of an admitted pod set.
#[derive(Debug, Clone, Default)]
pub struct PodSetInfo {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub node_selector: BTreeMap<String, String>,
    pub tolerations: Vec<Toleration>,
}

/// `podset.FromAssignment` and the labels of `getPodSetsInfoFromStatus`, per pod set of an
/// admission. Kueue ranges over the pod set's resource → flavor map (random order); here
/// resources go in sorted order.
pub fn pod_set_infos(
    a: &Assignment,
    objects: &Objects,
    w: &Workload,
    cluster_queue: Option<&str>,
) -> Vec<PodSetInfo> {
    (a.pod_sets.iter())
        .map(|ps| {
            let flavors = a.flavors(ps).map(|(_, flavor, _)| flavor);
            pod_set_info(&ps.name, flavors, objects, w, cluster_queue)
        })
        .collect()
}

/// One pod set's info: its name and its flavors (per resource, by resource name).
fn pod_set_info<'f>(
    name: &str,
    flavors: impl Iterator<Item = &'f str>,
    objects: &Objects,
    w: &Workload,
    cluster_queue: Option<&str>,
) -> PodSetInfo {
    let mut info = PodSetInfo {
        name: name.to_string(),
        ..PodSetInfo::default()
    };
    let mut done = Vec::new();
    for flavor in flavors {
        if done.contains(&flavor) {
            continue;
        }
        done.push(flavor);
        if let Some(f) = objects.flavor(flavor) {
            info.node_selector.extend(f.node_labels.clone());
            info.tolerations.extend(f.tolerations.iter().cloned());
        }
    }
    info.labels.insert(POD_SET_LABEL.into(), name.to_string());
    info.labels
        .insert(LOCAL_QUEUE_LABEL.into(), w.queue_name.clone());
    if let Some(cq) = cluster_queue
        && is_dns1123_label(cq)
    {
        info.labels
            .insert(CLUSTER_QUEUE_LABEL.into(), cq.to_string());
    }
    info
}

/// `podset.Merge` into a pod, and the gate lifted (`pod_controller.go` `Run`): a label or
/// node selector key the pod sets to another value is a conflict (`utilmaps.HaveConflict`,
/// the pod's map ranged in sorted order here); tolerations are added unless an equal one
/// is there (`utiltolerations.Equal`: `MatchToleration` with an empty operator read as
/// `Equal`; `tolerationSeconds` is not compared).
pub fn merge_into_pod(pod: &mut Pod, info: &PodSetInfo) -> Result<(), String> {
    for (what, mine, theirs) in [
        ("labels", &pod.labels, &info.labels),
        ("nodeSelector", &pod.node_selector, &info.node_selector),
    ] {
        for (k, old) in mine {
            if let Some(v) = theirs.get(k)
                && v != old
            {
                return Err(format!(
                    "invalid admission check PodSetUpdate: conflict for {what}: conflict for key={k}, value1={old}, value2={v}"
                ));
            }
        }
    }
    pod.node_selector.extend(
        info.node_selector
            .iter()
            .map(|(k, v)| (k.clone(), v.clone())),
    );
    pod.labels
        .extend(info.labels.iter().map(|(k, v)| (k.clone(), v.clone())));
    let op = |t: &Toleration| {
        t.operator
            .clone()
            .filter(|o| !o.is_empty())
            .unwrap_or_else(|| "Equal".into())
    };
    for t in &info.tolerations {
        let equal = |e: &Toleration| {
            e.key == t.key && op(e) == op(t) && e.value == t.value && e.effect == t.effect
        };
        if !pod.tolerations.iter().any(equal) {
            pod.tolerations.push(t.clone());
        }
    }
    pod.scheduling_gates.retain(|g| g != ADMISSION_GATE);
    Ok(())
}

/// `validation.IsDNS1123Label`.
fn is_dns1123_label(s: &str) -> bool {
    s.len() <= 63 && crate::model::labels::is_dns1123_subdomain(s) && !s.contains('.')
}
