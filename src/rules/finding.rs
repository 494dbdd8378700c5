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
    /// Why a denial came back as a warning for a document not opted in to enforcement
    /// (`advisory (…): ` leads the message); none otherwise.
    pub advisory: Option<String>,
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
        Finding {
            rule,
            action,
            pointer,
            message,
            help,
            args,
            bump: None,
            fingerprint,
            ratcheted: false,
            advisory: None,
        }
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

    /// The finding as an admission warning of at most `max` characters (the API server keeps
    /// 256): the rule id and the change in words first, then where (the field path, when the
    /// words do not already name it), then, for an advisory finding, how to make it refuse.
    /// What is cut to fit is the location first, then the words, never the rule id.
    pub fn warning(&self, max: usize) -> String {
        let mut change = self.message.as_str();
        if let Some(note) = &self.advisory {
            change = change.strip_prefix(note.as_str()).and_then(|c| c.strip_prefix(": ")).unwrap_or(change);
        }
        // The subject is the object being applied: kubectl's user knows which it is.
        if let Some((_, subject)) = self.args.iter().find(|(k, _)| *k == "subject") {
            change =
                change.strip_prefix(subject.as_str()).and_then(|c| c.strip_prefix(": ")).unwrap_or(change);
        }
        // The did-you-mean, as `line()` carries it.
        let hinted;
        if let Some((_, hint)) = self.args.iter().find(|(k, _)| *k == "suggestion") {
            let hint = hint.trim();
            if !hint.is_empty() && !change.contains(hint) {
                hinted = format!("{change} {hint}");
                change = &hinted;
            }
        }
        let place = field_path(&self.pointer);
        let at =
            if place.is_empty() || change.contains(&place) { String::new() } else { format!(" at {place}") };
        let tail = match &self.advisory {
            Some(note) => match note.split_once("label ") {
                Some((_, label)) => format!(" [advisory; {} to refuse]", label.trim_end_matches(')')),
                None => " [advisory]".to_string(),
            },
            None => String::new(),
        };
        let head = format!("{} ", self.rule.id);
        let fixed = head.chars().count() + tail.chars().count();
        let room = max.saturating_sub(fixed);
        // Quoted code (a CEL rule, a pattern) is what makes a change long; its start is
        // enough to tell which, and the words after it say what changed.
        let shortened;
        if change.chars().count() + at.chars().count() > room {
            shortened = shorten_quoted(change, 40);
            change = &shortened;
        }
        let (change_len, at_len) = (change.chars().count(), at.chars().count());
        let (change, at) = if change_len + at_len <= room {
            (change.to_string(), at)
        } else if change_len + 12 <= room {
            // The location's end (its last fields) is what locates; its start is the root.
            let keep = room - change_len;
            let short: String = if keep > 5 {
                let chars: Vec<char> = place.chars().collect();
                let from = chars.len().saturating_sub(keep - 5);
                format!(" at …{}", chars[from..].iter().collect::<String>())
            } else {
                String::new()
            };
            (change.to_string(), short)
        } else {
            let cut: String = change.chars().take(room.saturating_sub(1)).collect();
            (format!("{cut}…"), String::new())
        };
        format!("{head}{change}{at}{tail}")
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

/// `text` with every backtick-quoted span longer than `keep` characters cut to its first
/// `keep` and an ellipsis.
fn shorten_quoted(text: &str, keep: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, part) in text.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 1 && part.chars().count() > keep {
            out.extend(part.chars().take(keep));
            out.push('…');
        } else {
            out.push_str(part);
        }
    }
    out
}

/// The shortest locating path of a pointer: inside an OpenAPI schema, the field path it
/// describes (`/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/port` is
/// `spec.port` of the version, `items` a `[*]`); elsewhere the pointer itself.
fn field_path(pointer: &str) -> String {
    let Some((_, inside)) = pointer.split_once("/openAPIV3Schema") else { return pointer.to_string() };
    let mut out = String::new();
    let mut parts = inside.split('/').filter(|p| !p.is_empty()).peekable();
    while let Some(part) = parts.next() {
        match part {
            "properties" => {
                if let Some(name) = parts.next() {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(&name.replace("~1", "/").replace("~0", "~"));
                }
            }
            "items" | "additionalProperties" => out.push_str("[*]"),
            other => {
                out.push('/');
                out.push_str(other);
            }
        }
    }
    out
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
    fn a_warning_leads_with_the_change_and_fits_256_characters() {
        let rule = lookup("CVN-205").unwrap();
        let deep = format!("/spec/versions/0/schema/openAPIV3Schema{}", "/properties/level".repeat(40));
        let subject = "CustomResourceDefinition widgets.example.com version v1".to_string();
        let mut f = Finding::new(
            rule,
            Action::Warn,
            deep.clone(),
            vec![("subject", subject.clone()), ("detail", "maxLength lowered from 64 to 32".into())],
        );
        let note = "advisory (CustomResourceDefinition not opted in to enforcement: label covenant.dev/evolution=enforce)";
        f.message = format!("{note}: {}", f.message);
        f.advisory = Some(note.into());
        let w = f.warning(256);
        assert!(w.starts_with("CVN-205 maxLength lowered from 64 to 32 at …"), "{w}");
        assert!(w.ends_with(".level [advisory; covenant.dev/evolution=enforce to refuse]"), "{w}");
        assert!(w.chars().count() <= 256, "{w}");
        // Short enough: the whole field path.
        let shallow = Finding::new(
            rule,
            Action::Warn,
            "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/ports/items/properties/port",
            vec![("subject", subject), ("detail", "maximum lowered".into())],
        );
        assert_eq!(shallow.warning(256), "CVN-205 maximum lowered at spec.ports[*].port");
    }

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
