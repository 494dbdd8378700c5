//! TLS for the webhook listener: rustls with TLS 1.2+, ALPN h2 and http/1.1, a certificate
//! resolver whose key pair is swapped atomically when the files change (cert-manager
//! rotates a Secret by swapping a symlink), and optional client-certificate authentication
//! of the apiserver.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use rustls::server::{ClientHello, ResolvesServerCert, WebPkiClientVerifier};
use rustls::sign::CertifiedKey;
use rustls::{RootCertStore, ServerConfig};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::metrics::Metrics;

/// TLS setup that failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A file did not hold what was expected.
    #[error("{path}: {reason}")]
    Invalid {
        /// The path.
        path: String,
        /// What was wrong.
        reason: String,
    },
}

/// Where the serving certificate and key live.
#[derive(Clone, Debug)]
pub struct CertPaths {
    /// PEM certificate chain.
    pub cert: PathBuf,
    /// PEM private key.
    pub key: PathBuf,
}

fn read(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|source| Error::Read { path: path.display().to_string(), source })
}

/// The crypto every TLS config of covenant's uses (ring).
pub(crate) fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A loaded key pair, and the bytes it was loaded from (to notice a change).
struct Loaded {
    key: Arc<CertifiedKey>,
    bytes: (Vec<u8>, Vec<u8>),
    not_after: Option<i64>,
    not_before: Option<i64>,
    /// The DNS names and IP addresses the leaf certificate covers.
    names: Vec<String>,
}

fn load(paths: &CertPaths) -> Result<Loaded, Error> {
    let cert_bytes = read(&paths.cert)?;
    let key_bytes = read(&paths.key)?;
    let invalid = |path: &Path, reason: String| Error::Invalid { path: path.display().to_string(), reason };
    let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&cert_bytes)
        .collect::<Result<_, _>>()
        .map_err(|e| invalid(&paths.cert, format!("not a PEM certificate chain: {e}")))?;
    if chain.is_empty() {
        return Err(invalid(&paths.cert, "no certificate found; expected a PEM CERTIFICATE block".into()));
    }
    let key = PrivateKeyDer::from_pem_slice(&key_bytes)
        .map_err(|e| invalid(&paths.key, format!("not a PEM private key: {e}")))?;
    let signing_key = provider()
        .key_provider
        .load_private_key(key)
        .map_err(|e| invalid(&paths.key, format!("unusable private key: {e}")))?;
    let certified = CertifiedKey::new(chain, signing_key);
    certified
        .keys_match()
        .map_err(|e| invalid(&paths.key, format!("key does not match the certificate: {e}")))?;
    let parsed = x509_parser::parse_x509_certificate(certified.cert[0].as_ref()).ok().map(|(_, c)| c);
    let not_after = parsed.as_ref().map(|c| c.validity().not_after.timestamp());
    let not_before = parsed.as_ref().map(|c| c.validity().not_before.timestamp());
    let mut names = Vec::new();
    if let Some(Ok(Some(san))) = parsed.as_ref().map(|c| c.subject_alternative_name()) {
        for n in &san.value.general_names {
            match n {
                x509_parser::extensions::GeneralName::DNSName(d) => names.push(d.to_string()),
                x509_parser::extensions::GeneralName::IPAddress(ip) => match ip.len() {
                    4 => names.push(std::net::Ipv4Addr::new(ip[0], ip[1], ip[2], ip[3]).to_string()),
                    16 => {
                        let mut b = [0u8; 16];
                        b.copy_from_slice(ip);
                        names.push(std::net::Ipv6Addr::from(b).to_string())
                    }
                    _ => {}
                },
                _ => {}
            }
        }
    }
    Ok(Loaded { key: Arc::new(certified), bytes: (cert_bytes, key_bytes), not_after, not_before, names })
}

