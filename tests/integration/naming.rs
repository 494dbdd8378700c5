//! The type-name covenant over the worked cases of seed 000 ("Type-Name Reservation
//! Covenant", "Two Axes of a Type, and the Naming Rule", the helmchart history): registries
//! and dialect declarations as data, checked against each other the way
//! `covenant check --registry --dialect` and the webhook check them.

use crate::common;

use covenant::check::{check, Source};
use covenant::cluster::EmptyCluster;
use covenant::config::Config;
use covenant::engine::Engine;
use covenant::registry::TypeCategory;
use serde_json::{json, Value};

/// Write the documents, load them all into the namespace, check each one; returns
/// (rule, file, pointer, message) for every finding.
fn run(docs: &[(&str, &str)]) -> Vec<(String, String, String, String)> {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::embedded().unwrap();
    let mut sources = Vec::new();
    for (name, text) in docs {
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        if text.contains("kind: Registry") || text.contains("kind: Dialect") {
            config.registry.add_file(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        sources.push(Source { name: name.to_string(), text: text.to_string() });
    }
    let engine = Engine::new(&config);
    let report = check(&engine, &EmptyCluster, &sources);
    report
        .entries
        .iter()
        .map(|e| {
            (
                e.finding.rule.id.to_string(),
                e.file.clone(),
                e.finding.pointer.clone(),
                e.finding.message.clone(),
            )
        })
        .collect()
}

fn rules(found: &[(String, String, String, String)]) -> Vec<(&str, &str, &str)> {
    found.iter().map(|(r, f, p, _)| (r.as_str(), f.as_str(), p.as_str())).collect()
}

const ACME: &str = "apiVersion: covenant.dev/v1alpha1
kind: Dialect
metadata: {name: acme}
extends: launcher.gokure.dev/v1alpha1
reserved:
  - name: backup
    category: trait
    schema:
      type: object
      properties:
        schedule: {type: string}
        retain: {type: integer}
";

fn registry(types: &str) -> String {
    format!("apiVersion: covenant.dev/v1alpha1\nkind: Registry\nmetadata: {{name: launcher-next}}\ntypes:\n{types}")
}

#[test]
fn a_reserved_name_is_refused_unless_upstreamed_with_a_superset_schema() {
    // Reservation: launcher may not ship `backup` with other semantics.
    let taken = registry("  - {name: backup, category: trait, tier: terminal}\n");
    let found = run(&[("acme.yaml", ACME), ("next.yaml", &taken)]);
    assert_eq!(rules(&found), [("CVN-302", "next.yaml", "/types/0/name")]);
    assert!(
        found[0].3.contains("reserved by dialect acme") && found[0].3.contains("upstreams: acme"),
        "{}",
        found[0].3
    );

    // Upstream-or-rename: upstreaming with the same semantics, accepting all the dialect's
    // type accepts (and more), is allowed.
    let upstreamed = registry(
        "  - name: backup\n    category: trait\n    tier: terminal\n    upstreams: acme\n    schema:\n      type: object\n      properties:\n        schedule: {type: string}\n        retain: {type: integer}\n        target: {type: string}\n",
    );
    assert_eq!(run(&[("acme.yaml", ACME), ("next.yaml", &upstreamed)]), []);
    // … but not with a narrower schema.
    let narrower = registry(
        "  - name: backup\n    category: trait\n    tier: terminal\n    upstreams: acme\n    schema:\n      type: object\n      properties:\n        schedule: {type: string, enum: ['@daily', '@weekly']}\n",
    );
    let found = run(&[("acme.yaml", ACME), ("next.yaml", &narrower)]);
    assert_eq!(rules(&found), [("CVN-302", "next.yaml", "/types/0/name")]);
    assert!(found[0].3.contains("field \"retain\" was removed"), "{}", found[0].3);
    assert!(found[0].3.contains("\"schedule\" was limited to the enum"), "{}", found[0].3);
    // Renaming is always allowed.
    let renamed = registry("  - {name: snapshot, category: trait, tier: terminal}\n");
    assert_eq!(run(&[("acme.yaml", ACME), ("next.yaml", &renamed)]), []);
}

#[test]
fn reserving_a_name_reserves_its_generations_and_v1_is_spelled_bare() {
    let v2 = registry("  - {name: backup.v2, category: trait, tier: terminal}\n");
    let found = run(&[("acme.yaml", ACME), ("next.yaml", &v2)]);
    assert_eq!(rules(&found), [("CVN-302", "next.yaml", "/types/0/name")]);
    assert!(found[0].3.contains("\"backup.v2\" (the family of \"backup\")"), "{}", found[0].3);
    // The dialect's own generations are its own.
    let own = ACME.to_string() + "types:\n  - {name: backup.v2, category: trait, tier: terminal}\n";
    assert_eq!(run(&[("acme.yaml", &own)]), []);
    // `.v1` is the bare name spelled out; other dots are not generations.
    let bad = registry(
        "  - {name: backup.v1, category: trait, tier: terminal}\n  - {name: cron.job, category: trait, tier: terminal}\n  - {name: cron.v3, category: trait, tier: terminal}\n",
    );
    let found = run(&[("next.yaml", &bad)]);
    assert_eq!(
        rules(&found),
        [("CVN-303", "next.yaml", "/types/0/name"), ("CVN-303", "next.yaml", "/types/1/name")]
    );
    assert!(found[0].3.contains("the bare name \"backup\" is generation 1"), "{}", found[0].3);
}

#[test]
fn a_shadowed_type_must_stay_a_compatible_superset() {
    let upstream = registry(
        "  - name: cache\n    category: component\n    tier: terminal\n    schema:\n      type: object\n      properties:\n        size: {type: integer}\n        mode: {type: string, enum: [lru, lfu]}\n",
    );
    let shadow = |schema: &str| {
        format!(
            "apiVersion: covenant.dev/v1alpha1\nkind: Dialect\nmetadata: {{name: acme}}\nextends: launcher.gokure.dev/v1alpha1\nshadowed:\n  - name: cache\n    category: component\n    schema:\n{schema}"
        )
    };
    // Compatible: every value upstream accepts, and more.
    let wider = shadow("      type: object\n      properties:\n        size: {type: number}\n        mode: {type: string, enum: [lru, lfu, fifo]}\n        region: {type: string}\n");
    assert_eq!(run(&[("next.yaml", &upstream), ("acme.yaml", &wider)]), []);
    // Incompatible: narrows what upstream accepts.
    let narrower = shadow("      type: object\n      properties:\n        size: {type: string}\n        mode: {type: string, enum: [lru]}\n");
    let found = run(&[("next.yaml", &upstream), ("acme.yaml", &narrower)]);
    assert_eq!(rules(&found), [("CVN-306", "acme.yaml", "/shadowed/0")]);
    assert!(found[0].3.contains("enum value \"lfu\" was removed"), "{}", found[0].3);
    assert!(found[0].3.contains("the type of \"size\" changed"), "{}", found[0].3);
    // Shadowing a built-in type with an open schema accepts everything.
    let open = "apiVersion: covenant.dev/v1alpha1\nkind: Dialect\nmetadata: {name: acme}\nextends: launcher.gokure.dev/v1alpha1\nshadowed:\n  - {name: pvc, category: trait}\n";
    assert_eq!(run(&[("acme.yaml", open)]), []);
}

#[test]
fn one_flat_namespace_across_registries_and_dialects() {
    let dialect = "apiVersion: covenant.dev/v1alpha1\nkind: Dialect\nmetadata: {name: acme}\nextends: launcher.gokure.dev/v1alpha1\ntypes:\n  - {name: backup, category: component, tier: terminal}\n";
    let next = registry("  - {name: backup, category: trait, tier: terminal}\n");
    let found = run(&[("acme.yaml", dialect), ("next.yaml", &next)]);
    let mut got = rules(&found);
    got.sort();
    assert_eq!(got, [("CVN-301", "acme.yaml", "/types/0/name"), ("CVN-301", "next.yaml", "/types/0/name")]);
    assert!(
        found.iter().any(|f| f.3.contains(
            "trait type \"backup\" (registry launcher-next) is also a component type (dialect acme)"
        )),
        "{found:?}"
    );
    // An Application that uses a name in a category that does not own it: both named.
    let app = json!({"apiVersion": "launcher.gokure.dev/v1alpha1", "kind": "Application", "metadata": {"name": "a"},
        "spec": {"components": [{"name": "db", "type": "worker", "properties": {"image": "x"},
            "traits": [{"type": "postgresql"}]}]}});
    let found = run(&[("app.yaml", &serde_json::to_string(&app).unwrap())]);
    assert_eq!(rules(&found), [("CVN-301", "app.yaml", "/spec/components/0/traits/0/type")]);
    assert!(
        found[0].3.contains("is also a component type (component type of registry builtin-launcher)"),
        "{}",
        found[0].3
    );
}

#[test]
fn the_naming_rule_and_its_precedents() {
    // helmchart reused for the HelmChart CR follows rule 1; a role-ish spelling of a plain
    // projection does not.
    let found = run(&[(
        "next.yaml",
        &registry("  - name: chart-source\n    category: component\n    tier: terminal\n    projects: {group: source.toolkit.fluxcd.io, version: v1, kind: HelmChart}\n"),
    )]);
    assert_eq!(rules(&found), [("CVN-304", "next.yaml", "/types/0/name")]);
    assert!(found[0].3.contains("takes the kind's name in lowercase, \"helmchart\""), "{}", found[0].3);
    // The vendor prefix precedent: cilium-networkpolicy beside networkpolicy is fine; a prefix
    // where the bare name is free is not, unless the entry says why.
    let ok = registry("  - name: calico-networkpolicy\n    category: trait\n    tier: terminal\n    projects: {group: crd.projectcalico.org, version: v1, kind: NetworkPolicy}\n");
    assert_eq!(run(&[("next.yaml", &ok)]), []);
    let free = registry("  - name: acme-widget\n    category: component\n    tier: terminal\n    projects: {group: acme.io, version: v1, kind: Widget}\n");
    let found = run(&[("next.yaml", &free)]);
    assert_eq!(rules(&found), [("CVN-304", "next.yaml", "/types/0/name")]);
    assert!(found[0].3.contains("no type is named \"widget\""), "{}", found[0].3);
    // fluxcd-kustomization needs its stated reason (bare kustomization collides with
    // kustomization.yaml, which is not a type).
    let without_reason = registry("  - name: fluxcd-kustomization\n    category: component\n    tier: terminal\n    projects: {group: kustomize.toolkit.fluxcd.io, version: v1, kind: Kustomization}\n");
    assert_eq!(rules(&run(&[("next.yaml", &without_reason)])), [("CVN-304", "next.yaml", "/types/0/name")]);
    let with_reason =
        format!("{without_reason}    prefixReason: bare kustomization collides with kustomization.yaml\n");
    assert_eq!(run(&[("next.yaml", &with_reason)]), []);
}

#[test]
fn terminal_and_lowerable_stay_apart() {
    // The builtin expose (lowerable) lowers into ingress (terminal): two names, no conflict.
    assert_eq!(run(&[]), []);
    let conflict = registry("  - {name: expose, category: trait, tier: terminal}\n");
    let found = run(&[("next.yaml", &conflict)]);
    assert_eq!(rules(&found), [("CVN-305", "next.yaml", "/types/0/name")]);
    assert!(
        found[0].3.contains("terminal in registry launcher-next and lowerable in registry builtin-launcher"),
        "{}",
        found[0].3
    );
}

#[test]
fn the_builtin_registry_passes_its_own_covenant_check() {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("registry/launcher.yaml"),
    )
    .unwrap();
    let engine = Engine::new(&Config::embedded().unwrap());
    let report = check(&engine, &EmptyCluster, &[Source { name: "registry/launcher.yaml".into(), text }]);
    let found: Vec<String> = report.entries.iter().map(|e| e.finding.line()).collect();
    assert!(found.is_empty(), "{found:?}");
    assert_eq!(report.documents, 1);
}

#[test]
fn a_dialect_is_strict_and_extends_the_launcher_format() {
    let typo = "apiVersion: covenant.dev/v1alpha1\nkind: Dialect\nmetadata: {name: acme}\nextends: launcher.gokure.dev/v1alpha1\nreserverd: []\n";
    let engine = Engine::new(&Config::embedded().unwrap());
    let report = check(&engine, &EmptyCluster, &[Source { name: "d.yaml".into(), text: typo.into() }]);
    let lines: Vec<String> = report.entries.iter().map(|e| e.finding.line()).collect();
    assert!(lines.iter().any(|l| l.contains("reserverd")), "{lines:?}");
    let other = ACME.replace("extends: launcher.gokure.dev/v1alpha1", "extends: core.oam.dev/v1beta1");
    let report = check(&engine, &EmptyCluster, &[Source { name: "d.yaml".into(), text: other }]);
    let lines: Vec<String> = report.entries.iter().map(|e| e.finding.line()).collect();
    assert!(
        lines.iter().any(|l| l.contains("a dialect extends \"launcher.gokure.dev/v1alpha1\"")),
        "{lines:?}"
    );
}

#[test]
fn check_takes_registry_and_dialect_flags() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("acme.yaml"), ACME).unwrap();
    std::fs::write(
        dir.path().join("next.yaml"),
        registry("  - {name: backup.v3, category: trait, tier: terminal}\n"),
    )
    .unwrap();
    let denied = |registry: &str| {
        let out = assert_cmd::Command::cargo_bin("covenant")
            .unwrap()
            .current_dir(dir.path())
            .args(["check", "--dialect", "acme.yaml", "--registry", registry])
            .assert()
            .code(1)
            .get_output()
            .stdout
            .clone();
        String::from_utf8(out).unwrap()
    };
    let out = denied("next.yaml");
    assert!(out.contains("next.yaml:5:6: error[CVN-302]"), "{out}");
    // A directory of registries: each file joins, and is checked with the rest.
    std::fs::create_dir(dir.path().join("registries")).unwrap();
    std::fs::rename(dir.path().join("next.yaml"), dir.path().join("registries/next.yaml")).unwrap();
    let out = denied("registries");
    assert!(out.contains("registries/next.yaml:5:6: error[CVN-302]"), "{out}");
    std::fs::rename(dir.path().join("registries/next.yaml"), dir.path().join("next.yaml")).unwrap();
    // The wrong kind behind a flag is an input error.
    assert_cmd::Command::cargo_bin("covenant")
        .unwrap()
        .current_dir(dir.path())
        .args(["check", "--dialect", "next.yaml"])
        .assert()
        .code(2);
}

