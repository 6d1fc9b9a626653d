//! The DRA benchmark input (`schedsim generate --dra`): GPU nodes whose GPUs NVIDIA's DRA
//! driver publishes, one ResourceSlice per node shaped exactly like
//! `fixtures/dra/resourceslice-{a100,h100}-node.yaml` (the same attributes, capacity, pool,
//! owner and name scheme; synthetic UUIDs and per-node identities), the chart's
//! `gpu.nvidia.com` DeviceClass, ResourceClaimTemplates that select by CEL on product name and
//! memory, and pods that each claim 1, 2, 4 or 8 GPUs of one product through a template.
//! Deterministic per seed.

use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use serde_json::{Value, json};

use std::io::{self, Write};

use super::write_items;
use crate::model::generated_names::{generated_name, stable_hash};

/// A GPU node kind as the driver publishes it (`fixtures/dra/README.md`).
struct Product {
    pool: &'static str,
    name: &'static str,
    architecture: &'static str,
    compute_capability: &'static str,
    memory: &'static str,
    /// (PCI bus ID, PCIe root) of GPUs 0–7: a DGX A100 (2 GPUs per root complex) and a DGX
    /// H100 (1 per root complex), as in the fixtures.
    pci: [(&'static str, &'static str); 8],
    /// The node's allocatable milli-CPU and memory (GiB), as `bench`'s p4d/p5 shapes.
    cpu: i64,
    memory_gib: i64,
}

const PRODUCTS: [Product; 2] = [
    Product {
        pool: "a100",
        name: "NVIDIA A100-SXM4-40GB",
        architecture: "Ampere",
        compute_capability: "8.0.0",
        memory: "40Gi",
        pci: [
            ("0000:07:00.0", "pci0000:00"),
            ("0000:0f:00.0", "pci0000:00"),
            ("0000:47:00.0", "pci0000:40"),
            ("0000:4e:00.0", "pci0000:40"),
            ("0000:87:00.0", "pci0000:80"),
            ("0000:90:00.0", "pci0000:80"),
            ("0000:b7:00.0", "pci0000:b0"),
            ("0000:bd:00.0", "pci0000:b0"),
        ],
        cpu: 95_690,
        memory_gib: 1_100,
    },
    Product {
        pool: "h100",
        name: "NVIDIA H100 80GB HBM3",
        architecture: "Hopper",
        compute_capability: "9.0.0",
        memory: "80Gi",
        pci: [
            ("0000:18:00.0", "pci0000:15"),
            ("0000:2a:00.0", "pci0000:27"),
            ("0000:3a:00.0", "pci0000:37"),
            ("0000:5d:00.0", "pci0000:58"),
            ("0000:9a:00.0", "pci0000:97"),
            ("0000:ab:00.0", "pci0000:a7"),
            ("0000:ba:00.0", "pci0000:b7"),
            ("0000:db:00.0", "pci0000:d7"),
        ],
        cpu: 191_450,
        memory_gib: 1_900,
    },
];

/// GPUs a pod claims, and how many pods in a hundred claim that many.
const COUNTS: [(i64, u32); 4] = [(1, 50), (2, 25), (4, 15), (8, 10)];

const DRIVER: &str = "gpu.nvidia.com";
const ZONES: [&str; 3] = ["us-east-1a", "us-east-1b", "us-east-1c"];

/// A UUID-shaped hex string from a hash of `parts` (8-4-4-4-12).
fn uuid(parts: &[&str]) -> String {
    let (a, b) = (stable_hash(parts), stable_hash(&[parts, &["2"]].concat()));
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0xffff,
        b >> 48,
        b & 0xffff_ffff_ffff
    )
}

/// Node `i` of `count`: the first half A100 nodes, the rest H100.
fn product_of(i: usize, count: usize) -> &'static Product {
    &PRODUCTS[usize::from(i >= count / 2)]
}

fn node_name(i: usize, count: usize) -> String {
    format!("{}-node-{i:05}", product_of(i, count).pool)
}

fn node(i: usize, count: usize) -> Value {
    let p = product_of(i, count);
    let name = node_name(i, count);
    json!({
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name,
            "karpenter.sh/nodepool": format!("{}-dra", p.pool),
            "topology.kubernetes.io/zone": ZONES[i % 3],
        }},
        "status": {"allocatable": {
            "cpu": format!("{}m", p.cpu),
            "memory": format!("{}Gi", p.memory_gib),
            "pods": "110",
        }},
    })
}

