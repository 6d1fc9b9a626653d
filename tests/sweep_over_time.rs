//! `schedsim sweep` over time: a scenario with `spec.replay` has each variant × seed replayed;
//! its figures per variant as worked out by hand and as `replay` gives them for the variant,
//! byte-identical output at one and two threads, shards that merge into the unsharded sweep,
//! per-variant replay expectations, and the box charts.

mod common;

use std::path::Path;

use common::cli::{chart_svg, schedsim, tempdir};
use schedsim::load::{self, LoadOptions};
use serde_json::Value;

const SCENARIO: &str = "tests/data/replay/sweep-extra-node.yaml";
const MINUTE: u64 = 60_000;

/// `schedsim ARGS` with `threads` rayon threads: its exit code and stdout.
fn sweep(args: &[&str], threads: &str) -> (Option<i32>, String) {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_schedsim"))
        .args(args)
        .env("RAYON_NUM_THREADS", threads)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code(), String::from_utf8(o.stdout).unwrap())
}

fn json(args: &[&str], out: &Path) -> Value {
    let mut args = args.to_vec();
    args.extend(["--format", "json", "--out", out.to_str().unwrap()]);
    let (_, text) = sweep(&args, "2");
    serde_json::from_str(&text).unwrap()
}

/// The histogram of one figure of a variant: value → runs.
fn histogram(variant: &Value, group: Option<&str>, figure: &str) -> Vec<(u64, u64)> {
    let figures = match group {
        Some(g) => &variant["aggregate"]["groups"][g],
        None => &variant["aggregate"]["figures"],
    };
    let h = figures[figure]
        .as_object()
        .unwrap_or_else(|| panic!("no {figure} in {figures}"));
    h.iter()
        .map(|(v, n)| (v.parse().unwrap(), n.as_u64().unwrap()))
        .collect()
}

