//! PodTopologySpread, case by case: the shapes of upstream's
//! `podtopologyspread/filtering_test.go` `TestSingleConstraint` (four nodes in two zones,
//! pods labelled `foo`), with expectations worked out by hand from `filtering.go`, plus the
//! policies (`nodeAffinityPolicy`, `nodeTaintsPolicy`), `minDomains`, `matchLabelKeys`, the
//! message, and Score's preference for the emptier domain.

use schedsim::features::FeatureGates;
use schedsim::model::objects::{node_from_k8s, pod_from_k8s};
use schedsim::model::{Node, Pod};
use schedsim::sched::{PodPhase, SchedulerConfig, feasible_nodes, schedule};
use serde_json::{Value, json};

/// node-a, node-b in zone1; node-x, node-y in zone2. `no_zone` drops node-b's zone label;
/// `taint_b` taints node-b NoSchedule.
fn nodes(no_zone: bool, taint_b: bool) -> Vec<Node> {
    ["node-a", "node-b", "node-x", "node-y"]
        .iter()
        .map(|name| {
            let zone = if name < &"node-c" { "zone1" } else { "zone2" };
            let mut labels = json!({"kubernetes.io/hostname": name, "zone": zone});
            if no_zone && *name == "node-b" {
                labels = json!({"kubernetes.io/hostname": name, "zon": zone});
            }
            let mut v = json!({
                "metadata": {"name": name, "labels": labels},
                "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}
            });
            if taint_b && *name == "node-b" {
                v["spec"] = json!({"taints": [{"key": "k", "value": "v", "effect": "NoSchedule"}]});
            }
            let k: k8s_openapi::api::core::v1::Node = serde_json::from_value(v).unwrap();
            node_from_k8s(&k, "", &mut Vec::new())
        })
        .collect()
}

fn pod(v: Value) -> Pod {
    let k: k8s_openapi::api::core::v1::Pod = serde_json::from_value(v).expect("pod fragment");
    pod_from_k8s(&k, "", &FeatureGates::default(), &mut Vec::new())
}

/// A running pod labelled `foo` on `node`, in namespace `ns`.
fn existing(name: &str, node: &str, ns: &str) -> Pod {
    pod(json!({
        "metadata": {"name": name, "namespace": ns, "labels": {"foo": ""}},
        "spec": {"nodeName": node, "containers": [{"name": "c", "image": "i"}]}
    }))
}

/// The incoming pod: `labels`, one constraint on `zone` (maxSkew 1, selector `foo` Exists),
/// merged with `extra` constraint fields, and `spec` fields.
fn incoming(labels: Value, extra: Value, spec: Value) -> Pod {
    let mut constraint = json!({
        "maxSkew": 1,
        "topologyKey": "zone",
        "whenUnsatisfiable": "DoNotSchedule",
        "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}
    });
    for (k, v) in extra.as_object().unwrap() {
        constraint[k] = v.clone();
    }
    let mut s = json!({
        "containers": [{"name": "c", "image": "i"}],
        "topologySpreadConstraints": [constraint]
    });
    for (k, v) in spec.as_object().unwrap() {
        s[k] = v.clone();
    }
    pod(json!({"metadata": {"name": "p", "namespace": "default", "labels": labels}, "spec": s}))
}

fn foo() -> Value {
    json!({"foo": ""})
}

fn feasible(nodes: Vec<Node>, existing: &[Pod], pod: &Pod) -> Vec<String> {
    feasible_nodes(nodes, existing, pod, &SchedulerConfig::default())
}

fn on(pods: &[(&str, &str)]) -> Vec<Pod> {
    pods.iter()
        .map(|(name, node)| existing(name, node, "default"))
        .collect()
}

#[test]
fn no_existing_pods_all_nodes_fit() {
    let p = incoming(foo(), json!({}), json!({}));
    assert_eq!(
        feasible(nodes(false, false), &[], &p),
        ["node-a", "node-b", "node-x", "node-y"]
    );
}

#[test]
fn pods_spread_3_3_all_nodes_fit() {
    let e = on(&[
        ("a1", "node-a"),
        ("b1", "node-b"),
        ("b2", "node-b"),
        ("x1", "node-x"),
        ("x2", "node-x"),
        ("y1", "node-y"),
    ]);
    let p = incoming(foo(), json!({}), json!({}));
    assert_eq!(feasible(nodes(false, false), &e, &p).len(), 4);
}

