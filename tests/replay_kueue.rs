//! `schedsim replay` with Kueue: a trace's jobs wait for admission before their pods exist,
//! quota frees as jobs finish, a cohort's inadmissible workloads come back a batch period
//! after a release, and a reclaiming queue's preemption deletes the borrower's pods, which run
//! their whole time again once readmitted. Waits are computed by hand.

mod common;

use common::replay::{replay_file, repo};

const S: u64 = 1000;

/// Each pod's (key, arrival, Kueue admission, end).
fn admissions(
    pods: &std::collections::BTreeMap<String, schedsim::replay::PodRecord>,
) -> Vec<(&str, u64, Option<u64>, Option<u64>)> {
    (pods.iter())
        .map(|(k, r)| (k.as_str(), r.arrival, r.admitted, r.end))
        .collect()
}

/// `kueue-hold.yaml`'s jobs when the step drains instead of holding: j1 loses its pods at 300s
/// and, released at 900s, runs its whole time anew; j2 follows a batch period after it ends.
/// A drain is no preemption. (pod, first bind, end, preemptions)
fn assert_drained_then_admitted_again(
    pods: &std::collections::BTreeMap<String, schedsim::replay::PodRecord>,
) {
    let got: Vec<(&str, Option<u64>, Option<u64>, u32)> = (pods.iter())
        .map(|(k, r)| (k.as_str(), r.first_bind, r.end, r.preemptions))
        .collect();
    assert_eq!(
        got,
        [
            ("team-a/j1", Some(0), Some(1500 * S), 0),
            ("team-a/j2", Some(1501 * S), Some(2101 * S), 0),
        ]
    );
}

/// `tests/data/replay/<scenario>` (on `kueue-hold.csv`) with `edit` applied, replayed: its
/// pods.
fn hold_variant(
    scenario: &str,
    tag: &str,
    edit: impl Fn(&str) -> String,
) -> std::collections::BTreeMap<String, schedsim::replay::PodRecord> {
    let text = std::fs::read_to_string(repo(&format!("tests/data/replay/{scenario}"))).unwrap();
    let changed = edit(&text);
    assert_ne!(changed, text, "the edit changes the scenario");
    let dir = common::cli::tempdir(tag);
    std::fs::write(dir.join("s.yaml"), changed).unwrap();
    let csv = "tests/data/replay/kueue-hold.csv";
    std::fs::copy(repo(csv), dir.join("kueue-hold.csv")).unwrap();
    replay_file(&dir.join("s.yaml")).1
}

/// The story in `tests/data/replay/kueue-trace.yaml`'s header, event by event.
#[test]
fn kueue_admits_over_time_as_quota_frees() {
    let (report, pods) = replay_file(&repo("tests/data/replay/kueue-trace.yaml"));
    // (pod, arrival, first bind, end, preemptions, state)
    type Life<'a> = (&'a str, u64, Option<u64>, Option<u64>, u32, &'a str);
    let got: Vec<Life> = (pods.iter())
        .map(|(k, r)| {
            let k = k.as_str();
            (k, r.arrival, r.first_bind, r.end, r.preemptions, r.state)
        })
        .collect();
    assert_eq!(
        got,
        [
            ("team-a/a1", 0, Some(0), Some(600 * S), 0, "finished"),
            // Evicted at 20s by team-b's reclaim, admitted again at 321s, run anew.
            (
                "team-a/a2",
                10 * S,
                Some(10 * S),
                Some(921 * S),
                1,
                "finished"
            ),
            // Inadmissible until a1's quota is released at 600s, plus the 1-s batch.
            (
                "team-a/a3",
                30 * S,
                Some(601 * S),
                Some(661 * S),
                0,
                "finished"
            ),
            (
                "team-b/b1",
                20 * S,
                Some(20 * S),
                Some(320 * S),
                0,
                "finished"
            ),
        ]
    );
    // Kueue's first admission of each job (a2's: before its eviction).
    let admitted: Vec<(&str, Option<u64>)> = (pods.iter())
        .map(|(k, r)| (k.as_str(), r.admitted))
        .collect();
    assert_eq!(
        admitted,
        [
            ("team-a/a1", Some(0)),
            ("team-a/a2", Some(10 * S)),
            ("team-a/a3", Some(601 * S)),
            ("team-b/b1", Some(20 * S)),
        ]
    );
    assert_eq!(report.end_ms, 921 * S);
    let s = &report.summary;
    assert_eq!((s.jobs_admitted, s.jobs_finished, s.preemptions), (4, 4, 1));
    assert_eq!(s.admission_wait.max, Some(571 * S));
    assert_eq!(s.admission_wait.p50, Some(0));
    // The series saw a3's pod queued for Kueue (from 30s until 601s).
    assert!(report.series.points.iter().any(|p| p.queued == 1));
    assert_eq!(report.series.points.last().map(|p| p.queued), Some(0));
}

