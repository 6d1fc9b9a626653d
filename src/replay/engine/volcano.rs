//! Volcano gangs over time: Volcano's scheduler places a PodGroup's pods all together, in
//! sessions, on kube-scheduler's filters (as `run` does, [`crate::sched::gang`]).
//!
//! Followed upstream (volcano-sh/volcano, read at ed72c7c8, August 2026):
//! - **Sessions.** `pkg/scheduler/scheduler.go` runs `runOnce` under `wait.Until` every
//!   `schedulePeriod` (`--schedule-period`, default 1 s: `defaultSchedulerPeriod` in
//!   `cmd/scheduler/app/options/options.go`), each a session of the configured actions
//!   (`DefaultSchedulerConf` in `pkg/scheduler/util.go`: `enqueue, allocate, backfill`;
//!   plugins `priority, gang, conformance` then `overcommit, drf, predicates, proportion,
//!   nodeorder`). The replay's sessions are at whole multiples of the period
//!   (`spec.replay.volcanoSchedulePeriod`) after its start: a gang that arrives, or that
//!   the cluster makes room for, binds at the first such tick at or after that instant.
//! - **Job order.** The allocate action (`pkg/scheduler/actions/allocate/allocate.go`) pops
//!   jobs by the session's `JobOrderFn` (`pkg/scheduler/framework/session_plugins.go`): the
//!   priority plugin's (higher first, `plugins/priority/priority.go`), then the gang
//!   plugin's (jobs not ready before ready ones, `plugins/gang/gang.go`), then the PodGroup's
//!   creation time, then its UID. Here the job's priority is its pods' highest (Volcano reads
//!   the PodGroup's `priorityClassName`, which Kubeflow Trainer copies from the pod
//!   templates), its creation is when its first pod was created, and the order in which
//!   the PodGroups were created stands for the UID. Its tasks go by priority, then creation
//!   (the pod's number in the replay).
//! - **All or nothing.** A job's turn allocates its pending tasks one by one into a
//!   statement; the gang plugin's `JobReady` (`ReadyTaskNum() >= MinAvailable`: bound,
//!   running and succeeded tasks plus those just allocated) commits it, otherwise it is
//!   discarded and nothing binds (the PodGroup gets the `Unschedulable` condition,
//!   `OnSessionClose`). The turn stops at the task that makes the job ready
//!   (`SubJobReady` breaks the task loop), and a ready job with tasks left goes back into
//!   the job queue behind the jobs not ready: so a gang with `minMember` below its size
//!   takes its quorum first and one more task per turn after the other gangs had theirs.
//!   Each turn is [`gang::schedule`] with `stop_when_ready`, the same function `run` uses,
//!   so a gang that cannot be placed says what it says in `run` (`schedsim: Volcano's gang
//!   plugin binds none of PodGroup …`; a task that fits nowhere keeps its `0/N nodes …`).
//!   A task that failed in a session is not tried again in it (`TaskHasFitErrors`).
//!
//! **When sessions run.** A session reads the cluster (what the scheduler's
//! [`mutations`](crate::sched::cycle::Scheduler::mutations) count) and the pending tasks; one
//! that found both as the last session left them would try the same tasks on the same nodes
//! and bind nothing (only a score tie broken another way could place a gang otherwise). So
//! the replay runs a session only at the first tick after either changed (a pod bound or
//! gone, a node added or changed, a nomination, a task created, requeued or ungated): a gang
//! that cannot fit costs nothing while the cluster stands still, and a replay with nothing
//! else left to happen ends with it pending. kube-scheduler's cycles and Volcano's sessions
//! never overlap: with `spec.replay.cycle`, a tick that falls inside a cycle has its session
//! when that cycle ends. At one instant a session runs before kube-scheduler's cycles. The
//! filters count kube-scheduler's nominated pods on their nodes, as they do for any pod
//! (Volcano, a scheduler of its own, does not see them).
//!
//! **Not simulated**: Volcano's own predicates, node order and messages (kube-scheduler's
//! filters and scores place the tasks, as in `run`); the `enqueue` action and its
//! `overcommit` check (every PodGroup is `Inqueue` as soon as it exists); Volcano Queues and
//! the `proportion` plugin's shares; `drf`'s share order among jobs of equal priority and
//! readiness; `backfill`, `preempt` and `reclaim` (a gang never preempts; kube-scheduler may
//! still preempt a bound member for one of its own pods, which is then created again and
//! waits for a session); pipelining onto releasing resources; `gang`'s `JobValid` (a gang
//! with fewer pods than `minMember` is tried and fails, as in `run`); network topologies and
//! sub-groups.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use super::Engine;
use crate::model::Pod;
use crate::model::pod::GangScheduler;
use crate::model::pod_group::{PodGroup, PodGroupKey, PodGroups, group_of, key_of};
use crate::sched::cycle::PodPhase;
use crate::sched::gang;

