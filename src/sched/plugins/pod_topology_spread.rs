//! PodTopologySpread: Filter (`whenUnsatisfiable: DoNotSchedule`) and Score (`ScheduleAnyway`).
//!
//! Upstream: `pkg/scheduler/framework/plugins/podtopologyspread/{common,filtering,scoring}.go`.
//! A node's domain and whether it is counted (it carries every topology key of the pod's
//! constraints and passes `nodeAffinityPolicy` / `nodeTaintsPolicy`) depend only on the pod's
//! spec, so they are compiled once per distinct spec ([`Spread::compile`]); each cycle only
//! adds the matching bound pods into per-domain counts.
//!
//! A pod without constraints gets the profile's default constraints (`buildDefaultConstraints`):
//! the system defaults (hostname maxSkew 3, zone maxSkew 5, ScheduleAnyway) or the profile's
//! `List`, selecting pods through the Services that select the incoming pod and the ReplicaSet
//! or StatefulSet that controls it (`helper.DefaultSelector`). In a scenario those are the
//! headless Services JobSet creates for TrainJobs (`jobset.sigs.k8s.io/jobset-name`) and the
//! ReplicaSets and StatefulSets of `apps/v1` objects, so a TrainJob's and a Deployment's pods
//! are spread by default; other pods (a Job's, a bare pod) are not.

use std::collections::BTreeMap;

/// Looked up per pod and label: foldhash, fixed seed (never iterated into the output).
type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;
use std::sync::Arc;

use k8s_openapi::api::core::v1::TopologySpreadConstraint;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

use crate::features::FeatureGates;
use crate::model::{Node, Pod};
use crate::sched::framework::{Code, Status, names};
use crate::sched::plugins::inter_pod_affinity::{NO_DOMAIN, Topology, selector_matches};
use crate::sched::plugins::{node_affinity, taint_toleration};

pub const ERR_REASON_CONSTRAINTS_NOT_MATCH: &str =
    "node(s) didn't match pod topology spread constraints";
pub const ERR_REASON_NODE_LABEL_NOT_MATCH: &str =
    "node(s) didn't match pod topology spread constraints (missing required label)";

const HOSTNAME: &str = "kubernetes.io/hostname";

/// One constraint (`topologySpreadConstraint`) with its nodes resolved.
#[derive(Debug, Clone)]
struct Constraint {
    max_skew: i64,
    min_domains: i64,
    namespace: String,
    /// `None`: a nil `labelSelector`, which selects nothing.
    selector: Option<LabelSelector>,
    hostname: bool,
    /// The topology key.
    key: String,
    /// Per node: the index of its value for the topology key, if it has the key.
    /// Each node's domain (shared with every spec of the key), [`NO_DOMAIN`] without the
    /// label.
    domain_of_node: Arc<[u32]>,
    /// Per node: counted for this constraint (has every key of the set, passes the policies).
    counted: Arc<[bool]>,
    domains: usize,
    /// Per domain: a counted node carries it (a key of `TpValueToMatchNum`).
    counted_domains: Arc<[bool]>,
    /// How many domains a counted node carries.
    counted_domain_total: usize,
}

impl Constraint {
    /// The node's domain, if it has the topology label.
    fn domain(&self, node: usize) -> Option<u32> {
        Some(self.domain_of_node[node]).filter(|&d| d != NO_DOMAIN)
    }

    /// `countPodsMatchSelector`: same namespace, selector matches (no pod here is terminating).
    /// Counts `pod`: a pod of the namespace its selector matches, unless it is terminating
    /// (`countPodsMatchSelector` bypasses terminating pods, kubernetes#87621).
    fn selects(&self, pod: &Pod) -> bool {
        !pod.is_terminating() && self.matches(pod)
    }

    /// The namespace and the selector match `pod`, whether or not it is terminating.
    fn matches(&self, pod: &Pod) -> bool {
        pod.namespace == self.namespace
            && self
                .selector
                .as_ref()
                .is_some_and(|s| selector_matches(s, &pod.labels))
    }
}

/// The nodes a set of constraints counts, which depend on the topology keys, the inclusion
/// policies and the pod's node affinity and tolerations, not on its selectors: shared by
/// every spec that has the same (one per job would otherwise hold several vectors of nodes
/// each, and compute them again).
#[derive(Debug, Default)]
pub struct CountedNodes(std::collections::HashMap<String, Arc<NodeSets>>);

#[derive(Debug)]
struct NodeSets {
    /// Per node: it carries every constraint's topology key.
    has_all_keys: Arc<[bool]>,
    /// Per constraint: per node, counted; per domain, carried by a counted node.
    counted: Vec<Arc<[bool]>>,
    counted_domains: Vec<Arc<[bool]>>,
}

