//! Kueue in the load: its objects (`kueue_objects`), the workloads that opt in with
//! the `kueue.x-k8s.io/queue-name` label, their admission before any pod exists, and the
//! flavors' node labels and tolerations injected the way Kueue's integrations inject them:
//!
//! - TrainJob (kubernetes-sigs/kueue `pkg/controller/jobs/trainjob/`): one pod set per
//!   replicated job; the webhook appends a `runtimePatches` entry of manager
//!   `kueue.x-k8s.io/manager` (`trainjob_webhook.go` `Default`) and admission fills it with a
//!   `replicatedJobs` patch per pod set (`RunWithPodSetsInfo`). A TrainJob not admitted stays
//!   suspended: no JobSet, no pods.
//! - Pod (`pkg/controller/jobs/pod/`): one pod set `main`; the webhook gates the pod with
//!   `kueue.x-k8s.io/admission`, admission merges the pod set info into it and lifts the gate
//!   (`podset.Merge`). A pod not admitted stays gated: kube-scheduler reports it
//!   `SchedulingGated`.
//!
//! The pod set info is `podset.FromAssignment` plus the labels `getPodSetsInfoFromStatus`
//! adds (`kueue.x-k8s.io/podset`, and with AssignQueueLabelsForPods, on by default, the queue
//! names). The TAS annotation `kueue.x-k8s.io/workload` names the Workload object, whose name
//! carries a hash of the owner's UID; it changes no placement and is left out.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::loaded::{Baseline, LoadedWorkload, ResolveContext};
use super::origin::Origin;
use super::scenario::TimelineStep;
use super::{Errors, Loader};
use crate::kueue::admission::{self, Admission, Victim};
use crate::kueue::assigner::PodSet;
use crate::kueue::pod_set_info::{PodSetInfo, merge_into_pod, pod_set, pod_set_infos};
use crate::model::Pod;
use crate::resolve::job::JOB_NAME_LABELS;
use crate::resolve::jobset::{JOBSET_NAME_LABEL, REPLICATED_JOB_LABEL};
use crate::resolve::trainjob::{RuntimePatch, TrainJob};
use crate::sched::plan::{Event, PodSelector};

pub const QUEUE_NAME_LABEL: &str = "kueue.x-k8s.io/queue-name";
/// `constants.WorkloadPriorityClassLabel`.
pub const PRIORITY_CLASS_LABEL: &str = "kueue.x-k8s.io/priority-class";
/// `runtimePatchManagerName` of the TrainJob integration.
pub const MANAGER: &str = "kueue.x-k8s.io/manager";
pub use crate::kueue::pod_set_info::ADMISSION_GATE;
/// The pod set of a plain pod (`kueue.DefaultPodSetName`).
pub const POD_SET_MAIN: &str = "main";

/// A workload held back for Kueue: what it resolved to without admission, and as Kueue
/// queues it.
pub(super) struct Queued {
    /// The timeline step it arrives at (`None`: present at the start).
    pub step: Option<usize>,
    /// `TrainJob`, `Job` (batch/v1) or `Pod`: how Kueue's integration for it works.
    pub kind: &'static str,
    pub origin: Origin,
    pub loaded: LoadedWorkload,
    /// The TrainJob as decoded, to resolve again with Kueue's runtime patch (boxed: ten
    /// thousand queued workloads are moved around by value).
    pub job: Option<Box<TrainJob>>,
    pub workload: admission::Workload,
}

/// A workload a replay's Kueue admits over time: its pods are among the scenario's workloads
/// as they are before admission (a TrainJob resolved without Kueue's patch), held back until
/// the replay admits it.
#[derive(Debug, Clone)]
pub struct KueueJob {
    /// `namespace/name` of its pods.
    pub pods: Vec<String>,
    pub workload: admission::Workload,
    /// Its `metadata.creationTimestamp` is written: the Workload keeps it (else its creation
    /// is its arrival in the replay).
    pub created_written: bool,
    /// A TrainJob: admitted, it is resolved again with Kueue's runtime patch.
    pub train_job: Option<Box<TrainJob>>,
}

/// A workload item loaded: what it became and where it came from.
pub(super) type Loaded = Result<(LoadedWorkload, Origin), Errors>;

