//! `schedsim explain`: the explained cycle is the run's — the chosen node is where the run
//! placed the pod and has the best total, each total is the sum of its weighted parts — and
//! the text and "why not there" for a small scenario.

mod common;

use std::path::PathBuf;

use common::cli::ok;
use schedsim::explain::{Ask, explain};
use schedsim::load::{LoadOptions, load_files, scenario_files};
use schedsim::sched::PodPhase;
use schedsim::sched::explain::Verdict;

/// Every pod of every bundled scenario explained with every node listed: what the explained
/// run did is what `run` did, and the scores add up.
#[test]
fn explained_cycles_are_the_runs_own() {
    let files = scenario_files(&[PathBuf::from("scenarios")]).unwrap();
    let loaded = load_files(&files, &LoadOptions::default());
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let (mut scored, mut kueue_checked, mut preempting, mut devices_checked) = (0, 0, 0, 0);
    for scenario in &loaded.scenarios {
        let ask = Ask {
            pods: scenario.workloads.iter().map(|p| p.key()).collect(),
            top: 0,
            all_nodes: true,
            ..Default::default()
        };
        let explained = explain(scenario, &ask).unwrap();
        let report = schedsim::simulate(scenario);
        for p in &explained.pods {
            let run = (report.pods.iter())
                .find(|r| format!("{}/{}", r.namespace, r.name) == p.pod)
                .unwrap();
            // Recording changes nothing the run does.
            assert_eq!(
                (p.status, &p.node),
                (run.status, &run.node),
                "{}: {}",
                scenario.name,
                p.pod
            );
            assert_eq!(p.gang, run.gang, "{}: {}", scenario.name, p.pod);
            if p.gang.is_some() {
                let me = p.gang_members.iter().find(|m| m.pod == p.pod).unwrap();
                assert_eq!((me.status, &me.node), (p.status, &p.node));
            }
            if let (Some(k), Some(kr)) = (&p.kueue, &report.kueue) {
                kueue_checked += 1;
                let (ns, name) = k.workload.split_once('/').unwrap();
                let w = (kr.workloads.iter())
                    .find(|w| w.namespace == ns && w.name == name)
                    .unwrap();
                assert_eq!(k.admitted, w.admitted, "{}: {}", scenario.name, p.pod);
                assert_eq!(k.message, w.message, "{}: {}", scenario.name, p.pod);
                let preempted: Vec<&String> = k.preempted.iter().map(|v| &v.workload).collect();
                assert_eq!(preempted, w.preempted.iter().collect::<Vec<_>>());
                if w.admitted {
                    // The flavors explained are the admission's, resource by resource.
                    for (ps, wps) in k.pod_sets.iter().zip(&w.pod_sets) {
                        let flavors: std::collections::BTreeMap<String, String> =
                            (ps.flavors.iter())
                                .map(|f| (f.resource.clone(), f.flavor.clone()))
                                .collect();
                        assert_eq!(flavors, wps.flavors, "{}: {}", scenario.name, p.pod);
                    }
                }
            }
            let Some(c) = &p.cycle else { continue };
            // A pod placed by preemption: the candidate chosen is its node, and its victims
            // are those the run evicted.
            if let Some(pre) = c.preemption.as_ref().filter(|pre| !pre.earlier_cycle)
                && let Some(chosen) = &pre.chosen
            {
                preempting += 1;
                if let Some(node) = &run.node {
                    assert_eq!(chosen, node, "{}: {}", scenario.name, p.pod);
                }
                let picked = pre.candidates.iter().find(|c| c.lost_on.is_none()).unwrap();
                let mut victims: Vec<&String> = picked.victims.iter().map(|v| &v.pod).collect();
                let mut evicted: Vec<&String> = run.preempted.iter().collect();
                victims.sort();
                evicted.sort();
                assert_eq!(victims, evicted, "{}: {}", scenario.name, p.pod);
            }
            // The devices explained as picked are those the claim was allocated.
            for claim in &c.devices {
                let Some(held) = (report.dra_claims.iter())
                    .find(|r| format!("{}/{}", r.namespace, r.name) == claim.claim)
                else {
                    continue;
                };
                devices_checked += 1;
                let mut picked: Vec<&String> = (claim.requests.iter())
                    .filter(|r| r.used)
                    .flat_map(|r| &r.picked)
                    .collect();
                let mut allocated: Vec<&String> = held.devices.iter().collect();
                picked.sort();
                allocated.sort();
                assert_eq!(picked, allocated, "{}: {}", scenario.name, claim.claim);
            }
            for n in &c.all_nodes {
                if let Some(total) = n.total {
                    let sum: i64 = n.scores.iter().map(|s| s.weighted).sum();
                    assert_eq!(sum, total, "{}: {} on {}", scenario.name, p.pod, n.node);
                    assert_eq!(n.verdict, Verdict::Feasible);
                }
            }
            if p.status == PodPhase::Scheduled
                && let Some(best) = c.ranked.first()
            {
                scored += 1;
                let chosen = c.chosen.as_ref().unwrap();
                assert_eq!(
                    Some(chosen),
                    p.node.as_ref(),
                    "{}: {}",
                    scenario.name,
                    p.pod
                );
                let on_chosen = c.ranked.iter().find(|r| &r.node == chosen).unwrap();
                assert_eq!(on_chosen.total, best.total, "{}: {}", scenario.name, p.pod);
                assert!(c.tie.is_empty() || c.tie.contains(chosen));
            }
        }
    }
    assert!(scored > 50, "{scored} scored cycles checked");
    assert!(
        kueue_checked > 20,
        "{kueue_checked} Kueue workloads checked"
    );
    assert!(preempting >= 3, "{preempting} preemptions checked");
    assert!(
        devices_checked >= 10,
        "{devices_checked} DRA claims checked"
    );
}

