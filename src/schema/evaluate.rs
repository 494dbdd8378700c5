//! What a structural schema says beyond types and bounds, evaluated the way the apiserver
//! evaluates it: `pattern` as an RE2 regular expression (Rust's `regex` speaks the same
//! dialect: no look-around, no back-references), `format` for the formats the apiserver
//! validates, and `x-kubernetes-validations` CEL rules with `self` (and `oldSelf`, bound to
//! `self` as at the next update of an object that leaves the field alone).
//!
//! An `Evaluator` caches compiled programs and expressions for one walk over many objects
//! (the live-object proof of a tightening). What cannot be evaluated — a rule that uses a
//! function this evaluator does not provide, or that does not parse — is reported as such,
//! never as a pass.
//!
//! Every evaluation is bounded as the apiserver bounds it (a cost budget per rule and per
//! object, a memory guard on what it makes, limits on what it parses, and the request's stop
//! flag): see [`bounds`]. Past a bound the answer is "cannot prove", naming the bound.
//!
//! CEL libraries provided: the CEL standard library and macros (`has`, `all`, `exists`,
//! `exists_one`, `map`, `filter`, `size`, `matches`, `startsWith`, `endsWith`, `contains`,
//! conversions, timestamps and durations); the strings extension (`charAt`, `indexOf`,
//! `lastIndexOf`, `lowerAscii`, `upperAscii`, `replace`, `split`, `substring`, `trim`,
//! `join`); the lists extension (`slice`, `flatten`, `distinct`, `reverse`, `sort`,
//! `sortBy`); the math extension; and of the Kubernetes libraries: lists (`isSorted`, `sum`,
//! `min`, `max`), regex (`find`, `findAll`), quantity (`quantity`, `isQuantity`,
//! `compareTo`, `isLessThan`, `isGreaterThan`, `asInteger`, `asApproximateFloat`, `sign`)
//! and URL (`url`, `isURL`, `getScheme`, `getHost`, `getHostname`, `getPort`,
//! `getEscapedPath`, `getQuery`). Not provided: the `format` library
//! (`format.dns1123Label()` …), IP/CIDR, semver and authorizer functions; a rule using them
//! cannot be proved, and the answer names the function.

use std::collections::HashMap;
use std::sync::Arc;

use std::sync::atomic::AtomicBool;

use cel::common::ast::IdedExpr;
use cel::extractors::This;
use cel::{Context, Env, ExecutionError, Program, Value as Cel};
use regex::Regex;
use serde_json::Value;

use super::CelRule;

pub mod bounds;

/// What one rule says about one value.
#[derive(Clone, Debug, PartialEq)]
pub enum Verdict {
    /// The value satisfies it.
    Pass,
    /// The value violates it; the rule's message (or the rule itself).
    Fail(String),
    /// It cannot be evaluated here; why (names the function or the parse error).
    Unprovable(String),
}

/// How many compiled rules or patterns a long-lived evaluator keeps.
const CACHED: usize = 1024;

/// Compiled rules, patterns and formats for one walk over many values.
pub struct Evaluator {
    /// What could not be evaluated during the walks so far (each reason once).
    pub unprovable: Vec<String>,
    root: Context<'static, 'static>,
    env: Arc<Env>,
    /// Rules parsed and metered (see [`bounds`]), by their text.
    programs: HashMap<String, Result<Arc<IdedExpr>, String>>,
    /// `optional.of(__self)`: how an optional `oldSelf` is bound.
    wrap: Option<Program>,
    patterns: HashMap<String, Result<Regex, String>>,
    /// Raised at the request's deadline or at shutdown: an evaluation stops at its next look.
    stop: Option<Arc<AtomicBool>>,
}

impl std::fmt::Debug for Evaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Evaluator").field("programs", &self.programs.len()).finish()
    }
}

impl Default for Evaluator {
    fn default() -> Self {
        Evaluator::new()
    }
}

fn fail(function: &str, message: impl Into<String>) -> ExecutionError {
    ExecutionError::FunctionError { function: function.to_string(), message: message.into() }
}

