//! The cycle's view of bound pods: binding and unbinding (resources, spread and affinity
//! counts kept current), and the PreFilter states of the plugins that read bound pods
//! (PodTopologySpread, InterPodAffinity), also without some pods for preemption's what-ifs.

use super::*;
use crate::model::shared::Shared;
use k8s_openapi::api::core::v1::{NodeAffinity, Toleration, TopologySpreadConstraint};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;

impl<'a> Scheduler<'a> {
    pub(crate) fn bind(&mut self, node: usize, pod_id: usize, pod: &Pod) {
        self.bind_holding(node, pod_id, pod, None);
    }

    /// Binds a pod that held `gpus` before (its node list replaced): it keeps them.
    pub(super) fn bind_holding(
        &mut self,
        node: usize,
        pod_id: usize,
        pod: &Pod,
        gpus: Option<&gpu_share::GpuTaken>,
    ) {
        let request = PodRequest::new(&self.cluster.table, pod);
        let gpus = self.reserve_gpus(node, pod, gpus);
        self.cluster.account(node, &request, 1);
        self.binds += 1;
        let started = (pod.start_time.clone(), self.binds);
        let mut b = self.count_in(node, pod_id, pod, request, started);
        b.gpus = gpus;
        self.bound[node].push(b);
    }

    /// The GPU indices a bound pod holds on its node (`Open-Gpu-Share`'s Reserve).
    pub(crate) fn gpu_indices(&self, node: usize, pod_id: usize) -> Option<&[usize]> {
        let b = self.bound[node].iter().find(|b| b.pod == pod_id)?;
        b.gpus.as_ref().map(|g| g.devices.as_slice())
    }

    /// Counts a pod on its node in everything but the node's resources: its group of alike
    /// pods, the spread and affinity counts, the budgets. Returns its entry for `bound`.
    fn count_in(
        &mut self,
        node: usize,
        pod_id: usize,
        pod: &Pod,
        request: PodRequest,
        started: (Option<Time>, u64),
    ) -> Bound {
        self.changed(node);
        // Terminating pods make groups of their own: PodTopologySpread does not count them.
        let labels_signature =
            (self.signatures).of_labels(&pod.namespace, &pod.labels, pod.is_terminating());
        let terms_signature = self.signatures.of_terms(pod);
        let key = (labels_signature, terms_signature);
        if !self.groups.contains_key(&key) {
            (self.groups_in_namespace.entry(pod.namespace.clone()))
                .or_default()
                .push(key);
            for (k, v) in &pod.labels {
                self.groups_by_label.insert(&pod.namespace, k, v, key);
            }
        }
        let group = self.groups.entry(key).or_insert_with(|| AlikePods {
            pod: pod_id,
            terms: inter_pod_affinity::PodTerms::compile(pod),
            nodes: BTreeMap::new(),
        });
        // A replay forgets the pods that are gone: an empty group's representative may be.
        if group.nodes.is_empty() {
            group.pod = pod_id;
        }
        *group.nodes.entry(node).or_default() += 1;
        self.count_affinity(pod, 1);
        self.count_spread(pod, node, 1);
        self.budgets.count(pod_id, pod, 1);
        Bound {
            pod: pod_id,
            priority: pod.priority,
            request,
            started,
            group: key,
            gpus: None,
        }
    }

    /// A mutation of one node's pods.
    pub(super) fn changed(&mut self, node: usize) {
        self.mutations += 1;
        let max = 8 * self.cluster.len().max(1024);
        self.changes.record(self.mutations, node, max);
    }

    /// Removes a bound pod from its node (preemption).
    pub(crate) fn unbind(&mut self, node: usize, pod_id: usize) {
        if let Some(b) = self.take_off(node, pod_id) {
            let pod = self.pod_handle(pod_id);
            self.terminating.remove(&pod_id);
            // Its claims are no longer reserved for it (the resourceclaim controller).
            if self.dra.holds_claims(&pod) {
                self.dra.release(&pod, false);
            }
            self.elect_representative(b.group, pod_id);
        }
    }

    /// Takes a bound pod off its node, resources and counts; returns its entry.
    pub(super) fn take_off(&mut self, node: usize, pod_id: usize) -> Option<Bound> {
        let pos = self.bound[node].iter().position(|b| b.pod == pod_id)?;
        let b = self.bound[node].remove(pos);
        self.cluster.account(node, &b.request, -1);
        if let Some(gpus) = &b.gpus {
            self.release_gpus(node, gpus);
        }
        self.count_out(node, &b);
        Some(b)
    }

