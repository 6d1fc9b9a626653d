//! `schedsim replay`: hand-checked small replays, the openb trace against a naive recount of
//! its own records, properties of every replay (nothing is held after the last event, no node
//! holds more than it has), and byte-identical output at any thread count.

mod common;

use std::collections::BTreeMap;

use common::cli::{ok_with_threads, schedsim, tempdir};
use common::replay::{load, replay_file, replay_scenario, repo};
use proptest::prelude::*;
use schedsim::load;
use schedsim::replay::{PodRecord, ReplayReport};

const MINUTE: u64 = 60_000;

fn wait(r: &PodRecord) -> Option<u64> {
    r.first_bind.map(|b| b - r.arrival)
}

/// Two one-GPU nodes, five one-GPU pods; the waits worked out by hand in the scenario's
/// comment, with kube-scheduler's queue: the unschedulable pool, the 5-minute leftover flush
/// (which adds attempts but moves nothing), and the order of pods moved back together.
#[test]
fn two_nodes_five_jobs_wait_as_computed_by_hand() {
    let (report, pods) = replay_file(&repo("tests/data/replay/two-nodes-five-jobs.yaml"));
    let waits: Vec<(String, Option<u64>)> =
        pods.iter().map(|(k, r)| (k.clone(), wait(r))).collect();
    assert_eq!(
        waits,
        [
            ("default/a".to_string(), Some(0)),
            ("default/b".to_string(), Some(0)),
            ("default/c".to_string(), Some(9 * MINUTE)),
            ("default/d".to_string(), Some(13 * MINUTE)),
            ("default/e".to_string(), Some(17 * MINUTE)),
        ]
    );
    // c failed at 1m, 6m30s (the leftover flush: waited more than 5m at the 30-s tick) and
    // bound at 10m; d at 2m, 7m30s, 10m, bound at 15m; e at 3m, 8m30s, 10m, 15m, bound at 20m.
    let attempts: Vec<u32> = pods.values().map(|r| r.attempts).collect();
    assert_eq!(attempts, [1, 1, 3, 4, 5]);
    assert_eq!(report.end_ms, 21 * MINUTE);
    let s = &report.summary;
    assert_eq!((s.pods_finished, s.jobs_finished), (5, 5));
    assert_eq!(s.pod_wait.p50, Some(9 * MINUTE));
    assert_eq!(s.pod_wait.max, Some(17 * MINUTE));
    // 41 GPU-minutes held of 42.
    assert_eq!(report.pools[0].allocation_percent, 97.62);
    assert_eq!(report.scheduling_attempts, 14);
}

/// A trace with a gang, a withdrawn row and a censored one; worked out by hand in the
/// scenario's comment.
#[test]
fn a_small_trace_replays_as_computed_by_hand() {
    let (report, pods) = replay_file(&repo("tests/data/replay/small-trace.yaml"));
    let got: Vec<(String, Option<u64>, Option<u64>, &str)> = pods
        .iter()
        .map(|(k, r)| (k.clone(), r.first_bind, r.end, r.state))
        .collect();
    let s = 1000;
    assert_eq!(
        got,
        [
            ("team-a/j1".to_string(), Some(0), Some(600 * s), "finished"),
            ("team-a/j3".to_string(), None, Some(300 * s), "withdrawn"),
            (
                "team-b/j2-0".to_string(),
                Some(60 * s),
                Some(660 * s),
                "finished"
            ),
            (
                "team-b/j2-1".to_string(),
                Some(600 * s),
                Some(1200 * s),
                "finished"
            ),
            ("team-b/j4".to_string(), Some(700 * s), None, "running"),
        ]
    );
    assert_eq!(report.end_ms, 1200 * s);
    let team_b = (report.groups.iter())
        .find(|g| g.dimension == "queue" && g.value == "team-b")
        .unwrap();
    assert_eq!(team_b.job_wait.max, Some(540 * s));
    assert_eq!((team_b.jobs_arrived, team_b.jobs_finished), (2, 1));
    // j1 2 GPUs × 600 s, j2 2 × 600 + 2 × 600, j4 1 × 500: 4,100 GPU-seconds.
    assert_eq!(report.summary.gpu_hours_used, 1.139);
    let warnings = report.warnings.join("\n");
    assert!(warnings.contains("1 of 4 jobs never ran"), "{warnings}");
    assert!(
        warnings.contains("1 of 4 jobs were still running"),
        "{warnings}"
    );
}

