//! Reading scenario files and the Kubernetes objects they reference into typed, validated
//! objects. Every error names its file, line, column and field path.
//!
//! [`Loader::scenario`] reads a Scenario part by part, each in its own module: [`objects`]
//! routes `spec.objects` to the typed stores, then [`nodes`], [`cluster`] (namespaces,
//! priority classes, runtimes, existing pods), [`workloads`] (with [`determined`] trials),
//! [`dra`] (DRA objects, and the claims pods get from templates), [`timeline`], [`expect`]
//! and [`scheduler`].

mod apps;
mod cluster;
mod determined;
mod dra;
pub mod expect;
mod files;
pub mod kueue;
mod kueue_config;
mod kueue_objects;
mod loaded;
mod nodes;
mod objects;
mod origin;
pub mod paths;
mod pdb;
pub mod plan;
pub mod pod_group;
pub mod priority;
pub mod replay;
pub mod scenario;
mod scheduler;
mod timeline;
mod variants;
mod workloads;

pub use apps::ScenarioDaemonSet;
pub use files::scenario_files;
pub use variants::{
    Selection, SweepLoader, SweepPlan, SweepScenario, Variant, VariantName, load_sweeps,
};

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use serde_json::Value;

use crate::error::InputError;
use crate::model::Node;
use crate::model::Pod;
use crate::resolve::Runtimes;
use crate::resolve::build::ResolvedTrainJob;
use crate::sched::SchedulerConfig;
use crate::sched::plan::Step;
use crate::sched::plugins::pod_topology_spread::ServiceSelector;
use crate::sched::profile::Profile;
use crate::yaml::{self, Document, join_path};
use loaded::ResolveContext;
use loaded::{Source, WorkloadItem};
use origin::{Origin, suggestion};
use scenario::ScenarioDoc;
use workloads::WorkloadSet;

/// The scheduler name of the default profile.
const DEFAULT_SCHEDULER: &str = "default-scheduler";

/// A scenario, loaded and validated, ready to schedule.
#[derive(Debug, Clone)]
pub struct Scenario {
    pub name: String,
    pub description: Option<String>,
    pub file: PathBuf,
    pub nodes: Vec<Node>,
    pub existing_pods: Vec<Pod>,
    /// Every workload pod (plain pods and the pods of TrainJobs), in arrival order.
    pub workloads: Vec<Pod>,
    /// How the workload pods reach the scheduler (`dependsOn` order, completions).
    pub steps: Vec<Step>,
    /// The steps of each initial workload item, in arrival order (a sweep shuffles these).
    pub units: Vec<std::ops::Range<usize>>,
    /// The TrainJobs, resolved.
    pub train_jobs: Vec<ResolvedTrainJob>,
    /// The runtimes TrainJobs refer to.
    pub runtimes: Runtimes,
    /// The same workloads with every TrainJob's overrides left out (runtime only), when some
    /// TrainJob has overrides: the baseline of the override effect.
    pub baseline: Option<Workloads>,
    pub config: SchedulerConfig,
    /// Things the user should know that are not errors (a node without allocatable, …).
    pub warnings: Vec<String>,
    /// `spec.expect`, checked by `schedsim check`.
    pub expectations: Vec<crate::load::expect::Expectation>,
    /// What Kueue admitted, when the scenario has Kueue objects.
    pub kueue: Option<kueue::KueueOutcome>,
    /// The `replicas` of its Deployments, ReplicaSets and StatefulSets, as the disruption
    /// controller reads them for a pod's controller (`Scales::expected_scale`).
    pub scales: crate::resolve::apps::Scales,
    /// Its DaemonSets: a sweep that adds nodes gives them their pods.
    pub daemon_sets: Vec<ScenarioDaemonSet>,
    /// `spec.replay`: how `schedsim replay` replays it over time.
    pub replay: Option<replay::Replay>,
}

