//! `schedsim fgd` against the FGD reference simulator's published results
//! (`fixtures/fgd/expected/`, from `hkust-adsl/kubernetes-scheduler-simulator` @ 8f3d641
//! `experiments/analysis/expected_results/`), and the experiment's own guarantees.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use schedsim::fgd::experiment::{Matrix, Workload, run_and_write};
use schedsim::fgd::input::read_nodes;
use schedsim::sched::gpu_share::policy::Policy;

fn fixture(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(path)
}

/// A result file's cells: (workload, policy, seed) → column → value.
type Table = HashMap<(String, String, String), Vec<Option<f64>>>;

fn read_table(path: &Path) -> Table {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader.headers().unwrap().clone();
    let first = header.iter().position(|h| h == "0").unwrap();
    let mut out = Table::new();
    for row in reader.records() {
        let row = row.unwrap();
        let key = (row[0].to_string(), row[1].to_string(), row[3].to_string());
        let values = (first..row.len())
            .map(|i| (!row[i].is_empty()).then(|| row[i].parse().unwrap()))
            .collect();
        out.insert(key, values);
    }
    out
}

/// Runs `workloads` × `policies` × `seeds` and reads back the three result files.
fn experiment(workloads: &[&str], policies: &[Policy], seeds: &[i64], out: &Path) -> [Table; 3] {
    let nodes = read_nodes(&fixture("openb/openb_node_list_gpu_node.csv")).unwrap();
    let workloads: Vec<Workload> = (workloads.iter())
        .map(|w| Workload::read(&fixture(&format!("openb/openb_pod_list_{w}.csv"))).unwrap())
        .collect();
    let matrix = Matrix {
        workloads: workloads.len(),
        policies,
        seeds,
    };
    run_and_write(out, &nodes, &workloads, &matrix, |_| true, 1.3, |_| ()).unwrap();
    ["allo", "frag", "frag_ratio"]
        .map(|f| read_table(&out.join(format!("analysis_{f}_discrete.csv"))))
}

fn expected() -> [Table; 3] {
    ["allo", "frag", "frag_ratio"]
        .map(|f| read_table(&fixture(&format!("fgd/expected/analysis_{f}_discrete.csv"))))
}