impl CountedNodes {
    fn get(
        &mut self,
        pod: &Pod,
        chosen: &[&TopologySpreadConstraint],
        key_domains: &[(Arc<[u32]>, usize)],
        nodes: &[Node],
        gates: &FeatureGates,
    ) -> Arc<NodeSets> {
        let honor_affinity =
            |c: &TopologySpreadConstraint| c.node_affinity_policy.as_deref() != Some("Ignore");
        let honor_taints =
            |c: &TopologySpreadConstraint| c.node_taints_policy.as_deref() == Some("Honor");
        let (any_affinity, any_taints) = (
            chosen.iter().any(|c| honor_affinity(c)),
            chosen.iter().any(|c| honor_taints(c)),
        );
        let policies: Vec<(&str, bool, bool)> = (chosen.iter())
            .map(|c| (c.topology_key.as_str(), honor_affinity(c), honor_taints(c)))
            .collect();
        let key = serde_json::to_string(&(
            policies,
            any_affinity.then(|| {
                let node_affinity = pod.affinity.as_ref().and_then(|a| a.node_affinity.as_ref());
                (&pod.node_selector, node_affinity)
            }),
            any_taints.then_some(&pod.tolerations),
        ))
        .expect("pod fields serialize");
        if let Some(sets) = self.0.get(&key) {
            return Arc::clone(sets);
        }
        let has_all_keys: Arc<[bool]> = (0..nodes.len())
            .map(|i| key_domains.iter().all(|(d, _)| d[i] != NO_DOMAIN))
            .collect();
        // Node affinity and taints only matter to the constraints that honour them.
        let affinity_ok: Vec<bool> = match any_affinity {
            true => (nodes.iter())
                .map(|n| node_affinity::required_matches(pod, n))
                .collect(),
            false => Vec::new(),
        };
        let taints_ok: Vec<bool> = match any_taints {
            true => (nodes.iter())
                .map(|n| {
                    taint_toleration::find_untolerated(&n.taints, &pod.tolerations, gates).is_none()
                })
                .collect(),
            false => Vec::new(),
        };
        let (mut counted, mut counted_domains) = (Vec::new(), Vec::new());
        for (c, (domain_of_node, domains)) in chosen.iter().zip(key_domains) {
            let nodes_counted: Arc<[bool]> = (0..nodes.len())
                .map(|i| {
                    has_all_keys[i]
                        && (!honor_affinity(c) || affinity_ok[i])
                        && (!honor_taints(c) || taints_ok[i])
                })
                .collect();
            let mut domains_counted = vec![false; *domains];
            for (&d, counted) in domain_of_node.iter().zip(nodes_counted.iter()) {
                if d != NO_DOMAIN && *counted {
                    domains_counted[d as usize] = true;
                }
            }
            counted.push(nodes_counted);
            counted_domains.push(domains_counted.into());
        }
        let sets = Arc::new(NodeSets {
            has_all_keys,
            counted,
            counted_domains,
        });
        self.0.insert(key, Arc::clone(&sets));
        sets
    }
}

/// A pod's constraints of one `whenUnsatisfiable` kind, compiled against the cluster's nodes.
#[derive(Debug, Clone, Default)]
pub struct Spread {
    constraints: Vec<Constraint>,
    /// Per node: it carries every constraint's topology key (`nodeLabelsMatchSpreadConstraints`).
    has_all_keys: Arc<[bool]>,
    /// Score ignores nodes without every key — except for the system default constraints
    /// (`requireAllTopologies` in `scoring.go`).
    require_all_topologies: bool,
    /// The incoming pod matches each constraint's selector (`selfMatchNum`).
    self_match: Vec<bool>,
}

/// Bound pods that look alike to this plugin: one of them and how many are on each node.
pub struct BoundGroup<'p> {
    pub pod: &'p Pod,
    pub nodes: &'p BTreeMap<usize, i64>,
}

