//! Kueue's manager Configuration (`apiVersion: config.kueue.x-k8s.io/v1beta1` or `v1beta2`,
//! `kind: Configuration`), the file its manager reads at start (`pkg/config/config.go`
//! `fromFile`: a strict decode, then the version's defaulting, then conversion to v1beta2).
//! schedsim reads what it simulates, `waitForPodsReady` (and the `DisableWaitForPodsReady`
//! feature gate), and names every other field it ignores.
//!
//! - Decoding is strict, as `serializer.EnableStrict` makes it: a field the version's type
//!   does not have is refused (`strict decoding error: unknown field "…"`), a value of the
//!   wrong JSON type too (encoding/json's `cannot unmarshal …`). The insides of the fields
//!   schedsim ignores are not checked.
//! - Defaults are `apis/config/v1beta2/defaults.go` and `apis/config/v1beta1/defaults.go`,
//!   then `configuration_conversion.go` (a v1beta1 `waitForPodsReady` without `enable: true`
//!   converts to none: off). v1beta2 defaults it in every case: on, with a 30-minute timeout
//!   (the `DisableWaitForPodsReady` gate, alpha since v0.19 and off by default, "while
//!   WaitForPodsReady is enabled by default", turns it off: `pkg/util/waitforpodsready`).
//!   v1beta1's type comment says its timeout defaults to 30 minutes; its code says 5
//!   (`defaultPodsReadyTimeout`), and the code is followed.
//! - Validation is `pkg/config/validation.go` `validateWaitForPodsReady`, messages verbatim
//!   (apimachinery's `field.Error`, a non-scalar bad value printed as its JSON).
//! - What the workload controller takes (`pkg/controller/core/core.go` `waitForPodsReady`):
//!   a `recoveryTimeout` of 0 turns recovery checks off; the backoff's jitter (0.0001) is left
//!   out, so a replay is deterministic.

use serde_json::{Map, Value};

use crate::model::validate::FieldError;

/// The group versions Kueue's manager reads its Configuration at.
pub const API_VERSIONS: &[&str] = &[V1BETA1, V1BETA2];
const V1BETA1: &str = "config.kueue.x-k8s.io/v1beta1";
const V1BETA2: &str = "config.kueue.x-k8s.io/v1beta2";
pub const KIND: &str = "Configuration";
/// The key of the manager's ConfigMap (`kueue-manager-config`) that holds the Configuration.
pub const CONFIG_MAP_KEY: &str = "controller_manager_config.yaml";
/// `features.DisableWaitForPodsReady`.
const DISABLE_GATE: &str = "DisableWaitForPodsReady";

const SECOND_NS: i64 = 1_000_000_000;
/// v1beta2 `DefaultWaitForPodsReadyTimeout`.
const V1BETA2_TIMEOUT_NS: i64 = 30 * 60 * SECOND_NS;
/// v1beta1 `defaultPodsReadyTimeout`.
const V1BETA1_TIMEOUT_NS: i64 = 5 * 60 * SECOND_NS;
/// `DefaultRequeuingBackoffBaseSeconds`, `DefaultRequeuingBackoffMaxSeconds`.
const BACKOFF_BASE_SECONDS: i32 = 60;
const BACKOFF_MAX_SECONDS: i32 = 3600;

/// `requeuingStrategy.timestamp`: which time orders a workload evicted by the PodsReady
/// timeout in its ClusterQueue (`workload.Ordering.GetQueueOrderTimestamp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RequeuingTimestamp {
    /// The `Evicted` condition's time.
    Eviction,
    /// The Workload's creation.
    Creation,
}

/// `waitForPodsReady` as the workload controller, the scheduler and the queue manager use it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WaitForPodsReady {
    /// Admitted → PodsReady, at most (ns).
    pub timeout_ns: i64,
    /// PodsReady=False after a pod was lost → PodsReady again, at most (ns); `None`: not
    /// checked.
    pub recovery_timeout_ns: Option<i64>,
    /// No admission while an admitted workload is not PodsReady.
    pub block_admission: bool,
    pub timestamp: RequeuingTimestamp,
    /// Requeues before the workload is deactivated; `None`: for ever.
    pub backoff_limit_count: Option<i32>,
    pub backoff_base_seconds: i32,
    pub backoff_max_seconds: i32,
}

