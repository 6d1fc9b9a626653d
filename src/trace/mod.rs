//! Real workload traces as input (issue 26, "Real traces as input"): CSV exports with an
//! arrival and a run time per job, read one row at a time into compact [`TraceRecord`]s.
//!
//! - [`columns`]: which header holds what ([`TraceColumns`], a serde mapping that becomes
//!   `spec.trace.columns`), with presets for the published traces: Alibaba openb
//!   (`cluster-trace-gpu-v2023`), SenseTime Helios, Shanghai AI Lab Acme.
//! - [`reader`]: [`TraceReader`], the streaming reader, its sort check and its counts.
//! - [`record`]: [`TraceRecord`], its [`Outcome`], and the interned strings ([`Symbols`]).
//! - [`units`] and [`time`]: numbers and times as traces write them.
//!
//! The time semantics (arrival = submission, start and end observed, rows that never ran
//! withdrawn at their end, runs cut off by the trace's end censored) are those of
//! `shared/reference/scheduling-over-time.md` §5. Not yet wired into the simulation.

pub mod clock;
pub mod columns;
pub mod reader;
pub mod record;
pub mod time;
pub mod units;

pub use columns::{PRESETS, TraceColumns};
pub use reader::{TraceCounts, TraceReader, open};
pub use record::{Outcome, Sym, Symbols, TraceRecord};

/// A trace that cannot be read: schedsim's input error, `file:line:col: column: message`.
pub type TraceError = crate::error::InputError;