/// A node, a pod's CPU, memory and GPUs, and +1 when it binds or -1 when it ends.
type Change<'a> = (&'a str, [i64; 3], i64);

/// The openb default trace on one in 100 of its GPU nodes (so that pods queue), checked against a
/// naive recount of the replay's per-pod records: no node ever holds more GPUs, CPU or memory
/// than it has; a pod that waited found no node with room at its arrival (after the pods
/// bound at that instant); the GPU-hours used equal the sum over the records.
#[test]
fn the_openb_replay_agrees_with_a_naive_recount_of_its_records() {
    let mut scenario = load(&repo("scenarios/replay/openb-default.yaml"));
    let gpu =
        |n: &schedsim::model::Node| n.allocatable.get("nvidia.com/gpu").is_some_and(|g| *g > 0);
    scenario.nodes = scenario
        .nodes
        .into_iter()
        .filter(gpu)
        .step_by(100)
        .collect();
    let (report, pods) = replay_scenario(&scenario);
    assert_eq!(report.summary.pods_arrived, 8152);
    assert_eq!(pods.len(), 8152);
    let nodes: BTreeMap<&str, [i64; 3]> = (scenario.nodes.iter())
        .map(|n| {
            let get = |r: &str| n.allocatable.get(r).copied().unwrap_or(0);
            (
                n.name.as_str(),
                [get("cpu"), get("memory"), get("nvidia.com/gpu")],
            )
        })
        .collect();
    // Requests of each trace pod, from the CSV itself.
    let csv = std::fs::read_to_string(repo("fixtures/openb/openb_pod_list_default.csv")).unwrap();
    let mut requests: BTreeMap<String, [i64; 3]> = BTreeMap::new();
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        let gpus: i64 = if f[4] == "0" {
            0
        } else {
            f[3].parse().unwrap()
        };
        let cpu: i64 = f[1].parse().unwrap();
        let memory: i64 = f[2].parse::<i64>().unwrap() << 20;
        requests.insert(format!("default/{}", f[0]), [cpu, memory, gpus]);
    }
    // Intervals each node is held: (from, to, node, requests).
    let end = report.end_ms;
    let mut changes: BTreeMap<u64, Vec<Change>> = BTreeMap::new();
    let mut used_gpu_ms: u128 = 0;
    for (key, r) in &pods {
        let (Some(bind), Some(node)) = (r.first_bind, r.node.as_deref()) else {
            continue;
        };
        assert_eq!(r.preemptions, 0, "{key}: nothing preempts in this trace");
        let until = r.end.unwrap_or(end);
        let req = requests[key];
        changes.entry(bind).or_default().push((node, req, 1));
        changes.entry(until).or_default().push((node, req, -1));
        used_gpu_ms += (req[2] as u128) * u128::from(until - bind);
    }
    let mut held: BTreeMap<&str, [i64; 3]> = BTreeMap::new();
    let mut at_time: BTreeMap<u64, BTreeMap<&str, [i64; 3]>> = BTreeMap::new();
    for (t, list) in &changes {
        // Ends before starts at one instant: a pod ending frees room a new one takes.
        for pass in [-1, 1] {
            for (node, req, sign) in list.iter().filter(|c| c.2 == pass) {
                let h = held.entry(node).or_default();
                for i in 0..3 {
                    h[i] += sign * req[i];
                    assert!(h[i] <= nodes[node][i], "{node} over its allocatable at {t}");
                }
            }
        }
        at_time.insert(*t, held.clone());
    }
    let mut waited = 0;
    for (key, r) in &pods {
        if wait(r).is_none_or(|w| w == 0) {
            continue;
        }
        waited += 1;
        let state = at_time.range(..=r.arrival).next_back().map(|(_, s)| s);
        let req = requests[key];
        let room = nodes.iter().any(|(name, cap)| {
            let h = state.and_then(|s| s.get(name)).copied().unwrap_or_default();
            (0..3).all(|i| h[i] + req[i] <= cap[i])
        });
        assert!(!room, "{key} waited though a node had room at its arrival");
    }
    assert_eq!(
        report.summary.gpu_hours_used,
        (used_gpu_ms as f64 / 3_600_000.0 * 1000.0).round() / 1000.0
    );
    // The check above had pods to look at.
    assert!(waited > 20, "only {waited} pods waited");
}

