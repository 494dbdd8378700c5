//! Construct versioning and consumer pins over the cases seed 001 states as verified:
//! ruby-service 1.1.0 / 2.0.0 (xlarge removed), otel-instrumentation 1.0.0 / 2.0.0
//! (collectorEndpoint removed), pins "1", "1.1", "1.1.0", "2", "1.0", "9", the default label,
//! a PATCH that replaces the implementation, and the OpenChoreo samples once labelled.

use crate::common;

use covenant::check::{check, check_with_base, Base, Source};
use covenant::cluster::{ClusterView, OfflineCluster};
use covenant::config::Config;
use covenant::engine::Engine;
use serde_json::{json, Value};

fn published() -> OfflineCluster {
    OfflineCluster::load_dir(&common::fixtures().join("openchoreo/published")).unwrap()
}

fn engine() -> Engine {
    Engine::new(&Config::embedded().unwrap())
}

/// (rule, pointer, message, action) of every finding of a report.
fn findings(report: &covenant::report::Report) -> Vec<(String, String, String, String)> {
    report
        .entries
        .iter()
        .map(|e| {
            let f = &e.finding;
            (f.rule.id.to_string(), f.pointer.clone(), f.message.clone(), f.action.as_str().to_string())
        })
        .collect()
}

/// (rule, pointer, message, action) for one document against the published constructs.
fn judge(doc: &Value, cluster: &dyn ClusterView) -> Vec<(String, String, String, String)> {
    let text = serde_json::to_string_pretty(doc).unwrap();
    let report = check(&engine(), cluster, &[Source { name: "doc.json".into(), text }]);
    findings(&report)
}

fn component(pin: Option<&str>, parameters: Value) -> Value {
    let mut ct = json!({"kind": "ClusterComponentType", "name": "deployment/ruby-service"});
    if let Some(p) = pin {
        ct["version"] = json!(p);
    }
    json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Component",
        "metadata": {"name": "bakery-web", "namespace": "bakery"},
        "spec": {"owner": {"projectName": "bakery"}, "componentType": ct, "parameters": parameters}})
}

#[test]
fn pins_resolve_to_the_versions_the_seed_verified() {
    let cluster = published();
    // "1", "1.1" and "1.1.0" resolve to 1.1.0, where xlarge is still valid.
    for pin in ["1", "1.1", "1.1.0"] {
        assert_eq!(judge(&component(Some(pin), json!({"sizeClass": "xlarge"})), &cluster), [], "{pin}");
    }
    // "2" resolves to the 2.0.0 object: the range picked the object, not a string, so
    // xlarge is refused against its contract.
    let found = judge(&component(Some("2"), json!({"sizeClass": "xlarge"})), &cluster);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "CVN-107");
    assert_eq!(found[0].1, "/spec/parameters/sizeClass");
    assert!(found[0].2.contains("against ruby-service 2.0.0"), "{}", found[0].2);
    // "1.0" is refused: 1.1.0 does not satisfy it; "9" names what is published.
    for pin in ["1.0", "9"] {
        let found = judge(&component(Some(pin), json!({})), &cluster);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!((found[0].0.as_str(), found[0].1.as_str()), ("CVN-406", "/spec/componentType/version"));
        assert!(
            found[0].2.contains("published: ruby-service-v2=2.0.0, ruby-service-v1=1.1.0"),
            "{}",
            found[0].2
        );
        assert_eq!(found[0].3, "deny");
    }
    // Empty floats to the default (v1), where xlarge is valid.
    assert_eq!(judge(&component(None, json!({"sizeClass": "xlarge"})), &cluster), []);
    // A pin that is not a version.
    let found = judge(&component(Some("v2"), json!({})), &cluster);
    assert_eq!(found[0].0, "CVN-408");
}

#[test]
fn a_name_nothing_has_published_yet_is_a_warning() {
    let mut doc = component(Some("1"), json!({}));
    doc["spec"]["componentType"]["name"] = json!("deployment/not-yet-applied");
    let found = judge(&doc, &published());
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].0.as_str(), found[0].3.as_str()), ("CVN-406", "warn"));
    // Without any cluster state nothing is resolved, and nothing is claimed.
    assert_eq!(judge(&component(Some("9"), json!({})), &covenant::cluster::EmptyCluster), []);
}

#[test]
fn a_binding_setting_a_field_the_frozen_major_removed_is_refused_naming_it() {
    let binding = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "ReleaseBinding",
        "metadata": {"name": "chess-render-production", "namespace": "chess"},
        "spec": {"owner": {"projectName": "chess", "componentName": "chess-render"}, "environment": "production",
            "releaseName": "chess-render-7449b895f4",
            "componentTypeEnvironmentConfigs": {"replicas": 2},
            "traitEnvironmentConfigs": {"otel": {"enabled": true, "collectorEndpoint": "http://collector:4317"}}}});
    let found = judge(&binding, &published());
    assert_eq!(found.len(), 1, "{found:?}");
    let (rule, pointer, message, _) = &found[0];
    assert_eq!(rule, "CVN-107");
    assert_eq!(pointer, "/spec/traitEnvironmentConfigs/otel/collectorEndpoint");
    assert!(message.contains("otel-instrumentation 2.0.0"), "{message}");
    assert!(message.contains("version 1.0.0 declared it"), "{message}");
    // The component type's environment configs are held to the schema the release froze too.
    let mut binding = binding;
    binding["spec"]["componentTypeEnvironmentConfigs"]["nope"] = json!(1);
    let found = judge(&binding, &published());
    let frozen =
        found.iter().find(|f| f.1 == "/spec/componentTypeEnvironmentConfigs/nope").expect("{found:?}");
    assert_eq!(frozen.0, "CVN-107");
    assert!(frozen.2.contains("frozen by chess-render-7449b895f4"), "{}", frozen.2);
}

fn ruby_v2() -> Value {
    let text =
        std::fs::read_to_string(common::fixtures().join("openchoreo/published/ruby-service.yaml")).unwrap();
    covenant::source::parse_stream(&text).0.remove(1).value
}

fn update(old: &Value, new: &Value) -> Vec<(String, String, String, String)> {
    let base = Base::from_sources(&[Source { name: "old.json".into(), text: old.to_string() }]).unwrap();
    assert_eq!(base.len(), 1, "the base must hold the old document");
    let report = check_with_base(
        &engine(),
        &OfflineCluster::default(),
        &[Source { name: "new.json".into(), text: new.to_string() }],
        Some(&base),
    );
    findings(&report)
}

fn at_version(doc: &Value, v: &str) -> Value {
    let mut d = doc.clone();
    d["metadata"]["annotations"]["openchoreo.dev/version"] = json!(v);
    d["metadata"]["labels"]["openchoreo.dev/version"] = json!(v);
    for r in d["spec"]["resources"].as_array_mut().unwrap() {
        if let Some(a) = r["template"]["metadata"]["annotations"].as_object_mut() {
            a.insert("openchoreo.dev/rendered-from-version".into(), json!(v));
        }
    }
    d
}

#[test]
fn the_contract_diff_judges_the_declared_bump() {
    let v1 = ruby_v2();
    // Removing xlarge's successor value under a minor: implied MAJOR, declared MINOR.
    let mut narrowed = at_version(&v1, "2.1.0");
    narrowed["spec"]["parameters"]["openAPIV3Schema"]["properties"]["sizeClass"]["enum"] =
        json!(["small", "medium"]);
    let found = update(&v1, &narrowed);
    // The bump is refused, and so is each change it does not cover, at its own rule.
    assert_eq!(found.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(), ["CVN-212", "CVN-204"], "{found:?}");
    assert!(found[0].2.contains("enum value \"large\" was removed"), "{}", found[0].2);
    // A PATCH that replaces the whole implementation with identical outputs stays PATCH.
    let mut reimplemented = at_version(&v1, "2.0.1");
    reimplemented["spec"]["resources"][0]["template"]["spec"] = json!({"replicas": 1, "strategy": {"type": "Recreate"}, "template": {"spec": {"containers": [{"name": "garage"}]}}});
    assert_eq!(update(&v1, &reimplemented), []);
    // … and declaring a major for it is more than the diff implies (and, in place, a major
    // that should have been a new object).
    let major = at_version(&reimplemented, "3.0.0");
    let rules: Vec<String> = update(&v1, &major).into_iter().map(|f| f.0).collect();
    assert!(rules.contains(&"CVN-213".to_string()) && rules.contains(&"CVN-409".to_string()), "{rules:?}");
    // A major applied in place is refused, naming the object to create.
    let found = update(&v1, &at_version(&narrowed, "3.0.0"));
    let inplace = found.iter().find(|f| f.0 == "CVN-409").expect("CVN-409");
    assert!(inplace.2.contains("create ruby-service-v3"), "{}", inplace.2);
    // Removing a rendered object a consumer can see is MAJOR (CVN-208 in the diff).
    let mut dropped = at_version(&v1, "2.1.0");
    dropped["spec"]["resources"].as_array_mut().unwrap().remove(1);
    let found = update(&v1, &dropped);
    assert!(
        found.iter().any(|f| f.0 == "CVN-208" && f.2.contains("field \"rendered.service\" was removed")),
        "{found:?}"
    );
}