impl Spread {
    /// `filterTopologySpreadConstraints` for `action`, then each node's domain and whether it
    /// is counted. `matchLabelKeys` add the pod's own values to the selector; `minDomains`
    /// defaults to 1, `nodeAffinityPolicy` to Honor, `nodeTaintsPolicy` to Ignore.
    ///
    /// `constraints` are the pod's own or, when it has none, the profile's defaults
    /// ([`default_constraints`]); `system_defaults` says they are the system defaults.
    #[allow(clippy::too_many_arguments)]
    pub fn compile(
        pod: &Pod,
        constraints: &[TopologySpreadConstraint],
        system_defaults: bool,
        action: &str,
        nodes: &[Node],
        gates: &FeatureGates,
        topology: &mut Topology,
        counted_nodes: &mut CountedNodes,
    ) -> Spread {
        let chosen: Vec<&TopologySpreadConstraint> = constraints
            .iter()
            .filter(|c| c.when_unsatisfiable == action)
            .collect();
        if chosen.is_empty() {
            return Spread::default();
        }
        let key_domains: Vec<(Arc<[u32]>, usize)> = (chosen.iter())
            .map(|c| topology.domains(&c.topology_key, nodes))
            .collect();
        let sets = counted_nodes.get(pod, &chosen, &key_domains, nodes, gates);
        let constraints: Vec<Constraint> = (chosen.iter().zip(key_domains))
            .zip(sets.counted.iter().zip(&sets.counted_domains))
            .map(
                |((c, (domain_of_node, domains)), (counted, counted_domains))| Constraint {
                    counted_domain_total: counted_domains.iter().filter(|p| **p).count(),
                    counted_domains: Arc::clone(counted_domains),
                    max_skew: i64::from(c.max_skew),
                    min_domains: c.min_domains.map_or(1, i64::from),
                    namespace: pod.namespace.clone(),
                    selector: selector_with_label_keys(pod, c),
                    hostname: c.topology_key == HOSTNAME,
                    key: c.topology_key.clone(),
                    domain_of_node,
                    counted: Arc::clone(counted),
                    domains,
                },
            )
            .collect();
        let self_match = constraints.iter().map(|c| c.selects(pod)).collect();
        Spread {
            constraints,
            has_all_keys: Arc::clone(&sets.has_all_keys),
            require_all_topologies: !system_defaults,
            self_match,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.constraints.is_empty()
    }
}

/// A label `(key, value)` in the `matchLabels` of every constraint of `spreads` that selects
/// anything: no pod without it is counted, so bound pods can be looked up by it.
pub fn required_label<'s>(
    spreads: impl IntoIterator<Item = &'s Spread>,
) -> Option<(String, String)> {
    let mut selectors = (spreads.into_iter())
        .flat_map(|s| &s.constraints)
        .filter_map(|c| c.selector.as_ref());
    let first = selectors.next()?;
    let rest: Vec<&LabelSelector> = selectors.collect();
    (first.match_labels.iter().flatten())
        .find(|(k, v)| {
            (rest.iter()).all(|s| s.match_labels.as_ref().and_then(|m| m.get(*k)) == Some(*v))
        })
        .map(|(k, v)| (k.clone(), v.clone()))
}

/// `v1.DefaultPodTopologySpread`-era system defaults (`podtopologyspread/plugin.go`,
/// `systemDefaultConstraints`).
fn system_default_constraints() -> Vec<TopologySpreadConstraint> {
    [(HOSTNAME, 3), ("topology.kubernetes.io/zone", 5)]
        .into_iter()
        .map(|(key, skew)| TopologySpreadConstraint {
            topology_key: key.into(),
            max_skew: skew,
            when_unsatisfiable: "ScheduleAnyway".into(),
            ..Default::default()
        })
        .collect()
}

/// A Service's label selector, in its namespace (what `helper.DefaultSelector` merges).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceSelector {
    pub namespace: String,
    pub selector: BTreeMap<String, String>,
}

/// An `apps/v1` ReplicaSet's or StatefulSet's selector: `helper.DefaultSelector` adds its
/// requirements for a pod whose controller reference names it.
#[derive(Debug, Clone, PartialEq)]
pub struct ControllerSelector {
    pub namespace: String,
    /// `ReplicaSet` or `StatefulSet`.
    pub kind: String,
    pub name: String,
    pub selector: LabelSelector,
}

/// The controllers whose selectors `helper.DefaultSelector` reads, with their group/version
/// (`rsKind`, `ssKind`; `rcKind`, the core ReplicationController, is not read by schedsim).
const DEFAULT_SELECTOR_CONTROLLERS: [(&str, &str); 2] =
    [("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")];

/// Services by (namespace, one of their selector's pairs), so finding the Services that select
/// a pod costs a lookup per pod label, not a scan of every Service; and the ReplicaSets' and
/// StatefulSets' selectors by (namespace, kind, name).
#[derive(Debug, Default)]
pub struct Services {
    services: Vec<ServiceSelector>,
    /// Namespace → key → value → the Services whose selector has that pair first.
    by_pair: HashMap<String, HashMap<String, HashMap<String, Vec<usize>>>>,
    controllers: HashMap<(String, String, String), LabelSelector>,
}

impl Services {
    pub fn new(services: &[ServiceSelector], controllers: &[ControllerSelector]) -> Self {
        let mut by_pair: HashMap<String, HashMap<String, HashMap<String, Vec<usize>>>> =
            HashMap::default();
        for (i, s) in services.iter().enumerate() {
            // A Service with an empty selector selects no pod (`GetPodServices`).
            if let Some((k, v)) = s.selector.iter().next() {
                (by_pair.entry(s.namespace.clone()).or_default())
                    .entry(k.clone())
                    .or_default()
                    .entry(v.clone())
                    .or_default()
                    .push(i);
            }
        }
        let controllers = (controllers.iter())
            .map(|c| {
                let key = (c.namespace.clone(), c.kind.clone(), c.name.clone());
                (key, c.selector.clone())
            })
            .collect();
        Services {
            services: services.to_vec(),
            by_pair,
            controllers,
        }
    }

