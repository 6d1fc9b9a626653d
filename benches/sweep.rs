//! Criterion benchmark of a sweep: 20 seeds of the 500-node, 2,000-pod scenario
//! (benches/data/sweep-500x2000.yaml: shuffled arrivals, 1% node failures), on rayon's pool.
//! Each iteration loads the scenario (a few milliseconds) as `schedsim sweep` does.
//! Throughput is reported in runs per second; `schedsim sweep … --seeds 1000` is the
//! scenario-level figure.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use schedsim::load::{self, LoadOptions};
use schedsim::sweep::{self, SweepOptions};

fn sweep_runs(c: &mut Criterion) {
    let options = LoadOptions::default();
    let mut loader = load::SweepLoader::new(&options);
    let (plans, errors) = loader.plans(&["benches/data/sweep-500x2000.yaml".into()], &Vec::new());
    assert!(errors.is_empty(), "{errors:?}");
    let opts = SweepOptions {
        seeds: Some(20),
        ..Default::default()
    };
    let mut group = c.benchmark_group("sweep");
    group.sample_size(10);
    group.throughput(Throughput::Elements(20));
    group.bench_function("500_nodes_2000_pods_20_seeds", |b| {
        b.iter(|| {
            let (report, errors) =
                sweep::run(&plans, &mut loader, &opts, &|| {}, &mut |_| Ok(())).unwrap();
            assert!(errors.is_empty());
            report.scenarios.len()
        })
    });
    group.finish();
}

criterion_group!(benches, sweep_runs);
criterion_main!(benches);
