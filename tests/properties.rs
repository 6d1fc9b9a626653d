//! Metamorphic properties of the filters: relaxing a pod or growing a node never shrinks the
//! set of nodes the pod fits, and scheduling is a pure function of its inputs and seed.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{Taint, Toleration};
use proptest::prelude::*;
use schedsim::model::resources::ResourceList;
use schedsim::model::{Node, Pod};
use schedsim::sched::{SchedulerConfig, feasible_nodes, schedule};

const KEYS: &[&str] = &["nvidia.com/gpu", "dedicated", "spot"];
const VALUES: &[&str] = &["true", "a", "b"];
const EFFECTS: &[&str] = &["NoSchedule", "NoExecute", "PreferNoSchedule"];
const ZONES: &[&str] = &["zone-a", "zone-b", "zone-c"];
const PRODUCTS: &[&str] = &["A100", "H100", "L4"];

fn taint() -> impl Strategy<Value = Taint> {
    (0..KEYS.len(), 0..VALUES.len(), 0..EFFECTS.len()).prop_map(|(k, v, e)| Taint {
        key: KEYS[k].into(),
        value: Some(VALUES[v].into()),
        effect: EFFECTS[e].into(),
        ..Default::default()
    })
}

fn toleration() -> impl Strategy<Value = Toleration> {
    (
        0..=KEYS.len(),
        0..VALUES.len(),
        0..=EFFECTS.len(),
        any::<bool>(),
    )
        .prop_map(|(k, v, e, exists)| {
            // An empty key requires Exists (API validation).
            let exists = exists || k == KEYS.len();
            Toleration {
                key: KEYS.get(k).map(|s| s.to_string()),
                operator: Some(if exists { "Exists" } else { "Equal" }.into()),
                value: (!exists).then(|| VALUES[v].to_string()),
                effect: EFFECTS.get(e).map(|s| s.to_string()),
                ..Default::default()
            }
        })
}

fn resources(cpu: i64, gpus: i64, pods: i64) -> ResourceList {
    let mut r: ResourceList = [("cpu".to_string(), cpu), ("pods".to_string(), pods)]
        .into_iter()
        .collect();
    if gpus > 0 {
        r.insert("nvidia.com/gpu".into(), gpus);
    }
    r
}

fn node(i: usize) -> impl Strategy<Value = Node> {
    (
        0..ZONES.len(),
        0..PRODUCTS.len(),
        prop::collection::vec(taint(), 0..3),
        any::<bool>(),
        0..16_000i64,
        0..9i64,
        0..4i64,
    )
        .prop_map(move |(z, p, taints, cordoned, cpu, gpus, pods)| Node {
            name: format!("node-{i}"),
            labels: [("zone", ZONES[z]), ("product", PRODUCTS[p])]
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
            taints,
            unschedulable: cordoned && i.is_multiple_of(3),
            allocatable: resources(cpu, gpus, pods),
            pool: None,
        })
}

fn nodes() -> impl Strategy<Value = Vec<Node>> {
    (1..8usize).prop_flat_map(|n| (0..n).map(node).collect::<Vec<_>>())
}

fn pod() -> impl Strategy<Value = Pod> {
    (
        prop::collection::vec(toleration(), 0..4),
        prop::option::of(0..ZONES.len()),
        prop::option::of(0..PRODUCTS.len()),
        0..8_000i64,
        0..5i64,
    )
        .prop_map(|(tolerations, zone, product, cpu, gpus)| {
            let mut node_selector = BTreeMap::new();
            if let Some(z) = zone {
                node_selector.insert("zone".to_string(), ZONES[z].to_string());
            }
            if let Some(p) = product {
                node_selector.insert("product".to_string(), PRODUCTS[p].to_string());
            }
            let mut requests = resources(cpu, gpus, 0);
            requests.remove("pods");
            Pod {
                name: "p".into(),
                namespace: "default".into(),
                tolerations,
                node_selector: node_selector.into(),
                score_requests: requests.clone().into(),
                requests: requests.into(),
                ..Default::default()
            }
        })
}

fn feasible(nodes: &[Node], pod: &Pod) -> BTreeSet<String> {
    feasible_nodes(nodes.to_vec(), &[], pod, &SchedulerConfig::default())
        .into_iter()
        .collect()
}