/// The Kueue part of a loaded scenario: the workloads it queued and what it decided.
#[derive(Debug, Clone, Default)]
pub struct KueueOutcome {
    /// The kind of each queued workload (`TrainJob`, `Pod`).
    pub kinds: Vec<&'static str>,
    /// The queued workloads, as `admission.decisions`.
    pub workloads: Vec<admission::Workload>,
    /// The workloads admitted before the simulation (`Victim::Admitted` indexes them).
    pub admitted: Vec<admission::Admitted>,
    pub admission: Admission,
    /// Per eviction of an already-admitted workload, the existing pods its job lost.
    pub evicted_pods: BTreeMap<usize, Vec<String>>,
    /// Per drain by a stopped queue (`Admission::drained`), the existing pods its job lost.
    pub drained_pods: BTreeMap<usize, Vec<String>>,
}

impl KueueOutcome {
    /// `namespace/name` of a workload that lost its quota.
    pub fn victim_key(&self, v: admission::Victim) -> String {
        match v {
            admission::Victim::Queued(w) => {
                format!("{}/{}", self.workloads[w].namespace, self.workloads[w].name)
            }
            admission::Victim::Admitted(i) => {
                format!("{}/{}", self.admitted[i].namespace, self.admitted[i].name)
            }
        }
    }
}

/// The `kueue.x-k8s.io/queue-name` label of an object.
pub(super) fn queue_name(value: &Value) -> Option<&str> {
    value["metadata"]["labels"][QUEUE_NAME_LABEL]
        .as_str()
        .filter(|q| !q.is_empty())
}

/// How Kueue queues a loaded workload, when it names a queue: the kind of integration, the
/// Workload, and a TrainJob as decoded (to resolve again with Kueue's runtime patch).
/// `decoded`: the caller holds the TrainJob already, so it is not decoded again.
pub(super) fn workload_of(
    origin: &Origin,
    pods: &[Pod],
    decoded: bool,
    cx: &ResolveContext,
) -> Option<(&'static str, admission::Workload, Option<TrainJob>)> {
    let value = origin.value();
    let queue_name = queue_name(value)?.to_string();
    let kind = match origin.kind() {
        // Kueue's integrations for the apps kinds are not simulated (a warning says so).
        Some(k) if crate::resolve::apps::KINDS.contains(&k) => return None,
        Some("TrainJob") => "TrainJob",
        Some("Job") => "Job",
        Some("JobSet") => "JobSet",
        _ => "Pod",
    };
    let is_job = kind == "TrainJob";
    let namespace = value["metadata"]["namespace"]
        .as_str()
        .unwrap_or("default")
        .to_string();
    let name = value["metadata"]["name"].as_str().unwrap_or("").to_string();
    let (priority, blocked) = priority(
        value["metadata"]["labels"][PRIORITY_CLASS_LABEL].as_str(),
        pods,
        cx,
    );
    let job = if is_job && !decoded {
        origin.decode().ok()
    } else {
        None
    };
    // A batch Job has one pod set of `podsCount` pods (Kueue's job_controller.go `PodSets`).
    // A JobSet (and a TrainJob's) has one per replicated job of replicas × podsCount pods
    // (the jobset integration's `PodSets`).
    let pod_sets = match kind {
        "TrainJob" | "JobSet" => train_job_pod_sets(pods),
        "Job" => (pods.first().into_iter())
            .map(|p| pod_set(POD_SET_MAIN.into(), p, pods.len() as i64))
            .collect(),
        _ => pods
            .iter()
            .map(|p| pod_set(POD_SET_MAIN.into(), p, 1))
            .collect(),
    };
    let workload = admission::Workload {
        namespace,
        name,
        queue_name,
        priority,
        // Created when the scenario is applied, in the order it lists them, unless the object
        // says when (a dump of a cluster's objects).
        created: creation_timestamp(value).unwrap_or(cx.kueue.now),
        owned_by_pod: kind == "Pod",
        pod_sets,
        blocked,
    };
    Some((kind, workload, job))
}