/// Volcano's scheduler in a replay: its gangs, and what its last session saw.
pub(super) struct Volcano<'s> {
    pod_groups: &'s PodGroups,
    existing: &'s [Pod],
    /// `schedulePeriod` (ms, more than 0).
    period: u64,
    jobs: BTreeMap<PodGroupKey, Job>,
    /// Each created pod of a Volcano gang: its group.
    member_of: HashMap<u32, PodGroupKey>,
    /// The tick of the last session.
    last_tick: Option<u64>,
    /// The tick of the next session, once a change since the last one was noticed.
    due: Option<u64>,
    /// The scheduler's mutations when the last session ended.
    seen: Option<u64>,
    /// A task was created, requeued or ungated since the last session.
    changed: bool,
    /// Tasks waiting for a session, in all jobs.
    waiting: usize,
    /// PodGroups created so far: each one's number stands for its UID in the job order.
    created: u64,
}

/// One PodGroup and its pods.
struct Job {
    group: PodGroup,
    /// When its first pod was created (ms).
    created: u64,
    /// Its number among the PodGroups created.
    seq: u64,
    /// Its pods that exist (created, not gone).
    members: BTreeSet<u32>,
    /// Those waiting for a session (not bound).
    pending: BTreeSet<u32>,
    /// Its pods that succeeded: `ReadyTaskNum` counts them.
    succeeded: usize,
    /// Its pods among the scenario's existing pods, and how many of them are bound.
    existing: usize,
    existing_bound: usize,
}

/// A job's place in a session's job order (smallest first): priority, readiness, creation,
/// number.
type Order = (Reverse<i32>, bool, u64, u64, PodGroupKey);

impl<'s> Volcano<'s> {
    pub(super) fn new(pod_groups: &'s PodGroups, existing: &'s [Pod], period: u64) -> Self {
        Volcano {
            pod_groups,
            existing,
            period: period.max(1),
            jobs: BTreeMap::new(),
            member_of: HashMap::new(),
            last_tick: None,
            due: None,
            seen: None,
            changed: false,
            waiting: 0,
            created: 0,
        }
    }

    /// Whether Volcano schedules `id`: a member of a Volcano PodGroup that exists.
    pub(super) fn schedules(&self, id: u32) -> bool {
        self.member_of.contains_key(&id)
    }

    /// When the next session is due, if one may change anything: the tick noted, or else,
    /// once the cluster (`mutations`) or the pending tasks changed since the last session,
    /// the first tick at or after `now` past the last session's.
    fn next_session(&self, now: u64, mutations: u64) -> Option<u64> {
        if self.waiting == 0 {
            return None;
        }
        if self.due.is_some() {
            return self.due;
        }
        if !self.changed && self.seen == Some(mutations) {
            return None;
        }
        let first = now.div_ceil(self.period).saturating_mul(self.period);
        let after_last = (self.last_tick).map_or(0, |t| t.saturating_add(self.period));
        Some(first.max(after_last))
    }

    /// Notes at `now` the tick whose session will see what changed (kept while
    /// kube-scheduler's cycle in flight moves the clock past it).
    fn note(&mut self, now: u64, mutations: u64) {
        self.due = self.next_session(now, mutations);
    }

