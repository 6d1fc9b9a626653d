//! A trace's rows as pods: one pod per row, or a gang of `nodes` pods that split the row's
//! resources evenly (Helios and Acme give a job's totals over its nodes). The pod asks for
//! the row's CPU, memory and GPUs, in the queue's namespace, with the GPU models it may run on
//! as a required node affinity on the model label (openb `gpu_spec`, a `|`-OR list). When the
//! pods' profile runs `Open-Gpu-Share`, a row's GPUs are instead what the FGD simulator's
//! annotations say (`model::gpu_share`): `gpu_milli` of each of its GPUs, on the models of
//! `gpu_spec`, and no device plugin's resource.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use k8s_openapi::api::core::v1::{
    Affinity, NodeAffinity, NodeSelector, NodeSelectorRequirement, NodeSelectorTerm,
};

use crate::kueue::admission::Workload;
use crate::kueue::pod_set_info::pod_set;
use crate::load::kueue::POD_SET_MAIN;
use crate::load::kueue::QUEUE_NAME_LABEL;
use crate::load::replay::ReplayTrace;
use crate::model::Pod;
use crate::model::gpu_share::GpuShare;
use crate::model::resources::{
    CPU, DEFAULT_MEMORY_REQUEST, DEFAULT_MILLI_CPU_REQUEST, MEMORY, ResourceList,
};
use crate::model::shared::Shared;
use crate::trace::{Sym, Symbols, TraceRecord};

/// The label of a batch Job's pods naming their Job.
const JOB_NAME_LABEL: &str = crate::resolve::job::JOB_NAME_LABELS[0];

/// What the conversion had to interpret, for one warning each.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Interpreted {
    /// Rows asking for a share of one GPU (openb `gpu_milli` < 1000) without `Open-Gpu-Share`:
    /// replayed as a whole GPU.
    pub shared_gpus: u64,
    /// Rows whose priority value is neither an integer nor in `priorities`: priority 0.
    pub unknown_priorities: u64,
    /// Rows whose resources do not split evenly over their nodes: rounded up per pod.
    pub uneven_gangs: u64,
    /// Rows whose id or queue is not a valid Kubernetes name: made into one.
    pub renamed: u64,
}

/// Turns trace rows into pods.
pub struct TracePods<'t> {
    spec: &'t ReplayTrace,
    pub interpreted: Interpreted,
    /// The parts of the pods of the shapes seen lately, shared by their pods.
    shapes: HashMap<Shape, Parts>,
    /// Each queue's namespace, and whether its name had to be changed.
    namespaces: HashMap<Sym, (String, bool)>,
    /// The name of every workload's one pod set, shared: each nomination copies it into
    /// its assignment, and a reference count that stays in cache is cheaper to touch.
    pod_set_name: Arc<str>,
}

/// What a trace pod asks for: per pod, its CPU (millicores), memory (bytes) and GPUs, and
/// the GPU models it may run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct Shape {
    cpu: i64,
    memory: i64,
    gpus: i64,
    /// Milli of each GPU, when they are a share (`Open-Gpu-Share`); 0 otherwise.
    milli: i64,
    models: Sym,
}

/// The parts of a pod that only its [`Shape`] decides, shared by the pods of that shape.
struct Parts {
    requests: Shared<ResourceList>,
    score_requests: Shared<ResourceList>,
    affinity: Shared<Option<Affinity>>,
    gpu_share: Option<Arc<GpuShare>>,
}

/// How many shapes [`TracePods`] remembers: a trace repeats a few, and one whose every row
/// has its own shape must not make memory grow with its length.
const SHAPES_KEPT: usize = 4096;

impl Parts {
    fn share(&self) -> Self {
        Parts {
            requests: self.requests.share(),
            score_requests: self.score_requests.share(),
            affinity: self.affinity.share(),
            gpu_share: self.gpu_share.clone(),
        }
    }

