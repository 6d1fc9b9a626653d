//! A process's peak memory and its interruption, for the tests that measure or stop one.

use std::process::{Child, Command, Output};

/// Peak resident memory (`VmHWM`) of a process, in KiB: `"self"` or a pid.
pub fn peak_rss_kib(pid: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// Sends SIGTERM to `child` and waits for its output.
pub fn terminate(child: Child) -> Output {
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    child.wait_with_output().unwrap()
}
