//! PodDisruptionBudgets from `spec.objects`: admitted as the API server admits them
//! (`sched::pdb::api`), each given, per pod it selects, the controller and scale the
//! disruption controller's finders would read (`getExpectedScale`); the run sums them over
//! the pods that exist at each step.

use std::collections::HashSet;

use k8s_openapi::api::policy::v1::PodDisruptionBudget;

use super::origin::Origin;
use super::{Errors, Loader};
use crate::model::Pod;
use crate::resolve::apps::Scales;
use crate::sched::pdb::{Budget, api};

impl Loader<'_> {
    /// The budgets, each admitted; a second budget of one name in a namespace is refused as
    /// the API server refuses it.
    pub(super) fn budgets(&mut self, origins: Vec<Origin>, errors: &mut Errors) -> Vec<Budget> {
        let mut out = Vec::new();
        let mut names = HashSet::new();
        let convert = |k: &PodDisruptionBudget, at: &str, errs: &mut Vec<_>| {
            api::budget(k, at).map_err(|e| errs.extend(e)).ok()
        };
        for origin in origins {
            match self.typed_items(vec![origin], "PodDisruptionBudget", convert) {
                Ok(list) => {
                    for (budget, at) in list {
                        let Some(budget) = budget else { continue };
                        if !names.insert((budget.namespace.clone(), budget.name.clone())) {
                            errors.push(at.error_at(
                                "metadata.name",
                                format!(
                                    "poddisruptionbudgets.policy {:?} already exists",
                                    budget.name
                                ),
                            ));
                        }
                        out.push(budget);
                    }
                }
                Err(mut e) => errors.append(&mut e),
            }
        }
        out
    }
}

/// Fills each budget's `pod_scales` (when a percentage or `maxUnavailable` asks for them): per
/// pod it selects, the controller the disruption controller's finders read and its scale; the
/// run sums those of the pods that exist at each moment. Says what the disruption controller
/// would report: pods without a controller (its `UnmanagedPods` event) and a controller no
/// finder knows (its sync fails, and `failSafe` allows no disruption while that pod exists).
pub(super) fn expected_scales<'p>(
    budgets: &mut [Budget],
    pods: impl Iterator<Item = &'p Pod> + Clone,
    scales: &Scales,
    warnings: &mut Vec<String>,
) {
    for b in budgets.iter_mut().filter(|b| b.uses_controller_scale()) {
        let mut unmanaged = Vec::new();
        let mut failed = None;
        let selected: Vec<&Pod> = pods.clone().filter(|p| b.selects(p)).collect();
        for pod in selected {
            let Some(controller) = pod.controller.as_deref() else {
                unmanaged.push(pod.name.clone());
                continue;
            };
            let scale = match scales.expected_scale(&pod.namespace, controller) {
                Some(s) => Ok((s.controller, s.replicas)),
                None => {
                    let e = format!("found no controllers for pod {:?}", pod.name);
                    failed.get_or_insert_with(|| e.clone());
                    Err(e)
                }
            };
            b.pod_scales.insert(pod.name.clone(), scale);
        }
        let who = format!("PodDisruptionBudget {}/{}", b.namespace, b.name);
        if !unmanaged.is_empty() && failed.is_none() {
            warnings.push(format!(
                "{who}: pods {} have no controller; the disruption controller leaves them out of its expected count (event UnmanagedPods): set an integer minAvailable to count them",
                unmanaged.join(", ")
            ));
        }
        if let Some(e) = failed {
            warnings.push(format!(
                "{who}: the disruption controller cannot compute the pods it expects ({e}), so it allows no disruption while that pod exists"
            ));
        }
    }
}
