//! Kubernetes resource quantities, as `k8s.io/apimachinery/pkg/api/resource` has them: parsed
//! once at load into the same representation (an int64 mantissa and decimal scale when it fits,
//! an arbitrary-precision decimal otherwise), so `Value()`, `MilliValue()` and the canonical
//! `String()` give exactly what the API server and kube-scheduler see — including what they
//! give for values past int64, which the API server accepts.
//!
//! Grammar (`quantity.go`):
//!
//! ```text
//! <quantity>        ::= <signedNumber><suffix>
//! <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
//! <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
//! <decimalSI>       ::= n | u | m | "" | k | M | G | T | P | E
//! <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>
//! <number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
//! ```
//!
//! What happens past int64 (all from `quantity.go` `ParseQuantity`, `amount.go`, `math.go`,
//! `scale_int.go`): a value needing more than 18 digits, or finer than nanos, is kept as a
//! decimal rounded up to nanos; a BinarySI value over 2^63-1 is capped there (`9Ei` is
//! 9223372036854775807); DecimalSI and exponent values are not capped. `Value()` and
//! `MilliValue()` of a value that does not fit wrap around as Go's int64 arithmetic does
//! (`cpu: 1Ei` has the milli-value -9223372036854775808), except that an int64 mantissa scaled
//! up by other than 10, 100, 1000, 10^6 or 10^9 gives 0 on overflow (`1e19` has `Value()` 0).
//! Rounding is always away from zero (ceiling for positive values): `0.1m` CPU is 1 milli-CPU.

use std::fmt;

use num_bigint::{BigInt, Sign};
use num_integer::Integer;
use num_traits::{One, Signed, Zero};

/// `ErrFormatWrong` of quantity.go, verbatim.
pub const ERR_FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/// How a quantity prints (`Format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    DecimalExponent,
    BinarySI,
    DecimalSI,
}

/// `int64Amount` (`value × 10^scale`) or `infDecAmount` (`unscaled × 10^-scale`, inf.Dec's
/// convention).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Amount {
    Int { value: i64, scale: i32 },
    Dec { unscaled: BigInt, scale: i32 },
}

/// A parsed quantity: its amount, its format, and the text it was parsed from when that text
/// is already canonical (`Quantity.s`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Quantity {
    amount: Amount,
    pub format: Format,
    canonical: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QuantityError {
    /// `ErrFormatWrong`.
    Format,
    /// `ErrNumeric`.
    Numeric,
    /// `ErrSuffix`.
    Suffix,
}

impl fmt::Display for QuantityError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            QuantityError::Format => ERR_FORMAT_WRONG,
            QuantityError::Numeric => "unable to parse numeric part of quantity",
            QuantityError::Suffix => "unable to parse quantity's suffix",
        })
    }
}

impl std::str::FromStr for Quantity {
    type Err = QuantityError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        parse(s)
    }
}

/// `maxInt64Factors`: decimal digits an int64 mantissa always holds.
const MAX_INT64_FACTORS: i32 = 18;
/// `Nano`: the finest scale kept.
const NANO: i32 = -9;

/// The parts of a quantity string (`parseQuantityString`): sign, the numeric text inf.Dec
/// reads, numerator and denominator digits (leading zeros of the numerator stripped), suffix.
struct Parts<'a> {
    positive: bool,
    value: &'a str,
    num: &'a str,
    denom: &'a str,
    suffix: &'a str,
}

fn split(s: &str) -> Result<Parts<'_>, QuantityError> {
    let b = s.as_bytes();
    let end = b.len();
    let mut pos = 0;
    let mut positive = true;
    if let Some(&c) = b.first() {
        if c == b'-' {
            positive = false;
            pos = 1;
        } else if c == b'+' {
            pos = 1;
        }
    }
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        return Ok(Parts {
            positive,
            value: "0",
            num: "0",
            denom: "",
            suffix: "",
        });
    }
    let num_start = pos;
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    let num = if pos == num_start {
        "0"
    } else {
        &s[num_start..pos]
    };
    if pos >= end {
        return Ok(Parts {
            positive,
            value: s,
            num,
            denom: "",
            suffix: "",
        });
    }
    let mut denom = "";
    if b[pos] == b'.' {
        pos += 1;
        let start = pos;
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
        }
        denom = &s[start..pos];
        if pos >= end {
            return Ok(Parts {
                positive,
                value: s,
                num,
                denom,
                suffix: "",
            });
        }
    }
    let value = &s[..pos];
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < end && (b[pos] == b'-' || b[pos] == b'+') {
        pos += 1;
    }
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos < end {
        return Err(QuantityError::Format);
    }
    Ok(Parts {
        positive,
        value,
        num,
        denom,
        suffix: &s[suffix_start..],
    })
}

