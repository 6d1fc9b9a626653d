//! A profile compiled for the cycle: its resource scorers against the scenario's resource
//! table, and its plugin lists in the shape the cycle reads them.

use super::*;

impl CompiledProfile {
    pub(super) fn compile(profiles: &[Profile], table: &ResourceTable) -> Vec<CompiledProfile> {
        profiles
            .iter()
            .map(|p| {
                let filters: Vec<Plugin> = p
                    .framework
                    .at(ExtensionPoint::Filter)
                    .iter()
                    .copied()
                    .filter(|plugin| FILTERS_WITH_EFFECT.contains(plugin))
                    .collect();
                let is_static = |plugin: &Plugin| STATIC_FILTERS.contains(plugin);
                let first_per_pod = filters
                    .iter()
                    .position(|plugin| !is_static(plugin))
                    .unwrap_or(filters.len());
                let pre_filter = p.framework.at(ExtensionPoint::PreFilter);
                let pre_filter_at = |plugin| pre_filter.iter().position(|p| *p == plugin);
                CompiledProfile {
                    static_first: !filters[first_per_pod..].iter().any(is_static),
                    fit_filter: filters.contains(&Plugin::NodeResourcesFit),
                    filters,
                    weights: p.framework.weights(),
                    gang_pre_filter_first: matches!(
                        (
                            pre_filter_at(Plugin::Coscheduling),
                            pre_filter_at(Plugin::NodeAffinity)
                        ),
                        (Some(gang), Some(affinity)) if gang < affinity
                    ),
                    fit: (!node_resources_fit::is_default(&p.fit))
                        .then(|| node_resources_fit::FitScorer::new(&p.fit, table)),
                    balanced: (p.balanced_resources != profile::default_resources()).then(|| {
                        node_resources_balanced_allocation::BalancedScorer::new(
                            &p.balanced_resources,
                            table,
                        )
                    }),
                    profile: p.clone(),
                }
            })
            .collect()
    }
}
