//! The webhook routes: `POST /api/v0/validate` and `POST /api/v0/mutate`. Each reads the
//! body within the limit, decodes the review, runs the engine and answers the review; every
//! refusal of the HTTP layer is a problem document. One code path serves both routes.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};

use super::problem::Problem;
use super::series::{Decision, Labels, Webhook};
use super::state::AppState;
use crate::admission::{self, DecodeError};
use crate::engine::Engine;
use crate::rules::Action;
use crate::subject::Operation;

/// A review's "review answered" line: at info when covenant had something to say about it
/// (a finding, a patch), at debug when `quiet` (it drew nothing), so a busy cluster's log
/// holds what was refused, warned, audited or patched rather than every apply; the metrics
/// count every review.
macro_rules! answered {
    ($quiet:expr, $($event:tt)+) => {
        if $quiet {
            tracing::debug!($($event)+)
        } else {
            tracing::info!($($event)+)
        }
    };
}

/// `POST /api/v0/validate`
pub fn validate(State(state): State<Arc<AppState>>, request: Request) -> impl Future<Output = Response> {
    handle(state, Webhook::Validate, request)
}

/// `POST /api/v0/mutate`
pub fn mutate(State(state): State<Arc<AppState>>, request: Request) -> impl Future<Output = Response> {
    handle(state, Webhook::Mutate, request)
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
                // The apiserver never waits longer than 30 s for a webhook: a longer timeout
                // is no deadline covenant should keep.
                timeout = Some(d.min(MAX_TIMEOUT));
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

/// Why a body was not read.
enum Unread {
    /// It broke a limit or could not be read: the problem to answer.
    Refused(Problem),
    /// The bytes it needed could not be held before its deadline: every byte covenant may
    /// hold belongs to bodies in flight.
    Crowded,
}

/// Read a body of at most `limit` bytes by `until` (a declared length over the limit is
/// refused before this, unread), holding room in `buffered` for each byte as it arrives: a
/// body that sends nothing holds nothing, and no turn is taken while it is awaited.
async fn read_body(
    body: Body,
    limit: usize,
    until: tokio::time::Instant,
    waited: Duration,
    buffered: &Arc<tokio::sync::Semaphore>,
) -> Result<(Bytes, tokio::sync::OwnedSemaphorePermit), Unread> {
    use http_body_util::BodyExt;
    let unreadable = |e: &dyn std::fmt::Display| {
        Unread::Refused(Problem::bad_request(
            "unreadable-body",
            "Unreadable body",
            format!("request body could not be read: {e}"),
        ))
    };
    let read = async {
        let mut body = body;
        let mut held: Option<tokio::sync::OwnedSemaphorePermit> = None;
        let mut chunks: Vec<Bytes> = Vec::new();
        let mut len = 0usize;
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| unreadable(&e))?;
            let Ok(data) = frame.into_data() else { continue };
            if data.is_empty() {
                continue;
            }
            len += data.len();
            if len > limit {
                return Err(Unread::Refused(Problem::too_large(limit)));
            }
            let n = u32::try_from(data.len()).map_err(|_| Unread::Refused(Problem::too_large(limit)))?;
            let room = buffered.clone().acquire_many_owned(n).await.map_err(|_| Unread::Crowded)?;
            match &mut held {
                Some(h) => h.merge(room),
                None => held = Some(room),
            }
            chunks.push(data);
        }
        // One frame (the usual case) is kept as it came; more are joined once, at the end.
        let bytes = match chunks.len() {
            0 => Bytes::new(),
            1 => chunks.swap_remove(0),
            _ => Bytes::from(chunks.concat()),
        };
        let held = match held {
            Some(h) => h,
            None => buffered.clone().acquire_many_owned(0).await.map_err(|_| Unread::Crowded)?,
        };
        Ok((bytes, held))
    };
    match tokio::time::timeout_at(until, read).await {
        Ok(read) => read,
        // The room for its bytes was taken by bodies in flight, or the body itself was slow:
        // told apart by whether the room was the wait (a body that sent its bytes is crowded
        // out; one that did not is a timeout).
        Err(_) if buffered.available_permits() == 0 => Err(Unread::Crowded),
        Err(_) => Err(Unread::Refused(Problem::request_timeout(waited))),
    }
}

