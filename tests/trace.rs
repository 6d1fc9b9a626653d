//! The trace reader (`src/trace/`) on the published openb pod lists, on Helios-, Acme- and
//! PAI-shaped samples, and on bad input; with properties of the order it streams in.

use std::io::Cursor;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use schedsim::trace::{self, Outcome, TraceColumns, TraceCounts, TraceReader, TraceRecord};

const SECOND: u64 = 1000;
const MIB: u64 = 1 << 20;

fn repo(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

/// Every record of the trace at `path`, with its reader's counts and strings.
fn read_all(
    path: &str,
    columns: &TraceColumns,
) -> (
    Vec<TraceRecord>,
    TraceReader<std::io::BufReader<std::fs::File>>,
) {
    let mut reader = trace::open(&repo(path), columns).unwrap_or_else(|e| panic!("{e}"));
    let records = reader
        .by_ref()
        .collect::<Result<Vec<_>, _>>()
        .unwrap_or_else(|e| panic!("{e}"));
    (records, reader)
}

fn by_id<'a>(records: &'a [TraceRecord], id: &str) -> &'a TraceRecord {
    records.iter().find(|r| &*r.id == id).unwrap()
}

/// The openb default pod list reads completely, with the counts scheduling-over-time.md §5
/// and gpu-cluster-data.md §1.1 state (checked on the data with awk: 897 Pending rows, exactly
/// those without `scheduled_time`; 34 Running rows deleted at the maximum, 12,902,960 s).
#[test]
fn the_openb_default_trace_reads_with_its_published_counts() {
    let (records, reader) = read_all(
        "fixtures/openb/openb_pod_list_default.csv",
        &TraceColumns::openb(),
    );
    assert_eq!(records.len(), 8152);
    assert_eq!(
        reader.counts(),
        TraceCounts {
            rows: 8152,
            finished: 8152 - 897 - 34,
            censored: 34,
            withdrawn: 897,
            times_moved: 0,
            zero_nodes: 0,
        }
    );
    assert_eq!(reader.horizon(), Some(12_902_960 * SECOND));
    assert!(records.windows(2).all(|w| w[0].arrival <= w[1].arrival));
    assert!((records.iter()).all(|r| (r.outcome == Outcome::Withdrawn) == r.start.is_none()));
    assert!((records.iter()).all(|r| r.nodes == 1 && r.end.is_some()));
    // gpu-cluster-data.md: Σ num_gpu·gpu_milli = 6,086,800; num_gpu {0: 1088, 1: 6989, 2: 16, 4: 15, 8: 44}.
    assert_eq!(
        records
            .iter()
            .map(TraceRecord::gpu_milli_total)
            .sum::<u64>(),
        6_086_800
    );
    let with_gpus = |n| records.iter().filter(|r| r.gpu_count == n).count();
    assert_eq!([0, 1, 2, 4, 8].map(with_gpus), [1088, 6989, 16, 15, 44]);
    // qos: LS 4647, BE 3398, Burstable 100, Guaranteed 7 — four symbols, each stored once.
    let symbols = reader.symbols();
    let qos = |name| {
        records
            .iter()
            .filter(|r| symbols.name(r.priority) == name)
            .count()
    };
    assert_eq!(
        ["LS", "BE", "Burstable", "Guaranteed"].map(qos),
        [4647, 3398, 100, 7]
    );
    // "", the four QoS classes and the four phases.
    assert_eq!(symbols.len(), 9);
    assert!(records.iter().all(|r| r.gpu_models.is_none()));
    let warnings = reader.warnings();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert!(warnings[0].ends_with(
        "openb_pod_list_default.csv: 897 of 8152 jobs never ran (no start time): replayed as arrivals withdrawn at their end time"
    ));
    assert!(
        warnings[1].contains(": 34 of 8152 jobs were still running when the trace ends (censored)")
    );
}

