//! PodDisruptionBudgets (`policy/v1`) as three components read them:
//! - the disruption controller (`pkg/controller/disruption/disruption.go`) keeps each budget's
//!   status: `getExpectedPodCount` (an int `minAvailable` counts the selected pods; a
//!   percentage or `maxUnavailable` sums the scale of their controllers, which the loader
//!   finds with the controller's finders: [`Budget::pod_scales`]), `countHealthyPods`
//!   (selected pods that are Ready, not being deleted and not in `disruptedPods`) and `updatePdbStatus`
//!   (`disruptionsAllowed = currentHealthy - desiredHealthy`, 0 when negative or when no pod is
//!   expected). It updates the status after every change, so [`Budgets`] keeps the healthy
//!   count current as pods bind and go, and the expected count over the pods that exist at
//!   that moment: a pod that arrives later in a timeline, and its controller's scale, count
//!   from its arrival (`getPodsForPdb` lists the pods there are), until a step deletes it. A status given in the object (a dump) stands until
//!   the run changes how many of its pods are healthy; from then on it is recomputed from the
//!   given counts.
//! - kube-scheduler's DefaultPreemption (`pkg/scheduler/framework/preemption/preemption.go`
//!   `filterPodsWithPDBViolation`): a victim violates a budget that selects it (a nil or empty
//!   selector selects nothing there, nor does any budget select a pod without labels) once the
//!   victims before it used up the budget's `disruptionsAllowed`; a pod in the budget's
//!   `disruptedPods` is not counted again ([`Budgets::violations`]).
//! - the Eviction API (`pkg/registry/core/pod/storage/eviction.go`), through which
//!   `kubectl drain` evicts ([`Budgets::evict`]).

pub mod api;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::model::Pod;
use crate::model::validate::intstr::percent;
use crate::sched::plugins::inter_pod_affinity::selector_matches;

/// `spec.unhealthyPodEvictionPolicy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnhealthyPolicy {
    /// A not-ready pod is evicted only while the budget is healthy (the default).
    #[default]
    IfHealthyBudget,
    /// A not-ready pod is always evicted.
    AlwaysAllow,
}

/// A PodDisruptionBudget as the simulation reads it.
#[derive(Debug, Clone, PartialEq)]
pub struct Budget {
    pub namespace: String,
    pub name: String,
    pub selector: Option<LabelSelector>,
    pub min_available: Option<IntOrString>,
    pub max_unavailable: Option<IntOrString>,
    pub unhealthy_policy: UnhealthyPolicy,
    /// Per pod it selects (by name) that has a controller: the controller whose scale
    /// `getExpectedScale` reads (the Deployment of a ReplicaSet's pod) and its `replicas`, or
    /// the finders' error (`found no controllers for pod "…"`), after which it allows no
    /// disruption (`failSafe`) while that pod exists. Filled only for a percentage or
    /// `maxUnavailable`.
    pub pod_scales: HashMap<String, Result<(String, i32), String>>,
    /// `status`, when the object gives one (a `kubectl get pdb -o yaml` dump).
    pub status: Option<Status>,
}

/// The status fields the scheduler and the Eviction API read.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Status {
    pub disruptions_allowed: i32,
    pub current_healthy: i32,
    pub desired_healthy: i32,
    pub expected_pods: i32,
    /// Pods whose eviction the API server approved and the controller has not seen go yet.
    pub disrupted_pods: BTreeSet<String>,
}

/// The budget's state at one moment, as `updatePdbStatus` writes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Counts {
    pub current_healthy: i32,
    pub desired_healthy: i32,
    pub expected_pods: i32,
    pub disruptions_allowed: i32,
}

impl Budget {
    /// `LabelSelectorAsSelector` as the disruption controller and the Eviction API match: a
    /// nil selector selects nothing, an empty one every pod of the namespace.
    pub fn selects(&self, pod: &Pod) -> bool {
        pod.namespace == self.namespace
            && (self.selector.as_ref()).is_some_and(|s| selector_matches(s, &pod.labels))
    }

