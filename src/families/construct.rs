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
use crate::pointer::At;
use crate::pointer::Location;
use crate::rules::evolution::{judge, Judged};
use crate::schema::diff::{diff, Change, ChangeKind};
use crate::schema::openapi::{load_noting_unknown, Dialect, UnknownKeyword};
use crate::schema::shorthand::load_shorthand;
use crate::schema::{CelRule, LoadProblem, Schema};
use crate::subject::{Operation, Subject};
use crate::versioning::Bump;

use super::labels::{annotation, label};
pub use super::labels::{declared_version, logical_name, DEFAULT_LABEL, NAME_LABEL, VERSION_KEY};
pub use crate::openchoreo::{CONSTRUCT_KINDS as KINDS, GROUP, RELEASE_LABELS};
/// The stamp of the version a rendered object came from.
pub const STAMP_VERSION: &str = "openchoreo.dev/rendered-from-version";
/// The stamp of the logical type a rendered object came from.
pub const STAMP_TYPE: &str = "openchoreo.dev/rendered-from-type";
/// The annotation a 0.x construct uses to say it is experimental.
pub const DESCRIPTION: &str = "openchoreo.dev/description";

/// Where a construct keeps its resource templates.
const TEMPLATE_LISTS: [&str; 2] = ["resources", "creates"];

/// Kinds a consumer addresses by name: what they are called is part of the contract. Other
/// rendered objects (workloads, jobs, …) are implementation; their names may change freely.
const ADDRESSABLE: &[&str] = &[
    "Service",
    "Ingress",
    "HTTPRoute",
    "GRPCRoute",
    "TCPRoute",
    "TLSRoute",
    "ConfigMap",
    "Secret",
    "ExternalSecret",
    "PersistentVolumeClaim",
    "ServiceAccount",
];

/// One thing a rendered object shows a consumer: an addressable object's name, one of its
/// ports, or a path mounted into a container.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Fact {
    /// `rendered name`, `rendered port` or `mounted path`.
    what: &'static str,
    /// The kind of the object it is shown on.
    kind: String,
    /// The name template, the port (`name/port/protocol`) or the path, as normalised text.
    value: String,
}

/// One rendered object (a resource template, or a trait's patch): its kind, what it shows a
/// consumer, and the template itself (a change elsewhere in it is implementation).
#[derive(Clone, Debug, PartialEq)]
struct Rendered {
    kind: String,
    /// The name template, normalised (`${ metadata.name }` reads as `${metadata.name}`).
    name: Option<String>,
    facts: Vec<Fact>,
    template: Value,
    /// When and where it is rendered: `includeWhen`, `forEach`/`var`, `targetPlane`.
    scope: BTreeMap<String, Value>,
}

/// The members of a rendered entry (`resources[]`, `creates[]`) that say when and where its
/// template is rendered.
const RENDER_SCOPE: [&str; 4] = ["includeWhen", "forEach", "var", "targetPlane"];

/// A template string with the spacing inside `${…}` taken out, so one expression spelled
/// two ways compares equal; a quoted scalar and a plain one are already the same string.
fn normalise(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut depth = 0usize;
    let mut chars = text.trim().chars().peekable();
    while let Some(c) = chars.next() {
        if c == '$' && chars.peek() == Some(&'{') {
            depth += 1;
            out.push(c);
            out.push(chars.next().unwrap_or('{'));
            continue;
        }
        match c {
            '{' if depth > 0 => depth += 1,
            '}' if depth > 0 => depth -= 1,
            c if depth > 0 && c.is_whitespace() => continue,
            _ => {}
        }
        out.push(c);
    }
    out
}

/// What a rendered template shows: its own name and ports when its kind is addressable, and
/// every path it mounts into a container, wherever in it they are written.
fn facts(kind: &str, template: &Value) -> (Option<String>, Vec<Fact>) {
    let name = template.at("/metadata/name").and_then(Value::as_str).map(normalise);
    let mut out = Vec::new();
    if ADDRESSABLE.contains(&kind) {
        if let Some(n) = &name {
            out.push(Fact { what: "rendered name", kind: kind.to_string(), value: n.clone() });
        }
        for p in template.at("/spec/ports").and_then(Value::as_array).into_iter().flatten() {
            let field = |k: &str| match p.get(k) {
                Some(Value::String(s)) => normalise(s),
                Some(v) if !v.is_null() => v.to_string(),
                _ => String::new(),
            };
            let value = format!("{}/{}/{}", field("name"), field("port"), field("protocol"));
            out.push(Fact { what: "rendered port", kind: kind.to_string(), value });
        }
    }
    let mut mounts = Vec::new();
    mount_paths(template, &mut mounts);
    out.extend(mounts.into_iter().map(|value| Fact { what: "mounted path", kind: kind.to_string(), value }));
    out.sort();
    out.dedup();
    (name, out)
}

