//! The node selector of an allocation (`createNodeSelector`).

use std::collections::BTreeSet;

use k8s_openapi::api::core::v1::{NodeSelector, NodeSelectorRequirement, NodeSelectorTerm};
use k8s_openapi::api::resource::v1::{Device, DeviceToleration, ResourceSlice};

use super::{Allocation, DeviceResult};

/// The allocation of `devices` (in order) for request `request` without admin access: what
/// [`Allocator::allocate_among`] returns when its search picks exactly them. For a caller
/// that knows the pick: a single claim with one ExactCount request and no constraints takes
/// the first free devices that pass its selectors, in the search order, as the search never
/// backtracks there (devices without counters). `tolerations`: the request's, copied into
/// each result. An error is `createNodeSelector`'s.
pub fn allocation_of(
    request: &str,
    tolerations: &[DeviceToleration],
    devices: &[(&ResourceSlice, &Device)],
) -> Result<Allocation, String> {
    Ok(Allocation {
        node_selector: node_selector(devices.iter().copied())?,
        devices: (devices.iter())
            .map(|(slice, device)| DeviceResult {
                request: request.to_string(),
                driver: slice.spec.driver.clone(),
                pool: slice.spec.pool.name.clone(),
                device: device.name.clone(),
                admin_access: None,
                tolerations: (!tolerations.is_empty()).then(|| tolerations.to_vec()),
                ..Default::default()
            })
            .collect(),
    })
}

/// `createNodeSelector` over the allocated devices: a node-local device pins the allocation
/// to its node; node selectors add up into one term. A device of a slice that chooses nodes
/// per device brings its own node name or selector; such a selector (which validation does
/// not limit to one term, unlike a slice's) with several terms is an error.
pub(super) fn node_selector<'s>(
    devices: impl IntoIterator<Item = (&'s ResourceSlice, &'s Device)>,
) -> Result<Option<NodeSelector>, String> {
    let mut term = NodeSelectorTerm::default();
    for (slice, device) in devices {
        let spec = &slice.spec;
        let (name, selector) = match spec.per_device_node_selection == Some(true) {
            true => (&device.node_name, &device.node_selector),
            false => (&spec.node_name, &spec.node_selector),
        };
        if let Some(name) = name.as_ref().filter(|n| !n.is_empty()) {
            return Ok(Some(NodeSelector {
                node_selector_terms: vec![NodeSelectorTerm {
                    match_fields: Some(vec![NodeSelectorRequirement {
                        key: "metadata.name".into(),
                        operator: "In".into(),
                        values: Some(vec![name.clone()]),
                    }]),
                    ..Default::default()
                }],
            }));
        }
        match selector.as_ref().map(|s| s.node_selector_terms.as_slice()) {
            None | Some([]) => {}
            Some([only]) => {
                add_requirements(only.match_fields.as_deref(), &mut term.match_fields);
                add_requirements(
                    only.match_expressions.as_deref(),
                    &mut term.match_expressions,
                );
            }
            Some(terms) => {
                return Err(format!(
                    "unsupported ResourceSlice.NodeSelector with {} terms",
                    terms.len()
                ));
            }
        }
    }
    let has = |r: &Option<Vec<NodeSelectorRequirement>>| r.as_ref().is_some_and(|r| !r.is_empty());
    Ok(
        (has(&term.match_fields) || has(&term.match_expressions)).then(|| NodeSelector {
            node_selector_terms: vec![term],
        }),
    )
}

/// `addNewNodeSelectorRequirements`: each requirement once (values compared as sets).
pub(super) fn add_requirements(
    from: Option<&[NodeSelectorRequirement]>,
    to: &mut Option<Vec<NodeSelectorRequirement>>,
) {
    for r in from.unwrap_or(&[]) {
        let values: BTreeSet<&String> = r.values.iter().flatten().collect();
        let list = to.get_or_insert_with(Vec::new);
        let known = list.iter().any(|e| {
            e.key == r.key
                && e.operator == r.operator
                && e.values.iter().flatten().collect::<BTreeSet<_>>() == values
        });
        if !known {
            list.push(r.clone());
        }
    }
}
