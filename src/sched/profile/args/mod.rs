//! `pluginConfig`: each plugin's args decoded, validated and defaulted
//! (`types_pluginargs.go`, `validation_pluginargs.go`, `v1/defaults.go`), one module per plugin.

use std::collections::HashSet;
use std::path::Path;

use k8s_openapi::api::core::v1::{NodeAffinity, TopologySpreadConstraint};
use serde::Deserialize;
use serde_json::Value;

use super::*;
use crate::error::InputError;
use crate::sched::framework::names;
use crate::yaml::Document;

mod balanced_allocation;
mod coscheduling;
mod default_preemption;
mod dynamic_resources;
mod fit;
mod gpu_share;
mod inter_pod_affinity;
mod node_affinity;
mod pod_topology_spread;
mod volume_binding;

/// The plugin args of one profile, defaulted.
pub(super) struct Args {
    pub(super) fit: FitArgs,
    pub(super) balanced_resources: Vec<ResourceSpec>,
    pub(super) added_affinity: Option<NodeAffinity>,
    pub(super) hard_pod_affinity_weight: i64,
    pub(super) ignore_preferred_terms_of_existing_pods: bool,
    pub(super) spread_default_constraints: Option<Vec<TopologySpreadConstraint>>,
    pub(super) permit_waiting_seconds: Option<u32>,
    pub(super) pod_group_backoff_seconds: u32,
    pub(super) pod_group_reject_percentage: u32,
    pub(super) preemption: PreemptionArgs,
    /// `Open-Gpu-Share`'s `gpuSelMethod`.
    pub(super) gpu_sel: Option<GpuSel>,
    /// DotProductScore's args were given (it cannot run without them).
    pub(super) dot_product_args: bool,
}

/// How a plugin's args are decoded, validated and defaulted into [`Args`].
pub(super) type Apply = fn(&Document, &Path, &str, &Value, &mut Args) -> Result<(), InputError>;

/// The plugins with an args type (`types_pluginargs.go`), each with its module: the args type,
/// its validation (`validation_pluginargs.go`) and defaults. A new plugin's args go here.
pub(super) const ARGS: &[(&str, Apply)] = &[
    (names::NODE_RESOURCES_FIT, fit::apply),
    (
        names::NODE_RESOURCES_BALANCED_ALLOCATION,
        balanced_allocation::apply,
    ),
    (names::INTER_POD_AFFINITY, inter_pod_affinity::apply),
    (names::NODE_AFFINITY, node_affinity::apply),
    (names::POD_TOPOLOGY_SPREAD, pod_topology_spread::apply),
    (names::DEFAULT_PREEMPTION, default_preemption::apply),
    ("VolumeBinding", volume_binding::apply),
    ("Coscheduling", coscheduling::apply),
    ("DynamicResources", dynamic_resources::apply),
    ("Open-Gpu-Share", gpu_share::apply_open_gpu_share),
    ("DotProductScore", gpu_share::apply_dot_product),
];

/// Decodes and validates `pluginConfig` (`PluginConfig.decodeNestedObjects`,
/// `validatePluginConfig`, the `SetDefaults_*Args` functions).
pub(super) fn plugin_args(
    doc: &Document,
    file: &Path,
    path: &str,
    rp: &RawProfile,
) -> Result<Args, InputError> {
    let mut args = Args {
        fit: FitArgs::default(),
        balanced_resources: default_resources(),
        added_affinity: None,
        hard_pod_affinity_weight: 1,
        ignore_preferred_terms_of_existing_pods: false,
        spread_default_constraints: None,
        permit_waiting_seconds: None,
        pod_group_backoff_seconds: 0,
        pod_group_reject_percentage: DEFAULT_POD_GROUP_REJECT_PERCENTAGE,
        preemption: PreemptionArgs::default(),
        gpu_sel: None,
        dot_product_args: false,
    };
    let mut seen: HashSet<&str> = HashSet::new();
    for (j, pc) in rp.plugin_config.iter().flatten().enumerate() {
        let pc_path = format!("{path}.pluginConfig[{j}]");
        if let Some(msg) = plugin_name_error(&pc.name) {
            return Err(doc.error(file, &format!("{pc_path}.name"), msg));
        }
        if !seen.insert(&pc.name) {
            return Err(doc.error(file, &pc_path, format!("Duplicate value: {:?}", pc.name)));
        }
        let a_path = format!("{pc_path}.args");
        let value = pc.args.clone().unwrap_or(Value::Null);
        let value = if value.is_null() {
            Value::Object(Default::default())
        } else {
            value
        };
        // Plugins without an args type: upstream passes the args through unread.
        if let Some((_, apply)) = ARGS.iter().find(|(name, _)| *name == pc.name) {
            apply(doc, file, &a_path, &value, &mut args)?;
        }
    }
    Ok(args)
}

