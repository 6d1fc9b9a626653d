//! `InterPodAffinity`: required pod affinity and anti-affinity (filter, including existing pods'
//! anti-affinity applied symmetrically and the first-pod rule) and preferred terms (score).
//! Sources: `pkg/scheduler/framework/plugins/interpodaffinity/filtering.go`, `scoring.go`;
//! `pkg/scheduler/framework/types.go` (`newAffinityTerm`, namespaces);
//! `kubernetes/apimachinery:pkg/apis/meta/v1/helpers.go` (`LabelSelectorAsSelector`).
//!
//! Terminating pods (`metadata.deletionTimestamp` set) count like any other bound pod: upstream
//! reads every pod of a node (`nodeInfo.Pods`, `PodsWithAffinity`,
//! `PodsWithRequiredAntiAffinity` in filtering.go and scoring.go) whatever its deletion
//! timestamp, unlike PodTopologySpread (`tests/data/terminating/plugins.yaml`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use foldhash::fast::FixedState;
use k8s_openapi::api::core::v1::{PodAffinityTerm, WeightedPodAffinityTerm};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

use crate::model::{Node, Pod};
use crate::sched::framework::{Code, Status, names};
use crate::sched::plugins::pod_topology_spread::DomainCount;

pub const ERR_REASON_EXISTING_ANTI_AFFINITY: &str =
    "node(s) didn't satisfy existing pods anti-affinity rules";
pub const ERR_REASON_ANTI_AFFINITY: &str = "node(s) didn't match pod anti-affinity rules";
pub const ERR_REASON_AFFINITY: &str = "node(s) didn't match pod affinity rules";
/// The label every namespace carries (`kubernetes.io/metadata.name`).
const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// Namespace name → its labels (from the scenario's Namespace objects), for `namespaceSelector`.
pub type NamespaceLabels = BTreeMap<String, BTreeMap<String, String>>;

