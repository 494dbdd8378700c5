//! The schema model covenant reads: one shape for the launcher's property schemas, and (as
//! their loaders are built) OpenAPI v3 structural schemas and JSON Schema. The strict
//! validator and, later, the diff engine work on it. Nothing here knows rules or policy:
//! `validate` states what is wrong with a value, the families decide which rule that is.

pub mod defaults;
pub mod diff;
pub mod evaluate;
pub mod openapi;
pub mod property;
pub mod shorthand;
pub mod validate;

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::pointer::Location;

/// One problem in a schema being loaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadProblem {
    /// Where in the document that holds the schema.
    pub at: Location,
    /// What was wrong.
    pub message: String,
}

impl std::fmt::Display for LoadProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", if self.at.path.is_empty() { "(root)" } else { &self.at.path }, self.message)
    }
}

/// A JSON type a schema can declare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Type {
    /// A string.
    String,
    /// An integral number within the 64-bit signed range.
    Integer,
    /// Any number.
    Number,
    /// true or false.
    Boolean,
    /// A list.
    Array,
    /// A mapping.
    Object,
}

impl Type {
    /// The spelling schemas use.
    pub const fn as_str(self) -> &'static str {
        match self {
            Type::String => "string",
            Type::Integer => "integer",
            Type::Number => "number",
            Type::Boolean => "boolean",
            Type::Array => "array",
            Type::Object => "object",
        }
    }

    /// Parse a schema's spelling.
    pub fn parse(s: &str) -> Option<Type> {
        [Type::String, Type::Integer, Type::Number, Type::Boolean, Type::Array, Type::Object]
            .into_iter()
            .find(|t| t.as_str() == s)
    }
}

/// A schema's declared types, in the order stated. Held inline: a node declares one type, two
/// at most in practice (`x-kubernetes-int-or-string`), so no node allocates for them.
pub type Types = smallvec::SmallVec<[Type; 2]>;

/// What an object accepts beyond its declared properties.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Additional {
    /// Nothing: an undeclared key is refused.
    #[default]
    Closed,
    /// Anything (`x-kubernetes-preserve-unknown-fields`, `additionalProperties: true`, an
    /// open launcher object): strictness stops here.
    Open,
    /// Any key, each value checked against this schema (a map).
    Schema(Arc<Schema>),
    /// Nothing stated: an OpenAPI object with neither `properties` nor `additionalProperties`
    /// nor `x-kubernetes-preserve-unknown-fields`. The validator accepts any key here
    /// (strictness stops where nothing is declared); the API server prunes such an object's
    /// contents, so declaring properties on it later is an addition, not a narrowing.
    Unstated,
}

/// One schema node. Children are shared (`Arc`): a JSON Schema definition referenced from
/// many places is one node, so a schema's size in memory follows its text, not the number of
/// paths through its `$ref`s. Walks over a schema that can meet shared nodes memoise per node.
///
/// What most nodes state is held here; the keywords a node seldom states are in `Rare`,
/// boxed, and read and written through this node as if they were its own fields (`Deref`):
/// a node that states none of them holds no box, so a schema's nodes stay small, and a walk,
/// a comparison or a drop of one touches a few cache lines, not ten. A rare keyword written
/// makes the box.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Schema {
    /// Declared types: none means untyped (anything), one a type, several a union (a value
    /// is accepted when any member accepts it, and normalised by the first that does).
    pub types: Types,
    /// Declared properties of an object.
    pub properties: BTreeMap<String, Arc<Schema>>,
    /// What an object accepts beyond `properties`.
    pub additional: Additional,
    /// The schema of every item of an array; none: items are unchecked.
    pub items: Option<Arc<Schema>>,
    /// Keys an object must carry.
    pub required: Vec<String>,
    /// The values allowed, compared after type normalisation.
    pub enumeration: Option<Vec<Value>>,
    /// Whether `null` is a value (OpenAPI `nullable`); elsewhere `null` means absent.
    pub nullable: bool,
    /// `x-kubernetes-int-or-string` (the model also lists `integer` and `string` in `types`).
    pub int_or_string: bool,
    /// The stated default.
    pub default: Option<Value>,
    /// Human description.
    pub description: Option<String>,
    /// The keywords a node seldom states; no box when it states none of them.
    rare: RareBox,
}

