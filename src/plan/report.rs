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

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanReport {
    pub name: String,
    pub file: String,
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
    /// `spec.plan.expect`, judged: one line per limit not met (empty when all hold).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unmet: Vec<String>,
    /// Points simulated, and points the resource bound ruled out without a simulation.
    pub evaluations: usize,
    pub ruled_out_by_bound: usize,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    /// Nodes added per candidate.
    pub added: BTreeMap<String, u32>,
    pub nodes: u64,
    /// Per hour.
    pub cost: f64,
    pub reached: Reached,
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

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingPod {
    pub pod: String,
    pub message: String,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FrontierPoint {
    pub added: BTreeMap<String, u32>,
    pub cost: f64,
    pub pending_pods: u64,
    pub met: bool,
}

/// The limits of `expect` the report's answer breaks, one line each.
pub fn unmet(expect: &crate::load::scenario::PlanExpect, r: &PlanReport) -> Vec<String> {
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
    for r in reports {
        let _ = writeln!(out, "Plan {} ({})", r.name, r.file);
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
                    "{} pending pod{}{}",
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
        for u in &r.unmet {
            let _ = writeln!(out, "  UNMET: {u}");
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
            met: if f.met { "met" } else { "-" },
        });
        let _ = writeln!(out, "{}", Table::new(rows).with(Style::rounded()));
        out.push('\n');
    }
    out
}
