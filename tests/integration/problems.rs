//! Every refusal of the HTTP layer is an RFC 9457 problem document with the right status.

use crate::common;

use axum::body::Body;
use axum::http::Request;
use common::{post, Setup, TestServer};
use serde_json::Value;
use tower::ServiceExt;

async fn problem(resp: reqwest::Response) -> (u16, Value) {
    let status = resp.status().as_u16();
    assert_eq!(resp.headers()["content-type"], "application/problem+json");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["status"], status);
    assert!(body["type"].as_str().unwrap().starts_with("https://covenant.dev/problems/"));
    assert!(body["title"].is_string());
    (status, body)
}

fn sample() -> String {
    std::fs::read_to_string(common::fixtures().join("admission/kyverno/02-create-pod.json")).unwrap()
}

#[tokio::test]
async fn routing_method_and_media_type_refusals() {
    let server = TestServer::start().await;
    let c = server.h2();
    let (s, b) = problem(post(&c, &server.url("/api/v1/validate"), sample()).await).await;
    assert_eq!(s, 404);
    assert!(b["detail"].as_str().unwrap().contains("/api/v1/validate"));

    let (s, b) = problem(c.get(server.url("/api/v0/validate")).send().await.unwrap()).await;
    assert_eq!(s, 405);
    assert!(b["detail"].as_str().unwrap().contains("GET"));

    let resp = c
        .post(server.url("/api/v0/validate"))
        .header("content-type", "text/yaml")
        .body(sample())
        .send()
        .await
        .unwrap();
    let (s, b) = problem(resp).await;
    assert_eq!(s, 415);
    assert!(b["detail"].as_str().unwrap().contains("text/yaml"));

    let resp = c.post(server.url("/api/v0/validate")).body(sample()).send().await.unwrap();
    assert_eq!(problem(resp).await.0, 415);
}

#[tokio::test]
async fn malformed_undeclared_and_other_version_bodies_are_400() {
    let server = TestServer::start().await;
    let c = server.h1();
    let url = server.url("/api/v0/validate");

    let (s, b) = problem(post(&c, &url, "{\"apiVersion\": ").await).await;
    assert_eq!((s, b["title"].as_str().unwrap()), (400, "Invalid AdmissionReview"));

    let undeclared = sample().replacen("\"uid\":", "\"surprise\": true, \"uid\":", 1);
    let (s, b) = problem(post(&c, &url, undeclared).await).await;
    assert_eq!(s, 400);
    assert!(b["detail"].as_str().unwrap().contains("unknown field `surprise`"), "{b}");

    let other = sample().replace("admission.k8s.io/v1", "admission.k8s.io/v1beta1");
    let (s, b) = problem(post(&c, &url, other).await).await;
    assert_eq!(s, 400);
    assert!(b["detail"].as_str().unwrap().contains("admission.k8s.io/v1beta1 is not supported"), "{b}");

    let no_request = r#"{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}"#;
    let (s, b) = problem(post(&c, &url, no_request).await).await;
    assert_eq!(s, 400);
    assert!(b["detail"].as_str().unwrap().contains("no request"), "{b}");

    let (s, b) = problem(post(&c, &server.url("/api/v0/validate?timeout=later"), sample()).await).await;
    assert_eq!(s, 400);
    assert!(b["detail"].as_str().unwrap().contains("\"later\""), "{b}");
}

#[tokio::test]
async fn body_over_the_limit_is_413_declared_or_streamed() {
    let text = "apiVersion: covenant.dev/v1alpha1\nkind: Config\nserver:\n  bodyLimitBytes: 2048\n";
    let config = covenant::config::Config::from_text("small.yaml", text, None).unwrap();
    let server = TestServer::with(Setup { config, ..Setup::default() }).await;
    let big = sample();
    assert!(big.len() > 2048);
    let (s, b) = problem(post(&server.h1(), &server.url("/api/v0/validate"), big.clone()).await).await;
    assert_eq!(s, 413);
    assert!(b["detail"].as_str().unwrap().contains("2048"));
    // Without a content-length (a streamed body), the limit still holds.
    let chunks: Vec<Result<String, std::io::Error>> =
        big.as_bytes().chunks(512).map(|c| Ok(String::from_utf8_lossy(c).into_owned())).collect();
    let body = reqwest::Body::wrap_stream(futures_util::stream::iter(chunks));
    let (s, _) = problem(post(&server.h2(), &server.url("/api/v0/validate"), body).await).await;
    assert_eq!(s, 413);
}

#[tokio::test]
async fn a_panicking_handler_is_a_500_problem_and_the_server_keeps_serving() {
    let app = covenant::server::boundary(
        axum::Router::new().route("/boom", axum::routing::post(|| async { panic!("boom") as &'static str })),
    );
    let resp = app.clone().oneshot(Request::post("/boom").body(Body::empty()).unwrap()).await.unwrap();
    assert_eq!(resp.status(), 500);
    assert_eq!(resp.headers()["content-type"], "application/problem+json");
    let bytes = axum::body::to_bytes(resp.into_body(), 1 << 16).await.unwrap();
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(body["status"], 500);
    assert!(!body["detail"].as_str().unwrap().contains("boom"), "internals must not leak: {body}");
    let resp = app.oneshot(Request::post("/other").body(Body::empty()).unwrap()).await.unwrap();
    assert_eq!(resp.status(), 404);
}
