//! The Kueue part of a report: per workload what Kueue decided (flavors per pod set, the
//! condition message verbatim) next to what kube-scheduler then did with its pods, and per
//! ClusterQueue the quota used per flavor and resource. A workload admitted whose pods stay
//! pending is flagged: quota said yes, nodes said no.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use tabled::Tabled;

use super::model::{PodReport, is_zero};
use super::table::wrap;
use crate::kueue::admission::Victim;
use crate::kueue::api::QueueingStrategy;
use crate::kueue::assigner::quantity_string;
use crate::load::kueue::KueueOutcome;
use crate::sched::PodPhase;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KueueReport {
    pub workloads: Vec<KueueWorkload>,
    pub cluster_queues: Vec<ClusterQueueReport>,
    /// Workloads admitted before the simulation (Workload objects with a quota reservation).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub admitted_before: Vec<HeldWorkload>,
    /// Preemptions Kueue issued, in order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub evictions: Vec<EvictionReport>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HeldWorkload {
    pub name: String,
    pub namespace: String,
    pub cluster_queue: String,
    pub priority: i32,
    /// Still holding its quota when admission settled.
    pub admitted: bool,
}

/// One preemption: the victim's Evicted/Preempted conditions and who caused them.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvictionReport {
    /// `namespace/name` of the workload that lost its quota.
    pub victim: String,
    /// `TrainJob`, `Pod`, or `Workload` for one admitted before the simulation.
    pub victim_kind: String,
    pub victim_cluster_queue: String,
    /// `namespace/name` of the workload that needed the quota.
    pub preemptor: String,
    pub cycle: usize,
    /// The timeline step (from 1) after which it happened; none at the start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    /// The Preempted condition's reason (`InClusterQueue`, `InCohortReclamation`,
    /// `InCohortReclaimWhileBorrowing`) and message, verbatim.
    pub reason: String,
    pub message: String,
    /// Existing pods of the victim's job that the eviction deleted.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pods: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KueueWorkload {
    pub kind: String,
    pub name: String,
    pub namespace: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster_queue: Option<String>,
    pub admitted: bool,
    /// The QuotaReserved condition's reason and message, verbatim.
    pub reason: String,
    pub message: String,
    /// The admission cycle that admitted it (from 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycle: Option<usize>,
    /// How far up the cohort tree it borrows (0: within its ClusterQueue's nominal quota).
    #[serde(skip_serializing_if = "is_zero")]
    pub borrowing: usize,
    pub pod_sets: Vec<KueuePodSet>,
    /// The timeline step (from 1) in which it finished and released its quota.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub finished_in_step: Option<usize>,
    /// The workloads it preempted (`namespace/name`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub preempted: Vec<String>,
    /// Its last eviction by preemption, if it had one: the Preempted condition's message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evicted: Option<String>,
    /// Its pods in kube-scheduler, when admitted: how many were scheduled and, for pending
    /// ones, the first message.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scheduler: Option<SchedulerSide>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KueuePodSet {
    pub name: String,
    pub count: i64,
    /// Resource → flavor (admitted workloads only).
    pub flavors: BTreeMap<String, String>,
    /// Total requests of the pod set, in Kueue's quantity format.
    pub requests: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SchedulerSide {
    pub pods: usize,
    pub scheduled: usize,
    /// Admitted by Kueue, yet some pods found no node.
    pub admitted_but_unschedulable: bool,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClusterQueueReport {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cohort: Option<String>,
    pub queueing_strategy: &'static str,
    pub admitted: usize,
    pub pending: usize,
    pub resources: Vec<QuotaReport>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaReport {
    pub flavor: String,
    pub resource: String,
    pub nominal: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub borrowing_limit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lending_limit: Option<String>,
    pub usage: String,
    /// Usage past the nominal quota, taken from the cohort.
    pub borrowed: String,
}

impl KueueReport {
    pub fn new(k: &KueueOutcome, pods: &[PodReport]) -> KueueReport {
        let a = &k.admission;
        // A TrainJob's pods carry its name as their workload; a plain pod is its own.
        let mut per_workload: BTreeMap<(&str, &str), Vec<&PodReport>> = BTreeMap::new();
        for p in pods {
            let w = p.workload.as_deref().unwrap_or(&p.name);
            per_workload.entry((&p.namespace, w)).or_default().push(p);
        }
        let key = |v: Victim| match v {
            Victim::Queued(w) => format!("{}/{}", k.workloads[w].namespace, k.workloads[w].name),
            Victim::Admitted(i) => format!("{}/{}", k.admitted[i].namespace, k.admitted[i].name),
        };
        let workloads: Vec<KueueWorkload> = (k.workloads.iter().zip(&a.decisions))
            .zip(&k.kinds)
            .map(|((w, d), kind)| {
                let (ns, name, sets) = (&w.namespace, &w.name, &w.pod_sets);
                let assigned = d.admitted.as_ref().map(|(_, a)| a);
                let pod_sets = (sets.iter().enumerate())
                    .map(|(i, ps)| {
                        let psa = assigned.and_then(|a| a.pod_sets.get(i));
                        KueuePodSet {
                            name: ps.name.clone(),
                            count: ps.count,
                            flavors: psa.map_or_else(BTreeMap::new, |psa| {
                                (psa.flavors.iter())
                                    .map(|(r, c)| (r.clone(), c.flavor.clone()))
                                    .collect()
                            }),
                            requests: (ps.requests.iter())
                                .filter(|(_, v)| **v != 0)
                                .map(|(r, v)| (r.clone(), quantity_string(r, v * ps.count)))
                                .collect(),
                        }
                    })
                    .collect();
                let scheduler = assigned.map(|_| {
                    let key_pods = per_workload.get(&(ns.as_str(), name.as_str()));
                    let list = key_pods.map_or(&[][..], Vec::as_slice);
                    let scheduled = (list.iter())
                        .filter(|p| matches!(p.status, PodPhase::Scheduled | PodPhase::Succeeded))
                        .count();
                    let pending = list
                        .iter()
                        .find(|p| !matches!(p.status, PodPhase::Scheduled | PodPhase::Succeeded));
                    SchedulerSide {
                        pods: list.len(),
                        scheduled,
                        admitted_but_unschedulable: pending.is_some(),
                        message: pending.map(|p| p.message.clone()).unwrap_or_default(),
                    }
                });
                KueueWorkload {
                    kind: kind.to_string(),
                    name: name.clone(),
                    namespace: ns.clone(),
                    cluster_queue: d.cluster_queue.clone(),
                    admitted: assigned.is_some() && d.finished.is_none(),
                    reason: d.reason.to_string(),
                    message: d.message.clone(),
                    cycle: d.admitted.as_ref().map(|(c, _)| *c),
                    borrowing: assigned.map_or(0, |a| a.borrowing),
                    pod_sets,
                    finished_in_step: d.finished.map(|k| k + 1),
                    preempted: (d.preempted.iter())
                        .map(|&e| key(a.evictions[e].victim))
                        .collect(),
                    evicted: d.evicted.map(|e| a.evictions[e].message.clone()),
                    scheduler,
                }
            })
            .collect();
        // Per ClusterQueue, its workloads admitted and pending.
        let mut counts: HashMap<&str, [usize; 2]> = HashMap::new();
        for w in &workloads {
            if let Some(cq) = &w.cluster_queue {
                counts.entry(cq).or_default()[usize::from(w.admitted)] += 1;
            }
        }
        let cluster_queues = (a.queues.iter())
            .map(|q| {
                let mine = |admitted: bool| {
                    counts
                        .get(q.name.as_str())
                        .map_or(0, |c| c[usize::from(admitted)])
                };
                ClusterQueueReport {
                    name: q.name.clone(),
                    cohort: q.cohort.clone(),
                    queueing_strategy: match q.strategy {
                        QueueingStrategy::StrictFIFO => "StrictFIFO",
                        QueueingStrategy::BestEffortFIFO => "BestEffortFIFO",
                    },
                    admitted: mine(true),
                    pending: mine(false),
                    resources: (q.resources.iter())
                        .map(|u| {
                            let r = &u.resource;
                            let fmt = |v: i64| quantity_string(r, v);
                            QuotaReport {
                                flavor: u.flavor.clone(),
                                resource: r.clone(),
                                nominal: fmt(u.quota.nominal),
                                borrowing_limit: u.quota.borrowing_limit.map(fmt),
                                lending_limit: u.quota.lending_limit.map(fmt),
                                usage: fmt(u.usage),
                                borrowed: fmt((u.usage - u.quota.nominal).max(0)),
                            }
                        })
                        .collect(),
                }
            })
            .collect();
        let held = |i: usize| {
            let still = !(a.evictions.iter()).any(|e| e.victim == Victim::Admitted(i));
            let w = &k.admitted[i];
            HeldWorkload {
                name: w.name.clone(),
                namespace: w.namespace.clone(),
                cluster_queue: w.cluster_queue.clone(),
                priority: w.priority,
                admitted: still,
            }
        };
        let evictions = (a.evictions.iter().enumerate())
            .map(|(i, e)| EvictionReport {
                victim: key(e.victim),
                victim_kind: match e.victim {
                    Victim::Queued(w) => k.kinds[w].to_string(),
                    Victim::Admitted(_) => "Workload".to_string(),
                },
                victim_cluster_queue: match e.victim {
                    Victim::Queued(w) => a.decisions[w].cluster_queue.clone().unwrap_or_default(),
                    Victim::Admitted(i) => k.admitted[i].cluster_queue.clone(),
                },
                preemptor: key(Victim::Queued(e.by)),
                cycle: e.cycle,
                step: e.step.map(|k| k + 1),
                reason: e.reason.as_str().to_string(),
                message: e.message.clone(),
                pods: match e.victim {
                    // A queued job's pods exist only when it was admitted at an earlier step.
                    Victim::Queued(w) if e.step.is_some() => {
                        let (ns, name) = (&k.workloads[w].namespace, &k.workloads[w].name);
                        (per_workload
                            .get(&(ns.as_str(), name.as_str()))
                            .into_iter()
                            .flatten())
                        .map(|p| format!("{}/{}", p.namespace, p.name))
                        .collect()
                    }
                    _ => k.evicted_pods.get(&i).cloned().unwrap_or_default(),
                },
            })
            .collect();
        KueueReport {
            workloads,
            cluster_queues,
            admitted_before: (0..k.admitted.len()).map(held).collect(),
            evictions,
        }
    }
}

#[derive(Tabled)]
pub(super) struct WorkloadRow {
    #[tabled(rename = "Kueue workload")]
    workload: String,
    #[tabled(rename = "ClusterQueue")]
    queue: String,
    #[tabled(rename = "Kueue")]
    kueue: String,
    #[tabled(rename = "Flavors")]
    flavors: String,
    #[tabled(rename = "kube-scheduler")]
    scheduler: String,
}

#[derive(Tabled)]
pub(super) struct QuotaRow {
    #[tabled(rename = "ClusterQueue")]
    queue: String,
    #[tabled(rename = "Flavor")]
    flavor: String,
    #[tabled(rename = "Resource")]
    resource: String,
    #[tabled(rename = "Usage / nominal")]
    usage: String,
    #[tabled(rename = "Borrowed")]
    borrowed: String,
}

pub(super) fn workload_rows(k: &KueueReport) -> Vec<WorkloadRow> {
    (k.workloads.iter())
        .map(|w| WorkloadRow {
            workload: format!("{} {}/{}", w.kind, w.namespace, w.name),
            queue: w.cluster_queue.clone().unwrap_or_else(|| "-".into()),
            kueue: match (w.admitted, w.message.as_str()) {
                (false, _) if let Some(step) = w.finished_in_step => {
                    format!("finished in timeline step {step}")
                }
                (true, _) if !w.preempted.is_empty() => wrap(
                    &format!("admitted after preempting {}", w.preempted.join(", ")),
                    60,
                ),
                (true, _) => "admitted".to_string(),
                // A pod's workload that ended with its eviction.
                (false, m) if w.reason == "Preempted" => {
                    wrap(&format!("preempted, pod deleted: {m}"), 60)
                }
                // Never nominated: a StrictFIFO head that cannot be admitted blocks the rest.
                (false, "") => "pending: never reached the head of its ClusterQueue".to_string(),
                (false, m) => wrap(&format!("pending: {m}"), 60),
            },
            flavors: (w.pod_sets.iter())
                .filter(|ps| !ps.flavors.is_empty())
                .map(|ps| {
                    let mut flavors: Vec<&String> = ps.flavors.values().collect();
                    flavors.dedup();
                    let names: Vec<&str> = flavors.iter().map(|s| s.as_str()).collect();
                    format!("{}: {}", ps.name, names.join(", "))
                })
                .collect::<Vec<_>>()
                .join("\n"),
            scheduler: match &w.scheduler {
                None => "-".into(),
                Some(s) if !s.admitted_but_unschedulable => {
                    format!("{}/{} scheduled", s.scheduled, s.pods)
                }
                Some(s) => wrap(
                    &format!(
                        "ADMITTED BUT UNSCHEDULABLE: {}/{} scheduled; {}",
                        s.scheduled, s.pods, s.message
                    ),
                    60,
                ),
            },
        })
        .collect()
}

#[derive(Tabled)]
pub(super) struct EvictionRow {
    #[tabled(rename = "Preempted by Kueue")]
    victim: String,
    #[tabled(rename = "For")]
    preemptor: String,
    #[tabled(rename = "When")]
    when: String,
    #[tabled(rename = "Reason")]
    reason: String,
    #[tabled(rename = "Pods deleted")]
    pods: String,
}

pub(super) fn eviction_rows(k: &KueueReport) -> Vec<EvictionRow> {
    (k.evictions.iter())
        .map(|e| EvictionRow {
            victim: format!(
                "{} {} ({})",
                e.victim_kind, e.victim, e.victim_cluster_queue
            ),
            preemptor: e.preemptor.clone(),
            when: match e.step {
                Some(step) => format!("step {step}, cycle {}", e.cycle),
                None => format!("start, cycle {}", e.cycle),
            },
            reason: e.reason.clone(),
            pods: if e.pods.is_empty() {
                "-".into()
            } else {
                wrap(&e.pods.join(", "), 40)
            },
        })
        .collect()
}

pub(super) fn quota_rows(k: &KueueReport) -> Vec<QuotaRow> {
    (k.cluster_queues.iter())
        .flat_map(|q| {
            q.resources.iter().map(move |r| QuotaRow {
                queue: q.name.clone(),
                flavor: r.flavor.clone(),
                resource: r.resource.clone(),
                usage: format!("{} / {}", r.usage, r.nominal),
                borrowed: r.borrowed.clone(),
            })
        })
        .collect()
}
