//! `generate --trace` streams: planning and writing a trace of 200,000 pods takes the same
//! peak memory as one of 10,000. Alone in its test binary, so that the process's peak resident
//! memory (VmHWM) is this test's.

mod common;

use std::path::Path;

use schedsim::generate::trace::{TraceBench, TracePlan};

/// Plans and writes (to nowhere) a 30-day trace of `pods` pods on `nodes`; returns its jobs.
fn write(nodes: &[schedsim::model::Node], pods: u64) -> u64 {
    let bench = TraceBench {
        pods,
        days: 30,
        queues: 20,
        load_percent: 75,
        seed: 1,
    };
    let plan = TracePlan::new(nodes, &bench).unwrap();
    let summary = plan.write_csv(&mut std::io::sink()).unwrap();
    assert_eq!(summary.pods, pods);
    summary.jobs
}

#[test]
fn writing_a_trace_takes_flat_memory() {
    if !Path::new("/proc/self/status").exists() {
        return; // VmHWM is Linux's
    }
    let nodes = schedsim::bench::nodes(5000);
    assert!(write(&nodes, 10_000) > 9_000);
    let after_few = common::process::peak_rss_kib("self");
    assert!(write(&nodes, 200_000) > 180_000);
    let grown = common::process::peak_rss_kib("self").saturating_sub(after_few);
    eprintln!("peak RSS grew by {grown} KiB from 10,000 to 200,000 pods");
    // Holding the jobs would take several MB (200,000 draws of ~40 bytes, or their rows of
    // ~60 bytes); the allocator's own noise on a loaded machine reaches ~1 MiB.
    assert!(
        grown < 2048,
        "peak RSS grew by {grown} KiB from 10,000 to 200,000 pods"
    );
}
