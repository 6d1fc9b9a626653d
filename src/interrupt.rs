//! Ctrl-C and `kill`: temporary files of reports being written are removed, and the process
//! exits with the shell's code for the signal (130 for SIGINT, 143 for SIGTERM) and one line.
//!
//! Reports are written to a temporary file and renamed into place ([`crate::report::write_atomic`]);
//! each such file is registered here for as long as it exists. SIGKILL cannot be caught: the
//! files it leaves are recognised by their name (`.<name>.tmp-<pid>`) and removed by the next
//! write into the same folder once their process is gone ([`remove_stale`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

static IN_FLIGHT: Mutex<BTreeSet<PathBuf>> = Mutex::new(BTreeSet::new());

/// A temporary file registered for removal on a signal; unregistered (not removed) on drop.
pub struct TempFile {
    path: PathBuf,
}

impl TempFile {
    /// The temporary name this process uses for `target`: `.<name>.tmp-<pid>` beside it.
    pub fn beside(target: &Path) -> TempFile {
        Self::named(target, "")
    }

    /// As [`TempFile::beside`], ending in the target's extension too (`.<name>.tmp-<pid>.png`),
    /// for writers that choose the format by extension.
    pub fn beside_keeping_extension(target: &Path) -> TempFile {
        let ext = target
            .extension()
            .map(|e| format!(".{}", e.to_string_lossy()))
            .unwrap_or_default();
        Self::named(target, &ext)
    }

    fn named(target: &Path, suffix: &str) -> TempFile {
        let dir = target.parent().unwrap_or(Path::new(""));
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let path = dir.join(format!(".{name}.tmp-{}{suffix}", std::process::id()));
        lock().insert(path.clone());
        TempFile { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        lock().remove(&self.path);
    }
}

fn lock() -> std::sync::MutexGuard<'static, BTreeSet<PathBuf>> {
    // A panic while holding the lock leaves the set usable.
    IN_FLIGHT.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes the files registered now; returns how many were there.
fn remove_in_flight() -> usize {
    lock()
        .iter()
        .filter(|p| std::fs::remove_file(p).is_ok())
        .count()
}

/// Handles SIGINT and SIGTERM on a background thread for the rest of the process.
pub fn install() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            let removed = remove_in_flight();
            let name = if signal == SIGINT {
                "SIGINT"
            } else {
                "SIGTERM"
            };
            let files = match removed {
                0 => String::new(),
                1 => "; removed 1 unfinished report file".into(),
                n => format!("; removed {n} unfinished report files"),
            };
            eprintln!("schedsim: interrupted by {name}{files}");
            std::process::exit(128 + signal);
        }
    });
}

/// Removes `.<name>.tmp-<pid>` files in `dir` left by schedsim processes that no longer run
/// (killed with SIGKILL, or by a power cut). Files of running processes are theirs.
pub fn remove_stale(dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = stale_pid(&name.to_string_lossy()) else {
            continue;
        };
        if pid != std::process::id() && !process_runs(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The pid in a temporary file name of ours: `.` + a report name + `.tmp-` + digits, maybe
/// followed by the report's extension.
fn stale_pid(name: &str) -> Option<u32> {
    const OURS: [&str; 7] = [".json", ".txt", ".xml", ".svg", ".png", ".html", ".yaml"];
    let (stem, tail) = name.strip_prefix('.')?.rsplit_once(".tmp-")?;
    let ext = OURS.iter().find(|ext| stem.ends_with(*ext))?;
    let pid = tail.strip_suffix(ext).unwrap_or(tail);
    (!pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        .then(|| pid.parse().ok())
        .flatten()
}

/// Whether a process with this pid exists. Where `/proc` is not there to tell, every pid
/// counts as running and nothing is removed.
fn process_runs(pid: u32) -> bool {
    let proc = Path::new("/proc");
    !proc.join("self").exists() || proc.join(pid.to_string()).exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_temporary_names_are_stale_candidates() {
        assert_eq!(stale_pid(".run.json.tmp-1234"), Some(1234));
        assert_eq!(stale_pid(".placement.png.tmp-7"), Some(7));
        assert_eq!(stale_pid(".placement.png.tmp-7.png"), Some(7));
        assert_eq!(stale_pid(".placement.png.tmp-7.svg"), None);
        assert_eq!(stale_pid("run.json.tmp-1234"), None);
        assert_eq!(stale_pid(".run.json.tmp-12a"), None);
        assert_eq!(stale_pid(".notes.tmp-1"), None);
    }

    #[test]
    fn registered_files_are_removed_and_dropped_guards_forget_them() {
        let dir = std::env::temp_dir().join(format!("schedsim-interrupt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let t = TempFile::beside(&dir.join("run.json"));
        std::fs::write(t.path(), "x").unwrap();
        assert!(remove_in_flight() >= 1);
        assert!(!t.path().exists());
        let path = t.path().to_path_buf();
        drop(t);
        assert!(!lock().contains(&path));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
