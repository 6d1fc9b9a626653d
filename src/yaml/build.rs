//! YAML parser events → JSON values, and on demand the position of every value.
//!
//! One pass over granit-parser's events with an explicit stack (no recursion, so depth is
//! bounded only by the parser's own nesting limit). Aliases copy their anchor's value, counted
//! against [`limits::ALIAS_EXPANSION`]; merge keys (`<<: *base`) add the keys the mapping does
//! not set itself. Subtrees the simulation never reads (see [`Ctx`]) are stepped over without
//! being built, which is most of a `kubectl get -o yaml` dump.
//!
//! Positions are not built on the normal path: an error asks for them, and the same pass runs
//! again with `positions` on, so both passes see exactly the same structure.

use std::collections::{HashMap, HashSet};

use granit_parser::{Event, Options, Parser, ScalarStyle, ScanError, Span};
use serde_json::{Map, Value};

use super::scalar::{key_string, resolve_plain, resolve_tagged};
use crate::error::Position;
use crate::limits;

/// Where a value sits relative to the Kubernetes object around it, which decides what can be
/// skipped. An object root is a document's top value or an item of a `List`'s `items`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ctx {
    ObjectRoot,
    /// `metadata` of an object root: `managedFields` (server-side-apply bookkeeping, a third
    /// of a kubectl dump) is skipped.
    Metadata,
    /// `status` of an object root: only what the simulation reads is kept.
    Status,
    /// `items` of an object root: its elements are object roots.
    Items,
    Other,
    Skip,
}

/// The `status` fields schedsim reads: a node's allocatable (and capacity), a pod's phase and
/// start time. Conditions, images, addresses, nodeInfo, container statuses, … are skipped.
const KEPT_STATUS: [&str; 4] = ["allocatable", "capacity", "phase", "startTime"];

impl Ctx {
    pub fn child(self, key: &str) -> Ctx {
        match (self, key) {
            (Ctx::ObjectRoot, "metadata") => Ctx::Metadata,
            (Ctx::ObjectRoot, "status") => Ctx::Status,
            (Ctx::ObjectRoot, "items") => Ctx::Items,
            (Ctx::Metadata, "managedFields") => Ctx::Skip,
            (Ctx::Status, k) if !KEPT_STATUS.contains(&k) => Ctx::Skip,
            _ => Ctx::Other,
        }
    }

    pub fn element(self) -> Ctx {
        if self == Ctx::Items {
            Ctx::ObjectRoot
        } else {
            Ctx::Other
        }
    }
}

/// Where each value of a document is, by the same structure as its JSON value.
#[derive(Debug, Clone)]
pub struct PosNode {
    pub at: Position,
    pub children: PosChildren,
}

#[derive(Debug, Clone)]
pub enum PosChildren {
    Leaf,
    Seq(Vec<PosNode>),
    Map(Vec<(String, PosNode)>),
}

/// One document: its index among all documents of the file (empty ones included), its value,
/// and its positions when asked for.
pub struct BuiltDoc {
    pub index: usize,
    pub value: Value,
    pub positions: Option<PosNode>,
}

#[derive(Debug)]
pub struct BuildError {
    pub position: Option<Position>,
    pub message: String,
}

enum Key {
    /// A key, its value's context and where the key is.
    Named(String, Ctx, Position),
    /// `<<`: the value's mappings fill in keys this mapping does not set.
    Merge,
    /// A key whose value is stepped over.
    Skip,
}

enum Frame {
    Seq {
        items: Vec<Value>,
        positions: Vec<PosNode>,
        ctx: Ctx,
        anchor: usize,
        at: Position,
    },
    Map {
        /// The entries in order; made a map, of exactly their number, at the end.
        entries: Vec<(String, Value)>,
        /// Where each entry's key is, to point at a duplicate.
        key_at: Vec<Position>,
        positions: Vec<(String, PosNode)>,
        ctx: Ctx,
        anchor: usize,
        at: Position,
        key: Option<Key>,
        merges: Vec<(Value, Option<PosNode>, Position)>,
    },
    /// Inside a skipped collection: how many collections are open.
    Skip { depth: usize },
}

/// An anchored value, its positions and how many values an alias to it copies.
struct Anchored {
    value: Value,
    positions: Option<PosNode>,
    size: u64,
}

struct Builder {
    positions: bool,
    stack: Vec<Frame>,
    anchors: HashMap<usize, Anchored>,
    skipped_anchors: HashSet<usize>,
    expanded: u64,
    docs: Vec<BuiltDoc>,
    doc_index: usize,
    root: Option<(Value, Option<PosNode>)>,
}

