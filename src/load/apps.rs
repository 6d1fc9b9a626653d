//! The apps workloads of a scenario (Deployments, ReplicaSets, StatefulSets, DaemonSets),
//! read through `resolve::apps` with what the controllers see of the scenario: the pods it
//! already holds (bound pods, pending pods of a dump), the ReplicaSets its Deployments own,
//! and, for DaemonSets, the nodes of every timeline step: a DaemonSet makes its pods for the
//! nodes of the step it arrives in, and again for the nodes each later `addNodes` step adds.

use std::collections::{BTreeMap, HashMap};

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde::Deserialize;
use serde_json::Value;

use super::loaded::{LoadedWorkload, ResolveContext, Source, WorkloadItem};
use super::origin::Origin;
use super::{Errors, Loader, objects};
use crate::model::{Node, Pod};
use crate::resolve::apps::daemonset::DaemonSetPods;
use crate::resolve::apps::deployment::{self, KnownReplicaSet};
use crate::resolve::apps::existing::{KnownPod, KnownPods};
use crate::resolve::apps::{self, ControllerPods, Naming, Scales, statefulset};
use crate::sched::plan::Requirement;
use crate::sched::plugins::pod_topology_spread::ControllerSelector;

/// A DaemonSet of the scenario and the timeline step it arrives in (`None`: at the start).
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioDaemonSet {
    pub pods: DaemonSetPods,
    pub arrives: Option<usize>,
}

/// The nodes of every timeline step: the initial ones, and per step those it adds and fails.
pub(super) struct NodeTimeline<'a> {
    pub initial: &'a [(Node, Origin)],
    /// Per step: (nodes `addNodes` adds, nodes `failNodes` removes).
    pub steps: Vec<(Vec<Node>, Vec<String>)>,
}

impl NodeTimeline<'_> {
    /// The nodes that exist once the steps before `step` ran (an arrival step has no events
    /// of its own).
    pub fn at(&self, step: Option<usize>) -> Vec<&Node> {
        let mut nodes: Vec<&Node> = self.initial.iter().map(|(n, _)| n).collect();
        for (added, failed) in self.steps.iter().take(step.unwrap_or(0)) {
            nodes.retain(|n| !failed.contains(&n.name));
            nodes.extend(added);
        }
        nodes
    }
}

/// What the apps controllers share while a scenario loads.
pub(super) struct Apps {
    known: KnownPods,
    replica_sets: Vec<KnownReplicaSet>,
    /// The Deployments of the scenario: (namespace, name, UID).
    deployments: Vec<(String, String, String)>,
    naming: Naming,
    pub daemon_sets: Vec<(ScenarioDaemonSet, Origin)>,
    pub scales: Scales,
    /// The ReplicaSets' and StatefulSets' selectors by (namespace, kind, name), for
    /// PodTopologySpread's default constraints.
    selectors: BTreeMap<(String, String, String), LabelSelector>,
}

