//! One door: a pair of documents gets one verdict whatever face asks. Every pair of the
//! crd-history corpus (CRDs, XRDs, construct and Package pairs), as shipped (not opted in:
//! advisory) and labelled `covenant.dev/evolution=enforce`, goes through `covenant diff`,
//! `covenant check NEW --base OLD` and the webhook's engine on UPDATE; whether each refuses
//! must agree.

use crate::common;

use std::path::Path;

use covenant::cluster::EmptyCluster;
use covenant::engine::Engine;
use serde_json::{json, Value};

fn yaml(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap();
    covenant::source::parse_stream(&text).0.remove(0).value
}

fn labelled(mut doc: Value) -> Value {
    if doc["metadata"]["labels"].is_null() {
        doc["metadata"]["labels"] = json!({});
    }
    doc["metadata"]["labels"]["covenant.dev/evolution"] = json!("enforce");
    doc
}

/// Exit code of the binary run with `args` in `dir`.
fn exit(dir: &Path, args: &[&str]) -> i32 {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_covenant"))
        .current_dir(dir)
        .args(args)
        .output()
        .unwrap();
    out.status.code().unwrap()
}

#[test]
fn diff_check_base_and_the_webhook_give_one_verdict_per_pair() {
    let root = common::fixtures().join("crd-history");
    let index = yaml(&root.join("index.yaml"));
    let engine = Engine::new(&covenant::config::Config::embedded().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let (mut pairs, mut refused, mut advised) = (0, 0, 0);
    let mut disagreements = Vec::new();
    for p in index["pairs"].as_array().unwrap() {
        let id = p["id"].as_str().unwrap();
        let (old_path, new_path) =
            (root.join(p["old"]["file"].as_str().unwrap()), root.join(p["new"]["file"].as_str().unwrap()));
        if !old_path.is_file() || !new_path.is_file() {
            continue;
        }
        let (old, new) = (yaml(&old_path), yaml(&new_path));
        // Only pairs of one object (check --base pairs documents by identity).
        if old["metadata"]["name"] != new["metadata"]["name"]
            || old["kind"] != new["kind"]
            || old["kind"].is_null()
        {
            continue;
        }
        let crd_like =
            matches!(old["kind"].as_str(), Some("CustomResourceDefinition" | "CompositeResourceDefinition"));
        let variants: Vec<(&str, Value, Value)> = if crd_like {
            vec![
                ("shipped", old.clone(), new.clone()),
                ("labelled", labelled(old.clone()), labelled(new.clone())),
            ]
        } else {
            vec![("shipped", old.clone(), new.clone())]
        };
        for (how, old, new) in variants {
            std::fs::write(dir.path().join("old.yaml"), serde_json::to_string(&old).unwrap()).unwrap();
            std::fs::write(dir.path().join("new.yaml"), serde_json::to_string(&new).unwrap()).unwrap();
            let diff = exit(dir.path(), &["diff", "old.yaml", "new.yaml"]);
            if diff == 2 {
                continue; // a pair `diff` does not compare (it says so, exit 2)
            }
            let check = exit(dir.path(), &["check", "new.yaml", "--base", "old.yaml"]);
            let group = new["apiVersion"].as_str().unwrap().split('/').next().unwrap().to_string();
            let mut review = common::review("u", &group, new["kind"].as_str().unwrap(), new.clone());
            review["request"]["operation"] = json!("UPDATE");
            review["request"]["oldObject"] = old.clone();
            let subject = covenant::admission::decode(review.to_string().into_bytes()).unwrap().subject;
            let webhook = i32::from(engine.evaluate(&subject, &EmptyCluster).denied());
            pairs += 1;
            if diff == 1 {
                refused += 1;
            }
            if how == "shipped" && crd_like && diff == 0 {
                advised += 1;
            }
            if !(diff == check && check == webhook) {
                disagreements.push(format!(
                    "{id} ({how}): diff exit {diff}, check --base exit {check}, webhook denied {webhook}"
                ));
            }
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} of {pairs} disagree:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
    assert!(
        pairs >= 60 && refused >= 5 && advised >= 20,
        "{pairs} pairs, {refused} refused, {advised} advised: too few to prove agreement"
    );
    eprintln!(
        "{pairs} pairs through diff, check --base and the webhook: one verdict each ({refused} refused)"
    );
}

/// A construct at `version`, its parameters `schema`: the console fixture's ruby-service as
/// the shape, the logical name `logical`, the object name `name`.
fn construct(logical: &str, name: &str, version: &str, schema: &Value) -> Value {
    json!({
        "apiVersion": "openchoreo.dev/v1alpha1",
        "kind": "ClusterComponentType",
        "metadata": {
            "name": name,
            "labels": {"openchoreo.dev/name": logical, "openchoreo.dev/version": version},
            "annotations": {"openchoreo.dev/version": version},
        },
        "spec": {
            "workloadType": "deployment",
            "parameters": {"openAPIV3Schema": schema},
            "resources": [{"id": "deployment", "template": {
                "apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "${metadata.name}", "annotations": {
                    "openchoreo.dev/rendered-from-version": version,
                    "openchoreo.dev/rendered-from-type": logical}},
                "spec": {"replicas": 1}}}],
        },
    })
}