impl Evaluator {
    /// An evaluator with the libraries listed in the module docs.
    pub fn new() -> Evaluator {
        let mut env = Env::stdlib();
        for extension in [cel::extensions::strings, cel::extensions::lists, cel::extensions::math] {
            if let Err(e) = env.add_extension(extension) {
                tracing::error!(error = ?e, "a CEL extension could not be registered");
            }
        }
        bounds::register(&mut env);
        let env = Arc::new(env);
        let mut root = Context::with_env(env.clone());
        kubernetes_library(&mut root);
        let wrap = env.compile("optional.of(__self)").ok();
        Evaluator {
            unprovable: Vec::new(),
            root,
            env,
            programs: HashMap::new(),
            wrap,
            patterns: HashMap::new(),
            stop: None,
        }
    }

    /// An evaluator that stops at its next look once `stop` is raised.
    pub fn with_stop(stop: Option<Arc<AtomicBool>>) -> Evaluator {
        Evaluator { stop, ..Evaluator::new() }
    }

    /// Look at `stop` from now on.
    pub fn set_stop(&mut self, stop: Option<Arc<AtomicBool>>) {
        self.stop = stop;
    }

    /// Forget what was compiled once it is more than a long-lived evaluator should hold.
    pub fn forget_when_large(&mut self) {
        if self.programs.len() > CACHED {
            self.programs.clear();
        }
        if self.patterns.len() > CACHED {
            self.patterns.clear();
        }
    }

    /// Start one object: the rules evaluated until the next call share the per-object budget.
    pub fn begin_object(&self) {
        bounds::begin_object(self.stop.clone());
    }

    /// Whether `text` matches the RE2 `pattern` (unanchored, as the apiserver matches);
    /// `Err` when the pattern does not compile.
    pub fn pattern(&mut self, pattern: &str, text: &str) -> Result<bool, String> {
        let compiled = self
            .patterns
            .entry(pattern.to_string())
            .or_insert_with(|| Regex::new(pattern).map_err(|e| e.to_string()));
        compiled.as_ref().map(|r| r.is_match(text)).map_err(Clone::clone)
    }

    /// Evaluate a rule with `self` bound to `this`.
    pub fn rule(&mut self, rule: &CelRule, this: &Value) -> Verdict {
        let program = match self.programs.entry(rule.rule.clone()) {
            std::collections::hash_map::Entry::Occupied(o) => o.get().clone(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let compiled = compile(&self.env, &rule.rule).map(Arc::new);
                v.insert(compiled).clone()
            }
        };
        let program = match program {
            Ok(p) => p,
            Err(e) => {
                return Verdict::Unprovable(format!("CEL rule `{}` does not parse here: {e}", rule.rule))
            }
        };
        let Ok(bound) = cel::to_value(this) else {
            return Verdict::Unprovable(format!("the value cannot be bound as `self` of `{}`", rule.rule));
        };
        let (root, wrap) = (&self.root, self.wrap.as_ref());
        bounds::begin_call();
        let outcome = bounds::on_deep_stack(|| {
            guarded(|| {
                let mut scope = root.new_inner_scope();
                scope.add_variable_from_value("self", bound.clone());
                if rule.optional_old_self {
                    // oldSelf is optional: present, and equal to self.
                    let mut inner = root.new_inner_scope();
                    inner.add_variable_from_value("__self", bound.clone());
                    match wrap.map(|p| p.execute(&inner)) {
                        Some(Ok(v)) => scope.add_variable_from_value("oldSelf", v),
                        _ => {
                            return Err(ExecutionError::FunctionError {
                                function: "optional.of".into(),
                                message: "optional values are not supported".into(),
                            })
                        }
                    }
                } else {
                    scope.add_variable_from_value("oldSelf", bound.clone());
                }
                Cel::resolve(&program, &scope)
            })
        });
        if let Some(why) = bounds::exceeded() {
            return Verdict::Unprovable(format!("evaluating `{}` was stopped: {why}", rule.rule));
        }
        match outcome {
            None => {
                Verdict::Unprovable(format!("evaluating `{}` failed inside the CEL evaluator", rule.rule))
            }
            Some(Ok(Cel::Bool(true))) => Verdict::Pass,
            Some(Ok(Cel::Bool(false))) => Verdict::Fail(message(rule)),
            Some(Ok(other)) => {
                Verdict::Unprovable(format!("`{}` evaluated to {other:?}, not a boolean", rule.rule))
            }
            // The apiserver refuses an object whose rule errors on it: a missing key is a
            // violation. Anything the evaluator lacks is not.
            Some(Err(ExecutionError::NoSuchKey(key))) => {
                Verdict::Fail(format!("{} (no such key: {key})", message(rule)))
            }
            Some(Err(ExecutionError::UndeclaredReference(name))) => Verdict::Unprovable(format!(
                "`{}` uses {name}, which covenant's CEL evaluator does not provide",
                rule.rule
            )),
            Some(Err(ExecutionError::NoSuchOverload(o))) => Verdict::Unprovable(format!(
                "`{}` calls a function covenant's CEL evaluator does not provide for these arguments ({o:?})",
                rule.rule
            )),
            Some(Err(e)) => Verdict::Unprovable(format!("`{}` cannot be evaluated here: {e}", rule.rule)),
        }
    }
}

