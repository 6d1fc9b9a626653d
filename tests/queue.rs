//! kube-scheduler's scheduling-queue tests (`pkg/scheduler/backend/queue/
//! scheduling_queue_test.go`, `backoff_queue_test.go`) as data: `tests/data/queue/*.yaml`
//! holds each upstream case as a sequence of operations on a virtual clock, and this file
//! runs them. Plus property tests of the queue's invariants.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use schedsim::sched::queue::{
    ClusterEvent, Failure, HintRegistry, PodId, PriorityQueue, QueueConfig, QueueHooks, QueueName,
    QueuePod, QueueSort, QueuedPod, QueueingHint, Strategy as Requeue, Time, namespaced_name,
};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Case {
    name: String,
    #[allow(dead_code)]
    upstream: String,
    #[serde(default)]
    start: u64,
    #[serde(default)]
    config: Option<Config>,
    #[serde(default)]
    hints: Vec<Hint>,
    #[serde(default)]
    pre_enqueue: Option<PreEnqueue>,
    #[serde(default)]
    pods: Vec<Pod>,
    #[serde(default)]
    generate: Vec<Generate>,
    steps: Vec<Step>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Config {
    initial_backoff_ms: Option<u64>,
    max_backoff_ms: Option<u64>,
    max_in_unschedulable_ms: Option<u64>,
    /// `PrioritySort` (the default) or `Coscheduling`.
    queue_sort: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Hint {
    event: String,
    plugin: String,
    /// queue, skip or error.
    hint: String,
}

/// upstream's `preEnqueuePlugin`: a pod passes when it has one of the `allow` labels.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PreEnqueue {
    plugin: String,
    allow: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Pod {
    name: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    priority: i32,
    #[serde(default)]
    nominated: Option<String>,
    #[serde(default)]
    labels: Vec<String>,
    /// The PodGroup its `scheduling.x-k8s.io/pod-group` label names (in its namespace).
    #[serde(default, rename = "podGroup")]
    pod_group: Option<String>,
}

/// `makeQueuedPodInfos`: `prefix-1`…`prefix-count` in namespaces `ns1`….
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Generate {
    prefix: String,
    count: u32,
    #[serde(default)]
    labels: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
enum Step {
    Add(Vec<String>),
    /// Pops and checks the pod (`~`: the queue is empty).
    Pop(Option<String>),
    Fail(Fail),
    Done(String),
    Event(String),
    /// Advance the clock by milliseconds (`moveClockForward` is 3000).
    Tick(u64),
    /// `flushBackoffQCompleted` now.
    FlushBackoff(()),
    /// `flushUnschedulablePodsLeftover` now.
    FlushUnschedulable(()),
    Seed(Seed),
    Update(Update),
    Delete(Vec<String>),
    Activate(Vec<String>),
    Worth(Worth),
    Nominate(Nominate),
    Expect(Expect),
    /// Coscheduling's time for a PodGroup (`namespace/name`): its creation, or its last
    /// failure (`MarkPodGroupScheduleFailure`); `at: ~` when it does not exist.
    GroupTime(GroupTime),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupTime {
    group: String,
    at: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Fail {
    pod: String,
    #[serde(default)]
    unschedulable: Vec<String>,
    #[serde(default)]
    pending: Vec<String>,
    #[serde(default)]
    expect: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Seed {
    pods: Vec<String>,
    queue: String,
    /// Absolute timestamp (ms); default now.
    #[serde(default)]
    at: Option<u64>,
    #[serde(default)]
    unschedulable_count: u32,
    #[serde(default)]
    plugins: Vec<String>,
    #[serde(default)]
    gated_by: Option<String>,
    /// `InitialAttemptTimestamp` (ms); default none.
    #[serde(default)]
    initial_attempt: Option<u64>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Update {
    pods: Vec<String>,
    /// Labels the pods get (replacing theirs).
    #[serde(default)]
    labels: Option<Vec<String>>,
    #[serde(default)]
    nominated: Option<String>,
    #[serde(default = "default_update_events")]
    events: Vec<String>,
}

fn default_update_events() -> Vec<String> {
    vec!["UnscheduledPod/Update".into()]
}

/// `isPodWorthRequeuing` on a pod with these rejector plugins.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Worth {
    pod: String,
    #[serde(default)]
    unschedulable: Vec<String>,
    #[serde(default)]
    pending: Vec<String>,
    event: String,
    /// For ForceActivate: the pod it aims at.
    #[serde(default)]
    target: Option<String>,
    expect: String,
    calls: usize,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Nominate {
    pod: String,
    #[serde(default)]
    node: Option<String>,
    #[serde(default)]
    delete: bool,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Expect {
    /// activeQ in pop order.
    active: Option<Vec<String>>,
    /// backoffQ, sorted by name.
    backoff: Option<Vec<String>>,
    /// The unschedulable pool, sorted by name.
    unschedulable: Option<Vec<String>>,
    in_flight: Option<Vec<String>>,
    /// `inFlightEvents`: pod names and events in order.
    in_flight_log: Option<Vec<String>>,
    /// active, backoff, unschedulable, gated.
    counts: Option<[usize; 4]>,
    /// upstream TestBackOffFlow's check: `trunc(expiry − last failure) + 1 s`.
    backoff_of: Option<(String, u64)>,
    nominated: Option<BTreeMap<String, Vec<String>>>,
}

struct Hooks {
    hints: BTreeMap<(String, String), String>,
    calls: Cell<usize>,
    pre_enqueue: Option<PreEnqueue>,
    labels: RefCell<BTreeMap<PodId, BTreeSet<String>>>,
}

impl QueueHooks<()> for Hooks {
    fn hint(
        &self,
        plugin: &str,
        registered: &ClusterEvent,
        _: &QueuedPod,
        _: &ClusterEvent,
        _: &(),
    ) -> Result<QueueingHint, String> {
        self.calls.set(self.calls.get() + 1);
        let key = (format!("{registered:?}"), plugin.to_string());
        match self.hints.get(&key).map(String::as_str) {
            Some("skip") => Ok(QueueingHint::QueueSkip),
            Some("error") => Err("unexpected error".into()),
            _ => Ok(QueueingHint::Queue),
        }
    }

    fn pre_enqueue(&self, pod: &QueuedPod) -> Option<String> {
        let pe = self.pre_enqueue.as_ref()?;
        let labels = self.labels.borrow();
        let has = labels
            .get(&pod.pod.id)
            .is_some_and(|l| pe.allow.iter().any(|a| l.contains(a)));
        (!has).then(|| pe.plugin.clone())
    }
}

fn event(s: &str) -> ClusterEvent {
    ClusterEvent::parse(s).unwrap_or_else(|| panic!("unknown event {s}"))
}

struct Run {
    queue: PriorityQueue<()>,
    hooks: Hooks,
    now: Time,
    ids: BTreeMap<String, PodId>,
    names: BTreeMap<PodId, String>,
    pods: BTreeMap<PodId, QueuePod>,
    failed_at: BTreeMap<PodId, Time>,
}

impl Run {
    fn id(&self, name: &str) -> PodId {
        *self
            .ids
            .get(name)
            .unwrap_or_else(|| panic!("unknown pod {name}"))
    }

    /// Names, with `prefix-a..prefix-b` expanded.
    fn expand(&self, names: &[String]) -> Vec<PodId> {
        let mut out = Vec::new();
        for n in names {
            if let Some((from, to)) = n.split_once("..") {
                let (prefix, a) = from.rsplit_once('-').unwrap();
                let (_, b) = to.rsplit_once('-').unwrap();
                let (a, b): (u32, u32) = (a.parse().unwrap(), b.parse().unwrap());
                out.extend((a..=b).map(|i| self.id(&format!("{prefix}-{i}"))));
            } else {
                out.push(self.id(n));
            }
        }
        out
    }

    fn names(&self, ids: impl IntoIterator<Item = PodId>) -> Vec<String> {
        ids.into_iter().map(|id| self.names[&id].clone()).collect()
    }

    fn sorted(&self, ids: impl IntoIterator<Item = PodId>) -> Vec<String> {
        let mut v = self.names(ids);
        v.sort();
        v
    }
}

/// name, namespace, priority, nominated node, labels, PodGroup.
type PodRow = (
    String,
    String,
    i32,
    Option<String>,
    Vec<String>,
    Option<String>,
);

fn build(case: &Case) -> Run {
    let mut config = QueueConfig::default();
    if let Some(c) = &case.config {
        config.initial_backoff_ms = c.initial_backoff_ms.unwrap_or(config.initial_backoff_ms);
        config.max_backoff_ms = c.max_backoff_ms.unwrap_or(config.max_backoff_ms);
        config.max_in_unschedulable_ms = c
            .max_in_unschedulable_ms
            .unwrap_or(config.max_in_unschedulable_ms);
        config.queue_sort = match c.queue_sort.as_deref() {
            None | Some("PrioritySort") => QueueSort::PrioritySort,
            Some("Coscheduling") => QueueSort::Coscheduling,
            Some(other) => panic!("unknown queueSort {other}"),
        };
    }
    let mut registry: Vec<(ClusterEvent, Vec<String>)> = Vec::new();
    let mut hints = BTreeMap::new();
    for h in &case.hints {
        let e = event(&h.event);
        match registry.iter_mut().find(|(r, _)| *r == e) {
            Some((_, plugins)) => plugins.push(h.plugin.clone()),
            None => registry.push((e, vec![h.plugin.clone()])),
        }
        hints.insert((format!("{e:?}"), h.plugin.clone()), h.hint.clone());
    }
    let mut pods: Vec<PodRow> = case
        .pods
        .iter()
        .map(|p| {
            (
                p.name.clone(),
                p.namespace.clone(),
                p.priority,
                p.nominated.clone(),
                p.labels.clone(),
                p.pod_group.clone(),
            )
        })
        .collect();
    for g in &case.generate {
        for i in 1..=g.count {
            pods.push((
                format!("{}-{i}", g.prefix),
                format!("ns{i}"),
                0,
                None,
                g.labels.clone(),
                None,
            ));
        }
    }
    let mut run = Run {
        queue: PriorityQueue::new(config, HintRegistry::new(registry)),
        hooks: Hooks {
            hints,
            calls: Cell::new(0),
            pre_enqueue: case.pre_enqueue.as_ref().map(|p| PreEnqueue {
                plugin: p.plugin.clone(),
                allow: p.allow.clone(),
            }),
            labels: RefCell::new(BTreeMap::new()),
        },
        now: Time(case.start),
        ids: BTreeMap::new(),
        names: BTreeMap::new(),
        pods: BTreeMap::new(),
        failed_at: BTreeMap::new(),
    };
    for (i, (name, namespace, priority, nominated, labels, group)) in pods.into_iter().enumerate() {
        let id = PodId(i as u32);
        run.ids.insert(name.clone(), id);
        run.names.insert(id, name.clone());
        run.hooks
            .labels
            .borrow_mut()
            .insert(id, labels.into_iter().collect());
        let pod_group = group.map(|g| format!("{namespace}/{g}"));
        run.pods.insert(
            id,
            QueuePod {
                id,
                priority,
                namespaced_name: namespaced_name(&namespace, &name),
                nominated_node: nominated,
                pod_group,
            },
        );
    }
    run
}

fn strategy(s: &str) -> Requeue {
    match s {
        "skip" => Requeue::Skip,
        "afterBackoff" => Requeue::AfterBackoff,
        "immediately" => Requeue::Immediately,
        _ => panic!("unknown strategy {s}"),
    }
}

fn queue_name(s: &str) -> QueueName {
    match s {
        "active" => QueueName::Active,
        "backoff" => QueueName::Backoff,
        "unschedulable" => QueueName::Unschedulable,
        "inFlight" => QueueName::InFlight,
        _ => panic!("unknown queue {s}"),
    }
}

fn step(run: &mut Run, step: &Step, at: &str) {
    let now = run.now;
    match step {
        Step::Add(names) => {
            for id in run.expand(names) {
                let pod = run.pods[&id].clone();
                run.queue.add(now, pod, &run.hooks).unwrap();
            }
        }
        Step::Pop(want) => {
            let got = run.queue.pop(now).map(|p| run.names[&p.pod.id].clone());
            assert_eq!(&got, want, "{at}: popped");
        }
        Step::Fail(f) => {
            let id = run.id(&f.pod);
            let failure = Failure {
                unschedulable_plugins: f.unschedulable.iter().cloned().collect(),
                pending_plugins: f.pending.iter().cloned().collect(),
            };
            run.failed_at.insert(id, now);
            let q = run
                .queue
                .add_unschedulable_if_not_present(now, id, failure, &run.hooks)
                .unwrap();
            if let Some(want) = &f.expect {
                assert_eq!(q, queue_name(want), "{at}: requeued to");
            }
        }
        Step::Done(name) => run.queue.done(run.id(name)),
        Step::Event(e) => {
            run.queue
                .move_all_to_active_or_backoff(now, event(e), &(), None, &run.hooks)
        }
        Step::Tick(ms) => run.now = now.plus(*ms),
        Step::FlushBackoff(()) => run.queue.flush_backoff_completed(now, &run.hooks),
        Step::FlushUnschedulable(()) => {
            run.queue.flush_unschedulable_leftover(now, &run.hooks, &())
        }
        Step::Seed(s) => {
            for id in run.expand(&s.pods) {
                let mut p =
                    PriorityQueue::<()>::queued(Time(s.at.unwrap_or(now.0)), run.pods[&id].clone());
                p.unschedulable_count = s.unschedulable_count;
                p.initial_attempt = s.initial_attempt.map(Time);
                p.unschedulable_plugins = s.plugins.iter().cloned().collect();
                if let Some(g) = &s.gated_by {
                    p.gating_plugin = Some(g.clone());
                    p.unschedulable_plugins.insert(g.clone());
                }
                run.queue.seed(p, queue_name(&s.queue)).unwrap();
            }
        }
        Step::Update(u) => {
            for id in run.expand(&u.pods) {
                if let Some(labels) = &u.labels {
                    run.hooks
                        .labels
                        .borrow_mut()
                        .insert(id, labels.iter().cloned().collect());
                }
                let pod = run.pods.get_mut(&id).unwrap();
                if u.nominated.is_some() {
                    pod.nominated_node = u.nominated.clone();
                }
                let pod = pod.clone();
                let events: Vec<ClusterEvent> = u.events.iter().map(|e| event(e)).collect();
                run.queue.update(now, pod, &events, &(), &run.hooks);
            }
        }
        Step::Delete(names) => {
            for id in run.expand(names) {
                run.queue.delete(id);
            }
        }
        Step::GroupTime(g) => run.queue.set_group_time(&g.group, g.at.map(Time)),
        Step::Activate(names) => {
            let ids = run.expand(names);
            run.queue.activate(now, &ids, &(), &run.hooks);
        }
        Step::Worth(w) => {
            let id = run.id(&w.pod);
            let mut pod = PriorityQueue::<()>::queued(now, run.pods[&id].clone());
            pod.unschedulable_plugins = w.unschedulable.iter().cloned().collect();
            pod.pending_plugins = w.pending.iter().cloned().collect();
            let mut e = event(&w.event);
            if let Some(t) = &w.target {
                e = ClusterEvent::force_activate(run.id(t));
            }
            run.hooks.calls.set(0);
            let got = run.queue.worth_requeuing(&pod, &e, &(), &run.hooks);
            assert_eq!(got, strategy(&w.expect), "{at}: strategy");
            assert_eq!(run.hooks.calls.get(), w.calls, "{at}: hint calls");
        }
        Step::Nominate(n) => {
            let id = run.id(&n.pod);
            if n.delete {
                run.queue.delete_nominated_pod(id);
            } else {
                run.queue.add_nominated_pod(id, n.node.as_deref());
            }
        }
        Step::Expect(e) => expect(run, e, at),
    }
}

fn expect(run: &Run, e: &Expect, at: &str) {
    let q = &run.queue;
    if let Some(want) = &e.active {
        assert_eq!(&run.names(q.active_pods()), want, "{at}: activeQ");
    }
    if let Some(want) = &e.backoff {
        assert_eq!(&run.sorted(q.backoff_pods()), want, "{at}: backoffQ");
    }
    if let Some(want) = &e.unschedulable {
        assert_eq!(
            &run.sorted(q.unschedulable_pods()),
            want,
            "{at}: unschedulable pool"
        );
    }
    if let Some(want) = &e.in_flight {
        assert_eq!(&run.sorted(q.in_flight_pods()), want, "{at}: in flight");
    }
    if let Some(want) = &e.in_flight_log {
        let got: Vec<String> = q
            .in_flight_log()
            .into_iter()
            .map(|l| match l {
                Ok(id) => run.names[&id].clone(),
                Err(ev) => format!("{:?}/{}", ev.resource, ev.action.0),
            })
            .collect();
        let want: Vec<String> = want
            .iter()
            .map(|w| match ClusterEvent::parse(w) {
                Some(ev) => format!("{:?}/{}", ev.resource, ev.action.0),
                None => w.clone(),
            })
            .collect();
        assert_eq!(got, want, "{at}: in-flight events");
    }
    if let Some(want) = e.counts {
        assert_eq!(
            q.pending_counts(),
            want,
            "{at}: active, backoff, unschedulable, gated"
        );
    }
    if let Some((pod, want)) = &e.backoff_of {
        let id = run.id(pod);
        let expiry = q.backoff_expiry(id).expect("pod backs off").0;
        let since = expiry - run.failed_at[&id].0;
        assert_eq!(since - since % 1000 + 1000, *want, "{at}: backoff of {pod}");
    }
    if let Some(want) = &e.nominated {
        for (node, pods) in want {
            let got: Vec<String> = q
                .nominated_pods_for_node(node)
                .iter()
                .map(|p| {
                    let (_, name) = p.namespaced_name.split_once('/').unwrap();
                    name.to_string()
                })
                .collect();
            assert_eq!(&got, pods, "{at}: nominated to {node}");
        }
    }
}

fn run_file(file: &str) -> usize {
    let path = format!("{}/tests/data/queue/{file}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap();
    let cases: Vec<Case> = serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    for case in &cases {
        let mut run = build(case);
        for (i, s) in case.steps.iter().enumerate() {
            step(
                &mut run,
                s,
                &format!("{file}: {}: step {}", case.name, i + 1),
            );
        }
    }
    cases.len()
}

#[test]
fn upstream_scheduling_queue_tables() {
    assert!(run_file("scheduling_queue.yaml") > 0);
}

#[test]
fn upstream_hint_and_metric_tables() {
    assert!(run_file("hints.yaml") > 0);
}

#[test]
fn upstream_coscheduling_queue_sort_tables() {
    assert!(run_file("coscheduling_less.yaml") > 0);
}

#[derive(Debug, Clone)]
enum Op {
    Add(u8, i8),
    Pop,
    Fail(u8, bool),
    Done(u8),
    Event(bool),
    Tick(u16),
    Flush,
    Delete(u8),
    Activate(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0u8..12, -2i8..3).prop_map(|(p, pr)| Op::Add(p, pr)),
        Just(Op::Pop),
        (0u8..12, any::<bool>()).prop_map(|(p, e)| Op::Fail(p, e)),
        (0u8..12).prop_map(Op::Done),
        any::<bool>().prop_map(Op::Event),
        (0u16..20_000).prop_map(Op::Tick),
        Just(Op::Flush),
        (0u8..12).prop_map(Op::Delete),
        (0u8..12).prop_map(Op::Activate),
    ]
}

proptest! {
    /// Every known pod is in exactly one of activeQ, backoffQ, the pool or in flight, and a
    /// pop never returns a pod that sorts after another pod in activeQ.
    #[test]
    fn each_pod_in_one_place_and_pops_follow_less(ops in proptest::collection::vec(op(), 1..120)) {
        let registry = HintRegistry::new(vec![(ClusterEvent::parse("Node/Add").unwrap(), vec!["fit".into()])]);
        let hooks = schedsim::sched::queue::NoHooks;
        let mut q: PriorityQueue<()> = PriorityQueue::new(QueueConfig::default(), registry);
        let mut now = Time(0);
        let mut known = BTreeSet::new();
        for op in ops {
            match op {
                Op::Add(p, pr) => {
                    let pod = QueuePod { id: PodId(p.into()), priority: pr.into(), namespaced_name: format!("ns/p{p}").into(), nominated_node: None, pod_group: None };
                    if q.add(now, pod, &hooks).is_ok() { known.insert(PodId(p.into())); }
                }
                Op::Pop => {
                    let head: Vec<QueuedPod> = q.active_pods().iter().map(|id| q.get(*id).unwrap().clone()).collect();
                    if let Some(p) = q.pop(now) {
                        for other in &head {
                            prop_assert!(!schedsim::sched::queue::active::less(other, &head[0]) || other.pod.id == p.pod.id);
                        }
                        if let Some(first) = head.first() { prop_assert_eq!(first.pod.id, p.pod.id); }
                    }
                }
                Op::Fail(p, error) => {
                    let plugins = if error { BTreeSet::new() } else { BTreeSet::from(["fit".to_string()]) };
                    let _ = q.add_unschedulable_if_not_present(now, PodId(p.into()), Failure { unschedulable_plugins: plugins, pending_plugins: BTreeSet::new() }, &hooks);
                }
                Op::Done(p) => { q.done(PodId(p.into())); if q.location(PodId(p.into())).is_none() { known.remove(&PodId(p.into())); } }
                Op::Event(wild) => {
                    let e = if wild { ClusterEvent::UNSCHEDULABLE_TIMEOUT } else { ClusterEvent::parse("Node/Add").unwrap() };
                    q.move_all_to_active_or_backoff(now, e, &(), None, &hooks);
                }
                Op::Tick(ms) => now = now.plus(ms.into()),
                Op::Flush => {
                    if let Some(t) = q.next_timer(now) { prop_assert!(t > now); now = t; q.flush(now, &hooks, &()); }
                }
                Op::Delete(p) => { q.delete(PodId(p.into())); if q.location(PodId(p.into())).is_none() { known.remove(&PodId(p.into())); } }
                Op::Activate(p) => q.activate(now, &[PodId(p.into())], &(), &hooks),
            }
            let mut seen = BTreeMap::new();
            for (name, ids) in [("active", q.active_pods()), ("backoff", q.backoff_pods()), ("unschedulable", q.unschedulable_pods()), ("inFlight", q.in_flight_pods())] {
                for id in ids { prop_assert!(seen.insert(id, name).is_none(), "{:?} twice", id); }
            }
            let seen: BTreeSet<PodId> = seen.into_keys().collect();
            prop_assert_eq!(&seen, &known);
        }
    }
}
