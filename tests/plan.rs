//! `schedsim plan`: hand-computed answers, a case where placement is not monotone in the
//! nodes added, the search against a brute-force scan, determinism and bad input.

mod common;

use std::path::PathBuf;

use common::cli::{ok_with_threads, schedsim, tempdir};
use schedsim::load::LoadOptions;
use schedsim::load::plan::PlanLoader;
use schedsim::plan::removal::RemovalStatus;
use schedsim::plan::report::{AddReport, Status};
use schedsim::plan::{PlanReport, SearchOptions, goal, plan};

fn plan_of(file: &str) -> PlanReport {
    let options = LoadOptions::default();
    let mut loader = PlanLoader::new(&options);
    let (targets, errors) = loader.targets(&[PathBuf::from(file)]);
    assert!(errors.is_empty(), "{errors:?}");
    plan(&mut loader, &targets[0], SearchOptions::default()).unwrap()
}

/// The plan's nodes to add.
fn adding(file: &str) -> AddReport {
    plan_of(file).add.expect("the plan has candidates")
}

/// `schedsim plan FILE --format table`, its reports into FILE's folder: the exit code and what
/// it printed (stdout, then stderr).
fn plan_cli(file: &std::path::Path) -> (Option<i32>, String) {
    let dir = file.parent().unwrap();
    let o = schedsim(&[
        "plan",
        file.to_str().unwrap(),
        "--format",
        "table",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let printed = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code(), printed)
}

fn count(r: &AddReport, candidate: &str) -> u32 {
    r.answer.as_ref().unwrap().added[candidate]
}

/// `scenarios/plan-gpu-nodes.yaml`, worked by hand in its comment.
#[test]
fn the_cheapest_mix_of_a100_and_t4_nodes() {
    let r = adding("scenarios/plan-gpu-nodes.yaml");
    assert_eq!(r.status, Status::Optimal);
    assert_eq!((count(&r, "a100"), count(&r, "t4")), (2, 3));
    assert!((r.answer.as_ref().unwrap().cost - 79.04).abs() < 1e-9);
    let alone: Vec<(String, Option<u32>, bool)> = (r.per_candidate.iter())
        .map(|c| (c.candidate.clone(), c.count, c.proven))
        .collect();
    assert_eq!(
        alone,
        [("a100".into(), Some(4), true), ("t4".into(), None, true)]
    );
    // T4s alone: the trainers' group (A100 nodes only) is short of GPUs at any count.
    assert_eq!(
        r.per_candidate[1].short_of_at_most.as_deref(),
        Some("nvidia.com/gpu")
    );
    // One node fewer of either: pods pend, with kube-scheduler's message.
    assert_eq!(r.why_not_fewer.len(), 2);
    for f in &r.why_not_fewer {
        let reached = f.reached.as_ref().unwrap();
        assert!(reached.pending_pods >= 1 && !reached.met);
        assert!(
            f.pending[0]
                .message
                .starts_with("0/6 nodes are available: ")
        );
    }
}

/// `tests/data/plan/non-monotone.yaml`: a CPU node added makes more pods pend, and the search
/// still finds the cheapest point past it.
#[test]
fn placement_that_is_not_monotone_in_the_nodes_added() {
    let file = "tests/data/plan/non-monotone.yaml";
    let options = LoadOptions::default();
    let mut loader = PlanLoader::new(&options);
    let (targets, _) = loader.targets(&[PathBuf::from(file)]);
    let mut pending = |cpu: u32, gpu: u32| {
        let scenario = loader.load(&targets[0], &[cpu, gpu]).unwrap();
        goal::judge(&targets[0].spec.goal, &schedsim::simulate(&scenario)).pending_pods
    };
    assert_eq!(pending(0, 0), 1);
    assert_eq!(pending(1, 0), 2, "one more node, one more pod pending");
    assert_eq!(pending(1, 1), 1);
    assert_eq!(pending(1, 2), 0);
    let r = adding(file);
    assert_eq!(r.status, Status::Optimal);
    assert_eq!((count(&r, "cpu"), count(&r, "gpu")), (1, 2));
    // The solver walked past the failing points to it.
    let simulated = |cpu: u32, gpu: u32| {
        (r.points.iter()).any(|p| p.added["cpu"] == cpu && p.added["gpu"] == gpu && !p.met)
    };
    assert!(simulated(1, 0) && simulated(1, 1));
}

/// One candidate: the answer is the least count whose run meets the goal, as a scan of every
/// count finds it — with packing, where it meets the resource bound (3 notebooks and a
/// trainer on 2 nodes), and with kube-scheduler's default spreading, where it does not.
#[test]
fn one_candidate_equals_the_brute_force_scan() {
    let dir = tempdir("plan-scan");
    for (notebooks, trainers, spread) in [(3, 1, false), (5, 2, false), (7, 1, true), (2, 3, true)]
    {
        let scoring = match spread {
            true => "",
            // GPU bin-packing: the answers meet the resource bound, so an unsound bound
            // shows.
            false => {
                "\n    configuration: {apiVersion: kubescheduler.config.k8s.io/v1, kind: KubeSchedulerConfiguration, profiles: [{plugins: {score: {disabled: [{name: NodeResourcesBalancedAllocation}]}}, pluginConfig: [{name: NodeResourcesFit, args: {scoringStrategy: {type: MostAllocated, resources: [{name: nvidia.com/gpu, weight: 1}]}}}]}]}"
            }
        };
        let mut y = String::from(
            "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: scan}\nspec:\n  workloads:\n",
        );
        for i in 0..notebooks {
            y += &format!(
                "    - {{apiVersion: v1, kind: Pod, metadata: {{name: nb-{i}}}, spec: {{containers: [{{name: c, image: i, resources: {{requests: {{cpu: '2', nvidia.com/gpu: 2}}, limits: {{nvidia.com/gpu: 2}}}}}}]}}}}\n"
            );
        }
        for i in 0..trainers {
            y += &format!(
                "    - {{apiVersion: v1, kind: Pod, metadata: {{name: tr-{i}}}, spec: {{containers: [{{name: c, image: i, resources: {{requests: {{cpu: '8', nvidia.com/gpu: 8}}, limits: {{nvidia.com/gpu: 8}}}}}}]}}}}\n"
            );
        }
        y += &format!(
            "  scheduler:\n    seed: 3{scoring}\n  plan:\n    candidates:\n      - name: gpu\n        max: 6\n        template: {{status: {{allocatable: {{cpu: '32', memory: 64Gi, pods: '110', nvidia.com/gpu: '8'}}}}}}\n"
        );
        let file = dir.join("scan.yaml");
        std::fs::write(&file, &y).unwrap();
        let options = LoadOptions::default();
        let mut loader = PlanLoader::new(&options);
        let (targets, errors) = loader.targets(std::slice::from_ref(&file));
        assert!(errors.is_empty(), "{errors:?}");
        let t = &targets[0];
        let scan = (0..=6u32).find(|&k| {
            let scenario = loader.load(t, &[k]).unwrap();
            goal::judge(&t.spec.goal, &schedsim::simulate(&scenario)).met
        });
        let r = plan(&mut loader, t, SearchOptions::default())
            .unwrap()
            .add
            .unwrap();
        assert_eq!(r.answer.as_ref().map(|a| a.added["gpu"]), scan, "{y}");
    }
}

#[test]
fn the_report_is_the_same_at_any_thread_count() {
    let args = [
        "plan",
        "tests/data/plan/non-monotone.yaml",
        "--format",
        "json",
    ];
    let one = ok_with_threads(&args, "1");
    assert_eq!(one, ok_with_threads(&args, "2"));
    assert!(
        String::from_utf8(one)
            .unwrap()
            .contains("\"status\": \"optimal\"")
    );
}

#[test]
fn a_bad_plan_names_its_field() {
    let dir = tempdir("plan-bad");
    let file = dir.join("bad.yaml");
    let text = std::fs::read_to_string("tests/data/plan/non-monotone.yaml")
        .unwrap()
        .replace("        max: 3\n        template:\n          metadata: {labels: {node-role: cpu}}", "        min: 4\n        max: 3\n        template:\n          metadata: {labels: {node-role: cpu}}");
    std::fs::write(&file, text).unwrap();
    let (code, printed) = plan_cli(&file);
    assert_eq!(code, Some(2));
    let err = &printed;
    assert!(
        err.contains("bad.yaml:")
            && err.contains("spec.plan.candidates[0].min: min 4 is above max 3"),
        "{err}"
    );
}

/// `spec.plan.expect`: met by the bundled plan; a tighter limit exits 1 and names it.
#[test]
fn plan_expectations_gate_ci() {
    let r = plan_of("scenarios/plan-gpu-nodes.yaml");
    assert!(r.unmet.is_empty(), "{:?}", r.unmet);
    let dir = tempdir("plan-expect");
    let file = dir.join("tight.yaml");
    let text = std::fs::read_to_string("scenarios/plan-gpu-nodes.yaml")
        .unwrap()
        .replace(
            "addedAtMost: {a100: 2, t4: 3}",
            "addedAtMost: {a100: 1, t4: 3}",
        );
    std::fs::write(&file, text).unwrap();
    let (code, printed) = plan_cli(&file);
    assert_eq!(code, Some(1));
    let out = &printed;
    assert!(
        out.contains("UNMET: expected at most 1 a100 node(s) added, the answer adds 2"),
        "{out}"
    );
    // A limit on a candidate that does not exist is an input error.
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("a100: 1,", "h100: 1,");
    std::fs::write(&file, text).unwrap();
    let (code, printed) = plan_cli(&file);
    assert_eq!(code, Some(2));
    assert!(printed.contains("spec.plan.expect.addedAtMost.h100: no candidate is named \"h100\""));
}

/// The removal part of a plan read from `scenarios/plan-consolidate.yaml` with `edits`
/// (`(from, to)` text replacements) applied.
fn removal_of(
    tag: &str,
    edits: &[(&str, &str)],
    options: SearchOptions,
) -> schedsim::plan::removal::RemovalReport {
    let mut text = std::fs::read_to_string("scenarios/plan-consolidate.yaml").unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{from}");
        text = text.replace(from, to);
    }
    let file = tempdir(tag).join("s.yaml");
    std::fs::write(&file, text).unwrap();
    let load = LoadOptions::default();
    let mut loader = PlanLoader::new(&load);
    let (targets, errors) = loader.targets(std::slice::from_ref(&file));
    assert!(errors.is_empty(), "{errors:?}");
    let r = plan(&mut loader, &targets[0], options).unwrap();
    r.remove.expect("the plan has removal groups")
}

