//! The `Scenario` document (DESIGN.md §3): our one home-made format, read strictly.

use serde::Deserialize;
use serde_json::Value;

use crate::features::FeatureGates;
use crate::sched::framework::MessageFormat;

pub const API_VERSION: &str = "schedsim.io/v1alpha1";
pub const KIND: &str = "Scenario";

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScenarioDoc {
    pub api_version: String,
    pub kind: String,
    pub metadata: ScenarioMeta,
    pub spec: ScenarioSpec,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScenarioMeta {
    pub name: String,
    #[serde(default)]
    pub description: Option<String>,
}

/// Items are inline Kubernetes objects, `{file: PATH}`, or (nodes only) `{pool: …}`; they are
/// kept as values here and interpreted with their field paths by the loader.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ScenarioSpec {
    /// Kubernetes objects of any kind schedsim reads — inline, `{file: PATH}` (multi-document
    /// files and `kubectl get -o yaml|json` List dumps), `{file: FOLDER}` (every manifest
    /// under it) — routed by apiVersion and kind: Nodes; Pods (bound ones as existing pods,
    /// the rest as workloads, terminal ones left out); PriorityClasses; Namespaces;
    /// (Cluster)TrainingRuntimes; TrainJobs; PodGroups; Jobs, JobSets and the apps kinds;
    /// Kueue's objects and its manager `Configuration` (`config.kueue.x-k8s.io`, or the
    /// ConfigMap holding `controller_manager_config.yaml`); DRA objects;
    /// PodDisruptionBudgets.
    #[serde(default)]
    pub objects: Vec<Value>,
    #[serde(default)]
    pub nodes: Vec<Value>,
    #[serde(default)]
    pub existing_pods: Vec<Value>,
    /// `scheduling.k8s.io/v1` PriorityClass objects pods name in `priorityClassName`.
    #[serde(default)]
    pub priority_classes: Vec<Value>,
    /// `v1` Namespace objects: their labels are what pod affinity `namespaceSelector`s match
    /// (every namespace also carries `kubernetes.io/metadata.name`).
    #[serde(default)]
    pub namespaces: Vec<Value>,
    /// `ClusterTrainingRuntime` / `TrainingRuntime` objects TrainJobs refer to.
    #[serde(default)]
    pub runtimes: Vec<Value>,
    #[serde(default)]
    pub workloads: Vec<Value>,
    /// What initializer pods do once they ran: `complete` (default) or `keepRunning`.
    #[serde(default)]
    pub initializers: crate::resolve::InitializerLifecycle,
    /// The scenario's "now" (RFC 3339): the `time` stamped on `runtimePatches` entries that
    /// carry none, as Trainer's mutating webhook stamps the current time. Default
    /// 2026-01-01T00:00:00Z, so output is reproducible.
    #[serde(default)]
    pub clock: Option<String>,
    #[serde(default)]
    pub scheduler: SchedulerSpec,
    /// Steps after the initial arrival; the report shows the state after each.
    #[serde(default)]
    pub timeline: Vec<TimelineStep>,
    /// Replay the workloads over time (`schedsim replay`): arrivals, run durations, the
    /// scheduling queue, waits and utilisation. Workloads carry their times in the
    /// annotations `schedsim.io/arrival` and `schedsim.io/duration`; a trace adds its rows.
    #[serde(default)]
    pub replay: Option<ReplaySpec>,
    /// `ignore`: TrainJobs run with their runtime alone, their overrides left out (a sweep's
    /// "no overrides" variant). Default `apply`.
    #[serde(default)]
    pub overrides: OverridesMode,
    /// Named alternatives `schedsim sweep` runs every combination of (`run` ignores them).
    #[serde(default)]
    pub variants: Vec<VariantDimension>,
    /// What `schedsim sweep` varies from run to run.
    #[serde(default)]
    pub sweep: SweepSpec,
    /// What `schedsim plan` may add to the cluster and the goal the additions must reach
    /// (`run` ignores it).
    #[serde(default)]
    pub plan: Option<PlanSpec>,
    /// Outcomes `schedsim check` enforces (see `check::ExpectSpec`).
    #[serde(default)]
    #[schemars(with = "Vec<crate::load::expect::ExpectSpec>")]
    pub expect: Vec<Value>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum OverridesMode {
    #[default]
    Apply,
    Ignore,
}

/// One dimension of the variant matrix: a name and its options.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VariantDimension {
    pub dimension: String,
    pub options: Vec<VariantOption>,
}

