//! Inputs as users have them, at cluster size: `kubectl get nodes -o yaml|json` dumps with
//! everything kubectl prints, multi-document files past 1,024 documents, templates reused
//! through anchors and aliases, and the product's limits with their messages.

mod common;

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::cli::{schedsim, tempdir};
use schedsim::load::{LoadOptions, load_files, scenario_files};
use serde_json::{Value, json};

/// One node as `kubectl get node -o json` prints it: managedFields, conditions, images and
/// nodeInfo included (schedsim reads none of them).
fn kubectl_node(i: usize) -> Value {
    let name = format!("a100-{i:05}");
    let zone = ["us-east-1a", "us-east-1b"][i % 2];
    let images: Vec<Value> = (0..20)
        .map(|j| json!({"names": [format!("nvcr.io/nvidia/img{j}@sha256:{:064}", j), format!("nvcr.io/nvidia/img{j}:v{j}")], "sizeBytes": 1_000_000 + j}))
        .collect();
    let conditions: Vec<Value> = ["MemoryPressure", "DiskPressure", "PIDPressure", "Ready"]
        .iter()
        .map(|t| json!({"type": t, "status": if *t == "Ready" {"True"} else {"False"}, "lastHeartbeatTime": "2026-11-01T00:00:00Z", "lastTransitionTime": "2026-10-01T00:00:00Z", "reason": "KubeletReady", "message": "kubelet is posting ready status"}))
        .collect();
    let managed: Vec<Value> = ["kubelet", "kube-controller-manager", "nfd-master", "gpu-feature-discovery"]
        .iter()
        .map(|m| json!({"apiVersion": "v1", "fieldsType": "FieldsV1", "manager": m, "operation": "Update", "time": "2026-11-01T00:00:00Z",
            "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:nvidia.com/gpu.product": {}}}, "f:status": {"f:allocatable": {"f:nvidia.com/gpu": {}}}}}))
        .collect();
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
            "creationTimestamp": "2026-10-01T00:00:00Z",
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "node.kubernetes.io/instance-type": "p4d.24xlarge",
                "topology.kubernetes.io/zone": zone,
                "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB",
                "nvidia.com/gpu.count": "8",
                "feature.node.kubernetes.io/pci-10de.present": "true"
            },
            "managedFields": managed,
            "name": name,
            "resourceVersion": (100_000 + i).to_string(),
            "uid": format!("8f1c2d3e-0000-4000-8000-{i:012}")
        },
        "spec": {"podCIDR": "10.0.1.0/24", "providerID": format!("aws:///us-east-1a/i-{i:017}"),
                 "taints": [{"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "true"}]},
        "status": {
            "addresses": [{"address": "10.0.1.5", "type": "InternalIP"}, {"address": name, "type": "Hostname"}],
            "allocatable": {"cpu": "95690m", "memory": "1100Gi", "nvidia.com/gpu": "8", "pods": "110"},
            "capacity": {"cpu": "96", "memory": "1152Gi", "nvidia.com/gpu": "8", "pods": "110"},
            "conditions": conditions,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": images,
            "nodeInfo": {"architecture": "amd64", "kubeletVersion": "v1.34.1", "osImage": "Amazon Linux 2023"}
        }
    })
}

/// A `kind: List` of `n` nodes, as `kubectl get nodes -o json` prints it.
fn node_list(n: usize) -> Value {
    json!({"apiVersion": "v1", "items": (0..n).map(kubectl_node).collect::<Vec<_>>(), "kind": "List", "metadata": {"resourceVersion": ""}})
}

/// JSON → block YAML as kubectl prints it (keys as they come, lists not indented).
fn to_yaml(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                match v {
                    Value::Object(c) if !c.is_empty() => {
                        let _ = writeln!(out, "{pad}{k}:");
                        to_yaml(v, indent + 2, out);
                    }
                    Value::Array(a) if !a.is_empty() => {
                        let _ = writeln!(out, "{pad}{k}:");
                        to_yaml(v, indent, out);
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}{k}: {}", scalar(v));
                    }
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                let mut inner = String::new();
                to_yaml(item, indent + 2, &mut inner);
                let trimmed = inner.trim_start();
                if item.is_object() || item.is_array() {
                    let _ = write!(out, "{pad}- {trimmed}");
                } else {
                    let _ = writeln!(out, "{pad}- {}", scalar(item));
                }
            }
        }
        other => {
            let _ = writeln!(out, "{pad}{}", scalar(other));
        }
    }
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
        other => other.to_string(),
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

