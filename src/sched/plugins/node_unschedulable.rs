//! `NodeUnschedulable`: a cordoned node (`spec.unschedulable`) takes only pods that tolerate
//! the `node.kubernetes.io/unschedulable:NoSchedule` taint.
//! Source: `pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable.go`.

use k8s_openapi::api::core::v1::Taint;

use super::taint_toleration::tolerations_tolerate_taint;
use crate::features::FeatureGates;
use crate::model::{Node, Pod};
use crate::sched::framework::{Code, Status, names};

pub const ERR_REASON_UNSCHEDULABLE: &str = "node(s) were unschedulable";
/// `v1.TaintNodeUnschedulable`.
pub const TAINT_NODE_UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";

pub fn filter(pod: &Pod, node: &Node, gates: &FeatureGates) -> Status {
    if !node.unschedulable {
        return Status::success();
    }
    let taint = Taint {
        key: TAINT_NODE_UNSCHEDULABLE.into(),
        effect: "NoSchedule".into(),
        ..Default::default()
    };
    if tolerations_tolerate_taint(&pod.tolerations, &taint, gates) {
        return Status::success();
    }
    Status::new(
        Code::UnschedulableAndUnresolvable,
        names::NODE_UNSCHEDULABLE,
        ERR_REASON_UNSCHEDULABLE,
    )
}
