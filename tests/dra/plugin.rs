//! DynamicResources' plugin cases (`tests/data/dra/plugin-cases.yaml`, after upstream's
//! `TestPlugin`): each case's scenario is run, every one of its expectations must hold, and the
//! allocated claims it leaves must be the ones the case lists.

use schedsim::load::{LoadOptions, load_files};

use super::cases;
use super::load::tempdir;

#[derive(Debug, serde::Deserialize)]
struct Case {
    name: String,
    scenario: serde_json::Value,
    /// The allocated claims at the end, if the case says.
    #[serde(default)]
    claims: Option<Vec<Claim>>,
}

#[derive(Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Claim {
    name: String,
    devices: Vec<String>,
    reserved_for: Vec<String>,
}

#[test]
fn upstream_plugin_cases_hold() {
    let cases: Vec<Case> = cases(
        include_str!("../data/dra/plugin-cases.yaml"),
        "plugin-cases.yaml",
    );
    assert!(cases.len() >= 12);
    let dir = tempdir("plugin-cases");
    for case in cases {
        let file = dir.join(format!("{}.json", case.name));
        std::fs::write(&file, serde_json::to_string(&case.scenario).unwrap()).unwrap();
        let loaded = load_files(&[file], &LoadOptions::default());
        assert!(
            loaded.errors.is_empty(),
            "{}: {:?}",
            case.name,
            loaded.errors
        );
        let scenario = &loaded.scenarios[0];
        let report = schedsim::simulate(scenario);
        let holds = schedsim::check::holds(scenario, &report);
        assert!(!holds.is_empty(), "{}: no expectation", case.name);
        let pods: Vec<(&str, &str)> = (report.pods.iter())
            .map(|p| (p.name.as_str(), p.message.as_str()))
            .collect();
        assert!(
            holds.iter().all(|h| *h),
            "{}: expectations {holds:?}, pods {pods:?}",
            case.name
        );
        if let Some(want) = case.claims {
            let got: Vec<Claim> = (report.dra_claims.iter())
                .map(|c| Claim {
                    name: c.name.clone(),
                    devices: c.devices.clone(),
                    reserved_for: c.reserved_for.clone(),
                })
                .collect();
            assert_eq!(got, want, "{}", case.name);
        }
    }
}

/// A Coscheduling gang whose members claim devices: members rejected at Permit give their
/// devices back (Unreserve), so the pod after the gang gets them.
#[test]
fn a_rejected_gang_releases_its_devices() {
    let file = super::load::data("gang-claims.yaml");
    let loaded = load_files(&[file], &LoadOptions::default());
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let scenario = &loaded.scenarios[0];
    let report = schedsim::simulate(scenario);
    let holds = schedsim::check::holds(scenario, &report);
    assert_eq!(holds, [true, true, true]);
    let claims: Vec<(&str, usize)> = (report.dra_claims.iter())
        .map(|c| (c.reserved_for[0].as_str(), c.devices.len()))
        .collect();
    assert_eq!(claims, [("solo", 8)]);
}

/// DRAExtendedResource is not simulated: turning it on says so rather than doing nothing.
#[test]
fn the_extended_resource_gate_warns_that_it_is_not_simulated() {
    let dir = tempdir("extended-resource-gate");
    let file = dir.join("gate.yaml");
    std::fs::write(
        &file,
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: gate}\nspec:\n  scheduler: {featureGates: {DRAExtendedResource: true}}\n  nodes: [{apiVersion: v1, kind: Node, metadata: {name: node-0}, status: {allocatable: {cpu: \"1\", pods: \"1\"}}}]\n",
    )
    .unwrap();
    let loaded = load_files(&[file], &LoadOptions::default());
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let warnings = &loaded.scenarios[0].warnings;
    assert!(
        warnings.iter().any(|w| w.starts_with(
            "feature gate DRAExtendedResource: extended resources backed by DRA devices"
        )),
        "{warnings:?}"
    );
}

/// A finished pod's devices come back: the resourceclaim controller deletes its claim, and the
/// pod waiting for the same GPUs gets them at the next step.
#[test]
fn a_finished_pod_releases_its_devices() {
    let file = super::load::data("timeline-release.yaml");
    let loaded = load_files(&[file], &LoadOptions::default());
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let scenario = &loaded.scenarios[0];
    let report = schedsim::simulate(scenario);
    assert_eq!(schedsim::check::holds(scenario, &report), [true, true]);
    let claims: Vec<(&str, usize)> = (report.dra_claims.iter())
        .map(|c| (c.reserved_for[0].as_str(), c.devices.len()))
        .collect();
    assert_eq!(claims, [("second", 8)]);
}
