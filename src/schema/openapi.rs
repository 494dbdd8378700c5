//! The loader for OpenAPI v3 structural schemas (a CRD version's `openAPIV3Schema`) and JSON
//! Schema with `$defs`/`$ref` (OpenChoreo's `parameters` and `environmentConfigs`). Both
//! read into the one model; the dialect only decides what is allowed:
//!
//! - `OpenApi` is what the kube-apiserver accepts in a CRD: no `$ref`, and no vendor
//!   extension beyond the `x-kubernetes-*` ones the model knows.
//! - `JsonSchema` resolves local `$ref`s (`#/$defs/…`, `#/definitions/…`) by inlining, keeps
//!   other `x-…` extensions as data, and reads `type: [t, "null"]` as nullable.
//!
//! Closedness is covenant's, not pruning's: where an object declares `properties` and
//! neither `additionalProperties` nor `x-kubernetes-preserve-unknown-fields` opens it, an
//! undeclared key is refused rather than silently dropped. An object that declares no
//! properties and no `additionalProperties` accepts any key.
//!
//! Strict like everything covenant reads: a keyword the model does not know is a problem
//! naming its path and the nearest keyword; every problem is returned, not only the first.

mod text;
pub use text::{Layout, Placed};

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::validate::found;
use super::{Additional, CelRule, LoadProblem, Schema, Type};
use crate::pointer::{unescape, At as _, Location};

/// Which schema language a document is written in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// OpenAPI v3 structural schema, as in a CRD.
    OpenApi,
    /// JSON Schema with local `$ref`s.
    JsonSchema,
}

/// Keywords both dialects read.
const KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "additionalProperties",
    "items",
    "required",
    "enum",
    "const",
    "nullable",
    "default",
    "description",
    "title",
    "example",
    "examples",
    "format",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "minProperties",
    "maxProperties",
    "uniqueItems",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-int-or-string",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-list-type",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];

/// Keywords only JSON Schema reads: references and annotations kept as extensions.
const JSON_SCHEMA_ONLY: &[&str] =
    &["$ref", "$defs", "definitions", "$schema", "$id", "$comment", "deprecated", "readOnly", "writeOnly"];

/// Keywords a CRD's `JSONSchemaProps` can carry that the model keeps as data, not meaning:
/// annotations (`id`, `$schema`, `externalDocs`) and what only non-structural
/// (`apiextensions.k8s.io/v1beta1`) schemas use. The diff compares them as extensions.
const OPENAPI_KEPT: &[&str] = &[
    "id",
    "$schema",
    "externalDocs",
    "patternProperties",
    "dependencies",
    "additionalItems",
    "definitions",
    "$ref",
];

/// "; did you mean …?" with the keyword of `dialect` nearest to `keyword`, or nothing.
fn nearest_keyword(dialect: Dialect, keyword: &str) -> String {
    let only = match dialect {
        Dialect::OpenApi => &[][..],
        Dialect::JsonSchema => JSON_SCHEMA_ONLY,
    };
    crate::suggest::hint(keyword, KEYWORDS.iter().chain(only).copied())
}

/// The keys an `x-kubernetes-validations` rule may carry.
const CEL_KEYS: &[&str] = &["rule", "message", "messageExpression", "reason", "fieldPath", "optionalOldSelf"];

/// The keywords an OpenAPI v3 structural schema does not know in a schema read keeping them
/// (`Keep::unknown`, as a CRD's schema is read to be compared): each with where it is, below
/// `at`, and why it matters. A misspelled `maxLenght` is kept and compared as data, but
/// validates nothing. Each place is named, as the text holds it: a node that identical
/// places of the text share (an OpenAPI schema has no `$ref`) is looked at in each.
pub fn unknown_keywords(schema: &Arc<Schema>, at: &str) -> Vec<(String, String)> {
    let unknown = |node: &Schema| node.extensions.keys().any(|k| !OPENAPI_KEPT.contains(&k.as_str()));
    // Most schemas have none: they are looked for first without naming any place.
    let mut stack: Vec<&Schema> = vec![schema];
    loop {
        match stack.pop() {
            None => return Vec::new(),
            Some(node) if unknown(node) => break,
            Some(node) => each_child(node, |_, child| stack.push(child)),
        }
    }
    let mut found = Vec::new();
    // One buffer holds the place of the node at hand: each node's place is its parent's
    // (the first `parent` bytes) and its step, so no node allocates one of its own.
    let mut place = at.to_string();
    let mut stack: Vec<(&Schema, usize, Option<Reach<'_>>)> = vec![(schema, at.len(), None)];
    while let Some((node, parent, step)) = stack.pop() {
        place.truncate(parent);
        match step {
            None => {}
            Some(Reach::Property(name)) => {
                place.push_str("/properties/");
                match name.contains(['~', '/']) {
                    true => place.push_str(&crate::pointer::escape(name)),
                    false => place.push_str(name),
                }
            }
            Some(Reach::Items) => place.push_str("/items"),
            Some(Reach::Additional) => place.push_str("/additionalProperties"),
            Some(Reach::Member(what, i)) => place.push_str(&format!("/{what}/{i}")),
            Some(Reach::Not) => place.push_str("/not"),
        }
        for key in node.extensions.keys().filter(|k| !OPENAPI_KEPT.contains(&k.as_str())) {
            let hint = nearest_keyword(Dialect::OpenApi, key);
            found.push((
                format!("{place}/{}", crate::pointer::escape(key)),
                format!(
                    "keyword \"{key}\" is not known to an OpenAPI v3 structural schema, so it \
                     validates nothing (the API server refuses it under strict field validation, \
                     or drops it){hint}"
                ),
            ));
        }
        // Popped in document order: what is found first comes first in the text.
        let first = stack.len();
        each_child(node, |step, child| stack.push((child, place.len(), Some(step))));
        stack[first..].reverse();
    }
    found
}

/// How a schema node is reached from its parent.
enum Reach<'a> {
    Property(&'a str),
    Items,
    Additional,
    Member(&'static str, usize),
    Not,
}

/// The schemas a node holds, in the order its keywords are written, each with how it is
/// reached.
fn each_child<'a>(node: &'a Schema, mut visit: impl FnMut(Reach<'a>, &'a Schema)) {
    for (name, property) in &node.properties {
        visit(Reach::Property(name), property);
    }
    if let Some(items) = node.items.as_deref() {
        visit(Reach::Items, items);
    }
    if let Additional::Schema(additional) = &node.additional {
        visit(Reach::Additional, additional);
    }
    for (what, members) in [("allOf", &node.all_of), ("anyOf", &node.any_of), ("oneOf", &node.one_of)] {
        for (i, member) in members.iter().enumerate() {
            visit(Reach::Member(what, i), member);
        }
    }
    if let Some(not) = node.not.as_deref() {
        visit(Reach::Not, not);
    }
}

/// How deep `$ref`s may nest (a definition referencing one referencing one …).
pub const MAX_REF_DEPTH: usize = 64;

/// The most schema nodes one schema may build: a backstop beside sharing, far above any real
/// CRD (the largest in the corpus build some tens of thousands).
pub const MAX_SCHEMA_NODES: usize = 200_000;

/// What copying a node's own keywords costs, in nodes.
fn weight(s: &Schema) -> usize {
    1 + s.properties.len()
        + s.enumeration.as_ref().map_or(0, Vec::len)
        + s.required.len()
        + s.extensions.len()
        + s.validations.len()
        + s.all_of.len()
        + s.any_of.len()
        + s.one_of.len()
}

/// A reference token: `~` and `/` escaped.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// What a load keeps beside a schema's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keep {
    /// A keyword the model does not know is kept as an extension (else it is a problem).
    pub unknown: bool,
    /// `description`s are kept. Else each is still read and must be a string, but the model
    /// holds none: a judgement of shape never reads them, and they are most of a CRD's bytes.
    pub descriptions: bool,
}