#[test]
fn the_version_scheme_is_checked_on_every_construct() {
    let v2 = ruby_v2();
    assert_eq!(judge(&v2, &OfflineCluster::default()), []);
    // A stamp that disagrees with the declared version.
    let mut stale = v2.clone();
    stale["spec"]["resources"][0]["template"]["metadata"]["annotations"]
        ["openchoreo.dev/rendered-from-version"] = json!("1.1.0");
    let found = judge(&stale, &OfflineCluster::default());
    assert_eq!(found.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(), ["CVN-401"]);
    // A version annotation without labels declares a version nobody can pin.
    let mut unlabelled = v2.clone();
    unlabelled["metadata"]["labels"] = json!({});
    let found = judge(&unlabelled, &OfflineCluster::default());
    assert_eq!(found.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(), ["CVN-402", "CVN-402"]);
    // The object name carries the major.
    let mut misnamed = v2.clone();
    misnamed["metadata"]["name"] = json!("ruby-service-2");
    let found = judge(&misnamed, &OfflineCluster::default());
    assert_eq!(found[0].0, "CVN-403");
    assert!(found[0].2.contains("should be \"ruby-service-v2\""), "{}", found[0].2);
    // 0.x without saying it is experimental.
    let zero = at_version(&v2, "0.3.0");
    let found = judge(&zero, &OfflineCluster::default());
    assert!(found.iter().any(|f| f.0 == "CVN-408"), "{found:?}");
    // With the cluster: a second default, and a second object at one version.
    let mut second_default = v2.clone();
    second_default["metadata"]["labels"]["openchoreo.dev/default"] = json!("true");
    let found = judge(&second_default, &published());
    assert_eq!(found.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(), ["CVN-404"]);
    let mut copy = v2.clone();
    copy["metadata"]["name"] = json!("ruby-service-v2-copy");
    copy["metadata"]["labels"]["openchoreo.dev/name"] = json!("ruby-service");
    let rules: Vec<String> = judge(&copy, &published()).into_iter().map(|f| f.0).collect();
    assert!(rules.contains(&"CVN-405".to_string()), "{rules:?}");
}

#[test]
fn floating_images_and_the_support_window() {
    let workload = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Workload", "metadata": {"name": "w"},
        "spec": {"container": {"image": "ghcr.io/acme/shop:latest"}}});
    assert_eq!(judge(&workload, &OfflineCluster::default())[0].0, "CVN-407");
    for ok in [
        "ghcr.io/acme/shop:v1-3f9a2c1d",
        "ghcr.io/acme/shop@sha256:0123456789abcdef",
        "localhost:5000/shop:1.2",
    ] {
        let mut w = workload.clone();
        w["spec"]["container"]["image"] = json!(ok);
        assert_eq!(judge(&w, &OfflineCluster::default()), [], "{ok}");
    }
    let mut untagged = workload.clone();
    untagged["spec"]["container"]["image"] = json!("localhost:5000/shop");
    assert_eq!(judge(&untagged, &OfflineCluster::default())[0].0, "CVN-407");
    // Support window: with 2.0.0 the current major, 1.x is still supported (2.x has no
    // minor yet); once 2.1.0 is published, a pin to 1 is warned.
    assert_eq!(judge(&component(Some("1"), json!({})), &published()), []);
    let mut v21 = at_version(&ruby_v2(), "2.1.0");
    v21["metadata"]["name"] = json!("ruby-service-v2b");
    let text =
        std::fs::read_to_string(common::fixtures().join("openchoreo/published/ruby-service.yaml")).unwrap();
    let mut objects: Vec<Value> =
        covenant::source::parse_stream(&text).0.into_iter().map(|d| d.value).collect();
    objects.push(v21);
    let cluster = OfflineCluster::from_objects(objects);
    let found = judge(&component(Some("1"), json!({})), &cluster);
    assert_eq!(found.len(), 1);
    assert_eq!((found[0].0.as_str(), found[0].3.as_str()), ("CVN-411", "warn"));
    assert!(found[0].2.contains("newest supported: 2.1.0"), "{}", found[0].2);
}

#[test]
fn deleting_a_version_consumers_pin_is_warned() {
    let text =
        std::fs::read_to_string(common::fixtures().join("openchoreo/published/ruby-service.yaml")).unwrap();
    let mut objects: Vec<Value> =
        covenant::source::parse_stream(&text).0.into_iter().map(|d| d.value).collect();
    let v1 = objects[0].clone();
    objects.push(component(Some("1"), json!({})));
    let cluster = OfflineCluster::from_objects(objects);
    let mut subject = covenant::subject::Subject::from_document(json!({}));
    subject.gvk = covenant::subject::Gvk::from_api_version("openchoreo.dev/v1alpha1", "ClusterComponentType");
    subject.operation = covenant::subject::Operation::Delete;
    subject.object = None;
    subject.old_object = Some(covenant::subject::Object::from_value(v1));
    let verdict = engine().evaluate(&subject, &cluster);
    assert_eq!(verdict.findings.len(), 1, "{:?}", verdict.findings);
    assert_eq!(verdict.findings[0].rule.id, "CVN-410");
    assert!(
        verdict.findings[0].message.contains("Component bakery/bakery-web"),
        "{}",
        verdict.findings[0].message
    );
    assert!(!verdict.denied());
}

/// Every document of the OpenChoreo samples (the seed system's own), labelled as the seed's
/// scheme requires when `label` is set: each construct gets `openchoreo.dev/name`,
/// `openchoreo.dev/version: 1.0.0` and the default label, and the object name `<logical>-v1`.
fn samples(label: bool) -> Vec<Value> {
    let files = covenant::source::discover(&common::fixtures().join("openchoreo/samples")).unwrap();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for d in covenant::source::parse_stream(&text).0 {
            let mut v = d.value;
            let kind = v["kind"].as_str().unwrap_or_default().to_string();
            if label && covenant::families::construct::KINDS.contains(&kind.as_str()) {
                let logical = v["metadata"]["name"].as_str().unwrap().to_string();
                v["metadata"]["name"] = json!(format!("{logical}-v1"));
                v["metadata"]["labels"]["openchoreo.dev/name"] = json!(logical);
                v["metadata"]["labels"]["openchoreo.dev/version"] = json!("1.0.0");
                v["metadata"]["labels"]["openchoreo.dev/default"] = json!("true");
                v["metadata"]["annotations"]["openchoreo.dev/version"] = json!("1.0.0");
            }
            out.push(v);
        }
    }
    out
}

#[test]
fn the_openchoreo_samples_pass_before_and_after_labelling() {
    for label in [false, true] {
        let docs = samples(label);
        assert!(docs.len() >= 40, "{}", docs.len());
        let cluster = OfflineCluster::from_objects(docs.clone());
        let mut floating = 0;
        let mut resolved_consumers = 0;
        let mut undeclared = Vec::new();
        for doc in &docs {
            let found = judge(doc, &cluster);
            for (rule, pointer, message, _) in &found {
                match (rule.as_str(), pointer.as_str()) {
                    // The samples deploy `:latest` images, which the seed's platform refuses.
                    ("CVN-407", "/spec/container/image") => floating += 1,
                    // A real defect in the from-image sample: it sets `resources` in a
                    // scheduled-task Component's parameters, where the type declares it
                    // only in environmentConfigs; OpenChoreo prunes it without a word.
                    ("CVN-107", "/spec/parameters/resources") => undeclared.push(message.clone()),
                    _ => panic!("unexpected {rule} {pointer}: {message}"),
                }
            }
            if doc["kind"] == "Component" {
                resolved_consumers += 1;
            }
        }
        assert_eq!(floating, 5, "label={label}");
        assert_eq!(undeclared.len(), 1, "{undeclared:?}");
        assert!(
            undeclared[0].contains("Component github-issue-reporter is invalid against scheduled-task"),
            "{}",
            undeclared[0]
        );
        assert!(resolved_consumers >= 8, "{resolved_consumers}");
    }
}

#[test]
fn diff_compares_two_published_versions_by_name() {
    let context = common::fixtures().join("openchoreo/published");
    let run = |args: &[&str], code: i32| {
        let out = assert_cmd::Command::cargo_bin("covenant")
            .unwrap()
            .args(["diff", "--output", "json", "--context"])
            .arg(&context)
            .args(args)
            .assert()
            .code(code)
            .get_output()
            .stdout
            .clone();
        serde_json::from_slice::<Value>(&out).unwrap_or(Value::Null)
    };
    // The xlarge removal in ruby-service 2.0.0 is MAJOR, and the declared major covers it.
    let d = run(&["ruby-service", "1.1.0", "2.0.0"], 0);
    assert_eq!(
        (d["implied"].as_str(), d["declared"].as_str(), d["verdict"].as_str()),
        (Some("MAJOR"), Some("MAJOR"), Some("ok"))
    );
    let change =
        d["changes"].as_array().unwrap().iter().find(|c| c["change"] == "enum-value-removed").unwrap();
    assert_eq!(
        (change["pointer"].as_str(), change["before"].as_str()),
        (Some("/parameters/sizeClass"), Some("xlarge"))
    );
    // The implementation rows are shown, not hidden.
    assert!(d["changes"].as_array().unwrap().iter().any(|c| c["bump"] == "PATCH"), "{d}");
    // The otel-instrumentation collectorEndpoint removal is MAJOR too.
    let d = run(&["otel-instrumentation", "1.0.0", "2.0.0"], 0);
    let change = &d["changes"][0];
    assert_eq!(
        (change["pointer"].as_str(), change["change"].as_str(), change["bump"].as_str()),
        (Some("/environmentConfigs/collectorEndpoint"), Some("property-removed"), Some("MAJOR"))
    );
    // A version nobody published is an input error naming what is.
    run(&["ruby-service", "1.1.0", "9.0.0"], 2);
}

#[test]
fn a_minor_published_as_a_new_object_is_refused() {
    // ruby-service 2.1.0 created beside ruby-service-v2 (2.0.0) instead of moving it.
    let mut v21 = at_version(&ruby_v2(), "2.1.0");
    v21["metadata"]["name"] = json!("ruby-service-v2-1");
    let found = judge(&v21, &published());
    let minor = found.iter().find(|f| f.0 == "CVN-409").expect("CVN-409");
    assert!(minor.2.contains("move ruby-service-v2 forward to 2.1.0 in place"), "{}", minor.2);
}

