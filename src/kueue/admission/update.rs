//! Timeline steps change Kueue's objects (`QueueUpdate`): ClusterQueues and Cohorts replaced
//! or created, LocalQueues and ResourceFlavors created, queues stopped and released. The quota
//! tree is built again with what every holder holds, nominations are forgotten, a
//! `HoldAndDrain` queue evicts what it admitted, and workloads waiting for a queue that now
//! exists (or is released) join it (`pkg/cache/queue/manager.go`: `UpdateClusterQueue`,
//! `AddClusterQueue`, `AddLocalQueue`; `workload_controller.go`:
//! `reconcileOnClusterQueueActiveState`, `reconcileOnLocalQueueActiveState`).

use std::collections::{BTreeSet, HashSet};

use super::{Drain, QueueKey, QueueUpdate, State, Victim, Waiting, stop};
use crate::kueue::api::StopPolicy;
use crate::kueue::quota::QuotaTree;

impl State<'_> {
    /// A timeline step's Kueue objects take effect: the quota tree is built again with every
    /// holder's usage in it, nothing nominated before holds, stopped queues hold or drain
    /// (workloads waiting for a queue join it in [`Self::adopt_orphans`]). Returns the roots
    /// of the cohort trees the changed queues are in, whose inadmissible workloads Kueue
    /// requeues (`UpdateClusterQueue` with `specUpdated`: `notifyRetryInadmissibleWithoutLock`,
    /// `pkg/cache/queue/manager.go`; a Cohort's update does the same for its tree).
    pub(super) fn update_queues(&mut self, update: &QueueUpdate) -> BTreeSet<usize> {
        // A cycle waiting for PodsReady read the queues as they were: its workloads go back
        // to their heaps, to be nominated against the new quota.
        if let Some(pass) = self.blocked.take() {
            for (q, key) in pass.keys() {
                self.heaps[q].insert(&self.pod_sets_id, key);
            }
        }
        // Roots waiting for a requeue, by a queue of theirs: a new Cohort or ClusterQueue
        // may number the tree's nodes anew.
        let waiting = self.queues_of_roots(self.released.roots.iter().copied());
        let waiting_live =
            (self.live.as_ref()).map(|l| self.queues_of_roots(l.requeue_roots.iter().copied()));
        for f in &update.flavors {
            self.flavors.to_mut().insert(f.name.clone(), f.clone());
        }
        // LocalQueues created, or whose stop policy changes: (namespace, name), old, new.
        let mut local_stops = Vec::new();
        for lq in &update.local_queues {
            let key = (lq.namespace.clone(), lq.name.clone());
            let old = stop::local_queue(&self.stopped_local_queues, &key);
            match lq.stop_policy {
                StopPolicy::None => self.stopped_local_queues.to_mut().remove(&key),
                policy => (self.stopped_local_queues.to_mut()).insert(key.clone(), policy),
            };
            (self.local_queues.to_mut()).insert(key.clone(), lq.cluster_queue.clone());
            local_stops.push((key, old, lq.stop_policy));
        }
        let queues = self.cluster_queues.to_mut();
        let (mut stopped, mut drained) = (Vec::new(), Vec::new());
        for new in &update.cluster_queues {
            match queues.iter().position(|q| q.name == new.name) {
                Some(i) => {
                    let (old, now) = (queues[i].stop_policy, new.stop_policy);
                    if old == StopPolicy::None && now != StopPolicy::None {
                        stopped.push(i);
                    }
                    if old != StopPolicy::HoldAndDrain && now == StopPolicy::HoldAndDrain {
                        drained.push(i);
                    }
                    queues[i] = new.clone();
                }
                None => {
                    // `AddClusterQueue`: the next index, with an empty heap.
                    self.by_name.insert(new.name.clone(), queues.len());
                    queues.push(new.clone());
                    self.heaps.push(Default::default());
                    self.parked.push(Default::default());
                    self.sticky.push(None);
                    self.set_aside.push(HashSet::default());
                    self.bypassing.push(false);
                    self.by_queue.push(Vec::new());
                }
            }
        }
        let cohorts = self.cohorts.to_mut();
        for new in &update.cohorts {
            match cohorts.iter_mut().find(|c| c.name == new.name) {
                Some(c) => *c = new.clone(),
                None => cohorts.push(new.clone()),
            }
        }
        let (mut tree, warnings) = QuotaTree::new(&self.cluster_queues, &self.cohorts);
        self.out.warnings.extend(warnings);
        self.ids = (self.cluster_queues.iter())
            .map(|q| {
                tree.queue(&q.name)
                    .expect("every ClusterQueue is in the tree")
            })
            .collect();
        for list in &self.by_queue {
            for &h in list {
                self.holders[h].count_in(&mut tree, &self.ids);
            }
        }
        self.tree = tree;
        self.released.roots = self.roots_of_queues(&waiting);
        if let Some(queues) = waiting_live {
            let roots = self.roots_of_queues(&queues);
            if let Some(live) = &mut self.live {
                live.requeue_roots = roots;
            }
        }
        for q in drained {
            let holders = self.by_queue[q].clone();
            self.drain(holders, Stopped::ClusterQueue);
        }
        for (key, old, new) in local_stops {
            if old != StopPolicy::HoldAndDrain && new == StopPolicy::HoldAndDrain {
                let holders = (self.by_queue.iter().flatten().copied())
                    .filter(|&h| self.local_queue_of(self.holder_is[h]) == (&key.0, &key.1))
                    .collect();
                self.drain(holders, Stopped::LocalQueue(&key.1));
            }
            if old == StopPolicy::None && new != StopPolicy::None {
                self.hold_local_queue(&key);
            }
        }
        self.inactive = self.inactive_queues();
        // A ClusterQueue stopped now: the workload controller marks its pending workloads
        // (`getQueueBlocker`); they stay in its queue, which no cycle pops.
        for q in stopped {
            let message = format!("ClusterQueue {} is inactive", self.cluster_queues[q].name);
            let waiting = (self.heaps[q].iter()).chain(&self.parked[q]);
            for key in waiting.chain(self.sticky[q].as_ref()) {
                let d = &mut self.out.decisions[key.3];
                d.reason = "Inadmissible";
                d.message = message.clone().into();
            }
        }
        self.assigned.clear();
        self.last.iter_mut().for_each(|l| *l = None);
        self.refused.iter_mut().for_each(|r| *r = None);
        let changed: BTreeSet<&str> = (update.cluster_queues.iter())
            .map(|q| q.name.as_str())
            .collect();
        let cohorts: BTreeSet<usize> = (update.cohorts.iter())
            .filter_map(|c| self.tree.cohort_id(&c.name))
            .map(|c| self.tree.root_of_node(c))
            .collect();
        (0..self.cluster_queues.len())
            .map(|q| (q, self.tree.root_of(self.ids[q])))
            .filter(|(q, root)| {
                changed.contains(self.cluster_queues[*q].name.as_str()) || cohorts.contains(root)
            })
            .map(|(_, root)| root)
            .collect()
    }

    /// `reconcileOnClusterQueueActiveState` / `reconcileOnLocalQueueActiveState` under
    /// `HoldAndDrain` set by a step: each of `holders` is evicted (`ClusterQueueStopped` /
    /// `LocalQueueStopped`), its quota released, and it waits again: in the stopped
    /// ClusterQueue's heap, or, its LocalQueue stopped, outside the queue manager until the
    /// LocalQueue is released (a plain pod's workload ends with its pod).
    fn drain(&mut self, holders: Vec<usize>, stopped: Stopped) {
        let (reason, message) = match stopped {
            Stopped::ClusterQueue => ("ClusterQueueStopped", "The ClusterQueue is stopped"),
            Stopped::LocalQueue(_) => ("LocalQueueStopped", "The LocalQueue is stopped"),
        };
        for h in holders {
            let (victim, q) = (self.holder_is[h], self.holders[h].queue);
            let root = self.tree.root_of(self.ids[q]);
            self.release(h);
            self.released.roots.insert(root);
            self.out.drained.push(Drain {
                victim,
                step: self.phase,
                reason,
                message: message.into(),
            });
            let Victim::Queued(w) = victim else {
                continue;
            };
            self.out.order.retain(|&x| x != w);
            let d = &mut self.out.decisions[w];
            d.admitted = None;
            if self.workloads[w].owned_by_pod {
                d.reason = "Evicted";
                d.message = message.into();
                d.waiting = Waiting::Nowhere;
                continue;
            }
            d.reason = "Inadmissible";
            match stopped {
                Stopped::ClusterQueue => {
                    let name = &self.cluster_queues[q].name;
                    d.message = format!("ClusterQueue {name} is inactive").into();
                    d.waiting = Waiting::Heap;
                    let key = self.queue_key(w);
                    self.released.requeue.push((q, key));
                }
                Stopped::LocalQueue(name) => {
                    d.message = stop::local_queue_message(name).into();
                    d.waiting = Waiting::Nowhere;
                    self.orphans.insert(w);
                }
            }
        }
    }

    /// A LocalQueue stopped by a step leaves the queue manager (`localqueue_controller.go`):
    /// its pending workloads leave their ClusterQueue's queue, marked inactive, until it is
    /// released.
    fn hold_local_queue(&mut self, key: &(String, String)) {
        let message = stop::local_queue_message(&key.1);
        let mine = |st: &Self, w: usize| st.local_queue_of(Victim::Queued(w)) == (&key.0, &key.1);
        for q in 0..self.heaps.len() {
            let keys: Vec<QueueKey> = (self.heaps[q].iter().chain(&self.parked[q]))
                .filter(|k| mine(self, k.3))
                .copied()
                .collect();
            for k in keys {
                self.heaps[q].remove(&self.pod_sets_id, &k);
                self.parked[q].remove(&k);
                if self.sticky[q] == Some(k) {
                    self.sticky[q] = None;
                }
                let d = &mut self.out.decisions[k.3];
                d.reason = "Inadmissible";
                d.message = message.clone().into();
                d.waiting = Waiting::Nowhere;
                self.orphans.insert(k.3);
            }
        }
        let requeue = std::mem::take(&mut self.released.requeue);
        self.released.requeue = (requeue.into_iter())
            .filter(|(_, k)| {
                let gone = mine(self, k.3);
                if gone {
                    self.orphans.insert(k.3);
                }
                !gone
            })
            .collect();
    }

    /// The (namespace, LocalQueue) a holder's workload was queued in.
    fn local_queue_of(&self, victim: Victim) -> (&str, &str) {
        match victim {
            Victim::Queued(w) => (&self.workloads[w].namespace, &self.workloads[w].queue_name),
            Victim::Admitted(a) => {
                let a = &self.objects.admitted[a];
                (&a.namespace, &a.queue_name)
            }
        }
    }

    /// `AddLocalQueue` / `AddClusterQueue` (or a LocalQueue released): the workloads waiting
    /// for a queue a step created join it (its heap, if they are `present` already). Returns
    /// them with their queues.
    pub(super) fn adopt_orphans(&mut self, present: impl Fn(usize) -> bool) -> Vec<(usize, usize)> {
        let mut adopted = Vec::new();
        for w in std::mem::take(&mut self.orphans) {
            // What happened to it before (an admission a drain ended) stays.
            let d = &mut self.out.decisions[w];
            let before = (
                d.last_admitted.take(),
                std::mem::take(&mut d.preempted),
                d.evicted,
                d.finished,
            );
            let order = self.order[w];
            let queue = self.enqueue(w, order, present(w));
            let d = &mut self.out.decisions[w];
            (d.last_admitted, d.preempted, d.evicted, d.finished) = before;
            if let Some(q) = queue {
                adopted.push((w, q));
            }
        }
        adopted
    }

    /// A queue of each of `roots` (a root with no queue has no workload waiting).
    pub(super) fn queues_of_roots(&self, roots: impl IntoIterator<Item = usize>) -> Vec<usize> {
        (roots.into_iter())
            .filter_map(|root| {
                (0..self.ids.len()).find(|&q| self.tree.root_of(self.ids[q]) == root)
            })
            .collect()
    }

    /// The roots of the trees `queues` are in.
    pub(super) fn roots_of_queues(&self, queues: &[usize]) -> BTreeSet<usize> {
        (queues.iter())
            .map(|&q| self.tree.root_of(self.ids[q]))
            .collect()
    }
}

/// The queue a step stopped with `HoldAndDrain`.
#[derive(Clone, Copy)]
enum Stopped<'a> {
    ClusterQueue,
    /// A LocalQueue, by name.
    LocalQueue(&'a str),
}
