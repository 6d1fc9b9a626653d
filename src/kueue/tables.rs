//! What the ports of Kueue's test tables share: running a table of cases (one per YAML
//! document, a `shared:` document the fixture of the cases after it), quantities in Kueue's
//! units, and pod sets as the tables write them.

use std::collections::BTreeMap;
use std::path::Path;

use k8s_openapi::api::core::v1::{Affinity, Toleration};
use serde::Deserialize;

use super::api::FlavorResource;
use super::assigner::PodSet;
use crate::model::quantity::Quantity;
use crate::model::resources;

/// Runs every case of an upstream table (`file`, one case per document; a `shared:` document
/// sets the fixture of the cases after it) and gives how many ran and every problem found,
/// each prefixed with its case's name.
pub(super) fn run_table<S, C>(
    file: &str,
    text: &str,
    name: impl Fn(&C) -> &str,
    run: impl Fn(&S, &C) -> Vec<String>,
) -> (usize, Vec<String>)
where
    S: serde::de::DeserializeOwned + Default,
    C: serde::de::DeserializeOwned,
{
    let docs =
        crate::yaml::parse_documents(text.to_string(), Path::new(file)).expect("case file parses");
    let mut shared = S::default();
    let (mut ran, mut problems) = (0, Vec::new());
    for doc in docs.iter().filter(|d| !d.value.is_null()) {
        if doc.value.get("shared").is_some() {
            let d: SharedDoc<S> = serde_json::from_value(doc.value.clone()).expect("shared shape");
            shared = d.shared;
            continue;
        }
        let case: C = serde_json::from_value(doc.value.clone())
            .unwrap_or_else(|e| panic!("{file}: case shape: {e}: {}", doc.value["name"]));
        ran += 1;
        for p in run(&shared, &case) {
            problems.push(format!("{file}: {}: {p}", name(&case)));
        }
    }
    (ran, problems)
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SharedDoc<S> {
    shared: S,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(super) struct PodSetSpec {
    name: String,
    count: i64,
    #[serde(default)]
    requests: BTreeMap<String, String>,
    #[serde(default)]
    tolerations: Vec<Toleration>,
    #[serde(default)]
    node_selector: BTreeMap<String, String>,
    #[serde(default)]
    affinity: Option<Affinity>,
}

pub(super) fn pod_set(p: &PodSetSpec) -> PodSet {
    PodSet {
        name: p.name.as_str().into(),
        count: p.count,
        requests: (p.requests.iter())
            .map(|(r, q)| (r.clone(), amount(r, q)))
            .collect(),
        tolerations: p.tolerations.clone(),
        node_selector: p.node_selector.clone().into(),
        affinity: p.affinity.clone().into(),
    }
}

/// A quantity in Kueue's units for the resource (cpu in millis): `resources.ResourceValue`,
/// which saturates at the int64 bounds (`SafeMilliValue`, `SafeValue` in pkg/util/math).
pub(super) fn amount(resource: &str, q: &str) -> i64 {
    let q: Quantity = q.parse().expect("quantity");
    let (unit, value): (&str, fn(&Quantity) -> i64) = if resource == resources::CPU {
        ("m", Quantity::milli_value)
    } else {
        ("", Quantity::value)
    };
    let bound = |v: i64| format!("{v}{unit}").parse::<Quantity>().expect("bound");
    if q.cmp_value(&bound(i64::MAX)).is_gt() {
        i64::MAX
    } else if q.cmp_value(&bound(i64::MIN)).is_lt() {
        i64::MIN
    } else {
        value(&q)
    }
}

pub(super) fn amounts(map: &BTreeMap<String, String>) -> BTreeMap<FlavorResource, i64> {
    (map.iter())
        .map(|(k, v)| {
            let fr = flavor_resource(k);
            let a = amount(&fr.1, v);
            (fr, a)
        })
        .collect()
}

pub(super) fn flavor_resource(key: &str) -> FlavorResource {
    let (f, r) = key.split_once('/').expect("FLAVOR/RESOURCE");
    (f.to_string(), r.to_string())
}
