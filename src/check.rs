//! `covenant check`'s driver: reading sources into subjects, the reader's own findings
//! (unreadable, ambiguous, not Kubernetes-style: CVN-108/109/110) and the launcher's build
//! inputs judged through the engine's policy, baselines of earlier versions, and the engine run
//! over each document — the same call the webhook makes. What it finds goes into a
//! `report::Report`, which `report` renders.

pub mod fix;
pub mod kustomize;

use crate::cluster::ClusterView;
use crate::engine::Engine;
use crate::pointer::At;
use crate::report::{Checked, Entry, Report, Unjudged};
use crate::rules::Finding;
use crate::source::{
    each_document, each_document_from, first_template_action, parse_stream, KubectlReads, Position,
    SourceDocument, TemplateAction,
};
use crate::subject::{group_of, list_items, Subject};

/// One input: a file's name and its text (`-` for stdin).
#[derive(Clone, Debug)]
pub struct Source {
    /// The name shown in output.
    pub name: String,
    /// The text.
    pub text: String,
}

/// A finding the reader (or a build input's check) made in `file`, judged by the engine as its
/// own are — rule selection, action, exemptions (`Engine::reader_finding`); one an exemption
/// lets through is said in a note naming the exemption's reason.
fn loader_finding(
    engine: &Engine,
    (file, document): (&str, Option<&serde_json::Value>),
    notes: &mut Vec<String>,
    id: &'static str,
    pointer: &str,
    args: Vec<(&'static str, String)>,
) -> Option<Finding> {
    match engine.reader_finding(document, id, pointer, args) {
        Ok(found) => found,
        Err(reason) => {
            let note = format!("{file}: {id} exempted: {reason}");
            if !notes.contains(&note) {
                notes.push(note);
            }
            None
        }
    }
}

/// The rule and arguments of a plain scalar kubectl reads as another value than covenant:
/// CVN-110 for a boolean, CVN-109 for an infinity or NaN kubectl cannot write as JSON (it
/// refuses the document).
pub(crate) fn ambiguity(a: &crate::source::AmbiguousScalar) -> (&'static str, Vec<(&'static str, String)>) {
    match a.kubectl {
        KubectlReads::Boolean(boolean) => {
            let what = if a.key { "the key" } else { "the value" };
            let args =
                vec![("what", what.to_string()), ("text", a.text.clone()), ("boolean", boolean.to_string())];
            ("CVN-110", args)
        }
        KubectlReads::NonFinite => {
            let sign = if a.text.starts_with('-') { "-" } else { "+" };
            let float = if a.text.to_ascii_lowercase().ends_with("nan") {
                "NaN".to_string()
            } else {
                format!("{sign}Inf")
            };
            let reason = format!(
                "kubectl refuses the document: it reads `{}` as the float {float}, which JSON cannot hold \
                 (error converting YAML to JSON: json: unsupported value: {float}); quote it (\"{}\") if it \
                 is text",
                a.text, a.text
            );
            ("CVN-109", vec![("reason", reason)])
        }
    }
}

/// A launcher values file (`covenant check --values`) held to the parameters its package
/// declares (`Inputs::values_problems`), each problem at its own line and column. Without a
/// package the file cannot be judged, and a note says so.
pub fn check_values(
    report: &mut Report,
    engine: &Engine,
    name: &str,
    text: &str,
    inputs: &crate::engine::Inputs,
) {
    if inputs.parameters.is_none() {
        report
            .notes
            .push(format!("{name}: values not checked: no --package declares the parameters they set"));
        return;
    }
    let (docs, syntax) = parse_stream(text);
    if let Some(e) = syntax {
        syntax_finding(report, engine, name, &e, None);
    }
    for doc in docs {
        report.documents += 1;
        report.checked.push(Checked::document(name, doc.index));
        for (id, pointer, args) in inputs.values_problems(&doc.value).unwrap_or_default() {
            if let Some(f) =
                loader_finding(engine, (name, Some(&doc.value)), &mut report.notes, id, &pointer, args)
            {
                let at = doc.positions.locate(&f.pointer);
                report.entries.push(Entry::in_file(name, doc.index, at, f));
            }
        }
    }
}