/// A random cluster and random jobs, each with a run time: after the replay nothing is
/// allocated, every pod that started finished, and the series ends at zero. `spec(i)` is
/// written at the start of job `i`'s pod spec.
fn scenario_text(nodes: &[u8], jobs: &[(u16, u16, u8)], spec: &dyn Fn(usize) -> String) -> String {
    let mut s = String::from(
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: random}\nspec:\n  replay: {}\n  nodes:\n",
    );
    for (i, gpus) in nodes.iter().enumerate() {
        s += &format!(
            "    - {{apiVersion: v1, kind: Node, metadata: {{name: n{i}}}, status: {{allocatable: {{cpu: \"16\", memory: 64Gi, pods: \"110\", nvidia.com/gpu: \"{gpus}\"}}}}}}\n"
        );
    }
    s += "  workloads:\n";
    for (i, (at, run, gpus)) in jobs.iter().enumerate() {
        let spec = spec(i);
        s += &format!(
            "    - {{apiVersion: v1, kind: Pod, metadata: {{name: p{i}, annotations: {{schedsim.io/arrival: \"{at}s\", schedsim.io/duration: \"{run}s\"}}}}, spec: {{{spec}containers: [{{name: c, image: i, resources: {{requests: {{cpu: \"1\", nvidia.com/gpu: \"{gpus}\"}}, limits: {{nvidia.com/gpu: \"{gpus}\"}}}}}}]}}}}\n"
        );
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn after_the_last_event_nothing_is_allocated(
        nodes in prop::collection::vec(1u8..=8, 1..4),
        jobs in prop::collection::vec((0u16..600, 1u16..900, 0u8..=4), 1..25),
    ) {
        let dir = tempdir("replay-prop");
        let file = dir.join("random.yaml");
        std::fs::write(&file, scenario_text(&nodes, &jobs, &|_| String::new())).unwrap();
        let (report, pods) = replay_file(&file);
        every_pod_that_fits_finishes(&report, &pods, &nodes, &jobs)?;
    }

    /// With priorities, preemptions that wait for their victims' grace periods: the same.
    #[test]
    fn after_preemptions_over_time_nothing_is_allocated(
        nodes in prop::collection::vec(1u8..=8, 1..4),
        jobs in prop::collection::vec((0u16..600, 1u16..900, 0u8..=4), 1..25),
        specs in prop::collection::vec((0i32..3, 0u8..60), 25),
    ) {
        let dir = tempdir("replay-prop-preemption");
        let file = dir.join("random.yaml");
        let spec = |i: usize| {
            let (priority, grace) = specs[i];
            format!("priority: {}, terminationGracePeriodSeconds: {grace}, ", priority * 100)
        };
        std::fs::write(&file, scenario_text(&nodes, &jobs, &spec)).unwrap();
        let (report, pods) = replay_file(&file);
        every_pod_that_fits_finishes(&report, &pods, &nodes, &jobs)?;
    }
}

/// After the replay nothing is allocated, every pod that fits a node finished, the others
/// are pending, and no sample holds more GPUs than the cluster has.
fn every_pod_that_fits_finishes(
    report: &ReplayReport,
    pods: &BTreeMap<String, PodRecord>,
    nodes: &[u8],
    jobs: &[(u16, u16, u8)],
) -> Result<(), TestCaseError> {
    {
        let max_gpus = *nodes.iter().max().unwrap();
        let last = report.series.points.last().expect("a last sample");
        prop_assert_eq!(last.allocated_gpus.0, 0);
        prop_assert_eq!(last.running, 0);
        for (key, r) in pods {
            let (_, _, gpus) = jobs[key
                .trim_start_matches("default/p")
                .parse::<usize>()
                .unwrap()];
            if gpus <= max_gpus {
                prop_assert_eq!(r.state, "finished", "{} fits a node", key);
            } else {
                prop_assert_eq!(r.state, "pending", "{} fits no node", key);
            }
        }
        for p in &report.series.points {
            prop_assert!(p.allocated_gpus <= p.capacity_gpus);
        }
    }
    Ok(())
}

