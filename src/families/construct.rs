//! The `construct` family (seed 001): OpenChoreo's platform constructs — ComponentType,
//! Trait, Workflow, ProjectType, ResourceType and their cluster-scoped twins. A construct's
//! version describes its contract, not its implementation: the parameters schema, the
//! environmentConfigs schema, the outputs, the validations, and the observable shape of what
//! it renders (the kinds, literal names and ports of its resource templates).
//!
//! What is judged:
//! - on UPDATE, the contract diff and its implied bump against the declared one (CVN-212,
//!   CVN-213), template changes that touch no contract shown as PATCH implementation rows;
//!   a MAJOR is a new object, never an in-place update (CVN-409);
//! - the version scheme: valid semver, 0.x only when marked experimental (CVN-408); the
//!   version annotation matched by the `openchoreo.dev/name` and `openchoreo.dev/version`
//!   labels (CVN-402); the object named `<logical>-v<major>` (CVN-403); every
//!   `rendered-from-*` stamp in agreement (CVN-401);
//! - with cluster state: one default per logical name (CVN-404), no two objects at one full
//!   version (CVN-405).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::{Claim, Context, Family};
use crate::mutation::Edit;
use crate::rules::evolution::{judge, Judged};
use crate::schema::diff::{diff, Change, ChangeKind};
use crate::schema::openapi::{load_keeping_unknown, Dialect};
use crate::schema::pointer::Location;
use crate::schema::shorthand::load_shorthand;
use crate::schema::{CelRule, LoadProblem, Schema};
use crate::subject::{Operation, Subject};
use crate::versioning::Bump;

/// The API group of OpenChoreo's documents.
pub const GROUP: &str = "openchoreo.dev";
/// The label naming a construct's logical name.
pub const NAME_LABEL: &str = "openchoreo.dev/name";
/// The label (and annotation) carrying a construct's version.
pub const VERSION_KEY: &str = "openchoreo.dev/version";
/// The label that makes one object the one unpinned consumers get.
pub const DEFAULT_LABEL: &str = "openchoreo.dev/default";
/// The stamp of the version a rendered object came from.
pub const STAMP_VERSION: &str = "openchoreo.dev/rendered-from-version";
/// The stamp of the logical type a rendered object came from.
pub const STAMP_TYPE: &str = "openchoreo.dev/rendered-from-type";
/// The annotation a 0.x construct uses to say it is experimental.
pub const DESCRIPTION: &str = "openchoreo.dev/description";
/// The construct kinds judged by default.
pub const KINDS: [&str; 10] = [
    "ComponentType",
    "ClusterComponentType",
    "Trait",
    "ClusterTrait",
    "Workflow",
    "ClusterWorkflow",
    "ProjectType",
    "ClusterProjectType",
    "ResourceType",
    "ClusterResourceType",
];

/// Where a construct keeps its resource templates.
const TEMPLATE_LISTS: [&str; 2] = ["resources", "creates"];

/// A metadata label of a document.
pub(crate) fn label<'v>(doc: &'v Value, key: &str) -> Option<&'v str> {
    doc.pointer("/metadata/labels").and_then(|l| l.get(key)).and_then(Value::as_str)
}

fn annotation<'v>(doc: &'v Value, key: &str) -> Option<&'v str> {
    doc.pointer("/metadata/annotations").and_then(|l| l.get(key)).and_then(Value::as_str)
}

/// The object name without a trailing `-v<N>`.
fn strip_major(name: &str) -> &str {
    match name.rsplit_once("-v") {
        Some((base, n)) if !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()) => base,
        _ => name,
    }
}

/// A construct's logical name: its name label, else the `openchoreo.dev/name` annotation,
/// else its object name less `-v<major>`.
pub fn logical_name(doc: &Value) -> String {
    label(doc, NAME_LABEL).or_else(|| annotation(doc, NAME_LABEL)).map(str::to_string).unwrap_or_else(|| {
        strip_major(doc.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default()).to_string()
    })
}