impl Scenario {
    /// Its workload pods scheduled through its steps onto its nodes, with `config` (the
    /// scenario's own, or one asking for more: recorded cycles, other seeds).
    pub fn schedule(&self, config: &crate::sched::SchedulerConfig) -> crate::sched::Outcome {
        crate::sched::schedule_plan(
            self.nodes.clone(),
            &self.existing_pods,
            &self.workloads,
            &self.steps,
            config,
        )
    }
}

/// The nodes a timeline step's `addNodes` reads, or its errors.
type AddedNodes = Result<Vec<(Node, Origin)>, Errors>;

/// Workload pods and the steps that bring them to the scheduler.
#[derive(Debug, Clone, Default)]
pub struct Workloads {
    pub pods: Vec<Pod>,
    pub steps: Vec<Step>,
}

/// Everything a set of paths yielded: the good scenarios and every error, in input order.
#[derive(Debug, Default)]
pub struct Loaded {
    pub scenarios: Vec<Scenario>,
    pub errors: Vec<InputError>,
}

/// Loads every Scenario document of the given files. A bad scenario is reported in `errors`
/// and the others still load.
pub fn load_files(files: &[PathBuf], overrides: &LoadOptions) -> Loaded {
    let mut loader = Loader {
        plan_counts: None,
        cache: HashMap::new(),
        options: overrides,
    };
    let mut out = Loaded::default();
    for file in files {
        let docs = match loader.documents(file) {
            Ok(d) => d,
            Err(e) => {
                out.errors.push(e);
                continue;
            }
        };
        let scenarios: Vec<_> = docs
            .iter()
            .filter(|d| d.value.get("kind").and_then(Value::as_str) == Some(scenario::KIND))
            .collect();
        if scenarios.is_empty() {
            out.errors.push(InputError::new(
                file,
                format!(
                    "no Scenario document (apiVersion: {}, kind: Scenario) in this file",
                    scenario::API_VERSION
                ),
            ));
        }
        for doc in scenarios {
            match loader.scenario(file, doc) {
                Ok(s) => out.scenarios.push(s),
                Err(mut errs) => out.errors.append(&mut errs),
            }
        }
    }
    out
}

/// Command-line settings that override a scenario's.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    pub message_format: Option<crate::sched::framework::MessageFormat>,
    /// A `KubeSchedulerConfiguration` for every scenario, in place of their own
    /// (`run --scheduler-config`).
    pub scheduler_config: Option<PathBuf>,
    /// Record where every field of a resolved TrainJob came from (`resolve --explain`).
    pub provenance: bool,
    /// Keep which nodes gave each pending pod's verdicts, for the report (`run --node-lists`);
    /// otherwise only how many.
    pub node_lists: bool,
    /// kube-scheduler's node sampling or every node, for every scenario (`--node-sampling`).
    pub node_sampling: Option<crate::sched::sampling::NodeSampling>,
    /// The scenarios with `spec.replay` are replayed (`replay`, `sweep`): their Kueue workloads
    /// are admitted over time by the replay, not once at load as a snapshot admits them.
    pub kueue_over_time: bool,
}

struct Loader<'o> {
    cache: HashMap<PathBuf, Rc<Vec<Rc<Document>>>>,
    options: &'o LoadOptions,
    /// `schedsim plan`: how many nodes of each `spec.plan` candidate to add.
    plan_counts: Option<Vec<u32>>,
}

type Errors = Vec<InputError>;