/// Two variants (two one-GPU nodes, or three) × 3 seeds, the waits worked out by hand in the
/// scenario's comment; the nodes and pods are alike, so every seed gives the same figures.
/// Each variant's figures are also those `replay` gives for the variant's scenario.
#[test]
fn each_variant_replays_with_the_waits_worked_out_by_hand() {
    let out = tempdir("sweep-time-hand");
    let v = json(&["sweep", SCENARIO], &out);
    assert_eq!(v["scenarios"].as_array().map(Vec::len), Some(0), "{v}");
    let replays = v["replays"].as_array().expect("replays");
    assert_eq!(replays.len(), 1);
    let variants = replays[0]["variants"].as_array().unwrap();
    let names: Vec<&str> = variants
        .iter()
        .map(|v| v["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["nodes=two", "nodes=three"]);
    let (two, three) = (&variants[0], &variants[1]);
    let all3 = |value: u64| vec![(value, 3)];
    for (variant, p50, p90, max, team_b_p50, allocation) in [
        (two, 9 * MINUTE, 17 * MINUTE, 17 * MINUTE, 13 * MINUTE, 9762),
        (three, 0, 7 * MINUTE, 7 * MINUTE, 4 * MINUTE, 6833),
    ] {
        assert_eq!(variant["aggregate"]["runs"], 3);
        assert_eq!(histogram(variant, None, "podWaitP50Ms"), all3(p50));
        assert_eq!(histogram(variant, None, "podWaitP90Ms"), all3(p90));
        assert_eq!(histogram(variant, None, "podWaitMaxMs"), all3(max));
        assert_eq!(histogram(variant, None, "jobsFinished"), all3(5));
        assert_eq!(histogram(variant, None, "pendingAtEnd"), all3(0));
        assert_eq!(
            histogram(variant, None, "gpuAllocationBasisPoints"),
            all3(allocation)
        );
        // 41 GPU-minutes held in either; of 42 or of 60.
        assert_eq!(histogram(variant, None, "gpuMilliHoursUsed"), all3(683));
        assert_eq!(
            histogram(variant, Some("queue=team-b"), "podWaitP50Ms"),
            all3(team_b_p50)
        );
        assert_eq!(
            histogram(variant, Some("queue=team-b"), "jobsFinished"),
            all3(2)
        );
        let summary = &variant["summary"]["figures"];
        assert_eq!(summary["podWaitP50Ms"]["p50"], p50 as f64);
        assert_eq!(
            summary["gpuAllocationPercent"]["p50"],
            allocation as f64 / 100.0
        );
    }
    assert_eq!(histogram(two, None, "gpuMilliHoursIdle"), all3(17));
    assert_eq!(histogram(three, None, "gpuMilliHoursIdle"), all3(317));
    // `replay` on each variant's scenario agrees.
    let (scenarios, errors) = load::load_sweeps(
        &[Path::new(env!("CARGO_MANIFEST_DIR")).join(SCENARIO)],
        &LoadOptions::default(),
        &Vec::new(),
    );
    assert!(errors.is_empty(), "{errors:?}");
    for (variant, swept) in scenarios[0].variants.iter().zip(variants) {
        let report = schedsim::replay::replay(&variant.scenario, Default::default()).unwrap();
        let w = &report.summary.pod_wait;
        for (figure, want) in [
            ("podWaitP50Ms", w.p50),
            ("podWaitP90Ms", w.p90),
            ("podWaitP99Ms", w.p99),
            ("podWaitMaxMs", w.max),
            ("jobWaitP50Ms", report.summary.job_wait.p50),
            ("jobWaitP95Ms", report.summary.job_wait.p95),
        ] {
            assert_eq!(
                histogram(swept, None, figure),
                all3(want.unwrap()),
                "{} {figure}",
                variant.name
            );
        }
    }
}

/// The same sweep, with pool jitter and shuffled arrivals so that runs differ, gives the same
/// bytes (report and run rows) at one and at two threads.
#[test]
fn replay_sweeps_are_byte_identical_at_one_and_two_threads() {
    let out = tempdir("sweep-time-threads");
    let run = |threads: &str| -> (String, String) {
        let rows = out.join(format!("runs-{threads}.jsonl"));
        let (_, stdout) = sweep(
            &[
                "sweep",
                SCENARIO,
                "--seeds",
                "8",
                "--pool-jitter",
                "0.5",
                "--shuffle-arrivals",
                "--runs",
                rows.to_str().unwrap(),
                "--format",
                "json",
                "--out",
                out.to_str().unwrap(),
            ],
            threads,
        );
        (stdout, std::fs::read_to_string(rows).unwrap())
    };
    let one = run("1");
    assert_eq!(one, run("2"));
    let v: Value = serde_json::from_str(&one.0).unwrap();
    let waits = &v["replays"][0]["variants"][1]["aggregate"]["figures"]["podWaitMaxMs"];
    assert!(
        waits.as_object().is_some_and(|h| h.len() > 1),
        "the jitter varies the runs: {waits}"
    );
    // One row per run, in run order, with the run's figures.
    let rows: Vec<Value> = (one.1.lines())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 16);
    assert!(rows.iter().enumerate().all(|(i, r)| r["run"] == i as u64));
    assert!(rows[0]["figures"]["podWaitP50Ms"].is_u64(), "{}", rows[0]);
}

/// `--shard I/N` replays the runs whose index is I modulo N; `merge` adds the shards up into
/// exactly the unsharded sweep.
#[test]
fn merged_shards_of_a_replay_sweep_equal_the_unsharded_sweep() {
    let out = tempdir("sweep-time-shards");
    let o = out.to_str().unwrap();
    let base = [
        "sweep",
        SCENARIO,
        "--seeds",
        "5",
        "--pool-jitter",
        "0.5",
        "--format",
        "json",
    ];
    let (_, whole) = sweep(&[&base[..], &["--out", o]].concat(), "2");
    let mut files = Vec::new();
    for i in 0..3 {
        let shard = format!("{i}/3");
        let (_, text) = sweep(&[&base[..], &["--shard", &shard, "--out", o]].concat(), "2");
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v["shard"], shard);
        assert!(v["replays"][0]["variants"][0]["aggregate"]["runs"].as_u64() < Some(5));
        let file = out.join(format!("shard-{i}.json"));
        std::fs::write(&file, text).unwrap();
        files.push(file.to_str().unwrap().to_string());
    }
    let mut args = vec!["merge", "--format", "json", "--out", o];
    args.extend(files.iter().map(String::as_str));
    let (_, merged) = sweep(&args, "2");
    assert_eq!(merged, whole);
    // A shard of another sweep does not merge.
    let (_, other) = sweep(
        &[&base[..], &["--seed", "7", "--shard", "0/3", "--out", o]].concat(),
        "2",
    );
    std::fs::write(out.join("other.json"), other).unwrap();
    let o2 = schedsim(&[
        "merge",
        &files[1],
        out.join("other.json").to_str().unwrap(),
        "--out",
        o,
    ]);
    assert_eq!(o2.status.code(), Some(2));
}

