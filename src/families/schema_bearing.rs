//! The schema-bearing families: `crd` (`apiextensions.k8s.io/v1` CustomResourceDefinition)
//! and `xrd` (Crossplane `apiextensions.crossplane.io` CompositeResourceDefinition, v1 and
//! v2). Both carry one OpenAPI v3 schema per version; on UPDATE the old and new schema of
//! every version are diffed (`schema::diff`) and the evolution rules judge each change.
//!
//! What is judged:
//! - per version, every breaking change at its rule (CVN-201…CVN-209, CVN-220), as the
//!   family's stability policy says: `always` refuses it (unless every live object already
//!   satisfies the new schema, CVN-215), `from-ga` refuses it under a GA version (CVN-214)
//!   and warns before;
//! - served and stored versions and the storage flag (CVN-210); scope, group, kind, plural
//!   (CVN-211);
//! - served versions without conversion share one shape (CVN-216);
//! - for XRDs: one referenceable version, deprecation warnings naming a replacement, no
//!   version unserved before it was deprecated (CVN-217), a default composition (CVN-219).
//!
//! `evolve` is the pure computation; `covenant diff` prints it, the family reports it.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

mod outline;

pub use outline::{Outline, Source};

use super::{Claim, Context, Family};
use crate::cluster::Error as LookupError;
use crate::config::Enforcement;
use crate::pointer::At;
use crate::pointer::Location;
use crate::rules::evolution::{is_ga, judge, judge_resource, Judged, Stability};
use crate::rules::Action;
use crate::schema::diff::{diff, diff_shape, ChangeKind};
use crate::schema::evaluate::Evaluator;
use crate::schema::openapi::{load_keeping, load_text_beside, read_leading, Dialect, Keep, Layout, Placed};
use crate::schema::validate::{validate_evaluating, Required};
use crate::schema::Schema;
use crate::subject::{Model, Operation, Subject};
use crate::versioning::Bump;

/// Which schema-bearing document.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// A CustomResourceDefinition.
    Crd,
    /// A Crossplane CompositeResourceDefinition.
    Xrd,
}

impl Flavor {
    /// The family name.
    pub const fn family(self) -> &'static str {
        match self {
            Flavor::Crd => "crd",
            Flavor::Xrd => "xrd",
        }
    }

    /// The API group of the document.
    pub const fn group(self) -> &'static str {
        match self {
            Flavor::Crd => "apiextensions.k8s.io",
            Flavor::Xrd => "apiextensions.crossplane.io",
        }
    }

    /// The kind of the document.
    pub const fn kind(self) -> &'static str {
        match self {
            Flavor::Crd => "CustomResourceDefinition",
            Flavor::Xrd => "CompositeResourceDefinition",
        }
    }

    /// Which flavor a document is, by apiVersion and kind.
    pub fn of(doc: &Value) -> Option<Flavor> {
        let group = crate::subject::group_of(doc)?;
        let kind = doc.get("kind")?.as_str()?;
        [Flavor::Crd, Flavor::Xrd].into_iter().find(|f| f.group() == group && f.kind() == kind)
    }
}

/// One version of the document, as the rules need it.
#[derive(Clone, Debug)]
pub struct Version<'a> {
    /// Its name (`v1`).
    pub name: String,
    /// Its index in `spec.versions`.
    pub index: usize,
    /// Whether it is served.
    pub served: bool,
    /// Whether it is the storage version (CRD) or the referenceable one (XRD).
    pub storage: bool,
    /// Whether it is deprecated.
    pub deprecated: bool,
    /// Its deprecation warning.
    pub deprecation_warning: Option<String>,
    /// Its schema, as the document holds it; `None` when it declares none.
    pub raw: Option<Source<'a>>,
    /// Where its schema is in the document: its own, or the whole CRD's (`spec.validation`,
    /// apiextensions.k8s.io/v1beta1) for a version without one.
    pub schema_at: String,
    /// Its schema as the review's decoding read it, if it did.
    pub layout: Option<&'a Layout>,
}

/// Where apiextensions.k8s.io/v1beta1 kept one schema for every version of a CRD that has
/// none of its own (as the API server reads it, and as its conversion to v1 copies it).
const WHOLE_SCHEMA: &str = "/spec/validation/openAPIV3Schema";

fn versions<'o>(outline: &'o Outline<'_>, flavor: Flavor) -> Vec<Version<'o>> {
    let list = outline.doc.at("/spec/versions").and_then(Value::as_array);
    let whole = match flavor {
        Flavor::Crd => outline.doc.at(WHOLE_SCHEMA).map(Source::Tree),
        Flavor::Xrd => None,
    };
    list.into_iter()
        .flatten()
        .enumerate()
        .map(|(index, v)| {
            let flag = |k: &str| v.get(k).and_then(Value::as_bool).unwrap_or(false);
            let storage = match flavor {
                Flavor::Crd => flag("storage"),
                Flavor::Xrd => flag("referenceable"),
            };
            // A version's own schema, else the whole CRD's, and where it was read.
            let (raw, schema_at) = match (outline.schema(index), whole) {
                (None, Some(whole)) => (Some(whole), WHOLE_SCHEMA.to_string()),
                (own, _) => (own, format!("/spec/versions/{index}/schema/openAPIV3Schema")),
            };
            Version {
                name: v.get("name").and_then(Value::as_str).unwrap_or_default().to_string(),
                index,
                served: flag("served"),
                storage,
                deprecated: flag("deprecated"),
                deprecation_warning: v.get("deprecationWarning").and_then(Value::as_str).map(str::to_string),
                raw,
                schema_at,
                layout: outline.layout(index),
            }
        })
        .collect()
}