proptest! {
    #[test]
    fn adding_a_toleration_never_shrinks_the_feasible_set(nodes in nodes(), pod in pod(), extra in toleration()) {
        let before = feasible(&nodes, &pod);
        let mut relaxed = pod.clone();
        relaxed.tolerations.push(extra);
        let after = feasible(&nodes, &relaxed);
        prop_assert!(before.is_subset(&after), "before {before:?} after {after:?}");
    }

    #[test]
    fn removing_a_node_selector_key_never_shrinks_the_feasible_set(nodes in nodes(), pod in pod(), which in any::<prop::sample::Index>()) {
        prop_assume!(!pod.node_selector.is_empty());
        let before = feasible(&nodes, &pod);
        let mut relaxed = pod.clone();
        let key = relaxed.node_selector.keys().nth(which.index(pod.node_selector.len())).unwrap().clone();
        relaxed.node_selector.remove(&key);
        let after = feasible(&nodes, &relaxed);
        prop_assert!(before.is_subset(&after), "before {before:?} after {after:?}");
    }

    #[test]
    fn more_allocatable_never_shrinks_the_feasible_set(nodes in nodes(), pod in pod(), which in any::<prop::sample::Index>(), cpu in 0..4_000i64, gpus in 0..4i64, pods in 0..3i64) {
        let before = feasible(&nodes, &pod);
        let mut grown = nodes.clone();
        let n = which.index(grown.len());
        for (r, extra) in [("cpu", cpu), ("nvidia.com/gpu", gpus), ("pods", pods)] {
            *grown[n].allocatable.entry(r.to_string()).or_insert(0) += extra;
        }
        let after = feasible(&grown, &pod);
        prop_assert!(before.is_subset(&after), "before {before:?} after {after:?}");
    }

    #[test]
    fn scheduling_is_deterministic_for_a_seed(nodes in nodes(), pods in prop::collection::vec(pod(), 1..12), seed in any::<u64>()) {
        let pods: Vec<Pod> = pods.into_iter().enumerate().map(|(i, mut p)| { p.name = format!("p{i}"); p }).collect();
        let config = SchedulerConfig { seed, ..Default::default() };
        let a = schedule(nodes.clone(), &[], &pods, &config);
        let b = schedule(nodes, &[], &pods, &config);
        let placement = |o: &schedsim::sched::Outcome| o.pods.iter().map(|p| (p.node, p.message.clone())).collect::<Vec<_>>();
        prop_assert_eq!(placement(&a), placement(&b));
    }
}

proptest! {
    /// `schedsim explain`'s recording changes nothing, and its winner is the run's node: the
    /// best total and in the tie, or, placed by preemption, the chosen candidate with the
    /// victims the run evicted.
    #[test]
    fn the_explained_winner_is_the_node_the_run_chose(nodes in roomy_nodes(), pods in prop::collection::vec((pod(), -2..3i32), 1..16), running in prop::collection::vec((0..6usize, 0..6_000i64, -3..1i32), 0..10), seed in any::<u64>()) {
        // Lower-priority pods already running: victims for the pods that do not fit.
        let existing: Vec<Pod> = (running.into_iter().enumerate())
            .map(|(i, (node, cpu, priority))| {
                let mut requests = resources(cpu, 0, 0);
                requests.remove("pods");
                Pod {
                    name: format!("e{i}"),
                    namespace: "default".into(),
                    node_name: Some(format!("node-{}", node % nodes.len())),
                    priority: priority * 100,
                    score_requests: requests.clone().into(),
                    requests: requests.into(),
                    ..Default::default()
                }
            })
            .collect();
        let pods: Vec<Pod> = (pods.into_iter().enumerate())
            .map(|(i, (mut p, priority))| {
                p.name = format!("p{i}");
                p.priority = priority * 100;
                p
            })
            .collect();
        let plain = SchedulerConfig { seed, drop_node_verdicts: false, ..Default::default() };
        let explained = SchedulerConfig {
            explain: Some(std::sync::Arc::new(pods.iter().map(Pod::key).collect())),
            ..plain.clone()
        };
        let a = schedule(nodes.clone(), &existing, &pods, &plain);
        let b = schedule(nodes, &existing, &pods, &explained);
        let placement = |o: &schedsim::sched::Outcome| {
            o.pods.iter().map(|p| (p.node, p.message.clone(), p.victims.clone())).collect::<Vec<_>>()
        };
        prop_assert_eq!(placement(&a), placement(&b));
        for (i, o) in b.pods.iter().enumerate() {
            let Some(e) = b.explained.get(&i) else { continue };
            if o.phase != schedsim::sched::PodPhase::Scheduled {
                prop_assert!(e.chosen.is_none());
                continue;
            }
            prop_assert_eq!(e.chosen, o.node);
            let best = e.scored.iter().map(|s| s.total).max();
            if let Some(best) = best {
                let chosen = e.scored.iter().find(|s| Some(s.node) == o.node).unwrap();
                prop_assert_eq!(chosen.total, best);
                prop_assert!(e.ties.contains(&chosen.node));
            }
            if !o.victims.is_empty() {
                let p = e.preemption.as_ref().unwrap();
                let c = &p.candidates[p.chosen.unwrap()];
                prop_assert_eq!(Some(&c.node), o.node.map(|n| &b.cluster.nodes[n].name));
                prop_assert!(c.lost_on.is_none());
                let mut victims: Vec<String> = c.victims.iter().map(|(v, _)| v.clone()).collect();
                // Workload pods by index, running ones from the top of the id range.
                let pod_of = |v: usize| pods.get(v).unwrap_or_else(|| &existing[usize::MAX - v]);
                let mut evicted: Vec<String> = o.victims.iter().map(|&v| pod_of(v).key()).collect();
                victims.sort();
                evicted.sort();
                prop_assert_eq!(victims, evicted);
                prop_assert!(p.candidates.iter().enumerate().all(|(k, c)| (k == p.chosen.unwrap()) == c.lost_on.is_none()));
            }
        }
    }
}

