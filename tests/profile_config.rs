//! `KubeSchedulerConfiguration` → resolved profiles (`schedsim::sched::profile`).
//!
//! The fixtures of `fixtures/scheduler-config/` (including the Kubernetes documentation's
//! examples), the plugin merge and `multiPoint` expansion rules of upstream's
//! `default_plugins.go` / `framework.go` as seen through a whole configuration, and the errors a
//! user gets, with file, line, column and field path.

use std::path::{Path, PathBuf};

use k8s_openapi::api::core::v1::TopologySpreadConstraint;

use schedsim::error::InputError;
use schedsim::sched::plugins::registry::{ExtensionPoint, Plugin};
use schedsim::sched::profile::{
    DEFAULT_SCHEDULER_NAME, FitArgs, Profile, ResourceSpec, ScoringStrategy, Weights,
    default_resources, from_document,
};
use schedsim::yaml::parse_documents;

const FILTER: ExtensionPoint = ExtensionPoint::Filter;

const FIXTURES: &str = "fixtures/scheduler-config";

fn load_file(path: &Path) -> Result<Vec<Profile>, InputError> {
    let text = std::fs::read_to_string(path).unwrap();
    let docs = parse_documents(text, path)?;
    assert_eq!(docs.len(), 1, "{}", path.display());
    from_document(&docs[0], path)
}

fn fixture(name: &str) -> Vec<Profile> {
    let path = PathBuf::from(FIXTURES).join(name);
    load_file(&path).unwrap_or_else(|e| panic!("{e}"))
}

fn load(text: &str) -> Result<Vec<Profile>, InputError> {
    let file = Path::new("cfg.yaml");
    let docs = parse_documents(text.to_string(), file)?;
    from_document(&docs[0], file)
}

/// The one profile of a configuration.
fn one(text: &str) -> Profile {
    let mut profiles = load(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(profiles.len(), 1);
    profiles.remove(0)
}

fn error(text: &str) -> String {
    match load(text) {
        Ok(p) => panic!("expected an error, got {p:#?}"),
        Err(e) => e.to_string(),
    }
}

const HEAD: &str = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";

fn cfg(rest: &str) -> String {
    format!("{HEAD}{rest}")
}

fn rs(specs: &[(&str, i64)]) -> Vec<ResourceSpec> {
    ResourceSpec::list(specs)
}

fn default_weights() -> Weights {
    Profile::default().framework.weights()
}

fn no_weights() -> Weights {
    Weights {
        taint_toleration: 0,
        node_affinity: 0,
        node_resources_fit: 0,
        balanced_allocation: 0,
        pod_topology_spread: 0,
        inter_pod_affinity: 0,
        image_locality: 0,
        gpu_share: [0; 6],
    }
}

// ----------------------------------------------------------------------------------------
// Fixtures
// ----------------------------------------------------------------------------------------

#[test]
fn every_fixture_loads() {
    let mut n = 0;
    for entry in std::fs::read_dir(FIXTURES).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "yaml") {
            load_file(&path).unwrap_or_else(|e| panic!("{e}"));
            n += 1;
        }
    }
    assert_eq!(n, 12);
}

#[test]
fn default_profile_is_upstreams() {
    let p = Profile::default();
    assert_eq!(p.scheduler_name, DEFAULT_SCHEDULER_NAME);
    assert_eq!(
        p.framework.weights(),
        Weights {
            taint_toleration: 3,
            node_affinity: 2,
            node_resources_fit: 1,
            balanced_allocation: 1,
            pod_topology_spread: 2,
            inter_pod_affinity: 2,
            image_locality: 1,
            gpu_share: [0; 6],
        }
    );
    assert_eq!(p.fit, FitArgs::default());
    assert_eq!(p.fit.strategy, ScoringStrategy::LeastAllocated);
    assert_eq!(p.fit.resources, rs(&[("cpu", 1), ("memory", 1)]));
    assert_eq!(p.balanced_resources, default_resources());
    assert_eq!(p.hard_pod_affinity_weight, 1);
    assert!(
        p.framework
            .runs(ExtensionPoint::PreEnqueue, Plugin::SchedulingGates)
            && p.framework
                .runs(ExtensionPoint::PostFilter, Plugin::DefaultPreemption)
    );
    assert_eq!(p.spread_default_constraints, None);
    // What the scheduler resolves without a file, with an empty file and with no profiles.
    assert_eq!(fixture("docs-minimal.yaml"), vec![Profile::default()]);
    assert_eq!(one(HEAD), Profile::default());
    assert_eq!(one(&cfg("profiles: []\n")), Profile::default());
    assert_eq!(one(&cfg("profiles:\n- {}\n")), Profile::default());
    assert_eq!(
        one(&cfg(
            "profiles:\n- schedulerName: default-scheduler\n  plugins: {}\n"
        )),
        Profile::default()
    );
}

