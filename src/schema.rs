//! The schema model covenant reads: one shape for the launcher's property schemas, and (as
//! their loaders are built) OpenAPI v3 structural schemas and JSON Schema. The strict
//! validator and, later, the diff engine work on it. Nothing here knows rules or policy:
//! `validate` states what is wrong with a value, the families decide which rule that is.

pub mod pointer;
pub mod property;
pub mod validate;

use std::collections::BTreeMap;

use serde_json::Value;

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
    Schema(Box<Schema>),
}

/// One schema node.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Schema {
    /// Declared types: none means untyped (anything), one a type, several a union (a value
    /// is accepted when any member accepts it, and normalised by the first that does).
    pub types: Vec<Type>,
    /// Declared properties of an object.
    pub properties: BTreeMap<String, Schema>,
    /// What an object accepts beyond `properties`.
    pub additional: Additional,
    /// The schema of every item of an array; none: items are unchecked.
    pub items: Option<Box<Schema>>,
    /// Keys an object must carry.
    pub required: Vec<String>,
    /// The values allowed, compared after type normalisation.
    pub enumeration: Option<Vec<Value>>,
    /// Whether `null` is a value (OpenAPI `nullable`); elsewhere `null` means absent.
    pub nullable: bool,
    /// The stated default.
    pub default: Option<Value>,
    /// Human description.
    pub description: Option<String>,
}

impl Schema {
    /// An untyped schema: accepts anything.
    pub fn any() -> Schema {
        Schema { additional: Additional::Open, ..Schema::default() }
    }

    /// A schema of one type.
    pub fn of(t: Type) -> Schema {
        Schema { types: vec![t], ..Schema::default() }
    }

    /// A closed object with these properties.
    pub fn object(properties: impl IntoIterator<Item = (&'static str, Schema)>) -> Schema {
        Schema {
            types: vec![Type::Object],
            properties: properties.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
            ..Schema::default()
        }
    }

    /// An array of `items`.
    pub fn array(items: Schema) -> Schema {
        Schema { types: vec![Type::Array], items: Some(Box::new(items)), ..Schema::default() }
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
