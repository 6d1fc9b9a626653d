//! DefaultPreemption re-runs the filters that count bound pods without the victims.

use std::path::PathBuf;

use schedsim::load::{self, LoadOptions};
use schedsim::report::ScenarioReport;
use schedsim::sched::PodPhase;

#[test]
fn evicting_the_pods_behind_an_affinity_rule_helps() {
    let loaded = load::load_files(
        &[PathBuf::from("tests/data/preemption-affinity.yaml")],
        &LoadOptions::default(),
    );
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let r = schedsim::simulate(&loaded.scenarios[0]);
    let pod = |name: &str| r.pods.iter().find(|p| p.name == name).unwrap();
    assert_eq!(pod("exclusive").node.as_deref(), Some("gpu-0"));
    assert_eq!(pod("exclusive").preempted, ["default/web-0"]);
    // The existing pod's anti-affinity applies symmetrically; evicting it helps as well.
    assert_eq!(pod("db").node.as_deref(), Some("gpu-1"));
    assert_eq!(pod("db").preempted, ["default/loner"]);
    assert_eq!(
        r.preempted_existing_pods,
        ["default/web-0", "default/loner"]
    );
    // Equal priorities are no victims: the anti-affinity failure stays.
    let same = pod("same-priority");
    assert_eq!(same.status, PodPhase::Unschedulable);
    assert_eq!(
        same.message,
        "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. no new claims to deallocate, preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    );
}

/// The pod's own anti-affinity is checked before existing pods' (current upstream order), so
/// four mutually exclusive pods on three nodes say "didn't match pod anti-affinity rules".
#[test]
fn own_anti_affinity_is_checked_before_existing_pods() {
    let loaded = load::load_files(
        &[PathBuf::from("tests/data/mutual-anti-affinity.yaml")],
        &LoadOptions::default(),
    );
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let r = schedsim::simulate(&loaded.scenarios[0]);
    let placed = r.pods.iter().filter(|p| p.node.is_some()).count();
    assert_eq!(placed, 3);
    let last = r.pods.iter().find(|p| p.name == "worker-3").unwrap();
    assert_eq!(last.status, PodPhase::Unschedulable);
    assert_eq!(
        last.message,
        "0/3 nodes are available: 3 node(s) didn't match pod anti-affinity rules. no new claims to deallocate, preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod."
    );
}

/// A failed cycle is reused only for a pod that would fail alike: not for one whose labels an
/// existing pod's anti-affinity reads, nor for one of higher priority (preemption differs).
#[test]
fn alike_failures_are_shared_only_when_nothing_tells_the_pods_apart() {
    let loaded = load::load_files(
        &[PathBuf::from("tests/data/alike-failures.yaml")],
        &LoadOptions::default(),
    );
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let labels = schedsim::simulate(&loaded.scenarios[0]);
    let pod = |name: &str| labels.pods.iter().find(|p| p.name == name).unwrap();
    let pending = "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't satisfy existing pods anti-affinity rules. no new claims to deallocate, preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.";
    for name in ["red-1", "red-2"] {
        assert_eq!(pod(name).status, PodPhase::Unschedulable, "{name}");
        assert_eq!(pod(name).message, pending, "{name}");
    }
    assert_eq!(pod("blue").node.as_deref(), Some("n0"));

    let priority = schedsim::simulate(&loaded.scenarios[1]);
    let pod = |name: &str| priority.pods.iter().find(|p| p.name == name).unwrap();
    let pending = "0/2 nodes are available: 2 Insufficient cpu. no new claims to deallocate, preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod.";
    // The nodes are equal candidates: the dry run starts at a seeded random one
    // (`GetOffsetAndNumCandidates`) and the first candidate found wins the last tie.
    assert_eq!(pod("urgent").node.as_deref(), Some("n1"));
    assert_eq!(pod("urgent").preempted, ["default/filler-1"]);
    // Retried on the room left: one fits beside `urgent`, the other fails as both had.
    assert_eq!(pod("low-1").node.as_deref(), Some("n1"));
    assert_eq!(pod("low-2").message, pending);

    let claims = schedsim::simulate(&loaded.scenarios[2]);
    let pod = |name: &str| claims.pods.iter().find(|p| p.name == name).unwrap();
    let pending = "0/1 nodes are available: 1 cannot allocate all claims. still not schedulable, preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.";
    for name in ["big-1", "big-2", "big-3"] {
        assert_eq!(pod(name).status, PodPhase::Unschedulable, "{name}");
        assert_eq!(pod(name).message, pending, "{name}");
    }
    assert_eq!(pod("small").node.as_deref(), Some("a100-node-0"));
}

/// Loads a file of scenarios and checks each one's `spec.expect`; returns how many ran.
fn expectations_hold(file: &str) -> usize {
    reports_meeting_expectations(file).len()
}

/// Loads a file of scenarios, runs each and checks its `spec.expect`; returns the reports by
/// scenario name.
fn reports_meeting_expectations(file: &str) -> Vec<(String, ScenarioReport)> {
    let loaded = load::load_files(&[PathBuf::from(file)], &LoadOptions::default());
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let mut failures = Vec::new();
    let mut reports = Vec::new();
    for s in &loaded.scenarios {
        let report = schedsim::simulate(s);
        for v in schedsim::check::check(s, &report) {
            if !v.met() {
                let pods: Vec<String> = (report.pods.iter())
                    .map(|p| format!("{} {:?} {:?} {}", p.name, p.status, p.node, p.message))
                    .collect();
                failures.push(format!(
                    "{}: {:?}\n  {}",
                    s.name,
                    v.failures,
                    pods.join("\n  ")
                ));
            }
        }
        reports.push((s.name.clone(), report));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    reports
}

/// What a preemption upstream's table expects: the pods preempted (any of the lists) and how
/// many of them a PodDisruptionBudget protected (`NumPDBViolations`).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ExpectedPreemption {
    scenario: String,
    pod: String,
    preempted: Vec<Vec<String>>,
    pdb_violations: usize,
}

/// Runs `file`'s scenarios (their `spec.expect` must hold) and checks the preemptions that
/// `expected` (a list of [`ExpectedPreemption`]) lists; returns how many it checked.
fn preemptions_hold(file: &str, expected: &str) -> usize {
    let reports = reports_meeting_expectations(file);
    let text = std::fs::read_to_string(expected).unwrap();
    let cases: Vec<ExpectedPreemption> = serde_saphyr::from_str(&text).unwrap();
    for case in &cases {
        let (_, report) = (reports.iter())
            .find(|(name, _)| *name == case.scenario)
            .unwrap_or_else(|| panic!("no scenario {}", case.scenario));
        let pod = report.pods.iter().find(|p| p.name == case.pod).unwrap();
        assert!(
            case.preempted.contains(&pod.preempted),
            "{}: preempted {:?}",
            case.scenario,
            pod.preempted
        );
        assert_eq!(pod.pdb_violations, case.pdb_violations, "{}", case.scenario);
    }
    assert_eq!(cases.len(), reports.len(), "one expectation per scenario");
    cases.len()
}

/// `pickOneNodeForPreemption`'s criteria in order, upstream's TestSelectBestCandidate: the
/// lowest highest victim priority, the lowest sum, the fewest victims, the latest start of the
/// highest-priority victims.
#[test]
fn the_best_candidate_is_picked_as_upstream_picks_it() {
    assert_eq!(
        expectations_hold("tests/data/preemption/select-best-candidate.yaml"),
        9
    );
}

/// `PodEligibleToPreemptOthers`, upstream's table: `preemptionPolicy: Never`, and a victim of
/// an earlier preemption still terminating on the pod's nominated node.
#[test]
fn eligibility_to_preempt_follows_upstream() {
    assert_eq!(
        expectations_hold("tests/data/preemption/eligibility.yaml"),
        5
    );
}

/// PodDisruptionBudgets in the dry run, upstream's TestDryRunPreemption and TestPostFilter cases
/// with budgets: the victims, NumPDBViolations (a pod in `disruptedPods` is not counted again)
/// and the node with the fewest violations.
#[test]
fn budgets_count_in_preemption_as_upstream_counts_them() {
    assert_eq!(
        preemptions_hold(
            "tests/data/preemption/pdb.yaml",
            "tests/data/preemption/pdb.expected.yaml"
        ),
        6
    );
}

/// Preemption's what-if takes a terminating victim out of PodTopologySpread's counts although
/// they never held it, as upstream's `RemovePod` does.
#[test]
fn a_terminating_victim_is_taken_out_of_the_spread_counts() {
    assert_eq!(
        expectations_hold("tests/data/preemption/terminating.yaml"),
        1
    );
}

/// Pods nominated to a node count in the filters of the pods that must yield to them
/// (`RunFilterPluginsWithNominatedPods`, upstream's TestFilterPluginsWithNominatedPods and
/// TestFindFitPredicateCallCounts with real plugins): resources and anti-affinity with them
/// added, pod affinity also without them, and preemption's dry run with them.
#[test]
fn nominated_pods_count_in_the_filters_of_pods_that_yield_to_them() {
    assert_eq!(
        preemptions_hold(
            "tests/data/preemption/nominated-preemption.yaml",
            "tests/data/preemption/nominated-preemption.expected.yaml"
        ),
        1
    );
    assert_eq!(expectations_hold("tests/data/preemption/nominated.yaml"), 7);
}

/// `candidateList` holds at most numCandidates candidates of each kind: with every candidate
/// violating a budget and numCandidates 1, the node picked is the first the dry run found (a
/// seeded draw), not the best of all nodes.
#[test]
fn violating_candidates_are_capped_at_num_candidates() {
    let file = "tests/data/preemption/violating-candidates-capped.yaml";
    let loaded = load::load_files(&[PathBuf::from(file)], &LoadOptions::default());
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let mut picked = std::collections::BTreeSet::new();
    for seed in 0..16 {
        let mut scenario = loaded.scenarios[0].clone();
        scenario.config.seed = seed;
        let r = schedsim::simulate(&scenario);
        let p = r.pods.iter().find(|p| p.name == "p").unwrap();
        assert_eq!(p.pdb_violations, 1);
        picked.insert(p.node.clone().unwrap());
    }
    assert_eq!(picked.len(), 3, "{picked:?}");
}
