//! Reports: one serializable model of a run's outcome, rendered as JSON or tables.
//! Renderers write to `impl Write`; [`write_atomic`] puts files in place only when complete.

pub mod chart;
pub mod ci;
pub mod dra;
pub mod gpu_share;
pub mod kueue;
pub mod model;
pub(crate) mod rows;
mod style;

pub mod table;
pub mod yaml;

use std::io::Write;
use std::path::Path;

pub use model::{RunReport, ScenarioReport};

/// Writes `path` via a temporary file in the same folder and a rename, so an interrupted run
/// never leaves a half-written report and an existing one is replaced only when complete.
pub fn write_atomic(path: &Path, contents: &[u8]) -> std::io::Result<()> {
    let mut file = AtomicFile::create(path)?;
    file.write_all(contents)?;
    file.commit()
}

/// A file written in pieces through a temporary file beside it (`.<name>.tmp-<pid>`) and
/// renamed into place by [`AtomicFile::commit`]: for outputs streamed as they are produced
/// (a sweep's run rows). The temporary file is removed when dropped uncommitted, and on Ctrl-C
/// or SIGTERM ([`crate::interrupt`]); ones left by killed runs are cleared first.
pub struct AtomicFile {
    path: std::path::PathBuf,
    tmp: crate::interrupt::TempFile,
    file: Option<std::io::BufWriter<std::fs::File>>,
}

impl AtomicFile {
    pub fn create(path: &Path) -> std::io::Result<AtomicFile> {
        let dir = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        crate::interrupt::remove_stale(dir);
        let tmp =
            crate::interrupt::TempFile::beside(&dir.join(path.file_name().unwrap_or_default()));
        let file = std::fs::File::create(tmp.path())?;
        Ok(AtomicFile {
            path: path.to_path_buf(),
            tmp,
            file: Some(std::io::BufWriter::new(file)),
        })
    }

    /// Flushes, syncs and renames the file into place.
    pub fn commit(mut self) -> std::io::Result<()> {
        let Some(file) = self.file.take() else {
            return Ok(());
        };
        let result = file
            .into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| f.sync_all())
            .and_then(|()| std::fs::rename(self.tmp.path(), &self.path));
        if result.is_err() {
            let _ = std::fs::remove_file(self.tmp.path());
        }
        result
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.file {
            Some(f) => f.write(buf),
            None => Err(std::io::Error::other("the file was committed")),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(self.tmp.path());
        }
    }
}

/// The JSON report, pretty-printed with a trailing newline.
pub fn to_json(report: &RunReport) -> String {
    let mut s = serde_json::to_string_pretty(report).expect("report serializes");
    s.push('\n');
    s
}

/// For `skip_serializing_if`: a count of nothing is left out.
pub(crate) fn is_zero(n: &usize) -> bool {
    *n == 0
}