/// `scenarios/plan-consolidate.yaml`, worked in its comment: the Ray head's budget blocks its
/// GPU node; the web budget lets one CPU node go; the answer is proven by the budget bound.
#[test]
fn consolidation_honours_the_disruption_budgets() {
    let r = plan_of("scenarios/plan-consolidate.yaml").remove.unwrap();
    assert_eq!(r.nodes, ["cpu-0", "gpu-0"]);
    assert_eq!(r.status, RemovalStatus::Optimal);
    assert!((r.savings - 4.296).abs() < 1e-9 && (r.upper_bound_savings - 4.296).abs() < 1e-9);
    let blocked: Vec<(&str, &str, &str)> = (r.blocked.iter())
        .map(|b| (b.node.as_str(), b.reason.as_str(), b.message.as_str()))
        .collect();
    assert_eq!(
        blocked,
        [(
            "gpu-1",
            "NotEnoughPdb",
            "not enough pod disruption budget to move ml/ray-head-0"
        )]
    );
    // Every pod of a removed node lands on a node that stays; DaemonSet pods go with theirs.
    assert!(!r.moves.is_empty());
    for m in &r.moves {
        assert!(
            r.nodes.contains(&m.from) && !r.nodes.contains(&m.to),
            "{m:?}"
        );
        assert!(!m.pod.starts_with("monitoring/"), "{m:?}");
    }
    assert!(r.moves.iter().any(|m| m.pod.starts_with("ml/notebooks-")));
    insta::assert_snapshot!(schedsim::plan::report::render(&[plan_of(
        "scenarios/plan-consolidate.yaml"
    )]));
}

