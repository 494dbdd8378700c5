//! The live cluster view against an in-process HTTP server that speaks the Kubernetes
//! discovery, list and watch API for a handful of resources, served from fixtures: the `kube`
//! client talks real HTTP to it, so no cluster is needed. Reflectors fill the caches and
//! readiness waits for them; one-off lists paginate; a list that cannot finish in budget is a
//! timeout the failure policy handles.

use crate::common;

use common::apiserver::{serve, Fake};

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use covenant::cluster::live::{Following, LiveCluster};
use covenant::cluster::{ClusterView, Error};
use covenant::config::Config;
use covenant::engine::Engine;
use covenant::subject::{Object, Operation, Subject};
use serde_json::{json, Value};

fn fixture_objects() -> Fake {
    let mut fake = Fake::default();
    let dir = common::fixtures().join("openchoreo/published");
    for file in covenant::source::discover(&dir).unwrap() {
        let text = std::fs::read_to_string(file).unwrap();
        for d in covenant::source::parse_stream(&text).0 {
            let kind = d.value["kind"].as_str().unwrap().to_string();
            let plural = format!("{}s", kind.to_lowercase());
            fake.objects.entry(("openchoreo.dev".into(), plural)).or_default().push(d.value);
        }
    }
    for (kind, namespaced) in [
        ("ClusterComponentType", false),
        ("ClusterTrait", false),
        ("ComponentRelease", true),
        ("Component", true),
    ] {
        fake.serve_openchoreo(kind, namespaced);
    }
    // Live custom resources of a CRD whose schema tightens (CVN-215), three pages of one.
    let widgets = covenant::source::parse_stream(
        &std::fs::read_to_string(common::fixtures().join("rules/CVN-215/context/widgets.yaml")).unwrap(),
    )
    .0
    .into_iter()
    .map(|d| d.value)
    .collect::<Vec<_>>();
    fake.objects.insert(("example.com".into(), "widgets".into()), widgets);
    fake.resources.push(("example.com".into(), "widgets".into(), "Widget".into(), true));
    fake.resources.push(("example.com".into(), "gadgets".into(), "Gadget".into(), true));
    fake.slow.push("gadgets".into());
    fake
}

fn connect(addr: SocketAddr) -> LiveCluster {
    let kinds =
        ["ClusterComponentType", "ClusterTrait", "ComponentRelease", "Component", "Project", "Workflow"];
    view_of(addr, &kinds, Following::default())
}

/// A live view of the stand-in at `addr` watching OpenChoreo's `kinds` as `following` says.
fn view_of(addr: SocketAddr, kinds: &[&str], following: Following) -> LiveCluster {
    let watched = kinds.iter().map(|k| ("openchoreo.dev".to_string(), k.to_string())).collect();
    LiveCluster::connect(kube::Config::new(format!("http://{addr}").parse().unwrap()), watched, following)
        .unwrap()
}

fn wait_synced(view: &LiveCluster) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !view.synced() {
        assert!(Instant::now() < deadline, "the caches never synced");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn reflectors_fill_the_caches_and_pins_resolve_through_them() {
    let view = connect(serve(fixture_objects()));
    wait_synced(&view);
    // Kinds the cluster does not serve (Project, Workflow) are not waited for, and list empty.
    assert_eq!(view.list("openchoreo.dev", "Project", None, None).unwrap().len(), 0);
    let types = view.list("openchoreo.dev", "ClusterComponentType", None, None).unwrap();
    assert_eq!(types.len(), 2);
    let mut sizes = view.cache_sizes();
    sizes.sort();
    assert!(sizes.contains(&("clustercomponenttypes.openchoreo.dev".to_string(), 2)), "{sizes:?}");
    // The engine resolves a Component's pin through the live view.
    let engine = Engine::new(&Config::embedded().unwrap());
    let component = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Component",
        "metadata": {"name": "bakery-web", "namespace": "bakery"},
        "spec": {"componentType": {"kind": "ClusterComponentType", "name": "deployment/ruby-service", "version": "9"}}});
    let verdict = engine.evaluate(&Subject::from_document(component), &view);
    assert_eq!(verdict.findings.len(), 1);
    assert_eq!(verdict.findings[0].rule.id, "CVN-406");
    assert!(
        verdict.findings[0].message.contains("ruby-service-v2=2.0.0, ruby-service-v1=1.1.0"),
        "{}",
        verdict.findings[0].message
    );
}

