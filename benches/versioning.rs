//! Criterion benches for consumer pins: resolving a pin among 50 published versions, and
//! validating a Component's parameters against a construct schema already loaded (the
//! schema cached, as the check itself measures), beside the whole evaluation of the
//! Component through an offline cluster view (lookup, schema load, validation).

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value};
use std::hint::black_box;

use covenant::cluster::{ClusterView, OfflineCluster};
use covenant::config::Config;
use covenant::engine::Engine;
use covenant::pointer::Location;
use covenant::schema::openapi::{load, Dialect};
use covenant::schema::validate::{validate, Required};
use covenant::subject::Subject;
use covenant::versioning::{resolve, Pin, Published};

/// 50 published versions: majors 1–5, minors 0–4, patches 0–1.
fn published() -> Vec<Published> {
    let mut out = Vec::new();
    for major in 1..=5u64 {
        for minor in 0..5u64 {
            for patch in 0..2u64 {
                out.push(Published {
                    object: format!("shop-v{major}-{minor}-{patch}"),
                    version: Some(semver::Version::new(major, minor, patch)),
                    default: major == 4 && minor == 0 && patch == 0,
                });
            }
        }
    }
    out
}

fn parameters_schema() -> Value {
    json!({"type": "object", "properties": {
        "sizeClass": {"type": "string", "enum": ["small", "medium", "large"], "default": "small"},
        "port": {"type": "integer", "default": 8080, "minimum": 1, "maximum": 65535},
        "replicas": {"type": "integer", "default": 1},
        "env": {"type": "array", "items": {"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string"}, "value": {"type": "string"}}}},
        "resources": {"$ref": "#/$defs/Resources"}},
        "$defs": {"Resources": {"type": "object", "properties": {
            "requests": {"type": "object", "properties": {"cpu": {"type": "string"}, "memory": {"type": "string"}}},
            "limits": {"type": "object", "properties": {"cpu": {"type": "string"}, "memory": {"type": "string"}}}}}}})
}

fn parameters() -> Value {
    json!({"sizeClass": "medium", "port": 8080, "replicas": 3,
        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}, {"name": "C", "value": "3"}],
        "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "1", "memory": "1Gi"}}})
}

fn pins(c: &mut Criterion) {
    let list = published();
    assert_eq!(list.len(), 50);
    let mut g = c.benchmark_group("pins");
    for pin in ["3", "3.2", "3.2.1", ""] {
        let p = Pin::parse(pin).unwrap();
        let label = if pin.is_empty() { "floating".to_string() } else { format!("pin_{pin}") };
        g.bench_function(format!("resolve_among_50/{label}"), |b| {
            b.iter(|| resolve(black_box(&p), "shop", black_box(&list)).unwrap())
        });
    }
    g.finish();

    let schema = load(&parameters_schema(), &Location::default(), Dialect::JsonSchema).unwrap();
    let values = parameters();
    let at = Location::new("/spec/parameters", "parameters");
    assert!(validate(&schema, &values, &at, Required::Everywhere).violations.is_empty());
    let mut g = c.benchmark_group("component_parameters");
    g.bench_function("validate_cached_schema", |b| {
        b.iter(|| validate(black_box(&schema), black_box(&values), &at, Required::Everywhere))
    });

    // The whole Component evaluation: pin lookup in the view, schema load, validation.
    let construct = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "ClusterComponentType",
        "metadata": {"name": "shop-v1", "labels": {"openchoreo.dev/name": "shop", "openchoreo.dev/version": "1.2.0"},
            "annotations": {"openchoreo.dev/version": "1.2.0"}},
        "spec": {"workloadType": "deployment", "parameters": {"openAPIV3Schema": parameters_schema()}}});
    let cluster = OfflineCluster::from_objects([construct]);
    let engine = Engine::new(&Config::embedded().unwrap());
    let component = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Component",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {"componentType": {"kind": "ClusterComponentType", "name": "deployment/shop", "version": "1"}, "parameters": values}});
    let probe = engine.evaluate(&Subject::from_document(component.clone()), &cluster);
    assert!(probe.findings.is_empty(), "{:?}", probe.findings);
    g.bench_function("evaluate_component", |b| {
        b.iter_batched_ref(
            || Subject::from_document(component.clone()),
            |s| engine.evaluate(black_box(s), &cluster),
            criterion::BatchSize::SmallInput,
        )
    });
    // The same with the construct as a cluster stores it (uid and resourceVersion set): its
    // loaded schema is cached by that version.
    let mut stored =
        cluster.list("openchoreo.dev", "ClusterComponentType", None, None).unwrap()[0].as_ref().clone();
    stored["metadata"]["uid"] = json!("6f1c1e0e-0000-4000-8000-000000000001");
    stored["metadata"]["resourceVersion"] = json!("4711");
    let stored_cluster = OfflineCluster::from_objects([stored]);
    g.bench_function("evaluate_component_stored", |b| {
        b.iter_batched_ref(
            || Subject::from_document(component.clone()),
            |s| engine.evaluate(black_box(s), &stored_cluster),
            criterion::BatchSize::SmallInput,
        )
    });
    g.finish();
}

/// Stamping a ComponentType with 10 resource templates: the mutating path end to end
/// (edits, patch plan, the patched object judged again), and the plan alone.
fn stamping(c: &mut Criterion) {
    let resources: Vec<Value> = (0..10)
        .map(|i| {
            json!({"id": format!("r{i}"), "template": {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": format!("${{metadata.name}}-{i}"), "labels": {"app": "shop"}},
                "data": {"key": "value"}}})
        })
        .collect();
    let construct = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "ComponentType",
        "metadata": {"name": "shop-v1", "namespace": "default", "annotations": {"openchoreo.dev/version": "1.4.2"}},
        "spec": {"workloadType": "deployment", "resources": resources}});
    let config = Config::from_text(
        "m.yaml",
        "apiVersion: covenant.dev/v1alpha1\nkind: Config\nrules:\n  actions: {CVN-501: mutate, CVN-502: mutate}\n",
        None,
    )
    .unwrap();
    let engine = Engine::new(&config);
    let cluster = OfflineCluster::default();
    let probe = engine.mutate(&Subject::from_document(construct.clone()), &cluster);
    assert_eq!(probe.ops.len(), 22, "{:?}", probe.ops); // two labels, two stamps per template
    let mut g = c.benchmark_group("stamp_component_type_10_templates");
    g.bench_function("mutate", |b| {
        b.iter_batched_ref(
            || Subject::from_document(construct.clone()),
            |s| engine.mutate(black_box(s), &cluster),
            criterion::BatchSize::SmallInput,
        )
    });
    let edits: Vec<covenant::mutation::Edit> = (0..10)
        .flat_map(|i| {
            let i = i.to_string();
            ["openchoreo.dev/rendered-from-version", "openchoreo.dev/rendered-from-type"].map(|k| {
                covenant::mutation::Edit::set(
                    "CVN-501",
                    &["spec", "resources", &i, "template", "metadata", "annotations", k],
                    "1.4.2",
                )
            })
        })
        .collect();
    g.bench_function("plan_only", |b| {
        b.iter(|| covenant::mutation::plan(black_box(&construct), edits.clone()).unwrap())
    });
    g.finish();
}

criterion_group!(benches, pins, stamping);
criterion_main!(benches);
