//! Reading scenario files and the Kubernetes objects they reference into typed, validated
//! objects. Every error names its file, line, column and field path.

pub mod expect;
pub mod paths;
pub mod pod_group;
pub mod priority;
pub mod scenario;
mod timeline;
mod variants;

pub use variants::{Selection, SweepScenario, Variant, load_sweeps};

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::rc::Rc;

use k8s_openapi::api::core::v1 as k8s;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use serde_json::Value;

use crate::error::InputError;
use crate::features::FeatureGates;
use crate::model::pod_group::{PodGroup, PodGroups};
use crate::model::{Node, Pod};
use crate::resolve::build::{BuildOptions, ResolvedTrainJob};
use crate::resolve::runtime::{RuntimeKind, TrainingRuntime};
use crate::resolve::trainjob::{self, TrainJob};
use crate::resolve::{self, InitializerLifecycle, Runtimes, determined};
use crate::sched::SchedulerConfig;
use crate::sched::plan::{self, Step};
use crate::sched::plugins::pod_topology_spread::ServiceSelector;
use crate::sched::profile::Profile;

/// The label JobSet's headless Service selects a TrainJob's pods by.
const JOBSET_NAME_LABEL: &str = "jobset.sigs.k8s.io/jobset-name";
use crate::model::objects;
use crate::model::validate::FieldError;
use crate::yaml::{self, Document, join_path};
use scenario::{FileRef, PoolItem, ScenarioDoc};

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
}

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

/// Scenario files found under `paths`, in sorted order. Folders are searched recursively
/// for `*.yaml`, `*.yml` and `*.json` files that hold a Scenario document, in any valid YAML
/// or JSON spelling; symlinked folders are followed once (a loop is not followed again).
/// Finding no Scenario at all is an error naming the paths.
pub fn scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, InputError> {
    let mut files = BTreeSet::new();
    let mut visited = std::collections::HashSet::new();
    for p in paths {
        if p.is_dir() {
            collect_scenarios(p, &mut files, &mut visited)
                .map_err(|e| InputError::new(p, yaml::io_message(&e)))?;
        } else if p.exists() {
            files.insert(p.clone());
        } else {
            return Err(InputError::new(p, "no such file or directory"));
        }
    }
    if files.is_empty() {
        let names: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(InputError::new(
            Path::new(&names.join(", ")),
            format!(
                "no Scenario document (apiVersion: {}, kind: Scenario) in any .yaml, .yml or .json file here",
                scenario::API_VERSION
            ),
        ));
    }
    Ok(files.into_iter().collect())
}

fn collect_scenarios(
    dir: &Path,
    out: &mut BTreeSet<PathBuf>,
    visited: &mut std::collections::HashSet<PathBuf>,
) -> std::io::Result<()> {
    if !visited.insert(std::fs::canonicalize(dir)?) {
        return Ok(());
    }
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            collect_scenarios(&path, out, visited)?;
        } else if path.is_file()
            && path
                .extension()
                .is_some_and(|e| e == "yaml" || e == "yml" || e == "json")
            && declares_scenario(&path)
        {
            out.insert(path);
        }
    }
    Ok(())
}

/// Whether a file holds a Scenario document (other files in a folder, such as node
/// inventories, are not scenarios). Files that never mention the kind are not parsed; a file
/// that mentions it but does not parse counts, so that loading it reports its error.
fn declares_scenario(path: &Path) -> bool {
    let kind = scenario::KIND.as_bytes();
    let mentions =
        std::fs::read(path).is_ok_and(|bytes| bytes.windows(kind.len()).any(|w| w == kind));
    mentions
        && yaml::read_documents(path).map_or(true, |docs| {
            docs.iter()
                .any(|d| d.value.get("kind").and_then(Value::as_str) == Some(scenario::KIND))
        })
}

