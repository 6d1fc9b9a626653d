//! `schedsim replay` with gangs: Coscheduling's wait at Permit, its timeout and the PodGroup's
//! backoff over time, and Volcano's gangs placed whole in its sessions, each replay worked out
//! by hand in its scenario's comment.

mod common;

use common::cli::tempdir;
use common::replay::{replay_file, repo};

const S: u64 = 1000;

/// Three members on room for two: they wait at Permit, PostFilter rejects them, the gang spins
/// three rounds and stops; the node added at 30 s lets the quorum bind all three together.
#[test]
fn a_gang_waits_at_permit_until_a_node_makes_its_quorum() {
    let (report, pods) = replay_file(&repo("tests/data/replay/gangs/waits-for-a-node.yaml"));
    let got: Vec<(&str, Option<u64>, Option<u64>, u32)> = pods
        .values()
        .map(|r| (r.name.as_str(), r.first_bind, r.end, r.attempts))
        .collect();
    assert_eq!(
        got,
        [
            ("g-0", Some(30 * S), Some(630 * S), 4),
            ("g-1", Some(30 * S), Some(630 * S), 4),
            ("g-2", Some(30 * S), Some(630 * S), 4),
        ]
    );
    assert_eq!(report.scheduling_attempts, 12);
    assert!(
        !report.warnings.iter().any(|w| w.contains("pod by pod")),
        "{:?}",
        report.warnings
    );
}

/// With `podGroupRejectPercentage` 50 PostFilter spares the waiting members: they time out at
/// 60 s, are retried with the member their room frees, and bind when the node comes at 90 s.
#[test]
fn waiting_members_time_out_and_retry() {
    let (report, pods) = replay_file(&repo("tests/data/replay/gangs/times-out.yaml"));
    let got: Vec<(&str, Option<u64>, u32)> = pods
        .values()
        .map(|r| (r.name.as_str(), r.first_bind, r.attempts))
        .collect();
    assert_eq!(
        got,
        [
            ("g-0", Some(90 * S), 2),
            ("g-1", Some(90 * S), 3),
            ("g-2", Some(90 * S), 2),
        ]
    );
    assert_eq!(report.end_ms, 690 * S);
}

/// `podGroupBackoffSeconds`: after PostFilter rejects the gang, its members are refused at
/// PreFilter, and each refusal backs the group off again; it binds at the first retry past the
/// backoff (140 s), not at the first one after the node came (30 s).
#[test]
fn a_rejected_gang_backs_off() {
    let (_, pods) = replay_file(&repo("tests/data/replay/gangs/backs-off.yaml"));
    let binds: Vec<(&str, Option<u64>)> = pods
        .values()
        .map(|r| (r.name.as_str(), r.first_bind))
        .collect();
    assert_eq!(
        binds,
        [
            ("cpu-x", Some(30 * S)),
            ("cpu-y", Some(70 * S)),
            ("cpu-z", Some(140 * S)),
            ("g-0", Some(140 * S)),
            ("g-1", Some(140 * S)),
            ("g-2", Some(140 * S)),
        ]
    );
}

/// The scenario at `path` without its timeline (no node is added).
fn without_timeline(path: &str, tag: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(repo(path)).unwrap();
    let cut = text.find("  timeline:").unwrap();
    let rest = &text[cut..];
    let end = rest.find("  replay:").unwrap();
    let file = tempdir(tag).join("s.yaml");
    std::fs::write(&file, format!("{}{}", &text[..cut], &rest[end..])).unwrap();
    file
}

