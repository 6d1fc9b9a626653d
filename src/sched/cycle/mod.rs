//! The scheduling loop: queue → PreEnqueue → PreFilter → Filter → Score → select → bind,
//! one pod at a time, in arrival order (`pkg/scheduler/schedule_one.go`, `algorithm.go`).
//!
//! The Filter pass samples the nodes as kube-scheduler does ([`crate::sched::sampling`]): it
//! walks the node tree's order from where the previous cycle stopped and stops once it has
//! found enough feasible nodes. Speed comes from structure: the filters that read only the
//! pod's spec and the node's labels and taints (NodeUnschedulable, NodeName, TaintToleration,
//! NodeAffinity) and the scores that read only those (NodeAffinity, TaintToleration) are
//! computed once per distinct pod spec ("template") and node, with the nodes that pass them in
//! the walk's order, so a cycle visits only those. Only resource fit and the resource scores
//! are evaluated per pod, on integer vectors that are updated in place when a pod binds.
//!
//! Here: the scheduler's state and the cycle itself (PreEnqueue → PreFilter → Filter → Score
//! → Reserve/Permit → bind, gangs included). Around it: [`config`] (the scheduler's
//! configuration), [`outcome`] (what a cycle says about a pod), [`compiled`] (a profile as the
//! cycle reads it), [`template`] (per-spec static filters), [`walk`] (the Filter pass), [`state`]
//! (bound pods and the PreFilter states that read them), [`score`] (Score and selectHost),
//! [`diagnose`] (the pending message), [`preemption`] (PostFilter), [`nominated`] (pods
//! nominated to nodes, which the filters of the pods that yield to them count).

use std::collections::BTreeMap;
use std::ops::ControlFlow;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use crate::model::{Node, Pod};
use crate::sched::cluster::{Cluster, PodRequest, ResourceTable};
use crate::sched::diagnosis::{self, Diagnosis};
use crate::sched::dra_manager::DraManager;
use crate::sched::framework::{Code, Status, names};
use crate::sched::node_tree::NodeTree;
use crate::sched::plugins::registry::{ExtensionPoint, Plugin};
use crate::sched::plugins::{
    dynamic_resources, inter_pod_affinity, node_affinity, node_name,
    node_resources_balanced_allocation, node_resources_fit, node_unschedulable,
    pod_topology_spread, scheduling_gates, taint_toleration,
};
use crate::sched::profile::{self, Profile, Weights};
use crate::sched::sampling::{self, NodeSampling};

/// The cycle's maps hash with foldhash (fixed seed): their keys are strings, label maps and
/// requests looked up once or more per pod, where SipHash was a few percent of a run. Nothing
/// iterates them in an order that reaches the output.
pub(crate) type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::FixedState>;

mod compiled;
mod config;
mod diagnose;
mod dra;
mod explain;
mod gpu_share;
mod label_index;
mod nominated;
mod outcome;
mod preemption;
mod recheck;
mod score;
mod state;
mod template;
mod walk;

pub use config::SchedulerConfig;
pub use outcome::{Evaluated, GangNote, Nominating, PodOutcome, PodPhase};
pub use walk::feasible_nodes;

use diagnose::{intern, scheduled, unschedulable};

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

/// The Filter plugins that can fail a node in the simulation; the others (volumes, host ports,
/// …) always pass.
const FILTERS_WITH_EFFECT: [Plugin; 9] = [
    Plugin::NodeUnschedulable,
    Plugin::NodeName,
    Plugin::TaintToleration,
    Plugin::NodeAffinity,
    Plugin::NodeResourcesFit,
    Plugin::PodTopologySpread,
    Plugin::InterPodAffinity,
    Plugin::DynamicResources,
    Plugin::OpenGpuShare,
];

/// The Filter plugins that read only the pod and the node: evaluated once per template.
const STATIC_FILTERS: [Plugin; 4] = [
    Plugin::NodeUnschedulable,
    Plugin::NodeName,
    Plugin::TaintToleration,
    Plugin::NodeAffinity,
];

