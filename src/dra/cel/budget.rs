//! The runtime cost limit (`cel.CostLimit(CELSelectorExpressionMaxCost)` in `compile.go`,
//! cel-go's `interpreter/runtimecost.go`): an evaluation that spends more than the limit
//! stops with `operation cancelled: actual cost limit exceeded`.
//!
//! cel-go counts the cost of every step it evaluates; the `cel` crate counts nothing. A
//! selector whose estimate is within the limit and that calls only functions the estimate
//! models ([`modelled`]) cannot spend more than its estimate (cel-go's guarantee, which
//! `compile_test.go` checks: the actual cost never exceeds the estimate), so it runs as
//! compiled. Any other selector — one the API server would refuse for its cost, which only
//! an object that skipped create-time checks can hold — runs instrumented: its expression is
//! rewritten so that evaluating it charges a budget of the same limit.
//! - every comprehension charges, before it iterates, its range's size times the steps of
//!   one iteration (the identifiers, selections and calls of its condition and step);
//! - every call's result charges its size (a tenth of a string's length, as cel-go's
//!   string traversal factor, and a list's or map's entries), so that no value outgrows the
//!   budget by more than one step;
//! - the calls whose result can outgrow their inputs by more than that (`replace`, `join`)
//!   charge their result's size before they build it. (`lists.range`, which could too, does
//!   not compile: `lists` is no declared identifier, as in 1.34's environment for new
//!   expressions, which does not have the lists extension yet.)
//!
//! Once the budget is spent every further charge fails, and the evaluation's answer is the
//! limit's error whatever it would have been. The charges approximate cel-go's (which
//! charges each step as it runs, so a loop that stops early costs less there): the answer
//! differs from upstream's only for a selector whose cost is near the limit and that the
//! API server refuses anyway.

use std::cell::Cell;
use std::sync::Arc;

use cel::IdedExpr;
use cel::common::ast::{CallExpr, Expr, LiteralValue};
use cel::objects::Value;
use cel::{Context, ExecutionError};

use super::check::{BOOL_FUNCTIONS, Ty, Types};
use super::{children, children_mut};

/// `resourceapi.CELSelectorExpressionMaxCost`: the limit of the estimate at create time and
/// of the actual cost at run time.
pub const MAX_COST: u64 = 1_000_000;

/// cel-go's error when the runtime cost exceeds the limit.
pub const LIMIT_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";

thread_local! {
    /// What the evaluation under way on this thread has left to spend.
    static LEFT: Cell<u64> = const { Cell::new(MAX_COST) };
    /// Whether it ran out.
    static EXCEEDED: Cell<bool> = const { Cell::new(false) };
}

/// The functions whose cost the estimate models, so that a selector within the estimate
/// needs no budget: operators, the standard functions, the strings extension and the
/// Kubernetes libraries `dra::cel` evaluates. Not `replace` and `join`, whose results the
/// estimate does not bound (cel-go charges their traversal after building them), nor
/// `format` and the lists extension.
pub fn modelled(name: &str) -> bool {
    BOOL_FUNCTIONS.contains(&name)
        || matches!(
            name,
            "_+_"
                | "_-_"
                | "_*_"
                | "_/_"
                | "_%_"
                | "-_"
                | "_?_:_"
                | "_[_]"
                | "size"
                | "int"
                | "uint"
                | "double"
                | "string"
                | "bytes"
                | "bool"
                | "dyn"
                | "type"
                | "contains"
                | "charAt"
                | "indexOf"
                | "lastIndexOf"
                | "lowerAscii"
                | "upperAscii"
                | "split"
                | "substring"
                | "trim"
                | "strings.quote"
                | "find"
                | "findAll"
                | "quantity"
                | "semver"
                | "compareTo"
                | "isLessThan"
                | "isInteger"
                | "asInteger"
                | "sign"
                | "major"
                | "minor"
                | "patch"
        )
}

