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
            message: terminal_safe(&shorten_quoted(&message.into(), QUOTE_CHARS)).into_owned(),
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

/// `text` with control characters other than newline and tab written as escapes (`\u{1b}`):
/// names and values from input files reach the terminal in tables and messages, and an escape
/// sequence in a scenario name must not drive the user's terminal.
pub fn terminal_safe(text: &str) -> std::borrow::Cow<'_, str> {
    // Control characters (category Cc: U+0000–U+001F, U+007F–U+009F) found by their UTF-8
    // bytes: a report's table is megabytes, and decoding every char was most of this pass.
    let bytes = text.as_bytes();
    let control = |(i, &b): (usize, &u8)| match b {
        b'\n' | b'\t' => false,
        0x00..=0x1f | 0x7f => true,
        0xc2 => matches!(bytes.get(i + 1), Some(0x80..=0x9f)),
        _ => false,
    };
    if !bytes.iter().enumerate().any(control) {
        return std::borrow::Cow::Borrowed(text);
    }
    text.chars()
        .map(|c| match c {
            '\n' | '\t' => c.to_string(),
            c if c.is_control() => c.escape_unicode().to_string(),
            c => c.to_string(),
        })
        .collect::<String>()
        .into()
}

/// The most characters of one quoted value an error message shows.
pub const QUOTE_CHARS: usize = 80;

/// `message` with every double-quoted value longer than `max` characters cut to `max` and `…`:
/// a message quotes what the user wrote, but never a whole file (`file: /etc/passwd` read as a
/// pod is quoted by serde in full) or a value of megabytes.
pub fn shorten_quoted(message: &str, max: usize) -> String {
    let mut out = String::with_capacity(message.len().min(4 * max + 256));
    let mut rest = message;
    while let Some(open) = rest.find('"') {
        out.push_str(&rest[..=open]);
        rest = &rest[open + 1..];
        // The closing quote: the first one not escaped by a backslash.
        let mut escaped = false;
        let close = rest.char_indices().find_map(|(i, c)| {
            let end = c == '"' && !escaped;
            escaped = c == '\\' && !escaped;
            end.then_some(i)
        });
        let Some(close) = close else {
            // An unpaired quote: the rest is one value.
            out.push_str(&cut(rest, max));
            return out;
        };
        out.push_str(&cut(&rest[..close], max));
        out.push('"');
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
    out
}

fn cut(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_quoted_values_are_cut() {
        let long = "x".repeat(500);
        let m = shorten_quoted(
            &format!("invalid type: string \"{long}\", expected Pod"),
            10,
        );
        assert_eq!(m, "invalid type: string \"xxxxxxxxxx…\", expected Pod");
        let escaped = shorten_quoted(r#"Invalid value: "a\"b": bad"#, 10);
        assert_eq!(escaped, r#"Invalid value: "a\"b": bad"#);
        assert_eq!(shorten_quoted("no quotes", 3), "no quotes");
        assert_eq!(shorten_quoted("unpaired \"abcdefgh", 3), "unpaired \"abc…");
        assert_eq!(shorten_quoted("é \"ééééé\"", 2), "é \"éé…\"");
    }

    #[test]
    fn control_characters_are_escaped_for_the_terminal() {
        assert_eq!(terminal_safe("a\u{1b}[2Jb\u{7}"), "a\\u{1b}[2Jb\\u{7}");
        assert_eq!(terminal_safe("row\n\tcell"), "row\n\tcell");
        // The C1 controls (two bytes in UTF-8) and DEL, but not their neighbours.
        assert_eq!(terminal_safe("a\u{9b}b\u{7f}"), "a\\u{9b}b\\u{7f}");
        for ok in ["\u{a0}", "é", "…", "~", "\u{100}"] {
            assert!(
                matches!(terminal_safe(ok), std::borrow::Cow::Borrowed(_)),
                "{ok:?}"
            );
        }
    }

    /// The byte scan finds exactly the characters `char::is_control` names.
    #[test]
    fn every_control_character_is_found() {
        for c in (0..0x3000u32).filter_map(char::from_u32) {
            let text = format!("x{c}y");
            let wanted = c.is_control() && c != '\n' && c != '\t';
            let escaped = matches!(terminal_safe(&text), std::borrow::Cow::Owned(_));
            assert_eq!(escaped, wanted, "{c:?}");
        }
    }
}