/// A finding that is not a schema change: its rule, where, and the message arguments
/// (`subject` is added when it is reported).
#[derive(Clone, Debug, PartialEq)]
pub struct Structural {
    /// The rule.
    pub rule: &'static str,
    /// Pointer into the new document.
    pub pointer: String,
    /// Message arguments other than `subject`.
    pub args: Vec<(&'static str, String)>,
}

impl Structural {
    /// The bump a structural finding implies: MAJOR (a version, identity or shape change
    /// breaks its consumers), except a missing default composition (CVN-219), which warns
    /// about what is not deterministic yet and breaks no one.
    pub fn bump(&self) -> Option<Bump> {
        (self.rule != "CVN-219").then_some(Bump::Major)
    }
}

/// The changes of one version.
#[derive(Clone, Debug, PartialEq)]
pub struct VersionChanges {
    /// The version name.
    pub version: String,
    /// Its index in the new document's `spec.versions`.
    pub index: usize,
    /// Where its schema is in the new document (`Version::schema_at`).
    pub schema_at: String,
    /// Every change, judged.
    pub changes: Vec<Judged>,
}

/// Everything an update of a CRD or XRD changes.
#[derive(Clone, Debug, PartialEq)]
pub struct Evolution {
    /// Which document.
    pub flavor: Flavor,
    /// `metadata.name`.
    pub name: String,
    /// The schema changes, per version present before and after.
    pub versions: Vec<VersionChanges>,
    /// Version, identity and shape findings.
    pub structural: Vec<Structural>,
    /// Schemas that could not be read, with where and why.
    pub unreadable: Vec<(String, String)>,
    /// Keywords of the new document's schemas that an OpenAPI v3 structural schema does not
    /// know (`maxLenght`), with where and why: read and compared as data, validating nothing.
    pub unknown_keywords: Vec<(String, String)>,
    /// The new document's schemas by version, as loaded for the diff (the live-object check
    /// validates against them).
    pub schemas: BTreeMap<String, Arc<Schema>>,
    /// The new storage version, when the storage version moved to a schema that accepts
    /// less than the old one (reported as CVN-210 unless every live object satisfies it).
    pub storage_move: Option<String>,
}

impl Evolution {
    /// The bump all schema changes together imply (structural findings are MAJOR).
    pub fn implied(&self) -> Bump {
        let changes = self.versions.iter().flat_map(|v| v.changes.iter().map(|c| c.bump));
        let structural = self.structural.iter().filter_map(Structural::bump);
        Bump::implied(changes.chain(structural))
    }

