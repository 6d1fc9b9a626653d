//! Criterion benchmarks of the scheduling cycle on the synthetic GPU cluster
//! (`schedsim::bench`). Throughput is reported in pods per second.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use schedsim::bench;
use schedsim::sched::{SchedulerConfig, schedule};

fn schedule_synthetic(c: &mut Criterion) {
    let mut group = c.benchmark_group("schedule");
    group.sample_size(10);
    for (nodes, pods) in [(500, 2_000), (5_000, 10_000)] {
        let node_list = bench::nodes(nodes);
        let pod_list = bench::pods(pods, 20, 1);
        let config = SchedulerConfig {
            seed: 1,
            ..Default::default()
        };
        group.throughput(Throughput::Elements(pods as u64));
        group.bench_function(format!("{nodes}_nodes_{pods}_pods_20_templates"), |b| {
            b.iter(|| schedule(node_list.clone(), &[], &pod_list, &config))
        });
    }
    group.finish();
}

/// Issue 5's workload: hostname anti-affinity and a preferred zone spread on every pod.
fn schedule_anti_affinity(c: &mut Criterion) {
    let mut group = c.benchmark_group("schedule_anti_affinity");
    group.sample_size(10);
    let (nodes, pods) = (500, 1_000);
    let node_list = bench::nodes(nodes);
    let mut pod_list = bench::pods(pods, 20, 1);
    bench::with_anti_affinity_and_zone_spread(&mut pod_list);
    let config = SchedulerConfig {
        seed: 1,
        ..Default::default()
    };
    group.throughput(Throughput::Elements(pods as u64));
    group.bench_function(format!("{nodes}_nodes_{pods}_pods_20_templates"), |b| {
        b.iter(|| schedule(node_list.clone(), &[], &pod_list, &config))
    });
    group.finish();
}

criterion_group!(benches, schedule_synthetic, schedule_anti_affinity);
criterion_main!(benches);
