//! The mutating path: version stamps and labels as JSONPatch. The returned patch is applied
//! with the `json-patch` crate to the original object and compared with the expected object,
//! over the OpenChoreo samples; mutating the mutated object yields nothing; rendered objects
//! take the version their release froze; and the whole route runs end to end over TLS.

use crate::common;

use base64::Engine as _;
use covenant::cluster::{ClusterView, EmptyCluster, OfflineCluster};
use covenant::config::Config;
use covenant::engine::Engine;
use covenant::subject::{Gvk, Subject};
use serde_json::{json, Value};

const ENABLED: &str = "apiVersion: covenant.dev/v1alpha1\nkind: Config\nrules:\n  actions: {CVN-501: mutate, CVN-502: mutate}\n";

fn enabled() -> Config {
    Config::from_text("mutation.yaml", ENABLED, None).unwrap()
}

/// Every construct of the OpenChoreo samples, published at `version` under the scheme's name
/// `<logical>-v<major>` and annotated with it (labels and stamps left for the webhook).
fn sample_constructs(version: &str) -> Vec<Value> {
    let files = covenant::source::discover(&common::fixtures().join("openchoreo/samples")).unwrap();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(f).unwrap();
        for d in covenant::source::parse_stream(&text).0 {
            let mut v = d.value;
            if !covenant::families::construct::KINDS.contains(&v["kind"].as_str().unwrap_or_default()) {
                continue;
            }
            let logical = v["metadata"]["name"].as_str().unwrap().to_string();
            let major = version.split('.').next().unwrap();
            v["metadata"]["name"] = json!(format!("{logical}-v{major}"));
            v["metadata"]["annotations"]["openchoreo.dev/version"] = json!(version);
            out.push(v);
        }
    }
    out
}

fn subject(doc: &Value) -> Subject {
    let mut s = Subject::from_document(doc.clone());
    s.admitted = true;
    s
}

fn apply(doc: &Value, ops: &[Value]) -> Value {
    let patch: json_patch::Patch = serde_json::from_value(Value::Array(ops.to_vec())).unwrap();
    let mut out = doc.clone();
    json_patch::patch(&mut out, &patch).unwrap();
    out
}

/// What the stamped construct must look like.
fn expected(doc: &Value, version: &str) -> Value {
    let mut e = doc.clone();
    let logical = covenant::families::construct::logical_name(doc);
    e["metadata"]["labels"]["openchoreo.dev/name"] = json!(logical);
    e["metadata"]["labels"]["openchoreo.dev/version"] = json!(version);
    for list in ["resources", "creates"] {
        if let Some(items) = e["spec"].get_mut(list).and_then(Value::as_array_mut) {
            // Annotations written as a CEL expression are computed at render time: not stamped.
            for r in items.iter_mut().filter(|r| {
                r["template"].is_object() && !r["template"]["metadata"]["annotations"].is_string()
            }) {
                r["template"]["metadata"]["annotations"]["openchoreo.dev/rendered-from-version"] =
                    json!(version);
                r["template"]["metadata"]["annotations"]["openchoreo.dev/rendered-from-type"] =
                    json!(logical);
            }
        }
    }
    e
}

