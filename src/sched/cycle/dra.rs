//! DynamicResources at each extension point of the cycle: PreFilter, Filter over the nodes
//! that passed every other filter, the per-node status for the diagnosis and preemption,
//! PostFilter, Reserve/PreBind, and the release of claims when bound pods go away.

use super::*;
use crate::sched::dra_manager;
use dynamic_resources::PreFilter;

impl<'a> Scheduler<'a> {
    /// DynamicResources' PreFilter, if the profile runs it: `Ok(Some(status))` rejects the pod
    /// on every node, `Err` fails the cycle with an error (`RunPreFilterPlugins`' message).
    pub(super) fn dra_pre_filter(&mut self, pod: &Pod) -> Result<Option<Status>, String> {
        self.dra_cycle = None;
        if !(self.profile().framework).runs(ExtensionPoint::PreFilter, Plugin::DynamicResources) {
            return Ok(None);
        }
        let gates = &self.config.feature_gates;
        let no_claims = pod.resource_claims.is_empty()
            && !(gates.dra_extended_resource
                && dynamic_resources::has_backed_extended_resource(&self.dra, pod));
        let decided = match no_claims {
            true => PreFilter::Skip,
            false => dynamic_resources::pre_filter(
                &self.dra,
                self.dra_cache.get_mut(),
                pod,
                gates,
                &self.cluster.table,
            ),
        };
        match decided {
            PreFilter::Skip => {
                self.dra_cycle = Some(Default::default());
                Ok(None)
            }
            PreFilter::Reject(status) => {
                self.dra_cycle = Some(Default::default());
                Ok(Some(status))
            }
            PreFilter::Error(e) => Err(format!(
                "running PreFilter plugin {:?}: {e}",
                dynamic_resources::NAME
            )),
            PreFilter::Run(state) => {
                self.dra_cycle = Some(state);
                Ok(None)
            }
        }
    }

    /// Whether DynamicResources' Filter has work for the pod in the cycle.
    pub(super) fn dra_filters(&self) -> bool {
        self.dra_cycle.as_ref().is_some_and(|c| !c.is_empty())
            && self.compiled().filters.contains(&Plugin::DynamicResources)
    }

    /// DynamicResources' verdict on one node for the pod in the cycle.
    fn dra_verdict(&self, pod: &Pod, node: usize) -> dynamic_resources::Verdict {
        let Some(state) = self.dra_cycle.as_ref().filter(|_| self.dra_filters()) else {
            return dynamic_resources::Verdict::Pass;
        };
        dynamic_resources::filter(
            &self.dra,
            &mut self.dra_cache.borrow_mut(),
            state,
            pod,
            node,
            &self.cluster.nodes[node],
            self.cluster.published(node),
            &self.config.feature_gates,
        )
    }

    /// DynamicResources' Filter status on one node (success when it has nothing to check).
    pub(super) fn dra_status(&self, pod: &Pod, node: usize) -> Status {
        self.dra_verdict(pod, node).status()
    }

    /// DynamicResources' Filter on one node that passed every other filter (it comes last in
    /// the default order): a current cached verdict where there is one, Filter itself where
    /// none is. `Err`: the allocator's error, which fails the cycle as
    /// `findNodesThatPassFilters` does.
    pub(super) fn dra_passes(&self, pod: &Pod, node: usize) -> Result<bool, String> {
        let state = self.dra_cycle.as_ref().expect("dra_filters");
        let known = {
            let cache = self.dra_cache.borrow();
            let published = self.cluster.published(node);
            dynamic_resources::known_verdict(&self.dra, &cache, state, node, published)
        };
        match known {
            Some(pass) => Ok(pass),
            None => match self.dra_verdict(pod, node) {
                dynamic_resources::Verdict::Pass => Ok(true),
                dynamic_resources::Verdict::Error(e) => Err(e),
                _ => Ok(false),
            },
        }
    }

