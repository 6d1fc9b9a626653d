//! The scheduling loop: queue → PreEnqueue → PreFilter → Filter → Score → select → bind,
//! one pod at a time, in arrival order (`pkg/scheduler/schedule_one.go`, `algorithm.go`).
//!
//! Speed comes from structure, not from skipping work: every node is evaluated for every pod,
//! but the filters that read only the pod's spec and the node's labels and taints
//! (NodeUnschedulable, NodeName, TaintToleration, NodeAffinity) and the scores that read only
//! those (NodeAffinity, TaintToleration) are computed once per distinct pod spec ("template")
//! and node. Only resource fit and the resource scores are evaluated per pod, on integer
//! vectors that are updated in place when a pod binds.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};
use serde::Serialize;

use crate::features::FeatureGates;
use crate::model::pod::GangScheduler;
use crate::model::{Node, Pod};
use crate::sched::cluster::{Cluster, PodRequest, ResourceTable};
use crate::sched::diagnosis::{self, Diagnosis};
use crate::sched::framework::{Code, MessageFormat, Status, names};
use crate::sched::plugins::registry::{ExtensionPoint, Plugin};
use crate::sched::plugins::{
    inter_pod_affinity, node_affinity, node_name, node_resources_balanced_allocation,
    node_resources_fit, node_unschedulable, pod_topology_spread, scheduling_gates,
    taint_toleration,
};
use crate::sched::profile::{self, Profile, Weights};

mod preemption;

/// How the simulated kube-scheduler is configured.
#[derive(Debug, Clone, Default)]
pub struct SchedulerConfig {
    /// Seeds the tie-break between equally scored nodes.
    pub seed: u64,
    pub message_format: MessageFormat,
    pub feature_gates: FeatureGates,
    /// The profiles of a `KubeSchedulerConfiguration`, each serving the pods that name its
    /// `schedulerName`. Empty: upstream's default profile (see [`SchedulerConfig::profiles`]).
    pub profiles: Vec<Profile>,
    /// The first profile serves every pod, whatever `schedulerName` it names (a scenario
    /// without a KubeSchedulerConfiguration).
    pub serves_every_pod: bool,
    /// Namespace labels, for pod affinity terms' `namespaceSelector`.
    pub namespaces: inter_pod_affinity::NamespaceLabels,
    /// The PodGroups gang members name.
    pub pod_groups: crate::model::pod_group::PodGroups,
    /// Services' selectors (JobSet's headless Service per TrainJob): PodTopologySpread's
    /// default constraints select pods by them.
    pub services: Vec<pod_topology_spread::ServiceSelector>,
    /// Keep only the count of nodes per verdict of each pending pod once its message is
    /// written, not which nodes (reports list them only with `run --node-lists`; sweeps and
    /// benchmarks never do): a per-node verdict costs 2 bytes per node per pending pod, 100 KB
    /// each on a 50,000-node cluster).
    pub drop_node_verdicts: bool,
}

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
pub enum PodPhase {
    Scheduled,
    Unschedulable,
    SchedulingGated,
    /// Bound, then evicted by DefaultPreemption to make room for a higher-priority pod.
    Preempted,
    /// Ran to completion (an initializer whose dependents need it `Complete`); its node is
    /// where it ran, its resources are free again.
    Succeeded,
    /// Never created: JobSet waits for a `dependsOn` dependency that did not run.
    Waiting,
    /// The scheduling cycle failed with an error, not a fit failure (condition reason
    /// `SchedulerError`, `schedule_one.go` `handleSchedulingFailure`): no PostFilter runs, and
    /// the pod is retried like an unschedulable one.
    SchedulerError,
}

impl PodPhase {
    /// Pending in the scheduling queue: retried when the cluster changes.
    pub fn is_retried(self) -> bool {
        matches!(self, PodPhase::Unschedulable | PodPhase::SchedulerError)
    }
}

/// What a gang member's report says about its gang.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct GangNote {
    /// `namespace/name` of the PodGroup.
    pub pod_group: String,
    pub scheduler: GangScheduler,
    pub min_member: u32,
    /// Pods of the group that existed at the attempt.
    pub members: usize,
    /// Members that could be placed (already bound, or passed every filter).
    pub placed: usize,
    /// Whether the gang reached its quorum and was bound.
    pub bound: bool,
}

impl GangNote {
    /// One line for tables: "gang ml/llm: 6 of minMember 8 could be placed (8 pods exist),
    /// none bound".
    pub fn summary(&self) -> String {
        format!(
            "gang {}: {} of minMember {} could be placed ({} pod(s) exist), {}",
            self.pod_group,
            self.placed,
            self.min_member,
            self.members,
            if self.bound { "bound" } else { "none bound" }
        )
    }
}

/// What happened to one pod.
#[derive(Debug, Clone)]
pub struct PodOutcome {
    pub phase: PodPhase,
    pub node: Option<usize>,
    /// The condition / event message kube-scheduler would record ("" when scheduled).
    pub message: String,
    pub diagnosis: Option<Diagnosis>,
    /// Pods preempted to make room for this one (pod ids, see [`Outcome`]).
    pub victims: Vec<usize>,
    /// For a gang member: how far its gang got.
    pub gang: Option<GangNote>,
}

impl SchedulerConfig {
    /// The profiles in effect: the configured ones, or upstream's default profile running the
    /// gang plugin its pods name (the scenario then stands for a cluster whose scheduler has
    /// it).
    pub fn profiles(&self) -> Vec<Profile> {
        if self.profiles.is_empty() {
            vec![Profile::default_with_coscheduling()]
        } else {
            self.profiles.clone()
        }
    }

    /// Whether the profile serving `pod` runs Coscheduling (gangs named by the
    /// `scheduling.x-k8s.io/pod-group` label).
    pub fn runs_coscheduling(&self, pod: &Pod) -> bool {
        match self.profile_of(pod) {
            Some(i) => self.profiles.get(i).is_none_or(|p| {
                p.framework
                    .runs(ExtensionPoint::Permit, Plugin::Coscheduling)
            }),
            None => false,
        }
    }

    /// The index of the profile that schedules `pod`, if one does.
    pub fn profile_of(&self, pod: &Pod) -> Option<usize> {
        if self.profiles.is_empty() || self.serves_every_pod {
            return Some(0);
        }
        self.profiles
            .iter()
            .position(|p| p.scheduler_name == pod.scheduler_name)
    }
}