/// Decode a review body, reading each object as its family asks (`Family::reading`); a problem
/// names what is wrong.
fn decode(bytes: &Bytes, engine: &Engine) -> Result<admission::Review, Problem> {
    admission::decode_reading(bytes.clone(), &|group, kind| engine.reading(group, kind)).map_err(|e| {
        let slug = match e {
            DecodeError::Version { .. } => "unsupported-version",
            _ => "malformed-review",
        };
        Problem::bad_request(slug, "Invalid AdmissionReview", e.to_string())
    })
}

/// What is kept of a review's deadline to answer in.
const ANSWER_MARGIN: Duration = Duration::from_millis(250);

/// The longest a review may take: the apiserver's maximum `timeoutSeconds` for a webhook.
const MAX_TIMEOUT: Duration = Duration::from_secs(30);

/// The deadline of a review that states none: the apiserver's default webhook timeout.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// How much of a body refused before it was read is still read (and dropped), and for how
/// long, so the client reads the refusal instead of a reset connection.
const DISCARD_BYTES: usize = 1024 * 1024;
const DISCARD_WITHIN: Duration = Duration::from_secs(2);

/// Read and drop up to `DISCARD_BYTES` of a body refused unread, for at most
/// `DISCARD_WITHIN`.
async fn discard(mut body: Body) {
    use http_body_util::BodyExt;
    let mut left = DISCARD_BYTES;
    let drain = async {
        while let Some(Ok(frame)) = body.frame().await {
            let n = frame.data_ref().map_or(0, |d| d.len());
            if n >= left {
                break;
            }
            left -= n;
        }
    };
    let _ = tokio::time::timeout(DISCARD_WITHIN, drain).await;
}

/// A refusal of the HTTP layer: counted, logged without the body's contents, answered.
fn refuse(state: &AppState, webhook: Webhook, problem: Problem) -> Response {
    state.metrics.requests.with_label_values(&[webhook.as_str(), "", "", "", "error", "false"]).inc();
    // The detail goes to the client only: a decoding error can quote what the body held, and
    // the log never carries a body's contents. A flood of refusals is counted in full and
    // logged a line a second.
    static REFUSALS: crate::telemetry::Throttle = crate::telemetry::Throttle::new(Duration::from_secs(1));
    if let Some(skipped) = REFUSALS.admit() {
        tracing::info!(
            webhook = webhook.as_str(),
            status = problem.status,
            problem = problem.title,
            skipped,
            "review refused"
        );
    }
    problem.into_response()
}

/// A review's request: its head read at once, then the review. The future the handlers
/// return is allocated for every review (axum boxes it), so it never holds the request's
/// head (its URI and headers, a few hundred bytes) or the state of the rare paths (a
/// refusal's drain, the blocking pool's hand-off, each boxed where it is awaited): kept
/// within the allocator's small sizes (`a_reviews_future_stays_within_the_allocators_small_sizes`),
/// it costs a thread-local list's pop, where a larger one costs a search of the heap's bins.
fn handle(state: Arc<AppState>, webhook: Webhook, request: Request) -> impl Future<Output = Response> {
    let started = Instant::now();
    let (parts, body) = request.into_parts();
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    // Refusals decided on the head alone still read a bounded part of the body first.
    let head = deadline(parts.uri.query())
        .and_then(|t| content_type_ok(&parts.headers).map(|()| t))
        .and_then(|t| match declared {
            Some(n) if n > state.body_limit => Err(Problem::too_large(state.body_limit)),
            _ => Ok(t),
        });
    review(state, webhook, started, head, body)
}