/// The same replays give the same bytes on one thread and on two.
#[test]
fn replays_are_byte_identical_at_any_thread_count() {
    let dir = tempdir("replay-threads");
    let out = |n: &str| {
        let o = dir.join(n);
        let args = [
            "replay",
            "tests/data/replay",
            "--format",
            "json",
            "--pods-csv",
            "--out",
            o.to_str().unwrap(),
        ];
        let stdout = ok_with_threads(&args, n);
        let pods = std::fs::read(o.join("replay-small-trace-pods.csv")).unwrap();
        let series = std::fs::read(o.join("replay-two-nodes-five-jobs-series.csv")).unwrap();
        (stdout, pods, series)
    };
    assert_eq!(out("1"), out("2"));
}

/// A replay's own input errors name the file, the line and the field.
#[test]
fn bad_times_are_refused_with_their_place() {
    let dir = tempdir("replay-bad");
    let file = dir.join("bad.yaml");
    std::fs::write(
        &file,
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: bad}\nspec:\n  replay: {cycle: 5 minutes}\n  timeline:\n    - {at: 1h, cordon: []}\n    - {at: 30m, cordon: []}\n",
    )
    .unwrap();
    let o = schedsim(&[
        "replay",
        file.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad.yaml:5:")
            && err.contains("spec.replay.cycle: invalid duration \"5 minutes\""),
        "{err}"
    );
    assert!(
        err.contains("spec.timeline[1].at: \"30m\" is before the step above it"),
        "{err}"
    );
}

/// `--charts` draws the three charts per scenario and a self-contained page.
#[test]
fn charts_are_drawn_with_a_self_contained_page() {
    let dir = tempdir("replay-charts");
    let args = [
        "replay",
        "tests/data/replay/small-trace.yaml",
        "--charts",
        "--format",
        "json",
        "--out",
        dir.to_str().unwrap(),
    ];
    ok_with_threads(&args, "2");
    for chart in ["gpu-allocation", "pods", "wait-cdf"] {
        for ext in ["svg", "png"] {
            let f = dir
                .join("small-trace-replay")
                .join(format!("{chart}.{ext}"));
            assert!(
                std::fs::metadata(&f).is_ok_and(|m| m.len() > 1000),
                "{}",
                f.display()
            );
        }
    }
    let page = std::fs::read_to_string(dir.join("replay.html")).unwrap();
    assert!(
        page.contains("<svg") && page.contains("small-trace"),
        "no charts in the page"
    );
    for external in ["<link", "<script", "src=\"http", "href=\"http"] {
        assert!(!page.contains(external), "{external}");
    }
}

/// A fixed `sample` step streams every point to the series CSV (0, 1m, … 20m, and the end at
/// 21m), however many there are; the JSON keeps a thinned copy.
#[test]
fn a_fixed_sample_step_streams_every_point() {
    let dir = tempdir("replay-sample");
    let text = std::fs::read_to_string(repo("tests/data/replay/two-nodes-five-jobs.yaml"))
        .unwrap()
        .replace("  replay: {}", "  replay: {sample: 1m}");
    let file = dir.join("s.yaml");
    std::fs::write(&file, text).unwrap();
    let args = [
        "replay",
        file.to_str().unwrap(),
        "--format",
        "json",
        "--out",
        dir.to_str().unwrap(),
    ];
    ok_with_threads(&args, "1");
    let csv = std::fs::read_to_string(dir.join("replay-two-nodes-five-jobs-series.csv")).unwrap();
    let times: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    let expected: Vec<String> = (0..=20)
        .map(|m| (m * MINUTE).to_string())
        .chain([(21 * MINUTE).to_string()])
        .collect();
    assert_eq!(times, expected);
    // 10m: c runs on the node a left, b on the other; d and e wait.
    let at_10m: Vec<&str> = csv.lines().nth(11).unwrap().split(',').collect();
    assert_eq!(
        &at_10m[1..5],
        ["2", "2", "0", "2"],
        "running, pending, queued for Kueue, allocated GPUs"
    );
}