    /// `helper.DefaultSelector`: the merged selectors of the Services selecting `pod`, then
    /// the requirements of the ReplicaSet or StatefulSet its controller reference names.
    fn selector_for(&self, pod: &Pod) -> LabelSelector {
        let mut labels = BTreeMap::new();
        if let Some(by_key) = self.by_pair.get(&pod.namespace) {
            let mut matched: Vec<usize> = pod
                .labels
                .iter()
                .filter_map(|(k, v)| by_key.get(k)?.get(v))
                .flatten()
                .copied()
                .filter(|&i| {
                    self.services[i]
                        .selector
                        .iter()
                        .all(|(k, v)| pod.labels.get(k) == Some(v))
                })
                .collect();
            matched.sort_unstable();
            matched.dedup();
            for i in matched {
                labels.extend(self.services[i].selector.clone());
            }
        }
        let mut requirements = Vec::new();
        let owner = pod.controller.as_deref().filter(|c| {
            DEFAULT_SELECTOR_CONTROLLERS.contains(&(c.api_version.as_str(), c.kind.as_str()))
        });
        let key = owner.map(|c| (pod.namespace.clone(), c.kind.clone(), c.name.clone()));
        if let Some(selector) = key.and_then(|k| self.controllers.get(&k)) {
            // `selector.Add(requirements...)`: its labels become `In` requirements.
            for (k, v) in selector.match_labels.iter().flatten() {
                requirements.push(LabelSelectorRequirement {
                    key: k.clone(),
                    operator: "In".into(),
                    values: Some(vec![v.clone()]),
                });
            }
            requirements.extend(selector.match_expressions.iter().flatten().cloned());
        }
        LabelSelector {
            match_labels: (!labels.is_empty()).then_some(labels),
            match_expressions: (!requirements.is_empty()).then_some(requirements),
        }
    }
}

/// `buildDefaultConstraints`: for a pod without constraints, the profile's default constraints
/// (`list`; `None` = the system defaults) with the selector of the Services and controller
/// selecting it. `None` when nothing selects the pod (the empty selector builds no
/// constraint).
pub fn default_constraints(
    pod: &Pod,
    list: Option<&[TopologySpreadConstraint]>,
    services: &Services,
) -> Option<Vec<TopologySpreadConstraint>> {
    let selector = services.selector_for(pod);
    if selector.match_labels.is_none() && selector.match_expressions.is_none() {
        return None;
    }
    let mut constraints = list.map_or_else(system_default_constraints, <[_]>::to_vec);
    if constraints.is_empty() {
        return None;
    }
    for c in &mut constraints {
        c.label_selector = Some(selector.clone());
    }
    Some(constraints)
}

/// What a compiled [`Spread`] takes from the pod's labels: each constraint's selector with
/// `matchLabelKeys` merged in, and whether the pod matches it. Pods alike in this (and in the
/// rest of their spec) share one compiled spread, whatever their other labels.
pub fn label_dependence(
    pod: &Pod,
    constraints: &[TopologySpreadConstraint],
) -> (Vec<Option<LabelSelector>>, Vec<bool>) {
    let selectors: Vec<Option<LabelSelector>> = constraints
        .iter()
        .map(|c| selector_with_label_keys(pod, c))
        .collect();
    let matches = selectors
        .iter()
        .map(|s| s.as_ref().is_some_and(|s| selector_matches(s, &pod.labels)))
        .collect();
    (selectors, matches)
}

/// The constraint's selector with `matchLabelKeys` merged in as `key In (pod's value)`.
fn selector_with_label_keys(pod: &Pod, c: &TopologySpreadConstraint) -> Option<LabelSelector> {
    let mut selector = c.label_selector.clone()?;
    for key in c.match_label_keys.iter().flatten() {
        if let Some(v) = pod.labels.get(key) {
            selector
                .match_labels
                .get_or_insert_with(Default::default)
                .insert(key.clone(), v.clone());
        }
    }
    Some(selector)
}

/// The bound pods a spread's constraints select, counted per constraint: per domain on
/// counted nodes (PreFilter's `TpValueToMatchNum`, Score's non-hostname counts) and, for
/// hostname constraints, per node. Kept up to date at every bind, so a cycle reads counts
/// instead of walking every bound pod.
#[derive(Debug, Clone)]
pub struct Tally {
    domain: Vec<Counts>,
    node: Vec<Counts>,
}

/// Pods counted per domain or node: a sorted list while few are counted (most specs select
/// one job's pods, and a vector per node for each made tallies most of the memory at 5,000
/// nodes), a vector past that.
#[derive(Debug, Clone)]
enum Counts {
    Few {
        size: usize,
        counts: Vec<(u32, i64)>,
    },
    Many(Vec<i64>),
}

/// Past this many counted domains a [`Counts`] becomes a vector.
const FEW: usize = 32;

impl Counts {
    fn new(size: usize) -> Counts {
        Counts::Few {
            size,
            counts: Vec::new(),
        }
    }

    fn get(&self, i: usize) -> i64 {
        match self {
            Counts::Few { counts, .. } => counts
                .binary_search_by_key(&(i as u32), |&(d, _)| d)
                .map_or(0, |at| counts[at].1),
            Counts::Many(v) => v[i],
        }
    }