    fn new(shape: Shape, spec: &ReplayTrace, symbols: &Symbols) -> Self {
        let mut requests = BTreeMap::new();
        if shape.cpu > 0 {
            requests.insert(CPU.to_string(), shape.cpu);
        }
        if shape.memory > 0 {
            requests.insert(MEMORY.to_string(), shape.memory);
        }
        if shape.gpus > 0 && shape.milli == 0 {
            requests.insert(spec.gpu_resource.clone(), shape.gpus);
        }
        let mut score = requests.clone();
        score
            .entry(CPU.to_string())
            .or_insert(DEFAULT_MILLI_CPU_REQUEST);
        score
            .entry(MEMORY.to_string())
            .or_insert(DEFAULT_MEMORY_REQUEST);
        let models: Vec<String> = symbols.models(shape.models).map(str::to_string).collect();
        let gpu_share = (shape.milli > 0).then(|| {
            Arc::new(GpuShare {
                milli: shape.milli,
                count: u32::try_from(shape.gpus).unwrap_or(u32::MAX),
                models: models.join("|"),
                index: None,
            })
        });
        let affinity = (!models.is_empty() && gpu_share.is_none()).then(|| Affinity {
            node_affinity: Some(NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(NodeSelector {
                    node_selector_terms: vec![NodeSelectorTerm {
                        match_expressions: Some(vec![NodeSelectorRequirement {
                            key: spec.gpu_model_label.clone(),
                            operator: "In".into(),
                            values: Some(models),
                        }]),
                        match_fields: None,
                    }],
                }),
                ..Default::default()
            }),
            ..Default::default()
        });
        Parts {
            requests: requests.into(),
            score_requests: score.into(),
            affinity: affinity.into(),
            gpu_share,
        }
    }
}

impl<'t> TracePods<'t> {
    pub fn new(spec: &'t ReplayTrace) -> Self {
        TracePods {
            spec,
            interpreted: Interpreted::default(),
            shapes: HashMap::new(),
            namespaces: HashMap::new(),
            pod_set_name: POD_SET_MAIN.into(),
        }
    }

    /// The requests and the GPU-model affinity of a pod of `shape`, built once per shape.
    fn parts(&mut self, shape: Shape, symbols: &Symbols) -> Parts {
        if self.shapes.len() >= SHAPES_KEPT && !self.shapes.contains_key(&shape) {
            self.shapes.clear();
        }
        let spec = self.spec;
        self.shapes
            .entry(shape)
            .or_insert_with(|| Parts::new(shape, spec, symbols))
            .share()
    }

    /// The row's pods (its gang), the queue they belong to and their priority.
    pub fn pods(&mut self, r: &TraceRecord, symbols: &Symbols) -> (Vec<Arc<Pod>>, String, i32) {
        let queue = symbols.name(r.queue);
        let namespace = match queue.is_empty() {
            true => self.spec.namespace.clone(),
            false => self.namespace(r.queue, queue),
        };
        let priority = self.priority(symbols.name(r.priority));
        let nodes = u64::from(r.nodes.max(1));
        let mut gpus = u64::from(r.gpu_count);
        if r.gpu_count == 1 && r.gpu_milli > 0 && r.gpu_milli < 1000 && !self.spec.gpu_share {
            self.interpreted.shared_gpus += 1;
        }
        if r.gpu_milli == 0 {
            gpus = 0;
        }
        if !(gpus.is_multiple_of(nodes)
            && r.cpu_milli.is_multiple_of(nodes)
            && r.memory_bytes.is_multiple_of(nodes))
        {
            self.interpreted.uneven_gangs += 1;
        }
        let per_pod = |total: u64| i64::try_from(total.div_ceil(nodes)).unwrap_or(i64::MAX);
        let shape = Shape {
            cpu: per_pod(r.cpu_milli),
            memory: per_pod(r.memory_bytes),
            gpus: match gpus {
                0 => 0,
                g => per_pod(g),
            },
            milli: match self.spec.gpu_share && gpus > 0 {
                true => i64::from(r.gpu_milli),
                false => 0,
            },
            models: r.gpu_models,
        };
        let parts = self.parts(shape, symbols);
        let base = self.name(&r.id, 240);
        let mut labels: Shared<BTreeMap<String, String>> = Shared::default();
        if let Some(q) = &self.spec.local_queue {
            labels.insert(QUEUE_NAME_LABEL.to_string(), q.clone());
            let job: String = base.chars().take(63).collect();
            labels.insert(JOB_NAME_LABEL.into(), job.trim_end_matches('-').into());
        }
        let pods = (0..nodes)
            .map(|k| {
                let name = match nodes {
                    1 => base.clone(),
                    _ => format!("{base}-{k}"),
                };
                Arc::new(Pod {
                    name,
                    namespace: namespace.clone(),
                    workload: Some(r.id.to_string()),
                    scheduler_name: self.spec.scheduler_name.clone(),
                    priority,
                    requests: parts.requests.share(),
                    score_requests: parts.score_requests.share(),
                    affinity: parts.affinity.share(),
                    gpu_share: parts.gpu_share.clone(),
                    labels: labels.share(),
                    ..Pod::default()
                })
            })
            .collect();
        (pods, namespace, priority)
    }