/// A review whose head was read (`head`: its deadline, or why it is refused unread).
async fn review(
    state: Arc<AppState>,
    webhook: Webhook,
    started: Instant,
    head: Result<Option<Duration>, Problem>,
    body: Body,
) -> Response {
    let timeout = match head {
        Ok(t) => t,
        Err(problem) => {
            Box::pin(discard(body)).await;
            return refuse(&state, webhook, problem);
        }
    };

    // The engine must be done by the review's deadline, less a margin to answer in.
    let until = tokio::time::Instant::from_std(started)
        + timeout.unwrap_or(DEFAULT_TIMEOUT).saturating_sub(ANSWER_MARGIN);
    // The body first, by the deadline (and --read-timeout), holding room only for the bytes
    // that arrived; then a turn among the reviews in flight. A client that opens streams and
    // sends no body holds no turn.
    let read_by = until.min(tokio::time::Instant::from_std(started) + state.read_timeout);
    let waited = read_by.duration_since(tokio::time::Instant::from_std(started));
    let (bytes, bytes_turn) =
        match Box::pin(read_body(body, state.body_limit, read_by, waited, &state.buffered)).await {
            Ok(read) => read,
            Err(Unread::Refused(problem)) => return refuse(&state, webhook, problem),
            Err(Unread::Crowded) => return refuse(&state, webhook, Problem::too_many(state.in_flight_limit)),
        };
    let Ok(Ok(review_turn)) = tokio::time::timeout_at(until, state.reviews.clone().acquire_owned()).await
    else {
        return refuse(&state, webhook, Problem::too_many(state.in_flight_limit));
    };
    // Rules that look up cluster state share what is left of the request's deadline,
    // minus a margin to answer in, capped by the configured budget.
    let budget = match timeout {
        Some(t) => t.saturating_sub(ANSWER_MARGIN).min(state.lookup_budget),
        None => state.lookup_budget,
    };
    let stop = crate::subject::Stop::new();
    let prepare = {
        let stop = stop.clone();
        move |review: &mut admission::Review| {
            review.subject.budget = Some(budget);
            review.subject.received_at = Some(SystemTime::now());
            review.subject.stop = stop.clone();
        }
    };

    // A small body is decoded where it was read, and judged there when that is cheaper than a
    // hand-off. A large one is decoded and judged on the blocking pool in one hand-off:
    // megabytes of JSON are work the connection workers should not do, and each trip between
    // threads costs a switch.
    let held = if bytes.len() <= super::schedule::INLINE_DECODE {
        let mut review = match decode(&bytes, &state.engine) {
            Ok(review) => review,
            Err(problem) => return refuse(&state, webhook, problem),
        };
        prepare(&mut review);
        if let Some(judged) = judged_here(&state, webhook, &review) {
            drop((review_turn, bytes_turn));
            return answer_judged(&state, review, judged, started);
        }
        Held::Read(Box::new(review))
    } else {
        Held::Unread(bytes)
    };

    let turns = (review_turn, bytes_turn);
    Box::pin(on_the_pool(state, webhook, held, turns, Deadline { until, timeout, started }, stop, prepare))
        .await
}

/// When a review must be answered: `until` for the engine, the review's own `timeout` (if it
/// stated one), and when it arrived.
struct Deadline {
    until: tokio::time::Instant,
    timeout: Option<Duration>,
    started: Instant,
}

