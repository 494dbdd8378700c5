//! The HTTP faces: the HTTPS webhook listener (rustls, HTTP/1.1 and HTTP/2 by ALPN) and the
//! plain-HTTP admin listener. Thin: decode, call the engine, answer. Graceful shutdown drops
//! readiness first, then stops accepting and lets in-flight requests finish.

pub mod admin;
mod conn;
mod console;
pub use conn::Streams;
pub mod peer;
pub mod problem;
pub mod registration;
mod schedule;
pub mod series;
pub mod state;
pub mod tls;
pub mod webhook;

use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{Method, Uri};
use axum::response::IntoResponse;
use axum::routing::post;
use axum::Router;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio_rustls::TlsAcceptor;
use tower_http::catch_panic::CatchPanicLayer;

use problem::Problem;
pub use state::{AppState, Readiness};
pub use tls::{CertPaths, Tls};

/// The webhook router (what the TLS listener serves). Testable without a socket.
pub fn router(state: AppState) -> Router {
    boundary(
        Router::new()
            .route("/api/v0/validate", post(webhook::validate))
            .route("/api/v0/mutate", post(webhook::mutate))
            // Shared, not cloned per request: the state is a few dozen handles.
            .with_state(Arc::new(state)),
    )
}

/// The HTTP boundary every webhook route sits behind: unknown routes answer 404, wrong
/// methods 405, and a handler that panics answers 500; each as a problem document.
pub fn boundary(routes: Router) -> Router {
    routes
        .method_not_allowed_fallback(|method: Method, uri: Uri| async move {
            Problem::method_not_allowed(method.as_str(), uri.path())
        })
        .fallback(|uri: Uri| async move { Problem::not_found(uri.path()) })
        .layer(CatchPanicLayer::custom(|_| {
            tracing::error!("a request handler panicked");
            Problem::internal().into_response()
        }))
}

/// How to run the listeners.
#[derive(Clone, Debug)]
pub struct Options {
    /// Webhook (HTTPS) address.
    pub listen: SocketAddr,
    /// Admin (HTTP) address: probes and metrics.
    pub admin_listen: SocketAddr,
    /// Read API (HTTP) address: status, compare, upgrade, audit.
    pub api_listen: SocketAddr,
    /// Serving certificate and key.
    pub cert: CertPaths,
    /// CA that apiserver client certificates must chain to; none: no client auth.
    pub client_ca: Option<PathBuf>,
    /// How often the certificate files are checked for a change.
    pub reload_interval: Duration,
    /// After SIGTERM, how long to keep serving with readiness down before closing.
    pub drain_delay: Duration,
    /// How long in-flight requests may take to finish after the listeners close.
    pub shutdown_grace: Duration,
    /// How long a client may take to send a request's body: a slow (slowloris) body is
    /// answered 408, not waited for.
    pub read_timeout: Duration,
    /// How long an HTTP/1.1 connection may sit idle or take to send a request's head before
    /// it is closed. Longer than the apiserver's own idle timeout (90 s), so the apiserver
    /// always closes an idle connection first and never sends into one being closed.
    pub idle_timeout: Duration,
    /// How long a client may take to finish the TLS handshake.
    pub handshake_timeout: Duration,
    /// How many webhook connections are open at once, at most.
    pub max_connections: usize,
    /// The peer listener, through which replicas that do not lead hand their denials' Events
    /// to the one that does (`server::peer`); none: every Event is written here.
    pub peers: Option<Peers>,
}

/// The peer listener's options.
#[derive(Clone, Debug)]
pub struct Peers {
    /// Where to listen (`0.0.0.0:8444`).
    pub listen: SocketAddr,
    /// The host the other replicas reach this one at (the pod's IP); the bound port is added.
    /// None: this replica, when it leads, cannot be handed events.
    pub host: Option<String>,
    /// The election this replica takes part in.
    pub leadership: crate::cluster::lease::Leadership,
}

/// A listener's work, made at `bind` and run from `run`.
type Task = std::pin::Pin<Box<dyn Future<Output = ()> + Send>>;

