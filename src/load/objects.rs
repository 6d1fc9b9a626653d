//! `spec.objects`: Kubernetes objects of any supported kind — inline, `{file}`, multi-document
//! files, `List` dumps, folders of manifests — routed by apiVersion and kind to the typed store
//! that reads them. The typed fields (`spec.nodes`, `spec.runtimes`, …) feed the same stores.
//!
//! Adding a kind: a module that decodes it into its store, and one line in [`KINDS`].

use super::origin::{Origin, suggestion};
use super::pod_group::{COSCHEDULING_API_VERSION, VOLCANO_API_VERSION};
use crate::dra::api as dra;
use crate::error::InputError;
use crate::kueue::api as kueue;
use crate::resolve::apps;
use crate::resolve::trainjob;

/// The typed store an object kind is read into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Store {
    Nodes,
    /// Bound pods are existing pods, the others workloads (see [`Routed::route`]).
    Pods,
    PriorityClasses,
    Namespaces,
    Runtimes,
    /// Workload items: TrainJobs, Jobs, JobSets, PodGroups, and the apps kinds (Deployments,
    /// ReplicaSets, StatefulSets, DaemonSets).
    Workloads,
    /// Kueue's ResourceFlavors, ClusterQueues, Cohorts, LocalQueues, WorkloadPriorityClasses,
    /// the Workloads it already admitted, and its manager Configuration (an object, or the
    /// ConfigMap holding it).
    Kueue,
    /// DRA's DeviceClasses, ResourceSlices, ResourceClaims and ResourceClaimTemplates (and
    /// DeviceTaintRules, which are only warned about).
    Dra,
    /// PodDisruptionBudgets.
    Budgets,
}

/// One supported kind: the apiVersions it is read at and its store.
pub(super) struct ObjectKind {
    pub kind: &'static str,
    pub api_versions: &'static [&'static str],
    pub store: Store,
}

const RUNTIME_VERSIONS: &[&str] = &["trainer.kubeflow.org/v1alpha1"];

/// Every kind `spec.objects` reads.
pub(super) const KINDS: &[ObjectKind] = &[
    ObjectKind {
        kind: "Node",
        api_versions: &["v1"],
        store: Store::Nodes,
    },
    ObjectKind {
        kind: "Pod",
        api_versions: &["v1"],
        store: Store::Pods,
    },
    ObjectKind {
        kind: "PriorityClass",
        api_versions: &["scheduling.k8s.io/v1"],
        store: Store::PriorityClasses,
    },
    ObjectKind {
        kind: "Namespace",
        api_versions: &["v1"],
        store: Store::Namespaces,
    },
    ObjectKind {
        kind: "ClusterTrainingRuntime",
        api_versions: RUNTIME_VERSIONS,
        store: Store::Runtimes,
    },
    ObjectKind {
        kind: "TrainingRuntime",
        api_versions: RUNTIME_VERSIONS,
        store: Store::Runtimes,
    },
    ObjectKind {
        kind: "TrainJob",
        api_versions: trainjob::API_VERSIONS,
        store: Store::Workloads,
    },
    ObjectKind {
        kind: "PodGroup",
        api_versions: &[COSCHEDULING_API_VERSION, VOLCANO_API_VERSION],
        store: Store::Workloads,
    },
    ObjectKind {
        kind: "Job",
        api_versions: &["batch/v1"],
        store: Store::Workloads,
    },
    ObjectKind {
        kind: "JobSet",
        api_versions: crate::resolve::jobset::API_VERSIONS,
        store: Store::Workloads,
    },
    ObjectKind {
        kind: "Deployment",
        api_versions: &[apps::API_VERSION],
        store: Store::Workloads,
    },
    ObjectKind {
        kind: "ReplicaSet",
        api_versions: &[apps::API_VERSION],
        store: Store::Workloads,
    },
    ObjectKind {
        kind: "StatefulSet",
        api_versions: &[apps::API_VERSION],
        store: Store::Workloads,
    },
    ObjectKind {
        kind: "DaemonSet",
        api_versions: &[apps::API_VERSION],
        store: Store::Workloads,
    },
    ObjectKind {
        kind: "ResourceFlavor",
        api_versions: kueue::API_VERSIONS,
        store: Store::Kueue,
    },
    ObjectKind {
        kind: "ClusterQueue",
        api_versions: kueue::API_VERSIONS,
        store: Store::Kueue,
    },
    ObjectKind {
        kind: "LocalQueue",
        api_versions: kueue::API_VERSIONS,
        store: Store::Kueue,
    },
    ObjectKind {
        kind: "Cohort",
        api_versions: kueue::COHORT_API_VERSIONS,
        store: Store::Kueue,
    },
    ObjectKind {
        kind: "WorkloadPriorityClass",
        api_versions: kueue::API_VERSIONS,
        store: Store::Kueue,
    },
    ObjectKind {
        kind: "Workload",
        api_versions: kueue::API_VERSIONS,
        store: Store::Kueue,
    },
    // Kueue's manager Configuration, and the ConfigMap that carries it in a cluster.
    ObjectKind {
        kind: crate::kueue::config::KIND,
        api_versions: crate::kueue::config::API_VERSIONS,
        store: Store::Kueue,
    },
    ObjectKind {
        kind: "ConfigMap",
        api_versions: &["v1"],
        store: Store::Kueue,
    },
    ObjectKind {
        kind: "DeviceClass",
        api_versions: dra::API_VERSIONS,
        store: Store::Dra,
    },
    ObjectKind {
        kind: "ResourceSlice",
        api_versions: dra::API_VERSIONS,
        store: Store::Dra,
    },
    ObjectKind {
        kind: "ResourceClaim",
        api_versions: dra::API_VERSIONS,
        store: Store::Dra,
    },
    ObjectKind {
        kind: "ResourceClaimTemplate",
        api_versions: dra::API_VERSIONS,
        store: Store::Dra,
    },
    ObjectKind {
        kind: "PodDisruptionBudget",
        api_versions: &[crate::sched::pdb::api::API_VERSION],
        store: Store::Budgets,
    },
    // Read only to say it is not simulated (`resource.k8s.io/v1alpha3` in 1.34).
    ObjectKind {
        kind: "DeviceTaintRule",
        api_versions: &["resource.k8s.io/v1alpha3"],
        store: Store::Dra,
    },
];

