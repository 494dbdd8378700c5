//! `covenant check --fix`: the stamps and labels the mutating webhook would write, written
//! into the YAML files instead — every other byte of each file left as it was. The edits are
//! the webhook's own JSONPatch, turned into line insertions and one-scalar replacements at the
//! positions the reader recorded (an empty flow mapping, `labels: {}`, becomes a block
//! mapping); what cannot be edited that way (flow-style mappings with members, JSON
//! files, multi-line scalars) is refused with the place and the reason, never rewritten.

use serde_json::Value;

use crate::cluster::ClusterView;
use crate::engine::Engine;
use crate::mutation::pointer;
use crate::source::{parse_stream, Positions};
use crate::subject::Subject;

/// Why a file cannot be fixed in place.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {reason}")]
pub struct FixError {
    /// The file.
    pub file: String,
    /// Where and why.
    pub reason: String,
}

/// One edit of the text: replace lines `[start, end)` (0-based) with `lines`.
struct Splice {
    start: usize,
    end: usize,
    lines: Vec<String>,
}

fn quote(v: &Value) -> String {
    match v {
        // JSON strings are valid double-quoted YAML scalars.
        Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null => v.to_string(),
        other => other.to_string(),
    }
}

/// The YAML block lines for `key: value` at `indent` spaces.
fn block(key: &str, value: &Value, indent: usize, out: &mut Vec<String>) {
    let pad = " ".repeat(indent);
    match value {
        Value::Object(map) if !map.is_empty() => {
            out.push(format!("{pad}{}:", quote_key(key)));
            for (k, v) in map {
                block(k, v, indent + 2, out);
            }
        }
        other => out.push(format!("{pad}{}: {}", quote_key(key), quote(other))),
    }
}

fn quote_key(key: &str) -> String {
    if key.chars().all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c)) {
        key.to_string()
    } else {
        Value::String(key.to_string()).to_string()
    }
}

/// The text of `file` with the webhook's stamps written in; `None` when nothing changes.
pub fn fix_text(
    file: &str,
    text: &str,
    engine: &Engine,
    cluster: &dyn ClusterView,
) -> Result<Option<String>, FixError> {
    let err = |reason: String| FixError { file: file.to_string(), reason };
    let (docs, syntax) = parse_stream(text);
    if syntax.is_some() {
        return Ok(None); // `check` reports the syntax error itself
    }
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let mut splices = Vec::new();
    for doc in docs {
        // A list document (`kubectl get -o yaml`) is fixed item by item, as `check` judges it;
        // items that are not a list are `check`'s to report.
        let mut value = doc.value.clone();
        let objects: Vec<(Vec<String>, Value)> = match crate::subject::list_items(&mut value) {
            None => vec![(Vec::new(), value)],
            Some(Ok(items)) => items
                .into_iter()
                .map(|(at, item)| (at.split('/').skip(1).map(String::from).collect(), item))
                .collect(),
            Some(Err(_)) => continue,
        };
        for (mut at, object) in objects {
            let m = engine.mutate(&Subject::from_document(object.clone()), cluster);
            if m.ops.is_empty() {
                continue;
            }
            if file.ends_with(".json") {
                return Err(err(
                    "--fix edits YAML files; a JSON file would be rewritten whole, so it is left alone"
                        .into(),
                ));
            }
            // The webhook's ops build on each other (the first adds `annotations`, the next
            // adds a key to it); the text only has the original, so edit by what differs
            // from it.
            let Some(patched) = &m.patched else { continue };
            let mut edits = Vec::new();
            differences(&object, patched, &mut at, &mut edits);
            for (tokens, op) in edits {
                splices.push(splice(&tokens, &op, &doc.positions, &lines).map_err(&err)?);
            }
        }
    }
    if splices.is_empty() {
        return Ok(None);
    }
    // Apply bottom-up so earlier line numbers stay valid; insertions at one line keep their
    // planned order.
    splices.sort_by_key(|s| s.start);
    let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
    for s in splices.into_iter().rev() {
        let newline = out
            .get(s.start.saturating_sub(1))
            .map(|l| if l.ends_with("\r\n") { "\r\n" } else { "\n" })
            .unwrap_or("\n");
        let replacement: Vec<String> = s.lines.into_iter().map(|l| format!("{l}{newline}")).collect();
        out.splice(s.start..s.end, replacement);
    }
    Ok(Some(out.concat()))
}

/// What `patched` adds to or changes in `original`, as text-level operations: a member
/// missing from the original is one `add` of its whole subtree; a changed scalar a `replace`.
fn differences(
    original: &Value,
    patched: &Value,
    path: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, Value)>,
) {
    match (original, patched) {
        (Value::Object(a), Value::Object(b)) => {
            for (k, v) in b {
                path.push(k.clone());
                let empty = |o: &Value| o.is_null() || o.as_object().is_some_and(|m| m.is_empty());
                match a.get(k) {
                    None => out.push((path.clone(), serde_json::json!({"op": "add", "value": v}))),
                    // `labels: {}` or `labels:` gaining members: the line becomes a block
                    // mapping holding them.
                    Some(old) if empty(old) && v.as_object().is_some_and(|m| !m.is_empty()) => {
                        out.push((path.clone(), serde_json::json!({"op": "fill", "value": v})))
                    }
                    Some(Value::Null) if !v.is_null() => {
                        out.push((path.clone(), serde_json::json!({"op": "replace", "value": v})))
                    }
                    Some(old) => differences(old, v, path, out),
                }
                path.pop();
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                path.push(i.to_string());
                differences(x, y, path, out);
                path.pop();
            }
        }
        (a, b) if a != b => out.push((path.clone(), serde_json::json!({"op": "replace", "value": b}))),
        _ => {}
    }
}