/// A namespace's labels: those declared, plus `kubernetes.io/metadata.name`.
pub fn labels_of(namespaces: &NamespaceLabels, ns: &str) -> BTreeMap<String, String> {
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

/// Node → topology domain per topology key, built on a key's first use: the plugin's counts
/// are then arrays indexed by domain instead of maps keyed by label values (hashing and
/// comparing label strings dominated the anti-affinity profile).
#[derive(Debug, Default)]
pub struct Topology {
    keys: HashMap<String, usize, FixedState>,
    /// Per key: each node's domain, or [`NO_DOMAIN`] when the node lacks the label.
    domains: Vec<Arc<[u32]>>,
    /// Per key: how many domains.
    sizes: Vec<usize>,
}

/// The domain of a node without the topology label.
pub const NO_DOMAIN: u32 = u32::MAX;

impl Topology {
    /// The id of `key`, indexing its domains on first use.
    pub fn key(&mut self, key: &str, nodes: &[Node]) -> usize {
        if let Some(&k) = self.keys.get(key) {
            return k;
        }
        let mut values: HashMap<&str, u32, FixedState> = HashMap::default();
        let domains: Arc<[u32]> = nodes
            .iter()
            .map(|n| match n.labels.get(key) {
                Some(v) => {
                    let next = values.len() as u32;
                    *values.entry(v.as_str()).or_insert(next)
                }
                None => NO_DOMAIN,
            })
            .collect();
        self.sizes.push(values.len());
        self.domains.push(domains);
        self.keys.insert(key.to_string(), self.domains.len() - 1);
        self.domains.len() - 1
    }

    /// Each node's domain for `key` ([`NO_DOMAIN`] without the label) and how many domains
    /// there are, indexed on first use.
    pub fn domains(&mut self, key: &str, nodes: &[Node]) -> (Arc<[u32]>, usize) {
        let k = self.key(key, nodes);
        (Arc::clone(&self.domains[k]), self.sizes[k])
    }
}

/// The label value of domain `d` (an index of `domains`, each node's domain for `key`).
pub fn domain_value(domains: &[u32], d: u32, key: &str, nodes: &[Node]) -> String {
    (domains.iter().position(|&x| x == d))
        .and_then(|n| nodes[n].labels.get(key).cloned())
        .unwrap_or_default()
}

/// Per topology pair (key, domain): a count or a weight.
#[derive(Debug, Default, Clone)]
pub struct Counts {
    keys: Vec<KeyCounts>,
}

#[derive(Debug, Clone)]
struct KeyCounts {
    key: usize,
    domains: Arc<[u32]>,
    counts: Vec<i64>,
}

impl Counts {
    /// Adds `n` at the domain of `node` for key `key` (an id of `topo`); false when the node
    /// has no such label.
    fn add(&mut self, topo: &Topology, key: usize, node: usize, n: i64) -> bool {
        let d = topo.domains[key][node];
        if d == NO_DOMAIN {
            return false;
        }
        let slot = match self.keys.iter().position(|k| k.key == key) {
            Some(i) => i,
            None => {
                self.keys.push(KeyCounts {
                    key,
                    domains: Arc::clone(&topo.domains[key]),
                    counts: vec![0; topo.sizes[key]],
                });
                self.keys.len() - 1
            }
        };
        self.keys[slot].counts[d as usize] += n;
        true
    }

    /// The count at the node's domain for key `key`.
    fn get(&self, key: usize, node: usize) -> i64 {
        self.keys
            .iter()
            .find(|k| k.key == key)
            .map_or(0, |k| k.at(node))
    }

    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// The pairs with a count other than 0, as `key=value`, most first (`schedsim
    /// explain`).
    pub fn describe(&self, topo: &Topology, nodes: &[Node]) -> Vec<DomainCount> {
        (self.pairs(topo, nodes).into_iter())
            .map(|(domain, pods)| DomainCount { domain, pods })
            .collect()
    }

    /// [`Self::describe`] for PreScore's weights (`topologyScore`).
    pub fn describe_scores(&self, topo: &Topology, nodes: &[Node]) -> Vec<DomainScore> {
        (self.pairs(topo, nodes).into_iter())
            .map(|(domain, score)| DomainScore { domain, score })
            .collect()
    }

    /// The pairs with a value other than 0, as (`key=value`, value), highest first.
    fn pairs(&self, topo: &Topology, nodes: &[Node]) -> Vec<(String, i64)> {
        let mut out: Vec<(String, i64)> = Vec::new();
        for k in &self.keys {
            let key = (topo.keys.iter())
                .find(|(_, id)| **id == k.key)
                .map_or("", |(name, _)| name.as_str());
            for (d, &n) in k.counts.iter().enumerate().filter(|(_, n)| **n != 0) {
                let value = domain_value(&k.domains, d as u32, key, nodes);
                out.push((format!("{key}={value}"), n));
            }
        }
        out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        out
    }
}

impl KeyCounts {
    fn at(&self, node: usize) -> i64 {
        match self.domains[node] {
            NO_DOMAIN => 0,
            d => self.counts[d as usize],
        }
    }
}

/// PreFilter's state: counts per (topology key, value) of the node each matching pod is on.
#[derive(Debug, Default)]
pub struct State {
    existing_anti_affinity: Counts,
    affinity: Counts,
    anti_affinity: Counts,
    affinity_terms: Vec<Term>,
    anti_affinity_terms: Vec<Term>,
    /// Topology key ids of the terms, and each node's domains for the affinity terms' keys.
    affinity_keys: Vec<usize>,
    affinity_domains: Vec<Arc<[u32]>>,
    anti_affinity_keys: Vec<usize>,
    /// No existing pod matches all affinity terms, but the pod matches them itself.
    first_of_group: bool,
}

/// A pod's compiled pod-affinity terms (`framework.PodInfo`'s), kept with a bound pod so they
/// are compiled once, not once per incoming pod.
#[derive(Debug, Clone, Default)]
pub struct PodTerms {
    pub required_affinity: Vec<Term>,
    pub required_anti_affinity: Vec<Term>,
    pub preferred_affinity: Vec<Term>,
    pub preferred_anti_affinity: Vec<Term>,
}

impl PodTerms {
    /// `None` when the pod has no pod (anti-)affinity at all.
    pub fn compile(pod: &Pod) -> Option<PodTerms> {
        let a = pod.affinity.as_ref()?;
        if a.pod_affinity.is_none() && a.pod_anti_affinity.is_none() {
            return None;
        }
        let (required_affinity, required_anti_affinity) = required_terms(pod);
        let (preferred_affinity, preferred_anti_affinity) = preferred_terms(pod);
        Some(PodTerms {
            required_affinity,
            required_anti_affinity,
            preferred_affinity,
            preferred_anti_affinity,
        })
    }
}

/// Bound pods that are alike — the same namespace, labels and pod-affinity terms — as the plugin
/// sees them: one of them, its compiled terms if any, and how many sit on which node. A term is
/// matched once per group (and once per signature), and only matching groups' nodes are
/// visited. Equal `labels` signatures mean the same namespace and labels, equal `terms`
/// signatures the same terms.
pub struct BoundGroup<'p> {
    pub pod: &'p Pod,
    pub terms: Option<&'p PodTerms>,
    pub labels_signature: u32,
    pub terms_signature: u32,
    /// Node index → how many of the group's pods are there.
    pub nodes: &'p BTreeMap<usize, i64>,
}

/// Memoised term matches, by signature.
#[derive(Default)]
struct Memo(HashMap<u32, Vec<bool>>);

impl Memo {
    fn get(&mut self, signature: u32, compute: impl FnOnce() -> Vec<bool>) -> &[bool] {
        self.0.entry(signature).or_insert_with(compute)
    }
}

