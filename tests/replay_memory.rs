//! A replay's memory follows the pods in flight, not the trace's length: a 100,000-row trace
//! replays in the same peak memory as a 10,000-row one. Alone in its test binary, so that the
//! process's peak resident memory (VmHWM) is this test's.

mod common;

use std::fmt::Write as _;
use std::path::Path;

use schedsim::load::{self, LoadOptions};

/// A trace of `rows` one-GPU jobs, one every 10 s, each running a minute, and a scenario of
/// 16 eight-GPU nodes replaying it (about six jobs in flight at any time).
fn write_replay(dir: &Path, rows: u64) -> std::path::PathBuf {
    let mut csv = String::from("id,submit,duration,gpus,cpu,memory,queue\n");
    for i in 0..rows {
        let _ = writeln!(csv, "job-{i},{},60,1,2,4,team-{}", i * 10, i % 20);
    }
    std::fs::write(dir.join(format!("trace-{rows}.csv")), csv).unwrap();
    let scenario = format!(
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {{name: flat-{rows}}}\nspec:\n  nodes:\n    - pool: {{count: 16, namePrefix: gpu-, template: {{apiVersion: v1, kind: Node, status: {{allocatable: {{cpu: \"64\", memory: 512Gi, pods: \"110\", nvidia.com/gpu: \"8\"}}}}}}}}\n  replay:\n    trace:\n      file: trace-{rows}.csv\n      columns: {{id: id, arrival: submit, duration: duration, gpus: gpus, cpu: cpu, cpuUnit: cores, memory: memory, memoryUnit: GiB, queue: queue}}\n"
    );
    let file = dir.join(format!("flat-{rows}.yaml"));
    std::fs::write(&file, scenario).unwrap();
    file
}

fn replay(file: &Path) -> u64 {
    let loaded = load::load_files(&[file.to_path_buf()], &LoadOptions::default());
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let report = schedsim::replay::replay(&loaded.scenarios[0], Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    report.summary.pods_finished
}

#[test]
fn peak_memory_does_not_grow_with_the_trace() {
    if !Path::new("/proc/self/status").exists() {
        return; // VmHWM is Linux's
    }
    let dir = common::cli::tempdir("replay-memory");
    let (small, large) = (write_replay(&dir, 10_000), write_replay(&dir, 100_000));
    assert_eq!(replay(&small), 10_000);
    let after_small = common::process::peak_rss_kib("self");
    assert_eq!(replay(&large), 100_000);
    let after_large = common::process::peak_rss_kib("self");
    assert!(
        after_large <= after_small + 4 * 1024,
        "peak RSS grew from {after_small} KiB to {after_large} KiB with a trace ten times longer"
    );
}
