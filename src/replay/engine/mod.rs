//! The replay's event loop: a discrete-event simulation over virtual milliseconds. Jobs
//! arrive, their pods enter kube-scheduler's queue ([`crate::sched::queue`]), the queue pops
//! them one cycle at a time (each cycle taking `spec.replay.cycle`), bound pods run for their
//! duration and then succeed, freeing what they held, and the cluster events that follow move
//! pods back from the unschedulable pool as the plugins' queueing hints decide.
//!
//! At each instant, in this order: pods that finish or are withdrawn and gang members whose
//! wait at Permit times out ([`permit`]), timeline steps, arrivals, the Job controllers
//! ([`completion`]), the queue's timers (backoff and leftover flushes), Volcano's session when
//! its tick has come ([`volcano`]), then scheduling cycles until the queue has nothing to pop
//! or the scheduler is busy past the next event. Ties inside each kind keep input order, so
//! the run is deterministic.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BTreeSet, BinaryHeap, HashMap};
use std::rc::Rc;
use std::sync::Arc;

use crate::kueue::admission::live::Kueue;
use crate::load::Scenario;
use crate::load::replay::Replay;
use crate::model::Pod;
use crate::model::pod::GangScheduler;
use crate::replay::metrics::{GpuCount, Metrics, PodLife, Sample, pod_gpu_milli};
use crate::replay::source::{Plan, Sources, TimedStep};
use crate::sched::cluster::Cluster;
use crate::sched::cycle::{PodPhase, Scheduler, existing_pod_id};
use crate::sched::diagnosis::Diagnosis;
use crate::sched::hints::{self, Payload, PluginHints};
use crate::sched::plan::Requirement;
use crate::sched::plugins::registry::{ExtensionPoint, Plugin};
use crate::sched::queue::{
    Action, ClusterEvent, Failure, PodId, PriorityQueue, QueueConfig, QueuePod, QueueSort,
    Resource, Time, namespaced_name,
};

mod arrival;
mod completion;
mod kueue;
mod permit;
mod pods_ready;
mod preemption;
mod timeline;
mod volcano;

/// Where the replay writes as it goes.
#[derive(Default)]
pub struct Sinks<'o> {
    /// Each pod's record when it is gone (or at the end).
    pub pod_record: Option<&'o mut dyn FnMut(&PodRecord)>,
    /// Each sample of the time series, at the fixed step when one is set.
    pub sample: Option<&'o mut dyn FnMut(&Sample)>,
    /// The replay's clock, now and then (for a progress bar).
    pub progress: Option<&'o mut dyn FnMut(u64)>,
}

/// One pod's life, as `--pods-csv` writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodRecord {
    pub namespace: String,
    pub name: String,
    pub job: String,
    pub queue: String,
    pub priority: i32,
    pub class: String,
    /// Its GPUs (a share counts its milli).
    pub gpus: GpuCount,
    pub arrival: u64,
    /// When Kueue first admitted its job (its pods exist from then on); `None` without Kueue.
    pub admitted: Option<u64>,
    pub first_bind: Option<u64>,
    pub end: Option<u64>,
    pub node: Option<String>,
    pub attempts: u32,
    pub preemptions: u32,
    /// `finished`, `withdrawn`, `running`, `pending` or `queued` (the last three at the
    /// replay's end; `queued`: its job waits for Kueue), `deleted` (a timeline step deleted
    /// it, its job's controller once the job was done, or Kueue evicting a plain pod),
    /// `deactivated` (Kueue deactivated its job past `backoffLimitCount`).
    pub state: &'static str,
    /// A pod pending at the end: its last cycle's message (the `PodScheduled` condition's,
    /// `0/N nodes are available: …`); one queued at the end: its job's Kueue message (the
    /// Workload's `QuotaReserved` condition's, `couldn't assign flavors to pod set …`, or
    /// `Exceeded the PodsReady timeout …` during its backoff); a deactivated one: why.
    pub message: Option<String>,
}

