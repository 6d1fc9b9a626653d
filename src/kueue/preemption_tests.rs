//! Kueue's preemption tables, ported as data: `tests/data/kueue/preemption-cases.yaml`
//! (preemption_test.go `TestPreemption`), `hierarchical-preemption-cases.yaml`
//! (preemption_hierarchical_test.go `TestHierarchicalPreemptions`, same schema) and
//! `candidates-ordering-cases.yaml` (`TestCandidatesOrdering`); each file's header documents
//! its schema. Every mismatch of
//! every case is collected, so one run lists them all.

use std::cell::Cell;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::api::{self, ClusterQueue, FlavorResource, PreemptionPolicy};
use super::preemption::{FrBits, Holder, KeyOrder, Preemption, Preemptor, Target, insert_in_order};
use super::quota::{QueueId, QuotaTree};
use super::tables::{amount, run_table};
use super::tests::AdmittedSpec;

const PREEMPTION_CASES: &str = include_str!("../../tests/data/kueue/preemption-cases.yaml");
const HIERARCHICAL_CASES: &str =
    include_str!("../../tests/data/kueue/hierarchical-preemption-cases.yaml");
const ORDERING_CASES: &str = include_str!("../../tests/data/kueue/candidates-ordering-cases.yaml");

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Shared {
    objects: Vec<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Case {
    name: String,
    #[allow(dead_code)] // documents where the case comes from
    source: String,
    queues: String,
    #[serde(default)]
    objects: Vec<Value>,
    #[serde(default)]
    admitted: Vec<AdmittedSpec>,
    incoming: Incoming,
    #[serde(rename = "targetCQ")]
    target_cq: String,
    want: Want,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Incoming {
    #[allow(dead_code)] // names the preemptor as upstream does
    name: String,
    #[serde(default)]
    priority: i32,
    #[serde(default)]
    created_at: i64,
    pod_sets: Vec<IncomingPodSet>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct IncomingPodSet {
    #[allow(dead_code)] // names the pod set as upstream does
    name: String,
    count: i64,
    requests: BTreeMap<String, String>,
    flavors: BTreeMap<String, FlavorMode>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FlavorMode {
    flavor: String,
    mode: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Want {
    preempted: BTreeMap<String, String>,
    /// Targets already evicted before the call: upstream counts them but writes no reason.
    #[serde(default)]
    ongoing: BTreeSet<String>,
}

/// The ClusterQueues of a case, sorted by name as the loader sorts them.
fn cluster_queues(values: &[Value]) -> Vec<ClusterQueue> {
    let mut queues: Vec<ClusterQueue> = (values.iter())
        .filter(|v| v["kind"] == "ClusterQueue")
        .map(|v| api::unchecked::cluster_queue(v).expect("ClusterQueue"))
        .collect();
    queues.sort_by(|a, b| a.name.cmp(&b.name));
    queues
}

fn holders(admitted: &[AdmittedSpec], queues: &[ClusterQueue], bits: &mut FrBits) -> Vec<Holder> {
    let mut holders: Vec<Holder> = (admitted.iter())
        .map(|a| {
            let a = a.admitted();
            Holder {
                mask: bits.learn(a.usage.keys()),
                key: format!("{}/{}", a.namespace, a.name),
                key_order: 0,
                queue: (queues.iter())
                    .position(|q| q.name == a.cluster_queue)
                    .unwrap_or(usize::MAX),
                priority: a.priority,
                created: a.created,
                reserved: a.reserved,
                evicted: a.evicted,
                usage: a.usage,
                fr_ids: Default::default(),
            }
        })
        .collect();
    order_keys(&mut holders);
    holders
}

/// Each holder's `key_order` among the keys of `holders`.
fn order_keys(holders: &mut [Holder]) {
    let keys = KeyOrder::new(holders.iter().map(|h| h.key.clone()));
    for h in holders {
        h.key_order = keys.of(&h.key);
    }
}

/// A case as upstream's cache and `GetTargets` see it: everything but the quota tree, which
/// [`Setup::new`] returns beside it (the search changes the tree while reading the rest).
struct Setup {
    queues: Vec<ClusterQueue>,
    ids: Vec<QueueId>,
    bits: FrBits,
    holders: Vec<Holder>,
    by_queue: Vec<Vec<usize>>,
    /// `TotalRequestsFor` of the incoming workload, and the flavor-resources in Preempt mode.
    usage: BTreeMap<FlavorResource, i64>,
    frs: BTreeSet<FlavorResource>,
    preemptor: Preemptor,
}

impl Setup {
    /// `within`: a withinClusterQueue policy to give the target queue instead of its own.
    fn new(
        shared: &Shared,
        case: &Case,
        within: Option<PreemptionPolicy>,
    ) -> Result<(Setup, QuotaTree), String> {
        let mut values: Vec<Value> = (shared.objects.iter())
            .filter(|v| case.queues == "shared" || v["kind"] != "ClusterQueue")
            .cloned()
            .collect();
        values.extend(case.objects.iter().cloned());
        let mut queues = cluster_queues(&values);
        let Some(queue) = queues.iter().position(|q| q.name == case.target_cq) else {
            return Err(format!("unknown target ClusterQueue {}", case.target_cq));
        };
        if let Some(policy) = within {
            queues[queue].preemption.within_cluster_queue = policy;
        }
        let cohorts: Vec<_> = (values.iter())
            .filter(|v| v["kind"] == "Cohort")
            .map(|v| api::unchecked::cohort(v).expect("Cohort"))
            .collect();
        let (mut tree, _) = QuotaTree::new(&queues, &cohorts);
        let ids: Vec<QueueId> = (queues.iter())
            .map(|q| tree.queue(&q.name).expect("queue"))
            .collect();
        let mut bits = FrBits::default();
        let holders = holders(&case.admitted, &queues, &mut bits);
        let mut by_queue = vec![Vec::new(); queues.len()];
        for (i, h) in holders.iter().enumerate() {
            insert_in_order(&mut by_queue[h.queue], &holders, i, h);
        }
        for h in &holders {
            h.add_usage(&mut tree, &ids);
        }
        // `TotalRequestsFor`: count × request per assigned flavor; zero requests need no flavor.
        let mut usage = BTreeMap::new();
        let mut frs = BTreeSet::new();
        for ps in &case.incoming.pod_sets {
            for (resource, q) in &ps.requests {
                let v = amount(resource, q).saturating_mul(ps.count);
                let Some(f) = ps.flavors.get(resource) else {
                    continue;
                };
                let fr = (f.flavor.clone(), resource.clone());
                if f.mode == "Preempt" {
                    frs.insert(fr.clone());
                }
                if v != 0 {
                    *usage.entry(fr).or_insert(0) += v;
                }
            }
        }
        let preemptor = Preemptor {
            queue,
            priority: case.incoming.priority,
            created: case.incoming.created_at,
        };
        let setup = Setup {
            queues,
            ids,
            bits,
            holders,
            by_queue,
            usage,
            frs,
            preemptor,
        };
        Ok((setup, tree))
    }

    fn preemption(&self) -> Preemption<'_> {
        Preemption {
            queues: &self.queues,
            ids: &self.ids,
            holders: &self.holders,
            by_queue: &self.by_queue,
            fr_bits: &self.bits,
        }
    }

    /// The victims' names.
    fn names(&self, targets: &[Target]) -> Vec<String> {
        (targets.iter())
            .map(|t| {
                self.holders[t.holder]
                    .key
                    .trim_start_matches('/')
                    .to_string()
            })
            .collect()
    }
}

fn run_case(shared: &Shared, case: &Case) -> Vec<String> {
    let (setup, mut tree) = match Setup::new(shared, case, None) {
        Ok(s) => s,
        Err(e) => return vec![e],
    };
    let before = tree.clone();
    let (usage, frs) = (&setup.usage, &setup.frs);
    let targets = (setup.preemption()).targets(&mut tree, &setup.preemptor, usage, frs);
    let (mut got, mut ongoing) = (BTreeMap::new(), BTreeSet::new());
    for (t, name) in targets.iter().zip(setup.names(&targets)) {
        if setup.holders[t.holder].evicted {
            ongoing.insert(name);
        } else {
            got.insert(name, t.reason.as_str().to_string());
        }
    }
    let mut problems = Vec::new();
    if got != case.want.preempted {
        problems.push(format!("preempted {got:?}, want {:?}", case.want.preempted));
    }
    if ongoing != case.want.ongoing {
        problems.push(format!("ongoing {ongoing:?}, want {:?}", case.want.ongoing));
    }
    if format!("{tree:?}") != format!("{before:?}") {
        problems.push("the snapshot was not restored".into());
    }
    problems
}

/// Runs every case of a table of `GetTargets` cases, at least `least` of them.
fn agrees_with_upstream(file: &str, text: &str, least: usize) {
    let (ran, failures) = run_table(file, text, |c: &Case| &c.name, run_case);
    assert!(ran >= least, "only {ran} cases ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn preemption_cases_agree_with_upstream() {
    agrees_with_upstream("preemption-cases.yaml", PREEMPTION_CASES, 30);
}

#[test]
fn hierarchical_preemption_cases_agree_with_upstream() {
    agrees_with_upstream("hierarchical-preemption-cases.yaml", HIERARCHICAL_CASES, 15);
}

/// `Preemption::hopeless` answers "no victims" without the search: it must never change an
/// answer. Every case of both tables runs as written and with the target queue's
/// withinClusterQueue set to Never (the shortcut needs it; every preemptor queue of
/// TestHierarchicalPreemptions takes its own workloads, so as written the shortcut is never
/// taken there), once with the shortcut and once with the search alone.
#[test]
fn the_hopeless_shortcut_changes_no_answer() {
    let (taken, declined) = (Cell::new(0), Cell::new(0));
    let check = |shared: &Shared, case: &Case| {
        let mut problems = Vec::new();
        for within in [None, Some(PreemptionPolicy::Never)] {
            let Ok((setup, mut tree)) = Setup::new(shared, case, within) else {
                continue; // run_case reports it
            };
            let (p, preemptor) = (setup.preemption(), &setup.preemptor);
            let (usage, frs) = (&setup.usage, &setup.frs);
            let hopeless = p.hopeless(&tree, preemptor, usage, frs);
            let with = setup.names(&p.targets(&mut tree, preemptor, usage, frs));
            let without = setup.names(&p.search(&mut tree, preemptor, usage, frs));
            taken.set(taken.get() + usize::from(hopeless));
            if with != without {
                problems.push(format!(
                    "withinClusterQueue {within:?}: hopeless {hopeless}, targets {with:?}, the search alone {without:?}"
                ));
            }
            // Its other conditions hold and there are victims: only the queue's room under
            // its nominal quota or a hierarchical advantage keeps the shortcut from these.
            let queue = &setup.queues[preemptor.queue].preemption;
            if !hopeless
                && queue.within_cluster_queue == PreemptionPolicy::Never
                && queue.borrow_within_cohort == PreemptionPolicy::Never
                && !without.is_empty()
            {
                declined.set(declined.get() + 1);
            }
        }
        problems
    };
    let mut failures = Vec::new();
    for (file, text) in [
        ("preemption-cases.yaml", PREEMPTION_CASES),
        ("hierarchical-preemption-cases.yaml", HIERARCHICAL_CASES),
    ] {
        failures.extend(run_table(file, text, |c: &Case| &c.name, check).1);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The check means something only if the shortcut is both taken and declined.
    assert!(
        taken.get() >= 5,
        "the shortcut was taken {} times",
        taken.get()
    );
    assert!(
        declined.get() >= 5,
        "the shortcut was declined {} times",
        declined.get()
    );
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct OrderingCase {
    name: String,
    #[allow(dead_code)] // documents where the case comes from
    source: String,
    #[serde(rename = "preemptorCQ")]
    preemptor_cq: String,
    workloads: Vec<OrderingWorkload>,
    want: Vec<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct OrderingWorkload {
    name: String,
    cluster_queue: String,
    #[serde(default)]
    priority: i32,
    #[serde(default)]
    admitted_at: i64,
    #[serde(default)]
    evicted: bool,
}

/// The candidates of a preemptor whose queue takes any workload of its own and of its cohort:
/// the order `targets` tries them in is `CandidatesOrdering`.
#[test]
fn candidates_ordering_agrees_with_upstream() {
    let docs = crate::yaml::parse_documents(
        ORDERING_CASES.to_string(),
        Path::new("candidates-ordering-cases.yaml"),
    )
    .expect("case file parses");
    let (mut failures, mut ran) = (Vec::new(), 0);
    for doc in docs.iter().filter(|d| !d.value.is_null()) {
        let case: OrderingCase = serde_json::from_value(doc.value.clone())
            .unwrap_or_else(|e| panic!("case shape: {e}: {}", doc.value["name"]));
        ran += 1;
        let mut names: Vec<String> = vec![case.preemptor_cq.clone()];
        names.extend(case.workloads.iter().map(|w| w.cluster_queue.clone()));
        names.sort();
        names.dedup();
        let queues: Vec<ClusterQueue> = (names.iter())
            .map(|n| ClusterQueue {
                name: n.clone(),
                ..ClusterQueue::default()
            })
            .collect();
        let queue_of = |n: &str| queues.iter().position(|q| q.name == n).expect("queue");
        let mut holders: Vec<Holder> = (case.workloads.iter())
            .map(|w| Holder {
                key: w.name.clone(),
                key_order: 0,
                queue: queue_of(&w.cluster_queue),
                priority: w.priority,
                created: 0,
                reserved: w.admitted_at,
                evicted: w.evicted,
                mask: 0,
                usage: BTreeMap::new(),
                fr_ids: Default::default(),
            })
            .collect();
        order_keys(&mut holders);
        let mut order: Vec<usize> = (0..holders.len()).collect();
        let preemption = Preemption {
            queues: &queues,
            ids: &[],
            holders: &holders,
            by_queue: &[],
            fr_bits: &FrBits::default(),
        };
        let preemptor = queue_of(&case.preemptor_cq);
        order.sort_by(|&a, &b| preemption.order(preemptor, a, b));
        let got: Vec<String> = order.iter().map(|&i| holders[i].key.clone()).collect();
        if got != case.want {
            failures.push(format!(
                "{}: order {got:?}, want {:?}",
                case.name, case.want
            ));
        }
    }
    assert!(ran >= 5, "only {ran} cases ran");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
