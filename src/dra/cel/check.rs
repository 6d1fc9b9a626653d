//! The types cel-go's checker (`checker/checker.go`, with the standard declarations of
//! `checker/decls` and `common/stdlib`, and the Kubernetes libraries the DRA environment adds)
//! gives a DRA selector's expressions: what decides whether a selector compiles
//! (`CompileCELExpression` wants a bool or the unknown type, `dyn`) and what the cost
//! estimate reads (`cost`).
//!
//! The `cel` crate parses but does not check, so this pass types its AST. It follows the
//! checker where the type is certain and falls back to `dyn` where cel-go would report an
//! error or where an overload is not declared here: a `dyn` never makes a selector fail to
//! compile, so the pass can only accept what upstream refuses for a type error other than
//! the result's (which then fails when it runs), never refuse what upstream accepts.

use std::collections::HashMap;

use cel::IdedExpr;
use cel::common::ast::{EntryExpr, Expr, LiteralValue};

/// A CEL type, as the checker infers it.
#[derive(Debug, Clone, PartialEq)]
pub enum Ty {
    /// The unknown type (`dyn`): an unchecked result.
    Dyn,
    /// What an attribute holds (`apiservercel.AnyType`, printed `any`): unknown as `dyn` is.
    Any,
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Duration,
    Timestamp,
    List(Box<Ty>),
    Map(Box<Ty>, Box<Ty>),
    /// A type value (`int`, `type(x)`).
    Type,
    /// `kubernetes.Quantity`.
    Quantity,
    /// `kubernetes.Semver`.
    Semver,
    /// `kubernetes.DRADevice`, the `device` variable.
    Device,
}

impl Ty {
    /// The type as cel-go prints it (`Type.String`).
    pub fn name(&self) -> String {
        match self {
            Ty::Dyn => "dyn".into(),
            Ty::Any => "any".into(),
            Ty::Null => "null_type".into(),
            Ty::Bool => "bool".into(),
            Ty::Int => "int".into(),
            Ty::Uint => "uint".into(),
            Ty::Double => "double".into(),
            Ty::String => "string".into(),
            Ty::Bytes => "bytes".into(),
            Ty::Duration => "google.protobuf.Duration".into(),
            Ty::Timestamp => "google.protobuf.Timestamp".into(),
            Ty::List(e) => format!("list({})", e.name()),
            Ty::Map(k, v) => format!("map({}, {})", k.name(), v.name()),
            Ty::Type => "type".into(),
            Ty::Quantity => "kubernetes.Quantity".into(),
            Ty::Semver => "kubernetes.Semver".into(),
            Ty::Device => "kubernetes.DRADevice".into(),
        }
    }

    /// Scalars have a size of 1 (`isScalar`).
    pub fn is_scalar(&self) -> bool {
        matches!(
            self,
            Ty::Bool | Ty::Double | Ty::Duration | Ty::Int | Ty::Timestamp | Ty::Uint
        )
    }

    /// Maps and objects, whose field selection costs one (`costSelect`).
    pub fn is_map_or_object(&self) -> bool {
        matches!(self, Ty::Map(..) | Ty::Device | Ty::Quantity | Ty::Semver)
    }

    /// Whether a value of this type may be a `want` at run time.
    pub fn may_be(&self, want: &Ty) -> bool {
        self.is_unknown() || self == want
    }

    /// `dyn` or `any`: a type only known when the expression runs.
    pub fn is_unknown(&self) -> bool {
        matches!(self, Ty::Dyn | Ty::Any)
    }

    fn is_list(&self) -> bool {
        matches!(self, Ty::List(_))
    }
}

/// The attributes of a device: domain → id → value of any type.
fn attributes() -> Ty {
    Ty::Map(
        Box::new(Ty::String),
        Box::new(Ty::Map(Box::new(Ty::String), Box::new(Ty::Any))),
    )
}

/// The capacities of a device: domain → id → quantity.
fn capacity() -> Ty {
    Ty::Map(
        Box::new(Ty::String),
        Box::new(Ty::Map(Box::new(Ty::String), Box::new(Ty::Quantity))),
    )
}

/// The operators and functions that give a bool whatever they are given.
pub const BOOL_FUNCTIONS: [&str; 17] = [
    "_&&_",
    "_||_",
    "!_",
    "@not_strictly_false",
    "@in",
    "_==_",
    "_!=_",
    "_<_",
    "_<=_",
    "_>_",
    "_>=_",
    "matches",
    "startsWith",
    "endsWith",
    "isQuantity",
    "isSemver",
    "isGreaterThan",
];