/// Whether every call of `e` is [`modelled`].
pub fn all_modelled(e: &IdedExpr) -> bool {
    let mut ok = true;
    visit(e, &mut |x| {
        if let Expr::Call(c) = &x.expr {
            ok &= modelled(&c.func_name);
        }
    });
    ok
}

/// Calls `f` on `e` and every node below it.
fn visit(e: &IdedExpr, f: &mut dyn FnMut(&IdedExpr)) {
    f(e);
    for child in children(e) {
        visit(child, f);
    }
}

/// The steps one iteration of a loop evaluates: identifiers, selections and calls of `e`,
/// without what nested loops iterate (they charge for themselves).
fn steps(e: &IdedExpr) -> u64 {
    match &e.expr {
        Expr::Comprehension(c) => 1 + steps(&c.iter_range) + steps(&c.accu_init),
        Expr::Literal(_) | Expr::Unspecified => 0,
        _ => 1 + children(e).into_iter().map(steps).sum::<u64>(),
    }
}

/// Calls whose result is not charged: the short-circuiting operators (their operands are)
/// and a loop's accumulation step (`@result + [x]`, whose result the loop's charge covers
/// and which the interpreter builds in place only while it keeps that shape).
fn uncharged(c: &CallExpr) -> bool {
    let accumulates = c.func_name == "_+_"
        && matches!(c.args.first().map(|a| &a.expr), Some(Expr::Ident(n)) if n.starts_with('@'));
    accumulates
        || matches!(
            c.func_name.as_str(),
            "_&&_" | "_||_" | "_?_:_" | "@not_strictly_false" | "!_"
        )
}

/// Functions replaced by versions that charge their result before building it.
fn guarded(name: &str) -> Option<&'static str> {
    match name {
        "replace" => Some("@charged_replace"),
        "join" => Some("@charged_join"),
        _ => None,
    }
}

/// `e` rewritten to charge the budget as it evaluates (see the module's doc); `types`: its
/// types, so that calls whose result is a scalar (which costs nothing more) are left alone.
pub fn instrument(e: &IdedExpr, types: &Types) -> IdedExpr {
    let mut out = e.clone();
    rewrite(&mut out, types);
    out
}

fn call(id: u64, name: &str, args: Vec<IdedExpr>) -> IdedExpr {
    IdedExpr {
        id,
        expr: Expr::Call(CallExpr {
            func_name: name.to_owned(),
            target: None,
            args,
        }),
    }
}

fn rewrite(e: &mut IdedExpr, types: &Types) {
    let ty = types.of(e);
    let scalar = ty.is_scalar() || ty == Ty::Bool;
    let per_iteration = match &e.expr {
        Expr::Comprehension(c) => 1 + steps(&c.loop_cond) + steps(&c.loop_step),
        _ => 0,
    };
    for child in children_mut(e) {
        rewrite(child, types);
    }
    match &mut e.expr {
        Expr::Call(c) => {
            if let Some(name) = guarded(&c.func_name) {
                c.func_name = name.to_owned();
                // The target, if any, becomes the first argument.
                if let Some(t) = c.target.take() {
                    c.args.insert(0, *t);
                }
            }
            if !uncharged(c) && !scalar {
                let inner = std::mem::take(e);
                *e = call(inner.id, "@charge", vec![inner]);
            }
        }
        Expr::Comprehension(c) => {
            let range = std::mem::take(&mut c.iter_range);
            let id = range.id;
            let k = IdedExpr {
                id,
                expr: Expr::Literal(LiteralValue::Int((per_iteration as i64).into())),
            };
            c.iter_range = call(id, "@charge_range", vec![range, k]);
        }
        _ => {}
    }
}

/// Spends `cost`; an error once the budget is spent.
fn spend(cost: u64) -> Result<(), ExecutionError> {
    let left = LEFT.get();
    if EXCEEDED.get() || cost > left {
        EXCEEDED.set(true);
        return Err(ExecutionError::function_error("@charge", LIMIT_EXCEEDED));
    }
    LEFT.set(left - cost);
    Ok(())
}

