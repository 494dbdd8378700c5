//! `covenant serve`: the webhook and admin listeners, with `--dev` certificates and sample
//! reviews, and the open-file limit the connections fit within.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context as _};
use clap::Args;

use super::{load_cluster, load_config};
use crate::cluster::ClusterView;
use crate::telemetry::LogFormat;

/// `covenant serve`
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Config file; default: the embedded default.
    #[arg(long, env = "COVENANT_CONFIG")]
    pub config: Option<PathBuf>,
    /// Webhook (HTTPS) address [default: 0.0.0.0:8443, or 127.0.0.1:8443 with --dev].
    #[arg(long, env = "COVENANT_LISTEN")]
    pub listen: Option<SocketAddr>,
    /// Admin (HTTP) address, for probes and Prometheus: `/livez`, `/readyz`, `/metrics`
    /// [default: 0.0.0.0:8080, or 127.0.0.1:8080 with --dev].
    #[arg(long, env = "COVENANT_ADMIN_LISTEN")]
    pub admin_listen: Option<SocketAddr>,
    /// Read API (HTTP) address: `/api/v0/{status,compare,upgrade,audit}`, which name
    /// namespaces, objects and their findings. On the pod's loopback by default, so only
    /// `kubectl port-forward` reaches it (the API server authorizes `pods/portforward`)
    /// [default: 127.0.0.1:8081]. Bind it elsewhere only behind an authenticating proxy.
    #[arg(long, env = "COVENANT_API_LISTEN")]
    pub api_listen: Option<SocketAddr>,
    /// Serving certificate (PEM chain); reloaded when it changes.
    #[arg(long, env = "COVENANT_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// Serving key (PEM); reloaded when it changes.
    #[arg(long, env = "COVENANT_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Require apiserver client certificates chained to this CA (PEM).
    #[arg(long, env = "COVENANT_CLIENT_CA")]
    pub client_ca: Option<PathBuf>,
    /// Development mode: embedded config, a generated CA and certificate, loopback only,
    /// and a printed curl command that sends a sample review.
    #[arg(long, conflicts_with_all = ["tls_cert", "tls_key"])]
    pub dev: bool,
    /// With --dev: where to write the generated certificates [default: a temp directory].
    #[arg(long, requires = "dev")]
    pub dev_cert_dir: Option<PathBuf>,
    /// Use no cluster state: rules that need it say they could not look (the default with
    /// --dev). Without it the server watches the cluster it runs in (or the kubeconfig's).
    #[arg(long)]
    pub offline: bool,
    /// Objects (YAML/JSON files) to use as the cluster's state instead of a live cluster.
    #[arg(long)]
    pub context: Option<PathBuf>,
    /// How often to check the certificate files for a change.
    #[arg(long, default_value = "2s", value_parser = humantime::parse_duration)]
    pub tls_reload_interval: Duration,
    /// After SIGTERM, keep serving this long with readiness down.
    #[arg(long, default_value = "0s", value_parser = humantime::parse_duration)]
    pub drain_delay: Duration,
    /// How long in-flight requests may take to finish at shutdown.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub shutdown_grace: Duration,
    /// How long a client may take to send a request's body (a slow one is answered 408).
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub read_timeout: Duration,
    /// How long a connection (HTTP/1.1 or HTTP/2, either listener) may sit without a request,
    /// or take to send a request head, before it is closed; keep it above the apiserver's
    /// 90 s idle timeout.
    #[arg(long, default_value = "120s", value_parser = humantime::parse_duration)]
    pub idle_timeout: Duration,
    /// Webhook connections open at once, at most (further ones wait in the kernel's backlog);
    /// lowered to fit the open-file limit.
    #[arg(long, default_value_t = 1024)]
    pub max_connections: usize,
    /// Worker threads [default: one per core].
    #[arg(long, env = "COVENANT_THREADS")]
    pub threads: Option<usize>,
    /// Log format.
    #[arg(long, value_enum, default_value_t = LogFormat::Plain, env = "COVENANT_LOG_FORMAT")]
    pub log_format: LogFormat,
    /// Log level or filter (RUST_LOG overrides).
    #[arg(long, default_value = "info", env = "COVENANT_LOG_LEVEL")]
    pub log_level: String,
    /// Re-check the objects already in the cluster this often (such as `10m`), with the
    /// webhook's engine; findings go to `covenant_audit_findings` and `/api/v0/audit` on the
    /// admin listener. Off unless set.
    #[arg(long, value_parser = humantime::parse_duration, env = "COVENANT_AUDIT_INTERVAL")]
    pub audit_interval: Option<Duration>,
    /// Objects the audit fetches and judges per page.
    #[arg(long, default_value_t = 100, requires = "audit_interval")]
    pub audit_page_size: usize,
    /// Objects the audit judges per second at most (0: no limit).
    #[arg(long, default_value_t = 50.0, requires = "audit_interval")]
    pub audit_rate: f64,
    /// Findings `/api/v0/audit` lists in full (its counts always cover all of them).
    #[arg(long, default_value_t = 100, requires = "audit_interval")]
    pub audit_summary_limit: usize,
    /// The namespace of the leader Lease (`covenant-leader`): against a cluster, only the
    /// replica holding it audits and writes Events [default: $POD_NAMESPACE, else
    /// covenant-system]. The replica's identity is $POD_NAME (else $HOSTNAME).
    #[arg(long, env = "POD_NAMESPACE", default_value = "covenant-system")]
    pub leader_election_namespace: String,
    /// Audit and write Events on this replica without electing a leader (a single replica;
    /// two would both audit).
    #[arg(long)]
    pub no_leader_election: bool,
    /// Where the replicas that do not lead hand their denials' Events to the one that does:
    /// TLS 1.3 where both ends must present the serving key pair (against a cluster, with
    /// leader election and Events on).
    #[arg(long, default_value = "0.0.0.0:8444")]
    pub peer_listen: SocketAddr,
    /// The host (the pod's IP) the other replicas reach this one's peer listener at, named in
    /// the leader Lease while this replica leads [default: $POD_IP].
    #[arg(long, env = "POD_IP")]
    pub peer_host: Option<String>,
    /// Write no Events on objects (by default a denial at admission, never a dry run, and an
    /// audit finding are told to the object's owners as `events.k8s.io/v1` Events, rate-limited).
    #[arg(long)]
    pub no_events: bool,
}

