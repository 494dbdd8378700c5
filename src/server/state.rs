//! What every request handler shares.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::cluster::ClusterView;
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
