//! The load bench: covenant and the bare parse-and-allow webhook (`bare_webhook`) side by side
//! over TLS on loopback, HTTP/1.1 keep-alive and HTTP/2, in alternating short rounds. Each
//! server is pinned to core 1 with one worker thread; run this generator on core 0
//! (`make bench-load` does). For each scenario it prints req/s, p50/p99 and server CPU per
//! request (from /proc/<pid>/stat), and the covenant ÷ bare ratios, each computed within a
//! round and then taken as the median over rounds.
//!
//! A third server, the floor (`bare_webhook --floor`: the body received, nothing parsed),
//! measures what TLS, HTTP and the body cost on this stack before any work. The bench also
//! prints covenant's work over the bare server's work, both net of the floor: (covenant −
//! floor) ÷ (bare − floor), i.e. what covenant does for a review against what a
//! `serde_json::Value` parse of it costs.
//!
//! covenant runs each HTTP/2 connection's streams on the connection's task (its answers to
//! concurrent streams leave in one write) and takes DATA frames of up to 512 KiB; the bare
//! server and the floor spawn a task per stream and take 16 KiB frames, as the stack does by
//! default. `--inline-streams` gives them covenant's HTTP/2 transport (both), to see how much
//! of a difference is the transport and how much the work.
//!
//! `--apiserver` runs the scenarios as the kube-apiserver sends them instead: one HTTP/2
//! connection carrying concurrent streams (Go's client multiplexes every call to a webhook
//! over one connection), the bare server and the floor on covenant's transport, and covenant
//! watching a stand-in API server (the integration tests', over plain HTTP on loopback) that
//! holds a platform at a realistic size — 200 constructs at 5 versions each and 5,000
//! Components — so each review's lookups go through a populated live view. It prints
//! p50/p99/p99.9 beside CPU per request.
//!
//! `--reverse` runs the scenarios last to first, and `--again` runs the first scenario once
//! more after the rest: whether a ratio depends on what the process served before.
//!
//! `loadbench [--rounds N] [--seconds S] [--covenant BIN] [--bare BIN] [--only TEXT] [--inline-streams] [--apiserver] [--reverse] [--again]`
//! Every request goes to 127.0.0.1; every loop is bounded in time; every server is killed
//! by PID at the end.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::ServerName;

#[allow(dead_code)]
#[path = "../tests/integration/common/apiserver.rs"]
mod apiserver;
#[allow(dead_code)]
#[path = "../benches/support/platform.rs"]
mod platform;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

struct Server {
    name: &'static str,
    child: Child,
    addr: SocketAddr,
}

fn spawn(name: &'static str, pinned: bool, bin: &Path, args: &[String], env: &[(&str, String)]) -> Child {
    let mut cmd = if pinned {
        let mut c = Command::new("taskset");
        c.arg("-c").arg("1").arg(bin);
        c
    } else {
        Command::new(bin)
    };
    // The server's log goes to a file beside the binaries, to read when a round fails.
    let log = std::env::temp_dir().join(format!("loadbench-{name}.log"));
    let stderr = std::fs::File::create(&log).map(Stdio::from).unwrap_or_else(|_| Stdio::null());
    cmd.args(args).envs(env.iter().map(|(k, v)| (k, v))).stdout(Stdio::null()).stderr(stderr);
    cmd.spawn().unwrap_or_else(|e| panic!("cannot start {name} ({}): {e}", bin.display()))
}

