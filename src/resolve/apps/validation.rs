//! The API server's validation of the apps kinds (kubernetes 1.34
//! `pkg/apis/apps/validation/validation.go`: `ValidateDeploymentSpec`,
//! `ValidateReplicaSetSpec`, `ValidateStatefulSetSpec`, `ValidateDaemonSetSpec` and the
//! strategy checks they call), after the defaults of `pkg/apis/apps/v1/defaults.go`, with its
//! messages. A field error renders its value as 1.34's `field.Error.ErrorBody` does: numbers
//! plain, strings quoted, anything else as JSON (the internal apps types have no JSON tags,
//! so their fields keep their Go names).
//!
//! The pod template's spec is validated as a pod's is (`model::objects::pod_from_k8s`) by the
//! caller, its labels and annotations here (`validate::template_meta`), the selector by the
//! shared `ValidateLabelSelector` (`validate::selector`); the object's own metadata by the
//! loader (`Origin::check_meta`), as for every kind.

use k8s_openapi::api::apps::v1::{DaemonSet, Deployment, ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use serde_json::{Value, json};

use crate::model::labels::{is_qualified_name, is_valid_label_value};
use crate::model::validate::intstr::{
    int_or_string_json, not_more_than_100_percent as not_more_than_100, percent,
    positive_int_or_percent, selector_json,
};
use crate::model::validate::{FieldError, selector, template_meta};
use crate::sched::plugins::inter_pod_affinity::selector_matches;

use crate::model::validate::intstr::NEGATIVE;

type Errs = Vec<FieldError>;

fn push(errs: &mut Errs, path: &str, message: String) {
    errs.push(FieldError::new(path, message));
}

/// `field.Invalid` with a value rendered as `ErrorBody` renders it.
fn invalid(errs: &mut Errs, path: &str, value: &Value, detail: &str) {
    push(
        errs,
        path,
        format!("Invalid value: {}: {detail}", render(value)),
    );
}

fn render(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

fn not_supported(errs: &mut Errs, path: &str, value: &Value, supported: &[&str]) {
    let list: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
    push(
        errs,
        path,
        format!(
            "Unsupported value: {}: supported values: {}",
            render(value),
            list.join(", ")
        ),
    );
}

/// `ValidateNonnegativeField`.
fn nonnegative(errs: &mut Errs, path: &str, value: Option<i32>) {
    if let Some(v) = value.filter(|v| *v < 0) {
        invalid(errs, path, &json!(v), NEGATIVE);
    }
}

/// How a kind's validation treats its selector: `what` names the kind in the empty-selector
/// message (upstream's ReplicaSet message says "deployment"), `unparsed` is the detail of the
/// error on a selector that does not parse (`None`: no error, no template check).
struct SelectorRules {
    required: bool,
    what: &'static str,
    unparsed: Option<&'static str>,
}

/// `spec.selector`: required (when the kind requires it), each requirement well-formed, not
/// empty; then the template's labels must match it.
fn selector_and_template(
    errs: &mut Errs,
    selector: Option<&LabelSelector>,
    rules: SelectorRules,
    template: &PodTemplateSpec,
) {
    let SelectorRules {
        required,
        what,
        unparsed,
    } = rules;
    match selector {
        None if required => push(errs, "spec.selector", "Required value".into()),
        None => {}
        Some(s) => {
            selector::label_selector(Some(s), false, "spec.selector", errs);
            if s.match_labels.as_ref().map_or(0, |m| m.len())
                + s.match_expressions.as_ref().map_or(0, Vec::len)
                == 0
            {
                invalid(
                    errs,
                    "spec.selector",
                    &selector_json(s),
                    &format!("empty selector is invalid for {what}"),
                );
            }
        }
    }
    // `ValidatePodTemplateSpec`: the template's labels and annotations.
    errs.extend(template_meta(template.metadata.as_ref(), "spec.template"));
    // `LabelSelectorAsSelector`: nil selects nothing; a malformed one does not parse.
    let labels = (template.metadata.as_ref())
        .and_then(|m| m.labels.clone())
        .unwrap_or_default();
    let matches = match selector {
        Some(s) if !parses(s) => {
            match unparsed {
                Some("") => push(
                    errs,
                    "spec.selector",
                    format!("Invalid value: {}", render(&selector_json(s))),
                ),
                Some(detail) => invalid(errs, "spec.selector", &selector_json(s), detail),
                None => {}
            }
            return;
        }
        Some(s) => selector_matches(s, &labels),
        None => false,
    };
    if !matches {
        let value = match template.metadata.as_ref().and_then(|m| m.labels.as_ref()) {
            Some(l) => json!(l),
            None => Value::Null,
        };
        invalid(
            errs,
            "spec.template.metadata.labels",
            &value,
            "`selector` does not match template `labels`",
        );
    }
}

/// Whether `LabelSelectorAsSelector` parses the selector (`labels.NewRequirement`'s checks).
fn parses(s: &LabelSelector) -> bool {
    let labels_ok = (s.match_labels.iter().flatten())
        .all(|(k, v)| is_qualified_name(k) && is_valid_label_value(v));
    labels_ok
        && s.match_expressions.iter().flatten().all(|r| {
            let values = r.values.as_deref().unwrap_or(&[]);
            let shape = match r.operator.as_str() {
                "In" | "NotIn" => !values.is_empty(),
                "Exists" | "DoesNotExist" => values.is_empty(),
                _ => false,
            };
            shape && is_qualified_name(&r.key) && values.iter().all(|v| is_valid_label_value(v))
        })
}

/// The template checks every controller but the StatefulSet makes
/// (`ValidatePodTemplateSpecForReplicaSet`, `ValidateDaemonSetSpec`): restart policy `Always`,
/// no `activeDeadlineSeconds`.
fn template_spec(errs: &mut Errs, template: &PodTemplateSpec, kind: &str) {
    let restart = super::restart_policy(template);
    if restart != "Always" {
        not_supported(
            errs,
            "spec.template.spec.restartPolicy",
            &json!(restart),
            &["Always"],
        );
    }
    if template
        .spec
        .as_ref()
        .is_some_and(|s| s.active_deadline_seconds.is_some())
    {
        push(
            errs,
            "spec.template.spec.activeDeadlineSeconds",
            format!("Forbidden: activeDeadlineSeconds in {kind} is not Supported"),
        );
    }
}

/// `getIntOrPercentValue`: a valid percent's number, else the int value (0 for a string that
/// does not parse).
fn int_or_percent_value(v: &IntOrString) -> i64 {
    match v {
        IntOrString::Int(i) => i64::from(*i),
        IntOrString::String(s) => match percent(s) {
            Some(p) => p,
            None => s.parse().unwrap_or(0),
        },
    }
}

/// `ValidateDeploymentSpec` (with `ValidateDeploymentStrategy` and
/// `ValidateRollingUpdateDeployment`); `selector_given`: `spec.selector` was written.
pub fn deployment(d: &Deployment, selector_given: bool) -> Errs {
    let mut errs = Vec::new();
    let spec = d.spec.clone().unwrap_or_default();
    nonnegative(&mut errs, "spec.replicas", spec.replicas);
    let selector = selector_given.then_some(&spec.selector);
    let rules = SelectorRules {
        required: true,
        what: "deployment",
        unparsed: Some("invalid label selector"),
    };
    selector_and_template(&mut errs, selector, rules, &spec.template);
    template_spec(&mut errs, &spec.template, "ReplicaSet");
    let strategy = spec.strategy.unwrap_or_default();
    match strategy.type_.as_deref().unwrap_or("RollingUpdate") {
        "Recreate" => {
            if strategy.rolling_update.is_some() {
                push(
                    &mut errs,
                    "spec.strategy.rollingUpdate",
                    "Forbidden: may not be specified when strategy `type` is 'Recreate'".into(),
                );
            }
        }
        "RollingUpdate" => {
            let r = strategy.rolling_update.unwrap_or_default();
            let quarter = IntOrString::String("25%".into());
            let unavailable = r.max_unavailable.unwrap_or_else(|| quarter.clone());
            let surge = r.max_surge.unwrap_or(quarter);
            let at = "spec.strategy.rollingUpdate";
            let (u, su) = (format!("{at}.maxUnavailable"), format!("{at}.maxSurge"));
            positive_int_or_percent(&mut errs, &u, &unavailable);
            positive_int_or_percent(&mut errs, &su, &surge);
            if int_or_percent_value(&unavailable) == 0 && int_or_percent_value(&surge) == 0 {
                invalid(
                    &mut errs,
                    &u,
                    &int_or_string_json(&unavailable),
                    "may not be 0 when `maxSurge` is 0",
                );
            }
            not_more_than_100(&mut errs, &u, &unavailable);
        }
        other => {
            let value = json!({"Type": other, "RollingUpdate": strategy_json(&strategy)});
            not_supported(
                &mut errs,
                "spec.strategy",
                &value,
                &["Recreate", "RollingUpdate"],
            );
        }
    }
    nonnegative(&mut errs, "spec.minReadySeconds", spec.min_ready_seconds);
    nonnegative(
        &mut errs,
        "spec.revisionHistoryLimit",
        spec.revision_history_limit,
    );
    let deadline = spec.progress_deadline_seconds.unwrap_or(600);
    nonnegative(&mut errs, "spec.progressDeadlineSeconds", Some(deadline));
    if deadline <= spec.min_ready_seconds.unwrap_or(0) {
        invalid(
            &mut errs,
            "spec.progressDeadlineSeconds",
            &json!(deadline),
            "must be greater than minReadySeconds",
        );
    }
    errs
}

/// A Deployment strategy's `rollingUpdate` as the internal type's JSON.
fn strategy_json(s: &k8s_openapi::api::apps::v1::DeploymentStrategy) -> Value {
    match &s.rolling_update {
        None => Value::Null,
        Some(r) => json!({
            "MaxUnavailable": r.max_unavailable.as_ref().map_or(json!(0), int_or_string_json),
            "MaxSurge": r.max_surge.as_ref().map_or(json!(0), int_or_string_json),
        }),
    }
}

/// `ValidateReplicaSetSpec`.
pub fn replica_set(rs: &ReplicaSet, selector_given: bool) -> Errs {
    let mut errs = Vec::new();
    let spec = rs.spec.clone().unwrap_or_default();
    nonnegative(&mut errs, "spec.replicas", spec.replicas);
    nonnegative(&mut errs, "spec.minReadySeconds", spec.min_ready_seconds);
    let template = spec.template.unwrap_or_default();
    let selector = selector_given.then_some(&spec.selector);
    let rules = SelectorRules {
        required: true,
        what: "deployment",
        unparsed: Some("invalid label selector"),
    };
    selector_and_template(&mut errs, selector, rules, &template);
    template_spec(&mut errs, &template, "ReplicaSet");
    errs
}

/// `ValidateStatefulSetSpec`. The API server does not validate a StatefulSet's pod spec (its
/// pods are validated when the controller creates them).
pub fn stateful_set(ss: &StatefulSet, selector_given: bool) -> Errs {
    let mut errs = Vec::new();
    let spec = ss.spec.clone().unwrap_or_default();
    let policy = spec
        .pod_management_policy
        .as_deref()
        .unwrap_or("OrderedReady");
    if !matches!(policy, "OrderedReady" | "Parallel") {
        invalid(
            &mut errs,
            "spec.podManagementPolicy",
            &json!(policy),
            "must be 'OrderedReady' or 'Parallel'",
        );
    }
    let strategy = spec.update_strategy.clone().unwrap_or_default();
    let rolling = strategy.rolling_update.as_ref();
    let rolling_json = || {
        rolling.map_or(Value::Null, |r| {
            json!({
                "Partition": r.partition.unwrap_or(0),
                "MaxUnavailable": r.max_unavailable.as_ref().map_or(Value::Null, int_or_string_json),
            })
        })
    };
    match strategy.type_.as_deref().unwrap_or("RollingUpdate") {
        "OnDelete" => {
            if rolling.is_some() {
                invalid(
                    &mut errs,
                    "spec.updateStrategy.rollingUpdate",
                    &rolling_json(),
                    "only allowed for updateStrategy 'RollingUpdate'",
                );
            }
        }
        "RollingUpdate" => {
            if let Some(r) = rolling {
                let at = "spec.updateStrategy.rollingUpdate";
                nonnegative(&mut errs, &format!("{at}.partition"), r.partition);
                if let Some(m) = &r.max_unavailable {
                    let path = format!("{at}.maxUnavailable");
                    positive_int_or_percent(&mut errs, &path, m);
                    if int_or_percent_value(m) == 0 {
                        invalid(&mut errs, &path, &int_or_string_json(m), "cannot be 0");
                    }
                    not_more_than_100(&mut errs, &path, m);
                }
            }
        }
        other => invalid(
            &mut errs,
            "spec.updateStrategy",
            &json!({"Type": other, "RollingUpdate": rolling_json()}),
            "must be 'RollingUpdate' or 'OnDelete'",
        ),
    }
    if let Some(p) = &spec.persistent_volume_claim_retention_policy {
        for (field, value) in [
            ("whenDeleted", &p.when_deleted),
            ("whenScaled", &p.when_scaled),
        ] {
            let v = value.as_deref().unwrap_or("Retain");
            if !matches!(v, "Retain" | "Delete") {
                not_supported(
                    &mut errs,
                    &format!("spec.persistentVolumeClaimRetentionPolicy.{field}"),
                    &json!(v),
                    &["Retain", "Delete"],
                );
            }
        }
    }
    nonnegative(&mut errs, "spec.replicas", spec.replicas);
    nonnegative(&mut errs, "spec.minReadySeconds", spec.min_ready_seconds);
    if let Some(o) = &spec.ordinals {
        nonnegative(&mut errs, "spec.ordinals.start", o.start);
    }
    let selector = selector_given.then_some(&spec.selector);
    let rules = SelectorRules {
        required: true,
        what: "statefulset",
        unparsed: Some(""),
    };
    selector_and_template(&mut errs, selector, rules, &spec.template);
    let restart = super::restart_policy(&spec.template);
    if restart != "Always" {
        not_supported(
            &mut errs,
            "spec.template.spec.restartPolicy",
            &json!(restart),
            &["Always"],
        );
    }
    if (spec.template.spec.as_ref()).is_some_and(|s| s.active_deadline_seconds.is_some()) {
        push(
            &mut errs,
            "spec.template.spec.activeDeadlineSeconds",
            "Forbidden: activeDeadlineSeconds in StatefulSet is not Supported".into(),
        );
    }
    errs
}

/// `ValidateDaemonSetSpec` (with `ValidateDaemonSetUpdateStrategy` and
/// `ValidateRollingUpdateDaemonSet`). Its selector is not `Required`: a DaemonSet without one
/// selects nothing, so its template's labels do not match.
pub fn daemon_set(ds: &DaemonSet, selector_given: bool) -> Errs {
    let mut errs = Vec::new();
    let spec = ds.spec.clone().unwrap_or_default();
    let selector = selector_given.then_some(&spec.selector);
    let rules = SelectorRules {
        required: false,
        what: "daemonset",
        unparsed: None,
    };
    selector_and_template(&mut errs, selector, rules, &spec.template);
    template_spec(&mut errs, &spec.template, "DaemonSet");
    nonnegative(&mut errs, "spec.minReadySeconds", spec.min_ready_seconds);
    let strategy = spec.update_strategy.clone().unwrap_or_default();
    match strategy.type_.as_deref().unwrap_or("RollingUpdate") {
        "OnDelete" => {}
        "RollingUpdate" => {
            let r = strategy.rolling_update.clone().unwrap_or_default();
            let unavailable = r.max_unavailable.unwrap_or(IntOrString::Int(1));
            let surge = r.max_surge.unwrap_or(IntOrString::Int(0));
            let at = "spec.updateStrategy.rollingUpdate";
            let (u, su) = (format!("{at}.maxUnavailable"), format!("{at}.maxSurge"));
            positive_int_or_percent(&mut errs, &u, &unavailable);
            positive_int_or_percent(&mut errs, &su, &surge);
            not_more_than_100(&mut errs, &u, &unavailable);
            not_more_than_100(&mut errs, &su, &surge);
            let (has_unavailable, has_surge) = (
                int_or_percent_value(&unavailable) != 0,
                int_or_percent_value(&surge) != 0,
            );
            if has_unavailable && has_surge {
                invalid(
                    &mut errs,
                    &su,
                    &int_or_string_json(&surge),
                    "may not be set when maxUnavailable is non-zero",
                );
            } else if !has_unavailable && !has_surge {
                push(
                    &mut errs,
                    &u,
                    "Required value: cannot be 0 when maxSurge is 0".into(),
                );
            }
        }
        other => {
            let rolling = strategy.rolling_update.as_ref().map_or(Value::Null, |r| {
                json!({
                    "MaxUnavailable": r.max_unavailable.as_ref().map_or(json!(0), int_or_string_json),
                    "MaxSurge": r.max_surge.as_ref().map_or(json!(0), int_or_string_json),
                })
            });
            not_supported(
                &mut errs,
                "spec.updateStrategy",
                &json!({"Type": other, "RollingUpdate": rolling}),
                &["RollingUpdate", "OnDelete"],
            );
        }
    }
    nonnegative(
        &mut errs,
        "spec.revisionHistoryLimit",
        spec.revision_history_limit,
    );
    errs
}
