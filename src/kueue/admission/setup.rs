//! How the admission state is built and fed: the already-admitted workloads holding their
//! quota, the inactive ClusterQueues, and a workload's queueing decision (its ClusterQueue's
//! heap, or why it is never queued), shared by a snapshot's admission and a replay's.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashSet};

use super::{
    Admission, Decision, LiveClock, Objects, QueueKey, QueueUsage, QuotaUsage, Released, State,
    Victim, Waiting, Workload, stop,
};
use crate::features::FeatureGates;
use crate::kueue::api::StopPolicy;
use crate::kueue::preemption::{FrBits, Holder, KeyOrder};
use crate::kueue::quota::{QueueId, QuotaTree};
use crate::sched::plugins::inter_pod_affinity::NamespaceLabels;

impl<'a> State<'a> {
    /// The state before any cycle: the already-admitted workloads hold their quota (those a
    /// stopped queue drains excepted), nothing is queued yet. `live`: a replay's Kueue
    /// ([`live`]), whose workloads come and go.
    pub(super) fn new(
        objects: &'a Objects,
        workloads: Cow<'a, [Workload]>,
        namespaces: &'a NamespaceLabels,
        gates: &'a FeatureGates,
        live: bool,
    ) -> Self {
        let queues = &objects.cluster_queues;
        let (tree, warnings) = QuotaTree::new(queues, &objects.cohorts);
        let ids: Vec<QueueId> = queues
            .iter()
            .map(|q| tree.queue(&q.name).unwrap())
            .collect();
        let admitted_keys =
            (objects.admitted.iter()).map(|a| format!("{}/{}", a.namespace, a.name));
        let keys = match live {
            true => KeyOrder::new(admitted_keys),
            false => KeyOrder::new(
                admitted_keys.chain(
                    workloads
                        .iter()
                        .map(|w| format!("{}/{}", w.namespace, w.name)),
                ),
            ),
        };
        let mut st = State {
            objects,
            gates,
            namespaces,
            by_name: (queues.iter().enumerate())
                .map(|(i, q)| (q.name.clone(), i))
                .collect(),
            flavors: Cow::Borrowed(&objects.flavors),
            local_queues: Cow::Borrowed(&objects.local_queues),
            stopped_local_queues: Cow::Borrowed(&objects.stopped_local_queues),
            orphans: BTreeSet::new(),
            ids,
            tree,
            holders: Vec::new(),
            keys,
            fr_bits: FrBits::default(),
            by_queue: vec![Vec::new(); queues.len()],
            holder_of: vec![None; workloads.len()],
            holder_is: Vec::new(),
            heaps: vec![Default::default(); queues.len()],
            parked: vec![super::heap::Keys::default(); queues.len()],
            sticky: vec![None; queues.len()],
            released: Released::default(),
            phase: None,
            created: workloads.iter().map(|w| w.created).collect(),
            ordered: workloads.iter().map(|w| w.created).collect(),
            blocked: None,
            order: (0..workloads.len() as u64).collect(),
            start: objects.now,
            repeats: BTreeMap::new(),
            livelock: None,
            shapes: Default::default(),
            pod_sets_id: vec![0; workloads.len()],
            set_aside: vec![HashSet::default(); queues.len()],
            bypassing: vec![false; queues.len()],
            spare_snapshot: None,
            spare: Default::default(),
            cluster_queues: Cow::Borrowed(&objects.cluster_queues),
            cohorts: Cow::Borrowed(&objects.cohorts),
            assigned: BTreeMap::new(),
            last: (0..workloads.len()).map(|_| None).collect(),
            refused: (0..workloads.len()).map(|_| None).collect(),
            fr_changed: Vec::new(),
            changes: 0,
            remember: true,
            inactive: Vec::new(),
            live: live.then(LiveClock::default),
            out: Admission {
                decisions: Vec::with_capacity(workloads.len()),
                warnings: (objects.warnings.iter().cloned()).chain(warnings).collect(),
                ..Admission::default()
            },
            workloads,
        };
        for w in 0..st.workloads.len() {
            st.number_pod_sets(w);
        }
        st.out.drained = stop::drains(objects);
        for (i, a) in objects.admitted.iter().enumerate() {
            if st
                .out
                .drained
                .iter()
                .any(|d| d.victim == Victim::Admitted(i))
            {
                continue;
            }
            match st.queue_index(&a.cluster_queue) {
                Some(q) => st.hold(
                    Victim::Admitted(i),
                    Holder {
                        key: format!("{}/{}", a.namespace, a.name),
                        key_order: 0,
                        queue: q,
                        priority: a.priority,
                        created: a.created,
                        reserved: a.reserved,
                        evicted: a.evicted,
                        mask: 0,
                        usage: a.usage.clone(),
                        fr_ids: Default::default(),
                    },
                ),
                None => st.out.warnings.push(format!(
                    "workload {}/{} holds quota in unknown ClusterQueue {:?}",
                    a.namespace, a.name, a.cluster_queue
                )),
            }
        }
        st.inactive = st.inactive_queues();
        st
    }