/// A construct's declared version (the `openchoreo.dev/version` annotation, else label).
pub fn declared_version(doc: &Value) -> Option<&str> {
    annotation(doc, VERSION_KEY).or_else(|| label(doc, VERSION_KEY))
}

/// What one rendered object shows a consumer.
#[derive(Clone, Debug, PartialEq)]
struct Rendered {
    kind: String,
    name: Option<String>,
    ports: Option<Value>,
    template: Value,
}

/// A construct's contract, extracted.
#[derive(Clone, Debug, Default)]
pub struct Contract {
    parameters: Section,
    environment_configs: Section,
    outputs: BTreeSet<String>,
    validations: Vec<CelRule>,
    rendered: BTreeMap<String, Rendered>,
}

fn literal(v: Option<&Value>) -> Option<String> {
    v.and_then(Value::as_str).filter(|s| !s.contains("${")).map(str::to_string)
}

/// The members a schema section may hold: the schema in one of two spellings.
const SPELLINGS: [&str; 2] = ["openAPIV3Schema", "ocSchema"];

/// How a construct spells one section's schema, found where it is written.
enum Spelled<'v> {
    /// JSON Schema (`openAPIV3Schema`).
    JsonSchema(&'v Value, Location),
    /// The compact syntax: the fields, where its reusable types are, and where it stands.
    Shorthand(&'v Value, Option<(&'v Value, Location)>, Location),
}

/// Where and how `spec` spells the schema of `section` (`parameters`, `environmentConfigs`):
/// `spec.<section>.openAPIV3Schema` (JSON Schema, or the compact syntax when it reads as
/// one), `spec.<section>.ocSchema`, or the older `spec.schema.{parameters, envOverrides}`
/// with `spec.schema.types`. None when the section is not declared; a problem when it is
/// declared in a shape covenant does not know.
fn spelled<'v>(spec: &'v Value, section: &str) -> Result<Option<Spelled<'v>>, LoadProblem> {
    let at = Location::new(format!("/spec/{section}"), format!("spec.{section}"));
    let Some(value) = spec.get(section) else {
        let legacy = if section == "parameters" { "parameters" } else { "envOverrides" };
        let Some(fields) = spec.pointer(&format!("/schema/{legacy}")) else { return Ok(None) };
        let schema = Location::new("/spec/schema", "spec.schema");
        let types = spec.pointer("/schema/types").map(|t| (t, schema.key("types")));
        return Ok(Some(Spelled::Shorthand(fields, types, schema.key(legacy))));
    };
    let problem = |message: String| LoadProblem { at: at.clone(), message };
    let Value::Object(members) = value else {
        return Err(problem(format!(
            "expected a mapping holding openAPIV3Schema or ocSchema, found {value}"
        )));
    };
    if let Some(other) = members.keys().find(|k| !SPELLINGS.contains(&k.as_str())) {
        return Err(problem(format!(
            "undeclared member {other:?}: a schema section holds openAPIV3Schema (JSON Schema) or ocSchema (the compact syntax)"
        )));
    }
    match (members.get("openAPIV3Schema"), members.get("ocSchema")) {
        (Some(_), Some(_)) => {
            Err(problem("declares both openAPIV3Schema and ocSchema; a section has one schema".into()))
        }
        (None, Some(fields)) => {
            let at = at.key("ocSchema");
            Ok(Some(Spelled::Shorthand(fields, fields.get("$types").map(|t| (t, at.key("$types"))), at)))
        }
        (Some(raw), None) if reads_as_shorthand(raw) => {
            let at = at.key("openAPIV3Schema");
            Ok(Some(Spelled::Shorthand(raw, raw.get("$types").map(|t| (t, at.key("$types"))), at)))
        }
        (Some(raw), None) => Ok(Some(Spelled::JsonSchema(raw, at.key("openAPIV3Schema")))),
        (None, None) => Ok(None),
    }
}