#[test]
fn node_without_the_key_is_unresolvable_and_not_counted() {
    // zone1 counts node-a only (1), zone2 has 3: skew on zone2 is 3 + 1 - 1 = 3.
    let e = on(&[
        ("a1", "node-a"),
        ("b1", "node-b"),
        ("x1", "node-x"),
        ("y1", "node-y"),
        ("y2", "node-y"),
    ]);
    let p = incoming(foo(), json!({}), json!({}));
    assert_eq!(feasible(nodes(true, false), &e, &p), ["node-a"]);
}

#[test]
fn pods_of_other_namespaces_do_not_count() {
    let mut e = on(&[("x1", "node-x"), ("x2", "node-x")]);
    e.extend((0..3).map(|i| existing(&format!("o{i}"), "node-a", "other")));
    let p = incoming(foo(), json!({}), json!({}));
    assert_eq!(feasible(nodes(false, false), &e, &p), ["node-a", "node-b"]);
}

#[test]
fn a_pod_that_does_not_match_itself_adds_no_skew() {
    let e = on(&[("x1", "node-x")]);
    let p = incoming(json!({}), json!({}), json!({}));
    assert_eq!(feasible(nodes(false, false), &e, &p).len(), 4);
}

#[test]
fn fewer_domains_than_min_domains_make_the_minimum_zero() {
    let e = on(&[("a1", "node-a"), ("x1", "node-x")]);
    let p = incoming(foo(), json!({}), json!({}));
    assert_eq!(feasible(nodes(false, false), &e, &p).len(), 4);
    let p = incoming(foo(), json!({"minDomains": 3}), json!({}));
    assert!(feasible(nodes(false, false), &e, &p).is_empty());
    let out = schedule(nodes(false, false), &e, &[p], &SchedulerConfig::default());
    assert_eq!(out.pods[0].phase, PodPhase::Unschedulable);
    assert!(
        out.pods[0].message.starts_with(
            "0/4 nodes are available: 4 node(s) didn't match pod topology spread constraints. "
        ),
        "{}",
        out.pods[0].message
    );
}

#[test]
fn missing_label_message_is_upstreams() {
    let e = on(&[("x1", "node-x"), ("x2", "node-x"), ("y1", "node-y")]);
    let p = incoming(foo(), json!({}), json!({"nodeSelector": {"zon": "zone1"}}));
    let out = schedule(nodes(true, false), &e, &[p], &SchedulerConfig::default());
    assert_eq!(
        out.pods[0].message,
        "0/4 nodes are available: 1 node(s) didn't match pod topology spread constraints (missing required label), 3 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
    );
}

#[test]
fn node_affinity_policy_decides_whether_excluded_nodes_count() {
    let e = on(&[("b1", "node-b"), ("b2", "node-b")]);
    let not_b = json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "NotIn", "values": ["node-b"]}
        ]}]
    }}}});
    // Honor (default): node-b is not counted, zone1 has 0 matching pods.
    let p = incoming(foo(), json!({}), not_b.clone());
    assert_eq!(
        feasible(nodes(false, false), &e, &p),
        ["node-a", "node-x", "node-y"]
    );
    let p = incoming(foo(), json!({"nodeAffinityPolicy": "Ignore"}), not_b);
    assert_eq!(feasible(nodes(false, false), &e, &p), ["node-x", "node-y"]);
}

#[test]
fn node_taints_policy_decides_whether_tainted_nodes_count() {
    let e = on(&[("b1", "node-b"), ("b2", "node-b")]);
    // Ignore (default): node-b's pods count though the incoming pod cannot go there.
    let p = incoming(foo(), json!({}), json!({}));
    assert_eq!(feasible(nodes(false, true), &e, &p), ["node-x", "node-y"]);
    let p = incoming(foo(), json!({"nodeTaintsPolicy": "Honor"}), json!({}));
    assert_eq!(
        feasible(nodes(false, true), &e, &p),
        ["node-a", "node-x", "node-y"]
    );
}

