//! Cluster-sized input files, as users have them: the synthetic cluster of `schedsim bench`
//! written out as one Scenario file, as `kubectl get nodes -o yaml|json` dumps with
//! everything kubectl prints, and as pod files (a List, one document per pod, or templates
//! reused through YAML anchors). Every whole-process figure in the README is measured on
//! these files, so anyone can reproduce it with one command. `dra` writes the DRA benchmark
//! scenario (`--dra`), `trace` the synthetic replay trace (`--trace`).

mod dra;
pub mod trace;

use std::fmt::Write as _;
use std::io::{self, Write};
use std::path::Path;

use serde_json::{Map, Value, json};

use crate::model::resources::{self, ResourceList};
use crate::model::{Node, Pod};

pub use dra::{dra_scenario_yaml, write_dra_scenario};

/// A resource list as Kubernetes writes quantities (`95690m`, bytes, counts).
fn quantities(list: &ResourceList) -> Value {
    let mut out = Map::new();
    for (name, v) in list {
        let q = if name == resources::CPU {
            if v % 1000 == 0 {
                (v / 1000).to_string()
            } else {
                format!("{v}m")
            }
        } else if name == resources::MEMORY && v % (1 << 30) == 0 {
            format!("{}Gi", v >> 30)
        } else {
            v.to_string()
        };
        out.insert(name.clone(), Value::String(q));
    }
    Value::Object(out)
}

/// A node in the short form people write by hand.
pub fn node_object(n: &Node) -> Value {
    let mut v = json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": n.name, "labels": n.labels},
        "status": {"allocatable": quantities(&n.allocatable)},
    });
    if !n.taints.is_empty() {
        v["spec"] = json!({"taints": n.taints});
    }
    v
}

