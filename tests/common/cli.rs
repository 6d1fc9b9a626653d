//! Running the built binary as a user does, from the project folder.

use std::path::PathBuf;
use std::process::{Command, Output};

pub fn schedsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedsim"))
        .args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run schedsim")
}

/// Runs schedsim with `RAYON_NUM_THREADS` set, asserts exit code 0, returns stdout.
pub fn ok_with_threads(args: &[&str], threads: &str) -> Vec<u8> {
    let o = Command::new(env!("CARGO_BIN_EXE_schedsim"))
        .args(args)
        .env("RAYON_NUM_THREADS", threads)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("run schedsim");
    succeeded(args, o)
}

/// Runs schedsim, asserts exit code 0, returns stdout.
pub fn ok(args: &[&str]) -> String {
    String::from_utf8(succeeded(args, schedsim(args))).expect("UTF-8 output")
}

/// Stdout of a run that must have exited 0.
fn succeeded(args: &[&str], o: Output) -> Vec<u8> {
    assert_eq!(
        o.status.code(),
        Some(0),
        "schedsim {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&o.stderr)
    );
    o.stdout
}

/// A fresh, empty folder private to this process and thread. The folders of earlier test
/// processes that have ended are removed first (once per process), so runs do not pile up
/// on the disk.
pub fn tempdir(tag: &str) -> PathBuf {
    static SWEEP: std::sync::Once = std::sync::Once::new();
    SWEEP.call_once(remove_ended_processes_folders);
    let dir = std::env::temp_dir().join(format!(
        "schedsim-test-{tag}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Removes `schedsim-test-<tag>-<pid>-…` folders whose process no longer runs.
fn remove_ended_processes_folders() {
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let Some(rest) = name.strip_prefix("schedsim-test-") else {
            continue;
        };
        // `<tag>-<pid>-ThreadId(<n>)`: the pid is the part before the thread id.
        let pid = rest
            .rsplit_once("-ThreadId")
            .and_then(|(head, _)| head.rsplit_once('-'))
            .and_then(|(_, pid)| pid.parse::<u32>().ok());
        if let Some(pid) = pid
            && pid != std::process::id()
            && !std::path::Path::new(&format!("/proc/{pid}")).exists()
        {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// A chart `report::chart` wrote: its SVG text, once its PNG beside it is checked to be one.
pub fn chart_svg(dir: &std::path::Path, name: &str) -> String {
    let png = std::fs::read(dir.join(format!("{name}.png"))).unwrap();
    assert_eq!(&png[..4], b"\x89PNG", "{name}.png");
    std::fs::read_to_string(dir.join(format!("{name}.svg"))).unwrap()
}
