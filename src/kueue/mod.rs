//! Kueue in front of the scheduler: the objects (`api`) and what the API server refuses of them
//! (`validation`: the CRDs' rules and Kueue's webhooks), the quota tree of ClusterQueues and
//! Cohorts (`quota`), flavor assignment per pod set (`assigner`) and the admission cycle
//! (`admission`). Follows kubernetes-sigs/kueue `pkg/scheduler/`, `pkg/cache/scheduler/` and
//! `apis/kueue/`; each module cites its files.
//!
//! Kueue acts before any pod exists: a workload's pods are created only once it is admitted,
//! with its flavors' node labels and tolerations injected. So admission runs on workloads
//! (pod sets and their requests), and only the pods of admitted workloads reach `sched`.

pub mod admission;
pub mod api;
pub mod assigner;
pub mod config;
pub mod pod_set_info;
pub mod preemption;
pub mod quota;
pub mod validation;
pub mod workload;

#[cfg(test)]
mod preemption_tests;
#[cfg(test)]
mod properties;
#[cfg(test)]
mod tables;
#[cfg(test)]
mod tests;
