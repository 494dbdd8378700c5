//! Denials handed to the leader, so that every write covenant makes to the cluster comes from
//! one replica. The API server sends a review to whichever replica its Service picks; a
//! replica that does not lead hands the Events its denials call for to the leader, which
//! writes them under its own limits (one per object and rule a minute, one overall rate for
//! the whole deployment) — so three replicas denying one object tell its owner once, not three
//! times under three reporting instances.
//!
//! The leader names where it is reached in its Lease (`covenant.dev/peer-address`, see
//! `cluster::lease`); the others connect there, to the peer listener (`--peer-listen`, port
//! 8444), over TLS 1.3 where **both ends present covenant's serving key pair and accept only
//! that very certificate**: whoever holds the Secret's private key is a covenant replica (it
//! could already impersonate the webhook), and nobody else gets a request through — neither a
//! pod that reaches the port nor one holding any other certificate. No CA, name or token is
//! involved, so nothing else in the cluster is trusted. While a rotated pair reaches the
//! replicas at different moments (the kubelet refreshes each pod's Secret volume on its own
//! schedule), their certificates differ and handing fails; what fails is counted in
//! `covenant_events_total{result="failed"}` and the denial itself was answered all the same.
//!
//! The listener answers one route, `POST /peer/v0/events`: a JSON array of at most 64 events
//! (`regarding`, `reason`, `note`, `action`), 256 KiB at most, each member known; a replica
//! that does not lead answers 503 and writes nothing. At most 16 connections at once, each
//! closed after 30 s.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;
use k8s_openapi::api::core::v1::ObjectReference;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::ResolvesClientCert;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls::{ClientConfig, DigitallySignedStruct, DistinguishedName, ServerConfig, SignatureScheme};
use serde::{Deserialize, Serialize};
use tokio::net::{TcpListener, TcpStream};

use super::Tls;
use crate::cluster::events::{EventSink, Leader, Pending, HAND_BATCH as BATCH};
use crate::cluster::lease::Leadership;

/// The one route the peer listener answers.
pub const PATH: &str = "/peer/v0/events";
/// A hand's body, at most.
const BODY_LIMIT: usize = 256 * 1024;
/// Peer connections served at once; more are closed at once.
const CONNECTIONS: usize = 16;
/// How long a hand may take, from connecting to the leader's answer.
const HAND_TIMEOUT: Duration = Duration::from_secs(5);
/// How long one peer connection may live.
const CONNECTION_TIMEOUT: Duration = Duration::from_secs(30);

/// One event as handed to the leader.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Told {
    regarding: ObjectReference,
    reason: String,
    note: String,
    action: String,
}

/// What covenant did, as an Event's `action` names it.
fn action(name: &str) -> Option<&'static str> {
    ["Denied", "Audited"].into_iter().find(|a| *a == name)
}

/// Both ends' TLS: present the serving pair, accept only the very same certificate.
struct Pinned {
    tls: Arc<Tls>,
    provider: Arc<CryptoProvider>,
}

impl fmt::Debug for Pinned {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Pinned(covenant's serving certificate)")
    }
}

impl Pinned {
    fn new(tls: &Arc<Tls>) -> Arc<Pinned> {
        Arc::new(Pinned { tls: tls.clone(), provider: super::tls::provider() })
    }

    /// Whether `presented` is the certificate this replica serves now.
    fn matches(&self, presented: &CertificateDer<'_>) -> Result<(), rustls::Error> {
        let ours = self.tls.certified();
        if ours.cert.first().is_some_and(|c| c.as_ref() == presented.as_ref()) {
            Ok(())
        } else {
            Err(rustls::Error::InvalidCertificate(rustls::CertificateError::ApplicationVerificationFailure))
        }
    }