/// `suffixHandler.interpret`: (base, exponent, format) of a suffix.
fn interpret(suffix: &str) -> Option<(u32, i32, Format)> {
    let decimal = match suffix {
        "n" => Some(-9),
        "u" => Some(-6),
        "m" => Some(-3),
        "" => Some(0),
        "k" => Some(3),
        "M" => Some(6),
        "G" => Some(9),
        "T" => Some(12),
        "P" => Some(15),
        "E" => Some(18),
        _ => None,
    };
    if let Some(e) = decimal {
        return Some((10, e, Format::DecimalSI));
    }
    let binary = match suffix {
        "Ki" => Some(10),
        "Mi" => Some(20),
        "Gi" => Some(30),
        "Ti" => Some(40),
        "Pi" => Some(50),
        "Ei" => Some(60),
        _ => None,
    };
    if let Some(e) = binary {
        return Some((2, e, Format::BinarySI));
    }
    let rest = suffix.strip_prefix(['e', 'E'])?;
    // strconv.ParseInt(…, 10, 64) then int32(…): a wider exponent wraps.
    let parsed: i64 = parse_go_int(rest)?;
    Some((10, parsed as i32, Format::DecimalExponent))
}

/// `strconv.ParseInt(s, 10, 64)`: optional sign, ASCII digits, in range.
fn parse_go_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `ParseQuantity`.
fn parse(s: &str) -> Result<Quantity, QuantityError> {
    if s.is_empty() {
        return Err(QuantityError::Format);
    }
    if s == "0" {
        return Ok(Quantity {
            amount: Amount::Int { value: 0, scale: 0 },
            format: Format::DecimalSI,
            canonical: Some(s.into()),
        });
    }
    let p = split(s)?;
    let (base, exponent, mut format) = interpret(p.suffix).ok_or(QuantityError::Suffix)?;
    let digits = (p.num.len() + p.denom.len()) as i64;
    let (mut scale, mantissa, precision) = match format {
        Format::DecimalExponent | Format::DecimalSI => (
            i64::from(exponent),
            1i64,
            i64::from(MAX_INT64_FACTORS) - digits,
        ),
        Format::BinarySI if p.denom.is_empty() => {
            let precision = 15 - p.num.len() as i64 - i64::from(exponent) * 3 / 10 - 1;
            (0, 1i64 << exponent, precision)
        }
        Format::BinarySI => (0, 1, -1),
    };
    if precision >= 0 {
        scale -= p.denom.len() as i64;
        if scale >= i64::from(NANO) {
            let scale = i32::try_from(scale).map_err(|_| QuantityError::Numeric)?;
            // `strconv.ParseInt(num + denom)`, without building the string.
            let shifted = p.num.bytes().chain(p.denom.bytes());
            let value = shifted.clone().try_fold(0i64, |v, d| {
                v.checked_mul(10)?.checked_add(i64::from(d - b'0'))
            });
            let value = value.ok_or(QuantityError::Numeric)?;
            if let Some(result) = go_int64_multiply(value, mantissa) {
                let result = if p.positive { result } else { -result };
                // The string as written is kept when it is already canonical.
                let canonical = match format {
                    Format::BinarySI => exponent % 10 == 0 && value & 0x07 != 0,
                    _ => {
                        let trailing_zeros = shifted.rev().take(3).filter(|&d| d == b'0').count();
                        scale % 3 == 0 && trailing_zeros < 3 && !p.num.starts_with('0')
                    }
                };
                return Ok(Quantity {
                    amount: Amount::Int {
                        value: result,
                        scale,
                    },
                    format,
                    canonical: canonical.then(|| s.to_string()),
                });
            }
        }
    }
    let (mut unscaled, frac_digits) = parse_dec(p.value).ok_or(QuantityError::Numeric)?;
    let mut dec_scale = i64::from(frac_digits);
    if base == 10 {
        dec_scale -= i64::from(exponent);
    } else {
        unscaled <<= exponent as usize;
    }
    let negative = unscaled.is_negative();
    let mut magnitude = unscaled.abs();
    if !magnitude.is_zero() {
        (magnitude, dec_scale) = round_up(&magnitude, dec_scale, -i64::from(NANO))?;
    }
    let mut dec_scale = dec_scale as i32;
    if format == Format::BinarySI && cmp_dec(&magnitude, dec_scale, &max_int64(), 0).is_gt() {
        (magnitude, dec_scale) = (max_int64(), 0);
    }
    if format == Format::BinarySI
        && !magnitude.is_zero()
        && cmp_dec(&magnitude, dec_scale, &BigInt::one(), 0).is_lt()
    {
        format = Format::DecimalSI;
    }
    Ok(Quantity {
        amount: Amount::Dec {
            unscaled: if negative { -magnitude } else { magnitude },
            scale: dec_scale,
        },
        format,
        canonical: None,
    })
}

