//! The renderings of a contract diff (`crate::contract`): a table, the JSON contract, and a
//! pull-request body in Markdown. No judgement here: the verdict is the contract's.

use serde_json::{json, Value};

use crate::contract::{ContractDiff, Row};
use crate::rules::evolution::readable;
use crate::versioning::Bump;

fn show(v: &Option<Value>) -> Value {
    v.clone().unwrap_or(Value::Null)
}

/// The JSON contract: `{"changes": [...], "implied", "declared", "verdict"}`.
pub fn render_json(d: &ContractDiff) -> String {
    let changes: Vec<Value> = d
        .rows
        .iter()
        .map(|r| {
            let mut c = json!({
                "pointer": r.judged.change.pointer,
                "change": r.judged.change.kind.as_str(),
                "bump": r.judged.bump.as_str(),
                "rule": r.judged.rule,
                "before": show(&r.judged.change.before),
                "after": show(&r.judged.change.after),
                "message": r.judged.message(),
                "refused": r.refused,
            });
            if let Some(v) = &r.version {
                c["version"] = json!(v);
            }
            if let Some(d) = r.judged.direction {
                c["direction"] = json!(d.as_str());
            }
            c
        })
        .collect();
    let notes: Vec<Value> = d
        .notes
        .iter()
        .map(|n| {
            json!({"rule": n.rule, "message": n.message, "bump": n.bump.map(|b| b.as_str()), "refused": n.refused})
        })
        .collect();
    json!({
        "subject": d.title,
        "changes": changes,
        "findings": notes,
        "implied": d.implied().as_str(),
        "declared": d.declared.map(|b| b.as_str()),
        "verdict": d.verdict(),
        "policy": d.policy.as_str(),
        "refused": d.refused(),
        "advisory": d.advisory,
        "omitted": d.omitted,
    })
    .to_string()
}

/// The table.
pub fn render_text(d: &ContractDiff) -> String {
    let mut out = format!("{}\n", d.title);
    // What the policy would refuse of a CRD not opted in to enforcement is advised.
    let (mark, word) =
        if d.advisory.is_some() { (" (advised)", "advised") } else { (" (refused)", "refused") };
    if d.rows.is_empty() {
        out.push_str(if d.notes.is_empty() { "no changes\n" } else { "no schema changes\n" });
    } else {
        let width =
            d.rows.iter().map(|r| r.version.as_deref().unwrap_or("-").len()).max().unwrap_or(1).max(7);
        out.push_str(&format!(
            "{:<width$}  {:<6} {:<8} {:<28} {}\n",
            "VERSION", "BUMP", "RULE", "CHANGE", "WHAT"
        ));
        for r in &d.rows {
            let mark = if r.refused { mark } else { "" };
            out.push_str(&format!(
                "{:<width$}  {:<6} {:<8} {:<28} {}{mark}\n",
                r.version.as_deref().unwrap_or("-"),
                r.judged.bump.as_str(),
                r.judged.rule.unwrap_or("-"),
                r.judged.change.kind.as_str(),
                r.judged.message(),
            ));
        }
    }
    for n in &d.notes {
        let mark = if n.refused { mark } else { "" };
        out.push_str(&format!("{}: {}{mark}\n", n.rule, n.message));
    }
    out.push_str(&format!(
        "implied: {}   declared: {}   verdict: {}   {word} by policy ({}): {}\n",
        d.implied(),
        d.declared.map(|b| b.as_str()).unwrap_or("none"),
        d.verdict(),
        d.policy.as_str(),
        d.refused()
    ));
    if let Some(note) = &d.advisory {
        out.push_str(&format!("{note}: the webhook and `check --base` warn of these, and refuse nothing\n"));
    }
    if d.omitted > 0 {
        out.push_str(&format!(
            "{} description, title or example change(s) left out (--ignore-descriptions)\n",
            d.omitted
        ));
    }
    out
}

/// The pull-request body: what a reviewer reads. Breaking changes first, then additions, then
/// the rows that change no contract — shown, not hidden.
pub fn render_markdown(d: &ContractDiff) -> String {
    let mut out = format!("## Contract diff: {}\n\n", d.title);
    out.push_str(&format!(
        "**Implied bump: {}** · declared: {} · verdict: `{}` · policy: `{}`\n\n",
        d.implied(),
        d.declared.map(|b| b.as_str()).unwrap_or("none"),
        d.verdict(),
        d.policy.as_str()
    ));
    if let Some(note) = &d.advisory {
        out.push_str(&format!("_{note}: warned of, refused nothing._\n\n"));
    }
    if !d.notes.is_empty() {
        out.push_str("### Versions and identity\n\n");
        for n in &d.notes {
            out.push_str(&format!("- **{}** {}\n", n.rule, n.message));
        }
        out.push('\n');
    }
    for (bump, heading) in [
        (Bump::Major, "Breaking (MAJOR): removed, narrowed or tightened"),
        (Bump::Minor, "Additions (MINOR): added or loosened"),
        (Bump::Patch, "No contract change (PATCH): descriptions, examples, messages"),
    ] {
        let rows: Vec<&Row> = d.rows.iter().filter(|r| r.judged.bump == bump).collect();
        if rows.is_empty() {
            continue;
        }
        out.push_str(&format!(
            "### {heading}\n\n| version | field | change | rule | |\n|---|---|---|---|---|\n"
        ));
        for r in rows {
            out.push_str(&format!(
                "| {} | `{}` | {} | {} | {} |\n",
                r.version.as_deref().unwrap_or("-"),
                readable(&r.judged.change.pointer),
                r.judged.message().replace('|', "\\|"),
                r.judged.rule.unwrap_or(""),
                if r.refused { "refused" } else { "" }
            ));
        }
        out.push('\n');
    }
    if d.rows.is_empty() && d.notes.is_empty() {
        out.push_str("No changes.\n");
    }
    out
}