/// Nodes most pods fit on, a few tainted: most cycles score several nodes, and later
/// pods of higher priority preempt earlier ones.
fn roomy_nodes() -> impl Strategy<Value = Vec<Node>> {
    prop::collection::vec((node(0), 4_000..16_000i64, 0..9i64, any::<bool>()), 1..7).prop_map(
        |list| {
            (list.into_iter().enumerate())
                .map(|(i, (mut n, cpu, gpus, keep_taints))| {
                    n.name = format!("node-{i}");
                    n.allocatable = resources(cpu, gpus, 110);
                    n.unschedulable = false;
                    if !keep_taints {
                        n.taints.clear();
                    }
                    n
                })
                .collect()
        },
    )
}

/// Running pods, some labelled `app: a`, on random nodes of a cluster of `n`.
fn running(n: usize) -> impl Strategy<Value = Vec<Pod>> {
    prop::collection::vec((0..n, any::<bool>()), 0..12).prop_map(|v| {
        v.into_iter()
            .enumerate()
            .map(|(i, (node, labelled))| Pod {
                name: format!("e{i}"),
                namespace: "default".into(),
                node_name: Some(format!("node-{node}")),
                labels: labelled
                    .then(|| ("app".to_string(), "a".to_string()))
                    .into_iter()
                    .collect(),
                ..Default::default()
            })
            .collect()
    })
}

/// A zone spread constraint on pods labelled `app: a`.
fn zone_spread(max_skew: i32, when: &str) -> k8s_openapi::api::core::v1::TopologySpreadConstraint {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
    k8s_openapi::api::core::v1::TopologySpreadConstraint {
        max_skew,
        topology_key: "zone".into(),
        when_unsatisfiable: when.into(),
        label_selector: Some(LabelSelector {
            match_labels: Some([("app".to_string(), "a".to_string())].into()),
            match_expressions: None,
        }),
        ..Default::default()
    }
}

fn feasible_with(nodes: &[Node], existing: &[Pod], pod: &Pod) -> BTreeSet<String> {
    feasible_nodes(nodes.to_vec(), existing, pod, &SchedulerConfig::default())
        .into_iter()
        .collect()
}

