//! The admission cycle: per ClusterQueue a queue of pending workloads; each cycle takes every
//! queue's head, assigns flavors against a snapshot, and admits in Kueue's order while the
//! quota still fits. A port of kubernetes-sigs/kueue `pkg/scheduler/scheduler.go`
//! (`schedule`, `nominate`, `processEntry`, `makeClassicalIterator`, `requeueAndUpdate`,
//! `reserveCapacityForUnreclaimablePreempt`, `quotaResourcesToReserve`, `fits`),
//! `pkg/cache/queue/cluster_queue.go` (`RequeueIfNotPresent`: StrictFIFO puts a head back,
//! BestEffortFIFO parks it among the inadmissible workloads) and
//! `pkg/controller/core/workload_controller.go` (`getQueueBlocker`).
//!
//! All workloads are pending at the start. Admitting a workload does not requeue parked ones
//! (Kueue requeues them when a workload finishes or is deleted), so the cycles stop at a
//! fixed point: a cycle that admits nothing and parks nothing would repeat forever.
//!
//! Not (yet) simulated: preemption (no workload is a candidate victim: a head that needs
//! preemption waits, as Kueue's does when it finds no candidates), fair sharing, admission
//! checks, partial admission, topology-aware scheduling.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::api::{ClusterQueue, Cohort, FlavorResource, PreemptionPolicy, QueueingStrategy};
use super::api::{ResourceFlavor, ResourceQuota};
use super::assigner::{Assigner, Assignment, Mode, NoPreemption, PodSet};
use super::quota::{QueueId, QuotaTree};
use crate::features::FeatureGates;
use crate::sched::plugins::inter_pod_affinity::{NamespaceLabels, labels_of, selector_matches};

/// The Kueue objects of a scenario.
#[derive(Debug, Clone, Default)]
pub struct Objects {
    pub flavors: BTreeMap<String, ResourceFlavor>,
    pub cluster_queues: Vec<ClusterQueue>,
    pub cohorts: Vec<Cohort>,
    /// (namespace, LocalQueue name) → ClusterQueue name.
    pub local_queues: BTreeMap<(String, String), String>,
    /// WorkloadPriorityClass name → value.
    pub priority_classes: BTreeMap<String, i32>,
    /// Usage of workloads already admitted: (ClusterQueue, flavor-resource, amount), held
    /// from the start (they are in Kueue's cache, not in any queue).
    pub usage: Vec<(String, FlavorResource, i64)>,
}

impl Objects {
    /// Whether Kueue is part of the scenario at all (else the queue-name label is inert).
    pub fn is_empty(&self) -> bool {
        self.cluster_queues.is_empty() && self.local_queues.is_empty()
    }
}

/// A workload as Kueue queues it.
#[derive(Debug, Clone)]
pub struct Workload {
    pub namespace: String,
    pub name: String,
    /// The `kueue.x-k8s.io/queue-name` label: a LocalQueue of the namespace.
    pub queue_name: String,
    pub priority: i32,
    pub pod_sets: Vec<PodSet>,
    /// Why no Workload object exists (the job's integration could not create it): the
    /// event's message. Such a workload is never queued.
    pub blocked: Option<String>,
}

/// What Kueue decided for one workload.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The ClusterQueue its LocalQueue points at, if it has one.
    pub cluster_queue: Option<String>,
    /// The QuotaReserved condition's reason: `QuotaReserved`, `Pending` or `Inadmissible`
    /// (or the event reason when no Workload exists).
    pub reason: &'static str,
    /// The condition's message, verbatim.
    pub message: String,
    /// When admitted: the cycle (from 1) and the flavors per pod set.
    pub admitted: Option<(usize, Assignment)>,
    /// Where a workload not admitted waits when the cycles stop.
    pub waiting: Waiting,
}

/// Where a workload waits (`cluster_queue.go`: the heap, or the inadmissible workloads).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiting {
    /// Admitted, or never queued (no LocalQueue, no ClusterQueue, no Workload object).
    Nowhere,
    /// In its ClusterQueue's heap: it is tried again next cycle.
    Heap,
    /// Parked among the inadmissible workloads until quota is freed.
    Inadmissible,
}

/// One flavor-resource of a ClusterQueue after admission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuotaUsage {
    pub flavor: String,
    pub resource: String,
    pub quota: ResourceQuota,
    pub usage: i64,
}

/// A ClusterQueue after admission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueUsage {
    pub name: String,
    pub cohort: Option<String>,
    pub strategy: QueueingStrategy,
    pub resources: Vec<QuotaUsage>,
}

/// Every decision (indexed as the workloads), the admission order and the quota used.
#[derive(Debug, Clone, Default)]
pub struct Admission {
    pub decisions: Vec<Decision>,
    /// Admitted workloads, in the order Kueue admitted them.
    pub order: Vec<usize>,
    pub queues: Vec<QueueUsage>,
    pub warnings: Vec<String>,
}

