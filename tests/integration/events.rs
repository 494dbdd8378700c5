//! Findings reach the people who own the objects: a denial at admission and an audit finding
//! become `events.k8s.io/v1` Events on the object in the stand-in API server (regarding the
//! object, reason the rule's slug, note the finding, reported by `covenant.dev/covenant`); a
//! dry run writes none; a burst of denials of one object writes one.

use crate::common::{self, free_port, Process};

use std::sync::Arc;
use std::time::{Duration, Instant};

use covenant::cluster::events::{start, Limits};
use serde_json::{json, Value};

fn client(server: &common::apiserver::FakeServer) -> kube::Client {
    kube::Client::try_from(kube::Config::new(format!("http://{}", server.addr).parse().unwrap())).unwrap()
}

/// A Workload whose image floats (`:latest`): denied by CVN-407.
fn floating(name: &str, dry_run: bool) -> String {
    let workload = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Workload",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"owner": {"projectName": "p", "componentName": name},
                 "container": {"image": "ghcr.io/acme/web:latest"}}});
    let mut review = common::review(name, "openchoreo.dev", "Workload", workload);
    review["request"]["kind"]["version"] = json!("v1alpha1");
    review["request"]["dryRun"] = json!(dry_run);
    review.to_string()
}

fn events_about(server: &common::apiserver::FakeServer, name: &str) -> Vec<Value> {
    server
        .written_all("events.k8s.io", "events")
        .into_iter()
        .filter(|e| e["regarding"]["name"] == name)
        .collect()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

#[test]
fn a_denial_is_an_event_on_the_object_and_a_dry_run_writes_none() {
    let api = common::apiserver::FakeServer::start(common::apiserver::Fake::default());
    runtime().block_on(denials(&api));
}

async fn denials(api: &common::apiserver::FakeServer) {
    let registry = prometheus::Registry::new();
    let metrics = covenant::metrics::Metrics::register(&registry).unwrap();
    let sink = start(client(api), Some("covenant-a".into()), Limits::default(), metrics);
    let server =
        common::TestServer::with(common::Setup { events: Some(sink), ..common::Setup::default() }).await;
    let (c, url) = (server.h2(), server.url("/api/v0/validate"));
    for (name, dry) in [("web", false), ("rehearsal", true)] {
        let got: Value = common::post(&c, &url, floating(name, dry)).await.json().await.unwrap();
        assert_eq!(got["response"]["allowed"], false, "{got}");
    }
    // A burst of denials of one object: one Event, the rest dropped by the per-object limit.
    for _ in 0..30 {
        common::post(&c, &url, floating("burst", false)).await;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while events_about(api, "web").is_empty() || events_about(api, "burst").is_empty() {
        assert!(Instant::now() < deadline, "no Event for the denials");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let web = &events_about(api, "web")[0];
    assert_eq!(web["regarding"]["kind"], "Workload");
    assert_eq!(web["regarding"]["namespace"], "default");
    assert_eq!(web["reason"], "floating-image", "{web}");
    assert_eq!(web["reportingController"], "covenant.dev/covenant");
    assert_eq!(web["reportingInstance"], "covenant-a");
    assert_eq!(web["action"], "Denied");
    assert_eq!(web["type"], "Warning");
    assert!(web["note"].as_str().unwrap().starts_with("CVN-407"), "{web}");
    assert!(events_about(api, "rehearsal").is_empty(), "a dry run wrote an Event");
    assert_eq!(events_about(api, "burst").len(), 1);
    assert_eq!(api.patches(), 0, "the repeats were dropped, not counted into a series");
    let dropped = counted(&registry, "dropped");
    assert!(dropped >= 29.0, "{}", covenant::metrics::render(&registry));
}

/// The leader's audit tells each object it finds something on.
#[test]
fn an_audit_finding_is_an_event_on_the_object() {
    let api = common::apiserver::FakeServer::start(common::apiserver::Fake::default());
    runtime().block_on(audited(&api));
}

async fn audited(api: &common::apiserver::FakeServer) {
    let registry = prometheus::Registry::new();
    let metrics = covenant::metrics::Metrics::register(&registry).unwrap();
    let sink = start(client(api), None, Limits::default(), metrics);
    let config = covenant::config::Config::embedded().unwrap();
    let cluster: Arc<dyn covenant::cluster::ClusterView> =
        Arc::new(covenant::cluster::OfflineCluster::load_dir(&crate::audit::samples_dir()).unwrap());
    let server = common::TestServer::with(common::Setup {
        cluster: Some(cluster),
        audit: Some(crate::audit::options(&config)),
        events: Some(sink),
        ..common::Setup::default()
    })
    .await;
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let audited: Vec<Value> = api
            .written_all("events.k8s.io", "events")
            .into_iter()
            .filter(|e| e["action"] == "Audited")
            .collect();
        if audited.iter().any(|e| e["reason"] == "floating-image" && e["regarding"]["kind"] == "Workload") {
            break;
        }
        assert!(Instant::now() < deadline, "no Event from the audit: {audited:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(server);
}

/// Lease timings short enough for a test.
const TIMING: covenant::cluster::lease::Timing = covenant::cluster::lease::Timing {
    lease: Duration::from_secs(2),
    renew_deadline: Duration::from_millis(1500),
    retry: Duration::from_millis(200),
};

/// One replica of two: its election, its sink's metrics, its server.
struct Replica {
    leadership: covenant::cluster::lease::Leadership,
    registry: prometheus::Registry,
    server: common::TestServer,
    election: tokio::task::JoinHandle<()>,
}

/// A replica named `name` serving `pair` (both replicas mount the same Secret), electing
/// through `api`.
async fn replica(
    api: &common::apiserver::FakeServer,
    name: &str,
    pair: &covenant::certs::DevCerts,
) -> Replica {
    let leases = kube::Api::namespaced(client(api), "covenant-system");
    let (leadership, election) = covenant::cluster::lease::elect(leases, "covenant-leader", name, TIMING);
    let registry = prometheus::Registry::new();
    let metrics = covenant::metrics::Metrics::register(&registry).unwrap();
    let sink = start(client(api), Some(name.into()), Limits::default(), metrics);
    let dir = tempfile::tempdir().unwrap();
    let written = pair.write(dir.path()).unwrap();
    let server = common::TestServer::with(common::Setup {
        events: Some(sink),
        cert: Some(covenant::server::CertPaths { cert: written.cert, key: written.key }),
        ca_pem: Some(pair.ca_pem.clone()),
        dir: Some(dir),
        peers: Some(covenant::server::Peers {
            listen: "127.0.0.1:0".parse().unwrap(),
            host: Some("127.0.0.1".into()),
            leadership: leadership.clone(),
        }),
        ..common::Setup::default()
    })
    .await;
    Replica { leadership, registry, server, election }
}

fn counted(registry: &prometheus::Registry, result: &str) -> f64 {
    let text = covenant::metrics::render(registry);
    let line = format!("covenant_events_total{{result=\"{result}\"}}");
    text.lines()
        .find(|l| l.starts_with(&line))
        .and_then(|l| l.split_whitespace().last())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0.0)
}

/// `counted` once it has reached `n`, or after 5 s whatever it reads: a replica counts an
/// Event written or handed on once the API server or the leader has answered, so a test
/// that has just seen the Event can read the count a moment before it moves.
async fn counted_when(registry: &prometheus::Registry, result: &str, n: f64) -> f64 {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let now = counted(registry, result);
        if now >= n || Instant::now() > deadline {
            return now;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A TLS client of the peer listener that takes any server certificate and presents
/// `identity` (or nothing).
fn peer_client(identity: Option<&covenant::certs::DevCerts>) -> reqwest::Client {
    let mut builder = reqwest::Client::builder()
        .use_rustls_tls()
        .danger_accept_invalid_certs(true)
        .timeout(Duration::from_secs(5));
    if let Some(pair) = identity {
        let pem = format!("{}{}", pair.cert_pem, pair.key_pem);
        builder = builder.identity(reqwest::Identity::from_pem(pem.as_bytes()).unwrap());
    }
    builder.build().unwrap()
}

/// Two replicas elect one leader, and only the leader writes: a denial made by the replica
/// that does not lead is handed to the leader over the peer listener and written by it (the
/// Event's reporting instance is the leader's), the leader's per-object limit holds for both
/// (the same denial made by each is one Event), and the peer listener lets in nobody but a
/// replica: no client certificate, or any certificate but the serving one, gets no request
/// through, a replica that does not lead writes nothing it is handed, and a hand is bounded
/// (256 KiB, 64 events) and each member known. When the leader
/// dies, the other takes over within the lease and writes its own.
#[test]
fn a_denial_made_by_a_replica_that_does_not_lead_is_written_by_the_leader() {
    let api = common::apiserver::FakeServer::start(common::apiserver::Fake::default());
    runtime().block_on(two_replicas(&api));
}

async fn two_replicas(api: &common::apiserver::FakeServer) {
    let pair = covenant::certs::DevCerts::generate(&["localhost".into(), "127.0.0.1".into()], 2).unwrap();
    let a = replica(api, "covenant-a", &pair).await;
    let b = replica(api, "covenant-b", &pair).await;
    let deadline = Instant::now() + Duration::from_secs(10);
    // A leader, and the other knowing where it is reached.
    while !(a.leadership.leading() || b.leadership.leading())
        || [&a, &b].iter().all(|r| r.leadership.leader_address().is_none())
    {
        assert!(Instant::now() < deadline, "no leader, or its address is unknown");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (leader, follower) = if a.leadership.leading() { (&a, &b) } else { (&b, &a) };
    let lease = api.written("coordination.k8s.io", "covenant-system", "leases", "covenant-leader").unwrap();
    assert_eq!(
        lease["metadata"]["annotations"]["covenant.dev/peer-address"],
        json!(leader.server.peer.unwrap().to_string()),
        "{lease}"
    );

    // The follower denies; the leader writes.
    let deny = |server: &common::TestServer, name: &str| {
        let (c, url) = (server.h2(), server.url("/api/v0/validate"));
        let body = floating(name, false);
        async move {
            let got: Value = common::post(&c, &url, body).await.json().await.unwrap();
            assert_eq!(got["response"]["allowed"], false, "{got}");
        }
    };
    deny(&follower.server, "web").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while events_about(api, "web").is_empty() {
        assert!(Instant::now() < deadline, "no Event for the follower's denial");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let web = &events_about(api, "web")[0];
    assert_eq!(web["reportingInstance"], json!(leader.leadership.identity), "{web}");
    assert_eq!(web["reason"], "floating-image");
    assert_eq!(web["action"], "Denied");
    assert_eq!(counted_when(&follower.registry, "forwarded", 1.0).await, 1.0);
    assert_eq!(counted(&follower.registry, "written"), 0.0, "the follower wrote an Event");

    // One object denied by both replicas: one Event, the leader's limit holding for both.
    deny(&leader.server, "twice").await;
    deny(&follower.server, "twice").await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(events_about(api, "twice").len(), 1);
    assert_eq!(counted(&follower.registry, "forwarded"), 2.0);
    assert_eq!(counted(&leader.registry, "dropped"), 1.0, "the repeat was not dropped by the leader");

    // Nobody but a replica gets a request through the peer listener.
    let event = json!([{"regarding": {"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Workload",
        "namespace": "default", "name": "forged"}, "reason": "floating-image", "note": "forged",
        "action": "Denied"}]);
    let url = |r: &Replica| format!("https://{}{}", r.server.peer.unwrap(), covenant::server::peer::PATH);
    let stranger = covenant::certs::DevCerts::generate(&["localhost".into(), "127.0.0.1".into()], 2).unwrap();
    for (who, client) in
        [("no certificate", peer_client(None)), ("another certificate", peer_client(Some(&stranger)))]
    {
        let sent = client.post(url(leader)).json(&event).send().await;
        assert!(sent.is_err(), "{who}: a request went through: {sent:?}");
    }
    // A replica: the follower writes nothing it is handed; the leader checks what it takes.
    let replica = peer_client(Some(&pair));
    let answered = replica.post(url(follower)).json(&event).send().await.unwrap();
    assert_eq!(answered.status(), 503);
    let mut unknown = event.clone();
    unknown[0]["extra"] = json!(1);
    let answered = replica.post(url(leader)).json(&unknown).send().await.unwrap();
    assert_eq!(answered.status(), 400);
    assert!(answered.text().await.unwrap().contains("unknown field `extra`"));
    let mut action = event.clone();
    action[0]["action"] = json!("Deleted");
    let answered = replica.post(url(leader)).json(&action).send().await.unwrap();
    assert_eq!(answered.status(), 400);
    assert!(answered.text().await.unwrap().contains("/0/action: found \"Deleted\""));
    // Bounded: 256 KiB a hand, 64 events.
    let huge = json!([{"regarding": {"name": "forged"}, "reason": "r", "note": "x".repeat(300 * 1024), "action": "Denied"}]);
    let answered = replica.post(url(leader)).json(&huge).send().await.unwrap();
    assert_eq!(answered.status(), 413);
    let many = serde_json::Value::Array(vec![event[0].clone(); 65]);
    let answered = replica.post(url(leader)).json(&many).send().await.unwrap();
    assert_eq!(answered.status(), 400);
    assert!(answered.text().await.unwrap().contains("65 events handed at once; 64 at most"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(events_about(api, "forged").is_empty(), "a refused hand was written");

    // The leader dies: the other replica leads within the lease and writes its own.
    leader.election.abort();
    let deadline = Instant::now() + TIMING.lease + Duration::from_secs(3);
    while !follower.leadership.leading() {
        assert!(Instant::now() < deadline, "the follower did not take over");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    deny(&follower.server, "after").await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while events_about(api, "after").is_empty() {
        assert!(Instant::now() < deadline, "no Event from the new leader");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(events_about(api, "after")[0]["reportingInstance"], json!(follower.leadership.identity));
    assert_eq!(counted_when(&follower.registry, "written", 1.0).await, 1.0);
}

/// As it ships: two `covenant serve` processes against the stand-in API server, each given
/// its pod's name, namespace and IP as `deploy/deployment.yaml` gives them and the one key
/// pair of the Secret. They elect one leader, which names its peer address in the Lease; a
/// denial made by the other is written by the leader; and the leader, stopped by SIGTERM,
/// releases the Lease so the other leads within its next try.
#[test]
fn two_serve_processes_write_every_denial_from_the_leader() {
    let mut fake = common::apiserver::Fake::default();
    for (kind, namespaced) in [("ClusterComponentType", false), ("Component", true)] {
        fake.serve_openchoreo(kind, namespaced);
    }
    let api = common::apiserver::FakeServer::start(fake);
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = common::apiserver::kubeconfig(dir.path(), api.addr);
    let pair = covenant::certs::DevCerts::generate(&["localhost".into(), "127.0.0.1".into()], 2).unwrap();
    let written = pair.write(&dir.path().join("tls")).unwrap();
    let start = |name: &str| {
        let (webhook, admin) = (free_port(), free_port());
        let child = std::process::Command::new(env!("CARGO_BIN_EXE_covenant"))
            .env("KUBECONFIG", &kubeconfig)
            .env("POD_NAME", name)
            .env("POD_NAMESPACE", "covenant-system")
            .env("POD_IP", "127.0.0.1")
            .args(["serve", "--log-level", "warn", "--tls-cert"])
            .arg(&written.cert)
            .arg("--tls-key")
            .arg(&written.key)
            .args([
                "--listen",
                &format!("127.0.0.1:{webhook}"),
                "--admin-listen",
                &format!("127.0.0.1:{admin}"),
            ])
            .args(["--api-listen", "127.0.0.1:0", "--peer-listen", "127.0.0.1:0"])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        (Process(child), webhook, admin)
    };
    let (mut a, webhook_a, admin_a) = start("covenant-a");
    let (mut b, webhook_b, admin_b) = start("covenant-b");
    runtime().block_on(async {
        let http = reqwest::Client::builder()
            .use_rustls_tls()
            .danger_accept_invalid_certs(true)
            .timeout(Duration::from_secs(5))
            .build()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        for admin in [admin_a, admin_b] {
            while !http
                .get(format!("http://127.0.0.1:{admin}/readyz"))
                .send()
                .await
                .is_ok_and(|r| r.status() == 200)
            {
                assert!(Instant::now() < deadline, "a replica did not become ready");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        // Who leads, as the Lease says, with the address it named.
        let lease = loop {
            let lease = api.written("coordination.k8s.io", "covenant-system", "leases", "covenant-leader");
            if let Some(l) =
                lease.filter(|l| l["metadata"]["annotations"]["covenant.dev/peer-address"].is_string())
            {
                break l;
            }
            assert!(Instant::now() < deadline, "no Lease naming the leader's peer address");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let leader = lease["spec"]["holderIdentity"].as_str().unwrap().to_string();
        let address = lease["metadata"]["annotations"]["covenant.dev/peer-address"].as_str().unwrap();
        assert!(address.starts_with("127.0.0.1:"), "{lease}");
        let (follower_webhook, follower_admin) =
            if leader == "covenant-a" { (webhook_b, admin_b) } else { (webhook_a, admin_a) };
        // The follower learns the address at its next read of the Lease (every 2 s; two
        // reads' time, for a busy machine).
        tokio::time::sleep(Duration::from_millis(4500)).await;
        let answer: Value = http
            .post(format!("https://127.0.0.1:{follower_webhook}/api/v0/validate"))
            .header("content-type", "application/json")
            .body(floating("web", false))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(answer["response"]["allowed"], false, "{answer}");
        while events_about(&api, "web").is_empty() {
            assert!(
                Instant::now() < deadline + Duration::from_secs(10),
                "no Event for the follower's denial"
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let web = &events_about(&api, "web")[0];
        assert_eq!(web["reportingInstance"], json!(leader), "{web}");
        let metrics = http
            .get(format!("http://127.0.0.1:{follower_admin}/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(metrics.contains("covenant_events_total{result=\"forwarded\"} 1"), "{metrics}");
    });
    // SIGTERM to the leader: it releases the Lease as it stops, and the other replica takes
    // it at its next try (2 s), not once the 15 s lease has run out.
    let (leader_process, follower_name) =
        if leader_of(&api) == "covenant-a" { (&mut a, "covenant-b") } else { (&mut b, "covenant-a") };
    let stopped = Instant::now();
    let pid = leader_process.0.id().to_string();
    assert!(std::process::Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    while leader_of(&api) != follower_name {
        assert!(
            stopped.elapsed() < Duration::from_secs(8),
            "the other replica did not take the released Lease"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    eprintln!("the other replica led {:?} after SIGTERM to the leader", stopped.elapsed());
}

fn leader_of(api: &common::apiserver::FakeServer) -> String {
    let lease = api.written("coordination.k8s.io", "covenant-system", "leases", "covenant-leader");
    lease.and_then(|l| l["spec"]["holderIdentity"].as_str().map(str::to_string)).unwrap_or_default()
}
