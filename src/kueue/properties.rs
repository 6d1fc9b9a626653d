//! Properties of admission on random ClusterQueues, cohorts and workloads (seeded, so every
//! run checks the same cases):
//!
//! - admission never exceeds what the quota allows: per ClusterQueue, usage ≤ nominal +
//!   borrowingLimit; per cohort, the members' usage ≤ their nominal quotas together;
//! - raising a nominal quota never un-admits a workload admitted alone (one workload, one
//!   pass). With several workloads it can: a head that did not fit may fit after the raise
//!   and take the quota a later workload had (quota 10: w1 asks 12, NoFit, w2 asks 8, fits;
//!   quota 12: w1 fits, w2 does not) — so the property is stated for one workload;
//! - with the default fungibility, adding a toleration to a pod set never un-admits it;
//! - SchedulingEquivalenceHashing changes no admission in ClusterQueues without a cohort.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Taint, Toleration};
use rand::rngs::ChaCha8Rng;
use rand::{RngExt, SeedableRng};

use super::admission::{Objects, Timeline, Workload, admit};
use super::api::{ClusterQueue, ResourceFlavor, ResourceGroup, ResourceQuota};
use super::assigner::PodSet;
use crate::features::FeatureGates;

const GPU: &str = "nvidia.com/gpu";
const FLAVORS: [&str; 2] = ["a100", "h100"];

fn flavors() -> BTreeMap<String, ResourceFlavor> {
    let taint = Taint {
        key: "spot".into(),
        value: Some("true".into()),
        effect: "NoSchedule".into(),
        time_added: None,
    };
    FLAVORS
        .iter()
        .map(|f| {
            let flavor = ResourceFlavor {
                name: f.to_string(),
                node_taints: if *f == "a100" {
                    vec![taint.clone()]
                } else {
                    vec![]
                },
                ..ResourceFlavor::default()
            };
            (f.to_string(), flavor)
        })
        .collect()
}

fn queue(name: &str, cohort: Option<&str>, rng: &mut ChaCha8Rng) -> ClusterQueue {
    let mut quotas = BTreeMap::new();
    for f in FLAVORS {
        let borrowing_limit =
            (cohort.is_some() && rng.random_range(0..2) == 0).then(|| rng.random_range(0..16));
        quotas.insert(
            (f.to_string(), GPU.to_string()),
            ResourceQuota {
                nominal: rng.random_range(0..32),
                borrowing_limit,
                lending_limit: None,
            },
        );
    }
    ClusterQueue {
        name: name.into(),
        cohort: cohort.map(str::to_string),
        resource_groups: [ResourceGroup {
            covered_resources: vec![GPU.into()],
            flavors: FLAVORS.iter().map(|f| f.to_string()).collect(),
        }]
        .into(),
        quotas,
        namespace_selector: Some(Default::default()),
        ..ClusterQueue::default()
    }
}

fn workload(i: usize, queue: &str, rng: &mut ChaCha8Rng) -> Workload {
    let tolerate = rng.random_range(0..2) == 0;
    Workload {
        namespace: "ns".into(),
        name: format!("w{i}"),
        queue_name: queue.into(),
        priority: rng.random_range(0..3),
        created: 0,
        owned_by_pod: false,
        pod_sets: vec![PodSet {
            name: "main".into(),
            count: rng.random_range(1..4),
            requests: BTreeMap::from([(GPU.to_string(), rng.random_range(1..9))]).into(),
            tolerations: if tolerate {
                vec![spot_toleration()]
            } else {
                vec![]
            },
            ..PodSet::default()
        }],
        blocked: None,
    }
}

fn spot_toleration() -> Toleration {
    Toleration {
        key: Some("spot".into()),
        operator: Some("Exists".into()),
        ..Toleration::default()
    }
}

fn objects(queues: Vec<ClusterQueue>) -> Objects {
    let local_queues = (queues.iter())
        .map(|q| (("ns".to_string(), q.name.clone()), q.name.clone()))
        .collect();
    Objects {
        flavors: flavors(),
        cluster_queues: queues,
        local_queues,
        ..Objects::default()
    }
}

