//! The `launcher` family (seed 000): `launcher.gokure.dev/v1alpha1` Application, Package,
//! ClusterProfile, CapabilityDefinition and EnvironmentSet.
//!
//! Strictness at two levels, as launcher itself has it:
//! - the envelope (every member but authored `properties`) is closed: CVN-101;
//! - authored `properties` are checked against the owning type's registered property schema:
//!   CVN-102 (undeclared key), CVN-103 (type, range, enum, union), CVN-104 (nested required
//!   only; after the ClusterProfile capability merge when a profile is given). An unknown
//!   type is CVN-105.
//!
//! The engine-owned trait property `scope` is a string on every trait; a trait type declared
//! only by a CapabilityDefinition has its handler-owned properties unchecked; `${...}`
//! placeholders are substituted from the package's values first and, where unresolved, are
//! not type errors.

mod inputs;
pub mod lines;

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use serde_json::{Map, Value};

pub use inputs::{Inputs, InputsError};

use super::{Claim, Context, Family};
use crate::pointer::At;
use crate::pointer::Location;
use crate::registry::{Hint, Registry, TypeCategory};
use crate::schema::validate::{validate_with, Options, Problem, Required, Violation};
use crate::schema::{property, Schema, Type};
use crate::subject::Subject;
use crate::suggest::closest;

/// The API group of launcher documents.
pub const GROUP: &str = "launcher.gokure.dev";
/// The one version this reader speaks.
pub const VERSION: &str = "v1alpha1";
/// The document kinds, in the order the seed lists them.
pub const KINDS: [&str; 5] =
    ["Application", "Package", "ClusterProfile", "CapabilityDefinition", "EnvironmentSet"];

const ENVELOPES: &str = include_str!("launcher/envelopes.yaml");

/// The members Kubernetes adds to an object's metadata; legal on a launcher document that
/// arrived through admission as a custom resource.
const OBJECT_META: [&str; 15] = [
    "name",
    "generateName",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
    "selfLink",
];

/// One registered type, ready to judge authored properties.
#[derive(Debug)]
struct Judged {
    schema: Schema,
    hints: Vec<Hint>,
    /// Whether the registry stated a schema (else only engine-owned keys are checked).
    stated: bool,
    /// Why what is found in the properties is a warning, under the line judged for.
    advisory: Option<String>,
}

/// Where the built-in launcher registry's types come from (`registry/launcher.yaml`).
const BUILTIN_ORIGIN: &str = "registry builtin-launcher";

/// The family.
#[derive(Debug)]
pub struct Launcher {
    envelopes: BTreeMap<String, Schema>,
    /// The same envelopes with `metadata` opened to Kubernetes object metadata.
    admitted: BTreeMap<String, Schema>,
    /// By category and name; hashed, as every entry of a document looks its type up.
    types: BTreeMap<TypeCategory, FxHashMap<String, Judged>>,
    names: BTreeMap<TypeCategory, Vec<String>>,
    /// What a trait that only a CapabilityDefinition declares is checked against.
    carved_out: Schema,
    inputs: Inputs,
    /// Every registry and dialect given, for the type-name covenant.
    registry: Registry,
    /// The release line judged for.
    line: crate::config::LauncherLine,
}

/// The group of covenant's own formats; the launcher family judges its `Registry` and
/// `Dialect` documents against the type-name covenant.
pub const COVENANT_GROUP: &str = "covenant.dev";

