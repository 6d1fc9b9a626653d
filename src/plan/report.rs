//! The plan's report: the answer, each candidate alone, why not one node fewer, the cost
//! frontier; as JSON and tables.

use std::collections::BTreeMap;
use std::fmt::Write;

use serde::Serialize;
use tabled::settings::Style;
use tabled::{Table, Tabled};

use super::goal::Reached;

/// How sure the answer is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Status {
    /// The cheapest point within the candidates' bounds: every cheaper point was simulated
    /// and missed the goal, or the resource bound rules it out.
    Optimal,
    /// The cheapest point found before the evaluation budget ran out; cheaper ones may meet
    /// the goal.
    BestFound,
    /// No point within the candidates' bounds meets the goal.
    Infeasible,
    /// The budget ran out before any point met the goal.
    Unknown,
}

impl Status {
    fn text(self) -> &'static str {
        match self {
            Status::Optimal => "optimal (every cheaper point simulated or ruled out)",
            Status::BestFound => {
                "best found (the evaluation budget ran out; cheaper points not all simulated)"
            }
            Status::Infeasible => "infeasible (no point within the candidates' max meets the goal)",
            Status::Unknown => {
                "unknown (the evaluation budget ran out before a point met the goal)"
            }
        }
    }
}

/// A scenario's plan: the nodes to add (when it has candidates) and the nodes that can go
/// (when it has removal groups).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanReport {
    pub name: String,
    pub file: String,
    #[serde(flatten)]
    pub add: Option<AddReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remove: Option<super::removal::RemovalReport>,
    /// `spec.plan.expect`, judged: one line per limit not met (empty when all hold).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unmet: Vec<String>,
}

/// The cheapest nodes to add.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AddReport {
    pub status: Status,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<Answer>,
    /// With every candidate at its max, the resource the goal's pods still lack, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short_of_at_most: Option<String>,
    /// Each candidate alone (the others at their min), when there are several.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub per_candidate: Vec<CandidateAnswer>,
    /// The answer with one node of each of its candidates fewer, and what went wrong there.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub why_not_fewer: Vec<FewerNode>,
    /// The simulated points that had fewer pending pods than every cheaper one, by cost.
    pub frontier: Vec<FrontierPoint>,
    /// Every simulated point, by cost: placement is not monotone in the nodes added, and
    /// these show where it is not.
    pub points: Vec<FrontierPoint>,
    /// No point meeting the goal costs less: every candidate at its floor (the nodes the
    /// resource bound says its pods need at least).
    pub lower_bound_cost: f64,
    /// Points simulated, and points the resource bound ruled out without a simulation.
    pub evaluations: usize,
    pub ruled_out_by_bound: usize,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    /// Nodes added per candidate (steps of a quota candidate).
    pub added: BTreeMap<String, u32>,
    /// Nodes added in all.
    pub nodes: u64,
    /// The nominal quotas of the quota candidates.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub quotas: Vec<QuotaSetting>,
    /// Per hour.
    pub cost: f64,
    pub reached: Reached,
}

/// A ClusterQueue's nominal quota in the answer.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct QuotaSetting {
    pub candidate: String,
    pub cluster_queue: String,
    pub flavor: String,
    pub resource: String,
    /// As a Kubernetes quantity.
    pub nominal_quota: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CandidateAnswer {
    pub candidate: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
    pub proven: bool,
    /// At its max alone, the resource still short, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short_of_at_most: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FewerNode {
    /// The candidate with one node fewer.
    pub candidate: String,
    pub added: BTreeMap<String, u32>,
    pub cost: f64,
    /// The resource the goal's pods lack there, if any (the bound alone rules it out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short_of: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reached: Option<Reached>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pending: Vec<PendingPod>,
}

pub use super::goal::PendingPod;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FrontierPoint {
    pub added: BTreeMap<String, u32>,
    pub cost: f64,
    pub pending_pods: u64,
    /// Replayed (a wait goal): the pods' p95 wait in ms (`None`: never).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_p95_ms: Option<Option<u64>>,
    pub met: bool,
}

