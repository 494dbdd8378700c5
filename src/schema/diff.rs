//! The schema diff: two schemas of the model in, every difference out as data — where, what
//! kind of change, the value before and after. It states facts and no policy: whether a
//! change is MAJOR, MINOR or PATCH is decided by the evolution rules
//! (`rules::evolution::classify`), never here.
//!
//! Complete over the model: every field of `Schema` is compared. A difference no specific
//! kind describes (an `x-…` extension, `not`, a changed set of `anyOf` members) is reported
//! as `Unclassified`, which the evolution rules count as MAJOR, so nothing passes silently.
//!
//! Pointers name the place in the *documents* the schema describes: `/spec/replicas`, with
//! `*` standing for every array item or every additional property (`/spec/containers/*/image`).
//! A property that is added or removed is one change; what it contains is not listed again.

use rustc_hash::FxHashMap;
use std::sync::Arc;

use serde_json::Value;

use super::{Additional, Bounds, CelRule, Rare, Schema, Type};
use crate::pointer::escape;

/// What changed at one place.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ChangeKind {
    /// A new optional property.
    PropertyAdded,
    /// A new property that is required at once.
    RequiredPropertyAdded,
    /// A property removed.
    PropertyRemoved,
    /// An existing property became required.
    RequiredAdded,
    /// A property is no longer required.
    RequiredRemoved,
    /// The declared types accept less than before.
    TypeNarrowed,
    /// The declared types accept more than before.
    TypeWidened,
    /// The declared types changed both ways (`string` → `integer`).
    TypeChanged,
    /// A value added to an enum.
    EnumValueAdded,
    /// A value removed from an enum.
    EnumValueRemoved,
    /// An enum put on a free field.
    EnumIntroduced,
    /// An enum dropped: the field is free now.
    EnumDropped,
    /// A pattern put on a field.
    PatternAdded,
    /// A pattern changed.
    PatternChanged,
    /// A pattern dropped.
    PatternRemoved,
    /// A format put on a field.
    FormatAdded,
    /// A format changed.
    FormatChanged,
    /// A format dropped.
    FormatRemoved,
    /// A bound added or moved so fewer values pass (`maxLength` lowered, `minimum` added, an
    /// exclusive flag set, `multipleOf` added or changed).
    BoundTightened,
    /// A bound removed or moved so more values pass.
    BoundLoosened,
    /// `uniqueItems` set.
    UniqueItemsAdded,
    /// `uniqueItems` cleared.
    UniqueItemsRemoved,
    /// A default put on an existing field.
    DefaultAdded,
    /// A default removed.
    DefaultRemoved,
    /// A default changed.
    DefaultChanged,
    /// `nullable` set.
    NullableAdded,
    /// `nullable` cleared.
    NullableRemoved,
    /// `x-kubernetes-preserve-unknown-fields` set (or `additionalProperties` opened).
    OpenedToUnknownFields,
    /// `x-kubernetes-preserve-unknown-fields` cleared (or `additionalProperties` closed or
    /// given a schema where any value was accepted).
    ClosedToUnknownFields,
    /// `x-kubernetes-int-or-string` set.
    IntOrStringAdded,
    /// `x-kubernetes-int-or-string` cleared.
    IntOrStringRemoved,
    /// `x-kubernetes-list-type` / `x-kubernetes-map-type` moved to one that constrains more
    /// (atomic → set or map, set ↔ map), or the list's map keys changed.
    ListTypeTightened,
    /// `x-kubernetes-list-type` moved to one that constrains less (set or map → atomic), or
    /// a map-type change (merge behaviour only).
    ListTypeLoosened,
    /// A CEL rule (`x-kubernetes-validations`) added; a rule whose text changed is one
    /// removal and one addition.
    ValidationAdded,
    /// A CEL rule removed.
    ValidationRemoved,
    /// An immutability rule (`self == oldSelf`, or `self.a == oldSelf.a && …`) replaced by
    /// one that holds fewer paths immutable: every update the old rule allowed, the new one
    /// allows too.
    ImmutabilityLoosened,
    /// A CEL rule kept but its message, messageExpression, reason or fieldPath changed.
    ValidationMessageChanged,
    /// The description changed.
    DescriptionChanged,
    /// The title changed.
    TitleChanged,
    /// The example changed.
    ExampleChanged,
    /// An annotation-only keyword changed (`id`, `$schema`, `$comment`, `externalDocs`).
    AnnotationChanged,
    /// A difference no kind above describes.
    Unclassified,
}

impl ChangeKind {
    /// The spelling output uses (`property-removed`).
    pub const fn as_str(self) -> &'static str {
        use ChangeKind::*;
        match self {
            PropertyAdded => "property-added",
            RequiredPropertyAdded => "required-property-added",
            PropertyRemoved => "property-removed",
            RequiredAdded => "required-added",
            RequiredRemoved => "required-removed",
            TypeNarrowed => "type-narrowed",
            TypeWidened => "type-widened",
            TypeChanged => "type-changed",
            EnumValueAdded => "enum-value-added",
            EnumValueRemoved => "enum-value-removed",
            EnumIntroduced => "enum-introduced",
            EnumDropped => "enum-dropped",
            PatternAdded => "pattern-added",
            PatternChanged => "pattern-changed",
            PatternRemoved => "pattern-removed",
            FormatAdded => "format-added",
            FormatChanged => "format-changed",
            FormatRemoved => "format-removed",
            BoundTightened => "bound-tightened",
            BoundLoosened => "bound-loosened",
            UniqueItemsAdded => "unique-items-added",
            UniqueItemsRemoved => "unique-items-removed",
            DefaultAdded => "default-added",
            DefaultRemoved => "default-removed",
            DefaultChanged => "default-changed",
            NullableAdded => "nullable-added",
            NullableRemoved => "nullable-removed",
            OpenedToUnknownFields => "opened-to-unknown-fields",
            ClosedToUnknownFields => "closed-to-unknown-fields",
            IntOrStringAdded => "int-or-string-added",
            IntOrStringRemoved => "int-or-string-removed",
            ListTypeTightened => "list-type-tightened",
            ListTypeLoosened => "list-type-loosened",
            ValidationAdded => "validation-added",
            ValidationRemoved => "validation-removed",
            ImmutabilityLoosened => "immutability-loosened",
            ValidationMessageChanged => "validation-message-changed",
            DescriptionChanged => "description-changed",
            TitleChanged => "title-changed",
            ExampleChanged => "example-changed",
            AnnotationChanged => "annotation-changed",
            Unclassified => "unclassified",
        }
    }
}

