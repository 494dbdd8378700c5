//! Graceful shutdown: readiness drops first, in-flight requests finish, then the server
//! exits; and the binary does the same on SIGTERM.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

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

#[test]
fn the_binary_drains_and_exits_zero_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_covenant"))
        .args([
            "serve",
            "--dev",
            "--listen",
            "127.0.0.1:0",
            "--admin-listen",
            "127.0.0.1:0",
            "--dev-cert-dir",
        ])
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let mut webhook = None;
    let mut curls = Vec::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        if let Some(rest) = line.trim().strip_prefix("webhook  https://") {
            webhook = rest.split('/').next().map(str::to_string);
        }
        if line.trim().starts_with("curl ") {
            curls.push(line.clone());
        }
        if line.contains("offline, in CI.") {
            break;
        }
    }
    let webhook: std::net::SocketAddr = webhook.expect("no webhook address printed").parse().unwrap();
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

    let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    assert!(killed.success());
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    loop {
        if let Some(code) = child.try_wait().unwrap() {
            assert!(code.success(), "exit status {code}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "covenant did not exit after SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    }
}