/// The first rows and a Pending row, computed by hand from the CSV lines quoted.
#[test]
fn openb_rows_read_as_computed_by_hand() {
    let (records, reader) = read_all(
        "fixtures/openb/openb_pod_list_default.csv",
        &TraceColumns::openb(),
    );
    // openb-pod-0000,12000,16384,1,1000,,LS,Running,0,12537496,0
    // Running, but deleted before the trace's end: it finished (was deleted) at 12,537,496 s.
    let first = &records[0];
    assert_eq!(&*first.id, "openb-pod-0000");
    assert_eq!(
        (first.arrival, first.start, first.end),
        (0, Some(0), Some(12_537_496 * SECOND))
    );
    assert_eq!(first.duration(), Some(12_537_496 * SECOND));
    assert_eq!(first.observed_wait(), Some(0));
    assert_eq!(
        (first.cpu_milli, first.memory_bytes),
        (12_000, 16_384 * MIB)
    );
    assert_eq!((first.gpu_count, first.gpu_milli), (1, 1000));
    assert_eq!(reader.symbols().name(first.priority), "LS");
    assert_eq!(first.outcome, Outcome::Finished);
    // openb-pod-0001,6000,12288,1,460,,LS,Running,427061,12902960,427061
    // Running at the trace's last time: censored; it shares 460/1000 of one GPU.
    let second = &records[1];
    assert_eq!(&*second.id, "openb-pod-0001");
    assert_eq!(second.arrival, 427_061 * SECOND);
    assert_eq!(second.duration(), Some((12_902_960 - 427_061) * SECOND));
    assert_eq!((second.gpu_count, second.gpu_milli), (1, 460));
    assert_eq!(
        (second.cpu_milli, second.memory_bytes),
        (6_000, 12_288 * MIB)
    );
    assert_eq!(second.outcome, Outcome::Censored);
    // openb-pod-0061,11908,47104,1,1000,,BE,Pending,10001278,10001403,
    // Never scheduled: withdrawn 125 s after it arrived.
    let pending = by_id(&records, "openb-pod-0061");
    assert_eq!(
        (pending.arrival, pending.start),
        (10_001_278 * SECOND, None)
    );
    assert_eq!(pending.end, Some(10_001_403 * SECOND));
    assert_eq!(pending.duration(), Some(125 * SECOND));
    assert_eq!(pending.outcome, Outcome::Withdrawn);
    assert_eq!(reader.symbols().name(pending.priority), "BE");
}

/// `gpu_spec` is a `|`-OR list of models (README.upstream.md); gpuspec33 has 2388 of them.
#[test]
fn openb_gpu_model_constraints_are_or_lists() {
    let (records, reader) = read_all(
        "fixtures/openb/openb_pod_list_gpuspec33.csv",
        &TraceColumns::openb(),
    );
    assert_eq!(records.len(), 8152);
    assert_eq!(
        records.iter().filter(|r| !r.gpu_models.is_none()).count(),
        2388
    );
    let symbols = reader.symbols();
    // openb-pod-0009,12000,16384,1,1000,V100M16|V100M32,LS,Running,4975773,12902960,4975773
    let pod = by_id(&records, "openb-pod-0009");
    assert_eq!(
        symbols.models(pod.gpu_models).collect::<Vec<_>>(),
        ["V100M16", "V100M32"]
    );
    assert_eq!(pod.outcome, Outcome::Censored);
    // openb-pod-0021,8000,30517,1,440,G2|P100|T4|V100M16|V100M32,LS,Running,9671707,12902960,9671708
    let pod = by_id(&records, "openb-pod-0021");
    assert_eq!(symbols.models(pod.gpu_models).count(), 5);
    assert_eq!(pod.observed_wait(), Some(SECOND));
}

