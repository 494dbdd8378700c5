//! The evolution rules' judgement of schema changes: each kind of change the diff reports
//! maps to the bump it implies and, when it breaks a consumer, the rule that refuses it.
//! MAJOR for tightening or removal, MINOR for additions and loosening, PATCH for no contract
//! change. A change the diff could not classify counts as MAJOR under CVN-220.
//!
//! Stability policies say what a breaking change costs in a family:
//! - `always` (Airframe, CRDs): tightening is refused even in v1alpha1, unless every live
//!   object already satisfies the new schema (CVN-215);
//! - `from-ga` (the launcher's formats): before a GA version a breaking change is a warning
//!   carrying the changelog hint; under a GA version it needs a new version (CVN-214);
//! - `declared-bump` (constructs): the declared semver must cover the implied bump
//!   (CVN-212/CVN-213).

use serde_json::Value;

use crate::schema::diff::{Change, ChangeKind};
use crate::versioning::Bump;

/// A family's stability policy.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stability {
    /// Tightening is breaking even before GA.
    Always,
    /// No promise before the first GA version; after it, breaking needs a new version.
    FromGa,
    /// The declared version must move as far as the change implies.
    DeclaredBump,
}

impl Stability {
    /// The spelling config uses.
    pub const fn as_str(self) -> &'static str {
        match self {
            Stability::Always => "always",
            Stability::FromGa => "from-ga",
            Stability::DeclaredBump => "declared-bump",
        }
    }

    /// Every policy, for config errors.
    pub const ALL: [Stability; 3] = [Stability::Always, Stability::FromGa, Stability::DeclaredBump];

    /// Parse the config spelling.
    pub fn parse(s: &str) -> Option<Stability> {
        Stability::ALL.into_iter().find(|p| p.as_str() == s)
    }
}

/// Whether a Kubernetes-style version name (`v1`, `v2beta1`) is a GA version.
pub fn is_ga(version: &str) -> bool {
    version.strip_prefix('v').is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
}

/// The bump a change implies and the rule that refuses it when it breaks.
pub fn classify(kind: ChangeKind) -> (Bump, Option<&'static str>) {
    use ChangeKind::*;
    match kind {
        PropertyRemoved => (Bump::Major, Some("CVN-201")),
        RequiredPropertyAdded | RequiredAdded => (Bump::Major, Some("CVN-202")),
        TypeNarrowed | TypeChanged => (Bump::Major, Some("CVN-203")),
        EnumValueRemoved | EnumIntroduced => (Bump::Major, Some("CVN-204")),
        PatternAdded | PatternChanged | FormatAdded | FormatChanged | BoundTightened | UniqueItemsAdded
        | ListTypeTightened => (Bump::Major, Some("CVN-205")),
        ValidationAdded => (Bump::Major, Some("CVN-206")),
        DefaultAdded | DefaultRemoved | DefaultChanged => (Bump::Major, Some("CVN-207")),
        NullableRemoved | ClosedToUnknownFields | IntOrStringRemoved => (Bump::Major, Some("CVN-209")),
        Unclassified => (Bump::Major, Some("CVN-220")),
        PropertyAdded
        | RequiredRemoved
        | TypeWidened
        | EnumValueAdded
        | EnumDropped
        | PatternRemoved
        | FormatRemoved
        | BoundLoosened
        | UniqueItemsRemoved
        | NullableAdded
        | OpenedToUnknownFields
        | IntOrStringAdded
        | ListTypeLoosened
        | ValidationRemoved
        | ImmutabilityLoosened => (Bump::Minor, None),
        ValidationMessageChanged | DescriptionChanged | TitleChanged | ExampleChanged | AnnotationChanged => {
            (Bump::Patch, None)
        }
    }
}

/// The readable path of a pointer (`/spec/ports/*/port` → `spec.ports[*].port`).
pub fn readable(pointer: &str) -> String {
    if pointer.is_empty() {
        return "(root)".into();
    }
    let mut out = String::with_capacity(pointer.len());
    for token in pointer.split('/').skip(1) {
        let token: std::borrow::Cow<'_, str> =
            if token.contains('~') { crate::pointer::unescape(token).into() } else { token.into() };
        if token == "*" {
            out.push_str("[*]");
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&token);
        }
    }
    out
}

fn show(v: &Option<Value>) -> String {
    match v {
        None => "none".into(),
        Some(Value::String(s)) => format!("\"{s}\""),
        Some(v) => v.to_string(),
    }
}

/// A CEL rule's text, quoted, from a rule value the diff reports.
fn rule_text(v: &Option<Value>) -> String {
    match v.as_ref().and_then(|v| v.get("rule")).and_then(Value::as_str) {
        Some(r) => format!("`{r}`"),
        None => "(unknown)".into(),
    }
}