    /// A pod is created at `now`: a member of a Volcano PodGroup joins its job (created with
    /// it when it is the first). `false` when Volcano does not schedule it.
    fn created(&mut self, id: u32, pod: &Pod, now: u64) -> bool {
        let Some(group) = group_of(pod, self.pod_groups) else {
            return false;
        };
        if group.scheduler != GangScheduler::Volcano {
            return false;
        }
        let key = group.key();
        if !self.jobs.contains_key(&key) {
            let mine = || (self.existing.iter()).filter(|p| key_of(p).as_ref() == Some(&key));
            let job = Job {
                created: now,
                seq: self.created,
                members: BTreeSet::new(),
                pending: BTreeSet::new(),
                succeeded: 0,
                existing: mine().count(),
                existing_bound: mine().filter(|p| p.node_name.is_some()).count(),
                group,
            };
            self.created += 1;
            self.jobs.insert(key.clone(), job);
        }
        let Some(job) = self.jobs.get_mut(&key) else {
            return false;
        };
        job.members.insert(id);
        self.member_of.insert(id, key);
        true
    }

    /// Task `id` waits for a session (created, evicted or preempted).
    fn queue(&mut self, id: u32) {
        if let Some(job) = self.member_of.get(&id).and_then(|k| self.jobs.get_mut(k))
            && job.pending.insert(id)
        {
            self.waiting += 1;
            self.changed = true;
        }
    }

    /// Task `id` is bound: it no longer waits.
    fn bound(&mut self, id: u32) {
        if let Some(job) = self.member_of.get(&id).and_then(|k| self.jobs.get_mut(k))
            && job.pending.remove(&id)
        {
            self.waiting -= 1;
        }
    }

    /// Task `id` no longer exists (`succeeded`: it ran to its end). A PodGroup left without
    /// pods is forgotten.
    fn gone(&mut self, id: u32, succeeded: bool) {
        let Some(key) = self.member_of.remove(&id) else {
            return;
        };
        if let Some(job) = self.jobs.get_mut(&key) {
            job.members.remove(&id);
            if job.pending.remove(&id) {
                self.waiting -= 1;
            }
            job.succeeded += usize::from(succeeded);
            if job.members.is_empty() {
                self.jobs.remove(&key);
            }
        }
    }
}

impl Engine<'_, '_> {
    /// A pod is created: a Volcano task waits for a session, any other pod enters
    /// kube-scheduler's queue.
    pub(super) fn volcano_created(&mut self, id: u32) -> bool {
        let Some(pod) = self.live.get(&id).map(|l| Arc::clone(&l.pod)) else {
            return false;
        };
        let volcano = self.volcano.created(id, &pod, self.now);
        if volcano {
            self.volcano.queue(id);
        }
        volcano
    }

    /// A pod created before waits again for its scheduler (evicted, preempted): Volcano's
    /// next session or kube-scheduler's queue.
    pub(super) fn requeue_pod(&mut self, id: u32, pod: &Pod) {
        match self.volcano.schedules(id) {
            true => self.volcano.queue(id),
            false => {
                let pod = super::queue_pod(id, pod);
                let _ = self
                    .queue
                    .add(crate::sched::queue::Time(self.now), pod, &self.hints);
            }
        }
    }

    /// A Volcano task's scheduling gates were lifted: the next session may place it.
    /// `false` when Volcano does not schedule the pod.
    pub(super) fn volcano_ungated(&mut self, id: u32) -> bool {
        let volcano = self.volcano.schedules(id);
        self.volcano.changed |= volcano;
        volcano
    }

    /// A pod is gone for good (`finished`: it succeeded) or deleted to be created anew.
    pub(super) fn volcano_pod_gone(&mut self, id: u32, finished: bool) {
        self.volcano.gone(id, finished);
    }

    /// Notes the tick whose session will see what changed until now.
    pub(super) fn volcano_note(&mut self) {
        self.volcano.note(self.now, self.s.mutations());
    }

    /// Runs Volcano's session if its tick has come (or passed, during a cycle).
    pub(super) fn volcano_due(&mut self) {
        self.volcano_note();
        if let Some(tick) = self.volcano.due.filter(|t| *t <= self.now) {
            self.volcano_session(tick);
        }
    }

    /// The time of Volcano's next session, if one may change anything.
    pub(super) fn volcano_next(&self) -> Option<u64> {
        self.volcano.next_session(self.now, self.s.mutations())
    }