#[test]
fn gpu_bin_packing() {
    let p = &fixture("gpu-bin-packing.yaml")[0];
    assert_eq!(p.scheduler_name, "default-scheduler");
    assert_eq!(
        p.framework.weights(),
        Weights {
            node_resources_fit: 5,
            ..default_weights()
        }
    );
    assert_eq!(
        p.framework.at(FILTER),
        Profile::default().framework.at(FILTER)
    );
    assert_eq!(
        p.fit,
        FitArgs {
            strategy: ScoringStrategy::RequestedToCapacityRatio {
                shape: vec![(0, 0), (100, 10)]
            },
            resources: rs(&[("nvidia.com/gpu", 10), ("cpu", 1), ("memory", 1)]),
            ignored_resources: vec![],
            ignored_resource_groups: vec![],
        }
    );
}

#[test]
fn most_allocated() {
    let p = &fixture("most-allocated.yaml")[0];
    assert_eq!(p.fit.strategy, ScoringStrategy::MostAllocated);
    assert_eq!(
        p.fit.resources,
        rs(&[("cpu", 1), ("memory", 1), ("nvidia.com/gpu", 3)])
    );
    assert_eq!(
        p.framework.weights(),
        Weights {
            balanced_allocation: 0,
            ..default_weights()
        }
    );
    assert_eq!(p.percentage_of_nodes_to_score, Some(100));
}

#[test]
fn two_profiles() {
    let profiles = fixture("two-profiles.yaml");
    assert_eq!(profiles.len(), 2);
    assert_eq!(profiles[0], Profile::default());
    let p = &profiles[1];
    assert_eq!(p.scheduler_name, "gpu-packer");
    assert_eq!(
        p.framework.weights(),
        Weights {
            taint_toleration: 3,
            node_affinity: 2,
            node_resources_fit: 10,
            balanced_allocation: 0,
            pod_topology_spread: 0,
            inter_pod_affinity: 2,
            image_locality: 0,
            gpu_share: [0; 6],
        }
    );
    // PodTopologySpread is disabled through multiPoint: no filter either.
    assert!(!p.framework.runs(FILTER, Plugin::PodTopologySpread));
    assert!(
        p.framework.runs(FILTER, Plugin::NodeResourcesFit)
            && p.framework.runs(FILTER, Plugin::InterPodAffinity)
    );
    assert!(
        !p.framework
            .runs(ExtensionPoint::PostFilter, Plugin::DefaultPreemption)
    );
    assert!(
        p.framework
            .runs(ExtensionPoint::PreEnqueue, Plugin::SchedulingGates)
    );
    assert_eq!(
        p.fit.strategy,
        ScoringStrategy::RequestedToCapacityRatio {
            shape: vec![(0, 0), (100, 10)]
        }
    );
    // Weights left out default to 1.
    assert_eq!(
        p.fit.resources,
        rs(&[("nvidia.com/gpu", 5), ("cpu", 1), ("memory", 1)])
    );
    assert_eq!(p.fit.ignored_resource_groups, ["example.com"]);
    let added = p.added_affinity.as_ref().unwrap();
    let term = &added
        .required_during_scheduling_ignored_during_execution
        .as_ref()
        .unwrap()
        .node_selector_terms[0];
    assert_eq!(
        term.match_expressions.as_ref().unwrap()[0].key,
        "nvidia.com/gpu.present"
    );
    assert_eq!(p.hard_pod_affinity_weight, 10);
    assert_eq!(p.percentage_of_nodes_to_score, Some(100));
}

#[test]
fn docs_bin_packing() {
    let p = &fixture("docs-bin-packing-most-allocated.yaml")[0];
    assert_eq!(p.scheduler_name, DEFAULT_SCHEDULER_NAME);
    assert_eq!(p.fit.strategy, ScoringStrategy::MostAllocated);
    assert_eq!(
        p.fit.resources,
        rs(&[
            ("cpu", 1),
            ("memory", 1),
            ("intel.com/foo", 3),
            ("intel.com/bar", 3)
        ])
    );
    assert_eq!(p.framework.weights(), default_weights());
    let p = &fixture("docs-bin-packing-requested-to-capacity-ratio.yaml")[0];
    assert_eq!(
        p.fit.strategy,
        ScoringStrategy::RequestedToCapacityRatio {
            shape: vec![(0, 0), (100, 10)]
        }
    );
    assert_eq!(
        p.fit.resources,
        rs(&[("intel.com/foo", 3), ("intel.com/bar", 3)])
    );
}