    /// Undoes [`Self::count_in`] for a pod's entry.
    fn count_out(&mut self, node: usize, b: &Bound) {
        self.changed(node);
        if let Some(g) = self.groups.get_mut(&b.group)
            && let Some(n) = g.nodes.get_mut(&node)
        {
            *n -= 1;
            if *n == 0 {
                g.nodes.remove(&node);
                if g.nodes.is_empty() && !self.config.reference_run {
                    self.emptied_groups.push(b.group);
                }
            }
        }
        let pod = self.pod_handle(b.pod);
        self.count_affinity(&pod, -1);
        self.count_spread(&pod, node, -1);
        self.budgets.count(b.pod, &pod, -1);
    }

    /// A bound pod starts terminating (a victim of preemption, deleted with its grace
    /// period): it keeps its node's resources and its start time, PodTopologySpread stops
    /// counting it, a PodDisruptionBudget no longer counts it healthy, and preemption sees it
    /// as `pod` says (`deletionTimestamp`, `DisruptionTarget`). It stays so until it leaves
    /// its node ([`Self::unbind`]).
    pub(crate) fn start_terminating(&mut self, node: usize, pod_id: usize, pod: Arc<Pod>) {
        let Some(pos) = self.bound[node].iter().position(|b| b.pod == pod_id) else {
            return;
        };
        let b = self.bound[node][pos].clone();
        self.count_out(node, &b);
        self.elect_representative(b.group, pod_id);
        self.terminating.insert(pod_id, Arc::clone(&pod));
        let mut entry = self.count_in(node, pod_id, &pod, b.request, b.started);
        entry.gpus = b.gpus;
        self.bound[node][pos] = entry;
    }

    /// Forgets the groups of bound pods that are empty, with the label and terms signatures
    /// only they used, once they are half of all groups: a replay's jobs each label their
    /// pods with their own name, so without this the groups grow with the trace (≈ 1 KB a
    /// job). A label set seen again gets a new signature, after the others: the plugins that
    /// read the groups only sum over them, so their order is no answer's.
    pub(super) fn forget_empty_groups(&mut self) {
        if self.emptied_groups.len() < EMPTY_GROUPS_KEPT.max(self.groups.len() / 2) {
            return;
        }
        let groups = &self.groups;
        let gone: std::collections::HashSet<(u32, u32), foldhash::fast::FixedState> =
            (self.emptied_groups.drain(..))
                .filter(|key| groups.get(key).is_some_and(|g| g.nodes.is_empty()))
                .collect();
        self.groups.retain(|key, _| !gone.contains(key));
        for keys in self.groups_in_namespace.values_mut() {
            keys.retain(|key| !gone.contains(key));
        }
        self.groups_in_namespace.retain(|_, keys| !keys.is_empty());
        self.groups_by_label.retain(|key| !gone.contains(key));
        let used: std::collections::HashSet<u32, foldhash::fast::FixedState> =
            (self.groups.keys()).flat_map(|&(l, t)| [l, t]).collect();
        self.signatures.retain(|n| used.contains(&n));
    }

    /// The group's representative left its node: another bound member of the group stands
    /// for it (a replay forgets pods that are gone, so the group must not point at one).
    pub(super) fn elect_representative(&mut self, group: (u32, u32), gone: usize) {
        let Some(g) = self.groups.get(&group) else {
            return;
        };
        if g.pod != gone {
            return;
        }
        let other = (g.nodes.keys())
            .flat_map(|&n| self.bound[n].iter())
            .find(|b| b.group == group && b.pod != gone)
            .map(|b| b.pod);
        if let (Some(other), Some(g)) = (other, self.groups.get_mut(&group)) {
            g.pod = other;
        }
    }

    /// Keeps the counts that tell whether InterPodAffinity has work to do.
    /// Keeps every spread's tallies of the pods it selects.
    /// Only the spreads of the pod's namespace that may select it are visited.
    pub(super) fn count_spread(&mut self, pod: &Pod, node: usize, sign: i64) {
        let ns = pod.namespace.as_str();
        let unlabelled = self
            .spreads_unlabelled
            .get(ns)
            .map_or(&[][..], Vec::as_slice);
        let labelled =
            (pod.labels.iter()).flat_map(|(k, v)| self.spreads_by_label.get(ns, k, v).iter());
        for &i in unlabelled.iter().chain(labelled) {
            let (spec, (filter, score)) = (&self.spreads[i], &mut self.tallies[i]);
            filter.add(&spec.filter, pod, node, sign);
            score.add(&spec.score, pod, node, sign);
        }
    }

