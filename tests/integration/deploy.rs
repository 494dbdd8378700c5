//! The kustomize base in deploy/: every manifest parses into its Kubernetes type with no
//! field the type does not declare; the webhook configurations say what the design demands;
//! `kubectl kustomize` renders it where kubectl is installed.

use std::path::{Path, PathBuf};

use k8s_openapi::api::admissionregistration::v1::{
    MutatingWebhookConfiguration, ValidatingWebhookConfiguration,
};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Namespace, Service, ServiceAccount};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use serde::de::DeserializeOwned;
use serde_json::Value;

fn deploy() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy")
}

/// Deserialize into `T`, refusing any field `T` does not declare.
fn strict<T: DeserializeOwned>(doc: &Value) -> Result<T, String> {
    let mut unknown = Vec::new();
    let t: T =
        serde_ignored::deserialize(doc, |path| unknown.push(path.to_string())).map_err(|e| e.to_string())?;
    if unknown.is_empty() {
        Ok(t)
    } else {
        Err(format!("undeclared fields: {unknown:?}"))
    }
}

/// The members cert-manager's v1 API declares for the parts covenant uses (cert-manager's
/// types are not in k8s-openapi).
fn cert_manager(doc: &Value) -> Result<(), String> {
    let spec_members: &[&str] = match doc["kind"].as_str() {
        Some("Issuer") => &["selfSigned", "ca", "acme", "vault", "venafi"],
        Some("Certificate") => &[
            "isCA",
            "commonName",
            "secretName",
            "duration",
            "renewBefore",
            "dnsNames",
            "privateKey",
            "issuerRef",
            "usages",
            "ipAddresses",
            "subject",
            "secretTemplate",
        ],
        other => return Err(format!("unexpected cert-manager kind {other:?}")),
    };
    let check = |v: &Value, allowed: &[&str], at: &str| -> Result<(), String> {
        for k in v.as_object().ok_or(format!("{at} is not a mapping"))?.keys() {
            if !allowed.contains(&k.as_str()) {
                return Err(format!("{at}.{k} is not declared"));
            }
        }
        Ok(())
    };
    check(doc, &["apiVersion", "kind", "metadata", "spec"], "")?;
    check(&doc["spec"], spec_members, "spec")?;
    if let Some(pk) = doc["spec"].get("privateKey") {
        check(pk, &["algorithm", "size", "rotationPolicy", "encoding"], "spec.privateKey")?;
    }
    if let Some(r) = doc["spec"].get("issuerRef") {
        check(r, &["name", "kind", "group"], "spec.issuerRef")?;
    }
    Ok(())
}

fn check_manifest(doc: &Value) -> Result<(), String> {
    match (doc["apiVersion"].as_str().unwrap_or(""), doc["kind"].as_str().unwrap_or("")) {
        ("v1", "Namespace") => strict::<Namespace>(doc).map(drop),
        ("v1", "ServiceAccount") => strict::<ServiceAccount>(doc).map(drop),
        ("v1", "Service") => strict::<Service>(doc).map(drop),
        ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy") => {
            strict::<k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicy>(doc).map(drop)
        }
        ("admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding") => {
            strict::<k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicyBinding>(doc)
                .map(drop)
        }
        ("v1", "ConfigMap") => strict::<k8s_openapi::api::core::v1::ConfigMap>(doc).map(drop),
        ("v1", "Secret") => {
            // kustomize wraps base64 in lines; the API server's decoder skips line breaks.
            let mut doc = doc.clone();
            if let Some(data) = doc.get_mut("data").and_then(Value::as_object_mut) {
                for v in data.values_mut() {
                    *v = Value::String(v.as_str().unwrap_or_default().replace('\n', ""));
                }
            }
            strict::<k8s_openapi::api::core::v1::Secret>(&doc).map(drop)
        }
        ("apps/v1", "Deployment") => strict::<Deployment>(doc).map(drop),
        ("policy/v1", "PodDisruptionBudget") => strict::<PodDisruptionBudget>(doc).map(drop),
        ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration") => {
            strict::<ValidatingWebhookConfiguration>(doc).map(drop)
        }
        ("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration") => {
            strict::<MutatingWebhookConfiguration>(doc).map(drop)
        }
        ("rbac.authorization.k8s.io/v1", "ClusterRole") => {
            let role: k8s_openapi::api::rbac::v1::ClusterRole = strict(doc)?;
            // Read-only, but for the Events covenant writes on the objects it judges.
            for rule in role.rules.unwrap_or_default() {
                let events = rule.api_groups.as_deref() == Some(&["events.k8s.io".to_string()][..])
                    && rule.resources.as_deref() == Some(&["events".to_string()][..]);
                let reports = rule.api_groups.as_deref() == Some(&["openreports.io".to_string()][..]);
                let allowed: &[&str] = if events {
                    &["create", "patch"]
                } else if reports {
                    &["get", "list", "create", "patch", "delete"]
                } else {
                    &["get", "list", "watch"]
                };
                if let Some(v) = rule.verbs.iter().find(|v| !allowed.contains(&v.as_str())) {
                    return Err(format!(
                        "ClusterRole grants {v}; covenant only reads (and writes Events and its reports)"
                    ));
                }
                if rule.api_groups.unwrap_or_default().iter().any(|g| g.is_empty() || g == "*") {
                    return Err(
                        "ClusterRole reaches the core group or every group; covenant needs neither".into()
                    );
                }
            }
            Ok(())
        }
        ("rbac.authorization.k8s.io/v1", "Role") => {
            let role: k8s_openapi::api::rbac::v1::Role = strict(doc)?;
            // The one write: the leader Lease, updated by name.
            for rule in role.rules.unwrap_or_default() {
                let leases = rule.api_groups.unwrap_or_default() == ["coordination.k8s.io"]
                    && rule.resources.unwrap_or_default() == ["leases"];
                if !leases {
                    return Err("a Role reaches beyond the leader Lease".into());
                }
                let names = rule.resource_names.unwrap_or_default();
                for v in &rule.verbs {
                    let allowed = matches!(v.as_str(), "get" | "create")
                        || (v == "update" && names == ["covenant-leader"]);
                    if !allowed {
                        return Err(format!("the Role grants {v} on leases {names:?}"));
                    }
                }
            }
            Ok(())
        }
        ("rbac.authorization.k8s.io/v1", "RoleBinding") => {
            strict::<k8s_openapi::api::rbac::v1::RoleBinding>(doc).map(drop)
        }
        ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding") => {
            strict::<k8s_openapi::api::rbac::v1::ClusterRoleBinding>(doc).map(drop)
        }
        ("cert-manager.io/v1", _) => cert_manager(doc),
        ("networking.k8s.io/v1", "NetworkPolicy") => {
            strict::<k8s_openapi::api::networking::v1::NetworkPolicy>(doc).map(drop)
        }
        ("scheduling.k8s.io/v1", "PriorityClass") => {
            strict::<k8s_openapi::api::scheduling::v1::PriorityClass>(doc).map(drop)
        }
        ("apiextensions.k8s.io/v1", "CustomResourceDefinition") => strict::<
            k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
        >(doc)
        .map(drop),
        ("monitoring.coreos.com/v1", "ServiceMonitor") => {
            let members = ["apiVersion", "kind", "metadata", "spec"];
            match doc.as_object().and_then(|m| m.keys().find(|k| !members.contains(&k.as_str()))) {
                Some(k) => Err(format!("undeclared member {k}")),
                None if doc["spec"]["endpoints"][0]["port"] == "admin" => Ok(()),
                None => Err("the ServiceMonitor must scrape the admin port".into()),
            }
        }
        ("monitoring.coreos.com/v1", "PrometheusRule") => {
            let shipped = std::fs::read_to_string(deploy().join("prometheus/rules.yaml")).unwrap();
            let groups = covenant::source::parse_stream(&shipped).0.remove(0).value["groups"].clone();
            if doc["spec"]["groups"] == groups {
                Ok(())
            } else {
                Err("the PrometheusRule's groups differ from deploy/prometheus/rules.yaml".into())
            }
        }
        (a, k) => Err(format!("no type known for {a} {k}")),
    }
}