/// A budget that allows no disruption blocks every node with one of its pods; without the
/// web budget, capacity alone limits the CPU nodes, and the next node says why.
#[test]
fn budgets_and_capacity_limit_the_cpu_nodes() {
    let none = removal_of(
        "consolidate-web-zero",
        &[("minAvailable: 3", "maxUnavailable: 0")],
        SearchOptions::default(),
    );
    assert_eq!(none.removed["cpu"], 0);
    assert_eq!(
        none.blocked.iter().filter(|b| b.group == "cpu").count(),
        4,
        "{:?}",
        none.blocked
    );
    let free = removal_of(
        "consolidate-no-web-budget",
        &[("minAvailable: 3", "maxUnavailable: 4")],
        SearchOptions::default(),
    );
    // Each CPU node runs a web (2.5 CPUs) and an api (2 CPUs) replica and has 3.4 CPUs free:
    // one node's pods fit on the other three, two nodes' 9 CPUs do not fit on two nodes' 6.8.
    assert_eq!(free.removed["cpu"], 1, "{free:?}");
    let why = free.why_not_more.as_ref().expect("a next node was tried");
    assert_eq!(why.group, "cpu");
    assert!(
        why.pending
            .iter()
            .any(|p| p.message.contains("Insufficient cpu")),
        "{why:?}"
    );
}

