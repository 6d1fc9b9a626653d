//! A scenario's run: pods reach the queue in [`plan`] order, are scheduled one cycle at a time
//! (gang members together), and the timeline's events change the cluster in between. After
//! each timeline step the pending pods are tried again — the step's events are what moves
//! them back to the active queue in kube-scheduler — and the state is recorded.

use super::cluster::Cluster;
use super::cycle::{Nominating, PodOutcome, PodPhase, Scheduler, SchedulerConfig, existing_pod_id};
use super::gang;
use super::plan::DependsOnStatus;
use super::plan::{self, Event, PodSelector, Requirement, Step, Waiter};
use crate::model::pod::GangScheduler;
use crate::model::{Node, Pod};

/// The result of scheduling a scenario's pods.
#[derive(Debug, Clone)]
pub struct Outcome {
    pub pods: Vec<PodOutcome>,
    /// Indices of the existing pods that were preempted.
    pub preempted_existing: Vec<usize>,
    pub cluster: Cluster,
    /// The state after each timeline step.
    pub timeline: Vec<Checkpoint>,
    /// The scenario's ResourceClaims at the end of the run (allocations and reservations as
    /// the DynamicResources plugin and the resourceclaim controller left them; deleted ones
    /// gone). Empty without DRA objects.
    pub dra_claims: Vec<k8s_openapi::api::resource::v1::ResourceClaim>,
    /// Per workload pod: the GPU indices `Open-Gpu-Share` reserved for it on its node (empty
    /// when it holds none).
    pub gpu_indices: Vec<Vec<usize>>,
    /// `schedsim explain`: the last cycle of each workload pod asked about, by pod index.
    pub explained: std::collections::BTreeMap<usize, crate::sched::explain::Explanation>,
}

/// The name of the state before the first timeline step.
pub const INITIAL_ARRIVAL: &str = "initial arrival";

/// The state after one timeline step, for the report.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    pub name: String,
    /// Per workload pod: phase, node name, message; `None` before the pod arrives.
    pub pods: Vec<Option<(PodPhase, Option<String>, String)>>,
    /// The evictions a `drain` in the step could not make: the pods stay on their node.
    pub blocked_evictions: Vec<BlockedEviction>,
}

/// An eviction the API server refused (`kubectl drain` reports it and retries until its
/// timeout).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BlockedEviction {
    /// `namespace/name`.
    pub pod: String,
    pub node: String,
    /// The PodDisruptionBudget that refused it, when one did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<String>,
    /// The HTTP status of the refusal (429 Too Many Requests, 500 for several budgets).
    pub code: u16,
    /// The API server's message and its cause.
    pub message: String,
}

/// Schedules `pods` in arrival order onto `nodes`, where `existing` pods are already bound.
pub fn schedule(
    nodes: Vec<Node>,
    existing: &[Pod],
    pods: &[Pod],
    config: &SchedulerConfig,
) -> Outcome {
    schedule_plan(nodes, existing, pods, &plan::in_order(pods.len()), config)
}

