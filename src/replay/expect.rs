//! `spec.expect` entries with `replay`: limits on a replay's waits, the pods it left pending
//! and its GPU allocation, per group or for every pod, checked against its report.

use super::report::{GroupReport, ReplayReport, WaitReport};
use crate::load::Scenario;
use crate::load::expect::{Expectation, ReplayExpect};
use crate::report::ci::Verdict;
use crate::trace::clock::{format_duration, parse_duration};

/// Checks the scenario's replay expectations against its replay (those restricted to sweep
/// variants are for `sweep`).
pub fn check(scenario: &Scenario, report: &ReplayReport) -> Vec<Verdict> {
    (scenario.expectations.iter())
        .filter(|e| e.spec.variant.is_none())
        .filter_map(|e| verdict(e, report))
        .collect()
}

/// One expectation's verdict on a replay; `None` when it sets no replay limits.
pub fn verdict(e: &Expectation, report: &ReplayReport) -> Option<Verdict> {
    Some(Verdict {
        title: e.title(),
        path: e.path.clone(),
        at: e.at.clone(),
        failures: failures(e.spec.replay.as_ref()?, report),
    })
}

fn failures(r: &ReplayExpect, report: &ReplayReport) -> Vec<String> {
    let (dimension, value) = match (&r.queue, r.priority, &r.class) {
        (Some(q), _, _) => ("queue", q.clone()),
        (_, Some(p), _) => ("priority", p.to_string()),
        (_, _, Some(c)) => ("class", c.clone()),
        _ => ("all", String::new()),
    };
    let group: Option<&GroupReport> = match dimension {
        "all" => Some(&report.summary),
        _ => (report.groups.iter()).find(|g| g.dimension == dimension && g.value == value),
    };
    let who = match dimension {
        "all" => "every pod".to_string(),
        _ => format!("{dimension} {value}"),
    };
    let Some(group) = group else {
        return vec![format!("no pod of {who} arrived in the replay")];
    };
    let mut out = Vec::new();
    for (what, limits, waits) in [
        ("pod wait", &r.pod_wait_at_most, &group.pod_wait),
        ("job wait", &r.job_wait_at_most, &group.job_wait),
    ] {
        for (p, limit) in limits {
            // Checked when the scenario loaded.
            let limit_ms = parse_duration(limit).unwrap_or(0);
            match percentile(waits, p) {
                Some(got) if got > limit_ms => out.push(format!(
                    "{who}: {what} {p} is {}, more than {limit}",
                    format_duration(got)
                )),
                Some(_) => {}
                None => out.push(format!("{who}: no {what} to check: nothing started")),
            }
        }
    }
    if let Some(most) = r.pending_at_end_at_most
        && group.pending_wait.count > most
    {
        out.push(format!(
            "{who}: {} pods still pending at the end, more than {most}",
            group.pending_wait.count
        ));
    }
    if let Some(least) = r.gpu_allocation_at_least {
        let got = report.gpu_allocation_percent;
        if got < least {
            out.push(format!(
                "GPU allocation over the replay is {got:.2} %, less than {least} %"
            ));
        }
    }
    out
}

fn percentile(w: &WaitReport, p: &str) -> Option<u64> {
    match p {
        "p50" => w.p50,
        "p90" => w.p90,
        "p95" => w.p95,
        "p99" => w.p99,
        _ => w.max,
    }
}