/// Pods CA will not move block their node: a bare pod (no controller), and a pod annotated
/// `safe-to-evict: "false"`; the annotation `"true"` lets even a bare pod move.
#[test]
fn drainability_rules_block_nodes() {
    let bare = "  workloads:\n    - {apiVersion: v1, kind: Pod, metadata: {name: debug, namespace: shop}, spec: {nodeSelector: {kubernetes.io/hostname: cpu-3}, containers: [{name: c, image: busybox:1.37, resources: {requests: {cpu: 100m}}}]}}\n";
    let r = removal_of(
        "consolidate-bare",
        &[
            ("  workloads:\n", bare),
            ("minAvailable: 3", "maxUnavailable: 4"),
        ],
        SearchOptions::default(),
    );
    let b = (r.blocked.iter())
        .find(|b| b.node == "cpu-3")
        .expect("cpu-3 blocked");
    assert_eq!(
        (b.reason.as_str(), b.message.as_str()),
        ("NotReplicated", "shop/debug is not replicated")
    );
    let safe = bare.replace(
        "namespace: shop}",
        "namespace: shop, annotations: {cluster-autoscaler.kubernetes.io/safe-to-evict: \"true\"}}",
    );
    let r = removal_of(
        "consolidate-safe",
        &[
            ("  workloads:\n", &safe),
            ("minAvailable: 3", "maxUnavailable: 4"),
        ],
        SearchOptions::default(),
    );
    assert!(
        r.blocked.iter().all(|b| b.node != "cpu-3"),
        "{:?}",
        r.blocked
    );
    let not_safe = bare.replace("namespace: shop}", "namespace: shop, annotations: {cluster-autoscaler.kubernetes.io/safe-to-evict: \"false\"}}");
    let r = removal_of(
        "consolidate-not-safe",
        &[
            ("  workloads:\n", &not_safe),
            ("minAvailable: 3", "maxUnavailable: 4"),
        ],
        SearchOptions::default(),
    );
    let b = (r.blocked.iter())
        .find(|b| b.node == "cpu-3")
        .expect("cpu-3 blocked");
    // Not replicated comes first in CA's order.
    assert_eq!(b.reason, "NotReplicated");
}