impl Loader<'_> {
    /// The queued workloads of a scenario that is replayed: their pods as before admission
    /// (a TrainJob waiting with no pods made is resolved now, without Kueue's patch), in the
    /// step they arrive in, and each as the replay's Kueue queues it. Nothing is admitted here.
    #[allow(clippy::type_complexity)]
    pub(super) fn queue_over_time(
        &self,
        queued: Vec<Queued>,
        cx: &ResolveContext,
    ) -> (Vec<(Loaded, Option<usize>)>, KueueOutcome, Vec<KueueJob>) {
        let mut placed = Vec::with_capacity(queued.len());
        let mut jobs = Vec::with_capacity(queued.len());
        let mut outcome = KueueOutcome {
            admitted: cx.kueue.admitted.clone(),
            ..KueueOutcome::default()
        };
        for q in queued {
            outcome.kinds.push(q.kind);
            outcome.workloads.push(q.workload.clone());
            let loaded = match (q.loaded.unmade.is_some(), &q.job) {
                (true, Some(job)) => {
                    match self.resolve_train_job(&q.origin, (**job).clone(), cx, Baseline::Resolve)
                    {
                        Ok(w) => w,
                        Err(e) => {
                            placed.push((Err(e), None));
                            continue;
                        }
                    }
                }
                _ => q.loaded,
            };
            let pods = match loaded.never_created {
                // Its JobSet is refused: no pod ever arrives (the resolve warning says why).
                true => Vec::new(),
                false => loaded.pod_keys(),
            };
            if !pods.is_empty() {
                jobs.push(KueueJob {
                    pods,
                    created_written: creation_timestamp(q.origin.value()).is_some(),
                    workload: q.workload,
                    train_job: q.job,
                });
            }
            placed.push((Ok((loaded, q.origin)), q.step));
        }
        (placed, outcome, jobs)
    }

    /// Admits the queued workloads over the timeline and gives back what each became, with
    /// the timeline step its pods are created in: an admitted TrainJob resolved with Kueue's
    /// runtime patch (created when first admitted), a pod with its flavors merged in (gated
    /// until admitted); a TrainJob never admitted becomes nothing. `events` are what Kueue
    /// does in each timeline step: pods it deletes (a preempted job), creates again (a job
    /// admitted again) or ungates (a pod admitted then).
    pub(super) fn admit_queued(
        &self,
        queued: Vec<Queued>,
        timeline: &[TimelineStep],
        cx: &ResolveContext,
    ) -> Admitted {
        let kinds: Vec<&'static str> = queued.iter().map(|q| q.kind).collect();
        let arrive: Vec<Option<usize>> = queued.iter().map(|q| q.step).collect();
        let finish: Vec<Vec<usize>> = (timeline.iter())
            .map(|step| {
                let Some(sel) = &step.complete else {
                    return Vec::new();
                };
                (queued.iter().enumerate())
                    .filter(|(_, q)| {
                        let names = q.loaded.pod_workloads();
                        let mut keys = q.loaded.pod_keys().into_iter().peekable();
                        names.iter().any(|n| sel.workloads.contains(n))
                            || (keys.peek().is_some() && keys.all(|k| sel.pods.contains(&k)))
                    })
                    .map(|(i, _)| i)
                    .collect()
            })
            .collect();
        let (mut slots, workloads): (Vec<_>, Vec<_>) = (queued.into_iter())
            .map(|q| (Some((q.kind, q.origin, q.loaded, q.job)), q.workload))
            .unzip();
        let plan = admission::Timeline { arrive, finish };
        let admitted = admission::admit_over(cx.kueue, &workloads, &plan, cx.namespaces, cx.gates);
        let mut events: Vec<Vec<Event>> = vec![Vec::new(); timeline.len()];
        let mut order: Vec<usize> = admitted.order.clone();
        // Workloads not admitted in the end follow, in creation order.
        let listed: BTreeSet<usize> = order.iter().copied().collect();
        order.extend((0..workloads.len()).filter(|i| !listed.contains(i)));
        let mut out = Vec::new();
        for i in order {
            let Some((kind, origin, loaded, job)) = slots[i].take() else {
                continue;
            };
            let decision = &admitted.decisions[i];
            // The phases in which it holds quota: 0 the start, k + 1 after timeline step k.
            let holds: Vec<bool> = admitted.holding.iter().map(|h| h[i]).collect();
            let arrived = plan.arrive[i].map_or(0, |k| k + 1);
            let first = (arrived..holds.len()).find(|&h| holds[h]);
            let step_of = |phase: usize| phase.checked_sub(1);
            // The flavors of its latest admission, if it ever held quota when a phase ended.
            let infos =
                (decision.last_admitted.as_ref().filter(|_| first.is_some())).map(|(_, a)| {
                    pod_set_infos(
                        a,
                        cx.kueue,
                        &workloads[i],
                        decision.cluster_queue.as_deref(),
                    )
                });
            let keys: Vec<String> = loaded.pod_keys();
            if let Some(first) = first {
                let name = format!("{}/{}", workloads[i].namespace, workloads[i].name);
                for (step, event) in later_events(&admitted, i, &holds, first, &keys, &name) {
                    events[step].push(event);
                }
            }
            match (job, infos) {
                // Kueue writes its admission as a runtimePatches entry (Trainer v2.2+), which
                // no Trainer version serves beside the older override fields.
                (Some(job), Some(_)) if let Some(field) = older_overrides(&job) => {
                    out.push((
                        Err(vec![origin.error_at(
                            field,
                            format!(
                                "Kueue admitted this TrainJob and records the admission as a runtimePatches entry of manager {MANAGER} (Trainer v2.2+), but the TrainJob uses {field}: no Trainer version serves both; write its overrides as runtimePatches (`schedsim migrate`)"
                            ),
                        )]),
                        None,
                    ));
                }
                (Some(mut job), Some(infos)) => {
                    add_runtime_patch(&mut job, &infos);
                    let step = first.and_then(step_of);
                    // Kueue's patch is an override: the runtime-only baseline is as it was
                    // (resolved now when the job waited for Kueue without one).
                    let baseline = match loaded.baseline {
                        Some(known) => Baseline::Known(known),
                        None => Baseline::Resolve,
                    };
                    out.push((
                        self.resolve_train_job(&origin, *job, cx, baseline)
                            .map(|w| (w, origin)),
                        step,
                    ));
                }
                (Some(_), None) => {}
                // A batch Job or a JobSet: created suspended, its pods exist once Kueue admits
                // it, with each pod set's info merged into its template (`RunWithPodSetsInfo`).
                (None, infos) if kind == "Job" || kind == "JobSet" => {
                    let Some(infos) = infos else {
                        continue;
                    };
                    let mut loaded = loaded;
                    let mut conflict = None;
                    for pod in &mut loaded.pods {
                        let set = (pod.labels.get(REPLICATED_JOB_LABEL))
                            .map_or(POD_SET_MAIN, String::as_str);
                        let info = infos.iter().find(|i| kind == "Job" || i.name == set);
                        if let Some(Err(m)) = info.map(|info| merge_into_pod(pod, info)) {
                            conflict = Some(m);
                        }
                    }
                    if let Some(m) = conflict {
                        loaded.warnings.push(format!(
                            "{kind} {}/{} ({}): Kueue cannot start it: {m}; it stays suspended",
                            workloads[i].namespace,
                            workloads[i].name,
                            origin.describe()
                        ));
                        loaded.pods.clear();
                        loaded.steps.clear();
                    }
                    out.push((Ok((loaded, origin)), first.and_then(step_of)));
                }
                // A pod's workload preempted before any phase ended with it admitted: Kueue
                // deleted the pod.
                (None, _) if decision.ended() && first.is_none() => {}
                (None, infos) => {
                    let mut loaded = loaded;
                    let ungated_from_start = first == Some(arrived);
                    for pod in &mut loaded.pods {
                        match infos.as_ref().and_then(|i| i.first()) {
                            Some(info) => {
                                if let Err(m) = merge_into_pod(pod, info) {
                                    loaded.warnings.push(format!(
                                        "pod {} ({}): Kueue cannot start it: {m}; it stays gated",
                                        pod.key(),
                                        origin.describe()
                                    ));
                                    gate(pod);
                                } else if !ungated_from_start {
                                    gate(pod);
                                }
                            }
                            None => gate(pod),
                        }
                    }
                    if let Some(f) = first.filter(|&f| f > arrived) {
                        events[f - 1].push(Event::RemoveSchedulingGates {
                            pods: PodSelector {
                                pods: keys.clone(),
                                workloads: Vec::new(),
                            },
                            gates: Some(vec![ADMISSION_GATE.to_string()]),
                        });
                    }
                    out.push((Ok((loaded, origin)), plan.arrive[i]));
                }
            }
        }
        let outcome = KueueOutcome {
            kinds,
            workloads,
            admitted: cx.kueue.admitted.clone(),
            admission: admitted,
            evicted_pods: BTreeMap::new(),
            drained_pods: BTreeMap::new(),
        };
        Admitted {
            placed: out,
            events,
            outcome,
        }
    }
}