/// The largest gap between the means over seeds of one (workload, policy), column by column;
/// a column present on one side only counts as infinite.
fn worst_mean_gap(got: &Table, want: &Table, workload: &str, policy: &str, seeds: &[i64]) -> f64 {
    let mut worst: f64 = 0.0;
    for k in 0..131 {
        let values = |t: &Table| -> Vec<f64> {
            (seeds.iter())
                .filter_map(|s| t[&(workload.to_string(), policy.to_string(), s.to_string())][k])
                .collect()
        };
        let (g, w) = (values(got), values(want));
        if g.len() != w.len() {
            return f64::INFINITY;
        }
        if g.is_empty() {
            continue;
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        worst = worst.max((mean(&g) - mean(&w)).abs());
    }
    worst
}

/// The arrival sequence follows the reference's Go `math/rand` draws: before any pod fails
/// (the first 80 % of arrivals), every policy allocates exactly what the reference does,
/// seed for seed; and FGD places the first tenth of the pods where the reference does (its
/// fragmentation curve is equal there).
#[test]
fn arrivals_follow_the_reference_seed_for_seed() {
    let seeds = [42, 43];
    let policies = [Policy::DotProd, Policy::BestFit, Policy::Fgd];
    let dir = tempfile::tempdir().unwrap();
    let [alloc, frag, _] = experiment(&["default"], &policies, &seeds, dir.path());
    let [want_alloc, want_frag, _] = expected();
    for p in policies {
        for s in seeds {
            let key = (
                "openb_pod_list_default".to_string(),
                p.label().to_string(),
                s.to_string(),
            );
            for k in 0..=80 {
                let (g, w) = (alloc[&key][k].unwrap(), want_alloc[&key][k].unwrap());
                assert!(
                    (g - w).abs() <= 0.011,
                    "{key:?} allocation at {k}%: {g} vs {w}"
                );
            }
            if p == Policy::Fgd {
                for k in 0..=10 {
                    let (g, w) = (frag[&key][k].unwrap(), want_frag[&key][k].unwrap());
                    assert!(
                        (g - w).abs() <= 0.011,
                        "{key:?} fragmentation at {k}%: {g} vs {w}"
                    );
                }
            }
        }
    }
}

/// The fidelity target on the three bundled workloads: the mean curves over seeds 42–51 of
/// every policy within 0.5 points of the reference's (Random within 1) at every arrived %
/// for the allocation and the fragmentation amount; the fragmentation ratio within 0.5 on
/// `default` (the other two drift by up to 2.3 points past 80 % arrived: see README).
/// The whole matrix (180 runs) takes about a minute in a debug build on two cores:
/// `cargo test --release --test fgd -- --ignored`.
#[test]
#[ignore = "the whole 3 × 6 × 10 matrix: run with --release -- --ignored"]
fn mean_curves_match_the_reference() {
    let seeds: Vec<i64> = (42..=51).collect();
    let workloads = ["default", "gpuspec33", "multigpu50"];
    let dir = tempfile::tempdir().unwrap();
    let got = experiment(&workloads, &Policy::ALL, &seeds, dir.path());
    let want = expected();
    for w in workloads {
        let workload = format!("openb_pod_list_{w}");
        for p in Policy::ALL {
            let limit = if p == Policy::Random { 1.0 } else { 0.5 };
            for (f, name) in ["allocation", "fragmentation"].iter().enumerate() {
                let gap = worst_mean_gap(&got[f], &want[f], &workload, p.label(), &seeds);
                assert!(gap <= limit, "{workload} {} {name}: {gap:.3}", p.label());
            }
            if w == "default" {
                let gap = worst_mean_gap(&got[2], &want[2], &workload, p.label(), &seeds);
                assert!(
                    gap <= limit,
                    "{workload} {} fragmentation ratio: {gap:.3}",
                    p.label()
                );
            }
        }
    }
}

/// A small matrix on the default workload, fast enough for every test run: the deterministic
/// policies' mean allocation over three seeds stays within a point of the reference's.
#[test]
fn a_small_matrix_tracks_the_reference() {
    let seeds = [42, 47, 51];
    let policies = [Policy::GpuClustering, Policy::GpuPacking];
    let dir = tempfile::tempdir().unwrap();
    let got = experiment(&["default"], &policies, &seeds, dir.path());
    let want = expected();
    for p in policies {
        let gap = worst_mean_gap(
            &got[0],
            &want[0],
            "openb_pod_list_default",
            p.label(),
            &seeds,
        );
        assert!(gap <= 1.0, "{}: {gap:.3}", p.label());
    }
}

/// The same inputs give the same bytes with one thread or two.
#[test]
fn results_are_the_same_bytes_at_any_thread_count() {
    let run = |threads: usize| {
        let dir = tempfile::tempdir().unwrap();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            experiment(
                &["multigpu50"],
                &[Policy::Random, Policy::Fgd],
                &[42, 43],
                dir.path(),
            )
        });
        ["allo", "frag", "frag_ratio"]
            .map(|f| std::fs::read(dir.path().join(format!("analysis_{f}_discrete.csv"))).unwrap())
    };
    assert_eq!(run(1), run(2));
}

/// A bad number in a pod list is refused with its file, line, column and column name, exit
/// code 2, and nothing is written.
#[test]
fn a_bad_pod_list_names_the_place() {
    let dir = tempfile::tempdir().unwrap();
    let pods = dir.path().join("pods.csv");
    std::fs::write(
        &pods,
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,1,500\np1,2000,2048,one,1000\n",
    )
    .unwrap();
    let out = dir.path().join("out");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_schedsim"))
        .args(["fgd", "--seeds", "42", "--out"])
        .arg(&out)
        .arg(&pods)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("pods.csv:3:14: num_gpu: `one` is not a whole non-negative number"),
        "{stderr}"
    );
    assert!(!out.exists());
}

