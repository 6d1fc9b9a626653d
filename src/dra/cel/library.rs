//! The Kubernetes CEL libraries a selector calls beyond CEL's own: `quantity` and `semver`
//! with their methods (`apiserver/pkg/cel/library/quantity.go`, `semverlib.go`) and the
//! regular-expression functions `find` and `findAll` (`regex.go`).

use std::sync::Arc;

use cel::objects::{Opaque, Value};
use cel::{Context, ExecutionError};

use crate::model::quantity::Quantity;

/// The Kubernetes CEL library's `Quantity`; equal when their values are.
#[derive(Debug, Clone)]
pub(super) struct CelQuantity(pub(super) Quantity);

impl PartialEq for CelQuantity {
    fn eq(&self, other: &Self) -> bool {
        self.0.cmp_value(&other.0).is_eq()
    }
}
impl Eq for CelQuantity {}
impl Opaque for CelQuantity {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Quantity"
    }
}

/// The Kubernetes CEL library's `Semver`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Semver(pub(super) semver::Version);

impl Opaque for Semver {
    fn runtime_type_name(&self) -> &str {
        "kubernetes.Semver"
    }
}

fn as_quantity(v: &Value) -> Option<&Quantity> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<CelQuantity>().map(|q| &q.0),
        _ => None,
    }
}

fn as_semver(v: &Value) -> Option<&semver::Version> {
    match v {
        Value::Opaque(o) => o.downcast_ref::<Semver>().map(|s| &s.0),
        _ => None,
    }
}

fn no_overload(function: &str) -> ExecutionError {
    ExecutionError::function_error(function, "no such overload")
}

/// Compares a quantity with a quantity, or a version with a version.
fn compare(function: &str, a: &Value, b: &Value) -> Result<std::cmp::Ordering, ExecutionError> {
    match (as_quantity(a), as_quantity(b), as_semver(a), as_semver(b)) {
        (Some(x), Some(y), _, _) => Ok(x.cmp_value(y)),
        (_, _, Some(x), Some(y)) => Ok(x.cmp_precedence(y)),
        _ => Err(no_overload(function)),
    }
}

/// `semver(string)` or `semver(string, normalize)`.
fn semver_args(
    f: &str,
    args: &cel::extractors::Arguments,
) -> Result<(Arc<String>, bool), ExecutionError> {
    match args.0.as_slice() {
        [Value::String(s)] => Ok((Arc::clone(s), false)),
        [Value::String(s), Value::Bool(n)] => Ok((Arc::clone(s), *n)),
        _ => Err(no_overload(f)),
    }
}

/// A semantic version; with `normalize`, a leading `v`, missing minor or patch numbers and
/// leading zeros are accepted (`apiserver/pkg/cel/library/semverlib.go`, `normalizeVersion`).
fn parse_semver(s: &str, normalize: bool) -> Option<semver::Version> {
    if !normalize {
        return semver::Version::parse(s).ok();
    }
    let s = s.strip_prefix('v').unwrap_or(s);
    let (core, rest) = match s.find(['-', '+']) {
        Some(at) => s.split_at(at),
        None => (s, ""),
    };
    let mut parts: Vec<String> = core
        .split('.')
        .map(|p| {
            let trimmed = p.trim_start_matches('0');
            if trimmed.is_empty() && !p.is_empty() {
                "0".into()
            } else {
                trimmed.into()
            }
        })
        .collect();
    if parts.len() > 3 {
        return None;
    }
    parts.resize(3, "0".into());
    semver::Version::parse(&format!("{}{rest}", parts.join("."))).ok()
}