/// What an expression evaluated to, when it is a boolean or a string (a validation or a
/// message expression).
#[derive(Clone, Debug, PartialEq)]
pub enum Evaluated {
    /// A boolean.
    Bool(bool),
    /// A string.
    Text(String),
}

impl Evaluator {
    /// Evaluate `expression` with each variable bound to its JSON value (a
    /// ValidatingAdmissionPolicy's `object`, `oldObject`, `request`), within the same bounds
    /// as a CRD's rules: its value, or why there is none (a missing key is an error here, as
    /// the API server's evaluation errs on it).
    pub fn expression(
        &mut self,
        expression: &str,
        variables: &[(&str, &Value)],
    ) -> Result<Evaluated, String> {
        let program = match self.programs.entry(expression.to_string()) {
            std::collections::hash_map::Entry::Occupied(o) => o.get().clone(),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(compile(&self.env, expression).map(Arc::new)).clone()
            }
        }?;
        let mut bound = Vec::new();
        for (name, value) in variables {
            bound.push((*name, cel::to_value(value).map_err(|e| format!("{name} cannot be bound: {e}"))?));
        }
        let root = &self.root;
        bounds::begin_call();
        let outcome = bounds::on_deep_stack(|| {
            guarded(|| {
                let mut scope = root.new_inner_scope();
                for (name, value) in &bound {
                    scope.add_variable_from_value(*name, value.clone());
                }
                Cel::resolve(&program, &scope)
            })
        });
        if let Some(why) = bounds::exceeded() {
            return Err(format!("evaluating `{expression}` was stopped: {why}"));
        }
        match outcome {
            Some(Ok(Cel::Bool(b))) => Ok(Evaluated::Bool(b)),
            Some(Ok(Cel::String(s))) => Ok(Evaluated::Text(s.to_string())),
            Some(Ok(other)) => Err(format!("`{expression}` evaluated to {other:?}")),
            Some(Err(e)) => Err(format!("`{expression}` errs: {e}")),
            None => Err(format!("evaluating `{expression}` failed inside the CEL evaluator")),
        }
    }
}

/// Parse a rule within the apiserver's limits and meter it (see [`bounds`]).
fn compile(env: &Env, text: &str) -> Result<IdedExpr, String> {
    if let Some(why) = bounds::refuse_source(text) {
        return Err(why);
    }
    let parser = env.parser().max_recursion_depth(bounds::MAX_NESTING as u16);
    let parsed = bounds::on_deep_stack(|| guarded(|| parser.parse(text).map_err(|e| e.to_string())))
        .unwrap_or_else(|| Err("the CEL parser failed on it".into()))?;
    let depth = bounds::nesting(&parsed);
    if depth > bounds::MAX_NESTING {
        return Err(format!(
            "it nests {depth} expressions deep, past the {} covenant evaluates",
            bounds::MAX_NESTING
        ));
    }
    Ok(bounds::meter(parsed))
}

