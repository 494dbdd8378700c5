//! The subject: what is being judged, independent of where it came from (an admission
//! request or a file). Objects are kept as raw JSON and parsed only when a rule asks, so a
//! review no rule concerns is answered without parsing its object.

use std::fmt;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use serde_json::Value;

mod skeleton;
pub use skeleton::{Hole, Model, ModelReader, Path, Seen, Skeleton, Step};

/// How a review's decoding reads an object of a kind (`Family::reading`).
#[derive(Clone, Copy, Debug, Default)]
pub enum Reading {
    /// Its end found and nothing built: it is parsed if and when a rule asks.
    #[default]
    Raw,
    /// Read along a path: the members on the way parsed, the values at its end kept apart
    /// as text (`Object::skeleton`), each read into the family's model by the reader given.
    Apart(Path, Option<ModelReader>),
    /// Parsed whole in the same pass: the family's judgement reads all of it.
    Whole,
}
pub(crate) use skeleton::Reader;

/// The API group an `apiVersion` names: what comes before its `/`, empty for the core group
/// (`v1`).
pub fn api_group(api_version: &str) -> &str {
    api_version.split_once('/').map_or("", |(group, _)| group)
}

/// The API group a document's `apiVersion` names; `None` when it names no `apiVersion`.
pub fn group_of(doc: &Value) -> Option<&str> {
    doc.get("apiVersion").and_then(Value::as_str).map(api_group)
}

/// Group, version and kind.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Gvk {
    /// API group; empty for the core group.
    pub group: String,
    /// API version within the group.
    pub version: String,
    /// Kind; empty when the document names none.
    pub kind: String,
}

impl Gvk {
    /// Split an `apiVersion` (`group/version` or `version`) and a kind.
    pub fn from_api_version(api_version: &str, kind: &str) -> Gvk {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        Gvk { group: group.to_string(), version: version.to_string(), kind: kind.to_string() }
    }

    /// `group/version` or `version`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

impl fmt::Display for Gvk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.api_version(), self.kind)
    }
}

/// The operation an admission request performs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Operation {
    /// CREATE (and every document `covenant check` reads).
    Create,
    /// UPDATE.
    Update,
    /// DELETE.
    Delete,
    /// CONNECT.
    Connect,
    /// Anything else the request named; no rule runs on it.
    Other(String),
}

impl Operation {
    /// Parse the AdmissionRequest spelling.
    pub fn parse(s: &str) -> Operation {
        match s {
            "CREATE" => Operation::Create,
            "UPDATE" => Operation::Update,
            "DELETE" => Operation::Delete,
            "CONNECT" => Operation::Connect,
            other => Operation::Other(other.to_string()),
        }
    }

    /// The AdmissionRequest spelling; `other` for an unknown one (a bounded metric label).
    pub fn as_label(&self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
            Operation::Other(_) => "other",
        }
    }
}

/// An object kept as raw JSON (from a review) or as a value (from a file), parsed once,
/// on first use.
#[derive(Debug)]
pub struct Object {
    /// The object's JSON text: a slice of the review body it arrived in, shared, not copied.
    raw: Option<Bytes>,
    parsed: OnceLock<Result<Value, String>>,
    /// The object read along the path a family asked for while the review was decoded.
    skeleton: Option<Skeleton>,
}

impl Object {
    /// An object still in its raw JSON form (a JSON object's text; an admission review's
    /// `object` as a slice of the body).
    pub fn from_raw(raw: Bytes) -> Object {
        Object { raw: Some(raw), parsed: OnceLock::new(), skeleton: None }
    }

    /// An object in its raw JSON form, with its skeleton read in the same pass (holes are
    /// spans of `raw`).
    pub fn from_raw_read(raw: Bytes, skeleton: Skeleton) -> Object {
        Object { raw: Some(raw), parsed: OnceLock::new(), skeleton: Some(skeleton) }
    }

    /// An object in its raw JSON form, parsed already (in the pass that found its end).
    pub fn from_raw_parsed(raw: Bytes, value: Value) -> Object {
        let parsed = OnceLock::new();
        let _ = parsed.set(Ok(value));
        Object { raw: Some(raw), parsed, skeleton: None }
    }

    /// An object already parsed.
    pub fn from_value(value: Value) -> Object {
        let parsed = OnceLock::new();
        let _ = parsed.set(Ok(value));
        Object { raw: None, parsed, skeleton: None }
    }