/// Judge a review on the blocking pool and answer it, or answer per the failure policy when
/// the deadline passes first. Its own future, boxed where it is awaited: the reviews judged
/// where they were read never hold its state.
async fn on_the_pool(
    state: Arc<AppState>,
    webhook: Webhook,
    held: Held,
    turns: (tokio::sync::OwnedSemaphorePermit, tokio::sync::OwnedSemaphorePermit),
    deadline: Deadline,
    stop: crate::subject::Stop,
    prepare: impl FnOnce(&mut admission::Review) + Send + 'static,
) -> Response {
    let Deadline { until, timeout, started } = deadline;
    // The engine runs on the blocking pool, off the workers that serve connections and
    // probes; the turns are held until it is done, even when its answer is no longer waited
    // for (then it is stopped at its next check). What names the review is kept as soon as
    // it is read (here, or on the pool for a large body), for the answer given if the
    // deadline passes first, even before the pool has started the job.
    let named: Arc<std::sync::OnceLock<Named>> = Arc::default();
    if let Held::Read(review) = &held {
        let _ = named.set(Named::of(review));
    }
    let (engine, cluster) = (state.engine.clone(), state.cluster.clone());
    let mutation_enabled = state.mutation_enabled;
    let job = tokio::task::spawn_blocking({
        let named = named.clone();
        move || {
            let _turns = turns;
            let mut review = match held {
                Held::Read(review) => *review,
                Held::Unread(bytes) => {
                    let mut review = decode(&bytes, &engine)?;
                    prepare(&mut review);
                    let _ = named.set(Named::of(&review));
                    review
                }
            };
            let judged = unjudgeable(webhook, &review)
                .unwrap_or_else(|| judge(&engine, cluster.as_ref(), webhook, mutation_enabled, &review));
            // The objects are freed here, off the connection workers (freeing the tree of a
            // large object is work too): the answer needs only what names the review.
            review.subject.object = None;
            review.subject.old_object = None;
            Ok((review, judged))
        }
    });
    match tokio::time::timeout_at(until, job).await {
        Ok(Ok(Ok((review, judged)))) => answer_judged(&state, review, judged, started),
        Ok(Ok(Err(problem))) => refuse(&state, webhook, problem),
        Ok(Err(e)) => {
            let uid = named.get().map_or("(unread)", |n| n.uid.as_str());
            tracing::error!(error = %e, uid, "reading or judging a review failed");
            Problem::internal().into_response()
        }
        Err(_) => {
            stop.raise();
            let limit = timeout.unwrap_or(DEFAULT_TIMEOUT);
            match named.get() {
                Some(n) => unjudged(&state, webhook, &n.uid, &n.subject, limit, started),
                // Still decoding at the deadline: nothing names the review to answer it.
                None => refuse(&state, webhook, Problem::unread(limit)),
            }
        }
    }
}

/// A review handed to the blocking pool: decoded already, or its body still to decode.
enum Held {
    Read(Box<admission::Review>),
    Unread(Bytes),
}

/// What names a review in the answer given when its deadline passes before its verdict.
struct Named {
    uid: String,
    subject: crate::subject::Subject,
}

impl Named {
    fn of(review: &admission::Review) -> Named {
        Named { uid: review.uid.clone(), subject: outline(&review.subject) }
    }
}

/// The judgement of a small review where it was read, when handing it to another thread
/// would cost more than judging it: an operation no rule judges, or a validation
/// `schedule::here` judges on the spot. `None`: judge it on the blocking pool.
fn judged_here(state: &AppState, webhook: Webhook, review: &admission::Review) -> Option<Judged> {
    if let Some(passed) = unjudgeable(webhook, review) {
        return Some(passed);
    }
    match webhook {
        Webhook::Validate => {
            super::schedule::here(&state.engine, &review.subject, state.cluster.as_ref()).map(Judged::Verdict)
        }
        Webhook::Mutate => None,
    }
}

/// An operation no rule judges (not CREATE, UPDATE, DELETE or CONNECT), admitted with a
/// warning that says no rule ran.
fn unjudgeable(webhook: Webhook, review: &admission::Review) -> Option<Judged> {
    match (&review.subject.operation, webhook) {
        (Operation::Other(op), Webhook::Validate) => Some(Judged::Passed(format!(
            "covenant: operation \"{op}\" is not one of CREATE, UPDATE, DELETE, CONNECT; no rule ran"
        ))),
        _ => None,
    }
}