/// Whether a schema written under `openAPIV3Schema` is the compact syntax (as OpenChoreo's
/// own samples wrote it for a while): it declares `$types`, or it has none of the keywords a
/// JSON Schema root of an object has and every member is a leaf or a nested mapping.
fn reads_as_shorthand(raw: &Value) -> bool {
    let Value::Object(members) = raw else { return false };
    if members.contains_key("$types") {
        return true;
    }
    let json_schema = members.get("type").is_some_and(|t| t == "object")
        || members.get("properties").is_some_and(Value::is_object)
        || ["$ref", "$defs", "definitions", "allOf", "anyOf", "oneOf"]
            .iter()
            .any(|k| members.contains_key(*k));
    !json_schema && !members.is_empty() && members.values().all(|v| v.is_string() || v.is_object())
}

/// The schema of `section` in a construct's `spec`, whichever way it is spelled: none when the
/// section declares none, every problem when covenant cannot read it.
pub fn section_schema(spec: &Value, section: &str) -> Result<Option<Schema>, Vec<LoadProblem>> {
    match spelled(spec, section).map_err(|p| vec![p])? {
        None => Ok(None),
        Some(Spelled::JsonSchema(raw, at)) => load_keeping_unknown(raw, &at, Dialect::JsonSchema).map(Some),
        Some(Spelled::Shorthand(fields, types, at)) => load_shorthand(fields, types, &at).map(Some),
    }
}

/// A contract's schema section: what was written (to tell a change covenant cannot read
/// from no change) and what covenant read of it.
#[derive(Clone, Debug)]
struct Section {
    raw: Option<Value>,
    schema: Result<Option<Schema>, String>,
}

impl Default for Section {
    fn default() -> Section {
        Section { raw: None, schema: Ok(None) }
    }
}

fn schema_section(doc: &Value, section: &str, problems: &mut Vec<String>) -> Section {
    let spec = doc.get("spec").unwrap_or(&Value::Null);
    let raw = spec.get(section).or_else(|| spec.get("schema")).cloned();
    let schema = section_schema(spec, section).map_err(|ps| {
        problems.extend(ps.iter().map(ToString::to_string));
        ps.first().map(ToString::to_string).unwrap_or_default()
    });
    Section { raw, schema }
}

/// Extract the contract; a schema that cannot be read is a problem named by its path.
pub fn contract(doc: &Value) -> (Contract, Vec<String>) {
    let mut problems = Vec::new();
    let parameters = schema_section(doc, "parameters", &mut problems);
    let environment_configs = schema_section(doc, "environmentConfigs", &mut problems);
    let outputs = match doc.pointer("/spec/outputs") {
        Some(Value::Array(items)) => {
            items.iter().filter_map(|o| o.get("name").and_then(Value::as_str)).map(str::to_string).collect()
        }
        Some(Value::Object(map)) => map.keys().cloned().collect(),
        _ => BTreeSet::new(),
    };
    let mut validations = Vec::new();
    for list in ["validations", "preRenderValidations", "postRenderValidations"] {
        for v in doc.pointer(&format!("/spec/{list}")).and_then(Value::as_array).into_iter().flatten() {
            let rule = v.get("rule").and_then(Value::as_str).unwrap_or_default().to_string();
            let message = v.get("message").and_then(Value::as_str).map(str::to_string);
            validations.push(CelRule { rule, message, ..CelRule::default() });
        }
    }
    let mut rendered = BTreeMap::new();
    for list in TEMPLATE_LISTS {
        for (i, r) in
            doc.pointer(&format!("/spec/{list}")).and_then(Value::as_array).into_iter().flatten().enumerate()
        {
            let Some(template) = r.get("template") else { continue };
            let id = r
                .get("id")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| format!("{list}[{i}]"));
            rendered.insert(
                id,
                Rendered {
                    kind: template.get("kind").and_then(Value::as_str).unwrap_or_default().to_string(),
                    name: literal(template.pointer("/metadata/name")),
                    ports: template.pointer("/spec/ports").filter(|p| p.is_array()).cloned(),
                    template: template.clone(),
                },
            );
        }
    }
    (Contract { parameters, environment_configs, outputs, validations, rendered }, problems)
}