/// Quota changed by timeline steps (`kueue-quota-change.yaml`'s header): a raise admits a
/// waiting job a batch period after the step; a lower evicts nothing and holds a later job
/// back until enough quota is released.
#[test]
fn timeline_steps_change_kueue_quota_over_time() {
    let (report, pods) = replay_file(&repo("tests/data/replay/kueue-quota-change.yaml"));
    // (pod, arrival, Kueue admission, end)
    assert_eq!(
        admissions(&pods),
        [
            ("team-a/j1", 0, Some(0), Some(600 * S)),
            ("team-a/j2", 0, Some(301 * S), Some(901 * S)),
            ("team-a/j3", 0, Some(601 * S), Some(1201 * S)),
            ("team-a/j4", 610 * S, Some(1202 * S), Some(1802 * S)),
        ]
    );
    assert_eq!(report.summary.preemptions, 0);
    assert_eq!(report.summary.admission_wait.max, Some(601 * S));
}

/// A job still waiting for Kueue at the end keeps Kueue's message for it (its Workload's
/// `QuotaReserved` condition), computed against the quota lowered at 12m.
#[test]
fn a_job_queued_at_the_end_keeps_kueues_message() {
    let dir = common::cli::tempdir("replay-kueue-queued");
    let text = std::fs::read_to_string(repo("tests/data/replay/kueue-quota-change.yaml"))
        .unwrap()
        .replace("  replay:\n", "  replay:\n    until: 15m\n");
    std::fs::write(dir.join("s.yaml"), text).unwrap();
    std::fs::copy(
        repo("tests/data/replay/kueue-quota-change.csv"),
        dir.join("kueue-quota-change.csv"),
    )
    .unwrap();
    let (_, pods) = replay_file(&dir.join("s.yaml"));
    let states: Vec<(&str, &str, Option<&str>)> = (pods.iter())
        .map(|(k, r)| (k.as_str(), r.state, r.message.as_deref()))
        .collect();
    assert_eq!(
        states,
        [
            ("team-a/j1", "finished", None),
            ("team-a/j2", "running", None),
            ("team-a/j3", "running", None),
            (
                "team-a/j4",
                "queued",
                Some(
                    "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor gpu, 2 more needed"
                )
            ),
        ]
    );
}

/// A sweep over two quota splits of the same cohort (`kueue-quota-sweep.yaml`'s header): the
/// admission wait each split gives, worked out by hand, per variant.
#[test]
fn a_sweep_over_quotas_gives_each_splits_admission_wait() {
    let dir = common::cli::tempdir("replay-kueue-sweep");
    let out = common::cli::ok_with_threads(
        &[
            "sweep",
            "tests/data/replay/kueue-quota-sweep.yaml",
            "--format",
            "json",
            "--out",
            dir.to_str().unwrap(),
        ],
        "1",
    );
    let report: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let variants = report["replays"][0]["variants"].as_array().unwrap();
    let waits: Vec<(&str, &serde_json::Value)> = (variants.iter())
        .map(|v| {
            let name = v["name"].as_str().unwrap();
            (name, &v["aggregate"]["figures"]["admissionWaitP95Ms"])
        })
        .collect();
    assert_eq!(
        waits,
        [
            ("quota=split", &serde_json::json!({"571000": 1})),
            ("quota=team-a-owns-all", &serde_json::json!({"591000": 1})),
        ]
    );
}

/// The same bytes at one and two threads: the report, the pods' lives and the series.
#[test]
fn a_kueue_replay_is_byte_identical_at_any_thread_count() {
    let out = |threads: &str| {
        let dir = common::cli::tempdir(&format!("replay-kueue-threads-{threads}"));
        let o = dir.to_str().unwrap();
        let args = [
            "replay",
            "tests/data/replay/kueue-trace.yaml",
            "--pods-csv",
            "--format",
            "json",
            "--out",
            o,
        ];
        let stdout = common::cli::ok_with_threads(&args, threads);
        let pods = std::fs::read(dir.join("replay-kueue-trace-pods.csv")).unwrap();
        let series = std::fs::read(dir.join("replay-kueue-trace-series.csv")).unwrap();
        (stdout, pods, series)
    };
    assert_eq!(out("1"), out("2"));
}

