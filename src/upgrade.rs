//! Will this manifest still apply? For a consumer (a Component, Project or Resource) and each
//! construct it names: what it resolves to now, the newest supported version (or a chosen
//! one), the pin move that reaches it (the major pin), the contract diff between the two, and
//! whether the consumer itself — its parameters and traits — validates against the target,
//! judged by the same engine with the pin moved. One answer for `covenant upgrade` and the
//! admin API's `/api/v0/upgrade`.

use serde_json::{json, Value};

use crate::cluster::ClusterView;
use crate::engine::Engine;
use crate::families::construct::GROUP;
use crate::families::consumer::{published, references, scope, SupportWindow};
use crate::report::diff::ContractDiff;
use crate::rules::Finding;
use crate::subject::Subject;
use crate::versioning::{resolve, Pin, Published};

/// The upgrade of one reference.
#[derive(Debug)]
pub struct Plan {
    /// Where the reference is (`/spec/componentType`).
    pub pointer: String,
    /// The construct kind and logical name.
    pub kind: String,
    /// The logical name.
    pub name: String,
    /// The pin as written (empty: floating).
    pub pin: String,
    /// The version it resolves to now.
    pub from: semver::Version,
    /// The target version.
    pub to: semver::Version,
    /// The pin that reaches the target (its major, as the seed recommends).
    pub new_pin: String,
    /// The contract diff from what it resolves to now to the target.
    pub diff: ContractDiff,
    /// What the engine says of the consumer with the pin moved (denials and warnings).
    pub findings: Vec<Finding>,
}

impl Plan {
    /// Whether the consumer would still apply with the pin moved.
    pub fn applies(&self) -> bool {
        !self.findings.iter().any(|f| f.action == crate::rules::Action::Deny)
    }

    /// The JSON the CLI and the admin API answer with.
    pub fn to_json(&self) -> Value {
        let findings: Vec<Value> = self
            .findings
            .iter()
            .map(|f| json!({"rule": f.rule.id, "action": f.action.as_str(), "pointer": f.pointer, "message": f.message}))
            .collect();
        json!({"pointer": self.pointer, "kind": self.kind, "name": self.name, "pin": self.pin,
            "from": self.from.to_string(), "to": self.to.to_string(), "newPin": self.new_pin,
            "implied": self.diff.implied().as_str(), "diff": serde_json::from_str::<Value>(&crate::report::diff::render_json(&self.diff)).unwrap_or(Value::Null),
            "applies": self.applies(), "findings": findings})
    }
}

/// The upgrades a consumer has: every reference resolving below the newest supported version
/// (or below `to`), each judged. An error says why a reference cannot be planned.
pub fn plan(
    engine: &Engine,
    cluster: &dyn ClusterView,
    doc: &Value,
    to: Option<&semver::Version>,
) -> Vec<Result<Plan, String>> {
    let kind = doc.get("kind").and_then(Value::as_str).unwrap_or_default();
    let namespace = doc.pointer("/metadata/namespace").and_then(Value::as_str);
    let mut out = Vec::new();
    for r in references(kind, doc) {
        let (pointer, construct_kind, name, pin) = (r.pointer, r.kind, r.logical, r.pin);
        let objects =
            match cluster.list(GROUP, &construct_kind, scope(&construct_kind, namespace).as_deref(), None) {
                Ok(o) => o,
                Err(e) => {
                    out.push(Err(format!("{pointer}: {e}")));
                    continue;
                }
            };
        let candidates = published(&objects, &name);
        let published: Vec<Published> = candidates.iter().map(|(p, _)| p.clone()).collect();
        let current = match Pin::parse(&pin)
            .map_err(|e| e.reason)
            .and_then(|p| resolve(&p, &name, &published).map_err(|e| e.to_string()))
        {
            Ok(c) => c.clone(),
            Err(why) => {
                out.push(Err(format!("{pointer}: {construct_kind} {name} pin \"{pin}\": {why}")));
                continue;
            }
        };
        let Some(from) = current.version.clone() else { continue };
        let target = match to {
            Some(t) => t.clone(),
            None => match SupportWindow::of(&published) {
                Some(w) => w.newest,
                None => continue,
            },
        };
        if from >= target {
            continue;
        }
        let object_at = |v: &semver::Version| {
            candidates.iter().find(|(p, _)| p.version.as_ref() == Some(v)).map(|(_, o)| (**o).clone())
        };
        let (Some(old), Some(new)) = (object_at(&from), object_at(&target)) else {
            out.push(Err(format!("{pointer}: {construct_kind} {name} is not published at {target}")));
            continue;
        };
        let diff = match crate::report::diff::compute(&old, &new, |_| {
            crate::rules::evolution::Stability::DeclaredBump
        }) {
            Ok(d) => d,
            Err(e) => {
                out.push(Err(format!("{pointer}: {e}")));
                continue;
            }
        };
        let new_pin = target.major.to_string();
        let mut moved = doc.clone();
        if let Some(r) = moved.pointer_mut(&pointer).and_then(Value::as_object_mut) {
            r.insert("version".into(), Value::String(new_pin.clone()));
        }
        let verdict = engine.evaluate(&Subject::from_document(moved), cluster);
        // Only what the move is about: findings at this reference or its values.
        let findings = verdict.findings.into_iter().filter(|f| f.rule.id != "CVN-411").collect();
        out.push(Ok(Plan {
            pointer,
            kind: construct_kind,
            name,
            pin,
            from,
            to: target,
            new_pin,
            diff,
            findings,
        }));
    }
    out
}

/// The text of a manifest with the `version:` of the reference at `pointer` set to `pin`, every
/// other byte kept; `None` when the reference writes no version to replace (a floating
/// reference gains one by hand).
pub fn write_pin(text: &str, doc_index: usize, pointer: &str, pin: &str) -> Option<String> {
    let docs = crate::source::parse_stream(text).0;
    let doc = docs.iter().find(|d| d.index == doc_index)?;
    let at = format!("{pointer}/version");
    let old = doc.value.pointer(&at)?.as_str()?;
    let pos = doc.positions.iter().find(|(p, _)| *p == at)?.1;
    let line_start: usize = text.split_inclusive('\n').take(pos.line - 1).map(str::len).sum();
    let line_end = text[line_start..].find('\n').map_or(text.len(), |i| line_start + i);
    let line = &text[line_start..line_end];
    // The value follows the key on its line; replace it, quoted the way it was.
    let key = line.find("version")?;
    let rest = &line[key..];
    let value_at = key + rest.find(old).filter(|i| *i > "version".len())?;
    let quoted = matches!(line.as_bytes().get(value_at.wrapping_sub(1)), Some(b'"' | b'\''));
    // An unquoted number would read back as a number, not a pin: quote what was bare.
    let written = if quoted { pin.to_string() } else { format!("\"{pin}\"") };
    let mut out = String::with_capacity(text.len() + 2);
    out.push_str(&text[..line_start + value_at]);
    out.push_str(&written);
    out.push_str(&text[line_start + value_at + old.len()..]);
    Some(out)
}
