//! Gangs over time: Coscheduling's Permit wait, timeout and group backoff in a replay, as
//! scheduler-plugins implements them (`pkg/coscheduling/coscheduling.go`, `core/core.go`)
//! inside kube-scheduler's framework (`framework/runtime/waiting_pods_map.go`, the binding
//! cycle of `schedule_one.go`). The verdicts are [`crate::sched::gang`]'s, shared with `run`.
//!
//! - **PreFilter.** A PodGroup that PostFilter backed off less than `podGroupBackoffSeconds`
//!   ago is refused ("podGroup … failed recently"); then fewer than `minMember` pods of the
//!   group exist, too many of them are gated, or `minResources` does not fit (a pass is cached
//!   in `permittedPG` for `permitWaitingTimeSeconds`).
//! - **Permit.** A member that passes the filters is assumed on its node: it holds the node's
//!   resources (and counts as allocated) and waits, in flight, while fewer than `minMember`
//!   pods of its group are assumed or bound (`assignedPodsByPG`: waiting members, bound ones,
//!   existing bound pods). The member that reaches the quorum allows the waiting ones; all
//!   bind. The first member to wait activates its siblings (`ActivateSiblings`).
//! - **Timeout.** A member waits its PodGroup's `scheduleTimeoutSeconds`, else the profile's
//!   `permitWaitingTimeSeconds` (60 s), at most 15 minutes. The first to time out is rejected,
//!   its Unreserve rejects the other waiting members. A rejected member is forgotten (its room
//!   freed, an `AssignedPod/Delete` event for the others), and goes back to the queue rejected
//!   by Coscheduling, which registers `Pod/Add` only: it returns when a pod binds, when the
//!   unschedulable pool is flushed, or when a sibling's Permit activates it.
//! - **PostFilter.** A member that fits nowhere rejects the waiting members unless the quorum
//!   is met or at most `podGroupRejectPercentage` % of `minMember` is unassigned; with
//!   `podGroupBackoffSeconds` (and at least `minMember` pods) the group is backed off.
//! - A waiting member that is deleted or preempted rejects its group's waiting members
//!   (Unreserve); so does one whose node is removed (the bind that would follow fails).
//!
//! **The spin.** When only some of a gang fits, kube-scheduler loops: PostFilter rejects the
//! waiting members, their freed room requeues the member that failed, which now fits, waits,
//! activates the others, one of which fails, and so on, a cycle after another, until the
//! cluster changes. The replay lets a gang go round while each round fails a member that has
//! not failed since the cluster last changed (a pod bound or gone, a node changed): each order
//! of its members is tried once. When a member fails a second time the gang is parked until
//! the cluster changes: its Permit activates no sibling and the room its rejections free moves
//! none of its members, which wait for a cluster event (or the flush) in the unschedulable
//! pool; a member still queued may wait at Permit until its timeout. So the replay ends even
//! when cycles take no time.
//!
//! **The queue's order.** Under Coscheduling's QueueSort a member sorts by its PodGroup's time:
//! its creation (with its first pod), or when it last failed (PostFilter's rejection, a
//! member's Unreserve) until Permit lets it through (`GetCreationTimestamp`,
//! `MarkPodGroupScheduleFailure`, `ClearPodGroupScheduleFailure` in `core/core.go`).
//!
//! Volcano gangs are not Coscheduling's: Volcano's sessions place them ([`super::volcano`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use super::{Engine, Timer};
use crate::model::Pod;
use crate::model::pod::GangScheduler;
use crate::model::pod_group::{PodGroup, PodGroupKey, PodGroups, group_of, key_of};
use crate::sched::SchedulerConfig;
use crate::sched::cycle::{PodOutcome, PodPhase};
use crate::sched::framework::Status;
use crate::sched::gang::{self, COSCHEDULING, PreFilterReject};
use crate::sched::hints::Payload;
use crate::sched::profile::CoschedulingArgs;
use crate::sched::queue::{Action, ClusterEvent, Failure, PodId, Resource, Time};

