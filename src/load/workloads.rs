//! `spec.workloads`, the workload objects of `spec.objects` and the timeline's arrivals: plain
//! Pods, TrainJobs (resolved through their runtime and overrides), PodGroups and Determined
//! trials become workload pods and the steps that bring them to the scheduler — with the
//! runtime-only baseline of every TrainJob that has overrides.

use std::path::Path;
use std::rc::Rc;

use k8s_openapi::api::core::v1 as k8s;

use super::loaded::{Baseline, LoadedWorkload, ResolveContext, Source, WorkloadItem};
use super::origin::Origin;
use super::{Errors, Loader, Workloads, kueue, pod_group};
use crate::model::Pod;
use crate::model::objects;
use crate::model::pod_group::PodGroups;
use crate::resolve::build::{BuildOptions, ResolvedTrainJob};
use crate::resolve::trainjob::{self, TrainJob};
use crate::sched::plan::{self, Requirement, Step};
use crate::yaml::Document;

/// Every workload pod and step, the baseline, and per timeline step its arrivals.
#[derive(Default)]
pub(super) struct WorkloadSet {
    pub pods: Vec<(Pod, Origin)>,
    pub steps: Vec<Step>,
    /// Where each initial item's steps start (arrival units, for sweep shuffles).
    pub unit_starts: Vec<usize>,
    /// The runtime-only baseline (its pods filled only when `any_overrides`).
    pub baseline: Workloads,
    pub baseline_unit_starts: Vec<usize>,
    pub any_overrides: bool,
    pub train_jobs: Vec<ResolvedTrainJob>,
    pub pod_groups: PodGroups,
    /// Per timeline step: the steps of the items arriving then (and of their baseline).
    pub arrivals: Vec<Workloads>,
    pub baseline_arrivals: Vec<Workloads>,
    /// What Kueue decided, when the scenario has Kueue objects.
    pub kueue: Option<super::kueue::KueueOutcome>,
    /// Per timeline step, what Kueue does to pods after the step's own events.
    pub kueue_events: Vec<Vec<crate::sched::plan::Event>>,
    /// The Kueue workloads a replay admits over time (`ResolveContext::kueue_over_time`).
    pub kueue_jobs: Vec<super::kueue::KueueJob>,
    /// What the apps controllers found and made, when the scenario has apps objects.
    pub apps: Option<super::apps::Apps>,
    /// The workloads whose controllers decide when they are done: where their pods start
    /// among `pods`, and how (for a replay).
    pub completions: Vec<(usize, crate::resolve::completion::Completion)>,
    /// `LoadedWorkload::waits_for` over all pods, and over the baseline's.
    waits: Vec<(usize, String, Requirement)>,
    base_waits: Vec<(usize, String, Requirement)>,
}

/// A pod of the runtime-only baseline: the workload pod it equals (no overrides changed it),
/// or its own.
enum BasePod {
    Workload(usize),
    Own(Box<Pod>),
}