/// Why a head went back to its queue (`RequeueReason`, for `RequeueIfNotPresent`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Requeue {
    NoFit,
    NoCandidates,
    NamespaceMismatch,
    Inactive,
    FailedAfterNomination,
}

/// The queue key of `baseCompareFunc`: higher priority first, then creation order.
type QueueKey = (std::cmp::Reverse<i32>, usize);

struct Entry {
    workload: usize,
    queue: usize,
    assignment: Option<Assignment>,
}

/// Runs Kueue's admission over `workloads` (in creation order) until nothing changes.
pub fn admit(
    objects: &Objects,
    workloads: &[Workload],
    namespaces: &NamespaceLabels,
    gates: &FeatureGates,
) -> Admission {
    admit_cycles(objects, workloads, namespaces, gates, usize::MAX)
}

/// [`admit`] for at most `max_cycles` scheduling cycles (Kueue's unit tests run one).
pub fn admit_cycles(
    objects: &Objects,
    workloads: &[Workload],
    namespaces: &NamespaceLabels,
    gates: &FeatureGates,
    max_cycles: usize,
) -> Admission {
    let queues = &objects.cluster_queues;
    let (mut tree, mut warnings) = QuotaTree::new(queues, &objects.cohorts);
    for (cq, fr, v) in &objects.usage {
        match tree.queue(cq) {
            Some(id) => tree.add_usage(id, fr, *v),
            None => warnings.push(format!("usage of unknown ClusterQueue {cq:?}")),
        }
    }
    let inactive: Vec<bool> = queues
        .iter()
        .map(|q| {
            let missing: BTreeSet<&String> = (q.resource_groups.iter())
                .flat_map(|g| &g.flavors)
                .filter(|f| !objects.flavors.contains_key(*f))
                .collect();
            if !missing.is_empty() {
                warnings.push(format!(
                    "ClusterQueue {:?} is inactive: ResourceFlavor {} not found",
                    q.name,
                    missing
                        .iter()
                        .map(|f| format!("{f:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            !missing.is_empty()
        })
        .collect();
    let ids: Vec<QueueId> = queues
        .iter()
        .map(|q| tree.queue(&q.name).unwrap())
        .collect();
    let by_name: BTreeMap<&str, usize> = queues
        .iter()
        .enumerate()
        .map(|(i, q)| (q.name.as_str(), i))
        .collect();

    let mut out = Admission {
        decisions: Vec::with_capacity(workloads.len()),
        ..Admission::default()
    };
    let mut heaps: Vec<BTreeSet<QueueKey>> = vec![BTreeSet::new(); queues.len()];
    let mut queue_of = vec![usize::MAX; workloads.len()];
    for (i, w) in workloads.iter().enumerate() {
        let lq = (w.namespace.clone(), w.queue_name.clone());
        let cq = objects.local_queues.get(&lq);
        let decision = |message: String| Decision {
            cluster_queue: cq.cloned(),
            reason: "Inadmissible",
            message,
            admitted: None,
            waiting: Waiting::Nowhere,
        };
        if let Some(why) = &w.blocked {
            out.decisions.push(Decision {
                reason: "WorkloadPriorityClassNotFound",
                ..decision(why.clone())
            });
            continue;
        }
        match cq.map(|cq| (cq, by_name.get(cq.as_str()))) {
            None => out.decisions.push(decision(format!(
                "LocalQueue {} doesn't exist",
                w.queue_name
            ))),
            Some((cq, None)) => out
                .decisions
                .push(decision(format!("ClusterQueue {cq} doesn't exist"))),
            Some((_, Some(&q))) => {
                queue_of[i] = q;
                heaps[q].insert((std::cmp::Reverse(w.priority), i));
                out.decisions.push(Decision {
                    reason: "Pending",
                    waiting: Waiting::Heap,
                    ..decision(String::new())
                });
            }
        }
    }

    let mut cycle = 0;
    while cycle < max_cycles {
        let heads: Vec<(usize, QueueKey)> = (heaps.iter_mut().enumerate())
            .filter_map(|(q, heap)| heap.pop_first().map(|k| (q, k)))
            .collect();
        if heads.is_empty() {
            break;
        }
        cycle += 1;
        // nominate: against the snapshot taken at the start of the cycle.
        let mut snapshot = tree.clone();
        let mut entries = Vec::new();
        let mut requeue: Vec<(usize, QueueKey, Requeue)> = Vec::new();
        for &(q, key) in &heads {
            let w = &workloads[key.1];
            let queue = &queues[q];
            if inactive[q] {
                out.decisions[key.1].message = format!("ClusterQueue {} is inactive", queue.name);
                requeue.push((q, key, Requeue::Inactive));
            } else if !namespace_admitted(queue.namespace_selector.as_ref(), namespaces, w) {
                out.decisions[key.1].message =
                    "workload namespace doesn't match ClusterQueue selector".into();
                requeue.push((q, key, Requeue::NamespaceMismatch));
            } else {
                let assigner = Assigner {
                    queue,
                    id: ids[q],
                    tree: &snapshot,
                    flavors: &objects.flavors,
                    oracle: &NoPreemption,
                    gates,
                };
                let assignment = assigner.assign(&w.pod_sets);
                out.decisions[key.1].message = assignment.message();
                entries.push((
                    key,
                    Entry {
                        workload: key.1,
                        queue: q,
                        assignment: Some(assignment),
                    },
                ));
            }
        }
        // makeClassicalIterator: not borrowing first, then priority, then creation order.
        entries.sort_by_key(|(key, e)| {
            let borrows = e.assignment.as_ref().map_or(0, |a| a.borrowing);
            (borrows, key.0, key.1)
        });
        let mut admitted = 0;
        for (key, mut e) in entries {
            let (q, id) = (e.queue, ids[e.queue]);
            let assignment = e.assignment.take().unwrap_or_default();
            match assignment.mode() {
                Mode::NoFit => requeue.push((q, key, Requeue::NoFit)),
                Mode::Preempt => {
                    if queues[q].preemption.reclaim_within_cohort != PreemptionPolicy::Any {
                        for (fr, v) in reserve(&assignment, &queues[q], &snapshot, id) {
                            snapshot.add_usage(id, &fr, v);
                        }
                    }
                    requeue.push((q, key, Requeue::NoCandidates));
                }
                Mode::Fit if !fits(&snapshot, id, &assignment) => {
                    out.decisions[e.workload].message =
                        "Workload no longer fits after processing another workload".into();
                    requeue.push((q, key, Requeue::FailedAfterNomination));
                }
                Mode::Fit => {
                    for (fr, &v) in &assignment.usage {
                        snapshot.add_usage(id, fr, v);
                        tree.add_usage(id, fr, v);
                    }
                    let d = &mut out.decisions[e.workload];
                    d.reason = "QuotaReserved";
                    d.message = format!("Quota reserved in ClusterQueue {}", queues[q].name);
                    d.admitted = Some((cycle, assignment));
                    d.waiting = Waiting::Nowhere;
                    out.order.push(e.workload);
                    admitted += 1;
                }
            }
        }
        let mut parked = 0;
        for (q, key, why) in requeue {
            let immediate = match queues[q].queueing_strategy {
                QueueingStrategy::StrictFIFO => why != Requeue::NamespaceMismatch,
                QueueingStrategy::BestEffortFIFO => why == Requeue::FailedAfterNomination,
            };
            if immediate {
                heaps[q].insert(key);
            } else {
                out.decisions[key.1].waiting = Waiting::Inadmissible;
                parked += 1;
            }
        }
        if admitted == 0 && parked == 0 {
            break; // every head would come back to the same answer
        }
    }
    out.queues = (queues.iter().zip(&ids))
        .map(|(q, &id)| QueueUsage {
            name: q.name.clone(),
            cohort: q.cohort.clone(),
            strategy: q.queueing_strategy,
            resources: (q.resource_groups.iter())
                .flat_map(|g| {
                    g.flavors
                        .iter()
                        .flat_map(move |f| g.covered_resources.iter().map(move |r| (f, r)))
                })
                .map(|(f, r)| {
                    let fr = (f.clone(), r.clone());
                    QuotaUsage {
                        flavor: f.clone(),
                        resource: r.clone(),
                        quota: tree.quota(id, &fr),
                        usage: tree.usage(id, &fr),
                    }
                })
                .collect(),
        })
        .collect();
    out.warnings = warnings;
    out
}

/// `ValidateAdmissibility`'s namespace check: a ClusterQueue without a selector admits no
/// namespace (`LabelSelectorAsSelector(nil)` is `Nothing`); `{}` admits every namespace.
fn namespace_admitted(
    selector: Option<&LabelSelector>,
    namespaces: &NamespaceLabels,
    w: &Workload,
) -> bool {
    selector.is_some_and(|s| selector_matches(s, &labels_of(namespaces, &w.namespace)))
}

/// `ClusterQueueSnapshot.Fits`: every flavor-resource of the usage still available.
fn fits(tree: &QuotaTree, id: QueueId, assignment: &Assignment) -> bool {
    (assignment.usage.iter()).all(|(fr, &v)| tree.available(id, fr) >= v)
}

/// `quotaResourcesToReserve`: what a head that needs preemption but found no candidates holds
/// for the rest of the cycle, so that lower entries of the cohort cannot take it.
fn reserve(
    a: &Assignment,
    queue: &ClusterQueue,
    tree: &QuotaTree,
    id: QueueId,
) -> Vec<(FlavorResource, i64)> {
    (a.usage.iter())
        .map(|(fr, &usage)| {
            let quota = queue.quotas.get(fr).copied().unwrap_or_default();
            let used = tree.usage(id, fr);
            let v = if a.borrowing > 0 {
                match quota.borrowing_limit {
                    None => usage,
                    Some(limit) => {
                        usage.min(quota.nominal.saturating_add(limit).saturating_sub(used))
                    }
                }
            } else {
                usage.min(quota.nominal.saturating_sub(used)).max(0)
            };
            (fr.clone(), v)
        })
        .collect()
}