/// Loads every Scenario document of the given files. A bad scenario is reported in `errors`
/// and the others still load.
pub fn load_files(files: &[PathBuf], overrides: &LoadOptions) -> Loaded {
    let mut loader = Loader {
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

/// A pod of the runtime-only baseline: the workload pod it equals (no overrides changed it),
/// or its own.
enum BasePod {
    Workload(usize),
    Own(Box<Pod>),
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
}

struct Loader<'o> {
    cache: HashMap<PathBuf, Rc<Vec<Rc<Document>>>>,
    options: &'o LoadOptions,
}

type Errors = Vec<InputError>;

/// The value of the chart's `determined-medium-priority` PriorityClass.
const DETERMINED_DEFAULT_PRIORITY: i32 = 50;

/// The scheduler name of the default profile.
const DEFAULT_SCHEDULER: &str = "default-scheduler";

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

        let mut nodes = Vec::new();
        for (i, item) in list("nodes").iter().enumerate() {
            let path = format!("spec.nodes[{i}]");
            match self.node_item(file, doc, &path, item) {
                Ok(mut n) => nodes.append(&mut n),
                Err(mut e) => errors.append(&mut e),
            }
            if crate::limits::NODES.exceeded_by(nodes.len() as u64) {
                return Err(vec![doc.error(
                    file,
                    &path,
                    crate::limits::NODES.message(format!("{} nodes", nodes.len())),
                )]);
            }
        }
        let mut seen = HashMap::new();
        for (n, at) in &nodes {
            if let Some(first) = seen.insert(n.name.clone(), at.clone()) {
                errors.push(at.error(format!(
                    "duplicate node name {:?} (first defined at {})",
                    n.name,
                    first.describe()
                )));
            }
            if !n.allocatable.contains_key("pods") {
                warnings.push(format!(
                    "node {:?} ({}) has no status.allocatable.pods: kube-scheduler admits no pods on it",
                    n.name,
                    at.describe()
                ));
            }
        }

        let mut namespaces = crate::sched::plugins::inter_pod_affinity::NamespaceLabels::new();
        for (i, item) in list("namespaces").iter().enumerate() {
            let path = format!("spec.namespaces[{i}]");
            let convert = |k: &k8s::Namespace, _: &str, _: &mut Vec<FieldError>| k.clone();
            match self.typed_items(file, doc, &path, item, "Namespace", convert) {
                Ok(list) => {
                    for (ns, _) in list {
                        namespaces.insert(
                            ns.metadata.name.unwrap_or_default(),
                            ns.metadata.labels.unwrap_or_default(),
                        );
                    }
                }
                Err(mut e) => errors.append(&mut e),
            }
        }
        let mut priority_classes = priority::PriorityClasses::default();
        for (i, item) in list("priorityClasses").iter().enumerate() {
            let path = format!("spec.priorityClasses[{i}]");
            let convert = |k: &PriorityClass, _: &str, _: &mut Vec<FieldError>| k.clone();
            match self.typed_items(file, doc, &path, item, "PriorityClass", convert) {
                Ok(list) => {
                    for (class, at) in list {
                        if let Err(m) = priority_classes.insert(class) {
                            errors.push(at.error(m));
                        }
                    }
                }
                Err(mut e) => errors.append(&mut e),
            }
        }

        let mut existing = Vec::new();
        for (i, item) in list("existingPods").iter().enumerate() {
            match self.pod_items(file, doc, &format!("spec.existingPods[{i}]"), item, &gates) {
                Ok(mut p) => existing.append(&mut p),
                Err(mut e) => errors.append(&mut e),
            }
        }
        for (p, at) in &existing {
            match &p.node_name {
                None => errors.push(at.error_at(
                    "spec.nodeName",
                    "existing pods must be bound: set spec.nodeName".into(),
                )),
                Some(n) if !seen.contains_key(n) => errors.push(at.error_at(
                    "spec.nodeName",
                    format!("node {n:?} is not in the scenario's nodes"),
                )),
                _ => {}
            }
        }
        let clock = sd
            .spec
            .clock
            .clone()
            .unwrap_or_else(|| crate::resolve::build::DEFAULT_CLOCK.to_string());
        let mut runtimes = Runtimes::default();
        for (i, item) in list("runtimes").iter().enumerate() {
            match self.runtime_items(file, doc, &format!("spec.runtimes[{i}]"), item) {
                Ok(list) => {
                    for (r, at) in list {
                        let name = r.name().to_string();
                        if runtimes.insert(r).is_some() {
                            errors.push(at.error_at(
                                "metadata.name",
                                format!("duplicate runtime name {name:?}"),
                            ));
                        }
                    }
                }
                Err(mut e) => errors.append(&mut e),
            }
        }
        let mut workloads: Vec<(Pod, Origin)> = Vec::new();
        let mut steps = Vec::new();
        let mut train_jobs = Vec::new();
        // The runtime-only baseline: steps as they come, pods as references to the workload
        // pods they equal, materialised only if some TrainJob has overrides (copying 200,000
        // plain pods to throw them away cost a third of the load).
        let mut baseline = Workloads::default();
        let mut baseline_pods: Vec<BasePod> = Vec::new();
        let mut any_overrides = false;
        let mut pod_groups = PodGroups::new();
        // Workload items, then the timeline's arrivals with their step.
        let items: Vec<(String, &Value, Option<usize>)> = list("workloads")
            .iter()
            .enumerate()
            .map(|(i, item)| (format!("spec.workloads[{i}]"), item, None))
            .chain(sd.spec.timeline.iter().enumerate().flat_map(|(k, step)| {
                step.arrive
                    .iter()
                    .flatten()
                    .enumerate()
                    .map(move |(i, item)| {
                        (format!("spec.timeline[{k}].arrive[{i}]"), item, Some(k))
                    })
            }))
            .collect();
        let mut arrivals: Vec<Workloads> = vec![Workloads::default(); sd.spec.timeline.len()];
        let mut baseline_arrivals = arrivals.clone();
        // Where each initial workload item's steps start (arrival units, for sweep shuffles).
        let (mut unit_starts, mut baseline_unit_starts) = (Vec::new(), Vec::new());
        for (path, item, at_step) in items {
            let path = path.as_str();
            let pods = existing.len() + workloads.len();
            if crate::limits::PODS.exceeded_by(pods as u64) {
                return Err(vec![doc.error(
                    file,
                    path,
                    crate::limits::PODS.message(format!("{pods} pods before this item")),
                )]);
            }
            if at_step.is_none() {
                unit_starts.push(steps.len());
                baseline_unit_starts.push(baseline.steps.len());
            }
            let (steps, baseline_steps) = match at_step {
                None => (&mut steps, &mut baseline.steps),
                Some(k) => (&mut arrivals[k].steps, &mut baseline_arrivals[k].steps),
            };
            if item.get("determined").is_some() {
                match self.determined(file, doc, path, item, &gates) {
                    Ok((w, at)) => {
                        warnings.extend(
                            w.warnings
                                .iter()
                                .map(|m| format!("Determined trial ({}): {m}", at.describe())),
                        );
                        baseline_steps.extend(plan::offset(w.steps.clone(), baseline_pods.len()));
                        baseline_pods.extend(
                            (workloads.len()..workloads.len() + w.pods.len())
                                .map(BasePod::Workload),
                        );
                        steps.extend(plan::offset(w.steps, workloads.len()));
                        workloads.extend(w.pods.into_iter().map(|p| (p, at.clone())));
                    }
                    Err(mut e) => errors.append(&mut e),
                }
                continue;
            }
            let origins = match self.resolve_item(file, doc, path, item) {
                Ok(o) => o,
                Err(mut e) => {
                    errors.append(&mut e);
                    continue;
                }
            };
            for origin in origins {
                let kind = origin
                    .value()
                    .get("kind")
                    .and_then(Value::as_str)
                    .unwrap_or("Pod")
                    .to_string();
                let loaded = match kind.as_str() {
                    "TrainJob" => {
                        self.train_job(&origin, &runtimes, &gates, sd.spec.initializers, &clock)
                    }
                    "PodGroup" => origin
                        .decode::<pod_group::PodGroupDoc>()
                        .map_err(|e| vec![e])
                        .and_then(|d| origin.check_all(pod_group::pod_group(&d)))
                        .map(|g| LoadedWorkload {
                            pods: Vec::new(),
                            steps: Vec::new(),
                            pod_groups: vec![g],
                            resolved: None,
                            baseline: None,
                        }),
                    _ => origin
                        .expect_kind("Pod")
                        .and_then(|_| origin.decode::<k8s::Pod>())
                        .map_err(|e| vec![e])
                        .and_then(|k| {
                            origin
                                .check(|errs| objects::pod_from_k8s(&k, &origin.path, &gates, errs))
                        })
                        .map(|pod| LoadedWorkload {
                            pods: vec![pod],
                            steps: plan::in_order(1),
                            pod_groups: Vec::new(),
                            resolved: None,
                            baseline: None,
                        }),
                };
                match loaded {
                    Ok(w) => {
                        for g in w.pod_groups {
                            let key = g.key();
                            if pod_groups.insert(key.clone(), g).is_some() {
                                errors.push(origin.error_at(
                                    "metadata.name",
                                    format!(
                                        "podgroups {:?} already exists in namespace {:?}",
                                        key.2, key.1
                                    ),
                                ));
                            }
                        }
                        any_overrides |= w.baseline.is_some();
                        let offset = baseline_pods.len();
                        match w.baseline {
                            Some(base) => {
                                baseline_steps.extend(plan::offset(base.steps, offset));
                                baseline_pods.extend(
                                    base.pods.into_iter().map(|p| BasePod::Own(Box::new(p))),
                                );
                            }
                            None => {
                                baseline_steps.extend(plan::offset(w.steps.clone(), offset));
                                baseline_pods.extend(
                                    (workloads.len()..workloads.len() + w.pods.len())
                                        .map(BasePod::Workload),
                                );
                            }
                        }
                        steps.extend(plan::offset(w.steps, workloads.len()));
                        if let Some(r) = &w.resolved {
                            warnings.extend(r.warnings.iter().map(|m| {
                                format!(
                                    "TrainJob {}/{} ({}): {m}",
                                    r.namespace,
                                    r.name,
                                    origin.describe()
                                )
                            }));
                        }
                        train_jobs.extend(w.resolved);
                        workloads.extend(w.pods.into_iter().map(|p| (p, origin.clone())));
                    }
                    Err(mut e) => errors.append(&mut e),
                }
            }
        }
        if any_overrides {
            baseline.pods = baseline_pods
                .into_iter()
                .map(|b| match b {
                    BasePod::Workload(i) => workloads[i].0.clone(),
                    BasePod::Own(p) => *p,
                })
                .collect();
        }
        for (p, at) in existing.iter_mut().chain(workloads.iter_mut()) {
            if let Err(m) = priority_classes.admit(p) {
                errors.push(at.error_at(
                    "spec.priorityClassName",
                    format!("pods {:?} is forbidden: {m}", p.name),
                ));
            }
        }
        for (p, at) in existing.iter().chain(&workloads) {
            for w in crate::sched::plugins::node_affinity::unparsable_term_warnings(p) {
                warnings.push(format!("pod {} ({}): {w}", p.key(), at.describe()));
            }
        }
        for p in &mut baseline.pods {
            // Errors are those of the pods above.
            let _ = priority_classes.admit(p);
        }
        // With a KubeSchedulerConfiguration, a pod naming no profile stays pending and says so.
        let configured =
            sd.spec.scheduler.configuration.is_some() || self.options.scheduler_config.is_some();
        for (p, at) in workloads.iter().filter(|_| !configured) {
            if p.scheduler_name != DEFAULT_SCHEDULER {
                warnings.push(format!(
                    "pod {} ({}) asks for scheduler {:?}; schedsim simulates {DEFAULT_SCHEDULER:?} and schedules it with that profile",
                    p.key(),
                    at.describe(),
                    p.scheduler_name
                ));
            }
        }
        let units = ranges(&unit_starts, steps.len());
        let baseline_units = ranges(&baseline_unit_starts, baseline.steps.len());
        // The timeline: each step's events, its arrivals, then a checkpoint.
        let timed = !sd.spec.timeline.is_empty();
        let mut node_names: Vec<String> = (nodes.iter().filter(|_| timed))
            .map(|(n, _)| n.name.clone())
            .collect();
        let pod_names: Vec<String> = (workloads.iter().filter(|_| timed))
            .map(|(p, _)| p.key())
            .collect();
        let workload_names: Vec<String> = (workloads.iter().filter(|_| timed))
            .filter_map(|(p, _)| p.workload.clone())
            .collect();
        for (k, step) in sd.spec.timeline.iter().enumerate() {
            let path = format!("spec.timeline[{k}]");
            let events = match self.timeline_events(
                file,
                doc,
                &path,
                step,
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
            let name = step
                .name
                .clone()
                .unwrap_or_else(|| timeline::describe_step(k, step));
            for (target, arrived) in [
                (&mut steps, std::mem::take(&mut arrivals[k].steps)),
                (
                    &mut baseline.steps,
                    std::mem::take(&mut baseline_arrivals[k].steps),
                ),
            ] {
                target.extend(events.iter().cloned().map(Step::Event));
                target.extend(arrived);
                target.push(Step::Checkpoint { name: name.clone() });
            }
        }
        let mut expectations = Vec::new();
        for (i, item) in sd.spec.expect.iter().enumerate() {
            let path = format!("spec.expect[{i}]");
            let at = match doc.position(&path) {
                Some(p) => format!("{}:{}", file.display(), p.line),
                None => file.display().to_string(),
            };
            let checked = doc
                .decode::<crate::load::expect::ExpectSpec>(file, &path, item)
                .and_then(|spec| {
                    crate::load::expect::Expectation::new(path.clone(), at, spec).map_err(
                        |(field, message)| doc.error(file, &join_path(&path, &field), message),
                    )
                });
            match checked {
                Ok(e) => expectations.push(e),
                Err(e) => errors.push(e),
            }
        }
        let mut pod_keys = HashMap::new();
        for (p, at) in existing.iter().chain(&workloads) {
            if pod_keys.insert(p.key(), ()).is_some() {
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
        let services = train_jobs
            .iter()
            .filter(|j| j.headless_service)
            .map(|j| ServiceSelector {
                namespace: j.namespace.clone(),
                selector: [(JOBSET_NAME_LABEL.to_string(), j.name.clone())].into(),
            })
            .collect();
        let profiles = match self.profiles(file, doc, &sd.spec.scheduler) {
            Ok(p) => p,
            Err(e) => return Err(vec![e]),
        };
        let message_format = self
            .options
            .message_format
            .or(sd.spec.scheduler.message_format.map(Into::into))
            .unwrap_or_default();
        let mut workloads: Vec<Pod> = workloads.into_iter().map(|(p, _)| p).collect();
        let (mut steps, mut units) = (steps, units);
        let mut baseline = any_overrides.then_some(baseline);
        if sd.spec.overrides == scenario::OverridesMode::Ignore
            && let Some(b) = baseline.take()
        {
            (workloads, steps, units) = (b.pods, b.steps, baseline_units);
            for j in &mut train_jobs {
                j.has_overrides = false;
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
                pod_groups,
                services,
                drop_node_verdicts: !self.options.node_lists,
            },
            warnings,
            expectations,
        })
    }

    /// A TrainJob: resolved with its overrides, and (when it has any) without them.
    fn train_job(
        &self,
        origin: &Origin,
        runtimes: &Runtimes,
        gates: &FeatureGates,
        initializers: InitializerLifecycle,
        clock: &str,
    ) -> Result<LoadedWorkload, Errors> {
        let api_version = origin
            .value()
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !trainjob::API_VERSIONS.contains(&api_version) {
            return Err(vec![origin.error_at(
                "apiVersion",
                format!("unsupported apiVersion {api_version:?} for kind TrainJob (expected one of {:?})", trainjob::API_VERSIONS),
            )]);
        }
        let job: TrainJob = origin.decode().map_err(|e| vec![e])?;
        let pods = |overrides: bool, track: bool| {
            let opts = BuildOptions {
                overrides,
                track,
                clock,
            };
            origin.check_all(resolve::train_job_pods(
                &job,
                runtimes,
                opts,
                gates,
                initializers,
            ))
        };
        let with = pods(true, self.options.provenance)?;
        // The runtime-only baseline of the override effect.
        let baseline = if with.resolved.has_overrides {
            let without = pods(false, false)?;
            Some(Workloads {
                pods: without.pods,
                steps: without.steps,
            })
        } else {
            None
        };
        Ok(LoadedWorkload {
            pods: with.pods,
            steps: with.steps,
            pod_groups: with.pod_group.into_iter().collect(),
            resolved: Some(with.resolved),
            baseline,
        })
    }

    /// A Determined trial's pods: the experiment's pod spec over the cluster's default pod spec.
    fn determined(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        path: &str,
        item: &Value,
        gates: &FeatureGates,
    ) -> Result<(DeterminedPods, Origin), Errors> {
        let d: scenario::DeterminedItem = doc.decode(file, path, item).map_err(|e| vec![e])?;
        let d = d.determined;
        let single = |this: &mut Self, field: &str, value: &Value| -> Result<Origin, Errors> {
            let at = join_path(path, &format!("determined.{field}"));
            let mut origins = this.resolve_item(file, doc, &at, value)?;
            match origins.len() {
                1 => Ok(origins.remove(0)),
                n => Err(vec![doc.error(
                    file,
                    &at,
                    format!("expected one document, found {n}"),
                )]),
            }
        };
        let exp_origin = single(self, "experiment", &d.experiment)?;
        let exp =
            exp_origin.check_all(determined::ExperimentConfig::from_value(exp_origin.value()))?;
        let cluster_origin = match &d.cluster {
            Some(v) => Some(single(self, "cluster", v)?),
            None => None,
        };
        let defaults = match &cluster_origin {
            Some(o) => o.check_all(determined::ClusterDefaults::from_value(o.value()))?,
            None => determined::ClusterDefaults::default(),
        };
        let merge = match d.pod_spec_merge.as_deref() {
            None | Some("strategicMerge") => determined::PodSpecMerge::StrategicMerge,
            Some("replace") => determined::PodSpecMerge::Replace,
            Some(other) => {
                return Err(vec![doc.error(
                    file,
                    &join_path(path, "determined.podSpecMerge"),
                    format!("Unsupported value: {other:?}: supported values: \"strategicMerge\", \"replace\""),
                )]);
            }
        };
        // Errors in the experiment config point into it; errors in the Helm values into them.
        let trial = determined::trial_pods(&exp, &defaults, merge).map_err(|errs| {
            errs.into_iter()
                .map(|e| {
                    let helm = [
                        "taskContainerDefaults",
                        "maxSlotsPerPod",
                        "resourcePools",
                        "slotType",
                    ]
                    .iter()
                    .any(|k| e.path.starts_with(k));
                    let o = if helm {
                        cluster_origin.as_ref().unwrap_or(&exp_origin)
                    } else {
                        &exp_origin
                    };
                    o.doc
                        .error(&o.file, &join_path(&o.path, &e.path), e.message)
                })
                .collect::<Vec<_>>()
        })?;
        let pod: k8s::Pod = serde_json::from_value(trial.pod_spec.clone())
            .map_err(|e| vec![exp_origin.error(format!("Determined built an invalid pod: {e}"))])?;
        let mut template = exp_origin
            .check(|errs| objects::pod_from_k8s(&pod, "environment.pod_spec", gates, errs))?;
        // Determined installs its PriorityClasses itself (the chart's determined-medium-priority,
        // value 50, or the trial's own class): the pod carries the resolved value.
        if let Some(class) = template.priority_class.take() {
            template.priority = match &trial.priority_class {
                Some((name, value)) if *name == class => *value,
                _ => DETERMINED_DEFAULT_PRIORITY,
            };
            template.priority_given = true;
        }
        let pods: Vec<Pod> = (0..trial.pods)
            .map(|i| {
                let mut p = template.clone();
                p.name = format!("{}-{i}", d.name);
                p.workload = Some(d.name.clone());
                p
            })
            .collect();
        let steps = plan::in_order(pods.len());
        let origin = Origin {
            file: file.to_path_buf(),
            doc: doc.clone(),
            path: path.to_string(),
        };
        Ok((
            DeterminedPods {
                pods,
                steps,
                warnings: trial.warnings,
            },
            origin,
        ))
    }

    fn runtime_items(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        path: &str,
        item: &Value,
    ) -> Result<Vec<(TrainingRuntime, Origin)>, Errors> {
        let mut out = Vec::new();
        let mut errors = Vec::new();
        for origin in self.resolve_item(file, doc, path, item)? {
            let kind = match origin.value().get("kind").and_then(Value::as_str) {
                Some("ClusterTrainingRuntime") => RuntimeKind::ClusterTrainingRuntime,
                Some("TrainingRuntime") => RuntimeKind::TrainingRuntime,
                other => {
                    errors.push(origin.error_at(
                        "kind",
                        format!("expected a ClusterTrainingRuntime or TrainingRuntime here, found kind {:?}", other.unwrap_or("")),
                    ));
                    continue;
                }
            };
            match origin.decode::<TrainingRuntime>() {
                Ok(mut r) => {
                    r.kind = kind;
                    out.push((r, origin));
                }
                Err(e) => errors.push(e),
            }
        }
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors)
        }
    }

    /// The documents an item stands for: those of a referenced file, or the item itself.
    /// The profiles of the scenario's (or the command line's) KubeSchedulerConfiguration;
    /// `None` without one.
    fn profiles(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        spec: &scenario::SchedulerSpec,
    ) -> Result<Option<Vec<Profile>>, InputError> {
        let at = "spec.scheduler.configuration.file";
        let (target, shown) = match (&self.options.scheduler_config, &spec.configuration) {
            (Some(path), _) => (path.clone(), path.display().to_string()),
            (None, Some(r)) => (
                file.parent().unwrap_or(Path::new(".")).join(&r.file),
                r.file.clone(),
            ),
            (None, None) => return Ok(None),
        };
        if spec.added_affinity.is_some() {
            return Err(doc.error(
                file,
                "spec.scheduler.addedAffinity",
                "with a KubeSchedulerConfiguration, set addedAffinity in its NodeAffinityArgs",
            ));
        }
        if self.options.scheduler_config.is_none() {
            paths::check_reference(file, &target)
                .map_err(|e| doc.error(file, at, format!("cannot load {shown:?}: {e}")))?;
        }
        let docs = self
            .documents(&target)
            .map_err(|e| doc.error(file, at, format!("cannot load {shown:?}: {e}")))?;
        let mut configs = docs.iter().filter(|d| {
            d.value.get("kind").and_then(Value::as_str) == Some(crate::sched::profile::KIND)
        });
        match (configs.next(), configs.next()) {
            (Some(config), None) => crate::sched::profile::from_document(config, &target).map(Some),
            (None, _) => Err(doc.error(
                file,
                at,
                format!("{shown:?} holds no KubeSchedulerConfiguration"),
            )),
            (Some(_), Some(_)) => Err(doc.error(
                file,
                at,
                format!("{shown:?} holds more than one KubeSchedulerConfiguration"),
            )),
        }
    }

    fn resolve_item(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        path: &str,
        item: &Value,
    ) -> Result<Vec<Origin>, Errors> {
        if item.get("file").is_some() {
            let r: FileRef = doc.decode(file, path, item).map_err(|e| vec![e])?;
            let target = file.parent().unwrap_or(Path::new(".")).join(&r.file);
            let refused = |why: String| {
                vec![doc.error(
                    file,
                    &join_path(path, "file"),
                    format!("cannot load {:?}: {why}", r.file),
                )]
            };
            paths::check_reference(file, &target).map_err(refused)?;
            let docs = self
                .documents(&target)
                .map_err(|e| refused(e.to_string()))?;
            let mut out = Vec::new();
            for d in docs.iter() {
                out.extend(expand_lists(Origin {
                    file: target.clone(),
                    doc: d.clone(),
                    path: String::new(),
                }));
            }
            Ok(out)
        } else {
            Ok(expand_lists(Origin {
                file: file.to_path_buf(),
                doc: doc.clone(),
                path: path.to_string(),
            }))
        }
    }

    fn node_item(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        path: &str,
        item: &Value,
    ) -> Result<Vec<(Node, Origin)>, Errors> {
        if item.get("pool").is_some() {
            return pool_nodes(file, doc, path, item);
        }
        self.typed_items(file, doc, path, item, "Node", |k: &k8s::Node, at, errs| {
            objects::node_from_k8s(k, at, errs)
        })
    }

    fn pod_items(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        path: &str,
        item: &Value,
        gates: &FeatureGates,
    ) -> Result<Vec<(Pod, Origin)>, Errors> {
        self.typed_items(file, doc, path, item, "Pod", |k: &k8s::Pod, at, errs| {
            objects::pod_from_k8s(k, at, gates, errs)
        })
    }

    /// The objects an item stands for, decoded as `kind` and converted; every error of every
    /// object is collected.
    fn typed_items<K: serde::de::DeserializeOwned, T>(
        &mut self,
        file: &Path,
        doc: &Rc<Document>,
        path: &str,
        item: &Value,
        kind: &str,
        convert: impl Fn(&K, &str, &mut Vec<FieldError>) -> T,
    ) -> Result<Vec<(T, Origin)>, Errors> {
        let mut out = Vec::new();
        let mut errors = Vec::new();
        for origin in self.resolve_item(file, doc, path, item)? {
            let converted = origin
                .expect_kind(kind)
                .and_then(|_| origin.decode::<K>())
                .map_err(|e| vec![e])
                .and_then(|k| origin.check(|errs| convert(&k, &origin.path, errs)));
            match converted {
                Ok(t) => out.push((t, origin)),
                Err(mut e) => errors.append(&mut e),
            }
        }
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors)
        }
    }
}

