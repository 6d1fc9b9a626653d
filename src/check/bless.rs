//! `schedsim check --bless`: rewrite each scenario's `spec.expect` from its actual outcome,
//! leaving the rest of the file — comments, order, formatting, other documents — as it was,
//! and replacing the file atomically.
//!
//! The new expectations pin every workload pod's status: a placed pod's pool (or node, when
//! its node has no pool label), a pending pod's message; and the number of pending pods.

use std::path::Path;

use crate::load::Scenario;
use crate::report::ScenarioReport;
use crate::sched::PodPhase;

/// The `expect:` block for a scenario's outcome, indented by `indent` spaces.
pub fn expectations(report: &ScenarioReport, indent: usize) -> String {
    let pad = " ".repeat(indent);
    let mut out = format!("{pad}expect:\n");
    for p in &report.pods {
        let pod = format!("{}/{}", p.namespace, p.name);
        let placement = match (&p.node, p.status) {
            (Some(node), PodPhase::Scheduled | PodPhase::Succeeded) => {
                match report.nodes.iter().find(|n| &n.name == node) {
                    Some(n) if n.pool != "(none)" => format!(", pool: {}", yaml_str(&n.pool)),
                    _ => format!(", node: {}", yaml_str(node)),
                }
            }
            _ if !p.message.is_empty() => {
                format!(", message: {{contains: {}}}", yaml_str(&p.message))
            }
            _ => String::new(),
        };
        out.push_str(&format!(
            "{pad}  - {{pod: {}, status: {:?}{placement}}}\n",
            yaml_str(&pod),
            p.status
        ));
    }
    let pending = report
        .pods
        .iter()
        .filter(|p| !matches!(p.status, PodPhase::Scheduled | PodPhase::Succeeded))
        .count();
    out.push_str(&format!("{pad}  - {{pendingPodsAtMost: {pending}}}\n"));
    out
}

/// A YAML double-quoted scalar (JSON string syntax is valid YAML).
fn yaml_str(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialize")
}

/// The file's text with the `expect:` block of each Scenario document replaced by `blocks`
/// (one per Scenario document, in order).
pub fn rewrite(text: &str, blocks: &[String]) -> Result<String, String> {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    // Documents: runs of lines between `---` separators.
    let mut docs: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    for (i, l) in lines.iter().enumerate() {
        if l.trim_end() == "---" {
            docs.push((start, i));
            start = i + 1;
        }
    }
    docs.push((start, lines.len()));
    let mut out = String::new();
    let mut next_block = 0;
    let mut copied = 0;
    for (a, b) in docs {
        let doc = &lines[a..b];
        let is_scenario = doc.iter().any(|l| l.trim_end() == "kind: Scenario");
        if !is_scenario {
            continue;
        }
        let Some(block) = blocks.get(next_block) else {
            return Err("more Scenario documents than outcomes".into());
        };
        next_block += 1;
        let Some(spec) = doc.iter().position(|l| l.trim_end() == "spec:") else {
            return Err("a Scenario without a block-style `spec:`".into());
        };
        // spec's children: the indentation of its first non-blank, non-comment line.
        let indent = doc[spec + 1..]
            .iter()
            .find(|l| !l.trim().is_empty() && !l.trim_start().starts_with('#'))
            .map_or(2, |l| l.len() - l.trim_start().len());
        let block = reindent(block, indent);
        let end_of_spec = spec
            + 1
            + doc[spec + 1..]
                .iter()
                .position(|l| {
                    !l.trim().is_empty()
                        && !l.trim_start().starts_with('#')
                        && l.len() - l.trim_start().len() < indent
                })
                .unwrap_or(doc.len() - spec - 1);
        let expect = (spec + 1..end_of_spec).find(|&i| {
            let l = doc[i];
            l.len() - l.trim_start().len() == indent && l.trim_start().starts_with("expect:")
        });
        let (from, to) = match expect {
            Some(e) => {
                let to = e
                    + 1
                    + doc[e + 1..end_of_spec]
                        .iter()
                        .position(|l| {
                            !l.trim().is_empty()
                                && !l.trim_start().starts_with('#')
                                && l.len() - l.trim_start().len() <= indent
                                && !l.trim_start().starts_with('-')
                        })
                        .unwrap_or(end_of_spec - e - 1);
                (a + e, a + to)
            }
            // No block yet: add one where spec ends (before trailing blank lines).
            None => {
                let mut at = end_of_spec;
                while at > spec + 1 && doc[at - 1].trim().is_empty() {
                    at -= 1;
                }
                (a + at, a + at)
            }
        };
        for l in &lines[copied..from] {
            out.push_str(l);
        }
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&block);
        copied = to;
    }
    for l in &lines[copied..] {
        out.push_str(l);
    }
    if next_block != blocks.len() {
        return Err("fewer Scenario documents than outcomes".into());
    }
    Ok(out)
}

fn reindent(block: &str, indent: usize) -> String {
    let current = block.len() - block.trim_start().len();
    block
        .lines()
        .map(|l| format!("{}{}\n", " ".repeat(indent), &l[current.min(l.len())..]))
        .collect()
}

/// Rewrites one scenario file from the outcomes of its Scenario documents, in order.
pub fn bless_file(file: &Path, outcomes: &[(&Scenario, &ScenarioReport)]) -> Result<(), String> {
    let text = std::fs::read_to_string(file).map_err(|e| format!("{}: {e}", file.display()))?;
    let blocks: Vec<String> = outcomes.iter().map(|(_, r)| expectations(r, 2)).collect();
    let new = rewrite(&text, &blocks).map_err(|e| format!("{}: {e}", file.display()))?;
    crate::report::write_atomic(file, new.as_bytes())
        .map_err(|e| format!("{}: {e}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rewrite_replaces_only_the_expect_block() {
        let text = "# head comment\napiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: a}\nspec:\n  nodes: []  # keep me\n  expect:\n    - {pod: old}\n    # old comment\n    - {pendingPodsAtMost: 9}\n  scheduler: {seed: 7}\n---\napiVersion: v1\nkind: Node\n---\napiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: b}\nspec:\n    workloads: []\n\n";
        let out = rewrite(
            text,
            &[
                "  expect:\n    - {pendingPodsAtMost: 0}\n".into(),
                "  expect:\n    - {pendingPodsAtMost: 1}\n".into(),
            ],
        )
        .unwrap();
        assert_eq!(
            out,
            "# head comment\napiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: a}\nspec:\n  nodes: []  # keep me\n  expect:\n    - {pendingPodsAtMost: 0}\n  scheduler: {seed: 7}\n---\napiVersion: v1\nkind: Node\n---\napiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: b}\nspec:\n    workloads: []\n    expect:\n      - {pendingPodsAtMost: 1}\n\n"
        );
    }
}