/// A gang that never fits does not keep the replay going: with cycles of no time its spin
/// stops (the replay ends at 0 s; with room for one member, once the member left waiting
/// times out), and a Permit timeout that changed nothing is the last one (at 60 s the members
/// wait again, alike, so the replay ends there with them pending).
#[test]
fn a_gang_that_never_fits_ends_the_replay() {
    let file = without_timeline("tests/data/replay/gangs/waits-for-a-node.yaml", "gang-spin");
    let (report, pods) = replay_file(&file);
    assert_eq!(report.end_ms, 0);
    assert_eq!(report.scheduling_attempts, 9);
    assert!(pods.values().all(|r| r.state == "pending"), "{pods:?}");

    // Room for one of three: the gang spins three rounds and is parked; g-2, still queued,
    // waits alone until its timeout at 60 s, which changes nothing more.
    let file = without_timeline("tests/data/replay/gangs/waits-for-a-node.yaml", "gang-park");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("count: 2", "count: 1")).unwrap();
    let (report, pods) = replay_file(&file);
    assert_eq!(report.end_ms, 60 * S);
    assert_eq!(report.scheduling_attempts, 7);
    assert!(pods.values().all(|r| r.state == "pending"), "{pods:?}");

    let file = without_timeline("tests/data/replay/gangs/times-out.yaml", "gang-timeouts");
    let (report, pods) = replay_file(&file);
    assert_eq!(report.end_ms, 60 * S);
    assert_eq!(report.scheduling_attempts, 6);
    assert!(pods.values().all(|r| r.state == "pending"), "{pods:?}");
}

/// Coscheduling's QueueSort orders pods by their first entry into activeQ, PrioritySort by
/// their last failure: the pod that waited longer binds first only under Coscheduling (see
/// the scenario's comment for the times).
#[test]
fn coscheduling_orders_the_queue_by_initial_attempt() {
    let file = repo("tests/data/replay/gangs/queue-sort.yaml");
    let binds = |pods: &std::collections::BTreeMap<String, schedsim::replay::PodRecord>| {
        let got: Vec<(&str, Option<u64>)> = pods
            .values()
            .map(|r| (r.name.as_str(), r.first_bind))
            .collect();
        format!("{got:?}")
    };
    let (_, pods) = replay_file(&file);
    assert_eq!(
        binds(&pods),
        format!(
            "{:?}",
            [("a", Some(40 * S)), ("b", Some(100 * S)), ("hold", Some(0))]
        )
    );
    // The same cluster under upstream's default scheduler (no configuration, no gang): the
    // queue sorts by PrioritySort.
    let mut scenario = common::replay::load(&file);
    scenario.config.serves_every_pod = true;
    let (_, pods) = common::replay::replay_scenario(&scenario);
    assert_eq!(
        binds(&pods),
        format!(
            "{:?}",
            [("a", Some(100 * S)), ("b", Some(40 * S)), ("hold", Some(0))]
        )
    );
}

/// A gang whose members Unreserve rejected sorts by the time it failed, not by its creation
/// (scheduler-plugins' `lastFailedSchedulePG`): the plain pod that waited since 5 s takes the
/// room the timeout frees at 20 s.
#[test]
fn a_failed_gang_sorts_after_pods_that_waited_since() {
    let (_, pods) = replay_file(&repo(
        "tests/data/replay/gangs/failed-group-sorts-last.yaml",
    ));
    let p = &pods["ml/p"];
    assert_eq!(p.first_bind, Some(21 * S), "{p:?}");
    assert_eq!(pods["ml/hold"].first_bind, Some(0));
}

/// Permit letting a failed gang through clears the failure (`ClearPodGroupScheduleFailure`):
/// its member still queued sorts by the group's creation again and takes the two-GPU node
/// before the plain pod queued since 5 s; with the failure kept, the plain pod would go
/// first.
#[test]
fn a_gang_through_permit_sorts_by_its_creation_again() {
    let (_, pods) = replay_file(&repo("tests/data/replay/gangs/permit-clears-failure.yaml"));
    let bound = |name: &str| {
        let p = &pods[&format!("ml/{name}")];
        (p.first_bind, p.node.clone())
    };
    assert_eq!(bound("g-0"), (Some(25 * S), Some("gpu-0".into())));
    assert_eq!(bound("g-1"), (Some(25 * S), Some("gpu-1".into())));
    assert_eq!(bound("g-2"), (Some(100 * S), Some("big-0".into())));
    assert_eq!(bound("p"), (None, None));
}

