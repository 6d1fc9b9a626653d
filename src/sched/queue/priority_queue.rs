//! `PriorityQueue` (`scheduling_queue.go`): where each pod waits, how a failure routes it,
//! how events and timers move it, over virtual time.

use std::collections::{BTreeMap, BTreeSet};

use super::active::{ActiveQueue, QueueSort};
use super::backoff::{self, BackoffQueue};
use super::nominator::Nominator;
use super::unschedulable::UnschedulablePods;
use super::{
    ClusterEvent, HintRegistry, LEFTOVER_FLUSH_PERIOD_MS, PodId, QueueConfig, QueueHooks, QueuePod,
    QueuedPod, QueueingHint, Time,
};

/// Where a pod is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum QueueName {
    Active,
    Backoff,
    Unschedulable,
    InFlight,
}

/// Misuse of the queue, with upstream's wording where it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueError {
    UnknownPod(PodId),
    AlreadyQueued(PodId, QueueName),
    NotInFlight(PodId),
}

/// `queueingStrategy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Strategy {
    Skip,
    AfterBackoff,
    Immediately,
}

/// A pod's failure in a scheduling cycle, as `AddUnschedulableIfNotPresent` receives it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Failure {
    /// Plugins that rejected the pod (Unschedulable statuses).
    pub unschedulable_plugins: BTreeSet<String>,
    /// Plugins that answered Pending: a Queue hint from them skips backoff.
    pub pending_plugins: BTreeSet<String>,
}

/// The event labels upstream's `moveToActiveQ` treats specially.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cause {
    PodAdd,
    PodUpdate,
    Other,
}

/// kube-scheduler's scheduling queue. `P` is the payload of cluster events (see
/// [`QueueHooks`]); use `()` when hints need none.
#[derive(Debug, Clone)]
pub struct PriorityQueue<P = ()> {
    config: QueueConfig,
    registry: HintRegistry,
    pods: BTreeMap<PodId, (QueuedPod, QueueName)>,
    active: ActiveQueue<P>,
    backoff: BackoffQueue,
    unschedulable: UnschedulablePods,
    nominator: Nominator,
    next_seq: u64,
    /// Under Coscheduling's QueueSort: each existing PodGroup's time (`namespace/name` →
    /// when it last failed scheduling, else its creation).
    group_times: BTreeMap<String, Time>,
}

impl<P: Clone> PriorityQueue<P> {
    pub fn new(config: QueueConfig, registry: HintRegistry) -> PriorityQueue<P> {
        PriorityQueue {
            config,
            registry,
            pods: BTreeMap::new(),
            active: ActiveQueue::default(),
            backoff: BackoffQueue::default(),
            unschedulable: UnschedulablePods::default(),
            nominator: Nominator::default(),
            next_seq: 0,
            group_times: BTreeMap::new(),
        }
    }

    /// Coscheduling's view of PodGroup `group` (`namespace/name`): the time its members are
    /// ordered by from now on (`GetCreationTimestamp`), `None` once it does not exist. Pods
    /// already queued keep their place.
    pub fn set_group_time(&mut self, group: &str, time: Option<Time>) {
        match time {
            Some(t) => {
                self.group_times.insert(group.to_string(), t);
            }
            None => {
                self.group_times.remove(group);
            }
        }
    }

    pub fn config(&self) -> &QueueConfig {
        &self.config
    }

    // ---- reading ----------------------------------------------------------------------

    pub fn get(&self, id: PodId) -> Option<&QueuedPod> {
        self.pods.get(&id).map(|(p, _)| p)
    }

    pub fn location(&self, id: PodId) -> Option<QueueName> {
        self.pods.get(&id).map(|(_, q)| *q)
    }

    /// activeQ in pop order.
    pub fn active_pods(&self) -> Vec<PodId> {
        self.active.ids().collect()
    }

    /// `podBackoffQ` in order, then `podErrorBackoffQ`.
    pub fn backoff_pods(&self) -> Vec<PodId> {
        self.backoff.ids().collect()
    }

    /// The unschedulable pool (gated pods included), by id.
    pub fn unschedulable_pods(&self) -> Vec<PodId> {
        self.unschedulable.ids().collect()
    }

    pub fn in_flight_pods(&self) -> Vec<PodId> {
        self.active.in_flight().collect()
    }