    /// Whether kube-scheduler's preemption counts the budget for `pod`: its selector is
    /// neither nil nor empty, and the pod has labels.
    fn guards_for_scheduler(&self, pod: &Pod) -> bool {
        let empty = |s: &LabelSelector| {
            s.match_labels.as_ref().is_none_or(|m| m.is_empty())
                && s.match_expressions.as_ref().is_none_or(|e| e.is_empty())
        };
        !pod.labels.is_empty()
            && self.selector.as_ref().is_some_and(|s| !empty(s))
            && self.selects(pod)
    }

    /// Whether its expected count comes from the controllers' scale.
    pub fn uses_controller_scale(&self) -> bool {
        self.max_unavailable.is_some() || matches!(self.min_available, Some(IntOrString::String(_)))
    }

    /// `getExpectedPodCount` and `updatePdbStatus` with `current_healthy` healthy pods out of
    /// `selected` that it selects, whose controllers' scale is `expected_scale` (`None`: a
    /// finder failed).
    pub fn counts(
        &self,
        selected: i32,
        current_healthy: i32,
        expected_scale: Option<i32>,
    ) -> Counts {
        let expected_and_desired = match (&self.max_unavailable, &self.min_available) {
            (Some(max), _) => expected_scale.map(|expected| {
                let desired = expected.saturating_sub(scaled_up(max, expected));
                (expected, desired.max(0))
            }),
            (None, Some(IntOrString::Int(min))) => Some((selected, *min)),
            (None, Some(min)) => {
                expected_scale.map(|expected| (expected, scaled_up(min, expected)))
            }
            (None, None) => Some((0, 0)),
        };
        match expected_and_desired {
            Some((expected, desired)) => Counts {
                current_healthy,
                desired_healthy: desired,
                expected_pods: expected,
                disruptions_allowed: allowed(current_healthy, desired, expected),
            },
            // `failSafe`: the sync failed, so no disruption is allowed.
            None => Counts {
                current_healthy,
                desired_healthy: 0,
                expected_pods: 0,
                disruptions_allowed: 0,
            },
        }
    }
}

/// `updatePdbStatus`: what the healthy pods above the desired count allow, none when no pod
/// is expected.
fn allowed(current_healthy: i32, desired_healthy: i32, expected: i32) -> i32 {
    let allowed = current_healthy.saturating_sub(desired_healthy);
    if expected <= 0 || allowed <= 0 {
        0
    } else {
        allowed
    }
}

/// `intstr.GetScaledValueFromIntOrPercent(v, total, roundUp=true)`.
pub fn scaled_up(v: &IntOrString, total: i32) -> i32 {
    match v {
        IntOrString::Int(i) => *i,
        IntOrString::String(s) => {
            let p = percent(s).unwrap_or(0);
            let value = (p * i64::from(total) + 99).div_euclid(100);
            value.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
        }
    }
}

/// `createTooManyRequestsError`'s and `checkAndDecrement`'s message.
pub const CANNOT_EVICT: &str = "Cannot evict pod as it would violate the pod's disruption budget.";

/// `getPodDisruptionBudgets` found more than one budget.
pub const MORE_THAN_ONE: &str = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.";

/// An eviction the API server refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The HTTP status: 429 (Too Many Requests) for an exhausted budget, 500 for several.
    pub code: u16,
    /// The budget, when one refused it.
    pub budget: Option<String>,
    /// The status message, with its cause (`DisruptionBudget`) when it has one.
    pub message: String,
}