/// The gangs of a replay and the state Coscheduling keeps of them.
pub(super) struct Gangs<'s> {
    config: &'s SchedulerConfig,
    existing: &'s [Pod],
    groups: BTreeMap<PodGroupKey, Gang>,
    /// Each created pod that names a gang: its group, `None` for a Coscheduling pod whose
    /// PodGroup does not exist (Permit rejects it).
    member_of: HashMap<u32, Option<PodGroupKey>>,
    /// The pod whose Permit just rejected it for want of its PodGroup.
    permit_rejected: Option<u32>,
    /// Bumped by every cluster event the replay sends: the cluster changed.
    world: u64,
    next_seq: u32,
    /// Permit timers in the engine's heap (stale ones included).
    armed: usize,
    /// `world` when a Permit timeout last rejected a gang.
    world_at_timeout: Option<u64>,
}

/// One PodGroup: its pods and what the plugin remembers of it.
struct Gang {
    group: PodGroup,
    args: CoschedulingArgs,
    /// When its PodGroup was created: with its first pod, as its workload arrived (ms).
    created: u64,
    /// Its pods the replay created and that are not gone.
    members: BTreeSet<u32>,
    /// Its pods among the scenario's existing pods, and how many of them are bound.
    existing: usize,
    existing_bound: usize,
    /// Members waiting at Permit, in the order they began to wait.
    waiting: Vec<Waiting>,
    /// `backedOffPG`: refused at PreFilter until then (ms, inclusive).
    backoff_until: Option<u64>,
    /// `permittedPG`: `minResources` passed; not checked again until then (ms, inclusive).
    permitted_until: Option<u64>,
    /// The members that failed since the cluster last changed (at `world`): see the spin.
    failed: (u64, BTreeSet<u32>),
    /// The gang stopped spinning at this `world`: until the cluster changes, its Permit
    /// activates no sibling and its rejections move none of its members.
    parked: Option<u64>,
}

/// A member assumed on its node, waiting at Permit.
struct Waiting {
    id: u32,
    node: String,
    /// The pod as assumed (`spec.nodeName` set): what its `AssignedPod/Delete` carries.
    assumed: Arc<Pod>,
    /// Its timer's number: a timer whose number no longer waits is stale.
    seq: u32,
}

/// Whether the members that Coscheduling's waiting-pod rejections free may move the gang's
/// own pods (not once the gang spun round, see the module doc).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Spin {
    Go,
    Stop,
}

impl<'s> Gangs<'s> {
    pub(super) fn new(config: &'s SchedulerConfig, existing: &'s [Pod]) -> Self {
        Gangs {
            config,
            existing,
            groups: BTreeMap::new(),
            member_of: HashMap::new(),
            permit_rejected: None,
            world: 0,
            next_seq: 0,
            armed: 0,
            world_at_timeout: None,
        }
    }

    /// A Permit timer left the engine's heap unfired.
    pub(super) fn disarm(&mut self) {
        self.armed -= 1;
    }

    /// Whether the engine's `timers` hold Permit timers only.
    pub(super) fn only_permit_timers(&self, timers: usize) -> bool {
        timers == self.armed
    }

    /// Whether a Permit timeout may still change anything once nothing else is left to
    /// happen: not when no member waits (the timers left are stale), nor when the last one
    /// changed nothing (no pod bound or left since), for the gangs would then wait, time out
    /// and wait again, alike, for ever.
    pub(super) fn timeouts_may_change(&self) -> bool {
        self.world_at_timeout != Some(self.world)
            && self.groups.values().any(|g| !g.waiting.is_empty())
    }

    /// A cluster event went out: gangs that spun may go round again.
    pub(super) fn cluster_changed(&mut self) {
        self.world += 1;
    }

    /// The gang `pod` belongs to, as its profile schedules it: `Some(None)` for a Coscheduling
    /// pod without its PodGroup, `None` for a pod scheduled on its own.
    fn classify(&self, pod: &Pod) -> Option<Option<(PodGroup, CoschedulingArgs)>> {
        pod.pod_group.as_ref()?;
        let coscheduling = self.config.runs_coscheduling(pod);
        let groups: &PodGroups = &self.config.pod_groups;
        match group_of(pod, groups) {
            Some(g) if g.scheduler == GangScheduler::Volcano => None,
            Some(g) if g.scheduler == GangScheduler::Coscheduling && !coscheduling => None,
            Some(g) => Some(Some((g, self.config.coscheduling_args(pod)))),
            None if coscheduling && gang::lacks_pod_group(pod, groups) => Some(None),
            None => None,
        }
    }