/// Random traces through the two-queue cohort of `kueue-trace.yaml` (4 GPUs of quota and of
/// nodes; every job fits both): every job is admitted, runs and finishes, so at the end
/// nothing is queued, pending or allocated, and each job's admission is counted once.
mod properties {
    use super::*;
    use common::cli::tempdir;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        #[test]
        fn every_job_is_admitted_runs_and_releases_its_quota(
            mut jobs in prop::collection::vec((0u16..900, 1u16..600, 1u8..=2, prop::bool::ANY), 1..20),
        ) {
            // A trace lists its rows by arrival.
            jobs.sort_by_key(|j| j.0);
            let dir = tempdir("replay-kueue-prop");
            let mut csv = String::from("job,submit,start,end,gpus,team\n");
            for (i, (submit, run, gpus, b)) in jobs.iter().enumerate() {
                let team = if *b { "team-b" } else { "team-a" };
                let end = u32::from(*submit) + u32::from(*run);
                csv += &format!("j{i},{submit},{submit},{end},{gpus},{team}\n");
            }
            std::fs::write(dir.join("kueue-trace.csv"), csv).unwrap();
            let scenario = std::fs::read_to_string(repo("tests/data/replay/kueue-trace.yaml")).unwrap();
            std::fs::write(dir.join("kueue-trace.yaml"), scenario).unwrap();
            let (report, pods) = replay_file(&dir.join("kueue-trace.yaml"));
            let s = &report.summary;
            prop_assert_eq!(s.jobs_finished, jobs.len() as u64);
            prop_assert_eq!(s.jobs_admitted, jobs.len() as u64);
            prop_assert!(pods.values().all(|r| r.state == "finished"));
            prop_assert!(pods.values().all(|r| r.first_bind.is_some_and(|b| b >= r.arrival)));
            let last = report.series.points.last().unwrap();
            prop_assert_eq!((last.queued, last.pending, last.running, last.allocated_gpus.0), (0, 0, 0, 0));
        }
    }
}

/// The scenario's own Kueue workloads (TrainJobs here) are admitted over time as a trace's
/// jobs are: the story in `tests/data/replay/kueue-own-workloads.yaml`'s header. train-c has
/// no pod while it waits for quota, and none between its preemption and its readmission.
#[test]
fn the_scenarios_own_kueue_workloads_are_admitted_over_time() {
    let (report, pods) = replay_file(&repo("tests/data/replay/kueue-own-workloads.yaml"));
    // (pod, admitted, first bind, end, attempts, preemptions, state)
    type Life<'a> = (
        &'a str,
        Option<u64>,
        Option<u64>,
        Option<u64>,
        u32,
        u32,
        &'a str,
    );
    let got: Vec<Life> = (pods.iter())
        .map(|(k, r)| {
            let k = k.as_str();
            let admitted = r.admitted;
            (
                k,
                admitted,
                r.first_bind,
                r.end,
                r.attempts,
                r.preemptions,
                r.state,
            )
        })
        .collect();
    let min = 60 * S;
    assert_eq!(
        got,
        [
            (
                "ml/train-a-node-0-0",
                Some(0),
                Some(0),
                Some(10 * min),
                1,
                0,
                "finished"
            ),
            (
                "ml/train-b-node-0-0",
                Some(0),
                Some(0),
                Some(30 * min),
                1,
                0,
                "finished"
            ),
            (
                "ml/train-c-node-0-0",
                Some(10 * min + S),
                Some(10 * min + S),
                Some(85 * min + S),
                2,
                1,
                "finished"
            ),
            (
                "ml/urgent-node-0-0",
                Some(20 * min),
                Some(20 * min),
                Some(25 * min),
                1,
                0,
                "finished"
            ),
        ]
    );
    assert!(report.warnings.is_empty(), "{:?}", report.warnings);
    // Kueue's runtime patch puts the flavor's node labels into every pod.
    for r in pods.values() {
        let node = r.node.as_deref().unwrap_or("");
        assert!(node.starts_with("h100-"), "{} ran on {node}", r.name);
    }
}

/// A written `metadata.creationTimestamp` is the Workload's creation, which Kueue's queue
/// orders by: the pod that arrived last but was created first is admitted first (the story in
/// `tests/data/replay/kueue-written-creation.yaml`'s header).
#[test]
fn a_written_creation_timestamp_orders_kueues_queue() {
    let (_, pods) = replay_file(&repo("tests/data/replay/kueue-written-creation.yaml"));
    let got: Vec<(&str, Option<u64>)> = (pods.values())
        .map(|r| (r.name.as_str(), r.admitted))
        .collect();
    let min = 60 * S;
    assert_eq!(
        got,
        [
            ("early-new", Some(20 * min + 2 * S)),
            ("first", Some(0)),
            ("late-old", Some(10 * min + S)),
        ]
    );
}

