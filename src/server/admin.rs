//! The two plain-HTTP listeners beside the webhook, neither of which serves admission:
//! the admin listener, for the kubelet's probes and Prometheus (`/livez`, `/readyz`,
//! `/metrics`), and the read API (`/api/v0/{status,compare,upgrade,audit}`, and the console's
//! pages under `/platform/`, `console.rs`), which names
//! namespaces, objects and findings and so listens on the pod's loopback unless told
//! otherwise: only `kubectl port-forward` reaches it, and the API server authorizes that.

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use super::problem::Problem;
use super::state::AppState;
use crate::pointer::At;

/// The admin router: probes and metrics.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/livez", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .fallback(|uri: axum::http::Uri| async move {
            let mut p = Problem::not_found(uri.path());
            p.detail = if uri.path().starts_with("/api/") || uri.path().starts_with("/platform") {
                format!(
                    "no route {} here: the read API and the console have a listener of their own (--api-listen, on the pod's loopback by default; reach it with kubectl port-forward)",
                    uri.path()
                )
            } else {
                format!("no route {}; the admin listener serves /livez, /readyz and /metrics", uri.path())
            };
            p
        })
        .with_state(state)
}

/// The read API's router.
pub fn api_router(state: AppState) -> Router {
    Router::new()
        .route("/api/v0/audit", get(audit))
        .route("/api/v0/status", get(status))
        .route("/api/v0/compare", get(compare))
        .route("/api/v0/upgrade", get(upgrade))
        .merge(super::console::router())
        .fallback(|uri: axum::http::Uri| async move {
            let mut p = Problem::not_found(uri.path());
            p.detail = format!(
                "no route {}; the read API serves /api/v0/audit, /api/v0/status, /api/v0/compare and /api/v0/upgrade, and the console's pages under /platform/",
                uri.path()
            );
            p
        })
        .with_state(state)
}

async fn readyz(State(state): State<AppState>) -> Response {
    let ready = state.readiness.check().and_then(|()| {
        if state.cluster.synced() {
            Ok(())
        } else {
            Err("cluster caches not synced")
        }
    });
    match ready {
        Ok(()) => (StatusCode::OK, "ok\n").into_response(),
        Err(why) => (StatusCode::SERVICE_UNAVAILABLE, format!("not ready: {why}\n")).into_response(),
    }
}

async fn metrics(State(state): State<AppState>) -> Response {
    for (resource, n) in state.cluster.cache_sizes() {
        state.metrics.cache_objects.with_label_values(&[resource.as_str()]).set(n as i64);
    }
    for (resource, up) in state.cluster.watch_health() {
        state.metrics.watch_up.with_label_values(&[resource.as_str()]).set(i64::from(up));
    }
    if let Some(audit) = &state.audit {
        state.metrics.leader.set(i64::from(audit.leading()));
    }
    // The upgrade picture, from the cluster view's caches; without cluster state it is left
    // out. A scrape waits for it briefly and never on a slow cluster: the refresh finishes in
    // the background and the next scrape shows it; one refresh at a time.
    use std::sync::atomic::Ordering;
    if !state.usage_refreshing.swap(true, Ordering::AcqRel) {
        let (cluster, kinds, metrics) = (state.cluster.clone(), state.kinds.clone(), state.metrics.clone());
        let refreshing = state.usage_refreshing.clone();
        let refresh = tokio::task::spawn_blocking(move || {
            if let Ok(usage) = crate::usage::usage(cluster.as_ref(), &kinds.0, &kinds.1) {
                metrics.set_usage(&usage);
            }
            refreshing.store(false, Ordering::Release);
        });
        let _ = tokio::time::timeout(std::time::Duration::from_millis(250), refresh).await;
    }
    let body = crate::metrics::render(&state.registry);
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body).into_response()
}

/// `?limit=&offset=` of `/api/v0/status`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Page {
    #[serde(default = "default_limit")]
    limit: usize,
    #[serde(default)]
    offset: usize,
}

/// The largest `offset` a page may start at.
const MAX_OFFSET: usize = 1 << 32;

fn default_limit() -> usize {
    100
}

/// Run a read of the cluster view on the blocking pool (it may list through the API server);
/// a panic there is a 500 naming what failed.
async fn off_worker<T: Send + 'static>(
    what: &'static str,
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Response> {
    tokio::task::spawn_blocking(work).await.map_err(|e| {
        let detail = format!("{what}: {e}");
        Problem::new(StatusCode::INTERNAL_SERVER_ERROR, "admin-failed", "Request failed", detail)
            .into_response()
    })
}

