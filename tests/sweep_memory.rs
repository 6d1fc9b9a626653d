//! A sweep's memory does not grow with its number of runs: runs fold into aggregates and
//! their rows stream out a chunk at a time. Alone in its test binary, so that the process's
//! peak resident memory (VmHWM) is this test's.

mod common;

use schedsim::load::{LoadOptions, SweepLoader};
use schedsim::sweep::{self, SweepOptions};

/// Peak resident memory of this process so far, in KiB.
fn peak_rss_kib() -> u64 {
    common::process::peak_rss_kib("self")
}

const TWO_NODES: &str = r#"
apiVersion: schedsim.io/v1alpha1
kind: Scenario
metadata: {name: two}
spec:
  nodes:
    - {apiVersion: v1, kind: Node, metadata: {name: a}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
    - {apiVersion: v1, kind: Node, metadata: {name: b}, status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}}
  workloads:
    - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: c, image: x, resources: {requests: {cpu: "1"}}}]}}
  sweep: {shuffleArrivals: true, nodeFailureProbability: 0.1}
"#;

#[test]
fn peak_memory_does_not_grow_with_the_number_of_runs() {
    if !std::path::Path::new("/proc/self/status").exists() {
        return; // VmHWM is Linux's
    }
    let dir = std::env::temp_dir().join(format!("schedsim-sweep-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("two.yaml");
    std::fs::write(&file, TWO_NODES).unwrap();
    let options = LoadOptions::default();
    let mut loader = SweepLoader::new(&options);
    let (plans, errors) = loader.plans(std::slice::from_ref(&file), &Vec::new());
    assert!(errors.is_empty(), "{errors:?}");
    // One thread: the same allocations at every run (this binary has no other test).
    let _ = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build_global();
    // Every run's row is produced (`keep_runs`) and counted by the sink, never kept.
    let mut sweep_of = |seeds: u32| -> (u64, u64) {
        let opts = SweepOptions {
            seeds: Some(seeds),
            keep_runs: true,
            ..Default::default()
        };
        let mut rows = 0u64;
        let (report, errors) = sweep::run(&plans, &mut loader, &opts, &|| {}, &mut |chunk| {
            rows += chunk.len() as u64;
            Ok(())
        })
        .unwrap();
        assert!(errors.is_empty());
        (rows, report.scenarios[0].variants[0].aggregate.runs)
    };
    // Two chunks of runs reach the steady state; sixteen times as many stay there.
    assert_eq!(sweep_of(8_192), (8_192, 8_192));
    let after_few = peak_rss_kib();
    assert_eq!(sweep_of(131_072), (131_072, 131_072));
    // VmHWM comes from approximate per-CPU counters and can read a little lower later.
    let grown = peak_rss_kib().saturating_sub(after_few);
    eprintln!("peak RSS grew by {grown} KiB from 8,192 to 131,072 runs");
    // Holding every run's row would take ~30 MiB more, a list of the runs to do ~3 MiB; the
    // allocator's own noise, under a loaded machine, reaches ~1 MiB.
    assert!(
        grown < 2048,
        "peak RSS grew by {grown} KiB from 8,192 to 131,072 runs"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
