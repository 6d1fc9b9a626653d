//! The typed, validated objects the scheduler works on: nodes and pods with their resources
//! already in integer units. Kubernetes sub-objects (taints, tolerations, affinity) keep their
//! k8s-openapi types.

pub mod crd;
pub mod generated_names;
pub mod gpu_share;
pub mod labels;
pub mod node;
pub mod objects;
pub mod pod;
pub mod pod_group;
pub mod quantity;
pub mod resources;
pub mod shared;
pub mod validate;

pub use node::Node;
pub use pod::Pod;