/// A cycle that failed with an error (`handleSchedulingFailure`'s `SchedulerError`).
fn scheduler_error(message: String) -> PodOutcome {
    PodOutcome {
        phase: PodPhase::SchedulerError,
        node: None,
        message,
        diagnosis: None,
        victims: Vec::new(),
        pdb_violations: 0,
        gang: None,
        evaluated: None,
        nominating: Nominating::Clear,
    }
}

/// FGDScore's target workload (`GetTypicalPods` over the pods the simulator is given): the
/// scenario's workload and existing pods by class, when a profile scores or picks GPUs by
/// FGD. A replay's trace pods arrive later: they are not in it.
fn fgd_typical(
    config: &SchedulerConfig,
    pods: &[Pod],
    existing: &[Pod],
) -> Vec<crate::sched::gpu_share::frag::Typical> {
    use crate::sched::gpu_share::{frag, policy::Policy};
    let uses_fgd = config.profiles().iter().any(|p| {
        p.framework
            .runs(ExtensionPoint::Score, Plugin::of_policy(Policy::Fgd))
            || p.gpu_sel == Some(crate::sched::profile::GpuSel::Fgd)
    });
    if !uses_fgd {
        return Vec::new();
    }
    frag::target_workload(pods.iter().chain(existing))
}

/// Pod ids: workload pods are `0..pods.len()`, existing pods count down from `usize::MAX`.
pub(crate) fn existing_pod_id(i: usize) -> usize {
    usize::MAX - i
}

/// A template: the static part its pod spec decides, shared by the templates that differ
/// only in their requests, and each candidate node's resource verdict for its request.
struct Template {
    /// Its index in `Scheduler::static_templates`.
    statics: usize,
    /// Per candidate of `statics`: the node's usage version `resources` was computed at.
    seen_version: Vec<u32>,
    /// Per candidate: the weighted resource score for the template's request, or
    /// [`NOT_FEASIBLE`].
    resources: Vec<i64>,
}

/// Filter results and static scores of one distinct pod spec (requests aside) on every node.
struct StaticTemplate {
    /// PreFilter rejected the pod outright (`pod affinity terms conflict`).
    pre_filter_reject: Option<Status>,
    /// Per node: index into `statuses` of its failing static filter, or `PASS`.
    static_verdict: template::StaticVerdicts,
    /// The index of the status of nodes NodeAffinity's PreFilter result leaves out (they fail
    /// before any Filter runs), or `PASS`.
    absent: u16,
    statuses: Vec<Status>,
    /// Per status: how many nodes have it as their static verdict.
    static_counts: Vec<usize>,
    /// Nodes whose static verdict is `Unschedulable` (preemption might help them; upstream's
    /// static filters all answer `UnschedulableAndUnresolvable`, so normally none).
    resolvable_static: Vec<u32>,
    /// Nodes that pass every static filter, with their raw NodeAffinity and TaintToleration
    /// scores, in node order.
    candidates: Vec<Candidate>,
    /// How many nodes the Filter pass walks (`len(nodes)` in `findNodesThatPassFilters`):
    /// every node, or those NodeAffinity's PreFilter result names.
    scan_len: u32,
    /// The candidates' indices in the walk's order, when that is not node order (nodes listed
    /// zone after zone); `None`: `candidates` are in the walk's order already.
    scan: Option<Vec<u32>>,
    /// The candidates' slots in the node tree's walk (a candidate's rank there is its place
    /// in the walk's order), to walk only those with room for the pod's devices.
    candidate_slots: crate::sched::device_room::RankedNodes,
}

