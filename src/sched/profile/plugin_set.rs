//! Plugin sets: the merge with the defaults (`default_plugins.go: mergePlugins`) and the
//! framework's expansion per extension point (`framework.go: updatePluginList`,
//! `expandMultiPointPlugins`, `getScoreWeights`).

use std::collections::{HashMap, HashSet};

use super::*;

/// One `Plugin` entry, with the field path it came from (`None` for upstream's defaults).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub name: String,
    pub weight: Option<i32>,
    pub at: Option<String>,
}

impl Entry {
    fn default_plugin(name: &str, weight: Option<i32>) -> Self {
        Entry {
            name: name.into(),
            weight,
            at: None,
        }
    }
}

/// `PluginSet`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct PluginSet {
    pub enabled: Vec<Entry>,
    pub disabled: Vec<Entry>,
}

/// `mergePluginSet` (default_plugins.go), line for line: disabled defaults are dropped
/// (`*` drops all), a custom plugin that is also a default replaces it in place (the last
/// custom entry of that name wins), every other custom plugin is appended in order —
/// duplicates included, which the framework rejects later.
pub(crate) fn merge_plugin_set(default: &PluginSet, custom: &PluginSet) -> PluginSet {
    let mut disabled: Vec<Entry> = Vec::new();
    let mut disabled_names: HashSet<&str> = HashSet::new();
    for d in custom.disabled.iter().chain(&default.disabled) {
        disabled.push(Entry {
            name: d.name.clone(),
            weight: None,
            at: d.at.clone(),
        });
        disabled_names.insert(&d.name);
    }
    let mut custom_index: HashMap<&str, usize> = HashMap::new();
    for (i, e) in custom.enabled.iter().enumerate() {
        custom_index.insert(&e.name, i);
    }
    let mut replaced: HashSet<usize> = HashSet::new();
    let mut enabled = Vec::new();
    if !disabled_names.contains("*") {
        for d in &default.enabled {
            if disabled_names.contains(d.name.as_str()) {
                continue;
            }
            match custom_index.get(d.name.as_str()) {
                Some(&i) => {
                    enabled.push(custom.enabled[i].clone());
                    replaced.insert(i);
                }
                None => enabled.push(d.clone()),
            }
        }
    }
    for (i, e) in custom.enabled.iter().enumerate() {
        if !replaced.contains(&i) {
            enabled.push(e.clone());
        }
    }
    PluginSet { enabled, disabled }
}

/// `Plugins`: the `multiPoint` set and one set per extension point (indexed by
/// `ExtensionPoint as usize`).
#[derive(Debug, Clone, Default)]
pub(crate) struct Plugins {
    pub multi_point: PluginSet,
    pub points: [PluginSet; 12],
}

impl Plugins {
    /// `getDefaultPlugins`.
    pub fn defaults() -> Self {
        Plugins {
            multi_point: PluginSet {
                enabled: DEFAULT_MULTI_POINT
                    .iter()
                    .map(|(n, w)| Entry::default_plugin(n, *w))
                    .collect(),
                disabled: Vec::new(),
            },
            points: Default::default(),
        }
    }

    /// `mergePlugins`.
    pub fn merge(&self, custom: &Plugins) -> Plugins {
        Plugins {
            multi_point: merge_plugin_set(&self.multi_point, &custom.multi_point),
            points: std::array::from_fn(|i| merge_plugin_set(&self.points[i], &custom.points[i])),
        }
    }

    pub(super) fn point(&self, p: ExtensionPoint) -> &PluginSet {
        &self.points[p as usize]
    }
}

/// A framework error with the field it is best reported at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PluginError {
    pub message: String,
    pub at: Option<String>,
}

pub(super) fn plugin_error(message: String, at: &Option<String>) -> PluginError {
    PluginError {
        message,
        at: at.clone(),
    }
}

/// `updatePluginList` / `expandMultiPointPlugins`'s error for a plugin listed twice.
fn already_registered(e: &Entry, point: ExtensionPoint) -> PluginError {
    plugin_error(
        format!(
            "plugin {:?} already registered as {:?}",
            e.name,
            point.interface()
        ),
        &e.at,
    )
}

