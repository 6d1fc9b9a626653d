//! Dropping the lines of skipped fields before the YAML tokenizer sees them.
//!
//! The event parser reads ~50 MB/s however little of a value is kept, and in a `kubectl get
//! nodes -o yaml` dump two thirds of the lines are `managedFields`, `status.images`,
//! `status.conditions`, … which [`build`](super::build) steps over anyway. This pass finds
//! those block values by indentation alone and leaves them out of the text the value pass
//! parses, so that pass tokenizes only what it keeps.
//!
//! It only ever drops lines inside a value that the builder's [`Ctx`] rules skip, so both
//! texts build the same values; positions are still found in the original text. Where the
//! text uses something a line scanner cannot follow safely (tabs, multi-line quoted or flow
//! scalars, complex keys), it declines and the original text is parsed as it is.

use super::build::Ctx;

/// A block mapping whose keys sit at `column`.
struct Level {
    column: usize,
    ctx: Ctx,
    /// The context of the value of its last key when that value is a nested block.
    value_ctx: Option<Ctx>,
}

/// The text without the lines of skipped block values, or `None` when there is nothing to
/// drop or the text is beyond what a line scanner follows safely.
pub fn skim(text: &str) -> Option<String> {
    let mut out = String::with_capacity(text.len() / 2);
    let mut levels: Vec<Level> = Vec::new();
    // The column of the key whose value is being dropped.
    let mut dropping: Option<usize> = None;
    // The column that the lines of a block scalar are indented past.
    let mut block_scalar: Option<usize> = None;
    let mut dropped = false;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let indent = body.len() - body.trim_start_matches(' ').len();
        let rest = &body[indent..];
        if rest.starts_with('\t') {
            return None;
        }
        let blank = rest.is_empty() || rest.starts_with('#');
        if let Some(column) = dropping {
            let entry = indent == column && (rest.starts_with("- ") || rest == "-");
            if blank || indent > column || entry {
                continue;
            }
            dropping = None;
        }
        if let Some(column) = block_scalar {
            if rest.is_empty() || indent > column {
                out.push_str(line);
                continue;
            }
            block_scalar = None;
        }
        out.push_str(line);
        if blank {
            continue;
        }
        if indent == 0 && (rest.starts_with("---") || rest.starts_with("...")) {
            levels.clear();
            continue;
        }
        if indent == 0 && rest.starts_with('%') {
            continue;
        }
        // Sequence entries: `- - key: value` puts the content two columns right per dash.
        let (mut column, mut content, mut dashes) = (indent, rest, 0);
        while let Some(after) = content.strip_prefix("- ") {
            let spaces = after.len() - after.trim_start_matches(' ').len();
            column += 2 + spaces;
            content = &after[spaces..];
            dashes += 1;
        }
        if content == "-" || content.starts_with('?') {
            return None;
        }
        while levels.last().is_some_and(|l| l.column > indent) {
            levels.pop();
        }
        // The context of the mapping a key on this line belongs to.
        let ctx = if dashes > 0 {
            let owner = levels
                .last()
                .and_then(|l| l.value_ctx)
                .unwrap_or(Ctx::Other);
            let mut element = owner.element();
            for _ in 1..dashes {
                element = Ctx::Other;
            }
            element
        } else {
            match levels.last() {
                Some(l) if l.column == column => l.ctx,
                Some(l) => l.value_ctx.unwrap_or(Ctx::Other),
                None => Ctx::ObjectRoot,
            }
        };
        if levels.last().is_none_or(|l| l.column != column) {
            levels.push(Level {
                column,
                ctx,
                value_ctx: None,
            });
        }
        let level = levels.last_mut().expect("pushed above");
        let (key_ctx, value) = match split_key(content) {
            Some((key, value)) => (ctx.child(key), value),
            None if content.starts_with(['"', '\'']) && content.trim_end().ends_with(':') => {
                (Ctx::Other, "")
            }
            None => (Ctx::Other, content),
        };
        let key_ctx = if ctx == Ctx::Other {
            Ctx::Other
        } else {
            key_ctx
        };
        let value = strip_properties(value);
        level.value_ctx = None;
        if value.is_empty() {
            if key_ctx == Ctx::Skip {
                out.truncate(out.len() - line.len());
                dropping = Some(column);
                dropped = true;
            } else {
                level.value_ctx = Some(key_ctx);
            }
        } else if is_block_scalar(value) {
            block_scalar = Some(if split_key(content).is_some() {
                column
            } else {
                indent
            });
        } else if opens_multiline(value) {
            return None;
        }
    }
    dropped.then_some(out)
}

/// `key: value` or `key:` with a plain key of the characters Kubernetes field and label
/// names use; anything else (quoted or complex keys, scalars) is `None`.
fn split_key(content: &str) -> Option<(&str, &str)> {
    let end = content
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')))
        .unwrap_or(content.len());
    if end == 0 {
        return None;
    }
    let after = &content[end..];
    let value = after.strip_prefix(':')?;
    if !(value.is_empty() || value.starts_with(' ')) {
        return None;
    }
    Some((&content[..end], value.trim()))
}

