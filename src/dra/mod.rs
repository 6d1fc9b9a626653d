//! Dynamic Resource Allocation (`resource.k8s.io/v1`): CEL device selectors and the
//! structured-parameters allocator.

pub mod allocator;
pub mod cel;

#[cfg(test)]
mod allocator_tests;
#[cfg(test)]
mod cel_tests;