/// The command on a small pod list: the four files, one row per policy and seed, with the
/// reference's header.
#[test]
fn the_command_writes_the_reference_layout() {
    let dir = tempfile::tempdir().unwrap();
    let pods = dir.path().join("openb_pod_list_tiny.csv");
    let mut text = String::from("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n");
    for i in 0..400 {
        let (gpus, milli) = [(1, 500), (1, 1000), (2, 1000), (0, 0), (1, 250)][i % 5];
        text.push_str(&format!(
            "pod-{i:04},{},{},{gpus},{milli},\n",
            2000 + 500 * (i % 3),
            4096
        ));
    }
    std::fs::write(&pods, text).unwrap();
    let out = dir.path().join("out");
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_schedsim"))
        .args([
            "fgd",
            "--seeds",
            "42..43",
            "--policy",
            "fgd,best-fit",
            "--charts",
            "--out",
        ])
        .arg(&out)
        .arg(&pods)
        .output()
        .unwrap();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let allo = std::fs::read_to_string(out.join("analysis_allo_discrete.csv")).unwrap();
    let lines: Vec<&str> = allo.lines().collect();
    assert!(lines[0].starts_with("workload,sc_policy,tune,seed,total_gpus,0,1,2,"));
    assert!(lines[0].ends_with(",129,130"));
    let keys: Vec<String> = (lines[1..].iter())
        .map(|l| l.split(',').take(5).collect::<Vec<_>>().join(","))
        .collect();
    assert_eq!(
        keys,
        [
            "openb_pod_list_tiny,05-BestFit,1.3,42,6212",
            "openb_pod_list_tiny,05-BestFit,1.3,43,6212",
            "openb_pod_list_tiny,06-FGD,1.3,42,6212",
            "openb_pod_list_tiny,06-FGD,1.3,43,6212",
        ]
    );
    // 400 pods ask for 280 GPUs, tuned up to 1.3 × 6212: the curve reaches 130 %.
    let last: Vec<&str> = lines[1].split(',').collect();
    assert!(!last[5 + 130].is_empty(), "{}", lines[1]);
    let fail = std::fs::read_to_string(out.join("analysis_fail.csv")).unwrap();
    assert_eq!(fail.lines().count(), 5);
    // The charts: two per workload and the boxes at 100 % arrived, each as SVG and PNG.
    for chart in [
        "fgd-openb_pod_list_tiny-unallocated",
        "fgd-openb_pod_list_tiny-fragmentation",
        "fgd-unallocated-at-100",
    ] {
        let svg = std::fs::read_to_string(out.join(format!("{chart}.svg"))).unwrap();
        assert!(svg.contains("06-FGD"), "{chart}");
        assert!(
            std::fs::metadata(out.join(format!("{chart}.png")))
                .unwrap()
                .len()
                > 0
        );
    }
}

/// A pod list that asks for no GPU cannot be inflated to a share of the GPUs (the reference
/// panics); the error says so and exits 2 instead of looping.
#[test]
fn a_cpu_only_pod_list_cannot_be_tuned() {
    let dir = tempfile::tempdir().unwrap();
    let pods = dir.path().join("cpu.csv");
    std::fs::write(
        &pods,
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,1024,0,0\n",
    )
    .unwrap();
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_schedsim"))
        .args(["fgd", "--seeds", "42", "--policy", "fgd", "--out"])
        .arg(dir.path().join("out"))
        .arg(&pods)
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("the pod list asks for no GPU"));
}

