//! Times as a replay's input writes them: durations (`90m`, `1h30m`, `2.5h`, `500ms`, `30d`)
//! and points in time (a duration after the start, or an RFC 3339 time after `spec.clock`).
//! Everything is milliseconds after the replay's start.

use super::time::TimeFormat;

/// A duration as Go's `time.ParseDuration` reads it (what `metav1.Duration` fields take:
/// units `ns`, `us`/`µs`, `ms`, `s`, `m`, `h`, decimals, several terms, no sign), plus `d` for
/// 24 hours, in milliseconds. Sub-millisecond remainders round up: a duration is never read
/// as shorter than written.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let bad = |why: &str| {
        format!("invalid duration {text:?}: {why} (write e.g. 90m, 1h30m, 2.5h, 500ms, 30d)")
    };
    let s = text.trim();
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(bad("empty"));
    }
    // Nanoseconds, exact, so that `1.5h` and `0.1s` add up without rounding twice.
    let mut total_ns: u128 = 0;
    let mut rest = s;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(|| bad("missing unit"))?;
        let (number, tail) = rest.split_at(number_end);
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return Err(bad("expected a number"));
        }
        let unit_end = tail
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(tail.len());
        let (unit, next) = tail.split_at(unit_end);
        let unit_ns: u128 = match unit {
            "d" => 86_400_000_000_000,
            "" => return Err(bad("missing unit")),
            other => match go_unit_ns(other) {
                Some(ns) => u128::from(ns),
                None => return Err(bad(&format!("unknown unit {other:?}"))),
            },
        };
        let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
        let parse = |digits: &str| -> Result<u128, String> {
            match digits {
                "" => Ok(0),
                d if d.len() > 24 => Err(bad("number too large")),
                d => d.parse::<u128>().map_err(|_| bad("expected a number")),
            }
        };
        let mut ns = parse(whole)?
            .checked_mul(unit_ns)
            .ok_or_else(|| bad("too large"))?;
        if !fraction.is_empty() {
            let digits = &fraction[..fraction.len().min(24)];
            let scale = 10u128.pow(digits.len() as u32);
            ns += (parse(digits)? * unit_ns).div_ceil(scale);
        }
        total_ns = total_ns.checked_add(ns).ok_or_else(|| bad("too large"))?;
        rest = next;
    }
    u64::try_from(total_ns.div_ceil(1_000_000)).map_err(|_| bad("too large"))
}

/// A unit of Go's `time.ParseDuration` (its `unitMap`), in ns.
pub fn go_unit_ns(unit: &str) -> Option<u64> {
    Some(match unit {
        "ns" => 1,
        "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return None,
    })
}

/// A point in time after the start, `origin_ms` being the start in ms since the Unix epoch
/// (`spec.clock`): a duration (`90m`) or an RFC 3339 time not before the start.
pub fn parse_at(text: &str, origin_ms: i64) -> Result<u64, String> {
    if text.len() >= 19 && text.as_bytes()[4] == b'-' {
        let at = TimeFormat::DateTime.millis(text, 0)?;
        return u64::try_from(at - origin_ms).map_err(|_| {
            format!("{text:?} is before the replay's start (spec.clock); write a later time or a duration such as 90m")
        });
    }
    parse_duration(text)
}

/// `spec.clock` (RFC 3339) in ms since the Unix epoch.
pub fn clock_origin(clock: &str) -> Result<i64, String> {
    TimeFormat::DateTime.millis(clock, 0)
}

/// A duration for people: `0s`, `950ms`, `42s`, `3m20s`, `2h5m`, `3d4h`. Exact up to the
/// two largest units it shows.
pub fn format_duration(ms: u64) -> String {
    const UNITS: [(u64, &str); 4] = [
        (86_400_000, "d"),
        (3_600_000, "h"),
        (60_000, "m"),
        (1000, "s"),
    ];
    if ms < 1000 {
        return match ms {
            0 => "0s".into(),
            _ => format!("{ms}ms"),
        };
    }
    let mut out = String::new();
    let mut rest = ms;
    let mut shown = 0;
    for (unit, name) in UNITS {
        if rest >= unit && shown < 2 {
            out.push_str(&format!("{}{name}", rest / unit));
            rest %= unit;
            shown += 1;
        } else if shown > 0 {
            shown = 2;
        }
    }
    if shown == 1 && rest > 0 && ms < 60_000 {
        // `42.5s`: seconds keep their milliseconds.
        let seconds = format!("{}.{:03}", ms / 1000, ms % 1000);
        out = format!("{}s", seconds.trim_end_matches('0'));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_durations_and_days() {
        let ok = [
            ("0", 0),
            ("0s", 0),
            ("90m", 5_400_000),
            ("1h30m", 5_400_000),
            ("2.5h", 9_000_000),
            ("500ms", 500),
            ("1.5s", 1500),
            ("30d", 2_592_000_000),
            ("1us", 1),
            ("1ns", 1),
            (".5s", 500),
            ("1h2m3s4ms", 3_723_004),
        ];
        for (text, ms) in ok {
            assert_eq!(parse_duration(text), Ok(ms), "{text}");
        }
        for bad in [
            "",
            "10",
            "-5m",
            "5 m",
            "1x",
            "m",
            "1..5s",
            "99999999999999999999999d",
        ] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn times_after_the_clock() {
        let origin = clock_origin("2026-01-01T00:00:00Z").unwrap();
        assert_eq!(parse_at("2026-01-01T01:00:00Z", origin), Ok(3_600_000));
        assert_eq!(parse_at("90m", origin), Ok(5_400_000));
        assert!(parse_at("2025-12-31T23:00:00Z", origin).is_err());
    }

    #[test]
    fn durations_for_people() {
        for (ms, text) in [
            (0, "0s"),
            (950, "950ms"),
            (42_000, "42s"),
            (42_500, "42.5s"),
            (200_000, "3m20s"),
            (7_500_000, "2h5m"),
            (273_600_000, "3d4h"),
            (3_600_000, "1h"),
            (3_601_000, "1h"),
        ] {
            assert_eq!(format_duration(ms), text, "{ms}");
        }
    }
}