#[test]
fn docs_multiple_profiles() {
    let profiles = fixture("docs-multiple-profiles.yaml");
    assert_eq!(profiles[0], Profile::default());
    let p = &profiles[1];
    assert_eq!(p.scheduler_name, "no-scoring-scheduler");
    assert_eq!(p.framework.weights(), no_weights());
    assert_eq!(
        p.framework.at(FILTER),
        Profile::default().framework.at(FILTER)
    );
    assert!(
        p.framework
            .runs(ExtensionPoint::PostFilter, Plugin::DefaultPreemption)
    );
}

#[test]
fn docs_node_affinity_per_profile() {
    let profiles = fixture("docs-node-affinity-per-profile.yaml");
    assert_eq!(profiles[0], Profile::default());
    let p = &profiles[1];
    assert_eq!(p.scheduler_name, "foo-scheduler");
    let required = p
        .added_affinity
        .as_ref()
        .unwrap()
        .required_during_scheduling_ignored_during_execution
        .as_ref()
        .unwrap();
    let req = &required.node_selector_terms[0]
        .match_expressions
        .as_ref()
        .unwrap()[0];
    assert_eq!(
        (req.key.as_str(), req.operator.as_str()),
        ("scheduler-profile", "In")
    );
    assert_eq!(req.values.as_deref(), Some(&["foo".to_string()][..]));
}

#[test]
fn docs_topology_spread_defaults() {
    let p = &fixture("docs-topology-spread-defaults.yaml")[0];
    assert_eq!(
        p.spread_default_constraints,
        Some(vec![TopologySpreadConstraint {
            max_skew: 1,
            topology_key: "topology.kubernetes.io/zone".into(),
            when_unsatisfiable: "ScheduleAnyway".into(),
            ..Default::default()
        }])
    );
    let p = &fixture("docs-topology-spread-no-defaults.yaml")[0];
    assert_eq!(p.spread_default_constraints, Some(vec![]));
}

// ----------------------------------------------------------------------------------------
// Merge and multiPoint expansion through a whole configuration
// ----------------------------------------------------------------------------------------

fn profile_with(plugins: &str) -> Profile {
    one(&cfg(&format!(
        "profiles:\n- schedulerName: s\n  plugins:\n{plugins}"
    )))
}

/// A default plugin re-enabled at `score` keeps the user's weight, and "no weight" is 1, not
/// the default weight (`getScoreWeights` takes the specific point first).
#[test]
fn score_point_weight_overrides_the_default() {
    let p = profile_with("    score:\n      enabled:\n      - name: TaintToleration\n");
    assert_eq!(
        p.framework.weights(),
        Weights {
            taint_toleration: 1,
            ..default_weights()
        }
    );
    let p =
        profile_with("    score:\n      enabled:\n      - name: NodeAffinity\n        weight: 0\n");
    assert_eq!(
        p.framework.weights().node_affinity,
        1,
        "weight 0 counts as 1"
    );
    let p = profile_with(
        "    multiPoint:\n      enabled:\n      - name: TaintToleration\n        weight: 7\n    score:\n      enabled:\n      - name: TaintToleration\n        weight: 5\n",
    );
    assert_eq!(
        p.framework.weights().taint_toleration,
        5,
        "score wins over multiPoint"
    );
}

/// `mergePluginSet`: a default plugin enabled in `multiPoint` replaces the default entry.
#[test]
fn multi_point_weight_replaces_the_default() {
    let p = profile_with(
        "    multiPoint:\n      enabled:\n      - name: TaintToleration\n        weight: 7\n",
    );
    assert_eq!(
        p.framework.weights(),
        Weights {
            taint_toleration: 7,
            ..default_weights()
        }
    );
    assert!(p.framework.runs(FILTER, Plugin::TaintToleration));
}

/// Upstream does not range-check plugin weights; a negative one is kept.
#[test]
fn negative_weights_are_kept() {
    let p = profile_with(
        "    score:\n      enabled:\n      - name: ImageLocality\n        weight: -1\n",
    );
    assert_eq!(p.framework.weights().image_locality, -1);
}

#[test]
fn disabled_at_one_point_only() {
    let p = profile_with("    filter:\n      disabled:\n      - name: NodeAffinity\n");
    assert!(!p.framework.runs(FILTER, Plugin::NodeAffinity));
    assert_eq!(p.framework.weights().node_affinity, 2, "still scores");
    let p = profile_with("    multiPoint:\n      disabled:\n      - name: NodeAffinity\n");
    assert!(!p.framework.runs(FILTER, Plugin::NodeAffinity));
    assert_eq!(p.framework.weights().node_affinity, 0);
    let p = profile_with("    preEnqueue:\n      disabled:\n      - name: SchedulingGates\n");
    assert!(
        !p.framework
            .runs(ExtensionPoint::PreEnqueue, Plugin::SchedulingGates)
    );
    let p = profile_with("    postFilter:\n      disabled:\n      - name: '*'\n");
    assert!(
        !p.framework
            .runs(ExtensionPoint::PostFilter, Plugin::DefaultPreemption)
    );
}