impl Loader<'_> {
    /// Loads every workload item in order. Errors of single items are collected; exceeding
    /// the pod limit stops the load.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn workloads(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        items: Vec<WorkloadItem>,
        existing: &[(Pod, Origin)],
        timeline: &[super::scenario::TimelineStep],
        nodes: &super::apps::NodeTimeline,
        cx: &ResolveContext,
        errors: &mut Errors,
        warnings: &mut Vec<String>,
    ) -> Result<WorkloadSet, Errors> {
        let mut set = WorkloadSet {
            arrivals: vec![Workloads::default(); timeline.len()],
            baseline_arrivals: vec![Workloads::default(); timeline.len()],
            ..WorkloadSet::default()
        };
        let mut apps = self.apps(file, doc, &items, existing, cx.seed);
        let existing_pods = existing.len();
        // Baseline pods as references to the workload pods they equal, materialised only if
        // some TrainJob has overrides (copying 200,000 plain pods to throw them away cost a
        // third of the load).
        let mut baseline_pods: Vec<BasePod> = Vec::new();
        let kueue_on = !cx.kueue.is_empty();
        let mut queued: Vec<kueue::Queued> = Vec::with_capacity(match kueue_on {
            true => items.len(),
            false => 0,
        });
        // Workloads naming a Kueue queue that Kueue does not admit here: (queue, where).
        let mut unmanaged: Vec<(String, String)> = Vec::new();
        for item in items {
            let pods = existing_pods + set.pods.len();
            if crate::limits::PODS.exceeded_by(pods as u64) {
                let message = crate::limits::PODS.message(format!("{pods} pods before this item"));
                return Err(vec![match &item.source {
                    Source::Item { path, .. } => doc.error(file, path, message),
                    Source::Object(o) => o.error(message),
                }]);
            }
            if item.step.is_none() {
                set.unit_starts.push(set.steps.len());
                set.baseline_unit_starts.push(set.baseline.steps.len());
            }
            let mut take = |loaded: kueue::Loaded| match loaded {
                // A Determined trial's pods that name a queue: Kueue's pod integration queues
                // each pod (Determined itself knows nothing of Kueue).
                Ok((w, origin))
                    if kueue_on
                        && origin.value().get("determined").is_some()
                        && w.pods.iter().any(|p| kueue::pod_workload(p, cx).is_some()) =>
                {
                    for pod in w.pods {
                        let workload = kueue::pod_workload(&pod, cx);
                        let loaded = LoadedWorkload {
                            warnings: Vec::new(),
                            ..LoadedWorkload::pods(vec![pod], plan::in_order(1))
                        };
                        match workload {
                            Some(workload) => queued.push(kueue::Queued {
                                step: item.step,
                                kind: "Pod",
                                origin: origin.clone(),
                                loaded,
                                job: None,
                                workload,
                            }),
                            None => set.add(
                                loaded,
                                &origin,
                                item.step,
                                &mut baseline_pods,
                                errors,
                                warnings,
                            ),
                        }
                    }
                    warnings.extend(w.warnings);
                }
                // Workloads naming a queue wait for Kueue, from the step they arrive in.
                Ok((w, origin))
                    if kueue_on
                        && let Some((kind, workload, job)) = kueue::workload_of(
                            &origin,
                            w.pods_alike(),
                            w.train_job.is_some(),
                            cx,
                        ) =>
                {
                    let mut w = w;
                    let job = job.map(Box::new).or_else(|| w.train_job.take());
                    queued.push(kueue::Queued {
                        step: item.step,
                        kind,
                        origin,
                        loaded: w,
                        job,
                        workload,
                    })
                }
                Ok((mut w, origin)) => {
                    debug_assert!(w.unmade.is_none(), "an unmade TrainJob is always queued");
                    if let Some(q) = kueue::queue_name(origin.value())
                        && !kueue_on
                    {
                        unmanaged.push((q.to_string(), origin.describe()));
                    }
                    if w.suspended {
                        w.warnings.push(format!(
                            "{} {} ({}) is suspended: its controller creates no pods for it",
                            origin.kind().unwrap_or("Job"),
                            origin.value()["metadata"]["name"].as_str().unwrap_or(""),
                            origin.describe()
                        ));
                        w.pods.clear();
                        w.steps.clear();
                    }
                    set.add(w, &origin, item.step, &mut baseline_pods, errors, warnings)
                }
                Err(mut e) => errors.append(&mut e),
            };
            let step = item.step;
            // Each object is added as it loads: holding 10,000 loaded pods back first cost
            // 12 MB and 3% of a whole run.
            match item.source {
                Source::Item { path, value } if value.get("determined").is_some() => {
                    take(self.determined(file, doc, &path, value, cx.gates));
                }
                Source::Item { path, value } => match self.resolve_item(file, doc, &path, value) {
                    Ok(origins) => {
                        for o in origins {
                            let loaded = self.object(&o, step, cx, &mut apps, nodes);
                            take(loaded.map(|w| (w, o)));
                        }
                    }
                    Err(e) => take(Err(e)),
                },
                Source::Object(o) => {
                    let loaded = self.object(&o, step, cx, &mut apps, nodes);
                    take(loaded.map(|w| (w, o)))
                }
            }
        }
        if kueue_on && cx.kueue_over_time {
            let (placed, outcome, jobs) = self.queue_over_time(queued, cx);
            for (loaded, step) in placed {
                match loaded {
                    Ok((w, origin)) => {
                        set.add(w, &origin, step, &mut baseline_pods, errors, warnings)
                    }
                    Err(mut e) => errors.append(&mut e),
                }
            }
            set.kueue = Some(outcome);
            set.kueue_jobs = jobs;
        } else if kueue_on {
            let admitted = self.admit_queued(queued, timeline, cx);
            for (loaded, step) in admitted.placed {
                match loaded {
                    Ok((w, origin)) => {
                        set.add(w, &origin, step, &mut baseline_pods, errors, warnings)
                    }
                    Err(mut e) => errors.append(&mut e),
                }
            }
            let outcome = admitted.outcome;
            warnings.extend(outcome.admission.warnings.iter().cloned());
            set.kueue = Some(outcome);
            set.kueue_events = admitted.events;
        }
        self.warn_unmanaged(&unmanaged, warnings);
        if let Some(apps) = apps.as_mut() {
            // The DaemonSets' pods for the nodes the timeline adds arrive in that step.
            for (k, pods, origin) in apps.daemon_pods_for_added_nodes(nodes, cx.gates) {
                let steps = plan::in_order(pods.len());
                let loaded = LoadedWorkload::pods(pods, steps);
                set.add(
                    loaded,
                    &origin,
                    Some(k),
                    &mut baseline_pods,
                    errors,
                    warnings,
                );
            }
        }
        set.apps = apps;
        set.link_waits(&baseline_pods);
        if set.any_overrides {
            set.baseline.pods = baseline_pods
                .into_iter()
                .map(|b| match b {
                    BasePod::Workload(i) => set.pods[i].0.clone(),
                    BasePod::Own(p) => *p,
                })
                .collect();
        }
        Ok(set)
    }

    /// One workload object arriving in `step`: an apps kind through its controller, or any
    /// other.
    fn object(
        &self,
        o: &Origin,
        step: Option<usize>,
        cx: &ResolveContext,
        apps: &mut Option<super::apps::Apps>,
        nodes: &super::apps::NodeTimeline,
    ) -> Result<LoadedWorkload, Errors> {
        match apps.as_mut() {
            Some(apps) if super::apps::is_apps(o) => self.apps_workload(o, step, cx, apps, nodes),
            _ => self.workload(o, cx),
        }
    }

    /// One workload object: a Pod (the default kind), a TrainJob or a PodGroup.
    fn workload(&self, origin: &Origin, cx: &ResolveContext) -> Result<LoadedWorkload, Errors> {
        let kind = origin.kind().unwrap_or("Pod");
        origin.admit_with(kind, || self.workload_of_kind(kind, origin, cx))
    }

    /// [`Loader::workload`], its metadata aside.
    fn workload_of_kind(
        &self,
        kind: &str,
        origin: &Origin,
        cx: &ResolveContext,
    ) -> Result<LoadedWorkload, Errors> {
        match kind {
            "TrainJob" => self.train_job(origin, cx),
            "Job" => {
                let job: k8s_openapi::api::batch::v1::Job = origin.decode().map_err(|e| vec![e])?;
                let pods = origin.check_all(crate::resolve::job::job_pods(&job, "", cx.gates))?;
                let steps = plan::in_order(pods.len());
                Ok(LoadedWorkload {
                    suspended: crate::resolve::job::suspended(&job),
                    completion: Some(crate::resolve::completion::of_job(&job)),
                    ..LoadedWorkload::pods(pods, steps)
                })
            }
            "JobSet" => {
                use crate::resolve::jobset;
                let api_version = origin.api_version().unwrap_or("");
                if !jobset::API_VERSIONS.contains(&api_version) {
                    return Err(vec![origin.error_at(
                        "apiVersion",
                        format!(
                            "unsupported apiVersion {api_version:?} for kind JobSet (expected one of {:?})",
                            jobset::API_VERSIONS
                        ),
                    )]);
                }
                origin.refuse_any(crate::resolve::jobset_admission::crd_errors(origin.value()))?;
                // The webhooks see only what the API server validated: metadata too.
                if origin.check_meta(kind).is_err() {
                    return Err(Vec::new());
                }
                origin.refuse_any(crate::resolve::jobset_admission::webhook_errors(
                    origin.value(),
                ))?;
                let js: jobset::JobSet = origin.decode().map_err(|e| vec![e])?;
                let (pods, notes) = origin.check_all(jobset::jobset_pods(&js, cx.gates))?;
                let steps = plan::in_order(pods.len());
                Ok(LoadedWorkload {
                    suspended: jobset::suspended(&js),
                    warnings: (notes.into_iter())
                        .map(|n| format!("{n} ({})", origin.describe()))
                        .collect(),
                    completion: Some(jobset::completion(&js)),
                    ..LoadedWorkload::pods(pods, steps)
                })
            }
            "PodGroup" => origin
                .decode::<pod_group::PodGroupDoc>()
                .map_err(|e| vec![e])
                .and_then(|d| origin.check_all(pod_group::pod_group(&d)))
                .map(|g| LoadedWorkload {
                    pod_groups: vec![g],
                    ..LoadedWorkload::pods(Vec::new(), Vec::new())
                }),
            _ => origin
                .decode::<k8s::Pod>()
                .map_err(|e| vec![e])
                .and_then(|k| {
                    origin.check(|errs| objects::pod_from_k8s(&k, &origin.path, cx.gates, errs))
                })
                .map(|pod| LoadedWorkload::pods(vec![pod], plan::in_order(1))),
        }
    }

    /// A TrainJob: resolved with its overrides, and (when it has any) without them.
    fn train_job(&self, origin: &Origin, cx: &ResolveContext) -> Result<LoadedWorkload, Errors> {
        let api_version = origin.api_version().unwrap_or("");
        if !trainjob::API_VERSIONS.contains(&api_version) {
            return Err(vec![origin.error_at(
                "apiVersion",
                format!(
                    "unsupported apiVersion {api_version:?} for kind TrainJob (expected one of {:?})",
                    trainjob::API_VERSIONS
                ),
            )]);
        }
        origin.refuse_any(crate::resolve::trainer_admission::train_job(origin.value()))?;
        // Trainer's webhook (resolving the runtime, its plugins, the overrides) sees only what
        // the API server validated: metadata too.
        if origin.check_meta("TrainJob").is_err() {
            return Err(Vec::new());
        }
        let job: TrainJob = origin.decode().map_err(|e| vec![e])?;
        // A TrainJob waiting for Kueue gets pods (and a baseline) only once admitted; its
        // baseline does not depend on Kueue's patch, so it is resolved then. Until then its
        // shape's pods stand for its own (a cluster queues thousands of jobs it never admits).
        if !cx.kueue.is_empty() && kueue::queue_name(origin.value()).is_some() {
            let opts = BuildOptions {
                overrides: true,
                track: self.options.provenance,
                clock: cx.clock,
            };
            if let Some(unmade) =
                (cx.alike).unmade(&job, cx.runtimes, opts, cx.gates, cx.initializers)
            {
                return Ok(LoadedWorkload {
                    unmade: Some(unmade),
                    train_job: Some(Box::new(job)),
                    ..LoadedWorkload::pods(Vec::new(), Vec::new())
                });
            }
            let mut loaded = self.resolve_train_job(origin, job.clone(), cx, Baseline::Later)?;
            loaded.train_job = Some(Box::new(job));
            return Ok(loaded);
        }
        self.resolve_train_job(origin, job, cx, Baseline::Resolve)
    }

    /// A decoded TrainJob (Kueue's runtime patch added, maybe), resolved, with its
    /// runtime-only baseline as `baseline` says.
    pub(super) fn resolve_train_job(
        &self,
        origin: &Origin,
        job: TrainJob,
        cx: &ResolveContext,
        baseline: Baseline,
    ) -> Result<LoadedWorkload, Errors> {
        let pods = |overrides: bool, track: bool| {
            let opts = BuildOptions {
                overrides,
                track,
                clock: cx.clock,
            };
            origin.check_all(cx.alike.train_job_pods(
                &job,
                cx.runtimes,
                opts,
                cx.gates,
                cx.initializers,
            ))
        };
        let with = pods(true, self.options.provenance)?;
        // The runtime-only baseline of the override effect.
        let baseline = match (with.resolved.has_overrides, baseline) {
            (false, _) | (true, Baseline::Later) => None,
            (true, Baseline::Known(known)) => Some(known),
            (true, Baseline::Resolve) => {
                let without = pods(false, false)?;
                Some(Workloads {
                    pods: without.pods,
                    steps: without.steps,
                })
            }
        };
        let r = &with.resolved;
        // Trainer's controller retries the JobSet and reports the webhook's answer in a
        // TrainJobResourcesCreationFailed event; the job runs no pod.
        let refused = (with.jobset_refused.iter())
            .map(|m| format!("Trainer cannot create its JobSet, so it runs no pod (event TrainJobResourcesCreationFailed: {m})"));
        let warnings = (r.warnings.iter().cloned())
            .chain(refused)
            .map(|m| {
                format!(
                    "TrainJob {}/{} ({}): {m}",
                    r.namespace,
                    r.name,
                    origin.describe()
                )
            })
            .collect();
        // The JobSet its runtime makes decides when it is done.
        let completion = crate::resolve::build::find_runtime(&job, cx.runtimes)
            .ok()
            .map(|rt| crate::resolve::build::completion(r, &rt.spec.template.spec));
        Ok(LoadedWorkload {
            completion,
            never_created: with.jobset_refused.is_some(),
            pods: with.pods,
            steps: with.steps,
            pod_groups: with.pod_group.into_iter().collect(),
            resolved: Some(with.resolved),
            baseline,
            warnings,
            suspended: false,
            unmade: None,
            train_job: None,
            waits_for: Vec::new(),
        })
    }
}

