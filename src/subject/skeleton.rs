//! An object's skeleton: its JSON text read once, the members on the way to some deep values
//! parsed into a tree, and those deep values (the holes) kept as spans of the text, unread —
//! or read, in the same pass, into the model of the family that asked (`ModelReader`).
//!
//! A review's CRD is read this way while the review itself is decoded: the pass that finds
//! where the object ends also reads its version schemas into the schema model, so each
//! schema's text is read once. A hole whose bytes repeat an earlier hole's (the versions of a
//! CRD sharing one schema, an update that leaves a schema as it was) is recognised by
//! comparing bytes, without scanning it, and takes that hole's model: a JSON object is
//! self-delimiting, so text that begins with a complete value's bytes holds that value.
//!
//! Values are read by serde_json (so what is accepted and refused is what serde_json accepts
//! and refuses); only the punctuation between them (`{`, `:`, `,`, `}`, `[`, `]`) is read
//! here.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::schema::openapi::Layout;
use crate::source::json::{self, ReadError};
use crate::source::JsonKey;

/// A step on the way from an object to the values kept apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// The member of this name.
    Key(&'static str),
    /// Every element of a list.
    Each,
}

/// A way from an object to the values kept apart; it ends in a `Key`.
pub type Path = &'static [Step];

/// A value kept apart: where the way to it went through lists (an index per `Each`), its
/// span in the object's text, and what the family made of it in the same pass, if it asked.
#[derive(Clone, Debug, PartialEq)]
pub struct Hole {
    /// The list indices met on the way, one per `Each` of the path.
    pub at: Vec<usize>,
    /// Its bytes in the object's text.
    pub span: Range<usize>,
    /// The family's model of it (`ModelReader`); `None` when it asked for none or its reader
    /// left the value to be read from its text.
    pub model: Option<Model>,
}

/// A value kept apart, read in the pass that found it: a version schema, read into the
/// schema model with where each of its nodes lies in the text. Two are equal when they are
/// one.
#[derive(Clone)]
pub struct Model(pub Arc<Layout>);

impl fmt::Debug for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Model(..)")
    }
}

impl PartialEq for Model {
    fn eq(&self, other: &Model) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// How a family reads each value kept apart while the review is decoded, so the value's text
/// is read once: given the text from the value's first byte on, and a value read before that
/// it likely repeats in part (the same place in the object before an update, else the value
/// just before it) with that value's own text, the model and how many bytes the value spans.
/// `None` leaves the value to be read from its text later (it is then scanned to find its
/// end): a reader takes only what it reads cleanly, and never accepts what serde_json refuses.
pub type ModelReader = fn(text: &str, like: Option<(&str, &Model)>) -> Option<(Model, usize)>;

/// An object read along a path: the tree of everything but the values at its end, and those
/// values' spans.
#[derive(Clone, Debug, PartialEq)]
pub struct Skeleton {
    /// The object without the values kept apart.
    pub doc: Value,
    /// The values kept apart, in the order they were met.
    pub holes: Vec<Hole>,
}

/// A value kept apart before, as a later one is compared with it: where it was, its text,
/// and its model.
#[derive(Clone, Debug)]
pub struct Seen<'a> {
    /// The list indices met on the way to it.
    pub at: Vec<usize>,
    /// Its text.
    pub text: &'a str,
    /// Its model, if it was read into one.
    pub model: Option<Model>,
}

impl Skeleton {
    /// Read a JSON text along `path`; the text must hold one value and nothing after it.
    pub fn read(text: &str, path: Path) -> Result<Skeleton, String> {
        Skeleton::read_beside(text, path, None, Vec::new())
    }

    /// Read a JSON text along `path` as `read` does, each value kept apart read by `models`
    /// beside the values of another text read before (the document before an update): a value
    /// whose bytes repeat one of those takes its model, and a changed one is read beside the
    /// one at its place.
    pub fn read_beside<'a>(
        text: &'a str,
        path: Path,
        models: Option<ModelReader>,
        before: Vec<Seen<'a>>,
    ) -> Result<Skeleton, String> {
        let mut reader = Reader::of_text(text);
        reader.seen = before;
        let skeleton = reader.skeleton(path, models).map_err(|e| reader.describe(e))?;
        if reader.peek().is_some() {
            return Err(reader.describe(ReadError::Expected("the end of the text")));
        }
        Ok(skeleton)
    }
}

