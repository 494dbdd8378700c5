//! Document families: each recognises its documents and extracts and judges what the rules
//! speak of. The engine reaches a family through the dispatch table, keyed by group and kind
//! or, for versioned documents, by the top-level `schema` member; never by an if-chain.

pub mod construct;
pub mod consumer;
pub mod defined;
pub mod derived;
pub mod labels;
pub mod launcher;
pub mod loaded;
pub mod pins;
pub mod schema_bearing;
pub mod versioned;

use rustc_hash::FxHashMap;

use crate::cluster::ClusterView;
use crate::rules::{lookup, Finding, RuleSet};
use crate::subject::Subject;

/// What a family claims in the dispatch table.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Claim {
    /// Objects of this API group and kind.
    Kind {
        /// API group.
        group: String,
        /// Kind.
        kind: String,
    },
    /// Documents whose top-level `schema` member has this value.
    Schema(String),
    /// Objects of any other kind in this API group (so the family can say the kind is not
    /// one of its documents).
    Group(String),
    /// Documents with a `schema` member no other claim names (so the family can say the
    /// schema is unknown and suggest the nearest).
    AnySchema,
    /// Objects of every kind and group no other claim names, for a family that judges them
    /// against what the cluster view holds for the kind (its CRD or XRD), and declines
    /// (`Context::decline`) those it finds nothing for.
    Defined,
}

/// A document family.
pub trait Family: Send + Sync + std::fmt::Debug {
    /// The family's name as config and output spell it.
    fn name(&self) -> &'static str;
    /// Everything the family recognises.
    fn claims(&self) -> Vec<Claim>;
    /// Judge a subject the family claimed.
    fn check(&self, subject: &Subject, cx: &mut Context<'_>);
    /// Whether judging a subject costs work bounded by the subject itself: the family's rules
    /// read the subject, the configuration and the cluster view, and never load a schema the
    /// subject carries (a CRD's, a construct's), whose reading may be far more work than its
    /// size (`Engine::cost`).
    fn bounded_by_subject(&self) -> bool {
        false
    }
    /// How a review's decoding reads the object of a review this family judges: raw (the
    /// default), along a path with the members the family reads kept apart (a CRD's version
    /// schemas, `Object::skeleton`) and, when it names a reader, read into its model in that
    /// pass, or whole (a family whose judgement reads all of it), so the pass that finds the
    /// object's end does what the family would otherwise scan the object again for.
    fn reading(&self) -> crate::subject::Reading {
        crate::subject::Reading::Raw
    }
    /// What the family's mutation rules want true of the subject (nothing by default).
    fn edits(&self, _subject: &Subject, _cx: &mut Context<'_>) -> Vec<crate::mutation::Edit> {
        Vec::new()
    }
}

/// What a family writes findings into while it checks one subject.
pub struct Context<'a> {
    rules: &'a RuleSet,
    /// Cluster state, for rules that need it.
    pub cluster: &'a dyn ClusterView,
    /// What the rules that look up cluster state may spend, together.
    pub budget: Option<std::time::Duration>,
    /// What a lookup that fails does.
    pub failure_policy: crate::config::FailurePolicy,
    /// Warnings of the mutating path (what could not be stamped, and why).
    pub notes: Vec<String>,
    /// When set, nothing reported denies: a denial is lowered to a warning whose message
    /// starts with this text (an advisory CRD's evolution findings).
    pub advisory: Option<String>,
    /// Raised when the verdict is no longer waited for: long loops stop at their next turn.
    pub stop: crate::subject::Stop,
    /// What could not be checked for want of cluster state, said rather than passed silently.
    pub unchecked: Vec<String>,
    findings: Vec<Finding>,
    declined: bool,
}

