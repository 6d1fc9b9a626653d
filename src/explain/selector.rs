//! `--selector`: pods by a label selector written as `kubectl -l` takes it (apimachinery's
//! `labels.Parse`): requirements joined by commas, each `key`, `!key`, `key=value`,
//! `key==value`, `key!=value`, `key in (v1,v2)`, `key notin (v1,v2)`, `key>n` or `key<n`;
//! keys are qualified names, values label values, and the bound of `>` and `<` an integer
//! (`labels.NewRequirement` parses it with `strconv.ParseInt`). `key>n` holds for a pod whose
//! label `key` is an integer greater than `n` (`Requirement.Matches`).

use std::collections::BTreeMap;

use crate::model::labels::{is_valid_label_value, qualified_name_errors};

/// One requirement.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Exists(String),
    DoesNotExist(String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    GreaterThan(String, i64),
    LessThan(String, i64),
}

/// A parsed selector: every requirement must hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector(Vec<Requirement>);

impl Selector {
    /// Parses `text`, or says what is wrong with it.
    pub fn parse(text: &str) -> Result<Selector, String> {
        let mut out = Vec::new();
        for part in split_requirements(text)? {
            let part = part.trim();
            if part.is_empty() {
                return Err(format!("{text:?}: an empty requirement"));
            }
            out.push(requirement(part)?);
        }
        Ok(Selector(out))
    }

    /// Whether `labels` satisfy every requirement (a `!=` or `notin` holds where the key is
    /// absent, as upstream's `Requirement.Matches`).
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.0.iter().all(|r| match r {
            Requirement::Exists(k) => labels.contains_key(k),
            Requirement::DoesNotExist(k) => !labels.contains_key(k),
            Requirement::In(k, vs) => labels.get(k).is_some_and(|v| vs.contains(v)),
            Requirement::NotIn(k, vs) => labels.get(k).is_none_or(|v| !vs.contains(v)),
            Requirement::GreaterThan(k, n) => integer(labels, k).is_some_and(|v| v > *n),
            Requirement::LessThan(k, n) => integer(labels, k).is_some_and(|v| v < *n),
        })
    }
}

/// The requirements: split at the commas outside parentheses.
fn split_requirements(text: &str) -> Result<Vec<&str>, String> {
    let (mut depth, mut start, mut out) = (0i32, 0, Vec::new());
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
        if !(0..=1).contains(&depth) {
            return Err(format!("{text:?}: unbalanced parentheses"));
        }
    }
    if depth != 0 {
        return Err(format!("{text:?}: unbalanced parentheses"));
    }
    out.push(&text[start..]);
    Ok(out)
}

fn requirement(part: &str) -> Result<Requirement, String> {
    let key = |k: &str| -> Result<String, String> {
        let k = k.trim();
        match qualified_name_errors(k).first() {
            Some(e) => Err(format!("{part:?}: key {k:?}: {e}")),
            None => Ok(k.to_string()),
        }
    };
    let value = |v: &str| -> Result<String, String> {
        let v = v.trim();
        match is_valid_label_value(v) {
            true => Ok(v.to_string()),
            false => Err(format!("{part:?}: {v:?} is not a label value")),
        }
    };
    if let Some(k) = part.strip_prefix('!') {
        return Ok(Requirement::DoesNotExist(key(k)?));
    }
    for (op, negated) in [("!=", true), ("==", false), ("=", false)] {
        if let Some((k, v)) = part.split_once(op) {
            let (k, v) = (key(k)?, vec![value(v)?]);
            return Ok(match negated {
                true => Requirement::NotIn(k, v),
                false => Requirement::In(k, v),
            });
        }
    }
    for (op, greater) in [('>', true), ('<', false)] {
        if let Some((k, v)) = part.split_once(op) {
            let v = v.trim();
            let n: i64 = v.parse().map_err(|_| {
                format!("{part:?}: for '>', '<' operators, the value must be an integer")
            })?;
            let k = key(k.trim())?;
            return Ok(match greater {
                true => Requirement::GreaterThan(k, n),
                false => Requirement::LessThan(k, n),
            });
        }
    }
    let words: Vec<&str> = part.splitn(2, char::is_whitespace).collect();
    if let [k, rest] = words[..] {
        let rest = rest.trim();
        for (op, negated) in [("notin", true), ("in", false)] {
            if let Some(set) = rest.strip_prefix(op) {
                let set = set.trim();
                let inner = (set.strip_prefix('(').and_then(|s| s.strip_suffix(')')))
                    .ok_or_else(|| format!("{part:?}: {op} takes a set: {op} (a,b)"))?;
                let values = inner.split(',').map(value).collect::<Result<Vec<_>, _>>()?;
                return Ok(match negated {
                    true => Requirement::NotIn(key(k)?, values),
                    false => Requirement::In(key(k)?, values),
                });
            }
        }
        return Err(format!(
            "{part:?}: expected =, ==, !=, in or notin after {k:?}"
        ));
    }
    Ok(Requirement::Exists(key(part)?))
}

/// A label's value as `strconv.ParseInt` reads it, if it is one.
fn integer(labels: &BTreeMap<String, String>, key: &str) -> Option<i64> {
    labels.get(key)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_forms_kubectl_takes() {
        let l = labels(&[
            ("app", "web"),
            ("tier", "gpu"),
            ("team", "ml"),
            ("rank", "4"),
        ]);
        let cases = [
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("app!=db", true),
            ("missing!=x", true),
            ("app", true),
            ("!app", false),
            ("!missing", true),
            ("tier in (gpu,cpu)", true),
            ("tier notin (gpu, cpu)", false),
            ("missing notin (a)", true),
            ("app=web,tier in (gpu),!missing", true),
            ("app=web,team=infra", false),
            ("rank>3", true),
            ("rank>4", false),
            ("rank<5", true),
            ("rank < 4", false),
            ("app>1", false),
            ("missing<9", false),
            ("rank>-1,app=web", true),
        ];
        for (text, want) in cases {
            assert_eq!(Selector::parse(text).unwrap().matches(&l), want, "{text}");
        }
    }

    #[test]
    fn bad_selectors_say_why() {
        for bad in [
            "app=web,",
            "tier in gpu",
            "a>x",
            "a<3.5",
            "tier in (gpu",
            "-bad=x",
            "app=v@l",
        ] {
            assert!(Selector::parse(bad).is_err(), "{bad}");
        }
    }
}
