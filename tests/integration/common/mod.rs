//! Shared test harness: a real covenant server on loopback with TLS, and HTTP clients.
#![allow(dead_code)]

use std::net::SocketAddr;

pub mod apiserver;
pub mod dev;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use covenant::certs::DevCerts;
use covenant::cluster::EmptyCluster;
use covenant::config::Config;
use covenant::server::{self, AppState, CertPaths, Options};

/// The fixtures folder.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Every `.json` AdmissionReview body under tests/fixtures/admission, sorted.
pub fn corpus_reviews() -> Vec<PathBuf> {
    let files = covenant::source::discover(&fixtures().join("admission")).unwrap();
    files.into_iter().filter(|p| p.extension().is_some_and(|e| e == "json")).collect()
}

/// The config the versioned fixtures use.
pub fn versioned_config() -> Config {
    Config::load(&fixtures().join("versioned/covenant.yaml")).unwrap()
}

/// A running server and what a test needs to talk to it.
pub struct TestServer {
    /// Webhook address.
    pub webhook: SocketAddr,
    /// Admin address (probes, metrics).
    pub admin: SocketAddr,
    /// Read API address (status, compare, upgrade, audit).
    pub api: SocketAddr,
    /// The peer listener's address, when the setup asked for one.
    pub peer: Option<SocketAddr>,
    /// The CA the serving certificate chains to.
    pub ca_pem: String,
    /// Where the certificate files live.
    pub dir: tempfile::TempDir,
    /// The state the server runs with.
    pub state: AppState,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    /// The background audit, when the setup asked for one.
    pub audit: Option<covenant::audit::Handle>,
}

/// Knobs a test may turn.
pub struct Setup {
    /// Config.
    pub config: Config,
    /// Client CA for mTLS.
    pub client_ca: Option<PathBuf>,
    /// Certificate reload poll.
    pub reload_interval: Duration,
    /// Drain delay after shutdown is requested.
    pub drain_delay: Duration,
    /// Certificate files to serve (default: fresh ones in the temp dir).
    pub cert: Option<CertPaths>,
    /// The CA of `cert`.
    pub ca_pem: Option<String>,
    /// A temp dir to keep (holding `cert`).
    pub dir: Option<tempfile::TempDir>,
    /// The cluster state (default: none).
    pub cluster: Option<Arc<dyn covenant::cluster::ClusterView>>,
    /// Run the background audit over the cluster state (default: no audit).
    pub audit: Option<covenant::audit::Options>,
    /// Body read timeout.
    pub read_timeout: Duration,
    /// HTTP/1.1 idle and request-head timeout.
    pub idle_timeout: Duration,
    /// TLS handshake timeout.
    pub handshake_timeout: Duration,
    /// Webhook connections open at once.
    pub max_connections: usize,
    /// Where Events on objects go (default: none are written).
    pub events: Option<covenant::cluster::events::EventSink>,
    /// The peer listener, for replicas that elect a leader (default: none).
    pub peers: Option<covenant::server::Peers>,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            config: Config::embedded().unwrap(),
            client_ca: None,
            reload_interval: Duration::from_secs(2),
            drain_delay: Duration::ZERO,
            cert: None,
            ca_pem: None,
            dir: None,
            cluster: None,
            audit: None,
            read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(120),
            handshake_timeout: Duration::from_secs(10),
            max_connections: 1024,
            events: None,
            peers: None,
        }
    }
}

/// Build the state a server runs with.
pub fn state(config: &Config) -> AppState {
    AppState::new(config, Arc::new(EmptyCluster)).unwrap()
}

impl TestServer {
    /// Start a server with the embedded default config.
    pub async fn start() -> TestServer {
        TestServer::with(Setup::default()).await
    }