/// A breaking contract change the declared version does not cover is reported twice: the
/// declared bump at the version annotation (CVN-212), and the change itself at the schema
/// location that changed, where the author fixes it.
#[test]
fn an_uncovered_breaking_change_points_at_the_schema_location_that_changed() {
    let text =
        std::fs::read_to_string(common::fixtures().join("openchoreo/published/ruby-service.yaml")).unwrap();
    let old = covenant::source::parse_stream(&text).0.remove(0).value;
    let mut new = old.clone();
    new["metadata"]["annotations"]["openchoreo.dev/version"] = json!("1.2.0");
    new["metadata"]["labels"]["openchoreo.dev/version"] = json!("1.2.0");
    new["spec"]["parameters"]["openAPIV3Schema"]["properties"]["sizeClass"]["enum"] =
        json!(["small", "medium", "large"]);
    let mut subject = covenant::subject::Subject::from_document(new);
    subject.operation = covenant::subject::Operation::Update;
    subject.old_object = Some(covenant::subject::Object::from_value(old));
    let verdict = engine().evaluate(&subject, &covenant::cluster::EmptyCluster);
    let at: Vec<(&str, &str)> = verdict.findings.iter().map(|f| (f.rule.id, f.pointer.as_str())).collect();
    assert!(at.contains(&("CVN-212", "/metadata/annotations/openchoreo.dev~1version")), "{at:?}");
    assert!(at.contains(&("CVN-204", "/spec/parameters/openAPIV3Schema/properties/sizeClass")), "{at:?}");
}

/// A construct whose parameters are written in OpenChoreo's compact syntax (`ocSchema`)
/// judges its consumers the same as its `openAPIV3Schema` spelling: a missing required
/// field, a value outside a bound, an enum miss and an undeclared key are each found at the
/// consumer's pointer, and a consumer that fits passes.
#[test]
fn consumers_are_checked_against_a_compact_schema() {
    let ocschema = json!({
        "$types": {"Probe": {"$default": {}, "path": "string | default=/healthz", "port": "integer | default=8080 minimum=1"}},
        "port": "integer | minimum=1 maximum=65535",
        "tier": "string | enum=small,'extra large' default=small",
        "probe": "Probe"
    });
    let construct = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "ClusterComponentType",
        "metadata": {"name": "compact-v1", "labels": {"openchoreo.dev/name": "compact", "openchoreo.dev/version": "1.0.0"},
                     "annotations": {"openchoreo.dev/version": "1.0.0"}},
        "spec": {"workloadType": "deployment", "parameters": {"ocSchema": ocschema}}});
    let cluster = OfflineCluster::from_objects([construct]);
    let consumer = |parameters: Value| {
        json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Component",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"owner": {"projectName": "shop"},
                     "componentType": {"kind": "ClusterComponentType", "name": "deployment/compact", "version": "1"},
                     "parameters": parameters}})
    };
    assert_eq!(
        judge(&consumer(json!({"port": 8080, "tier": "extra large", "probe": {"port": 9090}})), &cluster),
        []
    );
    let found = judge(&consumer(json!({"tier": "huge", "probe": {"port": 0, "paht": "/"}})), &cluster);
    let at: Vec<&str> = found.iter().map(|f| f.1.as_str()).collect();
    for pointer in [
        "/spec/parameters",
        "/spec/parameters/tier",
        "/spec/parameters/probe/port",
        "/spec/parameters/probe/paht",
    ] {
        assert!(at.contains(&pointer), "{pointer} missing from {found:?}");
    }
    assert!(found.iter().all(|f| f.0 == "CVN-107" && f.3 == "deny"), "{found:?}");
    let missing = found.iter().find(|f| f.1 == "/spec/parameters").unwrap();
    assert!(missing.2.contains("port"), "{missing:?}");
}

/// An objectstore ResourceType at `version`, rendered by `backend` (the seed's MinIO →
/// Garage: the backing workload, its entry ids and container change; the Service consumers
/// call, its port and the outputs do not).
fn objectstore(version: &str, backend: &str) -> Value {
    json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "ClusterResourceType",
    "metadata": {"name": "objectstore-v1",
                 "labels": {"openchoreo.dev/name": "objectstore", "openchoreo.dev/version": version},
                 "annotations": {"openchoreo.dev/version": version}},
    "spec": {
        "parameters": {"openAPIV3Schema": {"type": "object", "properties": {"bucket": {"type": "string", "default": "data"}}}},
        "outputs": [{"name": "S3_ENDPOINT", "value": "${metadata.name}:9000"}, {"name": "S3_BUCKET", "value": "${parameters.bucket}"}],
        "resources": [
            {"id": backend, "template": {"apiVersion": "apps/v1", "kind": "StatefulSet",
                "metadata": {"name": format!("${{metadata.name}}-{backend}"),
                             "annotations": {"openchoreo.dev/rendered-from-version": version, "openchoreo.dev/rendered-from-type": "objectstore"}},
                "spec": {"template": {"spec": {"containers": [{"name": backend, "image": format!("{backend}:1.0"),
                    "ports": [{"containerPort": if backend == "minio" { 9000 } else { 3900 }}]}]}}}}},
            {"id": format!("{backend}-service"), "template": {"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "${metadata.name}"},
                "spec": {"ports": [{"name": "s3", "port": 9000, "targetPort": if backend == "minio" { 9000 } else { 3900 }}]}}}
        ]
    }})
}

/// The rendered shape is compared by what a consumer sees: replacing the implementation
/// entirely while every output, Service name and port stays is PATCH (entry ids renamed, the
/// backing workload renamed and re-imaged); a Service name template, a Service port or a
/// mounted path that moves is MAJOR, however the template spells it; an expression spelled
/// with other spacing is no change.
#[test]
fn the_rendered_contract_is_what_a_consumer_sees_not_internal_identifiers() {
    let minio = objectstore("1.0.0", "minio");
    assert_eq!(update(&minio, &objectstore("1.0.1", "garage")), [], "MinIO → Garage is a patch");
    let found = update(&minio, &objectstore("2.0.0", "garage"));
    assert!(
        found.iter().any(|f| f.0 == "CVN-213"),
        "a major for it is more than the diff implies: {found:?}"
    );

    let service = |d: &mut Value| -> Value { d["spec"]["resources"][1]["template"].take() };
    type Edit = fn(&mut Value);
    let variants: [(&str, Edit); 4] = [
        ("name template", |t| t["metadata"]["name"] = json!("${metadata.name}-s3")),
        ("name template as an expression", |t| t["metadata"]["name"] = json!("${metadata.name + '-s3'}")),
        ("port", |t| t["spec"]["ports"][0]["port"] = json!(9001)),
        ("port name", |t| t["spec"]["ports"][0]["name"] = json!("api")),
    ];
    for (what, edit) in variants {
        let mut changed = objectstore("1.0.1", "garage");
        let mut t = service(&mut changed);
        edit(&mut t);
        changed["spec"]["resources"][1]["template"] = t;
        let found = update(&minio, &changed);
        assert!(
            found.iter().any(|f| f.0 == "CVN-212" && f.2.contains("MAJOR")),
            "{what}: a PATCH that moves what consumers see is too small: {found:?}"
        );
        assert!(found.iter().any(|f| f.0 == "CVN-208" && f.2.contains("rendered")), "{what}: {found:?}");
    }
    // Spacing inside an expression is the same template.
    let mut spaced = objectstore("1.0.1", "minio");
    spaced["spec"]["resources"][1]["template"]["metadata"]["name"] = json!("${ metadata.name }");
    assert_eq!(update(&minio, &spaced), []);

    // A mounted path, in a resource template or in a trait's patch.
    let mut mounted = objectstore("1.0.0", "minio");
    mounted["spec"]["resources"][0]["template"]["spec"]["template"]["spec"]["containers"][0]
        ["volumeMounts"] = json!([{"name": "data", "mountPath": "/data"}]);
    let mut moved = at_version(&mounted, "1.0.1");
    moved["spec"]["resources"][0]["template"]["spec"]["template"]["spec"]["containers"][0]["volumeMounts"]
        [0]["mountPath"] = json!("/var/lib/data");
    let found = update(&mounted, &moved);
    assert!(
        found
            .iter()
            .any(|f| f.0 == "CVN-208" && f.2.contains("\"/data\"") && f.2.contains("\"/var/lib/data\"")),
        "{found:?}"
    );
    let volume_trait = |path: &str, version: &str| {
        json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "ClusterTrait",
            "metadata": {"name": "volume-v1", "labels": {"openchoreo.dev/name": "volume", "openchoreo.dev/version": version},
                         "annotations": {"openchoreo.dev/version": version}},
            "spec": {"patches": [{"target": {"group": "apps", "version": "v1", "kind": "Deployment"},
                "operations": [{"op": "add", "path": "/spec/template/spec/containers/0/volumeMounts/-",
                                "value": {"name": "${parameters.volumeName}", "mountPath": path}}]}]}})
    };
    let found = update(&volume_trait("/cache", "1.0.0"), &volume_trait("/tmp/cache", "1.0.1"));
    assert!(found.iter().any(|f| f.0 == "CVN-208" && f.2.contains("mounted path")), "{found:?}");
    assert_eq!(
        update(&volume_trait("/cache", "1.0.0"), &volume_trait("/cache", "1.1.0"))
            .iter()
            .filter(|f| f.0 != "CVN-213")
            .count(),
        0
    );
}