fn manifests() -> Vec<(String, Value)> {
    let kustomization = std::fs::read_to_string(deploy().join("kustomization.yaml")).unwrap();
    let (docs, err) = covenant::source::parse_stream(&kustomization);
    assert!(err.is_none());
    let resources = docs[0].value["resources"].as_array().unwrap().clone();
    let mut out = Vec::new();
    for r in resources {
        let file = r.as_str().unwrap();
        let text = std::fs::read_to_string(deploy().join(file)).unwrap();
        let (docs, err) = covenant::source::parse_stream(&text);
        assert!(err.is_none(), "{file}: {err:?}");
        for d in docs {
            assert!(d.duplicates.is_empty(), "{file}: duplicate keys {:?}", d.duplicates);
            out.push((file.to_string(), d.value));
        }
    }
    out
}

/// The mutating webhook configuration of `deploy/components/stamps`.
fn stamps() -> Value {
    let text = std::fs::read_to_string(deploy().join("components/stamps/mutating.yaml")).unwrap();
    let (docs, err) = covenant::source::parse_stream(&text);
    assert!(err.is_none() && docs.len() == 1, "{err:?}");
    docs[0].value.clone()
}

#[test]
fn every_manifest_parses_into_its_type_with_no_undeclared_field() {
    let mut all = manifests();
    assert_eq!(all.len(), 21);
    // The base sends covenant no write to patch: the mutating webhook is a component's.
    assert!(all.iter().all(|(_, d)| d["kind"] != "MutatingWebhookConfiguration"));
    all.push(("components/stamps/mutating.yaml".into(), stamps()));
    for (file, doc) in &all {
        check_manifest(doc)
            .unwrap_or_else(|e| panic!("{file}: {} {}: {e}", doc["kind"], doc["metadata"]["name"]));
    }
}

#[test]
fn the_strict_check_catches_a_misspelt_field() {
    let mut doc = manifests().into_iter().find(|(_, d)| d["kind"] == "Deployment").unwrap().1;
    doc["spec"]["replicaz"] = Value::from(3);
    let err = check_manifest(&doc).unwrap_err();
    assert!(err.contains("replicaz"), "{err}");
}

