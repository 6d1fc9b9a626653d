//! Plugin-set merge and expansion, ported from `default_plugins_test.go` and `framework_test.go`.

use super::*;

fn set(enabled: &[(&str, Option<i32>)], disabled: &[&str]) -> PluginSet {
    PluginSet {
        enabled: enabled
            .iter()
            .map(|(n, w)| Entry {
                name: n.to_string(),
                weight: *w,
                at: None,
            })
            .collect(),
        disabled: disabled
            .iter()
            .map(|n| Entry {
                name: n.to_string(),
                weight: None,
                at: None,
            })
            .collect(),
    }
}

fn names_weights(s: &PluginSet) -> (Vec<(String, Option<i32>)>, Vec<String>) {
    (
        s.enabled
            .iter()
            .map(|e| (e.name.clone(), e.weight))
            .collect(),
        s.disabled.iter().map(|e| e.name.clone()).collect(),
    )
}

/// `TestMergePlugins` (pkg/scheduler/apis/config/v1/default_plugins_test.go): every case
/// of one plugin set (the upstream cases use `Filter` or `MultiPoint`, merged alike).
#[test]
fn merge_plugin_set_matches_upstream() {
    type Case<'a> = (
        &'a str,
        PluginSet, // custom
        PluginSet, // default
        PluginSet, // expected
    );
    let d12 = || set(&[("DefaultPlugin1", None), ("DefaultPlugin2", None)], &[]);
    let p123 = || {
        set(
            &[("Plugin1", None), ("Plugin2", None), ("Plugin3", None)],
            &[],
        )
    };
    let cases: Vec<Case> = vec![
        (
            "AppendCustomPlugin",
            set(&[("CustomPlugin", None)], &[]),
            d12(),
            set(
                &[
                    ("DefaultPlugin1", None),
                    ("DefaultPlugin2", None),
                    ("CustomPlugin", None),
                ],
                &[],
            ),
        ),
        (
            "InsertAfterDefaultPlugins2",
            set(
                &[("CustomPlugin", None), ("DefaultPlugin2", None)],
                &["DefaultPlugin2"],
            ),
            d12(),
            set(
                &[
                    ("DefaultPlugin1", None),
                    ("CustomPlugin", None),
                    ("DefaultPlugin2", None),
                ],
                &["DefaultPlugin2"],
            ),
        ),
        (
            "InsertBeforeAllPlugins",
            set(
                &[
                    ("CustomPlugin", None),
                    ("DefaultPlugin1", None),
                    ("DefaultPlugin2", None),
                ],
                &["*"],
            ),
            d12(),
            set(
                &[
                    ("CustomPlugin", None),
                    ("DefaultPlugin1", None),
                    ("DefaultPlugin2", None),
                ],
                &["*"],
            ),
        ),
        (
            "ReorderDefaultPlugins",
            set(
                &[("DefaultPlugin2", None), ("DefaultPlugin1", None)],
                &["*"],
            ),
            d12(),
            set(
                &[("DefaultPlugin2", None), ("DefaultPlugin1", None)],
                &["*"],
            ),
        ),
        ("ApplyNilCustomPlugin", set(&[], &[]), d12(), d12()),
        (
            "CustomPluginOverrideDefaultPlugin",
            set(&[("Plugin1", Some(2)), ("Plugin3", Some(3))], &[]),
            p123(),
            set(
                &[
                    ("Plugin1", Some(2)),
                    ("Plugin2", None),
                    ("Plugin3", Some(3)),
                ],
                &[],
            ),
        ),
        (
            "OrderPreserveAfterOverride",
            set(&[("Plugin2", Some(2)), ("Plugin1", Some(1))], &[]),
            p123(),
            set(
                &[
                    ("Plugin1", Some(1)),
                    ("Plugin2", Some(2)),
                    ("Plugin3", None),
                ],
                &[],
            ),
        ),
        (
            "RepeatedCustomPlugin",
            set(
                &[
                    ("Plugin1", None),
                    ("Plugin2", Some(2)),
                    ("Plugin3", None),
                    ("Plugin2", Some(4)),
                ],
                &[],
            ),
            p123(),
            set(
                &[
                    ("Plugin1", None),
                    ("Plugin2", Some(4)),
                    ("Plugin3", None),
                    ("Plugin2", Some(2)),
                ],
                &[],
            ),
        ),
        (
            "Append custom MultiPoint plugin",
            set(&[("CustomPlugin", None)], &[]),
            d12(),
            set(
                &[
                    ("DefaultPlugin1", None),
                    ("DefaultPlugin2", None),
                    ("CustomPlugin", None),
                ],
                &[],
            ),
        ),
        (
            "Append disabled Multipoint plugins",
            set(
                &[("CustomPlugin", None), ("CustomPlugin2", None)],
                &["DefaultPlugin2"],
            ),
            d12(),
            set(
                &[
                    ("DefaultPlugin1", None),
                    ("CustomPlugin", None),
                    ("CustomPlugin2", None),
                ],
                &["DefaultPlugin2"],
            ),
        ),
        (
            "override default MultiPoint plugins with custom value",
            set(&[("DefaultPlugin", Some(5))], &[]),
            set(&[("DefaultPlugin", None)], &[]),
            set(&[("DefaultPlugin", Some(5))], &[]),
        ),
        (
            "disabled MultiPoint plugin in default set",
            set(&[("CustomPlugin", None)], &[]),
            set(&[("DefaultPlugin", None)], &["DefaultPlugin2"]),
            set(
                &[("DefaultPlugin", None), ("CustomPlugin", None)],
                &["DefaultPlugin2"],
            ),
        ),
        (
            "multipoint with only disabled gets merged",
            set(&[], &["DefaultPlugin"]),
            set(&[("DefaultPlugin", None)], &[]),
            set(&[], &["DefaultPlugin"]),
        ),
    ];
    for (name, custom, default, want) in cases {
        let got = merge_plugin_set(&default, &custom);
        assert_eq!(names_weights(&got), names_weights(&want), "{name}");
    }
}