#[test]
fn match_label_keys_narrow_the_selector_to_the_pods_own_values() {
    let e: Vec<Pod> = ["x1", "x2"]
        .iter()
        .map(|n| {
            pod(json!({
                "metadata": {"name": n, "namespace": "default", "labels": {"foo": "", "app": "v1"}},
                "spec": {"nodeName": "node-x", "containers": [{"name": "c", "image": "i"}]}
            }))
        })
        .collect();
    let labels = json!({"foo": "", "app": "v2"});
    let p = incoming(labels.clone(), json!({}), json!({}));
    assert_eq!(feasible(nodes(false, false), &e, &p), ["node-a", "node-b"]);
    let p = incoming(labels, json!({"matchLabelKeys": ["app"]}), json!({}));
    assert_eq!(feasible(nodes(false, false), &e, &p).len(), 4);
}

#[test]
fn schedule_anyway_never_filters_but_scores_toward_the_emptier_zone() {
    let e = on(&[("x1", "node-x"), ("x2", "node-x"), ("a1", "node-a")]);
    let anyway = json!({"whenUnsatisfiable": "ScheduleAnyway", "topologyKey": "zone"});
    let spread = incoming(foo(), anyway, json!({}));
    assert_eq!(feasible(nodes(false, false), &e, &spread).len(), 4);
    let mut plain = spread.clone();
    plain.topology_spread_constraints.clear();
    // zone1 holds 1 matching pod, zone2 2: the spread pod goes to zone1 (node-b, the empty
    // one there); without the constraint node-b, node-y tie on resources.
    let placed = |p: &Pod, seed: u64| {
        let config = SchedulerConfig {
            seed,
            ..Default::default()
        };
        let out = schedule(nodes(false, false), &e, std::slice::from_ref(p), &config);
        out.cluster.nodes[out.pods[0].node.unwrap()].name.clone()
    };
    for seed in 0..16 {
        assert_eq!(placed(&spread, seed), "node-b", "seed {seed}");
    }
    assert!((0..16).any(|seed| placed(&plain, seed) == "node-y"));
}

/// Score's raw `count·ln(domains+2) + maxSkew−1`, rounded, then reversed against the max.
#[test]
fn score_follows_upstreams_formula() {
    use schedsim::sched::plugins::inter_pod_affinity::Topology;
    use schedsim::sched::plugins::pod_topology_spread::{
        BoundGroup, CountedNodes, Spread, Tally, score,
    };
    use std::collections::BTreeMap;
    let nodes = nodes(false, false);
    let e = on(&[("a1", "node-a"), ("x1", "node-x"), ("x2", "node-x")]);
    let placed: Vec<BTreeMap<usize, i64>> = e
        .iter()
        .map(|p| {
            let i = nodes
                .iter()
                .position(|n| Some(&n.name) == p.node_name.as_ref())
                .unwrap();
            [(i, 1)].into()
        })
        .collect();
    let groups = || {
        e.iter()
            .zip(&placed)
            .map(|(pod, nodes)| BoundGroup { pod, nodes })
    };
    let gates = FeatureGates::default();
    let feasible = [0, 1, 2, 3];
    // Zone: zone1 holds 1, zone2 2; weight ln(2+2): raw 1 and 3 → 100·(3+1−s)/3.
    let zone = incoming(
        foo(),
        json!({"whenUnsatisfiable": "ScheduleAnyway"}),
        json!({}),
    );
    let compile = |pod: &Pod, nodes: &[Node]| {
        Spread::compile(
            pod,
            &pod.topology_spread_constraints,
            false,
            "ScheduleAnyway",
            nodes,
            &gates,
            &mut Topology::default(),
            &mut CountedNodes::default(),
        )
    };
    let spread = compile(&zone, &nodes);
    assert_eq!(
        score(&spread, &feasible, &Tally::of(&spread, 4, groups())),
        [100, 100, 33, 33]
    );
    // Hostname: each node its own domain, weight ln(4+2): raw 2, 0, 4, 0 → 100·(4+0−s)/4.
    let host = incoming(
        foo(),
        json!({"whenUnsatisfiable": "ScheduleAnyway", "topologyKey": "kubernetes.io/hostname"}),
        json!({}),
    );
    let spread = compile(&host, &nodes);
    assert_eq!(
        score(&spread, &feasible, &Tally::of(&spread, 4, groups())),
        [50, 100, 0, 100]
    );
    // A feasible node without the key is ignored (0) and left out of min and max.
    let spread = compile(&zone, &self::nodes(true, false));
    assert_eq!(
        score(&spread, &feasible, &Tally::of(&spread, 4, groups())),
        [100, 0, 33, 33]
    );
}

