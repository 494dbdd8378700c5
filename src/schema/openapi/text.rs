//! A structural schema read straight from its JSON text into the model, with no `Value` tree
//! in between: keys are matched where they lie in the text, descriptions and names are
//! unescaped once, into the model. This is how a CRD update's schemas are read on the
//! webhook's path (the review's objects arrive as text, and the schemas are most of them).
//!
//! One mechanism for problems: this reader only takes the clean case. Anything the loader
//! would report, or that it reads in an order-dependent way (a keyword twice, `enum` beside
//! `const`, `additionalProperties` beside `x-kubernetes-preserve-unknown-fields`, more nodes
//! than the limit), makes it decline, and the caller reads the text through the `Value`
//! loader, which words every problem. What it builds equals what the loader builds from the
//! same text (asserted over every schema of the crd-history fixtures).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::Arc;

use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde_json::{Number, Value};

use super::{finish, Keep, KEYWORDS, MAX_SCHEMA_NODES, OPENAPI_KEPT};
use crate::schema::{Additional, CelRule, Schema, Type};
use crate::source::json::{ReadError, Reader};
use crate::source::JsonKey;

/// The schema `text` holds, read as an OpenAPI structural schema; `None` when the text is
/// anything but a clean schema (the loader then reads it and words what is wrong).
pub(super) fn decode(text: &str, keep: Keep) -> Option<Schema> {
    decode_whole(text, keep, None).map(|layout| Arc::unwrap_or_clone(layout.root))
}

/// A schema read from its text, with where each node lies in it: a later text read beside it
/// takes, shared, every node whose bytes it repeats at the same place in the tree, without
/// building it again (and the diff sees at once that the two are the same node).
#[derive(Debug)]
pub struct Placed<'t> {
    text: &'t str,
    layout: Cow<'t, Layout>,
}

/// What reading a schema text leaves besides the text itself: the model, and where each of
/// its nodes lies in the text. It can be kept apart from the text (a review's schemas are read
/// while the review is decoded, and kept with the review's body) and paired with it again
/// (`Placed::of`).
#[derive(Clone, Debug)]
pub struct Layout {
    root: Arc<Schema>,
    /// Each node's span in the text and the nodes under it (itself included), by its address.
    spans: Spans,
    /// What the reading kept.
    keep: Keep,
    /// How many bytes of the text were read (the whole text, when it was read whole).
    len: usize,
}

impl Layout {
    /// The model.
    pub fn root(&self) -> &Arc<Schema> {
        &self.root
    }

    /// What the reading kept.
    pub fn keep(&self) -> Keep {
        self.keep
    }

    /// How many bytes of its text the schema spans.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it spans no bytes (never, for a schema read from text).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Nodes' spans by address. Addresses are not chosen to collide, so they need no keyed hash.
type Spans = FxHashMap<usize, (Range<usize>, usize)>;

impl<'t> Placed<'t> {
    /// A model read some other way: no node of it is known to lie anywhere in `text`.
    pub(super) fn unplaced(text: &'t str, schema: Schema, keep: Keep) -> Placed<'t> {
        let layout = Layout { root: Arc::new(schema), spans: Spans::default(), keep, len: text.len() };
        Placed { text, layout: Cow::Owned(layout) }
    }

    /// A layout paired again with the text it was read from; `None` when `text` is not as
    /// long as what was read (the caller holds the two together: a layout read from other
    /// bytes of the same length would share nodes that are not there).
    pub fn of(text: &'t str, layout: &'t Layout) -> Option<Placed<'t>> {
        (text.len() == layout.len).then_some(Placed { text, layout: Cow::Borrowed(layout) })
    }

    /// The model.
    pub fn root(&self) -> &Arc<Schema> {
        &self.layout.root
    }

    /// The text it was read from.
    pub fn text(&self) -> &'t str {
        self.text
    }
}

/// Read `text` as `decode` does; beside `twin`, a node whose bytes repeat the twin's node at
/// the same place is the twin's node. What is built equals what `decode` builds.
pub(super) fn decode_placed<'t>(text: &'t str, keep: Keep, twin: Option<&Placed<'_>>) -> Option<Placed<'t>> {
    decode_whole(text, keep, twin).map(|layout| Placed { text, layout: Cow::Owned(layout) })
}