/// A profile with its resource scorers compiled against the scenario's resource table, and
/// its plugin lists in the shape the cycle reads them.
struct CompiledProfile {
    profile: Profile,
    /// The Filter plugins that can fail a node, in the profile's order.
    filters: Vec<Plugin>,
    /// `NodeResourcesFit` runs at Filter.
    fit_filter: bool,
    /// Every static filter comes before every per-pod one (the default order): a node that
    /// fails a static filter is diagnosed by it alone.
    static_first: bool,
    /// The score weights of the simulated score plugins.
    weights: Weights,
    /// Coscheduling's PreFilter runs before NodeAffinity's (a profile that lists it first).
    gang_pre_filter_first: bool,
    /// `None`: LeastAllocated over cpu and memory, the default (and fast) path.
    fit: Option<node_resources_fit::FitScorer>,
    /// `None`: BalancedAllocation over cpu and memory.
    balanced: Option<node_resources_balanced_allocation::BalancedScorer>,
}

impl CompiledProfile {
    fn compile(profiles: &[Profile], table: &ResourceTable) -> Vec<CompiledProfile> {
        profiles
            .iter()
            .map(|p| {
                let filters: Vec<Plugin> = p
                    .framework
                    .at(ExtensionPoint::Filter)
                    .iter()
                    .copied()
                    .filter(|plugin| FILTERS_WITH_EFFECT.contains(plugin))
                    .collect();
                let is_static = |plugin: &Plugin| STATIC_FILTERS.contains(plugin);
                let first_per_pod = filters
                    .iter()
                    .position(|plugin| !is_static(plugin))
                    .unwrap_or(filters.len());
                let pre_filter = p.framework.at(ExtensionPoint::PreFilter);
                let pre_filter_at = |plugin| pre_filter.iter().position(|p| *p == plugin);
                CompiledProfile {
                    static_first: !filters[first_per_pod..].iter().any(is_static),
                    fit_filter: filters.contains(&Plugin::NodeResourcesFit),
                    filters,
                    weights: p.framework.weights(),
                    gang_pre_filter_first: matches!(
                        (
                            pre_filter_at(Plugin::Coscheduling),
                            pre_filter_at(Plugin::NodeAffinity)
                        ),
                        (Some(gang), Some(affinity)) if gang < affinity
                    ),
                    fit: (!node_resources_fit::is_default(&p.fit))
                        .then(|| node_resources_fit::FitScorer::new(&p.fit, table)),
                    balanced: (p.balanced_resources != profile::default_resources()).then(|| {
                        node_resources_balanced_allocation::BalancedScorer::new(
                            &p.balanced_resources,
                            table,
                        )
                    }),
                    profile: p.clone(),
                }
            })
            .collect()
    }
}

/// The Filter plugins that can fail a node in the simulation; the others (volumes, host ports,
/// …) always pass.
const FILTERS_WITH_EFFECT: [Plugin; 7] = [
    Plugin::NodeUnschedulable,
    Plugin::NodeName,
    Plugin::TaintToleration,
    Plugin::NodeAffinity,
    Plugin::NodeResourcesFit,
    Plugin::PodTopologySpread,
    Plugin::InterPodAffinity,
];

/// The Filter plugins that read only the pod and the node: evaluated once per template.
const STATIC_FILTERS: [Plugin; 4] = [
    Plugin::NodeUnschedulable,
    Plugin::NodeName,
    Plugin::TaintToleration,
    Plugin::NodeAffinity,
];

/// Pod ids: workload pods are `0..pods.len()`, existing pods count down from `usize::MAX`.
pub(crate) fn existing_pod_id(i: usize) -> usize {
    usize::MAX - i
}

/// Filter results and static scores of one distinct pod spec on every node.
struct Template {
    /// PreFilter rejected the pod outright (`pod affinity terms conflict`).
    pre_filter_reject: Option<Status>,
    /// Per node: index into `statuses` of its failing static filter, or `PASS`.
    static_verdict: Vec<u16>,
    /// The index of the status of nodes NodeAffinity's PreFilter result leaves out (they fail
    /// before any Filter runs), or `PASS`.
    absent: u16,
    statuses: Vec<Status>,
    /// Nodes that pass every static filter, with their raw NodeAffinity and TaintToleration scores.
    candidates: Vec<Candidate>,
}

#[derive(Clone, Copy)]
struct Candidate {
    node: u32,
    affinity: i64,
    taint: i64,
    /// The node's usage version `resources` was computed at.
    seen_version: u32,
    /// Weighted resource score for the template's request, or [`NOT_FEASIBLE`].
    resources: i64,
}

const NOT_FEASIBLE: i64 = i64::MIN;

const PASS: u16 = u16::MAX;

/// A node that passed every filter for the current pod, with its partial score.
#[derive(Clone, Copy)]
struct Feasible {
    node: u32,
    affinity: i64,
    taint: i64,
    resources: i64,
}

/// A bound pod, for resource accounting and preemption.
#[derive(Debug, Clone)]
pub(crate) struct Bound {
    pub pod: usize,
    pub priority: i32,
    pub request: PodRequest,
    /// When the pod started: its `status.startTime`, else (bound during the simulation) after
    /// every given start time, in bind order.
    pub started: (Option<Time>, u64),
    /// Its group of alike pods (see [`AlikePods`]).
    pub group: (u32, u32),
}

/// Bound pods with the same namespace and labels and the same pod-affinity terms: one of them,
/// its compiled terms, and how many are on each node — what InterPodAffinity needs, kept up to
/// date at every bind, so it visits groups rather than pods.
#[derive(Debug, Clone)]
struct AlikePods {
    pod: usize,
    terms: Option<inter_pod_affinity::PodTerms>,
    nodes: BTreeMap<usize, i64>,
}

/// Bound pods taken off their node in a preemption what-if: the touched groups' per-node
/// counts without them.
#[derive(Debug, Default)]
struct Removed(HashMap<(u32, u32), BTreeMap<usize, i64>>);

impl Removed {
    fn nodes<'a>(&'a self, key: &(u32, u32), g: &'a AlikePods) -> &'a BTreeMap<usize, i64> {
        self.0.get(key).unwrap_or(&g.nodes)
    }
}

