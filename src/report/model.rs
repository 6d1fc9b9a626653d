//! The report model: what happened to every pod and node, in input order. This is the stable
//! JSON format documented in the README (fields may be added, never renamed or removed).

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::is_zero;
use crate::load::Scenario;
use crate::model::Pod;
use crate::model::resources::{GPU_RESOURCES, ResourceList};
use crate::sched::cycle::GangNote;
use crate::sched::diagnosis::Diagnosis;
use crate::sched::framework::Code;
use crate::sched::simulation::Checkpoint;
use crate::sched::{Outcome, PodPhase};

/// The version of the run report's JSON format: 2 since pending pods' verdicts give node
/// counts (`count`) and list the nodes only with `run --node-lists`; 1 listed them always.
pub const SCHEMA_VERSION: u32 = 2;

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunReport {
    pub schema_version: u32,
    pub scenarios: Vec<ScenarioReport>,
}

impl RunReport {
    pub fn new(scenarios: Vec<ScenarioReport>) -> Self {
        RunReport {
            schema_version: SCHEMA_VERSION,
            scenarios,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ScenarioReport {
    pub name: String,
    pub file: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    pub pods: Vec<PodReport>,
    /// Existing pods (`spec.existingPods`) evicted by preemption, `namespace/name`.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub preempted_existing_pods: Vec<String>,
    /// Per TrainJob with overrides: placement with and without them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub override_effects: Vec<OverrideEffect>,
    /// The state after the initial arrival and after each timeline step, with what changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<TimelineStep>,
    /// Gangs (PodGroups) and how far each got: all members bound, or none.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gangs: Vec<GangNote>,
    /// Workloads partly placed: some pods bound, others pending, so the job cannot start.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stuck_workloads: Vec<StuckWorkload>,
    /// What Kueue admitted, and the quota it used (scenarios with Kueue objects).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kueue: Option<super::kueue::KueueReport>,
    /// The ResourceClaims allocated at the end of the run (scenarios with DRA objects).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dra_claims: Vec<super::dra::ClaimReport>,
    /// The FGD paper's fragmentation of the nodes' shared GPUs (nodes with
    /// `alibabacloud.com/gpu-count`), not the `fragmented` GPUs of the charts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_share_fragmentation: Option<super::gpu_share::GpuShareFragmentation>,
    pub nodes: Vec<NodeReport>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodReport {
    pub name: String,
    pub namespace: String,
    /// The workload (TrainJob, Determined task) the pod belongs to, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workload: Option<String>,
    pub node: Option<String>,
    pub status: PodPhase,
    /// kube-scheduler's message: the FailedScheduling text, or the gated condition's.
    pub message: String,
    /// Why each node was rejected, grouped by identical verdicts (pending pods only).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub verdicts: Vec<Verdict>,
    /// Pods this pod preempted (`namespace/name`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub preempted: Vec<String>,
    /// How many of `preempted` a PodDisruptionBudget protected: kube-scheduler preempts them
    /// anyway when no node spares them (`Victims.NumPDBViolations`).
    #[serde(skip_serializing_if = "is_zero")]
    pub pdb_violations: usize,
    /// For a gang member: its gang's last attempt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gang: Option<GangNote>,
    /// How many nodes the pod's last scheduling cycle examined before it stopped
    /// (kube-scheduler's `evaluatedNodes`: with sampling, fewer than all once enough feasible
    /// nodes were found), when the cycle reached the filters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evaluated_nodes: Option<usize>,
    /// How many of them passed every filter (`feasibleNodes`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feasible_nodes: Option<usize>,
    /// `status.extendedResourceClaimStatus`: the claim DynamicResources created for the pod's
    /// extended resources backed by DRA (DRAExtendedResource), and which request of it stands
    /// for which container's resource.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extended_resource_claim_status:
        Option<k8s_openapi::api::core::v1::PodExtendedResourceClaimStatus>,
    /// The GPU indices `Open-Gpu-Share` reserved for it on its node.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gpu_indices: Vec<usize>,
}

/// One plugin verdict shared by a set of nodes: how many, and which with `run --node-lists`.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    pub plugin: String,
    pub code: Code,
    pub reasons: Vec<String>,
    pub count: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<Vec<String>>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeReport {
    pub name: String,
    pub pool: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_product: Option<String>,
    pub allocatable: ResourceList,
    pub allocated: ResourceList,
    /// DRA devices of the node's own ResourceSlices, per DeviceClass that selects them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dra: Vec<super::dra::DeviceClassUsage>,
    /// Its DRA GPUs (total, allocated), counted like `nvidia.com/gpu` where the node publishes
    /// no GPU extended resource.
    #[serde(skip)]
    pub dra_gpus: Option<(i64, i64)>,
    /// Its `alibabacloud.com/gpu-count` GPUs as `Open-Gpu-Share` left them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_share: Option<super::gpu_share::NodeGpuShare>,
}

/// A short reason for a pending pod whose nodes gave none (gated, never created, preempted,
/// rejected before or after the filters): its status, or its message's first sentence after
/// "nodes are available: ".
pub fn pending_reason(phase: PodPhase, message: &str) -> String {
    match phase {
        PodPhase::SchedulingGated => "SchedulingGated".into(),
        PodPhase::Waiting if message.contains("(podManagementPolicy OrderedReady)") => {
            "not created (OrderedReady)".into()
        }
        PodPhase::Waiting => "not created (dependsOn)".into(),
        PodPhase::Preempted => "preempted".into(),
        PodPhase::SchedulerError => "SchedulerError".into(),
        _ => {
            let rest = message
                .split_once("nodes are available: ")
                .map_or(message, |(_, r)| r);
            let end = rest
                .find(". ")
                .or_else(|| rest.find("; "))
                .unwrap_or(rest.len());
            rest[..end].trim_end_matches('.').to_string()
        }
    }
}

impl NodeReport {
    /// The node's GPUs: (resource, allocatable, allocated), by [`GPU_RESOURCES`] preference,
    /// else the GPUs of its DRA slices; GPUs shared through `Open-Gpu-Share` count allocated
    /// once a pod holds a share of them.
    pub fn gpus(&self) -> Option<(&'static str, i64, i64)> {
        if let Some(g) = self.gpu_share.as_ref().filter(|g| g.shared) {
            let (busy, total) = g.gpus_in_use();
            return Some((crate::model::gpu_share::GPU_COUNT, total, busy));
        }
        (GPU_RESOURCES.iter())
            .find_map(|r| {
                self.allocatable
                    .get(*r)
                    .map(|t| (*r, *t, self.allocated.get(*r).copied().unwrap_or(0)))
            })
            .or_else(|| (self.dra_gpus).map(|(total, used)| (GPU_RESOURCES[0], total, used)))
    }
}

impl ScenarioReport {
    /// Only where each pod went and the nodes (pools, GPUs): what the override effect compares
    /// a run with, for the runtime-only baseline.
    pub fn placements(scenario: &Scenario, workloads: &[Pod], outcome: &Outcome) -> Self {
        let cluster = &outcome.cluster;
        let node_name = |i: usize| cluster.nodes[i].name.clone();
        ScenarioReport {
            name: scenario.name.clone(),
            file: scenario.file.display().to_string(),
            warnings: Vec::new(),
            pods: (workloads.iter().zip(&outcome.pods))
                .map(|(pod, o)| PodReport {
                    name: pod.name.clone(),
                    namespace: pod.namespace.clone(),
                    workload: pod.workload.clone(),
                    node: o.node.map(node_name),
                    status: o.phase,
                    message: String::new(),
                    verdicts: Vec::new(),
                    preempted: Vec::new(),
                    pdb_violations: 0,
                    gang: None,
                    evaluated_nodes: None,
                    feasible_nodes: None,
                    extended_resource_claim_status: None,
                    gpu_indices: Vec::new(),
                })
                .collect(),
            preempted_existing_pods: Vec::new(),
            override_effects: Vec::new(),
            timeline: Vec::new(),
            gangs: Vec::new(),
            stuck_workloads: Vec::new(),
            kueue: None,
            dra_claims: Vec::new(),
            gpu_share_fragmentation: None,
            nodes: node_reports(scenario, outcome, false, None),
        }
    }

    /// The report of `workloads` (the scenario's, or its override-free baseline) scheduled
    /// into `outcome`.
    pub fn new(scenario: &Scenario, workloads: &[Pod], outcome: &Outcome) -> Self {
        let cluster = &outcome.cluster;
        let node_name = |i: usize| cluster.nodes[i].name.clone();
        let extended = super::dra::ExtendedClaims::new(&outcome.dra_claims);
        let pods: Vec<PodReport> = workloads
            .iter()
            .zip(&outcome.pods)
            .zip(&outcome.gpu_indices)
            .map(|((pod, o), gpus)| PodReport {
                name: pod.name.clone(),
                namespace: pod.namespace.clone(),
                workload: pod.workload.clone(),
                node: o.node.map(node_name),
                status: o.phase,
                message: o.message.clone(),
                verdicts: match (&o.diagnosis, o.phase) {
                    (Some(d), PodPhase::Unschedulable) => verdicts(d, &node_name),
                    _ => Vec::new(),
                },
                preempted: (o.victims.iter())
                    .map(|&v| victim_key(workloads, &scenario.existing_pods, v))
                    .collect(),
                pdb_violations: o.pdb_violations,
                gang: o.gang.clone(),
                evaluated_nodes: o.evaluated.map(|e| e.nodes),
                feasible_nodes: o.evaluated.map(|e| e.feasible),
                extended_resource_claim_status: extended.status_of(pod),
                gpu_indices: gpus.clone(),
            })
            .collect();
        let gpu_share =
            super::gpu_share::GpuShareView::new(workloads, &scenario.existing_pods, outcome);
        let nodes = node_reports(scenario, outcome, true, gpu_share.as_ref());
        ScenarioReport {
            name: scenario.name.clone(),
            file: scenario.file.display().to_string(),
            warnings: (scenario.warnings.iter().cloned())
                .chain(blocked_eviction_warnings(&outcome.timeline))
                .collect(),
            stuck_workloads: stuck_workloads(workloads, &pods),
            kueue: (scenario.kueue.as_ref())
                .map(|k| super::kueue::KueueReport::new(k, &workload_pods(&pods))),
            dra_claims: super::dra::claims(&outcome.dra_claims),
            gpu_share_fragmentation: gpu_share.map(|g| g.fragmentation),
            gangs: gangs(&pods),
            timeline: timeline(workloads, &outcome.timeline),
            pods,
            override_effects: Vec::new(),
            preempted_existing_pods: outcome
                .preempted_existing
                .iter()
                .map(|&i| scenario.existing_pods[i].key())
                .collect(),
            nodes,
        }
    }
}

/// The nodes as the run left them; `devices`: with their DRA devices per DeviceClass.
fn node_reports(
    scenario: &Scenario,
    outcome: &Outcome,
    devices: bool,
    gpu_share: Option<&super::gpu_share::GpuShareView>,
) -> Vec<NodeReport> {
    let cluster = &outcome.cluster;
    let inventory = &scenario.config.dra;
    let mut dra = match inventory.slices.is_empty() || !devices {
        true => BTreeMap::new(),
        false => super::dra::node_usage(inventory, &outcome.dra_claims),
    };
    (0..cluster.len())
        .map(|i| {
            let dra = dra.remove(&cluster.nodes[i].name).unwrap_or_default();
            NodeReport {
                name: cluster.nodes[i].name.clone(),
                pool: cluster.nodes[i].pool().to_string(),
                gpu_product: cluster.nodes[i].gpu_product().map(str::to_string),
                allocatable: cluster.allocatable_named(i),
                allocated: cluster.requested_named(i),
                dra_gpus: super::dra::gpus(inventory, &dra),
                dra,
                gpu_share: gpu_share.and_then(|g| g.nodes[i].clone()),
            }
        })
        .collect()
}

/// One timeline step in the report.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimelineStep {
    pub step: String,
    /// Pods per status after the step.
    pub pods: BTreeMap<String, usize>,
    /// Pods whose status or node the step changed, in input order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<PodChange>,
    /// Evictions of a `drain` that the API server refused (a PodDisruptionBudget): the pods
    /// stay on their cordoned node.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub blocked_evictions: Vec<crate::sched::simulation::BlockedEviction>,
}

/// One warning per eviction a drain could not make, as `kubectl drain` reports it.
fn blocked_eviction_warnings(checkpoints: &[Checkpoint]) -> impl Iterator<Item = String> + '_ {
    checkpoints.iter().flat_map(|c| {
        c.blocked_evictions.iter().map(move |b| {
            format!(
                "timeline step {:?}: drain of node {} could not evict pod {}: {}",
                c.name, b.node, b.pod, b.message
            )
        })
    })
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodChange {
    /// `namespace/name`.
    pub pod: String,
    pub before: String,
    pub after: String,
    /// The pod's message after the step, when it is not running.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
}

fn timeline(workloads: &[Pod], checkpoints: &[Checkpoint]) -> Vec<TimelineStep> {
    type State = Option<(PodPhase, Option<String>, String)>;
    let state = |s: &State| match s {
        None => "not created yet".to_string(),
        Some((phase, Some(n), _)) => format!("{phase:?} on {n}"),
        Some((phase, None, _)) => format!("{phase:?}"),
    };
    let placement = |s: &State| s.as_ref().map(|(phase, node, _)| (*phase, node.clone()));
    let mut out = Vec::new();
    let mut before: Option<&Checkpoint> = None;
    for c in checkpoints {
        let mut pods = BTreeMap::new();
        for (phase, _, _) in c.pods.iter().flatten() {
            *pods.entry(format!("{phase:?}")).or_default() += 1;
        }
        let changes = match before {
            None => Vec::new(),
            Some(b) => workloads
                .iter()
                .zip(b.pods.iter().zip(&c.pods))
                .filter(|(_, (old, new))| placement(old) != placement(new))
                .map(|(pod, (old, new))| PodChange {
                    pod: pod.key(),
                    before: state(old),
                    after: state(new),
                    message: match new {
                        Some((phase, _, m)) if *phase != PodPhase::Scheduled => m.clone(),
                        _ => String::new(),
                    },
                })
                .collect(),
        };
        out.push(TimelineStep {
            step: c.name.clone(),
            pods,
            changes,
            blocked_evictions: c.blocked_evictions.clone(),
        });
        before = Some(c);
    }
    out
}

/// Each gang once, in order of first appearance, as its last attempt left it.
fn gangs(pods: &[PodReport]) -> Vec<GangNote> {
    let mut out: Vec<GangNote> = Vec::new();
    for note in pods.iter().filter_map(|p| p.gang.as_ref()) {
        match out.iter_mut().find(|g| g.pod_group == note.pod_group) {
            Some(g) => *g = note.clone(),
            None => out.push(note.clone()),
        }
    }
    out
}

/// A workload (TrainJob, Determined task) whose pods are only partly placed. Without a gang
/// policy kube-scheduler binds pods one by one, so the bound pods hold their resources while
/// the job waits for the rest (a distributed job runs only when all its pods do).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StuckWorkload {
    pub workload: String,
    pub namespace: String,
    pub pods: usize,
    pub scheduled: usize,
    /// Pods that ran to completion (initializers).
    pub succeeded: usize,
    /// Pods unschedulable, gated, preempted or never created.
    pub pending: usize,
    /// Extended resources (GPUs, MIG slices, …) the bound pods hold, by name.
    pub holding: ResourceList,
}

/// Workloads with at least one bound pod and at least one pod that is not running.
fn stuck_workloads(workloads: &[Pod], pods: &[PodReport]) -> Vec<StuckWorkload> {
    let mut stuck: Vec<StuckWorkload> = Vec::new();
    // Each workload's place in `stuck` (first-seen order), found without scanning it.
    let mut index: HashMap<(&str, &str), usize> = HashMap::new();
    for (pod, report) in workloads.iter().zip(pods) {
        let Some(name) = &pod.workload else { continue };
        let i = match index.get(&(pod.namespace.as_str(), name.as_str())) {
            Some(&i) => i,
            None => {
                index.insert((pod.namespace.as_str(), name.as_str()), stuck.len());
                stuck.push(StuckWorkload {
                    workload: name.clone(),
                    namespace: pod.namespace.clone(),
                    pods: 0,
                    scheduled: 0,
                    succeeded: 0,
                    pending: 0,
                    holding: ResourceList::new(),
                });
                stuck.len() - 1
            }
        };
        let w = &mut stuck[i];
        w.pods += 1;
        match report.status {
            PodPhase::Scheduled => {
                w.scheduled += 1;
                for (resource, &q) in &pod.requests {
                    if resource.contains('/') {
                        *w.holding.entry(resource.clone()).or_default() += q;
                    }
                }
            }
            PodPhase::Succeeded => w.succeeded += 1,
            _ => w.pending += 1,
        }
    }
    stuck.retain(|w| w.scheduled > 0 && w.pending > 0);
    stuck
}

/// The `namespace/name` of a preempted pod by id (workload pods count up from 0, existing
/// pods down from `usize::MAX`).
fn victim_key(workloads: &[Pod], existing: &[Pod], id: usize) -> String {
    match workloads.get(id) {
        Some(p) => p.key(),
        None => existing
            .get(usize::MAX - id)
            .map(|p| p.key())
            .unwrap_or_default(),
    }
}

/// The diagnosis as verdicts: one per distinct status, with the nodes that got it.
fn verdicts(d: &Diagnosis, node_name: &dyn Fn(usize) -> String) -> Vec<Verdict> {
    let mut nodes: Option<Vec<Vec<String>>> =
        (!d.node_status.is_empty()).then(|| vec![Vec::new(); d.statuses.len()]);
    if let Some(lists) = &mut nodes {
        for (node, &s) in d.node_status.iter().enumerate() {
            lists[s as usize].push(node_name(node));
        }
    }
    let mut nodes = nodes.map(Vec::into_iter);
    d.statuses
        .iter()
        .zip(d.status_counts().iter().copied())
        .map(|(s, count)| (s, count, nodes.as_mut().and_then(Iterator::next)))
        .filter(|(_, count, _)| *count > 0)
        .map(|(s, count, nodes)| Verdict {
            plugin: s.plugin.to_string(),
            code: s.code,
            reasons: s.reasons.iter().map(|r| r.to_string()).collect(),
            count,
            nodes,
        })
        .collect()
}

/// What a TrainJob's overrides did to its placement: the same scenario scheduled with every
/// TrainJob's overrides and with none (runtime only), compared pod by pod.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OverrideEffect {
    pub train_job: String,
    pub namespace: String,
    pub with_overrides: Placement,
    pub without_overrides: Placement,
    /// Pods that are scheduled only without the overrides.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub became_unschedulable: Vec<String>,
    /// Pods that are scheduled only with the overrides.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub became_schedulable: Vec<String>,
    /// Pods scheduled either way whose pool or GPU product differs: `from → to` with counts.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub moved: Vec<Move>,
    /// The changes in plain words.
    pub summary: String,
}

/// Where a TrainJob's pods are.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Placement {
    pub pods: usize,
    /// Pods placed on a node (running, or ran to completion).
    pub scheduled: usize,
    /// Scheduled pods per node pool.
    pub pools: BTreeMap<String, usize>,
    /// Scheduled pods per GPU product (GPU nodes only).
    pub gpu_products: BTreeMap<String, usize>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Move {
    pub from: String,
    pub to: String,
    pub pods: usize,
}

/// A report's pods by job and its nodes by name, so that comparing every job of a
/// cluster-sized run reads each job's pods once instead of scanning the report per job.
pub struct ReportIndex<'r> {
    /// Namespace → job → pods.
    pods: HashMap<&'r str, HashMap<&'r str, Vec<&'r PodReport>>>,
    nodes: HashMap<&'r str, &'r NodeReport>,
}