/// A typical-pod list of the reference's `frag_test.go`, weights as written (`percent / 100`).
fn typical_list(file: &str) -> Vec<schedsim::sched::gpu_share::frag::Typical> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/fgd")
        .join(file);
    let text = std::fs::read_to_string(path).unwrap();
    let body: String = (text.lines().filter(|l| !l.starts_with('#')))
        .map(|l| format!("{l}\n"))
        .collect();
    let mut reader = csv::Reader::from_reader(body.as_bytes());
    (reader.records())
        .map(|r| {
            let r = r.unwrap();
            schedsim::sched::gpu_share::frag::Typical {
                class: schedsim::sched::gpu_share::frag::Class {
                    cpu: r[0].parse().unwrap(),
                    milli: r[1].parse().unwrap(),
                    gpus: r[2].parse().unwrap(),
                    spec: r[3].to_string(),
                    plugin: false,
                },
                weight: r[4].parse::<f64>().unwrap() / 100.0,
            }
        })
        .collect()
}

/// `frag_test.go`'s node fragmentation values (`TestNodeGpuShareFragAmount*`), to 0.01.
#[test]
fn node_fragmentation_of_the_reference_tests() {
    use schedsim::sched::gpu_share::frag::{NodeView, node_frag};
    let gpu_35 = typical_list("typical-35.csv");
    let with_cpu_31 = typical_list("typical-31.csv");
    let cases: [(&[_], i64, &[i64], &str, f64); 6] = [
        (&gpu_35, 1000, &[200, 1000, 1000, 500], "1080", 2566.62),
        (&gpu_35, 1000, &[1000; 4], "1080", 3802.40),
        (&gpu_35, 1000, &[1000; 8], "1080", 7604.80),
        (&with_cpu_31, 64_000, &[1000; 8], "P100", 887.20),
        (
            &with_cpu_31,
            32_000,
            &[1000, 1000, 1000, 1000, 0, 0, 0, 0],
            "P100",
            554.4,
        ),
        (
            &with_cpu_31,
            0,
            &[1000, 1000, 1000, 1000, 0, 0, 0, 0],
            "P100",
            4000.0,
        ),
    ];
    for (typical, cpu_left, gpu_left, model, want) in cases {
        let node = NodeView::whole(cpu_left, gpu_left, model);
        let got = node_frag(node, typical);
        assert!(
            (got - want).abs() < 0.01,
            "{gpu_left:?} {model}: {got} vs {want}"
        );
    }
}

