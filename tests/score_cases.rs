//! Upstream's Score plugin test tables (`tests/data/upstream-scores/`, transcribed from the
//! `*_test.go` files beside each plugin, sources in each file): every node score a case
//! expects is the one `schedsim explain` reports for that plugin, node by node.
//!
//! Each case becomes a scenario whose profile runs only the plugin's Score (weight 1) and no
//! Filter, so every node is scored as upstream's test scores it. Upstream's unit tests build
//! objects the API server would refuse; the scenario gets what the API server requires and
//! Score does not read: a container (with zero requests, as a pod without containers has
//! none) and an image, limits equal to the requests of extended resources, lower-case node
//! names, namespace `default` for `""`, and dashes for the dots of namespace names. A case
//! that names the nodes Score sees (`scored`) gets a `NoSchedule` taint on the others with
//! TaintToleration's Filter on, which under the default `nodeTaintsPolicy: Ignore` changes
//! nothing Score counts. Feature gates that are always on here are dropped; a case that turns
//! one off is not compared.

mod common;

use serde_json::{Value, json};

use schedsim::explain::{Ask, explain};
use schedsim::load::{LoadOptions, load_files};

/// Cases that cannot be compared, and why (each is checked to still be so).
const NOT_COMPARED: &[(&str, &str)] = &[
    (
        "one constraint on node, only one node is candidate",
        "kube-scheduler runs no Score with one feasible node; the unit test calls Score directly",
    ),
    (
        "system defaulting, nodes don't have zone, pods match service",
        "a Service object: spec.objects does not take Services",
    ),
    (
        "two Constraints on zone, 2 out of 4 nodes are candidates",
        "the API server refuses two constraints with the same topologyKey and whenUnsatisfiable",
    ),
    (
        "minDomains has no effect when ScheduleAnyway",
        "the API server refuses minDomains with whenUnsatisfiable: ScheduleAnyway",
    ),
];

/// Gates that are on and locked in the Kubernetes release simulated.
const ALWAYS_ON: &[&str] = &[
    "NodeInclusionPolicyInPodTopologySpread",
    "MatchLabelKeysInPodTopologySpread",
];

#[test]
fn every_expected_node_score_is_upstreams() {
    let dir = common::cli::tempdir("score-cases");
    let (mut compared, mut refused, mut mismatches, mut unexplained) =
        (0, 0, Vec::new(), Vec::new());
    let mut files: Vec<_> = std::fs::read_dir("tests/data/upstream-scores")
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let doc = schedsim::yaml::parse_documents(text, &file)
            .unwrap()
            .remove(0)
            .value;
        let plugin = doc["plugin"].as_str().unwrap().to_string();
        for (i, case) in doc["cases"].as_array().unwrap().iter().enumerate() {
            let name = case["name"].as_str().unwrap();
            let stage = case["stage"].as_str().unwrap_or_default();
            if case.get("skipReason").is_some() || !matches!(stage, "normalized" | "raw") {
                continue;
            }
            let gates = case["featureGates"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            if gates
                .iter()
                .any(|(g, on)| ALWAYS_ON.contains(&g.as_str()) && on == false)
            {
                continue;
            }
            let (scenario, expected, pod) = scenario_of(&plugin, case);
            let path = dir.join(format!(
                "{}-{i}.yaml",
                file.file_stem().unwrap().to_string_lossy()
            ));
            std::fs::write(&path, serde_json::to_string_pretty(&scenario).unwrap()).unwrap();
            let loaded = load_files(std::slice::from_ref(&path), &LoadOptions::default());
            let known = NOT_COMPARED.iter().find(|(n, _)| *n == name);
            if let Some(e) = loaded.errors.first() {
                let message = e.to_string();
                match case["expectedError"]["field"].as_str() {
                    // Upstream expects the plugin's args to be refused: the same field, as
                    // an invalid value.
                    Some(field) => {
                        assert!(
                            message.contains(&format!("args.{field}: Invalid value")),
                            "{name}: {message}"
                        );
                        refused += 1;
                    }
                    None if known.is_some() => {}
                    None => unexplained.push(format!("{name}: {message}")),
                }
                continue;
            }
            let ask = Ask {
                pods: vec![pod],
                all_nodes: true,
                ..Default::default()
            };
            let explained = explain(&loaded.scenarios[0], &ask).unwrap();
            let cycle = explained.pods[0].cycle.as_ref().unwrap();
            let got: serde_json::Map<String, Value> = (cycle.all_nodes.iter())
                .filter_map(|n| {
                    let s = n.scores.iter().find(|s| s.plugin == plugin)?;
                    Some((n.node.clone(), json!(s.normalized)))
                })
                .collect();
            let differs = (expected.iter()).any(|(node, score)| got.get(node) != Some(score));
            match (differs, known) {
                (false, None) => compared += 1,
                (true, Some(_)) => {}
                (false, Some(_)) => {
                    unexplained.push(format!("{name}: now compares; drop it from NOT_COMPARED"))
                }
                (true, None) => {
                    mismatches.push(format!("{name}: expected {expected:?}, got {got:?}"))
                }
            }
        }
    }
    assert!(mismatches.is_empty(), "{mismatches:#?}");
    assert!(unexplained.is_empty(), "{unexplained:#?}");
    assert!(compared >= 100, "{compared} cases compared");
    assert_eq!(refused, 4, "args refused as upstream expects");
}

