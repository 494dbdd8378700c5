//! The audit's findings as OpenReports in the stand-in API server (which serves the OpenReports
//! kinds, and answers server-side apply by creating or replacing the applied object): a Report
//! per namespace with findings, one result per finding with the rule id and slug; the report
//! goes when its namespace is clean; nothing is written when the CRDs are not served; a report
//! holds at most 500 results and counts the rest.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use covenant::audit::Auditor;
use covenant::cluster::reports::{report, Finding, Findings, Reports, MAX_RESULTS, NAME};
use covenant::cluster::{ClusterView, OfflineCluster};
use covenant::config::Config;
use covenant::engine::Engine;
use covenant::metrics::Metrics;
use serde_json::Value;

fn serving_openreports() -> common::apiserver::Fake {
    let mut fake = common::apiserver::Fake::default();
    fake.resources.push(("openreports.io".into(), "reports".into(), "Report".into(), true));
    fake.resources.push(("openreports.io".into(), "clusterreports".into(), "ClusterReport".into(), false));
    fake
}

/// One audit run over `cluster`, writing reports to `api`; waits for the run to finish.
fn audit_once(api: &common::apiserver::FakeServer, cluster: Arc<dyn ClusterView>) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let client = {
        let _guard = rt.enter();
        kube::Client::try_from(kube::Config::new(format!("http://{}", api.addr).parse().unwrap())).unwrap()
    };
    let config = Config::embedded().unwrap();
    let registry = prometheus::Registry::new();
    let handle = Auditor::new(
        Arc::new(Engine::new(&config)),
        cluster,
        Metrics::register(&registry).unwrap(),
        crate::audit::options(&config),
    )
    .with_reports(Reports::new(client), rt.handle().clone())
    .spawn()
    .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while handle.status.summary().last_run.is_none() {
        assert!(Instant::now() < deadline, "no audit run finished");
        std::thread::sleep(Duration::from_millis(20));
    }
    handle.stop();
}

fn samples() -> Arc<dyn ClusterView> {
    Arc::new(OfflineCluster::load_dir(&crate::audit::samples_dir()).unwrap())
}

#[test]
fn a_report_per_namespace_with_findings_and_none_once_it_is_clean() {
    let api = common::apiserver::FakeServer::start(serving_openreports());
    audit_once(&api, samples());
    let reports = api.written_all("openreports.io", "reports");
    assert!(!reports.is_empty(), "no Report written");
    let r: &Value = reports.iter().find(|r| r["results"].as_array().is_some_and(|x| !x.is_empty())).unwrap();
    assert_eq!(r["metadata"]["name"], NAME);
    assert_eq!(r["metadata"]["labels"]["app.kubernetes.io/managed-by"], "covenant");
    assert_eq!(r["source"], "covenant");
    let result =
        r["results"].as_array().unwrap().iter().find(|x| x["policy"] == "CVN-407").expect("a CVN-407 result");
    assert_eq!(result["rule"], "floating-image");
    assert_eq!(result["result"], "fail");
    assert_eq!(result["resources"][0]["kind"], "Workload");
    assert_eq!(result["resources"][0]["namespace"], r["metadata"]["namespace"]);
    assert!(result["properties"]["pointer"].as_str().is_some_and(|p| p.starts_with('/')), "{result}");
    let fails = r["results"].as_array().unwrap().iter().filter(|x| x["result"] == "fail").count();
    assert_eq!(r["summary"]["fail"], fails, "{}", r["summary"]);
    // The namespace is clean now (its objects gone): its report goes.
    audit_once(&api, Arc::new(OfflineCluster::from_objects(Vec::<Value>::new())));
    assert!(api.written_all("openreports.io", "reports").is_empty(), "a clean namespace kept its Report");
}

#[test]
fn nothing_is_written_when_the_openreports_crds_are_not_served() {
    let api = common::apiserver::FakeServer::start(common::apiserver::Fake::default());
    audit_once(&api, samples());
    assert!(api.written_all("openreports.io", "reports").is_empty());
    assert_eq!(api.patches(), 0);
}

#[test]
fn a_report_holds_500_results_and_counts_every_finding() {
    let mut findings = Findings::default();
    for i in 0..10_000 {
        findings.add(Finding {
            rule: "CVN-407",
            slug: "floating-image",
            fails: i % 4 != 0,
            api_version: "openchoreo.dev/v1alpha1".into(),
            kind: "Workload".into(),
            name: format!("w{i}"),
            uid: None,
            pointer: "/spec/container/image".into(),
            message: "floats".into(),
            fix: None,
        });
    }
    let r = report(Some("team-a"), &findings, 0);
    assert_eq!(r["results"].as_array().unwrap().len(), MAX_RESULTS);
    assert_eq!(r["summary"]["fail"], 7_500);
    assert_eq!(r["summary"]["warn"], 2_500);
    assert!(
        serde_json::to_vec(&r).unwrap().len() < 512 * 1024,
        "a report stays well under etcd's object limit"
    );
}