/// Where an object came from: its file, document and field path inside the document.
#[derive(Debug, Clone)]
struct Origin {
    file: PathBuf,
    doc: Rc<Document>,
    path: String,
}

impl Origin {
    fn value(&self) -> &Value {
        value_at(&self.doc.value, &self.path)
    }

    fn error(&self, message: String) -> InputError {
        self.doc.error(&self.file, &self.path, message)
    }

    fn error_at(&self, child: &str, message: String) -> InputError {
        self.doc
            .error(&self.file, &join_path(&self.path, child), message)
    }

    fn describe(&self) -> String {
        match self.doc.position(&self.path) {
            Some(p) => format!("{}:{}:{}", self.file.display(), p.line, p.column),
            None => self.file.display().to_string(),
        }
    }

    fn decode<T: serde::de::DeserializeOwned>(&self) -> Result<T, InputError> {
        self.doc.decode(&self.file, &self.path, self.value())
    }

    fn expect_kind(&self, kind: &str) -> Result<(), InputError> {
        match self.value().get("kind").and_then(Value::as_str) {
            Some(k) if k == kind => Ok(()),
            None => Ok(()),
            Some(other) => Err(self.error_at(
                "kind",
                format!(
                    "expected a {kind} here, found kind {other:?}{}",
                    unsupported_hint(other)
                ),
            )),
        }
    }