/// `quantity`, `isQuantity`, `semver`, `isSemver` and their methods
/// (`apiserver/pkg/cel/library/quantity.go`, `semverlib.go`).
pub(super) fn register(context: &mut Context) {
    use cel::extractors::This;
    let parse_quantity = |s: &str| s.parse::<Quantity>().ok();
    let _ = context.add_function("quantity", move |s: Arc<String>| {
        parse_quantity(&s)
            .map(|q| Value::Opaque(Arc::new(CelQuantity(q))))
            .ok_or_else(|| ExecutionError::function_error("quantity", "invalid quantity"))
    });
    let _ = context.add_function("isQuantity", move |s: Arc<String>| {
        parse_quantity(&s).is_some()
    });
    let _ = context.add_function("semver", |args: cel::extractors::Arguments| {
        let (s, normalize) = semver_args("semver", &args)?;
        parse_semver(&s, normalize)
            .map(|v| Value::Opaque(Arc::new(Semver(v))))
            .ok_or_else(|| ExecutionError::function_error("semver", "invalid semver"))
    });
    let _ = context.add_function("isSemver", |args: cel::extractors::Arguments| {
        let (s, normalize) = semver_args("isSemver", &args)?;
        Ok::<bool, ExecutionError>(parse_semver(&s, normalize).is_some())
    });
    let _ = context.add_function("compareTo", |This(a): This<Value>, b: Value| {
        compare("compareTo", &a, &b).map(|o| o as i64)
    });
    let _ = context.add_function("isGreaterThan", |This(a): This<Value>, b: Value| {
        compare("isGreaterThan", &a, &b).map(|o| o.is_gt())
    });
    let _ = context.add_function("isLessThan", |This(a): This<Value>, b: Value| {
        compare("isLessThan", &a, &b).map(|o| o.is_lt())
    });
    let _ = context.add_function("asInteger", |This(a): This<Value>| {
        let q = as_quantity(&a).ok_or_else(|| no_overload("asInteger"))?;
        q.as_int64().ok_or_else(|| {
            ExecutionError::function_error("asInteger", "cannot convert value to integer")
        })
    });
    let _ = context.add_function("isInteger", |This(a): This<Value>| {
        let q = as_quantity(&a).ok_or_else(|| no_overload("isInteger"))?;
        Ok::<bool, ExecutionError>(q.as_int64().is_some())
    });
    let _ = context.add_function("sign", |This(a): This<Value>| {
        let q = as_quantity(&a).ok_or_else(|| no_overload("sign"))?;
        Ok::<i64, ExecutionError>(if q.is_zero() {
            0
        } else if q.is_negative() {
            -1
        } else {
            1
        })
    });
    let version_part = |name: &'static str, part: fn(&semver::Version) -> u64| {
        move |This(a): This<Value>| {
            let v = as_semver(&a).ok_or_else(|| no_overload(name))?;
            Ok::<i64, ExecutionError>(part(v) as i64)
        }
    };
    let _ = context.add_function("major", version_part("major", |v| v.major));
    let _ = context.add_function("minor", version_part("minor", |v| v.minor));
    let _ = context.add_function("patch", version_part("patch", |v| v.patch));
    register_regex(context);
}

/// A regular expression of `find` or `findAll` (RE2 syntax, which the `regex` crate shares),
/// compiled once per thread: a selector asks again for every device it is evaluated on.
fn regex_of(function: &str, pattern: &str) -> Result<regex::Regex, ExecutionError> {
    thread_local! {
        static COMPILED: std::cell::RefCell<std::collections::HashMap<String, regex::Regex>> =
            Default::default();
    }
    if let Some(re) = COMPILED.with_borrow(|c| c.get(pattern).cloned()) {
        return Ok(re);
    }
    let re = regex::Regex::new(pattern).map_err(|e| ExecutionError::function_error(function, e))?;
    COMPILED.with_borrow_mut(|c| {
        // Selectors are few; an expression that builds patterns is not cached past a bound.
        if c.len() < 256 {
            c.insert(pattern.to_owned(), re.clone());
        }
    });
    Ok(re)
}

/// `find` and `findAll` (`apiserver/pkg/cel/library/regex.go`): the first match or `""`, and
/// every match, or the first `limit` (all when it is negative).
fn register_regex(context: &mut Context) {
    use cel::extractors::{Arguments, This};
    let _ = context.add_function(
        "find",
        |This(s): This<Arc<String>>, pattern: Arc<String>| -> Result<Value, ExecutionError> {
            let re = regex_of("find", &pattern)?;
            let found = re.find(&s).map_or("", |m| m.as_str());
            Ok(Value::String(Arc::new(found.to_owned())))
        },
    );
    let _ = context.add_function(
        "findAll",
        |This(s): This<Arc<String>>, args: Arguments| -> Result<Value, ExecutionError> {
            let (pattern, limit) = match args.0.as_slice() {
                [Value::String(p)] => (p, -1),
                [Value::String(p), Value::Int(n)] => (p, *n),
                _ => return Err(no_overload("findAll")),
            };
            let re = regex_of("findAll", pattern)?;
            let limit = usize::try_from(limit).unwrap_or(usize::MAX);
            let all = (re.find_iter(&s).take(limit))
                .map(|m| Value::String(Arc::new(m.as_str().to_owned())))
                .collect();
            Ok(Value::List(Arc::new(all)))
        },
    );
}