    pub(super) fn count_affinity(&mut self, pod: &Pod, sign: isize) {
        let a = pod.affinity.as_ref();
        let anti = a
            .and_then(|a| a.pod_anti_affinity.as_ref())
            .is_some_and(|p| {
                p.required_during_scheduling_ignored_during_execution
                    .is_some()
            });
        let any = a.is_some_and(|a| a.pod_affinity.is_some() || a.pod_anti_affinity.is_some());
        self.bound_with_anti_affinity = self
            .bound_with_anti_affinity
            .saturating_add_signed(if anti { sign } else { 0 });
        self.bound_with_pod_affinity =
            self.bound_with_pod_affinity
                .saturating_add_signed(if any { sign } else { 0 });
    }

    /// A bound pod by id (workload pods count up from 0, existing pods down from `usize::MAX`;
    /// a replay's pods are [`Self::admit`]ted as they arrive).
    pub(crate) fn bound_pod(&self, id: usize) -> &Pod {
        if let Some(p) = self.terminating_pod(id) {
            return p;
        }
        match self.pods.get(id) {
            Some(p) => p,
            None => match self.live.get(&id) {
                Some(p) => p,
                None => &self.existing[usize::MAX - id],
            },
        }
    }

    /// A pod by id that outlives a change to the scheduler's state (see [`PodHandle`]).
    pub(crate) fn pod_handle(&self, id: usize) -> PodHandle<'a> {
        if let Some(p) = self.terminating_pod(id) {
            return PodHandle::Live(Arc::clone(p));
        }
        match self.pods.get(id) {
            Some(p) => PodHandle::Scenario(p),
            None => match self.live.get(&id) {
                Some(p) => PodHandle::Live(Arc::clone(p)),
                None => PodHandle::Scenario(&self.existing[usize::MAX - id]),
            },
        }
    }

    /// The pod as it terminates, if [`Self::start_terminating`] marked it.
    #[inline]
    pub(super) fn terminating_pod(&self, id: usize) -> Option<&Arc<Pod>> {
        match self.terminating.is_empty() {
            true => None,
            false => self.terminating.get(&id),
        }
    }

    /// A replay's pod arrives: the scheduler knows it by `id` from now on (its cycles, and
    /// its node's pods once bound). Ids must not collide with the scenario's pods.
    pub(crate) fn admit(&mut self, id: usize, pod: Arc<Pod>) {
        self.live.insert(id, pod);
    }

    /// A replay's pod is gone for good (finished, withdrawn): the scheduler forgets it. It
    /// must not be bound.
    pub(crate) fn forget(&mut self, id: usize) {
        self.live.remove(&id);
        self.terminating.remove(&id);
        self.removed_gates.remove(&id);
        self.forget_template_of(id);
    }

    /// The bound pods, grouped by alikeness, with their nodes.
    pub(super) fn bound_pods<'s>(
        &'s self,
        removed: &'s Removed,
    ) -> impl Iterator<Item = inter_pod_affinity::BoundGroup<'s>> + 's {
        self.groups
            .iter()
            .map(|(key, g)| (key, g, removed.nodes(key, g)))
            .filter(|(_, _, nodes)| !nodes.is_empty())
            .map(
                move |(&(labels, terms), g, nodes)| inter_pod_affinity::BoundGroup {
                    pod: self.bound_pod(g.pod),
                    terms: g.terms.as_ref(),
                    labels_signature: labels,
                    terms_signature: terms,
                    nodes,
                },
            )
    }

    /// The groups' counts with the pods `ids` taken off `node`: what PodTopologySpread and
    /// InterPodAffinity see when preemption asks whether evicting them helps (`RemovePod`).
    pub(super) fn removed(&self, node: usize, ids: &[usize]) -> Removed {
        let mut removed = Removed::default();
        for b in self.bound[node].iter().filter(|b| ids.contains(&b.pod)) {
            if self.bound_pod(b.pod).is_terminating() {
                removed.terminating.push((node, b.pod));
            }
            let nodes = removed
                .groups
                .entry(b.group)
                .or_insert_with(|| self.groups[&b.group].nodes.clone());
            if let Some(n) = nodes.get_mut(&node) {
                *n -= 1;
                if *n == 0 {
                    nodes.remove(&node);
                }
            }
        }
        removed
    }

    /// The pod's compiled topology spread constraints — its own, or the profile's defaults
    /// when a Service selects it — if it has any.
    pub(super) fn spread_for(&mut self, pod: &Pod) -> Option<Arc<SpreadSpec>> {
        let profile = self.profile();
        let defaults = match pod.topology_spread_constraints.is_empty() {
            true => Some(pod_topology_spread::default_constraints(
                pod,
                profile.spread_default_constraints.as_deref(),
                &self.services,
            )?),
            false => None,
        };
        let system_defaults = defaults.is_some() && profile.spread_default_constraints.is_none();
        let constraints = defaults
            .as_deref()
            .unwrap_or(&pod.topology_spread_constraints);
        // The labels matter only through the selectors and the pod's own match.
        let inputs = SpreadInputs {
            profile: self.current,
            namespace: &pod.namespace,
            system_defaults,
            dependence: pod_topology_spread::label_dependence(pod, constraints),
            constraints,
            node_selector: &pod.node_selector,
            node_affinity: pod.affinity.as_ref().and_then(|a| a.node_affinity.as_ref()),
            tolerations: &pod.tolerations,
        };
        // Pods of one job come one after another: most often the last pod's spec is it.
        if let Some((last, i)) = &self.last_spread
            && *last == inputs
        {
            return Some(Arc::clone(&self.spreads[*i]));
        }
        let key = serde_json::to_string(&inputs).expect("pod fields serialize");
        if let Some(&i) = self.spread_index.get(&key) {
            self.last_spread = Some((inputs.to_owned(), i));
            return Some(Arc::clone(&self.spreads[i]));
        }
        let mut topology = std::mem::take(&mut self.topology);
        let counted_nodes = &mut self.counted_nodes;
        let (nodes, gates) = (&self.cluster.nodes, &self.config.feature_gates);
        let mut compile = |action| {
            Arc::new(pod_topology_spread::Spread::compile(
                pod,
                constraints,
                system_defaults,
                action,
                nodes,
                gates,
                &mut topology,
                counted_nodes,
            ))
        };
        let (filter, score) = (compile("DoNotSchedule"), compile("ScheduleAnyway"));
        let spec = Arc::new(SpreadSpec {
            index: self.spreads.len(),
            label: pod_topology_spread::required_label([&*filter, &*score]),
            filter,
            score,
        });
        self.topology = topology;
        // From now on each bind updates its tallies; start them from what is bound.
        let none = Removed::default();
        let n = self.cluster.len();
        let groups = || self.spread_groups(&pod.namespace, spec.label.as_ref(), &none);
        self.tallies.push((
            pod_topology_spread::Tally::of(&spec.filter, n, groups()),
            pod_topology_spread::Tally::of(&spec.score, n, groups()),
        ));
        match &spec.label {
            Some((k, v)) => (self.spreads_by_label).insert(&pod.namespace, k, v, spec.index),
            None => (self.spreads_unlabelled.entry(pod.namespace.clone()))
                .or_default()
                .push(spec.index),
        }
        self.spreads.push(Arc::clone(&spec));
        self.spread_index.insert(key, spec.index);
        self.last_spread = Some((inputs.to_owned(), spec.index));
        Some(spec)
    }

    /// PreFilter of PodTopologySpread and InterPodAffinity, the plugins that count bound pods;
    /// also the pod's compiled spread constraints, for Score.
    pub(super) fn pre_filter_bound(
        &mut self,
        pod: &Pod,
    ) -> (Option<Arc<SpreadSpec>>, BoundPodFilters) {
        self.pre_filter_bound_without(pod, &Removed::default())
    }

    /// PodTopologySpread's and InterPodAffinity's verdict on `node` for `pod` if the bound
    /// pods `ids` were gone from it (preemption's what-if, `RemovePod` upstream).
    pub(crate) fn bound_filters_without(
        &mut self,
        pod: &Pod,
        node: usize,
        ids: &[usize],
    ) -> Status {
        let removed = self.removed(node, ids);
        let (_, filters) = self.pre_filter_bound_without(pod, &removed);
        filters.filter(node)
    }

    /// [`Self::pre_filter_bound`] with some bound pods taken away (see [`Self::removed`]).
    pub(super) fn pre_filter_bound_without(
        &mut self,
        pod: &Pod,
        removed: &Removed,
    ) -> (Option<Arc<SpreadSpec>>, BoundPodFilters) {
        let spread = self.spread_for(pod);
        let filters = &self.compiled().filters;
        let at = |plugin| filters.iter().position(|p| *p == plugin);
        let (spread_at, affinity_at) =
            (at(Plugin::PodTopologySpread), at(Plugin::InterPodAffinity));
        let filters = BoundPodFilters {
            spread_first: spread_at < affinity_at || affinity_at.is_none(),
            spread: spread
                .as_ref()
                .filter(|sp| spread_at.is_some() && !sp.filter.is_empty())
                .map(|sp| {
                    let tally = match removed.groups.is_empty() {
                        true => None,
                        false => {
                            let mut tally = pod_topology_spread::Tally::of(
                                &sp.filter,
                                self.cluster.len(),
                                self.spread_groups(&pod.namespace, sp.label.as_ref(), removed),
                            );
                            for &(node, id) in &removed.terminating {
                                tally.remove_terminating(&sp.filter, self.bound_pod(id), node);
                            }
                            Some(tally)
                        }
                    };
                    let tally = tally.as_ref().unwrap_or(&self.tallies[sp.index].0);
                    pod_topology_spread::pre_filter(&sp.filter, tally)
                }),
            affinity: (affinity_at.is_some()
                && inter_pod_affinity::relevant(pod, self.bound_with_anti_affinity > 0))
            .then(|| {
                self.with_topology(|s, topo| {
                    let nodes = &s.cluster.nodes;
                    inter_pod_affinity::pre_filter(
                        pod,
                        s.bound_pods(removed),
                        &s.config.namespaces,
                        topo,
                        nodes,
                    )
                })
            }),
        };
        (spread, filters)
    }

    /// Runs `f` with the topology index lent out, so it can grow while `f` reads the rest.
    pub(super) fn with_topology<T>(
        &mut self,
        f: impl FnOnce(&Self, &mut inter_pod_affinity::Topology) -> T,
    ) -> T {
        let mut topo = std::mem::take(&mut self.topology);
        let out = f(self, &mut topo);
        self.topology = topo;
        out
    }

    /// The bound pods of `namespace` grouped by alikeness, as PodTopologySpread counts them
    /// (`countPodsMatchSelector` counts the incoming pod's namespace only); with `label`,
    /// only those carrying it.
    pub(super) fn spread_groups<'s>(
        &'s self,
        namespace: &str,
        label: Option<&(String, String)>,
        removed: &'s Removed,
    ) -> impl Iterator<Item = pod_topology_spread::BoundGroup<'s>> + 's {
        let keys = match label {
            Some((k, v)) => self.groups_by_label.get(namespace, k, v),
            None => (self.groups_in_namespace.get(namespace)).map_or(&[][..], Vec::as_slice),
        };
        (keys.iter())
            .map(|key| (key, &self.groups[key]))
            .map(|(key, g)| (g, removed.nodes(key, g)))
            .filter(|(_, nodes)| !nodes.is_empty())
            .map(|(g, nodes)| pod_topology_spread::BoundGroup {
                pod: self.bound_pod(g.pod),
                nodes,
            })
    }
}

