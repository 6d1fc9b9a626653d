//! Timeline steps in a replay: cordons, drains through the Eviction API, node failures and
//! additions (their pods evicted and queued anew, node events to the queue), completions,
//! deletions and scheduling gates removed, each at its step's time.

use std::sync::Arc;

use super::{Engine, queue_pod};
use crate::model::{Node, Pod};
use crate::replay::metrics::pod_gpu_milli;
use crate::sched::hints::{self, Payload};
use crate::sched::plan::Event;
use crate::sched::queue::{Action, ClusterEvent, Resource, Time};

impl Engine<'_, '_> {
    /// A timeline step's event at its time.
    pub(super) fn event(&mut self, event: &Event, step: &str) {
        match event {
            Event::Cordon(names) => self.set_unschedulable(names, true),
            Event::Uncordon(names) => self.set_unschedulable(names, false),
            Event::Drain(names) => {
                self.set_unschedulable(names, true);
                self.drain(names, step);
            }
            Event::FailNodes(names) => {
                let nodes: Vec<Node> = (self.s.cluster.nodes.iter())
                    .filter(|n| !names.contains(&n.name))
                    .cloned()
                    .collect();
                self.replace_nodes(nodes);
            }
            Event::AddNodes(added) => {
                let mut nodes = self.s.cluster.nodes.clone();
                nodes.extend(added.iter().cloned());
                self.replace_nodes(nodes);
            }
            Event::Complete(selector) => {
                for id in self.selected(|p| selector.matches(p)) {
                    if self.live.get(&id).is_some_and(|l| l.bound.is_some()) {
                        self.pod_gone(id, "finished");
                    }
                }
            }
            Event::Delete { pods, .. } => {
                for id in self.selected(|p| pods.matches(p)) {
                    self.pod_gone(id, "deleted");
                }
            }
            Event::Recreate { pods, .. } => {
                let _ = pods;
            }
            Event::RemoveSchedulingGates { pods, gates } => {
                for id in self.selected(|p| pods.matches(p)) {
                    self.remove_gates(id, gates.as_deref());
                }
            }
        }
    }

    /// Live pods the predicate selects, in id order.
    fn selected(&self, f: impl Fn(&Pod) -> bool) -> Vec<u32> {
        let mut ids: Vec<u32> = (self.live.iter())
            .filter(|(_, l)| f(&l.pod))
            .map(|(id, _)| *id)
            .collect();
        ids.sort_unstable();
        ids
    }

    fn remove_gates(&mut self, id: u32, gates: Option<&[String]>) {
        let Some(live) = self.live.get_mut(&id) else {
            return;
        };
        let old = Arc::clone(&live.pod);
        let mut pod = (*old).clone();
        pod.scheduling_gates
            .retain(|g| gates.is_some_and(|keep| !keep.contains(g)));
        let new = Arc::new(pod);
        live.pod = Arc::clone(&new);
        self.s.admit(id as usize, Arc::clone(&new));
        self.shared.borrow_mut().insert(id, Arc::clone(&new));
        if !live.created || self.volcano_ungated(id) {
            return;
        }
        let events = hints::pod_update_events(&old, &new);
        self.queue.update(
            Time(self.now),
            queue_pod(id, &new),
            &events,
            &Payload::Pod {
                old: Some(old),
                new: Some(new),
            },
            &self.hints,
        );
    }

    fn set_unschedulable(&mut self, names: &[String], unschedulable: bool) {
        let mut nodes = self.s.cluster.nodes.clone();
        for n in nodes.iter_mut().filter(|n| names.contains(&n.name)) {
            n.unschedulable = unschedulable;
        }
        self.replace_nodes(nodes);
    }

    /// `kubectl drain`: every pod but DaemonSet pods is evicted through the Eviction API;
    /// evicted pods are created again by their controllers and queued. Evictions a budget
    /// refuses are left, with a warning.
    fn drain(&mut self, names: &[String], step: &str) {
        for name in names {
            let Some(node) = self.s.cluster.index_of(name) else {
                continue;
            };
            for pod_id in self.s.bound_ids(node) {
                // A member waiting at Permit is not bound yet: a drain does not see it.
                if pod_id <= u32::MAX as usize && self.waits(pod_id as u32) {
                    continue;
                }
                let pod = self.s.pod_handle(pod_id);
                if pod.controller_kind() == Some("DaemonSet") {
                    continue;
                }
                match self.s.budgets.evict(pod_id, &pod) {
                    Ok(()) => self.evict(pod_id, node),
                    Err(refusal) => self.warnings.push(format!(
                        "timeline step {step:?}: the eviction of {} from {name} was refused ({}): {}",
                        pod.key(),
                        refusal.code,
                        refusal.message
                    )),
                }
            }
        }
    }