/// A timeline of `steps` steps over `n` workloads: one in three arrives in a step, and two
/// (not necessarily holding quota) finish in each.
fn random_timeline(n: usize, steps: usize, rng: &mut ChaCha8Rng) -> Timeline {
    Timeline {
        arrive: (0..n)
            .map(|_| (rng.random_range(0..3) == 0).then(|| rng.random_range(0..steps)))
            .collect(),
        finish: (0..steps)
            .map(|_| (0..2).map(|_| rng.random_range(0..n)).collect())
            .collect(),
    }
}

fn admitted_alone(objects: &Objects, w: &Workload) -> bool {
    let a = admit(
        objects,
        std::slice::from_ref(w),
        &BTreeMap::new(),
        &FeatureGates::default(),
    );
    a.decisions[0].admitted.is_some()
}

#[test]
fn admission_never_exceeds_nominal_plus_borrowing() {
    let mut rng = ChaCha8Rng::seed_from_u64(14);
    for case in 0..300 {
        let queues: Vec<ClusterQueue> = (0..3)
            .map(|q| queue(&format!("cq{q}"), (q < 2).then_some("cohort"), &mut rng))
            .collect();
        let objects = objects(queues.clone());
        let workloads: Vec<Workload> = (0..12)
            .map(|i| workload(i, &format!("cq{}", rng.random_range(0..3)), &mut rng))
            .collect();
        let a = admit(
            &objects,
            &workloads,
            &BTreeMap::new(),
            &FeatureGates::default(),
        );
        let mut cohort_usage: BTreeMap<String, (i64, i64)> = BTreeMap::new();
        for (q, usage) in queues.iter().zip(&a.queues) {
            for u in &usage.resources {
                let limit = u.quota.borrowing_limit;
                let most = match (&q.cohort, limit) {
                    (None, _) => u.quota.nominal,
                    (Some(_), Some(l)) => u.quota.nominal + l,
                    (Some(_), None) => i64::MAX,
                };
                assert!(
                    u.usage <= most,
                    "case {case}: {} {}/{} uses {} > {most}",
                    q.name,
                    u.flavor,
                    u.resource,
                    u.usage
                );
                if q.cohort.is_some() {
                    let e = cohort_usage.entry(u.flavor.clone()).or_default();
                    e.0 += u.usage;
                    e.1 += u.quota.nominal;
                }
            }
        }
        for (flavor, (used, nominal)) in cohort_usage {
            assert!(
                used <= nominal,
                "case {case}: cohort uses {used} > {nominal} of {flavor}"
            );
        }
        // The admitted workloads' usage is exactly what the queues report.
        let total: i64 = (a.decisions.iter())
            .filter_map(|d| d.admitted.as_ref())
            .flat_map(|(_, asg)| asg.usage().map(|(_, v)| v))
            .sum();
        let reported: i64 = (a.queues.iter())
            .flat_map(|q| q.resources.iter().map(|u| u.usage))
            .sum();
        assert_eq!(total, reported, "case {case}");
    }
}

#[test]
fn raising_a_nominal_quota_never_unadmits_a_workload_alone() {
    let mut rng = ChaCha8Rng::seed_from_u64(1414);
    for case in 0..500 {
        let queues = vec![
            queue("cq0", Some("cohort"), &mut rng),
            queue("cq1", Some("cohort"), &mut rng),
        ];
        let w = workload(0, "cq0", &mut rng);
        let before = admitted_alone(&objects(queues.clone()), &w);
        let mut raised = queues;
        let flavor = FLAVORS[rng.random_range(0..2)];
        let q = rng.random_range(0..2);
        if let Some(quota) = raised[q]
            .quotas
            .get_mut(&(flavor.to_string(), GPU.to_string()))
        {
            quota.nominal += rng.random_range(1..16);
        }
        let after = admitted_alone(&objects(raised), &w);
        assert!(
            !before || after,
            "case {case}: raising {flavor} of cq{q} un-admitted {w:?}"
        );
    }
}