    /// A pod is created (at `now`): it counts among its group's pods. Returns the group
    /// when the pod is its first (the PodGroup is created with it).
    fn created(&mut self, id: u32, pod: &Pod, now: u64) -> Option<PodGroup> {
        let class = self.classify(pod)?;
        let Some((group, args)) = class else {
            self.member_of.insert(id, None);
            return None;
        };
        let key = group.key();
        let existing = self.existing;
        let new = !self.groups.contains_key(&key);
        let gang = self.groups.entry(key.clone()).or_insert_with(|| {
            let mine = || existing.iter().filter(|p| key_of(p).as_ref() == Some(&key));
            Gang {
                existing: mine().count(),
                existing_bound: mine().filter(|p| p.node_name.is_some()).count(),
                group,
                args,
                created: now,
                members: BTreeSet::new(),
                waiting: Vec::new(),
                backoff_until: None,
                permitted_until: None,
                failed: (0, BTreeSet::new()),
                parked: None,
            }
        });
        gang.members.insert(id);
        let first = new.then(|| gang.group.clone());
        self.member_of.insert(id, Some(key));
        first
    }

    fn gang_of(&self, id: u32) -> Option<&PodGroupKey> {
        self.member_of.get(&id).and_then(Option::as_ref)
    }

    fn is_waiting(&self, id: u32) -> bool {
        let gang = self.gang_of(id).and_then(|k| self.groups.get(k));
        gang.is_some_and(|g| g.waiting.iter().any(|w| w.id == id))
    }
}

impl Engine<'_, '_> {
    /// A pod is created: a gang member counts among its group's pods.
    pub(super) fn gang_created(&mut self, id: u32) {
        if let Some(live) = self.live.get(&id) {
            let pod = Arc::clone(&live.pod);
            if let Some(group) = self.gangs.created(id, &pod, self.now) {
                self.group_sorts_by(&group.key(), None);
            }
        }
    }

    /// Coscheduling's `GetCreationTimestamp` for the gang's members queued from now on: the
    /// time it failed (`MarkPodGroupScheduleFailure`, by PostFilter's rejection and by
    /// Unreserve), or its creation time (at its creation, and when Permit lets it through:
    /// `ClearPodGroupScheduleFailure`).
    fn group_sorts_by(&mut self, key: &PodGroupKey, failed_at: Option<u64>) {
        let Some(gang) = self.gangs.groups.get(key) else {
            return;
        };
        if gang.group.scheduler == GangScheduler::Coscheduling {
            let time = failed_at.unwrap_or(gang.created);
            (self.queue).set_group_time(&gang.group.full_name(), Some(Time(time)));
        }
    }

    /// The scheduling cycle up to Permit: a gang member's with Coscheduling's PreFilter
    /// verdict; a Coscheduling pod without its PodGroup is rejected at Permit.
    pub(super) fn schedule(&mut self, id: u32, pod: &Pod) -> PodOutcome {
        match self.gangs.member_of.get(&id).cloned() {
            None => self.s.schedule_one(id as usize, pod),
            Some(None) => {
                let mut outcome = self.s.schedule_one(id as usize, pod);
                if outcome.phase == PodPhase::Scheduled {
                    self.gangs.permit_rejected = Some(id);
                }
                gang::without_pod_group(&mut outcome);
                outcome
            }
            Some(Some(key)) => {
                let reject = self.pre_filter(&key, pod);
                self.s.schedule_one_gang(id as usize, pod, reject)
            }
        }
    }