/// Across the nodes removed together, a budget counts every pod that moves (CA's
/// remaining-budget tracker): on 16-CPU nodes capacity lets two CPU nodes go, the web budget
/// (one disruption) only one.
#[test]
fn a_budget_counts_pods_across_the_nodes_removed() {
    let bigger = ("{cpu: \"8\", memory: 32Gi", "{cpu: \"16\", memory: 32Gi");
    let r = removal_of("consolidate-16", &[bigger], SearchOptions::default());
    assert_eq!(r.removed["cpu"], 1, "{r:?}");
    assert!(r.ruled_out > 0);
    let r = removal_of(
        "consolidate-16-free",
        &[bigger, ("minAvailable: 3", "maxUnavailable: 4")],
        SearchOptions::default(),
    );
    assert_eq!(r.removed["cpu"], 2, "{r:?}");
}

/// `expect.removedAtLeast` and `savingsAtLeast` gate CI: exit 1 naming the limit.
#[test]
fn removal_expectations_gate_ci() {
    let dir = tempdir("consolidate-expect");
    let file = dir.join("s.yaml");
    let text = std::fs::read_to_string("scenarios/plan-consolidate.yaml")
        .unwrap()
        .replace(
            "  plan:\n",
            "  plan:\n    expect: {removedAtLeast: {cpu: 2}, savingsAtLeast: 5}\n",
        );
    std::fs::write(&file, text).unwrap();
    let (code, printed) = plan_cli(&file);
    assert_eq!(code, Some(1));
    let out = &printed;
    assert!(
        out.contains("UNMET: expected at least 2 cpu node(s) removable, the answer removes 1"),
        "{out}"
    );
    assert!(
        out.contains("UNMET: expected savings of at least 5.00/h, the answer saves 4.30/h"),
        "{out}"
    );
}