/// `registries:` in the config takes a directory as the flags do; one that holds no registry
/// file is an error that says so, never a registry silently left out.
#[test]
fn the_configs_registries_take_a_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("registries")).unwrap();
    let config = |dir: &std::path::Path| {
        Config::from_text(
            "c.yaml",
            "apiVersion: covenant.dev/v1alpha1\nkind: Config\nregistries: [registries]\n",
            Some(dir),
        )
    };
    let Err(e) = config(dir.path()) else { panic!("an empty directory is refused") };
    let e = e.to_string();
    assert!(e.contains("registries") && e.contains("holds no *.yaml"), "{e}");
    std::fs::write(
        dir.path().join("registries/next.yaml"),
        registry("  - {name: backup.v3, category: trait, tier: terminal}\n"),
    )
    .unwrap();
    let names = |config: &Config| {
        config.registry.launcher_names(TypeCategory::Trait).map(str::to_string).collect::<Vec<_>>()
    };
    let with = config(dir.path()).unwrap();
    assert!(names(&with).contains(&"backup.v3".to_string()), "{:?}", names(&with));
    assert!(!names(&Config::embedded().unwrap()).contains(&"backup.v3".to_string()));
}

#[tokio::test]
async fn the_webhook_checks_dialects_and_capability_definitions() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("next.yaml"),
        registry("  - {name: backup, category: trait, tier: terminal}\n"),
    )
    .unwrap();
    let config = Config::from_text(
        "c.yaml",
        "apiVersion: covenant.dev/v1alpha1\nkind: Config\nregistries: [next.yaml]\n",
        Some(dir.path()),
    )
    .unwrap();
    let server = common::TestServer::with(common::Setup { config, ..common::Setup::default() }).await;
    let post = |review: Value| {
        let (client, url) = (server.h2(), server.url("/api/v0/validate"));
        async move { common::post(&client, &url, review.to_string()).await.json::<Value>().await.unwrap() }
    };
    // A dialect applied to the cluster that reserves what a configured registry already ships.
    let dialect: Value = covenant::source::parse_stream(ACME).0.remove(0).value;
    let mut review = common::review("u-dialect", "covenant.dev", "Dialect", dialect);
    review["request"]["kind"]["version"] = "v1alpha1".into();
    let got = post(review).await;
    assert_eq!(got["response"]["allowed"], true, "the dialect itself takes nothing: {got}");
    // A CapabilityDefinition whose name spells out `.v1`, and one that takes a component name.
    for (name, rule) in [("redis.v1", "CVN-303"), ("postgresql", "CVN-301")] {
        let def = json!({"apiVersion": "launcher.gokure.dev/v1alpha1", "kind": "CapabilityDefinition",
            "metadata": {"name": name}, "spec": {"rendering": {"properties": {}}}});
        let mut review = common::review("u-cap", "launcher.gokure.dev", "CapabilityDefinition", def);
        review["request"]["kind"]["version"] = "v1alpha1".into();
        let got = post(review).await;
        assert_eq!(got["response"]["allowed"], false, "{got}");
        assert_eq!(got["response"]["status"]["details"]["causes"][0]["reason"], rule, "{got}");
        assert_eq!(got["response"]["status"]["details"]["causes"][0]["field"], "/metadata/name", "{got}");
    }
}

