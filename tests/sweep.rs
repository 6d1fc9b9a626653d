//! `schedsim sweep` and `merge`: the matrix, determinism at any thread count, shards that
//! merge into the unsharded result, run rows, and the errors of bad variants.

mod common;

use common::cli::{chart_svg, schedsim, tempdir};

const SCENARIO: &str = "scenarios/capacity-sweep.yaml";

/// `schedsim ARGS` with `threads` rayon threads: stdout. The bundled sweep's expectations ask
/// for shares of runs that a few seeds may miss (exit 1); the output is complete either way.
fn sweep(args: &[&str], threads: &str) -> String {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_schedsim"))
        .args(args)
        .env("RAYON_NUM_THREADS", threads)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn the_matrix_runs_every_combination_times_seeds() {
    let out = tempdir("sweep-matrix");
    let json = sweep(
        &[
            "sweep",
            SCENARIO,
            "--seeds",
            "3",
            "--format",
            "json",
            "--out",
            out.to_str().unwrap(),
        ],
        "2",
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let variants = v["scenarios"][0]["variants"].as_array().unwrap();
    assert_eq!(variants.len(), 12);
    assert_eq!(
        variants[0]["name"],
        "inventory=6xA100,overrides=applied,profile=default"
    );
    assert!(variants.iter().all(|v| v["aggregate"]["runs"] == 3));
    // The A100 pin of the overrides strands the fine-tune on H100s; without it, it can run.
    let placed = |name: &str| {
        variants.iter().find(|v| v["name"] == name).unwrap()["summary"]["jobPlacedProbability"]
            ["ml/llm-finetune"]
            .as_f64()
            .unwrap()
    };
    assert_eq!(
        placed("inventory=6xH100,overrides=applied,profile=default"),
        0.0
    );
    assert!(placed("inventory=6xH100,overrides=none,profile=gpu-bin-packing") > 0.0);
    // Reports are written too.
    assert!(out.join("sweep.json").is_file() && out.join("sweep.txt").is_file());
}

#[test]
fn results_are_identical_at_any_thread_count() {
    let out = tempdir("sweep-threads");
    let args = [
        "sweep",
        SCENARIO,
        "--seeds",
        "6",
        "--pool-jitter",
        "0.3",
        "--format",
        "json",
        "--out",
        out.to_str().unwrap(),
    ];
    let one = sweep(&args, "1");
    assert_eq!(one, sweep(&args, "2"));
    assert_eq!(one, sweep(&args, "4"));
}

#[test]
fn merged_shards_equal_the_unsharded_sweep() {
    let out = tempdir("sweep-shards");
    let o = out.to_str().unwrap();
    let base = [
        "sweep",
        SCENARIO,
        "--seeds",
        "5",
        "--set",
        "profile=default",
        "--format",
        "json",
    ];
    let whole = sweep(&[&base[..], &["--out", o]].concat(), "2");
    let mut files = Vec::new();
    for i in 0..3 {
        let shard = format!("{i}/3");
        let text = sweep(&[&base[..], &["--shard", &shard, "--out", o]].concat(), "2");
        assert!(text.contains(&format!("\"shard\": \"{i}/3\"")));
        let file = out.join(format!("shard-{i}.json"));
        std::fs::write(&file, text).unwrap();
        files.push(file.to_str().unwrap().to_string());
    }
    let mut args = vec!["merge", "--format", "json", "--out", o];
    args.extend(files.iter().map(String::as_str));
    assert_eq!(sweep(&args, "2"), whole);
}

#[test]
fn run_rows_are_one_json_line_per_run_in_run_order() {
    let out = tempdir("sweep-runs");
    let rows = out.join("runs.jsonl");
    sweep(
        &[
            "sweep",
            SCENARIO,
            "--seeds",
            "2",
            "--set",
            "inventory=4xA100",
            "--runs",
            rows.to_str().unwrap(),
            "--format",
            "json",
            "--out",
            out.to_str().unwrap(),
        ],
        "2",
    );
    let text = std::fs::read_to_string(rows).unwrap();
    let runs: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(runs.len(), 2 * 2 * 2);
    let order: Vec<u64> = runs.iter().map(|r| r["run"].as_u64().unwrap()).collect();
    assert!(order.windows(2).all(|w| w[0] < w[1]), "{order:?}");
    assert!(runs.iter().all(|r| {
        r["variant"]
            .as_str()
            .unwrap()
            .starts_with("inventory=4xA100")
    }));
}

#[test]
fn bad_selections_and_patches_are_errors() {
    let o = schedsim(&["sweep", SCENARIO, "--set", "inventry=6xA100"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains(
        "no scenario has a variant dimension \"inventry\" (did you mean \"inventory\"?)"
    ));
    let o = schedsim(&["sweep", SCENARIO, "--set", "inventory=6xA10"]);
    assert!(
        String::from_utf8_lossy(&o.stderr)
            .contains("has no option \"6xA10\" (did you mean \"6xA100\"?)")
    );
    // A patch that breaks the scenario is reported at the patch's own line.
    let dir = tempdir("sweep-bad-patch");
    let file = dir.join("s.yaml");
    std::fs::write(
        &file,
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: s}\nspec:\n  nodes: []\n  variants:\n    - dimension: d\n      options:\n        - name: bad\n          patch:\n            nodes:\n              - {apiVersion: v1, kind: Node, metadata: {name: node-x}, spec: {unschedulable: maybe}}\n",
    )
    .unwrap();
    let o = schedsim(&[
        "sweep",
        file.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(&format!(
            "{}:12:94: spec.nodes[0].spec.unschedulable: invalid type: string \"maybe\", expected a boolean",
            file.display()
        )),
        "{stderr}"
    );
}

#[test]
fn perturbations_keep_their_promises() {
    use rand::SeedableRng;
    use schedsim::sched::plan::Step;
    use schedsim::sweep::{Perturbations, perturb::perturb};
    let (scenarios, errors) = schedsim::load::load_sweeps(
        &["scenarios/capacity-sweep.yaml".into()],
        &Default::default(),
        &vec![("inventory".into(), vec!["6xA100".into()])],
    );
    assert!(errors.is_empty(), "{errors:?}");
    let s = &scenarios[0].variants[0].scenario;
    let pods_in_order = |steps: &[Step]| -> Vec<usize> {
        steps
            .iter()
            .filter_map(|st| match st {
                Step::Schedule { pod, .. } => Some(*pod),
                _ => None,
            })
            .collect()
    };
    for seed in 0..20 {
        let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(seed);
        let p = Perturbations {
            shuffle_arrivals: true,
            node_failure_probability: 0.0,
            pool_jitter: 0.5,
        };
        let w = perturb(s, &p, &mut rng);
        // A permutation of the pods that keeps each workload item's pods together.
        let order = pods_in_order(&w.steps);
        let mut sorted = order.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, pods_in_order(&s.steps));
        for unit in &s.units {
            let pods = pods_in_order(&s.steps[unit.clone()]);
            let at = order.iter().position(|p| *p == pods[0]).unwrap();
            assert_eq!(order[at..at + pods.len()], pods[..], "seed {seed}");
        }
        // ±50% of six nodes, names unique.
        assert!((3..=9).contains(&w.nodes.len()), "{}", w.nodes.len());
        let mut names: Vec<&str> = w.nodes.iter().map(|n| n.name.as_str()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), w.nodes.len());
    }
    // Every node down.
    let mut rng = rand::rngs::ChaCha8Rng::seed_from_u64(1);
    let all_down = Perturbations {
        node_failure_probability: 1.0,
        ..Default::default()
    };
    assert!(perturb(s, &all_down, &mut rng).nodes.is_empty());
}

/// The documented Indexed Job runs real `sweep --shard` and `merge` command lines.
#[test]
fn the_indexed_job_example_is_a_valid_job_pair() {
    let text = std::fs::read_to_string("docs/sweep-indexed-job.yaml").unwrap();
    let jobs: Vec<k8s_openapi::api::batch::v1::Job> = serde_saphyr::from_multiple(&text).unwrap();
    assert_eq!(jobs.len(), 2);
    let spec = jobs[0].spec.as_ref().unwrap();
    assert_eq!(spec.completion_mode.as_deref(), Some("Indexed"));
    assert_eq!(spec.completions, spec.parallelism);
    let args = |j: &k8s_openapi::api::batch::v1::Job| {
        let c = &j
            .spec
            .as_ref()
            .unwrap()
            .template
            .spec
            .as_ref()
            .unwrap()
            .containers[0];
        c.args.as_ref().unwrap().join(" ")
    };
    assert!(args(&jobs[0]).contains("--shard \"${JOB_COMPLETION_INDEX}/${SHARDS}\""));
    assert!(args(&jobs[1]).starts_with("schedsim merge "));
}

#[test]
fn sweep_charts_draw_one_line_per_variant() {
    let out = tempdir("sweep-charts");
    sweep(
        &[
            "sweep",
            SCENARIO,
            "--seeds",
            "2",
            "--set",
            "profile=default",
            "--charts",
            "--format",
            "json",
            "--out",
            out.to_str().unwrap(),
        ],
        "2",
    );
    let dir = out.join("capacity-sweep-sweep");
    for name in ["pending-pods-cdf", "gpu-allocation-cdf"] {
        let svg = chart_svg(&dir, name);
        // Six variants: six lines (2 px; the mesh and axes are 1 px) and six legend entries.
        let lines = svg
            .split("<polyline")
            .filter(|p| {
                p.split('>')
                    .next()
                    .is_some_and(|a| a.contains("stroke-width=\"2\""))
            })
            .count();
        assert_eq!(lines, 6, "{name}");
        assert!(svg.contains("inventory=6xH100,overrides=none,profile=default"));
    }
    let page = std::fs::read_to_string(out.join("sweep.html")).unwrap();
    assert_eq!(page.matches("<svg").count(), 2);
    assert!(page.contains("<pre>Sweep capacity-sweep"));
}

#[test]
fn unmet_sweep_expectations_exit_1() {
    let out = tempdir("sweep-unmet");
    let o = schedsim(&[
        "sweep",
        "tests/data/sweep-unmet.yaml",
        "--format",
        "json",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains(
        "unmet: sweep-unmet [base]: everything placed in half the runs held in 0 runs, needs 50%"
    ));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let e = &v["scenarios"][0]["variants"][0]["expectations"][0];
    assert_eq!(
        (e["metRuns"].as_u64(), e["met"].as_bool()),
        (Some(0), Some(false))
    );
}

#[test]
fn a_sweep_varies_kueue_quotas_and_counts_suspended_trainjobs_as_not_placed() {
    let out = sweep(
        &[
            "sweep",
            "tests/data/kueue/quota-sweep.yaml",
            "--format",
            "json",
        ],
        "1",
    );
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    let variants = r["scenarios"][0]["variants"].as_array().unwrap();
    let aggregate = |name: &str| {
        (variants.iter())
            .find(|v| v["name"] == name)
            .unwrap_or_else(|| panic!("no variant {name}"))["aggregate"]
            .clone()
    };
    let small = aggregate("quota=8");
    assert_eq!(small["allPlaced"], 0, "{small}");
    assert_eq!(
        (
            small["jobsPlaced"]["ml/a"].as_u64(),
            small["jobsPlaced"]["ml/b"].as_u64()
        ),
        (Some(2), Some(0))
    );
    assert_eq!(small["jobsSeen"]["ml/b"], 2);
    assert_eq!(small["pendingReasons"]["pending in Kueue"], 2);
    let large = aggregate("quota=16");
    assert_eq!(large["allPlaced"], 2, "{large}");
    assert_eq!(large["jobsPlaced"]["ml/b"], 2);
}