    /// DynamicResources' PostFilter: its status reason (`None` when its PreFilter did not
    /// run), after deallocating the claim it picks, if any.
    pub(super) fn dra_post_filter(&mut self, pod: &Pod) -> Option<&'static str> {
        if !(self.profile().framework).runs(ExtensionPoint::PostFilter, Plugin::DynamicResources) {
            return None;
        }
        let cycle = self.dra_cycle.as_ref()?;
        let (reason, action) = dynamic_resources::post_filter(&self.dra, Some(cycle), pod);
        match action {
            Some(dynamic_resources::PostFilterAction::Deallocate(ns, name)) => {
                self.dra.deallocate(&ns, &name);
                self.mutations += 1;
                self.changes.forget(self.mutations);
            }
            Some(dynamic_resources::PostFilterAction::Delete(ns, name)) => {
                self.dra.delete_claim(&ns, &name);
                self.mutations += 1;
                self.changes.forget(self.mutations);
            }
            None => {}
        }
        Some(reason)
    }

    /// Reserve and PreBind: the claims the pod allocates get their devices on `node` (the
    /// allocator's first solution), and every claim of the pod is reserved for it. The
    /// extended-resource claim, where the node needs one, is created (`bindClaim`) or, when an
    /// earlier cycle's, updated; where the node's device plugin serves the pod, there is none.
    pub(super) fn dra_reserve(&mut self, node: usize, pod: &Pod) {
        let Some(state) = self.dra_cycle.take().filter(|c| !c.is_empty()) else {
            return;
        };
        let published = self.cluster.published(node);
        let extended =
            (state.extended.as_ref()).filter(|x| x.needed_on(!state.claims.is_empty(), published));
        if state.claims.is_empty() && extended.is_none() {
            return;
        }
        let allocates = !state.to_allocate.is_empty() || extended.is_some_and(|x| !x.allocated);
        let run_allocator = || -> Vec<Option<_>> {
            (dynamic_resources::allocate(
                &self.dra,
                &state,
                pod,
                node,
                &self.cluster.nodes[node],
                &self.config.feature_gates,
            )
            .ok()
            .flatten()
            .unwrap_or_default()
            .into_iter())
            .map(Some)
            .collect()
        };
        // A claim Filter decided by a count gets the devices the allocator would pick, without
        // its search (debug builds check that they are the same); not with an
        // extended-resource claim beside it.
        let counted = (!state.to_allocate.is_empty() && extended.is_none())
            .then(|| {
                let cache = &mut self.dra_cache.borrow_mut();
                dynamic_resources::counted_allocation(&self.dra, cache, &state, node)
            })
            .flatten()
            .map(|c| c.into_iter().map(Some).collect::<Vec<_>>());
        if let Some(counted) = &counted {
            debug_assert_eq!(*counted, run_allocator(), "the allocator's pick");
        }
        let mut allocations = match (allocates, counted) {
            (false, _) => Vec::new(),
            (true, Some(counted)) => counted,
            (true, None) => run_allocator(),
        };
        for (index, (ns, name)) in state.claims.iter().enumerate() {
            let allocation = (state.to_allocate.iter().position(|&i| i == index))
                .and_then(|k| allocations.get_mut(k)?.take())
                .map(|a| dra_manager::allocation_result(&a));
            self.dra.reserve(ns, name, pod, allocation);
        }
        let Some(x) = extended else {
            return;
        };
        let allocation = match x.allocated {
            true => None,
            false => (allocations.get_mut(state.to_allocate.len()))
                .and_then(Option::take)
                .map(|a| dra_manager::allocation_result(&a)),
        };
        // `bindClaim`: a claim without a new allocation and without requests is left alone.
        match (&x.existing, allocation) {
            (Some((ns, name)), Some(allocation)) => {
                self.dra.reserve(ns, name, pod, Some(allocation));
            }
            (None, Some(allocation)) => {
                let claim = x.claim.clone();
                self.dra
                    .create_extended_claim(claim, pod, allocation, self.config.seed);
            }
            (_, None) => {}
        }
    }

    /// The devices Reserve will allocate on `node` for the cycle's claims, and why the
    /// others there were not picked (`schedsim explain`); empty without claims to allocate.
    /// An allocator error, which Filter would have reported, leaves it empty.
    pub(super) fn dra_explain(&self, node: usize) -> Vec<crate::dra::allocator::ClaimDevices> {
        let Some(state) = self.dra_cycle.as_ref().filter(|c| !c.is_empty()) else {
            return Vec::new();
        };
        let (nodes, gates) = (&self.cluster.nodes, &self.config.feature_gates);
        dynamic_resources::explain_devices(&self.dra, state, node, &nodes[node], gates)
            .unwrap_or_default()
    }

    /// A bound pod is gone for good (preempted, deleted, finished): besides its reservations
    /// (released when it was unbound), the claims generated for it are deleted.
    pub(crate) fn dra_pod_deleted(&mut self, pod_id: usize) {
        let pod = self.pod_handle(pod_id);
        if self.dra.holds_claims(&pod) {
            self.dra.release(&pod, true);
        }
    }
}