#[test]
fn the_patch_applied_to_each_sample_gives_the_expected_object_and_is_idempotent() {
    let engine = Engine::new(&enabled());
    let constructs = sample_constructs("1.2.0");
    assert!(constructs.len() >= 6, "{}", constructs.len());
    let mut stamped_templates = 0;
    for doc in &constructs {
        let m = engine.mutate(&subject(doc), &EmptyCluster);
        let computed = doc["spec"]["resources"]
            .as_array()
            .is_some_and(|r| r.iter().any(|r| r["template"]["metadata"]["annotations"].is_string()));
        assert_eq!(m.warnings.len(), usize::from(computed), "{:?}", m.warnings);
        assert!(!m.ops.is_empty(), "{}", doc["metadata"]["name"]);
        let patched = apply(doc, &m.ops);
        assert_eq!(patched, expected(doc, "1.2.0"), "{}", doc["metadata"]["name"]);
        assert_eq!(Some(&patched), m.patched.as_ref());
        // Keys with `/` are escaped in the paths; the ops are ordered by rule id.
        assert!(
            m.ops.iter().all(|o| !o["path"].as_str().unwrap().contains("openchoreo.dev/")),
            "{:?}",
            m.ops
        );
        let rules: Vec<&str> = m.rules.clone();
        let mut sorted = rules.clone();
        sorted.sort();
        assert_eq!(rules, sorted);
        stamped_templates +=
            m.ops.iter().filter(|o| o["path"].as_str().unwrap().contains("/template/")).count();
        // Idempotent: the mutated object needs no patch.
        let again = engine.mutate(&subject(&patched), &EmptyCluster);
        assert!(again.ops.is_empty(), "{:?}", again.ops);
    }
    assert!(stamped_templates >= 10, "{stamped_templates}");
}

/// A deterministic generator of partially stamped constructs: each template's stamps are
/// missing, stale or right, and labels present or not; the patch always lands on the same
/// expected object and a second pass writes nothing.
#[test]
fn any_mix_of_missing_and_stale_stamps_converges_in_one_patch() {
    let engine = Engine::new(&enabled());
    let mut seed: u64 = 0x5eed_1234_abcd_9876;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for doc in sample_constructs("2.0.1") {
        let want = expected(&doc, "2.0.1");
        for _ in 0..20 {
            let mut v = want.clone();
            if next() % 2 == 0 {
                v["metadata"]["labels"].as_object_mut().unwrap().remove("openchoreo.dev/version");
            }
            if next() % 3 == 0 {
                v["metadata"]["labels"].as_object_mut().unwrap().remove("openchoreo.dev/name");
            }
            for list in ["resources", "creates"] {
                for r in v["spec"].get_mut(list).and_then(Value::as_array_mut).into_iter().flatten() {
                    let meta = r["template"]["metadata"].as_object_mut().unwrap();
                    if meta.get("annotations").is_some_and(Value::is_string) {
                        continue; // computed by CEL: never stamped
                    }
                    let only_stamps = meta["annotations"].as_object().is_some_and(|a| a.len() == 2);
                    match next() % 4 {
                        0 => meta["annotations"]["openchoreo.dev/rendered-from-version"] = json!("1.0.0"),
                        1 => {
                            let a = meta["annotations"].as_object_mut().unwrap();
                            a.remove("openchoreo.dev/rendered-from-version");
                            a.remove("openchoreo.dev/rendered-from-type");
                        }
                        2 if only_stamps => {
                            meta.insert("annotations".into(), Value::Null);
                        }
                        3 if only_stamps => {
                            meta.remove("annotations");
                        }
                        _ => {}
                    }
                }
            }
            let m = engine.mutate(&subject(&v), &EmptyCluster);
            assert_eq!(apply(&v, &m.ops), want);
            assert!(engine.mutate(&subject(&want), &EmptyCluster).ops.is_empty());
        }
    }
}