/// The text for a pod, and "why not there": the node asked about beside the chosen one.
#[test]
fn why_not_there() {
    let out = ok(&[
        "explain",
        "scenarios/gangs.yaml",
        "--pod",
        "research/orphan-0",
        "--node",
        "h100-0",
        "--node",
        "h100-2",
        "--format",
        "table",
        "--out",
        common::cli::tempdir("explain-why").to_str().unwrap(),
    ]);
    insta::assert_snapshot!(out);
    assert!(out.contains("why not h100-0: total 480, rank 3; weighted parts here vs chosen: NodeResourcesFit 83 vs 87"), "{out}");
}

/// A pod held at its scheduling gates never reaches a Filter pass: it is listed with its
/// status and message, and no cycle.
#[test]
fn a_gated_pod_has_no_cycle() {
    let files = scenario_files(&[PathBuf::from(
        "scenarios/overrides-example-8-scheduling-gates.yaml",
    )])
    .unwrap();
    let loaded = load_files(&files, &LoadOptions::default());
    let ask = Ask {
        pending: true,
        top: 10,
        ..Default::default()
    };
    let explained = explain(&loaded.scenarios[0], &ask).unwrap();
    let gated: Vec<_> = (explained.pods.iter())
        .filter(|p| p.status == PodPhase::SchedulingGated)
        .collect();
    assert!(!gated.is_empty());
    for p in gated {
        assert!(p.cycle.is_none() && !p.message.is_empty(), "{}", p.pod);
    }
}

/// `--html`: a page per scenario and an index linking it, self-contained (no URL of any kind
/// is fetched), the chosen node's row marked.
#[test]
fn the_html_pages_are_self_contained() {
    let out = common::cli::tempdir("explain-html");
    ok(&[
        "explain",
        "scenarios/gangs.yaml",
        "--pod",
        "research/orphan-0",
        "--html",
        "--format",
        "json",
        "--out",
        out.to_str().unwrap(),
    ]);
    let index = std::fs::read_to_string(out.join("explain.html")).unwrap();
    assert!(
        index.contains("<a href=\"explain-gangs.html\">gangs</a>"),
        "{index}"
    );
    let page = std::fs::read_to_string(out.join("explain-gangs.html")).unwrap();
    assert!(page.contains("<h2>research/orphan-0</h2>"));
    assert_eq!(page.matches("<tr class=\"chosen\">").count(), 1);
    // Every part of an explanation, on pages of every bundled scenario: still nothing fetched.
    let all = common::cli::tempdir("explain-html-all");
    ok(&[
        "explain",
        "-l",
        "zzz notin (zzz)",
        "--html",
        "--node",
        "h100-node-0",
    ]
    .into_iter()
    .chain(["--format", "json", "--out", all.to_str().unwrap()])
    .collect::<Vec<_>>());
    let preemption = std::fs::read_to_string(all.join("explain-preemption.html")).unwrap();
    assert!(
        preemption.contains("lost on lowest highest victim priority"),
        "{preemption}"
    );
    let dra = std::fs::read_to_string(all.join("explain-dra-gpus-by-product.html")).unwrap();
    assert!(dra.contains("request selector is false"), "{dra}");
    for entry in std::fs::read_dir(&all).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "html") {
            let page = std::fs::read_to_string(&path).unwrap();
            for external in ["http://", "https://", "<link", "src="] {
                assert!(!page.contains(external), "{}: {external}", path.display());
            }
        }
    }
    for page in [&index, &page] {
        for external in ["http://", "https://", "<link", "src="] {
            assert!(!page.contains(external), "{external}");
        }
    }
}