/// The engine-owned trait properties (seed 000, "scope is declared by the engine").
fn engine_trait_properties() -> [(&'static str, Schema); 1] {
    [("scope", Schema::of(Type::String))]
}

impl Launcher {
    /// The family over a registry's launcher types and the build inputs `check` was given.
    pub fn new(registry: &Registry, inputs: Inputs, line: crate::config::LauncherLine) -> Launcher {
        let (docs, _) = crate::source::parse_stream(ENVELOPES);
        let mut envelopes = BTreeMap::new();
        if let Some(Value::Object(map)) = docs.into_iter().next().map(|d| d.value) {
            for (kind, v) in map {
                // The embedded envelopes are covered by a unit test; a problem here is a bug.
                match property::load(&v, &Location::default()) {
                    Ok(s) => {
                        envelopes.insert(kind, s);
                    }
                    Err(p) => tracing::error!(kind, problems = ?p, "embedded launcher envelope is invalid"),
                }
            }
        }
        let admitted = envelopes
            .iter()
            .map(|(k, s)| {
                let mut s = s.clone();
                if let Some(meta) = s.properties.get_mut("metadata") {
                    let meta = std::sync::Arc::make_mut(meta);
                    for key in OBJECT_META {
                        meta.properties
                            .entry(key.to_string())
                            .or_insert_with(|| std::sync::Arc::new(Schema::any()));
                    }
                }
                (k.clone(), s)
            })
            .collect();

        let mut types: BTreeMap<TypeCategory, FxHashMap<String, Judged>> = BTreeMap::new();
        let mut names: BTreeMap<TypeCategory, Vec<String>> = BTreeMap::new();
        let line_advisory = lines::advisory(line).map(str::to_string);
        for ((category, name), t) in &registry.launcher {
            // The built-in registry holds the later line; another line registers fewer of its
            // types and reads some of them otherwise. A user's registry stands as declared.
            let builtin = t.origin == BUILTIN_ORIGIN;
            if builtin && !lines::registers(line, *category, name) {
                continue;
            }
            let reading =
                if builtin { lines::reading(line, *category, name) } else { lines::Reading::AsRegistered };
            // The line's own advisory (its launcher refuses no property) comes first.
            let (declared, advisory) = match reading {
                lines::Reading::AsRegistered => (t.schema.clone(), line_advisory.clone()),
                lines::Reading::Schema(s) => (Some(s), line_advisory.clone()),
                lines::Reading::Advisory(why) => (t.schema.clone(), line_advisory.clone().or(Some(why))),
            };
            names.entry(*category).or_default().push(name.clone());
            let stated = declared.is_some();
            let mut schema = declared.unwrap_or_else(|| Schema::of(Type::Object).open());
            if *category == TypeCategory::Trait {
                // The handler's own declaration wins where both describe a key.
                for (key, s) in engine_trait_properties() {
                    schema.properties.entry(key.to_string()).or_insert(std::sync::Arc::new(s));
                }
            }
            types
                .entry(*category)
                .or_default()
                .insert(name.clone(), Judged { schema, hints: t.hints.clone(), stated, advisory });
        }
        let mut carved_out = Schema::of(Type::Object).open();
        for (key, s) in engine_trait_properties() {
            carved_out.properties.insert(key.to_string(), std::sync::Arc::new(s));
        }
        Launcher { envelopes, admitted, types, names, carved_out, inputs, registry: registry.clone(), line }
    }
}

impl Family for Launcher {
    fn name(&self) -> &'static str {
        "launcher"
    }

    /// Launcher documents are read against the registry's component and trait types, loaded
    /// at start; a registry or dialect document's own property schemas are read in time linear
    /// in their text (the launcher's schemas have no references).
    fn bounded_by_subject(&self) -> bool {
        true
    }

    /// Every judgement reads the whole object: it is parsed in the pass that decodes the
    /// review.
    fn reading(&self) -> crate::subject::Reading {
        crate::subject::Reading::Whole
    }

    fn claims(&self) -> Vec<Claim> {
        let mut claims: Vec<Claim> =
            KINDS.iter().map(|k| Claim::Kind { group: GROUP.into(), kind: k.to_string() }).collect();
        claims.push(Claim::Group(GROUP.into()));
        for kind in ["Registry", "Dialect"] {
            claims.push(Claim::Kind { group: COVENANT_GROUP.into(), kind: kind.into() });
        }
        claims
    }

    fn check(&self, subject: &Subject, cx: &mut Context<'_>) {
        let Some(object) = &subject.object else { return };
        let doc = match object.value() {
            Ok(v @ Value::Object(_)) => v,
            Ok(other) => {
                let reason = format!("expected a mapping, found {}", crate::strict::describe(other));
                cx.report("CVN-109", "", vec![("reason", reason)]);
                return;
            }
            // Reported by the engine for every family (CVN-109).
            Err(_) => return,
        };
        let kind = subject.gvk.kind.as_str();
        if subject.gvk.group == COVENANT_GROUP {
            self.declarations(doc, cx);
            if let Some(Ok(old)) = subject.old_object.as_ref().map(|o| o.value()) {
                self.format_evolution(old, doc, cx);
            }
            return;
        }
        let envelopes = if subject.admitted { &self.admitted } else { &self.envelopes };
        let Some(envelope) = envelopes.get(kind) else {
            let hint = crate::suggest::hint(kind, KINDS.iter().copied());
            let reason =
                format!("kind \"{kind}\" is not a {GROUP} document{hint} (documents: {})", KINDS.join(", "));
            cx.report("CVN-109", "/kind", vec![("reason", reason)]);
            return;
        };
        if subject.gvk.version != VERSION {
            cx.report(
                "CVN-106",
                "/apiVersion",
                vec![
                    ("schema", GROUP.to_string()),
                    ("found", subject.gvk.version.clone()),
                    ("expected", VERSION.to_string()),
                ],
            );
            return;
        }

        let options = Options { required: Required::Everywhere, placeholders: false };
        for v in validate_with(envelope, doc, &Location::default(), options).violations {
            self.envelope_finding(kind, v, cx);
        }

        match kind {
            "Application" => self.application(doc, cx),
            "CapabilityDefinition" => self.capability_definition(doc, cx),
            "Package" => {
                self.package(doc, cx);
                if subject.operation == crate::subject::Operation::Update {
                    if let Some(Ok(old)) = subject.old_object.as_ref().map(|o| o.value()) {
                        package_evolution(old, doc, cx);
                    }
                }
            }
            _ => {}
        }
    }
}

