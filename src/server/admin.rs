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
        .fallback(|uri: axum::http::Uri| async move {
            let mut p = Problem::not_found(uri.path());
            p.detail = format!(
                "no route {}; the admin listener serves /livez, /readyz, /metrics and /api/v0/audit",
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
