//! Kueue in the replay ([`crate::kueue::admission::live`]): a job that names a LocalQueue
//! waits for admission before its pods exist. Admitted, its pods are created with what
//! Kueue writes into them (`podset.Merge`: the flavors' node labels and tolerations, the
//! queue labels; the admission gate lifted) and go to kube-scheduler's queue. Preempted by
//! Kueue, its pods are deleted at once (a batch Job is suspended, as Kueue's admission
//! assumes) and it waits in its ClusterQueue again; a plain pod's workload ends with its
//! pod. A finished job releases its quota. With `waitForPodsReady`, a job whose pods do not
//! all start in time is evicted the same way, and deactivated past its requeue limit
//! ([`super::pods_ready`]).

use std::collections::HashMap;
use std::sync::Arc;

use super::Engine;
use crate::kueue::admission::Workload;
use crate::kueue::admission::live::Change;
use crate::kueue::pod_set_info::{PodSetInfo, merge_into_pod, pod_set_infos};
use crate::load::kueue::{MANAGER, add_runtime_patch, older_overrides};
use crate::model::Pod;
use crate::resolve::build::BuildOptions;
use crate::resolve::trainjob::TrainJob;
use crate::sched::queue::PodId;

impl Engine<'_, '_> {
    /// Job `job` (its pods already in flight, not created) is queued in Kueue. Its Workload
    /// is created as it arrives, unless its object wrote a creation time (`keeps_created`).
    pub(super) fn kueue_arrive(&mut self, job: u32, mut workload: Workload, keeps_created: bool) {
        let Some(kueue) = self.kueue.as_mut() else {
            return;
        };
        if !keeps_created {
            workload.created = kueue.seconds(self.now);
        }
        let needed: i64 = workload.pod_sets.iter().map(|ps| ps.count).sum();
        let tracked = kueue.tracks_pods_ready();
        match kueue.arrive(workload) {
            Ok(slot) => {
                self.kueue_jobs.insert(slot, job);
                if let Some(j) = self.jobs.get_mut(&job) {
                    j.kueue = Some(slot);
                    if tracked {
                        let needed = u32::try_from(needed.max(0)).unwrap_or(u32::MAX);
                        j.readiness = super::pods_ready::Readiness::tracked(needed);
                    }
                }
                self.kueue_dirty = true;
            }
            Err(message) => {
                self.never_queued.0 += 1;
                self.never_queued.1.get_or_insert(message);
            }
        }
    }

    /// Kueue's part of an instant: the inadmissible workloads whose requeue is due come
    /// back, PodsReady timeouts and backoffs that are due act, and admission runs when
    /// anything changed.
    pub(super) fn kueue_due(&mut self) {
        let Some(kueue) = self.kueue.as_mut() else {
            return;
        };
        if kueue.due(self.now) {
            self.kueue_dirty = true;
        }
        if !std::mem::take(&mut self.kueue_dirty) {
            return;
        }
        let changes = kueue.settle(self.now);
        for w in kueue.take_warnings() {
            self.warn_once(w);
        }
        for change in changes {
            match change {
                Change::Admitted {
                    workload,
                    assignment,
                    cluster_queue,
                } => {
                    // What Kueue writes into the pods of each pod set.
                    let (Some(objects), Some(kueue)) = (self.replay.kueue.as_deref(), &self.kueue)
                    else {
                        continue;
                    };
                    let w = kueue.workload(workload);
                    let infos = pod_set_infos(&assignment, objects, w, cluster_queue.as_deref());
                    self.kueue_admitted(workload, &infos);
                }
                Change::Evicted {
                    workload,
                    requeued,
                    preempted,
                    ..
                } => self.kueue_evicted(workload, requeued, preempted),
                Change::PodsReadyTimeout { workload, requeued } => {
                    if let Some(job) = self.kueue_jobs.get(&workload).and_then(|j| self.jobs.get(j)) {
                        let key = (job.queue.clone(), job.priority, job.class.clone());
                        self.metrics.pods_ready_timeout((&key.0, key.1, &key.2));
                    }
                    self.kueue_evicted(workload, requeued, false);
                }
                Change::Deactivated { workload } => self.kueue_deactivated(workload),
                Change::EvictedAdmitted { key, preempted, .. } => self.warn_once(format!(
                    "Kueue {} the Workload {key}, admitted before the replay: its pods are not known to the replay and keep running",
                    if preempted { "preempted" } else { "evicted (its ClusterQueue is stopped)" }
                )),
            }
        }
    }

