//! The webhook over real TLS on loopback, driven by real HTTP/2 and HTTP/1.1 clients: every
//! corpus review, denials, warnings, metrics and the request deadline.

use crate::common;

use common::{post, review, Setup, TestServer};
use serde_json::{json, Value};

#[tokio::test]
async fn every_corpus_review_gets_a_v1_response_with_its_uid_over_h2_and_h1() {
    let server = TestServer::start().await;
    let reviews = common::corpus_reviews();
    assert!(reviews.len() >= 19, "corpus fixtures missing: {}", reviews.len());
    for (client, version) in
        [(server.h2(), reqwest::Version::HTTP_2), (server.h1(), reqwest::Version::HTTP_11)]
    {
        for path in &reviews {
            let body = std::fs::read(path).unwrap();
            let sent: Value = serde_json::from_slice(&body).unwrap();
            let uid = sent["request"]["uid"].as_str().unwrap();
            let resp = post(&client, &server.url("/api/v0/validate?timeout=10s"), body.clone()).await;
            assert_eq!(resp.version(), version, "{}", path.display());
            let status = resp.status();
            let content_type = resp.headers()["content-type"].to_str().unwrap().to_string();
            let got: Value = resp.json().await.unwrap();
            if sent["apiVersion"] == "admission.k8s.io/v1" {
                assert_eq!(status, 200, "{}: {got}", path.display());
                assert_eq!(content_type, "application/json");
                assert_eq!(got["apiVersion"], "admission.k8s.io/v1");
                assert_eq!(got["kind"], "AdmissionReview");
                assert_eq!(got["response"]["uid"], uid, "{}", path.display());
                assert_eq!(got["response"]["allowed"], true, "{}: {got}", path.display());
            } else {
                // covenant speaks v1 only; another version is refused naming it.
                assert_eq!(status, 400, "{}", path.display());
                assert_eq!(content_type, "application/problem+json");
                let detail = got["detail"].as_str().unwrap();
                assert!(detail.contains(sent["apiVersion"].as_str().unwrap()), "{detail}");
                assert!(detail.contains("admission.k8s.io/v1 "), "{detail}");
            }
        }
    }
}

#[tokio::test]
async fn unknown_operation_is_allowed_with_a_warning_naming_it() {
    let server = TestServer::start().await;
    let path =
        common::fixtures().join("admission/k8s-api-roundtrip/HEAD-admission.k8s.io.v1.AdmissionReview.json");
    let resp = post(&server.h2(), &server.url("/api/v0/validate"), std::fs::read(path).unwrap()).await;
    let got: Value = resp.json().await.unwrap();
    let warnings = got["response"]["warnings"].as_array().unwrap();
    assert!(warnings[0].as_str().unwrap().contains("\"operationValue\""), "{got}");
}

fn shop_app(version: &str, extra: Option<(&str, Value)>) -> Value {
    let mut o = json!({
        "apiVersion": "shop.example.com/v1",
        "kind": "App",
        "metadata": {"name": "storefront", "namespace": "default"},
        "schema": "shop.app",
        "version": version,
        "name": "storefront",
        "replicas": 2
    });
    if let Some((k, v)) = extra {
        o[k] = v;
    }
    o
}

fn shop_config(extra: &str) -> covenant::config::Config {
    let dir = common::fixtures().join("versioned");
    let text = format!(
        "apiVersion: covenant.dev/v1alpha1\nkind: Config\nregistries: [registry.yaml]\nfamilies: [versioned]\n{extra}"
    );
    covenant::config::Config::from_text("test.yaml", &text, Some(&dir)).unwrap()
}

#[tokio::test]
async fn a_custom_resource_carrying_a_versioned_format_is_denied_with_one_cause_per_finding() {
    let server = TestServer::with(Setup { config: shop_config(""), ..Setup::default() }).await;
    let object = shop_app("2", Some(("replcas", json!(3))));
    let body = review("u-deny", "shop.example.com", "App", object);
    let resp = post(&server.h2(), &server.url("/api/v0/validate"), body.to_string()).await;
    assert_eq!(resp.status(), 200);
    let got: Value = resp.json().await.unwrap();
    let r = &got["response"];
    assert_eq!(r["uid"], "u-deny");
    assert_eq!(r["allowed"], false);
    assert_eq!(r["status"]["code"], 403);
    let message = r["status"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("2 covenant violation(s): CVN-106 /version: shop.app version \"2\""),
        "{message}"
    );
    let causes = r["status"]["details"]["causes"].as_array().unwrap();
    let pairs: Vec<(&str, &str)> =
        causes.iter().map(|c| (c["reason"].as_str().unwrap(), c["field"].as_str().unwrap())).collect();
    assert_eq!(pairs, [("CVN-106", "/version"), ("CVN-101", "/replcas")]);
    assert!(causes[1]["message"].as_str().unwrap().contains("replicas"));
    assert_eq!(r["auditAnnotations"]["rules"], "CVN-106,CVN-101");

    // The same object, clean, is allowed; and the metrics saw both decisions.
    let body = review("u-ok", "shop.example.com", "App", shop_app("1", None));
    let got: Value =
        post(&server.h1(), &server.url("/api/v0/validate"), body.to_string()).await.json().await.unwrap();
    assert_eq!(got["response"]["allowed"], true, "{got}");
    let metrics = server.metrics().await;
    assert!(metrics.contains("decision=\"denied\""), "{metrics}");
    assert!(metrics.contains("covenant_findings_total{action=\"deny\",rule=\"CVN-101\"} 1"), "{metrics}");
}