/// What Kueue does to a workload's pods in the timeline steps after its first admission
/// (`first`, a phase: 0 the start, k + 1 after step k): deletes them in a step that ends with
/// the workload evicted (not finished), creates them again in one that ends with it admitted
/// again.
fn later_events(
    admitted: &Admission,
    i: usize,
    holds: &[bool],
    first: usize,
    keys: &[String],
    name: &str,
) -> Vec<(usize, Event)> {
    let mut out = Vec::new();
    for h in first + 1..holds.len() {
        let step = h - 1;
        let pods = PodSelector {
            pods: keys.to_vec(),
            workloads: Vec::new(),
        };
        if holds[h - 1] && !holds[h] && admitted.decisions[i].finished != Some(step) {
            let drained = (admitted.drained.iter())
                .rfind(|d| d.victim == Victim::Queued(i) && d.step == Some(step));
            let message = (admitted.evictions.iter())
                .rfind(|e| e.victim == Victim::Queued(i) && e.step == Some(step))
                .map(|e| format!("deleted: Kueue preempted {name}: {}", e.message))
                .or_else(|| {
                    drained.map(|d| format!("deleted: Kueue evicted {name}: {}", d.message))
                })
                .unwrap_or_else(|| format!("deleted: Kueue evicted {name}"));
            out.push((step, Event::Delete { pods, message }));
        } else if !holds[h - 1] && holds[h] {
            let message = format!("Kueue admitted {name} again");
            out.push((step, Event::Recreate { pods, message }));
        }
    }
    out
}

