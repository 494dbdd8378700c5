//! What each fuzz target does with its input, shared with `tests/integration/fuzz_regressions.rs` so that
//! every input a fuzzer found crashing is replayed by `cargo test` for good. Each function
//! takes arbitrary bytes and must return without panicking; what it returns is only there
//! so a caller can see the input was taken as far as it could go.

// Each fuzz target uses one of these; the regression test uses all.
#![allow(dead_code)]

use std::sync::OnceLock;

use covenant::check::{check, Source};
use covenant::cluster::EmptyCluster;
use covenant::engine::Engine;
use covenant::pointer::Location;
use covenant::schema::openapi::{
    crd_schemas, load, load_keeping, load_keeping_unknown, load_text, load_text_beside, Dialect, Keep,
};
use covenant::schema::Schema;
use covenant::subject::{Object, Operation, Subject};

fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| Engine::new(&covenant::config::Config::embedded().expect("embedded config")))
}

/// An AdmissionReview body, as the webhook takes it: decode, judge, mutate, answer.
pub fn review(data: &[u8]) -> bool {
    // The one pass over the body, reading each kind as its family asks (a CRD's version
    // schemas read into the model in that pass), reads what serde's derive reads, and nothing
    // it refuses.
    let reading = |group: &str, kind: &str| engine().reading(group, kind);
    let (one_pass, derived) = (
        covenant::admission::decode_reading(data.to_vec(), &reading),
        covenant::admission::decode_by_derive(data.to_vec()),
    );
    match (&one_pass, &derived) {
        (Ok(a), Ok(b)) => {
            let text =
                |o: &Option<covenant::subject::Object>| o.as_ref().map(|o| o.text().map(str::to_owned));
            assert_eq!((&a.uid, &a.subject.gvk, &a.subject.name), (&b.uid, &b.subject.gvk, &b.subject.name));
            assert_eq!(text(&a.subject.object), text(&b.subject.object), "the object read alike");
            assert_eq!(text(&a.subject.old_object), text(&b.subject.old_object), "the old object read alike");
        }
        (Err(_), Err(_)) => {}
        _ => panic!("the one pass and the derive disagree: {:?} / {:?}", one_pass.is_ok(), derived.is_ok()),
    }
    let Ok(review) = one_pass else { return false };
    let verdict = engine().evaluate(&review.subject, &EmptyCluster);
    let response = covenant::admission::respond(&review.uid, &verdict, &[]);
    let _ = serde_json::to_vec(&response);
    let mutation = engine().mutate(&review.subject, &EmptyCluster);
    let _ = covenant::admission::respond_mutation(&review.uid, &mutation.ops, &mutation.warnings);
    true
}

/// A file given to `covenant check`: read, judge, and rendered in every output format.
pub fn check_yaml(data: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(data) else { return false };
    // The line reader declines what it does not read; what it reads, it reads as yaml-rust2.
    if let Some(alike) = covenant::source::line_reader_agrees(text) {
        assert!(alike, "the line reader and yaml-rust2 read this text differently");
    }
    let report = check(engine(), &EmptyCluster, &[Source { name: "fuzz.yaml".into(), text: text.into() }]);
    let _ = covenant::report::render_text(&report);
    let _ = covenant::report::render_json(&report);
    let _ = covenant::report::render_sarif(&report);
    let _ = covenant::report::render_junit(&report);
    let _ = covenant::report::render_github(&report);
    !report.entries.is_empty()
}

/// Two schema documents, old and new, split at the first NUL byte: every CRD version both
/// hold is diffed, the whole documents are diffed as JSON Schema, and the pair is judged as
/// an UPDATE (the crd and xrd families, the evolution rules).
pub fn schema_diff(data: &[u8]) -> bool {
    let Some(split) = data.iter().position(|b| *b == 0) else { return false };
    let (Ok(old), Ok(new)) = (std::str::from_utf8(&data[..split]), std::str::from_utf8(&data[split + 1..]))
    else {
        return false;
    };
    // The schema reader that works on text and the loader that works on the parsed tree must
    // read any JSON text alike: the same model, or the same problems.
    let at = Location::new("", "");
    for text in [old, new] {
        if let Ok(tree) = serde_json::from_str::<serde_json::Value>(text) {
            for keep in [false, true] {
                let loaded = if keep {
                    load_keeping_unknown(&tree, &at, Dialect::OpenApi)
                } else {
                    load(&tree, &at, Dialect::OpenApi)
                };
                assert_eq!(load_text(text, &at, Dialect::OpenApi, keep), loaded, "read from text and tree");
            }
        }
    }
    // Read beside the old schema (sharing the nodes whose bytes the new one repeats), the new
    // schema is the model read alone, or the same problems.
    for keep in [false, true] {
        let described = Keep { unknown: keep, descriptions: true };
        if let Ok(twin) = load_text_beside(old, &at, described, None) {
            let beside = load_text_beside(new, &at, described, Some(&twin)).map(|p| Schema::clone(p.root()));
            assert_eq!(beside, load_text(new, &at, Dialect::OpenApi, keep), "read beside the old schema");
        }
        // Without descriptions, from text (beside the old or alone) as from the tree.
        let shape = Keep { unknown: keep, descriptions: false };
        if let Ok(tree) = serde_json::from_str::<serde_json::Value>(new) {
            let loaded = load_keeping(&tree, &at, Dialect::OpenApi, shape);
            let alone = load_text_beside(new, &at, shape, None).map(|p| Schema::clone(p.root()));
            assert_eq!(alone, loaded, "read without descriptions from text and tree");
            if let Ok(twin) = load_text_beside(old, &at, shape, None) {
                let beside = load_text_beside(new, &at, shape, Some(&twin)).map(|p| Schema::clone(p.root()));
                assert_eq!(beside, loaded, "read without descriptions beside the old schema");
            }
        }
    }
    let first = |text: &str| covenant::source::parse_stream(text).0.into_iter().next().map(|d| d.value);
    let (Some(old), Some(new)) = (first(old), first(new)) else { return false };
    let mut diffed = false;
    if let (Ok(a), Ok(b)) = (crd_schemas(&old), crd_schemas(&new)) {
        for (version, a) in &a {
            if let Some(b) = b.get(version) {
                for change in covenant::schema::diff::diff(a, b, "") {
                    let _ = covenant::rules::evolution::classify(change.kind);
                    let _ = covenant::rules::evolution::describe(&change);
                }
                diffed = true;
            }
        }
    }
    if let (Ok(a), Ok(b)) = (
        load_keeping_unknown(&old, &at, Dialect::JsonSchema),
        load_keeping_unknown(&new, &at, Dialect::JsonSchema),
    ) {
        let _ = covenant::schema::diff::diff(&a, &b, "");
        diffed = true;
    }
    let mut subject = Subject::from_document(new);
    subject.operation = Operation::Update;
    subject.old_object = Some(Object::from_value(old));
    let _ = engine().evaluate(&subject, &EmptyCluster);
    diffed
}
