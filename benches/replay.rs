//! Criterion benchmark of `schedsim replay`: the bundled openb default trace (8,152 pods with
//! their real arrival and end times on 1,523 nodes, replayed to the end) and the bundled
//! two-day GPU trace (396 jobs, gangs and preemptions, on 16 nodes). The scenario is loaded
//! once; each iteration replays it with no sinks. Throughput is in pods per second; the
//! whole-process figure is `/usr/bin/time schedsim replay scenarios/replay/openb-default.yaml`.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use schedsim::load::{self, LoadOptions};
use schedsim::replay::{self, Sinks};

fn replays(c: &mut Criterion) {
    let mut group = c.benchmark_group("replay");
    group.sample_size(10);
    for (name, file) in [
        ("openb_default", "scenarios/replay/openb-default.yaml"),
        (
            "two_day_gpu_jobs",
            "scenarios/replay/gpu-capacity-sweep.yaml",
        ),
    ] {
        let loaded = load::load_files(&[file.into()], &LoadOptions::default());
        assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
        let scenario = &loaded.scenarios[0];
        let pods = replay::replay(scenario, Sinks::default())
            .expect("the bundled replay runs")
            .summary
            .pods_arrived;
        group.throughput(Throughput::Elements(pods));
        group.bench_function(name, |b| {
            b.iter(|| {
                let report = replay::replay(scenario, Sinks::default()).unwrap();
                report.summary.pods_finished
            })
        });
    }
    group.finish();
}

// No plots: the machine has no fonts for plotters' summary charts.
criterion_group! {
    name = benches;
    config = Criterion::default().without_plots();
    targets = replays
}
criterion_main!(benches);
