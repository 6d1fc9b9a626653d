//! Templates: the Filter results and static scores of one distinct pod spec on every node,
//! computed once, and the per-pod Filter pass over them (`findNodesThatPassFilters`).

use super::*;

/// Each node's static verdict (an index into the template's statuses, or `PASS`): one per
/// node, or, for a pod NodeAffinity's PreFilter narrows to a few nodes (a DaemonSet's pod
/// names one), those nodes' verdicts and `absent` for every other node, so that thousands of
/// such templates do not each hold a verdict per node.
pub(super) enum StaticVerdicts {
    Dense(Vec<u16>),
    /// `nodes` sorted by node index.
    Narrowed {
        absent: u16,
        nodes: Vec<(u32, u16)>,
    },
}

impl StaticVerdicts {
    pub(super) fn get(&self, node: usize) -> u16 {
        match self {
            StaticVerdicts::Dense(v) => v[node],
            StaticVerdicts::Narrowed { absent, nodes } => {
                match nodes.binary_search_by_key(&(node as u32), |&(n, _)| n) {
                    Ok(i) => nodes[i].1,
                    Err(_) => *absent,
                }
            }
        }
    }

    /// One verdict per node of a cluster of `n` nodes.
    pub(super) fn to_vec(&self, n: usize) -> Vec<u16> {
        match self {
            StaticVerdicts::Dense(v) => v.clone(),
            StaticVerdicts::Narrowed { absent, nodes } => {
                let mut v = vec![*absent; n];
                for &(node, verdict) in nodes {
                    v[node as usize] = verdict;
                }
                v
            }
        }
    }
}

impl<'a> Scheduler<'a> {
    /// The template (distinct scheduling-relevant spec and request, per profile) of a pod,
    /// built on first use.
    pub(super) fn template_for(&mut self, pod: &Pod) -> usize {
        // Pods of one job come one after another: most often the last pod's template is it.
        if let Some((profile, last, t)) = &self.last_template
            && *profile == self.current
            && last.same_template(pod)
        {
            return *t;
        }
        let key = serde_json::to_string(&(
            self.current,
            &pod.node_name,
            &pod.node_selector,
            pod.affinity.as_ref().and_then(|a| a.node_affinity.as_ref()),
            &pod.tolerations,
            &pod.requests,
            &pod.score_requests,
        ))
        .expect("pod fields serialize");
        let t = match self.template_index.get(&key) {
            Some(&t) => t,
            None => {
                let template = self.build_template(pod);
                self.templates.push(template);
                self.template_index.insert(key, self.templates.len() - 1);
                self.templates.len() - 1
            }
        };
        self.last_template = Some((self.current, TemplateFields::of(pod), t));
        t
    }