/// Random small clusters, every subset of their nodes judged: the answer can go, no subset
/// that can go saves more than the upper bound, and an `optimal` answer saves as much as the
/// best subset.
#[test]
fn removal_against_every_subset() {
    use rand::{RngExt, SeedableRng};
    let dir = tempdir("removal-subsets");
    let mut saving_cases = 0;
    for case in 0..24u64 {
        let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(case);
        let nodes: usize = rng.random_range(3..=5);
        let mut y = String::from(
            "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: subsets}\nspec:\n  scheduler: {seed: 2}\n  nodes:\n",
        );
        for n in 0..nodes {
            let pool = if n.is_multiple_of(2) { "a" } else { "b" };
            let cpu = rng.random_range(4..=12);
            y += &format!(
                "    - {{apiVersion: v1, kind: Node, metadata: {{name: n{n}, labels: {{karpenter.sh/nodepool: {pool}}}}}, status: {{allocatable: {{cpu: '{cpu}', memory: 64Gi, pods: '110'}}}}}}\n"
            );
        }
        let pods = rng.random_range(3..=9);
        let guarded = rng.random_range(0..=pods);
        let min_available = rng.random_range(0..=guarded);
        y += &format!(
            "  objects:\n    - {{apiVersion: policy/v1, kind: PodDisruptionBudget, metadata: {{name: web, namespace: s}}, spec: {{minAvailable: {min_available}, selector: {{matchLabels: {{app: web}}}}}}}}\n  workloads:\n"
        );
        for p in 0..pods {
            let app = if p < guarded { "web" } else { "batch" };
            let cpu = rng.random_range(1..=4);
            y += &format!(
                "    - {{apiVersion: v1, kind: Pod, metadata: {{name: p{p}, namespace: s, labels: {{app: {app}}}, ownerReferences: [{{apiVersion: apps/v1, kind: ReplicaSet, name: rs, uid: u, controller: true}}]}}, spec: {{containers: [{{name: c, image: i, resources: {{requests: {{cpu: '{cpu}'}}}}}}]}}}}\n"
            );
        }
        let (price_a, price_b) = (rng.random_range(1..=5), rng.random_range(1..=5));
        y += &format!(
            "  plan:\n    remove:\n      - {{name: a, pool: a, pricePerHour: {price_a}}}\n      - {{name: b, pool: b, pricePerHour: {price_b}}}\n"
        );
        let file = dir.join(format!("case-{case}.yaml"));
        std::fs::write(&file, &y).unwrap();
        let load = LoadOptions::default();
        let mut loader = PlanLoader::new(&load);
        let (targets, errors) = loader.targets(std::slice::from_ref(&file));
        assert!(errors.is_empty(), "{errors:?}");
        let t = &targets[0];
        let r = plan(&mut loader, t, SearchOptions::default())
            .unwrap()
            .remove
            .unwrap();
        let scenario = loader.load(t, &[]).unwrap();
        let price = |n: usize| if n.is_multiple_of(2) { price_a } else { price_b } as f64;
        let mut best = 0.0f64;
        let mut bound = 0.0;
        for mask in 0u32..(1 << nodes) {
            let set: Vec<String> = (0..nodes)
                .filter(|n| mask & (1 << n) != 0)
                .map(|n| format!("n{n}"))
                .collect();
            let (ok, b) = schedsim::plan::removal::can_go(&scenario, &t.spec.remove, &set);
            bound = b;
            if ok {
                let saved: f64 = (0..nodes).filter(|n| mask & (1 << n) != 0).map(price).sum();
                best = best.max(saved);
            }
        }
        let (ok, _) = schedsim::plan::removal::can_go(&scenario, &t.spec.remove, &r.nodes);
        assert!(ok, "case {case}: the answer {:?} cannot go\n{y}", r.nodes);
        assert!(r.savings <= best + 1e-9, "case {case}");
        assert!(
            bound + 1e-9 >= best,
            "case {case}: bound {bound} below {best}\n{y}"
        );
        saving_cases += usize::from(best > 0.0);
        if r.status == RemovalStatus::Optimal {
            assert!(
                (r.savings - best).abs() < 1e-9,
                "case {case}: optimal {} but {best}\n{y}",
                r.savings
            );
        }
    }
    assert!(
        saving_cases >= 8,
        "{saving_cases} cases where a node can go"
    );
}

/// `tests/data/plan/gang.yaml`, worked in its comment: a gang that needs two new nodes of one
/// type. One node short, the GPUs add up (the bound cannot rule it out), and the gang binds
/// all or nothing: both trainers pend where plain pods would leave one.
#[test]
fn a_gang_needs_two_nodes_of_one_type() {
    let r = adding("tests/data/plan/gang.yaml");
    assert_eq!(r.status, Status::Optimal);
    assert_eq!((count(&r, "a100"), count(&r, "t4")), (2, 0));
    let fewer = &r.why_not_fewer[0];
    assert_eq!(fewer.added["a100"], 1);
    assert_eq!(fewer.short_of, None, "simulated, not ruled out");
    assert_eq!(fewer.reached.as_ref().unwrap().pending_pods, 2);
    assert!(
        fewer
            .pending
            .iter()
            .all(|p| p.pod.starts_with("ml/trainer-"))
    );
    // The same pods without the gang: one node short leaves one pending.
    let text = std::fs::read_to_string("tests/data/plan/gang.yaml")
        .unwrap()
        .replace(", labels: {scheduling.x-k8s.io/pod-group: pretrain}", "");
    let file = tempdir("plan-no-gang").join("s.yaml");
    std::fs::write(&file, text).unwrap();
    let r = adding(file.to_str().unwrap());
    let fewer = &r.why_not_fewer[0];
    assert_eq!(fewer.reached.as_ref().unwrap().pending_pods, 1);
}

