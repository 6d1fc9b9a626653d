//! kube-scheduler's QueueingHints and `EventsToRegister` (`sched::hints`): upstream's hint
//! test tables as data (`tests/data/hints/*.yaml`, each case naming its upstream test), the
//! update events of `events.go`, the registrations, and the queue driven by the hints.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::{
    NodeAffinity, PodResourceClaimStatus, Taint, Toleration, TopologySpreadConstraint,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use proptest::prelude::*;
use schedsim::features::FeatureGates;
use schedsim::model::objects::{node_from_k8s, pod_from_k8s};
use schedsim::model::{Node, Pod};
use schedsim::sched::SchedulerConfig;
use schedsim::sched::hints::{
    Payload, PluginHints, events_to_register, node_update_events, pod_update_events, registry,
};
use schedsim::sched::plugins::registry::known_plugin;
use schedsim::sched::profile::Profile;
use schedsim::sched::queue::{
    ClusterEvent, Failure, PodId, PriorityQueue, QueueConfig, QueueHooks, QueueName, QueuePod,
    QueueingHint, Time, namespaced_name,
};
use serde::Deserialize;
use serde_json::{Value, json};

// ---- object shorthands (after `st.MakePod()` / `st.MakeNode()` of pkg/scheduler/testing) ----

/// A pod as upstream's test wrappers build it.
#[derive(Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PodSpec {
    #[serde(default)]
    name: String,
    #[serde(default)]
    namespace: String,
    #[serde(default)]
    uid: Option<String>,
    /// `.Node(name)`: `spec.nodeName`.
    #[serde(default)]
    node: Option<String>,
    /// `status.nominatedNodeName`.
    #[serde(default)]
    nominated: Option<String>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    /// `.Req(...)`: one container's requests.
    #[serde(default)]
    req: BTreeMap<String, String>,
    /// `.PodLevelResourceRequests(...)`: `spec.resources.requests`.
    #[serde(default)]
    pod_req: BTreeMap<String, String>,
    #[serde(default)]
    tolerations: Vec<Toleration>,
    #[serde(default)]
    gates: Vec<String>,
    /// `.NodeAffinityIn(key, values)` with match expressions.
    #[serde(default)]
    node_affinity_in: Option<(String, Vec<String>)>,
    /// A whole `spec.affinity.nodeAffinity`.
    #[serde(default)]
    node_affinity: Option<NodeAffinity>,
    /// `.PodAffinity…(…, PodAffinityWithRequiredReq)`.
    #[serde(default)]
    pod_affinity: Vec<AffinityTerm>,
    /// `.PodAntiAffinity…(…, PodAntiAffinityWithRequiredReq)`.
    #[serde(default)]
    pod_anti_affinity: Vec<AffinityTerm>,
    /// `.SpreadConstraint(...)`.
    #[serde(default)]
    spread: Vec<TopologySpreadConstraint>,
    #[serde(default)]
    claim_statuses: Vec<PodResourceClaimStatus>,
}

/// A required pod (anti-)affinity term.
#[derive(Deserialize, Clone)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct AffinityTerm {
    topology_key: String,
    selector: LabelSelector,
}

impl PodSpec {
    fn build(&self) -> Pod {
        let terms = |ts: &[AffinityTerm]| -> Value {
            ts.iter()
                .map(|t| json!({"topologyKey": t.topology_key, "labelSelector": t.selector}))
                .collect()
        };
        let mut affinity = json!({});
        if let Some((key, values)) = &self.node_affinity_in {
            affinity["nodeAffinity"] = json!({"requiredDuringSchedulingIgnoredDuringExecution":
                {"nodeSelectorTerms": [{"matchExpressions": [{"key": key, "operator": "In", "values": values}]}]}});
        }
        if let Some(node_affinity) = &self.node_affinity {
            affinity["nodeAffinity"] = json!(node_affinity);
        }
        if !self.pod_affinity.is_empty() {
            affinity["podAffinity"] = json!({"requiredDuringSchedulingIgnoredDuringExecution": terms(&self.pod_affinity)});
        }
        if !self.pod_anti_affinity.is_empty() {
            affinity["podAntiAffinity"] = json!({"requiredDuringSchedulingIgnoredDuringExecution": terms(&self.pod_anti_affinity)});
        }
        let mut spec = json!({
            "containers": [{"name": "c", "image": "i", "resources": {"requests": self.req}}],
            "tolerations": self.tolerations,
            "schedulingGates": self.gates.iter().map(|g| json!({"name": g})).collect::<Vec<_>>(),
            "topologySpreadConstraints": self.spread,
            "affinity": affinity,
        });
        if let Some(node) = &self.node {
            spec["nodeName"] = json!(node);
        }
        if !self.pod_req.is_empty() {
            spec["resources"] = json!({"requests": self.pod_req});
        }
        let mut metadata =
            json!({"name": self.name, "namespace": self.namespace, "labels": self.labels});
        if let Some(uid) = &self.uid {
            metadata["uid"] = json!(uid);
        }
        let status = json!({
            "nominatedNodeName": self.nominated,
            "resourceClaimStatuses": self.claim_statuses,
        });
        let k: k8s_openapi::api::core::v1::Pod =
            serde_json::from_value(json!({"metadata": metadata, "spec": spec, "status": status}))
                .expect("pod shorthand");
        // API-server validation is not part of these unit tables.
        pod_from_k8s(&k, "", &FeatureGates::default(), &mut Vec::new())
    }
}

