//! `covenant vap`: the ValidatingAdmissionPolicies for the rules the API server can enforce
//! itself give the webhook's verdicts and messages. Each policy's validations are evaluated with
//! covenant's own CEL evaluator (the `object` variable bound, as the API server binds it) over
//! the rule fixtures and over variations, and compared with what the engine finds; the
//! shipped component is the command's output.

use crate::common;

use covenant::config::Config;
use covenant::engine::Engine;
use covenant::schema::evaluate::{Evaluated, Evaluator};
use covenant::subject::Subject;
use serde_json::{json, Value};

/// What the policies say of `object`: the messages of the validations that fail, for every
/// policy whose resources include the object's.
fn policies_say(object: &Value) -> Vec<String> {
    let plural = format!("{}s", object["kind"].as_str().unwrap().to_lowercase());
    let mut evaluator = Evaluator::new();
    let mut out = Vec::new();
    for policy in covenant::vap::objects("covenant:break-glass")
        .iter()
        .filter(|o| o["kind"] == "ValidatingAdmissionPolicy")
    {
        let resources = &policy["spec"]["matchConstraints"]["resourceRules"][0]["resources"];
        if !resources.as_array().unwrap().iter().any(|r| r == plural.as_str()) {
            continue;
        }
        for v in policy["spec"]["validations"].as_array().unwrap() {
            let holds = evaluator.expression(v["expression"].as_str().unwrap(), &[("object", object)]);
            match holds {
                Ok(Evaluated::Bool(true)) => {}
                Ok(Evaluated::Bool(false)) => {
                    match evaluator
                        .expression(v["messageExpression"].as_str().unwrap(), &[("object", object)])
                    {
                        Ok(Evaluated::Text(m)) => out.push(m),
                        other => panic!("message of {}: {other:?}", v["expression"]),
                    }
                }
                other => panic!("{}: {other:?}", v["expression"]),
            }
        }
    }
    out
}

/// What the webhook's engine finds of `object` for the covered rules, as lines.
fn engine_says(engine: &Engine, object: &Value) -> Vec<String> {
    let verdict = engine.evaluate(&Subject::from_document(object.clone()), &covenant::cluster::EmptyCluster);
    verdict
        .findings
        .iter()
        .filter(|f| f.rule.id == "CVN-407" || f.rule.id == "CVN-402")
        .map(|f| f.line())
        .collect()
}

fn workload(image: &str) -> Value {
    json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Workload",
        "metadata": {"name": "web", "namespace": "bakery"},
        "spec": {"owner": {"projectName": "bakery", "componentName": "web"}, "container": {"image": image}}})
}

#[test]
fn the_policies_give_the_webhooks_verdicts_and_messages() {
    let engine = Engine::new(&Config::embedded().unwrap());
    let mut cases: Vec<Value> = Vec::new();
    for rule in covenant::vap::covered() {
        let text =
            std::fs::read_to_string(common::fixtures().join("rules").join(rule).join("input.yaml")).unwrap();
        cases.extend(covenant::source::parse_stream(&text).0.into_iter().map(|d| d.value));
    }
    for image in [
        "ghcr.io/acme/web:latest",
        "ghcr.io/acme/web",
        "web",
        "ghcr.io/acme/web:1.4.2",
        "ghcr.io/acme/web@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef",
        "localhost:5000/web",
        "localhost:5000/web:2",
        "registry:5000/team/web:latest",
        "${workload.image}",
        "web:latest2",
    ] {
        cases.push(workload(image));
    }
    let mut several = workload("ghcr.io/acme/web:1");
    several["spec"]["containers"] = json!({"sidecar": {"image": "busybox"}});
    cases.push(several);
    // name, name label, name annotation, version annotation, version label
    type Construct<'a> = (&'a str, Option<&'a str>, Option<&'a str>, Option<&'a str>, Option<&'a str>);
    let constructs: [Construct; 9] = [
        ("otel-v2", Some("otel"), None, Some("2.0.0"), Some("2.0.0")),
        ("otel-v2", Some("otel"), None, Some("2.0.0"), Some("2.1.0")),
        ("otel-v2", Some("otel"), None, Some("2.0.0"), None),
        ("otel-v2", None, None, Some("2.0.0"), Some("2.0.0")),
        ("otel-v2", None, Some("telemetry"), Some("2.0.0-rc.1"), None),
        ("otel", None, None, None, Some("1.4.0")),
        ("otel-v2", None, None, Some("2.0"), None),
        ("otel-v2", None, None, None, None),
        ("otel-vnext", None, None, Some("3.0.0+build.5"), None),
    ];
    for (name, name_label, name_annotation, version_annotation, version_label) in constructs {
        let mut o = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "ClusterTrait",
            "metadata": {"name": name, "labels": {}, "annotations": {}}, "spec": {}});
        for (at, key, value) in [
            ("labels", "openchoreo.dev/name", name_label),
            ("annotations", "openchoreo.dev/name", name_annotation),
            ("annotations", "openchoreo.dev/version", version_annotation),
            ("labels", "openchoreo.dev/version", version_label),
        ] {
            if let Some(v) = value {
                o["metadata"][at][key] = json!(v);
            }
        }
        cases.push(o);
    }
    let (mut denied, mut judged) = (0, 0);
    for object in &cases {
        let (webhook, policies) = (engine_says(&engine, object), policies_say(object));
        // The containers map's policy names no container (CEL cannot say which one floats in
        // its message); it must refuse exactly when the webhook refuses one of them.
        let webhook_containers =
            webhook.iter().filter(|l| l.starts_with("CVN-407 /spec/containers/")).count();
        let policy_containers =
            policies.iter().filter(|l| l.starts_with("CVN-407 /spec/containers:")).count();
        assert_eq!(webhook_containers > 0, policy_containers > 0, "{object}: {webhook:?} vs {policies:?}");
        let exact = |lines: &[String]| -> Vec<String> {
            lines.iter().filter(|l| !l.starts_with("CVN-407 /spec/containers")).cloned().collect()
        };
        assert_eq!(exact(&policies), exact(&webhook), "{object}");
        judged += 1;
        if !policies.is_empty() {
            denied += 1;
        }
    }
    assert!(judged >= 20 && denied >= 10, "{judged} judged, {denied} denied");
}

/// The shipped component is what `covenant vap` prints (`make deploy-vap` rewrites it).
#[test]
fn the_shipped_admission_policies_are_the_commands_output() {
    let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("deploy/components/admission-policies/policies.yaml");
    let text = std::fs::read_to_string(shipped).unwrap();
    assert_eq!(
        text,
        covenant::vap::render("covenant:break-glass"),
        "deploy/components/admission-policies drifted: run make deploy-vap"
    );
    let docs = covenant::source::parse_stream(&text).0;
    assert_eq!(docs.len(), 4, "two policies and their bindings");
    for d in &docs {
        let kind = d.value["kind"].as_str().unwrap();
        match kind {
            "ValidatingAdmissionPolicy" => {
                serde_json::from_value::<
                    k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicy,
                >(d.value.clone())
                .unwrap();
            }
            "ValidatingAdmissionPolicyBinding" => {
                serde_json::from_value::<
                    k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicyBinding,
                >(d.value.clone())
                .unwrap();
            }
            other => panic!("{other}"),
        }
    }
}