#[test]
fn one_off_lists_paginate_and_a_slow_list_times_out_in_budget() {
    let mut fake = fixture_objects();
    // Make pagination visible: three widgets, served one per page when asked.
    let extra = json!({"apiVersion": "example.com/v1alpha1", "kind": "Widget", "metadata": {"name": "third", "namespace": "shop"}, "spec": {"size": "small"}});
    fake.objects.get_mut(&("example.com".to_string(), "widgets".to_string())).unwrap().push(extra);
    let view = connect(serve(fake)).with_page_size(1);
    wait_synced(&view);
    let widgets = view.list("example.com", "Widget", None, Some(Duration::from_secs(5))).unwrap();
    assert_eq!(widgets.len(), 3, "every page is read");
    let started = Instant::now();
    let err = view.list("example.com", "Gadget", None, Some(Duration::from_millis(300))).unwrap_err();
    assert!(matches!(err, Error::Timeout { .. }), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the budget bounds the wait: {:?}",
        started.elapsed()
    );

    // CVN-215 through the live view: the tightening names the live object that fails it.
    let engine = Engine::new(&Config::embedded().unwrap());
    let read = |f: &str| {
        covenant::source::parse_stream(
            &std::fs::read_to_string(common::fixtures().join("rules/CVN-215").join(f)).unwrap(),
        )
        .0
        .remove(0)
        .value
    };
    let mut subject = Subject::from_document(read("input.yaml"));
    subject.operation = Operation::Update;
    subject.old_object = Some(Object::from_value(read("base.yaml")));
    subject.budget = Some(Duration::from_secs(5));
    let verdict = engine.evaluate(&subject, &view);
    let live = verdict.findings.iter().find(|f| f.rule.id == "CVN-215").expect("CVN-215");
    assert!(
        live.message.contains("1 of 3 live object(s)") && live.message.contains("shop/long"),
        "{}",
        live.message
    );
}

#[test]
fn the_audit_pages_through_cached_kinds_and_through_the_api_server() {
    let mut fake = fixture_objects();
    let extra = json!({"apiVersion": "example.com/v1alpha1", "kind": "Widget", "metadata": {"name": "third", "namespace": "shop"}, "spec": {"size": "small"}});
    fake.objects.get_mut(&("example.com".to_string(), "widgets".to_string())).unwrap().push(extra);
    let releases = fake.objects[&("openchoreo.dev".to_string(), "componentreleases".to_string())].len();
    let view = Arc::new(connect(serve(fake)));
    wait_synced(&view);

    // A kind the view does not cache pages through the API server's own continue tokens.
    let budget = Some(Duration::from_secs(5));
    let first = view.page("example.com", "Widget", None, 2, budget).unwrap();
    assert_eq!((first.objects.len(), first.next.as_deref()), (2, Some("2")));
    let second = view.page("example.com", "Widget", first.next.as_deref(), 2, budget).unwrap();
    assert_eq!((second.objects.len(), second.next), (1, None));
    // A cached kind pages through one snapshot of its store.
    let cached = view.page("openchoreo.dev", "ClusterComponentType", None, 1, budget).unwrap();
    assert_eq!(cached.objects.len(), 1);
    assert!(cached.next.is_some());

    let registry = prometheus::Registry::new();
    let options = covenant::audit::Options {
        interval: Duration::from_secs(3600),
        page_size: 1,
        rate: 0.0,
        summary_limit: 10,
        kinds: vec![
            ("openchoreo.dev".into(), "ComponentRelease".into()),
            ("example.com".into(), "Widget".into()),
        ],
        lookup_budget: Duration::from_secs(5),
    };
    let auditor = covenant::audit::Auditor::new(
        Arc::new(Engine::new(&Config::embedded().unwrap())),
        view.clone(),
        covenant::metrics::Metrics::register(&registry).unwrap(),
        options,
    );
    let handle = auditor.spawn().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let run = loop {
        if let Some(run) = handle.status.summary().last_run {
            break run;
        }
        assert!(Instant::now() < deadline, "no audit run finished");
        std::thread::sleep(Duration::from_millis(20));
    };
    handle.stop();
    assert!(run.errors.is_empty(), "{:?}", run.errors);
    assert_eq!(run.objects_by_kind.get("ComponentRelease"), Some(&releases));
    assert!(releases > 0);
    assert_eq!(run.objects_by_kind.get("Widget"), Some(&3));
}