impl WaitForPodsReady {
    /// What a Kueue installed as shipped runs with: `config/components/manager/
    /// controller_manager_config.yaml` is a v1beta2 Configuration whose `waitForPodsReady`
    /// is commented out, so v1beta2's defaults apply (as with no file at all: `config.Load`
    /// defaults an empty v1beta2 Configuration).
    pub fn installed_default() -> Self {
        let read = read(&serde_json::json!({"apiVersion": V1BETA2, "kind": KIND}))
            .expect("the default Configuration is valid");
        read.wait_for_pods_ready
            .expect("v1beta2 enables waitForPodsReady")
    }

    /// `WaitTime(count)` of the requeuing backoff (`UpdateRequeueState`: base · 2^(count−1),
    /// at most the max, where a max of 0 is no cap), without jitter, in ns.
    pub fn backoff_ns(&self, count: u32) -> i64 {
        let base = i64::from(self.backoff_base_seconds) * SECOND_NS;
        let max = i64::from(self.backoff_max_seconds) * SECOND_NS;
        wait_time(base, max, 2.0, i64::from(count))
    }
}

/// `Backoff.WaitTime(iteration)` of `pkg/util/wait/backoff.go`, without jitter: apimachinery's
/// `wait.Backoff.Step` taken `iteration` times (each step multiplies by `factor`, up to the
/// cap, which stays once reached). A cap of 0 is `MaxInt64 / ceil(factor)` (`NewBackoff`).
pub fn wait_time(initial_ns: i64, cap_ns: i64, factor: f64, iteration: i64) -> i64 {
    let cap = match cap_ns {
        0 => (i64::MAX as f64 / factor.ceil()) as i64,
        c => c,
    };
    let mut next = initial_ns;
    let mut capped = false;
    let mut wait = 0;
    for _ in 0..iteration.max(0) {
        wait = next;
        if !capped {
            let stepped = (next as f64 * factor) as i64;
            next = stepped;
            if cap > 0 && stepped > cap {
                next = cap;
                capped = true;
            }
        }
        // `WaitTime` stops at the cap; a zero base stays zero.
        if wait == cap || wait == 0 {
            break;
        }
    }
    wait
}

/// What a Configuration sets, once read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Read {
    /// `None`: off.
    pub wait_for_pods_ready: Option<WaitForPodsReady>,
    /// The fields set that schedsim does not simulate (top-level names; `featureGates.X` for
    /// a gate other than `DisableWaitForPodsReady`).
    pub ignored: Vec<String>,
}

/// The fields of `Configuration` (with `ControllerManager` inlined) per version: every one
/// is accepted, the others are unknown to the strict decoder.
const V1BETA2_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "namespace",
    "webhook",
    "leaderElection",
    "metrics",
    "health",
    "pprofBindAddress",
    "controller",
    "tls",
    "manageJobsWithoutQueueName",
    "managedJobsNamespaceSelector",
    "internalCertManagement",
    "waitForPodsReady",
    "clientConnection",
    "integrations",
    "multiKueue",
    "fairSharing",
    "admissionFairSharing",
    "resources",
    "featureGates",
    "objectRetentionPolicies",
    "visibilityServer",
];
/// v1beta1 has `queueVisibility` where v1beta2 has `visibilityServer`.
const V1BETA1_ONLY: &str = "queueVisibility";