    /// Per ClusterQueue, whether it is inactive: a flavor it names does not exist, or it is
    /// stopped. Each missing flavor is said in a warning.
    pub(super) fn inactive_queues(&mut self) -> Vec<bool> {
        let mut warnings = Vec::new();
        let inactive = (self.cluster_queues.iter())
            .map(|q| {
                let missing: BTreeSet<&String> = (q.resource_groups.iter())
                    .flat_map(|g| &g.flavors)
                    .filter(|f| !self.flavors.contains_key(*f))
                    .collect();
                if !missing.is_empty() {
                    warnings.push(format!(
                        "ClusterQueue {:?} is inactive: ResourceFlavor {} not found",
                        q.name,
                        missing
                            .iter()
                            .map(|f| format!("{f:?}"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
                !missing.is_empty() || q.stop_policy != StopPolicy::None
            })
            .collect();
        for w in warnings {
            if !self.out.warnings.contains(&w) {
                self.out.warnings.push(w);
            }
        }
        inactive
    }

    /// The index of a ClusterQueue by name (they are sorted by name).
    pub(super) fn queue_index(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// Decides where workload `w` (`order`: its place among equals) waits: its
    /// ClusterQueue's heap when `present`, or nowhere yet (it arrives later, or is never
    /// queued: no Workload object, a stopped or missing queue, whose decision says why; one
    /// whose queue is missing or its LocalQueue stopped is among the
    /// [orphans](State::orphans), which a timeline step may give a queue).
    /// Returns its ClusterQueue.
    pub(super) fn enqueue(&mut self, w: usize, order: u64, present: bool) -> Option<usize> {
        let workload = &self.workloads[w];
        let lq = (workload.namespace.clone(), workload.queue_name.clone());
        let cq = self.local_queues.get(&lq);
        let mut orphan = false;
        let decision = |message: String| Decision {
            cluster_queue: cq.cloned(),
            reason: "Inadmissible",
            message: message.into(),
            admitted: None,
            last_admitted: None,
            waiting: Waiting::Nowhere,
            preempted: Vec::new(),
            evicted: None,
            finished: None,
            bypassed: false,
        };
        let (decision, queue) = if let Some(why) = &workload.blocked {
            let d = Decision {
                reason: "WorkloadPriorityClassNotFound",
                ..decision(why.clone())
            };
            (d, None)
        } else if stop::local_queue(&self.stopped_local_queues, &lq) != StopPolicy::None {
            orphan = true;
            (
                decision(stop::local_queue_message(&workload.queue_name)),
                None,
            )
        } else {
            match cq.map(|cq| (cq, self.queue_index(cq))) {
                None => {
                    orphan = true;
                    let message = format!("LocalQueue {} doesn't exist", workload.queue_name);
                    (decision(message), None)
                }
                Some((cq, None)) => {
                    orphan = true;
                    (decision(format!("ClusterQueue {cq} doesn't exist")), None)
                }
                Some((cq, Some(q))) => {
                    let waiting = match present {
                        true => Waiting::Heap,
                        false => Waiting::Nowhere,
                    };
                    // A stopped ClusterQueue's workloads wait in its heap, never popped.
                    let d = match self.cluster_queues[q].stop_policy {
                        StopPolicy::None => Decision {
                            reason: "Pending",
                            waiting,
                            ..decision(String::new())
                        },
                        _ => Decision {
                            waiting,
                            ..decision(format!("ClusterQueue {cq} is inactive"))
                        },
                    };
                    (d, Some(q))
                }
            }
        };
        match self.out.decisions.get_mut(w) {
            Some(d) => *d = decision,
            None => self.out.decisions.push(decision),
        }
        self.order[w] = order;
        if orphan {
            self.orphans.insert(w);
        } else {
            self.orphans.remove(&w);
        }
        if let Some(q) = queue
            && present
        {
            let key = self.queue_key(w);
            self.push(q, key);
        }
        queue
    }

    /// The ClusterQueues' quota and usage.
    pub(super) fn usage(&self) -> Vec<QueueUsage> {
        (self.queues().iter().zip(&self.ids))
            .map(|(q, &id)| QueueUsage {
                name: q.name.clone(),
                cohort: q.cohort.clone(),
                strategy: q.queueing_strategy,
                stop_policy: q.stop_policy,
                resources: (q.resource_groups.iter())
                    .flat_map(|g| {
                        g.flavors
                            .iter()
                            .flat_map(move |f| g.covered_resources.iter().map(move |r| (f, r)))
                    })
                    .map(|(f, r)| {
                        let fr = (f.clone(), r.clone());
                        QuotaUsage {
                            flavor: f.clone(),
                            resource: r.clone(),
                            quota: self.tree.quota(id, &fr),
                            usage: self.tree.usage(id, &fr),
                        }
                    })
                    .collect(),
            })
            .collect()
    }

    /// Workload `w`'s key in its ClusterQueue's heap.
    pub(super) fn queue_key(&self, w: usize) -> QueueKey {
        (
            std::cmp::Reverse(self.workloads[w].priority),
            self.ordered[w],
            self.order[w],
            w,
        )
    }
}
