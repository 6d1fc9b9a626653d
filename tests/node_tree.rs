//! The node tree kube-scheduler's cache keeps, against upstream's `node_tree_test.go` tables
//! (`tests/data/sampling/node-tree.yaml`): zones keyed by region and zone label, nodes in the
//! order added, and the zone-interleaved list a scheduling cycle walks.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use schedsim::model::Node;
use schedsim::sched::node_tree::NodeTree;

const CASES: &str = include_str!("data/sampling/node-tree.yaml");

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Cases {
    nodes: Vec<NodeSpec>,
    add: Vec<Case>,
    remove: Vec<Case>,
    update: Vec<Case>,
    list: Vec<Case>,
    operations: Vec<Case>,
}

#[derive(Deserialize, Clone)]
#[serde(deny_unknown_fields)]
struct NodeSpec {
    name: String,
    labels: BTreeMap<String, String>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
struct Case {
    name: String,
    add: Vec<usize>,
    existing: Vec<usize>,
    remove: Vec<usize>,
    update: Option<String>,
    labels: BTreeMap<String, String>,
    operations: Vec<String>,
    tree: Option<BTreeMap<String, Vec<String>>>,
    list: Option<Vec<String>>,
    error: bool,
}

fn cases() -> Cases {
    let docs =
        schedsim::yaml::parse_documents(CASES.to_string(), std::path::Path::new("node-tree.yaml"))
            .expect("case file parses");
    let value: Value = docs[0].value.clone();
    serde_json::from_value(value).expect("case file has the expected shape")
}

fn node(spec: &NodeSpec) -> Node {
    Node {
        name: spec.name.clone(),
        labels: spec.labels.clone(),
        taints: Vec::new(),
        unschedulable: false,
        allocatable: Default::default(),
        pool: None,
    }
}

/// The tree as the case file writes it: zone key with `|` for ":\0:", node names.
fn written(tree: &NodeTree) -> BTreeMap<String, Vec<String>> {
    tree.zones()
        .map(|(zone, names)| (zone.replace(":\0:", "|"), names.to_vec()))
        .collect()
}

fn check(failures: &mut Vec<String>, group: &str, case: &Case, tree: &NodeTree) {
    if let Some(want) = &case.tree {
        let got = written(tree);
        if got != *want {
            failures.push(format!(
                "{group} {:?}: tree {got:?}, want {want:?}",
                case.name
            ));
        }
        let count: usize = want.values().map(Vec::len).sum();
        if tree.len() != count {
            failures.push(format!(
                "{group} {:?}: {} nodes, want {count}",
                case.name,
                tree.len()
            ));
        }
    }
    if let Some(want) = &case.list {
        let got: Vec<&str> = tree.list();
        if got != *want {
            failures.push(format!(
                "{group} {:?}: list {got:?}, want {want:?}",
                case.name
            ));
        }
    }
}

#[test]
fn node_tree_matches_upstream_tables() {
    let c = cases();
    let all: Vec<Node> = c.nodes.iter().map(node).collect();
    let nodes = |indices: &[usize]| indices.iter().map(|&i| &all[i]).collect::<Vec<_>>();
    let mut failures = Vec::new();
    let mut ran = 0;
    for case in c.add.iter().chain(&c.list) {
        let mut tree = NodeTree::default();
        for n in nodes(&case.add) {
            tree.add(n);
        }
        check(&mut failures, "add/list", case, &tree);
        ran += 1;
    }
    for case in &c.remove {
        let mut tree = NodeTree::new(nodes(&case.existing));
        for n in nodes(&case.remove) {
            if tree.remove(n).is_ok() == case.error {
                failures.push(format!(
                    "remove {:?}: error expected: {}",
                    case.name, case.error
                ));
            }
        }
        check(&mut failures, "remove", case, &tree);
        ran += 1;
    }
    for case in &c.update {
        let mut tree = NodeTree::new(nodes(&case.existing));
        let name = case.update.clone().expect("update names a node");
        let old = all
            .iter()
            .find(|n| n.name == name)
            .cloned()
            .unwrap_or_else(|| Node {
                name: "nonexisting-node".into(),
                ..node(&c.nodes[0])
            });
        let new = Node {
            name,
            labels: case.labels.clone(),
            ..old.clone()
        };
        tree.update(&old, &new);
        check(&mut failures, "update", case, &tree);
        ran += 1;
    }
    for case in &c.operations {
        let (mut add, mut remove) = (
            nodes(&case.add).into_iter(),
            nodes(&case.remove).into_iter(),
        );
        let mut tree = NodeTree::default();
        for op in &case.operations {
            match op.as_str() {
                "add" => tree.add(add.next().expect("enough nodes to add")),
                "remove" => {
                    let _ = tree.remove(remove.next().expect("enough nodes to remove"));
                }
                other => panic!("unknown operation {other:?}"),
            }
        }
        check(&mut failures, "operations", case, &tree);
        ran += 1;
    }
    assert_eq!(ran, 21, "every case runs");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `follow` is what the cache's event handlers do with a new node list: removed nodes leave,
/// added ones join at the end of their zone (a zone emptied and filled again comes last).
#[test]
fn the_tree_follows_node_list_changes_as_the_cache_does() {
    let n = |name: &str, zone: &str| Node {
        name: name.into(),
        labels: [("topology.kubernetes.io/zone".to_string(), zone.to_string())].into(),
        taints: Vec::new(),
        unschedulable: false,
        allocatable: Default::default(),
        pool: None,
    };
    let before = vec![n("a1", "a"), n("b1", "b"), n("a2", "a")];
    let mut tree = NodeTree::new(&before);
    assert_eq!(tree.list(), ["a1", "b1", "a2"]);
    // b1 fails, then comes back with b2: zone b is new again, after a.
    let failed = vec![n("a1", "a"), n("a2", "a")];
    tree.follow(&before, &failed);
    assert_eq!(tree.list(), ["a1", "a2"]);
    let added = vec![
        n("a1", "a"),
        n("a2", "a"),
        n("b2", "b"),
        n("c1", "c"),
        n("b1", "b"),
    ];
    tree.follow(&failed, &added);
    assert_eq!(tree.list(), ["a1", "b2", "c1", "a2", "b1"]);
    // A rebuilt tree of the same list agrees: nothing else is remembered.
    assert_eq!(NodeTree::new(&added).list(), tree.list());
}
