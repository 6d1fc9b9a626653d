//! `InterPodAffinity`: required pod affinity and anti-affinity (filter, including existing pods'
//! anti-affinity applied symmetrically and the first-pod rule) and preferred terms (score).
//! Sources: `pkg/scheduler/framework/plugins/interpodaffinity/filtering.go`, `scoring.go`;
//! `pkg/scheduler/framework/types.go` (`newAffinityTerm`, namespaces);
//! `kubernetes/apimachinery:pkg/apis/meta/v1/helpers.go` (`LabelSelectorAsSelector`).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use k8s_openapi::api::core::v1::{PodAffinityTerm, WeightedPodAffinityTerm};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

use crate::model::{Node, Pod};
use crate::sched::framework::{Code, Status, names};

pub const ERR_REASON_EXISTING_ANTI_AFFINITY: &str =
    "node(s) didn't satisfy existing pods anti-affinity rules";
pub const ERR_REASON_ANTI_AFFINITY: &str = "node(s) didn't match pod anti-affinity rules";
pub const ERR_REASON_AFFINITY: &str = "node(s) didn't match pod affinity rules";
/// The label every namespace carries (`kubernetes.io/metadata.name`).
const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// Namespace name → its labels (from the scenario's Namespace objects), for `namespaceSelector`.
pub type NamespaceLabels = BTreeMap<String, BTreeMap<String, String>>;

/// A namespace's labels: those declared, plus `kubernetes.io/metadata.name`.
fn labels_of(namespaces: &NamespaceLabels, ns: &str) -> BTreeMap<String, String> {
    let mut labels = namespaces.get(ns).cloned().unwrap_or_default();
    labels.insert(NAMESPACE_NAME_LABEL.to_string(), ns.to_string());
    labels
}

/// A compiled `PodAffinityTerm` (`framework.AffinityTerm`).
#[derive(Debug, Clone)]
pub struct Term {
    namespaces: BTreeSet<String>,
    namespace_selector: Option<LabelSelector>,
    selector: Option<LabelSelector>,
    pub topology_key: String,
    pub weight: i64,
}

impl Term {
    /// `newAffinityTerm`: an empty namespace list and no namespace selector mean the pod's own
    /// namespace; `matchLabelKeys` / `mismatchLabelKeys` add `In` / `NotIn` requirements on the
    /// incoming pod's values for those keys.
    fn new(pod: &Pod, t: &PodAffinityTerm, weight: i64) -> Term {
        let mut namespaces: BTreeSet<String> = t.namespaces.iter().flatten().cloned().collect();
        if namespaces.is_empty() && t.namespace_selector.is_none() {
            namespaces.insert(pod.namespace.clone());
        }
        let mut selector = t.label_selector.clone();
        if let Some(sel) = &mut selector {
            let mut extra = Vec::new();
            for (keys, op) in [
                (&t.match_label_keys, "In"),
                (&t.mismatch_label_keys, "NotIn"),
            ] {
                for key in keys.iter().flatten() {
                    if let Some(v) = pod.labels.get(key) {
                        extra.push(LabelSelectorRequirement {
                            key: key.clone(),
                            operator: op.into(),
                            values: Some(vec![v.clone()]),
                        });
                    }
                }
            }
            if !extra.is_empty() {
                sel.match_expressions
                    .get_or_insert_with(Vec::new)
                    .extend(extra);
            }
        }
        Term {
            namespaces,
            namespace_selector: t.namespace_selector.clone(),
            selector,
            topology_key: t.topology_key.clone(),
            weight,
        }
    }

    /// `AffinityTerm.Matches`: the other pod's namespace is in the term's (or its selector
    /// matches the namespace) and the label selector matches the other pod.
    pub fn matches(&self, other: &Pod, namespaces: &NamespaceLabels) -> bool {
        let ns_ok = self.namespaces.contains(&other.namespace)
            || self
                .namespace_selector
                .as_ref()
                .is_some_and(|s| selector_matches(s, &labels_of(namespaces, &other.namespace)));
        ns_ok
            && self
                .selector
                .as_ref()
                .is_some_and(|s| selector_matches(s, &other.labels))
    }
}

