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
        "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    );
    let preferred = pod("bad-preferred-term");
    assert_eq!(preferred.status, PodPhase::SchedulerError);
    assert_eq!(
        preferred.message,
        "running PreScore plugin \"NodeAffinity\": [1].matchExpressions[1].values[0]: Invalid value: \"eight\": for 'Gt', 'Lt' operators, the value must be an integer"
    );
}