/// The scheduler's state while it works through the queue.
pub struct Scheduler<'a> {
    config: &'a SchedulerConfig,
    pub(crate) cluster: Cluster,
    templates: Vec<Template>,
    template_index: HashMap<String, usize>,
    pub(crate) bound: Vec<Vec<Bound>>,
    rng: ChaCha8Rng,
    feasible: Vec<Feasible>,
    /// Binds so far, to order pods bound without a start time.
    binds: u64,
    /// The scenario's workload and existing pods, to look bound pods up by id.
    pods: &'a [Pod],
    existing: &'a [Pod],
    /// Signatures of (namespace, labels) and (namespace, pod-affinity terms) of bound pods.
    signatures: HashMap<(String, String), u32>,
    /// Bound pods grouped by signatures, for InterPodAffinity.
    groups: BTreeMap<(u32, u32), AlikePods>,
    /// Bound pods with required pod anti-affinity (their rules apply to every incoming pod).
    bound_with_anti_affinity: usize,
    /// Bound pods with any pod (anti-)affinity term (they score incoming pods).
    bound_with_pod_affinity: usize,
    /// Compiled topology spread constraints, by pod spec (see [`SpreadSpec`]).
    spreads: Vec<Arc<SpreadSpec>>,
    spread_index: HashMap<String, usize>,
    /// Per spread: the bound pods its filter and score constraints select (kept per bind).
    tallies: Vec<(pod_topology_spread::Tally, pod_topology_spread::Tally)>,
    /// Node → topology domain per key, for InterPodAffinity.
    topology: inter_pod_affinity::Topology,
    /// Scheduling gates removed by timeline steps, by pod id (`None`: all).
    removed_gates: HashMap<usize, Option<Vec<String>>>,
    profiles: Vec<CompiledProfile>,
    /// The profile scheduling the current pod.
    current: usize,
    /// The Services whose selectors default PodTopologySpread constraints select pods by.
    services: pod_topology_spread::Services,
}

/// A pod spec's PodTopologySpread constraints compiled against the nodes: the
/// `DoNotSchedule` ones for Filter, the `ScheduleAnyway` ones for Score.
#[derive(Debug)]
struct SpreadSpec {
    /// Its index in `Scheduler::spreads` (and `tallies`).
    index: usize,
    filter: Arc<pod_topology_spread::Spread>,
    score: Arc<pod_topology_spread::Spread>,
}

/// The PreFilter states of the plugins that look at bound pods, for one pod.
struct BoundPodFilters {
    spread: Option<pod_topology_spread::FilterState>,
    affinity: Option<inter_pod_affinity::State>,
    /// PodTopologySpread comes before InterPodAffinity in the profile's Filter list.
    spread_first: bool,
}

impl BoundPodFilters {
    /// Whether the node passes them. The hot path: it builds no [`Status`] when neither
    /// plugin has work (building one per candidate node cost ~10% of the plain benchmark).
    fn pass(&self, index: usize) -> bool {
        self.spread
            .as_ref()
            .is_none_or(|s| pod_topology_spread::filter(s, index).is_success())
            && self
                .affinity
                .as_ref()
                .is_none_or(|s| inter_pod_affinity::filter(s, index).is_success())
    }

    /// Their Filter on one node, in the profile's order: the first failure, else success.
    fn filter(&self, index: usize) -> Status {
        let order = match self.spread_first {
            true => [Plugin::PodTopologySpread, Plugin::InterPodAffinity],
            false => [Plugin::InterPodAffinity, Plugin::PodTopologySpread],
        };
        order
            .into_iter()
            .map(|plugin| self.status(plugin, index))
            .find(|s| !s.is_success())
            .unwrap_or_else(Status::success)
    }

    /// One of their Filters on one node (success when the plugin has no work or is not one
    /// of them).
    fn status(&self, plugin: Plugin, index: usize) -> Status {
        match (plugin, &self.spread, &self.affinity) {
            (Plugin::PodTopologySpread, Some(s), _) => pod_topology_spread::filter(s, index),
            (Plugin::InterPodAffinity, _, Some(s)) => inter_pod_affinity::filter(s, index),
            _ => Status::success(),
        }
    }
}

/// The nodes that could take `pod` now (every filter passes), given the `existing` bound pods.
pub fn feasible_nodes(
    nodes: Vec<Node>,
    existing: &[Pod],
    pod: &Pod,
    config: &SchedulerConfig,
) -> Vec<String> {
    let all: Vec<&Pod> = existing.iter().chain([pod]).collect();
    let mut s = Scheduler::new(
        Cluster::new(nodes, &all),
        config,
        std::slice::from_ref(pod),
        existing,
    );
    for (i, p) in existing.iter().enumerate() {
        if let Some(node) = p.node_name.as_deref().and_then(|n| s.cluster.index_of(n)) {
            s.bind(node, existing_pod_id(i), p);
        }
    }
    let t = s.template_for(pod);
    if s.templates[t].pre_filter_reject.is_some() {
        return Vec::new();
    }
    let request = PodRequest::new(&s.cluster.table, pod);
    let (_, bound_filters) = s.pre_filter_bound(pod);
    s.find_feasible(t, &request, &bound_filters);
    s.feasible
        .iter()
        .map(|f| s.cluster.nodes[f.node as usize].name.clone())
        .collect()
}

impl<'a> Scheduler<'a> {
    pub fn new(
        cluster: Cluster,
        config: &'a SchedulerConfig,
        pods: &'a [Pod],
        existing: &'a [Pod],
    ) -> Self {
        let n = cluster.len();
        Scheduler {
            pods,
            existing,
            bound_with_anti_affinity: 0,
            signatures: HashMap::new(),
            groups: BTreeMap::new(),
            bound_with_pod_affinity: 0,
            spreads: Vec::new(),
            tallies: Vec::new(),
            spread_index: HashMap::new(),
            removed_gates: HashMap::new(),
            topology: Default::default(),
            profiles: CompiledProfile::compile(&config.profiles(), &cluster.table),
            current: 0,
            services: pod_topology_spread::Services::new(&config.services),
            config,
            cluster,
            templates: Vec::new(),
            template_index: HashMap::new(),
            bound: vec![Vec::new(); n],
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            feasible: Vec::new(),
            binds: 0,
        }
    }