/// The case as a scenario running only `plugin`'s Score, its expected scores by the node names
/// the scenario gives, and the scored pod's `namespace/name`.
fn scenario_of(plugin: &str, case: &Value) -> (Value, serde_json::Map<String, Value>, String) {
    // Namespaces with dots (upstream's "subteam1.team1") are no DNS labels.
    let text = case.to_string();
    let dotted = dashed_namespaces(&text);
    let mut case: Value = serde_json::from_str(&dotted).unwrap();
    let lower = |n: &str| n.to_lowercase();
    let mut nodes = case["nodes"].as_array().cloned().unwrap_or_default();
    for n in &mut nodes {
        let name = lower(n["metadata"]["name"].as_str().unwrap());
        n["metadata"]["name"] = json!(name);
    }
    let scored: Option<Vec<String>> = case["scored"]
        .as_array()
        .map(|s| s.iter().map(|n| lower(n.as_str().unwrap())).collect());
    if let Some(scored) = &scored {
        for n in &mut nodes {
            if !scored.contains(&n["metadata"]["name"].as_str().unwrap().to_string()) {
                let spec = n
                    .as_object_mut()
                    .unwrap()
                    .entry("spec")
                    .or_insert(json!({}));
                let taints = spec
                    .as_object_mut()
                    .unwrap()
                    .entry("taints")
                    .or_insert(json!([]));
                taints
                    .as_array_mut()
                    .unwrap()
                    .push(json!({"key": "harness/not-scored", "effect": "NoSchedule"}));
            }
        }
    }
    let mut existing = case["existingPods"].as_array().cloned().unwrap_or_default();
    for p in &mut existing {
        api_pod(p);
        if let Some(n) = p["spec"]["nodeName"].as_str().map(lower) {
            p["spec"]["nodeName"] = json!(n);
        }
    }
    let pod = &mut case["pod"];
    api_pod(pod);
    // The pod being scored is not bound (upstream's helpers sometimes set a node name).
    pod["spec"].as_object_mut().unwrap().remove("nodeName");
    let key = format!(
        "{}/{}",
        pod["metadata"]["namespace"].as_str().unwrap(),
        pod["metadata"]["name"].as_str().unwrap()
    );
    let mut profile = json!({
        "schedulerName": "default-scheduler",
        "plugins": {
            "preFilter": {"disabled": [{"name": "*"}]},
            "filter": {"disabled": [{"name": "*"}], "enabled": []},
            "score": {"disabled": [{"name": "*"}], "enabled": [{"name": plugin, "weight": 1}]},
        },
    });
    if scored.is_some() {
        profile["plugins"]["filter"]["enabled"] = json!([{"name": "TaintToleration"}]);
    }
    if !case["args"].is_null() {
        profile["pluginConfig"] = json!([{"name": plugin, "args": case["args"]}]);
    }
    let gates: serde_json::Map<String, Value> = (case["featureGates"].as_object().cloned())
        .unwrap_or_default()
        .into_iter()
        .filter(|(g, _)| !ALWAYS_ON.contains(&g.as_str()))
        .collect();
    let mut objects: Vec<Value> = Vec::new();
    for k in ["objects", "namespaces", "extraObjects"] {
        objects.extend(case[k].as_array().cloned().unwrap_or_default());
    }
    let scenario = json!({
        "apiVersion": "schedsim.io/v1alpha1",
        "kind": "Scenario",
        "metadata": {"name": "score-case"},
        "spec": {
            "scheduler": {
                "seed": 1,
                "featureGates": gates,
                "configuration": {
                    "apiVersion": "kubescheduler.config.k8s.io/v1",
                    "kind": "KubeSchedulerConfiguration",
                    "profiles": [profile],
                },
            },
            "nodes": nodes,
            "existingPods": existing,
            "objects": objects,
            "workloads": [case["pod"].clone()],
        },
    });
    let expected = (case["expected"]
        .as_object()
        .cloned()
        .unwrap_or_default()
        .into_iter())
    .map(|(n, s)| (lower(&n), s))
    .collect();
    (scenario, expected, key)
}