/// Reads a Configuration object (apiVersion and kind already checked): decoded strictly,
/// defaulted and converted as its version is, then validated. Errors carry field paths
/// relative to the object, with upstream's messages.
pub fn read(value: &Value) -> Result<Read, Vec<FieldError>> {
    let mut errs = Vec::new();
    let Some(object) = value.as_object() else {
        errs.push(type_error(
            "",
            value,
            "Configuration",
            "",
            "v1beta2.Configuration",
        ));
        return Err(errs);
    };
    let v1beta1 = object.get("apiVersion").and_then(Value::as_str) == Some(V1BETA1);
    let package = if v1beta1 { "v1beta1" } else { "v1beta2" };
    let mut raw = Raw::default();
    let mut ignored = Vec::new();
    for (key, v) in object {
        let known = match key.as_str() {
            V1BETA1_ONLY => v1beta1,
            "visibilityServer" => !v1beta1,
            k => V1BETA2_FIELDS.contains(&k),
        };
        match key.as_str() {
            _ if !known => errs.push(unknown_field(key)),
            "apiVersion" | "kind" => {}
            "waitForPodsReady" => raw.wait = pods_ready(v, v1beta1, package, &mut errs),
            "featureGates" => gates(v, &mut raw, &mut ignored, &mut errs),
            _ => ignored.push(key.clone()),
        }
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    let wait = match v1beta1 {
        true => raw.wait.and_then(default_v1beta1),
        false => Some(default_v1beta2(raw.wait.unwrap_or_default())),
    };
    let wait = wait.filter(|_| !raw.disabled);
    if let Some(w) = &wait {
        validate(w, &mut errs);
    }
    if !errs.is_empty() {
        return Err(errs);
    }
    Ok(Read {
        wait_for_pods_ready: wait.map(settled),
        ignored,
    })
}

/// The fields of `waitForPodsReady` as written (pointers: `None` when not set).
#[derive(Debug, Default)]
struct RawWait {
    /// v1beta1 only.
    enable: bool,
    timeout: Option<i64>,
    block_admission: Option<bool>,
    recovery_timeout: Option<i64>,
    strategy: Option<RawStrategy>,
}

#[derive(Debug, Default, Clone)]
struct RawStrategy {
    timestamp: Option<String>,
    backoff_limit_count: Option<i32>,
    backoff_base_seconds: Option<i32>,
    backoff_max_seconds: Option<i32>,
}

#[derive(Debug, Default)]
struct Raw {
    wait: Option<RawWait>,
    /// `featureGates.DisableWaitForPodsReady: true`.
    disabled: bool,
}

/// v1beta2 `SetDefaults_Configuration` for `waitForPodsReady` (always defaulted).
fn default_v1beta2(mut w: RawWait) -> RawWait {
    if w.timeout.unwrap_or(0) == 0 {
        w.timeout = Some(V1BETA2_TIMEOUT_NS);
    }
    w.block_admission.get_or_insert(false);
    w.recovery_timeout = w.recovery_timeout.or(w.timeout);
    default_strategy(&mut w);
    w
}

/// v1beta1 `SetDefaults_Configuration`, then `Convert_v1beta1_Configuration_To_v1beta2`:
/// off unless `enable: true`.
fn default_v1beta1(mut w: RawWait) -> Option<RawWait> {
    if !w.enable {
        return None;
    }
    w.timeout = w.timeout.or(Some(V1BETA1_TIMEOUT_NS));
    w.recovery_timeout = w.recovery_timeout.or(w.timeout);
    w.block_admission.get_or_insert(true);
    default_strategy(&mut w);
    Some(w)
}

fn default_strategy(w: &mut RawWait) {
    let s = w.strategy.get_or_insert_with(RawStrategy::default);
    s.timestamp.get_or_insert_with(|| "Eviction".to_string());
    s.backoff_base_seconds.get_or_insert(BACKOFF_BASE_SECONDS);
    s.backoff_max_seconds.get_or_insert(BACKOFF_MAX_SECONDS);
}

const NEGATIVE: &str = "must be greater than or equal to 0";

/// `validateWaitForPodsReady` on the defaulted v1beta2 object.
fn validate(w: &RawWait, errs: &mut Vec<FieldError>) {
    let timeout = w.timeout.unwrap_or(0);
    if timeout == 0 {
        errs.push(FieldError::new(
            "waitForPodsReady.timeout",
            "Required value: must be specified".into(),
        ));
    }
    let invalid = |path: &str, shown: String| {
        FieldError::new(path, format!("Invalid value: {shown}: {NEGATIVE}"))
    };
    if timeout < 0 {
        let shown = format!("{:?}", go_duration_string(timeout));
        errs.push(invalid("waitForPodsReady.timeout", shown));
    }
    if let Some(r) = w.recovery_timeout.filter(|r| *r < 0) {
        let shown = format!("{:?}", go_duration_string(r));
        errs.push(invalid("waitForPodsReady.recoveryTimeout", shown));
    }
    let Some(s) = &w.strategy else {
        return;
    };
    let path = "waitForPodsReady.requeuingStrategy";
    if let Some(t) = s
        .timestamp
        .as_deref()
        .filter(|t| !["Creation", "Eviction"].contains(t))
    {
        errs.push(FieldError::new(
            &format!("{path}.timestamp"),
            format!("Unsupported value: {t:?}: supported values: \"Creation\", \"Eviction\""),
        ));
    }
    let counts = [
        ("backoffLimitCount", s.backoff_limit_count),
        ("backoffBaseSeconds", s.backoff_base_seconds),
        ("backoffMaxSeconds", s.backoff_max_seconds),
    ];
    for (field, v) in counts {
        if let Some(v) = v.filter(|v| *v < 0) {
            errs.push(invalid(&format!("{path}.{field}"), v.to_string()));
        }
    }
}

/// The validated object as schedsim runs it.
fn settled(w: RawWait) -> WaitForPodsReady {
    let s = w.strategy.unwrap_or_default();
    WaitForPodsReady {
        timeout_ns: w.timeout.unwrap_or(0),
        recovery_timeout_ns: w.recovery_timeout.filter(|r| *r > 0),
        block_admission: w.block_admission.unwrap_or(false),
        timestamp: match s.timestamp.as_deref() {
            Some("Creation") => RequeuingTimestamp::Creation,
            _ => RequeuingTimestamp::Eviction,
        },
        backoff_limit_count: s.backoff_limit_count,
        backoff_base_seconds: s.backoff_base_seconds.unwrap_or(BACKOFF_BASE_SECONDS),
        backoff_max_seconds: s.backoff_max_seconds.unwrap_or(BACKOFF_MAX_SECONDS),
    }
}

/// `waitForPodsReady`, decoded strictly. `None` for `null` (a nil pointer).
fn pods_ready(
    v: &Value,
    v1beta1: bool,
    package: &str,
    errs: &mut Vec<FieldError>,
) -> Option<RawWait> {
    let path = "waitForPodsReady";
    let go_type = format!("{package}.WaitForPodsReady");
    let fields = object(v, path, "Configuration", &go_type, errs)?;
    let mut w = RawWait::default();
    let go = "WaitForPodsReady";
    for (key, v) in fields {
        let at = format!("{path}.{key}");
        match key.as_str() {
            "enable" if v1beta1 => w.enable = boolean(v, &at, go, errs).unwrap_or(false),
            "timeout" => w.timeout = duration(v, &at, go, errs),
            "blockAdmission" => w.block_admission = boolean(v, &at, go, errs),
            "recoveryTimeout" => w.recovery_timeout = duration(v, &at, go, errs),
            "requeuingStrategy" => w.strategy = strategy(v, package, errs),
            _ => errs.push(unknown_field(&at)),
        }
    }
    Some(w)
}

fn strategy(v: &Value, package: &str, errs: &mut Vec<FieldError>) -> Option<RawStrategy> {
    let path = "waitForPodsReady.requeuingStrategy";
    let go_type = format!("{package}.RequeuingStrategy");
    let fields = object(v, path, "WaitForPodsReady", &go_type, errs)?;
    let mut s = RawStrategy::default();
    let go = "RequeuingStrategy";
    for (key, v) in fields {
        let at = format!("{path}.{key}");
        match key.as_str() {
            "timestamp" => {
                s.timestamp = match v {
                    Value::Null => None,
                    Value::String(t) => Some(t.clone()),
                    other => {
                        let ty = format!("{package}.RequeuingTimestamp");
                        errs.push(type_error(&at, other, go, &at, &ty));
                        None
                    }
                }
            }
            "backoffLimitCount" => s.backoff_limit_count = int32(v, &at, go, errs),
            "backoffBaseSeconds" => s.backoff_base_seconds = int32(v, &at, go, errs),
            "backoffMaxSeconds" => s.backoff_max_seconds = int32(v, &at, go, errs),
            _ => errs.push(unknown_field(&at)),
        }
    }
    Some(s)
}

/// `featureGates` (a `map[string]bool`): `DisableWaitForPodsReady` is honoured, other gates
/// are named as ignored (schedsim runs Kueue's gates at their defaults).
fn gates(v: &Value, raw: &mut Raw, ignored: &mut Vec<String>, errs: &mut Vec<FieldError>) {
    let path = "featureGates";
    let Some(gates) = object(v, path, "Configuration", "map[string]bool", errs) else {
        return;
    };
    for (name, on) in gates {
        let at = format!("{path}.{name}");
        let on = match on {
            Value::Bool(b) => *b,
            other => {
                errs.push(FieldError::new(
                    &at,
                    format!(
                        "json: cannot unmarshal {} into Go struct field Configuration.featureGates of type bool",
                        crate::yaml::json_type(other)
                    ),
                ));
                continue;
            }
        };
        match name.as_str() {
            DISABLE_GATE => raw.disabled = on,
            _ => ignored.push(at),
        }
    }
}

/// An object field's members; `None` for `null` or a wrong type (an error).
fn object<'v>(
    v: &'v Value,
    path: &str,
    go_struct: &str,
    go_type: &str,
    errs: &mut Vec<FieldError>,
) -> Option<&'v Map<String, Value>> {
    match v {
        Value::Null => None,
        Value::Object(m) => Some(m),
        other => {
            errs.push(type_error(path, other, go_struct, path, go_type));
            None
        }
    }
}