/// Random batch Jobs (completions or none, parallelism, a run time, an arrival) that name a
/// LocalQueue whose ClusterQueue has 4 GPUs, on a node with 32: Kueue admits at most 4 GPUs
/// of them at a time, each Job fits alone, so every Job is admitted in the end, runs its
/// completions and finishes, and at the end nothing is allocated or waiting. A Job whose
/// controllers finish it without releasing its quota would leave the others queued.
fn kueue_jobs_text(jobs: &[(Option<u8>, u8, u16, u16)]) -> String {
    let mut s = String::from(
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: kueue-waves}\nspec:\n  replay: {}\n  nodes:\n    - {apiVersion: v1, kind: Node, metadata: {name: big}, status: {allocatable: {cpu: \"64\", memory: 256Gi, pods: \"110\", nvidia.com/gpu: \"32\"}}}\n  objects:\n    - {apiVersion: kueue.x-k8s.io/v1beta2, kind: ResourceFlavor, metadata: {name: gpu}}\n    - {apiVersion: kueue.x-k8s.io/v1beta2, kind: ClusterQueue, metadata: {name: team}, spec: {namespaceSelector: {}, resourceGroups: [{coveredResources: [cpu, nvidia.com/gpu], flavors: [{name: gpu, resources: [{name: cpu, nominalQuota: 64}, {name: nvidia.com/gpu, nominalQuota: 4}]}]}]}}\n    - {apiVersion: kueue.x-k8s.io/v1beta2, kind: LocalQueue, metadata: {name: q, namespace: default}, spec: {clusterQueue: team}}\n  workloads:\n",
    );
    for (i, (completions, parallelism, run, at)) in jobs.iter().enumerate() {
        let completions = completions.map_or(String::new(), |c| format!("completions: {c}, "));
        s += &format!(
            "    - {{apiVersion: batch/v1, kind: Job, metadata: {{name: j{i}, labels: {{kueue.x-k8s.io/queue-name: q}}, annotations: {{schedsim.io/arrival: \"{at}s\", schedsim.io/duration: \"{run}s\"}}}}, spec: {{{completions}parallelism: {parallelism}, template: {{spec: {{restartPolicy: Never, containers: [{{name: c, image: i, resources: {{requests: {{cpu: \"1\"}}, limits: {{nvidia.com/gpu: \"1\"}}}}}}]}}}}}}}}\n"
        );
    }
    s
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
    #[test]
    fn kueue_jobs_all_finish_and_release_their_quota(
        jobs in proptest::collection::vec(
            (proptest::option::of(1u8..=6), 1u8..=4, 1u16..600, 0u16..900),
            1..6,
        ),
    ) {
        let dir = common::cli::tempdir("replay-kueue-waves");
        let file = dir.join("kueue-waves.yaml");
        std::fs::write(&file, kueue_jobs_text(&jobs)).unwrap();
        let (report, pods) = replay_file(&file);
        for (i, (completions, parallelism, _, _)) in jobs.iter().enumerate() {
            let mine: Vec<_> = (pods.values()).filter(|r| r.job == format!("j{i}")).collect();
            let runs = completions.map_or(u64::from(*parallelism), u64::from);
            proptest::prop_assert_eq!(mine.len() as u64, runs, "j{} ran its completions", i);
            proptest::prop_assert!(mine.iter().all(|r| r.state == "finished"), "j{}: {:?}", i, mine);
        }
        proptest::prop_assert_eq!(report.summary.jobs_finished, jobs.len() as u64);
        let last = report.series.points.last().expect("a last sample");
        proptest::prop_assert_eq!((last.allocated_gpus.0, last.running, last.queued), (0, 0, 0));
    }
}

/// A TrainJob Kueue admits but Trainer cannot build with Kueue's patch (it still uses
/// `podTemplateOverrides`): the replay says why, and its pod is never created. Kueue's
/// waitForPodsReady (on by default) evicts it at 30m (admitted at 0 + the 30-minute
/// timeout), requeues it 60 s later, evicts it again at 1h1m; nothing else can happen, so the
/// replay ends there (with a warning) and the pod stays `queued`, in its second backoff.
#[test]
fn an_admitted_trainjob_trainer_cannot_build_stays_suspended() {
    let (report, pods) = replay_file(&repo("tests/data/replay/kueue-older-overrides.yaml"));
    let pod = &pods["ml/old-style-node-0-0"];
    assert_eq!(
        (pod.admitted, pod.first_bind, pod.state),
        (Some(0), None, "queued")
    );
    assert_eq!(
        pod.message.as_deref(),
        Some("Exceeded the PodsReady timeout ml/old-style")
    );
    assert_eq!(report.end_ms, 61 * 60 * S);
    assert_eq!(report.summary.pods_ready_timeouts, 2);
    assert_eq!(
        report.warnings,
        [
            "TrainJob ml/old-style: Kueue admitted it but Trainer cannot start it: Kueue records its admission as a runtimePatches entry of manager kueue.x-k8s.io/manager (Trainer v2.2+), but the TrainJob uses spec.podTemplateOverrides: no Trainer version serves both; it stays suspended",
            "Kueue's waitForPodsReady evicted ml/old-style (2 times so far) for PodsReadyTimeout again and again, their pods never all starting, and nothing else is left to happen: the replay ends at 1h1m (Kueue would requeue them for ever; set spec.replay.until for a fixed span, or waitForPodsReady.requeuingStrategy.backoffLimitCount)"
        ]
    );
}

// ---- waitForPodsReady over time (Kueue's manager Configuration) ----

/// A variant of a scenario file of `tests/data/replay/`, replayed: its text with `from`
/// replaced by `to`.
fn replay_variant(
    file: &str,
    from: &str,
    to: &str,
) -> (
    schedsim::replay::ReplayReport,
    std::collections::BTreeMap<String, schedsim::replay::PodRecord>,
) {
    let dir = common::cli::tempdir(&format!("pods-ready-{}", to.len()));
    let text = std::fs::read_to_string(repo(&format!("tests/data/replay/{file}"))).unwrap();
    assert!(text.contains(from), "{file} has {from:?}");
    std::fs::write(dir.join(file), text.replace(from, to)).unwrap();
    replay_file(&dir.join(file))
}

/// (pod, first bind, end, state) of every pod.
type Ends<'a> = Vec<(&'a str, Option<u64>, Option<u64>, &'a str)>;

fn ends(pods: &std::collections::BTreeMap<String, schedsim::replay::PodRecord>) -> Ends<'_> {
    (pods.iter())
        .map(|(k, r)| (k.as_str(), r.first_bind, r.end, r.state))
        .collect()
}

/// The story of `kueue-pods-ready-backoff.yaml`'s header: big is evicted 5 minutes (the
/// timeout) after its admission at 10 s, readmitted 60 s later, evicted again, readmitted
/// 120 s later, and runs once the blocker's GPUs free.
#[test]
fn the_pods_ready_timeout_evicts_and_requeues_with_backoff() {
    let (report, pods) = replay_file(&repo("tests/data/replay/kueue-pods-ready-backoff.yaml"));
    assert_eq!(
        ends(&pods),
        [
            // Bound at 10 s, 370 s and 790 s; runs its 10 minutes from the last.
            ("default/big-0", Some(10 * S), Some(1390 * S), "finished"),
            ("default/big-1", Some(1000 * S), Some(1600 * S), "finished"),
            ("default/blocker", Some(0), Some(1000 * S), "finished"),
        ]
    );
    let s = &report.summary;
    assert_eq!((s.pods_ready_timeouts, s.jobs_deactivated), (2, 0));
    // An eviction by the timeout is no preemption.
    assert_eq!(s.preemptions, 0);
    assert_eq!(report.end_ms, 1600 * S);
    // Evicted at 310 s: its pods wait for Kueue (queued) until 370 s.
    let at = |t: u64| {
        (report.series.points.iter())
            .find(|p| p.at_ms == t)
            .unwrap()
    };
    assert_eq!((at(340 * S).queued, at(340 * S).running), (2, 1));
    assert_eq!((at(380 * S).queued, at(380 * S).running), (0, 2));
}

/// `backoffLimitCount: 1`: the second timeout deactivates big (`RequeuingLimitExceeded`):
/// its pods are deleted, recorded `deactivated` with the reason.
#[test]
fn past_the_backoff_limit_a_workload_is_deactivated() {
    let (report, pods) = replay_variant(
        "kueue-pods-ready-backoff.yaml",
        "timeout: 5m",
        "timeout: 5m\n        requeuingStrategy: {backoffLimitCount: 1}",
    );
    assert_eq!(
        ends(&pods),
        [
            ("default/big-0", Some(10 * S), Some(670 * S), "deactivated"),
            ("default/big-1", None, Some(670 * S), "deactivated"),
            ("default/blocker", Some(0), Some(1000 * S), "finished"),
        ]
    );
    assert_eq!(
        pods["default/big-1"].message.as_deref(),
        Some(
            "The workload is deactivated due to exceeding the maximum number of re-queuing retries"
        )
    );
    let s = &report.summary;
    assert_eq!((s.pods_ready_timeouts, s.jobs_deactivated), (1, 1));
    assert_eq!((s.jobs_finished, report.end_ms), (1, 1000 * S));
}

/// A v1beta1 Configuration whose `waitForPodsReady` does not say `enable: true` turns it
/// off (v1beta1 defaulting, then conversion to none): big keeps its quota and waits.
#[test]
fn a_v1beta1_configuration_without_enable_turns_pods_ready_off() {
    let (report, pods) = replay_variant(
        "kueue-pods-ready-backoff.yaml",
        "config.kueue.x-k8s.io/v1beta2",
        "config.kueue.x-k8s.io/v1beta1",
    );
    assert_eq!(
        ends(&pods),
        [
            ("default/big-0", Some(10 * S), Some(610 * S), "finished"),
            ("default/big-1", Some(610 * S), Some(1210 * S), "finished"),
            ("default/blocker", Some(0), Some(1000 * S), "finished"),
        ]
    );
    assert_eq!(report.summary.pods_ready_timeouts, 0);
}

/// `requeuingStrategy.timestamp` (`kueue-pods-ready-order.yaml`'s header): evicted by the
/// timeout, stuck waits by its eviction time (behind late, which heads the StrictFIFO queue
/// and blocks it) or by its creation (ahead of late, taking the quota again and again).
#[test]
fn the_requeuing_timestamp_orders_an_evicted_workload() {
    let file = "tests/data/replay/kueue-pods-ready-order.yaml";
    let (report, pods) = replay_file(&repo(file));
    let late = &pods["default/late-0"];
    assert_eq!((late.admitted, late.end), (Some(1000 * S), Some(1600 * S)));
    assert_eq!(report.summary.pods_ready_timeouts, 3);
    assert_eq!(report.end_ms, 2320 * S);
    let (report, pods) = replay_variant(
        "kueue-pods-ready-order.yaml",
        "timestamp: Eviction",
        "timestamp: Creation",
    );
    let late = &pods["default/late-0"];
    assert_eq!((late.admitted, late.end), (Some(1080 * S), Some(1680 * S)));
    assert_eq!(report.summary.pods_ready_timeouts, 5);
    assert_eq!(report.end_ms, 2760 * S);
    // stuck never runs; the replay ends when it only goes round, and says so.
    let stuck = &pods["default/stuck-0"];
    assert_eq!((stuck.first_bind, stuck.state), (None, "queued"));
    assert!(
        report.warnings.iter().any(|w| w.starts_with(
            "Kueue's waitForPodsReady evicted default/stuck (5 times so far) for PodsReadyTimeout again and again"
        )),
        "{:?}",
        report.warnings
    );
}

/// `blockAdmission` (`kueue-pods-ready-block.yaml`'s header): c waits while wide is admitted
/// and not ready, and is admitted by the same cycle once wide's timeout evicts it.
#[test]
fn block_admission_waits_for_every_admitted_workload_to_be_ready() {
    let file = "tests/data/replay/kueue-pods-ready-block.yaml";
    let (report, pods) = replay_file(&repo(file));
    let c = &pods["default/c-0"];
    assert_eq!(
        (c.admitted, c.first_bind, c.end),
        (Some(310 * S), Some(310 * S), Some(910 * S))
    );
    assert_eq!(report.summary.pods_ready_timeouts, 4);
    assert_eq!(report.end_ms, 1630 * S);
    // Before 310 s, c's Workload says why it waits.
    let (_, pods) = replay_variant(
        "kueue-pods-ready-block.yaml",
        "replay: {}",
        "replay: {until: 200s}",
    );
    let c = &pods["default/c-0"];
    assert_eq!(
        (c.state, c.message.as_deref()),
        (
            "queued",
            Some("waiting for all admitted workloads to be in PodsReady condition")
        )
    );
    // Without blockAdmission, c is admitted when it arrives.
    let (_, pods) = replay_variant(
        "kueue-pods-ready-block.yaml",
        "blockAdmission: true",
        "blockAdmission: false",
    );
    let c = &pods["default/c-0"];
    assert_eq!((c.admitted, c.end), (Some(20 * S), Some(620 * S)));
}

/// (pod, end, node) of every pod.
fn ends_on(
    pods: &std::collections::BTreeMap<String, schedsim::replay::PodRecord>,
) -> Vec<(&str, Option<u64>, Option<&str>)> {
    (pods.iter())
        .map(|(k, r)| (k.as_str(), r.end, r.node.as_deref()))
        .collect()
}

/// `recoveryTimeout` (`kueue-pods-ready-recovery.yaml`'s header): a node failure takes a pod
/// of a ready job; the job is evicted 2 minutes later, readmitted after its backoff, and ready
/// once a new node joins. With the recovery not checked, it just waits for the node.
#[test]
fn the_recovery_timeout_counts_from_a_lost_pod() {
    let file = "tests/data/replay/kueue-pods-ready-recovery.yaml";
    let (report, pods) = replay_file(&repo(file));
    let got = ends_on(&pods);
    assert_eq!(
        got,
        [
            ("default/train-0", Some(1280 * S), Some("gpu-a")),
            ("default/train-1", Some(1300 * S), Some("gpu-c")),
        ]
    );
    assert_eq!(report.summary.pods_ready_timeouts, 1);
    let (report, pods) = replay_variant(
        "kueue-pods-ready-recovery.yaml",
        "recoveryTimeout: 2m",
        "recoveryTimeout: 0s",
    );
    let got = ends_on(&pods);
    assert_eq!(
        got,
        [
            ("default/train-0", Some(1300 * S), Some("gpu-c")),
            ("default/train-1", Some(1000 * S), Some("gpu-a")),
        ]
    );
    assert_eq!(report.summary.pods_ready_timeouts, 0);
}

/// A trace's Kueue jobs wait for PodsReady as the scenario's own do
/// (`kueue-pods-ready-trace.yaml`'s header).
#[test]
fn a_traces_kueue_jobs_are_timed_out_too() {
    let file = "tests/data/replay/kueue-pods-ready-trace.yaml";
    let (report, pods) = replay_file(&repo(file));
    assert_eq!(
        ends(&pods),
        [
            ("default/big-0", Some(0), Some(1380 * S), "finished"),
            ("default/big-1", Some(1000 * S), Some(1600 * S), "finished"),
            ("default/blocker", Some(0), Some(1000 * S), "finished"),
        ]
    );
    assert_eq!(report.summary.pods_ready_timeouts, 2);
}

/// Random traces on two 2-GPU nodes behind a 4-GPU queue, with a 1-minute PodsReady timeout:
/// jobs of 1 or 2 GPUs fragment the nodes, so a job admitted for quota may not fit any node
/// and is evicted and requeued; every job still finishes in the end, and nothing stays
/// allocated or queued. And a timeout past the replay's span changes no pod's life from
/// having waitForPodsReady off.
mod pods_ready_properties {
    use super::*;
    use proptest::prelude::*;

    fn scenario(dir: &std::path::Path, config: &str, until: &str) -> std::path::PathBuf {
        let text = std::fs::read_to_string(repo("tests/data/replay/kueue-trace.yaml"))
            .unwrap()
            .replace("  objects:\n", &format!("  objects:\n    - {config}\n"))
            .replace("  replay:\n", &format!("  replay:\n{until}"));
        let file = dir.join(format!("kueue-trace-{}.yaml", config.len() + until.len()));
        std::fs::write(&file, text).unwrap();
        file
    }

    fn trace(dir: &std::path::Path, jobs: &[(u16, u16, u8, bool)]) {
        let mut csv = String::from("job,submit,start,end,gpus,team\n");
        for (i, (submit, run, gpus, b)) in jobs.iter().enumerate() {
            let team = if *b { "team-b" } else { "team-a" };
            let end = u32::from(*submit) + u32::from(*run);
            csv += &format!("j{i},{submit},{submit},{end},{gpus},{team}\n");
        }
        std::fs::write(dir.join("kueue-trace.csv"), csv).unwrap();
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(16))]
        #[test]
        fn evicted_jobs_come_back_and_every_job_finishes(
            mut jobs in prop::collection::vec((0u16..900, 1u16..600, 1u8..=2, prop::bool::ANY), 1..16),
        ) {
            jobs.sort_by_key(|j| j.0);
            let dir = common::cli::tempdir("replay-pods-ready-prop");
            trace(&dir, &jobs);
            let config = "{apiVersion: config.kueue.x-k8s.io/v1beta2, kind: Configuration, waitForPodsReady: {timeout: 1m}}";
            let (report, pods) = replay_file(&scenario(&dir, config, ""));
            let s = &report.summary;
            prop_assert_eq!(s.jobs_finished, jobs.len() as u64);
            prop_assert!(pods.values().all(|r| r.state == "finished"));
            let last = report.series.points.last().unwrap();
            prop_assert_eq!((last.queued, last.pending, last.running, last.allocated_gpus.0), (0, 0, 0, 0));
        }

        #[test]
        fn a_timeout_past_the_span_is_as_good_as_off(
            mut jobs in prop::collection::vec((0u16..900, 1u16..600, 1u8..=4, prop::bool::ANY), 1..12),
        ) {
            jobs.sort_by_key(|j| j.0);
            let dir = common::cli::tempdir("replay-pods-ready-span");
            trace(&dir, &jobs);
            let until = "    until: 2h\n";
            let long = "{apiVersion: config.kueue.x-k8s.io/v1beta2, kind: Configuration, waitForPodsReady: {timeout: 1000h}}";
            let off = "{apiVersion: config.kueue.x-k8s.io/v1beta1, kind: Configuration}";
            // A timer still to come keeps the replay (and kube-scheduler's retries of pods
            // that fit nowhere) going to `until`: attempts differ, nothing else.
            let lives = |file: std::path::PathBuf| {
                let (report, pods) = replay_file(&file);
                let pods: Vec<_> = (pods.into_values())
                    .map(|r| schedsim::replay::PodRecord { attempts: 0, ..r })
                    .collect();
                (pods, report.summary.pods_ready_timeouts)
            };
            prop_assert_eq!(lives(scenario(&dir, long, until)), lives(scenario(&dir, off, until)));
        }
    }
}