fn judged(
    pointer: String,
    kind: ChangeKind,
    what: &str,
    before: Option<Value>,
    after: Option<Value>,
    bump: Bump,
    rule: Option<&'static str>,
) -> Judged {
    Judged {
        change: Change { pointer, kind, what: Some(what.to_string()), before, after },
        bump,
        rule,
        direction: None,
    }
}

/// Every change between two contracts, judged. Outputs and the rendered shape are judged
/// here (an output or rendered object removed is MAJOR under CVN-208); template changes that
/// touch none of them are PATCH implementation rows, shown, not hidden.
pub fn contract_diff(old: &Contract, new: &Contract) -> Vec<Judged> {
    let mut out = Vec::new();
    for (section, a, b) in [
        ("/parameters", &old.parameters, &new.parameters),
        ("/environmentConfigs", &old.environment_configs, &new.environment_configs),
    ] {
        let empty = Schema::default();
        let (a, b) = match (&a.schema, &b.schema) {
            (Ok(a), Ok(b)) => (a, b),
            // What covenant cannot read is never "no change": a different text is a change
            // it cannot classify, MAJOR under CVN-220.
            (a_read, b_read) => {
                if a.raw != b.raw {
                    let state = |raw: &Option<Value>, read: &Result<Option<Schema>, String>| {
                        raw.as_ref().map(|_| match read {
                            Ok(_) => Value::String("a schema covenant reads".into()),
                            Err(why) => Value::String(format!("a schema covenant cannot read ({why})")),
                        })
                    };
                    out.push(judged(
                        section.to_string(),
                        ChangeKind::Unclassified,
                        "the schema",
                        state(&a.raw, a_read),
                        state(&b.raw, b_read),
                        Bump::Major,
                        Some("CVN-220"),
                    ));
                }
                continue;
            }
        };
        match (a, b) {
            (None, None) => {}
            (Some(a), Some(b)) => out.extend(judge(diff(a, b, section))),
            // A section appearing is an addition; one vanishing removes every field it had.
            (None, Some(b)) => {
                out.extend(judge(diff(&empty, b, section)).into_iter().filter(|j| j.bump < Bump::Major))
            }
            (Some(a), None) => {
                out.extend(judge(diff(a, &Schema { additional: a.additional.clone(), ..empty }, section)))
            }
        }
    }
    for name in old.outputs.difference(&new.outputs) {
        out.push(judged(
            format!("/outputs/{name}"),
            ChangeKind::PropertyRemoved,
            name,
            Some(Value::Bool(true)),
            None,
            Bump::Major,
            Some("CVN-208"),
        ));
    }
    for name in new.outputs.difference(&old.outputs) {
        out.push(judged(
            format!("/outputs/{name}"),
            ChangeKind::PropertyAdded,
            name,
            None,
            Some(Value::Bool(true)),
            Bump::Minor,
            None,
        ));
    }
    let rules = |v: &[CelRule]| Schema { validations: v.to_vec(), ..Schema::default() };
    out.extend(judge(diff(&rules(&old.validations), &rules(&new.validations), "/validations")));
    for (id, a) in &old.rendered {
        let at = format!("/rendered/{id}");
        match new.rendered.get(id) {
            None => out.push(judged(
                at,
                ChangeKind::PropertyRemoved,
                id,
                Some(Value::String(a.kind.clone())),
                None,
                Bump::Major,
                Some("CVN-208"),
            )),
            Some(b) => {
                let shown = [
                    (
                        "rendered kind",
                        Some(Value::String(a.kind.clone())),
                        Some(Value::String(b.kind.clone())),
                    ),
                    ("rendered name", a.name.clone().map(Value::String), b.name.clone().map(Value::String)),
                    ("rendered ports", a.ports.clone(), b.ports.clone()),
                ];
                let mut contract_moved = false;
                for (what, x, y) in shown {
                    if x != y {
                        contract_moved = true;
                        out.push(judged(
                            at.clone(),
                            ChangeKind::Unclassified,
                            what,
                            x,
                            y,
                            Bump::Major,
                            Some("CVN-208"),
                        ));
                    }
                }
                if !contract_moved && a.template != b.template {
                    out.push(judged(
                        at,
                        ChangeKind::AnnotationChanged,
                        "template (implementation)",
                        None,
                        None,
                        Bump::Patch,
                        None,
                    ));
                }
            }
        }
    }
    for id in new.rendered.keys().filter(|id| !old.rendered.contains_key(*id)) {
        out.push(judged(
            format!("/rendered/{id}"),
            ChangeKind::PropertyAdded,
            id,
            None,
            Some(Value::Bool(true)),
            Bump::Minor,
            None,
        ));
    }
    out
}