    pub(crate) fn bind(&mut self, node: usize, pod_id: usize, pod: &Pod) {
        let next = self.signatures.len() as u32;
        let labels_signature = *self
            .signatures
            .entry((pod.namespace.clone(), format!("{:?}", pod.labels)))
            .or_insert(next);
        let next = self.signatures.len() as u32;
        let terms_key = (
            pod.namespace.clone(),
            format!(
                "{:?}",
                pod.affinity
                    .as_ref()
                    .map(|a| (&a.pod_affinity, &a.pod_anti_affinity))
            ),
        );
        let terms_signature = *self.signatures.entry(terms_key).or_insert(next);
        let group = self
            .groups
            .entry((labels_signature, terms_signature))
            .or_insert_with(|| AlikePods {
                pod: pod_id,
                terms: inter_pod_affinity::PodTerms::compile(pod),
                nodes: BTreeMap::new(),
            });
        *group.nodes.entry(node).or_default() += 1;
        let request = PodRequest::new(&self.cluster.table, pod);
        self.cluster.account(node, &request, 1);
        self.binds += 1;
        self.count_affinity(pod, 1);
        self.count_spread(pod, node, 1);
        self.bound[node].push(Bound {
            pod: pod_id,
            priority: pod.priority,
            request,
            started: (pod.start_time.clone(), self.binds),
            group: (labels_signature, terms_signature),
        });
    }

    /// Removes a bound pod from its node (preemption).
    pub(crate) fn unbind(&mut self, node: usize, pod_id: usize) {
        if let Some(pos) = self.bound[node].iter().position(|b| b.pod == pod_id) {
            let b = self.bound[node].remove(pos);
            self.cluster.account(node, &b.request, -1);
            if let Some(g) = self.groups.get_mut(&b.group)
                && let Some(n) = g.nodes.get_mut(&node)
            {
                *n -= 1;
                if *n == 0 {
                    g.nodes.remove(&node);
                }
            }
            self.count_affinity(self.bound_pod(pod_id), -1);
            self.count_spread(self.bound_pod(pod_id), node, -1);
        }
    }

    /// Keeps the counts that tell whether InterPodAffinity has work to do.
    /// Keeps every spread's tallies of the pods it selects.
    fn count_spread(&mut self, pod: &Pod, node: usize, sign: i64) {
        for (spec, (filter, score)) in self.spreads.iter().zip(self.tallies.iter_mut()) {
            filter.add(&spec.filter, pod, node, sign);
            score.add(&spec.score, pod, node, sign);
        }
    }

    fn count_affinity(&mut self, pod: &Pod, sign: isize) {
        let a = pod.affinity.as_ref();
        let anti = a
            .and_then(|a| a.pod_anti_affinity.as_ref())
            .is_some_and(|p| {
                p.required_during_scheduling_ignored_during_execution
                    .is_some()
            });
        let any = a.is_some_and(|a| a.pod_affinity.is_some() || a.pod_anti_affinity.is_some());
        self.bound_with_anti_affinity = self
            .bound_with_anti_affinity
            .saturating_add_signed(if anti { sign } else { 0 });
        self.bound_with_pod_affinity =
            self.bound_with_pod_affinity
                .saturating_add_signed(if any { sign } else { 0 });
    }

