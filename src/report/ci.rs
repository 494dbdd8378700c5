//! The CI renderings of `covenant check`: SARIF 2.1.0 (code scanning, with the catalogue as
//! rule metadata and file regions from line and column), JUnit XML (one test case per
//! document), GitHub workflow commands (annotations on the pull request), and baselines —
//! findings recorded by rule id and fingerprint (never message text), so a repository can
//! adopt covenant gradually.

use serde::Serialize;
use serde_json::{json, Value};

use super::{Checked, Each, Entry, Report};
use crate::rules::{Action, CATALOG};

fn level(action: Action) -> &'static str {
    match action {
        Action::Deny => "error",
        Action::Warn => "warning",
        _ => "note",
    }
}

/// SARIF 2.1.0: every catalogue rule as `tool.driver.rules`, every finding as a result,
/// written as it is serialized (each result built and dropped in turn).
pub fn render_sarif(report: &Report) -> impl Serialize + '_ {
    let rules: Vec<Value> = CATALOG
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "name": r.slug,
                "shortDescription": {"text": r.summary},
                "fullDescription": {"text": r.summary},
                "help": {"text": format!("covenant explain {}", r.id), "markdown": r.docs},
                "defaultConfiguration": {"level": level(r.default_action)},
                "properties": {"category": r.category.as_str(), "status": r.status.as_str()},
            })
        })
        .collect();
    #[derive(Serialize)]
    struct Sarif<'a> {
        #[serde(rename = "$schema")]
        schema: &'static str,
        runs: [Run<'a>; 1],
        version: &'static str,
    }
    #[derive(Serialize)]
    struct Run<'a> {
        results: Each<'a, Entry>,
        tool: Value,
    }
    let tool = json!({"driver": {
        "name": "covenant",
        "version": env!("CARGO_PKG_VERSION"),
        "informationUri": "https://covenant.dev",
        "rules": rules,
    }});
    Sarif {
        schema: "https://json.schemastore.org/sarif-2.1.0.json",
        runs: [Run { results: Each(&report.entries, result), tool }],
        version: "2.1.0",
    }
}

/// One finding as a SARIF result.
fn result(e: &Entry) -> Value {
    let f = &e.finding;
    let index = CATALOG.iter().position(|r| r.id == f.rule.id).unwrap_or(0);
    let mut text = f.message.clone();
    if let Some(help) = &f.help {
        text.push_str(&format!(" ({help})"));
    }
    json!({
        "ruleId": f.rule.id,
        "ruleIndex": index,
        "level": level(f.action),
        "message": {"text": text},
        "locations": [{"physicalLocation": {
            "artifactLocation": {"uri": e.file},
            "region": {"startLine": e.at.line.max(1), "startColumn": e.at.column.max(1)}}}],
        "partialFingerprints": {"covenant/v1": f.fingerprint(), "covenant/object/v1": object_fingerprint(e)},
        "properties": {"pointer": f.pointer, "document": e.document, "item": e.item, "bump": f.bump},
    })
}

/// Text for XML 1.0: markup escaped, and the control characters XML cannot carry at all
/// replaced by U+FFFD (a finding may quote them from a document).
/// A finding's identity with the object it is about (`Entry::identity`), hashed: what a
/// baseline matches, for SARIF consumers.
fn object_fingerprint(e: &super::Entry) -> String {
    use sha2::Digest;
    let mut hash = sha2::Sha256::new();
    for part in e.identity() {
        hash.update(part.as_bytes());
        hash.update([0u8]);
    }
    hash.finalize().iter().take(16).map(|b| format!("{b:02x}")).collect()
}

fn xml(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() && !matches!(c, '\t' | '\n' | '\r') { '\u{FFFD}' } else { c })
        .collect::<String>()
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&apos;")
}