    /// Coscheduling's PreFilter (`PodGroupManager.PreFilter`) for a member of `key`.
    fn pre_filter(&mut self, key: &PodGroupKey, pod: &Pod) -> Option<Status> {
        let now = self.now;
        let gang = self.gangs.groups.get(key)?;
        if gang.backoff_until.is_some_and(|t| t >= now) {
            let reject = PreFilterReject::BackedOff(gang.group.full_name());
            return Some(reject.status(&pod.name));
        }
        let gated = (gang.members.iter())
            .filter(|m| (self.live.get(m)).is_some_and(|l| !l.pod.scheduling_gates.is_empty()))
            .count();
        let siblings = gang.members.len() + gang.existing;
        let permitted = gang.permitted_until.is_some_and(|t| t >= now);
        let reject = gang::pre_filter_group(&self.s, &gang.group, siblings, gated, permitted);
        let checked = gang.group.min_resources.is_some()
            && gang.group.scheduler == GangScheduler::Coscheduling
            && !permitted;
        if reject.is_none() && checked {
            // `permittedPG.Add(…, scheduleTimeout)`: go-cache's default of 3 s when it is 0.
            let ttl = match gang.args.permit_waiting_seconds {
                0 => 3_000,
                s => u64::from(s) * 1000,
            };
            if let Some(g) = self.gangs.groups.get_mut(key) {
                g.permitted_until = Some(now + ttl);
            }
        }
        reject.map(|r| r.status(&pod.name))
    }

    /// Permit for a member that passed the filters on `node`: `true` when it waits (assumed,
    /// still in flight), `false` when it binds now; reaching the quorum binds the waiting
    /// members first.
    pub(super) fn waits_at_permit(&mut self, id: u32, node: usize) -> bool {
        let Some(key) = self.gangs.gang_of(id).cloned() else {
            return false;
        };
        let assigned = self.assigned(&key) + 1;
        let Some(gang) = self.gangs.groups.get_mut(&key) else {
            return false;
        };
        if gang::quorum(&gang.group, assigned) {
            let waiting = std::mem::take(&mut gang.waiting);
            self.group_sorts_by(&key, None);
            for w in waiting {
                self.queue.done(PodId(w.id));
                match self.s.cluster.index_of(&w.node) {
                    Some(n) => self.bind_assumed(w.id, n),
                    None => self.forget(&w),
                }
            }
            return false;
        }
        let wait = gang::permit_wait_seconds(&gang.group, gang.args.permit_waiting_seconds);
        self.gangs.next_seq = self.gangs.next_seq.wrapping_add(1);
        let seq = self.gangs.next_seq;
        let Some(pod) = self.live.get(&id).map(|l| Arc::clone(&l.pod)) else {
            return false;
        };
        self.assume(id, node);
        let name = self.s.cluster.nodes[node].name.clone();
        let assumed = Arc::new(Pod {
            node_name: Some(name.clone()),
            ..(*pod).clone()
        });
        let waiting = Waiting {
            id,
            node: name,
            assumed,
            seq,
        };
        let gang = self.gangs.groups.get_mut(&key).expect("the gang is known");
        gang.waiting.push(waiting);
        // `ActivateSiblings`, asked for by the first member to wait (not by a parked gang).
        let parked = gang.parked == Some(self.gangs.world);
        let siblings: Vec<PodId> = match assigned {
            1 if !parked => (gang.members.iter())
                .filter(|m| **m != id)
                .map(|m| PodId(*m))
                .collect(),
            _ => Vec::new(),
        };
        self.gangs.armed += 1;
        self.add_timer(self.now + u64::from(wait) * 1000, Timer::Permit(id, seq));
        self.queue
            .activate(Time(self.now), &siblings, &Payload::None, &self.hints);
        true
    }

    /// `assignedPodsByPG`: the group's pods assumed or bound, not counting `pod` itself.
    fn assigned(&self, key: &PodGroupKey) -> usize {
        let Some(gang) = self.gangs.groups.get(key) else {
            return 0;
        };
        gang.waiting.len() + self.bound_among(&gang.members) + gang.existing_bound
    }

    /// The scheduler's cache assumes the pod on `node`: it holds the node's resources (and
    /// its GPUs count as allocated).
    pub(super) fn assume(&mut self, id: u32, node: usize) {
        if let Some(live) = self.live.get(&id) {
            let (pod, gpus) = (Arc::clone(&live.pod), live.gpus);
            self.s.bind(node, id as usize, &pod);
            self.metrics.bound(node, gpus);
        }
    }

    /// `ForgetPod`: an assumed member leaves its node (unless the node is gone with it).
    fn forget(&mut self, w: &Waiting) {
        if let Some(node) = self.s.cluster.index_of(&w.node) {
            self.s.unbind(node, w.id as usize);
            let gpus = self.live.get(&w.id).map_or(0, |l| l.gpus);
            self.metrics.unbound(node, gpus);
        }
    }

