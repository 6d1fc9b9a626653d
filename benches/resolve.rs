//! Criterion benchmark of resolving TrainJobs (three overrides each) against the shipped
//! Kubeflow runtimes into pods. Throughput is reported in TrainJobs per second.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use schedsim::bench;
use schedsim::features::FeatureGates;
use schedsim::resolve::build::BuildOptions;
use schedsim::resolve::{InitializerLifecycle, train_job_pods};

fn resolve_train_jobs(c: &mut Criterion) {
    let runtimes = bench::shipped_runtimes().expect("fixtures/runtimes");
    let names: Vec<String> = bench::SHIPPED_RUNTIMES
        .iter()
        .map(|s| s.to_string())
        .collect();
    let jobs = bench::train_jobs(1_000, &names, 1);
    let opts = BuildOptions {
        overrides: true,
        track: false,
        clock: schedsim::resolve::build::DEFAULT_CLOCK,
    };
    let gates = FeatureGates::default();
    let mut group = c.benchmark_group("resolve");
    group.sample_size(10);
    group.throughput(Throughput::Elements(jobs.len() as u64));
    group.bench_function("1000_trainjobs_3_overrides", |b| {
        b.iter(|| {
            jobs.iter()
                .map(|j| {
                    train_job_pods(j, &runtimes, opts, &gates, InitializerLifecycle::Complete)
                        .map(|p| p.pods.len())
                        .unwrap_or(0)
                })
                .sum::<usize>()
        })
    });
    group.finish();
}

criterion_group!(benches, resolve_train_jobs);
criterion_main!(benches);
