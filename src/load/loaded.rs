//! What loading a workload item gives (a [`LoadedWorkload`]: its pods, steps, PodGroups, the
//! resolved TrainJob and its baseline), and what resolving a TrainJob needs from the scenario
//! ([`ResolveContext`]), and where an item comes from ([`WorkloadItem`]). Shared by
//! `workloads` (which loads the items), `apps` (which loads the apps/v1 ones) and `kueue`
//! (which holds back the items that name a queue and resolves them again once admitted), so
//! none imports another's internals.

use serde_json::Value;

use super::Workloads;
use super::origin::Origin;
use crate::features::FeatureGates;
use crate::model::Pod;
use crate::model::pod_group::PodGroup;
use crate::resolve::build::ResolvedTrainJob;
use crate::resolve::trainjob::TrainJob;
use crate::resolve::{InitializerLifecycle, Runtimes};
use crate::sched::plan::{Requirement, Step};

/// What the TrainJobs need from the scenario to resolve.
pub(super) struct ResolveContext<'a> {
    pub runtimes: &'a Runtimes,
    /// Kueue's objects (empty: Kueue is not part of the scenario).
    pub kueue: &'a crate::kueue::admission::Objects,
    pub priority_classes: &'a super::priority::PriorityClasses,
    pub namespaces: &'a crate::sched::plugins::inter_pod_affinity::NamespaceLabels,
    pub gates: &'a FeatureGates,
    pub initializers: InitializerLifecycle,
    pub clock: &'a str,
    /// The scenario seed (`spec.scheduler.seed`): it draws generated names.
    pub seed: u64,
    /// TrainJobs alike but for their name, resolved once.
    pub alike: &'a crate::resolve::alike::Alike,
    /// The scenario is replayed (`LoadOptions::kueue_over_time` and `spec.replay`): its Kueue
    /// workloads wait for the replay's admission over time instead of a snapshot admission.
    pub kueue_over_time: bool,
}

/// The runtime-only baseline of a TrainJob with overrides (see [`super::Loader::resolve_train_job`]).
pub(super) enum Baseline {
    /// Resolve it with the job.
    Resolve,
    /// Already resolved: it does not depend on the overrides, Kueue's patch included.
    Known(Workloads),
    /// Not yet: the job waits for Kueue, and gets its baseline once admitted.
    Later,
}

/// The pods a workload item became.
pub(super) struct LoadedWorkload {
    pub pods: Vec<Pod>,
    pub steps: Vec<Step>,
    /// PodGroups the workload creates (Trainer's for a TrainJob) or is (a PodGroup document).
    pub pod_groups: Vec<PodGroup>,
    pub resolved: Option<ResolvedTrainJob>,
    /// Without overrides, when the TrainJob has some.
    pub baseline: Option<Workloads>,
    /// Things to tell the user, already prefixed with what they are about.
    pub warnings: Vec<String>,
    /// A suspended `batch/v1` Job: its pods exist only once something (Kueue) resumes it.
    pub suspended: bool,
    /// A TrainJob whose JobSet JobSet's webhook refuses: its pods stand for its pod sets
    /// (Kueue still counts them) but are never created.
    pub never_created: bool,
    /// A TrainJob waiting for Kueue: its pods, not made yet (`pods` is empty).
    pub unmade: Option<crate::resolve::alike::Unmade>,
    /// A TrainJob waiting for Kueue, as decoded (to resolve again once admitted).
    pub train_job: Option<Box<TrainJob>>,
    /// Pods created only once a pod of another item runs (a StatefulSet's pods after a
    /// pending pod of a lower ordinal): see `resolve::apps::ControllerPods::waits_for`.
    pub waits_for: Vec<(usize, String, Requirement)>,
    /// When its controllers call it done (a Job, a JobSet, a TrainJob), for a replay.
    pub completion: Option<crate::resolve::completion::Completion>,
}

impl LoadedWorkload {
    pub fn pods(pods: Vec<Pod>, steps: Vec<Step>) -> Self {
        LoadedWorkload {
            pods,
            steps,
            pod_groups: Vec::new(),
            resolved: None,
            baseline: None,
            warnings: Vec::new(),
            suspended: false,
            never_created: false,
            unmade: None,
            train_job: None,
            waits_for: Vec::new(),
            completion: None,
        }
    }

    /// Pods like the workload's in all but maybe their names: what Kueue's pod sets read.
    pub fn pods_alike(&self) -> &[Pod] {
        self.unmade.as_ref().map_or(&self.pods, |u| u.alike())
    }

    /// The workload each of its pods names (`Pod::workload`).
    pub fn pod_workloads(&self) -> Vec<String> {
        match &self.unmade {
            Some(u) => u.workloads(),
            None => self
                .pods
                .iter()
                .filter_map(|p| p.workload.clone())
                .collect(),
        }
    }

    /// `namespace/name` of each of its pods.
    pub fn pod_keys(&self) -> Vec<String> {
        match &self.unmade {
            Some(u) => u.keys(),
            None => self.pods.iter().map(Pod::key).collect(),
        }
    }
}

/// Where a workload item comes from: an item of a scenario list (inline, `{file}`,
/// `{determined}`), or an object `spec.objects` routed here.
pub(super) enum Source<'v> {
    Item { path: String, value: &'v Value },
    Object(Origin),
}

/// A workload item and the timeline step it arrives at (`None`: at the start).
pub(super) struct WorkloadItem<'v> {
    pub source: Source<'v>,
    pub step: Option<usize>,
}
