//! Label key and value syntax (`k8s.io/apimachinery/pkg/util/validation/validation.go`:
//! `IsQualifiedName`, `IsValidLabelValue`, `IsDNS1123Subdomain`). A selector requirement with
//! an invalid key or value never matches (`labels.NewRequirement` rejects it).

/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, at most 63 characters, non-empty.
fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// `IsDNS1123Subdomain`: lowercase alphanumerics, `-` and `.`, labels start and end alphanumeric.
pub fn is_dns1123_subdomain(s: &str) -> bool {
    s.len() <= 253
        && !s.is_empty()
        && s.split('.').all(|label| {
            let b = label.as_bytes();
            !b.is_empty()
                && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
                && (b[b.len() - 1].is_ascii_lowercase() || b[b.len() - 1].is_ascii_digit())
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        })
}

/// `IsQualifiedName`: `[prefix/]name`, prefix a DNS subdomain.
pub fn is_qualified_name(key: &str) -> bool {
    match key.split_once('/') {
        Some((prefix, name)) => is_dns1123_subdomain(prefix) && is_qualified_name_part(name),
        None => is_qualified_name_part(key),
    }
}

/// `IsValidLabelValue`: empty, or a qualified-name part.
pub fn is_valid_label_value(value: &str) -> bool {
    value.is_empty() || is_qualified_name_part(value)
}

/// `RegexError` (apimachinery `validation.go`): the message naming the regex and examples.
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let mut out = format!("{msg} (");
    if !examples.is_empty() {
        out.push_str("e.g. ");
        for (i, e) in examples.iter().enumerate() {
            if i > 0 {
                out.push_str(" or ");
            }
            out.push_str(&format!("'{e}', "));
        }
    }
    out.push_str(&format!("regex used for validation is '{fmt}')"));
    out
}

/// `MaxLenError`.
fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

const LABEL_KEY_MESSAGE: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_KEY_FORMAT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";

/// `IsDNS1123Subdomain`'s messages (empty: valid).
pub fn dns1123_subdomain_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 253 {
        errs.push(max_len_error(253));
    }
    if !matches_dns1123_subdomain(s) {
        errs.push(regex_error(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character",
            "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*",
            &["example.com"],
        ));
    }
    errs
}

/// The DNS-1123 subdomain regex alone (no length bound).
pub fn matches_dns1123_subdomain(s: &str) -> bool {
    s.split('.').all(|label| {
        let b = label.as_bytes();
        !b.is_empty()
            && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
            && (b[b.len() - 1].is_ascii_lowercase() || b[b.len() - 1].is_ascii_digit())
            && b.iter()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
    })
}

/// `IsDNS1035Label`'s messages (empty: valid).
pub fn dns1035_label_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push(max_len_error(63));
    }
    let b = s.as_bytes();
    let ok = !b.is_empty()
        && b[0].is_ascii_lowercase()
        && (b[b.len() - 1].is_ascii_lowercase() || b[b.len() - 1].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-');
    if !ok {
        errs.push(regex_error(
            "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character",
            "[a-z]([-a-z0-9]*[a-z0-9])?",
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// The qualified-name regex alone (no length bound).
fn name_syntax(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// `content.IsLabelKey` (`IsQualifiedName`)'s messages (empty: valid).
pub fn label_key_errors(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let name = match key.split_once('/') {
        None => key,
        Some((_, suffix)) if suffix.contains('/') => {
            return vec![format!(
                "a valid label key {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(
                    LABEL_KEY_MESSAGE,
                    LABEL_KEY_FORMAT,
                    &["MyName", "my.name", "123-abc"]
                )
            )];
        }
        Some((prefix, suffix)) => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                errs.extend(
                    dns1123_subdomain_errors(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            suffix
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len_error(63)));
    }
    if !name_syntax(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                LABEL_KEY_MESSAGE,
                LABEL_KEY_FORMAT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// `IsValidLabelValue`'s messages (empty: valid).
pub fn label_value_errors(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !value.is_empty() && !name_syntax(value) {
        errs.push(regex_error(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character",
            "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?",
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
}