/// One difference.
#[derive(Clone, Debug, PartialEq)]
pub struct Change {
    /// Where, in the documents the schema describes (`/spec/ports/*/port`).
    pub pointer: String,
    /// What kind of change.
    pub kind: ChangeKind,
    /// What changed, when it is not the node itself (`maxLength`, the property name, `x-foo`).
    pub what: Option<String>,
    /// The value before (a bound, an enum member, a default, a rule…); `None` when absent.
    pub before: Option<Value>,
    /// The value after.
    pub after: Option<Value>,
}

/// Keywords that only annotate a schema: a change to them is no contract change.
pub const ANNOTATIONS: &[&str] = &["id", "$schema", "$comment", "$id", "externalDocs", "deprecated"];

/// Every difference between `old` and `new`, rooted at `pointer` (`""` for a whole schema).
pub fn diff(old: &Schema, new: &Schema, pointer: &str) -> Vec<Change> {
    let mut out = Vec::new();
    node(old, new, pointer, &mut Shared::default(), &mut out);
    out
}

/// Every difference between `old` and `new` that is not annotation-only (`annotation_only`):
/// what `diff` finds less those. Nodes that differ only in their descriptions, titles or
/// examples are not walked, so comparing two schemas' shapes costs what their shapes differ
/// by, not what their prose does.
pub fn diff_shape(old: &Schema, new: &Schema, pointer: &str) -> Vec<Change> {
    let mut out = Vec::new();
    node(old, new, pointer, &mut Shared { shape_only: true, ..Shared::default() }, &mut out);
    out.retain(|c| !annotation_only(c.kind));
    out
}

/// How many changes a diff repeats from a shared definition it already compared at another
/// path. The first comparison of every pair is reported whole; copies past this are left out
/// (they repeat kinds already reported, so the classification is the same).
const MAX_REPEATED: usize = 1_000;

/// What one diff remembers about shared nodes (a JSON Schema definition referenced from many
/// places is one node): each pair of shared nodes is compared at most twice, so a schema with
/// 2^D paths through D levels of definitions is diffed in time linear in its size. Nodes of a
/// tree (every CRD schema) are not remembered; they are met once anyway. Keyed by the nodes'
/// addresses, which need no keyed hash.
#[derive(Default)]
struct Shared {
    /// Whether two shared nodes are equal.
    equal: FxHashMap<(usize, usize), bool>,
    /// The shared pairs met: `None` once, else their changes, pointers relative to where they
    /// stand. Changes are kept from the second meeting on: a node shared only because two
    /// versions or two documents hold it (most sharing in a CRD) is met once per diff, and
    /// copying its changes would be work no one reads.
    changes: FxHashMap<(usize, usize), Option<Vec<Change>>>,
    /// Changes repeated from `changes` so far.
    repeated: usize,
    /// Descriptions, titles and examples are neither compared nor reported (`diff_shape`).
    shape_only: bool,
}

fn shared_pair(a: &Arc<Schema>, b: &Arc<Schema>) -> Option<(usize, usize)> {
    (Arc::strong_count(a) > 1 || Arc::strong_count(b) > 1)
        .then_some((Arc::as_ptr(a) as usize, Arc::as_ptr(b) as usize))
}

/// Whether two child nodes are equal: by identity, else remembered when shared.
fn same(a: &Arc<Schema>, b: &Arc<Schema>, shared: &mut Shared) -> bool {
    if Arc::ptr_eq(a, b) {
        return true;
    }
    let Some(key) = shared_pair(a, b) else {
        return equal(a, b, shared);
    };
    if let Some(known) = shared.equal.get(&key) {
        return *known;
    }
    let answer = equal(a, b, shared);
    shared.equal.insert(key, answer);
    answer
}

fn same_list(a: &[Arc<Schema>], b: &[Arc<Schema>], shared: &mut Shared) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y, shared))
}

fn same_child(a: &Option<Arc<Schema>>, b: &Option<Arc<Schema>>, shared: &mut Shared) -> bool {
    match (a, b) {
        (Some(x), Some(y)) => same(x, y, shared),
        (None, None) => true,
        _ => false,
    }
}

/// `Schema`'s equality with children compared through `same`: what `==` says, without
/// walking a shared definition once per path that reaches it.
fn equal(a: &Schema, b: &Schema, shared: &mut Shared) -> bool {
    // Destructured so a field added to the model cannot be left out here.
    let Schema {
        types,
        properties,
        additional,
        items,
        required,
        enumeration,
        nullable,
        int_or_string,
        default,
        description,
        rare: _,
    } = a;
    let Rare {
        title,
        example,
        format,
        pattern,
        bounds,
        unique_items,
        embedded_resource,
        list_type,
        list_map_keys,
        map_type,
        validations,
        all_of,
        any_of,
        one_of,
        not,
        extensions,
    } = &**a;
    let own = *types == b.types
        && *required == b.required
        && *enumeration == b.enumeration
        && *nullable == b.nullable
        && *default == b.default
        && (shared.shape_only
            || (*description == b.description && *title == b.title && *example == b.example))
        && *format == b.format
        && *pattern == b.pattern
        && *bounds == b.bounds
        && *unique_items == b.unique_items
        && *int_or_string == b.int_or_string
        && *embedded_resource == b.embedded_resource
        && *list_type == b.list_type
        && *list_map_keys == b.list_map_keys
        && *map_type == b.map_type
        && *validations == b.validations
        && *extensions == b.extensions
        && properties.len() == b.properties.len()
        && all_of.len() == b.all_of.len()
        && any_of.len() == b.any_of.len()
        && one_of.len() == b.one_of.len();
    own && match (additional, &b.additional) {
        (Additional::Schema(x), Additional::Schema(y)) => same(x, y, shared),
        (x, y) => x == y,
    } && same_child(items, &b.items, shared)
        && same_child(not, &b.not, shared)
        && properties.iter().zip(&b.properties).all(|((k, x), (l, y))| k == l && same(x, y, shared))
        && same_list(all_of, &b.all_of, shared)
        && same_list(any_of, &b.any_of, shared)
        && same_list(one_of, &b.one_of, shared)
}