/// PostFilter's rejection of a gang with no member waiting marks it failed too: after its
/// members' first failure at 10 s the plain pod queued since 5 s goes first, and without a
/// KubeSchedulerConfiguration a scenario with Coscheduling gangs sorts the queue by
/// Coscheduling.
#[test]
fn a_gang_rejected_at_post_filter_sorts_after_pods_that_waited_since() {
    let (_, pods) = replay_file(&repo(
        "tests/data/replay/gangs/rejected-group-sorts-last.yaml",
    ));
    let got: Vec<(&str, Option<u64>)> = pods
        .values()
        .map(|r| (r.name.as_str(), r.first_bind))
        .collect();
    assert_eq!(
        got,
        [
            ("g-0", None),
            ("g-1", None),
            ("hold", Some(0)),
            ("p", Some(30 * S))
        ]
    );
}

const MIN: u64 = 60 * S;

/// A pod's name, three of its times and its attempts, as a test picks them.
type Life<'a> = (&'a str, Option<u64>, Option<u64>, Option<u64>, u32);

/// Each pod's (name, first bind, end, wait, attempts), in `namespace/name` order.
fn lives(pods: &std::collections::BTreeMap<String, schedsim::replay::PodRecord>) -> Vec<Life<'_>> {
    (pods.values())
        .map(|r| {
            let wait = r.first_bind.map(|b| b - r.arrival);
            (r.name.as_str(), r.first_bind, r.end, wait, r.attempts)
        })
        .collect()
}

/// `path`'s scenario with `from` replaced by `to` (it must occur), written to a fresh file.
fn edited(path: &str, tag: &str, edits: &[(&str, &str)]) -> std::path::PathBuf {
    let mut text = std::fs::read_to_string(repo(path)).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{from:?} not in {path}");
        text = text.replace(from, to);
    }
    let file = tempdir(tag).join("s.yaml");
    std::fs::write(&file, text).unwrap();
    file
}

/// A Volcano gang of two 8-GPU pods arrives at 1 m on two 8-GPU nodes, one held until 10 m:
/// no member binds before then (pod by pod, g-0 would bind at 1 m on the free node); both
/// bind at 10 m, the tick `hold` ends at. Each waited 10 m − 1 m = 9 m and was tried twice
/// (the sessions at 1 m and 10 m: nothing changed in between).
#[test]
fn a_volcano_gang_binds_all_together_once_room_frees() {
    let (report, pods) = replay_file(&repo("tests/data/replay/gangs/volcano-waits-for-room.yaml"));
    assert_eq!(
        lives(&pods),
        [
            ("g-0", Some(10 * MIN), Some(40 * MIN), Some(9 * MIN), 2),
            ("g-1", Some(10 * MIN), Some(40 * MIN), Some(9 * MIN), 2),
            ("hold", Some(0), Some(10 * MIN), Some(0), 1),
        ]
    );
    // The waits of the three pods, by hand: 9 m, 9 m and 0.
    assert_eq!(report.summary.pod_wait.max, Some(9 * MIN));
    assert_eq!(report.summary.pod_wait.p50, Some(9 * MIN));
    assert_eq!(report.summary.pod_wait.mean, Some(6 * MIN));
    assert_eq!(report.scheduling_attempts, 5);
    assert!(
        !report.warnings.iter().any(|w| w.contains("pod by pod")),
        "{:?}",
        report.warnings
    );
}