/// `LabelSelectorAsSelector(...).Matches`: `{}` matches everything; requirements AND.
pub fn selector_matches(s: &LabelSelector, labels: &BTreeMap<String, String>) -> bool {
    let labels_ok = s
        .match_labels
        .iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    labels_ok
        && s.match_expressions.iter().flatten().all(|r| {
            let values = r.values.as_deref().unwrap_or(&[]);
            let v = labels.get(&r.key);
            match r.operator.as_str() {
                "In" => v.is_some_and(|v| values.contains(v)),
                "NotIn" => v.is_none_or(|v| !values.contains(v)),
                "Exists" => v.is_some(),
                "DoesNotExist" => v.is_none(),
                _ => false,
            }
        })
}

/// The pod's required terms: (affinity, anti-affinity).
pub fn required_terms(pod: &Pod) -> (Vec<Term>, Vec<Term>) {
    let a = pod.affinity.as_ref();
    let affinity = a.and_then(|a| a.pod_affinity.as_ref()).and_then(|p| {
        p.required_during_scheduling_ignored_during_execution
            .as_ref()
    });
    let anti = a.and_then(|a| a.pod_anti_affinity.as_ref()).and_then(|p| {
        p.required_during_scheduling_ignored_during_execution
            .as_ref()
    });
    let compile = |ts: Option<&Vec<PodAffinityTerm>>| {
        ts.into_iter()
            .flatten()
            .map(|t| Term::new(pod, t, 1))
            .collect()
    };
    (compile(affinity), compile(anti))
}

/// The pod's preferred terms: (affinity, anti-affinity), with weights.
pub fn preferred_terms(pod: &Pod) -> (Vec<Term>, Vec<Term>) {
    let a = pod.affinity.as_ref();
    let affinity = a.and_then(|a| a.pod_affinity.as_ref()).and_then(|p| {
        p.preferred_during_scheduling_ignored_during_execution
            .as_ref()
    });
    let anti = a.and_then(|a| a.pod_anti_affinity.as_ref()).and_then(|p| {
        p.preferred_during_scheduling_ignored_during_execution
            .as_ref()
    });
    let compile = |ts: Option<&Vec<WeightedPodAffinityTerm>>| {
        ts.into_iter()
            .flatten()
            .map(|t| Term::new(pod, &t.pod_affinity_term, i64::from(t.weight)))
            .collect()
    };
    (compile(affinity), compile(anti))
}

/// Whether the plugin has anything to do for a pod, given whether any bound pod carries
/// required anti-affinity (PreFilter's `Skip`).
pub fn relevant(pod: &Pod, any_existing_anti_affinity: bool) -> bool {
    let a = pod.affinity.as_ref();
    any_existing_anti_affinity
        || a.is_some_and(|a| a.pod_affinity.is_some() || a.pod_anti_affinity.is_some())
}

type Counts = HashMap<(String, String), i64>;

/// PreFilter's state: counts per (topology key, value) of the node each matching pod is on.
#[derive(Debug, Default)]
pub struct State {
    existing_anti_affinity: Counts,
    affinity: Counts,
    anti_affinity: Counts,
    affinity_terms: Vec<Term>,
    anti_affinity_terms: Vec<Term>,
    /// No existing pod matches all affinity terms, but the pod matches them itself.
    first_of_group: bool,
}

/// PreFilter: walks the bound pods once. `bound` yields each bound pod with its node.
pub fn pre_filter<'p>(
    pod: &Pod,
    bound: impl Iterator<Item = (&'p Node, &'p Pod)>,
    ns: &NamespaceLabels,
) -> State {
    let (affinity_terms, anti_affinity_terms) = required_terms(pod);
    let mut s = State {
        affinity_terms,
        anti_affinity_terms,
        ..Default::default()
    };
    let mut any_affinity_match = false;
    for (node, existing) in bound {
        // Existing pods' required anti-affinity that the incoming pod matches (symmetry).
        let (_, existing_anti) = required_terms(existing);
        for t in existing_anti.iter().filter(|t| t.matches(pod, ns)) {
            if let Some(v) = node.labels.get(&t.topology_key) {
                *s.existing_anti_affinity
                    .entry((t.topology_key.clone(), v.clone()))
                    .or_default() += 1;
            }
        }
        if !s.affinity_terms.is_empty() && s.affinity_terms.iter().all(|t| t.matches(existing, ns))
        {
            for t in &s.affinity_terms {
                if let Some(v) = node.labels.get(&t.topology_key) {
                    *s.affinity
                        .entry((t.topology_key.clone(), v.clone()))
                        .or_default() += 1;
                    any_affinity_match = true;
                }
            }
        }
        for t in s
            .anti_affinity_terms
            .iter()
            .filter(|t| t.matches(existing, ns))
        {
            if let Some(v) = node.labels.get(&t.topology_key) {
                *s.anti_affinity
                    .entry((t.topology_key.clone(), v.clone()))
                    .or_default() += 1;
            }
        }
    }
    s.first_of_group = !any_affinity_match && s.affinity_terms.iter().all(|t| t.matches(pod, ns));
    s
}