/// The schema `text` holds, and nothing after it but whitespace.
fn decode_whole(text: &str, keep: Keep, twin: Option<&Placed<'_>>) -> Option<Layout> {
    let (mut layout, mut read) = decode_at_start(text, keep, twin)?;
    if read.r.peek().is_some() {
        return None;
    }
    layout.len = text.len();
    Some(layout)
}

/// The schema at the start of `text` (the rest of a larger text), read as `decode_placed`
/// reads a whole one: its layout (spans counted from the start of `text`; `len` is the bytes
/// up to the schema's end).
pub(super) fn decode_leading(text: &str, keep: Keep, twin: Option<&Placed<'_>>) -> Option<Layout> {
    decode_at_start(text, keep, twin).map(|(layout, _)| layout)
}

/// `decode_leading`, and the reader left where the schema ends.
fn decode_at_start<'t, 'w>(
    text: &'t str,
    keep: Keep,
    twin: Option<&'w Placed<'w>>,
) -> Option<(Layout, Read<'w, 't>)> {
    // A node read keeping something else is not the node this reading builds.
    let twin = twin.filter(|twin| twin.layout.keep == keep);
    // About one node for every 200 bytes of a CRD's schema text.
    let spans = Spans::with_capacity_and_hasher(text.len().min(1 << 20) / 200, Default::default());
    let mut read = Read { r: Reader::of_text(text), keep, nodes: 0, depth: 0, twin, spans };
    let root = read.node(twin.map(Placed::root)).ok()?;
    let spans = std::mem::take(&mut read.spans);
    Some((Layout { root, spans, keep, len: read.r.pos() }, read))
}

/// Why the reader stopped; never shown (the loader words the problem).
struct Decline;

impl From<ReadError> for Decline {
    fn from(_: ReadError) -> Decline {
        Decline
    }
}

/// How deep the reader nests before it leaves a text to the loader (whose JSON parser stops
/// at 128 levels; declining is always safe).
const MAX_DEPTH: usize = 100;

struct Read<'a, 't> {
    r: Reader<'t>,
    keep: Keep,
    nodes: usize,
    depth: usize,
    twin: Option<&'a Placed<'a>>,
    spans: Spans,
}

fn address(node: &Arc<Schema>) -> usize {
    Arc::as_ptr(node) as usize
}