    /// A bound pod is evicted (drain, node failure): a workload pod is created again and
    /// queued; an existing pod is gone.
    fn evict(&mut self, pod_id: usize, node: usize) {
        if pod_id > u32::MAX as usize {
            self.s.unbind(node, pod_id);
            self.metrics
                .unbound(node, pod_gpu_milli(&self.s.pod_handle(pod_id)));
            self.existing_evicted += 1;
            self.assigned_pod_deleted(None);
            return;
        }
        let id = pod_id as u32;
        if let Some(pod) = self.unbind(id) {
            if let Some(live) = self.live.get(&id) {
                self.metrics.pending_added(live.gpus);
            }
            self.assigned_pod_deleted(Some(Arc::clone(&pod)));
            self.requeue_pod(id, &pod);
        }
    }

    /// A new node list: pods of vanished nodes are evicted; node events reach the queue.
    fn replace_nodes(&mut self, nodes: Vec<Node>) {
        let old: Vec<Node> = self.s.cluster.nodes.clone();
        let (remap, mut evicted) = self.s.replace_nodes(nodes);
        let mut lost_jobs = Vec::new();
        for live in self.live.values_mut() {
            if let Some((node, since)) = live.bound {
                live.bound = remap[node].map(|n| (n, since));
                if live.bound.is_none() {
                    // Counted below, when the eviction re-queues it.
                    live.used_ms += self.now - since;
                    live.generation += 1;
                    lost_jobs.push(live.job);
                }
            }
        }
        lost_jobs.sort_unstable();
        for job in lost_jobs {
            self.job_pods_changed(job, -1, 0);
        }
        if let Some(k) = self.kueue.as_mut() {
            k.note_progress();
        }
        let used: Vec<i64> = (0..self.s.cluster.len())
            .map(|n| {
                (self.s.bound_ids(n).into_iter())
                    .map(|id| pod_gpu_milli(&self.s.pod_handle(id)))
                    .sum()
            })
            .collect();
        self.metrics.nodes_changed(&self.s.cluster.nodes, &used);
        self.waiting_nodes_gone(&mut evicted);
        let running = self.live.values().filter(|l| l.bound.is_some()).count() as u64;
        for (pod_id, _) in evicted {
            if pod_id > u32::MAX as usize {
                self.existing_evicted += 1;
                continue;
            }
            let id = pod_id as u32;
            if let Some(live) = self.live.get_mut(&id) {
                let pod = Arc::clone(&live.pod);
                let assigned = live.assigned.take();
                self.metrics.pending_added(live.gpus);
                self.assigned_pod_deleted(assigned);
                self.requeue_pod(id, &pod);
            }
        }
        self.metrics.running = running;
        // Node events: added nodes, changed ones, removed ones.
        let new_nodes = self.s.cluster.nodes.clone();
        for n in &new_nodes {
            match old.iter().find(|o| o.name == n.name) {
                None => self.cluster_event(
                    ClusterEvent::new(Resource::Node, Action::ADD),
                    Payload::Node {
                        old: None,
                        new: Some(Arc::new(n.clone())),
                    },
                ),
                Some(o) if o != n => {
                    for event in hints::node_update_events(o, n) {
                        self.cluster_event(
                            event,
                            Payload::Node {
                                old: Some(Arc::new(o.clone())),
                                new: Some(Arc::new(n.clone())),
                            },
                        );
                    }
                }
                Some(_) => {}
            }
        }
        for o in old
            .iter()
            .filter(|o| !new_nodes.iter().any(|n| n.name == o.name))
        {
            self.cluster_event(
                ClusterEvent::new(Resource::Node, Action::DELETE),
                Payload::Node {
                    old: Some(Arc::new(o.clone())),
                    new: None,
                },
            );
        }
    }
}