/// JUnit XML: one test case per document; a deny-level finding fails it, warnings go to its
/// system-out, and a document no rule concerns is skipped, saying why.
pub fn render_junit(report: &Report) -> String {
    use std::collections::{BTreeMap, HashMap};
    let mut cases = String::new();
    let mut failures = 0;
    // Each document's (or list item's) findings, found once (a run of many stays linear).
    type At<'a> = (&'a str, usize, Option<usize>);
    let mut by_document: BTreeMap<At<'_>, Vec<&crate::report::Entry>> = BTreeMap::new();
    for e in &report.entries {
        by_document.entry((e.file.as_str(), e.document, e.item)).or_default().push(e);
    }
    // Every document checked, and every document that drew a finding without being checked
    // (one that did not parse): none is left out of the suite.
    let mut documents: Vec<Checked> = report.checked.clone();
    let checked: std::collections::HashSet<At<'_>> =
        report.checked.iter().map(|c| (c.file.as_str(), c.document, c.item)).collect();
    for (at, entries) in &by_document {
        if !checked.contains(at) {
            let (kind, name) = (entries[0].kind.clone(), entries[0].name.clone());
            documents.push(Checked { file: at.0.to_string(), document: at.1, item: at.2, kind, name });
        }
    }
    let unjudged: HashMap<At<'_>, String> =
        report.unjudged.iter().map(|u| ((u.file.as_str(), u.document, u.item), u.what())).collect();
    let n = documents.len();
    for Checked { file, document, item, kind, name } in &documents {
        let at = (file.as_str(), *document, *item);
        let of: &[&crate::report::Entry] = by_document.get(&at).map(Vec::as_slice).unwrap_or_default();
        let item = item.map(|i| format!(", item {i}")).unwrap_or_default();
        let title = format!(
            "{} {} (document {document}{item})",
            kind.as_deref().unwrap_or("document"),
            name.as_deref().unwrap_or("-"),
        );
        cases.push_str(&format!("    <testcase classname=\"{}\" name=\"{}\">\n", xml(file), xml(&title)));
        let denied: Vec<_> = of.iter().filter(|e| e.finding.action == Action::Deny).collect();
        if !denied.is_empty() {
            failures += 1;
            let first = &denied[0].finding;
            let body: Vec<String> = denied
                .iter()
                .map(|e| {
                    format!(
                        "{}:{}:{}: {} {}",
                        e.file, e.at.line, e.at.column, e.finding.rule.id, e.finding.message
                    )
                })
                .collect();
            cases.push_str(&format!(
                "      <failure type=\"{}\" message=\"{}\">{}</failure>\n",
                first.rule.id,
                xml(&format!("{} violation(s): {}", denied.len(), first.message)),
                xml(&body.join("\n"))
            ));
        }
        let other: Vec<String> = of
            .iter()
            .filter(|e| e.finding.action != Action::Deny)
            .map(|e| format!("{} {}: {}", e.finding.action, e.finding.rule.id, e.finding.message))
            .collect();
        if !other.is_empty() {
            cases.push_str(&format!("      <system-out>{}</system-out>\n", xml(&other.join("\n"))));
        }
        if let Some(what) = unjudged.get(&at) {
            cases.push_str(&format!(
                "      <skipped message=\"{}\"/>\n",
                xml(&format!("no rule concerns {what}"))
            ));
        }
        cases.push_str("    </testcase>\n");
    }
    let skipped = report.unjudged.len();
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"covenant\" tests=\"{n}\" failures=\"{failures}\" skipped=\"{skipped}\">\n  <testsuite name=\"covenant check\" tests=\"{n}\" failures=\"{failures}\" errors=\"0\" skipped=\"{skipped}\">\n{cases}  </testsuite>\n</testsuites>\n"
    )
}

fn escape_data(s: &str) -> String {
    s.replace('%', "%25").replace('\r', "%0D").replace('\n', "%0A")
}

fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// GitHub Actions workflow commands: `::error file=…,line=…,col=…,title=…::message`.
pub fn render_github(report: &Report) -> String {
    let mut out = String::new();
    for e in &report.entries {
        let f = &e.finding;
        let command = match f.action {
            Action::Deny => "error",
            Action::Warn => "warning",
            _ => "notice",
        };
        out.push_str(&format!(
            "::{command} file={},line={},col={},title={}::{}\n",
            escape_property(&e.file),
            e.at.line.max(1),
            e.at.column.max(1),
            escape_property(&format!("{} {}", f.rule.id, f.rule.slug)),
            escape_data(&format!("{} ({})", f.message, f.help.as_deref().unwrap_or(""))),
        ));
    }
    // What the run says besides findings (a judgement not checked for want of cluster state,
    // an expired exemption, an input that held nothing): annotated too, never only in a log.
    for note in report.all_notes() {
        out.push_str(&format!("::warning title=covenant::{}\n", escape_data(&note)));
    }
    out.push_str(&report.summary());
    out.push('\n');
    out
}