fn position(span: &Span) -> Position {
    Position {
        line: span.start.line() as u32,
        column: span.start.col() as u32 + 1,
    }
}

fn error(at: Position, message: impl Into<String>) -> BuildError {
    BuildError {
        position: Some(at),
        message: message.into(),
    }
}

/// Every document of a YAML (or JSON) text; with `positions`, where each value is.
pub fn build(text: &str, positions: bool) -> Result<Vec<BuiltDoc>, BuildError> {
    let mut options = Options::default();
    options.set_emit_comments(false);
    let nesting = usize::try_from(limits::NESTING.value()).unwrap_or(usize::MAX);
    options.block_nesting_limit = nesting;
    options.flow_nesting_limit = nesting;
    let mut b = Builder {
        positions,
        stack: Vec::new(),
        anchors: HashMap::new(),
        skipped_anchors: HashSet::new(),
        expanded: 0,
        docs: Vec::new(),
        doc_index: 0,
        root: None,
    };
    for event in Parser::new_from_str_with_options(text, options) {
        let (event, span) = event.map_err(scan_error)?;
        b.event(event, &span)?;
    }
    Ok(b.docs)
}

fn scan_error(e: ScanError) -> BuildError {
    let m = e.marker();
    let message = match e.info() {
        m if m == "recursion limit exceeded" => {
            limits::NESTING.message("a collection nested this deep")
        }
        m if m.contains("\\u{0}") => {
            "a NUL byte: YAML allows no control characters in a file (write \"\\0\" inside double quotes)".into()
        }
        m => m,
    };
    BuildError {
        position: Some(Position {
            line: m.line() as u32,
            column: m.col() as u32 + 1,
        }),
        message,
    }
}