/// The changes between two child nodes standing at `at`, which `same` found to differ (the
/// caller asks first, so an equal child costs no pointer and is walked once); a shared pair
/// compared twice is not compared again, its changes are repeated at this path.
fn child(old: &Arc<Schema>, new: &Arc<Schema>, at: &mut String, shared: &mut Shared, out: &mut Vec<Change>) {
    let Some(key) = shared_pair(old, new) else {
        return changes(old, new, at, shared, out);
    };
    // What each meeting past the first adds is counted against the cap.
    let room = |shared: &Shared| MAX_REPEATED.saturating_sub(shared.repeated);
    let repeated = match shared.changes.get(&key) {
        None => {
            shared.changes.insert(key, None);
            return changes(old, new, at, shared, out);
        }
        // Met once before: compared again, and kept for every later meeting.
        Some(None) => {
            let mut fresh = Vec::new();
            changes(old, new, at, shared, &mut fresh);
            let relative = fresh
                .iter()
                .map(|c| Change { pointer: c.pointer[at.len()..].to_string(), ..c.clone() })
                .collect();
            shared.changes.insert(key, Some(relative));
            let n = fresh.len().min(room(shared));
            out.extend(fresh.into_iter().take(n));
            n
        }
        Some(Some(known)) => {
            let n = known.len().min(room(shared));
            out.extend(
                known[..n].iter().map(|c| Change { pointer: format!("{at}{}", c.pointer), ..c.clone() }),
            );
            n
        }
    };
    shared.repeated += repeated;
}

/// The changes between two children standing at `at` plus one `step`. The diff carries one
/// pointer, extended for the walk below and cut back after: a child that is walked costs no
/// pointer of its own, only one that changed does (in `push`).
fn descend(
    old: &Arc<Schema>,
    new: &Arc<Schema>,
    at: &mut String,
    step: &str,
    shared: &mut Shared,
    out: &mut Vec<Change>,
) {
    let len = at.len();
    at.push('/');
    at.push_str(step);
    child(old, new, at, shared, out);
    at.truncate(len);
}

fn push(
    out: &mut Vec<Change>,
    pointer: &str,
    kind: ChangeKind,
    what: Option<&str>,
    before: Option<Value>,
    after: Option<Value>,
) {
    out.push(Change { pointer: pointer.to_string(), kind, what: what.map(str::to_string), before, after });
}

fn types_value(s: &Schema) -> Value {
    Value::Array(s.types.iter().map(|t| Value::String(t.as_str().into())).collect())
}

/// Whether a schema declaring `types` accepts every value of type `t`.
fn admits(types: &[Type], t: Type) -> bool {
    types.is_empty() || types.contains(&t) || (t == Type::Integer && types.contains(&Type::Number))
}

/// A value's key for hashing: two values have the same key exactly when `same_value` says
/// they are the same (an integral `3.0` and `3` alike; object keys in order).
pub fn canonical(v: &Value) -> String {
    let mut out = String::new();
    write_canonical(v, &mut out);
    out
}

fn write_canonical(v: &Value, out: &mut String) {
    use std::fmt::Write;
    match v {
        Value::Number(n) => {
            match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => write!(out, "i{i}"),
                (None, Some(f)) if f.fract() == 0.0 && f.abs() < 9.2e18 => write!(out, "i{}", f as i64),
                (None, Some(f)) => write!(out, "f{f:e}"),
                (None, None) => write!(out, "n{n}"),
            }
            .ok();
        }
        Value::Array(items) => {
            out.push('[');
            for i in items {
                write_canonical(i, out);
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for k in keys {
                write!(out, "{k:?}:").ok();
                write_canonical(&map[k], out);
                out.push(',');
            }
            out.push('}');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// Whether two values are the same for a schema (numbers compared numerically).
pub fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| same_value(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same_value(v, w)))
        }
        _ => a == b,
    }
}

fn node(old: &Schema, new: &Schema, at: &str, shared: &mut Shared, out: &mut Vec<Change>) {
    // Most of a real pair is unchanged: an equal subtree has nothing to report. One schema
    // diffed against itself (versions sharing a loaded schema) is not even compared.
    if std::ptr::eq(old, new) || equal(old, new, shared) {
        return;
    }
    changes(old, new, &mut at.to_string(), shared, out);
}

