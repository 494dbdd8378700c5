//! The webhook routes: `POST /api/v0/validate` and `POST /api/v0/mutate`. Each reads the
//! body within the limit, decodes the review, runs the engine and answers the review; every
//! refusal of the HTTP layer is a problem document. One code path serves both routes.

use std::time::{Duration, Instant, SystemTime};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use super::problem::Problem;
use super::state::AppState;
use crate::admission::{self, DecodeError};
use crate::rules::Action;
use crate::subject::Operation;

/// Which webhook a request came to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Webhook {
    /// Validating.
    Validate,
    /// Mutating.
    Mutate,
}

impl Webhook {
    fn as_str(self) -> &'static str {
        match self {
            Webhook::Validate => "validate",
            Webhook::Mutate => "mutate",
        }
    }
}

/// `POST /api/v0/validate`
pub async fn validate(State(state): State<AppState>, request: Request) -> Response {
    handle(state, Webhook::Validate, request).await
}

/// `POST /api/v0/mutate`
pub async fn mutate(State(state): State<AppState>, request: Request) -> Response {
    handle(state, Webhook::Mutate, request).await
}

/// The deadline the apiserver sent in `?timeout=` (such as `10s`).
fn deadline(query: Option<&str>) -> Result<Option<Duration>, Problem> {
    let Some(query) = query else { return Ok(None) };
    let mut timeout = None;
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "timeout" => {
                let d = humantime::parse_duration(value).map_err(|_| {
                    Problem::bad_request(
                        "invalid-query",
                        "Invalid query parameter",
                        format!(
                            "query parameter timeout: expected a duration such as \"10s\", found \"{value}\""
                        ),
                    )
                })?;
                timeout = Some(d);
            }
            other => {
                return Err(Problem::bad_request(
                    "invalid-query",
                    "Invalid query parameter",
                    format!(
                        "query parameter \"{other}\" is not declared; the webhook reads only \"timeout\""
                    ),
                ))
            }
        }
    }
    Ok(timeout)
}

fn content_type_ok(headers: &HeaderMap) -> Result<(), Problem> {
    let found = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    let essence = found.split(';').next().unwrap_or("").trim();
    if essence.eq_ignore_ascii_case("application/json") {
        Ok(())
    } else {
        Err(Problem::unsupported_media_type(if found.is_empty() { "(none)" } else { found }))
    }
}

async fn read_body(
    body: Body,
    headers: &HeaderMap,
    limit: usize,
    timeout: Duration,
) -> Result<Bytes, Problem> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > limit) {
        return Err(Problem::too_large(limit));
    }
    let read = tokio::time::timeout(timeout, axum::body::to_bytes(body, limit));
    read.await.map_err(|_| Problem::request_timeout(timeout))?.map_err(|e| {
        let too_large = std::error::Error::source(&e)
            .is_some_and(|s| s.is::<http_body_util::LengthLimitError>())
            || e.to_string().contains("length limit");
        if too_large {
            Problem::too_large(limit)
        } else {
            Problem::bad_request(
                "unreadable-body",
                "Unreadable body",
                format!("request body could not be read: {e}"),
            )
        }
    })
}

