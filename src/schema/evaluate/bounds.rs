//! The bounds on one CEL evaluation, in the apiserver's terms.
//!
//! A rule comes from a CRD or a construct, and the value it is evaluated on may be a live
//! object any tenant with create rights wrote, stored under an older, unbounded schema. So
//! nothing about an evaluation is trusted to be cheap. The apiserver bounds CEL three ways,
//! and covenant bounds it the same three ways:
//!
//! - **what it will parse**: at most [`MAX_SOURCE`] code points (cel-go's
//!   `expressionSizeCodePointLimit`) and at most [`MAX_NESTING`] nested expressions, counted
//!   over the parsed tree (a 3,000-term `1+1+…` or 1,000 chained calls is as deep as it is
//!   long, and would exhaust the stack while evaluated);
//! - **what one evaluation may cost**: every evaluated call (operators included) costs one
//!   unit plus the size of what it made (a string a unit per ten bytes, as cel-go counts
//!   string work; a list or map a unit per element), and every comprehension costs the size
//!   of the range it walks each time it starts. Past [`PER_CALL_LIMIT`] units for one rule on
//!   one value (the apiserver's `PerCallLimit`), or [`PER_OBJECT_LIMIT`] for every rule on
//!   one object (its `RuntimeCELCostBudget`), the evaluation stops;
//! - **what it may hold**: a function whose result can outgrow its arguments by a factor
//!   (`replace`, `distinct`) is priced before it runs, and no string beyond
//!   [`MAX_STRING`] bytes or list beyond [`MAX_LIST`] elements is made.
//!
//! The stop flag of the request (raised at its deadline, or at shutdown) is read every
//! [`CHECK_EVERY`] units, so an evaluation gives its turn back within a few milliseconds.
//!
//! How: the parsed program is rewritten before it is kept. Each call `f(x)` becomes
//! `@covenant_cost(f(x))`, each comprehension's range `r` becomes `@covenant_range(r)`, and
//! `replace`, `matches`, `distinct`, `find` and `findAll` become priced versions of
//! themselves. The `@` names cannot be written in CEL, so a rule cannot call or shadow them.
//! The meter lives in a thread-local: the `cel` crate's overloads are plain functions, and
//! one evaluation runs on one thread.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use cel::common::ast::{CallExpr, EntryExpr, Expr, IdedExpr};
use cel::common::types::{CelBool, CelList, CelString, DYN_TYPE, INT_TYPE, LIST_TYPE, STRING_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{Env, ExecutionError};
use regex::Regex;

/// The most code points of a rule's text cel-go parses.
pub const MAX_SOURCE: usize = 100_000;
/// The most nested expressions in a parsed rule (cel-go's `maxRecursionDepth`).
pub const MAX_NESTING: usize = 250;
/// The most operators, member calls and brackets a rule's text may hold before it is parsed:
/// the parser recurses about once for each, so this bounds its depth before it runs. The
/// longest rule in the corpus (Gateway API's HTTPRoute) holds 160.
pub const MAX_OPERATORS: usize = 500;
/// The stack a parse or an evaluation runs on, whatever thread asks for it (the blocking
/// pool's threads have 2 MiB): enough for [`MAX_OPERATORS`] and [`MAX_NESTING`] with room to
/// spare even in a debug build. Mapped, not touched: it costs what is used.
const STACK: usize = 64 << 20;
/// Below this much stack left, a parse or evaluation moves to a stack of its own.
const RED_ZONE: usize = 48 << 20;
/// The most cost units one rule may spend on one value: the apiserver's `PerCallLimit`.
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// The most cost units every rule together may spend on one object: the apiserver's
/// `RuntimeCELCostBudget` for a custom resource's validation.
pub const PER_OBJECT_LIMIT: u64 = 10_000_000;
/// The longest string an evaluation may make, in bytes.
pub const MAX_STRING: usize = 4 << 20;
/// The longest list an evaluation may make (cel-go's `lists.range` limit).
pub const MAX_LIST: usize = 1_000_000;
/// How many units pass between two looks at the stop flag.
const CHECK_EVERY: u64 = 4096;
/// The most compiled patterns a thread keeps for `matches`, `find` and `findAll`.
const PATTERNS: usize = 256;

const COST: &str = "@covenant_cost";
const RANGE: &str = "@covenant_range";
/// The functions replaced by priced versions: (CEL name, its priced version).
const PRICED: [(&str, &str); 5] = [
    ("replace", "@covenant_replace"),
    ("matches", "@covenant_matches"),
    ("distinct", "@covenant_distinct"),
    ("find", "@covenant_find"),
    ("findAll", "@covenant_find_all"),
];

/// Why an evaluation was stopped.
#[derive(Clone, Debug, PartialEq)]
pub enum Exceeded {
    /// The rule's cost on this value passed the per-call limit.
    Call,
    /// Every rule's cost on this object passed the per-object limit.
    Object,
    /// A string or a list grew past what an evaluation may hold.
    Memory(String),
    /// The request's deadline passed, or the server is shutting down.
    Stopped,
}

impl std::fmt::Display for Exceeded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Exceeded::Call => write!(
                f,
                "its cost on this object passed {PER_CALL_LIMIT} units, the apiserver's limit for one rule (covenant counts a unit a call, plus a unit a list element or ten string bytes made, plus a unit an element a comprehension walks)"
            ),
            Exceeded::Object => write!(
                f,
                "the rules' cost on this object passed {PER_OBJECT_LIMIT} units, the apiserver's budget for one object's validation"
            ),
            Exceeded::Memory(what) => write!(f, "{what}"),
            Exceeded::Stopped => write!(f, "the request's deadline passed while it was evaluated"),
        }
    }
}

