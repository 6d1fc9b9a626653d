//! Expectations (`spec.expect`) and `schedsim check`: what CI asserts about a scenario's
//! outcome — per pod, per workload or by label selector (status, node, node set, pool, node
//! labels, message substring or regex), and per scenario (pending pods at most N, GPU
//! allocation at least X%, workloads fully placed).

pub mod bless;

use crate::load::Scenario;
use crate::load::expect::Expectation;
use crate::report::ScenarioReport;
use crate::report::ci::Verdict;
use crate::sched::PodPhase;

/// Checks every expectation of a scenario against its report (those restricted to sweep
/// variants are for `sweep`, those about a replay for `replay::expect`).
pub fn check(scenario: &Scenario, report: &ScenarioReport) -> Vec<Verdict> {
    scenario
        .expectations
        .iter()
        .filter(|e| e.spec.variant.is_none() && e.spec.replay.is_none())
        .map(|e| Verdict {
            title: e.title(),
            path: e.path.clone(),
            at: e.at.clone(),
            failures: failures(e, scenario, report),
        })
        .collect()
}

/// Whether each expectation holds in one run (for sweeps).
pub fn holds(scenario: &Scenario, report: &ScenarioReport) -> Vec<bool> {
    scenario
        .expectations
        .iter()
        .map(|e| failures(e, scenario, report).is_empty())
        .collect()
}

fn placed(status: PodPhase) -> bool {
    matches!(status, PodPhase::Scheduled | PodPhase::Succeeded)
}

/// `name` or `namespace/name` → `namespace/name`.
fn qualified(name: &str) -> String {
    if name.contains('/') {
        name.to_string()
    } else {
        format!("default/{name}")
    }
}

/// The pod belongs to workload `w` (`name` or `namespace/name`).
fn in_workload(p: &crate::report::model::PodReport, w: &str) -> bool {
    p.workload
        .as_ref()
        .is_some_and(|pw| pw == w || qualified(w) == format!("{}/{pw}", p.namespace))
}

fn failures(e: &Expectation, scenario: &Scenario, report: &ScenarioReport) -> Vec<String> {
    let s = &e.spec;
    let mut out = Vec::new();
    let pods: Vec<usize> = (0..report.pods.len())
        .filter(|&i| {
            let p = &report.pods[i];
            let key = format!("{}/{}", p.namespace, p.name);
            s.pod.as_deref().is_some_and(|n| qualified(n) == key)
                || s.workload.as_ref().is_some_and(|w| in_workload(p, w))
                || s.selector.as_ref().is_some_and(|sel| {
                    let labels = &scenario.workloads[i].labels;
                    sel.iter().all(|(k, v)| labels.get(k) == Some(v))
                })
        })
        .collect();
    let selection = s.pod.is_some() || s.workload.is_some() || s.selector.is_some();
    if selection && pods.is_empty() {
        out.push("no pod matches the expectation's pod, workload or selector".to_string());
    }
    let node_labels = |name: &str| {
        scenario
            .nodes
            .iter()
            .find(|n| n.name == name)
            .map(|n| &n.labels)
    };
    for i in pods {
        let p = &report.pods[i];
        let who = format!("pod {}/{}", p.namespace, p.name);
        let got = match &p.node {
            Some(n) => format!("{:?} on {n}", p.status),
            None => format!("{:?} ({})", p.status, p.message),
        };
        if let Some(want) = s.status
            && p.status != want
        {
            out.push(format!("{who}: expected status {want:?}, got {got}"));
        }
        let node = p.node.as_deref();
        if let Some(want) = &s.node
            && node != Some(want.as_str())
        {
            out.push(format!("{who}: expected node {want}, got {got}"));
        }
        if let Some(any) = &s.nodes
            && !node.is_some_and(|n| any.iter().any(|a| a == n))
        {
            out.push(format!(
                "{who}: expected one of nodes {}, got {got}",
                any.join(", ")
            ));
        }
        if let Some(want) = &s.pool {
            let pool = node
                .and_then(|n| report.nodes.iter().find(|r| r.name == n))
                .map(|r| r.pool.as_str());
            if pool != Some(want.as_str()) {
                out.push(format!(
                    "{who}: expected pool {want}, got {got}{}",
                    pool.map(|p| format!(" (pool {p})")).unwrap_or_default()
                ));
            }
        }
        if let Some(want) = &s.node_labels {
            let ok = node
                .and_then(node_labels)
                .is_some_and(|l| want.iter().all(|(k, v)| l.get(k) == Some(v)));
            if !ok {
                let wanted: Vec<String> = want.iter().map(|(k, v)| format!("{k}={v}")).collect();
                out.push(format!(
                    "{who}: expected a node labelled {}, got {got}",
                    wanted.join(",")
                ));
            }
        }
        if let Some(m) = &s.message {
            if let Some(c) = &m.contains
                && !p.message.contains(c.as_str())
            {
                out.push(format!(
                    "{who}: expected a message containing {c:?}, got {:?}",
                    p.message
                ));
            }
            if let Some(r) = &e.regex
                && !r.is_match(&p.message)
            {
                out.push(format!(
                    "{who}: expected a message matching /{}/, got {:?}",
                    r.as_str(),
                    p.message
                ));
            }
        }
    }
    if let Some(max) = s.pending_pods_at_most {
        let pending = report.pods.iter().filter(|p| !placed(p.status)).count();
        if pending > max {
            out.push(format!(
                "expected at most {max} pending pod(s), got {pending}"
            ));
        }
    }
    if let Some(min) = s.gpu_allocation_at_least {
        let allocation = gpu_allocation_percent(report);
        if allocation < min {
            out.push(format!(
                "expected GPU allocation at least {min}%, got {allocation:.1}%"
            ));
        }
    }
    for w in s.fully_placed.iter().flatten() {
        let members: Vec<_> = report
            .pods
            .iter()
            .filter(|p| {
                p.workload
                    .as_ref()
                    .is_some_and(|pw| pw == w || qualified(w) == format!("{}/{pw}", p.namespace))
            })
            .collect();
        let placed_count = members.iter().filter(|p| placed(p.status)).count();
        if members.is_empty() {
            out.push(format!(
                "expected workload {w} fully placed, but it has no pods"
            ));
        } else if placed_count < members.len() {
            out.push(format!(
                "expected workload {w} fully placed, got {placed_count}/{} pods placed",
                members.len()
            ));
        }
    }
    out
}

/// Allocated over allocatable GPUs, in percent (0 without GPUs).
pub fn gpu_allocation_percent(report: &ScenarioReport) -> f64 {
    let (mut used, mut total) = (0i64, 0i64);
    for (_, t, u) in report.nodes.iter().filter_map(|n| n.gpus()) {
        total += t;
        used += u;
    }
    if total == 0 {
        0.0
    } else {
        100.0 * used as f64 / total as f64
    }
}