/// The reference's YAML forms read as its CSV forms do: the bundled openb Node objects give
/// the GPU node list (names apart: the YAML renumbers them), and a pod list written as Pod
/// objects with the simulator's annotations gives the same results as its CSV.
#[test]
fn yaml_forms_read_as_the_csv_forms() {
    let csv_nodes = read_nodes(&fixture("openb/openb_node_list_gpu_node.csv")).unwrap();
    let yaml_nodes = read_nodes(&fixture("openb/openb-nodes.yaml")).unwrap();
    let shape =
        |n: &schedsim::fgd::input::GpuNode| (n.cpu_milli, n.memory_mib, n.gpus, n.model.clone());
    let gpu_nodes: Vec<_> = yaml_nodes
        .iter()
        .filter(|n| n.gpus > 0)
        .map(shape)
        .collect();
    assert_eq!(gpu_nodes, csv_nodes.iter().map(shape).collect::<Vec<_>>());

    let dir = tempfile::tempdir().unwrap();
    let (csv_dir, yaml_dir) = (dir.path().join("csv"), dir.path().join("yaml"));
    std::fs::create_dir_all(&csv_dir).unwrap();
    std::fs::create_dir_all(&yaml_dir).unwrap();
    let mut csv_text = String::from("name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec\n");
    let mut yaml_text = String::new();
    for i in 0..300 {
        let (gpus, milli, spec) = [
            (1, 500, ""),
            (1, 1000, "T4|P100"),
            (2, 1000, ""),
            (0, 0, ""),
            (1, 250, ""),
        ][i % 5];
        let cpu = 2000 + 500 * (i % 3);
        csv_text.push_str(&format!("pod-{i:04},{cpu},4096,{gpus},{milli},{spec}\n"));
        let mut annotations = String::new();
        if gpus > 0 {
            annotations = format!(
                "  annotations:\n    alibabacloud.com/gpu-milli: \"{milli}\"\n    alibabacloud.com/gpu-count: \"{gpus}\"\n"
            );
            if !spec.is_empty() {
                annotations.push_str(&format!(
                    "    alibabacloud.com/gpu-card-model: \"{spec}\"\n"
                ));
            }
        }
        yaml_text.push_str(&format!(
            "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-{i:04}\n  namespace: paib-gpu\n{annotations}spec:\n  containers:\n  - name: main\n    image: i\n    resources:\n      requests: {{cpu: {cpu}m, memory: 4096Mi}}\n"
        ));
    }
    std::fs::write(csv_dir.join("openb_pod_list_small.csv"), csv_text).unwrap();
    std::fs::write(yaml_dir.join("openb_pod_list_small.yaml"), yaml_text).unwrap();
    let run = |pods: PathBuf, out: PathBuf| {
        let status = std::process::Command::new(env!("CARGO_BIN_EXE_schedsim"))
            .args([
                "fgd",
                "--seeds",
                "42",
                "--policy",
                "fgd,gpu-packing",
                "--out",
            ])
            .arg(&out)
            .arg(pods)
            .output()
            .unwrap();
        assert_eq!(
            status.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&status.stderr)
        );
        ["allo", "frag", "frag_ratio"]
            .map(|f| std::fs::read(out.join(format!("analysis_{f}_discrete.csv"))).unwrap())
    };
    assert_eq!(
        run(
            csv_dir.join("openb_pod_list_small.csv"),
            dir.path().join("out-csv")
        ),
        run(
            yaml_dir.join("openb_pod_list_small.yaml"),
            dir.path().join("out-yaml")
        )
    );
}

/// A node file without a Node is refused rather than run as an empty cluster.
#[test]
fn a_node_list_without_nodes_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = dir.path().join("nodes.yaml");
    std::fs::write(&nodes, "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\n").unwrap();
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_schedsim"))
        .args(["fgd", "--seeds", "42", "--nodes"])
        .arg(&nodes)
        .arg("--out")
        .arg(dir.path().join("out"))
        .output()
        .unwrap();
    assert_eq!(run.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&run.stderr).contains("no node in the node list"));
}

/// Pod objects are refused where their CSV rows would be (a share of more than one GPU) and
/// where the API server refuses them (a negative request), naming the field and its line.
#[test]
fn bad_pod_objects_name_the_field() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "metadata:\n  name: p\n  annotations:\n    alibabacloud.com/gpu-count: \"2\"\n    alibabacloud.com/gpu-milli: \"500\"\nspec:\n  containers: [{name: c, image: i}]\n",
            "pods.yaml:7:33: metadata.annotations.alibabacloud.com/gpu-milli: 2 GPUs of 500 milli each",
        ),
        (
            "metadata:\n  name: p\nspec:\n  containers:\n  - name: c\n    image: i\n    resources:\n      requests: {cpu: \"-1\"}\n",
            "pods.yaml:10:23: spec.containers[0].resources.requests.cpu: must be greater than or equal to 0",
        ),
    ];
    for (pod, want) in cases {
        let pods = dir.path().join("pods.yaml");
        std::fs::write(&pods, format!("apiVersion: v1\nkind: Pod\n{pod}")).unwrap();
        let run = std::process::Command::new(env!("CARGO_BIN_EXE_schedsim"))
            .args(["fgd", "--seeds", "42", "--out"])
            .arg(dir.path().join("out"))
            .arg(&pods)
            .output()
            .unwrap();
        assert_eq!(run.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(stderr.contains(want), "{stderr}");
    }
}
