//! A DaemonSet as its controller runs it (`pkg/controller/daemon`): one pod on every node
//! it should run on (`NodeShouldRunDaemonPod`, `predicates`: the template's `nodeName`, its
//! required node affinity and node selector, and the node's `NoSchedule`/`NoExecute` taints
//! against its tolerations), that no pod of it holds already. Each pod is the template with the
//! tolerations the controller adds (`util.AddOrUpdateDaemonPodTolerations`) and a required
//! node affinity naming its node by `metadata.name` in place of the template's
//! (`util.ReplaceDaemonSetPodNodeNameNodeAffinity`), so that kube-scheduler places it: it can
//! pend for resources and preempt with its priority like any pod. Pods are named
//! `<daemonset>-<5 characters>` and labelled `controller-revision-hash` and
//! `pod-template-generation` (`util.CreatePodTemplate`).
//!
//! The controller acts on every node the cluster has, including nodes that join later: the
//! loader asks [`DaemonSetPods::should_run`] for the nodes of every timeline step, and a sweep
//! for the nodes its perturbations add.

use std::collections::HashSet;

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::{
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm, Toleration,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::existing::{Claimant, KnownPods};
use super::{
    CONTROLLER_REVISION_HASH_LABEL, Naming, controller_ref, template_hash, template_pod, validation,
};
use crate::features::FeatureGates;
use crate::model::validate::FieldError;
use crate::model::{Node, Pod};
use crate::sched::plugins::{node_affinity, taint_toleration};

/// `extensions.DaemonSetTemplateGenerationKey`.
pub const TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";
/// `apps.DeprecatedTemplateGeneration`: where the API server keeps the template generation.
const TEMPLATE_GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";

/// A DaemonSet, ready to make its pod for any node.
#[derive(Debug, Clone, PartialEq)]
pub struct DaemonSetPods {
    pub namespace: String,
    pub name: String,
    /// The pod of every node but for its name and node affinity: labels, the controller's
    /// tolerations, its controller reference.
    pub template: Pod,
    /// `spec.template.spec.nodeName`, which pins the DaemonSet to one node.
    node_name: Option<String>,
    /// The template's required node affinity, before the controller replaces it.
    required: Pod,
    /// `spec.selector`: the pods it claims.
    selector: LabelSelector,
}

impl DaemonSetPods {
    /// Validates the DaemonSet as the API server does and prepares its pods.
    pub fn new(
        ds: &DaemonSet,
        selector_given: bool,
        gates: &FeatureGates,
    ) -> Result<DaemonSetPods, Vec<FieldError>> {
        let name = ds.metadata.name.clone().unwrap_or_default();
        let namespace = (ds.metadata.namespace.clone()).unwrap_or_else(|| "default".into());
        let spec = ds.spec.clone().unwrap_or_default();
        let mut errs = validation::daemon_set(ds, selector_given);
        let pod = template_pod(&spec.template, &name, &namespace, "spec.template", gates);
        let mut template = match pod {
            Ok(p) if errs.is_empty() => p,
            Ok(_) => return Err(errs),
            Err(mut e) => {
                errs.append(&mut e);
                return Err(errs);
            }
        };
        let host_network = (spec.template.spec.as_ref()).and_then(|s| s.host_network) == Some(true);
        add_daemon_tolerations(&mut template.tolerations, host_network);
        let template_json = serde_json::to_value(&spec.template).unwrap_or_default();
        template.labels.insert(
            CONTROLLER_REVISION_HASH_LABEL.into(),
            template_hash(&template_json, None),
        );
        let generation = (ds.metadata.annotations.as_ref())
            .and_then(|a| a.get(TEMPLATE_GENERATION_ANNOTATION).cloned())
            .unwrap_or_else(|| "1".into());
        template
            .labels
            .insert(TEMPLATE_GENERATION_LABEL.into(), generation);
        template.workload = Some(name.clone());
        template.controller = Some(controller_ref(
            "DaemonSet",
            &name,
            ds.metadata.uid.as_deref(),
        ));
        let node_name = (spec.template.spec.as_ref())
            .and_then(|s| s.node_name.clone())
            .filter(|n| !n.is_empty());
        // The controller places its pods by affinity, never by nodeName.
        template.node_name = None;
        let required = template.clone();
        Ok(DaemonSetPods {
            namespace,
            name,
            template,
            node_name,
            required,
            selector: spec.selector,
        })
    }

    /// `NodeShouldRunDaemonPod`'s `shouldRun`: the template's node name (if any) is the node,
    /// its required node affinity matches the node, and its tolerations (with the
    /// controller's) tolerate the node's `NoSchedule` and `NoExecute` taints.
    pub fn should_run(&self, node: &Node, gates: &FeatureGates) -> bool {
        self.node_name.as_ref().is_none_or(|n| *n == node.name)
            && node_affinity::required_matches(&self.required, node)
            && taint_toleration::find_untolerated(&node.taints, &self.required.tolerations, gates)
                .is_none()
    }

    /// Its pod for `node`, named `name`.
    pub fn pod_for(&self, node: &str, name: String) -> Pod {
        let mut p = self.template.clone();
        p.name = name;
        p.affinity = Some(node_name_affinity(p.affinity.take(), node)).into();
        p
    }

    /// Its pods for the nodes of `nodes` it should run on and holds no pod on yet (in
    /// `known`, which claims them), in node order.
    pub fn pods_for<'n>(
        &self,
        nodes: impl IntoIterator<Item = &'n Node>,
        known: &mut KnownPods,
        naming: &mut Naming,
        gates: &FeatureGates,
    ) -> Vec<Pod> {
        let claimant = Claimant {
            namespace: &self.namespace,
            kind: "DaemonSet",
            name: &self.name,
            uid: self.uid(),
            selector: &self.selector,
        };
        let held: HashSet<String> = (known.claim(&claimant).into_iter())
            .filter_map(|p| p.node.clone())
            .collect();
        nodes
            .into_iter()
            .filter(|n| !held.contains(&n.name) && self.should_run(n, gates))
            .map(|n| {
                let name = naming.generate(&self.namespace, &self.name, &n.name);
                self.pod_for(&n.name, name)
            })
            .collect()
    }

    fn uid(&self) -> &str {
        self.template
            .controller
            .as_deref()
            .map_or("", |c| c.uid.as_str())
    }
}