/// What a pod's compiled spread constraints depend on (see [`Scheduler::spread_for`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub(super) struct SpreadInputs<'p> {
    profile: usize,
    namespace: &'p str,
    system_defaults: bool,
    dependence: (Vec<Option<LabelSelector>>, Vec<bool>),
    constraints: &'p [TopologySpreadConstraint],
    node_selector: &'p BTreeMap<String, String>,
    node_affinity: Option<&'p NodeAffinity>,
    tolerations: &'p [Toleration],
}

/// [`SpreadInputs`] kept past the pod they were read from.
#[derive(Debug)]
pub(super) struct OwnedSpreadInputs {
    profile: usize,
    namespace: String,
    system_defaults: bool,
    dependence: (Vec<Option<LabelSelector>>, Vec<bool>),
    constraints: Vec<TopologySpreadConstraint>,
    node_selector: BTreeMap<String, String>,
    node_affinity: Option<NodeAffinity>,
    tolerations: Vec<Toleration>,
}

impl SpreadInputs<'_> {
    fn to_owned(&self) -> OwnedSpreadInputs {
        OwnedSpreadInputs {
            profile: self.profile,
            namespace: self.namespace.to_string(),
            system_defaults: self.system_defaults,
            dependence: self.dependence.clone(),
            constraints: self.constraints.to_vec(),
            node_selector: self.node_selector.clone(),
            node_affinity: self.node_affinity.cloned(),
            tolerations: self.tolerations.to_vec(),
        }
    }
}

