//! CEL device selectors as DRA evaluates them: a `device` variable with `driver`,
//! `attributes[domain][id]` and `capacity[domain][id]`, where an attribute without a domain
//! belongs to the driver's and a domain the device lacks reads as an empty map; attribute
//! values are strings, ints, bools and semantic versions, capacities are quantities. A port of
//! kubernetes `staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go`
//! (`DeviceMatches`, `parseQualifiedName`, `newStringInterfaceMapWithDefault`) with the
//! Kubernetes CEL library's `quantity` and `semver` types (`apiserver/pkg/cel/library`).
//!
//! Evaluated with the `cel` crate (cel-rust), the maintained Rust CEL interpreter. It checks
//! types at run time, not at compile time, so an expression upstream refuses when compiling
//! for its type (`must evaluate to bool`) is refused here when it runs, with the same outcome
//! for allocation: an error.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use cel::common::traits::{Container, Indexer, Iterable};
use cel::common::types::{CelString, Kind, Type};
use cel::common::value::{CowVal, Val};
use cel::objects::{Key, Map, Opaque, Value};
use cel::{Context, Env, ExecutionError, Program};
use k8s_openapi::api::resource::v1::{DeviceAttribute, DeviceCapacity};

use crate::model::quantity::Quantity;

/// A compiled selector.
pub struct Selector {
    program: Program,
    /// What it reads of the device, when it can read nothing else (see [`Read`]).
    reads: Option<Vec<Read>>,
}

/// A part of the device a selector reads: `device.driver`, or an attribute or capacity named
/// by a literal domain and id (`device.attributes['gpu.nvidia.com'].productName`,
/// `device.capacity['d']['memory']`). A selector whose every use of `device` is one of these
/// gives the same answer on two devices that agree on them (and that both convert to CEL
/// values): the scheduler evaluates it once per distinct [`projection`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Read {
    Driver,
    Attribute(String, String),
    Capacity(String, String),
}

/// The device a selector is asked about.
pub struct Device<'d> {
    /// `device.allowMultipleAllocations`, declared only with DRAConsumableCapacity (`None`
    /// without it: reading it is then an error, as cel-go's compiler reports).
    pub allow_multiple_allocations: Option<bool>,
    pub driver: &'d str,
    pub attributes: &'d BTreeMap<String, DeviceAttribute>,
    pub capacity: &'d BTreeMap<String, DeviceCapacity>,
}

/// Attributes and capacities of a device that lists none.
static NO_ATTRIBUTES: BTreeMap<String, DeviceAttribute> = BTreeMap::new();
static NO_CAPACITY: BTreeMap<String, DeviceCapacity> = BTreeMap::new();

impl<'d> Device<'d> {
    /// The view of `device`, published by `driver`; `consumable_capacity`: the
    /// DRAConsumableCapacity gate, which declares `device.allowMultipleAllocations`.
    pub fn of(
        driver: &'d str,
        device: &'d k8s_openapi::api::resource::v1::Device,
        consumable_capacity: bool,
    ) -> Self {
        Device {
            allow_multiple_allocations: consumable_capacity
                .then(|| device.allow_multiple_allocations.unwrap_or(false)),
            driver,
            attributes: device.attributes.as_ref().unwrap_or(&NO_ATTRIBUTES),
            capacity: device.capacity.as_ref().unwrap_or(&NO_CAPACITY),
        }
    }
}

impl Selector {
    /// `CompileCELExpression`: a parse error reads as upstream's `compilation failed: …`.
    pub fn compile(expression: &str) -> Result<Selector, String> {
        let program = ENV
            .compile(expression)
            .map_err(|e| format!("compilation failed: {e}"))?;
        if let Some((name, at)) = undeclared(program.expression(), &mut Vec::new()) {
            let start = (program.source_info().offset_for(at)).map_or(0, |(s, _)| s as usize);
            return Err(format!(
                "compilation failed: {}",
                issue(
                    expression,
                    start,
                    &format!("undeclared reference to '{name}' (in container '')")
                )
            ));
        }
        let mut reads = Vec::new();
        let reads = collect_reads(program.expression(), &mut reads).then_some(reads);
        Ok(Selector { program, reads })
    }

    /// What the selector reads of a device, if it reads nothing but those parts.
    pub fn reads(&self) -> Option<&[Read]> {
        self.reads.as_deref()
    }

