//! Arrivals: a job's pods come into flight (held back by `dependsOn`, or waiting for Kueue,
//! or created and queued at once).

use std::sync::Arc;

use super::{Engine, Job, Live, Timer, queue_pod};
use crate::model::Pod;
use crate::replay::metrics::pod_gpu_milli;
use crate::replay::source::Arrival;
use crate::sched::plan::DependsOnStatus;
use crate::sched::queue::Time;

impl Engine<'_, '_> {
    /// A job arrives: its pods are created (unless `dependsOn` holds them back) and queued.
    pub(super) fn arrive(&mut self, a: Arrival) {
        let job = self.next_job;
        self.next_job += 1;
        let key = (a.queue.as_str(), a.priority, a.class.as_str());
        let count = a.pods.len() as u32;
        self.metrics.job_arrived(key, u64::from(count));
        // Through Kueue (when the scenario has it): the pods exist once it admits the job.
        let kueue = a.kueue.filter(|_| self.kueue.is_some());
        let mut ids = Vec::with_capacity(a.pods.len());
        for (pod, scenario_pod) in a.pods.into_iter().zip(a.scenario_pods) {
            let duration = match scenario_pod {
                Some(i) if self.complete_after_run[i] => Some(a.duration.unwrap_or(0)),
                _ => a.duration,
            };
            let queued = kueue.is_some();
            let Some(id) = self.new_pod(job, pod, scenario_pod, duration, a.withdraw_at, queued)
            else {
                return;
            };
            ids.push((id, scenario_pod));
        }
        self.jobs.insert(
            job,
            Job {
                name: a.name,
                queue: a.queue,
                priority: a.priority,
                class: a.class,
                arrival: self.now,
                pods: count,
                started: 0,
                ended: 0,
                kueue: None,
                admitted: None,
                pod_ids: Vec::new(),
                train_job: None,
                readiness: Default::default(),
            },
        );
        if let Some(k) = kueue {
            if let Some(j) = self.jobs.get_mut(&job) {
                j.pod_ids = ids.iter().map(|(id, _)| *id).collect();
                j.train_job = k.train_job;
            }
            self.kueue_arrive(job, k.workload, k.keeps_created);
        }
        if let Some(c) = a.completion {
            self.control(job, c, &ids, a.duration);
        }
    }

    /// A pod of `job` arrives: it is created (unless `dependsOn` holds it back) and queued.
    /// `None` when it is past the replay's pod limit.
    /// `queued`: its job waits for Kueue, which creates the pod once it admits the job.
    pub(super) fn new_pod(
        &mut self,
        job: u32,
        pod: Arc<Pod>,
        scenario_pod: Option<usize>,
        duration: Option<u64>,
        withdraw_at: Option<u64>,
        queued: bool,
    ) -> Option<u32> {
        let id = self.next_pod;
        if crate::limits::REPLAY_PODS.exceeded_by(u64::from(id) + 1) || id == u32::MAX {
            let limit = crate::limits::REPLAY_PODS;
            self.limit = Some(limit.message(format!("pod {}", u64::from(id) + 1)));
            return None;
        }
        self.next_pod += 1;
        let gpus = pod_gpu_milli(&pod);
        if let Some(i) = scenario_pod {
            self.scenario_ids[i] = Some(id);
        }
        if !queued {
            self.s.admit(id as usize, Arc::clone(&pod));
            self.shared.borrow_mut().insert(id, Arc::clone(&pod));
        }
        self.live.insert(
            id,
            Live {
                template: queued.then(|| Arc::clone(&pod)),
                queued,
                pod,
                job,
                scenario_pod,
                arrival: self.now,
                duration,
                bound: None,
                assigned: None,
                first_bind: None,
                used_ms: 0,
                generation: 0,
                attempts: 0,
                preemptions: 0,
                gpus,
                message: None,
                created: false,
            },
        );
        if let Some(at) = withdraw_at {
            self.add_timer(at.max(self.now), Timer::Withdraw(id));
        }
        if queued {
            self.metrics.queued += 1;
            return Some(id);
        }
        self.metrics.pending_added(gpus);
        let held = scenario_pod.is_some_and(|i| !self.requirements_met(i));
        match held {
            true => self.held.push(id),
            false => self.create(id),
        }
        Some(id)
    }

    /// The pod is created: it enters the queue (gated pods wait in the unschedulable pool),
    /// or, a Volcano gang's, waits for Volcano's next session.
    pub(super) fn create(&mut self, id: u32) {
        let Some(live) = self.live.get_mut(&id) else {
            return;
        };
        live.created = true;
        let pod = queue_pod(id, &live.pod);
        self.s.budgets.arrive(id as usize, &live.pod);
        self.gang_created(id);
        if !self.volcano_created(id) {
            let _ = self.queue.add(Time(self.now), pod, &self.hints);
        }
    }

    pub(super) fn requirements_met(&self, scenario_pod: usize) -> bool {
        self.requires[scenario_pod].iter().all(|r| {
            r.pods.clone().all(|p| match r.status {
                DependsOnStatus::Complete => self.scenario_done[p],
                DependsOnStatus::Ready => {
                    self.scenario_done[p]
                        || self.scenario_ids[p]
                            .and_then(|id| self.live.get(&id))
                            .is_some_and(|l| l.bound.is_some())
                }
            })
        })
    }

    /// Creates the held-back pods whose requirements hold now.
    pub(super) fn release_held(&mut self) {
        if self.held.is_empty() {
            return;
        }
        let held = std::mem::take(&mut self.held);
        for id in held {
            let ready = (self.live.get(&id))
                .and_then(|l| l.scenario_pod)
                .is_some_and(|i| self.requirements_met(i));
            match ready {
                true => self.create(id),
                false => self.held.push(id),
            }
        }
    }
}
