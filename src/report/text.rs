//! Text output: one block per finding, `file:line:column: severity[RULE] message`, then the
//! help line, then a summary line.

use std::fmt::Write;

use super::Report;

/// Render a report as text.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    for e in &report.entries {
        let f = &e.finding;
        let _ = write!(
            out,
            "{}:{}:{}: {}[{}] ",
            e.file,
            e.at.line,
            e.at.column,
            f.severity().as_str(),
            f.rule.id
        );
        if !f.pointer.is_empty() {
            let _ = write!(out, "{}: ", f.pointer);
        }
        let _ = writeln!(out, "{}", f.message);
        if let Some(help) = &f.help {
            let _ = writeln!(out, "  = help: {help} (covenant explain {})", f.rule.id);
        }
    }
    for note in &report.notes {
        let _ = writeln!(out, "note: {note}");
    }
    let _ = writeln!(out, "{}", report.summary());
    out
}
