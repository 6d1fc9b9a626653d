//! Templates: the Filter results and static scores of one distinct pod spec on every node,
//! computed once (the per-pod Filter pass over them is in [`super::walk`]).

use super::*;
use crate::model::shared::Shared;
use crate::sched::device_room::RankedNodes;

/// Each node's static verdict (an index into the template's statuses, or `PASS`): one per
/// node, or, for a pod NodeAffinity's PreFilter narrows to a few nodes (a DaemonSet's pod
/// names one), those nodes' verdicts and `absent` for every other node, so that thousands of
/// such templates do not each hold a verdict per node.
#[derive(Clone)]
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

impl Template {
    /// A template for a request on `statics`: no node's fit or resource score known yet.
    fn new(statics: usize, template: &StaticTemplate) -> Template {
        let n = template.candidates.len();
        Template {
            statics,
            seen_version: vec![u32::MAX; n],
            resources: vec![NOT_FEASIBLE; n],
        }
    }

    /// The memory it holds, about.
    fn bytes(&self) -> usize {
        self.seen_version.len() * 4 + self.resources.len() * 8 + std::mem::size_of::<Template>()
    }
}

impl StaticTemplate {
    /// The memory it holds, about.
    fn bytes(&self) -> usize {
        let verdicts = match &self.static_verdict {
            StaticVerdicts::Dense(v) => v.len() * 2,
            StaticVerdicts::Narrowed { nodes, .. } => nodes.len() * 8,
        };
        let scan = self.scan.as_ref().map_or(0, |s| s.len() * 4);
        verdicts
            + scan
            + self.candidate_slots.bytes()
            + self.candidates.len() * std::mem::size_of::<Candidate>()
            + self.resolvable_static.len() * 4
            + std::mem::size_of::<StaticTemplate>()
    }
}

impl<'a> Scheduler<'a> {
    /// Drops every template once they hold more than [`TEMPLATE_BYTES_KEPT`], between cycles
    /// (nothing else holds a template's index then but the failures, dropped with them).
    pub(super) fn trim_templates(&mut self) {
        if self.template_bytes <= TEMPLATE_BYTES_KEPT {
            return;
        }
        self.templates.clear();
        self.static_templates.clear();
        self.template_index = TemplateIndex::default();
        self.template_bytes = 0;
        self.failures.clear();
    }

    /// The template (distinct scheduling-relevant spec and request, per profile) of a pod,
    /// built on first use.
    pub(super) fn template_for(&mut self, pod: &Pod) -> usize {
        self.template_of(None, pod)
    }

    /// [`Self::template_for`] the pod with id `id`, remembered for its next attempts.
    pub(super) fn template_of(&mut self, id: Option<usize>, pod: &Pod) -> usize {
        let profile = self.current;
        let index = &mut self.template_index;
        // Pods of one job come one after another: most often the last pod's template is it.
        let known = id.and_then(|id| index.by_pod.get(&id).copied());
        for t in [known, index.last].into_iter().flatten() {
            if index.fields[t].same_template(profile, pod) {
                index.last = Some(t);
                if let Some(id) = id.filter(|_| known != Some(t)) {
                    index.by_pod.insert(id, t);
                }
                return t;
            }
        }
        let t = self.template_by_fields(pod);
        if let Some(id) = id {
            self.template_index.by_pod.insert(id, t);
        }
        t
    }

    /// A pod forgotten by the scheduler: its remembered template goes with it.
    pub(super) fn forget_template_of(&mut self, id: usize) {
        self.template_index.by_pod.remove(&id);
    }

    /// The template of a pod's fields, found by their hash or built.
    fn template_by_fields(&mut self, pod: &Pod) -> usize {
        let profile = self.current;
        let (static_hash, hash) = TemplateIndex::hashes(profile, pod);
        let t = match self
            .template_index
            .find(hash, |f| f.same_template(profile, pod))
        {
            Some(t) => t,
            None => {
                // The static filters and scores do not read the requests: a pod that differs
                // from a known one only there shares its template's static part, with no
                // resource verdict cached (a trace's pods mostly differ only in their requests).
                let base =
                    (self.template_index).find_static(static_hash, |f| f.same_static(profile, pod));
                let statics = match base {
                    Some(base) => self.templates[base].statics,
                    None => {
                        let template = self.build_template(pod);
                        self.template_bytes += template.bytes();
                        self.static_templates.push(template);
                        self.static_templates.len() - 1
                    }
                };
                let template = Template::new(statics, &self.static_templates[statics]);
                self.template_bytes += template.bytes();
                self.templates.push(template);
                let t = self.templates.len() - 1;
                let fields = TemplateFields::of(profile, pod);
                (self.template_index).add(t, fields, hash, base.is_none().then_some(static_hash));
                t
            }
        };
        self.template_index.last = Some(t);
        t
    }

