//! Custom resources, and Crossplane composites and claims, validated against the served
//! version of their CRD or XRD as the API server validates them: in `covenant check` against
//! the definitions among the checked files, `--context` or `--cluster`; at admission only when
//! the config asks. Real definitions (Gateway API's HTTPRoute v1.1.0, cert-manager's
//! Certificate v1.21.0, Crossplane's XNopResource e2e XRD) and resources written as their
//! projects' guides write them (`tests/fixtures/custom-resources/`).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::common;
use common::apiserver::Fake;
use common::{post, review, Setup, TestServer};
use covenant::cluster::OfflineCluster;
use covenant::config::Config;

fn dir() -> PathBuf {
    common::fixtures().join("custom-resources")
}

/// The three definitions: HTTPRoute's (in the fixture folder), Certificate's and the XRD's
/// (in the CRD history fixtures).
fn definitions() -> Vec<PathBuf> {
    vec![
        dir().join("definitions"),
        common::fixtures().join("crd-history/cert-manager/certificates/v1.21.0.yaml"),
        common::fixtures().join("crd-history/crossplane/xrd-examples/2d040d2daf4e__xrd-valid.yaml"),
    ]
}

fn covenant(args: &[&str], paths: &[PathBuf]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_covenant")).args(args).args(paths).output().unwrap()
}

/// (file name, document index, rule, pointer) of every finding in a JSON report, for the
/// resources' files.
fn findings(out: &Output) -> Vec<(String, u64, String, String)> {
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    });
    let mut out: Vec<(String, u64, String, String)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["file"].as_str().unwrap().contains("resources"))
        .map(|f| {
            let file =
                Path::new(f["file"].as_str().unwrap()).file_name().unwrap().to_string_lossy().to_string();
            (
                file,
                f["document"].as_u64().unwrap(),
                f["rule"].as_str().unwrap().into(),
                f["pointer"].as_str().unwrap().into(),
            )
        })
        .collect();
    out.sort();
    out
}

/// What the API server refuses in the resources, and nothing in the ones written right.
fn expected() -> Vec<(String, u64, String, String)> {
    let mut e: Vec<(String, u64, String, String)> = [
        ("certificates.yaml", 1, "CVN-102", "/spec/isuerRef"),
        ("certificates.yaml", 1, "CVN-103", "/spec/privateKey/algorithm"),
        ("certificates.yaml", 1, "CVN-104", "/spec"),
        ("certificates.yaml", 1, "CVN-104", "/spec"),
        ("nop.yaml", 1, "CVN-102", "/spec/coolFeld"),
        ("nop.yaml", 1, "CVN-104", "/spec"),
        ("nop.yaml", 2, "CVN-103", "/spec/coolField"),
        ("routes.yaml", 1, "CVN-102", "/metadata/lables"),
        ("routes.yaml", 1, "CVN-102", "/spec/parentRefz"),
        ("routes.yaml", 1, "CVN-103", "/spec/hostnames/0"),
        // The CEL rule on the path match, and the enum, both refuse "Prefixx".
        ("routes.yaml", 1, "CVN-103", "/spec/rules/0/matches/0/path"),
        ("routes.yaml", 1, "CVN-103", "/spec/rules/0/matches/0/path/type"),
        // The CEL rule reads the defaults (group "", kind "Service"): a Service needs a port.
        ("routes.yaml", 1, "CVN-103", "/spec/rules/0/backendRefs/0"),
        ("routes.yaml", 2, "CVN-106", "/apiVersion"),
    ]
    .iter()
    .map(|(f, d, r, p)| (f.to_string(), *d, r.to_string(), p.to_string()))
    .collect();
    e.sort();
    e
}