/// The family.
#[derive(Debug)]
pub struct Construct {
    kinds: Vec<String>,
}

impl Construct {
    /// The family over these construct kinds.
    pub fn new(kinds: Vec<String>) -> Construct {
        Construct { kinds }
    }
}

impl Family for Construct {
    fn name(&self) -> &'static str {
        "construct"
    }

    fn claims(&self) -> Vec<Claim> {
        self.kinds.iter().map(|k| Claim::Kind { group: GROUP.into(), kind: k.clone() }).collect()
    }

    fn edits(&self, subject: &Subject, cx: &mut Context<'_>) -> Vec<Edit> {
        if !matches!(subject.operation, Operation::Create | Operation::Update) {
            return Vec::new();
        }
        let Some(Ok(doc)) = subject.object.as_ref().map(|o| o.value()) else { return Vec::new() };
        stamp_edits(doc, cx)
    }

    fn check(&self, subject: &Subject, cx: &mut Context<'_>) {
        if subject.operation == Operation::Delete {
            super::consumer::retired(subject, cx);
            return;
        }
        let Some(Ok(doc)) = subject.object.as_ref().map(|o| o.value()) else { return };
        let logical = logical_name(doc);
        let object = doc.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_string();
        let kind = subject.gvk.kind.clone();
        let subject_text = format!("{kind} {object}");
        let version = scheme(doc, &logical, &object, &subject_text, cx);
        if let Some(v) = &version {
            stamps(doc, v, &logical, cx);
            siblings(doc, &kind, &logical, &object, v, subject, cx);
        }
        let (_, problems) = contract(doc);
        for p in problems {
            cx.report(
                "CVN-109",
                "/spec",
                vec![("reason", format!("{subject_text}: a contract schema cannot be read: {p}"))],
            );
        }
        if subject.operation == Operation::Update {
            if let (Some(Ok(old)), Some(to)) = (subject.old_object.as_ref().map(|o| o.value()), version) {
                evolution(old, doc, &to, &logical, &subject_text, cx);
            }
        }
    }
}

/// CVN-502 and CVN-501 for a construct: the name and version labels from the declared
/// version, and both stamps on every resource template. Nothing without a valid version.
pub fn stamp_edits(doc: &Value, cx: &mut Context<'_>) -> Vec<Edit> {
    let Some(version) = declared_version(doc).filter(|v| semver::Version::parse(v).is_ok()) else {
        return Vec::new();
    };
    let logical = logical_name(doc);
    let mut out = Vec::new();
    if cx.runs("CVN-502") {
        out.push(Edit::set("CVN-502", &["metadata", "labels", NAME_LABEL], logical.as_str()));
        out.push(Edit::set("CVN-502", &["metadata", "labels", VERSION_KEY], version));
    }
    if cx.runs("CVN-501") {
        for list in TEMPLATE_LISTS {
            let count =
                doc.pointer(&format!("/spec/{list}")).and_then(Value::as_array).map(Vec::len).unwrap_or(0);
            for i in 0..count {
                let Some(template) =
                    doc.pointer(&format!("/spec/{list}/{i}/template")).filter(|t| t.is_object())
                else {
                    continue;
                };
                // Metadata or annotations written as a CEL expression are computed at render
                // time: they cannot be stamped statically (the edits would conflict).
                let computed = |v: Option<&Value>| v.is_some_and(|v| !v.is_object() && !v.is_null());
                if computed(template.get("metadata")) || computed(template.pointer("/metadata/annotations")) {
                    cx.notes.push(format!(
                        "covenant: spec.{list}[{i}].template: its annotations are a CEL expression, so they cannot be stamped here; stamp them in the expression"
                    ));
                    continue;
                }
                let index = i.to_string();
                for (key, value) in [(STAMP_VERSION, version), (STAMP_TYPE, logical.as_str())] {
                    let path = ["spec", list, index.as_str(), "template", "metadata", "annotations", key];
                    out.push(Edit::set("CVN-501", &path, value));
                }
            }
        }
    }
    out
}

