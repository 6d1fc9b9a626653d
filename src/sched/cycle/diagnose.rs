//! Why a pod stays pending: every node's first failing Filter in the profile's order, the
//! `0/N nodes are available: …` message and the outcome (schedule_one.go `FitError`).

use super::*;

/// What fails a node first for a pod, beyond its static verdict.
pub(super) enum PerPod {
    /// NodeResourcesFit: what the node lacks (its status is built once per distinct lack).
    Lack(node_resources_fit::Insufficient),
    Failed(Status),
}

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
        keep_nodes: bool,
    ) -> (Diagnosis, Vec<u32>) {
        let template = self.statics(t);
        let compiled = self.compiled();
        let mut d = Diagnosis {
            statuses: template.statuses.clone(),
            counts: template.static_counts.clone(),
            node_status: match keep_nodes {
                true => template.static_verdict.to_vec(self.cluster.len()),
                false => Vec::new(),
            },
            ..Default::default()
        };
        let mut seen: Vec<(node_resources_fit::Insufficient, u16)> = Vec::new();
        let mut might_help = Vec::new();
        let mut per_pod = |d: &mut Diagnosis, node: usize, failed_static: Option<&str>| {
            Some(
                match self.per_pod(pod, request, bound_filters, node, failed_static)? {
                    PerPod::Failed(status) => d.intern(status),
                    PerPod::Lack(lack) => match seen.iter().find(|(l, _)| *l == lack) {
                        Some((_, i)) => *i,
                        None => {
                            let i = d.intern(lack.status(&self.cluster.table));
                            seen.push((lack, i));
                            i
                        }
                    },
                },
            )
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

    /// A node's status for a pod that fits nowhere, as [`Self::diagnose`] gives it: `None`
    /// when the node passes every filter.
    pub(super) fn node_status(
        &self,
        pod: &Pod,
        t: usize,
        request: &PodRequest,
        bound_filters: &BoundPodFilters,
        node: usize,
    ) -> Option<Status> {
        let template = self.statics(t);
        let verdict = template.static_verdict.get(node);
        let static_status =
            || (verdict != PASS).then(|| template.statuses[verdict as usize].clone());
        if verdict != PASS && (self.compiled().static_first || verdict == template.absent) {
            return static_status();
        }
        let failed_static = (verdict != PASS).then(|| template.statuses[verdict as usize].plugin);
        match self.per_pod(pod, request, bound_filters, node, failed_static) {
            Some(PerPod::Failed(status)) => Some(status),
            Some(PerPod::Lack(lack)) => Some(lack.status(&self.cluster.table)),
            None => static_status(),
        }
    }

    /// A node's first failing per-pod filter, or `None` when its static verdict stands (it
    /// failed first, or no per-pod filter fails). `RunFilterPluginsWithNominatedPods`: the
    /// first pass (the pods it yields to nominated there added) decides when it fails, else
    /// the second.
    fn per_pod(
        &self,
        pod: &Pod,
        request: &PodRequest,
        bound_filters: &BoundPodFilters,
        node: usize,
        failed_static: Option<&str>,
    ) -> Option<PerPod> {
        let pass = |with| self.per_pod_pass(pod, request, bound_filters, node, failed_static, with);
        match self.nominated_on(node).and_then(|w| pass(Some(w))) {
            Some(first) => Some(first),
            None => pass(None),
        }
    }

    /// One pass of [`Self::per_pod`]: with the nominated pods added (`with`), the filters that
    /// read a node's pods answer for them.
    fn per_pod_pass(
        &self,
        pod: &Pod,
        request: &PodRequest,
        bound_filters: &BoundPodFilters,
        node: usize,
        failed_static: Option<&str>,
        with: Option<&nominated::NominatedNode>,
    ) -> Option<PerPod> {
        for &plugin in &self.compiled().filters {
            let status = match plugin {
                Plugin::NodeResourcesFit | Plugin::PodTopologySpread | Plugin::InterPodAffinity
                    if with.is_some() =>
                {
                    with.map_or_else(Status::success, |w| w.status(plugin).clone())
                }
                Plugin::NodeResourcesFit => {
                    let lack = node_resources_fit::check(request, self.cluster.resources(node));
                    if lack.is_empty() {
                        continue;
                    }
                    return Some(PerPod::Lack(lack));
                }
                Plugin::PodTopologySpread | Plugin::InterPodAffinity => {
                    bound_filters.status(plugin, node)
                }
                Plugin::DynamicResources => self.dra_status(pod, node),
                // Its own record of the devices: the nominated pods add nothing to it.
                Plugin::OpenGpuShare => self.gpu_status(pod, node),
                // A static filter: the template's verdict if it is the one that failed.
                _ if failed_static == Some(plugin.name()) => return None,
                _ => continue,
            };
            if !status.is_success() {
                return Some(PerPod::Failed(status));
            }
        }
        None
    }

    /// A pending pod's outcome with FitError's message.
    pub(super) fn pending(&self, d: Diagnosis) -> PodOutcome {
        let message = diagnosis::fit_error_message(self.cluster.len(), &d);
        unschedulable(message, d)
    }

    /// PostFilter (DefaultPreemption) over the nodes preemption might help, then the final
    /// message and what becomes of the pod's nomination.
    pub(super) fn fail(
        &mut self,
        pod: &Pod,
        request: &PodRequest,
        (mut d, might_help): (Diagnosis, Vec<u32>),
    ) -> PodOutcome {
        // PostFilter plugins in the profile's order (`RunPostFilterPlugins`): their reasons
        // are joined until one succeeds; the last result that is not a no-op is the pod's
        // nomination, and without any PostFilter plugin the nomination is cleared.
        let post_filter = self.profile().framework.at(ExtensionPoint::PostFilter);
        let mut nominating = match post_filter.is_empty() {
            true => Nominating::Clear,
            false => Nominating::Noop,
        };
        let at = |plugin| post_filter.iter().position(|p| *p == plugin);
        let (dra_at, preemption_at) = (at(Plugin::DynamicResources), at(Plugin::DefaultPreemption));
        let mut reasons: Vec<String> = Vec::new();
        if self.explains(pod) {
            self.explain_failure(&d);
        }
        if dra_at.is_some() && (preemption_at.is_none() || dra_at < preemption_at) {
            reasons.extend(self.dra_post_filter(pod).map(str::to_string));
        }
        if preemption_at.is_some() {
            let result = preemption::post_filter(self, pod, request, &might_help);
            if let Some(mut p) = self.preemption_explained.take() {
                if let preemption::Result::Fail(msg, _) = &result {
                    p.message = Some(msg.clone());
                }
                if let Some(e) = self.explaining.as_mut() {
                    e.preemption = Some(p);
                }
            }
            match result {
                preemption::Result::Preempt {
                    node,
                    victims,
                    pdb_violations,
                } => return self.preempted_for(d, node, victims, pdb_violations),
                preemption::Result::Fail(msg, result) => {
                    reasons.push(msg);
                    if result != Nominating::Noop {
                        nominating = result;
                    }
                }
            }
            if dra_at > preemption_at {
                reasons.extend(self.dra_post_filter(pod).map(str::to_string));
            }
        }
        // No PostFilter plugin: the FitError alone.
        d.post_filter_msg = (!reasons.is_empty()).then(|| reasons.join(", "));
        PodOutcome {
            nominating,
            ..self.pending(d)
        }
    }

    /// DefaultPreemption chose `node` and its victims. A snapshot takes them off and binds
    /// the pod there; over time the pod is nominated to the node and stays pending with the
    /// FitError of its cycle (the PostFilter succeeded: no message of its own), while its
    /// victims terminate.
    fn preempted_for(
        &mut self,
        d: Diagnosis,
        node: usize,
        victims: Vec<(usize, usize)>,
        pdb_violations: usize,
    ) -> PodOutcome {
        let mut outcome = match self.victims_terminate {
            true => PodOutcome {
                nominating: Nominating::Set(node),
                ..self.pending(d)
            },
            false => {
                for &(n, v) in &victims {
                    self.unbind(n, v);
                }
                scheduled(node)
            }
        };
        outcome.victims = victims.into_iter().map(|(_, v)| v).collect();
        outcome.pdb_violations = pdb_violations;
        outcome
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
        nominating: Nominating::Noop,
    }
}

pub(super) fn unschedulable(message: String, diagnosis: Diagnosis) -> PodOutcome {
    PodOutcome {
        phase: PodPhase::Unschedulable,
        node: None,
        message,
        diagnosis: Some(Arc::new(diagnosis)),
        victims: Vec::new(),
        pdb_violations: 0,
        gang: None,
        evaluated: None,
        nominating: Nominating::Noop,
    }
}
