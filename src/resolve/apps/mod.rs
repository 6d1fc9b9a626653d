//! The `apps/v1` workload controllers, as the pods they have the cluster run: a Deployment
//! through the ReplicaSet it creates and a ReplicaSet ([`deployment`]), a StatefulSet
//! ([`statefulset`]) and a DaemonSet ([`daemonset`]), after kubernetes
//! `pkg/controller/{deployment,replicaset,statefulset,daemon}`. Each is defaulted and
//! validated as the API server does it ([`validation`]: `pkg/apis/apps/v1/defaults.go`,
//! `pkg/apis/apps/validation/validation.go`). Pods the scenario already holds count toward
//! what a controller wants ([`existing`]): it creates only the missing ones.
//!
//! Names. A controller names its pods with `generateName` (`<owner>-`, then 5 random
//! characters of the API server's alphabet); schedsim draws the characters from a hash of
//! the scenario seed, the owner and the pod's place, as `dra::controller` does for claims, so a
//! scenario keeps its pod names from run to run. The Deployment controller names its
//! ReplicaSet `<deployment>-<pod-template-hash>`, the hash being `controller.ComputeHash`: an
//! FNV-32a hash of the `spew` dump of the Go struct of the defaulted template, which depends
//! on every field of the Go types and on the API server's defaults. schedsim cannot reproduce
//! that dump, so it hashes the template's canonical JSON instead ([`template_hash`]), and
//! encodes the value as upstream does (`rand.SafeEncodeString` of its decimal digits): the same
//! shape as a cluster's hash, not the same value. The revision hashes of StatefulSet and
//! DaemonSet pods (`controller-revision-hash`) are made the same way.

pub mod daemonset;
pub mod deployment;
pub mod existing;
mod scale;
pub mod statefulset;
pub mod validation;

pub use scale::{ControllerScale, Scales};

use std::collections::HashSet;
use std::sync::Arc;

use k8s_openapi::api::core::v1::PodTemplateSpec;
use serde_json::Value;

use crate::features::FeatureGates;
use crate::model::Pod;
use crate::model::generated_names::{generated_name, stable_hash};
use crate::model::objects;
use crate::model::pod::ControllerRef;
use crate::model::validate::FieldError;

/// The one version the API server serves the apps kinds at.
pub const API_VERSION: &str = "apps/v1";
/// The kinds of this module.
pub const KINDS: [&str; 4] = ["Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"];

/// `apps.DefaultDeploymentUniqueLabelKey`.
pub const POD_TEMPLATE_HASH_LABEL: &str = "pod-template-hash";
/// `apps.ControllerRevisionHashLabelKey` (`apps.StatefulSetRevisionLabel`,
/// `apps.DefaultDaemonSetUniqueLabelKey`).
pub const CONTROLLER_REVISION_HASH_LABEL: &str = "controller-revision-hash";

/// The pods a controller creates, in the order it creates them, and what to tell the user.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ControllerPods {
    pub pods: Vec<Pod>,
    /// How they reach the scheduler (`OrderedReady` holds a StatefulSet's pods back).
    pub steps: Vec<crate::sched::plan::Step>,
    /// Pods the controller creates only once a pod outside `pods` runs (a StatefulSet's
    /// pending pod of a lower ordinal): (index in `pods`, that pod's `namespace/name`, the
    /// requirement, its `pods` to be filled in with that pod's index).
    pub waits_for: Vec<(usize, String, crate::sched::plan::Requirement)>,
    pub notes: Vec<String>,
}

impl ControllerPods {
    /// Pods that all arrive at once.
    pub fn at_once(pods: Vec<Pod>, notes: Vec<String>) -> Self {
        ControllerPods {
            steps: crate::sched::plan::in_order(pods.len()),
            pods,
            waits_for: Vec::new(),
            notes,
        }
    }
}

/// What the controllers need from the scenario: its seed (for generated names) and the pod
/// names already taken, by `namespace/name`.
#[derive(Debug, Default)]
pub struct Naming {
    pub seed: u64,
    pub taken: HashSet<String>,
}

impl Naming {
    /// The name the API server gives a pod created with `generateName` `<owner>-`; `place`
    /// tells the owner's pods apart (a replica's index, a daemon pod's node). Drawn again while
    /// taken, as the controller retries after `AlreadyExists`.
    pub fn generate(&mut self, namespace: &str, owner: &str, place: &str) -> String {
        let prefix = pods_prefix(owner);
        for attempt in 0u32.. {
            let attempt = attempt.to_string();
            let hash = stable_hash(&[
                "apps-pod",
                &self.seed.to_string(),
                namespace,
                owner,
                place,
                &attempt,
            ]);
            let name = generated_name(&prefix, hash);
            if self.take(namespace, &name) {
                return name;
            }
        }
        unreachable!("some attempt finds a free name")
    }

    /// Takes `namespace/name`; false when it was taken already.
    pub fn take(&mut self, namespace: &str, name: &str) -> bool {
        self.taken.insert(format!("{namespace}/{name}"))
    }
}

/// `getPodsPrefix` (`pkg/controller/controller_utils.go`): `<owner>-`, or the owner's name
/// when that is no valid name prefix.
fn pods_prefix(owner: &str) -> String {
    let prefix = format!("{owner}-");
    let valid = crate::model::labels::is_dns1123_subdomain(owner);
    if valid { prefix } else { owner.to_string() }
}

