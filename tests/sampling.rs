//! kube-scheduler's node sampling: how many feasible nodes a cycle looks for
//! (`numFeasibleNodesToFind`, upstream's table as data), which nodes it examines (the node
//! tree's zone-interleaved order from where the previous cycle stopped), profiles without Score
//! plugins and PreFilter results, and preemption's candidate sampling.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use schedsim::load::{self, LoadOptions};
use schedsim::model::resources::ResourceList;
use schedsim::model::{Node, Pod};
use schedsim::sched::node_tree::NodeTree;
use schedsim::sched::profile::{PreemptionArgs, Profile};
use schedsim::sched::sampling::{self, NodeSampling};
use schedsim::sched::{PodPhase, SchedulerConfig, schedule};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FeasibleCase {
    name: String,
    #[serde(default)]
    global: Option<i32>,
    #[serde(default)]
    profile: Option<i32>,
    nodes: usize,
    want: usize,
}

/// Upstream's TestNumFeasibleNodesToFind, through a KubeSchedulerConfiguration: the global and
/// the profile's `percentageOfNodesToScore` as the configuration sets them.
#[test]
fn num_feasible_nodes_to_find_matches_upstream_table() {
    let text = std::fs::read_to_string("tests/data/sampling/num-feasible-nodes.yaml").unwrap();
    let docs = schedsim::yaml::parse_documents(text, Path::new("num-feasible-nodes.yaml")).unwrap();
    let cases: Vec<FeasibleCase> = serde_json::from_value(docs[0].value.clone()).unwrap();
    assert_eq!(cases.len(), 16);
    let mut failures = Vec::new();
    for c in &cases {
        let mut config = String::from(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n",
        );
        if let Some(g) = c.global {
            config.push_str(&format!("percentageOfNodesToScore: {g}\n"));
        }
        config.push_str("profiles:\n  - schedulerName: default-scheduler\n");
        if let Some(p) = c.profile {
            config.push_str(&format!("    percentageOfNodesToScore: {p}\n"));
        }
        let file = Path::new("config.yaml");
        let docs = schedsim::yaml::parse_documents(config, file).unwrap();
        let profiles = schedsim::sched::profile::from_document(&docs[0], file).unwrap();
        let got =
            sampling::num_feasible_nodes_to_find(profiles[0].percentage_of_nodes_to_score, c.nodes);
        if got != c.want {
            failures.push(format!("{}: {got}, want {}", c.name, c.want));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `calculateNumCandidates`: a share of the nodes, at least the absolute number, at most all.
#[test]
fn preemption_looks_for_a_share_of_the_candidates() {
    let args = |pct, abs| PreemptionArgs {
        min_candidate_nodes_percentage: pct,
        min_candidate_nodes_absolute: abs,
    };
    let defaults = PreemptionArgs::default();
    assert_eq!(
        (
            defaults.min_candidate_nodes_percentage,
            defaults.min_candidate_nodes_absolute
        ),
        (10, 100)
    );
    assert_eq!(sampling::num_candidates(defaults, 50), 50);
    assert_eq!(sampling::num_candidates(defaults, 500), 100);
    assert_eq!(sampling::num_candidates(defaults, 5000), 500);
    assert_eq!(sampling::num_candidates(args(0, 1), 5000), 1);
    assert_eq!(sampling::num_candidates(args(100, 0), 5000), 5000);
    assert_eq!(sampling::num_candidates(args(50, 10), 7), 7);
}

fn node(name: &str, zone: Option<&str>, cpu: i64) -> Node {
    let mut labels: BTreeMap<String, String> =
        [("kubernetes.io/hostname".to_string(), name.to_string())].into();
    if let Some(z) = zone {
        labels.insert("topology.kubernetes.io/zone".into(), z.into());
    }
    Node {
        name: name.into(),
        labels,
        taints: Vec::new(),
        unschedulable: false,
        allocatable: [("cpu".to_string(), cpu), ("pods".to_string(), 110)].into(),
        pool: None,
    }
}

fn pod(name: &str, cpu: i64, priority: i32) -> Pod {
    let requests: ResourceList = [("cpu".to_string(), cpu)].into();
    Pod {
        name: name.into(),
        namespace: "default".into(),
        scheduler_name: "default-scheduler".into(),
        priority,
        score_requests: requests.clone().into(),
        requests: requests.into(),
        ..Default::default()
    }
}

fn config(seed: u64, profile: Profile) -> SchedulerConfig {
    SchedulerConfig {
        seed,
        profiles: vec![profile],
        serves_every_pod: true,
        ..Default::default()
    }
}

/// Checks that pod after pod examines the next `evaluated` nodes of the node tree's list, from
/// where the previous one stopped, and lands on one of them; returns the start positions.
fn walks(nodes: &[Node], outcome: &schedsim::sched::Outcome) -> Vec<usize> {
    let list = NodeTree::new(nodes)
        .list()
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    let mut start = 0;
    let mut starts = Vec::new();
    for (i, o) in outcome.pods.iter().enumerate() {
        let e = o.evaluated.expect("the cycle ran the filters");
        let node = &outcome.cluster.nodes[o.node.expect("scheduled")].name;
        let at = list.iter().position(|n| n == node).unwrap();
        let offset = (at + list.len() - start) % list.len();
        assert!(
            offset < e.nodes,
            "pod {i} on {node} (position {at}) outside [{start}, +{})",
            e.nodes
        );
        starts.push(start);
        start = (start + e.nodes) % list.len();
    }
    starts
}

/// Upstream's TestFairEvaluationForNodes: 500 nodes, `percentageOfNodesToScore: 30`; every
/// cycle finds 150 feasible nodes and the next starts (i+1)·150 mod 500 further on.
#[test]
fn cycles_take_turns_over_the_nodes() {
    let nodes: Vec<Node> = (0..500)
        .map(|i| node(&format!("n-{i:03}"), None, 64_000))
        .collect();
    let pods: Vec<Pod> = (0..8).map(|i| pod(&format!("p-{i}"), 100, 0)).collect();
    let profile = Profile {
        percentage_of_nodes_to_score: Some(30),
        ..Profile::default()
    };
    let o = schedule(nodes.clone(), &[], &pods, &config(1, profile));
    for p in &o.pods {
        let e = p.evaluated.unwrap();
        assert_eq!((e.nodes, e.feasible), (150, 150));
    }
    let starts = walks(&nodes, &o);
    let want: Vec<usize> = (0..8).map(|i| i * 150 % 500).collect();
    assert_eq!(starts, want);
}

/// 100 nodes in zone a listed before 100 in zone b: the node tree interleaves them, so each
/// cycle (100 feasible nodes to find among 200) examines 50 of each zone.
#[test]
fn the_walk_interleaves_zones() {
    let mut nodes: Vec<Node> = (0..100)
        .map(|i| node(&format!("a-{i:03}"), Some("a"), 8_000))
        .collect();
    nodes.extend((0..100).map(|i| node(&format!("b-{i:03}"), Some("b"), 8_000)));
    let pods: Vec<Pod> = (0..5).map(|i| pod(&format!("p{i}"), 1_000, 0)).collect();
    for seed in 0..4 {
        let o = schedule(nodes.clone(), &[], &pods, &config(seed, Profile::default()));
        assert!(o.pods.iter().all(|p| p.evaluated.unwrap().nodes == 100));
        assert_eq!(walks(&nodes, &o), [0, 100, 0, 100, 0]);
        // The first pod examined a-000…a-049 and b-000…b-049.
        let first = &o.cluster.nodes[o.pods[0].node.unwrap()].name;
        assert!(first[2..].parse::<usize>().unwrap() < 50, "{first}");
    }
    // Every node examined: each pod sees all 200.
    let all = SchedulerConfig {
        node_sampling: NodeSampling::All,
        ..config(0, Profile::default())
    };
    let o = schedule(nodes.clone(), &[], &pods, &all);
    assert!(o.pods.iter().all(|p| p.evaluated.unwrap().nodes == 200));
}

/// Nodes that fail the filters are examined too: on 200 nodes of which only every fourth has
/// room, a cycle walks on until it has 100 feasible nodes, so it examines all 200 and the next
/// one starts where it started.
#[test]
fn the_walk_counts_the_nodes_that_failed() {
    let nodes: Vec<Node> = (0..200)
        .map(|i| {
            node(
                &format!("n-{i:03}"),
                None,
                if i % 4 == 0 { 8_000 } else { 100 },
            )
        })
        .collect();
    let pods: Vec<Pod> = (0..3).map(|i| pod(&format!("p{i}"), 1_000, 0)).collect();
    let o = schedule(nodes.clone(), &[], &pods, &config(0, Profile::default()));
    for p in &o.pods {
        assert_eq!(p.evaluated.map(|e| (e.nodes, e.feasible)), Some((200, 50)));
        assert_eq!(
            o.cluster.nodes[p.node.unwrap()].name[2..]
                .parse::<usize>()
                .unwrap()
                % 4,
            0
        );
    }
}

/// A profile without Score plugins stops at the first feasible node (numNodesToFind 1); a
/// PreFilter result narrows the walk to its nodes, and the start moves on by those examined.
#[test]
fn without_score_plugins_the_first_feasible_node_wins() {
    let file = PathBuf::from("tests/data/sampling/no-score.yaml");
    let loaded = load::load_files(&[file], &LoadOptions::default());
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let s = &loaded.scenarios[0];
    let report = schedsim::simulate(s);
    let verdicts = schedsim::check::check(s, &report);
    assert!(verdicts.iter().all(|v| v.met()), "{verdicts:?}");
    let evaluated: Vec<Option<usize>> = report.pods.iter().map(|p| p.evaluated_nodes).collect();
    assert_eq!(evaluated, [Some(1), Some(1), Some(3), Some(1)]);
}

/// 200 full nodes, each with one pod `p` may preempt; n-150's victim has the lowest priority.
fn preemption_scenario() -> (Vec<Node>, Vec<Pod>, Pod) {
    let nodes: Vec<Node> = (0..200)
        .map(|i| node(&format!("n-{i:03}"), None, 1_000))
        .collect();
    let existing: Vec<Pod> = (0..200)
        .map(|i| {
            let mut p = pod(
                &format!("filler-{i:03}"),
                1_000,
                if i == 150 { 5 } else { 10 },
            );
            p.node_name = Some(format!("n-{i:03}"));
            p
        })
        .collect();
    (nodes, existing, pod("p", 1_000, 1_000))
}

/// DryRunPreemption starts at a seeded random node and stops at `numCandidates` candidates:
/// with every node a candidate the best one always wins; with one, the first found does.
#[test]
fn preemption_samples_its_candidates() {
    let (nodes, existing, p) = preemption_scenario();
    let run = |seed: u64, pct: i32, abs: i32| {
        let profile = Profile {
            preemption: PreemptionArgs {
                min_candidate_nodes_percentage: pct,
                min_candidate_nodes_absolute: abs,
            },
            ..Profile::default()
        };
        let o = schedule(
            nodes.clone(),
            &existing,
            std::slice::from_ref(&p),
            &config(seed, profile),
        );
        assert_eq!(o.pods[0].phase, PodPhase::Scheduled);
        assert_eq!(o.pods[0].victims.len(), 1);
        o.cluster.nodes[o.pods[0].node.unwrap()].name.clone()
    };
    let seeds = 0..8u64;
    assert!(seeds.clone().all(|s| run(s, 100, 0) == "n-150"));
    let firsts: Vec<String> = seeds.clone().map(|s| run(s, 0, 1)).collect();
    assert!(firsts.iter().any(|n| n != "n-150"), "{firsts:?}");
    // A seed gives one answer; different seeds start the dry run at different nodes.
    assert_eq!(
        firsts,
        seeds.clone().map(|s| run(s, 0, 1)).collect::<Vec<_>>()
    );
    let distinct: std::collections::BTreeSet<&String> = firsts.iter().collect();
    assert!(distinct.len() > 1, "{firsts:?}");
}
