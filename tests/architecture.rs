//! The module boundaries of ARCHITECTURE.md, checked on the source: every `crate::` path in a
//! module's code names a module below it in the layer order, and the one-pod scheduling cycle
//! never reaches for the run loop or the gang driver.

use std::path::{Path, PathBuf};

use regex::Regex;

/// The layers, top to bottom: a module may import the modules after it, never those before.
const LAYERS: &[&str] = &[
    "cli", "generate", "bench", "sweep", "check", "report", "load", "kueue", "resolve", "sched",
    "dra", "model", "yaml",
];

/// Leaf utilities any layer may use; they import no layer.
const UTILITIES: &[&str] = &["error", "limits", "features", "interrupt"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code lines of a file (comments left out: doc links are not imports).
fn code(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(str::to_string)
        .collect()
}

fn top_module(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    first.trim_end_matches(".rs").to_string()
}

#[test]
fn modules_import_only_the_layers_below_them() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let path = Regex::new(r"crate::(\w+)").unwrap();
    let rank = |m: &str| LAYERS.iter().position(|l| *l == m);
    let mut violations = Vec::new();
    for file in &files {
        let from = top_module(&src, file);
        if from == "lib" || from == "main" {
            continue;
        }
        for (n, line) in code(file).iter().enumerate() {
            for to in path.captures_iter(line).map(|c| c[1].to_string()) {
                let allowed = to == from
                    || to == "simulate"
                    || to == "release_at_exit"
                    || (UTILITIES.contains(&to.as_str()) && !UTILITIES.contains(&from.as_str()))
                    || matches!((rank(&from), rank(&to)), (Some(a), Some(b)) if a < b);
                if !allowed {
                    violations.push(format!("{}:{}: {from} imports {to}", file.display(), n + 1));
                }
            }
        }
    }
    assert!(
        violations.is_empty(),
        "imports against ARCHITECTURE.md's layers:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_scheduling_cycle_does_not_import_the_run_loop() {
    let cycle = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/sched/cycle");
    let mut files = Vec::new();
    rust_files(&cycle, &mut files);
    assert!(!files.is_empty());
    let outward = Regex::new(r"\b(sched|super)::(simulation|gang)\b").unwrap();
    for file in &files {
        for (n, line) in code(file).iter().enumerate() {
            assert!(
                !outward.is_match(line),
                "{}:{}: the cycle imports the run loop or the gang driver: {line}",
                file.display(),
                n + 1
            );
        }
    }
}
