//! The rules: the catalogue (data), findings (what a rule reports) and the selection of
//! rules and actions that a config makes. Nothing here knows HTTP, files or Kubernetes.

pub mod catalog;
pub mod evolution;
pub mod finding;
pub mod meta;
pub mod naming;
pub mod select;

pub use catalog::CATALOG;
pub use finding::Finding;
pub use meta::{Action, Category, RuleMeta, Severity, Status};
pub use select::RuleSet;

/// The catalogue row of a rule id (`CVN-101`), if there is one.
pub fn lookup(id: &str) -> Option<&'static RuleMeta> {
    CATALOG.iter().find(|r| r.id.eq_ignore_ascii_case(id))
}

/// The catalogue position of a rule id; used to index per-rule tables.
pub(crate) fn position(id: &str) -> Option<usize> {
    CATALOG.iter().position(|r| r.id == id)
}

/// Up to three known words closest to `word`, nearest first, for did-you-mean messages.
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let word_lower = word.to_ascii_lowercase();
    let mut scored: Vec<(f64, &str)> = candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&word_lower, &c.to_ascii_lowercase()), c))
        .filter(|(score, _)| *score >= 0.75)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.into_iter().take(3).map(|(_, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_suggests_near_rule_ids_first() {
        let ids = CATALOG.iter().map(|r| r.id);
        let near = closest("CVN-1o1", ids);
        assert_eq!(near.first(), Some(&"CVN-101"));
    }

    #[test]
    fn closest_offers_nothing_for_unrelated_words() {
        assert!(closest("zzzzzz", ["replicas", "image"]).is_empty());
    }
}