/// The controller reference a controller sets on the pods it creates
/// (`metav1.NewControllerRef`).
pub fn controller_ref(kind: &str, name: &str, uid: Option<&str>) -> Arc<ControllerRef> {
    Arc::new(ControllerRef {
        api_version: API_VERSION.into(),
        kind: kind.into(),
        name: name.into(),
        uid: uid.unwrap_or_default().into(),
    })
}

/// The stand-in for `controller.ComputeHash` (see the module comment): FNV-32a over the
/// template's canonical JSON (keys sorted), then the collision count's 4 little-endian bytes
/// padded to 8 as upstream writes them, encoded with `rand.SafeEncodeString`.
pub fn template_hash(template: &Value, collision_count: Option<i32>) -> String {
    let mut h: u32 = 0x811c_9dc5;
    let mut write = |bytes: &[u8]| {
        for &b in bytes {
            h ^= u32::from(b);
            h = h.wrapping_mul(0x0100_0193);
        }
    };
    write(canonical_json(template).as_bytes());
    if let Some(c) = collision_count {
        let mut bytes = [0u8; 8];
        bytes[..4].copy_from_slice(&(c as u32).to_le_bytes());
        write(&bytes);
    }
    safe_encode(&h.to_string())
}

/// `rand.SafeEncodeString` (`apimachinery/pkg/util/rand`): each character mapped into the
/// API server's alphabet.
pub fn safe_encode(s: &str) -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    s.chars()
        .map(|c| ALPHANUMS[c as usize % ALPHANUMS.len()] as char)
        .collect()
}

/// JSON with every object's keys sorted, whatever order the input gave them in.
fn canonical_json(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            let fields: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", Value::String(k.clone()), canonical_json(&m[k])))
                .collect();
            format!("{{{}}}", fields.join(","))
        }
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(canonical_json).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

/// A controller's pod template as a pod of `namespace` (`controller.GetPodFromTemplate`:
/// the template's labels, annotations and spec), converted and validated as the API server
/// validates a pod; `path` is the template's field path. The name is the owner's until the
/// caller names the pod.
pub fn template_pod(
    template: &PodTemplateSpec,
    owner: &str,
    namespace: &str,
    path: &str,
    gates: &FeatureGates,
) -> Result<Pod, Vec<FieldError>> {
    let mut metadata = template.metadata.clone().unwrap_or_default();
    metadata.name = Some(owner.to_string());
    metadata.namespace = Some(namespace.to_string());
    metadata.owner_references = None;
    let pod = k8s_openapi::api::core::v1::Pod {
        metadata,
        spec: template.spec.clone(),
        status: None,
    };
    let mut errs = Vec::new();
    let pod = objects::pod_from_k8s(&pod, path, gates, &mut errs);
    if errs.is_empty() { Ok(pod) } else { Err(errs) }
}

/// The restart policy of a pod template after defaulting (`SetDefaults_PodSpec`: `Always`).
pub fn restart_policy(template: &PodTemplateSpec) -> &str {
    (template.spec.as_ref())
        .and_then(|s| s.restart_policy.as_deref())
        .unwrap_or("Always")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn safe_encode_maps_digits_as_upstream() {
        // '0' is 48: 48 % 27 = 21 → '4'; '9' is 57: 57 % 27 = 3 → 'f'.
        assert_eq!(safe_encode("0123456789"), "456789bcdf");
    }

    #[test]
    fn template_hash_ignores_key_order_and_sees_collisions() {
        let a = serde_json::json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {}});
        let b = serde_json::json!({"spec": {}, "metadata": {"labels": {"b": "2", "a": "1"}}});
        assert_eq!(template_hash(&a, None), template_hash(&b, None));
        assert_ne!(template_hash(&a, None), template_hash(&a, Some(1)));
        let h = template_hash(&a, None);
        assert!((1..=10).contains(&h.len()), "{h}");
        assert!(h.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)));
    }

    #[test]
    fn generated_names_are_stable_distinct_and_prefixed() {
        let mut naming = Naming {
            seed: 7,
            ..Default::default()
        };
        let names: Vec<String> = (0..2000)
            .map(|i| naming.generate("ns", "web-abc", &i.to_string()))
            .collect();
        let distinct: HashSet<&String> = names.iter().collect();
        assert_eq!(distinct.len(), names.len());
        assert!(names.iter().all(|n| n.len() == "web-abc-".len() + 5));
        assert!(names[0].starts_with("web-abc-"));
        let mut again = Naming {
            seed: 7,
            ..Default::default()
        };
        assert_eq!(again.generate("ns", "web-abc", "0"), names[0]);
        let mut other_seed = Naming {
            seed: 8,
            ..Default::default()
        };
        assert_ne!(other_seed.generate("ns", "web-abc", "0"), names[0]);
    }

    #[test]
    fn a_taken_name_is_drawn_again() {
        let mut naming = Naming::default();
        let first = naming.generate("ns", "web", "0");
        let mut clash = Naming::default();
        clash.take("ns", &first);
        let second = clash.generate("ns", "web", "0");
        assert_ne!(first, second);
        assert!(second.starts_with("web-"));
    }
}