impl Launcher {
    fn envelope_finding(&self, kind: &str, v: Violation, cx: &mut Context<'_>) {
        let parent = v.at.path.rsplit_once('.').map(|(p, _)| p).unwrap_or("");
        let within = |what: &str| {
            let at = if what.is_empty() { String::new() } else { format!(" {what}") };
            format!("{GROUP}/{VERSION} {kind}{at}")
        };
        match &v.problem {
            Problem::Undeclared { key, allowed, nearest } => {
                let suggestion =
                    nearest.as_ref().map(|n| format!(" (did you mean \"{n}\"?)")).unwrap_or_default();
                let allowed = if allowed.is_empty() { "(none)".to_string() } else { allowed.join(", ") };
                cx.report(
                    "CVN-101",
                    v.at.pointer,
                    vec![
                        ("member", key.clone()),
                        ("schema", within(if v.at.path == *key { "" } else { parent })),
                        ("allowed", allowed),
                        ("suggestion", suggestion),
                    ],
                );
            }
            Problem::Missing { key } => {
                let at = if v.at.path.is_empty() { "the document".to_string() } else { v.at.path.clone() };
                let reason = format!("{}: required member \"{key}\" is missing from {at}", within(""));
                cx.report("CVN-109", v.at.pointer, vec![("reason", reason)]);
            }
            _ => {
                let reason = format!("{}: {}: {}", within(""), v.at.path, v.message());
                cx.report("CVN-109", v.at.pointer, vec![("reason", reason)]);
            }
        }
    }