/// Listeners bound and TLS loaded, not yet serving.
pub struct Bound {
    /// The webhook's local address (useful with port 0).
    pub webhook_addr: SocketAddr,
    /// The admin listener's local address.
    pub admin_addr: SocketAddr,
    /// The read API's local address.
    pub api_addr: SocketAddr,
    /// The peer listener's local address, when there is one.
    pub peer_addr: Option<SocketAddr>,
    webhook: TcpListener,
    /// The peer listener, served once `run` starts.
    peering: Option<Task>,
    admin: TcpListener,
    api: TcpListener,
    tls: Arc<Tls>,
    state: AppState,
    options: Options,
}

/// A server that could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A listener could not be bound.
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// The I/O error.
        source: std::io::Error,
    },
    /// TLS could not be set up.
    #[error(transparent)]
    Tls(#[from] tls::Error),
}

/// Bind both listeners and load the certificate (failing fast on a bad one).
pub async fn bind(options: Options, mut state: AppState) -> Result<Bound, Error> {
    state.read_timeout = options.read_timeout;
    let tls = Arc::new(Tls::new(options.cert.clone(), options.client_ca.as_deref(), &state.metrics)?);
    let bind = |addr: SocketAddr| async move {
        TcpListener::bind(addr).await.map_err(|source| Error::Bind { addr, source })
    };
    let webhook = bind(options.listen).await?;
    let admin = bind(options.admin_listen).await?;
    let webhook_addr = webhook.local_addr().map_err(|source| Error::Bind { addr: options.listen, source })?;
    let admin_addr =
        admin.local_addr().map_err(|source| Error::Bind { addr: options.admin_listen, source })?;
    let api = bind(options.api_listen).await?;
    let api_addr = api.local_addr().map_err(|source| Error::Bind { addr: options.api_listen, source })?;
    // The peer listener only where Events are written: a replica that does not lead hands its
    // own to the leader's.
    let mut peering = None;
    let mut peer_addr = None;
    if let (Some(peers), Some(sink)) = (&options.peers, &state.events) {
        let listener = bind(peers.listen).await?;
        let addr = listener.local_addr().map_err(|source| Error::Bind { addr: peers.listen, source })?;
        let invalid =
            |e: rustls::Error| tls::Error::Invalid { path: "peer TLS".into(), reason: e.to_string() };
        let config = peer::server_config(&tls).map_err(invalid)?;
        sink.relay_through(Arc::new(peer::Relay::new(peers.leadership.clone(), &tls).map_err(invalid)?));
        let advertised = peers.host.as_ref().map(|host| {
            if host.contains(':') {
                format!("[{host}]:{}", addr.port())
            } else {
                format!("{host}:{}", addr.port())
            }
        });
        if advertised.is_none() {
            tracing::warn!("no peer address (--peer-host, $POD_IP): when this replica leads, the others cannot hand it their denials' Events");
        }
        peers.leadership.advertise(advertised);
        let serving = peer::serve(listener, config, sink.clone(), peers.leadership.clone());
        peering = Some(Box::pin(serving) as Task);
        peer_addr = Some(addr);
    }
    Ok(Bound {
        webhook_addr,
        admin_addr,
        api_addr,
        peer_addr,
        webhook,
        peering,
        admin,
        api,
        tls,
        state,
        options,
    })
}

