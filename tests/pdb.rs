//! PodDisruptionBudgets in a drain: kubectl's retries after the replacements bind, and the
//! metamorphic relation that a budget never lets a drain evict more pods.

use std::path::PathBuf;
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use proptest::prelude::*;
use schedsim::load::{self, LoadOptions};
use schedsim::model::{Node, Pod};
use schedsim::sched::pdb::{Budget, UnhealthyPolicy};
use schedsim::sched::plan::{Event, Step};
use schedsim::sched::{PodPhase, SchedulerConfig, schedule_plan};

/// The report of the first scenario of `file`, which loads without errors.
fn simulated(file: &str) -> schedsim::report::ScenarioReport {
    let loaded = load::load_files(&[PathBuf::from(file)], &LoadOptions::default());
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    schedsim::simulate(&loaded.scenarios[0])
}

#[test]
fn a_refused_eviction_is_retried_once_a_replacement_binds() {
    let r = simulated("tests/data/pdb/drain-retry.yaml");
    for p in &r.pods {
        assert_eq!(p.status, PodPhase::Scheduled, "{}", p.name);
        assert_eq!(p.node.as_deref(), Some("n1"), "{}", p.name);
    }
    assert!(r.timeline.iter().all(|t| t.blocked_evictions.is_empty()));
    assert!(r.warnings.is_empty(), "{:?}", r.warnings);
}

fn node(i: usize) -> Node {
    Node {
        name: format!("n{i}"),
        labels: Default::default(),
        taints: Vec::new(),
        unschedulable: false,
        allocatable: [("nvidia.com/gpu".to_string(), 8), ("pods".to_string(), 110)].into(),
        pool: None,
    }
}

fn existing(i: usize, node: usize, app: &str, gpus: i64) -> Pod {
    let requests: schedsim::model::resources::ResourceList =
        [("nvidia.com/gpu".to_string(), gpus)].into();
    Pod {
        name: format!("p{i}"),
        namespace: "default".into(),
        labels: [("app".to_string(), app.to_string())].into_iter().collect(),
        node_name: Some(format!("n{node}")),
        scheduler_name: "default-scheduler".into(),
        score_requests: requests.clone().into(),
        requests: requests.into(),
        ..Default::default()
    }
}

fn budget(app: &str, min: i32) -> Budget {
    Budget {
        namespace: "default".into(),
        name: app.into(),
        selector: Some(LabelSelector {
            match_labels: Some([("app".to_string(), app.to_string())].into()),
            ..Default::default()
        }),
        min_available: Some(IntOrString::Int(min)),
        max_unavailable: None,
        unhealthy_policy: UnhealthyPolicy::IfHealthyBudget,
        pod_scales: Default::default(),
        status: None,
    }
}

/// Existing pods evicted by draining node 0.
fn evicted(nodes: usize, pods: &[Pod], budgets: Vec<Budget>) -> usize {
    let config = SchedulerConfig {
        pdbs: Arc::new(budgets),
        ..Default::default()
    };
    let steps = [
        Step::StepStart,
        Step::Event(Event::Drain(vec!["n0".into()])),
        Step::Checkpoint {
            name: "drain".into(),
        },
    ];
    let outcome = schedule_plan((0..nodes).map(node).collect(), pods, &[], &steps, &config);
    outcome.preempted_existing.len()
}

const APPS: &[&str] = &["web", "db", "batch"];

proptest! {
    /// Adding a budget never lets a drain evict more pods, and a budget that allows every
    /// disruption changes nothing.
    #[test]
    fn a_budget_never_increases_what_a_drain_evicts(
        layout in prop::collection::vec((0..3usize, 0..APPS.len(), 1..5i64), 1..10),
        nodes in 1..4usize,
        guarded in 0..APPS.len(),
        min in 0..4i32,
    ) {
        let pods: Vec<Pod> = layout
            .iter()
            .enumerate()
            .map(|(i, &(n, a, g))| existing(i, n % nodes, APPS[a], g))
            .collect();
        let without = evicted(nodes, &pods, Vec::new());
        let with = evicted(nodes, &pods, vec![budget(APPS[guarded], min)]);
        prop_assert!(with <= without, "{with} > {without}");
        prop_assert_eq!(evicted(nodes, &pods, vec![budget(APPS[guarded], 0)]), without);
    }
}

/// `canIgnorePDB`: draining a node evicts its terminating and its Pending pods although the
/// budget allows no disruption; the running pod's eviction is refused (the budget counts
/// neither of the others as healthy).
#[test]
fn terminating_and_pending_pods_are_drained_without_their_budget() {
    let r = simulated("tests/data/pdb/drain-ignores-budget.yaml");
    assert_eq!(
        r.preempted_existing_pods,
        ["default/terminating", "default/pending"]
    );
    let blocked: Vec<&str> = (r.timeline.iter())
        .flat_map(|t| &t.blocked_evictions)
        .map(|b| b.pod.as_str())
        .collect();
    assert_eq!(blocked, ["default/running-0"]);
}
