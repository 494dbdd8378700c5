//! A CRD or XRD as the family reads it: the document's own members as a tree, and each
//! version's schema (`spec.versions[i].schema.openAPIV3Schema`) apart — as the raw JSON text
//! it arrived in when the document came from a review, so a schema the document repeats
//! (most CRDs serve two or three versions with one schema) or one an update leaves as it
//! was is recognised by its bytes and parsed once, or not at all. A review's objects are read
//! along `SCHEMAS` while the review is decoded (`Family::reading`), so their outlines come
//! from that pass; a document's text on its own is read along the same path here.

use std::borrow::Cow;

use serde_json::Value;

use crate::pointer::At;
use crate::schema::openapi::{Keep, Layout};
use crate::subject::{Hole, Model, Path, Seen, Skeleton, Step};

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
    /// The schemas read into the model in the pass that read the document (`read_schema`),
    /// by version index.
    pub models: Vec<Option<Model>>,
}

impl<'a> Outline<'a> {
    /// The outline of a parsed document: the schemas are its subtrees.
    pub fn of_value(doc: &'a Value) -> Outline<'a> {
        let schemas = doc
            .at("/spec/versions")
            .and_then(Value::as_array)
            .map(|vs| vs.iter().map(|v| v.at("/schema/openAPIV3Schema").map(Source::Tree)).collect())
            .unwrap_or_default();
        Outline { doc: Cow::Borrowed(doc), schemas, models: Vec::new() }
    }

    /// The outline of a document's JSON text: every member but the version schemas is
    /// parsed; each schema is kept as its text.
    pub fn of_text(text: &'a str) -> Result<Outline<'a>, String> {
        let skeleton = Skeleton::read(text, SCHEMAS)?;
        Outline::of_read(text, skeleton)
    }

    /// The outline of a document's JSON text, each version schema also read into the model
    /// keeping what `keep` says, in the same pass; beside `before` (the document before an
    /// update, read this way), a schema whose bytes repeat one of its schemas is that schema,
    /// and a changed one shares the nodes it repeats. The evolution then reads no schema again.
    pub fn of_text_reading(
        text: &'a str,
        keep: Keep,
        before: Option<&Outline<'a>>,
    ) -> Result<Outline<'a>, String> {
        let seen = before.map(Outline::seen).unwrap_or_default();
        let skeleton = Skeleton::read_beside(text, SCHEMAS, super::schema_reader(keep), seen)?;
        Outline::of_read(text, skeleton)
    }

    fn of_read(text: &'a str, skeleton: Skeleton) -> Result<Outline<'a>, String> {
        let (schemas, models) = schemas(text, &skeleton.holes).ok_or("a version schema is not UTF-8 text")?;
        Ok(Outline { doc: Cow::Owned(skeleton.doc), schemas, models })
    }

    /// Its schema texts and models, as a later document's reading compares with them.
    fn seen(&self) -> Vec<Seen<'a>> {
        let texts = self.schemas.iter().enumerate().filter_map(|(i, s)| match s {
            Some(Source::Text(text)) => Some((i, *text)),
            _ => None,
        });
        texts
            .map(|(i, text)| Seen { at: vec![i], text, model: self.models.get(i).cloned().flatten() })
            .collect()
    }

    /// The outline of a document's JSON text read along `SCHEMAS` already (a review's object,
    /// read while the review was decoded); `None` if the skeleton's spans do not fall on the
    /// text's character boundaries (a skeleton of another text).
    pub fn of_skeleton(text: &'a str, skeleton: &'a Skeleton) -> Option<Outline<'a>> {
        let (schemas, models) = schemas(text, &skeleton.holes)?;
        Some(Outline { doc: Cow::Borrowed(&skeleton.doc), schemas, models })
    }

    /// The schema source of the version at `index`.
    pub fn schema(&self, index: usize) -> Option<Source<'a>> {
        self.schemas.get(index).copied().flatten()
    }

    /// The schema of the version at `index`, if it was read in the pass that read the
    /// document.
    pub fn layout(&self, index: usize) -> Option<&Layout> {
        self.models.get(index)?.as_ref().map(|m| &*m.0)
    }
}

/// The way from a CRD or XRD to its version schemas.
pub const SCHEMAS: Path = &[
    Step::Key("spec"),
    Step::Key("versions"),
    Step::Each,
    Step::Key("schema"),
    Step::Key("openAPIV3Schema"),
];

/// The schema texts and models of the holes read along `SCHEMAS`, by version index.
type Schemas<'a> = (Vec<Option<Source<'a>>>, Vec<Option<Model>>);

fn schemas<'a>(text: &'a str, holes: &[Hole]) -> Option<Schemas<'a>> {
    let (mut schemas, mut models) = (Vec::new(), Vec::new());
    for hole in holes {
        let &[index] = hole.at.as_slice() else { return None };
        if schemas.len() <= index {
            schemas.resize(index + 1, None);
            models.resize(index + 1, None);
        }
        schemas[index] = Some(Source::Text(text.get(hole.span.clone())?));
        models[index] = hole.model.clone();
    }
    Some((schemas, models))
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