/// The run's budgets: which pods each selects, and how many of them are healthy now.
#[derive(Debug, Clone, Default)]
pub(crate) struct Budgets {
    budgets: Arc<Vec<Budget>>,
    /// Per pod id: the budgets that select it.
    of_pod: HashMap<usize, Vec<u32>>,
    /// The pods that exist now (existing ones, and workload pods from their arrival until a
    /// step deletes them), among those some budget selects.
    present: HashSet<usize>,
    /// Per budget: how many of the pods that exist it selects, bound or not.
    selected: Vec<i32>,
    /// Per budget: the controllers of the pods it selects that exist, each with its scale and
    /// how many of those pods it has.
    controllers: Vec<BTreeMap<String, (i32, i32)>>,
    /// Per budget: its existing pods whose controller no finder knows.
    unfound: Vec<i32>,
    /// Per budget: its selected pods that are bound, ready and not in `disruptedPods`.
    healthy: Vec<i32>,
    /// Per budget: `healthy` when the run started (the existing pods bound).
    healthy_at_start: Vec<i32>,
    /// Per budget: ids of its pods named in `status.disruptedPods`.
    disrupted: Vec<BTreeSet<usize>>,
}

impl Budgets {
    /// Indexes `budgets` over the run's pods (`(id, pod)`); `exists_at_start` says which
    /// pods exist when the run starts (the others arrive later), `bound_at_start` which start
    /// bound.
    pub fn new<'p>(
        budgets: &Arc<Vec<Budget>>,
        pods: impl Iterator<Item = (usize, &'p Pod)>,
        exists_at_start: impl Fn(usize) -> bool,
        bound_at_start: impl Fn(usize, &Pod) -> bool,
    ) -> Budgets {
        let n = budgets.len();
        let mut b = Budgets {
            budgets: Arc::clone(budgets),
            of_pod: HashMap::new(),
            present: HashSet::new(),
            selected: vec![0; n],
            controllers: vec![BTreeMap::new(); n],
            unfound: vec![0; n],
            healthy: vec![0; n],
            healthy_at_start: vec![0; n],
            disrupted: vec![BTreeSet::new(); n],
        };
        if n == 0 {
            return b;
        }
        let mut by_namespace: HashMap<&str, Vec<u32>> = HashMap::new();
        for (i, budget) in budgets.iter().enumerate() {
            (by_namespace.entry(budget.namespace.as_str()))
                .or_default()
                .push(i as u32);
        }
        for (id, pod) in pods {
            let Some(candidates) = by_namespace.get(pod.namespace.as_str()) else {
                continue;
            };
            let mine: Vec<u32> = (candidates.iter().copied())
                .filter(|&i| budgets[i as usize].selects(pod))
                .collect();
            for &i in &mine {
                let i = i as usize;
                if (budgets[i].status.as_ref())
                    .is_some_and(|s| s.disrupted_pods.contains(&pod.name))
                {
                    b.disrupted[i].insert(id);
                }
            }
            if !mine.is_empty() {
                b.of_pod.insert(id, mine);
            }
            if exists_at_start(id) {
                b.arrive(id, pod);
            }
            if bound_at_start(id, pod) {
                b.count(id, pod, 1);
            }
        }
        b.healthy_at_start = b.healthy.clone();
        b.healthy.fill(0);
        b
    }

    pub fn is_empty(&self) -> bool {
        self.budgets.is_empty()
    }

    /// A pod comes to exist (`sign` 1: created) or stops existing (-1: deleted): the pods and
    /// controllers its budgets expect.
    fn exist(&mut self, id: usize, pod: &Pod, sign: i32) {
        let Some(mine) = self.of_pod.get(&id) else {
            return;
        };
        for &i in mine {
            let i = i as usize;
            self.selected[i] += sign;
            match self.budgets[i].pod_scales.get(&pod.name) {
                Some(Ok((controller, replicas))) => {
                    let entry =
                        (self.controllers[i].entry(controller.clone())).or_insert((*replicas, 0));
                    entry.1 += sign;
                    if entry.1 == 0 {
                        self.controllers[i].remove(controller);
                    }
                }
                Some(Err(_)) => self.unfound[i] += sign,
                None => {}
            }
        }
    }