/// A node as `kubectl get node -o yaml` prints it: uid, annotations, Node Feature Discovery
/// and GPU Feature Discovery labels, managedFields, addresses, capacity, conditions, images
/// and nodeInfo — about 210 lines of YAML, most of which the simulation never reads.
pub fn kubectl_node(n: &Node, i: usize) -> Value {
    let mut labels = n.labels.clone();
    let gpu = n.allocatable.get("nvidia.com/gpu").copied().unwrap_or(0);
    for (k, v) in [
        ("beta.kubernetes.io/arch", "amd64"),
        ("beta.kubernetes.io/os", "linux"),
        ("kubernetes.io/arch", "amd64"),
        ("kubernetes.io/os", "linux"),
        ("topology.kubernetes.io/region", "us-east-1"),
        ("feature.node.kubernetes.io/cpu-cpuid.AVX512F", "true"),
        (
            "feature.node.kubernetes.io/cpu-hardware_multithreading",
            "true",
        ),
        ("feature.node.kubernetes.io/kernel-version.major", "6"),
        ("feature.node.kubernetes.io/system-os_release.ID", "amzn"),
        (
            "feature.node.kubernetes.io/storage-nonrotationaldisk",
            "true",
        ),
    ] {
        labels.insert(k.into(), v.into());
    }
    if gpu > 0 {
        for (k, v) in [
            ("feature.node.kubernetes.io/pci-10de.present", "true"),
            ("nvidia.com/cuda.driver.major", "550"),
            ("nvidia.com/cuda.driver.minor", "90"),
            ("nvidia.com/cuda.runtime.major", "12"),
            ("nvidia.com/gfd.timestamp", "1732406400"),
            ("nvidia.com/gpu.compute.major", "8"),
            ("nvidia.com/gpu.deploy.device-plugin", "true"),
            ("nvidia.com/gpu.present", "true"),
            ("nvidia.com/mig.capable", "false"),
        ] {
            labels.insert(k.into(), v.into());
        }
    }
    let mut capacity = n.allocatable.clone();
    if let Some(cpu) = capacity.get_mut(resources::CPU) {
        *cpu = (*cpu + 999) / 1000 * 1000;
    }
    let managed = |manager: &str, fields: Value| {
        json!({"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": fields,
               "manager": manager, "operation": "Update", "time": "2026-11-01T08:00:00Z"})
    };
    let label_fields: Map<String, Value> = n
        .labels
        .keys()
        .map(|k| (format!("f:{k}"), json!({})))
        .collect();
    let images: Vec<Value> = (0..20)
        .map(|j| {
            json!({"names": [format!("registry.example.com/ml/image-{j}@sha256:{:064x}", i * 31 + j),
                             format!("registry.example.com/ml/image-{j}:v1.{j}")],
                   "sizeBytes": 100_000_000 + j * 7_340_033})
        })
        .collect();
    let condition = |kind: &str, status: &str, reason: &str, message: &str| {
        json!({"lastHeartbeatTime": "2026-11-24T08:00:00Z", "lastTransitionTime": "2026-11-01T08:00:00Z",
               "message": message, "reason": reason, "status": status, "type": kind})
    };
    let mut spec = json!({
        "podCIDR": format!("10.{}.{}.0/24", i / 256 % 256, i % 256),
        "podCIDRs": [format!("10.{}.{}.0/24", i / 256 % 256, i % 256)],
        "providerID": format!("aws:///us-east-1a/i-{:017x}", i * 7919),
    });
    if !n.taints.is_empty() {
        spec["taints"] = json!(n.taints);
    }
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {
                "alpha.kubernetes.io/provided-node-ip": format!("10.0.{}.{}", i / 256 % 256, i % 256),
                "csi.volume.kubernetes.io/nodeid": format!("{{\"ebs.csi.aws.com\":\"i-{:017x}\"}}", i * 7919),
                "nfd.node.kubernetes.io/feature-labels": "cpu-cpuid.AVX512F,cpu-hardware_multithreading,kernel-version.major",
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true"
            },
            "creationTimestamp": "2026-11-01T08:00:00Z",
            "labels": labels,
            "managedFields": [
                managed("kubelet", json!({"f:metadata": {"f:annotations": {".": {}, "f:node.alpha.kubernetes.io/ttl": {}, "f:volumes.kubernetes.io/controller-managed-attach-detach": {}}, "f:labels": Value::Object(label_fields.clone())}, "f:spec": {"f:providerID": {}}})),
                managed("kube-controller-manager", json!({"f:spec": {"f:podCIDR": {}, "f:podCIDRs": {".": {}, "v:\"10.0.0.0/24\"": {}}, "f:taints": {}}})),
                managed("nfd-master", json!({"f:metadata": {"f:annotations": {"f:nfd.node.kubernetes.io/feature-labels": {}}, "f:labels": Value::Object(label_fields)}})),
                managed("kubelet-status", json!({"f:status": {"f:allocatable": {"f:cpu": {}, "f:memory": {}, "f:pods": {}}, "f:capacity": {"f:cpu": {}, "f:memory": {}}, "f:conditions": {"k:{\"type\":\"Ready\"}": {"f:lastHeartbeatTime": {}, "f:status": {}}}, "f:images": {}, "f:nodeInfo": {"f:bootID": {}}}})),
            ],
            "name": n.name,
            "resourceVersion": (4_000_000 + i).to_string(),
            "uid": format!("{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}", i * 2_654_435_761 % (1 << 32), i % 65536, i % 4096, (i * 7) % 4096, i * 104_729),
        },
        "spec": spec,
        "status": {
            "addresses": [
                {"address": format!("10.0.{}.{}", i / 256 % 256, i % 256), "type": "InternalIP"},
                {"address": format!("ip-10-0-{}-{}.ec2.internal", i / 256 % 256, i % 256), "type": "InternalDNS"},
                {"address": format!("ip-10-0-{}-{}.ec2.internal", i / 256 % 256, i % 256), "type": "Hostname"}
            ],
            "allocatable": quantities(&n.allocatable),
            "capacity": quantities(&capacity),
            "conditions": [
                condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "images": images,
            "nodeInfo": {
                "architecture": "amd64", "bootID": format!("{:032x}", i * 6151), "containerRuntimeVersion": "containerd://1.7.22",
                "kernelVersion": "6.1.112-124.190.amzn2023.x86_64", "kubeProxyVersion": "", "kubeletVersion": "v1.34.2",
                "machineID": format!("{:032x}", i * 3079), "operatingSystem": "linux", "osImage": "Amazon Linux 2023.6.20241111",
                "systemUUID": format!("ec2{:029x}", i * 12289)
            }
        }
    })
}