    /// `inFlightEvents` as upstream's tests list it: pop markers and events, in order.
    pub fn in_flight_log(&self) -> Vec<Result<PodId, ClusterEvent>> {
        self.active.log()
    }

    /// The `scheduler_pending_pods` gauges: active, backoff, unschedulable, gated.
    pub fn pending_counts(&self) -> [usize; 4] {
        [
            self.active.len(),
            self.backoff.len(),
            self.unschedulable.len_unschedulable(),
            self.unschedulable.len_gated(),
        ]
    }

    pub fn scheduling_cycle(&self) -> u64 {
        self.active.scheduling_cycle()
    }

    /// `NominatedPodsForNode`, in nomination order.
    pub fn nominated_pods_for_node(&self, node: &str) -> Vec<&QueuePod> {
        self.nominator
            .pods_for_node(node)
            .iter()
            .filter_map(|id| self.get(*id).map(|p| &p.pod))
            .collect()
    }

    pub fn nominated_node(&self, id: PodId) -> Option<&str> {
        self.nominator.node_of(id)
    }

    /// The nominator: every node's nominated pods, and its generation (see
    /// [`Nominator::generation`]).
    pub fn nominator(&self) -> &Nominator {
        &self.nominator
    }

    /// Is the pod still backing off at `now`?
    pub fn is_backing_off(&self, id: PodId, now: Time) -> bool {
        self.get(id)
            .is_some_and(|p| backoff::is_backing_off(&self.config, p, now))
    }

    /// `BackoffExpiration` of a pod (`None`: it never failed).
    pub fn backoff_expiry(&self, id: PodId) -> Option<Time> {
        self.get(id)
            .and_then(|p| backoff::backoff_expiry(&self.config, p))
    }

    // ---- timers -------------------------------------------------------------------------

    /// The earliest time after `now` at which [`flush`](Self::flush) would move a pod: the
    /// backoff flush at the first whole second strictly after the earliest expiry, or the
    /// leftover flush tick at which the oldest unschedulable pod has waited strictly longer
    /// than `podMaxInUnschedulablePodsDuration`. `None`: no timer can change anything.
    pub fn next_timer(&self, now: Time) -> Option<Time> {
        let backoff = self.backoff.earliest_expiry().map(|expiry| {
            let release = expiry.map_or(Time(0), |e| e.plus(backoff::ORDERING_WINDOW_MS));
            next_tick(release.max(now.plus(1)), 0, backoff::ORDERING_WINDOW_MS)
        });
        let leftover = self
            .unschedulable
            .ids()
            .filter_map(|id| self.get(id))
            .filter(|p| !p.gated())
            .map(|p| p.timestamp)
            .min()
            .map(|oldest| {
                let due = oldest
                    .plus(self.config.max_in_unschedulable_ms + 1)
                    .max(now.plus(1));
                next_tick(
                    due,
                    self.config.leftover_flush_phase_ms,
                    LEFTOVER_FLUSH_PERIOD_MS,
                )
            });
        [backoff, leftover].into_iter().flatten().min()
    }

    /// Runs the timers due at `now`: `flushBackoffQCompleted` on whole seconds and
    /// `flushUnschedulablePodsLeftover` on the 30-s ticks of the configured phase.
    pub fn flush(&mut self, now: Time, hooks: &dyn QueueHooks<P>, payload: &P) {
        if now.0.is_multiple_of(backoff::ORDERING_WINDOW_MS) {
            self.flush_backoff_completed(now, hooks);
        }
        if now.0 % LEFTOVER_FLUSH_PERIOD_MS
            == self.config.leftover_flush_phase_ms % LEFTOVER_FLUSH_PERIOD_MS
        {
            self.flush_unschedulable_leftover(now, hooks, payload);
        }
    }

    /// `flushBackoffQCompleted`: every pod whose backoff is over moves to activeQ (without
    /// PreEnqueue, which ran when it entered backoffQ).
    pub fn flush_backoff_completed(&mut self, now: Time, hooks: &dyn QueueHooks<P>) {
        for id in self.backoff.completed(now) {
            let pod = self.take(id);
            self.move_to_active(now, pod, Cause::Other, true, hooks);
        }
    }