impl FrontierPoint {
    /// What the frontier lowers: the p95 wait for a wait goal (never bound last), then the
    /// pending pods.
    pub fn worse_than(&self, other: &FrontierPoint) -> bool {
        let key = |p: &FrontierPoint| {
            let wait = p.wait_p95_ms.map(|w| w.unwrap_or(u64::MAX));
            (wait, p.pending_pods)
        };
        key(self) >= key(other)
    }
}

/// The limits of `expect` the report's answers break, one line each.
pub fn unmet(expect: &crate::load::scenario::PlanExpect, r: &PlanReport) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(a) = &r.add {
        out.extend(add_unmet(expect, a));
    }
    if let Some(rm) = &r.remove {
        for (name, &least) in &expect.removed_at_least {
            let got = rm.removed.get(name).copied().unwrap_or(0);
            if got < least {
                out.push(format!(
                    "expected at least {least} {name} node(s) removable, the answer removes {got}"
                ));
            }
        }
        if let Some(least) = expect.savings_at_least
            && rm.savings < least
        {
            out.push(format!(
                "expected savings of at least {least:.2}/h, the answer saves {:.2}/h",
                rm.savings
            ));
        }
    }
    out
}

fn add_unmet(expect: &crate::load::scenario::PlanExpect, r: &AddReport) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(f) = expect.feasible
        && f != r.answer.is_some()
    {
        out.push(match f {
            true => format!("expected an answer, the search says {:?}", r.status),
            false => "expected no answer, one was found".to_string(),
        });
    }
    let Some(a) = &r.answer else { return out };
    for (name, &most) in &expect.added_at_most {
        let got = a.added.get(name).copied().unwrap_or(0);
        if got > most {
            out.push(format!(
                "expected at most {most} {name} node(s) added, the answer adds {got}"
            ));
        }
    }
    if let Some(most) = expect.nodes_at_most
        && a.nodes > most
    {
        out.push(format!(
            "expected at most {most} nodes added, the answer adds {}",
            a.nodes
        ));
    }
    if let Some(most) = expect.cost_at_most
        && a.cost > most
    {
        out.push(format!(
            "expected a cost of at most {most:.2}/h, the answer costs {:.2}/h",
            a.cost
        ));
    }
    out
}

/// A p95 wait: a duration, or "never" when a pod never bound is the percentile.
fn wait_text(p95: Option<u64>) -> String {
    p95.map_or(
        "never (pods never bound)".into(),
        crate::trace::clock::format_duration,
    )
}

fn added(a: &BTreeMap<String, u32>) -> String {
    let parts: Vec<String> = (a.iter())
        .filter(|(_, k)| **k > 0)
        .map(|(n, k)| format!("{k} × {n}"))
        .collect();
    match parts.is_empty() {
        true => "nothing".into(),
        false => parts.join(" + "),
    }
}

#[derive(Tabled)]
struct FrontierRow {
    #[tabled(rename = "Added")]
    added: String,
    #[tabled(rename = "Cost/h")]
    cost: String,
    #[tabled(rename = "Pending pods")]
    pending: u64,
    #[tabled(rename = "Wait p95")]
    wait: String,
    #[tabled(rename = "Goal")]
    met: &'static str,
}

#[derive(Tabled)]
struct CandidateRow {
    #[tabled(rename = "Candidate alone")]
    candidate: String,
    #[tabled(rename = "Nodes")]
    count: String,
    #[tabled(rename = "Cost/h")]
    cost: String,
}

/// The reports as text.
pub fn render(reports: &[PlanReport]) -> String {
    let mut out = String::new();
    for plan in reports {
        let _ = writeln!(out, "Plan {} ({})", plan.name, plan.file);
        if let Some(r) = &plan.add {
            render_add(&mut out, r);
        }
        if let Some(r) = &plan.remove {
            render_remove(&mut out, r);
        }
        for u in &plan.unmet {
            let _ = writeln!(out, "  UNMET: {u}");
        }
        out.push('\n');
    }
    out
}

