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