/// `AddOrUpdateDaemonPodTolerations`: the tolerations every daemon pod gets, each added
/// unless an equal one (`MatchToleration`: key, operator, value, effect) is there.
pub fn add_daemon_tolerations(tolerations: &mut Vec<Toleration>, host_network: bool) {
    let mut wanted = vec![
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
    ];
    if host_network {
        wanted.push(("node.kubernetes.io/network-unavailable", "NoSchedule"));
    }
    for (key, effect) in wanted {
        let t = Toleration {
            key: Some(key.into()),
            operator: Some("Exists".into()),
            effect: Some(effect.into()),
            ..Toleration::default()
        };
        let same = |o: &Toleration| {
            o.key == t.key
                && o.operator.as_deref().unwrap_or("Equal") == "Exists"
                && o.value.as_deref().unwrap_or("").is_empty()
                && o.effect == t.effect
        };
        match tolerations.iter_mut().find(|o| same(o)) {
            Some(o) => *o = t,
            None => tolerations.push(t),
        }
    }
}

/// `ReplaceDaemonSetPodNodeNameNodeAffinity`: the required node affinity becomes one term
/// selecting `node` by `metadata.name`; the rest of the affinity stays.
fn node_name_affinity(affinity: Option<Affinity>, node: &str) -> Affinity {
    let selector = NodeSelector {
        node_selector_terms: vec![NodeSelectorTerm {
            match_expressions: None,
            match_fields: Some(vec![NodeSelectorRequirement {
                key: node_affinity::OBJECT_NAME_FIELD.into(),
                operator: "In".into(),
                values: Some(vec![node.to_string()]),
            }]),
        }],
    };
    let mut affinity = affinity.unwrap_or_default();
    let node_affinity = affinity
        .node_affinity
        .get_or_insert_with(NodeAffinity::default);
    node_affinity.required_during_scheduling_ignored_during_execution = Some(selector);
    affinity
}

/// The node a daemon pod's required node affinity names (`util.GetTargetNodeName`), if the
/// pod is a DaemonSet's.
pub fn target_node(pod: &Pod) -> Option<&str> {
    if pod.controller_kind() != Some("DaemonSet") {
        return None;
    }
    super::existing::node_named_by(pod.affinity.as_ref())
}
