//! What `covenant check` found and how it is said: the report (entries with file, line and
//! column, what was checked, what was not judged, notes) and its renderings — text, the JSON
//! contract, SARIF, JUnit, GitHub annotations, baselines — and the contract diff's. The
//! reading and judging is `check.rs`'s; nothing here judges.

mod ci;
pub mod diff;

mod json;
mod text;

use crate::rules::{Action, Finding};
use crate::source::Position;

pub use ci::{apply_baseline, render_baseline, render_github, render_junit, render_sarif};
pub use json::render as render_json;
pub use text::render as render_text;

/// A list serialized one element at a time, each turned into JSON as it is written and then
/// dropped: an answer of many findings is never built whole before it is written.
pub struct Each<'a, T>(pub &'a [T], pub fn(&T) -> serde_json::Value);

impl<T> serde::Serialize for Each<'_, T> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(self.1))
    }
}

/// One finding with where it was found.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The source's name.
    pub file: String,
    /// 0-based document index in the source.
    pub document: usize,
    /// For an object of a list document, its index among the list's objects, a list within
    /// it counted as its items (the finding's pointer is then the object's own, and its line
    /// and column are in the list).
    pub item: Option<usize>,
    /// Line and column of the finding's pointer.
    pub at: Position,
    /// The document's kind (or `schema` member), if it names one.
    pub kind: Option<String>,
    /// The document's name, if it has one.
    pub name: Option<String>,
    /// The document's namespace, if it names one.
    pub namespace: Option<String>,
    /// For a document of rendered output, the template it was rendered from, as the
    /// renderer's `# Source:` comment above it names it (`helm template` writes one).
    pub rendered_from: Option<String>,
    /// The finding.
    pub finding: Finding,
}

impl Entry {
    /// A finding of a document known by its place in a file alone (one that could not be
    /// read, or before it names what it is).
    pub(crate) fn in_file(file: &str, document: usize, at: Position, finding: Finding) -> Entry {
        Entry {
            file: file.into(),
            document,
            item: None,
            at,
            kind: None,
            name: None,
            namespace: None,
            rendered_from: None,
            finding,
        }
    }

    /// What a baseline and SARIF's `partialFingerprints` know a finding by: the rule, its
    /// fingerprint, and the object it is about (file, kind, namespace, name), so a new file
    /// or object carrying an old kind of finding is a new finding.
    pub fn identity(&self) -> [&str; 6] {
        fn or(v: &Option<String>) -> &str {
            v.as_deref().unwrap_or("")
        }
        [
            self.finding.rule.id,
            self.finding.fingerprint(),
            self.file.as_str(),
            or(&self.kind),
            or(&self.namespace),
            or(&self.name),
        ]
    }
}

/// Everything `check` found.
#[derive(Clone, Debug, Default)]
pub struct Report {
    /// Findings in source order.
    pub entries: Vec<Entry>,
    /// Documents read.
    pub documents: usize,
    /// Every document checked, and every object of a list document (for per-document output
    /// such as JUnit test cases).
    pub checked: Vec<Checked>,
    /// What the run says besides findings (an exemption that expired), `file: text`.
    pub notes: Vec<String>,
    /// Judgements that needed cluster state the run did not have (each said in a note).
    pub unchecked: usize,
    /// Inputs named to be checked that held no document (empty, or only comments, `---` and
    /// null documents): each is said as a note, and a run where every input is one of these
    /// checked nothing.
    pub empty: Vec<String>,
    /// Documents left unjudged because they do not identify themselves (file, index), with
    /// `--skip-unidentified`.
    pub skipped: Vec<(String, usize)>,
    /// Documents read and identified whose kind no family judges (a Deployment, a
    /// ConfigMap). They pass because no rule concerns them, and the summary says so rather
    /// than counting them as judged.
    pub unjudged: Vec<Unjudged>,
    /// Files a kustomization among the checked files reads as other than a manifest (a
    /// patch, a generator's input): not judged as documents, and said.
    pub kustomize: Vec<ReadByKustomize>,
}

/// A file a kustomization reads: what for, and which kustomization's folder (as named).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadByKustomize {
    /// The file, as the walk named it.
    pub file: String,
    /// What the kustomization reads it as: `a patch`, `replacements`, `a generator's input`,
    /// `Helm values`, `kustomize's configuration`, `a plugin's configuration`, or `a
    /// kustomization` itself.
    pub role: &'static str,
    /// The folder of the kustomization that reads it.
    pub kustomization: String,
}

/// A document checked (or an object of a list document): where it is and what it names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked {
    /// The file.
    pub file: String,
    /// Its index in the file.
    pub document: usize,
    /// Its index among the objects of the list document holding it (a list within the list
    /// counted as its items, as kubectl flattens it).
    pub item: Option<usize>,
    /// Its kind (or `schema` member), if it names one.
    pub kind: Option<String>,
    /// Its name, if it has one.
    pub name: Option<String>,
}

impl Checked {
    /// A document that is not a list's, naming no kind and no name.
    pub(crate) fn document(file: &str, document: usize) -> Checked {
        Checked { file: file.to_string(), document, item: None, kind: None, name: None }
    }
}

/// A document no rule concerns: where it is and what it is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unjudged {
    /// The file.
    pub file: String,
    /// Its index in the file.
    pub document: usize,
    /// Its index among the objects of the list document holding it (a list within the list
    /// counted as its items, as kubectl flattens it).
    pub item: Option<usize>,
    /// Its apiVersion.
    pub api_version: String,
    /// Its kind.
    pub kind: String,
}