proptest! {
    #[test]
    fn raising_max_skew_never_shrinks_the_feasible_set(
        (nodes, existing) in nodes().prop_flat_map(|n| { let len = n.len(); (Just(n), running(len)) }),
        pod in pod(),
        skew in 1..4i32,
    ) {
        let mut spread = pod.clone();
        spread.labels.insert("app".into(), "a".into());
        spread.topology_spread_constraints = vec![zone_spread(skew, "DoNotSchedule")];
        let before = feasible_with(&nodes, &existing, &spread);
        spread.topology_spread_constraints = vec![zone_spread(skew + 1, "DoNotSchedule")];
        let after = feasible_with(&nodes, &existing, &spread);
        prop_assert!(before.is_subset(&after), "before {before:?} after {after:?}");
    }

    #[test]
    fn schedule_anyway_constraints_never_filter(
        (nodes, existing) in nodes().prop_flat_map(|n| { let len = n.len(); (Just(n), running(len)) }),
        pod in pod(),
        skew in 1..4i32,
    ) {
        let plain = feasible_with(&nodes, &existing, &pod);
        let mut spread = pod.clone();
        spread.topology_spread_constraints = vec![zone_spread(skew, "ScheduleAnyway")];
        prop_assert_eq!(plain, feasible_with(&nodes, &existing, &spread));
    }
}

/// `pods` as one Coscheduling gang whose PodGroup wants all of them.
fn as_gang(pods: &[Pod]) -> (Vec<Pod>, SchedulerConfig) {
    use schedsim::model::pod::{GangScheduler, PodGroupRef};
    use schedsim::model::pod_group::PodGroup;
    let group = PodGroup {
        scheduler: GangScheduler::Coscheduling,
        namespace: "default".into(),
        name: "gang".into(),
        min_member: pods.len() as u32,
        min_resources: None,
        schedule_timeout_seconds: None,
    };
    let members = pods
        .iter()
        .cloned()
        .map(|mut p| {
            p.pod_group = Some(PodGroupRef {
                scheduler: GangScheduler::Coscheduling,
                name: "gang".into(),
                min_available: None,
            });
            p
        })
        .collect();
    let mut config = SchedulerConfig::default();
    config.pod_groups.insert(group.key(), group);
    (members, config)
}

proptest! {
    /// A gang binds all its members or none, and it binds exactly when the same pods, placed one
    /// by one without a gang, all find a node.
    #[test]
    fn a_gang_is_all_or_nothing(nodes in nodes(), pods in prop::collection::vec(pod(), 1..6)) {
        let pods: Vec<Pod> = pods.into_iter().enumerate().map(|(i, mut p)| { p.name = format!("p{i}"); p }).collect();
        let (members, config) = as_gang(&pods);
        let gang = schedule(nodes.clone(), &[], &members, &config);
        let scheduled = |o: &schedsim::sched::Outcome| o.pods.iter().filter(|p| p.phase == schedsim::sched::PodPhase::Scheduled).count();
        let bound = scheduled(&gang);
        prop_assert!(bound == 0 || bound == pods.len(), "{bound} of {} bound", pods.len());
        let alone = schedule(nodes, &[], &pods, &SchedulerConfig::default());
        prop_assert_eq!(bound == pods.len(), scheduled(&alone) == pods.len());
        if bound == 0 {
            let used: i64 = (0..gang.cluster.len()).map(|n| gang.cluster.resources(n).pod_count).sum();
            prop_assert_eq!(used, 0, "a gang that was not bound holds nothing");
        }
    }
}

proptest! {
    /// Switching a filter plugin off in the profile never shrinks the feasible node set.
    #[test]
    fn disabling_a_filter_never_shrinks_the_feasible_set(nodes in nodes(), pod in pod(), which in 0..5usize) {
        use schedsim::sched::plugins::registry::{ExtensionPoint, Plugin};
        use schedsim::sched::profile::Profile;
        let mut profile = Profile::default();
        let plugin = [Plugin::NodeUnschedulable, Plugin::NodeName, Plugin::TaintToleration, Plugin::NodeAffinity, Plugin::NodeResourcesFit][which];
        profile.framework.disable(ExtensionPoint::Filter, plugin);
        let config = SchedulerConfig { profiles: vec![profile], serves_every_pod: true, ..Default::default() };
        let before = feasible(&nodes, &pod);
        let after: BTreeSet<String> = feasible_nodes(nodes.clone(), &[], &pod, &config).into_iter().collect();
        prop_assert!(before.is_subset(&after), "before {before:?} after {after:?}");
    }
}