#[test]
fn the_deployment_and_webhooks_say_what_the_design_demands() {
    let all = manifests();
    let find = |kind: &str| all.iter().find(|(_, d)| d["kind"] == kind).unwrap().1.clone();
    let d: Deployment = strict(&find("Deployment")).unwrap();
    let spec = d.spec.unwrap();
    assert_eq!(spec.replicas, Some(2));
    let pod = spec.template.spec.unwrap();
    assert_eq!(pod.security_context.unwrap().run_as_non_root, Some(true));
    let c = &pod.containers[0];
    let sc = c.security_context.clone().unwrap();
    assert_eq!(sc.read_only_root_filesystem, Some(true));
    assert_eq!(sc.allow_privilege_escalation, Some(false));
    // The container's arguments are ones `covenant` accepts, and it watches the cluster and
    // audits it (no --offline in a deployment).
    let args = c.args.clone().unwrap();
    let parsed = <covenant::cli::Cli as clap::Parser>::try_parse_from(
        std::iter::once("covenant".to_string()).chain(args.iter().cloned()),
    );
    assert!(parsed.is_ok(), "{args:?}: {}", parsed.unwrap_err());
    assert!(!args.iter().any(|a| a == "--offline"), "{args:?}");
    assert!(args.iter().any(|a| a.starts_with("--audit-interval=")), "{args:?}");
    // Readiness tolerates a missed probe.
    assert!(c.readiness_probe.clone().unwrap().failure_threshold.unwrap_or(3) > 1);
    for probe in [c.liveness_probe.clone().unwrap(), c.readiness_probe.clone().unwrap()] {
        let port = probe.http_get.unwrap().port;
        assert_eq!(port, k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String("admin".into()));
    }

    let v: ValidatingWebhookConfiguration = strict(&find("ValidatingWebhookConfiguration")).unwrap();
    let m: MutatingWebhookConfiguration = strict(&stamps()).unwrap();
    // A stamp is a convenience: no mutating webhook fails closed.
    for w in m.webhooks.clone().unwrap() {
        assert_eq!(w.failure_policy.as_deref(), Some("Ignore"), "{}", w.name);
    }
    let vw = &v.webhooks.unwrap()[0];
    let mw = &m.webhooks.unwrap()[0];
    for (side, versions, timeout, selector, path) in [
        (
            &vw.side_effects,
            &vw.admission_review_versions,
            vw.timeout_seconds,
            &vw.namespace_selector,
            &vw.client_config,
        ),
        (
            &mw.side_effects,
            &mw.admission_review_versions,
            mw.timeout_seconds,
            &mw.namespace_selector,
            &mw.client_config,
        ),
    ] {
        assert_eq!(side, "None");
        assert_eq!(versions, &["v1".to_string()]);
        assert!(timeout.is_some_and(|t| (1..=10).contains(&t)));
        let exprs = selector.clone().unwrap().match_expressions.unwrap();
        let excluded = exprs[0].values.clone().unwrap();
        assert!(
            excluded.contains(&"covenant-system".to_string())
                && excluded.contains(&"kube-system".to_string())
        );
        let svc_path = path.service.clone().unwrap().path.unwrap();
        assert!(svc_path.starts_with("/api/v0/"), "{svc_path}");
    }
    for cfg in [&v.metadata, &m.metadata] {
        let a = cfg.annotations.clone().unwrap();
        assert_eq!(a["cert-manager.io/inject-ca-from"], "covenant-system/covenant-serving");
    }
}

#[test]
fn only_opted_in_crds_and_no_deletion_go_through_a_fail_webhook() {
    let all = manifests();
    let doc = &all.iter().find(|(_, d)| d["kind"] == "ValidatingWebhookConfiguration").unwrap().1;
    let v: ValidatingWebhookConfiguration = strict(doc).unwrap();
    let hooks = v.webhooks.unwrap();
    let covers =
        |w: &k8s_openapi::api::admissionregistration::v1::ValidatingWebhook, resource: &str, op: &str| {
            let group = match resource {
                "customresourcedefinitions" => "apiextensions.k8s.io",
                "compositeresourcedefinitions" => "apiextensions.crossplane.io",
                _ => "openchoreo.dev",
            };
            w.rules.iter().flatten().any(|r| {
                r.api_groups.iter().flatten().any(|g| g == group || g == "*")
                    && r.resources.iter().flatten().any(|x| x == resource || x == "*")
                    && r.operations.iter().flatten().any(|o| o == op)
            })
        };
    let selector = |w: &k8s_openapi::api::admissionregistration::v1::ValidatingWebhook| {
        let e = &w.object_selector.as_ref().unwrap().match_expressions.as_ref().unwrap()[0];
        (e.key.clone(), e.operator.clone(), e.values.clone().unwrap_or_default())
    };
    let crd_hooks: Vec<_> =
        hooks.iter().filter(|w| covers(w, "customresourcedefinitions", "UPDATE")).collect();
    assert_eq!(crd_hooks.len(), 2, "one enforced and one advisory entry");
    for w in &crd_hooks {
        assert!(covers(w, "compositeresourcedefinitions", "UPDATE"), "{}", w.name);
        let (key, op, values) = selector(w);
        assert_eq!((key.as_str(), values), ("covenant.dev/evolution", vec!["enforce".to_string()]));
        match w.failure_policy.as_deref() {
            Some("Fail") => assert_eq!(op, "In", "{}", w.name),
            Some("Ignore") => assert_eq!(op, "NotIn", "{}", w.name),
            other => panic!("{}: failurePolicy {other:?}", w.name),
        }
    }
    for w in hooks.iter().filter(|w| w.failure_policy.as_deref() == Some("Fail")) {
        assert!(
            !covers(w, "*", "DELETE") && !covers(w, "components", "DELETE"),
            "{} fails closed on DELETE",
            w.name
        );
    }
    assert!(hooks
        .iter()
        .any(|w| covers(w, "componenttypes", "DELETE") && w.failure_policy.as_deref() == Some("Ignore")));
    // The label the webhook selects on is the one the shipped config enforces by.
    let config = covenant::config::Config::load(&deploy().join("config/covenant.yaml")).unwrap();
    assert_eq!(config.enforcement.label, "covenant.dev/evolution");
}