impl Loader<'_> {
    fn documents(&mut self, file: &Path) -> Result<Rc<Vec<Rc<Document>>>, InputError> {
        if let Some(d) = self.cache.get(file) {
            return Ok(d.clone());
        }
        let docs: Rc<Vec<Rc<Document>>> = Rc::new(
            yaml::read_documents(file)?
                .into_iter()
                .map(Rc::new)
                .collect(),
        );
        self.cache.insert(file.to_path_buf(), docs.clone());
        Ok(docs)
    }

    /// Every Scenario document of the files, decoded (its outline: the parts are read when
    /// it loads), with its file; the files and documents that cannot be read go to `errors`.
    fn scenario_docs(
        &mut self,
        files: &[PathBuf],
        errors: &mut Errors,
    ) -> Vec<(PathBuf, Rc<Document>, ScenarioDoc)> {
        let mut out = Vec::new();
        for file in files {
            let docs = match self.documents(file) {
                Ok(d) => d,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            };
            let scenarios = (docs.iter())
                .filter(|d| d.value.get("kind").and_then(Value::as_str) == Some(scenario::KIND));
            for doc in scenarios {
                match doc.decode(file, "", &doc.value) {
                    Ok(sd) => out.push((file.clone(), Rc::clone(doc), sd)),
                    Err(e) => errors.push(e),
                }
            }
        }
        out
    }

    /// One Scenario document, part by part. Errors of every part are collected; a product
    /// limit stops the load at once.
    fn scenario(&mut self, file: &Path, doc: &Rc<Document>) -> Result<Scenario, Errors> {
        let sd: ScenarioDoc = doc
            .decode(file, "", &scenario_outline(&doc.value))
            .map_err(|e| vec![e])?;
        let list = |key: &str| -> &[Value] {
            doc.value["spec"][key].as_array().map_or(&[], Vec::as_slice)
        };
        if sd.api_version != scenario::API_VERSION {
            return Err(vec![doc.error(
                file,
                "apiVersion",
                format!(
                    "unsupported apiVersion {:?} for kind Scenario (expected {:?})",
                    sd.api_version,
                    scenario::API_VERSION
                ),
            )]);
        }
        let gates = sd.spec.scheduler.feature_gates;
        let mut errors = Vec::new();
        let mut warnings = Vec::new();

        let mut routed = self.route_objects(file, doc, list("objects"), &mut errors);
        if routed.terminal_pods > 0 {
            let n = routed.terminal_pods;
            warnings.push(format!(
                "spec.objects: {n} pod{} in phase Succeeded or Failed left out: kube-scheduler does not see terminal pods",
                if n == 1 { "" } else { "s" }
            ));
        }
        let mut nodes = self.nodes(
            file,
            doc,
            list("nodes"),
            routed.nodes,
            &mut errors,
            &mut warnings,
        )?;
        if let (Some(counts), Some(plan)) = (self.plan_counts.clone(), &sd.spec.plan) {
            nodes.extend(self.plan_nodes(file, doc, plan, &counts, &mut errors)?);
        }
        let node_names: HashSet<&str> = nodes.iter().map(|(n, _)| n.name.as_str()).collect();
        let origins = self.origins(
            file,
            doc,
            "namespaces",
            list("namespaces"),
            routed.namespaces,
            &mut errors,
        );
        let namespaces = self.namespaces(origins, &mut errors);
        let origins = self.origins(
            file,
            doc,
            "priorityClasses",
            list("priorityClasses"),
            routed.priority_classes,
            &mut errors,
        );
        let priority_classes = self.priority_classes(origins, &mut errors);
        let origins = self.origins(
            file,
            doc,
            "existingPods",
            list("existingPods"),
            routed.existing_pods,
            &mut errors,
        );
        let mut existing = self.existing_pods(origins, &gates, &node_names, &mut errors);
        let origins = self.origins(
            file,
            doc,
            "runtimes",
            list("runtimes"),
            routed.runtimes,
            &mut errors,
        );
        let runtimes = self.runtimes(origins, &mut errors, &mut warnings);
        let mut kueue_objects = self.kueue_objects(routed.kueue, &mut errors, &mut warnings);
        if let (Some(counts), Some(plan)) = (&self.plan_counts, &sd.spec.plan) {
            plan_quotas(file, doc, plan, counts, &mut kueue_objects, &mut errors);
        }
        self.kueue_updates(
            file,
            doc,
            &sd.spec.timeline,
            &mut kueue_objects,
            &mut errors,
        );
        if let (Some(_), Some(plan)) = (&self.plan_counts, &sd.spec.plan) {
            routed
                .dra
                .extend(self.plan_slices(file, doc, plan, &nodes, &mut errors));
        }
        let mut inventory = self.dra_objects(routed.dra, &gates, &mut errors, &mut warnings);
        let mut budgets = self.budgets(routed.budgets, &mut errors);

        // The nodes the timeline adds, read now: DaemonSets make pods for them.
        let mut added_nodes: Vec<Option<AddedNodes>> = (sd.spec.timeline)
            .iter()
            .enumerate()
            .map(|(k, step)| {
                let path = format!("spec.timeline[{k}]");
                (step.add_nodes.as_ref()).map(|items| self.added_nodes(file, doc, &path, items))
            })
            .collect();
        let node_timeline = apps::NodeTimeline {
            initial: &nodes,
            steps: (sd.spec.timeline.iter().zip(&added_nodes))
                .map(|(step, added)| {
                    let added = match added {
                        Some(Ok(list)) => list.iter().map(|(n, _)| n.clone()).collect(),
                        _ => Vec::new(),
                    };
                    (added, step.fail_nodes.clone().unwrap_or_default())
                })
                .collect(),
        };
        let clock = (sd.spec.clock.clone())
            .unwrap_or_else(|| crate::resolve::build::DEFAULT_CLOCK.to_string());
        // Kueue's "now" is the scenario clock (when later than every admitted workload's
        // timestamps): a workload without a written creationTimestamp is created then, so
        // one written earlier is older, as it would be in the cluster.
        let clock_seconds =
            crate::trace::clock::clock_origin(&clock).map_or(0, |ms| ms.div_euclid(1000));
        kueue_objects.now = kueue_objects.now.max(clock_seconds);
        let cx = ResolveContext {
            runtimes: &runtimes,
            kueue: &kueue_objects,
            priority_classes: &priority_classes,
            namespaces: &namespaces,
            gates: &gates,
            initializers: sd.spec.initializers,
            clock: &clock,
            seed: sd.spec.scheduler.seed,
            alike: &crate::resolve::alike::Alike::default(),
            kueue_over_time: self.options.kueue_over_time && sd.spec.replay.is_some(),
        };
        // A snapshot admits before any pod is scheduled, with no time passing: Kueue's
        // PodsReady timeouts never fall due, and blockAdmission (which waits for pods) is left
        // to a replay.
        let blocks = kueue_objects
            .pods_ready
            .as_ref()
            .is_some_and(|p| p.block_admission);
        if blocks && !cx.kueue_over_time {
            warnings.push("Kueue's waitForPodsReady.blockAdmission is simulated over time only (schedsim replay): this snapshot admits as if each admitted workload's pods were ready before the next admission".into());
        }
        // Workload items, the workload objects of spec.objects, then the timeline's arrivals.
        let item = |path: String, value, step| WorkloadItem {
            source: Source::Item { path, value },
            step,
        };
        let items = (list("workloads").iter().enumerate())
            .map(|(i, v)| item(format!("spec.workloads[{i}]"), v, None))
            .chain(routed.workloads.into_iter().map(|o| WorkloadItem {
                source: Source::Object(o),
                step: None,
            }))
            .chain(sd.spec.timeline.iter().enumerate().flat_map(|(k, step)| {
                (step.arrive.iter().flatten().enumerate())
                    .map(move |(i, v)| item(format!("spec.timeline[{k}].arrive[{i}]"), v, Some(k)))
            }))
            .collect();
        let mut set = self.workloads(
            file,
            doc,
            items,
            &existing,
            &sd.spec.timeline,
            &node_timeline,
            &cx,
            &mut errors,
            &mut warnings,
        )?;
        if let Some(k) = &mut set.kueue {
            let removed = kueue::evict_existing_pods(&mut existing, k, &mut set.kueue_events);
            k.evicted_pods = removed.preempted;
            k.drained_pods = removed.drained;
            warnings.extend(removed.warnings);
        }

        dra::sync_claims(
            &mut inventory,
            &mut existing,
            &mut set.pods,
            &mut set.baseline.pods,
            sd.spec.scheduler.seed,
            &mut warnings,
        );
        if gates.dra_extended_resource {
            warnings.extend(dra::implicit_extended_names(
                existing.iter().chain(&set.pods),
            ));
        }
        for (p, at) in existing.iter_mut().chain(set.pods.iter_mut()) {
            if let Err(m) = priority_classes.admit(p) {
                errors.push(at.error_at(
                    "spec.priorityClassName",
                    format!("pods {:?} is forbidden: {m}", p.name),
                ));
            }
        }
        for (p, at) in existing.iter().chain(&set.pods) {
            for w in crate::sched::plugins::node_affinity::unparsable_term_warnings(p) {
                warnings.push(format!("pod {} ({}): {w}", p.key(), at.describe()));
            }
        }
        warnings.extend(cluster::terminating_warnings(&existing, &set.pods));
        for p in &mut set.baseline.pods {
            // Errors are those of the pods above.
            let _ = priority_classes.admit(p);
        }
        let (scales, daemon_sets, controller_selectors) = match set.apps.take() {
            Some(a) => {
                let selectors = a.controller_selectors();
                let mut sets: Vec<ScenarioDaemonSet> =
                    a.daemon_sets.into_iter().map(|(d, _)| d).collect();
                for d in &mut sets {
                    // Errors are those of its pods.
                    let _ = priority_classes.admit(&mut d.pods.template);
                }
                (a.scales, sets, selectors)
            }
            None => Default::default(),
        };
        let pods = existing.iter().chain(&set.pods).map(|(p, _)| p);
        pdb::expected_scales(&mut budgets, pods, &scales, &mut warnings);
        // With a KubeSchedulerConfiguration, a pod naming no profile stays pending and says so.
        let configured =
            sd.spec.scheduler.configuration.is_some() || self.options.scheduler_config.is_some();
        for (p, at) in set.pods.iter().filter(|_| !configured) {
            if p.scheduler_name != DEFAULT_SCHEDULER {
                warnings.push(format!(
                    "pod {} ({}) asks for scheduler {:?}; schedsim simulates {DEFAULT_SCHEDULER:?} and schedules it with that profile",
                    p.key(),
                    at.describe(),
                    p.scheduler_name
                ));
            }
        }
        let units = ranges(&set.unit_starts, set.steps.len());
        let baseline_units = ranges(&set.baseline_unit_starts, set.baseline.steps.len());
        self.timeline(
            file,
            doc,
            &sd.spec.timeline,
            &mut added_nodes,
            &nodes,
            &mut set,
            &mut errors,
        );
        let expectations = self.expectations(file, doc, &sd.spec.expect, &mut errors);
        let mut replay = sd.spec.replay.as_ref().and_then(|spec| {
            let mut replay = replay::read(file, doc, spec, &sd.spec.timeline, &clock, &mut errors)?;
            let origin_ms = crate::trace::clock::clock_origin(&clock).unwrap_or(0);
            replay.timing = replay::timing(&set.pods, origin_ms, &mut errors);
            replay.kueue =
                (!kueue_objects.is_empty()).then(|| std::sync::Arc::new(kueue_objects.clone()));
            replay.completions = std::mem::take(&mut set.completions);
            replay.kueue_jobs = std::mem::take(&mut set.kueue_jobs);
            replay.kueue_over_time = self.options.kueue_over_time;
            replay.clock.clone_from(&clock);
            replay.initializers = sd.spec.initializers;
            Some(replay)
        });
        let mut pod_keys = HashSet::new();
        for (p, at) in existing.iter().chain(&set.pods) {
            if !pod_keys.insert(p.key()) {
                errors.push(at.error_at(
                    "metadata.name",
                    format!(
                        "pods {:?} already exists in namespace {:?}",
                        p.name, p.namespace
                    ),
                ));
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        // JobSet's headless Service selects a TrainJob's pods by their JobSet name label.
        let services = (set.train_jobs.iter())
            .filter(|j| j.headless_service)
            .map(|j| ServiceSelector {
                namespace: j.namespace.clone(),
                selector: [(
                    crate::resolve::jobset::JOBSET_NAME_LABEL.to_string(),
                    j.name.clone(),
                )]
                .into(),
            })
            .collect();
        let profiles = self
            .profiles(file, doc, &sd.spec.scheduler)
            .map_err(|e| vec![e])?;
        let pods = existing
            .iter()
            .map(|(p, _)| p)
            .chain(set.pods.iter().map(|(p, _)| p));
        warnings.extend(gpu_share_warnings(pods, profiles.as_deref().unwrap_or(&[])));
        if let Some(t) = replay.as_mut().and_then(|r| r.trace.as_mut()) {
            use crate::sched::plugins::registry::{ExtensionPoint, Plugin};
            t.gpu_share = (profiles.iter().flatten()).any(|p| {
                p.scheduler_name == t.scheduler_name
                    && p.framework
                        .runs(ExtensionPoint::Filter, Plugin::OpenGpuShare)
            });
        }
        let message_format = (self.options.message_format)
            .or(sd.spec.scheduler.message_format.map(Into::into))
            .unwrap_or_default();
        let mut workloads: Vec<Pod> = set.pods.into_iter().map(|(p, _)| p).collect();
        let (mut steps, mut units, mut train_jobs) = (set.steps, units, set.train_jobs);
        let mut baseline = set.any_overrides.then_some(set.baseline);
        if sd.spec.overrides == scenario::OverridesMode::Ignore
            && let Some(b) = baseline.take()
        {
            (workloads, steps, units) = (b.pods, b.steps, baseline_units);
            for j in &mut train_jobs {
                j.has_overrides = false;
            }
            // The runtime-only pods are not those the completions were counted on: a replay
            // then calls each job done when all its pods are.
            if let Some(r) = replay.as_mut() {
                r.completions.clear();
            }
        }
        Ok(Scenario {
            name: sd.metadata.name,
            description: sd.metadata.description,
            file: file.to_path_buf(),
            nodes: nodes.into_iter().map(|(n, _)| n).collect(),
            existing_pods: existing.into_iter().map(|(p, _)| p).collect(),
            workloads,
            steps,
            units,
            train_jobs,
            runtimes,
            baseline,
            config: SchedulerConfig {
                seed: sd.spec.scheduler.seed,
                message_format,
                feature_gates: gates,
                serves_every_pod: profiles.is_none(),
                profiles: profiles.unwrap_or_else(|| {
                    vec![Profile {
                        added_affinity: sd.spec.scheduler.added_affinity,
                        ..Profile::default_with_coscheduling()
                    }]
                }),
                namespaces,
                pod_groups: set.pod_groups,
                services,
                controller_selectors,
                drop_node_verdicts: !self.options.node_lists,
                reference_run: false,
                dra: std::sync::Arc::new(inventory),
                pdbs: std::sync::Arc::new(budgets),
                node_sampling: (self.options.node_sampling)
                    .or(sd.spec.scheduler.node_sampling)
                    .unwrap_or_default(),
                explain: None,
                explain_nodes: Vec::new(),
            },
            warnings,
            expectations,
            kueue: set.kueue,
            scales,
            daemon_sets,
            replay,
        })
    }

    /// `spec.objects`, each object sent to its store.
    fn route_objects(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        items: &[Value],
        errors: &mut Errors,
    ) -> objects::Routed {
        let mut routed = objects::Routed::default();
        for origin in self.origins(file, doc, "objects", items, Vec::new(), errors) {
            if let Err(e) = routed.route(origin) {
                errors.push(e);
            }
        }
        routed
    }

    /// The timeline: each step's events, its arrivals, then a checkpoint. `added_nodes` are
    /// the steps' `addNodes`, read already.
    #[allow(clippy::too_many_arguments)]
    fn timeline(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        timeline: &[scenario::TimelineStep],
        added_nodes: &mut [Option<AddedNodes>],
        nodes: &[(Node, Origin)],
        set: &mut WorkloadSet,
        errors: &mut Errors,
    ) {
        if timeline.is_empty() {
            return;
        }
        let mut node_names: Vec<String> = nodes.iter().map(|(n, _)| n.name.clone()).collect();
        let pod_names: Vec<String> = set.pods.iter().map(|(p, _)| p.key()).collect();
        let workload_names: Vec<String> = (set.pods.iter())
            .filter_map(|(p, _)| p.workload.clone())
            .collect();
        for (k, step) in timeline.iter().enumerate() {
            let path = format!("spec.timeline[{k}]");
            let events = match self.timeline_events(
                file,
                doc,
                &path,
                step,
                added_nodes[k].take(),
                &mut node_names,
                &pod_names,
                &workload_names,
            ) {
                Ok(e) => e,
                Err(mut e) => {
                    errors.append(&mut e);
                    continue;
                }
            };
            let name = (step.name.clone()).unwrap_or_else(|| timeline::describe_step(k, step));
            for (target, arrived) in [
                (&mut set.steps, std::mem::take(&mut set.arrivals[k].steps)),
                (
                    &mut set.baseline.steps,
                    std::mem::take(&mut set.baseline_arrivals[k].steps),
                ),
            ] {
                target.push(Step::StepStart);
                target.extend(events.iter().cloned().map(Step::Event));
                // Kueue acts on what the step changed: it deletes, re-creates or ungates pods.
                if let Some(kueue) = set.kueue_events.get(k) {
                    target.extend(kueue.iter().cloned().map(Step::Event));
                }
                target.extend(arrived);
                target.push(Step::Checkpoint { name: name.clone() });
            }
        }
    }

    /// `spec.expect`, for `schedsim check`.
    fn expectations(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        items: &[Value],
        errors: &mut Errors,
    ) -> Vec<expect::Expectation> {
        let mut out = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let path = format!("spec.expect[{i}]");
            let at = match doc.position(&path) {
                Some(p) => format!("{}:{}", file.display(), p.line),
                None => file.display().to_string(),
            };
            let checked = doc
                .decode::<expect::ExpectSpec>(file, &path, item)
                .and_then(|spec| {
                    expect::Expectation::new(path.clone(), at, spec).map_err(|(field, message)| {
                        doc.error(file, &join_path(&path, &field), message)
                    })
                });
            match checked {
                Ok(e) => out.push(e),
                Err(e) => errors.push(e),
            }
        }
        out
    }
}

