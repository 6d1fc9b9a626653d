//! `TrainingRuntime` and `ClusterTrainingRuntime` (`trainer.kubeflow.org/v1alpha1`): the shared
//! JobSet template a TrainJob runs on. Read leniently, like the API server: the JobSet template
//! is kept as JSON so the override engine can patch it field by field.
//! Source: `kubeflow/trainer:pkg/apis/trainer/v1alpha1/trainingruntime_types.go`.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Deserialize;
use serde_json::Value;

/// `trainer.kubeflow.org/trainjob-ancestor-step`, on a replicated job's Job template.
pub const ANCESTOR_LABEL: &str = "trainer.kubeflow.org/trainjob-ancestor-step";
pub const ANCESTOR_TRAINER: &str = "trainer";
pub const ANCESTOR_DATASET_INITIALIZER: &str = "dataset-initializer";
pub const ANCESTOR_MODEL_INITIALIZER: &str = "model-initializer";
/// The trainer container of the trainer job (`constants.Node`).
pub const NODE: &str = "node";
/// The MPI launcher job (`constants.Launcher`).
pub const LAUNCHER: &str = "launcher";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuntimeKind {
    ClusterTrainingRuntime,
    TrainingRuntime,
}

impl RuntimeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RuntimeKind::ClusterTrainingRuntime => "ClusterTrainingRuntime",
            RuntimeKind::TrainingRuntime => "TrainingRuntime",
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
pub struct TrainingRuntime {
    #[serde(skip, default = "default_kind")]
    pub kind: RuntimeKind,
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: RuntimeSpec,
}

fn default_kind() -> RuntimeKind {
    RuntimeKind::ClusterTrainingRuntime
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeSpec {
    #[serde(default)]
    pub ml_policy: Option<MlPolicy>,
    #[serde(default)]
    pub pod_group_policy: Option<PodGroupPolicy>,
    #[serde(default)]
    pub template: JobSetTemplateSpec,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct JobSetTemplateSpec {
    #[serde(default)]
    pub metadata: Option<ObjectMeta>,
    /// A `jobset.x-k8s.io/v1alpha2` JobSetSpec.
    #[serde(default)]
    pub spec: Value,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MlPolicy {
    #[serde(default)]
    pub num_nodes: Option<i32>,
    #[serde(default)]
    pub torch: Option<Value>,
    #[serde(default)]
    pub mpi: Option<MpiPolicy>,
    #[serde(default)]
    pub jax: Option<Value>,
    #[serde(default)]
    pub xgboost: Option<Value>,
    #[serde(default)]
    pub flux: Option<Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MpiPolicy {
    #[serde(default)]
    pub num_proc_per_node: Option<i32>,
    #[serde(default)]
    pub mpi_implementation: Option<String>,
    #[serde(default)]
    pub ssh_auth_mount_path: Option<String>,
    #[serde(default)]
    pub run_launcher_as_node: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct PodGroupPolicy {
    #[serde(default)]
    pub coscheduling: Option<Value>,
    #[serde(default)]
    pub volcano: Option<Value>,
}

impl TrainingRuntime {
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or("")
    }

    pub fn namespace(&self) -> Option<&str> {
        self.metadata.namespace.as_deref()
    }

    /// The JobSet template's `replicatedJobs`, in runtime order.
    pub fn replicated_jobs(&self) -> &[Value] {
        self.spec
            .template
            .spec
            .get("replicatedJobs")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    }
}
