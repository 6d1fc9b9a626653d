//! The worst-case cost of a selector, as `env.EstimateCost` computes it when the API server
//! admits one (`validateCELSelector` refuses a selector whose estimate exceeds
//! `CELSelectorExpressionMaxCost`). A port of cel-go v0.26's `checker/cost.go` (the
//! version Kubernetes 1.34 builds with) over the `cel` crate's AST and the types of
//! [`check`](super::check), with the Kubernetes library's `CostEstimator`
//! (`apiserver/pkg/cel/library/cost.go`) for its functions and the DRA `sizeEstimator` of
//! `dynamic-resource-allocation/cel/compile.go` for the sizes of what `device` holds.
//!
//! Approximations: the overloads of a call are those [`check`](super::check)'s types admit
//! (cel-go's checker resolves them from its declarations; the cost-relevant ones — string,
//! bytes and list concatenation, string and bytes comparisons, `in` a list, the string
//! functions — are told apart the same way), and functions the estimator does not know cost
//! one plus their arguments, as cel-go's default does. Upstream's `compile_test.go` costs run
//! as data (`tests/data/dra/cel-cases.yaml`).

use std::collections::HashMap;

use cel::IdedExpr;
use cel::common::ast::{EntryExpr, Expr, LiteralValue};

use super::check::{Ty, Types};

/// `common.StringTraversalCostFactor`.
const STRING_TRAVERSAL: f64 = 0.1;
/// `common.RegexStringLengthCostFactor`.
const REGEX_LENGTH: f64 = 0.25;
/// `common.SelectAndIdentCost`.
const SELECT_AND_IDENT: u64 = 1;
/// `common.ListCreateBaseCost`, `MapCreateBaseCost`, `StructCreateBaseCost`.
const LIST_CREATE: u64 = 10;
const MAP_CREATE: u64 = 30;
const STRUCT_CREATE: u64 = 40;

/// A range of sizes or costs (`SizeEstimate`, `CostEstimate`), saturating at `u64::MAX`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Range {
    pub min: u64,
    pub max: u64,
}

const UNKNOWN: Range = Range {
    min: 0,
    max: u64::MAX,
};

impl Range {
    fn fixed(n: u64) -> Range {
        Range { min: n, max: n }
    }

    fn add(self, o: Range) -> Range {
        Range {
            min: self.min.saturating_add(o.min),
            max: self.max.saturating_add(o.max),
        }
    }

    fn multiply(self, o: Range) -> Range {
        Range {
            min: self.min.saturating_mul(o.min),
            max: self.max.saturating_mul(o.max),
        }
    }

    /// `MultiplyByCostFactor`: rounded up.
    fn factor(self, f: f64) -> Range {
        Range {
            min: by_factor(self.min, f),
            max: by_factor(self.max, f),
        }
    }

    fn union(self, o: Range) -> Range {
        Range {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }
}

/// `multiplyByCostFactor`.
fn by_factor(x: u64, f: f64) -> u64 {
    let x = x as f64;
    if x > 0.0 && f > 0.0 && x > u64::MAX as f64 / f {
        return u64::MAX;
    }
    let ceil = (x * f).ceil();
    if ceil >= 2f64.powi(64) {
        u64::MAX
    } else {
        ceil as u64
    }
}

/// What the DRA environment declares under `device`, for its sizes (`sizeEstimator`).
#[derive(Clone, Copy, PartialEq)]
enum Decl {
    Device,
    Driver,
    MultiAlloc,
    OuterAttributes,
    InnerAttributes,
    Attribute,
    OuterCapacity,
    InnerCapacity,
    Quantity,
    Domain,
    Id,
}

impl Decl {
    /// `MaxElements`: the `resourceapi` limits the declarations carry.
    fn max_elements(self) -> u64 {
        match self {
            Decl::Device | Decl::Quantity => 0,
            Decl::Driver | Decl::Domain => 63,
            Decl::MultiAlloc => 1,
            Decl::Attribute => 64,
            Decl::Id => 32,
            Decl::OuterAttributes
            | Decl::InnerAttributes
            | Decl::OuterCapacity
            | Decl::InnerCapacity => 32,
        }
    }

