//! Kueue's `waitForPodsReady` in the replay ([`crate::kueue::admission::live`] times it): the
//! job integrations' `PodsReady` as the replay counts it, told to Kueue when it changes, and
//! what Kueue does with a job whose pods do not all start.
//!
//! A job is PodsReady when its ready and succeeded pods reach the sum of its pod sets' counts
//! (`pkg/controller/jobs/job/job_controller.go` `PodsReady`: `succeeded + ready >=
//! podsCount`; a JobSet's and a TrainJob's count child Jobs that are, which comes to the same
//! over their pods; a plain pod's is its `Ready` condition). The replay runs no probes: a pod
//! is ready from its start (its binding) until it leaves its node. A pod that succeeds counts
//! on, so a job whose pods end stays ready; one that loses a pod (a node failure, a drain,
//! kube-scheduler's preemption) is not ready until its replacement runs (`WaitForRecovery`).

use super::Engine;

/// What a job's integration counts for its `PodsReady`.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Readiness {
    /// Its pods bound now.
    running: u32,
    /// Its pods that succeeded.
    succeeded: u32,
    /// The sum of its pod sets' counts; 0: not told (no Kueue, or waitForPodsReady off).
    needed: u32,
    /// What Kueue was last told.
    told: bool,
}

impl Readiness {
    /// A Kueue job whose PodsReady Kueue waits for, with `needed` pods.
    pub(super) fn tracked(needed: u32) -> Self {
        Readiness {
            needed: needed.max(1),
            ..Readiness::default()
        }
    }

    fn ready(&self) -> bool {
        self.running.saturating_add(self.succeeded) >= self.needed
    }
}

impl Engine<'_, '_> {
    /// Job `job` has `running` more (or fewer) pods bound and `succeeded` more succeeded:
    /// Kueue hears if its PodsReady changed.
    pub(super) fn job_pods_changed(&mut self, job: u32, running: i32, succeeded: u32) {
        let Some(j) = self.jobs.get_mut(&job) else {
            return;
        };
        let r = &mut j.readiness;
        r.running = r.running.saturating_add_signed(running);
        r.succeeded = r.succeeded.saturating_add(succeeded);
        if r.needed > 0 {
            self.tell_pods_ready(job, false);
        }
    }

    /// Pod `id` is about to go (`finished`: it succeeded). A pod that succeeds counts for its
    /// job before it leaves its node, so a job whose pods end this way stays PodsReady; any
    /// pod's end may let workloads Kueue evicts again and again start.
    pub(super) fn pod_ending(&mut self, id: u32, finished: bool) {
        if let Some(k) = self.kueue.as_mut() {
            k.note_progress();
        }
        if let (true, Some(job)) = (finished, self.live.get(&id).map(|l| l.job)) {
            self.job_pods_changed(job, 0, 1);
        }
    }

    /// Tells Kueue whether job `job`'s pods are ready, if that changed since it was last
    /// told (`force`: in any case, the job having just been admitted).
    pub(super) fn tell_pods_ready(&mut self, job: u32, force: bool) {
        let Some(j) = self.jobs.get_mut(&job) else {
            return;
        };
        let (Some(slot), r) = (j.kueue, &mut j.readiness) else {
            return;
        };
        let ready = r.ready();
        if r.needed == 0 || (ready == r.told && !force) {
            return;
        }
        r.told = ready;
        if let Some(k) = self.kueue.as_mut()
            && k.set_pods_ready(slot, ready, self.now)
        {
            // A cycle waiting for every admitted workload to be ready may go on now.
            self.kueue_dirty = true;
        }
    }

    /// Kueue deactivated the job (`RequeuingLimitExceeded`): its pods are deleted, its
    /// controllers stop, and it ends, recorded `deactivated`.
    pub(super) fn kueue_deactivated(&mut self, slot: usize) {
        let Some(&job_id) = self.kueue_jobs.get(&slot) else {
            return;
        };
        let Some(job) = self.jobs.get(&job_id) else {
            return;
        };
        self.metrics.job_deactivated(job.key());
        let mut ids = job.pod_ids.clone();
        ids.extend(self.controls.stop(job_id));
        for id in ids {
            if self.live.contains_key(&id) {
                self.pod_gone(id, "deactivated");
            }
        }
        if let Some(j) = self.jobs.remove(&job_id) {
            self.kueue_job_gone(j.kueue);
        }
    }

    /// The replay ends with Kueue evicting workloads whose pods never all start, again and
    /// again, and nothing else left to happen: it says so.
    pub(super) fn warn_spinning(&mut self) {
        let Some(k) = self.kueue.as_ref() else {
            return;
        };
        let spinning = k.spinning();
        let Some((first, count)) = spinning.first() else {
            return;
        };
        let others = match spinning.len() {
            1 => String::new(),
            n => format!(" and {} other workloads", n - 1),
        };
        self.warnings.push(format!(
            "Kueue's waitForPodsReady evicted {first} ({count} times so far){others} for PodsReadyTimeout again and again, their pods never all starting, and nothing else is left to happen: the replay ends at {} (Kueue would requeue them for ever; set spec.replay.until for a fixed span, or waitForPodsReady.requeuingStrategy.backoffLimitCount)",
            crate::trace::clock::format_duration(self.now)
        ));
    }
}
