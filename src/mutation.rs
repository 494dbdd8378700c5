//! The mutating path: rules state what must hold (`Edit`: this value at this path), and this
//! module turns that into an RFC 6902 JSONPatch against the object — built from path tokens
//! (`/` in a key escaped as `~1`, `~` as `~0`), parents added when missing, ordered by rule
//! id — together with the patched object, so it can be judged again before the patch goes
//! back. Two rules writing one pointer with different values is an error, never a silent
//! winner. An edit the object already satisfies writes nothing, so mutating the mutated
//! object yields no patch (safe under `reinvocationPolicy: IfNeeded`).

use serde_json::{json, Map, Value};

use crate::pointer::escape;

/// One thing a mutation rule wants true: `value` at the path `tokens`.
#[derive(Clone, Debug, PartialEq)]
pub struct Edit {
    /// The rule (`CVN-501`).
    pub rule: &'static str,
    /// The path, as unescaped tokens.
    pub tokens: Vec<String>,
    /// The value.
    pub value: Value,
}

impl Edit {
    /// An edit of `rule` setting `value` at `tokens`.
    pub fn set(rule: &'static str, tokens: &[&str], value: impl Into<Value>) -> Edit {
        Edit { rule, tokens: tokens.iter().map(|t| t.to_string()).collect(), value: value.into() }
    }

    /// The RFC 6901 pointer of the edit.
    pub fn pointer(&self) -> String {
        pointer(&self.tokens)
    }
}

/// The RFC 6901 pointer of unescaped path tokens.
pub fn pointer(tokens: &[String]) -> String {
    tokens.iter().map(|t| format!("/{}", escape(t))).collect()
}

/// Why a set of edits cannot be applied.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PatchError {
    /// Two rules write one pointer with different values.
    #[error("{a} and {b} both write {pointer} with different values")]
    Conflict {
        /// The pointer.
        pointer: String,
        /// One rule.
        a: &'static str,
        /// The other.
        b: &'static str,
    },
    /// A path runs through something that is not a mapping (or a missing list item).
    #[error("{pointer}: {reason}")]
    Path {
        /// The pointer.
        pointer: String,
        /// Why.
        reason: String,
    },
}

/// A planned patch: the operations (JSON, RFC 6902) and the object they produce.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    /// The operations, in rule order.
    pub ops: Vec<Value>,
    /// The object with the operations applied.
    pub patched: Value,
    /// The rules that wrote something.
    pub rules: Vec<&'static str>,
}

/// Plan the patch that makes every edit hold on `object`.
pub fn plan(object: &Value, mut edits: Vec<Edit>) -> Result<Plan, PatchError> {
    edits.sort_by(|a, b| a.rule.cmp(b.rule).then_with(|| a.tokens.cmp(&b.tokens)));
    for (i, a) in edits.iter().enumerate() {
        if let Some(b) = edits[i + 1..].iter().find(|b| b.tokens == a.tokens && b.value != a.value) {
            return Err(PatchError::Conflict { pointer: a.pointer(), a: a.rule, b: b.rule });
        }
    }
    edits.dedup_by(|a, b| a.tokens == b.tokens && a.value == b.value);
    let mut patched = object.clone();
    let mut ops = Vec::new();
    let mut rules = Vec::new();
    for edit in &edits {
        if let Some(op) = apply(&mut patched, edit)? {
            ops.push(op);
            if !rules.contains(&edit.rule) {
                rules.push(edit.rule);
            }
        }
    }
    Ok(Plan { ops, patched, rules })
}

/// `value` wrapped in one mapping per token: the missing parents of a path, built at once.
fn nested(tokens: &[String], value: &Value) -> Value {
    tokens.iter().rev().fold(value.clone(), |v, t| {
        let mut m = Map::new();
        m.insert(t.clone(), v);
        Value::Object(m)
    })
}

/// Make one edit hold on `target`; the operation that did it, or `None` when it already held.
fn apply(target: &mut Value, edit: &Edit) -> Result<Option<Value>, PatchError> {
    let mut node = target;
    for (i, token) in edit.tokens.iter().enumerate() {
        let last = i + 1 == edit.tokens.len();
        let here = pointer(&edit.tokens[..=i]);
        match node {
            Value::Object(map) => {
                if !map.contains_key(token) {
                    // Add the missing member, with every missing parent below it.
                    let value = nested(&edit.tokens[i + 1..], &edit.value);
                    map.insert(token.clone(), value.clone());
                    return Ok(Some(json!({"op": "add", "path": here, "value": value})));
                }
                let next = map.get_mut(token).expect("checked above");
                if last {
                    if *next == edit.value {
                        return Ok(None);
                    }
                    *next = edit.value.clone();
                    return Ok(Some(json!({"op": "replace", "path": here, "value": edit.value})));
                }
                if next.is_null() {
                    // An explicit null parent (`annotations: null`) is replaced whole.
                    let value = nested(&edit.tokens[i + 1..], &edit.value);
                    *next = value.clone();
                    return Ok(Some(json!({"op": "replace", "path": here, "value": value})));
                }
                node = next;
            }
            Value::Array(items) => {
                let index: Option<usize> = token.parse().ok().filter(|i| *i < items.len());
                let Some(index) = index else {
                    return Err(PatchError::Path { pointer: here, reason: "no such list item".into() });
                };
                if last {
                    if items[index] == edit.value {
                        return Ok(None);
                    }
                    items[index] = edit.value.clone();
                    return Ok(Some(json!({"op": "replace", "path": here, "value": edit.value})));
                }
                node = &mut items[index];
            }
            other => {
                return Err(PatchError::Path {
                    pointer: here,
                    reason: format!("expected a mapping, found {}", crate::strict::describe(other)),
                })
            }
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_are_added_keys_escaped_and_reapplying_writes_nothing() {
        let object = json!({"metadata": {"name": "x"}});
        let edits = vec![
            Edit::set("CVN-502", &["metadata", "labels", "openchoreo.dev/name"], "x"),
            Edit::set("CVN-501", &["metadata", "annotations", "a~b/c"], "1"),
        ];
        let p = plan(&object, edits.clone()).unwrap();
        assert_eq!(p.ops[0], json!({"op": "add", "path": "/metadata/annotations", "value": {"a~b/c": "1"}}));
        assert_eq!(
            p.ops[1],
            json!({"op": "add", "path": "/metadata/labels", "value": {"openchoreo.dev/name": "x"}})
        );
        assert_eq!(p.patched["metadata"]["annotations"]["a~b/c"], "1");
        // Idempotent: the patched object needs no patch.
        assert!(plan(&p.patched, edits).unwrap().ops.is_empty());
        // A wrong value is replaced at its escaped pointer.
        let stale = json!({"metadata": {"annotations": {"a~b/c": "0"}}});
        let p = plan(&stale, vec![Edit::set("CVN-501", &["metadata", "annotations", "a~b/c"], "1")]).unwrap();
        assert_eq!(p.ops, [json!({"op": "replace", "path": "/metadata/annotations/a~0b~1c", "value": "1"})]);
    }

    #[test]
    fn two_rules_writing_one_pointer_differently_is_an_error() {
        let edits = vec![Edit::set("CVN-501", &["a"], "1"), Edit::set("CVN-502", &["a"], "2")];
        assert!(matches!(plan(&json!({}), edits), Err(PatchError::Conflict { .. })));
        let same = vec![Edit::set("CVN-501", &["a"], "1"), Edit::set("CVN-502", &["a"], "1")];
        assert_eq!(plan(&json!({}), same).unwrap().ops.len(), 1);
    }
}