/// Volcano binds at its sessions' ticks: `hold` ending at 10 m 0.5 s frees the node between
/// two ticks, and the gang binds at the next one, 10 m 1 s (a wait of 9 m 1 s). With
/// `volcanoSchedulePeriod: 1m` the ticks are whole minutes: the gang, tried at the 1 m tick
/// it arrived at, binds at 11 m.
#[test]
fn a_volcano_gang_binds_at_the_next_session_tick() {
    let path = "tests/data/replay/gangs/volcano-waits-for-room.yaml";
    let late = (
        "schedsim.io/duration: \"10m\"",
        "schedsim.io/duration: \"10m500ms\"",
    );
    let (_, pods) = replay_file(&edited(path, "volcano-tick", &[late]));
    let binds: Vec<Option<u64>> = pods.values().map(|r| r.first_bind).collect();
    assert_eq!(binds, [Some(601 * S), Some(601 * S), Some(0)]);
    assert_eq!(
        pods["ml/g-0"]
            .first_bind
            .map(|b| b - pods["ml/g-0"].arrival),
        Some(541 * S)
    );

    let minute = ("replay: {}", "replay: {volcanoSchedulePeriod: 1m}");
    let (_, pods) = replay_file(&edited(path, "volcano-period", &[late, minute]));
    let binds: Vec<(Option<u64>, u32)> =
        pods.values().map(|r| (r.first_bind, r.attempts)).collect();
    assert_eq!(
        binds,
        [(Some(11 * MIN), 2), (Some(11 * MIN), 2), (Some(0), 1)]
    );
}

/// A gang that never fits binds nothing and does not keep the replay going: after the
/// session at 1 m nothing changes, so the replay ends there with both members pending,
/// saying what `run` says of them.
#[test]
fn a_volcano_gang_that_never_fits_binds_nothing_and_says_what_run_says() {
    let path = "tests/data/replay/gangs/volcano-waits-for-room.yaml";
    let forever = (
        "schedsim.io/arrival: \"0s\", schedsim.io/duration: \"10m\"",
        "schedsim.io/arrival: \"0s\"",
    );
    let file = edited(path, "volcano-never", &[forever]);
    let (report, pods) = replay_file(&file);
    assert_eq!(report.end_ms, MIN);
    assert_eq!(report.scheduling_attempts, 3);
    let states: Vec<(&str, &str)> = (pods.values())
        .map(|r| (r.name.as_str(), r.state))
        .collect();
    assert_eq!(
        states,
        [("g-0", "pending"), ("g-1", "pending"), ("hold", "running")]
    );
    let replayed: Vec<String> = ["ml/g-0", "ml/g-1"]
        .iter()
        .map(|k| pods[*k].message.clone().unwrap())
        .collect();
    assert_eq!(
        replayed[0],
        "schedsim: Volcano's gang plugin binds none of PodGroup ml/g: 1 of minMember 2 pods could be placed"
    );
    assert!(
        replayed[1].starts_with("0/2 nodes are available: 2 Insufficient nvidia.com/gpu."),
        "{}",
        replayed[1]
    );
    // `run` (a snapshot) says the same of them.
    let scenario = common::replay::load(&file);
    let snapshot = schedsim::simulate(&scenario);
    let run: Vec<String> = ["g-0", "g-1"]
        .iter()
        .map(|n| {
            let p = snapshot.pods.iter().find(|p| p.name == *n).unwrap();
            p.message.clone()
        })
        .collect();
    assert_eq!(run, replayed);
}

/// minMember 2 of three pods, then a gang of two, on four 8-GPU nodes (the scenario's comment
/// has the story): `a` takes its quorum at the 1 m 1 s tick, `b` (not ready) has its turn
/// before `a`'s third pod (ready job) and takes the last two nodes; a-2 binds alone once `b`
/// ends at 6 m 1.2 s, at the 6 m 2 s tick.
#[test]
fn a_volcano_gang_binds_its_quorum_then_the_rest_as_it_fits() {
    let (report, pods) = replay_file(&repo("tests/data/replay/gangs/volcano-min-member.yaml"));
    let (t, ms) = (61 * S, 1);
    assert_eq!(
        lives(&pods),
        [
            ("a-0", Some(t), Some(t + 30 * MIN), Some(500 * ms), 1),
            ("a-1", Some(t), Some(t + 30 * MIN), Some(500 * ms), 1),
            (
                "a-2",
                Some(362 * S),
                Some(362 * S + 30 * MIN),
                Some(362_000 - 60_500),
                2
            ),
            ("b-0", Some(t), Some(t + 5 * MIN + 200), Some(300 * ms), 1),
            ("b-1", Some(t), Some(t + 5 * MIN + 200), Some(300 * ms), 1),
        ]
    );
    assert_eq!(report.scheduling_attempts, 6);
}

