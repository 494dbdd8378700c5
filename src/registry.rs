//! Registries: `kind: Registry` documents that declare what the families know: the
//! `versioned` schemas, and the launcher's component, trait and policy types with their
//! property schemas. The built-in registries are embedded; user registries extend them (a
//! later entry for the same name replaces an earlier one). A registry is decoded as strictly
//! as any document covenant judges, its property schemas included.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::schema::pointer::Location;
use crate::schema::{property, Schema};
use crate::source::{parse_stream, Positions};
use crate::strict::{self, Problem};

/// The built-in registries, embedded in the binary.
pub const BUILTIN: &[(&str, &str)] = &[
    ("registry/versioned.yaml", include_str!("../registry/versioned.yaml")),
    ("registry/launcher.yaml", include_str!("../registry/launcher.yaml")),
];

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

/// The category of a launcher type: the three share one flat namespace of names.
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[serde(rename_all = "lowercase")]
pub enum TypeCategory {
    /// A component type (`spec.components[].type`).
    Component,
    /// A trait type (`spec.components[].traits[].type`).
    Trait,
    /// A policy type (`spec.policies[].type`).
    Policy,
}

impl TypeCategory {
    /// The spelling documents and messages use.
    pub const fn as_str(self) -> &'static str {
        match self {
            TypeCategory::Component => "component",
            TypeCategory::Trait => "trait",
            TypeCategory::Policy => "policy",
        }
    }
}

/// Whether a handler serves the type or a lowering rule expands it (seed 000, Axis A).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum Tier {
    /// A handler emits or modifies the rendered configuration itself.
    Terminal,
    /// A lowering rule emits other entries until only terminal types remain.
    Lowerable,
}

/// A hint added to an undeclared-property finding when the refused key is one of `keys`.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Hint {
    /// Top-level property keys that trigger the hint.
    pub keys: Vec<String>,
    /// What to say.
    pub message: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct TypeEntry {
    name: String,
    category: TypeCategory,
    tier: Tier,
    #[serde(default)]
    schema: Option<Value>,
    #[serde(default)]
    hints: Vec<Hint>,
}

/// One registered launcher type.
#[derive(Clone, Debug)]
pub struct LauncherType {
    /// The type name.
    pub name: String,
    /// Its category.
    pub category: TypeCategory,
    /// Its tier.
    pub tier: Tier,
    /// The schema of its `properties` map; `None`: not available, properties unchecked.
    pub schema: Option<Schema>,
    /// Hints for refused keys.
    pub hints: Vec<Hint>,
    /// The registry that declared it.
    pub origin: String,
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
    /// Named schemas other entries reach through YAML anchors; each is checked.
    #[serde(default)]
    fragments: BTreeMap<String, Value>,
    #[serde(default)]
    types: Vec<TypeEntry>,
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
    /// Launcher types by category and name.
    pub launcher: BTreeMap<(TypeCategory, String), LauncherType>,
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
                    let base = Location::new("/fragments", "fragments");
                    for (fname, v) in &file.fragments {
                        load_schema(v, &base.key(fname), &doc.positions, &mut problems);
                    }
                    let base = Location::new("/types", "types");
                    for (i, entry) in file.types.into_iter().enumerate() {
                        let schema = entry.schema.as_ref().and_then(|v| {
                            load_schema(v, &base.index(i).key("schema"), &doc.positions, &mut problems)
                        });
                        let t = LauncherType {
                            name: entry.name,
                            category: entry.category,
                            tier: entry.tier,
                            schema,
                            hints: entry.hints,
                            origin: name.to_string(),
                        };
                        self.launcher.insert((t.category, t.name.clone()), t);
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

fn load_schema(
    v: &Value,
    at: &Location,
    positions: &Positions,
    problems: &mut Vec<Problem>,
) -> Option<Schema> {
    match property::load(v, at) {
        Ok(s) => Some(s),
        Err(ps) => {
            problems.extend(ps.into_iter().map(|p| Problem {
                at: Some(positions.locate(&p.at.pointer)),
                pointer: p.at.pointer,
                message: p.message,
            }));
            None
        }
    }
}

impl Registry {
    /// The launcher type of `category` named `name`.
    pub fn launcher_type(&self, category: TypeCategory, name: &str) -> Option<&LauncherType> {
        self.launcher.get(&(category, name.to_string()))
    }

    /// The names registered in `category`, sorted.
    pub fn launcher_names(&self, category: TypeCategory) -> impl Iterator<Item = &str> {
        self.launcher.values().filter(move |t| t.category == category).map(|t| t.name.as_str())
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
    fn builtin_registry_declares_the_launcher_types() {
        let r = Registry::builtin().unwrap();
        let count = |c| r.launcher_names(c).count();
        assert_eq!(
            (count(TypeCategory::Component), count(TypeCategory::Trait), count(TypeCategory::Policy)),
            (114, 19, 4)
        );
        let web = r.launcher_type(TypeCategory::Component, "webservice").unwrap();
        assert_eq!(web.tier, Tier::Lowerable);
        let schema = web.schema.as_ref().unwrap();
        // Fragments reached through anchors are expanded.
        assert!(schema.properties["env"].items.as_ref().unwrap().properties.contains_key("valueFrom"));
        assert!(r.launcher_type(TypeCategory::Component, "deployment").unwrap().schema.is_none());
        assert_eq!(r.launcher_type(TypeCategory::Component, "helmchart").unwrap().hints[0].keys.len(), 10);
    }

    #[test]
    fn a_registry_schema_problem_names_its_line() {
        let text = "apiVersion: covenant.dev/v1alpha1\nkind: Registry\ntypes:\n  - name: a\n    category: trait\n    tier: terminal\n    schema:\n      type: object\n      properties:\n        x: {type: strng}\n";
        let err = Registry::default().add_text("r.yaml", text).unwrap_err().to_string();
        assert!(err.contains("10:"), "{err}");
        assert!(err.contains("/types/0/schema/properties/x/type"), "{err}");
    }

    #[test]
    fn registry_with_an_undeclared_member_is_refused() {
        let text = "apiVersion: covenant.dev/v1alpha1\nkind: Registry\nversioned:\n  - schema: a\n    version: \"1\"\n    membres: [x]\n";
        let err = Registry::default().add_text("r.yaml", text).unwrap_err().to_string();
        assert!(err.contains("\"membres\""), "{err}");
        assert!(err.contains("6:5"), "{err}");
    }
}
