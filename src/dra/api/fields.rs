//! The building blocks of the API server's messages: apimachinery's field errors
//! (`pkg/util/validation/field/errors.go`: `Required`, `Invalid`, `TooLong`, `TooMany`,
//! `Duplicate`, `Forbidden`, as `ErrorBody` prints them) and name syntax
//! (`pkg/api/validate/content`: `IsDNS1123Label`, `IsDNS1123Subdomain`, `IsCIdentifier`,
//! `RegexError`, `MaxLenError`), with the resource validation's name rules built on them
//! (`validateDriverName`, `validatePoolName`, `validateQualifiedName`, …).

use super::{DEVICE_MAX_ID_LENGTH, DRIVER_NAME_MAX_LENGTH, POOL_NAME_MAX_LENGTH};
use crate::model::labels::{LenUnit, regex_error};
use crate::model::validate::FieldError;

pub(super) type Errs = Vec<FieldError>;

// ---- field.Error constructors, as `ErrorBody` prints them ----

pub(super) fn push(errs: &mut Errs, path: &str, message: String) {
    errs.push(FieldError::new(path, message));
}

/// `field.Required`.
pub(super) fn required(errs: &mut Errs, path: &str, detail: &str) {
    let message = match detail {
        "" => "Required value".to_string(),
        d => format!("Required value: {d}"),
    };
    push(errs, path, message);
}

/// `field.Invalid` of a string value (`%q`).
pub(super) fn invalid(errs: &mut Errs, path: &str, value: &str, detail: &str) {
    push(errs, path, format!("Invalid value: {value:?}: {detail}"));
}

/// `field.Invalid` of a value printed as it is (numbers, booleans, `null`, Go literals).
pub(super) fn invalid_raw(
    errs: &mut Errs,
    path: &str,
    value: impl std::fmt::Display,
    detail: &str,
) {
    push(errs, path, format!("Invalid value: {value}: {detail}"));
}

/// `field.TooLong`.
pub(super) fn too_long(errs: &mut Errs, path: &str, max: usize) {
    push(
        errs,
        path,
        format!("Too long: must have at most {max} bytes"),
    );
}

/// `field.TooMany`.
pub(super) fn too_many(errs: &mut Errs, path: &str, n: usize, max: usize) {
    push(
        errs,
        path,
        format!("Too many: {n}: must have at most {max} items"),
    );
}

/// `field.Duplicate` of a string value.
pub(super) fn duplicate(errs: &mut Errs, path: &str, value: &str) {
    push(errs, path, format!("Duplicate value: {value:?}"));
}

/// `field.Forbidden`.
pub(super) fn forbidden(errs: &mut Errs, path: &str, detail: &str) {
    push(errs, path, format!("Forbidden: {detail}"));
}

/// `field.Path.Child`.
pub(super) fn child(path: &str, name: &str) -> String {
    match path {
        "" => name.to_string(),
        _ => format!("{path}.{name}"),
    }
}

/// `field.Path.Index`.
pub(super) fn index(path: &str, i: usize) -> String {
    format!("{path}[{i}]")
}

// ---- name syntax (apimachinery `pkg/api/validate/content`, in `model::labels`) ----

/// `content.IsDNS1123Label` (lengths in bytes).
pub fn dns1123_label_errors(value: &str) -> Vec<String> {
    crate::model::labels::dns1123_label_errors(value, LenUnit::Bytes)
}

/// `content.IsDNS1123Subdomain` (lengths in bytes).
pub fn dns1123_subdomain_errors(value: &str) -> Vec<String> {
    crate::model::labels::dns1123_subdomain_errors(value, LenUnit::Bytes)
}

/// `IsCIdentifier`.
pub(super) fn c_identifier_errors(value: &str) -> Vec<String> {
    let b = value.as_bytes();
    let ok = !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'_');
    if ok {
        Vec::new()
    } else {
        vec![regex_error(
            "a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_'",
            "[A-Za-z_][A-Za-z0-9_]*",
            &["my_name", "MY_NAME", "MyName"],
        )]
    }
}

