//! ResourceSlices as the API server admits them (`ValidateResourceSlice`, `validateDevice`,
//! `validateDeviceAttribute`).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use k8s_openapi::api::core::v1::{NodeSelectorRequirement, NodeSelectorTerm};
use k8s_openapi::api::resource::v1::{Device, DeviceAttribute, ResourceSlice};

use super::fields::*;
use super::request_policy::validate_request_policy;
use super::{
    ATTRIBUTE_MAX_VALUE_LENGTH, DEVICE_MAX_DOMAIN_LENGTH, DEVICE_MAX_ID_LENGTH,
    MAX_ATTRIBUTE_VALUES, MAX_ATTRIBUTES_AND_CAPACITIES, RESOURCE_SLICE_MAX_DEVICES,
    RESOURCE_SLICE_MAX_DEVICES_ADVANCED, counters, duplicates, taints, validate_meta,
};
use crate::model::validate::validate_node_selector;

/// `ValidateResourceSlice`: driver, pool, exactly one way of selecting nodes, and devices.
pub fn validate_resource_slice(slice: &ResourceSlice) -> Errs {
    let mut errs = Vec::new();
    let spec = &slice.spec;
    validate_meta(&mut errs, &slice.metadata, false);
    validate_driver_name(&mut errs, &spec.driver, "spec.driver");
    validate_pool_name(&mut errs, &spec.pool.name, "spec.pool.name");
    if spec.pool.resource_slice_count <= 0 {
        invalid_raw(
            &mut errs,
            "spec.pool.resourceSliceCount",
            spec.pool.resource_slice_count,
            "must be greater than zero",
        );
    }
    if spec.pool.generation < 0 {
        invalid_raw(
            &mut errs,
            "spec.pool.generation",
            spec.pool.generation,
            "must be greater than or equal to zero",
        );
    }
    let mut set = Vec::new();
    match spec.node_name.as_deref() {
        Some("") => invalid(
            &mut errs,
            "spec.nodeName",
            "",
            "must be either unset or set to a non-empty string",
        ),
        Some(name) => {
            set.push("`nodeName`");
            validate_dns_subdomain(&mut errs, name, "spec.nodeName");
        }
        None => {}
    }
    if let Some(selector) = &spec.node_selector {
        set.push("`nodeSelector`");
        validate_node_selector(selector, "spec.nodeSelector", &mut errs);
        if selector.node_selector_terms.len() != 1 {
            invalid_raw(
                &mut errs,
                "spec.nodeSelector.nodeSelectorTerms",
                go_terms(&selector.node_selector_terms),
                "must have exactly one node selector term",
            );
        }
    }
    for (field, value, name) in [
        ("spec.allNodes", spec.all_nodes, "`allNodes`"),
        (
            "spec.perDeviceNodeSelection",
            spec.per_device_node_selection,
            "`perDeviceNodeSelection`",
        ),
    ] {
        match value {
            Some(true) => set.push(name),
            Some(false) => invalid_raw(
                &mut errs,
                field,
                false,
                "must be either unset or set to true",
            ),
            None => {}
        }
    }
    const ONE_OF: &str = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required";
    match set.len() {
        0 => required(&mut errs, "spec", ONE_OF),
        1 => {}
        _ => invalid(
            &mut errs,
            "spec",
            &format!("{{{}}}", set.join(", ")),
            &format!("{ONE_OF}, but multiple fields are set"),
        ),
    }
    if spec.shared_counters.is_some() && spec.devices.is_some() {
        invalid(
            &mut errs,
            "spec",
            "",
            "only one of `sharedCounters` or `devices` is allowed",
        );
    }
    let devices = spec.devices.as_deref().unwrap_or(&[]);
    let advanced = devices.iter().any(|d| {
        d.taints.as_ref().is_some_and(|t| !t.is_empty())
            || d.consumes_counters.as_ref().is_some_and(|c| !c.is_empty())
            || d.attributes.iter().flatten().any(|(_, a)| has_list(a))
    });
    let max = if advanced {
        RESOURCE_SLICE_MAX_DEVICES_ADVANCED
    } else {
        RESOURCE_SLICE_MAX_DEVICES
    };
    if devices.len() > max {
        too_many(&mut errs, "spec.devices", devices.len(), max);
    } else {
        let per_device = spec.per_device_node_selection == Some(true);
        for (i, d) in devices.iter().enumerate() {
            validate_device(&mut errs, d, &index("spec.devices", i), per_device);
        }
        duplicates(
            &mut errs,
            devices.iter().map(|d| d.name.as_str()),
            "spec.devices",
        );
    }
    counters::validate_shared_counters(&mut errs, spec.shared_counters.as_deref());
    errs
}

/// A list-valued attribute (`bools`, `ints`, `strings`, `versions`).
fn has_list(a: &DeviceAttribute) -> bool {
    a.bools.is_some() || a.ints.is_some() || a.strings.is_some() || a.versions.is_some()
}