impl PartialEq<SpreadInputs<'_>> for OwnedSpreadInputs {
    fn eq(&self, o: &SpreadInputs<'_>) -> bool {
        self.profile == o.profile
            && self.namespace == o.namespace
            && self.system_defaults == o.system_defaults
            && self.constraints == o.constraints
            && self.dependence == o.dependence
            && self.node_selector == *o.node_selector
            && self.node_affinity.as_ref() == o.node_affinity
            && self.tolerations == o.tolerations
    }
}

/// A label set's number in a namespace, for terminating pods or the others.
type LabelsNumber = (String, bool, u32);

/// Numbers for the (namespace, labels) and (namespace, pod-affinity terms) of bound pods, in
/// order of first appearance, one count for both kinds.
#[derive(Debug, Default)]
pub(super) struct Signatures {
    count: u32,
    /// Labels → (namespace, terminating, number), a few each. The key shares the first pod's
    /// labels.
    labels: HashMap<Shared<BTreeMap<String, String>>, Vec<LabelsNumber>>,
    /// Namespace → the terms' `Debug` text (`None` without terms) → number.
    terms: HashMap<String, HashMap<String, u32>>,
}

impl Signatures {
    /// Keeps the signatures whose number `keep` says.
    fn retain(&mut self, keep: impl Fn(u32) -> bool) {
        for numbers in self.labels.values_mut() {
            numbers.retain(|&(_, _, n)| keep(n));
        }
        self.labels.retain(|_, numbers| !numbers.is_empty());
        for numbers in self.terms.values_mut() {
            numbers.retain(|_, n| keep(*n));
        }
        self.terms.retain(|_, numbers| !numbers.is_empty());
    }

