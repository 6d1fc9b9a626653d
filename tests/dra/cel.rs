//! Selectors against upstream's table (`dynamic-resource-allocation/cel/compile_test.go`),
//! transcribed as data into `tests/data/dra/cel-cases.yaml`.

use std::collections::BTreeMap;

use k8s_openapi::api::resource::v1::{DeviceAttribute, DeviceCapacity};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use serde::Deserialize;

use schedsim::dra::cel::{Device, Selector};

const CASES: &str = include_str!("../data/dra/cel-cases.yaml");

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Case {
    name: String,
    expression: String,
    #[serde(default)]
    driver: String,
    #[serde(default)]
    attributes: BTreeMap<String, DeviceAttribute>,
    #[serde(default)]
    capacity: BTreeMap<String, String>,
    #[serde(default)]
    features: Vec<String>,
    #[serde(default)]
    allow_multiple_allocations: Option<bool>,
    /// Upstream's `expectCost`.
    cost: Option<u64>,
    expect: Expect,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Expect {
    #[serde(rename = "match")]
    matches: Option<bool>,
    compile_error: Option<String>,
    runtime_error: Option<String>,
}

/// Whether an upstream error text can be expected verbatim: cel-go's Go type names
/// (`types.Int`) have no counterpart in the `cel` crate's runtime errors, which fail the
/// same expressions in their own words.
fn verbatim(expected: &str) -> bool {
    !(expected.contains("types.") || expected.contains("cel.Semver"))
}

fn run(case: &Case) -> Result<(), String> {
    let capacity: BTreeMap<String, DeviceCapacity> = (case.capacity.iter())
        .map(|(k, v)| {
            let value = Quantity(v.clone());
            (
                k.clone(),
                DeviceCapacity {
                    value,
                    ..Default::default()
                },
            )
        })
        .collect();
    let consumable = case.features.iter().any(|f| f == "DRAConsumableCapacity");
    let device = Device {
        allow_multiple_allocations: consumable
            .then(|| case.allow_multiple_allocations.unwrap_or(false)),
        driver: &case.driver,
        attributes: &case.attributes,
        capacity: &capacity,
    };
    let compiled = Selector::compile(&case.expression);
    if let (Ok(selector), Some(cost)) = (&compiled, case.cost)
        && selector.max_cost() != cost
    {
        return Err(format!(
            "estimated cost {}, upstream {cost}",
            selector.max_cost()
        ));
    }
    let got = compiled.and_then(|s| s.matches(&device));
    let e = &case.expect;
    match (
        &got,
        e.matches,
        e.compile_error.as_ref().or(e.runtime_error.as_ref()),
    ) {
        (Ok(m), Some(want), _) if *m == want => Ok(()),
        (Err(message), None, Some(want)) if !verbatim(want) || message.contains(want.as_str()) => {
            Ok(())
        }
        _ => Err(format!("got {got:?}, want {e:?}")),
    }
}

#[test]
fn selectors_agree_with_upstream_cases() {
    let cases: Vec<Case> = super::cases(CASES, "cel-cases.yaml");
    // List-valued attributes (DRAListTypeAttributes) are not simulated; nor is the
    // environment without `device.allowMultipleAllocations` (DRAConsumableCapacity off under
    // NewExpressions): schedsim's compiler always declares it.
    let simulated = |f: &String| {
        [
            "costLimit=1000000",
            "DRAConsumableCapacity",
            "envType=NewExpressions",
        ]
        .contains(&f.as_str())
    };
    let supported: Vec<&Case> = (cases.iter())
        .filter(|c| c.features.iter().all(simulated))
        .collect();
    let failures: Vec<String> = (supported.iter())
        .filter_map(|c| {
            run(c)
                .err()
                .map(|e| format!("{}: {}: {e}", c.name, c.expression))
        })
        .collect();
    assert!(supported.len() >= 35, "only {} cases", supported.len());
    assert!(
        failures.is_empty(),
        "{} of {} cases fail:\n{}",
        failures.len(),
        supported.len(),
        failures.join("\n")
    );
}