    /// The row's job as Kueue queues it, when the trace names a LocalQueue: a batch Job of
    /// one pod set (`main`, its pods), at the pods' priority (`jobframework.ExtractPriority`
    /// without a WorkloadPriorityClass label), created when it arrives.
    pub fn kueue_workload(&self, pods: &[Arc<Pod>]) -> Option<Workload> {
        let queue_name = self.spec.local_queue.clone()?;
        let first = pods.first()?;
        Some(Workload {
            namespace: first.namespace.clone(),
            name: first
                .labels
                .get(JOB_NAME_LABEL)
                .cloned()
                .unwrap_or_default(),
            queue_name,
            priority: first.priority,
            created: 0,
            owned_by_pod: false,
            pod_sets: vec![pod_set(
                Arc::clone(&self.pod_set_name),
                first,
                pods.len() as i64,
            )],
            blocked: None,
        })
    }

    /// The namespace of the queue named `queue` (its symbol `sym`), made once per queue;
    /// each row with a renamed queue counts.
    fn namespace(&mut self, sym: Sym, queue: &str) -> String {
        if let Some((namespace, renamed)) = self.namespaces.get(&sym) {
            self.interpreted.renamed += u64::from(*renamed);
            return namespace.clone();
        }
        let before = self.interpreted.renamed;
        let namespace = self.name(queue, 63);
        let renamed = self.interpreted.renamed > before;
        self.namespaces.insert(sym, (namespace.clone(), renamed));
        namespace
    }

    /// The trace's file, as warnings name it.
    pub fn file(&self) -> String {
        self.spec.path.display().to_string()
    }

    fn priority(&mut self, value: &str) -> i32 {
        if value.is_empty() {
            return 0;
        }
        if let Some(p) = self.spec.priorities.get(value) {
            return *p;
        }
        value.trim().parse().unwrap_or_else(|_| {
            self.interpreted.unknown_priorities += 1;
            0
        })
    }

    /// `text` as a DNS label-like name (lowercase alphanumerics and `-`, at most `max`
    /// characters, alphanumeric at both ends), counting the rows it had to change.
    fn name(&mut self, text: &str, max: usize) -> String {
        let mut out: String = text
            .chars()
            .map(|c| match c.to_ascii_lowercase() {
                c @ ('a'..='z' | '0'..='9' | '-') => c,
                _ => '-',
            })
            .take(max)
            .collect();
        while out.ends_with('-') {
            out.pop();
        }
        let trimmed = out.trim_start_matches('-');
        let mut out = match trimmed.is_empty() {
            true => "x".to_string(),
            false => trimmed.to_string(),
        };
        if out.len() > max {
            out.truncate(max);
        }
        if out != text {
            self.interpreted.renamed += 1;
        }
        out
    }