/// kube-scheduler preempts a running Volcano member (see the scenario's comment): created
/// again, it waits for a session; the preemptor's nomination keeps it off its old node at
/// 10 m 30 s (and at the 10 m 31 s tick, after the preemptor bound), and it binds alone at
/// the first tick after the preemptor ends (20 m 30.5 s), its job ready again with it.
#[test]
fn a_preempted_volcano_member_binds_alone_when_room_frees() {
    let (_, pods) = replay_file(&repo("tests/data/replay/gangs/volcano-preempted.yaml"));
    let got: Vec<(&str, Option<u64>, u32, u32)> = (pods.values())
        .map(|r| (r.name.as_str(), r.end, r.attempts, r.preemptions))
        .collect();
    assert_eq!(
        got,
        [
            ("g-0", Some(60 * MIN), 1, 0),
            ("g-1", Some(20 * MIN + 31 * S + 60 * MIN), 4, 1),
            ("urgent", Some(20 * MIN + 30 * S + 500), 2, 0),
        ]
    );
    assert_eq!(pods["ml/urgent"].first_bind, Some(10 * MIN + 30 * S));
}

/// A Volcano member whose node fails is created again and binds alone at the first tick after
/// a node is added (7 m 1 s), its sibling still running.
#[test]
fn a_volcano_member_on_a_failed_node_binds_alone_on_a_new_node() {
    let (_, pods) = replay_file(&repo("tests/data/replay/gangs/volcano-node-fails.yaml"));
    let got: Vec<(&str, Option<u64>, Option<&str>, u32)> = (pods.values())
        .map(|r| (r.name.as_str(), r.end, r.node.as_deref(), r.attempts))
        .collect();
    assert_eq!(
        got,
        [
            ("g-0", Some(60 * MIN), Some("gpu-a"), 1),
            ("g-1", Some(7 * MIN + S + 60 * MIN), Some("gpu-c"), 3),
        ]
    );
}

/// Volcano TrainJobs through Kueue (see the scenario's comment): Kueue admits and preempts, and
/// Volcano binds each admitted gang whole, when its nodes are free: urgent at 10 m, train-b
/// (readmitted at 10 m 1 s) at 15 m.
#[test]
fn volcano_gangs_admitted_by_kueue_bind_whole() {
    let (_, pods) = replay_file(&repo("tests/data/replay/gangs/volcano-kueue.yaml"));
    // (name, admission, first bind, end, attempts)
    let got: Vec<Life> = (pods.values())
        .map(|r| (r.name.as_str(), r.admitted, r.first_bind, r.end, r.attempts))
        .collect();
    assert_eq!(
        got,
        [
            ("train-a-node-0-0", Some(0), Some(0), Some(10 * MIN), 1),
            ("train-a-node-0-1", Some(0), Some(0), Some(10 * MIN), 1),
            (
                "train-b-node-0-0",
                Some(MIN),
                Some(15 * MIN),
                Some(45 * MIN),
                3
            ),
            (
                "train-b-node-0-1",
                Some(MIN),
                Some(15 * MIN),
                Some(45 * MIN),
                3
            ),
            (
                "urgent-node-0-0",
                Some(5 * MIN),
                Some(10 * MIN),
                Some(15 * MIN),
                2
            ),
            (
                "urgent-node-0-1",
                Some(5 * MIN),
                Some(10 * MIN),
                Some(15 * MIN),
                2
            ),
        ]
    );
}

