//! The live cluster view: `kube` reflectors (list, then watch) over the kinds the rules read
//! on every request — OpenChoreo's constructs, their consumers and releases — and bounded,
//! paginated lists for one-off questions (the live custom resources of a CRD whose schema
//! tightens, CVN-215). Every lookup stays inside the request's budget: a list that cannot
//! finish in time is a `Timeout`, and the rule's failure policy decides.
//!
//! The view owns a small runtime of its own for the watches and lists, so the engine's
//! synchronous `ClusterView::list` can wait on it from any thread, inside the server's runtime
//! or not, without blocking that runtime's scheduler on a nested `block_on`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

use futures_util::StreamExt;
use kube::api::{Api, DynamicObject, ListParams};
use kube::discovery::{ApiResource, Discovery, Scope};
use kube::runtime::reflector::{self, Store};
use kube::runtime::{watcher, WatchStreamExt};
use serde_json::Value;

use super::{slice, ClusterView, Error, Page};

/// One watched kind's cache.
struct Cache {
    store: Store<DynamicObject>,
    resource: ApiResource,
}

/// A kind the rules read on every request: watched and cached.
pub type Watched = (String, String);

/// A watched kind's store as it is now, with the resource it reflects; `None` when the
/// cluster does not serve the kind.
type Snapshot = Option<(Vec<Arc<DynamicObject>>, ApiResource)>;

/// The live view.
pub struct LiveCluster {
    runtime: Option<tokio::runtime::Runtime>,
    client: kube::Client,
    caches: Arc<RwLock<HashMap<Watched, Cache>>>,
    watched: Vec<Watched>,
    synced: Arc<AtomicBool>,
    page_size: u32,
}

impl std::fmt::Debug for LiveCluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveCluster").field("watched", &self.watched).finish()
    }
}

impl Drop for LiveCluster {
    fn drop(&mut self) {
        // Dropping a runtime waits for its tasks; the watches never end, so let them go.
        if let Some(rt) = self.runtime.take() {
            rt.shutdown_background();
        }
    }
}

fn to_value(o: &DynamicObject, resource: &ApiResource) -> Value {
    let mut v = serde_json::to_value(o).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut v {
        map.entry("apiVersion").or_insert_with(|| Value::String(resource.api_version.clone()));
        map.entry("kind").or_insert_with(|| Value::String(resource.kind.clone()));
    }
    v
}

impl LiveCluster {
    /// Connect with `config` and start watching `watched` (group, kind). The caches fill in
    /// the background; `synced` says when every watched kind the cluster serves is listed.
    pub fn connect(config: kube::Config, watched: Vec<Watched>) -> Result<LiveCluster, Error> {
        let unavailable = |reason: String| Error::Unavailable { resource: "the cluster".into(), reason };
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("covenant-cluster")
            .enable_all()
            .build()
            .map_err(|e| unavailable(format!("cannot start the cluster runtime: {e}")))?;
        let client = {
            let _guard = runtime.enter();
            kube::Client::try_from(config)
        };
        let client = match client {
            Ok(c) => c,
            Err(e) => {
                // Dropping a runtime inside the caller's async context would panic.
                runtime.shutdown_background();
                return Err(unavailable(format!("cannot build the cluster client: {e}")));
            }
        };
        let caches = Arc::new(RwLock::new(HashMap::new()));
        let synced = Arc::new(AtomicBool::new(false));
        runtime.spawn(start(client.clone(), watched.clone(), caches.clone(), synced.clone()));
        Ok(LiveCluster { runtime: Some(runtime), client, caches, watched, synced, page_size: 500 })
    }

    /// The page size of one-off lists (500 by default).
    pub fn with_page_size(mut self, page: u32) -> LiveCluster {
        self.page_size = page.max(1);
        self
    }

    /// Objects held per watched resource, for `covenant_cache_objects`.
    pub fn cache_sizes(&self) -> Vec<(String, usize)> {
        let caches = self.caches.read().unwrap_or_else(|e| e.into_inner());
        caches
            .values()
            .map(|c| (format!("{}.{}", c.resource.plural, c.resource.group), c.store.state().len()))
            .collect()
    }