/// The release labels OpenChoreo sets on what it renders: the release's name and namespace.
pub const RELEASE_LABELS: (&str, &str) =
    ("openchoreo.dev/rendered-release-name", "openchoreo.dev/rendered-release-namespace");

/// CVN-501 for an object the platform rendered from a release: the two stamps from the
/// version that release froze, looked up through the cluster view. `Err` says why it could
/// not be resolved (the object is then admitted unchanged, with a warning; never a guess).
pub fn rendered_edits(doc: &Value, labels: (&str, &str), cx: &Context<'_>) -> Result<Vec<Edit>, String> {
    if !cx.runs("CVN-501") {
        return Ok(Vec::new());
    }
    let Some(release) = label(doc, labels.0) else { return Ok(Vec::new()) };
    let namespace =
        label(doc, labels.1).or_else(|| doc.pointer("/metadata/namespace").and_then(Value::as_str));
    let releases = cx
        .cluster
        .list(GROUP, "ComponentRelease", namespace, cx.budget)
        .map_err(|e| format!("the release {release} that rendered it cannot be looked up: {e}"))?;
    let found = releases
        .iter()
        .find(|r| r.pointer("/metadata/name").and_then(Value::as_str) == Some(release))
        .ok_or_else(|| format!("the release {release} that rendered it is not found"))?;
    let version = found
        .pointer("/spec/componentType/version")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("the release {release} records no componentType version"))?;
    let name = found.pointer("/spec/componentType/name").and_then(Value::as_str).unwrap_or_default();
    let logical = name.rsplit('/').next().unwrap_or(name);
    Ok(vec![
        Edit::set("CVN-501", &["metadata", "annotations", STAMP_VERSION], version),
        Edit::set("CVN-501", &["metadata", "annotations", STAMP_TYPE], logical),
    ])
}

/// CVN-408, CVN-402, CVN-403; returns the declared version when it is valid.
fn scheme(
    doc: &Value,
    logical: &str,
    object: &str,
    subject: &str,
    cx: &mut Context<'_>,
) -> Option<semver::Version> {
    let declared = declared_version(doc)?;
    let pointer = "/metadata/annotations/openchoreo.dev~1version";
    let version = match semver::Version::parse(declared) {
        Ok(v) => v,
        Err(e) => {
            cx.report(
                "CVN-408",
                pointer,
                vec![
                    ("version", declared.to_string()),
                    ("reason", format!("{e}; a construct version is MAJOR.MINOR.PATCH")),
                ],
            );
            return None;
        }
    };
    if version.major == 0 {
        let experimental =
            annotation(doc, DESCRIPTION).is_some_and(|d| d.to_ascii_lowercase().contains("experimental"));
        if !experimental {
            cx.report(
                "CVN-408",
                pointer,
                vec![
                    ("version", declared.to_string()),
                    ("reason", format!("a 0.x version says the contract may change without notice; constructs start at 1.0.0, and a genuinely experimental one says so in {DESCRIPTION}")),
                    (crate::rules::finding::FIX, format!("publish it as 1.0.0, or, if it is experimental, say \"experimental\" in the {DESCRIPTION} annotation")),
                ],
            );
        }
    }
    for key in [NAME_LABEL, VERSION_KEY] {
        let found = label(doc, key);
        let expected = if key == NAME_LABEL { logical.to_string() } else { declared.to_string() };
        if found != Some(expected.as_str()) {
            let detail = match found {
                None => format!("{key}={expected}"),
                Some(f) => format!("{key}={expected} (it says \"{f}\")"),
            };
            cx.report(
                "CVN-402",
                "/metadata/labels",
                vec![("object", subject.to_string()), ("label", detail)],
            );
        }
    }
    // Objects published before the scheme carry no label and keep their logical name.
    if label(doc, NAME_LABEL).is_some() {
        let expected = format!("{logical}-v{}", version.major);
        if object != expected || object.len() > 63 {
            let expected = if expected.len() > 63 {
                format!("{expected} (and at most 63 characters: shorten the logical name)")
            } else {
                expected
            };
            cx.report(
                "CVN-403",
                "/metadata/name",
                vec![("name", object.to_string()), ("expected", expected)],
            );
        }
    }
    Some(version)
}

