//! Criterion benchmarks of the scheduling cycle on the synthetic GPU cluster
//! (`schedsim::bench`). Throughput is reported in pods per second.

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use schedsim::bench;
use schedsim::model::Pod;
use schedsim::sched::{SchedulerConfig, schedule};

/// Times scheduling `pods` onto `nodes` synthetic nodes, seed 1.
fn bench_schedule(group: &mut BenchmarkGroup<'_, WallTime>, nodes: usize, pods: &[Pod]) {
    let node_list = bench::nodes(nodes);
    let config = SchedulerConfig {
        seed: 1,
        ..Default::default()
    };
    group.throughput(Throughput::Elements(pods.len() as u64));
    group.bench_function(
        format!("{nodes}_nodes_{}_pods_20_templates", pods.len()),
        |b| b.iter(|| schedule(node_list.clone(), &[], pods, &config)),
    );
}

fn schedule_synthetic(c: &mut Criterion) {
    let mut group = c.benchmark_group("schedule");
    group.sample_size(10);
    for (nodes, pods) in [(500, 2_000), (5_000, 10_000)] {
        bench_schedule(&mut group, nodes, &bench::pods(pods, 20, 1));
    }
    group.finish();
}

/// Issue 5's workload: hostname anti-affinity and a preferred zone spread on every pod.
fn schedule_anti_affinity(c: &mut Criterion) {
    let mut group = c.benchmark_group("schedule_anti_affinity");
    group.sample_size(10);
    let mut pods = bench::pods(1_000, 20, 1);
    bench::with_anti_affinity_and_zone_spread(&mut pods);
    bench_schedule(&mut group, 500, &pods);
    group.finish();
}

criterion_group!(benches, schedule_synthetic, schedule_anti_affinity);
criterion_main!(benches);
