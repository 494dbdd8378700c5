//! Criterion benches: decoding a review (against a full `serde_json::Value` parse of the same
//! bytes, side by side) and decode → evaluate → encode, in-process and through the router,
//! over a 4 KB Deployment CREATE and a ~390 KB CRD UPDATE.

use std::path::Path;
use std::sync::Arc;

use axum::body::Body;
use axum::http::Request;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use std::hint::black_box;
use tower::ServiceExt;

use covenant::cluster::EmptyCluster;
use covenant::config::Config;
use covenant::server::{router, AppState};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench").join(name)).unwrap()
}

const FIXTURES: [(&str, &str); 2] =
    [("deployment_create_4k", "deployment-create-4k.json"), ("crd_update_400k", "crd-update-400k.json")];

fn decode(c: &mut Criterion) {
    let mut g = c.benchmark_group("decode");
    for (name, file) in FIXTURES {
        // A body as the server holds it: shared bytes, which the decoded objects slice.
        let body = axum::body::Bytes::from(fixture(file));
        g.throughput(Throughput::Bytes(body.len() as u64));
        g.bench_with_input(BenchmarkId::new("value_parse", name), &body, |b, body| {
            b.iter(|| serde_json::from_slice::<serde_json::Value>(black_box(body)).unwrap())
        });
        g.bench_with_input(BenchmarkId::new("covenant_decode", name), &body, |b, body| {
            b.iter(|| covenant::admission::decode(black_box(body).clone()).unwrap())
        });
    }
    g.finish();
}

fn state() -> AppState {
    AppState::new(&Config::embedded().unwrap(), Arc::new(EmptyCluster)).unwrap()
}

fn validate(c: &mut Criterion) {
    let state = state();
    let engine = state.engine.clone();
    let app = router(state);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let mut g = c.benchmark_group("validate");
    for (name, file) in FIXTURES {
        let body = axum::body::Bytes::from(fixture(file));
        g.throughput(Throughput::Bytes(body.len() as u64));
        // decode → evaluate → encode, no HTTP.
        g.bench_with_input(BenchmarkId::new("pipeline", name), &body, |b, body| {
            b.iter(|| {
                // Read as the webhook reads it: each object as its family asks.
                let review = covenant::admission::decode_reading(black_box(body).clone(), &|group, kind| {
                    engine.reading(group, kind)
                })
                .unwrap();
                let verdict = engine.evaluate(&review.subject, &EmptyCluster);
                covenant::admission::respond(&review.uid, &verdict, &[]).to_bytes().unwrap()
            })
        });
        // The same through the axum router (routing, body collection, metrics, logging).
        g.bench_with_input(BenchmarkId::new("router", name), &body, |b, body| {
            b.iter(|| {
                rt.block_on(async {
                    let req = Request::post("/api/v0/validate?timeout=10s")
                        .header("content-type", "application/json")
                        .body(Body::from(body.clone()))
                        .unwrap();
                    let resp = app.clone().oneshot(req).await.unwrap();
                    axum::body::to_bytes(resp.into_body(), usize::MAX).await.unwrap()
                })
            })
        });
    }
    g.finish();
}

criterion_group!(benches, decode, validate);
criterion_main!(benches);
