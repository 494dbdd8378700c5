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
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use futures_util::StreamExt;
use kube::api::{Api, DynamicObject, ListParams};
use kube::discovery::{ApiResource, Discovery, Scope};
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher;
use serde_json::Value;

use super::{filed_under, slice, ClusterView, Error, Filed, Index, Page};

/// One watched kind's cache, and the health of the watch that fills it.
struct Cache {
    /// Replaced by a fresh one at every relist.
    store: Arc<RwLock<Store<DynamicObject>>>,
    resource: ApiResource,
    health: Arc<Health>,
    /// The store's objects as the rules read them, converted once per object version.
    values: Arc<Mutex<Converted>>,
    /// Counts the store's changes (each applied watch event, each relist), so an index knows
    /// it is current without a pass over the store.
    generation: Arc<AtomicU64>,
    /// The indexes asked for, each with the generation it was built at.
    indexes: Arc<Mutex<Indexes>>,
}

/// A kind's indexes by name, each with the store generation it was built at.
type Indexes = HashMap<&'static str, (u64, Arc<Filed>)>;

/// Each cached object's JSON value, kept beside the store: converting every object of a kind
/// on every lookup made each review's cost grow with the cluster's objects. An object is
/// known by its `Arc` in the store (the reflector replaces the `Arc` when the object changes,
/// and a fresh store at a relist has new ones); the entry holds that `Arc`, so its address
/// is not reused while the entry stands. Entries of objects no longer in the store are
/// dropped at the next lookup.
#[derive(Default)]
struct Converted(HashMap<usize, (Arc<DynamicObject>, Arc<Value>)>);

impl Converted {
    /// The values of `objects` that `keep` selects, in order, converting only what is new.
    fn values(
        &mut self,
        objects: &[Arc<DynamicObject>],
        resource: &ApiResource,
        keep: impl Fn(&DynamicObject) -> bool,
    ) -> Vec<Arc<Value>> {
        let mut next = HashMap::with_capacity(self.0.len());
        let mut out = Vec::new();
        for o in objects {
            let at = Arc::as_ptr(o) as usize;
            let known = self.0.remove(&at);
            if !keep(o) {
                if let Some(entry) = known {
                    next.insert(at, entry);
                }
                continue;
            }
            let value = match known {
                Some((_, value)) => value,
                None => Arc::new(to_value(o, resource)),
            };
            out.push(value.clone());
            next.insert(at, (o.clone(), value));
        }
        self.0 = next;
        out
    }
}

/// Whether a watch's store can be answered from: listed once, and no error since the last
/// event (after an error the watcher relists; until then the store may be stale).
#[derive(Default)]
struct Health {
    up: AtomicBool,
    /// The last error while the watch is down.
    error: RwLock<Option<String>>,
}