/// Who uses which construct version (the JSON `covenant status --output json` prints), a page
/// of constructs at a time: `total`, and `next` (the offset of the next page) while there is
/// one.
async fn status(State(state): State<AppState>, query: axum::extract::Query<Page>) -> Response {
    let Page { limit, offset } = query.0;
    let limit = limit.clamp(1, 1000);
    // An offset past what any listing holds is a request for nothing, said: never a page that
    // wraps around to the start.
    if offset > MAX_OFFSET {
        return Problem::bad_request(
            "invalid-query",
            "Invalid query parameter",
            format!("query parameter offset: expected at most {MAX_OFFSET}, found {offset}"),
        )
        .into_response();
    }
    let (cluster, kinds) = (state.cluster.clone(), state.kinds.clone());
    let usage = off_worker("status", move || crate::usage::usage(cluster.as_ref(), &kinds.0, &kinds.1)).await;
    match usage {
        Ok(Ok(mut usage)) => {
            let all = usage["constructs"].as_array().cloned().unwrap_or_default();
            let total = all.len();
            let page: Vec<serde_json::Value> = all.into_iter().skip(offset).take(limit).collect();
            usage["constructs"] = serde_json::Value::Array(page);
            usage["total"] = total.into();
            usage["offset"] = offset.into();
            usage["limit"] = limit.into();
            if let Some(next) = offset.checked_add(limit).filter(|n| *n < total) {
                usage["next"] = next.into();
            }
            axum::Json(usage).into_response()
        }
        Ok(Err(e)) => Problem::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "cluster-unavailable",
            "Cluster state unavailable",
            e.to_string(),
        )
        .into_response(),
        Err(failed) => failed,
    }
}

/// `?kind=&name=&from=&to=&output=` of `/api/v0/compare`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Compare {
    #[serde(default)]
    kind: Option<String>,
    name: String,
    from: String,
    to: String,
    #[serde(default)]
    output: Option<String>,
}

/// The contract diff of two published versions of a construct: JSON (the default) or
/// markdown (`output=markdown`), the same bytes `covenant diff --context DIR NAME FROM TO`
/// prints for the same objects.
async fn compare(State(state): State<AppState>, query: axum::extract::Query<Compare>) -> Response {
    let q = query.0;
    let markdown = match q.output.as_deref() {
        None | Some("json") => false,
        Some("markdown" | "md") => true,
        Some(other) => {
            let detail = format!("output={other}: expected json or markdown");
            return Problem::new(StatusCode::BAD_REQUEST, "bad-output", "Bad output", detail).into_response();
        }
    };
    let (cluster, engine) = (state.cluster.clone(), state.engine.clone());
    let answer = off_worker("compare", move || {
        crate::contract::between_published(
            cluster.as_ref(),
            engine.policy(),
            q.kind.as_deref(),
            None,
            &q.name,
            &q.from,
            &q.to,
        )
        .map_err(Problem::uncompared)
    })
    .await;
    match answer {
        Ok(Ok(d)) if markdown => (
            [(header::CONTENT_TYPE, "text/markdown; charset=utf-8")],
            crate::report::diff::render_markdown(&d),
        )
            .into_response(),
        Ok(Ok(d)) => (
            [(header::CONTENT_TYPE, "application/json")],
            format!("{}\n", crate::report::diff::render_json(&d)),
        )
            .into_response(),
        Ok(Err(problem)) => problem.into_response(),
        Err(failed) => failed,
    }
}

/// `?kind=&namespace=&name=&to=` of `/api/v0/upgrade`.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Upgrade {
    kind: String,
    #[serde(default)]
    namespace: Option<String>,
    name: String,
    #[serde(default)]
    to: Option<String>,
}

/// What happens to one stored consumer if it moves to the newest supported version (or
/// `to`): per reference, the pin move, the contract diff and whether it would still apply —
/// the entries `covenant upgrade --output json` prints.
async fn upgrade(State(state): State<AppState>, query: axum::extract::Query<Upgrade>) -> Response {
    let q = query.0;
    let to = match q.to.as_deref().map(semver::Version::parse).transpose() {
        Ok(to) => to,
        Err(e) => {
            let detail = format!("to={}: not a MAJOR.MINOR.PATCH version ({e})", q.to.unwrap_or_default());
            return Problem::new(StatusCode::BAD_REQUEST, "bad-version", "Bad version", detail)
                .into_response();
        }
    };
    let (cluster, engine) = (state.cluster.clone(), state.engine.clone());
    let answer = off_worker("upgrade", move || {
        let objects = cluster
            .list(crate::openchoreo::GROUP, &q.kind, q.namespace.as_deref(), None)
            .map_err(|e| e.to_string())?;
        let consumer = objects
            .iter()
            .find(|o| o.at("/metadata/name").and_then(serde_json::Value::as_str) == Some(q.name.as_str()))
            .ok_or_else(|| format!("no {} named {} is stored", q.kind, q.name))?;
        let plans: Vec<serde_json::Value> =
            crate::upgrade::plan(&engine, cluster.as_ref(), consumer, to.as_ref(), &[])
                .into_iter()
                .map(|p| p.map(|p| p.to_json()).unwrap_or_else(|why| serde_json::json!({"error": why})))
                .collect();
        Ok::<_, String>(plans)
    })
    .await;
    match answer {
        Ok(Ok(plans)) => axum::Json(plans).into_response(),
        Ok(Err(why)) => Problem::new(StatusCode::NOT_FOUND, "not-found", "Not found", why).into_response(),
        Err(failed) => failed,
    }
}

async fn audit(State(state): State<AppState>) -> Response {
    match &state.audit {
        Some(status) => axum::Json(status.summary()).into_response(),
        None => Problem::new(
            StatusCode::NOT_FOUND,
            "audit-not-running",
            "Audit not running",
            "the background audit is not running; start `covenant serve` with --audit-interval",
        )
        .into_response(),
    }
}
