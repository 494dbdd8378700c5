//! Meta-tests over the rule catalogue: ids well formed, unique and sorted; every rule named
//! in DESIGN's table is present; live rules have their docs; the placeholders of every
//! finding's templates are exactly the arguments it was rendered from; docs/rules.md has not
//! drifted from the table.

use crate::common;

use std::collections::BTreeSet;

use covenant::cli::{rules_listing, RulesOutput};
use covenant::rules::{Category, Status, CATALOG};

#[test]
fn ids_are_well_formed_unique_sorted_and_in_their_category_block() {
    let mut seen = BTreeSet::new();
    for w in CATALOG.windows(2) {
        assert!(w[0].id < w[1].id, "{} before {}", w[0].id, w[1].id);
    }
    for r in CATALOG {
        assert!(seen.insert(r.id), "duplicate id {}", r.id);
        let digits = r.id.strip_prefix("CVN-").expect("CVN- prefix");
        assert!(digits.len() == 3 && digits.chars().all(|c| c.is_ascii_digit()), "{}", r.id);
        let block = match r.category {
            Category::Strictness => '1',
            Category::Evolution => '2',
            Category::Naming => '3',
            Category::Versioning => '4',
            Category::Mutation => '5',
            Category::Engine => '9',
        };
        assert!(digits.starts_with(block), "{} is not in the {:?} block", r.id, r.category);
        assert!(r.slug.chars().all(|c| c.is_ascii_lowercase() || c == '-'), "{}", r.slug);
        assert!(!r.summary.is_empty() && !r.message.is_empty(), "{}", r.id);
    }
}

#[test]
fn every_rule_of_the_design_table_is_in_the_catalogue() {
    // The ids of DESIGN.md's rule table, as shipped in the README's rule list.
    let design = [
        "CVN-101", "CVN-102", "CVN-103", "CVN-104", "CVN-105", "CVN-106", "CVN-107", "CVN-108", "CVN-109",
        "CVN-201", "CVN-202", "CVN-203", "CVN-204", "CVN-205", "CVN-206", "CVN-207", "CVN-208", "CVN-209",
        "CVN-210", "CVN-211", "CVN-212", "CVN-213", "CVN-214", "CVN-215", "CVN-216", "CVN-217", "CVN-218",
        "CVN-219", "CVN-301", "CVN-302", "CVN-303", "CVN-304", "CVN-305", "CVN-306", "CVN-401", "CVN-402",
        "CVN-403", "CVN-404", "CVN-405", "CVN-406", "CVN-407", "CVN-408", "CVN-409", "CVN-410", "CVN-411",
        "CVN-501", "CVN-502", "CVN-901",
    ];
    // covenant's own additions, each documented in its explain page.
    let added = ["CVN-110", "CVN-220"];
    let ids: Vec<&str> = CATALOG.iter().map(|r| r.id).filter(|id| !added.contains(id)).collect();
    assert_eq!(ids, design);
}

#[test]
fn live_rules_have_docs_in_the_fixed_shape() {
    for r in CATALOG.iter().filter(|r| r.status == Status::Live) {
        for section in ["## What it checks", "## Why it matters", "## Example", "## How to fix"] {
            assert!(r.docs.contains(section), "{} docs lack {section}", r.id);
        }
    }
}

#[test]
fn finding_arguments_are_exactly_the_template_placeholders() {
    let mut fired = BTreeSet::new();
    for dir in std::fs::read_dir(common::fixtures().join("rules")).unwrap() {
        let dir = dir.unwrap().path();
        let report = common::run_rule_fixture(&dir);
        for e in &report.entries {
            let f = &e.finding;
            fired.insert(f.rule.id);
            // Besides the placeholders, a finding may state its own fix (in place of the help).
            let args: BTreeSet<&str> =
                f.args.iter().map(|(n, _)| *n).filter(|n| *n != covenant::rules::finding::FIX).collect();
            let placeholders: BTreeSet<&str> = f.rule.placeholders().into_iter().collect();
            assert_eq!(args, placeholders, "{}: arguments and template placeholders differ", f.rule.id);
            // A value may quote braces (a derived-name template); a placeholder never survives.
            for p in &placeholders {
                let left = format!("{{{p}}}");
                let quoted = f.args.iter().any(|(_, v)| v.contains(&left));
                assert!(
                    quoted || !f.message.contains(&left),
                    "{}: unrendered {left} in {:?}",
                    f.rule.id,
                    f.message
                );
            }
        }
    }
    // Mutation rules write patches, not findings: tests/integration/mutation.rs proves them.
    let live: BTreeSet<&str> = CATALOG
        .iter()
        .filter(|r| r.status == Status::Live && r.category != Category::Mutation)
        .map(|r| r.id)
        .collect();
    assert_eq!(fired, live, "every live rule fires in the fixtures, and no planned one does");
}

#[test]
fn docs_rules_md_matches_the_catalogue() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules.md");
    let committed = std::fs::read_to_string(&path).unwrap();
    assert_eq!(committed, rules_listing(RulesOutput::Md), "docs/rules.md drifted: run `make docs`");
}

/// `explain` pages cite what a user can read — the README, `docs/`, the seed systems'
/// public documents by name — never the team's internal documents.
#[test]
fn explain_pages_cite_only_what_a_user_can_read() {
    for r in CATALOG.iter() {
        let page = r.docs.to_ascii_lowercase();
        for internal in ["seed", "design.md", "style.md", "anchors.md", "corpus"] {
            assert!(!page.contains(internal), "{} explain page mentions {internal:?}", r.id);
        }
    }
}
