//! Enforced vs advisory evolution: the default install refuses no upgrade of a CRD the
//! platform did not opt in. Every real CRD/XRD upgrade of the crd-history corpus goes
//! through the webhook over TLS with the default config: admitted, with warnings where it
//! tightens. Opted in (label or group), the same upgrade is judged per the stability policy.

use crate::common;

use std::path::{Path, PathBuf};

use covenant::families::schema_bearing::{evolve, Flavor};
use covenant::versioning::Bump;
use serde_json::{json, Value};

fn history_root() -> PathBuf {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus/crd-history");
    if shared.join("index.yaml").is_file() {
        shared
    } else {
        common::fixtures().join("crd-history")
    }
}

fn yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    covenant::source::parse_stream(&text).0.remove(0).value
}

fn update_review(uid: &str, old: &Value, new: &Value) -> Value {
    let kind = new["kind"].as_str().unwrap();
    let group = new["apiVersion"].as_str().unwrap().split('/').next().unwrap();
    let mut review = common::review(uid, group, kind, new.clone());
    review["request"]["operation"] = json!("UPDATE");
    review["request"]["oldObject"] = old.clone();
    review["request"]["namespace"] = Value::Null;
    review
}

#[tokio::test]
async fn every_real_crd_upgrade_is_admitted_by_default_with_warnings_where_it_tightens() {
    let server = common::TestServer::start().await;
    let client = server.h2();
    let root = history_root();
    let index = yaml(&root.join("index.yaml"));
    let (mut admitted, mut tightening) = (0, 0);
    for p in index["pairs"].as_array().unwrap() {
        let id = p["id"].as_str().unwrap();
        let (old_path, new_path) =
            (root.join(p["old"]["file"].as_str().unwrap()), root.join(p["new"]["file"].as_str().unwrap()));
        if !old_path.is_file() || !new_path.is_file() {
            continue;
        }
        let (old, new) = (yaml(&old_path), yaml(&new_path));
        if Flavor::of(&new).is_none() || Flavor::of(&old).is_none() {
            continue; // construct parameter pairs, not CRDs
        }
        let body = update_review(id, &old, &new).to_string();
        let got: Value = common::post(&client, &server.url("/api/v0/validate?timeout=10s"), body)
            .await
            .json()
            .await
            .unwrap();
        let r = &got["response"];
        assert_eq!(r["allowed"], true, "{id}: {}", r["status"]["message"]);
        admitted += 1;
        let warnings: Vec<&str> = r["warnings"]
            .as_array()
            .map(|w| w.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        // The API server keeps 256 characters of a warning: each leads with the rule id and
        // the change in words (never a pointer or the advisory note), and fits.
        for w in &warnings {
            assert!(w.chars().count() <= 256, "{id}: {} characters: {w}", w.chars().count());
            if let Some(rest) = w.strip_prefix("CVN-").and_then(|r| r.split_once(' ')).map(|(_, r)| r) {
                assert!(!rest.starts_with('/') && !rest.starts_with("advisory"), "{id}: {w}");
                let verbs = [
                    "removed",
                    "added",
                    "changed",
                    "narrowed",
                    "tightened",
                    "no longer",
                    "moved",
                    "became",
                    "required",
                    "lowered",
                    "raised",
                    "dropped",
                    "renamed",
                    "limited",
                ];
                // The contract changes (CVN-201 to CVN-210) say what changed.
                let change = w[4..7].parse::<u32>().is_ok_and(|n| (201..=210).contains(&n));
                assert!(!change || verbs.iter().any(|v| rest.contains(v)), "{id}: names no change: {w}");
                assert!(!w.contains("advisory") || w.ends_with("=enforce to refuse]"), "{id}: {w}");
            }
        }
        if evolve(&old, &new).implied() == Bump::Major {
            tightening += 1;
            assert!(!warnings.is_empty(), "{id}: a breaking change came back without a warning");
            assert!(warnings.iter().any(|w| w.contains("advisory")), "{id}: {warnings:?}");
        }
    }
    assert!(admitted >= 40, "only {admitted} CRD pairs");
    assert!(tightening >= 5, "only {tightening} breaking pairs: the test would prove little");
    eprintln!("{admitted} real CRD upgrades admitted, {tightening} of them with warnings");
}

#[tokio::test]
async fn an_opted_in_crd_is_refused_by_label_or_by_group_and_removing_the_label_is_judged_under_it() {
    let dir = common::fixtures().join("rules/CVN-204");
    let (old, new) = (yaml(&dir.join("base.yaml")), yaml(&dir.join("input.yaml")));
    let group = new["spec"]["group"].as_str().unwrap().to_string();
    // By label.
    let server = common::TestServer::start().await;
    let mut labelled_old = old.clone();
    labelled_old["metadata"]["labels"] = json!({"covenant.dev/evolution": "enforce"});
    let mut labelled_new = new.clone();
    labelled_new["metadata"]["labels"] = json!({"covenant.dev/evolution": "enforce"});
    let url = server.url("/api/v0/validate");
    let ask = |old: &Value, new: &Value| {
        let body = update_review("u", old, new).to_string();
        let (client, url) = (server.h1(), url.clone());
        async move { common::post(&client, &url, body).await.json::<Value>().await.unwrap() }
    };
    assert_eq!(ask(&old, &new).await["response"]["allowed"], true);
    let refused = ask(&labelled_old, &labelled_new).await;
    assert_eq!(refused["response"]["allowed"], false, "{refused}");
    assert!(refused["response"]["status"]["message"].as_str().unwrap().contains("CVN-204"));
    // The update that drops the label is still judged under it.
    assert_eq!(ask(&labelled_old, &new).await["response"]["allowed"], false);
    // By group, in config.
    let text =
        format!("apiVersion: covenant.dev/v1alpha1\nkind: Config\nevolution:\n  enforceGroups: [{group}]\n");
    let config = covenant::config::Config::from_text("c.yaml", &text, None).unwrap();
    let server = common::TestServer::with(common::Setup { config, ..common::Setup::default() }).await;
    let body = update_review("g", &old, &new).to_string();
    let got: Value =
        common::post(&server.h2(), &server.url("/api/v0/validate"), body).await.json().await.unwrap();
    assert_eq!(got["response"]["allowed"], false, "{got}");
}

/// Direction: a status default changed (Gateway API GatewayClass v1.1.1 → v1.2.0) breaks no
/// reader and passes even when enforced; removing a status field breaks readers and is
/// refused, with the message saying so.
#[tokio::test]
async fn status_changes_are_judged_for_readers_even_when_enforced() {
    let text = "apiVersion: covenant.dev/v1alpha1\nkind: Config\nevolution:\n  enforceGroups: [\"*\"]\n";
    let config = covenant::config::Config::from_text("c.yaml", text, None).unwrap();
    let server = common::TestServer::with(common::Setup { config, ..common::Setup::default() }).await;
    let dir = common::fixtures().join("crd-history/gateway-api/gatewayclasses-standard");
    let (old, new) = (yaml(&dir.join("v1.1.1.yaml")), yaml(&dir.join("v1.2.0.yaml")));
    let ask = |old: &Value, new: &Value| {
        let body = update_review("s", old, new).to_string();
        let (client, url) = (server.h2(), server.url("/api/v0/validate"));
        async move { common::post(&client, &url, body).await.json::<Value>().await.unwrap() }
    };
    let got = ask(&old, &new).await;
    assert_eq!(got["response"]["allowed"], true, "{got}");
    let mut removed = new.clone();
    for v in removed["spec"]["versions"].as_array_mut().unwrap() {
        let status = &mut v["schema"]["openAPIV3Schema"]["properties"]["status"]["properties"];
        status.as_object_mut().unwrap().remove("conditions");
    }
    let got = ask(&new, &removed).await;
    let r = &got["response"];
    assert_eq!(r["allowed"], false, "{r}");
    let message = r["status"]["message"].as_str().unwrap();
    assert!(message.contains("CVN-201") && message.contains("this breaks readers"), "{message}");
}

/// The seed's construct-versioning patch, shipped as `deploy/components/openchoreo-pins`,
/// applied to upstream OpenChoreo's real Component CRD: the update is admitted (enforced, as
/// the component labels it), and only the patched schema keeps a pin.
#[tokio::test]
async fn the_openchoreo_pins_component_patches_the_component_crd_and_is_admitted() {
    let crd = yaml(&common::fixtures().join("openchoreo/crds/openchoreo.dev_components.yaml"));
    let ops = yaml(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/components/openchoreo-pins/components-crd.yaml"),
    );
    let mut patched = crd.clone();
    json_patch::patch(&mut patched, &serde_json::from_value::<json_patch::Patch>(ops).unwrap()).unwrap();
    assert_eq!(patched["metadata"]["labels"]["covenant.dev/evolution"], "enforce");

    let server = common::TestServer::start().await;
    let body = update_review("pins", &crd, &patched).to_string();
    let got: Value =
        common::post(&server.h2(), &server.url("/api/v0/validate"), body).await.json().await.unwrap();
    assert_eq!(got["response"]["allowed"], true, "{}", got["response"]["status"]["message"]);
    let e = evolve(&crd, &patched);
    assert_eq!(
        e.implied(),
        Bump::Minor,
        "{:?}",
        e.versions[0].changes.iter().map(|j| j.message()).collect::<Vec<_>>()
    );
    let kinds: Vec<&str> = e.versions[0].changes.iter().map(|j| j.change.kind.as_str()).collect();
    assert!(kinds.contains(&"immutability-loosened") && kinds.contains(&"property-added"), "{kinds:?}");

    // A pinned Component: the upstream schema has no place for the pin, the patched one does.
    let component = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Component",
        "metadata": {"name": "bakery-web", "namespace": "bakery"},
        "spec": {"owner": {"projectName": "bakery"},
                 "componentType": {"kind": "ClusterComponentType", "name": "deployment/ruby-service", "version": "1"},
                 "traits": [{"name": "otel-instrumentation", "instanceName": "otel", "version": "2"}]}});
    let judged = |doc: &Value| {
        let schema = &e.schemas["v1alpha1"];
        let raw = doc["spec"].clone();
        covenant::schema::validate::validate(
            &schema.properties["spec"],
            &raw,
            &covenant::pointer::Location::new("/spec", "spec"),
            covenant::schema::validate::Required::Everywhere,
        )
        .violations
        .iter()
        .map(|v| format!("{} {}", v.at.pointer, v.message()))
        .collect::<Vec<_>>()
    };
    assert_eq!(judged(&component), Vec::<String>::new());
    let upstream = evolve(&crd, &crd);
    let schema = &upstream.schemas["v1alpha1"];
    let out = covenant::schema::validate::validate(
        &schema.properties["spec"],
        &component["spec"],
        &covenant::pointer::Location::new("/spec", "spec"),
        covenant::schema::validate::Required::Everywhere,
    );
    let undeclared: Vec<&str> = out.violations.iter().map(|v| v.at.pointer.as_str()).collect();
    assert!(undeclared.contains(&"/spec/componentType/version"), "{undeclared:?}");
    // Moving the pin keeps kind and name: the loosened rule passes where `self == oldSelf` fails.
    let mut ev = covenant::schema::evaluate::Evaluator::new();
    let rule = &e.schemas["v1alpha1"].properties["spec"].properties["componentType"].validations[0];
    assert_eq!(rule.rule, "self.kind == oldSelf.kind && self.name == oldSelf.name");
    assert_eq!(ev.rule(rule, &component["spec"]["componentType"]), covenant::schema::evaluate::Verdict::Pass);
}