/// The CVN-215 fixture CRD (widgets.example.com) before, and after `edit` tightens it.
fn widget_crd_update(edit: impl FnOnce(&mut Value)) -> (Value, Value) {
    let read = |f: &str| {
        covenant::source::parse_stream(
            &std::fs::read_to_string(common::fixtures().join("rules/CVN-215").join(f)).unwrap(),
        )
        .0
        .remove(0)
        .value
    };
    let old = read("base.yaml");
    let mut new = old.clone();
    edit(&mut new["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]);
    (old, new)
}

/// An engine that enforces every CRD's evolution, as a platform's own CRDs are.
fn enforcing_engine() -> Engine {
    let text = "apiVersion: covenant.dev/v1alpha1\nkind: Config\nevolution:\n  enforceGroups: [\"*\"]\n";
    Engine::new(&Config::from_text("c.yaml", text, None).unwrap())
}

fn judge_update(view: &dyn ClusterView, old: &Value, new: &Value) -> covenant::engine::Verdict {
    let mut subject = Subject::from_document(new.clone());
    subject.operation = Operation::Update;
    subject.old_object = Some(Object::from_value(old.clone()));
    subject.budget = Some(Duration::from_secs(5));
    enforcing_engine().evaluate(&subject, view)
}

fn live_finding(verdict: &covenant::engine::Verdict) -> (covenant::rules::Action, String) {
    let f = verdict.findings.iter().find(|f| f.rule.id == "CVN-215").expect("a CVN-215 finding");
    (f.action, f.message.clone())
}

#[test]
fn cel_rules_and_patterns_are_proved_against_every_live_object() {
    use covenant::rules::Action;
    let view = connect(serve(fixture_objects()));
    wait_synced(&view);
    // The live widgets: shop/short (name "storefront") and shop/long (a 56-character name).
    // A CEL rule one of them fails: refused, naming it and the rule.
    let (old, new) = widget_crd_update(|spec| {
        spec["x-kubernetes-validations"] =
            json!([{"rule": "size(self.name) <= 40", "message": "name at most 40"}]);
    });
    let v = judge_update(&view, &old, &new);
    let (action, message) = live_finding(&v);
    assert_eq!(action, Action::Deny, "{message}");
    assert!(message.contains("1 of 2 live object(s)") && message.contains("shop/long"), "{message}");
    assert!(message.contains("name at most 40"), "{message}");
    assert!(v.denied());
    // A CEL rule every live object satisfies: admitted, with a warning.
    let (old, new) = widget_crd_update(|spec| {
        spec["x-kubernetes-validations"] = json!([{"rule": "self.size in ['small', 'medium', 'large'] && (!has(self.port) || self.port > 0)"}]);
    });
    let v = judge_update(&view, &old, &new);
    assert!(!v.denied(), "{:?}", v.findings.iter().map(|f| f.line()).collect::<Vec<_>>());
    let (action, message) = live_finding(&v);
    assert_eq!(action, Action::Warn);
    assert!(message.contains("all 2 live object(s) satisfy"), "{message}");
    // A pattern: RE2, evaluated on every live object.
    let (old, new) = widget_crd_update(|spec| spec["properties"]["name"]["pattern"] = json!("^[a-z-]+$"));
    let (action, message) = live_finding(&judge_update(&view, &old, &new));
    assert_eq!(action, Action::Warn, "{message}");
    let (old, new) = widget_crd_update(|spec| spec["properties"]["name"]["pattern"] = json!("^store"));
    let (action, message) = live_finding(&judge_update(&view, &old, &new));
    assert_eq!(action, Action::Deny);
    assert!(message.contains("shop/long") && message.contains("^store"), "{message}");
    // A rule the evaluator cannot run is "cannot prove", and the message names the function.
    let (old, new) = widget_crd_update(|spec| {
        spec["x-kubernetes-validations"] =
            json!([{"rule": "!format.dns1123Label().validate(self.name).hasValue()"}]);
    });
    let (action, message) = live_finding(&judge_update(&view, &old, &new));
    assert_eq!(action, Action::Deny);
    assert!(message.contains("cannot prove") && message.contains("format"), "{message}");
}

#[test]
fn zero_live_objects_satisfy_a_tightening_vacuously() {
    use covenant::rules::Action;
    let mut fake = fixture_objects();
    fake.objects.remove(&("example.com".to_string(), "widgets".to_string()));
    let view = connect(serve(fake));
    wait_synced(&view);
    let (old, new) = widget_crd_update(|spec| {
        spec["x-kubernetes-validations"] = json!([{"rule": "self.name.startsWith('x')"}]);
        spec["properties"]["name"]["maxLength"] = json!(3);
    });
    let v = judge_update(&view, &old, &new);
    assert!(!v.denied(), "{:?}", v.findings.iter().map(|f| f.line()).collect::<Vec<_>>());
    let (action, message) = live_finding(&v);
    assert_eq!(action, Action::Warn);
    assert!(message.contains("no live object exists") && message.contains("vacuously"), "{message}");
}

#[test]
fn a_list_rbac_forbids_is_cvn_901_naming_what_to_grant() {
    let mut fake = fixture_objects();
    fake.forbidden.push("widgets".into());
    let view = connect(serve(fake));
    wait_synced(&view);
    let (old, new) = widget_crd_update(|spec| spec["properties"]["name"]["maxLength"] = json!(40));
    let v = judge_update(&view, &old, &new);
    assert!(v.denied());
    let f = v.findings.iter().find(|f| f.rule.id == "CVN-901").expect("CVN-901");
    for needle in ["forbids covenant to list widgets.example.com", "grant the verb list", "deploy/rbac.yaml"]
    {
        assert!(f.message.contains(needle), "{needle}: {}", f.message);
    }
    assert!(!v.findings.iter().any(|f| f.rule.id == "CVN-215"), "nothing was listed, so nothing is claimed");
}

#[test]
fn a_storage_move_every_live_object_satisfies_is_not_cvn_210() {
    let view = connect(serve(fixture_objects()));
    wait_synced(&view);
    // v1alpha1 stays; v1 is added with a tighter schema and becomes the storage version.
    let (old, _) = widget_crd_update(|_| {});
    let mut new = old.clone();
    let mut v1 = old["spec"]["versions"][0].clone();
    v1["name"] = json!("v1");
    v1["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["name"]["maxLength"] = json!(60);
    new["spec"]["versions"][0]["storage"] = json!(false);
    new["spec"]["versions"].as_array_mut().unwrap().push(v1.clone());
    let v = judge_update(&view, &old, &new);
    let rules: Vec<String> = v.findings.iter().map(|f| f.line()).collect();
    assert!(!v.findings.iter().any(|f| f.rule.id == "CVN-210"), "{rules:?}");
    // Tight enough that shop/long no longer fits: the move is unsafe, and said to be.
    v1["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["name"]["maxLength"] = json!(20);
    new["spec"]["versions"][1] = v1;
    let v = judge_update(&view, &old, &new);
    assert!(v.findings.iter().any(|f| f.rule.id == "CVN-210" && f.action == covenant::rules::Action::Deny));
    let (_, message) = live_finding(&v);
    assert!(message.contains("shop/long"), "{message}");
}

/// The webhook over TLS with the live view of an in-process API server: an object that
/// already violates takes a metadata update and loses its finalizer while being deleted; a
/// CEL tightening is proved against the live objects; a list RBAC forbids is CVN-901.
#[test]
fn the_webhook_over_tls_judges_updates_with_the_live_view() {
    let mut fake = fixture_objects();
    // Sprockets: a kind covenant may not list.
    fake.resources.push(("example.com".into(), "sprockets".into(), "Sprocket".into(), true));
    fake.forbidden.push("sprockets".into());
    let view = Arc::new(connect(serve(fake)));
    wait_synced(&view);
    let text = "apiVersion: covenant.dev/v1alpha1\nkind: Config\nevolution:\n  enforceGroups: [\"*\"]\n";
    let config = Config::from_text("c.yaml", text, None).unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async move {
        let server = common::TestServer::with(common::Setup {
            config,
            cluster: Some(view.clone()),
            ..common::Setup::default()
        })
        .await;
        let ask = |kind: &'static str, group: &'static str, old: Value, new: Value| {
            let mut body = common::review("u", group, kind, new);
            body["request"]["operation"] = json!("UPDATE");
            body["request"]["oldObject"] = old;
            let (client, url) = (server.h2(), server.url("/api/v0/validate?timeout=10s"));
            async move { common::post(&client, &url, body.to_string()).await.json::<Value>().await.unwrap() }
        };
        // Pinned to a version nothing publishes (1.0.x), as if created before covenant.
        let component = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Component",
            "metadata": {"name": "bakery-web", "namespace": "bakery", "finalizers": ["openchoreo.dev/component-cleanup"]},
            "spec": {"owner": {"projectName": "bakery"},
                     "componentType": {"kind": "ClusterComponentType", "name": "deployment/ruby-service", "version": "1.0.5"}}});
        let mut deleting = component.clone();
        deleting["metadata"]["deletionTimestamp"] = json!("2026-12-03T10:00:00Z");
        deleting["metadata"]["finalizers"] = json!([]);
        let got = ask("Component", "openchoreo.dev", component.clone(), deleting).await;
        assert_eq!(got["response"]["allowed"], true, "{got}");
        let mut labelled = component.clone();
        labelled["metadata"]["labels"] = json!({"team": "bakery"});
        let got = ask("Component", "openchoreo.dev", component.clone(), labelled).await;
        assert_eq!(got["response"]["allowed"], true, "{got}");
        assert!(got["response"]["warnings"].to_string().contains("pre-existing"), "{got}");
        let mut repinned = component.clone();
        repinned["spec"]["componentType"]["version"] = json!("1.0.6");
        let got = ask("Component", "openchoreo.dev", component, repinned).await;
        assert_eq!(got["response"]["allowed"], false, "{got}");

        // A CEL rule one live widget fails.
        let (old, new) = widget_crd_update(|spec| {
            spec["x-kubernetes-validations"] = json!([{"rule": "size(self.name) <= 40", "message": "name at most 40"}]);
        });
        let got = ask("CustomResourceDefinition", "apiextensions.k8s.io", old, new).await;
        let message = got["response"]["status"]["message"].as_str().unwrap_or_default().to_string();
        assert_eq!(got["response"]["allowed"], false, "{got}");
        assert!(message.contains("CVN-215") && message.contains("shop/long"), "{message}");

        // A tightening of a kind covenant may not list.
        let (mut old, mut new) = widget_crd_update(|spec| spec["properties"]["name"]["maxLength"] = json!(40));
        for doc in [&mut old, &mut new] {
            doc["metadata"]["name"] = json!("sprockets.example.com");
            doc["spec"]["names"] = json!({"kind": "Sprocket", "plural": "sprockets"});
        }
        let got = ask("CustomResourceDefinition", "apiextensions.k8s.io", old, new).await;
        let message = got["response"]["status"]["message"].as_str().unwrap_or_default().to_string();
        assert_eq!(got["response"]["allowed"], false, "{got}");
        assert!(message.contains("CVN-901") && message.contains("grant the verb list"), "{message}");
        drop(server);
    });
}

/// Publish ruby-service 3.0.0 on the stand-in API server (no watch event says so).
fn publish_v3(server: &common::apiserver::FakeServer) {
    let mut v3 = published_types()[1].clone();
    v3["metadata"]["name"] = json!("ruby-service-v3");
    v3["metadata"]["labels"]["openchoreo.dev/version"] = json!("3.0.0");
    v3["metadata"]["annotations"]["openchoreo.dev/version"] = json!("3.0.0");
    server.change(|f| {
        f.objects
            .get_mut(&("openchoreo.dev".to_string(), "clustercomponenttypes".to_string()))
            .unwrap()
            .push(v3)
    });
}

fn published_types() -> Vec<Value> {
    let text =
        std::fs::read_to_string(common::fixtures().join("openchoreo/published/ruby-service.yaml")).unwrap();
    covenant::source::parse_stream(&text).0.into_iter().map(|d| d.value).collect()
}

fn pinned(pin: &str) -> Subject {
    let component = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Component",
        "metadata": {"name": "bakery-web", "namespace": "bakery"},
        "spec": {"owner": {"projectName": "bakery"},
                 "componentType": {"kind": "ClusterComponentType", "name": "deployment/ruby-service", "version": pin}}});
    let mut s = Subject::from_document(component);
    s.budget = Some(Duration::from_secs(2));
    s
}

