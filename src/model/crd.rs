//! How the API server checks a custom resource against its CRD: the structural schema
//! (`enum`, `maxItems`, `pattern`, `required`, …, kube-openapi's validators as
//! `apiextensions-apiserver/pkg/apiserver/validation/validation.go` reports them), the
//! uniqueness of `x-kubernetes-list-type: map` keys (`structurallisttype`), then the CEL rules
//! of `x-kubernetes-validations` — skipped, with the API server's note, when a schema error
//! already makes the object the wrong shape (`customresource/strategy.go` `hasBlockingErr`).
//!
//! The CRDs' own rules are written by hand next to the kinds that use them (Kueue's in
//! `kueue::validation`, JobSet's and Trainer's in `resolve`); this module gives them the API
//! server's messages. Objects are read as JSON, as the API server reads them before any
//! webhook sees a typed object.

use serde_json::Value;

use super::quantity::Quantity;
use super::validate::FieldError;

/// The quantity pattern of every `resource.Quantity` field of a CRD.
pub const QUANTITY_PATTERN: &str = "^(\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\\+|-)?(([0-9]+(\\.[0-9]*)?)|(\\.[0-9]+))))?$";
/// `+kubebuilder:validation:Pattern` of a DNS-1123 subdomain reference.
pub const SUBDOMAIN_PATTERN: &str =
    "^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$";

/// The errors of one object: schema errors first, then the CEL rules' (unless blocked).
#[derive(Debug, Default)]
pub struct CrdCheck {
    errs: Vec<FieldError>,
    cel: Vec<FieldError>,
    /// A `NotSupported`, `Required`, `TooLong`, `TooMany` or type error: CEL rules are skipped.
    blocking: bool,
}

impl CrdCheck {
    pub fn new() -> Self {
        CrdCheck::default()
    }

    /// Every error, in the API server's order; the CEL rules' only when nothing blocks them.
    pub fn finish(mut self) -> Vec<FieldError> {
        if self.blocking {
            if !self.cel.is_empty() {
                self.errs.push(FieldError::new(
                    "",
                    "Invalid value: \"null\": some validation rules were not checked because the object was invalid; correct the existing errors to complete validation".into(),
                ));
            }
        } else {
            self.errs.append(&mut self.cel);
        }
        self.errs
    }

    pub fn is_empty(&self) -> bool {
        self.errs.is_empty() && self.cel.is_empty()
    }

    /// A field the schema requires (`required:`).
    pub fn required(&mut self, object: &Value, field: &str, at: &str) {
        if object.get(field).is_none_or(Value::is_null) {
            self.blocking = true;
            self.errs
                .push(FieldError::new(&join(at, field), "Required value".into()));
        }
    }

    /// `enum:` on a string field.
    pub fn one_of(&mut self, value: Option<&Value>, at: &str, allowed: &[&str]) {
        let Some(v) = value.filter(|v| !v.is_null()) else {
            return;
        };
        let text = match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if !allowed.contains(&text.as_str()) {
            self.blocking = true;
            let list: Vec<String> = allowed.iter().map(|a| format!("{a:?}")).collect();
            self.errs.push(FieldError::new(
                at,
                format!(
                    "Unsupported value: {text:?}: supported values: {}",
                    list.join(", ")
                ),
            ));
        }
    }

    /// `maxItems:` (and `maxProperties:` on a map).
    pub fn max_items(&mut self, value: Option<&Value>, at: &str, max: usize) {
        let n = size(value);
        if n > max {
            self.blocking = true;
            self.errs.push(FieldError::new(
                at,
                format!("Too many: {n}: must have at most {max} items"),
            ));
        }
    }

    /// `minItems:` on a list that is present.
    pub fn min_items(&mut self, value: Option<&Value>, at: &str, min: usize) {
        if value.is_some_and(|v| !v.is_null()) && size(value) < min {
            self.errs.push(FieldError::new(
                at,
                format!(
                    "Invalid value: {}: {at} in body should have at least {min} items",
                    size(value)
                ),
            ));
        }
    }

    /// `maxLength:` on a string.
    pub fn max_length(&mut self, value: Option<&Value>, at: &str, max: usize) {
        if let Some(s) = value.and_then(Value::as_str)
            && s.chars().count() > max
        {
            self.blocking = true;
            self.errs.push(FieldError::new(
                at,
                format!("Too long: may not be more than {max} bytes"),
            ));
        }
    }

    /// `minLength:` on a string that is present.
    pub fn min_length(&mut self, value: Option<&Value>, at: &str, min: usize) {
        if let Some(s) = value.and_then(Value::as_str)
            && s.chars().count() < min
        {
            self.errs.push(FieldError::new(
                at,
                format!("Invalid value: {s:?}: {at} in body should be at least {min} chars long"),
            ));
        }
    }

    /// `pattern:` on a string, given as the regex text and a matcher for it.
    pub fn pattern(
        &mut self,
        value: Option<&Value>,
        at: &str,
        pattern: &str,
        matches: impl Fn(&str) -> bool,
    ) {
        if let Some(s) = value.and_then(Value::as_str)
            && !matches(s)
        {
            self.errs.push(FieldError::new(
                at,
                format!("Invalid value: {s:?}: {at} in body should match '{pattern}'"),
            ));
        }
    }

    /// A DNS-1123 subdomain reference: `maxLength: 253` and its pattern.
    pub fn subdomain(&mut self, value: Option<&Value>, at: &str) {
        self.max_length(value, at, 253);
        self.pattern(
            value,
            at,
            SUBDOMAIN_PATTERN,
            super::labels::is_subdomain_syntax,
        );
    }