/// Every literal stamp in what a construct renders agrees with its version and name:
/// the object's metadata, a pod template's, a nested template's labels, a trait patch that
/// writes one. A stamp computed by an expression is not judged.
#[test]
fn stamps_anywhere_in_a_rendered_template_agree() {
    let base = objectstore("1.0.0", "minio");
    assert_eq!(judge(&base, &OfflineCluster::default()).iter().filter(|f| f.0 == "CVN-401").count(), 0);
    let at = ["/spec/template/metadata/annotations", "/spec/template/metadata/labels", "/metadata/labels"];
    for pointer in at {
        for (key, value) in [
            ("openchoreo.dev/rendered-from-version", "0.9.0"),
            ("openchoreo.dev/rendered-from-type", "minio-store"),
        ] {
            let with = |v: &str| {
                let mut doc = base.clone();
                let mut node = &mut doc["spec"]["resources"][0]["template"];
                for step in pointer.split('/').skip(1) {
                    node = node.as_object_mut().unwrap().entry(step).or_insert(json!({}));
                }
                node[key] = json!(v);
                doc
            };
            let found = judge(&with(value), &OfflineCluster::default());
            let stamps: Vec<_> = found.iter().filter(|f| f.0 == "CVN-401").collect();
            assert_eq!(stamps.len(), 1, "{pointer} {key}: {found:?}");
            assert!(stamps[0].1.starts_with(&format!("/spec/resources/0/template{pointer}")), "{stamps:?}");
            // The same written by an expression is the renderer's business.
            let computed = judge(&with("${metadata.version}"), &OfflineCluster::default());
            assert_eq!(computed.iter().filter(|f| f.0 == "CVN-401").count(), 0);
        }
    }
    let patched = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "ClusterTrait",
        "metadata": {"name": "tag-v1", "labels": {"openchoreo.dev/name": "tag", "openchoreo.dev/version": "1.0.0"},
                     "annotations": {"openchoreo.dev/version": "1.0.0"}},
        "spec": {"patches": [{"target": {"kind": "Deployment"}, "operations": [
            {"op": "add", "path": "/metadata/annotations/openchoreo.dev~1rendered-from-version", "value": "1.2.0"}]}]}});
    let found = judge(&patched, &OfflineCluster::default());
    assert!(
        found.iter().any(|f| f.0 == "CVN-401" && f.1 == "/spec/patches/0/operations/0/value"),
        "{found:?}"
    );
}

/// A parameter the resolved version lacks is named with the versions that declare it,
/// truthfully: one only a newer major declares is "declared from 3.0.0 on" with how the pin
/// resolved, never "2.0.0 removed it"; one an older version declared keeps "removed it".
#[test]
fn a_missing_parameter_names_versions_truthfully() {
    let v2 = ruby_v2();
    let mut v3 = at_version(&v2, "3.0.0");
    v3["metadata"]["name"] = json!("ruby-service-v3");
    v3["metadata"]["labels"].as_object_mut().unwrap().remove("openchoreo.dev/default");
    v3["spec"]["parameters"]["openAPIV3Schema"]["properties"]["replicas"] =
        json!({"type": "integer", "default": 1});
    let v1 = covenant::source::parse_stream(
        &std::fs::read_to_string(common::fixtures().join("openchoreo/published/ruby-service.yaml")).unwrap(),
    )
    .0
    .remove(0)
    .value;
    let cluster = OfflineCluster::from_objects([v1, v2, v3]);
    for (pin, how) in
        [("2", "the pin \"2\" resolves to 2.0.0"), ("2.0.0", "the pin \"2.0.0\" resolves to 2.0.0")]
    {
        let found = judge(&component(Some(pin), json!({"replicas": 2})), &cluster);
        assert_eq!(found.len(), 1, "{pin}: {found:?}");
        let message = &found[0].2;
        assert!(message.contains(&format!("\"replicas\" is declared from 3.0.0 on; {how}")), "{message}");
        assert!(!message.contains("removed"), "{message}");
    }
    // xlarge's field is gone from 2.0.0's enum, not a key: take a key 1.1.0 had that 2.0.0
    // lacks by giving 1.1.0 one.
    let mut v1 = covenant::source::parse_stream(
        &std::fs::read_to_string(common::fixtures().join("openchoreo/published/ruby-service.yaml")).unwrap(),
    )
    .0
    .remove(0)
    .value;
    v1["spec"]["parameters"]["openAPIV3Schema"]["properties"]["legacyMode"] = json!({"type": "boolean"});
    let cluster = OfflineCluster::from_objects([v1, ruby_v2()]);
    let found = judge(&component(Some("2"), json!({"legacyMode": true})), &cluster);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].2.contains("version 1.1.0 declared it, 2.0.0 removed it"), "{}", found[0].2);
}

/// A ReleaseBinding override for a trait instance its release does not have would be
/// ignored by the platform: it is refused, naming the instances there are.
#[test]
fn an_override_for_a_trait_instance_the_release_lacks_is_refused() {
    for (instance, hint) in [("otle", "(did you mean \"otel\"?)"), ("metrics", "")] {
        let binding = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "ReleaseBinding",
            "metadata": {"name": "chess-render-production", "namespace": "chess"},
            "spec": {"owner": {"projectName": "chess", "componentName": "chess-render"}, "environment": "production",
                "releaseName": "chess-render-7449b895f4",
                "traitEnvironmentConfigs": {instance: {"enabled": true}}}});
        let found = judge(&binding, &published());
        assert_eq!(found.len(), 1, "{found:?}");
        let (rule, pointer, message, action) = &found[0];
        assert_eq!((rule.as_str(), action.as_str()), ("CVN-107", "deny"));
        assert_eq!(pointer, &format!("/spec/traitEnvironmentConfigs/{instance}"));
        assert!(message.contains(&format!("has no trait instance \"{instance}\"")), "{message}");
        assert!(message.contains(hint) && message.contains("its trait instances are otel"), "{message}");
    }
}