/// Every `mountPath` in a value, normalised.
fn mount_paths(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (k, x) in map {
                match (k.as_str(), x) {
                    ("mountPath", Value::String(p)) => out.push(normalise(p)),
                    _ => mount_paths(x, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|x| mount_paths(x, out)),
        _ => {}
    }
}

/// A construct's contract, extracted.
#[derive(Clone, Debug, Default)]
pub struct Contract {
    parameters: Section,
    environment_configs: Section,
    outputs: BTreeSet<String>,
    validations: Vec<CelRule>,
    rendered: BTreeMap<String, Rendered>,
    /// A trait's `removes`: each the rendered objects it deletes, as canonical text.
    removes: BTreeSet<String>,
    /// A ComponentType's `workloadType`: consumers name it `<workloadType>/<name>`.
    workload_type: Option<String>,
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
        let Some(fields) = spec.at(&format!("/schema/{legacy}")) else { return Ok(None) };
        let schema = Location::new("/spec/schema", "spec.schema");
        let types = spec.at("/schema/types").map(|t| (t, schema.key("types")));
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
    section_schema_noting(spec, section).0
}

/// `section_schema`, and the keywords of a JSON Schema section that no schema knows (kept, so
/// a stored construct still loads and compares; see `load_noting_unknown`).
fn section_schema_noting(
    spec: &Value,
    section: &str,
) -> (Result<Option<Schema>, Vec<LoadProblem>>, Vec<UnknownKeyword>) {
    match spelled(spec, section) {
        Err(p) => (Err(vec![p]), Vec::new()),
        Ok(None) => (Ok(None), Vec::new()),
        Ok(Some(Spelled::JsonSchema(raw, at))) => {
            let (schema, unknown) = load_noting_unknown(raw, &at, Dialect::JsonSchema);
            (schema.map(Some), unknown)
        }
        Ok(Some(Spelled::Shorthand(fields, types, at))) => {
            (load_shorthand(fields, types, &at).map(Some), Vec::new())
        }
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

fn schema_section(
    doc: &Value,
    section: &str,
    problems: &mut Vec<String>,
    unknown: &mut Vec<UnknownKeyword>,
) -> Section {
    let spec = doc.get("spec").unwrap_or(&Value::Null);
    let raw = spec.get(section).or_else(|| spec.get("schema")).cloned();
    let (schema, mut kept) = section_schema_noting(spec, section);
    unknown.append(&mut kept);
    let schema = schema.map_err(|ps| {
        problems.extend(ps.iter().map(ToString::to_string));
        ps.first().map(ToString::to_string).unwrap_or_default()
    });
    Section { raw, schema }
}

/// A construct's contract as read: what cannot be read (each problem named by its path), and
/// the keywords of its JSON Schemas that no schema knows, each where it is.
pub struct Read {
    /// The contract.
    pub contract: Contract,
    /// What cannot be read.
    pub problems: Vec<String>,
    /// Keywords no schema knows: kept and compared, but they validate nothing, and OpenChoreo
    /// decodes a construct's schema strictly and refuses them.
    pub unknown: Vec<UnknownKeyword>,
}

/// Extract the contract; a schema that cannot be read is a problem named by its path.
pub fn contract(doc: &Value) -> (Contract, Vec<String>) {
    let Read { contract, problems, .. } = read(doc);
    (contract, problems)
}

/// Read the contract, saying what cannot be read and what reads as nothing.
pub fn read(doc: &Value) -> Read {
    let mut problems = Vec::new();
    let mut unknown = Vec::new();
    let parameters = schema_section(doc, "parameters", &mut problems, &mut unknown);
    let environment_configs = schema_section(doc, "environmentConfigs", &mut problems, &mut unknown);
    let outputs = match doc.at("/spec/outputs") {
        Some(Value::Array(items)) => {
            items.iter().filter_map(|o| o.get("name").and_then(Value::as_str)).map(str::to_string).collect()
        }
        Some(Value::Object(map)) => map.keys().cloned().collect(),
        _ => BTreeSet::new(),
    };
    let mut validations = Vec::new();
    for list in ["validations", "preRenderValidations", "postRenderValidations"] {
        for v in doc.at(&format!("/spec/{list}")).and_then(Value::as_array).into_iter().flatten() {
            let rule = v.get("rule").and_then(Value::as_str).unwrap_or_default();
            let message = v.get("message").and_then(Value::as_str).map(str::to_string);
            // A validation's scope is part of the rule: which rendered objects it reads, on
            // which plane, how often, and when it applies at all.
            let rule = format!("{rule}{}", validation_scope(v));
            validations.push(CelRule { rule, message, ..CelRule::default() });
        }
    }
    let removes = doc
        .at("/spec/removes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|r| format!("{}{}", target_text(r.get("target")), plane_and_loop(r)))
        .collect();
    let mut rendered = BTreeMap::new();
    for list in TEMPLATE_LISTS {
        for (i, r) in
            doc.at(&format!("/spec/{list}")).and_then(Value::as_array).into_iter().flatten().enumerate()
        {
            let Some(template) = r.get("template") else { continue };
            let id = r
                .get("id")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| format!("{list}[{i}]"));
            let kind = template.get("kind").and_then(Value::as_str).unwrap_or_default().to_string();
            let (name, facts) = facts(&kind, template);
            let scope =
                RENDER_SCOPE.iter().filter_map(|k| r.get(*k).map(|v| (k.to_string(), v.clone()))).collect();
            rendered.insert(id, Rendered { kind, name, facts, template: template.clone(), scope });
        }
    }
    // A trait's patches render into its component's objects: what they mount shows too.
    for (i, p) in doc.at("/spec/patches").and_then(Value::as_array).into_iter().flatten().enumerate() {
        let kind = p.at("/target/kind").and_then(Value::as_str).unwrap_or_default().to_string();
        let (_, facts) = facts("", p);
        let facts = facts.into_iter().map(|f| Fact { kind: kind.clone(), ..f }).collect();
        let scope = BTreeMap::new();
        rendered.insert(
            format!("patches[{i}]"),
            Rendered { kind, name: None, facts, template: p.clone(), scope },
        );
    }
    Read {
        contract: Contract {
            parameters,
            environment_configs,
            outputs,
            validations,
            rendered,
            removes,
            workload_type: doc.at("/spec/workloadType").and_then(Value::as_str).map(str::to_string),
        },
        problems,
        unknown,
    }
}

/// A render target as text: `apps/v1 Deployment where ${…}`, and `mustMatch: false` where
/// the target may match nothing (OpenChoreo's default is true).
fn target_text(target: Option<&Value>) -> String {
    let Some(t) = target else { return "(no target)".to_string() };
    let field = |k: &str| t.get(k).and_then(Value::as_str).unwrap_or_default();
    let group = match field("group") {
        "" => field("version").to_string(),
        g => format!("{g}/{}", field("version")),
    };
    let mut text = format!("{group} {}", field("kind"));
    if let Some(w) = t.get("where").and_then(Value::as_str) {
        text.push_str(&format!(" where {}", normalise(w)));
    }
    if t.get("mustMatch") == Some(&Value::Bool(false)) {
        text.push_str(" (may match nothing)");
    }
    text
}

/// ` on <plane>` beyond the data plane, and ` for each <var> in ${…}`.
fn plane_and_loop(v: &Value) -> String {
    let mut text = String::new();
    if let Some(plane) = v.get("targetPlane").and_then(Value::as_str).filter(|p| *p != "dataplane") {
        text.push_str(&format!(" on {plane}"));
    }
    if let Some(each) = v.get("forEach").and_then(Value::as_str) {
        let var = v.get("var").and_then(Value::as_str).unwrap_or("?");
        text.push_str(&format!(" for each {var} in {}", normalise(each)));
    }
    text
}

/// What a pre- or post-render validation's rule is scoped to, as text appended to the rule
/// (empty for a plain validation): its target, plane, loop and guard.
fn validation_scope(v: &Value) -> String {
    let mut text = String::new();
    if v.get("target").is_some() {
        text.push_str(&format!(" [on {}", target_text(v.get("target"))));
        text.push_str(&plane_and_loop(v));
        if let Some(when) = v.get("when").and_then(Value::as_str) {
            text.push_str(&format!(" when {}", normalise(when)));
        }
        text.push(']');
    } else if let Some(when) = v.get("when").and_then(Value::as_str) {
        text.push_str(&format!(" [when {}]", normalise(when)));
    }
    text
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
                let mut gone = empty.clone();
                gone.additional = a.additional.clone();
                out.extend(judge(diff(a, &gone, section)))
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
    let rules = |v: &[CelRule]| {
        let mut s = Schema::default();
        s.validations = v.to_vec();
        s
    };
    out.extend(judge(diff(&rules(&old.validations), &rules(&new.validations), "/validations")));
    out.extend(rendered_diff(&old.rendered, &new.rendered));
    // The name consumers reference a ComponentType by moves with its workload type.
    if old.workload_type != new.workload_type {
        out.push(judged(
            "/workloadType".to_string(),
            ChangeKind::Unclassified,
            "workloadType (consumers name the type <workloadType>/<name>)",
            old.workload_type.clone().map(Value::String),
            new.workload_type.clone().map(Value::String),
            Bump::Major,
            Some("CVN-208"),
        ));
    }
    // A trait's removals: one added (or widened, which reads as another) deletes objects a
    // consumer deployed, as a rendered object removed is MAJOR; one dropped brings them back.
    for r in new.removes.difference(&old.removes) {
        out.push(judged(
            "/removes".to_string(),
            ChangeKind::Unclassified,
            "removal of rendered objects",
            None,
            Some(Value::String(format!("removes {r}"))),
            Bump::Major,
            Some("CVN-208"),
        ));
    }
    for r in old.removes.difference(&new.removes) {
        out.push(judged(
            "/removes".to_string(),
            ChangeKind::Unclassified,
            "removal of rendered objects (the objects are rendered again)",
            Some(Value::String(format!("removes {r}"))),
            None,
            Bump::Minor,
            None,
        ));
    }
    out
}

/// The rendered shape, compared by what it shows, never by internal identifiers: objects are
/// paired by id and kind, then by kind and name, then by kind in order, so an entry renamed
/// from `minio` to `garage` that renders the same kind is the same object. A fact a consumer
/// sees (an addressable object's name, a port, a mounted path) that is gone is MAJOR
/// (CVN-208; one that moved within a pair is said as a change), a new one MINOR; an object
/// rendered in addition is MINOR; everything else is a PATCH implementation row.
fn rendered_diff(old: &BTreeMap<String, Rendered>, new: &BTreeMap<String, Rendered>) -> Vec<Judged> {
    let mut out = Vec::new();
    let mut pairs: Vec<(&String, &String)> = Vec::new();
    let mut unpaired_new: Vec<&String> = new.keys().collect();
    let mut unpaired_old: Vec<&String> = Vec::new();
    type Rule<'r> = &'r dyn Fn(&String, &Rendered, &String, &Rendered) -> bool;
    /// Pair each of `olds` with the first of `news` the rule accepts; the olds left over.
    fn pass<'m>(
        rule: Rule<'_>,
        (old, new): (&'m BTreeMap<String, Rendered>, &'m BTreeMap<String, Rendered>),
        olds: Vec<&'m String>,
        news: &mut Vec<&'m String>,
        pairs: &mut Vec<(&'m String, &'m String)>,
    ) -> Vec<&'m String> {
        let mut left = Vec::new();
        for o in olds {
            match news.iter().position(|n| rule(o, &old[o], n, &new[*n])) {
                Some(i) => pairs.push((o, news.remove(i))),
                None => left.push(o),
            }
        }
        left
    }
    let olds: Vec<&String> = old.keys().collect();
    let maps = (old, new);
    let olds = pass(&|oi, o, ni, n| oi == ni && o.kind == n.kind, maps, olds, &mut unpaired_new, &mut pairs);
    let olds =
        pass(&|_, o, _, n| o.kind == n.kind && o.name == n.name, maps, olds, &mut unpaired_new, &mut pairs);
    unpaired_old.extend(pass(&|_, o, _, n| o.kind == n.kind, maps, olds, &mut unpaired_new, &mut pairs));

    let at = |id: &str| format!("/rendered/{id}");
    let owner = |facts: &BTreeMap<String, Rendered>, f: &Fact| {
        facts.iter().find(|(_, r)| r.facts.contains(f)).map(|(id, _)| id.clone()).unwrap_or_default()
    };
    let all = |m: &BTreeMap<String, Rendered>| -> BTreeSet<Fact> {
        m.values().flat_map(|r| r.facts.clone()).collect()
    };
    let (before, after) = (all(old), all(new));
    // A fact of an object that is gone, or new, as a whole is said once, with the object.
    let mut added: Vec<&Fact> =
        after.difference(&before).filter(|a| !unpaired_new.contains(&&owner(new, a))).collect();
    let mut gone = BTreeSet::new();
    for f in before.difference(&after) {
        let from = owner(old, f);
        if unpaired_old.contains(&&from) {
            gone.insert(from);
            continue;
        }
        let partner = pairs.iter().find(|(o, _)| **o == from).map(|(_, n)| (*n).clone());
        let moved = added.iter().position(|a| {
            a.what == f.what && a.kind == f.kind && partner.as_deref() == Some(owner(new, a).as_str())
        });
        let to = moved.map(|i| added.remove(i));
        out.push(judged(
            at(&to.map(|a| owner(new, a)).unwrap_or(from)),
            ChangeKind::Unclassified,
            &format!("{} of {}", f.what, f.kind),
            Some(Value::String(f.value.clone())),
            to.map(|a| Value::String(a.value.clone())),
            Bump::Major,
            Some("CVN-208"),
        ));
    }
    for id in &gone {
        let kind = Value::String(old[id].kind.clone());
        out.push(judged(
            at(id),
            ChangeKind::PropertyRemoved,
            id,
            Some(kind),
            None,
            Bump::Major,
            Some("CVN-208"),
        ));
    }
    unpaired_old.retain(|id| !gone.contains(*id));
    for a in added {
        out.push(judged(
            at(&owner(new, a)),
            ChangeKind::Unclassified,
            &format!("{} of {}", a.what, a.kind),
            None,
            Some(Value::String(a.value.clone())),
            Bump::Minor,
            None,
        ));
    }
    for id in unpaired_new {
        let kind = Value::String(new[id].kind.clone());
        out.push(judged(at(id), ChangeKind::PropertyAdded, id, None, Some(kind), Bump::Minor, None));
    }
    let implementation = |id: &str, what: &str| {
        judged(at(id), ChangeKind::AnnotationChanged, what, None, None, Bump::Patch, None)
    };
    for (o, n) in pairs {
        // When or where an object is rendered: a condition added or changed, another plane or
        // loop, may leave a consumer without an object it had (MAJOR, as one removed); a
        // condition dropped renders it for more of them (MINOR).
        let (a, b) = (&old[o].scope, &new[n].scope);
        for key in RENDER_SCOPE {
            let (before, after) = (a.get(key), b.get(key));
            if before == after {
                continue;
            }
            let bump = if key == "includeWhen" && after.is_none() { Bump::Minor } else { Bump::Major };
            out.push(judged(
                at(n),
                ChangeKind::Unclassified,
                &format!("{key} of {}", new[n].kind),
                before.cloned(),
                after.cloned(),
                bump,
                (bump == Bump::Major).then_some("CVN-208"),
            ));
        }
        if old[o].template != new[n].template {
            out.push(implementation(n, "template (implementation)"));
        }
    }
    for id in unpaired_old {
        out.push(implementation(id, "template no longer rendered (implementation)"));
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
            super::pins::retired(subject, cx);
            return;
        }
        let Some(Ok(doc)) = subject.object.as_ref().map(|o| o.value()) else { return };
        let logical = logical_name(doc);
        let object = doc.at("/metadata/name").and_then(Value::as_str).unwrap_or_default().to_string();
        let kind = subject.gvk.kind.clone();
        let subject_text = format!("{kind} {object}");
        let version = scheme(doc, &logical, &object, &subject_text, cx);
        if let Some(v) = &version {
            stamps(doc, v, &logical, cx);
            siblings(doc, &kind, &logical, &object, v, subject, cx);
        }
        let Read { problems, unknown, .. } = read(doc);
        for p in problems {
            cx.report(
                "CVN-109",
                "/spec",
                vec![("reason", format!("{subject_text}: a contract schema cannot be read: {p}"))],
            );
        }
        for u in unknown {
            let reason = format!(
                "{subject_text}: keyword \"{}\" is not known to a structural schema, so it validates nothing, and OpenChoreo, which decodes the schema strictly, refuses it{}",
                u.keyword, u.hint
            );
            cx.report("CVN-109", &u.at.pointer, vec![("reason", reason)]);
        }
        let unjudged = not_judged(doc);
        if !unjudged.is_empty() {
            let note = format!(
                "CVN-212 not judged: {subject_text}: covenant's contract diff does not read {}; a change there is not judged",
                unjudged.join(", ")
            );
            if !cx.unchecked.contains(&note) {
                cx.unchecked.push(note);
            }
        }
        if subject.operation == Operation::Update {
            if let (Some(Ok(old)), Some(to)) = (subject.old_object.as_ref().map(|o| o.value()), version) {
                evolution(old, doc, &to, &logical, &subject_text, cx);
            }
        }
    }
}