/// The meter of the evaluation running on this thread.
struct Meter {
    call: u64,
    object: u64,
    since_check: u64,
    stop: Option<Arc<AtomicBool>>,
    exceeded: Option<Exceeded>,
    patterns: HashMap<String, Result<Regex, String>>,
}

thread_local! {
    static METER: RefCell<Meter> = RefCell::new(Meter {
        call: 0,
        object: 0,
        since_check: 0,
        stop: None,
        exceeded: None,
        patterns: HashMap::new(),
    });
}

/// Start metering one object's validation: every rule on it shares the per-object budget.
pub fn begin_object(stop: Option<Arc<AtomicBool>>) {
    METER.with_borrow_mut(|m| {
        m.object = 0;
        m.stop = stop;
    });
}

/// Start metering one rule on one value.
pub fn begin_call() {
    METER.with_borrow_mut(|m| {
        m.call = 0;
        m.exceeded = None;
    });
}

/// Why the evaluation just run was stopped, if it was. An evaluation that passed a limit is
/// never a verdict, whatever it returned: CEL's `||` and `all()` may absorb the error.
pub fn exceeded() -> Option<Exceeded> {
    METER.with_borrow(|m| m.exceeded.clone())
}

/// Spend `units`; an error once a limit is passed (and at every call after).
fn charge(units: u64) -> Result<(), ExecutionError> {
    METER.with_borrow_mut(|m| {
        if m.exceeded.is_none() {
            m.call = m.call.saturating_add(units);
            m.object = m.object.saturating_add(units);
            m.since_check = m.since_check.saturating_add(units);
            if m.call > PER_CALL_LIMIT {
                m.exceeded = Some(Exceeded::Call);
            } else if m.object > PER_OBJECT_LIMIT {
                m.exceeded = Some(Exceeded::Object);
            } else if m.since_check >= CHECK_EVERY {
                m.since_check = 0;
                if m.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed)) {
                    m.exceeded = Some(Exceeded::Stopped);
                }
            }
        }
        match &m.exceeded {
            None => Ok(()),
            Some(e) => Err(ExecutionError::function_error("cost", e.to_string())),
        }
    })
}