#[test]
fn mutation_is_off_by_default_and_a_rendered_object_takes_its_release_version() {
    let doc = &sample_constructs("1.0.0")[0];
    // Off by default: the embedded config writes nothing.
    let default = Engine::new(&Config::embedded().unwrap());
    assert!(default.mutate(&subject(doc), &EmptyCluster).ops.is_empty());

    let engine = Engine::new(&enabled());
    let published = OfflineCluster::load_dir(&common::fixtures().join("openchoreo/published")).unwrap();
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "chess-render", "namespace": "dp-chess",
            "labels": {"openchoreo.dev/rendered-release-name": "chess-render-7449b895f4",
                "openchoreo.dev/rendered-release-namespace": "chess"}},
        "spec": {"replicas": 1}});
    let mut s = Subject::from_document(deployment.clone());
    s.gvk = Gvk::from_api_version("apps/v1", "Deployment");
    let m = engine.mutate(&s, &published);
    let patched = apply(&deployment, &m.ops);
    assert_eq!(patched["metadata"]["annotations"]["openchoreo.dev/rendered-from-version"], "1.1.0");
    assert_eq!(patched["metadata"]["annotations"]["openchoreo.dev/rendered-from-type"], "ruby-service");
    // A release that cannot be resolved: unchanged, with a warning, never a guess.
    let m = engine.mutate(&s, &EmptyCluster);
    assert!(m.ops.is_empty());
    assert!(m.warnings[0].contains("cannot be looked up"), "{:?}", m.warnings);
    let empty: &dyn ClusterView = &OfflineCluster::default();
    let m = engine.mutate(&s, empty);
    assert!(m.warnings[0].contains("is not found"), "{:?}", m.warnings);
}

#[tokio::test]
async fn a_review_in_gives_a_base64_jsonpatch_out_over_tls() {
    let server =
        common::TestServer::with(common::Setup { config: enabled(), ..common::Setup::default() }).await;
    let doc = sample_constructs("1.0.0").remove(0);
    for dry_run in [false, true] {
        let mut review = common::review("u-mutate", "openchoreo.dev", "ClusterComponentType", doc.clone());
        review["request"]["kind"]["version"] = json!("v1alpha1");
        review["request"]["namespace"] = Value::Null;
        review["request"]["dryRun"] = json!(dry_run);
        let got: Value = common::post(&server.h2(), &server.url("/api/v0/mutate"), review.to_string())
            .await
            .json()
            .await
            .unwrap();
        let r = &got["response"];
        assert!(r.get("warnings").is_none(), "{got}");
        assert_eq!(r["uid"], "u-mutate");
        assert_eq!(r["allowed"], true);
        assert_eq!(r["patchType"], "JSONPatch", "{got}");
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(r["patch"].as_str().unwrap_or_else(|| panic!("no patch in {got}")))
            .unwrap();
        let ops: Vec<Value> = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(apply(&doc, &ops), expected(&doc, "1.0.0"), "dry_run={dry_run}");
    }
    let metrics = server.metrics().await;
    assert!(metrics.contains("covenant_patches_total{rule=\"CVN-501\"}"), "{metrics}");
}

/// The getting-started service ComponentType as a published version, 1.0.0, with
/// `metadata_lines` (each indented two spaces, ending in a newline) after its name.
fn versioned_service(metadata_lines: &str) -> String {
    std::fs::read_to_string(
        common::fixtures().join("openchoreo/samples/getting-started/component-types/service.yaml"),
    )
    .unwrap()
    .replacen(
        "metadata:\n  name: service\n  annotations:\n",
        &format!("metadata:\n  name: service-v1\n{metadata_lines}  annotations:\n    openchoreo.dev/version: \"1.0.0\"\n"),
        1,
    )
}

/// `covenant check --fix FILES`, which must succeed: what it said on stderr.
fn fix(files: &[&std::path::Path]) -> String {
    fix_exiting(files, None, 0)
}

/// `covenant check --fix [-] FILES`, `stdin` given as `-` when there is one, which must exit
/// with `code`: what it said on stderr.
fn fix_exiting(files: &[&std::path::Path], stdin: Option<&str>, code: i32) -> String {
    let mut cmd = assert_cmd::Command::cargo_bin("covenant").unwrap();
    cmd.args(["check", "--fix"]);
    if let Some(text) = stdin {
        cmd.arg("-").write_stdin(text.to_string());
    }
    let out = cmd.args(files).assert().code(code);
    String::from_utf8(out.get_output().stderr.clone()).unwrap()
}