/// The changes between two nodes known to differ. Each child pair is checked for equality
/// before it is descended into (and before its pointer is spelled), so an unchanged subtree
/// is walked once, not once more for every level above a change.
fn changes(old: &Schema, new: &Schema, at: &mut String, shared: &mut Shared, out: &mut Vec<Change>) {
    types(old, new, at, out);
    enumeration(old, new, at, out);
    optional_string(&old.pattern, &new.pattern, at, "pattern", out, PATTERN);
    optional_string(&old.format, &new.format, at, "format", out, FORMAT);
    bounds(&old.bounds, &new.bounds, at, out);
    if old.unique_items != new.unique_items {
        let kind =
            if new.unique_items { ChangeKind::UniqueItemsAdded } else { ChangeKind::UniqueItemsRemoved };
        push(
            out,
            at,
            kind,
            Some("uniqueItems"),
            Some(old.unique_items.into()),
            Some(new.unique_items.into()),
        );
    }
    match (&old.default, &new.default) {
        (None, Some(d)) => push(out, at, ChangeKind::DefaultAdded, Some("default"), None, Some(d.clone())),
        (Some(d), None) => push(out, at, ChangeKind::DefaultRemoved, Some("default"), Some(d.clone()), None),
        (Some(a), Some(b)) if !same_value(a, b) => {
            push(out, at, ChangeKind::DefaultChanged, Some("default"), Some(a.clone()), Some(b.clone()))
        }
        _ => {}
    }
    flag(
        old.nullable,
        new.nullable,
        at,
        "nullable",
        ChangeKind::NullableAdded,
        ChangeKind::NullableRemoved,
        out,
    );
    flag(
        old.int_or_string,
        new.int_or_string,
        at,
        "x-kubernetes-int-or-string",
        ChangeKind::IntOrStringAdded,
        ChangeKind::IntOrStringRemoved,
        out,
    );
    if old.embedded_resource != new.embedded_resource {
        let (b, a) = (old.embedded_resource.into(), new.embedded_resource.into());
        push(out, at, ChangeKind::Unclassified, Some("x-kubernetes-embedded-resource"), Some(b), Some(a));
    }
    list_types(old, new, at, out);
    validations(&old.validations, &new.validations, at, out);
    if !shared.shape_only {
        annotation(
            &old.description,
            &new.description,
            at,
            "description",
            ChangeKind::DescriptionChanged,
            out,
        );
        annotation(&old.title, &new.title, at, "title", ChangeKind::TitleChanged, out);
        if !option_same(&old.example, &new.example) {
            push(
                out,
                at,
                ChangeKind::ExampleChanged,
                Some("example"),
                old.example.clone(),
                new.example.clone(),
            );
        }
    }
    extensions(old, new, at, out);
    composition(old, new, at, shared, out);
    properties(old, new, at, shared, out);
    additional(old, new, at, shared, out);
    match (&old.items, &new.items) {
        (Some(a), Some(b)) if !same(a, b, shared) => descend(a, b, at, "*", shared, out),
        (None, Some(b)) if **b != Schema::default() && **b != Schema::any() => push(
            out,
            &format!("{at}/*"),
            ChangeKind::Unclassified,
            Some("items"),
            None,
            Some(Value::Bool(true)),
        ),
        (Some(a), None) if **a != Schema::default() && **a != Schema::any() => push(
            out,
            &format!("{at}/*"),
            ChangeKind::Unclassified,
            Some("items"),
            Some(Value::Bool(true)),
            None,
        ),
        _ => {}
    }
}

fn option_same(a: &Option<Value>, b: &Option<Value>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(x), Some(y)) => same_value(x, y),
        _ => false,
    }
}

fn types(old: &Schema, new: &Schema, at: &str, out: &mut Vec<Change>) {
    if old.types == new.types {
        return;
    }
    // int-or-string is reported on its own; its member types follow from it.
    if old.int_or_string != new.int_or_string {
        return;
    }
    let all = [Type::String, Type::Integer, Type::Number, Type::Boolean, Type::Array, Type::Object];
    let lost = all.iter().any(|t| admits(&old.types, *t) && !admits(&new.types, *t));
    let gained = all.iter().any(|t| !admits(&old.types, *t) && admits(&new.types, *t));
    let kind = match (lost, gained) {
        (true, true) => ChangeKind::TypeChanged,
        (true, false) => ChangeKind::TypeNarrowed,
        (false, true) => ChangeKind::TypeWidened,
        // The same set spelled another way (`[integer, number]` and `[number]`): no change
        // in what is accepted, but the readers' first-member normalisation may differ.
        (false, false) => ChangeKind::Unclassified,
    };
    push(out, at, kind, Some("type"), Some(types_value(old)), Some(types_value(new)));
}

fn enumeration(old: &Schema, new: &Schema, at: &str, out: &mut Vec<Change>) {
    match (&old.enumeration, &new.enumeration) {
        (None, Some(b)) => {
            push(out, at, ChangeKind::EnumIntroduced, Some("enum"), None, Some(Value::Array(b.clone())))
        }
        (Some(a), None) => {
            push(out, at, ChangeKind::EnumDropped, Some("enum"), Some(Value::Array(a.clone())), None)
        }
        (Some(a), Some(b)) if a == b => {}
        (Some(a), Some(b)) => {
            // Hashed, not every-against-every: an enum of tens of thousands of values is
            // compared in time linear in its size.
            let keys =
                |list: &[Value]| list.iter().map(canonical).collect::<std::collections::HashSet<String>>();
            let (ka, kb) = (keys(a), keys(b));
            for v in b.iter().filter(|v| !ka.contains(&canonical(v))) {
                push(out, at, ChangeKind::EnumValueAdded, Some("enum"), None, Some(v.clone()));
            }
            for v in a.iter().filter(|v| !kb.contains(&canonical(v))) {
                push(out, at, ChangeKind::EnumValueRemoved, Some("enum"), Some(v.clone()), None);
            }
        }
        (None, None) => {}
    }
}

const PATTERN: [ChangeKind; 3] =
    [ChangeKind::PatternAdded, ChangeKind::PatternChanged, ChangeKind::PatternRemoved];
const FORMAT: [ChangeKind; 3] =
    [ChangeKind::FormatAdded, ChangeKind::FormatChanged, ChangeKind::FormatRemoved];

fn optional_string(
    old: &Option<String>,
    new: &Option<String>,
    at: &str,
    what: &str,
    out: &mut Vec<Change>,
    [added, changed, removed]: [ChangeKind; 3],
) {
    let v = |s: &Option<String>| s.clone().map(Value::String);
    let kind = match (old, new) {
        (None, Some(_)) => added,
        (Some(_), None) => removed,
        (Some(a), Some(b)) if a != b => changed,
        _ => return,
    };
    push(out, at, kind, Some(what), v(old), v(new));
}

fn flag(
    old: bool,
    new: bool,
    at: &str,
    what: &str,
    set: ChangeKind,
    cleared: ChangeKind,
    out: &mut Vec<Change>,
) {
    if old != new {
        push(out, at, if new { set } else { cleared }, Some(what), Some(old.into()), Some(new.into()));
    }
}

fn annotation(
    old: &Option<String>,
    new: &Option<String>,
    at: &str,
    what: &str,
    kind: ChangeKind,
    out: &mut Vec<Change>,
) {
    if old != new {
        let v = |s: &Option<String>| s.clone().map(Value::String);
        push(out, at, kind, Some(what), v(old), v(new));
    }
}

