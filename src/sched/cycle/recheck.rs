//! A failed cycle re-checked on the nodes that changed since. A replay retries its pending
//! pods as pods come and go (queueing hints, backoff, flushes), and most retries fail again:
//! a pod that failed on every node still fails while every node that changed since still
//! fails it with the same standing for preemption and, where preemption's dry run tried it,
//! the same verdict there. A changed node's new reason only updates its status and the
//! FitError's counts and message. The nodes that did not change cannot answer differently,
//! since the pods this applies to read nothing of other nodes (no PodTopologySpread
//! `DoNotSchedule` constraint, no InterPodAffinity work, no resource claims: see
//! [`super::FailureKey`]). The cycle's side effects are the full cycle's (the Filter pass's
//! start index, preemption's random draw), so the run is the same bytes.

use super::*;

/// The nodes whose bound or nominated pods changed, by mutation (see
/// [`Scheduler::mutations`]), for as far back as it remembers.
#[derive(Debug, Default)]
pub(super) struct NodeChanges {
    /// `(mutation, node)` in mutation order.
    log: Vec<(u64, u32)>,
    /// What changed up to this mutation is not known node by node: forgotten, or a change of
    /// more than one node.
    floor: u64,
}

impl NodeChanges {
    /// Mutation `at` changed `node`. The log keeps at most `max` entries: past it, the older
    /// half is forgotten.
    pub fn record(&mut self, at: u64, node: usize, max: usize) {
        self.log.push((at, node as u32));
        if self.log.len() > max {
            let half = self.log.len() / 2;
            self.floor = self.log[half - 1].0;
            self.log.drain(..half);
        }
    }

    /// Mutation `at` changed more than single nodes.
    pub fn forget(&mut self, at: u64) {
        self.log.clear();
        self.floor = at;
    }

    /// Forgets the changes after mutation `to`: a what-if's, undone (they are the newest, and
    /// a trim during the what-if drops only the oldest).
    pub fn rewind(&mut self, to: u64) {
        while self.log.last().is_some_and(|&(m, _)| m > to) {
            self.log.pop();
        }
    }

    /// The distinct nodes changed after mutation `at`, in node order, if they are known.
    pub fn since(&self, at: u64) -> Option<Vec<u32>> {
        if at < self.floor {
            return None;
        }
        let tail = &self.log[self.log.partition_point(|&(m, _)| m <= at)..];
        let mut nodes: Vec<u32> = tail.iter().map(|&(_, n)| n).collect();
        nodes.sort_unstable();
        nodes.dedup();
        Some(nodes)
    }
}

/// Each node's status in a failed cycle, and its verdict in preemption's dry run when one
/// ran: what a re-check compares a changed node's answers with.
#[derive(Debug, Clone)]
pub(super) struct FailedNodes {
    /// Per node, its status: an index into the failed outcome's diagnosis.
    filter: Vec<u16>,
    dry_run: Option<NodeVerdicts>,
}

impl FailedNodes {
    /// The memory it holds, about.
    pub fn bytes(&self) -> usize {
        2 * (self.filter.len() + self.dry_run.as_ref().map_or(0, |d| d.node.len()))
    }
}

/// Per node, an index into `statuses`.
#[derive(Debug, Clone)]
struct NodeVerdicts {
    statuses: Vec<Status>,
    node: Vec<u16>,
}

impl NodeVerdicts {
    fn is(&self, node: usize, status: &Status) -> bool {
        (self.node.get(node)).and_then(|&i| self.statuses.get(i as usize)) == Some(status)
    }
}

/// What preemption's dry run left for the failure kept of the current cycle.
#[derive(Debug, Default)]
pub(super) enum DryRun {
    /// None ran (no PostFilter, a pod not eligible).
    #[default]
    None,
    /// One ran and found no candidate: each node's verdict, in its FitError.
    Verdicts(Diagnosis),
    /// One ran and left nothing a re-check can use.
    Unknown,
}