    /// `flushUnschedulablePodsLeftover`: pods that waited strictly longer than
    /// `podMaxInUnschedulablePodsDuration` since their last failure get the wildcard
    /// `UnschedulableTimeout` event.
    pub fn flush_unschedulable_leftover(
        &mut self,
        now: Time,
        hooks: &dyn QueueHooks<P>,
        payload: &P,
    ) {
        let max = self.config.max_in_unschedulable_ms;
        let due: Vec<PodId> = self
            .unschedulable
            .ids()
            .filter(|id| {
                self.get(*id)
                    .is_some_and(|p| now.0.saturating_sub(p.timestamp.0) > max)
            })
            .collect();
        if !due.is_empty() {
            self.move_pods(
                now,
                &due,
                ClusterEvent::UNSCHEDULABLE_TIMEOUT,
                payload,
                hooks,
            );
        }
    }

    // ---- operations -----------------------------------------------------------------------

    /// `Add`: a new pod enters activeQ, or the unschedulable pool if PreEnqueue gates it.
    pub fn add(
        &mut self,
        now: Time,
        pod: QueuePod,
        hooks: &dyn QueueHooks<P>,
    ) -> Result<(), QueueError> {
        if let Some(q) = self.location(pod.id) {
            return Err(QueueError::AlreadyQueued(pod.id, q));
        }
        let info = self.new_queued(now, pod);
        self.move_to_active(now, info, Cause::PodAdd, false, hooks);
        Ok(())
    }

    /// `Pop`: the head of activeQ, or, when activeQ is empty, the head of `podBackoffQ` even
    /// if still backing off (`SchedulerPopFromBackoffQ`); never `podErrorBackoffQ`. The pod
    /// is then in flight until [`done`](Self::done) or
    /// [`add_unschedulable_if_not_present`](Self::add_unschedulable_if_not_present).
    pub fn pop(&mut self, now: Time) -> Option<QueuedPod> {
        let id = self
            .active
            .first()
            .or_else(|| self.backoff.first_plugin_rejected())?;
        let mut pod = self.take(id);
        pod.attempts += 1;
        pod.initial_attempt.get_or_insert(now);
        pod.unschedulable_plugins.clear();
        pod.pending_plugins.clear();
        pod.gating_plugin = None;
        self.active.start_flight(id);
        self.pods.insert(id, (pod.clone(), QueueName::InFlight));
        Some(pod)
    }

    /// `Done`: the pod's cycle is over (bound, or handed back); it leaves flight.
    pub fn done(&mut self, id: PodId) {
        self.active.done(id);
        if self.location(id) == Some(QueueName::InFlight) {
            self.pods.remove(&id);
        }
    }

    /// `AddUnschedulableIfNotPresent`: an in-flight pod failed at `now`. Counters move and
    /// `Timestamp` resets; no rejector plugin means an error (`podErrorBackoffQ`); otherwise
    /// the events received since its pop decide: none that matters → unschedulable pool, a
    /// Queue from a rejector → backoffQ or activeQ, from a Pending plugin → activeQ.
    pub fn add_unschedulable_if_not_present(
        &mut self,
        now: Time,
        id: PodId,
        failure: Failure,
        hooks: &dyn QueueHooks<P>,
    ) -> Result<QueueName, QueueError> {
        match self.location(id) {
            None => return Err(QueueError::UnknownPod(id)),
            Some(QueueName::InFlight) => {}
            Some(q) => return Err(QueueError::AlreadyQueued(id, q)),
        }
        let events = self
            .active
            .events_since_pop(id)
            .ok_or(QueueError::NotInFlight(id))?;
        let mut pod = self.take(id);
        self.active.done(id);
        pod.unschedulable_plugins = failure.unschedulable_plugins;
        pod.pending_plugins = failure.pending_plugins;
        if backoff::is_error(&pod) {
            pod.consecutive_errors += 1;
        } else {
            pod.unschedulable_count += 1;
            pod.consecutive_errors = 0;
        }
        pod.timestamp = now;
        // determineSchedulingHintForInFlightPod
        let mut strategy = Strategy::Skip;
        if backoff::is_error(&pod) {
            strategy = Strategy::AfterBackoff;
        } else {
            for (event, payload) in &events {
                match self.worth_requeuing(&pod, event, payload, hooks) {
                    Strategy::Skip => {}
                    Strategy::Immediately => {
                        strategy = Strategy::Immediately;
                        break;
                    }
                    Strategy::AfterBackoff => {
                        strategy = Strategy::AfterBackoff;
                        if pod.pending_plugins.is_empty() {
                            break;
                        }
                    }
                }
            }
        }
        Ok(self.requeue(now, pod, strategy, hooks))
    }