    /// `minimum:` on an integer.
    pub fn minimum(&mut self, value: Option<&Value>, at: &str, min: i64) {
        if let Some(n) = value.and_then(Value::as_i64)
            && n < min
        {
            self.errs.push(FieldError::new(
                at,
                format!(
                    "Invalid value: {n}: {at} in body should be greater than or equal to {min}"
                ),
            ));
        }
    }

    /// A `resource.Quantity` (int-or-string with the quantity pattern); its value when valid.
    pub fn quantity(&mut self, value: Option<&Value>, at: &str) -> Option<Quantity> {
        let text = match value? {
            Value::String(s) => s.clone(),
            Value::Number(n) => n.to_string(),
            Value::Null => return None,
            _ => {
                self.blocking = true;
                self.errs.push(FieldError::new(
                    at,
                    format!(
                        "Invalid value: {}: {at} in body must be of type integer,string",
                        value?
                    ),
                ));
                return None;
            }
        };
        match text.parse::<Quantity>() {
            Ok(q) => Some(q),
            Err(_) => {
                self.errs.push(FieldError::new(
                    at,
                    format!(
                        "Invalid value: {text:?}: {at} in body should match '{QUANTITY_PATTERN}'"
                    ),
                ));
                None
            }
        }
    }

    /// `x-kubernetes-list-type: map` with one key: every later item whose key repeats an
    /// earlier one is a duplicate (an item without the key counts as the empty key).
    pub fn unique_keys(&mut self, list: Option<&Value>, at: &str, key: &str) {
        let items = list
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        let mut seen: Vec<Option<&Value>> = Vec::new();
        let mut reported: Vec<Option<&Value>> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let k = item.get(key);
            if seen.contains(&k) {
                if !reported.contains(&k) {
                    reported.push(k);
                    let body = match k {
                        Some(v) => format!("{{{key:?}:{v}}}"),
                        None => "{}".into(),
                    };
                    self.errs.push(FieldError::new(
                        &format!("{at}[{i}]"),
                        format!("Duplicate value: {body}"),
                    ));
                }
            } else {
                seen.push(k);
            }
        }
    }

    /// `x-kubernetes-list-type: set`: a value repeated is a duplicate (reported once).
    pub fn unique_set(&mut self, list: Option<&Value>, at: &str) {
        let items = list
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        let mut reported: Vec<&Value> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            if items[..i].contains(item) && !reported.contains(&item) {
                reported.push(item);
                self.errs.push(FieldError::new(
                    &format!("{at}[{i}]"),
                    format!("Duplicate value: {item}"),
                ));
            }
        }
    }

    /// A CEL rule of `x-kubernetes-validations` that failed on the value at `at` of schema
    /// type `kind` (`object`, `string`, `array`, …): `Invalid value: "object": <message>`.
    pub fn rule(&mut self, at: &str, kind: &str, message: &str) {
        self.cel.push(FieldError::new(
            at,
            format!("Invalid value: {kind:?}: {message}"),
        ));
    }

    /// An error of the caller's own (a webhook's, after the schema passed).
    pub fn push(&mut self, e: FieldError) {
        self.errs.push(e);
    }
}

/// `parent.field`, or `field` at the root.
pub fn join(parent: &str, field: &str) -> String {
    if parent.is_empty() {
        field.to_string()
    } else {
        format!("{parent}.{field}")
    }
}

/// The items of a list (or entries of a map), 0 when absent.
fn size(value: Option<&Value>) -> usize {
    match value {
        Some(Value::Array(a)) => a.len(),
        Some(Value::Object(m)) => m.len(),
        _ => 0,
    }
}

/// The items of a list field, empty when absent or not a list.
pub fn items<'v>(value: &'v Value, field: &str) -> &'v [Value] {
    value
        .get(field)
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn cel_rules_wait_for_a_well_formed_object() {
        let mut c = CrdCheck::new();
        c.rule("spec", "object", "a rule");
        c.max_items(Some(&json!([1, 2, 3])), "spec.list", 2);
        let errs = c.finish();
        assert_eq!(errs.len(), 2);
        assert_eq!(errs[0].message, "Too many: 3: must have at most 2 items");
        assert!(
            errs[1]
                .message
                .contains("some validation rules were not checked")
        );

        let mut c = CrdCheck::new();
        c.rule("spec", "object", "a rule");
        c.min_items(Some(&json!([])), "spec.list", 1);
        let errs = c.finish();
        assert_eq!(
            errs[0].message,
            "Invalid value: 0: spec.list in body should have at least 1 items"
        );
        assert_eq!(errs[1].message, "Invalid value: \"object\": a rule");
    }

    #[test]
    fn list_map_keys_are_unique() {
        let mut c = CrdCheck::new();
        let list = json!([{"name": "a"}, {"name": "b"}, {"name": "a"}, {"name": "a"}]);
        c.unique_keys(Some(&list), "spec.flavors", "name");
        let errs = c.finish();
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].path, "spec.flavors[2]");
        assert_eq!(errs[0].message, "Duplicate value: {\"name\":\"a\"}");
    }

    #[test]
    fn quantities_follow_the_pattern() {
        let mut c = CrdCheck::new();
        assert!(c.quantity(Some(&json!("-1")), "q").is_some());
        assert!(c.quantity(Some(&json!(4)), "q").is_some());
        assert!(c.quantity(Some(&json!("1.5.3")), "q").is_none());
        let errs = c.finish();
        assert!(
            errs[0]
                .message
                .starts_with("Invalid value: \"1.5.3\": q in body should match '^(\\+|-)?")
        );
    }
}