    /// Positions the field errors of a result.
    fn check_all<T>(&self, result: Result<T, Vec<FieldError>>) -> Result<T, Errors> {
        result.map_err(|errs| {
            errs.into_iter()
                .map(|e| {
                    self.doc
                        .error(&self.file, &join_path(&self.path, &e.path), e.message)
                })
                .collect()
        })
    }

    /// Runs a conversion that collects field errors, turning them into positioned errors.
    fn check<T>(&self, convert: impl FnOnce(&mut Vec<FieldError>) -> T) -> Result<T, Errors> {
        let mut errs = Vec::new();
        let out = convert(&mut errs);
        if errs.is_empty() {
            Ok(out)
        } else {
            Err(errs
                .into_iter()
                .map(|e| self.doc.error(&self.file, &e.path, e.message))
                .collect())
        }
    }
}

/// ` (did you mean "x"?)` for the closest known name, if any is close.
fn suggestion(name: &str, known: &[String]) -> String {
    known
        .iter()
        .map(|k| (strsim::jaro_winkler(name, k), k))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| format!(" (did you mean {k:?}?)"))
        .unwrap_or_default()
}

fn unsupported_hint(kind: &str) -> &'static str {
    match kind {
        "TrainingRuntime" | "ClusterTrainingRuntime" => " (runtimes belong in spec.runtimes)",
        _ => "",
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

/// A Determined trial's pods.
struct DeterminedPods {
    pods: Vec<Pod>,
    steps: Vec<Step>,
    warnings: Vec<String>,
}

/// The pods a workload item became.
struct LoadedWorkload {
    pods: Vec<Pod>,
    steps: Vec<Step>,
    /// PodGroups the workload creates (Trainer's for a TrainJob) or is (a PodGroup document).
    pod_groups: Vec<PodGroup>,
    resolved: Option<ResolvedTrainJob>,
    /// Without overrides, when the TrainJob has some.
    baseline: Option<Workloads>,
}

/// The lists of objects a Scenario holds inline; [`scenario_outline`] empties them.
const OBJECT_LISTS: [&str; 6] = [
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

/// Expands `List`/`NodeList`/`PodList` documents into their items.
fn expand_lists(origin: Origin) -> Vec<Origin> {
    let kind = origin
        .value()
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("");
    if kind == "List" || kind.ends_with("List") {
        let n = origin
            .value()
            .get("items")
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        (0..n)
            .flat_map(|i| {
                expand_lists(Origin {
                    path: join_path(&origin.path, &format!("items[{i}]")),
                    ..origin.clone()
                })
            })
            .collect()
    } else {
        vec![origin]
    }
}

/// The value at a field path produced by [`join_path`].
fn value_at<'v>(root: &'v Value, path: &str) -> &'v Value {
    let mut v = root;
    for part in path.split('.').filter(|p| !p.is_empty()) {
        let (name, rest) = part.split_once('[').unwrap_or((part, ""));
        if !name.is_empty() {
            v = v.get(name).unwrap_or(&Value::Null);
        }
        for idx in rest.split('[').filter(|s| !s.is_empty()) {
            let i: usize = idx.trim_end_matches(']').parse().unwrap_or(usize::MAX);
            v = v.get(i).unwrap_or(&Value::Null);
        }
    }
    v
}

