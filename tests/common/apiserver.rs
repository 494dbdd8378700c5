//! A stand-in Kubernetes API server for tests: discovery, list (paginated by `limit` and
//! `continue`) and watch, served over plain HTTP from fixtures, with the failure modes a real
//! one has (a list slower than any budget, a list RBAC forbids).

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{json, Value};

/// What the fake API server holds: objects by (group, plural), and the resources it serves.
#[derive(Clone, Default)]
pub struct Fake {
    /// Objects by (group, plural).
    pub objects: BTreeMap<(String, String), Vec<Value>>,
    /// (group, plural, kind, namespaced)
    pub resources: Vec<(String, String, String, bool)>,
    /// Plurals whose lists never answer in time.
    pub slow: Vec<String>,
    /// Plurals covenant's RBAC may not list (403 Forbidden, as the apiserver answers).
    pub forbidden: Vec<String>,
}

async fn apis(State(f): State<Arc<Fake>>) -> Json<Value> {
    let mut groups: Vec<&str> = f.resources.iter().map(|r| r.0.as_str()).collect();
    groups.dedup();
    let groups: Vec<Value> = groups
        .iter()
        .map(|g| {
            let gv = json!({"groupVersion": format!("{g}/v1alpha1"), "version": "v1alpha1"});
            json!({"name": g, "versions": [gv.clone()], "preferredVersion": gv})
        })
        .collect();
    Json(json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}))
}

async fn group_version(
    State(f): State<Arc<Fake>>,
    Path((group, version)): Path<(String, String)>,
) -> Json<Value> {
    let resources: Vec<Value> = f
        .resources
        .iter()
        .filter(|r| r.0 == group)
        .map(|(_, plural, kind, namespaced)| {
            json!({"name": plural, "singularName": kind.to_lowercase(), "namespaced": namespaced, "kind": kind,
                "verbs": ["get", "list", "watch"]})
        })
        .collect();
    Json(
        json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": format!("{group}/{version}"), "resources": resources}),
    )
}

async fn list(
    State(f): State<Arc<Fake>>,
    Path((group, _version, plural)): Path<(String, String, String)>,
    Query(q): Query<BTreeMap<String, String>>,
) -> Response {
    if q.get("watch").is_some_and(|w| w == "true" || w == "1") {
        // A watch that stays open and reports nothing new.
        let pending = futures_util::stream::pending::<Result<Bytes, Infallible>>();
        return Response::builder()
            .header("content-type", "application/json")
            .body(Body::from_stream(pending))
            .unwrap();
    }
    if f.slow.contains(&plural) {
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    if f.forbidden.contains(&plural) {
        let message = format!(
            "{plural}.{group} is forbidden: User \"system:serviceaccount:covenant-system:covenant\" cannot list resource \"{plural}\" in API group \"{group}\" at the cluster scope"
        );
        let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": "Forbidden", "details": {"group": group, "kind": plural}, "code": 403});
        return (axum::http::StatusCode::FORBIDDEN, Json(status)).into_response();
    }
    let items = f.objects.get(&(group.clone(), plural.clone())).cloned().unwrap_or_default();
    // Pages as the client asks for them: `limit` items from the `continue` offset.
    let limit: usize = q.get("limit").and_then(|l| l.parse().ok()).unwrap_or(usize::MAX);
    let start: usize = q.get("continue").and_then(|c| c.parse().ok()).unwrap_or(0);
    let page: Vec<Value> = items.iter().skip(start).take(limit).cloned().collect();
    let next = start + page.len();
    let mut metadata = json!({"resourceVersion": "7"});
    if next < items.len() {
        metadata["continue"] = json!(next.to_string());
    }
    Json(json!({"apiVersion": format!("{group}/v1alpha1"), "kind": "List", "metadata": metadata, "items": page}))
        .into_response()
}

/// Start the fake API server on its own runtime and thread (the engine's lookups block the
/// caller while they wait, and must not block the server that answers them).
pub fn serve(fake: Fake) -> SocketAddr {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async move {
            let app = Router::new()
                .route("/apis", get(apis))
                .route("/api", get(|| async { Json(json!({"kind": "APIVersions", "versions": ["v1"]})) }))
                .route("/apis/{group}/{version}", get(group_version))
                .route("/apis/{group}/{version}/{plural}", get(list))
                .with_state(Arc::new(fake));
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(listener.local_addr().unwrap()).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    rx.recv().unwrap()
}
