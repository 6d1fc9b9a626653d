//! Scheduling profiles from a `KubeSchedulerConfiguration` (`kubescheduler.config.k8s.io/v1`).
//!
//! A profile is resolved exactly as kube-scheduler resolves it:
//!
//! 1. **Defaults** (`pkg/scheduler/apis/config/v1/defaults.go`, `SetDefaults_KubeSchedulerConfiguration`):
//!    no `profiles` → one profile; a single profile without `schedulerName` is
//!    `default-scheduler`; plugin args get their defaults (`SetDefaults_*Args`).
//! 2. **Plugin merge** (`pkg/scheduler/apis/config/v1/default_plugins.go`, `mergePlugins` /
//!    `mergePluginSet`): the user's plugin sets are merged into the default `multiPoint` list
//!    ([`DEFAULT_MULTI_POINT`]); `disabled: [{name: "*"}]` drops every default of that set; a
//!    user-enabled default plugin replaces the default in place (keeping the user's weight);
//!    other user plugins are appended.
//! 3. **Validation** (`pkg/scheduler/apis/config/validation/validation.go`,
//!    `validation_pluginargs.go`), with upstream's messages.
//! 4. **Framework expansion** (`pkg/scheduler/framework/runtime/framework.go`, `NewFramework`,
//!    `updatePluginList`, `expandMultiPointPlugins`, `getScoreWeights`): each extension point
//!    gets its specific plugins plus the `multiPoint` plugins that implement it and are not
//!    disabled there; a plugin configured at a specific point overrides its `multiPoint` entry;
//!    a score plugin's weight is the first one configured (`score`, then `multiPoint`), and a
//!    weight of 0 (or none) counts as 1.
//!
//! `podInitialBackoffSeconds` and `podMaxBackoffSeconds` drive a replay's scheduling queue.
//! What a simulation does not need is read and checked, then ignored: `leaderElection`,
//! `clientConnection`, `parallelism`, `enableProfiling`, `enableContentionProfiling`, `delayCacheUntilActive`, and the plugins
//! listed as [`Support::NoEffect`] (schedsim's pods bind no volumes or host ports).
//! `extenders` are an error: an extender is an HTTP service schedsim cannot call.
//!
//! As upstream, `pluginConfig` for a plugin that is not enabled is accepted (and its args
//! validated), plugin score weights are not range-checked (a negative weight is kept), and a
//! plugin without an args type (`TaintToleration`, …) takes any args unread.
//!
//! Divergences from upstream, all deliberate and all stricter:
//! - plugin names outside the in-tree registry (unknown, removed or out-of-tree, see
//!   [`KNOWN_PLUGINS`]) are errors everywhere, also in `disabled` and `pluginConfig` (upstream
//!   silently ignores both there; a typo would silently leave the default in effect);
//! - `NodeResourcesFit` args are validated even when the plugin is not enabled (upstream only
//!   validates them in `NewFit`, because `validatePluginConfig` keys them as
//!   `"NodeResourcesFitArgs"`), and `type: RequestedToCapacityRatio` without
//!   `requestedToCapacityRatio` is an error (upstream dereferences a nil pointer);
//! - Kubernetes objects inside args (`addedAffinity`, `defaultConstraints`) are decoded with
//!   k8s-openapi, which ignores unknown fields there (upstream's strict decoding rejects them);
//! - only the first error is reported, and validation errors of a later profile may be
//!   reported before a cross-profile one (`validateCommonQueueSort`).

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use crate::error::InputError;
use crate::sched::plugins::registry::*;
use crate::yaml::Document;

mod args;
mod config;
pub(crate) mod plugin_set;
#[cfg(test)]
mod tests;
mod types;

use args::*;
use config::*;
pub(crate) use plugin_set::*;
pub use types::*;

/// `v1.DefaultSchedulerName`.
pub const DEFAULT_SCHEDULER_NAME: &str = "default-scheduler";
/// The one configuration version kube-scheduler still reads (v1beta3 was removed in v1.29).
pub const API_VERSION: &str = "kubescheduler.config.k8s.io/v1";
pub const KIND: &str = "KubeSchedulerConfiguration";
/// `config.MaxCustomPriorityScore`: shape scores are 0..=10, scaled ×10 to node scores.
pub const MAX_CUSTOM_PRIORITY_SCORE: i64 = 10;
/// Upper bound of a `ResourceSpec` weight (`validateResources`).
pub const MAX_RESOURCE_WEIGHT: i64 = 100;

// ---------------------------------------------------------------------------------------------
// from_document
// ---------------------------------------------------------------------------------------------

/// Field errors are built in upstream's `field.Error` wording.
fn invalid(value: impl std::fmt::Display, detail: &str) -> String {
    format!("Invalid value: {value}: {detail}")
}

fn quoted(s: &str) -> String {
    format!("{s:?}")
}