    fn add(&mut self, i: usize, n: i64) {
        match self {
            Counts::Few { size, counts } => {
                match counts.binary_search_by_key(&(i as u32), |&(d, _)| d) {
                    Ok(at) => counts[at].1 += n,
                    Err(at) => counts.insert(at, (i as u32, n)),
                }
                if counts.len() > FEW {
                    let mut v = vec![0; *size];
                    for &(d, n) in counts.iter() {
                        v[d as usize] = n;
                    }
                    *self = Counts::Many(v);
                }
            }
            Counts::Many(v) => v[i] += n,
        }
    }

    /// The domains with a count other than 0, and their counts.
    fn nonzero(&self) -> Vec<(usize, i64)> {
        match self {
            Counts::Few { counts, .. } => (counts.iter())
                .filter(|(_, n)| *n != 0)
                .map(|&(d, n)| (d as usize, n))
                .collect(),
            Counts::Many(v) => (v.iter().enumerate())
                .filter(|(_, n)| **n != 0)
                .map(|(d, &n)| (d, n))
                .collect(),
        }
    }

    /// The least count over the domains marked in `counted` (`total` of them), 0 for none.
    fn min_counted(&self, counted: &[bool], total: usize) -> i64 {
        match self {
            Counts::Many(v) => (v.iter().zip(counted))
                .filter(|(_, p)| **p)
                .map(|(n, _)| *n)
                .min()
                .unwrap_or(0),
            Counts::Few { counts, .. } => {
                let present = counts.iter().filter(|(d, _)| counted[*d as usize]);
                let least = present.clone().map(|(_, n)| *n).min();
                match present.count() < total {
                    true => least.map_or(0, |m| m.min(0)),
                    false => least.unwrap_or(0),
                }
            }
        }
    }
}

impl Tally {
    pub fn new(spread: &Spread, nodes: usize) -> Tally {
        Tally {
            domain: (spread.constraints.iter())
                .map(|c| Counts::new(c.domains))
                .collect(),
            node: (spread.constraints.iter())
                .map(|c| Counts::new(if c.hostname { nodes } else { 0 }))
                .collect(),
        }
    }

    /// Counts `n` pods like `pod` bound on `node` (negative: unbound).
    pub fn add(&mut self, spread: &Spread, pod: &Pod, node: usize, n: i64) {
        self.add_matching(spread, pod, node, n, Constraint::selects);
    }

    /// Preemption's `RemovePod` of a terminating pod from `node`: `updateWithPod` subtracts it
    /// although the counts never held it (it checks the selector, not the deletion).
    pub fn remove_terminating(&mut self, spread: &Spread, pod: &Pod, node: usize) {
        self.add_matching(spread, pod, node, -1, Constraint::matches);
    }

    fn add_matching(
        &mut self,
        spread: &Spread,
        pod: &Pod,
        node: usize,
        n: i64,
        counts: fn(&Constraint, &Pod) -> bool,
    ) {
        for (i, c) in spread.constraints.iter().enumerate() {
            if !counts(c, pod) {
                continue;
            }
            if let (Some(d), true) = (c.domain(node), c.counted[node]) {
                self.domain[i].add(d as usize, n);
            }
            if c.hostname {
                self.node[i].add(node, n);
            }
        }
    }

    /// A tally of the bound pods, grouped.
    pub fn of<'p>(
        spread: &Spread,
        nodes: usize,
        bound: impl Iterator<Item = BoundGroup<'p>>,
    ) -> Tally {
        let mut t = Tally::new(spread, nodes);
        for g in bound {
            if spread.constraints.iter().any(|c| c.selects(g.pod)) {
                for (&node, &n) in g.nodes {
                    t.add(spread, g.pod, node, n);
                }
            }
        }
        t
    }
}

/// PreFilter's state: per constraint, the matching pods per domain and the global minimum.
#[derive(Debug)]
pub struct FilterState {
    spread: Arc<Spread>,
    counts: Vec<Counts>,
    min_match: Vec<i64>,
}

/// PreFilter (`calPreFilterState`): counts matching pods on counted nodes per domain; a
/// domain exists when a counted node carries it, even with no pods. Fewer domains than
/// `minDomains` make the global minimum 0.
pub fn pre_filter(spread: &Arc<Spread>, tally: &Tally) -> FilterState {
    let counts = tally.domain.clone();
    let min_match = spread
        .constraints
        .iter()
        .zip(&counts)
        .map(|(c, counts)| {
            if (c.counted_domain_total as i64) < c.min_domains {
                return 0;
            }
            counts.min_counted(&c.counted_domains, c.counted_domain_total)
        })
        .collect();
    FilterState {
        spread: Arc::clone(spread),
        counts,
        min_match,
    }
}

/// Filter: `matchNum + selfMatchNum - minMatchNum <= maxSkew` for every constraint.
pub fn filter(s: &FilterState, node: usize) -> Status {
    for (i, c) in s.spread.constraints.iter().enumerate() {
        let Some(d) = c.domain(node) else {
            return Status::new(
                Code::UnschedulableAndUnresolvable,
                names::POD_TOPOLOGY_SPREAD,
                ERR_REASON_NODE_LABEL_NOT_MATCH,
            );
        };
        let skew = s.counts[i].get(d as usize) + i64::from(s.spread.self_match[i]) - s.min_match[i];
        if skew > c.max_skew {
            return Status::new(
                Code::Unschedulable,
                names::POD_TOPOLOGY_SPREAD,
                ERR_REASON_CONSTRAINTS_NOT_MATCH,
            );
        }
    }
    Status::success()
}