/// (rule, action) of a verdict's findings.
fn rules_of(v: &covenant::engine::Verdict) -> Vec<(&'static str, covenant::rules::Action)> {
    v.findings.iter().map(|f| (f.rule.id, f.action)).collect()
}

/// Poll `probe` every 20 ms until it holds; how long that took, or a panic after `limit`.
fn within(limit: Duration, what: &str, mut probe: impl FnMut() -> bool) -> Duration {
    let started = Instant::now();
    while !probe() {
        assert!(started.elapsed() < limit, "{what}: not within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
    started.elapsed()
}

fn type_count(view: &LiveCluster) -> Option<usize> {
    view.list("openchoreo.dev", "ClusterComponentType", None, Some(Duration::from_secs(1)))
        .ok()
        .map(|v| v.len())
}

#[test]
fn a_kind_installed_after_start_is_watched_without_a_restart() {
    use covenant::rules::Action;
    let mut fake = Fake::default();
    fake.serve_openchoreo("Component", true);
    let server = common::apiserver::FakeServer::start(fake);
    let following = Following { rediscover: Duration::from_millis(200), ..Following::default() };
    let view = view_of(server.addr, &["ClusterComponentType", "Component"], following);
    wait_synced(&view);
    let engine = Engine::new(&Config::embedded().unwrap());
    // Before the construct kinds are installed: nothing is published, and the pin waits.
    let v = engine.evaluate(&pinned("9"), &view);
    assert_eq!(rules_of(&v), [("CVN-406", Action::Warn)]);
    assert!(v.findings[0].message.contains("nothing yet"), "{}", v.findings[0].message);
    // The CRD is installed and its objects applied: watched within a rediscovery or two.
    server.change(|f| {
        f.serve_openchoreo("ClusterComponentType", false);
        f.objects.insert(("openchoreo.dev".into(), "clustercomponenttypes".into()), published_types());
    });
    let seen = within(Duration::from_secs(10), "the new kind's objects", || type_count(&view) == Some(2));
    eprintln!("a kind installed after start was watched and listed in {seen:?}");
    let v = engine.evaluate(&pinned("9"), &view);
    assert_eq!(rules_of(&v), [("CVN-406", Action::Deny)]);
    assert!(v.findings[0].message.contains("ruby-service-v2=2.0.0"), "{}", v.findings[0].message);
    assert!(view.watch_health().iter().all(|(_, up)| *up), "{:?}", view.watch_health());
}

#[test]
fn a_watch_that_expires_with_410_gone_relists_promptly() {
    let mut fake = Fake::default();
    fake.serve_openchoreo("ClusterComponentType", false);
    fake.objects.insert(("openchoreo.dev".into(), "clustercomponenttypes".into()), published_types());
    let server = common::apiserver::FakeServer::start(fake);
    let view = connect(server.addr);
    wait_synced(&view);
    assert_eq!(type_count(&view), Some(2));
    // A third version is published while the watch reports nothing; then the watch expires.
    publish_v3(&server);
    server.expire_watches();
    let seen = within(Duration::from_secs(3), "the relisted object", || type_count(&view) == Some(3));
    eprintln!("after 410 Gone the view relisted and saw the new object in {seen:?}");
}

#[test]
fn an_api_server_that_goes_away_is_never_answered_from_stale_state_and_is_fresh_soon_after_it_returns() {
    use covenant::rules::Action;
    let mut fake = Fake::default();
    fake.serve_openchoreo("ClusterComponentType", false);
    fake.objects.insert(("openchoreo.dev".into(), "clustercomponenttypes".into()), published_types());
    let mut server = common::apiserver::FakeServer::start(fake);
    let view = connect(server.addr);
    wait_synced(&view);
    let engine = Engine::new(&Config::embedded().unwrap());
    assert_eq!(rules_of(&engine.evaluate(&pinned("2"), &view)), []);
    server.stop();
    // The watch notices; from then on a pin is not resolved from the stale cache: the
    // failure policy (deny) answers, with CVN-901 saying why.
    let noticed = within(Duration::from_secs(5), "the watch going down", || {
        view.watch_health().iter().any(|(_, up)| !up)
    });
    let v = engine.evaluate(&pinned("2"), &view);
    assert_eq!(
        rules_of(&v),
        [("CVN-901", Action::Deny)],
        "{:?}",
        v.findings.iter().map(|f| f.line()).collect::<Vec<_>>()
    );
    assert!(v.findings[0].message.contains("the watch is down"), "{}", v.findings[0].message);
    // Meanwhile 3.0.0 is published; the server comes back.
    publish_v3(&server);
    server.restart();
    let fresh =
        within(Duration::from_secs(5), "a fresh view after the restart", || type_count(&view) == Some(3));
    assert_eq!(rules_of(&engine.evaluate(&pinned("3"), &view)), []);
    eprintln!("watch down noticed in {noticed:?}; fresh again {fresh:?} after the API server returned");
}

/// A view over the published ClusterComponentTypes and the Components (none yet), watching
/// as `following` says.
fn watching(following: Following) -> (common::apiserver::FakeServer, LiveCluster) {
    let mut fake = Fake::default();
    fake.serve_openchoreo("ClusterComponentType", false);
    fake.serve_openchoreo("Component", true);
    fake.objects.insert(("openchoreo.dev".into(), "clustercomponenttypes".into()), published_types());
    let server = common::apiserver::FakeServer::start(fake);
    let view = view_of(server.addr, &["ClusterComponentType", "Component"], following);
    wait_synced(&view);
    (server, view)
}

/// Watches like client-go's: as shipped, each watch asks the API server for 5 to 10 minutes
/// (`timeoutSeconds` between `cluster.watchTimeout` and twice it) with bookmarks, so two
/// replicas watching 16 kinds ask a few hundred times a day, not every 5 s.
#[test]
fn the_shipped_watches_last_minutes_with_bookmarks() {
    let shipped = Config::embedded().unwrap().watch_timeout;
    assert_eq!(shipped, Duration::from_secs(300));
    let (server, _view) = watching(Following { watch_timeout: shipped, ..Following::default() });
    within(Duration::from_secs(3), "both watches open", || {
        server.asked("clustercomponenttypes").1 >= 1 && server.asked("components").1 >= 1
    });
    let queries = server.watch_queries();
    assert!(queries.len() >= 2, "{queries:?}");
    for (plural, q) in &queries {
        let t: u64 = q.get("timeoutSeconds").and_then(|t| t.parse().ok()).unwrap_or_default();
        assert!((300..600).contains(&t), "{plural}: timeoutSeconds {t}; expected 300 to 599");
        assert_eq!(q.get("allowWatchBookmarks").map(String::as_str), Some("true"), "{plural}: {q:?}");
    }
}

/// `cluster.watchTimeout` takes whole seconds the API server accepts; anything else is named.
#[test]
fn the_watch_timeout_is_whole_seconds_from_one_to_30_minutes() {
    let with = |t: &str| {
        let text =
            format!("apiVersion: covenant.dev/v1alpha1\nkind: Config\ncluster:\n  watchTimeout: {t}\n");
        Config::from_text("covenant.yaml", &text, None)
    };
    assert_eq!(with("30s").unwrap().watch_timeout, Duration::from_secs(30));
    assert_eq!(with("1m").unwrap().watch_timeout, Duration::from_secs(60));
    assert_eq!(with("30m").unwrap().watch_timeout, Duration::from_secs(1800));
    for (bad, expected) in [
        ("0s", "expected whole seconds from 1s to 30m, found \"0s\""),
        ("1500ms", "expected whole seconds from 1s to 30m, found \"1500ms\""),
        ("31m", "expected whole seconds from 1s to 30m, found \"31m\""),
        ("soon", "expected a duration such as \"5s\", found \"soon\""),
    ] {
        let err = with(bad).unwrap_err().to_string();
        assert!(err.contains("/cluster/watchTimeout") && err.contains(expected), "{bad}: {err}");
    }
}

/// A watch that the API server ends on time is no error: it resumes from the resourceVersion
/// it reached, without a list, and the view stays answerable throughout.
#[test]
fn a_watch_that_ends_on_time_resumes_without_a_list() {
    let (server, view) =
        watching(Following { watch_timeout: Duration::from_secs(1), ..Following::default() });
    // Each watch asks for 1 to 2 s (the timeout and its jitter).
    let started = Instant::now();
    while started.elapsed() < Duration::from_millis(4500) {
        assert_eq!(type_count(&view), Some(2), "the view stopped answering at {:?}", started.elapsed());
        std::thread::sleep(Duration::from_millis(50));
    }
    for plural in ["clustercomponenttypes", "components"] {
        let (lists, watches) = server.asked(plural);
        assert_eq!(lists, 1, "{plural}: listed {lists} times; a watch ending on time must not relist");
        assert!(watches >= 3, "{plural}: {watches} watches in 4.5 s with timeouts of 1 to 2 s");
    }
    assert!(view.watch_health().iter().all(|(_, up)| *up), "{:?}", view.watch_health());
}

/// The upgrade picture on the admin listener, read through the stand-in API server: who uses
/// which version, the contract diff of two published versions, and what happens to a stored
/// Component (and its stored ReleaseBinding) if it moves to the newest version — each the same
/// answer `covenant status`/`diff`/`upgrade` give offline over the same objects.
#[test]
fn the_upgrade_picture_on_the_admin_listener_reads_the_api_server() {
    let mut fake = fixture_objects();
    let component = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Component",
        "metadata": {"name": "web", "namespace": "bakery"},
        "spec": {"owner": {"projectName": "bakery"},
                 "componentType": {"kind": "ClusterComponentType", "name": "deployment/ruby-service", "version": "1"},
                 "parameters": {"sizeClass": "xlarge"},
                 "traits": [{"kind": "ClusterTrait", "name": "otel-instrumentation", "instanceName": "otel", "version": "1"}]}});
    let binding = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "ReleaseBinding",
        "metadata": {"name": "web-production", "namespace": "bakery"},
        "spec": {"owner": {"projectName": "bakery", "componentName": "web"}, "environment": "production",
                 "traitEnvironmentConfigs": {"otel": {"collectorEndpoint": "http://collector:4317"}}}});
    fake.objects.entry(("openchoreo.dev".into(), "components".into())).or_default().push(component.clone());
    fake.objects
        .entry(("openchoreo.dev".into(), "releasebindings".into()))
        .or_default()
        .push(binding.clone());
    fake.resources.push(("openchoreo.dev".into(), "releasebindings".into(), "ReleaseBinding".into(), true));
    // The same objects as files, for the offline answers.
    let context = tempfile::tempdir().unwrap();
    let all: Vec<Value> = fake
        .objects
        .iter()
        .filter(|((g, _), _)| g == "openchoreo.dev")
        .flat_map(|(_, o)| o.clone())
        .collect();
    let stream: Vec<String> = all.iter().map(|o| serde_json::to_string(o).unwrap()).collect();
    std::fs::write(context.path().join("objects.yaml"), stream.join("\n---\n")).unwrap();
    let consumers = tempfile::tempdir().unwrap();
    std::fs::write(consumers.path().join("web.yaml"), format!("{component}\n---\n{binding}\n")).unwrap();
    let cli = |args: &[&str]| {
        let out = assert_cmd::Command::cargo_bin("covenant").unwrap().args(args).output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let ctx = context.path().to_str().unwrap();

    let view = Arc::new(connect(serve(fake)));
    wait_synced(&view);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async move {
        let server = common::TestServer::with(common::Setup {
            cluster: Some(view.clone()),
            ..common::Setup::default()
        })
        .await;
        let get = |path: String| {
            let url = format!("http://{}{path}", server.api);
            async move {
                let r = reqwest::get(url).await.unwrap();
                assert_eq!(r.status(), 200);
                r.text().await.unwrap()
            }
        };
        let status: Value = serde_json::from_str(&get("/api/v0/status".into()).await).unwrap();
        let offline: Value =
            serde_json::from_str(&cli(&["status", "--output", "json", "--context", ctx])).unwrap();
        assert_eq!(status["constructs"], offline["constructs"]);
        let ruby =
            status["constructs"].as_array().unwrap().iter().find(|c| c["name"] == "ruby-service").unwrap();
        assert!(ruby.to_string().contains("bakery/web"), "{ruby}");

        let compare = get(
            "/api/v0/compare?kind=ClusterTrait&name=otel-instrumentation&from=1.0.0&to=2.0.0&output=markdown"
                .into(),
        )
        .await;
        assert_eq!(
            compare,
            cli(&[
                "diff",
                "--context",
                ctx,
                "otel-instrumentation",
                "1.0.0",
                "2.0.0",
                "--output",
                "markdown"
            ])
        );
        assert!(compare.contains("collectorEndpoint"), "{compare}");

        let plans: Value = serde_json::from_str(
            &get("/api/v0/upgrade?kind=Component&namespace=bakery&name=web".into()).await,
        )
        .unwrap();
        let mut offline: Value = serde_json::from_str(&cli(&[
            "upgrade",
            "--output",
            "json",
            "--context",
            ctx,
            consumers.path().to_str().unwrap(),
        ]))
        .unwrap();
        for p in offline.as_array_mut().unwrap() {
            let p = p.as_object_mut().unwrap();
            // Where the CLI found it: the admin listener reads it from the cluster.
            for place in ["file", "consumer", "document", "item"] {
                p.remove(place);
            }
        }
        assert_eq!(plans, offline);
        let plans = plans.as_array().unwrap();
        assert_eq!(plans.len(), 2, "{plans:?}");
        let ruby = plans.iter().find(|p| p["name"] == "ruby-service").unwrap();
        assert_eq!(
            (ruby["applies"].as_bool(), ruby["findings"][0]["pointer"].as_str()),
            (Some(false), Some("/spec/parameters/sizeClass"))
        );
        let otel = plans.iter().find(|p| p["name"] == "otel-instrumentation").unwrap();
        assert_eq!(otel["findings"], json!([]));
        assert_eq!(otel["bindings"][0]["binding"], "ReleaseBinding bakery/web-production");
        assert_eq!(
            otel["bindings"][0]["findings"][0]["pointer"],
            "/spec/traitEnvironmentConfigs/otel/collectorEndpoint"
        );
        assert_eq!(otel["applies"], false);
        drop(server);
    });
}