#[test]
fn adding_a_toleration_never_unadmits_a_workload_alone() {
    let mut rng = ChaCha8Rng::seed_from_u64(141414);
    for case in 0..500 {
        let objects = objects(vec![queue("cq0", None, &mut rng)]);
        let mut w = workload(0, "cq0", &mut rng);
        w.pod_sets[0].tolerations.clear();
        let before = admitted_alone(&objects, &w);
        w.pod_sets[0].tolerations.push(spot_toleration());
        let after = admitted_alone(&objects, &w);
        assert!(
            !before || after,
            "case {case}: a toleration un-admitted {w:?}"
        );
    }
}

/// With LowerPriority policies, every victim has a lower priority than its preemptor, the
/// reason is InClusterQueue exactly for victims of the preemptor's own queue, a running
/// workload is evicted at most once, and admission never pushes a queue past nominal +
/// borrowing.
#[test]
fn preemption_takes_only_lower_priorities_and_names_its_reason() {
    use super::admission::{Admitted, Victim};
    use super::api::PreemptionPolicy;
    use super::preemption::Reason;
    let mut rng = ChaCha8Rng::seed_from_u64(1515);
    let mut evictions = 0;
    for case in 0..300 {
        let mut queues: Vec<ClusterQueue> = (0..3)
            .map(|q| queue(&format!("cq{q}"), Some("cohort"), &mut rng))
            .collect();
        for q in &mut queues {
            q.preemption.within_cluster_queue = PreemptionPolicy::LowerPriority;
            q.preemption.reclaim_within_cohort = PreemptionPolicy::LowerPriority;
        }
        let mut objects = objects(queues.clone());
        // Running workloads: up to each queue's nominal quota, one in three borrowing more.
        for (i, q) in queues.iter().enumerate() {
            for n in 0..rng.random_range(0..4) {
                let flavor = FLAVORS[rng.random_range(0..2)];
                objects.admitted.push(Admitted {
                    namespace: "ns".into(),
                    name: format!("run-{i}-{n}"),
                    cluster_queue: q.name.clone(),
                    priority: rng.random_range(0..3),
                    reserved: n,
                    usage: [(
                        (flavor.to_string(), GPU.to_string()),
                        rng.random_range(1..12),
                    )]
                    .into(),
                    ..Admitted::default()
                });
            }
        }
        let workloads: Vec<Workload> = (0..6)
            .map(|i| workload(i, &format!("cq{}", rng.random_range(0..3)), &mut rng))
            .collect();
        let a = admit(
            &objects,
            &workloads,
            &BTreeMap::new(),
            &FeatureGates::default(),
        );
        let mut victims = std::collections::BTreeSet::new();
        for e in &a.evictions {
            evictions += 1;
            // A running workload, once evicted, never holds quota again.
            if matches!(e.victim, Victim::Admitted(_)) {
                assert!(victims.insert(e.victim), "case {case}: {e:?} evicted twice");
            }
            let (priority, queue) = match e.victim {
                Victim::Admitted(i) => (
                    objects.admitted[i].priority,
                    objects.admitted[i].cluster_queue.clone(),
                ),
                Victim::Queued(w) => (
                    workloads[w].priority,
                    a.decisions[w].cluster_queue.clone().unwrap(),
                ),
            };
            assert!(
                priority < workloads[e.by].priority,
                "case {case}: {e:?} took priority {priority}"
            );
            let own = a.decisions[e.by].cluster_queue.as_deref() == Some(queue.as_str());
            assert_eq!(
                own,
                e.reason == Reason::InClusterQueue,
                "case {case}: {e:?}"
            );
        }
        for (q, usage) in queues.iter().zip(&a.queues) {
            for u in &usage.resources {
                if let Some(l) = u.quota.borrowing_limit {
                    // Running workloads may start past the limit; admission never adds to that.
                    let start: i64 = (objects.admitted.iter())
                        .filter(|w| w.cluster_queue == q.name)
                        .filter_map(|w| w.usage.get(&(u.flavor.clone(), u.resource.clone())))
                        .sum();
                    assert!(
                        u.usage <= (u.quota.nominal + l).max(start),
                        "case {case}: {} {} uses {}",
                        q.name,
                        u.flavor,
                        u.usage
                    );
                }
            }
        }
    }
    assert!(
        evictions > 20,
        "only {evictions} evictions: the cases do not exercise preemption"
    );
}

