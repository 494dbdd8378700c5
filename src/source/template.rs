//! Template source among manifests: a Helm chart's `templates/` (or any Go text/template)
//! holds `{{ … }}` actions where YAML expects a node (`name: {{ .Release.Name }}`, a line of
//! `{{- include "labels" . | nindent 4 }}`). YAML cannot read them: the scanner stops with
//! words that say nothing of templates ("\"-\" is only valid inside a block"), or reads a
//! flow mapping whose key is a mapping, which kubectl refuses. When a text stops being YAML,
//! `first_action` finds the action that explains it, so `check` can say what the file is and
//! how to check it (render it first, or leave it out).
//!
//! Only an action that begins a node counts: after a line's indentation, a sequence entry's
//! `- `, or a plain key's `: `. An action inside a quoted scalar (`"{{ .Release.Name }}-cfg"`)
//! or a block scalar's text (an alerting template in a ConfigMap) is text, and YAML reads it.

use super::Position;

/// A template action where a YAML node begins: where, and its text (up to its `}}`, or the
/// rest of the line, at most `SHOWN` characters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Action {
    /// Where the action's `{{` is.
    pub at: Position,
    /// The action as written.
    pub text: String,
}

/// How much of an action is quoted back.
const SHOWN: usize = 60;

/// The first template action that begins a node in `lines`, read up to line `until`
/// (1-based, inclusive): `None` when there is none, and for any text YAML reads as written.
pub fn first_action<S: AsRef<str>>(lines: impl IntoIterator<Item = S>, until: usize) -> Option<Action> {
    // The indentation of the line that opened a block scalar, while its text lasts.
    let mut block: Option<usize> = None;
    for (index, line) in lines.into_iter().enumerate().take(until) {
        let line = line.as_ref().trim_end_matches('\r');
        let indent = line.len() - line.trim_start_matches(' ').len();
        let rest = &line[indent..];
        if let Some(opener) = block {
            if rest.is_empty() || indent > opener {
                continue;
            }
            block = None;
        }
        let node = node_start(rest);
        if node.starts_with("{{") {
            let column = line[..line.len() - node.len()].chars().count() + 1;
            let end = node.find("}}").map_or(node.len(), |e| e + 2);
            let text: String = node[..end].chars().take(SHOWN).collect();
            return Some(Action { at: Position { line: index + 1, column }, text });
        }
        if opens_block_scalar(node) {
            block = Some(indent);
        }
    }
    None
}

/// What follows a line's `- ` entries and its plain `key: `: where a node may begin.
fn node_start(mut rest: &str) -> &str {
    loop {
        if let Some(after) = rest.strip_prefix("- ") {
            rest = after.trim_start_matches(' ');
            continue;
        }
        // A plain key: no quote, flow or comment indicator before its `: `.
        let key_end = rest.find(": ").filter(|&at| {
            let key = &rest[..at];
            !key.is_empty() && !key.contains(['"', '\'', '{', '[', '#', '|', '>'])
        });
        match key_end {
            Some(at) => rest = rest[at + 2..].trim_start_matches(' '),
            None => return rest,
        }
    }
}

/// Whether a node that begins with `node` is a block scalar's indicator (`|`, `>-`, `|2+`,
/// with a comment after it or not): its text is on the lines below.
fn opens_block_scalar(node: &str) -> bool {
    let head = node.split(" #").next().unwrap_or(node).trim_end();
    let mut chars = head.chars();
    matches!(chars.next(), Some('|' | '>')) && chars.all(|c| matches!(c, '-' | '+' | '1'..='9'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Option<(usize, usize, String)> {
        first_action(text.lines(), usize::MAX).map(|a| (a.at.line, a.at.column, a.text))
    }

    /// The shapes a Helm chart's templates take, each found where its `{{` is.
    #[test]
    fn an_action_that_begins_a_node_is_found_where_it_is() {
        let helm = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ include \"c.name\" . }}\n";
        assert_eq!(found(helm), Some((4, 9, "{{ include \"c.name\" . }}".into())));
        assert_eq!(
            found("{{- if .Values.enabled }}\napiVersion: v1\n"),
            Some((1, 1, "{{- if .Values.enabled }}".into()))
        );
        let labels = "metadata:\n  labels:\n    {{- include \"c.labels\" . | nindent 4 }}\n";
        assert_eq!(found(labels).map(|f| (f.0, f.1)), Some((3, 5)));
        assert_eq!(found("spec:\n  ports:\n  - port: {{ . }}\n").map(|f| (f.0, f.1)), Some((3, 11)));
        assert_eq!(found("args:\n- - {{ .Values.arg }}\n").map(|f| (f.0, f.1)), Some((2, 5)));
        // An action with no end on its line is shown to the line's end, at most SHOWN characters.
        let long = format!("a: {{{{ {}\n", "x".repeat(100));
        assert_eq!(found(&long).map(|f| f.2.chars().count()), Some(SHOWN));
    }

    /// YAML that holds `{{` as text is read as written: never taken for a template.
    #[test]
    fn an_action_in_text_is_text() {
        assert_eq!(found("metadata:\n  name: \"{{ .Release.Name }}-cfg\"\n"), None);
        assert_eq!(found("data:\n  a: '{{ $labels.instance }} is down'\n"), None);
        assert_eq!(found("data:\n  a: down {{ $labels.instance }}\n"), None);
        let block = "data:\n  alert.tmpl: |-\n    {{ define \"x\" }}\n\n    {{ end }}\nkind: ConfigMap\n";
        assert_eq!(found(block), None);
        let folded = "data:\n  - >2 # note\n    {{ x }}\n";
        assert_eq!(found(folded), None);
        // After the block scalar's text, a node begins again.
        assert_eq!(found(&format!("{block}name: {{{{ .x }}}}\n")).map(|f| f.0), Some(7));
        // Only up to the line asked.
        assert_eq!(first_action("a: 1\nb: {{ x }}\n".lines(), 1), None);
    }
}