#[test]
fn check_fix_writes_the_same_stamps_into_the_files_and_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let original = versioned_service("");
    let stale = std::fs::read_to_string(common::fixtures().join("openchoreo/published/ruby-service.yaml"))
        .unwrap()
        .replace("rendered-from-version: \"1.1.0\"", "rendered-from-version: \"1.0.9\"");
    let (a, b) = (dir.path().join("service.yaml"), dir.path().join("ruby-service.yaml"));
    std::fs::write(&a, &original).unwrap();
    std::fs::write(&b, &stale).unwrap();
    let run = || fix(&[&a, &b]);
    assert!(run().contains("into 2 file(s)"));
    let fixed = std::fs::read_to_string(&a).unwrap();
    // Every original line is still there, in order: the fix only inserted lines.
    let mut rest = fixed.lines();
    for line in original.lines() {
        assert!(rest.any(|l| l == line), "line lost or changed: {line:?}");
    }
    // The fixed document is what the webhook's patch makes of the original.
    let engine = Engine::new(&enabled());
    let doc = covenant::source::parse_stream(&original).0.remove(0).value;
    let m = engine.mutate(&subject(&doc), &EmptyCluster);
    assert_eq!(covenant::source::parse_stream(&fixed).0.remove(0).value, apply(&doc, &m.ops));
    // The stale stamp was replaced in place, on its own line.
    let ruby = std::fs::read_to_string(&b).unwrap();
    assert_eq!(ruby.lines().count(), stale.lines().count() + 6);
    assert!(ruby.contains("openchoreo.dev/rendered-from-version: \"1.1.0\"") && !ruby.contains("1.0.9"));
    // A second run writes nothing.
    assert!(run().contains("into 0 file(s)"));
    // A JSON file is not rewritten whole: --fix refuses it, saying why.
    let json_file = dir.path().join("c.json");
    std::fs::write(&json_file, serde_json::to_string(&doc).unwrap()).unwrap();
    assert!(fix_exiting(&[&json_file], None, 2).contains("--fix edits YAML files"));
    // Nor is stdin that needs a fix: there is nowhere to write it, and no file is written.
    std::fs::write(&a, &original).unwrap();
    let err = fix_exiting(&[&a], Some(&original), 2);
    assert!(
        err.contains("--fix edits YAML files in place, and stdin (-) holds documents it would change"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&a).unwrap(), original);
    // Stdin the fix would not change is checked beside the files it fixes.
    assert!(fix_exiting(&[&a], Some(&fixed), 0).contains("into 1 file(s)"));
}

/// A list document (`kubectl get -o yaml`) is fixed item by item: each item gets what the
/// webhook's patch gives it, and an item nothing stamps is left as it was.
#[test]
fn check_fix_stamps_the_items_of_a_list_document() {
    let dir = tempfile::tempdir().unwrap();
    let versioned = versioned_service("");
    let configmap = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings";
    let original = format!(
        "apiVersion: v1\nkind: List\nitems:\n{}\n{}\n",
        common::as_item(configmap),
        common::as_item(&versioned)
    );
    let file = dir.path().join("list.yaml");
    std::fs::write(&file, &original).unwrap();
    let run = || fix(&[&file]);
    assert!(run().contains("into 1 file(s)"));
    let fixed = std::fs::read_to_string(&file).unwrap();
    let engine = Engine::new(&enabled());
    let doc = covenant::source::parse_stream(&versioned).0.remove(0).value;
    let m = engine.mutate(&subject(&doc), &EmptyCluster);
    assert!(!m.ops.is_empty());
    let list = covenant::source::parse_stream(&fixed).0.remove(0).value;
    assert_eq!(list["items"][1], apply(&doc, &m.ops), "{fixed}");
    assert_eq!(list["items"][0], covenant::source::parse_stream(configmap).0.remove(0).value);
    assert!(run().contains("into 0 file(s)"));
    // In a list within the list, the same stamps, where the object is.
    let inner = common::as_item(&versioned).lines().map(|l| format!("  {l}")).collect::<Vec<_>>().join("\n");
    std::fs::write(
        &file,
        format!("apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: List\n  items:\n{inner}\n"),
    )
    .unwrap();
    assert!(run().contains("into 1 file(s)"));
    let fixed = std::fs::read_to_string(&file).unwrap();
    let list = covenant::source::parse_stream(&fixed).0.remove(0).value;
    assert_eq!(list["items"][0]["items"][0], apply(&doc, &m.ops), "{fixed}");
}

