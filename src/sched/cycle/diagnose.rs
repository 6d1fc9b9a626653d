//! Why a pod stays pending: every node's first failing Filter in the profile's order, the
//! `0/N nodes are available: …` message and the outcome (schedule_one.go `FitError`).

use super::*;

impl<'a> Scheduler<'a> {
    /// Every node's status for a pod that fits nowhere: the first Filter plugin that fails it,
    /// in the profile's order (`RunFilterPlugins` stops at the first failure). The static
    /// filters' verdict comes from the template; resources and bound pods are checked here.
    pub(super) fn diagnose(
        &self,
        t: usize,
        request: &PodRequest,
        bound_filters: &BoundPodFilters,
    ) -> Diagnosis {
        let template = &self.templates[t];
        let mut d = Diagnosis {
            statuses: template.statuses.clone(),
            node_status: template.static_verdict.clone(),
            ..Default::default()
        };
        let mut seen: Vec<(node_resources_fit::Insufficient, u16)> = Vec::new();
        for node in 0..self.cluster.len() {
            let verdict = template.static_verdict[node];
            let compiled = self.compiled();
            if verdict != PASS && (compiled.static_first || verdict == template.absent) {
                continue;
            }
            let failed_static =
                (verdict != PASS).then(|| template.statuses[verdict as usize].plugin);
            for &plugin in &compiled.filters {
                match plugin {
                    Plugin::NodeResourcesFit => {
                        let lack = node_resources_fit::check(request, self.cluster.resources(node));
                        if lack.is_empty() {
                            continue;
                        }
                        d.node_status[node] = match seen.iter().find(|(l, _)| *l == lack) {
                            Some((_, i)) => *i,
                            None => {
                                let i = d.intern(lack.status(&self.cluster.table));
                                seen.push((lack, i));
                                i
                            }
                        };
                    }
                    Plugin::PodTopologySpread | Plugin::InterPodAffinity => {
                        let status = bound_filters.status(plugin, node);
                        if status.is_success() {
                            continue;
                        }
                        d.node_status[node] = d.intern(status);
                    }
                    // A static filter: the template's verdict if it is the one that failed.
                    _ if failed_static == Some(plugin.name()) => {}
                    _ => continue,
                }
                break;
            }
        }
        d
    }

    /// A pending pod's outcome with FitError's message; its per-node verdicts are dropped
    /// first when the run does not need them (the counts per status stay, for the reasons and
    /// the message, which then needs no second pass over the nodes).
    pub(super) fn pending(&self, mut d: Diagnosis) -> PodOutcome {
        if self.config.drop_node_verdicts {
            d.drop_node_status();
        }
        let message = diagnosis::fit_error_message(self.cluster.len(), &d);
        unschedulable(message, d)
    }

    /// PostFilter (DefaultPreemption), then the final message.
    pub(super) fn fail(&mut self, pod: &Pod, request: &PodRequest, mut d: Diagnosis) -> PodOutcome {
        if !self
            .profile()
            .framework
            .runs(ExtensionPoint::PostFilter, Plugin::DefaultPreemption)
        {
            // No PostFilter plugin: the FitError alone.
            return self.pending(d);
        }
        match preemption::post_filter(self, pod, request, &d) {
            preemption::Result::Preempt { node, victims } => {
                for &(n, v) in &victims {
                    self.unbind(n, v);
                }
                let mut outcome = scheduled(node);
                outcome.victims = victims.into_iter().map(|(_, v)| v).collect();
                outcome
            }
            preemption::Result::Message(msg) => {
                d.post_filter_msg = Some(msg);
                self.pending(d)
            }
        }
    }
}

pub(super) fn intern(
    index: &mut HashMap<Status, u16>,
    statuses: &mut Vec<Status>,
    status: Status,
) -> u16 {
    *index.entry(status.clone()).or_insert_with(|| {
        statuses.push(status);
        (statuses.len() - 1) as u16
    })
}

pub(super) fn scheduled(node: usize) -> PodOutcome {
    PodOutcome {
        phase: PodPhase::Scheduled,
        node: Some(node),
        message: String::new(),
        diagnosis: None,
        victims: Vec::new(),
        gang: None,
    }
}

pub(super) fn unschedulable(message: String, diagnosis: Diagnosis) -> PodOutcome {
    PodOutcome {
        phase: PodPhase::Unschedulable,
        node: None,
        message,
        diagnosis: Some(diagnosis),
        victims: Vec::new(),
        gang: None,
    }
}