/// CVN-401: every stamp agrees with the declared version and logical name.
fn stamps(doc: &Value, version: &semver::Version, logical: &str, cx: &mut Context<'_>) {
    for list in TEMPLATE_LISTS {
        for (i, r) in
            doc.pointer(&format!("/spec/{list}")).and_then(Value::as_array).into_iter().flatten().enumerate()
        {
            let Some(annotations) = r.pointer("/template/metadata/annotations").and_then(Value::as_object)
            else {
                continue;
            };
            for (key, expected) in [(STAMP_VERSION, version.to_string()), (STAMP_TYPE, logical.to_string())] {
                if let Some(found) = annotations.get(key).and_then(Value::as_str) {
                    if found != expected {
                        let pointer = format!(
                            "/spec/{list}/{i}/template/metadata/annotations/{}",
                            crate::schema::pointer::escape(key)
                        );
                        cx.report(
                            "CVN-401",
                            pointer,
                            vec![
                                ("stamp", key.to_string()),
                                ("found", found.to_string()),
                                ("expected", expected),
                            ],
                        );
                    }
                }
            }
        }
    }
}

/// CVN-404 and CVN-405 against the other published objects of the logical name.
fn siblings(
    doc: &Value,
    kind: &str,
    logical: &str,
    object: &str,
    version: &semver::Version,
    subject: &Subject,
    cx: &mut Context<'_>,
) {
    let namespace =
        subject.namespace.as_deref().or_else(|| doc.pointer("/metadata/namespace").and_then(Value::as_str));
    let budget = cx.budget;
    let others = match cx.cluster.list(GROUP, kind, namespace, budget) {
        Ok(o) => o,
        Err(e) => {
            cx.lookup_failed("CVN-404", &e);
            return;
        }
    };
    let same: Vec<_> = others
        .iter()
        .filter(|o| label(o, NAME_LABEL) == Some(logical))
        .filter(|o| o.pointer("/metadata/name").and_then(Value::as_str) != Some(object))
        .collect();
    if label(doc, DEFAULT_LABEL) == Some("true") {
        let defaults: Vec<&str> = same
            .iter()
            .filter(|o| label(o, DEFAULT_LABEL) == Some("true"))
            .filter_map(|o| o.pointer("/metadata/name").and_then(Value::as_str))
            .collect();
        if !defaults.is_empty() {
            cx.report(
                "CVN-404",
                "/metadata/labels/openchoreo.dev~1default",
                vec![
                    ("count", (defaults.len() + 1).to_string()),
                    ("logical", format!("{logical} ({object}, {})", defaults.join(", "))),
                ],
            );
        }
    }
    // A MINOR or PATCH moves the existing `-v<major>` object forward; it is never a new object.
    if subject.operation == Operation::Create {
        let same_major: Vec<&str> = same
            .iter()
            .filter(|o| {
                label(o, VERSION_KEY)
                    .and_then(|v| semver::Version::parse(v).ok())
                    .is_some_and(|v| v.major == version.major)
            })
            .filter_map(|o| o.pointer("/metadata/name").and_then(Value::as_str))
            .collect();
        if let Some(existing) = same_major.first() {
            cx.report(
                "CVN-409",
                "/metadata/name",
                vec![
                    ("bump", "a MINOR or PATCH".into()),
                    ("how", format!("as the new object {object}; move {existing} forward to {version} in place instead")),
                ],
            );
        }
    }
    for o in &same {
        if label(o, VERSION_KEY).and_then(|v| semver::Version::parse(v).ok()).as_ref() == Some(version) {
            let other = o.pointer("/metadata/name").and_then(Value::as_str).unwrap_or("?");
            cx.report(
                "CVN-405",
                "/metadata/labels/openchoreo.dev~1version",
                vec![
                    ("version", version.to_string()),
                    ("logical", logical.to_string()),
                    ("a", object.to_string()),
                    ("b", other.to_string()),
                ],
            );
        }
    }
}

