//! The admin listener (plain HTTP, for probes and Prometheus): `/livez`, `/readyz`,
//! `/metrics`, and the background audit's summary at `/api/v0/audit`. Never serves admission.

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use super::problem::Problem;
use super::state::AppState;

/// The admin router.
pub fn router(state: AppState) -> Router {
    Router::new()
        .route("/livez", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(metrics))
        .route("/api/v0/audit", get(audit))
        .route("/api/v0/status", get(status))
        .fallback(|uri: axum::http::Uri| async move {
            let mut p = Problem::not_found(uri.path());
            p.detail = format!(
                "no route {}; the admin listener serves /livez, /readyz, /metrics, /api/v0/audit and /api/v0/status",
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
    let body = crate::metrics::render(&state.registry);
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], body).into_response()
}

/// `?limit=&offset=` of `/api/v0/status`.
#[derive(Debug, serde::Deserialize)]
struct Page {
    #[serde(default = "default_limit")]
    limit: usize,
    #[serde(default)]
    offset: usize,
}

fn default_limit() -> usize {
    100
}

/// Who uses which construct version (the JSON `covenant status --output json` prints), a page
/// of constructs at a time: `total`, and `next` (the offset of the next page) while there is
/// one.
async fn status(State(state): State<AppState>, query: axum::extract::Query<Page>) -> Response {
    let Page { limit, offset } = query.0;
    let limit = limit.clamp(1, 1000);
    let (cluster, kinds) = (state.cluster.clone(), state.kinds.clone());
    let usage = tokio::task::spawn_blocking(move || {
        crate::families::consumer::usage(cluster.as_ref(), &kinds.0, &kinds.1)
    })
    .await;
    match usage {
        Ok(Ok(mut usage)) => {
            let all = usage["constructs"].as_array().cloned().unwrap_or_default();
            let total = all.len();
            let page: Vec<serde_json::Value> = all.into_iter().skip(offset).take(limit).collect();
            usage["constructs"] = serde_json::Value::Array(page);
            usage["total"] = total.into();
            usage["offset"] = offset.into();
            usage["limit"] = limit.into();
            if offset + limit < total {
                usage["next"] = (offset + limit).into();
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
        Err(e) => {
            Problem::new(StatusCode::INTERNAL_SERVER_ERROR, "status-failed", "Status failed", e.to_string())
                .into_response()
        }
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
