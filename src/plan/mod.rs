//! `schedsim plan`: the cheapest nodes to add for a goal (issue 28). A point is a count of
//! added nodes per candidate type (`spec.plan.candidates`); its cost is Σ price × count. Each
//! point is the scenario loaded with those nodes (their DaemonSets' pods included) and
//! scheduled by the exact simulator, then judged by the goal (`goal`).
//!
//! Placement is not monotone in the node count (capacity-planning.md §6), so nothing is
//! inferred from a neighbour: the search (`search`) visits points in order of cost, skips
//! only those a sound bound rules out (the goal's pods need more of some resource than the
//! cluster would have, `bound`), and evaluates the others; the first that meets the goal is
//! the cheapest. When the evaluation budget runs out first, the answer is the best found and
//! says so. Evaluations run in parallel (rayon), a batch at a time, in cost order, so the
//! answer does not depend on the thread count.

pub mod bound;
pub mod chart;
pub mod drainability;
pub mod estimate;
pub mod goal;
pub mod removal;
pub mod report;
pub mod search;

pub use report::PlanReport;
pub use search::{SearchOptions, plan};
