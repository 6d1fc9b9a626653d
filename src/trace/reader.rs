//! Reading a CSV trace one row at a time: [`TraceReader`] turns each row into a
//! [`TraceRecord`] as the mapping says, checks that arrivals never go back, and counts what
//! it had to interpret (jobs that never ran, runs cut off by the trace's end, times it moved)
//! so the caller can warn once per kind with the count. Nothing is held per row: memory stays
//! flat however long the trace.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

use super::TraceError;
use super::columns::TraceColumns;
use super::record::{Outcome, Sym, Symbols, TraceRecord};
use super::time::parse_offset;
use super::units::{decimal, gpu_shape};
use crate::error::{InputError, Position};

/// What the reader interpreted, counted over the rows read so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TraceCounts {
    /// Rows read.
    pub rows: u64,
    pub finished: u64,
    /// Rows still running at the trace's end.
    pub censored: u64,
    /// Rows that never ran: withdrawn at their end time, or pending to the end.
    pub withdrawn: u64,
    /// Rows whose start was before their arrival, or whose end was before their start, moved
    /// to the arrival (start) so no time runs backwards.
    pub times_moved: u64,
    /// Rows giving 0 nodes, read as 1.
    pub zero_nodes: u64,
}

/// The column index of each mapped field.
#[derive(Debug, Default)]
struct Index {
    id: usize,
    arrival: usize,
    start: Option<usize>,
    end: Option<usize>,
    duration: Option<usize>,
    cpu: Option<usize>,
    memory: Option<usize>,
    gpus: Option<usize>,
    gpu_milli: Option<usize>,
    gpu_model: Option<usize>,
    queue: Option<usize>,
    priority: Option<usize>,
    class: Option<usize>,
    nodes: Option<usize>,
    state: Option<usize>,
}

/// A streaming reader of one CSV trace.
pub struct TraceReader<R: Read> {
    csv: csv::Reader<R>,
    file: PathBuf,
    columns: TraceColumns,
    headers: csv::StringRecord,
    index: Index,
    utc_offset_ms: i64,
    horizon: Option<u64>,
    symbols: Symbols,
    running_states: Vec<Sym>,
    /// The first arrival (the trace's origin) and the previous row's arrival, in the format's
    /// own milliseconds, with the previous row's line.
    origin: Option<i64>,
    previous: (i64, u64),
    counts: TraceCounts,
    row: csv::StringRecord,
    done: bool,
}

/// Opens the trace at `path`. When the mapping names running states, the file is read twice:
/// first for its last end time (the horizon that tells a run cut off by the trace's end from
/// one that finished), then for its records. Both passes stream.
pub fn open(
    path: &Path,
    columns: &TraceColumns,
) -> Result<TraceReader<BufReader<File>>, TraceError> {
    let file = || {
        File::open(path).map(BufReader::new).map_err(|e| {
            InputError::new(
                path,
                format!("cannot read: {}", crate::yaml::io_message(&e)),
            )
        })
    };
    let reader = TraceReader::new(file()?, path, columns)?;
    if columns.running_states.is_empty() {
        return Ok(reader);
    }
    let mut horizon = 0;
    for record in reader {
        horizon = horizon.max(record?.end.unwrap_or(0));
    }
    Ok(TraceReader::new(file()?, path, columns)?.with_horizon(horizon))
}

impl<R: Read> TraceReader<R> {
    /// A reader over `input`, named `file` in its errors; reads and checks the header.
    pub fn new(input: R, file: &Path, columns: &TraceColumns) -> Result<Self, TraceError> {
        let at = |line| Some(Position { line, column: 1 });
        if let Err((field, message)) = columns.check() {
            return Err(InputError::new(file, format!("trace columns: {message}")).field(field));
        }
        let utc_offset_ms = parse_offset(&columns.utc_offset).unwrap_or(0);
        let mut csv = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(input);
        let headers = csv.headers().map_err(|e| csv_error(file, &e))?.clone();
        if headers.is_empty() || (headers.len() == 1 && headers[0].is_empty()) {
            return Err(InputError::new(file, "no header row: the file is empty").at(at(1)));
        }
        let find = |name: &str| headers.iter().position(|h| h.trim() == name);
        for (field, name) in columns.named() {
            if find(name).is_none() {
                let all: Vec<&str> = headers.iter().collect();
                let message = format!(
                    "no column {name:?} in the header (it has {})",
                    all.join(", ")
                );
                return Err(InputError::new(file, message).at(at(1)).field(field));
            }
        }
        let opt = |name: &Option<String>| name.as_deref().and_then(find);
        let index = Index {
            id: find(&columns.id).unwrap_or(0),
            arrival: find(&columns.arrival).unwrap_or(0),
            start: opt(&columns.start),
            end: opt(&columns.end),
            duration: opt(&columns.duration),
            cpu: opt(&columns.cpu),
            memory: opt(&columns.memory),
            gpus: opt(&columns.gpus),
            gpu_milli: opt(&columns.gpu_milli),
            gpu_model: opt(&columns.gpu_model),
            queue: opt(&columns.queue),
            priority: opt(&columns.priority),
            class: opt(&columns.class),
            nodes: opt(&columns.nodes),
            state: opt(&columns.state),
        };
        let mut symbols = Symbols::default();
        let running_states = columns
            .running_states
            .iter()
            .map(|s| symbols.intern(s))
            .collect();
        Ok(TraceReader {
            csv,
            file: file.to_path_buf(),
            columns: columns.clone(),
            headers,
            index,
            utc_offset_ms,
            horizon: None,
            symbols,
            running_states,
            origin: None,
            previous: (i64::MIN, 0),
            counts: TraceCounts::default(),
            row: csv::StringRecord::new(),
            done: false,
        })
    }

