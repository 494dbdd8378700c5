//! What OpenChoreo's labels and annotations say of a construct: its logical name and its
//! declared version. Read by the construct family, which judges them, and by the pin
//! resolution consumers and deletions share (`pins`); it imports neither.

use serde_json::Value;

use crate::pointer::At;

/// The label naming a construct's logical name.
pub const NAME_LABEL: &str = "openchoreo.dev/name";
/// The label (and annotation) carrying a construct's version.
pub const VERSION_KEY: &str = "openchoreo.dev/version";
/// The label that makes one object the one unpinned consumers get.
pub const DEFAULT_LABEL: &str = "openchoreo.dev/default";
/// A metadata label of a document.
pub(crate) fn label<'v>(doc: &'v Value, key: &str) -> Option<&'v str> {
    doc.at("/metadata/labels").and_then(|l| l.get(key)).and_then(Value::as_str)
}

pub(crate) fn annotation<'v>(doc: &'v Value, key: &str) -> Option<&'v str> {
    doc.at("/metadata/annotations").and_then(|l| l.get(key)).and_then(Value::as_str)
}

/// The object name without a trailing `-v<N>`.
pub(crate) fn strip_major(name: &str) -> &str {
    match name.rsplit_once("-v") {
        Some((base, n)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => base,
        _ => name,
    }
}

/// Constructs by the logical name they publish under (`ruby-service` for `ruby-service-v2`):
/// how a pin finds its candidates without a pass over every construct of the kind.
pub const BY_LOGICAL_NAME: crate::cluster::Index =
    crate::cluster::Index { name: "openchoreo.dev/logical-name", keys: |o| vec![logical_name(o)] };

/// A construct's logical name: its name label, else the `openchoreo.dev/name` annotation,
/// else its object name less `-v<major>`.
pub fn logical_name(doc: &Value) -> String {
    label(doc, NAME_LABEL).or_else(|| annotation(doc, NAME_LABEL)).map(str::to_string).unwrap_or_else(|| {
        strip_major(doc.at("/metadata/name").and_then(Value::as_str).unwrap_or_default()).to_string()
    })
}

/// A construct's declared version (the `openchoreo.dev/version` annotation, else label).
pub fn declared_version(doc: &Value) -> Option<&str> {
    annotation(doc, VERSION_KEY).or_else(|| label(doc, VERSION_KEY))
}
