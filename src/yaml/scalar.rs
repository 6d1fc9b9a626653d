//! YAML scalars resolved to JSON values as Kubernetes resolves them.
//!
//! The API server and kubectl read YAML through sigs.k8s.io/yaml, which decodes with its fork
//! of go-yaml v2 (`goyaml.v2/resolve.go`) and re-encodes as JSON. So a plain `yes`, `on` or
//! `y` is the boolean true, `0755` is the octal integer 493, `08` is the number 8, `1_000` is
//! 1000, a timestamp stays a string, and a whole float such as `8.0` reaches the typed decoder
//! as the JSON number `8`. Quoted and block scalars are always strings.

use serde_json::{Number, Value};

/// A plain (unquoted, untagged) scalar.
pub fn resolve_plain(s: &str) -> Result<Value, String> {
    Ok(match s {
        "" | "~" | "null" | "Null" | "NULL" => Value::Null,
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            Value::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            Value::Bool(false)
        }
        ".nan" | ".NaN" | ".NAN" | ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF"
        | "-.inf" | "-.Inf" | "-.INF" => {
            return Err(format!(
                "{s} is not a number JSON can hold, and Kubernetes objects are JSON (quote it to mean the string)"
            ));
        }
        _ if s.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '+' | '-' | '.')) => {
            number(s).unwrap_or_else(|| Value::String(s.to_string()))
        }
        _ => Value::String(s.to_string()),
    })
}

/// A scalar with a core-schema tag (`!!str`, `!!int`, …). Other tags leave the text a
/// string, as go-yaml does for tags it cannot resolve.
pub fn resolve_tagged(s: &str, core_suffix: &str) -> Result<Value, String> {
    let bad = |kind: &str| format!("{s:?} is not a valid !!{kind}");
    match core_suffix {
        "str" => Ok(Value::String(s.to_string())),
        "null" => Ok(Value::Null),
        "bool" => match resolve_plain(s)? {
            b @ Value::Bool(_) => Ok(b),
            _ => Err(bad("bool")),
        },
        "int" => match number(s) {
            Some(n) if n.is_i64() || n.is_u64() => Ok(n),
            _ => Err(bad("int")),
        },
        "float" => match number(s) {
            Some(n) => Ok(n),
            None => Err(bad("float")),
        },
        "binary" => binary(s).ok_or_else(|| bad("binary")),
        _ => resolve_plain(s),
    }
}

/// A number as go-yaml v2 reads one: Go's `ParseInt(s, 0, 64)` (0x, 0o, 0b and leading-0
/// octal prefixes, underscores ignored), then unsigned, then a YAML-style float.
fn number(s: &str) -> Option<Value> {
    let plain: String = s.chars().filter(|c| *c != '_').collect();
    if let Some(i) = parse_go_int(&plain) {
        return Some(Value::Number(i));
    }
    if is_yaml_float(&plain) {
        let f: f64 = plain.parse().ok()?;
        return Some(float(f));
    }
    None
}

/// A float as JSON carries it after Go's `json.Marshal`: whole values print without a
/// fraction, so they decode into integer fields.
fn float(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Value::Number(Number::from(f as i64))
    } else {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}

/// Go's `strconv.ParseInt(s, 0, 64)`, falling back to `ParseUint`.
fn parse_go_int(s: &str) -> Option<Number> {
    let (negative, digits) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, body) = if let Some(r) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        (16, r)
    } else if let Some(r) = digits
        .strip_prefix("0b")
        .or_else(|| digits.strip_prefix("0B"))
    {
        (2, r)
    } else if let Some(r) = digits
        .strip_prefix("0o")
        .or_else(|| digits.strip_prefix("0O"))
    {
        (8, r)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let magnitude = u64::from_str_radix(body, radix).ok()?;
    if negative {
        let v = 0i64.checked_sub_unsigned(magnitude)?;
        Some(Number::from(v))
    } else {
        Some(Number::from(magnitude))
    }
}

/// go-yaml's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'-' | b'+')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// `!!binary`: base64 (whitespace ignored) whose bytes must be UTF-8 to be a JSON string.
fn binary(s: &str) -> Option<Value> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut count = 0;
    let mut out = Vec::new();
    for c in s.bytes().filter(|c| !c.is_ascii_whitespace()) {
        if c == b'=' {
            break;
        }
        let v = ALPHABET.iter().position(|a| *a == c)? as u32;
        bits = (bits << 6) | v;
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    String::from_utf8(out).ok().map(Value::String)
}

/// A mapping key as JSON needs it: sigs.k8s.io/yaml turns scalar keys into strings.
pub fn key_string(v: Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s),
        Value::Null => Some("null".into()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plain_scalars_resolve_as_go_yaml_v2() {
        let cases = [
            ("yes", json!(true)),
            ("On", json!(true)),
            ("n", json!(false)),
            ("OFF", json!(false)),
            ("~", json!(null)),
            ("", json!(null)),
            ("12", json!(12)),
            ("-12", json!(-12)),
            ("+7", json!(7)),
            ("0755", json!(493)),
            ("0x1F", json!(31)),
            ("0b101", json!(5)),
            ("0o17", json!(15)),
            ("1_000", json!(1000)),
            ("08", json!(8)),
            ("8.0", json!(8)),
            ("1e3", json!(1000)),
            ("1.5", json!(1.5)),
            (".5", json!(0.5)),
            ("18446744073709551615", json!(18446744073709551615u64)),
            ("2001-12-14", json!("2001-12-14")),
            ("1.2.3", json!("1.2.3")),
            ("-", json!("-")),
            ("500m", json!("500m")),
            ("16Gi", json!("16Gi")),
            ("nvidia.com/gpu", json!("nvidia.com/gpu")),
            ("0x", json!("0x")),
        ];
        for (text, want) in cases {
            assert_eq!(resolve_plain(text).unwrap(), want, "{text:?}");
        }
        assert!(resolve_plain(".nan").is_err());
    }

    #[test]
    fn core_tags() {
        assert_eq!(resolve_tagged("yes", "str").unwrap(), json!("yes"));
        assert_eq!(resolve_tagged("12", "int").unwrap(), json!(12));
        assert!(resolve_tagged("x", "int").is_err());
        assert_eq!(
            resolve_tagged("aGVsbG8=", "binary").unwrap(),
            json!("hello")
        );
    }

    #[test]
    fn keys_become_strings() {
        assert_eq!(key_string(json!(true)).as_deref(), Some("true"));
        assert_eq!(key_string(json!(3)).as_deref(), Some("3"));
        assert_eq!(key_string(json!([1])), None);
    }
}