fn boolean(v: &Value, at: &str, go_struct: &str, errs: &mut Vec<FieldError>) -> Option<bool> {
    match v {
        Value::Null => None,
        Value::Bool(b) => Some(*b),
        other => {
            errs.push(type_error(at, other, go_struct, at, "bool"));
            None
        }
    }
}

fn int32(v: &Value, at: &str, go_struct: &str, errs: &mut Vec<FieldError>) -> Option<i32> {
    match v {
        Value::Null => None,
        Value::Number(n) => match n.as_i64().and_then(|i| i32::try_from(i).ok()) {
            Some(i) => Some(i),
            None => {
                let value = format!("number {n}");
                errs.push(FieldError::new(
                    at,
                    format!(
                        "json: cannot unmarshal {value} into Go struct field {go_struct}.{at} of type int32"
                    ),
                ));
                None
            }
        },
        other => {
            errs.push(type_error(at, other, go_struct, at, "int32"));
            None
        }
    }
}

/// A `metav1.Duration`: a string Go's `time.ParseDuration` reads.
fn duration(v: &Value, at: &str, go_struct: &str, errs: &mut Vec<FieldError>) -> Option<i64> {
    match v {
        Value::Null => None,
        Value::String(s) => match parse_go_duration(s) {
            Ok(ns) => Some(ns),
            Err(m) => {
                errs.push(FieldError::new(at, m));
                None
            }
        },
        // `Duration.UnmarshalJSON` decodes a string: encoding/json adds the field's context.
        other => {
            errs.push(type_error(at, other, go_struct, at, "string"));
            None
        }
    }
}