const SCENARIO_HEAD: &str =
    "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: big}\nspec:\n";

/// Loads the one scenario of `file`, failing with every error.
fn load_one(file: &Path) -> schedsim::load::Scenario {
    let mut loaded = load_files(&[file.to_path_buf()], &LoadOptions::default());
    let errors: Vec<String> = loaded.errors.iter().map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    loaded.scenarios.remove(0)
}

#[test]
fn kubectl_dumps_of_two_thousand_nodes_load_as_yaml_and_json() {
    let dir = tempdir("dumps");
    let list = node_list(2000);
    let mut yaml = String::new();
    to_yaml(&list, 0, &mut yaml);
    assert!(yaml.lines().count() > 2000 * 100, "a real-looking dump");
    write(&dir, "nodes.yaml", &yaml);
    write(
        &dir,
        "nodes.json",
        &serde_json::to_string_pretty(&list).unwrap(),
    );
    let pods = "apiVersion: v1\nkind: Pod\nmetadata: {name: train, namespace: ml}\nspec:\n  nodeSelector: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-40GB}\n  tolerations: [{key: nvidia.com/gpu, operator: Exists}]\n  containers: [{name: c, image: i, resources: {limits: {nvidia.com/gpu: 8}}}]\n";
    write(&dir, "pod.yaml", pods);
    for dump in ["nodes.yaml", "nodes.json"] {
        let file = write(
            &dir,
            &format!("{dump}.scenario.yaml"),
            &format!(
                "{SCENARIO_HEAD}  nodes: [{{file: {dump}}}]\n  workloads: [{{file: pod.yaml}}]\n"
            ),
        );
        let s = load_one(&file);
        assert_eq!(s.nodes.len(), 2000, "{dump}");
        let n = &s.nodes[1999];
        assert_eq!(n.name, "a100-01999");
        assert_eq!(n.allocatable.get("nvidia.com/gpu"), Some(&8));
        assert_eq!(n.allocatable.get("cpu"), Some(&95_690));
        assert_eq!(n.taints.len(), 1);
        assert_eq!(n.labels["topology.kubernetes.io/zone"], "us-east-1b");
        let report = schedsim::simulate(&s);
        assert_eq!(
            report.pods[0].status,
            schedsim::sched::PodPhase::Scheduled,
            "{dump}"
        );
    }
}

#[test]
fn errors_inside_a_big_dump_name_line_column_and_field() {
    let dir = tempdir("dump-error");
    let mut list = node_list(300);
    list["items"][250]["status"]["allocatable"]["memory"] = json!("lots");
    let mut yaml = String::new();
    to_yaml(&list, 0, &mut yaml);
    write(&dir, "nodes.yaml", &yaml);
    write(
        &dir,
        "nodes.json",
        &serde_json::to_string_pretty(&list).unwrap(),
    );
    for dump in ["nodes.yaml", "nodes.json"] {
        let file = write(
            &dir,
            "s.yaml",
            &format!("{SCENARIO_HEAD}  nodes: [{{file: {dump}}}]\n"),
        );
        let loaded = load_files(&[file], &LoadOptions::default());
        let text = std::fs::read_to_string(dir.join(dump)).unwrap();
        let line = text
            .lines()
            .position(|l| l.contains("\"lots\""))
            .map(|i| i as u32 + 1)
            .unwrap();
        let e = &loaded.errors[0];
        assert_eq!(e.position.map(|p| p.line), Some(line), "{dump}: {e}");
        assert_eq!(
            e.field.as_deref(),
            Some("items[250].status.allocatable.memory"),
            "{dump}: {e}"
        );
    }
}