fn too_large(what: String) -> ExecutionError {
    METER.with_borrow_mut(|m| {
        m.exceeded.get_or_insert(Exceeded::Memory(what.clone()));
    });
    ExecutionError::function_error("cost", what)
}

/// The units a value made by a call costs, by its size; an error for one too large to hold.
fn size_units(value: &CowVal<'_, '_>) -> Result<u64, ExecutionError> {
    if let Some(s) = value.downcast_ref::<CelString>() {
        let n = s.inner().len();
        if n > MAX_STRING {
            return Err(too_large(format!(
                "it made a string of {n} bytes, past the {MAX_STRING} an evaluation may hold"
            )));
        }
        return Ok(n as u64 / 10);
    }
    match value.as_sizer() {
        Some(s) => {
            let n = (*s.size().inner()).max(0) as u64;
            if value.get_type().name() == "list" && n > MAX_LIST as u64 {
                return Err(too_large(format!(
                    "it made a list of {n} elements, past the {MAX_LIST} an evaluation may hold"
                )));
            }
            Ok(n)
        }
        None => Ok(0),
    }
}

/// Register the metered functions on `env`.
pub fn register(env: &mut Env) {
    let add = |env: &mut Env,
               name: &str,
               args: Vec<cel::common::types::Type>,
               op: cel::common::functions::Function| {
        if let Err(e) = env.add_overload(name, name, args, op) {
            tracing::error!(function = name, error = ?e, "a CEL cost function could not be registered");
        }
    };
    add(env, COST, vec![DYN_TYPE], cost);
    add(env, RANGE, vec![DYN_TYPE], range);
    add(env, "@covenant_replace", vec![STRING_TYPE, STRING_TYPE, STRING_TYPE], replace);
    if let Err(e) = env.add_overload(
        "@covenant_replace",
        "@covenant_replace_n",
        vec![STRING_TYPE, STRING_TYPE, STRING_TYPE, INT_TYPE],
        replace_n,
    ) {
        tracing::error!(error = ?e, "a CEL cost function could not be registered");
    }
    add(env, "@covenant_matches", vec![STRING_TYPE, STRING_TYPE], matches);
    add(env, "@covenant_distinct", vec![LIST_TYPE], distinct);
    add(env, "@covenant_find", vec![STRING_TYPE, STRING_TYPE], find);
    add(env, "@covenant_find_all", vec![STRING_TYPE, STRING_TYPE], find_all);
}

fn one<'b, 'v>(mut args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    match (args.pop(), args.is_empty()) {
        (Some(v), true) => Ok(v),
        _ => Err(ExecutionError::invalid_argument_count(1, args.len() + 1)),
    }
}

fn cost<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let value = one(args)?;
    charge(1 + size_units(&value)?)?;
    Ok(value)
}

fn range<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let value = one(args)?;
    let n = value.as_sizer().map_or(0, |s| (*s.size().inner()).max(0) as u64);
    charge(1 + n)?;
    Ok(value)
}

/// The first `N` arguments, as strings.
fn strings<'a, const N: usize>(
    args: &'a [CowVal<'_, '_>],
    function: &str,
) -> Result<[&'a str; N], ExecutionError> {
    if args.len() < N {
        return Err(ExecutionError::invalid_argument_count(N, args.len()));
    }
    let mut out = [""; N];
    for (o, a) in out.iter_mut().zip(args) {
        *o = a.downcast_ref::<CelString>().map(|s| s.inner()).ok_or_else(|| {
            ExecutionError::no_such_overload(function, vec![a.get_type().name().to_owned()])
        })?;
    }
    Ok(out)
}

fn text<'b, 'v>(s: String) -> Result<CowVal<'b, 'v>, ExecutionError> {
    Ok(CowVal::owned(CelString::from(s)))
}

/// `s.replace(old, new)`, priced by the length of what it makes before it is made.
fn replace<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    replacing(args, None)
}