    fn of_labels(
        &mut self,
        namespace: &str,
        labels: &Shared<BTreeMap<String, String>>,
        terminating: bool,
    ) -> u32 {
        let numbers = self.labels.get(labels).map_or(&[][..], Vec::as_slice);
        if let Some(&(_, _, n)) =
            (numbers.iter()).find(|(ns, t, _)| ns == namespace && *t == terminating)
        {
            return n;
        }
        let n = self.count;
        self.count += 1;
        let numbers = match self.labels.get_mut(labels) {
            Some(numbers) => numbers,
            None => self.labels.entry(labels.share()).or_default(),
        };
        numbers.push((namespace.to_string(), terminating, n));
        n
    }

    fn of_terms(&mut self, pod: &Pod) -> u32 {
        let text = match &*pod.affinity {
            // What `Debug` writes for a pod without pod (anti-)affinity, without writing it.
            None => std::borrow::Cow::Borrowed("None"),
            Some(a) if a.pod_affinity.is_none() && a.pod_anti_affinity.is_none() => {
                std::borrow::Cow::Borrowed("Some((None, None))")
            }
            Some(a) => std::borrow::Cow::Owned(format!(
                "{:?}",
                Some((&a.pod_affinity, &a.pod_anti_affinity))
            )),
        };
        if let Some(&n) = self.terms.get(&pod.namespace).and_then(|m| m.get(&*text)) {
            return n;
        }
        let n = self.count;
        self.count += 1;
        (self.terms.entry(pod.namespace.clone()).or_default()).insert(text.into_owned(), n);
        n
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::{Affinity, NodeAffinity, PodAffinity, PodAntiAffinity};

    use super::Signatures;
    use crate::model::Pod;

    /// A pod with node affinity only gets the number its terms' `Debug` text would give.
    #[test]
    fn terms_without_pod_affinity_are_numbered_as_their_debug_text() {
        let none: (&Option<PodAffinity>, &Option<PodAntiAffinity>) = (&None, &None);
        let text = format!("{:?}", Some(none));
        assert_eq!(text, "Some((None, None))");
        let mut s = Signatures::default();
        let pod = Pod {
            affinity: Some(Affinity {
                node_affinity: Some(NodeAffinity::default()),
                ..Default::default()
            })
            .into(),
            ..Pod::default()
        };
        let n = s.of_terms(&pod);
        assert_eq!(s.terms[""].get(&text), Some(&n));
        assert_eq!(
            s.of_terms(&Pod::default()),
            n + 1,
            "without affinity: another text"
        );
    }
}