/// A pod as written for `kubectl apply`: one container with the template's requests (GPUs as
/// limits, their request defaulting to the limit), selector, tolerations and affinity.
pub fn pod_object(p: &Pod) -> Value {
    let mut requests = p.requests.clone();
    let gpus = requests.remove("nvidia.com/gpu");
    let mut resources = json!({"requests": quantities(&requests)});
    if let Some(g) = gpus {
        resources["limits"] = json!({"nvidia.com/gpu": g.to_string()});
    }
    let mut spec = json!({"containers": [{"name": "main", "image": "registry.example.com/ml/train:2.5", "resources": resources}]});
    if !p.node_selector.is_empty() {
        spec["nodeSelector"] = json!(p.node_selector);
    }
    if !p.tolerations.is_empty() {
        spec["tolerations"] = json!(p.tolerations);
    }
    if let Some(a) = &*p.affinity {
        spec["affinity"] = json!(a);
    }
    let mut metadata = json!({"name": p.name, "namespace": p.namespace});
    if !p.labels.is_empty() {
        metadata["labels"] = json!(p.labels);
    }
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec})
}

/// Block YAML as kubectl prints it: two-space indentation, list items at their key's column.
pub fn write_yaml(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) => {
            for (k, v) in m {
                let key = scalar_text(k);
                match v {
                    Value::Object(c) if !c.is_empty() => {
                        let _ = writeln!(out, "{pad}{key}:");
                        write_yaml(v, indent + 2, out);
                    }
                    Value::Array(a) if !a.is_empty() => {
                        let _ = writeln!(out, "{pad}{key}:");
                        write_yaml(v, indent, out);
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}{key}: {}", leaf(v));
                    }
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                match item {
                    Value::Object(m) if !m.is_empty() => {
                        let mut inner = String::new();
                        write_yaml(item, indent + 2, &mut inner);
                        let _ = write!(out, "{pad}- {}", &inner[indent + 2..]);
                    }
                    _ => {
                        let _ = writeln!(out, "{pad}- {}", leaf(item));
                    }
                }
            }
        }
        other => {
            let _ = writeln!(out, "{pad}{}", leaf(other));
        }
    }
}

fn leaf(v: &Value) -> String {
    match v {
        Value::String(s) => scalar_text(s),
        Value::Object(_) => "{}".into(),
        Value::Array(_) => "[]".into(),
        other => other.to_string(),
    }
}

/// A string plain when YAML reads it back as the same string, else JSON-quoted (which YAML
/// reads as a double-quoted scalar).
fn scalar_text(s: &str) -> String {
    let plain = !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '/' | '-' | '_' | ':'))
        && !s.starts_with(['-', '.', '/', ':'])
        && !s.ends_with(':')
        && crate::yaml::reads_as_string(s);
    if plain {
        s.to_string()
    } else {
        serde_json::to_string(s).expect("strings serialize")
    }
}

/// The bench cluster's nodes and pods.
pub struct Cluster {
    pub nodes: Vec<Node>,
    pub pods: Vec<Pod>,
}

impl Cluster {
    pub fn new(nodes: usize, pods: usize, templates: usize, seed: u64) -> Self {
        Cluster {
            nodes: crate::bench::nodes(nodes),
            pods: crate::bench::pods(pods, templates.max(1), seed),
        }
    }

    /// One Scenario document with every node and pod inline.
    pub fn write_scenario(&self, name: &str, out: &mut dyn Write) -> io::Result<()> {
        write!(
            out,
            "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata:\n  name: {name}\nspec:\n  scheduler:\n    seed: 1\n  nodes:\n"
        )?;
        write_items(out, 2, self.nodes.iter().map(node_object))?;
        out.write_all(b"  workloads:\n")?;
        write_items(out, 2, self.pods.iter().map(pod_object))
    }