impl Health {
    fn event(&self) {
        self.up.store(true, Ordering::SeqCst);
        *self.error.write().unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// The error is written before the watch is marked down, so whoever finds it down finds
    /// why (the other way round, a lookup in between was told it had not listed yet).
    fn failed(&self, e: &dyn std::fmt::Display) {
        *self.error.write().unwrap_or_else(|e| e.into_inner()) = Some(e.to_string());
        self.up.store(false, Ordering::SeqCst);
    }
}

/// A watch's retry delay: from 100 ms doubling to at most 1 s, so a watch that lost the API
/// server (a restart, a 410 Gone) relists within a second of it coming back, never after a
/// backoff grown to half a minute.
struct Bounded(Duration);

const RETRY_FIRST: Duration = Duration::from_millis(100);
const RETRY_MAX: Duration = Duration::from_secs(1);

impl Iterator for Bounded {
    type Item = Duration;
    fn next(&mut self) -> Option<Duration> {
        let now = self.0;
        self.0 = (self.0 * 2).min(RETRY_MAX);
        Some(now)
    }
}

impl kube::runtime::utils::Backoff for Bounded {
    fn reset(&mut self) {
        self.0 = RETRY_FIRST;
    }
}

/// A kind the rules read on every request: watched and cached.
pub type Watched = (String, String);

/// A watched kind's store as it is now, with the resource it reflects; `None` when the
/// cluster does not serve the kind.
type Snapshot = Option<(Vec<Arc<DynamicObject>>, ApiResource, Arc<Mutex<Converted>>)>;

/// The live view.
pub struct LiveCluster {
    runtime: Option<tokio::runtime::Runtime>,
    client: kube::Client,
    caches: Arc<RwLock<HashMap<Watched, Cache>>>,
    watched: Vec<Watched>,
    synced: Arc<AtomicBool>,
    page_size: u32,
}

/// How often the view looks for watched kinds the cluster did not serve yet (CRDs installed
/// after covenant started).
pub const REDISCOVERY: Duration = Duration::from_secs(5);

/// How the view follows the cluster.
#[derive(Clone, Copy, Debug)]
pub struct Following {
    /// How often to look for watched kinds the cluster did not serve yet.
    pub rediscover: Duration,
    /// The shortest time the API server keeps a watch open (`timeoutSeconds`, whole
    /// seconds): each kind's watches ask for a time picked at random between this and twice
    /// this (client-go's jitter). The watch then ends and resumes from the resourceVersion it
    /// reached (bookmarks on), without a list.
    pub watch_timeout: Duration,
}

impl Default for Following {
    fn default() -> Self {
        Following { rediscover: REDISCOVERY, watch_timeout: crate::config::WATCH_TIMEOUT }
    }
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
    /// Connect with `config` and start watching `watched` (group, kind) as `following` says.
    /// The caches fill in the background; `synced` says when every watched kind the cluster
    /// serves is listed.
    pub fn connect(
        config: kube::Config,
        watched: Vec<Watched>,
        following: Following,
    ) -> Result<LiveCluster, Error> {
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
        runtime.spawn(start(client.clone(), watched.clone(), caches.clone(), synced.clone(), following));
        Ok(LiveCluster { runtime: Some(runtime), client, caches, watched, synced, page_size: 500 })
    }

    /// The page size of one-off lists (500 by default).
    pub fn with_page_size(mut self, page: u32) -> LiveCluster {
        self.page_size = page.max(1);
        self
    }

    /// Whether each watched resource's watch is up, for `covenant_watch_up`.
    pub fn watch_health(&self) -> Vec<(String, bool)> {
        let caches = self.caches.read().unwrap_or_else(|e| e.into_inner());
        caches
            .values()
            .map(|c| {
                (format!("{}.{}", c.resource.plural, c.resource.group), c.health.up.load(Ordering::SeqCst))
            })
            .collect()
    }

    /// Objects held per watched resource, for `covenant_cache_objects`.
    pub fn cache_sizes(&self) -> Vec<(String, usize)> {
        let caches = self.caches.read().unwrap_or_else(|e| e.into_inner());
        caches
            .values()
            .map(|c| {
                (
                    format!("{}.{}", c.resource.plural, c.resource.group),
                    c.store.read().unwrap_or_else(|e| e.into_inner()).state().len(),
                )
            })
            .collect()
    }

    /// The cache of a watched kind, if it can be answered from: `None` when the kind is not
    /// watched (ask the API server), an error before the caches sync or while its watch is
    /// down, and `Ok(None)` when the cluster does not serve the kind.
    fn cache<T>(
        &self,
        group: &str,
        kind: &str,
        take: impl FnOnce(&Cache) -> T,
    ) -> Option<Result<Option<T>, Error>> {
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
        let Some(c) = caches.get(&key) else { return Some(Ok(None)) };
        if !c.health.up.load(Ordering::SeqCst) {
            // Listing for the first time (a kind installed after start), or relisting after
            // an error: never answered from a store that may be stale.
            let why = c.health.error.read().unwrap_or_else(|e| e.into_inner()).clone();
            let reason = match why {
                Some(e) => format!("the watch is down ({e}); relisting"),
                None => "the watch has not listed yet".to_string(),
            };
            return Some(Err(Error::Unavailable { resource: format!("{kind}.{group}"), reason }));
        }
        Some(Ok(Some(take(c))))
    }

    /// What the store of a watched kind holds now, and the resource it reflects (as `cache`
    /// says when there is none).
    fn snapshot(&self, group: &str, kind: &str) -> Option<Result<Snapshot, Error>> {
        self.cache(group, kind, |c| {
            let state = c.store.read().unwrap_or_else(|e| e.into_inner()).state();
            (state, c.resource.clone(), c.values.clone())
        })
    }

