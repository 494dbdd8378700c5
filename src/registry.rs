//! Registries: `kind: Registry` documents that declare what the families know: the
//! `versioned` schemas, and the launcher's component, trait and policy types with their
//! property schemas. The built-in registries are embedded; user registries extend them (a
//! later entry for the same name replaces an earlier one). A registry is decoded as strictly
//! as any document covenant judges, its property schemas included.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::pointer::Location;
use crate::schema::{property, Schema};
use crate::source::{parse_stream, Positions, SourceDocument};
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

/// The API kind a kind-named type projects.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ApiKind {
    /// API group (`""` for the core group).
    #[serde(default)]
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
}

impl std::fmt::Display for ApiKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.group.is_empty() {
            write!(f, "{}/{}", self.version, self.kind)
        } else {
            write!(f, "{}/{} {}", self.group, self.version, self.kind)
        }
    }
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
    #[serde(default)]
    projects: Option<ApiKind>,
    #[serde(default)]
    upstreams: Option<String>,
    #[serde(default)]
    prefix_reason: Option<String>,
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
    /// The registry or dialect that declared it (`registry builtin-launcher`,
    /// `dialect acme`).
    pub origin: String,
    /// The file (or document name) the declaration is in.
    pub file: String,
    /// The declaration's pointer in its document (`/types/3`).
    pub pointer: String,
    /// For a kind-named type: the API kind it projects.
    pub projects: Option<ApiKind>,
    /// The dialect whose feature this type upstreams with the same semantics (seed 000,
    /// Upstream-or-rename).
    pub upstreams: Option<String>,
    /// Why a vendor prefix is needed although no registered type has the bare name
    /// (`fluxcd-kustomization`: bare `kustomization` collides with kustomization.yaml).
    pub prefix_reason: Option<String>,
}

/// A name a dialect reserves or shadows, with the dialect's schema for it when given.
#[derive(Clone, Debug)]
pub struct DialectName {
    /// The type name.
    pub name: String,
    /// Its category.
    pub category: TypeCategory,
    /// What the dialect's type accepts; `None`: not stated.
    pub schema: Option<Schema>,
    /// Its pointer in the dialect document.
    pub pointer: String,
}

/// A dialect that extends the launcher's model: its declaration, as data (`kind: Dialect`).
#[derive(Clone, Debug)]
pub struct Dialect {
    /// Its name.
    pub name: String,
    /// What it extends (`launcher.gokure.dev/v1alpha1`).
    pub extends: String,
    /// Names in active use downstream: reserved, with every `.v<N>` generation.
    pub reserved: Vec<DialectName>,
    /// Launcher names the dialect also defines; each must stay a compatible superset.
    pub shadowed: Vec<DialectName>,
    /// The file it was read from.
    pub file: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)] // apiVersion and kind are checked by strict::decode
struct DialectFile {
    api_version: String,
    kind: String,
    metadata: Metadata,
    extends: String,
    #[serde(default)]
    reserved: Vec<DialectEntry>,
    #[serde(default)]
    shadowed: Vec<DialectEntry>,
    #[serde(default)]
    types: Vec<TypeEntry>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DialectEntry {
    name: String,
    category: TypeCategory,
    #[serde(default)]
    schema: Option<Value>,
}

/// The one format a dialect may extend.
pub const LAUNCHER_FORMAT: &str = "launcher.gokure.dev/v1alpha1";

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
    name: String,
}

/// Everything the loaded registries declare.
#[derive(Clone, Debug, Default)]
pub struct Registry {
    /// Versioned schemas by name.
    pub versioned: BTreeMap<String, VersionedSchema>,
    /// The file that declared each versioned schema.
    pub versioned_origin: BTreeMap<String, String>,
    /// Launcher types by category and name (a later declaration replaces an earlier one).
    pub launcher: BTreeMap<(TypeCategory, String), LauncherType>,
    /// Every type declaration, in load order, none replaced: what the type-name covenant
    /// holds against each other.
    pub declarations: Vec<LauncherType>,
    /// The dialect declarations given.
    pub dialects: Vec<Dialect>,
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

    /// Add the registry documents in a file, or in every `*.yaml`, `*.yml` and `*.json` file
    /// under a directory (in name order). A directory that holds none is an error: a
    /// registry named and never read would leave its names out of the namespace unsaid.
    pub fn add_file(&mut self, path: &Path) -> Result<(), Error> {
        let files = crate::source::read_all(path)
            .map_err(|(path, source)| Error::Read { path: path.display().to_string(), source })?;
        for (file, text) in files {
            self.add_text(&file.display().to_string(), &text)?;
        }
        Ok(())
    }

