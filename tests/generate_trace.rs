//! `schedsim generate --trace`: the synthetic replay trace reads back through the trace reader
//! with the mapping its scenario writes, row for row; its counts, GPU demand and queues are as
//! asked; the same seed writes the same bytes; counts past the limits are refused.

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::cli::{schedsim, tempdir};
use schedsim::load::scenario::ScenarioDoc;
use schedsim::load::{LoadOptions, load_files};
use schedsim::trace::{Outcome, TraceColumns, TraceRecord};

/// Runs `generate --trace` with `args` into `dir`; returns its stdout.
fn generate(dir: &Path, args: &[&str]) -> String {
    let mut all = vec!["generate", "--trace", "--out", dir.to_str().unwrap()];
    all.extend_from_slice(args);
    let o = schedsim(&all);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    String::from_utf8(o.stdout).unwrap()
}

/// The column mapping `trace-scenario.yaml` gives in `spec.replay.trace`, with its file.
fn mapping(dir: &Path) -> (String, TraceColumns) {
    let docs = schedsim::yaml::read_documents(&dir.join("trace-scenario.yaml")).unwrap();
    let doc: ScenarioDoc = serde_json::from_value(docs[0].value.clone()).unwrap();
    let trace = doc.spec.replay.unwrap().trace.unwrap();
    assert_eq!(
        trace.gpu_model_label.as_deref(),
        Some("nvidia.com/gpu.product")
    );
    (trace.file, trace.columns.unwrap())
}

/// Every record of the generated trace, read as the replay will read it.
fn read_back(dir: &Path) -> (Vec<TraceRecord>, schedsim::trace::Symbols) {
    let (file, columns) = mapping(dir);
    let mut reader = schedsim::trace::open(&dir.join(file), &columns).unwrap();
    let mut records = Vec::new();
    for record in reader.by_ref() {
        records.push(record.unwrap());
    }
    assert!(reader.warnings().is_empty(), "{:?}", reader.warnings());
    (records, reader.symbols().clone())
}

const SMALL: &[&str] = &[
    "--nodes",
    "100",
    "--trace-pods",
    "20000",
    "--trace-days",
    "3",
    "--kueue-queues",
    "6",
];

#[test]
fn a_generated_trace_reads_back_as_asked() {
    let dir = tempdir("trace");
    let stdout = generate(&dir, SMALL);
    let (records, symbols) = read_back(&dir);
    // Counts: 20,000 pods in all, a gang's row counting its pods.
    let pods: u64 = records.iter().map(|r| u64::from(r.nodes)).sum();
    assert_eq!(pods, 20_000);
    assert!(
        stdout.contains(&format!("{} jobs, 20000 pods over 3 days", records.len())),
        "{stdout}"
    );
    // Sorted by arrival (the reader refuses otherwise), inside the three days, every run
    // finished and at least a minute long.
    let span = 3 * 86_400 * 1000;
    assert!(records.iter().all(|r| r.arrival < span));
    assert!(records.last().unwrap().arrival > span * 9 / 10);
    for r in &records {
        assert_eq!(r.outcome, Outcome::Finished, "{}", r.id);
        assert!(r.duration().unwrap() >= 60_000, "{}", r.id);
        // Resources split evenly over the gang's pods.
        assert_eq!(r.gpu_count % r.nodes, 0, "{}", r.id);
        assert_eq!(r.cpu_milli % u64::from(r.nodes), 0, "{}", r.id);
        assert_eq!(r.memory_bytes % u64::from(r.nodes), 0, "{}", r.id);
        let per_pod = r.gpu_count / r.nodes;
        assert!([1, 2, 4, 8].contains(&per_pod), "{}: {per_pod} GPUs", r.id);
        assert!(r.nodes == 1 || per_pod == 8, "gangs are of 8-GPU pods");
        assert_eq!(r.gpu_milli, 1000);
        let class = symbols.name(r.class);
        assert_eq!(class == "train", r.nodes > 1, "{}: {class}", r.id);
        assert!(matches!(symbols.name(r.priority), "high" | "low"));
    }
    // The mix: most jobs one GPU, some TrainJob gangs, every model asked for.
    let one_gpu = records.iter().filter(|r| r.gpu_count == 1).count();
    assert!(
        one_gpu * 2 > records.len(),
        "{one_gpu} of {}",
        records.len()
    );
    assert!(records.iter().any(|r| r.nodes >= 4));
    let models: BTreeMap<&str, usize> = records.iter().fold(BTreeMap::new(), |mut m, r| {
        *m.entry(symbols.name(r.gpu_models)).or_default() += 1;
        m
    });
    assert_eq!(
        models.keys().copied().collect::<Vec<_>>(),
        [
            "NVIDIA-A100-SXM4-40GB",
            "NVIDIA-H100-80GB-HBM3",
            "NVIDIA-L4",
            "Tesla-T4"
        ]
    );
    // Six queues, the first (Zipf) busiest, each with a namespace, a LocalQueue and a
    // ClusterQueue in the scenario.
    let mut queues: BTreeMap<&str, usize> = BTreeMap::new();
    for r in &records {
        *queues.entry(symbols.name(r.queue)).or_default() += 1;
    }
    let names: Vec<&str> = queues.keys().copied().collect();
    assert_eq!(
        names,
        [
            "team-00", "team-01", "team-02", "team-03", "team-04", "team-05"
        ]
    );
    assert!(queues["team-00"] > 2 * queues["team-05"], "{queues:?}");
    let mut loaded = load_files(&[dir.join("trace-scenario.yaml")], &LoadOptions::default());
    let errors: Vec<String> = loaded.errors.iter().map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let scenario = loaded.scenarios.remove(0);
    assert_eq!(scenario.nodes.len(), 100);
    // No taint keeps a row's pod, which has no toleration, off its GPU nodes.
    assert!(scenario.nodes.iter().all(|n| n.taints.is_empty()));
    let kueue = scenario.kueue.as_ref().expect("Kueue objects");
    assert_eq!(kueue.admission.queues.len(), 6);
}

