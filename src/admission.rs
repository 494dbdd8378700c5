//! The Kubernetes admission protocol: an `admission.k8s.io/v1` AdmissionReview in, a
//! `Subject` for the engine, and a `Verdict` back out as a review. Knows nothing of HTTP.
//!
//! The envelope is decoded typed and strictly (an undeclared member is refused), while
//! `object`, `oldObject` and `options` stay raw JSON, so a review no rule concerns is
//! answered without parsing the object.

mod decode;
mod respond;

pub use decode::{decode, decode_by_derive, decode_reading, DecodeError, Readings, Review};
pub use respond::{
    respond, respond_mutation, respond_unjudged, Answer, AnswerResponse, MAX_WARNINGS, MAX_WARNING_LEN,
};

/// The one AdmissionReview version covenant speaks.
pub const API_VERSION: &str = "admission.k8s.io/v1";
