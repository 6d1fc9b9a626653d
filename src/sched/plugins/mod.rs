//! The filter and score plugins, one file per upstream plugin, named as upstream names them.
//! Each exposes pure functions of (pod, node) so they can be checked case by case against the
//! upstream test tables and composed by the scheduling cycle.

pub mod dynamic_resources;
pub mod inter_pod_affinity;
pub mod node_affinity;
pub mod node_name;
pub mod node_resources_balanced_allocation;
pub mod node_resources_fit;
pub mod node_unschedulable;
pub mod pod_topology_spread;
pub mod registry;
pub mod scheduling_gates;
pub mod taint_toleration;