impl Bound {
    /// Serve until `shutdown` resolves, then drain and return.
    pub async fn run(self, shutdown: impl Future<Output = ()> + Send + 'static) {
        let Bound {
            webhook,
            peering,
            admin,
            api,
            tls,
            state,
            options,
            webhook_addr,
            admin_addr,
            api_addr,
            ..
        } = self;
        let readiness = state.readiness.clone();
        let watcher = tokio::spawn(tls.clone().watch(options.reload_interval, state.metrics.clone()));
        let peering = peering.map(tokio::spawn);

        let (admin_serving, admin_drain) = conn::Serving::new(
            "admin",
            None,
            admin::router(state.clone()),
            options.handshake_timeout,
            options.idle_timeout,
            ADMIN_CONNECTIONS,
            state.metrics.clone(),
        );
        let (api_serving, api_drain) = conn::Serving::new(
            "api",
            None,
            admin::api_router(state.clone()),
            options.handshake_timeout,
            options.idle_timeout,
            ADMIN_CONNECTIONS,
            state.metrics.clone(),
        );
        // The admin listener runs on a thread and runtime of its own: probes and /metrics are
        // answered however busy the webhook's workers are. The read API shares that thread
        // but not its connections: its clients can never take a probe's slot.
        let (admin_stop_tx, admin_stop_rx) = tokio::sync::oneshot::channel::<()>();
        let (admin_done_tx, admin_done_rx) = tokio::sync::oneshot::channel::<()>();
        let admin_thread = {
            let serving = admin_serving.clone();
            let admin = admin.into_std();
            let api = api.into_std();
            std::thread::Builder::new().name("covenant-admin".into()).spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                    Ok(r) => r,
                    Err(e) => {
                        tracing::error!(error = %e, "cannot start the admin listener's runtime");
                        return;
                    }
                };
                runtime.block_on(async move {
                    let (stop_tx, stop_rx) = watch::channel(false);
                    tokio::spawn(async move {
                        let _ = admin_stop_rx.await;
                        let _ = stop_tx.send(true);
                    });
                    let listen = |serving: Arc<conn::Serving>, listener: std::io::Result<std::net::TcpListener>| {
                        let mut stop = stop_rx.clone();
                        async move {
                            match listener.and_then(TcpListener::from_std) {
                                Ok(listener) => {
                                    serving
                                        .accept(&listener, async move {
                                            let _ = stop.wait_for(|s| *s).await;
                                        })
                                        .await
                                }
                                Err(e) => tracing::error!(listener = serving.name, error = %e, "listener failed"),
                            }
                        }
                    };
                    tokio::join!(listen(serving.clone(), admin), listen(api_serving.clone(), api));
                    admin_drain.start();
                    api_drain.start();
                    tokio::join!(serving.closed(Duration::from_secs(1)), api_serving.closed(Duration::from_secs(1)));
                });
                let _ = admin_done_tx.send(());
            })
        };
        if let Err(e) = &admin_thread {
            tracing::error!(error = %e, "cannot start the admin listener's thread");
        }

        let metrics = state.metrics.clone();
        let (mut serving, drain) = conn::Serving::new(
            "webhook",
            Some(TlsAcceptor::from(tls.config.clone())),
            router(state),
            options.handshake_timeout,
            options.idle_timeout,
            options.max_connections,
            metrics,
        );
        if let Some(s) = Arc::get_mut(&mut serving) {
            s.full = Some(readiness.clone());
        }
        readiness.set_loaded();
        tracing::info!(webhook = %webhook_addr, admin = %admin_addr, api = %api_addr, max_connections = serving.cap, "covenant serving");
        serving.accept(&webhook, shutdown).await;

        // Shutdown: readiness first, so the endpoints controller stops routing to us, and the
        // open connections told to go elsewhere (Connection: close, GOAWAY) as they finish
        // what they serve; keep accepting through the drain delay (a request the apiserver
        // routed before it saw readiness drop still reaches a listener), then close and wait
        // for in-flight requests.
        readiness.set_draining();
        drain.start();
        tracing::info!(drain_delay = ?options.drain_delay, "shutdown requested; readiness dropped");
        if !options.drain_delay.is_zero() {
            serving.accept(&webhook, tokio::time::sleep(options.drain_delay)).await;
        }
        drop(webhook);
        if !serving.closed(options.shutdown_grace).await {
            tracing::warn!(grace = ?options.shutdown_grace, "in-flight requests did not finish within the grace period");
        }
        watcher.abort();
        if let Some(peering) = peering {
            peering.abort();
        }
        let _ = admin_stop_tx.send(());
        if admin_thread.is_ok() {
            let _ = admin_done_rx.await;
        }
        tracing::info!("covenant stopped");
    }
}

/// How many connections the admin listener serves at once (probes and Prometheus).
const ADMIN_CONNECTIONS: usize = 64;

/// Resolves on SIGTERM or Ctrl-C.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}