/// PreScore, Score and NormalizeScore over the feasible nodes, in their order.
///
/// Feasible nodes without every topology key are ignored (score 0). A non-hostname domain is
/// scored only if a feasible node carries it; its count is the matching pods on counted nodes
/// in it. Hostname counts are the node's own matching pods. A node's raw score is
/// `Σ count·ln(domains+2) + (maxSkew−1)`, rounded; then `100·(max+min−s)/max`.
pub fn score(spread: &Spread, feasible: &[usize], tally: &Tally) -> Vec<i64> {
    match score_by_class(spread, feasible, tally) {
        Some(scores) => {
            debug_assert_eq!(scores, score_each(spread, feasible, tally));
            scores
        }
        None => score_each(spread, feasible, tally),
    }
}

/// [`score`] for at most one hostname and one other constraint (the system defaults, and most
/// pods' own), in one pass over the nodes. A node where the hostname constraint counts no pod
/// scores what every node of its domain (and hostname label) scores: the raw and normalized
/// scores are computed once per such class, and only the few nodes holding counted pods on
/// their own — the same arithmetic, in the same order, as [`score_each`].
fn score_by_class(spread: &Spread, feasible: &[usize], tally: &Tally) -> Option<Vec<i64>> {
    let (mut host, mut other) = (None, None);
    for (i, c) in spread.constraints.iter().enumerate() {
        let slot = if c.hostname { &mut host } else { &mut other };
        if slot.replace(i).is_some() {
            return None;
        }
    }
    let ignored = |node: usize| spread.require_all_topologies && !spread.has_all_keys[node];
    let domains = other.map_or(0, |i| spread.constraints[i].domains);
    // Class `d * 2 + h`: domain `d` of the other constraint (`domains` without its label), `h`
    // the node carries the hostname label.
    const IGNORED: u32 = u32::MAX;
    let mut used = vec![false; (domains + 1) * 2];
    let mut carried = vec![false; domains + 1];
    let mut own: Vec<(usize, bool, i64)> = Vec::new();
    let mut cursor = host.map(|i| Cursor::new(&tally.node[i]));
    let mut ids: Vec<u32> = Vec::with_capacity(feasible.len());
    let mut live = 0;
    for &node in feasible {
        if ignored(node) {
            ids.push(IGNORED);
            continue;
        }
        live += 1;
        let has_host = host.is_some_and(|i| spread.constraints[i].domain(node).is_some());
        let d = (other.and_then(|i| spread.constraints[i].domain(node)))
            .map_or(domains, |d| d as usize);
        let count = match (&mut cursor, has_host) {
            (Some(c), true) => c.get(node),
            _ => 0,
        };
        carried[d] = true;
        let class = d * 2 + usize::from(has_host);
        if count == 0 {
            used[class] = true;
            ids.push(class as u32);
        } else {
            ids.push((used.len() + own.len()) as u32);
            own.push((d, has_host, count));
        }
    }
    // The other constraint's weight counts the domains live feasible nodes carry.
    let size = carried[..domains].iter().filter(|c| **c).count();
    let raw = |d: usize, has_host: bool, count: i64| {
        let mut score = 0.0;
        for (i, c) in spread.constraints.iter().enumerate() {
            let k = (c.max_skew - 1) as f64;
            if c.hostname {
                if has_host {
                    score += count as f64 * ((live + 2) as f64).ln() + k;
                }
            } else if d < domains {
                score += tally.domain[i].get(d) as f64 * ((size + 2) as f64).ln() + k;
            }
        }
        round(score)
    };
    let mut raws: Vec<Option<i64>> = (0..used.len())
        .map(|class| used[class].then(|| raw(class / 2, class % 2 == 1, 0)))
        .collect();
    raws.extend(own.iter().map(|&(d, h, count)| Some(raw(d, h, count))));
    let scored = raws.iter().flatten().copied();
    let min = scored.clone().min().unwrap_or(i64::MAX);
    let max = scored.max().unwrap_or(0).max(0);
    let normalized: Vec<i64> = (raws.iter())
        .map(|r| match *r {
            None => 0,
            Some(_) if max == 0 => 100,
            Some(s) => 100 * (max + min - s) / max,
        })
        .collect();
    Some(
        (ids.iter())
            .map(|&id| match id {
                IGNORED => 0,
                id => normalized[id as usize],
            })
            .collect(),
    )
}

/// [`score`] node by node, for any constraints.
fn score_each(spread: &Spread, feasible: &[usize], tally: &Tally) -> Vec<i64> {
    normalize_raw(&raw_each(spread, feasible, tally))
}