/// A JSON reader that keeps the values it set apart as it goes, so that a later object read
/// by it (the object before an update) finds the values it repeats.
pub(crate) struct Reader<'a> {
    json: json::Reader<'a>,
    /// The holes read so far (where, their spans and models), for recognising a repeated one
    /// by its bytes and reading a changed one beside the one it most likely changes.
    seen: Vec<Seen<'a>>,
}

impl<'a> std::ops::Deref for Reader<'a> {
    type Target = json::Reader<'a>;

    fn deref(&self) -> &json::Reader<'a> {
        &self.json
    }
}

impl std::ops::DerefMut for Reader<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.json
    }
}

impl<'a> Reader<'a> {
    /// A reader of a text, from its start, that has set nothing apart yet.
    pub(crate) fn of_text(text: &'a str) -> Reader<'a> {
        Reader { json: json::Reader::of_text(text), seen: Vec::new() }
    }

    /// The object at the reader, read along `path`, each hole read by `models` when given;
    /// its holes are spans counted from where the reader stood.
    pub(crate) fn skeleton(
        &mut self,
        path: Path,
        models: Option<ModelReader>,
    ) -> Result<Skeleton, ReadError> {
        let origin = self.json.pos();
        let mut holes = Vec::new();
        let doc = self.along(path, models, &mut Vec::new(), &mut holes)?;
        for hole in &mut holes {
            hole.span = hole.span.start - origin..hole.span.end - origin;
        }
        Ok(Skeleton { doc, holes })
    }

    fn along(
        &mut self,
        path: &[Step],
        models: Option<ModelReader>,
        at: &mut Vec<usize>,
        holes: &mut Vec<Hole>,
    ) -> Result<Value, ReadError> {
        match (path.split_first(), self.peek()) {
            (Some((Step::Key(name), rest)), Some(b'{')) => {
                self.json.advance(1);
                let mut out = Map::new();
                // Holes are met only under this map's one member on the way; a repeat of that
                // member replaces what the first left, as it replaces it in the tree.
                let before = holes.len();
                let mut first = true;
                while let Some(JsonKey(key)) = self.key(&mut first)? {
                    if key != *name {
                        let v = self.value::<Value>()?;
                        out.insert(key.into_owned(), v);
                        continue;
                    }
                    holes.truncate(before);
                    if rest.is_empty() {
                        holes.push(self.hole(at, models)?);
                        out.remove(*name);
                    } else {
                        let v = self.along(rest, models, at, holes)?;
                        out.insert(key.into_owned(), v);
                    }
                }
                Ok(Value::Object(out))
            }
            (Some((Step::Each, rest)), Some(b'[')) => {
                self.json.advance(1);
                let mut out = Vec::new();
                let mut first = true;
                while self.element(&mut first)? {
                    at.push(out.len());
                    let v = self.along(rest, models, at, holes);
                    at.pop();
                    out.push(v?);
                }
                Ok(Value::Array(out))
            }
            // Not the shape the path expects, or the end of it: read as it is.
            _ => self.value::<Value>(),
        }
    }

    /// The value kept apart at `at`: the bytes of an earlier one if they are repeated here
    /// (and its model with them), else read by `models`, else scanned. Only the two holes it
    /// most likely repeats are compared — the one just before it (the versions of a CRD
    /// sharing one schema) and the last one at the same place (the same version in the object
    /// before an update) — so a review with many versions stays linear.
    fn hole(&mut self, at: &[usize], models: Option<ModelReader>) -> Result<Hole, ReadError> {
        self.peek();
        let start = self.json.pos();
        let rest = self.json.rest();
        let previous = self.seen.last();
        let same_place = self.seen.iter().rev().find(|seen| seen.at == at);
        let repeated = previous
            .into_iter()
            .chain(same_place)
            .find(|seen| !seen.text.is_empty() && rest.starts_with(seen.text.as_bytes()))
            .map(|seen| (seen.text.len(), seen.model.clone()));
        let (span, model) = match repeated {
            Some((len, model)) => {
                self.json.advance(len);
                (start..self.json.pos(), model)
            }
            None => {
                let like = same_place.or(previous).and_then(|seen| Some((seen.text, seen.model.as_ref()?)));
                let read = models.and_then(|read| read(self.json.text().get(start..)?, like));
                match read {
                    Some((model, len)) if len > 0 && len <= rest.len() => {
                        self.json.advance(len);
                        (start..self.json.pos(), Some(model))
                    }
                    _ => (self.skip()?, None),
                }
            }
        };
        // A value's span falls on character boundaries (a model reader that said otherwise
        // leaves nothing to compare with).
        if let Some(text) = self.json.text().get(span.clone()) {
            self.seen.push(Seen { at: at.to_vec(), text, model: model.clone() });
        }
        Ok(Hole { at: at.to_vec(), span, model })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PATH: Path = &[Step::Key("spec"), Step::Key("versions"), Step::Each, Step::Key("schema")];

    #[test]
    fn holes_are_spans_and_everything_else_is_the_tree() {
        let text = r#" { "kind" : "K", "spec": {"versions": [ {"name":"a","schema": {"x": [1, 2.5, "\u00e9"]}},
            {"name":"b"}, {"schema" : {"x": [1, 2.5, "\u00e9"]} , "n": null}, 7 ], "other": {"schema": 1}}} "#;
        let s = Skeleton::read(text, PATH).unwrap();
        let mut expected: Value = serde_json::from_str(text).unwrap();
        for v in expected["spec"]["versions"].as_array_mut().unwrap() {
            if let Some(m) = v.as_object_mut() {
                m.remove("schema");
            }
        }
        assert_eq!(s.doc, expected);
        let at: Vec<_> = s.holes.iter().map(|h| (h.at.clone(), &text[h.span.clone()])).collect();
        assert_eq!(
            at,
            [(vec![0], r#"{"x": [1, 2.5, "\u00e9"]}"#), (vec![2], r#"{"x": [1, 2.5, "\u00e9"]}"#)]
        );
    }

    #[test]
    fn a_repeated_member_on_the_way_replaces_the_first() {
        let text =
            r#"{"spec":{"versions":[{"schema":1}]},"spec":{"versions":[{"n":1},{"schema":2,"schema":3}]}}"#;
        let s = Skeleton::read(text, PATH).unwrap();
        assert_eq!(s.doc, serde_json::json!({"spec":{"versions":[{"n":1},{}]}}));
        let at: Vec<_> = s.holes.iter().map(|h| (h.at.clone(), &text[h.span.clone()])).collect();
        assert_eq!(at, [(vec![1], "3")]);
    }

    #[test]
    fn what_serde_json_refuses_is_refused() {
        for text in [
            r#"{"spec":"#,
            r#"{} trailing"#,
            r#"{"a":1,}"#,
            r#"{,"a":1}"#,
            r#"{"a" 1}"#,
            r#"{"a":1 "b":2}"#,
            r#"{"spec":{"versions":[{"schema":{"a":01}}]}}"#,
            r#"{"spec":{"versions":[{"schema":{"a":"\x"}}]}}"#,
            r#"{"spec":{"versions":[1,]}}"#,
            r#"{"spec":{"versions":[,1]}}"#,
            r#"{"spec":{"versions":[{"schema":{}} {"schema":{}}]}}"#,
            "{\"a\":\"\t\"}",
            r#"{1:2}"#,
            "",
        ] {
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
            assert!(Skeleton::read(text, PATH).is_err(), "{text}");
        }
        for text in [r#"[]"#, r#"{}"#, "null", r#"{"spec":{"versions":[]}}"#, r#"{"spec":[{"versions":1}]}"#]
        {
            let s = Skeleton::read(text, PATH).unwrap();
            assert_eq!(s.doc, serde_json::from_str::<Value>(text).unwrap(), "{text}");
            assert!(s.holes.is_empty());
        }
    }

    #[test]
    fn a_repeated_hole_is_found_by_its_bytes_and_a_near_repeat_is_scanned() {
        // The second hole begins with the first one's bytes; the third shares a prefix only.
        let text =
            r#"{"spec":{"versions":[{"schema":{"a":[1]}},{"schema":{"a":[1]}},{"schema":{"a":[1,2]}}]}}"#;
        let s = Skeleton::read(text, PATH).unwrap();
        let texts: Vec<_> = s.holes.iter().map(|h| &text[h.span.clone()]).collect();
        assert_eq!(texts, [r#"{"a":[1]}"#, r#"{"a":[1]}"#, r#"{"a":[1,2]}"#]);
    }

    std::thread_local! {
        /// What `logged` read, by its model's address: the value's text and the text of the
        /// value it was read beside.
        static READ: std::cell::RefCell<Vec<(usize, String, Option<String>)>> = Default::default();
    }

    /// The schema reader, logging what it read beside what. It declines anything but a
    /// schema.
    fn logged(text: &str, like: Option<(&str, &Model)>) -> Option<(Model, usize)> {
        let layout = crate::schema::openapi::read_leading(text, crate::schema::openapi::Keep::SHAPE, None)?;
        let len = layout.len();
        let model = Model(Arc::new(layout));
        let entry =
            (Arc::as_ptr(&model.0) as usize, text[..len].to_string(), like.map(|(t, _)| t.to_string()));
        READ.with(|log| log.borrow_mut().push(entry));
        Some((model, len))
    }

    #[test]
    fn each_hole_is_read_by_the_model_reader_once_beside_the_one_it_likely_repeats() {
        // A review's object, then the object before the update, read by one reader.
        let text = r#"{"spec":{"versions":[{"schema":{"type":"string"}},{"schema":{"type":"string"}},{"schema":[2]},{"schema":{"type":"object"}}]}}
            {"spec":{"versions":[{"schema":{"type":"integer"}},{"schema":{"type":"boolean"}}]}}"#;
        let mut reader = Reader::of_text(text);
        let (new, old) =
            (reader.skeleton(PATH, Some(logged)).unwrap(), reader.skeleton(PATH, Some(logged)).unwrap());
        let read = |s: &Skeleton, i: usize| {
            let at = Arc::as_ptr(&s.holes[i].model.as_ref()?.0) as usize;
            READ.with(|log| log.borrow().iter().find(|e| e.0 == at).map(|e| (e.1.clone(), e.2.clone())))
        };
        let toy = |own: &str, like: Option<&str>| Some((own.to_string(), like.map(str::to_string)));
        assert_eq!(read(&new, 0), toy(r#"{"type":"string"}"#, None));
        // A repeat is the first one's model, not read again.
        assert_eq!(new.holes[1].model, new.holes[0].model);
        assert_eq!(READ.with(|log| log.borrow().len()), 4, "four schemas read, the repeat not");
        // Declined: scanned, and kept as text only.
        assert_eq!((&text[new.holes[2].span.clone()], read(&new, 2)), ("[2]", None));
        // Nothing to read it beside: the one before it has no model.
        assert_eq!(read(&new, 3), toy(r#"{"type":"object"}"#, None));
        // The object before the update: each read beside the same version after it.
        assert_eq!(read(&old, 0), toy(r#"{"type":"integer"}"#, Some(r#"{"type":"string"}"#)));
        assert_eq!(read(&old, 1), toy(r#"{"type":"boolean"}"#, Some(r#"{"type":"string"}"#)));
        // The doc and spans are what a reading without models finds.
        let plain = Skeleton::read(&text[..text.find('\n').unwrap()], PATH).unwrap();
        assert_eq!(new.doc, plain.doc);
        let spans = |s: &Skeleton| s.holes.iter().map(|h| (h.at.clone(), h.span.clone())).collect::<Vec<_>>();
        assert_eq!(spans(&new), spans(&plain));
    }
}