/// The ResourceSlice the GPU kubelet plugin writes for node `i` (one pool per node, one
/// slice, owned by the Node; `generateName` `<index>-<driver>-<node>-`).
fn slice(i: usize, count: usize) -> Value {
    let p = product_of(i, count);
    let node = node_name(i, count);
    let prefix = format!("00000-{DRIVER}-{node}-");
    let devices: Vec<Value> = (p.pci.iter().enumerate())
        .map(|(g, (bus, root))| {
            json!({
                "name": format!("gpu-{g}"),
                "attributes": {
                    "architecture": {"string": p.architecture},
                    "brand": {"string": "Nvidia"},
                    "cudaComputeCapability": {"version": p.compute_capability},
                    "cudaDriverVersion": {"version": "12.4.0"},
                    "driverVersion": {"version": "550.54.15"},
                    "productName": {"string": p.name},
                    "resource.kubernetes.io/pciBusID": {"string": bus},
                    "resource.kubernetes.io/pcieRoot": {"string": root},
                    "type": {"string": "gpu"},
                    "uuid": {"string": format!("GPU-{}", uuid(&["gpu", &node, &g.to_string()]))},
                },
                "capacity": {"memory": {"value": p.memory}},
            })
        })
        .collect();
    json!({
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {
            "name": generated_name(&prefix, stable_hash(&["slice", &node])),
            "generateName": prefix,
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": node,
                                 "uid": uuid(&["node", &node]), "controller": true}],
        },
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    })
}

/// The chart's `gpu.nvidia.com` class (`fixtures/dra/deviceclasses.yaml`).
fn device_class() -> Value {
    json!({
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": DRIVER},
        "spec": {
            "selectors": [{"cel": {"expression":
                "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}],
            "extendedResourceName": "nvidia.com/gpu",
        },
    })
}

fn template_name(p: &Product, count: i64) -> String {
    format!("{}-x{count}", p.pool)
}

/// `count` GPUs of product `p` with at least its memory, selected by CEL.
fn template(p: &Product, count: i64) -> Value {
    let expression = format!(
        "device.attributes['gpu.nvidia.com'].productName == '{}' && device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('{}')) >= 0",
        p.name, p.memory
    );
    json!({
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": template_name(p, count), "namespace": "default"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
            "deviceClassName": DRIVER,
            "count": count,
            "selectors": [{"cel": {"expression": expression}}],
        }}]}}},
    })
}

fn pod(i: usize, rng: &mut ChaCha8Rng) -> Value {
    let p = &PRODUCTS[rng.random_range(0..PRODUCTS.len())];
    let roll = rng.random_range(0..100u32);
    let mut below = 0;
    let count = (COUNTS.iter())
        .find(|(_, share)| {
            below += share;
            roll < below
        })
        .map_or(1, |(c, _)| *c);
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": format!("dra-pod-{i:05}"), "namespace": "default"},
        "spec": {
            "containers": [{
                "name": "main",
                "image": "registry.example.com/ml/train:2.5",
                "resources": {
                    "requests": {"cpu": (8 * count).to_string(), "memory": format!("{}Gi", 64 * count)},
                    "claims": [{"name": "gpus"}],
                },
            }],
            "resourceClaims": [{"name": "gpus", "resourceClaimTemplateName": template_name(p, count)}],
        },
    })
}

/// The DRA benchmark scenario: `nodes` GPU nodes (half A100, half H100) with their slices,
/// the class, 8 templates (each product × 1, 2, 4, 8 GPUs) and `pods` pods.
pub fn dra_scenario_yaml(nodes: usize, pods: usize, seed: u64) -> String {
    let mut out = Vec::new();
    write_dra_scenario(nodes, pods, seed, &mut out).expect("writing to memory");
    String::from_utf8(out).expect("YAML is UTF-8")
}

/// Writes [`dra_scenario_yaml`]'s scenario an object at a time.
pub fn write_dra_scenario(
    nodes: usize,
    pods: usize,
    seed: u64,
    out: &mut dyn Write,
) -> io::Result<()> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    write!(
        out,
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata:\n  name: dra-{nodes}x{pods}\nspec:\n  scheduler:\n    seed: 1\n  nodes:\n"
    )?;
    write_items(out, 2, (0..nodes).map(|i| node(i, nodes)))?;
    out.write_all(b"  objects:\n")?;
    let templates =
        (PRODUCTS.iter()).flat_map(|p| COUNTS.iter().map(move |(c, _)| template(p, *c)));
    let objects = std::iter::once(device_class())
        .chain(templates)
        .chain((0..nodes).map(|i| slice(i, nodes)));
    write_items(out, 2, objects)?;
    out.write_all(b"  workloads:\n")?;
    write_items(out, 2, (0..pods).map(|i| pod(i, &mut rng)))
}