/// Consecutive ranges from start positions to `end`.
fn ranges(starts: &[usize], end: usize) -> Vec<std::ops::Range<usize>> {
    starts
        .iter()
        .zip(starts.iter().skip(1).chain([&end]))
        .map(|(&a, &b)| a..b)
        .collect()
}

/// The lists of objects a Scenario holds inline; [`scenario_outline`] empties them.
const OBJECT_LISTS: [&str; 7] = [
    "objects",
    "nodes",
    "existingPods",
    "priorityClasses",
    "namespaces",
    "runtimes",
    "workloads",
];

/// A Scenario document with its inline object lists turned into lists of nulls of the same
/// length: decoding the format checks their shape, not their contents (which can be tens of
/// megabytes of Nodes and Pods, read one by one later, by reference).
fn scenario_outline(value: &Value) -> Value {
    let outline_list = |key: &str, v: &Value| match v {
        Value::Array(items) if OBJECT_LISTS.contains(&key) => {
            Value::Array(vec![Value::Null; items.len()])
        }
        other => other.clone(),
    };
    let Value::Object(fields) = value else {
        return value.clone();
    };
    let fields = fields.iter().map(|(k, v)| {
        let v = match (k.as_str(), v) {
            ("spec", Value::Object(spec)) => Value::Object(
                spec.iter()
                    .map(|(k, v)| (k.clone(), outline_list(k, v)))
                    .collect(),
            ),
            _ => v.clone(),
        };
        (k.clone(), v)
    });
    Value::Object(fields.collect())
}