/// A node as upstream's test wrappers build it.
#[derive(Deserialize, Default, Clone)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct NodeSpec {
    #[serde(default)]
    name: String,
    #[serde(default)]
    labels: BTreeMap<String, String>,
    /// `.Capacity(...)`: capacity and allocatable, with `pods: 32000` added as the wrapper does.
    #[serde(default)]
    capacity: Option<BTreeMap<String, String>>,
    #[serde(default)]
    taints: Vec<Taint>,
    #[serde(default)]
    unschedulable: bool,
}

impl NodeSpec {
    fn build(&self) -> Node {
        let mut allocatable = BTreeMap::new();
        if let Some(capacity) = &self.capacity {
            allocatable.insert("pods".to_string(), "32000".to_string());
            allocatable.extend(capacity.clone());
        }
        let k: k8s_openapi::api::core::v1::Node = serde_json::from_value(json!({
            "metadata": {"name": self.name, "labels": self.labels},
            "spec": {"taints": self.taints, "unschedulable": self.unschedulable},
            "status": {"allocatable": allocatable},
        }))
        .expect("node shorthand");
        node_from_k8s(&k, "", &mut Vec::new())
    }
}

// ---- hint tables ----------------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct HintCase {
    name: String,
    upstream: String,
    plugin: String,
    /// The upstream hint function's name.
    hint: String,
    pod: PodSpec,
    #[serde(default)]
    old_pod: Option<PodSpec>,
    #[serde(default)]
    new_pod: Option<PodSpec>,
    #[serde(default)]
    old_node: Option<NodeSpec>,
    #[serde(default)]
    new_node: Option<NodeSpec>,
    /// `NodeAffinityArgs.addedAffinity`.
    #[serde(default)]
    added_affinity: Option<NodeAffinity>,
    #[serde(default)]
    gates: Option<FeatureGates>,
    /// queue, skip or error (an error counts as Queue).
    expect: String,
}

const HINT_FILES: &[(&str, &str)] = &[
    ("fit.yaml", include_str!("data/hints/fit.yaml")),
    (
        "node_affinity.yaml",
        include_str!("data/hints/node_affinity.yaml"),
    ),
    (
        "node_unschedulable.yaml",
        include_str!("data/hints/node_unschedulable.yaml"),
    ),
    (
        "taint_toleration.yaml",
        include_str!("data/hints/taint_toleration.yaml"),
    ),
    (
        "inter_pod_affinity.yaml",
        include_str!("data/hints/inter_pod_affinity.yaml"),
    ),
    (
        "pod_topology_spread.yaml",
        include_str!("data/hints/pod_topology_spread.yaml"),
    ),
    ("targets.yaml", include_str!("data/hints/targets.yaml")),
];

/// Cases per file: a file that lost cases fails here, not silently.
const EXPECTED_CASES: &[(&str, usize)] = &[
    ("fit.yaml", 16),
    ("node_affinity.yaml", 8),
    ("node_unschedulable.yaml", 8),
    ("taint_toleration.yaml", 6),
    ("inter_pod_affinity.yaml", 29),
    ("pod_topology_spread.yaml", 26),
    ("targets.yaml", 7),
];

/// A default profile with the plugin args of upstream's tests: PodTopologySpread with
/// `defaultingType: List` and no constraints.
fn test_config(added_affinity: Option<NodeAffinity>, gates: FeatureGates) -> SchedulerConfig {
    let profile = Profile {
        added_affinity,
        spread_default_constraints: Some(Vec::new()),
        ..Profile::default()
    };
    SchedulerConfig {
        profiles: vec![profile],
        feature_gates: gates,
        ..SchedulerConfig::default()
    }
}