    /// One session's allocate action: each job's turn in the job order (see the module doc).
    fn volcano_session(&mut self, tick: u64) {
        self.sync_nominations();
        let mut order: BTreeSet<Order> = BTreeSet::new();
        let keys: Vec<PodGroupKey> = self.volcano.jobs.keys().cloned().collect();
        for key in keys {
            if let Some(place) = self.volcano_order(&key) {
                order.insert(place);
            }
        }
        // Tasks that failed in this session (`TaskHasFitErrors`): not tried again in it.
        let mut failed: BTreeSet<u32> = BTreeSet::new();
        while let Some(place) = order.pop_first() {
            let key = place.4;
            if self.volcano_turn(&key, &mut failed)
                && let Some(place) = self.volcano_order(&key)
            {
                order.insert(place);
            }
        }
        self.volcano.last_tick = Some(tick);
        self.volcano.due = None;
        self.volcano.seen = Some(self.s.mutations());
        self.volcano.changed = false;
    }

    /// Job `key`'s place in the job order, `None` when it has no pending task.
    fn volcano_order(&self, key: &PodGroupKey) -> Option<Order> {
        let job = self.volcano.jobs.get(key)?;
        if job.pending.is_empty() {
            return None;
        }
        let priority = (job.members.iter())
            .filter_map(|m| self.live.get(m).map(|l| l.pod.priority))
            .max()
            .unwrap_or(0);
        let ready = self.volcano_ready(key) >= job.group.min_member as usize;
        Some((Reverse(priority), ready, job.created, job.seq, key.clone()))
    }

    /// `ReadyTaskNum`: the job's tasks bound (its existing pods included) or succeeded.
    fn volcano_ready(&self, key: &PodGroupKey) -> usize {
        let Some(job) = self.volcano.jobs.get(key) else {
            return 0;
        };
        self.bound_among(&job.members) + job.succeeded + job.existing_bound
    }

    /// One turn of job `key`: its pending tasks not yet `failed` in this session and not
    /// gated are allocated until the job is ready, then committed (bound) or discarded.
    /// Returns whether it committed any and has tasks left to try (it goes back into the
    /// job order).
    fn volcano_turn(&mut self, key: &PodGroupKey, failed: &mut BTreeSet<u32>) -> bool {
        let Some(job) = self.volcano.jobs.get(key) else {
            return false;
        };
        let group = job.group.clone();
        let mut tasks: Vec<(u32, Arc<Pod>)> = (job.pending.iter())
            .filter(|id| !failed.contains(id))
            .filter_map(|&id| self.live.get(&id).map(|l| (id, Arc::clone(&l.pod))))
            // Tasks with scheduling gates are skipped (`organizeJobWorksheet`).
            .filter(|(_, pod)| pod.scheduling_gates.is_empty())
            .collect();
        // The task order: priority, then creation.
        tasks.sort_by_key(|(id, pod)| (Reverse(pod.priority), *id));
        if tasks.is_empty() {
            return false;
        }
        let siblings = job.members.len() + job.existing;
        let attempt = gang::Attempt {
            group: &group,
            queued: (tasks.iter()).map(|(id, p)| (*id as usize, &**p)).collect(),
            siblings,
            bound: self.volcano_ready(key),
            gated: 0,
            permit_waiting_seconds: 0,
            reject_percentage: 0,
            stop_when_ready: true,
        };
        let outcomes = gang::schedule(&mut self.s, attempt);
        let tried = outcomes.len();
        let mut committed = false;
        for (id, mut outcome) in outcomes {
            let id = id as u32;
            self.attempts += 1;
            let Some(live) = self.live.get_mut(&id) else {
                continue;
            };
            live.attempts += 1;
            match (outcome.phase, outcome.node) {
                (PodPhase::Scheduled, Some(node)) => {
                    // The statement is committed: the task, allocated on `node`, binds.
                    let gpus = live.gpus;
                    self.metrics.bound(node, gpus);
                    self.volcano.bound(id);
                    self.bind_assumed(id, node);
                    committed = true;
                }
                _ => {
                    live.message = Some(std::mem::take(&mut outcome.message).into_boxed_str());
                    failed.insert(id);
                }
            }
        }
        committed && tried < tasks.len()
    }
}
