//! DefaultPreemption's part of an explanation: the candidates the dry run found, each with
//! its victims, and the criterion of `pickOneNodeForPreemption` on which each lost to the one
//! picked (`pkg/scheduler/framework/preemption/preemption.go`).

use std::fmt::Write;

use serde::Serialize;
use tabled::builder::Builder;
use tabled::settings::Style;

use crate::sched::explain::Preemption;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PreemptionReport {
    /// Nodes preemption might help: those no filter found `UnschedulableAndUnresolvable`.
    pub might_help: usize,
    /// The dry run is from an earlier cycle of the pod: the one that nominated it.
    #[serde(default)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub earlier_cycle: bool,
    /// The candidates in the order the dry run found them (from a random node, until it had
    /// `numCandidates`).
    pub candidates: Vec<CandidateReport>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chosen: Option<String>,
    /// Why there was no preemption, as the pod's message says it.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CandidateReport {
    pub node: String,
    /// Most important first.
    pub victims: Vec<VictimReport>,
    pub pdb_violations: usize,
    /// The first criterion on which it lost to the chosen candidate.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost_on: Option<&'static str>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct VictimReport {
    /// `namespace/name`.
    pub pod: String,
    pub priority: i32,
}

impl PreemptionReport {
    pub fn new(p: &Preemption) -> Self {
        PreemptionReport {
            might_help: p.might_help,
            earlier_cycle: p.earlier,
            candidates: (p.candidates.iter())
                .map(|c| CandidateReport {
                    node: c.node.clone(),
                    victims: (c.victims.iter())
                        .map(|(pod, priority)| VictimReport {
                            pod: pod.clone(),
                            priority: *priority,
                        })
                        .collect(),
                    pdb_violations: c.pdb_violations,
                    lost_on: c.lost_on,
                })
                .collect(),
            chosen: p.chosen.map(|i| p.candidates[i].node.clone()),
            message: p.message.clone(),
        }
    }
}

/// Victims listed per candidate in the text (the JSON lists them all).
const VICTIMS_SHOWN: usize = 4;

/// The dry run's lines in the text report.
pub fn render(out: &mut String, p: &PreemptionReport) {
    let when = match p.earlier_cycle {
        true => " (in the cycle that nominated the pod)",
        false => "",
    };
    let _ = writeln!(
        out,
        "  preemption{when}: {} node(s) might help, {} candidate(s){}",
        p.might_help,
        p.candidates.len(),
        match &p.chosen {
            Some(n) => format!("; chose {n}"),
            None => String::new(),
        }
    );
    if let Some(m) = &p.message {
        let _ = writeln!(out, "    {m}");
    }
    if p.candidates.is_empty() {
        return;
    }
    let mut b = Builder::default();
    b.push_record(["Node", "Victims (priority)", "PDB violations", "Outcome"]);
    for c in &p.candidates {
        let mut victims: Vec<String> = (c.victims.iter().take(VICTIMS_SHOWN))
            .map(|v| format!("{} ({})", v.pod, v.priority))
            .collect();
        if c.victims.len() > VICTIMS_SHOWN {
            victims.push(format!("+{} more", c.victims.len() - VICTIMS_SHOWN));
        }
        let outcome = match c.lost_on {
            Some(why) => format!("lost on {why}"),
            None => "chosen".to_string(),
        };
        b.push_record([
            c.node.clone(),
            victims.join(", "),
            c.pdb_violations.to_string(),
            outcome,
        ]);
    }
    let _ = writeln!(out, "{}", b.build().with(Style::rounded()));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text lists the first victims of a candidate and counts the rest.
    #[test]
    fn long_victim_lists_are_cut_in_the_text() {
        let victims = (0..6)
            .map(|i| VictimReport {
                pod: format!("batch/v{i}"),
                priority: -i,
            })
            .collect();
        let report = PreemptionReport {
            might_help: 1,
            earlier_cycle: false,
            candidates: vec![CandidateReport {
                node: "n0".into(),
                victims,
                pdb_violations: 0,
                lost_on: None,
            }],
            chosen: Some("n0".into()),
            message: None,
        };
        let mut out = String::new();
        render(&mut out, &report);
        assert!(out.contains("batch/v3 (-3), +2 more"), "{out}");
        assert!(!out.contains("batch/v4"), "{out}");
    }
}