/// A `spec.expect` entry with `replay` limits is judged per variant over its runs; restricted
/// to a variant, `check` and `replay` (which run the scenario as written) leave it alone.
#[test]
fn replay_expectations_are_judged_per_variant() {
    let out = tempdir("sweep-time-expect");
    let v = json(&["sweep", SCENARIO], &out);
    let variants = v["replays"][0]["variants"].as_array().unwrap();
    assert!(variants[0].get("expectations").is_none(), "{}", variants[0]);
    let e = &variants[1]["expectations"][0];
    assert_eq!(e["path"], "spec.expect[0]");
    assert_eq!(
        (e["metRuns"].as_u64(), e["met"].as_bool()),
        (Some(3), Some(true))
    );
    for command in ["check", "replay"] {
        let o = schedsim(&[command, SCENARIO, "--out", out.to_str().unwrap()]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "{command}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // For every variant, it fails the two-node one: exit 1, saying which.
    let text = std::fs::read_to_string(SCENARIO)
        .unwrap()
        .replace("      variant: nodes=three\n", "");
    let file = out.join("every-variant.yaml");
    std::fs::write(&file, text).unwrap();
    let o = schedsim(&[
        "sweep",
        file.to_str().unwrap(),
        "--format",
        "json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains(
            "unmet: sweep-extra-node [nodes=two]: team-b starts within 10m held in 0 runs, needs 100%"
        ),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `--charts`: one box chart per figure, a box per variant, on the sweep's page.
#[test]
fn replay_sweep_charts_draw_a_box_per_variant_for_each_figure() {
    let out = tempdir("sweep-time-charts");
    json(&["sweep", SCENARIO, "--charts"], &out);
    let dir = out.join("sweep-extra-node-sweep");
    for name in [
        "pod-wait-p50-ms",
        "gpu-allocation-percent",
        "gpu-hours-idle",
    ] {
        let svg = chart_svg(&dir, name);
        assert!(svg.contains("nodes=three"), "{name}");
        // Each variant's box: a filled rectangle, then its outline.
        let boxes = svg.matches("<rect").count();
        assert!(boxes >= 4, "{name}: {boxes} rectangles");
    }
    let page = std::fs::read_to_string(out.join("sweep.html")).unwrap();
    assert_eq!(page.matches("<svg").count(), 12);
    assert!(page.contains("replayed over time"));
}

/// A replay that cannot run (its trace is missing) fails every run of every variant the same
/// way: the error is said once, the sweep exits 2, and the other scenarios are still swept
/// and reported.
#[test]
fn a_trace_that_cannot_be_read_is_one_error_and_the_rest_is_swept() {
    let dir = tempdir("sweep-time-bad-trace");
    let text = std::fs::read_to_string(SCENARIO).unwrap().replace(
        "  replay: {}\n",
        "  replay: {trace: {file: missing.csv, format: openb}}\n",
    );
    let bad = dir.join("bad.yaml");
    std::fs::write(&bad, text.replace("name: sweep-extra-node", "name: bad")).unwrap();
    std::fs::copy(SCENARIO, dir.join("good.yaml")).unwrap();
    let o = schedsim(&[
        "sweep",
        dir.to_str().unwrap(),
        "--format",
        "json",
        "--out",
        dir.join("out").to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.matches("missing.csv").count(), 1, "{stderr}");
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    let runs = |s: usize, variant: usize| {
        v["replays"][s]["variants"][variant]["aggregate"]["runs"].as_u64()
    };
    assert_eq!(v["replays"][0]["name"], "bad");
    assert_eq!((runs(0, 0), runs(0, 1)), (Some(0), Some(0)));
    assert_eq!((runs(1, 0), runs(1, 1)), (Some(3), Some(3)));
}

/// The run's seed is the scheduler's tie-break seed: pod `a` fits both one-GPU nodes equally
/// well, so the seed picks its node; `c`, which only `gpu-a` takes, then starts at once or
/// waits for `a` to end. Over eight seeds both happen.
#[test]
fn the_seed_drives_the_schedulers_tie_breaks() {
    let dir = tempdir("sweep-time-ties");
    let node = |name: &str| {
        format!(
            "    - apiVersion: v1\n      kind: Node\n      metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}, pick: {name}}}}}\n      status: {{allocatable: {{cpu: \"8\", memory: 32Gi, pods: \"110\", nvidia.com/gpu: \"1\"}}}}\n"
        )
    };
    let pod = |name: &str, arrival: &str, selector: &str| {
        format!(
            "    - apiVersion: v1\n      kind: Pod\n      metadata: {{name: {name}, annotations: {{schedsim.io/arrival: {arrival}, schedsim.io/duration: 10m}}}}\n      spec:\n        nodeSelector: {{{selector}}}\n        containers: [{{name: main, image: x, resources: {{requests: {{nvidia.com/gpu: \"1\"}}, limits: {{nvidia.com/gpu: \"1\"}}}}}}]\n"
        )
    };
    let text = format!(
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {{name: ties}}\nspec:\n  nodes:\n{}{}  workloads:\n{}{}  replay: {{}}\n",
        node("gpu-a"),
        node("gpu-b"),
        pod("a", "0s", ""),
        pod("c", "1m", "pick: gpu-a"),
    );
    let file = dir.join("ties.yaml");
    std::fs::write(&file, text).unwrap();
    let v = json(&["sweep", file.to_str().unwrap(), "--seeds", "8"], &dir);
    let variant = &v["replays"][0]["variants"][0];
    let waits = histogram(variant, None, "podWaitMaxMs");
    assert_eq!(
        waits.iter().map(|(w, _)| *w).collect::<Vec<_>>(),
        [0, 9 * MINUTE],
        "{waits:?}"
    );
}

/// Kueue's PodsReady timeouts and deactivations are figures of a sweep over time, as the
/// replay counts them (`kueue-pods-ready-backoff.yaml`: big is evicted twice, never
/// deactivated); a replay without Kueue has neither (above: `preemptions` only).
#[test]
fn a_sweep_counts_kueue_pods_ready_timeouts_per_run() {
    let out = tempdir("sweep-time-pods-ready");
    let v = json(
        &["sweep", "tests/data/replay/kueue-pods-ready-backoff.yaml"],
        &out,
    );
    let variant = &v["replays"][0]["variants"][0];
    let runs = variant["aggregate"]["runs"].as_u64().unwrap();
    assert_eq!(
        histogram(variant, None, "podsReadyTimeouts"),
        vec![(2, runs)]
    );
    assert_eq!(histogram(variant, None, "jobsDeactivated"), vec![(0, runs)]);
    assert_eq!(histogram(variant, None, "preemptions"), vec![(0, runs)]);
    let plain = json(&["sweep", SCENARIO], &tempdir("sweep-time-no-kueue"));
    let figures = &plain["replays"][0]["variants"][0]["aggregate"]["figures"];
    assert!(figures.get("podsReadyTimeouts").is_none(), "{figures}");
    assert!(figures.get("preemptions").is_some(), "{figures}");
}