    /// `DeviceMatches`: whether the device satisfies the selector; an error when the
    /// expression fails on it (a missing attribute, a type mismatch) or is not a bool.
    pub fn matches(&self, device: &Device) -> Result<bool, String> {
        let mut context = Context::with_env(Arc::clone(&ENV));
        register(&mut context);
        context.add_variable_as_val("device", Box::new(DeviceVal::new(device)?));
        match self.program.execute(&context) {
            Ok(Value::Bool(b)) => Ok(b),
            Ok(other) => Err(format!(
                "CEL result of type {} could not be converted to bool",
                type_name(&other)
            )),
            Err(ExecutionError::NoSuchKey(key)) => Err(format!("no such key: {key}")),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// The parts of `device` an expression reads, into `out`; `false` when it uses `device` in
/// any other way (as a whole, a map of domains, a domain's map), or rebinds the name.
fn collect_reads(e: &cel::IdedExpr, out: &mut Vec<Read>) -> bool {
    use cel::common::ast::{EntryExpr, Expr};
    if let Some(r) = read_of(e) {
        out.push(r);
        return true;
    }
    match &e.expr {
        Expr::Ident(name) => name != "device",
        Expr::Select(s) => collect_reads(&s.operand, out),
        Expr::Call(c) => {
            (c.target.iter().map(|t| &**t).chain(&c.args)).all(|a| collect_reads(a, out))
        }
        Expr::List(l) => l.elements.iter().all(|a| collect_reads(a, out)),
        Expr::Map(m) => m.entries.iter().all(|entry| match &entry.expr {
            EntryExpr::MapEntry(m) => collect_reads(&m.key, out) && collect_reads(&m.value, out),
            EntryExpr::StructField(f) => collect_reads(&f.value, out),
        }),
        Expr::Struct(s) => s.entries.iter().all(|entry| match &entry.expr {
            EntryExpr::MapEntry(m) => collect_reads(&m.key, out) && collect_reads(&m.value, out),
            EntryExpr::StructField(f) => collect_reads(&f.value, out),
        }),
        Expr::Comprehension(c) => {
            let rebinds = [Some(&c.iter_var), Some(&c.accu_var), c.iter_var2.as_ref()]
                .into_iter()
                .flatten()
                .any(|v| v == "device");
            !rebinds
                && [
                    &c.iter_range,
                    &c.accu_init,
                    &c.loop_cond,
                    &c.loop_step,
                    &c.result,
                ]
                .into_iter()
                .all(|a| collect_reads(a, out))
        }
        Expr::Literal(_) | Expr::Unspecified => true,
    }
}

/// `e` as one [`Read`]: `device.driver`, or `device.attributes|capacity[<literal>]` followed
/// by `.id` or `[<literal>]` (`device.attributes.<domain>` as well).
fn read_of(e: &cel::IdedExpr) -> Option<Read> {
    use cel::common::ast::Expr;
    let is_device = |x: &cel::IdedExpr| matches!(&x.expr, Expr::Ident(n) if n == "device");
    // (operand, key) of `operand.key` or `operand['key']`.
    fn step(x: &cel::IdedExpr) -> Option<(&cel::IdedExpr, String)> {
        match &x.expr {
            Expr::Select(s) => Some((&*s.operand, s.field.clone())),
            Expr::Call(c) if c.func_name == "_[_]" && c.target.is_none() && c.args.len() == 2 => {
                match &c.args[1].expr {
                    Expr::Literal(cel::common::ast::LiteralValue::String(s)) => {
                        Some((&c.args[0], s.inner().to_string()))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }
    if let Expr::Select(s) = &e.expr
        && is_device(&s.operand)
        && s.field == "driver"
    {
        return Some(Read::Driver);
    }
    let (domain_map, id) = step(e)?;
    let (field, domain) = step(domain_map)?;
    let Expr::Select(s) = &field.expr else {
        return None;
    };
    if !is_device(&s.operand) {
        return None;
    }
    match s.field.as_str() {
        "attributes" => Some(Read::Attribute(domain, id)),
        "capacity" => Some(Read::Capacity(domain, id)),
        _ => None,
    }
}

/// The values of `reads` on a device, as `DeviceVal` files them (an attribute's or capacity's
/// name split into domain and id, the last of equal names winning), or `None` when the
/// device does not convert to a CEL value at all (every selector fails on it then).
pub fn projection(device: &Device, reads: &[Read]) -> Option<Vec<Option<String>>> {
    converts(device).then(|| projection_of_converting(device, reads))
}

/// Whether the device converts to a CEL value (every attribute and capacity does).
pub fn converts(device: &Device) -> bool {
    let attributes_ok = device
        .attributes
        .values()
        .all(|a| attribute_value(a).is_ok());
    let capacity_ok = (device.capacity.values()).all(|c| c.value.0.parse::<Quantity>().is_ok());
    attributes_ok && capacity_ok
}

/// [`projection`] of a device known to [`convert`](converts).
pub fn projection_of_converting(device: &Device, reads: &[Read]) -> Vec<Option<String>> {
    let named =
        |name: &str, domain: &str, id: &str| split_name(name, device.driver) == (domain, id);
    (reads.iter())
        .map(|r| match r {
            Read::Driver => Some(device.driver.to_string()),
            Read::Attribute(domain, id) => (device.attributes.iter())
                .rfind(|(n, _)| named(n, domain, id))
                .map(|(_, a)| format!("{a:?}")),
            Read::Capacity(domain, id) => (device.capacity.iter())
                .rfind(|(n, _)| named(n, domain, id))
                .map(|(_, c)| c.value.0.clone()),
        })
        .collect()
}

/// Identifiers CEL declares besides `device`: the type names.
const DECLARED: [&str; 11] = [
    "device",
    "int",
    "uint",
    "double",
    "bool",
    "string",
    "bytes",
    "list",
    "map",
    "null_type",
    "type",
];

/// The first identifier that is neither declared nor bound by an enclosing comprehension, and
/// its node: cel-go's checker refuses such an expression when compiling it (`bound` holds
/// the names in scope).
fn undeclared<'e>(e: &'e cel::IdedExpr, bound: &mut Vec<&'e str>) -> Option<(&'e str, u64)> {
    use cel::common::ast::{EntryExpr, Expr};
    match &e.expr {
        Expr::Ident(name) => {
            let known = DECLARED.contains(&name.as_str()) || bound.contains(&name.as_str());
            (!known && !name.starts_with('@')).then_some((name.as_str(), e.id))
        }
        Expr::Select(s) => undeclared(&s.operand, bound),
        Expr::Call(c) => {
            (c.target.iter().map(|t| &**t).chain(&c.args)).find_map(|a| undeclared(a, bound))
        }
        Expr::List(l) => l.elements.iter().find_map(|a| undeclared(a, bound)),
        Expr::Map(m) => m.entries.iter().find_map(|entry| match &entry.expr {
            EntryExpr::MapEntry(m) => {
                undeclared(&m.key, bound).or_else(|| undeclared(&m.value, bound))
            }
            EntryExpr::StructField(f) => undeclared(&f.value, bound),
        }),
        Expr::Struct(s) => s.entries.iter().find_map(|entry| match &entry.expr {
            EntryExpr::MapEntry(m) => {
                undeclared(&m.key, bound).or_else(|| undeclared(&m.value, bound))
            }
            EntryExpr::StructField(f) => undeclared(&f.value, bound),
        }),
        Expr::Comprehension(c) => {
            if let Some(found) =
                undeclared(&c.iter_range, bound).or_else(|| undeclared(&c.accu_init, bound))
            {
                return Some(found);
            }
            let depth = bound.len();
            bound.extend([c.iter_var.as_str(), c.accu_var.as_str()]);
            bound.extend(c.iter_var2.as_deref());
            let found = [&c.loop_cond, &c.loop_step, &c.result]
                .into_iter()
                .find_map(|a| undeclared(a, bound));
            bound.truncate(depth);
            found
        }
        Expr::Literal(_) | Expr::Unspecified => None,
    }
}

/// A cel-go issue as `Issues.String` prints it: position, message, and the source line with
/// a caret under the column.
fn issue(source: &str, offset: usize, message: &str) -> String {
    let before = &source[..offset.min(source.len())];
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let column = source[line_start..offset.min(source.len())].chars().count();
    let text = source[line_start..].lines().next().unwrap_or("");
    format!(
        "ERROR: <input>:{line}:{}: {message}\n | {text}\n | {}^",
        column + 1,
        ".".repeat(column)
    )
}

/// The standard environment with the strings and lists extensions the Kubernetes CEL base
/// environment also has (`split`, `lowerAscii`, …; `matches` is standard).
static ENV: std::sync::LazyLock<Arc<Env>> = std::sync::LazyLock::new(|| {
    let mut env = Env::stdlib();
    env.add_extension(cel::extensions::strings)
        .and_then(|()| env.add_extension(cel::extensions::lists))
        .and_then(|()| env.add_macro(bind_macro()))
        .expect("the cel crate's own extensions declare");
    Arc::new(env)
});

/// `cel.bind(name, init, expr)` (cel-go `ext.Bindings`, which DRA's environment includes):
/// `expr` with `name` bound to `init`, expanded as cel-go expands it, into a comprehension
/// over an empty list whose accumulator is the binding.
fn bind_macro() -> cel::parser::Macro {
    use cel::common::ast::{ComprehensionExpr, Expr, ListExpr, LiteralValue};
    cel::parser::Macro::receiver("bind", 3, |helper, target, args| {
        if !matches!(target.as_ref().map(|t| &t.expr), Some(Expr::Ident(n)) if n == "cel") {
            return Ok(None);
        }
        let (result, init, name) = (args.remove(2), args.remove(1), args.remove(0));
        let Expr::Ident(var) = name.expr else {
            return Err(helper.new_error(
                name.id,
                "cel.bind() variable names must be simple identifiers",
            ));
        };
        let empty = helper.next_expr(Expr::List(ListExpr {
            elements: Vec::new(),
            optional_indices: Vec::new(),
        }));
        let never = helper.next_expr(Expr::Literal(LiteralValue::Boolean(false.into())));
        let step = helper.next_expr(Expr::Ident(var.clone()));
        target.take();
        Ok(Some(helper.next_expr(Expr::Comprehension(Box::new(
            ComprehensionExpr {
                iter_range: empty,
                iter_var: "#unused".into(),
                iter_var2: None,
                accu_var: var,
                accu_init: init,
                loop_cond: never,
                loop_step: step,
                result,
            },
        )))))
    })
}

fn type_name(v: &Value) -> String {
    match v {
        Value::Int(_) => "int".into(),
        Value::UInt(_) => "uint".into(),
        Value::Float(_) => "double".into(),
        Value::String(_) => "string".into(),
        Value::Bool(_) => "bool".into(),
        Value::List(_) => "list".into(),
        Value::Map(_) => "map".into(),
        Value::Null => "null_type".into(),
        other => format!("{other:?}"),
    }
}

/// `parseQualifiedName`: `domain/id`, or the driver's domain for a bare id.
fn split_name<'n>(name: &'n str, driver: &'n str) -> (&'n str, &'n str) {
    name.split_once('/').unwrap_or((driver, name))
}

/// The `device` variable: a struct with three fields.
#[derive(Debug, Clone)]
struct DeviceVal {
    allow_multiple_allocations: Option<bool>,
    driver: Value,
    attributes: Domains,
    capacity: Domains,
}

impl DeviceVal {
    fn new(d: &Device) -> Result<DeviceVal, String> {
        let mut attributes: BTreeMap<String, HashMap<Key, Value>> = BTreeMap::new();
        for (name, attr) in d.attributes {
            let value = attribute_value(attr).map_err(|e| format!("attribute {name}: {e}"))?;
            let (domain, id) = split_name(name, d.driver);
            (attributes.entry(domain.to_owned()).or_default()).insert(Key::from(id), value);
        }
        let mut capacity: BTreeMap<String, HashMap<Key, Value>> = BTreeMap::new();
        for (name, cap) in d.capacity {
            let q: Quantity = (cap.value.0.parse())
                .map_err(|e| format!("capacity {name}: quantity {:?}: {e}", cap.value.0))?;
            let (domain, id) = split_name(name, d.driver);
            (capacity.entry(domain.to_owned()).or_default())
                .insert(Key::from(id), Value::Opaque(Arc::new(CelQuantity(q))));
        }
        let domains = |m: BTreeMap<String, HashMap<Key, Value>>| Domains {
            keys: Arc::new(m.keys().map(|k| CelString::from(k.clone())).collect()),
            map: Arc::new(
                m.into_iter()
                    .map(|(k, v)| (k, Value::Map(Map { map: Arc::new(v) })))
                    .collect(),
            ),
        };
        Ok(DeviceVal {
            allow_multiple_allocations: d.allow_multiple_allocations,
            driver: Value::String(Arc::new(d.driver.to_owned())),
            attributes: domains(attributes),
            capacity: domains(capacity),
        })
    }
}

/// `getAttributeValue`.
fn attribute_value(a: &DeviceAttribute) -> Result<Value, String> {
    if let Some(i) = a.int {
        return Ok(Value::Int(i));
    }
    if let Some(b) = a.bool {
        return Ok(Value::Bool(b));
    }
    if let Some(s) = &a.string {
        return Ok(Value::String(Arc::new(s.clone())));
    }
    if let Some(v) = &a.version {
        let v = semver::Version::parse(v).map_err(|e| format!("parse semantic version: {e}"))?;
        return Ok(Value::Opaque(Arc::new(Semver(v))));
    }
    Err("unsupported attribute value".into())
}

static DEVICE_TYPE: std::sync::LazyLock<Type> =
    std::sync::LazyLock::new(|| Type::simple_type(Kind::Struct, "kubernetes.DRADevice"));
static DOMAINS_TYPE: std::sync::LazyLock<Type> =
    std::sync::LazyLock::new(|| Type::simple_type(Kind::Map, "map"));

impl Val for DeviceVal {
    fn get_type(&self) -> &Type {
        &DEVICE_TYPE
    }
    fn cel_type() -> &'static Type {
        &DEVICE_TYPE
    }
    fn as_indexer<'b, 'v>(&'b self) -> Option<&'b (dyn Indexer + 'v)>
    where
        Self: 'v,
    {
        Some(self)
    }
    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(self.clone())
    }
}

impl Indexer for DeviceVal {
    fn get<'b, 'v>(&'b self, idx: &dyn Val) -> Result<CowVal<'b, 'v>, ExecutionError>
    where
        Self: 'v,
    {
        match idx.downcast_ref::<CelString>().map(|s| s.inner()) {
            Some("driver") => Ok(CowVal::Owned(boxed(self.driver.clone())?)),
            Some("attributes") => Ok(CowVal::owned(self.attributes.clone())),
            Some("capacity") => Ok(CowVal::owned(self.capacity.clone())),
            Some("allowMultipleAllocations") if self.allow_multiple_allocations.is_some() => {
                Ok(CowVal::Owned(boxed(Value::Bool(
                    self.allow_multiple_allocations == Some(true),
                ))?))
            }
            Some(field) => Err(ExecutionError::no_such_key(field)),
            None => Err(ExecutionError::no_such_key("?")),
        }
    }
    fn steal<'v>(self: Box<Self>, idx: &dyn Val) -> Result<Box<dyn Val + 'v>, ExecutionError>
    where
        Self: 'v,
    {
        self.get(idx).map(CowVal::into_owned)
    }
}

fn boxed<'v>(v: Value) -> Result<Box<dyn Val + 'v>, ExecutionError> {
    Box::<dyn Val>::try_from(v).map(|b| b as Box<dyn Val + 'v>)
}

/// `attributes` or `capacity`: domain → map; a domain the device lacks is an empty map
/// (`newStringInterfaceMapWithDefault`).
#[derive(Debug, Clone)]
struct Domains {
    map: Arc<BTreeMap<String, Value>>,
    /// The domains, for `in` and the macros that iterate a map's keys.
    keys: Arc<Vec<CelString<'static>>>,
}

impl Val for Domains {
    fn get_type(&self) -> &Type {
        &DOMAINS_TYPE
    }
    fn cel_type() -> &'static Type {
        &DOMAINS_TYPE
    }
    fn as_indexer<'b, 'v>(&'b self) -> Option<&'b (dyn Indexer + 'v)>
    where
        Self: 'v,
    {
        Some(self)
    }
    fn as_container(&self) -> Option<&dyn Container> {
        Some(self)
    }
    fn as_iterable<'b, 'v>(&'b self) -> Option<&'b (dyn Iterable + 'v)>
    where
        Self: 'v,
    {
        Some(self)
    }
    fn clone_as_boxed<'v>(&self) -> Box<dyn Val + 'v> {
        Box::new(self.clone())
    }
}

impl Container for Domains {
    fn contains(&self, value: &dyn Val) -> Result<bool, ExecutionError> {
        let key = value.downcast_ref::<CelString>().map(|s| s.inner());
        Ok(key.is_some_and(|k| self.map.contains_key(k)))
    }
}

struct Keys<'b>(std::slice::Iter<'b, CelString<'static>>);

impl<'b, 'v> cel::common::traits::Iterator<'b, 'v> for Keys<'b> {
    fn next(&mut self) -> Option<&'b (dyn Val + 'v)> {
        self.0.next().map(|k| k as &dyn Val)
    }
}

impl Iterable for Domains {
    fn iter<'b, 'v>(&'b self) -> Box<dyn cel::common::traits::Iterator<'b, 'v> + 'b>
    where
        Self: 'v,
    {
        Box::new(Keys(self.keys.iter()))
    }
}

impl Indexer for Domains {
    fn get<'b, 'v>(&'b self, idx: &dyn Val) -> Result<CowVal<'b, 'v>, ExecutionError>
    where
        Self: 'v,
    {
        let Some(domain) = idx.downcast_ref::<CelString>().map(|s| s.inner()) else {
            return Err(ExecutionError::no_such_key("?"));
        };
        let value = (self.map.get(domain).cloned()).unwrap_or_else(|| {
            Value::Map(Map {
                map: Arc::new(HashMap::new()),
            })
        });
        Ok(CowVal::Owned(boxed(value)?))
    }
    fn steal<'v>(self: Box<Self>, idx: &dyn Val) -> Result<Box<dyn Val + 'v>, ExecutionError>
    where
        Self: 'v,
    {
        self.get(idx).map(CowVal::into_owned)
    }
}

/// The Kubernetes CEL library's `Quantity`; equal when their values are.
#[derive(Debug, Clone)]
struct CelQuantity(Quantity);

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
struct Semver(semver::Version);

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
fn register(context: &mut Context) {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;

    fn eval(expression: &str) -> Result<bool, String> {
        let attributes = BTreeMap::from([
            (
                "productName".to_string(),
                DeviceAttribute {
                    string: Some("NVIDIA A100-SXM4-40GB".into()),
                    ..Default::default()
                },
            ),
            (
                "gpu.nvidia.com/index".to_string(),
                DeviceAttribute {
                    int: Some(3),
                    ..Default::default()
                },
            ),
            (
                "driverVersion".to_string(),
                DeviceAttribute {
                    version: Some("550.54.15".into()),
                    ..Default::default()
                },
            ),
            (
                "example.com/mig".to_string(),
                DeviceAttribute {
                    bool: Some(false),
                    ..Default::default()
                },
            ),
        ]);
        let capacity = BTreeMap::from([(
            "memory".to_string(),
            DeviceCapacity {
                value: K8sQuantity("40Gi".into()),
                ..Default::default()
            },
        )]);
        let device = Device {
            allow_multiple_allocations: None,
            driver: "gpu.nvidia.com",
            attributes: &attributes,
            capacity: &capacity,
        };
        Selector::compile(expression)?.matches(&device)
    }

    #[test]
    fn selectors_read_driver_attributes_and_capacity() {
        let yes = [
            r#"device.driver == "gpu.nvidia.com""#,
            r#"device.attributes["gpu.nvidia.com"].productName == "NVIDIA A100-SXM4-40GB""#,
            r#"device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA A100")"#,
            r#"device.attributes["gpu.nvidia.com"].index == 3"#,
            r#"device.attributes["example.com"].mig == false"#,
            r#"device.capacity["gpu.nvidia.com"].memory.compareTo(quantity("40Gi")) == 0"#,
            r#"device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("39Gi"))"#,
            r#"device.capacity["gpu.nvidia.com"].memory == quantity("40960Mi")"#,
            r#"device.attributes["gpu.nvidia.com"].driverVersion.isGreaterThan(semver("550.0.0"))"#,
            r#"device.attributes["gpu.nvidia.com"].driverVersion.major() == 550"#,
            r#"size(device.attributes["other.example.com"]) == 0"#,
            r#"!has(device.attributes["gpu.nvidia.com"].uuid)"#,
            r#""productName" in device.attributes["gpu.nvidia.com"]"#,
        ];
        for e in yes {
            assert_eq!(eval(e), Ok(true), "{e}");
        }
        let no = [
            r#"device.attributes["gpu.nvidia.com"].productName == "H100""#,
            r#"device.capacity["gpu.nvidia.com"].memory.isLessThan(quantity("40Gi"))"#,
        ];
        for e in no {
            assert_eq!(eval(e), Ok(false), "{e}");
        }
    }

    #[test]
    fn a_missing_attribute_or_a_non_bool_is_an_error() {
        let missing = eval(r#"device.attributes["gpu.nvidia.com"].uuid == "x""#).unwrap_err();
        assert!(missing.to_lowercase().contains("no such key"), "{missing}");
        assert!(eval(r#"device.driver"#).is_err());
        assert!(
            eval(r#"device.driver =="#)
                .unwrap_err()
                .starts_with("compilation failed")
        );
    }
}