/// The parts of a pod the controllers read (decoding whole pods twice would cost).
#[derive(Deserialize)]
struct PodHead {
    #[serde(default)]
    metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    #[serde(default)]
    spec: Option<PodSpecHead>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct PodSpecHead {
    #[serde(default)]
    node_name: Option<String>,
    #[serde(default)]
    affinity: Option<k8s_openapi::api::core::v1::Affinity>,
}

/// Whether the object is one of the apps kinds.
pub(super) fn is_apps(origin: &Origin) -> bool {
    origin.kind().is_some_and(|k| apps::KINDS.contains(&k))
}

impl Loader<'_> {
    /// The controllers' view of the scenario, when some workload item is an apps kind.
    pub(super) fn apps(
        &mut self,
        file: &std::path::Path,
        doc: &std::rc::Rc<crate::yaml::Document>,
        items: &[WorkloadItem],
        existing: &[(Pod, Origin)],
        seed: u64,
    ) -> Option<Apps> {
        let mut origins = Vec::new();
        for item in items {
            match &item.source {
                Source::Object(o) => origins.push(o.clone()),
                Source::Item { value, .. } if value.get("determined").is_some() => {}
                Source::Item { path, value } => {
                    // Errors are reported when the item loads.
                    origins.extend(
                        self.resolve_item(file, doc, path, value)
                            .unwrap_or_default(),
                    );
                }
            }
        }
        if !origins.iter().any(is_apps) {
            return None;
        }
        let mut known = KnownPods::default();
        let mut naming = Naming {
            seed,
            ..Naming::default()
        };
        for (p, at) in existing {
            naming.take(&p.namespace, &p.name);
            known.add(KnownPod {
                namespace: p.namespace.clone(),
                name: p.name.clone(),
                labels: p.labels.clone(),
                controller: p.controller.clone(),
                node: p.node_name.clone(),
                bound: true,
                terminating: !at.value()["metadata"]["deletionTimestamp"].is_null(),
            });
        }
        let (mut replica_sets, mut deployments) = (Vec::new(), Vec::new());
        for o in &origins {
            match o.kind().unwrap_or("Pod") {
                "Pod" => {
                    if let Ok(head) = o.decode::<PodHead>() {
                        let spec = head.spec.as_ref();
                        let node = spec.and_then(|s| s.node_name.as_deref());
                        let affinity = spec.and_then(|s| s.affinity.as_ref());
                        let pod = KnownPod::of(&head.metadata, node, affinity);
                        naming.take(&pod.namespace, &pod.name);
                        known.add(pod);
                    }
                }
                "ReplicaSet" => {
                    if let Ok(rs) = o.decode::<ReplicaSet>() {
                        replica_sets.push(KnownReplicaSet::of(&rs));
                    }
                }
                "Deployment" => {
                    let meta = &o.value()["metadata"];
                    let field = |f: &str| meta[f].as_str().unwrap_or("").to_string();
                    let namespace = meta["namespace"].as_str().unwrap_or("default").to_string();
                    deployments.push((namespace, field("name"), field("uid")));
                }
                _ => {}
            }
        }
        Some(Apps {
            known,
            replica_sets,
            deployments,
            naming,
            daemon_sets: Vec::new(),
            scales: Scales::default(),
            selectors: BTreeMap::new(),
        })
    }