/// How deep a value nests.
fn depth(v: &Value) -> usize {
    match v {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

impl<'t> Read<'_, 't> {
    fn value<T: Deserialize<'t>>(&mut self) -> Result<T, Decline> {
        Ok(self.r.value::<T>()?)
    }

    /// A value the model keeps as JSON, as deep as the whole text may nest.
    fn tree(&mut self) -> Result<Value, Decline> {
        let v: Value = self.value()?;
        if self.depth + depth(&v) > MAX_DEPTH {
            return Err(Decline);
        }
        Ok(v)
    }

    fn enter(&mut self) -> Result<(), Decline> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Decline);
        }
        Ok(())
    }

    /// The twin's node, if its bytes are repeated where the reader stands.
    fn repeated(&mut self, twin: Option<&Arc<Schema>>) -> Option<Arc<Schema>> {
        let (node, placed) = (twin?, self.twin?);
        let (span, count) = placed.layout.spans.get(&address(node))?;
        let bytes = placed.text.as_bytes().get(span.clone())?;
        let start = self.r.pos();
        if !self.r.rest().starts_with(bytes) {
            return None;
        }
        self.r.advance(bytes.len());
        self.nodes += count;
        self.spans.insert(address(node), (start..self.r.pos(), *count));
        Some(node.clone())
    }

    /// One schema node.
    fn node(&mut self, twin: Option<&Arc<Schema>>) -> Result<Arc<Schema>, Decline> {
        self.r.peek();
        if let Some(node) = self.repeated(twin) {
            if self.nodes > MAX_SCHEMA_NODES {
                return Err(Decline);
            }
            return Ok(node);
        }
        let start = self.r.pos();
        if !self.r.enter_map() {
            return Err(Decline);
        }
        self.enter()?;
        let before = self.nodes;
        self.nodes += 1;
        if self.nodes > MAX_SCHEMA_NODES {
            return Err(Decline);
        }
        let mut s = Schema::default();
        let (mut open, mut additional_declared) = (false, false);
        // Which of KEYWORDS were met (there are fewer than 64), so a repeated one declines.
        let mut seen: u64 = 0;
        let mut first = true;
        while let Some(JsonKey(key)) = self.r.key(&mut first)? {
            let Some(index) = KEYWORDS.iter().position(|k| *k == key) else {
                // A reference is refused in a structural schema even where unknown keywords
                // are kept; the loader says so.
                if key == "$ref" {
                    return Err(Decline);
                }
                if !(OPENAPI_KEPT.contains(&key.as_ref()) || self.keep.unknown) {
                    return Err(Decline);
                }
                let value = self.tree()?;
                if s.extensions.insert(key.into_owned(), value).is_some() {
                    return Err(Decline);
                }
                continue;
            };
            let bit = 1u64 << index;
            if seen & bit != 0 {
                return Err(Decline);
            }
            seen |= bit;
            match KEYWORDS[index] {
                "type" => {
                    let JsonKey(name) = self.r.string()?;
                    s.types.push(Type::parse(&name).ok_or(Decline)?);
                }
                "properties" => s.properties = self.properties(twin.map(|t| &t.properties))?,
                "additionalProperties" => {
                    additional_declared = true;
                    if self.r.peek() == Some(b'{') {
                        let twin = twin.and_then(|t| match &t.additional {
                            Additional::Schema(node) => Some(node),
                            _ => None,
                        });
                        s.additional = Additional::Schema(self.node(twin)?);
                    } else {
                        open = self.value()?;
                    }
                }
                "items" => s.items = Some(self.node(twin.and_then(|t| t.items.as_ref()))?),
                "required" => s.required = self.value()?,
                "enum" => {
                    let Value::Array(values) = self.tree()? else { return Err(Decline) };
                    s.enumeration = Some(values)
                }
                "const" => s.enumeration = Some(vec![self.tree()?]),
                "nullable" => s.nullable = self.value()?,
                "default" => s.default = Some(self.tree()?),
                "description" if self.keep.descriptions => {
                    s.description = Some(self.r.string()?.0.into_owned())
                }
                // Checked to be a string, neither unescaped nor kept.
                "description" if self.r.peek() == Some(b'"') => self.r.skip_string()?,
                "description" => return Err(Decline),
                "title" => s.title = Some(self.r.string()?.0.into_owned()),
                "example" | "examples" => s.example = Some(self.tree()?),
                "format" => s.format = Some(self.r.string()?.0.into_owned()),
                "pattern" => s.pattern = Some(self.r.string()?.0.into_owned()),
                "minimum" => s.bounds.minimum = self.value::<Number>()?.as_f64(),
                "maximum" => s.bounds.maximum = self.value::<Number>()?.as_f64(),
                "exclusiveMinimum" => s.bounds.exclusive_minimum = self.value()?,
                "exclusiveMaximum" => s.bounds.exclusive_maximum = self.value()?,
                "multipleOf" => s.bounds.multiple_of = self.value::<Number>()?.as_f64(),
                "minLength" => s.bounds.min_length = Some(self.value()?),
                "maxLength" => s.bounds.max_length = Some(self.value()?),
                "minItems" => s.bounds.min_items = Some(self.value()?),
                "maxItems" => s.bounds.max_items = Some(self.value()?),
                "minProperties" => s.bounds.min_properties = Some(self.value()?),
                "maxProperties" => s.bounds.max_properties = Some(self.value()?),
                "uniqueItems" => s.unique_items = self.value()?,
                "allOf" => s.all_of = self.members(twin.map(|t| &t.all_of))?,
                "anyOf" => s.any_of = self.members(twin.map(|t| &t.any_of))?,
                "oneOf" => s.one_of = self.members(twin.map(|t| &t.one_of))?,
                "not" => s.not = Some(self.node(twin.and_then(|t| t.not.as_ref()))?),
                "x-kubernetes-preserve-unknown-fields" => open = self.value()?,
                "x-kubernetes-int-or-string" => s.int_or_string = self.value()?,
                "x-kubernetes-embedded-resource" => s.embedded_resource = self.value()?,
                "x-kubernetes-list-type" => s.list_type = Some(self.choice(&["atomic", "set", "map"])?),
                "x-kubernetes-map-type" => s.map_type = Some(self.choice(&["atomic", "granular"])?),
                "x-kubernetes-list-map-keys" => s.list_map_keys = self.value()?,
                "x-kubernetes-validations" => s.validations = self.cel_rules()?,
                // A keyword only JSON Schema reads.
                _ => return Err(Decline),
            }
        }
        // What the loader reads in key order: the later of the two would win there.
        let both = |a: &str, b: &str| [a, b].iter().all(|k| seen & bit_of(k) != 0);
        if both("enum", "const")
            || both("example", "examples")
            || both("additionalProperties", "x-kubernetes-preserve-unknown-fields")
        {
            return Err(Decline);
        }
        finish(&mut s, open, additional_declared);
        self.depth -= 1;
        let node = Arc::new(s);
        self.spans.insert(address(&node), (start..self.r.pos(), self.nodes - before));
        Ok(node)
    }

    fn choice(&mut self, allowed: &[&str]) -> Result<String, Decline> {
        let JsonKey(v) = self.r.string()?;
        if allowed.contains(&v.as_ref()) {
            Ok(v.into_owned())
        } else {
            Err(Decline)
        }
    }

    /// `properties`: names to nodes.
    fn properties(
        &mut self,
        twin: Option<&BTreeMap<String, Arc<Schema>>>,
    ) -> Result<BTreeMap<String, Arc<Schema>>, Decline> {
        if !self.r.enter_map() {
            return Err(Decline);
        }
        self.enter()?;
        let mut properties = BTreeMap::new();
        let mut first = true;
        while let Some(JsonKey(name)) = self.r.key(&mut first)? {
            let node = self.node(twin.and_then(|t| t.get(name.as_ref())))?;
            if properties.insert(name.into_owned(), node).is_some() {
                return Err(Decline);
            }
        }
        self.depth -= 1;
        Ok(properties)
    }

    /// `allOf`, `anyOf`, `oneOf`: a non-empty list of nodes.
    fn members(&mut self, twin: Option<&Vec<Arc<Schema>>>) -> Result<Vec<Arc<Schema>>, Decline> {
        if !self.r.enter_list() {
            return Err(Decline);
        }
        self.enter()?;
        let mut members = Vec::new();
        let mut first = true;
        while self.r.element(&mut first)? {
            members.push(self.node(twin.and_then(|t| t.get(members.len())))?);
        }
        if members.is_empty() {
            return Err(Decline);
        }
        self.depth -= 1;
        Ok(members)
    }

    /// `x-kubernetes-validations`: read straight into rules, with no `Value` between.
    fn cel_rules(&mut self) -> Result<Vec<CelRule>, Decline> {
        let rules: Vec<CelRuleText> = self.value()?;
        rules
            .into_iter()
            .map(|r| {
                if r.rule.is_empty() {
                    return Err(Decline);
                }
                Ok(CelRule {
                    rule: r.rule,
                    message: r.message,
                    message_expression: r.message_expression,
                    reason: r.reason,
                    field_path: r.field_path,
                    optional_old_self: r.optional_old_self,
                })
            })
            .collect()
    }
}

/// The bit of a keyword in the `seen` set.
fn bit_of(keyword: &str) -> u64 {
    KEYWORDS.iter().position(|k| *k == keyword).map_or(0, |i| 1u64 << i)
}

const _: () = assert!(KEYWORDS.len() <= 64, "the seen set is one u64");

/// One `x-kubernetes-validations` rule as its text spells it: every member a string (or
/// `optionalOldSelf` a boolean), none repeated, none unknown, `rule` present.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct CelRuleText {
    rule: String,
    #[serde(default, deserialize_with = "text")]
    message: Option<String>,
    #[serde(default, deserialize_with = "text")]
    message_expression: Option<String>,
    #[serde(default, deserialize_with = "text")]
    reason: Option<String>,
    #[serde(default, deserialize_with = "text")]
    field_path: Option<String>,
    #[serde(default)]
    optional_old_self: bool,
}

/// A member that, when present, is a string (`null` is refused, as the loader refuses it).
fn text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    String::deserialize(d).map(Some)
}
