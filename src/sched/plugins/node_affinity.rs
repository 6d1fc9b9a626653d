//! `NodeAffinity`: `nodeSelector` AND required node affinity (filter), preferred terms (score),
//! and the PreFilter narrowing to nodes named by `metadata.name In` match fields.
//! Sources: `kubernetes/component-helpers:scheduling/corev1/nodeaffinity/nodeaffinity.go`,
//! `kubernetes/apimachinery:pkg/labels/selector.go` (operators, `Gt`/`Lt` parsing),
//! `pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go`.

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{NodeAffinity, NodeSelectorRequirement, NodeSelectorTerm};

use crate::model::labels::{is_qualified_name, is_valid_label_value};
use crate::model::{Node, Pod};
use crate::sched::framework::{Code, Status, names};

pub const ERR_REASON_POD: &str = "node(s) didn't match Pod's node affinity/selector";
pub const ERR_REASON_ENFORCED: &str = "node(s) didn't match scheduler-enforced node affinity";
pub const ERR_REASON_CONFLICT: &str = "pod affinity terms conflict";
/// `metav1.ObjectNameField`, the only field `matchFields` supports.
pub const OBJECT_NAME_FIELD: &str = "metadata.name";

/// A requirement that does not parse makes its whole term unusable (a lazy parse error).
struct ParseError;

/// `labels.Requirement.Matches` for a node-selector requirement, after `NewRequirement`'s checks
/// (valid key and values, value count per operator, integer bounds for `Gt`/`Lt`).
fn requirement_matches(
    r: &NodeSelectorRequirement,
    labels: &BTreeMap<String, String>,
) -> Result<bool, ParseError> {
    let values = r.values.as_deref().unwrap_or(&[]);
    if !is_qualified_name(&r.key) || !values.iter().all(|v| is_valid_label_value(v)) {
        return Err(ParseError);
    }
    let label = labels.get(&r.key);
    match r.operator.as_str() {
        "In" | "NotIn" if values.is_empty() => Err(ParseError),
        "In" => Ok(label.is_some_and(|v| values.contains(v))),
        "NotIn" => Ok(label.is_none_or(|v| !values.contains(v))),
        "Exists" | "DoesNotExist" if !values.is_empty() => Err(ParseError),
        "Exists" => Ok(label.is_some()),
        "DoesNotExist" => Ok(label.is_none()),
        "Gt" | "Lt" => {
            let [value] = values else {
                return Err(ParseError);
            };
            let bound: i64 = value.parse().map_err(|_| ParseError)?;
            Ok(match label.map(|l| l.parse::<i64>()) {
                Some(Ok(l)) => {
                    if r.operator == "Gt" {
                        l > bound
                    } else {
                        l < bound
                    }
                }
                _ => false,
            })
        }
        _ => Err(ParseError),
    }
}

/// A `matchFields` requirement: only `metadata.name`, `In`/`NotIn`, exactly one value.
fn field_requirement_matches(
    r: &NodeSelectorRequirement,
    node_name: &str,
) -> Result<bool, ParseError> {
    let values = r.values.as_deref().unwrap_or(&[]);
    let [value] = values else {
        return Err(ParseError);
    };
    if r.key != OBJECT_NAME_FIELD {
        return Err(ParseError);
    }
    match r.operator.as_str() {
        "In" => Ok(node_name == value),
        "NotIn" => Ok(node_name != value),
        _ => Err(ParseError),
    }
}

/// Whether one term matches: every expression and every field; an empty term matches nothing.
fn term_matches(term: &NodeSelectorTerm, node: &Node) -> Result<bool, ParseError> {
    let exprs = term.match_expressions.as_deref().unwrap_or(&[]);
    let fields = term.match_fields.as_deref().unwrap_or(&[]);
    if exprs.is_empty() && fields.is_empty() {
        return Ok(false);
    }
    let mut all = true;
    for r in exprs {
        all &= requirement_matches(r, &node.labels)?;
    }
    for r in fields {
        all &= field_requirement_matches(r, &node.name)?;
    }
    Ok(all)
}

