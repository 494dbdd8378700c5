//! What every request handler shares.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::cluster::ClusterView;
use crate::config::Config;
use crate::engine::Engine;
use crate::metrics::Metrics;

/// Readiness: false until the certificate and config are loaded, false again while draining.
#[derive(Debug, Default)]
pub struct Readiness {
    loaded: AtomicBool,
    draining: AtomicBool,
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

    /// Whether the server should receive traffic, and if not, why.
    pub fn check(&self) -> Result<(), &'static str> {
        if self.draining.load(Ordering::SeqCst) {
            Err("draining")
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
    /// The registry the metrics live in.
    pub registry: prometheus::Registry,
    /// Readiness.
    pub readiness: Arc<Readiness>,
    /// Largest body accepted.
    pub body_limit: usize,
    /// Budget for cluster lookups within one request.
    pub lookup_budget: Duration,
    /// Whether the mutating route writes patches.
    pub mutation_enabled: bool,
}

impl AppState {
    /// The state a config describes, judging against `cluster`, with its own metrics registry.
    pub fn new(config: &Config, cluster: Arc<dyn ClusterView>) -> prometheus::Result<AppState> {
        let registry = prometheus::Registry::new();
        let metrics = Metrics::register(&registry)?;
        Ok(AppState {
            engine: Arc::new(Engine::new(config)),
            cluster,
            metrics,
            registry,
            readiness: Arc::default(),
            body_limit: config.body_limit,
            lookup_budget: config.lookup_budget,
            mutation_enabled: config.mutation_enabled,
        })
    }
}
