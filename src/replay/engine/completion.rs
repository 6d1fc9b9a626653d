//! The controllers of a replay's Jobs, JobSets and TrainJobs: a job is done when they say so
//! ([`crate::resolve::completion`] has their rules and their upstream sources).
//!
//! A pod that succeeds counts for its Job (an Indexed Job's by its completion index, once).
//! The controllers act once everything due at the instant happened (pods that end together
//! count together, as the controller's next sync sees them): the Job controller creates pods while fewer are active than it wants (a new pod runs
//! for the job's duration, arriving then: its wait counts from its creation), completes the
//! Job, or, when an Indexed Job's `successPolicy` is met, deletes its active pods and
//! completes it. A pod deleted or withdrawn is replaced the same way. When a Job completes,
//! the JobSet's `successPolicy` decides whether the whole job is done; then its remaining
//! pods, running or pending, are deleted (their room freed at once, recorded as `deleted`)
//! and the job counts as finished. Job wait stays the wait of the pods the job arrived with.
//!
//! Jobs without such a controller (Pods, Deployments, trace rows) are done when all their
//! pods are.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use super::Engine;
use crate::model::Pod;
use crate::resolve::completion::Completion;
use crate::resolve::job::COMPLETION_INDEX;

/// The jobs that have controllers, and the pods they track.
#[derive(Default)]
pub(super) struct Controls {
    jobs: HashMap<u32, Control>,
    pods: HashMap<u32, Tracked>,
    /// The Jobs (job, Job) whose pods ended at this instant: synced once it is over.
    to_sync: BTreeSet<(u32, usize)>,
}

/// One job's controllers.
struct Control {
    /// Index into `spec.replay`'s completions.
    completion: usize,
    /// Per Job, in the completion's order.
    children: Vec<Child>,
    /// How long the pods it makes run.
    duration: Option<u64>,
    /// Its success policy is met: its remaining pods are being deleted.
    done: bool,
}

/// What the Job controller counts of one Job.
#[derive(Default)]
struct Child {
    /// An Indexed Job's succeeded completion indexes.
    succeeded: BTreeSet<u32>,
    /// A NonIndexed Job's succeeded pods.
    succeeded_count: u32,
    /// Its pods not yet terminated, with their completion index.
    active: BTreeMap<u32, Option<u32>>,
    /// Pods made so far (a NonIndexed Job's next pod name).
    made: u32,
    /// Complete (or its success criteria met).
    complete: bool,
    /// The pod its new pods are copies of.
    template: Option<Arc<Pod>>,
}

/// A pod a controller tracks.
#[derive(Debug, Clone, Copy)]
struct Tracked {
    job: u32,
    child: usize,
    index: Option<u32>,
    /// Made by the controller during the replay (not one of the job's arrival).
    made: bool,
}

impl Controls {
    /// Job `job`'s controllers stop (Kueue deactivated it): they make no more pods and call
    /// nothing done. Returns its active pods.
    pub(super) fn stop(&mut self, job: u32) -> Vec<u32> {
        let Some(c) = self.jobs.remove(&job) else {
            return Vec::new();
        };
        (c.children.iter())
            .flat_map(|child| child.active.keys().copied())
            .collect()
    }

    /// Whether the pod was made by its Job's controller during the replay.
    pub(super) fn made_by_controller(&self, id: u32) -> bool {
        self.pods.get(&id).is_some_and(|t| t.made)
    }

    /// Pod `id` is active in Job `child` of `job` (`made` by its controller).
    fn track(&mut self, id: u32, job: u32, child: usize, index: Option<u32>, made: bool) {
        if let Some(c) = self.jobs.get_mut(&job) {
            c.children[child].active.insert(id, index);
        }
        let tracked = Tracked {
            job,
            child,
            index,
            made,
        };
        self.pods.insert(id, tracked);
    }
}

impl Engine<'_, '_> {
    /// A job with controllers arrived with `pods` (its ids and scenario pod indices): each is
    /// tracked by the Job the completion lists it in.
    pub(super) fn control(
        &mut self,
        job: u32,
        completion: usize,
        pods: &[(u32, Option<usize>)],
        duration: Option<u64>,
    ) {
        let (first, c) = &self.replay.completions[completion];
        let mut children: Vec<Child> = Vec::with_capacity(c.jobs.len());
        let mut ranges = Vec::with_capacity(c.jobs.len());
        let mut start = *first;
        for j in &c.jobs {
            ranges.push(start..start + j.pods);
            start += j.pods;
            children.push(Child {
                made: j.pods as u32,
                ..Child::default()
            });
        }
        let mut tracked = Vec::with_capacity(pods.len());
        for &(id, scenario_pod) in pods {
            let Some(k) = scenario_pod.and_then(|p| ranges.iter().position(|r| r.contains(&p)))
            else {
                continue;
            };
            let Some(live) = self.live.get(&id) else {
                continue;
            };
            let index = (c.jobs[k].indexed)
                .then(|| live.pod.labels.get(COMPLETION_INDEX)?.parse().ok())
                .flatten();
            children[k]
                .template
                .get_or_insert_with(|| Arc::clone(&live.pod));
            tracked.push((id, k, index));
        }
        let control = Control {
            completion,
            children,
            duration,
            done: false,
        };
        self.controls.jobs.insert(job, control);
        for (id, child, index) in tracked {
            self.controls.track(id, job, child, index, false);
        }
    }

