//! Rules that hold while covenant is down: the self-contained rules whose logic CEL expresses
//! exactly, as ValidatingAdmissionPolicy objects the API server evaluates itself (no webhook
//! call, so no outage and no `failurePolicy: Ignore` lets them through). `covenant vap` prints
//! them; `deploy/components/admission-policies` holds its output (a test keeps the two equal).
//!
//! Covered: CVN-407 (an image with `:latest` or no tag) and CVN-402 (a construct that declares
//! a valid version carries the name and version labels, the version label equal to it), both
//! wholly. Not covered: every rule that needs other objects (pins, defaults, duplicates), the
//! contract diff, or reading templates (CVN-401's stamps) — those stay the webhook's.

use serde_json::{json, Value};

/// Semantic Versioning 2.0.0's own pattern: what a construct version must be (written without
/// backslashes, which a CEL string literal would read as escapes).
const SEMVER: &str = "^(0|[1-9][0-9]*)[.](0|[1-9][0-9]*)[.](0|[1-9][0-9]*)(-((0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)([.](0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*))?([+][0-9a-zA-Z-]+([.][0-9a-zA-Z-]+)*)?$";

/// One rule as a policy: its id, the kinds it judges, and its validations (the expression,
/// and the message as a CEL expression).
struct Rule {
    id: &'static str,
    slug: &'static str,
    resources: &'static [&'static str],
    validations: Vec<(String, String)>,
}

/// Whether `image` (a CEL expression of a string) floats: `:latest`, or no tag on its last path
/// segment; a digest (`@`) or a template (`${`) does not. As CVN-407 decides it.
fn floats(image: &str) -> String {
    format!(
        "!({image}.contains('${{') || {image}.contains('@')) && ({image}.matches('^([^/]*/)*[^/:]+$') || {image}.matches('^([^/]*/)*[^/:]+:latest$'))"
    )
}

fn rules() -> Vec<Rule> {
    let container = "object.spec.container.image";
    let each = "object.spec.containers[name].image";
    let labels = "object.metadata.labels";
    let annotations = "object.metadata.annotations";
    let has_label = |key: &str| format!("(has({labels}) && '{key}' in {labels})");
    let has_annotation = |key: &str| format!("(has({annotations}) && '{key}' in {annotations})");
    // The declared version: the annotation, else the label; CVN-402 judges only a valid one
    // (an invalid one is CVN-408's).
    let declared = format!(
        "({} ? {annotations}['openchoreo.dev/version'] : ({} ? {labels}['openchoreo.dev/version'] : ''))",
        has_annotation("openchoreo.dev/version"),
        has_label("openchoreo.dev/version")
    );
    let valid = format!("{declared}.matches('{SEMVER}')");
    // The logical name: the name annotation, else the object's name less `-v<major>`.
    let logical = format!(
        "({} ? {annotations}['openchoreo.dev/name'] : (object.metadata.name.matches('-v[0-9]+$') ? object.metadata.name.substring(0, object.metadata.name.lastIndexOf('-v')) : object.metadata.name))",
        has_annotation("openchoreo.dev/name")
    );
    let subject = "object.kind + ' ' + object.metadata.name + ' declares a version nobody can pin: it lacks the label '";
    vec![
        Rule {
            id: "CVN-407",
            slug: "floating-image",
            resources: &["workloads"],
            validations: vec![
                (
                    format!("!has(object.spec.container) || !has(object.spec.container.image) || !({})", floats(container)),
                    format!("'CVN-407 /spec/container/image: image \"' + {container} + '\" floats: \":latest\" or no tag'"),
                ),
                (
                    format!(
                        "!has(object.spec.containers) || object.spec.containers.all(name, !has(object.spec.containers[name].image) || !({}))",
                        floats(each)
                    ),
                    "'CVN-407 /spec/containers: an image floats: \":latest\" or no tag'".to_string(),
                ),
            ],
        },
        Rule {
            id: "CVN-402",
            slug: "version-unlabelled",
            resources: &[
                "componenttypes",
                "clustercomponenttypes",
                "traits",
                "clustertraits",
                "workflows",
                "clusterworkflows",
                "projecttypes",
                "clusterprojecttypes",
                "resourcetypes",
                "clusterresourcetypes",
            ],
            validations: vec![
                (
                    format!("!({valid}) || {}", has_label("openchoreo.dev/name")),
                    format!("'CVN-402 /metadata/labels: ' + {subject} + 'openchoreo.dev/name=' + {logical}"),
                ),
                (
                    format!(
                        "!({valid}) || ({} && {labels}['openchoreo.dev/version'] == {declared})",
                        has_label("openchoreo.dev/version")
                    ),
                    format!(
                        "'CVN-402 /metadata/labels: ' + {subject} + 'openchoreo.dev/version=' + {declared} + ({} ? ' (it says \"' + {labels}['openchoreo.dev/version'] + '\")' : '')",
                        has_label("openchoreo.dev/version")
                    ),
                ),
            ],
        },
    ]
}

/// The ValidatingAdmissionPolicy and binding objects, each rule a pair: they leave out the
/// namespaces the webhooks leave out and skip the break-glass group, as the webhooks do.
pub fn objects(break_glass: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for rule in rules() {
        let name = format!("covenant-{}", rule.slug);
        let validations: Vec<Value> = rule
            .validations
            .iter()
            .map(|(expression, message)| json!({"expression": expression, "messageExpression": message, "reason": "Forbidden"}))
            .collect();
        out.push(json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": name, "labels": {"covenant.dev/rule": rule.id}},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {
                    "resourceRules": [{
                        "apiGroups": ["openchoreo.dev"],
                        "apiVersions": ["*"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": rule.resources,
                    }],
                },
                "matchConditions": [{
                    "name": "break-glass",
                    "expression": format!("!('{break_glass}' in request.userInfo.groups)"),
                }],
                "validations": validations,
            },
        }));
        out.push(json!({
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name, "labels": {"covenant.dev/rule": rule.id}},
            "spec": {
                "policyName": name,
                "validationActions": ["Deny"],
                "matchResources": {
                    "namespaceSelector": {"matchExpressions": [{
                        "key": "kubernetes.io/metadata.name",
                        "operator": "NotIn",
                        "values": ["covenant-system", "kube-system", "kube-public", "kube-node-lease"],
                    }]},
                },
            },
        }));
    }
    out
}

/// The rules the policies cover.
pub fn covered() -> Vec<&'static str> {
    rules().iter().map(|r| r.id).collect()
}

/// What `covenant vap` prints: the objects as a YAML stream (each document JSON, which YAML
/// reads), with a header saying what they are.
pub fn render(break_glass: &str) -> String {
    let mut out = String::from(
        "# Generated by `covenant vap` (make deploy-vap): the rules the API server enforces itself as\n\
         # ValidatingAdmissionPolicies, so they hold while covenant is down. Do not edit.\n",
    );
    for o in objects(break_glass) {
        out.push_str("---\n");
        out.push_str(&serde_json::to_string_pretty(&o).unwrap_or_default());
        out.push('\n');
    }
    out
}