    /// The skeleton read while the review was decoded, if a family asked for one.
    pub fn skeleton(&self) -> Option<&Skeleton> {
        self.skeleton.as_ref()
    }

    /// The parsed value, or why it could not be parsed.
    pub fn value(&self) -> Result<&Value, &str> {
        self.parsed
            .get_or_init(|| match &self.raw {
                // Checking the text is UTF-8 once, up front, is cheaper than the string-by-string
                // check a parse of bytes makes.
                Some(raw) => match crate::source::utf8(raw) {
                    Some(text) => serde_json::from_str(text).map_err(|e| e.to_string()),
                    // The standard check words where the text stops being UTF-8.
                    None => Err(std::str::from_utf8(raw).err().map(|e| e.to_string()).unwrap_or_default()),
                },
                None => Ok(Value::Null),
            })
            .as_ref()
            .map_err(String::as_str)
    }

    /// The object's JSON text, when it is still kept raw (from a review) and is UTF-8; a
    /// family that reads only part of a large object can read that part from here.
    pub fn text(&self) -> Option<&str> {
        self.raw.as_ref().and_then(|raw| crate::source::utf8(raw))
    }

    /// Why the object could not be parsed, if parsing was tried and failed.
    pub fn unreadable(&self) -> Option<&str> {
        self.parsed.get().and_then(|r| r.as_ref().err()).map(String::as_str)
    }

    /// Whether the object has been parsed (for tests and benches of laziness).
    pub fn is_parsed(&self) -> bool {
        self.parsed.get().is_some()
    }
}

/// What is being judged.
#[derive(Debug)]
pub struct Subject {
    /// The object's group, version and kind (empty kind: the document names none).
    pub gvk: Gvk,
    /// The operation.
    pub operation: Operation,
    /// The object's name.
    pub name: String,
    /// The object's namespace.
    pub namespace: Option<String>,
    /// The object as it would be stored (absent on DELETE).
    pub object: Option<Object>,
    /// The object before the change (UPDATE, DELETE).
    pub old_object: Option<Object>,
    /// Whether the request is a dry run.
    pub dry_run: bool,
    /// The requesting user.
    pub user: Option<String>,
    /// The requesting user's groups.
    pub groups: Vec<String>,
    /// What remains of the request's deadline, for rules that look up cluster state.
    pub budget: Option<Duration>,
    /// When the subject was received, for exemption expiry; the engine reads no clock.
    pub received_at: Option<SystemTime>,
    /// Whether the subject arrived through admission (an object the apiserver holds, whose
    /// metadata carries the server's fields) rather than from a file.
    pub admitted: bool,
    /// Set when whoever waits for the verdict has stopped waiting (the request's deadline
    /// passed): the engine stops between units of work instead of running on.
    pub stop: Stop,
}

/// A stop signal shared between a face that owns a deadline and the engine working for it.
/// The engine reads no clock: the face raises the signal, the engine checks it.
#[derive(Clone, Debug, Default)]
pub struct Stop(Option<std::sync::Arc<std::sync::atomic::AtomicBool>>);

impl Stop {
    /// A signal that can be raised (the default one never is).
    pub fn new() -> Stop {
        Stop(Some(std::sync::Arc::default()))
    }