/// Runs the `steps` of a scenario: pods arrive (if their `dependsOn` requirements hold) and are
/// scheduled one at a time; completed pods free their resources; timeline events happen.
pub fn schedule_plan(
    nodes: Vec<Node>,
    existing: &[Pod],
    pods: &[Pod],
    steps: &[Step],
    config: &SchedulerConfig,
) -> Outcome {
    let all: Vec<&Pod> = existing.iter().chain(pods).collect();
    let mut run = Run {
        s: Scheduler::new(Cluster::new(nodes, &all), config, pods, existing),
        pods,
        existing,
        config,
        outcomes: vec![None; pods.len()],
        done: vec![false; pods.len()],
        evicted_existing: Vec::new(),
        timeline: Vec::new(),
        requires: vec![&[]; pods.len()],
        complete_due: vec![false; pods.len()],
        blocked: Vec::new(),
    };
    for (i, p) in existing.iter().enumerate() {
        if let Some(node) = p
            .node_name
            .as_deref()
            .and_then(|n| run.s.cluster.index_of(n))
        {
            run.s.bind(node, existing_pod_id(i), p);
        }
    }
    let order = plan::queue_order(steps, |i| pods[i].priority);
    for step in &order {
        if let Step::Schedule { pod, requires } = step {
            run.requires[*pod] = requires;
        }
    }
    for (k, step) in order.iter().enumerate() {
        let timeline_starts = matches!(
            step,
            Step::StepStart | Step::Event(_) | Step::Checkpoint { .. }
        );
        if timeline_starts && run.timeline.is_empty() {
            run.record(INITIAL_ARRIVAL);
        }
        match step {
            Step::Complete { pods: finished } => run.complete(finished),
            Step::Schedule { pod, requires } => {
                if k == 0 || !matches!(order[k - 1], Step::Schedule { .. }) {
                    run.nominate_arrivals(&order[k..]);
                }
                run.arrive(*pod, requires, &order[k..])
            }
            Step::StepStart => {}
            Step::Event(event) => run.event(event),
            Step::Checkpoint { name } => run.checkpoint(name),
        }
    }
    run.evicted_existing.sort_unstable();
    let pods: Vec<PodOutcome> = run
        .outcomes
        .into_iter()
        .map(|o| {
            o.unwrap_or_else(|| PodOutcome {
                phase: PodPhase::Waiting,
                node: None,
                message: "never created: no step of the scenario brings this pod to the scheduler"
                    .into(),
                diagnosis: None,
                victims: Vec::new(),
                pdb_violations: 0,
                gang: None,
                evaluated: None,
                nominating: Default::default(),
            })
        })
        .collect();
    let dra_claims = run.s.dra.claims().into_iter().cloned().collect();
    let gpu_indices = (pods.iter().enumerate())
        .map(|(i, o): (usize, &PodOutcome)| {
            (o.node.and_then(|n| run.s.gpu_indices(n, i)))
                .map(<[usize]>::to_vec)
                .unwrap_or_default()
        })
        .collect();
    let explained = std::mem::take(&mut run.s.explained).into_iter().collect();
    Outcome {
        gpu_indices,
        explained,
        pods,
        preempted_existing: run.evicted_existing,
        cluster: run.s.cluster,
        timeline: run.timeline,
        dra_claims,
    }
}

/// The scheduler and what has happened to every pod so far.
struct Run<'a> {
    s: Scheduler<'a>,
    pods: &'a [Pod],
    existing: &'a [Pod],
    config: &'a SchedulerConfig,
    outcomes: Vec<Option<PodOutcome>>,
    /// Gang members already scheduled with an earlier member of their gang.
    done: Vec<bool>,
    /// Existing pods preempted or evicted (indices into `existing`).
    evicted_existing: Vec<usize>,
    timeline: Vec<Checkpoint>,
    /// Each pod's `dependsOn` requirements.
    requires: Vec<&'a [Requirement]>,
    /// Pods that finish once they ran (initializers that dependents need `Complete`).
    complete_due: Vec<bool>,
    /// The evictions the step's drain could not make, for its checkpoint.
    blocked: Vec<BlockedEviction>,
}

