//! The cluster's other objects: Namespaces, PriorityClasses, the runtimes TrainJobs refer to,
//! and the pods already bound to nodes — from their typed fields and from `spec.objects`.

use std::collections::HashSet;
use std::path::Path;
use std::rc::Rc;

use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use serde_json::Value;

use super::origin::Origin;
use super::{Errors, Loader, priority};
use crate::features::FeatureGates;
use crate::model::validate::FieldError;
use crate::model::{Pod, objects};
use crate::resolve::Runtimes;
use crate::resolve::runtime::{RuntimeKind, TrainingRuntime};
use crate::resolve::trainer_admission;
use crate::sched::plugins::inter_pod_affinity::NamespaceLabels;
use crate::yaml::Document;

impl Loader<'_> {
    /// The objects of the items of `spec.<field>`, then those `spec.objects` routed there.
    pub(super) fn origins(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        field: &str,
        items: &[Value],
        routed: Vec<Origin>,
        errors: &mut Errors,
    ) -> Vec<Origin> {
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            match self.resolve_item(file, doc, &format!("spec.{field}[{i}]"), item) {
                Ok(mut o) => out.append(&mut o),
                Err(mut e) => errors.append(&mut e),
            }
        }
        out.extend(routed);
        out
    }

    /// Namespace labels, for pod affinity's `namespaceSelector`.
    pub(super) fn namespaces(
        &mut self,
        origins: Vec<Origin>,
        errors: &mut Errors,
    ) -> NamespaceLabels {
        let mut namespaces = NamespaceLabels::new();
        let convert = |k: &k8s::Namespace, _: &str, _: &mut Vec<FieldError>| k.clone();
        for origin in origins {
            match self.typed_items(vec![origin], "Namespace", convert) {
                Ok(list) => {
                    for (ns, _) in list {
                        namespaces.insert(
                            ns.metadata.name.unwrap_or_default(),
                            ns.metadata.labels.unwrap_or_default(),
                        );
                    }
                }
                Err(mut e) => errors.append(&mut e),
            }
        }
        namespaces
    }

    pub(super) fn priority_classes(
        &mut self,
        origins: Vec<Origin>,
        errors: &mut Errors,
    ) -> priority::PriorityClasses {
        let mut classes = priority::PriorityClasses::default();
        let convert = |k: &PriorityClass, _: &str, _: &mut Vec<FieldError>| k.clone();
        for origin in origins {
            match self.typed_items(vec![origin], "PriorityClass", convert) {
                Ok(list) => {
                    for (class, at) in list {
                        if let Err(m) = classes.insert(class) {
                            errors.push(at.error(m));
                        }
                    }
                }
                Err(mut e) => errors.append(&mut e),
            }
        }
        classes
    }

    /// Pods already running: each must be bound to one of the scenario's nodes.
    pub(super) fn existing_pods(
        &mut self,
        origins: Vec<Origin>,
        gates: &FeatureGates,
        node_names: &HashSet<&str>,
        errors: &mut Errors,
    ) -> Vec<(Pod, Origin)> {
        let convert =
            |k: &k8s::Pod, at: &str, errs: &mut Vec<_>| objects::pod_from_k8s(k, at, gates, errs);
        let mut pods = Vec::new();
        for origin in origins {
            match self.typed_items(vec![origin], "Pod", convert) {
                Ok(mut p) => pods.append(&mut p),
                Err(mut e) => errors.append(&mut e),
            }
        }
        for (p, at) in &pods {
            match &p.node_name {
                None => errors.push(at.error_at(
                    "spec.nodeName",
                    "existing pods must be bound: set spec.nodeName".into(),
                )),
                Some(n) if !node_names.contains(n.as_str()) => errors.push(at.error_at(
                    "spec.nodeName",
                    format!("node {n:?} is not in the scenario's nodes"),
                )),
                _ => {}
            }
        }
        pods
    }

    /// ClusterTrainingRuntimes and TrainingRuntimes, each name once, as Trainer's CRDs and
    /// webhooks accept them (`resolve::trainer_admission`).
    pub(super) fn runtimes(
        &mut self,
        origins: Vec<Origin>,
        errors: &mut Errors,
        warnings: &mut Vec<String>,
    ) -> Runtimes {
        let mut runtimes = Runtimes::default();
        for origin in origins {
            let kind = match origin.kind() {
                Some("ClusterTrainingRuntime") => RuntimeKind::ClusterTrainingRuntime,
                Some("TrainingRuntime") => RuntimeKind::TrainingRuntime,
                other => {
                    errors.push(origin.error_at(
                        "kind",
                        format!(
                            "expected a ClusterTrainingRuntime or TrainingRuntime here, found kind {:?}",
                            other.unwrap_or("")
                        ),
                    ));
                    continue;
                }
            };
            let kind_name = origin.kind().unwrap_or("");
            let decoded = origin.admit_with(kind_name, || {
                let value = origin.admitted_value();
                origin.refuse_any(trainer_admission::runtime_crd(&value))?;
                // The webhook sees only what the API server validated: metadata too.
                if origin.check_meta(kind_name).is_err() {
                    return Err(Vec::new());
                }
                origin.refuse_any(trainer_admission::runtime_webhook(&value))?;
                origin.decode::<TrainingRuntime>().map_err(|e| vec![e])
            });
            if decoded.is_ok()
                && let Some(w) = trainer_admission::runtime_warning(&origin.admitted_value())
            {
                warnings.push(format!("{w} ({})", origin.describe()));
            }
            match decoded {
                Ok(mut r) => {
                    r.kind = kind;
                    let name = r.name().to_string();
                    if runtimes.insert(r).is_some() {
                        errors.push(
                            origin.error_at(
                                "metadata.name",
                                format!("duplicate runtime name {name:?}"),
                            ),
                        );
                    }
                }
                Err(mut e) => errors.append(&mut e),
            }
        }
        runtimes
    }
}

/// Warnings for terminating pods (`metadata.deletionTimestamp` set; a `kubectl get pods` dump
/// holds them), one per kind, naming the first: how kube-scheduler treats them.
pub(super) fn terminating_warnings(
    existing: &[(crate::model::Pod, Origin)],
    workloads: &[(crate::model::Pod, Origin)],
) -> Vec<String> {
    let describe = |pods: &[(crate::model::Pod, Origin)]| {
        let mut terminating = pods.iter().filter(|(p, _)| p.is_terminating());
        let (first, at) = terminating.next()?;
        let n = 1 + terminating.count();
        Some((n, format!("{} ({})", first.key(), at.describe())))
    };
    // "1 pod is", "2 pods are".
    let plural = |n: usize| if n == 1 { ("", "is") } else { ("s", "are") };
    let mut out = Vec::new();
    if let Some((n, first)) = describe(existing) {
        let (s, verb) = plural(n);
        out.push(format!(
            "{n} existing pod{s} {verb} terminating (metadata.deletionTimestamp set; first: {first}): they hold their nodes' resources until they are gone, but PodTopologySpread does not count them"
        ));
    }
    if let Some((n, first)) = describe(workloads) {
        let (s, verb) = plural(n);
        out.push(format!(
            "{n} pod{s} to schedule {verb} terminating (metadata.deletionTimestamp set; first: {first}): kube-scheduler skips them (\"skip schedule deleting pod\"), so they stay pending"
        ));
    }
    out
}
