//! Replaying a scenario file in a test: its report and every pod's record.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use schedsim::load::{self, LoadOptions, Scenario};
use schedsim::replay::{self, PodRecord, ReplayReport, Sinks};

/// The one scenario of `file`, loaded without errors, as `schedsim replay` loads it.
pub fn load(file: &Path) -> Scenario {
    let options = LoadOptions {
        kueue_over_time: true,
        ..LoadOptions::default()
    };
    let loaded = load::load_files(&[file.to_path_buf()], &options);
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    loaded.scenarios.into_iter().next().expect("one scenario")
}

/// Replays the scenario file; returns the report and every pod's record, by `namespace/name`.
pub fn replay_file(file: &Path) -> (ReplayReport, BTreeMap<String, PodRecord>) {
    replay_scenario(&load(file))
}

/// Replays the scenario; returns the report and every pod's record, by `namespace/name`.
pub fn replay_scenario(scenario: &Scenario) -> (ReplayReport, BTreeMap<String, PodRecord>) {
    let mut records = BTreeMap::new();
    let mut keep = |r: &PodRecord| {
        records.insert(format!("{}/{}", r.namespace, r.name), r.clone());
    };
    let sinks = Sinks {
        pod_record: Some(&mut keep),
        ..Sinks::default()
    };
    let report = replay::replay(scenario, sinks).unwrap_or_else(|e| panic!("{e}"));
    (report, records)
}

/// A path in the repository.
pub fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}