/// A cached kind's objects are converted to values once per version of each object, not on
/// every lookup: two lookups share each value, a namespace's lookup shares the values of the
/// whole, and a relist (here after 410 Gone) brings what changed — to lists and to lookups
/// through an index alike.
#[test]
fn cached_objects_are_converted_once_and_follow_the_store() {
    let mut fake = Fake::default();
    fake.serve_openchoreo("ClusterComponentType", false);
    fake.serve_openchoreo("Component", true);
    fake.objects.insert(("openchoreo.dev".into(), "clustercomponenttypes".into()), published_types());
    let component = |ns: &str| {
        json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Component",
               "metadata": {"name": "web", "namespace": ns, "uid": format!("uid-{ns}"), "resourceVersion": "1"},
               "spec": {"owner": {"projectName": ns}}})
    };
    fake.objects.insert(("openchoreo.dev".into(), "components".into()), vec![component("a"), component("b")]);
    let server = common::apiserver::FakeServer::start(fake);
    let view = connect(server.addr);
    wait_synced(&view);
    let list = |kind: &str, ns: Option<&str>| view.list("openchoreo.dev", kind, ns, None).unwrap();
    let names = |values: &[Arc<Value>]| {
        let mut n: Vec<String> =
            values.iter().map(|v| v["metadata"]["name"].as_str().unwrap().to_string()).collect();
        n.sort();
        n
    };

    let (first, again) = (list("ClusterComponentType", None), list("ClusterComponentType", None));
    assert_eq!(names(&first), ["ruby-service-v1", "ruby-service-v2"]);
    assert_eq!(first[0]["kind"], "ClusterComponentType", "{}", first[0]);
    assert_eq!(first.len(), again.len());
    for (a, b) in first.iter().zip(&again) {
        assert!(Arc::ptr_eq(a, b), "converted again: {}", a["metadata"]["name"]);
    }

    let in_a = list("Component", Some("a"));
    assert_eq!(in_a.len(), 1);
    assert_eq!(in_a[0]["metadata"]["namespace"], "a");
    let all = list("Component", None);
    assert_eq!(all.len(), 2);
    assert!(all.iter().any(|v| Arc::ptr_eq(v, &in_a[0])), "the namespace's value is the whole's");
    assert!(Arc::ptr_eq(&list("Component", Some("a"))[0], &in_a[0]));

    // Lookups through an index find what a pass over the kind would.
    use covenant::cluster::BY_NAME;
    use covenant::families::labels::BY_LOGICAL_NAME;
    let by = |kind: &str, ns: Option<&str>, index, key: &str| {
        view.lookup("openchoreo.dev", kind, ns, index, key, None).unwrap()
    };
    assert_eq!(
        names(&by("ClusterComponentType", None, &BY_LOGICAL_NAME, "ruby-service")),
        ["ruby-service-v1", "ruby-service-v2"]
    );
    assert!(by("ClusterComponentType", None, &BY_LOGICAL_NAME, "ruby").is_empty());
    assert_eq!(by("Component", None, &BY_NAME, "b/web").len(), 1);
    assert!(by("Component", Some("a"), &BY_NAME, "b/web").is_empty(), "the namespace narrows a lookup");
    assert!(
        Arc::ptr_eq(&by("Component", None, &BY_NAME, "a/web")[0], &in_a[0]),
        "the index holds the cache's values"
    );

    publish_v3(&server);
    server.expire_watches();
    within(Duration::from_secs(3), "the relisted object", || type_count(&view) == Some(3));
    assert_eq!(
        names(&list("ClusterComponentType", None)),
        ["ruby-service-v1", "ruby-service-v2", "ruby-service-v3"]
    );
    // The index follows the store: rebuilt after it changed.
    assert_eq!(
        names(&by("ClusterComponentType", None, &BY_LOGICAL_NAME, "ruby-service")),
        ["ruby-service-v1", "ruby-service-v2", "ruby-service-v3"]
    );
}

