//! Object metadata as the API server validates it on create, for every kind schedsim reads:
//! `ValidateObjectMetaAccessor` (`k8s.io/apimachinery/pkg/api/validation/objectmeta.go`) with
//! each kind's name rule ([`KINDS`]), `ValidateLabels`
//! (`pkg/apis/meta/v1/validation/validation.go`) and `ValidateAnnotations`, with their messages.
//!
//! The entry points are [`object_meta`] (a typed `ObjectMeta`) and [`validate`] (a [`Meta`]
//! view, which the loader builds from the document without decoding it); a workload's pod
//! template has its labels and annotations checked by [`template_meta`].
//!
//! Not checked: `ownerReferences`, `finalizers` and `managedFields` (schedsim reads none of
//! them), and the update-time rules.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use super::{FieldError, invalid};
use crate::model::labels::{
    LenUnit, dns1123_label_errors, dns1123_subdomain_errors, label_value_errors,
    qualified_name_errors,
};

/// `TotalAnnotationSizeLimitB`: 256 KiB of keys and values together.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// A kind's `ValidateNameFunc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// `NameIsDNSSubdomain`: at most 253 characters of `[a-z0-9.-]`.
    Subdomain,
    /// `NameIsDNSLabel`: at most 63 characters of `[a-z0-9-]`.
    Label,
}

/// How the API server validates one kind's metadata.
#[derive(Debug, Clone, Copy)]
pub struct KindMeta {
    pub kind: &'static str,
    pub name: NameRule,
    pub namespaced: bool,
}

const fn kind(kind: &'static str, name: NameRule, namespaced: bool) -> KindMeta {
    KindMeta {
        kind,
        name,
        namespaced,
    }
}

use NameRule::{Label, Subdomain};

/// Every kind schedsim reads (and those it is about to), with the rule its validation passes
/// to `ValidateObjectMeta`:
/// - core (`pkg/apis/core/validation/validation.go`): Pod `ValidatePodName`, Node
///   `ValidateNodeName` (subdomains, Node cluster-scoped), Namespace `ValidateNamespaceName`
///   (a label, cluster-scoped), ConfigMap `ValidateConfigMapName` (a subdomain);
/// - PriorityClass (`pkg/apis/scheduling/validation`): `NameIsDNSSubdomain`, cluster-scoped;
/// - batch/v1 Job (`pkg/apis/batch/validation`): `ValidateReplicationControllerName`, a
///   subdomain;
/// - apps/v1 (`pkg/apis/apps/validation`): Deployment, ReplicaSet and DaemonSet subdomains,
///   StatefulSet `ValidateStatefulSetName` a label; policy/v1 PodDisruptionBudget a subdomain;
/// - resource.k8s.io (`pkg/apis/resource/validation`): subdomains; DeviceClass,
///   ResourceSlice and DeviceTaintRule cluster-scoped;
/// - custom resources (apiextensions-apiserver `customResourceStrategy.Validate`:
///   `NameIsDNSSubdomain`), scoped as their CRDs say: Kubeflow Trainer's TrainJob and
///   TrainingRuntime namespaced, ClusterTrainingRuntime cluster-scoped; JobSet and both
///   PodGroups namespaced; Kueue's ResourceFlavor, ClusterQueue, Cohort and
///   WorkloadPriorityClass cluster-scoped, LocalQueue and Workload namespaced.
pub const KINDS: &[KindMeta] = &[
    kind("Pod", Subdomain, true),
    kind("Node", Subdomain, false),
    kind("Namespace", Label, false),
    kind("PriorityClass", Subdomain, false),
    kind("Job", Subdomain, true),
    kind("Deployment", Subdomain, true),
    kind("ReplicaSet", Subdomain, true),
    kind("StatefulSet", Label, true),
    kind("DaemonSet", Subdomain, true),
    kind("PodDisruptionBudget", Subdomain, true),
    kind("DeviceClass", Subdomain, false),
    kind("ResourceSlice", Subdomain, false),
    kind("ResourceClaim", Subdomain, true),
    kind("ResourceClaimTemplate", Subdomain, true),
    kind("DeviceTaintRule", Subdomain, false),
    kind("TrainJob", Subdomain, true),
    kind("TrainingRuntime", Subdomain, true),
    kind("ClusterTrainingRuntime", Subdomain, false),
    kind("JobSet", Subdomain, true),
    kind("PodGroup", Subdomain, true),
    kind("ResourceFlavor", Subdomain, false),
    kind("ClusterQueue", Subdomain, false),
    kind("Cohort", Subdomain, false),
    kind("LocalQueue", Subdomain, true),
    kind("WorkloadPriorityClass", Subdomain, false),
    kind("Workload", Subdomain, true),
    kind("ConfigMap", Subdomain, true),
    // Kueue's manager Configuration is no API object: it has no metadata at all (its
    // strict decoding refuses one), so this rule never applies.
    kind("Configuration", Subdomain, false),
];

