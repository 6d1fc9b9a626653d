//! `spec.nodes` and the Nodes of `spec.objects`: converted, each name once, pools expanded.

use std::collections::HashMap;
use std::path::Path;
use std::rc::Rc;

use k8s_openapi::api::core::v1 as k8s;
use serde_json::Value;

use super::origin::Origin;
use super::scenario::PoolItem;
use super::{Errors, Loader};
use crate::model::{Node, objects};
use crate::yaml::{Document, join_path};

impl Loader<'_> {
    /// The scenario's nodes: `spec.nodes` items, then the Nodes of `spec.objects`. Single bad
    /// nodes are collected in `errors`; exceeding the node limit stops the load.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn nodes(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        items: &[Value],
        objects: Vec<Origin>,
        errors: &mut Errors,
        warnings: &mut Vec<String>,
    ) -> Result<Vec<(Node, Origin)>, Errors> {
        let mut nodes = Vec::new();
        let too_many = |nodes: &Vec<(Node, Origin)>,
                        at: &dyn Fn(String) -> crate::error::InputError| {
            crate::limits::NODES
                .exceeded_by(nodes.len() as u64)
                .then(|| {
                    vec![at(
                        crate::limits::NODES.message(format!("{} nodes", nodes.len()))
                    )]
                })
        };
        for (i, item) in items.iter().enumerate() {
            let path = format!("spec.nodes[{i}]");
            match self.node_item(file, doc, &path, item) {
                Ok(mut n) => nodes.append(&mut n),
                Err(mut e) => errors.append(&mut e),
            }
            if let Some(e) = too_many(&nodes, &|m| doc.error(file, &path, m)) {
                return Err(e);
            }
        }
        for origin in objects {
            let at = origin.clone();
            match self.typed_items(vec![origin], "Node", objects::node_from_k8s) {
                Ok(mut n) => nodes.append(&mut n),
                Err(mut e) => errors.append(&mut e),
            }
            if let Some(e) = too_many(&nodes, &|m| at.error(m)) {
                return Err(e);
            }
        }
        let mut seen = HashMap::new();
        for (n, at) in &nodes {
            if let Some(first) = seen.insert(n.name.as_str(), at) {
                errors.push(at.error(format!(
                    "duplicate node name {:?} (first defined at {})",
                    n.name,
                    first.describe()
                )));
            }
            if !n.allocatable.contains_key("pods") {
                warnings.push(format!(
                    "node {:?} ({}) has no status.allocatable.pods: kube-scheduler admits no pods on it",
                    n.name,
                    at.describe()
                ));
            }
        }
        Ok(nodes)
    }

    pub(super) fn node_item(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        path: &str,
        item: &Value,
    ) -> Result<Vec<(Node, Origin)>, Errors> {
        if item.get("pool").is_some() {
            return pool_nodes(file, doc, path, item);
        }
        let origins = self.resolve_item(file, doc, path, item)?;
        self.typed_items(origins, "Node", |k: &k8s::Node, at, errs| {
            objects::node_from_k8s(k, at, errs)
        })
    }

    /// The nodes `schedsim plan` adds: `counts[i]` copies of `spec.plan.candidates[i]`'s
    /// template (or of the node it names), named `plan-<name>-<index>`, in the pool
    /// `plan-<name>`.
    pub(super) fn plan_nodes(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        plan: &super::scenario::PlanSpec,
        counts: &[u32],
        errors: &mut Errors,
    ) -> Result<Vec<(Node, Origin)>, Errors> {
        let mut out = Vec::new();
        for (i, (c, &count)) in plan.candidates.iter().zip(counts).enumerate() {
            let path = format!("spec.plan.candidates[{i}]");
            let (template, template_path) = match (&c.template, &c.from_node) {
                (Some(t), _) => (t.clone(), join_path(&path, "template")),
                (None, Some(from)) => {
                    let at = join_path(&path, "fromNode");
                    match self.node_template(file, doc, &at, from) {
                        Ok(t) => (t, at),
                        Err(mut e) => {
                            errors.append(&mut e);
                            continue;
                        }
                    }
                }
                (None, None) => continue,
            };
            let at = Copies {
                name_path: join_path(&path, "name"),
                template_path,
                count_path: join_path(&path, "max"),
            };
            let prefix = format!("plan-{}-", c.name);
            match template_copies(file, doc, &at, &template, &prefix, count) {
                Ok(mut nodes) => out.append(&mut nodes),
                Err(mut e) => errors.append(&mut e),
            }
        }
        Ok(out)
    }

    /// The ResourceSlices of the nodes `schedsim plan` adds: per node of a candidate with
    /// `resourceSlices`, a copy of each, made the node's as the DRA driver on it would publish
    /// it (`spec.nodeName`, `spec.pool.name` and the owning Node's name set to the node's;
    /// named `<node>-<template name or index>`).
    pub(super) fn plan_slices(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        plan: &super::scenario::PlanSpec,
        nodes: &[(Node, Origin)],
        errors: &mut Errors,
    ) -> Vec<Origin> {
        let mut out = Vec::new();
        for (i, c) in plan.candidates.iter().enumerate() {
            let pool = format!("plan-{}", c.name);
            let added: Vec<&Node> = (nodes.iter().map(|(n, _)| n))
                .filter(|n| n.pool.as_deref() == Some(pool.as_str()))
                .collect();
            if added.is_empty() {
                continue;
            }
            let mut templates = Vec::new();
            for (j, item) in c.resource_slices.iter().enumerate() {
                let path = format!("spec.plan.candidates[{i}].resourceSlices[{j}]");
                match self.resolve_item(file, doc, &path, item) {
                    Ok(origins) => templates.extend(origins),
                    Err(mut e) => errors.append(&mut e),
                }
            }
            for node in added {
                for (j, t) in templates.iter().enumerate() {
                    let mut copy = t.doc.nested(&t.path);
                    let v = &mut copy.value;
                    let name = v["metadata"]["name"].as_str().map(str::to_string);
                    if let Some(meta) = v["metadata"].as_object_mut() {
                        meta.remove("generateName");
                        meta.remove("uid");
                        let name = name.unwrap_or_else(|| format!("slice-{j}"));
                        meta.insert("name".into(), format!("{}-{name}", node.name).into());
                        for owner in (meta.get_mut("ownerReferences"))
                            .and_then(Value::as_array_mut)
                            .into_iter()
                            .flatten()
                            .filter(|o| o["kind"] == "Node")
                        {
                            owner["name"] = node.name.clone().into();
                            owner["uid"] = format!("plan-{}", node.name).into();
                        }
                    }
                    if let Some(spec) = v["spec"].as_object_mut() {
                        spec.insert("nodeName".into(), node.name.clone().into());
                        if let Some(pool) = spec.get_mut("pool").and_then(Value::as_object_mut) {
                            pool.insert("name".into(), node.name.clone().into());
                        }
                    }
                    out.push(Origin::new(&t.file, &Rc::new(copy), ""));
                }
            }
        }
        out
    }

    /// The Node `from.name` of `from.file`, made a template as cluster-autoscaler makes one
    /// from a node of a group (`simulator/node_info_utils.go` `createSanitizedNode`, taints
    /// through `utils/taints` `SanitizeTaints`): its identity dropped (the copies get their own
    /// name and hostname label), its taints without the autoscaler's own and without the
    /// node lifecycle controller's condition taints (a new node is ready), not cordoned; its
    /// labels, remaining taints and allocatable kept.
    fn node_template(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        at: &str,
        from: &super::scenario::FromNode,
    ) -> Result<Value, Errors> {
        let item = serde_json::json!({ "file": from.file });
        let origins = self.resolve_item(file, doc, at, &item)?;
        let node = (origins.iter()).find(|o| {
            o.kind() == Some("Node")
                && o.value()["metadata"]["name"].as_str() == Some(from.name.as_str())
        });
        let Some(node) = node else {
            return Err(vec![doc.error(
                file,
                &join_path(at, "name"),
                format!("no Node named {:?} in {:?}", from.name, from.file),
            )]);
        };
        let mut t = node.value().clone();
        if let Some(meta) = t["metadata"].as_object_mut() {
            meta.retain(|k, _| matches!(k.as_str(), "labels" | "annotations"));
        }
        if let Some(spec) = t["spec"].as_object_mut() {
            spec.retain(|k, _| k == "taints");
            if let Some(taints) = spec.get_mut("taints").and_then(Value::as_array_mut) {
                taints.retain(|taint| {
                    let key = taint["key"].as_str().unwrap_or_default();
                    !SANITIZED_TAINTS.contains(&key)
                });
            }
        }
        if let Some(status) = t["status"].as_object_mut() {
            status.retain(|k, _| matches!(k.as_str(), "allocatable" | "capacity"));
        }
        Ok(t)
    }
}

