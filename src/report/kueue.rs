//! The Kueue part of a report: per workload what Kueue decided (flavors per pod set, the
//! condition message verbatim) next to what kube-scheduler then did with its pods, and per
//! ClusterQueue the quota used per flavor and resource. A workload admitted whose pods stay
//! pending is flagged: quota said yes, nodes said no.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::is_zero;
use crate::kueue::admission::Victim;
use crate::kueue::api::{QueueingStrategy, StopPolicy};
use crate::kueue::assigner::quantity_string;
use crate::load::kueue::KueueOutcome;

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
    /// `namespace/name` of the workload that needed the quota (none: a stopped queue's
    /// drain).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preemptor: Option<String>,
    /// The admission cycle (none: a drain, before the first cycle).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycle: Option<usize>,
    /// The timeline step (from 1) after which it happened; none at the start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub step: Option<usize>,
    /// The Preempted condition's reason (`InClusterQueue`, `InCohortReclamation`,
    /// `InCohortReclaimWhileBorrowing`), or for a drain the Evicted condition's
    /// (`ClusterQueueStopped`, `LocalQueueStopped`), and its message, verbatim.
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
    /// Waiting set aside unevaluated, as equivalent to a workload that did not fit
    /// (Kueue's SchedulingEquivalenceHashing): its message, if any, is from before.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub bypassed: bool,
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

/// What kube-scheduler did with one workload's pods: the report's side of it, and the pods
/// (`namespace/name`, in report order).
#[derive(Debug, Clone, Default)]
pub struct WorkloadPods {
    pub side: SchedulerSide,
    pub pods: Vec<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
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
    /// `Hold` or `HoldAndDrain` when the queue is stopped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop_policy: Option<&'static str>,
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
    /// `scheduled`: what kube-scheduler did with each workload's pods, by (namespace,
    /// workload) (`model::workload_pods`).
    pub fn new(
        k: &KueueOutcome,
        scheduled: &BTreeMap<(String, String), WorkloadPods>,
    ) -> KueueReport {
        let a = &k.admission;
        let key = |v: Victim| k.victim_key(v);
        let workloads: Vec<KueueWorkload> = (k.workloads.iter().zip(&a.decisions))
            .zip(&k.kinds)
            .map(|((w, d), kind)| {
                let (ns, name, sets) = (&w.namespace, &w.name, &w.pod_sets);
                let assigned = d.admitted.as_ref().map(|(_, a)| a);
                let pod_sets = (sets.iter().enumerate())
                    .map(|(i, ps)| {
                        let psa = assigned.and_then(|a| a.pod_sets.get(i));
                        KueuePodSet {
                            name: ps.name.to_string(),
                            count: ps.count,
                            flavors: (assigned.zip(psa)).map_or_else(BTreeMap::new, |(a, psa)| {
                                (a.flavors(psa))
                                    .map(|(r, f, _)| (r.to_string(), f.to_string()))
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
                    let key = (ns.clone(), name.clone());
                    (scheduled.get(&key)).map_or_else(SchedulerSide::default, |w| w.side.clone())
                });
                KueueWorkload {
                    kind: kind.to_string(),
                    name: name.clone(),
                    namespace: ns.clone(),
                    cluster_queue: d.cluster_queue.clone(),
                    admitted: assigned.is_some() && d.finished.is_none(),
                    reason: d.reason.to_string(),
                    message: d.message.to_string(),
                    bypassed: d.bypassed && assigned.is_none(),
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
                    stop_policy: (q.stop_policy != StopPolicy::None)
                        .then(|| q.stop_policy.as_str()),
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
            let still = !(a.evictions.iter()).any(|e| e.victim == Victim::Admitted(i))
                && !a.drained.iter().any(|d| d.victim == Victim::Admitted(i));
            let w = &k.admitted[i];
            HeldWorkload {
                name: w.name.clone(),
                namespace: w.namespace.clone(),
                cluster_queue: w.cluster_queue.clone(),
                priority: w.priority,
                admitted: still,
            }
        };
        // Who a victim is, and the pods it lost: a queued job's exist only when it was
        // admitted at an earlier step; an already-admitted one's are those the load removed.
        let victim = |v: Victim, step: Option<usize>, removed: Option<&Vec<String>>| {
            let (kind, cluster_queue) = match v {
                Victim::Queued(w) => (
                    k.kinds[w].to_string(),
                    a.decisions[w].cluster_queue.clone().unwrap_or_default(),
                ),
                Victim::Admitted(i) => {
                    ("Workload".to_string(), k.admitted[i].cluster_queue.clone())
                }
            };
            let pods = match v {
                Victim::Queued(w) if step.is_some() => {
                    let (ns, name) = (&k.workloads[w].namespace, &k.workloads[w].name);
                    let key = (ns.clone(), name.clone());
                    (scheduled.get(&key)).map_or_else(Vec::new, |w| w.pods.clone())
                }
                _ => removed.cloned().unwrap_or_default(),
            };
            (kind, cluster_queue, pods)
        };
        let evictions = (a.evictions.iter().enumerate())
            .map(|(i, e)| {
                let (victim_kind, victim_cluster_queue, pods) =
                    victim(e.victim, e.step, k.evicted_pods.get(&i));
                EvictionReport {
                    victim: key(e.victim),
                    victim_kind,
                    victim_cluster_queue,
                    preemptor: Some(key(Victim::Queued(e.by))),
                    cycle: Some(e.cycle),
                    step: e.step.map(|k| k + 1),
                    reason: e.reason.as_str().to_string(),
                    message: e.message.clone(),
                    pods,
                }
            })
            .chain(a.drained.iter().enumerate().map(|(i, d)| {
                let (victim_kind, victim_cluster_queue, pods) =
                    victim(d.victim, d.step, k.drained_pods.get(&i));
                EvictionReport {
                    victim: key(d.victim),
                    victim_kind,
                    victim_cluster_queue,
                    preemptor: None,
                    cycle: None,
                    step: d.step.map(|k| k + 1),
                    reason: d.reason.to_string(),
                    message: d.message.clone(),
                    pods,
                }
            }))
            .collect();
        KueueReport {
            workloads,
            cluster_queues,
            admitted_before: (0..k.admitted.len()).map(held).collect(),
            evictions,
        }
    }
}