    fn element(self) -> Option<Decl> {
        match self {
            Decl::OuterAttributes => Some(Decl::InnerAttributes),
            Decl::InnerAttributes => Some(Decl::Attribute),
            Decl::OuterCapacity => Some(Decl::InnerCapacity),
            Decl::InnerCapacity => Some(Decl::Quantity),
            _ => None,
        }
    }

    fn key(self) -> Option<Decl> {
        match self {
            Decl::OuterAttributes | Decl::OuterCapacity => Some(Decl::Domain),
            Decl::InnerAttributes | Decl::InnerCapacity => Some(Decl::Id),
            _ => None,
        }
    }

    fn field(self, name: &str) -> Option<Decl> {
        match (self, name) {
            (Decl::Device, "driver") => Some(Decl::Driver),
            (Decl::Device, "attributes") => Some(Decl::OuterAttributes),
            (Decl::Device, "capacity") => Some(Decl::OuterCapacity),
            (Decl::Device, "allowMultipleAllocations") => Some(Decl::MultiAlloc),
            // Any id of an attribute map: every attribute has the same maximum size.
            (Decl::InnerAttributes, _) => Some(Decl::Attribute),
            _ => None,
        }
    }
}

/// `sizeEstimator.EstimateSize`: the size of what `path` reaches under `device`.
fn declared_size(path: &[String]) -> Option<Range> {
    let (root, rest) = path.split_first()?;
    if root != "device" {
        return None;
    }
    let mut node = Decl::Device;
    for step in rest {
        node = match step.as_str() {
            "@items" | "@values" => node.element()?,
            "@keys" => node.key()?,
            field => node.field(field)?,
        };
    }
    Some(Range {
        min: 0,
        max: node.max_elements(),
    })
}

/// The key and value sizes of a list's or map's entries (`entrySizeEstimate`).
#[derive(Debug, Clone, Copy)]
struct Entries {
    list: bool,
    key: Range,
    value: Range,
}

impl Entries {
    fn union(a: Option<Entries>, b: Option<Entries>) -> Option<Entries> {
        let (a, b) = (a?, b?);
        Some(Entries {
            list: a.list,
            key: a.key.union(b.key),
            value: a.value.union(b.value),
        })
    }
}

/// A variable in scope: a comprehension's, or `cel.bind`'s (`localVar`).
#[derive(Clone)]
struct Local {
    path: Vec<String>,
    size: Option<Range>,
    entries: Option<Entries>,
}

/// The overloads of a call that its cost depends on (cel-go's overload ids).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Overload {
    FormatString,
    StringToBytes,
    BytesToString,
    QuoteString,
    StartsOrEndsWith,
    InList,
    MatchesString,
    ContainsString,
    AndOr,
    Conditional,
    AddString,
    AddBytes,
    AddList,
    /// Comparisons of strings or bytes, `==` and `!=`: by size.
    BySize,
    IndexList,
    IndexMap,
    /// Any other, of cost one plus its arguments.
    Other,
}

/// The worst-case cost of `e`, typed by `types`.
pub fn estimate(e: &IdedExpr, types: &Types) -> Range {
    let mut c = Coster {
        types,
        paths: HashMap::new(),
        sizes: HashMap::new(),
        entries: HashMap::new(),
        locals: HashMap::new(),
    };
    c.cost(e)
}

struct Coster<'t> {
    types: &'t Types,
    paths: HashMap<u64, Vec<String>>,
    sizes: HashMap<u64, Range>,
    entries: HashMap<u64, Entries>,
    locals: HashMap<String, Vec<Local>>,
}

/// The accumulator names cel-go hides from size estimators.
fn is_accumulator(name: &str) -> bool {
    name == "@result" || name == "__result__"
}