/// `attributeAndCapacityMaxKeyLength`: domain/ID.
const MAX_KEY_LENGTH: usize = DEVICE_MAX_DOMAIN_LENGTH + 1 + DEVICE_MAX_ID_LENGTH;

/// `validateDevice`.
fn validate_device(errs: &mut Errs, device: &Device, path: &str, per_device_node_selection: bool) {
    validate_dns_label(errs, &device.name, &child(path, "name"));
    let empty_attributes = BTreeMap::new();
    let empty_capacity = BTreeMap::new();
    let attributes = device.attributes.as_ref().unwrap_or(&empty_attributes);
    let capacity = device.capacity.as_ref().unwrap_or(&empty_capacity);
    let entries = attributes.len() + capacity.len();
    if entries > MAX_ATTRIBUTES_AND_CAPACITIES {
        invalid_raw(
            errs,
            path,
            entries,
            &format!(
                "the total number of attributes and capacities must not exceed {MAX_ATTRIBUTES_AND_CAPACITIES}"
            ),
        );
    }
    let values: usize = attributes.values().map(attribute_values).sum();
    if values > MAX_ATTRIBUTE_VALUES {
        invalid_raw(
            errs,
            path,
            values,
            &format!("the total number of attribute values must not exceed {MAX_ATTRIBUTE_VALUES}"),
        );
    }
    let attributes_path = child(path, "attributes");
    for (key, attribute) in attributes {
        validate_qualified_name(errs, key, &attributes_path);
        let at = child(&attributes_path, &truncate_key(key, MAX_KEY_LENGTH));
        validate_attribute(errs, attribute, &at);
    }
    let capacity_path = child(path, "capacity");
    let multiple = device.allow_multiple_allocations == Some(true);
    for (key, c) in capacity {
        validate_qualified_name(errs, key, &capacity_path);
        let at = child(&capacity_path, &truncate_key(key, MAX_KEY_LENGTH));
        match &c.request_policy {
            Some(_) if !multiple => forbidden(
                errs,
                &child(&at, "requestPolicy"),
                "allowMultipleAllocations must be true",
            ),
            Some(policy) => validate_request_policy(errs, &c.value, policy, &at),
            None => {}
        }
    }
    taints::validate_taints(errs, device.taints.as_deref(), &child(path, "taints"));
    counters::validate_consumes_counters(errs, device.consumes_counters.as_deref(), path);
    let (node_name, selector, all) = (&device.node_name, &device.node_selector, device.all_nodes);
    if per_device_node_selection {
        const ONE_OF: &str = "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec";
        let mut set = Vec::new();
        match node_name.as_deref() {
            Some("") => invalid(errs, &child(path, "nodeName"), "", "must not be empty"),
            Some(name) => {
                set.push("`nodeName`");
                validate_dns_subdomain(errs, name, &child(path, "nodeName"));
            }
            None => {}
        }
        if let Some(s) = selector {
            set.push("`nodeSelector`");
            validate_node_selector(s, &child(path, "nodeSelector"), errs);
        }
        match all {
            Some(true) => set.push("`allNodes`"),
            Some(false) => invalid_raw(
                errs,
                &child(path, "allNodes"),
                false,
                "must be either unset or set to true",
            ),
            None => {}
        }
        match set.len() {
            0 => required(errs, path, ONE_OF),
            1 => {}
            _ => invalid(errs, path, &format!("{{{}}}", set.join(", ")), ONE_OF),
        }
    } else if node_name.is_some() || selector.is_some() || all.is_some() {
        invalid_raw(
            errs,
            path,
            "null",
            "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
        );
    }
}
/// `numEntriesDeviceAttribute`: a scalar counts one, a list each of its items.
fn attribute_values(a: &DeviceAttribute) -> usize {
    let lists = [
        a.bools.as_ref().map_or(0, Vec::len),
        a.ints.as_ref().map_or(0, Vec::len),
        a.strings.as_ref().map_or(0, Vec::len),
        a.versions.as_ref().map_or(0, Vec::len),
    ];
    match lists.iter().sum() {
        0 => 1,
        n => n,
    }
}

/// `truncateIfTooLong`: a long key in a field path keeps its start and end.
fn truncate_key(key: &str, max: usize) -> String {
    let max = max.max(16);
    if key.len() <= max {
        return key.to_string();
    }
    let remaining = max - 3;
    let (head, tail) = (remaining.div_ceil(2), remaining / 2);
    match (key.get(..head), key.get(key.len() - tail..)) {
        (Some(h), Some(t)) => format!("{h}...{t}"),
        _ => key.to_string(),
    }
}

/// semver.org 2.0.0 (`semverRe`; `\d` is ASCII in Go's RE2).
static SEMVER: LazyLock<regex::Regex> = LazyLock::new(|| {
    let numeric = "(0|[1-9][0-9]*)";
    let pre = "(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)";
    let build = "[0-9a-zA-Z-]+";
    regex::Regex::new(&format!(
        r"^{numeric}\.{numeric}\.{numeric}(-{pre}(\.{pre})*)?(\+{build}(\.{build})*)?$"
    ))
    .expect("the semver pattern compiles")
});