/// Who uses which version, from one `satisfies()`: `covenant status --context DIR` and the
/// admin listener's `/api/v0/status` give the same JSON — each construct's published
/// versions, the default, consumers per resolved version (pinned, floating, frozen in a
/// release) and the pins that resolve to nothing — and the table counts them.
#[tokio::test]
async fn status_says_who_uses_which_version_in_the_cli_and_on_the_admin_listener() {
    let dir = tempfile::tempdir().unwrap();
    for f in ["ruby-service.yaml", "otel-instrumentation.yaml", "chess-render-release.yaml"] {
        std::fs::copy(common::fixtures().join("openchoreo/published").join(f), dir.path().join(f)).unwrap();
    }
    let consumers = [("web", Some("2")), ("api", Some("1.1")), ("jobs", None), ("old", Some("9"))];
    for (name, pin) in consumers {
        let mut c = component(pin, json!({}));
        c["metadata"]["name"] = json!(name);
        std::fs::write(dir.path().join(format!("{name}.json")), c.to_string()).unwrap();
    }
    let out = assert_cmd::Command::cargo_bin("covenant")
        .unwrap()
        .args(["status", "--output", "json", "--context"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ruby = cli["constructs"].as_array().unwrap().iter().find(|c| c["name"] == "ruby-service").unwrap();
    assert_eq!(ruby["kind"], "ClusterComponentType");
    assert_eq!(ruby["default"], "1.1.0");
    let at = |v: &str| {
        ruby["versions"].as_array().unwrap().iter().find(|x| x["version"] == v).unwrap()["consumers"].clone()
    };
    assert_eq!(at("2.0.0")["pinned"], json!(["Component bakery/web (pin \"2\")"]));
    assert_eq!(at("1.1.0")["pinned"], json!(["Component bakery/api (pin \"1.1\")"]));
    assert_eq!(at("1.1.0")["floating"], json!(["Component bakery/jobs"]));
    assert_eq!(at("1.1.0")["frozen"], json!(["ComponentRelease chess/chess-render-7449b895f4"]));
    assert_eq!(ruby["unresolved"][0]["consumer"], "Component bakery/old");
    // 2.0.0 has no minor yet, so 1.x is still supported; api and jobs are behind the newest.
    assert_eq!((ruby["window"].as_str(), ruby["newest"].as_str()), (Some("1.x–2.x"), Some("2.0.0")));
    assert_eq!((ruby["belowNewest"].as_u64(), ruby["outsideWindow"].as_u64()), (Some(2), Some(0)));
    let otel =
        cli["constructs"].as_array().unwrap().iter().find(|c| c["name"] == "otel-instrumentation").unwrap();
    let frozen = &otel["versions"].as_array().unwrap().iter().find(|x| x["version"] == "2.0.0").unwrap()
        ["consumers"]["frozen"];
    assert_eq!(frozen, &json!(["ComponentRelease chess/chess-render-7449b895f4"]));
    assert_eq!(cli["upgradeGap"], 0);

    let text = assert_cmd::Command::cargo_bin("covenant")
        .unwrap()
        .args(["status", "--context"])
        .arg(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("ClusterComponentType  ruby-service"), "{text}");
    assert!(text.contains("Component bakery/old: pin \"9\" of ruby-service resolves to nothing"), "{text}");
    assert!(!text.contains("holds no construct"), "{text}");
    // A context of no construct says so, beside the empty table.
    let other = tempfile::tempdir().unwrap();
    std::fs::write(other.path().join("cm.yaml"), "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n")
        .unwrap();
    let out = assert_cmd::Command::cargo_bin("covenant")
        .unwrap()
        .args(["status", "--context"])
        .arg(other.path())
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(
        text.contains("holds no construct (openchoreo.dev ComponentType, ClusterComponentType, "),
        "{text}"
    );

    let cluster: std::sync::Arc<dyn ClusterView> =
        std::sync::Arc::new(OfflineCluster::load_dir(dir.path()).unwrap());
    let server =
        common::TestServer::with(common::Setup { cluster: Some(cluster), ..common::Setup::default() }).await;
    let admin: Value =
        reqwest::get(format!("http://{}/api/v0/status", server.api)).await.unwrap().json().await.unwrap();
    assert_eq!(admin["constructs"], cli["constructs"], "the admin listener and the CLI agree");
    assert_eq!(admin["total"], 2);
    let page: Value = reqwest::get(format!("http://{}/api/v0/status?limit=1", server.api))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(page["constructs"].as_array().unwrap().len(), 1);
    assert_eq!(page["next"], 1);
    assert_eq!(page["constructs"][0], cli["constructs"][0]);
    // An offset that would overflow is a 400, not a page whose next wraps to 0.
    let huge = format!("http://{}/api/v0/status?offset={}&limit=10", server.api, usize::MAX);
    let resp = reqwest::get(huge).await.unwrap();
    assert_eq!(resp.status(), 400);
    assert!(resp.text().await.unwrap().contains("query parameter offset"));
    let far: Value =
        reqwest::get(format!("http://{}/api/v0/status?offset=4294967296&limit=1000", server.api))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
    assert!(far["constructs"].as_array().unwrap().is_empty() && far.get("next").is_none(), "{far}");
}

/// `/api/v0/compare` answers the contract diff of two published versions, byte for byte what
/// `covenant diff --context DIR NAME FROM TO` prints, as markdown and as JSON; a version not
/// published is a 404 naming what is; a cluster that cannot be read is a 503.
#[tokio::test]
async fn compare_on_the_admin_listener_is_the_diff_the_cli_prints() {
    let dir = common::fixtures().join("openchoreo/published");
    let cluster: std::sync::Arc<dyn ClusterView> =
        std::sync::Arc::new(OfflineCluster::load_dir(&dir).unwrap());
    let server =
        common::TestServer::with(common::Setup { cluster: Some(cluster), ..common::Setup::default() }).await;
    for (output, query) in [("markdown", "&output=markdown"), ("json", "")] {
        let cli = assert_cmd::Command::cargo_bin("covenant")
            .unwrap()
            .args(["diff", "--output", output, "--context"])
            .arg(&dir)
            .args(["ruby-service", "1.1.0", "2.0.0"])
            .output()
            .unwrap();
        let url = format!(
            "http://{}/api/v0/compare?kind=ClusterComponentType&name=ruby-service&from=1.1.0&to=2.0.0{query}",
            server.api
        );
        let admin = reqwest::get(url).await.unwrap();
        assert_eq!(admin.status(), 200);
        let body = admin.bytes().await.unwrap();
        assert!(!cli.stdout.is_empty());
        assert_eq!(String::from_utf8_lossy(&body), String::from_utf8_lossy(&cli.stdout), "{output}");
    }
    let missing =
        reqwest::get(format!("http://{}/api/v0/compare?name=ruby-service&from=1.1.0&to=3.0.0", server.api))
            .await
            .unwrap();
    assert_eq!(missing.status(), 404);
    let problem: Value = missing.json().await.unwrap();
    assert!(problem["detail"].as_str().unwrap().contains("not published at 3.0.0 (published:"), "{problem}");
    // An output it cannot write, or a parameter it does not read, is refused, never ignored.
    let base = format!("http://{}/api/v0/compare?name=ruby-service&from=1.1.0&to=2.0.0", server.api);
    let yaml = reqwest::get(format!("{base}&output=yaml")).await.unwrap();
    assert_eq!(yaml.status(), 400);
    assert!(yaml.text().await.unwrap().contains("output=yaml: expected json or markdown"));
    let unknown = reqwest::get(format!("{base}&colour=1")).await.unwrap();
    assert_eq!(unknown.status(), 400);
    assert!(unknown.text().await.unwrap().contains("unknown field `colour`"));
    // A kind that is not a construct kind is named, not searched and reported unpublished.
    let kind = reqwest::get(format!("{base}&kind=Component")).await.unwrap();
    assert_eq!(kind.status(), 400);
    let problem: Value = kind.json().await.unwrap();
    assert!(
        problem["detail"].as_str().unwrap().starts_with("kind \"Component\" is not a construct kind"),
        "{problem}"
    );
    // Without readable cluster state, what is published is unknown: 503, never "not published".
    let blind = common::TestServer::start().await;
    let url = format!("http://{}/api/v0/compare?name=ruby-service&from=1.1.0&to=2.0.0", blind.api);
    let unreadable = reqwest::get(url).await.unwrap();
    assert_eq!(unreadable.status(), 503);
    let problem: Value = unreadable.json().await.unwrap();
    assert_eq!(problem["type"].as_str().map(|t| t.ends_with("cluster-unavailable")), Some(true), "{problem}");
    let detail = problem["detail"].as_str().unwrap();
    assert!(detail.starts_with("cannot read the published constructs: no cluster state"), "{detail}");
}

/// `covenant upgrade --context PUBLISHED PATH EXTRA…`, which must exit with `code`: its stdout
/// and stderr.
fn upgrade(
    published: &std::path::Path,
    path: &std::path::Path,
    extra: &[&str],
    code: i32,
) -> (String, String) {
    let out = assert_cmd::Command::cargo_bin("covenant")
        .unwrap()
        .args(["upgrade", "--context"])
        .arg(published)
        .arg(path)
        .args(extra)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap());
    assert_eq!(out.status.code(), Some(code), "{stdout}{stderr}");
    (stdout, stderr)
}

/// `covenant upgrade` over the seed's worked example: ruby-service 1.1.0 → 2.0.0 removes
/// `xlarge`, so a consumer using it is told it would not apply (naming the finding) and one
/// using `medium` that it would; `--write` moves only the latter's pin, every other byte
/// kept; the admin API answers the same per stored consumer.
#[tokio::test]
async fn upgrade_says_whether_each_manifest_would_still_apply() {
    let published = common::fixtures().join("openchoreo/published");
    let dir = tempfile::tempdir().unwrap();
    let manifest = "apiVersion: openchoreo.dev/v1alpha1\nkind: Component\nmetadata:\n  name: web\n  namespace: bakery\nspec:\n  owner: {projectName: bakery}\n  componentType:\n    kind: ClusterComponentType\n    name: deployment/ruby-service\n    version: \"1\"\n  parameters:\n    sizeClass: xlarge\n---\napiVersion: openchoreo.dev/v1alpha1\nkind: Component\nmetadata:\n  name: api\n  namespace: bakery\nspec:\n  owner: {projectName: bakery}\n  componentType:\n    kind: ClusterComponentType\n    name: deployment/ruby-service\n    version: '1'   # the stable line\n  parameters:\n    sizeClass: medium\n";
    let file = dir.path().join("components.yaml");
    std::fs::write(&file, manifest).unwrap();
    let run = |extra: &[&str]| upgrade(&published, &file, extra, 0).0;
    let json: Value = serde_json::from_str(&run(&["--output", "json"])).unwrap();
    let plans = json.as_array().unwrap();
    assert_eq!(plans.len(), 2, "{json}");
    let web = plans.iter().find(|p| p["consumer"] == "Component bakery/web").unwrap();
    assert_eq!(
        (web["from"].as_str(), web["to"].as_str(), web["newPin"].as_str()),
        (Some("1.1.0"), Some("2.0.0"), Some("2"))
    );
    assert_eq!(web["implied"], "MAJOR");
    assert_eq!(web["applies"], false);
    assert_eq!(web["findings"][0]["pointer"], "/spec/parameters/sizeClass");
    assert!(web["findings"][0]["message"].as_str().unwrap().contains("\"xlarge\""), "{web}");
    let api = plans.iter().find(|p| p["consumer"] == "Component bakery/api").unwrap();
    assert_eq!(api["applies"], true, "{api}");
    let md = run(&["--output", "markdown"]);
    assert!(
        md.contains("## Upgrade Component bakery/web: ClusterComponentType ruby-service 1.1.0 → 2.0.0"),
        "{md}"
    );
    assert!(md.contains("**would NOT apply.**") && md.contains("## Contract diff"), "{md}");
    // --to a version already reached plans nothing.
    assert!(run(&["--to", "1.1.0"]).contains("0 upgrade(s) planned"));

    let text = run(&["--write"]);
    assert!(text.contains("1 pin(s) written"), "{text}");
    let written = std::fs::read_to_string(&file).unwrap();
    assert_eq!(
        written,
        manifest.replace("version: '1'   # the stable line", "version: '2'   # the stable line")
    );

    // The admin API, per stored consumer.
    let mut objects: Vec<Value> = Vec::new();
    for f in covenant::source::discover(&published).unwrap() {
        objects.extend(
            covenant::source::parse_stream(&std::fs::read_to_string(f).unwrap())
                .0
                .into_iter()
                .map(|d| d.value),
        );
    }
    objects.extend(covenant::source::parse_stream(manifest).0.into_iter().map(|d| d.value));
    let cluster: std::sync::Arc<dyn ClusterView> = std::sync::Arc::new(OfflineCluster::from_objects(objects));
    let server =
        common::TestServer::with(common::Setup { cluster: Some(cluster), ..common::Setup::default() }).await;
    let got: Value = reqwest::get(format!(
        "http://{}/api/v0/upgrade?kind=Component&namespace=bakery&name=web",
        server.api
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(got[0]["applies"], false, "{got}");
    assert_eq!(got[0]["findings"], web["findings"]);
    assert_eq!(got[0]["diff"], web["diff"]);
    let missing =
        reqwest::get(format!("http://{}/api/v0/upgrade?kind=Component&name=nope", server.api)).await.unwrap();
    assert_eq!(missing.status(), 404);
}

/// The seed's second example through `covenant upgrade`: otel-instrumentation 2.0.0 removes
/// `collectorEndpoint`. The Component itself still validates against 2.0.0, but a
/// ReleaseBinding of it (in another file) still sets the key, so the upgrade would not apply
/// and `--write` leaves the pin alone; a binding that sets only `enabled` is fine.
#[test]
fn upgrade_judges_each_binding_s_environment_configs_against_the_target() {
    let published = common::fixtures().join("openchoreo/published");
    let dir = tempfile::tempdir().unwrap();
    let component = "apiVersion: openchoreo.dev/v1alpha1\nkind: Component\nmetadata:\n  name: web\n  namespace: bakery\nspec:\n  owner: {projectName: bakery}\n  componentType: {kind: ClusterComponentType, name: deployment/ruby-service, version: \"2\"}\n  traits:\n    - {kind: ClusterTrait, name: otel-instrumentation, instanceName: otel, version: \"1\"}\n";
    let binding = |name: &str, otel: &str| {
        format!("apiVersion: openchoreo.dev/v1alpha1\nkind: ReleaseBinding\nmetadata:\n  name: {name}\n  namespace: bakery\nspec:\n  owner: {{projectName: bakery, componentName: web}}\n  environment: {name}\n  traitEnvironmentConfigs:\n    otel: {otel}\n")
    };
    std::fs::write(dir.path().join("component.yaml"), component).unwrap();
    let bindings = format!(
        "{}---\n{}",
        binding("production", "{enabled: true, collectorEndpoint: \"http://collector:4317\"}"),
        binding("staging", "{enabled: false}")
    );
    std::fs::write(dir.path().join("bindings.yaml"), &bindings).unwrap();
    let run = |extra: &[&str]| upgrade(&published, dir.path(), extra, 0).0;
    let json: Value = serde_json::from_str(&run(&["--output", "json"])).unwrap();
    let plans = json.as_array().unwrap();
    assert_eq!(plans.len(), 1, "{json}");
    let plan = &plans[0];
    assert_eq!((plan["name"].as_str(), plan["from"].as_str()), (Some("otel-instrumentation"), Some("1.0.0")));
    assert_eq!(plan["findings"], json!([]), "the Component itself validates: {plan}");
    assert_eq!(plan["applies"], false, "{plan}");
    let by_name =
        |n: &str| plan["bindings"].as_array().unwrap().iter().find(|b| b["binding"] == n).unwrap().clone();
    let production = by_name("ReleaseBinding bakery/production");
    assert_eq!(production["applies"], false);
    assert_eq!(production["findings"][0]["rule"], "CVN-107");
    assert_eq!(production["findings"][0]["pointer"], "/spec/traitEnvironmentConfigs/otel/collectorEndpoint");
    assert!(
        production["findings"][0]["message"]
            .as_str()
            .unwrap()
            .contains("otel-instrumentation 2.0.0 (frozen by the next release): key \"collectorEndpoint\" is not declared (allowed: enabled); version 1.0.0 declared it, 2.0.0 removed it"),
        "{production}"
    );
    assert_eq!(by_name("ReleaseBinding bakery/staging")["applies"], true);
    let text = run(&["--write"]);
    assert!(
        text.contains(
            "ReleaseBinding bakery/production: its environment configs would NOT validate against 2.0.0"
        ),
        "{text}"
    );
    assert!(text.contains("0 pin(s) written"), "{text}");
    assert_eq!(std::fs::read_to_string(dir.path().join("component.yaml")).unwrap(), component);

    // Without the offending key the move applies, and is written.
    std::fs::write(
        dir.path().join("bindings.yaml"),
        bindings.replace(", collectorEndpoint: \"http://collector:4317\"", ""),
    )
    .unwrap();
    let text = run(&["--write"]);
    assert!(text.contains("1 pin(s) written"), "{text}");
    assert!(std::fs::read_to_string(dir.path().join("component.yaml"))
        .unwrap()
        .contains("instanceName: otel, version: \"2\"}"));

    // A component file in UTF-16 (with its mark) is read, and written back in UTF-16, only
    // the pin changed.
    let utf16 = |text: &str| {
        [0xFF, 0xFE].into_iter().chain(text.encode_utf16().flat_map(u16::to_le_bytes)).collect::<Vec<u8>>()
    };
    std::fs::write(dir.path().join("component.yaml"), utf16(component)).unwrap();
    let text = run(&["--write"]);
    assert!(text.contains("1 pin(s) written"), "{text}");
    assert_eq!(
        std::fs::read(dir.path().join("component.yaml")).unwrap(),
        utf16(
            &component.replace("instanceName: otel, version: \"1\"}", "instanceName: otel, version: \"2\"}")
        )
    );
}

/// A file `upgrade` cannot read may hold the bindings a plan must judge: nothing is planned
/// (or written), and the command fails naming the file and the place. Paths that hold no
/// document fail too, never "0 upgrade(s) planned".
#[test]
fn upgrade_plans_nothing_from_inputs_it_cannot_read() {
    let published = common::fixtures().join("openchoreo/published");
    let dir = tempfile::tempdir().unwrap();
    let component = "apiVersion: openchoreo.dev/v1alpha1\nkind: Component\nmetadata:\n  name: web\n  namespace: bakery\nspec:\n  owner: {projectName: bakery}\n  componentType: {kind: ClusterComponentType, name: deployment/ruby-service, version: \"1\"}\n";
    std::fs::write(dir.path().join("component.yaml"), component).unwrap();
    std::fs::write(
        dir.path().join("bindings.yaml"),
        "apiVersion: openchoreo.dev/v1alpha1\nkind: ReleaseBinding\nspec: [\n",
    )
    .unwrap();
    let run = |path: &std::path::Path| upgrade(&published, path, &["--write"], 2).1;
    let err = run(dir.path());
    assert!(err.contains("nothing planned: ") && err.contains("bindings.yaml:4:1: not valid YAML"), "{err}");
    assert_eq!(
        std::fs::read_to_string(dir.path().join("component.yaml")).unwrap(),
        component,
        "nothing written"
    );

    // A pin written twice: which one kubectl applies is not the one a plan would judge and
    // move, so nothing is planned either.
    std::fs::remove_file(dir.path().join("bindings.yaml")).unwrap();
    let twice = component.replace("version: \"1\"}\n", "version: \"1\"}\n  componentType: {name: x}\n");
    std::fs::write(dir.path().join("component.yaml"), &twice).unwrap();
    let err = run(dir.path());
    assert!(
        err.contains("nothing planned: ")
            && err.contains(
                "component.yaml:9:3: the key \"componentType\" is repeated in one mapping (first at line 8)"
            ),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(dir.path().join("component.yaml")).unwrap(), twice, "nothing written");

    let empty = tempfile::tempdir().unwrap();
    std::fs::write(empty.path().join("notes.yaml"), "# nothing yet\n").unwrap();
    let err = run(empty.path());
    assert!(err.contains("nothing to plan: ") && err.contains("holds no document"), "{err}");
}

/// A list document (`kubectl get components -o yaml`) is planned object by object, a list in
/// it too, and `--write` moves the pin where the object is in the list; items that are not a
/// list are refused with the rest, never "0 upgrade(s) planned".
#[test]
fn upgrade_reads_a_list_as_its_objects() {
    let published = common::fixtures().join("openchoreo/published");
    let dir = tempfile::tempdir().unwrap();
    let component = |name: &str| {
        format!(
            "  - apiVersion: openchoreo.dev/v1alpha1\n    kind: Component\n    metadata: {{name: {name}, namespace: bakery}}\n    spec:\n      owner: {{projectName: bakery}}\n      componentType: {{kind: ClusterComponentType, name: deployment/ruby-service, version: \"1\"}}\n"
        )
    };
    let list = format!(
        "apiVersion: v1\nkind: List\nitems:\n{}- apiVersion: v1\n  kind: List\n  items:\n{}",
        component("web").replacen("  - ", "- ", 1).replace("\n    ", "\n  "),
        component("api")
    );
    std::fs::write(dir.path().join("list.yaml"), &list).unwrap();
    let (text, _) = upgrade(&published, dir.path(), &["--write"], 0);
    for who in ["Component bakery/web", "Component bakery/api"] {
        assert!(
            text.contains(&format!("list.yaml: {who}: ClusterComponentType ruby-service \"1\"")),
            "{text}"
        );
    }
    assert!(text.contains("2 upgrade(s) planned") && text.contains("2 pin(s) written"), "{text}");
    let (json, _) = upgrade(&published, dir.path(), &["--output", "json", "--to", "1.1.0"], 0);
    assert_eq!(json.trim(), "[]", "at the target already");
    std::fs::write(dir.path().join("list.yaml"), &list).unwrap();
    let (json, _) = upgrade(&published, dir.path(), &["--output", "json"], 0);
    let plans: Value = serde_json::from_str(&json).unwrap();
    let places: Vec<(&str, u64, &str)> = plans
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (p["consumer"].as_str().unwrap(), p["document"].as_u64().unwrap(), p["item"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        places,
        [("Component bakery/web", 0, "/items/0"), ("Component bakery/api", 0, "/items/1/items/0")]
    );
    upgrade(&published, dir.path(), &["--write"], 0);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("list.yaml")).unwrap(),
        list.replace("version: \"1\"", "version: \"2\"")
    );

    // Objects of which none consumes: nothing planned, and said why.
    std::fs::write(
        dir.path().join("list.yaml"),
        "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n",
    )
    .unwrap();
    let (text, _) = upgrade(&published, dir.path(), &[], 0);
    assert!(
        text.contains("0 upgrade(s) planned\nnote: no consumer (openchoreo.dev Component, ")
            && text.contains("among the 1 object(s) read"),
        "{text}"
    );
    // A Component of another group (OAM's) is no consumer, even with OpenChoreo's fields.
    let foreign = component("web")
        .replacen("  - ", "", 1)
        .replace("\n    ", "\n")
        .replace("openchoreo.dev", "core.oam.dev");
    std::fs::write(dir.path().join("list.yaml"), &foreign).unwrap();
    let (text, _) = upgrade(&published, dir.path(), &["--write"], 0);
    assert!(text.contains("0 upgrade(s) planned\nnote: no consumer (openchoreo.dev Component, "), "{text}");
    assert_eq!(std::fs::read_to_string(dir.path().join("list.yaml")).unwrap(), foreign);
    std::fs::write(dir.path().join("list.yaml"), "apiVersion: v1\nkind: List\nitems: {a: 1}\n").unwrap();
    let (_, err) = upgrade(&published, dir.path(), &[], 2);
    assert!(
        err.contains("nothing planned: ")
            && err.contains("list.yaml: document 0 /items: the items of a List"),
        "{err}"
    );
}

/// A view that must wait on the cluster for the cluster-scoped construct kinds (as the live
/// view must for a kind it does not watch); it answers from the published directory.
struct Waiting(OfflineCluster);

impl ClusterView for Waiting {
    fn list(
        &self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        budget: Option<std::time::Duration>,
    ) -> Result<Vec<std::sync::Arc<Value>>, covenant::cluster::Error> {
        self.0.list(group, kind, namespace, budget)
    }

    fn answers_without_waiting(&self, _group: &str, kind: &str) -> bool {
        kind != "ClusterComponentType"
    }
}

/// A small Component review is judged on the connection's worker (`evaluate_without_waiting`) with
/// the verdict the blocking pool would give, allowed or denied; when a lookup it needs would
/// wait on the cluster, the judgement on the spot gives up and says so (`None`).
#[test]
fn a_consumer_judged_on_the_spot_gets_the_verdict_it_would_get_anywhere() {
    let (engine, cluster) = (engine(), published());
    let cases = [
        (Some("1"), json!({"sizeClass": "xlarge"}), true),
        (Some("2"), json!({"sizeClass": "xlarge"}), false),
        (Some("9"), json!({}), false),
        (None, json!({"sizeClass": "large"}), true),
    ];
    for (pin, parameters, allowed) in cases {
        let object = component(pin, parameters);
        let review = json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "0d9d2c1e-4c1b-4f64-9b7e-1f2a3b4c5d6e",
                "kind": {"group": "openchoreo.dev", "version": "v1alpha1", "kind": "Component"},
                "resource": {"group": "openchoreo.dev", "version": "v1alpha1", "resource": "components"},
                "name": "bakery-web", "namespace": "bakery", "operation": "CREATE",
                "userInfo": {"username": "alice"}, "object": object, "oldObject": null, "dryRun": false}});
        let review = covenant::admission::decode(review.to_string().into_bytes()).unwrap();
        assert_eq!(
            engine.cost(&review.subject),
            covenant::engine::Cost::Subject,
            "a Component's judgement is bounded by it"
        );
        let anywhere = engine.evaluate(&review.subject, &cluster);
        assert_eq!(!anywhere.denied(), allowed, "{pin:?}: {anywhere:?}");
        let on_the_spot =
            engine.evaluate_without_waiting(&review.subject, &cluster).expect("every lookup answers at once");
        assert_eq!(format!("{on_the_spot:?}"), format!("{anywhere:?}"), "{pin:?}");
        let waiting = Waiting(published());
        assert!(
            engine.evaluate_without_waiting(&review.subject, &waiting).is_none(),
            "{pin:?}: it must not answer"
        );
        assert_eq!(format!("{:?}", engine.evaluate(&review.subject, &waiting)), format!("{anywhere:?}"));
    }
}