/// A launcher ClusterProfile (`covenant check --profile`) held to what its bindings bind
/// (`Inputs::profile_problems`), each problem at its own line and column.
pub fn check_profile(
    report: &mut Report,
    engine: &Engine,
    name: &str,
    text: &str,
    inputs: &crate::engine::Inputs,
    traits: &[String],
) {
    for doc in parse_stream(text).0 {
        for (id, pointer, args) in inputs.profile_problems(&doc.value, traits) {
            if let Some(f) =
                loader_finding(engine, (name, Some(&doc.value)), &mut report.notes, id, &pointer, args)
            {
                let at = doc.positions.locate(&f.pointer);
                let entry = Entry::in_file(name, doc.index, at, f);
                report.entries.push(Entry { kind: Some("ClusterProfile".into()), ..entry });
            }
        }
    }
}

/// CVN-109 for text that stops being YAML, where it stops — or, where a template action
/// begins a node at or before that place, for template source (a Helm chart's templates),
/// at the action, saying how to check it; whether it was reported.
fn syntax_finding(
    report: &mut Report,
    engine: &Engine,
    name: &str,
    e: &crate::source::SyntaxError,
    template: Option<(TemplateAction, Option<Chart>)>,
) -> bool {
    let (reason, at) = match template {
        Some((action, chart)) => {
            let how = match chart {
                Some((dir, Some(name))) => format!(
                    "render the chart first (`helm template {dir} | covenant check -`), or leave it \
                     out (`--exclude {name}`)"
                ),
                Some((dir, None)) => {
                    format!("render the chart first (`helm template {dir} | covenant check -`)")
                }
                None => "render the templates first (`helm template CHART | covenant check -`), or \
                         leave them out (`--exclude templates`)"
                    .to_string(),
            };
            let reason = format!(
                "a template, not a manifest: `{}` is a template action (Helm's, or another Go \
                 template's), which YAML cannot read ({}); covenant checks manifests as they are \
                 applied: {how}",
                action.text,
                e.what(),
            );
            (reason, action.at)
        }
        None => (e.what(), e.at),
    };
    let Some(f) =
        loader_finding(engine, (name, None), &mut report.notes, "CVN-109", "", vec![("reason", reason)])
    else {
        return false;
    };
    report.entries.push(Entry::in_file(name, e.documents_before, at, f));
    true
}

/// A Helm chart's folder, as named on the command line (`.` for the working folder), and its
/// name when it has one.
type Chart = (String, Option<String>);

/// The first template action that begins a node in an input, up to line `until`; and, for a
/// file of a Helm chart, the chart: the folder of the nearest `Chart.yaml` above the file, a
/// few levels up at most.
fn template_action(input: &Input, until: usize) -> Option<(TemplateAction, Option<Chart>)> {
    use std::io::BufRead;
    match input {
        Input::Read(source) => Some((first_template_action(source.text.lines(), until)?, None)),
        Input::File(path) => {
            let file = std::io::BufReader::new(std::fs::File::open(path).ok()?);
            let action = first_template_action(file.lines().map_while(Result::ok), until)?;
            let chart = path.ancestors().skip(1).take(4).find(|dir| dir.join("Chart.yaml").is_file());
            let named = chart.map(|dir| match dir.file_name() {
                Some(name) => (dir.display().to_string(), Some(name.to_string_lossy().into_owned())),
                None => (".".to_string(), None),
            });
            Some((action, named))
        }
    }
}

/// Whether a document is one kubectl applies: it names an `apiVersion`, of a group other
/// than the launcher's (which the launcher reads) and covenant's own (its config, registries,
/// dialects and baselines, which covenant reads).
fn applied_by_kubectl(doc: &serde_json::Value) -> bool {
    use crate::families::launcher::{COVENANT_GROUP, GROUP};
    group_of(doc).is_some_and(|group| !matches!(group, GROUP | COVENANT_GROUP))
}

/// Whether a document is read by go-yaml: kubectl applies it, or the launcher reads it (a
/// document naming an `apiVersion` that is not covenant's own).
fn read_by_go_yaml(doc: &serde_json::Value) -> bool {
    group_of(doc).is_some_and(|group| group != crate::families::launcher::COVENANT_GROUP)
}