/// `inf.Dec.SetString` of the numeric text: optional sign, digits, optional `.digits`.
fn parse_dec(text: &str) -> Option<(BigInt, i32)> {
    let (negative, body) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (int, frac) = body.split_once('.').unwrap_or((body, ""));
    if int.is_empty() && frac.is_empty()
        || !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let digits = format!("{int}{frac}");
    let mut n: BigInt = if digits.is_empty() {
        BigInt::zero()
    } else {
        digits.parse().ok()?
    };
    if negative {
        n = -n;
    }
    Some((n, frac.len() as i32))
}

/// `int64Multiply`: the product, or `None` when it overflows.
fn go_int64_multiply(a: i64, b: i64) -> Option<i64> {
    if a == 0 || b == 0 || a == 1 || b == 1 {
        return Some(a.wrapping_mul(b));
    }
    if a == i64::MIN || b == i64::MIN {
        return None;
    }
    a.checked_mul(b)
}

fn max_int64() -> BigInt {
    BigInt::from(i64::MAX)
}

fn pow10(n: u32) -> BigInt {
    num_traits::pow(BigInt::from(10), n as usize)
}

/// The most decimal digits schedsim shifts a quantity by. Upstream's arbitrary-precision
/// arithmetic would compute `12345678901234567890e2000000000` for minutes (a request the API
/// server never finishes decoding); schedsim calls it `ErrNumeric`.
const MAX_SHIFT_DIGITS: i64 = 1000;

/// `inf.Dec.Round(x, scale, inf.RoundUp)` for a positive `x`: the result has exactly `to`
/// digits after the point, rounded away from zero.
fn round_up(unscaled: &BigInt, from: i64, to: i64) -> Result<(BigInt, i64), QuantityError> {
    if from <= to {
        if to - from > MAX_SHIFT_DIGITS {
            return Err(QuantityError::Numeric);
        }
        return Ok((unscaled * pow10((to - from) as u32), to));
    }
    let shift = from - to;
    if shift > unscaled.to_string().len() as i64 {
        // Below one unit of `to`: rounds up to exactly one.
        return Ok((BigInt::one(), to));
    }
    let (q, r) = unscaled.div_rem(&pow10(shift as u32));
    Ok((if r.is_zero() { q } else { q + 1 }, to))
}

/// Compares `a × 10^-sa` with `b × 10^-sb`.
fn cmp_dec(a: &BigInt, sa: i32, b: &BigInt, sb: i32) -> std::cmp::Ordering {
    let s = sa.max(sb);
    let a = a * pow10((s - sa) as u32);
    let b = b * pow10((s - sb) as u32);
    a.cmp(&b)
}