    /// Adds a warning unless it was given already.
    pub(super) fn warn_once(&mut self, w: String) {
        if !self.warnings.contains(&w) {
            self.warnings.push(w);
        }
    }

    /// A job is gone (all its pods finished or were deleted): its quota is released.
    pub(super) fn kueue_job_gone(&mut self, slot: Option<usize>) {
        let Some(slot) = slot else {
            return;
        };
        if self.kueue_jobs.remove(&slot).is_some() {
            if let Some(kueue) = self.kueue.as_mut() {
                kueue.gone(slot);
            }
            self.kueue_dirty = true;
        }
    }

    /// The job's pods are created, with Kueue's pod set info merged in.
    fn kueue_admitted(&mut self, slot: usize, infos: &[PodSetInfo]) {
        let Some(&job_id) = self.kueue_jobs.get(&slot) else {
            return;
        };
        let Some(job) = self.jobs.get_mut(&job_id) else {
            return;
        };
        if job.admitted.is_none() {
            job.admitted = Some(self.now);
            let wait = self.now - job.arrival;
            let key = (job.queue.as_str(), job.priority, job.class.as_str());
            self.metrics.job_admitted(key, wait);
        }
        let ids = job.pod_ids.clone();
        let train_job = job.train_job.clone();
        let patched = match train_job.as_deref() {
            Some(train_job) => match self.resolve_admitted(train_job, infos) {
                Ok(pods) => Some(pods),
                Err(m) => {
                    let name = format!("{}/{}", train_job.namespace(), train_job.name());
                    self.warn_once(format!(
                        "TrainJob {name}: Kueue admitted it but Trainer cannot start it: {m}; it stays suspended"
                    ));
                    return;
                }
            },
            None => None,
        };
        for id in ids {
            let Some(live) = self.live.get_mut(&id) else {
                continue;
            };
            let Some(template) = live.template.as_ref() else {
                continue;
            };
            let mut pod: Pod = (**template).clone();
            let started = match &patched {
                Some(patched) => take_kueue_patch(&mut pod, patched),
                None => {
                    let set = pod.labels.get(REPLICATED_JOB_LABEL);
                    let info = (infos.iter())
                        .find(|i| Some(&i.name) == set)
                        .or(infos.first());
                    info.map_or(Ok(()), |info| merge_into_pod(&mut pod, info))
                }
            };
            if let Err(m) = started {
                let w = format!(
                    "pod {}: Kueue cannot start it: {m}; it stays suspended",
                    pod.key()
                );
                self.warn_once(w);
                continue;
            }
            let pod = Arc::new(pod);
            live.pod = Arc::clone(&pod);
            live.queued = false;
            let gpus = live.gpus;
            self.metrics.queued -= 1;
            self.metrics.pending_added(gpus);
            let scenario_pod = live.scenario_pod;
            self.s.admit(id as usize, Arc::clone(&pod));
            self.shared.borrow_mut().insert(id, pod);
            // A pod its job's `dependsOn` holds back waits until its requirements hold.
            match scenario_pod.is_some_and(|i| !self.requirements_met(i)) {
                true => self.held.push(id),
                false => self.create(id),
            }
        }
        // Its PodsReady as it stands (pods that succeeded before an eviction count).
        self.tell_pods_ready(job_id, true);
    }

