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

/// Runs schedsim, asserts exit code 0, returns stdout.
pub fn ok(args: &[&str]) -> String {
    let o = schedsim(args);
    assert_eq!(
        o.status.code(),
        Some(0),
        "schedsim {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("UTF-8 output")
}

/// A fresh, empty folder private to this process and thread.
pub fn tempdir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "schedsim-test-{tag}-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