/// Score's raw scores over the feasible nodes (for `schedsim explain`): `None` for a node
/// without every topology key, which scores 0.
pub fn raw_scores(spread: &Spread, feasible: &[usize], tally: &Tally) -> Vec<Option<i64>> {
    (raw_each(spread, feasible, tally).into_iter())
        .map(|s| (s != IGNORED).then_some(s))
        .collect()
}

/// A raw score's stand-in for a node Score ignores.
const IGNORED: i64 = i64::MIN;

/// Score: per feasible node, `Σ count·ln(domains+2) + (maxSkew−1)` rounded, or [`IGNORED`].
fn raw_each(spread: &Spread, feasible: &[usize], tally: &Tally) -> Vec<i64> {
    let ignored = |node: usize| spread.require_all_topologies && !spread.has_all_keys[node];
    let live = feasible.iter().filter(|&&n| !ignored(n)).count();
    // Per constraint, a node's term `count·weight + (maxSkew−1)`: read per domain from a table
    // (every domain a live feasible node carries is scored), or per node for hostname.
    let terms: Vec<Term> = (spread.constraints.iter().enumerate())
        .map(|(i, c)| {
            let k = (c.max_skew - 1) as f64;
            if c.hostname {
                let weight = ((live + 2) as f64).ln();
                return Term::PerNode(Cursor::new(&tally.node[i]), weight, k);
            }
            let mut scored = vec![false; c.domains];
            let mut size = 0;
            for &n in feasible.iter().filter(|&&n| !ignored(n)) {
                if let Some(d) = c.domain(n)
                    && !scored[d as usize]
                {
                    scored[d as usize] = true;
                    size += 1;
                }
            }
            let weight = ((size + 2) as f64).ln();
            let counts = &tally.domain[i];
            let table = (0..c.domains)
                .map(|d| match scored[d] {
                    true => counts.get(d) as f64 * weight + k,
                    false => 0.0,
                })
                .collect();
            Term::PerDomain(table)
        })
        .collect();
    let mut terms = terms;
    let mut raw: Vec<i64> = Vec::with_capacity(feasible.len());
    for &node in feasible {
        if ignored(node) {
            raw.push(IGNORED);
            continue;
        }
        let mut score = 0.0;
        for (c, term) in spread.constraints.iter().zip(&mut terms) {
            let Some(d) = c.domain(node) else {
                continue;
            };
            score += match term {
                Term::PerDomain(table) => table[d as usize],
                Term::PerNode(counts, weight, k) => counts.get(node) as f64 * *weight + *k,
            };
        }
        raw.push(round(score));
    }
    raw
}

/// NormalizeScore: `100·(max+min−s)/max` (100 everywhere when the maximum is 0), 0 for an
/// ignored node.
fn normalize_raw(raw: &[i64]) -> Vec<i64> {
    let scored = raw.iter().copied().filter(|&s| s != IGNORED);
    let min = scored.clone().min().unwrap_or(i64::MAX);
    let max = scored.max().unwrap_or(0).max(0);
    raw.iter()
        .map(|&s| match s {
            IGNORED => 0,
            _ if max == 0 => 100,
            s => 100 * (max + min - s) / max,
        })
        .collect()
}

/// `math.Round` as an `int64` conversion: half away from zero, saturating, NaN to 0 — what
/// `f64::round() as i64` gives, without the libm call it makes on baseline x86-64 (a fifth
/// of Score's time at 5,000 nodes).
fn round(x: f64) -> i64 {
    let whole = x as i64;
    let frac = x - whole as f64;
    if frac >= 0.5 {
        whole.saturating_add(1)
    } else if frac <= -0.5 {
        whole.saturating_sub(1)
    } else {
        whole
    }
}

/// One constraint's share of a node's raw score (see [`score`]).
enum Term<'t> {
    /// Per domain.
    PerDomain(Vec<f64>),
    /// Hostname: the node's count, the weight and `maxSkew − 1`.
    PerNode(Cursor<'t>, f64, f64),
}

/// Reads a [`Counts`] at ascending indices (feasible nodes come in node order) in one pass
/// over its sorted list instead of a search per index.
struct Cursor<'c> {
    counts: &'c Counts,
    at: usize,
    last: usize,
}

impl<'c> Cursor<'c> {
    fn new(counts: &'c Counts) -> Self {
        Cursor {
            counts,
            at: 0,
            last: 0,
        }
    }