impl Builder {
    fn event(&mut self, event: Event, span: &Span) -> Result<(), BuildError> {
        let at = position(span);
        if let Some(Frame::Skip { depth }) = self.stack.last_mut() {
            match event {
                Event::SequenceStart(_, anchor, _) | Event::MappingStart(_, anchor, _) => {
                    *depth += 1;
                    self.note_skipped(anchor);
                }
                Event::SequenceEnd | Event::MappingEnd => {
                    *depth -= 1;
                    if *depth == 0 {
                        self.stack.pop();
                        self.skipped_value();
                    }
                }
                Event::Scalar(_, _, anchor, _) => self.note_skipped(anchor),
                _ => {}
            }
            return Ok(());
        }
        let skipping = matches!(
            self.stack.last(),
            Some(Frame::Map {
                key: Some(Key::Skip),
                ..
            })
        );
        match event {
            Event::DocumentStart(..) => {
                self.doc_index += 1;
                if limits::DOCUMENTS.exceeded_by(self.doc_index as u64) {
                    return Err(error(
                        at,
                        limits::DOCUMENTS.message(format!("document {}", self.doc_index)),
                    ));
                }
                self.anchors.clear();
                self.skipped_anchors.clear();
            }
            Event::DocumentEnd => {
                let (value, positions) = self.root.take().unwrap_or((Value::Null, None));
                self.docs.push(BuiltDoc {
                    index: self.doc_index - 1,
                    value,
                    positions,
                });
            }
            Event::Scalar(text, style, anchor, tag) => {
                if skipping {
                    self.note_skipped(anchor);
                    self.skipped_value();
                    return Ok(());
                }
                let value = match &tag {
                    Some(t) => match t.suffix_in_namespace("tag:yaml.org,2002:") {
                        Some(suffix) => resolve_tagged(&text, &suffix),
                        None => Ok(Value::String(text.to_string())),
                    },
                    None if style == ScalarStyle::Plain => resolve_plain(&text),
                    None => Ok(Value::String(text.to_string())),
                }
                .map_err(|m| error(at, m))?;
                let positions = self.positions.then_some(PosNode {
                    at,
                    children: PosChildren::Leaf,
                });
                if anchor != 0 {
                    self.anchor(anchor, &value, &positions);
                }
                let merge = style == ScalarStyle::Plain && tag.is_none() && text == "<<";
                self.complete(value, positions, merge, at)?;
            }
            Event::Alias(id) => {
                if skipping {
                    self.skipped_value();
                    return Ok(());
                }
                let Some(anchored) = self.anchors.get(&id) else {
                    let why = if self.skipped_anchors.contains(&id) {
                        "refers to an anchor inside a field schedsim does not read (metadata.managedFields or status); move the anchor out of it"
                    } else {
                        "refers to an unknown anchor"
                    };
                    return Err(error(at, format!("this alias {why}")));
                };
                self.expanded += anchored.size;
                if limits::ALIAS_EXPANSION.exceeded_by(self.expanded) {
                    return Err(error(
                        at,
                        limits::ALIAS_EXPANSION
                            .message(format!("expanding this alias, {} values", self.expanded)),
                    ));
                }
                let value = anchored.value.clone();
                let positions = anchored.positions.clone().map(|mut p| {
                    p.at = at;
                    p
                });
                self.complete(value, positions, false, at)?;
            }
            Event::SequenceStart(_, anchor, _) | Event::MappingStart(_, anchor, _) => {
                if skipping {
                    self.note_skipped(anchor);
                    self.stack.push(Frame::Skip { depth: 1 });
                    return Ok(());
                }
                let ctx = self.next_ctx(at)?;
                self.stack
                    .push(if matches!(event, Event::SequenceStart(..)) {
                        Frame::Seq {
                            items: Vec::new(),
                            positions: Vec::new(),
                            ctx,
                            anchor,
                            at,
                        }
                    } else {
                        Frame::Map {
                            entries: Vec::new(),
                            key_at: Vec::new(),
                            positions: Vec::new(),
                            ctx,
                            anchor,
                            at,
                            key: None,
                            merges: Vec::new(),
                        }
                    });
            }
            Event::SequenceEnd => {
                let Some(Frame::Seq {
                    mut items,
                    positions,
                    anchor,
                    at,
                    ..
                }) = self.stack.pop()
                else {
                    unreachable!("the parser balances sequences")
                };
                items.shrink_to_fit();
                let value = Value::Array(items);
                let positions = self.positions.then_some(PosNode {
                    at,
                    children: PosChildren::Seq(positions),
                });
                if anchor != 0 {
                    self.anchor(anchor, &value, &positions);
                }
                self.complete(value, positions, false, at)?;
            }
            Event::MappingEnd => {
                let Some(Frame::Map {
                    entries,
                    key_at,
                    mut positions,
                    anchor,
                    at,
                    merges,
                    ..
                }) = self.stack.pop()
                else {
                    unreachable!("the parser balances mappings")
                };
                let count = entries.len();
                let mut map: Map<String, Value> = Map::with_capacity(count);
                for ((name, value), key_at) in entries.into_iter().zip(key_at) {
                    if map.contains_key(&name) {
                        return Err(error(
                            key_at,
                            format!(
                                "duplicate key {name:?}: a key may appear only once in a mapping"
                            ),
                        ));
                    }
                    map.insert(name, value);
                }
                for (merged, merged_positions, merge_at) in merges {
                    merge_into(&mut map, &mut positions, merged, merged_positions, merge_at)?;
                }
                let value = Value::Object(map);
                let positions = self.positions.then_some(PosNode {
                    at,
                    children: PosChildren::Map(positions),
                });
                if anchor != 0 {
                    self.anchor(anchor, &value, &positions);
                }
                self.complete(value, positions, false, at)?;
            }
            _ => {}
        }
        Ok(())
    }

    fn note_skipped(&mut self, anchor: usize) {
        if anchor != 0 {
            self.skipped_anchors.insert(anchor);
        }
    }

    /// The value of a skipped key is over: the mapping expects its next key.
    fn skipped_value(&mut self) {
        if let Some(Frame::Map { key, .. }) = self.stack.last_mut() {
            *key = None;
        }
    }

    fn anchor(&mut self, id: usize, value: &Value, positions: &Option<PosNode>) {
        self.anchors.insert(
            id,
            Anchored {
                value: value.clone(),
                positions: positions.clone(),
                size: size(value),
            },
        );
    }

    /// The context of a collection that starts now, from its parent.
    fn next_ctx(&self, at: Position) -> Result<Ctx, BuildError> {
        Ok(match self.stack.last() {
            None => Ctx::ObjectRoot,
            Some(Frame::Seq { ctx, .. }) => ctx.element(),
            Some(Frame::Map {
                key: Some(Key::Named(_, ctx, _)),
                ..
            }) => *ctx,
            Some(Frame::Map {
                key: Some(Key::Merge),
                ..
            }) => Ctx::Other,
            Some(Frame::Map { key: None, .. }) => {
                return Err(error(
                    at,
                    "a mapping key must be a string, number or boolean (JSON has no other keys)",
                ));
            }
            Some(Frame::Map {
                key: Some(Key::Skip),
                ..
            })
            | Some(Frame::Skip { .. }) => unreachable!("skipped values never start frames"),
        })
    }