/// What admission made of the queued workloads: each one's pods with the timeline step they
/// are created in, Kueue's events per timeline step, and the decisions.
pub(super) struct Admitted {
    pub placed: Vec<(Loaded, Option<usize>)>,
    pub events: Vec<Vec<Event>>,
    pub outcome: KueueOutcome,
}

/// Removes the existing pods of the already-admitted workloads Kueue evicted: stopping the
/// job deletes them (its pods terminate before the next cycle, as the admission assumes) —
/// from the start (a preemption in the first cycles, or a drain by a stopped queue), or in the
/// timeline step of the preemption or drain.
/// The job is the Workload's owner: a Pod by name; a Job's pods carry
/// `batch.kubernetes.io/job-name`; a JobSet's, and a TrainJob's (its JobSet has its name),
/// `jobset.sigs.k8s.io/jobset-name`. Returns the pods removed, per eviction and per drain.
pub(super) fn evict_existing_pods(
    existing: &mut Vec<(Pod, Origin)>,
    k: &KueueOutcome,
    events: &mut [Vec<Event>],
) -> EvictedPods {
    let mut out = EvictedPods::default();
    let mut evicted = |victim: Victim, step: Option<usize>, why: &str, did: &str, message: &str| {
        let Victim::Admitted(a) = victim else {
            return None;
        };
        let w = &k.admitted[a];
        let owned = owned_pods(w, &mut out.warnings, why)?;
        let pods: Vec<String> = (existing.iter())
            .filter(|(p, _)| owned(p))
            .map(|(p, _)| p.key())
            .collect();
        match step.and_then(|step| events.get_mut(step)) {
            // Evicted in a timeline step: the pods run until then.
            Some(step_events) => step_events.push(Event::Delete {
                pods: PodSelector {
                    pods: pods.clone(),
                    workloads: Vec::new(),
                },
                message: format!("deleted: Kueue {did} {}/{}: {message}", w.namespace, w.name),
            }),
            None => existing.retain(|(p, _)| !owned(p)),
        }
        Some(pods)
    };
    let mut preempted = BTreeMap::new();
    for (i, e) in k.admission.evictions.iter().enumerate() {
        if let Some(pods) = evicted(e.victim, e.step, "was preempted", "preempted", &e.message) {
            preempted.insert(i, pods);
        }
    }
    let mut drained = BTreeMap::new();
    for (i, d) in k.admission.drained.iter().enumerate() {
        let why = "was evicted by its stopped queue";
        if let Some(pods) = evicted(d.victim, d.step, why, "evicted", &d.message) {
            drained.insert(i, pods);
        }
    }
    out.preempted = preempted;
    out.drained = drained;
    out
}

