//! Strict decoding of covenant's own formats (config, registries): the apiVersion and kind
//! are checked first, then every undeclared member is collected, not only the first, and a
//! type error names the path it was found at. covenant holds its own files to the rule it
//! enforces.

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::schema::pointer::{escape, unescape};
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

    let mut unknown: Vec<String> = Vec::new();
    let mut note = |path: serde_ignored::Path<'_>| unknown.push(path_pointer(&path));
    let ignored = serde_ignored::Deserializer::new(value, &mut note);
    let decoded: Result<T, _> = serde_path_to_error::deserialize(ignored);
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
    match decoded {
        Ok(t) => (Some(t), problems),
        Err(e) => {
            let pointer = path_to_pointer(e.path());
            problems.push(Problem { at: at(&pointer), pointer, message: e.inner().to_string() });
            (None, problems)
        }
    }
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