    fn application(&self, doc: &Value, cx: &mut Context<'_>) {
        let components = doc.at("/spec/components").and_then(Value::as_array);
        for (i, c) in components.into_iter().flatten().enumerate() {
            let at = pointer(&["/spec/components/", itoa::Buffer::new().format(i)]);
            let name = c.get("name").and_then(Value::as_str).unwrap_or("");
            let Some(ty) = c.get("type").and_then(Value::as_str) else { continue };
            // What is only worded for a finding is worded when one is found.
            let owner = || format!("component \"{name}\" (type \"{ty}\")");
            if let Some(judged) = self.lookup(TypeCategory::Component, ty, || format!("{at}/type"), cx) {
                self.properties(judged, c.get("properties"), &at, &owner, None, cx);
            }
            let traits = c.get("traits").and_then(Value::as_array);
            for (j, t) in traits.into_iter().flatten().enumerate() {
                let at = pointer(&[&at, "/traits/", itoa::Buffer::new().format(j)]);
                let Some(tt) = t.get("type").and_then(Value::as_str) else { continue };
                let owner = || format!("component \"{name}\": trait \"{tt}\"");
                let judged = match self.judged(TypeCategory::Trait, tt) {
                    Some(j) => Some(j),
                    None if self.inputs.capabilities.contains_key(tt) => None,
                    None => {
                        self.unknown(TypeCategory::Trait, tt, &format!("{at}/type"), cx);
                        continue;
                    }
                };
                let props = t.get("properties");
                let binding = self.inputs.binding(tt, props);
                match judged {
                    Some(j) => self.properties(j, props, &at, &owner, binding, cx),
                    // The carve-out: declared only by a CapabilityDefinition, so only the
                    // engine-owned keys are checked.
                    None => {
                        let j = Judged {
                            schema: self.carved_out.clone(),
                            hints: Vec::new(),
                            stated: false,
                            advisory: lines::advisory(self.line).map(str::to_string),
                        };
                        self.properties(&j, props, &at, &owner, binding, cx);
                    }
                }
            }
        }
        let policies = doc.at("/spec/policies").and_then(Value::as_array);
        for (i, p) in policies.into_iter().flatten().enumerate() {
            let at = pointer(&["/spec/policies/", itoa::Buffer::new().format(i)]);
            let name = p.get("name").and_then(Value::as_str).unwrap_or("");
            let Some(ty) = p.get("type").and_then(Value::as_str) else { continue };
            let owner = || format!("policy \"{name}\" (type \"{ty}\")");
            if let Some(judged) = self.lookup(TypeCategory::Policy, ty, || format!("{at}/type"), cx) {
                self.properties(judged, p.get("properties"), &at, &owner, None, cx);
            }
        }
    }

    /// A Package's parameter defaults are checked against their declared types.
    fn package(&self, doc: &Value, cx: &mut Context<'_>) {
        let params = doc.at("/spec/parameters").and_then(Value::as_array);
        for (i, p) in params.into_iter().flatten().enumerate() {
            let (Some(default), Some(t)) =
                (p.get("default"), p.get("type").and_then(Value::as_str).and_then(Type::parse))
            else {
                continue;
            };
            let name = p.get("name").and_then(Value::as_str).unwrap_or("");
            let at = Location::new(format!("/spec/parameters/{i}/default"), "default");
            let options = Options { required: Required::NestedOnly, placeholders: true };
            for v in validate_with(&Schema::of(t), default, &at, options).violations {
                let owner = format!("parameter \"{name}\"");
                self.property_finding(&owner, None, None, v, cx);
            }
        }
    }

    /// A CapabilityDefinition names a trait type: the name grammar and the flat namespace
    /// hold for it too.
    fn capability_definition(&self, doc: &Value, cx: &mut Context<'_>) {
        let Some(name) = doc.at("/metadata/name").and_then(Value::as_str) else { return };
        if let Some(reason) = crate::rules::naming::grammar(name) {
            cx.report("CVN-303", "/metadata/name", vec![("name", name.to_string()), ("reason", reason)]);
        }
        let owners = crate::rules::naming::other_owners(&self.registry, TypeCategory::Trait, name);
        if let Some(first) = owners.first() {
            cx.report(
                "CVN-301",
                "/metadata/name",
                vec![
                    ("category", "trait".to_string()),
                    ("name", name.to_string()),
                    ("owner", "this CapabilityDefinition".to_string()),
                    ("other_category", first.category.as_str().to_string()),
                    ("other_owner", first.origin.clone()),
                ],
            );
        }
    }