/// Every bundled replay, summarised: a change in its outcome shows up as a snapshot diff.
#[test]
fn bundled_replays_match_their_snapshots() {
    let files = load::scenario_files(&[repo("scenarios/replay")]).expect("scenarios/replay/");
    assert!(!files.is_empty());
    for file in files {
        let (report, _) = replay_file(&file);
        let name = file.file_stem().unwrap().to_string_lossy().into_owned();
        let summary = serde_json::json!({
            "summary": report.summary,
            "groups": report.groups,
            "pools": report.pools,
            "endMs": report.end_ms,
            "attempts": report.scheduling_attempts,
        });
        insta::assert_json_snapshot!(format!("replay-{name}"), summary);
    }
}

/// `spec.expect[].replay` limits are checked by `replay` and by `check` (exit 1 when one is
/// unmet, with what was measured); `check --bless` leaves such a file alone.
#[test]
fn replay_expectations_guard_waits_in_ci() {
    let dir = tempdir("replay-expect");
    let text = std::fs::read_to_string(repo("tests/data/replay/two-nodes-five-jobs.yaml"))
        .unwrap()
        .replace(
            "  replay: {}",
            "  replay: {}\n  expect:\n    - {name: median, replay: {podWaitAtMost: {p50: 9m}, pendingAtEndAtMost: 0}}\n    - {name: tail, replay: {queue: default, podWaitAtMost: {p99: 10m}}}\n    - {name: busy, replay: {gpuAllocationAtLeast: 99}}\n",
        );
    let file = dir.join("s.yaml");
    std::fs::write(&file, &text).unwrap();
    let out = dir.to_str().unwrap();
    let f = file.to_str().unwrap();
    let check = schedsim(&["check", f, "--out", out]);
    assert_eq!(check.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&check.stdout);
    assert!(stdout.contains("3 expectation(s), 2 unmet"), "{stdout}");
    assert!(
        stdout.contains("queue default: pod wait p99 is 17m, more than 10m"),
        "{stdout}"
    );
    assert!(
        stdout.contains("GPU allocation over the replay is 97.62 %, less than 99 %"),
        "{stdout}"
    );
    let replay = schedsim(&["replay", f, "--format", "json", "--out", out]);
    assert_eq!(replay.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&replay.stderr).contains("expectation not met: tail"));
    let bless = schedsim(&["check", f, "--bless", "--out", out]);
    assert_eq!(bless.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        text,
        "bless left it alone"
    );
    // A percentile that does not exist is refused where it is written.
    std::fs::write(&file, text.replace("p50: 9m", "p42: 9m")).unwrap();
    let bad = schedsim(&["replay", f, "--out", out]);
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(
        err.contains("replay.podWaitAtMost.p42: unknown percentile \"p42\""),
        "{err}"
    );
}

/// A fixed sample step that would write more points than the product's limit is refused:
/// up front when `until` bounds the span, else when the replay reaches the limit; nothing
/// half-written is left.
#[test]
fn a_sample_step_past_the_series_limit_is_refused() {
    let dir = tempdir("replay-limit");
    let base = std::fs::read_to_string(repo("tests/data/replay/two-nodes-five-jobs.yaml")).unwrap();
    let file = dir.join("s.yaml");
    let f = file.to_str().unwrap();
    let out = dir.join("out");
    let o = out.to_str().unwrap();
    std::fs::write(
        &file,
        base.replace("  replay: {}", "  replay: {sample: 1ms, until: 30d}"),
    )
    .unwrap();
    let up_front = schedsim(&["replay", f, "--out", o]);
    assert_eq!(up_front.status.code(), Some(2));
    let err = String::from_utf8_lossy(&up_front.stderr);
    assert!(err.contains("spec.replay.sample: 2592000001 samples from 0 to until exceeds schedsim's limit of 10000000 points of a replay's time series (raise it with the environment variable SCHEDSIM_MAX_SERIES_POINTS=N)"), "{err}");
    std::fs::write(
        &file,
        base.replace("  replay: {}", "  replay: {sample: 1ms}"),
    )
    .unwrap();
    let o2 = std::process::Command::new(env!("CARGO_BIN_EXE_schedsim"))
        .args(["replay", f, "--out", o])
        .env("SCHEDSIM_MAX_SERIES_POINTS", "1000")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert_eq!(o2.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o2.stderr);
    assert!(err.contains("samples at spec.replay.sample's step (write a longer step) exceeds schedsim's limit of 1000"), "{err}");
    assert!(!out.join("replay-two-nodes-five-jobs-series.csv").exists());
}