/// A pod without constraints that a Service selects gets the system default constraints
/// (hostname maxSkew 3, zone maxSkew 5, ScheduleAnyway) with the Service's selector; nodes
/// without the zone label are not ignored then (`requireAllTopologies` is false).
#[test]
fn system_default_constraints_follow_the_services_selecting_the_pod() {
    use schedsim::sched::plugins::inter_pod_affinity::Topology;
    use schedsim::sched::plugins::pod_topology_spread::{
        BoundGroup, CountedNodes, ServiceSelector, Services, Spread, Tally, default_constraints,
        score,
    };
    let services = Services::new(
        &[ServiceSelector {
            namespace: "default".into(),
            selector: [("app".to_string(), "train".to_string())].into(),
        }],
        &[],
    );
    let trainer = |name: &str| {
        pod(
            json!({"metadata": {"name": name, "namespace": "default", "labels": {"app": "train"}},
                   "spec": {"containers": [{"name": "c", "image": "i"}]}}),
        )
    };
    let incoming = trainer("p");
    let constraints =
        default_constraints(&incoming, None, &services).expect("a Service selects it");
    let keys: Vec<(&str, i32, &str)> = constraints
        .iter()
        .map(|c| {
            (
                c.topology_key.as_str(),
                c.max_skew,
                c.when_unsatisfiable.as_str(),
            )
        })
        .collect();
    assert_eq!(
        keys,
        [
            ("kubernetes.io/hostname", 3, "ScheduleAnyway"),
            ("topology.kubernetes.io/zone", 5, "ScheduleAnyway")
        ]
    );
    // Not selected: other namespace, other labels.
    let mut other = trainer("q");
    other.namespace = "ml".into();
    assert!(default_constraints(&other, None, &services).is_none());
    assert!(default_constraints(&existing("e", "node-a", "default"), None, &services).is_none());
    // An empty List means no defaults.
    assert!(default_constraints(&incoming, Some(&[]), &services).is_none());

    // The controller: an apps/v1 ReplicaSet or StatefulSet the pod's controller reference
    // names adds its selector's requirements; another kind or version adds nothing.
    let rs_selector: k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector =
        serde_json::from_value(
            json!({"matchLabels": {"app": "web", "pod-template-hash": "5d4f8"},
            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]}),
        )
        .unwrap();
    let controllers = [
        schedsim::sched::plugins::pod_topology_spread::ControllerSelector {
            namespace: "default".into(),
            kind: "ReplicaSet".into(),
            name: "web-5d4f8".into(),
            selector: rs_selector,
        },
    ];
    let by_controller = Services::new(&[], &controllers);
    let owned_by = |api_version: &str, kind: &str, name: &str| {
        pod(json!({"metadata": {"name": "w", "namespace": "default",
            "labels": {"app": "web", "pod-template-hash": "5d4f8"},
            "ownerReferences": [{"apiVersion": api_version, "kind": kind, "name": name,
                                 "uid": "u", "controller": true}]},
            "spec": {"containers": [{"name": "c", "image": "i"}]}}))
    };
    let web = owned_by("apps/v1", "ReplicaSet", "web-5d4f8");
    let web_constraints = default_constraints(&web, None, &by_controller).expect("its ReplicaSet");
    let selector = web_constraints[0].label_selector.as_ref().unwrap();
    assert_eq!(selector.match_labels, None);
    let requirements: Vec<(&str, &str, Vec<String>)> = (selector.match_expressions.iter())
        .flatten()
        .map(|r| {
            (
                r.key.as_str(),
                r.operator.as_str(),
                r.values.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        requirements,
        [
            ("app", "In", vec!["web".to_string()]),
            ("pod-template-hash", "In", vec!["5d4f8".to_string()]),
            ("tier", "NotIn", vec!["db".to_string()]),
        ]
    );
    for (api_version, kind, name) in [
        ("apps/v1", "ReplicaSet", "other"),
        ("extensions/v1beta1", "ReplicaSet", "web-5d4f8"),
        ("batch/v1", "Job", "web-5d4f8"),
    ] {
        let p = owned_by(api_version, kind, name);
        assert!(
            default_constraints(&p, None, &services).is_none(),
            "{api_version} {kind} {name}"
        );
    }

    // Two trainers on node-a; no node has the zone key, and none is ignored for it.
    let nodes = nodes(false, false);
    let bound = trainer("t");
    let on_a: std::collections::BTreeMap<usize, i64> = [(0, 2)].into();
    let spread = Spread::compile(
        &incoming,
        &constraints,
        true,
        "ScheduleAnyway",
        &nodes,
        &FeatureGates::default(),
        &mut Topology::default(),
        &mut CountedNodes::default(),
    );
    let groups = [BoundGroup {
        pod: &bound,
        nodes: &on_a,
    }];
    // ln(4+2)·2 + 2 ≈ 6 on node-a, 2 elsewhere: 100·(6+2−s)/6.
    assert_eq!(
        score(
            &spread,
            &[0, 1, 2, 3],
            &Tally::of(&spread, 4, groups.into_iter())
        ),
        [33, 100, 100, 100]
    );
}

/// `helper.DefaultSelector` reads the ReplicaSet (and StatefulSet) that controls a pod: a
/// Deployment's pods without constraints are spread by the system defaults over their
/// ReplicaSet's selector, while the same pods without a controller stack on the emptier node.
#[test]
fn a_deployments_pods_are_spread_by_the_default_constraints() {
    let file = std::path::PathBuf::from("tests/data/spread/deployment-default-spread.yaml");
    let loaded = schedsim::load::load_files(&[file], &Default::default());
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let report = schedsim::simulate(&loaded.scenarios[0]);
    let on = |prefix: &str, node: &str| {
        (report.pods.iter())
            .filter(|p| p.name.starts_with(prefix) && p.node.as_deref() == Some(node))
            .count()
    };
    assert_eq!((on("web-", "big"), on("web-", "small")), (3, 3));
    assert_eq!((on("bare-", "big"), on("bare-", "small")), (6, 0));
}

/// node-a and node-b, labelled `node` and the hostname with their names.
fn two_nodes() -> Vec<Node> {
    ["node-a", "node-b"]
        .iter()
        .map(|name| {
            let v = json!({
                "metadata": {"name": name, "labels": {"node": name, "kubernetes.io/hostname": name}},
                "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": "110"}}
            });
            let k: k8s_openapi::api::core::v1::Node = serde_json::from_value(v).unwrap();
            node_from_k8s(&k, "", &mut Vec::new())
        })
        .collect()
}

