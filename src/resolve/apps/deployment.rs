//! A Deployment and a ReplicaSet as their controllers run them.
//!
//! The Deployment controller (`pkg/controller/deployment`, `getNewReplicaSet`) runs each
//! pod template as a ReplicaSet named `<deployment>-<pod-template-hash>`, its selector and
//! template labelled with the hash (`pod-template-hash`), controlled by the Deployment and
//! scaled to its `replicas` (default 1). A ReplicaSet the Deployment already owns with the same
//! template (`FindNewReplicaSet`, `EqualIgnoreHash`) is that ReplicaSet, its name and hash kept.
//! A paused Deployment creates no new ReplicaSet (`sync` with `createIfNotExisted` false) but
//! scales the one it has. Rollouts are not simulated: the pods of the Deployment's older
//! ReplicaSets keep running.
//!
//! The ReplicaSet controller (`pkg/controller/replicaset`, `manageReplicas`) counts the active
//! pods it controls (`FilterActivePods`: a terminating pod does not count) and creates the
//! missing ones, named `<replicaset>-<5 characters>` (see the parent module on names), with the
//! template's labels and itself as their controller.

use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use serde_json::Value;

use super::existing::{Claimant, KnownPods};
use super::{
    ControllerPods, Naming, POD_TEMPLATE_HASH_LABEL, controller_ref, template_hash, template_pod,
    validation,
};
use crate::features::FeatureGates;
use crate::model::Pod;
use crate::model::pod::ControllerRef;
use crate::model::validate::FieldError;
use crate::sched::plugins::inter_pod_affinity::selector_matches;

/// A ReplicaSet of the scenario, as the Deployment controller looks for its own.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownReplicaSet {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub controller: Option<Arc<ControllerRef>>,
    /// `spec.template`, as JSON.
    pub template: Value,
}

impl KnownReplicaSet {
    pub fn of(rs: &ReplicaSet) -> KnownReplicaSet {
        let template = rs.spec.as_ref().and_then(|s| s.template.as_ref());
        KnownReplicaSet {
            namespace: (rs.metadata.namespace.clone()).unwrap_or_else(|| "default".into()),
            name: rs.metadata.name.clone().unwrap_or_default(),
            uid: rs.metadata.uid.clone().unwrap_or_default(),
            controller: crate::model::objects::controller_ref(&rs.metadata),
            template: serde_json::to_value(template).unwrap_or_default(),
        }
    }
}

/// The ReplicaSet a Deployment's pods belong to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewReplicaSet {
    pub name: String,
    pub uid: String,
}

/// A Deployment's pods: those its ReplicaSet lacks. `owned` are the scenario's ReplicaSets
/// this Deployment controls. Returns the pods and the ReplicaSet, if it has one.
pub fn deployment_pods(
    d: &Deployment,
    selector_given: bool,
    owned: &[&KnownReplicaSet],
    known: &mut KnownPods,
    naming: &mut Naming,
    gates: &FeatureGates,
) -> Result<(ControllerPods, Option<NewReplicaSet>), Vec<FieldError>> {
    let name = d.metadata.name.clone().unwrap_or_default();
    let namespace = (d.metadata.namespace.clone()).unwrap_or_else(|| "default".into());
    let spec = d.spec.clone().unwrap_or_default();
    let mut errs = validation::deployment(d, selector_given);
    let template = checked_template(&spec.template, &name, &namespace, &mut errs, gates);
    let replicas = spec.replicas.unwrap_or(1);
    limit(&mut errs, "Deployment", replicas);
    let (Some(template), true) = (template, errs.is_empty()) else {
        return Err(errs);
    };
    let template_json = serde_json::to_value(&spec.template).unwrap_or_default();
    let mut notes = Vec::new();
    let found = owned
        .iter()
        .find(|rs| equal_ignore_hash(&rs.template, &template_json));
    let (rs_name, rs_uid, hash) = match found {
        Some(rs) => (
            rs.name.clone(),
            rs.uid.clone(),
            hash_label(&rs.template, &rs.name, &name),
        ),
        None => match replica_set_of_pods(&name, &namespace, &spec.selector, owned, known) {
            Some((rs, hash)) => (rs, String::new(), hash),
            None if spec.paused == Some(true) => {
                notes.push(format!(
                    "Deployment {namespace}/{name} is paused and has no ReplicaSet for its template: its controller creates none, so it has no pods"
                ));
                return Ok((ControllerPods::at_once(Vec::new(), notes), None));
            }
            None => {
                let collisions = d.status.as_ref().and_then(|s| s.collision_count);
                let hash = template_hash(&template_json, collisions);
                (format!("{name}-{hash}"), String::new(), hash)
            }
        },
    };
    let old: Vec<&str> = (owned.iter())
        .filter(|rs| rs.name != rs_name)
        .map(|rs| rs.name.as_str())
        .collect();
    if !old.is_empty() {
        notes.push(format!(
            "Deployment {namespace}/{name} also owns ReplicaSet(s) {} with another template: rollouts are not simulated, their pods keep running",
            old.join(", ")
        ));
    }
    let mut selector = spec.selector.clone();
    selector
        .match_labels
        .get_or_insert_default()
        .insert(POD_TEMPLATE_HASH_LABEL.into(), hash.clone());
    let plan = ReplicaPlan {
        namespace: &namespace,
        replica_set: &rs_name,
        uid: &rs_uid,
        replicas,
        selector: &selector,
        workload: &name,
        hash: Some(&hash),
    };
    let pods = plan.pods(template, known, naming, &mut notes);
    let rs = NewReplicaSet {
        name: rs_name,
        uid: rs_uid,
    };
    Ok((ControllerPods::at_once(pods, notes), Some(rs)))
}

