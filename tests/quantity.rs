//! apimachinery's quantity tests as data (`tests/data/quantity/`, transcribed from
//! `k8s.io/apimachinery/pkg/api/resource/quantity_test.go`): parsing, canonical strings, and
//! the values around int64.

use num_bigint::BigInt;
use schedsim::model::quantity::{Format, Quantity};
use serde::Deserialize;

fn data<T: serde::de::DeserializeOwned>(name: &str) -> T {
    let path = format!("{}/tests/data/quantity/{name}", env!("CARGO_MANIFEST_DIR"));
    serde_saphyr::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn format(name: &str) -> Format {
    match name {
        "DecimalSI" => Format::DecimalSI,
        "BinarySI" => Format::BinarySI,
        "DecimalExponent" => Format::DecimalExponent,
        other => panic!("unknown format {other}"),
    }
}

fn decimal(value: &BigInt, exponent: i32, f: Format) -> Quantity {
    Quantity::from_decimal(value.clone(), exponent, f)
}

#[derive(Deserialize)]
struct ParseTable {
    valid: Vec<ParseRow>,
    invalid: Vec<String>,
}

#[derive(Deserialize)]
struct ParseRow {
    input: String,
    value: i64,
    exponent: i32,
    format: String,
}

#[test]
fn test_quantity_parse() {
    let table: ParseTable = data("parse.yaml");
    assert_eq!(table.valid.len(), 96);
    let mut failures = Vec::new();
    for row in &table.valid {
        let f = format(&row.format);
        let value = BigInt::from(row.value);
        let expect = decimal(&value, row.exponent, f);
        let negated = decimal(&-value.clone(), row.exponent, f);
        for (input, want) in [
            (row.input.clone(), &expect),
            (format!("-{}", row.input), &negated),
            (format!("+{}", row.input), &expect),
        ] {
            match input.parse::<Quantity>() {
                Ok(got) if got.cmp_value(want).is_eq() && got.format == want.format => {}
                Ok(got) => failures.push(format!(
                    "{input}: got {got} ({:?}), want {want} ({:?})",
                    got.format, want.format
                )),
                Err(e) => failures.push(format!("{input}: {e}")),
            }
        }
    }
    for input in &table.invalid {
        if input.parse::<Quantity>().is_ok() {
            failures.push(format!("{input:?} parsed"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[derive(Deserialize)]
struct StringTable {
    cases: Vec<StringRow>,
}

#[derive(Deserialize)]
struct StringRow {
    value: i64,
    exponent: i32,
    format: String,
    expect: String,
    alternate: String,
}

#[test]
fn test_quantity_string() {
    let table: StringTable = data("string.yaml");
    assert_eq!(table.cases.len(), 42);
    let mut failures = Vec::new();
    for row in &table.cases {
        let f = format(&row.format);
        let q = decimal(&BigInt::from(row.value), row.exponent, f);
        if q.canonical() != row.expect {
            failures.push(format!(
                "{}e{}: {} != {}",
                row.value, row.exponent, q, row.expect
            ));
        }
        let parsed: Quantity = row.expect.parse().unwrap();
        if parsed.canonical() != row.expect {
            failures.push(format!("{} reprints as {parsed}", row.expect));
        }
        if !row.alternate.is_empty() {
            let alt: Quantity = row.alternate.parse().unwrap();
            if alt.canonical() != row.expect {
                failures.push(format!(
                    "{} prints {alt}, want {}",
                    row.alternate, row.expect
                ));
            }
        }
        if row.value != 0 {
            let neg = decimal(&-BigInt::from(row.value), row.exponent, f);
            if neg.canonical() != format!("-{}", row.expect) {
                failures.push(format!("-{}e{}: {neg}", row.value, row.exponent));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[derive(Deserialize)]
struct EdgeTable {
    cases: Vec<EdgeRow>,
}

#[derive(Deserialize)]
struct EdgeRow {
    input: String,
    int64: Option<i64>,
    dec: String,
    canonical: String,
}

#[test]
fn test_parse_quantity_around_int64() {
    let table: EdgeTable = data("parse-int64-edges.yaml");
    assert_eq!(table.cases.len(), 72);
    let mut failures = Vec::new();
    for row in &table.cases {
        let q: Quantity = match row.input.parse() {
            Ok(q) => q,
            Err(e) => {
                failures.push(format!("{}: {e}", row.input));
                continue;
            }
        };
        if q.as_int64() != row.int64 {
            failures.push(format!(
                "{}: AsInt64 {:?}, want {:?}",
                row.input,
                q.as_int64(),
                row.int64
            ));
        }
        let (int, frac) = row.dec.split_once('.').unwrap_or((&row.dec, ""));
        let mantissa: BigInt = format!("{int}{frac}").parse().unwrap();
        let want = decimal(&mantissa, -(frac.len() as i32), Format::DecimalSI);
        if !q.cmp_value(&want).is_eq() {
            failures.push(format!("{}: value {q}, want {}", row.input, row.dec));
        }
        if q.canonical() != row.canonical {
            failures.push(format!("{}: prints {q}, want {}", row.input, row.canonical));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `TestQuantityParseZero` and the suffixes upstream's table leaves out of its loops.
#[test]
fn zero_and_errors_read_as_upstream() {
    assert_eq!("0".parse::<Quantity>().unwrap().canonical(), "0");
    for (input, message) in [
        (
            "Non-Numeric",
            "quantities must match the regular expression",
        ),
        ("1e", "unable to parse quantity's suffix"),
        ("1Qi", "quantities must match the regular expression"),
    ] {
        let e = input.parse::<Quantity>().unwrap_err().to_string();
        assert!(e.starts_with(message), "{input}: {e}");
    }
}