    /// Start a server as `setup` says.
    pub async fn with(setup: Setup) -> TestServer {
        let (dir, cert, ca_pem) = match (setup.dir, setup.cert, setup.ca_pem) {
            (Some(d), Some(c), Some(ca)) => (d, c, ca),
            _ => {
                let dir = tempfile::tempdir().unwrap();
                let certs = DevCerts::generate(&["localhost".into(), "127.0.0.1".into()], 2).unwrap();
                let w = certs.write(dir.path()).unwrap();
                (dir, CertPaths { cert: w.cert, key: w.key }, certs.ca_pem)
            }
        };
        let mut state = match setup.cluster {
            Some(cluster) => AppState::new(&setup.config, cluster).unwrap(),
            None => state(&setup.config),
        };
        state.events = setup.events.clone();
        let audit = setup.audit.map(|options| {
            let auditor = covenant::audit::Auditor::new(
                state.engine.clone(),
                state.cluster.clone(),
                state.metrics.clone(),
                options,
            );
            let auditor = match setup.events {
                Some(sink) => auditor.with_events(sink),
                None => auditor,
            };
            state.audit = Some(auditor.status());
            auditor.spawn().unwrap()
        });
        let options = Options {
            listen: "127.0.0.1:0".parse().unwrap(),
            admin_listen: "127.0.0.1:0".parse().unwrap(),
            api_listen: "127.0.0.1:0".parse().unwrap(),
            cert,
            client_ca: setup.client_ca,
            reload_interval: setup.reload_interval,
            drain_delay: setup.drain_delay,
            shutdown_grace: Duration::from_secs(10),
            read_timeout: setup.read_timeout,
            idle_timeout: setup.idle_timeout,
            handshake_timeout: setup.handshake_timeout,
            max_connections: setup.max_connections,
            peers: setup.peers,
        };
        let bound = server::bind(options, state.clone()).await.unwrap();
        let (webhook, admin, api, peer) =
            (bound.webhook_addr, bound.admin_addr, bound.api_addr, bound.peer_addr);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(bound.run(async move {
            let _ = stopped.await;
        }));
        // Wait for readiness rather than sleeping a fixed time.
        let http = reqwest::Client::new();
        for _ in 0..200 {
            if let Ok(r) = http.get(format!("http://{admin}/readyz")).send().await {
                if r.status() == 200 {
                    break;
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        TestServer {
            webhook,
            admin,
            api,
            peer,
            ca_pem,
            dir,
            state,
            stop: Some(stop),
            task: Some(task),
            audit,
        }
    }

    /// `https://localhost:PORT{path}`
    pub fn url(&self, path: &str) -> String {
        format!("https://localhost:{}{path}", self.webhook.port())
    }

    /// A client that speaks HTTP/2 only.
    pub fn h2(&self) -> reqwest::Client {
        client(&[&self.ca_pem], self.webhook, true, None)
    }

    /// A client that speaks HTTP/1.1 only.
    pub fn h1(&self) -> reqwest::Client {
        client(&[&self.ca_pem], self.webhook, false, None)
    }

    /// Ask the server to shut down; returns the task to await.
    pub fn shutdown(&mut self) -> tokio::task::JoinHandle<()> {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        self.task.take().expect("server already shut down")
    }

    /// The admin listener's /metrics text.
    pub async fn metrics(&self) -> String {
        reqwest::get(format!("http://{}/metrics", self.admin)).await.unwrap().text().await.unwrap()
    }
}

/// A TLS client trusting `cas`, pinned to `addr` for `localhost`.
pub fn client(
    cas: &[&str],
    addr: SocketAddr,
    h2: bool,
    identity: Option<reqwest::Identity>,
) -> reqwest::Client {
    let mut b = reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .use_rustls_tls()
        .resolve("localhost", addr)
        .timeout(Duration::from_secs(20));
    for ca in cas {
        b = b.add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes()).unwrap());
    }
    b = if h2 { b.http2_prior_knowledge() } else { b.http1_only() };
    if let Some(id) = identity {
        b = b.identity(id);
    }
    b.build().unwrap()
}

/// POST a JSON body to a route.
pub async fn post(client: &reqwest::Client, url: &str, body: impl Into<reqwest::Body>) -> reqwest::Response {
    client.post(url).header("content-type", "application/json").body(body).send().await.unwrap()
}

/// A v1 AdmissionReview wrapping `object` as a CREATE of `group`/`kind`.
pub fn review(uid: &str, group: &str, kind: &str, object: serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": {"group": group, "version": "v1", "kind": kind},
            "resource": {"group": group, "version": "v1", "resource": format!("{}s", kind.to_lowercase())},
            "name": object.pointer("/metadata/name").cloned().unwrap_or(serde_json::Value::Null),
            "namespace": "default",
            "operation": "CREATE",
            "userInfo": {"username": "tester"},
            "object": object,
            "oldObject": null,
            "dryRun": false
        }
    })
}

/// Run one rule fixture folder (`tests/fixtures/rules/CVN-xxx/`): its config, `input.yaml`,
/// and when present `base.yaml` (the previous versions: the input is judged as an update of
/// them) and `context/` (the cluster's objects).
pub fn run_rule_fixture(dir: &Path) -> covenant::report::Report {
    use covenant::check::{check_with_base, Base, Source};
    let config = Config::load(&dir.join("covenant.yaml")).unwrap();
    let engine = covenant::engine::Engine::new(&config);
    let text = std::fs::read_to_string(dir.join("input.yaml")).unwrap();
    let base = std::fs::read_to_string(dir.join("base.yaml"))
        .ok()
        .map(|text| Base::from_sources(&[Source { name: "base.yaml".into(), text }]).unwrap().complete());
    let context = dir.join("context");
    let cluster: Box<dyn covenant::cluster::ClusterView> = if context.is_dir() {
        Box::new(covenant::cluster::OfflineCluster::load_dir(&context).unwrap())
    } else {
        Box::new(EmptyCluster)
    };
    check_with_base(&engine, cluster.as_ref(), &[Source { name: "input.yaml".into(), text }], base.as_ref())
}

/// A document as an item of a list document: its lines indented under `- `.
pub fn as_item(doc: &str) -> String {
    doc.lines().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n").replacen("  ", "- ", 1)
}

/// A TLS connection to `addr` trusting `ca_pem`, offering `alpn`, handshake done.
pub async fn tls_to(
    addr: std::net::SocketAddr,
    ca_pem: &str,
    alpn: Vec<Vec<u8>>,
) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    let mut roots = rustls::RootCertStore::empty();
    use rustls_pki_types::pem::PemObject;
    for cert in rustls_pki_types::CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let mut config =
        rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
    config.alpn_protocols = alpn;
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    connector.connect("localhost".try_into().unwrap(), tcp).await.unwrap()
}

/// A TLS connection to `addr` trusting `ca_pem` that negotiated HTTP/2, handshake done.
pub async fn tls_h2(
    addr: std::net::SocketAddr,
    ca_pem: &str,
) -> tokio_rustls::client::TlsStream<tokio::net::TcpStream> {
    tls_to(addr, ca_pem, vec![b"h2".to_vec()]).await
}

/// A `covenant serve` process, killed when dropped.
pub struct Process(pub std::process::Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A loopback port free when asked.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}