impl<'r> ReportIndex<'r> {
    pub fn new(report: &'r ScenarioReport) -> Self {
        let mut pods: HashMap<&str, HashMap<&str, Vec<&PodReport>>> = HashMap::new();
        for p in &report.pods {
            if let Some(job) = &p.workload {
                let jobs = pods.entry(p.namespace.as_str()).or_default();
                jobs.entry(job.as_str()).or_default().push(p);
            }
        }
        let mut nodes = HashMap::new();
        for n in &report.nodes {
            nodes.entry(n.name.as_str()).or_insert(n);
        }
        ReportIndex { pods, nodes }
    }

    fn pods_of(&self, namespace: &str, job: &str) -> &[&'r PodReport] {
        (self.pods.get(namespace))
            .and_then(|jobs| jobs.get(job))
            .map_or(&[], Vec::as_slice)
    }

    /// The pool and GPU product of the node a pod was placed on.
    fn placed_on(&self, p: &PodReport) -> Option<(String, Option<String>)> {
        // An initializer that ran to completion was placed too.
        let placed = matches!(p.status, PodPhase::Scheduled | PodPhase::Succeeded);
        let node = p.node.as_ref().filter(|_| placed)?;
        let n = self.nodes.get(node.as_str())?;
        Some((n.pool.clone(), n.gpu_product.clone()))
    }
}