/// What the replay ended with.
pub struct Ended {
    pub metrics: Metrics,
    /// When the last event happened (or `until`).
    pub end: u64,
    /// Scheduling attempts made.
    pub attempts: u64,
    /// Existing pods preempted or evicted.
    pub existing_evicted: u64,
    pub warnings: Vec<String>,
}

/// A pod in flight: from its arrival until it is gone.
struct Live {
    pod: Arc<Pod>,
    job: u32,
    scenario_pod: Option<usize>,
    arrival: u64,
    duration: Option<u64>,
    /// Bound: the node and since when.
    bound: Option<(usize, u64)>,
    /// The pod as bound (`spec.nodeName` set): what the scheduler's cache holds, and what
    /// the events of its binding and deletion carry (hints read the node name).
    assigned: Option<Arc<Pod>>,
    first_bind: Option<u64>,
    /// Time held GPUs in earlier runs (before a preemption or eviction).
    used_ms: u64,
    /// Bumped whenever a finish timer set for it no longer holds.
    generation: u32,
    attempts: u32,
    preemptions: u32,
    /// Its GPU milli (see `metrics::pod_gpu_milli`).
    gpus: i64,
    /// Its last failed cycle's message, until it binds.
    message: Option<Box<str>>,
    /// Created: not held back by `dependsOn`, nor waiting for Kueue.
    created: bool,
    /// Its job waits for Kueue's admission (the pod does not exist yet).
    queued: bool,
    /// A Kueue job's pod as its job's template gives it, before admission writes into it.
    template: Option<Arc<Pod>>,
}

/// A job in flight.
struct Job {
    name: String,
    queue: String,
    priority: i32,
    class: String,
    arrival: u64,
    pods: u32,
    /// Pods that have been bound at least once.
    started: u32,
    /// Pods gone.
    ended: u32,
    /// Its place in Kueue, while it is queued there or admitted.
    kueue: Option<usize>,
    /// When Kueue first admitted it.
    admitted: Option<u64>,
    /// Its pods (kept for a Kueue job, whose pods admission creates and preemption deletes).
    pod_ids: Vec<u32>,
    /// A TrainJob waiting for Kueue: admitted, it is resolved again with Kueue's patch.
    train_job: Option<Box<crate::resolve::trainjob::TrainJob>>,
    /// Its PodsReady as its integration counts it ([`pods_ready`]).
    readiness: pods_ready::Readiness,
}