/// The metadata rule of a kind; a kind not in [`KINDS`] is validated as a namespaced custom
/// resource (a DNS subdomain).
pub fn kind_meta(kind: &str) -> KindMeta {
    KINDS
        .iter()
        .find(|k| k.kind == kind)
        .copied()
        .unwrap_or(KindMeta {
            kind: "",
            name: Subdomain,
            namespaced: true,
        })
}

/// Label or annotation pairs, typed or straight from the document (non-string values are
/// left to the decoder, which refuses them).
#[derive(Debug, Clone, Copy)]
pub enum Pairs<'a> {
    Typed(Option<&'a BTreeMap<String, String>>),
    Json(Option<&'a serde_json::Map<String, Value>>),
}

impl<'a> Pairs<'a> {
    fn for_each(self, mut f: impl FnMut(&'a str, &'a str)) {
        match self {
            Pairs::Typed(map) => map.into_iter().flatten().for_each(|(k, v)| f(k, v)),
            Pairs::Json(map) => {
                for (k, v) in map.into_iter().flatten() {
                    if let Some(v) = v.as_str() {
                        f(k, v);
                    }
                }
            }
        }
    }
}

/// The metadata fields the API server validates on create.
#[derive(Debug, Clone, Copy)]
pub struct Meta<'a> {
    pub name: &'a str,
    pub generate_name: &'a str,
    pub namespace: &'a str,
    pub labels: Pairs<'a>,
    pub annotations: Pairs<'a>,
}

