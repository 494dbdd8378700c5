//! Nothing panics on input: every corpus review and every fixture document, truncated at
//! many points and with bytes flipped, goes through the review decoder, the YAML reader and
//! the engine, and each either succeeds or says why. Deterministic (a fixed xorshift seed),
//! so a failure reproduces.

use crate::common;

use covenant::check::{check, Source};
use covenant::cluster::EmptyCluster;
use covenant::engine::Engine;

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Truncations and single-byte corruptions of `bytes`.
fn variants(bytes: &[u8], rng: &mut XorShift, count: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for i in 0..count {
        let mut v = bytes.to_vec();
        if v.is_empty() {
            break;
        }
        let at = (rng.next() as usize) % v.len();
        match i % 3 {
            0 => v.truncate(at),
            1 => {
                const BYTES: &[u8] = b"{}[]\",:\\ 0x\x00\xff";
                v[at] = BYTES[(rng.next() as usize) % BYTES.len()];
            }
            _ => {
                let len = (rng.next() as usize % 16).min(v.len() - at);
                let dup: Vec<u8> = v[at..at + len].to_vec();
                v.splice(at..at, dup);
            }
        }
        out.push(v);
    }
    out
}

#[test]
fn the_review_decoder_and_engine_never_panic_on_mangled_reviews() {
    let engine = Engine::new(&common::versioned_config());
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let mut decoded = 0;
    for path in common::corpus_reviews() {
        let bytes = std::fs::read(&path).unwrap();
        for v in variants(&bytes, &mut rng, 200) {
            match covenant::admission::decode(v.clone()) {
                Ok(review) => {
                    decoded += 1;
                    let verdict = engine.evaluate(&review.subject, &EmptyCluster);
                    let _ = covenant::admission::respond(&review.uid, &verdict, &[]);
                }
                Err(e) => assert!(!e.to_string().is_empty()),
            }
        }
    }
    assert!(decoded > 0, "no variant decoded: the mutations are all fatal, the test is too weak");
}

#[test]
fn the_yaml_reader_and_check_never_panic_on_mangled_documents() {
    let engine = Engine::new(&common::versioned_config());
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    let mut inputs = Vec::new();
    for dir in ["versioned/docs", "rules", "launcher/examples", "../../deploy"] {
        for path in covenant::source::discover(&common::fixtures().join(dir)).unwrap() {
            inputs.push(std::fs::read(path).unwrap());
        }
    }
    for bytes in inputs {
        for v in variants(&bytes, &mut rng, 150) {
            let text = String::from_utf8_lossy(&v).into_owned();
            let report = check(&engine, &EmptyCluster, &[Source { name: "mangled".into(), text }]);
            for e in &report.entries {
                assert!(!e.finding.message.is_empty());
            }
        }
    }
}
