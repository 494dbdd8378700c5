//! A finding: what one rule reports about one place in one document. Plain data; the
//! renderers in `report/` and `admission/` decide how it looks.

use std::sync::OnceLock;

use sha2::{Digest, Sha256};

use super::meta::{render, Action, RuleMeta, Severity};

/// One rule's report about one place.
#[derive(Clone, Debug)]
pub struct Finding {
    /// The rule that fired.
    pub rule: &'static RuleMeta,
    /// The action after config overrides.
    pub action: Action,
    /// RFC 6901 pointer into the document ("" for the whole document).
    pub pointer: String,
    /// The rendered message.
    pub message: String,
    /// The rendered fix hint, if the rule has one.
    pub help: Option<String>,
    /// The named arguments the message was rendered from, for JSON output.
    pub args: Vec<(&'static str, String)>,
    /// For evolution rules: the bump the change implies.
    pub bump: Option<&'static str>,
    /// `fingerprint()`, worked out when first asked for: the webhook never asks unless it
    /// ratchets an update.
    fingerprint: OnceLock<String>,
    /// Whether an UPDATE's ratchet lowered this finding from deny (the old object already
    /// carried it, or the object is being deleted).
    pub ratcheted: bool,
}

/// The argument that states the fix for one finding, overriding its rule's help.
pub const FIX: &str = "fix";

impl Finding {
    /// Build a finding for `rule` at `pointer` with the given arguments.
    pub fn new(
        rule: &'static RuleMeta,
        action: Action,
        pointer: impl Into<String>,
        args: Vec<(&'static str, String)>,
    ) -> Self {
        let pointer = pointer.into();
        let message = render(rule.message, &args);
        // A `fix` argument is the fix that applies to this finding, in place of the rule's
        // general help (a trait listed as a component is moved, not renamed).
        let help = match args.iter().find(|(k, _)| *k == FIX) {
            Some((_, fix)) => Some(fix.clone()),
            None => (!rule.help.is_empty()).then(|| render(rule.help, &args)),
        };
        let fingerprint = OnceLock::new();
        Finding { rule, action, pointer, message, help, args, bump: None, fingerprint, ratcheted: false }
    }

    /// First 12 hex digits of sha256 over id, pointer and args: what baselines match on,
    /// never the message text.
    pub fn fingerprint(&self) -> &str {
        self.fingerprint.get_or_init(|| fingerprint(self.rule.id, &self.pointer, &self.args))
    }

    /// The severity the action gives this finding.
    pub fn severity(&self) -> Severity {
        self.action.severity()
    }

    /// Lower a denial to a warning, saying why in the message (UPDATE ratcheting): the
    /// fingerprint is kept, so a baseline still matches it.
    pub fn demote(&mut self, why: &str) {
        if self.action == Action::Deny {
            self.action = Action::Warn;
            self.message = format!("{} ({why})", self.message);
            self.ratcheted = true;
        }
    }

    /// `CVN-101 /nmae: member "nmae" …`: the one-line form used in logs and summaries.
    pub fn line(&self) -> String {
        let line = if self.pointer.is_empty() {
            format!("{} {}", self.rule.id, self.message)
        } else {
            format!("{} {}: {}", self.rule.id, self.pointer, self.message)
        };
        // The did-you-mean a help line carries, for faces that show no help (the webhook's
        // status.message and warnings, the log): kubectl users get the same hint.
        match self.args.iter().find(|(k, _)| *k == "suggestion").map(|(_, v)| v.trim()) {
            Some(hint) if !hint.is_empty() && !self.message.contains(hint) => format!("{line} {hint}"),
            _ => line,
        }
    }
}

fn fingerprint(id: &str, pointer: &str, args: &[(&'static str, String)]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(id.as_bytes());
    hasher.update([0]);
    hasher.update(pointer.as_bytes());
    // The fix is wording, like the message: a baseline survives it being improved.
    for (name, value) in args.iter().filter(|(name, _)| *name != FIX) {
        hasher.update([0]);
        hasher.update(name.as_bytes());
        hasher.update([1]);
        hasher.update(value.as_bytes());
    }
    let digest = hasher.finalize();
    digest.iter().take(6).map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::lookup;

    #[test]
    fn fingerprint_ignores_message_wording_but_not_pointer() {
        let rule = lookup("CVN-109").unwrap();
        let a = Finding::new(rule, Action::Deny, "/a", vec![("reason", "x".into())]);
        let b = Finding::new(rule, Action::Deny, "/b", vec![("reason", "x".into())]);
        assert_eq!(a.fingerprint().len(), 12);
        assert_ne!(a.fingerprint(), b.fingerprint());
        assert_eq!(a.line(), "CVN-109 /a: x");
    }
}