#[derive(Clone, Copy)]
struct Candidate {
    node: u32,
    /// Its position among the nodes the Filter pass walks (see
    /// [`StaticTemplate::scan_len`]).
    pos: u32,
    affinity: i64,
    taint: i64,
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
    /// The GPUs `Open-Gpu-Share` reserved for it.
    pub gpus: Option<gpu_share::GpuTaken>,
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
/// counts without them, and the terminating ones among them (node, pod id).
#[derive(Debug, Default)]
struct Removed {
    groups: HashMap<(u32, u32), BTreeMap<usize, i64>>,
    terminating: Vec<(usize, usize)>,
}

impl Removed {
    fn nodes<'a>(&'a self, key: &(u32, u32), g: &'a AlikePods) -> &'a BTreeMap<usize, i64> {
        self.groups.get(key).unwrap_or(&g.nodes)
    }
}

/// The scheduler's state while it works through the queue.
pub struct Scheduler<'a> {
    config: &'a SchedulerConfig,
    pub(crate) cluster: Cluster,
    templates: Vec<Template>,
    static_templates: Vec<StaticTemplate>,
    /// The templates by their pods' fields; the spec's fields the static filters and scores
    /// read (not its requests) find a template built for them, which a template for another
    /// request starts as a copy of.
    template_index: template::TemplateIndex,
    /// The memory `templates` hold, about (see [`TEMPLATE_BYTES_KEPT`]).
    template_bytes: usize,
    pub(crate) bound: Vec<Vec<Bound>>,
    rng: ChaCha8Rng,
    /// Draws preemption's random offset (`GetOffsetAndNumCandidates`): the run's seed, on a
    /// stream of its own so that preemptions leave the tie-breaks' draws alone.
    preemption_rng: ChaCha8Rng,
    /// The scheduler cache's node tree, and each node's position in its list.
    tree: NodeTree,
    tree_position: Vec<u32>,
    /// `nextStartNodeIndex`: where the next Filter pass starts in its node list.
    next_start: usize,
    feasible: Vec<Feasible>,
    /// Binds so far, to order pods bound without a start time.
    binds: u64,
    /// The scenario's workload and existing pods, to look bound pods up by id.
    pods: &'a [Pod],
    existing: &'a [Pod],
    /// Signatures of (namespace, labels) and (namespace, pod-affinity terms) of bound pods.
    signatures: state::Signatures,
    /// Bound pods grouped by signatures, for InterPodAffinity.
    groups: BTreeMap<(u32, u32), AlikePods>,
    /// The groups of each namespace, in creation order: PodTopologySpread counts only pods of
    /// the incoming pod's namespace, so a new spec tallies these alone.
    groups_in_namespace: HashMap<String, Vec<(u32, u32)>>,
    /// The groups by each label of their pods.
    groups_by_label: label_index::LabelIndex<(u32, u32)>,
    /// Groups that became empty, to forget (see [`Self::forget_empty_groups`]).
    emptied_groups: Vec<(u32, u32)>,
    /// Bound pods with required pod anti-affinity (their rules apply to every incoming pod).
    bound_with_anti_affinity: usize,
    /// Bound pods with any pod (anti-)affinity term (they score incoming pods).
    bound_with_pod_affinity: usize,
    /// Compiled topology spread constraints, by pod spec (see [`SpreadSpec`]).
    spreads: Vec<Arc<SpreadSpec>>,
    spread_index: HashMap<String, usize>,
    /// The spreads that select only pods with a given label (see [`SpreadSpec::label`]),
    /// filed under it, and per namespace the others: the spreads a bind can change.
    spreads_by_label: label_index::LabelIndex<usize>,
    spreads_unlabelled: HashMap<String, Vec<usize>>,
    /// The nodes each set of constraints counts, shared between specs.
    counted_nodes: pod_topology_spread::CountedNodes,
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
    /// The inputs of the last spread spec [`Self::spread_for`] found, and its index.
    last_spread: Option<(state::OwnedSpreadInputs, usize)>,
    /// Binds, unbinds and node replacements so far: while it stands still, a cycle that
    /// failed fails again, alike, for a pod it cannot tell apart (see [`FailureKey`]).
    mutations: u64,
    /// The last failed cycle of each kind of pod.
    failures: HashMap<FailureKey, Failure>,
    /// The nodes each mutation changed, for re-checking a failure on them (see [`recheck`]).
    changes: recheck::NodeChanges,
    /// The current cycle's failure is to be kept with its per-node verdicts.
    keep_failed_nodes: bool,
    /// What the current cycle's preemption dry run left for that.
    dry_run: recheck::DryRun,
    /// The number of nodes the last preemption dry run drew its random offset among, if it
    /// drew one.
    preemption_draw: Option<usize>,
    /// DynamicResources: the claims as the run changed them and the devices in use.
    pub(crate) dra: DraManager,
    /// `schedsim explain`: the current cycle's record while it runs, and each explained
    /// pod's last cycle (by pod id).
    explaining: Option<crate::sched::explain::Explanation>,
    /// The dry run of the current cycle's preemption, for `explaining`.
    preemption_explained: Option<crate::sched::explain::Preemption>,
    /// The current cycle's PreFilter counts, for `explaining`.
    pre_filter_explained: Option<crate::sched::explain::PreFilterState>,
    /// The nodes' names while the node list stands, shared by the explanations.
    node_names: Option<Arc<[String]>>,
    pub(crate) explained: HashMap<usize, crate::sched::explain::Explanation>,
    /// DynamicResources' Filter verdicts per claim shape and node.
    dra_cache: std::cell::RefCell<dynamic_resources::FilterCache>,
    /// DynamicResources' state for the pod in the cycle; `None` when its PreFilter did not run.
    dra_cycle: Option<dynamic_resources::CycleState>,
    /// The PodDisruptionBudgets and how many of their pods are healthy.
    pub(crate) budgets: crate::sched::pdb::Budgets,
    /// A replay's pods, from their arrival until they are gone (see [`Self::admit`]).
    live: HashMap<usize, Arc<Pod>>,
    /// Bound pods that are terminating, as they are now (see [`Self::start_terminating`]).
    terminating: HashMap<usize, Arc<Pod>>,
    /// The scheduling queue's nominations (see [`nominated`]).
    nominations: nominated::Nominations,
    /// For the pod in the cycle: the nodes with nominated pods it must yield to.
    nominated_here: Vec<nominated::NominatedNode>,
    /// Preemption leaves its victims to terminate and nominates the preemptor, which stays
    /// pending (kube-scheduler over time: the replay); off, the preemptor is bound at once
    /// and the victims are gone (a snapshot).
    victims_terminate: bool,
    /// FGDScore's target workload: the scenario's pods by class ([`Self::new`]).
    fgd_typical: Vec<crate::sched::gpu_share::frag::Typical>,
    /// The GPU-sharing scores of unchanged nodes.
    gpu_score_cache: gpu_share::GpuScoreCache,
}