fn render_add(out: &mut String, r: &AddReport) {
    {
        let _ = writeln!(out, "  status: {}", r.status.text());
        match &r.answer {
            Some(a) => {
                let _ = writeln!(
                    out,
                    "  cheapest: add {} ({} node{}, {:.2}/h): {} pending pod{}, GPU allocation {:.2}%",
                    added(&a.added),
                    a.nodes,
                    if a.nodes == 1 { "" } else { "s" },
                    a.cost,
                    a.reached.pending_pods,
                    if a.reached.pending_pods == 1 { "" } else { "s" },
                    a.reached.gpu_allocation
                );
                if let Some(p95) = a.reached.wait_p95_ms {
                    let _ = writeln!(out, "    replayed: pod wait p95 {}", wait_text(p95));
                }
                for q in &a.quotas {
                    let _ = writeln!(
                        out,
                        "    ClusterQueue {} flavor {} {}: nominalQuota {} ({} × {})",
                        q.cluster_queue,
                        q.flavor,
                        q.resource,
                        q.nominal_quota,
                        a.added.get(&q.candidate).copied().unwrap_or(0),
                        q.candidate
                    );
                }
            }
            None => {
                if let Some(short) = &r.short_of_at_most {
                    let _ = writeln!(
                        out,
                        "  every candidate at its max still leaves the goal's pods short of {short}"
                    );
                }
            }
        }
        for f in &r.why_not_fewer {
            let short = match &f.short_of {
                Some(r) => format!(" (short of {r})"),
                None => String::new(),
            };
            let why = match &f.reached {
                Some(reached) => format!(
                    "{}{} pending pod{}{}",
                    match reached.wait_p95_ms {
                        Some(p95) => format!("pod wait p95 {}, ", wait_text(p95)),
                        None => String::new(),
                    },
                    reached.pending_pods,
                    if reached.pending_pods == 1 { "" } else { "s" },
                    f.pending
                        .first()
                        .map(|p| format!(", e.g. {}: {}", p.pod, p.message))
                        .unwrap_or_default()
                ),
                None => "not simulated".into(),
            };
            let why = format!("{why}{short}");
            let _ = writeln!(
                out,
                "  one {} fewer ({}): {why}",
                f.candidate,
                added(&f.added)
            );
        }
        let _ = writeln!(
            out,
            "  searched: {} point{} simulated, {} ruled out by the resource bound; no answer costs less than {:.2}/h{}",
            r.evaluations,
            if r.evaluations == 1 { "" } else { "s" },
            r.ruled_out_by_bound,
            r.lower_bound_cost,
            match (&r.answer, r.status) {
                (Some(a), Status::BestFound) =>
                    format!(" (gap {:.2}/h)", a.cost - r.lower_bound_cost),
                _ => String::new(),
            }
        );
        if !r.per_candidate.is_empty() {
            let rows = r.per_candidate.iter().map(|c| CandidateRow {
                candidate: c.candidate.clone(),
                count: match (c.count, &c.short_of_at_most) {
                    (Some(k), _) => format!("{k}{}", if c.proven { "" } else { " (best found)" }),
                    (None, Some(short)) => format!("never (short of {short} at its max)"),
                    (None, None) if c.proven => "never (every count to its max simulated)".into(),
                    (None, None) => "none found (budget ran out)".into(),
                },
                cost: c.cost.map_or("-".into(), |x| format!("{x:.2}")),
            });
            let _ = writeln!(out, "{}", Table::new(rows).with(Style::rounded()));
        }
        let rows = r.frontier.iter().map(|f| FrontierRow {
            added: added(&f.added),
            cost: format!("{:.2}", f.cost),
            pending: f.pending_pods,
            wait: f.wait_p95_ms.map_or("-".into(), wait_text),
            met: if f.met { "met" } else { "-" },
        });
        let mut table = Table::new(rows);
        table.with(Style::rounded());
        if r.frontier.iter().all(|f| f.wait_p95_ms.is_none()) {
            // The fourth column: waits, only for a wait goal.
            use tabled::settings::{Remove, object::Columns};
            table.with(Remove::column(Columns::one(3)));
        }
        let _ = writeln!(out, "{table}");
    }
}