/// Whether a node's labels meet every requirement (an unparsable one meets none): a term's
/// match expressions, as [`terms_match`] reads them.
pub fn requirements_match<'r>(
    requirements: impl IntoIterator<Item = &'r NodeSelectorRequirement>,
    labels: &BTreeMap<String, String>,
) -> bool {
    (requirements.into_iter()).all(|r| requirement_matches(r, labels).unwrap_or(false))
}

/// `LazyErrorNodeSelector.Match`: terms are ORed; an unparsable term is skipped.
pub fn terms_match(terms: &[NodeSelectorTerm], node: &Node) -> bool {
    terms.iter().any(|t| term_matches(t, node).unwrap_or(false))
}

/// `RequiredNodeAffinity.Match`: the nodeSelector (every key equal) AND the required terms.
pub fn required_matches(pod: &Pod, node: &Node) -> bool {
    required_match(pod, node).unwrap_or(false)
}

/// `RequiredNodeAffinity.Match` with its error: when no term matches and some term could not
/// be parsed, `LazyErrorNodeSelector.Match` returns the parse errors with `false` (the
/// QueueingHint of NodeAffinity treats that error as Queue; Filter ignores it).
pub fn required_match(pod: &Pod, node: &Node) -> Result<bool, String> {
    let selector_ok = pod
        .node_selector
        .iter()
        .all(|(k, v)| node.labels.get(k) == Some(v));
    if !selector_ok {
        return Ok(false);
    }
    let Some(terms) = required_terms(pod) else {
        return Ok(true);
    };
    let mut unparsable = false;
    for t in terms {
        match term_matches(t, node) {
            Ok(true) => return Ok(true),
            Ok(false) => {}
            Err(ParseError) => unparsable = true,
        }
    }
    match unparsable {
        true => Err("a required node selector term of the pod cannot be parsed".into()),
        false => Ok(false),
    }
}

fn required_terms(pod: &Pod) -> Option<&[NodeSelectorTerm]> {
    pod.affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .required_during_scheduling_ignored_during_execution
        .as_ref()
        .map(|r| r.node_selector_terms.as_slice())
}

/// The one check of `labels.NewRequirement` (`apimachinery/pkg/labels/selector.go`) that the API
/// server does not make: a `Gt`/`Lt` bound must parse as an int64 (`strconv.ParseInt`).
/// `ValidateNodeSelectorRequirement` only asks for exactly one value, so such a pod exists; the
/// scheduler then cannot parse the term. `path` is the requirement's field path as the
/// component-helpers parser builds it. Returns its field errors.
fn bound_errors(r: &NodeSelectorRequirement, path: &str) -> Vec<String> {
    if !matches!(r.operator.as_str(), "Gt" | "Lt") {
        return Vec::new();
    }
    (r.values.iter().flatten().enumerate())
        .filter(|(_, v)| v.parse::<i64>().is_err())
        .map(|(i, v)| {
            format!(
                "{path}.values[{i}]: Invalid value: {v:?}: for 'Gt', 'Lt' operators, the value must be an integer"
            )
        })
        .collect()
}

fn term_bound_errors(term: &NodeSelectorTerm, path: &str) -> Vec<String> {
    (term.match_expressions.iter().flatten().enumerate())
        .flat_map(|(j, r)| bound_errors(r, &format!("{path}matchExpressions[{j}]")))
        .collect()
}

/// NodeAffinity PreScore's error for a pod whose preferred terms do not parse
/// (`node_affinity.go` `PreScore` → `nodeaffinity.NewPreferredSchedulingTerms`, which skips
/// weight-0 and empty terms and aggregates the parse errors of the others; paths start at the
/// term's index, `[i].matchExpressions[j].values[k]`). kube-scheduler fails the scheduling
/// cycle with it, as `running PreScore plugin "NodeAffinity": …`, whenever more than one node
/// passed the filters.
pub fn pre_score_error(pod: &Pod) -> Option<String> {
    let terms = pod
        .affinity
        .as_ref()?
        .node_affinity
        .as_ref()?
        .preferred_during_scheduling_ignored_during_execution
        .as_ref()?;
    let errors: Vec<String> = (terms.iter().enumerate())
        .filter(|(_, t)| t.weight != 0 && !is_empty_term(&t.preference))
        .flat_map(|(i, t)| term_bound_errors(&t.preference, &format!("[{i}].")))
        .collect();
    aggregate(errors)
}