/// What a change says, in words: `field "spec.replicas" was removed`.
pub fn describe(change: &Change) -> String {
    use ChangeKind::*;
    let field = readable(&change.pointer);
    let what = change.what.as_deref().unwrap_or("");
    let (before, after) = (show(&change.before), show(&change.after));
    match change.kind {
        PropertyAdded => format!("optional field \"{field}\" was added"),
        RequiredPropertyAdded => format!("required field \"{field}\" was added"),
        PropertyRemoved => format!("field \"{field}\" was removed"),
        RequiredAdded => format!("field \"{field}\" became required"),
        RequiredRemoved => format!("field \"{field}\" is no longer required"),
        TypeNarrowed | TypeWidened | TypeChanged => {
            format!("the type of \"{field}\" changed from {before} to {after}")
        }
        EnumValueAdded => format!("enum value {after} was added to \"{field}\""),
        EnumValueRemoved => format!("enum value {before} was removed from \"{field}\""),
        EnumIntroduced => format!("\"{field}\" was limited to the enum {after}"),
        EnumDropped => format!("the enum {before} of \"{field}\" was dropped"),
        PatternAdded | PatternChanged | PatternRemoved | FormatAdded | FormatChanged | FormatRemoved
        | BoundTightened | BoundLoosened | UniqueItemsAdded | UniqueItemsRemoved | ListTypeTightened
        | ListTypeLoosened => format!("{what} of \"{field}\" changed from {before} to {after}"),
        DefaultAdded => format!("default {after} was added to existing field \"{field}\""),
        DefaultRemoved => format!("default {before} of \"{field}\" was removed"),
        DefaultChanged => format!("default of \"{field}\" changed from {before} to {after}"),
        NullableAdded => format!("\"{field}\" became nullable"),
        NullableRemoved => format!("\"{field}\" is no longer nullable"),
        OpenedToUnknownFields => format!("\"{field}\" now keeps unknown fields ({what} {before} → {after})"),
        ClosedToUnknownFields => {
            format!("\"{field}\" no longer keeps unknown fields ({what} {before} → {after})")
        }
        IntOrStringAdded => format!("\"{field}\" became int-or-string"),
        IntOrStringRemoved => format!("\"{field}\" is no longer int-or-string"),
        ValidationAdded => format!("CEL rule {} was added on \"{field}\"", rule_text(&change.after)),
        ValidationRemoved => format!("CEL rule {} was removed from \"{field}\"", rule_text(&change.before)),
        ImmutabilityLoosened => format!(
            "immutability rule {} of \"{field}\" was loosened to {}",
            rule_text(&change.before),
            rule_text(&change.after)
        ),
        ValidationMessageChanged => {
            format!("the message of CEL rule {} on \"{field}\" changed", rule_text(&change.after))
        }
        DescriptionChanged | TitleChanged | ExampleChanged | AnnotationChanged => {
            format!("{what} of \"{field}\" changed")
        }
        Unclassified => format!("{what} of \"{field}\" changed from {before} to {after}"),
    }
}

/// Which way a custom resource's data flows through the changed field, and so what a
/// change breaks. `spec` is what users write: it breaks when it accepts less. `status` is
/// what the resource's controller writes and clients read: it breaks readers when a field
/// is removed or retyped, never when it is tightened or given a default (the controller
/// that writes it ships with the schema).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Written by users (`spec`, and every other top-level field but `status`).
    Written,
    /// Written by the controller, read by clients (`status`).
    Read,
}

impl Direction {
    /// The direction of a data pointer into a custom resource.
    pub fn of(pointer: &str) -> Direction {
        if pointer == "/status" || pointer.starts_with("/status/") {
            Direction::Read
        } else {
            Direction::Written
        }
    }

    /// The spelling output uses.
    pub const fn as_str(self) -> &'static str {
        match self {
            Direction::Written => "written",
            Direction::Read => "read",
        }
    }

    /// What the direction means, for messages.
    pub const fn explain(self) -> &'static str {
        match self {
            Direction::Written => "spec: written by users",
            Direction::Read => "status: written by its controller, read by clients",
        }
    }
}

/// The bump a change to a `status` field implies for its readers: removing or retyping a
/// field breaks them (as an output removed does); tightening, defaults and CEL rules only
/// narrow what the controller may write, which breaks no reader; additions stay MINOR.
pub fn classify_read(kind: ChangeKind) -> (Bump, Option<&'static str>) {
    use ChangeKind::*;
    match kind {
        PropertyRemoved => (Bump::Major, Some("CVN-201")),
        TypeChanged | TypeWidened => (Bump::Major, Some("CVN-203")),
        Unclassified => (Bump::Major, Some("CVN-220")),
        RequiredPropertyAdded
        | RequiredAdded
        | TypeNarrowed
        | EnumValueRemoved
        | EnumIntroduced
        | PatternAdded
        | PatternChanged
        | FormatAdded
        | FormatChanged
        | BoundTightened
        | UniqueItemsAdded
        | ListTypeTightened
        | ValidationAdded
        | DefaultAdded
        | DefaultRemoved
        | DefaultChanged
        | NullableRemoved
        | ClosedToUnknownFields
        | IntOrStringRemoved => (Bump::Patch, None),
        other => classify(other),
    }
}

