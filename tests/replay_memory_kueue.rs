//! A replay's memory follows the cluster and the jobs in flight, not the trace's length, also
//! when its jobs go through Kueue and each labels its pods with its own name (the scheduler
//! then meets a new label set per job; `tests/replay_memory.rs` has the unlabelled case).
//! Alone in its test binary, so that the process's peak resident memory (VmHWM) is this test's.

mod common;

use common::process::peak_rss_kib;
use common::replay::load;

/// Eight nodes of eight GPUs behind one ClusterQueue that holds them all; the trace's jobs go
/// through Kueue, so each labels its pod with its own job name (as the Job controller does).
const SCENARIO: &str = r#"
apiVersion: schedsim.io/v1alpha1
kind: Scenario
metadata: {name: memory}
spec:
  nodes:
    - pool:
        count: 8
        namePrefix: gpu-
        template:
          apiVersion: v1
          kind: Node
          status:
            allocatable: {cpu: "64", memory: 256Gi, pods: "110", nvidia.com/gpu: "8"}
  objects:
    - {apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {name: gpu}}
    - apiVersion: kueue.x-k8s.io/v1beta2
      kind: ClusterQueue
      metadata: {name: team}
      spec:
        namespaceSelector: {}
        resourceGroups:
          - coveredResources: [nvidia.com/gpu]
            flavors: [{name: gpu, resources: [{name: nvidia.com/gpu, nominalQuota: 64}]}]
    - {apiVersion: v1, kind: Namespace, metadata: {name: team}}
    - {apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: default, namespace: team}, spec: {clusterQueue: team}}
  replay:
    trace:
      file: trace.csv
      localQueue: default
      columns: {id: job, arrival: submit, duration: run, gpus: gpus, queue: team}
"#;

/// The peak memory after replaying `jobs` jobs of one GPU for 40 s, one every 5 s (about
/// eight in flight at any time), each of its own spec (the GPU count cycles, the name is
/// its own).
fn replay_jobs(dir: &std::path::Path, jobs: usize) -> u64 {
    let mut csv = String::from("job,submit,run,gpus,team\n");
    for i in 0..jobs {
        csv += &format!("job-{i},{},40,{},team\n", i * 5, 1 + i % 4);
    }
    std::fs::write(dir.join("trace.csv"), csv).unwrap();
    let file = dir.join("memory.yaml");
    std::fs::write(&file, SCENARIO).unwrap();
    // No sink: the records would be this test's memory, not the replay's.
    let report = schedsim::replay::replay(&load(&file), Default::default())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(report.summary.pods_finished as usize, jobs);
    peak_rss_kib("self")
}

#[test]
fn peak_memory_does_not_grow_with_a_trace_of_kueue_jobs() {
    if !std::path::Path::new("/proc/self/status").exists() {
        return; // VmHWM is Linux's
    }
    let dir = std::env::temp_dir().join(format!("schedsim-replay-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // The first replay reaches the steady state; the second, five times as long, must not
    // need more (a kilobyte kept per job would be 16 MB).
    let short = replay_jobs(&dir, 4_000);
    let long = replay_jobs(&dir, 20_000);
    assert!(
        long <= short + 4 * 1024,
        "peak memory grew from {short} KiB to {long} KiB with a trace five times as long"
    );
}
