//! The Grafana dashboard and the alert rules in `deploy/` name only metrics covenant exports:
//! a server on loopback answers real traffic (a denial found through cluster lookups, a
//! patch, a refused body), and every `covenant_*` metric the dashboard and the rules use is in
//! its `/metrics` output.

use crate::common;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use covenant::cluster::OfflineCluster;
use covenant::config::Config;
use serde_json::{json, Value};

/// Every `covenant_*` metric family an expression names (histogram series folded into their
/// family).
fn metric_names(expr: &str, out: &mut BTreeSet<String>) {
    let bytes = expr.as_bytes();
    let mut i = 0;
    while let Some(at) = expr[i..].find("covenant_") {
        let start = i + at;
        let mut end = start;
        while end < bytes.len()
            && (bytes[end].is_ascii_lowercase() || bytes[end] == b'_' || bytes[end].is_ascii_digit())
        {
            end += 1;
        }
        let mut name = &expr[start..end];
        for suffix in ["_bucket", "_sum", "_count"] {
            if let Some(base) = name.strip_suffix(suffix).filter(|b| b.ends_with("_seconds")) {
                name = base;
            }
        }
        out.insert(name.to_string());
        i = end;
    }
}

fn expressions() -> (Vec<String>, Vec<String>) {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy");
    let dashboard: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("grafana/covenant.json")).unwrap()).unwrap();
    let panels: Vec<String> = dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| {
            p["targets"].as_array().unwrap().iter().map(|t| t["expr"].as_str().unwrap().to_string())
        })
        .collect();
    let text = std::fs::read_to_string(root.join("prometheus/rules.yaml")).unwrap();
    let (docs, err) = covenant::source::parse_stream(&text);
    assert!(err.is_none(), "{err:?}");
    let rules: Vec<String> = docs[0].value["groups"][0]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert!(r["alert"].is_string() && r["annotations"]["summary"].is_string(), "{r}");
            r["expr"].as_str().unwrap().to_string()
        })
        .collect();
    (panels, rules)
}

#[tokio::test(flavor = "multi_thread")]
async fn every_metric_the_dashboard_and_alerts_name_is_exported() {
    let (panels, rules) = expressions();
    assert!(panels.len() >= 10 && rules.len() >= 5);
    let mut names = BTreeSet::new();
    for e in panels.iter().chain(&rules) {
        metric_names(e, &mut names);
    }
    assert!(names.len() >= 8, "{names:?}");

    // The published constructs, and a stored Component whose pin no longer resolves: the
    // background audit finds it.
    let component = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Component",
        "metadata": {"name": "bakery-web", "namespace": "bakery"},
        "spec": {"componentType": {"kind": "ClusterComponentType", "name": "deployment/ruby-service", "version": "9"}}});
    let mut stored: Vec<Value> = Vec::new();
    for file in covenant::source::discover(&common::fixtures().join("openchoreo/published")).unwrap() {
        let text = std::fs::read_to_string(file).unwrap();
        stored.extend(covenant::source::parse_stream(&text).0.into_iter().map(|d| d.value));
    }
    stored.push(component.clone());
    let published = OfflineCluster::from_objects(stored);
    let config = Config::from_text(
        "c.yaml",
        "apiVersion: covenant.dev/v1alpha1\nkind: Config\nrules:\n  actions: {CVN-501: mutate, CVN-502: mutate}\n",
        None,
    )
    .unwrap();
    let server = common::TestServer::with(common::Setup {
        config,
        cluster: Some(Arc::new(published)),
        audit: Some(covenant::audit::Options {
            interval: Duration::from_secs(3600),
            page_size: 10,
            rate: 0.0,
            summary_limit: 10,
            kinds: config_kinds(),
            lookup_budget: Duration::from_secs(5),
        }),
        ..common::Setup::default()
    })
    .await;
    // A denial found through cluster lookups.
    let mut review = common::review("u-1", "openchoreo.dev", "Component", component);
    review["request"]["kind"]["version"] = json!("v1alpha1");
    let got: Value = common::post(&server.h2(), &server.url("/api/v0/validate"), review.to_string())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(got["response"]["allowed"], false);
    // A patch.
    let text =
        std::fs::read_to_string(common::fixtures().join("openchoreo/published/ruby-service.yaml")).unwrap();
    let mut construct = covenant::source::parse_stream(&text).0.remove(1).value;
    construct["metadata"]["labels"] = json!({});
    let mut review = common::review("u-2", "openchoreo.dev", "ClusterComponentType", construct);
    review["request"]["kind"]["version"] = json!("v1alpha1");
    let got: Value = common::post(&server.h2(), &server.url("/api/v0/mutate"), review.to_string())
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(got["response"]["patchType"], "JSONPatch");
    // A refused body.
    let resp = common::post(&server.h1(), &server.url("/api/v0/validate"), "{not json").await;
    assert_eq!(resp.status(), 400);

    // The audit's first run.
    let status = server.audit.as_ref().unwrap().status.clone();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while status.summary().last_run.is_none() {
        assert!(std::time::Instant::now() < deadline, "no audit run finished");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    let metrics = server.metrics().await;
    assert!(metrics.contains("covenant_audit_findings{kind=\"Component\",rule=\"CVN-406\"} 1"), "{metrics}");
    // The upgrade picture: the release froze ruby-service 1.1.0; nothing lacks a version.
    for line in [
        "covenant_upgrade_gap 0",
        "covenant_construct_consumers{how=\"frozen\",kind=\"ClusterComponentType\",name=\"ruby-service\",version=\"1.1.0\"} 1",
        "covenant_consumers_outside_window{kind=\"ClusterComponentType\",name=\"ruby-service\"} 0",
    ] {
        assert!(metrics.contains(line), "{line} missing from\n{metrics}");
    }
    for name in &names {
        let exported = metrics.lines().any(|l| {
            l.starts_with(&format!("{name}{{"))
                || l.starts_with(&format!("{name} "))
                || l.starts_with(&format!("{name}_bucket{{"))
        });
        assert!(exported, "{name} is named by the dashboard or the alerts but not exported:\n{metrics}");
    }
    assert!(
        metrics.contains("covenant_cache_objects{resource=\"ClusterComponentType.openchoreo.dev\"} 2"),
        "{metrics}"
    );
    assert!(
        metrics.contains(
            "covenant_lookup_duration_seconds_count{resource=\"ClusterComponentType.openchoreo.dev\"}"
        ),
        "{metrics}"
    );
}

fn config_kinds() -> Vec<(String, String)> {
    Config::embedded().unwrap().cluster_kinds()
}

#[test]
fn the_name_extraction_folds_histogram_series() {
    let mut names = BTreeSet::new();
    metric_names("histogram_quantile(0.99, rate(covenant_admission_duration_seconds_bucket[5m])) + covenant_patches_total", &mut names);
    assert_eq!(
        names.into_iter().collect::<Vec<_>>(),
        ["covenant_admission_duration_seconds", "covenant_patches_total"]
    );
}