/// Helios: `YYYY-MM-DD HH:MM:SS` without an offset, tenant = vc, gang = node_num.
#[test]
fn the_helios_preset_reads_its_sample() {
    let (records, reader) = read_all(
        "tests/data/trace/helios_cluster_log.csv",
        &TraceColumns::helios(),
    );
    let ids: Vec<&str> = records.iter().map(|r| &*r.id).collect();
    assert_eq!(ids, ["jobA", "jobB", "jobC", "jobD", "jobE"]);
    let s = reader.symbols();
    // jobA: submitted 00:00:00 (the origin), started 10 s later, ran 3600 s.
    let a = &records[0];
    assert_eq!(
        (a.arrival, a.start, a.duration()),
        (0, Some(10 * SECOND), Some(3600 * SECOND))
    );
    assert_eq!(
        (a.gpu_count, a.gpu_milli, a.cpu_milli, a.nodes),
        (8, 1000, 48_000, 1)
    );
    assert_eq!(s.name(a.queue), "vc6YE");
    // jobB: 16 GPUs over 2 nodes, submitted at 30 s, waited 300 s, ran 30 s.
    let b = &records[1];
    assert_eq!(
        (b.arrival, b.observed_wait(), b.duration()),
        (30 * SECOND, Some(300 * SECOND), Some(30 * SECOND))
    );
    assert_eq!((b.gpu_count, b.nodes), (16, 2));
    // jobC: cancelled before it started, at 00:02:00.
    let c = &records[2];
    assert_eq!(
        (c.outcome, c.start, c.end),
        (Outcome::Withdrawn, None, Some(120 * SECOND))
    );
    // jobE: a day and 23:59:59 after the origin.
    let e = &records[4];
    assert_eq!(e.arrival, (2 * 86_400 - 1) * SECOND);
    assert_eq!(e.duration(), Some(600 * SECOND));
    assert_eq!(reader.counts().withdrawn, 1);
    assert_eq!(reader.counts().finished, 4);
}

/// Acme: ISO times with their own offset (one row in UTC), tenant = user, class = type.
#[test]
fn the_acme_preset_reads_its_sample() {
    let (records, reader) = read_all(
        "tests/data/trace/acme_trace_seren.csv",
        &TraceColumns::acme(),
    );
    let s = reader.symbols();
    let first = &records[0];
    assert_eq!(
        (first.arrival, first.observed_wait(), first.duration()),
        (0, Some(5 * SECOND), Some(7200 * SECOND))
    );
    assert_eq!(
        (first.gpu_count, first.nodes, first.cpu_milli),
        (32, 4, 256_000)
    );
    assert_eq!(
        (s.name(first.queue), s.name(first.class)),
        ("u0", "Pretrain")
    );
    // 2023-06-30T16:00:30Z is 2023-07-01 00:00:30+08:00: 30 s after the origin; never ran.
    let third = &records[2];
    assert_eq!(
        (third.arrival, third.outcome),
        (30 * SECOND, Outcome::Withdrawn)
    );
    assert_eq!(third.end, Some(630 * SECOND));
    assert_eq!(s.name(records[3].class), "SFT");
    assert_eq!(records[3].duration(), Some(1800 * SECOND));
}

/// A planner's own mapping, written in YAML as `spec.trace.columns` will be: PAI 2020's units
/// (CPU and GPU in percent, memory in GB) and its constraint column.
#[test]
fn a_generic_mapping_reads_a_pai_shaped_export() {
    let file = repo("tests/data/trace/pai_like_columns.yaml");
    let columns: TraceColumns = decode_yaml(&file).unwrap();
    let (records, reader) = read_all("tests/data/trace/pai_like.csv", &columns);
    let s = reader.symbols();
    // i1,alice,600,29.296875,50,T4,1000,1002,1100: 6 cores, 30000 MiB, half a T4.
    let i1 = &records[0];
    assert_eq!((i1.cpu_milli, i1.memory_bytes), (6000, 30_000 * MIB));
    assert_eq!(
        (i1.gpu_count, i1.gpu_milli, s.name(i1.gpu_models)),
        (1, 500, "T4")
    );
    assert_eq!(
        (i1.arrival, i1.observed_wait(), i1.duration()),
        (0, Some(2 * SECOND), Some(98 * SECOND))
    );
    // i2: 8 GPUs, arrived at 1000.5 s, never launched, withdrawn at 1200 s.
    let i2 = &records[1];
    assert_eq!((i2.gpu_count, i2.gpu_milli, i2.arrival), (8, 1000, 500));
    assert_eq!(
        (i2.outcome, i2.end),
        (Outcome::Withdrawn, Some(200 * SECOND))
    );
    // i3: 150 % of a GPU is 2 × 750; launched, no finish: still running (censored).
    let i3 = &records[2];
    assert_eq!((i3.gpu_count, i3.gpu_milli, i3.cpu_milli), (2, 750, 1500));
    assert_eq!(
        (i3.outcome, i3.end, i3.duration()),
        (Outcome::Censored, None, None)
    );
    assert_eq!(
        s.models(i3.gpu_models).collect::<Vec<_>>(),
        ["V100", "V100M32"]
    );
    assert_eq!(s.name(i3.queue), "alice");
}

