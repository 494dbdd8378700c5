//! The judgement of the API-server scenario's Component, in a loop, without a server: decode,
//! evaluate against an offline view of the bench platform (200 constructs at 5 versions each,
//! 5,000 Components), encode the answer. For counting where the instructions go:
//!
//! ```text
//! cargo build --release --example judge_loop
//! valgrind --tool=callgrind --toggle-collect='covenant::engine::Engine::evaluate' \
//!     target/release/examples/judge_loop 2000
//! ```
//!
//! Run it at two counts and divide the difference by the difference in reviews: the platform's
//! set-up and the first review's one-time work (compiling a CEL rule) drop out. Without
//! valgrind it prints the time per review and a `Value` parse's of the same body.

#[allow(dead_code)]
#[path = "../benches/support/platform.rs"]
mod platform;

use covenant::cluster::OfflineCluster;

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(100_000);
    let mut objects = platform::constructs(200);
    objects.extend(platform::components(5_000, 200));
    let cluster = OfflineCluster::from_objects(objects);
    let engine = covenant::engine::Engine::new(&covenant::config::Config::embedded().unwrap());
    let review = platform::create_review(
        "openchoreo.dev",
        "v1alpha1",
        "Component",
        "components",
        platform::new_component(),
    );
    let body = axum::body::Bytes::from(review);
    let start = std::time::Instant::now();
    let mut denied = 0;
    for _ in 0..n {
        let review = covenant::admission::decode_reading(body.clone(), &|g, k| engine.reading(g, k)).unwrap();
        let verdict = engine.evaluate(&review.subject, &cluster);
        denied += usize::from(verdict.denied());
        std::hint::black_box(covenant::admission::respond(&review.uid, &verdict, &[]).to_bytes().unwrap());
    }
    eprintln!("{n} reviews, {denied} denied, {:?} each", start.elapsed() / n as u32);
    let start = std::time::Instant::now();
    for _ in 0..n {
        std::hint::black_box(serde_json::from_slice::<serde_json::Value>(&body).unwrap());
    }
    eprintln!("bare parse {:?} each ({} bytes)", start.elapsed() / n as u32, body.len());
}