/// Which way a bound tightens: a lower bound tightens when it rises, an upper one when it
/// falls.
#[derive(Clone, Copy)]
enum Side {
    Lower,
    Upper,
}

fn bounds(old: &Bounds, new: &Bounds, at: &str, out: &mut Vec<Change>) {
    if old == new {
        return;
    }
    let numbers: [(&str, Side, Option<f64>, Option<f64>); 2] = [
        ("minimum", Side::Lower, old.minimum, new.minimum),
        ("maximum", Side::Upper, old.maximum, new.maximum),
    ];
    for (what, side, a, b) in numbers {
        bound(what, side, a, b, at, out);
    }
    let counts: [(&str, Side, Option<u64>, Option<u64>); 6] = [
        ("minLength", Side::Lower, old.min_length, new.min_length),
        ("maxLength", Side::Upper, old.max_length, new.max_length),
        ("minItems", Side::Lower, old.min_items, new.min_items),
        ("maxItems", Side::Upper, old.max_items, new.max_items),
        ("minProperties", Side::Lower, old.min_properties, new.min_properties),
        ("maxProperties", Side::Upper, old.max_properties, new.max_properties),
    ];
    for (what, side, a, b) in counts {
        // A zero lower bound constrains nothing: compare it as absent.
        let norm = |n: Option<u64>| n.filter(|n| *n > 0 || matches!(side, Side::Upper)).map(|n| n as f64);
        bound(what, side, norm(a), norm(b), at, out);
    }
    for (what, a, b) in [
        ("exclusiveMinimum", old.exclusive_minimum, new.exclusive_minimum),
        ("exclusiveMaximum", old.exclusive_maximum, new.exclusive_maximum),
    ] {
        if a != b {
            let kind = if b { ChangeKind::BoundTightened } else { ChangeKind::BoundLoosened };
            push(out, at, kind, Some(what), Some(a.into()), Some(b.into()));
        }
    }
    match (old.multiple_of, new.multiple_of) {
        (a, b) if a == b => {}
        // A new step that divides the old one accepts every value the old one did.
        (Some(a), Some(b)) if b != 0.0 && ((a / b) - (a / b).round()).abs() < 1e-9 => {
            push(out, at, ChangeKind::BoundLoosened, Some("multipleOf"), number(Some(a)), number(Some(b)))
        }
        (Some(_), None) => {
            push(out, at, ChangeKind::BoundLoosened, Some("multipleOf"), number(old.multiple_of), None)
        }
        (a, b) => push(out, at, ChangeKind::BoundTightened, Some("multipleOf"), number(a), number(b)),
    }
}

fn number(n: Option<f64>) -> Option<Value> {
    let n = n?;
    if n.fract() == 0.0 && n.abs() < 9.0e15 {
        Some(Value::from(n as i64))
    } else {
        serde_json::Number::from_f64(n).map(Value::Number)
    }
}

fn bound(what: &str, side: Side, old: Option<f64>, new: Option<f64>, at: &str, out: &mut Vec<Change>) {
    let tightened = match (old, new, side) {
        (a, b, _) if a == b => return,
        (None, Some(_), _) => true,
        (Some(_), None, _) => false,
        (Some(a), Some(b), Side::Lower) => b > a,
        (Some(a), Some(b), Side::Upper) => b < a,
        (None, None, _) => return,
    };
    let kind = if tightened { ChangeKind::BoundTightened } else { ChangeKind::BoundLoosened };
    push(out, at, kind, Some(what), number(old), number(new));
}

fn list_types(old: &Schema, new: &Schema, at: &str, out: &mut Vec<Change>) {
    // Unset means atomic for lists.
    let rank = |t: &Option<String>| match t.as_deref() {
        None | Some("atomic") => 0,
        Some("set") => 1,
        Some("map") => 2,
        Some(_) => 3,
    };
    let v = |s: &Option<String>| s.clone().map(Value::String);
    if rank(&old.list_type) != rank(&new.list_type) {
        let kind = if rank(&new.list_type) == 0 {
            ChangeKind::ListTypeLoosened
        } else {
            ChangeKind::ListTypeTightened
        };
        push(out, at, kind, Some("x-kubernetes-list-type"), v(&old.list_type), v(&new.list_type));
    } else if old.list_type != new.list_type {
        // `atomic` spelled out versus left unset: the same list.
        push(
            out,
            at,
            ChangeKind::AnnotationChanged,
            Some("x-kubernetes-list-type"),
            v(&old.list_type),
            v(&new.list_type),
        );
    }
    if old.list_map_keys != new.list_map_keys {
        let keys = |k: &[String]| Value::Array(k.iter().cloned().map(Value::String).collect());
        push(
            out,
            at,
            ChangeKind::ListTypeTightened,
            Some("x-kubernetes-list-map-keys"),
            Some(keys(&old.list_map_keys)),
            Some(keys(&new.list_map_keys)),
        );
    }
    if old.map_type != new.map_type {
        push(
            out,
            at,
            ChangeKind::ListTypeLoosened,
            Some("x-kubernetes-map-type"),
            v(&old.map_type),
            v(&new.map_type),
        );
    }
}

fn rule_value(r: &CelRule) -> Value {
    let mut m = serde_json::Map::new();
    m.insert("rule".into(), Value::String(r.rule.clone()));
    for (k, v) in [("message", &r.message), ("messageExpression", &r.message_expression)] {
        if let Some(v) = v {
            m.insert(k.into(), Value::String(v.clone()));
        }
    }
    Value::Object(m)
}