/// The engine's work for a review: a verdict, or the mutating webhook's patch.
fn judge(
    engine: &Engine,
    cluster: &dyn crate::cluster::ClusterView,
    webhook: Webhook,
    mutation_enabled: bool,
    review: &admission::Review,
) -> Judged {
    match webhook {
        Webhook::Validate => Judged::Verdict(engine.evaluate(&review.subject, cluster)),
        Webhook::Mutate => Judged::Mutation(match (&review.subject.operation, mutation_enabled) {
            (Operation::Create | Operation::Update, true) => engine.mutate(&review.subject, cluster),
            _ => crate::engine::Mutation::default(),
        }),
    }
}

/// The answer to a judged review.
fn answer_judged(state: &AppState, review: admission::Review, judged: Judged, started: Instant) -> Response {
    match judged {
        Judged::Verdict(verdict) => answer_verdict(state, review, &verdict, started),
        Judged::Mutation(mutation) => answer_mutation(state, review, mutation, started),
        Judged::Passed(warning) => {
            let response = admission::respond(&review.uid, &crate::engine::Verdict::default(), &[warning]);
            answer(state, labels(state, Webhook::Validate, &review.subject), started, &response)
        }
    }
}

/// What identifies a subject in metrics and logs, without its objects.
fn outline(subject: &crate::subject::Subject) -> crate::subject::Subject {
    let mut o = crate::subject::Subject::from_document(serde_json::Value::Null);
    o.object = None;
    o.gvk = subject.gvk.clone();
    o.operation = subject.operation.clone();
    o.dry_run = subject.dry_run;
    o
}

/// What a review was judged to be.
enum Judged {
    Verdict(crate::engine::Verdict),
    Mutation(crate::engine::Mutation),
    /// Admitted with this warning, no rule run.
    Passed(String),
}

/// A review not judged by its deadline: answered per the failure policy, with a message that
/// says so (a mutation is let through unpatched: the mutating webhooks fail open).
fn unjudged(
    state: &AppState,
    webhook: Webhook,
    uid: &str,
    subject: &crate::subject::Subject,
    timeout: Duration,
    started: Instant,
) -> Response {
    let allow = webhook == Webhook::Mutate || state.failure_policy == crate::config::FailurePolicy::Allow;
    let policy = match (webhook, allow) {
        (Webhook::Mutate, _) => "not patched",
        (_, true) => "failure policy allow: admitted",
        (_, false) => "failure policy deny: refused; retry",
    };
    let reason = format!(
        "covenant could not judge this {} within the request's deadline of {} (less {} to answer in); {policy}",
        subject.gvk.kind,
        humantime::format_duration(timeout),
        humantime::format_duration(ANSWER_MARGIN),
    );
    let op = subject.operation.as_label();
    let counted = labels(state, webhook, subject);
    state.series.count(counted, Decision::Unjudged);
    tracing::warn!(uid, webhook = webhook.as_str(), gvk = %subject.gvk, operation = op, allowed = allow, "review not judged by its deadline");
    let response = admission::respond_unjudged(uid, allow, &reason);
    answer(state, counted, started, &response)
}

/// The validating webhook's answer.
fn answer_verdict(
    state: &AppState,
    review: crate::admission::Review,
    verdict: &crate::engine::Verdict,
    started: Instant,
) -> Response {
    let subject = &review.subject;
    let decision = if verdict.denied() { Decision::Denied } else { Decision::Allowed };
    let op = subject.operation.as_label();
    let counted = labels(state, Webhook::Validate, subject);
    state.series.count(counted, decision);
    for f in &verdict.findings {
        state.metrics.findings.with_label_values(&[f.rule.id, f.action.as_str()]).inc();
    }
    // Each rule once, with how many findings it drew (a CRD update can draw hundreds).
    answered!(
        verdict.findings.is_empty(),
        uid = %review.uid,
        webhook = "validate",
        gvk = %subject.gvk,
        operation = op,
        allowed = !verdict.denied(),
        rules = ?verdict.rule_counts(),
        audited = verdict.at(Action::Audit).count(),
        "review answered"
    );
    // A denial (never a dry run) as Events on the object, so `kubectl describe` shows why its
    // apply was refused.
    if let Some(sink) = state.events.as_ref().filter(|_| verdict.denied() && !subject.dry_run) {
        crate::cluster::events::tell(sink, subject, verdict.at(Action::Deny), "Denied");
    }
    let response = admission::respond(&review.uid, verdict, &[]);
    answer(state, counted, started, &response)
}