    /// `MoveAllToActiveOrBackoffQueue`: `event` happened; each unschedulable pod that passes
    /// `pre_check` (and, if gated, whose gating plugin registered the event) asks its
    /// rejector plugins' hints and moves accordingly. In-flight pods record the event.
    pub fn move_all_to_active_or_backoff(
        &mut self,
        now: Time,
        event: ClusterEvent,
        payload: &P,
        pre_check: Option<&dyn Fn(&QueuedPod) -> bool>,
        hooks: &dyn QueueHooks<P>,
    ) {
        if !self.registry.is_of_interest(&event) {
            return;
        }
        let ids: Vec<PodId> = self
            .unschedulable
            .ids()
            .filter(|id| pre_check.is_none_or(|f| self.get(*id).is_some_and(f)))
            .collect();
        self.move_pods(now, &ids, event, payload, hooks);
    }

    /// `Activate`: pods in the unschedulable pool or backoffQ go to activeQ (`ForceActivate`);
    /// an in-flight pod records a `ForceActivate` aimed at itself; others are ignored.
    pub fn activate(&mut self, now: Time, ids: &[PodId], payload: &P, hooks: &dyn QueueHooks<P>) {
        for &id in ids {
            match self.location(id) {
                Some(QueueName::Unschedulable) => {
                    let pod = self.take(id);
                    self.move_to_active(now, pod, Cause::Other, false, hooks);
                }
                Some(QueueName::Backoff) => {
                    let pod = self.take(id);
                    self.move_to_active(now, pod, Cause::Other, true, hooks);
                }
                _ => {
                    self.active.record_if_in_flight(
                        id,
                        &[ClusterEvent::force_activate(id)],
                        payload,
                    );
                }
            }
        }
    }

    /// `Update` of an unscheduled pod. `events` are its `PodSchedulingPropertiesChange`
    /// events (the caller computes them from old and new pod). In flight: the events are
    /// recorded. In activeQ/backoffQ: updated in place. In the pool: each event asks the hints
    /// until one moves it. Unknown: added to activeQ.
    pub fn update(
        &mut self,
        now: Time,
        pod: QueuePod,
        events: &[ClusterEvent],
        payload: &P,
        hooks: &dyn QueueHooks<P>,
    ) {
        let id = pod.id;
        let Some(location) = self.location(id) else {
            let info = self.new_queued(now, pod);
            self.move_to_active(now, info, Cause::PodUpdate, false, hooks);
            return;
        };
        if location == QueueName::InFlight {
            self.active.record_if_in_flight(id, events, payload);
            if let Some((info, _)) = self.pods.get_mut(&id) {
                info.pod = pod;
            }
            return;
        }
        let mut info = self.take(id);
        let old_nominated = info.pod.nominated_node.clone();
        info.pod = pod;
        self.nominator.update(
            id,
            old_nominated.as_deref(),
            info.pod.nominated_node.as_deref(),
        );
        match location {
            QueueName::Active => self.put(info, QueueName::Active),
            QueueName::Backoff => self.put(info, QueueName::Backoff),
            _ => {
                self.put(info, QueueName::Unschedulable);
                for event in events {
                    let strategy =
                        self.worth_requeuing(self.get(id).unwrap(), event, payload, hooks);
                    let pod = self.take(id);
                    let queue = self.requeue(now, pod, strategy, hooks);
                    if queue != QueueName::Unschedulable {
                        break;
                    }
                }
            }
        }
    }

    /// `Delete`: the pod leaves every queue and the nominator. An in-flight pod stays in
    /// flight until the caller's `done`.
    pub fn delete(&mut self, id: PodId) {
        self.nominator.delete(id);
        if matches!(self.location(id), Some(q) if q != QueueName::InFlight) {
            self.take(id);
        }
    }

    /// `AddNominatedPod` with `ModeOverride` (`Some(node)`) or the pod's own nomination.
    pub fn add_nominated_pod(&mut self, id: PodId, node_override: Option<&str>) {
        let own = self.get(id).and_then(|p| p.pod.nominated_node.clone());
        self.nominator.add(id, own.as_deref(), node_override);
    }

