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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_suggests_near_rule_ids_first() {
        let ids = CATALOG.iter().map(|r| r.id);
        let near = crate::suggest::closest("CVN-1o1", ids);
        assert_eq!(near.first(), Some(&"CVN-101"));
    }
}