/// How covenant reads each member of a construct's spec, as OpenChoreo's CRDs declare them
/// (`name` for a member of `spec`, `list[].name` for a member of a list's items): `None`, it
/// is part of the contract covenant diffs; `Some(why)`, it is not judged, and a document that
/// sets it is told so. A member in neither (a new upstream field) is named as unknown.
/// `tests` walk the CRDs and fail on a member this table does not list.
pub const SPEC_MEMBERS: &[(&str, Option<&str>)] = &[
    ("parameters", None),
    ("environmentConfigs", None),
    ("schema", None),
    ("outputs", None),
    ("validations", None),
    ("validations[].rule", None),
    ("validations[].message", None),
    ("preRenderValidations", None),
    ("preRenderValidations[].rule", None),
    ("preRenderValidations[].message", None),
    ("postRenderValidations", None),
    ("postRenderValidations[].rule", None),
    ("postRenderValidations[].message", None),
    ("postRenderValidations[].target", None),
    ("postRenderValidations[].targetPlane", None),
    ("postRenderValidations[].forEach", None),
    ("postRenderValidations[].var", None),
    ("postRenderValidations[].when", None),
    ("resources", None),
    ("resources[].id", None),
    ("resources[].template", None),
    ("resources[].includeWhen", None),
    ("resources[].forEach", None),
    ("resources[].var", None),
    ("resources[].targetPlane", None),
    ("creates", None),
    ("creates[].template", None),
    ("creates[].includeWhen", None),
    ("creates[].forEach", None),
    ("creates[].var", None),
    ("creates[].targetPlane", None),
    ("patches", None),
    ("patches[].target", None),
    ("patches[].operations", None),
    ("patches[].forEach", None),
    ("patches[].var", None),
    ("patches[].targetPlane", None),
    ("removes", None),
    ("removes[].target", None),
    ("removes[].forEach", None),
    ("removes[].var", None),
    ("removes[].targetPlane", None),
    ("workloadType", None),
    ("allowedTraits", Some("the traits a Component of this type may attach")),
    ("allowedWorkflows", Some("the workflows a Component of this type may use")),
    ("traits", Some("the traits every Component of this type gets")),
    ("externalRefs", Some("what a Workflow's run reads from outside")),
    ("runTemplate", Some("how a Workflow runs")),
    ("ttlAfterCompletion", Some("how long a Workflow's run is kept")),
    ("workflowPlaneRef", Some("where a Workflow runs")),
];