/// A published construct of `kind` named `logical` at 1.0.0 whose spec is `spec`.
fn construct_at(kind: &str, logical: &str, spec: Value) -> Value {
    json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": kind,
        "metadata": {"name": format!("{logical}-v1"), "namespace": "shop",
                     "labels": {"openchoreo.dev/name": logical, "openchoreo.dev/version": "1.0.0"},
                     "annotations": {"openchoreo.dev/version": "1.0.0"}},
        "spec": spec})
}

/// A consumer's parameters are held to every keyword the resolved version states, as the
/// apiserver applies them: `pattern` (the bucket name that passed with exit 0), `uniqueItems`,
/// `multipleOf`, `minProperties`, an `enum` of objects, `not`, a known `format` and CEL rules
/// (evaluated, within the evaluation bounds); a keyword covenant cannot apply (an unknown
/// format, a CEL function it lacks) is a warning that names it, never silence.
#[test]
fn consumer_values_are_held_to_every_keyword_of_the_resolved_version() {
    let parameters = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "bucket": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{2,62}$"},
        "zones": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
        "replicas": {"type": "integer", "multipleOf": 2},
        "labels": {"type": "object", "minProperties": 1, "additionalProperties": {"type": "string"}},
        "tier": {"type": "object", "enum": [{"name": "small"}, {"name": "large"}]},
        "region": {"type": "string", "not": {"enum": ["eu-legacy"]}},
        "owner": {"type": "string", "format": "email"},
        "isbn": {"type": "string", "format": "isbn"},
        "window": {"type": "object", "properties": {"from": {"type": "integer"}, "to": {"type": "integer"}},
                   "x-kubernetes-validations": [{"rule": "self.from < self.to", "message": "from must precede to"}]},
        "host": {"type": "string", "x-kubernetes-validations": [{"rule": "format.dns1123Label().validate(self).hasValue() == false"}]},
        "extra": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}
    }}});
    let ct = construct_at(
        "ComponentType",
        "bucketed",
        json!({"workloadType": "deployment", "parameters": parameters}),
    );
    let cluster = OfflineCluster::from_objects([ct]);
    let consumer = |parameters: Value| {
        json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Component",
            "metadata": {"name": "media", "namespace": "shop"},
            "spec": {"owner": {"projectName": "shop"},
                     "componentType": {"kind": "ComponentType", "name": "deployment/bucketed", "version": "1"},
                     "parameters": parameters}})
    };
    let good = judge(
        &consumer(
            json!({"bucket": "media-assets", "zones": ["a", "b"], "replicas": 4, "labels": {"team": "x"},
            "tier": {"name": "small"}, "region": "eu-west", "owner": "ops@example.com",
            "window": {"from": 1, "to": 2}}),
        ),
        &cluster,
    );
    assert_eq!(good, [], "a consumer that meets every keyword");
    let bad = judge(
        &consumer(json!({"bucket": "Media_Assets", "zones": ["a", "a"], "replicas": 3, "labels": {},
            "tier": {"name": "huge"}, "region": "eu-legacy", "owner": "ops", "isbn": "x",
            "window": {"from": 3, "to": 2}, "host": "web", "extra": {"metadata": {"name": "x"}}})),
        &cluster,
    );
    let denied = |pointer: &str, says: &str| {
        assert!(
            bad.iter().any(|f| f.0 == "CVN-107" && f.1 == pointer && f.3 == "deny" && f.2.contains(says)),
            "no denial at {pointer} saying {says:?}: {bad:#?}"
        );
    };
    denied("/spec/parameters/bucket", "^[a-z0-9][a-z0-9-]{2,62}$");
    denied("/spec/parameters/zones", "uniqueItems");
    denied("/spec/parameters/replicas", "multiple of 2");
    denied("/spec/parameters/labels", "at least 1 properties");
    denied("/spec/parameters/tier", "expected one of");
    denied("/spec/parameters/region", "not");
    denied("/spec/parameters/owner", "email");
    denied("/spec/parameters/window", "from must precede to");
    denied("/spec/parameters/extra", "required key \"apiVersion\" is missing");
    let warned = |pointer: &str, says: &str| {
        assert!(
            bad.iter().any(|f| f.0 == "CVN-107" && f.1 == pointer && f.3 == "warn" && f.2.contains(says)),
            "no warning at {pointer} saying {says:?}: {bad:#?}"
        );
    };
    warned("/spec/parameters", "format \"isbn\" is not one covenant checks");
    warned("/spec/parameters", "format.dns1123Label");
}