/// `s.replace(old, new, n)`: at most `n` replacements (all of them where `n` is negative).
fn replace_n<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let n = args.get(3).and_then(|n| n.downcast_ref::<cel::common::types::CelInt>()).map(|n| *n.inner());
    replacing(args, Some(n.unwrap_or(-1)))
}

fn replacing<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    limit: Option<i64>,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [s, old, new] = strings::<3>(&args, "replace")?;
    let mut times = if old.is_empty() { s.chars().count() + 1 } else { s.matches(old).count() };
    if let Some(n) = limit.filter(|n| *n >= 0) {
        times = times.min(n as usize);
    }
    let made = s.len().saturating_add(times.saturating_mul(new.len()));
    if made > MAX_STRING {
        return Err(too_large(format!(
            "replace would make a string of {made} bytes, past the {MAX_STRING} an evaluation may hold"
        )));
    }
    charge(1 + (s.len() + made) as u64 / 10)?;
    match limit.filter(|n| *n >= 0) {
        Some(n) => text(s.replacen(old, new, n as usize)),
        None => text(s.replace(old, new)),
    }
}

/// A pattern compiled once per thread, not once per call.
fn pattern(function: &str, re: &str) -> Result<Regex, ExecutionError> {
    METER.with_borrow_mut(|m| {
        if m.patterns.len() >= PATTERNS && !m.patterns.contains_key(re) {
            m.patterns.clear();
        }
        let compiled = match m.patterns.get(re) {
            Some(hit) => hit.clone(),
            None => {
                let compiled = Regex::new(re).map_err(|e| e.to_string());
                m.patterns.insert(re.to_string(), compiled.clone());
                compiled
            }
        };
        compiled
            .map_err(|e| ExecutionError::function_error(function, format!("'{re}' not a valid regex:\n{e}")))
    })
}

fn matches<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [s, re] = strings::<2>(&args, "matches")?;
    charge(1 + (s.len() + re.len()) as u64 / 10)?;
    Ok(CowVal::owned(CelBool::from(pattern("matches", re)?.is_match(s))))
}

fn find<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [s, re] = strings::<2>(&args, "find")?;
    charge(1 + (s.len() + re.len()) as u64 / 10)?;
    let found = pattern("find", re)?.find(s).map(|m| m.as_str().to_string()).unwrap_or_default();
    text(found)
}

fn find_all<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let [s, re] = strings::<2>(&args, "findAll")?;
    charge(1 + (s.len() + re.len()) as u64 / 10)?;
    let all: Vec<Box<dyn Val + 'v>> = pattern("findAll", re)?
        .find_iter(s)
        .map(|m| Box::new(CelString::from(m.as_str().to_string())) as Box<dyn Val + 'v>)
        .collect();
    Ok(CowVal::owned(CelList::from(all)))
}

/// `list.distinct()`: the first of each set of equal elements, in order; each comparison
/// costs a unit, spent as it is made.
fn distinct<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let list = one(args)?;
    let mut items = list
        .as_iterable()
        .ok_or_else(|| ExecutionError::no_such_overload("distinct", vec![list.get_type().name().to_owned()]))?
        .iter();
    let mut unique: Vec<&dyn Val> = Vec::new();
    while let Some(item) = items.next() {
        charge(1 + unique.len() as u64)?;
        if !unique.iter().any(|seen| item.equals(*seen)) {
            unique.push(item);
        }
    }
    let kept: Vec<Box<dyn Val + 'v>> = unique.into_iter().map(|v| v.clone_as_boxed()).collect();
    Ok(CowVal::owned(CelList::from(kept)))
}

/// Run `f` (a parse, an evaluation, a walk that evaluates) on a stack deep enough for the
/// bounds above: the thread's own where enough is left, else one of its own.
pub fn on_deep_stack<T>(f: impl FnOnce() -> T) -> T {
    stacker::maybe_grow(RED_ZONE, STACK, f)
}