/// What the API server requires of a pod and Score does not read: a namespace, containers
/// with names and images (a pod without containers gets one with zero requests: no request
/// defaults apply), limits equal to the requests of extended resources, and a term's `""`
/// namespace written as the pod's (`default`).
fn api_pod(p: &mut Value) {
    let md = p
        .as_object_mut()
        .unwrap()
        .entry("metadata")
        .or_insert(json!({}));
    if md["namespace"].as_str().is_none_or(str::is_empty) {
        md["namespace"] = json!("default");
    }
    let spec = p
        .as_object_mut()
        .unwrap()
        .entry("spec")
        .or_insert(json!({}));
    let containers = spec
        .as_object_mut()
        .unwrap()
        .entry("containers")
        .or_insert(json!([]));
    if containers.as_array().unwrap().is_empty() {
        *containers =
            json!([{"name": "c", "resources": {"requests": {"cpu": "0", "memory": "0"}}}]);
    }
    for (j, c) in containers.as_array_mut().unwrap().iter_mut().enumerate() {
        let c = c.as_object_mut().unwrap();
        c.entry("name").or_insert(json!(format!("c{j}")));
        c.entry("image").or_insert(json!("registry.k8s.io/pause"));
        let requests = c.get("resources").and_then(|r| r.get("requests")).cloned();
        if let Some(Value::Object(requests)) = requests {
            let resources = c["resources"].as_object_mut().unwrap();
            let limits = resources.entry("limits").or_insert(json!({}));
            for (r, q) in requests {
                let extended = r.contains('/') && !r.starts_with("kubernetes.io/");
                if extended {
                    limits.as_object_mut().unwrap().entry(r).or_insert(q);
                }
            }
        }
    }
    namespaces_of_terms(p);
}

/// Pod (anti-)affinity terms' `namespaces: [""]` as upstream's tests write the pod's own.
fn namespaces_of_terms(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                if k == "namespaces"
                    && let Value::Array(list) = x
                {
                    for n in list.iter_mut().filter(|n| n.as_str() == Some("")) {
                        *n = json!("default");
                    }
                }
                namespaces_of_terms(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(namespaces_of_terms),
        _ => {}
    }
}

/// `subteamN.teamM` → `subteamN-teamM` in a case's JSON (upstream's namespace names).
fn dashed_namespaces(text: &str) -> String {
    let mut out = text.to_string();
    for a in 0..10 {
        for b in 0..10 {
            out = out.replace(
                &format!("subteam{a}.team{b}"),
                &format!("subteam{a}-team{b}"),
            );
        }
    }
    out
}
