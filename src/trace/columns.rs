//! Which CSV header holds what: the column mapping a planner writes for their own export (it
//! becomes `spec.trace.columns`), and the presets for the published traces, with the columns
//! and time semantics of scheduling-over-time.md §5 and gpu-cluster-data.md §1.
//!
//! Only `id` and `arrival` are required. A resource column left out reads as 0, a string column
//! as empty, `nodes` as 1. A row whose `start` cell is empty never ran; a row with a start and
//! no end (or duration) was still running at the trace end.

use serde::{Deserialize, Serialize};

use super::time::{TimeFormat, parse_offset};
use super::units::{CpuUnit, GpuUnit, MemoryUnit};

/// A CSV trace's column mapping. Every name is a header as the file writes it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct TraceColumns {
    /// The job's id or name.
    pub id: String,
    /// When the job was submitted. Rows must be sorted by it.
    pub arrival: String,
    /// When the trace saw the job start; an empty cell means it never ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// When the job ended (or was withdrawn, when it never started). Not with `duration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<String>,
    /// How long the job ran, in seconds; end = start + duration. Not with `end`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration: Option<String>,
    /// Requested CPU, in `cpuUnit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    #[serde(default)]
    pub cpu_unit: CpuUnit,
    /// Requested memory, in `memoryUnit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    #[serde(default)]
    pub memory_unit: MemoryUnit,
    /// GPUs requested, in `gpuUnit`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<String>,
    #[serde(default)]
    pub gpu_unit: GpuUnit,
    /// Thousandths of each GPU used (openb `gpu_milli`); then `gpus` must be a whole count.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_milli: Option<String>,
    /// The GPU models the job may run on, a `|`-separated OR-list; empty = any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_model: Option<String>,
    /// Queue or tenant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
    /// Priority or QoS class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<String>,
    /// Workload class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub class: Option<String>,
    /// How many nodes the job spans (its gang size).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<String>,
    /// The job's final state or phase (openb `pod_phase`, Helios/Acme `state`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// States meaning "still running when observed": a row in one of them that ends at the
    /// trace's last end time was cut off by the trace's end (censored), not finished.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub running_states: Vec<String>,
    /// How the time columns are written.
    #[serde(default)]
    pub time_format: TimeFormat,
    /// The UTC offset of calendar times written without one, e.g. `+08:00`.
    #[serde(default = "utc", skip_serializing_if = "is_utc")]
    pub utc_offset: String,
}

fn utc() -> String {
    "+00:00".into()
}

fn is_utc(offset: &String) -> bool {
    *offset == utc()
}

/// The names [`TraceColumns::preset`] knows.
pub const PRESETS: &[&str] = &["openb", "helios", "acme"];

fn column(name: &str) -> Option<String> {
    Some(name.to_string())
}

impl TraceColumns {
    /// A mapping with only the two required columns.
    pub fn new(id: &str, arrival: &str) -> Self {
        TraceColumns {
            id: id.into(),
            arrival: arrival.into(),
            start: None,
            end: None,
            duration: None,
            cpu: None,
            cpu_unit: CpuUnit::default(),
            memory: None,
            memory_unit: MemoryUnit::default(),
            gpus: None,
            gpu_unit: GpuUnit::default(),
            gpu_milli: None,
            gpu_model: None,
            queue: None,
            priority: None,
            class: None,
            nodes: None,
            state: None,
            running_states: Vec::new(),
            time_format: TimeFormat::default(),
            utc_offset: utc(),
        }
    }

    /// The preset called `name` (one of [`PRESETS`]).
    pub fn preset(name: &str) -> Option<Self> {
        match name {
            "openb" => Some(Self::openb()),
            "helios" => Some(Self::helios()),
            "acme" => Some(Self::acme()),
            _ => None,
        }
    }

    /// Alibaba's `cluster-trace-gpu-v2023` pod lists (`openb_pod_list_*.csv`, columns as
    /// README.upstream.md publishes them): times are integer seconds from the trace start;
    /// arrival = `creation_time`, start = `scheduled_time` (empty exactly for the Pending pods,
    /// deleted before being scheduled), end = `deletion_time`; `Running` pods deleted at the
    /// trace's last time were still running (scheduling-over-time.md §5).
    pub fn openb() -> Self {
        TraceColumns {
            start: column("scheduled_time"),
            end: column("deletion_time"),
            cpu: column("cpu_milli"),
            cpu_unit: CpuUnit::Milli,
            memory: column("memory_mib"),
            memory_unit: MemoryUnit::MiB,
            gpus: column("num_gpu"),
            gpu_milli: column("gpu_milli"),
            gpu_model: column("gpu_spec"),
            priority: column("qos"),
            state: column("pod_phase"),
            running_states: vec!["Running".into()],
            ..Self::new("name", "creation_time")
        }
    }

