//! The scheduling framework's vocabulary: status codes, statuses, plugin names and the
//! message options (`staging/src/k8s.io/kube-scheduler/framework/interface.go`).

use std::borrow::Cow;

use serde::Serialize;

/// `MaxNodeScore` / `MinNodeScore` of the framework.
pub const MAX_NODE_SCORE: i64 = 100;

/// `framework.Code`, the closed set of plugin results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub enum Code {
    Success,
    Error,
    /// The node cannot run the pod now; preemption may help.
    Unschedulable,
    /// The node cannot run the pod and preemption cannot help.
    UnschedulableAndUnresolvable,
    Skip,
}

/// A plugin's verdict on one node: code, the plugin that produced it, and its reasons.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Status {
    pub code: Code,
    pub plugin: &'static str,
    pub reasons: Vec<Cow<'static, str>>,
}

impl Status {
    pub fn success() -> Self {
        Status {
            code: Code::Success,
            plugin: "",
            reasons: Vec::new(),
        }
    }

    pub fn new(code: Code, plugin: &'static str, reason: impl Into<Cow<'static, str>>) -> Self {
        Status {
            code,
            plugin,
            reasons: vec![reason.into()],
        }
    }

    pub fn is_success(&self) -> bool {
        self.code == Code::Success
    }

    /// `Status.Message()`: reasons joined with ", ".
    pub fn message(&self) -> String {
        self.reasons.join(", ")
    }
}

/// Plugin names, as upstream registers them (`pkg/scheduler/framework/plugins/names/names.go`).
pub mod names {
    pub const SCHEDULING_GATES: &str = "SchedulingGates";
    pub const NODE_UNSCHEDULABLE: &str = "NodeUnschedulable";
    pub const NODE_NAME: &str = "NodeName";
    pub const TAINT_TOLERATION: &str = "TaintToleration";
    pub const NODE_AFFINITY: &str = "NodeAffinity";
    pub const NODE_RESOURCES_FIT: &str = "NodeResourcesFit";
    pub const NODE_RESOURCES_BALANCED_ALLOCATION: &str = "NodeResourcesBalancedAllocation";
    pub const DEFAULT_PREEMPTION: &str = "DefaultPreemption";
    pub const INTER_POD_AFFINITY: &str = "InterPodAffinity";
    pub const POD_TOPOLOGY_SPREAD: &str = "PodTopologySpread";
}

/// Which release's wording the messages use. Only `TaintToleration` differs so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum, Serialize)]
pub enum MessageFormat {
    /// Kubernetes ≥ 1.35: `node(s) had untolerated taint(s)`.
    #[default]
    #[value(name = "current")]
    Current,
    /// Kubernetes 1.25–1.34: `node(s) had untolerated taint {key: value}`.
    #[value(name = "1.34")]
    V1_34,
}

/// For `skip_serializing_if`: a count of 0.
pub fn is_zero(n: &usize) -> bool {
    *n == 0
}
