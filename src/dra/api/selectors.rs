//! Device selectors as the API server admits them (`validateSelectorSlice`,
//! `validateSelector`, `validateCELSelector`).

use k8s_openapi::api::resource::v1::DeviceSelector;

use super::fields::*;
use super::{CEL_SELECTOR_EXPRESSION_MAX_LENGTH, DEVICE_SELECTORS_MAX_SIZE};
use crate::dra::cel::Selector;

/// `validateSelectorSlice` and `validateSelector`: at most 32, each with a CEL expression
/// that compiles.
pub(super) fn validate_selectors(
    errs: &mut Errs,
    selectors: Option<&[DeviceSelector]>,
    path: &str,
) {
    let selectors = selectors.unwrap_or(&[]);
    if selectors.len() > DEVICE_SELECTORS_MAX_SIZE {
        too_many(errs, path, selectors.len(), DEVICE_SELECTORS_MAX_SIZE);
        return;
    }
    for (i, s) in selectors.iter().enumerate() {
        let at = index(path, i);
        match &s.cel {
            None => required(errs, &child(&at, "cel"), ""),
            Some(cel) => {
                validate_cel_expression(errs, &cel.expression, &child(&at, "cel.expression"))
            }
        }
    }
}

/// `validateCELExpression`: at most 10240 bytes (longer ones are not compiled), and it
/// compiles (`convertCELErrorToValidationError`: an invalid expression is quoted whole).
fn validate_cel_expression(errs: &mut Errs, expression: &str, path: &str) {
    if expression.len() > CEL_SELECTOR_EXPRESSION_MAX_LENGTH {
        too_long(errs, path, CEL_SELECTOR_EXPRESSION_MAX_LENGTH);
        return;
    }
    if let Err(detail) = Selector::compile(expression) {
        invalid(errs, path, expression, &detail);
    }
}
