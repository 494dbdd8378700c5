//! One fixture folder per live rule (`tests/fixtures/rules/CVN-xxx/`): a config selecting only
//! that rule, an input (with `base.yaml` for evolution rules, `context/` for cluster state), and
//! the expected text output. Adding a rule means adding a folder.

use crate::common;

use covenant::report::render_text;
use covenant::rules::{Category, Status, CATALOG};

fn run(dir: &std::path::Path) -> String {
    render_text(&common::run_rule_fixture(dir))
}

#[test]
fn every_live_rule_matches_its_fixture() {
    let root = common::fixtures().join("rules");
    let bless = std::env::var_os("COVENANT_BLESS").is_some();
    // Mutation rules write patches, not findings: tests/integration/mutation.rs proves them.
    for rule in CATALOG.iter().filter(|r| r.status == Status::Live && r.category != Category::Mutation) {
        let dir = root.join(rule.id);
        assert!(dir.is_dir(), "live rule {} has no fixture folder {}", rule.id, dir.display());
        let got = run(&dir);
        let expected_path = dir.join("expected.txt");
        if bless {
            std::fs::write(&expected_path, &got).unwrap();
        }
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_else(|_| {
            panic!("{} missing; run with COVENANT_BLESS=1 and review it", expected_path.display())
        });
        assert_eq!(got, expected, "{} output drifted", rule.id);
        // The fixture exercises its rule, and only its rule.
        let ids: Vec<&str> = got
            .lines()
            .filter_map(|l| l.split_once("error[").or_else(|| l.split_once("warning[")).map(|(_, r)| &r[..7]))
            .collect();
        assert!(!ids.is_empty(), "{} fixture produced no finding", rule.id);
        assert!(ids.iter().all(|id| *id == rule.id), "{}: other rules fired: {ids:?}", rule.id);
    }
}