/// "disabled MultiPoint plugin in default set for specific extension point"
/// (TestMergePlugins): a default `Score.Disabled` survives the merge of an empty custom set.
#[test]
fn default_disabled_survives_merge() {
    let default = set(&[], &["DefaultPlugin2"]);
    let got = merge_plugin_set(&default, &PluginSet::default());
    assert_eq!(names_weights(&got), (vec![], vec!["DefaultPlugin2".into()]));
}

#[test]
fn default_list_is_known_and_in_tree() {
    for (name, _) in DEFAULT_MULTI_POINT {
        let p = known_plugin(name).unwrap_or_else(|| panic!("{name} unknown"));
        assert!(p.is_in_tree(), "{name}");
        assert!(plugin_name_error(name).is_none(), "{name}");
    }
}

#[test]
fn suggestions() {
    assert_eq!(suggest("NodeResourceFit"), Some("NodeResourcesFit"));
    assert_eq!(suggest("TaintTolerations"), Some("TaintToleration"));
    assert_eq!(suggest("Zzz"), None);
    // Out-of-tree names are never suggested; simulated scheduler-plugins ones are.
    assert_ne!(suggest("CapacitySchedulin"), Some("CapacityScheduling"));
    assert_eq!(suggest("Coschedulin"), Some("Coscheduling"));
}