/// Resolves the profiles of one `KubeSchedulerConfiguration` document.
pub fn from_document(doc: &Document, file: &Path) -> Result<Vec<Profile>, InputError> {
    let err = |path: &str, msg: String| doc.error(file, path, msg);
    let api_version = doc.value.get("apiVersion").and_then(Value::as_str);
    let kind = doc.value.get("kind").and_then(Value::as_str);
    if kind != Some(KIND) {
        return Err(err(
            "kind",
            match kind {
                Some(k) => format!("kind {k:?} is not a {KIND}"),
                None => format!("missing kind (expected {KIND})"),
            },
        ));
    }
    if api_version != Some(API_VERSION) {
        return Err(err(
            "apiVersion",
            match api_version {
                Some(v) => format!(
                    "apiVersion {v:?} is not supported: kube-scheduler reads {KIND} {API_VERSION} \
                     (v1beta2 and v1beta3 were removed)"
                ),
                None => format!("missing apiVersion (expected {API_VERSION})"),
            },
        ));
    }
    let raw: RawConfig = doc.decode(file, "", &doc.value)?;

    if let Some(p) = raw.parallelism
        && p <= 0
    {
        return Err(err(
            "parallelism",
            invalid(p, "should be an integer value greater than zero"),
        ));
    }
    validate_percentage(
        doc,
        file,
        "percentageOfNodesToScore",
        raw.percentage_of_nodes_to_score,
    )?;
    let initial = raw.pod_initial_backoff_seconds.unwrap_or(1);
    if initial <= 0 {
        return Err(err(
            "podInitialBackoffSeconds",
            invalid(initial, "must be greater than 0"),
        ));
    }
    let max = raw.pod_max_backoff_seconds.unwrap_or(10);
    if max < initial {
        return Err(err(
            "podMaxBackoffSeconds",
            invalid(
                max,
                "must be greater than or equal to PodInitialBackoffSeconds",
            ),
        ));
    }
    if raw.extenders.as_ref().is_some_and(|e| !e.is_empty()) {
        return Err(err(
            "extenders",
            "extenders are not simulated: schedsim cannot call a scheduler extender".into(),
        ));
    }

    let raw_profiles = raw.profiles.unwrap_or_default();
    if raw_profiles.is_empty() {
        return Ok(vec![Profile {
            percentage_of_nodes_to_score: raw.percentage_of_nodes_to_score,
            backoff_seconds: (initial as u64, max as u64),
            ..Profile::default()
        }]);
    }
    let single = raw_profiles.len() == 1;
    let mut profiles = Vec::with_capacity(raw_profiles.len());
    let mut names_seen: HashMap<String, usize> = HashMap::new();
    let mut queue_sorts: Vec<PluginSet> = Vec::new();
    for (i, rp) in raw_profiles.iter().enumerate() {
        let path = format!("profiles[{i}]");
        let name = match &rp.scheduler_name {
            None if single => DEFAULT_SCHEDULER_NAME.to_string(),
            None => String::new(),
            Some(n) => n.clone(),
        };
        if name.is_empty() {
            return Err(err(
                &format!("{path}.schedulerName"),
                "Required value".into(),
            ));
        }
        if let Some(&first) = names_seen.get(&name) {
            return Err(err(
                &format!("{path}.schedulerName"),
                format!(
                    "Duplicate value: {name:?} (also profiles[{first}].schedulerName): \
                     every profile needs a unique schedulerName"
                ),
            ));
        }
        names_seen.insert(name.clone(), i);
        let (profile, queue_sort) =
            resolve_profile(doc, file, &path, rp, name, raw.percentage_of_nodes_to_score)?;
        queue_sorts.push(queue_sort);
        profiles.push(Profile {
            backoff_seconds: (initial as u64, max as u64),
            ..profile
        });
    }
    // validateCommonQueueSort: one queue for all profiles.
    if let Some(first) = queue_sorts.first() {
        let len = first.enabled.len();
        if len > 1 {
            return Err(err(
                "profiles[0].plugins.queueSort.enabled",
                invalid(len, "only one queue sort plugin can be enabled"),
            ));
        }
        let key = |s: &PluginSet| -> (Vec<(String, Option<i32>)>, Vec<String>) {
            (
                s.enabled
                    .iter()
                    .map(|e| (e.name.clone(), e.weight))
                    .collect(),
                s.disabled.iter().map(|e| e.name.clone()).collect(),
            )
        };
        for (i, qs) in queue_sorts.iter().enumerate().skip(1) {
            if key(qs) != key(first) {
                return Err(err(
                    &format!("profiles[{i}].plugins.queueSort"),
                    "queueSort must be the same for all profiles".into(),
                ));
            }
        }
    }
    Ok(profiles)
}

fn validate_percentage(
    doc: &Document,
    file: &Path,
    path: &str,
    value: Option<i32>,
) -> Result<(), InputError> {
    match value {
        Some(v) if !(0..=100).contains(&v) => {
            Err(doc.error(file, path, invalid(v, "not in valid range [0-100]")))
        }
        _ => Ok(()),
    }
}