/// encoding/json's `UnmarshalTypeError` for a value of the wrong JSON type.
fn type_error(at: &str, v: &Value, go_struct: &str, field: &str, go_type: &str) -> FieldError {
    let message = match field.is_empty() {
        true => format!(
            "json: cannot unmarshal {} into Go value of type {go_type}",
            crate::yaml::json_type(v)
        ),
        false => format!(
            "json: cannot unmarshal {} into Go struct field {go_struct}.{field} of type {go_type}",
            crate::yaml::json_type(v)
        ),
    };
    FieldError::new(at, message)
}

/// The strict decoder's refusal of a field its type does not have.
fn unknown_field(path: &str) -> FieldError {
    FieldError::new(
        path,
        format!("strict decoding error: unknown field {path:?}"),
    )
}

/// Go's `time.ParseDuration`, in ns, with its error messages.
pub fn parse_go_duration(text: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {}", go_quote(text));
    let mut s = text;
    let mut negative = false;
    if let Some(rest) = s.strip_prefix('-') {
        negative = true;
        s = rest;
    } else if let Some(rest) = s.strip_prefix('+') {
        s = rest;
    }
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    const LIMIT: u64 = 1 << 63;
    let mut total: u64 = 0;
    while !s.is_empty() {
        let first = s.as_bytes()[0];
        if !(first == b'.' || first.is_ascii_digit()) {
            return Err(invalid());
        }
        // The integer part (`leadingInt`).
        let digits = s.bytes().take_while(u8::is_ascii_digit).count();
        let mut whole: u64 = 0;
        for b in s[..digits].bytes() {
            if whole > LIMIT / 10 {
                return Err(invalid());
            }
            whole = whole * 10 + u64::from(b - b'0');
            if whole > LIMIT {
                return Err(invalid());
            }
        }
        let pre = digits > 0;
        s = &s[digits..];
        // The fraction (`leadingFraction`: digits past overflow are skipped).
        let (mut fraction, mut scale, mut post) = (0u64, 1.0f64, false);
        if let Some(rest) = s.strip_prefix('.') {
            let n = rest.bytes().take_while(u8::is_ascii_digit).count();
            let mut overflow = false;
            for b in rest[..n].bytes() {
                if overflow {
                    continue;
                }
                if fraction > (i64::MAX as u64) / 10 {
                    overflow = true;
                    continue;
                }
                let y = fraction * 10 + u64::from(b - b'0');
                if y > i64::MAX as u64 {
                    overflow = true;
                    continue;
                }
                fraction = y;
                scale *= 10.0;
            }
            post = n > 0;
            s = &rest[n..];
        }
        if !pre && !post {
            return Err(invalid());
        }
        let unit_len = s
            .char_indices()
            .find(|(_, c)| *c == '.' || c.is_ascii_digit())
            .map_or(s.len(), |(i, _)| i);
        if unit_len == 0 {
            return Err(format!("time: missing unit in duration {}", go_quote(text)));
        }
        let (unit, rest) = s.split_at(unit_len);
        s = rest;
        let Some(unit_ns) = crate::trace::clock::go_unit_ns(unit) else {
            return Err(format!(
                "time: unknown unit {} in duration {}",
                go_quote(unit),
                go_quote(text)
            ));
        };
        if whole > LIMIT / unit_ns {
            return Err(invalid());
        }
        let mut v = whole * unit_ns;
        if fraction > 0 {
            v += (fraction as f64 * (unit_ns as f64 / scale)) as u64;
            if v > LIMIT {
                return Err(invalid());
            }
        }
        total += v;
        if total > LIMIT {
            return Err(invalid());
        }
    }
    if negative {
        return Ok((total as i128).wrapping_neg() as i64);
    }
    i64::try_from(total).map_err(|_| invalid())
}