    pub(super) fn build_template(&self, pod: &Pod) -> Template {
        let config = self.config;
        let profile = self.profile();
        let added = profile.added_affinity.as_ref();
        let n = self.cluster.len();
        let mut template = Template {
            pre_filter_reject: None,
            static_verdict: StaticVerdicts::Dense(Vec::new()),
            absent: PASS,
            statuses: Vec::new(),
            static_counts: Vec::new(),
            resolvable_static: Vec::new(),
            candidates: Vec::new(),
            scan_len: 0,
            scan: None,
        };
        let pre_filter = match profile
            .framework
            .runs(ExtensionPoint::PreFilter, Plugin::NodeAffinity)
        {
            true => node_affinity::pre_filter(pod, added),
            false => node_affinity::PreFilter::Skip,
        };
        let narrowed = match pre_filter {
            node_affinity::PreFilter::Reject(status) => {
                template.pre_filter_reject = Some(status);
                template.static_verdict = StaticVerdicts::Dense(vec![PASS; n]);
                return template;
            }
            node_affinity::PreFilter::NodeNames(names) => Some(names),
            _ => None,
        };
        let mut status_index: HashMap<Status, u16> = HashMap::default();
        // The nodes the static filters run on, in node order: those a PreFilter result names,
        // or all.
        let nodes: Vec<usize> = match &narrowed {
            Some(names) => {
                let mut named: Vec<usize> = (names.iter())
                    .filter_map(|name| self.cluster.index_of(name))
                    .collect();
                named.sort_unstable();
                named.dedup();
                named
            }
            None => (0..n).collect(),
        };
        // Nodes a PreFilter result leaves out get upstream's "absent node" status, interned
        // where the first of them comes in node order (statuses keep first-seen order).
        let first_absent = match narrowed {
            Some(_) => (0..n).find(|i| nodes.binary_search(i).is_err()),
            None => None,
        };
        let intern_absent = |template: &mut Template, index: &mut HashMap<Status, u16>| {
            if template.absent == PASS {
                let absent = Status::new(
                    Code::UnschedulableAndUnresolvable,
                    names::NODE_AFFINITY,
                    format!(
                        "node(s) didn't satisfy plugin(s) [{}]",
                        names::NODE_AFFINITY
                    ),
                );
                template.absent = intern(index, &mut template.statuses, absent);
            }
        };
        let mut verdicts: Vec<(u32, u16)> = Vec::with_capacity(nodes.len());
        for &i in &nodes {
            if first_absent.is_some_and(|a| a < i) {
                intern_absent(&mut template, &mut status_index);
            }
            let node = &self.cluster.nodes[i];
            let status = self.static_filters(pod, node);
            if status.is_success() {
                template.candidates.push(Candidate {
                    node: i as u32,
                    pos: self.tree_position[i],
                    affinity: node_affinity::score(pod, node, added),
                    taint: taint_toleration::score(pod, node, &config.feature_gates),
                    seen_version: u32::MAX,
                    resources: NOT_FEASIBLE,
                });
                verdicts.push((i as u32, PASS));
            } else {
                let v = intern(&mut status_index, &mut template.statuses, status);
                verdicts.push((i as u32, v));
            }
        }
        if first_absent.is_some() {
            intern_absent(&mut template, &mut status_index);
        }
        // The Filter pass walks those nodes in the node tree's order (upstream walks a
        // PreFilter result's names in Go map order, which varies): each candidate's position
        // in that walk.
        template.scan_len = nodes.len() as u32;
        if narrowed.is_some() {
            let mut ranks: Vec<u32> = nodes.iter().map(|&i| self.tree_position[i]).collect();
            ranks.sort_unstable();
            for c in &mut template.candidates {
                c.pos = ranks.partition_point(|&r| r < c.pos) as u32;
            }
        }
        let in_order = template.candidates.is_sorted_by_key(|c| c.pos);
        template.scan = (!in_order).then(|| {
            let mut order: Vec<u32> = (0..template.candidates.len() as u32).collect();
            order.sort_unstable_by_key(|&i| template.candidates[i as usize].pos);
            order
        });
        template.static_counts = vec![0; template.statuses.len()];
        if template.absent != PASS {
            template.static_counts[template.absent as usize] = n - nodes.len();
        }
        for &(i, v) in &verdicts {
            if v != PASS {
                template.static_counts[v as usize] += 1;
                if diagnosis::preemption_might_help(&template.statuses[v as usize]) {
                    template.resolvable_static.push(i);
                }
            }
        }
        // The absent status is UnschedulableAndUnresolvable: preemption never helps there.
        template.static_verdict = match narrowed {
            Some(_) => StaticVerdicts::Narrowed {
                absent: template.absent,
                nodes: verdicts,
            },
            None => StaticVerdicts::Dense(verdicts.into_iter().map(|(_, v)| v).collect()),
        };
        template
    }

    /// The profile's filters that do not depend on what is bound, in the profile's order;
    /// first failure wins.
    pub(super) fn static_filters(&self, pod: &Pod, node: &Node) -> Status {
        let (c, p) = (self.config, self.profile());
        for &plugin in &self.compiled().filters {
            let status = match plugin {
                Plugin::NodeUnschedulable => {
                    node_unschedulable::filter(pod, node, &c.feature_gates)
                }
                Plugin::NodeName => node_name::filter(pod, node),
                Plugin::TaintToleration => {
                    taint_toleration::filter(pod, node, &c.feature_gates, c.message_format)
                }
                Plugin::NodeAffinity => node_affinity::filter(pod, node, p.added_affinity.as_ref()),
                // Resources and bound pods: per pod, see `find_feasible` and `diagnose`.
                _ => continue,
            };
            if !status.is_success() {
                return status;
            }
        }
        Status::success()
    }

