//! The explanations as JSON and text: per pod, the infeasible nodes by reason, the scored
//! nodes ranked with each plugin's part, the tie, and the nodes asked about beside the chosen.

use std::fmt::Write;

use serde::Serialize;
use tabled::builder::Builder;
use tabled::settings::Style;

use super::Ask;
use crate::load::Scenario;
use crate::sched::explain::{
    Explanation, FEASIBLE, NOT_EVALUATED, PluginScore, PreFilterState, ScoredNode, Verdict,
};
use crate::sched::{Outcome, PodPhase};

/// Domains listed per count without `--all-nodes`, however small `--top` is.
const MIN_DOMAINS_SHOWN: usize = 10;

/// The JSON's shape version.
pub const SCHEMA_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExplainReport {
    pub schema_version: u32,
    pub scenarios: Vec<ScenarioExplanation>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioExplanation {
    pub name: String,
    pub file: String,
    pub pods: Vec<PodExplanation>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PodExplanation {
    /// `namespace/name`.
    pub pod: String,
    pub status: PodPhase,
    pub node: Option<String>,
    /// kube-scheduler's message for a pod that is not scheduled.
    #[serde(default)]
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    /// Its gang, for a gang member: how many members could be placed against `minMember`.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gang: Option<crate::sched::cycle::GangNote>,
    /// The gang's members (this pod included), each with its outcome: which of them found no
    /// node, and why.
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gang_members: Vec<GangMember>,
    /// Its Kueue workload, when one is queued: the flavor per resource and why others were
    /// not taken.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kueue: Option<super::kueue::KueueExplanation>,
    /// Its last cycle, when it had one (a pod never created, or one waiting at its gates
    /// before any cycle, has none).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cycle: Option<Cycle>,
}

/// A member of the explained pod's gang.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GangMember {
    /// `namespace/name`.
    pub pod: String,
    pub status: PodPhase,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node: Option<String>,
    #[serde(default)]
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
}

/// One pod's last scheduling cycle.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Cycle {
    pub profile: String,
    pub nodes: usize,
    pub evaluated_nodes: usize,
    pub feasible_nodes: usize,
    /// Nodes that passed the filters that ran but that the Filter pass did not reach
    /// (`percentageOfNodesToScore`).
    pub not_evaluated: usize,
    /// Score plugins that ran, with their weights.
    pub weights: Vec<Weight>,
    /// The infeasible nodes per first failing Filter plugin and reason, most first.
    pub infeasible: Vec<ReasonCount>,
    /// The scored nodes, best total first (then by name), `top` of them unless every node was
    /// asked for.
    pub ranked: Vec<RankedNode>,
    /// Scored nodes not in `ranked`.
    pub more_scored: usize,
    /// The node the cycle chose (the pod may still have been left unscheduled after it, by
    /// a gang's Permit).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub chosen: Option<String>,
    /// The nodes sharing the best total, when more than one: the seeded pick chose one.
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tie: Vec<String>,
    /// The nodes asked about, beside the chosen one.
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub compared: Vec<Comparison>,
    /// Every node's verdict (`--all-nodes`).
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub all_nodes: Vec<NodeLine>,
    /// What PreFilter and PreScore computed for the pod, once: NodeAffinity's nodes and
    /// terms, PodTopologySpread's and InterPodAffinity's counts per domain.
    #[serde(default)]
    #[serde(skip_serializing_if = "PreFilterState::is_empty")]
    pub pre_filter: PreFilterState,
    /// DynamicResources on the chosen node: per claim and request, the devices picked and
    /// why each other device there was not.
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<crate::dra::allocator::ClaimDevices>,
    /// DefaultPreemption's dry run, when the cycle found no feasible node.
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preemption: Option<super::preemption::PreemptionReport>,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Weight {
    pub plugin: &'static str,
    pub weight: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReasonCount {
    pub plugin: String,
    pub reason: String,
    pub nodes: usize,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct RankedNode {
    /// 1 + the nodes with a higher total.
    pub rank: usize,
    pub node: String,
    pub total: i64,
    pub scores: Vec<Score>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Score {
    pub plugin: &'static str,
    pub raw: i64,
    pub normalized: i64,
    pub weight: i64,
    pub weighted: i64,
}

/// A node asked about, beside the chosen one.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Comparison {
    pub node: String,
    pub verdict: Verdict,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<usize>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<i64>,
    /// Its total equals the chosen node's: the seeded pick decided between them.
    #[serde(default)]
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub tied: bool,
    /// Per plugin where it differs from the chosen node: its weighted part there and on the
    /// chosen node.
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<Difference>,
    /// DynamicResources there: per claim and request, why each device would not serve it
    /// (nothing is picked when the claims cannot all be allocated there).
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<crate::dra::allocator::ClaimDevices>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Difference {
    pub plugin: &'static str,
    pub here: i64,
    pub chosen: i64,
}

#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeLine {
    pub node: String,
    pub verdict: Verdict,
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<i64>,
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub scores: Vec<Score>,
}

fn score(s: &PluginScore) -> Score {
    Score {
        plugin: s.plugin,
        raw: s.raw,
        normalized: s.normalized,
        weight: s.weight,
        weighted: s.weighted(),
    }
}

impl ScenarioExplanation {
    /// The `wanted` pods (`namespace/name`) of the run `outcome`, in arrival order; those
    /// that never had a Filter pass have no cycle.
    pub fn new(
        scenario: &Scenario,
        outcome: &Outcome,
        wanted: &std::collections::HashSet<String>,
        ask: &Ask,
    ) -> Self {
        let end = &outcome.cluster.nodes;
        let gangs = gangs(scenario, outcome);
        let pods = (scenario.workloads.iter().enumerate())
            .filter(|(_, pod)| wanted.contains(&pod.key()))
            .map(|(i, pod)| {
                let o = &outcome.pods[i];
                PodExplanation {
                    pod: pod.key(),
                    status: o.phase,
                    node: o.node.map(|n| end[n].name.clone()),
                    message: o.message.clone(),
                    gang: o.gang.clone(),
                    gang_members: (o.gang.as_ref().zip(pod.pod_group.as_ref()))
                        .and_then(|(_, g)| gangs.get(&(pod.namespace.as_str(), g)))
                        .cloned()
                        .unwrap_or_default(),
                    kueue: (scenario.kueue.as_ref()).and_then(|k| super::kueue::explain(k, pod)),
                    cycle: outcome.explained.get(&i).map(|e| Cycle::new(e, ask)),
                }
            })
            .collect();
        ScenarioExplanation {
            name: scenario.name.clone(),
            file: scenario.file.display().to_string(),
            pods,
        }
    }
}

/// Each gang's workload pods with their outcomes, in arrival order, by namespace and
/// PodGroup: made in one pass, not once per member explained.
fn gangs<'s>(
    scenario: &'s Scenario,
    outcome: &Outcome,
) -> std::collections::HashMap<(&'s str, &'s crate::model::pod::PodGroupRef), Vec<GangMember>> {
    let end = &outcome.cluster.nodes;
    let mut gangs = std::collections::HashMap::new();
    for (p, o) in scenario.workloads.iter().zip(&outcome.pods) {
        let Some(group) = &p.pod_group else { continue };
        let members: &mut Vec<GangMember> = gangs.entry((p.namespace.as_str(), group)).or_default();
        members.push(GangMember {
            pod: p.key(),
            status: o.phase,
            node: o.node.map(|n| end[n].name.clone()),
            message: o.message.clone(),
        });
    }
    gangs
}

impl Cycle {
    fn new(e: &Explanation, ask: &Ask) -> Self {
        let names = &e.node_names;
        let name = |n: usize| names[n].clone();
        let mut per_failure = vec![0usize; e.failures.len()];
        let mut not_evaluated = 0;
        for &v in &e.verdicts {
            match v {
                FEASIBLE => {}
                NOT_EVALUATED => not_evaluated += 1,
                i => per_failure[i as usize] += 1,
            }
        }
        let mut infeasible: Vec<ReasonCount> = (e.failures.iter().zip(per_failure))
            .filter(|(_, nodes)| *nodes > 0)
            .map(|((plugin, reason), nodes)| ReasonCount {
                plugin: plugin.clone(),
                reason: reason.clone(),
                nodes,
            })
            .collect();
        infeasible.sort_by_key(|r| std::cmp::Reverse(r.nodes));
        let mut scored: Vec<&ScoredNode> = e.scored.iter().collect();
        scored.sort_by(|a, b| {
            (b.total.cmp(&a.total)).then_with(|| names[a.node].cmp(&names[b.node]))
        });
        let rank_of = |total: i64| 1 + scored.iter().filter(|s| s.total > total).count();
        let shown = match ask.all_nodes {
            true => scored.len(),
            false => ask.top.min(scored.len()),
        };
        let ranked = (scored.iter().take(shown))
            .map(|s| RankedNode {
                rank: rank_of(s.total),
                node: name(s.node),
                total: s.total,
                scores: s.scores.iter().map(score).collect(),
            })
            .collect();
        let scored_at = |n: usize| e.scored.iter().find(|s| s.node == n);
        let chosen = e.chosen.and_then(scored_at);
        let compared = (ask.nodes.iter())
            .filter_map(|asked| names.iter().position(|n| n == asked))
            .map(|n| {
                let mut c = compare(e.verdict(n), scored_at(n), chosen, name(n), &rank_of);
                c.devices = (e.devices_elsewhere.iter())
                    .find(|(at, _)| *at == n)
                    .map(|(_, d)| d.clone())
                    .unwrap_or_default();
                c
            })
            .collect();
        let all_nodes = match ask.all_nodes {
            true => (0..e.verdicts.len())
                .map(|n| {
                    let s = scored_at(n);
                    NodeLine {
                        node: name(n),
                        verdict: e.verdict(n),
                        total: s.map(|s| s.total),
                        scores: s.iter().flat_map(|s| s.scores.iter().map(score)).collect(),
                    }
                })
                .collect(),
            false => Vec::new(),
        };
        Cycle {
            profile: e.profile.clone(),
            nodes: e.verdicts.len(),
            evaluated_nodes: e.evaluated_nodes,
            feasible_nodes: e.feasible_nodes,
            not_evaluated,
            weights: (e.weights.iter())
                .map(|&(plugin, weight)| Weight { plugin, weight })
                .collect(),
            infeasible,
            ranked,
            more_scored: scored.len() - shown,
            chosen: e.chosen.map(name),
            tie: match e.ties.len() {
                0 | 1 => Vec::new(),
                _ => e.ties.iter().map(|&n| name(n)).collect(),
            },
            compared,
            all_nodes,
            pre_filter: super::pre_filter::shown(
                &e.pre_filter,
                (!ask.all_nodes).then_some(ask.top.max(MIN_DOMAINS_SHOWN)),
            ),
            devices: e.devices.clone(),
            preemption: (e.preemption.as_ref()).map(super::preemption::PreemptionReport::new),
        }
    }
}

/// A node beside the chosen one: where their weighted parts differ.
fn compare(
    verdict: Verdict,
    here: Option<&ScoredNode>,
    chosen: Option<&ScoredNode>,
    node: String,
    rank_of: &dyn Fn(i64) -> usize,
) -> Comparison {
    let differences = match (here, chosen) {
        (Some(h), Some(c)) => (h.scores.iter())
            .filter_map(|s| {
                let theirs = c.scores.iter().find(|o| o.plugin == s.plugin)?;
                (s.weighted() != theirs.weighted()).then(|| Difference {
                    plugin: s.plugin,
                    here: s.weighted(),
                    chosen: theirs.weighted(),
                })
            })
            .collect(),
        _ => Vec::new(),
    };
    Comparison {
        node,
        verdict,
        rank: here.map(|h| rank_of(h.total)),
        total: here.map(|h| h.total),
        tied: here.is_some_and(|h| chosen.is_some_and(|c| c.total == h.total)),
        differences,
        devices: Vec::new(),
    }
}

/// The JSON Schema of `explain.json` (`schedsim schema explain`).
pub fn schema_json() -> String {
    let schema = schemars::schema_for!(ExplainReport);
    let mut text = serde_json::to_string_pretty(&schema).expect("schema serializes");
    text.push('\n');
    text
}

/// The explanations as text.
pub fn render(report: &ExplainReport) -> String {
    render_some(report, None)
}

/// Pods a terminal is shown by default (`--full-table` shows them all).
pub const TERMINAL_PODS: usize = 10;

/// The text for a terminal: the first [`TERMINAL_PODS`] pods, then how many more there are
/// and the file `full` that has them all.
pub fn render_summary(report: &ExplainReport, full: &str) -> String {
    render_some(report, Some((TERMINAL_PODS, full)))
}

/// The text of every pod, or of the first `limit.0` and a line naming `limit.1`.
fn render_some(report: &ExplainReport, limit: Option<(usize, &str)>) -> String {
    let mut out = String::new();
    let total: usize = report.scenarios.iter().map(|s| s.pods.len()).sum();
    let mut shown = 0;
    for s in &report.scenarios {
        if limit.is_some_and(|(max, _)| shown >= max) {
            break;
        }
        let _ = writeln!(out, "Scenario {} ({})", s.name, s.file);
        if s.pods.is_empty() {
            let _ = writeln!(out, "  no pod to explain");
        }
        for p in &s.pods {
            if limit.is_some_and(|(max, _)| shown >= max) {
                break;
            }
            render_pod(&mut out, p);
            shown += 1;
        }
        out.push('\n');
    }
    if let Some((_, full)) = limit.filter(|_| shown < total) {
        let _ = writeln!(
            out,
            "… {} more pod(s) (of {total}): every pod is in {full}",
            total - shown
        );
    }
    out
}

fn render_pod(out: &mut String, p: &PodExplanation) {
    let placed = match &p.node {
        Some(n) if p.status == PodPhase::Scheduled => format!("scheduled on {n}"),
        _ => format!("{:?}: {}", p.status, p.message),
    };
    let _ = writeln!(out, "\nPod {}: {placed}", p.pod);
    if let Some(g) = &p.gang {
        let _ = writeln!(out, "  {}", g.summary());
        for m in &p.gang_members {
            let _ = writeln!(out, "    {}: {}", m.pod, m.outcome());
        }
    }
    if let Some(k) = &p.kueue {
        super::kueue::render(out, k);
    }
    let Some(c) = &p.cycle else { return };
    let _ = writeln!(
        out,
        "  profile {}; {} nodes: {} evaluated, {} feasible{}",
        c.profile,
        c.nodes,
        c.evaluated_nodes,
        c.feasible_nodes,
        match c.not_evaluated {
            0 => String::new(),
            n => format!(", {n} passed but not reached (percentageOfNodesToScore)"),
        }
    );
    super::pre_filter::render(out, &c.pre_filter);
    for r in &c.infeasible {
        let _ = writeln!(
            out,
            "  {} node(s) failed {}: {}",
            r.nodes, r.plugin, r.reason
        );
    }
    if !c.ranked.is_empty() {
        let mut b = Builder::default();
        let mut head = vec!["Rank".to_string(), "Node".into(), "Total".into()];
        head.extend(
            c.weights
                .iter()
                .map(|w| format!("{} ×{}", w.plugin, w.weight)),
        );
        b.push_record(head);
        for r in &c.ranked {
            let mut row = vec![r.rank.to_string(), r.node.clone(), r.total.to_string()];
            for w in &c.weights {
                row.push(match r.scores.iter().find(|s| s.plugin == w.plugin) {
                    Some(s) if s.raw != s.normalized => format!("{} (raw {})", s.normalized, s.raw),
                    Some(s) => s.normalized.to_string(),
                    None => "-".into(),
                });
            }
            b.push_record(row);
        }
        let _ = writeln!(out, "{}", b.build().with(Style::rounded()));
        if c.more_scored > 0 {
            let _ = writeln!(
                out,
                "  … {} more scored node(s) (--top, --all-nodes)",
                c.more_scored
            );
        }
    }
    if !c.tie.is_empty() {
        let _ = writeln!(
            out,
            "  tie: {} nodes share the best total ({}); the seeded pick chose {}",
            c.tie.len(),
            c.tie.join(", "),
            c.chosen.as_deref().unwrap_or("-")
        );
    }
    super::devices::render(out, &c.devices, "  ", false);
    for cmp in &c.compared {
        let _ = writeln!(out, "  why not {}: {}", cmp.node, cmp.why());
        super::devices::render(out, &cmp.devices, "    ", true);
    }
    if let Some(pre) = &c.preemption {
        super::preemption::render(out, pre);
    }
}

impl GangMember {
    /// Where it went, or its status and message.
    pub fn outcome(&self) -> String {
        match (&self.node, self.status) {
            (Some(n), PodPhase::Scheduled) => format!("scheduled on {n}"),
            _ => format!("{:?}: {}", self.status, self.message),
        }
    }
}

impl Comparison {
    /// Why this node is not the chosen one, in a line.
    pub fn why(&self) -> String {
        match (&self.verdict, self.total) {
            (Verdict::Failed { plugin, reason }, _) => format!("failed {plugin}: {reason}"),
            (Verdict::NotEvaluated, _) => {
                "passed, but the Filter pass stopped before it (percentageOfNodesToScore)".into()
            }
            (Verdict::Feasible, None) => "feasible, not scored (the only feasible node)".into(),
            (Verdict::Feasible, Some(t)) => {
                let parts: Vec<String> = (self.differences.iter())
                    .map(|d| format!("{} {} vs {}", d.plugin, d.here, d.chosen))
                    .collect();
                format!(
                    "total {t}, rank {}{}{}",
                    self.rank.unwrap_or(0),
                    match self.tied {
                        true => "; tied with the chosen node, and the seeded pick decided",
                        false => "",
                    },
                    match parts.is_empty() {
                        true => String::new(),
                        false => format!("; weighted parts here vs chosen: {}", parts.join(", ")),
                    }
                )
            }
        }
    }
}