/// The embedded `TypeMeta` of plugin args must name this plugin's args kind
/// (`PluginConfig.decodeNestedObjects`).
pub(super) fn check_type_meta(
    doc: &Document,
    file: &Path,
    path: &str,
    plugin: &str,
    api_version: &Option<String>,
    kind: &Option<String>,
) -> Result<(), InputError> {
    if let Some(v) = api_version
        && v != API_VERSION
    {
        return Err(doc.error(
            file,
            &format!("{path}.apiVersion"),
            format!("args apiVersion {v:?} is not supported (expected {API_VERSION})"),
        ));
    }
    let want = format!("{plugin}Args");
    if let Some(k) = kind
        && *k != want
    {
        return Err(doc.error(
            file,
            &format!("{path}.kind"),
            format!(
                "args for plugin {plugin} were not of type {want}.kubescheduler.config.k8s.io, \
                 got {k}.kubescheduler.config.k8s.io"
            ),
        ));
    }
    Ok(())
}

/// `ResourceSpec` of the plugin args.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawResourceSpec {
    #[serde(default)]
    pub(super) name: String,
    #[serde(default)]
    pub(super) weight: i64,
}

/// `UtilizationShapePoint`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawShapePoint {
    #[serde(default)]
    pub(super) utilization: i32,
    #[serde(default)]
    pub(super) score: i32,
}

pub(super) const QUALIFIED_NAME_MESSAGE: &str = "a qualified name must consist of alphanumeric characters, \
    '-', '_' or '.', and must start and end with an alphanumeric character, with an optional DNS \
    subdomain prefix and '/' (e.g. 'example.com/MyName')";

/// Defaulted `ResourceSpec`s (empty list → cpu 1, memory 1; weight 0 → 1), each checked.
pub(super) fn resource_specs(
    path: &str,
    raw: Option<Vec<RawResourceSpec>>,
    check: impl Fn(&ResourceSpec, &str) -> Result<(), InputError>,
) -> Result<Vec<ResourceSpec>, InputError> {
    let raw = raw.unwrap_or_default();
    if raw.is_empty() {
        return Ok(default_resources());
    }
    let mut out = Vec::with_capacity(raw.len());
    for (i, r) in raw.into_iter().enumerate() {
        let spec = ResourceSpec {
            name: r.name,
            weight: if r.weight == 0 { 1 } else { r.weight },
        };
        check(&spec, &format!("{path}[{i}]"))?;
        out.push(spec);
    }
    Ok(out)
}

/// `validateFunctionShape` (validation_pluginargs.go).
pub(super) fn validate_function_shape(
    doc: &Document,
    file: &Path,
    path: &str,
    shape: &[RawShapePoint],
) -> Result<(), InputError> {
    if shape.is_empty() {
        return Err(doc.error(
            file,
            path,
            "Required value: at least one point must be specified".to_string(),
        ));
    }
    for i in 1..shape.len() {
        if shape[i - 1].utilization >= shape[i].utilization {
            return Err(doc.error(
                file,
                &format!("{path}[{i}].utilization"),
                invalid(
                    shape[i].utilization,
                    "values must be sorted in increasing order",
                ),
            ));
        }
    }
    for (i, p) in shape.iter().enumerate() {
        if !(0..=100).contains(&p.utilization) {
            return Err(doc.error(
                file,
                &format!("{path}[{i}].utilization"),
                invalid(p.utilization, "not in valid range [0, 100]"),
            ));
        }
        if !(0..=MAX_CUSTOM_PRIORITY_SCORE as i32).contains(&p.score) {
            return Err(doc.error(
                file,
                &format!("{path}[{i}].score"),
                invalid(p.score, "not in valid range [0, 10]"),
            ));
        }
    }
    Ok(())
}