    /// `kubectl get nodes -o yaml` (or `-o json`, indented by four as kubectl does).
    pub fn write_kubectl_nodes(&self, json: bool, out: &mut dyn Write) -> io::Result<()> {
        let items = self
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| kubectl_node(n, i));
        match json {
            true => write_json_list(out, items),
            false => write_yaml_list(out, items),
        }
    }

    /// The pods as a `kind: List`.
    pub fn write_pods_list(&self, out: &mut dyn Write) -> io::Result<()> {
        write_yaml_list(out, self.pods.iter().map(pod_object))
    }

    /// One `---` document per pod.
    pub fn write_pods_documents(&self, out: &mut dyn Write) -> io::Result<()> {
        let mut text = String::new();
        for p in &self.pods {
            text.clear();
            text.push_str("---\n");
            write_yaml(&pod_object(p), 0, &mut text);
            out.write_all(text.as_bytes())?;
        }
        Ok(())
    }

    /// A `kind: List` whose pods reuse their template's spec through anchors and aliases, and
    /// their metadata through merge keys, as people shorten hand-written files.
    pub fn write_pods_with_anchors(&self, out: &mut dyn Write) -> io::Result<()> {
        out.write_all(b"apiVersion: v1\nkind: List\nitems:\n")?;
        let mut anchored: Vec<String> = Vec::new();
        for p in &self.pods {
            let template = p.name.rsplit_once('-').map_or(p.name.as_str(), |(t, _)| t);
            let anchor = template.replace(|c: char| !c.is_ascii_alphanumeric(), "_");
            writeln!(out, "- apiVersion: v1\n  kind: Pod")?;
            if anchored.contains(&anchor) {
                writeln!(
                    out,
                    "  metadata:\n    <<: *meta_{anchor}\n    name: {}\n  spec: *spec_{anchor}",
                    p.name
                )?;
            } else {
                let object = pod_object(p);
                writeln!(
                    out,
                    "  metadata: &meta_{anchor}\n    name: {}\n    namespace: {}",
                    p.name, p.namespace
                )?;
                let mut spec = String::new();
                write_yaml(&object["spec"], 4, &mut spec);
                write!(out, "  spec: &spec_{anchor}\n{spec}")?;
                anchored.push(anchor);
            }
        }
        Ok(())
    }
}

/// Writes `items` as the elements of a block YAML list at `indent`, one at a time: a file of
/// a million objects never exists in memory as a whole.
pub fn write_items(
    out: &mut dyn Write,
    indent: usize,
    items: impl IntoIterator<Item = Value>,
) -> io::Result<()> {
    let mut text = String::new();
    for item in items {
        text.clear();
        write_yaml(&Value::Array(vec![item]), indent, &mut text);
        out.write_all(text.as_bytes())?;
    }
    Ok(())
}

/// A `kind: List` as `kubectl get -o yaml` prints it, an item at a time.
fn write_yaml_list(out: &mut dyn Write, items: impl Iterator<Item = Value>) -> io::Result<()> {
    let mut items = items.peekable();
    match items.peek() {
        None => out.write_all(b"apiVersion: v1\nitems: []\n")?,
        Some(_) => {
            out.write_all(b"apiVersion: v1\nitems:\n")?;
            write_items(out, 0, items)?;
        }
    }
    out.write_all(b"kind: List\nmetadata:\n  resourceVersion: \"\"\n")
}

/// A `kind: List` as `kubectl get -o json` prints it (indented by four), an item at a time.
fn write_json_list(out: &mut dyn Write, items: impl Iterator<Item = Value>) -> io::Result<()> {
    out.write_all(b"{\n    \"apiVersion\": \"v1\",\n    \"items\": [")?;
    let mut buf = Vec::new();
    let mut first = true;
    for item in items {
        buf.clear();
        let mut ser = serde_json::Serializer::with_formatter(
            &mut buf,
            serde_json::ser::PrettyFormatter::with_indent(b"    "),
        );
        serde::Serialize::serialize(&item, &mut ser).map_err(io::Error::other)?;
        out.write_all(if first { b"\n" } else { b",\n" })?;
        first = false;
        // The item sits two levels deep in the list.
        for (i, line) in buf.split(|b| *b == b'\n').enumerate() {
            if i > 0 {
                out.write_all(b"\n")?;
            }
            out.write_all(b"        ")?;
            out.write_all(line)?;
        }
    }
    out.write_all(if first { b"],\n" } else { b"\n    ],\n" })?;
    out.write_all(
        b"    \"kind\": \"List\",\n    \"metadata\": {\n        \"resourceVersion\": \"\"\n    }\n}\n",
    )
}