/// A ReplicaSet's pods: those it lacks.
pub fn replica_set_pods(
    rs: &ReplicaSet,
    selector_given: bool,
    known: &mut KnownPods,
    naming: &mut Naming,
    gates: &FeatureGates,
) -> Result<ControllerPods, Vec<FieldError>> {
    let name = rs.metadata.name.clone().unwrap_or_default();
    let namespace = (rs.metadata.namespace.clone()).unwrap_or_else(|| "default".into());
    let spec = rs.spec.clone().unwrap_or_default();
    let mut errs = validation::replica_set(rs, selector_given);
    let template_spec = spec.template.clone().unwrap_or_default();
    let template = checked_template(&template_spec, &name, &namespace, &mut errs, gates);
    let replicas = spec.replicas.unwrap_or(1);
    limit(&mut errs, "ReplicaSet", replicas);
    let (Some(template), true) = (template, errs.is_empty()) else {
        return Err(errs);
    };
    let mut notes = Vec::new();
    let plan = ReplicaPlan {
        namespace: &namespace,
        replica_set: &name,
        uid: rs.metadata.uid.as_deref().unwrap_or(""),
        replicas,
        selector: &spec.selector,
        workload: &name,
        hash: None,
    };
    let pods = plan.pods(template, known, naming, &mut notes);
    Ok(ControllerPods::at_once(pods, notes))
}

/// The template as a pod, its errors added to `errs`.
fn checked_template(
    template: &PodTemplateSpec,
    owner: &str,
    namespace: &str,
    errs: &mut Vec<FieldError>,
    gates: &FeatureGates,
) -> Option<Pod> {
    match template_pod(template, owner, namespace, "spec.template", gates) {
        Ok(p) => Some(p),
        Err(mut e) => {
            errs.append(&mut e);
            None
        }
    }
}

/// The product's pod limit, before any pod is made.
fn limit(errs: &mut Vec<FieldError>, kind: &str, replicas: i32) {
    if crate::limits::PODS.exceeded_by(replicas.max(0) as u64) {
        errs.push(FieldError::new(
            "spec.replicas",
            crate::limits::PODS.message(format!("a {kind} of {replicas} pods")),
        ));
    }
}

/// `EqualIgnoreHash`: two templates equal but for their `pod-template-hash` label.
fn equal_ignore_hash(a: &Value, b: &Value) -> bool {
    let strip = |v: &Value| {
        let mut v = v.clone();
        if let Some(labels) = v
            .pointer_mut("/metadata/labels")
            .and_then(Value::as_object_mut)
        {
            labels.remove(POD_TEMPLATE_HASH_LABEL);
            if labels.is_empty() {
                v["metadata"].as_object_mut().map(|m| m.remove("labels"));
            }
        }
        v
    };
    strip(a) == strip(b)
}

/// A ReplicaSet's hash: its template's `pod-template-hash` label, else its name's suffix.
fn hash_label(template: &Value, rs: &str, deployment: &str) -> String {
    match template["metadata"]["labels"][POD_TEMPLATE_HASH_LABEL].as_str() {
        Some(h) => h.to_string(),
        None => (rs.strip_prefix(deployment))
            .and_then(|s| s.strip_prefix('-'))
            .unwrap_or(rs)
            .to_string(),
    }
}

