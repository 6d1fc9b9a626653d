//! Running the built binary as a user does, from the project folder.

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

/// A fresh, empty folder, removed when the returned guard drops (a failed test keeps nothing
/// behind on the disk either, since the guard drops while the panic unwinds).
pub fn tempdir(tag: &str) -> TempDir {
    TempDir(
        tempfile::Builder::new()
            .prefix(&format!("schedsim-test-{tag}-"))
            .tempdir()
            .expect("create a temporary folder"),
    )
}

/// A temporary folder that reads as a `Path` and is removed on drop.
pub struct TempDir(tempfile::TempDir);

impl std::ops::Deref for TempDir {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        self.0.path()
    }
}

impl AsRef<std::path::Path> for TempDir {
    fn as_ref(&self) -> &std::path::Path {
        self.0.path()
    }
}

/// A chart `report::chart` wrote: its SVG text, once its PNG beside it is checked to be one.
pub fn chart_svg(dir: &std::path::Path, name: &str) -> String {
    let png = std::fs::read(dir.join(format!("{name}.png"))).unwrap();
    assert_eq!(&png[..4], b"\x89PNG", "{name}.png");
    std::fs::read_to_string(dir.join(format!("{name}.svg"))).unwrap()
}
