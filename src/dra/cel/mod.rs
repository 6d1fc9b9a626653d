//! CEL device selectors as DRA compiles and evaluates them: a port of kubernetes
//! `staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go` (`CompileCELExpression`,
//! `DeviceMatches`) over the `cel` crate (cel-rust), the maintained Rust CEL interpreter,
//! which parses and evaluates but neither checks types nor counts costs. What cel-go adds
//! there is ported beside it:
//! - `check`: the checker's types, for the result type a selector must have (a bool or the
//!   unknown type, `must evaluate to bool or the unknown type, not int`);
//! - `cost`: the worst-case cost estimate, which the API server compares with
//!   `CELSelectorExpressionMaxCost` when it admits a selector (`dra::api`);
//! - `budget`: the runtime cost limit, which stops an evaluation that spends more
//!   (`operation cancelled: actual cost limit exceeded`).
//!
//! The `device` variable is `device`'s; the Kubernetes libraries (`quantity`, `semver`,
//! `find`) are `library`'s.

use std::sync::Arc;

use cel::objects::Value;
use cel::{Context, Env, ExecutionError, Program};

use crate::model::quantity::Quantity;

mod budget;
mod check;
mod cost;
mod device;
mod library;

pub use budget::{LIMIT_EXCEEDED, MAX_COST};
pub use device::Device;

use check::Ty;
use device::{DeviceVal, attribute_value, split_name};

/// A compiled selector.
pub struct Selector {
    program: Program,
    /// What it reads of the device, when it can read nothing else (see [`Read`]).
    reads: Option<Vec<Read>>,
    /// The worst-case cost cel-go estimates (`CompilationResult.MaxCost`).
    max_cost: u64,
    /// The expression rewritten to charge the runtime cost limit, when its estimate does
    /// not bound it (`budget`).
    budgeted: Option<cel::IdedExpr>,
    /// How deep the expression nests: a deep one is evaluated on a thread with room for it.
    depth: usize,
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

impl Selector {
    /// `CompileCELExpression`: a parse error reads as upstream's `compilation failed: …`.
    pub fn compile(expression: &str) -> Result<Selector, String> {
        on_deep_stack(|| Selector::compile_here(expression))
            .unwrap_or_else(|| Err("compilation failed: the expression could not be parsed".into()))
    }

    /// [`Self::compile`] on this thread.
    fn compile_here(expression: &str) -> Result<Selector, String> {
        let program = parse(expression)?;
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
        let root = program.expression();
        let types = check::check(root);
        if let Some((at, message)) = &types.error {
            let start = (program.source_info().offset_for(*at)).map_or(0, |(s, _)| s as usize);
            return Err(format!(
                "compilation failed: {}",
                issue(expression, start, message)
            ));
        }
        let output = types.of(root);
        if !(output == Ty::Bool || output.is_unknown()) {
            return Err(format!(
                "must evaluate to bool or the unknown type, not {}",
                output.name()
            ));
        }
        let max_cost = cost::estimate(root, &types).max;
        let budgeted = (max_cost > MAX_COST || !budget::all_modelled(root))
            .then(|| budget::instrument(root, &types));
        let mut reads = Vec::new();
        let reads = collect_reads(root, &mut reads).then_some(reads);
        Ok(Selector {
            depth: depth(root),
            program,
            reads,
            max_cost,
            budgeted,
        })
    }

    /// The worst-case cost of evaluating the selector, as the API server estimates it.
    pub fn max_cost(&self) -> u64 {
        self.max_cost
    }

    /// What the selector reads of a device, if it reads nothing but those parts.
    pub fn reads(&self) -> Option<&[Read]> {
        self.reads.as_deref()
    }

    /// `DeviceMatches`: whether the device satisfies the selector; an error when the
    /// expression fails on it (a missing attribute, a type mismatch) or is not a bool.
    pub fn matches(&self, device: &Device) -> Result<bool, String> {
        if self.depth > SHALLOW {
            return on_deep_stack(|| self.matches_here(device))
                .unwrap_or_else(|| Err("the selector could not be evaluated".into()));
        }
        self.matches_here(device)
    }