    /// `findNodesThatPassFilters`: walks the template's candidates in the node tree's order
    /// from `nextStartNodeIndex`, keeping those that pass the per-pod filters (resources, the
    /// bound pods' filters, DynamicResources) with their resource scores, until it has found
    /// `numFeasibleNodesToFind` of them. Returns how many nodes it processed (the candidates
    /// and the nodes between them, which failed a static filter), or the first Filter error.
    ///
    /// A template's pods share one request, so a node's fit and resource score are cached on
    /// the candidate and recomputed only when the node's usage changed since.
    pub(super) fn find_feasible(
        &mut self,
        pod: &Pod,
        t: usize,
        request: &PodRequest,
        bound_filters: &BoundPodFilters,
    ) -> Result<usize, (usize, String)> {
        let mut candidates = std::mem::take(&mut self.templates[t].candidates);
        let mut feasible = std::mem::take(&mut self.feasible);
        feasible.clear();
        let template = &self.templates[t];
        let len = template.scan_len as usize;
        let (start, to_find) = (self.next_start, self.nodes_to_find(len));
        let compiled = &self.profiles[self.current];
        let (filter_fit, weights) = (compiled.fit_filter, compiled.weights);
        let balanced = weights.balanced_allocation != 0
            && match &compiled.balanced {
                Some(b) => !b.skips(request),
                None => !node_resources_balanced_allocation::skips(request),
            };
        let dra_filters = self.dra_filters();
        // One node of the walk: `Some` ends it, with the nodes processed or the error.
        let mut visit = |c: &mut Candidate| -> Option<Result<usize, (usize, String)>> {
            let node = c.node as usize;
            let version = self.cluster.version(node);
            if c.seen_version != version {
                c.seen_version = version;
                let res = self.cluster.resources(node);
                c.resources = if !filter_fit || node_resources_fit::fits(request, res) {
                    let mut score = 0;
                    if weights.node_resources_fit != 0 {
                        score += weights.node_resources_fit
                            * match &compiled.fit {
                                Some(f) => f.score(request, res),
                                None => node_resources_fit::score_least_allocated(request, res),
                            };
                    }
                    if balanced {
                        score += weights.balanced_allocation
                            * match &compiled.balanced {
                                Some(b) => b.score(request, res),
                                None => node_resources_balanced_allocation::score(request, res),
                            };
                    }
                    score
                } else {
                    NOT_FEASIBLE
                };
            }
            if c.resources == NOT_FEASIBLE || !bound_filters.pass(node) {
                return None;
            }
            if dra_filters {
                match self.dra_passes(pod, node) {
                    Ok(true) => {}
                    Ok(false) => return None,
                    Err(e) => {
                        let processed = sampling::processed_until(start, c.pos as usize, len);
                        return Some(Err((processed - 1, e)));
                    }
                }
            }
            feasible.push(Feasible {
                node: c.node,
                affinity: c.affinity,
                taint: c.taint,
                resources: c.resources,
            });
            (feasible.len() == to_find)
                .then(|| Ok(sampling::processed_until(start, c.pos as usize, len)))
        };
        let end = if to_find > candidates.len() && !dra_filters {
            // Enough can never be found: the whole walk, in node order (which it needs not).
            candidates.iter_mut().for_each(|c| {
                visit(c);
            });
            None
        } else {
            let offset = if len == 0 { 0 } else { (start % len) as u32 };
            match &template.scan {
                None => {
                    let first = candidates.partition_point(|c| c.pos < offset);
                    let (before, after) = candidates.split_at_mut(first);
                    (after.iter_mut().find_map(&mut visit))
                        .or_else(|| before.iter_mut().find_map(&mut visit))
                }
                Some(order) => {
                    let first = order.partition_point(|&i| candidates[i as usize].pos < offset);
                    (order[first..].iter().chain(&order[..first]))
                        .find_map(|&i| visit(&mut candidates[i as usize]))
                }
            }
        };
        self.templates[t].candidates = candidates;
        self.feasible = feasible;
        end.unwrap_or(Ok(len))
    }