/// A pod the scheduler knows, held independently of the scheduler's borrow: the scenario's
/// pods are borrowed for the run, a replay's are shared.
pub(crate) enum PodHandle<'a> {
    Scenario(&'a Pod),
    Live(Arc<Pod>),
}

impl std::ops::Deref for PodHandle<'_> {
    type Target = Pod;
    fn deref(&self) -> &Pod {
        match self {
            PodHandle::Scenario(p) => p,
            PodHandle::Live(p) => p,
        }
    }
}

/// What a failed cycle read of a pod whose labels no Filter reads (no PodTopologySpread
/// `DoNotSchedule` constraint, no InterPodAffinity work): its profile, its template (static
/// filters, requests), what preemption reads of it, and the specs of its resource claims
/// when all of them are still to allocate (DynamicResources then reads only those, and its
/// PostFilter has nothing to deallocate). Two such pods fail alike on an unchanged cluster:
/// the cycle's Filter, the diagnosis and PostFilter's what-ifs read nothing else of them, and
/// a failure changes no state (a preemption does, and is never kept).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct FailureKey {
    profile: usize,
    template: usize,
    request: PodRequest,
    priority: i32,
    never_preempt: bool,
    claims_shape: Option<usize>,
    /// Its share of GPUs (`Open-Gpu-Share` reads it).
    gpu_share: Option<Arc<crate::model::gpu_share::GpuShare>>,
}

/// Empty groups of bound pods kept at least, before they are forgotten (see
/// [`Scheduler::forget_empty_groups`]).
const EMPTY_GROUPS_KEPT: usize = 256;

/// Failed cycles kept before the stale ones are dropped.
const FAILURES_KEPT: usize = 4096;