#[test]
fn multi_document_files_past_1024_documents_load() {
    let dir = tempdir("documents");
    let mut pods = String::new();
    for i in 0..1500 {
        let _ = write!(
            pods,
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p-{i:04}\n  namespace: ml\nspec:\n  containers:\n  - name: c\n    image: i\n    resources:\n      requests: {{cpu: 10m}}\n"
        );
    }
    write(&dir, "pods.yaml", &pods);
    let file = write(
        &dir,
        "s.yaml",
        &format!(
            "{SCENARIO_HEAD}  nodes: [{{pool: {{count: 2, namePrefix: n-, template: {{status: {{allocatable: {{cpu: '64', memory: 256Gi, pods: '1000'}}}}}}}}}}]\n  workloads: [{{file: pods.yaml}}]\n"
        ),
    );
    let s = load_one(&file);
    assert_eq!(s.workloads.len(), 1500);
    assert_eq!(s.workloads[1499].name, "p-1499");
}

#[test]
fn anchors_aliases_and_merge_keys_reuse_templates() {
    let dir = tempdir("anchors");
    let mut pods = String::from("apiVersion: v1\nkind: List\nitems:\n");
    for t in 0..40 {
        let _ = write!(
            pods,
            "- &pod{t}\n  apiVersion: v1\n  kind: Pod\n  metadata: &meta{t}\n    name: t{t}-0\n    namespace: ml\n    labels: &labels{t} {{template: t{t}}}\n  spec: &spec{t}\n    containers:\n    - name: c\n      image: i\n      resources: {{requests: {{cpu: 10m}}}}\n"
        );
    }
    for i in 1..100 {
        for t in 0..40 {
            let _ = write!(
                pods,
                "- apiVersion: v1\n  kind: Pod\n  metadata:\n    <<: *meta{t}\n    name: t{t}-{i}\n  spec: *spec{t}\n"
            );
        }
    }
    assert!(pods.matches('*').count() >= 3960, "thousands of aliases");
    write(&dir, "pods.yaml", &pods);
    let file = write(
        &dir,
        "s.yaml",
        &format!(
            "{SCENARIO_HEAD}  nodes: [{{pool: {{count: 2, namePrefix: n-, template: {{status: {{allocatable: {{cpu: '64', memory: 256Gi, pods: '5000'}}}}}}}}}}]\n  workloads: [{{file: pods.yaml}}]\n"
        ),
    );
    let s = load_one(&file);
    assert_eq!(s.workloads.len(), 4000);
    let p = s.workloads.iter().find(|p| p.name == "t7-42").unwrap();
    assert_eq!(p.namespace, "ml", "merged from the anchor");
    assert_eq!(p.labels["template"], "t7");
    assert_eq!(p.requests.get("cpu"), Some(&10));
}

/// Runs schedsim with a limit lowered through its environment variable.
fn run_with(env: (&str, &str), args: &[&str]) -> (i32, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_schedsim"))
        .args(args)
        .env(env.0, env.1)
        .output()
        .unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn an_alias_bomb_stops_at_the_expansion_limit() {
    let dir = tempdir("bomb");
    let mut bomb = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for k in 1..12 {
        let refs = vec![format!("*a{}", k - 1); 9].join(", ");
        let _ = writeln!(bomb, "a{k}: &a{k} [{refs}]");
    }
    let file = write(
        &dir,
        "s.yaml",
        &format!("{SCENARIO_HEAD}  nodes: []\n  description: x\n{bomb}"),
    );
    let o = schedsim(&[
        "run",
        file.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains("limit of 10000000 values copied by YAML aliases in one file")
            && err.contains("SCHEDSIM_MAX_ALIAS_EXPANSION=N")
            && err.contains("s.yaml:"),
        "{err}"
    );
}

#[test]
fn limits_name_themselves_the_file_and_how_to_raise_them() {
    let dir = tempdir("limits");
    let mut docs = String::new();
    for i in 0..30 {
        let _ = write!(
            docs,
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p{i}}}\nspec: {{containers: [{{name: c, image: i}}]}}\n"
        );
    }
    write(&dir, "pods.yaml", &docs);
    let file = write(
        &dir,
        "s.yaml",
        &format!(
            "{SCENARIO_HEAD}  nodes: [{{pool: {{count: 20, namePrefix: n-, template: {{status: {{allocatable: {{pods: '10'}}}}}}}}}}]\n  workloads: [{{file: pods.yaml}}]\n"
        ),
    );
    let path = file.to_str().unwrap();
    let out = dir.to_str().unwrap();
    let (code, err) = run_with(
        ("SCHEDSIM_MAX_DOCUMENTS", "25"),
        &["run", path, "--out", out],
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("pods.yaml:")
            && err.contains("document 26 exceeds schedsim's limit of 25 documents in one file (raise it with the environment variable SCHEDSIM_MAX_DOCUMENTS=N)"),
        "{err}"
    );
    let (code, err) = run_with(("SCHEDSIM_MAX_NODES", "10"), &["run", path, "--out", out]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("spec.nodes[0].pool.count: a pool of 20 nodes exceeds schedsim's limit of 10 nodes in one scenario"),
        "{err}"
    );
    let (code, err) = run_with(
        ("SCHEDSIM_MAX_FILE_BYTES", "100"),
        &["run", path, "--out", out],
    );
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("SCHEDSIM_MAX_FILE_BYTES=N"), "{err}");
}