    /// SenseTime Helios `cluster_log.csv` (`HeliosData`; columns
    /// `job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue`):
    /// times `YYYY-MM-DD HH:MM:SS`, `duration` = end − start in seconds (read through
    /// `end_time`, which also dates a job cancelled before it started); tenant = `vc`. Its
    /// `queue` column is the queueing delay in seconds, not a queue name. The times carry no
    /// offset and the data does not state one; the clusters are in China, so `+08:00` is
    /// assumed (offsets from the first arrival do not depend on it).
    pub fn helios() -> Self {
        TraceColumns {
            start: column("start_time"),
            end: column("end_time"),
            cpu: column("cpu_num"),
            gpus: column("gpu_num"),
            queue: column("vc"),
            nodes: column("node_num"),
            state: column("state"),
            time_format: TimeFormat::DateTime,
            utc_offset: "+08:00".into(),
            ..Self::new("job_id", "submit_time")
        }
    }

    /// Shanghai AI Lab Acme `trace_seren.csv` / `trace_kalos.csv` (`AcmeTrace`; columns
    /// `job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,queue,gpu_time`):
    /// ISO times with their own offset, `duration` = end − start in seconds (read through
    /// `end_time`, as for Helios); no VC column, so tenant =
    /// `user`, and class = `type`.
    pub fn acme() -> Self {
        TraceColumns {
            start: column("start_time"),
            end: column("end_time"),
            cpu: column("cpu_num"),
            gpus: column("gpu_num"),
            queue: column("user"),
            class: column("type"),
            nodes: column("node_num"),
            state: column("state"),
            time_format: TimeFormat::DateTime,
            ..Self::new("job_id", "submit_time")
        }
    }

    /// What a mapping cannot mean, as (field, message): both `end` and `duration`, a per-GPU
    /// share with GPUs in percent, an unreadable `utcOffset`, an empty column name.
    pub fn check(&self) -> Result<(), (&'static str, String)> {
        if self.end.is_some() && self.duration.is_some() {
            return Err(("duration", "set end or duration, not both".into()));
        }
        if self.gpu_milli.is_some() && self.gpu_unit == GpuUnit::Percent {
            return Err((
                "gpuMilli",
                "a per-GPU share needs gpus as a count (gpuUnit: count)".into(),
            ));
        }
        if !self.running_states.is_empty() && self.state.is_none() {
            return Err(("runningStates", "needs a state column".into()));
        }
        parse_offset(&self.utc_offset).map_err(|m| ("utcOffset", m))?;
        for (field, name) in self.named() {
            if name.is_empty() {
                return Err((field, "must name a column".into()));
            }
        }
        Ok(())
    }

    /// Every mapped column as (field, header).
    pub fn named(&self) -> impl Iterator<Item = (&'static str, &str)> {
        let optional = [
            ("start", &self.start),
            ("end", &self.end),
            ("duration", &self.duration),
            ("cpu", &self.cpu),
            ("memory", &self.memory),
            ("gpus", &self.gpus),
            ("gpuMilli", &self.gpu_milli),
            ("gpuModel", &self.gpu_model),
            ("queue", &self.queue),
            ("priority", &self.priority),
            ("class", &self.class),
            ("nodes", &self.nodes),
            ("state", &self.state),
        ];
        [("id", &self.id), ("arrival", &self.arrival)]
            .into_iter()
            .map(|(f, n)| (f, n.as_str()))
            .chain(
                optional
                    .into_iter()
                    .filter_map(|(f, n)| n.as_deref().map(|n| (f, n))),
            )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_are_valid_mappings() {
        for name in PRESETS {
            let preset = TraceColumns::preset(name).unwrap();
            assert_eq!(preset.check(), Ok(()), "{name}");
        }
        assert_eq!(TraceColumns::preset("philly"), None);
    }

    #[test]
    fn contradictions_are_named() {
        let mut both = TraceColumns::new("id", "t");
        both.end = Some("e".into());
        both.duration = Some("d".into());
        assert_eq!(both.check().unwrap_err().0, "duration");
        let mut offset = TraceColumns::new("id", "t");
        offset.utc_offset = "CET".into();
        assert_eq!(offset.check().unwrap_err().0, "utcOffset");
        let mut empty = TraceColumns::new("id", "t");
        empty.queue = Some(String::new());
        assert_eq!(empty.check().unwrap_err().0, "queue");
    }

    #[test]
    fn a_mapping_round_trips_through_json_with_its_defaults() {
        let json = serde_json::json!({"id": "job", "arrival": "submit"});
        let columns: TraceColumns = serde_json::from_value(json).unwrap();
        assert_eq!(columns, TraceColumns::new("job", "submit"));
        let back = serde_json::to_value(TraceColumns::openb()).unwrap();
        let again: TraceColumns = serde_json::from_value(back).unwrap();
        assert_eq!(again, TraceColumns::openb());
        let unknown = serde_json::json!({"id": "job", "arrival": "t", "arivalUnit": "s"});
        let err = serde_json::from_value::<TraceColumns>(unknown).unwrap_err();
        assert!(
            err.to_string().contains("unknown field `arivalUnit`"),
            "{err}"
        );
    }
}