/// `big.Int.Int64()`: the low 64 bits of the magnitude, negated when negative.
fn go_big_int64(x: &BigInt) -> i64 {
    let low = x.magnitude().iter_u64_digits().next().unwrap_or(0) as i64;
    if x.sign() == Sign::Minus {
        low.wrapping_neg()
    } else {
        low
    }
}

/// `positiveScaleInt64`: `base × 10^scale`; on overflow, the wrapped product for the scales
/// with a dedicated multiplier and 0 for the others (`math.go`).
fn positive_scale(base: i64, scale: i64) -> (i64, bool) {
    let dedicated = |factor: i64| -> (i64, bool) {
        if base == 0 || base == 1 {
            return (base * factor, true);
        }
        if base == i64::MIN {
            return (0, false);
        }
        let c = base.wrapping_mul(factor);
        (c, c / factor == base)
    };
    match scale {
        0 => (base, true),
        1 => dedicated(10),
        2 => dedicated(100),
        3 => dedicated(1000),
        6 => dedicated(1_000_000),
        9 => dedicated(1_000_000_000),
        // Zero stays zero however far it is scaled (upstream loops to the same answer).
        _ if base == 0 => (0, true),
        _ => {
            let mut value = base;
            for _ in 0..scale {
                if value == 0 || value == 1 {
                    value *= 10;
                    continue;
                }
                if value == i64::MIN {
                    return (0, false);
                }
                let c = value.wrapping_mul(10);
                if c / 10 != value {
                    return (0, false);
                }
                value = c;
            }
            (value, true)
        }
    }
}

/// `negativeScaleInt64`: `base / 10^scale` rounded away from zero; whether it was exact.
fn negative_scale(base: i64, scale: i64) -> (i64, bool) {
    if scale == 0 {
        return (base, true);
    }
    let mut value = base;
    let mut fraction = false;
    for _ in 0..scale {
        if !fraction && value % 10 != 0 {
            fraction = true;
        }
        value /= 10;
        if value == 0 {
            if fraction {
                return (if base > 0 { 1 } else { -1 }, false);
            }
            return (0, true);
        }
    }
    if fraction {
        value += if base > 0 { 1 } else { -1 };
    }
    (value, !fraction)
}

/// `scaledValue` (`scale_int.go`): `unscaled × 10^-scale` at `new_scale` digits after the
/// point, rounded up; overflow wraps.
fn scaled_dec_value(unscaled: &BigInt, scale: i32, new_scale: i32) -> i64 {
    let dif = scale - new_scale;
    if dif == 0 {
        return go_big_int64(unscaled);
    }
    if dif < 0 {
        // `int64(math.Pow10(-dif))`: exact up to 10^18; past that Go's float conversion gives
        // the minimum int64 on amd64.
        let factor = if -dif <= 18 {
            10i64.pow((-dif) as u32)
        } else {
            i64::MIN
        };
        return go_big_int64(unscaled).wrapping_mul(factor);
    }
    if *unscaled < max_int64() && dif < 19 {
        let u = go_big_int64(unscaled);
        let divide = 10i64.pow(dif as u32);
        let (result, rem) = (u / divide, u % divide);
        return if rem != 0 { result + 1 } else { result };
    }
    // Go's `big.Int.DivMod` is Euclidean: the quotient rounds towards -∞ for a negative value.
    let (q, r) = unscaled.div_mod_floor(&pow10(dif as u32));
    let result = go_big_int64(&q);
    if r.is_zero() {
        result
    } else {
        result.wrapping_add(1)
    }
}

impl Quantity {
    /// A quantity of `value × 10^exponent` held as a decimal (`decQuantity` of the tests).
    pub fn from_decimal(value: BigInt, exponent: i32, format: Format) -> Quantity {
        Quantity {
            amount: Amount::Dec {
                unscaled: value,
                scale: -exponent,
            },
            format,
            canonical: None,
        }
    }

    /// The exact value as `(mantissa, exponent)`: `mantissa × 10^exponent`.
    pub fn as_decimal(&self) -> (BigInt, i32) {
        match &self.amount {
            Amount::Int { value, scale } => (BigInt::from(*value), *scale),
            Amount::Dec { unscaled, scale } => (unscaled.clone(), -scale),
        }
    }