#[test]
fn the_shipped_config_is_a_valid_covenant_config() {
    covenant::config::Config::load(&deploy().join("config/covenant.yaml")).unwrap();
    // It is `covenant config print-default`, byte for byte: an operator edits from the
    // defaults the binary really has (`make deploy-config` rewrites it).
    let shipped = std::fs::read_to_string(deploy().join("config/covenant.yaml")).unwrap();
    assert_eq!(
        shipped,
        covenant::config::DEFAULT_YAML,
        "deploy/config/covenant.yaml drifted: run make deploy-config"
    );
}

#[test]
fn kubectl_kustomize_renders_the_base_where_kubectl_exists() {
    let Ok(out) = std::process::Command::new("kubectl").arg("kustomize").arg(deploy()).output() else {
        eprintln!("kubectl not installed: the per-manifest checks above stand in for the render");
        return;
    };
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rendered = String::from_utf8(out.stdout).unwrap();
    let (docs, err) = covenant::source::parse_stream(&rendered);
    assert!(err.is_none());
    assert_eq!(docs.len(), 21, "20 resources (install.yaml is never applied) and the generated ConfigMap");
    for d in docs.iter().filter(|d| d.value["kind"] != "ConfigMap") {
        check_manifest(&d.value).unwrap();
    }
}

