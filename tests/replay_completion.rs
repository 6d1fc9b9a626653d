//! `schedsim replay` with Jobs and JobSets: a job is done when its controllers say so
//! (completions and parallelism, an Indexed Job's successPolicy, a JobSet's successPolicy),
//! each replay worked out by hand in its scenario's comment.

mod common;

use std::collections::BTreeMap;

use common::cli::tempdir;
use common::replay::{replay_file, repo};
use proptest::prelude::*;
use schedsim::replay::PodRecord;

/// Each pod's name, first bind, end and state.
fn lives(pods: &BTreeMap<String, PodRecord>) -> Vec<(&str, Option<u64>, Option<u64>, &str)> {
    (pods.values())
        .map(|r| (r.name.as_str(), r.first_bind, r.end, r.state))
        .collect()
}

const MINUTE: u64 = 60_000;

/// completions 4, parallelism 2: the controller creates the next two pods when the first two
/// succeed; both Jobs (NonIndexed and Indexed) complete at 20 minutes.
#[test]
fn a_job_runs_its_completions_two_at_a_time() {
    let (report, pods) = replay_file(&repo("tests/data/replay/completion/jobs.yaml"));
    let got: Vec<(String, Option<u64>, Option<u64>, &str)> = pods
        .iter()
        .map(|(k, r)| (k.clone(), r.first_bind, r.end, r.state))
        .collect();
    let pod = |name: &str, bind: u64, end: u64| {
        (
            format!("default/{name}"),
            Some(bind * MINUTE),
            Some(end * MINUTE),
            "finished",
        )
    };
    assert_eq!(
        got,
        [
            pod("batch-0", 0, 10),
            pod("batch-1", 0, 10),
            pod("batch-2", 10, 20),
            pod("batch-3", 10, 20),
            pod("shards-0", 0, 10),
            pod("shards-1", 0, 10),
            pod("shards-2", 10, 20),
            pod("shards-3", 10, 20),
        ]
    );
    let s = &report.summary;
    assert_eq!((s.jobs_arrived, s.jobs_finished), (2, 2));
    assert_eq!((s.pods_arrived, s.pods_finished), (8, 8));
    assert_eq!(s.job_wait.max, Some(0));
    assert_eq!(report.end_ms, 20 * MINUTE);
}

/// An Indexed Job's successPolicy on index 0: met at 10 minutes, the pending indexes are
/// deleted and the Job completes without them.
#[test]
fn a_success_policy_ends_an_indexed_job_early() {
    let (report, pods) = replay_file(&repo("tests/data/replay/completion/success-policy.yaml"));
    let got = lives(&pods);
    let ten = Some(10 * MINUTE);
    assert_eq!(
        got,
        [
            ("leader-decides-0", Some(0), ten, "finished"),
            ("leader-decides-1", Some(0), ten, "finished"),
            ("leader-decides-2", Some(0), ten, "finished"),
            ("leader-decides-3", None, ten, "deleted"),
            ("leader-decides-4", None, ten, "deleted"),
        ]
    );
    assert_eq!(report.summary.jobs_finished, 1);
    assert_eq!(report.end_ms, 10 * MINUTE);
}

/// A JobSet's successPolicy Any over its leader: when the leader succeeds, the workers are
/// deleted, the running one (its GPU freed) and the pending ones.
#[test]
fn a_jobset_success_policy_deletes_the_workers() {
    let (report, pods) = replay_file(&repo("tests/data/replay/completion/jobset-any.yaml"));
    let got = lives(&pods);
    let ten = Some(10 * MINUTE);
    assert_eq!(
        got,
        [
            ("blocker", Some(0), Some(5 * MINUTE), "finished"),
            ("js-leader-0-0", Some(0), ten, "finished"),
            ("js-workers-0-0", Some(5 * MINUTE), ten, "deleted"),
            ("js-workers-0-1", None, ten, "deleted"),
            ("js-workers-0-2", None, ten, "deleted"),
        ]
    );
    let s = &report.summary;
    assert_eq!((s.jobs_finished, s.pods_finished), (2, 2));
    assert_eq!(report.end_ms, 10 * MINUTE);
    // 5 + 10 + 5 GPU-minutes used.
    assert_eq!(s.gpu_hours_used, 0.333);
}