/// Queues created over time (`kueue-new-team.yaml`'s header): team-b's jobs wait for their
/// LocalQueue and ClusterQueue, join them when a step creates them, and are admitted then and
/// as quota frees.
#[test]
fn a_teams_queues_created_over_time_take_its_waiting_jobs() {
    let (report, pods) = replay_file(&repo("tests/data/replay/kueue-new-team.yaml"));
    // (pod, arrival, Kueue admission, end)
    assert_eq!(
        admissions(&pods),
        [
            ("team-a/a1", 0, Some(0), Some(600 * S)),
            ("team-b/b1", 60 * S, Some(300 * S), Some(900 * S)),
            ("team-b/b2", 120 * S, Some(901 * S), Some(1501 * S)),
        ]
    );
    assert_eq!(report.summary.admission_wait.max, Some(781 * S));
    assert!(
        !(report.warnings.iter()).any(|w| w.contains("doesn't exist")),
        "{:?}",
        report.warnings
    );
}

/// A requeue due when a step numbers the quota tree anew (`kueue-step-renumbers.yaml`'s
/// header) still brings its tree's workloads back.
#[test]
fn a_requeue_survives_a_step_that_renumbers_the_quota_tree() {
    let (_, pods) = replay_file(&repo("tests/data/replay/kueue-step-renumbers.yaml"));
    assert_eq!(
        admissions(&pods),
        [
            ("team-a/j1", 0, Some(0), Some(600 * S)),
            ("team-a/j2", 0, Some(601 * S), Some(1201 * S)),
        ]
    );
}