/// The members of a construct's spec that covenant does not judge, each with why (or that it
/// does not know the member), in document order.
pub fn not_judged(doc: &Value) -> Vec<String> {
    let Some(spec) = doc.get("spec").and_then(Value::as_object) else { return Vec::new() };
    let mut out = Vec::new();
    let mut say = |path: String| match SPEC_MEMBERS.iter().find(|(p, _)| *p == path) {
        Some((_, None)) => {}
        Some((_, Some(why))) => out.push(format!("spec.{path} ({why})")),
        None => out.push(format!("spec.{path} (a member covenant does not know)")),
    };
    for (key, value) in spec {
        say(key.clone());
        let listed = SPEC_MEMBERS.iter().any(|(p, _)| p.starts_with(&format!("{key}[].")));
        if let (true, Value::Array(items)) = (listed, value) {
            let mut seen = BTreeSet::new();
            for member in items.iter().filter_map(Value::as_object).flat_map(|o| o.keys()) {
                if seen.insert(member) {
                    say(format!("{key}[].{member}"));
                }
            }
        }
    }
    out
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
            let count = doc.at(&format!("/spec/{list}")).and_then(Value::as_array).map(Vec::len).unwrap_or(0);
            for i in 0..count {
                let Some(template) = doc.at(&format!("/spec/{list}/{i}/template")).filter(|t| t.is_object())
                else {
                    continue;
                };
                // Metadata or annotations written as a CEL expression are computed at render
                // time: they cannot be stamped statically (the edits would conflict).
                let computed = |v: Option<&Value>| v.is_some_and(|v| !v.is_object() && !v.is_null());
                if computed(template.get("metadata")) || computed(template.at("/metadata/annotations")) {
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

/// CVN-501 for an object the platform rendered from a release: the two stamps from the
/// version that release froze, looked up through the cluster view. `Err` says why it could
/// not be resolved (the object is then admitted unchanged, with a warning; never a guess).
pub fn rendered_edits(doc: &Value, labels: (&str, &str), cx: &Context<'_>) -> Result<Vec<Edit>, String> {
    if !cx.runs("CVN-501") {
        return Ok(Vec::new());
    }
    let Some(release) = label(doc, labels.0) else { return Ok(Vec::new()) };
    let namespace = label(doc, labels.1).or_else(|| doc.at("/metadata/namespace").and_then(Value::as_str));
    let key = format!("{}/{release}", namespace.unwrap_or_default());
    let releases = cx
        .cluster
        .lookup(GROUP, "ComponentRelease", namespace, &crate::cluster::BY_NAME, &key, cx.budget)
        .map_err(|e| format!("the release {release} that rendered it cannot be looked up: {e}"))?;
    let found = releases
        .iter()
        .find(|r| r.at("/metadata/name").and_then(Value::as_str) == Some(release))
        .ok_or_else(|| format!("the release {release} that rendered it is not found"))?;
    let version = found
        .at("/spec/componentType/version")
        .and_then(Value::as_str)
        .ok_or_else(|| format!("the release {release} records no componentType version"))?;
    let name = found.at("/spec/componentType/name").and_then(Value::as_str).unwrap_or_default();
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
    let mut sites = Vec::new();
    for list in TEMPLATE_LISTS.iter().chain(&["patches"]) {
        if let Some(rendered) = doc.at(&format!("/spec/{list}")) {
            stamp_sites(rendered, &format!("/spec/{list}"), &mut sites);
        }
    }
    for (pointer, key, found) in sites {
        let expected = if key == STAMP_VERSION { version.to_string() } else { logical.to_string() };
        if found != expected {
            cx.report(
                "CVN-401",
                pointer,
                vec![("stamp", key.to_string()), ("found", found.to_string()), ("expected", expected)],
            );
        }
    }
}

/// Every literal stamp in what a construct renders, wherever it is written: a member of any
/// metadata (the object's, a pod template's, any nested template's) or the value of a patch
/// operation whose path ends at a stamp. A stamp computed by an expression (`${…}`) is the
/// renderer's to get right and is not judged here.
fn stamp_sites<'v>(value: &'v Value, pointer: &str, out: &mut Vec<(String, &'static str, &'v str)>) {
    let stamp = |key: &str| [STAMP_VERSION, STAMP_TYPE].into_iter().find(|s| *s == key);
    match value {
        Value::Object(map) => {
            // A JSON patch operation that writes one stamp.
            if let (Some(path), Some(Value::String(found))) =
                (map.get("path").and_then(Value::as_str), map.get("value"))
            {
                let last = path.rsplit('/').next().map(crate::pointer::unescape).unwrap_or_default();
                if let Some(key) = stamp(&last).filter(|_| !found.contains("${")) {
                    out.push((format!("{pointer}/value"), key, found));
                }
            }
            for (k, v) in map {
                let here = format!("{pointer}/{}", crate::pointer::escape(k));
                match (stamp(k), v) {
                    (Some(key), Value::String(found)) if !found.contains("${") => {
                        out.push((here, key, found))
                    }
                    _ => stamp_sites(v, &here, out),
                }
            }
        }
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                stamp_sites(v, &format!("{pointer}/{i}"), out);
            }
        }
        _ => {}
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
        subject.namespace.as_deref().or_else(|| doc.at("/metadata/namespace").and_then(Value::as_str));
    let budget = cx.budget;
    let others =
        match cx.cluster.lookup(GROUP, kind, namespace, &super::labels::BY_LOGICAL_NAME, logical, budget) {
            Ok(o) => o,
            Err(e) => {
                cx.lookup_failed("CVN-404", &e);
                return;
            }
        };
    let same: Vec<_> = others
        .iter()
        .filter(|o| label(o, NAME_LABEL) == Some(logical))
        .filter(|o| o.at("/metadata/name").and_then(Value::as_str) != Some(object))
        .collect();
    if label(doc, DEFAULT_LABEL) == Some("true") {
        let defaults: Vec<&str> = same
            .iter()
            .filter(|o| label(o, DEFAULT_LABEL) == Some("true"))
            .filter_map(|o| o.at("/metadata/name").and_then(Value::as_str))
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
            .filter_map(|o| o.at("/metadata/name").and_then(Value::as_str))
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
            let other = o.at("/metadata/name").and_then(Value::as_str).unwrap_or("?");
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
        // The list the document writes its validations in (the older `validations`, or the
        // render-time pair).
        "validations" => ["validations", "preRenderValidations", "postRenderValidations"]
            .iter()
            .find(|l| doc.at(&format!("/spec/{l}")).is_some())
            .map_or("/spec/validations".to_string(), |l| format!("/spec/{l}")),
        "removes" => "/spec/removes".to_string(),
        "workloadType" => "/spec/workloadType".to_string(),
        "rendered" => {
            let id = rest.as_deref().and_then(|r| r.split('/').nth(1)).unwrap_or_default();
            TEMPLATE_LISTS
                .iter()
                .find_map(|list| {
                    let items = doc.at(&format!("/spec/{list}"))?.as_array()?;
                    let i = items.iter().position(|r| r.get("id").and_then(Value::as_str) == Some(id))?;
                    Some(format!("/spec/{list}/{i}"))
                })
                // Removed: the list it was removed from.
                .or_else(|| {
                    TEMPLATE_LISTS
                        .iter()
                        .find(|l| doc.at(&format!("/spec/{l}")).is_some())
                        .map(|l| format!("/spec/{l}"))
                })
                .unwrap_or_else(|| "/spec".to_string())
        }
        _ => "/spec".to_string(),
    }
}

/// Why no single published construct answers `published_at`.
#[derive(Debug, thiserror::Error)]
pub enum Unpublished {
    /// The kind asked for is not a construct kind.
    #[error("kind \"{0}\" is not a construct kind (expected one of {kinds})", kinds = KINDS.join(", "))]
    UnknownKind(String),
    /// The cluster state could not be read: nothing can be said about what is published.
    #[error("cannot read the published constructs: {0}")]
    Unreadable(#[from] crate::cluster::Error),
    /// Nothing of that name is published.
    #[error("no construct named \"{0}\" is published")]
    Nothing(String),
    /// The name is published, not at that version.
    #[error("\"{name}\" is not published at {version} (published: {published})")]
    NotAt {
        /// The logical name.
        name: String,
        /// The version asked for.
        version: String,
        /// The versions that are published, comma-separated.
        published: String,
    },
    /// More than one object publishes the name at that version.
    #[error("{count} objects publish \"{name}\" at {version}; refusing to pick one")]
    Ambiguous {
        /// How many.
        count: usize,
        /// The logical name.
        name: String,
        /// The version.
        version: String,
    },
}

/// The published construct of logical name `name` at exactly `version`, of `kind` (or of any
/// construct kind): what `covenant diff --context DIR NAME FROM TO` and `/api/v0/compare`
/// compare. An error names what is published instead, or says the cluster could not be read.
pub fn published_at(
    cluster: &dyn crate::cluster::ClusterView,
    kind: Option<&str>,
    namespace: Option<&str>,
    name: &str,
    version: &str,
) -> Result<Value, Unpublished> {
    if let Some(k) = kind.filter(|k| !KINDS.contains(k)) {
        return Err(Unpublished::UnknownKind(k.to_string()));
    }
    let mut found = Vec::new();
    let mut published = Vec::new();
    for k in KINDS.iter().filter(|k| kind.is_none_or(|want| want == **k)) {
        // A namespace narrows the namespaced kinds; the cluster-scoped twins have none.
        let scope = namespace.filter(|_| !k.starts_with("Cluster"));
        if namespace.is_some() && scope.is_none() {
            continue;
        }
        for o in cluster.lookup(GROUP, k, scope, &super::labels::BY_LOGICAL_NAME, name, None)? {
            if logical_name(&o) != name {
                continue;
            }
            let v = declared_version(&o).unwrap_or("(unversioned)").to_string();
            if v == version {
                found.push((*o).clone());
            }
            published.push(v);
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 if published.is_empty() => Err(Unpublished::Nothing(name.to_string())),
        0 => Err(Unpublished::NotAt {
            name: name.to_string(),
            version: version.to_string(),
            published: published.join(", "),
        }),
        count => Err(Unpublished::Ambiguous { count, name: name.to_string(), version: version.to_string() }),
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
