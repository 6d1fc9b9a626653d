//! Kueue's Configuration tables as data (`tests/data/kueue/config/`: defaulting, validation
//! and the backoff; each file's header says where its cases come from), and Go's duration
//! syntax. Every mismatch is collected, so one run lists them all.

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::*;

fn cases<T: serde::de::DeserializeOwned>(file: &str, text: &str) -> Vec<T> {
    let docs = crate::yaml::parse_documents(text.to_string(), Path::new(file)).expect("parses");
    serde_json::from_value(docs[0].value.clone()).expect("cases decode")
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DefaultCase {
    name: String,
    config: Value,
    want: Value,
    #[serde(default)]
    ignored: Vec<String>,
}

/// The settings as the tables write them.
fn shown(w: &Option<WaitForPodsReady>) -> Value {
    let Some(w) = w else {
        return Value::from("off");
    };
    let mut m = serde_json::Map::new();
    m.insert("timeout".into(), go_duration_string(w.timeout_ns).into());
    let recovery = w
        .recovery_timeout_ns
        .map_or("off".into(), go_duration_string);
    m.insert("recoveryTimeout".into(), recovery.into());
    m.insert("blockAdmission".into(), w.block_admission.into());
    let timestamp = match w.timestamp {
        RequeuingTimestamp::Eviction => "Eviction",
        RequeuingTimestamp::Creation => "Creation",
    };
    m.insert("timestamp".into(), timestamp.into());
    if let Some(l) = w.backoff_limit_count {
        m.insert("backoffLimitCount".into(), l.into());
    }
    m.insert("backoffBaseSeconds".into(), w.backoff_base_seconds.into());
    m.insert("backoffMaxSeconds".into(), w.backoff_max_seconds.into());
    Value::Object(m)
}

#[test]
fn defaults_as_upstream_tables_say() {
    let text = include_str!("../../tests/data/kueue/config/defaults.yaml");
    let mut failures = Vec::new();
    for c in cases::<DefaultCase>("defaults.yaml", text) {
        match read(&c.config) {
            Ok(r) => {
                if shown(&r.wait_for_pods_ready) != c.want || r.ignored != c.ignored {
                    failures.push(format!(
                        "{}: got {} ignoring {:?}",
                        c.name,
                        shown(&r.wait_for_pods_ready),
                        r.ignored
                    ));
                }
            }
            Err(e) => failures.push(format!("{}: refused: {e:?}", c.name)),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ValidationCase {
    name: String,
    config: Value,
    errors: Vec<String>,
}

#[test]
fn validation_as_upstream_tables_say() {
    let text = include_str!("../../tests/data/kueue/config/validation.yaml");
    let mut failures = Vec::new();
    for c in cases::<ValidationCase>("validation.yaml", text) {
        let got: Vec<String> = match read(&c.config) {
            Ok(_) => Vec::new(),
            Err(errs) => (errs.iter())
                .map(|e| format!("{}: {}", e.path, e.message))
                .collect(),
        };
        if got != c.errors {
            failures.push(format!("{}: got {got:?}", c.name));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BackoffCase {
    name: String,
    initial: i64,
    cap: i64,
    factor: f64,
    iteration: i64,
    want: i64,
}

#[test]
fn backoff_wait_times_as_upstream_tables_say() {
    let text = include_str!("../../tests/data/kueue/config/backoff.yaml");
    let mut failures = Vec::new();
    for c in cases::<BackoffCase>("backoff.yaml", text) {
        let got = wait_time(c.initial, c.cap, c.factor, c.iteration);
        if got != c.want {
            failures.push(format!("{}: got {got}, want {}", c.name, c.want));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The default install's backoff: 60 s, doubling, at most an hour.
#[test]
fn the_installed_default_requeues_after_60_120_240_seconds() {
    let w = WaitForPodsReady::installed_default();
    let seconds: Vec<i64> = (1..=8).map(|n| w.backoff_ns(n) / SECOND_NS).collect();
    assert_eq!(seconds, [60, 120, 240, 480, 960, 1920, 3600, 3600]);
}

/// Go's `time.ParseDuration` and `Duration.String`, case for case (time_test.go's
/// `parseDurationTests` and `durationTests`, the cases schedsim's inputs can meet).
#[test]
fn go_durations_parse_and_print_as_go_does() {
    let parsed = [
        ("0", 0),
        ("5s", 5 * SECOND_NS),
        ("30s", 30 * SECOND_NS),
        ("1478s", 1478 * SECOND_NS),
        ("-5s", -5 * SECOND_NS),
        ("+5s", 5 * SECOND_NS),
        ("-0", 0),
        ("+0", 0),
        ("5.0s", 5 * SECOND_NS),
        ("5.6s", 5 * SECOND_NS + 600_000_000),
        ("5.s", 5 * SECOND_NS),
        (".5s", 500_000_000),
        ("1.0s", SECOND_NS),
        ("1.00s", SECOND_NS),
        ("1.004s", SECOND_NS + 4_000_000),
        ("100.00100s", 100 * SECOND_NS + 1_000_000),
        ("10ns", 10),
        ("11us", 11_000),
        ("12\u{b5}s", 12_000),
        ("12\u{3bc}s", 12_000),
        ("13ms", 13_000_000),
        ("14s", 14 * SECOND_NS),
        ("15m", 15 * 60 * SECOND_NS),
        ("16h", 16 * 3600 * SECOND_NS),
        ("3h30m", (3 * 3600 + 30 * 60) * SECOND_NS),
        ("10.5s4m", (4 * 60 + 10) * SECOND_NS + 500_000_000),
        (
            "-2m3.4s",
            -(2 * 60 * SECOND_NS + 3 * SECOND_NS + 400_000_000),
        ),
        ("1h2m3s4ms5us6ns", 3_723_004_005_006),
        ("39h9m14.425s", 140_954_425_000_000),
        ("52763797000ns", 52_763_797_000),
        ("0.3333333333333333333h", 20 * 60 * SECOND_NS),
        ("9007199254740993ns", (1 << 53) + 1),
        ("9223372036854775807ns", i64::MAX),
        ("9223372036854775.807us", i64::MAX),
        ("-9223372036854775808ns", i64::MIN),
        ("0.100000000000000000000h", 6 * 60 * SECOND_NS),
        (
            "0.830103483285477580700h",
            49 * 60 * SECOND_NS + 48_372_539_827,
        ),
    ];
    for (text, want) in parsed {
        assert_eq!(parse_go_duration(text), Ok(want), "{text}");
    }
    let refused = [
        ("", "time: invalid duration \"\""),
        ("3", "time: missing unit in duration \"3\""),
        ("-", "time: invalid duration \"-\""),
        ("s", "time: invalid duration \"s\""),
        (".", "time: invalid duration \".\""),
        ("-.", "time: invalid duration \"-.\""),
        (".s", "time: invalid duration \".s\""),
        ("+.s", "time: invalid duration \"+.s\""),
        ("1d", "time: unknown unit \"d\" in duration \"1d\""),
        (
            "9223372036854775808ns",
            "time: invalid duration \"9223372036854775808ns\"",
        ),
        (
            "-9223372036854775809ns",
            "time: invalid duration \"-9223372036854775809ns\"",
        ),
    ];
    for (text, want) in refused {
        assert_eq!(parse_go_duration(text), Err(want.to_string()), "{text:?}");
    }
    let printed = [
        ("0s", 0),
        ("1ns", 1),
        ("1.1\u{b5}s", 1100),
        ("2.2ms", 2_200_000),
        ("3.3s", 3_300_000_000),
        ("4m5s", 245 * SECOND_NS),
        ("4m5.001s", 245_001_000_000),
        ("5h6m7.001s", 18_367_001_000_000),
        ("8m0.000000001s", 8 * 60 * SECOND_NS + 1),
        ("2562047h47m16.854775807s", i64::MAX),
        ("-2562047h47m16.854775808s", i64::MIN),
        ("-1ns", -1),
        ("30m0s", 30 * 60 * SECOND_NS),
    ];
    for (want, ns) in printed {
        assert_eq!(go_duration_string(ns), want, "{ns}");
    }
}