/// A replay's Kueue that remembers nominations (across cycles, per workload while the quota
/// it read is unchanged, per tree for workloads alike, the oracle's answers) decides exactly
/// as one that computes every nomination: the same admissions and evictions in the same
/// order, the same condition messages, at every instant of random arrivals, finishes and quota
/// changes; in half the cases with waitForPodsReady on (a 10-s timeout, pods that get ready
/// or not at random, some with blockAdmission or a requeue limit), so cycles also wait and go
/// on, and workloads are evicted, held in backoff and deactivated.
#[test]
fn remembered_nominations_decide_as_computed_ones() {
    use super::admission::live::{Change, Kueue};
    use super::api::PreemptionPolicy;
    const POLICIES: [PreemptionPolicy; 4] = [
        PreemptionPolicy::Never,
        PreemptionPolicy::LowerPriority,
        PreemptionPolicy::LowerOrNewerEqualPriority,
        PreemptionPolicy::Any,
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(2611);
    let (mut admissions, mut evictions, mut reused) = (0, 0, 0);
    // PodsReady timeouts, and readiness that let a waiting cycle go on.
    let (mut timeouts, mut unblocked) = (0, 0);
    for case in 0..120 {
        let mut queues: Vec<ClusterQueue> = (0..4)
            .map(|q| {
                let cohort = (q < 3).then_some("cohort");
                queue(&format!("cq{q}"), cohort, &mut rng)
            })
            .collect();
        for q in &mut queues {
            q.preemption.within_cluster_queue = POLICIES[rng.random_range(0..3)];
            q.preemption.reclaim_within_cohort = POLICIES[rng.random_range(0..4)];
            if rng.random_range(0..3) == 0 {
                q.preemption.borrow_within_cohort = PreemptionPolicy::LowerPriority;
                q.preemption.borrow_within_cohort_max_priority = Some(1);
            }
        }
        let mut objects = objects(queues);
        // Two timeline steps change every queue's quotas (at 20s and 40s).
        for step in 0..2 {
            let cluster_queues = (0..4)
                .map(|q| {
                    let mut new = queue(&format!("cq{q}"), (q < 3).then_some("cohort"), &mut rng);
                    new.preemption = objects.cluster_queues[q].preemption;
                    new
                })
                .collect();
            objects.updates.push(super::admission::QueueUpdate {
                step,
                cluster_queues,
                ..Default::default()
            });
        }
        if case % 2 == 1 {
            objects.pods_ready = Some(crate::kueue::config::WaitForPodsReady {
                timeout_ns: 10_000_000_000,
                recovery_timeout_ns: Some(5_000_000_000),
                block_admission: rng.random_range(0..2) == 0,
                timestamp: match rng.random_range(0..2) {
                    0 => crate::kueue::config::RequeuingTimestamp::Eviction,
                    _ => crate::kueue::config::RequeuingTimestamp::Creation,
                },
                backoff_limit_count: (rng.random_range(0..2) == 0).then_some(2),
                backoff_base_seconds: 3,
                backoff_max_seconds: 20,
            });
        }
        let (namespaces, gates) = (BTreeMap::new(), FeatureGates::default());
        let mut remembering = Kueue::new(&objects, &namespaces, &gates);
        let mut computing = Kueue::new(&objects, &namespaces, &gates);
        computing.remember_nothing();
        let mut holding: Vec<usize> = Vec::new();
        let mut next = 0;
        for second in 0..60u64 {
            let now = second * 1000;
            for _ in 0..rng.random_range(0..3) {
                let mut w = workload(next, &format!("cq{}", rng.random_range(0..4)), &mut rng);
                w.created = second as i64;
                next += 1;
                let (a, b) = (remembering.arrive(w.clone()), computing.arrive(w));
                assert_eq!(a, b, "case {case} at {second}s");
            }
            if !holding.is_empty() && rng.random_range(0..2) == 0 {
                let w = holding.swap_remove(rng.random_range(0..holding.len()));
                remembering.gone(w);
                computing.gone(w);
            }
            if second % 20 == 0 && second > 0 {
                let step = (second / 20 - 1) as usize;
                assert_eq!(
                    remembering.update(step, now),
                    computing.update(step, now),
                    "case {case}"
                );
            }
            // The jobs of admitted workloads get ready, or lose a pod, at random.
            for &w in &holding {
                if rng.random_range(0..4) == 0 {
                    let ready = rng.random_range(0..3) > 0;
                    let (a, b) = (
                        remembering.set_pods_ready(w, ready, now),
                        computing.set_pods_ready(w, ready, now),
                    );
                    assert_eq!(a, b, "case {case} at {second}s");
                    unblocked += usize::from(a);
                }
            }
            let due = (remembering.due(now), computing.due(now));
            assert_eq!(due.0, due.1, "case {case} at {second}s");
            let (a, b) = (remembering.settle(now), computing.settle(now));
            assert_eq!(
                format!("{a:?}"),
                format!("{b:?}"),
                "case {case} at {second}s"
            );
            assert_eq!(remembering.messages(), computing.messages(), "case {case}");
            for change in a {
                match change {
                    Change::Admitted { workload, .. } => {
                        admissions += 1;
                        holding.push(workload);
                    }
                    Change::Evicted { workload, .. } => {
                        evictions += 1;
                        holding.retain(|&w| w != workload);
                    }
                    Change::PodsReadyTimeout { workload, .. }
                    | Change::Deactivated { workload } => {
                        timeouts += 1;
                        holding.retain(|&w| w != workload);
                    }
                    Change::EvictedAdmitted { .. } => {}
                }
            }
            reused += usize::from(next > 0 && remembering.messages().len() < next);
        }
    }
    assert!(admissions > 500, "only {admissions} admissions");
    assert!(
        evictions > 50,
        "only {evictions} evictions: preemption is not exercised"
    );
    assert!(reused > 0, "no workload's place was reused");
    assert!(timeouts > 20, "only {timeouts} PodsReady timeouts");
    assert!(unblocked > 5, "only {unblocked} waiting cycles went on");
}

/// A snapshot's admission over a timeline (finishes, late arrivals, quota changes) decides
/// the same with nominations remembered as with every one computed: decisions, admission
/// order and evictions.
#[test]
fn a_snapshot_admission_remembers_exactly() {
    use super::admission::{QueueUpdate, admit_over, admit_over_computing};
    use super::api::PreemptionPolicy;
    let mut rng = ChaCha8Rng::seed_from_u64(2711);
    let mut admitted = 0;
    for case in 0..150 {
        let mut queues: Vec<ClusterQueue> = (0..3)
            .map(|q| queue(&format!("cq{q}"), Some("cohort"), &mut rng))
            .collect();
        for q in &mut queues {
            q.preemption.within_cluster_queue = PreemptionPolicy::LowerPriority;
            q.preemption.reclaim_within_cohort = PreemptionPolicy::Any;
        }
        let mut objects = objects(queues);
        let steps = 4;
        let cluster_queues = (0..3)
            .map(|q| {
                let mut new = queue(&format!("cq{q}"), Some("cohort"), &mut rng);
                new.preemption = objects.cluster_queues[q].preemption;
                new
            })
            .collect();
        objects.updates.push(QueueUpdate {
            step: rng.random_range(0..steps),
            cluster_queues,
            ..Default::default()
        });
        let workloads: Vec<Workload> = (0..12)
            .map(|i| workload(i, &format!("cq{}", rng.random_range(0..3)), &mut rng))
            .collect();
        let timeline = random_timeline(workloads.len(), steps, &mut rng);
        let (namespaces, gates) = (BTreeMap::new(), FeatureGates::default());
        let a = admit_over(&objects, &workloads, &timeline, &namespaces, &gates);
        let b = admit_over_computing(&objects, &workloads, &timeline, &namespaces, &gates);
        assert_eq!(
            format!("{:?}", a.decisions),
            format!("{:?}", b.decisions),
            "case {case}"
        );
        assert_eq!(a.order, b.order, "case {case}");
        assert_eq!(
            format!("{:?}", a.evictions),
            format!("{:?}", b.evictions),
            "case {case}"
        );
        admitted += a.decisions.iter().filter(|d| d.admitted.is_some()).count();
    }
    assert!(admitted > 300, "only {admitted} admitted");
}

/// SchedulingEquivalenceHashing changes no admission in ClusterQueues without a cohort
/// (with or without preemption within the queue, workloads arriving and finishing over a
/// timeline): the same workloads are admitted, in the same order in each queue (the queues'
/// cycles go at their own pace), with the same flavors and preemptions, and the others wait
/// where they waited. Until its next requeue, a workload equivalent to one that did not fit
/// would not fit either when its turn came: usage only grows in between, and the workloads it
/// could preempt that the first could not were admitted since into the room the first could
/// not use; a queue without a cohort shares nothing with another. A StrictFIFO queue never
/// sets one aside: its workloads read the same messages too. A cohort breaks it (two of these
/// queues in one admit another set within a few hundred cases): its queues share quota, and a
/// queue that reaches its next heads sooner takes what another's would have.
#[test]
fn equivalence_hashing_changes_no_admission_in_queues_without_a_cohort() {
    use super::admission::admit_over;
    use super::api::{PreemptionPolicy, QueueingStrategy};
    let mut rng = ChaCha8Rng::seed_from_u64(2626);
    let mut set_aside = 0;
    let mut evictions = 0;
    for case in 0..500 {
        let queues: Vec<ClusterQueue> = (0..3)
            .map(|q| {
                let mut queue = queue(&format!("cq{q}"), None, &mut rng);
                if rng.random_range(0..3) == 0 {
                    queue.queueing_strategy = QueueingStrategy::StrictFIFO;
                }
                queue.preemption.within_cluster_queue = [
                    PreemptionPolicy::Never,
                    PreemptionPolicy::LowerPriority,
                    PreemptionPolicy::LowerOrNewerEqualPriority,
                ][rng.random_range(0..3)];
                queue
            })
            .collect();
        let strict: Vec<bool> = (queues.iter())
            .map(|q| q.queueing_strategy == QueueingStrategy::StrictFIFO)
            .collect();
        let objects = objects(queues);
        // Few shapes, so that many workloads are equivalent.
        let workloads: Vec<Workload> = (0..16)
            .map(|i| {
                let mut w = workload(i, &format!("cq{}", rng.random_range(0..3)), &mut rng);
                w.priority = rng.random_range(0..3);
                w.pod_sets[0].count = rng.random_range(1..3);
                w.pod_sets[0].requests =
                    BTreeMap::from([(GPU.to_string(), 2 << rng.random_range(0..3))]).into();
                w
            })
            .collect();
        let timeline = random_timeline(workloads.len(), 3, &mut rng);
        let off = FeatureGates {
            scheduling_equivalence_hashing: false,
            ..FeatureGates::default()
        };
        let run = |gates: &FeatureGates| {
            admit_over(&objects, &workloads, &timeline, &BTreeMap::new(), gates)
        };
        let (on, off) = (run(&FeatureGates::default()), run(&off));
        evictions += on.evictions.len();
        // Per ClusterQueue: each queue's cycles go at their own pace.
        let per_queue = |order: &[usize]| {
            let mut by_queue: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
            for &w in order {
                by_queue
                    .entry(&workloads[w].queue_name)
                    .or_default()
                    .push(w);
            }
            by_queue
        };
        assert_eq!(per_queue(&on.order), per_queue(&off.order), "case {case}");
        for (w, (a, b)) in on.decisions.iter().zip(&off.decisions).enumerate() {
            set_aside += usize::from(a.bypassed);
            let flavors =
                |d: &super::admission::Decision| d.admitted.as_ref().map(|(_, a)| a.usage_map());
            assert_eq!(flavors(a), flavors(b), "case {case}: w{w}");
            assert_eq!(a.waiting, b.waiting, "case {case}: w{w}");
            let q: usize = workloads[w].queue_name[2..].parse().unwrap();
            if strict[q] {
                assert_eq!(a.message, b.message, "case {case}: w{w}");
                assert!(!a.bypassed, "case {case}: w{w}");
            }
        }
    }
    assert!(set_aside > 40, "only {set_aside} workloads set aside");
    assert!(evictions > 40, "only {evictions} evictions");
}