fn count(c: &Counts, key: &str, node: &Node) -> i64 {
    node.labels
        .get(key)
        .and_then(|v| c.get(&(key.to_string(), v.clone())))
        .copied()
        .unwrap_or(0)
}

/// Filter, in upstream order: existing pods' anti-affinity, the pod's anti-affinity, the pod's
/// affinity (with the first-pod rule).
pub fn filter(s: &State, node: &Node) -> Status {
    let existing_anti = s
        .existing_anti_affinity
        .keys()
        .any(|(k, v)| node.labels.get(k) == Some(v));
    if existing_anti {
        return Status::new(
            Code::Unschedulable,
            names::INTER_POD_AFFINITY,
            ERR_REASON_EXISTING_ANTI_AFFINITY,
        );
    }
    if s.anti_affinity_terms
        .iter()
        .any(|t| count(&s.anti_affinity, &t.topology_key, node) > 0)
    {
        return Status::new(
            Code::Unschedulable,
            names::INTER_POD_AFFINITY,
            ERR_REASON_ANTI_AFFINITY,
        );
    }
    if !s.affinity_terms.is_empty() {
        let has_keys = s
            .affinity_terms
            .iter()
            .all(|t| node.labels.contains_key(&t.topology_key));
        let satisfied = has_keys
            && s.affinity_terms
                .iter()
                .all(|t| count(&s.affinity, &t.topology_key, node) > 0);
        if !(satisfied || has_keys && s.first_of_group) {
            return Status::new(
                Code::UnschedulableAndUnresolvable,
                names::INTER_POD_AFFINITY,
                ERR_REASON_AFFINITY,
            );
        }
    }
    Status::success()
}

/// Score before normalisation (`scoring.go`): for each existing pod in the same topology domain,
/// plus the weight of each preferred affinity term it matches and minus that of each preferred
/// anti-affinity term; and symmetrically the existing pod's preferred terms (and its required
/// affinity, with the hard weight 1) that the incoming pod matches.
pub fn score<'p>(
    pod: &Pod,
    node: &Node,
    bound: impl Iterator<Item = (&'p Node, &'p Pod)>,
    ns: &NamespaceLabels,
) -> i64 {
    let (affinity, anti) = preferred_terms(pod);
    let mut total = 0;
    let same_domain = |key: &str, other: &Node| {
        node.labels
            .get(key)
            .is_some_and(|v| other.labels.get(key) == Some(v))
    };
    for (other_node, existing) in bound {
        for t in &affinity {
            if t.matches(existing, ns) && same_domain(&t.topology_key, other_node) {
                total += t.weight;
            }
        }
        for t in &anti {
            if t.matches(existing, ns) && same_domain(&t.topology_key, other_node) {
                total -= t.weight;
            }
        }
        let (e_aff, e_anti) = preferred_terms(existing);
        let (e_req_aff, _) = required_terms(existing);
        for t in e_aff.iter().chain(&e_req_aff) {
            if t.matches(pod, ns) && same_domain(&t.topology_key, other_node) {
                total += t.weight;
            }
        }
        for t in &e_anti {
            if t.matches(pod, ns) && same_domain(&t.topology_key, other_node) {
                total -= t.weight;
            }
        }
    }
    total
}

/// NormalizeScore: `100 × (s − min) / (max − min)` computed in floating point and truncated,
/// as upstream does; all 0 when every node scored the same.
pub fn normalize(scores: &mut [i64]) {
    let (Some(&min), Some(&max)) = (scores.iter().min(), scores.iter().max()) else {
        return;
    };
    let diff = max - min;
    for s in scores.iter_mut() {
        *s = if diff > 0 {
            (100.0 * ((*s - min) as f64 / diff as f64)) as i64
        } else {
            0
        };
    }
}