/// Why a rule is not parsed: it is longer than cel-go parses, or holds more operators than
/// covenant parses.
pub fn refuse_source(source: &str) -> Option<String> {
    let n = source.chars().count();
    if n > MAX_SOURCE {
        return Some(format!("it is {n} code points long, past the {MAX_SOURCE} the apiserver parses"));
    }
    let ops = operators(source);
    (ops > MAX_OPERATORS).then(|| {
        format!("it holds {ops} operators, member calls and brackets, past the {MAX_OPERATORS} covenant parses (each may nest)")
    })
}

/// The operators, member selections and opening brackets outside string literals: each
/// can nest the parsed tree one level deeper, so their count bounds its depth.
fn operators(source: &str) -> usize {
    let b = source.as_bytes();
    let (mut i, mut n) = (0, 0);
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"') => {
                // A string literal (raw or not, single or triple quoted): skipped whole.
                let triple = b.get(i..i + 3) == Some(&[q, q, q][..]);
                let close: &[u8] = if triple { &b[i..i + 3] } else { &b[i..i + 1] };
                i += close.len();
                while i < b.len() && b.get(i..i + close.len()) != Some(close) {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                i += close.len();
                continue;
            }
            b'+' | b'-' | b'*' | b'/' | b'%' | b'<' | b'>' | b'!' | b'?' | b'.' | b'(' | b'[' | b'{' => {
                n += 1
            }
            b'&' | b'|' | b'=' if b.get(i + 1) == Some(&b[i]) => {
                n += 1;
                i += 1;
            }
            _ => {}
        }
        i += 1;
    }
    n
}

/// How deeply `expr` nests, counted without recursion (a tree too deep to walk recursively
/// is what this measures).
pub fn nesting(expr: &IdedExpr) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(expr, 1usize)];
    while let Some((e, depth)) = stack.pop() {
        deepest = deepest.max(depth);
        for child in children(e) {
            stack.push((child, depth + 1));
        }
    }
    deepest
}

fn entries(entries: &[cel::common::ast::IdedEntryExpr]) -> Vec<&IdedExpr> {
    entries
        .iter()
        .flat_map(|entry| match &entry.expr {
            EntryExpr::MapEntry(m) => vec![&m.key, &m.value],
            EntryExpr::StructField(f) => vec![&f.value],
        })
        .collect()
}

fn children(e: &IdedExpr) -> Vec<&IdedExpr> {
    match &e.expr {
        Expr::Call(c) => c.target.as_deref().into_iter().chain(c.args.iter()).collect(),
        Expr::Comprehension(c) => {
            vec![&c.iter_range, &c.accu_init, &c.loop_cond, &c.loop_step, &c.result]
        }
        Expr::List(l) => l.elements.iter().collect(),
        Expr::Map(m) => entries(&m.entries),
        Expr::Struct(s) => entries(&s.entries),
        Expr::Select(s) => vec![&s.operand],
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => Vec::new(),
    }
}

/// The program with its calls and comprehensions metered (see the module docs). `expr`
/// nests at most [`MAX_NESTING`] deep (checked before), so the recursion is bounded.
pub fn meter(expr: IdedExpr) -> IdedExpr {
    rewrite(expr, true)
}

fn wrap(name: &str, inner: IdedExpr) -> IdedExpr {
    IdedExpr {
        id: inner.id,
        expr: Expr::Call(CallExpr { func_name: name.to_string(), target: None, args: vec![inner] }),
    }
}