impl Run<'_> {
    /// A pod reaches the queue: it is scheduled (with the rest of its gang, if it has one)
    /// unless a `dependsOn` requirement keeps JobSet from creating it.
    fn arrive(&mut self, i: usize, requires: &[Requirement], queue: &[Step]) {
        if self.done[i] {
            return;
        }
        if let Some(unmet) = requires
            .iter()
            .find(|r| !requirement_met(r, &self.outcomes))
        {
            self.outcomes[i] = Some(waiting(unmet, &self.outcomes));
            return;
        }
        self.nominate_own(i);
        self.attempt(i, queue, requires);
    }

    /// Pods that arrive together, from the first of `queue` on, enter the queue together: the
    /// nominator records those with a `status.nominatedNodeName` (`moveToActiveQ` at `Add`),
    /// before any of them is tried.
    fn nominate_arrivals(&mut self, queue: &[Step]) {
        for step in queue {
            match step {
                Step::Schedule { pod, requires } if requires.is_empty() => self.nominate_own(*pod),
                Step::Schedule { .. } => {}
                _ => break,
            }
        }
    }

    /// The nominator records a queued pod's own `status.nominatedNodeName`, once.
    fn nominate_own(&mut self, i: usize) {
        if self.outcomes[i].is_none()
            && !self.s.is_nominated(i)
            && let Some(node) = &self.pods[i].nominated_node_name
        {
            self.s.nominate(i, Some(node));
        }
    }

    /// What an attempt does to the pod's nomination: a bound pod leaves the nominator
    /// (`assume`), a failed one keeps, takes or loses its node as the cycle says.
    fn renominate(&mut self, i: usize, outcome: &PodOutcome) {
        match outcome.nominating {
            _ if outcome.phase == PodPhase::Scheduled => self.s.nominate(i, None),
            Nominating::Clear => self.s.nominate(i, None),
            Nominating::Set(node) => {
                let name = self.s.cluster.nodes[node].name.clone();
                self.s.nominate(i, Some(&name));
            }
            Nominating::Noop => {}
        }
    }

    /// One scheduling attempt of pod `i`, or of its gang's members the queue holds.
    fn attempt(&mut self, i: usize, queue: &[Step], requires: &[Requirement]) {
        let pod = &self.pods[i];
        // Coscheduling gangs need a profile that runs the plugin; without it the label is
        // just a label.
        let coscheduling = self.config.runs_coscheduling(pod);
        let group = crate::model::pod_group::group_of(pod, &self.config.pod_groups)
            .filter(|g| g.scheduler != GangScheduler::Coscheduling || coscheduling);
        let results = match group {
            Some(group) => {
                let args = self.config.coscheduling_args(pod);
                let attempt = gang_attempt(
                    args,
                    &group,
                    queue,
                    requires,
                    self.pods,
                    self.existing,
                    &self.outcomes,
                );
                for &(m, _) in &attempt.queued {
                    self.done[m] = true;
                }
                gang::schedule(&mut self.s, attempt)
            }
            None => {
                let mut outcome = self.s.schedule_one(i, pod);
                if coscheduling && gang::lacks_pod_group(pod, &self.config.pod_groups) {
                    gang::without_pod_group(&mut outcome);
                }
                if let Some(node) = outcome.node {
                    self.s.bind(node, i, pod);
                }
                vec![(i, outcome)]
            }
        };
        for (m, outcome) in results {
            // The pod exists from its first attempt on: its budgets expect it.
            self.s.budgets.arrive(m, &self.pods[m]);
            for &v in &outcome.victims {
                self.s.dra_pod_deleted(v);
                match self.outcomes.get_mut(v).and_then(Option::as_mut) {
                    Some(victim) => {
                        victim.phase = PodPhase::Preempted;
                        victim.node = None;
                        victim.evaluated = None;
                        victim.message = format!("Preempted by pod {}", self.pods[m].key());
                    }
                    None => self.evicted_existing.push(usize::MAX - v),
                }
            }
            self.renominate(m, &outcome);
            self.outcomes[m] = Some(outcome);
        }
    }

    /// The pods finished: bound ones free their resources.
    fn complete(&mut self, finished: &[usize]) {
        for &i in finished {
            self.complete_due[i] = true;
            if let Some(o) = self.outcomes[i]
                .as_mut()
                .filter(|o| o.phase == PodPhase::Scheduled)
            {
                if let Some(node) = o.node {
                    self.s.unbind(node, i);
                }
                self.s.dra_pod_deleted(i);
                o.phase = PodPhase::Succeeded;
            }
        }
    }

    fn selected(&self, selector: &PodSelector) -> Vec<usize> {
        (0..self.pods.len())
            .filter(|&i| selector.matches(&self.pods[i]))
            .collect()
    }

    fn event(&mut self, event: &Event) {
        match event {
            Event::RemoveSchedulingGates { pods, gates } => {
                for i in self.selected(pods) {
                    self.s.remove_gates(i, gates.as_deref());
                    // A gated pod goes back to the queue once no gate is left.
                    if let Some(o) = self.outcomes[i]
                        .as_mut()
                        .filter(|o| o.phase == PodPhase::SchedulingGated)
                        && !self.s.is_gated(i, &self.pods[i])
                    {
                        o.phase = PodPhase::Unschedulable;
                        o.message = "scheduling gates removed: queued".into();
                    }
                }
            }
            Event::Complete(pods) => {
                let finished = self.selected(pods);
                self.complete(&finished);
            }
            Event::Delete { pods, message } => {
                // Existing pods of the deleted jobs free their nodes too.
                for (i, p) in self.existing.iter().enumerate() {
                    let id = existing_pod_id(i);
                    let node = p
                        .node_name
                        .as_deref()
                        .and_then(|n| self.s.cluster.index_of(n));
                    if let Some(node) = node
                        && pods.matches(p)
                        && self.s.bound_ids(node).contains(&id)
                    {
                        self.s.unbind(node, id);
                        self.s.dra_pod_deleted(id);
                        self.evicted_existing.push(i);
                    }
                    if pods.matches(p) {
                        self.s.budgets.delete(id, p);
                    }
                }
                for i in self.selected(pods) {
                    self.s.budgets.delete(i, &self.pods[i]);
                    if self.s.is_nominated(i) {
                        self.s.nominate(i, None);
                    }
                    if let Some(o) = self.outcomes[i].as_mut() {
                        if let (PodPhase::Scheduled, Some(node)) = (o.phase, o.node) {
                            self.s.unbind(node, i);
                            self.s.dra_pod_deleted(i);
                        }
                        o.phase = PodPhase::Preempted;
                        o.node = None;
                        o.message = message.clone();
                        o.diagnosis = None;
                        o.evaluated = None;
                    }
                }
            }
            Event::Recreate { pods, message } => {
                for i in self.selected(pods) {
                    if self.outcomes[i].is_some() {
                        self.evicted(i, message);
                    }
                }
            }
            Event::Cordon(names) => self.set_unschedulable(names, true),
            Event::Uncordon(names) => self.set_unschedulable(names, false),
            Event::Drain(names) => self.drain(names),
            Event::FailNodes(names) => {
                let nodes: Vec<Node> = self
                    .s
                    .cluster
                    .nodes
                    .iter()
                    .filter(|n| !names.contains(&n.name))
                    .cloned()
                    .collect();
                self.replace_nodes(nodes, "failed");
            }
            Event::AddNodes(added) => {
                let mut nodes = self.s.cluster.nodes.clone();
                nodes.extend(added.iter().cloned());
                self.replace_nodes(nodes, "");
            }
        }
    }

    /// `kubectl drain --ignore-daemonsets`: cordon, then evict every pod of the nodes but
    /// DaemonSet pods (their controller would put them back at once; they tolerate the
    /// cordon) through the Eviction API, which refuses an eviction that a
    /// PodDisruptionBudget forbids. kubectl retries refused evictions until its timeout,
    /// while the evicted pods' replacements are scheduled elsewhere and may give the budgets
    /// room again: here, rounds of evictions and rescheduling until one changes nothing. The
    /// evictions still refused are recorded; their pods stay on the cordoned node.
    fn drain(&mut self, names: &[String]) {
        self.set_unschedulable(names, true);
        let mut blocked = Vec::new();
        for _ in 0..=self.pods.len() + self.existing.len() {
            blocked.clear();
            let mut evicted = 0;
            for name in names {
                let Some(node) = self.s.cluster.index_of(name) else {
                    continue;
                };
                for id in self.s.bound_ids(node) {
                    if is_daemon_pod(self.pod(id)) {
                        continue;
                    }
                    match self.s.budgets.evict(id, self.pod(id)) {
                        Ok(()) => {
                            self.s.unbind(node, id);
                            self.evicted(id, &format!("evicted: node {name} was drained"));
                            evicted += 1;
                        }
                        Err(refusal) => blocked.push(BlockedEviction {
                            pod: self.pod(id).key(),
                            node: name.clone(),
                            budget: refusal.budget,
                            code: refusal.code,
                            message: refusal.message,
                        }),
                    }
                }
            }
            if blocked.is_empty() {
                break;
            }
            let before = self.bound_count();
            self.retry_pending();
            if evicted == 0 && self.bound_count() == before {
                break;
            }
        }
        self.blocked.extend(blocked);
    }

    fn set_unschedulable(&mut self, names: &[String], unschedulable: bool) {
        let mut nodes = self.s.cluster.nodes.clone();
        for n in nodes.iter_mut().filter(|n| names.contains(&n.name)) {
            n.unschedulable = unschedulable;
        }
        self.replace_nodes(nodes, "");
    }

    /// New node list: bound pods stay where their node still is; pods of vanished nodes are
    /// evicted; pod outcomes point at the new node indices.
    fn replace_nodes(&mut self, nodes: Vec<Node>, why: &str) {
        let old: Vec<String> = self
            .s
            .cluster
            .nodes
            .iter()
            .map(|n| n.name.clone())
            .collect();
        let (remap, evicted) = self.s.replace_nodes(nodes);
        for o in self.outcomes.iter_mut().flatten() {
            o.node = o.node.and_then(|n| remap[n]);
        }
        for (id, node) in evicted {
            let message = format!("evicted: node {} {why}", old[node]);
            match self.outcomes.get_mut(id).and_then(Option::as_mut) {
                // The DaemonSet controller wants no pod for a node that is gone.
                Some(o) if is_daemon_pod(&self.pods[id]) => {
                    o.phase = PodPhase::Preempted;
                    o.node = None;
                    o.message =
                        format!("{message}; its DaemonSet creates no pod for a node that is gone");
                    o.diagnosis = None;
                }
                _ => self.evicted(id, &message),
            }
        }
    }

    /// A bound pod by id (workload pods count up from 0, existing pods down from `usize::MAX`).
    fn pod(&self, id: usize) -> &Pod {
        match self.pods.get(id) {
            Some(p) => p,
            None => &self.existing[usize::MAX - id],
        }
    }

    /// A bound pod was evicted: its controller creates it again (a workload pod is queued
    /// anew); an existing pod is reported as evicted.
    fn evicted(&mut self, id: usize, message: &str) {
        match self.outcomes.get_mut(id).and_then(Option::as_mut) {
            Some(o) => {
                o.phase = PodPhase::Unschedulable;
                o.node = None;
                o.message = format!("{message}; re-created and queued");
                o.diagnosis = None;
                o.evaluated = None;
            }
            None => self.evicted_existing.push(usize::MAX - id),
        }
    }

    /// End of a timeline step: until nothing changes, pods that ran and are due to finish
    /// finish, JobSet creates the pods whose `dependsOn` now holds, and pending pods are tried
    /// again in queue order (priority, then arrival). Then the state is recorded.
    fn checkpoint(&mut self, name: &str) {
        // Each round binds, finishes or creates something, or ends the loop; the bound keeps a
        // preemption ping-pong from running forever.
        for _ in 0..=self.pods.len() {
            let due: Vec<usize> = (0..self.pods.len())
                .filter(|&i| self.complete_due[i] && self.phase(i) == Some(PodPhase::Scheduled))
                .collect();
            self.complete(&due);
            let mut created = 0;
            for i in 0..self.pods.len() {
                let requires = self.requires[i];
                if self.phase(i) == Some(PodPhase::Waiting)
                    && requires.iter().all(|r| requirement_met(r, &self.outcomes))
                    && let Some(o) = self.outcomes[i].as_mut()
                {
                    o.phase = PodPhase::Unschedulable;
                    o.message = match requires.first().map(|r| &r.by) {
                        Some(Waiter::StatefulSet(set)) => format!(
                            "created: StatefulSet {set} creates it once pod {} is Running and Ready (OrderedReady), as it is now",
                            requires[0].job
                        ),
                        _ => "created: its dependsOn requirements hold now".into(),
                    };
                    created += 1;
                }
            }
            let before = self.bound_count();
            self.retry_pending();
            if due.is_empty() && created == 0 && self.bound_count() == before {
                break;
            }
        }
        self.record(name);
    }

    fn phase(&self, i: usize) -> Option<PodPhase> {
        self.outcomes[i].as_ref().map(|o| o.phase)
    }

    fn bound_count(&self) -> usize {
        (0..self.pods.len())
            .filter(|&i| self.phase(i) == Some(PodPhase::Scheduled))
            .count()
    }

    /// Tries every pending pod again, in queue order.
    fn retry_pending(&mut self) {
        let mut pending: Vec<usize> = (0..self.pods.len())
            .filter(|&i| {
                self.outcomes[i]
                    .as_ref()
                    .is_some_and(|o| o.phase.is_retried())
            })
            .collect();
        pending.sort_by_key(|&i| (std::cmp::Reverse(self.pods[i].priority), i));
        self.done.fill(false);
        for i in pending {
            // A gang attempt may have placed it already, or it may have been retried with it.
            if !self.done[i]
                && self.outcomes[i]
                    .as_ref()
                    .is_some_and(|o| o.phase.is_retried())
            {
                self.attempt(i, &[], &[]);
            }
        }
        self.done.fill(false);
    }

    fn record(&mut self, name: &str) {
        let names = &self.s.cluster.nodes;
        self.timeline.push(Checkpoint {
            name: name.to_string(),
            blocked_evictions: std::mem::take(&mut self.blocked),
            pods: self
                .outcomes
                .iter()
                .map(|o| {
                    o.as_ref().map(|o| {
                        (
                            o.phase,
                            o.node.map(|n| names[n].name.clone()),
                            o.message.clone(),
                        )
                    })
                })
                .collect(),
        });
    }
}