#[derive(Tabled)]
struct RemovalRow {
    #[tabled(rename = "Removal group")]
    group: String,
    #[tabled(rename = "Nodes")]
    candidates: u32,
    #[tabled(rename = "Blocked")]
    blocked: usize,
    #[tabled(rename = "Can go")]
    removed: u32,
}

/// Nodes that can go listed in the text, at most; the JSON lists them all.
const NODES_SHOWN: usize = 20;

/// Blocked nodes and moves listed in the text, at most; the JSON lists them all.
const BLOCKED_SHOWN: usize = 10;

fn render_remove(out: &mut String, r: &super::removal::RemovalReport) {
    use super::removal::RemovalStatus;
    let status = match r.status {
        RemovalStatus::Optimal => "optimal (no set saves more)",
        RemovalStatus::BestFound => "best found (the upper bound leaves room for more)",
    };
    let _ = writeln!(out, "  removal: {status}");
    let _ = writeln!(
        out,
        "  can go: {} node{} ({:.2}/h saved; no set saves more than {:.2}/h), {} pod{} moved",
        r.nodes.len(),
        if r.nodes.len() == 1 { "" } else { "s" },
        r.savings,
        r.upper_bound_savings,
        r.moves.len(),
        if r.moves.len() == 1 { "" } else { "s" },
    );
    if !r.nodes.is_empty() {
        let shown: Vec<&str> = r
            .nodes
            .iter()
            .take(NODES_SHOWN)
            .map(String::as_str)
            .collect();
        let more = match r.nodes.len().saturating_sub(NODES_SHOWN) {
            0 => String::new(),
            n => format!(", … {n} more (see the JSON)"),
        };
        let _ = writeln!(out, "    {}{more}", shown.join(", "));
    }
    for m in r.moves.iter().take(BLOCKED_SHOWN) {
        let _ = writeln!(out, "    move {}: {} → {}", m.pod, m.from, m.to);
    }
    if r.moves.len() > BLOCKED_SHOWN {
        let _ = writeln!(
            out,
            "    {} more moves (see the JSON)",
            r.moves.len() - BLOCKED_SHOWN
        );
    }
    if let Some(w) = &r.why_not_more {
        let why = match (&w.budget, w.pending.first()) {
            (Some(b), _) => format!("PodDisruptionBudget {b} allows no more disruptions"),
            (None, Some(p)) => format!(
                "{} pod{} would not move, e.g. {}: {}",
                w.pending.len(),
                if w.pending.len() == 1 { "" } else { "s" },
                p.pod,
                p.message
            ),
            (None, None) => "not simulated".into(),
        };
        let _ = writeln!(out, "  why not {} ({}) as well: {why}", w.node, w.group);
    }
    for b in r.blocked.iter().take(BLOCKED_SHOWN) {
        let _ = writeln!(
            out,
            "  blocked: {} ({}): {} [{}]",
            b.node, b.group, b.message, b.reason
        );
    }
    if r.blocked.len() > BLOCKED_SHOWN {
        let _ = writeln!(
            out,
            "  blocked: {} more (see the JSON)",
            r.blocked.len() - BLOCKED_SHOWN
        );
    }
    if r.pending_before > 0 {
        let _ = writeln!(
            out,
            "  {} pod{} pending before any removal (they stay pending)",
            r.pending_before,
            if r.pending_before == 1 { "" } else { "s" }
        );
    }
    let _ = writeln!(
        out,
        "  searched: {} set{} simulated, {} ruled out by a budget or a resource",
        r.evaluations,
        if r.evaluations == 1 { "" } else { "s" },
        r.ruled_out
    );
    let rows = r.candidates.iter().map(|(g, &n)| RemovalRow {
        group: g.clone(),
        candidates: n,
        blocked: r.blocked.iter().filter(|b| &b.group == g).count(),
        removed: r.removed.get(g).copied().unwrap_or(0),
    });
    let _ = writeln!(out, "{}", Table::new(rows).with(Style::rounded()));
}
