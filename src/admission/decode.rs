//! AdmissionReview bytes to a `Subject`.

use std::borrow::Cow;
use std::marker::PhantomData;

use bytes::Bytes;
use serde::de::value::MapAccessDeserializer;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::API_VERSION;
use crate::source::JsonKey;
use crate::subject::{Gvk, Object, Operation, Reader, Reading, Subject};

/// Why a body is not an AdmissionReview covenant can judge. Each becomes an HTTP 400.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeError {
    /// Not JSON, not the review's shape, or a member the review does not declare.
    #[error("body is not a valid AdmissionReview: {0}")]
    Malformed(String),
    /// A review of another apiVersion.
    #[error("AdmissionReview {found} is not supported; this webhook speaks {API_VERSION} (set admissionReviewVersions: [\"v1\"])")]
    Version {
        /// The apiVersion the body spoke.
        found: String,
    },
    /// A review without a request.
    #[error("AdmissionReview carries no request")]
    NoRequest,
}

/// A member the review declares as a JSON object. serde's derive would also take a JSON array
/// of the members' values in order, which no apiserver sends and which would hide a wrong
/// type; this takes an object only.
struct Obj<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Obj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct ObjectOnly<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectOnly<T> {
            type Value = T;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(ObjectOnly(PhantomData)).map(Obj)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct ReviewIn<'a> {
    #[serde(borrow)]
    api_version: Cow<'a, str>,
    #[serde(borrow)]
    kind: Cow<'a, str>,
    #[serde(default, borrow)]
    request: Option<Obj<RequestIn<'a>>>,
    /// Declared by the v1 schema; a request review never carries one that matters, and its
    /// content is not read.
    #[serde(default, borrow)]
    #[allow(dead_code)]
    response: Option<&'a RawValue>,
}