/// A kind-named type is its kind's name in lowercase with nothing inserted: a hyphenated
/// respelling is CVN-304 naming the expected name, whether or not a type holds the fragment
/// after the hyphen; a vendor prefix counts only where the kind's API group names the vendor.
#[test]
fn a_respelled_kind_name_is_judged_against_the_whole_kind() {
    let projecting = |name: &str, group: &str, kind: &str| {
        format!("  - name: {name}\n    category: trait\n    tier: terminal\n    projects: {{group: {group}, version: v1, kind: {kind}}}\n")
    };
    for (name, group, kind, expected) in [
        ("http-route", "gateway.networking.k8s.io", "HTTPRoute", "httproute"),
        ("virtual-service", "networking.istio.io", "VirtualService", "virtualservice"),
        ("network-policy", "networking.k8s.io", "NetworkPolicy", "networkpolicy"),
        ("service-monitor", "monitoring.coreos.com", "ServiceMonitor", "servicemonitor"),
    ] {
        // With and without a type named after the fragment (`route`, `service`, …).
        let fragment = name.split('-').nth(1).unwrap();
        let taken = format!("  - {{name: {fragment}, category: component, tier: terminal}}\n");
        for extra in ["", taken.as_str()] {
            let found =
                run(&[("next.yaml", &registry(&format!("{}{extra}", projecting(name, group, kind))))]);
            let naming: Vec<_> = found.iter().filter(|f| f.0 == "CVN-304").collect();
            assert_eq!(naming.len(), 1, "{name} {extra:?}: {found:?}");
            assert!(
                naming[0].3.contains(&format!("with nothing inserted, \"{expected}\"")),
                "{}",
                naming[0].3
            );
        }
        let right = run(&[("next.yaml", &registry(&projecting(expected, group, kind)))]);
        assert!(right.iter().all(|f| f.0 != "CVN-304"), "{expected}: {right:?}");
    }
    // A vendor the group names is still a vendor.
    let cilium = registry(&format!(
        "{}  - {{name: networkpolicy, category: trait, tier: terminal}}\n",
        projecting("cilium-networkpolicy", "cilium.io", "CiliumNetworkPolicy")
    ));
    assert!(run(&[("next.yaml", &cilium)]).iter().all(|f| f.0 != "CVN-304"));
}
