//! The JSON contract of `covenant check --output json`. CI scripts parse it: changes are
//! additive only.

use serde_json::{json, Value};

use super::Report;
use crate::rules::Action;

/// Render a report as the JSON contract.
pub fn render(report: &Report) -> Value {
    let findings: Vec<Value> = report
        .entries
        .iter()
        .map(|e| {
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
            })
        })
        .collect();
    json!({
        "findings": findings,
        "notes": report.all_notes().collect::<Vec<_>>(),
        "skipped": report.skipped.iter().map(|(file, document)| json!({"file": file, "document": document})).collect::<Vec<_>>(),
        "unjudged": report.unjudged.iter().map(|u| json!({"file": u.file, "document": u.document, "item": u.item, "apiVersion": u.api_version, "kind": u.kind})).collect::<Vec<_>>(),
        "summary": {
            "documents": report.documents,
            "denied": report.count(Action::Deny),
            "warned": report.count(Action::Warn),
            "audited": report.count(Action::Audit),
            "skipped": report.skipped.len(),
            "unjudged": report.unjudged.len(),
        }
    })
}