/// The members of `group` the queue holds at a step: the pods of the group that arrive with
/// it (the following steps with the same requirements), after those that were tried before
/// and are pending (a new sibling moves them back to the active queue).
fn gang_attempt<'p>(
    args: crate::sched::profile::CoschedulingArgs,
    group: &'p crate::model::pod_group::PodGroup,
    queue: &[Step],
    requires: &[Requirement],
    pods: &'p [Pod],
    existing: &[Pod],
    outcomes: &[Option<PodOutcome>],
) -> gang::Attempt<'p> {
    let key = Some(group.key());
    let member = |p: &Pod| crate::model::pod_group::key_of(p) == key;
    // Members seen before, by phase: pending ones are retried, bound and gated ones exist.
    let mut queued: Vec<(usize, &Pod)> = Vec::new();
    let (mut bound, mut gated) = (0, 0);
    for (i, o) in outcomes.iter().enumerate() {
        match o.as_ref().map(|o| o.phase) {
            Some(phase) if member(&pods[i]) => match phase {
                PodPhase::Unschedulable | PodPhase::SchedulerError => queued.push((i, &pods[i])),
                PodPhase::Scheduled => bound += 1,
                PodPhase::SchedulingGated => gated += 1,
                _ => {}
            },
            _ => {}
        }
    }
    queued.extend(
        queue
            .iter()
            .map_while(|s| match s {
                Step::Schedule { pod, requires: r } if r.as_slice() == requires => Some(*pod),
                _ => None,
            })
            .filter(|&i| member(&pods[i]) && outcomes[i].is_none())
            .map(|i| (i, &pods[i])),
    );
    bound += existing
        .iter()
        .filter(|p| member(p) && p.node_name.is_some())
        .count();
    gang::Attempt {
        group,
        siblings: queued.len() + bound + gated,
        queued,
        bound,
        gated,
        permit_waiting_seconds: args.permit_waiting_seconds,
        reject_percentage: args.pod_group_reject_percentage,
        stop_when_ready: false,
    }
}