    /// What the store of a watched kind holds now, and the resource it reflects: `None` when
    /// the kind is not watched (ask the API server), an error before the caches sync, and
    /// `Ok(None)` when the cluster does not serve the kind.
    fn snapshot(&self, group: &str, kind: &str) -> Option<Result<Snapshot, Error>> {
        let key = (group.to_string(), kind.to_string());
        if !self.watched.contains(&key) {
            return None;
        }
        if !self.synced() {
            return Some(Err(Error::Unavailable {
                resource: format!("{kind}.{group}"),
                reason: "cluster caches are not synced yet".into(),
            }));
        }
        let caches = self.caches.read().unwrap_or_else(|e| e.into_inner());
        Some(Ok(caches.get(&key).map(|c| (c.store.state(), c.resource.clone()))))
    }

    /// Run `fut` on the view's runtime and wait for it at most `budget`.
    fn within<T: Send + 'static>(
        &self,
        resource: &str,
        budget: Option<Duration>,
        fut: impl std::future::Future<Output = Result<T, Error>> + Send + 'static,
    ) -> Result<T, Error> {
        let Some(rt) = &self.runtime else {
            return Err(Error::Unavailable {
                resource: resource.into(),
                reason: "the view is shut down".into(),
            });
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let task = rt.spawn(async move {
            let _ = tx.send(fut.await);
        });
        let budget = budget.unwrap_or(Duration::from_secs(10));
        match rx.recv_timeout(budget) {
            Ok(r) => r,
            Err(_) => {
                task.abort();
                Err(Error::Timeout { resource: resource.into(), budget })
            }
        }
    }
}

/// Discover which watched kinds the cluster serves, then reflect each; `synced` turns true
/// when every store has its first list.
async fn start(
    client: kube::Client,
    watched: Vec<Watched>,
    caches: Arc<RwLock<HashMap<Watched, Cache>>>,
    synced: Arc<AtomicBool>,
) {
    let mut groups: Vec<&str> = watched.iter().map(|(g, _)| g.as_str()).collect();
    groups.sort();
    groups.dedup();
    let discovery = loop {
        match Discovery::new(client.clone()).filter(&groups).run().await {
            Ok(d) => break d,
            Err(e) => {
                tracing::warn!(error = %e, "cluster discovery failed; retrying");
                tokio::time::sleep(Duration::from_secs(2)).await;
            }
        }
    };
    let mut readers = Vec::new();
    for (group, kind) in &watched {
        let Some((resource, _)) = discovery
            .groups()
            .filter(|g| g.name() == group)
            .flat_map(|g| g.recommended_resources())
            .find(|(r, _)| &r.kind == kind)
        else {
            // Not served by this cluster: nothing to cache, and nothing to wait for.
            continue;
        };
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
        let writer = reflector::store::Writer::new(resource.clone());
        let store = writer.as_reader();
        let stream = reflector::reflector(writer, watcher(api, watcher::Config::default()))
            .default_backoff()
            .touched_objects();
        tokio::spawn(async move {
            let mut stream = std::pin::pin!(stream);
            while let Some(item) = stream.next().await {
                if let Err(e) = item {
                    tracing::warn!(error = %e, "cluster watch error; backing off");
                }
            }
        });
        readers.push(store.clone());
        caches
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert((group.clone(), kind.clone()), Cache { store, resource });
    }
    for r in readers {
        let _ = r.wait_until_ready().await;
    }
    synced.store(true, Ordering::SeqCst);
    tracing::info!("cluster caches synced");
}

/// The API of a kind the view does not cache (in one namespace or all), found by discovery;
/// `None` when the cluster does not serve it.
async fn api_for(
    client: kube::Client,
    group: &str,
    kind: &str,
    namespace: Option<&str>,
) -> Result<Option<(Api<DynamicObject>, ApiResource)>, Error> {
    let unavailable = |reason: String| Error::Unavailable { resource: format!("{kind}.{group}"), reason };
    let discovery = Discovery::new(client.clone())
        .filter(&[group])
        .run()
        .await
        .map_err(|e| unavailable(e.to_string()))?;
    let Some((resource, caps)) = discovery
        .groups()
        .filter(|g| g.name() == group)
        .flat_map(|g| g.recommended_resources())
        .find(|(r, _)| r.kind == kind)
    else {
        return Ok(None);
    };
    let api: Api<DynamicObject> = match (namespace, caps.scope) {
        (Some(ns), Scope::Namespaced) => Api::namespaced_with(client, ns, &resource),
        _ => Api::all_with(client, &resource),
    };
    Ok(Some((api, resource)))
}