    /// How the document is named in messages: `CustomResourceDefinition widgets.example.com`.
    pub fn subject(&self, version: Option<&str>) -> String {
        match version {
            Some(v) => format!("{} {} version {v}", self.flavor.kind(), self.name),
            None => format!("{} {}", self.flavor.kind(), self.name),
        }
    }
}

/// The most distinct served schemas compared pairwise for a shared shape (CVN-216); past it,
/// each is compared with the first.
const MAX_PAIRWISE_SHAPES: usize = 16;

/// Schemas already loaded in one evolution, by their JSON: a CRD usually serves several
/// versions written as the same schema, and an update leaves most versions as they were, so
/// each distinct schema is loaded once and shared. A schema kept as text is told from those
/// loaded by its bytes (compared in full only when their length and ends agree), and parsed
/// only if it is new; a tree by a fingerprint of its JSON, so either costs one pass over
/// it, not one comparison with each. Each entry holds the source's print, the source, its
/// model and, for a text, where each node lies in it (for the same version's schema after the
/// update to share).
type Loaded<'a> = Vec<(u64, Source<'a>, Arc<Schema>, Option<Placed<'a>>)>;

/// A key that tells schema texts apart cheaply: the length and a hash of both ends (texts
/// that differ only in their middle are told apart by the full comparison that follows).
fn text_key(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    const END: usize = 256;
    let bytes = text.as_bytes();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.len().hash(&mut h);
    bytes[..bytes.len().min(END)].hash(&mut h);
    bytes[bytes.len().saturating_sub(END)..].hash(&mut h);
    h.finish()
}

fn same_source(a: &Source<'_>, b: &Source<'_>) -> bool {
    match (a, b) {
        (Source::Text(a), Source::Text(b)) => a == b,
        (Source::Tree(a), Source::Tree(b)) => a == b,
        _ => false,
    }
}

/// A hash of a JSON value's serialization (object members in the map's order, which is the
/// same for equal values).
fn fingerprint(v: &Value) -> u64 {
    use std::hash::Hasher;
    struct Feed(std::collections::hash_map::DefaultHasher);
    impl std::io::Write for Feed {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.write(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut feed = Feed(std::collections::hash_map::DefaultHasher::new());
    // Writing into a hasher cannot fail.
    let _ = serde_json::to_writer(&mut feed, v);
    feed.0.finish()
}

/// Load each version's schema, once per distinct source. Beside `twins` (the schemas before
/// the update, by version), a version's schema text shares every node whose bytes it repeats
/// from the same version's schema before.
fn load_schemas<'a>(
    vs: &[Version<'a>],
    keep: Keep,
    loaded: &mut Loaded<'a>,
    problems: &mut Vec<(String, String)>,
    twins: Option<&BTreeMap<String, Arc<Schema>>>,
) -> BTreeMap<String, Arc<Schema>> {
    let mut out = BTreeMap::new();
    for v in vs {
        let Some(raw) = v.raw else { continue };
        // Read with the review, as this evolution reads it: taken as it is.
        let read = match (raw, v.layout) {
            (Source::Text(text), Some(layout)) if layout.keep() == keep => Placed::of(text, layout),
            _ => None,
        };
        if let Some(placed) = read {
            let schema = placed.root().clone();
            if !loaded.iter().any(|(_, _, s, _)| Arc::ptr_eq(s, &schema)) {
                loaded.push((text_key(placed.text()), raw, schema.clone(), Some(placed)));
            }
            out.insert(v.name.clone(), schema);
            continue;
        }
        let print = match raw {
            Source::Text(text) => text_key(text),
            Source::Tree(tree) => fingerprint(tree),
        };
        if let Some((_, _, s, _)) =
            loaded.iter().find(|(p, seen, _, _)| *p == print && same_source(seen, &raw))
        {
            out.insert(v.name.clone(), s.clone());
            continue;
        }
        let at = Location::new(v.schema_at.clone(), "");
        let twin = twins
            .and_then(|t| t.get(&v.name))
            .and_then(|t| loaded.iter().find(|(_, _, s, _)| Arc::ptr_eq(s, t)))
            .and_then(|(_, _, _, placed)| placed.as_ref());
        let schema = match raw {
            Source::Text(text) => {
                load_text_beside(text, &at, keep, twin).map(|p| (p.root().clone(), Some(p)))
            }
            Source::Tree(tree) => {
                load_keeping(tree, &at, Dialect::OpenApi, keep).map(|s| (Arc::new(s), None))
            }
        };
        match schema {
            Ok((s, placed)) => {
                loaded.push((print, raw, s.clone(), placed));
                out.insert(v.name.clone(), s);
            }
            // Not kept: the same schema under another version reports its own problems.
            Err(ps) => problems.extend(ps.into_iter().map(|p| (p.at.pointer.clone(), p.to_string()))),
        }
    }
    out
}

/// Schemas no version takes, said (CVN-109 in a check, an error in a diff) and never passed as
/// a document without changes: apiextensions.k8s.io/v1beta1's `spec.validation` in a CRD that
/// names its one version in the deprecated `spec.version`, without `spec.versions`; and, in
/// the new document, no version at all (`spec.versions` missing, misspelled or empty), where
/// nothing would be read or compared. `new` says which of the two documents `doc` is.
fn unread_schema(doc: &Value, new: bool) -> Option<(String, String)> {
    let listed = doc.at("/spec/versions");
    if listed.and_then(Value::as_array).is_some_and(|vs| !vs.is_empty()) {
        return None;
    }
    if doc.at("/spec/validation").is_some() {
        let which = if new { "the schema is" } else { "the schema before the update was" };
        let why = format!(
            "{which} under spec.validation (apiextensions.k8s.io/v1beta1) with no spec.versions \
             to apply it to, so it is neither read nor compared; list the versions under \
             spec.versions (the whole CRD's schema then applies to each that has none of its \
             own), or write each version's schema as apiextensions.k8s.io/v1 declares it"
        );
        return Some(("/spec/validation".to_string(), why));
    }
    if !new {
        return None;
    }
    let found = match listed {
        None => "there is no spec.versions".to_string(),
        Some(Value::Array(_)) => "spec.versions is empty".to_string(),
        Some(other) => format!("spec.versions is {}", crate::strict::describe(other)),
    };
    let why = format!(
        "no version is declared ({found}), so there is no schema to read or compare; \
         expected spec.versions, a list of versions each with its name and schema"
    );
    Some(("/spec/versions".to_string(), why))
}

/// A version of the new document that declares no schema where one is required, said
/// (CVN-109 in a check, an error in a diff) rather than left out of the comparison: every
/// version of an apiextensions.k8s.io/v1 CRD needs `schema.openAPIV3Schema` (the API server
/// refuses one without), and an XRD version's `schema`, optional, holds one when it is there
/// (`openAPIV3Schma` misspelled left the version with nothing to compare).
fn schemaless(doc: &Value, version: &Version<'_>, flavor: Flavor) -> Option<(String, String)> {
    if version.raw.is_some() {
        return None;
    }
    let at = format!("/spec/versions/{}/schema", version.index);
    let found = match doc.at(&at) {
        None if flavor == Flavor::Crd && text(doc, "/apiVersion") == "apiextensions.k8s.io/v1" => {
            "there is no schema member".to_string()
        }
        None => return None,
        Some(Value::Object(members)) if members.is_empty() => "its schema is empty".to_string(),
        Some(Value::Object(members)) => {
            let names: Vec<&str> = members.keys().map(String::as_str).collect();
            format!("its schema has no openAPIV3Schema, only {}", names.join(", "))
        }
        Some(other) => format!("its schema is {}", crate::strict::describe(other)),
    };
    let name = if version.name.is_empty() { format!("#{}", version.index) } else { version.name.clone() };
    let why = format!(
        "version {name} declares no schema ({found}), so its objects are neither checked nor \
         compared; expected schema.openAPIV3Schema, the version's OpenAPI v3 schema"
    );
    Some((at, why))
}

fn text(doc: &Value, pointer: &str) -> String {
    doc.at(pointer).and_then(Value::as_str).unwrap_or_default().to_string()
}

fn converts(doc: &Value) -> bool {
    doc.at("/spec/conversion/strategy").and_then(Value::as_str) == Some("Webhook")
}

/// Whether two schemas differ in shape: any change that is not annotation-only.
fn shape_differences(a: &Schema, b: &Schema) -> Vec<String> {
    judge(diff_shape(a, b, "")).into_iter().map(|j| j.message()).collect()
}

/// Diff an update of a CRD or XRD. `old` and `new` must be the same flavor.
pub fn evolve(old: &Value, new: &Value) -> Evolution {
    evolve_outlines(&Outline::of_value(old), &Outline::of_value(new))
}

/// Diff an update of a CRD or XRD read as outlines (its schemas apart, as text or trees).
pub fn evolve_outlines(old_outline: &Outline<'_>, new_outline: &Outline<'_>) -> Evolution {
    evolve_outlines_keeping(old_outline, new_outline, Keep::ALL)
}

/// Diff an update read as outlines, the schemas loaded keeping what `keep` says: without
/// descriptions (`Keep::SHAPE`) the evolution is the one with descriptions less its
/// description changes (annotations, PATCH), and its schemas carry none.
pub fn evolve_outlines_keeping(
    old_outline: &Outline<'_>,
    new_outline: &Outline<'_>,
    keep: Keep,
) -> Evolution {
    let (old, new): (&Value, &Value) = (&old_outline.doc, &new_outline.doc);
    let flavor = Flavor::of(new).or_else(|| Flavor::of(old)).unwrap_or(Flavor::Crd);
    let name = text(new, "/metadata/name");
    let (old_versions, new_versions) = (versions(old_outline, flavor), versions(new_outline, flavor));
    let mut unreadable = Vec::new();
    let mut scratch = Vec::new();
    let mut loaded = Loaded::new();
    let old_schemas = load_schemas(&old_versions, keep, &mut loaded, &mut scratch, None);
    let new_schemas = load_schemas(&new_versions, keep, &mut loaded, &mut unreadable, Some(&old_schemas));
    unreadable.extend(unread_schema(new, true).or_else(|| unread_schema(old, false)));
    unreadable.extend(new_versions.iter().filter_map(|v| schemaless(new, v, flavor)));
    let mut unknown = Vec::new();
    for v in &new_versions {
        if let Some(schema) = new_schemas.get(&v.name) {
            unknown.extend(crate::schema::openapi::unknown_keywords(schema, &v.schema_at));
        }
    }
    let mut structural = Vec::new();

    // Identity.
    let mut identity = vec![
        ("/spec/group", "spec.group"),
        ("/spec/names/kind", "spec.names.kind"),
        ("/spec/names/plural", "spec.names.plural"),
    ];
    match flavor {
        Flavor::Crd => identity.push(("/spec/scope", "spec.scope")),
        Flavor::Xrd => {
            identity.push(("/spec/claimNames/kind", "spec.claimNames.kind"));
            identity.push(("/spec/claimNames/plural", "spec.claimNames.plural"));
        }
    }
    for (pointer, member) in identity {
        let (a, b) = (old.at(pointer), new.at(pointer));
        if a.is_some() && a != b {
            let show = |v: Option<&Value>| v.map(|v| v.to_string()).unwrap_or_else(|| "(absent)".into());
            structural.push(Structural {
                rule: "CVN-211",
                pointer: pointer.into(),
                args: vec![("member", member.into()), ("before", show(a)), ("after", show(b))],
            });
        }
    }

    // Versions: removed, unserved, stored, storage moved.
    let stored: Vec<String> = old
        .at("/status/storedVersions")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).map(str::to_string).collect())
        .unwrap_or_default();
    for ov in &old_versions {
        let nv = new_versions.iter().find(|v| v.name == ov.name);
        let detail = match nv {
            None if stored.contains(&ov.name) => None, // reported below, with every stored version
            None if ov.served => Some(format!("served version {} was removed", ov.name)),
            // A version deprecated in the previous release may stop being served: that is
            // the promotion's last step but one (removal follows). An XRD's version unserved
            // without that release is CVN-217's, said once there.
            Some(nv) if ov.served && !nv.served && !ov.deprecated && flavor == Flavor::Crd => {
                Some(format!("version {} is no longer served", ov.name))
            }
            _ => None,
        };
        if let Some(detail) = detail {
            let pointer =
                nv.map(|v| format!("/spec/versions/{}", v.index)).unwrap_or_else(|| "/spec/versions".into());
            structural.push(Structural { rule: "CVN-210", pointer, args: vec![("detail", detail)] });
        }
    }
    for version in stored.iter().filter(|s| !new_versions.iter().any(|v| &v.name == *s)) {
        let detail = format!(
            "version {version} was removed from spec.versions while status.storedVersions still lists it; objects stored at it can no longer be read"
        );
        structural.push(Structural {
            rule: "CVN-210",
            pointer: "/spec/versions".into(),
            args: vec![("detail", detail)],
        });
    }
    let storage = |vs: &[Version]| vs.iter().find(|v| v.storage).map(|v| v.name.clone());
    let mut storage_move = None;
    if flavor == Flavor::Crd {
        if let (Some(a), Some(b)) = (storage(&old_versions), storage(&new_versions)) {
            if a != b && !converts(new) {
                if let (Some(sa), Some(sb)) = (old_schemas.get(&a), new_schemas.get(&b)) {
                    // Objects stored at the old storage version are read as the new one: only
                    // a new storage schema that accepts less than the old one is unsafe.
                    let differences: Vec<String> = judge(diff_shape(sa, sb, ""))
                        .into_iter()
                        .filter(|j| j.bump == Bump::Major)
                        .map(|j| j.message())
                        .collect();
                    if let Some(first) = differences.first() {
                        storage_move = Some(b.clone());
                        let index = new_versions.iter().find(|v| v.name == b).map(|v| v.index).unwrap_or(0);
                        structural.push(Structural {
                            rule: "CVN-210",
                            pointer: format!("/spec/versions/{index}/storage"),
                            args: vec![(
                                "detail",
                                format!(
                                    "the storage version moved from {a} to {b} without a conversion webhook, and the new one accepts less than the old one ({first}{})",
                                    if differences.len() > 1 { format!(" and {} more", differences.len() - 1) } else { String::new() }
                                ),
                            )],
                        });
                    }
                }
            }
        }
    }

    // Served versions share one shape when nothing converts (XRDs never convert). Only pairs
    // that newly differ are reported. Versions written with the same schema before and after
    // share one loaded schema, so each distinct pair of schemas is diffed once: a CRD serving
    // hundreds of versions of one shape costs one group, not every pair.
    if flavor == Flavor::Xrd || !converts(new) {
        type Group<'g> = (&'g Arc<Schema>, Option<&'g Arc<Schema>>, Vec<&'g Version<'g>>);
        let mut groups: Vec<Group> = Vec::new();
        for v in new_versions.iter().filter(|v| v.served) {
            let Some(ns) = new_schemas.get(&v.name) else { continue };
            let os = old_schemas.get(&v.name);
            let same = |g: &&mut Group| {
                Arc::ptr_eq(g.0, ns)
                    && match (g.1, os) {
                        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
                        (None, None) => true,
                        _ => false,
                    }
            };
            match groups.iter_mut().find(same) {
                Some(g) => g.2.push(v),
                None => groups.push((ns, os, vec![v])),
            }
        }
        let mut found: Vec<(usize, usize, Structural)> = Vec::new();
        // Every pair of distinct schemas is compared while there are few; past that (a CRD
        // serving dozens of schemas that should share one shape) each is compared with the
        // first only, so the work stays linear in the versions.
        let pairs: Vec<(usize, usize)> = if groups.len() <= MAX_PAIRWISE_SHAPES {
            (0..groups.len()).flat_map(|i| (i + 1..groups.len()).map(move |j| (i, j))).collect()
        } else {
            (1..groups.len()).map(|j| (0, j)).collect()
        };
        for (i, j) in pairs {
            let (ga, gb) = (&groups[i], &groups[j]);
            let now = shape_differences(ga.0, gb.0);
            if now.is_empty() {
                continue;
            }
            let before = match (ga.1, gb.1) {
                (Some(oa), Some(ob)) if flavor == Flavor::Xrd || !converts(old) => shape_differences(oa, ob),
                _ => Vec::new(),
            };
            let new_ones: Vec<&String> = now.iter().filter(|d| !before.contains(d)).collect();
            let Some(first) = new_ones.first() else { continue };
            let more = if new_ones.len() > 1 {
                format!(" (and {} more)", new_ones.len() - 1)
            } else {
                String::new()
            };
            for x in &ga.2 {
                for y in &gb.2 {
                    let (a, b) = if x.index < y.index { (x, y) } else { (y, x) };
                    found.push((
                        a.index,
                        b.index,
                        Structural {
                            rule: "CVN-216",
                            pointer: format!("/spec/versions/{}", b.index),
                            args: vec![
                                ("a", a.name.clone()),
                                ("b", b.name.clone()),
                                ("detail", format!("{first}{more}")),
                            ],
                        },
                    ));
                }
            }
        }
        found.sort_by_key(|(a, b, _)| (*a, *b));
        structural.extend(found.into_iter().map(|(_, _, s)| s));
    }

    // XRD deprecation discipline and composition.
    if flavor == Flavor::Xrd {
        xrd_rules(old, new, &old_versions, &new_versions, &mut structural);
    }

    // Schema changes per version present before and after.
    // Versions that share their schemas before and after (each loaded once) share their
    // changes; a version whose schema is the same JSON before and after has one schema, and
    // the diff of a schema against itself is empty without a look inside.
    let mut per_version: Vec<VersionChanges> = Vec::new();
    // Each pair diffed, with the entry of `per_version` that holds its changes.
    let mut diffed: Vec<(&Arc<Schema>, &Arc<Schema>, usize)> = Vec::new();
    for nv in &new_versions {
        let (Some(os), Some(ns)) = (old_schemas.get(&nv.name), new_schemas.get(&nv.name)) else { continue };
        let changes = match diffed.iter().find(|(o, n, _)| Arc::ptr_eq(o, os) && Arc::ptr_eq(n, ns)) {
            Some(&(_, _, first)) => per_version[first].changes.clone(),
            None => {
                diffed.push((os, ns, per_version.len()));
                judge_resource(diff(os, ns, ""))
            }
        };
        per_version.push(VersionChanges {
            version: nv.name.clone(),
            index: nv.index,
            schema_at: nv.schema_at.clone(),
            changes,
        });
    }
    Evolution {
        flavor,
        name,
        versions: per_version,
        structural,
        unreadable,
        unknown_keywords: unknown,
        schemas: new_schemas,
        storage_move,
    }
}

fn xrd_rules(
    old: &Value,
    new: &Value,
    old_versions: &[Version],
    new_versions: &[Version],
    out: &mut Vec<Structural>,
) {
    let referenceable: Vec<&Version> = new_versions.iter().filter(|v| v.storage).collect();
    if referenceable.len() != 1 && !new_versions.is_empty() {
        let names: Vec<&str> = referenceable.iter().map(|v| v.name.as_str()).collect();
        let reason = if names.is_empty() {
            "no version is referenceable; exactly one must be".to_string()
        } else {
            format!("{} versions are referenceable ({}); exactly one must be", names.len(), names.join(", "))
        };
        out.push(Structural {
            rule: "CVN-217",
            pointer: "/spec/versions".into(),
            args: vec![("reason", reason)],
        });
    }
    for v in new_versions.iter().filter(|v| v.deprecated) {
        let others: Vec<&str> =
            new_versions.iter().filter(|o| o.name != v.name).map(|o| o.name.as_str()).collect();
        let names_replacement =
            v.deprecation_warning.as_deref().is_some_and(|w| others.iter().any(|o| w.contains(o)));
        if !names_replacement {
            let reason = match &v.deprecation_warning {
                None => format!(
                    "deprecated version {} carries no deprecationWarning naming its replacement",
                    v.name
                ),
                Some(w) => format!(
                    "the deprecationWarning of version {} (\"{w}\") names none of the other versions ({})",
                    v.name,
                    if others.is_empty() { "there are none".to_string() } else { others.join(", ") }
                ),
            };
            out.push(Structural {
                rule: "CVN-217",
                pointer: format!("/spec/versions/{}", v.index),
                args: vec![("reason", reason)],
            });
        }
    }
    // A version stops being served only after a release in which it was deprecated.
    for ov in old_versions.iter().filter(|v| v.served && !v.deprecated) {
        let gone = new_versions.iter().find(|v| v.name == ov.name).is_none_or(|v| !v.served);
        if gone {
            out.push(Structural {
                rule: "CVN-217",
                pointer: "/spec/versions".into(),
                args: vec![(
                    "reason",
                    format!(
                        "version {} stopped being served without a release in which it was deprecated",
                        ov.name
                    ),
                )],
            });
        }
    }
    if new.at("/spec/defaultCompositionRef").is_none() && old.at("/spec/defaultCompositionRef").is_none() {
        out.push(Structural { rule: "CVN-219", pointer: "/spec".into(), args: vec![] });
    }
}

/// The pointer into the schema document for a data pointer (`/spec/a/*` →
/// `/properties/spec/properties/a/items`), as far as the schema document has it.
pub fn schema_pointer(raw: &Value, data_pointer: &str) -> String {
    let mut out = String::new();
    let mut node = raw;
    for token in data_pointer.split('/').skip(1) {
        let step = if token == "*" {
            if node.get("items").is_some() {
                "/items".to_string()
            } else {
                "/additionalProperties".to_string()
            }
        } else {
            format!("/properties/{token}")
        };
        match node.at(&step) {
            Some(next) => {
                node = next;
                out.push_str(&step);
            }
            None => break,
        }
    }
    out
}

/// `schema_pointer` over a loaded schema: where a data pointer's place is declared, as far as
/// the schema declares it. A version's findings are placed with it, from the model the diff
/// already loaded, so a schema's text is never parsed again to say where a change is. (One
/// difference: a `*` under a boolean `additionalProperties` stops at the object, where the
/// tree's walk named the boolean.)
pub fn declared_at(schema: &Schema, data_pointer: &str) -> String {
    let mut out = String::new();
    let mut node = schema;
    for token in data_pointer.split('/').skip(1) {
        let (step, next) = if token == "*" {
            match (&node.items, &node.additional) {
                (Some(items), _) => ("/items", items),
                (None, crate::schema::Additional::Schema(values)) => ("/additionalProperties", values),
                _ => break,
            }
        } else {
            match node.properties.get(crate::pointer::unescape(token).as_str()) {
                Some(property) => ("/properties/", property),
                None => break,
            }
        };
        out.push_str(step);
        if token != "*" {
            out.push_str(token);
        }
        node = next;
    }
    out
}

/// The family.
#[derive(Debug)]
pub struct SchemaBearing {
    flavor: Flavor,
    stability: Stability,
    enforcement: Enforcement,
}

impl SchemaBearing {
    /// The family for one flavor under a stability policy, enforcing the CRDs or XRDs
    /// `enforcement` selects and advising on the rest.
    pub fn new(flavor: Flavor, stability: Stability, enforcement: Enforcement) -> SchemaBearing {
        SchemaBearing { flavor, stability, enforcement }
    }