/// A candidate made from a dumped node, as cluster-autoscaler makes a template: its labels,
/// GPU taint and allocatable kept; its cordon, the autoscaler's taint and its identity gone.
#[test]
fn a_dumped_node_as_the_template() {
    let file = PathBuf::from("tests/data/plan/from-node.yaml");
    let options = LoadOptions::default();
    let mut loader = PlanLoader::new(&options);
    let (targets, errors) = loader.targets(std::slice::from_ref(&file));
    assert!(errors.is_empty(), "{errors:?}");
    let scenario = loader.load(&targets[0], &[1]).unwrap();
    let added = scenario.nodes.last().unwrap();
    assert_eq!(added.name, "plan-p4d-0");
    assert_eq!(added.labels["kubernetes.io/hostname"], "plan-p4d-0");
    assert_eq!(
        added.labels["node.kubernetes.io/instance-type"],
        "p4d.24xlarge"
    );
    let taints: Vec<&str> = added.taints.iter().map(|t| t.key.as_str()).collect();
    assert_eq!(taints, ["nvidia.com/gpu"]);
    assert!(!added.unschedulable);
    assert_eq!(added.allocatable["cpu"], 95_690);
    let r = adding("tests/data/plan/from-node.yaml");
    assert_eq!(count(&r, "p4d"), 2);
    // A name the file does not hold is an input error at the field.
    let dir = tempdir("plan-from-node");
    std::fs::copy(
        "tests/data/plan/nodes-dump.yaml",
        dir.join("nodes-dump.yaml"),
    )
    .unwrap();
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("name: ip-10-0-1-17.ec2.internal}", "name: ip-10-0-9-9}");
    std::fs::write(dir.join("s.yaml"), text).unwrap();
    let (code, printed) = plan_cli(&dir.join("s.yaml"));
    assert_eq!(code, Some(2));
    let err = &printed;
    assert!(
        err.contains("spec.plan.candidates[0].fromNode.name: no Node named \"ip-10-0-9-9\" in \"nodes-dump.yaml\""),
        "{err}"
    );
}

/// A Kueue quota goal on `scenarios/kueue-cohort-borrowing.yaml`: team-a's four 8-GPU jobs
/// need 32 GPUs; the cohort lends it at most 8 (its borrowingLimit, team-b's lendingLimit),
/// so its nominal quota must be 24 — three steps of 8. One step fewer, train-4 waits.
#[test]
fn the_smallest_nominal_quota_that_admits_the_named_workloads() {
    let plan = "  plan:\n    goal:\n      workloadsAdmitted: [team-a/train-1, team-a/train-2, team-a/train-3, team-a/train-4]\n    candidates:\n      - name: team-a-h100\n        quota: {clusterQueue: team-a, flavor: h100, resource: nvidia.com/gpu, step: \"8\"}\n        max: 6\n";
    let text = std::fs::read_to_string("scenarios/kueue-cohort-borrowing.yaml").unwrap() + plan;
    let dir = tempdir("plan-kueue-quota");
    let file = dir.join("s.yaml");
    std::fs::write(&file, &text).unwrap();
    let r = adding(file.to_str().unwrap());
    assert_eq!(r.status, Status::Optimal);
    let a = r.answer.as_ref().unwrap();
    assert_eq!((a.added["team-a-h100"], a.nodes), (3, 0));
    assert_eq!(a.quotas[0].nominal_quota, "24");
    let fewer = &r.why_not_fewer[0];
    assert_eq!(
        fewer.reached.as_ref().unwrap().workloads_not_admitted,
        ["team-a/train-4"]
    );
    // A queue, flavor or resource the scenario does not have is an input error at the field.
    std::fs::write(
        &file,
        text.replace("flavor: h100, resource", "flavor: a100, resource"),
    )
    .unwrap();
    let (code, printed) = plan_cli(&file);
    assert_eq!(code, Some(2));
    let err = &printed;
    assert!(
        err.contains("spec.plan.candidates[0].quota: ClusterQueue \"team-a\" has no quota of \"nvidia.com/gpu\" for flavor \"a100\""),
        "{err}"
    );
}