/// The trap, closed: an HTTPRoute with `spec.parentRefz` beside the Gateway API CRD
/// was "kinds no rule judges", exit 0. Checked beside their definitions, every mistake the API
/// server refuses is found, at its line, with the nearest declared name; the resources written
/// right draw nothing. Without the definitions the kinds stay unjudged and say so; with them
/// given as `--context` the findings are the same.
#[test]
fn check_holds_custom_resources_to_their_definitions_in_the_tree_or_the_context() {
    let resources = dir().join("resources");
    let paths: Vec<PathBuf> = std::iter::once(resources.clone()).chain(definitions()).collect();
    let out = covenant(&["check", "--output", "json"], &paths);
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(findings(&out), expected());

    let text = covenant(&["check"], &paths);
    let text = String::from_utf8_lossy(&text.stdout);
    for line in [
        "routes.yaml:36:3: error[CVN-102] /spec/parentRefz: property \"spec.parentRefz\" is not declared by CustomResourceDefinition httproutes.gateway.networking.k8s.io version v1; expected one of: hostnames, parentRefs, rules",
        "did you mean \"parentRefs\"?",
        "did you mean \"labels\"?",
        "expected Must have port for Service reference (rule `(size(self.group) == 0 && self.kind == 'Service') ? has(self.port) : true`)",
        "error[CVN-106] /apiVersion: HTTPRoute shop/next (CustomResourceDefinition httproutes.gateway.networking.k8s.io) version \"v2\" is not supported",
        "certificates.yaml:30:5: error[CVN-103] /spec/privateKey/algorithm: property \"spec.privateKey.algorithm\" of CustomResourceDefinition certificates.cert-manager.io version v1: expected one of [\"RSA\", \"ECDSA\", \"Ed25519\"], found a string \"RSA4096\"",
        "error[CVN-104] /spec: required key \"coolField\" is missing from spec of NopResource default/claim-typo",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
    // The help of a missing key does not speak of the launcher's capabilities here.
    assert!(!text.contains("cluster profile capability"), "{text}");

    // Without their definitions: unjudged, and said.
    let alone = covenant(&["check"], std::slice::from_ref(&resources));
    let said = String::from_utf8_lossy(&alone.stdout);
    assert_eq!(alone.status.code(), Some(0), "{said}");
    assert!(
        said.contains("of kinds no rule judges (") && said.contains("gateway.networking.k8s.io/v1 HTTPRoute"),
        "{said}"
    );

    // The definitions as context: the same findings.
    let context = tempfile::tempdir().unwrap();
    for (i, f) in files(&definitions()).iter().enumerate() {
        std::fs::copy(f, context.path().join(format!("{i}.yaml"))).unwrap();
    }
    let ctx = context.path().to_str().unwrap();
    let out = covenant(&["check", "--output", "json", "--context", ctx], std::slice::from_ref(&resources));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(findings(&out), expected());

    // Turned off by config: unjudged again.
    let config = context.path().join("covenant.yaml");
    std::fs::write(
        &config,
        "apiVersion: covenant.dev/v1alpha1\nkind: Config\ncustomResources:\n  check: false\n",
    )
    .unwrap();
    let off = covenant(&["check", "--config", config.to_str().unwrap()], &paths);
    let said = String::from_utf8_lossy(&off.stdout);
    assert_eq!(off.status.code(), Some(0), "{said}");
    assert!(!said.contains("CVN-102"), "{said}");
}

/// A misspelt member of the new section is refused like any other, with the nearest name.
#[test]
fn the_custom_resources_section_is_read_strictly() {
    let text = "apiVersion: covenant.dev/v1alpha1\nkind: Config\ncustomResources:\n  admision: true\n";
    let err = Config::from_text("c.yaml", text, None).unwrap_err().to_string();
    assert!(err.contains("admision") && err.contains("did you mean \"admission\"?"), "{err}");
}

/// The document files `paths` name: each file, and a folder's document files.
fn files(paths: &[PathBuf]) -> Vec<PathBuf> {
    paths
        .iter()
        .flat_map(|p| if p.is_dir() { covenant::source::discover(p).unwrap() } else { vec![p.clone()] })
        .collect()
}

/// Every document of the files `paths` name.
fn objects(paths: &[PathBuf]) -> Vec<Value> {
    let mut out = Vec::new();
    for f in files(paths) {
        let text = std::fs::read_to_string(f).unwrap();
        out.extend(covenant::source::parse_stream(&text).0.into_iter().map(|d| d.value));
    }
    out
}

fn resource(file: &str, name: &str) -> Value {
    objects(&[dir().join("resources").join(file)])
        .into_iter()
        .find(|o| o["metadata"]["name"] == name)
        .unwrap()
}

/// At admission the webhook leaves custom resources to the API server unless the config asks:
/// off (the default), a misspelt HTTPRoute is allowed unjudged; on, it is refused with the same
/// message `check` gives, a correct one is allowed, and a kind nothing defines stays allowed.
#[tokio::test]
async fn the_webhook_judges_custom_resources_only_where_the_config_asks() {
    let cluster = Arc::new(OfflineCluster::from_objects(objects(&definitions())));
    let bad = review("r1", "gateway.networking.k8s.io", "HTTPRoute", resource("routes.yaml", "checkout"));
    let good = review("r2", "gateway.networking.k8s.io", "HTTPRoute", resource("routes.yaml", "storefront"));
    let ingress = review(
        "r3",
        "networking.k8s.io",
        "Ingress",
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "x"}, "spec": {"rulez": []}}),
    );
    for admission in [false, true] {
        let mut config = Config::embedded().unwrap();
        config.custom_resources.admission = admission;
        let server =
            TestServer::with(Setup { config, cluster: Some(cluster.clone()), ..Setup::default() }).await;
        let client = server.h2();
        let answer = |body: Value| {
            let client = client.clone();
            let url = server.url("/api/v0/validate");
            async move { post(&client, &url, body.to_string()).await.json::<Value>().await.unwrap() }
        };
        let refused = answer(bad.clone()).await;
        assert_eq!(refused["response"]["allowed"], json!(!admission), "{refused}");
        if admission {
            let message = refused["response"]["status"]["message"].as_str().unwrap();
            assert!(
                message.contains("CVN-102")
                    && message.contains("spec.parentRefz")
                    && message.contains("did you mean \"parentRefs\"?"),
                "{message}"
            );
        }
        assert_eq!(answer(good.clone()).await["response"]["allowed"], json!(true));
        assert_eq!(answer(ingress.clone()).await["response"]["allowed"], json!(true));
    }
}