/// One specific extension point's set: (point, enabled, disabled).
type PointSet<'a> = (ExtensionPoint, &'a [(&'a str, Option<i32>)], &'a [&'a str]);

/// A profile's plugins as `NewFramework` receives them (no merge with the defaults).
fn raw_plugins(
    multi: &[(&str, Option<i32>)],
    multi_disabled: &[&str],
    points: &[PointSet],
) -> Plugins {
    let mut p = Plugins {
        multi_point: set(multi, multi_disabled),
        ..Default::default()
    };
    for (point, enabled, disabled) in points {
        p.points[*point as usize] = set(enabled, disabled);
    }
    p
}

/// Every extension point's plugins as `ListPlugins` shows them: names, and for Score the
/// weight `getScoreWeights` assigns.
fn listed(p: &Plugins) -> Vec<(ExtensionPoint, Vec<(String, i64)>)> {
    let weights = score_weights(p);
    ExtensionPoint::ALL
        .into_iter()
        .map(|point| {
            let list = plugins_at(p, point)
                .unwrap()
                .into_iter()
                .map(|e| {
                    let w = if point == ExtensionPoint::Score {
                        weights[&e.name]
                    } else {
                        0
                    };
                    (e.name, w)
                })
                .collect();
            (point, list)
        })
        .filter(|(_, l): &(_, Vec<_>)| !l.is_empty())
        .collect()
}

fn want(points: &[(ExtensionPoint, &[(&str, i64)])]) -> Vec<(ExtensionPoint, Vec<(String, i64)>)> {
    let mut v: Vec<_> = points
        .iter()
        .map(|(p, l)| (*p, l.iter().map(|(n, w)| (n.to_string(), *w)).collect()))
        .collect();
    v.sort_by_key(|(p, _)| ExtensionPoint::ALL.iter().position(|q| q == p));
    v
}

/// `TestNewFrameworkMultiPointExpansion` (pkg/scheduler/framework/runtime/framework_test.go)
/// with real plugins in the fake plugins' roles: `testPlugin` → NodeAffinity (PreFilter,
/// Filter, PreScore, Score), `scorePlugin1` → TaintToleration (Filter, PreScore, Score),
/// `scorePlugin2` → PodTopologySpread, `scoreWithNormalizePlugin1` → ImageLocality (Score),
/// `queueSortPlugin` → PrioritySort, `bindPlugin` → DefaultBinder. The expected lists are
/// upstream's, restricted to the points our plugins implement.
#[test]
fn multi_point_expansion_matches_upstream() {
    use ExtensionPoint::*;
    const NA: &str = "NodeAffinity";
    const TT: &str = "TaintToleration";
    const PTS: &str = "PodTopologySpread";
    const IL: &str = "ImageLocality";
    // plugin expansion
    assert_eq!(
        listed(&raw_plugins(&[(NA, Some(5))], &[], &[])),
        want(&[
            (PreFilter, &[(NA, 0)]),
            (Filter, &[(NA, 0)]),
            (PreScore, &[(NA, 0)]),
            (Score, &[(NA, 5)])
        ])
    );
    // disable MultiPoint plugin at some extension points
    assert_eq!(
        listed(&raw_plugins(
            &[(NA, None)],
            &[],
            &[(PreScore, &[], &[NA]), (Score, &[], &[NA])]
        )),
        want(&[(PreFilter, &[(NA, 0)]), (Filter, &[(NA, 0)])])
    );
    // Multiple MultiPoint plugins
    assert_eq!(
        listed(&raw_plugins(&[(NA, None), (TT, None)], &[], &[])),
        want(&[
            (PreFilter, &[(NA, 0)]),
            (Filter, &[(NA, 0), (TT, 0)]),
            (PreScore, &[(NA, 0), (TT, 0)]),
            (Score, &[(NA, 1), (TT, 1)]),
        ])
    );
    // disable MultiPoint extension
    assert_eq!(
        listed(&raw_plugins(
            &[(NA, None), (TT, None)],
            &[],
            &[(PreScore, &[], &["*"])]
        )),
        want(&[
            (PreFilter, &[(NA, 0)]),
            (Filter, &[(NA, 0), (TT, 0)]),
            (Score, &[(NA, 1), (TT, 1)]),
        ])
    );
    // Reorder MultiPoint plugins (specified extension takes precedence)
    let got = listed(&raw_plugins(
        &[(IL, None), (NA, None), (TT, None)],
        &[],
        &[(Score, &[(TT, None), (NA, None)], &[])],
    ));
    assert_eq!(
        got.iter().find(|(p, _)| *p == Score).unwrap().1,
        want(&[(Score, &[(TT, 1), (NA, 1), (IL, 1)])])[0].1
    );
    // Reorder MultiPoint plugins (specified extension only takes precedence when it exists
    // in MultiPoint)
    let got = listed(&raw_plugins(
        &[(NA, None), (TT, None)],
        &[],
        &[(Score, &[(IL, None), (TT, None), (NA, None)], &[])],
    ));
    assert_eq!(
        got.iter().find(|(p, _)| *p == Score).unwrap().1,
        want(&[(Score, &[(TT, 1), (NA, 1), (IL, 1)])])[0].1
    );
    // Override MultiPoint plugins weights
    let got = listed(&raw_plugins(
        &[(NA, None), (TT, None)],
        &[],
        &[(Score, &[(TT, Some(5)), (NA, Some(3))], &[])],
    ));
    assert_eq!(
        got.iter().find(|(p, _)| *p == Score).unwrap().1,
        want(&[(Score, &[(TT, 5), (NA, 3)])])[0].1
    );
    // disable and enable MultiPoint plugins with '*' (the framework ignores
    // multiPoint.disabled; mergePlugins already applied it)
    assert_eq!(
        listed(&raw_plugins(
            &[("PrioritySort", None), ("DefaultBinder", None), (TT, None)],
            &["*"],
            &[]
        )),
        want(&[
            (Filter, &[(TT, 0)]),
            (PreScore, &[(TT, 0)]),
            (Score, &[(TT, 1)]),
            (Bind, &[("DefaultBinder", 0)]),
            (QueueSort, &[("PrioritySort", 0)]),
        ])
    );
    // disable and enable MultiPoint plugin by name
    assert_eq!(
        listed(&raw_plugins(
            &[("DefaultBinder", None), ("PrioritySort", None), (TT, None)],
            &[TT],
            &[]
        )),
        want(&[
            (Filter, &[(TT, 0)]),
            (PreScore, &[(TT, 0)]),
            (Score, &[(TT, 1)]),
            (Bind, &[("DefaultBinder", 0)]),
            (QueueSort, &[("PrioritySort", 0)]),
        ])
    );
    // Expect 'already registered' error
    let err = plugins_at(&raw_plugins(&[(NA, None), (NA, None)], &[], &[]), PreFilter).unwrap_err();
    assert_eq!(
        err.message,
        r#"plugin "NodeAffinity" already registered as "PreFilterPlugin""#
    );
    // Override MultiPoint plugins weights and avoid a plugin being loaded multiple times
    let got = listed(&raw_plugins(
        &[(NA, None), (TT, None)],
        &[],
        &[(Score, &[(TT, Some(5)), (PTS, Some(5)), (NA, Some(3))], &[])],
    ));
    assert_eq!(
        got.iter().find(|(p, _)| *p == Score).unwrap().1,
        want(&[(Score, &[(TT, 5), (NA, 3), (PTS, 5)])])[0].1
    );
}

/// `updatePluginList`: a specific point only takes plugins that implement it, once.
#[test]
fn specific_points_are_checked() {
    let p = raw_plugins(
        &[],
        &[],
        &[(ExtensionPoint::Score, &[("NodeUnschedulable", None)], &[])],
    );
    assert_eq!(
        plugins_at(&p, ExtensionPoint::Score).unwrap_err().message,
        r#"plugin "NodeUnschedulable" does not extend ScorePlugin plugin"#
    );
    let p = raw_plugins(
        &[],
        &[],
        &[(
            ExtensionPoint::Filter,
            &[("NodeName", None), ("NodeName", None)],
            &[],
        )],
    );
    assert_eq!(
        plugins_at(&p, ExtensionPoint::Filter).unwrap_err().message,
        r#"plugin "NodeName" already registered as "FilterPlugin""#
    );
}

/// The default plugins expand to the default profile.
#[test]
fn defaults_expand_to_the_default_profile() {
    let plugins = Plugins::defaults();
    let at = |p| {
        plugins_at(&plugins, p)
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        at(ExtensionPoint::Filter),
        [
            "NodeUnschedulable",
            "NodeName",
            "TaintToleration",
            "NodeAffinity",
            "NodePorts",
            "NodeResourcesFit",
            "VolumeRestrictions",
            "NodeVolumeLimits",
            "VolumeBinding",
            "VolumeZone",
            "PodTopologySpread",
            "InterPodAffinity",
            "DynamicResources",
        ]
    );
    assert_eq!(
        at(ExtensionPoint::Score),
        [
            "TaintToleration",
            "NodeAffinity",
            "NodeResourcesFit",
            "VolumeBinding",
            "PodTopologySpread",
            "InterPodAffinity",
            "NodeResourcesBalancedAllocation",
            "ImageLocality",
        ]
    );
    assert_eq!(at(ExtensionPoint::QueueSort), ["PrioritySort"]);
    assert_eq!(at(ExtensionPoint::Bind), ["DefaultBinder"]);
    assert_eq!(
        at(ExtensionPoint::PostFilter),
        ["DynamicResources", "DefaultPreemption"]
    );
    let w = score_weights(&plugins);
    assert_eq!(w["TaintToleration"], 3);
    assert_eq!(w["VolumeBinding"], 1, "no weight counts as 1");
}
