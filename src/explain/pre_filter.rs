//! The PreFilter/PreScore results of a cycle in the report, shown once per pod: lists of
//! domains cut to the first few (`--top`) unless every node was asked for, with how many
//! were left out.

use std::fmt::Write;

use crate::sched::explain::{DomainCount, PreFilterState, SpreadCounts};

/// The state as the report shows it: each list of domains cut to `keep` entries.
pub fn shown(state: &PreFilterState, keep: Option<usize>) -> PreFilterState {
    let mut s = state.clone();
    let Some(keep) = keep else { return s };
    for c in s.topology_spread_filter.iter_mut() {
        c.omitted += cut(&mut c.pods, keep);
    }
    for c in s.topology_spread_score.iter_mut() {
        c.omitted += cut(&mut c.pods, keep);
    }
    if let Some(a) = s.inter_pod_affinity.as_mut() {
        a.omitted += cut(&mut a.existing_anti_affinity, keep) + cut(&mut a.affinity, keep);
        a.omitted += cut(&mut a.anti_affinity, keep);
    }
    s.inter_pod_affinity_score_omitted += cut(&mut s.inter_pod_affinity_score, keep);
    s
}

/// Keeps the first `keep` entries of `list`; returns how many went.
fn cut<T>(list: &mut Vec<T>, keep: usize) -> usize {
    let dropped = list.len().saturating_sub(keep);
    list.truncate(keep);
    dropped
}

/// The state's lines in the text report.
pub fn render(out: &mut String, s: &PreFilterState) {
    if let Some(a) = &s.node_affinity {
        let mut parts: Vec<String> = Vec::new();
        if let Some(names) = &a.node_names {
            parts.push(format!("PreFilter narrows to nodes [{}]", names.join(", ")));
        }
        if !a.node_selector.is_empty() {
            let pairs: Vec<String> = (a.node_selector.iter())
                .map(|(k, v)| format!("{k}={v}"))
                .collect();
            parts.push(format!("nodeSelector {}", pairs.join(",")));
        }
        if !a.profile_terms.is_empty() {
            parts.push(format!(
                "profile addedAffinity {}",
                a.profile_terms.join(" | ")
            ));
        }
        if !a.required_terms.is_empty() {
            parts.push(format!("required {}", a.required_terms.join(" | ")));
        }
        if !parts.is_empty() {
            let _ = writeln!(out, "  NodeAffinity: {}", parts.join("; "));
        }
    }
    for (c, when) in (s.topology_spread_filter.iter().map(|c| (c, "Filter")))
        .chain(s.topology_spread_score.iter().map(|c| (c, "Score")))
    {
        spread_line(out, c, when);
    }
    if let Some(a) = &s.inter_pod_affinity {
        let list = |l: &[DomainCount]| -> String {
            match l.is_empty() {
                true => "none".into(),
                false => pods(l),
            }
        };
        let _ = writeln!(
            out,
            "  InterPodAffinity (PreFilter): existing pods' anti-affinity {}; affinity {}; anti-affinity {}{}{}",
            list(&a.existing_anti_affinity),
            list(&a.affinity),
            list(&a.anti_affinity),
            match a.first_of_group {
                true => "; first of its group (it matches its own affinity)",
                false => "",
            },
            more(a.omitted),
        );
    }
    affinity_score_line(out, s);
}

/// InterPodAffinity's PreScore weights per topology pair.
fn affinity_score_line(out: &mut String, s: &PreFilterState) {
    if s.inter_pod_affinity_score.is_empty() {
        return;
    }
    let pairs: Vec<String> = (s.inter_pod_affinity_score.iter())
        .map(|d| format!("{}: {}", d.domain, d.score))
        .collect();
    let _ = writeln!(
        out,
        "  InterPodAffinity (PreScore) weight per topology pair: {}{}",
        pairs.join(", "),
        more(s.inter_pod_affinity_score_omitted)
    );
}

fn spread_line(out: &mut String, c: &SpreadCounts, when: &str) {
    let min = match c.global_min {
        Some(m) => format!(", global min {m}"),
        None => String::new(),
    };
    let _ = writeln!(
        out,
        "  PodTopologySpread ({when}) {} maxSkew {}: {} domain(s){min}{}; pods {}{}",
        c.topology_key,
        c.max_skew,
        c.domains,
        match c.self_match {
            true => ", the pod counts itself",
            false => "",
        },
        match c.pods.is_empty() {
            true => "none".to_string(),
            false => pods(&c.pods),
        },
        more(c.omitted),
    );
}

fn pods(l: &[DomainCount]) -> String {
    let parts: Vec<String> = l
        .iter()
        .map(|d| format!("{}: {}", d.domain, d.pods))
        .collect();
    parts.join(", ")
}

fn more(omitted: usize) -> String {
    match omitted {
        0 => String::new(),
        n => format!(" (+{n} more; --all-nodes)"),
    }
}