/// `check --cluster` reads a live cluster as its context, through a kubeconfig context: the
/// published types in the stand-in API server resolve the tour's pins (the one pinned to "9"
/// is refused); `status`, `upgrade` and `diff` read it the same way; a context the kubeconfig lacks
/// is an input error naming it.
#[test]
fn check_reads_a_live_cluster_through_a_kubeconfig_context() {
    let mut fake = Fake::default();
    fake.serve_openchoreo("ClusterComponentType", false);
    fake.serve_openchoreo("Component", true);
    fake.objects.insert(("openchoreo.dev".into(), "clustercomponenttypes".into()), published_types());
    let server = common::apiserver::FakeServer::start(fake);
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = common::apiserver::kubeconfig(dir.path(), server.addr);
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_covenant"))
            .current_dir(root)
            .env("KUBECONFIG", &kubeconfig)
            .args(args)
            .output()
            .unwrap()
    };
    for args in [
        &["check", "examples/tour/apps", "--cluster", "stand-in"][..],
        &["check", "examples/tour/apps", "--cluster"],
    ] {
        let out = run(args);
        let text = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {text}{}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains("error[CVN-406] /spec/componentType/version: pin \"9\""), "{text}");
        assert!(!text.contains("not checked"), "{text}");
    }
    // status and upgrade read it too.
    let out = run(&["status", "--cluster", "stand-in"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.contains("ruby-service  2.0.0"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&["upgrade", "examples/tour/apps", "--cluster", "--skip-unplannable"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("target 2.0.0: move the pin to \"2\"") && text.contains("would NOT apply"),
        "{text}"
    );
    let out = run(&["diff", "--cluster", "stand-in", "ruby-service", "1.1.0", "2.0.0"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("enum value \"xlarge\" was removed"),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = run(&["check", "examples/tour/apps", "--cluster", "elsewhere"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--cluster elsewhere"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