// The members covenant reads and drops (the resource, what the request asked for, the
// envelope's own apiVersion and kind) are borrowed from the body where they carry no escapes:
// they are checked for their type and shape without a copy.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupVersionKind<'a> {
    #[serde(borrow)]
    group: Cow<'a, str>,
    #[serde(borrow)]
    version: Cow<'a, str>,
    #[serde(borrow)]
    kind: Cow<'a, str>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct GroupVersionResource<'a> {
    #[serde(borrow)]
    group: Cow<'a, str>,
    #[serde(borrow)]
    version: Cow<'a, str>,
    #[serde(borrow)]
    resource: Cow<'a, str>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct UserInfo<'a> {
    #[serde(default)]
    username: Option<String>,
    #[serde(default, borrow)]
    uid: Option<Cow<'a, str>>,
    #[serde(default)]
    groups: Option<Vec<String>>,
    #[serde(default)]
    extra: Option<std::collections::BTreeMap<String, Vec<String>>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct RequestIn<'a> {
    uid: String,
    #[serde(borrow)]
    kind: Obj<GroupVersionKind<'a>>,
    #[serde(borrow)]
    resource: Obj<GroupVersionResource<'a>>,
    #[serde(default)]
    sub_resource: Option<String>,
    #[serde(default, borrow)]
    request_kind: Option<Obj<GroupVersionKind<'a>>>,
    #[serde(default, borrow)]
    request_resource: Option<Obj<GroupVersionResource<'a>>>,
    #[serde(default, borrow)]
    request_sub_resource: Option<Cow<'a, str>>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(borrow)]
    operation: Cow<'a, str>,
    #[serde(borrow)]
    user_info: Obj<UserInfo<'a>>,
    /// Borrowed from the body: an object is kept as a slice of it, never copied.
    #[serde(default, borrow)]
    object: Option<&'a RawValue>,
    #[serde(default, borrow)]
    old_object: Option<&'a RawValue>,
    #[serde(default)]
    dry_run: Option<bool>,
    #[serde(default, borrow)]
    options: Option<&'a RawValue>,
}

/// A decoded review: the request's uid and subresource beside the subject.
#[derive(Debug)]
pub struct Review {
    /// The request uid, echoed in the response.
    pub uid: String,
    /// The subresource (`status`, `scale`), if any.
    pub sub_resource: Option<String>,
    /// What the engine judges.
    pub subject: Subject,
}

#[derive(Deserialize)]
struct Head {
    #[serde(rename = "apiVersion")]
    api_version: Option<String>,
}

/// The error of a body that did not decode, naming the member it was found at
/// (`request.userInfo.username: invalid type: …`). Decoding again to track the path costs
/// something, so only the error path pays it.
fn with_path(body: &[u8], plain: serde_json::Error) -> String {
    let mut de = serde_json::Deserializer::from_slice(body);
    match serde_path_to_error::deserialize::<_, Obj<ReviewIn>>(&mut de) {
        Err(e) if e.path().iter().next().is_some() => format!("{}: {}", e.path(), e.inner()),
        _ => plain.to_string(),
    }
}

/// Decode an AdmissionReview body. The objects stay raw JSON, as slices of `body` (which
/// they keep alive): decoding copies none of their bytes.
pub fn decode(body: impl Into<Bytes>) -> Result<Review, DecodeError> {
    decode_reading(body, &|_, _| Reading::Raw)
}

/// How the objects of a group and kind are read (`Engine::reading`).
pub type Readings<'f> = &'f dyn Fn(&str, &str) -> Reading;

/// Decode an AdmissionReview body, reading each object as `reading` says for the request's
/// kind, in the same pass (`Reading`). The objects stay raw JSON, as slices of `body`.
pub fn decode_reading(body: impl Into<Bytes>, reading: Readings<'_>) -> Result<Review, DecodeError> {
    let body: Bytes = body.into();
    // One pass over the body reads the review as the apiserver writes it; anything else (an
    // error to word, a member out of place) is decoded again by serde's derive below, which
    // says what is wrong, or reads the body the one pass declined.
    if let Some(parts) = read(&body, reading) {
        parts.complete()?;
        return Ok(parts.review());
    }
    decode_whole(&body)
}

impl Parts<'_> {
    /// What the operation writes is there: a CREATE or UPDATE without its object (and an
    /// UPDATE without the object it replaces) is no review to admit unjudged.
    fn complete(&self) -> Result<(), DecodeError> {
        let op = self.operation.as_ref();
        if matches!(op, "CREATE" | "UPDATE") && self.object.is_none() {
            return Err(DecodeError::Malformed(format!(
                "request.object: a {op} carries the object it writes, found none (null or absent)"
            )));
        }
        if op == "UPDATE" && self.old_object.is_none() {
            return Err(DecodeError::Malformed(
                "request.oldObject: an UPDATE carries the object it replaces, found none (null or absent)"
                    .to_string(),
            ));
        }
        Ok(())
    }
}

/// What a review holds that covenant keeps.
struct Parts<'a> {
    uid: String,
    kind: GroupVersionKind<'a>,
    sub_resource: Option<String>,
    name: Option<String>,
    namespace: Option<String>,
    operation: Cow<'a, str>,
    user_info: User,
    object: Option<Object>,
    old_object: Option<Object>,
    dry_run: Option<bool>,
}

impl Parts<'_> {
    fn review(self) -> Review {
        let Parts {
            uid,
            kind,
            sub_resource,
            name,
            namespace,
            operation,
            user_info,
            object,
            old_object,
            dry_run,
        } = self;
        let subject = Subject {
            gvk: Gvk {
                group: kind.group.into_owned(),
                version: kind.version.into_owned(),
                kind: kind.kind.into_owned(),
            },
            operation: Operation::parse(&operation),
            name: name.unwrap_or_default(),
            namespace: namespace.filter(|n| !n.is_empty()),
            object,
            old_object,
            dry_run: dry_run.unwrap_or(false),
            user: user_info.name,
            groups: user_info.groups,
            budget: None,
            received_at: None,
            admitted: true,
            stop: crate::subject::Stop::default(),
        };
        Review { uid, sub_resource, subject }
    }
}

/// The members of a request, in the order the apiserver writes them.
const REQUEST_MEMBERS: [&str; 15] = [
    "uid",
    "kind",
    "resource",
    "subResource",
    "requestKind",
    "requestResource",
    "requestSubResource",
    "name",
    "namespace",
    "operation",
    "userInfo",
    "object",
    "oldObject",
    "dryRun",
    "options",
];