    /// A scheduling cycle failed: a gang member's PostFilter, then the queue.
    pub(super) fn unschedulable(&mut self, id: u32, pod: &Pod, mut failure: Failure) {
        if self.gangs.permit_rejected == Some(id) {
            // Permit's `PodGroupNotFound`: Coscheduling rejected it.
            self.gangs.permit_rejected = None;
            failure.unschedulable_plugins.insert(COSCHEDULING.into());
        }
        let rejected = (self.gangs.gang_of(id).cloned())
            .filter(|_| !failure.unschedulable_plugins.is_empty())
            .and_then(|key| self.post_filter(id, pod, &key).map(|spin| (key, spin)));
        if let Some((key, _)) = &rejected {
            self.group_sorts_by(key, Some(self.now));
        }
        match rejected {
            // The member that failed is handed back first, so the room the rejections free
            // no longer moves it.
            Some((key, Spin::Stop)) => {
                self.requeue(id, failure);
                self.reject_waiting(&key, Spin::Stop);
            }
            Some((key, Spin::Go)) => {
                self.reject_waiting(&key, Spin::Go);
                self.requeue(id, failure);
            }
            None => self.requeue(id, failure),
        }
    }

    /// Coscheduling's PostFilter for a member that fits nowhere: `Some` when it rejects the
    /// group's waiting members (with whether the gang may spin round again).
    fn post_filter(&mut self, id: u32, pod: &Pod, key: &PodGroupKey) -> Option<Spin> {
        let assigned = self.assigned(key);
        let (now, world) = (self.now, self.gangs.world);
        let gang = self.gangs.groups.get_mut(key)?;
        if gang.group.scheduler != GangScheduler::Coscheduling {
            return None;
        }
        let percentage = gang.args.pod_group_reject_percentage;
        gang::post_filter(&gang.group, assigned, &pod.name, percentage)?;
        let backoff = u64::from(gang.args.pod_group_backoff_seconds) * 1000;
        if backoff > 0 && gang.members.len() + gang.existing >= gang.group.min_member as usize {
            gang.backoff_until = Some(now + backoff);
        }
        gang.permitted_until = None;
        if gang.failed.0 != world {
            gang.failed = (world, BTreeSet::new());
        }
        if !gang.failed.1.insert(id) {
            gang.parked = Some(world);
        }
        Some(match gang.parked == Some(world) {
            true => Spin::Stop,
            false => Spin::Go,
        })
    }

    /// The pod's cycle failed: `AddUnschedulableIfNotPresent`.
    fn requeue(&mut self, id: u32, failure: Failure) {
        // The pod is in flight: this cannot fail.
        let _ = (self.queue).add_unschedulable_if_not_present(
            Time(self.now),
            PodId(id),
            failure,
            &self.hints,
        );
    }

    /// Every member of `key` waiting at Permit is rejected (a timeout, PostFilter, or the
    /// Unreserve of a member that left): forgotten, handed back to the queue as Coscheduling's
    /// rejection, then the room it held is an `AssignedPod/Delete` for the others.
    fn reject_waiting(&mut self, key: &PodGroupKey, spin: Spin) {
        let Some(gang) = self.gangs.groups.get_mut(key) else {
            return;
        };
        let spin = match gang.parked == Some(self.gangs.world) {
            true => Spin::Stop,
            false => spin,
        };
        gang.permitted_until = None;
        let waiting = std::mem::take(&mut gang.waiting);
        let members = gang.members.clone();
        if !waiting.is_empty() {
            // Each rejected member's Unreserve marks the group failed.
            self.group_sorts_by(key, Some(self.now));
        }
        for w in waiting {
            self.forget(&w);
            let failure = Failure {
                unschedulable_plugins: [COSCHEDULING.to_string()].into(),
                ..Failure::default()
            };
            self.requeue(w.id, failure);
            let not_moved = |p: &crate::sched::queue::QueuedPod| {
                p.pod.id.0 != w.id && (spin == Spin::Go || !members.contains(&p.pod.id.0))
            };
            self.queue.move_all_to_active_or_backoff(
                Time(self.now),
                ClusterEvent::new(Resource::AssignedPod, Action::DELETE),
                &Payload::Pod {
                    old: Some(Arc::clone(&w.assumed)),
                    new: None,
                },
                Some(&not_moved),
                &self.hints,
            );
        }
    }

