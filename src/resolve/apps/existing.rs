//! The pods a scenario already holds (bound pods of a `kubectl get pods` dump, pending pods
//! listed as workloads), as the controllers see them when they count what they have:
//! `ClaimPods` (`pkg/controller/controller_ref_manager.go`) gives a controller the pods its
//! controller reference names and its selector matches, and adopts orphans its selector
//! matches; each pod belongs to one controller.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use k8s_openapi::api::core::v1::Affinity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};

use crate::model::objects::controller_ref;
use crate::model::pod::ControllerRef;
use crate::sched::plugins::inter_pod_affinity::selector_matches;

/// A pod that exists before the controllers act.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KnownPod {
    pub namespace: String,
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub controller: Option<Arc<ControllerRef>>,
    /// The node it is bound to or, unbound, the node its required node affinity names by
    /// `metadata.name` (`util.GetTargetNodeName`: how the DaemonSet controller places an
    /// unscheduled daemon pod).
    pub node: Option<String>,
    pub bound: bool,
    /// `metadata.deletionTimestamp` is set.
    pub terminating: bool,
}

impl KnownPod {
    /// The pod as a manifest describes it: its metadata, `spec.nodeName` and `spec.affinity`.
    pub fn of(
        metadata: &ObjectMeta,
        node_name: Option<&str>,
        affinity: Option<&Affinity>,
    ) -> KnownPod {
        let bound_to = node_name.filter(|n| !n.is_empty()).map(str::to_string);
        let node = (bound_to.clone()).or_else(|| node_named_by(affinity).map(str::to_string));
        KnownPod {
            namespace: (metadata.namespace.clone()).unwrap_or_else(|| "default".into()),
            name: metadata.name.clone().unwrap_or_default(),
            labels: metadata.labels.clone().unwrap_or_default(),
            controller: controller_ref(metadata),
            bound: bound_to.is_some(),
            node,
            terminating: metadata.deletion_timestamp.is_some(),
        }
    }
}

/// The one node a required node affinity selects by `metadata.name` (`util.GetTargetNodeName`,
/// how the DaemonSet controller places its pods), if it does.
pub fn node_named_by(affinity: Option<&Affinity>) -> Option<&str> {
    let terms = &affinity?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()?
        .node_selector_terms;
    terms
        .iter()
        .flat_map(|t| t.match_fields.iter().flatten())
        .find(|r| {
            r.key == crate::sched::plugins::node_affinity::OBJECT_NAME_FIELD && r.operator == "In"
        })
        .and_then(|r| match r.values.as_deref() {
            Some([one]) => Some(one.as_str()),
            _ => None,
        })
}

/// The scenario's pods, by namespace, each claimed by at most one controller.
#[derive(Debug, Default)]
pub struct KnownPods {
    pods: Vec<KnownPod>,
    claimed: Vec<bool>,
    by_namespace: HashMap<String, Vec<usize>>,
}

/// A controller as `ClaimPods` sees it: its kind, name and UID, and its selector.
pub struct Claimant<'a> {
    pub namespace: &'a str,
    pub kind: &'a str,
    pub name: &'a str,
    pub uid: &'a str,
    pub selector: &'a LabelSelector,
}

impl KnownPods {
    pub fn add(&mut self, pod: KnownPod) {
        let i = self.pods.len();
        self.by_namespace
            .entry(pod.namespace.clone())
            .or_default()
            .push(i);
        self.pods.push(pod);
        self.claimed.push(false);
    }

    pub fn iter(&self) -> impl Iterator<Item = &KnownPod> {
        self.pods.iter()
    }

    /// The pods `c` controls: those its controller reference names and its selector matches,
    /// then the orphans (no controller, not terminating) its selector matches, which it
    /// adopts. A pod claimed once is no other controller's.
    pub fn claim(&mut self, c: &Claimant) -> Vec<&KnownPod> {
        let Some(indices) = self.by_namespace.get(c.namespace) else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for &i in indices {
            let pod = &self.pods[i];
            if self.claimed[i] || !selector_matches(c.selector, &pod.labels) {
                continue;
            }
            let ours = match &pod.controller {
                Some(owner) => owner.names(c.kind, c.name, c.uid),
                None => !pod.terminating,
            };
            if ours {
                self.claimed[i] = true;
                out.push(i);
            }
        }
        out.into_iter().map(|i| &self.pods[i]).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, labels: &[(&str, &str)], owner: Option<(&str, &str)>) -> KnownPod {
        KnownPod {
            namespace: "ns".into(),
            name: name.into(),
            labels: labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            controller: owner.map(|(kind, name)| super::super::controller_ref(kind, name, None)),
            bound: true,
            node: Some("n1".into()),
            terminating: false,
        }
    }

    fn selector(app: &str) -> LabelSelector {
        LabelSelector {
            match_labels: Some([("app".to_string(), app.to_string())].into()),
            match_expressions: None,
        }
    }

    #[test]
    fn owned_and_orphan_pods_are_claimed_once() {
        let mut known = KnownPods::default();
        known.add(pod(
            "owned",
            &[("app", "web")],
            Some(("ReplicaSet", "web-1")),
        ));
        known.add(pod("orphan", &[("app", "web")], None));
        known.add(pod(
            "others",
            &[("app", "web")],
            Some(("ReplicaSet", "web-2")),
        ));
        known.add(pod(
            "unmatched",
            &[("app", "db")],
            Some(("ReplicaSet", "web-1")),
        ));
        let sel = selector("web");
        let claimant = Claimant {
            namespace: "ns",
            kind: "ReplicaSet",
            name: "web-1",
            uid: "",
            selector: &sel,
        };
        let names: Vec<String> = (known.claim(&claimant).iter())
            .map(|p| p.name.clone())
            .collect();
        assert_eq!(names, ["owned", "orphan"]);
        assert!(known.claim(&claimant).is_empty(), "claimed once");
    }

    #[test]
    fn an_unbound_daemon_pod_is_placed_by_its_match_fields() {
        let pod: k8s_openapi::api::core::v1::Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "ds-abcde", "namespace": "kube-system"},
            "spec": {"containers": [], "affinity": {"nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu-7"]}]}
                ]}}}}
        }))
        .unwrap();
        let spec = pod.spec.as_ref().unwrap();
        let known = KnownPod::of(
            &pod.metadata,
            spec.node_name.as_deref(),
            spec.affinity.as_ref(),
        );
        assert_eq!(known.node.as_deref(), Some("gpu-7"));
        assert!(!known.bound);
    }
}