/// `schema/explain.schema.json` is `schedsim schema explain`, and a real `explain.json`
/// (every node listed, a node compared) holds to it: each object's keys are the schema's, the
/// required ones present, each value of its type.
#[test]
fn explain_json_holds_to_its_schema() {
    let committed = std::fs::read_to_string("schema/explain.schema.json").unwrap();
    assert!(
        ok(&["schema", "explain"]) == committed,
        "schema/explain.schema.json is stale: run `cargo run -- schema explain > schema/explain.schema.json`"
    );
    let schema: serde_json::Value = serde_json::from_str(&committed).unwrap();
    let out = ok(&[
        "explain",
        "scenarios/gangs.yaml",
        "--pending",
        "--pod",
        "research/orphan-0",
        "--all-nodes",
        "--node",
        "h100-0",
        "--format",
        "json",
        "--out",
        common::cli::tempdir("explain-schema").to_str().unwrap(),
    ]);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mut problems = Vec::new();
    conforms(&schema, &schema, &report, "$", &mut problems);
    assert!(problems.is_empty(), "{problems:#?}");
}

/// The JSON Schema subset schemars writes: `$ref`, `type`, `properties`/`required`, `items`,
/// `oneOf`/`anyOf`, `enum`, `const`.
fn conforms(
    root: &serde_json::Value,
    s: &serde_json::Value,
    v: &serde_json::Value,
    at: &str,
    problems: &mut Vec<String>,
) {
    use serde_json::Value;
    if let Some(r) = s["$ref"].as_str() {
        let name = r.trim_start_matches("#/$defs/");
        return conforms(root, &root["$defs"][name], v, at, problems);
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(branches) = s[key].as_array() {
            let fits = branches.iter().any(|b| {
                let mut p = Vec::new();
                conforms(root, b, v, at, &mut p);
                p.is_empty()
            });
            if !fits {
                let mut first = Vec::new();
                conforms(root, &branches[0], v, at, &mut first);
                problems.push(format!("{at}: fits no branch of {key} ({first:?})"));
            }
            return;
        }
    }
    if let Some(options) = s["enum"].as_array()
        && !options.contains(v)
    {
        problems.push(format!("{at}: {v} not in {options:?}"));
    }
    if !s["const"].is_null() && &s["const"] != v {
        problems.push(format!("{at}: {v} is not {}", s["const"]));
    }
    let types: Vec<&str> = match &s["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(t) => t.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let fits = |t: &str| match t {
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "null" => v.is_null(),
        _ => true,
    };
    if !types.is_empty() && !types.iter().any(|t| fits(t)) {
        problems.push(format!("{at}: {v} is not {types:?}"));
        return;
    }
    if let Some(o) = v.as_object() {
        let props = s["properties"].as_object();
        for (k, x) in o {
            match props.and_then(|p| p.get(k)) {
                Some(ps) => conforms(root, ps, x, &format!("{at}.{k}"), problems),
                None if props.is_some() => problems.push(format!("{at}.{k}: not in the schema")),
                None => {}
            }
        }
        for r in s["required"].as_array().into_iter().flatten() {
            if !o.contains_key(r.as_str().unwrap()) {
                problems.push(format!("{at}: {r} missing"));
            }
        }
    }
    if let Some(a) = v.as_array() {
        for (i, x) in a.iter().enumerate() {
            conforms(root, &s["items"], x, &format!("{at}[{i}]"), problems);
        }
    }
}

