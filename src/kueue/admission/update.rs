//! Timeline steps change Kueue's objects (`QueueUpdate`): ClusterQueues and Cohorts replaced
//! or created, LocalQueues and ResourceFlavors created. The quota tree is built again with what
//! every holder holds, nominations are forgotten, and workloads waiting for a queue that now
//! exists join it (`pkg/cache/queue/manager.go`: `UpdateClusterQueue`, `AddClusterQueue`,
//! `AddLocalQueue`).

use std::collections::{BTreeSet, HashSet};

use super::{Drain, QueueUpdate, State, Victim, Waiting};
use crate::kueue::api::StopPolicy;
use crate::kueue::quota::QuotaTree;

impl State<'_> {
    /// A timeline step replaces ClusterQueues and Cohorts: the quota tree is built again
    /// with every holder's usage in it, and nothing nominated before holds. Returns the roots
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
        for lq in &update.local_queues {
            let key = (lq.namespace.clone(), lq.name.clone());
            if lq.stop_policy != StopPolicy::None {
                (self.stopped_local_queues.to_mut()).insert(key.clone(), lq.stop_policy);
            }
            self.local_queues
                .to_mut()
                .insert(key, lq.cluster_queue.clone());
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
                    self.parked.push(BTreeSet::new());
                    self.sticky.push(None);
                    self.set_aside.push(HashSet::new());
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
                self.holders[h].add_usage(&mut tree, &self.ids);
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
            self.drain(q);
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

    /// `reconcileOnClusterQueueActiveState` under `HoldAndDrain` set by a step: every workload
    /// ClusterQueue `q` admitted is evicted (`ClusterQueueStopped`), its quota released, and
    /// it waits in the stopped queue again (a plain pod's workload ends with its pod).
    fn drain(&mut self, q: usize) {
        let root = self.tree.root_of(self.ids[q]);
        for h in self.by_queue[q].clone() {
            let victim = self.holder_is[h];
            self.release(h);
            self.released.roots.insert(root);
            self.out.drained.push(Drain {
                victim,
                step: self.phase,
                reason: "ClusterQueueStopped",
                message: "The ClusterQueue is stopped".into(),
            });
            let Victim::Queued(w) = victim else {
                continue;
            };
            self.out.order.retain(|&x| x != w);
            let d = &mut self.out.decisions[w];
            d.admitted = None;
            if self.workloads[w].owned_by_pod {
                d.reason = "Evicted";
                d.message = "The ClusterQueue is stopped".into();
                d.waiting = Waiting::Nowhere;
            } else {
                d.reason = "Inadmissible";
                d.message =
                    format!("ClusterQueue {} is inactive", self.cluster_queues[q].name).into();
                d.waiting = Waiting::Heap;
                let key = self.queue_key(w);
                self.released.requeue.push((q, key));
            }
        }
    }

    /// `AddLocalQueue` / `AddClusterQueue`: the workloads waiting for a queue a step created
    /// join it (its heap, if they are `present` already). Returns them with their queues.
    pub(super) fn adopt_orphans(&mut self, present: impl Fn(usize) -> bool) -> Vec<(usize, usize)> {
        let mut adopted = Vec::new();
        for w in std::mem::take(&mut self.orphans) {
            let order = self.order[w];
            if let Some(q) = self.enqueue(w, order, present(w)) {
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