/// Run `f`, turning a panic inside the CEL library into `None`: a rule from a CRD is input,
/// and nothing panics the server on input.
fn guarded<T>(f: impl FnOnce() -> T) -> Option<T> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).ok()
}

fn message(rule: &CelRule) -> String {
    match &rule.message {
        Some(m) => format!("{m} (rule `{}`)", rule.rule),
        None => format!("failed rule `{}`", rule.rule),
    }
}

impl Evaluator {
    /// Whether `text` satisfies one of the formats the apiserver validates; `None` for a
    /// format it does not validate (the apiserver ignores those too). The expressions are
    /// compiled once per evaluator, in the pattern cache, not once per value.
    pub fn format(&mut self, format: &str, text: &str) -> Option<bool> {
        format_ok(format, text, &mut |p| self.pattern(p, text).unwrap_or(false))
    }
}

fn format_ok(format: &str, text: &str, re: &mut dyn FnMut(&str) -> bool) -> Option<bool> {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    Some(match format {
        "date-time" | "datetime" => humantime::parse_rfc3339_weak(text).is_ok() && text.len() >= 19,
        "date" => re(r"^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$"),
        "uuid" => re(r"^(?i)[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$"),
        "uuid3" | "uuid4" | "uuid5" => {
            let v = &format[4..];
            re(&format!(
                r"^(?i)[0-9a-f]{{8}}-?[0-9a-f]{{4}}-?{v}[0-9a-f]{{3}}-?[0-9a-f]{{4}}-?[0-9a-f]{{12}}$"
            ))
        }
        "email" => re(r"^[^@\s]+@[^@\s]+\.[^@\s]+$"),
        "hostname" => text.len() <= 253 && text.split('.').all(re_label),
        "ipv4" => text.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => text.parse::<Ipv6Addr>().is_ok(),
        "cidr" => {
            text.split_once('/').is_some_and(|(ip, bits)| match (ip.parse::<IpAddr>(), bits.parse::<u8>()) {
                (Ok(IpAddr::V4(_)), Ok(b)) => b <= 32,
                (Ok(IpAddr::V6(_)), Ok(b)) => b <= 128,
                _ => false,
            })
        }
        "mac" => re(r"^(?i)([0-9a-f]{2}[:-]){5}[0-9a-f]{2}$"),
        "byte" => {
            use base64::Engine as _;
            base64::engine::general_purpose::STANDARD.decode(text).is_ok()
        }
        "duration" => re(r"^-?([0-9]+(\.[0-9]*)?(ns|us|µs|ms|s|m|h))+$") || text == "0",
        "uri" => text.parse::<http::Uri>().is_ok_and(|u| u.scheme().is_some()),
        _ => return None,
    })
}

fn re_label(label: &str) -> bool {
    !label.is_empty()
        && label.len() <= 63
        && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !label.starts_with('-')
        && !label.ends_with('-')
}

/// A Kubernetes quantity (`500m`, `1Gi`, `2e3`) as a number: enough to compare two.
fn parse_quantity(s: &str) -> Option<f64> {
    let s = s.trim();
    let split =
        s.find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-')).unwrap_or(s.len());
    let (number, suffix) = s.split_at(split);
    let n: f64 = number.parse().ok()?;
    let scale = match suffix {
        "" => 1.0,
        "n" => 1e-9,
        "u" => 1e-6,
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        "Ki" => 1024.0,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        e if e.starts_with(['e', 'E']) => 10f64.powi(e[1..].parse().ok()?),
        _ => return None,
    };
    Some(n * scale)
}

/// Quantities are carried as `{"__quantity": <number>}` maps, so a quantity's methods can
/// tell one from a plain number.
fn quantity_of(v: &Cel) -> Result<f64, ExecutionError> {
    if let Cel::Map(m) = v {
        if let Some(Cel::Float(f)) = m.get(&cel::objects::Key::String(Arc::new("__quantity".into()))) {
            return Ok(*f);
        }
    }
    Err(fail("quantity", "not a quantity"))
}

fn quantity_value(f: f64) -> Cel {
    let mut m = HashMap::new();
    m.insert("__quantity".to_string(), Cel::Float(f));
    cel::to_value(m.into_iter().map(|(k, v)| (k, QuantityFloat(v))).collect::<HashMap<_, _>>())
        .unwrap_or(Cel::Null)
}