/// What a value's size costs: a tenth of a string's or bytes' length (rounded up), a list's
/// or map's entries.
fn size_cost(v: &Value) -> u64 {
    match v {
        Value::String(s) => (s.len() as u64).div_ceil(10),
        Value::Bytes(b) => (b.len() as u64).div_ceil(10),
        Value::List(l) => l.len() as u64,
        Value::Map(m) => m.map.len() as u64,
        _ => 0,
    }
}

/// The functions an instrumented expression calls.
pub fn register(context: &mut Context) {
    let _ = context.add_function("@charge", |v: Value| -> Result<Value, ExecutionError> {
        spend(size_cost(&v))?;
        Ok(v)
    });
    let _ = context.add_function(
        "@charge_range",
        |range: Value, k: i64| -> Result<Value, ExecutionError> {
            let count = match &range {
                Value::List(l) => l.len() as u64,
                Value::Map(m) => m.map.len() as u64,
                _ => 1,
            };
            spend(count.saturating_mul(k.max(1) as u64))?;
            Ok(range)
        },
    );
    let _ = context.add_function(
        "@charged_join",
        |args: cel::extractors::Arguments| -> Result<Value, ExecutionError> {
            charged_join(&args.0)
        },
    );
    let _ = context.add_function(
        "@charged_replace",
        |args: cel::extractors::Arguments| -> Result<Value, ExecutionError> {
            let (s, from, to, n) = match args.0.as_slice() {
                [Value::String(s), Value::String(f), Value::String(t)] => (s, f, t, -1),
                [
                    Value::String(s),
                    Value::String(f),
                    Value::String(t),
                    Value::Int(n),
                ] => (s, f, t, *n),
                _ => {
                    return Err(ExecutionError::function_error(
                        "replace",
                        "no such overload",
                    ));
                }
            };
            let occurrences = if from.is_empty() {
                s.chars().count() as u64 + 1
            } else {
                s.matches(from.as_str()).count() as u64
            };
            let replaced = if n < 0 {
                occurrences
            } else {
                occurrences.min(n as u64)
            };
            let length = (s.len() as u64).saturating_add(replaced.saturating_mul(to.len() as u64));
            spend(length.div_ceil(10))?;
            let out = if n < 0 {
                s.replace(from.as_str(), to)
            } else {
                s.replacen(from.as_str(), to, n as usize)
            };
            Ok(Value::String(Arc::new(out)))
        },
    );
}

/// `list.join(separator)`, its result's size charged first.
fn charged_join(args: &[Value]) -> Result<Value, ExecutionError> {
    let (list, separator) = match args {
        [Value::List(l)] => (l, ""),
        [Value::List(l), Value::String(s)] => (l, s.as_str()),
        _ => return Err(ExecutionError::function_error("join", "no such overload")),
    };
    let mut parts = Vec::with_capacity(list.len());
    for item in list.iter() {
        match item {
            Value::String(s) => parts.push(s.as_str()),
            _ => return Err(ExecutionError::function_error("join", "no such overload")),
        }
    }
    let length = (parts.iter().map(|p| p.len() as u64).sum::<u64>()).saturating_add(
        (parts.len().saturating_sub(1) as u64).saturating_mul(separator.len() as u64),
    );
    spend(length.div_ceil(10))?;
    Ok(Value::String(Arc::new(parts.join(separator))))
}

/// Runs `evaluate` with a full budget; the limit's error if it ran out, whatever the
/// evaluation answered.
pub fn within<T>(evaluate: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    LEFT.set(MAX_COST);
    EXCEEDED.set(false);
    let answer = evaluate();
    if EXCEEDED.get() {
        return Err(LIMIT_EXCEEDED.to_owned());
    }
    answer
}