fn decode_yaml(file: &Path) -> Result<TraceColumns, schedsim::error::InputError> {
    let text = std::fs::read_to_string(file).unwrap();
    let docs = schedsim::yaml::parse_documents(text, file)?;
    docs[0].decode(file, "", &docs[0].value)
}

/// The error reading `path` with the openb preset gives, as printed.
fn openb_error(path: &str) -> String {
    let file = repo(path);
    let error = match trace::open(&file, &TraceColumns::openb()) {
        Err(e) => e,
        Ok(reader) => reader.filter_map(Result::err).next().expect("an error"),
    };
    error
        .to_string()
        .replace(&format!("{}/", env!("CARGO_MANIFEST_DIR")), "")
}

#[test]
fn bad_input_names_file_line_column_and_field() {
    assert_eq!(
        openb_error("tests/data/trace/unsorted.csv"),
        "tests/data/trace/unsorted.csv:4:32: creation_time: \"6\" is earlier than the arrival on line 3: rows must be sorted by arrival"
    );
    assert_eq!(
        openb_error("tests/data/trace/not_a_number.csv"),
        "tests/data/trace/not_a_number.csv:3:9: memory_mib: expected a number, found \"lots\""
    );
    assert_eq!(
        openb_error("tests/data/trace/missing_column.csv"),
        "tests/data/trace/missing_column.csv:1:1: start: no column \"scheduled_time\" in the header (it has name, cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec, qos, pod_phase, creation_time, deletion_time)"
    );
    assert_eq!(
        openb_error("tests/data/trace/short_row.csv"),
        "tests/data/trace/short_row.csv:3:1: found 10 fields, but the header has 11"
    );
    assert_eq!(
        openb_error("tests/data/trace/no_such_file.csv"),
        "tests/data/trace/no_such_file.csv: cannot read: no such file or directory"
    );
    let file = repo("tests/data/trace/unknown_field_columns.yaml");
    let error = decode_yaml(&file).unwrap_err().to_string();
    assert!(
        error.ends_with("unknown_field_columns.yaml:3:15: arivalFormat: unknown field `arivalFormat`, expected one of `id`, `arrival`, `start`, `end`, `duration`, `cpu`, `cpuUnit`, `memory`, `memoryUnit`, `gpus`, `gpuUnit`, `gpuMilli`, `gpuModel`, `queue`, `priority`, `class`, `nodes`, `state`, `runningStates`, `timeFormat`, `utcOffset` (did you mean `arrival`?)"),
        "{error}"
    );
}

/// More bad cells, each at its place: negative numbers, an unreadable time, a fraction of a
/// GPU with a per-GPU share, a share above one GPU, an empty id, a contradictory mapping.
#[test]
fn bad_cells_are_refused_where_they_are() {
    let header = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n";
    let error = |row: &str| {
        let text = format!("{header}{row}\n");
        let reader = TraceReader::new(
            Cursor::new(text),
            Path::new("t.csv"),
            &TraceColumns::openb(),
        )
        .unwrap();
        reader.filter_map(Result::err).next().map(|e| e.to_string())
    };
    assert_eq!(
        error("p,-5,1,0,0,,LS,Running,0,1,0").unwrap(),
        "t.csv:2:3: cpu_milli: must not be negative, found \"-5\""
    );
    assert_eq!(
        error("p,1,1,0,0,,LS,Running,soon,1,0").unwrap(),
        "t.csv:2:23: creation_time: expected a number, found \"soon\""
    );
    assert_eq!(
        error("p,1,1,0.5,0,,LS,Running,0,1,0").unwrap(),
        "t.csv:2:7: num_gpu: expected a whole number of GPUs (gpuMilli gives the share of each)"
    );
    assert_eq!(
        error("p,1,1,1,1500,,LS,Running,0,1,0").unwrap(),
        "t.csv:2:9: gpu_milli: 1500 is more than one GPU (1000)"
    );
    assert_eq!(
        error(",1,1,1,500,,LS,Running,0,1,0").unwrap(),
        "t.csv:2:1: name: must not be empty"
    );
    assert_eq!(error("p,1,1,1,500,,LS,Running,0,1,0"), None);
    let mut both = TraceColumns::openb();
    both.duration = Some("d".into());
    let e = TraceReader::new(Cursor::new(header), Path::new("t.csv"), &both)
        .err()
        .unwrap();
    assert_eq!(
        e.to_string(),
        "t.csv: duration: trace columns: set end or duration, not both"
    );
}

