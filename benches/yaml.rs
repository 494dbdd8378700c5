//! Criterion bench: reading YAML, against a JSON parse of the same document. `covenant check`
//! reads YAML with a position for every pointer (and refuses duplicate keys); the target is
//! at most 4x a JSON parse. Candidates, each over the largest CRD of the corpus (kyverno
//! ClusterPolicy v1.13.0, 1.4 MB of YAML) and a typical one (cert-manager Certificate):
//! - `covenant_reader`: covenant's reader (`source::parse_stream`: the line reader for the
//!   block YAML Kubernetes tooling writes, yaml-rust2 for anything else, into a `Value` plus
//!   positions); both documents here are read by the line reader;
//! - `yaml_rust2_reader`: covenant's reader as it reads a text the line reader declines
//!   (yaml-rust2's events into the same builder);
//! - `yaml_rust2_events`: the yaml-rust2 parser alone, every event dropped (its floor);
//! - `saphyr_events`: the saphyr-parser event parser alone (borrowed scalars, spans);
//! - `serde_saphyr_value`: serde-saphyr straight into a `serde_json::Value` (no positions).

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use serde_json::Value;

const DOCS: [(&str, &str); 2] = [
    ("kyverno_1.4MB", "kyverno/clusterpolicies/v1.13.0.yaml"),
    ("certmanager_certificate", "cert-manager/certificates/v1.21.0.yaml"),
];

fn read(rel: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/crd-history").join(rel),
    )
    .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

struct Drop;

impl yaml_rust2::parser::MarkedEventReceiver for Drop {
    fn on_event(&mut self, ev: yaml_rust2::Event, _mark: yaml_rust2::scanner::Marker) {
        black_box(ev);
    }
}

fn readers(c: &mut Criterion) {
    let mut g = c.benchmark_group("yaml_read");
    g.sample_size(10);
    for (name, rel) in DOCS {
        let text = read(rel);
        let doc = covenant::source::parse_stream(&text).0.remove(0).value;
        let json = doc.to_string();
        g.bench_with_input(BenchmarkId::new("json_parse", name), &json, |b, j| {
            b.iter(|| serde_json::from_str::<Value>(black_box(j)).unwrap())
        });
        g.bench_with_input(BenchmarkId::new("covenant_reader", name), &text, |b, t| {
            b.iter(|| covenant::source::parse_stream(black_box(t)))
        });
        g.bench_with_input(BenchmarkId::new("yaml_rust2_reader", name), &text, |b, t| {
            b.iter(|| covenant::source::each_document_in(black_box(t).chars(), drop))
        });
        g.bench_with_input(BenchmarkId::new("yaml_rust2_events", name), &text, |b, t| {
            b.iter(|| {
                let mut p = yaml_rust2::parser::Parser::new_from_str(black_box(t));
                p.load(&mut Drop, true).unwrap();
            })
        });
        g.bench_with_input(BenchmarkId::new("saphyr_events", name), &text, |b, t| {
            b.iter(|| {
                for ev in saphyr_parser::Parser::new_from_str(black_box(t)) {
                    black_box(ev.unwrap());
                }
            })
        });
        g.bench_with_input(BenchmarkId::new("serde_saphyr_value", name), &text, |b, t| {
            b.iter(|| serde_saphyr::from_str::<Value>(black_box(t)).unwrap())
        });
    }
    g.finish();
}

criterion_group!(benches, readers);
criterion_main!(benches);