/// The Deployment's ReplicaSet when the scenario holds its pods but not the ReplicaSet
/// itself (a dump of pods and Deployments): the one ReplicaSet named `<deployment>-<hash>`
/// that pods the Deployment's selector matches name as their controller, with that hash as
/// their `pod-template-hash`.
fn replica_set_of_pods(
    deployment: &str,
    namespace: &str,
    selector: &LabelSelector,
    owned: &[&KnownReplicaSet],
    known: &KnownPods,
) -> Option<(String, String)> {
    let mut found: Option<(String, String)> = None;
    for p in known.iter().filter(|p| p.namespace == namespace) {
        let Some(c) = p.controller.as_deref().filter(|c| c.kind == "ReplicaSet") else {
            continue;
        };
        let Some(hash) = p.labels.get(POD_TEMPLATE_HASH_LABEL) else {
            continue;
        };
        if c.name != format!("{deployment}-{hash}")
            || !selector_matches(selector, &p.labels)
            || owned.iter().any(|rs| rs.name == c.name)
        {
            continue;
        }
        match &found {
            None => found = Some((c.name.clone(), hash.clone())),
            Some((name, _)) if *name == c.name => {}
            // Two: a rollout in progress; which is new is not known.
            Some(_) => return None,
        }
    }
    found
}

/// What the ReplicaSet controller works with.
struct ReplicaPlan<'a> {
    namespace: &'a str,
    replica_set: &'a str,
    uid: &'a str,
    replicas: i32,
    selector: &'a LabelSelector,
    /// The workload the pods are reported under (the Deployment, or the ReplicaSet itself).
    workload: &'a str,
    /// The Deployment's `pod-template-hash`, for its ReplicaSet's pods.
    hash: Option<&'a str>,
}