/// Descriptors kept for everything but webhook connections: the admin listener's
/// connections, the certificate files, the API server's, the log.
const RESERVED_FILES: usize = 256;

/// The open-file limit as the binary found and raised it at start: (soft before, soft
/// after, hard). The library forbids `unsafe`, so the binary makes the system calls.
static OPEN_FILES: std::sync::OnceLock<(u64, u64, u64)> = std::sync::OnceLock::new();

/// Record the open-file limit the binary set (see `OPEN_FILES`).
pub fn open_files_raised(before: u64, soft: u64, hard: u64) {
    let _ = OPEN_FILES.set((before, soft, hard));
}

/// The soft open-file limit, logged with how it was raised.
fn raise_open_files() -> Option<(u64, u64)> {
    let (before, soft, hard) = *OPEN_FILES.get()?;
    tracing::info!(soft_before = before, soft, hard, "open-file limit raised to the hard limit");
    Some((soft, hard))
}

/// The connection cap, lowered so that webhook connections can never take the descriptors
/// probes and lookups need.
fn fit_connections(wanted: usize) -> usize {
    match raise_open_files() {
        Some((soft, _)) => {
            let room = usize::try_from(soft).unwrap_or(usize::MAX).saturating_sub(RESERVED_FILES).max(16);
            if room < wanted {
                tracing::warn!(wanted, cap = room, "--max-connections lowered to fit the open-file limit");
            }
            wanted.min(room)
        }
        None => wanted,
    }
}

pub(super) fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    crate::telemetry::init(args.log_format, &args.log_level);
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    runtime.enable_all();
    if let Some(n) = args.threads {
        runtime.worker_threads(n.max(1));
    }
    let runtime = runtime.build().context("cannot start the async runtime")?;
    runtime.block_on(serve_async(args))?;
    Ok(ExitCode::SUCCESS)
}

const SAMPLE_REVIEW: &str = include_str!("../../tests/fixtures/admission/kube-rs/v1-create-pod-gke.json");
/// A review covenant refuses: a launcher Application applied as a custom resource, with
/// `replicaz` where its component type declares `replicas` (CVN-102).
const DENIED_REVIEW: &str = include_str!("../../examples/reviews/denied-application.json");

/// Read covenant's registered webhook configurations once, in the background, and warn of
/// every validating entry that sends kinds no family judges, and of mutating entries that
/// disagree with whether covenant patches (`server::registration`). What cannot be read is
/// said at info: the check is advice, never a reason not to serve.
fn check_registration(client: kube::Client, judged: Vec<(String, String)>, patches: bool) {
    tokio::spawn(async move {
        if let Some(validating) =
            listed(kube::Api::all(client.clone()), "validatingwebhookconfigurations").await
        {
            for line in crate::server::registration::unjudged(&validating, &judged) {
                tracing::warn!("{line}");
            }
        }
        if let Some(mutating) = listed(kube::Api::all(client), "mutatingwebhookconfigurations").await {
            if let Some(line) = crate::server::registration::unstamped(&mutating, patches) {
                tracing::warn!("{line}");
            }
        }
    });
}