    /// Make the context advisory unless the document is enforced. An update that removes
    /// the opt-in is still judged under it; the next one is advisory.
    fn advise_unless_enforced(&self, new: &Value, old: Option<&Value>, cx: &mut Context<'_>) {
        if self.enforcement.enforces(new) || old.is_some_and(|o| self.enforcement.enforces(o)) {
            return;
        }
        cx.advisory = Some(format!(
            "advisory ({} not opted in to enforcement: label {}=enforce)",
            self.flavor.kind(),
            self.enforcement.label
        ));
    }
}

impl Family for SchemaBearing {
    fn name(&self) -> &'static str {
        self.flavor.family()
    }

    fn claims(&self) -> Vec<Claim> {
        vec![Claim::Kind { group: self.flavor.group().into(), kind: self.flavor.kind().into() }]
    }

    fn reading(&self) -> crate::subject::Reading {
        crate::subject::Reading::Apart(outline::SCHEMAS, Some(read_schema))
    }

    fn check(&self, subject: &Subject, cx: &mut Context<'_>) {
        if subject.operation != Operation::Update {
            if subject.operation == Operation::Create {
                self.created(subject, cx);
            }
            return;
        }
        let (Some(new), Some(old)) = (&subject.object, &subject.old_object) else { return };
        let (Some(new), Some(old)) = (outline(new), outline(old)) else { return };
        self.advise_unless_enforced(&new.doc, Some(&old.doc), cx);
        let evolution = evolve_outlines_keeping(&old, &new, judged(&new));
        self.report(&evolution, &new, cx);
    }
}