#[test]
fn the_release_labels_are_configurable() {
    let text = format!("{ENABLED}mutation:\n  releaseNameLabel: platform.example.com/release\n  releaseNamespaceLabel: platform.example.com/release-namespace\n");
    let engine = Engine::new(&Config::from_text("m.yaml", &text, None).unwrap());
    let published = OfflineCluster::load_dir(&common::fixtures().join("openchoreo/published")).unwrap();
    let rendered = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "chess-render", "namespace": "dp",
        "labels": {"platform.example.com/release": "chess-render-7449b895f4", "platform.example.com/release-namespace": "chess"}}});
    let mut s = Subject::from_document(rendered.clone());
    s.gvk = Gvk::from_api_version("v1", "Service");
    let patched = apply(&rendered, &engine.mutate(&s, &published).ops);
    assert_eq!(patched["metadata"]["annotations"]["openchoreo.dev/rendered-from-version"], "1.1.0");
    // The default labels mean nothing under this config.
    let mut other = rendered.clone();
    other["metadata"]["labels"] = json!({"openchoreo.dev/rendered-release-name": "chess-render-7449b895f4"});
    let mut s = Subject::from_document(other);
    s.gvk = Gvk::from_api_version("v1", "Service");
    assert!(engine.mutate(&s, &published).ops.is_empty());
}

#[test]
fn an_exemption_scoped_to_one_mutation_rule_drops_only_its_edits() {
    let scoped = Config::from_text(
        "mutation.yaml",
        &format!("{ENABLED}exemptions:\n  - names: [\"*\"]\n    rules: [CVN-502]\n    reason: templates stamped by hand\n"),
        None,
    )
    .unwrap();
    let whole = Config::from_text(
        "mutation.yaml",
        &format!("{ENABLED}exemptions:\n  - names: [\"*\"]\n    reason: not stamped at all\n"),
        None,
    )
    .unwrap();
    let doc = sample_constructs("1.2.0")
        .into_iter()
        .find(|d| d["spec"]["resources"].as_array().is_some_and(|r| !r.is_empty()))
        .unwrap();
    let all = Engine::new(&enabled()).mutate(&subject(&doc), &EmptyCluster);
    assert_eq!(all.rules, ["CVN-501", "CVN-502"]);
    let m = Engine::new(&scoped).mutate(&subject(&doc), &EmptyCluster);
    assert_eq!(m.rules, ["CVN-501"], "CVN-502 exempted, CVN-501 still stamps");
    assert!(m.ops.len() < all.ops.len());
    assert!(Engine::new(&whole).mutate(&subject(&doc), &EmptyCluster).ops.is_empty());
}

/// `check --fix` writes into an empty flow mapping (`labels: {}`): the line becomes `labels:`
/// with the members below it, and the result is what the webhook's patch makes.
#[test]
fn check_fix_fills_an_empty_flow_mapping() {
    let dir = tempfile::tempdir().unwrap();
    let original = versioned_service("  labels: {}\n");
    assert!(original.contains("labels: {}"));
    let file = dir.path().join("service.yaml");
    std::fs::write(&file, &original).unwrap();
    fix(&[&file]);
    let fixed = std::fs::read_to_string(&file).unwrap();
    assert!(fixed.contains("  labels:\n    openchoreo.dev/"), "{fixed}");
    let engine = Engine::new(&enabled());
    let doc = covenant::source::parse_stream(&original).0.remove(0).value;
    let m = engine.mutate(&subject(&doc), &EmptyCluster);
    assert_eq!(covenant::source::parse_stream(&fixed).0.remove(0).value, apply(&doc, &m.ops));
}
