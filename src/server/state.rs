//! What every request handler shares.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use super::series::AdmissionSeries;
use crate::cluster::ClusterView;
use crate::config::Config;
use crate::engine::Engine;
use crate::metrics::Metrics;

/// Readiness: false until the certificate and config are loaded, false again while draining.
#[derive(Debug, Default)]
pub struct Readiness {
    loaded: AtomicBool,
    draining: AtomicBool,
    /// Every webhook connection slot serves a request: a new connection waits in the backlog.
    full: AtomicBool,
}

impl Readiness {
    /// Mark certificate and config loaded.
    pub fn set_loaded(&self) {
        self.loaded.store(true, Ordering::SeqCst);
    }

    /// Mark the server draining (SIGTERM received).
    pub fn set_draining(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    /// Mark whether every webhook connection slot is serving a request (none idle to reclaim).
    pub fn set_full(&self, full: bool) {
        self.full.store(full, Ordering::SeqCst);
    }

    /// Whether the server should receive traffic, and if not, why.
    pub fn check(&self) -> Result<(), &'static str> {
        if self.draining.load(Ordering::SeqCst) {
            Err("draining")
        } else if self.full.load(Ordering::SeqCst) {
            Err("every webhook connection slot is serving a request (--max-connections); new connections wait")
        } else if !self.loaded.load(Ordering::SeqCst) {
            Err("certificate and config not loaded")
        } else {
            Ok(())
        }
    }
}

/// The shared state of the webhook and admin routers.
#[derive(Clone)]
pub struct AppState {
    /// The engine, built once from the config.
    pub engine: Arc<Engine>,
    /// Cluster state for rules that need it.
    pub cluster: Arc<dyn ClusterView>,
    /// Metrics.
    pub metrics: Metrics,
    /// The admission series, by index.
    pub series: Arc<AdmissionSeries>,
    /// The registry the metrics live in.
    pub registry: prometheus::Registry,
    /// Readiness.
    pub readiness: Arc<Readiness>,
    /// Largest body accepted.
    pub body_limit: usize,
    /// How long a request's body may take to arrive (set from the serving options).
    pub read_timeout: Duration,
    /// Budget for cluster lookups within one request.
    pub lookup_budget: Duration,
    /// Whether the mutating route writes patches.
    pub mutation_enabled: bool,
    /// The background audit's status, when `--audit-interval` runs one.
    pub audit: Option<Arc<crate::audit::Status>>,
    /// Where Events on denied objects go (none: `--no-events`, or no cluster).
    pub events: Option<crate::cluster::events::EventSink>,
    /// Turns for reviews in flight (`server.maxReviewsInFlight`).
    pub reviews: Arc<tokio::sync::Semaphore>,
    /// How many turns there are.
    pub in_flight_limit: usize,
    /// Bytes of review bodies that may be held at once (`server.maxBufferedBytes`).
    pub buffered: Arc<tokio::sync::Semaphore>,
    /// What a review that cannot be judged in time gets: allowed with a warning, or refused.
    pub failure_policy: crate::config::FailurePolicy,
    /// The construct and consumer kinds `/api/v0/status` reads.
    pub kinds: Arc<(Vec<String>, Vec<String>)>,
    /// Set while the upgrade-picture gauges are being computed, so scrapes never pile up
    /// lookups behind a slow cluster.
    pub usage_refreshing: Arc<std::sync::atomic::AtomicBool>,
}

/// The cluster view as the server uses it: every lookup timed into
/// `covenant_lookup_duration_seconds{resource}`.
struct Metered {
    inner: Arc<dyn ClusterView>,
    duration: prometheus::HistogramVec,
    /// Each resource's histogram, found once: a lookup costs a fraction of a microsecond, and
    /// naming the resource and hashing the label at every one cost more than the lookup.
    histograms: std::sync::RwLock<Vec<(String, String, prometheus::Histogram)>>,
}