/// What the webhook reads of a document's schemas: their shape. A description change is an
/// annotation (PATCH), never reported on an update, and descriptions are most of a CRD's
/// bytes; they are read only when a derived-name template may cite one as a limit's reason
/// (CVN-218).
fn judged(new: &Outline<'_>) -> Keep {
    if super::derived::declares(&new.doc) {
        Keep::ALL
    } else {
        Keep::SHAPE
    }
}

/// A version schema read while the review is decoded, as the webhook judges it (`judged`):
/// its shape, beside the schema it most likely repeats in part, so a CRD update's schema texts
/// are each read once, and the nodes an update left as they were are shared, not built twice.
fn read_schema(text: &str, like: Option<(&str, &Model)>) -> Option<(Model, usize)> {
    read_keeping(Keep::SHAPE, text, like)
}

/// A version schema read whole, descriptions too (what `covenant diff` lists).
fn read_schema_whole(text: &str, like: Option<(&str, &Model)>) -> Option<(Model, usize)> {
    read_keeping(Keep::ALL, text, like)
}

fn read_keeping(keep: Keep, text: &str, like: Option<(&str, &Model)>) -> Option<(Model, usize)> {
    let twin = like.and_then(|(text, model)| Placed::of(text, &model.0));
    let layout = read_leading(text, keep, twin.as_ref())?;
    let len = layout.len();
    Some((Model(Arc::new(layout)), len))
}