/// Every object of one kind of webhook configuration (`plural`), within 30 s; what cannot be
/// read is said at info, and `None`.
async fn listed<K>(api: kube::Api<K>, plural: &str) -> Option<Vec<K>>
where
    K: Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    let params = kube::api::ListParams::default();
    match tokio::time::timeout(Duration::from_secs(30), api.list(&params)).await {
        Ok(Ok(list)) => Some(list.items),
        Ok(Err(e)) => {
            tracing::info!(error = %e, "cannot read the {plural} to check what they send covenant (grant list on admissionregistration.k8s.io {plural})");
            None
        }
        Err(_) => {
            tracing::info!(
                "the {plural} could not be read within 30 s; what they send covenant is not checked"
            );
            None
        }
    }
}

/// The Lease the replicas elect their leader with.
const LEADER_LEASE: &str = "covenant-leader";

async fn serve_async(args: ServeArgs) -> anyhow::Result<()> {
    let config = load_config(args.config.as_ref())?;
    let (listen, admin_listen) = if args.dev {
        (
            args.listen.unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8443))),
            args.admin_listen.unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8080))),
        )
    } else {
        (
            args.listen.unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 8443))),
            args.admin_listen.unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 8080))),
        )
    };
    let (cert, dev_dir) = if args.dev {
        let dir = args.dev_cert_dir.clone().unwrap_or_else(|| std::env::temp_dir().join("covenant-dev"));
        let names = vec!["localhost".to_string(), listen.ip().to_string()];
        let certs = crate::certs::DevCerts::generate(&names, 30)?;
        let written = certs.write(&dir)?;
        for (file, text) in [("sample-review.json", SAMPLE_REVIEW), ("denied-review.json", DENIED_REVIEW)] {
            std::fs::write(dir.join(file), text)
                .with_context(|| format!("cannot write {}", dir.display()))?;
        }
        (crate::server::CertPaths { cert: written.cert, key: written.key }, Some(dir))
    } else {
        match (&args.tls_cert, &args.tls_key) {
            (Some(c), Some(k)) => (crate::server::CertPaths { cert: c.clone(), key: k.clone() }, None),
            _ => bail!("--tls-cert and --tls-key must be set (or run with --dev)"),
        }
    };
    // The client of every write and one-off read beside the live view's own: the leader
    // Lease, Events, reports, the registration check.
    let mut writer: Option<kube::Client> = None;
    let cluster: Arc<dyn ClusterView> = match (&args.context, args.offline || args.dev) {
        (Some(dir), _) => load_cluster(Some(dir))?,
        (None, true) => {
            if args.dev && !args.offline {
                tracing::info!(
                    "--dev serves without cluster state (as --offline); rules that need it say so"
                );
            }
            load_cluster(None)?
        }
        (None, false) => {
            let kube_config = kube::Config::infer().await.context(
                "no cluster to watch (neither in-cluster nor a kubeconfig); run with --offline to serve without cluster state",
            )?;
            let following =
                crate::cluster::live::Following { watch_timeout: config.watch_timeout, ..Default::default() };
            writer =
                Some(kube::Client::try_from(kube_config.clone()).context("cannot build the cluster client")?);
            // Custom resources judged at admission need their definitions at hand.
            let mut kinds = config.cluster_kinds();
            if config.custom_resources.admission {
                kinds.extend(config.definition_kinds());
            }
            Arc::new(crate::cluster::live::LiveCluster::connect(kube_config, kinds, following)?)
        }
    };

    let mut state =
        crate::server::AppState::new(&config, cluster.clone()).context("cannot register metrics")?;
    if let Some(client) = &writer {
        check_registration(client.clone(), state.engine.judged_kinds(), state.patches());
    }
    if let (Some(client), false) = (&writer, args.no_events) {
        let instance = std::env::var("POD_NAME").ok();
        state.events = Some(crate::cluster::events::start(
            client.clone(),
            instance,
            Default::default(),
            state.metrics.clone(),
        ));
    }
    // One leader among the replicas, chosen by a Lease: it audits and writes every Event.
    let mut elector = None;
    let leadership = match (&writer, args.no_leader_election) {
        (Some(client), false) if args.audit_interval.is_some() || state.events.is_some() => {
            let identity = std::env::var("POD_NAME")
                .or_else(|_| std::env::var("HOSTNAME"))
                .unwrap_or_else(|_| format!("covenant-{}", std::process::id()));
            let api = kube::Api::namespaced(client.clone(), &args.leader_election_namespace);
            let (leadership, task) =
                crate::cluster::lease::elect(api.clone(), LEADER_LEASE, &identity, Default::default());
            tracing::info!(%identity, namespace = %args.leader_election_namespace, lease = LEADER_LEASE, "electing the replica that audits and writes Events");
            elector = Some((task, api, leadership.clone()));
            Some(leadership)
        }
        _ => None,
    };
    let audit = match args.audit_interval {
        Some(interval) => {
            let options = crate::audit::Options {
                interval,
                page_size: args.audit_page_size.max(1),
                rate: args.audit_rate.max(0.0),
                summary_limit: args.audit_summary_limit,
                kinds: config.cluster_kinds(),
                lookup_budget: config.lookup_budget,
            };
            let auditor = crate::audit::Auditor::new(
                state.engine.clone(),
                state.cluster.clone(),
                state.metrics.clone(),
                options,
            );
            let auditor = match state.events.clone() {
                Some(sink) => auditor.with_events(sink),
                None => auditor,
            };
            // The run's findings as OpenReports (when the CRDs are served), on the leader.
            let auditor = match &writer {
                Some(client) => auditor.with_reports(
                    crate::cluster::reports::Reports::new(client.clone()),
                    tokio::runtime::Handle::current(),
                ),
                None => auditor,
            };
            let auditor = match &leadership {
                Some(leadership) => auditor.led_by(leadership.clone()),
                None => auditor,
            };
            state.audit = Some(auditor.status());
            Some(auditor.spawn().context("cannot start the audit")?)
        }
        None => None,
    };
    let api_listen = args.api_listen.unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8081)));
    if !api_listen.ip().is_loopback() {
        tracing::warn!(%api_listen, "the read API is bound beyond loopback: it names namespaces, objects and findings to whoever reaches it; put an authenticating proxy in front of it");
    }
    let options = crate::server::Options {
        listen,
        admin_listen,
        api_listen,
        cert,
        client_ca: args.client_ca.clone(),
        reload_interval: args.tls_reload_interval,
        drain_delay: args.drain_delay,
        shutdown_grace: args.shutdown_grace,
        read_timeout: args.read_timeout,
        idle_timeout: args.idle_timeout,
        handshake_timeout: Duration::from_secs(10),
        max_connections: fit_connections(args.max_connections),
        peers: leadership.map(|leadership| crate::server::Peers {
            listen: args.peer_listen,
            host: args.peer_host.clone(),
            leadership,
        }),
    };
    let bound = crate::server::bind(options, state).await?;
    tracing::info!(config = %config.source, "config loaded");
    if let Some(dir) = dev_dir {
        println!("covenant {} (dev) serving", env!("CARGO_PKG_VERSION"));
        println!("  webhook  https://{}/api/v0/validate", bound.webhook_addr);
        println!("  admin    http://{}/readyz  /metrics", bound.admin_addr);
        println!("  api      http://{}/api/v0/status", bound.api_addr);
        println!("  console  http://{}/platform/", bound.api_addr);
        println!("  certificates in {}", dir.display());
        let curl = |file: &str| {
            format!(
                "curl -s --cacert {ca} -H 'Content-Type: application/json' --data @{sample} 'https://localhost:{port}/api/v0/validate?timeout=10s'",
                ca = dir.join("ca.crt").display(),
                sample = dir.join(file).display(),
                port = bound.webhook_addr.port()
            )
        };
        println!();
        println!("send a review it allows (a Pod: no rule concerns it, so it is not even parsed):");
        println!("  {}", curl("sample-review.json"));
        println!();
        println!("send a review it refuses (a launcher Application whose component says `replicaz`):");
        println!("  {}", curl("denied-review.json"));
        println!();
        println!("the answer is an AdmissionReview with \"allowed\": false; kubectl would print its");
        println!("status.message, one line per finding:");
        println!(
            "  CVN-102 /spec/components/0/properties/replicaz: property \"replicaz\" is not declared by"
        );
        println!("  component \"web\" (type \"webservice\"); expected one of: … replicas …");
        println!("status.details.causes holds each finding with its field path; `covenant explain CVN-102`");
        println!("says what the rule checks and how to fix it; `covenant check FILE` gives the same verdict");
        println!("offline, in CI.");
    }
    // At shutdown the leader gives up its Lease at once (client-go's ReleaseOnCancel), so
    // another replica audits and writes Events within its next try, not after the lease.
    let shutdown = async move {
        crate::server::shutdown_signal().await;
        if let Some((task, api, leadership)) = elector {
            task.abort();
            let released = crate::cluster::lease::release(&api, LEADER_LEASE, &leadership);
            match tokio::time::timeout(Duration::from_secs(2), released).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "could not release the leader Lease; another replica takes it once it runs out")
                }
                Err(_) => tracing::warn!(
                    "the leader Lease was not released within 2 s; another replica takes it once it runs out"
                ),
            }
        }
    };
    bound.run(shutdown).await;
    if let Some(audit) = audit {
        // The walk stops between pages; joining waits at most for one object's lookups.
        tokio::task::spawn_blocking(move || audit.stop()).await.ok();
    }
    Ok(())
}