/// The per-node verdicts of failed cycles kept, in bytes, before the stale ones are dropped
/// (4 bytes per node each: ≈ 20 KB at 5,000 nodes).
const FAILED_NODES_BYTES_KEPT: usize = 128 << 20;

/// The templates kept, in bytes, before they are dropped (and rebuilt as pods need them): a
/// replay meets new pod specs and requests for as long as its trace runs; a static template
/// holds a few dozen bytes per node (≈ 200 KB at 5,000 nodes), each request on it 12 bytes
/// per candidate node.
const TEMPLATE_BYTES_KEPT: usize = 64 << 20;

/// A failed cycle, kept for the next pod it would fail alike (see [`FailureKey`]).
#[derive(Debug, Clone)]
struct Failure {
    /// `Scheduler::mutations` when it ran.
    at: u64,
    outcome: PodOutcome,
    /// Its preemption dry run drew an offset among this many nodes.
    preemption_draw: Option<usize>,
    /// Its per-node verdicts, for a re-check once nodes changed (see [`recheck`]).
    nodes: Option<recheck::FailedNodes>,
}

/// A pod spec's PodTopologySpread constraints compiled against the nodes: the
/// `DoNotSchedule` ones for Filter, the `ScheduleAnyway` ones for Score.
#[derive(Debug)]
struct SpreadSpec {
    /// Its index in `Scheduler::spreads` (and `tallies`).
    index: usize,
    filter: Arc<pod_topology_spread::Spread>,
    score: Arc<pod_topology_spread::Spread>,
    /// A label `(key, value)` that all its constraints require: it counts no pod without it.
    label: Option<(String, String)>,
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
    #[inline]
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

impl<'a> Scheduler<'a> {
    pub fn new(
        mut cluster: Cluster,
        config: &'a SchedulerConfig,
        pods: &'a [Pod],
        existing: &'a [Pod],
    ) -> Self {
        let n = cluster.len();
        let features = dynamic_resources::features(&config.feature_gates);
        let dra = DraManager::new(Arc::clone(&config.dra), &cluster.nodes, features);
        let all = (pods.iter().enumerate())
            .chain((existing.iter().enumerate()).map(|(i, p)| (existing_pod_id(i), p)));
        let exists_at_start = |id: usize| id >= pods.len();
        let budgets =
            crate::sched::pdb::Budgets::new(&config.pdbs, all, exists_at_start, |id, p| {
                id >= pods.len()
                    && p.node_name
                        .as_deref()
                        .and_then(|n| cluster.index_of(n))
                        .is_some()
            });
        let tree = NodeTree::new(&cluster.nodes);
        let tree_position = walk::tree_positions(&tree, &cluster.nodes);
        cluster.index_devices(&tree_position);
        let mut preemption_rng = ChaCha8Rng::seed_from_u64(config.seed);
        preemption_rng.set_stream(1);
        Scheduler {
            budgets,
            tree_position,
            tree,
            preemption_rng,
            next_start: 0,
            pods,
            existing,
            bound_with_anti_affinity: 0,
            signatures: Default::default(),
            groups: BTreeMap::new(),
            groups_in_namespace: HashMap::default(),
            groups_by_label: Default::default(),
            emptied_groups: Vec::new(),
            bound_with_pod_affinity: 0,
            spreads: Vec::new(),
            tallies: Vec::new(),
            spread_index: HashMap::default(),
            spreads_by_label: Default::default(),
            spreads_unlabelled: HashMap::default(),
            counted_nodes: Default::default(),
            removed_gates: HashMap::default(),
            topology: Default::default(),
            profiles: CompiledProfile::compile(&config.profiles(), &cluster.table),
            current: 0,
            services: pod_topology_spread::Services::new(
                &config.services,
                &config.controller_selectors,
            ),
            config,
            cluster,
            templates: Vec::new(),
            static_templates: Vec::new(),
            template_index: Default::default(),
            template_bytes: 0,
            bound: vec![Vec::new(); n],
            rng: ChaCha8Rng::seed_from_u64(config.seed),
            feasible: Vec::new(),
            binds: 0,
            mutations: 0,
            failures: HashMap::default(),
            changes: Default::default(),
            keep_failed_nodes: false,
            dry_run: Default::default(),
            preemption_draw: None,
            last_spread: None,
            dra,
            dra_cache: Default::default(),
            dra_cycle: None,
            live: HashMap::default(),
            terminating: HashMap::default(),
            nominations: Default::default(),
            nominated_here: Vec::new(),
            victims_terminate: false,
            fgd_typical: fgd_typical(config, pods, existing),
            gpu_score_cache: Default::default(),
            explaining: None,
            preemption_explained: None,
            pre_filter_explained: None,
            node_names: None,
            explained: HashMap::default(),
        }
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

    /// How many times the cluster the filters read has changed (binds, unbinds, node
    /// replacements, nominations, claims deallocated): while it stands still, a cycle decides
    /// as it did. A replay's Volcano sessions run only when it moved.
    pub(crate) fn mutations(&self) -> u64 {
        self.mutations
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
        self.mutations += 1;
        self.changes.forget(self.mutations);
        self.failures.clear();
        self.node_names = None;
        let all: Vec<&Pod> = self.existing.iter().chain(self.pods).collect();
        self.tree.follow(&self.cluster.nodes, &nodes);
        self.tree_position = walk::tree_positions(&self.tree, &nodes);
        let old = std::mem::replace(&mut self.cluster, Cluster::new(nodes, &all));
        self.cluster.index_devices(&self.tree_position);
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
        self.static_templates.clear();
        self.template_index = Default::default();
        self.template_bytes = 0;
        self.spreads.clear();
        self.spread_index.clear();
        self.last_spread = None;
        self.spreads_by_label.clear();
        self.spreads_unlabelled.clear();
        self.counted_nodes = Default::default();
        self.tallies.clear();
        self.groups.clear();
        self.groups_in_namespace.clear();
        self.groups_by_label.clear();
        self.emptied_groups.clear();
        self.topology = Default::default();
        self.profiles = CompiledProfile::compile(&self.config.profiles(), &self.cluster.table);
        self.dra.reindex(&self.cluster.nodes);
        self.gpu_score_cache = Default::default();
        self.dra_cache.get_mut().reindex(self.cluster.len());
        self.bound_with_anti_affinity = 0;
        self.bound_with_pod_affinity = 0;
        self.budgets.clear();
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
                    let pod = self.pod_handle(b.pod);
                    self.bind_holding(new, b.pod, &pod, b.gpus.as_ref());
                    if let Some(last) = self.bound[new].last_mut() {
                        last.started = b.started;
                    }
                }
                None => {
                    // Evicted with its node: its claims are released.
                    let pod = self.pod_handle(b.pod);
                    self.dra.release(&pod, false);
                    self.terminating.remove(&b.pod);
                    evicted.push((b.pod, node));
                }
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
        self.dra_cycle = None;
        self.pre_filter_explained = None;
        self.trim_templates();
        self.forget_empty_groups();
        let explained = self.explains(pod);
        let outcome = self.cycle(id, pod, gang_reject);
        if explained {
            self.record_explanation(id, pod, &outcome);
        }
        if let (PodPhase::Scheduled, Some(node)) = (outcome.phase, outcome.node) {
            self.dra_reserve(node, pod);
        }
        self.dra_cycle = None;
        outcome
    }

