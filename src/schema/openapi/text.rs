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

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Number, Value};

use super::{finish, KEYWORDS, MAX_SCHEMA_NODES, OPENAPI_KEPT};
use crate::schema::{Additional, CelRule, Schema, Type};
use crate::source::JsonKey;

/// The schema `text` holds, read as an OpenAPI structural schema; `None` when the text is
/// anything but a clean schema (the loader then reads it and words what is wrong).
pub(super) fn decode(text: &str, keep_unknown: bool) -> Option<Schema> {
    let reader = Reader { nodes: Cell::new(0), keep_unknown };
    let mut de = serde_json::Deserializer::from_str(text);
    let schema = Node(&reader).deserialize(&mut de).ok()?;
    de.end().ok()?;
    Some(Arc::unwrap_or_clone(schema))
}

struct Reader {
    nodes: Cell<usize>,
    keep_unknown: bool,
}

/// Why the reader stopped; never shown (the loader words the problem).
fn decline<E: de::Error>() -> E {
    E::custom("declined")
}

/// One schema node.
#[derive(Clone, Copy)]
struct Node<'r>(&'r Reader);

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Arc<Schema>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Arc<Schema>, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Arc<Schema>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a schema mapping")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Arc<Schema>, A::Error> {
        let nodes = self.0.nodes.get() + 1;
        if nodes > MAX_SCHEMA_NODES {
            return Err(decline());
        }
        self.0.nodes.set(nodes);
        let mut s = Schema::default();
        let (mut open, mut additional_declared) = (false, false);
        // Which of KEYWORDS were met (there are fewer than 64), so a repeated one declines.
        let mut seen: u64 = 0;
        while let Some(JsonKey(key)) = map.next_key::<JsonKey<'de>>()? {
            let Some(index) = KEYWORDS.iter().position(|k| *k == key) else {
                // A reference is refused in a structural schema even where unknown keywords
                // are kept; the loader says so.
                if key == "$ref" {
                    return Err(decline());
                }
                if !(OPENAPI_KEPT.contains(&key.as_ref()) || self.0.keep_unknown) {
                    return Err(decline());
                }
                let value: Value = map.next_value()?;
                if s.extensions.insert(key.into_owned(), value).is_some() {
                    return Err(decline());
                }
                continue;
            };
            let bit = 1u64 << index;
            if seen & bit != 0 {
                return Err(decline());
            }
            seen |= bit;
            match KEYWORDS[index] {
                "type" => {
                    let JsonKey(name) = map.next_value()?;
                    s.types.push(Type::parse(&name).ok_or_else(decline)?);
                }
                "properties" => s.properties = map.next_value_seed(Properties(self.0))?,
                "additionalProperties" => {
                    additional_declared = true;
                    match map.next_value_seed(AdditionalSeed(self.0))? {
                        Additionally::Open(true) => open = true,
                        Additionally::Open(false) => {}
                        Additionally::Schema(node) => s.additional = Additional::Schema(node),
                    }
                }
                "items" => s.items = Some(map.next_value_seed(self)?),
                "required" => s.required = map.next_value()?,
                "enum" => s.enumeration = Some(map.next_value()?),
                "const" => s.enumeration = Some(vec![map.next_value()?]),
                "nullable" => s.nullable = map.next_value()?,
                "default" => s.default = Some(map.next_value()?),
                "description" => s.description = Some(map.next_value()?),
                "title" => s.title = Some(map.next_value()?),
                "example" | "examples" => s.example = Some(map.next_value()?),
                "format" => s.format = Some(map.next_value()?),
                "pattern" => s.pattern = Some(map.next_value()?),
                "minimum" => s.bounds.minimum = map.next_value::<Number>()?.as_f64(),
                "maximum" => s.bounds.maximum = map.next_value::<Number>()?.as_f64(),
                "exclusiveMinimum" => s.bounds.exclusive_minimum = map.next_value()?,
                "exclusiveMaximum" => s.bounds.exclusive_maximum = map.next_value()?,
                "multipleOf" => s.bounds.multiple_of = map.next_value::<Number>()?.as_f64(),
                "minLength" => s.bounds.min_length = Some(map.next_value()?),
                "maxLength" => s.bounds.max_length = Some(map.next_value()?),
                "minItems" => s.bounds.min_items = Some(map.next_value()?),
                "maxItems" => s.bounds.max_items = Some(map.next_value()?),
                "minProperties" => s.bounds.min_properties = Some(map.next_value()?),
                "maxProperties" => s.bounds.max_properties = Some(map.next_value()?),
                "uniqueItems" => s.unique_items = map.next_value()?,
                "allOf" => s.all_of = map.next_value_seed(Members(self.0))?,
                "anyOf" => s.any_of = map.next_value_seed(Members(self.0))?,
                "oneOf" => s.one_of = map.next_value_seed(Members(self.0))?,
                "not" => s.not = Some(map.next_value_seed(self)?),
                "x-kubernetes-preserve-unknown-fields" => open = map.next_value()?,
                "x-kubernetes-int-or-string" => s.int_or_string = map.next_value()?,
                "x-kubernetes-embedded-resource" => s.embedded_resource = map.next_value()?,
                "x-kubernetes-list-type" => s.list_type = Some(choice(&mut map, &["atomic", "set", "map"])?),
                "x-kubernetes-map-type" => s.map_type = Some(choice(&mut map, &["atomic", "granular"])?),
                "x-kubernetes-list-map-keys" => s.list_map_keys = map.next_value()?,
                "x-kubernetes-validations" => s.validations = cel_rules(map.next_value()?)?,
                // A keyword only JSON Schema reads.
                _ => return Err(decline()),
            }
        }
        // What the loader reads in key order: the later of the two would win there.
        let both = |a: &str, b: &str| [a, b].iter().all(|k| seen & bit_of(k) != 0);
        if both("enum", "const")
            || both("example", "examples")
            || both("additionalProperties", "x-kubernetes-preserve-unknown-fields")
        {
            return Err(decline());
        }
        finish(&mut s, open, additional_declared);
        Ok(Arc::new(s))
    }
}