    /// A watched kind's index as of the store's last change: kept, or built once after a
    /// change (one pass over the store, each object converted once per version).
    fn indexed(&self, group: &str, kind: &str, index: &Index) -> Option<Result<Option<Arc<Filed>>, Error>> {
        self.cache(group, kind, |c| {
            let mut indexes = c.indexes.lock().unwrap_or_else(|e| e.into_inner());
            // Read before the store: a change after this is seen by the next lookup.
            let generation = c.generation.load(Ordering::Acquire);
            if let Some((built, filed)) = indexes.get(index.name) {
                if *built == generation {
                    return filed.clone();
                }
            }
            let state = c.store.read().unwrap_or_else(|e| e.into_inner()).state();
            let values =
                c.values.lock().unwrap_or_else(|e| e.into_inner()).values(&state, &c.resource, |_| true);
            let filed = Arc::new(index.build(&values));
            indexes.insert(index.name, (generation, filed.clone()));
            filed
        })
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

/// Discover which watched kinds the cluster serves and reflect each; `synced` turns true when
/// every store found at start has its first list. Then keep looking, every `rediscover`, for
/// watched kinds the cluster did not serve yet, and reflect those too: CRDs installed after
/// covenant started are watched without a restart.
async fn start(
    client: kube::Client,
    watched: Vec<Watched>,
    caches: Arc<RwLock<HashMap<Watched, Cache>>>,
    synced: Arc<AtomicBool>,
    following: Following,
) {
    let rediscover = following.rediscover;
    // At least a second: `timeoutSeconds` 0 would ask for the server's own (30 to 60 minutes).
    let watch_timeout = u32::try_from(following.watch_timeout.as_secs()).unwrap_or(u32::MAX / 2).max(1);
    let mut groups: Vec<&str> = watched.iter().map(|(g, _)| g.as_str()).collect();
    groups.sort();
    groups.dedup();
    let mut first = true;
    loop {
        let discovery = match Discovery::new(client.clone()).filter(&groups).run().await {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(error = %e, "cluster discovery failed; retrying");
                tokio::time::sleep(Duration::from_secs(if first { 2 } else { rediscover.as_secs().max(1) }))
                    .await;
                continue;
            }
        };
        let mut healths = Vec::new();
        for (group, kind) in &watched {
            let key = (group.clone(), kind.clone());
            if caches.read().unwrap_or_else(|e| e.into_inner()).contains_key(&key) {
                continue;
            }
            let Some((resource, _)) = discovery
                .groups()
                .filter(|g| g.name() == group)
                .flat_map(|g| g.recommended_resources())
                .find(|(r, _)| &r.kind == kind)
            else {
                // Not served by this cluster (yet): nothing to cache, and nothing to wait for.
                continue;
            };
            if !first {
                tracing::info!(resource = %format!("{}.{}", resource.plural, resource.group), "a watched kind is now served; watching it");
            }
            let health = Arc::new(Health::default());
            let generation = Arc::new(AtomicU64::new(0));
            let store =
                reflect(client.clone(), resource.clone(), health.clone(), generation.clone(), watch_timeout);
            healths.push(health.clone());
            caches.write().unwrap_or_else(|e| e.into_inner()).insert(
                key,
                Cache {
                    store,
                    resource,
                    health,
                    values: Arc::default(),
                    generation,
                    indexes: Arc::default(),
                },
            );
        }
        if first {
            while !healths.iter().all(|h| h.up.load(Ordering::SeqCst)) {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            synced.store(true, Ordering::SeqCst);
            tracing::info!("cluster caches synced");
            first = false;
        }
        if caches.read().unwrap_or_else(|e| e.into_inner()).len() == watched.len() {
            return;
        }
        tokio::time::sleep(rediscover).await;
    }
}

/// A watch's `timeoutSeconds`: between `least` and twice it, picked at random (client-go's
/// reflector does the same with 5 minutes), so the watches of many kinds and replicas spread
/// out rather than ending and reopening together.
fn jittered(least: u32) -> u32 {
    use std::hash::{BuildHasher, Hasher};
    // A fresh RandomState is seeded at random: enough for spreading timeouts, no crate needed.
    let random = std::collections::hash_map::RandomState::new().build_hasher().finish();
    let extra = u32::try_from(random % u64::from(least)).unwrap_or(0);
    least.saturating_add(extra)
}

/// Reflect one resource into a store, recording the watch's health from its events. After
/// any watch error the store is rebuilt from a fresh list (a new reflector), so it is never
/// answered from while it may have missed something: a resumed watch that stays quiet would
/// otherwise leave no sign that it is whole again. Retries back off from 100 ms to 1 s. A watch
/// the API server ends after `watch_timeout` seconds is no error: it resumes from the last
/// resourceVersion, and the store stays whole.
fn reflect(
    client: kube::Client,
    resource: ApiResource,
    health: Arc<Health>,
    generation: Arc<AtomicU64>,
    watch_timeout: u32,
) -> Arc<RwLock<Store<DynamicObject>>> {
    let api: Api<DynamicObject> = Api::all_with(client, &resource);
    let first = reflector::store::Writer::new(resource.clone());
    let slot = Arc::new(RwLock::new(first.as_reader()));
    let name = format!("{}.{}", resource.plural, resource.group);
    let store = slot.clone();
    tokio::spawn(async move {
        let mut writer = Some(first);
        let mut retry = Bounded(RETRY_FIRST);
        loop {
            let w = writer.take().unwrap_or_else(|| {
                let w = reflector::store::Writer::new(resource.clone());
                *slot.write().unwrap_or_else(|e| e.into_inner()) = w.as_reader();
                generation.fetch_add(1, Ordering::Release);
                w
            });
            // Bookmarks are on (kube's default), so a quiet kind's resume point stays fresh.
            let stream = reflector::reflector(
                w,
                watcher(api.clone(), watcher::Config::default().timeout(jittered(watch_timeout))),
            );
            let mut stream = std::pin::pin!(stream);
            while let Some(item) = stream.next().await {
                match item {
                    // The store is whole once the (re)list completes; the watch delivering
                    // after that keeps it whole.
                    Ok(watcher::Event::InitDone | watcher::Event::Apply(_) | watcher::Event::Delete(_)) => {
                        use kube::runtime::utils::Backoff;
                        // The reflector applied the event to the store before handing it on.
                        generation.fetch_add(1, Ordering::Release);
                        retry.reset();
                        health.event()
                    }
                    Ok(watcher::Event::Init | watcher::Event::InitApply(_)) => {}
                    Err(e) => {
                        if health.up.load(Ordering::SeqCst) {
                            tracing::warn!(resource = %name, error = %e, "cluster watch error; relisting");
                        }
                        health.failed(&e);
                        break;
                    }
                }
            }
            let delay = retry.next().unwrap_or(RETRY_MAX);
            tokio::time::sleep(delay).await;
        }
    });
    store
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
    /// A watched kind is answered from its cache (or refused at once while the cache is not
    /// listed); any other kind is listed from the API server, within the budget.
    fn answers_without_waiting(&self, group: &str, kind: &str) -> bool {
        self.watched.iter().any(|(g, k)| g == group && k == kind)
    }

    fn list(
        &self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        budget: Option<Duration>,
    ) -> Result<Vec<Arc<Value>>, Error> {
        if let Some(snapshot) = self.snapshot(group, kind) {
            let Some((objects, resource, values)) = snapshot? else { return Ok(Vec::new()) };
            let keep =
                |o: &DynamicObject| namespace.is_none() || o.metadata.namespace.as_deref() == namespace;
            return Ok(values.lock().unwrap_or_else(|e| e.into_inner()).values(&objects, &resource, keep));
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

    /// A watched kind is answered from its index, rebuilt only after the kind changed; any
    /// other kind is listed from the API server and filtered.
    fn lookup(
        &self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        index: &Index,
        key: &str,
        budget: Option<Duration>,
    ) -> Result<Vec<Arc<Value>>, Error> {
        match self.indexed(group, kind, index) {
            Some(filed) => Ok(filed?.map(|filed| filed_under(&filed, key, namespace)).unwrap_or_default()),
            None => Ok(index.keep(self.list(group, kind, namespace, budget)?, key)),
        }
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
            // A page converts only its objects; the conversions `list` keeps are not consulted.
            let Some((objects, resource, _)) = snapshot? else { return Ok(Page::default()) };
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

    fn watch_health(&self) -> Vec<(String, bool)> {
        LiveCluster::watch_health(self)
    }
}