/// A pool of the cluster (`karpenter.sh/nodepool`) with its totals, which a ResourceFlavor
/// quotas.
pub(crate) struct PoolTotals {
    pub name: String,
    pub gpus: i64,
    /// Milli-CPU.
    pub cpu: i64,
    /// Bytes.
    pub memory: i64,
}

/// The cluster's pools in the order Kueue's flavors list them: GPU pools first, the best GPUs
/// first, the CPU pool last.
pub(crate) fn pool_totals(nodes: &[Node]) -> Vec<PoolTotals> {
    let mut pools: std::collections::BTreeMap<String, PoolTotals> = Default::default();
    for n in nodes {
        let pool = n
            .labels
            .get("karpenter.sh/nodepool")
            .cloned()
            .unwrap_or_default();
        let e = pools.entry(pool.clone()).or_insert(PoolTotals {
            name: pool,
            gpus: 0,
            cpu: 0,
            memory: 0,
        });
        let get = |r: &str| n.allocatable.get(r).copied().unwrap_or(0);
        e.gpus += get("nvidia.com/gpu");
        e.cpu += get(resources::CPU);
        e.memory += get(resources::MEMORY);
    }
    let mut order: Vec<PoolTotals> = pools.into_values().collect();
    order.sort_by_key(|p| (p.gpus == 0, !p.name.starts_with("h100"), p.name.clone()));
    order
}

/// Kueue's objects for `flavors` (each pool with its ResourceFlavor's spec): one
/// ResourceFlavor per pool, then per queue `team-NN` a
/// ClusterQueue in one of two cohorts, reclaiming within it, whose nominal quota of each
/// flavor is the queue's share of `weights` (rounded down), with its Namespace and a
/// LocalQueue `default`; last the WorkloadPriorityClasses `high` (1000) and `low` (100).
pub(crate) fn kueue_objects(flavors: &[(&PoolTotals, Value)], weights: &[u64]) -> Vec<Value> {
    let mut objects: Vec<Value> = Vec::new();
    for (pool, spec) in flavors {
        objects.push(
            json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ResourceFlavor",
                            "metadata": {"name": pool.name}, "spec": spec}),
        );
    }
    let sum: u64 = weights.iter().sum::<u64>().max(1);
    for (q, &weight) in weights.iter().enumerate() {
        let share = |total: i64| (i128::from(total) * i128::from(weight) / i128::from(sum)) as i64;
        let quotas: Vec<Value> = (flavors.iter())
            .map(|(pool, _)| {
                json!({"name": pool.name, "resources": [
                    {"name": "cpu", "nominalQuota": format!("{}m", share(pool.cpu))},
                    {"name": "memory", "nominalQuota": format!("{}Mi", share(pool.memory) >> 20)},
                    {"name": "nvidia.com/gpu", "nominalQuota": share(pool.gpus).to_string()},
                ]})
            })
            .collect();
        let name = format!("team-{q:02}");
        objects.push(json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "ClusterQueue",
            "metadata": {"name": name},
            "spec": {"cohortName": format!("cohort-{}", q % 2), "namespaceSelector": {},
                     "preemption": {"reclaimWithinCohort": "Any"},
                     "resourceGroups": [{"coveredResources": ["cpu", "memory", "nvidia.com/gpu"], "flavors": quotas}]}}));
        objects.push(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}));
        objects.push(
            json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "LocalQueue",
            "metadata": {"name": "default", "namespace": name}, "spec": {"clusterQueue": name}}),
        );
    }
    for (name, value) in [("high", 1000), ("low", 100)] {
        objects.push(
            json!({"apiVersion": "kueue.x-k8s.io/v1beta2", "kind": "WorkloadPriorityClass",
                            "metadata": {"name": name}, "value": value}),
        );
    }
    objects
}

