//! Kubernetes resource quantities, parsed strictly into integers once, at load.
//!
//! Grammar and rounding follow `k8s.io/apimachinery/pkg/api/resource/quantity.go`:
//!
//! ```text
//! <quantity>        ::= <signedNumber><suffix>
//! <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
//! <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
//! <decimalSI>       ::= m | "" | k | M | G | T | P | E
//! <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>
//! <number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
//! ```
//!
//! `Value()` and `MilliValue()` round up (towards +∞) to the next integer, so `0.1m` CPU is
//! 1 milli-CPU and `1.5` bytes is 2 bytes — the scheduler compares these integers.

use std::fmt;

/// `ErrFormatWrong` of quantity.go, verbatim.
pub const ERR_FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/// A parsed quantity: `digits × 10^exp10 × 2^exp2`, exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quantity {
    negative: bool,
    digits: u128,
    exp10: i32,
    exp2: u32,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuantityError {
    Format,
    TooLarge,
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            QuantityError::Format => f.write_str(ERR_FORMAT_WRONG),
            // quantity.go's ErrNumeric
            QuantityError::TooLarge => f.write_str("unable to parse numeric part of quantity"),
        }
    }
}

impl std::str::FromStr for Quantity {
    type Err = QuantityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s)
    }
}

fn parse(s: &str) -> Result<Quantity, QuantityError> {
    let bytes = s.as_bytes();
    let mut i = 0;
    let mut negative = false;
    if let Some(&c) = bytes.first()
        && (c == b'+' || c == b'-')
    {
        negative = c == b'-';
        i = 1;
    }
    let mut digits: u128 = 0;
    let mut significant = 0usize;
    let mut frac_len: i32 = 0;
    let mut seen_digit = false;
    let mut seen_dot = false;
    while i < bytes.len() {
        match bytes[i] {
            c @ b'0'..=b'9' => {
                seen_digit = true;
                if digits != 0 || c != b'0' {
                    significant += 1;
                }
                if significant > 36 {
                    return Err(QuantityError::TooLarge);
                }
                digits = digits * 10 + u128::from(c - b'0');
                if seen_dot {
                    frac_len += 1;
                }
            }
            b'.' if !seen_dot => seen_dot = true,
            _ => break,
        }
        i += 1;
    }
    if !seen_digit {
        return Err(QuantityError::Format);
    }
    let (exp10, exp2) = parse_suffix(&s[i..])?;
    Ok(Quantity {
        negative,
        digits,
        exp10: exp10 - frac_len,
        exp2,
    })
}

fn parse_suffix(suffix: &str) -> Result<(i32, u32), QuantityError> {
    Ok(match suffix {
        "" => (0, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        "Ki" => (0, 10),
        "Mi" => (0, 20),
        "Gi" => (0, 30),
        "Ti" => (0, 40),
        "Pi" => (0, 50),
        "Ei" => (0, 60),
        _ => {
            let rest = suffix
                .strip_prefix(['e', 'E'])
                .ok_or(QuantityError::Format)?;
            let digits = rest.strip_prefix(['+', '-']).unwrap_or(rest);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(QuantityError::Format);
            }
            let e: i32 = rest.parse().map_err(|_| QuantityError::TooLarge)?;
            (e, 0)
        }
    })
}

impl Quantity {
    pub fn is_negative(&self) -> bool {
        self.negative && self.digits != 0
    }

    /// `Quantity.Value()`: the value in base units, rounded up.
    pub fn value(&self) -> Result<i64, QuantityError> {
        self.scaled(0)
    }

    /// `Quantity.MilliValue()`: the value in thousandths, rounded up.
    pub fn milli_value(&self) -> Result<i64, QuantityError> {
        self.scaled(3)
    }

    /// `ceil(value × 10^scale)` as an i64.
    fn scaled(&self, scale: i32) -> Result<i64, QuantityError> {
        if self.digits == 0 {
            return Ok(0);
        }
        let mut n: u128 = self.digits;
        for _ in 0..self.exp2 {
            n = n.checked_mul(2).ok_or(QuantityError::TooLarge)?;
        }
        let e = self.exp10 + scale;
        let magnitude = if e >= 0 {
            for _ in 0..e {
                n = n.checked_mul(10).ok_or(QuantityError::TooLarge)?;
            }
            n
        } else {
            let mut divisor: u128 = 1;
            let mut underflow = false;
            for _ in 0..(-e) {
                match divisor.checked_mul(10) {
                    Some(d) => divisor = d,
                    None => {
                        underflow = true;
                        break;
                    }
                }
            }
            if underflow {
                // Smaller than one unit: rounds up to 1 (or towards zero when negative).
                return Ok(if self.negative { 0 } else { 1 });
            }
            let q = n / divisor;
            let r = n % divisor;
            // Round towards +∞: up for positive values, truncate for negative ones.
            if r != 0 && !self.negative { q + 1 } else { q }
        };
        let signed = i128::try_from(magnitude).map_err(|_| QuantityError::TooLarge)?;
        let signed = if self.negative { -signed } else { signed };
        i64::try_from(signed).map_err(|_| QuantityError::TooLarge)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> i64 {
        s.parse::<Quantity>().unwrap().value().unwrap()
    }
    fn m(s: &str) -> i64 {
        s.parse::<Quantity>().unwrap().milli_value().unwrap()
    }

    #[test]
    fn parses_kubernetes_forms() {
        assert_eq!(m("500m"), 500);
        assert_eq!(m("2"), 2000);
        assert_eq!(m("0.1"), 100);
        assert_eq!(m("0.1m"), 1, "sub-milli rounds up");
        assert_eq!(m(".5"), 500);
        assert_eq!(m("1."), 1000);
        assert_eq!(m("95690m"), 95690);
        assert_eq!(v("16Gi"), 17_179_869_184);
        assert_eq!(v("1.5Gi"), 1_610_612_736);
        assert_eq!(v("1843200Mi"), 1_843_200 * 1024 * 1024);
        assert_eq!(v("1e3"), 1000);
        assert_eq!(v("1E3"), 1000);
        assert_eq!(v("1E"), 1_000_000_000_000_000_000);
        assert_eq!(v("12e6"), 12_000_000);
        assert_eq!(v("2k"), 2000);
        assert_eq!(v("1.5"), 2, "Value() rounds up");
        assert_eq!(v("+8"), 8);
        assert_eq!(v("-1"), -1);
        assert_eq!(v("0"), 0);
        assert_eq!(v("1e-3"), 1);
    }

    #[test]
    fn rejects_what_kubernetes_rejects() {
        for bad in [
            "", "abc", "1.5e3m", "1Kb", "1 Gi", "1e", "1e+", "..1", "1.2.3", "m", "1ki", "--1",
            "1Gi5",
        ] {
            assert_eq!(
                bad.parse::<Quantity>(),
                Err(QuantityError::Format),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn overflow_is_an_error_not_a_panic() {
        assert_eq!(
            "9e30".parse::<Quantity>().unwrap().value(),
            Err(QuantityError::TooLarge)
        );
        assert_eq!(
            "16Ei".parse::<Quantity>().unwrap().value(),
            Err(QuantityError::TooLarge)
        );
        assert!("1".repeat(40).parse::<Quantity>().is_err());
    }
}
