//! `IntOrString` fields as the API server validates them (`ValidatePositiveIntOrPercent` and
//! `IsNotMoreThan100Percent`, `pkg/apis/apps/validation/validation.go`, which the apps kinds'
//! rolling updates and PodDisruptionBudgets both call), and the JSON a field error renders
//! a selector or an `IntOrString` value as.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{Value, json};

use super::FieldError;

/// `ValidateNonnegativeField`'s detail.
pub const NEGATIVE: &str = "must be greater than or equal to 0";

const NOT_A_PERCENT: &str = "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')";

/// The number of a valid percent string (`[0-9]+%`).
pub fn percent(s: &str) -> Option<i64> {
    let digits = s.strip_suffix('%')?;
    let valid = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    valid.then(|| digits.parse().unwrap_or(i64::MAX))
}

/// `field.Invalid` of an `IntOrString` value, rendered as `field.Error` renders it (an int
/// plain, a string quoted).
fn invalid(errs: &mut Vec<FieldError>, path: &str, v: &IntOrString, detail: &str) {
    let value = match v {
        IntOrString::Int(i) => i.to_string(),
        IntOrString::String(s) => format!("{s:?}"),
    };
    errs.push(FieldError::new(
        path,
        format!("Invalid value: {value}: {detail}"),
    ));
}

/// `ValidatePositiveIntOrPercent`: a non-negative int, or a percent string.
pub fn positive_int_or_percent(errs: &mut Vec<FieldError>, path: &str, v: &IntOrString) {
    match v {
        IntOrString::String(s) if percent(s).is_none() => invalid(errs, path, v, NOT_A_PERCENT),
        IntOrString::Int(i) if *i < 0 => invalid(errs, path, v, NEGATIVE),
        _ => {}
    }
}

/// `IsNotMoreThan100Percent`.
pub fn not_more_than_100_percent(errs: &mut Vec<FieldError>, path: &str, v: &IntOrString) {
    if let IntOrString::String(s) = v
        && percent(s).is_some_and(|p| p > 100)
    {
        invalid(errs, path, v, "must not be greater than 100%");
    }
}

/// `IntOrString` as JSON (`1`, `"25%"`).
pub fn int_or_string_json(v: &IntOrString) -> Value {
    match v {
        IntOrString::Int(i) => json!(i),
        IntOrString::String(s) => json!(s),
    }
}

/// A `metav1.LabelSelector` as `json.Marshal` writes it (empty fields left out).
pub fn selector_json(s: &LabelSelector) -> Value {
    let mut out = serde_json::Map::new();
    if let Some(m) = s.match_labels.as_ref().filter(|m| !m.is_empty()) {
        out.insert("matchLabels".into(), json!(m));
    }
    if let Some(e) = s.match_expressions.as_ref().filter(|e| !e.is_empty()) {
        let items = e.iter().map(|r| {
            let mut item = json!({"key": r.key, "operator": r.operator});
            if let Some(v) = r.values.as_ref().filter(|v| !v.is_empty()) {
                item["values"] = json!(v);
            }
            item
        });
        out.insert("matchExpressions".into(), Value::Array(items.collect()));
    }
    Value::Object(out)
}