    /// The trace's last end time (ms after the first arrival): a row in one of the mapping's
    /// running states that ends then was still running (censored). [`open`] finds it.
    pub fn with_horizon(mut self, horizon: u64) -> Self {
        self.horizon = Some(horizon);
        self
    }

    pub fn horizon(&self) -> Option<u64> {
        self.horizon
    }

    /// The interned strings of the records read so far.
    pub fn symbols(&self) -> &Symbols {
        &self.symbols
    }

    pub fn counts(&self) -> TraceCounts {
        self.counts
    }

    /// One warning per kind of row the reader interpreted, with its count
    /// (scheduling-over-time.md §5, "Common replay rules").
    pub fn warnings(&self) -> Vec<String> {
        let c = &self.counts;
        let file = self.file.display();
        let mut out = Vec::new();
        if c.withdrawn > 0 {
            out.push(format!(
                "{file}: {} of {} jobs never ran (no start time): replayed as arrivals withdrawn at their end time",
                c.withdrawn, c.rows
            ));
        }
        if c.censored > 0 {
            out.push(format!(
                "{file}: {} of {} jobs were still running when the trace ends (censored): replayed as running to the end",
                c.censored, c.rows
            ));
        }
        if c.times_moved > 0 {
            out.push(format!(
                "{file}: {} jobs started before their arrival or ended before their start: moved to the arrival (start)",
                c.times_moved
            ));
        }
        if c.zero_nodes > 0 {
            out.push(format!(
                "{file}: {} jobs give 0 nodes: read as 1",
                c.zero_nodes
            ));
        }
        out
    }

    /// An error at column `i` of the current row, naming that column's header.
    fn error_at(&self, i: usize, message: impl Into<String>) -> InputError {
        let line = self.row.position().map_or(0, |p| p.line()) as u32;
        // Columns count characters of the fields as read (quotes left out) and their commas.
        let before: usize = (0..i).map(|j| self.row[j].chars().count() + 1).sum();
        let column = before as u32 + 1;
        InputError::new(&self.file, message)
            .at(Some(Position { line, column }))
            .field(self.headers[i].trim())
    }

    fn cell(&self, i: usize) -> &str {
        self.row.get(i).unwrap_or("").trim()
    }

    /// An optional column's cell, `None` when unmapped or empty.
    fn present(&self, i: Option<usize>) -> Option<(usize, &str)> {
        let i = i?;
        let cell = self.cell(i);
        (!cell.is_empty()).then_some((i, cell))
    }

    fn number(
        &self,
        i: Option<usize>,
        read: impl Fn(&str) -> Result<u64, String>,
    ) -> Result<Option<u64>, InputError> {
        match self.present(i) {
            Some((i, cell)) => read(cell).map(Some).map_err(|m| self.error_at(i, m)),
            None => Ok(None),
        }
    }

    fn time(&self, i: usize) -> Result<i64, InputError> {
        let format = self.columns.time_format;
        (format.millis(self.cell(i), self.utc_offset_ms)).map_err(|m| self.error_at(i, m))
    }

    fn intern(&mut self, i: Option<usize>) -> Sym {
        match i {
            Some(i) => {
                let cell = self.row.get(i).unwrap_or("").trim();
                self.symbols.intern(cell)
            }
            None => Sym::NONE,
        }
    }