/// `count` Nodes from a template, named `<namePrefix><index>` (zero-padded so they sort).
fn pool_nodes(
    file: &Path,
    doc: &Rc<Document>,
    path: &str,
    item: &Value,
) -> Result<Vec<(Node, Origin)>, Errors> {
    let p: PoolItem = doc.decode(file, path, item).map_err(|e| vec![e])?;
    let template_path = join_path(path, "pool.template");
    let template: k8s::Node = doc
        .decode(file, &template_path, &p.pool.template)
        .map_err(|e| vec![e])?;
    let origin = Origin {
        file: file.to_path_buf(),
        doc: doc.clone(),
        path: template_path.clone(),
    };
    let base = origin.check(|errs| objects::node_from_k8s(&template, &template_path, errs))?;
    if crate::limits::NODES.exceeded_by(u64::from(p.pool.count)) {
        return Err(vec![doc.error(
            file,
            &join_path(path, "pool.count"),
            crate::limits::NODES.message(format!("a pool of {} nodes", p.pool.count)),
        )]);
    }
    let width = (p.pool.count.max(1) - 1).to_string().len();
    let pool_name = p
        .pool
        .name_prefix
        .trim_end_matches(['-', '_', '.'])
        .to_string();
    Ok((0..p.pool.count)
        .map(|i| {
            let mut n = base.clone();
            n.name = format!("{}{:0width$}", p.pool.name_prefix, i);
            n.labels
                .insert("kubernetes.io/hostname".into(), n.name.clone());
            n.pool = Some(pool_name.clone());
            (n, origin.clone())
        })
        .collect())
}