#[test]
fn score_star_disables_every_default_score() {
    let p = profile_with(
        "    score:\n      disabled:\n      - name: '*'\n      enabled:\n      - name: NodeResourcesFit\n        weight: 3\n",
    );
    assert_eq!(
        p.framework.weights(),
        Weights {
            node_resources_fit: 3,
            ..no_weights()
        }
    );
    assert_eq!(
        p.framework.at(FILTER),
        Profile::default().framework.at(FILTER)
    );
}

/// `multiPoint.disabled: ['*']` drops every default; what is enabled again is all there is.
#[test]
fn multi_point_star_keeps_only_what_is_enabled() {
    let p = profile_with(
        "    multiPoint:\n      disabled:\n      - name: '*'\n      enabled:\n      - name: PrioritySort\n      - name: DefaultBinder\n      - name: NodeResourcesFit\n        weight: 4\n      - name: NodeUnschedulable\n",
    );
    assert_eq!(
        p.framework.weights(),
        Weights {
            node_resources_fit: 4,
            ..no_weights()
        }
    );
    assert!(
        p.framework.runs(FILTER, Plugin::NodeResourcesFit)
            && p.framework.runs(FILTER, Plugin::NodeUnschedulable)
    );
    assert!(
        !p.framework.runs(FILTER, Plugin::NodeName)
            && !p.framework.runs(FILTER, Plugin::TaintToleration)
            && !p.framework.runs(FILTER, Plugin::NodeAffinity)
    );
    assert!(
        !p.framework
            .runs(ExtensionPoint::PreEnqueue, Plugin::SchedulingGates)
            && !p
                .framework
                .runs(ExtensionPoint::PostFilter, Plugin::DefaultPreemption)
    );
}

#[test]
fn percentage_of_nodes_to_score() {
    let profiles = load(&cfg(
        "percentageOfNodesToScore: 30\nprofiles:\n- schedulerName: a\n- schedulerName: b\n  percentageOfNodesToScore: 70\n",
    ))
    .unwrap();
    assert_eq!(profiles[0].percentage_of_nodes_to_score, Some(30));
    assert_eq!(profiles[1].percentage_of_nodes_to_score, Some(70));
}

#[test]
fn plugin_args() {
    let p = one(&cfg(
        "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args:\n      hardPodAffinityWeight: 0\n      ignorePreferredTermsOfExistingPods: true\n  - name: NodeResourcesBalancedAllocation\n    args:\n      resources:\n      - name: cpu\n      - name: nvidia.com/gpu\n        weight: 1\n  - name: NodeResourcesFit\n    args:\n      ignoredResources: [example.com/foo]\n  - name: DefaultPreemption\n    args: {minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 10}\n  - name: TaintToleration\n    args: {anything: goes}\n",
    ));
    assert_eq!(p.hard_pod_affinity_weight, 0);
    assert!(p.ignore_preferred_terms_of_existing_pods);
    assert_eq!(
        p.balanced_resources,
        rs(&[("cpu", 1), ("nvidia.com/gpu", 1)])
    );
    assert_eq!(p.fit.ignored_resources, ["example.com/foo"]);
    assert_eq!(p.fit.strategy, ScoringStrategy::LeastAllocated);
    assert_eq!(p.fit.resources, default_resources());
}

// ----------------------------------------------------------------------------------------
// Errors: message, line:column and field path
// ----------------------------------------------------------------------------------------

#[test]
fn unknown_plugin_with_suggestion() {
    assert_eq!(
        error(&cfg(
            "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: NodeResourceFit\n        weight: 2\n"
        )),
        r#"cfg.yaml:7:15: profiles[0].plugins.score.enabled[0].name: unknown plugin "NodeResourceFit" (did you mean "NodeResourcesFit"?)"#
    );
    assert_eq!(
        error(&cfg(
            "profiles:\n- plugins:\n    multiPoint:\n      disabled:\n      - name: TaintTolerations\n"
        )),
        r#"cfg.yaml:7:15: profiles[0].plugins.multiPoint.disabled[0].name: unknown plugin "TaintTolerations" (did you mean "TaintToleration"?)"#
    );
    assert_eq!(
        error(&cfg(
            "profiles:\n- pluginConfig:\n  - name: NodeResourceFit\n    args: {}\n"
        )),
        r#"cfg.yaml:5:11: profiles[0].pluginConfig[0].name: unknown plugin "NodeResourceFit" (did you mean "NodeResourcesFit"?)"#
    );
    assert_eq!(
        error(&cfg(
            "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: Zzz\n"
        )),
        r#"cfg.yaml:7:15: profiles[0].plugins.filter.enabled[0].name: unknown plugin "Zzz""#
    );
}