impl Coster<'_> {
    fn cost(&mut self, e: &IdedExpr) -> Range {
        match &e.expr {
            Expr::Literal(_) => Range::fixed(0),
            Expr::Ident(name) => {
                let path = match self.local(name) {
                    Some(v) => v.path.clone(),
                    None => vec![name.clone()],
                };
                self.paths.insert(e.id, path);
                Range::fixed(SELECT_AND_IDENT)
            }
            Expr::Select(s) => {
                if s.test {
                    // `has()`: the presence test costs one, then the operand.
                    return Range::fixed(SELECT_AND_IDENT).add(self.cost(&s.operand));
                }
                let mut sum = self.cost(&s.operand);
                if self.types.of(&s.operand).is_map_or_object() {
                    sum = sum.add(Range::fixed(SELECT_AND_IDENT));
                }
                let mut path = self.path(&s.operand);
                path.push(s.field.clone());
                self.paths.insert(e.id, path);
                sum
            }
            Expr::Call(_) => self.call(e),
            Expr::List(l) => {
                let mut sum = Range::default();
                let mut items = Range {
                    min: if l.elements.is_empty() { 0 } else { u64::MAX },
                    max: 0,
                };
                for x in &l.elements {
                    sum = sum.add(self.cost(x));
                    items = items.union(self.size_or_unknown(x));
                }
                self.entries.insert(
                    e.id,
                    Entries {
                        list: true,
                        key: Range::fixed(1),
                        value: items,
                    },
                );
                sum.add(Range::fixed(LIST_CREATE))
            }
            Expr::Map(m) => {
                let empty = m.entries.is_empty();
                let start = Range {
                    min: if empty { 0 } else { u64::MAX },
                    max: 0,
                };
                let (mut sum, mut keys, mut values) = (Range::default(), start, start);
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(entry) = &entry.expr {
                        sum = sum.add(self.cost(&entry.key)).add(self.cost(&entry.value));
                        keys = keys.union(self.size_or_unknown(&entry.key));
                        values = values.union(self.size_or_unknown(&entry.value));
                    }
                }
                self.entries.insert(
                    e.id,
                    Entries {
                        list: false,
                        key: keys,
                        value: values,
                    },
                );
                sum.add(Range::fixed(MAP_CREATE))
            }
            Expr::Struct(s) => {
                let mut sum = Range::default();
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        sum = sum.add(self.cost(&f.value));
                    }
                }
                sum.add(Range::fixed(STRUCT_CREATE))
            }
            Expr::Comprehension(c) if is_bind(c) => {
                // `cel.bind`: lazily initialised, the empty range's cost is kept.
                let mut sum = self.cost(&c.iter_range).add(self.cost(&c.accu_init));
                self.push_local(&c.accu_var, &c.accu_init);
                sum = sum.add(self.cost(&c.result));
                self.pop(&c.accu_var);
                self.copy_sizes(e, &c.result);
                sum
            }
            Expr::Comprehension(c) => {
                let mut sum = self.cost(&c.iter_range).add(self.cost(&c.accu_init));
                self.push_local(&c.accu_var, &c.accu_init);
                match &c.iter_var2 {
                    Some(second) => {
                        self.push_iter(&c.iter_var, &c.iter_range, Iter::Key);
                        self.push_iter(second, &c.iter_range, Iter::Value);
                    }
                    None => self.push_iter(&c.iter_var, &c.iter_range, Iter::Single),
                }
                let loop_cost = self.cost(&c.loop_cond);
                let step_cost = self.cost(&c.loop_step);
                self.pop(&c.iter_var);
                if let Some(second) = &c.iter_var2 {
                    self.pop(second);
                }
                sum = sum.add(self.cost(&c.result));
                self.pop(&c.accu_var);
                let count = self.size_or_unknown(&c.iter_range);
                sum = sum.add(count.multiply(step_cost.add(loop_cost)));
                match &c.accu_init.expr {
                    Expr::Literal(_) => {
                        if let Some(size) = self.size(&c.accu_init) {
                            self.sizes.insert(e.id, size);
                        }
                    }
                    Expr::List(_) | Expr::Map(_) => {
                        self.sizes.insert(e.id, count);
                        if let Some(entries) = self.entry_sizes(&c.loop_step) {
                            self.entries.insert(e.id, entries);
                        }
                    }
                    _ => {}
                }
                sum
            }
            Expr::Unspecified => Range::default(),
        }
    }

    fn local(&self, name: &str) -> Option<&Local> {
        self.locals.get(name).and_then(|stack| stack.last())
    }

    fn pop(&mut self, name: &str) {
        if let Some(stack) = self.locals.get_mut(name) {
            stack.pop();
        }
    }

    /// `pushLocalVar`: a binding with the path, size and entry sizes of its value.
    fn push_local(&mut self, name: &str, value: &IdedExpr) {
        let local = Local {
            path: self.path(value),
            size: self.size(value),
            entries: self.entry_sizes(value),
        };
        self.locals.entry(name.to_owned()).or_default().push(local);
    }

    /// `pushIterKey`, `pushIterValue`, `pushIterSingle`.
    fn push_iter(&mut self, name: &str, range: &IdedExpr, which: Iter) {
        let entries = self.entry_sizes(range);
        let list = match entries {
            Some(e) => e.list,
            None => matches!(self.types.of(range), Ty::List(_)),
        };
        let (size, step) = match (which, list) {
            (Iter::Key, true) => (entries.map(|e| e.key), "@indices"),
            (Iter::Key, false) => (entries.map(|e| e.key), "@keys"),
            (Iter::Value, true) => (entries.map(|e| e.value), "@items"),
            (Iter::Value, false) => (entries.map(|e| e.value), "@values"),
            (Iter::Single, true) => (entries.map(|e| e.value), "@items"),
            (Iter::Single, false) => (entries.map(|e| e.key), "@keys"),
        };
        let mut path = self.path(range);
        path.push(step.to_owned());
        let local = Local {
            path,
            size,
            entries: None,
        };
        self.locals.entry(name.to_owned()).or_default().push(local);
    }

    /// `getPath`.
    fn path(&self, e: &IdedExpr) -> Vec<String> {
        if let Expr::Ident(name) = &e.expr
            && let Some(v) = self.local(name)
        {
            return v.path.clone();
        }
        self.paths.get(&e.id).cloned().unwrap_or_default()
    }

    /// `computeSize`.
    fn size(&self, e: &IdedExpr) -> Option<Range> {
        if let Some(size) = self.sizes.get(&e.id) {
            return Some(*size);
        }
        if let Some(size) = literal_size(e) {
            return Some(size);
        }
        if let Some(size) = declared_size(&self.path(e)) {
            return Some(size);
        }
        if self.types.of(e).is_scalar() {
            return Some(Range::fixed(1));
        }
        if let Expr::Ident(name) = &e.expr {
            return self.local(name).and_then(|v| v.size);
        }
        None
    }

    fn size_or_unknown(&self, e: &IdedExpr) -> Range {
        self.size(e).unwrap_or(UNKNOWN)
    }

    /// `computeEntrySize`.
    fn entry_sizes(&self, e: &IdedExpr) -> Option<Entries> {
        if let Some(entries) = self.entries.get(&e.id) {
            return Some(*entries);
        }
        match &e.expr {
            Expr::Ident(name) => self.local(name).and_then(|v| v.entries),
            _ => None,
        }
    }

    fn copy_sizes(&mut self, to: &IdedExpr, from: &IdedExpr) {
        if let Some(size) = self.size(from) {
            self.sizes.insert(to.id, size);
        }
        if let Some(entries) = self.entry_sizes(from) {
            self.entries.insert(to.id, entries);
        }
    }

    /// `costCall`.
    fn call(&mut self, e: &IdedExpr) -> Range {
        let Expr::Call(call) = &e.expr else {
            return Range::default();
        };
        if call.func_name == "dyn" && call.target.is_none() && call.args.len() == 1 {
            // `maybeUnwrapDynCall`: one, and the argument.
            let cost = self.cost(&call.args[0]);
            self.copy_sizes(e, &call.args[0]);
            return Range::fixed(1).add(cost);
        }
        let arg_costs: Vec<Range> = call.args.iter().map(|a| self.cost(a)).collect();
        let mut sum = Range::default();
        let target = call.target.as_deref();
        if let Some(t) = target {
            sum = sum.add(self.cost(t));
        }
        let args_sum = arg_costs.iter().fold(Range::default(), |s, c| s.add(*c));
        let overloads = self.overloads(&call.func_name, target, &call.args);
        let mut function = Range {
            min: u64::MAX,
            max: 0,
        };
        let mut result: Option<Range> = None;
        for overload in overloads {
            let (cost, size) =
                self.function_cost(e, &call.func_name, overload, target, &call.args, &arg_costs);
            function = function.union(cost.add(args_sum_if(overload, args_sum)));
            if let Some(size) = size {
                result = Some(result.map_or(size, |r| r.union(size)));
            }
            match overload {
                Overload::IndexList | Overload::IndexMap if !call.args.is_empty() => {
                    result = self.entry_sizes(&call.args[0]).map(|e| e.value);
                    let mut path = self.path(&call.args[0]);
                    let step = if overload == Overload::IndexList {
                        "@items"
                    } else {
                        "@values"
                    };
                    path.push(step.to_owned());
                    self.paths.insert(e.id, path);
                }
                _ => {}
            }
            if result.is_none() {
                result = self.size(e);
            }
        }
        if let Some(size) = result {
            self.sizes.insert(e.id, size);
        }
        sum.add(function)
    }

    /// The overloads cel-go's checker would record for the call, as far as cost tells them
    /// apart, from the types of its target and arguments.
    fn overloads(&self, name: &str, target: Option<&IdedExpr>, args: &[IdedExpr]) -> Vec<Overload> {
        let ty = |i: usize| args.get(i).map_or(Ty::Dyn, |a| self.types.of(a));
        let on = target.map(|t| self.types.of(t));
        let both = |want: &Ty| ty(0).may_be(want) && ty(1).may_be(want);
        let mut out = Vec::new();
        match name {
            "_&&_" | "_||_" => out.push(Overload::AndOr),
            "_?_:_" => out.push(Overload::Conditional),
            "_==_" | "_!=_" => out.push(Overload::BySize),
            "_<_" | "_<=_" | "_>_" | "_>=_" => {
                if both(&Ty::String) || both(&Ty::Bytes) {
                    out.push(Overload::BySize);
                }
                if ![Ty::String, Ty::Bytes].contains(&ty(0)) {
                    out.push(Overload::Other);
                }
            }
            "_+_" => {
                if both(&Ty::String) {
                    out.push(Overload::AddString);
                }
                if both(&Ty::Bytes) {
                    out.push(Overload::AddBytes);
                }
                if (matches!(ty(0), Ty::List(_)) || ty(0).is_unknown())
                    && (matches!(ty(1), Ty::List(_)) || ty(1).is_unknown())
                {
                    out.push(Overload::AddList);
                }
                if !(matches!(ty(0), Ty::String | Ty::Bytes | Ty::List(_))
                    || matches!(ty(1), Ty::String | Ty::Bytes | Ty::List(_)))
                {
                    out.push(Overload::Other);
                }
            }
            "@in" => {
                if matches!(ty(1), Ty::List(_)) || ty(1).is_unknown() {
                    out.push(Overload::InList);
                }
                if !matches!(ty(1), Ty::List(_)) {
                    out.push(Overload::Other);
                }
            }
            "_[_]" => {
                if matches!(ty(0), Ty::List(_)) || ty(0).is_unknown() {
                    out.push(Overload::IndexList);
                }
                if !matches!(ty(0), Ty::List(_)) {
                    out.push(Overload::IndexMap);
                }
            }
            "matches" if on.is_some() => out.push(Overload::MatchesString),
            "contains" if on.as_ref().is_some_and(|t| t.may_be(&Ty::String)) => {
                out.push(Overload::ContainsString)
            }
            "startsWith" | "endsWith" => out.push(Overload::StartsOrEndsWith),
            "bytes" if ty(0) == Ty::String => out.push(Overload::StringToBytes),
            "string" if ty(0) == Ty::Bytes => out.push(Overload::BytesToString),
            "format" if on.is_some() => out.push(Overload::FormatString),
            "strings.quote" => out.push(Overload::QuoteString),
            _ => {}
        }
        if out.is_empty() {
            out.push(Overload::Other);
        }
        out
    }

    /// `functionCost`: the call's cost without its arguments' (which [`args_sum_if`] adds)
    /// and its result's size, trying the Kubernetes library's estimator first.
    fn function_cost(
        &mut self,
        e: &IdedExpr,
        name: &str,
        overload: Overload,
        target: Option<&IdedExpr>,
        args: &[IdedExpr],
        arg_costs: &[Range],
    ) -> (Range, Option<Range>) {
        if let Some(estimate) = self.library_cost(name, target, args) {
            return estimate;
        }
        let size = |i: usize| args.get(i).map_or(UNKNOWN, |a| self.size_or_unknown(a));
        match overload {
            Overload::FormatString => {
                if let Some(t) = target {
                    return (self.size_or_unknown(t).factor(STRING_TRAVERSAL), None);
                }
            }
            Overload::StringToBytes if args.len() == 1 => {
                let s = size(0);
                let result = Range {
                    min: s.min,
                    max: s.max.saturating_mul(4),
                };
                return (s.factor(STRING_TRAVERSAL), Some(result));
            }
            Overload::BytesToString if args.len() == 1 => {
                let s = size(0);
                return (
                    s.factor(STRING_TRAVERSAL),
                    Some(Range {
                        min: s.min / 4,
                        max: s.max,
                    }),
                );
            }
            Overload::QuoteString if args.len() == 1 => {
                let s = size(0);
                let result = Range {
                    min: s.min.saturating_add(2),
                    max: s.max.saturating_mul(2).saturating_add(2),
                };
                return (s.factor(STRING_TRAVERSAL), Some(result));
            }
            Overload::StartsOrEndsWith if args.len() == 1 => {
                return (size(0).factor(STRING_TRAVERSAL), None);
            }
            Overload::InList if args.len() == 2 => return (size(1).factor(1.0), None),
            Overload::MatchesString if args.len() == 1 => {
                if let Some(t) = target {
                    let string =
                        (self.size_or_unknown(t).add(Range::fixed(1))).factor(STRING_TRAVERSAL);
                    return (string.multiply(size(0).factor(REGEX_LENGTH)), None);
                }
            }
            Overload::ContainsString if args.len() == 1 => {
                if let Some(t) = target {
                    let string = self.size_or_unknown(t).factor(STRING_TRAVERSAL);
                    return (string.multiply(size(0).factor(STRING_TRAVERSAL)), None);
                }
            }
            Overload::AndOr if arg_costs.len() == 2 => {
                // The right-hand side may be short-circuited.
                let (l, r) = (arg_costs[0], arg_costs[1]);
                return (
                    Range {
                        min: l.min,
                        max: l.add(r).max,
                    },
                    None,
                );
            }
            Overload::Conditional if arg_costs.len() == 3 => {
                let result = size(1).union(size(2));
                let entries =
                    Entries::union(self.entry_sizes(&args[1]), self.entry_sizes(&args[2]));
                if let Some(entries) = entries {
                    self.entries.insert(e.id, entries);
                }
                let cost = arg_costs[0].add(arg_costs[1].union(arg_costs[2]));
                return (cost, Some(result));
            }
            Overload::AddString | Overload::AddBytes | Overload::AddList if args.len() == 2 => {
                let result = size(0).add(size(1));
                let entries =
                    Entries::union(self.entry_sizes(&args[0]), self.entry_sizes(&args[1]));
                if let Some(entries) = entries {
                    self.entries.insert(e.id, entries);
                }
                let cost = match overload {
                    // List concatenation is O(1), but tracked for its size.
                    Overload::AddList => Range::fixed(1),
                    _ => result.factor(STRING_TRAVERSAL),
                };
                return (cost, Some(result));
            }
            Overload::BySize if args.len() == 2 => {
                let smallest = size(0).max.min(size(1).max);
                let cost = Range {
                    min: u64::from(smallest > 0),
                    max: smallest,
                };
                return (cost.factor(STRING_TRAVERSAL), None);
            }
            _ => {}
        }
        (Range::fixed(1), None)
    }

    /// `library.CostEstimator.EstimateCallCost` for the functions a selector can call.
    fn library_cost(
        &self,
        name: &str,
        target: Option<&IdedExpr>,
        args: &[IdedExpr],
    ) -> Option<(Range, Option<Range>)> {
        let size = |e: &IdedExpr| self.size_or_unknown(e);
        let cost = |c: Range| Some((c, None));
        match name {
            "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => {
                let t = target?;
                match self.types.of(t) {
                    Ty::List(element) => {
                        let mut per_element = Range::fixed(1);
                        if matches!(*element, Ty::String | Ty::Bytes) {
                            let mut path = self.path(t);
                            path.push("@items".into());
                            let element_size = declared_size(&path).unwrap_or(UNKNOWN);
                            per_element = per_element.add(element_size.factor(STRING_TRAVERSAL));
                        }
                        cost(size(t).multiply(per_element))
                    }
                    _ => cost(size(t).factor(STRING_TRAVERSAL)),
                }
            }
            "url" | "jsonpatch.escapeKey" if args.len() == 1 => {
                let s = size(&args[0]);
                Some((s.factor(STRING_TRAVERSAL), Some(s)))
            }
            "lowerAscii" | "upperAscii" | "substring" | "trim" => {
                let s = size(target?);
                Some((s.factor(STRING_TRAVERSAL), Some(s)))
            }
            "replace" if args.len() >= 2 => {
                Some(replace_cost(size(target?), size(&args[0]), size(&args[1])))
            }
            "split" => {
                let s = size(target?);
                let mut max = s.max;
                if let Some(Expr::Literal(LiteralValue::Int(n))) = args.get(1).map(|a| &a.expr) {
                    max = *n.inner() as u64;
                }
                Some((
                    s.factor(2.0 * STRING_TRAVERSAL),
                    Some(Range { min: 0, max }),
                ))
            }
            "join" => {
                let t = target?;
                let list = size(t);
                let mut result = Range::default();
                if let Ty::List(_) = self.types.of(t) {
                    let mut path = self.path(t);
                    path.push("@items".into());
                    result = list.multiply(declared_size(&path).unwrap_or(UNKNOWN));
                }
                if let Some(separator) = args.first() {
                    let count = Range {
                        min: list.min.saturating_sub(1),
                        max: list.max.saturating_sub(1),
                    };
                    result = result.add(size(separator).multiply(count));
                }
                Some((result.factor(STRING_TRAVERSAL), Some(result)))
            }
            "find" | "findAll" if !args.is_empty() => {
                let s = size(target?);
                let string = s.add(Range::fixed(1)).factor(STRING_TRAVERSAL);
                let regex = size(&args[0]).factor(REGEX_LENGTH);
                Some((string.multiply(regex), Some(Range { min: 0, max: s.max })))
            }
            "cidr" | "isIP" | "isCIDR" | "ip" | "quantity" | "isQuantity" | "semver"
            | "isSemver"
                if !args.is_empty() =>
            {
                cost(size(&args[0]).factor(STRING_TRAVERSAL))
            }
            "masked"
            | "prefixLength"
            | "family"
            | "isUnspecified"
            | "isLoopback"
            | "isLinkLocalMulticast"
            | "isLinkLocalUnicast"
            | "isGlobalUnicast"
            | "format.named"
            | "sign"
            | "asInteger"
            | "isInteger"
            | "asApproximateFloat"
            | "isGreaterThan"
            | "isLessThan"
            | "compareTo"
            | "add"
            | "sub"
            | "major"
            | "minor"
            | "patch"
            | "getScheme"
            | "getHostname"
            | "getHost"
            | "getPort"
            | "getEscapedPath"
            | "getQuery" => cost(Range::fixed(1)),
            "_==_" if args.len() == 2 => {
                let (l, r) = (self.types.of(&args[0]), self.types.of(&args[1]));
                (l == r && matches!(l, Ty::Quantity | Ty::Semver))
                    .then_some((Range::fixed(1), None))
            }
            _ => None,
        }
    }
}