/// The plugins that run at `point`, in order: `updatePluginList` on the specific set, then
/// `expandMultiPointPlugins` (framework.go). Every name must be in [`KNOWN_PLUGINS`].
pub(crate) fn plugins_at(
    plugins: &Plugins,
    point: ExtensionPoint,
) -> Result<Vec<Entry>, PluginError> {
    let implements = |name: &str| known_plugin(name).is_some_and(|p| p.implements(point));
    let set = plugins.point(point);
    let mut specific: Vec<&Entry> = Vec::new();
    let mut seen: HashSet<&str> = HashSet::new();
    for e in &set.enabled {
        if !implements(&e.name) {
            return Err(plugin_error(
                format!(
                    "plugin {:?} does not extend {} plugin",
                    e.name,
                    point.interface()
                ),
                &e.at,
            ));
        }
        if !seen.insert(&e.name) {
            return Err(already_registered(e, point));
        }
        specific.push(e);
    }
    if set.disabled.iter().any(|d| d.name == "*") {
        return Ok(specific.into_iter().cloned().collect());
    }
    let disabled: HashSet<&str> = set.disabled.iter().map(|d| d.name.as_str()).collect();
    let mut overrides: HashSet<&str> = HashSet::new();
    let mut multi: Vec<&Entry> = Vec::new();
    let mut multi_seen: HashSet<&str> = HashSet::new();
    for e in &plugins.multi_point.enabled {
        if !implements(&e.name) || disabled.contains(e.name.as_str()) {
            continue;
        }
        if seen.contains(e.name.as_str()) {
            overrides.insert(&e.name);
            continue;
        }
        if !multi_seen.insert(&e.name) {
            return Err(already_registered(e, point));
        }
        multi.push(e);
    }
    let (first, rest): (Vec<&Entry>, Vec<&Entry>) = specific
        .into_iter()
        .partition(|e| overrides.contains(e.name.as_str()));
    Ok(first
        .into_iter()
        .chain(multi)
        .chain(rest)
        .cloned()
        .collect())
}

/// `getScoreWeights` (framework.go): the first weight configured for each score plugin, in
/// `score.enabled` then `multiPoint.enabled` order; 0 (or none) counts as 1.
pub(crate) fn score_weights(plugins: &Plugins) -> HashMap<String, i64> {
    let mut weights = HashMap::new();
    for e in plugins
        .point(ExtensionPoint::Score)
        .enabled
        .iter()
        .chain(&plugins.multi_point.enabled)
    {
        if !known_plugin(&e.name).is_some_and(|p| p.implements(ExtensionPoint::Score)) {
            continue;
        }
        weights.entry(e.name.clone()).or_insert(match e.weight {
            None | Some(0) => 1,
            Some(w) => i64::from(w),
        });
    }
    weights
}

/// `NewFramework` over merged plugin sets: the plugins at each extension point, in order, and
/// the weights of those at Score. Errors as [`plugins_at`], in extension-point order.
pub(crate) fn build_framework(plugins: &Plugins) -> Result<Framework, PluginError> {
    let registered = |e: &Entry| known_plugin(&e.name).and_then(|p| p.support.plugin());
    let mut points: [Vec<Plugin>; 12] = Default::default();
    for p in ExtensionPoint::ALL {
        points[p as usize] = plugins_at(plugins, p)?
            .iter()
            .filter_map(registered)
            .collect();
    }
    let weights = score_weights(plugins);
    let weights = points[ExtensionPoint::Score as usize]
        .iter()
        .map(|&p| (p, weights.get(p.name()).copied().unwrap_or(1)))
        .collect();
    Ok(Framework::new(points, weights))
}

/// The framework of upstream's default profile (`getDefaultPlugins`).
pub(crate) fn default_framework() -> Framework {
    build_framework(&Plugins::defaults()).expect("the default plugins form a valid framework")
}

/// The default framework with scheduler-plugins' Coscheduling enabled at the points its sample
/// configuration enables it (`manifests/coscheduling/scheduler-config.yaml`: queueSort in place
/// of the defaults, preFilter, postFilter, permit, reserve).
pub(crate) fn coscheduling_framework() -> Framework {
    let coscheduling = || Entry::default_plugin("Coscheduling", None);
    let mut custom = Plugins::default();
    for p in [
        ExtensionPoint::PreFilter,
        ExtensionPoint::PostFilter,
        ExtensionPoint::Permit,
        ExtensionPoint::Reserve,
    ] {
        custom.points[p as usize].enabled.push(coscheduling());
    }
    custom.points[ExtensionPoint::QueueSort as usize] = PluginSet {
        enabled: vec![coscheduling()],
        disabled: vec![Entry::default_plugin("*", None)],
    };
    build_framework(&Plugins::defaults().merge(&custom))
        .expect("the sample Coscheduling configuration forms a valid framework")
}
