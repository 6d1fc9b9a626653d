//! The scale the disruption controller reads for a pod's controller: its `finders`
//! (`pkg/controller/disruption/disruption.go`) follow the pod's controller reference to a
//! ReplicaSet and on to the Deployment controlling it (`getPodDeployment`: the Deployment's
//! `replicas`), or to a ReplicaSet no Deployment controls (`getPodReplicaSet`), or to a
//! StatefulSet (`getPodStatefulSet`). A DaemonSet has no scale subresource: no finder knows it.

use std::collections::HashMap;

use crate::model::pod::ControllerRef;

/// A controller's expected pod count, and which controller it is (`kind/name`, standing in for
/// the UID the disruption controller keys its sum by).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ControllerScale {
    pub controller: String,
    pub replicas: i32,
}

#[derive(Debug, Clone, PartialEq)]
struct Entry {
    uid: String,
    replicas: i32,
    controller: Option<ControllerRef>,
}

/// The scenario's Deployments, ReplicaSets (those the Deployment controller creates too) and
/// StatefulSets with their `replicas` after defaulting, by namespace, kind and name.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Scales {
    entries: HashMap<(String, String, String), Entry>,
}

impl Scales {
    /// Records a controller; `controller` is its own controller reference (a ReplicaSet's
    /// Deployment).
    pub fn insert(
        &mut self,
        namespace: &str,
        kind: &str,
        name: &str,
        uid: &str,
        replicas: i32,
        controller: Option<ControllerRef>,
    ) {
        let key = (namespace.to_string(), kind.to_string(), name.to_string());
        let entry = Entry {
            uid: uid.to_string(),
            replicas,
            controller,
        };
        self.entries.insert(key, entry);
    }

    fn get(&self, namespace: &str, r: &ControllerRef, groups: &[&str]) -> Option<&Entry> {
        if !groups.contains(&r.group()) {
            return None;
        }
        let key = (namespace.to_string(), r.kind.clone(), r.name.clone());
        let e = self.entries.get(&key)?;
        r.names(&r.kind, &r.name, &e.uid).then_some(e)
    }

    /// The scale of the controller a pod of `namespace` names in its controller reference,
    /// as the disruption controller's finders find it; `None` when none knows it (upstream:
    /// `found no controllers for pod`).
    pub fn expected_scale(
        &self,
        namespace: &str,
        pod_controller: &ControllerRef,
    ) -> Option<ControllerScale> {
        let scale = |kind: &str, name: &str, replicas: i32| ControllerScale {
            controller: format!("{kind}/{name}"),
            replicas,
        };
        match pod_controller.kind.as_str() {
            "ReplicaSet" => {
                let rs = self.get(namespace, pod_controller, &["apps", "extensions"])?;
                match &rs.controller {
                    Some(d) if d.kind == "Deployment" => {
                        let dep = self.get(namespace, d, &["apps", "extensions"])?;
                        Some(scale("Deployment", &d.name, dep.replicas))
                    }
                    _ => Some(scale("ReplicaSet", &pod_controller.name, rs.replicas)),
                }
            }
            "StatefulSet" => {
                let ss = self.get(namespace, pod_controller, &["apps"])?;
                Some(scale("StatefulSet", &pod_controller.name, ss.replicas))
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(kind: &str, name: &str) -> ControllerRef {
        ControllerRef {
            api_version: "apps/v1".into(),
            kind: kind.into(),
            name: name.into(),
            uid: String::new(),
        }
    }

    #[test]
    fn a_deployment_pod_reads_the_deployment_scale() {
        let mut s = Scales::default();
        s.insert("ns", "Deployment", "web", "", 3, None);
        s.insert(
            "ns",
            "ReplicaSet",
            "web-h",
            "",
            3,
            Some(r("Deployment", "web")),
        );
        s.insert("ns", "ReplicaSet", "solo", "", 2, None);
        s.insert("ns", "StatefulSet", "db", "", 5, None);
        let got = |c: &ControllerRef| {
            s.expected_scale("ns", c)
                .map(|c| (c.controller, c.replicas))
        };
        assert_eq!(
            got(&r("ReplicaSet", "web-h")),
            Some(("Deployment/web".into(), 3))
        );
        assert_eq!(
            got(&r("ReplicaSet", "solo")),
            Some(("ReplicaSet/solo".into(), 2))
        );
        assert_eq!(
            got(&r("StatefulSet", "db")),
            Some(("StatefulSet/db".into(), 5))
        );
        assert_eq!(got(&r("DaemonSet", "agent")), None);
        assert_eq!(got(&r("ReplicaSet", "missing")), None);
        assert_eq!(s.expected_scale("other", &r("StatefulSet", "db")), None);
        let mut core = r("StatefulSet", "db");
        core.api_version = "v1".into();
        assert_eq!(got(&core), None, "the apps group is checked");
    }
}