/// The GPU time the trace asks for is `--trace-load` percent of the cluster's GPUs over its
/// days, pool by pool (the README's band is 60–90 %; the default 75 %).
#[test]
fn the_gpu_demand_is_the_load_asked_for() {
    for load in ["75", "60"] {
        let dir = tempdir(&format!("trace-load-{load}"));
        generate(&dir, &[SMALL, &["--trace-load", load]].concat());
        let (records, symbols) = read_back(&dir);
        let nodes = schedsim::bench::nodes(100);
        let mut capacity: BTreeMap<&str, f64> = BTreeMap::new();
        for n in &nodes {
            if let Some(model) = n.labels.get("nvidia.com/gpu.product") {
                *capacity.entry(model).or_default() += n.allocatable["nvidia.com/gpu"] as f64;
            }
        }
        let mut asked: BTreeMap<&str, f64> = BTreeMap::new();
        for r in &records {
            let gpu_ms = f64::from(r.gpu_count) * r.duration().unwrap() as f64;
            *asked.entry(symbols.name(r.gpu_models)).or_default() += gpu_ms;
        }
        let span_ms = 3.0 * 86_400.0 * 1000.0;
        let want: f64 = load.parse::<f64>().unwrap() / 100.0;
        for (model, gpu_ms) in &asked {
            let demand = gpu_ms / (capacity[model] * span_ms);
            assert!(
                (demand - want).abs() < 0.01,
                "{model}: {demand:.3} of its GPUs, asked {want}"
            );
        }
    }
}

#[test]
fn the_same_seed_writes_the_same_bytes() {
    let args = ["--nodes", "60", "--trace-pods", "3000", "--trace-days", "2"];
    let (a, b, c) = (tempdir("trace-a"), tempdir("trace-b"), tempdir("trace-c"));
    let one = common::cli::ok_with_threads(
        &[
            &["generate", "--trace", "--out", a.to_str().unwrap()],
            &args[..],
        ]
        .concat(),
        "1",
    );
    let two = common::cli::ok_with_threads(
        &[
            &["generate", "--trace", "--out", b.to_str().unwrap()],
            &args[..],
        ]
        .concat(),
        "2",
    );
    assert_eq!(
        String::from_utf8_lossy(&one).replace(a.to_str().unwrap(), "DIR"),
        String::from_utf8_lossy(&two).replace(b.to_str().unwrap(), "DIR")
    );
    for f in ["trace.csv", "trace-scenario.yaml"] {
        assert_eq!(
            std::fs::read(a.join(f)).unwrap(),
            std::fs::read(b.join(f)).unwrap(),
            "{f}"
        );
    }
    generate(&c, &[&args[..], &["--seed", "2"]].concat());
    assert_ne!(
        std::fs::read(a.join("trace.csv")).unwrap(),
        std::fs::read(c.join("trace.csv")).unwrap()
    );
}

