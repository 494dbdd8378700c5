//! Strict decoding of covenant's own formats (config, registries): the apiVersion and kind
//! are checked first, then every undeclared member is collected, not only the first, and a
//! type error names the path it was found at. covenant holds its own files to the rule it
//! enforces.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::pointer::{escape, unescape};
use crate::source::{Position, Positions};

/// One problem in one of covenant's own documents.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// RFC 6901 pointer.
    pub pointer: String,
    /// Where in the file, when known.
    pub at: Option<Position>,
    /// What was wrong, naming what was found and what was expected.
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(at) = self.at {
            write!(f, "{}:{}: ", at.line, at.column)?;
        }
        if !self.pointer.is_empty() {
            write!(f, "{}: ", self.pointer)?;
        }
        f.write_str(&self.message)
    }
}

/// The group every covenant format lives in, and the one version this build speaks.
pub const API_VERSION: &str = "covenant.dev/v1alpha1";

/// Check `apiVersion` and `kind`, then decode the rest strictly. Every problem is returned.
pub fn decode<T: DeserializeOwned>(
    value: &Value,
    kind: &str,
    positions: Option<&Positions>,
) -> Result<T, Vec<Problem>> {
    match decode_all(value, kind, positions) {
        (Some(t), problems) if problems.is_empty() => Ok(t),
        (_, problems) => Err(problems),
    }
}

/// As `decode`, but also hands back the value when only undeclared members were wrong, so a
/// caller can go on validating it and report everything in one pass.
pub fn decode_all<T: DeserializeOwned>(
    value: &Value,
    kind: &str,
    positions: Option<&Positions>,
) -> (Option<T>, Vec<Problem>) {
    let at = |p: &str| positions.map(|ps| ps.locate(p));
    let mut problems = Vec::new();
    let Some(map) = value.as_object() else {
        let message = format!("expected a {kind} mapping, found {}", describe(value));
        return (None, vec![Problem { pointer: String::new(), at: at(""), message }]);
    };
    match map.get("apiVersion") {
        None => problems.push(Problem {
            pointer: String::new(),
            at: at(""),
            message: format!("required member \"apiVersion\" is missing; expected \"{API_VERSION}\""),
        }),
        Some(Value::String(v)) if v == API_VERSION => {}
        Some(v) => problems.push(Problem {
            pointer: "/apiVersion".into(),
            at: at("/apiVersion"),
            message: format!("apiVersion {v} is not supported; this reader speaks \"{API_VERSION}\""),
        }),
    }
    match map.get("kind") {
        None => problems.push(Problem {
            pointer: String::new(),
            at: at(""),
            message: format!("required member \"kind\" is missing; expected \"{kind}\""),
        }),
        Some(Value::String(k)) if k == kind => {}
        Some(k) => problems.push(Problem {
            pointer: "/kind".into(),
            at: at("/kind"),
            message: format!("kind {k} is not \"{kind}\""),
        }),
    }
    if !problems.is_empty() {
        return (None, problems);
    }

    // A type error ends one decoding pass; the member it names is taken out and the rest
    // decoded again, so every type error and every undeclared member is reported together.
    let mut value = value.clone();
    let mut removed: Vec<String> = Vec::new();
    let mut unknown: Vec<String> = Vec::new();
    let decoded = loop {
        let mut pass: Vec<String> = Vec::new();
        let mut note = |path: serde_ignored::Path<'_>| pass.push(path_pointer(&path));
        let ignored = serde_ignored::Deserializer::new(&value, &mut note);
        let result: Result<T, _> = serde_path_to_error::deserialize(ignored);
        for p in pass {
            if !unknown.contains(&p) {
                unknown.push(p);
            }
        }
        match result {
            Ok(t) => break Some(t),
            Err(e) => {
                let pointer = path_to_pointer(e.path());
                let message = in_own_terms(&e.inner().to_string(), &pointer);
                // A member taken out after a type error is reported once, not again as missing.
                let consequence = removed.iter().any(|r| {
                    let (parent, key) = r.rsplit_once('/').unwrap_or(("", r));
                    parent == pointer && message.contains(&format!("`{}`", unescape(key)))
                });
                if !consequence {
                    problems.push(Problem { at: at(&pointer), pointer: pointer.clone(), message });
                }
                if removed.len() >= 32 || removed.contains(&pointer) || !take_out(&mut value, &pointer) {
                    break None;
                }
                removed.push(pointer);
            }
        }
    };
    for pointer in unknown {
        let (parent, member) = pointer.rsplit_once('/').unwrap_or(("", &pointer));
        problems.push(Problem {
            at: at(&pointer),
            message: format!(
                "member \"{}\" is not declared{}",
                unescape(member),
                if parent.is_empty() { String::new() } else { format!(" under {parent}") }
            ),
            pointer,
        });
    }
    // Report in the order a reader meets them in the file.
    problems.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.pointer.cmp(&b.pointer)));
    (decoded, problems)
}

