//! The hostile-input suite: every case of `tests/data/hostile/cases.yaml` runs the binary as a
//! user would, in a fresh folder, and checks its exit code and messages; then signals.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    input: String,
    #[serde(default)]
    make: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    exit: i32,
    #[serde(default)]
    stderr: Option<String>,
    #[serde(default)]
    not_stderr: Option<String>,
    #[serde(default)]
    stdout: Option<String>,
    #[serde(default)]
    not_stdout: Option<String>,
}

const DATA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/hostile");

/// A scenario whose `spec.nodes` nests `depth` sequences, in YAML flow style or JSON.
fn deep(depth: usize, json: bool) -> String {
    let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    if json {
        format!(
            r#"{{"apiVersion": "schedsim.io/v1alpha1", "kind": "Scenario", "metadata": {{"name": "deep"}}, "spec": {{"nodes": {nested}}}}}"#
        )
    } else {
        format!(
            "apiVersion: schedsim.io/v1alpha1\nkind: Scenario\nmetadata: {{name: deep}}\nspec:\n  nodes: {nested}\n"
        )
    }
}

/// Puts the case's input into `dir` (made as `make` says); returns the input's name and the
/// extra arguments the making adds.
fn prepare(case: &Case, dir: &Path) -> (String, Vec<String>) {
    let source = std::fs::read(Path::new(DATA).join(&case.input)).unwrap();
    let mut name = case.input.clone();
    let mut args = Vec::new();
    let make = case.make.as_deref().unwrap_or("");
    let (what, arg) = make.split_once(' ').unwrap_or((make, ""));
    let bytes: Vec<u8> = match what {
        "" | "symlink-to-passwd" | "out-is-a-file" => source,
        "deep-yaml" => deep(arg.parse().unwrap(), false).into_bytes(),
        "deep-json" => {
            name = "deep.json".into();
            deep(arg.parse().unwrap(), true).into_bytes()
        }
        "nul" => [source.as_slice(), b"# \0\n"].concat(),
        "non-utf8" => [source.as_slice(), b"# \xff\n"].concat(),
        "bom" => [b"\xef\xbb\xbf".as_slice(), &source].concat(),
        "fifo" => {
            name = "input.yaml".into();
            let made = Command::new("mkfifo")
                .arg(dir.join(&name))
                .status()
                .unwrap();
            assert!(made.success());
            return (name, args);
        }
        "symlink-loop" => {
            let folder = dir.join("folder");
            std::fs::create_dir_all(&folder).unwrap();
            std::fs::write(folder.join(&name), &source).unwrap();
            std::os::unix::fs::symlink(&folder, folder.join("loop")).unwrap();
            return ("folder".into(), args);
        }
        other => panic!("unknown make: {other}"),
    };
    std::fs::write(dir.join(&name), bytes).unwrap();
    match what {
        "symlink-to-passwd" => {
            std::os::unix::fs::symlink("/etc/passwd", dir.join("nodes.yaml")).unwrap()
        }
        "out-is-a-file" => {
            std::fs::write(dir.join("a-file"), "x").unwrap();
            args = vec!["--out".into(), "a-file".into()];
        }
        _ => {}
    }
    (name, args)
}

