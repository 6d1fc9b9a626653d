//! `schedsim check`: exit codes, readable expected/actual lines, and the CI files it writes.

mod common;

use common::cli::{schedsim, tempdir};

#[test]
fn the_bundled_expectations_hold_and_ci_files_are_written() {
    let out = tempdir("check-ok");
    let o = schedsim(&["check", "scenarios", "--out", out.to_str().unwrap()]);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{stdout}");
    assert!(
        stdout.ends_with("59 of 59 expectation(s) met\n"),
        "{stdout}"
    );
    let junit = std::fs::read_to_string(out.join("check.junit.xml")).unwrap();
    assert!(junit.starts_with("<?xml"));
    assert_eq!(junit.matches("<testcase ").count(), 59);
    assert!(!junit.contains("<failure"));
    let md = std::fs::read_to_string(out.join("check.md")).unwrap();
    assert!(md.starts_with("## schedsim check: 59 of 59 expectation(s) met"));
    let csv = std::fs::read_to_string(out.join("placements.csv")).unwrap();
    assert!(
        csv.starts_with("scenario,namespace,pod,workload,status,node,pool,gpu_product,message\n")
    );
    // Messages with commas are quoted.
    assert!(csv.contains(",\"0/4 nodes are available: "), "{csv}");
}

#[test]
fn unmet_expectations_exit_1_with_expected_and_actual() {
    let out = tempdir("check-fails");
    let o = schedsim(&[
        "check",
        "tests/data/check-fails.yaml",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&o.stdout);
    for line in [
        "FAIL check-fails (tests/data/check-fails.yaml): 5 expectation(s), 4 unmet",
        "  ✗ both trainers run (tests/data/check-fails.yaml:16, spec.expect[0])",
        "      pod default/b: expected status Scheduled, got Unschedulable (0/1 nodes are available: 1 Insufficient nvidia.com/gpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.)",
        "      pod default/a: expected node gpu-7, got Scheduled on gpu-0",
        "      pod default/b: expected a message matching /^0/1 nodes are available: 1 Insufficient cpu/, got \"0/1 nodes are available: 1 Insufficient nvidia.com/gpu. no new claims to deallocate, preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.\"",
        "      expected at most 0 pending pod(s), got 1",
        "1 of 5 expectation(s) met",
    ] {
        assert!(stdout.contains(line), "missing {line:?} in:\n{stdout}");
    }
    let junit = std::fs::read_to_string(out.join("check.junit.xml")).unwrap();
    assert_eq!(junit.matches("<failure").count(), 4);
}

#[test]
fn a_bad_expectation_is_an_input_error() {
    let dir = tempdir("check-bad");
    let file = dir.join("bad.yaml");
    std::fs::write(
        &file,
        "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {name: bad}\nspec:\n  expect:\n    - {pod: a, workload: w, status: Scheduled}\n    - {pod: a, message: {regex: \"(\"}}\n    - {pod: a, staus: Scheduled}\n",
    )
    .unwrap();
    let o = schedsim(&[
        "check",
        file.to_str().unwrap(),
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&o.stderr);
    let f = file.display();
    for line in [
        format!("{f}:6:7: spec.expect[0]: name the pods one way: pod, workload or selector"),
        format!("{f}:7:33: spec.expect[1].message.regex: regex parse error:"),
        format!("{f}:8:23: spec.expect[2].staus: unknown field `staus`"),
    ] {
        assert!(stderr.contains(&line), "missing {line:?} in:\n{stderr}");
    }
}

#[test]
fn bless_rewrites_expectations_and_keeps_the_rest_of_the_file() {
    let dir = tempdir("check-bless");
    // A copy of a multi-document scenario, with fixtures reachable at the same relative path.
    std::fs::create_dir_all(dir.join("scenarios")).unwrap();
    std::os::unix::fs::symlink(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures"),
        dir.join("fixtures"),
    )
    .unwrap();
    let file = dir.join("scenarios/scheduler-profiles.yaml");
    let original = std::fs::read_to_string("scenarios/scheduler-profiles.yaml").unwrap();
    std::fs::write(&file, &original).unwrap();
    let failing = dir.join("scenarios/check-fails.yaml");
    std::fs::copy("tests/data/check-fails.yaml", &failing).unwrap();
    let out = dir.join("reports");
    let scenarios = dir.join("scenarios");
    let run = |extra: &[&str]| {
        let mut argv = vec![
            "check",
            scenarios.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ];
        argv.extend(extra);
        schedsim(&argv)
    };
    assert_eq!(run(&[]).status.code(), Some(1));
    assert_eq!(run(&["--bless"]).status.code(), Some(0));
    let after = run(&[]);
    assert_eq!(
        after.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&after.stdout)
    );
    // Everything outside the expect blocks is unchanged: the header comment, the other
    // documents, the nodes and workloads.
    let blessed = std::fs::read_to_string(&file).unwrap();
    let strip = |text: &str| -> Vec<String> {
        let mut keep = Vec::new();
        let mut skipping = false;
        for l in text.lines() {
            if l.trim_start().starts_with("expect:") {
                skipping = true;
                continue;
            }
            if skipping && (l.starts_with("    ") || l.trim_start().starts_with('-')) {
                continue;
            }
            skipping = false;
            keep.push(l.to_string());
        }
        keep
    };
    assert_eq!(strip(&blessed), strip(&original));
    assert!(blessed.contains("- {pod: \"ml/finetune-trainer-0\", status: Unschedulable, message: {contains: \"0/4 nodes are available: 4 Insufficient nvidia.com/gpu."));
    let fails = std::fs::read_to_string(&failing).unwrap();
    assert!(fails.starts_with("# Expectations that do not hold"));
    assert!(
        fails.contains("- {pod: \"default/a\", status: Scheduled, pool: \"gpu\"}"),
        "{fails}"
    );
}
