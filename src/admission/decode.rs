//! AdmissionReview bytes to a `Subject`.

use std::marker::PhantomData;

use bytes::Bytes;
use serde::de::value::MapAccessDeserializer;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

use super::API_VERSION;
use crate::subject::{Gvk, Object, Operation, Subject};

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
    api_version: String,
    kind: String,
    #[serde(default, borrow)]
    request: Option<Obj<RequestIn<'a>>>,
    /// Declared by the v1 schema; a request review never carries one that matters, and its
    /// content is not read.
    #[serde(default, borrow)]
    #[allow(dead_code)]
    response: Option<&'a RawValue>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct GroupVersionKind {
    group: String,
    version: String,
    kind: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct GroupVersionResource {
    group: String,
    version: String,
    resource: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct UserInfo {
    #[serde(default)]
    username: Option<String>,
    #[serde(default)]
    uid: Option<String>,
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
    kind: Obj<GroupVersionKind>,
    resource: Obj<GroupVersionResource>,
    #[serde(default)]
    sub_resource: Option<String>,
    #[serde(default)]
    request_kind: Option<Obj<GroupVersionKind>>,
    #[serde(default)]
    request_resource: Option<Obj<GroupVersionResource>>,
    #[serde(default)]
    request_sub_resource: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    operation: String,
    user_info: Obj<UserInfo>,
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
    let body: Bytes = body.into();
    let body = &body;
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
        return Err(DecodeError::Version { found: review.api_version });
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
    let subject = Subject {
        gvk: Gvk { group: kind.group, version: kind.version, kind: kind.kind },
        operation: Operation::parse(&request.operation),
        name: request.name.unwrap_or_default(),
        namespace: request.namespace.filter(|n| !n.is_empty()),
        object: present(request.object),
        old_object: present(request.old_object),
        dry_run: request.dry_run.unwrap_or(false),
        user: user_info.username,
        groups: user_info.groups.unwrap_or_default(),
        budget: None,
        received_at: None,
        admitted: true,
        stop: crate::subject::Stop::default(),
    };
    Ok(Review { uid: request.uid, sub_resource: request.sub_resource, subject })
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(decode(review("{}", "null")).is_ok());
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
