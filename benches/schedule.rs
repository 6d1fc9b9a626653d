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

/// Issue 29's figure: recording one pod's cycle for `schedsim explain` on 5,000 nodes, the
/// difference between the two runs (the last pod, pending: every node judged, its
/// preemption's dry run, the PreFilter counts); and recording every pod.
fn schedule_explained(c: &mut Criterion) {
    let mut group = c.benchmark_group("explain");
    group.sample_size(10);
    let (nodes, pods) = (bench::nodes(5_000), bench::pods(10_000, 20, 1));
    let last = pods.last().map(Pod::key).into_iter().collect();
    let all = pods.iter().map(Pod::key).collect();
    for (name, explain) in [
        ("plain", None),
        ("last_pod", Some(last)),
        ("every_pod", Some(all)),
    ] {
        let config = SchedulerConfig {
            seed: 1,
            explain: explain.map(std::sync::Arc::new),
            drop_node_verdicts: false,
            ..Default::default()
        };
        group.bench_function(format!("5000_nodes_10000_pods_{name}"), |b| {
            b.iter(|| schedule(nodes.clone(), &[], &pods, &config))
        });
    }
    group.finish();
}

criterion_group!(
    benches,
    schedule_synthetic,
    schedule_anti_affinity,
    schedule_explained
);
criterion_main!(benches);