    /// A bound pod by id (workload pods count up from 0, existing pods down from `usize::MAX`).
    pub(crate) fn bound_pod(&self, id: usize) -> &'a Pod {
        match self.pods.get(id) {
            Some(p) => p,
            None => &self.existing[usize::MAX - id],
        }
    }

    /// The bound pods, grouped by alikeness, with their nodes.
    fn bound_pods<'s>(
        &'s self,
        removed: &'s Removed,
    ) -> impl Iterator<Item = inter_pod_affinity::BoundGroup<'s>> + 's {
        self.groups
            .iter()
            .map(|(key, g)| (key, g, removed.nodes(key, g)))
            .filter(|(_, _, nodes)| !nodes.is_empty())
            .map(
                move |(&(labels, terms), g, nodes)| inter_pod_affinity::BoundGroup {
                    pod: self.bound_pod(g.pod),
                    terms: g.terms.as_ref(),
                    labels_signature: labels,
                    terms_signature: terms,
                    nodes,
                },
            )
    }

    /// The groups' counts with the pods `ids` taken off `node`: what PodTopologySpread and
    /// InterPodAffinity see when preemption asks whether evicting them helps (`RemovePod`).
    fn removed(&self, node: usize, ids: &[usize]) -> Removed {
        let mut removed = Removed::default();
        for b in self.bound[node].iter().filter(|b| ids.contains(&b.pod)) {
            let nodes = removed
                .0
                .entry(b.group)
                .or_insert_with(|| self.groups[&b.group].nodes.clone());
            if let Some(n) = nodes.get_mut(&node) {
                *n -= 1;
                if *n == 0 {
                    nodes.remove(&node);
                }
            }
        }
        removed
    }

    /// The pod's compiled topology spread constraints — its own, or the profile's defaults
    /// when a Service selects it — if it has any.
    fn spread_for(&mut self, pod: &Pod) -> Option<Arc<SpreadSpec>> {
        let profile = self.profile();
        let defaults = match pod.topology_spread_constraints.is_empty() {
            true => Some(pod_topology_spread::default_constraints(
                pod,
                profile.spread_default_constraints.as_deref(),
                &self.services,
            )?),
            false => None,
        };
        let system_defaults = defaults.is_some() && profile.spread_default_constraints.is_none();
        let constraints = defaults
            .as_deref()
            .unwrap_or(&pod.topology_spread_constraints);
        // The labels matter only through the selectors and the pod's own match.
        let key = serde_json::to_string(&(
            self.current,
            &pod.namespace,
            pod_topology_spread::label_dependence(pod, constraints),
            constraints,
            &pod.node_selector,
            pod.affinity.as_ref().and_then(|a| a.node_affinity.as_ref()),
            &pod.tolerations,
        ))
        .expect("pod fields serialize");
        if let Some(&i) = self.spread_index.get(&key) {
            return Some(Arc::clone(&self.spreads[i]));
        }
        let (nodes, gates) = (&self.cluster.nodes, &self.config.feature_gates);
        let compile = |action| {
            Arc::new(pod_topology_spread::Spread::compile(
                pod,
                constraints,
                system_defaults,
                action,
                nodes,
                gates,
            ))
        };
        let spec = Arc::new(SpreadSpec {
            index: self.spreads.len(),
            filter: compile("DoNotSchedule"),
            score: compile("ScheduleAnyway"),
        });
        // From now on each bind updates its tallies; start them from what is bound.
        let none = Removed::default();
        let n = self.cluster.len();
        self.tallies.push((
            pod_topology_spread::Tally::of(&spec.filter, n, self.spread_groups(&none)),
            pod_topology_spread::Tally::of(&spec.score, n, self.spread_groups(&none)),
        ));
        self.spreads.push(Arc::clone(&spec));
        self.spread_index.insert(key, spec.index);
        Some(spec)
    }

    /// PreFilter of PodTopologySpread and InterPodAffinity, the plugins that count bound pods;
    /// also the pod's compiled spread constraints, for Score.
    fn pre_filter_bound(&mut self, pod: &Pod) -> (Option<Arc<SpreadSpec>>, BoundPodFilters) {
        self.pre_filter_bound_without(pod, &Removed::default())
    }

    /// PodTopologySpread's and InterPodAffinity's verdict on `node` for `pod` if the bound
    /// pods `ids` were gone from it (preemption's what-if, `RemovePod` upstream).
    pub(crate) fn bound_filters_without(
        &mut self,
        pod: &Pod,
        node: usize,
        ids: &[usize],
    ) -> Status {
        let removed = self.removed(node, ids);
        let (_, filters) = self.pre_filter_bound_without(pod, &removed);
        filters.filter(node)
    }

    /// [`Self::pre_filter_bound`] with some bound pods taken away (see [`Self::removed`]).
    fn pre_filter_bound_without(
        &mut self,
        pod: &Pod,
        removed: &Removed,
    ) -> (Option<Arc<SpreadSpec>>, BoundPodFilters) {
        let spread = self.spread_for(pod);
        let filters = &self.compiled().filters;
        let at = |plugin| filters.iter().position(|p| *p == plugin);
        let (spread_at, affinity_at) =
            (at(Plugin::PodTopologySpread), at(Plugin::InterPodAffinity));
        let filters = BoundPodFilters {
            spread_first: spread_at < affinity_at || affinity_at.is_none(),
            spread: spread
                .as_ref()
                .filter(|sp| spread_at.is_some() && !sp.filter.is_empty())
                .map(|sp| {
                    let tally = match removed.0.is_empty() {
                        true => None,
                        false => Some(pod_topology_spread::Tally::of(
                            &sp.filter,
                            self.cluster.len(),
                            self.spread_groups(removed),
                        )),
                    };
                    let tally = tally.as_ref().unwrap_or(&self.tallies[sp.index].0);
                    pod_topology_spread::pre_filter(&sp.filter, tally)
                }),
            affinity: (affinity_at.is_some()
                && inter_pod_affinity::relevant(pod, self.bound_with_anti_affinity > 0))
            .then(|| {
                self.with_topology(|s, topo| {
                    let nodes = &s.cluster.nodes;
                    inter_pod_affinity::pre_filter(
                        pod,
                        s.bound_pods(removed),
                        &s.config.namespaces,
                        topo,
                        nodes,
                    )
                })
            }),
        };
        (spread, filters)
    }

    /// Runs `f` with the topology index lent out, so it can grow while `f` reads the rest.
    fn with_topology<T>(
        &mut self,
        f: impl FnOnce(&Self, &mut inter_pod_affinity::Topology) -> T,
    ) -> T {
        let mut topo = std::mem::take(&mut self.topology);
        let out = f(self, &mut topo);
        self.topology = topo;
        out
    }

    /// The bound pods grouped by alikeness, as PodTopologySpread counts them.
    fn spread_groups<'s>(
        &'s self,
        removed: &'s Removed,
    ) -> impl Iterator<Item = pod_topology_spread::BoundGroup<'s>> + 's {
        self.groups
            .iter()
            .map(|(key, g)| (g, removed.nodes(key, g)))
            .filter(|(_, nodes)| !nodes.is_empty())
            .map(|(g, nodes)| pod_topology_spread::BoundGroup {
                pod: self.bound_pod(g.pod),
                nodes,
            })
    }

    /// One scheduling cycle (`schedulingCycle` + `SchedulePod`) of workload pod `id`.
    pub(crate) fn schedule_one(&mut self, id: usize, pod: &Pod) -> PodOutcome {
        self.schedule_one_gang(id, pod, None)
    }

    /// The gating controller removed some (`Some`) or all (`None`) of a pod's gates.
    pub(crate) fn remove_gates(&mut self, id: usize, gates: Option<&[String]>) {
        let entry = self.removed_gates.entry(id).or_insert(Some(Vec::new()));
        match (entry.as_mut(), gates) {
            (Some(removed), Some(gates)) => removed.extend(gates.iter().cloned()),
            _ => *entry = None,
        }
    }

    /// The pod's scheduling gates that are still in place.
    fn gates_left<'p>(&self, id: usize, pod: &'p Pod) -> Vec<&'p String> {
        match self.removed_gates.get(&id) {
            None => pod.scheduling_gates.iter().collect(),
            Some(None) => Vec::new(),
            Some(Some(removed)) => pod
                .scheduling_gates
                .iter()
                .filter(|g| !removed.contains(g))
                .collect(),
        }
    }

    pub(crate) fn is_gated(&self, id: usize, pod: &Pod) -> bool {
        !self.gates_left(id, pod).is_empty()
    }

    /// Ids of the pods bound to a node.
    pub(crate) fn bound_ids(&self, node: usize) -> Vec<usize> {
        self.bound[node].iter().map(|b| b.pod).collect()
    }

    /// Swaps in a new node list (cordon, failure, new nodes): every cache built on the nodes is
    /// dropped, bound pods are bound again where their node still exists, in bind order and
    /// with their start times. Returns each old node's new index, and the pods whose node is
    /// gone, with their old node.
    pub(crate) fn replace_nodes(
        &mut self,
        nodes: Vec<Node>,
    ) -> (Vec<Option<usize>>, Vec<(usize, usize)>) {
        let all: Vec<&Pod> = self.existing.iter().chain(self.pods).collect();
        let old = std::mem::replace(&mut self.cluster, Cluster::new(nodes, &all));
        let index: HashMap<&str, usize> = self
            .cluster
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (n.name.as_str(), i))
            .collect();
        let remap: Vec<Option<usize>> = old
            .nodes
            .iter()
            .map(|n| index.get(n.name.as_str()).copied())
            .collect();
        drop(index);
        let bound = std::mem::replace(&mut self.bound, vec![Vec::new(); self.cluster.len()]);
        self.templates.clear();
        self.template_index.clear();
        self.spreads.clear();
        self.spread_index.clear();
        self.tallies.clear();
        self.groups.clear();
        self.topology = Default::default();
        self.profiles = CompiledProfile::compile(&self.config.profiles(), &self.cluster.table);
        self.bound_with_anti_affinity = 0;
        self.bound_with_pod_affinity = 0;
        let mut all_bound: Vec<(usize, Bound)> = bound
            .into_iter()
            .enumerate()
            .flat_map(|(n, bs)| bs.into_iter().map(move |b| (n, b)))
            .collect();
        all_bound.sort_by_key(|(_, b)| b.started.1);
        let mut evicted = Vec::new();
        for (node, b) in all_bound {
            match remap[node] {
                Some(new) => {
                    self.bind(new, b.pod, self.bound_pod(b.pod));
                    if let Some(last) = self.bound[new].last_mut() {
                        last.started = b.started;
                    }
                }
                None => evicted.push((b.pod, node)),
            }
        }
        (remap, evicted)
    }

    /// A scheduling cycle of a gang member: the gang plugin's PreFilter verdict comes after
    /// NodeAffinity's (user-enabled plugins run after the default ones).
    pub(crate) fn schedule_one_gang(
        &mut self,
        id: usize,
        pod: &Pod,
        gang_reject: Option<Status>,
    ) -> PodOutcome {
        let Some(profile) = self.config.profile_of(pod) else {
            return PodOutcome {
                phase: PodPhase::Unschedulable,
                node: None,
                message: format!(
                    "schedsim: no scheduler profile is named {:?} (profiles: {}); kube-scheduler leaves the pod to that scheduler, so it stays Pending",
                    pod.scheduler_name,
                    self.profiles
                        .iter()
                        .map(|p| format!("{:?}", p.profile.scheduler_name))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
                diagnosis: None,
                victims: Vec::new(),
                gang: None,
            };
        };
        self.current = profile;
        let gate = self.pre_enqueue(id, pod);
        if !gate.is_success() {
            return PodOutcome {
                phase: PodPhase::SchedulingGated,
                node: None,
                message: scheduling_gates::GATED_CONDITION_MESSAGE.into(),
                diagnosis: Some(Diagnosis {
                    pre_filter_msg: Some(gate.message()),
                    ..Default::default()
                }),
                victims: Vec::new(),
                gang: None,
            };
        }
        if self.cluster.is_empty() {
            return unschedulable(
                diagnosis::ERR_NO_NODES_AVAILABLE.into(),
                Diagnosis::default(),
            );
        }
        let t = self.template_for(pod);
        let request = PodRequest::new(&self.cluster.table, pod);
        // The PreFilter plugins that can reject a pod outright, in the profile's order.
        let node_affinity = self.templates[t].pre_filter_reject.clone();
        let gang = gang_reject;
        let reject = match self.compiled().gang_pre_filter_first {
            true => gang.or(node_affinity),
            false => node_affinity.or(gang),
        };
        if let Some(reject) = reject {
            let mut d = Diagnosis::uniform(self.cluster.len(), reject.clone());
            d.pre_filter_msg = Some(reject.message());
            return self.fail(pod, &request, d);
        }
        let (spread, bound_filters) = self.pre_filter_bound(pod);
        self.find_feasible(t, &request, &bound_filters);
        match self.feasible.len() {
            0 => {
                let d = self.diagnose(t, &request, &bound_filters);
                self.fail(pod, &request, d)
            }
            // "When only one node after predicate, just use it."
            1 => scheduled(self.feasible[0].node as usize),
            _ => match node_affinity::pre_score_error(pod) {
                Some(e)
                    if self
                        .profile()
                        .framework
                        .runs(ExtensionPoint::PreScore, Plugin::NodeAffinity) =>
                {
                    PodOutcome {
                        phase: PodPhase::SchedulerError,
                        node: None,
                        // `frameworkImpl.RunPreScorePlugins`'s wrapping of a plugin's error.
                        message: format!("running PreScore plugin {:?}: {e}", names::NODE_AFFINITY),
                        diagnosis: None,
                        victims: Vec::new(),
                        gang: None,
                    }
                }
                _ => scheduled(self.select_host(pod, spread.as_deref())),
            },
        }
    }

    /// The profile scheduling the current pod.
    fn profile(&self) -> &Profile {
        &self.profiles[self.current].profile
    }

    /// The current profile, compiled.
    fn compiled(&self) -> &CompiledProfile {
        &self.profiles[self.current]
    }

    /// The profile's PreEnqueue plugins, in order: the first that holds the pod back.
    fn pre_enqueue(&self, id: usize, pod: &Pod) -> Status {
        for plugin in self.profile().framework.at(ExtensionPoint::PreEnqueue) {
            let status = match plugin {
                Plugin::SchedulingGates => match self.removed_gates.get(&id) {
                    None => scheduling_gates::pre_enqueue(pod),
                    Some(_) => {
                        let mut left = pod.clone();
                        left.scheduling_gates =
                            self.gates_left(id, pod).into_iter().cloned().collect();
                        scheduling_gates::pre_enqueue(&left)
                    }
                },
                _ => continue,
            };
            if !status.is_success() {
                return status;
            }
        }
        Status::success()
    }

    /// The template (distinct scheduling-relevant spec and request, per profile) of a pod,
    /// built on first use.
    fn template_for(&mut self, pod: &Pod) -> usize {
        let key = serde_json::to_string(&(
            self.current,
            &pod.node_name,
            &pod.node_selector,
            pod.affinity.as_ref().and_then(|a| a.node_affinity.as_ref()),
            &pod.tolerations,
            &pod.requests,
            &pod.score_requests,
        ))
        .expect("pod fields serialize");
        if let Some(&t) = self.template_index.get(&key) {
            return t;
        }
        let template = self.build_template(pod);
        self.templates.push(template);
        self.template_index.insert(key, self.templates.len() - 1);
        self.templates.len() - 1
    }

    fn build_template(&self, pod: &Pod) -> Template {
        let config = self.config;
        let profile = self.profile();
        let added = profile.added_affinity.as_ref();
        let n = self.cluster.len();
        let mut template = Template {
            pre_filter_reject: None,
            static_verdict: vec![PASS; n],
            absent: PASS,
            statuses: Vec::new(),
            candidates: Vec::new(),
        };
        let pre_filter = match profile
            .framework
            .runs(ExtensionPoint::PreFilter, Plugin::NodeAffinity)
        {
            true => node_affinity::pre_filter(pod, added),
            false => node_affinity::PreFilter::Skip,
        };
        let narrowed = match pre_filter {
            node_affinity::PreFilter::Reject(status) => {
                template.pre_filter_reject = Some(status);
                return template;
            }
            node_affinity::PreFilter::NodeNames(names) => Some(names),
            _ => None,
        };
        let mut status_index: HashMap<Status, u16> = HashMap::new();
        // Nodes a PreFilter result leaves out get upstream's "absent node" status.
        let absent = Status::new(
            Code::UnschedulableAndUnresolvable,
            names::NODE_AFFINITY,
            format!(
                "node(s) didn't satisfy plugin(s) [{}]",
                names::NODE_AFFINITY
            ),
        );
        for (i, node) in self.cluster.nodes.iter().enumerate() {
            if narrowed
                .as_ref()
                .is_some_and(|names| !names.contains(&node.name))
            {
                template.absent = intern(&mut status_index, &mut template.statuses, absent.clone());
                template.static_verdict[i] = template.absent;
                continue;
            }
            let status = self.static_filters(pod, node);
            if status.is_success() {
                template.candidates.push(Candidate {
                    node: i as u32,
                    affinity: node_affinity::score(pod, node, added),
                    taint: taint_toleration::score(pod, node, &config.feature_gates),
                    seen_version: u32::MAX,
                    resources: NOT_FEASIBLE,
                });
            } else {
                template.static_verdict[i] =
                    intern(&mut status_index, &mut template.statuses, status);
            }
        }
        template
    }

    /// The profile's filters that do not depend on what is bound, in the profile's order;
    /// first failure wins.
    fn static_filters(&self, pod: &Pod, node: &Node) -> Status {
        let (c, p) = (self.config, self.profile());
        for &plugin in &self.compiled().filters {
            let status = match plugin {
                Plugin::NodeUnschedulable => {
                    node_unschedulable::filter(pod, node, &c.feature_gates)
                }
                Plugin::NodeName => node_name::filter(pod, node),
                Plugin::TaintToleration => {
                    taint_toleration::filter(pod, node, &c.feature_gates, c.message_format)
                }
                Plugin::NodeAffinity => node_affinity::filter(pod, node, p.added_affinity.as_ref()),
                // Resources and bound pods: per pod, see `find_feasible` and `diagnose`.
                _ => continue,
            };
            if !status.is_success() {
                return status;
            }
        }
        Status::success()
    }

    /// Filters the template's candidates by resources and scores the survivors' resources.
    ///
    /// A template's pods share one request, so a node's fit and resource score are cached on
    /// the candidate and recomputed only when the node's usage changed since.
    fn find_feasible(&mut self, t: usize, request: &PodRequest, bound_filters: &BoundPodFilters) {
        let Scheduler {
            templates,
            cluster,
            feasible,
            profiles,
            current,
            ..
        } = self;
        feasible.clear();
        let compiled = &profiles[*current];
        let (filter_fit, weights) = (compiled.fit_filter, compiled.weights);
        let balanced = weights.balanced_allocation != 0
            && match &compiled.balanced {
                Some(b) => !b.skips(request),
                None => !node_resources_balanced_allocation::skips(request),
            };
        for c in templates[t].candidates.iter_mut() {
            let node = c.node as usize;
            let version = cluster.version(node);
            if c.seen_version != version {
                c.seen_version = version;
                let res = cluster.resources(node);
                c.resources = if !filter_fit || node_resources_fit::fits(request, res) {
                    let mut score = 0;
                    if weights.node_resources_fit != 0 {
                        score += weights.node_resources_fit
                            * match &compiled.fit {
                                Some(f) => f.score(request, res),
                                None => node_resources_fit::score_least_allocated(request, res),
                            };
                    }
                    if balanced {
                        score += weights.balanced_allocation
                            * match &compiled.balanced {
                                Some(b) => b.score(request, res),
                                None => node_resources_balanced_allocation::score(request, res),
                            };
                    }
                    score
                } else {
                    NOT_FEASIBLE
                };
            }
            let feasible_here = c.resources != NOT_FEASIBLE && bound_filters.pass(node);
            if feasible_here {
                feasible.push(Feasible {
                    node: c.node,
                    affinity: c.affinity,
                    taint: c.taint,
                    resources: c.resources,
                });
            }
        }
    }

    /// NormalizeScore, weights, and a seeded uniform pick among the top-scored nodes.
    fn select_host(&mut self, pod: &Pod, spread: Option<&SpreadSpec>) -> usize {
        let compiled = &self.profiles[self.current];
        let (profile, w) = (&compiled.profile, compiled.weights);
        let (hard_weight, ignore_existing) = (
            profile.hard_pod_affinity_weight,
            profile.ignore_preferred_terms_of_existing_pods,
        );
        let spread = spread.filter(|_| w.pod_topology_spread != 0);
        let spread_scores: Vec<i64> = match spread.filter(|s| !s.score.is_empty()) {
            Some(s) => {
                let nodes: Vec<usize> = self.feasible.iter().map(|f| f.node as usize).collect();
                pod_topology_spread::score(&s.score, &nodes, &self.tallies[s.index].1)
            }
            None => Vec::new(),
        };
        // InterPodAffinity's score, when the pod or a bound pod has pod (anti-)affinity terms.
        let (pref_affinity, pref_anti) = inter_pod_affinity::preferred_terms(pod);
        let mut pod_affinity: Vec<i64> = Vec::new();
        // `IgnorePreferredTermsOfExistingPods`: PreScore skips a pod without preferred terms.
        let has_preferred = !pref_affinity.is_empty() || !pref_anti.is_empty();
        let active = w.inter_pod_affinity != 0
            && (has_preferred || !ignore_existing && self.bound_with_pod_affinity > 0);
        let scores = active
            .then(|| {
                self.with_topology(|s, topo| {
                    let (ns, nodes) = (&s.config.namespaces, &s.cluster.nodes);
                    inter_pod_affinity::pre_score(
                        pod,
                        s.bound_pods(&Removed::default()),
                        ns,
                        topo,
                        nodes,
                        hard_weight,
                    )
                })
            })
            .flatten();
        if let Some(scores) = scores {
            pod_affinity = self
                .feasible
                .iter()
                .map(|f| inter_pod_affinity::score(&scores, f.node as usize))
                .collect();
            inter_pod_affinity::normalize(&mut pod_affinity);
        }
        let max_affinity = self.feasible.iter().map(|f| f.affinity).max().unwrap_or(0);
        let max_taint = self.feasible.iter().map(|f| f.taint).max().unwrap_or(0);
        let mut best = i64::MIN;
        let mut ties: Vec<u32> = Vec::new();
        for (i, f) in self.feasible.iter().enumerate() {
            let affinity = normalize(f.affinity, max_affinity, false);
            let taint = normalize(f.taint, max_taint, true);
            let inter_pod = pod_affinity.get(i).copied().unwrap_or(0);
            let spread = spread_scores.get(i).copied().unwrap_or(0);
            let total = w.node_affinity * affinity
                + w.taint_toleration * taint
                + w.pod_topology_spread * spread
                + w.inter_pod_affinity * inter_pod
                + f.resources;
            if total > best {
                best = total;
                ties.clear();
            }
            if total == best {
                ties.push(f.node);
            }
        }
        let pick = if ties.len() == 1 {
            0
        } else {
            self.rng.random_range(0..ties.len())
        };
        ties[pick] as usize
    }

    /// Every node's status for a pod that fits nowhere: the first Filter plugin that fails it,
    /// in the profile's order (`RunFilterPlugins` stops at the first failure). The static
    /// filters' verdict comes from the template; resources and bound pods are checked here.
    fn diagnose(
        &self,
        t: usize,
        request: &PodRequest,
        bound_filters: &BoundPodFilters,
    ) -> Diagnosis {
        let template = &self.templates[t];
        let mut d = Diagnosis {
            statuses: template.statuses.clone(),
            node_status: template.static_verdict.clone(),
            ..Default::default()
        };
        let mut seen: Vec<(node_resources_fit::Insufficient, u16)> = Vec::new();
        for node in 0..self.cluster.len() {
            let verdict = template.static_verdict[node];
            let compiled = self.compiled();
            if verdict != PASS && (compiled.static_first || verdict == template.absent) {
                continue;
            }
            let failed_static =
                (verdict != PASS).then(|| template.statuses[verdict as usize].plugin);
            for &plugin in &compiled.filters {
                match plugin {
                    Plugin::NodeResourcesFit => {
                        let lack = node_resources_fit::check(request, self.cluster.resources(node));
                        if lack.is_empty() {
                            continue;
                        }
                        d.node_status[node] = match seen.iter().find(|(l, _)| *l == lack) {
                            Some((_, i)) => *i,
                            None => {
                                let i = d.intern(lack.status(&self.cluster.table));
                                seen.push((lack, i));
                                i
                            }
                        };
                    }
                    Plugin::PodTopologySpread | Plugin::InterPodAffinity => {
                        let status = bound_filters.status(plugin, node);
                        if status.is_success() {
                            continue;
                        }
                        d.node_status[node] = d.intern(status);
                    }
                    // A static filter: the template's verdict if it is the one that failed.
                    _ if failed_static == Some(plugin.name()) => {}
                    _ => continue,
                }
                break;
            }
        }
        d
    }

    /// A pending pod's outcome; its per-node verdicts are dropped when the run does not need
    /// them (the statuses stay, for the reasons).
    fn pending(&self, message: String, mut d: Diagnosis) -> PodOutcome {
        if self.config.drop_node_verdicts {
            d.drop_node_status();
        }
        unschedulable(message, d)
    }

    /// PostFilter (DefaultPreemption), then the final message.
    fn fail(&mut self, pod: &Pod, request: &PodRequest, mut d: Diagnosis) -> PodOutcome {
        if !self
            .profile()
            .framework
            .runs(ExtensionPoint::PostFilter, Plugin::DefaultPreemption)
        {
            // No PostFilter plugin: the FitError alone.
            let message = diagnosis::fit_error_message(self.cluster.len(), &d);
            return self.pending(message, d);
        }
        match preemption::post_filter(self, pod, request, &d) {
            preemption::Result::Preempt { node, victims } => {
                for &(n, v) in &victims {
                    self.unbind(n, v);
                }
                let mut outcome = scheduled(node);
                outcome.victims = victims.into_iter().map(|(_, v)| v).collect();
                outcome
            }
            preemption::Result::Message(msg) => {
                d.post_filter_msg = Some(msg);
                let message = diagnosis::fit_error_message(self.cluster.len(), &d);
                self.pending(message, d)
            }
        }
    }
}

fn intern(index: &mut HashMap<Status, u16>, statuses: &mut Vec<Status>, status: Status) -> u16 {
    *index.entry(status.clone()).or_insert_with(|| {
        statuses.push(status);
        (statuses.len() - 1) as u16
    })
}

/// `helper.DefaultNormalizeScore(MaxNodeScore, reverse, scores)`.
fn normalize(score: i64, max: i64, reverse: bool) -> i64 {
    if max == 0 {
        return if reverse { 100 } else { 0 };
    }
    let s = 100 * score / max;
    if reverse { 100 - s } else { s }
}

fn scheduled(node: usize) -> PodOutcome {
    PodOutcome {
        phase: PodPhase::Scheduled,
        node: Some(node),
        message: String::new(),
        diagnosis: None,
        victims: Vec::new(),
        gang: None,
    }
}

fn unschedulable(message: String, diagnosis: Diagnosis) -> PodOutcome {
    PodOutcome {
        phase: PodPhase::Unschedulable,
        node: None,
        message,
        diagnosis: Some(diagnosis),
        victims: Vec::new(),
        gang: None,
    }
}