/// Taints a template made from an existing node drops: cluster-autoscaler's own
/// (`ToBeDeletedByClusterAutoscaler`, `DeletionCandidateOfClusterAutoscaler`) and the node
/// lifecycle controller's condition taints, which a new, ready node does not have.
const SANITIZED_TAINTS: &[&str] = &[
    "ToBeDeletedByClusterAutoscaler",
    "DeletionCandidateOfClusterAutoscaler",
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
    "node.kubernetes.io/unschedulable",
    "node.kubernetes.io/memory-pressure",
    "node.kubernetes.io/disk-pressure",
    "node.kubernetes.io/pid-pressure",
    "node.kubernetes.io/network-unavailable",
    "node.kubernetes.io/out-of-service",
];

/// `count` Nodes from a template, named `<namePrefix><index>` (zero-padded so they sort).
pub(super) fn pool_nodes(
    file: &Path,
    doc: &Rc<Document>,
    path: &str,
    item: &Value,
) -> Result<Vec<(Node, Origin)>, Errors> {
    let p: PoolItem = doc.decode(file, path, item).map_err(|e| vec![e])?;
    let at = Copies {
        name_path: join_path(path, "pool.namePrefix"),
        template_path: join_path(path, "pool.template"),
        count_path: join_path(path, "pool.count"),
    };
    template_copies(
        file,
        doc,
        &at,
        &p.pool.template,
        &p.pool.name_prefix,
        p.pool.count,
    )
}

