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