/// A pod a DaemonSet controls.
fn is_daemon_pod(pod: &Pod) -> bool {
    pod.controller_kind() == Some("DaemonSet")
}

/// Every pod of the dependency is running or has run.
fn requirement_met(r: &Requirement, outcomes: &[Option<PodOutcome>]) -> bool {
    outcomes[r.pods.clone()].iter().all(|o| {
        o.as_ref()
            .is_some_and(|o| matches!(o.phase, PodPhase::Scheduled | PodPhase::Succeeded))
    })
}

/// A pod JobSet never creates because a dependency did not get there.
fn waiting(r: &Requirement, outcomes: &[Option<PodOutcome>]) -> PodOutcome {
    let missing = outcomes[r.pods.clone()]
        .iter()
        .filter(|o| {
            !o.as_ref()
                .is_some_and(|o| matches!(o.phase, PodPhase::Scheduled | PodPhase::Succeeded))
        })
        .count();
    let status = match r.status {
        DependsOnStatus::Complete => "Complete",
        DependsOnStatus::Ready => "Ready",
    };
    let message = match &r.by {
        Waiter::JobSet => format!(
            "not created: JobSet waits for replicated job {:?} to be {status} (dependsOn), and {missing} of its {} pod(s) never ran",
            r.job,
            r.pods.len()
        ),
        Waiter::StatefulSet(set) => format!(
            "not created: StatefulSet {set} creates its pods in order (podManagementPolicy OrderedReady) and pod {} is not Running and Ready",
            r.job
        ),
    };
    PodOutcome {
        phase: PodPhase::Waiting,
        node: None,
        message,
        diagnosis: None,
        victims: Vec::new(),
        pdb_violations: 0,
        gang: None,
        evaluated: None,
        nominating: Default::default(),
    }
}