/// scheduler-plugins' own profile: Coscheduling replaces the queue sort and gangs are simulated.
#[test]
fn scheduler_plugins_coscheduling() {
    let profiles = fixture("scheduler-plugins-coscheduling.yaml");
    assert_eq!(profiles.len(), 1);
    let p = &profiles[0];
    assert!(
        p.framework
            .runs(ExtensionPoint::Permit, Plugin::Coscheduling)
    );
    assert_eq!(
        p.framework.at(ExtensionPoint::QueueSort),
        [Plugin::Coscheduling]
    );
    assert_eq!(
        p.framework.at(ExtensionPoint::PostFilter),
        [
            Plugin::DynamicResources,
            Plugin::DefaultPreemption,
            Plugin::Coscheduling
        ],
        "the multiPoint plugins first, then the ones enabled at this point (expandMultiPointPlugins)"
    );
    // The profile a scenario without a scheduler configuration stands for is exactly this one.
    assert_eq!(p.framework, Profile::default_with_coscheduling().framework);
    assert_eq!(p.permit_waiting_seconds, Some(10));
    assert_eq!(p.framework.weights(), default_weights());
    assert!(
        !Profile::default()
            .framework
            .runs(ExtensionPoint::Permit, Plugin::Coscheduling)
    );
    assert_eq!(
        error(&cfg(
            "profiles:\n- pluginConfig:\n  - name: Coscheduling\n    args: {permitWaitingTimeSeconds: -1}\n"
        )),
        r#"cfg.yaml:6:38: profiles[0].pluginConfig[0].args.permitWaitingTimeSeconds: Invalid value: -1: must be a non-negative number of seconds"#
    );
    // ValidateCoschedulingArgs: a percentage in 0..=100; podGroupBackoffSeconds and
    // podGroupRejectPercentage are defaulted (0, 10) and read.
    assert_eq!(
        error(&cfg(
            "profiles:\n- pluginConfig:\n  - name: Coscheduling\n    args: {podGroupRejectPercentage: 101}\n"
        )),
        r#"cfg.yaml:6:38: profiles[0].pluginConfig[0].args.podGroupRejectPercentage: Invalid value: 101: must be between 0 and 100"#
    );
    assert_eq!(
        (p.pod_group_backoff_seconds, p.pod_group_reject_percentage),
        (0, 10)
    );
    let args = one(&cfg(
        "profiles:\n- pluginConfig:\n  - name: Coscheduling\n    args: {podGroupBackoffSeconds: 30, podGroupRejectPercentage: 0}\n",
    ));
    assert_eq!(
        (
            args.pod_group_backoff_seconds,
            args.pod_group_reject_percentage
        ),
        (30, 0)
    );
}

#[test]
fn out_of_tree_and_removed_plugins() {
    assert_eq!(
        error(&cfg(
            "profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: CapacityScheduling\n"
        )),
        r#"cfg.yaml:7:15: profiles[0].plugins.multiPoint.enabled[0].name: plugin "CapacityScheduling" is not an in-tree plugin; schedsim simulates in-tree plugins only"#
    );
    assert_eq!(
        error(&cfg(
            "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: NodeResourcesMostAllocated\n"
        )),
        r#"cfg.yaml:7:15: profiles[0].plugins.score.enabled[0].name: plugin "NodeResourcesMostAllocated" was removed from kube-scheduler; use NodeResourcesFit with scoringStrategy.type MostAllocated"#
    );
}

#[test]
fn plugin_does_not_extend_point() {
    assert_eq!(
        error(&cfg(
            "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: NodeUnschedulable\n"
        )),
        r#"cfg.yaml:7:9: profiles[0].plugins.score.enabled[0]: plugin "NodeUnschedulable" does not extend ScorePlugin plugin"#
    );
    assert_eq!(
        error(&cfg(
            "profiles:\n- plugins:\n    filter:\n      enabled:\n      - name: NodeName\n      - name: NodeName\n"
        )),
        r#"cfg.yaml:8:9: profiles[0].plugins.filter.enabled[1]: plugin "NodeName" already registered as "FilterPlugin""#
    );
}

