//! The background audit over the OpenChoreo samples as a cluster's stored objects: it finds
//! exactly what the engine finds for each object judged one by one (the webhook's and
//! check's engine), exports the counts as `covenant_audit_findings{rule,kind}`, caps the
//! summary it serves, paces itself, stops between pages, and the real binary serves the
//! summary at `/api/v0/audit` on the admin listener.

use crate::common;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use covenant::audit::{Auditor, Options, Summary};
use covenant::cluster::{ClusterView, OfflineCluster};
use covenant::config::Config;
use covenant::engine::Engine;
use covenant::metrics::Metrics;
use covenant::subject::Subject;
use serde_json::Value;

pub(crate) fn samples_dir() -> std::path::PathBuf {
    common::fixtures().join("openchoreo/samples")
}

pub(crate) fn options(config: &Config) -> Options {
    Options {
        interval: Duration::from_secs(3600),
        page_size: 4,
        rate: 0.0,
        summary_limit: 100,
        kinds: config.cluster_kinds(),
        lookup_budget: Duration::from_secs(5),
    }
}

/// Start an audit, wait for its first run, return the summary and the metrics text.
fn first_run(options: Options) -> (Summary, String) {
    let config = Config::embedded().unwrap();
    let cluster: Arc<dyn ClusterView> = Arc::new(OfflineCluster::load_dir(&samples_dir()).unwrap());
    let registry = prometheus::Registry::new();
    let metrics = Metrics::register(&registry).unwrap();
    let auditor = Auditor::new(Arc::new(Engine::new(&config)), cluster, metrics, options);
    let handle = auditor.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let summary = loop {
        let s = handle.status.summary();
        if s.last_run.is_some() {
            break s;
        }
        assert!(Instant::now() < deadline, "no audit run finished");
        std::thread::sleep(Duration::from_millis(20));
    };
    handle.stop();
    (summary, covenant::metrics::render(&registry))
}

/// (rule, kind, namespace/name, pointer) of every finding.
type Row = (String, String, String, String);

#[test]
fn the_audit_finds_what_the_engine_finds_object_by_object() {
    let config = Config::embedded().unwrap();
    let (summary, metrics) = first_run(options(&config));
    let run = summary.last_run.unwrap();

    // The same engine over the same stored objects, one at a time.
    let cluster = OfflineCluster::load_dir(&samples_dir()).unwrap();
    let engine = Engine::new(&config);
    let mut expected = BTreeSet::new();
    let mut judged = 0;
    for (group, kind) in config.cluster_kinds() {
        for object in cluster.list(&group, &kind, None, None).unwrap() {
            judged += 1;
            let subject = Subject::from_stored((*object).clone(), SystemTime::now());
            for f in engine.evaluate(&subject, &cluster).findings {
                let key = format!("{}/{}", subject.namespace.clone().unwrap_or_default(), subject.name);
                expected.insert((f.rule.id.to_string(), kind.clone(), key, f.pointer));
            }
        }
    }
    let found: BTreeSet<Row> = run
        .items
        .iter()
        .map(|i| {
            let key = format!("{}/{}", i.namespace.clone().unwrap_or_default(), i.name);
            (i.rule.to_string(), i.kind.clone(), key, i.pointer.clone())
        })
        .collect();
    assert_eq!(found, expected);
    assert_eq!(run.objects, judged);
    assert!(run.objects > 20, "the samples hold many stored objects: {}", run.objects);
    // What the samples really carry: five floating images and one parameter the type does
    // not declare (see tests/integration/versioning.rs).
    assert_eq!(run.findings, 6);
    assert_eq!(run.by_rule.get("CVN-407"), Some(&5));
    assert_eq!(run.by_rule.get("CVN-107"), Some(&1));
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert!(!run.truncated);

    // The counts are exported per rule and kind.
    assert!(metrics.contains("covenant_audit_findings{kind=\"Workload\",rule=\"CVN-407\"} 5"), "{metrics}");
    assert!(metrics.contains("covenant_audit_findings{kind=\"Component\",rule=\"CVN-107\"} 1"), "{metrics}");
    assert!(metrics.contains("covenant_audit_runs_total{result=\"complete\"} 1"), "{metrics}");
    let objects = format!("covenant_audit_objects{{kind=\"Workload\"}} {}", run.objects_by_kind["Workload"]);
    assert!(metrics.contains(&objects), "{metrics}");
}