impl Unjudged {
    /// `apps/v1 Deployment`.
    pub fn what(&self) -> String {
        format!("{} {}", self.api_version, self.kind)
    }
}

impl Report {
    /// Findings at an action.
    pub fn count(&self, action: Action) -> usize {
        self.entries.iter().filter(|e| e.finding.action == action).count()
    }

    /// Every note of the run, as it is printed: the inputs that held no document first, then
    /// the rest in the order they were said.
    pub fn all_notes(&self) -> impl Iterator<Item = std::borrow::Cow<'_, str>> {
        self.empty_notes().map(Into::into).chain(self.notes.iter().map(|n| n.as_str().into()))
    }

    /// The notes of the inputs that held no document.
    pub fn empty_notes(&self) -> impl Iterator<Item = String> + '_ {
        self.empty.iter().map(|file| format!("{file}: {NO_DOCUMENT}"))
    }

    /// Whether any finding denies.
    pub fn denied(&self) -> bool {
        self.count(Action::Deny) > 0
    }

    /// How many documents stand at `action`: each counts where its loudest finding stands.
    pub fn documents_at(&self, action: Action) -> usize {
        let mut loudest: std::collections::BTreeMap<(&str, usize, Option<usize>), Action> =
            std::collections::BTreeMap::new();
        for e in &self.entries {
            let at = loudest.entry((e.file.as_str(), e.document, e.item)).or_insert(e.finding.action);
            if rank(e.finding.action) > rank(*at) {
                *at = e.finding.action;
            }
        }
        loudest.values().filter(|a| **a == action).count()
    }

    /// The closing line: `N document(s) checked: F denied (in D documents), F warned (in D
    /// documents), F audited`. Each number beside `denied`, `warned` and `audited` counts
    /// findings, as the JSON summary's do; the documents they are in follow, each counted
    /// where its loudest finding stands (the JSON's `documentsDenied`, …).
    pub fn summary(&self) -> String {
        let part = |action: Action, word: &str| {
            let documents = self.documents_at(action);
            match self.count(action) {
                0 => format!("0 {word}"),
                n if documents == 1 => format!("{n} {word} (in 1 document)"),
                n => format!("{n} {word} (in {documents} documents)"),
            }
        };
        let skipped = match self.skipped.len() {
            0 => String::new(),
            n => format!("; {n} skipped as not Kubernetes-style (--skip-unidentified)"),
        };
        // What could not be judged for want of cluster state is counted here too, so a
        // summary never reads as a clean pass while it is there.
        let unchecked = match self.unchecked {
            0 => String::new(),
            n => format!("; {n} judgement(s) not checked for want of cluster state (--context, --cluster)"),
        };
        format!(
            "{} document(s) checked: {}, {}, {}{skipped}{unchecked}{}{}",
            self.documents,
            part(Action::Deny, "denied"),
            part(Action::Warn, "warned"),
            part(Action::Audit, "audited"),
            self.unjudged_summary(),
            self.kustomize_summary(),
        )
    }

    /// `; 2 files kustomize reads, not applied as written (kz/prod/replicas.yaml, a patch):
    /// check what `kustomize build kz/prod` writes`, the first few named, or nothing.
    fn kustomize_summary(&self) -> String {
        const NAMED: usize = 3;
        let Some(first) = self.kustomize.first() else { return String::new() };
        let named = first_few(self.kustomize.iter().map(|k| format!("{}, {}", k.file, k.role)), NAMED, "; ");
        let builds: std::collections::BTreeSet<&str> =
            self.kustomize.iter().map(|k| k.kustomization.as_str()).collect();
        let build = match builds.len() {
            1 => format!("`kustomize build {}`", first.kustomization),
            n => format!("`kustomize build` of each of the {n} kustomizations"),
        };
        format!(
            "; {} file(s) kustomize reads, not applied as written ({named}): check what {build} writes",
            self.kustomize.len(),
        )
    }

    /// `; N of kinds no rule judges (apps/v1 Deployment, v1 ConfigMap)`, the first few kinds
    /// named, or nothing when every document was judged.
    fn unjudged_summary(&self) -> String {
        const NAMED: usize = 4;
        if self.unjudged.is_empty() {
            return String::new();
        }
        let kinds: std::collections::BTreeSet<String> = self.unjudged.iter().map(Unjudged::what).collect();
        format!(
            "; {} of kinds no rule judges ({})",
            self.unjudged.len(),
            first_few(kinds.into_iter(), NAMED, ", ")
        )
    }
}

/// The first `n` of `items` joined by `separator`, and `…` after them when there are more.
fn first_few(items: impl Iterator<Item = String>, n: usize, separator: &str) -> String {
    let mut items = items.peekable();
    let mut named: Vec<String> = items.by_ref().take(n).collect();
    if items.peek().is_some() {
        named.push("…".into());
    }
    named.join(separator)
}

/// How loud an action is, for "where a document's loudest finding stands".
fn rank(action: Action) -> u8 {
    match action {
        Action::Deny => 3,
        Action::Warn => 2,
        Action::Audit => 1,
        _ => 0,
    }
}

/// What is said of an input that holds no document.
pub(crate) const NO_DOCUMENT: &str =
    "holds no document (it is empty, or only comments, `---`, null documents and lists of no items)";