/// How a document's version schemas are read in the pass that reads the document, keeping
/// what `keep` says; `None` for a keep no evolution asks for.
fn schema_reader(keep: Keep) -> Option<crate::subject::ModelReader> {
    match keep {
        Keep::SHAPE => Some(read_schema),
        Keep::ALL => Some(read_schema_whole),
        _ => None,
    }
}

/// The outline of an object: from the skeleton read with the review, or read from its text
/// when it is still raw, so its version schemas are parsed only where the evolution needs
/// them; from its tree otherwise. `None` when it cannot be read, which the engine then
/// reports (CVN-109).
fn outline(object: &crate::subject::Object) -> Option<Outline<'_>> {
    if let Some(text) = object.text() {
        let outline = match object.skeleton() {
            Some(skeleton) => Outline::of_skeleton(text, skeleton),
            None => Outline::of_text(text).ok(),
        };
        if outline.is_some() {
            return outline;
        }
    }
    object.value().ok().map(Outline::of_value)
}

/// What leaves the new document's schemas unread or validating less than they say, as
/// CVN-109 findings: a schema that cannot be read, and a keyword no structural schema knows.
fn unread(evolution: &Evolution, cx: &mut Context<'_>) {
    let subject = evolution.subject(None);
    for (pointer, why) in &evolution.unreadable {
        let reason = format!("{subject}: the schema cannot be read: {why}");
        cx.report("CVN-109", pointer.clone(), vec![("reason", reason)]);
    }
    for (pointer, why) in &evolution.unknown_keywords {
        cx.report("CVN-109", pointer.clone(), vec![("reason", format!("{subject}: {why}"))]);
    }
}

impl SchemaBearing {
    /// On CREATE there is nothing to diff, but what holds between the versions of one
    /// document still does: served versions that nothing converts share one shape (CVN-216),
    /// and an XRD's version discipline (CVN-217, CVN-219). It is judged as an update of the
    /// same document with no versions, so every served version is new and nothing else moved.
    fn created(&self, subject: &Subject, cx: &mut Context<'_>) {
        let Some(new) = subject.object.as_ref().and_then(outline) else { return };
        self.advise_unless_enforced(&new.doc, None, cx);
        let mut empty = new.doc.clone().into_owned();
        if let Some(spec) = empty.get_mut("spec").and_then(Value::as_object_mut) {
            spec.insert("versions".into(), Value::Array(Vec::new()));
            spec.remove("validation");
        }
        let empty = Outline::of_value(&empty);
        let evolution = evolve_outlines_keeping(&empty, &new, judged(&new));
        unread(&evolution, cx);
        let subject_text = evolution.subject(None);
        derived_names(&evolution, &new, cx);
        for s in evolution.structural {
            report_structural(s, &subject_text, cx);
        }
    }