    /// `Quantity.Cmp`: exact comparison.
    pub fn cmp_value(&self, other: &Quantity) -> std::cmp::Ordering {
        let (a, ea) = self.as_decimal();
        let (b, eb) = other.as_decimal();
        cmp_dec(&a, -ea, &b, -eb)
    }

    /// `Quantity.Sign() < 0`.
    pub fn is_negative(&self) -> bool {
        match &self.amount {
            Amount::Int { value, .. } => *value < 0,
            Amount::Dec { unscaled, .. } => unscaled.is_negative(),
        }
    }

    pub fn is_zero(&self) -> bool {
        match &self.amount {
            Amount::Int { value, .. } => *value == 0,
            Amount::Dec { unscaled, .. } => unscaled.is_zero(),
        }
    }

    /// `Quantity.Value()`: base units, rounded up; wraps past int64 as upstream does.
    pub fn value(&self) -> i64 {
        self.scaled_value(0)
    }

    /// `Quantity.MilliValue()`: thousandths, rounded up; wraps past int64 as upstream does.
    pub fn milli_value(&self) -> i64 {
        self.scaled_value(-3)
    }

    /// `Quantity.ScaledValue(scale)`: the value in units of `10^scale`.
    pub fn scaled_value(&self, scale: i32) -> i64 {
        match &self.amount {
            Amount::Int { value, scale: s } => {
                let (s, scale) = (i64::from(*s), i64::from(scale));
                if s < scale {
                    negative_scale(*value, scale - s).0
                } else {
                    positive_scale(*value, s - scale).0
                }
            }
            Amount::Dec { unscaled, scale: s } => scaled_dec_value(unscaled, *s, -scale),
        }
    }

    /// `Quantity.String()`: the text as written when it was canonical, else
    /// `CanonicalizeBytes`.
    pub fn canonical(&self) -> String {
        if let Some(s) = &self.canonical {
            return s.clone();
        }
        if self.is_zero() {
            return "0".into();
        }
        let mut format = self.format;
        let mut rounded = None;
        if format == Format::BinarySI {
            let (m, e) = self.as_decimal();
            let small = cmp_dec(&m.abs(), -e, &BigInt::from(1024), 0).is_lt();
            if small {
                format = Format::DecimalSI;
            } else {
                match self.as_integer_exact() {
                    Some(v) => rounded = Some(v),
                    None => format = Format::DecimalSI,
                }
            }
        }
        match (format, rounded) {
            (Format::BinarySI, Some(value)) => {
                let (amount, times) = remove_factors(value, &BigInt::from(1024));
                let suffix = binary_suffix(times * 10);
                format!("{amount}{suffix}")
            }
            _ => {
                let (amount, exponent) = self.canonical_decimal();
                let suffix = match format {
                    Format::DecimalExponent if exponent == 0 => String::new(),
                    Format::DecimalExponent => format!("e{exponent}"),
                    _ => decimal_suffix(exponent).to_string(),
                };
                format!("{amount}{suffix}")
            }
        }
    }

    /// `AsScale(0)` when exact: the value as an integer.
    fn as_integer_exact(&self) -> Option<BigInt> {
        let (m, e) = self.as_decimal();
        if e >= 0 {
            return Some(m * pow10(e as u32));
        }
        let (q, r) = m.div_rem(&pow10((-e) as u32));
        r.is_zero().then_some(q)
    }

    /// `AsCanonicalBytes`: mantissa without trailing zeros, exponent a multiple of 3.
    fn canonical_decimal(&self) -> (BigInt, i32) {
        let (m, e) = self.as_decimal();
        let (mut amount, times) = remove_factors(m, &BigInt::from(10));
        let mut exponent = e + times;
        while exponent.rem_euclid(3) != 0 {
            amount *= 10;
            exponent -= 1;
        }
        (amount, exponent)
    }

    /// `Quantity.AsInt64()`: the value when it is held as an int64 amount of whole units that
    /// fits; `None` for decimals (even whole ones) and fractions.
    pub fn as_int64(&self) -> Option<i64> {
        match &self.amount {
            Amount::Int { value, scale } if *scale >= 0 => {
                let (v, ok) = positive_scale(*value, i64::from(*scale));
                ok.then_some(v)
            }
            _ => None,
        }
    }
}