fn queued(pod: &Pod, id: PodId) -> schedsim::sched::queue::QueuedPod {
    PriorityQueue::<Payload>::queued(
        Time(0),
        QueuePod {
            id,
            priority: pod.priority,
            namespaced_name: namespaced_name(&pod.namespace, &pod.name),
            nominated_node: pod.nominated_node_name.clone(),
            pod_group: None,
        },
    )
}

fn run_hint_case(c: &HintCase) -> Result<(), String> {
    let gates = c.gates.unwrap_or_default();
    let plugin = (known_plugin(&c.plugin).and_then(|k| k.support.plugin()))
        .ok_or(format!("unknown plugin {}", c.plugin))?;
    let registration = (events_to_register(plugin, &gates).into_iter())
        .find(|r| r.hint.is_some_and(|h| h.upstream_name() == c.hint))
        .ok_or(format!("{} registers no hint {}", c.plugin, c.hint))?;
    let payload = match (&c.old_node, &c.new_node) {
        (None, None) => Payload::Pod {
            old: c.old_pod.as_ref().map(|p| Arc::new(p.build())),
            new: c.new_pod.as_ref().map(|p| Arc::new(p.build())),
        },
        (old, new) => Payload::Node {
            old: old.as_ref().map(|n| Arc::new(n.build())),
            new: new.as_ref().map(|n| Arc::new(n.build())),
        },
    };
    let target = Arc::new(c.pod.build());
    let lookup = {
        let target = Arc::clone(&target);
        move |_| Some(Arc::clone(&target))
    };
    let hooks = PluginHints::new(lookup, &test_config(c.added_affinity.clone(), gates));
    let got = hooks.hint(
        plugin.name(),
        &registration.event,
        &queued(&target, PodId(0)),
        &registration.event,
        &payload,
    );
    let got = match got {
        Ok(QueueingHint::Queue) => "queue",
        Ok(QueueingHint::QueueSkip) => "skip",
        Err(_) => "error",
    };
    match got == c.expect {
        true => Ok(()),
        false => Err(format!("expected {}, got {got}", c.expect)),
    }
}