/// The members of a baseline record that name a finding, in `Entry::identity` order.
const IDENTITY: [&str; 6] = ["rule", "fingerprint", "file", "kind", "namespace", "name"];

/// How a baseline names a checked file: relative to the folder the baseline file is in, with
/// `/` between names, however the path was spelled on the command line (`la`, `./la`, an
/// absolute path, a run from a subfolder). `-` and what does not exist (a pipe's name) stay
/// as they are.
pub fn baseline_file(file: &str, anchor: &std::path::Path) -> String {
    match crate::source::relative_to(std::path::Path::new(file), anchor) {
        Ok(relative) => {
            relative.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
        }
        Err(_) => file.to_string(),
    }
}

/// The folder a baseline at `path` anchors its file names to.
fn anchor_of(path: &str) -> std::path::PathBuf {
    match std::path::Path::new(path).parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    }
}

/// A baseline of the report's findings, to be written at `path`: each identity (rule,
/// fingerprint, file, kind, namespace, name) once, with how many times it was found; files
/// named relative to the baseline's folder (`baseline_file`).
pub fn render_baseline(report: &Report, path: &str) -> Value {
    let anchor = anchor_of(path);
    let files: Vec<String> = report.entries.iter().map(|e| baseline_file(&e.file, &anchor)).collect();
    let mut counts: std::collections::BTreeMap<[&str; 6], usize> = std::collections::BTreeMap::new();
    for (e, file) in report.entries.iter().zip(&files) {
        let mut id = e.identity();
        id[2] = file.as_str();
        *counts.entry(id).or_default() += 1;
    }
    let findings: Vec<Value> = counts
        .into_iter()
        .map(|(id, count)| {
            let mut record = serde_json::Map::new();
            for (key, value) in IDENTITY.iter().zip(id) {
                if !value.is_empty() {
                    record.insert(key.to_string(), json!(value));
                }
            }
            record.insert("count".into(), json!(count));
            Value::Object(record)
        })
        .collect();
    json!({"apiVersion": "covenant.dev/v1alpha1", "kind": "Baseline", "findings": findings})
}

/// A baseline that could not be read.
#[derive(Debug, thiserror::Error)]
#[error("baseline {path}: {reason}")]
pub struct BaselineError {
    /// The file.
    pub path: String,
    /// Why.
    pub reason: String,
}

/// Leave out the findings a baseline records: each record hides at most `count` findings
/// (default 1) of its rule and fingerprint about the same object (file, kind, namespace,
/// name). A record without `file` (written by covenant before 0.2) matches any object.
/// Returns how many were left out.
pub fn apply_baseline(report: &mut Report, path: &str, text: &str) -> Result<usize, BaselineError> {
    let err = |reason: String| BaselineError { path: path.to_string(), reason };
    let v: Value = serde_json::from_str(text).map_err(|e| err(e.to_string()))?;
    if v.get("kind").and_then(Value::as_str) != Some("Baseline")
        || v.get("apiVersion").and_then(Value::as_str) != Some("covenant.dev/v1alpha1")
    {
        return Err(err(
            "expected apiVersion covenant.dev/v1alpha1, kind Baseline (write one with --write-baseline)"
                .into(),
        ));
    }
    let mut budget: Vec<([String; 6], usize)> = Vec::new();
    for (i, f) in v.get("findings").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let member = |k: &str| f.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        if member("rule").is_empty() || member("fingerprint").is_empty() {
            return Err(err(format!("findings[{i}] needs \"rule\" and \"fingerprint\"")));
        }
        let count = match f.get("count") {
            None => 1,
            Some(c) => match c.as_u64().and_then(|c| usize::try_from(c).ok()) {
                Some(c) => c,
                None => return Err(err(format!("findings[{i}].count: expected a whole number, found {c}"))),
            },
        };
        budget.push((IDENTITY.map(member), count));
    }
    let before = report.entries.len();
    let anchor = anchor_of(path);
    report.entries.retain(|e| {
        let file = baseline_file(&e.file, &anchor);
        let mut id = e.identity();
        id[2] = file.as_str();
        let legacy = |r: &[String; 6]| r[2].is_empty() && r[..2] == [id[0], id[1]];
        match budget.iter_mut().find(|(r, n)| *n > 0 && (r.iter().zip(id).all(|(a, b)| a == b) || legacy(r)))
        {
            Some((_, n)) => {
                *n -= 1;
                false
            }
            None => true,
        }
    });
    Ok(before - report.entries.len())
}