impl Keep {
    /// Everything read: unknown keywords as extensions, and descriptions.
    pub const ALL: Keep = Keep { unknown: true, descriptions: true };
    /// Unknown keywords as extensions, no descriptions: the shape a CRD update is judged on.
    pub const SHAPE: Keep = Keep { unknown: true, descriptions: false };

    /// Descriptions, and unknown keywords when `unknown`.
    const fn described(unknown: bool) -> Keep {
        Keep { unknown, descriptions: true }
    }
}

/// Load a schema at `at`; every problem is returned.
pub fn load(value: &Value, at: &Location, dialect: Dialect) -> Result<Schema, Vec<LoadProblem>> {
    load_with(value, at, dialect, Keep::described(false))
}

/// Load a schema the way the diff reads a stored one: a keyword the model does not know is
/// kept as an extension (so a change to it is reported, unclassified) instead of refused.
/// The API server drops unknown schema fields with a warning, so a CRD it stored may carry
/// them; the diff must not fail on what the server accepted.
pub fn load_keeping_unknown(
    value: &Value,
    at: &Location,
    dialect: Dialect,
) -> Result<Schema, Vec<LoadProblem>> {
    load_with(value, at, dialect, Keep::ALL)
}

/// A keyword a schema was loaded keeping that its dialect does not know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownKeyword {
    /// Where it is written (in a definition, where the definition is).
    pub at: Location,
    /// The keyword.
    pub keyword: String,
    /// "; did you mean …?" with the nearest keyword, or nothing.
    pub hint: String,
}

/// `load_keeping_unknown`, and the keywords it kept that the dialect does not know. A
/// misspelled `maxLenght` is kept so a stored schema still loads, but it validates nothing,
/// and a reader that decodes the schema strictly refuses it.
pub fn load_noting_unknown(
    value: &Value,
    at: &Location,
    dialect: Dialect,
) -> (Result<Schema, Vec<LoadProblem>>, Vec<UnknownKeyword>) {
    let mut loader = Loader::new(value, at, dialect, Keep::ALL);
    loader.unknown = Some(Vec::new());
    let schema = loader.load();
    (schema, loader.unknown.unwrap_or_default())
}

/// Load a schema keeping what `keep` says (`load_keeping_unknown` keeps everything).
pub fn load_keeping(
    value: &Value,
    at: &Location,
    dialect: Dialect,
    keep: Keep,
) -> Result<Schema, Vec<LoadProblem>> {
    load_with(value, at, dialect, keep)
}

/// The direct reader alone: the model of a clean OpenAPI schema text, `None` where it
/// declines (a problem to word, or a text it does not take). `load_text` is what callers want;
/// this shows which path a text takes.
pub fn decode_clean(text: &str, keep_unknown: bool) -> Option<Schema> {
    text::decode(text, Keep::described(keep_unknown))
}

/// Load a structural schema from its JSON text, as `load_keeping_unknown` (when
/// `keep_unknown`) or `load` would from the parsed text. A clean OpenAPI schema is read
/// straight into the model; anything else (and JSON Schema) through the parsed tree, so every
/// problem is worded by one loader.
pub fn load_text(
    text: &str,
    at: &Location,
    dialect: Dialect,
    keep_unknown: bool,
) -> Result<Schema, Vec<LoadProblem>> {
    if dialect == Dialect::OpenApi {
        if let Some(schema) = text::decode(text, Keep::described(keep_unknown)) {
            return Ok(schema);
        }
    }
    match serde_json::from_str::<Value>(text) {
        Ok(tree) => load_with(&tree, at, dialect, Keep::described(keep_unknown)),
        Err(why) => Err(vec![LoadProblem { at: at.clone(), message: format!("not readable JSON: {why}") }]),
    }
}

/// Load an OpenAPI schema text as `load_text` does, beside one read before (the same version's
/// schema before an update): every node whose bytes repeat the twin's node at the same place
/// is the twin's node, shared, not built again (a twin read keeping something else is not
/// used). What is loaded equals what `load_keeping` loads from the parsed text.
pub fn load_text_beside<'t>(
    text: &'t str,
    at: &Location,
    keep: Keep,
    twin: Option<&Placed<'_>>,
) -> Result<Placed<'t>, Vec<LoadProblem>> {
    if let Some(placed) = text::decode_placed(text, keep, twin) {
        return Ok(placed);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(tree) => load_with(&tree, at, Dialect::OpenApi, keep).map(|s| Placed::unplaced(text, s, keep)),
        Err(why) => Err(vec![LoadProblem { at: at.clone(), message: format!("not readable JSON: {why}") }]),
    }
}