/// Volcano replays give the same bytes on one thread and on two, and bind the gangs whole.
#[test]
fn volcano_replays_are_byte_identical_at_any_thread_count() {
    let dir = tempdir("volcano-threads");
    let out = |threads: &str| {
        let o = dir.join(threads);
        let args = [
            "replay",
            "tests/data/replay/gangs/volcano-min-member.yaml",
            "tests/data/replay/gangs/volcano-waits-for-room.yaml",
            "--format",
            "json",
            "--pods-csv",
            "--out",
            o.to_str().unwrap(),
        ];
        let stdout = common::cli::ok_with_threads(&args, threads);
        let read = |what: &str| std::fs::read_to_string(o.join(what)).unwrap();
        let pods = read("replay-volcano-waits-for-room-pods.csv");
        let series = read("replay-volcano-min-member-series.csv");
        (stdout, pods, series)
    };
    let one = out("1");
    assert_eq!(one, out("2"));
    // g-0 and g-1 bound together at 10 m (the CSV's first_bind_ms column).
    let binds: Vec<&str> = (one.1.lines().skip(1))
        .filter(|l| l.starts_with("ml,g-"))
        .map(|l| l.split(',').nth(9).unwrap())
        .collect();
    assert_eq!(binds, ["600000", "600000"]);
}

/// `spec.replay.volcanoSchedulePeriod` must be longer than 0.
#[test]
fn a_zero_volcano_schedule_period_is_refused() {
    let file = edited(
        "tests/data/replay/gangs/volcano-waits-for-room.yaml",
        "volcano-zero",
        &[("replay: {}", "replay: {volcanoSchedulePeriod: 0s}")],
    );
    let loaded = schedsim::load::load_files(&[file], &schedsim::load::LoadOptions::default());
    let errors: Vec<String> = loaded.errors.iter().map(|e| e.to_string()).collect();
    assert!(
        errors.iter().any(|e| e.contains(
            "spec.replay.volcanoSchedulePeriod: Volcano's schedule period must be longer than 0"
        )),
        "{errors:?}"
    );
}

/// A gated Volcano task is skipped (see the scenario's comment): its gang binds nothing until
/// the gate is lifted, then binds whole at the next tick (12 m 1 s).
#[test]
fn a_gated_volcano_member_holds_its_gang_until_the_gate_is_lifted() {
    let (_, pods) = replay_file(&repo("tests/data/replay/gangs/volcano-gated.yaml"));
    let t = 12 * MIN + S;
    assert_eq!(
        lives(&pods),
        [
            ("g-0", Some(t), Some(t + 30 * MIN), Some(t - MIN), 3),
            ("g-1", Some(t), Some(t + 30 * MIN), Some(t - MIN), 1),
            ("hold", Some(0), Some(5 * MIN), Some(0), 1),
        ]
    );
}

/// kube-scheduler's cycles and Volcano's sessions do not overlap: with `cycle: 1500ms` on three
/// nodes, `hold`'s cycle runs from 0 to 1.5 s; the gang arriving at 0.2 s is seen by the tick
/// at 1 s, whose session runs when the cycle ends: both members bind at 1.5 s, beside `hold`.
#[test]
fn a_volcano_tick_inside_a_cycle_has_its_session_when_the_cycle_ends() {
    let file = edited(
        "tests/data/replay/gangs/volcano-waits-for-room.yaml",
        "volcano-cycle",
        &[
            ("count: 2", "count: 3"),
            (
                "schedsim.io/arrival: \"1m\"",
                "schedsim.io/arrival: \"200ms\"",
            ),
            ("replay: {}", "replay: {cycle: 1500ms}"),
        ],
    );
    let (_, pods) = replay_file(&file);
    let t = 1500;
    assert_eq!(
        lives(&pods),
        [
            ("g-0", Some(t), Some(t + 30 * MIN), Some(t - 200), 1),
            ("g-1", Some(t), Some(t + 30 * MIN), Some(t - 200), 1),
            ("hold", Some(t), Some(t + 10 * MIN), Some(t), 1),
        ]
    );
}