    /// A `Registry` or `Dialect` document: strict like every covenant format, and every
    /// declaration in it held against the type-name covenant over the registries and
    /// dialects the engine knows (less what this document's own origin declared there).
    fn declarations(&self, doc: &Value, cx: &mut Context<'_>) {
        const HERE: &str = "(this document)";
        let mut own = Registry::default();
        let mut problems = Vec::new();
        own.add_document(HERE, doc, &crate::source::Positions::default(), &mut problems);
        for p in problems {
            let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("document");
            cx.report("CVN-109", p.pointer, vec![("reason", format!("{kind}: {}", p.message))]);
        }
        let origin = own
            .dialects
            .first()
            .map(|d| format!("dialect {}", d.name))
            .or_else(|| own.declarations.first().map(|t| t.origin.clone()));
        let mut union = match &origin {
            Some(o) => self.registry.without_origin(o),
            None => self.registry.clone(),
        };
        union.declarations.extend(own.declarations.iter().cloned());
        union.dialects.extend(own.dialects.iter().cloned());
        for t in &own.declarations {
            union.launcher.insert((t.category, t.name.clone()), t.clone());
        }
        for f in crate::rules::naming::check(&union).into_iter().filter(|f| f.file == HERE) {
            let pointer = if f.rule == "CVN-306" { f.pointer } else { format!("{}/name", f.pointer) };
            cx.report(f.rule, pointer, f.args);
        }
        // A format this document declares that the loaded registries declare otherwise: two
        // decoders for one format, one of which would silently win.
        let kind = doc.get("kind").and_then(Value::as_str).unwrap_or("document");
        for (i, entry) in crate::registry::versioned_entries(doc) {
            if let Some(why) = self.registry.second_decoder(HERE, &entry) {
                cx.report("CVN-109", format!("/versioned/{i}"), vec![("reason", format!("{kind}: {why}"))]);
            }
        }
    }

    /// A registry's formats from its previous version (`check --base`, an UPDATE): a member
    /// removed while the format's version stays is refused, as seed 002 says ("These changes
    /// take a new version: removing a member"); under a new version it is what the new
    /// version is for.
    fn format_evolution(&self, old: &Value, new: &Value, cx: &mut Context<'_>) {
        let before = crate::registry::versioned_entries(old);
        for (i, now) in crate::registry::versioned_entries(new) {
            let Some((_, was)) = before.iter().find(|(_, b)| b.schema == now.schema) else { continue };
            if was.version != now.version {
                continue;
            }
            let (Some(had), Some(has)) = (&was.members, &now.members) else { continue };
            for member in had.iter().filter(|m| !has.contains(m)) {
                let detail = format!(
                    "member \"{member}\" removed while the version stays \"{}\"; these changes take a new version: removing a member (a reader of version \"{}\" would refuse documents it accepted)",
                    now.version, now.version
                );
                let args = vec![("subject", format!("format {}", now.schema)), ("detail", detail)];
                cx.report_change(
                    "CVN-201",
                    format!("/versioned/{i}/members"),
                    args,
                    Some(crate::versioning::Bump::Major),
                    None,
                );
            }
        }
    }

    fn lookup(
        &self,
        category: TypeCategory,
        ty: &str,
        pointer: impl FnOnce() -> String,
        cx: &mut Context<'_>,
    ) -> Option<&Judged> {
        let found = self.judged(category, ty);
        if found.is_none() {
            self.unknown(category, ty, &pointer(), cx);
        }
        found
    }

    /// How a type of this category and name is judged, if the registry has it.
    fn judged(&self, category: TypeCategory, ty: &str) -> Option<&Judged> {
        self.types.get(&category)?.get(ty)
    }

