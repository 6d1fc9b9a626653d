//! Kueue's part of an explanation: the flavor each resource of the pod's workload got (or,
//! pending, the last nomination's), in which mode, and why the flavors before it were not
//! taken — Kueue's own reasons, verbatim (`flavorassigner.go`).

use std::fmt::Write;

use serde::Serialize;

use crate::kueue::assigner::{Assignment, Mode, PodSetAssignment};
use crate::load::kueue::KueueOutcome;
use crate::model::Pod;

/// The Kueue workload of an explained pod.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KueueExplanation {
    /// `namespace/name` of the workload.
    pub workload: String,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_queue: Option<String>,
    pub admitted: bool,
    /// The QuotaReserved condition's reason and message, verbatim.
    pub reason: String,
    #[serde(default)]
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// How far up the cohort tree the assignment borrows (0: within nominal quota).
    pub borrowing: usize,
    /// Per pod set, the flavor of each resource: the admission's, or for a workload not
    /// admitted, its last nomination's (empty when Kueue never assigned it).
    pub pod_sets: Vec<PodSetFlavors>,
    /// The workloads Kueue preempted to admit it, with the Preempted condition's reason.
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub preempted: Vec<KueueVictim>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct KueueVictim {
    /// `namespace/name`.
    pub workload: String,
    /// `InClusterQueue`, `InCohortReclamation`, `InCohortReclaimWhileBorrowing`, ….
    pub reason: String,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodSetFlavors {
    pub name: String,
    pub count: i64,
    pub flavors: Vec<ResourceFlavor>,
    /// Why flavors were not taken: for an admitted workload, the flavors tried before the
    /// one that fits; for one not admitted, the reasons of its condition message.
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_taken: Vec<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ResourceFlavor {
    pub resource: String,
    pub flavor: String,
    /// `FlavorAssignmentMode`: `Fit`, `Preempt` (fits once others are preempted) or `NoFit`.
    pub mode: &'static str,
    /// How far up the cohort tree this resource's quota comes from.
    pub borrowing: usize,
}

/// The explanation of `pod`'s Kueue workload, when it is queued in Kueue. A TrainJob's pods
/// carry its name as their workload; a plain pod is its own.
pub fn explain(k: &KueueOutcome, pod: &Pod) -> Option<KueueExplanation> {
    let name = pod.workload.as_deref().unwrap_or(&pod.name);
    let at = (k.workloads.iter()).position(|w| w.namespace == pod.namespace && w.name == name)?;
    let d = &k.admission.decisions[at];
    let admitted = d.admitted.as_ref().map(|(_, a)| a);
    let assignment = admitted.or_else(|| d.message.assignment());
    let pod_sets = assignment.map_or_else(Vec::new, |a| {
        (a.pod_sets.iter())
            .map(|ps| pod_set(a, ps, admitted.is_some()))
            .collect()
    });
    Some(KueueExplanation {
        workload: format!("{}/{name}", pod.namespace),
        cluster_queue: d.cluster_queue.clone(),
        admitted: admitted.is_some() && d.finished.is_none(),
        reason: d.reason.to_string(),
        message: d.message.to_string(),
        borrowing: assignment.map_or(0, |a| a.borrowing),
        pod_sets,
        preempted: (d.preempted.iter())
            .map(|&e| {
                let eviction = &k.admission.evictions[e];
                KueueVictim {
                    workload: k.victim_key(eviction.victim),
                    reason: eviction.reason.as_str().to_string(),
                }
            })
            .collect(),
    })
}

fn pod_set(a: &Assignment, ps: &PodSetAssignment, admitted: bool) -> PodSetFlavors {
    PodSetFlavors {
        name: ps.name.to_string(),
        count: ps.count,
        flavors: (a.flavors(ps))
            .map(|(resource, flavor, choice)| ResourceFlavor {
                resource: resource.to_string(),
                flavor: flavor.to_string(),
                mode: mode_name(choice.mode),
                borrowing: choice.borrow,
            })
            .collect(),
        not_taken: match admitted {
            true => a.passed_over(ps),
            false => a.reasons(ps),
        },
    }
}

/// `FlavorAssignmentMode`'s names.
fn mode_name(m: Mode) -> &'static str {
    match m {
        Mode::Fit => "Fit",
        Mode::Preempt => "Preempt",
        Mode::NoFit => "NoFit",
    }
}

/// The workload's lines in the text report.
pub fn render(out: &mut String, k: &KueueExplanation) {
    let state = match k.admitted {
        true => "admitted".to_string(),
        false => format!("not admitted ({})", k.reason),
    };
    let queue = k.cluster_queue.as_deref().unwrap_or("no ClusterQueue");
    let _ = writeln!(out, "  Kueue: workload {} in {queue}, {state}", k.workload);
    // The message words the pod sets' reasons, listed below when Kueue kept them.
    let reasons_listed = k.pod_sets.iter().any(|ps| !ps.not_taken.is_empty());
    if !k.admitted && !k.message.is_empty() && !reasons_listed {
        let _ = writeln!(out, "    {}", k.message);
    }
    for v in &k.preempted {
        let _ = writeln!(out, "    preempted {} ({})", v.workload, v.reason);
    }
    for ps in &k.pod_sets {
        let flavors: Vec<String> = (ps.flavors.iter())
            .map(|f| {
                let borrow = match f.borrowing {
                    0 => String::new(),
                    b => format!(", borrowing {b} level(s) up"),
                };
                format!("{} → {} ({}{borrow})", f.resource, f.flavor, f.mode)
            })
            .collect();
        let _ = writeln!(
            out,
            "    pod set {} ×{}: {}",
            ps.name,
            ps.count,
            match flavors.is_empty() {
                true => "no flavor".to_string(),
                false => flavors.join(", "),
            }
        );
        for why in &ps.not_taken {
            let _ = writeln!(out, "      not taken: {why}");
        }
    }
}
