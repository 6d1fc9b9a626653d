//! `schedsim plan`: hand-computed answers, a case where placement is not monotone in the
//! nodes added, the search against a brute-force scan, determinism and bad input.

mod common;

use std::path::PathBuf;

use common::cli::{ok_with_threads, schedsim, tempdir};
use schedsim::load::LoadOptions;
use schedsim::load::plan::PlanLoader;
use schedsim::plan::report::Status;
use schedsim::plan::{PlanReport, SearchOptions, goal, plan};

fn plan_of(file: &str) -> PlanReport {
    let options = LoadOptions::default();
    let mut loader = PlanLoader::new(&options);
    let (targets, errors) = loader.targets(&[PathBuf::from(file)]);
    assert!(errors.is_empty(), "{errors:?}");
    plan(&mut loader, &targets[0], SearchOptions::default()).unwrap()
}

fn count(r: &PlanReport, candidate: &str) -> u32 {
    r.answer.as_ref().unwrap().added[candidate]
}

/// `scenarios/plan-gpu-nodes.yaml`, worked by hand in its comment.
#[test]
fn the_cheapest_mix_of_a100_and_t4_nodes() {
    let r = plan_of("scenarios/plan-gpu-nodes.yaml");
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
    let r = plan_of(file);
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
        let r = plan(&mut loader, t, SearchOptions::default()).unwrap();
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
    let o = schedsim(&[
        "plan",
        file.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
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
    let o = schedsim(&[
        "plan",
        file.to_str().unwrap(),
        "--format",
        "table",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("UNMET: expected at most 1 a100 node(s) added, the answer adds 2"),
        "{out}"
    );
    // A limit on a candidate that does not exist is an input error.
    let text = std::fs::read_to_string(&file)
        .unwrap()
        .replace("a100: 1,", "h100: 1,");
    std::fs::write(&file, text).unwrap();
    let o = schedsim(&[
        "plan",
        file.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("spec.plan.expect.addedAtMost.h100: no candidate is named \"h100\"")
    );
}