    /// One apps object: validated as the API server validates it and made into the pods its
    /// controller creates. `step` is the timeline step it arrives in.
    pub(super) fn apps_workload(
        &self,
        origin: &Origin,
        step: Option<usize>,
        cx: &ResolveContext,
        apps: &mut Apps,
        nodes: &NodeTimeline,
    ) -> Result<LoadedWorkload, Errors> {
        objects::kind_of(origin).map_err(|e| vec![e])?;
        let kind = origin.kind().unwrap_or("");
        let value = origin.admitted_value();
        let selector_given = value["spec"]["selector"].is_object();
        // The API server reads a missing selector or template as empty; k8s-openapi's types
        // require them.
        let mut patched = Value::clone(&value);
        if let Some(spec) = patched.get_mut("spec").and_then(Value::as_object_mut) {
            for field in ["selector", "template"] {
                if spec.get(field).is_none_or(Value::is_null) {
                    spec.insert(field.into(), Value::Object(Default::default()));
                }
            }
        }
        // `ValidateObjectMeta` as for every kind; the spec's errors come with its own.
        let made = || -> Result<ControllerPods, Errors> {
            Ok(match kind {
                "Deployment" => {
                    let d: Deployment = self.decode_patched(origin, &patched)?;
                    deployment_workload(&d, selector_given, origin, cx, apps)?
                }
                "ReplicaSet" => {
                    let rs: ReplicaSet = self.decode_patched(origin, &patched)?;
                    replica_set_workload(&rs, selector_given, origin, cx, apps)?
                }
                "StatefulSet" => {
                    let ss: StatefulSet = self.decode_patched(origin, &patched)?;
                    let out = origin.check_all(statefulset::stateful_set_pods(
                        &ss,
                        selector_given,
                        &mut apps.known,
                        &mut apps.naming,
                        cx.gates,
                    ))?;
                    let (namespace, name) = names(&ss.metadata);
                    let replicas = ss.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
                    let uid = ss.metadata.uid.clone().unwrap_or_default();
                    apps.scales
                        .insert(&namespace, "StatefulSet", &name, &uid, replicas, None);
                    out
                }
                _ => {
                    let ds: DaemonSet = self.decode_patched(origin, &patched)?;
                    let ds = origin.check_all(DaemonSetPods::new(&ds, selector_given, cx.gates))?;
                    let pods =
                        ds.pods_for(nodes.at(step), &mut apps.known, &mut apps.naming, cx.gates);
                    let set = ScenarioDaemonSet {
                        pods: ds,
                        arrives: step,
                    };
                    apps.daemon_sets.push((set, origin.clone()));
                    ControllerPods::at_once(pods, Vec::new())
                }
            })
        };
        let out = origin.admit_with(kind, made)?;
        let mut warnings: Vec<String> = (out.notes.into_iter())
            .map(|n| format!("{n} ({})", origin.describe()))
            .collect();
        if !cx.kueue.is_empty() && super::kueue::queue_name(&value).is_some() {
            warnings.push(format!(
                "{kind} {} ({}) names a Kueue queue: Kueue's {kind} integration is not simulated, its pods are scheduled without Kueue",
                value["metadata"]["name"].as_str().unwrap_or(""),
                origin.describe()
            ));
        }
        Ok(LoadedWorkload {
            warnings,
            waits_for: out.waits_for,
            ..LoadedWorkload::pods(out.pods, out.steps)
        })
    }

    fn decode_patched<T: serde::de::DeserializeOwned>(
        &self,
        origin: &Origin,
        patched: &Value,
    ) -> Result<T, Errors> {
        (origin.doc)
            .decode(&origin.file, &origin.path, patched)
            .map_err(|e| vec![e])
    }
}

