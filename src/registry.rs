//! Registries: `kind: Registry` documents that declare what the families know (for now the
//! `versioned` schemas). The built-in registries are embedded; user registries extend them.
//! A registry is decoded as strictly as any document covenant judges.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::source::parse_stream;
use crate::strict::{self, Problem};

/// The built-in registries, embedded in the binary.
pub const BUILTIN: &[(&str, &str)] =
    &[("registry/versioned.yaml", include_str!("../registry/versioned.yaml"))];

/// A group and kind, as a registry entry names a cluster resource.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord)]
#[serde(rename_all = "camelCase")]
pub struct GroupKind {
    /// API group.
    pub group: String,
    /// Kind.
    pub kind: String,
}

/// One `versioned` schema: a document format with top-level `schema` and `version` members.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct VersionedSchema {
    /// The value of the document's `schema` member.
    pub schema: String,
    /// The one version this reader speaks.
    pub version: String,
    /// `false`: the member is required but its value is not checked.
    #[serde(default = "yes")]
    pub check_version: bool,
    /// The members the schema declares besides `schema` and `version`. Absent: the schema's
    /// members are not known and the document is open.
    #[serde(default)]
    pub members: Option<Vec<String>>,
    /// Cluster resources whose objects carry this format (so the webhook judges them too).
    #[serde(default)]
    pub resources: Vec<GroupKind>,
}

fn yes() -> bool {
    true
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // apiVersion and kind are checked by strict::decode
struct RegistryFile {
    api_version: String,
    kind: String,
    #[serde(default)]
    metadata: Option<Metadata>,
    #[serde(default)]
    versioned: Vec<VersionedSchema>,
}

#[derive(Debug, Deserialize)]
struct Metadata {
    #[allow(dead_code)]
    name: String,
}

/// Everything the loaded registries declare.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    /// Versioned schemas by name.
    pub versioned: BTreeMap<String, VersionedSchema>,
}

/// A registry that could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be read.
    #[error("cannot read registry {path}: {source}")]
    Read {
        /// The path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file's content is invalid; every problem is listed.
    #[error("invalid registry {path}:\n{}", list(problems))]
    Invalid {
        /// The path.
        path: String,
        /// Every problem found.
        problems: Vec<Problem>,
    },
}

fn list(problems: &[Problem]) -> String {
    problems.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n")
}

impl Registry {
    /// The built-in registries alone.
    pub fn builtin() -> Result<Registry, Error> {
        let mut r = Registry::default();
        for (name, text) in BUILTIN {
            r.add_text(name, text)?;
        }
        Ok(r)
    }

    /// Add the registry documents in a file.
    pub fn add_file(&mut self, path: &Path) -> Result<(), Error> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| Error::Read { path: path.display().to_string(), source })?;
        self.add_text(&path.display().to_string(), &text)
    }

    /// Add the registry documents in a text. A later entry for a schema replaces an
    /// earlier one, so a user registry can declare the members of a built-in schema.
    pub fn add_text(&mut self, name: &str, text: &str) -> Result<(), Error> {
        let invalid = |problems| Error::Invalid { path: name.to_string(), problems };
        let (docs, syntax) = parse_stream(text);
        if let Some(e) = syntax {
            return Err(invalid(vec![Problem { pointer: String::new(), at: Some(e.at), message: e.reason }]));
        }
        let mut problems = Vec::new();
        for doc in docs {
            for d in &doc.duplicates {
                problems.push(Problem {
                    pointer: d.pointer.clone(),
                    at: Some(d.again),
                    message: format!("key \"{}\" appears twice (first at line {})", d.key, d.first.line),
                });
            }
            match strict::decode::<RegistryFile>(&doc.value, "Registry", Some(&doc.positions)) {
                Ok(file) => {
                    for entry in file.versioned {
                        self.versioned.insert(entry.schema.clone(), entry);
                    }
                }
                Err(p) => problems.extend(p),
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(invalid(problems))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_registry_declares_the_spaceos_schemas() {
        let r = Registry::builtin().unwrap();
        assert_eq!(r.versioned["space.app"].version, "1");
        assert!(!r.versioned["space.project"].check_version);
        assert!(r.versioned["space.app"].members.is_none());
    }

    #[test]
    fn registry_with_an_undeclared_member_is_refused() {
        let text = "apiVersion: covenant.dev/v1alpha1\nkind: Registry\nversioned:\n  - schema: a\n    version: \"1\"\n    membres: [x]\n";
        let err = Registry::default().add_text("r.yaml", text).unwrap_err().to_string();
        assert!(err.contains("\"membres\""), "{err}");
        assert!(err.contains("6:5"), "{err}");
    }
}
