//! Device selectors as the API server admits them (`validateSelectorSlice`,
//! `validateSelector`, `validateCELSelector`).

use k8s_openapi::api::resource::v1::DeviceSelector;

use super::fields::*;
use super::{CEL_SELECTOR_EXPRESSION_MAX_LENGTH, DEVICE_SELECTORS_MAX_SIZE};
use crate::dra::cel::{MAX_COST, Selector};

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

/// `validateCELSelector`: at most 10240 bytes (longer ones are not compiled); it compiles,
/// to a bool or the unknown type (`convertCELErrorToValidationError`: an invalid expression
/// is quoted whole); and its estimated worst-case cost is at most
/// `CELSelectorExpressionMaxCost` (1,000,000).
fn validate_cel_expression(errs: &mut Errs, expression: &str, path: &str) {
    if expression.len() > CEL_SELECTOR_EXPRESSION_MAX_LENGTH {
        too_long(errs, path, CEL_SELECTOR_EXPRESSION_MAX_LENGTH);
        return;
    }
    match Selector::compile(expression) {
        Err(detail) => invalid(errs, path, expression, &detail),
        Ok(selector) if selector.max_cost() > MAX_COST => {
            forbidden(errs, path, "too complex, exceeds cost limit")
        }
        Ok(_) => {}
    }
}
