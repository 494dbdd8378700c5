//! RFC 9457 problem documents: every refusal of the HTTP layer (not a denial of an object,
//! which is a 200 review with `allowed: false`).

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

/// A problem document.
#[derive(Debug, Serialize)]
pub struct Problem {
    /// A URI naming the problem type.
    #[serde(rename = "type")]
    pub kind: String,
    /// A short summary of the type.
    pub title: &'static str,
    /// The HTTP status.
    pub status: u16,
    /// What was wrong with this request.
    pub detail: String,
    /// The request uid, when the review was readable far enough to have one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uid: Option<String>,
}

/// The media type of problem documents.
pub const CONTENT_TYPE: &str = "application/problem+json";

impl Problem {
    /// The answer to a comparison of published versions that was not made: a kind that is not a
    /// construct kind is the caller's mistake (400), a cluster that cannot be read is 503 (what
    /// is published is unknown, never "not published"), two objects at one version a conflict,
    /// two that cannot be diffed 422.
    pub fn uncompared(why: crate::contract::Uncompared) -> Problem {
        use crate::contract::Uncompared;
        use crate::contract::Unpublished;
        let why = match why {
            Uncompared::Unpublished(why) => why,
            not @ Uncompared::NotComparable { .. } => {
                let detail = not.to_string();
                return Problem::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "not-comparable",
                    "Not comparable",
                    detail,
                );
            }
        };
        let (status, kind, title) = match &why {
            Unpublished::UnknownKind(_) => (StatusCode::BAD_REQUEST, "bad-kind", "Not a construct kind"),
            Unpublished::Unreadable(_) => {
                (StatusCode::SERVICE_UNAVAILABLE, "cluster-unavailable", "Cluster state unavailable")
            }
            Unpublished::Ambiguous { .. } => (StatusCode::CONFLICT, "ambiguous", "Published more than once"),
            Unpublished::Nothing(_) | Unpublished::NotAt { .. } => {
                (StatusCode::NOT_FOUND, "not-published", "Not published")
            }
        };
        Problem::new(status, kind, title, why.to_string())
    }

    /// A problem with the given status, type slug, title and detail.
    pub fn new(status: StatusCode, slug: &str, title: &'static str, detail: impl Into<String>) -> Problem {
        Problem {
            kind: format!("https://covenant.dev/problems/{slug}"),
            title,
            status: status.as_u16(),
            detail: detail.into(),
            uid: None,
        }
    }

    /// 404.
    pub fn not_found(path: &str) -> Problem {
        Problem::new(
            StatusCode::NOT_FOUND,
            "not-found",
            "Unknown route",
            format!("no route {path}; the webhook serves POST /api/v0/validate and POST /api/v0/mutate"),
        )
    }

    /// 405.
    pub fn method_not_allowed(method: &str, path: &str) -> Problem {
        Problem::new(
            StatusCode::METHOD_NOT_ALLOWED,
            "method-not-allowed",
            "Method not allowed",
            format!("{method} is not allowed on {path}; use POST"),
        )
    }

    /// 415.
    pub fn unsupported_media_type(found: &str) -> Problem {
        Problem::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "unsupported-media-type",
            "Unsupported media type",
            format!("content type \"{found}\" is not supported; expected \"application/json\""),
        )
    }

    /// 413.
    pub fn too_large(limit: usize) -> Problem {
        Problem::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "body-too-large",
            "Body too large",
            format!("request body is larger than the limit of {limit} bytes (server.bodyLimitBytes)"),
        )
    }

    /// 408: the body did not arrive within the read timeout.
    pub fn request_timeout(timeout: std::time::Duration) -> Problem {
        Problem::new(
            StatusCode::REQUEST_TIMEOUT,
            "request-timeout",
            "Request timeout",
            format!("request body did not arrive within {timeout:?} (--read-timeout)"),
        )
    }

    /// 429: no turn came free before the review's deadline.
    pub fn too_many(in_flight: usize) -> Problem {
        Problem::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too-many-reviews",
            "Too many reviews in flight",
            format!(
                "covenant is judging as many reviews as it holds at once ({in_flight} in flight, server.maxReviewsInFlight, and server.maxBufferedBytes of bodies) and none finished before this review's deadline; retry"
            ),
        )
    }

    /// 503: the review could not even be read by its deadline.
    pub fn unread(timeout: std::time::Duration) -> Problem {
        Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "unread",
            "Review not read in time",
            format!(
                "covenant could not read this review within its deadline of {}; retry",
                humantime::format_duration(timeout)
            ),
        )
    }

    /// 400.
    pub fn bad_request(slug: &str, title: &'static str, detail: impl Into<String>) -> Problem {
        Problem::new(StatusCode::BAD_REQUEST, slug, title, detail)
    }

    /// 500. The detail is generic: internals are logged, never returned.
    pub fn internal() -> Problem {
        Problem::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "Internal error",
            "covenant failed to answer this review; the error is in its log",
        )
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let status = StatusCode::from_u16(self.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let body = serde_json::to_vec(&self).unwrap_or_default();
        let mut response = (status, body).into_response();
        response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(CONTENT_TYPE));
        if status == StatusCode::TOO_MANY_REQUESTS {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}
