//! TLS: certificate rotation by symlink swap under traffic, a broken rotation keeping the old
//! certificate, and client-certificate authentication of the apiserver.

use crate::common;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::{client, post, Setup, TestServer};
use covenant::certs::DevCerts;
use covenant::server::CertPaths;

fn sample() -> Vec<u8> {
    std::fs::read(
        common::fixtures().join("admission/kubewarden-policy-server/pod_with_privileged_containers.json"),
    )
    .unwrap()
}

/// Lay out certificates the way a kubelet projects a Secret: `tls.crt -> ..data/tls.crt`,
/// `..data -> <version dir>`; rotation swaps `..data` atomically.
fn project(dir: &Path, version: &str, certs: &DevCerts) {
    let v = dir.join(version);
    std::fs::create_dir_all(&v).unwrap();
    std::fs::write(v.join("tls.crt"), &certs.cert_pem).unwrap();
    std::fs::write(v.join("tls.key"), &certs.key_pem).unwrap();
    let tmp = dir.join("..data_tmp");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(version, &tmp).unwrap();
    std::fs::rename(&tmp, dir.join("..data")).unwrap();
    for f in ["tls.crt", "tls.key"] {
        let link = dir.join(f);
        if std::fs::symlink_metadata(&link).is_err() {
            std::os::unix::fs::symlink(format!("..data/{f}"), &link).unwrap();
        }
    }
}

fn names() -> Vec<String> {
    vec!["localhost".into(), "127.0.0.1".into()]
}