/// The labels a review's series are found by.
fn labels<'a>(state: &AppState, webhook: Webhook, subject: &'a crate::subject::Subject) -> Labels<'a> {
    Labels {
        webhook,
        operation: &subject.operation,
        kind: state.series.kind_of(&subject.gvk.group, &subject.gvk.kind),
        dry_run: subject.dry_run,
    }
}

/// Encode a review response, record the request's duration, and answer 200.
fn answer(
    state: &AppState,
    counted: Labels<'_>,
    started: std::time::Instant,
    response: &admission::Answer<'_>,
) -> Response {
    let body = match response.to_bytes() {
        Ok(b) => b,
        Err(e) => {
            tracing::error!(error = %e, "cannot encode the review response");
            return Problem::internal().into_response();
        }
    };
    state.series.time(counted, started.elapsed().as_secs_f64());
    (StatusCode::OK, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The mutating webhook: patches only. Its findings belong to the validating webhook, so a
/// review is never judged twice; a dry run gets the same patch as a real request.
fn answer_mutation(
    state: &AppState,
    review: crate::admission::Review,
    mutation: crate::engine::Mutation,
    started: Instant,
) -> Response {
    let subject = &review.subject;
    let op = subject.operation.as_label();
    let decision = if mutation.ops.is_empty() { Decision::Allowed } else { Decision::Patched };
    let counted = labels(state, Webhook::Mutate, subject);
    state.series.count(counted, decision);
    for rule in &mutation.rules {
        state.metrics.patches.with_label_values(&[rule]).inc();
    }
    answered!(mutation.ops.is_empty(), uid = %review.uid, webhook = "mutate", gvk = %subject.gvk, operation = op, patched = !mutation.ops.is_empty(), rules = ?mutation.rules, "review answered");
    let response = admission::respond_mutation(&review.uid, &mutation.ops, &mutation.warnings);
    answer(state, counted, started, &response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeout_past_the_apiservers_maximum_is_clamped_to_it() {
        assert_eq!(deadline(Some("timeout=10s")).ok().flatten(), Some(Duration::from_secs(10)));
        assert_eq!(deadline(Some("timeout=99999h")).ok().flatten(), Some(MAX_TIMEOUT));
        assert_eq!(deadline(Some("timeout=31s")).ok().flatten(), Some(Duration::from_secs(30)));
        assert!(deadline(Some("timeout=soon")).is_err());
    }

    /// The future a handler returns, and its size.
    fn future_size<F, Fut>(_: F) -> usize
    where
        F: FnOnce(State<Arc<AppState>>, Request) -> Fut,
    {
        std::mem::size_of::<Fut>()
    }

    #[test]
    fn a_reviews_future_stays_within_the_allocators_small_sizes() {
        // axum boxes a handler's future for every request, together with the request (240
        // bytes) and its extractors; glibc serves an allocation of up to 1,032 bytes from a
        // per-thread cache, and a larger one from the heap's bins, where the first such
        // allocation after frees of small ones merges them all (`malloc_consolidate`): about
        // 1% of a review's CPU when this future was 1.5 KB.
        for (webhook, size) in [("validate", future_size(validate)), ("mutate", future_size(mutate))] {
            assert!(size <= 640, "{webhook}'s future is {size} bytes");
        }
    }

    #[test]
    fn timeout_query_is_read_and_unknown_parameters_refused() {
        assert_eq!(deadline(Some("timeout=10s")).unwrap(), Some(Duration::from_secs(10)));
        assert_eq!(deadline(None).unwrap(), None);
        assert!(deadline(Some("timeout=soon")).is_err());
        assert!(deadline(Some("dryRun=1")).is_err());
    }
}