/// The members a request must carry (`uid`, `kind`, `resource`, `operation`, `userInfo`), as
/// bits of their places in `REQUEST_MEMBERS`.
const REQUIRED: u32 = 1 << 0 | 1 << 1 | 1 << 2 | 1 << 9 | 1 << 10;

/// The review in one pass: each member read by serde where it lies, each object's span found
/// (and its skeleton read, when a family asked for one) without building it. `None` for
/// anything but a well-formed v1 review with a request, in which case `decode_whole` reads
/// the body again and words what is wrong.
fn read<'a>(body: &'a Bytes, reading: Readings<'_>) -> Option<Parts<'a>> {
    // A body that is UTF-8 throughout is read as text: no value is checked again.
    let mut r = Reader::of_text(crate::source::utf8(body)?);
    if !r.enter_map() {
        return None;
    }
    let (mut api_version, mut kind, mut request, mut response) = (None, None, None, false);
    let mut first = true;
    while let Some(JsonKey(key)) = r.key(&mut first).ok()? {
        match &*key {
            "apiVersion" if api_version.is_none() => api_version = Some(r.string().ok()?.0),
            "kind" if kind.is_none() => kind = Some(r.string().ok()?.0),
            "request" if request.is_none() => request = Some(read_request(&mut r, body, reading)?),
            "response" if !response => {
                response = true;
                r.skip().ok()?;
            }
            _ => return None,
        }
    }
    let whole = r.peek().is_none();
    (whole && api_version.as_deref() == Some(API_VERSION) && kind.as_deref() == Some("AdmissionReview"))
        .then_some(request)
        .flatten()
}

fn read_request<'a>(r: &mut Reader<'a>, body: &Bytes, reading: Readings<'_>) -> Option<Parts<'a>> {
    if !r.enter_map() {
        return None;
    }
    let mut seen = 0u32;
    let (mut uid, mut kind, mut sub_resource, mut name, mut namespace) = (None, None, None, None, None);
    let (mut operation, mut user_info, mut object, mut old_object, mut dry_run) =
        (None, None, None, None, None);
    // How the objects are read, once the kind is known (the apiserver writes it first).
    let mut read_as = None;
    let mut first = true;
    while let Some(JsonKey(key)) = r.key(&mut first).ok()? {
        match first_naming(&REQUEST_MEMBERS, &key, &mut seen)? {
            "uid" => uid = Some(r.string().ok()?.0.into_owned()),
            "kind" => {
                let [group, version, kind_name] = strings_of(r, ["group", "version", "kind"])?;
                read_as = Some(reading(&group, &kind_name));
                kind = Some(GroupVersionKind { group, version, kind: kind_name });
            }
            "resource" => {
                strings_of(r, ["group", "version", "resource"])?;
            }
            "requestKind" => {
                or_null(r, |r| strings_of(r, ["group", "version", "kind"]))?;
            }
            "requestResource" => {
                or_null(r, |r| strings_of(r, ["group", "version", "resource"]))?;
            }
            "subResource" => sub_resource = or_null(r, owned_string)?,
            "requestSubResource" => {
                or_null(r, owned_string)?;
            }
            "name" => name = or_null(r, owned_string)?,
            "namespace" => namespace = or_null(r, owned_string)?,
            "operation" => operation = Some(r.string().ok()?.0),
            "userInfo" => user_info = Some(read_user(r)?),
            "object" => object = read_object(r, body, read_as)?,
            // The object before an update is read as the family asks, but parsed only when a
            // rule reads it.
            "oldObject" => {
                old_object = read_object(r, body, read_as.filter(|how| !matches!(how, Reading::Whole)))?
            }
            "dryRun" => {
                dry_run = or_null(r, |r| {
                    if r.literal(b"true") {
                        Some(true)
                    } else {
                        r.literal(b"false").then_some(false)
                    }
                })?
            }
            _ => {
                r.skip().ok()?;
            }
        }
    }
    if seen & REQUIRED != REQUIRED {
        return None;
    }
    Some(Parts {
        uid: uid?,
        kind: kind?,
        sub_resource,
        name,
        namespace,
        operation: operation?,
        user_info: user_info?,
        object,
        old_object,
        dry_run,
    })
}

