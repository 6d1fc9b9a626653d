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
    let got: Vec<(&str, u64, Option<u64>, Option<u64>, u32, &str)> = (pods.iter())
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
    assert_eq!(report.end_ms, 921 * S);
    let s = &report.summary;
    assert_eq!((s.jobs_admitted, s.jobs_finished, s.preemptions), (4, 4, 1));
    assert_eq!(s.admission_wait.max, Some(571 * S));
    assert_eq!(s.admission_wait.p50, Some(0));
    // The series saw a3's pod queued for Kueue (from 30s until 601s).
    assert!(report.series.points.iter().any(|p| p.queued == 1));
    assert_eq!(report.series.points.last().map(|p| p.queued), Some(0));
}