/// One option: a JSON merge patch (RFC 7386) applied to `spec` (empty: the scenario as is).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VariantOption {
    pub name: String,
    #[serde(default)]
    pub patch: Option<Value>,
}

/// Seeded perturbations of each sweep run.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SweepSpec {
    /// Runs per variant (default 1; `--seeds` overrides).
    #[serde(default)]
    pub seeds: Option<u32>,
    /// Shuffle the arrival order of the workload items (a TrainJob's pods stay together).
    #[serde(default)]
    pub shuffle_arrivals: bool,
    /// Each node is down for the run with this probability.
    #[serde(default)]
    pub node_failure_probability: Option<f64>,
    /// Each pool's node count varies uniformly by up to this fraction (0.1 = ±10%).
    #[serde(default)]
    pub pool_jitter: Option<f64>,
}

/// `spec.replay`: how the scenario is replayed over time. Durations are Go's
/// (`time.ParseDuration`: `90m`, `1h30m`, `2.5h`, `500ms`) plus `d` for 24 hours (`30d`).
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ReplaySpec {
    /// A CSV trace whose rows arrive as pods (one per row, or a gang of `nodes` pods).
    #[serde(default)]
    pub trace: Option<TraceSpec>,
    /// Simulated time one scheduling attempt takes (default `0s`: the scheduler keeps up with
    /// any arrival rate; scheduler_perf's throughput floors on 5,000 nodes are 1.2 to 5.5 ms
    /// per pod).
    #[serde(default)]
    pub cycle: Option<String>,
    /// The time series' step (default: the replay's span / 500, rounded up to a whole
    /// second, minute, hour or day).
    #[serde(default)]
    pub sample: Option<String>,
    /// Stop the replay at this time after the start (default: when nothing is left to happen).
    #[serde(default)]
    pub until: Option<String>,
    /// kube-scheduler's `--pod-max-in-unschedulable-pods-duration` (default `5m`).
    #[serde(default)]
    pub pod_max_in_unschedulable_pods_duration: Option<String>,
    /// Volcano's `--schedule-period` (default `1s`): Volcano gangs are placed in sessions at
    /// whole multiples of it after the start.
    #[serde(default)]
    pub volcano_schedule_period: Option<String>,
}

/// `spec.replay.trace`: a CSV trace and how its rows become pods.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TraceSpec {
    /// The CSV file, relative to the scenario.
    pub file: String,
    /// A published trace's column mapping: `openb`, `helios` or `acme`.
    #[serde(default)]
    pub format: Option<String>,
    /// The column mapping of any other CSV export (instead of `format`).
    #[serde(default)]
    pub columns: Option<crate::trace::TraceColumns>,
    /// The namespace of the trace's pods when the trace has no queue column (default
    /// `default`). With a queue column, its value is the namespace.
    #[serde(default)]
    pub namespace: Option<String>,
    /// The node label that carries the GPU model a row asks for (default
    /// `nvidia.com/gpu.product`, GPU feature discovery's; `openb`:
    /// `alibabacloud.com/gpu-card-model`).
    #[serde(default)]
    pub gpu_model_label: Option<String>,
    /// The extended resource of a GPU (default `nvidia.com/gpu`).
    #[serde(default)]
    pub gpu_resource: Option<String>,
    /// Pod priority for each value of the priority column (values that are integers are
    /// used as they are; others not listed here get 0, with a warning counting them).
    #[serde(default)]
    pub priorities: std::collections::BTreeMap<String, i32>,
    /// `schedulerName` of the trace's pods (default `default-scheduler`).
    #[serde(default)]
    pub scheduler_name: Option<String>,
    /// Queue the trace's jobs through Kueue: the LocalQueue (in each row's namespace) that
    /// its `kueue.x-k8s.io/queue-name` label names. Each row is then a batch Job whose pods
    /// exist once Kueue admits it, with its flavor's node labels and tolerations. Without it,
    /// the pods go straight to kube-scheduler.
    #[serde(default)]
    pub local_queue: Option<String>,
}

