//! The module boundaries of ARCHITECTURE.md, checked on the source: every `crate::` path in a
//! module's code names a module below it in the layer order, and the one-pod scheduling cycle
//! never reaches for the run loop or the gang driver.

use std::path::{Path, PathBuf};

use regex::Regex;

/// The layers, top to bottom: a module may import the modules after it, never those before.
const LAYERS: &[&str] = &[
    "cli", "generate", "bench", "plan", "sweep", "fgd", "replay", "check", "explain", "report",
    "load", "kueue", "resolve", "sched", "dra", "model", "trace", "yaml",
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

/// The modules of a folder (`src/<folder>/<name>.rs` or `src/<folder>/<name>/`).
fn submodules(folder: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().to_string())
        .filter(|n| n != "mod")
        .collect();
    names.sort();
    names
}

/// The sibling modules a file of `folder`'s module `from` names: `crate::<folder>::x`, and
/// `super::x` (or `super::super::x` one folder down), braces included.
fn sibling_imports(text: &str, folder: &str, depth: usize, siblings: &[String]) -> Vec<String> {
    let parent = match depth {
        0 => r"super".to_string(),
        _ => r"super::super".to_string(),
    };
    let prefix = format!(r"(?:crate::{folder}|\b{parent})::");
    let single = Regex::new(&format!(r"{prefix}(\w+)")).unwrap();
    let group = Regex::new(&format!(r"{prefix}\{{([^{{}}]*)\}}")).unwrap();
    let mut out: Vec<String> = single
        .captures_iter(text)
        .map(|c| c[1].to_string())
        .collect();
    for c in group.captures_iter(text) {
        out.extend(c[1].split(',').map(|item| {
            let item = item.trim();
            item.split("::").next().unwrap_or("").trim().to_string()
        }));
    }
    out.retain(|m| siblings.contains(m));
    out
}

/// Circles inside a folder that exist today: each must still exist, so the list only
/// shrinks. Remove an entry when its circle is untied. (The scheduler's plugins read their
/// profile's arguments, the profile builds the plugins, and DRA's plugin and manager share
/// state: left for a later change.)
const KNOWN_CIRCLES: &[&str] = &["sched: dra_manager ↔ plugins ↔ profile"];

#[test]
fn modules_of_a_folder_import_each_other_without_circles() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut found: Vec<String> = Vec::new();
    let mut folders: Vec<PathBuf> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    folders.sort();
    for folder in folders {
        let name = folder.file_name().unwrap().to_string_lossy().to_string();
        let siblings = submodules(&folder);
        let mut edges: std::collections::BTreeMap<String, std::collections::BTreeSet<String>> =
            Default::default();
        let mut files = Vec::new();
        rust_files(&folder, &mut files);
        for file in &files {
            let rel = file.strip_prefix(&folder).unwrap();
            let from = rel
                .components()
                .next()
                .unwrap()
                .as_os_str()
                .to_string_lossy();
            let from = from.trim_end_matches(".rs").to_string();
            if from == "mod" {
                continue;
            }
            // `super` in `<from>.rs` and `<from>/mod.rs` is the folder; one level down, it is
            // `<from>`, and the folder is `super::super`.
            let depth = usize::from(rel.components().count() > 1 && !rel.ends_with("mod.rs"));
            let text = code(file).join("\n");
            for to in sibling_imports(&text, &name, depth, &siblings) {
                if to != from {
                    edges.entry(from.clone()).or_default().insert(to);
                }
            }
        }
        for circle in circles(&edges) {
            found.push(format!("{name}: {}", circle.join(" ↔ ")));
        }
    }
    let unexpected: Vec<&String> = (found.iter())
        .filter(|c| !KNOWN_CIRCLES.contains(&c.as_str()))
        .collect();
    assert!(
        unexpected.is_empty(),
        "modules of a folder that import each other in a circle (move what they share into a module of its own):\n{unexpected:#?}"
    );
    for known in KNOWN_CIRCLES {
        assert!(
            found.iter().any(|c| c == known),
            "{known} is untied: remove it from KNOWN_CIRCLES"
        );
    }
}

/// The strongly connected components of more than one module, each sorted, in order.
fn circles(
    edges: &std::collections::BTreeMap<String, std::collections::BTreeSet<String>>,
) -> Vec<Vec<String>> {
    let nodes: std::collections::BTreeSet<&String> =
        edges.keys().chain(edges.values().flatten()).collect();
    let reach = |from: &String| {
        let mut seen = std::collections::BTreeSet::new();
        let mut stack = vec![from];
        while let Some(n) = stack.pop() {
            for m in edges.get(n).into_iter().flatten() {
                if seen.insert(m) {
                    stack.push(m);
                }
            }
        }
        seen
    };
    let reachable: std::collections::BTreeMap<&String, _> =
        nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut out: Vec<Vec<String>> = Vec::new();
    for n in &nodes {
        let mut group: Vec<String> = (nodes.iter())
            .filter(|m| reachable[*n].contains(**m) && reachable[**m].contains(*n))
            .map(|m| m.to_string())
            .collect();
        group.sort();
        if group.len() > 1 && !out.contains(&group) {
            out.push(group);
        }
    }
    out
}
