//! Terminating pods (`metadata.deletionTimestamp` set, as `kubectl get pods` dumps hold them)
//! in the plugins that read bound pods: they hold resources and count for InterPodAffinity
//! (`tests/data/terminating/plugins.yaml`); PodTopologySpread's cases are in
//! `tests/pod_topology_spread.rs`, preemption's in `tests/preemption.rs`.

use std::path::PathBuf;

use schedsim::load::{self, LoadOptions};

#[test]
fn terminating_pods_count_where_upstream_counts_them() {
    let file = PathBuf::from("tests/data/terminating/plugins.yaml");
    let loaded = load::load_files(&[file], &LoadOptions::default());
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    assert_eq!(loaded.scenarios.len(), 4);
    let mut failures = Vec::new();
    for s in &loaded.scenarios {
        let report = schedsim::simulate(s);
        for v in schedsim::check::check(s, &report) {
            if !v.met() {
                failures.push(format!("{}: {:?}", s.name, v.failures));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
