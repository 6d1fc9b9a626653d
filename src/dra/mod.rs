//! Dynamic Resource Allocation (`resource.k8s.io/v1`): CEL device selectors, the
//! structured-parameters allocator (with the counters of partitionable devices in
//! `counters`, and devices shared by capacity in `capacity`), the objects as the API server
//! admits them (`api`), the scenario's objects as the scheduler lists them (`inventory`), the
//! resourceclaim controller that makes pods' claims from templates (`controller`,
//! `resourceclaim`), and extended resources backed by DRA devices (`extended`).

pub mod allocator;
pub mod api;
pub mod capacity;
pub mod cel;
pub mod controller;
pub mod counters;
pub mod extended;
pub mod inventory;
pub mod resourceclaim;
pub mod taints;

pub use inventory::Inventory;

/// A device: (driver, pool, device). Here, below the allocator and the state it reads
/// (`capacity`, `counters`, `inventory`), so that none of them imports another for it.
pub type DeviceId = (String, String, String);