    /// One warning per kind of interpretation, with its count.
    pub fn warnings(&self, file: &str) -> Vec<String> {
        let i = &self.interpreted;
        let mut out = Vec::new();
        if i.shared_gpus > 0 {
            out.push(format!(
                "{file}: {} rows ask for a share of one GPU; replayed as a whole GPU (a profile running Open-Gpu-Share replays them as shares)",
                i.shared_gpus
            ));
        }
        if i.unknown_priorities > 0 {
            out.push(format!(
                "{file}: {} rows have a priority that is neither an integer nor listed in spec.replay.trace.priorities; they run at priority 0",
                i.unknown_priorities
            ));
        }
        if i.uneven_gangs > 0 {
            out.push(format!(
                "{file}: {} multi-node rows do not split their resources evenly over their nodes; each pod asks for the share rounded up",
                i.uneven_gangs
            ));
        }
        if i.renamed > 0 {
            out.push(format!(
                "{file}: {} ids or queues are not valid Kubernetes names; their pods and namespaces are named after them with other characters as '-'",
                i.renamed
            ));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::TracePods;
    use crate::load::replay::ReplayTrace;
    use crate::trace::{Outcome, Sym, Symbols, TraceColumns, TraceRecord};

    fn spec() -> ReplayTrace {
        ReplayTrace {
            path: "trace.csv".into(),
            columns: TraceColumns::preset("openb").expect("a preset"),
            format: "openb".into(),
            namespace: "default".into(),
            gpu_model_label: "nvidia.com/gpu.product".into(),
            gpu_resource: "nvidia.com/gpu".into(),
            priorities: BTreeMap::new(),
            scheduler_name: "default-scheduler".into(),
            local_queue: None,
            gpu_share: false,
        }
    }

    fn row(id: &str, cpu_milli: u64, nodes: u32, models: Sym, queue: Sym) -> TraceRecord {
        TraceRecord {
            id: id.into(),
            arrival: 0,
            start: None,
            end: None,
            cpu_milli,
            memory_bytes: u64::from(nodes) << 30,
            gpu_count: 2 * nodes,
            gpu_milli: 1000,
            gpu_models: models,
            queue,
            priority: Sym::NONE,
            class: Sym::NONE,
            nodes,
            outcome: Outcome::Finished,
        }
    }

    /// Rows of one shape (per-pod CPU, memory, GPUs and models) share their pods' requests and
    /// affinity; another shape gets its own, and a gang's pods share their row's labels.
    #[test]
    fn pods_of_one_shape_share_their_requests_and_affinity() {
        let spec = spec();
        let mut symbols = Symbols::default();
        let a100 = symbols.intern("A100|H100");
        let queue = symbols.intern("team-a");
        let mut pods = TracePods::new(&spec);
        let (one, _, _) = pods.pods(&row("one", 4000, 1, a100, queue), &symbols);
        let (gang, _, _) = pods.pods(&row("gang", 8000, 2, a100, queue), &symbols);
        let (other, _, _) = pods.pods(&row("other", 2000, 1, a100, queue), &symbols);
        assert_eq!(gang.len(), 2);
        for p in &gang {
            assert!(p.requests.shares_with(&one[0].requests));
            assert!(p.score_requests.shares_with(&one[0].score_requests));
            assert!(p.affinity.shares_with(&one[0].affinity));
        }
        assert_eq!(one[0].requests.get("nvidia.com/gpu"), Some(&2));
        assert!(!other[0].requests.shares_with(&one[0].requests));
        assert_eq!(other[0].requests.get("cpu"), Some(&2000));
        assert_eq!(other[0].affinity, one[0].affinity);
    }

    /// A queue whose name is not a valid namespace is renamed once, and every row of it counts
    /// in the warning.
    #[test]
    fn every_row_of_a_renamed_queue_counts() {
        let spec = spec();
        let mut symbols = Symbols::default();
        let queue = symbols.intern("Team_A");
        let mut pods = TracePods::new(&spec);
        for id in ["a", "b", "c"] {
            let (made, namespace, _) = pods.pods(&row(id, 1000, 1, Sym::NONE, queue), &symbols);
            assert_eq!(namespace, "team-a");
            assert_eq!(made[0].namespace, "team-a");
        }
        assert_eq!(pods.interpreted.renamed, 3);
    }
}