/// A ClusterQueue held, then released, by timeline steps (`kueue-hold.yaml`'s header): its
/// waiting job is admitted only once the queue is active again.
#[test]
fn a_cluster_queue_held_over_time_admits_nothing_until_released() {
    let (_, pods) = replay_file(&repo("tests/data/replay/kueue-hold.yaml"));
    assert_eq!(
        admissions(&pods),
        [
            ("team-a/j1", 0, Some(0), Some(600 * S)),
            ("team-a/j2", 0, Some(900 * S), Some(1500 * S)),
        ]
    );
    // Held to the end, j2 waits with the workload controller's message.
    let pods = hold_variant("kueue-hold.yaml", "kueue-held", |text| {
        text.replace(
            "    - name: release\n      at: 15m\n      kueue:\n        - *queue\n",
            "",
        )
    });
    let j2 = &pods["team-a/j2"];
    assert_eq!((j2.admitted, j2.state), (None, "queued"));
    assert_eq!(
        j2.message.as_deref(),
        Some("ClusterQueue team-a is inactive")
    );
}

/// `HoldAndDrain` set by a step evicts what the queue admitted: j1 loses its pods at 300s and
/// waits in the stopped queue with j2; released at 900s, j1 (first by creation) is admitted
/// again and runs its whole time anew, then j2 a batch period after j1 ends.
#[test]
fn hold_and_drain_set_over_time_evicts_the_queues_workloads() {
    let pods = hold_variant("kueue-hold.yaml", "kueue-drain", |text| {
        text.replace("stopPolicy: Hold\n", "stopPolicy: HoldAndDrain\n")
    });
    assert_drained_then_admitted_again(&pods);
}

