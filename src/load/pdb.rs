//! PodDisruptionBudgets from `spec.objects`: admitted as the API server admits them
//! (`sched::pdb::api`), each given the expected scale the disruption controller's finders
//! would read for the pods it selects (`getExpectedScale`, over every pod of the scenario:
//! the controllers of a budget's pods do not change during a run).

use std::collections::{BTreeMap, HashSet};

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

/// Fills each budget's expected scale (when a percentage or `maxUnavailable` asks for it) from
/// the controllers of the pods it selects, and says what the disruption controller would
/// report: pods without a controller (its `UnmanagedPods` event) and a controller no finder
/// knows (its sync fails, and `failSafe` allows no disruption).
pub(super) fn expected_scales<'p>(
    budgets: &mut [Budget],
    pods: impl Iterator<Item = &'p Pod> + Clone,
    scales: &Scales,
    warnings: &mut Vec<String>,
) {
    for b in budgets.iter_mut().filter(|b| b.uses_controller_scale()) {
        let mut by_controller: BTreeMap<String, i32> = BTreeMap::new();
        let mut unmanaged = Vec::new();
        let mut failed = None;
        for pod in pods.clone().filter(|p| b.selects(p)) {
            let Some(controller) = pod.controller.as_deref() else {
                unmanaged.push(pod.name.clone());
                continue;
            };
            match scales.expected_scale(&pod.namespace, controller) {
                Some(s) => {
                    by_controller.insert(s.controller, s.replicas);
                }
                None => {
                    failed = Some(format!("found no controllers for pod {:?}", pod.name));
                    break;
                }
            }
        }
        let who = format!("PodDisruptionBudget {}/{}", b.namespace, b.name);
        if !unmanaged.is_empty() && failed.is_none() {
            warnings.push(format!(
                "{who}: pods {} have no controller; the disruption controller leaves them out of its expected count (event UnmanagedPods): set an integer minAvailable to count them",
                unmanaged.join(", ")
            ));
        }
        b.expected_scale = match failed {
            Some(e) => {
                warnings.push(format!(
                    "{who}: the disruption controller cannot compute the pods it expects ({e}), so it allows no disruption"
                ));
                Err(e)
            }
            None => Ok(by_controller.values().sum()),
        };
    }
}
