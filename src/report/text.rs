//! Text output: one block per finding, `file:line:column: severity[RULE] message`, then the
//! help line (and, for rendered output, the template the document came from), then a
//! summary line.

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
            printable(&e.file),
            e.at.line,
            e.at.column,
            f.severity().as_str(),
            f.rule.id
        );
        if !f.pointer.is_empty() {
            let _ = write!(out, "{}: ", printable(&f.pointer));
        }
        let _ = writeln!(out, "{}", printable(&f.message));
        if let Some(help) = &f.help {
            let _ = writeln!(out, "  = help: {} (covenant explain {})", printable(help), f.rule.id);
        }
        if let Some(template) = &e.rendered_from {
            let _ = writeln!(out, "  = rendered from: {}", printable(template));
        }
    }
    for note in report.all_notes() {
        let _ = writeln!(out, "note: {}", printable(&note));
    }
    let _ = writeln!(out, "{}", printable(&report.summary()));
    out
}

/// Text safe for a terminal: control characters a finding quotes from a document or a file
/// name holds (an escape sequence, a carriage return, a newline that would forge a line of
/// output) are written as `\u{1b}`, never sent to the terminal.
pub fn printable(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        if c.is_control() {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::printable;

    #[test]
    fn control_characters_are_written_as_escapes() {
        assert_eq!(printable("plain"), "plain");
        assert_eq!(printable("a\u{1b}[31mred\r\n"), "a\\u{1b}[31mred\\u{d}\\u{a}");
    }
}