/// `charged`: whether this node, if a call, is wrapped in the cost function. A
/// comprehension's step is left bare at its top (the interpreter recognises `@result + [x]`
/// and `@result && x` there, to append in place and to absorb errors as cel-go does), and so
/// are the branches of a guarded step; everything inside them is metered.
fn rewrite(e: IdedExpr, charged: bool) -> IdedExpr {
    let IdedExpr { id, expr } = e;
    let expr = match expr {
        Expr::Call(mut c) => {
            let mut priced = false;
            if let Some((_, to)) = PRICED.iter().find(|(from, _)| *from == c.func_name) {
                // A member call becomes a global one with the target first.
                let arity: &[usize] = match c.func_name.as_str() {
                    "replace" => &[2, 3],
                    "distinct" => &[0],
                    _ => &[1],
                };
                let member = c.target.is_some();
                let global_matches = !member && c.func_name == "matches" && c.args.len() == 2;
                if (member && arity.contains(&c.args.len())) || global_matches {
                    if let Some(target) = c.target.take() {
                        c.args.insert(0, *target);
                    }
                    c.func_name = to.to_string();
                    priced = true;
                }
            }
            let target = c.target.map(|t| Box::new(rewrite(*t, true)));
            let args = c.args.into_iter().map(|a| rewrite(a, true)).collect();
            let call = IdedExpr { id, expr: Expr::Call(CallExpr { func_name: c.func_name, target, args }) };
            // A priced call is charged by itself; the cost of what it makes is counted there.
            return if charged && !priced { wrap(COST, call) } else { call };
        }
        Expr::Comprehension(mut c) => {
            let range = std::mem::take(&mut c.iter_range);
            c.iter_range = wrap(RANGE, rewrite(range, true));
            c.accu_init = rewrite(std::mem::take(&mut c.accu_init), true);
            c.loop_cond = rewrite(std::mem::take(&mut c.loop_cond), true);
            c.loop_step = rewrite_step(std::mem::take(&mut c.loop_step), &c.accu_var);
            c.result = rewrite(std::mem::take(&mut c.result), true);
            Expr::Comprehension(c)
        }
        Expr::List(mut l) => {
            l.elements = l.elements.into_iter().map(|x| rewrite(x, true)).collect();
            Expr::List(l)
        }
        Expr::Map(mut m) => {
            for entry in &mut m.entries {
                rewrite_entry(&mut entry.expr);
            }
            Expr::Map(m)
        }
        Expr::Struct(mut s) => {
            for entry in &mut s.entries {
                rewrite_entry(&mut entry.expr);
            }
            Expr::Struct(s)
        }
        Expr::Select(mut s) => {
            s.operand = Box::new(rewrite(*s.operand, true));
            Expr::Select(s)
        }
        other => other,
    };
    IdedExpr { id, expr }
}

fn rewrite_entry(entry: &mut EntryExpr) {
    match entry {
        EntryExpr::MapEntry(m) => {
            m.key = rewrite(std::mem::take(&mut m.key), true);
            m.value = rewrite(std::mem::take(&mut m.value), true);
        }
        EntryExpr::StructField(f) => f.value = rewrite(std::mem::take(&mut f.value), true),
    }
}

/// A comprehension's step: its top call bare when it folds the accumulator (`@result op x`,
/// or `guard ? @result + [x] : @result`), its operands metered. The step is charged all the
/// same: the comprehension's range paid a unit an element.
fn rewrite_step(step: IdedExpr, accu: &str) -> IdedExpr {
    let is_accu = |e: &IdedExpr| matches!(&e.expr, Expr::Ident(n) if n == accu);
    let IdedExpr { id, expr } = step;
    match expr {
        Expr::Call(c) if c.target.is_none() && c.args.first().is_some_and(is_accu) => {
            let args = c.args.into_iter().map(|a| if is_accu(&a) { a } else { rewrite(a, true) }).collect();
            IdedExpr { id, expr: Expr::Call(CallExpr { func_name: c.func_name, target: None, args }) }
        }
        Expr::Call(c) if c.target.is_none() && c.func_name == "_?_:_" && c.args.len() == 3 => {
            let mut args = c.args.into_iter();
            let guard = args.next().map(|g| rewrite(g, true));
            let rest = args.map(|a| rewrite_step(a, accu));
            let args = guard.into_iter().chain(rest).collect();
            IdedExpr { id, expr: Expr::Call(CallExpr { func_name: c.func_name, target: None, args }) }
        }
        expr => rewrite(IdedExpr { id, expr }, true),
    }
}