/// The bit of a keyword in the `seen` set.
fn bit_of(keyword: &str) -> u64 {
    KEYWORDS.iter().position(|k| *k == keyword).map_or(0, |i| 1u64 << i)
}

const _: () = assert!(KEYWORDS.len() <= 64, "the seen set is one u64");

fn choice<'de, A: MapAccess<'de>>(map: &mut A, allowed: &[&str]) -> Result<String, A::Error> {
    let JsonKey(v) = map.next_value()?;
    if allowed.contains(&v.as_ref()) {
        Ok(v.into_owned())
    } else {
        Err(decline())
    }
}

/// `x-kubernetes-validations`: small, read as a value and then taken apart.
fn cel_rules<E: de::Error>(v: Value) -> Result<Vec<CelRule>, E> {
    let Value::Array(items) = v else { return Err(decline()) };
    items
        .into_iter()
        .map(|item| {
            let Value::Object(members) = item else { return Err(decline()) };
            let mut rule = CelRule::default();
            for (key, x) in members {
                match (key.as_str(), x) {
                    ("optionalOldSelf", Value::Bool(b)) => rule.optional_old_self = b,
                    ("rule", Value::String(t)) => rule.rule = t,
                    ("message", Value::String(t)) => rule.message = Some(t),
                    ("messageExpression", Value::String(t)) => rule.message_expression = Some(t),
                    ("reason", Value::String(t)) => rule.reason = Some(t),
                    ("fieldPath", Value::String(t)) => rule.field_path = Some(t),
                    _ => return Err(decline()),
                }
            }
            if rule.rule.is_empty() {
                return Err(decline());
            }
            Ok(rule)
        })
        .collect()
}

/// `properties`: names to nodes.
struct Properties<'r>(&'r Reader);

impl<'de> DeserializeSeed<'de> for Properties<'_> {
    type Value = BTreeMap<String, Arc<Schema>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for Properties<'_> {
    type Value = BTreeMap<String, Arc<Schema>>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a mapping of schemas")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut properties = BTreeMap::new();
        while let Some(name) = map.next_key::<String>()? {
            let node = map.next_value_seed(Node(self.0))?;
            if properties.insert(name, node).is_some() {
                return Err(decline());
            }
        }
        Ok(properties)
    }
}

/// `allOf`, `anyOf`, `oneOf`: a non-empty list of nodes.
struct Members<'r>(&'r Reader);

impl<'de> DeserializeSeed<'de> for Members<'_> {
    type Value = Vec<Arc<Schema>>;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for Members<'_> {
    type Value = Vec<Arc<Schema>>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a non-empty list of schemas")
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut members = Vec::new();
        while let Some(node) = seq.next_element_seed(Node(self.0))? {
            members.push(node);
        }
        if members.is_empty() {
            return Err(decline());
        }
        Ok(members)
    }
}

/// `additionalProperties`: a boolean or a node.
enum Additionally {
    Open(bool),
    Schema(Arc<Schema>),
}

struct AdditionalSeed<'r>(&'r Reader);

impl<'de> DeserializeSeed<'de> for AdditionalSeed<'_> {
    type Value = Additionally;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Additionally, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for AdditionalSeed<'_> {
    type Value = Additionally;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a boolean or a schema")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Additionally, E> {
        Ok(Additionally::Open(v))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Additionally, A::Error> {
        Node(self.0).visit_map(map).map(Additionally::Schema)
    }
}