/// Which variable of a comprehension is pushed.
#[derive(Clone, Copy)]
enum Iter {
    Key,
    Value,
    Single,
}

/// `functionCost` adds the arguments' costs to every estimate but those of `&&`, `||` and
/// `?:`, which account for them (short-circuiting).
fn args_sum_if(overload: Overload, args: Range) -> Range {
    match overload {
        Overload::AndOr | Overload::Conditional => Range::default(),
        _ => args,
    }
}

/// The Kubernetes library's estimate of `replace`: the traversal, and the longest and
/// shortest results.
fn replace_cost(s: Range, from: Range, with: Range) -> (Range, Option<Range>) {
    let (mut count, mut retained) = (Range::default(), Range::default());
    if from.min == 0 {
        count.max = if s.max < u64::MAX { s.max + 1 } else { s.max };
        retained.max = s.max;
    } else if with.max <= from.min {
        count.max = 0;
        retained.max = s.max;
    } else {
        count.max = (s.max as f64 / from.min as f64).ceil() as u64;
    }
    if from.max == 0 {
        count.min = if s.min < u64::MAX { s.min + 1 } else { s.min };
        retained.min = s.min;
    } else if from.max <= with.min {
        count.min = 0;
        retained.min = s.min;
    } else {
        count.min = (s.min as f64 / from.max as f64).ceil() as u64;
    }
    let size = count.multiply(with).add(retained);
    (s.factor(2.0 * STRING_TRAVERSAL), Some(size))
}

