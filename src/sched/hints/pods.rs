//! The QueueingHints of the plugins that count other pods: InterPodAffinity
//! (`interpodaffinity/plugin.go`: `isSchedulableAfterAssignedPodChange`,
//! `isSchedulableAfterTargetPodUpdateLabel`, `isSchedulableAfterNodeChange`) and
//! PodTopologySpread (`podtopologyspread/plugin.go` and `common.go`:
//! `isSchedulableAfterAssignedPodChange`, `isSchedulableAfterTargetPodChange`,
//! `isSchedulableAfterNodeChange`), on the terms and constraints their filters compile.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::TopologySpreadConstraint;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

use super::{HintResult, is_bound, is_nominated, queue_if};
use crate::model::{Node, Pod};
use crate::sched::plugins::inter_pod_affinity::{
    NamespaceLabels, Term, required_terms, selector_matches,
};
use crate::sched::plugins::pod_topology_spread::{Services, default_constraints, label_dependence};
use crate::sched::queue::QueueingHint;

/// `AffinityTerm.Matches(pod, nil)`: the hints pass no namespace labels, so a
/// `namespaceSelector` matches only when it is empty (upstream, as of master).
fn term_matches(t: &Term, p: &Pod) -> bool {
    t.matches(p, &NamespaceLabels::new())
}

/// `podMatchesAllAffinityTerms`: false for no terms.
fn matches_all(terms: &[Term], p: &Pod) -> bool {
    !terms.is_empty() && terms.iter().all(|t| term_matches(t, p))
}

/// `podMatchesAnyAffinityTerms`.
fn matches_any(terms: &[Term], p: &Pod) -> bool {
    terms.iter().any(|t| term_matches(t, p))
}

/// InterPodAffinity's `isSchedulableAfterAssignedPodChange`: an added pod that matches all
/// affinity terms, an update that makes a pod match them or stop matching an anti-affinity
/// term, a deleted pod that the queued pod's anti-affinity hated or whose anti-affinity hated
/// the queued pod. Pods neither bound nor nominated never count.
pub(super) fn affinity_assigned_pod(pod: &Pod, old: Option<&Pod>, new: Option<&Pod>) -> HintResult {
    let unscheduled = |p: &Pod| !is_bound(p) && !is_nominated(p);
    if new.is_some_and(unscheduled) || old.is_some_and(unscheduled) {
        return Ok(QueueingHint::QueueSkip);
    }
    let (terms, anti) = required_terms(pod);
    match (old, new) {
        (Some(old), Some(new)) => queue_if(
            (!matches_all(&terms, old) && matches_all(&terms, new))
                || (matches_any(&anti, old) && !matches_any(&anti, new)),
        ),
        (None, Some(new)) => queue_if(matches_all(&terms, new)),
        (Some(deleted), None) => {
            let (_, deleted_anti) = required_terms(deleted);
            queue_if(matches_any(&anti, deleted) || matches_any(&deleted_anti, pod))
        }
        (None, None) => Err("the event carried no pod".into()),
    }
}

/// InterPodAffinity's `isSchedulableAfterNodeChange`: an affinity topology key added to a
/// node (or on an added node) or moved to another value; an anti-affinity key removed or moved,
/// or any added node when the pod has anti-affinity.
pub(super) fn affinity_node(pod: &Pod, old: Option<&Node>, new: Option<&Node>) -> HintResult {
    let new = new.ok_or("InterPodAffinity registers no node delete")?;
    let (terms, anti) = required_terms(pod);
    let value = |n: &'_ Node, key: &str| n.labels.get(key).cloned();
    let moved = |old: Option<String>, new: Option<String>| matches!((old, new), (Some(a), Some(b)) if a != b);
    let affinity = terms.iter().any(|t| match old {
        None => new.labels.contains_key(&t.topology_key),
        Some(old) => {
            let (was, now) = (value(old, &t.topology_key), value(new, &t.topology_key));
            (was.is_none() && now.is_some()) || moved(was, now)
        }
    });
    let anti_affinity = anti.iter().any(|t| match old {
        None => true,
        Some(old) => {
            let (was, now) = (value(old, &t.topology_key), value(new, &t.topology_key));
            (was.is_some() && now.is_none()) || moved(was, now)
        }
    });
    queue_if(affinity || anti_affinity)
}

/// A hard (`DoNotSchedule`) spread constraint as the hints read it.
struct Hard {
    selector: Option<LabelSelector>,
    topology_key: String,
    honor_taints: bool,
}

impl Hard {
    /// `c.Selector.Matches`: a missing selector matches nothing.
    fn selects(&self, labels: &BTreeMap<String, String>) -> bool {
        (self.selector.as_ref()).is_some_and(|s| selector_matches(s, labels))
    }
}