/// One page of a list from the API server: `limit` objects from the `continue` token.
async fn list_once(
    api: &Api<DynamicObject>,
    resource: &ApiResource,
    limit: u32,
    token: Option<&str>,
) -> Result<Page, Error> {
    let mut params = ListParams::default().limit(limit);
    if let Some(token) = token {
        params = params.continue_token(token);
    }
    let list = api.list(&params).await.map_err(|e| match e {
        kube::Error::Api(status) if status.code == 403 => Error::Forbidden {
            resource: format!("{}.{}", resource.plural, resource.group),
            verb: "list".into(),
            reason: status.message.clone(),
        },
        e => Error::Unavailable {
            resource: format!("{}.{}", resource.kind, resource.group),
            reason: e.to_string(),
        },
    })?;
    Ok(Page {
        objects: list.items.iter().map(|o| Arc::new(to_value(o, resource))).collect(),
        next: list.metadata.continue_.filter(|c| !c.is_empty()),
    })
}

/// List every object of a kind the view does not cache, page by page.
async fn list_paged(
    client: kube::Client,
    group: String,
    kind: String,
    namespace: Option<String>,
    page: u32,
) -> Result<Vec<Arc<Value>>, Error> {
    let Some((api, resource)) = api_for(client, &group, &kind, namespace.as_deref()).await? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    let mut token = None;
    loop {
        let page = list_once(&api, &resource, page, token.as_deref()).await?;
        out.extend(page.objects);
        match page.next {
            Some(next) => token = Some(next),
            None => break,
        }
    }
    Ok(out)
}

impl ClusterView for LiveCluster {
    fn list(
        &self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        budget: Option<Duration>,
    ) -> Result<Vec<Arc<Value>>, Error> {
        if let Some(snapshot) = self.snapshot(group, kind) {
            let Some((objects, resource)) = snapshot? else { return Ok(Vec::new()) };
            return Ok(objects
                .iter()
                .filter(|o| namespace.is_none() || o.metadata.namespace.as_deref() == namespace)
                .map(|o| Arc::new(to_value(o, &resource)))
                .collect());
        }
        if budget == Some(Duration::ZERO) {
            return Err(Error::Timeout { resource: format!("{kind}.{group}"), budget: Duration::ZERO });
        }
        let fut = list_paged(
            self.client.clone(),
            group.to_string(),
            kind.to_string(),
            namespace.map(str::to_string),
            self.page_size,
        );
        self.within(&format!("{kind}.{group}"), budget, fut)
    }

    /// A cached kind pages through one snapshot of its store, converting only the page; any
    /// other kind pages through the API server with its own `continue` tokens.
    fn page(
        &self,
        group: &str,
        kind: &str,
        after: Option<&str>,
        limit: usize,
        budget: Option<Duration>,
    ) -> Result<Page, Error> {
        if let Some(snapshot) = self.snapshot(group, kind) {
            let Some((objects, resource)) = snapshot? else { return Ok(Page::default()) };
            let object_key = |o: &Arc<DynamicObject>| {
                format!(
                    "{}/{}",
                    o.metadata.namespace.as_deref().unwrap_or_default(),
                    o.metadata.name.as_deref().unwrap_or_default()
                )
            };
            let (objects, next) = slice(objects, object_key, after, limit);
            return Ok(Page {
                objects: objects.iter().map(|o| Arc::new(to_value(o, &resource))).collect(),
                next,
            });
        }
        let (client, limit) = (self.client.clone(), u32::try_from(limit.max(1)).unwrap_or(u32::MAX));
        let (group, kind, token) = (group.to_string(), kind.to_string(), after.map(str::to_string));
        let resource = format!("{kind}.{group}");
        self.within(&resource, budget, async move {
            match api_for(client, &group, &kind, None).await? {
                Some((api, resource)) => list_once(&api, &resource, limit, token.as_deref()).await,
                None => Ok(Page::default()),
            }
        })
    }

    fn synced(&self) -> bool {
        self.synced.load(Ordering::SeqCst)
    }

    fn cache_sizes(&self) -> Vec<(String, usize)> {
        LiveCluster::cache_sizes(self)
    }
}
