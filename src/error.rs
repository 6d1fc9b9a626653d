//! Input errors that point at the exact place in the user's file.
//!
//! Every error a user can cause names the file, the line and column, and the field path
//! (`spec.containers[0].resources.requests.cpu`), so it can be fixed without guessing.

use std::fmt;
use std::path::{Path, PathBuf};

/// A line/column position inside an input file (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Position {
    pub line: u32,
    pub column: u32,
}

/// Bad input: a file that cannot be read, parsed, or that Kubernetes would reject.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    pub file: PathBuf,
    pub position: Option<Position>,
    /// Field path inside the document, in kubectl's style (`spec.tolerations[0].operator`).
    pub field: Option<String>,
    pub message: String,
}

impl InputError {
    pub fn new(file: &Path, message: impl Into<String>) -> Self {
        InputError {
            file: file.to_path_buf(),
            position: None,
            field: None,
            message: message.into(),
        }
    }

    pub fn at(mut self, position: Option<Position>) -> Self {
        self.position = position;
        self
    }

    pub fn field(mut self, field: impl Into<String>) -> Self {
        let field = field.into();
        self.field = (!field.is_empty()).then_some(field);
        self
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(p) = self.position {
            write!(f, ":{}:{}", p.line, p.column)?;
        }
        write!(f, ": ")?;
        if let Some(field) = &self.field {
            write!(f, "{field}: ")?;
        }
        write!(f, "{}", self.message)
    }
}

impl std::error::Error for InputError {}

/// Exit codes of the `schedsim` binary (DESIGN.md §7).
pub mod exit_code {
    pub const SUCCESS: i32 = 0;
    pub const EXPECTATIONS_NOT_MET: i32 = 1;
    pub const BAD_INPUT: i32 = 2;
}