/// The clean OpenAPI schema at the start of `text` (the rest of a larger text, as a review's
/// body is from where a version schema begins), read as `load_text_beside` reads a whole one:
/// its layout, whose `len` is how many bytes it spans. `None` where the direct reader
/// declines; the caller then finds the schema's end another way and loads its text, which
/// words what is wrong.
pub fn read_leading(text: &str, keep: Keep, twin: Option<&Placed<'_>>) -> Option<Layout> {
    text::decode_leading(text, keep, twin)
}

fn load_with(value: &Value, at: &Location, dialect: Dialect, keep: Keep) -> Result<Schema, Vec<LoadProblem>> {
    Loader::new(value, at, dialect, keep).load()
}

/// Where the loader stands: the caller's location and the steps below it, borrowed on the
/// stack. Spelled out as a `Location` (two strings) only for a problem, so a clean schema is
/// read without building a location per node.
#[derive(Clone, Copy)]
struct At<'a> {
    base: &'a Location,
    parent: Option<&'a At<'a>>,
    step: Step<'a>,
}

#[derive(Clone, Copy)]
enum Step<'a> {
    Here,
    Key(&'a str),
    Index(usize),
}

impl<'a> At<'a> {
    fn root(base: &'a Location) -> At<'a> {
        At { base, parent: None, step: Step::Here }
    }

    fn key<'b>(&'b self, key: &'b str) -> At<'b> {
        At { base: self.base, parent: Some(self), step: Step::Key(key) }
    }

    fn index(&self, index: usize) -> At<'_> {
        At { base: self.base, parent: Some(self), step: Step::Index(index) }
    }

    fn location(&self) -> Location {
        let mut steps = Vec::new();
        let mut at = Some(self);
        while let Some(a) = at {
            steps.push(a.step);
            at = a.parent;
        }
        steps.iter().rev().fold(self.base.clone(), |loc, step| match step {
            Step::Here => loc,
            Step::Key(k) => loc.key(k),
            Step::Index(i) => loc.index(*i),
        })
    }
}

struct Loader<'v> {
    root: &'v Value,
    /// Where the root stands in its document: definitions are named from here.
    base: &'v Location,
    dialect: Dialect,
    problems: Vec<LoadProblem>,
    /// The `$ref`s being expanded, innermost last (cycle detection).
    refs: Vec<String>,
    /// Every definition loaded so far, by the reference that named it: each is read once and
    /// shared by every node that references it.
    definitions: HashMap<String, Arc<Schema>>,
    /// The nodes built so far, against `MAX_SCHEMA_NODES`.
    nodes: usize,
    /// What is kept beside the shape: unknown keywords (as extensions, instead of reporting
    /// them), descriptions.
    keep: Keep,
    /// The unknown keywords kept, when asked for (`load_noting_unknown`).
    unknown: Option<Vec<UnknownKeyword>>,
}

