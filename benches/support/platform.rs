//! A platform at a realistic size, for the benches: `names` ClusterComponentTypes published at
//! five versions each (`svc-<i>-v<major>`, majors 1 to 5, each with a parameters schema), and
//! Components across 50 namespaces pinning them (at majors 4 and 5) with parameters — the objects a live view
//! caches in a cluster that has lived a while.

use serde_json::{json, Value};

/// The versions every logical construct publishes.
pub const VERSIONS: u64 = 5;

/// The construct `svc-<i>` at major `major` (`<major>.0.0`; the newest is the default).
pub fn construct(i: usize, major: u64) -> Value {
    let version = format!("{major}.0.0");
    let mut labels = json!({"openchoreo.dev/name": format!("svc-{i}"), "openchoreo.dev/version": version});
    if major == VERSIONS {
        labels["openchoreo.dev/default"] = json!("true");
    }
    json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "ClusterComponentType",
        "metadata": {"name": format!("svc-{i}-v{major}"), "uid": format!("00000000-0000-4000-8000-{:06}{:06}", i, major),
            "resourceVersion": format!("{}", i as u64 * 10 + major), "labels": labels,
            "annotations": {"openchoreo.dev/version": version}},
        "spec": {"workloadType": "deployment", "parameters": {"openAPIV3Schema": {"type": "object", "properties": {
            "sizeClass": {"type": "string", "enum": ["small", "medium", "large"], "default": "small"},
            "port": {"type": "integer", "default": 8080, "minimum": 1, "maximum": 65535},
            "replicas": {"type": "integer", "default": 1, "minimum": 0}}}}}})
}

/// Every version of `names` logical constructs.
pub fn constructs(names: usize) -> Vec<Value> {
    (0..names).flat_map(|i| (1..=VERSIONS).map(move |major| construct(i, major))).collect()
}

/// Component `j`: in namespace `team-<j % 50>`, pinning `svc-<j % names>` at one of the two
/// majors the support window holds, with parameters.
pub fn component(j: usize, names: usize) -> Value {
    let major = VERSIONS - (j as u64 % 2);
    json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Component",
        "metadata": {"name": format!("app-{j}"), "namespace": format!("team-{}", j % 50),
            "uid": format!("10000000-0000-4000-8000-{j:012}"), "resourceVersion": format!("{}", 1_000_000 + j)},
        "spec": {"owner": {"projectName": format!("team-{}", j % 50)},
            "componentType": {"kind": "ClusterComponentType", "name": format!("deployment/svc-{}", j % names),
                "version": major.to_string()},
            "parameters": {"sizeClass": "medium", "port": 8080, "replicas": 2}}})
}

/// `count` Components over `names` constructs.
pub fn components(count: usize, names: usize) -> Vec<Value> {
    (0..count).map(|j| component(j, names)).collect()
}

/// A new Component of the platform, as the API-server scenario sends it: a pin resolved among
/// five versions, parameters validated.
pub fn new_component() -> Value {
    let mut component = component(5_123, 200);
    component["metadata"].as_object_mut().unwrap().retain(|k, _| k == "name" || k == "namespace");
    component
}

/// An AdmissionReview CREATE of `object`, as the API server sends one.
pub fn create_review(group: &str, version: &str, kind: &str, resource: &str, object: Value) -> String {
    let gvk = json!({"group": group, "version": version, "kind": kind});
    let gvr = json!({"group": group, "version": version, "resource": resource});
    json!({"kind": "AdmissionReview", "apiVersion": "admission.k8s.io/v1",
        "request": {"uid": "7c1e2d3f-0a1b-4c5d-8e9f-0a1b2c3d4e5f", "kind": gvk, "resource": gvr,
            "requestKind": gvk, "requestResource": gvr, "name": object["metadata"]["name"],
            "namespace": object["metadata"]["namespace"], "operation": "CREATE",
            "userInfo": {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]},
            "object": object, "oldObject": null, "dryRun": false}})
    .to_string()
}