/// A start before the arrival and an end before the start are moved, and counted.
#[test]
fn times_that_run_backwards_are_moved_and_counted() {
    let text = "id,t,s,e,n\na,10,5,20,1\nb,10,12,11,0\n";
    let mut columns = TraceColumns::new("id", "t");
    columns.start = Some("s".into());
    columns.end = Some("e".into());
    columns.nodes = Some("n".into());
    let mut reader = TraceReader::new(Cursor::new(text), Path::new("t.csv"), &columns).unwrap();
    let records: Vec<_> = reader.by_ref().map(Result::unwrap).collect();
    assert_eq!(
        (records[0].start, records[0].end),
        (Some(0), Some(10 * SECOND))
    );
    assert_eq!(
        (records[1].start, records[1].end),
        (Some(2 * SECOND), Some(2 * SECOND))
    );
    assert_eq!(records[1].nodes, 1);
    assert_eq!(
        (reader.counts().times_moved, reader.counts().zero_nodes),
        (2, 1)
    );
    assert_eq!(reader.warnings().len(), 2);
}

/// Rows as an openb file writes them, with the given arrivals and phases.
fn openb_text(rows: &[(u64, u64, bool)]) -> String {
    let mut text = String::from(
        "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n",
    );
    for (i, (arrival, run, scheduled)) in rows.iter().enumerate() {
        let (phase, start) = if *scheduled {
            ("Succeeded", arrival.to_string())
        } else {
            ("Pending", String::new())
        };
        text.push_str(&format!(
            "pod-{i},1000,1024,1,{},,LS,{phase},{arrival},{},{start}\n",
            100 + i % 900,
            arrival + run
        ));
    }
    text
}

proptest! {
    /// Records come out one per row, in file order, whatever the arrivals (sorted) and runs.
    #[test]
    fn records_come_out_in_file_order(mut rows in prop::collection::vec((0u64..1_000_000, 0u64..100_000, any::<bool>()), 0..60)) {
        rows.sort_by_key(|r| r.0);
        let reader = TraceReader::new(Cursor::new(openb_text(&rows)), Path::new("t.csv"), &TraceColumns::openb()).unwrap();
        let records: Vec<_> = reader.map(Result::unwrap).collect();
        prop_assert_eq!(records.len(), rows.len());
        let origin = rows.first().map_or(0, |r| r.0);
        for (i, (record, (arrival, run, scheduled))) in records.iter().zip(&rows).enumerate() {
            prop_assert_eq!(&*record.id, format!("pod-{i}"));
            prop_assert_eq!(record.arrival, (arrival - origin) * SECOND);
            prop_assert_eq!(record.duration(), Some(run * SECOND));
            prop_assert_eq!(record.outcome == Outcome::Withdrawn, !scheduled);
            prop_assert_eq!(u64::from(record.gpu_milli), 100 + i as u64 % 900);
        }
    }

    /// A row that arrives before the row above it is refused at its own line and column, and
    /// nothing after it is read.
    #[test]
    fn an_unsorted_row_is_refused_at_its_line(mut rows in prop::collection::vec((1u64..1_000_000, 0u64..10, any::<bool>()), 2..40), at in any::<prop::sample::Index>()) {
        rows.sort_by_key(|r| r.0);
        let bad = 1 + at.index(rows.len() - 1);
        prop_assume!(rows[bad - 1].0 > 0);
        rows[bad].0 = rows[bad - 1].0 - 1;
        let reader = TraceReader::new(Cursor::new(openb_text(&rows)), Path::new("t.csv"), &TraceColumns::openb()).unwrap();
        let results: Vec<_> = reader.collect();
        prop_assert_eq!(results.len(), bad + 1);
        let error = results[bad].as_ref().unwrap_err();
        prop_assert_eq!(error.position.unwrap().line as usize, bad + 2);
        prop_assert_eq!(error.field.as_deref(), Some("creation_time"));
    }
}
