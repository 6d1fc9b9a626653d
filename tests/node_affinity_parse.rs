//! Node-affinity `Gt`/`Lt` bounds that are not integers: accepted at load as the API server
//! accepts them, simulated as kube-scheduler's parser treats them, and warned about.

use std::path::PathBuf;

use schedsim::load::{self, LoadOptions};
use schedsim::sched::PodPhase;

#[test]
fn unparsable_bounds_are_accepted_and_simulated_as_upstream() {
    let loaded = load::load_files(
        &[PathBuf::from("tests/data/gt-lt-not-integer.yaml")],
        &LoadOptions::default(),
    );
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let scenario = &loaded.scenarios[0];
    assert_eq!(scenario.warnings.len(), 3, "{:#?}", scenario.warnings);
    assert!(scenario.warnings[0].contains(
        "nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: \"abc\": for 'Gt', 'Lt' operators, the value must be an integer; kube-scheduler cannot parse this term"
    ));
    let r = schedsim::simulate(scenario);
    let pod = |name: &str| r.pods.iter().find(|p| p.name == name).unwrap();
    // The bad term matches nothing; the good one still matches.
    assert_eq!(pod("bad-and-good-terms").status, PodPhase::Scheduled);
    assert_eq!(
        pod("only-bad-term").message,
        "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. no new claims to deallocate, preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    );
    let preferred = pod("bad-preferred-term");
    assert_eq!(preferred.status, PodPhase::SchedulerError);
    assert_eq!(
        preferred.message,
        "running PreScore plugin \"NodeAffinity\": [1].matchExpressions[1].values[0]: Invalid value: \"eight\": for 'Gt', 'Lt' operators, the value must be an integer"
    );
}

/// The PreScore error comes from NodeAffinity's PreScore, which runs whenever the plugin is
/// enabled at PreScore, whatever its Score weight: disabling it at Score keeps the error,
/// disabling it at PreScore removes it.
#[test]
fn the_pre_score_error_follows_the_pre_score_list() {
    use schedsim::sched::plugins::registry::{ExtensionPoint, Plugin};
    use schedsim::sched::profile::Profile;
    let loaded = load::load_files(
        &[PathBuf::from("tests/data/gt-lt-not-integer.yaml")],
        &LoadOptions::default(),
    );
    assert!(loaded.errors.is_empty(), "{:?}", loaded.errors);
    let status_without = |point: ExtensionPoint| {
        let mut scenario = loaded.scenarios[0].clone();
        let mut profile = Profile::default();
        profile.framework.disable(point, Plugin::NodeAffinity);
        scenario.config.profiles = vec![profile];
        scenario.config.serves_every_pod = true;
        let r = schedsim::simulate(&scenario);
        r.pods
            .iter()
            .find(|p| p.name == "bad-preferred-term")
            .unwrap()
            .status
    };
    assert_eq!(
        status_without(ExtensionPoint::Score),
        PodPhase::SchedulerError
    );
    assert_eq!(
        status_without(ExtensionPoint::PreScore),
        PodPhase::Scheduled
    );
}