/// `--selector` (`-l`) chooses pods by their labels as `kubectl -l` does; a bad one is an
/// input error before anything runs.
#[test]
fn pods_chosen_by_a_label_selector() {
    let dir = common::cli::tempdir("explain-selector");
    let out = ok(&[
        "explain",
        "scenarios/gangs.yaml",
        "-l",
        "scheduling.x-k8s.io/pod-group in (sweep)",
        "--format",
        "json",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    let pods: Vec<&str> = (report["scenarios"][0]["pods"].as_array().unwrap().iter())
        .map(|p| p["pod"].as_str().unwrap())
        .collect();
    assert_eq!(pods, ["research/sweep-0", "research/sweep-1"]);
    let o = common::cli::schedsim(&[
        "explain",
        "scenarios/gangs.yaml",
        "-l",
        "app in web",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("error: --selector \"app in web\": in takes a set")
    );
}

/// The text for one pod per Filter/Score plugin and per part of the explanation, on small
/// bundled scenarios: a snapshot each (review with `cargo insta review`); for a DRA pod that
/// fits nowhere, its devices on a node asked about.
#[test]
fn explain_snapshots_per_plugin() {
    let cases = [
        // NodeResourcesFit and BalancedAllocation: scored, then a pod short of memory.
        (
            "node-resources-fit",
            "resources-fit.yaml",
            "ml-research/llama-ft-worker-0",
        ),
        (
            "node-resources-fit-pending",
            "resources-fit.yaml",
            "data-prep/tokenizer-train-0",
        ),
        (
            "taint-toleration",
            "taints-tolerations.yaml",
            "team-vision/vit-eval-0",
        ),
        (
            "taint-prefer-no-schedule",
            "taints-tolerations.yaml",
            "ml-research/spot-ok-eval-0",
        ),
        (
            "node-affinity",
            "node-affinity.yaml",
            "ml-research/llama-ft-worker-0",
        ),
        (
            "node-affinity-node-names",
            "node-affinity.yaml",
            "gpu-ops/nccl-tests-a100-p4d-3",
        ),
        ("node-name", "node-name.yaml", "team-vision/clip-eval-1"),
        (
            "node-unschedulable",
            "node-unschedulable.yaml",
            "data-prep/tokenize-shard-3",
        ),
        (
            "pod-topology-spread",
            "topology-spread.yaml",
            "vision/resnet-spread-node-0-3",
        ),
        (
            "inter-pod-affinity",
            "inter-pod-affinity.yaml",
            "vision/resnet-trainer-1",
        ),
        (
            "scheduling-gates",
            "scheduling-gates.yaml",
            "ml-research/llama3-70b-sft-worker-0",
        ),
        (
            "preemption",
            "preemption.yaml",
            "ml-research/llama3-pretrain-worker-0",
        ),
        (
            "preemption-not-eligible",
            "preemption.yaml",
            "ml-research/llama3-pretrain-worker-1",
        ),
        ("gang", "gangs.yaml", "ml/llm-pretrain-node-0-0"),
        (
            "kueue-flavors",
            "kueue-gpu-flavors.yaml",
            "team-a/llama-b-node-0-0",
        ),
        (
            "kueue-pending",
            "kueue-cohort-borrowing.yaml",
            "team-a/train-4",
        ),
        (
            "inter-pod-affinity-pre-score",
            "inter-pod-affinity.yaml",
            "vision/debug-shell-0",
        ),
        (
            "kueue-preemption",
            "kueue-preemption.yaml",
            "production/llm-finetune-node-0-0",
        ),
        (
            "dynamic-resources",
            "dra-shared-claim-and-mig.yaml",
            "team-a/pair",
        ),
        (
            "dynamic-resources-why-not",
            "dra-gpus-by-product.yaml",
            "ml/train-160gb",
        ),
        (
            "dynamic-resources-would-pick",
            "dra-partitionable-gpus.yaml",
            "ml/trainer-0",
        ),
        (
            "gpu-share-fgd",
            "gpu-sharing-fgd.yaml",
            "research/notebook-0",
        ),
    ];
    let out_dir = common::cli::tempdir("explain-snapshots");
    for (name, file, pod) in cases {
        let path = format!("scenarios/{file}");
        let mut args = vec!["explain", &path, "--pod", pod, "--format", "table"];
        args.extend(["--out", out_dir.to_str().unwrap()]);
        // Nodes set beside the chosen one, for the DRA cases.
        match name {
            "dynamic-resources-why-not" => args.extend(["--node", "h100-node-0"]),
            "dynamic-resources-would-pick" => args.extend(["--node", "gpu-node-1"]),
            _ => {}
        }
        let out = ok(&args);
        assert!(out.contains(&format!("Pod {pod}:")), "{name}: {out}");
        insta::assert_snapshot!(name, out);
    }
}

/// A replay's pods come from its trace: explain leaves it out and says so, rather than
/// printing that it has no pod to explain.
#[test]
fn a_replay_is_left_out_with_a_warning() {
    let out_dir = common::cli::tempdir("explain-replay");
    let out = common::cli::schedsim(&[
        "explain",
        "scenarios/replay/openb-default.yaml",
        "--format",
        "table",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("replays a trace over time"), "{stderr}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains("openb-default-replay"));
}

/// Records that grow with pods × nodes are refused up front, naming the limit and how to
/// raise it; within the limit the same request runs.
#[test]
fn explanations_past_the_limits_are_refused_up_front() {
    let out_dir = common::cli::tempdir("explain-limits");
    let run = |env: (&str, &str), extra: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_schedsim"))
            .args(["explain", "scenarios/gangs.yaml", "-l", "zzz notin (zzz)"])
            .args(extra)
            .args(["--format", "json", "--out", out_dir.to_str().unwrap()])
            .env(env.0, env.1)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .unwrap()
    };
    // gangs: 4 nodes; the selector takes every workload pod.
    let o = run(("SCHEDSIM_MAX_EXPLAIN_NODE_LINES", "10"), &["--all-nodes"]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("nodes exceeds schedsim's limit of 10 node lines in one explain --all-nodes (pods explained × nodes) (raise it with the environment variable SCHEDSIM_MAX_EXPLAIN_NODE_LINES=N)"),
        "{stderr}"
    );
    // Without --all-nodes that limit does not apply; the verdicts' does.
    assert!(
        run(("SCHEDSIM_MAX_EXPLAIN_NODE_LINES", "10"), &[])
            .status
            .success()
    );
    let o = run(("SCHEDSIM_MAX_EXPLAIN_VERDICTS", "10"), &[]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("SCHEDSIM_MAX_EXPLAIN_VERDICTS=N"),
        "{stderr}"
    );
}

/// A node asked about that no scenario has is said, not silently left out.
#[test]
fn an_unknown_node_is_warned_about() {
    let out_dir = common::cli::tempdir("explain-unknown-node");
    let out = common::cli::schedsim(&[
        "explain",
        "scenarios/gangs.yaml",
        "--pod",
        "research/orphan-0",
        "--node",
        "h100-9",
        "--node",
        "h100-0",
        "--format",
        "json",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("no node \"h100-9\" in the scenarios"),
        "{stderr}"
    );
    assert!(!stderr.contains("h100-0"), "{stderr}");
}

/// A terminal gets the first pods and the file with them all; the file has every pod.
#[test]
fn a_terminal_gets_the_first_pods_and_the_file_with_all() {
    let files = scenario_files(&[PathBuf::from("scenarios/gangs.yaml")]).unwrap();
    let loaded = load_files(&files, &LoadOptions::default());
    let scenario = &loaded.scenarios[0];
    let ask = Ask {
        pods: scenario.workloads.iter().map(|p| p.key()).collect(),
        top: 3,
        ..Default::default()
    };
    let report = schedsim::explain::ExplainReport {
        schema_version: schedsim::explain::report::SCHEMA_VERSION,
        scenarios: vec![explain(scenario, &ask).unwrap()],
    };
    let total = report.scenarios[0].pods.len();
    let shown = schedsim::explain::report::TERMINAL_PODS;
    assert!(total > shown, "{total} pods");
    let summary = schedsim::explain::report::render_summary(&report, "reports/explain.txt");
    assert_eq!(summary.matches("\nPod ").count(), shown);
    assert!(summary.ends_with(&format!(
        "… {} more pod(s) (of {total}): every pod is in reports/explain.txt\n",
        total - shown
    )));
    let full = schedsim::explain::report::render(&report);
    assert_eq!(full.matches("\nPod ").count(), total);
    assert!(!full.contains("more pod(s)"));
}