#[test]
fn queue_sort_and_bind_are_required() {
    assert_eq!(
        error(&cfg(
            "profiles:\n- schedulerName: x\n  plugins:\n    multiPoint:\n      disabled:\n      - name: PrioritySort\n"
        )),
        r#"cfg.yaml:6:5: profiles[0].plugins: only one queue sort plugin required for profile with scheduler name "x", but got 0"#
    );
    assert_eq!(
        error(&cfg(
            "profiles:\n- plugins:\n    bind:\n      disabled:\n      - name: '*'\n"
        )),
        r#"cfg.yaml:5:5: profiles[0].plugins: at least one bind plugin is needed for profile with scheduler name "default-scheduler""#
    );
}

#[test]
fn bad_weights() {
    assert_eq!(
        error(&cfg(
            "profiles:\n- plugins:\n    score:\n      enabled:\n      - name: NodeResourcesFit\n        weight: 3000000000\n"
        )),
        "cfg.yaml:8:17: profiles[0].plugins.score.enabled[0].weight: 3000000000 is more than this field takes (at most 2147483647)"
    );
    assert_eq!(
        error(&cfg(
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: MostAllocated\n        resources:\n        - name: nvidia.com/gpu\n          weight: 101\n"
        )),
        "cfg.yaml:11:19: profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of nvidia.com/gpu not in valid range (0, 100]"
    );
    assert_eq!(
        error(&cfg(
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: LeastAllocated\n        resources:\n        - name: cpu\n          weight: -1\n"
        )),
        "cfg.yaml:11:19: profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of cpu not in valid range (0, 100]"
    );
    assert_eq!(
        error(&cfg(
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesBalancedAllocation\n    args:\n      resources:\n      - name: cpu\n        weight: 2\n"
        )),
        "cfg.yaml:9:17: profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1"
    );
    assert_eq!(
        error(&cfg(
            "profiles:\n- pluginConfig:\n  - name: InterPodAffinity\n    args:\n      hardPodAffinityWeight: 101\n"
        )),
        "cfg.yaml:7:30: profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]"
    );
}

const RTCR: &str = "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: RequestedToCapacityRatio\n";

#[test]
fn bad_shapes() {
    assert_eq!(
        error(&cfg(&format!(
            "{RTCR}        requestedToCapacityRatio:\n          shape:\n          - {{utilization: 50, score: 1}}\n          - {{utilization: 10, score: 2}}\n"
        ))),
        "cfg.yaml:12:27: profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 10: values must be sorted in increasing order"
    );
    assert_eq!(
        error(&cfg(&format!(
            "{RTCR}        requestedToCapacityRatio:\n          shape:\n          - {{utilization: 0, score: 11}}\n"
        ))),
        "cfg.yaml:11:37: profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[0].score: Invalid value: 11: not in valid range [0, 10]"
    );
    assert_eq!(
        error(&cfg(&format!(
            "{RTCR}        requestedToCapacityRatio:\n          shape:\n          - {{utilization: 101, score: 1}}\n"
        ))),
        "cfg.yaml:11:27: profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape[0].utilization: Invalid value: 101: not in valid range [0, 100]"
    );
    assert_eq!(
        error(&cfg(&format!(
            "{RTCR}        requestedToCapacityRatio:\n          shape: []\n"
        ))),
        "cfg.yaml:10:18: profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point must be specified"
    );
    assert_eq!(
        error(&cfg(RTCR)),
        "cfg.yaml:8:9: profiles[0].pluginConfig[0].args.scoringStrategy.requestedToCapacityRatio: Required value: requestedToCapacityRatio.shape must be set for scoring strategy RequestedToCapacityRatio"
    );
    assert_eq!(
        error(&cfg(
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: MostUsed\n"
        )),
        r#"cfg.yaml:8:15: profiles[0].pluginConfig[0].args.scoringStrategy.type: Unsupported value: "MostUsed": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio""#
    );
}

#[test]
fn scheduler_names() {
    assert_eq!(
        error(&cfg(
            "profiles:\n- schedulerName: gpu-packer\n- schedulerName: gpu-packer\n"
        )),
        r#"cfg.yaml:5:18: profiles[1].schedulerName: Duplicate value: "gpu-packer" (also profiles[0].schedulerName): every profile needs a unique schedulerName"#
    );
    // Only a single profile gets the default name.
    assert_eq!(
        error(&cfg("profiles:\n- schedulerName: a\n- plugins: {}\n")),
        "cfg.yaml:5:3: profiles[1].schedulerName: Required value"
    );
    assert_eq!(
        error(&cfg("profiles:\n- schedulerName: ''\n")),
        "cfg.yaml:4:18: profiles[0].schedulerName: Required value"
    );
}

