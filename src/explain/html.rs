//! `schedsim explain --html`: one self-contained page per scenario (`explain-<scenario>.html`:
//! inline style and a few lines of inline script that sort a table by the column clicked, no
//! external asset, no server) and `explain.html`, which links them.

use std::fmt::Write;
use std::path::Path;

use super::report::{Cycle, ExplainReport, PodExplanation, ScenarioExplanation};
use crate::report::chart::{escape, explain_page};

/// Sorts a table by the clicked header's column: numbers as numbers, the rest as text; a
/// second click reverses.
const SORT_SCRIPT: &str = "document.querySelectorAll('table.sortable th').forEach(function(th){th.addEventListener('click',function(){var i=th.cellIndex,t=th.closest('table'),b=t.tBodies[0],r=Array.from(b.rows),d=th.dataset.dir==='asc'?-1:1;th.dataset.dir=d===1?'asc':'desc';r.sort(function(x,y){var a=x.cells[i].textContent,c=y.cells[i].textContent,n=parseFloat(a),m=parseFloat(c);return (isNaN(n)||isNaN(m)?a.localeCompare(c):n-m)*d;});r.forEach(function(e){b.appendChild(e);});});});";

const STYLE: &str = "body{font-family:sans-serif;margin:2em;max-width:1400px}table{border-collapse:collapse;margin:.5em 0 1.5em}th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}th{background:#f0f3f6;cursor:pointer}td.n{text-align:right}tr.chosen{background:#e6f4ea}.muted{color:#666}";

/// Writes the pages into `out`.
pub fn write_pages(report: &ExplainReport, out: &Path) -> Result<(), String> {
    let mut index = page_start("schedsim explain");
    index.push_str("<ul>\n");
    for s in &report.scenarios {
        let file = write_scenario_page(s, out)?;
        let _ = writeln!(
            index,
            "<li><a href=\"{file}\">{}</a> ({} pod{})</li>",
            escape(&s.name),
            s.pods.len(),
            if s.pods.len() == 1 { "" } else { "s" }
        );
    }
    index.push_str("</ul>\n");
    index.push_str(&page_end());
    crate::report::write_atomic(&out.join("explain.html"), index.as_bytes())
        .map_err(|e| e.to_string())
}

/// Writes one scenario's page into `out`; returns its file name.
pub fn write_scenario_page(s: &ScenarioExplanation, out: &Path) -> Result<String, String> {
    let file = explain_page(&s.name);
    let path = out.join(&file);
    crate::report::write_atomic(&path, scenario_page(s).as_bytes())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(file)
}

fn page_start(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title>\n<style>{STYLE}</style></head><body>\n<h1>{t}</h1>\n",
        t = escape(title)
    )
}

fn page_end() -> String {
    format!("<script>{SORT_SCRIPT}</script>\n</body></html>\n")
}

/// One scenario's page: per pod, its outcome, the infeasible nodes by reason, the ranked
/// nodes (sortable), the tie and the nodes asked about.
fn scenario_page(s: &ScenarioExplanation) -> String {
    let mut html = page_start(&format!("schedsim explain: {}", s.name));
    let _ = writeln!(html, "<p class=\"muted\">{}</p>", escape(&s.file));
    if s.pods.is_empty() {
        html.push_str("<p>No pod to explain.</p>\n");
    }
    for p in &s.pods {
        pod_section(&mut html, p);
    }
    html.push_str(&page_end());
    html
}