impl<'a> Meta<'a> {
    /// A typed `ObjectMeta`.
    pub fn of(meta: &'a ObjectMeta) -> Meta<'a> {
        Meta {
            name: meta.name.as_deref().unwrap_or(""),
            generate_name: meta.generate_name.as_deref().unwrap_or(""),
            namespace: meta.namespace.as_deref().unwrap_or(""),
            labels: Pairs::Typed(meta.labels.as_ref()),
            annotations: Pairs::Typed(meta.annotations.as_ref()),
        }
    }

    /// An object's `metadata` as the document holds it; `None` when a field has the wrong
    /// type, which decoding the object reports (the API server cannot decode it either).
    pub fn of_json(metadata: &'a Value) -> Option<Meta<'a>> {
        let field = |name: &str| metadata.get(name).filter(|v| !v.is_null());
        let text = |name: &str| match field(name) {
            None => Some(""),
            Some(v) => v.as_str(),
        };
        let map = |name: &str| match field(name) {
            None => Some(Pairs::Json(None)),
            Some(v) => v.as_object().map(|m| Pairs::Json(Some(m))),
        };
        if !(metadata.is_null() || metadata.is_object()) {
            return None;
        }
        Some(Meta {
            name: text("name")?,
            generate_name: text("generateName")?,
            namespace: text("namespace")?,
            labels: map("labels")?,
            annotations: map("annotations")?,
        })
    }
}

/// A typed object's metadata, validated as the API server validates `kind` on create; `path`
/// is the object's field path (errors are at `<path>.metadata.…`).
pub fn object_meta(kind: &str, meta: &ObjectMeta, path: &str) -> Vec<FieldError> {
    validate(kind_meta(kind), Meta::of(meta), path)
}

/// `ValidateObjectMetaAccessor` for a create, the object as the API server holds it after
/// `BeforeCreate`: its name generated when only `generateName` was given (the caller puts the
/// generated name in `meta.name`), a namespaced object without a namespace in the one
/// `kubectl` sends it to (`default`), a cluster-scoped one's namespace cleared
/// (`EnsureObjectNamespaceMatchesRequestNamespace`). So `Required` on the namespace and
/// `Forbidden` on a cluster-scoped one cannot happen here.
pub fn validate(rule: KindMeta, meta: Meta, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    let at = |field: &str| crate::yaml::join_path(path, &format!("metadata.{field}"));
    let name_errors = |name: &str| match rule.name {
        Subdomain => dns1123_subdomain_errors(name, LenUnit::Characters),
        Label => dns1123_label_errors(name, LenUnit::Characters),
    };
    if !meta.generate_name.is_empty() {
        for m in name_errors(&mask_trailing_dash(meta.generate_name)) {
            invalid(&mut errs, at("generateName"), meta.generate_name, &m);
        }
    }
    if meta.name.is_empty() {
        errs.push(FieldError::new(
            &at("name"),
            "Required value: name or generateName is required".into(),
        ));
    } else {
        for m in name_errors(meta.name) {
            invalid(&mut errs, at("name"), meta.name, &m);
        }
    }
    if rule.namespaced && !meta.namespace.is_empty() {
        for m in dns1123_label_errors(meta.namespace, LenUnit::Characters) {
            invalid(&mut errs, at("namespace"), meta.namespace, &m);
        }
    }
    labels(meta.labels, &at("labels"), &mut errs);
    annotations(meta.annotations, &at("annotations"), &mut errs);
    errs
}

/// The labels and annotations of a pod template (`ValidatePodTemplateSpec`) or of a Job
/// template a JobSet stamps out: its name and namespace are the controller's.
pub fn template_meta(meta: Option<&ObjectMeta>, path: &str) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if let Some(meta) = meta {
        let at = |field: &str| crate::yaml::join_path(path, &format!("metadata.{field}"));
        labels(Pairs::Typed(meta.labels.as_ref()), &at("labels"), &mut errs);
        let annotations_at = at("annotations");
        annotations(
            Pairs::Typed(meta.annotations.as_ref()),
            &annotations_at,
            &mut errs,
        );
    }
    errs
}

/// `maskTrailingDash`: a `generateName` may end in `-`, since a suffix follows it.
fn mask_trailing_dash(name: &str) -> String {
    match name.strip_suffix('-') {
        Some(rest) if name.len() > 1 => format!("{rest}a"),
        _ => name.to_string(),
    }
}

/// `ValidateLabels`: every key a qualified name, every value a label value; errors name the
/// map, as upstream's do.
pub fn labels(pairs: Pairs, path: &str, errs: &mut Vec<FieldError>) {
    pairs.for_each(|k, v| {
        for m in qualified_name_errors(k) {
            invalid(errs, path.to_string(), k, &m);
        }
        for m in label_value_errors(v) {
            invalid(errs, path.to_string(), v, &m);
        }
    });
}

/// `ValidateAnnotations`: keys are qualified names in any case, and keys and values together
/// at most 256 KiB.
pub fn annotations(pairs: Pairs, path: &str, errs: &mut Vec<FieldError>) {
    let mut total = 0usize;
    pairs.for_each(|k, v| {
        total = total.saturating_add(k.len()).saturating_add(v.len());
        if !crate::model::labels::is_qualified_name(k) {
            for m in qualified_name_errors(&k.to_lowercase()) {
                invalid(errs, path.to_string(), k, &m);
            }
        }
    });
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        errs.push(FieldError::new(
            path,
            format!("Too long: may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT} bytes"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(name: &str, generate_name: &str, namespace: &str) -> ObjectMeta {
        let some = |s: &str| (!s.is_empty()).then(|| s.to_string());
        ObjectMeta {
            name: some(name),
            generate_name: some(generate_name),
            namespace: some(namespace),
            ..ObjectMeta::default()
        }
    }

    #[test]
    fn a_trailing_dash_is_masked_in_generate_name() {
        // `TestValidateObjectMetaTrimsTrailingDash`.
        assert!(object_meta("Pod", &meta("test", "foo-", ""), "").is_empty());
        assert_eq!(object_meta("Pod", &meta("test", "-", ""), "").len(), 1);
    }

    #[test]
    fn scope_decides_the_namespace_rule() {
        // A cluster-scoped object's namespace is cleared before validation.
        assert!(object_meta("Node", &meta("n", "", "Not_A_Label"), "").is_empty());
        let errs = object_meta("Pod", &meta("p", "", "foo.bar"), "items[0]");
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].path, "items[0].metadata.namespace");
        assert_eq!(
            errs[0].message,
            "Invalid value: \"foo.bar\": must not contain dots"
        );
    }

    #[test]
    fn every_kind_is_listed_once() {
        let mut seen = std::collections::BTreeSet::new();
        for k in KINDS {
            assert!(seen.insert(k.kind), "{} twice", k.kind);
        }
    }
}