impl OverrideEffect {
    /// Compares the pods of `job` in two reports of the same scenario.
    pub fn compare(job: &str, namespace: &str, with: &ReportIndex, without: &ReportIndex) -> Self {
        let (a, b) = (
            with.pods_of(namespace, job),
            without.pods_of(namespace, job),
        );
        let where_of = |r: &ReportIndex, p: &PodReport| r.placed_on(p);
        let placement = |r: &ReportIndex, pods: &[&PodReport]| {
            let mut pl = Placement {
                pods: pods.len(),
                ..Default::default()
            };
            for p in pods {
                if let Some((pool, gpu)) = where_of(r, p) {
                    pl.scheduled += 1;
                    *pl.pools.entry(pool).or_default() += 1;
                    if let Some(g) = gpu {
                        *pl.gpu_products.entry(g).or_default() += 1;
                    }
                }
            }
            pl
        };
        let mut became_unschedulable = Vec::new();
        let mut became_schedulable = Vec::new();
        let mut moves: BTreeMap<(String, String), usize> = BTreeMap::new();
        let label = |(pool, gpu): &(String, Option<String>)| match gpu {
            Some(g) => format!("{pool} ({g})"),
            None => pool.clone(),
        };
        for p in a {
            let base = b.iter().find(|q| q.name == p.name);
            let now = where_of(with, p);
            let before = base.and_then(|q| where_of(without, q));
            match (&before, &now) {
                (Some(_), None) => became_unschedulable.push(p.name.clone()),
                (None, Some(_)) => became_schedulable.push(p.name.clone()),
                (Some(x), Some(y)) if x != y => {
                    *moves.entry((label(x), label(y))).or_default() += 1
                }
                _ => {}
            }
        }
        let moved: Vec<Move> = moves
            .into_iter()
            .map(|((from, to), pods)| Move { from, to, pods })
            .collect();
        let mut parts = Vec::new();
        if !became_unschedulable.is_empty() {
            parts.push(format!(
                "{} pod(s) no longer scheduled",
                became_unschedulable.len()
            ));
        }
        if !became_schedulable.is_empty() {
            parts.push(format!(
                "{} pod(s) scheduled only with the overrides",
                became_schedulable.len()
            ));
        }
        for m in &moved {
            parts.push(format!(
                "{} pod(s) moved from {} to {}",
                m.pods, m.from, m.to
            ));
        }
        let summary = if parts.is_empty() {
            "no change in placement".to_string()
        } else {
            parts.join("; ")
        };
        OverrideEffect {
            train_job: job.to_string(),
            namespace: namespace.to_string(),
            with_overrides: placement(with, a),
            without_overrides: placement(without, b),
            became_unschedulable,
            became_schedulable,
            moved,
            summary,
        }
    }
}