impl Metered {
    fn observe(&self, group: &str, kind: &str, started: std::time::Instant) {
        let took = started.elapsed().as_secs_f64();
        let known = self.histograms.read().unwrap_or_else(|e| e.into_inner());
        if let Some((_, _, h)) = known.iter().find(|(g, k, _)| g == group && k == kind) {
            h.observe(took);
            return;
        }
        drop(known);
        let resource = if group.is_empty() { kind.to_string() } else { format!("{kind}.{group}") };
        let h = self.duration.with_label_values(&[resource.as_str()]);
        h.observe(took);
        let mut known = self.histograms.write().unwrap_or_else(|e| e.into_inner());
        // The kinds are the config's and the CRDs': a handful, but never let it grow unbounded.
        if known.len() < 256 {
            known.push((group.to_string(), kind.to_string(), h));
        }
    }
}

impl ClusterView for Metered {
    fn answers_without_waiting(&self, group: &str, kind: &str) -> bool {
        self.inner.answers_without_waiting(group, kind)
    }

    fn list(
        &self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        budget: Option<Duration>,
    ) -> Result<Vec<Arc<serde_json::Value>>, crate::cluster::Error> {
        let started = std::time::Instant::now();
        let out = self.inner.list(group, kind, namespace, budget);
        self.observe(group, kind, started);
        out
    }

    fn lookup(
        &self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        index: &crate::cluster::Index,
        key: &str,
        budget: Option<Duration>,
    ) -> Result<Vec<Arc<serde_json::Value>>, crate::cluster::Error> {
        let started = std::time::Instant::now();
        let out = self.inner.lookup(group, kind, namespace, index, key, budget);
        self.observe(group, kind, started);
        out
    }

    fn page(
        &self,
        group: &str,
        kind: &str,
        after: Option<&str>,
        limit: usize,
        budget: Option<Duration>,
    ) -> Result<crate::cluster::Page, crate::cluster::Error> {
        let started = std::time::Instant::now();
        let out = self.inner.page(group, kind, after, limit, budget);
        self.observe(group, kind, started);
        out
    }

    fn synced(&self) -> bool {
        self.inner.synced()
    }

    fn cache_sizes(&self) -> Vec<(String, usize)> {
        self.inner.cache_sizes()
    }

    fn watch_health(&self) -> Vec<(String, bool)> {
        self.inner.watch_health()
    }
}

impl AppState {
    /// Whether the mutating route can patch anything: `mutation.enabled`, and a mutation rule
    /// (CVN-501, CVN-502) set to mutate.
    pub fn patches(&self) -> bool {
        let rules = self.engine.rules();
        self.mutation_enabled
            && crate::rules::CATALOG
                .iter()
                .any(|r| r.category == crate::rules::Category::Mutation && rules.runs(r))
    }

    /// The state a config describes, judging against `cluster`, with its own metrics registry.
    pub fn new(config: &Config, cluster: Arc<dyn ClusterView>) -> prometheus::Result<AppState> {
        let registry = prometheus::Registry::new();
        let metrics = Metrics::register(&registry)?;
        let cluster: Arc<dyn ClusterView> = Arc::new(Metered {
            inner: cluster,
            duration: metrics.lookup_duration.clone(),
            histograms: Default::default(),
        });
        let engine = Arc::new(Engine::new(config));
        Ok(AppState {
            series: Arc::new(AdmissionSeries::new(&metrics, engine.clone())),
            engine,
            cluster,
            metrics,
            registry,
            readiness: Arc::default(),
            body_limit: config.body_limit,
            read_timeout: Duration::from_secs(30),
            lookup_budget: config.lookup_budget,
            mutation_enabled: config.mutation_enabled,
            audit: None,
            events: None,
            reviews: Arc::new(tokio::sync::Semaphore::new(config.reviews_in_flight)),
            in_flight_limit: config.reviews_in_flight,
            buffered: Arc::new(tokio::sync::Semaphore::new(config.buffered_bytes)),
            failure_policy: config.failure_policy,
            kinds: Arc::new((config.construct_kinds.clone(), config.consumer_kinds.clone())),
            usage_refreshing: Arc::new(std::sync::atomic::AtomicBool::new(false)),
        })
    }
}