/// Where in a construct a contract change was made: a contract pointer (`/parameters/size`,
/// `/outputs/url`, `/validations`, `/rendered/<id>`) as a pointer into the document
/// (`/spec/parameters/openAPIV3Schema/properties/size`, `/spec/outputs`, …).
pub fn locate(doc: &Value, contract_pointer: &str) -> String {
    let mut parts = contract_pointer.splitn(3, '/').skip(1);
    let (section, rest) = (parts.next().unwrap_or_default(), parts.next().map(|r| format!("/{r}")));
    match section {
        "parameters" | "environmentConfigs" => {
            let rest = rest.as_deref().unwrap_or_default();
            match spelled(doc.get("spec").unwrap_or(&Value::Null), section) {
                Ok(Some(Spelled::JsonSchema(raw, at))) => {
                    format!("{}{}", at.pointer, super::schema_bearing::schema_pointer(raw, rest))
                }
                Ok(Some(Spelled::Shorthand(fields, _, at))) => {
                    format!("{}{}", at.pointer, crate::schema::shorthand::field_pointer(fields, rest))
                }
                _ => format!("/spec/{section}"),
            }
        }
        "outputs" => "/spec/outputs".to_string(),
        "validations" => "/spec/validations".to_string(),
        "rendered" => {
            let id = rest.as_deref().and_then(|r| r.split('/').nth(1)).unwrap_or_default();
            TEMPLATE_LISTS
                .iter()
                .find_map(|list| {
                    let items = doc.pointer(&format!("/spec/{list}"))?.as_array()?;
                    let i = items.iter().position(|r| r.get("id").and_then(Value::as_str) == Some(id))?;
                    Some(format!("/spec/{list}/{i}"))
                })
                // Removed: the list it was removed from.
                .or_else(|| {
                    TEMPLATE_LISTS
                        .iter()
                        .find(|l| doc.pointer(&format!("/spec/{l}")).is_some())
                        .map(|l| format!("/spec/{l}"))
                })
                .unwrap_or_else(|| "/spec".to_string())
        }
        _ => "/spec".to_string(),
    }
}

/// An UPDATE: the contract diff against the declared move, and majors as new objects.
fn evolution(
    old: &Value,
    new: &Value,
    to: &semver::Version,
    logical: &str,
    subject: &str,
    cx: &mut Context<'_>,
) {
    let Some(from) = declared_version(old).and_then(|v| semver::Version::parse(v).ok()) else { return };
    let changes = contract_diff(&contract(old).0, &contract(new).0);
    let text = format!("{subject} {from} → {to}");
    let locate = |j: &Judged| locate(new, &j.change.pointer);
    super::declared_bump(
        cx,
        &text,
        &from,
        to,
        &changes,
        "/metadata/annotations/openchoreo.dev~1version",
        &locate,
    );
    if to.major != from.major {
        cx.report(
            "CVN-409",
            "/metadata/annotations/openchoreo.dev~1version",
            vec![
                ("bump", "MAJOR".into()),
                ("how", format!("in place ({from} → {to}); a major is a new object: create {logical}-v{} and leave this one to its consumers", to.major)),
            ],
        );
    }
}
