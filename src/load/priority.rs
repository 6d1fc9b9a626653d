//! PriorityClasses and the API server's Priority admission
//! (`kubernetes/kubernetes:plugin/pkg/admission/priority/admission.go`): a pod's
//! `priorityClassName` becomes its `priority` (and default `preemptionPolicy`); a pod without
//! one gets the global default class, if any, else priority 0.

use std::collections::BTreeMap;

use k8s_openapi::api::scheduling::v1::PriorityClass;

use crate::model::Pod;

/// The classes every cluster has (`pkg/apis/scheduling/types.go`).
const SYSTEM_CLASSES: &[(&str, i32)] = &[
    ("system-cluster-critical", 2_000_000_000),
    ("system-node-critical", 2_000_001_000),
];

/// The PriorityClasses of a scenario.
#[derive(Debug, Clone, Default)]
pub struct PriorityClasses {
    classes: BTreeMap<String, PriorityClass>,
}

impl PriorityClasses {
    /// Adds a class; `Err` with the API server's message when the name is taken, or a second
    /// class claims to be the global default.
    pub fn insert(&mut self, class: PriorityClass) -> Result<(), String> {
        let name = class.metadata.name.clone().unwrap_or_default();
        if self.classes.contains_key(&name) || SYSTEM_CLASSES.iter().any(|(n, _)| *n == name) {
            return Err(format!(
                "priorityclasses.scheduling.k8s.io {name:?} already exists"
            ));
        }
        if class.global_default == Some(true)
            && let Some(other) = self.global_default()
        {
            return Err(format!(
                "globalDefault: Invalid value: true: PriorityClass {:?} is already marked as default. Only one default can exist",
                other.metadata.name.as_deref().unwrap_or("")
            ));
        }
        self.classes.insert(name, class);
        Ok(())
    }

    fn global_default(&self) -> Option<&PriorityClass> {
        self.classes
            .values()
            .find(|c| c.global_default == Some(true))
    }

    /// Admits a pod: sets its priority (and preemption policy) from its class. `Err` with the
    /// admission plugin's message.
    pub fn admit(&self, pod: &mut Pod) -> Result<(), String> {
        let (value, policy) = match &pod.priority_class {
            Some(name) => match SYSTEM_CLASSES.iter().find(|(n, _)| n == name) {
                Some((_, v)) => (*v, None),
                None => {
                    let class = self
                        .classes
                        .get(name)
                        .ok_or_else(|| format!("no PriorityClass with name {name} was found"))?;
                    (class.value.unwrap_or(0), class.preemption_policy.clone())
                }
            },
            // A priority written in a pod without a class is kept (a pod dumped from a cluster,
            // admitted long ago).
            None if pod.priority_given => return Ok(()),
            None => match self.global_default() {
                Some(class) => {
                    pod.priority_class = class.metadata.name.clone();
                    (class.value.unwrap_or(0), class.preemption_policy.clone())
                }
                None => return Ok(()),
            },
        };
        if pod.priority_given && pod.priority != value {
            return Err(format!(
                "the integer value of priority ({}) must not be provided in pod spec; priority admission controller computed {value} from the given PriorityClass name",
                pod.priority
            ));
        }
        pod.priority = value;
        if let Some(p) = policy
            && !pod.preemption_policy_given
        {
            pod.never_preempt = p == "Never";
        }
        Ok(())
    }
}
