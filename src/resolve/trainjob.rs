//! `TrainJob` (`trainer.kubeflow.org/v1alpha1`; the `v2alpha1` spelling of some docs is accepted):
//! the fields that decide what pods a job gets.
//! Source: `kubeflow/trainer@v2.1.0:pkg/apis/trainer/v1alpha1/trainjob_types.go`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{EnvVar, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const API_VERSIONS: &[&str] = &[
    "trainer.kubeflow.org/v1alpha1",
    "trainer.kubeflow.org/v2alpha1",
];

#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct TrainJob {
    #[serde(default)]
    pub metadata: ObjectMeta,
    #[serde(default)]
    pub spec: TrainJobSpec,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TrainJobSpec {
    #[serde(default)]
    pub runtime_ref: RuntimeRef,
    #[serde(default)]
    pub trainer: Option<Trainer>,
    #[serde(default)]
    pub initializer: Option<Initializer>,
    #[serde(default)]
    pub pod_template_overrides: Vec<PodTemplateOverride>,
    /// v2.2+: one entry per manager.
    #[serde(default)]
    pub runtime_patches: Vec<RuntimePatch>,
    /// The manager-keyed proposal of kubeflow/trainer PR #3199 (never shipped).
    #[serde(default)]
    pub template_overrides: Vec<TemplateOverride>,
    /// Labels/annotations for the JobSet (v2.1).
    #[serde(default)]
    pub labels: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub annotations: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub suspend: Option<bool>,
    #[serde(default)]
    pub managed_by: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeRef {
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub api_group: Option<String>,
    /// `ClusterTrainingRuntime` (default) or `TrainingRuntime`.
    #[serde(default)]
    pub kind: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Trainer {
    #[serde(default)]
    pub image: Option<String>,
    #[serde(default)]
    pub command: Option<Vec<String>>,
    #[serde(default)]
    pub args: Option<Vec<String>>,
    #[serde(default)]
    pub env: Vec<EnvVar>,
    #[serde(default)]
    pub num_nodes: Option<i32>,
    #[serde(default)]
    pub resources_per_node: Option<ResourceRequirements>,
    /// `int` (HEAD) or `auto`/`cpu`/`gpu`/int (v2.1).
    #[serde(default)]
    pub num_proc_per_node: Option<Value>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct Initializer {
    #[serde(default)]
    pub dataset: Option<InitializerSpec>,
    #[serde(default)]
    pub model: Option<InitializerSpec>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializerSpec {
    #[serde(default)]
    pub storage_uri: Option<String>,
    #[serde(default)]
    pub env: Vec<EnvVar>,
    #[serde(default)]
    pub secret_ref: Option<Value>,
}

/// One `podTemplateOverrides[]` entry (v2.1 `PodTemplateOverride`).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodTemplateOverride {
    #[serde(default)]
    pub target_jobs: Vec<TargetJob>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<OverrideMetadata>,
    /// A `PodSpecOverride`, kept as JSON: it is a strategic merge patch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<Value>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct TargetJob {
    #[serde(default)]
    pub name: String,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct OverrideMetadata {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub labels: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<BTreeMap<String, String>>,
}

/// One `runtimePatches[]` entry (Trainer v2.2+, `RuntimePatch`).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimePatch {
    #[serde(default)]
    pub manager: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub training_runtime_spec: Option<TrainingRuntimeSpecPatch>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct TrainingRuntimeSpecPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<JobSetTemplatePatch>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct JobSetTemplatePatch {
    /// JobSet-level labels and annotations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<OverrideMetadata>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<JobSetSpecPatch>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct JobSetSpecPatch {
    #[serde(default)]
    pub replicated_jobs: Vec<ReplicatedJobPatch>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct ReplicatedJobPatch {
    #[serde(default)]
    pub name: String,
    /// A `JobTemplatePatch` (`{metadata, spec: {template: {metadata, spec}}}`), kept as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub template: Option<Value>,
}

/// One manager's entry of the `templateOverrides` proposal (kubeflow/trainer PR #3199).
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
pub struct TemplateOverride {
    #[serde(default)]
    pub manager: String,
    /// Overrides of replicated jobs' Job templates, or of the JobSet without `targetJobs`.
    #[serde(default)]
    pub job: Vec<TimedOverride>,
    /// Overrides of replicated jobs' pod templates.
    #[serde(default)]
    pub pod: Vec<TimedOverride>,
}

#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimedOverride {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    #[serde(default)]
    pub target_jobs: Vec<TargetJob>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<OverrideMetadata>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<Value>,
}

impl TrainJob {
    pub fn name(&self) -> &str {
        self.metadata.name.as_deref().unwrap_or("")
    }

    pub fn namespace(&self) -> &str {
        self.metadata.namespace.as_deref().unwrap_or("default")
    }
}