impl Scheduler<'_> {
    /// A failure kept for pods alike (`key`) that holds now: on an unchanged cluster as it
    /// is, else when every node changed since still fails the pod (see [`Self::refail`]).
    /// Replays the cycle's side effects and returns its outcome.
    pub(super) fn fail_again(
        &mut self,
        key: &FailureKey,
        pod: &Pod,
        t: usize,
        request: &PodRequest,
        bound_filters: &BoundPodFilters,
    ) -> Option<PodOutcome> {
        let at = self.failures.get(key)?.at;
        if at != self.mutations {
            if self.config.reference_run {
                return None;
            }
            let changed = self.changes.since(at)?;
            // Out of the map while it is checked; a failure that no longer holds stays out
            // (the full cycle keeps its own).
            let mut failure = self.failures.remove(key)?;
            if !self.refail(&mut failure, pod, t, request, bound_filters, &changed) {
                return None;
            }
            failure.at = self.mutations;
            self.failures.insert(key.clone(), failure);
        }
        let failure = &self.failures[key];
        let outcome = failure.outcome.clone();
        self.replay(failure.preemption_draw, &outcome);
        Some(outcome)
    }

    /// Brings a failure up to date with the `changed` nodes, if the pod still fails as it
    /// did: each changed node fails it still, where the dry run tried it with the same
    /// verdict (no victims, or the same failure), and a node whose status is another keeps
    /// the same standing for preemption (it might help, or not). Then only the FitError's
    /// counts change: its message is written anew.
    fn refail(
        &mut self,
        failure: &mut Failure,
        pod: &Pod,
        t: usize,
        request: &PodRequest,
        bound_filters: &BoundPodFilters,
        changed: &[u32],
    ) -> bool {
        let (Some(nodes), Some(d)) = (&mut failure.nodes, &mut failure.outcome.diagnosis) else {
            return false;
        };
        // Copied only if an outcome given out still holds it.
        let d = Arc::make_mut(d);
        let mut patched = false;
        for &node in changed {
            let node = node as usize;
            let Some(status) = self.node_status(pod, t, request, bound_filters, node) else {
                return false;
            };
            let helps = diagnosis::preemption_might_help(&status);
            if helps
                && let Some(verdicts) = &nodes.dry_run
                && !preemption::dry_run_status(self, node, pod, request)
                    .is_some_and(|v| verdicts.is(node, &v))
            {
                return false;
            }
            let old = nodes.filter[node];
            let was = &d.statuses[old as usize];
            if *was == status {
                continue;
            }
            if diagnosis::preemption_might_help(was) != helps {
                return false;
            }
            let new = d.intern(status);
            d.assign(node, Some(old), new);
            nodes.filter[node] = new;
            patched = true;
        }
        if patched {
            failure.outcome.message = diagnosis::fit_error_message(self.cluster.len(), d);
        }
        true
    }

    /// What a failure kept now needs to be re-checked later, if it can be: the cycle's
    /// per-node statuses (out of `outcome` when the run keeps none) and the dry run's.
    pub(super) fn failed_nodes(&mut self, outcome: &mut PodOutcome) -> Option<FailedNodes> {
        let dry_run = match std::mem::take(&mut self.dry_run) {
            DryRun::None => None,
            DryRun::Verdicts(d) => Some(NodeVerdicts {
                statuses: d.statuses,
                node: d.node_status,
            }),
            DryRun::Unknown => return None,
        };
        if !self.keep_failed_nodes {
            return None;
        }
        let d = Arc::make_mut(outcome.diagnosis.as_mut()?);
        let filter = match self.config.drop_node_verdicts {
            true => std::mem::take(&mut d.node_status),
            false => d.node_status.clone(),
        };
        (filter.len() == self.cluster.len()).then_some(FailedNodes { filter, dry_run })
    }
}

#[cfg(test)]
mod tests {
    use super::NodeChanges;

    #[test]
    fn changes_since_a_mutation_are_its_later_nodes_until_forgotten() {
        let mut c = NodeChanges::default();
        for (at, node) in [(1, 4), (2, 2), (3, 4), (4, 7)] {
            c.record(at, node, 100);
        }
        assert_eq!(c.since(0), Some(vec![2, 4, 7]));
        assert_eq!(c.since(2), Some(vec![4, 7]));
        assert_eq!(c.since(4), Some(vec![]));
        c.forget(5);
        assert_eq!(
            c.since(4),
            None,
            "a change of more than single nodes came after"
        );
        assert_eq!(c.since(5), Some(vec![]));
    }

    #[test]
    fn a_trim_forgets_the_older_half_and_a_rewind_only_the_what_if() {
        let mut c = NodeChanges::default();
        for at in 1..=8 {
            c.record(at, at as usize, 8);
        }
        // A what-if from mutation 8 records past the limit: the older half goes.
        c.record(9, 100, 8);
        assert_eq!(c.since(3), None);
        assert_eq!(c.since(5), Some(vec![6, 7, 8, 100]));
        c.rewind(8);
        assert_eq!(c.since(5), Some(vec![6, 7, 8]));
        c.record(9, 3, 8);
        assert_eq!(c.since(8), Some(vec![3]));
    }
}
