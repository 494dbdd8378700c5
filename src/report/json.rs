//! The JSON contract of `covenant check --output json`. CI scripts parse it: changes are
//! additive only.

use serde::Serialize;
use serde_json::{json, Value};

use super::{Each, Entry, Report, Unjudged};
use crate::rules::Action;

/// The report as the JSON contract, written as it is serialized: each finding is built and
/// dropped in turn, so a run of many findings never holds its whole answer twice over.
/// Members are in the order serde_json always wrote them (sorted).
pub fn render(report: &Report) -> impl Serialize + '_ {
    #[derive(Serialize)]
    struct Contract<'a> {
        findings: Each<'a, Entry>,
        #[serde(rename = "kustomizeInputs")]
        kustomize_inputs: Value,
        notes: Vec<std::borrow::Cow<'a, str>>,
        skipped: Value,
        summary: Value,
        unjudged: Each<'a, Unjudged>,
    }
    Contract {
        findings: Each(&report.entries, finding),
        kustomize_inputs: report
            .kustomize
            .iter()
            .map(|k| json!({"file": k.file, "role": k.role, "kustomization": k.kustomization}))
            .collect(),
        notes: report.all_notes().collect(),
        skipped: report
            .skipped
            .iter()
            .map(|(file, document)| json!({"file": file, "document": document}))
            .collect(),
        summary: json!({
            "documents": report.documents,
            "denied": report.count(Action::Deny),
            "warned": report.count(Action::Warn),
            "audited": report.count(Action::Audit),
            "skipped": report.skipped.len(),
            "kustomizeInputs": report.kustomize.len(),
            "unjudged": report.unjudged.len(),
            "documentsDenied": report.documents_at(Action::Deny),
            "documentsWarned": report.documents_at(Action::Warn),
            "documentsAudited": report.documents_at(Action::Audit),
        }),
        unjudged: Each(
            &report.unjudged,
            |u| json!({"file": u.file, "document": u.document, "item": u.item, "apiVersion": u.api_version, "kind": u.kind}),
        ),
    }
}

fn finding(e: &Entry) -> Value {
    let f = &e.finding;
    json!({
        "rule": f.rule.id,
        "slug": f.rule.slug,
        "severity": f.severity().as_str(),
        "action": f.action.as_str(),
        "file": e.file,
        "document": e.document,
        "item": e.item,
        "line": e.at.line,
        "column": e.at.column,
        "kind": e.kind,
        "name": e.name,
        "pointer": f.pointer,
        "message": f.message,
        "help": f.help,
        "bump": f.bump,
        "fingerprint": f.fingerprint(),
        "ratcheted": f.ratcheted,
        "renderedFrom": e.rendered_from,
    })
}