fn pod_section(html: &mut String, p: &PodExplanation) {
    let outcome = match &p.node {
        Some(n) if p.message.is_empty() => format!("scheduled on {n}"),
        _ => format!("{:?}: {}", p.status, p.message),
    };
    let _ = writeln!(
        html,
        "<h2>{}</h2>\n<p>{}</p>",
        escape(&p.pod),
        escape(&outcome)
    );
    // The gang, Kueue and PreFilter parts read as the text report words them.
    let mut notes = String::new();
    if let Some(g) = &p.gang {
        let _ = writeln!(notes, "{}", g.summary());
        for m in &p.gang_members {
            let _ = writeln!(notes, "  {}: {}", m.pod, m.outcome());
        }
    }
    if let Some(k) = &p.kueue {
        super::kueue::render(&mut notes, k);
    }
    if let Some(c) = &p.cycle {
        super::pre_filter::render(&mut notes, &c.pre_filter);
        super::devices::render(&mut notes, &c.devices, "", false);
    }
    if !notes.is_empty() {
        let _ = writeln!(html, "<pre>{}</pre>", escape(notes.trim_end()));
    }
    let Some(c) = &p.cycle else {
        html.push_str("<p class=\"muted\">No Filter pass to explain.</p>\n");
        return;
    };
    let _ = writeln!(
        html,
        "<p>Profile {}; {} nodes: {} evaluated, {} feasible, {} passed but not reached (percentageOfNodesToScore).</p>",
        escape(&c.profile),
        c.nodes,
        c.evaluated_nodes,
        c.feasible_nodes,
        c.not_evaluated
    );
    if !c.infeasible.is_empty() {
        html.push_str("<table class=\"sortable\"><thead><tr><th>Nodes</th><th>Filter plugin</th><th>Reason</th></tr></thead><tbody>\n");
        for r in &c.infeasible {
            let _ = writeln!(
                html,
                "<tr><td class=\"n\">{}</td><td>{}</td><td>{}</td></tr>",
                r.nodes,
                escape(&r.plugin),
                escape(&r.reason)
            );
        }
        html.push_str("</tbody></table>\n");
    }
    ranked_table(html, c);
    if !c.tie.is_empty() {
        let _ = writeln!(
            html,
            "<p>Tie: {} nodes share the best total ({}); the seeded pick chose {}.</p>",
            c.tie.len(),
            escape(&c.tie.join(", ")),
            escape(c.chosen.as_deref().unwrap_or("-"))
        );
    }
    for cmp in &c.compared {
        let _ = writeln!(
            html,
            "<p>Why not {}: {}</p>",
            escape(&cmp.node),
            escape(&cmp.why())
        );
        let mut devices = String::new();
        super::devices::render(&mut devices, &cmp.devices, "", true);
        if !devices.is_empty() {
            let _ = writeln!(html, "<pre>{}</pre>", escape(devices.trim_end()));
        }
    }
    if let Some(pre) = &c.preemption {
        preemption_table(html, pre);
    }
}

/// DefaultPreemption's candidates, their victims and what each lost on.
fn preemption_table(html: &mut String, p: &super::preemption::PreemptionReport) {
    let _ = writeln!(
        html,
        "<p>Preemption{}: {} node(s) might help, {} candidate(s){}.{}</p>",
        if p.earlier_cycle {
            " (in the cycle that nominated the pod)"
        } else {
            ""
        },
        p.might_help,
        p.candidates.len(),
        p.chosen
            .as_deref()
            .map(|n| format!("; chose {}", escape(n)))
            .unwrap_or_default(),
        p.message
            .as_deref()
            .map(|m| format!(" {}", escape(m)))
            .unwrap_or_default(),
    );
    if p.candidates.is_empty() {
        return;
    }
    html.push_str("<table class=\"sortable\"><thead><tr><th>Node</th><th>Victims (priority)</th><th>PDB violations</th><th>Outcome</th></tr></thead><tbody>\n");
    for c in &p.candidates {
        let victims: Vec<String> = (c.victims.iter())
            .map(|v| format!("{} ({})", v.pod, v.priority))
            .collect();
        let _ = writeln!(
            html,
            "<tr{}><td>{}</td><td>{}</td><td class=\"n\">{}</td><td>{}</td></tr>",
            if c.lost_on.is_none() {
                " class=\"chosen\""
            } else {
                ""
            },
            escape(&c.node),
            escape(&victims.join(", ")),
            c.pdb_violations,
            escape(
                &c.lost_on
                    .map_or("chosen".into(), |w| format!("lost on {w}"))
            ),
        );
    }
    html.push_str("</tbody></table>\n");
}

/// The ranked nodes with each plugin's normalized score (raw in the cell's title), sortable.
fn ranked_table(html: &mut String, c: &Cycle) {
    if c.ranked.is_empty() {
        return;
    }
    html.push_str("<table class=\"sortable\"><thead><tr><th>Rank</th><th>Node</th><th>Total</th>");
    for w in &c.weights {
        let _ = write!(html, "<th>{} ×{}</th>", escape(w.plugin), w.weight);
    }
    html.push_str("</tr></thead><tbody>\n");
    for r in &c.ranked {
        let chosen = c.chosen.as_deref() == Some(r.node.as_str());
        let _ = write!(
            html,
            "<tr{}><td class=\"n\">{}</td><td>{}</td><td class=\"n\">{}</td>",
            if chosen { " class=\"chosen\"" } else { "" },
            r.rank,
            escape(&r.node),
            r.total
        );
        for w in &c.weights {
            match r.scores.iter().find(|s| s.plugin == w.plugin) {
                Some(s) => {
                    let _ = write!(
                        html,
                        "<td class=\"n\" title=\"raw {}\">{}</td>",
                        s.raw, s.normalized
                    );
                }
                None => html.push_str("<td>-</td>"),
            }
        }
        html.push_str("</tr>\n");
    }
    html.push_str("</tbody></table>\n");
    if c.more_scored > 0 {
        let _ = writeln!(
            html,
            "<p class=\"muted\">{} more scored node(s) (--top, --all-nodes).</p>",
            c.more_scored
        );
    }
}
