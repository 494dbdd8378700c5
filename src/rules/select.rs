//! Rule selection: which rules run and with which action, as a config's `rules` section
//! says. Unknown ids and categories are errors that suggest the closest known ones.

use super::catalog::CATALOG;
use super::meta::{Action, Category, RuleMeta, Status};

/// The action of every catalogue rule, indexed by catalogue position.
#[derive(Clone, Debug)]
pub struct RuleSet {
    actions: Vec<Action>,
}

/// A rule id or a category, as written in config.
#[derive(Clone, Copy, Debug)]
pub enum Selector {
    /// One rule.
    Rule(&'static RuleMeta),
    /// Every rule of a category.
    Category(Category),
}

impl Selector {
    /// Parse `CVN-101` or `strictness`; on failure, the error text with suggestions.
    pub fn parse(word: &str) -> Result<Selector, String> {
        if let Some(rule) = super::lookup(word) {
            return Ok(Selector::Rule(rule));
        }
        if let Ok(category) = word.parse::<Category>() {
            return Ok(Selector::Category(category));
        }
        let known = CATALOG.iter().map(|r| r.id).chain(Category::ALL.iter().map(|c| c.as_str()));
        let near = crate::suggest::closest(word, known);
        let mut text = format!("unknown rule id or category \"{word}\"");
        if !near.is_empty() {
            text.push_str(&format!("; did you mean {}?", quote_list(&near)));
        } else {
            text.push_str("; `covenant rules` lists the ids");
        }
        Err(text)
    }

    /// Whether the selector names this rule (by id, or by its category).
    pub fn covers(self, rule: &RuleMeta) -> bool {
        self.matches(rule)
    }

    fn matches(self, rule: &RuleMeta) -> bool {
        match self {
            Selector::Rule(r) => r.id == rule.id,
            Selector::Category(c) => rule.category == c,
        }
    }

    /// Rules are more specific than categories: an id's action wins over its category's.
    fn specificity(self) -> u8 {
        match self {
            Selector::Rule(_) => 1,
            Selector::Category(_) => 0,
        }
    }
}

/// Quote and join words: `"a", "b"`.
pub fn quote_list(words: &[&str]) -> String {
    words.iter().map(|w| format!("\"{w}\"")).collect::<Vec<_>>().join(", ")
}

impl Default for RuleSet {
    fn default() -> Self {
        RuleSet { actions: CATALOG.iter().map(|r| r.default_action).collect() }
    }
}

impl RuleSet {
    /// Build from already-parsed selectors. `select` empty means every rule.
    pub fn build(select: &[Selector], ignore: &[Selector], actions: &[(Selector, Action)]) -> RuleSet {
        let actions_out = CATALOG
            .iter()
            .map(|rule| {
                let selected = select.is_empty() || select.iter().any(|s| s.matches(rule));
                if !selected || ignore.iter().any(|s| s.matches(rule)) {
                    return Action::Off;
                }
                actions
                    .iter()
                    .filter(|(s, _)| s.matches(rule))
                    .max_by_key(|(s, _)| s.specificity())
                    .map(|(_, a)| *a)
                    .unwrap_or(rule.default_action)
            })
            .collect();
        RuleSet { actions: actions_out }
    }

    /// The same selection with every mutation rule writing (`covenant check --fix` asks for
    /// the stamps explicitly, whatever the webhook's config leaves off).
    pub fn with_mutation(&self) -> RuleSet {
        let actions = CATALOG
            .iter()
            .zip(&self.actions)
            .map(|(rule, a)| if rule.category == super::Category::Mutation { Action::Mutate } else { *a })
            .collect();
        RuleSet { actions }
    }

    /// The configured action of a rule (by catalogue row).
    pub fn action(&self, rule: &RuleMeta) -> Action {
        super::position(rule.id).map(|i| self.actions[i]).unwrap_or(Action::Off)
    }

    /// Whether a rule runs: selected, not off, and built.
    pub fn runs(&self, rule: &RuleMeta) -> bool {
        rule.status == Status::Live && self.action(rule) != Action::Off
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::lookup;

    #[test]
    fn rule_action_overrides_category_action() {
        let set = RuleSet::build(
            &[],
            &[],
            &[
                (Selector::Category(Category::Strictness), Action::Warn),
                (Selector::parse("CVN-101").unwrap(), Action::Audit),
            ],
        );
        assert_eq!(set.action(lookup("CVN-101").unwrap()), Action::Audit);
        assert_eq!(set.action(lookup("CVN-106").unwrap()), Action::Warn);
        assert_eq!(set.action(lookup("CVN-201").unwrap()), Action::Deny);
    }

    #[test]
    fn select_limits_and_ignore_removes() {
        let set = RuleSet::build(
            &[Selector::Category(Category::Strictness)],
            &[Selector::parse("CVN-108").unwrap()],
            &[],
        );
        assert_eq!(set.action(lookup("CVN-201").unwrap()), Action::Off);
        assert_eq!(set.action(lookup("CVN-108").unwrap()), Action::Off);
        assert!(set.runs(lookup("CVN-101").unwrap()));
    }

    #[test]
    fn unknown_selector_suggests_the_nearest_id() {
        let err = Selector::parse("CVN-1011").unwrap_err();
        assert!(err.contains("did you mean \"CVN-101\""), "{err}");
    }

    #[test]
    fn planned_rules_never_run() {
        let set = RuleSet::default();
        let live = lookup("CVN-218").unwrap();
        assert!(set.runs(live));
        let planned = RuleMeta { status: Status::Planned, ..*live };
        assert!(!set.runs(&planned));
    }
}
