//! Reading a trace streams: a 1,000,000-row CSV, made row by row by an iterator behind a
//! `Read`, is read in the same peak memory as a 10,000-row one. Alone in its test binary, so
//! that the process's peak resident memory (VmHWM) is this test's.

mod common;

use std::io::Read;
use std::path::Path;

use schedsim::trace::{Outcome, TraceColumns, TraceReader};

/// Peak resident memory of this process so far, in KiB.
fn peak_rss_kib() -> u64 {
    common::process::peak_rss_kib("self")
}

/// An openb-shaped CSV of `rows` rows, produced one row at a time as it is read: 20 queues'
/// worth of QoS values, every tenth pod never scheduled, arrivals a second apart.
struct GeneratedTrace {
    rows: u64,
    next: u64,
    line: Vec<u8>,
    at: usize,
}

impl GeneratedTrace {
    fn new(rows: u64) -> Self {
        let header = b"name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";
        GeneratedTrace {
            rows,
            next: 0,
            line: header.to_vec(),
            at: 0,
        }
    }

    fn fill(&mut self) {
        let i = self.next;
        self.next += 1;
        self.line.clear();
        let (phase, start) = if i % 10 == 9 {
            ("Pending", String::new())
        } else {
            ("Succeeded", i.to_string())
        };
        let gpus = [0, 1, 1, 2, 4, 8][(i % 6) as usize];
        let line = format!(
            "pod-{i:07},{},{},{gpus},1000,{},q{},{phase},{i},{},{start}\n",
            1000 * (1 + i % 16),
            1024 * (1 + i % 64),
            if i.is_multiple_of(3) {
                "V100M16|V100M32"
            } else {
                ""
            },
            i % 20,
            i + 60 + i % 3600,
        );
        self.line.extend_from_slice(line.as_bytes());
        self.at = 0;
    }
}

impl Read for GeneratedTrace {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.at == self.line.len() {
            if self.next == self.rows {
                return Ok(0);
            }
            self.fill();
        }
        let n = buf.len().min(self.line.len() - self.at);
        buf[..n].copy_from_slice(&self.line[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

/// Reads a generated trace of `rows` rows, checking file order; returns (records, withdrawn).
fn read(rows: u64) -> (u64, u64) {
    let reader = TraceReader::new(
        GeneratedTrace::new(rows),
        Path::new("generated.csv"),
        &TraceColumns::openb(),
    )
    .unwrap();
    let (mut count, mut withdrawn) = (0, 0);
    for record in reader {
        let record = record.unwrap();
        assert_eq!(record.arrival, count * 1000, "row {count} out of order");
        withdrawn += u64::from(record.outcome == Outcome::Withdrawn);
        count += 1;
    }
    (count, withdrawn)
}

#[test]
fn reading_a_trace_takes_flat_memory() {
    if !Path::new("/proc/self/status").exists() {
        return; // VmHWM is Linux's
    }
    assert_eq!(read(10_000), (10_000, 1_000));
    let after_few = peak_rss_kib();
    assert_eq!(read(1_000_000), (1_000_000, 100_000));
    let grown = peak_rss_kib().saturating_sub(after_few);
    eprintln!("peak RSS grew by {grown} KiB from 10,000 to 1,000,000 rows");
    // Holding the records would take ~100 MB (1,000,000 × ~100 bytes plus their ids); the
    // allocator's own noise on a loaded machine reaches ~1 MiB.
    assert!(
        grown < 2048,
        "peak RSS grew by {grown} KiB from 10,000 to 1,000,000 rows"
    );
}