/// `tests/data/plan/dra-gpus.yaml`, worked in its comment: DRA-backed node types, each added
/// node publishing its own copy of NVIDIA's ResourceSlice.
#[test]
fn a_dra_backed_gpu_type() {
    let r = adding("tests/data/plan/dra-gpus.yaml");
    assert_eq!(r.status, Status::Optimal);
    assert_eq!((count(&r, "a100"), count(&r, "h100")), (0, 2));
    let fewer = &r.why_not_fewer[0];
    assert_eq!(fewer.added["h100"], 1);
    assert!(
        fewer.pending[0]
            .message
            .contains("cannot allocate all claims"),
        "{:?}",
        fewer.pending
    );
    // Each added node has its own slice, as the driver on it would publish it.
    let file = PathBuf::from("tests/data/plan/dra-gpus.yaml");
    let options = LoadOptions::default();
    let mut loader = PlanLoader::new(&options);
    let (targets, _) = loader.targets(std::slice::from_ref(&file));
    let report = schedsim::simulate(&loader.load(&targets[0], &[0, 2]).unwrap());
    let nodes: Vec<&str> = (report.dra_claims.iter())
        .flat_map(|c| c.devices.iter())
        .map(|d| d.split('/').nth(1).unwrap_or_default())
        .collect();
    assert_eq!(nodes.len(), 12, "three claims of four GPUs");
    assert!(
        nodes
            .iter()
            .all(|p| *p == "plan-h100-0" || *p == "plan-h100-1"),
        "{nodes:?}"
    );
}

/// A wait goal on `tests/data/replay/two-nodes-five-jobs.yaml` (one-GPU pods arriving over
/// five minutes): each point is replayed. Worked by hand: the p95 wait (nearest rank, five
/// pods: the longest) is 17m as written; one more node lets c start at once, d wait 4m for
/// c's end, e 7m for a's; two more let c and d start, e wait 3m for c's end; three, nobody
/// waits. At most 5m: two nodes.
#[test]
fn the_fewest_nodes_for_a_p95_wait() {
    let dir = tempdir("plan-wait");
    let base = std::fs::read_to_string("tests/data/replay/two-nodes-five-jobs.yaml").unwrap();
    let plan = |goal: &str| {
        format!(
            "{base}  plan:\n    goal: {goal}\n    candidates:\n      - name: gpu\n        max: 4\n        template: {{status: {{allocatable: {{cpu: \"8\", memory: 32Gi, pods: \"110\", nvidia.com/gpu: \"1\"}}}}}}\n"
        )
    };
    let file = dir.join("s.yaml");
    std::fs::write(&file, plan("{waitP95AtMost: 5m}")).unwrap();
    let r = adding(file.to_str().unwrap());
    assert_eq!(r.status, Status::Optimal);
    assert_eq!(count(&r, "gpu"), 2);
    let waits: Vec<(u32, Option<Option<u64>>)> = (r.points.iter())
        .map(|p| (p.added["gpu"], p.wait_p95_ms))
        .collect();
    let min = |m: u64| Some(Some(m * 60_000));
    assert_eq!(waits[..3], [(0, min(17)), (1, min(7)), (2, min(3))]);
    // Per queue: the pods' queue is their namespace.
    std::fs::write(&file, plan("{queueWaitP95AtMost: {default: 8m}}")).unwrap();
    assert_eq!(count(&adding(file.to_str().unwrap()), "gpu"), 1);
    // Without spec.replay a wait goal is an input error.
    std::fs::write(
        &file,
        plan("{waitP95AtMost: 5m}").replace("  replay: {}\n", ""),
    )
    .unwrap();
    let (code, printed) = plan_cli(&file);
    assert_eq!(code, Some(2));
    assert!(printed.contains("spec.plan.goal: a wait goal needs spec.replay"));
}