/// The objects of `spec.objects`, by store, in input order.
#[derive(Debug, Default)]
pub(super) struct Routed {
    pub nodes: Vec<Origin>,
    pub existing_pods: Vec<Origin>,
    pub priority_classes: Vec<Origin>,
    pub namespaces: Vec<Origin>,
    pub runtimes: Vec<Origin>,
    pub workloads: Vec<Origin>,
    pub kueue: Vec<Origin>,
    pub dra: Vec<Origin>,
    pub budgets: Vec<Origin>,
    /// Pods in phase Succeeded or Failed: kube-scheduler never sees them.
    pub terminal_pods: usize,
}

impl Routed {
    /// Sends one object to its store, or says why it has none.
    pub fn route(&mut self, origin: Origin) -> Result<(), InputError> {
        if origin.value().is_null() {
            return Ok(()); // an empty document
        }
        let kind = kind_of(&origin)?;
        let store = kind.store;
        match store {
            Store::Nodes => self.nodes.push(origin),
            Store::Pods => {
                let spec = &origin.value()["spec"];
                let phase = origin.value()["status"]["phase"].as_str();
                let bound = spec["nodeName"].as_str().is_some_and(|n| !n.is_empty());
                // kube-scheduler's informers leave out terminal pods: `NewInformerFactory`
                // in pkg/scheduler/scheduler.go lists pods with the field selector
                // `status.phase!=Succeeded,status.phase!=Failed`.
                if matches!(phase, Some("Succeeded" | "Failed")) {
                    self.terminal_pods += 1;
                } else if bound {
                    self.existing_pods.push(origin);
                } else {
                    self.workloads.push(origin);
                }
            }
            Store::PriorityClasses => self.priority_classes.push(origin),
            Store::Namespaces => self.namespaces.push(origin),
            Store::Runtimes => self.runtimes.push(origin),
            Store::Workloads => self.workloads.push(origin),
            Store::Kueue => self.kueue.push(origin),
            Store::Dra => self.dra.push(origin),
            Store::Budgets => self.budgets.push(origin),
        }
        Ok(())
    }
}

/// Versions of the kinds schedsim reads that Kubernetes stopped serving (the deprecation
/// guide, kubernetes.io/docs/reference/using-api/deprecation-guide): (kind, versions, the
/// release that removed them). 1.34 serves Nodes, Pods, Namespaces at `v1` only, Jobs at
/// `batch/v1` only.
const REMOVED: &[(&str, &[&str], &str)] = &[
    ("PriorityClass", &["scheduling.k8s.io/v1beta1"], "1.22"),
    (
        "Deployment",
        &["extensions/v1beta1", "apps/v1beta1", "apps/v1beta2"],
        "1.16",
    ),
    (
        "ReplicaSet",
        &["extensions/v1beta1", "apps/v1beta1", "apps/v1beta2"],
        "1.16",
    ),
    ("StatefulSet", &["apps/v1beta1", "apps/v1beta2"], "1.16"),
    ("DaemonSet", &["extensions/v1beta1", "apps/v1beta2"], "1.16"),
    ("PodDisruptionBudget", &["policy/v1beta1"], "1.25"),
];

/// The registry entry of an object, checked as `kubectl apply` checks it: both `apiVersion`
/// and `kind` set, and the kind served at that version.
pub(super) fn kind_of(origin: &Origin) -> Result<&'static ObjectKind, InputError> {
    let (api_version, kind) = (
        origin.api_version().unwrap_or(""),
        origin.kind().unwrap_or(""),
    );
    if kind.is_empty() {
        return Err(origin.error_at("kind", "kind not set".into()));
    }
    if api_version.is_empty() {
        return Err(origin.error_at("apiVersion", "apiVersion not set".into()));
    }
    let Some(entry) = KINDS.iter().find(|k| k.kind == kind) else {
        let known: Vec<String> = KINDS.iter().map(|k| k.kind.to_string()).collect();
        return Err(origin.error_at(
            "kind",
            format!(
                "schedsim does not read objects of kind {kind:?}{}; spec.objects takes {}",
                suggestion(kind, &known),
                known.join(", ")
            ),
        ));
    };
    if !entry.api_versions.contains(&api_version) {
        let removed = (REMOVED.iter())
            .find(|(k, versions, _)| *k == kind && versions.contains(&api_version))
            .map(|(_, _, release)| {
                format!("; Kubernetes {release} stopped serving {kind} at {api_version}")
            })
            .unwrap_or_default();
        return Err(origin.error_at(
            "apiVersion",
            format!(
                "no matches for kind {kind:?} in version {api_version:?} (schedsim reads it at {}){removed}",
                entry.api_versions.join(", ")
            ),
        ));
    }
    Ok(entry)
}

#[cfg(test)]
mod tests {
    use super::KINDS;

    /// Every kind `spec.objects` reads has its metadata rule (name rule and scope).
    #[test]
    fn every_kind_read_has_a_metadata_rule() {
        for k in KINDS {
            let rules = crate::model::validate::meta::KINDS;
            assert!(rules.iter().any(|m| m.kind == k.kind), "{}", k.kind);
        }
    }
}