/// The stand-in API server, serving the HTTPRoute CRD.
fn serving_the_crd() -> common::apiserver::FakeServer {
    let mut fake = Fake::default();
    let crds = objects(&[dir().join("definitions")]);
    fake.objects.insert(("apiextensions.k8s.io".into(), "customresourcedefinitions".into()), crds);
    fake.resources.push((
        "apiextensions.k8s.io".into(),
        "customresourcedefinitions".into(),
        "CustomResourceDefinition".into(),
        false,
    ));
    common::apiserver::FakeServer::start(fake)
}

/// `check --cluster` takes the definitions from the cluster: the stand-in API server serves
/// the HTTPRoute CRD, and the misspelt route is refused as in the tree.
#[test]
fn check_takes_definitions_from_a_live_cluster() {
    let server = serving_the_crd();
    let home = tempfile::tempdir().unwrap();
    let kubeconfig = common::apiserver::kubeconfig(home.path(), server.addr);
    let out = Command::new(env!("CARGO_BIN_EXE_covenant"))
        .env("KUBECONFIG", &kubeconfig)
        .args(["check", "--cluster", "stand-in"])
        .arg(dir().join("resources/routes.yaml"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("error[CVN-102] /spec/parentRefz"), "{text}");
    assert!(text.contains("error[CVN-106] /apiVersion"), "{text}");
    assert!(!text.contains("no rule judges"), "{text}");
}

/// Kubernetes' own kinds, held by `check` to the schemas k8s-openapi carries (Kubernetes 1.33):
/// the issue's `spec.replicaz` with the nearest field, a string where an int32 port is
/// declared, a container without its required name, a ConfigMap value that is not a string;
/// an int-or-string port name and quantities written as numbers (`cpu: 0.5`) pass, as the API server
/// takes them. `kubernetesKinds.check: false` leaves them unjudged, and the webhook never
/// judges them.
#[tokio::test]
async fn check_holds_kubernetes_kinds_to_their_schemas() {
    let dir = tempfile::tempdir().unwrap();
    let manifests = dir.path().join("web.yaml");
    std::fs::write(
        &manifests,
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\nspec:\n  replicaz: 3\n  \
         selector: {matchLabels: {app: web}}\n  template:\n    metadata: {labels: {app: web}}\n    spec:\n      \
         containers:\n      - name: web\n        image: nginx:1.27\n        ports: [{containerPort: \"http\"}]\n        \
         resources: {limits: {cpu: 0.5, memory: 128Mi}}\n      - image: sidecar:1\n---\n\
         apiVersion: v1\nkind: Service\nmetadata: {name: web}\nspec:\n  selector: {app: web}\n  ports: [{port: 80, targetPort: http}]\n---\n\
         apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {a: \"1\", b: 2}\n---\n\
         apiVersion: batch/v1beta1\nkind: CronJob\nmetadata: {name: clean}\nspec: {}\n",
    )
    .unwrap();
    let out = covenant(&["check", "--output", "json"], std::slice::from_ref(&manifests));
    assert_eq!(out.status.code(), Some(1), "{}", String::from_utf8_lossy(&out.stdout));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let found: Vec<(u64, &str, &str)> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (f["document"].as_u64().unwrap(), f["rule"].as_str().unwrap(), f["pointer"].as_str().unwrap())
        })
        .collect();
    assert_eq!(
        found,
        [
            (0, "CVN-102", "/spec/replicaz"),
            (0, "CVN-103", "/spec/template/spec/containers/0/ports/0/containerPort"),
            (0, "CVN-104", "/spec/template/spec/containers/1"),
            (2, "CVN-103", "/data/b"),
            // An API version Kubernetes stopped serving, with the one that replaces it.
            (3, "CVN-106", "/apiVersion"),
        ]
    );
    let message = report["findings"][0]["message"].as_str().unwrap();
    assert!(message.contains("not declared by apps/v1 Deployment (Kubernetes 1.33 schema)"), "{message}");
    assert!(report["findings"][0]["help"].as_str().unwrap().contains("did you mean \"replicas\"?"));
    let removed = report["findings"][4]["message"].as_str().unwrap();
    assert!(
        removed.contains("Kubernetes stopped serving batch/v1beta1 in 1.25")
            && removed.contains("\"batch/v1\""),
        "{removed}"
    );
    assert_eq!(report["summary"]["unjudged"], 0);

    let config = dir.path().join("covenant.yaml");
    std::fs::write(
        &config,
        "apiVersion: covenant.dev/v1alpha1\nkind: Config\nkubernetesKinds:\n  check: false\n",
    )
    .unwrap();
    let off = covenant(&["check", "--config", config.to_str().unwrap()], std::slice::from_ref(&manifests));
    let said = String::from_utf8_lossy(&off.stdout);
    assert_eq!(off.status.code(), Some(0), "{said}");
    assert!(
        said.contains(
            "4 of kinds no rule judges (apps/v1 Deployment, batch/v1beta1 CronJob, v1 ConfigMap, v1 Service)"
        ),
        "{said}"
    );

    // At admission the API server validates its own kinds: covenant lets the Deployment be.
    let deployment = objects(std::slice::from_ref(&manifests)).remove(0);
    let server = TestServer::with(Setup::default()).await;
    let body = review("k1", "apps", "Deployment", deployment).to_string();
    let answer: Value = post(&server.h2(), &server.url("/api/v0/validate"), body).await.json().await.unwrap();
    assert_eq!(answer["response"]["allowed"], json!(true), "{answer}");
}

/// At admission, with `customResources.admission` on, the live view follows CRDs (as
/// `serve` watches them then) and the webhook finds a custom resource's definition in it: the
/// stand-in API server serves the HTTPRoute CRD, and a misspelt route is refused while a
/// correct one is allowed.
#[test]
fn the_webhook_finds_definitions_in_the_live_view() {
    use covenant::cluster::ClusterView;
    let server = serving_the_crd();
    let mut config = Config::embedded().unwrap();
    config.custom_resources.admission = true;
    let kinds = [config.cluster_kinds(), config.definition_kinds()].concat();
    let view = covenant::cluster::live::LiveCluster::connect(
        kube::Config::new(format!("http://{}", server.addr).parse().unwrap()),
        kinds,
        Default::default(),
    )
    .unwrap();
    let began = std::time::Instant::now();
    while !view.synced() {
        assert!(began.elapsed() < std::time::Duration::from_secs(20), "the live view never synced");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(judged_live(config, Arc::new(view)));
}

async fn judged_live(config: Config, view: Arc<covenant::cluster::live::LiveCluster>) {
    let webhook = TestServer::with(Setup { config, cluster: Some(view), ..Setup::default() }).await;
    let client = webhook.h2();
    let url = webhook.url("/api/v0/validate");
    let answer = |body: Value| {
        let (client, url) = (client.clone(), url.clone());
        async move { post(&client, &url, body.to_string()).await.json::<Value>().await.unwrap() }
    };
    let bad =
        answer(review("l1", "gateway.networking.k8s.io", "HTTPRoute", resource("routes.yaml", "checkout")))
            .await;
    assert_eq!(bad["response"]["allowed"], json!(false), "{bad}");
    assert!(bad["response"]["status"]["message"].as_str().unwrap().contains("spec.parentRefz"), "{bad}");
    let good =
        answer(review("l2", "gateway.networking.k8s.io", "HTTPRoute", resource("routes.yaml", "storefront")))
            .await;
    assert_eq!(good["response"]["allowed"], json!(true), "{good}");
}