/// Counts past the limits, and a cluster with no GPU node, are refused before anything is
/// written.
#[test]
fn bad_counts_are_refused_up_front() {
    let dir = tempdir("trace-refused");
    let out = dir.join("generated");
    let out = out.to_str().unwrap();
    let cases: [(&[&str], &str); 4] = [
        (
            &["--trace-pods", "20000000"],
            "--trace-pods 20000000 exceeds schedsim's limit of 10000000 pods in one scenario (raise it with the environment variable SCHEDSIM_MAX_PODS=N)",
        ),
        (
            &["--nodes", "2000000"],
            "--nodes 2000000 exceeds schedsim's limit of 1000000 nodes in one scenario (raise it with the environment variable SCHEDSIM_MAX_NODES=N)",
        ),
        (
            &["--nodes", "4"],
            "--nodes 4 makes no GPU node: the trace needs one (--nodes 5 or more)",
        ),
        (
            &["--trace-days", "0"],
            "invalid value '0' for '--trace-days",
        ),
    ];
    for (args, expected) in cases {
        let o = schedsim(&[&["generate", "--trace", "--out", out], args].concat());
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    assert!(!dir.join("generated").exists());
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]
    /// For any cluster, count, span, load and seed: the trace reads back sorted inside its span
    /// with exactly the pods asked for, and each pool that got jobs is asked for at least the
    /// GPU time asked for — exactly that, up to rounding, unless the one-minute floor on run
    /// times lifted some of its runs.
    #[test]
    fn any_trace_reads_back_with_its_pods_and_load(
        nodes in 5usize..120,
        pods in 0u64..3000,
        days in 1u32..5,
        load in 10u32..150,
        seed in 0u64..1000,
    ) {
        use schedsim::generate::trace::{TraceBench, TracePlan, columns};
        let cluster = schedsim::bench::nodes(nodes);
        let bench = TraceBench { pods, days, queues: 7, load_percent: load, seed };
        let plan = TracePlan::new(&cluster, &bench).unwrap();
        let mut csv = Vec::new();
        let summary = plan.write_csv(&mut csv).unwrap();
        let mut reader = schedsim::trace::TraceReader::new(&csv[..], Path::new("trace.csv"), &columns()).unwrap();
        let records: Vec<TraceRecord> = reader.by_ref().map(|r| r.unwrap()).collect();
        proptest::prop_assert_eq!(records.iter().map(|r| u64::from(r.nodes)).sum::<u64>(), pods);
        proptest::prop_assert_eq!(records.len() as u64, summary.jobs);
        let span_ms = u64::from(days) * 86_400_000;
        proptest::prop_assert!(records.iter().all(|r| r.arrival < span_ms));
        let mut pools: BTreeMap<&str, (f64, bool)> = BTreeMap::new();
        for r in &records {
            let pool = pools.entry(reader.symbols().name(r.gpu_models)).or_insert((0.0, false));
            pool.0 += f64::from(r.gpu_count) * r.duration().unwrap() as f64;
            pool.1 |= r.duration() == Some(60_000);
        }
        let want = f64::from(load) / 100.0;
        for (model, (gpu_ms, floored)) in pools {
            let gpus: i64 = (cluster.iter())
                .filter(|n| n.labels.get("nvidia.com/gpu.product").map(String::as_str) == Some(model))
                .map(|n| n.allocatable["nvidia.com/gpu"])
                .sum();
            let demand = gpu_ms / (gpus as f64 * span_ms as f64);
            proptest::prop_assert!(demand >= want * 0.99, "{}: {} < {}", model, demand, want);
            proptest::prop_assert!(floored || demand <= want * 1.01, "{}: {} > {}", model, demand, want);
        }
    }
}