/// The user's plugin set at `path` (`profiles[0].plugins.filter`), every name checked.
fn user_set(
    doc: &Document,
    file: &Path,
    path: &str,
    raw: Option<&RawPluginSet>,
) -> Result<PluginSet, InputError> {
    let mut set = PluginSet::default();
    let Some(raw) = raw else {
        return Ok(set);
    };
    for (kind, list, out) in [
        ("enabled", &raw.enabled, &mut set.enabled),
        ("disabled", &raw.disabled, &mut set.disabled),
    ] {
        for (j, p) in list.iter().flatten().enumerate() {
            let at = format!("{path}.{kind}[{j}]");
            if !(kind == "disabled" && p.name == "*")
                && let Some(msg) = plugin_name_error(&p.name)
            {
                return Err(doc.error(file, &format!("{at}.name"), msg));
            }
            out.push(Entry {
                name: p.name.clone(),
                weight: p.weight,
                at: Some(at),
            });
        }
    }
    Ok(set)
}

fn resolve_profile(
    doc: &Document,
    file: &Path,
    path: &str,
    rp: &RawProfile,
    scheduler_name: String,
    global_percentage: Option<i32>,
) -> Result<(Profile, PluginSet), InputError> {
    validate_percentage(
        doc,
        file,
        &format!("{path}.percentageOfNodesToScore"),
        rp.percentage_of_nodes_to_score,
    )?;
    let plugins_path = format!("{path}.plugins");
    let merged = match &rp.plugins {
        None => Plugins::defaults(),
        Some(raw) => {
            let mut custom = Plugins {
                multi_point: user_set(
                    doc,
                    file,
                    &format!("{plugins_path}.multiPoint"),
                    raw.multi_point.as_ref(),
                )?,
                ..Default::default()
            };
            for p in ExtensionPoint::ALL {
                custom.points[p as usize] = user_set(
                    doc,
                    file,
                    &format!("{plugins_path}.{}", p.field()),
                    raw.point(p),
                )?;
            }
            Plugins::defaults().merge(&custom)
        }
    };
    let args = plugin_args(doc, file, path, rp)?;

    // The framework.
    let framework_err =
        |e: PluginError| doc.error(file, e.at.as_deref().unwrap_or(&plugins_path), e.message);
    let framework = build_framework(&merged).map_err(framework_err)?;
    let queue_sorts = framework.at(ExtensionPoint::QueueSort).len();
    if queue_sorts != 1 {
        return Err(doc.error(
            file,
            &plugins_path,
            format!(
                "only one queue sort plugin required for profile with scheduler name \
                 {scheduler_name:?}, but got {queue_sorts}"
            ),
        ));
    }
    if framework.at(ExtensionPoint::Bind).is_empty() {
        return Err(doc.error(
            file,
            &plugins_path,
            format!(
                "at least one bind plugin is needed for profile with scheduler name \
                 {scheduler_name:?}"
            ),
        ));
    }
    // The FGD simulator's plugins cannot run without their args: Reserve finds no GPU choice
    // without `gpuSelMethod`, DotProductScore dereferences its nil args (both panic there).
    let needs_args = [
        (
            ExtensionPoint::Reserve,
            Plugin::OpenGpuShare,
            args.gpu_sel.is_some(),
            "gpuSelMethod (best, worst, random or FGDScore)",
        ),
        (
            ExtensionPoint::Score,
            Plugin::DotProductScore,
            args.dot_product_args,
            "dimExtMethod: merge and normMethod: max",
        ),
    ];
    for (point, plugin, given, what) in needs_args {
        if framework.runs(point, plugin) && !given {
            return Err(doc.error(
                file,
                &plugins_path,
                format!(
                    "{plugin} needs its args in pluginConfig: {what}; the FGD simulator's \
                     plugin panics without them"
                ),
            ));
        }
    }
    let profile = Profile {
        scheduler_name,
        framework,
        fit: args.fit,
        balanced_resources: args.balanced_resources,
        added_affinity: args.added_affinity,
        hard_pod_affinity_weight: args.hard_pod_affinity_weight,
        ignore_preferred_terms_of_existing_pods: args.ignore_preferred_terms_of_existing_pods,
        percentage_of_nodes_to_score: rp.percentage_of_nodes_to_score.or(global_percentage),
        spread_default_constraints: args.spread_default_constraints,
        permit_waiting_seconds: args.permit_waiting_seconds,
        pod_group_backoff_seconds: args.pod_group_backoff_seconds,
        pod_group_reject_percentage: args.pod_group_reject_percentage,
        preemption: args.preemption,
        backoff_seconds: Profile::default().backoff_seconds,
        gpu_sel: args.gpu_sel,
    };
    Ok((profile, merged.point(ExtensionPoint::QueueSort).clone()))
}
