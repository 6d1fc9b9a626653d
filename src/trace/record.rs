//! One job or pod of a trace, as compact as the replay needs it: a record is held for every
//! job in flight, so repeated strings (queue, priority, class, GPU model) are interned in
//! [`Symbols`] and the record keeps a 4-byte [`Sym`].

use std::collections::HashMap;

/// An interned string: an index into the reader's [`Symbols`]. `Sym::NONE` is the empty
/// string, which every [`Symbols`] holds at index 0 (a column the mapping leaves out, or an
/// empty cell).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Sym(pub u32);

impl Sym {
    pub const NONE: Sym = Sym(0);

    pub fn is_none(self) -> bool {
        self == Sym::NONE
    }
}

/// The strings a trace repeats, each stored once. Grows with the number of *distinct* values
/// (queues, QoS classes, GPU models), never with the number of rows.
#[derive(Debug, Clone)]
pub struct Symbols {
    names: Vec<Box<str>>,
    index: HashMap<Box<str>, Sym>,
}

impl Default for Symbols {
    fn default() -> Self {
        let mut symbols = Symbols {
            names: Vec::new(),
            index: HashMap::new(),
        };
        symbols.intern("");
        symbols
    }
}

impl Symbols {
    /// The symbol of `text`, added on first sight.
    pub fn intern(&mut self, text: &str) -> Sym {
        if let Some(&sym) = self.index.get(text) {
            return sym;
        }
        let sym = Sym(self.names.len() as u32);
        self.names.push(text.into());
        self.index.insert(text.into(), sym);
        sym
    }

    /// The text of `sym` (empty for [`Sym::NONE`]).
    pub fn name(&self, sym: Sym) -> &str {
        self.names.get(sym.0 as usize).map_or("", |s| s)
    }

    /// The GPU models a [`TraceRecord::gpu_models`] constraint accepts: openb's `gpu_spec` is a
    /// `|`-separated OR-list (`V100M16|V100M32`; README.upstream.md "gpu_spec"), empty meaning
    /// any model. Upstream's simulator matches each part exactly against the node's
    /// `alibabacloud.com/gpu-card-model` (`pkg/utils/utils.go` `IsNodeAccessibleToPodByType`).
    pub fn models(&self, sym: Sym) -> impl Iterator<Item = &str> {
        self.name(sym).split('|').filter(|m| !m.is_empty())
    }

    /// How many distinct strings are held (the empty string included).
    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

/// What the trace saw happen to a job (scheduling-over-time.md §5, "Common replay rules").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// It started and ended within the trace: replay it for `end − start`.
    Finished,
    /// It started and was still running when the trace ends (right-censored): replay it as
    /// running to the horizon. `end` is the trace's last time, or absent.
    Censored,
    /// It never started: an arrival withdrawn (deleted, cancelled) at `end`, or still pending
    /// at the trace end when `end` is absent.
    Withdrawn,
}

/// One job (or pod) of a trace. Times are milliseconds since the trace's first arrival.
///
/// Resources are the job's totals across its `nodes` (Helios and Acme give `gpu_num` and
/// `cpu_num` per job, `node_num` nodes; scheduling-over-time.md §5); with `nodes = 1` they are
/// the pod's requests, as openb's are.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceRecord {
    /// The job's name or id as the trace writes it.
    pub id: Box<str>,
    /// When the job was submitted (openb `creation_time`, Helios/Acme `submit_time`).
    pub arrival: u64,
    /// When the trace saw it start (openb `scheduled_time`): the baseline for simulated waits,
    /// never replayed. Absent when it never started or the trace has no start column.
    pub start: Option<u64>,
    /// When it ended or was withdrawn (openb `deletion_time`; start + `duration` where the
    /// trace gives a duration). Absent when the trace does not say.
    pub end: Option<u64>,
    /// Requested CPU in millicores.
    pub cpu_milli: u64,
    /// Requested memory in bytes.
    pub memory_bytes: u64,
    /// GPUs requested: whole or shared devices (openb `num_gpu`).
    pub gpu_count: u32,
    /// Thousandths of each GPU used (openb `gpu_milli`: below 1000 only when `gpu_count` is 1,
    /// GPU sharing; 1000 for whole GPUs, and 0 when `gpu_count` is 0).
    pub gpu_milli: u32,
    /// The GPU models it may run on, a `|`-OR list (openb `gpu_spec`); [`Sym::NONE`] = any.
    /// Read it with [`Symbols::models`].
    pub gpu_models: Sym,
    /// Queue or tenant (Helios `vc`, Acme `user`).
    pub queue: Sym,
    /// Priority or QoS class as written (openb `qos`: LS, BE, Burstable, Guaranteed).
    pub priority: Sym,
    /// Workload class (Acme `type`).
    pub class: Sym,
    /// Gang size: how many nodes the job spans (Helios/Acme `node_num`; 1 otherwise).
    pub nodes: u32,
    pub outcome: Outcome,
}

impl TraceRecord {
    /// How long it ran (or waited before being withdrawn), in ms: `end − start`, from the
    /// arrival when the trace has no start. Absent without an end (censored, still pending).
    pub fn duration(&self) -> Option<u64> {
        let end = self.end?;
        Some(end.saturating_sub(self.start.unwrap_or(self.arrival)))
    }

    /// The wait the trace observed, `start − arrival` (scheduling-over-time.md §5: "observed
    /// wait = scheduled_time − creation_time").
    pub fn observed_wait(&self) -> Option<u64> {
        Some(self.start?.saturating_sub(self.arrival))
    }

    /// Total GPU request in thousandths of a GPU: `num_gpu × gpu_milli` (§5).
    pub fn gpu_milli_total(&self) -> u64 {
        u64::from(self.gpu_count) * u64::from(self.gpu_milli)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_are_stored_once() {
        let mut s = Symbols::default();
        assert_eq!(s.intern(""), Sym::NONE);
        let a = s.intern("LS");
        assert_eq!(s.intern("LS"), a);
        assert_ne!(s.intern("BE"), a);
        assert_eq!(s.len(), 3);
        assert_eq!(s.name(a), "LS");
        let spec = s.intern("V100M16|V100M32");
        assert_eq!(s.models(spec).collect::<Vec<_>>(), ["V100M16", "V100M32"]);
        assert_eq!(s.models(Sym::NONE).count(), 0);
    }

    /// The record stays small: one is held per job in flight.
    #[test]
    fn a_record_is_compact() {
        assert!(std::mem::size_of::<TraceRecord>() <= 104);
    }
}