/// `schedsim plan`'s quota candidates: each sets its ClusterQueue's nominal quota of a flavor
/// and resource to its count × step.
fn plan_quotas(
    file: &Path,
    doc: &Document,
    plan: &scenario::PlanSpec,
    counts: &[u32],
    objects: &mut crate::kueue::admission::Objects,
    errors: &mut Errors,
) {
    for (i, (c, &k)) in plan.candidates.iter().zip(counts).enumerate() {
        let Some(q) = &c.quota else { continue };
        let Ok(step) = q.step_units() else { continue };
        let quota = (objects.cluster_queues.iter_mut())
            .find(|cq| cq.name == q.cluster_queue)
            .and_then(|cq| cq.quotas.get_mut(&(q.flavor.clone(), q.resource.clone())));
        match quota {
            Some(quota) => quota.nominal = step.saturating_mul(i64::from(k)),
            None => errors.push(doc.error(
                file,
                &format!("spec.plan.candidates[{i}].quota"),
                format!(
                    "ClusterQueue {:?} has no quota of {:?} for flavor {:?}",
                    q.cluster_queue, q.resource, q.flavor
                ),
            )),
        }
    }
}

/// What is surprising about the pods' GPU-sharing annotations (`model::gpu_share`): the API
/// server takes any annotation, so these are warnings. Without a profile running
/// `Open-Gpu-Share` kube-scheduler reads none of them; a share of several GPUs makes the FGD
/// simulator panic at Reserve, where schedsim takes the GPUs its Filter found.
fn gpu_share_warnings<'p>(
    pods: impl Iterator<Item = &'p Pod>,
    profiles: &[Profile],
) -> Vec<String> {
    use crate::model::gpu_share::{GPU_MILLI, MILLI};
    use crate::sched::plugins::registry::{ExtensionPoint, Plugin};
    let runs_plugin = (profiles.iter()).any(|p| {
        p.framework
            .runs(ExtensionPoint::Filter, Plugin::OpenGpuShare)
    });
    let (mut annotated, mut several): (Vec<&Pod>, Vec<&Pod>) = (Vec::new(), Vec::new());
    for p in pods {
        if let Some(s) = &p.gpu_share {
            annotated.push(p);
            if s.count > 1 && s.milli < MILLI {
                several.push(p);
            }
        }
    }
    let mut warnings = Vec::new();
    if !runs_plugin && let Some(first) = annotated.first() {
        warnings.push(format!(
            "{} pod(s), such as {}, carry {GPU_MILLI} but no scheduler profile runs Open-Gpu-Share at Filter: kube-scheduler ignores the annotation and places them by their resource requests alone (fixtures/scheduler-config/fgd-open-gpu-share.yaml enables it)",
            annotated.len(),
            first.key()
        ));
    }
    if let Some(first) = several.first() {
        warnings.push(format!(
            "{} pod(s), such as {}, ask for a share of several GPUs: the FGD simulator's Open-Gpu-Share panics at Reserve on them; schedsim gives them the GPUs its Filter found (shares packed onto the devices in index order)",
            several.len(),
            first.key()
        ));
    }
    warnings
}
