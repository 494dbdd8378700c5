//! A stand-in Kubernetes API server for tests: discovery, list (paginated by `limit` and
//! `continue`) and watch, served over plain HTTP from fixtures, with the failure modes a real
//! one has: a list slower than any budget, a list RBAC forbids, resources that appear after
//! start, watches that expire with 410 Gone or end at their `timeoutSeconds`, and a server that
//! goes away and comes back. Objects written through it (Leases, Events, OpenReports) are kept
//! with resourceVersions, as the API server keeps them: a stale PUT is a 409 Conflict, a PATCH
//! merges or server-side applies, DELETE removes.

use std::collections::BTreeMap;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use futures_util::StreamExt;
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

impl Fake {
    /// Serve the OpenChoreo kind `kind` (its plural the kind's lowercase name and an `s`).
    pub fn serve_openchoreo(&mut self, kind: &str, namespaced: bool) {
        self.resources.push((
            "openchoreo.dev".into(),
            format!("{}s", kind.to_lowercase()),
            kind.into(),
            namespaced,
        ));
    }
}

/// The server's state: what it holds (tests change it while it runs), and a signal that ends
/// every open watch with 410 Gone, as an apiserver does when a watch's resourceVersion is
/// compacted away.
#[derive(Clone)]
struct Shared {
    fake: Arc<RwLock<Fake>>,
    expire: Arc<tokio::sync::Notify>,
    /// Lists and watches asked for, by plural: (lists, watches).
    asked: Arc<std::sync::Mutex<BTreeMap<String, (usize, usize)>>>,
    /// Every watch's query, with its plural, in the order asked.
    watches: Arc<std::sync::Mutex<Vec<WatchQuery>>>,
    /// Objects written through the API (Leases): by (group, namespace, plural, name), each
    /// with its resourceVersion, as the API server keeps them for optimistic updates.
    written: Arc<std::sync::Mutex<BTreeMap<WrittenKey, Value>>>,
    /// The last resourceVersion handed out.
    version: Arc<std::sync::atomic::AtomicU64>,
    /// PATCHes served.
    patches: Arc<std::sync::atomic::AtomicUsize>,
}

/// A written object's (group, namespace, plural, name).
type WrittenKey = (String, String, String, String);

/// A watch's plural and query parameters.
pub type WatchQuery = (String, BTreeMap<String, String>);

impl Shared {
    fn read(&self) -> std::sync::RwLockReadGuard<'_, Fake> {
        self.fake.read().unwrap()
    }
}