    /// Add the registry documents in a text. A later entry for a schema replaces an
    /// earlier one, so a user registry can declare the members of a built-in schema.
    pub fn add_text(&mut self, name: &str, text: &str) -> Result<(), Error> {
        let (docs, syntax) = parse_stream(text);
        if let Some(e) = syntax {
            let problems = vec![Problem { pointer: String::new(), at: Some(e.at), message: e.what() }];
            return Err(Error::Invalid { path: name.to_string(), problems });
        }
        self.add_documents(name, docs)
    }

    /// Add registry documents already read from the file `name`.
    pub fn add_documents(&mut self, name: &str, docs: Vec<SourceDocument>) -> Result<(), Error> {
        let invalid = |problems| Error::Invalid { path: name.to_string(), problems };
        let mut problems = Vec::new();
        for doc in docs {
            for d in &doc.duplicates {
                problems.push(Problem {
                    pointer: d.pointer.clone(),
                    at: Some(d.again),
                    message: format!("key \"{}\" appears twice (first at line {})", d.key, d.first.line),
                });
            }
            self.add_document(name, &doc.value, &doc.positions, &mut problems);
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(invalid(problems))
        }
    }
}

/// The `versioned` entries of a registry document that decode, each with its index; one that
/// does not decode is the document's own finding, made where it is decoded strictly.
pub fn versioned_entries(doc: &Value) -> Vec<(usize, VersionedSchema)> {
    let entries = doc.get("versioned").and_then(Value::as_array).into_iter().flatten().enumerate();
    entries.filter_map(|(i, e)| serde_json::from_value(e.clone()).ok().map(|e| (i, e))).collect()
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
    /// Add one `Registry` or `Dialect` document (already parsed), collecting its problems.
    pub fn add_document(
        &mut self,
        name: &str,
        value: &Value,
        positions: &Positions,
        problems: &mut Vec<Problem>,
    ) {
        if value.get("kind").and_then(Value::as_str) == Some("Dialect") {
            match strict::decode::<DialectFile>(value, "Dialect", Some(positions)) {
                Ok(file) => self.add_dialect(name, file, positions, problems),
                Err(p) => problems.extend(p),
            }
            return;
        }
        match strict::decode::<RegistryFile>(value, "Registry", Some(positions)) {
            Ok(file) => {
                for (i, entry) in file.versioned.into_iter().enumerate() {
                    let pointer = format!("/versioned/{i}");
                    if let Some(why) = self.second_decoder(name, &entry) {
                        problems.push(Problem {
                            at: Some(positions.locate(&pointer)),
                            pointer,
                            message: why,
                        });
                        continue;
                    }
                    self.versioned_origin.insert(entry.schema.clone(), name.to_string());
                    self.versioned.insert(entry.schema.clone(), entry);
                }
                let base = Location::new("/fragments", "fragments");
                for (fname, v) in &file.fragments {
                    load_schema(v, &base.key(fname), positions, problems);
                }
                let origin = match &file.metadata {
                    Some(m) => format!("registry {}", m.name),
                    None => format!("registry {name}"),
                };
                self.add_types(name, &origin, file.types, positions, problems);
            }
            Err(p) => problems.extend(p),
        }
    }

    /// Why `entry`, declared in `name`, would be a second decoder for its format: another
    /// registry (or the same one) already declares the format at another version, or at the
    /// same version with other members. A reader decodes one shape per format (seed 002), so
    /// a later entry never silently wins. A built-in entry is the exception: a user registry
    /// declares its members, or moves it to the version the platform now speaks.
    pub fn second_decoder(&self, name: &str, entry: &VersionedSchema) -> Option<String> {
        let prev = self.versioned.get(&entry.schema)?;
        let origin = self.versioned_origin.get(&entry.schema).map(String::as_str).unwrap_or_default();
        if prev == entry || BUILTIN.iter().any(|(builtin, _)| *builtin == origin) {
            return None;
        }
        let (a, b) = (&prev.version, &entry.version);
        let schema = &entry.schema;
        Some(if a != b {
            format!("format {schema} has two decoders: version \"{a}\" ({origin}) and version \"{b}\" ({name}); a release ships one decoder per format, so remove the old version's entry when the new one ships")
        } else {
            let members = |m: &Option<Vec<String>>| m.as_ref().map_or("open".to_string(), |m| m.join(", "));
            format!(
                "format {schema} version \"{a}\" is declared twice with different members ({origin}: {}; {name}: {}); declare each format once",
                members(&prev.members),
                members(&entry.members)
            )
        })
    }

    /// The first format that two of these documents (or one of them and this registry)
    /// declare otherwise: a second decoder, said as `second_decoder` says it. Documents that
    /// are not registries, or that do not decode, are left to their own checks.
    pub fn second_decoder_among<'d>(
        &self,
        docs: impl IntoIterator<Item = (&'d str, &'d Value)>,
    ) -> Option<String> {
        // Only the formats are compared: the type declarations are not copied.
        let mut seen = Registry {
            versioned: self.versioned.clone(),
            versioned_origin: self.versioned_origin.clone(),
            ..Registry::default()
        };
        for (name, doc) in docs {
            if doc.get("kind").and_then(Value::as_str) != Some("Registry") {
                continue;
            }
            for (_, entry) in versioned_entries(doc) {
                // Two entries of one file are that file's own finding (CVN-109 where it is).
                let same_file = seen.versioned_origin.get(&entry.schema).is_some_and(|o| o == name);
                if let Some(why) = seen.second_decoder(name, &entry).filter(|_| !same_file) {
                    return Some(why);
                }
                seen.versioned_origin.insert(entry.schema.clone(), name.to_string());
                seen.versioned.insert(entry.schema.clone(), entry);
            }
        }
        None
    }

    /// The registry without what `origin` (`registry x`, `dialect y`) declared: what a
    /// document of that origin is held against when it is itself being checked.
    pub fn without_origin(&self, origin: &str) -> Registry {
        let mut r = self.clone();
        r.declarations.retain(|t| t.origin != origin);
        r.launcher.retain(|_, t| t.origin != origin);
        r.dialects.retain(|d| format!("dialect {}", d.name) != origin);
        r
    }

    fn add_types(
        &mut self,
        file: &str,
        origin: &str,
        types: Vec<TypeEntry>,
        positions: &Positions,
        problems: &mut Vec<Problem>,
    ) {
        let base = Location::new("/types", "types");
        for (i, entry) in types.into_iter().enumerate() {
            let schema = entry
                .schema
                .as_ref()
                .and_then(|v| load_schema(v, &base.index(i).key("schema"), positions, problems));
            let t = LauncherType {
                name: entry.name,
                category: entry.category,
                tier: entry.tier,
                schema,
                hints: entry.hints,
                origin: origin.to_string(),
                file: file.to_string(),
                pointer: format!("/types/{i}"),
                projects: entry.projects,
                upstreams: entry.upstreams,
                prefix_reason: entry.prefix_reason,
            };
            self.declarations.push(t.clone());
            self.launcher.insert((t.category, t.name.clone()), t);
        }
    }

    fn add_dialect(
        &mut self,
        file_name: &str,
        file: DialectFile,
        positions: &Positions,
        problems: &mut Vec<Problem>,
    ) {
        if file.extends != LAUNCHER_FORMAT {
            problems.push(Problem {
                pointer: "/extends".into(),
                at: Some(positions.locate("/extends")),
                message: format!("a dialect extends \"{LAUNCHER_FORMAT}\", found \"{}\"", file.extends),
            });
        }
        let names =
            |entries: Vec<DialectEntry>, list: &str, problems: &mut Vec<Problem>| -> Vec<DialectName> {
                entries
                    .into_iter()
                    .enumerate()
                    .map(|(i, e)| {
                        let at = Location::new(format!("/{list}/{i}/schema"), format!("{list}[{i}].schema"));
                        DialectName {
                            schema: e.schema.as_ref().and_then(|v| load_schema(v, &at, positions, problems)),
                            name: e.name,
                            category: e.category,
                            pointer: format!("/{list}/{i}"),
                        }
                    })
                    .collect()
            };
        let reserved = names(file.reserved, "reserved", problems);
        let shadowed = names(file.shadowed, "shadowed", problems);
        let origin = format!("dialect {}", file.metadata.name);
        self.add_types(file_name, &origin, file.types, positions, problems);
        self.dialects.push(Dialect {
            name: file.metadata.name,
            extends: file.extends,
            reserved,
            shadowed,
            file: file_name.to_string(),
        });
    }

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