/// 100 to 160 random nodes, their zones also as `topology.kubernetes.io/zone` (the node tree
/// interleaves them): clusters large enough for kube-scheduler to sample.
fn sampled_nodes() -> impl Strategy<Value = Vec<Node>> {
    (100..160usize)
        .prop_flat_map(|n| (0..n).map(node).collect::<Vec<_>>())
        .prop_map(|mut nodes| {
            for n in &mut nodes {
                let zone = n.labels["zone"].clone();
                n.labels.insert("topology.kubernetes.io/zone".into(), zone);
            }
            nodes
        })
}

/// Pods of three priorities (so that some preempt).
fn ranked_pods() -> impl Strategy<Value = Vec<Pod>> {
    prop::collection::vec((pod(), 0..3i32), 1..16).prop_map(|pods| {
        (pods.into_iter().enumerate())
            .map(|(i, (mut p, rank))| {
                p.name = format!("p{i}");
                p.priority = rank * 500;
                p
            })
            .collect()
    })
}

fn with_percentage(seed: u64, percentage: Option<i32>) -> SchedulerConfig {
    let profile = schedsim::sched::profile::Profile {
        percentage_of_nodes_to_score: percentage,
        ..schedsim::sched::profile::Profile::default_with_coscheduling()
    };
    SchedulerConfig {
        seed,
        profiles: vec![profile],
        serves_every_pod: true,
        ..Default::default()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// With `percentageOfNodesToScore: 100` kube-scheduler's sampling examines every node, so
    /// its placements are those of evaluating every node (`nodeSampling: all`), whatever node
    /// each cycle starts from.
    #[test]
    fn percentage_100_is_evaluating_every_node(nodes in sampled_nodes(), pods in ranked_pods(), seed in any::<u64>()) {
        let sampled = with_percentage(seed, Some(100));
        let all = SchedulerConfig { node_sampling: schedsim::sched::sampling::NodeSampling::All, ..sampled.clone() };
        let outcome = |o: &schedsim::sched::Outcome| {
            o.pods.iter().map(|p| (p.node, p.phase, p.message.clone(), p.victims.clone(), p.evaluated)).collect::<Vec<_>>()
        };
        let a = schedule(nodes.clone(), &[], &pods, &sampled);
        let b = schedule(nodes, &[], &pods, &all);
        prop_assert_eq!(outcome(&a), outcome(&b));
    }

    /// A sampled cycle examines at least min(100, nodes) nodes and finds at most
    /// numFeasibleNodesToFind feasible ones.
    #[test]
    fn a_sampled_cycle_examines_enough_and_finds_no_more_than_it_needs(nodes in sampled_nodes(), pods in ranked_pods(), seed in any::<u64>()) {
        let n = nodes.len();
        let o = schedule(nodes, &[], &pods, &with_percentage(seed, None));
        let to_find = schedsim::sched::sampling::num_feasible_nodes_to_find(None, n);
        for p in o.pods.iter().filter_map(|p| p.evaluated) {
            prop_assert!(p.nodes >= n.min(100) && p.nodes <= n, "{p:?} of {n}");
            prop_assert!(p.feasible <= to_find, "{p:?}, {to_find} to find");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Sampling only stops early: pod after pod (of one priority, so none preempts), a
    /// sampled cycle places the pod on a node where it fits given the pods placed before it,
    /// and leaves it pending only when it fits nowhere — the set of nodes every node's
    /// evaluation finds (`feasible_nodes`) holds the sampled placement and is empty for the
    /// pending pods.
    #[test]
    fn a_sampled_placement_is_on_a_feasible_node(nodes in sampled_nodes(), pods in prop::collection::vec(pod(), 1..12), seed in any::<u64>()) {
        let pods: Vec<Pod> = (pods.into_iter().enumerate())
            .map(|(i, mut p)| { p.name = format!("p{i}"); p })
            .collect();
        let config = with_percentage(seed, None);
        let o = schedule(nodes.clone(), &[], &pods, &config);
        let mut placed: Vec<Pod> = Vec::new();
        for (p, outcome) in pods.iter().zip(&o.pods) {
            let feasible = feasible_nodes(nodes.clone(), &placed, p, &config);
            match outcome.node {
                Some(n) => {
                    let name = &o.cluster.nodes[n].name;
                    prop_assert!(feasible.contains(name), "{} on {name}, feasible {feasible:?}", p.name);
                    placed.push(Pod { node_name: Some(name.clone()), ..p.clone() });
                }
                None => prop_assert!(feasible.is_empty(), "{} pending, feasible {feasible:?}", p.name),
            }
        }
    }
}