/// What kube-scheduler did with each workload's pods, by (namespace, workload): a TrainJob's
/// pods carry its name as their workload, a plain pod is its own. For the Kueue report.
fn workload_pods(pods: &[PodReport]) -> BTreeMap<(String, String), super::kueue::WorkloadPods> {
    let mut per_workload: BTreeMap<(&str, &str), Vec<&PodReport>> = BTreeMap::new();
    for p in pods {
        let w = p.workload.as_deref().unwrap_or(&p.name);
        per_workload.entry((&p.namespace, w)).or_default().push(p);
    }
    let done = |p: &PodReport| matches!(p.status, PodPhase::Scheduled | PodPhase::Succeeded);
    (per_workload.into_iter())
        .map(|((ns, w), list)| {
            let pending = list.iter().find(|p| !done(p));
            let side = super::kueue::SchedulerSide {
                pods: list.len(),
                scheduled: list.iter().filter(|p| done(p)).count(),
                admitted_but_unschedulable: pending.is_some(),
                message: pending.map(|p| p.message.clone()).unwrap_or_default(),
            };
            let pods = (list.iter())
                .map(|p| format!("{}/{}", p.namespace, p.name))
                .collect();
            (
                (ns.to_string(), w.to_string()),
                super::kueue::WorkloadPods { side, pods },
            )
        })
        .collect()
}
