//! Findings reach the people who own the objects: a denial at admission and an audit finding
//! become `events.k8s.io/v1` Events on the object in the stand-in API server (regarding the
//! object, reason the rule's slug, note the finding, reported by `covenant.dev/covenant`); a
//! dry run writes none; a burst of denials of one object writes one.

use crate::common;

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
    let text = covenant::metrics::render(&registry);
    let dropped: f64 = text
        .lines()
        .find(|l| l.starts_with("covenant_events_total{result=\"dropped\"}"))
        .and_then(|l| l.split_whitespace().last())
        .and_then(|n| n.parse().ok())
        .unwrap();
    assert!(dropped >= 29.0, "{text}");
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
