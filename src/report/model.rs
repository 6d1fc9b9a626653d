//! The report model: what happened to every pod and node, in input order. This is the stable
//! JSON format documented in the README (fields may be added, never renamed or removed).

use serde::Serialize;

use crate::load::Scenario;
use crate::model::resources::ResourceList;
use crate::sched::diagnosis::Diagnosis;
use crate::sched::framework::Code;
use crate::sched::{Outcome, PodPhase};

#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub scenarios: Vec<ScenarioReport>,
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
}

/// One plugin verdict shared by a set of nodes.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    pub plugin: String,
    pub code: Code,
    pub reasons: Vec<String>,
    pub nodes: Vec<String>,
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
}

impl ScenarioReport {
    pub fn new(scenario: &Scenario, outcome: &Outcome) -> Self {
        let cluster = &outcome.cluster;
        let node_name = |i: usize| cluster.nodes[i].name.clone();
        let pods = scenario
            .workloads
            .iter()
            .zip(&outcome.pods)
            .map(|(pod, o)| PodReport {
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
                preempted: o.victims.iter().map(|&v| victim_key(scenario, v)).collect(),
            })
            .collect();
        let nodes = (0..cluster.len())
            .map(|i| NodeReport {
                name: cluster.nodes[i].name.clone(),
                pool: cluster.nodes[i].pool().to_string(),
                gpu_product: cluster.nodes[i].gpu_product().map(str::to_string),
                allocatable: cluster.allocatable_named(i),
                allocated: cluster.requested_named(i),
            })
            .collect();
        ScenarioReport {
            name: scenario.name.clone(),
            file: scenario.file.display().to_string(),
            warnings: scenario.warnings.clone(),
            pods,
            preempted_existing_pods: outcome
                .preempted_existing
                .iter()
                .map(|&i| scenario.existing_pods[i].key())
                .collect(),
            nodes,
        }
    }
}

fn victim_key(scenario: &Scenario, id: usize) -> String {
    match scenario.workloads.get(id) {
        Some(p) => p.key(),
        None => scenario
            .existing_pods
            .get(usize::MAX - id)
            .map(|p| p.key())
            .unwrap_or_default(),
    }
}

/// The diagnosis as verdicts: one per distinct status, with the nodes that got it.
fn verdicts(d: &Diagnosis, node_name: &dyn Fn(usize) -> String) -> Vec<Verdict> {
    let mut nodes: Vec<Vec<String>> = vec![Vec::new(); d.statuses.len()];
    for (node, &s) in d.node_status.iter().enumerate() {
        nodes[s as usize].push(node_name(node));
    }
    d.statuses
        .iter()
        .zip(nodes)
        .filter(|(_, nodes)| !nodes.is_empty())
        .map(|(s, nodes)| Verdict {
            plugin: s.plugin.to_string(),
            code: s.code,
            reasons: s.reasons.iter().map(|r| r.to_string()).collect(),
            nodes,
        })
        .collect()
}
