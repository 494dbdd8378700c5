//! A CRD or XRD as the family reads it: the document's own members as a tree, and each
//! version's schema (`spec.versions[i].schema.openAPIV3Schema`) apart — as the raw JSON text
//! it arrived in when the document came from a review, so a schema the document repeats
//! (most CRDs serve two or three versions with one schema) or one an update leaves as it
//! was is recognised by its bytes and parsed once, or not at all.

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::source::JsonKey;

/// One version's schema, as it was found.
#[derive(Clone, Copy, Debug)]
pub enum Source<'a> {
    /// Its JSON text, a slice of the review body.
    Text(&'a str),
    /// Its tree, in a document already parsed (from a file).
    Tree(&'a Value),
}

/// A schema-bearing document: `doc` is the document (without its version schemas when it was
/// read from text), `schemas[i]` the schema of `spec.versions[i]`, if it declares one.
#[derive(Debug)]
pub struct Outline<'a> {
    /// The document's members. Read it for everything but the version schemas.
    pub doc: Cow<'a, Value>,
    /// The schema of each version, by its index in `spec.versions`.
    pub schemas: Vec<Option<Source<'a>>>,
}

impl<'a> Outline<'a> {
    /// The outline of a parsed document: the schemas are its subtrees.
    pub fn of_value(doc: &'a Value) -> Outline<'a> {
        let schemas = doc
            .pointer("/spec/versions")
            .and_then(Value::as_array)
            .map(|vs| vs.iter().map(|v| v.pointer("/schema/openAPIV3Schema").map(Source::Tree)).collect())
            .unwrap_or_default();
        Outline { doc: Cow::Borrowed(doc), schemas }
    }

    /// The outline of a document's JSON text: every member but the version schemas is
    /// parsed; each schema is kept as its text.
    pub fn of_text(text: &'a str) -> Result<Outline<'a>, String> {
        let mut schemas = Vec::new();
        let mut de = serde_json::Deserializer::from_str(text);
        let doc = Along { path: PATH, index: None, schemas: &mut schemas }
            .deserialize(&mut de)
            .and_then(|doc| de.end().map(|()| doc))
            .map_err(|e| e.to_string())?;
        Ok(Outline { doc: Cow::Owned(doc), schemas })
    }

    /// The schema source of the version at `index`.
    pub fn schema(&self, index: usize) -> Option<Source<'a>> {
        self.schemas.get(index).copied().flatten()
    }
}

/// A step on the way from the document to a version schema.
#[derive(Clone, Copy)]
enum Step {
    Key(&'static str),
    Each,
}

const PATH: &[Step] = &[
    Step::Key("spec"),
    Step::Key("versions"),
    Step::Each,
    Step::Key("schema"),
    Step::Key("openAPIV3Schema"),
];

/// Builds the tree of a value on the way to the version schemas; the value at the end of the
/// way is kept as text (under the version index it was met at) and left out of the tree.
struct Along<'s, 'de> {
    path: &'static [Step],
    index: Option<usize>,
    schemas: &'s mut Vec<Option<Source<'de>>>,
}

impl<'de> DeserializeSeed<'de> for Along<'_, 'de> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

/// The end of the way: the schema's text, stored by version index.
struct Capture<'s, 'de> {
    index: usize,
    schemas: &'s mut Vec<Option<Source<'de>>>,
}

impl<'de> DeserializeSeed<'de> for Capture<'_, 'de> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        let raw = <&'de RawValue as serde::Deserialize>::deserialize(d)?;
        if self.schemas.len() <= self.index {
            self.schemas.resize(self.index + 1, None);
        }
        self.schemas[self.index] = Some(Source::Text(raw.get()));
        Ok(())
    }
}

impl<'de> Visitor<'de> for Along<'_, 'de> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
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
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        match self.path.split_first() {
            Some((Step::Each, rest)) => {
                while let Some(v) = seq.next_element_seed(Along {
                    path: rest,
                    index: Some(out.len()),
                    schemas: self.schemas,
                })? {
                    out.push(v);
                }
            }
            _ => {
                while let Some(v) = seq.next_element::<Value>()? {
                    out.push(v);
                }
            }
        }
        Ok(Value::Array(out))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        let next = match self.path.split_first() {
            Some((Step::Key(k), rest)) => Some((*k, rest)),
            _ => None,
        };
        // Keys borrowed from the text (serde's `Cow<str>` would copy every one).
        while let Some(JsonKey(key)) = map.next_key()? {
            match (next, self.index) {
                (Some((k, [])), Some(index)) if key == k => {
                    map.next_value_seed(Capture { index, schemas: self.schemas })?;
                    // A later duplicate of the key wins, as it would in the tree.
                    out.remove(k);
                }
                (Some((k, rest)), _) if key == k => {
                    let v =
                        map.next_value_seed(Along { path: rest, index: self.index, schemas: self.schemas })?;
                    out.insert(key.into_owned(), v);
                }
                _ => {
                    let v = map.next_value::<Value>()?;
                    out.insert(key.into_owned(), v);
                }
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_outline_keeps_schemas_apart_and_everything_else_as_the_tree_has_it() {
        let text = r#"{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinition",
            "metadata":{"name":"widgets.example.com","labels":{"a":"b"}},
            "spec":{"group":"example.com","versions":[
              {"name":"v1","served":true,"storage":true,"schema":{"openAPIV3Schema":{"type":"object","x":[1,2.5,"\u00e9"]}}},
              {"name":"v2","served":true,"schema":{}},
              {"name":"v3","served":false,"schema":{"openAPIV3Schema":{"type":"object"}}}]}}"#;
        let outline = Outline::of_text(text).unwrap();
        let full: Value = serde_json::from_str(text).unwrap();
        let mut expected = full.clone();
        for v in expected["spec"]["versions"].as_array_mut().unwrap() {
            v["schema"].as_object_mut().unwrap().remove("openAPIV3Schema");
        }
        assert_eq!(*outline.doc, expected);
        let trees = Outline::of_value(&full);
        for i in 0..3 {
            let (a, b) = (outline.schema(i), trees.schema(i));
            assert_eq!(a.is_some(), b.is_some(), "version {i}");
            if let (Some(a), Some(b)) = (a, b) {
                let (Source::Text(text), Source::Tree(tree)) = (a, b) else {
                    panic!("version {i}: {a:?} and {b:?}")
                };
                assert_eq!(serde_json::from_str::<Value>(text).unwrap(), *tree, "version {i}");
            }
        }
        assert!(outline.schema(7).is_none());
    }

    #[test]
    fn a_document_of_another_shape_is_read_as_it_is() {
        for text in [r#"{"spec":5}"#, r#"{"spec":{"versions":{"a":1}}}"#, r#"[1,{"spec":{}}]"#, "null"] {
            let outline = Outline::of_text(text).unwrap();
            assert_eq!(*outline.doc, serde_json::from_str::<Value>(text).unwrap(), "{text}");
            assert!(outline.schemas.iter().all(Option::is_none), "{text}");
        }
        assert!(Outline::of_text(r#"{"spec":"#).is_err());
        assert!(Outline::of_text(r#"{} trailing"#).is_err());
    }
}