/// Why a loaded pair must not replace the one in service: expired, not yet valid, or not
/// covering a name the serving certificate covers (clients reach covenant by those names).
fn unfit(loaded: &Loaded, serving: &[String], path: &Path) -> Option<Error> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let invalid = |reason: String| Some(Error::Invalid { path: path.display().to_string(), reason });
    let at = |t: i64| {
        humantime::format_rfc3339_seconds(
            std::time::UNIX_EPOCH + std::time::Duration::from_secs(t.max(0) as u64),
        )
    };
    if let Some(t) = loaded.not_after.filter(|t| *t <= now) {
        return invalid(format!("the certificate expired at {}; the one in service keeps serving", at(t)));
    }
    if let Some(t) = loaded.not_before.filter(|t| *t > now) {
        return invalid(format!(
            "the certificate is not valid before {}; the one in service keeps serving",
            at(t)
        ));
    }
    let missing: Vec<&String> = serving.iter().filter(|n| !loaded.names.contains(n)).collect();
    if !missing.is_empty() {
        let missing: Vec<&str> = missing.iter().map(|s| s.as_str()).collect();
        return invalid(format!(
            "the certificate does not cover {} that the one in service covers; it keeps serving",
            missing.join(", ")
        ));
    }
    None
}

/// Serves whichever key pair was loaded last.
#[derive(Debug)]
pub struct ReloadingResolver {
    current: ArcSwap<CertifiedKey>,
}

impl ResolvesServerCert for ReloadingResolver {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current.load_full())
    }
}

/// The serving TLS state: a rustls config whose certificate can be reloaded.
pub struct Tls {
    /// The rustls config, built once; rotation swaps the key inside the resolver.
    pub config: Arc<ServerConfig>,
    resolver: Arc<ReloadingResolver>,
    paths: CertPaths,
    last: std::sync::Mutex<(Vec<u8>, Vec<u8>)>,
    /// The names the certificate in service covers.
    names: std::sync::Mutex<Vec<String>>,
    /// The last refusal, so a file that stays broken is counted and logged once.
    refused: std::sync::Mutex<Option<String>>,
}