async fn apis(State(shared): State<Shared>) -> Json<Value> {
    let f = shared.read();
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
    State(shared): State<Shared>,
    Path((group, version)): Path<(String, String)>,
) -> Json<Value> {
    let f = shared.read();
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

/// A list (or watch) in one namespace: the namespace's objects of the resource.
async fn list_namespaced(
    State(shared): State<Shared>,
    Path((group, version, namespace, plural)): Path<(String, String, String, String)>,
    Query(q): Query<BTreeMap<String, String>>,
) -> Response {
    serve_list(shared, (group, version, plural), Some(namespace), q).await
}

async fn list(
    State(shared): State<Shared>,
    Path((group, version, plural)): Path<(String, String, String)>,
    Query(q): Query<BTreeMap<String, String>>,
) -> Response {
    serve_list(shared, (group, version, plural), None, q).await
}

async fn serve_list(
    shared: Shared,
    (group, _version, plural): (String, String, String),
    namespace: Option<String>,
    q: BTreeMap<String, String>,
) -> Response {
    let watch = q.get("watch").is_some_and(|w| w == "true" || w == "1");
    {
        let mut asked = shared.asked.lock().unwrap();
        let counts = asked.entry(plural.clone()).or_default();
        if watch {
            counts.1 += 1;
            shared.watches.lock().unwrap().push((plural.clone(), q.clone()));
        } else {
            counts.0 += 1;
        }
    }
    if watch {
        // A watch that stays open and reports nothing new, until the watches expire (then
        // one ERROR event carrying 410 Gone) or its `timeoutSeconds` pass (then it just ends,
        // as the API server ends a watch on time). Without a timeout it stays open: the API
        // server would pick 30 to 60 minutes.
        let expire = shared.expire.clone();
        let timeout = q.get("timeoutSeconds").and_then(|t| t.parse::<u64>().ok());
        let gone = json!({"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure", "message": "too old resource version: 7 (9)", "reason": "Expired", "code": 410}});
        let stream = futures_util::stream::once(async move {
            let on_time = async {
                match timeout {
                    Some(t) => tokio::time::sleep(Duration::from_secs(t)).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = expire.notified() => Some(Ok::<Bytes, Infallible>(Bytes::from(format!("{gone}\n")))),
                _ = on_time => None,
            }
        })
        .filter_map(std::future::ready);
        return Response::builder()
            .header("content-type", "application/json")
            .body(Body::from_stream(stream))
            .unwrap();
    }
    let slow = shared.read().slow.contains(&plural);
    if slow {
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    if shared.read().forbidden.contains(&plural) {
        let message = format!(
            "{plural}.{group} is forbidden: User \"system:serviceaccount:covenant-system:covenant\" cannot list resource \"{plural}\" in API group \"{group}\" at the cluster scope"
        );
        let status = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": message, "reason": "Forbidden", "details": {"group": group, "kind": plural}, "code": 403});
        return (axum::http::StatusCode::FORBIDDEN, Json(status)).into_response();
    }
    // Pages as the client asks for them: `limit` items from the `continue` offset, only the
    // page's objects copied (a cluster of 100,000 objects lists in pages without copying
    // them all for each).
    let limit: usize = q.get("limit").and_then(|l| l.parse().ok()).unwrap_or(usize::MAX);
    let start: usize = q.get("continue").and_then(|c| c.parse().ok()).unwrap_or(0);
    let in_scope = |o: &&Value| {
        namespace
            .as_ref()
            .is_none_or(|ns| o.pointer("/metadata/namespace").and_then(Value::as_str) == Some(ns))
    };
    let (page, total) = {
        let fake = shared.read();
        let written = shared.written.lock().unwrap();
        let stored = fake.objects.get(&(group.clone(), plural.clone())).into_iter().flatten();
        // And what was written through the API (reports, events, leases).
        let through_api =
            written.iter().filter(|((g, _, p, _), _)| *g == group && *p == plural).map(|(_, v)| v);
        let items = || stored.clone().chain(through_api.clone()).filter(in_scope);
        let page: Vec<Value> = items().skip(start).take(limit).cloned().collect();
        (page, items().count())
    };
    let next = start + page.len();
    let mut metadata = json!({"resourceVersion": "7"});
    if next < total {
        metadata["continue"] = json!(next.to_string());
    }
    Json(json!({"apiVersion": format!("{group}/v1alpha1"), "kind": "List", "metadata": metadata, "items": page}))
        .into_response()
}

fn status(code: u16, reason: &str, message: String) -> Response {
    let body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": message, "reason": reason, "code": code});
    (axum::http::StatusCode::from_u16(code).unwrap(), Json(body)).into_response()
}

type ObjectPath = (String, String, String, String, String);

/// GET of one written object: it, or 404 NotFound.
async fn read(
    State(shared): State<Shared>,
    Path((group, _v, namespace, plural, name)): Path<ObjectPath>,
) -> Response {
    match shared.written.lock().unwrap().get(&(group, namespace, plural.clone(), name.clone())) {
        Some(o) => Json(o.clone()).into_response(),
        None => status(404, "NotFound", format!("{plural} \"{name}\" not found")),
    }
}

/// POST: create, or 409 AlreadyExists; the object gets a resourceVersion.
async fn create(
    State(shared): State<Shared>,
    Path((group, _v, namespace, plural)): Path<(String, String, String, String)>,
    Json(mut object): Json<Value>,
) -> Response {
    let name = object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_string();
    let mut written = shared.written.lock().unwrap();
    let key = (group, namespace.clone(), plural.clone(), name.clone());
    if written.contains_key(&key) {
        return status(409, "AlreadyExists", format!("{plural} \"{name}\" already exists"));
    }
    let rv = shared.version.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
    object["metadata"]["resourceVersion"] = json!(rv.to_string());
    object["metadata"]["namespace"] = json!(namespace);
    written.insert(key, object.clone());
    (axum::http::StatusCode::CREATED, Json(object)).into_response()
}

/// PUT: an optimistic update. The body's resourceVersion must be the stored one, else 409
/// Conflict ("the object has been modified"), as the API server answers a stale write.
async fn replace(
    State(shared): State<Shared>,
    Path((group, _v, namespace, plural, name)): Path<ObjectPath>,
    Json(mut object): Json<Value>,
) -> Response {
    let mut written = shared.written.lock().unwrap();
    let key = (group, namespace.clone(), plural.clone(), name.clone());
    let Some(stored) = written.get(&key) else {
        return status(404, "NotFound", format!("{plural} \"{name}\" not found"));
    };
    if object.pointer("/metadata/resourceVersion") != stored.pointer("/metadata/resourceVersion") {
        return status(
            409,
            "Conflict",
            format!("Operation cannot be fulfilled on {plural} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"),
        );
    }
    let rv = shared.version.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
    object["metadata"]["resourceVersion"] = json!(rv.to_string());
    object["metadata"]["namespace"] = json!(namespace);
    written.insert(key, object.clone());
    Json(object).into_response()
}

/// PATCH with a JSON merge patch (RFC 7386), as kube's event recorder counts a series.
async fn merge_patch(
    State(shared): State<Shared>,
    Path((group, _v, namespace, plural, name)): Path<ObjectPath>,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    patch_object(&shared, (group, namespace, plural, name), &headers, &body)
}

async fn patch_cluster(
    State(shared): State<Shared>,
    Path((group, _v, plural, name)): Path<(String, String, String, String)>,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    patch_object(&shared, (group, String::new(), plural, name), &headers, &body)
}

async fn read_cluster(
    State(shared): State<Shared>,
    Path((group, _v, plural, name)): Path<(String, String, String, String)>,
) -> Response {
    match shared.written.lock().unwrap().get(&(group, String::new(), plural.clone(), name.clone())) {
        Some(o) => Json(o.clone()).into_response(),
        None => status(404, "NotFound", format!("{plural} \"{name}\" not found")),
    }
}

async fn remove(
    State(shared): State<Shared>,
    Path((group, _v, namespace, plural, name)): Path<ObjectPath>,
) -> Response {
    remove_object(&shared, (group, namespace, plural, name))
}

async fn remove_cluster(
    State(shared): State<Shared>,
    Path((group, _v, plural, name)): Path<(String, String, String, String)>,
) -> Response {
    remove_object(&shared, (group, String::new(), plural, name))
}

fn remove_object(shared: &Shared, key: WrittenKey) -> Response {
    match shared.written.lock().unwrap().remove(&key) {
        Some(o) => Json(o).into_response(),
        None => status(404, "NotFound", format!("{} \"{}\" not found", key.2, key.3)),
    }
}

/// A PATCH: server-side apply (`application/apply-patch+yaml`) creates the object or replaces
/// it with what the one field manager applies (a single manager applying its whole object, as
/// covenant does); any other patch is a JSON merge patch of an object that exists.
fn patch_object(shared: &Shared, key: WrittenKey, headers: &axum::http::HeaderMap, body: &[u8]) -> Response {
    let Ok(patch) = serde_json::from_slice::<Value>(body) else {
        return status(400, "BadRequest", "the patch is not JSON".into());
    };
    let apply = headers
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/apply-patch"));
    let mut written = shared.written.lock().unwrap();
    let (plural, name) = (key.2.clone(), key.3.clone());
    if apply {
        let mut object = patch;
        if !key.1.is_empty() {
            object["metadata"]["namespace"] = json!(key.1.clone());
        }
        let rv = shared.version.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        object["metadata"]["resourceVersion"] = json!(rv.to_string());
        shared.patches.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        written.insert(key, object.clone());
        return Json(object).into_response();
    }
    let Some(stored) = written.get_mut(&key) else {
        return status(404, "NotFound", format!("{plural} \"{name}\" not found"));
    };
    json_patch::merge(stored, &patch);
    let rv = shared.version.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
    stored["metadata"]["resourceVersion"] = json!(rv.to_string());
    shared.patches.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    Json(stored.clone()).into_response()
}

/// Start the fake API server on its own runtime and thread (the engine's lookups block the
/// caller while they wait, and must not block the server that answers them).
pub fn serve(fake: Fake) -> SocketAddr {
    let server = FakeServer::start(fake);
    let addr = server.addr;
    // Serves for the rest of the test process.
    std::mem::forget(server);
    addr
}

/// A running stand-in API server that a test can change, expire the watches of, stop and
/// start again on the same address.
pub struct FakeServer {
    /// Where it listens.
    pub addr: SocketAddr,
    shared: Shared,
    runtime: Option<tokio::runtime::Runtime>,
    serving: Option<Serving>,
}

/// The serve task of a running server, and the signal that starts its graceful shutdown.
struct Serving {
    task: tokio::task::JoinHandle<()>,
    shut_down: tokio::sync::oneshot::Sender<()>,
}

impl FakeServer {
    /// Start serving `fake` on a free loopback port.
    pub fn start(fake: Fake) -> FakeServer {
        let shared = Shared {
            fake: Arc::new(RwLock::new(fake)),
            expire: Arc::new(tokio::sync::Notify::new()),
            asked: Arc::default(),
            watches: Arc::default(),
            written: Arc::default(),
            version: Arc::new(std::sync::atomic::AtomicU64::new(100)),
            patches: Arc::default(),
        };
        let (runtime, addr, serving) = run(shared.clone(), "127.0.0.1:0".parse().unwrap());
        FakeServer { addr, shared, runtime: Some(runtime), serving: Some(serving) }
    }

    /// How many lists and how many watches of `plural` were asked for so far.
    pub fn asked(&self, plural: &str) -> (usize, usize) {
        self.shared.asked.lock().unwrap().get(plural).copied().unwrap_or_default()
    }

    /// An object written through the API (a Lease), as stored.
    pub fn written(&self, group: &str, namespace: &str, plural: &str, name: &str) -> Option<Value> {
        self.shared
            .written
            .lock()
            .unwrap()
            .get(&(group.into(), namespace.into(), plural.into(), name.into()))
            .cloned()
    }

    /// Every object written through the API of one group and plural, in every namespace.
    pub fn written_all(&self, group: &str, plural: &str) -> Vec<Value> {
        let written = self.shared.written.lock().unwrap();
        written.iter().filter(|((g, _, p, _), _)| g == group && p == plural).map(|(_, v)| v.clone()).collect()
    }

    /// How many PATCHes were served.
    pub fn patches(&self) -> usize {
        self.shared.patches.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The query of every watch asked for so far, with its plural.
    pub fn watch_queries(&self) -> Vec<WatchQuery> {
        self.shared.watches.lock().unwrap().clone()
    }

    /// Change what it holds.
    pub fn change(&self, edit: impl FnOnce(&mut Fake)) {
        edit(&mut self.shared.fake.write().unwrap());
    }

    /// End every open watch with 410 Gone.
    pub fn expire_watches(&self) {
        self.shared.expire.notify_waiters();
    }

    /// Go away: every connection drops and nothing listens.
    pub fn stop(&mut self) {
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
        self.serving = None;
    }

    /// Come back on the same address.
    pub fn restart(&mut self) {
        self.stop();
        // The port may take a moment to be free again.
        for _ in 0..100 {
            if std::net::TcpListener::bind(self.addr).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let (runtime, _, serving) = run(self.shared.clone(), self.addr);
        self.runtime = Some(runtime);
        self.serving = Some(serving);
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn run(shared: Shared, at: SocketAddr) -> (tokio::runtime::Runtime, SocketAddr, Serving) {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let listener = rt.block_on(tokio::net::TcpListener::bind(at)).unwrap();
    let addr = listener.local_addr().unwrap();
    let app = Router::new()
        .route("/apis", get(apis))
        .route("/api", get(|| async { Json(json!({"kind": "APIVersions", "versions": ["v1"]})) }))
        .route("/apis/{group}/{version}", get(group_version))
        .route("/apis/{group}/{version}/{plural}", get(list))
        .route("/apis/{group}/{version}/namespaces/{namespace}/{plural}", get(list_namespaced).post(create))
        .route(
            "/apis/{group}/{version}/namespaces/{namespace}/{plural}/{name}",
            get(read).put(replace).patch(merge_patch).delete(remove),
        )
        .route(
            "/apis/{group}/{version}/{plural}/{name}",
            get(read_cluster).patch(patch_cluster).delete(remove_cluster),
        )
        .with_state(shared);
    let (shut_down, signal) = tokio::sync::oneshot::channel::<()>();
    let task = rt.spawn(async move {
        let _ = axum::serve(listener, app)
            .with_graceful_shutdown(async move {
                let _ = signal.await;
            })
            .await;
    });
    (rt, addr, Serving { task, shut_down })
}

/// A kubeconfig in `dir` whose context `stand-in` (the current one) reaches the stand-in API
/// server at `addr` without credentials.
pub fn kubeconfig(dir: &std::path::Path, addr: SocketAddr) -> std::path::PathBuf {
    let path = dir.join("config");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: stand-in\n  cluster: {{server: \"http://{addr}\"}}\n\
             users:\n- name: me\n  user: {{}}\ncontexts:\n- name: stand-in\n  context: {{cluster: stand-in, user: me}}\n\
             current-context: stand-in\n"
        ),
    )
    .unwrap();
    path
}