/// The `spec` schema of the first version both CRDs of a pair serve: what a construct's
/// parameters would carry if it had published the CRD's spec at those two releases.
fn spec_schemas(old: &Value, new: &Value) -> Option<(Value, Value)> {
    let schema = |doc: &Value, name: &Value| {
        doc["spec"]["versions"].as_array()?.iter().find(|v| &v["name"] == name).and_then(|v| {
            let spec = &v["schema"]["openAPIV3Schema"]["properties"]["spec"];
            spec.is_object().then(|| spec.clone())
        })
    };
    old["spec"]["versions"]
        .as_array()?
        .iter()
        .find_map(|v| Some((schema(old, &v["name"])?, schema(new, &v["name"])?)))
}

/// The verdict and exit of `covenant ARGS --output json` run in `dir`.
fn verdict_of(dir: &Path, args: &[&str]) -> (String, i32) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_covenant"))
        .current_dir(dir)
        .args(args)
        .args(["--output", "json"])
        .output()
        .unwrap();
    let json: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("covenant {args:?}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    (json["verdict"].as_str().unwrap_or("(none)").to_string(), out.status.code().unwrap())
}

/// Two published versions of one construct get one verdict from every face that compares
/// them: `covenant diff OLD NEW` (the two documents), `covenant diff --context DIR NAME FROM
/// TO`, the read API's `/api/v0/compare`, and the diff `covenant upgrade` plans a consumer's
/// move with — and, for a move made in place (a minor), `check NEW --base OLD` and the
/// webhook's UPDATE refuse it exactly when `diff` does. The pairs: each CRD pair of the
/// crd-history corpus re-stated as a construct whose parameters are the CRD's `spec` at the
/// two releases, published as a minor (in place) and as a major (a new object), and the
/// construct pairs of the rule fixtures and the console's platform.
#[tokio::test]
async fn published_versions_get_one_verdict_from_every_face_that_compares_them() {
    let root = common::fixtures().join("crd-history");
    let index = yaml(&root.join("index.yaml"));
    // (logical name, old, new): each a construct document.
    let mut pairs: Vec<(String, Value, Value)> = Vec::new();
    for (i, p) in index["pairs"].as_array().unwrap().iter().enumerate() {
        let (old_path, new_path) =
            (root.join(p["old"]["file"].as_str().unwrap()), root.join(p["new"]["file"].as_str().unwrap()));
        if !old_path.is_file() || !new_path.is_file() {
            continue;
        }
        let (old, new) = (yaml(&old_path), yaml(&new_path));
        if old["kind"] != "CustomResourceDefinition" || new["kind"] != "CustomResourceDefinition" {
            continue;
        }
        let Some((from, to)) = spec_schemas(&old, &new) else { continue };
        let minor = format!("pair-{i}-minor");
        pairs.push((
            minor.clone(),
            construct(&minor, &format!("{minor}-v1"), "1.0.0", &from),
            construct(&minor, &format!("{minor}-v1"), "1.1.0", &to),
        ));
        let major = format!("pair-{i}-major");
        pairs.push((
            major.clone(),
            construct(&major, &format!("{major}-v1"), "1.0.0", &from),
            construct(&major, &format!("{major}-v2"), "2.0.0", &to),
        ));
    }
    let crd_pairs = pairs.len();
    let rules = common::fixtures().join("rules");
    for (rule, base, input) in [
        ("CVN-208", rules.join("CVN-208/base.yaml"), rules.join("CVN-208/input.yaml")),
        ("CVN-409", rules.join("CVN-409/base.yaml"), rules.join("CVN-409/input.yaml")),
        ("CVN-410", rules.join("CVN-410/base.yaml"), rules.join("CVN-410/input.yaml")),
    ] {
        let (mut old, mut new) = (yaml(&base), yaml(&input));
        let logical = format!("{}-fixture", rule.to_lowercase());
        for doc in [&mut old, &mut new] {
            doc["metadata"]["labels"]["openchoreo.dev/name"] = json!(logical);
        }
        pairs.push((logical, old, new));
    }
    let console = covenant::source::parse_stream(
        &std::fs::read_to_string(common::fixtures().join("console/ruby-service.yaml")).unwrap(),
    )
    .0;
    pairs.push(("ruby-service".into(), console[0].value.clone(), console[1].value.clone()));
    assert!(crd_pairs >= 60, "{crd_pairs} re-stated pairs");

    // One platform holding every pair's two versions (a version moved in place is published
    // under another object name here, so both stand side by side), one consumer per pair.
    let platform = tempfile::tempdir().unwrap();
    let mut consumers = String::new();
    for (n, (logical, old, new)) in pairs.iter().enumerate() {
        let mut new = new.clone();
        if new["metadata"]["name"] == old["metadata"]["name"] {
            new["metadata"]["name"] = json!(format!("{}-next", old["metadata"]["name"].as_str().unwrap()));
        }
        for (side, doc) in [("old", old), ("new", &new)] {
            std::fs::write(platform.path().join(format!("{n}-{side}.json")), doc.to_string()).unwrap();
        }
        let from = old["metadata"]["annotations"]["openchoreo.dev/version"].as_str().unwrap();
        consumers.push_str(&format!(
            "---\napiVersion: openchoreo.dev/v1alpha1\nkind: Component\nmetadata: {{name: c{n}, namespace: apps}}\n\
             spec:\n  owner: {{projectName: apps}}\n  componentType: {{kind: ClusterComponentType, name: deployment/{logical}, version: \"{from}\"}}\n"
        ));
    }
    let work = tempfile::tempdir().unwrap();
    std::fs::write(work.path().join("consumers.yaml"), &consumers).unwrap();
    let context = platform.path().to_str().unwrap();

    // What `upgrade` plans for each consumer: the diff of its move.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_covenant"))
        .current_dir(work.path())
        .args(["upgrade", "consumers.yaml", "--context", context, "--output", "json", "--skip-unplannable"])
        .output()
        .unwrap();
    let plans: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("upgrade: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    let planned: std::collections::BTreeMap<String, String> = plans
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (p["consumer"].as_str().unwrap().to_string(), p["diff"]["verdict"].as_str().unwrap().to_string())
        })
        .collect();

    let cluster: std::sync::Arc<dyn covenant::cluster::ClusterView> =
        std::sync::Arc::new(covenant::cluster::OfflineCluster::load_dir(platform.path()).unwrap());
    let server =
        common::TestServer::with(common::Setup { cluster: Some(cluster), ..common::Setup::default() }).await;
    let engine = Engine::new(&covenant::config::Config::embedded().unwrap());
    let http = reqwest::Client::new();

    let (mut refused, mut in_place) = (0, 0);
    let mut disagreements = Vec::new();
    for (n, (logical, old, new)) in pairs.iter().enumerate() {
        let version = |doc: &Value| {
            doc["metadata"]["annotations"]["openchoreo.dev/version"].as_str().unwrap().to_string()
        };
        let (from, to) = (version(old), version(new));
        std::fs::write(work.path().join("old.json"), old.to_string()).unwrap();
        std::fs::write(work.path().join("new.json"), new.to_string()).unwrap();
        let files = verdict_of(work.path(), &["diff", "old.json", "new.json"]);
        // The pair's two published objects alone (the whole platform read per pair would be
        // most of this test's time).
        let own = tempfile::tempdir().unwrap();
        for side in ["old", "new"] {
            let file = format!("{n}-{side}.json");
            std::fs::copy(platform.path().join(&file), own.path().join(&file)).unwrap();
        }
        let own_context = own.path().to_str().unwrap();
        let by_name = verdict_of(work.path(), &["diff", "--context", own_context, logical, &from, &to]);
        let api: Value = http
            .get(format!("http://{}/api/v0/compare?name={logical}&from={from}&to={to}", server.api))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        let api = api["verdict"].as_str().unwrap_or("(none)").to_string();
        let upgrade =
            planned.get(&format!("Component apps/c{n}")).cloned().unwrap_or_else(|| "(not planned)".into());
        let mut faces = format!(
            "diff files {} (exit {}), diff --context {} (exit {}), /api/v0/compare {api}, upgrade {upgrade}",
            files.0, files.1, by_name.0, by_name.1
        );
        let mut agree = files == by_name && files.0 == api && files.0 == upgrade;
        if files.1 == 1 {
            refused += 1;
        }
        // A move in place is an UPDATE of one object: the webhook and check --base judge it.
        if old["metadata"]["name"] == new["metadata"]["name"] && semver_major(&from) == semver_major(&to) {
            in_place += 1;
            let check = exit(work.path(), &["check", "new.json", "--base", "old.json"]);
            let mut review = common::review("u", "openchoreo.dev", "ClusterComponentType", new.clone());
            review["request"]["operation"] = json!("UPDATE");
            review["request"]["oldObject"] = old.clone();
            let subject = covenant::admission::decode(review.to_string().into_bytes()).unwrap().subject;
            let webhook = i32::from(engine.evaluate(&subject, &EmptyCluster).denied());
            faces.push_str(&format!(", check --base exit {check}, webhook denied {webhook}"));
            agree &= files.1 == check && check == webhook;
        }
        if !agree {
            disagreements.push(format!("{logical} {from} → {to}: {faces}"));
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} of {} disagree:\n{}",
        disagreements.len(),
        pairs.len(),
        disagreements.join("\n")
    );
    assert!(
        refused >= 10 && in_place >= 30 && refused < pairs.len(),
        "{} pairs, {refused} refused, {in_place} in place: too few of each to prove agreement",
        pairs.len()
    );
    eprintln!(
        "{} construct pairs through diff, diff --context, /api/v0/compare and upgrade ({in_place} in place also through check --base and the webhook): one verdict each ({refused} refused)",
        pairs.len()
    );
}

fn semver_major(version: &str) -> &str {
    version.split('.').next().unwrap_or(version)
}