    /// A finished value: a document root, a sequence item, a mapping key or a mapping value.
    fn complete(
        &mut self,
        value: Value,
        positions: Option<PosNode>,
        merge_key: bool,
        at: Position,
    ) -> Result<(), BuildError> {
        match self.stack.last_mut() {
            None => self.root = Some((value, positions)),
            Some(Frame::Seq {
                items,
                positions: p,
                ..
            }) => {
                items.push(value);
                p.extend(positions);
            }
            Some(Frame::Map {
                entries,
                key_at,
                positions: p,
                ctx,
                key,
                merges,
                ..
            }) => match key.take() {
                None if merge_key => *key = Some(Key::Merge),
                None => {
                    let Some(name) = key_string(value) else {
                        return Err(error(
                            at,
                            "a mapping key must be a string, number or boolean (JSON has no other keys)",
                        ));
                    };
                    let child = ctx.child(&name);
                    *key = Some(if child == Ctx::Skip {
                        Key::Skip
                    } else {
                        Key::Named(name, child, at)
                    });
                }
                Some(Key::Named(name, _, name_at)) => {
                    if let Some(pos) = positions {
                        p.push((name.clone(), pos));
                    }
                    entries.push((name, value));
                    key_at.push(name_at);
                }
                Some(Key::Merge) => merges.push((value, positions, at)),
                Some(Key::Skip) => {}
            },
            Some(Frame::Skip { .. }) => unreachable!("skipped values are not completed"),
        }
        Ok(())
    }
}

/// `<<: value`: a mapping, or a list of mappings of which the earlier win; keys the mapping
/// sets itself win over merged ones wherever `<<` stands (the YAML merge-key spec).
fn merge_into(
    map: &mut Map<String, Value>,
    positions: &mut Vec<(String, PosNode)>,
    merged: Value,
    merged_positions: Option<PosNode>,
    at: Position,
) -> Result<(), BuildError> {
    let not_a_map = || {
        error(
            at,
            "the value of a merge key `<<` must be a mapping or a list of mappings",
        )
    };
    match merged {
        Value::Object(fields) => {
            let mut field_positions = match merged_positions.map(|p| p.children) {
                Some(PosChildren::Map(p)) => p.into_iter().collect::<HashMap<_, _>>(),
                _ => HashMap::new(),
            };
            for (k, v) in fields {
                if !map.contains_key(&k) {
                    if let Some(p) = field_positions.remove(&k) {
                        positions.push((k.clone(), p));
                    }
                    map.insert(k, v);
                }
            }
            Ok(())
        }
        Value::Array(items) => {
            let mut item_positions = match merged_positions.map(|p| p.children) {
                Some(PosChildren::Seq(p)) => p.into_iter().map(Some).collect(),
                _ => Vec::new(),
            };
            item_positions.resize(items.len(), None);
            for (item, p) in items.into_iter().zip(item_positions) {
                if !item.is_object() {
                    return Err(not_a_map());
                }
                merge_into(map, positions, item, p, at)?;
            }
            Ok(())
        }
        _ => Err(not_a_map()),
    }
}

/// How many values a value holds, itself included.
fn size(v: &Value) -> u64 {
    1 + match v {
        Value::Array(a) => a.iter().map(size).sum(),
        Value::Object(m) => m.values().map(size).sum(),
        _ => 0,
    }
}

/// A JSON value decoded with what [`Ctx`] skips stepped over, never built: serde_json's
/// own parser, with the YAML path's skipping.
pub struct Filtered(pub Ctx);

impl<'de> serde::de::DeserializeSeed<'de> for Filtered {
    type Value = Value;

    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        if self.0 == Ctx::Other {
            return serde::Deserialize::deserialize(d);
        }
        d.deserialize_any(self)
    }
}

impl<'de> serde::de::Visitor<'de> for Filtered {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element_seed(Filtered(self.0.element()))? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            match self.0.child(&key) {
                Ctx::Skip => {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
                ctx => {
                    let value = map.next_value_seed(Filtered(ctx))?;
                    out.insert(key, value);
                }
            }
        }
        Ok(Value::Object(out))
    }
}
