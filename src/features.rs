//! Feature gates that change scheduling behaviour, with upstream's names and defaults.

use serde::{Deserialize, Serialize};

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct FeatureGates {
    /// `TaintTolerationComparisonOperators` (alpha, off by default): tolerations with `Gt`/`Lt`.
    #[serde(default)]
    pub taint_toleration_comparison_operators: bool,
}
