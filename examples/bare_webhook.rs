//! The load bench's reference: a bare parse-and-allow webhook on covenant's own stack (axum,
//! hyper-util, rustls), with none of covenant's work. It reads the body, parses it into a
//! `serde_json::Value`, and allows with the same uid. Not a product; a measuring stick.
//!
//! With `--floor` it reads the body and allows without parsing it (the uid is found by a byte
//! search): what any webhook on this stack pays for TLS, HTTP and the body before it does any
//! work, so the load bench can tell covenant's work apart from the transport's.
//!
//! With `--inline-streams` it runs each HTTP/2 connection's streams on the connection's own
//! task, as covenant does (`covenant::server::Streams`), instead of a task each, and takes
//! DATA frames of up to 512 KiB, as covenant does: the same transport as covenant's, so that
//! what is left between the two is the work.
//!
//! `bare_webhook --cert F --key F --listen ADDR [--threads N] [--floor] [--inline-streams]`

use std::sync::Arc;

use axum::body::Bytes;
use axum::routing::post;
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

async fn validate(body: Bytes) -> ([(&'static str, &'static str); 1], Vec<u8>) {
    let review: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    let uid = review.pointer("/request/uid").cloned().unwrap_or_default();
    let out = serde_json::json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": uid, "allowed": true}
    });
    ([("content-type", "application/json")], serde_json::to_vec(&out).unwrap_or_default())
}

/// The floor: the body received whole, the uid found by its bytes, nothing parsed.
async fn floor(body: Bytes) -> ([(&'static str, &'static str); 1], Vec<u8>) {
    const UID: &[u8] = b"\"uid\":\"";
    let uid = body
        .windows(UID.len())
        .position(|w| w == UID)
        .map(|at| &body[at + UID.len()..])
        .and_then(|rest| rest.iter().position(|b| *b == b'"').map(|end| &rest[..end]))
        .unwrap_or_default();
    let mut out =
        br#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","response":{"uid":""#.to_vec();
    out.extend_from_slice(uid);
    out.extend_from_slice(br#"","allowed":true}}"#);
    ([("content-type", "application/json")], out)
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let cert = arg(&args, "--cert").expect("--cert");
    let key = arg(&args, "--key").expect("--key");
    let listen = arg(&args, "--listen").unwrap_or_else(|| "127.0.0.1:9443".into());
    let threads: usize = arg(&args, "--threads").and_then(|t| t.parse().ok()).unwrap_or(1);
    // Logging as covenant's server sets it up (`--log-level warn`, as the benches run it).
    // Without a subscriber, tracing hands every span the stack opens (h2 opens several for
    // each frame) to the `log` facade: about 12 K instructions an HTTP/2 request that no
    // webhook with a logger pays.
    covenant::telemetry::init(covenant::telemetry::LogFormat::Plain, "warn");
    let rt =
        tokio::runtime::Builder::new_multi_thread().worker_threads(threads).enable_all().build().unwrap();
    rt.block_on(async move {
        let chain: Vec<CertificateDer<'static>> =
            CertificateDer::pem_file_iter(&cert).unwrap().collect::<Result<_, _>>().unwrap();
        let key = PrivateKeyDer::from_pem_file(&key).unwrap();
        let mut config =
            rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .unwrap()
                .with_no_client_auth()
                .with_single_cert(chain, key)
                .unwrap();
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let handler = if args.iter().any(|a| a == "--floor") { post(floor) } else { post(validate) };
        let inline_streams = args.iter().any(|a| a == "--inline-streams");
        let app = Router::new().route("/api/v0/validate", handler);
        let listener = tokio::net::TcpListener::bind(&listen).await.unwrap();
        println!("listening {}", listener.local_addr().unwrap());
        // SIGTERM ends the process through `exit`, so a build instrumented to write a profile
        // when it exits writes it (docs/performance.md, profile-guided optimization).
        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).unwrap();
        tokio::spawn(async move {
            term.recv().await;
            std::process::exit(0);
        });
        loop {
            let Ok((tcp, _)) = listener.accept().await else { continue };
            let _ = tcp.set_nodelay(true);
            let (acceptor, app) = (acceptor.clone(), app.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else { return };
                let service = TowerToHyperService::new(app);
                if inline_streams {
                    let streams = covenant::server::Streams::default();
                    let mut builder = auto::Builder::new(streams.clone());
                    builder.http2().max_frame_size(512 * 1024);
                    let _ = streams.serve(builder.serve_connection(TokioIo::new(tls), service)).await;
                } else {
                    let builder = auto::Builder::new(TokioExecutor::new());
                    let _ = builder.serve_connection(TokioIo::new(tls), service).await;
                }
            });
        }
    });
}
