//! Times as traces write them: offsets in seconds or milliseconds (openb: "Timestamp of
//! creation … (in seconds)", README.upstream.md), or calendar times — Helios'
//! `YYYY-MM-DD HH:MM:SS`, Acme's ISO times with an offset (`+08:00`), RFC 3339 — read with
//! the UTC offset the mapping states when the text carries none. The reader turns every time
//! into milliseconds after the trace's first arrival, so only differences matter.

use serde::{Deserialize, Serialize};

/// How the time columns are written.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "camelCase")]
pub enum TimeFormat {
    /// A number of seconds (decimals allowed) from any fixed origin: openb, PAI 2020.
    #[default]
    Seconds,
    /// A number of milliseconds from any fixed origin.
    Milliseconds,
    /// `YYYY-MM-DD HH:MM:SS` or RFC 3339 (`T` or a space between date and time, optional
    /// fraction, optional `Z` or `±HH:MM`); without an offset the mapping's `utcOffset` applies.
    DateTime,
}

impl TimeFormat {
    /// `text` in milliseconds since an origin (the Unix epoch for calendar times).
    /// `utc_offset_ms` is east of UTC (`+08:00` = 8 h), for calendar times without their own.
    pub fn millis(self, text: &str, utc_offset_ms: i64) -> Result<i64, String> {
        let number = |scale| {
            let ms = super::units::decimal(text, scale)?;
            i64::try_from(ms).map_err(|_| format!("{text:?} is too large"))
        };
        match self {
            TimeFormat::Seconds => number(1000),
            TimeFormat::Milliseconds => number(1),
            TimeFormat::DateTime => date_time(text.trim(), utc_offset_ms),
        }
    }
}

/// A UTC offset as written in a mapping or a timestamp: `Z`, `+08:00`, `-0700`, `+08`.
pub fn parse_offset(text: &str) -> Result<i64, String> {
    let bad = || format!("expected a UTC offset such as +08:00 or Z, found {text:?}");
    if text == "Z" || text == "z" {
        return Ok(0);
    }
    let (sign, rest) = match text.as_bytes().first() {
        Some(b'+') => (1, &text[1..]),
        Some(b'-') => (-1, &text[1..]),
        _ => return Err(bad()),
    };
    let (hours, minutes) = match rest.len() {
        2 => (rest, "00"),
        4 => rest.split_at(2),
        5 if rest.as_bytes()[2] == b':' => (&rest[..2], &rest[3..]),
        _ => return Err(bad()),
    };
    let hours = digits(hours).filter(|h| *h <= 23).ok_or_else(bad)?;
    let minutes = digits(minutes).filter(|m| *m <= 59).ok_or_else(bad)?;
    Ok(sign * (hours * 60 + minutes) * 60_000)
}

/// All-digit `text` as a number.
fn digits(text: &str) -> Option<i64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) || text.len() > 12 {
        return None;
    }
    text.parse().ok()
}

/// A calendar time in ms since the Unix epoch.
fn date_time(text: &str, utc_offset_ms: i64) -> Result<i64, String> {
    let bad = || {
        format!(
            "expected a time such as 2020-04-01 08:00:00 or 2020-04-01T08:00:00+08:00, found {text:?}"
        )
    };
    let b = text.as_bytes();
    if b.len() < 19 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b' ' | b'T' | b't') {
        return Err(bad());
    }
    if b[13] != b':' || b[16] != b':' {
        return Err(bad());
    }
    let field = |from: usize, to: usize| text.get(from..to).and_then(digits).ok_or_else(bad);
    let (year, month, day) = (field(0, 4)?, field(5, 7)?, field(8, 10)?);
    let (hour, minute, second) = (field(11, 13)?, field(14, 16)?, field(17, 19)?);
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return Err(bad());
    }
    if hour > 23 || minute > 59 || second > 60 {
        return Err(bad());
    }
    let mut rest = &text[19..];
    let mut millis = 0;
    if let Some(fraction) = rest.strip_prefix('.') {
        let end = fraction
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(fraction.len());
        if end == 0 {
            return Err(bad());
        }
        // Milliseconds, rounded up as every unit is: a time is never read as earlier.
        millis = i64::try_from(super::units::decimal(
            &format!("0.{}", &fraction[..end]),
            1000,
        )?)
        .map_err(|_| bad())?;
        rest = &fraction[end..];
    }
    let offset = if rest.is_empty() {
        utc_offset_ms
    } else {
        parse_offset(rest).map_err(|_| bad())?
    };
    let days = days_from_civil(year, month, day);
    Ok(((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis - offset)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: i64 = 3_600_000;

    #[test]
    fn calendar_times_read_as_epoch_milliseconds() {
        let dt = |t, off| TimeFormat::DateTime.millis(t, off);
        assert_eq!(dt("1970-01-01 00:00:00", 0), Ok(0));
        assert_eq!(dt("2000-03-01T00:00:00Z", 0), Ok(951_868_800_000));
        // Helios writes no offset: the mapping's applies.
        assert_eq!(dt("2020-04-01 08:00:00", 8 * HOUR), Ok(1_585_699_200_000));
        // Acme writes its own, which wins over the mapping's.
        assert_eq!(dt("2020-04-01 08:00:00+08:00", 0), Ok(1_585_699_200_000));
        assert_eq!(
            dt("2020-04-01T00:00:00.25Z", 5 * HOUR),
            Ok(1_585_699_200_250)
        );
        assert_eq!(dt("2020-02-29 00:00:00", 0).map(|_| ()), Ok(()));
        for bad in [
            "2021-02-29 00:00:00",
            "2020-13-01 00:00:00",
            "2020-04-01",
            "2020-04-01 24:00:00",
            "2020-04-01 08:00:00 UTC",
            "2020/04/01 08:00:00",
            "2020-04-01 08:00:00.",
        ] {
            assert!(dt(bad, 0).is_err(), "{bad}");
        }
    }

    #[test]
    fn offsets_and_numbers() {
        assert_eq!(parse_offset("+08:00"), Ok(8 * HOUR));
        assert_eq!(parse_offset("-0730"), Ok(-(7 * HOUR + HOUR / 2)));
        assert_eq!(parse_offset("+08"), Ok(8 * HOUR));
        assert_eq!(parse_offset("Z"), Ok(0));
        assert!(parse_offset("8").is_err());
        assert!(parse_offset("+25:00").is_err());
        assert_eq!(
            TimeFormat::Seconds.millis("12902960", 0),
            Ok(12_902_960_000)
        );
        assert_eq!(TimeFormat::Seconds.millis("1.5", 0), Ok(1500));
        assert_eq!(TimeFormat::Milliseconds.millis("42", 0), Ok(42));
        assert!(TimeFormat::Seconds.millis("soon", 0).is_err());
    }
}