/// The box of a node's seldom-stated keywords: none until one is written. Compared by what it
/// holds, so a box whose keywords were written back to their defaults equals none.
#[derive(Clone, Debug, Default)]
struct RareBox(Option<Box<Rare>>);

impl PartialEq for RareBox {
    fn eq(&self, other: &RareBox) -> bool {
        self.get() == other.get()
    }
}

impl RareBox {
    fn get(&self) -> &Rare {
        static NONE: Rare = Rare::NONE;
        self.0.as_deref().unwrap_or(&NONE)
    }

    fn get_mut(&mut self) -> &mut Rare {
        self.0.get_or_insert_with(Box::default)
    }
}

/// The keywords a schema node seldom states, reached through the node (`schema.bounds`).
#[derive(Clone, Debug, PartialEq)]
pub struct Rare {
    /// Title.
    pub title: Option<String>,
    /// An example value.
    pub example: Option<Value>,
    /// `format` (`date-time`, `int32`, …), kept for the diff; not checked on values.
    pub format: Option<String>,
    /// `pattern`, kept for the diff; not checked on values.
    pub pattern: Option<String>,
    /// Numeric, length, item-count and property-count bounds.
    pub bounds: Bounds,
    /// `uniqueItems`.
    pub unique_items: bool,
    /// `x-kubernetes-embedded-resource`.
    pub embedded_resource: bool,
    /// `x-kubernetes-list-type` (`atomic`, `set`, `map`).
    pub list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type` (`atomic`, `granular`).
    pub map_type: Option<String>,
    /// `x-kubernetes-validations`: CEL rules, kept for the diff; not evaluated.
    pub validations: Vec<CelRule>,
    /// `allOf`: every member applies.
    pub all_of: Vec<Arc<Schema>>,
    /// `anyOf`: at least one member accepts.
    pub any_of: Vec<Arc<Schema>>,
    /// `oneOf`: exactly one member accepts.
    pub one_of: Vec<Arc<Schema>>,
    /// `not`, kept for the diff.
    pub not: Option<Arc<Schema>>,
    /// Vendor extensions (`x-…` keys the model has no field for), kept so nothing read is
    /// dropped and the diff can compare them.
    pub extensions: BTreeMap<String, Value>,
}

impl Rare {
    /// None of the keywords stated: what a node without the box reads through `Deref`.
    pub const NONE: Rare = Rare {
        title: None,
        example: None,
        format: None,
        pattern: None,
        bounds: Bounds::NONE,
        unique_items: false,
        embedded_resource: false,
        list_type: None,
        list_map_keys: Vec::new(),
        map_type: None,
        validations: Vec::new(),
        all_of: Vec::new(),
        any_of: Vec::new(),
        one_of: Vec::new(),
        not: None,
        extensions: BTreeMap::new(),
    };
}

impl Default for Rare {
    fn default() -> Rare {
        Rare::NONE
    }
}

impl std::ops::Deref for Schema {
    type Target = Rare;

    fn deref(&self) -> &Rare {
        self.rare.get()
    }
}

impl std::ops::DerefMut for Schema {
    fn deref_mut(&mut self) -> &mut Rare {
        self.rare.get_mut()
    }
}

/// The bounds a schema states. Numbers are kept as `f64`; schemas state them as literals.
#[derive(Clone, Debug, PartialEq)]
pub struct Bounds {
    /// `minimum`.
    pub minimum: Option<f64>,
    /// `exclusiveMinimum` (OpenAPI v3.0 boolean form; the JSON Schema number form sets
    /// `minimum` and this flag).
    pub exclusive_minimum: bool,
    /// `maximum`.
    pub maximum: Option<f64>,
    /// `exclusiveMaximum`.
    pub exclusive_maximum: bool,
    /// `multipleOf`.
    pub multiple_of: Option<f64>,
    /// `minLength`.
    pub min_length: Option<u64>,
    /// `maxLength`.
    pub max_length: Option<u64>,
    /// `minItems`.
    pub min_items: Option<u64>,
    /// `maxItems`.
    pub max_items: Option<u64>,
    /// `minProperties`.
    pub min_properties: Option<u64>,
    /// `maxProperties`.
    pub max_properties: Option<u64>,
}

impl Bounds {
    /// No bound stated.
    pub const NONE: Bounds = Bounds {
        minimum: None,
        exclusive_minimum: false,
        maximum: None,
        exclusive_maximum: false,
        multiple_of: None,
        min_length: None,
        max_length: None,
        min_items: None,
        max_items: None,
        min_properties: None,
        max_properties: None,
    };

    /// Whether no bound is stated.
    pub fn is_empty(&self) -> bool {
        // Field by field: the derived comparison with the default compares floats and is
        // paid on every node a value walk visits.
        let Bounds {
            minimum,
            exclusive_minimum,
            maximum,
            exclusive_maximum,
            multiple_of,
            min_length,
            max_length,
            min_items,
            max_items,
            min_properties,
            max_properties,
        } = self;
        minimum.is_none()
            && !exclusive_minimum
            && maximum.is_none()
            && !exclusive_maximum
            && multiple_of.is_none()
            && min_length.is_none()
            && max_length.is_none()
            && min_items.is_none()
            && max_items.is_none()
            && min_properties.is_none()
            && max_properties.is_none()
    }
}

impl Default for Bounds {
    fn default() -> Bounds {
        Bounds::NONE
    }
}

/// One `x-kubernetes-validations` rule.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CelRule {
    /// The CEL expression.
    pub rule: String,
    /// The fixed message.
    pub message: Option<String>,
    /// The message expression.
    pub message_expression: Option<String>,
    /// The reason (`FieldValueInvalid`, …).
    pub reason: Option<String>,
    /// The field path the failure is reported at.
    pub field_path: Option<String>,
    /// `optionalOldSelf`.
    pub optional_old_self: bool,
}

impl Schema {
    /// An untyped schema: accepts anything.
    pub fn any() -> Schema {
        Schema { additional: Additional::Open, ..Schema::default() }
    }

    /// A schema no value meets (`not` anything): JSON Schema's `false`.
    pub fn nothing() -> Schema {
        let rare = Rare { not: Some(Arc::new(Schema::any())), ..Rare::default() };
        Schema { rare: RareBox(Some(Box::new(rare))), ..Schema::default() }
    }

    /// A schema of one type.
    pub fn of(t: Type) -> Schema {
        Schema { types: smallvec::smallvec![t], ..Schema::default() }
    }

    /// A closed object with these properties.
    pub fn object(properties: impl IntoIterator<Item = (&'static str, Schema)>) -> Schema {
        Schema {
            types: smallvec::smallvec![Type::Object],
            properties: properties.into_iter().map(|(k, v)| (k.to_string(), Arc::new(v))).collect(),
            ..Schema::default()
        }
    }

    /// An array of `items`.
    pub fn array(items: Schema) -> Schema {
        Schema { types: smallvec::smallvec![Type::Array], items: Some(Arc::new(items)), ..Schema::default() }
    }

    /// This schema with `keys` required.
    pub fn requiring(mut self, keys: &[&str]) -> Schema {
        self.required = keys.iter().map(|k| k.to_string()).collect();
        self
    }

    /// This schema open to undeclared keys.
    pub fn open(mut self) -> Schema {
        self.additional = Additional::Open;
        self
    }

    /// This schema limited to `values`.
    pub fn one_of(mut self, values: impl IntoIterator<Item = Value>) -> Schema {
        self.enumeration = Some(values.into_iter().collect());
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_holds_its_seldom_stated_keywords_apart_and_compares_by_them() {
        // The node stays a few cache lines; the rare keywords live in their box.
        assert!(std::mem::size_of::<Schema>() <= 192, "{}", std::mem::size_of::<Schema>());
        let plain = Schema::of(Type::String);
        assert!(plain.rare.0.is_none());
        // Reading a rare keyword makes no box; writing one does.
        assert!(plain.bounds.is_empty() && plain.validations.is_empty() && plain.not.is_none());
        let mut bounded = plain.clone();
        bounded.bounds.max_length = Some(3);
        assert!(bounded.rare.0.is_some());
        assert_ne!(bounded, plain);
        assert_eq!(bounded.bounds.max_length, Some(3));
        // Written back to its default, the node equals one that never had the box, both ways.
        bounded.bounds.max_length = None;
        assert!(bounded.rare.0.is_some());
        assert_eq!(bounded, plain);
        assert_eq!(plain, bounded);
        // Every field of the box takes part.
        let mut titled = plain.clone();
        titled.title = Some("t".into());
        assert_ne!(titled, plain);
        let mut shared = plain.clone();
        shared.extensions.insert("x-a".into(), Value::Bool(true));
        assert_ne!(shared, plain);
        assert_ne!(Schema::nothing(), Schema::default());
    }
}
