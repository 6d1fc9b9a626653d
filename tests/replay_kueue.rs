//! `schedsim replay` with Kueue: a trace's jobs wait for admission before their pods exist,
//! quota frees as jobs finish, a cohort's inadmissible workloads come back a batch period
//! after a release, and a reclaiming queue's preemption deletes the borrower's pods, which run
//! their whole time again once readmitted. Waits are computed by hand.

mod common;

use common::replay::{replay_file, repo};

const S: u64 = 1000;

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
    let got: Vec<(&str, u64, Option<u64>, Option<u64>)> = (pods.iter())
        .map(|(k, r)| (k.as_str(), r.arrival, r.admitted, r.end))
        .collect();
    assert_eq!(
        got,
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
            prop_assert_eq!((last.queued, last.pending, last.running, last.allocated_gpus), (0, 0, 0, 0));
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
        proptest::prop_assert_eq!((last.allocated_gpus, last.running, last.queued), (0, 0, 0));
    }
}

/// A TrainJob Kueue admits but Trainer cannot build with Kueue's patch (it still uses
/// `podTemplateOverrides`): the replay says why, and its pod is never created (it stays
/// `queued`, admitted, holding its quota).
#[test]
fn an_admitted_trainjob_trainer_cannot_build_stays_suspended() {
    let (report, pods) = replay_file(&repo("tests/data/replay/kueue-older-overrides.yaml"));
    let pod = &pods["ml/old-style-node-0-0"];
    assert_eq!(
        (pod.admitted, pod.first_bind, pod.state),
        (Some(0), None, "queued")
    );
    assert_eq!(
        report.warnings,
        [
            "TrainJob ml/old-style: Kueue admitted it but Trainer cannot start it: Kueue records its admission as a runtimePatches entry of manager kueue.x-k8s.io/manager (Trainer v2.2+), but the TrainJob uses spec.podTemplateOverrides: no Trainer version serves both; it stays suspended"
        ]
    );
}