/// Where a set of template copies is written: the field that names them, the template and
/// the count.
struct Copies {
    name_path: String,
    template_path: String,
    count_path: String,
}

/// `count` copies of a Node template, named `<prefix><index>` (zero-padded so they sort),
/// in the pool named by the prefix.
fn template_copies(
    file: &Path,
    doc: &Rc<Document>,
    at: &Copies,
    template: &Value,
    name_prefix: &str,
    count: u32,
) -> Result<Vec<(Node, Origin)>, Errors> {
    let template_path = &at.template_path;
    let template: k8s::Node = doc
        .decode(file, template_path, template)
        .map_err(|e| vec![e])?;
    let origin = Origin::new(file, doc, template_path);
    let base = origin.check(|errs| objects::node_from_k8s(&template, template_path, errs))?;
    if crate::limits::NODES.exceeded_by(u64::from(count)) {
        return Err(vec![doc.error(
            file,
            &at.count_path,
            crate::limits::NODES.message(format!("a pool of {count} nodes")),
        )]);
    }
    let width = (count.max(1) - 1).to_string().len();
    if count > 0 {
        check_pool_meta(
            &origin,
            &at.name_path,
            &template,
            format!("{name_prefix}{:0width$}", count - 1),
        )?;
    }
    let pool_name = name_prefix.trim_end_matches(['-', '_', '.']).to_string();
    Ok((0..count)
        .map(|i| {
            let mut n = base.clone();
            n.name = format!("{name_prefix}{i:0width$}");
            n.labels
                .insert("kubernetes.io/hostname".into(), n.name.clone());
            n.pool = Some(pool_name.clone());
            (n, origin.clone())
        })
        .collect())
}

/// A pool's Nodes validated as the API server validates a Node: all its names have the same
/// length (zero-padded) and the same characters but digits, so the last one stands for all,
/// with the `kubernetes.io/hostname` label the pool gives it. A bad name is the name prefix's
/// fault, and is reported there.
fn check_pool_meta(
    origin: &Origin,
    name_path: &str,
    template: &k8s::Node,
    name: String,
) -> Result<(), Errors> {
    let mut meta = template.metadata.clone();
    (meta.labels.get_or_insert_with(Default::default))
        .insert("kubernetes.io/hostname".into(), name.clone());
    meta.name = Some(name);
    meta.generate_name = None;
    let errs = crate::model::validate::object_meta("Node", &meta, "");
    let errs: Errors = (errs.into_iter())
        .map(|e| match e.path.as_str() {
            "metadata.name" => (origin.doc).error(&origin.file, name_path, e.message),
            _ => (origin.doc).error(&origin.file, &join_path(&origin.path, &e.path), e.message),
        })
        .collect();
    if errs.is_empty() { Ok(()) } else { Err(errs) }
}