/// CEL rules are matched by their rule text: a rule only in the new schema is added, only in
/// the old one removed; a kept rule whose message or messageExpression (or reason, fieldPath,
/// optionalOldSelf) changed is a message change. An immutability rule replaced by one that
/// holds a subset of its paths immutable is one loosening, not a removal and an addition.
fn validations(old: &[CelRule], new: &[CelRule], at: &str, out: &mut Vec<Change>) {
    let what = Some("x-kubernetes-validations");
    let mut consumed: Vec<&str> = Vec::new();
    let by_text: std::collections::HashMap<&str, &CelRule> =
        old.iter().map(|o| (o.rule.as_str(), o)).collect();
    let new_texts: std::collections::HashSet<&str> = new.iter().map(|r| r.rule.as_str()).collect();
    for r in new {
        match by_text.get(r.rule.as_str()).copied() {
            None => {
                let loosened = immutable_paths(&r.rule).and_then(|kept| {
                    old.iter().filter(|o| !new_texts.contains(o.rule.as_str())).find(|o| {
                        !consumed.contains(&o.rule.as_str())
                            && immutable_paths(&o.rule).is_some_and(|held| covered(&kept, &held))
                    })
                });
                match loosened {
                    Some(o) => {
                        consumed.push(&o.rule);
                        push(
                            out,
                            at,
                            ChangeKind::ImmutabilityLoosened,
                            what,
                            Some(rule_value(o)),
                            Some(rule_value(r)),
                        )
                    }
                    None => push(out, at, ChangeKind::ValidationAdded, what, None, Some(rule_value(r))),
                }
            }
            Some(o) if o != r => push(
                out,
                at,
                ChangeKind::ValidationMessageChanged,
                what,
                Some(rule_value(o)),
                Some(rule_value(r)),
            ),
            Some(_) => {}
        }
    }
    for o in
        old.iter().filter(|o| !new.iter().any(|r| r.rule == o.rule) && !consumed.contains(&o.rule.as_str()))
    {
        push(out, at, ChangeKind::ValidationRemoved, what, Some(rule_value(o)), None);
    }
}