    fn get(&mut self, i: usize) -> i64 {
        match self.counts {
            Counts::Many(v) => v[i],
            Counts::Few { counts, .. } => {
                if i < self.last {
                    self.at = 0;
                }
                self.last = i;
                while self.at < counts.len() && (counts[self.at].0 as usize) < i {
                    self.at += 1;
                }
                match counts.get(self.at) {
                    Some(&(d, n)) if d as usize == i => n,
                    _ => 0,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Counts;

    /// The list form and the vector form count alike, before and after the switch, with
    /// counts that go back to 0 and domains never counted.
    /// The libm-free rounding agrees with `f64::round` as Score uses it.
    #[test]
    fn round_agrees_with_f64_round() {
        let mut cases = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            -0.5,
            -2.5,
            0.49999999999999994,
            4503599627370495.5,
            4503599627370497.0,
            9.3e18,
            -9.3e18,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        let mut x = 0.1f64;
        for _ in 0..10_000 {
            x = (x * 1.37 + 0.11) % 1000.0;
            cases.push(x);
            cases.push(x.floor() + 0.5);
            cases.push(-x);
        }
        for c in cases {
            assert_eq!(super::round(c), c.round() as i64, "{c}");
        }
    }

    #[test]
    fn few_and_many_counts_agree() {
        let size = 200;
        let counted: Vec<bool> = (0..size).map(|d| d % 3 != 0).collect();
        let total = counted.iter().filter(|p| **p).count();
        let mut few = Counts::new(size);
        let mut many = Counts::Many(vec![0; size]);
        let mut was_few_at_least_once_past_start = false;
        for step in 0..400usize {
            let d = (step * 37) % size;
            let n = if step % 5 == 4 { -1 } else { 1 };
            let n = if many.get(d) + n < 0 { 1 } else { n };
            few.add(d, n);
            many.add(d, n);
            was_few_at_least_once_past_start |= step > 0 && matches!(few, Counts::Few { .. });
            for i in 0..size {
                assert_eq!(few.get(i), many.get(i), "domain {i} after step {step}");
            }
            assert_eq!(
                few.min_counted(&counted, total),
                many.min_counted(&counted, total),
                "after step {step}"
            );
        }
        assert!(was_few_at_least_once_past_start);
        assert!(matches!(few, Counts::Many(_)), "switches to a vector");
        // All counted domains non-zero: the minimum is a real count, not 0.
        let mut full = Counts::new(4);
        for d in 0..4 {
            full.add(d, 2 + d as i64);
        }
        assert_eq!(full.min_counted(&[true, true, false, true], 3), 2);
        assert_eq!(Counts::new(4).min_counted(&[false; 4], 0), 0);
    }
}

/// PreFilter's counts for `schedsim explain`: per `DoNotSchedule` constraint, the matching
/// pods per domain on counted nodes and the global minimum the skew is measured from.
pub fn describe_filter(s: &FilterState, nodes: &[Node]) -> Vec<SpreadCounts> {
    describe(&s.spread, &s.counts, Some(&s.min_match), nodes)
}

/// PreScore's counts for `schedsim explain`: per `ScheduleAnyway` constraint, the matching
/// pods per domain (per node for the hostname key), before Score keeps the domains of
/// feasible nodes.
pub fn describe_score(spread: &Spread, tally: &Tally, nodes: &[Node]) -> Vec<SpreadCounts> {
    let counts: Vec<Counts> = (spread.constraints.iter().enumerate())
        .map(|(i, c)| match c.hostname {
            true => tally.node[i].clone(),
            false => tally.domain[i].clone(),
        })
        .collect();
    describe(spread, &counts, None, nodes)
}

fn describe(
    spread: &Spread,
    counts: &[Counts],
    min: Option<&[i64]>,
    nodes: &[Node],
) -> Vec<SpreadCounts> {
    (spread.constraints.iter().enumerate())
        .map(|(i, c)| {
            let value = |d: usize| match c.hostname && min.is_none() {
                // Score's hostname counts are per node.
                true => nodes[d].name.clone(),
                false => crate::sched::plugins::inter_pod_affinity::domain_value(
                    &c.domain_of_node,
                    d as u32,
                    &c.key,
                    nodes,
                ),
            };
            let mut pods: Vec<DomainCount> = (counts[i].nonzero().into_iter())
                .map(|(d, n)| DomainCount {
                    domain: value(d),
                    pods: n,
                })
                .collect();
            pods.sort_by(|a, b| b.pods.cmp(&a.pods).then_with(|| a.domain.cmp(&b.domain)));
            SpreadCounts {
                topology_key: c.key.clone(),
                max_skew: c.max_skew,
                min_domains: c.min_domains,
                self_match: spread.self_match[i],
                domains: c.counted_domain_total,
                global_min: min.map(|m| m[i]),
                pods,
                omitted: 0,
            }
        })
        .collect()
}

/// One constraint's counts, as PreFilter or PreScore left them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SpreadCounts {
    pub topology_key: String,
    pub max_skew: i64,
    pub min_domains: i64,
    /// The incoming pod matches the constraint's selector (it counts itself).
    pub self_match: bool,
    /// Domains a counted node carries.
    pub domains: usize,
    /// The least count over those domains (Filter only; 0 with fewer than `minDomains`).
    #[serde(default)]
    #[serde(skip_serializing_if = "Option::is_none")]
    pub global_min: Option<i64>,
    /// Matching pods per domain, most first; domains without any are left out.
    pub pods: Vec<DomainCount>,
    /// Domains with pods not listed (a report lists the first few).
    #[serde(default)]
    #[serde(skip_serializing_if = "crate::sched::framework::is_zero")]
    pub omitted: usize,
}

/// Pods counted in one topology domain (`key=value` for InterPodAffinity, the value here).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DomainCount {
    pub domain: String,
    pub pods: i64,
}