    fn report(&self, evolution: &Evolution, new: &Outline<'_>, cx: &mut Context<'_>) {
        derived_names(evolution, new, cx);
        unread(evolution, cx);
        let live = self.live_check(evolution, new, cx);
        for s in &evolution.structural {
            // A storage move every live object satisfies is safe: what is stored reads as
            // the new storage version.
            let proved = |v: &String| live.as_ref().is_some_and(|l| l.allowed(v));
            if s.rule == "CVN-210"
                && s.pointer.ends_with("/storage")
                && evolution.storage_move.as_ref().is_some_and(proved)
            {
                continue;
            }
            report_structural(s.clone(), &evolution.subject(None), cx);
        }
        for v in &evolution.versions {
            let schema = evolution.schemas.get(&v.version);
            let base = &v.schema_at;
            let subject_text = evolution.subject(Some(&v.version));
            for j in v.changes.iter().filter(|j| j.bump == Bump::Major) {
                let Some(rule) = j.rule else { continue };
                let pointer = format!(
                    "{base}{}",
                    schema.map(|s| declared_at(s, &j.change.pointer)).unwrap_or_default()
                );
                let args = vec![("subject", subject_text.clone()), ("detail", j.message())];
                match self.stability {
                    Stability::FromGa if is_ga(&v.version) => {
                        let mut args = args;
                        args.push(("version", v.version.clone()));
                        cx.report_change("CVN-214", pointer, args, Some(Bump::Major), None);
                    }
                    Stability::FromGa => {
                        // No stability promise before GA: a warning, with the changelog hint.
                        let mut args = args;
                        args[1].1.push_str(&format!(
                            " (no stability promise before GA: record it in the format changelog; it breaks once {} is GA)",
                            v.version
                        ));
                        cx.report_change(rule, pointer, args, Some(Bump::Major), Some(Action::Warn));
                    }
                    _ => {
                        let at_most = live.as_ref().filter(|l| l.allowed(&v.version)).map(|_| Action::Warn);
                        cx.report_change(rule, pointer, args, Some(Bump::Major), at_most);
                    }
                }
            }
        }
    }

    /// CVN-215: the live objects of every version that tightened (an XRD's composites and
    /// claims), against its new schema,
    /// evaluated as the apiserver validates them (types, bounds, enums, required keys,
    /// closedness, RE2 patterns, formats, list types and CEL rules). Returns which versions
    /// every live object satisfies; `None` when no cluster state was available (the
    /// tightening findings then stand as they are).
    fn live_check(
        &self,
        evolution: &Evolution,
        outline: &Outline<'_>,
        cx: &mut Context<'_>,
    ) -> Option<LiveOutcome> {
        if self.stability != Stability::Always || !cx.runs("CVN-215") {
            return None;
        }
        // A storage version moved to a schema that accepts less is proved the same way.
        let storage_moved = evolution.storage_move.as_deref();
        let mut work: Vec<(&str, usize, &[Judged])> = evolution
            .versions
            .iter()
            .filter(|v| {
                v.changes.iter().any(|j| j.bump == Bump::Major && j.rule.is_some())
                    || storage_moved == Some(v.version.as_str())
            })
            .map(|v| (v.version.as_str(), v.index, v.changes.as_slice()))
            .collect();
        let new_versions = versions(outline, self.flavor);
        let new: &Value = &outline.doc;
        if let Some(moved) = storage_moved.filter(|m| !work.iter().any(|(v, _, _)| v == m)) {
            if let Some(v) = new_versions.iter().find(|v| v.name == moved) {
                work.push((moved, v.index, &[]));
            }
        }
        if work.is_empty() {
            return None;
        }
        let group = text(new, "/spec/group");
        let kind = text(new, "/spec/names/kind");
        let plural = text(new, "/spec/names/plural");
        let budget = cx.budget;
        // An XRD's live objects are its composites and, where it offers one, its claims: a
        // claim carries the same spec, and one still using a removed value is as broken.
        let claim_kind = match self.flavor {
            Flavor::Xrd => new.at("/spec/claimNames/kind").and_then(Value::as_str).map(str::to_string),
            Flavor::Crd => None,
        };
        let listed = cx.cluster.list(&group, &kind, None, budget).and_then(|mut objects| {
            if let Some(claims) = &claim_kind {
                objects.extend(cx.cluster.list(&group, claims, None, budget)?);
            }
            Ok(objects)
        });
        let objects = match listed {
            Ok(objects) => objects,
            Err(e) => {
                // No cluster state at all (offline): the tightening findings stand as they
                // are. A lookup that could not finish, was refused or met a stale view: the
                // failure policy decides, for the lookup and for the tightenings it could
                // not clear.
                let e = match e {
                    LookupError::Forbidden { verb, reason, .. } => {
                        LookupError::Forbidden { resource: format!("{plural}.{group}"), verb, reason }
                    }
                    e => e,
                };
                let allow = cx.lookup_failed("CVN-215", &e)?;
                return allow.then(|| LiveOutcome {
                    satisfied: work.iter().map(|(v, _, _)| v.to_string()).collect(),
                });
            }
        };
        let mut outcome = LiveOutcome::default();
        // Built at the first live object: with none (a kind nobody uses yet) the CEL
        // environment is not needed.
        let mut evaluator: Option<Evaluator> = None;
        let converted = converts(new);
        for (version, index, changes) in work {
            let subject_text = evolution.subject(Some(version));
            let pointer = format!("/spec/versions/{index}/schema/openAPIV3Schema");
            let Some(mut schema) = evolution.schemas.get(version).map(|s| Schema::clone(s)) else {
                continue;
            };
            for key in ["apiVersion", "kind", "metadata"] {
                schema
                    .properties
                    .entry(key.to_string())
                    .or_insert_with(|| std::sync::Arc::new(Schema::any()));
            }
            if self.flavor == Flavor::Xrd {
                crossplane_machinery(&mut schema);
            }
            // Without a conversion webhook the same stored objects are served at every
            // version, so every object must satisfy every tightened version's schema. With a
            // webhook, only objects listed at this version say anything about it.
            let of_version: Vec<_> = objects
                .iter()
                .filter(|o| {
                    !converted
                        || o.get("apiVersion")
                            .and_then(Value::as_str)
                            .and_then(|a| a.rsplit_once('/'))
                            .map(|(_, v)| v)
                            == Some(version)
                })
                .collect();
            let mut unprovable: Vec<String> = changes
                .iter()
                .filter(|j| j.bump == Bump::Major && j.change.kind == ChangeKind::Unclassified)
                .map(|j| j.message())
                .collect();
            if converted && of_version.is_empty() && !objects.is_empty() {
                unprovable.push(format!(
                    "no live object was listed at version {version} (a conversion webhook serves them converted)"
                ));
            }
            // What the tightening added: only these rules and patterns need proving; those
            // the schema already had were the apiserver's to enforce.
            let added: Vec<String> = changes
                .iter()
                .filter(|j| j.bump == Bump::Major)
                .filter_map(|j| match &j.change.after {
                    Some(Value::String(p)) => Some(format!("{p:?}")),
                    Some(v) => v.get("rule").and_then(Value::as_str).map(|r| format!("`{r}`")),
                    None => None,
                })
                .collect();
            if let Some(ev) = evaluator.as_mut() {
                ev.unprovable.clear();
            }
            let mut failing = Vec::new();
            for o in &of_version {
                if cx.stop.raised() {
                    unprovable
                        .push("the request's deadline passed before every live object was checked".into());
                    break;
                }
                let ev = evaluator.get_or_insert_with(|| Evaluator::with_stop(cx.stop.flag()));
                let out = validate_evaluating(&schema, o, &Location::default(), Required::Everywhere, ev);
                if let Some(first) = out.violations.first() {
                    let ns = o.at("/metadata/namespace").and_then(Value::as_str);
                    let name = o.at("/metadata/name").and_then(Value::as_str).unwrap_or("?");
                    let who = ns.map(|n| format!("{n}/{name}")).unwrap_or_else(|| name.to_string());
                    let at = if first.at.pointer.is_empty() { "(root)" } else { first.at.pointer.as_str() };
                    failing.push(format!("{who} at {at} ({})", first.message()));
                }
            }
            let reasons = evaluator.as_ref().map(|ev| ev.unprovable.as_slice()).unwrap_or_default();
            unprovable
                .extend(reasons.iter().filter(|why| added.iter().any(|a| why.contains(a.as_str()))).cloned());
            let outcome_text = if !failing.is_empty() {
                let shown: Vec<&String> = failing.iter().take(3).collect();
                let more = if failing.len() > 3 {
                    format!(" and {} more", failing.len() - 3)
                } else {
                    String::new()
                };
                format!(
                    "{} of {} live object(s) violate the tightened schema: {}{more}",
                    failing.len(),
                    of_version.len(),
                    shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("; ")
                )
            } else if !unprovable.is_empty() {
                format!(
                    "{} live object(s) pass every check covenant can evaluate, but it cannot prove they satisfy: {}; the tightening stays refused",
                    of_version.len(),
                    unprovable.join("; ")
                )
            } else {
                outcome.satisfied.push(version.to_string());
                let outcome_text = if of_version.is_empty() {
                    "no live object exists, so the tightening is satisfied vacuously; it is allowed"
                        .to_string()
                } else {
                    format!(
                        "all {} live object(s) satisfy the tightened schema; the tightening is allowed",
                        of_version.len()
                    )
                };
                let args = vec![("subject", subject_text), ("outcome", outcome_text)];
                cx.report_change("CVN-215", pointer, args, Some(Bump::Major), Some(Action::Warn));
                continue;
            };
            let args = vec![("subject", subject_text), ("outcome", outcome_text)];
            cx.report_change("CVN-215", pointer, args, Some(Bump::Major), None);
        }
        Some(outcome)
    }
}