/// A LocalQueue held, drained and released by timeline steps (`kueue-hold-local-queue.yaml`'s
/// header): its pending workloads leave the queue manager while it is stopped, `HoldAndDrain`
/// evicts what it admitted, and released, its workloads are queued again.
#[test]
fn a_local_queue_held_over_time_queues_nothing_until_released() {
    let file = "kueue-hold-local-queue.yaml";
    let (_, pods) = replay_file(&repo(&format!("tests/data/replay/{file}")));
    assert_eq!(
        admissions(&pods),
        [
            ("team-a/j1", 0, Some(0), Some(600 * S)),
            ("team-a/j2", 0, Some(900 * S), Some(1500 * S)),
        ]
    );
    let pods = hold_variant(file, "lq-drain", |text| {
        text.replace("stopPolicy: Hold}", "stopPolicy: HoldAndDrain}")
    });
    assert_drained_then_admitted_again(&pods);
    let pods = hold_variant(file, "lq-held", |text| {
        text.replace(
            "    - name: release\n      at: 15m\n      kueue:\n        - *local\n",
            "",
        )
    });
    let j2 = &pods["team-a/j2"];
    assert_eq!((j2.admitted, j2.state), (None, "queued"));
    assert_eq!(
        j2.message.as_deref(),
        Some("LocalQueue default is inactive")
    );
}