/// Where the readers a file is for read it otherwise than YAML: in a file kubectl reads,
/// CVN-109 at a separator line it refuses (it applies nothing of the file) and at a document
/// it never reads (one after an end marker with no `---` between them); in a file go-yaml reads
/// (kubectl's or the launcher's), at a tab it refuses (`tab`). Each is a finding of the
/// document it is in or begins.
fn split_findings(
    report: &mut Report,
    engine: &Engine,
    name: &str,
    split: crate::source::KubectlSplit,
    tab: Option<crate::source::RefusedTab>,
    starts: &[(usize, usize)],
) {
    use crate::source::RefusedTab;
    let mut found = Vec::new();
    if let Some(tab) = tab {
        let (where_, said) = match tab {
            RefusedTab::LineStart { said, .. } => {
                ("at the start of a line (even one of blanks or a comment)", said)
            }
            RefusedTab::AfterComplexKey { indicator: '?', .. } => {
                ("after a complex key's `?`", "found character that cannot start any token")
            }
            RefusedTab::AfterComplexKey { .. } => (
                "after the `:` of a complex key's value (a `:` that begins its line)",
                "found character that cannot start any token",
            ),
            RefusedTab::AfterDash(_) => {
                ("after a sequence entry's `-`", "found character that cannot start any token")
            }
            RefusedTab::Indentation { said, .. } => ("in a line's indentation (after its spaces)", said),
        };
        found.push((
            tab.at(),
            format!(
                "go-yaml (kubectl's reader and the launcher's) refuses this tab: {where_} only spaces may \
                 come outside a quoted string ({said}); write spaces"
            ),
        ));
    }
    if let Some((at, text)) = split.refused_separator {
        found.push((
            at,
            format!(
                "kubectl refuses this line (invalid Yaml document separator: {text}): only a comment may \
                 follow `---` on its line, so kubectl applies nothing of the file; begin the document on \
                 the next line"
            ),
        ));
    }
    if let Some((at, end)) = split.unread_document {
        found.push((
            at,
            format!(
                "kubectl never reads this document: no `---` line comes between it and the end marker `...` \
                 at line {end}, and kubectl reads only the first document between two `---` lines; put a \
                 `---` line before it"
            ),
        ));
    }
    for (at, reason) in found {
        let Some(f) =
            loader_finding(engine, (name, None), &mut report.notes, "CVN-109", "", vec![("reason", reason)])
        else {
            return;
        };
        // The document that begins at the place, or the last to begin before it.
        let document = starts
            .iter()
            .rev()
            .find(|(_, line)| *line <= at.line)
            .or(starts.first())
            .map_or(0, |(index, _)| *index);
        report.entries.push(Entry::in_file(name, document, at, f));
    }
}

/// A file that could not be read as text (not UTF-8): one CVN-109 finding for it, at its
/// start, and the run goes on with the other files.
pub fn unreadable_file(report: &mut Report, engine: &Engine, name: &str, reason: &str) {
    report.documents += 1;
    report.checked.push(Checked::document(name, 0));
    if let Some(f) = loader_finding(
        engine,
        (name, None),
        &mut report.notes,
        "CVN-109",
        "",
        vec![("reason", reason.to_string())],
    ) {
        report.entries.push(Entry::in_file(name, 0, Position { line: 1, column: 1 }, f));
    }
}

/// The previous versions of documents (`covenant check --base`): each document checked is
/// paired with the base document of the same identity — API group, kind, namespace and name
/// (or `schema` and name for versioned documents) — and judged as an UPDATE of it.
///
/// A complete base (a directory, or what a git ref holds under the checked paths) makes a
/// document it holds that the checked set does not a deletion, judged as a DELETE (so
/// deleting a construct version consumers still pin is reported).
#[derive(Clone, Debug, Default)]
pub struct Base {
    /// By identity, every base document that has it, with the name of its source: one
    /// identity can live in several files (a construct per environment's folder).
    docs: std::collections::HashMap<String, Vec<(String, serde_json::Value)>>,
    complete: bool,
    /// Plain scalars of the base's documents that kubectl reads as another value than covenant
    /// (CVN-110), with the name of the source each is in: the base is compared as covenant
    /// reads it, so the caller says where it may differ from what was applied.
    pub ambiguous: Vec<(String, crate::source::AmbiguousScalar)>,
}

/// The identity a document is paired by; `None` for one that names no kind and no name.
fn identity(doc: &serde_json::Value) -> Option<String> {
    let s = |p: &str| doc.at(p).and_then(|v| v.as_str());
    let name = s("/metadata/name").or_else(|| s("/name"))?;
    let namespace = s("/metadata/namespace").unwrap_or("");
    match (s("/apiVersion"), s("/kind"), s("/schema")) {
        (Some(api), Some(kind), _) => {
            let group = crate::subject::api_group(api);
            Some(format!("{group}|{kind}|{namespace}|{name}"))
        }
        (_, _, Some(schema)) => Some(format!("schema|{schema}|{name}")),
        _ => None,
    }
}