/// The CPU time a process has used, in seconds: its process CPU-time clock
/// (`clock_getcpuclockid`), exact to the nanosecond, so that short rounds are measured as
/// well as long ones; utime + stime from `/proc` (in clock ticks, `CLK_TCK`) if that clock
/// cannot be read.
fn cpu_seconds(pid: u32, ticks: f64) -> f64 {
    let mut clock: libc::clockid_t = 0;
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: both calls only write the out-parameters they are given, which live here.
    let read = unsafe {
        libc::clock_getcpuclockid(pid as libc::pid_t, &mut clock) == 0
            && libc::clock_gettime(clock, &mut now) == 0
    };
    if read {
        return now.tv_sec as f64 + now.tv_nsec as f64 * 1e-9;
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let get = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (get(11) + get(12)) / ticks
}

#[derive(Clone, Copy)]
enum Proto {
    H1 { conns: usize },
    H2 { conns: usize, streams: usize },
}

#[derive(Clone)]
struct Round {
    requests: u64,
    errors: u64,
    wall: f64,
    cpu: f64,
    latencies: Vec<Duration>,
}

async fn connect(
    addr: SocketAddr,
    tls: &tokio_rustls::TlsConnector,
) -> TokioIo<tokio_rustls::client::TlsStream<tokio::net::TcpStream>> {
    // A connection refused or reset while the previous round's are still closing is tried
    // again; only a server that keeps refusing ends the bench.
    let mut last = None;
    for attempt in 0..5 {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_millis(50 * attempt)).await;
        }
        let tcp = match tokio::net::TcpStream::connect(addr).await {
            Ok(t) => t,
            Err(e) => {
                last = Some(e);
                continue;
            }
        };
        tcp.set_nodelay(true).unwrap();
        match tls.connect(ServerName::try_from("localhost").unwrap(), tcp).await {
            Ok(stream) => return TokioIo::new(stream),
            Err(e) => last = Some(e),
        }
    }
    panic!("cannot connect to {addr}: {last:?}")
}

fn request(body: &Bytes) -> hyper::Request<Full<Bytes>> {
    hyper::Request::post("https://localhost/api/v0/validate?timeout=10s")
        .header("content-type", "application/json")
        .header("host", "localhost")
        .body(Full::new(body.clone()))
        .unwrap()
}

async fn run_round(
    addr: SocketAddr,
    proto: Proto,
    body: Bytes,
    ca: &str,
    seconds: f64,
    pid: u32,
    ticks: f64,
) -> Round {
    let mut roots = rustls::RootCertStore::empty();
    for c in rustls_pki_types::CertificateDer::pem_slice_iter(ca.as_bytes()) {
        roots.add(c.unwrap()).unwrap();
    }
    let alpn: Vec<Vec<u8>> = match proto {
        Proto::H1 { .. } => vec![b"http/1.1".to_vec()],
        Proto::H2 { .. } => vec![b"h2".to_vec()],
    };
    let mut config =
        rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
    config.alpn_protocols = alpn;
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config));

    // Connect (and warm each connection with one request) before the clock starts.
    let mut senders: Vec<Box<dyn FnMut() -> futures_util::future::BoxFuture<'static, bool> + Send>> =
        Vec::new();
    match proto {
        Proto::H1 { conns } => {
            for _ in 0..conns {
                let (mut s, conn) =
                    hyper::client::conn::http1::handshake(connect(addr, &tls).await).await.unwrap();
                tokio::spawn(conn);
                let _ = s.send_request(request(&body)).await.unwrap().into_body().collect().await;
                let s = Arc::new(tokio::sync::Mutex::new(s));
                let b = body.clone();
                senders.push(Box::new(move || {
                    let (s, b) = (s.clone(), b.clone());
                    Box::pin(async move {
                        let mut s = s.lock().await;
                        match s.send_request(request(&b)).await {
                            Ok(r) => r.status() == 200 && r.into_body().collect().await.is_ok(),
                            Err(_) => false,
                        }
                    })
                }));
            }
        }
        Proto::H2 { conns, streams } => {
            for _ in 0..conns {
                let (s, conn) =
                    hyper::client::conn::http2::handshake(TokioExecutor::new(), connect(addr, &tls).await)
                        .await
                        .unwrap();
                tokio::spawn(conn);
                for _ in 0..streams {
                    let s = s.clone();
                    let b = body.clone();
                    senders.push(Box::new(move || {
                        let (mut s, b) = (s.clone(), b.clone());
                        Box::pin(async move {
                            match s.send_request(request(&b)).await {
                                Ok(r) => r.status() == 200 && r.into_body().collect().await.is_ok(),
                                Err(_) => false,
                            }
                        })
                    }));
                }
            }
        }
    }

    let cpu0 = cpu_seconds(pid, ticks);
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(seconds);
    let mut tasks = Vec::new();
    for mut send in senders {
        tasks.push(tokio::spawn(async move {
            let (mut ok, mut errors, mut lat) = (0u64, 0u64, Vec::new());
            // Bounded: stops at the deadline, and never sends more than a million requests.
            while Instant::now() < deadline && ok + errors < 1_000_000 {
                let t = Instant::now();
                if send().await {
                    ok += 1;
                    lat.push(t.elapsed());
                } else {
                    errors += 1;
                }
            }
            (ok, errors, lat)
        }));
    }
    let mut round = Round { requests: 0, errors: 0, wall: 0.0, cpu: 0.0, latencies: Vec::new() };
    for t in tasks {
        let (ok, errors, lat) = t.await.unwrap();
        round.requests += ok;
        round.errors += errors;
        round.latencies.extend(lat);
    }
    round.wall = start.elapsed().as_secs_f64();
    round.cpu = cpu_seconds(pid, ticks) - cpu0;
    round
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() {
        return f64::NAN;
    }
    v[v.len() / 2]
}