    /// `DeleteNominatedPodIfExists`.
    pub fn delete_nominated_pod(&mut self, id: PodId) {
        self.nominator.delete(id);
    }

    /// Places a pod straight into a queue with the given bookkeeping, as upstream's tests do
    /// (`unschedulablePods.addOrUpdate`, `backoffQ.add`) and as a snapshot of a running
    /// scheduler would: no hint, no PreEnqueue, no nomination.
    pub fn seed(&mut self, mut pod: QueuedPod, queue: QueueName) -> Result<(), QueueError> {
        if let Some(q) = self.location(pod.pod.id) {
            return Err(QueueError::AlreadyQueued(pod.pod.id, q));
        }
        pod.seq = self.next_seq;
        self.next_seq += 1;
        if queue == QueueName::InFlight {
            self.active.start_flight(pod.pod.id);
        }
        self.put(pod, queue);
        Ok(())
    }

    /// A fresh `QueuedPodInfo` (`newQueuedPodInfo`) for [`seed`](Self::seed).
    pub fn queued(now: Time, pod: QueuePod) -> QueuedPod {
        QueuedPod {
            pod,
            seq: 0,
            timestamp: now,
            initial_attempt: None,
            sort_time: now,
            sort_seq: 0,
            attempts: 0,
            unschedulable_count: 0,
            consecutive_errors: 0,
            unschedulable_plugins: BTreeSet::new(),
            pending_plugins: BTreeSet::new(),
            gating_plugin: None,
        }
    }

    // ---- internals ----------------------------------------------------------------------

    fn new_queued(&mut self, now: Time, pod: QueuePod) -> QueuedPod {
        let mut info = Self::queued(now, pod);
        info.seq = self.next_seq;
        self.next_seq += 1;
        info
    }

    /// Removes a pod from wherever it is and returns it.
    fn take(&mut self, id: PodId) -> QueuedPod {
        let (pod, queue) = self.pods.remove(&id).expect("pod known to the queue");
        match queue {
            QueueName::Active => {
                self.active.remove(&pod);
            }
            QueueName::Backoff => {
                self.backoff.remove(&self.config, &pod);
            }
            QueueName::Unschedulable => {
                self.unschedulable.remove(id);
            }
            QueueName::InFlight => {}
        }
        pod
    }

    fn put(&mut self, mut pod: QueuedPod, queue: QueueName) {
        if matches!(queue, QueueName::Active | QueueName::Backoff) {
            (pod.sort_time, pod.sort_seq) = self.sort_position(&pod);
        }
        match queue {
            QueueName::Active => self.active.insert(&pod),
            QueueName::Backoff => self.backoff.insert(&self.config, &pod),
            QueueName::Unschedulable => self.unschedulable.insert(pod.pod.id, pod.gated()),
            QueueName::InFlight => {}
        }
        self.pods.insert(pod.pod.id, (pod, queue));
    }

    /// The time and tie-break the QueueSort plugin orders `pod` by, as things stand.
    fn sort_position(&self, pod: &QueuedPod) -> (Time, u64) {
        match self.config.queue_sort {
            QueueSort::PrioritySort => (pod.timestamp, pod.seq),
            QueueSort::Coscheduling => {
                let group = (pod.pod.pod_group.as_ref()).and_then(|g| self.group_times.get(g));
                // `InitialAttemptTimestamp` is set before a pod enters activeQ; a pod placed
                // in backoffQ by hand (`seed`) may have none: its timestamp stands in.
                let initial = pod.initial_attempt.unwrap_or(pod.timestamp);
                (group.copied().unwrap_or(initial), 0)
            }
        }
    }

    fn run_pre_enqueue(&self, pod: &mut QueuedPod, hooks: &dyn QueueHooks<P>) {
        pod.gating_plugin = hooks.pre_enqueue(pod);
        if let Some(plugin) = &pod.gating_plugin {
            pod.unschedulable_plugins.insert(plugin.clone());
        }
    }