/// A construct version whose parameters section is empty (`properties: {}`) or absent
/// declares no parameters: a consumer that sets one is refused, for every construct kind a
/// consumer pins, naming the key; `upgrade` to such a version says it would not apply.
#[test]
fn a_version_that_declares_no_parameters_refuses_the_ones_a_consumer_sets() {
    let empty = json!({"openAPIV3Schema": {"type": "object", "properties": {}}});
    for (kind, consumer_kind, reference, parameters_at) in [
        ("ComponentType", "Component", "componentType", "/spec/parameters"),
        ("Trait", "Component", "traits", "/spec/traits/0/parameters"),
        ("ClusterWorkflow", "Component", "workflow", "/spec/workflow/parameters"),
        ("ClusterProjectType", "Project", "type", "/spec/parameters"),
        ("ResourceType", "Resource", "type", "/spec/parameters"),
    ] {
        for (section, spelled) in [(Some(empty.clone()), "properties: {}"), (None, "absent")] {
            let mut spec = json!({"workloadType": "deployment"});
            if let Some(s) = &section {
                spec["parameters"] = s.clone();
            }
            let cluster = OfflineCluster::from_objects([construct_at(kind, "plain", spec)]);
            let r = json!({"kind": kind, "name": "deployment/plain", "version": "1"});
            let values = json!({"replicaz": 3});
            let mut doc = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": consumer_kind,
                "metadata": {"name": "web", "namespace": "shop"}, "spec": {"owner": {"projectName": "shop"}}});
            match reference {
                "traits" => {
                    doc["spec"]["traits"] = json!([{"name": "plain", "kind": kind, "version": "1", "instanceName": "p", "parameters": values}])
                }
                "workflow" => {
                    let mut w = r.clone();
                    w["parameters"] = values;
                    doc["spec"]["workflow"] = w;
                }
                _ => {
                    doc["spec"][reference] = r.clone();
                    doc["spec"]["parameters"] = values;
                }
            }
            let found = judge(&doc, &cluster);
            let pointer = format!("{parameters_at}/replicaz");
            assert!(
                found
                    .iter()
                    .any(|f| f.0 == "CVN-107" && f.1 == pointer && f.3 == "deny" && f.2.contains("replicaz")),
                "{kind} with parameters {spelled}: {found:#?}"
            );
        }
    }
}