/// The existing pods each eviction of an already-admitted workload deleted.
#[derive(Debug, Clone, Default)]
pub(super) struct EvictedPods {
    /// Per preemption (an index of `Admission::evictions`).
    pub preempted: BTreeMap<usize, Vec<String>>,
    /// Per drain (an index of `Admission::drained`).
    pub drained: BTreeMap<usize, Vec<String>>,
    pub warnings: Vec<String>,
}

/// Which existing pods belong to an admitted Workload's job (through its owner), or a
/// warning that schedsim cannot tell.
fn owned_pods<'w>(
    w: &'w admission::Admitted,
    warnings: &mut Vec<String>,
    what: &str,
) -> Option<impl Fn(&Pod) -> bool + 'w> {
    let Some((kind, name)) = &w.owner else {
        warnings.push(format!(
            "Workload {}/{} {what} but names no owner: its pods, if any, are left running",
            w.namespace, w.name
        ));
        return None;
    };
    let label = match kind.as_str() {
        "Pod" => None,
        "Job" => Some(JOB_NAME_LABELS[0]),
        "JobSet" | "TrainJob" => Some(JOBSET_NAME_LABEL),
        other => {
            warnings.push(format!(
                "Workload {}/{} {what}; schedsim cannot tell the pods of a {other} apart, so they are left running",
                w.namespace, w.name
            ));
            return None;
        }
    };
    Some(move |p: &Pod| {
        p.namespace == w.namespace
            && match label {
                None => p.name == *name,
                Some(l) => p.labels.get(l) == Some(name),
            }
    })
}

/// The override field of an older Trainer API that a TrainJob uses, if any.
pub fn older_overrides(job: &TrainJob) -> Option<&'static str> {
    if !job.spec.pod_template_overrides.is_empty() {
        Some("spec.podTemplateOverrides")
    } else if !job.spec.template_overrides.is_empty() {
        Some("spec.templateOverrides")
    } else {
        None
    }
}

/// A queued pod's scheduling gate, as Kueue's pod webhook sets it.
fn gate(pod: &mut Pod) {
    if !pod.scheduling_gates.iter().any(|g| g == ADMISSION_GATE) {
        pod.scheduling_gates.push(ADMISSION_GATE.to_string());
    }
}

/// `GetPriorityFromPriorityClass` of the first pod that names a class (else the default).
/// `jobframework.ExtractPriority`: the WorkloadPriorityClass the label names (none found: no
/// Workload is created, only a `WorkloadPriorityClassNotFound` event), else the PriorityClass
/// of the first pod template naming one, else the default.
fn priority(class_label: Option<&str>, pods: &[Pod], cx: &ResolveContext) -> (i32, Option<String>) {
    match class_label {
        Some(class) => match cx.kueue.priority_classes.get(class) {
            Some(&v) => (v, None),
            None => (
                0,
                Some(format!("WorkloadPriorityClass {class:?} not found")),
            ),
        },
        None => (pod_priority(pods, cx), None),
    }
}

/// `metadata.creationTimestamp` in seconds since the epoch, when the object has a valid one
/// (Kueue orders its queues and LowerOrNewerEqualPriority by it).
fn creation_timestamp(object: &serde_json::Value) -> Option<i64> {
    let text = object["metadata"]["creationTimestamp"].as_str()?;
    let ms = crate::trace::time::TimeFormat::DateTime
        .millis(text, 0)
        .ok()?;
    Some(ms.div_euclid(1000))
}

