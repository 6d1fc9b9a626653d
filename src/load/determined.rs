//! `{determined: …}` workload items: a Determined trial's pods, the experiment's pod spec over
//! the cluster's default pod spec (see `resolve::determined`).

use std::path::Path;
use std::rc::Rc;

use k8s_openapi::api::core::v1 as k8s;
use serde_json::Value;

use super::loaded::LoadedWorkload;
use super::origin::Origin;
use super::{Errors, Loader, scenario};
use crate::features::FeatureGates;
use crate::model::{Pod, objects};
use crate::resolve::determined;
use crate::sched::plan;
use crate::yaml::{Document, join_path};

/// The value of the chart's `determined-medium-priority` PriorityClass.
const DETERMINED_DEFAULT_PRIORITY: i32 = 50;

impl Loader<'_> {
    /// A Determined trial's pods: the experiment's pod spec over the cluster's default pod spec.
    pub(super) fn determined(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        path: &str,
        item: &Value,
        gates: &FeatureGates,
    ) -> Result<(LoadedWorkload, Origin), Errors> {
        let d: scenario::DeterminedItem = doc.decode(file, path, item).map_err(|e| vec![e])?;
        let d = d.determined;
        let single = |this: &mut Self, field: &str, value: &Value| -> Result<Origin, Errors> {
            let at = join_path(path, &format!("determined.{field}"));
            let mut origins = this.resolve_item(file, doc, &at, value)?;
            match origins.len() {
                1 => Ok(origins.remove(0)),
                n => Err(vec![doc.error(
                    file,
                    &at,
                    format!("expected one document, found {n}"),
                )]),
            }
        };
        let exp_origin = single(self, "experiment", &d.experiment)?;
        let exp =
            exp_origin.check_all(determined::ExperimentConfig::from_value(exp_origin.value()))?;
        let cluster_origin = match &d.cluster {
            Some(v) => Some(single(self, "cluster", v)?),
            None => None,
        };
        let defaults = match &cluster_origin {
            Some(o) => o.check_all(determined::ClusterDefaults::from_value(o.value()))?,
            None => determined::ClusterDefaults::default(),
        };
        let merge = match d.pod_spec_merge.as_deref() {
            None | Some("strategicMerge") => determined::PodSpecMerge::StrategicMerge,
            Some("replace") => determined::PodSpecMerge::Replace,
            Some(other) => {
                return Err(vec![doc.error(
                    file,
                    &join_path(path, "determined.podSpecMerge"),
                    format!("Unsupported value: {other:?}: supported values: \"strategicMerge\", \"replace\""),
                )]);
            }
        };
        // Errors in the experiment config point into it; errors in the Helm values into them.
        let trial = determined::trial_pods(&exp, &defaults, merge).map_err(|errs| {
            errs.into_iter()
                .map(|e| {
                    let helm = [
                        "taskContainerDefaults",
                        "maxSlotsPerPod",
                        "resourcePools",
                        "slotType",
                    ]
                    .iter()
                    .any(|k| e.path.starts_with(k));
                    let o = if helm {
                        cluster_origin.as_ref().unwrap_or(&exp_origin)
                    } else {
                        &exp_origin
                    };
                    o.doc
                        .error(&o.file, &join_path(&o.path, &e.path), e.message)
                })
                .collect::<Vec<_>>()
        })?;
        let pod: k8s::Pod = serde_json::from_value(trial.pod_spec.clone())
            .map_err(|e| vec![exp_origin.error(format!("Determined built an invalid pod: {e}"))])?;
        let mut template = exp_origin
            .check(|errs| objects::pod_from_k8s(&pod, "environment.pod_spec", gates, errs))?;
        // Determined installs its PriorityClasses itself (the chart's determined-medium-priority,
        // value 50, or the trial's own class): the pod carries the resolved value.
        if let Some(class) = template.priority_class.take() {
            template.priority = match &trial.priority_class {
                Some((name, value)) if *name == class => *value,
                _ => DETERMINED_DEFAULT_PRIORITY,
            };
            template.priority_given = true;
        }
        let pods: Vec<Pod> = (0..trial.pods)
            .map(|i| {
                let mut p = template.clone();
                p.name = format!("{}-{i}", d.name);
                p.workload = Some(d.name.clone());
                p
            })
            .collect();
        let steps = plan::in_order(pods.len());
        let origin = Origin::new(file, doc, path);
        let warnings = (trial.warnings.iter())
            .map(|m| format!("Determined trial ({}): {m}", origin.describe()))
            .collect();
        Ok((
            LoadedWorkload {
                warnings,
                ..LoadedWorkload::pods(pods, steps)
            },
            origin,
        ))
    }
}