/// A scheduling attempt takes `spec.replay.cycle`: pods queued together bind one cycle apart,
/// each when its cycle ends.
#[test]
fn a_cycle_takes_its_time() {
    let dir = tempdir("replay-cycle");
    let text = std::fs::read_to_string(repo("tests/data/replay/two-nodes-five-jobs.yaml"))
        .unwrap()
        .replace("  replay: {}", "  replay: {cycle: 1s}");
    let file = dir.join("s.yaml");
    std::fs::write(&file, text).unwrap();
    let (_, pods) = replay_file(&file);
    assert_eq!(pods["default/a"].first_bind, Some(1000));
    assert_eq!(pods["default/b"].first_bind, Some(2000));
    // c's first attempt (at 60 s) fails; a ends at 601 s, and c's next cycle binds at 602 s.
    assert_eq!(pods["default/c"].first_bind, Some(602_000));
}

/// Timeline steps happen at their time: a node added at 90 s takes the waiting pod c at once;
/// the node failing at 4 m evicts c, which is queued anew and runs its whole 5 minutes again
/// once a node frees (16 m, after d at 10 m and e at 15 m, whose timestamps are older: c
/// failed last, at 4 m, and was flushed last, at 9 m 30 s).
#[test]
fn timeline_steps_happen_at_their_time() {
    let dir = tempdir("replay-timeline");
    let text = std::fs::read_to_string(repo("tests/data/replay/two-nodes-five-jobs.yaml"))
        .unwrap()
        .replace(
            "  replay: {}",
            "  timeline:\n    - at: 90s\n      addNodes:\n        - {apiVersion: v1, kind: Node, metadata: {name: gpu-c}, status: {allocatable: {cpu: \"8\", memory: 32Gi, pods: \"110\", nvidia.com/gpu: \"1\"}}}\n    - {at: 4m, failNodes: [gpu-c]}\n  replay: {}",
        );
    let file = dir.join("s.yaml");
    std::fs::write(&file, text).unwrap();
    let (report, pods) = replay_file(&file);
    let binds: Vec<(&str, Option<u64>, Option<u64>)> = pods
        .values()
        .map(|r| (r.name.as_str(), r.first_bind, r.end))
        .collect();
    assert_eq!(
        binds,
        [
            ("a", Some(0), Some(10 * MINUTE)),
            ("b", Some(0), Some(20 * MINUTE)),
            ("c", Some(90_000), Some(21 * MINUTE)),
            ("d", Some(10 * MINUTE), Some(15 * MINUTE)),
            ("e", Some(15 * MINUTE), Some(16 * MINUTE)),
        ]
    );
    assert_eq!(report.summary.pods_finished, 5);
}

/// A pod's name, first bind, end, preemptions, attempts and state.
type Life<'r> = (&'r str, Option<u64>, Option<u64>, u32, u32, &'r str);

fn life(r: &PodRecord) -> Life<'_> {
    let name = r.name.as_str();
    (
        name,
        r.first_bind,
        r.end,
        r.preemptions,
        r.attempts,
        r.state,
    )
}