async fn handle(state: AppState, webhook: Webhook, request: Request) -> Response {
    let started = Instant::now();
    let (parts, body) = request.into_parts();
    let outcome = async {
        let timeout = deadline(parts.uri.query())?;
        content_type_ok(&parts.headers)?;
        let bytes = read_body(body, &parts.headers, state.body_limit, state.read_timeout).await?;
        let review = admission::decode(&bytes).map_err(|e| {
            let slug = match e {
                DecodeError::Version { .. } => "unsupported-version",
                _ => "malformed-review",
            };
            Problem::bad_request(slug, "Invalid AdmissionReview", e.to_string())
        })?;
        Ok::<_, Problem>((review, timeout))
    }
    .await;

    let (mut review, timeout) = match outcome {
        Ok(ok) => ok,
        Err(problem) => {
            state.metrics.requests.with_label_values(&[webhook.as_str(), "", "", "", "error", "false"]).inc();
            // The detail goes to the client only: a decoding error can quote what the body
            // held, and the log never carries a body's contents.
            tracing::info!(
                webhook = webhook.as_str(),
                status = problem.status,
                problem = problem.title,
                "review refused"
            );
            return problem.into_response();
        }
    };

    // Rules that look up cluster state share what is left of the request's deadline,
    // minus a margin to answer in, capped by the configured budget.
    let budget = match timeout {
        Some(t) => t.saturating_sub(Duration::from_millis(250)).min(state.lookup_budget),
        None => state.lookup_budget,
    };
    review.subject.budget = Some(budget);
    review.subject.received_at = Some(SystemTime::now());

    if webhook == Webhook::Mutate {
        return answer_mutation(state, review, started);
    }
    let mut extra_warnings = Vec::new();
    let verdict = match (&review.subject.operation, webhook, state.mutation_enabled) {
        (Operation::Other(op), _, _) => {
            extra_warnings.push(format!(
                "covenant: operation \"{op}\" is not one of CREATE, UPDATE, DELETE, CONNECT; no rule ran"
            ));
            crate::engine::Verdict::default()
        }
        (_, Webhook::Mutate, _) => crate::engine::Verdict::default(),
        (_, Webhook::Validate, _) => state.engine.evaluate(&review.subject, state.cluster.as_ref()),
    };

    let subject = &review.subject;
    let decision = if verdict.denied() { "denied" } else { "allowed" };
    let dry_run = if subject.dry_run { "true" } else { "false" };
    let op = subject.operation.as_label();
    let (group, kind) = state.engine.metric_labels(&subject.gvk.group, &subject.gvk.kind);
    state.metrics.requests.with_label_values(&[webhook.as_str(), op, group, kind, decision, dry_run]).inc();
    for f in &verdict.findings {
        state.metrics.findings.with_label_values(&[f.rule.id, f.action.as_str()]).inc();
    }
    // Each rule once, with how many findings it drew (a CRD update can draw hundreds).
    let rules = verdict.rule_counts();
    tracing::info!(
        uid = %review.uid,
        webhook = webhook.as_str(),
        gvk = %subject.gvk,
        operation = op,
        allowed = !verdict.denied(),
        rules = ?rules,
        audited = verdict.at(Action::Audit).count(),
        "review answered"
    );

    let response = admission::respond(&review.uid, &verdict, &extra_warnings);
    answer(&state, webhook.as_str(), subject, started, &response)
}

/// Encode a review response, record the request's duration, and answer 200.
fn answer(
    state: &AppState,
    webhook: &str,
    subject: &crate::subject::Subject,
    started: std::time::Instant,
    response: &impl serde::Serialize,
) -> Response {
    let body = match serde_json::to_vec(response) {
        Ok(b) => b,
        Err(e) => {
            tracing::error!(error = %e, "cannot encode the review response");
            return Problem::internal().into_response();
        }
    };
    let dry_run = if subject.dry_run { "true" } else { "false" };
    let (group, kind) = state.engine.metric_labels(&subject.gvk.group, &subject.gvk.kind);
    state
        .metrics
        .duration
        .with_label_values(&[webhook, subject.operation.as_label(), group, kind, dry_run])
        .observe(started.elapsed().as_secs_f64());
    (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The mutating webhook: patches only. Its findings belong to the validating webhook, so a
/// review is never judged twice; a dry run gets the same patch as a real request.
fn answer_mutation(
    state: AppState,
    review: crate::admission::Review,
    started: std::time::Instant,
) -> Response {
    let subject = &review.subject;
    let mutation = match (&subject.operation, state.mutation_enabled) {
        (Operation::Create | Operation::Update, true) => state.engine.mutate(subject, state.cluster.as_ref()),
        _ => crate::engine::Mutation::default(),
    };
    let dry_run = if subject.dry_run { "true" } else { "false" };
    let op = subject.operation.as_label();
    let decision = if mutation.ops.is_empty() { "allowed" } else { "patched" };
    let (group, kind) = state.engine.metric_labels(&subject.gvk.group, &subject.gvk.kind);
    state.metrics.requests.with_label_values(&["mutate", op, group, kind, decision, dry_run]).inc();
    for rule in &mutation.rules {
        state.metrics.patches.with_label_values(&[rule]).inc();
    }
    tracing::info!(uid = %review.uid, webhook = "mutate", gvk = %subject.gvk, operation = op, patched = !mutation.ops.is_empty(), rules = ?mutation.rules, "review answered");
    let response = admission::respond_mutation(&review.uid, &mutation.ops, &mutation.warnings);
    answer(&state, "mutate", subject, started, &response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_query_is_read_and_unknown_parameters_refused() {
        assert_eq!(deadline(Some("timeout=10s")).unwrap(), Some(Duration::from_secs(10)));
        assert_eq!(deadline(None).unwrap(), None);
        assert!(deadline(Some("timeout=soon")).is_err());
        assert!(deadline(Some("dryRun=1")).is_err());
    }
}