fn splice(tokens: &[String], op: &Value, positions: &Positions, lines: &[&str]) -> Result<Splice, String> {
    let Some((key, parent)) = tokens.split_last() else { return Err("a patch of the whole document".into()) };
    let value = &op["value"];
    match op["op"].as_str() {
        Some("replace") => {
            let at = positions.locate(&pointer(tokens));
            let line = at.line.checked_sub(1).ok_or("no position for the value")?;
            let text = lines.get(line).ok_or("position beyond the text")?;
            let col = at.column.saturating_sub(1);
            // `key: value` on one line: keep everything up to the value.
            let rest = &text[col..];
            let Some(colon) = rest.find(':') else {
                return Err(format!("line {}: not a `key: value` line", line + 1));
            };
            let after = rest[colon + 1..].trim();
            if after.is_empty() || after.starts_with(['|', '>', '{', '[', '&', '*']) {
                return Err(format!(
                    "line {}: {} is not a one-line scalar; fix it by hand",
                    line + 1,
                    pointer(tokens)
                ));
            }
            if value.is_object() {
                return Err(format!("line {}: replacing a mapping is not a one-line edit", line + 1));
            }
            let head = &text[..col + colon + 1];
            Ok(Splice { start: line, end: line + 1, lines: vec![format!("{head} {}", quote(value))] })
        }
        Some("add") => {
            let parent_at = positions.locate(&pointer(parent));
            let parent_line = parent_at.line.checked_sub(1).ok_or("no position for the parent")?;
            let parent_value = lines.get(parent_line).ok_or("position beyond the text")?;
            // The parent's first child decides the indentation; it must sit on a later line
            // (block style). A parent with no child here is written as `key: {}` or `key:`.
            let siblings: Vec<usize> = positions_of_children(positions, parent, lines);
            let indent = match siblings.first() {
                Some(&col) => col,
                None => {
                    let body = parent_value.trim_end();
                    if body.ends_with("{}") || body.ends_with("null") || body.ends_with('~') {
                        return Err(format!(
                            "line {}: {} is an empty inline mapping; write it as a block mapping first",
                            parent_line + 1,
                            pointer(parent)
                        ));
                    }
                    return Err(format!(
                        "line {}: cannot find where {} holds its members",
                        parent_line + 1,
                        pointer(parent)
                    ));
                }
            };
            let mut out = Vec::new();
            block(key, value, indent, &mut out);
            Ok(Splice { start: parent_line + 1, end: parent_line + 1, lines: out })
        }
        Some("fill") => {
            // `key: {}` (or `key:`, `key: null`, `key: ~`) on one line: keep `key:` and write
            // the members below it, one indentation step in.
            let at = positions.locate(&pointer(tokens));
            let line = at.line.checked_sub(1).ok_or("no position for the mapping")?;
            let text = lines.get(line).ok_or("position beyond the text")?;
            let col = at.column.saturating_sub(1);
            let colon = text.get(col..).and_then(|rest| rest.find(':')).map(|c| col + c);
            let empty = colon
                .map(|c| text[c + 1..].trim())
                .filter(|after| matches!(*after, "{}" | "" | "null" | "~"));
            let (Some(colon), Some(_)) = (colon, empty) else {
                return Err(format!(
                    "line {}: {} is not an empty mapping on one line; fix it by hand",
                    line + 1,
                    pointer(tokens)
                ));
            };
            let mut out = vec![text[..=colon].to_string()];
            for (k, v) in value.as_object().into_iter().flatten() {
                block(k, v, col + 2, &mut out);
            }
            Ok(Splice { start: line, end: line + 1, lines: out })
        }
        other => Err(format!("unexpected patch operation {other:?}")),
    }
}

/// The columns (0-based) of a mapping's members that sit on lines after the mapping's own key
/// line; empty when the mapping is flow style or has no member.
fn positions_of_children(positions: &Positions, parent: &[String], lines: &[&str]) -> Vec<usize> {
    let parent_line = positions.locate(&pointer(parent)).line;
    let mut cols = Vec::new();
    for (pointer_str, at) in positions.iter() {
        let Some(rest) = pointer_str.strip_prefix(&pointer(parent)) else { continue };
        let depth = rest.matches('/').count();
        if depth != 1 || !rest.starts_with('/') || at.line <= parent_line {
            continue;
        }
        let Some(text) = lines.get(at.line - 1) else { continue };
        // Block members start their line (after the indentation, or a list dash).
        let col = at.column.saturating_sub(1);
        if text[..col.min(text.len())].trim_start_matches([' ', '-']).is_empty() {
            cols.push(col);
        }
    }
    cols.sort_unstable();
    cols
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn children_of_a_block_mapping_are_found_with_their_indentation() {
        let text = "a:\n  b:\n    c: 1\n    d: x\n  e: {f: 1}\n";
        let (docs, _) = parse_stream(text);
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        let p = &docs[0].positions;
        assert_eq!(positions_of_children(p, &["a".into(), "b".into()], &lines), [4, 4]);
        assert!(positions_of_children(p, &["a".into(), "e".into()], &lines).is_empty());
    }
}