fn is_empty_term(t: &NodeSelectorTerm) -> bool {
    t.match_expressions.as_ref().is_none_or(Vec::is_empty)
        && t.match_fields.as_ref().is_none_or(Vec::is_empty)
}

/// `errors.NewAggregate(…).Error()` (`apimachinery/pkg/util/errors/errors.go`): one error as
/// itself, several as `[a, b]` with repeated messages once.
fn aggregate(errors: Vec<String>) -> Option<String> {
    let mut seen = BTreeSet::new();
    let unique: Vec<String> = errors
        .into_iter()
        .filter(|e| seen.insert(e.clone()))
        .collect();
    match unique.len() {
        0 => None,
        1 => unique.into_iter().next(),
        _ => Some(format!("[{}]", unique.join(", "))),
    }
}

/// What the user should know about node-affinity terms the API server accepts and the
/// scheduler cannot parse: a required term that never matches (its other terms still can), a
/// preferred one that fails scoring. Paths are the pod's own field paths.
pub fn unparsable_term_warnings(pod: &Pod) -> Vec<String> {
    let Some(na) = pod.affinity.as_ref().and_then(|a| a.node_affinity.as_ref()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let base = "spec.affinity.nodeAffinity";
    for (i, t) in required_terms(pod).into_iter().flatten().enumerate() {
        let path = format!(
            "{base}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]."
        );
        for e in term_bound_errors(t, &path) {
            out.push(format!(
                "{e}; kube-scheduler cannot parse this term and treats it as matching no node (the API server accepts it)"
            ));
        }
    }
    let preferred = na
        .preferred_during_scheduling_ignored_during_execution
        .iter()
        .flatten();
    for (i, t) in preferred.enumerate() {
        let path =
            format!("{base}.preferredDuringSchedulingIgnoredDuringExecution[{i}].preference.");
        for e in term_bound_errors(&t.preference, &path) {
            out.push(format!(
                "{e}; kube-scheduler's NodeAffinity PreScore fails on it, so the pod is not scheduled whenever more than one node fits (the API server accepts it)"
            ));
        }
    }
    out
}

/// PreFilter's outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreFilter {
    /// Nothing to check (no selector, no required affinity, no added affinity).
    Skip,
    /// Filter every node.
    AllNodes,
    /// Only these nodes can match; the others are "node(s) didn't satisfy plugin(s) [NodeAffinity]".
    NodeNames(BTreeSet<String>),
    /// The terms name disjoint node sets: `pod affinity terms conflict`.
    Reject(Status),
}

pub fn pre_filter(pod: &Pod, added: Option<&NodeAffinity>) -> PreFilter {
    let terms = required_terms(pod);
    let added_required = added.and_then(|a| {
        a.required_during_scheduling_ignored_during_execution
            .as_ref()
    });
    if terms.is_none() && added_required.is_none() && pod.node_selector.is_empty() {
        return PreFilter::Skip;
    }
    let Some(terms) = terms.filter(|t| !t.is_empty()) else {
        return PreFilter::AllNodes;
    };
    let mut node_names: BTreeSet<String> = BTreeSet::new();
    for t in terms {
        let mut term_names: Option<BTreeSet<String>> = None;
        for r in t.match_fields.iter().flatten() {
            if r.key == OBJECT_NAME_FIELD && r.operator == "In" {
                let s: BTreeSet<String> = r.values.iter().flatten().cloned().collect();
                term_names = Some(match term_names {
                    None => s,
                    Some(prev) => prev.intersection(&s).cloned().collect(),
                });
            }
        }
        match term_names {
            // A term without a name requirement admits every node: the terms are ORed.
            None => return PreFilter::AllNodes,
            Some(names) => node_names.extend(names),
        }
    }
    if node_names.is_empty() {
        PreFilter::Reject(Status::new(
            Code::UnschedulableAndUnresolvable,
            names::NODE_AFFINITY,
            ERR_REASON_CONFLICT,
        ))
    } else {
        PreFilter::NodeNames(node_names)
    }
}