/// Preemption waits for the victim's grace period (kube-scheduler's async preemption): b,
/// arriving at 10 s, preempts a and is nominated to gpu-a; a holds its GPU for its 30-s grace
/// period and b binds when a is gone, at 40 s; meanwhile c, arriving at 20 s, is kept off the
/// GPU gpu-a has free by b's nomination. a is created again at 40 s and runs its hour from
/// 640 s. Worked out by hand in the scenario's comment.
#[test]
fn preemption_waits_for_the_victims_grace_period() {
    let s = 1000;
    let file = repo("tests/data/replay/preemption.yaml");
    let (report, pods) = replay_file(&file);
    let got: Vec<Life> = pods.values().map(life).collect();
    assert_eq!(
        got,
        [
            // Bound at 0 s, failed at 40 s and 360 s (the leftover flush), bound at 640 s.
            ("a", Some(0), Some(4240 * s), 1, 4, "finished"),
            ("b", Some(40 * s), Some(640 * s), 0, 2, "finished"),
            ("c", Some(640 * s), Some(940 * s), 0, 4, "finished"),
            ("x", Some(0), Some(3600 * s), 0, 1, "finished"),
        ]
    );
    assert_eq!(report.end_ms, 4240 * s);
    // GPU-seconds: x 3,600, a 40 (until it left gpu-a) + 3,600, b 2 × 600, c 300: 8,740.
    assert_eq!(report.summary.gpu_hours_used, 2.428);
    assert_eq!(report.summary.pod_wait.max, Some(620 * s));

    // `terminationGracePeriodSeconds: 5`: a leaves gpu-a at 15 s, and b binds then.
    let dir = tempdir("replay-preemption");
    let text = std::fs::read_to_string(&file).unwrap();
    let grace = dir.join("grace.yaml");
    let a_spec = "        priority: 0\n        nodeSelector: {kubernetes.io/hostname: gpu-a}\n";
    assert!(text.contains(a_spec));
    let with_grace = format!("{a_spec}        terminationGracePeriodSeconds: 5\n");
    std::fs::write(&grace, text.replace(a_spec, &with_grace)).unwrap();
    let (_, pods) = replay_file(&grace);
    assert_eq!(pods["default/b"].first_bind, Some(15 * s));
    assert_eq!(pods["default/a"].end, Some((615 + 3600) * s));

    // d (priority 2000, 2 GPUs) arrives at 25 s: it preempts a too (terminating already, so
    // nothing more is asked of it) and is nominated to gpu-a; b, of lower priority, loses its
    // nomination and is tried again at once (its own nomination gone frees gpu-a for it and
    // the pods below it): it fails, d's nomination counting against it. d binds at 40 s,
    // b when d ends at 340 s.
    let higher = dir.join("higher.yaml");
    let d = "    - {apiVersion: v1, kind: Pod, metadata: {name: d, annotations: {schedsim.io/arrival: \"25s\", schedsim.io/duration: \"5m\"}}, spec: {priority: 2000, containers: [{name: main, image: trainer, resources: {requests: {cpu: \"1\", memory: 1Gi, nvidia.com/gpu: \"2\"}, limits: {nvidia.com/gpu: \"2\"}}}]}}\n";
    std::fs::write(
        &higher,
        text.replace("  replay: {}", &format!("{d}  replay: {{}}")),
    )
    .unwrap();
    let (_, pods) = replay_file(&higher);
    assert_eq!(pods["default/d"].first_bind, Some(40 * s));
    assert_eq!(pods["default/b"].first_bind, Some(340 * s));
    assert_eq!(pods["default/a"].preemptions, 1);
    // Stopped at 30 s: b was tried at 10 s and again at 25 s, when d took its node.
    std::fs::write(
        &higher,
        text.replace("  replay: {}", &format!("{d}  replay: {{until: 30s}}")),
    )
    .unwrap();
    let (_, pods) = replay_file(&higher);
    assert_eq!(
        (pods["default/b"].attempts, pods["default/b"].state),
        (2, "pending")
    );

    // A 1-s cycle: b's first cycle ends at 11 s, when a's grace period starts; a is gone at
    // 41 s, and b's next cycle binds it at 42 s.
    let cycle = dir.join("cycle.yaml");
    std::fs::write(
        &cycle,
        text.replace("  replay: {}", "  replay: {cycle: 1s}"),
    )
    .unwrap();
    let (_, pods) = replay_file(&cycle);
    assert_eq!(pods["default/b"].first_bind, Some(42 * s));
}