/// Which tightened versions every live object satisfies.
#[derive(Clone, Debug, Default)]
struct LiveOutcome {
    satisfied: Vec<String>,
}

impl LiveOutcome {
    fn allowed(&self, version: &str) -> bool {
        self.satisfied.iter().any(|v| v == version)
    }
}

/// CVN-218: every name the definition declares it derives fits 63 characters under each
/// served version's schema, by limits that state their reasons.
fn derived_names(evolution: &Evolution, outline: &Outline<'_>, cx: &mut Context<'_>) {
    let new: &Value = &outline.doc;
    let pointer = format!("/metadata/annotations/{}", crate::pointer::escape(super::derived::ANNOTATION));
    let subject = evolution.subject(None);
    let templates = match super::derived::templates(new) {
        Ok(t) => t,
        Err(reason) => {
            cx.report("CVN-218", pointer, vec![("subject", subject), ("reason", reason)]);
            return;
        }
    };
    for template in &templates {
        for v in versions(outline, evolution.flavor).iter().filter(|v| v.served) {
            let Some(schema) = evolution.schemas.get(&v.name) else { continue };
            if let Some(reason) = super::derived::judge_template(template, schema) {
                let reason = format!("version {}: {reason}", v.name);
                cx.report("CVN-218", pointer.clone(), vec![("subject", subject.clone()), ("reason", reason)]);
                break;
            }
        }
    }
}

fn report_structural(s: Structural, subject: &str, cx: &mut Context<'_>) {
    let mut args = Vec::with_capacity(s.args.len() + 1);
    let bump = s.bump();
    // CVN-219's message names the XRD alone; every other structural message its subject.
    if s.rule != "CVN-219" {
        args.push(("subject", subject.to_string()));
    } else {
        args.push(("name", subject.rsplit(' ').next().unwrap_or_default().to_string()));
    }
    args.extend(s.args);
    cx.report_change(s.rule, s.pointer, args, bump, None);
}

/// The members Crossplane adds to every composite's and claim's schema (its own machinery:
/// composition selection, references, connection secrets, `spec.crossplane` in v2) and its
/// status: a live object carries them whatever the XRD declares, so the proof of an XRD's
/// tightening reads them as open, as Crossplane's generated CRDs declare them.
pub(crate) fn crossplane_machinery(schema: &mut Schema) {
    const SPEC: [&str; 13] = [
        "claimRef",
        "compositeDeletePolicy",
        "compositionRef",
        "compositionRevisionRef",
        "compositionRevisionSelector",
        "compositionSelector",
        "compositionUpdatePolicy",
        "crossplane",
        "environmentConfigRefs",
        "publishConnectionDetailsTo",
        "resourceRef",
        "resourceRefs",
        "writeConnectionSecretToRef",
    ];
    let any = || std::sync::Arc::new(Schema::any());
    if let Some(spec) = schema.properties.get_mut("spec") {
        let spec = std::sync::Arc::make_mut(spec);
        for key in SPEC {
            spec.properties.entry(key.to_string()).or_insert_with(any);
        }
    }
    schema.properties.insert("status".to_string(), any());
}
