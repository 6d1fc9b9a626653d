//! Name and label syntax as apimachinery checks it, with its messages:
//! `k8s.io/apimachinery/pkg/util/validation/validation.go` (`IsDNS1123Label`,
//! `IsDNS1123Subdomain`: object names, whose length errors count "characters") and
//! `pkg/api/validate/content` (`IsLabelKey` — `IsQualifiedName` —, `IsLabelValue`, and its own
//! `IsDNS1123Label`/`IsDNS1123Subdomain`, whose length errors count "bytes"), at apimachinery
//! v0.36. A selector requirement with an invalid key or value never matches
//! (`labels.NewRequirement` rejects it).
//!
//! The `is_*` predicates answer without building a message, for hot paths; the `*_errors`
//! functions give upstream's messages, empty when the value is valid.

/// How a maximum length is worded: util/validation's `MaxLenError` says "characters",
/// `content.MaxLenError` says "bytes" (both count bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LenUnit {
    Characters,
    Bytes,
}

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const LABEL_KEY_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_KEY_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_KEY_EXAMPLES: &[&str] = &["MyName", "my.name", "123-abc"];

/// `DNS1123LabelMaxLength`, `LabelValueMaxLength` and the label key's name part.
pub const DNS1123_LABEL_MAX_LENGTH: usize = 63;
/// `DNS1123SubdomainMaxLength`.
pub const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;

/// `MaxLenError`.
pub fn max_len_error(length: usize, unit: LenUnit) -> String {
    let unit = match unit {
        LenUnit::Characters => "characters",
        LenUnit::Bytes => "bytes",
    };
    format!("must be no more than {length} {unit}")
}

/// `RegexError`: the message, its examples and the regular expression.
pub fn regex_error(message: &str, regex: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{message} (regex used for validation is '{regex}')");
    }
    let mut out = format!("{message} (e.g. ");
    for (i, e) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push_str(&format!("'{e}', "));
    }
    out.push_str(&format!("regex used for validation is '{regex}')"));
    out
}

/// Matches `[a-z0-9]([-a-z0-9]*[a-z0-9])?` (any length).
pub fn is_label_syntax(s: &str) -> bool {
    let b = s.as_bytes();
    let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    !b.is_empty()
        && alnum(&b[0])
        && alnum(&b[b.len() - 1])
        && b.iter().all(|c| alnum(c) || *c == b'-')
}

/// Matches the DNS-1123 subdomain regex (any length): dot-separated labels.
pub fn is_subdomain_syntax(s: &str) -> bool {
    s.split('.').all(is_label_syntax)
}

/// Matches `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]` (any length).
fn is_label_key_syntax(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// A label key's name part, or a non-empty label value: the syntax, at most 63 bytes.
fn is_qualified_name_part(s: &str) -> bool {
    s.len() <= DNS1123_LABEL_MAX_LENGTH && is_label_key_syntax(s)
}

/// `IsDNS1123Subdomain`, as a predicate.
pub fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= DNS1123_SUBDOMAIN_MAX_LENGTH && is_subdomain_syntax(s)
}

/// `IsDNS1123Label`, as a predicate.
pub fn is_dns1123_label(s: &str) -> bool {
    s.len() <= DNS1123_LABEL_MAX_LENGTH && is_label_syntax(s)
}

/// `IsQualifiedName` (`IsLabelKey`), as a predicate: `[prefix/]name`, prefix a DNS subdomain.
pub fn is_qualified_name(key: &str) -> bool {
    match key.split_once('/') {
        Some((prefix, name)) => is_dns1123_subdomain(prefix) && is_qualified_name_part(name),
        None => is_qualified_name_part(key),
    }
}

/// `IsValidLabelValue` (`IsLabelValue`), as a predicate: empty, or a qualified-name part.
pub fn is_valid_label_value(value: &str) -> bool {
    value.is_empty() || is_qualified_name_part(value)
}

/// `IsDNS1123Label`.
pub fn dns1123_label_errors(value: &str, unit: LenUnit) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH, unit));
    }
    if !is_label_syntax(value) {
        if is_subdomain_syntax(value) {
            errs.push("must not contain dots".into());
        } else {
            errs.push(regex_error(
                DNS1123_LABEL_MSG,
                DNS1123_LABEL_FMT,
                &["my-name", "123-abc"],
            ));
        }
    }
    errs
}

