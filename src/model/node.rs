//! A node as the scheduler sees it.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Taint;

use super::resources::ResourceList;

/// Labels that name a node pool, most specific first: cloud node-pool labels, then the
/// instance type, then the GPU product (GPU Feature Discovery and the Alibaba trace).
pub const POOL_LABELS: &[&str] = &[
    "karpenter.sh/nodepool",
    "cloud.google.com/gke-nodepool",
    "eks.amazonaws.com/nodegroup",
    "kubernetes.azure.com/agentpool",
    "node.kubernetes.io/instance-type",
    "nvidia.com/gpu.product",
    "alibabacloud.com/gpu-card-model",
];

/// Labels that name a node's GPU product.
pub const GPU_PRODUCT_LABELS: &[&str] = &[
    "nvidia.com/gpu.product",
    "cloud.google.com/gke-accelerator",
    "alibabacloud.com/gpu-card-model",
];

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Node {
    pub name: String,
    pub labels: BTreeMap<String, String>,
    pub taints: Vec<Taint>,
    pub unschedulable: bool,
    /// `status.allocatable`: the only capacity kube-scheduler looks at.
    pub allocatable: ResourceList,
    /// The `pool` generator that made this node, if any (reports group by it).
    pub pool: Option<String>,
}

impl Node {
    /// The node's pool for reports: the first pool label present, else `(none)`.
    pub fn pool(&self) -> &str {
        self.pool
            .as_deref()
            .or_else(|| first_label(&self.labels, POOL_LABELS))
            .unwrap_or("(none)")
    }

    /// The node's GPU product label, if any.
    pub fn gpu_product(&self) -> Option<&str> {
        first_label(&self.labels, GPU_PRODUCT_LABELS)
    }
}

fn first_label<'a>(labels: &'a BTreeMap<String, String>, keys: &[&str]) -> Option<&'a str> {
    keys.iter().find_map(|k| labels.get(*k)).map(String::as_str)
}