impl Base {
    /// Index every document of the sources (a later one of the same identity wins). A source
    /// that is not YAML is an error naming it and where it stops: a base read in part would
    /// pair only some documents, and judge the rest as new without saying so.
    pub fn from_sources(sources: &[Source]) -> Result<Base, String> {
        let (mut docs, mut ambiguous) = (std::collections::HashMap::new(), Vec::new());
        for source in sources {
            let (read, error) = parse_stream(&source.text);
            if let Some(e) = error {
                return Err(format!(
                    "{}: line {} column {}: {}",
                    source.name,
                    e.at.line,
                    e.at.column,
                    e.what()
                ));
            }
            for mut doc in read {
                ambiguous
                    .extend(std::mem::take(&mut doc.ambiguous).into_iter().map(|a| (source.name.clone(), a)));
                // A list's objects are paired one by one, as they are checked.
                let objects = match list_items(&mut doc.value) {
                    Some(Ok(items)) => items.into_iter().map(|(_, item)| item).collect(),
                    _ => vec![doc.value],
                };
                for object in objects {
                    if let Some(id) = identity(&object) {
                        docs.entry(id).or_insert_with(Vec::new).push((source.name.clone(), object));
                    }
                }
            }
        }
        Ok(Base { docs, complete: false, ambiguous })
    }

    /// The base as a complete set of the previous documents: what it holds and the checked
    /// set does not was deleted.
    pub fn complete(mut self) -> Base {
        self.complete = true;
        self
    }

    /// How many documents the base holds.
    pub fn len(&self) -> usize {
        self.docs.values().map(Vec::len).sum()
    }

    /// Whether the base holds nothing.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The previous version of a document read from `file`: the base document of its
    /// identity; of several, the one whose file's path ends the most like `file`'s
    /// (`clusters/prod/x.yaml` at the ref for `./clusters/prod/x.yaml`, not
    /// `clusters/staging/x.yaml`). Several as alike as each other are `Err`, their names.
    pub fn previous(
        &self,
        doc: &serde_json::Value,
        file: &str,
    ) -> Result<Option<&serde_json::Value>, Vec<&str>> {
        let Some(all) = identity(doc).and_then(|id| self.docs.get(&id)) else { return Ok(None) };
        if let [(_, only)] = all.as_slice() {
            return Ok(Some(only));
        }
        let alike = |name: &str| {
            let (a, b) = (std::path::Path::new(name), std::path::Path::new(file));
            a.components().rev().zip(b.components().rev()).take_while(|(x, y)| x == y).count()
        };
        let best = all.iter().map(|(name, _)| alike(name)).max().unwrap_or(0);
        let mut nearest = all.iter().filter(|(name, _)| alike(name) == best);
        match (nearest.next(), nearest.next()) {
            (Some((_, value)), None) => Ok(Some(value)),
            _ => Err(all.iter().filter(|(n, _)| alike(n) == best).map(|(n, _)| n.as_str()).collect()),
        }
    }
}

/// Check every document of every source.
pub fn check(engine: &Engine, cluster: &dyn ClusterView, sources: &[Source]) -> Report {
    check_with_base(engine, cluster, sources, None)
}

/// Check every document of every source; a document with a previous version in `base` is
/// judged as an UPDATE of it, so the evolution rules run.
pub fn check_with_base(
    engine: &Engine,
    cluster: &dyn ClusterView,
    sources: &[Source],
    base: Option<&Base>,
) -> Report {
    check_each(engine, cluster, sources.iter().cloned().map(Input::Read), base, false)
}

/// Whether a document names what it is, Kubernetes-style (`apiVersion`, `kind`) or as a
/// versioned document (`schema`, with its `version`): one that names none of them (a CI
/// workflow, a Helm values file) is another tool's. A `version` alone does not make a
/// document one of covenant's (a package.json, a Compose file, a linter's config carry one),
/// unless a key beside it is a misspelt `schema` (`shema`), which is judged and named.
pub fn identifies_itself(doc: &serde_json::Value) -> bool {
    doc.as_object().is_some_and(|m| {
        ["apiVersion", "kind", "schema"].iter().any(|k| m.contains_key(*k))
            || (m.contains_key("version")
                && m.keys().any(|k| strsim::jaro_winkler(&k.to_ascii_lowercase(), "schema") >= 0.9))
    })
}