/// `IsDNS1035Label` (util/validation): a DNS-1123 label that starts with a letter.
pub fn dns1035_label_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH, LenUnit::Characters));
    }
    if !(is_label_syntax(value) && value.as_bytes()[0].is_ascii_lowercase()) {
        errs.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            "[a-z]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// `IsDNS1123Subdomain`.
pub fn dns1123_subdomain_errors(value: &str, unit: LenUnit) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH, unit));
    }
    if !is_subdomain_syntax(value) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// `IsQualifiedName` (`content.IsLabelKey`): label keys, annotation keys (lowercased by the
/// caller), topology keys.
pub fn qualified_name_errors(value: &str) -> Vec<String> {
    if is_qualified_name(value) {
        return Vec::new();
    }
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".into());
            } else {
                errs.extend(
                    dns1123_subdomain_errors(prefix, LenUnit::Bytes)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            name
        }
        _ => {
            return vec![format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(LABEL_KEY_MSG, LABEL_KEY_FMT, LABEL_KEY_EXAMPLES)
            )];
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".into());
    } else if name.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(format!(
            "name part {}",
            max_len_error(DNS1123_LABEL_MAX_LENGTH, LenUnit::Bytes)
        ));
    }
    if !is_label_key_syntax(name) {
        errs.push(format!(
            "name part {}",
            regex_error(LABEL_KEY_MSG, LABEL_KEY_FMT, LABEL_KEY_EXAMPLES)
        ));
    }
    errs
}

/// `IsValidLabelValue` (`content.IsLabelValue`).
pub fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH, LenUnit::Bytes));
    }
    if !value.is_empty() && !is_label_key_syntax(value) {
        errs.push(regex_error(
            LABEL_VALUE_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_syntax() {
        assert!(is_qualified_name("nvidia.com/gpu.product"));
        assert!(is_qualified_name("topology.kubernetes.io/zone"));
        assert!(is_qualified_name("foo"));
        assert!(!is_qualified_name("Nvidia.com/gpu"));
        assert!(!is_qualified_name("/gpu"));
        assert!(!is_qualified_name("a/b/c"));
        assert!(!is_qualified_name(""));
        assert!(is_valid_label_value(""));
        assert!(is_valid_label_value("NVIDIA-A100-SXM4-40GB"));
        assert!(!is_valid_label_value("invalid value: ___@#$%^"));
        assert!(!is_valid_label_value(&"a".repeat(64)));
    }

    #[test]
    fn predicates_agree_with_messages() {
        for v in [
            "", "a", "A", "a.b", "-a", "a/b", "/b", "a/", "a/b/c", "é", "a_b",
        ] {
            assert_eq!(
                is_qualified_name(v),
                qualified_name_errors(v).is_empty(),
                "{v}"
            );
            assert_eq!(
                is_valid_label_value(v),
                label_value_errors(v).is_empty(),
                "{v}"
            );
            let label = dns1123_label_errors(v, LenUnit::Characters).is_empty();
            assert_eq!(is_dns1123_label(v), label, "{v}");
            let subdomain = dns1123_subdomain_errors(v, LenUnit::Characters).is_empty();
            assert_eq!(is_dns1123_subdomain(v), subdomain, "{v}");
        }
    }

    #[test]
    fn names_have_upstream_messages() {
        assert!(dns1123_label_errors("gpu-0", LenUnit::Bytes).is_empty());
        assert_eq!(
            dns1123_label_errors("a.b", LenUnit::Bytes),
            ["must not contain dots"]
        );
        assert_eq!(
            dns1123_label_errors("!@#$%^", LenUnit::Bytes),
            [
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        assert_eq!(
            dns1123_subdomain_errors(&"a".repeat(254), LenUnit::Bytes)[0],
            "must be no more than 253 bytes"
        );
        assert_eq!(
            dns1123_subdomain_errors(&"a".repeat(254), LenUnit::Characters)[0],
            "must be no more than 253 characters"
        );
    }
}