/// The type of every node of a checked expression, by node id, and the first type error.
#[derive(Default)]
pub struct Types {
    of: HashMap<u64, Ty>,
    /// The node and message of the first error cel-go's checker reports that this pass
    /// finds: an index of a map by a key of another type.
    pub error: Option<(u64, String)>,
}

impl Types {
    /// The type of `e` (`dyn` for a node the pass did not reach).
    pub fn of(&self, e: &IdedExpr) -> Ty {
        self.of.get(&e.id).cloned().unwrap_or(Ty::Dyn)
    }
}

/// Types `e` and its sub-expressions.
pub fn check(e: &IdedExpr) -> Types {
    let mut types = Types::default();
    let mut scope = Vec::new();
    type_of(e, &mut scope, &mut types);
    types
}

/// Two types joined (a list's elements, a conditional's branches): the type when they agree,
/// else `dyn`.
fn join(a: Ty, b: &Ty) -> Ty {
    if a == *b { a } else { Ty::Dyn }
}

fn type_of(e: &IdedExpr, scope: &mut Vec<(String, Ty)>, types: &mut Types) -> Ty {
    let t = match &e.expr {
        Expr::Literal(l) => match l {
            LiteralValue::Boolean(_) => Ty::Bool,
            LiteralValue::Bytes(_) => Ty::Bytes,
            LiteralValue::Double(_) => Ty::Double,
            LiteralValue::Int(_) => Ty::Int,
            LiteralValue::Null => Ty::Null,
            LiteralValue::String(_) => Ty::String,
            LiteralValue::UInt(_) => Ty::Uint,
        },
        Expr::Ident(name) => match scope.iter().rev().find(|(n, _)| n == name) {
            Some((_, t)) => t.clone(),
            None if name == "device" => Ty::Device,
            // The other declared identifiers are the type names.
            None if super::DECLARED.contains(&name.as_str()) => Ty::Type,
            None => Ty::Dyn,
        },
        Expr::Select(s) => {
            let operand = type_of(&s.operand, scope, types);
            if s.test {
                Ty::Bool
            } else {
                select(&operand, &s.field)
            }
        }
        Expr::Call(c) => {
            let target = c.target.as_ref().map(|t| type_of(t, scope, types));
            let args: Vec<Ty> = (c.args.iter()).map(|a| type_of(a, scope, types)).collect();
            if let (None, "_[_]", [Ty::Map(key, value), index]) =
                (&types.error, c.func_name.as_str(), args.as_slice())
                && !index.is_unknown()
                && !key.is_unknown()
                && **key != *index
            {
                let map = Ty::Map(key.clone(), value.clone());
                let message = format!(
                    "found no matching overload for '_[_]' applied to '({}, {})'",
                    map.name(),
                    index.name()
                );
                types.error = Some((e.id, message));
            }
            call(&c.func_name, target.as_ref(), &args)
        }
        Expr::List(l) => {
            let mut elements = l.elements.iter().map(|x| type_of(x, scope, types));
            let first = elements.next();
            let element = match first {
                Some(first) => elements.fold(first, |acc, t| join(acc, &t)),
                None => Ty::Dyn,
            };
            Ty::List(Box::new(element))
        }
        Expr::Map(m) => {
            let mut key = None;
            let mut value = None;
            for entry in &m.entries {
                if let EntryExpr::MapEntry(entry) = &entry.expr {
                    let k = type_of(&entry.key, scope, types);
                    let v = type_of(&entry.value, scope, types);
                    key = Some(key.map_or(k.clone(), |acc| join(acc, &k)));
                    value = Some(value.map_or(v.clone(), |acc| join(acc, &v)));
                }
            }
            Ty::Map(
                Box::new(key.unwrap_or(Ty::Dyn)),
                Box::new(value.unwrap_or(Ty::Dyn)),
            )
        }
        Expr::Struct(s) => {
            for entry in &s.entries {
                match &entry.expr {
                    EntryExpr::StructField(f) => {
                        type_of(&f.value, scope, types);
                    }
                    EntryExpr::MapEntry(m) => {
                        type_of(&m.key, scope, types);
                        type_of(&m.value, scope, types);
                    }
                }
            }
            Ty::Dyn
        }
        Expr::Comprehension(c) => {
            let range = type_of(&c.iter_range, scope, types);
            let init = type_of(&c.accu_init, scope, types);
            let (first, second) = match &range {
                Ty::List(e) => (Ty::Int, (**e).clone()),
                Ty::Map(k, v) => ((**k).clone(), (**v).clone()),
                _ => (Ty::Dyn, Ty::Dyn),
            };
            let depth = scope.len();
            match &c.iter_var2 {
                // Two variables: index or key, then value.
                Some(second_var) => {
                    scope.push((c.iter_var.clone(), first));
                    scope.push((second_var.clone(), second));
                }
                None if range.is_list() => scope.push((c.iter_var.clone(), second)),
                None => scope.push((c.iter_var.clone(), first)),
            }
            // An empty list literal starts a `map` or `filter`: the accumulator takes the
            // type the step gives it (cel-go unifies the list's type parameter with it).
            let empty_start = matches!(&c.accu_init.expr, Expr::List(l) if l.elements.is_empty());
            scope.push((c.accu_var.clone(), init.clone()));
            type_of(&c.loop_cond, scope, types);
            let step = type_of(&c.loop_step, scope, types);
            if empty_start && step.is_list() {
                scope.last_mut().expect("pushed").1 = step;
            }
            let result = type_of(&c.result, scope, types);
            scope.truncate(depth);
            result
        }
        Expr::Unspecified => Ty::Dyn,
    };
    types.of.insert(e.id, t.clone());
    t
}