/// Take the member at `pointer` out of `value`; whether there was one.
fn take_out(value: &mut Value, pointer: &str) -> bool {
    let Some((parent, key)) = pointer.rsplit_once('/') else { return false };
    match value.pointer_mut(parent) {
        Some(Value::Object(map)) => map.remove(&unescape(key)).is_some(),
        Some(Value::Array(items)) => match key.parse::<usize>() {
            Ok(i) if i < items.len() => {
                items.remove(i);
                true
            }
            _ => false,
        },
        _ => false,
    }
}

/// A decoder's message in the terms of the format: `expected a whole number, found a string
/// "lots"`, never `expected usize`; a member counted in bytes says so.
fn in_own_terms(message: &str, pointer: &str) -> String {
    let word = |expected: &str| -> String {
        let e = expected.trim();
        match e {
            "usize" | "u64" | "u32" | "u16" | "u8" if pointer.ends_with("Bytes") => {
                "a number of bytes".into()
            }
            "usize" | "u64" | "u32" | "u16" | "u8" => "a whole number of at least 0".into(),
            "i64" | "i32" | "isize" => "a whole number".into(),
            "f64" | "f32" => "a number".into(),
            "a boolean" | "a string" => e.into(),
            "a sequence" => "a list".into(),
            "a map" => "a mapping".into(),
            other if other.starts_with("struct ") => "a mapping".into(),
            other => other.into(),
        }
    };
    for prefix in ["invalid type: ", "invalid value: "] {
        if let Some(rest) = message.strip_prefix(prefix) {
            if let Some((found, expected)) = rest.rsplit_once(", expected ") {
                let found = found.replacen("integer `", "a number `", 1).replacen("string ", "a string ", 1);
                return format!("expected {}, found {found}", word(expected));
            }
        }
    }
    message.to_string()
}

/// A short description of a JSON value's type, for "found …" messages.
pub fn describe(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

fn path_pointer(path: &serde_ignored::Path<'_>) -> String {
    use serde_ignored::Path;
    match path {
        Path::Root => String::new(),
        Path::Seq { parent, index } => format!("{}/{index}", path_pointer(parent)),
        Path::Map { parent, key } => format!("{}/{}", path_pointer(parent), escape(key)),
        Path::Some { parent } | Path::NewtypeStruct { parent } | Path::NewtypeVariant { parent } => {
            path_pointer(parent)
        }
    }
}

fn path_to_pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for seg in path.iter() {
        match seg {
            Segment::Seq { index } => out.push_str(&format!("/{index}")),
            Segment::Map { key } => out.push_str(&format!("/{}", escape(key))),
            Segment::Enum { variant } => out.push_str(&format!("/{}", escape(variant))),
            Segment::Unknown => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;

    #[derive(Deserialize, Debug)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct Doc {
        api_version: String,
        kind: String,
        #[serde(default)]
        inner: Inner,
    }
    #[derive(Deserialize, Debug, Default)]
    #[allow(dead_code)]
    struct Inner {
        #[serde(default)]
        n: u32,
    }

    #[test]
    fn every_unknown_member_is_reported() {
        let v = json!({"apiVersion": API_VERSION, "kind": "Doc", "x": 1, "inner": {"y": 2}});
        let problems = decode::<Doc>(&v, "Doc", None).unwrap_err();
        let pointers: Vec<_> = problems.iter().map(|p| p.pointer.as_str()).collect();
        assert_eq!(pointers, ["/inner/y", "/x"]);
        assert!(problems[0].message.contains("under /inner"), "{}", problems[0].message);
    }

    #[test]
    fn another_version_is_refused_naming_both() {
        let v = json!({"apiVersion": "covenant.dev/v2", "kind": "Doc"});
        let problems = decode::<Doc>(&v, "Doc", None).unwrap_err();
        assert!(problems[0].message.contains("covenant.dev/v2"));
        assert!(problems[0].message.contains(API_VERSION));
    }

    #[test]
    fn type_error_names_its_path() {
        let v = json!({"apiVersion": API_VERSION, "kind": "Doc", "inner": {"n": "many"}});
        let problems = decode::<Doc>(&v, "Doc", None).unwrap_err();
        assert_eq!(problems[0].pointer, "/inner/n");
    }
}