/// `covenant upgrade` judges the move with every keyword of the target (a `pattern` added in
/// 2.0.0, a 3.0.0 that declares no parameters): both "would NOT apply", with the finding at the
/// parameter; the admin API answers the same. A `--to` the construct does not publish is no
/// plan: exit 2 naming what is published, never "1 upgrade(s) planned" with exit 0, unless
/// the user asks to skip what cannot be planned.
#[tokio::test]
async fn upgrade_never_reports_success_for_a_plan_it_could_not_make() {
    let dir = tempfile::tempdir().unwrap();
    let context = dir.path().join("context");
    std::fs::create_dir(&context).unwrap();
    let at = |version: &str, parameters: Value| {
        let major = &version[..1];
        json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "ClusterComponentType",
            "metadata": {"name": format!("bucketed-v{major}"),
                         "labels": {"openchoreo.dev/name": "bucketed", "openchoreo.dev/version": version},
                         "annotations": {"openchoreo.dev/version": version}},
            "spec": {"workloadType": "deployment", "parameters": {"openAPIV3Schema": parameters}}})
    };
    let constructs = [
        at("1.0.0", json!({"type": "object", "properties": {"bucket": {"type": "string"}}})),
        at(
            "2.0.0",
            json!({"type": "object", "properties": {"bucket": {"type": "string", "pattern": "^[a-z0-9][a-z0-9-]{2,62}$"}}}),
        ),
        at("3.0.0", json!({"type": "object", "properties": {}})),
    ];
    for (i, c) in constructs.iter().enumerate() {
        std::fs::write(context.join(format!("c{i}.json")), c.to_string()).unwrap();
    }
    let manifest = "apiVersion: openchoreo.dev/v1alpha1\nkind: Component\nmetadata:\n  name: media\n  namespace: shop\nspec:\n  owner: {projectName: shop}\n  componentType:\n    kind: ClusterComponentType\n    name: deployment/bucketed\n    version: \"1\"\n  parameters:\n    bucket: Media_Assets\n";
    let file = dir.path().join("media.yaml");
    std::fs::write(&file, manifest).unwrap();
    for to in ["2.0.0", "3.0.0"] {
        let (out, _) = upgrade(&context, &file, &["--to", to, "--output", "json"], 0);
        let plans: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(plans[0]["applies"], false, "{to}: {plans}");
        assert_eq!(plans[0]["findings"][0]["pointer"], "/spec/parameters/bucket", "{to}: {plans}");
        let (text, _) = upgrade(&context, &file, &["--to", to], 0);
        assert!(text.contains("would NOT apply") && text.contains("1 upgrade(s) planned"), "{text}");
    }
    let (text, stderr) = upgrade(&context, &file, &["--to", "9.9.9"], 2);
    assert!(
        text.contains(
            "not published at 9.9.9; published: bucketed-v3=3.0.0, bucketed-v2=2.0.0, bucketed-v1=1.0.0"
        ),
        "{text}"
    );
    assert!(text.contains("0 upgrade(s) planned") && stderr.contains("cannot be planned"), "{text}{stderr}");
    let (text, _) = upgrade(&context, &file, &["--to", "9.9.9", "--skip-unplannable"], 0);
    assert!(text.contains("1 reference(s) cannot be planned"), "{text}");

    let mut objects: Vec<Value> = constructs.to_vec();
    objects.extend(covenant::source::parse_stream(manifest).0.into_iter().map(|d| d.value));
    let cluster: std::sync::Arc<dyn ClusterView> = std::sync::Arc::new(OfflineCluster::from_objects(objects));
    let server =
        common::TestServer::with(common::Setup { cluster: Some(cluster), ..common::Setup::default() }).await;
    let got: Value = reqwest::get(format!(
        "http://{}/api/v0/upgrade?kind=Component&namespace=shop&name=media",
        server.api
    ))
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(got[0]["to"], "3.0.0", "{got}");
    assert_eq!(got[0]["applies"], false, "{got}");
    assert_eq!(got[0]["findings"][0]["pointer"], "/spec/parameters/bucket", "{got}");
}

/// Every member OpenChoreo's construct CRDs declare under `spec` (and under the items of the
/// lists covenant reads) is either read into the contract or listed as not judged: a new
/// upstream field never passes unseen. The CRDs are the fixtures' copies, and the corpus's
/// full set (cluster twins included) when it is beside the repository.
#[test]
fn every_construct_spec_member_of_openchoreo_s_crds_is_read_or_said_not_judged() {
    use covenant::families::construct::SPEC_MEMBERS;
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(common::fixtures().join("openchoreo/crds"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/corpus/seed-systems/openchoreo/config/crd/bases");
    if let Ok(dir) = std::fs::read_dir(&corpus) {
        files.extend(dir.map(|e| e.unwrap().path()));
    }
    let construct_kinds = covenant::openchoreo::CONSTRUCT_KINDS;
    let mut walked = 0;
    let mut missing = Vec::new();
    for file in files {
        let crd = covenant::source::parse_stream(&std::fs::read_to_string(&file).unwrap()).0.remove(0).value;
        let kind = crd["spec"]["names"]["kind"].as_str().unwrap().to_string();
        if !construct_kinds.contains(&kind.as_str()) {
            continue;
        }
        for version in crd["spec"]["versions"].as_array().unwrap() {
            let spec = &version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
            for (member, schema) in spec.as_object().unwrap() {
                walked += 1;
                if !SPEC_MEMBERS.iter().any(|(p, _)| p == member) {
                    missing.push(format!("{kind}: spec.{member}"));
                }
                let listed = SPEC_MEMBERS.iter().any(|(p, _)| p.starts_with(&format!("{member}[].")));
                for item in schema["items"]["properties"].as_object().into_iter().flat_map(|o| o.keys()) {
                    walked += 1;
                    let path = format!("{member}[].{item}");
                    if listed && !SPEC_MEMBERS.iter().any(|(p, _)| *p == path) {
                        missing.push(format!("{kind}: spec.{path}"));
                    }
                }
            }
        }
    }
    assert!(walked > 40, "the walk read the CRDs: {walked}");
    assert!(
        missing.is_empty(),
        "members covenant neither reads nor lists as not judged:\n{}",
        missing.join("\n")
    );
}

/// OpenChoreo 1.2's construct surface in the contract diff: a trait's `removes` (a removal
/// added deletes what a consumer deployed, MAJOR; one dropped renders it again, MINOR); a
/// render-time validation's scope (`when`, `target`, `mustMatch`, `forEach`), judged as a
/// CEL rule change; a rendered entry's `includeWhen`. Each under a MINOR bump is refused at
/// its own rule; a member covenant does not read is said.
#[test]
fn openchoreo_1_2_s_construct_surface_is_part_of_the_contract() {
    let text =
        std::fs::read_to_string(common::fixtures().join("openchoreo/published/otel-instrumentation.yaml"))
            .unwrap();
    let mut base = covenant::source::parse_stream(&text).0.remove(0).value;
    base["spec"]["postRenderValidations"] = json!([{"rule": "${size(resource.spec.template.spec.containers) > 0}",
        "message": "the workload keeps a container",
        "target": {"group": "apps", "version": "v1", "kind": "Deployment", "mustMatch": false}}]);
    base["spec"]["creates"] = json!([{"template": {"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "${metadata.name}-otel"}, "data": {"endpoint": "collector:4317"}}}]);
    let minor = |f: &dyn Fn(&mut Value)| {
        let mut d = base.clone();
        let v = "1.1.0";
        d["metadata"]["annotations"]["openchoreo.dev/version"] = json!(v);
        d["metadata"]["labels"]["openchoreo.dev/version"] = json!(v);
        f(&mut d);
        update(&base, &d)
    };
    let refused_at = |found: &[(String, String, String, String)], rule: &str, says: &str| {
        assert!(found.iter().any(|f| f.0 == "CVN-212"), "the bump is refused: {found:#?}");
        assert!(found.iter().any(|f| f.0 == rule && f.2.contains(says)), "{rule} {says:?}: {found:#?}");
    };
    // A removal added.
    let found = minor(&|d| {
        d["spec"]["removes"] = json!([{"target": {"group": "", "version": "v1", "kind": "Service",
            "where": "${resource.metadata.name.endsWith(\"-metrics\")}"}}])
    });
    refused_at(&found, "CVN-208", "removes v1 Service where");
    // The guard of a validation narrowed, its target made to match, its loop widened.
    let found = minor(&|d| d["spec"]["postRenderValidations"][0]["when"] = json!("${parameters.enabled}"));
    refused_at(&found, "CVN-206", "when ${parameters.enabled}");
    let found = minor(&|d| {
        d["spec"]["postRenderValidations"][0]["target"].as_object_mut().unwrap().remove("mustMatch");
    });
    refused_at(&found, "CVN-206", "apps/v1 Deployment");
    // A condition put on a rendered object.
    let found = minor(&|d| d["spec"]["creates"][0]["includeWhen"] = json!("${environmentConfigs.enabled}"));
    refused_at(&found, "CVN-208", "${environmentConfigs.enabled}");

    // A removal dropped brings the objects back: MINOR, said, and a MINOR covers it.
    let mut with_removal = base.clone();
    with_removal["spec"]["removes"] = json!([{"target": {"group": "", "version": "v1", "kind": "Service"}}]);
    let mut without = with_removal.clone();
    without["spec"].as_object_mut().unwrap().remove("removes");
    without["metadata"]["annotations"]["openchoreo.dev/version"] = json!("1.1.0");
    without["metadata"]["labels"]["openchoreo.dev/version"] = json!("1.1.0");
    assert_eq!(update(&with_removal, &without), [], "a removal dropped is MINOR");

    // A member covenant does not read, and one it does not know, are said.
    let mut unread = base.clone();
    unread["spec"]["allowedTraits"] = json!([{"kind": "Trait", "name": "otel"}]);
    unread["spec"]["sidecars"] = json!([]);
    let report = check(
        &engine(),
        &OfflineCluster::default(),
        &[Source { name: "t.json".into(), text: unread.to_string() }],
    );
    let notes = report.notes.join("\n");
    assert!(
        notes.contains("CVN-212 not judged")
            && notes.contains("spec.allowedTraits (the traits a Component of this type may attach)"),
        "{notes}"
    );
    assert!(notes.contains("spec.sidecars (a member covenant does not know)"), "{notes}");
}