    fn unknown(&self, category: TypeCategory, ty: &str, pointer: &str, cx: &mut Context<'_>) {
        // A name another category owns: one flat namespace (CVN-301), naming the owner.
        let owners = crate::rules::naming::other_owners(&self.registry, category, ty);
        if let Some(first) = owners.first() {
            let others: Vec<String> =
                owners.iter().map(|t| format!("{} type of {}", t.category.as_str(), t.origin)).collect();
            cx.report(
                "CVN-301",
                pointer,
                vec![
                    ("category", category.as_str().to_string()),
                    ("name", ty.to_string()),
                    (
                        "owner",
                        format!(
                            "used here as a {}; no {} of that name is registered",
                            category.as_str(),
                            category.as_str()
                        ),
                    ),
                    ("other_category", first.category.as_str().to_string()),
                    ("other_owner", others.join(", ")),
                    (crate::rules::finding::FIX, misplaced(ty, first.category)),
                ],
            );
            return;
        }
        let names = self.names.get(&category).map(Vec::as_slice).unwrap_or_default();
        let mut suggestion = closest(ty, names.iter().map(String::as_str))
            .first()
            .map(|n| format!("; did you mean \"{n}\"?"))
            .unwrap_or_default();
        // A type the later line registers that the line judged for does not: said so.
        if self.registry.launcher_type(category, ty).is_some() {
            suggestion.push_str(&format!(
                "; launcher {} does not register it (the later line does: --launcher-version v0.2)",
                self.line.as_str()
            ));
        }
        if category == TypeCategory::Trait && !self.inputs.capabilities.is_empty() {
            let defined: Vec<&str> = self.inputs.capabilities.keys().map(String::as_str).collect();
            suggestion.push_str(&format!("; CapabilityDefinitions given: {}", defined.join(", ")));
        }
        let mut args = vec![
            ("category", category.as_str().to_string()),
            ("type", ty.to_string()),
            ("suggestion", suggestion),
        ];
        // A custom trait is declared by a CapabilityDefinition, which `check` reads when told.
        if category == TypeCategory::Trait {
            let fix = match self.inputs.capabilities.is_empty() {
                true => format!("use a registered type name; if \"{ty}\" is a custom trait, give its CapabilityDefinition with `covenant check --capability-def FILE|DIR`"),
                false => format!("use a registered type name, or add the CapabilityDefinition that declares \"{ty}\" with another --capability-def"),
            };
            args.push((crate::rules::finding::FIX, fix));
        }
        cx.report("CVN-105", pointer, args);
    }

    /// Check one entry's authored properties.
    fn properties(
        &self,
        judged: &Judged,
        authored: Option<&Value>,
        entry: &str,
        owner: &dyn Fn() -> String,
        binding: Option<&Map<String, Value>>,
        cx: &mut Context<'_>,
    ) {
        let empty;
        let authored = match authored.filter(|v| !v.is_null()) {
            Some(v) => v,
            None => {
                empty = Value::Object(Map::new());
                &empty
            }
        };
        let substituted = self.inputs.substitute(authored);
        let value = substituted.as_ref().unwrap_or(authored);
        let at = Location::new(pointer(&[entry, "/properties"]), "");
        let options = Options { required: Required::NestedOnly, placeholders: true };
        let outcome = validate_with(&judged.schema, value, &at, options);
        let hints = judged.stated.then_some(judged.hints.as_slice());
        let named = std::cell::OnceCell::new();
        let owner = || named.get_or_init(owner).as_str();
        for v in outcome.violations {
            // Under a matching capability binding, nested required is judged on the merged
            // properties below, except inside list items, which a rendering never reaches.
            if binding.is_some() && matches!(v.problem, Problem::Missing { .. }) && !v.in_list {
                continue;
            }
            self.property_finding(owner(), hints, judged.advisory.as_deref(), v, cx);
        }
        if let Some(rendering) = binding {
            let merged = inputs::merge(rendering, value);
            for v in validate_with(&judged.schema, &merged, &at, options).violations {
                if matches!(v.problem, Problem::Missing { .. }) && !v.in_list {
                    self.property_finding(owner(), hints, judged.advisory.as_deref(), v, cx);
                }
            }
        }
    }

    /// One problem with authored properties; `advisory`: why it is a warning, not a refusal
    /// (the line judged for does not refuse it).
    fn property_finding(
        &self,
        owner: &str,
        hints: Option<&[Hint]>,
        advisory: Option<&str>,
        v: Violation,
        cx: &mut Context<'_>,
    ) {
        let (id, pointer, args) = property_problem(owner, hints, None, v);
        let before = std::mem::replace(&mut cx.advisory, advisory.map(str::to_string));
        cx.report(id, pointer, args);
        cx.advisory = before;
    }
}

/// A pointer made of its parts, joined (the formatting machinery costs more than the join,
/// and a review of many components makes several per component).
fn pointer(parts: &[&str]) -> String {
    let mut out = String::with_capacity(parts.iter().map(|p| p.len()).sum());
    parts.iter().for_each(|p| out.push_str(p));
    out
}

