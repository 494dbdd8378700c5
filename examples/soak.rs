//! The soak: the release `covenant serve` on loopback, judging a fixed-rate stream of real
//! reviews for minutes while its serving certificate rotates underneath (laid out as a
//! kubelet projects a Secret; the `..data` symlink swaps) and the background audit runs over
//! the OpenChoreo samples. It samples the server's resident memory every second and reports
//! whether it stayed flat, the requests that failed (none may), the rotations the server took
//! in, and latency percentiles.
//!
//! `soak [--seconds 300] [--rate 200] [--rotate-every 20] [--covenant BIN]`
//! Every request goes to 127.0.0.1; every loop ends at the deadline; the server is killed by
//! PID at the end. Exits 1 when a request failed, a rotation did not take, or memory grew.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use covenant::certs::DevCerts;

fn arg<T: std::str::FromStr>(args: &[String], name: &str, default: T) -> T {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Write `certs` as version `version` of a projected Secret in `dir` and swap `..data` to it.
fn project(dir: &Path, version: usize, certs: &DevCerts) {
    let name = format!("..v{version}");
    let v = dir.join(&name);
    std::fs::create_dir_all(&v).unwrap();
    std::fs::write(v.join("tls.crt"), &certs.cert_pem).unwrap();
    std::fs::write(v.join("tls.key"), &certs.key_pem).unwrap();
    let tmp = dir.join("..data_tmp");
    let _ = std::fs::remove_file(&tmp);
    std::os::unix::fs::symlink(&name, &tmp).unwrap();
    std::fs::rename(&tmp, dir.join("..data")).unwrap();
    for f in ["tls.crt", "tls.key"] {
        let link = dir.join(f);
        if std::fs::symlink_metadata(&link).is_err() {
            std::os::unix::fs::symlink(format!("..data/{f}"), &link).unwrap();
        }
    }
}

/// Resident memory of a process, in KiB.
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// A metric's value in a Prometheus text exposition.
fn metric(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series).map(str::trim))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