impl ReplicaPlan<'_> {
    /// `manageReplicas`: the pods to create so that `replicas` are active.
    fn pods(
        &self,
        mut template: Pod,
        known: &mut KnownPods,
        naming: &mut Naming,
        notes: &mut Vec<String>,
    ) -> Vec<Pod> {
        let claimant = Claimant {
            namespace: self.namespace,
            kind: "ReplicaSet",
            name: self.replica_set,
            uid: self.uid,
            selector: self.selector,
        };
        let active = (known.claim(&claimant).iter())
            .filter(|p| !p.terminating)
            .count() as i64;
        let replicas = i64::from(self.replicas.max(0));
        if active > replicas {
            notes.push(format!(
                "ReplicaSet {}/{} has {active} pods for {replicas} replicas: its controller deletes {} of them; schedsim keeps them",
                self.namespace,
                self.replica_set,
                active - replicas
            ));
        }
        if let Some(hash) = self.hash {
            template
                .labels
                .insert(POD_TEMPLATE_HASH_LABEL.into(), hash.into());
        }
        template.workload = Some(self.workload.to_string());
        template.controller = Some(controller_ref(
            "ReplicaSet",
            self.replica_set,
            Some(self.uid),
        ));
        (active..replicas)
            .map(|i| {
                let mut p = template.clone();
                p.name = naming.generate(self.namespace, self.replica_set, &i.to_string());
                p
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resolve::apps::existing::KnownPod;

    fn deployment(yaml: serde_json::Value) -> Deployment {
        serde_json::from_value(yaml).unwrap()
    }

    fn web(replicas: i32) -> Deployment {
        deployment(serde_json::json!({
            "metadata": {"name": "web", "namespace": "ns"},
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "i",
                        "resources": {"requests": {"cpu": "1"}}}]}
                }
            }
        }))
    }

    fn run(
        d: &Deployment,
        owned: &[&KnownReplicaSet],
        known: &mut KnownPods,
    ) -> (Vec<Pod>, Option<NewReplicaSet>, Vec<String>) {
        let mut naming = Naming::default();
        let (pods, rs) =
            deployment_pods(d, true, owned, known, &mut naming, &FeatureGates::default()).unwrap();
        (pods.pods, rs, pods.notes)
    }

    #[test]
    fn a_deployment_runs_its_replicas_through_a_hashed_replica_set() {
        let (pods, rs, _) = run(&web(3), &[], &mut KnownPods::default());
        let rs = rs.unwrap();
        let hash = rs.name.strip_prefix("web-").unwrap();
        assert_eq!(pods.len(), 3);
        for p in &pods {
            assert!(p.name.starts_with(&format!("{}-", rs.name)), "{}", p.name);
            assert_eq!(p.name.len(), rs.name.len() + 6);
            assert_eq!(p.labels[POD_TEMPLATE_HASH_LABEL], hash);
            assert_eq!(p.labels["app"], "web");
            assert_eq!(p.workload.as_deref(), Some("web"));
            let c = p.controller.as_deref().unwrap();
            assert_eq!(
                (c.kind.as_str(), c.name.as_str()),
                ("ReplicaSet", rs.name.as_str())
            );
        }
    }

    #[test]
    fn replicas_default_to_one_and_zero_makes_none() {
        let mut d = web(0);
        assert!(run(&d, &[], &mut KnownPods::default()).0.is_empty());
        d.spec.as_mut().unwrap().replicas = None;
        assert_eq!(run(&d, &[], &mut KnownPods::default()).0.len(), 1);
    }

    #[test]
    fn existing_pods_of_its_replica_set_count() {
        let d = web(3);
        let template = serde_json::to_value(&d.spec.as_ref().unwrap().template).unwrap();
        let mut rs_template = template.clone();
        rs_template["metadata"]["labels"][POD_TEMPLATE_HASH_LABEL] = "7c5ddbdf54".into();
        let rs = KnownReplicaSet {
            namespace: "ns".into(),
            name: "web-7c5ddbdf54".into(),
            uid: "u1".into(),
            controller: Some(controller_ref("Deployment", "web", None)),
            template: rs_template,
        };
        let mut known = KnownPods::default();
        for (name, terminating) in [
            ("web-7c5ddbdf54-aaaaa", false),
            ("web-7c5ddbdf54-bbbbb", true),
        ] {
            known.add(KnownPod {
                namespace: "ns".into(),
                name: name.into(),
                labels: [("app", "web"), (POD_TEMPLATE_HASH_LABEL, "7c5ddbdf54")]
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .into(),
                controller: Some(controller_ref("ReplicaSet", "web-7c5ddbdf54", Some("u1"))),
                node: Some("n".into()),
                bound: true,
                terminating,
            });
        }
        let (pods, new_rs, _) = run(&d, &[&rs], &mut known);
        assert_eq!(new_rs.unwrap().name, "web-7c5ddbdf54");
        // One active pod counts; the terminating one does not.
        assert_eq!(pods.len(), 2);
        assert!(
            pods.iter()
                .all(|p| p.labels[POD_TEMPLATE_HASH_LABEL] == "7c5ddbdf54")
        );
        assert!(pods.iter().all(|p| p.name.starts_with("web-7c5ddbdf54-")));
    }

    #[test]
    fn pods_of_a_replica_set_not_in_the_scenario_are_the_deployments() {
        let mut known = KnownPods::default();
        known.add(KnownPod {
            namespace: "ns".into(),
            name: "web-abc12-xxxxx".into(),
            labels: [("app", "web"), (POD_TEMPLATE_HASH_LABEL, "abc12")]
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .into(),
            controller: Some(controller_ref("ReplicaSet", "web-abc12", None)),
            node: Some("n".into()),
            bound: true,
            terminating: false,
        });
        let (pods, rs, _) = run(&web(2), &[], &mut known);
        assert_eq!(rs.unwrap().name, "web-abc12");
        assert_eq!(pods.len(), 1);
    }

    #[test]
    fn a_paused_deployment_without_replica_set_has_no_pods() {
        let mut d = web(2);
        d.spec.as_mut().unwrap().paused = Some(true);
        let (pods, rs, notes) = run(&d, &[], &mut KnownPods::default());
        assert!(pods.is_empty() && rs.is_none());
        assert!(notes[0].contains("paused"), "{notes:?}");
    }

    #[test]
    fn a_replica_set_makes_its_own_pods() {
        let rs: ReplicaSet = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "solo", "namespace": "ns"},
            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "solo"}},
                "template": {"metadata": {"labels": {"app": "solo"}},
                    "spec": {"containers": [{"name": "c", "image": "i"}]}}}
        }))
        .unwrap();
        let pods = replica_set_pods(
            &rs,
            true,
            &mut KnownPods::default(),
            &mut Naming::default(),
            &FeatureGates::default(),
        )
        .unwrap();
        assert_eq!(pods.pods.len(), 2);
        assert!(pods.pods.iter().all(
            |p| p.name.starts_with("solo-") && !p.labels.contains_key(POD_TEMPLATE_HASH_LABEL)
        ));
    }
}
