//! Kueue's objects in the load: those of `spec.objects` (routed there by kind) and those the
//! timeline's `kueue` steps create or replace, each decoded and checked as its CRD and webhook
//! check it, into [`Objects`].

use std::collections::{BTreeMap, BTreeSet};

use super::kueue::QUEUE_NAME_LABEL;
use super::origin::Origin;
use super::scenario::TimelineStep;
use super::{Errors, Loader};
use crate::kueue::admission::{self, Objects};
use crate::kueue::api;
use crate::kueue::workload::workload_object;
use crate::model::validate::FieldError;

impl Loader<'_> {
    /// Kueue's objects, each decoded and checked as its CRD checks it; a name used twice is
    /// refused as the API server refuses it. Kueue's manager Configuration too
    /// ([`super::kueue_config`]).
    pub(super) fn kueue_objects(
        &mut self,
        origins: Vec<Origin>,
        errors: &mut Errors,
        warnings: &mut Vec<String>,
    ) -> Objects {
        let mut objects = Objects::default();
        let mut config = super::kueue_config::Found::default();
        let mut seen: BTreeSet<(&'static str, String)> = BTreeSet::new();
        for origin in origins {
            let kind = origin.kind().unwrap_or("").to_string();
            // Not an API object: it has no metadata (its strict decoding refuses one).
            if kind == crate::kueue::config::KIND {
                config.configuration(&origin, errors);
                continue;
            }
            // Kueue's own decoders would name a missing name again.
            if let Err(mut e) = origin.check_meta(&kind) {
                errors.append(&mut e);
                continue;
            }
            let admitted = origin.admitted_value();
            let value = &*admitted;
            let mut duplicate = |resource: &'static str, key: String, ns: Option<&str>| {
                if !seen.insert((resource, key.clone())) {
                    let name = key.rsplit('/').next().unwrap_or("").to_string();
                    let message = match ns {
                        Some(ns) => format!(
                            "{resource}.kueue.x-k8s.io {name:?} already exists in namespace {ns:?}"
                        ),
                        None => format!("{resource}.kueue.x-k8s.io {name:?} already exists"),
                    };
                    errors.push(origin.error_at("metadata.name", message));
                }
            };
            let checked: Result<(), Vec<FieldError>> = match kind.as_str() {
                "ResourceFlavor" => api::resource_flavor(value).map(|f| {
                    duplicate("resourceflavors", f.name.clone(), None);
                    objects.flavors.insert(f.name.clone(), f);
                }),
                "ClusterQueue" => api::cluster_queue(value).map(|q| {
                    duplicate("clusterqueues", q.name.clone(), None);
                    objects.cluster_queues.push(q);
                }),
                "Cohort" => api::cohort(value).map(|c| {
                    duplicate("cohorts", c.name.clone(), None);
                    objects.cohorts.push(c);
                }),
                "LocalQueue" => api::local_queue(value).map(|q| {
                    let key = format!("{}/{}", q.namespace, q.name);
                    duplicate("localqueues", key, Some(&q.namespace));
                    let lq = (q.namespace, q.name);
                    if q.stop_policy != api::StopPolicy::None {
                        objects.stopped_local_queues.insert(lq.clone(), q.stop_policy);
                    }
                    objects.local_queues.insert(lq, q.cluster_queue);
                }),
                "WorkloadPriorityClass" => api::workload_priority_class(value).map(|c| {
                    duplicate("workloadpriorityclasses", c.name.clone(), None);
                    objects.priority_classes.insert(c.name, c.value);
                }),
                "ConfigMap" => {
                    config.config_map(&origin, errors);
                    Ok(())
                }
                "Workload" => workload_object(value).map(|w| {
                    let ns = w.key.split('/').next().unwrap_or("").to_string();
                    duplicate("workloads", w.key.clone(), Some(&ns));
                    match w.admitted {
                        Some(a) => objects.admitted.push(a),
                        None => objects.warnings.push(format!(
                            "Workload {} ({}) holds no quota (no QuotaReserved condition, or finished): left out; to simulate its admission, give its job with the {QUEUE_NAME_LABEL} label",
                            w.key,
                            origin.describe()
                        )),
                    }
                }),
                _ => Ok(()),
            };
            if let Err(mut e) = origin.check_all(checked) {
                errors.append(&mut e);
            }
        }
        // Kueue's cache keys ClusterQueues by name; schedsim walks them in that order.
        objects.cluster_queues.sort_by(|a, b| a.name.cmp(&b.name));
        objects.now = (objects.admitted.iter())
            .map(|a| a.created.max(a.reserved).saturating_add(1))
            .max()
            .unwrap_or(0);
        let (pods_ready, said) = config.settle(!objects.is_empty());
        objects.pods_ready = pods_ready;
        warnings.extend(said);
        objects
    }

    /// The Kueue objects the timeline's `kueue` steps create or replace (quota changes, a new
    /// team's queues), each checked as its CRD and webhook check it, into `objects.updates`:
    /// ClusterQueues and Cohorts, new or replaced; LocalQueues and ResourceFlavors, new or as
    /// they were (`spec.clusterQueue` of a LocalQueue is immutable, as its CRD says). A
    /// ClusterQueue's or LocalQueue's stopPolicy holds, drains and releases it over time. Not
    /// simulated, and said so: a replaced ResourceFlavor and other kinds (refused).
    pub(super) fn kueue_updates(
        &mut self,
        file: &std::path::Path,
        doc: &std::rc::Rc<crate::yaml::Document>,
        timeline: &[TimelineStep],
        objects: &mut Objects,
        errors: &mut Errors,
    ) {
        // What exists as the steps go: the scenario's objects, then what each step creates.
        let mut cluster_queues: BTreeSet<String> = (objects.cluster_queues.iter())
            .map(|q| q.name.clone())
            .collect();
        let mut local_queues: BTreeMap<(String, String), (String, api::StopPolicy)> =
            (objects.local_queues.iter())
                .map(|(lq, cq)| {
                    let stop = objects
                        .stopped_local_queues
                        .get(lq)
                        .copied()
                        .unwrap_or_default();
                    (lq.clone(), (cq.clone(), stop))
                })
                .collect();
        let mut flavors = objects.flavors.clone();
        for (k, step) in timeline.iter().enumerate() {
            let mut update = admission::QueueUpdate {
                step: k,
                ..Default::default()
            };
            for (i, item) in step.kueue.iter().flatten().enumerate() {
                let path = format!("spec.timeline[{k}].kueue[{i}]");
                let origins = match self.resolve_item(file, doc, &path, item) {
                    Ok(o) => o,
                    Err(mut e) => {
                        errors.append(&mut e);
                        continue;
                    }
                };
                for origin in origins {
                    let kind = origin.kind().unwrap_or("").to_string();
                    if let Err(mut e) = origin.check_meta(&kind) {
                        errors.append(&mut e);
                        continue;
                    }
                    let value = origin.admitted_value();
                    let checked: Result<(), Vec<FieldError>> = match kind.as_str() {
                        "ClusterQueue" => api::cluster_queue(&value).map(|q| {
                            cluster_queues.insert(q.name.clone());
                            update.cluster_queues.push(q);
                        }),
                        "Cohort" => api::cohort(&value).map(|c| update.cohorts.push(c)),
                        "LocalQueue" => api::local_queue(&value).map(|q| {
                            let key = (q.namespace.clone(), q.name.clone());
                            match local_queues.get(&key) {
                                // `clusterQueue`: `self == oldSelf`, "field is immutable"
                                // (`localqueue_types.go`).
                                Some((cq, _)) if *cq != q.cluster_queue => {
                                    errors.push(origin.error_at(
                                        "spec.clusterQueue",
                                        "Invalid value: \"string\": field is immutable".to_string(),
                                    ));
                                }
                                Some((_, stop)) if *stop == q.stop_policy => {}
                                _ => {
                                    local_queues
                                        .insert(key, (q.cluster_queue.clone(), q.stop_policy));
                                    update.local_queues.push(q);
                                }
                            }
                        }),
                        "ResourceFlavor" => api::resource_flavor(&value).map(|f| {
                            match flavors.get(&f.name) {
                                Some(old) if *old != f => errors.push(origin.error_at(
                                    "metadata.name",
                                    format!(
                                        "ResourceFlavor {:?} exists already and a timeline step changes it: a ResourceFlavor changed over time is not simulated (create one under a new name)",
                                        f.name
                                    ),
                                )),
                                Some(_) => {}
                                None => {
                                    flavors.insert(f.name.clone(), f.clone());
                                    update.flavors.push(f);
                                }
                            }
                        }),
                        _ => {
                            errors.push(origin.error_at(
                                "kind",
                                format!(
                                    "a timeline step's kueue items are ClusterQueues, Cohorts, LocalQueues and ResourceFlavors; a {kind} created or changed over time is not simulated"
                                ),
                            ));
                            Ok(())
                        }
                    };
                    if let Err(mut e) = origin.check_all(checked) {
                        errors.append(&mut e);
                    }
                }
            }
            if !update.cluster_queues.is_empty()
                || !update.cohorts.is_empty()
                || !update.local_queues.is_empty()
                || !update.flavors.is_empty()
            {
                objects.updates.push(update);
            }
        }
    }
}
