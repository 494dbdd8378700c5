//! UPDATE ratcheting: an update is judged for what it changes, not for what the object
//! already carried. Objects created before covenant was registered, or left invalid by a
//! later publication (a pin a PATCH move orphaned), must still take metadata updates, and
//! an object being deleted must be able to lose its finalizers.

use crate::common;

use std::sync::Arc;

use covenant::check::{check_with_base, Base, Source};
use covenant::cluster::{ClusterView, OfflineCluster};
use covenant::config::Config;
use covenant::engine::Engine;
use covenant::rules::Action;
use covenant::subject::{Object, Operation, Subject};
use serde_json::{json, Value};

fn published() -> OfflineCluster {
    OfflineCluster::load_dir(&common::fixtures().join("openchoreo/published")).unwrap()
}

/// A Component pinned to `pin` of ruby-service (published: 1.1.0 and 2.0.0).
fn component(pin: &str) -> Value {
    json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Component",
        "metadata": {"name": "bakery-web", "namespace": "bakery", "finalizers": ["openchoreo.dev/cleanup"]},
        "spec": {"owner": {"projectName": "bakery"},
                 "componentType": {"kind": "ClusterComponentType", "name": "deployment/ruby-service", "version": pin},
                 "parameters": {"sizeClass": "medium"}}})
}

fn workload(image: &str) -> Value {
    json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Workload",
        "metadata": {"name": "shop", "namespace": "bakery"},
        "spec": {"owner": {"projectName": "bakery", "componentName": "shop"}, "container": {"image": image}}})
}

fn update(old: &Value, new: &Value) -> Subject {
    let mut s = Subject::from_document(new.clone());
    s.operation = Operation::Update;
    s.old_object = Some(Object::from_value(old.clone()));
    s.admitted = true;
    s
}

/// (rule, action, ratcheted) of every finding.
fn judged(subject: &Subject, cluster: &dyn ClusterView) -> Vec<(String, Action, bool)> {
    let engine = Engine::new(&Config::embedded().unwrap());
    let v = engine.evaluate(subject, cluster);
    v.findings.iter().map(|f| (f.rule.id.to_string(), f.action, f.ratcheted)).collect()
}

#[test]
fn an_orphaned_pin_takes_metadata_updates_but_not_a_new_bad_pin() {
    let cluster = published();
    // Nothing publishes 1.0.x: created before covenant, the object already violates CVN-406.
    let old = component("1.0.5");
    let created = judged(&Subject::from_document(old.clone()), &cluster);
    assert!(created.iter().any(|(r, a, _)| r == "CVN-406" && *a == Action::Deny), "{created:?}");

    // A label, an annotation, a finalizer removed: the finding is pre-existing, a warning.
    let mut labelled = old.clone();
    labelled["metadata"]["labels"] = json!({"team": "bakery"});
    labelled["metadata"]["annotations"] = json!({"note": "x"});
    labelled["metadata"]["finalizers"] = json!([]);
    let found = judged(&update(&old, &labelled), &cluster);
    assert_eq!(found, [("CVN-406".to_string(), Action::Warn, true)]);
    let engine = Engine::new(&Config::embedded().unwrap());
    let v = engine.evaluate(&update(&old, &labelled), &cluster);
    assert!(v.findings[0].message.contains("pre-existing"), "{}", v.findings[0].message);
    assert!(!v.denied());

    // Moving the pin to another version nothing publishes is a new violation: refused.
    let moved = judged(&update(&old, &component("1.0.6")), &cluster);
    assert!(moved.contains(&("CVN-406".to_string(), Action::Deny, false)), "{moved:?}");
    // Moving it to a published version fixes it.
    assert_eq!(judged(&update(&old, &component("1")), &cluster), []);
}

#[test]
fn a_floating_image_ratchets_until_the_image_changes() {
    let cluster = published();
    let old = workload("ghcr.io/acme/shop:latest");
    let mut annotated = old.clone();
    annotated["metadata"]["annotations"] = json!({"kubectl.kubernetes.io/last-applied-configuration": "{}"});
    assert_eq!(judged(&update(&old, &annotated), &cluster), [("CVN-407".to_string(), Action::Warn, true)]);
    // Another floating image is a new value at the same pointer: refused.
    let other = judged(&update(&old, &workload("ghcr.io/acme/cart:latest")), &cluster);
    assert_eq!(other, [("CVN-407".to_string(), Action::Deny, false)]);
}

#[test]
fn an_object_being_deleted_always_loses_its_finalizers() {
    let cluster = published();
    let old = component("1.0.5");
    let mut deleting = old.clone();
    deleting["metadata"]["deletionTimestamp"] = json!("2026-12-03T10:00:00Z");
    deleting["metadata"]["finalizers"] = json!([]);
    // Even a spec change rides along: the object is on its way out.
    deleting["spec"]["componentType"]["version"] = json!("1.0.9");
    let found = judged(&update(&old, &deleting), &cluster);
    assert!(!found.is_empty() && found.iter().all(|(_, a, r)| *a == Action::Warn && *r), "{found:?}");
}

#[test]
fn check_with_a_base_ratchets_as_the_webhook_does() {
    let cluster = published();
    let engine = Engine::new(&Config::embedded().unwrap());
    let old = component("1.0.5");
    let mut labelled = old.clone();
    labelled["metadata"]["labels"] = json!({"team": "bakery"});
    let base = Base::from_sources(&[Source { name: "c.yaml".into(), text: old.to_string() }]).unwrap();
    let input = [Source { name: "c.yaml".into(), text: labelled.to_string() }];
    let report = check_with_base(&engine, &cluster, &input, Some(&base));
    let rules: Vec<(&str, Action)> =
        report.entries.iter().map(|e| (e.finding.rule.id, e.finding.action)).collect();
    assert_eq!(rules, [("CVN-406", Action::Warn)]);
    assert!(!report.denied());
    // Without the base the same document is a new object: refused.
    let report = check_with_base(&engine, &cluster, &input, None);
    assert!(report.denied());
}

#[tokio::test]
async fn the_webhook_admits_a_metadata_update_of_an_invalid_object_over_tls() {
    let server = common::TestServer::with(common::Setup {
        cluster: Some(Arc::new(published())),
        ..common::Setup::default()
    })
    .await;
    let old = component("1.0.5");
    let mut labelled = old.clone();
    labelled["metadata"]["labels"] = json!({"team": "bakery"});
    for (uid, new, allowed) in [("meta", &labelled, true), ("repin", &component("1.0.6"), false)] {
        let mut body = common::review(uid, "openchoreo.dev", "Component", new.clone());
        body["request"]["operation"] = json!("UPDATE");
        body["request"]["oldObject"] = old.clone();
        for client in [server.h2(), server.h1()] {
            let answer: Value =
                common::post(&client, &server.url("/api/v0/validate?timeout=10s"), body.to_string())
                    .await
                    .json()
                    .await
                    .unwrap();
            let r = &answer["response"];
            assert_eq!(r["allowed"], allowed, "{uid}: {r}");
            if allowed {
                let warnings = r["warnings"].as_array().unwrap();
                assert!(
                    warnings.iter().any(|w| w.as_str().unwrap().contains("pre-existing")),
                    "{warnings:?}"
                );
            }
        }
    }
}