/// The Kueue benchmark: the cluster's GPU and CPU pools as ResourceFlavors, `queues`
/// ClusterQueues (one LocalQueue and namespace each) split over two cohorts with an equal
/// share of every pool as nominal quota, and `jobs` TrainJobs of four pods each on the
/// shipped `torch-distributed` runtime (`file: torch_distributed.yaml`, written beside it):
/// 60% CPU jobs pinned to the CPU pool, the rest 1, 2 or 8 GPUs per pod; one in five with
/// the `high` WorkloadPriorityClass. Demand exceeds the quotas, so queues keep a backlog.
pub fn write_kueue_scenario(
    cluster: &Cluster,
    bench: &KueueBench,
    out: &mut dyn Write,
) -> io::Result<()> {
    let KueueBench { jobs, queues, seed } = *bench;
    use rand::rngs::ChaCha8Rng;
    use rand::{RngExt, SeedableRng};
    let queues = queues.max(1);
    let pools = pool_totals(&cluster.nodes);
    let toleration =
        json!([{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]);
    let flavors: Vec<(&PoolTotals, Value)> = (pools.iter())
        .map(|p| {
            let mut spec = json!({"nodeLabels": {"karpenter.sh/nodepool": p.name}});
            if p.gpus > 0 {
                spec["tolerations"] = toleration.clone();
            }
            (p, spec)
        })
        .collect();
    let objects = kueue_objects(&flavors, &vec![1; queues]);
    let cpu_pool = (pools.iter()).find(|p| p.gpus == 0).map(|p| p.name.clone());
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let workloads = (0..jobs).map(move |i| {
            let team = format!("team-{:02}", i % queues);
            let class = if rng.random_range(0..5) == 0 { "high" } else { "low" };
            let roll = rng.random_range(0..100);
            let gpus = match roll {
                0..60 => 0,
                60..90 => 1,
                90..98 => 2,
                _ => 8,
            };
            let resources = if gpus == 0 {
                json!({"requests": {"cpu": "4", "memory": "16Gi"}})
            } else {
                json!({"requests": {"cpu": (8 * gpus).to_string(), "memory": format!("{}Gi", 64 * gpus)},
                       "limits": {"nvidia.com/gpu": gpus}})
            };
            let mut job = json!({"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
                "metadata": {"name": format!("job-{i:05}"), "namespace": team,
                             "labels": {"kueue.x-k8s.io/queue-name": "default", "kueue.x-k8s.io/priority-class": class}},
                "spec": {"runtimeRef": {"name": "torch-distributed"},
                         "trainer": {"numNodes": 4, "resourcesPerNode": resources}}});
            if gpus == 0
                && let Some(pool) = &cpu_pool
            {
                job["spec"]["runtimePatches"] = json!([{"manager": "trainer.kubeflow.org/kubeflow-sdk",
                    "trainingRuntimeSpec": {"template": {"spec": {"replicatedJobs": [{"name": "node",
                        "template": {"spec": {"template": {"spec": {
                            "nodeSelector": {"karpenter.sh/nodepool": pool}}}}}}]}}}}]);
            }
            job
    });
    write!(
        out,
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata:\n  name: kueue-{queues}x{jobs}-on-{}\nspec:\n  scheduler:\n    seed: 1\n  runtimes:\n  - file: torch_distributed.yaml\n  nodes:\n",
        cluster.nodes.len()
    )?;
    write_items(out, 2, cluster.nodes.iter().map(node_object))?;
    out.write_all(b"  objects:\n")?;
    write_items(out, 2, objects)?;
    out.write_all(b"  workloads:\n")?;
    write_items(out, 2, workloads)
}

/// Writes one file's text when its turn comes.
type FileText<'a> = Box<dyn Fn(&mut dyn Write) -> io::Result<()> + 'a>;

/// The shape of the Kueue benchmark scenario.
#[derive(Debug, Clone, Copy)]
pub struct KueueBench {
    pub jobs: usize,
    pub queues: usize,
    pub seed: u64,
}

/// The shipped `torch-distributed` runtime, which the Kueue scenario's TrainJobs use.
fn torch_runtime(out: &mut dyn Write) -> io::Result<()> {
    out.write_all(include_str!("../fixtures/runtimes/torch_distributed.yaml").as_bytes())
}

/// Writes every benchmark input for the cluster into `dir`: the one-file scenario, the
/// kubectl dumps (YAML and JSON), the three pod files, scenarios that load the dumps, and
/// the Kueue scenario with the runtime it uses.
pub fn write_all(
    cluster: &Cluster,
    kueue: &KueueBench,
    dir: &Path,
) -> io::Result<Vec<(String, u64)>> {
    std::fs::create_dir_all(dir)?;
    let name = format!("synthetic-{}x{}", cluster.nodes.len(), cluster.pods.len());
    let kubectl = |nodes: &str, pods: &str, suffix: &str| {
        format!(
            "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata:\n  name: {name}-kubectl{suffix}\nspec:\n  scheduler:\n    seed: 1\n  nodes:\n  - file: {nodes}\n  workloads:\n  - file: {pods}\n"
        )
    };
    let text = |t: String| -> FileText { Box::new(move |out| out.write_all(t.as_bytes())) };
    // One file at a time, streamed: at 50,000 nodes the dumps are most of a gigabyte each.
    let files: Vec<(&str, FileText)> = vec![
        (
            "scenario.yaml",
            Box::new(|out| cluster.write_scenario(&name, out)),
        ),
        (
            "nodes.yaml",
            Box::new(|out| cluster.write_kubectl_nodes(false, out)),
        ),
        (
            "nodes.json",
            Box::new(|out| cluster.write_kubectl_nodes(true, out)),
        ),
        ("pods.yaml", Box::new(|out| cluster.write_pods_list(out))),
        (
            "pods-documents.yaml",
            Box::new(|out| cluster.write_pods_documents(out)),
        ),
        (
            "pods-anchors.yaml",
            Box::new(|out| cluster.write_pods_with_anchors(out)),
        ),
        (
            "kubectl-scenario.yaml",
            text(kubectl("nodes.yaml", "pods.yaml", "")),
        ),
        (
            "kubectl-json-scenario.yaml",
            text(kubectl("nodes.json", "pods.yaml", "-json")),
        ),
        (
            "documents-scenario.yaml",
            text(kubectl("nodes.yaml", "pods-documents.yaml", "-documents")),
        ),
        (
            "anchors-scenario.yaml",
            text(kubectl("nodes.yaml", "pods-anchors.yaml", "-anchors")),
        ),
        (
            "kueue-scenario.yaml",
            Box::new(|out| write_kueue_scenario(cluster, kueue, out)),
        ),
        ("torch_distributed.yaml", Box::new(torch_runtime)),
    ];
    let mut written = Vec::new();
    for (file, write) in files {
        written.push((file.to_string(), write_file(&dir.join(file), &*write)?));
    }
    Ok(written)
}

/// Writes a file through `write` (atomically: complete or not at all); returns its size.
fn write_file(path: &Path, write: &dyn Fn(&mut dyn Write) -> io::Result<()>) -> io::Result<u64> {
    let mut file = CountingWriter {
        inner: crate::report::AtomicFile::create(path)?,
        bytes: 0,
    };
    write(&mut file)?;
    file.inner.commit()?;
    Ok(file.bytes)
}

/// A writer that counts the bytes through it.
struct CountingWriter<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for CountingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Writes the DRA benchmark scenario, `dra-scenario.yaml`, into `dir`.
pub fn write_dra(
    nodes: usize,
    pods: usize,
    seed: u64,
    dir: &Path,
) -> io::Result<Vec<(String, u64)>> {
    std::fs::create_dir_all(dir)?;
    let file = "dra-scenario.yaml";
    let bytes = write_file(&dir.join(file), &|out| {
        write_dra_scenario(nodes, pods, seed, out)
    })?;
    Ok(vec![(file.to_string(), bytes)])
}

/// Writes the synthetic replay trace into `dir`: `trace.csv` and `trace-scenario.yaml`, the
/// trace's cluster (`nodes`) behind Kueue replaying it.
pub fn write_trace(
    nodes: &[Node],
    plan: &trace::TracePlan,
    dir: &Path,
) -> io::Result<(Vec<(String, u64)>, trace::TraceSummary)> {
    std::fs::create_dir_all(dir)?;
    let (csv, scenario) = ("trace.csv", "trace-scenario.yaml");
    let mut file = CountingWriter {
        inner: crate::report::AtomicFile::create(&dir.join(csv))?,
        bytes: 0,
    };
    let summary = plan.write_csv(&mut file)?;
    file.inner.commit()?;
    let csv_bytes = file.bytes;
    let scenario_bytes = write_file(&dir.join(scenario), &|out| {
        plan.write_scenario(nodes, csv, out)
    })?;
    let files = vec![(csv.into(), csv_bytes), (scenario.into(), scenario_bytes)];
    Ok((files, summary))
}