/// Kueue's pod integration for a pod that names a queue but comes from no object of its own
/// (a Determined trial's pods): one Workload of pod set `main`, owned by the pod.
pub(super) fn pod_workload(pod: &Pod, cx: &ResolveContext) -> Option<admission::Workload> {
    let queue_name = pod.labels.get(QUEUE_NAME_LABEL).filter(|q| !q.is_empty())?;
    let class = pod.labels.get(PRIORITY_CLASS_LABEL).map(String::as_str);
    let (priority, blocked) = priority(class, std::slice::from_ref(pod), cx);
    Some(admission::Workload {
        namespace: pod.namespace.clone(),
        name: pod.name.clone(),
        queue_name: queue_name.clone(),
        priority,
        created: cx.kueue.now,
        owned_by_pod: true,
        pod_sets: vec![pod_set(POD_SET_MAIN.into(), pod, 1)],
        blocked,
    })
}

fn pod_priority(pods: &[Pod], cx: &ResolveContext) -> i32 {
    let mut probe = (pods.iter())
        .find(|p| p.priority_class.is_some())
        .or(pods.first())
        .cloned()
        .unwrap_or_default();
    probe.priority_given = false;
    match cx.priority_classes.admit(&mut probe) {
        Ok(()) => probe.priority,
        Err(_) => 0,
    }
}

/// A pod set from its first pod (the pods of a pod set share their template).
/// One pod set per replicated job, in the runtime's order, counted as JobSet's `PodSets`
/// counts them (replicas × parallelism: the pods the Trainer creates).
fn train_job_pod_sets(pods: &[Pod]) -> Vec<PodSet> {
    let mut sets: Vec<PodSet> = Vec::new();
    for p in pods {
        let job = p
            .labels
            .get(REPLICATED_JOB_LABEL)
            .map_or("", String::as_str);
        match sets.iter_mut().find(|s| *s.name == *job) {
            Some(s) => s.count += 1,
            None => sets.push(pod_set(job.into(), p, 1)),
        }
    }
    sets
}

/// `RunWithPodSetsInfo` of the TrainJob integration: Kueue's runtime patch (appended by its
/// webhook when the job was created; reused when the job already carries one) gets one
/// replicated job patch per pod set.
pub fn add_runtime_patch(job: &mut TrainJob, infos: &[PodSetInfo]) {
    let replicated_jobs: Vec<Value> = (infos.iter())
        .map(|i| {
            let mut spec = serde_json::Map::new();
            if !i.node_selector.is_empty() {
                spec.insert("nodeSelector".into(), json!(i.node_selector));
            }
            if !i.tolerations.is_empty() {
                spec.insert("tolerations".into(), json!(i.tolerations));
            }
            json!({
                "name": i.name,
                "template": {"spec": {"template": {
                    "metadata": {"labels": i.labels},
                    "spec": spec,
                }}},
            })
        })
        .collect();
    let patch: RuntimePatch = serde_json::from_value(json!({
        "manager": MANAGER,
        "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": replicated_jobs}}},
    }))
    .expect("Kueue's runtime patch has the RuntimePatch shape");
    let patches = &mut job.spec.runtime_patches;
    match patches.iter_mut().find(|p| p.manager == MANAGER) {
        Some(existing) => {
            existing.training_runtime_spec = patch.training_runtime_spec;
        }
        None => patches.push(patch),
    }
}

impl Loader<'_> {
    /// Workloads naming a Kueue queue in a scenario without Kueue objects: the label has no
    /// effect, which the user should know.
    pub(super) fn warn_unmanaged(
        &self,
        unmanaged: &[(String, String)],
        warnings: &mut Vec<String>,
    ) {
        let Some((queue, at)) = unmanaged.first() else {
            return;
        };
        let n = unmanaged.len();
        // English agreement: "1 workload names … ", "2 workloads name … ".
        let (plural, verb_s) = if n == 1 { ("", "s") } else { ("s", "") };
        warnings.push(format!(
            "{n} workload{plural} name{verb_s} a Kueue queue (first: {queue:?}, {at}) but the scenario has no Kueue objects (ClusterQueue, LocalQueue, ResourceFlavor in spec.objects): Kueue is not simulated and the {QUEUE_NAME_LABEL} label has no effect"
        ));
    }
}
