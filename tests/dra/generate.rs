//! The DRA benchmark input (`schedsim generate --dra`): it loads, its slices are the
//! fixtures' shape, each pod's generated claim allocates exactly on the nodes of its product,
//! and the file is the same for the same seed.

use std::collections::{BTreeSet, HashSet};

use k8s_openapi::api::core::v1::NodeSelector;
use k8s_openapi::api::resource::v1::ResourceClaim;
use schedsim::dra::allocator::{Allocator, Features, NodeView, Selectors};
use schedsim::generate::dra_scenario_yaml;

use super::load::{load_one, tempdir};

#[test]
fn the_dra_benchmark_loads_and_its_claims_select_their_product() {
    let text = dra_scenario_yaml(10, 40, 5);
    assert_eq!(text, dra_scenario_yaml(10, 40, 5));
    assert_ne!(text, dra_scenario_yaml(10, 40, 6));
    let dir = tempdir("generate");
    let file = dir.join("dra-scenario.yaml");
    std::fs::write(&file, &text).unwrap();
    let s = load_one(&file);
    let dra = &s.config.dra;
    assert_eq!(s.nodes.len(), 10);
    assert_eq!(dra.classes.keys().collect::<Vec<_>>(), ["gpu.nvidia.com"]);
    assert_eq!(dra.slices.len(), 10);
    assert!((dra.slices.iter()).all(|sl| sl.spec.devices.as_ref().map(Vec::len) == Some(8)));
    assert_eq!(dra.templates().count(), 8);
    assert_eq!(s.workloads.len(), 40);
    assert_eq!(dra.claims().count(), 40);

    // Each pod's claim fits on its product's nodes (half the cluster) and nowhere else.
    let allocated = HashSet::new();
    let selectors = Selectors::default();
    let allocator = Allocator {
        features: Features::default(),
        allocated: &allocated,
        consumed: &Default::default(),
        classes: &dra.classes,
        slices: &dra.slices,
        selectors: &selectors,
    };
    let never = |_: &NodeSelector| false;
    let mut products = BTreeSet::new();
    for pod in &s.workloads {
        let status = &pod.resource_claim_statuses[0];
        let claim: &ResourceClaim = dra
            .claim("default", status.resource_claim_name.as_deref().unwrap())
            .unwrap();
        let template = pod.resource_claims[0]
            .resource_claim_template_name
            .as_deref()
            .unwrap();
        let product = &template[..4];
        products.insert(product.to_string());
        let fits: Vec<&str> = (s.nodes.iter())
            .map(|n| n.name.as_str())
            .filter(|n| {
                let view = NodeView {
                    name: n,
                    selects: &never,
                };
                (allocator.allocate(&view, &[claim]))
                    .expect("no allocation error")
                    .is_some()
            })
            .collect();
        assert_eq!(fits.len(), 5, "{} ({template}): {fits:?}", pod.name);
        assert!(fits.iter().all(|n| n.starts_with(product)), "{fits:?}");
    }
    assert_eq!(products.len(), 2);
}