impl<'v> Loader<'v> {
    fn new(root: &'v Value, base: &'v Location, dialect: Dialect, keep: Keep) -> Loader<'v> {
        Loader {
            root,
            base,
            dialect,
            problems: Vec::new(),
            refs: Vec::new(),
            definitions: HashMap::new(),
            nodes: 0,
            keep,
            unknown: None,
        }
    }

    /// The schema at the root, or every problem.
    fn load(&mut self) -> Result<Schema, Vec<LoadProblem>> {
        let schema = self.node(self.root, &At::root(self.base));
        if self.problems.is_empty() {
            Ok(Arc::unwrap_or_clone(schema))
        } else {
            Err(std::mem::take(&mut self.problems))
        }
    }

    fn problem(&mut self, at: Location, message: impl Into<String>) {
        self.problems.push(LoadProblem { at, message: message.into() });
    }

    /// Resolve a local reference to the node it names.
    fn resolve(&self, reference: &str) -> Option<&'v Value> {
        let root: &'v Value = self.root;
        let pointer = reference.strip_prefix('#')?;
        if pointer.is_empty() {
            return Some(root);
        }
        // `Value::pointer` unescapes `~0`/`~1` itself; a `$ref` may also be percent-encoded,
        // which local references in practice never are.
        root.at(pointer)
    }

    /// Nodes are built on the heap where their parent keeps them (`properties`, `items`, …
    /// hold boxes).
    fn node(&mut self, value: &Value, at: &At<'_>) -> Arc<Schema> {
        let Some(map) = value.as_object() else {
            if let Value::Bool(b) = value {
                // JSON Schema's boolean schemas: `true` accepts anything, `false` nothing.
                if self.dialect == Dialect::JsonSchema {
                    return Arc::new(if *b { Schema::any() } else { Schema::nothing() });
                }
            }
            self.problem(at.location(), format!("expected a schema mapping, found {}", found(value)));
            return Arc::new(Schema::any());
        };
        if !self.spend(1) {
            return Arc::new(Schema::any());
        }
        if let Some(reference) = map.get("$ref") {
            return self.reference(map, reference, at);
        }
        Arc::new(self.keywords(map, at, None))
    }

    /// Count `n` nodes against the limit; past it, one problem naming the limit, and nothing
    /// more is built.
    fn spend(&mut self, n: usize) -> bool {
        let before = self.nodes;
        self.nodes = self.nodes.saturating_add(n);
        if self.nodes <= MAX_SCHEMA_NODES {
            return true;
        }
        if before <= MAX_SCHEMA_NODES {
            let at = self.base.clone();
            self.problem(
                at,
                format!(
                    "the schema is larger than covenant reads: more than {MAX_SCHEMA_NODES} schema nodes \
                     (counting each node a definition adds where it is referenced with keywords beside \
                     \"$ref\")"
                ),
            );
        }
        false
    }

    /// The definition a local reference names, loaded once at its own place in the document.
    fn definition(&mut self, name: &str, target: &Value) -> Arc<Schema> {
        if let Some(d) = self.definitions.get(name) {
            return Arc::clone(d);
        }
        let mut location = self.base.clone();
        for step in name.trim_start_matches('#').split('/').skip(1) {
            location = location.key(&unescape(step));
        }
        self.refs.push(name.to_string());
        let schema = self.node(target, &At::root(&location));
        self.refs.pop();
        self.definitions.insert(name.to_string(), Arc::clone(&schema));
        schema
    }

    fn reference(&mut self, map: &Map<String, Value>, reference: &Value, at: &At<'_>) -> Arc<Schema> {
        let here = at.key("$ref");
        if self.dialect == Dialect::OpenApi {
            self.problem(
                here.location(),
                "\"$ref\" is not allowed in a structural schema (CRD openAPIV3Schema)",
            );
            return Arc::new(Schema::any());
        }
        let Some(name) = reference.as_str() else {
            self.problem(here.location(), format!("expected a reference string, found {}", found(reference)));
            return Arc::new(Schema::any());
        };
        if self.refs.iter().any(|r| r == name) {
            self.problem(
                here.location(),
                format!("\"$ref\": \"{name}\" is recursive; covenant's model holds finite schemas only"),
            );
            return Arc::new(Schema::any());
        }
        if self.refs.len() >= MAX_REF_DEPTH && !self.definitions.contains_key(name) {
            self.problem(
                here.location(),
                format!("\"$ref\": \"{name}\" nests definitions more than {MAX_REF_DEPTH} deep, more than covenant reads"),
            );
            return Arc::new(Schema::any());
        }
        let Some(target) = self.resolve(name) else {
            let hint = if name.starts_with('#') {
                "no such definition"
            } else {
                "only local references (#/…) are read"
            };
            self.problem(here.location(), format!("\"$ref\": \"{name}\" cannot be resolved: {hint}"));
            return Arc::new(Schema::any());
        };
        if !target.is_object() {
            self.problem(
                here.location(),
                format!("\"$ref\": \"{name}\" names {}, not a schema", found(target)),
            );
            return Arc::new(Schema::any());
        }
        let shared = self.definition(name, target);
        if map.len() == 1 {
            return shared;
        }
        // The referring node's own keywords (a `description` or `default` beside the `$ref`)
        // over the definition: one new node whose children are still the definition's.
        if !self.spend(weight(&shared)) {
            return Arc::new(Schema::any());
        }
        let siblings: Map<String, Value> =
            map.iter().filter(|(k, _)| *k != "$ref").map(|(k, v)| (k.clone(), v.clone())).collect();
        Arc::new(self.keywords(&siblings, at, Some(Schema::clone(&shared))))
    }

    /// A node from its keywords; over `base` (a definition a `$ref` names) when given, each
    /// keyword replacing what the definition said.
    fn keywords(&mut self, map: &Map<String, Value>, at: &At<'_>, base: Option<Schema>) -> Schema {
        let (mut s, mut open, mut additional_declared) = match base {
            Some(b) => {
                let open = b.additional == Additional::Open;
                let declared = b.additional != Additional::Unstated;
                (b, open, declared)
            }
            None => (Schema::default(), false, false),
        };
        for (key, v) in map {
            let here = at.key(key);
            match key.as_str() {
                "type" => {
                    s.types.clear();
                    self.types(v, &here, &mut s)
                }
                "properties" => match v.as_object() {
                    Some(props) => {
                        s.properties.clear();
                        for (name, p) in props {
                            let child = self.node(p, &here.key(name));
                            s.properties.insert(name.clone(), child);
                        }
                    }
                    None => self.problem(
                        here.location(),
                        format!("expected a mapping of schemas, found {}", found(v)),
                    ),
                },
                "additionalProperties" => {
                    additional_declared = true;
                    match v {
                        Value::Bool(true) => open = true,
                        Value::Bool(false) => {}
                        _ => s.additional = Additional::Schema(self.node(v, &here)),
                    }
                }
                "items" => match v {
                    Value::Array(_) => self.problem(
                        here.location(),
                        "tuple `items` (a list of schemas) is not supported; use one schema",
                    ),
                    _ => s.items = Some(self.node(v, &here)),
                },
                "required" => match v
                    .as_array()
                    .map(|a| a.iter().map(|k| k.as_str().map(str::to_string)).collect::<Option<Vec<_>>>())
                {
                    Some(Some(keys)) => s.required = keys,
                    _ => self.problem(
                        here.location(),
                        format!("expected a list of property names, found {}", found(v)),
                    ),
                },
                "enum" => match v.as_array() {
                    Some(a) => s.enumeration = Some(a.clone()),
                    None => self
                        .problem(here.location(), format!("expected a list of values, found {}", found(v))),
                },
                "const" => s.enumeration = Some(vec![v.clone()]),
                "nullable" => s.nullable = self.boolean(v, here),
                "default" => s.default = Some(v.clone()),
                "description" => {
                    let description = self.string(v, here);
                    if self.keep.descriptions {
                        s.description = description;
                    }
                }
                "title" => s.title = self.string(v, here),
                "example" => s.example = Some(v.clone()),
                "examples" => s.example = Some(v.clone()),
                "format" => s.format = self.string(v, here),
                "pattern" => s.pattern = self.string(v, here),
                "minimum" => s.bounds.minimum = self.number(v, here),
                "maximum" => s.bounds.maximum = self.number(v, here),
                "exclusiveMinimum" | "exclusiveMaximum" => {
                    let min = key == "exclusiveMinimum";
                    match v {
                        // OpenAPI v3.0: a flag on minimum/maximum.
                        Value::Bool(b) => {
                            if min {
                                s.bounds.exclusive_minimum = *b
                            } else {
                                s.bounds.exclusive_maximum = *b
                            }
                        }
                        // JSON Schema 2019+: the bound itself.
                        Value::Number(n) if self.dialect == Dialect::JsonSchema => {
                            let n = n.as_f64();
                            if min {
                                s.bounds.minimum = n;
                                s.bounds.exclusive_minimum = true;
                            } else {
                                s.bounds.maximum = n;
                                s.bounds.exclusive_maximum = true;
                            }
                        }
                        _ => self.problem(here.location(), format!("expected a boolean, found {}", found(v))),
                    }
                }
                "multipleOf" => s.bounds.multiple_of = self.number(v, here),
                "minLength" => s.bounds.min_length = self.count(v, here),
                "maxLength" => s.bounds.max_length = self.count(v, here),
                "minItems" => s.bounds.min_items = self.count(v, here),
                "maxItems" => s.bounds.max_items = self.count(v, here),
                "minProperties" => s.bounds.min_properties = self.count(v, here),
                "maxProperties" => s.bounds.max_properties = self.count(v, here),
                "uniqueItems" => s.unique_items = self.boolean(v, here),
                "allOf" => s.all_of = self.members(v, &here),
                "anyOf" => s.any_of = self.members(v, &here),
                "oneOf" => s.one_of = self.members(v, &here),
                "not" => s.not = Some(self.node(v, &here)),
                "x-kubernetes-preserve-unknown-fields" => open = self.boolean(v, here),
                "x-kubernetes-int-or-string" => s.int_or_string = self.boolean(v, here),
                "x-kubernetes-embedded-resource" => s.embedded_resource = self.boolean(v, here),
                "x-kubernetes-list-type" => {
                    s.list_type = self.choice(v, here, &["atomic", "set", "map"]);
                }
                "x-kubernetes-map-type" => s.map_type = self.choice(v, here, &["atomic", "granular"]),
                "x-kubernetes-list-map-keys" => match v
                    .as_array()
                    .map(|a| a.iter().map(|k| k.as_str().map(str::to_string)).collect::<Option<Vec<_>>>())
                {
                    Some(Some(keys)) => s.list_map_keys = keys,
                    _ => self.problem(
                        here.location(),
                        format!("expected a list of key names, found {}", found(v)),
                    ),
                },
                "x-kubernetes-validations" => s.validations = self.cel_rules(v, &here),
                "$defs" | "definitions" if self.dialect == Dialect::JsonSchema => {
                    // Definitions are read where they are referenced; load each here too (once:
                    // the load is shared) so a problem in an unreferenced definition is
                    // reported. Only the root's definitions are reachable by a local name
                    // covenant builds; nested ones are read when referenced.
                    match v.as_object() {
                        Some(defs) if at.parent.is_none() && std::ptr::eq(at.base, self.base) => {
                            for (name, d) in defs {
                                let reference = format!("#/{key}/{}", escape(name));
                                if !self.refs.contains(&reference) {
                                    self.definition(&reference, d);
                                }
                            }
                        }
                        Some(defs) => {
                            for (name, d) in defs {
                                self.node(d, &here.key(name));
                            }
                        }
                        None => self.problem(
                            here.location(),
                            format!("expected a mapping of schemas, found {}", found(v)),
                        ),
                    }
                }
                k if self.dialect == Dialect::JsonSchema
                    && (k.starts_with("x-") || JSON_SCHEMA_ONLY.contains(&k)) =>
                {
                    s.extensions.insert(k.to_string(), v.clone());
                }
                k if self.dialect == Dialect::OpenApi && OPENAPI_KEPT.contains(&k) => {
                    s.extensions.insert(k.to_string(), v.clone());
                }
                k if self.keep.unknown => {
                    if let Some(unknown) = &mut self.unknown {
                        let hint = nearest_keyword(self.dialect, k);
                        unknown.push(UnknownKeyword { at: here.location(), keyword: k.to_string(), hint });
                    }
                    s.extensions.insert(k.to_string(), v.clone());
                }
                other => {
                    let hint = nearest_keyword(self.dialect, other);
                    let what = match self.dialect {
                        Dialect::OpenApi => "an OpenAPI v3 structural schema",
                        Dialect::JsonSchema => "covenant's JSON Schema reader",
                    };
                    self.problem(
                        here.location(),
                        format!("keyword \"{other}\" is not known to {what}{hint}"),
                    );
                }
            }
        }
        finish(&mut s, open, additional_declared);
        s
    }

    fn types(&mut self, v: &Value, here: &At<'_>, s: &mut Schema) {
        let names: Vec<&Value> = match v {
            Value::Array(a) if self.dialect == Dialect::JsonSchema => a.iter().collect(),
            other => vec![other],
        };
        for name in names {
            match name.as_str() {
                Some("null") if self.dialect == Dialect::JsonSchema => s.nullable = true,
                Some(t) => match Type::parse(t) {
                    Some(t) if !s.types.contains(&t) => s.types.push(t),
                    Some(_) => {}
                    None => self.problem(
                        here.location(),
                        format!("unsupported type \"{t}\"; expected string, integer, number, boolean, array or object"),
                    ),
                },
                None => self.problem(here.location(), format!("expected a type name, found {}", found(name))),
            }
        }
    }

    fn members(&mut self, v: &Value, here: &At<'_>) -> Vec<Arc<Schema>> {
        match v.as_array() {
            Some(a) if !a.is_empty() => {
                a.iter().enumerate().map(|(i, m)| self.node(m, &here.index(i))).collect()
            }
            _ => {
                self.problem(
                    here.location(),
                    format!("expected a non-empty list of schemas, found {}", found(v)),
                );
                Vec::new()
            }
        }
    }

    fn cel_rules(&mut self, v: &Value, here: &At<'_>) -> Vec<CelRule> {
        let Some(items) = v.as_array() else {
            self.problem(here.location(), format!("expected a list of rules, found {}", found(v)));
            return Vec::new();
        };
        let mut rules = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let at = here.index(i);
            let Some(m) = item.as_object() else {
                self.problem(at.location(), format!("expected a rule mapping, found {}", found(item)));
                continue;
            };
            let mut rule = CelRule::default();
            for (k, x) in m {
                let kat = at.key(k);
                match k.as_str() {
                    "rule" => rule.rule = self.string(x, kat).unwrap_or_default(),
                    "message" => rule.message = self.string(x, kat),
                    "messageExpression" => rule.message_expression = self.string(x, kat),
                    "reason" => rule.reason = self.string(x, kat),
                    "fieldPath" => rule.field_path = self.string(x, kat),
                    "optionalOldSelf" => rule.optional_old_self = self.boolean(x, kat),
                    other => {
                        let hint = crate::suggest::hint(other, CEL_KEYS.iter().copied());
                        self.problem(
                            kat.location(),
                            format!(
                                "key \"{other}\" is not declared (allowed: {}){hint}",
                                CEL_KEYS.join(", ")
                            ),
                        );
                    }
                }
            }
            if rule.rule.is_empty() {
                self.problem(at.location(), "a validation rule needs a non-empty \"rule\"");
            }
            rules.push(rule);
        }
        rules
    }

    fn string(&mut self, v: &Value, here: At<'_>) -> Option<String> {
        match v {
            Value::String(s) => Some(s.clone()),
            _ => {
                self.problem(here.location(), format!("expected a string, found {}", found(v)));
                None
            }
        }
    }

    fn boolean(&mut self, v: &Value, here: At<'_>) -> bool {
        match v {
            Value::Bool(b) => *b,
            _ => {
                self.problem(here.location(), format!("expected a boolean, found {}", found(v)));
                false
            }
        }
    }

    fn number(&mut self, v: &Value, here: At<'_>) -> Option<f64> {
        match v.as_f64() {
            Some(n) => Some(n),
            None => {
                self.problem(here.location(), format!("expected a number, found {}", found(v)));
                None
            }
        }
    }

    fn count(&mut self, v: &Value, here: At<'_>) -> Option<u64> {
        match v.as_u64() {
            Some(n) => Some(n),
            None => {
                self.problem(here.location(), format!("expected a non-negative integer, found {}", found(v)));
                None
            }
        }
    }

    fn choice(&mut self, v: &Value, here: At<'_>, allowed: &[&str]) -> Option<String> {
        match v.as_str() {
            Some(s) if allowed.contains(&s) => Some(s.to_string()),
            _ => {
                self.problem(
                    here.location(),
                    format!("expected one of {}, found {}", allowed.join(", "), found(v)),
                );
                None
            }
        }
    }
}