#[test]
fn the_summary_is_capped_but_the_counts_are_whole() {
    let config = Config::embedded().unwrap();
    let (summary, _) = first_run(Options { summary_limit: 2, ..options(&config) });
    let run = summary.last_run.unwrap();
    assert_eq!(run.items.len(), 2);
    assert!(run.truncated);
    assert_eq!(run.findings, 6);
    // The first two in (rule, kind, namespace, name, pointer) order.
    assert_eq!(run.items[0].rule, "CVN-107");
    assert_eq!(run.items[1].rule, "CVN-407");
    let body = serde_json::to_value(&run).unwrap();
    assert_eq!((body["limit"].clone(), body["truncated"].clone()), (2.into(), true.into()));
}

#[test]
fn the_walk_is_paced_to_the_rate_and_stops_between_pages() {
    let config = Config::embedded().unwrap();
    // Paced: 60 objects a second in pages of 4, so the walk takes at least (n - 4) / 60 s.
    let (summary, _) = first_run(Options { rate: 60.0, ..options(&config) });
    let run = summary.last_run.unwrap();
    let floor = (run.objects - 4) as f64 / 60.0;
    assert!(run.duration_seconds >= floor, "{} s for {} objects", run.duration_seconds, run.objects);

    // At one object a second the walk would take most of a minute; stopping does not wait
    // for it.
    let cluster: Arc<dyn ClusterView> = Arc::new(OfflineCluster::load_dir(&samples_dir()).unwrap());
    let registry = prometheus::Registry::new();
    let auditor = Auditor::new(
        Arc::new(Engine::new(&config)),
        cluster,
        Metrics::register(&registry).unwrap(),
        Options { rate: 1.0, ..options(&config) },
    );
    let handle = auditor.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    assert!(handle.status.summary().running);
    let started = Instant::now();
    handle.stop();
    assert!(started.elapsed() < Duration::from_secs(5), "stop waited {:?}", started.elapsed());
}

#[test]
fn the_binary_serves_the_audit_summary_on_the_read_api() {
    let dir = tempfile::tempdir().unwrap();
    let samples = samples_dir();
    let dev = crate::common::dev::DevServer::start(
        dir.path(),
        &["--context", samples.to_str().unwrap(), "--audit-interval", "1h", "--audit-rate", "0"],
    );
    let (admin, api) = (dev.addr("admin"), dev.addr("api"));
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (summary, metrics) = rt.block_on(async {
        let http = reqwest::Client::new();
        let deadline = Instant::now() + Duration::from_secs(60);
        let summary = loop {
            let r = http.get(format!("http://{api}/api/v0/audit")).send().await.unwrap();
            assert_eq!(r.status(), 200);
            let body: Value = r.json().await.unwrap();
            if body.get("lastRun").is_some() {
                break body;
            }
            assert!(Instant::now() < deadline, "no audit run finished: {body}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        let metrics = http.get(format!("http://{admin}/metrics")).send().await.unwrap().text().await.unwrap();
        // The admin listener (reachable from the cluster) does not serve the read API.
        let elsewhere = http.get(format!("http://{admin}/api/v0/audit")).send().await.unwrap();
        assert_eq!(elsewhere.status(), 404);
        assert!(elsewhere.text().await.unwrap().contains("port-forward"));
        (summary, metrics)
    });
    drop(dev);
    assert_eq!(summary["kind"], "AuditSummary");
    assert_eq!(summary["intervalSeconds"], 3600.0);
    assert_eq!(summary["lastRun"]["findings"], 6);
    assert_eq!(summary["lastRun"]["byRule"]["CVN-407"], 5);
    let item = &summary["lastRun"]["items"][0];
    for member in ["rule", "action", "apiVersion", "kind", "namespace", "name", "pointer", "message"] {
        assert!(item.get(member).is_some(), "{member} missing from {item}");
    }
    assert!(metrics.contains("covenant_audit_findings{kind=\"Workload\",rule=\"CVN-407\"} 5"), "{metrics}");
}

#[tokio::test]
async fn without_an_interval_the_audit_route_says_how_to_start_one() {
    let server = common::TestServer::start().await;
    let r = reqwest::get(format!("http://{}/api/v0/audit", server.api)).await.unwrap();
    assert_eq!(r.status(), 404);
    assert_eq!(r.headers()["content-type"], "application/problem+json");
    let body: Value = r.json().await.unwrap();
    assert!(body["detail"].as_str().unwrap().contains("--audit-interval"), "{body}");
}
