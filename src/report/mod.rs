//! Reports: one serializable model of a run's outcome, rendered as JSON or tables.
//! Renderers write to `impl Write`; [`write_atomic`] puts files in place only when complete.

pub mod chart;
pub mod ci;
pub mod dra;
pub mod kueue;
pub mod model;

pub mod table;
pub mod yaml;

use std::io::Write;
use std::path::Path;

pub use model::{RunReport, ScenarioReport};

/// Writes `path` via a temporary file in the same folder and a rename, so an interrupted run
/// never leaves a half-written report and an existing one is replaced only when complete. The
/// temporary file is removed on Ctrl-C or SIGTERM ([`crate::interrupt`]); ones left by killed
/// runs are cleared first.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    crate::interrupt::remove_stale(dir);
    let tmp = crate::interrupt::TempFile::beside(&dir.join(path.file_name().unwrap_or_default()));
    let result = (|| {
        let mut f = std::fs::File::create(tmp.path())?;
        f.write_all(contents)?;
        f.sync_all()?;
        std::fs::rename(tmp.path(), path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(tmp.path());
    }
    result
}

/// The JSON report, pretty-printed with a trailing newline.
pub fn to_json(report: &RunReport) -> String {
    let mut s = serde_json::to_string_pretty(report).expect("report serializes");
    s.push('\n');
    s
}