impl<'a> Context<'a> {
    /// A context over the given rule selection and cluster view.
    pub fn new(rules: &'a RuleSet, cluster: &'a dyn ClusterView) -> Context<'a> {
        Context {
            rules,
            cluster,
            budget: None,
            failure_policy: crate::config::FailurePolicy::Deny,
            notes: Vec::new(),
            advisory: None,
            stop: crate::subject::Stop::default(),
            unchecked: Vec::new(),
            findings: Vec::new(),
            declined: false,
        }
    }

    /// The family found the subject is not its own after all (a `Claim::Defined` family that
    /// finds no definition for the kind): the subject stays unjudged, as if no family claimed
    /// it.
    pub fn decline(&mut self) {
        self.declined = true;
    }

    /// Whether the family declined the subject.
    pub fn declined(&self) -> bool {
        self.declined
    }

    /// Whether the rule runs; lets a family skip work for rules that are off.
    pub fn runs(&self, id: &str) -> bool {
        lookup(id).is_some_and(|r| self.rules.runs(r))
    }

    /// Report a finding of rule `id` at `pointer`, if the rule runs.
    pub fn report(
        &mut self,
        id: &'static str,
        pointer: impl Into<String>,
        args: Vec<(&'static str, String)>,
    ) {
        self.report_change(id, pointer, args, None, None);
    }

    /// Report a finding as `report` does, carrying the bump the change implies, and at most
    /// at `at_most` (a tightening a policy lets through with a warning is reported no louder
    /// than `warn`, and stays off when the config turned the rule off).
    pub fn report_change(
        &mut self,
        id: &'static str,
        pointer: impl Into<String>,
        args: Vec<(&'static str, String)>,
        bump: Option<crate::versioning::Bump>,
        at_most: Option<crate::rules::Action>,
    ) {
        let Some(rule) = lookup(id) else {
            // An id missing from the catalogue is a bug caught by the catalogue meta-test;
            // never a panic on the request path.
            tracing::error!(rule = id, "finding for a rule that is not in the catalogue");
            return;
        };
        if !self.rules.runs(rule) {
            return;
        }
        let mut action = self.rules.action(rule);
        if let Some(cap) = at_most {
            if action == crate::rules::Action::Deny && cap != crate::rules::Action::Deny {
                action = cap;
            }
        }
        let advisory = self.advisory.as_deref().filter(|_| action == crate::rules::Action::Deny);
        if advisory.is_some() {
            action = crate::rules::Action::Warn;
        }
        let mut finding = Finding::new(rule, action, pointer, args);
        if let Some(note) = advisory {
            finding.message = format!("{note}: {}", finding.message);
            finding.advisory = Some(note.to_string());
        }
        finding.bump = bump.map(|b| b.as_str());
        self.findings.push(finding);
    }

    /// A lookup `rule` needed failed with `e`: report CVN-901 under the failure policy (the
    /// message names what was looked up and why, and, when RBAC forbids it, what to grant).
    /// Returns whether the policy lets the subject through (`allow`); without any cluster
    /// state (`Offline`) nothing is reported and the answer is `None`: the rule's findings
    /// stand as they are.
    pub fn lookup_failed(&mut self, rule: &str, e: &crate::cluster::Error) -> Option<bool> {
        use crate::cluster::Error;
        let (resource, reason) = match e {
            Error::Offline { resource } => {
                // No cluster state at all: the rule's findings stand as they are, and what it
                // could not look up is said.
                let note = format!(
                    "{rule} not checked: no cluster state to look up {resource} in (check the objects it needs beside it, give them with --context DIR, or judge against a cluster)"
                );
                if !self.unchecked.contains(&note) {
                    self.unchecked.push(note);
                }
                return None;
            }
            Error::Forbidden { resource, verb, reason } => {
                let (plural, group) = resource.split_once('.').unwrap_or((resource.as_str(), ""));
                (
                    resource.clone(),
                    format!(
                        "the API server forbids covenant to {verb} {resource} ({reason}); grant the verb {verb} on resource {plural} in API group {group} to covenant's ServiceAccount (deploy/rbac.yaml)"
                    ),
                )
            }
            Error::Timeout { resource, .. } | Error::Unavailable { resource, .. } => {
                (resource.clone(), e.to_string())
            }
        };
        let allow = self.failure_policy == crate::config::FailurePolicy::Allow;
        let budget = self
            .budget
            .map(|b| humantime::format_duration(b).to_string())
            .unwrap_or_else(|| "its budget".into());
        let policy = if allow { "allow: admitted with this warning" } else { "deny" };
        let args = vec![
            ("rule", rule.to_string()),
            ("resource", resource),
            ("budget", budget),
            ("reason", reason),
            ("policy", policy.to_string()),
        ];
        self.report_change("CVN-901", "", args, None, allow.then_some(crate::rules::Action::Warn));
        Some(allow)
    }

    /// The findings reported so far.
    pub fn into_findings(self) -> Vec<Finding> {
        self.findings
    }

    /// The findings reported so far, and what could not be checked.
    pub fn into_parts(self) -> (Vec<Finding>, Vec<String>) {
        (self.findings, self.unchecked)
    }
}

/// The dispatch table: claims to families.
#[derive(Debug, Default)]
pub struct FamilyTable {
    families: Vec<Box<dyn Family>>,
    by_kind: FxHashMap<String, FxHashMap<String, usize>>,
    by_group: FxHashMap<String, usize>,
    by_schema: FxHashMap<String, usize>,
    any_schema: Option<usize>,
    defined: Option<usize>,
}

impl FamilyTable {
    /// Add a family and index its claims. A later family's claim replaces an earlier one's.
    pub fn add(&mut self, family: Box<dyn Family>) {
        let index = self.families.len();
        for claim in family.claims() {
            match claim {
                Claim::Kind { group, kind } => {
                    self.by_kind.entry(group).or_default().insert(kind, index);
                }
                Claim::Group(group) => {
                    self.by_group.insert(group, index);
                }
                Claim::Schema(s) => {
                    self.by_schema.insert(s, index);
                }
                Claim::AnySchema => self.any_schema = Some(index),
                Claim::Defined => self.defined = Some(index),
            }
        }
        self.families.push(family);
    }

    /// The family claiming objects of this group and kind (or, failing that, the group).
    pub fn by_kind(&self, group: &str, kind: &str) -> Option<&dyn Family> {
        let index = self.by_kind.get(group).and_then(|k| k.get(kind)).or_else(|| self.by_group.get(group))?;
        Some(self.families[*index].as_ref())
    }

    /// The family that judges objects no claim names against their definition, if one is on.
    pub fn defined(&self) -> Option<&dyn Family> {
        Some(self.families[self.defined?].as_ref())
    }

    /// Every (group, kind) a family claims by name.
    pub fn kinds(&self) -> Vec<(String, String)> {
        let mut out: Vec<(String, String)> = self
            .by_kind
            .iter()
            .flat_map(|(g, kinds)| kinds.keys().map(move |k| (g.clone(), k.clone())))
            .collect();
        out.sort();
        out
    }

    /// Every group a family claims, by a kind of it or whole, sorted.
    pub fn groups(&self) -> Vec<String> {
        let mut out: Vec<String> = self.by_kind.keys().chain(self.by_group.keys()).cloned().collect();
        out.sort();
        out.dedup();
        out
    }

    /// The family claiming documents with this `schema` member.
    pub fn by_schema(&self, schema: &str) -> Option<&dyn Family> {
        let index = self.by_schema.get(schema).copied().or(self.any_schema)?;
        Some(self.families[index].as_ref())
    }
}

/// Severity is derived, never declared: the declared version move from `from` to `to` must
/// cover the bump the judged `changes` imply (CVN-212) and should not exceed it (CVN-213).
/// A version that did not move while the contract changed beyond PATCH is CVN-212 too.
/// `pointer` is where the version is declared (CVN-212/213 point there); `locate` maps a
/// change to where in the document it was made (each uncovered breaking change points there).
pub fn declared_bump(
    cx: &mut Context<'_>,
    subject: &str,
    from: &semver::Version,
    to: &semver::Version,
    changes: &[crate::rules::evolution::Judged],
    pointer: &str,
    locate: &dyn Fn(&crate::rules::evolution::Judged) -> String,
) {
    use crate::versioning::Bump;
    let implied = Bump::implied(changes.iter().map(|j| j.bump));
    let declared = Bump::between(from, to);
    let breaking: Vec<String> =
        changes.iter().filter(|j| j.bump == Bump::Major).map(|j| j.message()).collect();
    let what = if breaking.is_empty() {
        changes.iter().filter(|j| j.bump == implied).map(|j| j.message()).collect::<Vec<_>>().join("; ")
    } else {
        breaking.join("; ")
    };
    let declared_text = declared.map(|b| b.as_str().to_string()).unwrap_or_else(|| "none".into());
    let args = |detail: String| {
        vec![
            ("subject", subject.to_string()),
            ("declared", declared_text.clone()),
            ("implied", implied.as_str().to_string()),
            ("detail", detail),
        ]
    };
    let too_small = match declared {
        Some(d) => d < implied,
        None => implied > Bump::Patch,
    };
    if too_small {
        cx.report_change("CVN-212", pointer, args(what), Some(implied), None);
        // Each breaking change the declared version does not cover, at its own rule.
        if declared < Some(Bump::Major) {
            for j in changes.iter().filter(|j| j.bump == Bump::Major) {
                if let Some(rule) = j.rule {
                    let args = vec![("subject", subject.to_string()), ("detail", j.message())];
                    cx.report_change(rule, locate(j), args, Some(Bump::Major), None);
                }
            }
        }
        return;
    }
    match declared {
        Some(d) if d > implied => {
            let detail =
                if changes.is_empty() { "nothing in the contract changed".to_string() } else { what };
            cx.report_change("CVN-213", pointer, args(detail), Some(implied), None);
        }
        _ => {}
    }
}