/// The paths a transition rule holds immutable, when it is nothing but equalities
/// `self.P == oldSelf.P` joined by `&&` (`self == oldSelf` holds the empty path: everything).
pub fn immutable_paths(rule: &str) -> Option<Vec<String>> {
    let path = |side: &str, root: &str| -> Option<String> {
        let rest = side.trim().strip_prefix(root)?;
        let ok = rest
            .split('.')
            .skip(1)
            .all(|seg| !seg.is_empty() && seg.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
        (ok && (rest.is_empty() || rest.starts_with('.'))).then(|| rest.to_string())
    };
    let mut paths = Vec::new();
    for term in rule.split("&&") {
        let term = term.trim().trim_start_matches('(').trim_end_matches(')');
        let (left, right) = term.split_once("==")?;
        let (a, b) = (path(left, "self")?, path(right, "oldSelf")?);
        if a != b {
            return None;
        }
        paths.push(a);
    }
    Some(paths)
}

/// Whether every path of `kept` lies at or below a path of `held`.
fn covered(kept: &[String], held: &[String]) -> bool {
    kept.iter().all(|k| held.iter().any(|h| k == h || h.is_empty() || k.starts_with(&format!("{h}."))))
}

fn extensions(old: &Schema, new: &Schema, at: &str, out: &mut Vec<Change>) {
    let keys: std::collections::BTreeSet<&String> =
        old.extensions.keys().chain(new.extensions.keys()).collect();
    for key in keys {
        let (a, b) = (old.extensions.get(key), new.extensions.get(key));
        if option_same(&a.cloned(), &b.cloned()) {
            continue;
        }
        let kind = if ANNOTATIONS.contains(&key.as_str()) {
            ChangeKind::AnnotationChanged
        } else {
            ChangeKind::Unclassified
        };
        push(out, at, kind, Some(key), a.cloned(), b.cloned());
    }
}

/// `allOf`, `anyOf`, `oneOf` and `not`. Members are compared in place when the lists keep
/// their length; an `allOf` member added tightens and one removed loosens; anything else
/// that differs is unclassified.
fn composition(old: &Schema, new: &Schema, at: &mut String, shared: &mut Shared, out: &mut Vec<Change>) {
    for (what, a, b) in [
        ("allOf", &old.all_of, &new.all_of),
        ("anyOf", &old.any_of, &new.any_of),
        ("oneOf", &old.one_of, &new.one_of),
    ] {
        if same_list(a, b, shared) {
            continue;
        }
        if a.len() == b.len() {
            for (x, y) in a.iter().zip(b) {
                if same(x, y, shared) {
                    continue;
                }
                let mut inner = Vec::new();
                child(x, y, at, shared, &mut inner);
                // Inside anyOf/oneOf a narrowing of one branch can widen the whole: only
                // allOf members keep their meaning, the others are reported unclassified
                // unless the member change is annotation-only.
                for mut c in inner {
                    if what != "allOf" && !annotation_only(c.kind) {
                        c.what = Some(format!("{what}: {}", c.what.unwrap_or_default()));
                        c.kind = ChangeKind::Unclassified;
                    }
                    out.push(c);
                }
            }
            continue;
        }
        // Members are matched pairwise; past a few thousand pairs the change is unclassified
        // rather than searched for.
        let mut within = |short: &[Arc<Schema>], long: &[Arc<Schema>]| {
            short.len() * long.len() <= 4096 && short.iter().all(|m| long.iter().any(|n| same(m, n, shared)))
        };
        let kind = match what {
            "allOf" if b.len() > a.len() && within(a, b) => ChangeKind::BoundTightened,
            "allOf" if b.len() < a.len() && within(b, a) => ChangeKind::BoundLoosened,
            _ => ChangeKind::Unclassified,
        };
        push(out, at, kind, Some(what), Some(a.len().into()), Some(b.len().into()));
    }
    match (&old.not, &new.not) {
        (a, b) if same_child(a, b, shared) => {}
        (None, Some(_)) => {
            push(out, at, ChangeKind::BoundTightened, Some("not"), None, Some(Value::Bool(true)))
        }
        (Some(_), None) => {
            push(out, at, ChangeKind::BoundLoosened, Some("not"), Some(Value::Bool(true)), None)
        }
        _ => push(out, at, ChangeKind::Unclassified, Some("not"), None, None),
    }
}

/// Whether a kind says nothing about which values are accepted.
pub fn annotation_only(kind: ChangeKind) -> bool {
    matches!(
        kind,
        ChangeKind::DescriptionChanged
            | ChangeKind::TitleChanged
            | ChangeKind::ExampleChanged
            | ChangeKind::AnnotationChanged
            | ChangeKind::ValidationMessageChanged
    )
}

fn properties(old: &Schema, new: &Schema, at: &mut String, shared: &mut Shared, out: &mut Vec<Change>) {
    for (key, o) in &old.properties {
        match new.properties.get(key) {
            Some(n) => {
                if !same(o, n, shared) {
                    descend(o, n, at, &escape(key), shared, out)
                }
            }
            None => {
                // A property dropped where unknown fields are now kept is still gone from the
                // contract: its type and constraints no longer apply, and readers lose it.
                let here = format!("{at}/{}", escape(key));
                push(out, &here, ChangeKind::PropertyRemoved, Some(key), Some(Value::Bool(true)), None)
            }
        }
    }
    let (old_required, new_required): (
        std::collections::HashSet<&String>,
        std::collections::HashSet<&String>,
    ) = (old.required.iter().collect(), new.required.iter().collect());
    for key in new.properties.keys().filter(|k| !old.properties.contains_key(*k)) {
        let here = format!("{at}/{}", escape(key));
        let required = new_required.contains(key);
        let kind = if required { ChangeKind::RequiredPropertyAdded } else { ChangeKind::PropertyAdded };
        push(out, &here, kind, Some(key), None, Some(Value::Bool(true)));
    }
    for key in &new.required {
        let here = format!("{at}/{}", escape(key));
        if !old_required.contains(key) && old.properties.contains_key(key) {
            push(out, &here, ChangeKind::RequiredAdded, Some(key), Some(false.into()), Some(true.into()));
        } else if !old_required.contains(key) && !new.properties.contains_key(key) {
            // Required without a declared property (allowed in OpenAPI): a tightening all
            // the same.
            push(out, &here, ChangeKind::RequiredAdded, Some(key), Some(false.into()), Some(true.into()));
        }
    }
    for key in old.required.iter().filter(|k| !new_required.contains(k)) {
        if new.properties.contains_key(key) || !old.properties.contains_key(key) {
            let here = format!("{at}/{}", escape(key));
            push(out, &here, ChangeKind::RequiredRemoved, Some(key), Some(true.into()), Some(false.into()));
        }
    }
}

fn additional(old: &Schema, new: &Schema, at: &mut String, shared: &mut Shared, out: &mut Vec<Change>) {
    let what = Some("additionalProperties");
    let label = |a: &Additional| match a {
        Additional::Closed => Value::Bool(false),
        Additional::Open => Value::Bool(true),
        Additional::Schema(_) => Value::String("schema".into()),
        Additional::Unstated => Value::Null,
    };
    match (&old.additional, &new.additional) {
        (Additional::Schema(a), Additional::Schema(b)) => {
            if !same(a, b, shared) {
                descend(a, b, at, "*", shared, out)
            }
        }
        (a, b) if a == b => {}
        // Nothing was stated, so nothing was kept: declaring properties or a map is additive.
        (Additional::Unstated, Additional::Closed | Additional::Schema(_)) => {}
        (Additional::Closed, Additional::Unstated) if new.properties.is_empty() => {}
        (Additional::Closed | Additional::Unstated, Additional::Open)
        | (Additional::Closed, Additional::Schema(_))
        | (Additional::Schema(_), Additional::Open) => push(
            out,
            at,
            ChangeKind::OpenedToUnknownFields,
            what,
            Some(label(&old.additional)),
            Some(label(&new.additional)),
        ),
        _ => push(
            out,
            at,
            ChangeKind::ClosedToUnknownFields,
            what,
            Some(label(&old.additional)),
            Some(label(&new.additional)),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pointer::Location;
    use crate::schema::openapi::{load, Dialect};
    use serde_json::json;

    fn schema(v: Value) -> Schema {
        load(&v, &Location::default(), Dialect::OpenApi).unwrap()
    }

    fn kinds(old: Value, new: Value) -> Vec<(String, ChangeKind)> {
        diff(&schema(old), &schema(new), "").into_iter().map(|c| (c.pointer, c.kind)).collect()
    }

    /// A definition shared by four properties (one node, four paths), changed: its change is
    /// reported at every path — met first, met again (compared once more and kept), and
    /// repeated from what was kept — and a repeat past the cap is left out.
    #[test]
    fn a_shared_definition_is_reported_at_every_path_it_is_reached_by() {
        let shared = |t: Type| Arc::new(Schema::object([("leaf", Schema::of(t))]));
        let tree = |def: Arc<Schema>| Schema {
            types: smallvec::smallvec![Type::Object],
            properties: ["a", "b", "c", "d"].iter().map(|k| (k.to_string(), def.clone())).collect(),
            ..Schema::default()
        };
        let (old, new) = (tree(shared(Type::String)), tree(shared(Type::Integer)));
        let got: Vec<(String, ChangeKind)> =
            diff(&old, &new, "/x").into_iter().map(|c| (c.pointer, c.kind)).collect();
        let want: Vec<(String, ChangeKind)> =
            ["a", "b", "c", "d"].iter().map(|k| (format!("/x/{k}/leaf"), ChangeKind::TypeChanged)).collect();
        assert_eq!(got, want);

        let mut shared_state = Shared { repeated: MAX_REPEATED - 1, ..Shared::default() };
        let mut out = Vec::new();
        node(&old, &new, "", &mut shared_state, &mut out);
        let at: Vec<&str> = out.iter().map(|c| c.pointer.as_str()).collect();
        assert_eq!(at, ["/a/leaf", "/b/leaf"], "the first meeting whole, then one repeat to the cap");
    }

    #[test]
    fn identical_schemas_have_no_changes() {
        let s = json!({"type": "object", "properties": {"a": {"type": "string", "maxLength": 3}}});
        assert_eq!(kinds(s.clone(), s), []);
    }

    #[test]
    fn properties_and_required() {
        let old = json!({"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}});
        let new = json!({"type": "object", "required": ["b", "c"], "properties": {"b": {"type": "integer"}, "c": {"type": "string"}, "d": {"type": "string"}}});
        let got = kinds(old, new);
        assert!(got.contains(&("/a".into(), ChangeKind::PropertyRemoved)), "{got:?}");
        assert!(got.contains(&("/c".into(), ChangeKind::RequiredPropertyAdded)), "{got:?}");
        assert!(got.contains(&("/d".into(), ChangeKind::PropertyAdded)), "{got:?}");
        assert!(got.contains(&("/b".into(), ChangeKind::RequiredAdded)), "{got:?}");
    }

    #[test]
    fn types_narrow_widen_and_change() {
        let t = |a: &str, b: &str| kinds(json!({"type": a}), json!({"type": b}));
        assert_eq!(t("integer", "number"), [("".into(), ChangeKind::TypeWidened)]);
        assert_eq!(t("number", "integer"), [("".into(), ChangeKind::TypeNarrowed)]);
        assert_eq!(t("string", "integer"), [("".into(), ChangeKind::TypeChanged)]);
        let got = kinds(json!({"type": "string"}), json!({"x-kubernetes-int-or-string": true}));
        assert_eq!(got, [("".into(), ChangeKind::IntOrStringAdded)]);
    }

    #[test]
    fn enums_bounds_patterns_defaults() {
        let got = kinds(
            json!({"type": "string", "enum": ["a", "b"], "maxLength": 10, "pattern": "^a", "default": "a"}),
            json!({"type": "string", "enum": ["a", "c"], "maxLength": 5, "minLength": 0, "default": "c"}),
        );
        let k: Vec<ChangeKind> = got.iter().map(|(_, k)| *k).collect();
        assert_eq!(
            k,
            [
                ChangeKind::EnumValueAdded,
                ChangeKind::EnumValueRemoved,
                ChangeKind::PatternRemoved,
                // maxLength lowered; minLength 0 constrains nothing, so adding it is no change.
                ChangeKind::BoundTightened,
                ChangeKind::DefaultChanged
            ]
        );
        // Numbers compare numerically.
        assert_eq!(kinds(json!({"default": 1}), json!({"default": 1.0})), []);
        assert_eq!(
            kinds(json!({"maximum": 5}), json!({"maximum": 9})),
            [("".into(), ChangeKind::BoundLoosened)]
        );
    }

    #[test]
    fn nested_items_additional_and_openness() {
        let old = json!({"type": "object", "properties": {"list": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string"}}}}, "m": {"type": "object", "additionalProperties": {"type": "string"}}}});
        let new = json!({"type": "object", "properties": {"list": {"type": "array", "items": {"type": "object", "properties": {}, "x-kubernetes-preserve-unknown-fields": true}}, "m": {"type": "object", "additionalProperties": {"type": "string", "maxLength": 3}}}});
        let got = kinds(old, new);
        assert!(got.contains(&("/list/*/x".into(), ChangeKind::PropertyRemoved)), "{got:?}");
        assert!(got.contains(&("/list/*".into(), ChangeKind::OpenedToUnknownFields)), "{got:?}");
        assert!(got.contains(&("/m/*".into(), ChangeKind::BoundTightened)), "{got:?}");
    }

    #[test]
    fn cel_rules_are_matched_by_text() {
        let r = |rule: &str, msg: &str| json!({"rule": rule, "message": msg});
        let got = kinds(
            json!({"type": "object", "x-kubernetes-validations": [r("self.a > 0", "m"), r("has(self.b)", "m")]}),
            json!({"type": "object", "x-kubernetes-validations": [r("self.a > 0", "other"), r("has(self.c)", "m")]}),
        );
        let k: Vec<ChangeKind> = got.iter().map(|(_, k)| *k).collect();
        assert_eq!(
            k,
            [
                ChangeKind::ValidationMessageChanged,
                ChangeKind::ValidationAdded,
                ChangeKind::ValidationRemoved
            ]
        );
    }

    #[test]
    fn canonical_keys_agree_with_same_value() {
        let values = [
            json!(3),
            json!(3.0),
            json!(3.5),
            json!("3"),
            json!([1, 2.0]),
            json!([1, 2]),
            json!({"b": 1, "a": 2}),
            json!({"a": 2.0, "b": 1}),
            json!(null),
            json!(true),
        ];
        for a in &values {
            for b in &values {
                assert_eq!(canonical(a) == canonical(b), same_value(a, b), "{a} {b}");
            }
        }
    }

    #[test]
    fn immutability_narrowed_to_fewer_paths_is_a_loosening_and_widened_is_not() {
        let r = |rule: &str, msg: &str| json!({"rule": rule, "message": msg});
        assert_eq!(immutable_paths("self == oldSelf"), Some(vec![String::new()]));
        assert_eq!(
            immutable_paths("self.kind == oldSelf.kind && self.name == oldSelf.name"),
            Some(vec![".kind".to_string(), ".name".to_string()])
        );
        assert_eq!(immutable_paths("self.kind == oldSelf.name"), None);
        assert_eq!(immutable_paths("self.x > 3"), None);
        assert_eq!(immutable_paths("self.a == oldSelf.a || true"), None);
        let seed = kinds(
            json!({"type": "object", "x-kubernetes-validations": [r("self == oldSelf", "immutable")]}),
            json!({"type": "object", "x-kubernetes-validations": [r("self.kind == oldSelf.kind && self.name == oldSelf.name", "kind and name immutable")]}),
        );
        assert_eq!(seed.iter().map(|(_, k)| *k).collect::<Vec<_>>(), [ChangeKind::ImmutabilityLoosened]);
        // The other way round holds more immutable: a new rule.
        let widened = kinds(
            json!({"type": "object", "x-kubernetes-validations": [r("self.name == oldSelf.name", "m")]}),
            json!({"type": "object", "x-kubernetes-validations": [r("self == oldSelf", "m")]}),
        );
        assert_eq!(
            widened.iter().map(|(_, k)| *k).collect::<Vec<_>>(),
            [ChangeKind::ValidationAdded, ChangeKind::ValidationRemoved]
        );
    }
}