/// Every path under `dir`, relative to it.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap().to_path_buf());
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn hostile_inputs_get_clear_errors_and_no_crash() {
    let text = std::fs::read_to_string(Path::new(DATA).join("cases.yaml")).unwrap();
    let cases: Vec<Case> = serde_saphyr::from_str(&text).unwrap();
    assert!(cases.len() >= 20);
    let mut failures = Vec::new();
    for (i, case) in cases.iter().enumerate() {
        let dir = common::cli::tempdir(&format!("hostile-{i}"));
        let (input, made_args) = prepare(case, &dir);
        let before = tree(&dir);
        let mut args = vec!["run".to_string(), input.clone()];
        if !case.args.iter().any(|a| a == "--format") {
            args.extend(["--format".into(), "json".into()]);
        }
        if !made_args.iter().any(|a| a == "--out") {
            args.extend(["--out".into(), "out".into()]);
        }
        args.extend(made_args);
        args.extend(case.args.iter().cloned());
        let o = Command::new(env!("CARGO_BIN_EXE_schedsim"))
            .args(&args)
            .current_dir(&dir)
            .env_remove("SCHEDSIM_MAX_NESTING")
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr),
        );
        let mut problems = Vec::new();
        if o.status.code() != Some(case.exit) {
            problems.push(format!(
                "exit {:?}, expected {}",
                o.status.code(),
                case.exit
            ));
        }
        let checks = [
            (&case.stderr, &stderr, true, "stderr"),
            (&case.not_stderr, &stderr, false, "stderr"),
            (&case.stdout, &stdout, true, "stdout"),
            (&case.not_stdout, &stdout, false, "stdout"),
        ];
        for (want, got, present, which) in checks {
            if let Some(w) = want
                && got.contains(w.as_str()) != present
            {
                let verb = if present { "lacks" } else { "has" };
                problems.push(format!("{which} {verb} {w:?}"));
            }
        }
        let written: Vec<PathBuf> = tree(&dir)
            .into_iter()
            .filter(|p| !before.contains(p) && !p.starts_with("out"))
            .collect();
        if !written.is_empty() {
            problems.push(format!("wrote outside out/: {written:?}"));
        }
        if !problems.is_empty() {
            failures.push(format!(
                "case {i} ({} {}): {}\nstderr: {}",
                case.input,
                case.make.as_deref().unwrap_or(""),
                problems.join("; "),
                stderr.chars().take(600).collect::<String>()
            ));
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// SIGTERM mid-run: exit 143, one line, no temporary file left; a stale one of a dead process
/// is cleared by the next run.
#[test]
fn signals_leave_no_temporary_files() {
    let dir = common::cli::tempdir("signals");
    let generated = Command::new(env!("CARGO_BIN_EXE_schedsim"))
        .args([
            "generate",
            "--nodes",
            "2000",
            "--pods",
            "8000",
            "--kueue-jobs",
            "10",
            "--out",
            "in",
        ])
        .current_dir(&dir)
        .output()
        .unwrap();
    assert!(generated.status.success());
    std::fs::create_dir_all(dir.join("out")).unwrap();
    // A temporary file of a process that is gone (pid beyond the kernel's maximum).
    let stale = dir.join("out/.run.json.tmp-4194305");
    std::fs::write(&stale, "partial").unwrap();
    let run = || {
        let mut command = Command::new(env!("CARGO_BIN_EXE_schedsim"));
        command
            .args([
                "run",
                "in/scenario.yaml",
                "--format",
                "json",
                "--out",
                "out",
            ])
            .current_dir(&dir);
        command
    };
    let child = run()
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let o = common::process::terminate(child);
    let stderr = String::from_utf8_lossy(&o.stderr);
    if o.status.code() == Some(0) {
        // The machine finished the run within the wait: nothing to interrupt.
        return;
    }
    assert_eq!(o.status.code(), Some(143), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("schedsim: interrupted by SIGTERM"),
        "{stderr}"
    );
    let leftovers: Vec<_> = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-") && *n != ".run.json.tmp-4194305")
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
    // The next run clears the stale file of the dead process.
    let again = run().output().unwrap();
    assert!(again.status.success());
    assert!(!stale.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// A count the user types never decides memory: a sweep of four billion seeds streams its
/// runs (aggregates fold as runs finish, run rows go to the file a chunk at a time), so its
/// peak memory stops growing once the first chunks are done; SIGTERM then leaves neither the
/// unfinished rows file nor a temporary file.
#[test]
fn a_sweep_of_four_billion_seeds_runs_in_flat_memory() {
    let dir = common::cli::tempdir("huge-sweep");
    std::fs::copy(Path::new(DATA).join("fine.yaml"), dir.join("s.yaml")).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_schedsim"))
        .args([
            "sweep",
            "s.yaml",
            "--seeds",
            "4000000000",
            "--runs",
            "out/runs.jsonl",
            "--out",
            "out",
        ])
        .env("RAYON_NUM_THREADS", "1")
        .current_dir(&dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id().to_string();
    let peak_kib = || common::process::peak_rss_kib(&pid);
    std::thread::sleep(std::time::Duration::from_millis(1500));
    let early = peak_kib();
    std::thread::sleep(std::time::Duration::from_millis(3000));
    let late = peak_kib();
    let o = common::process::terminate(child);
    assert_eq!(
        o.status.code(),
        Some(143),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        late < early + 2048,
        "peak RSS went from {early} KiB to {late} KiB while the sweep ran"
    );
    let left: Vec<_> = std::fs::read_dir(dir.join("out"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(left.is_empty(), "{left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Counts that allocate are checked before anything is allocated: a TrainJob of two billion
/// nodes is an input error naming the limit, not an out-of-memory abort.
#[test]
fn a_trainjob_past_the_pod_limit_is_refused_before_its_pods_exist() {
    let o = common::cli::schedsim(&[
        "run",
        "tests/data/huge-trainjob.yaml",
        "--out",
        "/dev/null/x",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("spec.workloads[0].spec: a TrainJob of 2000000001 pods exceeds schedsim's limit of 10000000 pods in one scenario (raise it with the environment variable SCHEDSIM_MAX_PODS=N)"),
        "{stderr}"
    );
}

/// Counts typed on the command line that size a synthetic cluster are refused before anything
/// is built, naming the flag and the limit; nothing is written.
#[test]
fn synthetic_counts_past_the_limits_are_refused_up_front() {
    let dir = common::cli::tempdir("synthetic-counts");
    let out = dir.join("generated");
    let out = out.to_str().unwrap();
    let cases: [(&[&str], &str); 5] = [
        (
            &["generate", "--nodes", "2000000", "--out", out],
            "--nodes 2000000 exceeds schedsim's limit of 1000000 nodes in one scenario (raise it with the environment variable SCHEDSIM_MAX_NODES=N)",
        ),
        (
            &[
                "generate",
                "--pods",
                "1",
                "--kueue-jobs",
                "3000000",
                "--out",
                out,
            ],
            "--kueue-jobs 3000000 (four pods each) exceeds schedsim's limit of 10000000 pods",
        ),
        (
            &["bench", "--pods", "20000000"],
            "--pods 20000000 exceeds schedsim's limit of 10000000 pods in one scenario (raise it with the environment variable SCHEDSIM_MAX_PODS=N)",
        ),
        (
            &["bench", "--resolve", "20000000"],
            "--resolve 20000000 exceeds schedsim's limit of 10000000 pods",
        ),
        (
            &[
                "plan",
                "scenarios/plan-gpu-nodes.yaml",
                "--max-evaluations",
                "1000000000",
                "--out",
                out,
            ],
            "--max-evaluations 1000000000 exceeds schedsim's limit of 100000 simulations in one plan search (--max-evaluations) (raise it with the environment variable SCHEDSIM_MAX_PLAN_EVALUATIONS=N)",
        ),
    ];
    for (args, expected) in cases {
        let o = common::cli::schedsim(args);
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(expected), "{args:?}: {stderr}");
    }
    assert!(!dir.join("generated").exists());
}

/// `--out` on a full disk and on a read-only file system: exit 2 naming the file, no
/// temporary file left, and the report already there kept whole. Needs a small tmpfs, which
/// only a privileged user can mount; elsewhere the test says so and checks nothing.
#[test]
fn full_and_read_only_disks_lose_nothing_already_written() {
    let dir = common::cli::tempdir("disk");
    let mount = dir.join("disk");
    std::fs::create_dir_all(&mount).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=16k", "tmpfs"])
        .arg(&mount)
        .output()
        .is_ok_and(|o| o.status.success());
    if !mounted {
        eprintln!("skipped: cannot mount a tmpfs here (needs privileges)");
        return;
    }
    let unmount = |m: &Path| {
        let _ = Command::new("umount").arg(m).status();
    };
    let earlier = "{\"earlier\": true}\n";
    std::fs::write(mount.join("run.json"), earlier).unwrap();
    let out = mount.to_str().unwrap().to_string();
    // The bundled scenarios make a report far larger than 16 KiB.
    let full = common::cli::schedsim(&["run", "scenarios", "--format", "json", "--out", &out]);
    let stderr = String::from_utf8_lossy(&full.stderr).into_owned();
    let leftovers: Vec<String> = std::fs::read_dir(&mount)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".tmp-"))
        .collect();
    let kept = std::fs::read_to_string(mount.join("run.json")).unwrap_or_default();
    let remounted = Command::new("mount")
        .args(["-o", "remount,ro"])
        .arg(&mount)
        .status()
        .is_ok_and(|s| s.success());
    let read_only = common::cli::schedsim(&["run", "scenarios", "--format", "json", "--out", &out]);
    let ro_stderr = String::from_utf8_lossy(&read_only.stderr).into_owned();
    unmount(&mount);
    let _ = std::fs::remove_dir_all(&dir);

    assert_eq!(full.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("error: cannot write") && stderr.contains("No space left on device"),
        "{stderr}"
    );
    assert!(leftovers.is_empty(), "{leftovers:?}");
    assert_eq!(kept, earlier, "the earlier report is kept whole");
    assert!(remounted);
    assert_eq!(read_only.status.code(), Some(2), "{ro_stderr}");
    assert!(ro_stderr.contains("Read-only file system"), "{ro_stderr}");
}