    /// A pod is created (an existing pod at the start, a workload pod when it arrives);
    /// again is a no-op.
    pub fn arrive(&mut self, id: usize, pod: &Pod) {
        if self.of_pod.contains_key(&id) && self.present.insert(id) {
            self.exist(id, pod, 1);
        }
    }

    /// A pod is deleted (by a timeline step): its budgets no longer expect it.
    pub fn delete(&mut self, id: usize, pod: &Pod) {
        if self.present.remove(&id) {
            self.exist(id, pod, -1);
        }
    }

    /// `getExpectedScale` over the pods that exist now: `None` while one of them has a
    /// controller no finder knows.
    fn expected_scale(&self, i: usize) -> Option<i32> {
        (self.unfound[i] == 0).then(|| self.controllers[i].values().map(|(r, _)| r).sum())
    }

    /// A pod bound (`sign` 1) or gone from its node (-1): the healthy counts of its budgets.
    /// `countHealthyPods` counts neither a pod that is not Ready nor one being deleted.
    pub fn count(&mut self, id: usize, pod: &Pod, sign: i32) {
        if pod.not_ready || pod.deletion_timestamp.is_some() {
            return;
        }
        if let Some(mine) = self.of_pod.get(&id) {
            for &i in mine {
                if !self.disrupted[i as usize].contains(&id) {
                    self.healthy[i as usize] += sign;
                }
            }
        }
    }

    /// Every pod is off its node (the node list is being rebuilt, each bound pod bound again).
    pub fn clear(&mut self) {
        self.healthy.fill(0);
    }

    /// A budget's status now: the controller's, or the given status while the run has not
    /// changed how many of its pods are healthy.
    pub fn counts(&self, i: usize) -> Counts {
        let budget = &self.budgets[i];
        let healthy = self.healthy[i];
        match &budget.status {
            Some(s) => {
                let delta = healthy - self.healthy_at_start[i];
                let current = s.current_healthy.saturating_add(delta);
                Counts {
                    current_healthy: current,
                    desired_healthy: s.desired_healthy,
                    expected_pods: s.expected_pods,
                    disruptions_allowed: match delta {
                        0 => s.disruptions_allowed,
                        _ => allowed(current, s.desired_healthy, s.expected_pods),
                    },
                }
            }
            None => budget.counts(self.selected[i], healthy, self.expected_scale(i)),
        }
    }