/// Adds a group's pods on each node to the node's topology pair for `key`; true if any node
/// had the key.
fn bump(c: &mut Counts, topo: &Topology, key: usize, nodes: &BTreeMap<usize, i64>) -> bool {
    let mut any = false;
    for (&node, &n) in nodes {
        any |= c.add(topo, key, node, n);
    }
    any
}

/// PreFilter: walks the bound pods once.
pub fn pre_filter<'p>(
    pod: &Pod,
    bound: impl Iterator<Item = BoundGroup<'p>>,
    ns: &NamespaceLabels,
    topo: &mut Topology,
    nodes: &[Node],
) -> State {
    let (affinity_terms, anti_affinity_terms) = required_terms(pod);
    let key_ids = |topo: &mut Topology, terms: &[Term]| -> Vec<usize> {
        terms
            .iter()
            .map(|t| topo.key(&t.topology_key, nodes))
            .collect()
    };
    let affinity_keys = key_ids(topo, &affinity_terms);
    let anti_affinity_keys = key_ids(topo, &anti_affinity_terms);
    let mut s = State {
        affinity_domains: affinity_keys
            .iter()
            .map(|&k| Arc::clone(&topo.domains[k]))
            .collect(),
        affinity_keys,
        anti_affinity_keys,
        affinity_terms,
        anti_affinity_terms,
        ..Default::default()
    };
    let mut any_affinity_match = false;
    // Which of an existing pod's anti-affinity terms the incoming pod matches, and which of the
    // incoming pod's terms an existing pod matches, depend only on the signatures.
    let (mut existing_anti_memo, mut affinity_memo, mut anti_memo) =
        (Memo::default(), Memo::default(), Memo::default());
    for b in bound {
        if let Some(terms) = b.terms {
            let matched = existing_anti_memo.get(b.terms_signature, || {
                terms
                    .required_anti_affinity
                    .iter()
                    .map(|t| t.matches(pod, ns))
                    .collect()
            });
            for (t, _) in terms
                .required_anti_affinity
                .iter()
                .zip(matched)
                .filter(|(_, m)| **m)
            {
                let key = topo.key(&t.topology_key, nodes);
                bump(&mut s.existing_anti_affinity, topo, key, b.nodes);
            }
        }
        if !s.affinity_terms.is_empty() {
            let all = affinity_memo.get(b.labels_signature, || {
                vec![s.affinity_terms.iter().all(|t| t.matches(b.pod, ns))]
            })[0];
            if all {
                for &key in &s.affinity_keys {
                    any_affinity_match |= bump(&mut s.affinity, topo, key, b.nodes);
                }
            }
        }
        if !s.anti_affinity_terms.is_empty() {
            let matched = anti_memo.get(b.labels_signature, || {
                s.anti_affinity_terms
                    .iter()
                    .map(|t| t.matches(b.pod, ns))
                    .collect()
            });
            for (&key, _) in s
                .anti_affinity_keys
                .iter()
                .zip(matched)
                .filter(|(_, m)| **m)
            {
                bump(&mut s.anti_affinity, topo, key, b.nodes);
            }
        }
    }
    s.first_of_group = !any_affinity_match && s.affinity_terms.iter().all(|t| t.matches(pod, ns));
    s
}

/// Filter, in the order of current upstream's `Filter` (`filtering.go`, v1.36): the pod's
/// required affinity (with the first-pod rule; UnschedulableAndUnresolvable), then the pod's own
/// anti-affinity, then existing pods' anti-affinity (both Unschedulable). Releases before
/// v1.20 checked existing pods' anti-affinity first; the first failing check names the reason.
pub fn filter(s: &State, node: usize) -> Status {
    if !s.affinity_terms.is_empty() {
        let has_keys = s.affinity_domains.iter().all(|d| d[node] != NO_DOMAIN);
        let satisfied = has_keys && s.affinity_keys.iter().all(|&k| s.affinity.get(k, node) > 0);
        if !(satisfied || has_keys && s.first_of_group) {
            return Status::new(
                Code::UnschedulableAndUnresolvable,
                names::INTER_POD_AFFINITY,
                ERR_REASON_AFFINITY,
            );
        }
    }
    if s.anti_affinity_keys
        .iter()
        .any(|&k| s.anti_affinity.get(k, node) > 0)
    {
        return Status::new(
            Code::Unschedulable,
            names::INTER_POD_AFFINITY,
            ERR_REASON_ANTI_AFFINITY,
        );
    }
    // The topology keys existing pods' anti-affinity uses (a few), each looked up once.
    if s.existing_anti_affinity.keys.iter().any(|k| k.at(node) > 0) {
        return Status::new(
            Code::Unschedulable,
            names::INTER_POD_AFFINITY,
            ERR_REASON_EXISTING_ANTI_AFFINITY,
        );
    }
    Status::success()
}