/// `computeExprSize`: the sizes literals show.
fn literal_size(e: &IdedExpr) -> Option<Range> {
    let n = match &e.expr {
        Expr::Literal(LiteralValue::String(s)) => s.inner().chars().count() as u64,
        Expr::Literal(LiteralValue::Bytes(b)) => b.inner().len() as u64,
        Expr::Literal(_) => 1,
        Expr::List(l) => l.elements.len() as u64,
        Expr::Map(m) => m.entries.len() as u64,
        _ => return None,
    };
    Some(Range::fixed(n))
}

/// `isBind`: the comprehension `cel.bind` expands to.
fn is_bind(c: &cel::common::ast::ComprehensionExpr) -> bool {
    matches!(&c.iter_range.expr, Expr::List(l) if l.elements.is_empty())
        && matches!(&c.loop_cond.expr, Expr::Literal(LiteralValue::Boolean(b)) if !*b.inner())
        && !is_accumulator(&c.accu_var)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_follow_the_dra_declarations() {
        let path = |p: &[&str]| p.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let max = |p: &[&str]| declared_size(&path(p)).map(|r| r.max);
        assert_eq!(max(&["device", "driver"]), Some(63));
        assert_eq!(max(&["device", "attributes"]), Some(32));
        assert_eq!(max(&["device", "attributes", "@keys"]), Some(63));
        assert_eq!(max(&["device", "attributes", "@values", "@keys"]), Some(32));
        assert_eq!(max(&["device", "attributes", "@values", "name"]), Some(64));
        assert_eq!(max(&["device", "capacity", "@values", "memory"]), None);
        assert_eq!(max(&["device", "capacity", "@values", "@values"]), Some(0));
        assert_eq!(max(&["x"]), None);
    }

    #[test]
    fn cost_factors_round_up_and_saturate() {
        assert_eq!(by_factor(15, 0.1), 2);
        assert_eq!(by_factor(0, 0.1), 0);
        assert_eq!(by_factor(u64::MAX, 2.0), u64::MAX);
        assert_eq!(Range::fixed(u64::MAX).add(Range::fixed(1)).max, u64::MAX);
    }
}