    /// An admitted TrainJob as Trainer builds it with Kueue's runtime patch
    /// (`RunWithPodSetsInfo` of the TrainJob integration, `runtimePatches` of manager
    /// `kueue.x-k8s.io/manager`): its pods by `namespace/name`.
    fn resolve_admitted(
        &self,
        train_job: &TrainJob,
        infos: &[PodSetInfo],
    ) -> Result<HashMap<String, Pod>, String> {
        if let Some(field) = older_overrides(train_job) {
            return Err(format!(
                "Kueue records its admission as a runtimePatches entry of manager {MANAGER} (Trainer v2.2+), but the TrainJob uses {field}: no Trainer version serves both"
            ));
        }
        let mut job = train_job.clone();
        add_runtime_patch(&mut job, infos);
        let opts = BuildOptions {
            overrides: true,
            track: false,
            clock: &self.replay.clock,
        };
        let built = crate::resolve::train_job_pods(
            &job,
            &self.scenario.runtimes,
            opts,
            &self.scenario.config.feature_gates,
            self.replay.initializers,
        )
        .map_err(|e| {
            (e.iter().map(|e| format!("{}: {}", e.path, e.message)))
                .collect::<Vec<_>>()
                .join("; ")
        })?;
        Ok((built.pods.into_iter()).map(|p| (p.key(), p)).collect())
    }

    /// Kueue evicted the job (`preempted`, or by the PodsReady timeout): its pods are
    /// deleted; `requeued`, it waits for admission again (its pods to be created anew), else
    /// it ends.
    fn kueue_evicted(&mut self, slot: usize, requeued: bool, preempted: bool) {
        let Some(&job_id) = self.kueue_jobs.get(&slot) else {
            return;
        };
        let Some(job) = self.jobs.get(&job_id) else {
            return;
        };
        let ids = job.pod_ids.clone();
        if !requeued {
            // Its last pod gone ends the job, which gives its place in Kueue back.
            for id in ids {
                self.pod_gone(id, "deleted");
            }
            return;
        }
        let key = (job.queue.clone(), job.priority, job.class.clone());
        for id in ids {
            let Some(live) = self.live.get(&id) else {
                continue;
            };
            if live.queued {
                continue;
            }
            let (bound, gpus) = (live.bound.is_some(), live.gpus);
            if bound {
                let pod = self.unbind(id);
                if preempted {
                    self.metrics.preempted((&key.0, key.1, &key.2));
                    if let Some(live) = self.live.get_mut(&id) {
                        live.preemptions += 1;
                    }
                }
                self.assigned_pod_deleted(pod);
            } else {
                self.metrics.pending_removed(gpus);
                self.queue.delete(PodId(id));
                // A nominated pod deleted: the room it held is free for the others.
                let pod = Arc::clone(&live.pod);
                if pod.nominated_node_name.is_some() {
                    self.nomination_gone(&pod);
                }
            }
            if let Some(live) = self.live.get_mut(&id) {
                live.queued = true;
                live.created = false;
                self.s.budgets.delete(id as usize, &live.pod);
            }
            // Deleted; created anew when Kueue admits the job again.
            self.volcano_pod_gone(id, false);
            self.s.forget(id as usize);
            self.shared.borrow_mut().remove(&id);
            self.metrics.queued += 1;
        }
    }
}

/// What Kueue's runtime patch changes in a TrainJob's pod (node selector, tolerations and
/// labels, the fields the patch carries), taken from the pod of the same name as Trainer
/// builds it with the patch. The rest of the pod is as the replay made it.
fn take_kueue_patch(pod: &mut Pod, patched: &HashMap<String, Pod>) -> Result<(), String> {
    let Some(built) = patched.get(&pod.key()) else {
        return Err("Trainer builds no such pod with Kueue's patch".to_string());
    };
    pod.node_selector.clone_from(&built.node_selector);
    pod.tolerations.clone_from(&built.tolerations);
    pod.labels.clone_from(&built.labels);
    Ok(())
}

/// JobSet's label naming a pod's replicated job: its pod set's name.
const REPLICATED_JOB_LABEL: &str = crate::resolve::jobset::REPLICATED_JOB_LABEL;