    /// Raise it: the work it was handed to stops at its next check.
    pub fn raise(&self) {
        if let Some(flag) = &self.0 {
            flag.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }

    /// Whether it was raised.
    pub fn raised(&self) -> bool {
        self.0.as_ref().is_some_and(|f| f.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// The flag itself, for work that looks at it where a `Stop` is not known (a CEL
    /// evaluation).
    pub fn flag(&self) -> Option<std::sync::Arc<std::sync::atomic::AtomicBool>> {
        self.0.clone()
    }
}

impl Subject {
    /// A subject for a document read from a file: a CREATE of that document.
    pub fn from_document(value: Value) -> Subject {
        let str_at = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let api_version = str_at(&value, "apiVersion").unwrap_or_default();
        let kind = str_at(&value, "kind").unwrap_or_default();
        let metadata = value.get("metadata").cloned().unwrap_or(Value::Null);
        let name = str_at(&metadata, "name").unwrap_or_default();
        let namespace = str_at(&metadata, "namespace");
        Subject {
            gvk: Gvk::from_api_version(&api_version, &kind),
            operation: Operation::Create,
            name,
            namespace,
            object: Some(Object::from_value(value)),
            old_object: None,
            dry_run: true,
            user: None,
            groups: Vec::new(),
            budget: None,
            received_at: None,
            admitted: false,
            stop: Stop::default(),
        }
    }
}

impl Subject {
    /// A subject for an object the cluster already stores, as the background audit judges
    /// it: would it be admitted if it were created now? Its metadata carries the server's
    /// fields, as an admitted object's does; `now` decides exemption expiry.
    pub fn from_stored(value: Value, now: SystemTime) -> Subject {
        let mut subject = Subject::from_document(value);
        subject.dry_run = false;
        subject.admitted = true;
        subject.received_at = Some(now);
        subject
    }
}

/// The objects of a list document, each with where it is in the document.
pub type ListObjects = Vec<(String, Value)>;

/// Items that are not a sequence: where the `items` member is, and what it holds instead.
pub type NotItems = (String, String);

/// The objects a list document holds, taken out of it, each with where it is in the document
/// (`/items/0`): `None` when the document is not a list. A list's item that is itself a list
/// stands for its items (`/items/1/items/0`), at any depth, as kubectl flattens it; the list
/// is no object of its own. Items that are not a sequence are an error at that `items`
/// member: what they are instead.
///
/// A list is a mapping whose kind ends in `List` and which has `items`: `kubectl get … -o yaml`
/// writes `kind: List`, whose items each name their own kind, and the API answers a typed
/// list (`kind: CustomResourceDefinitionList`), whose items name none. An item of a typed
/// list that names no kind or apiVersion takes the list's, as the API server meant it.
pub fn list_items(doc: &mut Value) -> Option<Result<ListObjects, NotItems>> {
    let items = own_items(doc)?;
    let mut objects = Vec::new();
    Some(items.map_err(|why| ("/items".to_string(), why)).and_then(|items| {
        flatten("/items", items, &mut objects)?;
        Ok(objects)
    }))
}

/// The items of one list, taken out of it (`list_items`, one level).
fn own_items(doc: &mut Value) -> Option<Result<Vec<Value>, String>> {
    let members = doc.as_object_mut()?;
    let kind = members.get("kind")?.as_str()?.to_string();
    let of = kind.strip_suffix("List")?.to_string();
    let items = members.remove("items")?;
    let Value::Array(mut items) = items else {
        let found = crate::strict::describe(&items);
        members.insert("items".into(), items);
        return Some(Err(format!("the items of a {kind} are {found}; expected a list of objects")));
    };
    let api_version = members.get("apiVersion").cloned().unwrap_or(Value::Null);
    if !of.is_empty() {
        for item in items.iter_mut().filter_map(Value::as_object_mut) {
            item.entry("kind").or_insert_with(|| of.clone().into());
            item.entry("apiVersion").or_insert_with(|| api_version.clone());
        }
    }
    Some(Ok(items))
}

/// The objects of `items` (found at `at`) into `objects`, in document order, a list among
/// them standing for its own items.
fn flatten(at: &str, items: Vec<Value>, objects: &mut ListObjects) -> Result<(), NotItems> {
    for (i, mut item) in items.into_iter().enumerate() {
        let pointer = format!("{at}/{i}");
        match own_items(&mut item) {
            None => objects.push((pointer, item)),
            Some(Ok(inner)) => flatten(&format!("{pointer}/items"), inner, objects)?,
            Some(Err(why)) => return Err((format!("{pointer}/items"), why)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gvk_splits_core_and_grouped_api_versions() {
        assert_eq!(Gvk::from_api_version("v1", "Pod").group, "");
        let g = Gvk::from_api_version("apps/v1", "Deployment");
        assert_eq!((g.group.as_str(), g.version.as_str()), ("apps", "v1"));
        assert_eq!(g.to_string(), "apps/v1 Deployment");
    }

    #[test]
    fn raw_object_is_parsed_only_on_first_use() {
        let o = Object::from_raw(Bytes::from_static(b"{\"a\":1}"));
        assert!(!o.is_parsed());
        assert_eq!(o.value().unwrap()["a"], 1);
        assert!(o.is_parsed());
    }
}
