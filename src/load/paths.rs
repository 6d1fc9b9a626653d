//! Which files a scenario may make schedsim read. Scenario files often come from pull requests
//! (CI runs them), so a `file:` reference may only name a file inside the scenario's own folder
//! tree — or, when the scenario lies in a git repository, that repository (`scenarios/` next to
//! `fixtures/`) — the working directory tree or schedsim's own source tree (the bundled
//! scenarios and fixtures), after symlinks are resolved: `file: /etc/passwd`,
//! `../../..`, or a symlink pointing out of the tree is an input error unless the command line
//! says `--allow-any-path`. Paths given on the command line are the user's own and not checked.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

static ALLOW_ANY_PATH: AtomicBool = AtomicBool::new(false);

/// `--allow-any-path`: scenarios may reference files anywhere (set once, from the command line).
pub fn set_allow_any_path(allow: bool) {
    ALLOW_ANY_PATH.store(allow, Ordering::Relaxed);
}

/// Whether the scenario `scenario_file` may read `target` (a path it references). A target
/// that does not exist passes here; reading it then says so.
pub fn check_reference(scenario_file: &Path, target: &Path) -> Result<(), String> {
    if ALLOW_ANY_PATH.load(Ordering::Relaxed) {
        return Ok(());
    }
    let Ok(resolved) = target.canonicalize() else {
        return Ok(());
    };
    let folder = scenario_file
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let bundled = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut roots: Vec<PathBuf> = [folder.to_path_buf(), PathBuf::from("."), bundled]
        .iter()
        .filter_map(|r| r.canonicalize().ok())
        .collect();
    let repository = folder.canonicalize().ok().and_then(|f| {
        f.ancestors()
            .find(|d| d.join(".git").exists())
            .map(PathBuf::from)
    });
    roots.extend(repository);
    roots.sort();
    roots.dedup();
    if roots.iter().any(|root| resolved.starts_with(root)) {
        return Ok(());
    }
    let shown: Vec<String> = roots.iter().map(|r| r.display().to_string()).collect();
    Err(format!(
        "it resolves to {}, outside the scenario's folder (or repository), the working directory and schedsim's bundled files ({}); scenarios may only read files there (pass --allow-any-path to lift this)",
        resolved.display(),
        shown.join(", ")
    ))
}