#[test]
fn api_version_and_kind() {
    assert_eq!(
        error(
            "apiVersion: kubescheduler.config.k8s.io/v1beta3\nkind: KubeSchedulerConfiguration\n"
        ),
        r#"cfg.yaml:1:13: apiVersion: apiVersion "kubescheduler.config.k8s.io/v1beta3" is not supported: kube-scheduler reads KubeSchedulerConfiguration kubescheduler.config.k8s.io/v1 (v1beta2 and v1beta3 were removed)"#
    );
    assert_eq!(
        error("apiVersion: kubescheduler.config.k8s.io/v1\nkind: Policy\n"),
        r#"cfg.yaml:2:7: kind: kind "Policy" is not a KubeSchedulerConfiguration"#
    );
}

#[test]
fn unknown_fields_with_did_you_mean() {
    assert_eq!(
        error(&cfg("profiles:\n- schedulerNme: x\n")),
        "cfg.yaml:4:17: profiles[0].schedulerNme: unknown field `schedulerNme`, expected one of `schedulerName`, `percentageOfNodesToScore`, `plugins`, `pluginConfig` (did you mean `schedulerName`?)"
    );
    assert_eq!(
        error(&cfg("percentageOfNodeToScore: 50\n")),
        "cfg.yaml:3:26: percentageOfNodeToScore: unknown field `percentageOfNodeToScore`, expected one of `apiVersion`, `kind`, `parallelism`, `leaderElection`, `clientConnection`, `enableProfiling`, `enableContentionProfiling`, `percentageOfNodesToScore`, `podInitialBackoffSeconds`, `podMaxBackoffSeconds`, `profiles`, `extenders`, `delayCacheUntilActive` (did you mean `percentageOfNodesToScore`?)"
    );
    assert_eq!(
        error(&cfg(
            "profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        typ: MostAllocated\n"
        )),
        "cfg.yaml:8:14: profiles[0].pluginConfig[0].args.scoringStrategy.typ: unknown field `typ`, expected one of `type`, `resources`, `requestedToCapacityRatio` (did you mean `type`?)"
    );
}

#[test]
fn other_validation() {
    assert_eq!(
        error(&cfg("percentageOfNodesToScore: 101\n")),
        "cfg.yaml:3:27: percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"
    );
    assert_eq!(
        error(&cfg(
            "extenders:\n- urlPrefix: http://extender:8888/\n  filterVerb: filter\n"
        )),
        "cfg.yaml:4:3: extenders: extenders are not simulated: schedsim cannot call a scheduler extender"
    );
    assert_eq!(
        error(&cfg(
            "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n  - name: NodeAffinity\n"
        )),
        r#"cfg.yaml:6:5: profiles[0].pluginConfig[1]: Duplicate value: "NodeAffinity""#
    );
    assert_eq!(
        error(&cfg(
            "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n      kind: NodeResourcesFitArgs\n"
        )),
        "cfg.yaml:7:13: profiles[0].pluginConfig[0].args.kind: args for plugin NodeAffinity were not of type NodeAffinityArgs.kubescheduler.config.k8s.io, got NodeResourcesFitArgs.kubescheduler.config.k8s.io"
    );
    assert_eq!(
        error(&cfg(
            "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultConstraints:\n      - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: ScheduleAnyway}\n"
        )),
        r#"cfg.yaml:7:7: profiles[0].pluginConfig[0].args.defaultingType: Invalid value: "System": when .defaultConstraints are not empty"#
    );
    assert_eq!(
        error(&cfg(
            "profiles:\n- pluginConfig:\n  - name: PodTopologySpread\n    args:\n      defaultingType: List\n      defaultConstraints:\n      - maxSkew: 1\n        topologyKey: zone\n        whenUnsatisfiable: ScheduleAnyway\n        labelSelector: {matchLabels: {app: x}}\n"
        )),
        "cfg.yaml:12:24: profiles[0].pluginConfig[0].args.defaultConstraints[0].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod"
    );
    assert_eq!(
        error(&cfg(
            "profiles:\n- pluginConfig:\n  - name: NodeAffinity\n    args:\n      addedAffinity:\n        requiredDuringSchedulingIgnoredDuringExecution:\n          nodeSelectorTerms:\n          - matchExpressions:\n            - {key: a, operator: Equals, values: [b]}\n"
        )),
        r#"cfg.yaml:11:34: profiles[0].pluginConfig[0].args.addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator: Invalid value: "Equals": not a valid selector operator"#
    );
}