    /// A member's Permit timer: if it still waits, it is rejected by the timeout and its
    /// Unreserve rejects the others.
    pub(super) fn permit_timeout(&mut self, id: u32, seq: u32) {
        self.gangs.disarm();
        if self.permit_timer_holds(id, seq) {
            let Some(key) = self.gangs.gang_of(id).cloned() else {
                return;
            };
            self.gangs.world_at_timeout = Some(self.gangs.world);
            self.reject_waiting(&key, Spin::Go);
        }
    }

    /// Whether member `id` still waits at Permit under the timer numbered `seq`.
    pub(super) fn permit_timer_holds(&self, id: u32, seq: u32) -> bool {
        let gang = self
            .gangs
            .gang_of(id)
            .and_then(|k| self.gangs.groups.get(k));
        gang.is_some_and(|g| g.waiting.iter().any(|w| w.id == id && w.seq == seq))
    }

    /// A member leaves for good (finished, withdrawn, deleted): it no longer counts; if it was
    /// waiting at Permit, its rejection's Unreserve rejects the other waiting members.
    pub(super) fn gang_pod_gone(&mut self, id: u32) {
        if let Some(key) = self.take_waiting(id) {
            self.reject_waiting(&key, Spin::Go);
        }
        if let Some(Some(key)) = self.gangs.member_of.remove(&id)
            && let Some(gang) = self.gangs.groups.get_mut(&key)
        {
            gang.members.remove(&id);
        }
    }

    /// A waiting member that preemption chose as a victim: it is deleted and created again
    /// (queued anew), and the other waiting members are rejected. `false` when it was not
    /// waiting.
    pub(super) fn waiting_preempted(&mut self, id: u32) -> bool {
        let Some(key) = self.take_waiting(id) else {
            return false;
        };
        self.reject_waiting(&key, Spin::Go);
        if let Some(live) = self.live.get_mut(&id) {
            live.preemptions += 1;
            let pod = Arc::clone(&live.pod);
            if let Some(job) = self.jobs.get(&live.job) {
                self.metrics.preempted(job.key());
            }
            let _ = (self.queue).add(Time(self.now), super::queue_pod(id, &pod), &self.hints);
        }
        true
    }

    /// Members waiting at Permit whose node was removed (`evicted`: pod ids and their old
    /// node): the bind that would follow fails, so their gangs' waiting members are rejected
    /// and retried. They leave `evicted`, which lists the bound pods the removal evicts.
    pub(super) fn waiting_nodes_gone(&mut self, evicted: &mut Vec<(usize, usize)>) {
        let mut gangs: BTreeSet<PodGroupKey> = BTreeSet::new();
        evicted.retain(|&(pod, _)| {
            let id = pod as u32;
            let waiting = pod <= u32::MAX as usize && self.gangs.is_waiting(id);
            if waiting && let Some(key) = self.gangs.gang_of(id) {
                gangs.insert(key.clone());
            }
            !waiting
        });
        for key in gangs {
            self.reject_waiting(&key, Spin::Go);
        }
    }

    /// Whether the pod waits at Permit (assumed on a node, not bound).
    pub(super) fn waits(&self, id: u32) -> bool {
        self.gangs.is_waiting(id)
    }

    /// Takes a member off its group's waiting list: it is forgotten and leaves flight (it is
    /// gone, or queued anew by the caller); the assumed pod's `AssignedPod/Delete` reaches
    /// every pod. Returns its group.
    fn take_waiting(&mut self, id: u32) -> Option<PodGroupKey> {
        let key = self.gangs.gang_of(id).cloned()?;
        let gang = self.gangs.groups.get_mut(&key)?;
        let at = gang.waiting.iter().position(|w| w.id == id)?;
        let w = gang.waiting.remove(at);
        self.forget(&w);
        self.queue.done(PodId(id));
        self.queue.move_all_to_active_or_backoff(
            Time(self.now),
            ClusterEvent::new(Resource::AssignedPod, Action::DELETE),
            &Payload::Pod {
                old: Some(w.assumed),
                new: None,
            },
            None,
            &self.hints,
        );
        Some(key)
    }
}
