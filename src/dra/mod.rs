//! Dynamic Resource Allocation (`resource.k8s.io/v1`): CEL device selectors and the
//! structured-parameters allocator.

pub mod allocator;
pub mod cel;