/// Filter: scheduler-enforced affinity first, then the pod's own selector and affinity.
pub fn filter(pod: &Pod, node: &Node, added: Option<&NodeAffinity>) -> Status {
    let added_terms = added
        .and_then(|a| {
            a.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .map(|r| r.node_selector_terms.as_slice());
    if let Some(terms) = added_terms
        && !terms_match(terms, node)
    {
        return Status::new(
            Code::UnschedulableAndUnresolvable,
            names::NODE_AFFINITY,
            ERR_REASON_ENFORCED,
        );
    }
    if required_matches(pod, node) {
        Status::success()
    } else {
        Status::new(
            Code::UnschedulableAndUnresolvable,
            names::NODE_AFFINITY,
            ERR_REASON_POD,
        )
    }
}

/// Score before normalisation: the summed weights of the preferred terms (the pod's and the
/// scheduler-added ones) that match. Weight-0 terms are skipped, an empty preference matches
/// nothing.
pub fn score(pod: &Pod, node: &Node, added: Option<&NodeAffinity>) -> i64 {
    let pod_terms = pod
        .affinity
        .as_ref()
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|na| {
            na.preferred_during_scheduling_ignored_during_execution
                .as_ref()
        });
    let added_terms = added.and_then(|a| {
        a.preferred_during_scheduling_ignored_during_execution
            .as_ref()
    });
    pod_terms
        .into_iter()
        .chain(added_terms)
        .flatten()
        .filter(|t| t.weight != 0 && term_matches(&t.preference, node).unwrap_or(false))
        .map(|t| i64::from(t.weight))
        .sum()
}

/// NodeAffinity's view of `pod` for `schedsim explain`, `None` when it checks nothing.
pub fn describe(pod: &Pod, added: Option<&NodeAffinity>) -> Option<NodeAffinityState> {
    let node_names = match pre_filter(pod, added) {
        PreFilter::Skip => return None,
        PreFilter::NodeNames(names) => Some(names.into_iter().collect()),
        _ => None,
    };
    let texts = |terms: Option<&[NodeSelectorTerm]>| -> Vec<String> {
        terms.into_iter().flatten().map(term_text).collect()
    };
    let added_terms = added
        .and_then(|a| {
            a.required_during_scheduling_ignored_during_execution
                .as_ref()
        })
        .map(|r| r.node_selector_terms.as_slice());
    Some(NodeAffinityState {
        node_names,
        node_selector: pod.node_selector.clone().into_iter().collect(),
        required_terms: texts(required_terms(pod)),
        profile_terms: texts(added_terms),
    })
}

/// A node selector term as text: its requirements joined by "and" (`key In [a, b]`,
/// `key Exists`; fields as `metadata.name In [n]`).
fn term_text(t: &NodeSelectorTerm) -> String {
    let requirement = |r: &k8s_openapi::api::core::v1::NodeSelectorRequirement| {
        let values = r.values.as_deref().unwrap_or_default();
        match values.is_empty() {
            true => format!("{} {}", r.key, r.operator),
            false => format!("{} {} [{}]", r.key, r.operator, values.join(", ")),
        }
    };
    let parts: Vec<String> = (t.match_expressions.iter().flatten())
        .chain(t.match_fields.iter().flatten())
        .map(requirement)
        .collect();
    match parts.is_empty() {
        true => "(empty term: matches no node)".to_string(),
        false => parts.join(" and "),
    }
}

/// NodeAffinity's view of the pod: what its PreFilter narrows to, and what Filter checks.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NodeAffinityState {
    /// PreFilter's result (`PreFilterResult.NodeNames`, from `matchFields` on
    /// `metadata.name`): every other node is "node(s) didn't satisfy plugin(s)
    /// [NodeAffinity]".
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_names: Option<Vec<String>>,
    #[serde(default)]
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    /// The pod's required node affinity terms (any one must match; within a term, all).
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub required_terms: Vec<String>,
    /// The profile's `addedAffinity` required terms, checked before the pod's own.
    #[serde(default)]
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub profile_terms: Vec<String>,
}
