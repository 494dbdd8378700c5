//! What a catalogue row says about a rule: its id, slug, category, default action, status,
//! message template and docs. Plain data; nothing here judges a document.

use std::fmt;
use std::str::FromStr;

/// What covenant does with a finding of a rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Action {
    /// Admission refused; `covenant check` exits 1.
    Deny,
    /// Admission warning; CI annotation.
    Warn,
    /// Logged and counted only.
    Audit,
    /// A mutation rule that writes a patch.
    Mutate,
    /// The rule does not run.
    Off,
}

impl Action {
    /// The spelling used in config files, output and metrics labels.
    pub const fn as_str(self) -> &'static str {
        match self {
            Action::Deny => "deny",
            Action::Warn => "warn",
            Action::Audit => "audit",
            Action::Mutate => "mutate",
            Action::Off => "off",
        }
    }

    /// The severity a finding at this action carries in output.
    pub const fn severity(self) -> Severity {
        match self {
            Action::Deny => Severity::Error,
            Action::Warn => Severity::Warning,
            Action::Audit | Action::Mutate | Action::Off => Severity::Info,
        }
    }

    /// Every spelling, for error messages.
    pub const ALL: [Action; 5] = [Action::Deny, Action::Warn, Action::Audit, Action::Mutate, Action::Off];
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Action {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        Action::ALL.into_iter().find(|a| a.as_str() == s).ok_or(())
    }
}

/// How loud a finding is in output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// A deny-level finding.
    Error,
    /// A warn-level finding.
    Warning,
    /// An audit-level finding.
    Info,
}

impl Severity {
    /// The spelling used in output.
    pub const fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// A group of rules, selectable as one in config.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Category {
    /// CVN-1xx: unknown fields, undeclared properties, types, consumer parameters.
    Strictness,
    /// CVN-2xx: additive-only evolution.
    Evolution,
    /// CVN-3xx: the type-name covenant.
    Naming,
    /// CVN-4xx: construct versioning and pins.
    Versioning,
    /// CVN-5xx: rules that write patches.
    Mutation,
    /// CVN-9xx: the engine itself.
    Engine,
}

impl Category {
    /// Every category.
    pub const ALL: [Category; 6] = [
        Category::Strictness,
        Category::Evolution,
        Category::Naming,
        Category::Versioning,
        Category::Mutation,
        Category::Engine,
    ];

    /// The spelling used in config files and output.
    pub const fn as_str(self) -> &'static str {
        match self {
            Category::Strictness => "strictness",
            Category::Evolution => "evolution",
            Category::Naming => "naming",
            Category::Versioning => "versioning",
            Category::Mutation => "mutation",
            Category::Engine => "engine",
        }
    }
}

impl FromStr for Category {
    type Err = ();
    fn from_str(s: &str) -> Result<Self, ()> {
        Category::ALL.into_iter().find(|c| c.as_str() == s).ok_or(())
    }
}

/// Whether a rule is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Built and tested; it runs when selected.
    Live,
    /// In the catalogue so its id is reserved and config may name it, but not built yet:
    /// selecting it has no effect, and `covenant rules` says so.
    Planned,
}

impl Status {
    /// The spelling used in output.
    pub const fn as_str(self) -> &'static str {
        match self {
            Status::Live => "live",
            Status::Planned => "planned",
        }
    }
}

/// One row of the catalogue.
#[derive(Debug)]
pub struct RuleMeta {
    /// `CVN-` and three digits.
    pub id: &'static str,
    /// kebab-case name.
    pub slug: &'static str,
    /// The group it belongs to.
    pub category: Category,
    /// The action when config says nothing.
    pub default_action: Action,
    /// Built or planned.
    pub status: Status,
    /// One line, starting "Checks that …" (or what a mutation does).
    pub summary: &'static str,
    /// Message template with named `{placeholders}`.
    pub message: &'static str,
    /// Fix hint template, may be empty.
    pub help: &'static str,
    /// Markdown docs for `covenant explain`; empty for planned rules.
    pub docs: &'static str,
}

impl RuleMeta {
    /// The placeholder names in the message and help templates, in order of appearance.
    pub fn placeholders(&self) -> Vec<&'static str> {
        let mut names = Vec::new();
        for template in [self.message, self.help] {
            for name in template_names(template) {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
        }
        names
    }
}

/// The `{name}` placeholders of a template.
pub fn template_names(template: &'static str) -> impl Iterator<Item = &'static str> {
    template.split('{').skip(1).filter_map(|rest| rest.split_once('}').map(|(name, _)| name))
}

/// Render a template, replacing each `{name}` with its argument. A placeholder with no
/// argument is left as written, so a missing argument is visible rather than silent.
pub fn render(template: &str, args: &[(&'static str, String)]) -> String {
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) => {
                let name = &after[..close];
                match args.iter().find(|(n, _)| *n == name) {
                    Some((_, value)) => out.push_str(value),
                    None => {
                        out.push('{');
                        out.push_str(name);
                        out.push('}');
                    }
                }
                rest = &after[close + 1..];
            }
            None => {
                out.push_str(&rest[open..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_fills_named_placeholders_and_keeps_missing_ones_visible() {
        let args = [("a", "1".to_string())];
        assert_eq!(render("x {a} y {b} z", &args), "x 1 y {b} z");
        assert_eq!(render("no braces", &args), "no braces");
        assert_eq!(render("open { only", &args), "open { only");
    }

    #[test]
    fn template_names_lists_placeholders() {
        let names: Vec<_> = template_names("a {x} b {y}{z}").collect();
        assert_eq!(names, ["x", "y", "z"]);
    }
}