impl WorkloadSet {
    /// Ties the pods that wait for a pod of another item to it, by key (see
    /// `LoadedWorkload::waits_for`), in the steps and the baseline's.
    fn link_waits(&mut self, baseline_pods: &[BasePod]) {
        if self.waits.is_empty() {
            return;
        }
        let keys: Vec<String> = self.pods.iter().map(|(p, _)| p.key()).collect();
        let mut lists: Vec<&mut Vec<Step>> = vec![&mut self.steps];
        lists.extend(self.arrivals.iter_mut().map(|a| &mut a.steps));
        super::apps::link_waits(&self.waits, &keys, &mut lists);
        let base_keys: Vec<String> = (baseline_pods.iter())
            .map(|b| match b {
                BasePod::Workload(i) => keys[*i].clone(),
                BasePod::Own(p) => p.key(),
            })
            .collect();
        let mut lists: Vec<&mut Vec<Step>> = vec![&mut self.baseline.steps];
        lists.extend(self.baseline_arrivals.iter_mut().map(|a| &mut a.steps));
        super::apps::link_waits(&self.base_waits, &base_keys, &mut lists);
    }

    /// Adds a loaded item's pods, steps, PodGroups and baseline.
    fn add(
        &mut self,
        mut w: LoadedWorkload,
        origin: &Origin,
        step: Option<usize>,
        baseline_pods: &mut Vec<BasePod>,
        errors: &mut Errors,
        warnings: &mut Vec<String>,
    ) {
        if w.never_created {
            w.pods.clear();
            w.steps.clear();
            w.baseline = None;
            w.pod_groups.clear();
        }
        for g in w.pod_groups {
            let key = g.key();
            if self.pod_groups.insert(key.clone(), g).is_some() {
                errors.push(origin.error_at(
                    "metadata.name",
                    format!(
                        "podgroups {:?} already exists in namespace {:?}",
                        key.2, key.1
                    ),
                ));
            }
        }
        let (steps, baseline_steps) = match step {
            None => (&mut self.steps, &mut self.baseline.steps),
            Some(k) => (
                &mut self.arrivals[k].steps,
                &mut self.baseline_arrivals[k].steps,
            ),
        };
        self.any_overrides |= w.baseline.is_some();
        let offset = baseline_pods.len();
        match w.baseline {
            Some(base) => {
                baseline_steps.extend(plan::offset(base.steps, offset));
                baseline_pods.extend(base.pods.into_iter().map(|p| BasePod::Own(Box::new(p))));
            }
            None => {
                baseline_steps.extend(plan::offset(w.steps.clone(), offset));
                let first = self.pods.len();
                baseline_pods.extend((first..first + w.pods.len()).map(BasePod::Workload));
            }
        }
        for (pod, key, requirement) in w.waits_for {
            self.waits
                .push((self.pods.len() + pod, key.clone(), requirement.clone()));
            self.base_waits.push((offset + pod, key, requirement));
        }
        if let Some(c) = w.completion.take().filter(|_| !w.pods.is_empty()) {
            self.completions.push((self.pods.len(), c));
        }
        steps.extend(plan::offset(w.steps, self.pods.len()));
        warnings.extend(w.warnings);
        self.train_jobs.extend(w.resolved);
        self.pods
            .extend(w.pods.into_iter().map(|p| (p, origin.clone())));
    }
}