/// What a node's keywords mean together, once all are read: int-or-string's types, and
/// whether the object is open, closed or says nothing beyond its properties.
fn finish(s: &mut Schema, open: bool, additional_declared: bool) {
    if s.int_or_string && s.types.is_empty() {
        s.types = smallvec::smallvec![Type::Integer, Type::String];
    }
    s.additional = if open {
        Additional::Open
    } else if additional_declared || !s.properties.is_empty() {
        std::mem::take(&mut s.additional)
    } else {
        Additional::Unstated
    };
}

/// The versions of a CRD document and each one's loaded `openAPIV3Schema`, keyed by version
/// name. A version without a schema is absent; every problem names its path in the CRD.
pub fn crd_schemas(crd: &Value) -> Result<BTreeMap<String, Schema>, Vec<LoadProblem>> {
    let mut out = BTreeMap::new();
    let mut problems = Vec::new();
    let versions = crd.at("/spec/versions").and_then(Value::as_array).cloned().unwrap_or_default();
    let base = Location::new("/spec/versions", "spec.versions");
    for (i, v) in versions.iter().enumerate() {
        let at = base.index(i).key("schema").key("openAPIV3Schema");
        let Some(schema) = v.at("/schema/openAPIV3Schema") else { continue };
        let name = v.get("name").and_then(Value::as_str).unwrap_or_default().to_string();
        match load(schema, &at, Dialect::OpenApi) {
            Ok(s) => {
                out.insert(name, s);
            }
            Err(p) => problems.extend(p),
        }
    }
    if problems.is_empty() {
        Ok(out)
    } else {
        Err(problems)
    }
}