/// A serializable float for `quantity_value`.
struct QuantityFloat(Cel);

impl serde::Serialize for QuantityFloat {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Cel::Float(f) => s.serialize_f64(f),
            _ => s.serialize_unit(),
        }
    }
}

fn url_parts(s: &str) -> Result<http::Uri, ExecutionError> {
    let uri: http::Uri = s.parse().map_err(|e| fail("url", format!("{e}")))?;
    if uri.scheme().is_none() && !s.starts_with('/') {
        return Err(fail("url", "not an absolute URI or an absolute path"));
    }
    Ok(uri)
}

fn text(v: &Cel) -> Result<Arc<String>, ExecutionError> {
    match v {
        Cel::String(s) => Ok(s.clone()),
        // A url value is carried as its string, tagged.
        Cel::Map(m) => match m.get(&cel::objects::Key::String(Arc::new("__url".into()))) {
            Some(Cel::String(s)) => Ok(s.clone()),
            _ => Err(fail("url", "not a URL")),
        },
        _ => Err(fail("url", "not a URL")),
    }
}

fn numbers(list: &[Cel]) -> Vec<f64> {
    list.iter()
        .filter_map(|v| match v {
            Cel::Int(i) => Some(*i as f64),
            Cel::UInt(u) => Some(*u as f64),
            Cel::Float(f) => Some(*f),
            _ => None,
        })
        .collect()
}

