//! `schedsim replay` with gangs: Coscheduling's wait at Permit, its timeout and the PodGroup's
//! backoff over time, each replay worked out by hand in its scenario's comment.

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