    fn tls12(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn tls13(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

impl ClientCertVerifier for Pinned {
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        self.matches(end_entity).map(|()| ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.tls12(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.tls13(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.schemes()
    }
}

impl ServerCertVerifier for Pinned {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.matches(end_entity).map(|()| ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.tls12(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.tls13(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.schemes()
    }
}

impl ResolvesClientCert for Pinned {
    fn resolve(&self, _hints: &[&[u8]], _schemes: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        Some(self.tls.certified())
    }

    fn has_certs(&self) -> bool {
        true
    }
}

impl ResolvesServerCert for Pinned {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.tls.certified())
    }
}

/// The peer listener's TLS: TLS 1.3, the serving pair, a client certificate required and
/// accepted only if it is the serving one.
pub fn server_config(tls: &Arc<Tls>) -> Result<Arc<ServerConfig>, rustls::Error> {
    let pinned = Pinned::new(tls);
    let mut config = ServerConfig::builder_with_provider(pinned.provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .with_client_cert_verifier(pinned.clone())
        .with_cert_resolver(pinned);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// A replica's TLS towards the leader: the serving pair as its client certificate, the
/// leader's accepted only if it is the same.
pub fn client_config(tls: &Arc<Tls>) -> Result<Arc<ClientConfig>, rustls::Error> {
    let pinned = Pinned::new(tls);
    let mut config = ClientConfig::builder_with_provider(pinned.provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])?
        .dangerous()
        .with_custom_certificate_verifier(pinned.clone())
        .with_client_cert_resolver(pinned);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// How a replica that does not lead hands its events to the one that does.
#[derive(Clone)]
pub struct Relay {
    leadership: Leadership,
    config: Arc<ClientConfig>,
}

impl fmt::Debug for Relay {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Relay").field("leadership", &self.leadership).finish_non_exhaustive()
    }
}

impl Relay {
    /// Hand events to whoever `leadership` finds leading, over `tls`'s pair.
    pub fn new(leadership: Leadership, tls: &Arc<Tls>) -> Result<Relay, rustls::Error> {
        Ok(Relay { leadership, config: client_config(tls)? })
    }

    async fn hand_over(&self, events: &[Pending]) -> Result<(), String> {
        let address = self
            .leadership
            .leader_address()
            .ok_or_else(|| "no leader is known, or it named no peer address".to_string())?;
        let told: Vec<Told> = events
            .iter()
            .map(|e| Told {
                regarding: e.regarding.clone(),
                reason: e.reason.clone(),
                note: e.note.clone(),
                action: e.action.to_string(),
            })
            .collect();
        let body = serde_json::to_vec(&told).map_err(|e| e.to_string())?;
        match tokio::time::timeout(HAND_TIMEOUT, self.post(&address, body)).await {
            Ok(done) => done.map_err(|e| format!("the leader at {address}: {e}")),
            Err(_) => Err(format!("the leader at {address} did not answer within {HAND_TIMEOUT:?}")),
        }
    }

    async fn post(&self, address: &str, body: Vec<u8>) -> Result<(), String> {
        let host = address.rsplit_once(':').map_or(address, |(h, _)| h);
        let host = host.trim_start_matches('[').trim_end_matches(']');
        let name = ServerName::try_from(host.to_string()).map_err(|e| format!("not a host: {e}"))?;
        let tcp = TcpStream::connect(address).await.map_err(|e| e.to_string())?;
        let tls = tokio_rustls::TlsConnector::from(self.config.clone())
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS: {e}"))?;
        let (mut send, connection) =
            hyper::client::conn::http1::handshake(TokioIo::new(tls)).await.map_err(|e| e.to_string())?;
        let driving = tokio::spawn(connection);
        let request = Request::post(PATH)
            .header(http::header::HOST, address)
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        let answer = send.send_request(request).await.map_err(|e| e.to_string());
        let outcome = match answer {
            Ok(response) if response.status().is_success() => Ok(()),
            Ok(response) => {
                let status = response.status();
                let text = Limited::new(response.into_body(), 4096)
                    .collect()
                    .await
                    .map(|b| String::from_utf8_lossy(&b.to_bytes()).into_owned())
                    .unwrap_or_default();
                Err(format!("answered {status}: {}", text.trim()))
            }
            Err(e) => Err(e),
        };
        driving.abort();
        outcome
    }
}

impl Leader for Relay {
    fn leading(&self) -> bool {
        self.leadership.leading()
    }

    fn hand<'a>(&'a self, events: &'a [Pending]) -> futures_util::future::BoxFuture<'a, Result<(), String>> {
        Box::pin(self.hand_over(events))
    }
}

/// Serve the peer route on `listener` with `config` until the task is dropped: events handed
/// by the other replicas go to `sink` while `leadership` says this replica leads.
pub async fn serve(
    listener: TcpListener,
    config: Arc<ServerConfig>,
    sink: EventSink,
    leadership: Leadership,
) {
    let acceptor = tokio_rustls::TlsAcceptor::from(config);
    let open = Arc::new(tokio::sync::Semaphore::new(CONNECTIONS));
    loop {
        let Ok((tcp, from)) = listener.accept().await else {
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let Ok(permit) = open.clone().try_acquire_owned() else {
            continue;
        };
        let (acceptor, sink, leadership) = (acceptor.clone(), sink.clone(), leadership.clone());
        tokio::spawn(async move {
            let _permit = permit;
            let served = tokio::time::timeout(CONNECTION_TIMEOUT, async {
                let tls = match acceptor.accept(tcp).await {
                    Ok(tls) => tls,
                    Err(e) => {
                        tracing::debug!(%from, error = %e, "a peer connection was refused at the handshake");
                        return;
                    }
                };
                let service = hyper::service::service_fn(move |request| {
                    let (sink, leadership) = (sink.clone(), leadership.clone());
                    async move { Ok::<_, std::convert::Infallible>(answer(request, &sink, &leadership).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
            let _ = served.await;
        });
    }
}

/// Answer one request on the peer listener.
async fn answer<B>(request: Request<B>, sink: &EventSink, leadership: &Leadership) -> Response<Full<Bytes>>
where
    B: http_body::Body,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let say = |status: StatusCode, text: String| {
        let mut response = Response::new(Full::new(Bytes::from(text)));
        *response.status_mut() = status;
        response
    };
    if request.uri().path() != PATH {
        return say(StatusCode::NOT_FOUND, format!("the peer listener answers only {PATH}"));
    }
    if request.method() != Method::POST {
        return say(StatusCode::METHOD_NOT_ALLOWED, format!("{PATH} takes POST"));
    }
    if !leadership.leading() {
        return say(StatusCode::SERVICE_UNAVAILABLE, "this replica does not lead".into());
    }
    let body = match Limited::new(request.into_body(), BODY_LIMIT).collect().await {
        Ok(body) => body.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => {
            let text = format!("a hand of events is {BODY_LIMIT} bytes at most");
            return say(StatusCode::PAYLOAD_TOO_LARGE, text);
        }
        Err(e) => return say(StatusCode::BAD_REQUEST, format!("the body could not be read: {e}")),
    };
    let told: Vec<Told> = match serde_json::from_slice(&body) {
        Ok(told) => told,
        Err(e) => return say(StatusCode::BAD_REQUEST, format!("{PATH}: not an array of events: {e}")),
    };
    if told.len() > BATCH {
        return say(
            StatusCode::BAD_REQUEST,
            format!("{} events handed at once; {BATCH} at most", told.len()),
        );
    }
    let mut pending = Vec::with_capacity(told.len());
    for (i, t) in told.into_iter().enumerate() {
        let Some(action) = action(&t.action) else {
            return say(
                StatusCode::BAD_REQUEST,
                format!("/{i}/action: found {:?}, expected \"Denied\" or \"Audited\"", t.action),
            );
        };
        pending.push(Pending { regarding: t.regarding, reason: t.reason, note: t.note, action });
    }
    let n = pending.len();
    for event in pending {
        sink.emit(event);
    }
    say(StatusCode::ACCEPTED, format!("{{\"accepted\":{n}}}"))
}

#[cfg(test)]
mod tests {
    use super::action;

    #[test]
    fn only_the_actions_covenant_takes_are_accepted() {
        assert_eq!(action("Denied"), Some("Denied"));
        assert_eq!(action("Audited"), Some("Audited"));
        assert_eq!(action("denied"), None);
        assert_eq!(action("Deleted"), None);
    }
}