    /// A pod of `job` is gone: its controllers count it; a job without controllers is done
    /// when all its pods are.
    pub(super) fn job_pod_ended(&mut self, job: u32, id: u32, finished: bool) {
        let Some(t) = self.controls.pods.remove(&id) else {
            if let Some(j) = self.jobs.get_mut(&job) {
                j.ended += 1;
                if j.ended == j.pods {
                    let j = self.jobs.remove(&job).expect("the job is in flight");
                    if finished {
                        self.metrics.job_finished(j.key());
                    }
                    self.kueue_job_gone(j.kueue);
                }
            }
            return;
        };
        let replay = self.replay;
        let Some(control) = self.controls.jobs.get_mut(&t.job) else {
            return;
        };
        if control.done {
            return;
        }
        let spec = &replay.completions[control.completion].1.jobs[t.child];
        let child = &mut control.children[t.child];
        child.active.remove(&id);
        if finished {
            match t.index {
                // An index counts once, and only below `completions`.
                Some(ix) if spec.completions.is_some_and(|c| ix < c) => {
                    child.succeeded.insert(ix);
                }
                _ if !spec.indexed => child.succeeded_count += 1,
                _ => {}
            }
        }
        if !child.complete {
            self.controls.to_sync.insert((t.job, t.child));
        }
    }

    /// The controllers sync the Jobs whose pods ended at this instant.
    pub(super) fn sync_controllers(&mut self) {
        while let Some((job, k)) = self.controls.to_sync.pop_first() {
            let complete =
                (self.controls.jobs.get(&job)).is_none_or(|c| c.done || c.children[k].complete);
            if !complete {
                self.sync_job(job, k);
            }
        }
    }

    /// `syncJob` for one Job of `job`: its success policy, new pods, completion.
    fn sync_job(&mut self, job: u32, k: usize) {
        let replay = self.replay;
        let Some(control) = self.controls.jobs.get_mut(&job) else {
            return;
        };
        let spec = &replay.completions[control.completion].1.jobs[k];
        let child = &mut control.children[k];
        let succeeded = match spec.indexed {
            true => child.succeeded.len() as u32,
            false => child.succeeded_count,
        };
        let active = child.active.len() as u32;
        if spec.indexed && spec.success_criteria_met(&child.succeeded) {
            // SuccessCriteriaMet: the active pods are deleted, then the Job is complete.
            child.complete = true;
            let doomed: Vec<u32> = child.active.keys().copied().collect();
            for id in doomed {
                self.pod_gone(id, "deleted");
            }
            self.job_completed(job);
            return;
        }
        let want = spec.want_active(succeeded, active);
        for _ in active..want {
            if !self.make_pod(job, k) {
                break;
            }
        }
        let Some(child) = (self.controls.jobs.get_mut(&job)).map(|c| &mut c.children[k]) else {
            return;
        };
        if spec.complete(succeeded, child.active.len() as u32) {
            child.complete = true;
            self.job_completed(job);
        }
    }

    /// The Job controller creates a pod of Job `k` of `job`: an Indexed Job's at the lowest
    /// index neither succeeded nor active (`firstPendingIndexes`), named `<job>-<index>`; a
    /// NonIndexed Job's `<job>-<n>` for its n-th pod. `false` when it cannot.
    fn make_pod(&mut self, job: u32, k: usize) -> bool {
        let replay = self.replay;
        let Some(control) = self.controls.jobs.get_mut(&job) else {
            return false;
        };
        let (spec, duration) = (
            &replay.completions[control.completion].1.jobs[k],
            control.duration,
        );
        let child = &mut control.children[k];
        let Some(template) = child.template.clone() else {
            return false;
        };
        let index = match spec.indexed {
            true => {
                let taken: BTreeSet<u32> = child.active.values().flatten().copied().collect();
                let completions = spec.completions.unwrap_or(0);
                let free =
                    (0..completions).find(|i| !child.succeeded.contains(i) && !taken.contains(i));
                match free {
                    Some(i) => Some(i),
                    None => return false,
                }
            }
            false => None,
        };
        let suffix = index.unwrap_or(child.made);
        child.made += 1;
        let mut pod = (*template).clone();
        pod.name = format!("{}-{suffix}", spec.name);
        if !pod.uid.is_empty() {
            pod.uid = format!("{}-{suffix}", pod.uid);
        }
        if let Some(ix) = index {
            pod.labels
                .insert(COMPLETION_INDEX.to_string(), ix.to_string());
        }
        let Some(id) = self.new_pod(job, Arc::new(pod), None, duration, None, false) else {
            return false;
        };
        if let Some(j) = self.jobs.get(&job) {
            self.metrics.pod_arrived(j.key());
        }
        self.controls.track(id, job, k, index, true);
        true
    }

    /// A Job of `job` completed: if the JobSet's success policy is met
    /// (`executeSuccessPolicy`), its remaining pods are deleted and the job is finished.
    fn job_completed(&mut self, job: u32) {
        let replay = self.replay;
        let Some(control) = self.controls.jobs.get_mut(&job) else {
            return;
        };
        let c: &Completion = &replay.completions[control.completion].1;
        let succeeded = (c.jobs.iter().zip(&control.children))
            .filter(|(j, child)| child.complete && c.policy.targets(j))
            .count();
        if succeeded < c.policy.expected(&c.jobs) {
            return;
        }
        control.done = true;
        let doomed: Vec<u32> = (control.children.iter())
            .flat_map(|child| child.active.keys().copied())
            .collect();
        for id in doomed {
            self.pod_gone(id, "deleted");
        }
        self.controls.jobs.remove(&job);
        if let Some(j) = self.jobs.remove(&job) {
            self.metrics.job_finished(j.key());
            // A finished Workload releases its quota.
            self.kueue_job_gone(j.kueue);
        }
    }
}
