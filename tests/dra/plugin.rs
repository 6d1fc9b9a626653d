//! DynamicResources' plugin cases (`tests/data/dra/plugin-cases.yaml`, after upstream's
//! `TestPlugin`): each case's scenario is run, every one of its expectations must hold, and the
//! allocated claims it leaves must be the ones the case lists.

use schedsim::load::{LoadOptions, load_files};

use super::cases;
use super::load::tempdir;

#[derive(Debug, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Case {
    name: String,
    scenario: serde_json::Value,
    /// The allocated claims at the end, if the case says.
    #[serde(default)]
    claims: Option<Vec<Claim>>,
    /// The first pod's `extendedResourceClaimStatus` at the end, if the case says.
    #[serde(default)]
    pod_status: Option<serde_json::Value>,
}

#[derive(Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct Claim {
    name: String,
    devices: Vec<String>,
    reserved_for: Vec<String>,
}

/// Runs every case of a table of scenarios (`plugin-cases.yaml`'s shape): each must load,
/// have an expectation, and meet all of them and what the case says of claims and the pod.
pub(crate) fn run_cases(text: &str, file: &str, at_least: usize) {
    let cases: Vec<Case> = cases(text, file);
    assert!(cases.len() >= at_least, "{file}: {} cases", cases.len());
    let dir = tempdir(file);
    for case in cases {
        let path = dir.join(format!("{}.json", case.name));
        std::fs::write(&path, serde_json::to_string(&case.scenario).unwrap()).unwrap();
        let loaded = load_files(&[path], &LoadOptions::default());
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
        if let Some(want) = case.pod_status {
            let got = serde_json::to_value(&report.pods[0].extended_resource_claim_status).unwrap();
            assert_eq!(got, want, "{}", case.name);
        }
    }
}

#[test]
fn upstream_plugin_cases_hold() {
    run_cases(
        include_str!("../data/dra/plugin-cases.yaml"),
        "plugin-cases.yaml",
        12,
    );
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