fn names(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> (String, String) {
    (
        meta.namespace.clone().unwrap_or_else(|| "default".into()),
        meta.name.clone().unwrap_or_default(),
    )
}

fn deployment_workload(
    d: &Deployment,
    selector_given: bool,
    origin: &Origin,
    cx: &ResolveContext,
    apps: &mut Apps,
) -> Result<ControllerPods, Errors> {
    let (namespace, name) = names(&d.metadata);
    let uid = d.metadata.uid.clone().unwrap_or_default();
    let owned: Vec<&KnownReplicaSet> = (apps.replica_sets.iter())
        .filter(|rs| rs.namespace == namespace)
        .filter(|rs| (rs.controller.as_deref()).is_some_and(|c| c.names("Deployment", &name, &uid)))
        .collect();
    let (out, rs) = origin.check_all(deployment::deployment_pods(
        d,
        selector_given,
        &owned,
        &mut apps.known,
        &mut apps.naming,
        cx.gates,
    ))?;
    let replicas = d.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    apps.scales
        .insert(&namespace, "Deployment", &name, &uid, replicas, None);
    if let Some(rs) = rs {
        apps.add_selector(&namespace, "ReplicaSet", &rs.name, Some(rs.selector));
        let owner = apps::controller_ref("Deployment", &name, Some(&uid));
        apps.scales.insert(
            &namespace,
            "ReplicaSet",
            &rs.name,
            &rs.uid,
            replicas,
            Some((*owner).clone()),
        );
    }
    Ok(out)
}

fn replica_set_workload(
    rs: &ReplicaSet,
    selector_given: bool,
    origin: &Origin,
    cx: &ResolveContext,
    apps: &mut Apps,
) -> Result<ControllerPods, Errors> {
    let (namespace, name) = names(&rs.metadata);
    let selector = rs.spec.as_ref().map(|s| s.selector.clone());
    apps.add_selector(&namespace, "ReplicaSet", &name, selector);
    let owner = crate::model::objects::controller_ref(&rs.metadata);
    // A Deployment of the scenario runs the ReplicaSets it controls.
    let deployment_here = owner.as_deref().is_some_and(|c| {
        c.kind == "Deployment"
            && (apps.deployments.iter())
                .any(|(ns, n, uid)| *ns == namespace && c.names("Deployment", n, uid))
    });
    if deployment_here {
        return Ok(ControllerPods::default());
    }
    let out = origin.check_all(deployment::replica_set_pods(
        rs,
        selector_given,
        &mut apps.known,
        &mut apps.naming,
        cx.gates,
    ))?;
    let replicas = rs.spec.as_ref().and_then(|s| s.replicas).unwrap_or(1);
    let uid = rs.metadata.uid.clone().unwrap_or_default();
    apps.scales.insert(
        &namespace,
        "ReplicaSet",
        &name,
        &uid,
        replicas,
        owner.map(|o| (*o).clone()),
    );
    Ok(out)
}

impl Apps {
    /// Records a controller's selector (a ReplicaSet a Deployment makes and the one in the
    /// scenario are the same).
    fn add_selector(
        &mut self,
        namespace: &str,
        kind: &str,
        name: &str,
        selector: Option<LabelSelector>,
    ) {
        if let Some(selector) = selector {
            let key = (namespace.to_string(), kind.to_string(), name.to_string());
            self.selectors.entry(key).or_insert(selector);
        }
    }

    /// The controllers' selectors, for the scheduler.
    pub fn controller_selectors(&self) -> Vec<ControllerSelector> {
        (self.selectors.iter())
            .map(|((namespace, kind, name), selector)| ControllerSelector {
                namespace: namespace.clone(),
                kind: kind.clone(),
                name: name.clone(),
                selector: selector.clone(),
            })
            .collect()
    }

    /// The pods each DaemonSet makes for the nodes a timeline step adds: those that exist by
    /// then (arrived at the start or in an earlier step), in the step's node order.
    pub fn daemon_pods_for_added_nodes(
        &mut self,
        nodes: &NodeTimeline,
        gates: &crate::features::FeatureGates,
    ) -> Vec<(usize, Vec<Pod>, Origin)> {
        let mut out = Vec::new();
        for (k, (added, _)) in nodes.steps.iter().enumerate() {
            if added.is_empty() {
                continue;
            }
            for (ds, origin) in &self.daemon_sets {
                if ds.arrives.is_some_and(|s| s >= k) {
                    continue;
                }
                let pods = ds
                    .pods
                    .pods_for(added, &mut self.known, &mut self.naming, gates);
                if !pods.is_empty() {
                    out.push((k, pods, origin.clone()));
                }
            }
        }
        out
    }
}

/// Adds the requirements a StatefulSet's pods have on pending pods of other items
/// (`waits_for`, by pod key) to their `Schedule` steps, once every pod is loaded: `pods` are
/// the pods the steps index.
pub(super) fn link_waits(
    waits: &[(usize, String, Requirement)],
    keys: &[String],
    steps: &mut [&mut Vec<crate::sched::plan::Step>],
) {
    if waits.is_empty() {
        return;
    }
    let index: HashMap<&str, usize> = (keys.iter().enumerate())
        .map(|(i, k)| (k.as_str(), i))
        .collect();
    for (pod, key, requirement) in waits {
        let Some(&waited) = index.get(key.as_str()) else {
            continue;
        };
        for list in steps.iter_mut() {
            for step in list.iter_mut() {
                if let crate::sched::plan::Step::Schedule { pod: p, requires } = step
                    && p == pod
                {
                    requires.push(Requirement {
                        pods: waited..waited + 1,
                        ..requirement.clone()
                    });
                }
            }
        }
    }
}