    /// [`Self::matches`] on this thread.
    fn matches_here(&self, device: &Device) -> Result<bool, String> {
        let mut context = Context::with_env(Arc::clone(&ENV));
        library::register(&mut context);
        context.add_variable_as_val("device", Box::new(DeviceVal::new(device)?));
        match &self.budgeted {
            None => result(self.program.execute(&context)),
            Some(expression) => {
                budget::register(&mut context);
                budget::within(|| result(context.resolve(expression)))
            }
        }
    }
}

/// cel-go's parser limit on nesting (`maxRecursionDepth`), past which it refuses an
/// expression.
const MAX_DEPTH: usize = 250;

/// Parses `expression` and refuses one nested deeper than cel-go's parser allows. The `cel`
/// crate's parser recurses once per operator of a chain (`1 + 1 + …`), which a selector of
/// 10240 bytes can nest thousands deep: [`Selector::compile`] runs on a thread with room for
/// that, and a selector nested deeper than [`SHALLOW`] is evaluated on one too.
fn parse(expression: &str) -> Result<Program, String> {
    let program = ENV
        .compile(expression)
        .map_err(|e| format!("compilation failed: {e}"))?;
    if depth(program.expression()) > MAX_DEPTH {
        return Err(format!(
            "compilation failed: ERROR: <input>:-1:0: expression recursion limit exceeded: {MAX_DEPTH}"
        ));
    }
    Ok(program)
}

/// `f` on a thread with a stack of [`DEEP_STACK`]; `None` if no such thread could be made
/// or `f` panicked.
fn on_deep_stack<T: Send>(f: impl FnOnce() -> T + Send) -> Option<T> {
    std::thread::scope(|scope| {
        let thread = std::thread::Builder::new().stack_size(DEEP_STACK);
        thread.spawn_scoped(scope, f).ok()?.join().ok()
    })
}

/// How deep an expression may nest and still be evaluated on the caller's thread (whose
/// stack may be the 2 MiB of a worker thread, and a debug build's frames are large).
const SHALLOW: usize = 32;

/// The stack of the thread that compiles a selector, or evaluates a deep one: 10240 bytes of
/// `1+` need about 30 MiB to parse in a debug build (untouched pages cost nothing).
const DEEP_STACK: usize = 256 << 20;

/// How deep `e` nests.
fn depth(e: &cel::IdedExpr) -> usize {
    1 + children(e).into_iter().map(depth).max().unwrap_or(0)
}

/// The sub-expressions of `e`: a call's target and arguments, a list's elements, a map's or
/// struct's keys and values, a comprehension's five parts.
pub(super) fn children(e: &cel::IdedExpr) -> Vec<&cel::IdedExpr> {
    use cel::common::ast::{EntryExpr, Expr};
    fn entries(entries: &[cel::common::ast::IdedEntryExpr]) -> Vec<&cel::IdedExpr> {
        (entries.iter())
            .flat_map(|entry| match &entry.expr {
                EntryExpr::MapEntry(m) => vec![&m.key, &m.value],
                EntryExpr::StructField(f) => vec![&f.value],
            })
            .collect()
    }
    match &e.expr {
        Expr::Select(s) => vec![&*s.operand],
        Expr::Call(c) => c.target.iter().map(|t| &**t).chain(&c.args).collect(),
        Expr::List(l) => l.elements.iter().collect(),
        Expr::Map(m) => entries(&m.entries),
        Expr::Struct(s) => entries(&s.entries),
        Expr::Comprehension(c) => vec![
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ],
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => Vec::new(),
    }
}

/// [`children`], to change.
pub(super) fn children_mut(e: &mut cel::IdedExpr) -> Vec<&mut cel::IdedExpr> {
    use cel::common::ast::{EntryExpr, Expr};
    fn entries(entries: &mut [cel::common::ast::IdedEntryExpr]) -> Vec<&mut cel::IdedExpr> {
        (entries.iter_mut())
            .flat_map(|entry| match &mut entry.expr {
                EntryExpr::MapEntry(m) => vec![&mut m.key, &mut m.value],
                EntryExpr::StructField(f) => vec![&mut f.value],
            })
            .collect()
    }
    match &mut e.expr {
        Expr::Select(s) => vec![&mut *s.operand],
        Expr::Call(c) => (c.target.iter_mut().map(|t| &mut **t))
            .chain(&mut c.args)
            .collect(),
        Expr::List(l) => l.elements.iter_mut().collect(),
        Expr::Map(m) => entries(&mut m.entries),
        Expr::Struct(s) => entries(&mut s.entries),
        Expr::Comprehension(c) => vec![
            &mut c.iter_range,
            &mut c.accu_init,
            &mut c.loop_cond,
            &mut c.loop_step,
            &mut c.result,
        ],
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => Vec::new(),
    }
}

/// An evaluation's answer as `DeviceMatches` gives it: a bool, or an error.
fn result(evaluated: Result<Value, ExecutionError>) -> Result<bool, String> {
    match evaluated {
        Ok(Value::Bool(b)) => Ok(b),
        Ok(other) => Err(format!(
            "CEL result of type {} could not be converted to bool",
            type_name(&other)
        )),
        Err(ExecutionError::NoSuchKey(key)) => Err(format!("no such key: {key}")),
        Err(e) => Err(e.to_string()),
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

/// Identifiers CEL declares: `device`, and the type names.
pub(super) const DECLARED: [&str; 11] = [
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    use k8s_openapi::api::resource::v1::{DeviceAttribute, DeviceCapacity};
    use k8s_openapi::apimachinery::pkg::api::resource::Quantity as K8sQuantity;

    fn eval(expression: &str) -> Result<bool, String> {
        eval_with(expression, false)
    }

    /// Evaluates `expression` on a test device; `budgeted`: always under the runtime budget.
    fn eval_with(expression: &str, budgeted: bool) -> Result<bool, String> {
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
        let mut selector = Selector::compile(expression)?;
        if budgeted {
            let root = selector.program.expression();
            selector.budgeted = Some(budget::instrument(root, &check::check(root)));
        }
        selector.matches(&device)
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

    #[test]
    fn a_selector_must_evaluate_to_a_bool_or_the_unknown_type() {
        let refused = |e: &str| Selector::compile(e).err().unwrap_or_default();
        assert_eq!(
            refused("1 + 2"),
            "must evaluate to bool or the unknown type, not int"
        );
        assert_eq!(
            refused("device.driver"),
            "must evaluate to bool or the unknown type, not string"
        );
        assert_eq!(
            refused("[1, 2].map(x, x * 2)"),
            "must evaluate to bool or the unknown type, not list(int)"
        );
        assert_eq!(
            refused(r#"device.capacity["d"].memory"#),
            "must evaluate to bool or the unknown type, not kubernetes.Quantity"
        );
        // An attribute's value has the unknown type: it compiles, and fails when it is no bool.
        assert!(Selector::compile(r#"device.attributes["d"].x"#).is_ok());
        // validation_resourceclaim_test.go, "CEL-compile-errors".
        assert_eq!(
            refused("device.attributes[true].someBoolean"),
            "compilation failed: ERROR: <input>:1:18: found no matching overload for '_[_]' applied to '(map(string, map(string, any)), bool)'\n | device.attributes[true].someBoolean\n | .................^"
        );
        assert!(Selector::compile("1 + 2 == 3").is_ok());
    }

    #[test]
    fn nested_macros_exceed_the_estimate_and_the_runtime_limit() {
        let ten = "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]";
        let mut e = "int('1'.find('[0-9]*')) < 100".to_string();
        for v in ["z5", "z4", "z3", "z2", "z", "y", "x"] {
            e = format!("{ten}.all({v}, {e})");
        }
        let selector = Selector::compile(&e).expect("compiles");
        assert_eq!(selector.max_cost(), 85_555_551);
        assert!(selector.budgeted.is_some());
        assert_eq!(eval(&e), Err(LIMIT_EXCEEDED.to_string()));
    }

    #[test]
    fn a_result_that_would_outgrow_the_budget_is_refused_before_it_is_built() {
        // 10, then 100, then 10,000 and then 10^8 characters: the last is charged first.
        let bomb = r#"cel.bind(a, "xxxxxxxxxx", cel.bind(b, a.replace("x", a), cel.bind(c, b.replace("x", b), c.replace("x", c).size() > 0)))"#;
        assert_eq!(eval(bomb), Err(LIMIT_EXCEEDED.to_string()));
        // 10^4 pieces of 10^4 characters, joined by as many.
        let join = r#"cel.bind(a, "xxxxxxxxxx".replace("x", "xxxxxxxxxx").replace("x", "xxxxxxxxxx").replace("x", "xxxxxxxxxx"), a.split("").join(a).size() > 0)"#;
        assert_eq!(eval(join), Err(LIMIT_EXCEEDED.to_string()));
    }

    #[test]
    fn the_budget_changes_no_answer_within_it() {
        let expressions = [
            r#"device.driver == "gpu.nvidia.com""#,
            r#"device.attributes["gpu.nvidia.com"].productName.startsWith("NVIDIA A100")"#,
            r#"device.attributes["gpu.nvidia.com"].productName.lowerAscii().matches("^.*a100.*$")"#,
            r#"device.capacity["gpu.nvidia.com"].memory.isGreaterThan(quantity("39Gi"))"#,
            r#"device.attributes["gpu.nvidia.com"].exists(k, k == "index")"#,
            r#"[1, 2, 3].map(x, x * 2).filter(x, x > 2).size() == 2"#,
            r#"["a", "b"].join("-") == "a-b" && "aXbX".replace("X", "--") == "a--b--""#,
            r#"cel.bind(d, device.attributes["gpu.nvidia.com"], d.index == 3 && d.driverVersion.major() == 550)"#,
            r#"device.attributes["gpu.nvidia.com"].uuid == "x""#,
            r#"device.attributes["gpu.nvidia.com"].productName.findAll("[0-9]+").size() == 2"#,
            r#""abc".replace("", "-") == "-a-b-c-" && "aaa".replace("a", "b", 2) == "bba""#,
        ];
        for e in expressions {
            assert_eq!(eval_with(e, true), eval_with(e, false), "{e}");
        }
    }
}

#[cfg(test)]
mod depth_tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn chains_deeper_than_cel_go_allows_are_refused_without_exhausting_the_stack() {
        let long = format!("{} == 1", vec!["1"; 2500].join(" + "));
        let refused = Selector::compile(&long).err().unwrap_or_default();
        assert!(refused.contains("recursion limit exceeded"), "{refused}");
        // One that nests as deep as cel-go allows compiles and runs.
        let fine = format!("{} == 200", vec!["1"; 200].join(" + "));
        let selector = Selector::compile(&fine).expect("compiles");
        let none = BTreeMap::new();
        let device = Device {
            allow_multiple_allocations: None,
            driver: "d",
            attributes: &none,
            capacity: &BTreeMap::new(),
        };
        assert_eq!(selector.matches(&device), Ok(true));
    }
}