/// Whether the file holds `needle`, read in 64 KiB chunks (an unreadable file: no).
pub(crate) fn mentions(file: &std::path::Path, needle: &[u8]) -> bool {
    use std::io::Read;
    let Ok(mut f) = std::fs::File::open(file) else { return false };
    let finder = memchr::memmem::Finder::new(needle);
    let mut buf = vec![0u8; 64 << 10];
    let mut kept = 0;
    loop {
        match f.read(&mut buf[kept..]) {
            Ok(0) | Err(_) => return false,
            Ok(n) => {
                let filled = kept + n;
                if finder.find(&buf[..filled]).is_some() {
                    return true;
                }
                // Keep the tail that a match across the chunks' seam would start in.
                kept = (needle.len() - 1).min(filled);
                buf.copy_within(filled - kept..filled, 0);
            }
        }
    }
}

/// The `# Source: TEMPLATE` comments of rendered output (`helm template` writes one above each
/// document), by line: read only from an input that holds one.
fn rendered_sources(input: &Input) -> Vec<(usize, String)> {
    use std::io::BufRead;
    const MARK: &str = "# Source: ";
    let of = |lines: &mut dyn Iterator<Item = String>| -> Vec<(usize, String)> {
        lines
            .enumerate()
            .filter_map(|(i, line)| Some((i + 1, line.strip_prefix(MARK)?.trim_end().to_string())))
            .collect()
    };
    match input {
        Input::Read(source) if source.text.contains(MARK) => of(&mut source.text.lines().map(str::to_string)),
        Input::File(path) if crate::source::oversized(path).is_none() && mentions(path, MARK.as_bytes()) => {
            match std::fs::File::open(path) {
                Ok(file) => of(&mut std::io::BufReader::new(file).lines().map_while(Result::ok)),
                Err(_) => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

/// One input of `check`: text already read (stdin, a test), or a file, read when its turn
/// comes and never held whole.
#[derive(Clone, Debug)]
pub enum Input {
    /// Text in hand.
    Read(Source),
    /// A file to read.
    File(std::path::PathBuf),
}

/// Why a file cannot be read as text, found by reading it through once without keeping it:
/// a file that turns out not to be UTF-8 halfway is one finding, never a truncated document
/// judged as if it were whole.
fn unreadable(path: &std::path::Path) -> Option<String> {
    match std::fs::File::open(path) {
        Ok(file) => crate::source::ReadChars::new(file).read_through().map(str::to_string),
        Err(e) => Some(format!("cannot be read: {e}")),
    }
}

/// Where a finding is and what object it is about: what every entry of one object shares.
struct Place {
    file: String,
    document: usize,
    item: Option<usize>,
    kind: Option<String>,
    name: Option<String>,
    namespace: Option<String>,
    rendered_from: Option<String>,
}

impl Place {
    /// The place of an object: the `document`th of `file`, or an item of it; its kind (or
    /// `schema`), name and namespace read from it.
    fn of(file: &str, document: usize, item: Option<usize>, value: &serde_json::Value) -> Place {
        let str_at = |p: &str| value.at(p).and_then(|v| v.as_str()).map(str::to_string);
        Place {
            file: file.to_string(),
            document,
            item,
            kind: str_at("/kind").or_else(|| str_at("/schema")),
            name: str_at("/metadata/name").or_else(|| str_at("/name")),
            namespace: str_at("/metadata/namespace"),
            rendered_from: None,
        }
    }

    /// A finding here, at `at` in the file.
    fn entry(&self, at: Position, finding: Finding) -> Entry {
        Entry {
            file: self.file.clone(),
            document: self.document,
            item: self.item,
            at,
            kind: self.kind.clone(),
            name: self.name.clone(),
            namespace: self.namespace.clone(),
            rendered_from: self.rendered_from.clone(),
            finding,
        }
    }
}

/// What the reader noted of a document beside its value.
struct Noted {
    duplicates: Vec<crate::source::DuplicateKey>,
    ambiguous: Vec<crate::source::AmbiguousScalar>,
}

impl Noted {
    /// What was noted under `prefix` (an item of a list document), taken out.
    fn take_under(&mut self, prefix: &str) -> Noted {
        let under =
            |pointer: &str| pointer.strip_prefix(prefix).is_some_and(|p| p.is_empty() || p.starts_with('/'));
        let (duplicates, rest) =
            std::mem::take(&mut self.duplicates).into_iter().partition(|d| under(&d.pointer));
        self.duplicates = rest;
        let (ambiguous, rest) =
            std::mem::take(&mut self.ambiguous).into_iter().partition(|a| under(&a.pointer));
        self.ambiguous = rest;
        Noted { duplicates, ambiguous }
    }
}

/// One input's documents being judged into the report.
struct Judging<'r> {
    engine: &'r Engine,
    cluster: &'r dyn ClusterView,
    base: Option<&'r Base>,
    report: &'r mut Report,
    /// The identities of the objects judged, for finding what a complete base deleted.
    seen: &'r mut std::collections::HashSet<String>,
    file: &'r str,
    /// The template the document was rendered from, when rendered output says so.
    rendered_from: Option<String>,
}

impl Judging<'_> {
    /// Where an object of this document is.
    fn place(&self, index: usize, item: Option<usize>, value: &serde_json::Value) -> Place {
        Place { rendered_from: self.rendered_from.clone(), ..Place::of(self.file, index, item, value) }
    }

    /// A document: judged itself, or, a list, each of its items as an object of its own.
    fn document(&mut self, doc: SourceDocument) {
        let SourceDocument { index, mut value, positions, duplicates, ambiguous } = doc;
        let mut noted = Noted { duplicates, ambiguous };
        let Some(items) = list_items(&mut value) else {
            return self.object(index, None, value, &positions, noted);
        };
        match items {
            Ok(items) => {
                for (i, (at, item)) in items.into_iter().enumerate() {
                    let own = noted.take_under(&at);
                    self.object(index, Some((i, &at)), item, &positions, own);
                }
            }
            Err((at, reason)) => {
                // Items that are not a list cannot be judged: the document is unreadable.
                self.report.documents += 1;
                self.report.checked.push(Checked::document(self.file, index));
                let found = loader_finding(
                    self.engine,
                    (self.file, Some(&value)),
                    &mut self.report.notes,
                    "CVN-109",
                    &at,
                    vec![("reason", reason)],
                );
                if let Some(f) = found {
                    let at = positions.locate(&f.pointer);
                    self.report.entries.push(self.place(index, None, &value).entry(at, f));
                }
            }
        }
        // What the reader noted of the list itself (outside its items, or in items that
        // cannot be read) is the document's.
        if !(noted.duplicates.is_empty() && noted.ambiguous.is_empty()) {
            let list = self.place(index, None, &value);
            self.noted(&list, &noted, "", applied_by_kubectl(&value), &value);
        }
    }

    /// What the reader noted of an object, its pointers' `prefix` taken off (an item's
    /// findings point into the item): CVN-108 for a key repeated in one mapping, CVN-110 for
    /// a scalar kubectl reads as a boolean and YAML 1.2 as text, and in what kubectl applies
    /// (`by_kubectl`) CVN-109 for an infinity kubectl cannot turn into JSON.
    fn noted(
        &mut self,
        place: &Place,
        noted: &Noted,
        prefix: &str,
        by_kubectl: bool,
        document: &serde_json::Value,
    ) {
        let within = |pointer: &str| pointer.strip_prefix(prefix).unwrap_or(pointer).to_string();
        for d in &noted.duplicates {
            let args = vec![("key", d.key.clone()), ("first_line", d.first.line.to_string())];
            let found = loader_finding(
                self.engine,
                (self.file, Some(document)),
                &mut self.report.notes,
                "CVN-108",
                &within(&d.pointer),
                args,
            );
            if let Some(f) = found {
                self.report.entries.push(place.entry(d.again, f));
            }
        }
        for a in &noted.ambiguous {
            // The launcher reads the float; only kubectl cannot write it as JSON.
            if a.kubectl == KubectlReads::NonFinite && !by_kubectl {
                continue;
            }
            let (id, args) = ambiguity(a);
            let found = loader_finding(
                self.engine,
                (self.file, Some(document)),
                &mut self.report.notes,
                id,
                &within(&a.pointer),
                args,
            );
            if let Some(f) = found {
                self.report.entries.push(place.entry(a.at, f));
            }
        }
    }

    /// One object — a document, or the `item`th object of a list document, found at a
    /// pointer — judged as the webhook judges it: as an UPDATE of its previous version when the
    /// base holds one.
    fn object(
        &mut self,
        index: usize,
        item: Option<(usize, &str)>,
        value: serde_json::Value,
        positions: &crate::source::Positions,
        noted: Noted,
    ) {
        let (item, prefix) = item.map_or((None, ""), |(i, at)| (Some(i), at));
        let place = self.place(index, item, &value);
        let report = &mut *self.report;
        report.documents += 1;
        self.seen.extend(identity(&value));
        report.checked.push(Checked {
            file: self.file.to_string(),
            document: index,
            item,
            kind: place.kind.clone(),
            name: place.name.clone(),
        });
        self.noted(&place, &noted, prefix, applied_by_kubectl(&value), &value);
        let previous = match self.base.map(|b| b.previous(&value, self.file)) {
            Some(Ok(previous)) => previous,
            Some(Err(names)) => {
                let what = [place.kind.as_deref(), place.name.as_deref()].into_iter().flatten();
                let note = format!(
                    "{}: {} was judged as new: {} previous versions share its identity and none is \
                     in the same place ({}), so evolution rules did not run on it",
                    self.file,
                    what.collect::<Vec<_>>().join(" "),
                    names.len(),
                    names.join(", ")
                );
                self.report.notes.push(note);
                None
            }
            None => None,
        };
        let mut subject = Subject::from_document(value);
        // The face reads the clock, so exemptions can expire; the engine never does.
        subject.received_at = Some(std::time::SystemTime::now());
        if let Some(previous) = previous {
            subject.operation = crate::subject::Operation::Update;
            subject.old_object = Some(crate::subject::Object::from_value(previous.clone()));
        }
        let verdict = self.engine.evaluate(&subject, self.cluster);
        let report = &mut *self.report;
        let file = self.file;
        if verdict.family.is_none() && verdict.exempted.is_none() {
            report.unjudged.push(Unjudged {
                file: file.to_string(),
                document: index,
                item,
                api_version: subject.gvk.api_version(),
                kind: subject.gvk.kind.clone(),
            });
        }
        report.notes.extend(verdict.expired.iter().map(|e| format!("{file}: {e}")));
        for u in &verdict.unchecked {
            report.unchecked += 1;
            let note = format!("{file}: {u}");
            if !report.notes.contains(&note) {
                report.notes.push(note);
            }
        }
        let first = report.entries.len();
        for f in verdict.findings {
            let at = positions.locate(&format!("{prefix}{}", f.pointer));
            report.entries.push(place.entry(at, f));
        }
        // A document's findings read top to bottom, as the file does.
        report.entries[first..].sort_by_key(|e| e.at);
    }
}

/// `check_with_base` over inputs read one at a time, each document judged as it is parsed
/// and then dropped: memory follows the largest document, not the whole input.
/// With `skip_unidentified`, a document that does not identify itself is listed as skipped
/// instead of judged.
pub fn check_each(
    engine: &Engine,
    cluster: &dyn ClusterView,
    inputs: impl IntoIterator<Item = Input>,
    base: Option<&Base>,
    skip_unidentified: bool,
) -> Report {
    let mut report = Report::default();
    let mut seen = std::collections::HashSet::new();
    for input in inputs {
        let file = match &input {
            Input::Read(source) => source.name.clone(),
            Input::File(path) => path.display().to_string(),
        };
        // A UTF-16 file (it begins with its byte-order mark) is read whole, into UTF-8.
        let input = match input {
            Input::File(path) if crate::source::is_utf16(&path) => match crate::source::read_text(&path) {
                Ok(text) => Input::Read(Source { name: file.clone(), text }),
                Err(e) => {
                    unreadable_file(&mut report, engine, &file, &e.to_string());
                    continue;
                }
            },
            input => input,
        };
        if let Some(reason) = match &input {
            Input::File(path) => crate::source::oversized(path).or_else(|| unreadable(path)),
            Input::Read(_) => None,
        } {
            unreadable_file(&mut report, engine, &file, &reason);
            continue;
        }
        let held = report.documents + report.skipped.len();
        let rendered = rendered_sources(&input);
        // Whether kubectl is the file's reader (it holds a Kubernetes object), and where each
        // document starts.
        let (mut for_kubectl, mut for_go_yaml) = (false, false);
        let mut starts = Vec::new();
        let judge = |doc: SourceDocument| {
            for_kubectl |= applied_by_kubectl(&doc.value);
            for_go_yaml |= read_by_go_yaml(&doc.value);
            starts.push((doc.index, doc.positions.start().line));
            if skip_unidentified && !identifies_itself(&doc.value) {
                report.skipped.push((file.clone(), doc.index));
                return;
            }
            // Rendered output's `# Source:` comment between the document before and this one.
            let after = starts.iter().rev().nth(1).map_or(0, |(_, line)| *line);
            let before = doc.positions.start().line;
            let rendered_from = rendered
                .iter()
                .rev()
                .find(|(line, _)| *line > after && *line < before)
                .map(|(_, t)| t.clone());
            let mut judging = Judging {
                engine,
                cluster,
                base,
                report: &mut report,
                seen: &mut seen,
                file: &file,
                rendered_from,
            };
            judging.document(doc);
        };
        let (syntax, split) = match &input {
            Input::Read(source) => {
                (each_document(&source.text, judge), crate::source::kubectl_split(&source.text))
            }
            Input::File(path) => match std::fs::File::open(path) {
                // Read in pieces of whole documents: a long stream is never held whole.
                Ok(opened) => {
                    let (syntax, problem, split) = each_document_from(std::io::BufReader::new(opened), judge);
                    if let Some(reason) = problem {
                        unreadable_file(&mut report, engine, &file, &reason);
                    }
                    (syntax, split)
                }
                Err(e) => {
                    unreadable_file(&mut report, engine, &file, &format!("cannot be read: {e}"));
                    (None, Default::default())
                }
            },
        };
        if let Some(e) = syntax {
            let template = template_action(&input, e.at.line);
            if syntax_finding(&mut report, engine, &file, &e, template) {
                report.documents += 1;
            }
        }
        // A text with a tab is read again, for the tabs go-yaml refuses.
        let tab = match &input {
            _ if !(for_go_yaml && split.holds_tab) => None,
            Input::Read(source) => crate::source::go_yaml_refused_tab(|| Some(source.text.chars())),
            Input::File(path) => crate::source::go_yaml_refused_tab(|| {
                let file = std::fs::File::open(path).ok()?;
                Some(crate::source::ReadChars::new(std::io::BufReader::new(file)))
            }),
        };
        let split = if for_kubectl { split } else { crate::source::KubectlSplit::default() };
        split_findings(&mut report, engine, &file, split, tab, &starts);
        // An input named to be checked that holds nothing is said, never passed in silence.
        if report.documents + report.skipped.len() == held {
            report.empty.push(file.clone());
        }
    }
    if let Some(base) = base.filter(|b| b.complete) {
        let mut deleted: Vec<(&String, &Vec<(String, serde_json::Value)>)> =
            base.docs.iter().filter(|(id, _)| !seen.contains(*id)).collect();
        deleted.sort_by(|a, b| a.0.cmp(b.0));
        for (file, old) in deleted.into_iter().flat_map(|(_, all)| all) {
            let mut subject = Subject::from_document(old.clone());
            subject.operation = crate::subject::Operation::Delete;
            subject.old_object = subject.object.take();
            // Named as the document was when it was judged (its schema and name for a
            // versioned document that names no kind), at the top of the file it was in.
            let place = Place::of(file, 0, None, old);
            for finding in engine.evaluate(&subject, cluster).findings {
                report.entries.push(place.entry(Position { line: 1, column: 1 }, finding));
            }
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::identifies_itself;
    use serde_json::json;

    /// Other tools' files that carry a `version` are theirs; a misspelt `schema` beside a
    /// `version` is a versioned document written wrong, and judged.
    #[test]
    fn a_version_alone_does_not_identify_a_document() {
        for theirs in [
            json!({"name": "shop", "version": "1.0.0", "scripts": {}, "dependencies": {}}),
            json!({"version": "3.8", "services": {}, "volumes": {}, "networks": {}}),
            json!({"version": "2", "linters": {}, "settings": {}}),
            json!({"on": {"push": {}}, "jobs": {}}),
        ] {
            assert!(!identifies_itself(&theirs), "{theirs}");
        }
        for ours in [
            json!({"apiVersion": "v1"}),
            json!({"kind": "ConfigMap"}),
            json!({"schema": "shop.app"}),
            json!({"shema": "shop.app", "version": "1"}),
            json!({"Schema": "shop.app", "version": "1"}),
        ] {
            assert!(identifies_itself(&ours), "{ours}");
        }
    }
}