/// How far the per-round ratios pin their median down: the lowest and highest, and, from six
/// rounds on, a distribution-free 95% confidence interval for the median (the order
/// statistics x(k) and x(n+1-k), with the largest k whose binomial coverage is still 95%).
/// A target is shown met on a noisy machine only when the interval's upper end is under it.
fn spread(v: &[f64]) -> String {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let (Some(low), Some(high)) = (s.first(), s.last()) else { return "none".into() };
    match median_interval(s.len()) {
        Some(k) => format!("{low:.2}–{high:.2}; 95% CI {:.2}–{:.2}", s[k - 1], s[s.len() - k]),
        None => format!("{low:.2}–{high:.2}"),
    }
}

/// The largest k for which [x(k), x(n+1-k)] covers the median with at least 95%
/// probability, whatever the distribution: 1 - 2·P(Binomial(n, ½) ≤ k-1) ≥ 0.95.
fn median_interval(n: usize) -> Option<usize> {
    let tail = |k: usize| -> f64 {
        // P(Binomial(n, ½) ≤ k-1), the binomial coefficients built up as floats.
        let (mut c, mut sum) = (1.0f64, 0.0f64);
        for i in 0..k {
            sum += c;
            c = c * (n - i) as f64 / (i + 1) as f64;
        }
        sum / 2f64.powi(n as i32)
    };
    (1..=n / 2).take_while(|&k| 1.0 - 2.0 * tail(k) >= 0.95).last()
}

fn percentile(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    if v.is_empty() {
        return Duration::ZERO;
    }
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

/// An AdmissionReview CREATE of `object`.
fn review(group: &str, version: &str, kind: &str, resource: &str, object: serde_json::Value) -> Bytes {
    Bytes::from(platform::create_review(group, version, kind, resource, object))
}

/// A Component pinned to ruby-service "1" with parameters, padded with labels and
/// annotations to about 4 KB: the pin is resolved and the parameters validated.
fn concerned_component() -> Bytes {
    let labels: serde_json::Map<String, serde_json::Value> = (0..24)
        .map(|i| (format!("example.com/label-{i}"), format!("value-{i}-{}", "x".repeat(24)).into()))
        .collect();
    let annotations: serde_json::Map<String, serde_json::Value> =
        (0..24).map(|i| (format!("example.com/note-{i}"), "n".repeat(60).into())).collect();
    let component = serde_json::json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Component",
        "metadata": {"name": "bakery-web", "namespace": "bakery", "labels": labels, "annotations": annotations},
        "spec": {"owner": {"projectName": "bakery"},
                 "componentType": {"kind": "ClusterComponentType", "name": "deployment/ruby-service", "version": "1"},
                 "parameters": {"sizeClass": "large", "port": 8080}}});
    review("openchoreo.dev", "v1alpha1", "Component", "components", component)
}