/// The finding for one problem with authored properties of `owner` (a component's, a trait's,
/// a package's parameters, a capability binding's rendering; or, with `resource`, a custom
/// resource's fields against its definition): an undeclared key is CVN-102 (with the nearest
/// name and any hint of the type), a missing key CVN-104, anything else about a value
/// CVN-103. The rule id, pointer and message arguments.
pub fn property_problem(
    owner: &str,
    hints: Option<&[Hint]>,
    resource: Option<&str>,
    v: Violation,
) -> (&'static str, String, Vec<(&'static str, String)>) {
    let property = match (v.at.path.is_empty(), resource) {
        (false, _) => v.at.path.clone(),
        (true, None) => "properties".to_string(),
        (true, Some(_)) => "(object)".to_string(),
    };
    let pointer = v.at.pointer;
    let (id, args) = match v.problem {
        Problem::Undeclared { key, allowed, nearest } => {
            let mut suggestion = nearest.map(|n| format!("; did you mean \"{n}\"?")).unwrap_or_default();
            let top_level = v.at.path == key;
            for hint in hints.unwrap_or_default() {
                if top_level && hint.keys.contains(&key) {
                    suggestion.push_str(&format!("; {}", hint.message));
                }
            }
            let allowed = if allowed.is_empty() { "(none)".to_string() } else { allowed.join(", ") };
            let args = vec![
                ("property", property.clone()),
                ("owner", owner.to_string()),
                ("allowed", allowed),
                ("suggestion", suggestion),
            ];
            ("CVN-102", args)
        }
        Problem::Missing { key } => {
            let (path, supply) = match resource {
                None if v.at.path.is_empty() => (format!("{owner} properties"), CAPABILITY),
                None => (format!("{owner} properties.{}", v.at.path), CAPABILITY),
                Some(r) if v.at.path.is_empty() => (r.to_string(), ""),
                Some(r) => (format!("{} of {r}", v.at.path), ""),
            };
            ("CVN-104", vec![("key", key), ("path", path), ("supply", supply.to_string())])
        }
        problem => {
            let (expected, found) = expected_found(problem);
            ("CVN-103", type_args(property.clone(), owner, expected, found))
        }
    };
    (id, pointer, args)
}

/// How a missing key's help offers the launcher's other way to supply it.
const CAPABILITY: &str = ", or supply it through a cluster profile capability";

/// What a value problem expected and found, in the words of CVN-103's message.
fn expected_found(problem: Problem) -> (String, String) {
    match problem {
        Problem::Type { expected, found } | Problem::Bound { expected, found } => (expected, found),
        Problem::OutOfRange { found } => ("an integer within the 64-bit range".to_string(), found),
        Problem::NotInEnum { found, allowed } => (format!("one of [{}]", allowed.join(", ")), found),
        Problem::Branch { keyword, accepted } => {
            (format!("a value {keyword} accepts"), format!("one that {accepted} of its members accept"))
        }
        Problem::Pattern { pattern, found } => (format!("a string matching {pattern:?}"), found),
        Problem::Format { format, found } => (format!("a string of format {format:?}"), found),
        Problem::Rule { message } => (message, "a value that fails it".to_string()),
        Problem::Not { found } => ("a value the `not` schema refuses".to_string(), found),
        Problem::Duplicate { found } => ("unique items (uniqueItems)".to_string(), format!("{found} twice")),
        Problem::ListType { detail } => ("a list as its x-kubernetes-list-type says".to_string(), detail),
        // Reported as CVN-102 and CVN-104 by `property_problem`.
        Problem::Undeclared { key, .. } => ("a declared key".to_string(), format!("\"{key}\"")),
        Problem::Missing { key } => (format!("\"{key}\""), "nothing".to_string()),
    }
}

/// A Package's contract: its parameters as one object schema (each parameter a property of
/// its declared type, with its default; `required: true` parameters required).
pub fn package_contract(doc: &Value) -> Schema {
    let mut schema = Schema::of(Type::Object);
    let params = doc.at("/spec/parameters").and_then(Value::as_array);
    for p in params.into_iter().flatten() {
        let Some(name) = p.get("name").and_then(Value::as_str) else { continue };
        let mut param =
            p.get("type").and_then(Value::as_str).and_then(Type::parse).map(Schema::of).unwrap_or_default();
        param.default = p.get("default").cloned();
        param.description = p.get("description").and_then(Value::as_str).map(str::to_string);
        if p.get("required").and_then(Value::as_bool) == Some(true) {
            schema.required.push(name.to_string());
        }
        schema.properties.insert(name.to_string(), std::sync::Arc::new(param));
    }
    schema
}