impl Job {
    /// The groups its pods count in: (queue, priority, class).
    fn key(&self) -> (&str, i32, &str) {
        (&self.queue, self.priority, &self.class)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Timer {
    /// The pod's run is over (if its generation still holds).
    Finish(u32, u32),
    /// The trace withdrew the job: its pod is deleted, running or not.
    Withdraw(u32),
    /// A victim of preemption (pod id, generation) is past its grace period.
    Terminate(usize, u32),
    /// A gang member's wait at Permit is over (if it still waits, by this timer's number).
    Permit(u32, u32),
}

/// The replay.
pub struct Engine<'s, 'o> {
    scenario: &'s Scenario,
    replay: &'s Replay,
    s: Scheduler<'s>,
    queue: PriorityQueue<Payload>,
    now: u64,
    timers: BinaryHeap<Reverse<(u64, u64, Timer)>>,
    timer_seq: u64,
    live: HashMap<u32, Live>,
    jobs: HashMap<u32, Job>,
    /// The live id of each scenario workload pod once it arrived.
    scenario_ids: Vec<Option<u32>>,
    /// Scenario pods that ran to their end (for `dependsOn: Complete`).
    scenario_done: Vec<bool>,
    requires: Vec<Vec<Requirement>>,
    complete_after_run: Vec<bool>,
    /// Pods held back by `dependsOn`, in arrival order.
    held: Vec<u32>,
    next_pod: u32,
    next_job: u32,
    sources: Sources<'s>,
    steps: std::collections::VecDeque<TimedStep>,
    metrics: Metrics,
    sinks: Sinks<'o>,
    /// The plugins' QueueingHints and PreEnqueue, reading the pods in flight from `shared`.
    hints: PluginHints<Lookup>,
    shared: Shared,
    /// Coscheduling's gangs: members waiting at Permit, group backoff.
    gangs: permit::Gangs<'s>,
    /// Volcano's gangs, placed in its sessions.
    volcano: volcano::Volcano<'s>,
    /// The Job and JobSet controllers of the jobs that have them.
    controls: completion::Controls,
    attempts: u64,
    existing_evicted: u64,
    warnings: Vec<String>,
    /// The queue nominator's generation the scheduler's nominations were copied at.
    nominations_seen: u64,
    /// A limit the replay ran into: it stops with this.
    limit: Option<String>,
    /// The scenario's file, for that error.
    file: &'s std::path::Path,
    /// Kueue, when the scenario has its objects.
    kueue: Option<Kueue<'s>>,
    /// Kueue's place of a job → the job.
    kueue_jobs: HashMap<usize, u32>,
    /// Something Kueue reads changed since its last cycles.
    kueue_dirty: bool,
    /// Jobs Kueue never queues (no such LocalQueue, …): how many, and the first one's reason.
    never_queued: (u64, Option<String>),
}

impl<'s, 'o> Engine<'s, 'o> {
    pub fn new(
        scenario: &'s Scenario,
        replay: &'s Replay,
        plan: Plan,
        sources: Sources<'s>,
        sinks: Sinks<'o>,
    ) -> Self {
        let existing = &scenario.existing_pods;
        let all: Vec<&Pod> = existing.iter().collect();
        let cluster = Cluster::new(scenario.nodes.clone(), &all);
        let mut s = Scheduler::new(cluster, &scenario.config, &[], existing);
        s.let_victims_terminate();
        let mut metrics = Metrics::new(&scenario.nodes, replay.sample_ms);
        for (i, p) in existing.iter().enumerate() {
            if let Some(node) = p.node_name.as_deref().and_then(|n| s.cluster.index_of(n)) {
                s.bind(node, existing_pod_id(i), p);
                metrics.bound(node, pod_gpu_milli(p));
            }
        }
        metrics.declare_pools(crate::replay::added_nodes(&scenario.steps));
        let profiles = scenario.config.profiles();
        let shared: Shared = Rc::default();
        let lookup = Rc::clone(&shared);
        let lookup: Lookup = Box::new(move |id: PodId| lookup.borrow().get(&id.0).cloned());
        let config = QueueConfig {
            max_in_unschedulable_ms: replay.max_in_unschedulable_ms,
            queue_sort: queue_sort(scenario),
            ..queue_config(&profiles[0])
        };
        let n = scenario.workloads.len();
        Engine {
            scenario,
            replay,
            s,
            queue: PriorityQueue::new(config, registry(&scenario.config)),
            hints: PluginHints::new(lookup, &scenario.config),
            shared,
            gangs: permit::Gangs::new(&scenario.config, existing),
            volcano: volcano::Volcano::new(
                &scenario.config.pod_groups,
                existing,
                replay.volcano_period_ms,
            ),
            controls: completion::Controls::default(),
            now: 0,
            timers: BinaryHeap::new(),
            timer_seq: 0,
            live: HashMap::new(),
            jobs: HashMap::new(),
            scenario_ids: vec![None; n],
            scenario_done: vec![false; n],
            requires: plan.requires,
            complete_after_run: plan.complete_after_run,
            held: Vec::new(),
            next_pod: 0,
            next_job: 0,
            sources,
            steps: plan.steps.into(),
            metrics,
            sinks,
            attempts: 0,
            existing_evicted: 0,
            warnings: Vec::new(),
            nominations_seen: 0,
            limit: None,
            file: &scenario.file,
            kueue: (replay.kueue.as_deref()).map(|objects| {
                let config = &scenario.config;
                Kueue::new(objects, &config.namespaces, &config.feature_gates)
            }),
            kueue_jobs: HashMap::new(),
            kueue_dirty: false,
            never_queued: (0, None),
        }
    }

    /// Runs the replay to its end.
    pub fn run(mut self) -> Result<Ended, crate::error::InputError> {
        let until = self.replay.until_ms.unwrap_or(u64::MAX);
        let mut last_progress = 0;
        loop {
            self.schedule_due();
            let Some(next) = self.next_event() else {
                self.warn_spinning();
                break;
            };
            if next > until {
                self.advance(until);
                break;
            }
            self.happen(next);
            if let Some(e) = self.stopped() {
                return Err(e);
            }
            self.flush_queue();
            if let Some(p) = self.sinks.progress.as_mut()
                && self.now >= last_progress + 60_000
            {
                p(self.now);
                last_progress = self.now;
            }
        }
        match self.stopped() {
            Some(e) => Err(e),
            None => Ok(self.end()),
        }
    }

    /// Why the replay must stop: the trace's first bad row, or a limit it ran into.
    fn stopped(&mut self) -> Option<crate::error::InputError> {
        let limit = self.limit.take();
        (self.sources.error.take()).or_else(|| {
            limit.map(|m| crate::error::InputError::new(self.file, m).field("spec.replay"))
        })
    }

    /// The time of the next finish, withdrawal, Permit timeout, timeline step or arrival.
    fn next_external(&mut self) -> Option<u64> {
        self.drop_stale_timers();
        let timer = self.timers.peek().map(|Reverse((t, _, _))| *t);
        let step = self.steps.front().map(|s| s.at);
        let arrival = self.sources.next_time();
        let kueue = self.kueue.as_mut().and_then(Kueue::next_timer);
        // Something Kueue must answer at once (a cycle waiting for PodsReady may go on).
        let kueue_now = self.kueue_dirty.then_some(self.now);
        if step.is_none()
            && arrival.is_none()
            && kueue_now.is_none()
            && !self.kueue.as_mut().is_some_and(Kueue::timers_may_change)
            && self.gangs.only_permit_timers(self.timers.len())
            && !self.gangs.timeouts_may_change()
        {
            return None;
        }
        [timer, step, arrival, kueue, kueue_now]
            .into_iter()
            .flatten()
            .min()
    }

    /// Moves the clock to `t` and lets what is due then happen: finishes and withdrawals,
    /// timeline steps, arrivals, then the Job controllers.
    fn happen(&mut self, t: u64) {
        self.advance(t);
        self.finish_due();
        self.steps_due();
        self.arrivals_due();
        self.sync_controllers();
        self.kueue_due();
    }

    /// The time of the next thing that can change anything; `None` when nothing can.
    fn next_event(&mut self) -> Option<u64> {
        let volcano = self.volcano_next();
        // With nothing left to happen outside the queue, its timers would only retry pods on
        // a cluster that no longer changes: the replay is over, but for a Volcano session
        // that has something new to see.
        let Some(external) = self.next_external() else {
            return volcano;
        };
        let queue_timer = self.queue.next_timer(Time(self.now)).map(|t| t.0);
        [Some(external), queue_timer, volcano]
            .into_iter()
            .flatten()
            .min()
    }

    /// Moves the clock to `t`: samples and GPU time up to it.
    fn advance(&mut self, t: u64) {
        let t = t.max(self.now);
        if let Some(points) = self.metrics.stream_points_until(t)
            && crate::limits::SERIES_POINTS.exceeded_by(points)
        {
            let limit = crate::limits::SERIES_POINTS;
            self.limit.get_or_insert(limit.message(format!(
                "{points} samples at spec.replay.sample's step (write a longer step)"
            )));
            return;
        }
        let sink = &mut self.sinks.sample;
        self.metrics.sample_until(t, &mut |s| {
            if let Some(f) = sink.as_mut() {
                f(s)
            }
        });
        self.metrics.advance(t);
        self.now = t;
    }

    /// Drops the timers at the head that no longer hold (their pod is gone, was evicted, or
    /// no longer waits at Permit): the replay does not visit their time.
    fn drop_stale_timers(&mut self) {
        while let Some(Reverse((_, _, timer))) = self.timers.peek().copied() {
            let holds = match timer {
                Timer::Finish(id, generation) => {
                    (self.live.get(&id)).is_some_and(|l| l.generation == generation)
                }
                Timer::Withdraw(id) => self.live.contains_key(&id),
                Timer::Permit(id, seq) => self.permit_timer_holds(id, seq),
                // An existing victim's timer always holds (see `terminated`).
                Timer::Terminate(victim, generation) => {
                    victim > u32::MAX as usize
                        || (self.live.get(&(victim as u32)))
                            .is_some_and(|l| l.generation == generation && l.bound.is_some())
                }
            };
            if holds {
                return;
            }
            self.timers.pop();
            if let Timer::Permit(..) = timer {
                self.gangs.disarm();
            }
        }
    }

    fn add_timer(&mut self, at: u64, timer: Timer) {
        self.timer_seq += 1;
        self.timers.push(Reverse((at, self.timer_seq, timer)));
    }

    fn finish_due(&mut self) {
        while let Some(Reverse((t, _, timer))) = self.timers.peek().copied() {
            if t > self.now {
                break;
            }
            self.timers.pop();
            match timer {
                Timer::Finish(id, generation) => {
                    if self
                        .live
                        .get(&id)
                        .is_some_and(|l| l.generation == generation)
                    {
                        self.pod_gone(id, "finished");
                    }
                }
                Timer::Withdraw(id) => {
                    if self.live.contains_key(&id) {
                        self.pod_gone(id, "withdrawn");
                    }
                }
                Timer::Terminate(victim, generation) => self.terminated(victim, generation),
                Timer::Permit(id, seq) => self.permit_timeout(id, seq),
            }
        }
    }

    fn steps_due(&mut self) {
        while self.steps.front().is_some_and(|s| s.at <= self.now) {
            let step = self.steps.pop_front().expect("a step is due");
            for event in &step.events {
                self.event(event, &step.name);
            }
            if let Some(kueue) = &mut self.kueue
                && kueue.update(step.index, self.now)
            {
                self.kueue_dirty = true;
            }
        }
    }

    fn arrivals_due(&mut self) {
        while let Some(arrival) = self.sources.pop_due(self.now) {
            self.arrive(arrival);
        }
    }

    fn flush_queue(&mut self) {
        self.queue
            .flush(Time(self.now), &self.hints, &Payload::None);
    }

    /// Volcano's session if its tick has come, then scheduling cycles at `now`, while the
    /// queue has a pod to pop. A cycle that takes time moves the clock past the events in
    /// between (the pod is in flight meanwhile); a session whose tick it passed runs after it.
    fn schedule_due(&mut self) {
        loop {
            self.volcano_due();
            let Some(popped) = self.queue.pop(Time(self.now)) else {
                return;
            };
            self.attempts += 1;
            let id = popped.pod.id.0;
            self.cycle(id);
        }
    }

    /// One scheduling cycle of pod `id`.
    fn cycle(&mut self, id: u32) {
        let Some(live) = self.live.get_mut(&id) else {
            self.queue.done(PodId(id));
            return;
        };
        live.attempts += 1;
        let pod = Arc::clone(&live.pod);
        self.sync_nominations();
        let mut outcome = self.schedule(id, &pod);
        let decided = self.decided(&outcome);
        let end = self.now + self.replay.cycle_ms;
        let mut node = outcome.node;
        if self.replay.cycle_ms > 0 {
            // The chosen node by name: a timeline step during the cycle may renumber the
            // nodes, or remove it (the binding then fails and the pod is retried, as an error).
            let chosen = node.map(|n| self.s.cluster.nodes[n].name.clone());
            // Events due while the cycle runs reach the queue as in-flight events.
            self.run_events_before(end);
            self.advance(end);
            node = chosen.and_then(|n| self.s.cluster.index_of(&n));
        }
        match (outcome.phase, node) {
            (PodPhase::Scheduled, Some(node)) => {
                if !self.waits_at_permit(id, node) {
                    self.queue.done(PodId(id));
                    self.bind(id, node);
                }
            }
            (phase, _) => {
                if let Some(live) = self.live.get_mut(&id) {
                    live.message = Some(std::mem::take(&mut outcome.message).into_boxed_str());
                }
                // An error (or a binding that failed) names no rejector: error backoff.
                let failure = Failure {
                    unschedulable_plugins: (outcome.diagnosis.as_deref())
                        .filter(|_| {
                            !matches!(phase, PodPhase::SchedulerError | PodPhase::Scheduled)
                        })
                        .map(Diagnosis::unschedulable_plugins)
                        .unwrap_or_default(),
                    ..Failure::default()
                };
                self.unschedulable(id, &pod, failure);
                self.after_failure(id, decided);
            }
        }
    }

    /// Processes the finishes, steps and arrivals due before `end` (a cycle in progress).
    fn run_events_before(&mut self, end: u64) {
        while let Some(next) = self.next_external().filter(|t| *t < end) {
            self.happen(next);
            // What happened at `next` is for Volcano's first tick after it, whose session
            // waits for the cycle to end.
            self.volcano_note();
        }
    }

    fn bind(&mut self, id: u32, node: usize) {
        self.assume(id, node);
        self.bind_assumed(id, node);
    }

    /// Binds a pod the scheduler's cache assumed on `node`.
    fn bind_assumed(&mut self, id: u32, node: usize) {
        self.nomination_bound(id);
        let now = self.now;
        let Some(live) = self.live.get_mut(&id) else {
            return;
        };
        let pod = Arc::clone(&live.pod);
        let assigned = Arc::new(Pod {
            node_name: Some(self.s.cluster.nodes[node].name.clone()),
            ..(*pod).clone()
        });
        live.assigned = Some(Arc::clone(&assigned));
        live.bound = Some((node, now));
        let first = live.first_bind.is_none();
        live.first_bind.get_or_insert(now);
        live.message = None;
        let (job_id, gpus, arrival) = (live.job, live.gpus, live.arrival);
        if let Some(d) = live.duration {
            let generation = live.generation;
            self.add_timer(now.saturating_add(d), Timer::Finish(id, generation));
        }
        self.metrics.running += 1;
        self.metrics.pending_removed(gpus);
        let made = self.controls.made_by_controller(id);
        self.job_pods_changed(job_id, 1, 0);
        if let Some(job) = self.jobs.get_mut(&job_id)
            && first
            && !made
        {
            job.started += 1;
            self.metrics.pod_started(job.key(), now - arrival);
            if job.started == job.pods {
                self.metrics.job_started(job.key(), now - job.arrival);
            }
        }
        self.cluster_event(
            ClusterEvent::new(Resource::AssignedPod, Action::ADD),
            Payload::Pod {
                old: None,
                new: Some(assigned),
            },
        );
        self.release_held();
    }

    /// Takes a bound pod off its node (it keeps its record).
    fn unbind(&mut self, id: u32) -> Option<Arc<Pod>> {
        let now = self.now;
        let live = self.live.get_mut(&id)?;
        let (node, since) = live.bound.take()?;
        live.used_ms += now - since;
        live.generation += 1;
        let pod = live
            .assigned
            .take()
            .unwrap_or_else(|| Arc::clone(&live.pod));
        let (gpus, job) = (live.gpus, live.job);
        self.s.unbind(node, id as usize);
        self.s.dra_pod_deleted(id as usize);
        self.metrics.unbound(node, gpus);
        self.metrics.running -= 1;
        self.job_pods_changed(job, -1, 0);
        Some(pod)
    }

    /// How many of the pods `ids` are bound (a gang's members, for its quorum).
    fn bound_among(&self, ids: &BTreeSet<u32>) -> usize {
        (ids.iter())
            .filter(|id| self.live.get(id).is_some_and(|l| l.bound.is_some()))
            .count()
    }

    /// The pod is gone for good: finished, withdrawn or deleted.
    fn pod_gone(&mut self, id: u32, state: &'static str) {
        self.gang_pod_gone(id);
        self.volcano_pod_gone(id, state == "finished");
        let node = self.live.get(&id).and_then(|l| l.bound).map(|(n, _)| n);
        let was_bound = node.is_some();
        self.pod_ending(id, state == "finished");
        let pod = self.unbind(id);
        let Some(live) = self.live.remove(&id) else {
            return;
        };
        if live.queued {
            self.metrics.queued -= 1;
        } else if !was_bound {
            self.metrics.pending_removed(live.gpus);
            self.queue.delete(PodId(id));
            if live.pod.nominated_node_name.is_some() {
                self.nomination_gone(&live.pod);
            }
        }
        self.s.budgets.delete(id as usize, &live.pod);
        self.s.forget(id as usize);
        self.shared.borrow_mut().remove(&id);
        let finished = state == "finished";
        if let Some(i) = live.scenario_pod
            && finished
        {
            self.scenario_done[i] = true;
        }
        self.record(&live, node, state);
        self.job_pod_ended(live.job, id, finished);
        if was_bound {
            self.assigned_pod_deleted(pod);
        }
        self.release_held();
    }

    /// Folds a pod's life into the metrics and hands its record to the sink.
    fn record(&mut self, live: &Live, node: Option<usize>, state: &'static str) {
        let Some(job) = self.jobs.get(&live.job) else {
            return;
        };
        let life = PodLife {
            arrival: live.arrival,
            first_bind: live.first_bind,
            gpus: live.gpus,
            requested_ms: live.duration,
            used_ms: live.used_ms,
            preemptions: live.preemptions,
        };
        let key = job.key();
        let finished = state == "finished";
        self.metrics
            .pod_ended(key, life, finished, state == "withdrawn", self.now);
        if let Some(sink) = self.sinks.pod_record.as_mut() {
            sink(&PodRecord {
                namespace: live.pod.namespace.clone(),
                name: live.pod.name.clone(),
                job: job.name.clone(),
                queue: job.queue.clone(),
                priority: job.priority,
                class: job.class.clone(),
                gpus: GpuCount(live.gpus),
                arrival: live.arrival,
                admitted: job.admitted,
                first_bind: live.first_bind,
                end: matches!(state, "finished" | "withdrawn" | "deleted" | "deactivated")
                    .then_some(self.now),
                node: node.map(|n| self.s.cluster.nodes[n].name.clone()),
                attempts: live.attempts,
                preemptions: live.preemptions,
                state,
                message: match state {
                    "pending" => live.message.as_deref().map(str::to_string),
                    "queued" | "deactivated" => (job.kueue.zip(self.kueue.as_ref()))
                        .map(|(slot, kueue)| kueue.message(slot))
                        .filter(|m| !m.is_empty()),
                    _ => None,
                },
            });
        }
    }

    /// An assigned pod left its node: the event that moves pods rejected for lack of room.
    fn assigned_pod_deleted(&mut self, pod: Option<Arc<Pod>>) {
        self.cluster_event(
            ClusterEvent::new(Resource::AssignedPod, Action::DELETE),
            Payload::Pod {
                old: pod,
                new: None,
            },
        );
    }

    fn cluster_event(&mut self, event: ClusterEvent, payload: Payload) {
        self.gangs.cluster_changed();
        self.queue.move_all_to_active_or_backoff(
            Time(self.now),
            event,
            &payload,
            None,
            &self.hints,
        );
    }

    /// The replay is over: pods still here are recorded as running or pending.
    fn end(mut self) -> Ended {
        self.advance(self.now);
        let mut ids: Vec<u32> = self.live.keys().copied().collect();
        ids.sort_unstable();
        for id in ids {
            let (bound, since) = match self.live.get(&id).and_then(|l| l.bound) {
                Some((n, since)) => (Some(n), since),
                None => (None, 0),
            };
            let Some(mut live) = self.live.remove(&id) else {
                continue;
            };
            if bound.is_some() {
                live.used_ms += self.now - since;
            }
            let state = match (bound, live.queued) {
                (Some(_), _) => "running",
                (None, true) => "queued",
                (None, false) => "pending",
            };
            self.record(&live, bound, state);
            self.live.insert(id, live);
        }
        let sink = &mut self.sinks.sample;
        self.metrics.finish(self.now, &mut |s| {
            if let Some(f) = sink.as_mut() {
                f(s)
            }
        });
        self.warnings.extend(self.sources.trace_warnings());
        if let (n @ 1.., Some(why)) = &self.never_queued {
            self.warnings.push(format!(
                "{n} jobs name a LocalQueue Kueue cannot queue them in; they never start (the first: {why})"
            ));
        }
        Ended {
            metrics: self.metrics,
            end: self.now,
            attempts: self.attempts,
            existing_evicted: self.existing_evicted,
            warnings: self.warnings,
        }
    }
}

/// The pods in flight as the plugins' hints look them up.
type Shared = Rc<RefCell<HashMap<u32, Arc<Pod>>>>;
type Lookup = Box<dyn Fn(PodId) -> Option<Arc<Pod>>>;

/// One queue serves every profile: it holds the events any of them registered.
fn registry(config: &crate::sched::SchedulerConfig) -> crate::sched::queue::HintRegistry {
    let entries = (config.profiles().iter())
        .flat_map(|p| hints::registry(p, &config.feature_gates).entries().to_vec())
        .collect();
    crate::sched::queue::HintRegistry::new(entries)
}

/// What the queue needs of a pod.
pub(super) fn queue_pod(id: u32, pod: &Pod) -> QueuePod {
    QueuePod {
        id: PodId(id),
        priority: pod.priority,
        namespaced_name: namespaced_name(&pod.namespace, &pod.name),
        nominated_node: pod.nominated_node_name.clone(),
        pod_group: (pod.pod_group.as_ref())
            .filter(|g| g.scheduler == GangScheduler::Coscheduling)
            .map(|g| format!("{}/{}", pod.namespace, g.name)),
    }
}

/// The profiles' common QueueSort plugin (`validateCommonQueueSort` makes it one). Without
/// a KubeSchedulerConfiguration (`serves_every_pod`) the scenario stands for upstream's
/// default scheduler, which runs Coscheduling as its sample configuration does (queueSort
/// included) when the scenario's pods name Coscheduling gangs, and PrioritySort otherwise.
fn queue_sort(scenario: &Scenario) -> QueueSort {
    let config = &scenario.config;
    let coscheduling = match config.profiles.first() {
        Some(p) if !config.serves_every_pod => {
            (p.framework.at(ExtensionPoint::QueueSort)).contains(&Plugin::Coscheduling)
        }
        _ => (scenario.workloads.iter()).any(|p| {
            (p.pod_group.as_ref()).is_some_and(|g| g.scheduler == GangScheduler::Coscheduling)
        }),
    };
    match coscheduling {
        true => QueueSort::Coscheduling,
        false => QueueSort::PrioritySort,
    }
}

/// The queue's backoff from the KubeSchedulerConfiguration.
fn queue_config(profile: &crate::sched::profile::Profile) -> QueueConfig {
    let (initial, max) = profile.backoff_seconds;
    QueueConfig {
        initial_backoff_ms: initial * 1000,
        max_backoff_ms: max * 1000,
        ..QueueConfig::default()
    }
}