    /// The static part of template `t`.
    #[inline]
    pub(super) fn statics(&self, t: usize) -> &StaticTemplate {
        &self.static_templates[self.templates[t].statics]
    }

    pub(super) fn build_template(&self, pod: &Pod) -> StaticTemplate {
        let config = self.config;
        let profile = self.profile();
        let added = profile.added_affinity.as_ref();
        let n = self.cluster.len();
        let mut template = StaticTemplate {
            pre_filter_reject: None,
            static_verdict: StaticVerdicts::Dense(Vec::new()),
            absent: PASS,
            statuses: Vec::new(),
            static_counts: Vec::new(),
            resolvable_static: Vec::new(),
            candidates: Vec::new(),
            scan_len: 0,
            scan: None,
            candidate_slots: Default::default(),
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
        let intern_absent = |template: &mut StaticTemplate, index: &mut HashMap<Status, u16>| {
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
        let slot = |c: &Candidate| self.tree_position[c.node as usize] as usize;
        template.candidate_slots = RankedNodes::new(n, template.candidates.iter().map(slot));
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
}

/// Finds the template of a pod by the fields it depends on: they are hashed in place (no key
/// is written out, as a pod's cycle asks for its template every time) and compared with each
/// template's own.
#[derive(Default)]
pub(super) struct TemplateIndex {
    /// Per template, by index: the profile and pod fields it was built for.
    fields: Vec<TemplateFields>,
    /// The hash of (profile, fields) → the templates with it.
    by_fields: HashMap<u64, Vec<usize>>,
    /// The hash of (profile, static fields) → the first template built for each.
    by_static: HashMap<u64, Vec<usize>>,
    /// The template found last.
    last: Option<usize>,
    /// Pod id → the template found for it: a pod tried again and again (a congested replay)
    /// is matched by its fields once. Checked against the pod's fields on use.
    by_pod: HashMap<usize, usize>,
}

impl TemplateIndex {
    /// The hashes of the pod's static fields, and of all its template's fields, with the
    /// profile.
    fn hashes(profile: usize, pod: &Pod) -> (u64, u64) {
        use std::hash::{BuildHasher, Hash, Hasher};
        let mut h = foldhash::fast::FixedState::default().build_hasher();
        profile.hash(&mut h);
        pod.node_name.hash(&mut h);
        pod.node_selector.hash(&mut h);
        for t in &pod.tolerations {
            (
                &t.key,
                &t.operator,
                &t.value,
                &t.effect,
                t.toleration_seconds,
            )
                .hash(&mut h);
        }
        if let Some(a) = node_affinity_of(pod) {
            let required = a
                .required_during_scheduling_ignored_during_execution
                .as_ref();
            for term in required.iter().flat_map(|r| &r.node_selector_terms) {
                hash_term(term, &mut h);
            }
            for term in a
                .preferred_during_scheduling_ignored_during_execution
                .iter()
                .flatten()
            {
                term.weight.hash(&mut h);
                hash_term(&term.preference, &mut h);
            }
        }
        let static_hash = h.finish();
        pod.requests.hash(&mut h);
        pod.score_requests.hash(&mut h);
        (static_hash, h.finish())
    }

    fn find(&self, hash: u64, same: impl Fn(&TemplateFields) -> bool) -> Option<usize> {
        let ts = self.by_fields.get(&hash)?;
        ts.iter().copied().find(|&t| same(&self.fields[t]))
    }

    fn find_static(&self, hash: u64, same: impl Fn(&TemplateFields) -> bool) -> Option<usize> {
        let ts = self.by_static.get(&hash)?;
        ts.iter().copied().find(|&t| same(&self.fields[t]))
    }

    /// Files template `t` (the next index) under its fields' hash, and under `static_hash`
    /// when it is the first template of its static fields.
    fn add(&mut self, t: usize, fields: TemplateFields, hash: u64, static_hash: Option<u64>) {
        debug_assert_eq!(t, self.fields.len());
        self.fields.push(fields);
        self.by_fields.entry(hash).or_default().push(t);
        if let Some(h) = static_hash {
            self.by_static.entry(h).or_default().push(t);
        }
    }
}

/// Hashes the requirements of a node selector term (what a node affinity's terms read).
fn hash_term(term: &k8s_openapi::api::core::v1::NodeSelectorTerm, h: &mut impl std::hash::Hasher) {
    use std::hash::Hash;
    let requirements = [&term.match_expressions, &term.match_fields];
    for (i, list) in requirements.into_iter().enumerate() {
        for r in list.iter().flatten() {
            (i, &r.key, &r.operator, &r.values).hash(h);
        }
    }
}

fn node_affinity_of(pod: &Pod) -> Option<&k8s_openapi::api::core::v1::NodeAffinity> {
    pod.affinity.as_ref().and_then(|a| a.node_affinity.as_ref())
}

/// The fields of a pod its template depends on, with the profile (the key of
/// `template_for`). It holds the pod's own shared fields ([`Shared`]), so that a pod that
/// shares them with the template's (a trace's pods of one shape do) compares without a walk.
pub(super) struct TemplateFields {
    profile: usize,
    node_name: Option<String>,
    node_selector: Shared<BTreeMap<String, String>>,
    /// The pod's affinity: its node affinity is what the template reads.
    affinity: Shared<Option<k8s_openapi::api::core::v1::Affinity>>,
    tolerations: Vec<k8s_openapi::api::core::v1::Toleration>,
    requests: Shared<crate::model::resources::ResourceList>,
    score_requests: Shared<crate::model::resources::ResourceList>,
}

impl TemplateFields {
    fn of(profile: usize, pod: &Pod) -> Self {
        TemplateFields {
            profile,
            node_name: pod.node_name.clone(),
            node_selector: pod.node_selector.share(),
            affinity: pod.affinity.share(),
            tolerations: pod.tolerations.clone(),
            requests: pod.requests.share(),
            score_requests: pod.score_requests.share(),
        }
    }

    /// The static filters and scores read the same of `pod` with `profile`.
    fn same_static(&self, profile: usize, pod: &Pod) -> bool {
        let node_affinity = || {
            self.affinity.shares_with(&pod.affinity)
                || (self.affinity.as_ref()).and_then(|a| a.node_affinity.as_ref())
                    == node_affinity_of(pod)
        };
        self.profile == profile
            && self.node_name == pod.node_name
            && self.node_selector == pod.node_selector
            && node_affinity()
            && self.tolerations == pod.tolerations
    }

    fn same_template(&self, profile: usize, pod: &Pod) -> bool {
        self.same_static(profile, pod)
            && self.requests == pod.requests
            && self.score_requests == pod.score_requests
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::objects::{node_from_k8s, pod_from_k8s};

    fn node(name: &str, zone: &str) -> Node {
        let k = serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {"zone": zone}},
            "status": {"allocatable": {"cpu": "4", "pods": "110"}},
        }))
        .unwrap();
        node_from_k8s(&k, "", &mut Vec::new())
    }

    fn pod(zone: &str) -> Pod {
        let k = serde_json::from_value(json!({
            "metadata": {"name": "p", "namespace": "ns"},
            "spec": {
                "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}],
                "nodeSelector": {"zone": zone},
            },
        }))
        .unwrap();
        pod_from_k8s(&k, "", &Default::default(), &mut Vec::new())
    }

    /// A pod's template is remembered by its id, and checked against its fields on every use:
    /// the same id with another node selector (a replay reuses ids of pods gone) gets the
    /// template of its new fields, not the one remembered.
    #[test]
    fn a_pod_id_remembered_with_other_fields_gets_the_template_of_its_own() {
        let config = SchedulerConfig::default();
        let (a, b) = (pod("a"), pod("b"));
        let cluster = Cluster::new(vec![node("n-a", "a"), node("n-b", "b")], &[]);
        let pods = [a.clone()];
        let mut s = Scheduler::new(cluster, &config, &pods, &[]);
        let first = s.schedule_one(0, &a);
        assert_eq!(first.node, Some(0));
        let again = s.schedule_one(0, &b);
        assert_eq!(again.node, Some(1), "{}", again.message);
        assert_ne!(s.template_of(Some(0), &a), s.template_of(Some(0), &b));
    }
}