/// A server serving `first` from a projected-volume layout in its temp dir, polling the files
/// every 50 ms.
async fn watching(first: &DevCerts) -> TestServer {
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), "v1", first);
    let cert = CertPaths { cert: dir.path().join("tls.crt"), key: dir.path().join("tls.key") };
    TestServer::with(Setup {
        reload_interval: Duration::from_millis(50),
        cert: Some(cert),
        ca_pem: Some(first.ca_pem.clone()),
        dir: Some(dir),
        ..Setup::default()
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn certificate_rotation_mid_traffic_loses_no_request() {
    let first = DevCerts::generate(&names(), 2).unwrap();
    let second = DevCerts::generate(&names(), 2).unwrap();
    let server = watching(&first).await;

    // Traffic on fresh connections (each request a new handshake) and on a kept-alive one,
    // trusting both CAs, while the certificate rotates underneath.
    let fresh = reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .use_rustls_tls()
        .resolve("localhost", server.webhook)
        .add_root_certificate(reqwest::Certificate::from_pem(first.ca_pem.as_bytes()).unwrap())
        .add_root_certificate(reqwest::Certificate::from_pem(second.ca_pem.as_bytes()).unwrap())
        .pool_max_idle_per_host(0)
        .http1_only()
        .build()
        .unwrap();
    let kept = client(&[&first.ca_pem, &second.ca_pem], server.webhook, true, None);
    let url = server.url("/api/v0/validate");
    let ok = Arc::new(AtomicUsize::new(0));
    let mut traffic = Vec::new();
    for c in [fresh, kept] {
        let (url, ok) = (url.clone(), ok.clone());
        traffic.push(tokio::spawn(async move {
            let mut failures = Vec::new();
            for _ in 0..150 {
                match c.post(&url).header("content-type", "application/json").body(sample()).send().await {
                    Ok(r) if r.status() == 200 => {
                        ok.fetch_add(1, Ordering::SeqCst);
                    }
                    Ok(r) => failures.push(format!("status {}", r.status())),
                    Err(e) => failures.push(format!("{e:?}")),
                }
                tokio::time::sleep(Duration::from_millis(4)).await;
            }
            failures
        }));
    }
    tokio::time::sleep(Duration::from_millis(250)).await;
    project(server.dir.path(), "v2", &second);

    // The new certificate comes into service: a client trusting only the new CA gets in.
    let only_new = client(&[&second.ca_pem], server.webhook, false, None);
    let mut served = false;
    for _ in 0..100 {
        if let Ok(r) =
            only_new.post(&url).header("content-type", "application/json").body(sample()).send().await
        {
            served = r.status() == 200;
            if served {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(served, "the rotated certificate never came into service");
    for t in traffic {
        let failures = t.await.unwrap();
        assert!(failures.is_empty(), "requests failed during rotation: {failures:?}");
    }
    assert_eq!(ok.load(Ordering::SeqCst), 300);
    let metrics = server.metrics().await;
    assert!(metrics.contains("covenant_tls_reloads_total{result=\"success\"} 1"), "{metrics}");
}

#[tokio::test]
async fn a_broken_rotation_keeps_the_old_certificate_serving() {
    let server =
        TestServer::with(Setup { reload_interval: Duration::from_millis(50), ..Setup::default() }).await;
    std::fs::write(server.dir.path().join("tls.crt"), "not a certificate").unwrap();
    let mut failed = false;
    for _ in 0..100 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if server.metrics().await.contains("covenant_tls_reloads_total{result=\"failure\"} 1") {
            failed = true;
            break;
        }
    }
    assert!(failed, "the broken certificate was not reported");
    let resp = post(&server.h2(), &server.url("/api/v0/validate"), sample()).await;
    assert_eq!(resp.status(), 200);
}

fn client_identity(ca: &DevCerts) -> reqwest::Identity {
    use rcgen::{CertificateParams, ExtendedKeyUsagePurpose, Issuer, KeyPair};
    let ca_key = KeyPair::from_pem(&ca.ca_key_pem).unwrap();
    let issuer = Issuer::from_ca_cert_pem(&ca.ca_pem, &ca_key).unwrap();
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec!["kube-apiserver".to_string()]).unwrap();
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let cert = params.signed_by(&key, &issuer).unwrap();
    reqwest::Identity::from_pem(format!("{}{}", cert.pem(), key.serialize_pem()).as_bytes()).unwrap()
}

#[tokio::test]
async fn client_ca_admits_only_apiservers_with_a_certificate_from_it() {
    let apiserver_ca = DevCerts::generate(&["apiserver-ca".into()], 2).unwrap();
    let other_ca = DevCerts::generate(&["other-ca".into()], 2).unwrap();
    let ca_dir = tempfile::tempdir().unwrap();
    let ca_file = ca_dir.path().join("client-ca.crt");
    std::fs::write(&ca_file, &apiserver_ca.ca_pem).unwrap();
    let server = TestServer::with(Setup { client_ca: Some(ca_file), ..Setup::default() }).await;
    let url = server.url("/api/v0/validate");

    let anonymous = client(&[&server.ca_pem], server.webhook, false, None);
    let err = anonymous.post(&url).header("content-type", "application/json").body(sample()).send().await;
    assert!(err.is_err(), "a client without a certificate got through");

    let stranger = client(&[&server.ca_pem], server.webhook, false, Some(client_identity(&other_ca)));
    let err = stranger.post(&url).header("content-type", "application/json").body(sample()).send().await;
    assert!(err.is_err(), "a client with a foreign certificate got through");

    let apiserver = client(&[&server.ca_pem], server.webhook, true, Some(client_identity(&apiserver_ca)));
    let resp = post(&apiserver, &url, sample()).await;
    assert_eq!(resp.status(), 200);
}

#[tokio::test]
async fn tls_1_2_and_1_3_are_both_served() {
    let server = TestServer::start().await;
    for version in [reqwest::tls::Version::TLS_1_2, reqwest::tls::Version::TLS_1_3] {
        let c = reqwest::Client::builder()
            .tls_built_in_root_certs(false)
            .use_rustls_tls()
            .resolve("localhost", server.webhook)
            .add_root_certificate(reqwest::Certificate::from_pem(server.ca_pem.as_bytes()).unwrap())
            .min_tls_version(version)
            .max_tls_version(version)
            .build()
            .unwrap();
        let resp = post(&c, &server.url("/api/v0/validate"), sample()).await;
        assert_eq!(resp.status(), 200, "{version:?}");
    }
}

/// A pair made by hand: valid from `from` to `until` (seconds from now), for `names`.
fn pair(names: &[&str], from: i64, until: i64) -> DevCerts {
    pair_around(time::OffsetDateTime::now_utc(), names, from, until)
}

/// A pair valid from `from` to `until` seconds around `now`.
fn pair_around(now: time::OffsetDateTime, names: &[&str], from: i64, until: i64) -> DevCerts {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params =
        rcgen::CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
    params.not_before = now + time::Duration::seconds(from);
    params.not_after = now + time::Duration::seconds(until);
    let cert = params.self_signed(&key).unwrap();
    DevCerts {
        ca_pem: cert.pem(),
        ca_key_pem: key.serialize_pem(),
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    }
}

fn reloads(metrics: &str, result: &str) -> u64 {
    let line = format!("covenant_tls_reloads_total{{result=\"{result}\"}} ");
    metrics.lines().find_map(|l| l.strip_prefix(&line)).map(|n| n.trim().parse().unwrap()).unwrap_or(0)
}

/// A reload is checked before it serves: expired, not yet valid, or not covering the names
/// the serving certificate covers is refused (one failure each, a missing file too, counted
/// once however long it stays missing), the old pair keeps serving, and the expiry metric
/// follows what is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_certificate_unfit_to_serve_is_refused_and_the_old_one_keeps_serving() {
    let first = DevCerts::generate(&names(), 2).unwrap();
    let server = watching(&first).await;
    let url = server.url("/api/v0/validate");
    let old = client(&[&first.ca_pem], server.webhook, false, None);
    let expiry = |m: &str| {
        m.lines()
            .find_map(|l| l.strip_prefix("covenant_tls_certificate_expiry_timestamp_seconds "))
            .unwrap()
            .to_string()
    };
    let served_expiry = expiry(&server.metrics().await);
    let settle = || tokio::time::sleep(Duration::from_millis(400));
    // Load throughout: a fresh connection (a fresh handshake against what is served) per
    // review, none of which may fail while unfit pairs are swapped in.
    let loading = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let load = tokio::spawn({
        let (loading, url, ca, addr) = (loading.clone(), url.clone(), first.ca_pem.clone(), server.webhook);
        async move {
            let mut answered = 0;
            while loading.load(std::sync::atomic::Ordering::SeqCst) {
                let fresh = client(&[&ca], addr, answered % 2 == 0, None);
                assert_eq!(post(&fresh, &url, sample()).await.status(), 200, "a review under load failed");
                answered += 1;
            }
            answered
        }
    });
    let mut failures = 0;
    // Two expired pairs that fail alike (the same dates, so the same message): two failed
    // reloads, each counted.
    let then = time::OffsetDateTime::now_utc();
    for (version, unfit) in [
        ("expired", pair_around(then, &["localhost", "127.0.0.1"], -7200, -3600)),
        ("expired-again", pair_around(then, &["localhost", "127.0.0.1"], -7200, -3600)),
        ("future", pair(&["localhost", "127.0.0.1"], 3600, 7200)),
        ("narrower", pair(&["other.example"], -60, 3600)),
    ] {
        project(server.dir.path(), version, &unfit);
        settle().await;
        failures += 1;
        let m = server.metrics().await;
        assert_eq!(reloads(&m, "failure"), failures, "{version}: {m}");
        assert_eq!(reloads(&m, "success"), 0, "{version}");
        assert_eq!(expiry(&m), served_expiry, "{version}: the metric follows what is served");
        let resp = post(&old, &url, sample()).await;
        assert_eq!(resp.status(), 200, "{version}: the old pair keeps serving");
    }
    loading.store(false, std::sync::atomic::Ordering::SeqCst);
    assert!(load.await.unwrap() > 0, "no load was sent");
    // Missing files: one failure, not one per poll.
    std::os::unix::fs::symlink("gone", server.dir.path().join("..data_tmp")).unwrap();
    std::fs::rename(server.dir.path().join("..data_tmp"), server.dir.path().join("..data")).unwrap();
    settle().await;
    settle().await;
    assert_eq!(reloads(&server.metrics().await, "failure"), failures + 1);
    assert_eq!(post(&old, &url, sample()).await.status(), 200);
    // A fit pair comes into service.
    let second = DevCerts::generate(&names(), 2).unwrap();
    project(server.dir.path(), "v2", &second);
    settle().await;
    assert_eq!(reloads(&server.metrics().await, "success"), 1);
    let new = client(&[&second.ca_pem], server.webhook, false, None);
    assert_eq!(post(&new, &url, sample()).await.status(), 200);
}

/// A serving pair that is expired (or not yet valid) when covenant starts is served, so a
/// renewal written later is picked up, but said loudly at start: an error line naming it,
/// and a failed reload counted, where it was served in silence.
#[test]
fn an_expired_certificate_at_start_up_is_said_loudly() {
    use std::io::{BufRead, BufReader};
    let dir = tempfile::tempdir().unwrap();
    let expired = pair(&["localhost", "127.0.0.1"], -7200, -3600);
    let (cert, key) = (dir.path().join("tls.crt"), dir.path().join("tls.key"));
    std::fs::write(&cert, &expired.cert_pem).unwrap();
    std::fs::write(&key, &expired.key_pem).unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_covenant"))
        .args([
            "serve",
            "--offline",
            "--listen",
            "127.0.0.1:0",
            "--admin-listen",
            "127.0.0.1:0",
            "--api-listen",
            "127.0.0.1:0",
            "--tls-cert",
        ])
        .arg(&cert)
        .arg("--tls-key")
        .arg(&key)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut said = None;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while let Ok(line) = rx.recv_timeout(deadline.saturating_duration_since(std::time::Instant::now())) {
        if line.contains("the serving certificate is not valid now") {
            said = Some(line);
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let line = said.expect("no error line about the expired certificate");
    assert!(line.contains("ERROR") || line.contains("\"level\":\"ERROR\""), "{line}");
    assert!(line.contains("expired at"), "{line}");
}