/// The pointer to a Package parameter's declaration (`/spec/parameters/2`); a removed one
/// points at the list.
fn parameter_pointer(doc: &Value, name: &str) -> Option<String> {
    let params = doc.at("/spec/parameters")?.as_array()?;
    Some(match params.iter().position(|p| p.get("name").and_then(Value::as_str) == Some(name)) {
        Some(i) => format!("/spec/parameters/{i}"),
        None => "/spec/parameters".to_string(),
    })
}

/// A Package's declared version (`metadata.version`), if it is valid semver.
pub fn declared_version(doc: &Value) -> Option<semver::Version> {
    let v = doc.at("/metadata/version")?.as_str()?;
    semver::Version::parse(v.trim_start_matches('v')).ok()
}

/// A Package update: its parameters are its contract. Every change is judged, and the
/// declared version move (`metadata.version`) must cover the implied bump (CVN-212) and
/// should not exceed it (CVN-213). Severity is derived, never declared.
fn package_evolution(old: &Value, new: &Value, cx: &mut Context<'_>) {
    use crate::rules::evolution::judge;
    let changes = judge(crate::schema::diff::diff(&package_contract(old), &package_contract(new), ""));
    let name = new.at("/metadata/name").and_then(Value::as_str).unwrap_or_default();
    let (Some(from), Some(to)) = (declared_version(old), declared_version(new)) else { return };
    let subject = format!("Package {name} {from} → {to}");
    // A parameter change is made in spec.parameters, where the parameter is declared.
    let locate = |j: &crate::rules::evolution::Judged| {
        let name = j.change.pointer.split('/').nth(1).unwrap_or_default();
        parameter_pointer(new, name).unwrap_or_else(|| "/metadata/version".to_string())
    };
    super::declared_bump(cx, &subject, &from, &to, &changes, "/metadata/version", &locate);
}

fn type_args(property: String, owner: &str, expected: String, found: String) -> Vec<(&'static str, String)> {
    vec![("property", property), ("owner", owner.to_string()), ("expected", expected), ("found", found)]
}

/// The schema a CapabilityDefinition's `rendering` declares: a closed object of its
/// `properties`, each typed, the `required: true` ones required.
pub fn capability_schema(rendering: &Value) -> Schema {
    let mut schema = Schema::of(Type::Object);
    for (name, p) in rendering.get("properties").and_then(Value::as_object).into_iter().flatten() {
        let ty = p.get("type").and_then(Value::as_str).and_then(Type::parse);
        let mut property = ty.map_or_else(Schema::any, Schema::of);
        property.default = p.get("default").cloned();
        schema.properties.insert(name.clone(), std::sync::Arc::new(property));
        if p.get("required").and_then(Value::as_bool) == Some(true) {
            schema.required.push(name.clone());
        }
    }
    schema
}

/// The fix for a type listed where its category does not belong: move it where it does.
fn misplaced(ty: &str, owner: TypeCategory) -> String {
    match owner {
        TypeCategory::Component => {
            format!("\"{ty}\" is a component type: list it under spec.components as a component of its own")
        }
        TypeCategory::Trait => {
            format!("\"{ty}\" is a trait type: move it under `traits:` of the component it applies to")
        }
        TypeCategory::Policy => format!("\"{ty}\" is a policy type: move it under spec.policies"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_envelopes_load() {
        let (docs, err) = crate::source::parse_stream(ENVELOPES);
        assert!(err.is_none());
        let map = docs[0].value.as_object().unwrap();
        let kinds: Vec<&str> = map.keys().map(String::as_str).collect();
        let mut expected = KINDS.to_vec();
        expected.sort();
        assert_eq!(kinds, expected);
        for (kind, v) in map {
            assert!(property::load(v, &Location::default()).is_ok(), "{kind}");
        }
    }
}