/// One timeline step: exactly one action, optionally named.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TimelineStep {
    #[serde(default)]
    pub name: Option<String>,
    /// When the step happens in a replay (`spec.replay`): a duration after the start
    /// (`90m`) or an RFC 3339 time (after `spec.clock`). Steps happen in this order.
    #[serde(default)]
    pub at: Option<String>,
    /// What the gating controller does (Kueue admitting a workload, …).
    #[serde(default)]
    pub remove_scheduling_gates: Option<GateRemoval>,
    #[serde(default)]
    pub cordon: Option<Vec<String>>,
    #[serde(default)]
    pub uncordon: Option<Vec<String>>,
    /// Cordon, then evict every pod on the nodes (workload pods are re-created and queued).
    #[serde(default)]
    pub drain: Option<Vec<String>>,
    /// The nodes go away; their pods are evicted (workload pods are re-created and queued).
    #[serde(default)]
    pub fail_nodes: Option<Vec<String>>,
    /// Pods run to completion and free their resources.
    #[serde(default)]
    pub complete: Option<PodSelectorSpec>,
    /// Items as in `spec.nodes`.
    #[serde(default)]
    pub add_nodes: Option<Vec<Value>>,
    /// Items as in `spec.workloads`.
    #[serde(default)]
    pub arrive: Option<Vec<Value>>,
    /// ClusterQueues and Cohorts as in `spec.objects`, each replacing the one of its name (a
    /// quota change; a Cohort may be new). Kueue requeues the inadmissible workloads of their
    /// cohort trees; admitted workloads keep their quota.
    #[serde(default)]
    pub kueue: Option<Vec<Value>>,
}

/// Workload pods by `namespace/name`, or every pod of the named workloads (TrainJob names,
/// Determined trial names).
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PodSelectorSpec {
    #[serde(default)]
    pub pods: Vec<String>,
    #[serde(default)]
    pub workloads: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GateRemoval {
    #[serde(default)]
    pub pods: Vec<String>,
    #[serde(default)]
    pub workloads: Vec<String>,
    /// The gates to remove; all of them when left out.
    #[serde(default)]
    pub gates: Option<Vec<String>>,
}

#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct SchedulerSpec {
    /// Seeds the tie-break among equally scored nodes.
    #[serde(default)]
    pub seed: u64,
    /// Message wording: `current` (default) or `1.34`; `--message-format` overrides it.
    #[serde(default)]
    pub message_format: Option<MessageFormatSpec>,
    #[serde(default)]
    pub feature_gates: FeatureGates,
    /// `NodeAffinityArgs.addedAffinity` of the default profile (without `configuration`).
    #[serde(default)]
    pub added_affinity: Option<k8s_openapi::api::core::v1::NodeAffinity>,
    /// A `KubeSchedulerConfiguration`, in a file (`{file: PATH}`) or inline: its profiles
    /// replace the default one, and each serves the pods that name its `schedulerName`.
    #[serde(default)]
    pub configuration: Option<ConfigurationRef>,
    /// `upstream` (default): each cycle samples the nodes as kube-scheduler does
    /// (`percentageOfNodesToScore`); `all`: every node is examined for every pod.
    /// `--node-sampling` overrides it.
    #[serde(default)]
    pub node_sampling: Option<crate::sched::sampling::NodeSampling>,
}

/// `spec.scheduler.configuration`: `{file: PATH}`, or the KubeSchedulerConfiguration itself.
#[derive(Debug, Clone, schemars::JsonSchema)]
#[serde(untagged)]
pub enum ConfigurationRef {
    File(FileRef),
    /// A `KubeSchedulerConfiguration` (`apiVersion: kubescheduler.config.k8s.io/v1`), read as
    /// kube-scheduler reads its `--config` file.
    Inline(serde_json::Map<String, Value>),
}

impl<'de> Deserialize<'de> for ConfigurationRef {
    /// A mapping with `file` is a reference; any other mapping is the configuration itself
    /// (checked when the scheduler is configured, with its own field paths).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match Value::deserialize(d)? {
            Value::Object(m) if m.contains_key("file") => FileRef::deserialize(Value::Object(m))
                .map(ConfigurationRef::File)
                .map_err(D::Error::custom),
            Value::Object(m) => Ok(ConfigurationRef::Inline(m)),
            _ => Err(D::Error::custom(
                "expected {file: PATH} or a KubeSchedulerConfiguration",
            )),
        }
    }
}

#[derive(Debug, Clone, Copy, Deserialize, schemars::JsonSchema)]
pub enum MessageFormatSpec {
    #[serde(rename = "current")]
    Current,
    #[serde(rename = "1.34")]
    V1_34,
}

impl From<MessageFormatSpec> for MessageFormat {
    fn from(m: MessageFormatSpec) -> Self {
        match m {
            MessageFormatSpec::Current => MessageFormat::Current,
            MessageFormatSpec::V1_34 => MessageFormat::V1_34,
        }
    }
}