// The envelope's members are read with the reader's own steps (strings, literals, a mapping's
// keys, a list's elements) rather than a serde deserializer started at each: one small path
// for all of them. Each takes exactly what the derive takes for its member and returns `None`
// at anything else, which the derive then reads and words.

/// `null`, or what `read` reads.
fn or_null<'a, T>(r: &mut Reader<'a>, read: impl FnOnce(&mut Reader<'a>) -> Option<T>) -> Option<Option<T>> {
    if r.literal(b"null") {
        Some(None)
    } else {
        read(r).map(Some)
    }
}

/// A string, owned.
fn owned_string(r: &mut Reader<'_>) -> Option<String> {
    Some(r.string().ok()?.0.into_owned())
}

/// A list of strings.
fn strings(r: &mut Reader<'_>) -> Option<Vec<String>> {
    if !r.enter_list() {
        return None;
    }
    let (mut out, mut first) = (Vec::new(), true);
    while r.element(&mut first).ok()? {
        out.push(owned_string(r)?);
    }
    Some(out)
}

/// A mapping of exactly the members `names`, each a string, each once.
fn strings_of<'a, const N: usize>(r: &mut Reader<'a>, names: [&str; N]) -> Option<[Cow<'a, str>; N]> {
    if !r.enter_map() {
        return None;
    }
    let mut found: [Option<Cow<'a, str>>; N] = std::array::from_fn(|_| None);
    let mut first = true;
    while let Some(JsonKey(key)) = r.key(&mut first).ok()? {
        let at = found.get_mut(names.iter().position(|n| *n == key)?)?;
        if at.is_some() {
            return None;
        }
        *at = Some(r.string().ok()?.0);
    }
    found.iter().all(Option::is_some).then(|| found.map(Option::unwrap_or_default))
}

/// `userInfo`: who asked. Its `uid` and `extra` are checked for their shape and dropped.
fn read_user(r: &mut Reader<'_>) -> Option<User> {
    if !r.enter_map() {
        return None;
    }
    let mut user = User::default();
    let (mut seen, mut first) = (0, true);
    while let Some(JsonKey(key)) = r.key(&mut first).ok()? {
        match first_naming(&["username", "uid", "groups", "extra"], &key, &mut seen)? {
            "username" => user.name = or_null(r, owned_string)?,
            "groups" => user.groups = or_null(r, strings)?.unwrap_or_default(),
            "uid" => {
                or_null(r, owned_string)?;
            }
            _ => {
                or_null(r, lists_of_strings)?;
            }
        }
    }
    Some(user)
}

/// A mapping of lists of strings (`userInfo.extra`), checked and dropped.
fn lists_of_strings(r: &mut Reader<'_>) -> Option<()> {
    if !r.enter_map() {
        return None;
    }
    let mut first = true;
    while r.key(&mut first).ok()?.is_some() {
        strings(r)?;
    }
    Some(())
}

/// Which of `members` `key` names, the first time it is named (marked in `seen`, a bit each);
/// `None` for a key not among them or named again, which the derive refuses.
fn first_naming(members: &[&'static str], key: &str, seen: &mut u32) -> Option<&'static str> {
    let at = members.iter().position(|m| *m == key)?;
    if *seen & (1 << at) != 0 {
        return None;
    }
    *seen |= 1 << at;
    Some(members[at])
}

/// What a review says of who asked, as covenant keeps it.
#[derive(Default)]
struct User {
    name: Option<String>,
    groups: Vec<String>,
}

/// An object member: `null`, or a JSON object kept as its span of the body, read as
/// `reading` says (`None`, as when the kind was not read before it: raw). `None` for anything
/// else.
fn read_object(r: &mut Reader<'_>, body: &Bytes, reading: Option<Reading>) -> Option<Option<Object>> {
    match r.peek()? {
        b'n' => r.value::<()>().ok().map(|()| None),
        b'{' => {
            let start = r.pos();
            let object = match reading.unwrap_or_default() {
                Reading::Apart(path, models) => {
                    let skeleton = r.skeleton(path, models).ok()?;
                    Object::from_raw_read(body.slice(start..r.pos()), skeleton)
                }
                Reading::Whole => {
                    let value = r.value::<serde_json::Value>().ok()?;
                    Object::from_raw_parsed(body.slice(start..r.pos()), value)
                }
                Reading::Raw => Object::from_raw(body.slice(r.skip().ok()?)),
            };
            Some(Some(object))
        }
        _ => None,
    }
}

/// Decode a review with serde's derive alone, which words every problem: what the one pass
/// falls back to. The fuzz harness asserts that `decode` accepts what this accepts, alike.
#[doc(hidden)]
pub fn decode_by_derive(body: impl Into<Bytes>) -> Result<Review, DecodeError> {
    decode_whole(&body.into())
}

/// Decode a review with serde's derive, which words every problem.
fn decode_whole(body: &Bytes) -> Result<Review, DecodeError> {
    let review: ReviewIn = match serde_json::from_slice::<Obj<ReviewIn>>(body) {
        Ok(Obj(r)) => r,
        Err(e) => {
            // On the error path only: a review of another version is named as such rather
            // than by whichever of its members this decoder does not declare.
            if let Ok(Head { api_version: Some(v) }) = serde_json::from_slice::<Head>(body) {
                if v != API_VERSION {
                    return Err(DecodeError::Version { found: v });
                }
            }
            return Err(DecodeError::Malformed(with_path(body, e)));
        }
    };
    if review.api_version != API_VERSION {
        return Err(DecodeError::Version { found: review.api_version.into_owned() });
    }
    if review.kind != "AdmissionReview" {
        return Err(DecodeError::Malformed(format!(
            "kind is \"{}\", expected \"AdmissionReview\"",
            review.kind
        )));
    }
    let Obj(request) = review.request.ok_or(DecodeError::NoRequest)?;
    let (Obj(kind), Obj(user_info)) = (request.kind, request.user_info);
    // `null` objects arrive as a raw `null`; an absent object is the same thing. Anything
    // else must be a JSON object: a family never judges a made-up value.
    for (member, raw) in [("request.object", &request.object), ("request.oldObject", &request.old_object)] {
        if let Some(r) = raw {
            let first = r.get().trim_start().chars().next().unwrap_or(' ');
            if r.get() != "null" && first != '{' {
                let found = match first {
                    '[' => "a list",
                    '"' => "a string",
                    't' | 'f' => "a boolean",
                    _ => "a number",
                };
                return Err(DecodeError::Malformed(format!(
                    "{member}: expected an object or null, found {found}"
                )));
            }
        }
    }
    let present = |o: Option<&RawValue>| {
        o.filter(|r| r.get() != "null").map(|r| Object::from_raw(body.slice_ref(r.get().as_bytes())))
    };

    let parts = Parts {
        uid: request.uid,
        kind,
        sub_resource: request.sub_resource,
        name: request.name,
        namespace: request.namespace,
        operation: request.operation,
        user_info: User { name: user_info.username, groups: user_info.groups.unwrap_or_default() },
        object: present(request.object),
        old_object: present(request.old_object),
        dry_run: request.dry_run,
    };
    parts.complete()?;
    Ok(parts.review())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::subject::{Path, Skeleton, Step};

    const SCHEMAS: Path = &[
        Step::Key("spec"),
        Step::Key("versions"),
        Step::Each,
        Step::Key("schema"),
        Step::Key("openAPIV3Schema"),
    ];

    fn crds(group: &str, kind: &str) -> Reading {
        match (group, kind) {
            ("apiextensions.k8s.io", "CustomResourceDefinition") => Reading::Apart(SCHEMAS, None),
            ("", "Pod") => Reading::Whole,
            _ => Reading::Raw,
        }
    }

    /// Everything of a review covenant reads, spelled out for comparison.
    fn spelled(r: &Review) -> String {
        let s = &r.subject;
        let object = |o: &Option<Object>| o.as_ref().map(|o| o.text().unwrap_or("not UTF-8").to_string());
        format!(
            "{} {:?} {:?} {:?} {} {:?} {} {:?} {:?} {:?} {:?}",
            r.uid,
            r.sub_resource,
            s.gvk,
            s.operation,
            s.name,
            s.namespace,
            s.dry_run,
            s.user,
            s.groups,
            object(&s.object),
            object(&s.old_object)
        )
    }

    /// Every review body among the fixtures (and the load bench's samples).
    fn bodies() -> Vec<(String, Vec<u8>)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut out = Vec::new();
        let mut dirs = vec![
            root.join("tests/fixtures/admission"),
            root.join("tests/fixtures/bench"),
            root.join("examples/reviews"),
        ];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    dirs.push(path);
                } else if path.extension().is_some_and(|e| e == "json") {
                    out.push((path.display().to_string(), std::fs::read(&path).unwrap()));
                }
            }
        }
        assert!(out.len() >= 20, "{} bodies", out.len());
        out
    }

    /// The one pass reads what serde's derive reads, and declines what it refuses. Whether
    /// the one pass read the body.
    fn agrees(name: &str, body: &[u8]) -> bool {
        let body = Bytes::copy_from_slice(body);
        match (read(&body, &crds), decode_whole(&body)) {
            (Some(fast), Ok(whole)) => {
                assert_eq!(spelled(&fast.review()), spelled(&whole), "{name}");
                true
            }
            (None, _) => false,
            (Some(fast), Err(e)) => {
                panic!("{name}: read {} where the derive refuses: {e}", spelled(&fast.review()))
            }
        }
    }

    #[test]
    fn the_one_pass_reads_every_fixture_as_the_derive_does() {
        let mut read_whole = 0;
        // How many bodies the one pass read with each of the changes below.
        let mut taken = std::collections::BTreeMap::new();
        for (name, body) in bodies() {
            let text = String::from_utf8(body.clone()).unwrap();
            if decode_whole(&Bytes::from(body.clone())).is_ok() {
                // Every review the derive reads, the one pass reads too (none falls back).
                assert!(read(&Bytes::from(body.clone()), &crds).is_some(), "{name}");
                read_whole += 1;
            }
            agrees(&name, &body);
            // Cut short anywhere, with a member added or repeated, or a member of the wrong type.
            for cut in (1..10).map(|i| body.len() * i / 10) {
                agrees(&name, &body[..cut]);
            }
            agrees(&name, &[&body[..], b" {}"].concat());
            for (from, to) in [
                ("\"request\":{", "\"request\":{\"extra\":1,"),
                ("\"request\":{", "\"request\":{\"uid\":\"again\","),
                ("\"request\":{", "\"request\":{\"object\":null,"),
                ("\"request\":{", "\"request\":{\"dryRun\":\"yes\","),
                ("\"request\":{", "\"request\":{\"options\":{\"a\":,"),
                ("\"object\":{", "\"object\":[{"),
                ("\"object\":{", "\"object\":{\"a\":1,,"),
                ("\"kind\":\"AdmissionReview\"", "\"kind\":\"AdmissionReview\",\"kind\":\"AdmissionReview\""),
                ("\"apiVersion\":\"admission.k8s.io/v1\"", "\"apiVersion\":\"admission.k8s.io/v2\""),
                // The members the one pass reads itself: what the derive takes, and what it refuses.
                ("\"request\":{", "\"request\":{\"requestKind\":null,\"requestSubResource\":null,\"subResource\":\"s\\u0074atus\","),
                ("\"dryRun\":false", "\"dryRun\":true"),
                ("\"dryRun\":false", "\"dryRun\":null"),
                ("\"request\":{", "\"request\":{\"dryRun\":nullx,"),
                ("\"request\":{", "\"request\":{\"subResource\":7,"),
                ("\"userInfo\":{", "\"userInfo\":{\"extra\":{\"a\":[\"b\"],\"c\":[]},\"uid\":null,"),
                ("\"userInfo\":{", "\"userInfo\":{\"extra\":{\"a\":null},"),
                ("\"userInfo\":{", "\"userInfo\":{\"extra\":null,\"groups\":null,"),
                ("\"userInfo\":{", "\"userInfo\":{\"groups\":[\"a\",1],"),
                ("\"username\":\"", "\"username\":\"\\\"me\\\"\\t"),
                ("\"userInfo\":{", "\"userInfo\":{\"username\":7,"),
                ("\"userInfo\":{", "\"userInfo\":{\"user\":\"me\","),
                ("\"kind\":{\"group\":", "\"kind\":{\"kind\":\"X\",\"group\":"),
                ("\"kind\":{\"group\":", "\"kind\":{\"group\":null,\"g\":"),
                ("\"kind\":{\"group\":\"", "\"kind\":{\"gr\\u006fup\":\""),
                ("\"resource\":{", "\"resource\":{\"extra\":\"x\","),
                ("\"resource\":{\"group\":", "\"resource\":{\"kind\":"),
                ("\"operation\":\"", "\"operation\":[\""),
                ("\"uid\":\"", "\"uid\":\"\\u00e9"),
                ("\"dryRun\":false", "\"dryRun\":falsey"),
                ("\"dryRun\":false", "\"dryRun\":false\n "),
                ("\"dryRun\":false", "\"dryRun\":0"),
                ("\"request\":{", "\"request\":{\"requestKind\":{\"group\":\"\",\"version\":\"v1\"},"),
                ("\"request\":{", "\"request\":{\"requestResource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"x\",\"resource\":\"y\"},"),
                ("\"userInfo\":{", "\"userInfo\":{\"groups\":[\"a\"],\"groups\":[\"b\"],"),
                ("\"userInfo\":{", "\"userInfo\":{\"extra\":{\"a\":[\"b\"],\"a\":[\"c\"]},"),
                ("\"groups\":[", "\"groups\":[ \"a\" , "),
                ("\"userInfo\":{", "\"userInfo\":{\"uid\":7,"),
            ] {
                let compact = text.replace(": ", ":");
                if compact.contains(from) {
                    let read = agrees(&name, compact.replacen(from, to, 1).as_bytes());
                    *taken.entry(to).or_insert(0) += usize::from(read);
                }
            }
        }
        assert!(read_whole >= 15, "{read_whole}");
        // The changes the derive takes are read by the one pass too, not left to the derive.
        for to in [
            "\"request\":{\"requestKind\":null,\"requestSubResource\":null,\"subResource\":\"s\\u0074atus\",",
            "\"dryRun\":true",
            "\"dryRun\":null",
            "\"userInfo\":{\"extra\":{\"a\":[\"b\"],\"c\":[]},\"uid\":null,",
            "\"username\":\"\\\"me\\\"\\t",
            "\"kind\":{\"gr\\u006fup\":\"",
            "\"uid\":\"\\u00e9",
            "\"dryRun\":false\n ",
            "\"userInfo\":{\"extra\":{\"a\":[\"b\"],\"a\":[\"c\"]},",
            "\"groups\":[ \"a\" , ",
        ] {
            assert!(taken.get(to).is_some_and(|n| *n > 0), "{to}: {taken:?}");
        }
    }

    #[test]
    fn a_deeply_nested_object_is_read_as_the_derive_reads_it() {
        let body = |kind: &str, depth: usize| {
            let object = format!("{}1{}", "{\"x\":".repeat(depth), "}".repeat(depth));
            format!(
                r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"u","kind":{{"group":"","version":"v1","kind":"{kind}"}},"resource":{{"group":"","version":"v1","resource":"x"}},"operation":"CREATE","userInfo":{{}},"object":{object},"oldObject":null}}}}"#
            )
        };
        // Skipping an object has no nesting limit (in the derive either); parsing one stops
        // at serde_json's 128 levels, and an object read whole that cannot be parsed is left
        // to the derive, raw, for the engine to report as unreadable.
        for kind in ["ConfigMap", "Pod"] {
            for depth in [100, 127, 128, 1000] {
                let text = body(kind, depth);
                agrees(&format!("{kind} {depth}"), text.as_bytes());
                let object = decode_reading(text, &crds).unwrap().subject.object.unwrap();
                assert_eq!(object.value().is_ok(), depth < 128, "{kind} {depth}");
            }
        }
    }

    #[test]
    fn an_object_read_whole_is_parsed_in_the_same_pass_and_the_old_one_is_not() {
        let body = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/admission/kyverno/03-update-pod.json"
        ))
        .unwrap();
        let review = decode_reading(body, &crds).unwrap();
        let object = review.subject.object.as_ref().unwrap();
        assert!(object.is_parsed());
        assert_eq!(
            object.value().unwrap(),
            &serde_json::from_str::<serde_json::Value>(object.text().unwrap()).unwrap()
        );
        assert!(!review.subject.old_object.as_ref().unwrap().is_parsed());
    }

    #[test]
    fn a_crd_update_is_read_with_its_schemas_apart_in_the_same_pass() {
        let body = Bytes::from(
            std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/bench/crd-update-400k.json"))
                .unwrap(),
        );
        let review = decode_reading(body.clone(), &crds).unwrap();
        for object in [&review.subject.object, &review.subject.old_object] {
            let object = object.as_ref().unwrap();
            let text = object.text().unwrap();
            // The skeleton read in the review's pass is the one read from the object alone.
            assert_eq!(object.skeleton(), Some(&Skeleton::read(text, SCHEMAS).unwrap()));
            assert_eq!(object.skeleton().unwrap().holes.len(), 2);
            assert!(!object.is_parsed());
        }
        // Without a path for its kind, no skeleton.
        let plain = decode(body).unwrap();
        assert!(plain.subject.object.unwrap().skeleton().is_none());
    }

    #[test]
    fn an_object_that_is_not_a_json_object_is_refused_naming_the_member() {
        let review = |object: &str, old: &str| {
            format!(
                r#"{{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{{"uid":"u","kind":{{"group":"","version":"v1","kind":"Pod"}},"resource":{{"group":"","version":"v1","resource":"pods"}},"operation":"UPDATE","userInfo":{{}},"object":{object},"oldObject":{old}}}}}"#
            )
        };
        for (object, old, member, found) in [
            ("[1]", "null", "request.object", "a list"),
            ("\"x\"", "{}", "request.object", "a string"),
            ("{}", "7", "request.oldObject", "a number"),
            ("{}", "true", "request.oldObject", "a boolean"),
        ] {
            let e = decode(review(object, old)).unwrap_err().to_string();
            assert!(e.contains(member) && e.contains(found), "{e}");
        }
        assert!(decode(review("{}", "{}")).is_ok());
        // What the operation writes is there: an UPDATE without either object, a CREATE
        // without its object, is malformed, never admitted unjudged.
        for (object, old, member) in [("null", "{}", "request.object"), ("{}", "null", "request.oldObject")] {
            let e = decode(review(object, old)).unwrap_err().to_string();
            assert!(e.contains(member) && e.contains("found none"), "{e}");
        }
        let create = MINIMAL.replace(r#""object":{"a":1}"#, r#""object":null"#);
        assert!(decode(create).unwrap_err().to_string().contains("a CREATE carries the object it writes"));
    }

    const MINIMAL: &str = r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u1","kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},"operation":"CREATE","userInfo":{"username":"me"},"object":{"a":1},"oldObject":null}}"#;

    #[test]
    fn minimal_review_decodes_without_parsing_the_object() {
        let r = decode(MINIMAL).unwrap();
        assert_eq!(r.uid, "u1");
        assert_eq!(r.subject.gvk.kind, "Pod");
        assert!(r.subject.old_object.is_none());
        let object = r.subject.object.as_ref().unwrap();
        assert!(!object.is_parsed());
    }

    #[test]
    fn undeclared_member_is_malformed_and_named() {
        let body = MINIMAL.replace("\"uid\":\"u1\"", "\"uid\":\"u1\",\"extraMember\":1");
        let err = decode(body.to_string()).unwrap_err();
        assert!(err.to_string().contains("extraMember"), "{err}");
    }

    #[test]
    fn another_version_is_named() {
        let body = MINIMAL.replace("admission.k8s.io/v1", "admission.k8s.io/v1beta1");
        assert_eq!(
            decode(body.to_string()).unwrap_err(),
            DecodeError::Version { found: "admission.k8s.io/v1beta1".into() }
        );
    }

    #[test]
    fn garbage_is_malformed() {
        assert!(matches!(decode(&b"{not json"[..]), Err(DecodeError::Malformed(_))));
        assert!(matches!(decode(&b"[]"[..]), Err(DecodeError::Malformed(_))));
    }
}