/// A TrainJob is done with the JobSet its runtime makes: the runtime's successPolicy (All over
/// the launcher) ends it when the launcher succeeds, and the waiting node pod is deleted.
#[test]
fn a_trainjob_ends_with_its_runtimes_success_policy() {
    let (report, pods) = replay_file(&repo("tests/data/replay/completion/trainjob-launcher.yaml"));
    let got = lives(&pods);
    let ten = Some(10 * MINUTE);
    assert_eq!(
        got,
        [
            ("tj-launcher-0-0", Some(0), ten, "finished"),
            ("tj-node-0-0", Some(0), ten, "finished"),
            ("tj-node-0-1", None, ten, "deleted"),
        ]
    );
    assert_eq!(report.summary.jobs_finished, 1);
    assert_eq!(report.end_ms, 10 * MINUTE);
}

/// Random Jobs (completions or none, parallelism, Indexed or not, a run time) on a node with
/// room for every pod they keep active: each Job runs in waves of `parallelism` pods, so it
/// ends after ⌈completions / parallelism⌉ runs (one without completions), having run exactly
/// `completions` pods; at the end nothing is allocated.
fn jobs_text(jobs: &[(Option<u8>, u8, bool, u16)]) -> String {
    let mut s = String::from(
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: waves}\nspec:\n  replay: {}\n  nodes:\n    - {apiVersion: v1, kind: Node, metadata: {name: big}, status: {allocatable: {cpu: \"64\", memory: 256Gi, pods: \"110\", nvidia.com/gpu: \"32\"}}}\n  workloads:\n",
    );
    for (i, (completions, parallelism, indexed, run)) in jobs.iter().enumerate() {
        let completions = completions.map_or(String::new(), |c| format!("completions: {c}, "));
        let mode = match indexed {
            true => "completionMode: Indexed, ",
            false => "",
        };
        s += &format!(
            "    - {{apiVersion: batch/v1, kind: Job, metadata: {{name: j{i}, annotations: {{schedsim.io/duration: \"{run}s\"}}}}, spec: {{{completions}parallelism: {parallelism}, {mode}template: {{spec: {{restartPolicy: Never, containers: [{{name: c, image: i, resources: {{requests: {{cpu: \"1\"}}, limits: {{nvidia.com/gpu: \"1\"}}}}}}]}}}}}}}}\n"
        );
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]
    #[test]
    fn jobs_run_in_waves_of_their_parallelism(
        jobs in prop::collection::vec(
            (prop::option::of(1u8..=9), 1u8..=4, any::<bool>(), 1u16..600),
            1..5,
        ),
    ) {
        // An Indexed Job needs completions.
        let jobs: Vec<_> = (jobs.into_iter())
            .map(|(c, p, indexed, run)| (c, p, indexed && c.is_some(), run))
            .collect();
        let dir = tempdir("replay-waves");
        let file = dir.join("waves.yaml");
        std::fs::write(&file, jobs_text(&jobs)).unwrap();
        let (report, pods) = replay_file(&file);
        for (i, (completions, parallelism, _, run)) in jobs.iter().enumerate() {
            let mine: Vec<&PodRecord> = (pods.values())
                .filter(|r| r.job == format!("j{i}"))
                .collect();
            let (runs, waves) = match completions {
                Some(c) => (u64::from(*c), u64::from(c.div_ceil(*parallelism))),
                None => (u64::from(*parallelism), 1),
            };
            prop_assert_eq!(mine.len() as u64, runs, "j{} ran its completions", i);
            prop_assert!(mine.iter().all(|r| r.state == "finished"));
            let end = mine.iter().filter_map(|r| r.end).max();
            prop_assert_eq!(end, Some(waves * u64::from(*run) * 1000), "j{} ends after its waves", i);
        }
        prop_assert_eq!(report.summary.jobs_finished, jobs.len() as u64);
        let last = report.series.points.last().expect("a last sample");
        prop_assert_eq!((last.allocated_gpus.0, last.running), (0, 0));
    }
}