/// A launcher Application with `n` webservice components, each with an expose trait.
fn launcher_application(n: usize) -> Bytes {
    let components: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            serde_json::json!({"name": format!("svc-{i}"), "type": "webservice",
                "properties": {"image": format!("registry.example.com/svc-{i}:1.{i}.0"), "port": 8080 + i, "replicas": 2},
                "traits": [{"type": "expose", "properties": {"rules": [{"host": format!("svc-{i}.example.com"),
                    "paths": [{"path": "/", "port": 8080 + i}]}]}}]})
        })
        .collect();
    let app = serde_json::json!({"apiVersion": "launcher.gokure.dev/v1alpha1", "kind": "Application",
        "metadata": {"name": "storefront", "namespace": "shop"}, "spec": {"components": components}});
    review("launcher.gokure.dev", "v1alpha1", "Application", "applications", app)
}

/// The platform the stand-in API server holds for `--apiserver`: 200 constructs at 5 versions
/// each and 5,000 Components pinning them, as the resources covenant watches.
fn populated_platform() -> apiserver::Fake {
    let mut fake = apiserver::Fake::default();
    for (kind, namespaced) in
        [("ClusterComponentType", false), ("Component", true), ("ComponentRelease", true), ("Workload", true)]
    {
        fake.resources.push((
            "openchoreo.dev".into(),
            format!("{}s", kind.to_lowercase()),
            kind.into(),
            namespaced,
        ));
    }
    fake.objects.insert(("openchoreo.dev".into(), "clustercomponenttypes".into()), platform::constructs(200));
    fake.objects.insert(("openchoreo.dev".into(), "components".into()), platform::components(5_000, 200));
    fake
}

/// A new Component of the populated platform: a pin resolved among 5 versions, parameters
/// validated.
fn platform_component() -> Bytes {
    review("openchoreo.dev", "v1alpha1", "Component", "components", platform::new_component())
}