    /// `moveToActiveQ`: PreEnqueue (skipped for pods straight from backoffQ), then activeQ,
    /// or the pool if gated. Returns where the pod went.
    fn move_to_active(
        &mut self,
        now: Time,
        mut pod: QueuedPod,
        cause: Cause,
        from_backoff: bool,
        hooks: &dyn QueueHooks<P>,
    ) -> QueueName {
        if !from_backoff {
            self.run_pre_enqueue(&mut pod, hooks);
        }
        if pod.gated() {
            self.put(pod, QueueName::Unschedulable);
            return QueueName::Unschedulable;
        }
        pod.initial_attempt.get_or_insert(now);
        if matches!(cause, Cause::PodAdd | Cause::PodUpdate) {
            self.nominator
                .add(pod.pod.id, pod.pod.nominated_node.as_deref(), None);
        }
        self.put(pod, QueueName::Active);
        QueueName::Active
    }

    /// `moveToBackoffQ`: PreEnqueue runs on entry (PopFromBackoffQ); a gated pod goes to the
    /// pool instead.
    fn move_to_backoff(&mut self, mut pod: QueuedPod, hooks: &dyn QueueHooks<P>) -> QueueName {
        self.run_pre_enqueue(&mut pod, hooks);
        let queue = if pod.gated() {
            QueueName::Unschedulable
        } else {
            QueueName::Backoff
        };
        self.put(pod, queue);
        queue
    }

    /// `requeuePodWithQueueingStrategy`.
    fn requeue(
        &mut self,
        now: Time,
        pod: QueuedPod,
        strategy: Strategy,
        hooks: &dyn QueueHooks<P>,
    ) -> QueueName {
        match strategy {
            Strategy::Skip => {
                self.put(pod, QueueName::Unschedulable);
                QueueName::Unschedulable
            }
            Strategy::AfterBackoff if backoff::is_backing_off(&self.config, &pod, now) => {
                self.move_to_backoff(pod, hooks)
            }
            _ => self.move_to_active(now, pod, Cause::Other, false, hooks),
        }
    }

    /// `movePodsToActiveOrBackoffQueue`.
    fn move_pods(
        &mut self,
        now: Time,
        ids: &[PodId],
        event: ClusterEvent,
        payload: &P,
        hooks: &dyn QueueHooks<P>,
    ) {
        if !self.registry.is_of_interest(&event) {
            return;
        }
        for &id in ids {
            let Some(pod) = self.get(id) else { continue };
            if let Some(gate) = &pod.gating_plugin
                && !self.registry.plugin_matches(gate, &event)
            {
                continue;
            }
            let strategy = self.worth_requeuing(pod, &event, payload, hooks);
            if strategy == Strategy::Skip {
                continue;
            }
            let pod = self.take(id);
            self.requeue(now, pod, strategy, hooks);
        }
        self.active.record_if_any_in_flight(event, payload);
    }

    /// `isPodWorthRequeuing`: only the hints of the pod's rejector plugins count; a wildcard
    /// event means after-backoff (unless it aims at another pod); a Queue from a Pending
    /// plugin means immediately, from an Unschedulable one after backoff; an error is Queue.
    pub fn worth_requeuing(
        &self,
        pod: &QueuedPod,
        event: &ClusterEvent,
        payload: &P,
        hooks: &dyn QueueHooks<P>,
    ) -> Strategy {
        if pod.unschedulable_plugins.is_empty() && pod.pending_plugins.is_empty() {
            return Strategy::AfterBackoff;
        }
        if event.is_wildcard() {
            return match event.target {
                Some(target) if target != pod.pod.id => Strategy::Skip,
                _ => Strategy::AfterBackoff,
            };
        }
        let mut strategy = Strategy::Skip;
        for (registered, plugins) in self.registry.entries() {
            if !registered.matches(event) {
                continue;
            }
            for plugin in plugins {
                let pending = pod.pending_plugins.contains(plugin);
                if !pending && !pod.unschedulable_plugins.contains(plugin) {
                    continue;
                }
                let hint = hooks
                    .hint(plugin, registered, pod, event, payload)
                    .unwrap_or(QueueingHint::Queue);
                if hint == QueueingHint::QueueSkip {
                    continue;
                }
                if pending {
                    return Strategy::Immediately;
                }
                if pod.pending_plugins.is_empty() {
                    return Strategy::AfterBackoff;
                }
                strategy = Strategy::AfterBackoff;
            }
        }
        strategy
    }
}

/// The first tick of period `period` and phase `phase` at or after `t`.
fn next_tick(t: Time, phase: u64, period: u64) -> Time {
    let phase = phase % period;
    if t.0 <= phase {
        return Time(phase);
    }
    let k = (t.0 - phase).div_ceil(period);
    Time(phase + k * period)
}