#[tokio::test]
async fn warn_and_audit_actions_shape_the_response() {
    let config = shop_config("rules:\n  actions:\n    CVN-101: warn\n    CVN-106: audit\n");
    let server = TestServer::with(Setup { config, ..Setup::default() }).await;
    let body = review("u-warn", "shop.example.com", "App", shop_app("2", Some(("replcas", json!(3)))));
    let got: Value =
        post(&server.h2(), &server.url("/api/v0/validate"), body.to_string()).await.json().await.unwrap();
    let r = &got["response"];
    assert_eq!(r["allowed"], true);
    let warnings = r["warnings"].as_array().unwrap();
    assert_eq!(warnings.len(), 1);
    // The rule id and the change first, then where (the API server keeps 256 characters).
    let w = warnings[0].as_str().unwrap();
    assert!(
        w.starts_with("CVN-101 member \"replcas\" is not declared") && w.ends_with(" at /replcas"),
        "{got}"
    );
    assert!(r["auditAnnotations"]["audit"].as_str().unwrap().starts_with("CVN-106"), "{got}");
}

#[tokio::test]
async fn the_mutating_route_answers_with_the_uid_and_no_patch() {
    let server = TestServer::start().await;
    let body = std::fs::read(common::fixtures().join("admission/kyverno/02-create-pod.json")).unwrap();
    let got: Value = post(&server.h2(), &server.url("/api/v0/mutate"), body).await.json().await.unwrap();
    assert_eq!(got["response"]["uid"], "9c284cdb-b0de-42aa-adf5-649a44bc861b");
    assert_eq!(got["response"]["allowed"], true);
    assert!(got["response"].get("patch").is_none());
}

#[tokio::test]
async fn readiness_and_metrics_on_the_admin_listener() {
    let server = TestServer::start().await;
    let ready = reqwest::get(format!("http://{}/readyz", server.admin)).await.unwrap();
    assert_eq!(ready.status(), 200);
    let live = reqwest::get(format!("http://{}/livez", server.admin)).await.unwrap();
    assert_eq!(live.status(), 200);
    let body = std::fs::read(common::fixtures().join("admission/kyverno/07-delete-pod.json")).unwrap();
    post(&server.h1(), &server.url("/api/v0/validate"), body).await;
    let metrics = server.metrics().await;
    for name in [
        "covenant_admission_requests_total",
        "covenant_admission_duration_seconds_bucket",
        "covenant_build_info",
        "covenant_tls_reloads_total",
        "covenant_tls_certificate_expiry_timestamp_seconds",
    ] {
        assert!(metrics.contains(name), "{name} missing:\n{metrics}");
    }
    assert!(metrics.contains("operation=\"DELETE\""), "{metrics}");
    // Bounded labels only: no namespace, name or user.
    assert!(!metrics.contains("default") && !metrics.contains("tester"), "{metrics}");
}

#[tokio::test]
async fn check_and_the_webhook_give_the_same_findings_for_the_same_object() {
    let config = shop_config("");
    let object = shop_app("2", Some(("replcas", json!(3))));
    // The CLI face: the object as a YAML file.
    let engine = covenant::engine::Engine::new(&config);
    let yaml = format!("{}\n", serde_json::to_string_pretty(&object).unwrap());
    let report = covenant::check::check(
        &engine,
        &covenant::cluster::EmptyCluster,
        &[covenant::check::Source { name: "app.yaml".into(), text: yaml }],
    );
    let mut from_check: Vec<(String, String)> =
        report.entries.iter().map(|e| (e.finding.rule.id.to_string(), e.finding.pointer.clone())).collect();
    // The server face: the object in a review.
    let server = TestServer::with(Setup { config, ..Setup::default() }).await;
    let body = review("u-same", "shop.example.com", "App", object);
    let got: Value =
        post(&server.h1(), &server.url("/api/v0/validate"), body.to_string()).await.json().await.unwrap();
    let mut from_webhook: Vec<(String, String)> = got["response"]["status"]["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["reason"].as_str().unwrap().to_string(), c["field"].as_str().unwrap().to_string()))
        .collect();
    from_check.sort();
    from_webhook.sort();
    assert_eq!(from_check.len(), 2);
    assert_eq!(from_check, from_webhook);
}