/// One change with its judgement.
#[derive(Clone, Debug, PartialEq)]
pub struct Judged {
    /// The change.
    pub change: Change,
    /// The bump it implies.
    pub bump: Bump,
    /// The rule that refuses it when it breaks.
    pub rule: Option<&'static str>,
    /// For a custom resource's schema: which way data flows through the field.
    pub direction: Option<Direction>,
}

impl Judged {
    /// What it says, in words (built on demand: a large diff has thousands of PATCH rows
    /// nobody asks to read on the admission path).
    pub fn message(&self) -> String {
        let said = describe(&self.change);
        match self.direction {
            Some(Direction::Read) if self.bump == Bump::Major => {
                format!("{said} ({}; this breaks readers)", Direction::Read.explain())
            }
            Some(Direction::Read) => format!("{said} ({}; no reader breaks)", Direction::Read.explain()),
            Some(d) => format!("{said} ({})", d.explain()),
            None => said,
        }
    }
}

/// Judge every change of a diff.
pub fn judge(changes: Vec<Change>) -> Vec<Judged> {
    changes
        .into_iter()
        .map(|change| {
            let (bump, rule) = classify(change.kind);
            Judged { change, bump, rule, direction: None }
        })
        .collect()
}

/// Judge every change of a custom resource's schema (a CRD or XRD version), by direction:
/// `status` changes as `classify_read` says, everything else as `classify`.
pub fn judge_resource(changes: Vec<Change>) -> Vec<Judged> {
    changes
        .into_iter()
        .map(|change| {
            let direction = Direction::of(&change.pointer);
            let (bump, rule) = match direction {
                Direction::Read => classify_read(change.kind),
                Direction::Written => classify(change.kind),
            };
            Judged { change, bump, rule, direction: Some(direction) }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn breaking_kinds_carry_a_rule_and_the_rest_do_not() {
        use ChangeKind::*;
        for kind in [
            PropertyRemoved,
            RequiredAdded,
            TypeNarrowed,
            EnumValueRemoved,
            BoundTightened,
            ValidationAdded,
            DefaultChanged,
            NullableRemoved,
            Unclassified,
        ] {
            let (bump, rule) = classify(kind);
            assert_eq!(bump, Bump::Major, "{kind:?}");
            assert!(rule.is_some(), "{kind:?}");
        }
        for kind in [PropertyAdded, EnumValueAdded, BoundLoosened, ValidationRemoved, DescriptionChanged] {
            assert!(classify(kind).1.is_none(), "{kind:?}");
            assert!(classify(kind).0 < Bump::Major, "{kind:?}");
        }
    }

    #[test]
    fn status_breaks_readers_on_removal_and_retyping_only() {
        use ChangeKind::*;
        let change = |pointer: &str, kind| Change {
            pointer: pointer.into(),
            kind,
            what: None,
            before: None,
            after: None,
        };
        let judged = judge_resource(vec![
            change("/status/phase", EnumValueRemoved),
            change("/status/conditions", DefaultAdded),
            change("/status/ready", PropertyRemoved),
            change("/status/count", TypeChanged),
            change("/spec/mode", DefaultAdded),
            change("/status/new", PropertyAdded),
        ]);
        let got: Vec<(Bump, Option<&str>)> = judged.iter().map(|j| (j.bump, j.rule)).collect();
        assert_eq!(
            got,
            [
                (Bump::Patch, None),
                (Bump::Patch, None),
                (Bump::Major, Some("CVN-201")),
                (Bump::Major, Some("CVN-203")),
                (Bump::Major, Some("CVN-207")),
                (Bump::Minor, None),
            ]
        );
        assert!(judged[0]
            .message()
            .ends_with("(status: written by its controller, read by clients; no reader breaks)"));
        assert!(judged[2].message().ends_with("this breaks readers)"));
        assert!(judged[4].message().ends_with("(spec: written by users)"));
        assert_eq!(Direction::of("/statusCode"), Direction::Written);
    }

    #[test]
    fn readable_paths_and_ga_versions() {
        assert_eq!(readable("/spec/ports/*/port"), "spec.ports[*].port");
        assert_eq!(readable("/a~1b"), "a/b");
        assert!(is_ga("v1") && is_ga("v2") && !is_ga("v1beta1") && !is_ga("v1alpha1") && !is_ga("x"));
    }
}