#[test]
fn folders_find_scenarios_in_any_yaml_or_json_spelling() {
    let dir = tempdir("folder-scan");
    let body = r#"{"apiVersion": "schedsim.io/v1alpha1", "kind": "Scenario", "metadata": {"name": "NAME"}, "spec": {"nodes": []}}"#;
    write(&dir, "a.json", &body.replace("NAME", "from-json"));
    write(
        &dir,
        "b.yaml",
        "\"apiVersion\": schedsim.io/v1alpha1\n\"kind\": \"Scenario\"\n\"metadata\": {\"name\": quoted}\n\"spec\": {\"nodes\": []}\n",
    );
    write(
        &dir,
        "c.yaml",
        "apiVersion: v1\nkind: Node\nmetadata: {name: not-a-scenario}\n",
    );
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&dir, dir.join("sub/loop")).unwrap();
    let files = scenario_files(std::slice::from_ref(&dir)).unwrap();
    let names: Vec<_> = files
        .iter()
        .map(|f| f.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, ["a.json", "b.yaml"]);
}

#[test]
fn no_scenario_under_the_paths_is_an_input_error() {
    let dir = tempdir("empty");
    let o = schedsim(&["run", dir.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(dir.to_str().unwrap()) && err.contains("no Scenario document"),
        "{err}"
    );
    std::fs::write(
        dir.join("nodes.yaml"),
        "apiVersion: v1\nkind: Node\nmetadata: {name: n}\n",
    )
    .unwrap();
    let o = schedsim(&["run", dir.to_str().unwrap(), "--out", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_terminal_gets_a_summary_and_the_file_every_row() {
    let dir = tempdir("summary");
    let mut pods = String::new();
    for i in 0..30 {
        let _ = write!(
            pods,
            "---\napiVersion: v1\nkind: Pod\nmetadata: {{name: p, namespace: team-{i:02}}}\nspec: {{containers: [{{name: c, image: i}}]}}\n"
        );
    }
    write(&dir, "pods.yaml", &pods);
    let file = write(
        &dir,
        "s.yaml",
        &format!(
            "{SCENARIO_HEAD}  nodes: [{{pool: {{count: 1, namePrefix: n-, template: {{status: {{allocatable: {{pods: '100'}}}}}}}}}}]\n  workloads: [{{file: pods.yaml}}]\n"
        ),
    );
    let s = load_one(&file);
    let report = schedsim::report::RunReport::new(vec![schedsim::simulate(&s)]);
    let full = schedsim::report::table::render(&report);
    let summary = schedsim::report::table::render_summary(&report, "reports/run.txt");
    assert!(full.contains("team-29") && !full.contains("more pod groups"));
    assert!(
        summary.contains("team-19") && !summary.contains("team-20"),
        "{summary}"
    );
    assert!(
        summary.contains("… 10 more pod groups (of 30): the full table is in reports/run.txt"),
        "{summary}"
    );
}

/// Where each pod of a scenario report went.
fn placements(s: &schedsim::report::ScenarioReport) -> Vec<(String, Option<String>)> {
    s.pods
        .iter()
        .map(|p| (p.name.clone(), p.node.clone()))
        .collect()
}

#[test]
fn generated_files_all_describe_the_bench_cluster() {
    let dir = tempdir("generate");
    let o = schedsim(&[
        "generate",
        "--nodes",
        "60",
        "--pods",
        "150",
        "--kueue-jobs",
        "40",
        "--kueue-queues",
        "4",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let mut files = scenario_files(std::slice::from_ref(&dir)).unwrap();
    // The Kueue benchmark: the same nodes, TrainJobs through ClusterQueues.
    let kueue = files
        .iter()
        .position(|f| f.ends_with("kueue-scenario.yaml"))
        .expect("kueue-scenario.yaml");
    let kueue = load_one(&files.remove(kueue));
    assert_eq!(kueue.nodes.len(), 60);
    let k = kueue.kueue.as_ref().expect("Kueue objects");
    assert_eq!((k.workloads.len(), k.admission.queues.len()), (40, 4));
    let admitted = (k.admission.decisions.iter())
        .filter(|d| d.admitted.is_some())
        .count();
    assert!(admitted > 0 && admitted < 40, "{admitted} of 40 admitted");
    assert_eq!(files.len(), 5, "{files:?}");
    let mut reports = Vec::new();
    for f in &files {
        let s = load_one(f);
        assert_eq!(
            (s.nodes.len(), s.workloads.len()),
            (60, 150),
            "{}",
            f.display()
        );
        reports.push(schedsim::simulate(&s));
    }
    let one_file = placements(
        &reports[files
            .iter()
            .position(|f| f.ends_with("scenario.yaml"))
            .unwrap()],
    );
    for (f, r) in files.iter().zip(&reports) {
        assert_eq!(
            placements(r),
            one_file,
            "{} places as the one-file scenario",
            f.display()
        );
    }
    // The same cluster scheduled in memory, as `schedsim bench` does.
    let cluster = schedsim::generate::Cluster::new(60, 150, 20, 1);
    let config = schedsim::sched::SchedulerConfig {
        seed: 1,
        ..Default::default()
    };
    let steps = schedsim::sched::plan::in_order(cluster.pods.len());
    let outcome =
        schedsim::sched::schedule_plan(cluster.nodes.clone(), &[], &cluster.pods, &steps, &config);
    let in_memory: Vec<(String, Option<String>)> = cluster
        .pods
        .iter()
        .zip(&outcome.pods)
        .map(|(p, o)| {
            (
                p.name.clone(),
                o.node.map(|n| outcome.cluster.nodes[n].name.clone()),
            )
        })
        .collect();
    assert_eq!(one_file, in_memory);
    let dump = std::fs::read_to_string(dir.join("nodes.yaml")).unwrap();
    assert!(dump.contains("managedFields:") && dump.contains("images:"));
    assert!(
        dump.lines().count() / 60 > 180,
        "kubectl's ~210 lines per node"
    );
    let anchors = std::fs::read_to_string(dir.join("pods-anchors.yaml")).unwrap();
    assert!(anchors.contains("<<: *meta_") && anchors.contains("spec: *spec_"));
    let documents = std::fs::read_to_string(dir.join("pods-documents.yaml")).unwrap();
    assert_eq!(documents.matches("---\n").count(), 150);
    // Same seed, same bytes.
    let again = tempdir("generate-again");
    schedsim(&[
        "generate",
        "--nodes",
        "60",
        "--pods",
        "150",
        "--kueue-jobs",
        "40",
        "--kueue-queues",
        "4",
        "--out",
        again.to_str().unwrap(),
    ]);
    for f in [
        "scenario.yaml",
        "nodes.json",
        "pods-anchors.yaml",
        "kueue-scenario.yaml",
    ] {
        assert_eq!(
            std::fs::read(dir.join(f)).unwrap(),
            std::fs::read(again.join(f)).unwrap(),
            "{f}"
        );
    }
}