#[test]
fn upstream_hint_tables() {
    let mut failures = Vec::new();
    for (file, text) in HINT_FILES {
        let cases: Vec<HintCase> =
            serde_saphyr::from_str(text).unwrap_or_else(|e| panic!("tests/data/hints/{file}: {e}"));
        let expected = EXPECTED_CASES
            .iter()
            .find(|(f, _)| f == file)
            .map(|(_, n)| *n);
        assert_eq!(Some(cases.len()), expected, "{file}: case count");
        for c in &cases {
            assert!(
                !c.upstream.is_empty(),
                "{file}: {}: no upstream source",
                c.name
            );
            if let Err(e) = run_hint_case(c) {
                failures.push(format!("{file}: {}: {e}", c.name));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---- events.go: NodeSchedulingPropertiesChange, PodSchedulingPropertiesChange -----------------

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ChangeCase {
    name: String,
    upstream: String,
    #[serde(default)]
    old_node: Option<NodeSpec>,
    #[serde(default)]
    new_node: Option<NodeSpec>,
    #[serde(default)]
    old_pod: Option<PodSpec>,
    #[serde(default)]
    new_pod: Option<PodSpec>,
    /// `Resource/Action` per expected event, in order.
    expect: Vec<String>,
}

#[test]
fn upstream_scheduling_properties_change() {
    let cases: Vec<ChangeCase> =
        serde_saphyr::from_str(include_str!("data/hints/events.yaml")).expect("events.yaml");
    assert_eq!(cases.len(), 22, "events.yaml: case count");
    let mut failures = Vec::new();
    for c in &cases {
        assert!(!c.upstream.is_empty());
        let got = match (&c.old_node, &c.new_node, &c.old_pod, &c.new_pod) {
            (Some(old), Some(new), None, None) => node_update_events(&old.build(), &new.build()),
            (None, None, Some(old), Some(new)) => pod_update_events(&old.build(), &new.build()),
            _ => panic!("{}: give old and new nodes or old and new pods", c.name),
        };
        let want: Vec<ClusterEvent> = (c.expect.iter())
            .map(|e| ClusterEvent::parse(e).unwrap_or_else(|| panic!("{}: event {e}", c.name)))
            .collect();
        if got != want {
            failures.push(format!("{}: expected {:?}, got {got:?}", c.name, c.expect));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

// ---- EventsToRegister ---------------------------------------------------------------------------

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RegisterCase {
    plugin: String,
    upstream: String,
    #[serde(default)]
    gates: Option<FeatureGates>,
    /// `Resource/Action` and the hint function's name (`~`: none, Queue).
    expect: Vec<(String, Option<String>)>,
}

#[test]
fn upstream_events_to_register() {
    let cases: Vec<RegisterCase> =
        serde_saphyr::from_str(include_str!("data/hints/events_to_register.yaml"))
            .expect("events_to_register.yaml");
    assert_eq!(cases.len(), 14, "events_to_register.yaml: case count");
    for c in &cases {
        assert!(!c.upstream.is_empty());
        let plugin = known_plugin(&c.plugin)
            .and_then(|k| k.support.plugin())
            .unwrap();
        let got: Vec<(ClusterEvent, Option<&str>)> =
            (events_to_register(plugin, &c.gates.unwrap_or_default()).into_iter())
                .map(|r| (r.event, r.hint.map(|h| h.upstream_name())))
                .collect();
        let want: Vec<(ClusterEvent, Option<&str>)> = (c.expect.iter())
            .map(|(e, h)| (ClusterEvent::parse(e).unwrap(), h.as_deref()))
            .collect();
        assert_eq!(got, want, "{}", c.plugin);
    }
}

/// The default profile's hint map: every plugin with events, grouped by event; the
/// Coscheduling profile adds Pod/Add and the PodGroup events.
#[test]
fn default_profile_registry() {
    let gates = FeatureGates::default();
    let entries = |profile: &Profile| -> Vec<(ClusterEvent, Vec<String>)> {
        registry(profile, &gates).entries().to_vec()
    };
    let default = entries(&Profile::default());
    let plugins_of = |entries: &[(ClusterEvent, Vec<String>)], e: &str| {
        let e = ClusterEvent::parse(e).unwrap();
        (entries.iter().find(|(x, _)| *x == e))
            .map(|(_, p)| p.clone())
            .unwrap_or_default()
    };
    assert_eq!(
        plugins_of(&default, "Pod/Delete"),
        vec!["DefaultPreemption"],
        "Pod/Delete alone is DefaultPreemption's; Fit registers Delete|UpdatePodScaleDown"
    );
    assert_eq!(
        plugins_of(&default, "Node/Add|UpdateNodeTaint"),
        vec!["NodeUnschedulable", "TaintToleration"]
    );
    let registered: std::collections::BTreeSet<&str> = (default.iter())
        .flat_map(|(_, p)| p.iter().map(String::as_str))
        .collect();
    assert_eq!(
        registered.into_iter().collect::<Vec<_>>(),
        vec![
            "DefaultPreemption",
            "DynamicResources",
            "InterPodAffinity",
            "NodeAffinity",
            "NodeName",
            "NodeResourcesFit",
            "NodeUnschedulable",
            "PodTopologySpread",
            "SchedulingGates",
            "TaintToleration",
        ]
    );
    assert!(plugins_of(&default, "PodGroup/Add|Update").is_empty());
    let cosched = entries(&Profile::default_with_coscheduling());
    assert_eq!(
        plugins_of(&cosched, "PodGroup/Add|Update"),
        vec!["Coscheduling"]
    );
    assert_eq!(plugins_of(&cosched, "Pod/Add"), vec!["Coscheduling"]);
    // Every registration belongs to an enabled plugin: a profile without Fit has none of its.
    let mut no_fit = Profile::default();
    for point in schedsim::sched::plugins::registry::ExtensionPoint::ALL {
        no_fit.framework.disable(
            point,
            schedsim::sched::plugins::registry::Plugin::NodeResourcesFit,
        );
    }
    assert!((entries(&no_fit).iter()).all(|(_, p)| !p.iter().any(|p| p == "NodeResourcesFit")));
}

// ---- the queue with these hooks ---------------------------------------------------------------

/// The hooks' lookup for a queue holding one pod, `PodId(0)`.
fn lookup_of(pod: &Pod) -> impl Fn(PodId) -> Option<Arc<Pod>> + use<> {
    let pod = Arc::new(pod.clone());
    move |id: PodId| (id == PodId(0)).then(|| Arc::clone(&pod))
}

fn queue_pod(id: u32, pod: &Pod) -> QueuePod {
    QueuePod {
        id: PodId(id),
        priority: pod.priority,
        namespaced_name: namespaced_name(&pod.namespace, &pod.name),
        nominated_node: None,
        pod_group: None,
    }
}

fn fit_rejected() -> Failure {
    Failure {
        unschedulable_plugins: ["NodeResourcesFit".to_string()].into(),
        ..Failure::default()
    }
}

/// A pod NodeResourcesFit rejected waits in the unschedulable pool through a node-label
/// update, and goes to backoffQ when an assigned pod is deleted while it backs off, to activeQ
/// when it is deleted after the backoff.
#[test]
fn fit_rejected_pod_moves_on_assigned_pod_delete_not_on_node_label() {
    let cpu = |c: &str| BTreeMap::from([("cpu".to_string(), c.to_string())]);
    let pending = PodSpec {
        name: "pending".into(),
        namespace: "ns".into(),
        req: cpu("2"),
        ..Default::default()
    }
    .build();
    let running = PodSpec {
        name: "running".into(),
        namespace: "ns".into(),
        node: Some("n1".into()),
        req: cpu("4"),
        ..Default::default()
    }
    .build();
    let node = NodeSpec {
        name: "n1".into(),
        capacity: Some(cpu("4")),
        ..Default::default()
    }
    .build();
    let config = SchedulerConfig::default();
    let hooks = PluginHints::new(lookup_of(&pending), &config);
    let profile = &config.profiles()[0];
    for (delete_at, expect) in [(500, QueueName::Backoff), (5_000, QueueName::Active)] {
        let mut q: PriorityQueue<Payload> = PriorityQueue::new(
            QueueConfig::default(),
            registry(profile, &config.feature_gates),
        );
        q.add(Time(0), queue_pod(0, &pending), &hooks).unwrap();
        q.pop(Time(0)).unwrap();
        let at = q.add_unschedulable_if_not_present(Time(0), PodId(0), fit_rejected(), &hooks);
        assert_eq!(at, Ok(QueueName::Unschedulable));

        let mut labelled = node.clone();
        labelled.labels.insert("zone".into(), "a".into());
        let payload = Payload::Node {
            old: Some(Arc::new(node.clone())),
            new: Some(Arc::new(labelled.clone())),
        };
        for event in node_update_events(&node, &labelled) {
            q.move_all_to_active_or_backoff(Time(100), event, &payload, None, &hooks);
        }
        assert_eq!(
            q.location(PodId(0)),
            Some(QueueName::Unschedulable),
            "node label update"
        );

        let payload = Payload::Pod {
            old: Some(Arc::new(running.clone())),
            new: None,
        };
        let delete = ClusterEvent::parse("AssignedPod/Delete").unwrap();
        q.move_all_to_active_or_backoff(Time(delete_at), delete, &payload, None, &hooks);
        assert_eq!(
            q.location(PodId(0)),
            Some(expect),
            "assigned pod deleted at {delete_at} ms"
        );
    }
}

/// A node added that the pod does not fit leaves it waiting; one it fits moves it.
#[test]
fn fit_rejected_pod_moves_only_for_a_node_it_fits() {
    let cpu = |c: &str| BTreeMap::from([("cpu".to_string(), c.to_string())]);
    let pending = PodSpec {
        name: "p".into(),
        req: cpu("8"),
        ..Default::default()
    }
    .build();
    let config = SchedulerConfig::default();
    let hooks = PluginHints::new(lookup_of(&pending), &config);
    let mut q: PriorityQueue<Payload> = PriorityQueue::new(
        QueueConfig::default(),
        registry(&config.profiles()[0], &config.feature_gates),
    );
    q.add(Time(0), queue_pod(0, &pending), &hooks).unwrap();
    q.pop(Time(0)).unwrap();
    q.add_unschedulable_if_not_present(Time(0), PodId(0), fit_rejected(), &hooks)
        .unwrap();
    let add = ClusterEvent::parse("Node/Add").unwrap();
    for (c, expect) in [("4", QueueName::Unschedulable), ("16", QueueName::Active)] {
        let node = NodeSpec {
            name: format!("n{c}"),
            capacity: Some(cpu(c)),
            ..Default::default()
        }
        .build();
        let payload = Payload::Node {
            old: None,
            new: Some(Arc::new(node)),
        };
        q.move_all_to_active_or_backoff(Time(20_000), add, &payload, None, &hooks);
        assert_eq!(
            q.location(PodId(0)),
            Some(expect),
            "node with {c} CPUs added"
        );
    }
}

/// SchedulingGates gates a pod at PreEnqueue; removing its last gate (its own update) moves it
/// to activeQ, removing one of two does not.
#[test]
fn scheduling_gates_gate_and_release() {
    let gated = |gates: &[&str]| {
        PodSpec {
            name: "g".into(),
            gates: gates.iter().map(|g| g.to_string()).collect(),
            ..Default::default()
        }
        .build()
    };
    let config = SchedulerConfig::default();
    let registry = registry(&config.profiles()[0], &config.feature_gates);
    let mut q: PriorityQueue<Payload> = PriorityQueue::new(QueueConfig::default(), registry);
    let two = gated(&["a", "b"]);
    q.add(
        Time(0),
        queue_pod(0, &two),
        &PluginHints::new(lookup_of(&two), &config),
    )
    .unwrap();
    assert_eq!(q.location(PodId(0)), Some(QueueName::Unschedulable));
    assert_eq!(
        q.get(PodId(0)).unwrap().gating_plugin.as_deref(),
        Some("SchedulingGates")
    );
    let mut step = |old: &Pod, new: &Pod| {
        let hooks = PluginHints::new(lookup_of(new), &config);
        let payload = Payload::Pod {
            old: Some(Arc::new(old.clone())),
            new: Some(Arc::new(new.clone())),
        };
        q.update(
            Time(10),
            queue_pod(0, new),
            &pod_update_events(old, new),
            &payload,
            &hooks,
        );
        q.location(PodId(0))
    };
    let one = gated(&["a"]);
    assert_eq!(step(&two, &one), Some(QueueName::Unschedulable));
    assert_eq!(step(&one, &gated(&[])), Some(QueueName::Active));
}

/// DefaultPreemption gates a pod while its preemption runs.
#[test]
fn default_preemption_gates_while_preempting() {
    let pod = PodSpec {
        name: "p".into(),
        ..Default::default()
    }
    .build();
    let config = SchedulerConfig::default();
    let mut hooks = PluginHints::new(lookup_of(&pod), &config);
    let q = queued(&pod, PodId(0));
    assert_eq!(hooks.pre_enqueue(&q), None);
    hooks.set_preempting(PodId(0), true);
    assert_eq!(hooks.pre_enqueue(&q).as_deref(), Some("DefaultPreemption"));
    hooks.set_preempting(PodId(0), false);
    assert_eq!(hooks.pre_enqueue(&q), None);
}

// ---- properties -------------------------------------------------------------------------------

proptest! {
    /// An unchanged node gives no event; an unchanged pod only the general Update.
    #[test]
    fn no_change_no_specific_event(
        labels in proptest::collection::btree_map("[a-c]", "[x-z]", 0..3),
        cpu in 0u32..8,
        bound in any::<bool>(),
    ) {
        let node = NodeSpec { labels: labels.clone(), capacity: Some(BTreeMap::from([("cpu".into(), cpu.to_string())])), ..Default::default() }.build();
        prop_assert!(node_update_events(&node, &node).is_empty());
        let pod = PodSpec { labels, node: bound.then(|| "n".to_string()), ..Default::default() }.build();
        let events = pod_update_events(&pod, &pod);
        let resource = if bound { "AssignedPod" } else { "UnscheduledPod" };
        prop_assert_eq!(events, vec![ClusterEvent::parse(&format!("{resource}/Update")).unwrap()]);
    }

    /// NodeResourcesFit's node-add hint: a node at least as large in every resource as one the
    /// pod fits also gets Queue.
    #[test]
    fn fit_node_hint_is_monotone(req in 1u32..8, alloc in 1u32..8, extra in 0u32..8) {
        let cpu = |c: u32| Some(BTreeMap::from([("cpu".to_string(), c.to_string())]));
        let pod = PodSpec { name: "p".into(), req: cpu(req).unwrap(), ..Default::default() }.build();
        let config = SchedulerConfig::default();
        let hooks = PluginHints::new(lookup_of(&pod), &config);
        let add = ClusterEvent::parse("Node/Add|UpdateNodeAllocatable").unwrap();
        let hint = |c: u32| {
            let node = NodeSpec { capacity: cpu(c), ..Default::default() }.build();
            let payload = Payload::Node { old: None, new: Some(Arc::new(node)) };
            hooks.hint("NodeResourcesFit", &add, &queued(&pod, PodId(0)), &add, &payload).unwrap()
        };
        if hint(alloc) == QueueingHint::Queue {
            prop_assert_eq!(hint(alloc + extra), QueueingHint::Queue);
        }
        prop_assert_eq!(hint(alloc) == QueueingHint::Queue, alloc >= req);
    }
}