    /// The current row as a record.
    fn record(&mut self) -> Result<TraceRecord, InputError> {
        let ix = &self.index;
        let id = self.cell(ix.id);
        if id.is_empty() {
            return Err(self.error_at(ix.id, "must not be empty"));
        }
        let id: Box<str> = id.into();
        let arrival = self.time(ix.arrival)?;
        let line = self.row.position().map_or(0, |p| p.line());
        if arrival < self.previous.0 {
            let message = format!(
                "{:?} is earlier than the arrival on line {}: rows must be sorted by arrival",
                self.cell(ix.arrival),
                self.previous.1
            );
            return Err(self.error_at(ix.arrival, message));
        }
        self.previous = (arrival, line);
        let origin = *self.origin.get_or_insert(arrival);
        // Times before their row's arrival (or an end before its start) are moved up to it.
        let mut moved = false;
        let mut not_before = |t: i64, floor: i64| {
            moved |= t < floor;
            t.max(floor)
        };
        let start = match self.present(ix.start) {
            Some((i, _)) => Some(not_before(self.time(i)?, arrival)),
            None => None,
        };
        let began = start.unwrap_or(arrival);
        let end = match (self.present(ix.end), ix.duration) {
            (Some((i, _)), _) => Some(not_before(self.time(i)?, began)),
            (None, Some(_)) => (self.number(ix.duration, |t| decimal(t, 1000))?)
                .map(|d| began.saturating_add(i64::try_from(d).unwrap_or(i64::MAX))),
            (None, None) => None,
        };
        // Milliseconds after the first arrival, which no time of this row is before.
        let offset = |t: i64| u64::try_from(t.saturating_sub(origin)).unwrap_or(0);
        let (arrival, start, end) = (offset(arrival), start.map(offset), end.map(offset));
        let cpu_unit = self.columns.cpu_unit;
        let memory_unit = self.columns.memory_unit;
        let gpu_unit = self.columns.gpu_unit;
        let cpu_milli = self.number(ix.cpu, |t| cpu_unit.milli(t))?.unwrap_or(0);
        let memory_bytes = self
            .number(ix.memory, |t| memory_unit.bytes(t))?
            .unwrap_or(0);
        let gpu_total = self.number(ix.gpus, |t| gpu_unit.milli(t))?.unwrap_or(0);
        let (gpu_count, gpu_milli) = match ix.gpu_milli {
            Some(share) => self.gpu_share(gpu_total, share)?,
            None => gpu_shape(gpu_total).map_err(|m| self.error_at(ix.gpus.unwrap_or(0), m))?,
        };
        let nodes = self.number(ix.nodes, |t| decimal(t, 1))?.unwrap_or(1);
        let nodes = u32::try_from(nodes)
            .map_err(|_| self.error_at(ix.nodes.unwrap_or(0), "too many nodes"))?;
        let (gpu_model, queue, priority, class, state) =
            (ix.gpu_model, ix.queue, ix.priority, ix.class, ix.state);
        let record = TraceRecord {
            id,
            arrival,
            start,
            end,
            cpu_milli,
            memory_bytes,
            gpu_count,
            gpu_milli,
            gpu_models: self.intern(gpu_model),
            queue: self.intern(queue),
            priority: self.intern(priority),
            class: self.intern(class),
            nodes: nodes.max(1),
            outcome: Outcome::Finished,
        };
        let state = self.intern(state);
        let outcome = if self.index.start.is_some() && start.is_none() {
            Outcome::Withdrawn
        } else if end.is_none() || (end == self.horizon && self.running_states.contains(&state)) {
            Outcome::Censored
        } else {
            Outcome::Finished
        };
        let c = &mut self.counts;
        c.rows += 1;
        c.times_moved += u64::from(moved);
        c.zero_nodes += u64::from(nodes == 0);
        match outcome {
            Outcome::Finished => c.finished += 1,
            Outcome::Censored => c.censored += 1,
            Outcome::Withdrawn => c.withdrawn += 1,
        }
        Ok(TraceRecord { outcome, ..record })
    }

    /// openb's pair (`num_gpu`, `gpu_milli`): a whole count of GPUs, each used `gpu_milli`
    /// thousandths (README.upstream.md: "Detailed GPU requested for GPU-sharing workloads").
    fn gpu_share(&self, total: u64, share: usize) -> Result<(u32, u32), InputError> {
        let gpus = self.index.gpus.unwrap_or(share);
        if !total.is_multiple_of(1000) {
            return Err(self.error_at(
                gpus,
                "expected a whole number of GPUs (gpuMilli gives the share of each)",
            ));
        }
        let count =
            u32::try_from(total / 1000).map_err(|_| self.error_at(gpus, "too many GPUs"))?;
        let milli = self.number(Some(share), |t| decimal(t, 1))?.unwrap_or(0);
        if milli > 1000 {
            return Err(self.error_at(share, format!("{milli} is more than one GPU (1000)")));
        }
        Ok((count, if count == 0 { 0 } else { milli as u32 }))
    }
}

impl<R: Read> Iterator for TraceReader<R> {
    type Item = Result<TraceRecord, TraceError>;

    /// The next record in file order; after an error, nothing more.
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let read = self.csv.read_record(&mut self.row);
        let result = match read {
            Ok(false) => {
                self.done = true;
                return None;
            }
            Ok(true) => self.record(),
            Err(e) => Err(csv_error(&self.file, &e)),
        };
        self.done = result.is_err();
        Some(result)
    }
}

/// A CSV syntax or I/O error at its line.
fn csv_error(file: &Path, e: &csv::Error) -> InputError {
    let line = e.position().map(|p| p.line() as u32);
    let message = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => {
            format!("found {len} fields, but the header has {expected_len}")
        }
        csv::ErrorKind::Utf8 { err, .. } => {
            format!("field {} is not valid UTF-8", err.field() + 1)
        }
        csv::ErrorKind::Io(io) => format!("cannot read: {}", crate::yaml::io_message(io)),
        _ => e.to_string(),
    };
    let error = InputError::new(file, message);
    error.at(line.map(|line| Position { line, column: 1 }))
}