    /// Whether `node` passes every filter for the pod in the cycle (`evaluateNominatedNode`'s
    /// Filter on one node). A node NodeAffinity's PreFilter result leaves out fails its
    /// Filter too: both read the same terms.
    pub(super) fn passes_filters(
        &self,
        pod: &Pod,
        t: usize,
        request: &PodRequest,
        bound_filters: &BoundPodFilters,
        node: usize,
    ) -> Result<bool, String> {
        let fits = || {
            !self.compiled().fit_filter
                || node_resources_fit::fits(request, self.cluster.resources(node))
        };
        if self.templates[t].static_verdict.get(node) != PASS
            || !fits()
            || !bound_filters.pass(node)
        {
            return Ok(false);
        }
        match self.dra_filters() {
            true => self.dra_passes(pod, node),
            false => Ok(true),
        }
    }

    /// Whether the Filter pass that started at `nextStartNodeIndex` and processed `processed`
    /// nodes came to `node`.
    pub(super) fn walked(&self, t: usize, node: usize, processed: usize) -> bool {
        let template = &self.templates[t];
        let len = template.scan_len as usize;
        let tree = &self.tree_position;
        let position = match &template.static_verdict {
            StaticVerdicts::Dense(_) => tree[node] as usize,
            StaticVerdicts::Narrowed { nodes, .. } => {
                if nodes
                    .binary_search_by_key(&(node as u32), |&(n, _)| n)
                    .is_err()
                {
                    return false;
                }
                (nodes.iter())
                    .filter(|&&(i, _)| tree[i as usize] < tree[node])
                    .count()
            }
        };
        if len == 0 {
            return false;
        }
        (position + len - self.next_start % len) % len < processed
    }

    /// `numFeasibleNodesToFind` for a walk over `len` nodes with the current profile: 1 for a
    /// profile without Score plugins (`hasScoring`; schedsim has no extenders), all of them
    /// when the run examines every node.
    fn nodes_to_find(&self, len: usize) -> usize {
        let profile = self.profile();
        match self.config.node_sampling {
            NodeSampling::All => usize::MAX,
            NodeSampling::Upstream if profile.framework.at(ExtensionPoint::Score).is_empty() => 1,
            NodeSampling::Upstream => {
                sampling::num_feasible_nodes_to_find(profile.percentage_of_nodes_to_score, len)
            }
        }
    }
}

/// The fields of a pod its template depends on (the key of `template_for`).
pub(super) struct TemplateFields {
    node_name: Option<String>,
    node_selector: BTreeMap<String, String>,
    node_affinity: Option<k8s_openapi::api::core::v1::NodeAffinity>,
    tolerations: Vec<k8s_openapi::api::core::v1::Toleration>,
    requests: crate::model::resources::ResourceList,
    score_requests: crate::model::resources::ResourceList,
}

impl TemplateFields {
    fn of(pod: &Pod) -> Self {
        TemplateFields {
            node_name: pod.node_name.clone(),
            node_selector: pod.node_selector.clone(),
            node_affinity: pod.affinity.as_ref().and_then(|a| a.node_affinity.clone()),
            tolerations: pod.tolerations.clone(),
            requests: pod.requests.clone(),
            score_requests: pod.score_requests.clone(),
        }
    }

    fn same_template(&self, pod: &Pod) -> bool {
        self.node_name == pod.node_name
            && self.node_selector == pod.node_selector
            && self.node_affinity.as_ref()
                == pod.affinity.as_ref().and_then(|a| a.node_affinity.as_ref())
            && self.tolerations == pod.tolerations
            && self.requests == pod.requests
            && self.score_requests == pod.score_requests
    }
}
