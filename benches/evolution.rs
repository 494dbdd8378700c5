//! Criterion bench: the contract diff of two CRD versions against the cost of parsing them.
//! The largest pair of the crd-history corpus (kyverno ClusterPolicy v1.12.0 → v1.13.0,
//! 1.2 MB → 1.4 MB of YAML, 1700+ change sites) and a typical one (cert-manager Issuer
//! v1.13.0 → v1.14.0). The target: the diff costs no more than the parse.

use std::path::Path;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use serde_json::Value;
use std::hint::black_box;

use covenant::families::construct::{contract, contract_diff};
use covenant::families::schema_bearing::{evolve, evolve_outlines, evolve_outlines_keeping, Outline};
use covenant::schema::openapi::Keep;

const PAIRS: [(&str, &str, &str); 2] = [
    ("kyverno_1.2MB", "kyverno/clusterpolicies/v1.12.0.yaml", "kyverno/clusterpolicies/v1.13.0.yaml"),
    (
        "gateway_gatewayclasses",
        "gateway-api/gatewayclasses-standard/v1.1.1.yaml",
        "gateway-api/gatewayclasses-standard/v1.2.0.yaml",
    ),
];

fn read(rel: &str) -> String {
    std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/crd-history").join(rel),
    )
    .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn parse(text: &str) -> Value {
    covenant::source::parse_stream(text).0.into_iter().next().unwrap().value
}

fn evolution(c: &mut Criterion) {
    let mut g = c.benchmark_group("crd_diff");
    g.sample_size(20);
    for (name, old, new) in PAIRS {
        let (old_text, new_text) = (read(old), read(new));
        let (old_doc, new_doc) = (parse(&old_text), parse(&new_text));
        let e = evolve(&old_doc, &new_doc);
        assert!(e.unreadable.is_empty(), "{name}: {:?}", e.unreadable);
        // YAML with positions, as `covenant check` reads files.
        g.bench_with_input(
            BenchmarkId::new("parse_yaml_both", name),
            &(&old_text, &new_text),
            |b, (o, n)| b.iter(|| (parse(black_box(o)), parse(black_box(n)))),
        );
        // JSON, as the webhook receives the same objects.
        let (old_json, new_json) = (old_doc.to_string(), new_doc.to_string());
        g.bench_with_input(
            BenchmarkId::new("parse_json_both", name),
            &(&old_json, &new_json),
            |b, (o, n)| {
                b.iter(|| {
                    (
                        serde_json::from_str::<Value>(black_box(o)).unwrap(),
                        serde_json::from_str::<Value>(black_box(n)).unwrap(),
                    )
                })
            },
        );
        g.bench_with_input(BenchmarkId::new("diff", name), &(&old_doc, &new_doc), |b, (o, n)| {
            b.iter(|| evolve(black_box(o), black_box(n)))
        });
        // From the JSON text, reading included: what `covenant diff a.json b.json` pays (the
        // document outlined, each version schema read straight into the model).
        assert_eq!(
            evolve_outlines(&Outline::of_text(&old_json).unwrap(), &Outline::of_text(&new_json).unwrap()),
            e
        );
        // Diffed whole (`covenant diff`), and judged on the schemas' shape, without
        // descriptions (the webhook).
        for (id, keep) in [("read_and_diff_json", Keep::ALL), ("read_and_judge_json", Keep::SHAPE)] {
            g.bench_with_input(BenchmarkId::new(id, name), &(&old_json, &new_json), |b, (o, n)| {
                b.iter(|| {
                    let o = Outline::of_text_reading(black_box(o), keep, None).unwrap();
                    let n = Outline::of_text_reading(black_box(n), keep, Some(&o)).unwrap();
                    evolve_outlines_keeping(&o, &n, keep)
                })
            });
        }
    }
    g.finish();
}

/// A CRD of `versions` served versions, each with a `mode` enum of `values` values, the
/// update removing one value: what a hostile or merely huge CRD costs to judge.
fn wide_crd(versions: usize, values: usize, drop_last: bool) -> Value {
    let n = if drop_last { values - 1 } else { values };
    let schema = serde_json::json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "mode": {"type": "string", "enum": (0..n).map(|i| format!("value-{i}")).collect::<Vec<_>>()}}}}});
    let list: Vec<Value> = (0..versions)
        .map(|i| {
            serde_json::json!({"name": format!("v{}", i + 1), "served": true, "storage": i == 0,
            "schema": {"openAPIV3Schema": schema}})
        })
        .collect();
    serde_json::json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "wides.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced", "names": {"kind": "Wide", "plural": "wides"}, "versions": list}})
}

/// A CRD of `versions` served versions whose schemas are alike but for their last enum value
/// (each distinct), the update removing one value from each: distinct schemas that differ
/// only at their end, the worst case for telling equal schemas apart.
fn distinct_versions_crd(versions: usize, values: usize, drop_first: bool) -> Value {
    let mut doc = wide_crd(versions, values, false);
    for (i, v) in doc["spec"]["versions"].as_array_mut().unwrap().iter_mut().enumerate() {
        let mode = &mut v["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["mode"]["enum"];
        let list = mode.as_array_mut().unwrap();
        *list.last_mut().unwrap() = Value::String(format!("only-v{i}"));
        if drop_first {
            list.remove(0);
        }
    }
    doc
}

/// A construct whose parameters schema has `depth` levels of definitions, each referencing
/// the next twice (2^depth paths through some 80 bytes a level); the leaf enum is `leaf`.
fn doubling_construct(depth: usize, leaf: &[&str]) -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..depth {
        let next = serde_json::json!({"$ref": format!("#/$defs/L{}", i + 1)});
        defs.insert(
            format!("L{i}"),
            serde_json::json!({"type": "object", "properties": {"a": next, "b": next}}),
        );
    }
    defs.insert(format!("L{depth}"), serde_json::json!({"type": "string", "enum": leaf}));
    serde_json::json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "ClusterComponentType",
        "metadata": {"name": "doubling-v1"},
        "spec": {"parameters": {"openAPIV3Schema": {"type": "object", "$defs": defs,
            "properties": {"tree": {"$ref": "#/$defs/L0"}}}}}})
}

/// Near-linear comparisons: a 40,000-value enum, 1,500 served versions of one shape, 500
/// served versions whose schemas differ only at their end, and a 3 KB schema of 2^32 paths
/// through shared definitions.
fn hostile(c: &mut Criterion) {
    let mut g = c.benchmark_group("hostile");
    g.sample_size(10);
    let (old, new) = (wide_crd(1, 40_000, false), wide_crd(1, 40_000, true));
    g.bench_function("enum_40000_values", |b| b.iter(|| evolve(&old, &new)));
    let (old, new) = (wide_crd(1500, 4, false), wide_crd(1500, 4, true));
    g.bench_function("served_versions_1500", |b| b.iter(|| evolve(&old, &new)));
    let (old, new) = (distinct_versions_crd(500, 1000, false), distinct_versions_crd(500, 1000, true));
    g.bench_function("distinct_versions_500", |b| b.iter(|| evolve(&old, &new)));
    let (old, new) = (doubling_construct(32, &["x", "y"]), doubling_construct(32, &["x"]));
    g.bench_function("doubling_refs_depth_32", |b| {
        b.iter(|| {
            let (a, _) = contract(black_box(&old));
            let (b, _) = contract(black_box(&new));
            contract_diff(&a, &b)
        })
    });
    g.finish();
}

criterion_group!(benches, evolution, hostile);
criterion_main!(benches);