/// The Filter plugins run in the profile's order, and a node's reason is its first failing
/// plugin: moving TaintToleration after NodeResourcesFit changes what a tainted, too-small node
/// reports.
#[test]
fn filters_run_in_the_profile_order() {
    let loaded = schedsim::load::load_files(
        &[PathBuf::from("tests/data/filter-order/scenario.yaml")],
        &schedsim::load::LoadOptions::default(),
    );
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let message = |i: usize| {
        schedsim::simulate(&loaded.scenarios[i]).pods[0]
            .message
            .clone()
    };
    assert!(
        message(0).starts_with(
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s)."
        ),
        "{}",
        message(0)
    );
    assert!(
        message(1).starts_with(
            "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu."
        ),
        "{}",
        message(1)
    );
}

/// The PreFilter plugins run in the profile's order and the first rejection is the pod's
/// reason: NodeAffinity's name-term conflict by default, Coscheduling's sibling count when a
/// profile lists Coscheduling first.
#[test]
fn pre_filters_run_in_the_profile_order() {
    let loaded = schedsim::load::load_files(
        &[PathBuf::from("tests/data/pre-filter-order/scenario.yaml")],
        &schedsim::load::LoadOptions::default(),
    );
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let message = |i: usize| {
        schedsim::simulate(&loaded.scenarios[i]).pods[0]
            .message
            .clone()
    };
    assert!(
        message(0).starts_with("0/2 nodes are available: pod affinity terms conflict."),
        "{}",
        message(0)
    );
    assert!(
        message(1).starts_with(
            "0/2 nodes are available: pre-filter pod ring-0 cannot find enough sibling pods, current pods number: 1, minMember of group: 3."
        ),
        "{}",
        message(1)
    );
}

// ---- The FGD simulator's GPU-sharing plugins ----------------------------------------------

/// `fgd-open-gpu-share.yaml`: Open-Gpu-Share filters and reserves, FGDScore alone scores with
/// weight 1000, GPUs picked by FGD.
#[test]
fn the_fgd_simulators_set_up_resolves() {
    use schedsim::sched::profile::GpuSel;
    let p = fixture("fgd-open-gpu-share.yaml").remove(0);
    assert!(p.framework.runs(FILTER, Plugin::OpenGpuShare));
    assert!(
        p.framework
            .runs(ExtensionPoint::Reserve, Plugin::OpenGpuShare)
    );
    assert_eq!(p.gpu_sel, Some(GpuSel::Fgd));
    assert_eq!(
        p.framework.weights(),
        Weights {
            gpu_share: [0, 0, 0, 0, 0, 1000],
            ..no_weights()
        }
    );
    assert_eq!(p.percentage_of_nodes_to_score, Some(100));
}

#[test]
fn gpu_sharing_plugins_need_the_args_the_reference_cannot_run_without() {
    let plugins = "profiles:\n- plugins:\n    reserve:\n      enabled: [{name: Open-Gpu-Share}]\n";
    let e = error(&cfg(plugins));
    assert!(
        e.contains(
            "profiles[0].plugins: Open-Gpu-Share needs its args in pluginConfig: gpuSelMethod"
        ),
        "{e}"
    );
    let with = |args: &str| {
        cfg(&format!(
            "{plugins}  pluginConfig:\n  - name: Open-Gpu-Share\n    args: {args}\n"
        ))
    };
    assert_eq!(
        one(&with("{gpuSelMethod: worst}")).gpu_sel,
        Some(schedsim::sched::profile::GpuSel::WorstFit)
    );
    let e = error(&with("{gpuSelMethod: DotProductScore}"));
    assert!(
        e.contains("pluginConfig[0].args.gpuSelMethod: Unsupported value: \"DotProductScore\""),
        "{e}"
    );
    let e = error(&with("{gpuSelMethod: best, normMethod: mean}"));
    assert!(
        e.contains("args.normMethod: Unsupported value: \"mean\": supported values: \"node\", \"pod\", \"max\""),
        "{e}"
    );
    // DotProductScore: its merge/max form only.
    let dot = "profiles:\n- plugins:\n    score:\n      enabled: [{name: DotProductScore, weight: 1000}]\n";
    assert!(error(&cfg(dot)).contains("DotProductScore needs its args in pluginConfig"));
    let dot_args = |args: &str| {
        cfg(&format!(
            "{dot}  pluginConfig:\n  - name: DotProductScore\n    args: {args}\n"
        ))
    };
    let e = error(&dot_args("{dimExtMethod: share, normMethod: max}"));
    assert!(
        e.contains("args.dimExtMethod: \"share\" is not simulated"),
        "{e}"
    );
    let p = one(&dot_args("{dimExtMethod: merge, normMethod: max}"));
    assert_eq!(p.framework.weights().gpu_share, [0, 1000, 0, 0, 0, 0]);
}