fn percentile(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    if v.is_empty() {
        return Duration::ZERO;
    }
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

/// Least-squares slope of (seconds, KiB) samples, in KiB per minute.
fn slope_per_minute(samples: &[(f64, u64)]) -> f64 {
    let n = samples.len() as f64;
    if n < 2.0 {
        return 0.0;
    }
    let mx = samples.iter().map(|s| s.0).sum::<f64>() / n;
    let my = samples.iter().map(|s| s.1 as f64).sum::<f64>() / n;
    let num: f64 = samples.iter().map(|s| (s.0 - mx) * (s.1 as f64 - my)).sum();
    let den: f64 = samples.iter().map(|s| (s.0 - mx).powi(2)).sum();
    if den == 0.0 {
        0.0
    } else {
        num / den * 60.0
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let seconds: u64 = arg(&args, "--seconds", 300);
    let rate: u64 = arg(&args, "--rate", 200).max(1);
    let rotate_every: u64 = arg(&args, "--rotate-every", 20).max(1);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The covenant of the profile this soak was built with (`<profile>/examples/soak`).
    let built = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.join("covenant")))
        .unwrap_or_else(|| root.join("target/release/covenant"));
    let covenant_bin: PathBuf = arg(&args, "--covenant", built);

    // One certificate per rotation, each from its own CA; the clients trust them all.
    let names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    let rotations = (seconds / rotate_every + 1) as usize;
    let certs: Vec<DevCerts> = (0..=rotations).map(|_| DevCerts::generate(&names, 2).unwrap()).collect();
    let dir = tempfile::tempdir().unwrap();
    project(dir.path(), 0, &certs[0]);

    let (port, admin_port) = (free_port(), free_port());
    let addr: SocketAddr = ([127, 0, 0, 1], port).into();
    let admin = format!("http://127.0.0.1:{admin_port}");
    let mut child = Command::new(&covenant_bin)
        .args(["serve", "--tls-cert"])
        .arg(dir.path().join("tls.crt"))
        .arg("--tls-key")
        .arg(dir.path().join("tls.key"))
        .arg("--context")
        .arg(root.join("tests/fixtures/openchoreo/samples"))
        .args(["--audit-interval", "10s", "--tls-reload-interval", "1s", "--log-level", "warn"])
        .args([
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--admin-listen",
            &format!("127.0.0.1:{admin_port}"),
            "--api-listen",
            "127.0.0.1:0",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot start {}: {e} (cargo build --release first)", covenant_bin.display())
        });
    let pid = child.id();

    // Real reviews: every corpus review under the fixtures, and the samples' own documents
    // wrapped as CREATE reviews (constructs and consumers judged through the context).
    let mut bodies: Vec<Vec<u8>> = Vec::new();
    for f in covenant::source::discover(&root.join("tests/fixtures/admission")).unwrap() {
        if f.extension().is_some_and(|e| e == "json") {
            bodies.push(std::fs::read(f).unwrap());
        }
    }
    for f in covenant::source::discover(&root.join("tests/fixtures/openchoreo/samples")).unwrap() {
        for d in covenant::source::parse_stream(&std::fs::read_to_string(f).unwrap()).0 {
            let v = d.value;
            let api = v["apiVersion"].as_str().unwrap_or("v1");
            let (group, version) = api.split_once('/').unwrap_or(("", api));
            let review = serde_json::json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                "request": {"uid": "soak", "kind": {"group": group, "version": version, "kind": v["kind"]},
                    "resource": {"group": group, "version": version, "resource": "things"},
                    "name": v["metadata"]["name"], "namespace": v["metadata"]["namespace"],
                    "operation": "CREATE", "userInfo": {"username": "soak"}, "object": v, "oldObject": null}});
            bodies.push(serde_json::to_vec(&review).unwrap());
        }
    }

    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    let client = |h2: bool, pooled: bool| {
        let mut b = reqwest::Client::builder()
            .use_rustls_tls()
            .tls_built_in_root_certs(false)
            .resolve("localhost", addr)
            .timeout(Duration::from_secs(10));
        for c in &certs {
            b = b.add_root_certificate(reqwest::Certificate::from_pem(c.ca_pem.as_bytes()).unwrap());
        }
        b = if h2 { b.http2_prior_knowledge() } else { b.http1_only() };
        if !pooled {
            b = b.pool_max_idle_per_host(0);
        }
        b.build().unwrap()
    };
    // Kept-alive HTTP/1.1 (the apiserver's way), HTTP/2, and a fresh connection per request
    // (a new handshake, which sees the certificate in service now).
    let clients = [client(false, true), client(true, true), client(false, false)];

    let ok = Arc::new(AtomicU64::new(0));
    let failed = Arc::new(Mutex::new(Vec::<String>::new()));
    let latencies = Arc::new(Mutex::new(Vec::<Duration>::new()));
    let mut rss: Vec<(f64, u64)> = Vec::new();
    let url = format!("https://localhost:{port}/api/v0/validate?timeout=10s");

    rt.block_on(async {
        let http = reqwest::Client::new();
        let until = Instant::now() + Duration::from_secs(15);
        while !http.get(format!("{admin}/readyz")).send().await.is_ok_and(|r| r.status() == 200) {
            assert!(Instant::now() < until, "covenant did not become ready");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // Keep the reviews the server answers 200 (some corpus reviews are refused by design:
        // v1beta1, fuzzer-valued envelopes); the soak is about what it accepts.
        let probe = client(false, true);
        let mut kept = Vec::new();
        for b in bodies.iter() {
            let r = probe.post(&url).header("content-type", "application/json").body(b.clone()).send().await;
            if r.is_ok_and(|r| r.status() == 200) {
                kept.push(b.clone());
            }
        }
        println!(
            "soak: {seconds} s at {rate} req/s over {} reviews ({} of the fixtures' refused by design and left out); certificate rotated every {rotate_every} s; audit every 10 s",
            kept.len(),
            bodies.len() - kept.len()
        );
        let bodies = Arc::new(kept);
        let start = Instant::now();
        let deadline = start + Duration::from_secs(seconds);
        let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate as f64));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
        let (mut sent, mut rotated, mut sampled) = (0u64, 0usize, 0u64);
        let mut inflight = Vec::new();
        while Instant::now() < deadline {
            tick.tick().await;
            let elapsed = start.elapsed().as_secs();
            // No rotation in the last seconds: the server polls every second, and a rotation
            // it had no time to see would count as missed.
            if elapsed / rotate_every > rotated as u64 && rotated + 1 < certs.len() && elapsed + 3 < seconds {
                rotated += 1;
                project(dir.path(), rotated, &certs[rotated]);
            }
            if elapsed >= sampled {
                rss.push((start.elapsed().as_secs_f64(), rss_kib(pid)));
                sampled = elapsed + 1;
            }
            let c = clients[(sent % 3) as usize].clone();
            let body = bodies[(sent as usize) % bodies.len()].clone();
            let (url, ok, failed, latencies) = (url.clone(), ok.clone(), failed.clone(), latencies.clone());
            inflight.push(tokio::spawn(async move {
                let t = Instant::now();
                let r = c.post(&url).header("content-type", "application/json").body(body).send().await;
                let outcome = match r {
                    Ok(r) if r.status() == 200 => r.bytes().await.map(|_| ()).map_err(|e| e.to_string()),
                    Ok(r) => Err(format!("status {}", r.status())),
                    Err(e) => Err(e.to_string()),
                };
                match outcome {
                    Ok(()) => {
                        ok.fetch_add(1, Ordering::Relaxed);
                        latencies.lock().unwrap().push(t.elapsed());
                    }
                    Err(e) => failed.lock().unwrap().push(e),
                }
            }));
            sent += 1;
            if inflight.len() >= 4096 {
                inflight.retain(|t| !t.is_finished());
            }
        }
        for t in inflight {
            let _ = t.await;
        }
        rss.push((start.elapsed().as_secs_f64(), rss_kib(pid)));
        let metrics = http.get(format!("{admin}/metrics")).send().await.unwrap().text().await.unwrap();
        let reloads = metric(&metrics, "covenant_tls_reloads_total{result=\"success\"}");
        let audits = metric(&metrics, "covenant_audit_runs_total{result=\"complete\"}");
        let wall = start.elapsed().as_secs_f64();

        let ok = ok.load(Ordering::Relaxed);
        let failed = failed.lock().unwrap().clone();
        let mut lat = latencies.lock().unwrap().clone();
        let (p50, p99, max) = (percentile(&mut lat, 0.5), percentile(&mut lat, 0.99), percentile(&mut lat, 1.0));
        // Memory after the first tenth of the run (caches, pools and the allocator warmed) to
        // the end.
        let warm: Vec<(f64, u64)> = rss.iter().copied().filter(|s| s.0 >= wall / 10.0).collect();
        let first = warm.first().map(|s| s.1).unwrap_or(0);
        let last = warm.last().map(|s| s.1).unwrap_or(0);
        let peak = rss.iter().map(|s| s.1).max().unwrap_or(0);
        let slope = slope_per_minute(&warm);
        println!("  requests   {sent} sent, {ok} answered 200, {} failed ({:.0} req/s achieved)", failed.len(), ok as f64 / wall);
        println!("  latency    p50 {p50:.2?}  p99 {p99:.2?}  max {max:.2?}");
        println!("  rotations  {rotated} written, {reloads} reloaded by the server; {audits} audit runs completed");
        println!(
            "  memory     RSS {:.1} MiB after warm-up, {:.1} MiB at the end, peak {:.1} MiB; trend {:+.1} KiB/min",
            first as f64 / 1024.0,
            last as f64 / 1024.0,
            peak as f64 / 1024.0,
            slope
        );
        // The resident memory at the start of every minute, to see its shape, not just its ends.
        let per_minute: Vec<String> = rss
            .iter()
            .filter(|s| (s.0 as u64).is_multiple_of(60))
            .map(|s| format!("{:.1}", s.1 as f64 / 1024.0))
            .collect();
        println!("  RSS/min    {} MiB", per_minute.join(" "));
        let mut verdict = Vec::new();
        if !failed.is_empty() {
            let mut kinds: Vec<&String> = failed.iter().collect();
            kinds.dedup();
            verdict.push(format!("{} requests failed: {:?}", failed.len(), &kinds[..kinds.len().min(5)]));
        }
        if (reloads as usize) < rotated {
            verdict.push(format!("{rotated} rotations written but {reloads} reloaded"));
        }
        // Flat: the end within 10% (and 8 MiB) of the warm level.
        if last > first + (first / 10).max(8 * 1024) {
            verdict.push(format!("memory grew from {first} KiB to {last} KiB"));
        }
        if verdict.is_empty() {
            println!("  verdict    ok: no request failed, every rotation taken in, memory flat");
        } else {
            for v in &verdict {
                println!("  verdict    FAIL: {v}");
            }
        }
        let _ = child.kill();
        let _ = child.wait();
        std::process::exit(if verdict.is_empty() { 0 } else { 1 });
    });
}
