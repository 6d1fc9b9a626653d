//! `NodeName`: a pod that names a node fits only that node.
//! Source: `pkg/scheduler/framework/plugins/nodename/node_name.go`.

use crate::model::{Node, Pod};
use crate::sched::framework::{Code, Status, names};

pub const ERR_REASON: &str = "node(s) didn't match the requested node name";

pub fn filter(pod: &Pod, node: &Node) -> Status {
    match &pod.node_name {
        Some(name) if *name != node.name => Status::new(
            Code::UnschedulableAndUnresolvable,
            names::NODE_NAME,
            ERR_REASON,
        ),
        _ => Status::success(),
    }
}