/// `corevalidation.ValidateDNS1123Label`: the device, request and namespace names.
pub(super) fn validate_dns_label(errs: &mut Errs, value: &str, path: &str) {
    for m in dns1123_label_errors(value) {
        invalid(errs, path, value, &m);
    }
}

/// `corevalidation.ValidateDNS1123Subdomain`: class names, node names, pool name parts.
pub(super) fn validate_dns_subdomain(errs: &mut Errs, value: &str, path: &str) {
    for m in dns1123_subdomain_errors(value) {
        invalid(errs, path, value, &m);
    }
}

/// `validateDriverName` (`corevalidation.ValidateCSIDriverName`): a DNS subdomain, compared in
/// lower case, of at most 63 bytes. An empty name is only `Required` (as declarative
/// validation reports it).
pub(super) fn validate_driver_name(errs: &mut Errs, name: &str, path: &str) {
    if name.is_empty() {
        required(errs, path, "");
        return;
    }
    if name.len() > DRIVER_NAME_MAX_LENGTH {
        too_long(errs, path, DRIVER_NAME_MAX_LENGTH);
    }
    for m in dns1123_subdomain_errors(&name.to_lowercase()) {
        invalid(errs, path, name, &m);
    }
}

/// `validatePoolName`: required, at most 253 bytes, each `/`-separated part a DNS subdomain.
pub(super) fn validate_pool_name(errs: &mut Errs, name: &str, path: &str) {
    if name.is_empty() {
        required(errs, path, "");
        return;
    }
    if name.len() > POOL_NAME_MAX_LENGTH {
        too_long(errs, path, POOL_NAME_MAX_LENGTH);
    }
    for part in name.split('/') {
        validate_dns_subdomain(errs, part, path);
    }
}

/// `validateDeviceClass`: the class a request names.
pub(super) fn validate_device_class_name(errs: &mut Errs, name: &str, path: &str) {
    if name.is_empty() {
        required(errs, path, "");
    } else {
        validate_dns_subdomain(errs, name, path);
    }
}

/// `validateCIdentifier`: at most 32 bytes.
pub(super) fn validate_c_identifier(errs: &mut Errs, id: &str, path: &str) {
    if id.len() > DEVICE_MAX_ID_LENGTH {
        too_long(errs, path, DEVICE_MAX_ID_LENGTH);
    }
    for m in c_identifier_errors(id) {
        invalid(errs, path, id, &m);
    }
}

/// `validateQualifiedName`: `id` or `domain/id`, the domain a driver name. Errors name the
/// map (`path`), not the key.
pub(super) fn validate_qualified_name(errs: &mut Errs, name: &str, path: &str) {
    let parts: Vec<&str> = name.split('/').collect();
    match parts.as_slice() {
        [id] => validate_c_identifier(errs, id, path),
        [domain, id] => {
            if domain.is_empty() {
                invalid(errs, path, "", "the domain must not be empty");
            } else {
                validate_driver_name(errs, domain, path);
            }
            if id.is_empty() {
                invalid(errs, path, "", "the name must not be empty");
            } else {
                validate_c_identifier(errs, id, path);
            }
        }
        _ => invalid(errs, path, name, "must not contain more than one slash"),
    }
}

/// `validateFullyQualifiedName`: a qualified name with a domain.
pub(super) fn validate_fully_qualified_name(errs: &mut Errs, name: &str, path: &str) {
    validate_qualified_name(errs, name, path);
    if !name.contains('/') {
        invalid(
            errs,
            path,
            name,
            "a fully qualified name must be a domain and a name separated by a slash",
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_identifiers() {
        assert!(c_identifier_errors("productName").is_empty());
        assert_eq!(c_identifier_errors("1x").len(), 1);
    }
}
