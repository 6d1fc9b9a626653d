//! Why a pod stays pending: every node's first failing Filter in the profile's order, the
//! `0/N nodes are available: …` message and the outcome (schedule_one.go `FitError`).

use super::*;

impl<'a> Scheduler<'a> {
    /// Every node's status for a pod that fits nowhere: the first Filter plugin that fails it,
    /// in the profile's order (`RunFilterPlugins` stops at the first failure). The static
    /// filters' verdicts and their counts come from the template; resources and bound pods are
    /// checked here, on the template's candidates alone when every static filter runs first.
    /// Also returns, in node order, the nodes whose status is `Unschedulable`: those
    /// preemption might help.
    pub(super) fn diagnose(
        &self,
        pod: &Pod,
        t: usize,
        request: &PodRequest,
        bound_filters: &BoundPodFilters,
    ) -> (Diagnosis, Vec<u32>) {
        let template = &self.templates[t];
        let compiled = self.compiled();
        let mut d = Diagnosis {
            statuses: template.statuses.clone(),
            counts: template.static_counts.clone(),
            node_status: match self.config.drop_node_verdicts {
                true => Vec::new(),
                false => template.static_verdict.to_vec(self.cluster.len()),
            },
            ..Default::default()
        };
        let mut seen: Vec<(node_resources_fit::Insufficient, u16)> = Vec::new();
        let mut might_help = Vec::new();
        // A node's first failing per-pod filter, or `None` when its static verdict comes first.
        let mut per_pod = |d: &mut Diagnosis, node: usize, failed_static: Option<&str>| {
            for &plugin in &compiled.filters {
                let status = match plugin {
                    Plugin::NodeResourcesFit => {
                        let lack = node_resources_fit::check(request, self.cluster.resources(node));
                        if lack.is_empty() {
                            continue;
                        }
                        return Some(match seen.iter().find(|(l, _)| *l == lack) {
                            Some((_, i)) => *i,
                            None => {
                                let i = d.intern(lack.status(&self.cluster.table));
                                seen.push((lack, i));
                                i
                            }
                        });
                    }
                    Plugin::PodTopologySpread | Plugin::InterPodAffinity => {
                        bound_filters.status(plugin, node)
                    }
                    Plugin::DynamicResources => self.dra_status(pod, node),
                    // A static filter: the template's verdict if it is the one that failed.
                    _ if failed_static == Some(plugin.name()) => return None,
                    _ => continue,
                };
                if !status.is_success() {
                    return Some(d.intern(status));
                }
            }
            None
        };
        if compiled.static_first {
            // Nodes failing a static filter keep its verdict; only candidates are checked.
            for c in &template.candidates {
                let node = c.node as usize;
                if let Some(i) = per_pod(&mut d, node, None) {
                    d.assign(node, None, i);
                    if diagnosis::preemption_might_help(&d.statuses[i as usize]) {
                        might_help.push(c.node);
                    }
                }
            }
            if !template.resolvable_static.is_empty() {
                might_help.extend(&template.resolvable_static);
                might_help.sort_unstable();
            }
        } else {
            for node in 0..self.cluster.len() {
                let verdict = template.static_verdict.get(node);
                let mut last = verdict;
                if verdict != template.absent || verdict == PASS {
                    let failed_static =
                        (verdict != PASS).then(|| template.statuses[verdict as usize].plugin);
                    if let Some(i) = per_pod(&mut d, node, failed_static) {
                        d.assign(node, (verdict != PASS).then_some(verdict), i);
                        last = i;
                    }
                }
                if last != PASS && diagnosis::preemption_might_help(&d.statuses[last as usize]) {
                    might_help.push(node as u32);
                }
            }
        }
        (d, might_help)
    }

    /// A pending pod's outcome with FitError's message.
    pub(super) fn pending(&self, d: Diagnosis) -> PodOutcome {
        let message = diagnosis::fit_error_message(self.cluster.len(), &d);
        unschedulable(message, d)
    }

    /// PostFilter (DefaultPreemption) over the nodes preemption might help, then the final
    /// message.
    pub(super) fn fail(
        &mut self,
        pod: &Pod,
        request: &PodRequest,
        (mut d, might_help): (Diagnosis, Vec<u32>),
    ) -> PodOutcome {
        // PostFilter plugins in the profile's order (`RunPostFilterPlugins`): their reasons
        // are joined until one succeeds.
        let post_filter = self.profile().framework.at(ExtensionPoint::PostFilter);
        let at = |plugin| post_filter.iter().position(|p| *p == plugin);
        let (dra_at, preemption_at) = (at(Plugin::DynamicResources), at(Plugin::DefaultPreemption));
        let mut reasons: Vec<String> = Vec::new();
        if dra_at.is_some() && (preemption_at.is_none() || dra_at < preemption_at) {
            reasons.extend(self.dra_post_filter(pod).map(str::to_string));
        }
        if preemption_at.is_some() {
            match preemption::post_filter(self, pod, request, &might_help) {
                preemption::Result::Preempt {
                    node,
                    victims,
                    pdb_violations,
                } => {
                    for &(n, v) in &victims {
                        self.unbind(n, v);
                    }
                    let mut outcome = scheduled(node);
                    outcome.victims = victims.into_iter().map(|(_, v)| v).collect();
                    outcome.pdb_violations = pdb_violations;
                    return outcome;
                }
                preemption::Result::Message(msg) => reasons.push(msg),
            }
            if dra_at > preemption_at {
                reasons.extend(self.dra_post_filter(pod).map(str::to_string));
            }
        }
        // No PostFilter plugin: the FitError alone.
        d.post_filter_msg = (!reasons.is_empty()).then(|| reasons.join(", "));
        self.pending(d)
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
        pdb_violations: 0,
        gang: None,
        evaluated: None,
    }
}

pub(super) fn unschedulable(message: String, diagnosis: Diagnosis) -> PodOutcome {
    PodOutcome {
        phase: PodPhase::Unschedulable,
        node: None,
        message,
        diagnosis: Some(diagnosis),
        victims: Vec::new(),
        pdb_violations: 0,
        gang: None,
        evaluated: None,
    }
}