/// `{file: PATH}`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileRef {
    pub file: String,
}

/// `spec.plan`: the node types `schedsim plan` may add, and the goal.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PlanSpec {
    /// What the cluster with the additions must reach; every condition given must hold
    /// (none given: every pod placed).
    #[serde(default)]
    pub goal: PlanGoal,
    /// The node types that may be added.
    #[serde(default)]
    pub candidates: Vec<PlanCandidate>,
    /// The existing nodes that may go (consolidation): the most valuable set whose pods all
    /// move elsewhere, as cluster-autoscaler's scale-down simulates a drain.
    #[serde(default)]
    pub remove: Vec<PlanRemoval>,
    /// What `schedsim plan` enforces of its answer (exit 1 when one is unmet): for CI, "the
    /// current plan still needs at most 4 more H100 nodes".
    #[serde(default)]
    pub expect: Option<PlanExpect>,
}

/// Limits on a plan's answer; every one given must hold.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PlanExpect {
    /// An answer exists within the candidates' `max` (`true`), or none does (`false`).
    #[serde(default)]
    pub feasible: Option<bool>,
    /// Per candidate: at most this many nodes of it in the answer.
    #[serde(default)]
    pub added_at_most: std::collections::BTreeMap<String, u32>,
    /// At most this many nodes added in all.
    #[serde(default)]
    pub nodes_at_most: Option<u64>,
    /// The answer costs at most this per hour.
    #[serde(default)]
    pub cost_at_most: Option<f64>,
    /// Per removal group: at least this many of its nodes can go.
    #[serde(default)]
    pub removed_at_least: std::collections::BTreeMap<String, u32>,
    /// The nodes that can go save at least this per hour.
    #[serde(default)]
    pub savings_at_least: Option<f64>,
}

/// The goal of a plan.
#[derive(Debug, Clone, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PlanGoal {
    /// Every workload pod scheduled.
    #[serde(default)]
    pub all_placed: Option<bool>,
    /// At most this many workload pods not scheduled.
    #[serde(default)]
    pub pending_pods_at_most: Option<u64>,
    /// These workloads (`namespace/name` of a TrainJob, Job, …, as the report names them)
    /// fully placed: every pod scheduled.
    #[serde(default)]
    pub workloads_placed: Vec<String>,
    /// GPU allocation of the whole cluster, additions included, at least this percentage.
    #[serde(default)]
    pub gpu_allocation_at_least: Option<f64>,
    /// These workloads (`namespace/name`, as the Kueue report names them) admitted by Kueue.
    #[serde(default)]
    pub workloads_admitted: Vec<String>,
    /// With `spec.replay`: the 95th percentile of every pod's wait (first bind − arrival; a
    /// pod never bound waits forever) at most this duration (`30m`, `2h`). Each point is then
    /// replayed over time instead of scheduled at once.
    #[serde(default)]
    pub wait_p95_at_most: Option<String>,
    /// With `spec.replay`: per queue (as the replay's report names queues), the same.
    #[serde(default)]
    pub queue_wait_p95_at_most: std::collections::BTreeMap<String, String>,
}

impl PlanGoal {
    /// Whether the goal is about waits, so that each point is replayed over time.
    pub fn over_time(&self) -> bool {
        self.wait_p95_at_most.is_some() || !self.queue_wait_p95_at_most.is_empty()
    }
}

/// A node type `schedsim plan` may add: new nodes `plan-<name>-<i>` from a Node template
/// (as a `spec.nodes` pool's), DaemonSets' pods and all.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PlanCandidate {
    /// Names the type, its pool and its nodes: a DNS label.
    pub name: String,
    /// The Node every added node of this type is a copy of (or `fromNode`).
    #[serde(default)]
    pub template: Option<Value>,
    /// An existing node as the template, as cluster-autoscaler makes a node group's template
    /// from one of its nodes: a Node of a file (a `kubectl get nodes -o yaml|json` dump, a
    /// List, a folder), by name.
    #[serde(default)]
    pub from_node: Option<FromNode>,
    /// Not nodes but a ClusterQueue's nominal quota (Kueue): the count is how many `step`s of
    /// it the queue gets.
    #[serde(default)]
    pub quota: Option<PlanQuota>,
    /// DRA: the ResourceSlices each added node publishes, as its driver would (inline, or
    /// `{file: PATH}` as in `spec.objects`). Each copy gets the node's name as its `nodeName`,
    /// its pool's name and its owner, and a name of its own.
    #[serde(default)]
    pub resource_slices: Vec<Value>,
    /// Price per node-hour (any currency); without one a node costs 1, so the cheapest plan is
    /// the one with the fewest nodes.
    #[serde(default)]
    pub price_per_hour: Option<f64>,
    /// How many may be added: at least `min` (default 0), at most `max`.
    #[serde(default)]
    pub min: u32,
    pub max: u32,
}