/// `getConstraints(pod)`: the pod's `DoNotSchedule` constraints with `matchLabelKeys` merged,
/// or, when it has none, the profile's default constraints of that kind with the selector of
/// the Services and controller selecting it (`buildDefaultConstraints`).
fn hard_constraints(
    pod: &Pod,
    defaults: Option<&[TopologySpreadConstraint]>,
    services: &Services,
) -> Vec<Hard> {
    let all = match pod.topology_spread_constraints.is_empty() {
        false => pod.topology_spread_constraints.clone(),
        true => default_constraints(pod, defaults, services).unwrap_or_default(),
    };
    let hard: Vec<TopologySpreadConstraint> = (all.into_iter())
        .filter(|c| c.when_unsatisfiable == "DoNotSchedule")
        .collect();
    let (selectors, _) = label_dependence(pod, &hard);
    (hard.into_iter().zip(selectors))
        .map(|(c, selector)| Hard {
            selector,
            honor_taints: c.node_taints_policy.as_deref() == Some("Honor"),
            topology_key: c.topology_key,
        })
        .collect()
}

/// What PodTopologySpread's hints read of the profile and the cluster.
pub(super) struct SpreadContext<'a> {
    pub defaults: Option<&'a [TopologySpreadConstraint]>,
    pub services: &'a Services,
}

/// PodTopologySpread's `isSchedulableAfterAssignedPodChange`: a bound or nominated pod of the
/// namespace that a constraint selects, added or deleted, or whose labels changed whether a
/// constraint selects it.
pub(super) fn spread_assigned_pod(
    pod: &Pod,
    old: Option<&Pod>,
    new: Option<&Pod>,
    cx: &SpreadContext<'_>,
) -> HintResult {
    let involved = |p: &Pod| (is_bound(p) || is_nominated(p)) && p.namespace == pod.namespace;
    if new.is_some_and(|p| !involved(p)) || old.is_some_and(|p| !involved(p)) {
        return Ok(QueueingHint::QueueSkip);
    }
    let constraints = hard_constraints(pod, cx.defaults, cx.services);
    let selected = |p: &Pod| constraints.iter().any(|c| c.selects(&p.labels));
    match (old, new) {
        (Some(old), Some(new)) => label_change(old, new, &constraints),
        (None, Some(added)) => queue_if(selected(added)),
        (Some(deleted), None) => queue_if(selected(deleted)),
        (None, None) => Err("the event carried no pod".into()),
    }
}

/// PodTopologySpread's `isSchedulableAfterTargetPodChange`: the queued pod got a toleration
/// while a constraint honours taints, or its labels changed whether a constraint selects it.
pub(super) fn spread_target_pod(
    pod: &Pod,
    old: Option<&Pod>,
    new: &Pod,
    cx: &SpreadContext<'_>,
) -> HintResult {
    let old = old.ok_or("a pod update without the old pod")?;
    let constraints = hard_constraints(pod, cx.defaults, cx.services);
    if old.tolerations != new.tolerations && constraints.iter().any(|c| c.honor_taints) {
        return Ok(QueueingHint::Queue);
    }
    label_change(old, new, &constraints)
}

/// `isSchedulableAfterPodLabelChange`.
fn label_change(old: &Pod, new: &Pod, constraints: &[Hard]) -> HintResult {
    if old.labels == new.labels {
        return Ok(QueueingHint::QueueSkip);
    }
    queue_if((constraints.iter()).any(|c| c.selects(&old.labels) != c.selects(&new.labels)))
}

/// PodTopologySpread's `isSchedulableAfterNodeChange`: whether the node carries every
/// constraint's topology key (`nodeLabelsMatchSpreadConstraints`) changed, or it carries them
/// and a key's value or the taints changed; an added or deleted node that carries them.
pub(super) fn spread_node(
    pod: &Pod,
    old: Option<&Node>,
    new: Option<&Node>,
    cx: &SpreadContext<'_>,
) -> HintResult {
    let constraints = hard_constraints(pod, cx.defaults, cx.services);
    let carries_keys =
        |n: &Node| (constraints.iter()).all(|c| n.labels.contains_key(&c.topology_key));
    match (old, new) {
        (Some(old), Some(new)) => {
            let (was, now) = (carries_keys(old), carries_keys(new));
            // `checkTopologyKeyLabelsChanged` reads Go maps: a missing key reads as "".
            let value =
                |n: &Node, key: &str| n.labels.get(key).map_or("", String::as_str).to_owned();
            let key_moved = (constraints.iter())
                .any(|c| value(old, &c.topology_key) != value(new, &c.topology_key));
            queue_if(was != now || (now && (key_moved || old.taints != new.taints)))
        }
        (None, Some(added)) => queue_if(carries_keys(added)),
        (Some(deleted), None) => queue_if(carries_keys(deleted)),
        (None, None) => Err("the event carried no node".into()),
    }
}