/// The value without a leading anchor (`&name`) or tag (`!tag`) and a trailing comment.
fn strip_properties(mut value: &str) -> &str {
    while value.starts_with(['&', '!']) {
        value = value
            .split_once(' ')
            .map_or("", |(_, rest)| rest)
            .trim_start();
    }
    if value.starts_with('#') {
        return "";
    }
    value
}

/// `|`, `>`, with chomping and indentation indicators, maybe a comment.
fn is_block_scalar(value: &str) -> bool {
    let head = value.split(" #").next().unwrap_or("").trim_end();
    head.starts_with(['|', '>'])
        && head[1..]
            .chars()
            .all(|c| matches!(c, '+' | '-') || c.is_ascii_digit())
}

/// Whether a value continues on the next lines: an unclosed quote or bracket.
fn opens_multiline(value: &str) -> bool {
    match value.as_bytes().first() {
        Some(b'"') => {
            let mut escaped = false;
            !value[1..].chars().any(|c| {
                let close = c == '"' && !escaped;
                escaped = c == '\\' && !escaped;
                close
            })
        }
        Some(b'\'') => value[1..].matches('\'').count().is_multiple_of(2),
        Some(b'[' | b'{') => {
            let (mut depth, mut quote) = (0i32, None);
            for c in value.chars() {
                match (quote, c) {
                    (Some(q), c) if c == q => quote = None,
                    (Some(_), _) => {}
                    (None, '"' | '\'') => quote = Some(c),
                    (None, '[' | '{') => depth += 1,
                    (None, ']' | '}') => depth -= 1,
                    _ => {}
                }
            }
            depth != 0 || quote.is_some()
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::super::build::build;
    use super::*;

    /// The skimmed text builds the same values as the original.
    fn same_values(text: &str) -> bool {
        let full: Vec<_> = build(text, false)
            .unwrap()
            .into_iter()
            .map(|d| (d.index, d.value))
            .collect();
        let Some(skimmed) = skim(text) else {
            return false;
        };
        let fast: Vec<_> = build(&skimmed, false)
            .unwrap()
            .into_iter()
            .map(|d| (d.index, d.value))
            .collect();
        assert_eq!(full, fast, "{skimmed}");
        true
    }

    const DUMP: &str = "apiVersion: v1
items:
- apiVersion: v1
  kind: Node
  metadata:
    annotations:
      note: |
        status:
          images:
        managedFields:
    labels: {a: b}
    managedFields:
    - apiVersion: v1
      fieldsV1:
        f:metadata: {}
# a comment at column 0 inside the dropped value
      manager: kubelet
    name: n1
  status:
    allocatable:
      cpu: \"8\"
    conditions:
    - type: Ready
      status: \"True\"
    images:
    - names:
      - a
      sizeBytes: 1
    nodeInfo:
      kubeletVersion: v1.34
    phase: Running
- apiVersion: v1
  kind: Pod
  metadata:
    name: p
  spec:
    containers:
    - name: c
      status:
        images: kept, not an object root
  status:
    startTime: \"2026-01-01T00:00:00Z\"
    containerStatuses:
    - name: c
kind: List
---
kind: Node
metadata:
  managedFields:
    - manager: x
  name: solo
status:
  images: []
  capacity:
    images:
      kept: because capacity is read
";

    #[test]
    fn skimming_a_dump_keeps_every_value_the_builder_keeps() {
        assert!(same_values(DUMP));
        let skimmed = skim(DUMP).unwrap();
        assert!(!skimmed.contains("kubelet") && !skimmed.contains("sizeBytes"));
        assert!(
            skimmed.contains("managedFields:\n"),
            "inside the block scalar"
        );
        assert!(skimmed.contains("kept, not an object root"));
    }

    #[test]
    fn declines_what_a_line_scanner_cannot_follow() {
        assert_eq!(skim("a:\n\tb: 1\n"), None);
        assert_eq!(skim("status:\n  images: \"multi\n    line\"\n"), None);
        assert_eq!(skim("status:\n  images: [a,\n    b]\n"), None);
        assert_eq!(skim("? complex\n: key\n"), None);
        assert_eq!(
            skim("kind: Pod\nmetadata: {name: a}\n"),
            None,
            "nothing to drop"
        );
    }

    #[test]
    fn quoted_keys_block_the_keys_above_them() {
        let text = "metadata:\n  \"annotations\":\n    managedFields:\n      x: 1\nstatus:\n  images: []\n  conditions:\n  - a\n";
        assert!(same_values(text));
        assert!(skim(text).unwrap().contains("x: 1"));
    }

    /// Every YAML file of the repository builds the same values skimmed or not.
    #[test]
    fn every_bundled_yaml_file_builds_the_same_values_skimmed() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut stack = vec![
            root.join("scenarios"),
            root.join("fixtures"),
            root.join("tests/data"),
        ];
        let (mut files, mut skimmed) = (0, 0);
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(&dir).unwrap().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
                    let text = std::fs::read_to_string(&path).unwrap();
                    if build(&text, false).is_err() {
                        continue;
                    }
                    files += 1;
                    skimmed += usize::from(same_values(&text));
                }
            }
        }
        assert!(files > 50, "{files}");
        assert!(skimmed > 0, "some fixtures are kubectl dumps");
    }
}