fn kubernetes_library(cx: &mut Context<'static, 'static>) {
    let add = |name: &str, r: Result<(), cel::DeclarationError>| {
        if let Err(e) = r {
            tracing::debug!(function = name, error = ?e, "CEL function not added");
        }
    };
    // Lists.
    add(
        "isSorted",
        cx.add_function("isSorted", |This(list): This<Arc<Vec<Cel>>>| -> bool {
            list.windows(2).all(|w| w[0].partial_cmp(&w[1]).is_some_and(|o| o != std::cmp::Ordering::Greater))
        }),
    );
    add(
        "sum",
        cx.add_function("sum", |This(list): This<Arc<Vec<Cel>>>| -> Cel {
            if list.iter().all(|v| matches!(v, Cel::Int(_))) {
                Cel::Int(
                    list.iter()
                        .map(|v| if let Cel::Int(i) = v { *i } else { 0 })
                        .fold(0i64, i64::wrapping_add),
                )
            } else {
                Cel::Float(numbers(&list).iter().sum())
            }
        }),
    );
    for (name, pick_max) in [("min", false), ("max", true)] {
        add(
            name,
            cx.add_function(name, move |This(list): This<Arc<Vec<Cel>>>| -> Result<Cel, ExecutionError> {
                let mut best: Option<&Cel> = None;
                for v in list.iter() {
                    best = match best {
                        None => Some(v),
                        Some(b) => {
                            let better = match v.partial_cmp(b) {
                                Some(std::cmp::Ordering::Greater) => pick_max,
                                Some(std::cmp::Ordering::Less) => !pick_max,
                                _ => false,
                            };
                            Some(if better { v } else { b })
                        }
                    };
                }
                best.cloned().ok_or_else(|| fail(if pick_max { "max" } else { "min" }, "empty list"))
            }),
        );
    }
    // Regex: `find` and `findAll` are priced, with their patterns compiled once (bounds).
    // Quantity.
    add(
        "isQuantity",
        cx.add_function("isQuantity", |s: Arc<String>| -> bool { parse_quantity(&s).is_some() }),
    );
    add(
        "quantity",
        cx.add_function("quantity", |s: Arc<String>| -> Result<Cel, ExecutionError> {
            parse_quantity(&s)
                .map(quantity_value)
                .ok_or_else(|| fail("quantity", format!("invalid quantity {s:?}")))
        }),
    );
    let compare = |a: &Cel, b: &Cel| -> Result<std::cmp::Ordering, ExecutionError> {
        let (x, y) = (quantity_of(a)?, quantity_of(b)?);
        x.partial_cmp(&y).ok_or_else(|| fail("compareTo", "not comparable"))
    };
    add(
        "compareTo",
        cx.add_function("compareTo", move |This(a): This<Cel>, b: Cel| -> Result<i64, ExecutionError> {
            Ok(compare(&a, &b)? as i64)
        }),
    );
    add(
        "isLessThan",
        cx.add_function("isLessThan", move |This(a): This<Cel>, b: Cel| -> Result<bool, ExecutionError> {
            Ok(compare(&a, &b)? == std::cmp::Ordering::Less)
        }),
    );
    add(
        "isGreaterThan",
        cx.add_function("isGreaterThan", move |This(a): This<Cel>, b: Cel| -> Result<bool, ExecutionError> {
            Ok(compare(&a, &b)? == std::cmp::Ordering::Greater)
        }),
    );
    add(
        "asInteger",
        cx.add_function("asInteger", |This(a): This<Cel>| -> Result<i64, ExecutionError> {
            let f = quantity_of(&a)?;
            if f.fract() != 0.0 || f.abs() > 9.2e18 {
                return Err(fail("asInteger", "the quantity is not an integer"));
            }
            Ok(f as i64)
        }),
    );
    add(
        "asApproximateFloat",
        cx.add_function("asApproximateFloat", |This(a): This<Cel>| -> Result<f64, ExecutionError> {
            quantity_of(&a)
        }),
    );
    add(
        "sign",
        cx.add_function("sign", |This(a): This<Cel>| -> Result<i64, ExecutionError> {
            let f = quantity_of(&a)?;
            Ok(if f > 0.0 {
                1
            } else if f < 0.0 {
                -1
            } else {
                0
            })
        }),
    );
    // URL.
    add("isURL", cx.add_function("isURL", |s: Arc<String>| -> bool { url_parts(&s).is_ok() }));
    add(
        "url",
        cx.add_function("url", |s: Arc<String>| -> Result<Cel, ExecutionError> {
            url_parts(&s)?;
            let mut m = HashMap::new();
            m.insert("__url".to_string(), s.as_str().to_string());
            cel::to_value(m).map_err(|e| fail("url", e.to_string()))
        }),
    );
    type Part = fn(&http::Uri) -> String;
    let parts: [(&str, Part); 6] = [
        ("getScheme", |u| u.scheme_str().unwrap_or_default().to_string()),
        ("getHost", |u| match (u.host(), u.port_u16()) {
            (Some(h), Some(p)) => format!("{h}:{p}"),
            (Some(h), None) => h.to_string(),
            _ => String::new(),
        }),
        ("getHostname", |u| u.host().unwrap_or_default().trim_matches(['[', ']']).to_string()),
        ("getPort", |u| u.port().map(|p| p.to_string()).unwrap_or_default()),
        ("getEscapedPath", |u| u.path().to_string()),
        ("getQuery", |u| u.query().unwrap_or_default().to_string()),
    ];
    for (name, part) in parts {
        add(
            name,
            cx.add_function(name, move |This(v): This<Cel>| -> Result<Cel, ExecutionError> {
                Ok(Cel::String(Arc::new(part(&url_parts(&text(&v)?)?))))
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(text: &str) -> CelRule {
        CelRule { rule: text.into(), ..CelRule::default() }
    }

    #[test]
    fn rules_pass_fail_and_say_what_they_cannot_evaluate() {
        let mut ev = Evaluator::new();
        let obj = json!({"replicas": 3, "name": "web-1", "ports": [80, 443], "limit": "500Mi"});
        for (text, expected) in [
            ("self.replicas <= 5", true),
            ("self.replicas > 5", false),
            ("self.name.matches('^web-[0-9]+$')", true),
            ("self.ports.all(p, p > 0 && p < 65536)", true),
            ("self.ports.isSorted()", true),
            ("self.ports.sum() == 523", true),
            ("self.ports.max() == 443", true),
            ("has(self.missing) || self.replicas == 3", true),
            ("self == oldSelf", true),
            ("self.name.split('-').size() == 2", true),
            ("self.name.lowerAscii() == 'web-1'", true),
            ("quantity(self.limit).isLessThan(quantity('1Gi'))", true),
            ("isQuantity(self.limit) && quantity(self.limit).compareTo(quantity('500Mi')) == 0", true),
            ("self.name.find('[0-9]+') == '1'", true),
            ("url('https://example.com:8443/a?b=c').getPort() == '8443'", true),
            ("isURL('not a url') == false", true),
        ] {
            let got = ev.rule(&rule(text), &obj);
            let want = if expected { Verdict::Pass } else { Verdict::Fail(format!("failed rule `{text}`")) };
            assert_eq!(got, want, "{text}");
        }
        // A missing key is what the apiserver refuses too.
        assert!(matches!(ev.rule(&rule("self.missing == 1"), &obj), Verdict::Fail(_)));
        // A function this evaluator lacks is named, never passed.
        match ev.rule(&rule("format.dns1123Label().validate(self.name).hasValue()"), &obj) {
            Verdict::Unprovable(why) => assert!(why.contains("format"), "{why}"),
            other => panic!("{other:?}"),
        }
        match ev.rule(&rule("self.replicas >"), &obj) {
            Verdict::Unprovable(why) => assert!(why.contains("does not parse"), "{why}"),
            other => panic!("{other:?}"),
        }
        // A rule's message is carried.
        let mut with_message = rule("self.replicas > 5");
        with_message.message = Some("replicas must exceed 5".into());
        assert_eq!(
            ev.rule(&with_message, &obj),
            Verdict::Fail("replicas must exceed 5 (rule `self.replicas > 5`)".into())
        );
    }

    /// Run `f` on a thread with the blocking pool's 2 MiB stack, and fail if it is not done
    /// within `seconds` (unbounded, it would run for minutes or abort the process).
    fn bounded<T: Send + 'static>(seconds: u64, f: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(move || {
                let _ = tx.send(f());
            })
            .unwrap();
        rx.recv_timeout(std::time::Duration::from_secs(seconds)).expect("the evaluation was not bounded")
    }

    fn unprovable_for(text: &str, value: Value, because: &str) {
        let text = text.to_string();
        let got = bounded(60, move || {
            let mut ev = Evaluator::new();
            ev.begin_object();
            ev.rule(&rule(&text), &value)
        });
        match got {
            Verdict::Unprovable(why) => assert!(why.contains(because), "{why}"),
            other => panic!("expected cannot prove ({because}), got {other:?}"),
        }
    }

    #[test]
    fn an_evaluation_past_the_apiservers_cost_limit_is_stopped_and_cannot_prove() {
        let items: Vec<Value> = (0..10_000).map(|i| json!(format!("item-{i}"))).collect();
        let obj = json!({"items": items});
        // Quadratic comprehensions over a list a tenant filled.
        unprovable_for("self.items.all(a, self.items.all(b, a == b || a != b))", obj.clone(), "units");
        unprovable_for("self.items.all(a, self.items.exists_one(b, a == b))", obj.clone(), "units");
        let three: Vec<Value> = (0..3_000).map(|i| json!(i)).collect();
        unprovable_for(
            "self.items.map(a, self.items.map(b, b)).size() > 0",
            json!({"items": three}),
            "units",
        );
        // A string that multiplies at each nesting is refused before it is made.
        let s = "a".repeat(300);
        unprovable_for(
            "self.s.replace('a', self.s.replace('a', self.s.replace('a', self.s))) != ''",
            json!({"s": s}),
            "replace would make a string",
        );
        unprovable_for(
            "self.s.replace('', self.s, -1).replace('', self.s).size() > 0",
            json!({"s": "a".repeat(3000)}),
            "string",
        );
        // Too long or too deep to parse within the limits: no stack overflow.
        let sum = vec!["1"; 3_000].join(" + ");
        unprovable_for(&format!("{sum} > 0"), json!({}), "operators");
        let chained = format!("'a'{} == 'a'", ".lowerAscii()".repeat(1_000));
        unprovable_for(&chained, json!({}), "operators");
        let long = format!("self.s == '{}'", "x".repeat(100_001));
        unprovable_for(&long, json!({"s": ""}), "code points");
        // A heavy pattern over every item: compiled once, linear, and within budget.
        let got = bounded(60, move || {
            let mut ev = Evaluator::new();
            ev.begin_object();
            ev.rule(&rule("self.items.all(i, i.matches('^item-[0-9]+$') && i.find('[0-9]+') != '')"), &obj)
        });
        assert_eq!(got, Verdict::Pass);
    }

    #[test]
    fn rules_within_the_limits_evaluate_as_before_on_the_pools_stack() {
        // As deep as the limit allows, on a 2 MiB stack.
        let sum = vec!["1"; 200].join(" + ");
        let text = format!("{sum} == 200");
        assert_eq!(bounded(60, move || Evaluator::new().rule(&rule(&text), &json!({}))), Verdict::Pass);
        let nested = format!("{}1{} == 1", "(".repeat(120), ")".repeat(120));
        assert_eq!(bounded(60, move || Evaluator::new().rule(&rule(&nested), &json!({}))), Verdict::Pass);
        let mut ev = Evaluator::new();
        let obj = json!({"items": ["a", "b", "a"], "s": "a-b"});
        for (text, expected) in [
            ("self.items.distinct() == ['a', 'b']", true),
            ("self.items.map(i, i + 'x').filter(i, i == 'ax').size() == 2", true),
            ("self.s.replace('-', '') == 'ab'", true),
            ("self.s.replace('a', 'z', 0) == 'a-b'", true),
            ("matches(self.s, '^a')", true),
            ("self.s.findAll('[a-z]') == ['a', 'b']", true),
            ("self.items.exists(i, i == 'c') || true", true),
            ("self.items.sortBy(i, i) == ['a', 'a', 'b']", true),
        ] {
            let got = ev.rule(&rule(text), &obj);
            let want = if expected { Verdict::Pass } else { Verdict::Fail(format!("failed rule `{text}`")) };
            assert_eq!(got, want, "{text}");
        }
    }

    #[test]
    fn a_raised_stop_flag_ends_an_evaluation_at_its_next_look() {
        let items: Vec<Value> = (0..10_000).map(|i| json!(i)).collect();
        let obj = json!({"items": items});
        let stop = Arc::new(AtomicBool::new(true));
        let got = bounded(60, move || {
            let mut ev = Evaluator::with_stop(Some(stop));
            ev.begin_object();
            ev.rule(&rule("self.items.all(a, self.items.all(b, a == b || a != b))"), &obj)
        });
        match got {
            Verdict::Unprovable(why) => assert!(why.contains("deadline"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn optional_old_self_is_present_and_equal() {
        let mut ev = Evaluator::new();
        let mut r = rule("!oldSelf.hasValue() || oldSelf.value() == self");
        r.optional_old_self = true;
        assert_eq!(ev.rule(&r, &json!("x")), Verdict::Pass);
    }

    #[test]
    fn patterns_are_re2_and_formats_are_the_apiservers() {
        let mut ev = Evaluator::new();
        assert_eq!(ev.pattern("^[a-z]+$", "abc"), Ok(true));
        assert_eq!(ev.pattern("[0-9]", "a1b"), Ok(true), "unanchored, as the apiserver matches");
        assert!(ev.pattern("(?=a)", "a").is_err(), "look-around is not RE2");
        for (format, ok, bad) in [
            ("date-time", "2026-12-03T10:00:00Z", "yesterday"),
            ("date", "2026-12-03", "2026-13-03"),
            ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123"),
            ("email", "a@example.com", "a@"),
            ("hostname", "web.example.com", "-web"),
            ("ipv4", "10.0.0.1", "10.0.0.300"),
            ("ipv6", "::1", "::g"),
            ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
            ("mac", "00:1a:2b:3c:4d:5e", "00:1a"),
            ("byte", "aGVsbG8=", "***"),
            ("duration", "1h30m", "soon"),
            ("uri", "https://example.com/x", "example"),
        ] {
            assert_eq!(ev.format(format, ok), Some(true), "{format} {ok}");
            assert_eq!(ev.format(format, bad), Some(false), "{format} {bad}");
        }
        assert_eq!(ev.format("int32", "x"), None, "a format the apiserver does not validate");
    }
}