/// A pointer token list for a `$ref` (exposed for tests and the diff's reporting).
pub fn ref_tokens(reference: &str) -> Vec<String> {
    reference.trim_start_matches('#').split('/').filter(|t| !t.is_empty()).map(unescape).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::validate::{validate, Problem, Required};
    use serde_json::json;

    fn at() -> Location {
        Location::new("/schema", "schema")
    }

    #[test]
    fn a_clean_schema_text_is_read_straight_into_the_model_the_loader_builds() {
        let text = r#"{"type":"object","description":"A \"quoted\" thing","title":"T",
            "required":["spec"],"x-kubernetes-preserve-unknown-fields":false,
            "properties":{"spec":{"type":"object","minProperties":1,"maxProperties":9,
              "x-kubernetes-map-type":"atomic","additionalProperties":{"type":"string","maxLength":63,
              "minLength":1,"pattern":"^[a-z]+$","format":"dns1123"}},
             "replicas":{"type":"integer","minimum":0,"maximum":10.5,"exclusiveMaximum":true,
              "multipleOf":1,"default":1,"nullable":true,"example":3},
             "ports":{"type":"array","minItems":1,"maxItems":4,"uniqueItems":false,
              "x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
              "items":{"type":"object","properties":{"name":{"type":"string","enum":["a","b"]}}}},
             "port":{"x-kubernetes-int-or-string":true,"anyOf":[{"type":"integer"},{"type":"string"}]},
             "raw":{"type":"object","x-kubernetes-embedded-resource":true,"x-kubernetes-preserve-unknown-fields":true},
             "mode":{"type":"string","const":"x","not":{"enum":["y"]},"allOf":[{"maxLength":3}],"oneOf":[{"minLength":1}]},
             "ext\u0041":{"externalDocs":{"url":"u"},"x-kubernetes-validations":[
              {"rule":"self.size() > 0","message":"m","messageExpression":"'e'","reason":"FieldValueInvalid",
               "fieldPath":".x","optionalOldSelf":true}]},
             "open":{"type":"object","additionalProperties":true}}}"#;
        let tree: Value = serde_json::from_str(text).unwrap();
        for keep_unknown in [false, true] {
            let direct = decode_clean(text, keep_unknown).expect("a clean schema is read directly");
            assert_eq!(
                direct,
                load_with(&tree, &at(), Dialect::OpenApi, Keep::described(keep_unknown)).unwrap()
            );
            assert_eq!(load_text(text, &at(), Dialect::OpenApi, keep_unknown).unwrap(), direct);
        }
        let kept = r#"{"type":"object","x-covenant-note":{"a":1}}"#;
        assert!(decode_clean(kept, false).is_none(), "an unknown keyword is a problem unless kept");
        assert_eq!(
            decode_clean(kept, true).unwrap(),
            load_keeping_unknown(&serde_json::from_str(kept).unwrap(), &at(), Dialect::OpenApi).unwrap()
        );
    }

    #[test]
    fn without_descriptions_none_is_kept_and_each_must_still_be_a_string() {
        // Read directly, and by the loader (a keyword twice makes the direct reader decline).
        for text in [
            r#"{"type":"object","description":"d","properties":{"a":{"type":"string","description":"x\ny"}}}"#,
            r#"{"type":"object","description":"d","properties":{"a":{"type":"string","type":"string","description":"x"}}}"#,
        ] {
            let shape = load_text_beside(text, &at(), Keep::SHAPE, None).unwrap();
            assert!(shape.root().description.is_none(), "{text}");
            assert!(shape.root().properties["a"].description.is_none(), "{text}");
            let all = load_text_beside(text, &at(), Keep::ALL, None).unwrap();
            assert_eq!(all.root().description.as_deref(), Some("d"), "{text}");
            assert!(all.root().properties["a"].description.is_some(), "{text}");
            let tree: Value = serde_json::from_str(text).unwrap();
            assert_eq!(
                **shape.root(),
                load_keeping(&tree, &at(), Dialect::OpenApi, Keep::SHAPE).unwrap(),
                "{text}"
            );
        }
        for text in [r#"{"type":"object","description":7}"#, r#"{"description":{"a":"b"}}"#] {
            assert!(load_text_beside(text, &at(), Keep::SHAPE, None).is_err(), "{text}");
        }
    }

    #[test]
    fn a_schema_text_with_a_problem_or_an_order_dependent_reading_is_read_by_the_loader() {
        let texts = [
            r#"{"type":"object","propertes":{}}"#,
            r##"{"$ref":"#/definitions/x","definitions":{"x":{}}}"##,
            r#"{"type":"array","items":[{"type":"string"}]}"#,
            r#"{"type":"string","enum":["a"],"const":"b"}"#,
            r#"{"example":1,"examples":[2]}"#,
            r#"{"type":"object","additionalProperties":true,"x-kubernetes-preserve-unknown-fields":false}"#,
            r#"{"type":"string","type":"integer"}"#,
            r#"{"type":"object","properties":{"a":{},"a":{"type":"string"}}}"#,
            r#"{"type":"strin"}"#,
            r#"{"type":["string","null"]}"#,
            r#"{"description":null}"#,
            r#"{"minLength":-1}"#,
            r#"{"maxLength":2.5}"#,
            r#"{"minimum":"1"}"#,
            r#"{"allOf":[]}"#,
            r#"{"x-kubernetes-list-type":"bag"}"#,
            r#"{"properties":{"a":true}}"#,
            r#"{"exclusiveMinimum":3}"#,
            r#"{"x-kubernetes-validations":[{"rule":"","message":"m"}]}"#,
            r#"{"x-kubernetes-validations":[{"rule":"true","messages":"m"}]}"#,
            r#"{"x-kubernetes-validations":[{"rule":"true","message":null}]}"#,
            r#"{"x-kubernetes-validations":[{"rule":"true","reason":7}]}"#,
            r#"{"x-kubernetes-validations":[{"rule":"true","optionalOldSelf":"yes"}]}"#,
            r#"{"x-kubernetes-validations":[{"message":"no rule"}]}"#,
            r#"{"x-kubernetes-validations":[{"rule":"a","rule":"b"}]}"#,
            r#"{"x-kubernetes-validations":{"rule":"true"}}"#,
            r#"{"x-kubernetes-validations":["true"]}"#,
            r#"{"required":["a",1]}"#,
            r#"{"type":"object"} trailing"#,
            r#"{"type":"object""#,
            "[]",
        ];
        for text in texts {
            assert!(decode_clean(text, false).is_none(), "{text}: the direct reader must decline");
            if text.contains("$ref") {
                // Kept keywords or not, a reference is the loader's to refuse.
                assert!(decode_clean(text, true).is_none(), "{text}");
            }
            // Keeping unknown keywords (as a stored CRD is read), both readers agree too.
            if let Ok(tree) = serde_json::from_str::<Value>(text) {
                let kept = load_text(text, &at(), Dialect::OpenApi, true);
                assert_eq!(kept, load_keeping_unknown(&tree, &at(), Dialect::OpenApi), "{text}");
            }
            let read = load_text(text, &at(), Dialect::OpenApi, false);
            match serde_json::from_str::<Value>(text) {
                Ok(tree) => assert_eq!(read, load(&tree, &at(), Dialect::OpenApi), "{text}"),
                Err(_) => {
                    let worded = read.expect_err(text);
                    assert!(worded[0].message.starts_with("not readable JSON"), "{text}: {worded:?}");
                }
            }
        }
    }

    #[test]
    fn a_structural_schema_loads_with_its_kubernetes_extensions() {
        let s = load(
            &json!({"type": "object", "required": ["spec"], "properties": {
                "spec": {"type": "object", "properties": {
                    "port": {"x-kubernetes-int-or-string": true},
                    "tags": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set", "maxItems": 3},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                    "name": {"type": "string", "nullable": true, "minLength": 1, "pattern": "^[a-z]+$"}
                }, "x-kubernetes-validations": [{"rule": "self.port != 0", "message": "port is set"}]}
            }}),
            &at(),
            Dialect::OpenApi,
        )
        .unwrap();
        let spec = &s.properties["spec"];
        assert_eq!(spec.properties["port"].types[..], [Type::Integer, Type::String]);
        assert_eq!(spec.properties["tags"].list_type.as_deref(), Some("set"));
        assert_eq!(spec.validations[0].message.as_deref(), Some("port is set"));
        assert_eq!(spec.additional, Additional::Closed);
        assert_eq!(spec.properties["extra"].additional, Additional::Open);
        let v = json!({"spec": {"port": "http", "tags": ["a", "b", "c", "d"], "extra": {"x": 1}, "labels": {"a": 1}, "nmae": "", "name": ""}});
        let problems: Vec<(String, Problem)> = validate(&s, &v, &Location::default(), Required::Everywhere)
            .violations
            .into_iter()
            .map(|v| (v.at.pointer, v.problem))
            .collect();
        let pointers: Vec<&str> = problems.iter().map(|(p, _)| p.as_str()).collect();
        assert_eq!(pointers, ["/spec/labels/a", "/spec/name", "/spec/nmae", "/spec/tags"]);
        assert!(matches!(&problems[2].1, Problem::Undeclared { nearest: Some(n), .. } if n == "name"));
    }

    #[test]
    fn json_schema_refs_resolve_and_recursion_is_refused() {
        let doc = json!({"type": "object", "$defs": {"Port": {"type": "integer", "minimum": 1, "maximum": 65535}},
                         "properties": {"port": {"$ref": "#/$defs/Port", "default": 8080, "x-ui": 1}},
                         "x-openchoreo-hint": "keep"});
        let s = load(&doc, &at(), Dialect::JsonSchema).unwrap();
        assert_eq!(s.properties["port"].types[..], [Type::Integer]);
        assert_eq!(s.properties["port"].default, Some(json!(8080)));
        assert_eq!(s.extensions["x-openchoreo-hint"], json!("keep"));
        let bad = validate(&s, &json!({"port": 70000}), &Location::default(), Required::Everywhere);
        assert_eq!(bad.violations[0].message(), "expected a number at most 65535, found a number 70000");

        let cyclic = json!({"$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}}}},
                            "$ref": "#/$defs/Node"});
        let problems = load(&cyclic, &at(), Dialect::JsonSchema).unwrap_err();
        assert!(problems.iter().all(|p| p.message.contains("recursive")), "{problems:?}");
        let missing = load(&json!({"$ref": "#/$defs/Nope"}), &at(), Dialect::JsonSchema).unwrap_err();
        assert!(missing[0].message.contains("cannot be resolved"), "{missing:?}");
    }

    #[test]
    fn a_definition_is_loaded_once_and_shared_and_its_problems_named_where_it_stands() {
        let doc = json!({"type": "object",
            "$defs": {"Port": {"type": "integer", "maximum": 65535, "minimun": 1}},
            "properties": {
                "http": {"$ref": "#/$defs/Port"},
                "https": {"$ref": "#/$defs/Port"},
                "admin": {"$ref": "#/$defs/Port", "maximum": 9999, "description": "admin port"}}});
        let problems = load(&doc, &at(), Dialect::JsonSchema).unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert_eq!(problems[0].at.pointer, "/schema/$defs/Port/minimun", "{problems:?}");

        let doc = json!({"type": "object",
            "$defs": {"Port": {"type": "object", "properties": {"n": {"type": "integer", "maximum": 65535}}}},
            "properties": {
                "http": {"$ref": "#/$defs/Port"},
                "https": {"$ref": "#/$defs/Port"},
                "admin": {"$ref": "#/$defs/Port", "required": ["n"], "description": "admin port"}}});
        let s = load(&doc, &at(), Dialect::JsonSchema).unwrap();
        assert!(Arc::ptr_eq(&s.properties["http"], &s.properties["https"]));
        // Keywords beside `$ref` make a node of their own over the definition's children.
        let admin = &s.properties["admin"];
        assert!(!Arc::ptr_eq(admin, &s.properties["http"]));
        assert!(Arc::ptr_eq(&admin.properties["n"], &s.properties["http"].properties["n"]));
        assert_eq!(admin.required, ["n"]);
        assert_eq!(admin.description.as_deref(), Some("admin port"));
        assert!(s.properties["http"].required.is_empty() && s.properties["http"].description.is_none());
    }

    #[test]
    fn unknown_keywords_are_problems_with_a_suggestion() {
        let problems = load(
            &json!({"type": "object", "properties": {"a": {"type": "string", "maxLenght": 3}}, "$ref": "#/x"}),
            &at(),
            Dialect::OpenApi,
        )
        .unwrap_err();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].message.contains("$ref"), "{problems:?}");
        let problems =
            load(&json!({"properties": {"a": {"type": "strin", "maxLenght": 3}}}), &at(), Dialect::OpenApi)
                .unwrap_err();
        assert_eq!(problems.len(), 2);
        let typo = problems.iter().find(|p| p.at.pointer == "/schema/properties/a/maxLenght").unwrap();
        assert!(typo.message.contains("did you mean \"maxLength\"?"), "{}", typo.message);
    }

    #[test]
    fn keywords_kept_unknown_are_found_where_the_text_has_them() {
        let schema = json!({"type": "object", "maxLenght": 3, "externalDocs": {"url": "u"},
            "properties": {
                "a/b": {"type": "array", "items": {"type": "string", "patern": "x"}},
                "c": {"allOf": [{"minimum": 0}, {"maximun": 9}], "not": {"x-vendor": true}},
                "d": {"type": "object", "additionalProperties": {"type": "string", "optional": ["e"]}},
                "f": {"type": "string", "x-kubernetes-validations": [{"rule": "self != ''"}]}}});
        let expected = [
            ("/s/maxLenght", "\"maxLength\""),
            ("/s/properties/a~1b/items/patern", "\"pattern\""),
            ("/s/properties/c/allOf/1/maximun", "\"maximum\""),
            ("/s/properties/c/not/x-vendor", ""),
            ("/s/properties/d/additionalProperties/optional", ""),
        ];
        let tree = Arc::new(load_keeping_unknown(&schema, &at(), Dialect::OpenApi).unwrap());
        let text = decode_clean(&schema.to_string(), true).map(Arc::new).expect("read by the text reader");
        for read in [tree, text] {
            let found = unknown_keywords(&read, "/s");
            let places: Vec<&str> = found.iter().map(|(at, _)| at.as_str()).collect();
            assert_eq!(places, expected.map(|(at, _)| at), "{found:?}");
            for ((_, why), (_, near)) in found.iter().zip(expected) {
                assert!(why.contains("not known to an OpenAPI v3 structural schema"), "{why}");
                assert_eq!(why.contains("did you mean"), !near.is_empty(), "{why}");
                assert!(why.contains(near), "{why}");
            }
        }
        // A schema of known keywords only has none.
        let clean = json!({"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}});
        assert!(unknown_keywords(&Arc::new(load(&clean, &at(), Dialect::OpenApi).unwrap()), "").is_empty());
    }

    #[test]
    fn one_of_and_any_of_count_accepting_members() {
        let s = load(&json!({"oneOf": [{"type": "string"}, {"type": "integer"}], "anyOf": [{"minimum": 0}, {"type": "string"}]}), &at(), Dialect::JsonSchema)
            .unwrap();
        assert!(validate(&s, &json!(3), &Location::default(), Required::Everywhere).violations.is_empty());
        let v = validate(&s, &json!(-3), &Location::default(), Required::Everywhere).violations;
        assert!(matches!(v[0].problem, Problem::Branch { keyword: "anyOf", .. }), "{v:?}");
    }
}