    /// `filterPodsWithPDBViolation` over `victims` (most important first): whether each one
    /// violates a budget, each budget's `disruptionsAllowed` used up by the victims before it.
    pub fn violations<'p>(&self, victims: impl Iterator<Item = (usize, &'p Pod)>) -> Vec<bool> {
        let mut left: HashMap<u32, i32> = HashMap::new();
        victims
            .map(|(id, pod)| {
                let Some(mine) = self.of_pod.get(&id) else {
                    return false;
                };
                let mut violated = false;
                for &i in mine {
                    if !self.budgets[i as usize].guards_for_scheduler(pod)
                        || self.disrupted[i as usize].contains(&id)
                    {
                        continue;
                    }
                    let allowed = left
                        .entry(i)
                        .or_insert_with(|| self.counts(i as usize).disruptions_allowed);
                    *allowed -= 1;
                    violated |= *allowed < 0;
                }
                violated
            })
            .collect()
    }

    /// The Eviction API's verdict on evicting a bound pod now (`EvictionREST.Create`): `Ok`
    /// when it would delete the pod.
    pub fn evict(&self, id: usize, pod: &Pod) -> Result<(), Refusal> {
        // `canIgnorePDB`: a pod being deleted or not started yet (phase `Pending`) is deleted
        // without asking its budgets; so is one in phase Succeeded or Failed, which the loader
        // leaves out of the run.
        if pod.deletion_timestamp.is_some() || pod.phase_pending {
            return Ok(());
        }
        let mine = self.of_pod.get(&id).map_or(&[][..], Vec::as_slice);
        let i = match mine {
            [] => return Ok(()),
            [i] => *i as usize,
            _ => {
                return Err(Refusal {
                    code: 500,
                    budget: None,
                    message: MORE_THAN_ONE.into(),
                });
            }
        };
        let budget = &self.budgets[i];
        let counts = self.counts(i);
        // An unhealthy pod does not count towards the budget: it goes if the policy says so,
        // or while the budget is healthy.
        if pod.not_ready
            && (budget.unhealthy_policy == UnhealthyPolicy::AlwaysAllow
                || (counts.current_healthy >= counts.desired_healthy && counts.desired_healthy > 0))
        {
            return Ok(());
        }
        if counts.disruptions_allowed <= 0 {
            return Err(Refusal {
                code: 429,
                budget: Some(budget.name.clone()),
                message: format!(
                    "{CANNOT_EVICT} The disruption budget {} needs {} healthy pods and has {} currently",
                    budget.name, counts.desired_healthy, counts.current_healthy
                ),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

    use super::*;

    fn pod(name: &str, app: &str) -> Pod {
        Pod {
            name: name.into(),
            namespace: "ns".into(),
            labels: [("app", app)]
                .into_iter()
                .filter(|(_, v)| !v.is_empty())
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Default::default()
        }
    }

    fn budget(name: &str, selector: Option<LabelSelector>, allowed: i32) -> Budget {
        Budget {
            namespace: "ns".into(),
            name: name.into(),
            selector,
            min_available: Some(IntOrString::Int(1)),
            max_unavailable: None,
            unhealthy_policy: UnhealthyPolicy::IfHealthyBudget,
            pod_scales: HashMap::new(),
            status: Some(Status {
                disruptions_allowed: allowed,
                current_healthy: 3,
                desired_healthy: 3 - allowed,
                expected_pods: 3,
                disrupted_pods: BTreeSet::new(),
            }),
        }
    }

    fn app(v: &str) -> Option<LabelSelector> {
        Some(LabelSelector {
            match_labels: Some([("app".to_string(), v.to_string())].into()),
            ..Default::default()
        })
    }

    /// Every pod bound at the start: the given statuses stand.
    fn budgets(bs: Vec<Budget>, pods: &[Pod]) -> Budgets {
        let mut b = Budgets::new(
            &Arc::new(bs),
            pods.iter().enumerate(),
            |_| true,
            |_, _| true,
        );
        for (i, p) in pods.iter().enumerate() {
            b.count(i, p, 1);
        }
        b
    }

    /// `filterPodsWithPDBViolation`: victims use the budget up in order; a pod in
    /// `disruptedPods` is not counted again; a nil or empty selector and a pod without labels
    /// match nothing.
    #[test]
    fn victims_use_up_the_budget_in_order() {
        let pods = [
            pod("a", "web"),
            pod("b", "web"),
            pod("c", "web"),
            pod("d", ""),
        ];
        let mut disrupted = budget("web", app("web"), 1);
        disrupted.status.as_mut().unwrap().disrupted_pods = ["a".to_string()].into();
        let cases = [
            (budget("web", app("web"), 1), vec![false, true, true, false]),
            (budget("web", app("web"), 0), vec![true, true, true, false]),
            (disrupted, vec![false, false, true, false]),
            (
                budget("all", Some(LabelSelector::default()), 0),
                vec![false; 4],
            ),
            (budget("none", None, 0), vec![false; 4]),
        ];
        for (b, want) in cases {
            let name = b.name.clone();
            let s = budgets(vec![b], &pods);
            let got = s.violations(pods.iter().enumerate());
            assert_eq!(got, want, "{name}");
        }
    }

    /// The Eviction API: an empty selector selects every pod of the namespace; two budgets
    /// are refused with 500; an exhausted budget with 429 and its counts.
    #[test]
    fn evictions_are_refused_as_the_api_server_refuses_them() {
        let pods = [pod("a", "web"), pod("b", "db")];
        let s = budgets(
            vec![budget("all", Some(LabelSelector::default()), 0)],
            &pods,
        );
        let refusal = s.evict(1, &pods[1]).unwrap_err();
        assert_eq!(refusal.code, 429);
        assert_eq!(
            refusal.message,
            "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget all needs 3 healthy pods and has 3 currently"
        );
        let two = vec![
            budget("web", app("web"), 1),
            budget("all", Some(LabelSelector::default()), 1),
        ];
        let s = budgets(two, &pods);
        assert_eq!(s.evict(0, &pods[0]).unwrap_err().message, MORE_THAN_ONE);
        assert_eq!(s.evict(1, &pods[1]), Ok(()));
    }

    /// An unhealthy pod: `AlwaysAllow` evicts it; `IfHealthyBudget` only while the budget is
    /// healthy.
    #[test]
    fn unhealthy_pods_follow_the_policy() {
        let mut sick = pod("a", "web");
        sick.not_ready = true;
        let pods = [sick];
        let mut exhausted = budget("web", app("web"), 0);
        exhausted.status.as_mut().unwrap().current_healthy = 1;
        let s = budgets(vec![exhausted.clone()], &pods);
        assert_eq!(s.evict(0, &pods[0]).unwrap_err().code, 429);
        exhausted.unhealthy_policy = UnhealthyPolicy::AlwaysAllow;
        let s = budgets(vec![exhausted], &pods);
        assert_eq!(s.evict(0, &pods[0]), Ok(()));
        let s = budgets(vec![budget("web", app("web"), 0)], &pods);
        assert_eq!(s.evict(0, &pods[0]), Ok(()), "healthy budget: 3 of 3");
    }

    /// `canIgnorePDB`: a terminating pod and one in phase Pending are evicted whatever their
    /// budget says; a running one is not.
    #[test]
    fn terminating_and_pending_pods_are_evicted_without_their_budget() {
        let mut terminating = pod("a", "web");
        terminating.deletion_timestamp = Some(Time(Default::default()));
        let mut pending = pod("b", "web");
        pending.phase_pending = true;
        let pods = [terminating, pending, pod("c", "web")];
        let s = budgets(vec![budget("web", app("web"), 0)], &pods);
        assert_eq!(s.evict(0, &pods[0]), Ok(()));
        assert_eq!(s.evict(1, &pods[1]), Ok(()));
        assert_eq!(s.evict(2, &pods[2]).unwrap_err().code, 429);
    }

    /// `countHealthyPods` skips a pod being deleted: of three bound pods with one terminating,
    /// two are healthy, and `minAvailable: 2` allows no disruption.
    #[test]
    fn terminating_pods_are_not_healthy() {
        let mut terminating = pod("a", "web");
        terminating.deletion_timestamp = Some(Time(Default::default()));
        let pods = [terminating, pod("b", "web"), pod("c", "web")];
        let mut b = budget("web", app("web"), 0);
        b.status = None;
        b.min_available = Some(IntOrString::Int(2));
        let s = budgets(vec![b], &pods);
        let c = s.counts(0);
        assert_eq!((c.current_healthy, c.disruptions_allowed), (2, 0));
    }

    /// The expected count follows the pods that exist: a Deployment whose pods arrive later
    /// adds its scale when they do (`getPodsForPdb` finds no pod of it before), and drops it
    /// when a step deletes them. `maxUnavailable: 1` over A (3 replicas, bound) allows one
    /// disruption before B (3 replicas) arrives, none while B's pods wait, one once they run.
    #[test]
    fn the_expected_scale_counts_the_pods_that_exist() {
        let pods: Vec<Pod> = (0..6).map(|i| pod(&format!("p{i}"), "web")).collect();
        let mut b = budget("web", app("web"), 0);
        b.status = None;
        (b.min_available, b.max_unavailable) = (None, Some(IntOrString::Int(1)));
        for (i, p) in pods.iter().enumerate() {
            let controller = if i < 3 {
                "Deployment/a"
            } else {
                "Deployment/b"
            };
            b.pod_scales
                .insert(p.name.clone(), Ok((controller.into(), 3)));
        }
        let mut s = Budgets::new(
            &Arc::new(vec![b]),
            pods.iter().enumerate(),
            |id| id < 3,
            |_, _| false,
        );
        let state = |s: &Budgets| {
            let c = s.counts(0);
            (c.expected_pods, c.desired_healthy, c.disruptions_allowed)
        };
        for (i, p) in pods.iter().enumerate().take(3) {
            s.count(i, p, 1);
        }
        assert_eq!(state(&s), (3, 2, 1), "before B arrives");
        for (i, p) in pods.iter().enumerate().skip(3) {
            s.arrive(i, p);
        }
        s.arrive(3, &pods[3]);
        assert_eq!(state(&s), (6, 5, 0), "B's pods pending");
        for (i, p) in pods.iter().enumerate().skip(3) {
            s.count(i, p, 1);
        }
        assert_eq!(state(&s), (6, 5, 1), "B's pods running");
        for (i, p) in pods.iter().enumerate().skip(3) {
            s.count(i, p, -1);
            s.delete(i, p);
        }
        assert_eq!(state(&s), (3, 2, 1), "B deleted");
    }

    /// `getExpectedPodCount` and `updatePdbStatus`.
    #[test]
    fn the_controller_counts() {
        let spec = |min: Option<IntOrString>, max: Option<IntOrString>, scale: Option<i32>| {
            let b = Budget {
                min_available: min,
                max_unavailable: max,
                status: None,
                ..budget("b", app("web"), 0)
            };
            (b, scale)
        };
        let int = IntOrString::Int;
        let pct = |s: &str| IntOrString::String(s.into());
        // (spec, selected, healthy) → (expected, desired, allowed)
        let cases = [
            (spec(Some(int(2)), None, Some(0)), 3, 3, (3, 2, 1)),
            (spec(Some(int(2)), None, Some(0)), 3, 2, (3, 2, 0)),
            (spec(Some(pct("50%")), None, Some(5)), 3, 3, (5, 3, 0)),
            (spec(Some(pct("50%")), None, Some(4)), 4, 4, (4, 2, 2)),
            (spec(None, Some(int(1)), Some(3)), 3, 3, (3, 2, 1)),
            (spec(None, Some(pct("34%")), Some(3)), 3, 3, (3, 1, 2)),
            (spec(None, Some(int(5)), Some(3)), 3, 3, (3, 0, 3)),
            (spec(None, Some(int(1)), None), 3, 3, (0, 0, 0)),
            (spec(None, None, Some(0)), 3, 3, (0, 0, 0)),
            (spec(Some(int(0)), None, Some(0)), 0, 0, (0, 0, 0)),
        ];
        for (i, ((b, scale), selected, healthy, want)) in cases.into_iter().enumerate() {
            let c = b.counts(selected, healthy, scale);
            let got = (c.expected_pods, c.desired_healthy, c.disruptions_allowed);
            assert_eq!(got, want, "case {i}");
        }
    }

    #[test]
    fn percentages_round_up() {
        let p = |s: &str| IntOrString::String(s.into());
        assert_eq!(scaled_up(&p("50%"), 3), 2);
        assert_eq!(scaled_up(&p("34%"), 3), 2);
        assert_eq!(scaled_up(&p("0%"), 3), 0);
        assert_eq!(scaled_up(&p("100%"), 7), 7);
        assert_eq!(scaled_up(&IntOrString::Int(2), 7), 2);
    }
}