/// An existing pod preempted holds its GPU for its grace period, then is gone for good (the
/// pool's allocation counts it until then); a node failing during the grace period takes it
/// with it, once.
#[test]
fn an_existing_victim_leaves_after_its_grace_period() {
    let s = 1000;
    let node = |name: &str| {
        format!(
            "{{apiVersion: v1, kind: Node, metadata: {{name: {name}}}, status: {{allocatable: {{cpu: \"8\", pods: \"110\", nvidia.com/gpu: \"1\"}}}}}}"
        )
    };
    let gpu = "resources: {requests: {cpu: \"1\", nvidia.com/gpu: \"1\"}, limits: {nvidia.com/gpu: \"1\"}}";
    let text = format!(
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {{name: existing-victim}}\nspec:\n  nodes:\n    - {}\n  existingPods:\n    - {{apiVersion: v1, kind: Pod, metadata: {{name: e}}, spec: {{nodeName: gpu-a, priority: 0, terminationGracePeriodSeconds: 10, containers: [{{name: c, image: i, {gpu}}}]}}}}\n  workloads:\n    - {{apiVersion: v1, kind: Pod, metadata: {{name: b, annotations: {{schedsim.io/arrival: \"5s\", schedsim.io/duration: \"60s\"}}}}, spec: {{priority: 1000, containers: [{{name: c, image: i, {gpu}}}]}}}}\n  replay: {{}}\n",
        node("gpu-a")
    );
    let dir = tempdir("replay-existing-victim");
    let file = dir.join("s.yaml");
    std::fs::write(&file, &text).unwrap();
    let (report, pods) = replay_file(&file);
    assert_eq!(pods["default/b"].first_bind, Some(15 * s));
    assert_eq!(report.existing_pods_evicted, 1);
    // e holds the GPU until 15 s, b from 15 s to the end at 75 s.
    assert_eq!(report.end_ms, 75 * s);
    assert_eq!(report.pools[0].allocation_percent, 100.0);

    // gpu-a fails at 8 s, e with it; b waits for gpu-b, added at 20 s.
    let timeline = format!(
        "  timeline:\n    - {{at: 8s, failNodes: [gpu-a]}}\n    - at: 20s\n      addNodes:\n        - {}\n  replay: {{}}\n",
        node("gpu-b")
    );
    std::fs::write(&file, text.replace("  replay: {}\n", &timeline)).unwrap();
    let (report, pods) = replay_file(&file);
    assert_eq!(pods["default/b"].first_bind, Some(20 * s));
    assert_eq!(report.existing_pods_evicted, 1);
}

/// A pod still pending at the end carries its last cycle's message in its record (and the
/// `--pods-csv` `message` column); a pod that waited and then bound carries none.
#[test]
fn a_pod_pending_at_the_end_keeps_its_last_message() {
    let dir = tempdir("replay-pending-message");
    let file = dir.join("pending.yaml");
    // `small` waits for `first` (two GPUs of the node's two) and binds at 60 s; `big` never fits.
    let jobs = [(0, 60, 2), (10, 30, 1), (20, 30, 4)];
    std::fs::write(&file, scenario_text(&[2], &jobs, &|_| String::new())).unwrap();
    let (report, pods) = replay_file(&file);
    assert_eq!(report.summary.pods_finished, 2);
    let (first, small, big) = (
        &pods["default/p0"],
        &pods["default/p1"],
        &pods["default/p2"],
    );
    assert_eq!((first.state, first.message.as_deref()), ("finished", None));
    assert_eq!(small.first_bind, Some(60_000));
    assert_eq!((small.state, small.message.as_deref()), ("finished", None));
    assert_eq!(big.state, "pending");
    assert_eq!(
        big.message.as_deref(),
        Some(
            "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
        )
    );
    let out = dir.join("out");
    let args = [
        "replay",
        file.to_str().unwrap(),
        "--pods-csv",
        "--format",
        "json",
        "--out",
        out.to_str().unwrap(),
    ];
    assert!(schedsim(&args).status.success());
    let csv = std::fs::read_to_string(out.join("replay-random-pods.csv")).unwrap();
    assert!(csv.lines().next().unwrap().ends_with(",state,message"));
    assert!(csv.contains(",pending,\"0/1 nodes are available: 1 Insufficient nvidia.com/gpu."));
}
