//! The allocator on the DeviceClasses and ResourceSlices NVIDIA's DRA driver publishes
//! (`fixtures/dra/`): claims by product name, memory and MIG profile land only where such
//! devices are, and never take more devices than a node has.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use k8s_openapi::api::core::v1::NodeSelector;
use k8s_openapi::api::resource::v1::{DeviceClass, ResourceClaim, ResourceSlice};
use schedsim::dra::allocator::{Allocator, Features, NodeView, Selectors};
use serde_json::json;

fn documents(file: &str) -> Vec<serde_json::Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/dra")
        .join(file);
    let text = std::fs::read_to_string(&path).expect("fixture");
    (schedsim::yaml::parse_documents(text, &path).expect("fixture parses"))
        .into_iter()
        .map(|d| d.value)
        .filter(|v| !v.is_null())
        .collect()
}

struct Cluster {
    classes: BTreeMap<String, DeviceClass>,
    slices: Vec<ResourceSlice>,
}

fn cluster() -> Cluster {
    let classes = (documents("deviceclasses.yaml").into_iter())
        .map(|v| serde_json::from_value::<DeviceClass>(v).expect("DeviceClass"))
        .map(|c| (c.metadata.name.clone().unwrap_or_default(), c))
        .collect();
    let slices = [
        "resourceslice-a100-node.yaml",
        "resourceslice-h100-node.yaml",
        "resourceslice-a100-mig-node.yaml",
    ]
    .iter()
    .flat_map(|f| documents(f))
    .map(|v| serde_json::from_value::<ResourceSlice>(v).expect("ResourceSlice"))
    .collect();
    Cluster { classes, slices }
}

/// A claim of one request: `count` devices of `class` that pass `selector`.
fn claim(name: &str, class: &str, count: i64, selector: &str) -> ResourceClaim {
    let mut request =
        json!({"name": "gpus", "exactly": {"deviceClassName": class, "count": count}});
    if !selector.is_empty() {
        request["exactly"]["selectors"] = json!([{"cel": {"expression": selector}}]);
    }
    serde_json::from_value(json!({
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": [request]}},
    }))
    .expect("ResourceClaim")
}

/// The nodes where `claims` can all be allocated, with the devices of each claim.
fn fits(cluster: &Cluster, claims: &[ResourceClaim]) -> BTreeMap<&'static str, Vec<Vec<String>>> {
    let allocated = HashSet::new();
    let selectors = Selectors::default();
    let allocator = Allocator {
        features: Features::default(),
        allocated: &allocated,
        consumed: &Default::default(),
        classes: &cluster.classes,
        slices: &cluster.slices,
        selectors: &selectors,
    };
    let claims: Vec<&ResourceClaim> = claims.iter().collect();
    let never = |_: &NodeSelector| false;
    let mut out = BTreeMap::new();
    for node in ["a100-node-0", "h100-node-0", "a100-mig-node-0"] {
        let view = NodeView {
            name: node,
            selects: &never,
        };
        if let Some(result) = allocator
            .allocate(&view, &claims)
            .expect("no allocation error")
        {
            let devices = (result.iter())
                .map(|a| a.devices.iter().map(|d| d.device.clone()).collect())
                .collect();
            out.insert(node, devices);
        }
    }
    out
}

#[test]
fn claims_land_where_their_devices_are() {
    let cluster = cluster();
    let memory = r#"device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("80Gi")) >= 0"#;
    let h100 = fits(&cluster, &[claim("big", "gpu.nvidia.com", 1, memory)]);
    assert_eq!(h100.keys().copied().collect::<Vec<_>>(), ["h100-node-0"]);
    assert_eq!(h100["h100-node-0"], [["gpu-0"]]);

    let a100 = r#"device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA A100")"#;
    let eight = fits(&cluster, &[claim("eight", "gpu.nvidia.com", 8, a100)]);
    assert_eq!(
        eight.keys().copied().collect::<Vec<_>>(),
        ["a100-node-0"],
        "the MIG node has only three whole GPUs"
    );
    let three = fits(&cluster, &[claim("three", "gpu.nvidia.com", 3, a100)]);
    assert_eq!(three.len(), 2);

    let profile = r#"device.attributes["gpu.nvidia.com"].profile == "1g.5gb""#;
    let mig = fits(&cluster, &[claim("slices", "mig.nvidia.com", 2, profile)]);
    assert_eq!(mig.keys().copied().collect::<Vec<_>>(), ["a100-mig-node-0"]);
    assert_eq!(mig["a100-mig-node-0"][0].len(), 2);
}

#[test]
fn claims_on_one_node_never_share_a_device() {
    let cluster = cluster();
    let all_eight = claim("all", "gpu.nvidia.com", 8, "");
    let one_more = claim("more", "gpu.nvidia.com", 1, "");
    let both = fits(&cluster, &[all_eight.clone(), one_more]);
    assert!(
        !both.contains_key("h100-node-0") && !both.contains_key("a100-node-0"),
        "{both:?}"
    );
    let alone = fits(&cluster, &[all_eight]);
    let devices: HashSet<&String> = alone["h100-node-0"][0].iter().collect();
    assert_eq!(devices.len(), 8);
}