/// Existing nodes `schedsim plan` may remove: those of `pool` and matching `selector` (both
/// when both are given).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PlanRemoval {
    /// Names the group in the answer: a DNS label.
    pub name: String,
    /// Nodes of this pool, as reports name it (the `spec.nodes` pool, else the first pool
    /// label such as `karpenter.sh/nodepool`).
    #[serde(default)]
    pub pool: Option<String>,
    /// Nodes whose labels match this label selector (`matchLabels`, `matchExpressions`).
    #[serde(default)]
    #[schemars(with = "Option<Value>")]
    pub selector: Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>,
    /// Price per node-hour saved by removing one (default 1: the most nodes removed).
    #[serde(default)]
    pub price_per_hour: Option<f64>,
    /// At most this many of them removed (default: any number).
    #[serde(default)]
    pub max: Option<u32>,
}

/// `spec.plan.candidates[].quota`: the nominal quota of `resource` for `flavor` in the
/// ClusterQueue `clusterQueue`, set to the candidate's count × `step` (what the queue says is
/// replaced).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PlanQuota {
    pub cluster_queue: String,
    pub flavor: String,
    pub resource: String,
    /// One unit of the count, a quantity (default `"1"`: one GPU, one CPU).
    #[serde(default)]
    pub step: Option<String>,
}

impl PlanQuota {
    /// `step` in Kueue's units for the resource (CPU in millicores), or why it is not a
    /// quantity.
    pub fn step_units(&self) -> Result<i64, String> {
        let text = self.step.as_deref().unwrap_or("1");
        let q: crate::model::quantity::Quantity =
            text.parse().map_err(|e| format!("{text:?}: {e}"))?;
        match crate::kueue::api::safe_value(&q, self.resource == "cpu") {
            v if v > 0 => Ok(v),
            _ => Err(format!("{text:?} is not a positive quantity")),
        }
    }

    /// The nominal quota at `count` steps, as a quantity (CPU in millicores when not whole).
    pub fn nominal_quota(&self, count: u32) -> String {
        use crate::model::quantity::{Format, Quantity};
        let units = self
            .step_units()
            .unwrap_or(0)
            .saturating_mul(i64::from(count));
        let scale = if self.resource == "cpu" { -3 } else { 0 };
        Quantity::from_decimal(units.into(), scale, Format::DecimalSI).canonical()
    }
}

/// `spec.plan.candidates[].fromNode`: the Node named `name` in `file`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FromNode {
    pub file: String,
    pub name: String,
}

/// `{pool: {count, namePrefix, template}}`: `count` copies of a Node template.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PoolItem {
    pub pool: PoolSpec,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct PoolSpec {
    pub count: u32,
    pub name_prefix: String,
    #[serde(default)]
    pub template: Value,
}

/// `{determined: {...}}`: a Determined trial, from an experiment config and the cluster's Helm
/// values (neither is a Kubernetes object).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeterminedItem {
    pub determined: DeterminedSpec,
}

#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct DeterminedSpec {
    /// Names the trial's pods (`<name>-<index>`) and groups them in reports.
    pub name: String,
    /// The experiment config: inline, or `{file: PATH}`.
    pub experiment: Value,
    /// The Helm values of the Determined installation (`taskContainerDefaults`,
    /// `maxSlotsPerPod`, `resourcePools`): inline, or `{file: PATH}`.
    #[serde(default)]
    pub cluster: Option<Value>,
    /// `strategicMerge` (current releases) or `replace` (older releases).
    #[serde(default)]
    pub pod_spec_merge: Option<String>,
}

/// The JSON Schema of the Scenario document (`schedsim schema`; committed as
/// `schema/scenario.schema.json` so editors can validate and complete scenario files).
pub fn schema_json() -> String {
    let schema = schemars::schema_for!(ScenarioDoc);
    let mut text = serde_json::to_string_pretty(&schema).expect("schema serializes");
    text.push('\n');
    text
}