/// `validateDeviceAttribute`: exactly one value; strings and versions at most 64 bytes,
/// versions semantic versions, lists not empty.
fn validate_attribute(errs: &mut Errs, a: &DeviceAttribute, path: &str) {
    let string_value = |errs: &mut Errs, v: &str, at: &str| {
        if v.len() > ATTRIBUTE_MAX_VALUE_LENGTH {
            too_long(errs, at, ATTRIBUTE_MAX_VALUE_LENGTH);
        }
    };
    let version_value = |errs: &mut Errs, v: &str, at: &str| {
        if !SEMVER.is_match(v) {
            invalid(
                errs,
                at,
                v,
                "must be a string compatible with semver.org spec 2.0.0",
            );
        }
        string_value(errs, v, at);
    };
    let mut fields = usize::from(a.bool.is_some()) + usize::from(a.int.is_some());
    if let Some(v) = &a.string {
        fields += 1;
        string_value(errs, v, &child(path, "string"));
    }
    if let Some(v) = &a.version {
        fields += 1;
        version_value(errs, v, &child(path, "version"));
    }
    let empty_list = |errs: &mut Errs, name: &str, go_type: &str| {
        invalid_raw(
            errs,
            &child(path, name),
            format!("[]{go_type}{{}}"),
            "must not be empty if specified",
        )
    };
    if let Some(v) = &a.bools {
        fields += 1;
        if v.is_empty() {
            empty_list(errs, "bools", "bool");
        }
    }
    if let Some(v) = &a.ints {
        fields += 1;
        if v.is_empty() {
            empty_list(errs, "ints", "int64");
        }
    }
    if let Some(v) = &a.strings {
        fields += 1;
        if v.is_empty() {
            empty_list(errs, "strings", "string");
        }
        for (i, s) in v.iter().enumerate() {
            string_value(errs, s, &index(&child(path, "strings"), i));
        }
    }
    if let Some(v) = &a.versions {
        fields += 1;
        if v.is_empty() {
            empty_list(errs, "versions", "string");
        }
        for (i, s) in v.iter().enumerate() {
            version_value(errs, s, &index(&child(path, "versions"), i));
        }
    }
    match fields {
        0 => invalid(errs, path, "", "exactly one value must be specified"),
        1 => {}
        _ => invalid_raw(
            errs,
            path,
            serde_json::to_string(a).unwrap_or_default(),
            "exactly one value must be specified",
        ),
    }
}

/// Node selector terms as Go's `%#v` prints the internal type (`[]core.NodeSelectorTerm`).
fn go_terms(terms: &[NodeSelectorTerm]) -> String {
    if terms.is_empty() {
        return "[]core.NodeSelectorTerm(nil)".into();
    }
    let requirements =
        |list: &Option<Vec<NodeSelectorRequirement>>| match list.as_deref() {
            None | Some([]) => "[]core.NodeSelectorRequirement(nil)".to_string(),
            Some(list) => {
                let items: Vec<String> = list
                .iter()
                .map(|r| {
                    let values = match r.values.as_deref() {
                        None | Some([]) => "[]string(nil)".to_string(),
                        Some(v) => format!(
                            "[]string{{{}}}",
                            v.iter().map(|s| format!("{s:?}")).collect::<Vec<_>>().join(", ")
                        ),
                    };
                    format!(
                        "core.NodeSelectorRequirement{{Key:{:?}, Operator:{:?}, Values:{values}}}",
                        r.key, r.operator
                    )
                })
                .collect();
                format!("[]core.NodeSelectorRequirement{{{}}}", items.join(", "))
            }
        };
    let items: Vec<String> = terms
        .iter()
        .map(|t| {
            format!(
                "core.NodeSelectorTerm{{MatchExpressions:{}, MatchFields:{}}}",
                requirements(&t.match_expressions),
                requirements(&t.match_fields)
            )
        })
        .collect();
    format!("[]core.NodeSelectorTerm{{{}}}", items.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn semver_follows_the_spec() {
        for ok in [
            "1.2.3",
            "12.4.0",
            "1.0.0-alpha.1",
            "1.0.0+build.5",
            "0.0.0-0a",
        ] {
            assert!(SEMVER.is_match(ok), "{ok}");
        }
        for bad in ["1.2", "01.2.3", "1.2.3-", "1.2.3-01", "v1.2.3", "١.2.3"] {
            assert!(!SEMVER.is_match(bad), "{bad}");
        }
    }

    #[test]
    fn long_keys_are_truncated_in_the_middle() {
        assert_eq!(truncate_key("short", 96), "short");
        let key = format!("{}/{}", "d".repeat(90), "n".repeat(20));
        let t = truncate_key(&key, 96);
        assert_eq!(t.len(), 96);
        assert!(t.starts_with("ddd") && t.ends_with("nnn") && t.contains("..."));
    }
}