/// PreScore (`scoring.go`): the weights per topology pair `(key, value)` of the existing pods'
/// nodes — plus the weight of each preferred affinity term of the incoming pod an existing pod
/// matches, minus that of each preferred anti-affinity term; and symmetrically the existing
/// pod's preferred terms (and its required affinity, with the hard weight 1) that the incoming
/// pod matches. `hard_weight` is `InterPodAffinityArgs.hardPodAffinityWeight`. `None` when
/// nothing contributes (PreScore's `Skip`).
pub fn pre_score<'p>(
    pod: &Pod,
    bound: impl Iterator<Item = BoundGroup<'p>>,
    ns: &NamespaceLabels,
    topo: &mut Topology,
    all_nodes: &[Node],
    hard_weight: i64,
) -> Option<Counts> {
    let (affinity, anti) = preferred_terms(pod);
    let mut scores = Counts::default();
    let mut add = |t: &Term, weight: i64, nodes: &BTreeMap<usize, i64>| {
        let key = topo.key(&t.topology_key, all_nodes);
        for (&node, &n) in nodes {
            scores.add(topo, key, node, weight * n);
        }
    };
    let (mut incoming_memo, mut existing_memo) = (Memo::default(), Memo::default());
    for b in bound {
        if affinity.is_empty() && anti.is_empty() && b.terms.is_none() {
            continue;
        }
        if !affinity.is_empty() || !anti.is_empty() {
            let matched = incoming_memo.get(b.labels_signature, || {
                affinity
                    .iter()
                    .chain(&anti)
                    .map(|t| t.matches(b.pod, ns))
                    .collect()
            });
            for (i, t) in affinity.iter().chain(&anti).enumerate() {
                if matched[i] {
                    add(
                        t,
                        if i < affinity.len() {
                            t.weight
                        } else {
                            -t.weight
                        },
                        b.nodes,
                    );
                }
            }
        }
        if let Some(terms) = b.terms {
            // Existing pods' required affinity counts with `hardPodAffinityWeight`
            // (`processExistingPod`; not at all when it is 0).
            let hard = terms
                .required_affinity
                .iter()
                .filter(|_| hard_weight > 0)
                .map(|t| (t, hard_weight));
            let all: Vec<(&Term, i64)> = terms
                .preferred_affinity
                .iter()
                .map(|t| (t, t.weight))
                .chain(hard)
                .chain(terms.preferred_anti_affinity.iter().map(|t| (t, -t.weight)))
                .collect();
            let matched = existing_memo.get(b.terms_signature, || {
                all.iter().map(|(t, _)| t.matches(pod, ns)).collect()
            });
            for ((t, w), _) in all.iter().zip(matched).filter(|(_, m)| **m) {
                add(t, *w, b.nodes);
            }
        }
    }
    (!scores.is_empty()).then_some(scores)
}

/// Score: the sum of the topology pairs' weights that the node's labels hold.
pub fn score(scores: &Counts, node: usize) -> i64 {
    scores.keys.iter().map(|k| k.at(node)).sum()
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

/// PreFilter's counts for `schedsim explain`.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AffinityCounts {
    /// Existing pods whose required anti-affinity the incoming pod matches, per topology
    /// pair of theirs (`existingAntiAffinityCounts`): the pod cannot go to these domains.
    pub existing_anti_affinity: Vec<DomainCount>,
    /// Existing pods matching all the pod's required affinity terms, per pair
    /// (`affinityCounts`).
    pub affinity: Vec<DomainCount>,
    /// Existing pods matching one of the pod's required anti-affinity terms, per pair
    /// (`antiAffinityCounts`).
    pub anti_affinity: Vec<DomainCount>,
    /// No existing pod matches the affinity terms, but the pod matches them itself: it may
    /// go anywhere the terms' keys exist.
    pub first_of_group: bool,
    /// Pairs not listed (a report lists the first few of each kind).
    #[serde(default)]
    #[serde(skip_serializing_if = "crate::sched::framework::is_zero")]
    pub omitted: usize,
}

/// PreScore's weight of one topology pair (`topologyScore`): preferred terms of the pod
/// matched by pods there, and of pods there matched by the pod, anti-affinity negative.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DomainScore {
    pub domain: String,
    pub score: i64,
}

/// [`State`]'s counts, for `schedsim explain`.
pub fn describe(s: &State, topo: &Topology, nodes: &[Node]) -> AffinityCounts {
    AffinityCounts {
        existing_anti_affinity: s.existing_anti_affinity.describe(topo, nodes),
        affinity: s.affinity.describe(topo, nodes),
        anti_affinity: s.anti_affinity.describe(topo, nodes),
        first_of_group: s.first_of_group && !s.affinity_terms.is_empty(),
        omitted: 0,
    }
}