/// A Workload whose image names a release (CVN-407 is satisfied).
fn workload() -> Bytes {
    let workload = serde_json::json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Workload",
        "metadata": {"name": "app-5123-workload", "namespace": "team-23"},
        "spec": {"owner": {"projectName": "team-23", "componentName": "app-5123"},
            "endpoints": {"http": {"type": "HTTP", "port": 8080, "visibility": ["external"]}},
            "container": {"image": "registry.example.com/team-23/app:1.4.2", "args": ["--port", "8080"]}}});
    review("openchoreo.dev", "v1alpha1", "Workload", "workloads", workload)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rounds: usize = arg(&args, "--rounds").and_then(|v| v.parse().ok()).unwrap_or(5);
    let seconds: f64 = arg(&args, "--seconds").and_then(|v| v.parse().ok()).unwrap_or(3.0);
    // The binaries of the profile this bench was built with (under `make bench-load`, the
    // static `dist` build the image ships, `target/x86_64-unknown-linux-gnu/dist`): the
    // bench's own folder is `<profile>/examples`.
    let target = std::env::current_exe()
        .ok()
        .and_then(|exe| Some(exe.parent()?.parent()?.to_path_buf()))
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("target/release"));
    let covenant_bin = arg(&args, "--covenant").map(PathBuf::from).unwrap_or(target.join("covenant"));
    let bare_bin = arg(&args, "--bare").map(PathBuf::from).unwrap_or(target.join("examples/bare_webhook"));
    let pinned = Command::new("taskset").arg("-V").output().is_ok();
    let ticks: f64 = Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100.0);

    let dir = tempfile::tempdir().unwrap();
    let certs = covenant::certs::DevCerts::generate(&["localhost".into(), "127.0.0.1".into()], 2).unwrap();
    let w = certs.write(dir.path()).unwrap();
    let (cert, key) = (w.cert.display().to_string(), w.key.display().to_string());

    let (cp, ap, bp, fp) = (free_port(), free_port(), free_port(), free_port());
    // The published constructs a concerned Component's pin resolves against: an offline view
    // of the fixtures, or (--apiserver) a live view of a stand-in API server at a realistic size.
    let context = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/openchoreo/published")
        .display()
        .to_string();
    let as_apiserver = args.iter().any(|a| a == "--apiserver");
    let stand_in = as_apiserver.then(|| apiserver::FakeServer::start(populated_platform()));
    let (state, covenant_env) = match &stand_in {
        Some(server) => {
            let kubeconfig = dir.path().join("kubeconfig");
            std::fs::write(
                &kubeconfig,
                format!(
                    "apiVersion: v1\nkind: Config\nclusters: [{{name: stand-in, cluster: {{server: \"http://{}\"}}}}]\n\
                     users: [{{name: bench, user: {{}}}}]\ncontexts: [{{name: bench, context: {{cluster: stand-in, user: bench}}}}]\n\
                     current-context: bench\n",
                    server.addr
                ),
            )
            .unwrap();
            (vec!["--no-events".to_string()], vec![("KUBECONFIG", kubeconfig.display().to_string())])
        }
        None => (vec!["--context".to_string(), context.clone()], Vec::new()),
    };
    let covenant_args: Vec<String> = [
        "serve",
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
        "--threads",
        "1",
        // Logging as `deploy/deployment.yaml` runs it (the default level, JSON lines).
        "--log-level",
        "info",
        "--log-format",
        "json",
        "--listen",
        &format!("127.0.0.1:{cp}"),
        "--admin-listen",
        &format!("127.0.0.1:{ap}"),
        "--api-listen",
        "127.0.0.1:0",
    ]
    .iter()
    .map(|s| s.to_string())
    .chain(state)
    .collect();
    // The bare server on a port; the floor is the same binary with `--floor`. As the API
    // server sends them, all three share covenant's HTTP/2 transport, so only the work differs.
    let inline_streams = as_apiserver || args.iter().any(|a| a == "--inline-streams");
    let bare_on = |port: u16| -> Vec<String> {
        ["--cert", &cert, "--key", &key, "--threads", "1", "--listen", &format!("127.0.0.1:{port}")]
            .iter()
            .map(|s| s.to_string())
            .chain(inline_streams.then(|| "--inline-streams".to_string()))
            .collect()
    };
    let bare_args = bare_on(bp);
    let floor_args = [bare_on(fp), vec!["--floor".to_string()]].concat();
    let mut servers = vec![
        Server {
            name: "bare",
            child: spawn("bare", pinned, &bare_bin, &bare_args, &[]),
            addr: ([127, 0, 0, 1], bp).into(),
        },
        Server {
            name: "covenant",
            child: spawn("covenant", pinned, &covenant_bin, &covenant_args, &covenant_env),
            addr: ([127, 0, 0, 1], cp).into(),
        },
        Server {
            name: "floor",
            child: spawn("floor", pinned, &bare_bin, &floor_args, &[]),
            addr: ([127, 0, 0, 1], fp).into(),
        },
    ];
    for s in &servers {
        let until = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(s.addr).is_err() {
            assert!(Instant::now() < until, "{} did not start", s.name);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench");
    let small = Bytes::from(std::fs::read(fixtures.join("deployment-create-4k.json")).unwrap());
    let large = Bytes::from(std::fs::read(fixtures.join("crd-update-400k.json")).unwrap());
    let (component, application) = (concerned_component(), launcher_application(20));
    let as_sent = [
        (
            "Component CREATE (pin and parameters; live view of 1,000 constructs and 5,000 Components), HTTP/2, 1 conn x 8 streams",
            platform_component(),
            Proto::H2 { conns: 1, streams: 8 },
        ),
        (
            "Component CREATE (live view), HTTP/2, one request at a time",
            platform_component(),
            Proto::H2 { conns: 1, streams: 1 },
        ),
        ("Workload CREATE (live view), HTTP/2, 1 conn x 8 streams", workload(), Proto::H2 { conns: 1, streams: 8 }),
        (
            "4 KB Deployment CREATE (no rule concerns it), HTTP/2, 1 conn x 8 streams",
            small.clone(),
            Proto::H2 { conns: 1, streams: 8 },
        ),
    ];
    let scenarios = [
        ("4 KB Deployment CREATE, HTTP/1.1, 16 conns", small.clone(), Proto::H1 { conns: 16 }),
        (
            "4 KB Deployment CREATE, HTTP/2, 4 conns x 16 streams",
            small.clone(),
            Proto::H2 { conns: 4, streams: 16 },
        ),
        (
            "4 KB Deployment CREATE, HTTP/2, one request at a time (as the apiserver's latency)",
            small,
            Proto::H2 { conns: 1, streams: 1 },
        ),
        (
            "4 KB Component CREATE (pin resolved, parameters validated), HTTP/1.1, 16 conns",
            component.clone(),
            Proto::H1 { conns: 16 },
        ),
        (
            "4 KB Component CREATE, HTTP/2, 4 conns x 16 streams",
            component,
            Proto::H2 { conns: 4, streams: 16 },
        ),
        (
            "launcher Application, 20 components, HTTP/1.1, 16 conns",
            application.clone(),
            Proto::H1 { conns: 16 },
        ),
        (
            "launcher Application, 20 components, HTTP/2, 4 conns x 16 streams",
            application,
            Proto::H2 { conns: 4, streams: 16 },
        ),
        ("390 KB CRD UPDATE, HTTP/1.1, 4 conns", large.clone(), Proto::H1 { conns: 4 }),
        ("390 KB CRD UPDATE, HTTP/2, 1 conn x 4 streams", large, Proto::H2 { conns: 1, streams: 4 }),
    ];
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap();
    // covenant serves once its caches are listed: /readyz says so.
    rt.block_on(async {
        let until = Instant::now() + Duration::from_secs(120);
        let readyz = format!("http://127.0.0.1:{ap}/readyz");
        while !reqwest::get(&readyz).await.is_ok_and(|r| r.status() == 200) {
            assert!(Instant::now() < until, "covenant did not become ready (its caches never synced?)");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
    println!(
        "covenant load bench: {rounds} rounds x {seconds} s per server and scenario; servers {}; CPU from each server's process CPU-time clock; \
         bare and floor run HTTP/2 streams {}",
        if pinned { "pinned to core 1 (taskset)" } else { "NOT pinned (no taskset)" },
        if inline_streams {
            "on the connection's task with 512 KiB frames, as covenant does"
        } else {
            "on a task each with 16 KiB frames"
        }
    );
    // `--only TEXT` runs the scenarios whose title contains it.
    let only = arg(&args, "--only");
    let mut scenarios: Vec<(String, Bytes, Proto)> =
        if as_apiserver { as_sent.to_vec() } else { scenarios.to_vec() }
            .into_iter()
            .filter(|(title, _, _)| only.as_ref().is_none_or(|o| title.contains(o.as_str())))
            .map(|(title, body, proto)| (title.to_string(), body, proto))
            .collect();
    if args.iter().any(|a| a == "--reverse") {
        scenarios.reverse();
    }
    if args.iter().any(|a| a == "--again") {
        if let Some((title, body, proto)) = scenarios.first().cloned() {
            scenarios.push((format!("{title} (again, after the rest)"), body, proto));
        }
    }
    for (title, body, proto) in scenarios {
        let mut per: Vec<Vec<Round>> = vec![Vec::new(); servers.len()];
        for r in 0..rounds {
            // Rotate which server goes first, so slow drift cancels.
            let n = servers.len();
            for i in (0..n).map(|k| (k + r) % n) {
                // A server that stopped is named with how it ended, not found later as a
                // refused connection.
                if let Ok(Some(status)) = servers[i].child.try_wait() {
                    panic!("{} exited before {title:?} round {r}: {status}", servers[i].name);
                }
                let s = &servers[i];
                let round = rt.block_on(run_round(
                    s.addr,
                    proto,
                    body.clone(),
                    &certs.ca_pem,
                    seconds,
                    s.child.id(),
                    ticks,
                ));
                per[i].push(round);
            }
        }
        println!("\n{title}");
        println!(
            "  {:<9} {:>10} {:>10} {:>10} {:>10} {:>14} {:>7}",
            "server", "req/s", "p50", "p99", "p99.9", "CPU µs/req", "errors"
        );
        for (i, s) in servers.iter().enumerate() {
            let rps = median(per[i].iter().map(|r| r.requests as f64 / r.wall).collect());
            let cpu = median(per[i].iter().map(|r| r.cpu * 1e6 / r.requests.max(1) as f64).collect());
            let mut lat: Vec<Duration> = per[i].iter().flat_map(|r| r.latencies.iter().copied()).collect();
            let (p50, p99, p999) =
                (percentile(&mut lat, 0.5), percentile(&mut lat, 0.99), percentile(&mut lat, 0.999));
            let errors: u64 = per[i].iter().map(|r| r.errors).sum();
            println!(
                "  {:<9} {:>10.0} {:>10.2?} {:>10.2?} {:>10.2?} {:>14.1} {:>7}",
                s.name, rps, p50, p99, p999, cpu, errors
            );
        }
        let ratios = |f: &dyn Fn(&Round) -> f64| -> Vec<f64> {
            (0..rounds).map(|r| f(&per[1][r]) / f(&per[0][r])).collect()
        };
        let per_request = |r: &Round| r.cpu / r.requests.max(1) as f64;
        let cpu_ratios = ratios(&per_request);
        // Latency ratios of the whole run's percentiles, and of each round's.
        let mean = |r: &Round| {
            r.latencies.iter().map(Duration::as_secs_f64).sum::<f64>() / r.latencies.len().max(1) as f64
        };
        let p99_of = |r: &Round| percentile(&mut r.latencies.clone(), 0.99).as_secs_f64();
        let (mean_ratios, p99_ratios) = (ratios(&mean), ratios(&p99_of));
        println!(
            "  covenant / bare: mean latency {:.2}x (rounds {}), p99 {:.2}x (rounds {})",
            median(mean_ratios.clone()),
            spread(&mean_ratios),
            median(p99_ratios.clone()),
            spread(&p99_ratios)
        );
        let rps_ratio = median(ratios(&|r| r.requests as f64 / r.wall));
        println!(
            "  covenant / bare: CPU per request {:.2}x (rounds {}), req/s {rps_ratio:.2}x (medians of per-round ratios)",
            median(cpu_ratios.clone()),
            spread(&cpu_ratios)
        );
        let net: Vec<f64> = (0..rounds)
            .map(|r| {
                let floor = per_request(&per[2][r]);
                (per_request(&per[1][r]) - floor) / (per_request(&per[0][r]) - floor)
            })
            .collect();
        println!(
            "  net of the floor: covenant's work / a Value parse's {:.2}x (rounds {}; median of per-round ratios)",
            median(net.clone()),
            spread(&net)
        );
    }
    for s in &mut servers {
        // SIGTERM first, so a server instrumented to write a profile at exit writes it
        // (docs/performance.md, profile-guided optimization).
        unsafe { libc::kill(s.child.id() as i32, libc::SIGTERM) };
        let until = Instant::now() + Duration::from_secs(15);
        while s.child.try_wait().ok().flatten().is_none() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = s.child.kill();
        let _ = s.child.wait();
    }
}

#[cfg(test)]
mod tests {
    use super::{median_interval, spread};

    #[test]
    fn the_median_interval_is_the_textbook_one() {
        // Under six rounds no pair of order statistics covers the median with 95%.
        assert_eq!(median_interval(5), None);
        assert_eq!(median_interval(6), Some(1));
        assert_eq!(median_interval(9), Some(2));
        assert_eq!(median_interval(15), Some(4));
        assert_eq!(median_interval(20), Some(6));
        let rounds: Vec<f64> = (1..=15).map(f64::from).collect();
        assert_eq!(spread(&rounds), "1.00–15.00; 95% CI 4.00–12.00");
        assert_eq!(spread(&[1.0, 2.0, 3.0]), "1.00–3.00");
    }
}