/// The `quote` of Go's time package: the text in double quotes, `"` and `\` escaped.
fn go_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `time.Duration.String`: `1h30m0s`, `1m30.5s`, `1.5ms`, `-1s`, `0s`.
pub fn go_duration_string(ns: i64) -> String {
    let negative = ns < 0;
    let mut u = ns.unsigned_abs();
    let mut out = String::new();
    if u < 1_000_000_000 {
        let (prec, unit) = match u {
            0 => return "0s".into(),
            u if u < 1_000 => (0, "ns"),
            u if u < 1_000_000 => (3, "\u{b5}s"),
            _ => (6, "ms"),
        };
        let (frac, rest) = fraction(u, prec);
        out.push_str(&format!("{rest}{frac}{unit}"));
    } else {
        let (frac, seconds) = fraction(u, 9);
        u = seconds;
        let mut text = format!("{}{frac}s", u % 60);
        u /= 60;
        if u > 0 {
            text = format!("{}m{text}", u % 60);
            u /= 60;
            if u > 0 {
                text = format!("{u}h{text}");
            }
        }
        out.push_str(&text);
    }
    match negative {
        true => format!("-{out}"),
        false => out,
    }
}

/// `fmtFrac`: `v / 10^prec` as its fraction (`.5`, trailing zeros and a bare point left out)
/// and its integer part.
fn fraction(v: u64, prec: u32) -> (String, u64) {
    let scale = 10u64.pow(prec);
    let frac = v % scale;
    if frac == 0 {
        return (String::new(), v / scale);
    }
    let digits = format!("{frac:0width$}", width = prec as usize);
    (format!(".{}", digits.trim_end_matches('0')), v / scale)
}

/// The Configuration a ConfigMap's `controller_manager_config.yaml` holds, if it has that key.
pub fn in_config_map(config_map: &Value) -> Option<&str> {
    config_map["data"][CONFIG_MAP_KEY].as_str()
}

/// How a Configuration's ignored fields are said (one warning).
pub fn ignored_warning(ignored: &[String], at: &str) -> Option<String> {
    (!ignored.is_empty()).then(|| {
        format!(
            "Kueue Configuration ({at}): schedsim simulates its waitForPodsReady only; ignored: {}",
            ignored.join(", ")
        )
    })
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