/// `operand.field`.
fn select(operand: &Ty, field: &str) -> Ty {
    match operand {
        Ty::Device => match field {
            "driver" => Ty::String,
            "attributes" => attributes(),
            "capacity" => capacity(),
            "allowMultipleAllocations" => Ty::Bool,
            _ => Ty::Dyn,
        },
        Ty::Map(_, v) => (**v).clone(),
        _ => Ty::Dyn,
    }
}

/// The result type of a call of `name` on `target` with `args`.
fn call(name: &str, target: Option<&Ty>, args: &[Ty]) -> Ty {
    let arg = |i: usize| args.get(i).cloned().unwrap_or(Ty::Dyn);
    let on = target.cloned().unwrap_or(Ty::Dyn);
    match name {
        _ if BOOL_FUNCTIONS.contains(&name) => Ty::Bool,
        "isLessThan" | "isInteger" | "isSorted" => Ty::Bool,
        "contains" if on.may_be(&Ty::String) => Ty::Bool,
        "_+_" | "_-_" | "_*_" | "_/_" | "_%_" => {
            let (a, b) = (arg(0), arg(1));
            match (&a, &b) {
                (Ty::Timestamp, Ty::Timestamp) if name == "_-_" => Ty::Duration,
                (Ty::Timestamp, Ty::Duration) | (Ty::Duration, Ty::Timestamp) => Ty::Timestamp,
                // An empty list literal's element type is open (`[] + [1]` is a list(int)).
                (Ty::List(x), Ty::List(y)) if x.is_unknown() => Ty::List(y.clone()),
                (Ty::List(x), Ty::List(y)) => Ty::List(Box::new(join((**x).clone(), y))),
                _ => join(a, &b),
            }
        }
        "-_" => arg(0),
        "_?_:_" => join(arg(1), &arg(2)),
        "_[_]" => match arg(0) {
            Ty::List(e) => *e,
            Ty::Map(_, v) => *v,
            _ => Ty::Dyn,
        },
        "size" | "compareTo" | "asInteger" | "sign" | "major" | "minor" | "patch" | "indexOf"
        | "lastIndexOf" | "int" => Ty::Int,
        "getFullYear" | "getMonth" | "getDayOfYear" | "getDayOfMonth" | "getDate"
        | "getDayOfWeek" | "getHours" | "getMinutes" | "getSeconds" | "getMilliseconds" => Ty::Int,
        "uint" => Ty::Uint,
        "double" | "asApproximateFloat" => Ty::Double,
        "string" | "charAt" | "lowerAscii" | "upperAscii" | "replace" | "substring" | "trim"
        | "format" | "join" | "find" | "strings.quote" => Ty::String,
        "reverse" if on == Ty::String => Ty::String,
        "bytes" => Ty::Bytes,
        "bool" => Ty::Bool,
        "type" => Ty::Type,
        "duration" => Ty::Duration,
        "timestamp" => Ty::Timestamp,
        "quantity" => Ty::Quantity,
        "semver" => Ty::Semver,
        "add" | "sub" if on == Ty::Quantity => Ty::Quantity,
        "split" | "findAll" => Ty::List(Box::new(Ty::String)),
        "reverse" | "distinct" | "sort" | "slice" if on.is_list() => on,
        "lists.range" => Ty::List(Box::new(Ty::Int)),
        "sum" | "min" | "max" => match on {
            Ty::List(e) => *e,
            _ => Ty::Dyn,
        },
        _ => Ty::Dyn,
    }
}