    /// The scheduling cycle up to the choice of a node (Reserve is the caller's).
    fn cycle(&mut self, id: usize, pod: &Pod, gang_reject: Option<Status>) -> PodOutcome {
        self.keep_failed_nodes = false;
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
                pdb_violations: 0,
                gang: None,
                evaluated: None,
                nominating: Nominating::Noop,
            };
        };
        self.current = profile;
        if pod.is_terminating() {
            // `skipPodSchedule`: the event kube-scheduler records instead of a cycle.
            return PodOutcome {
                message: format!("skip schedule deleting pod: {}", pod.key()),
                ..unschedulable(String::new(), Diagnosis::default())
            };
        }
        let (gate_plugin, gate) = self.pre_enqueue(id, pod);
        if !gate.is_success() {
            return PodOutcome {
                phase: PodPhase::SchedulingGated,
                node: None,
                // A DRA pod waiting for its claims has no condition upstream; its reason is
                // the one thing to say.
                message: match gate_plugin {
                    Plugin::DynamicResources => gate.message(),
                    _ => scheduling_gates::GATED_CONDITION_MESSAGE.into(),
                },
                diagnosis: Some(Arc::new(Diagnosis {
                    pre_filter_msg: Some(gate.message()),
                    ..Default::default()
                })),
                victims: Vec::new(),
                pdb_violations: 0,
                gang: None,
                evaluated: None,
                nominating: Nominating::Noop,
            };
        }
        if self.cluster.is_empty() {
            return PodOutcome {
                nominating: Nominating::Clear,
                ..unschedulable(
                    diagnosis::ERR_NO_NODES_AVAILABLE.into(),
                    Diagnosis::default(),
                )
            };
        }
        let t = self.template_of(Some(id), pod);
        let request = self.pod_request(pod);
        self.prepare_nominated(id, pod, &request);
        // The PreFilter plugins that can reject a pod outright, in the profile's order.
        let node_affinity = self.statics(t).pre_filter_reject.clone();
        let gang = gang_reject;
        let gang_first = self.compiled().gang_pre_filter_first;
        // DynamicResources' PreFilter runs unless a PreFilter before it rejected the pod.
        let dra = match node_affinity.is_some() || (gang_first && gang.is_some()) {
            true => None,
            false => match self.dra_pre_filter(pod) {
                Ok(reject) => reject,
                Err(message) => return scheduler_error(message),
            },
        };
        let reject = match gang_first {
            true => gang.or(node_affinity).or(dra),
            false => node_affinity.or(dra).or(gang),
        };
        if let Some(reject) = reject {
            let n = self.cluster.len();
            let mut d = Diagnosis::uniform(n, reject.clone(), !self.config.drop_node_verdicts);
            d.pre_filter_msg = Some(reject.message());
            let might_help = match diagnosis::preemption_might_help(&reject) {
                true => (0..n as u32).collect(),
                false => Vec::new(),
            };
            return self.fail(pod, &request, (d, might_help));
        }
        let (spread, bound_filters) = self.pre_filter_bound(pod);
        if self.explains(pod) {
            self.explain_pre_filter(spread.as_deref(), &bound_filters);
        }
        let claims_shape = match &self.dra_cycle {
            Some(c) if !c.is_empty() => c.fresh_claims_shape().map(Some),
            _ => Some(None),
        };
        let failure_key = (bound_filters.spread.is_none()
            && bound_filters.affinity.is_none()
            && pod.nominated_node_name.is_none())
        .then_some(claims_shape)
        .flatten()
        .map(|claims_shape| FailureKey {
            profile: self.current,
            template: t,
            request: request.clone(),
            priority: pod.priority,
            never_preempt: pod.never_preempt,
            claims_shape,
            gpu_share: pod.gpu_share.clone(),
        });
        // An explained pod runs its cycle in full: a failure replayed for pods alike keeps
        // no dry run to explain (the outcome is the same either way).
        if let Some(key) = failure_key.as_ref().filter(|_| !self.explains(pod))
            && let Some(outcome) = self.fail_again(key, pod, t, &request, &bound_filters)
        {
            return outcome;
        }
        // A failure of a pod without resource claims can be re-checked node by node later.
        self.keep_failed_nodes = failure_key
            .as_ref()
            .is_some_and(|k| k.claims_shape.is_none())
            && !self.config.feature_gates.dra_extended_resource;
        let evaluated = match self.filter_pass(pod, t, &request, &bound_filters) {
            ControlFlow::Continue(evaluated) => evaluated,
            ControlFlow::Break(outcome) => return outcome,
        };
        // A cycle without a feasible node is explained from the diagnosis PostFilter gets.
        if self.explains(pod) && !self.feasible.is_empty() {
            self.explaining =
                Some(self.start_explanation(pod, t, &request, &bound_filters, &evaluated));
        }
        let mut outcome = self.decide(
            pod,
            t,
            &request,
            &bound_filters,
            spread.as_deref(),
            failure_key,
        );
        outcome.evaluated = Some(evaluated);
        outcome
    }

    /// Diagnosis and PostFilter for a pod with no feasible node, else the chosen node.
    fn decide(
        &mut self,
        pod: &Pod,
        t: usize,
        request: &PodRequest,
        bound_filters: &BoundPodFilters,
        spread: Option<&SpreadSpec>,
        failure_key: Option<FailureKey>,
    ) -> PodOutcome {
        match self.feasible.len() {
            0 => {
                let keep_nodes = !self.config.drop_node_verdicts || self.keep_failed_nodes;
                let d = self.diagnose(pod, t, request, bound_filters, keep_nodes);
                self.preemption_draw = None;
                self.dry_run = recheck::DryRun::None;
                let mut outcome = self.fail(pod, request, d);
                let nodes = self.failed_nodes(&mut outcome);
                if let Some(key) = failure_key
                    && outcome.phase == PodPhase::Unschedulable
                    && outcome.victims.is_empty()
                {
                    outcome.evaluated = Some(Evaluated {
                        nodes: self.statics(t).scan_len as usize,
                        feasible: 0,
                    });
                    let failure = Failure {
                        at: self.mutations,
                        outcome: outcome.clone(),
                        preemption_draw: self.preemption_draw,
                        nodes,
                    };
                    self.keep_failure(key, failure);
                }
                outcome
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
                        pdb_violations: 0,
                        gang: None,
                        evaluated: None,
                        nominating: Nominating::Clear,
                    }
                }
                _ => {
                    let mut explaining = self.explaining.take();
                    let node = self.select_host(pod, request, spread, explaining.as_mut());
                    self.explaining = explaining;
                    scheduled(node)
                }
            },
        }
    }

    /// Keeps a failed cycle for pods alike. Past [`FAILURES_KEPT`] failures, or
    /// [`FAILED_NODES_BYTES_KEPT`] of per-node verdicts, the older half goes (a replay's pods
    /// differ in requests without end).
    fn keep_failure(&mut self, key: FailureKey, failure: Failure) {
        let bytes = failure.nodes.as_ref().map_or(0, |n| n.bytes()).max(1);
        let kept = FAILURES_KEPT.min((FAILED_NODES_BYTES_KEPT / bytes).max(64));
        if self.failures.len() >= kept {
            let mut ats: Vec<u64> = self.failures.values().map(|f| f.at).collect();
            let mid = ats.len() / 2;
            let median = *ats.select_nth_unstable(mid).1;
            self.failures.retain(|_, f| f.at > median);
        }
        self.failures.insert(key, failure);
    }

    /// The pod's request as the filters read it: with DRAExtendedResource, the resources
    /// NodeResourcesFit leaves to DynamicResources on nodes that do not publish them.
    fn pod_request(&self, pod: &Pod) -> PodRequest {
        let mut request = PodRequest::new(&self.cluster.table, pod);
        if self.config.feature_gates.dra_extended_resource {
            let backed = |name: &str| self.dra.extended_class(name).is_some();
            request.dra_delegable =
                node_resources_fit::dra_delegable(&request, &self.cluster.table, backed);
        }
        request
    }

    /// The profile scheduling the current pod.
    #[inline]
    fn profile(&self) -> &Profile {
        &self.profiles[self.current].profile
    }

    /// The current profile, compiled.
    #[inline]
    fn compiled(&self) -> &CompiledProfile {
        &self.profiles[self.current]
    }

    /// The profile's PreEnqueue plugins, in order: the first that holds the pod back.
    fn pre_enqueue(&self, id: usize, pod: &Pod) -> (Plugin, Status) {
        for &plugin in self.profile().framework.at(ExtensionPoint::PreEnqueue) {
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
                Plugin::DynamicResources if !pod.resource_claims.is_empty() => {
                    dynamic_resources::pre_enqueue(&self.dra, pod)
                }
                _ => continue,
            };
            if !status.is_success() {
                return (plugin, status);
            }
        }
        (Plugin::SchedulingGates, Status::success())
    }
}
