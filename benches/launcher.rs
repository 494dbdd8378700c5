//! Criterion bench: checking a launcher Application of 20 components with 3 traits each
//! (the webservice-full corpus component, expose, certificate and pvc traits), both as the
//! engine sees it (parsed, as a review's object is once a family asks for it) and from YAML
//! text as `covenant check` reads it.

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::{json, Value};
use std::hint::black_box;

use covenant::check::{check, Source};
use covenant::cluster::EmptyCluster;
use covenant::config::Config;
use covenant::engine::Engine;
use covenant::subject::Subject;

/// The Application: 20 copies of the corpus's webservice-full component, each with three
/// traits. Every property is declared, so the check walks everything and finds nothing.
fn application() -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/launcher/pkg/cmd/kurel/testdata/webservice-full/app.yaml");
    let text = std::fs::read_to_string(path).unwrap();
    let (docs, _) = covenant::source::parse_stream(&text);
    let mut doc = docs.into_iter().next().unwrap().value;
    let template = doc["spec"]["components"][0].clone();
    let components: Vec<Value> = (0..20)
        .map(|i| {
            let mut c = template.clone();
            c["name"] = json!(format!("svc-{i}"));
            c["traits"] = json!([
                {"type": "expose", "properties": {"hostnames": [format!("svc-{i}.example.com")],
                    "servicePort": 8080, "sslRedirect": true, "annotations": {"a": "b"}}},
                {"type": "certificate", "properties": {"secretName": format!("svc-{i}-tls"),
                    "dnsNames": [format!("svc-{i}.example.com")], "issuerRef": {"name": "letsencrypt"},
                    "privateKey": {"algorithm": "ECDSA", "size": 256}}},
                {"type": "pvc", "properties": {"name": "data", "size": "1Gi", "scope": "fast",
                    "accessModes": ["ReadWriteOnce"]}},
            ]);
            c
        })
        .collect();
    doc["spec"]["components"] = Value::Array(components);
    doc
}

fn launcher(c: &mut Criterion) {
    let engine = Engine::new(&Config::embedded().unwrap());
    let doc = application();
    let verdict = engine.evaluate(&Subject::from_document(doc.clone()), &EmptyCluster);
    assert!(verdict.findings.is_empty(), "the bench document must be clean: {:?}", verdict.findings);
    let yaml = serde_json::to_string_pretty(&doc).unwrap();

    let mut g = c.benchmark_group("launcher_application_20x3");
    g.throughput(Throughput::Elements(80)); // 20 components + 60 traits
    g.bench_function("evaluate", |b| {
        // The subject is built and dropped outside the timing: only the judging is measured.
        b.iter_batched_ref(
            || Subject::from_document(doc.clone()),
            |subject| engine.evaluate(black_box(subject), &EmptyCluster),
            criterion::BatchSize::SmallInput,
        )
    });
    g.bench_function("check_from_text", |b| {
        let sources = [Source { name: "app.yaml".into(), text: yaml.clone() }];
        b.iter(|| check(&engine, &EmptyCluster, black_box(&sources)))
    });
    g.finish();
}

criterion_group!(benches, launcher);
criterion_main!(benches);
