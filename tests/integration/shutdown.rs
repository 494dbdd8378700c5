//! Graceful shutdown: readiness drops first, in-flight requests finish, then the server
//! exits; and the binary does the same on SIGTERM.

use crate::common;

use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use common::dev::DevServer;
use common::{Setup, TestServer};
use serde_json::Value;

fn sample() -> Vec<u8> {
    std::fs::read(common::fixtures().join("admission/kyverno/03-update-pod.json")).unwrap()
}

/// A body that arrives in pieces over `total`, so its request is in flight that long.
fn slow_body(bytes: Vec<u8>, pieces: usize, total: Duration) -> reqwest::Body {
    let size = bytes.len().div_ceil(pieces);
    let chunks: Vec<Vec<u8>> = bytes.chunks(size).map(<[u8]>::to_vec).collect();
    let pause = total / pieces as u32;
    let stream = futures_util::stream::unfold(chunks.into_iter(), move |mut it| async move {
        let chunk = it.next()?;
        tokio::time::sleep(pause).await;
        Some((Ok::<_, std::io::Error>(chunk), it))
    });
    reqwest::Body::wrap_stream(stream)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_flight_requests_finish_and_readiness_drops_during_the_drain() {
    let mut server =
        TestServer::with(Setup { drain_delay: Duration::from_millis(600), ..Setup::default() }).await;
    let url = server.url("/api/v0/validate");
    let (h1, h2) = (server.h1(), server.h2());
    let in_flight: Vec<_> = [h1, h2]
        .into_iter()
        .map(|c| {
            let url = url.clone();
            tokio::spawn(async move {
                c.post(&url)
                    .header("content-type", "application/json")
                    .body(slow_body(sample(), 8, Duration::from_millis(1200)))
                    .send()
                    .await
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let stopped = server.shutdown();

    // Readiness drops at once; the webhook keeps answering through the drain delay.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let ready = reqwest::get(format!("http://{}/readyz", server.admin)).await.unwrap();
    assert_eq!(ready.status(), 503);
    assert!(ready.text().await.unwrap().contains("draining"));

    for request in in_flight {
        let resp = request.await.unwrap().expect("in-flight request failed");
        assert_eq!(resp.status(), 200);
        let body: Value = resp.json().await.unwrap();
        let sent: Value = serde_json::from_slice(&sample()).unwrap();
        assert_eq!(body["response"]["uid"], sent["request"]["uid"]);
    }
    tokio::time::timeout(Duration::from_secs(10), stopped).await.expect("server did not stop").unwrap();
    let after = server.h1().post(&url).header("content-type", "application/json").body(sample()).send().await;
    assert!(after.is_err(), "server still accepting after shutdown");
}

/// `covenant serve --dev` with certificates in `dir`, and its webhook address.
fn start_dev_with(dir: &std::path::Path, extra: &[&str]) -> (DevServer, std::net::SocketAddr) {
    let dev = DevServer::start(dir, extra);
    let webhook = dev.addr("webhook").parse().unwrap();
    (dev, webhook)
}

/// SIGTERM to the process, and its exit status within 15 s.
fn terminate(child: &mut std::process::Child) -> std::process::ExitStatus {
    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(code) = child.try_wait().unwrap() {
            return code;
        }
        assert!(std::time::Instant::now() < deadline, "covenant did not exit after SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A client that resets its connection while covenant answers (an apiserver that gave up on a
/// review) costs that connection, never the process: the binary keeps SIGPIPE ignored.
#[test]
fn a_client_resetting_its_connection_mid_answer_never_stops_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let (mut dev, webhook) = start_dev_with(dir.path(), &[]);
    let ca = std::fs::read(dir.path().join("ca.crt")).unwrap();
    let body = std::fs::read(common::fixtures().join("bench/crd-update-400k.json")).unwrap();
    let mut request = format!(
        "POST /api/v0/validate?timeout=10s HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(&body);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        use rustls_pki_types::pem::PemObject;
        use tokio::io::AsyncWriteExt;
        let mut roots = tokio_rustls::rustls::RootCertStore::empty();
        for cert in rustls_pki_types::CertificateDer::pem_slice_iter(&ca) {
            roots.add(cert.unwrap()).unwrap();
        }
        let provider = std::sync::Arc::new(tokio_rustls::rustls::crypto::ring::default_provider());
        let config = tokio_rustls::rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        let connector = tokio_rustls::TlsConnector::from(std::sync::Arc::new(config));
        for _ in 0..40 {
            let tcp = tokio::net::TcpStream::connect(webhook).await.unwrap();
            let name = rustls_pki_types::ServerName::try_from("localhost").unwrap();
            let Ok(mut tls) = connector.connect(name, tcp).await else { break };
            if tls.write_all(&request).await.is_err() {
                break;
            }
            // Reset, not close: the answer covenant writes next meets a dead connection.
            tls.get_ref().0.set_zero_linger().unwrap();
            drop(tls);
        }
    });
    std::thread::sleep(Duration::from_millis(300));
    let status = dev.child.try_wait().unwrap();
    assert!(status.is_none(), "covenant exited after clients reset their connections: {status:?}");
    let sample = std::fs::read(dir.path().join("sample-review.json")).unwrap();
    let ca = String::from_utf8(ca).unwrap();
    let answered = rt.block_on(async {
        let c = common::client(&[&ca], webhook, false, None);
        let url = format!("https://localhost:{}/api/v0/validate?timeout=10s", webhook.port());
        common::post(&c, &url, sample).await.status()
    });
    assert_eq!(answered, 200);
}

#[test]
fn the_binary_drains_and_exits_zero_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let (mut dev, webhook) = start_dev_with(dir.path(), &[]);
    let curls = dev.curls();
    assert_eq!(curls.len(), 2, "{curls:?}");
    assert!(curls[0].contains("ca.crt") && curls[0].contains("sample-review.json"), "{curls:?}");
    assert!(curls[1].contains("denied-review.json"), "{curls:?}");

    let rt = tokio::runtime::Runtime::new().unwrap();
    let ca = std::fs::read_to_string(dir.path().join("ca.crt")).unwrap();
    let sample = std::fs::read(dir.path().join("sample-review.json")).unwrap();
    let denied = std::fs::read(dir.path().join("denied-review.json")).unwrap();
    let (status, refusal) = rt.block_on(async {
        let c = common::client(&[&ca], webhook, false, None);
        let url = format!("https://localhost:{}/api/v0/validate?timeout=10s", webhook.port());
        let status = common::post(&c, &url, sample).await.status();
        let refusal: serde_json::Value = common::post(&c, &url, denied).await.json().await.unwrap();
        (status, refusal)
    });
    assert_eq!(status, 200);
    // The demo's second review is refused, as the banner says.
    assert_eq!(refusal["response"]["allowed"], false, "{refusal}");
    let message = refusal["response"]["status"]["message"].as_str().unwrap();
    assert!(message.contains("CVN-102") && message.contains("replicaz"), "{message}");

    let code = terminate(&mut dev.child);
    assert!(code.success(), "exit status {code}");
}

/// A server answering every kind of review writes nothing but its log lines: with
/// `--log-format json`, every line on stderr is a log event (a timestamp, a level, a
/// message), and nothing more reaches stdout after the banner. A stray print in a handler
/// (a debugging line left in) fails here.
#[test]
fn the_served_webhook_writes_nothing_but_its_log_lines() {
    let dir = tempfile::tempdir().unwrap();
    let (mut dev, webhook) = start_dev_with(dir.path(), &["--log-format", "json", "--log-level", "debug"]);
    let rt = tokio::runtime::Runtime::new().unwrap();
    let ca = std::fs::read_to_string(dir.path().join("ca.crt")).unwrap();
    let sample = std::fs::read(dir.path().join("sample-review.json")).unwrap();
    let denied = std::fs::read(dir.path().join("denied-review.json")).unwrap();
    let crd = std::fs::read(common::fixtures().join("bench/crd-update-400k.json")).unwrap();
    let statuses = rt.block_on(async {
        let mut statuses = Vec::new();
        for http2 in [false, true] {
            let c = common::client(&[&ca], webhook, http2, None);
            for route in ["validate", "mutate"] {
                let url = format!("https://localhost:{}/api/v0/{route}?timeout=10s", webhook.port());
                for body in [&sample, &denied, &crd, &sample[..sample.len() / 2].to_vec(), &b"{}".to_vec()] {
                    statuses.push(common::post(&c, &url, body.clone()).await.status().as_u16());
                }
            }
        }
        statuses
    });
    // Answers and refusals both: reviews judged, bodies that are not reviews refused.
    assert!(statuses.contains(&200) && statuses.iter().any(|s| *s >= 400), "{statuses:?}");
    let code = terminate(&mut dev.child);
    assert!(code.success(), "exit status {code}");
    std::thread::sleep(Duration::from_millis(200));
    let (stdout, stderr) = dev.written.lock().unwrap().clone();
    assert!(stdout.iter().all(|l| l.trim().is_empty()), "stdout after the banner: {stdout:#?}");
    assert!(!stderr.is_empty(), "no log lines at debug level");
    for line in &stderr {
        let event: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("not a log line ({e}): {line}"));
        for member in ["timestamp", "level", "target"] {
            assert!(event.get(member).is_some(), "a log line without {member}: {line}");
        }
    }
}

/// The time this process's threads spent runnable but not running, summed (the kernel's run
/// delay, `/proc/self/task/*/schedstat`): how much a busy machine kept the test from running.
fn run_delay() -> Duration {
    let tasks = std::fs::read_dir("/proc/self/task").into_iter().flatten().flatten();
    let ns: u64 = tasks
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().nth(1).and_then(|v| v.parse::<u64>().ok()))
        .sum();
    Duration::from_nanos(ns)
}

/// `wait`, bounded: it fails after 10 s without an outcome, unless in those 10 s the process
/// spent 2 s or more waiting for a CPU (a loaded machine starving it, not a hang: a hung wait
/// is idle) — then it waits again, 60 s at most in all. The failure names how long the process
/// waited for a CPU, so a starved run is told from a hang.
async fn patiently<F: std::future::Future>(wait: F, what: impl Fn() -> String) -> F::Output {
    tokio::pin!(wait);
    let began = std::time::Instant::now();
    loop {
        let before = run_delay();
        match tokio::time::timeout(Duration::from_secs(10), &mut wait).await {
            Ok(outcome) => return outcome,
            Err(_) => {
                let starved = run_delay().saturating_sub(before);
                if starved < Duration::from_secs(2) || began.elapsed() > Duration::from_secs(60) {
                    panic!(
                        "{} within {:.1?} (the process waited {starved:.1?} for a CPU in the last 10 s)",
                        what(),
                        began.elapsed()
                    );
                }
            }
        }
    }
}

/// Drains finish their answers: over one multiplexed HTTP/2 connection carrying a steady load
/// (as the apiserver's Go client multiplexes), a shutdown lets every stream the server took
/// write its whole answer. An answer whose head arrived always arrives whole; a stream the
/// server did not take is refused before any of it (the client may send it elsewhere). Answers
/// of about 100 KB, three runs. Without the lingering close (a socket closed with the client's
/// last bytes unread is reset, and the reset discards answers the client had received but not
/// read), about one run in three lost 6 answers under load.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_drain_writes_every_answer_it_began_over_a_multiplexed_connection() {
    use http_body_util::BodyExt;
    for run in 0..3 {
        let mut server =
            TestServer::with(Setup { config: common::versioned_config(), ..Setup::default() }).await;
        let url = server.url("/api/v0/validate");
        let io = hyper_util::rt::TokioIo::new(common::tls_h2(server.webhook, &server.ca_pem).await);
        let (sender, conn) =
            hyper::client::conn::http2::handshake::<_, _, String>(hyper_util::rt::TokioExecutor::new(), io)
                .await
                .unwrap();
        // What became of the connection and the server, for a hang to say.
        let ended: Arc<std::sync::Mutex<(Option<String>, bool)>> = Arc::default();
        // Whole answers so far: the drain begins once the load is flowing.
        let flowing = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let connection = tokio::spawn({
            let ended = ended.clone();
            async move {
                let how = conn.await;
                ended.lock().unwrap().0 = Some(format!("{how:?}"));
            }
        });
        // Answers of about 100 KB (150 undeclared members with long names, denied), so a
        // stream's answer takes many frames to write.
        let mut doc = serde_json::json!({"schema": "shop.app", "version": "1", "name": "web"});
        for i in 0..150 {
            doc[format!("member-{i}-{}", "x".repeat(1000))] = serde_json::json!(i);
        }
        let sent = common::review("big", "shop.example.com", "App", doc);
        let body = sent.to_string();
        let workers: Vec<_> = (0..32)
            .map(|worker| {
                let (mut sender, url, body, uid) =
                    (sender.clone(), url.clone(), body.clone(), sent["request"]["uid"].clone());
                let (ended, flowing) = (ended.clone(), flowing.clone());
                tokio::spawn(async move {
                    let (mut whole, mut cut, mut refused) = (0, 0, 0);
                    for request_no in 0.. {
                        let request = http::Request::post(&url)
                            .header("content-type", "application/json")
                            .body(body.clone())
                            .unwrap();
                        // Each wait is bounded, so a hang says where it is: before the answer's
                        // head, or in its body.
                        let hung = |at: &str| {
                            let (connection, stopped) = ended.lock().unwrap().clone();
                            format!(
                                "worker {worker}, request {request_no}: no {at} ({whole} whole before); \
                                 client connection ended: {connection:?}; server stopped: {stopped}"
                            )
                        };
                        let answered = patiently(sender.send_request(request), || hung("answer head")).await;
                        match answered {
                            Ok(resp) => {
                                let read =
                                    patiently(resp.into_body().collect(), || hung("end of the answer body"))
                                        .await;
                                match read {
                                    Ok(b) => {
                                        let v: Value = serde_json::from_slice(&b.to_bytes()).unwrap();
                                        assert_eq!(v["response"]["uid"], uid);
                                        whole += 1;
                                        flowing.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                                    }
                                    Err(_) => cut += 1,
                                }
                            }
                            Err(_) => {
                                refused += 1;
                                break;
                            }
                        }
                    }
                    (whole, cut, refused)
                })
            })
            .collect();
        // Under way: a few answers whole (however slow a loaded machine makes them), then
        // 300 ms more of load.
        patiently(
            async {
                while flowing.load(std::sync::atomic::Ordering::SeqCst) < 4 {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            },
            || "no answer before the drain".to_string(),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let stopped = tokio::spawn({
            let (stopping, ended) = (server.shutdown(), ended.clone());
            async move {
                let how = stopping.await;
                ended.lock().unwrap().1 = true;
                how
            }
        });
        let (mut whole, mut cut) = (0, 0);
        for w in workers {
            let (a, b, _) = patiently(w, || "a client worker did not finish".to_string()).await.unwrap();
            whole += a;
            cut += b;
        }
        patiently(stopped, || "the server did not stop".to_string()).await.unwrap().unwrap();
        let _ = connection.await;
        assert!(whole > 0, "run {run}: no answer before the drain");
        assert_eq!(cut, 0, "run {run}: {cut} answer(s) began and were cut off ({whole} whole)");
    }
}