/// Every kustomize component under `deploy/components/`, rendered together over the base (and
/// upstream OpenChoreo's Component CRD, which two of them patch): every manifest parses into
/// its type, the Deployment's args are ones the binary accepts, the ConfigMap is a config it
/// loads, and each component did what it says.
#[test]
fn every_kustomize_component_renders_and_the_binary_accepts_what_it_renders() {
    let Ok(version) = std::process::Command::new("kubectl").args(["version", "--client"]).output() else {
        eprintln!("kubectl not installed: the components are not rendered here");
        return;
    };
    assert!(version.status.success());
    let components: Vec<String> = std::fs::read_dir(deploy().join("components"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    assert!(components.len() >= 6, "{components:?}");
    // kustomize loads relative paths only: render from a folder under target/.
    let dir = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/target")).unwrap();
    std::fs::copy(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/openchoreo/crds/openchoreo.dev_components.yaml"),
        dir.path().join("crd.yaml"),
    )
    .unwrap();
    let list = |items: Vec<String>| items.iter().map(|c| format!("  - {c}\n")).collect::<String>();
    let kustomization = format!(
        "resources:\n  - ../../deploy\n  - crd.yaml\ncomponents:\n{}",
        list(components.iter().map(|c| format!("../../deploy/components/{c}")).collect())
    );
    std::fs::write(dir.path().join("kustomization.yaml"), kustomization).unwrap();
    let out = std::process::Command::new("kubectl").arg("kustomize").arg(dir.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rendered = String::from_utf8(out.stdout).unwrap();
    let docs: Vec<Value> = covenant::source::parse_stream(&rendered).0.into_iter().map(|d| d.value).collect();
    for d in docs.iter().filter(|d| d["kind"] != "ConfigMap") {
        check_manifest(d).unwrap_or_else(|e| panic!("{} {}: {e}", d["kind"], d["metadata"]["name"]));
    }
    let find = |kind: &str| docs.iter().find(|d| d["kind"] == kind).unwrap_or_else(|| panic!("no {kind}"));
    // The Deployment, with the client CA and the priority class, runs with args the binary takes.
    let deployment = find("Deployment");
    let args: Vec<String> = deployment["spec"]["template"]["spec"]["containers"][0]["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap().to_string())
        .collect();
    let parsed = <covenant::cli::Cli as clap::Parser>::try_parse_from(
        std::iter::once("covenant".to_string()).chain(args.iter().cloned()),
    );
    assert!(parsed.is_ok(), "{args:?}: {}", parsed.unwrap_err());
    assert!(args.contains(&"--client-ca=/etc/covenant/client-ca/ca.crt".to_string()), "{args:?}");
    assert_eq!(deployment["spec"]["template"]["spec"]["priorityClassName"], "covenant-critical");
    // The generated ConfigMap holds a config the binary loads.
    let config = find("ConfigMap")["data"]["covenant.yaml"].as_str().unwrap();
    covenant::config::Config::from_text("covenant.yaml", config, None).unwrap();
    // The Component CRD: opted in to enforcement, and carrying the pins.
    let crd = find("CustomResourceDefinition");
    assert_eq!(crd["metadata"]["labels"]["covenant.dev/evolution"], "enforce");
    let spec = &crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    assert_eq!(spec["componentType"]["properties"]["version"]["type"], "string");
    for kind in [
        "NetworkPolicy",
        "ServiceMonitor",
        "PrometheusRule",
        "PriorityClass",
        "ValidatingAdmissionPolicy",
        "MutatingWebhookConfiguration",
    ] {
        find(kind);
    }
    // The stamps: the two mutating entries, neither of which a write ever waits on.
    let mutating = find("MutatingWebhookConfiguration")["webhooks"].as_array().unwrap().clone();
    let names: Vec<&str> = mutating.iter().map(|w| w["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["constructs.mutate.covenant.dev", "rendered.mutate.covenant.dev"]);
    assert!(mutating.iter().all(|w| w["failurePolicy"] == "Ignore"));
    // The webhook port admits the API server from a documented source, never the internet.
    let policy = find("NetworkPolicy").to_string();
    assert!(!policy.contains("0.0.0.0/0"), "{policy}");
    // kube-prometheus-stack's selector label, set once for both.
    for kind in ["ServiceMonitor", "PrometheusRule"] {
        assert_eq!(find(kind)["metadata"]["labels"]["release"], "kube-prometheus-stack", "{kind}");
    }
}

/// The image's two recipes — the root Dockerfile (built from source anywhere) and
/// deploy/image/Dockerfile (from the static binary, as CI builds it) — ship the same runtime:
/// an empty image, the same files, the non-root user, the entrypoint without a subcommand
/// (the Deployment's args start with `serve`).
#[test]
fn both_dockerfiles_ship_the_same_runtime_stage() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let runtime = |path: &str| -> Vec<String> {
        let text = std::fs::read_to_string(root.join(path)).unwrap();
        let stage = &text[text.rfind("FROM ").unwrap()..];
        stage
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .map(|l| {
                // Where the binary and the CA bundle come from is what differs.
                let l = l.replace("COPY --from=build /covenant ", "COPY covenant ");
                let l = l.replace(
                    "COPY --from=build /etc/ssl/certs/ca-certificates.crt ",
                    "COPY ca-certificates.crt ",
                );
                let l = l.replace(
                    "COPY --chown=65532:65532 --from=build /scratch/ ",
                    "COPY --chown=65532:65532 scratch/ ",
                );
                l.replace("COPY deploy/image/rootfs/ ", "COPY rootfs/ ")
            })
            .collect()
    };
    let (source, prebuilt) = (runtime("Dockerfile"), runtime("deploy/image/Dockerfile"));
    assert_eq!(source, prebuilt);
    assert_eq!(prebuilt[0], "FROM scratch");
    assert!(prebuilt.contains(&"USER 65532:65532".to_string()));
    assert!(prebuilt.contains(&r#"ENTRYPOINT ["/usr/local/bin/covenant"]"#.to_string()), "{prebuilt:?}");
    let passwd = std::fs::read_to_string(root.join("deploy/image/rootfs/etc/passwd")).unwrap();
    assert!(passwd.contains(":65532:65532:"), "{passwd}");
}

#[test]
fn the_prometheus_rule_carries_the_shipped_alert_rules() {
    let text = std::fs::read_to_string(deploy().join("components/monitoring/prometheusrule.yaml")).unwrap();
    let doc = covenant::source::parse_stream(&text).0.remove(0).value;
    check_manifest(&doc).unwrap();
    let alerts: Vec<&str> = doc["spec"]["groups"][0]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["alert"].as_str())
        .collect();
    assert!(alerts.contains(&"CovenantWebhookUnavailable"), "{alerts:?}");
}

#[test]
fn the_rbac_check_refuses_writes_and_the_core_group() {
    let role = |group: &str, verb: &str| {
        serde_json::json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "r"}, "rules": [{"apiGroups": [group], "resources": ["*"], "verbs": [verb]}]})
    };
    assert!(check_manifest(&role("openchoreo.dev", "list")).is_ok());
    assert!(check_manifest(&role("openchoreo.dev", "patch")).unwrap_err().contains("patch"));
    assert!(check_manifest(&role("", "list")).unwrap_err().contains("core group"));
}

/// `kubectl kustomize` over `dir` (a kustomization), parsed; none where kubectl is missing.
fn kustomize(dir: &Path) -> Option<Vec<Value>> {
    let out = std::process::Command::new("kubectl").arg("kustomize").arg(dir).output().ok()?;
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    Some(covenant::source::parse_stream(&text).0.into_iter().map(|d| d.value).collect())
}

/// The resources covenant's families judge at admission (CREATE, UPDATE) under the shipped
/// config, as the engine reports them, but the CRDs and XRDs (their own entries select them
/// by label): the plural resource names the API server matches webhook rules on.
fn judged() -> std::collections::BTreeSet<(String, String)> {
    let config = covenant::config::Config::load(&deploy().join("config/covenant.yaml")).unwrap();
    covenant::engine::Engine::new(&config)
        .judged_kinds()
        .into_iter()
        .filter(|(g, _)| g != "apiextensions.k8s.io" && g != "apiextensions.crossplane.io")
        .map(|(g, k)| (g, covenant::server::registration::plural(&k)))
        .collect()
}

/// What a platform team needs before it installs a fail-closed webhook, of the base exactly as
/// `kubectl kustomize deploy/` renders it: the `Fail` entries send covenant exactly the
/// resources its families judge (never `*`: OpenChoreo's controllers write Environments and
/// ComponentReleases without waiting on covenant), deletions only of constructs; every entry
/// leaves out the cluster's own namespaces and covenant's and skips the break-glass group
/// `deploy/install.yaml` names; the mutating `rendered` entry names its kinds; the namespace
/// enforces the restricted Pod Security Standard.
#[test]
fn fail_closed_only_where_covenant_judges_with_a_break_glass_path() {
    let Some(docs) = kustomize(&deploy()) else {
        eprintln!("kubectl not installed: the rendered base is not checked here");
        return;
    };
    assert!(docs.iter().all(|d| d["kind"] != "MutatingWebhookConfiguration"), "the base patches nothing");
    let with_stamps = with_components(&["stamps"]);
    let find = |kind: &str| {
        docs.iter().chain(&with_stamps).find(|d| d["kind"] == kind).unwrap_or_else(|| panic!("no {kind}"))
    };
    let install = std::fs::read_to_string(deploy().join("install.yaml")).unwrap();
    let group = covenant::source::parse_stream(&install).0[0].value["data"]["breakGlassGroup"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(group, "covenant:break-glass", "the documented default");
    assert!(
        docs.iter().all(|d| d["metadata"]["name"] != "covenant-install"),
        "install.yaml is never applied"
    );
    let v: ValidatingWebhookConfiguration = strict(find("ValidatingWebhookConfiguration")).unwrap();
    let m: MutatingWebhookConfiguration = strict(find("MutatingWebhookConfiguration")).unwrap();
    type Entry = (
        String,
        Option<String>,
        Vec<k8s_openapi::api::admissionregistration::v1::RuleWithOperations>,
        Option<k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector>,
        Option<Vec<k8s_openapi::api::admissionregistration::v1::MatchCondition>>,
    );
    let mut entries: Vec<Entry> = Vec::new();
    for w in v.webhooks.unwrap() {
        entries.push((
            w.name,
            w.failure_policy,
            w.rules.unwrap_or_default(),
            w.namespace_selector,
            w.match_conditions,
        ));
    }
    for w in m.webhooks.unwrap() {
        entries.push((
            w.name,
            w.failure_policy,
            w.rules.unwrap_or_default(),
            w.namespace_selector,
            w.match_conditions,
        ));
    }
    assert_eq!(entries.len(), 6);
    for (name, policy, rules, namespaces, conditions) in &entries {
        let expr = &namespaces.as_ref().unwrap().match_expressions.as_ref().unwrap()[0];
        assert_eq!(
            (expr.key.as_str(), expr.operator.as_str()),
            ("kubernetes.io/metadata.name", "NotIn"),
            "{name}"
        );
        let excluded = expr.values.clone().unwrap();
        for ns in ["covenant-system", "kube-system", "kube-public", "kube-node-lease"] {
            assert!(excluded.iter().any(|e| e == ns), "{name} does not leave out {ns}");
        }
        let conditions = conditions.as_ref().unwrap_or_else(|| panic!("{name}: no matchConditions"));
        assert!(
            conditions.iter().any(|c| c.expression == format!("!('{group}' in request.userInfo.groups)")),
            "{name}: no break-glass condition for {group}: {conditions:?}"
        );
        for r in rules {
            let (groups, resources) = (r.api_groups.clone().unwrap(), r.resources.clone().unwrap());
            assert!(!resources.iter().any(|x| x.contains('*')), "{name}: resources {resources:?}");
            assert!(!groups.iter().any(|g| g == "*"), "{name}: apiGroups {groups:?}");
        }
        if policy.as_deref() == Some("Fail") && name == "validate.covenant.dev" {
            let mut sent = std::collections::BTreeSet::new();
            for r in rules {
                assert_eq!(r.operations.clone().unwrap(), ["CREATE", "UPDATE"], "{name}");
                for g in r.api_groups.clone().unwrap() {
                    for x in r.resources.clone().unwrap() {
                        sent.insert((g.clone(), x));
                    }
                }
            }
            assert_eq!(sent, judged(), "{name} must send covenant exactly the resources its families judge");
        }
    }
    // What serve warns of at start-up: nothing, for the configuration as shipped; an entry
    // sending every openchoreo.dev resource, by name.
    let config = covenant::config::Config::load(&deploy().join("config/covenant.yaml")).unwrap();
    let kinds = covenant::engine::Engine::new(&config).judged_kinds();
    let shipped: ValidatingWebhookConfiguration = strict(find("ValidatingWebhookConfiguration")).unwrap();
    assert_eq!(
        covenant::server::registration::unjudged(std::slice::from_ref(&shipped), &kinds),
        Vec::<String>::new()
    );
    let mut wide = shipped.clone();
    wide.webhooks.as_mut().unwrap()[0].rules.as_mut().unwrap()[1].resources = Some(vec!["*".into()]);
    let warned = covenant::server::registration::unjudged(&[wide], &kinds);
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert!(
        warned[0].contains("validate.covenant.dev")
            && warned[0].contains("every resource of API group openchoreo.dev")
            && warned[0].contains("wait on covenant for nothing"),
        "{}",
        warned[0]
    );
    // The stamps: the shipped config patches nothing, so the base sends covenant no write to
    // patch and serve is quiet about it; the component without the rules, or the rules without
    // the component, is warned of.
    let state = crate::common::state;
    assert!(!state(&config).patches(), "the shipped config turns no stamp on");
    let stamping = covenant::config::Config::from_text("covenant.yaml", &config_with_stamps(), None).unwrap();
    assert!(state(&stamping).patches());
    let mut off = stamping.clone();
    off.mutation_enabled = false;
    assert!(!state(&off).patches(), "mutation.enabled: false patches nothing, whatever the rules say");
    let stamps: MutatingWebhookConfiguration = strict(find("MutatingWebhookConfiguration")).unwrap();
    let unstamped = |configs: &[MutatingWebhookConfiguration], patches| {
        covenant::server::registration::unstamped(configs, patches)
    };
    assert_eq!(unstamped(&[], false), None);
    assert_eq!(unstamped(std::slice::from_ref(&stamps), true), None);
    let idle = unstamped(std::slice::from_ref(&stamps), false).unwrap();
    assert!(
        idle.contains("covenant/constructs.mutate.covenant.dev, covenant/rendered.mutate.covenant.dev")
            && idle.contains("patches nothing")
            && idle.contains("deploy/components/stamps"),
        "{idle}"
    );
    let missing = unstamped(&[], true).unwrap();
    assert!(missing.contains("add deploy/components/stamps"), "{missing}");
    let ns = find("Namespace");
    assert_eq!(ns["metadata"]["labels"]["pod-security.kubernetes.io/enforce"], "restricted");
    // The pod meets the restricted standard it enforces.
    let pod = &find("Deployment")["spec"]["template"]["spec"];
    assert_eq!(pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    let c = &pod["containers"][0]["securityContext"];
    assert_eq!(c["allowPrivilegeEscalation"], false);
    assert_eq!(c["capabilities"]["drop"], serde_json::json!(["ALL"]));
    // The read API stays on the pod's loopback.
    let args = pod["containers"][0]["args"].to_string();
    assert!(args.contains("--api-listen=127.0.0.1:8081"), "{args}");
}

/// The break-glass group is set in one place: install.yaml's value reaches every entry.
#[test]
fn the_break_glass_group_is_set_in_install_yaml_and_reaches_every_entry() {
    if kubectl_missing() {
        return;
    }
    let dir = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/target")).unwrap();
    let copy = dir.path().join("deploy");
    copy_dir(&deploy(), &copy);
    let install = copy.join("install.yaml");
    let text = std::fs::read_to_string(&install)
        .unwrap()
        .replace("breakGlassGroup: covenant:break-glass", "breakGlassGroup: oncall:sre");
    std::fs::write(&install, text).unwrap();
    let docs = kustomize(&copy).unwrap();
    let rendered = serde_json::to_string(&docs).unwrap();
    assert_eq!(rendered.matches("!('oncall:sre' in request.userInfo.groups)").count(), 4);
    assert!(!rendered.contains("covenant:break-glass"));
    // The stamps component's mutating webhook writes the group itself: the one install.yaml
    // sets, in both entries.
    let group = std::fs::read_to_string(deploy().join("install.yaml")).unwrap();
    let group = group.split("breakGlassGroup: ").nth(1).unwrap().trim();
    let stamps = serde_json::to_string(&stamps()).unwrap();
    assert_eq!(stamps.matches(&format!("!('{group}' in request.userInfo.groups)")).count(), 2, "{stamps}");
}

/// The install docs/deploying.md shows for turning the stamps on (its overlay, beside a copy of
/// the config with the two rules set to mutate) renders with the mutating webhook and a config
/// that patches, so serve has nothing to warn of.
#[test]
fn the_documented_stamps_install_renders_with_the_rules_on() {
    if kubectl_missing() {
        return;
    }
    let docs_text = std::fs::read_to_string(deploy().join("../docs/deploying.md")).unwrap();
    let overlay = docs_text
        .split("```yaml\n")
        .skip(1)
        .map(|b| b.split("```").next().unwrap())
        .find(|b| b.contains("components/stamps"))
        .expect("docs/deploying.md shows the stamps overlay");
    let dir = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/target")).unwrap();
    // The docs' folder sits beside the repository; this one sits in target/.
    std::fs::write(
        dir.path().join("kustomization.yaml"),
        overlay.replace("../covenant/deploy", "../../deploy"),
    )
    .unwrap();
    std::fs::write(dir.path().join("covenant.yaml"), config_with_stamps()).unwrap();
    let docs = kustomize(dir.path()).unwrap();
    let maps: Vec<&Value> = docs.iter().filter(|d| d["kind"] == "ConfigMap").collect();
    assert_eq!(maps.len(), 1, "the config is replaced, not added beside");
    let text = maps[0]["data"]["covenant.yaml"].as_str().unwrap();
    let config = covenant::config::Config::from_text("covenant.yaml", text, None).unwrap();
    let patches = crate::common::state(&config).patches();
    assert!(patches);
    let stamps: Vec<MutatingWebhookConfiguration> = docs
        .iter()
        .filter(|d| d["kind"] == "MutatingWebhookConfiguration")
        .map(|d| strict(d).unwrap())
        .collect();
    assert_eq!(stamps.len(), 1);
    assert_eq!(covenant::server::registration::unstamped(&stamps, patches), None);
    // The Deployment mounts the replaced config.
    let deployment = docs.iter().find(|d| d["kind"] == "Deployment").unwrap().to_string();
    assert!(deployment.contains(maps[0]["metadata"]["name"].as_str().unwrap()), "{deployment}");
}

/// The shipped config with both stamp rules set to mutate, as docs/deploying.md says to write
/// it (`actions: {CVN-501: mutate, CVN-502: mutate}` under `rules`).
fn config_with_stamps() -> String {
    let config = std::fs::read_to_string(deploy().join("config/covenant.yaml")).unwrap();
    assert_eq!(config.matches("\n  actions: {}\n").count(), 1, "the shipped config sets no action");
    config.replace("\n  actions: {}\n", "\n  actions: {CVN-501: mutate, CVN-502: mutate}\n")
}

/// The base rendered with some of its components (by folder name), from a folder under
/// target/ (kustomize loads relative paths only).
fn with_components(components: &[&str]) -> Vec<Value> {
    let dir = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/target")).unwrap();
    let list: String = components.iter().map(|c| format!("  - ../../deploy/components/{c}\n")).collect();
    std::fs::write(
        dir.path().join("kustomization.yaml"),
        format!("resources:\n  - ../../deploy\ncomponents:\n{list}"),
    )
    .unwrap();
    kustomize(dir.path()).expect("kubectl renders")
}

/// Whether kubectl (and so kustomize) is missing here; said on stderr when it is.
fn kubectl_missing() -> bool {
    let missing = std::process::Command::new("kubectl").args(["version", "--client"]).output().is_err();
    if missing {
        eprintln!("kubectl not installed: the rendered manifests are not checked here");
    }
    missing
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.path().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

/// Without cert-manager: `covenant certs --kustomize DIR` writes an overlay that renders the
/// whole install with the pair as the covenant-tls Secret, the CA in every entry's caBundle,
/// and nothing of cert-manager's; every manifest parses into its type.
#[test]
fn certs_kustomize_installs_covenant_without_cert_manager() {
    if kubectl_missing() {
        return;
    }
    let dir = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/target")).unwrap();
    let overlay = dir.path().join("no-cert-manager");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_covenant"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["certs", "--kustomize"])
        .arg(&overlay)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("kubectl apply --server-side -k"));
    // With the stamps component added to the overlay, as an install that turns them on does:
    // its mutating webhook gets the CA too.
    let written = std::fs::read_to_string(overlay.join("kustomization.yaml")).unwrap();
    let base = written.split("resources:\n  - ").nth(1).unwrap().lines().next().unwrap().to_string();
    std::fs::write(
        overlay.join("kustomization.yaml"),
        format!("{written}components:\n  - {base}/components/stamps\n"),
    )
    .unwrap();
    let docs = kustomize(&overlay).unwrap();
    for d in &docs {
        assert_ne!(d["apiVersion"], "cert-manager.io/v1", "{d}");
        check_manifest(d).unwrap_or_else(|e| panic!("{} {}: {e}", d["kind"], d["metadata"]["name"]));
    }
    let secret = docs.iter().find(|d| d["kind"] == "Secret").unwrap();
    assert_eq!(
        (secret["metadata"]["name"].as_str(), secret["type"].as_str()),
        (Some("covenant-tls"), Some("kubernetes.io/tls"))
    );
    let ca = std::fs::read_to_string(overlay.join("ca.crt")).unwrap();
    use base64::Engine as _;
    let bundle = base64::engine::general_purpose::STANDARD.encode(ca.as_bytes());
    let mut entries = 0;
    for d in docs.iter().filter(|d| d["kind"].as_str().is_some_and(|k| k.ends_with("WebhookConfiguration"))) {
        assert!(d["metadata"]["annotations"].get("cert-manager.io/inject-ca-from").is_none(), "{d}");
        for w in d["webhooks"].as_array().unwrap() {
            assert_eq!(w["clientConfig"]["caBundle"], bundle.as_str(), "{}", w["name"]);
            entries += 1;
        }
    }
    assert_eq!(entries, 6);
}

/// One documented way to set the image: `make deploy-render IMAGE=…` renders what `make deploy`
/// applies, with that image and deploy/ untouched.
#[test]
fn make_deploy_render_sets_the_image_without_editing_deploy() {
    if kubectl_missing() {
        return;
    }
    let before = std::fs::read_to_string(deploy().join("kustomization.yaml")).unwrap();
    let target = tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/target")).unwrap();
    let out = std::process::Command::new("make")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["-s", "deploy-render", "IMAGE=registry.example.com:5000/platform/covenant:1.2.3"])
        .env("CARGO_TARGET_DIR", target.path())
        .output()
        .expect("make runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let docs = covenant::source::parse_stream(&String::from_utf8(out.stdout).unwrap()).0;
    let deployment = docs.iter().find(|d| d.value["kind"] == "Deployment").unwrap();
    assert_eq!(
        deployment.value["spec"]["template"]["spec"]["containers"][0]["image"],
        "registry.example.com:5000/platform/covenant:1.2.3"
    );
    assert!(
        target.path().join("install/kustomization.yaml").is_file(),
        "the overlay lives under CARGO_TARGET_DIR"
    );
    assert_eq!(std::fs::read_to_string(deploy().join("kustomization.yaml")).unwrap(), before);
}

/// As it ships, at start-up: `covenant serve` reads the webhook configurations the API server
/// holds. The base's validating configuration draws no warning; the stamps component's
/// mutating webhook, registered while the shipped config leaves the stamp rules off, is named
/// with what it costs.
#[test]
fn serve_warns_of_the_stamps_webhook_while_the_stamp_rules_are_off() {
    use crate::common::{apiserver, free_port, Process};
    let mut fake = apiserver::Fake::default();
    let validating =
        manifests().into_iter().find(|(_, d)| d["kind"] == "ValidatingWebhookConfiguration").unwrap().1;
    for (plural, kind, object) in [
        ("validatingwebhookconfigurations", "ValidatingWebhookConfiguration", validating),
        ("mutatingwebhookconfigurations", "MutatingWebhookConfiguration", stamps()),
    ] {
        let group = "admissionregistration.k8s.io".to_string();
        fake.resources.push((group.clone(), plural.into(), kind.into(), false));
        fake.objects.insert((group, plural.into()), vec![object]);
    }
    let api = apiserver::FakeServer::start(fake);
    let dir = tempfile::tempdir().unwrap();
    let pair = covenant::certs::DevCerts::generate(&["localhost".into()], 2).unwrap();
    let written = pair.write(&dir.path().join("tls")).unwrap();
    let log = dir.path().join("serve.log");
    let _serve = Process(
        std::process::Command::new(env!("CARGO_BIN_EXE_covenant"))
            .env("KUBECONFIG", apiserver::kubeconfig(dir.path(), api.addr))
            .args(["serve", "--log-level", "warn", "--no-events", "--tls-cert"])
            .arg(&written.cert)
            .arg("--tls-key")
            .arg(&written.key)
            .args(["--listen", &format!("127.0.0.1:{}", free_port())])
            .args(["--admin-listen", &format!("127.0.0.1:{}", free_port())])
            .args(["--api-listen", "127.0.0.1:0"])
            .stdout(std::process::Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let said = loop {
        let said = std::fs::read_to_string(&log).unwrap_or_default();
        if said.contains("MutatingWebhookConfiguration entries") {
            break said;
        }
        assert!(std::time::Instant::now() < deadline, "no word of the stamps webhook: {said}");
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert_eq!(api.asked("validatingwebhookconfigurations").0, 1, "read once");
    assert!(
        said.contains("covenant/constructs.mutate.covenant.dev, covenant/rendered.mutate.covenant.dev")
            && said.contains("patches nothing"),
        "{said}"
    );
    assert!(!said.contains("which no rule judges"), "the base's validating entries are judged: {said}");
}
