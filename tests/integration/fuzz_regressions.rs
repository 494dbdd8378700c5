//! Inputs the fuzzers (`make fuzz`) found crashing, replayed through the same harness the
//! fuzz targets run (`fuzz/harness.rs`), so a fixed crash stays fixed. Each lives in
//! `tests/fixtures/fuzz/<target>/`. The seed inputs of each target run too, so the harness
//! itself is shown to take real input all the way through.

use crate::common;

use crate::harness;

fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = common::fixtures().join("fuzz").join(target);
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(&dir) else { return out };
    for entry in entries {
        let path = entry.unwrap().path();
        out.push((path.display().to_string(), std::fs::read(&path).unwrap()));
    }
    out.sort();
    out
}

#[test]
fn review_inputs_found_by_the_fuzzer_do_not_crash() {
    for (_, data) in inputs("review") {
        harness::review(&data);
    }
    // A real review goes all the way through.
    let sample = std::fs::read(common::fixtures().join("admission/kube-rs/v1-create-pod-gke.json")).unwrap();
    assert!(harness::review(&sample));
}

#[test]
fn check_inputs_found_by_the_fuzzer_do_not_crash() {
    for (_, data) in inputs("check_yaml") {
        harness::check_yaml(&data);
    }
    let doc = std::fs::read(common::fixtures().join("rules/CVN-101/input.yaml")).unwrap();
    assert!(harness::check_yaml(&doc), "a document with a finding reports it");
}

#[test]
fn schema_diff_inputs_found_by_the_fuzzer_do_not_crash() {
    for (_, data) in inputs("schema_diff") {
        harness::schema_diff(&data);
    }
    let dir = common::fixtures().join("crd-history/gateway-api/gatewayclasses-standard");
    let mut pair = std::fs::read(dir.join("v1.1.1.yaml")).unwrap();
    pair.push(0);
    pair.extend(std::fs::read(dir.join("v1.2.0.yaml")).unwrap());
    assert!(harness::schema_diff(&pair), "a real CRD pair is diffed");
}