impl Tls {
    /// Load the certificate (failing fast) and build the server config.
    pub fn new(paths: CertPaths, client_ca: Option<&Path>, metrics: &Metrics) -> Result<Tls, Error> {
        let loaded = load(&paths)?;
        if let Some(t) = loaded.not_after {
            metrics.certificate_expiry.set(t as f64);
        }
        // A pair that is expired or not yet valid is served (a renewal is picked up as it is
        // written), but said loudly: the apiserver refuses the handshake until then, and every
        // review falls to its failure policy.
        if let Some(Error::Invalid { reason, .. }) = unfit(&loaded, &[], &paths.cert) {
            let reason = reason.split("; the one in service").next().unwrap_or(&reason).to_string();
            tracing::error!(
                cert = %paths.cert.display(),
                reason,
                "the serving certificate is not valid now: the apiserver will refuse every handshake until a valid one is written"
            );
            metrics.tls_reloads.with_label_values(&["failure"]).inc();
        }
        let resolver = Arc::new(ReloadingResolver { current: ArcSwap::new(loaded.key) });
        let builder = ServerConfig::builder_with_provider(provider())
            .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
            .map_err(|e| Error::Invalid { path: "tls".into(), reason: e.to_string() })?;
        let builder = match client_ca {
            None => builder.with_no_client_auth(),
            Some(ca) => {
                let bytes = read(ca)?;
                let mut roots = RootCertStore::empty();
                for cert in CertificateDer::pem_slice_iter(&bytes) {
                    let cert = cert.map_err(|e| Error::Invalid {
                        path: ca.display().to_string(),
                        reason: format!("not a PEM certificate: {e}"),
                    })?;
                    roots.add(cert).map_err(|e| Error::Invalid {
                        path: ca.display().to_string(),
                        reason: format!("unusable CA certificate: {e}"),
                    })?;
                }
                let verifier = WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider())
                    .build()
                    .map_err(|e| Error::Invalid { path: ca.display().to_string(), reason: e.to_string() })?;
                builder.with_client_cert_verifier(verifier)
            }
        };
        let mut config = builder.with_cert_resolver(resolver.clone());
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(Tls {
            config: Arc::new(config),
            resolver,
            paths,
            last: std::sync::Mutex::new(loaded.bytes),
            names: std::sync::Mutex::new(loaded.names),
            refused: std::sync::Mutex::new(None),
        })
    }

    /// The key pair in service now (it follows rotation).
    pub fn certified(&self) -> Arc<CertifiedKey> {
        self.resolver.current.load_full()
    }

    /// Re-read the files; swap the key pair if they changed, load, and are fit to serve.
    /// Returns whether a new pair is in service. A pair that cannot be read, does not load,
    /// is expired or not yet valid, or does not cover the names the serving one covers leaves
    /// the old one serving; each such refusal counts one `failure` (a file that stays broken
    /// counts once, not at every poll), and `Err` says why.
    pub fn reload(&self, metrics: &Metrics) -> Result<bool, Error> {
        let outcome = self.try_reload(metrics);
        let mut refused = self.refused.lock().unwrap_or_else(|p| p.into_inner());
        match &outcome {
            Err(e) => {
                // One attempt is one pair of files as written (or one way of failing to read
                // them): each pair refused counts once, whatever its message says, so a second
                // broken pair that fails the same way counts too.
                let attempt = match (read(&self.paths.cert), read(&self.paths.key)) {
                    (Ok(cert), Ok(key)) => {
                        use sha2::Digest;
                        let digest = sha2::Sha256::new().chain_update(&cert).chain_update(&key).finalize();
                        format!("{digest:x}")
                    }
                    _ => e.to_string(),
                };
                if refused.as_deref() == Some(attempt.as_str()) {
                    // Already counted and said.
                    return Ok(false);
                }
                *refused = Some(attempt);
                metrics.tls_reloads.with_label_values(&["failure"]).inc();
            }
            Ok(true) => *refused = None,
            Ok(false) => {}
        }
        outcome
    }

    fn try_reload(&self, metrics: &Metrics) -> Result<bool, Error> {
        let cert = read(&self.paths.cert)?;
        let key = read(&self.paths.key)?;
        {
            let last = self.last.lock().unwrap_or_else(|p| p.into_inner());
            if last.0 == cert && last.1 == key {
                return Ok(false);
            }
        }
        let loaded = load(&self.paths)?;
        let serving = self.names.lock().unwrap_or_else(|p| p.into_inner()).clone();
        if let Some(e) = unfit(&loaded, &serving, &self.paths.cert) {
            return Err(e);
        }
        self.resolver.current.store(loaded.key);
        // The expiry metric follows what is actually served.
        if let Some(t) = loaded.not_after {
            metrics.certificate_expiry.set(t as f64);
        }
        *self.last.lock().unwrap_or_else(|p| p.into_inner()) = loaded.bytes;
        *self.names.lock().unwrap_or_else(|p| p.into_inner()) = loaded.names;
        metrics.tls_reloads.with_label_values(&["success"]).inc();
        tracing::info!(cert = %self.paths.cert.display(), "serving certificate reloaded");
        Ok(true)
    }

    /// Poll the files every `interval` until the task is dropped.
    pub async fn watch(self: Arc<Self>, interval: Duration, metrics: Metrics) {
        let mut tick = tokio::time::interval(interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        tick.tick().await;
        loop {
            tick.tick().await;
            let me = self.clone();
            let m = metrics.clone();
            match tokio::task::spawn_blocking(move || me.reload(&m)).await {
                Ok(Ok(_)) => {}
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, "serving certificate not reloaded; the previous one stays in service")
                }
                Err(e) => tracing::error!(error = %e, "certificate reload task failed"),
            }
        }
    }
}