/// p-a (terminating, `metadata.deletionTimestamp` set) on node-a, p-b on node-b; both `foo`.
fn one_terminating() -> Vec<Pod> {
    let mut p_a = existing("p-a", "node-a", "default");
    p_a.deletion_timestamp = Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
        "2024-01-01T00:00:00Z".parse().unwrap(),
    ));
    vec![p_a, existing("p-b", "node-b", "default")]
}

/// Pod `p` labelled `foo`, spreading pods with `foo` (maxSkew 1) over `key`.
fn foo_spread(key: &str, when_unsatisfiable: &str) -> Pod {
    pod(json!({
        "metadata": {"name": "p", "namespace": "default", "labels": {"foo": ""}},
        "spec": {"containers": [{"name": "c", "image": "i"}], "topologySpreadConstraints": [{
            "maxSkew": 1, "topologyKey": key, "whenUnsatisfiable": when_unsatisfiable,
            "labelSelector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}}]}
    }))
}

/// Upstream `filtering_test.go` TestSingleConstraint "terminating Pods should be excluded":
/// node-a's terminating pod is not counted, so node-b (one pod) is the one too skewed.
#[test]
fn terminating_pods_are_excluded_from_filter_counts() {
    let p = foo_spread("node", "DoNotSchedule");
    assert_eq!(feasible(two_nodes(), &one_terminating(), &p), ["node-a"]);
}

/// Upstream `scoring_test.go` TestPodTopologySpreadScore "terminating Pods should be
/// excluded": node-a scores 100 and node-b 0, so the pod goes to node-a although both nodes
/// hold one pod.
#[test]
fn terminating_pods_are_excluded_from_score_counts() {
    let p = foo_spread("kubernetes.io/hostname", "ScheduleAnyway");
    for seed in 0..8 {
        let config = SchedulerConfig {
            seed,
            ..Default::default()
        };
        let o = schedule(
            two_nodes(),
            &one_terminating(),
            std::slice::from_ref(&p),
            &config,
        );
        assert_eq!(o.pods[0].phase, PodPhase::Scheduled);
        assert_eq!(o.pods[0].node, Some(0), "seed {seed}");
    }
}