/// `removeInt64Factors` / `removeBigIntFactors`: `value` without trailing factors of `base`,
/// and how many were removed.
fn remove_factors(mut value: BigInt, base: &BigInt) -> (BigInt, i32) {
    let mut times = 0;
    while !value.is_zero() {
        let (q, r) = value.div_rem(base);
        if !r.is_zero() {
            break;
        }
        value = q;
        times += 1;
    }
    (value, times)
}

/// The DecimalSI suffix of a power of ten; none past the table, as upstream's lookup misses.
fn decimal_suffix(exponent: i32) -> &'static str {
    match exponent {
        -9 => "n",
        -6 => "u",
        -3 => "m",
        3 => "k",
        6 => "M",
        9 => "G",
        12 => "T",
        15 => "P",
        18 => "E",
        _ => "",
    }
}

fn binary_suffix(exponent: i32) -> &'static str {
    match exponent {
        10 => "Ki",
        20 => "Mi",
        30 => "Gi",
        40 => "Ti",
        50 => "Pi",
        60 => "Ei",
        _ => "",
    }
}

impl fmt::Display for Quantity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.canonical())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        s.parse().unwrap()
    }

    #[test]
    fn parses_kubernetes_forms() {
        assert_eq!(q("100m").milli_value(), 100);
        assert_eq!(q("1.5").milli_value(), 1500);
        assert_eq!(q("0.1m").milli_value(), 1);
        assert_eq!(q("1.5").value(), 2);
        assert_eq!(q("16Gi").value(), 16 << 30);
        assert_eq!(q("1e3").value(), 1000);
        assert_eq!(q("5n").milli_value(), 1);
        assert_eq!(q("3u").value(), 1);
    }

    #[test]
    fn rejects_what_kubernetes_rejects() {
        for bad in ["", "abc", "1.1.M", "0.1mi", "1i", " 1", "1 ", "-3.01e-"] {
            assert!(bad.parse::<Quantity>().is_err(), "{bad}");
        }
        assert_eq!("1e".parse::<Quantity>(), Err(QuantityError::Suffix));
        assert_eq!("1Qi".parse::<Quantity>(), Err(QuantityError::Format));
    }

    /// Past int64, reasoned through the Go code:
    /// - `8Ei` is BinarySI over 2^63-1, so it is capped there.
    /// - `1e19` is the int64 amount 1 × 10^19; scaling 1 by 10^19 overflows in
    ///   `positiveScaleInt64`'s generic loop, which returns 0.
    /// - `1Ei` is the decimal 2^60 (its binary precision is negative); `MilliValue` scales up by
    ///   1000 with wrapping int64 arithmetic: 2^60 × 1000 mod 2^64 = 2^63, read as -2^63.
    /// - `9223372036854775807` has 19 digits, so it is a decimal; it fits exactly.
    /// - `9223372036854775808` is a DecimalSI decimal (not capped); `Value` takes the low 64
    ///   bits: -9223372036854775808. Its negation gives 0 (see below).
    #[test]
    fn values_past_int64_are_what_go_returns() {
        assert_eq!(q("8Ei").value(), i64::MAX);
        assert_eq!(q("8Ei").canonical(), "9223372036854775807");
        assert_eq!(q("1e19").value(), 0);
        assert_eq!(q("1Ei").value(), 1 << 60);
        assert_eq!(q("1Ei").milli_value(), i64::MIN);
        assert_eq!(q("9223372036854775807").value(), i64::MAX);
        assert_eq!(q("9223372036854775808").value(), i64::MIN);
        // Negative, so `scaledValue` takes its int64 fast path on the nano-scaled mantissa,
        // whose low 64 bits are 0 (2^63 × 10^9 is a multiple of 2^64).
        assert_eq!(q("-9223372036854775808").value(), 0);
        assert_eq!(q("-1").canonical(), "-1");
        assert_eq!(q("-0.5Gi").canonical(), "-512Mi");
    }
}
