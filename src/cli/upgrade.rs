//! `covenant status` and `covenant upgrade`: which consumers pin which published version, and
//! moving their pins to a newer one that they still validate against.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{bail, Context as _};

use super::{load_config, DiffOutput, RulesOutput};
use crate::cluster::OfflineCluster;
use crate::engine::Engine;
use crate::pointer::At;

/// `covenant status`.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// Objects (YAML/JSON files) standing in for the cluster: constructs, consumers, releases.
    #[arg(long, required_unless_present = "cluster", conflicts_with = "cluster")]
    pub context: Option<PathBuf>,
    /// A live cluster instead: the kubeconfig context named (the current one without a name).
    #[arg(long, value_name = "CONTEXT", num_args = 0..=1, default_missing_value = "")]
    pub cluster: Option<String>,
    /// Config file (the construct and consumer kinds); default: the embedded default.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Output format: a table, or the JSON the admin listener serves at /api/v0/status.
    #[arg(long, value_enum, default_value_t = RulesOutput::Text)]
    pub output: RulesOutput,
}

/// `covenant upgrade`.
#[derive(Debug, clap::Args)]
pub struct UpgradeArgs {
    /// Consumer manifests: files or directories.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The published constructs (and anything else the checks need) standing in for the
    /// cluster.
    #[arg(long, required_unless_present = "cluster", conflicts_with = "cluster")]
    pub context: Option<PathBuf>,
    /// A live cluster instead: the kubeconfig context named (the current one without a name).
    #[arg(long, value_name = "CONTEXT", num_args = 0..=1, default_missing_value = "")]
    pub cluster: Option<String>,
    /// The target version (default: the newest supported one of each construct).
    #[arg(long)]
    pub to: Option<String>,
    /// Move the `version:` pin in place for every consumer that would still validate, every
    /// other byte kept.
    #[arg(long)]
    pub write: bool,
    /// Config file; default: the embedded default.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Output: text, JSON, or one pull-request body per consumer.
    #[arg(long, value_enum, default_value_t = DiffOutput::Text)]
    pub output: DiffOutput,
    /// Plan the consumers that can be planned and exit 0 when others cannot (a pin that
    /// resolves to nothing, a target their construct does not publish); without it, any
    /// consumer that cannot be planned makes the run exit 2.
    #[arg(long)]
    pub skip_unplannable: bool,
}

/// The folder `--context` names, or the live cluster `--cluster` names.
fn context_or_cluster(
    context: Option<&PathBuf>,
    cluster: Option<&str>,
    config: &crate::config::Config,
) -> anyhow::Result<std::sync::Arc<dyn crate::cluster::ClusterView>> {
    match (context, cluster) {
        (_, Some(name)) => super::live_cluster(name, config, Vec::new()),
        (Some(dir), None) => Ok(std::sync::Arc::new(OfflineCluster::load_dir(dir)?)),
        (None, None) => anyhow::bail!("give --context DIR or --cluster [CONTEXT]"),
    }
}

pub(super) fn status(args: StatusArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(args.config.as_ref())?;
    let cluster = context_or_cluster(args.context.as_ref(), args.cluster.as_deref(), &config)?;
    let usage = crate::usage::usage(cluster.as_ref(), &config.construct_kinds, &config.consumer_kinds)?;
    match args.output {
        RulesOutput::Json => println!("{usage:#}"),
        RulesOutput::Text | RulesOutput::Md => {
            print!("{}", status_table(&usage));
            // An empty table is said to be empty, and why: the wrong directory, most often.
            if usage["constructs"].as_array().is_none_or(Vec::is_empty) {
                let place = match (&args.context, &args.cluster) {
                    (Some(dir), _) => dir.display().to_string(),
                    (None, _) => "the cluster".to_string(),
                };
                println!(
                    "note: {place} holds no construct (openchoreo.dev {}); nothing is published there to use",
                    config.construct_kinds.join(", ")
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The usage JSON as a table: one row per published version, its consumers counted, then the
/// references that resolve to nothing.
pub fn status_table(usage: &serde_json::Value) -> String {
    use std::fmt::Write;
    let s = |v: &serde_json::Value| v.as_str().unwrap_or("-").to_string();
    let count = |v: &serde_json::Value| v.as_array().map_or(0, Vec::len);
    let mut rows = vec![["KIND", "NAME", "VERSION", "OBJECT", "DEFAULT", "PINNED", "FLOATING", "FROZEN"]
        .map(String::from)
        .to_vec()];
    let mut unresolved = Vec::new();
    for c in usage["constructs"].as_array().into_iter().flatten() {
        let name = match c["namespace"].as_str() {
            Some(ns) => format!("{ns}/{}", s(&c["name"])),
            None => s(&c["name"]),
        };
        for v in c["versions"].as_array().into_iter().flatten() {
            let consumers = &v["consumers"];
            rows.push(vec![
                s(&c["kind"]),
                name.clone(),
                s(&v["version"]),
                s(&v["object"]),
                if v["default"] == true { "yes".into() } else { "-".into() },
                count(&consumers["pinned"]).to_string(),
                count(&consumers["floating"]).to_string(),
                count(&consumers["frozen"]).to_string(),
            ]);
        }
        for u in c["unresolved"].as_array().into_iter().flatten() {
            unresolved.push(format!(
                "{}: pin \"{}\" of {name} resolves to nothing: {}",
                s(&u["consumer"]),
                s(&u["pin"]),
                s(&u["reason"])
            ));
        }
    }
    let widths: Vec<usize> =
        (0..rows[0].len()).map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
    let mut out = String::new();
    for r in &rows {
        let line: Vec<String> = r.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        let _ = writeln!(out, "{}", line.join("  ").trim_end());
    }
    for u in unresolved {
        let _ = writeln!(out, "{u}");
    }
    let _ = writeln!(out, "upgrade gap: {} construct(s) declare no version", usage["upgradeGap"]);
    out
}

pub(super) fn upgrade(args: UpgradeArgs) -> anyhow::Result<ExitCode> {
    use std::fmt::Write;
    let config = load_config(args.config.as_ref())?;
    let engine = Engine::new(&config);
    let cluster = context_or_cluster(args.context.as_ref(), args.cluster.as_deref(), &config)?;
    let to = match &args.to {
        Some(v) => Some(
            semver::Version::parse(v)
                .with_context(|| format!("--to {v}: not a MAJOR.MINOR.PATCH version"))?,
        ),
        None => None,
    };
    let (mut text, mut markdown, mut json) = (String::new(), String::new(), Vec::new());
    let (mut wrote, mut planned, mut unplannable) = (0, 0, 0);
    // Every document first: a Component's ReleaseBindings may sit in another file, so a file
    // that cannot be read leaves every plan unsure, and nothing is planned.
    let mut files = Vec::new();
    let mut unreadable = Vec::new();
    for path in &args.paths {
        for (file, source) in super::read_all(path)? {
            let (docs, syntax) = crate::source::parse_stream(&source);
            if let Some(e) = syntax {
                unreadable.push(format!("{}:{}:{}: {}", file.display(), e.at.line, e.at.column, e.what()));
            }
            // A pin written twice: the plan would judge one and `--write` move one, while
            // kubectl applies the other.
            for doc in &docs {
                if let Err(e) = super::refuse_repeated_keys(&file.display().to_string(), doc) {
                    unreadable.push(e.to_string());
                }
            }
            // The objects: a document, or each of a list's (`kubectl get components -o
            // yaml`), with its document and where it is in it, so a pin is written in place.
            let mut objects = Vec::new();
            for doc in docs {
                let mut value = doc.value;
                match crate::subject::list_items(&mut value) {
                    None => objects.push((doc.index, String::new(), value)),
                    Some(Ok(items)) => {
                        objects.extend(items.into_iter().map(|(at, item)| (doc.index, at, item)));
                    }
                    Some(Err((at, why))) => {
                        unreadable.push(format!("{}: document {} {at}: {why}", file.display(), doc.index))
                    }
                }
            }
            files.push((file, source, objects));
        }
    }
    if !unreadable.is_empty() {
        bail!(
            "nothing planned: {} (a file that cannot be read may hold the ReleaseBindings a plan must judge)",
            unreadable.join("; ")
        );
    }
    if files.iter().all(|(_, _, objects)| objects.is_empty()) {
        let paths: Vec<String> = args.paths.iter().map(|p| p.display().to_string()).collect();
        bail!("nothing to plan: {} holds no document (or only lists of no items)", paths.join(", "));
    }
    let siblings: Vec<serde_json::Value> =
        files.iter().flat_map(|(_, _, objects)| objects.iter().map(|(_, _, o)| o.clone())).collect();
    let consumers = siblings
        .iter()
        .filter(|o| {
            crate::upgrade::openchoreo_kind(o).is_some_and(|k| config.consumer_kinds.iter().any(|c| c == k))
        })
        .count();
    for (file, mut source, objects) in files {
        let name = file.display().to_string();
        for (index, item, object) in objects {
            let kind = object.get("kind").and_then(serde_json::Value::as_str).unwrap_or_default().to_string();
            let ns = object.at("/metadata/namespace").and_then(serde_json::Value::as_str);
            let obj = object.at("/metadata/name").and_then(serde_json::Value::as_str).unwrap_or("?");
            let who = ns.map_or_else(|| format!("{kind} {obj}"), |n| format!("{kind} {n}/{obj}"));
            for plan in crate::upgrade::plan(&engine, cluster.as_ref(), &object, to.as_ref(), &siblings) {
                let plan = match plan {
                    Ok(p) => p,
                    Err(why) => {
                        unplannable += 1;
                        let _ = writeln!(text, "{name}: {who}: cannot plan: {why}");
                        json.push(serde_json::json!({"file": name, "consumer": who, "error": why}));
                        continue;
                    }
                };
                planned += 1;
                let pin =
                    if plan.pin.is_empty() { "(floating)".to_string() } else { format!("\"{}\"", plan.pin) };
                let _ = writeln!(
                        text,
                        "{name}: {who}: {} {} {pin} resolves to {}; target {}: move the pin to \"{}\" (implied {})",
                        plan.kind, plan.name, plan.from, plan.to, plan.new_pin, plan.diff.implied().as_str()
                    );
                let verdict = if plan.applies() { "would still apply" } else { "would NOT apply" };
                let _ = writeln!(text, "  {verdict}");
                let list = |text: &mut String, findings: &[crate::rules::Finding]| {
                    for f in findings {
                        let (action, rule) = (f.action.as_str(), f.rule.id);
                        let _ = writeln!(text, "    {action} {rule} {}: {}", f.pointer, f.message);
                    }
                };
                list(&mut text, &plan.findings);
                for (binding, findings) in &plan.bindings {
                    let verdict = if findings.iter().any(|f| f.action == crate::rules::Action::Deny) {
                        "its environment configs would NOT validate"
                    } else {
                        "its environment configs validate"
                    };
                    let _ = writeln!(text, "  {binding}: {verdict} against {}", plan.to);
                    list(&mut text, findings);
                }
                let _ = writeln!(
                    markdown,
                    "## Upgrade {who}: {} {} {} → {}\n\nPin {pin} → \"{}\". **{verdict}.**\n",
                    plan.kind, plan.name, plan.from, plan.to, plan.new_pin
                );
                for f in &plan.findings {
                    let _ = writeln!(markdown, "- `{}` `{}` {}", f.rule.id, f.pointer, f.message);
                }
                for (binding, findings) in &plan.bindings {
                    for f in findings {
                        let _ =
                            writeln!(markdown, "- {binding}: `{}` `{}` {}", f.rule.id, f.pointer, f.message);
                    }
                }
                let _ = writeln!(markdown, "\n{}", crate::report::diff::render_markdown(&plan.diff));
                let mut entry = plan.to_json();
                entry["file"] = name.clone().into();
                entry["consumer"] = who.clone().into();
                // Where in its file the object is: its document, and in a list its pointer.
                entry["document"] = index.into();
                if !item.is_empty() {
                    entry["item"] = item.clone().into();
                }
                if args.write && plan.applies() {
                    let at = format!("{item}{}", plan.pointer);
                    match crate::upgrade::write_pin(&source, index, &at, &plan.new_pin) {
                        Some(updated) => {
                            source = updated;
                            crate::source::write_text(&file, &source)
                                .with_context(|| format!("cannot write {name}"))?;
                            wrote += 1;
                            entry["written"] = true.into();
                            let _ = writeln!(text, "  wrote the pin \"{}\"", plan.new_pin);
                        }
                        None => {
                            let _ = writeln!(text, "  not written: the reference writes no version to move (add `version: \"{}\"`)", plan.new_pin);
                        }
                    }
                }
                json.push(entry);
            }
        }
    }
    match args.output {
        DiffOutput::Text => {
            print!("{text}");
            println!("{planned} upgrade(s) planned");
            if unplannable > 0 {
                println!("{unplannable} reference(s) cannot be planned");
            }
            // Nothing to plan because nothing consumes: said, so a wrong path is not read as
            // "every consumer is current".
            if consumers == 0 {
                println!(
                    "note: no consumer (openchoreo.dev {}) among the {} object(s) read",
                    config.consumer_kinds.join(", "),
                    siblings.len()
                );
            }
            if args.write {
                println!("{wrote} pin(s) written");
            }
        }
        DiffOutput::Json => println!("{:#}", serde_json::Value::Array(json)),
        DiffOutput::Markdown => print!("{markdown}"),
    }
    if unplannable > 0 && !args.skip_unplannable {
        eprintln!(
            "error: {unplannable} reference(s) cannot be planned (each is said above); --skip-unplannable plans the rest and exits 0"
        );
        return Ok(ExitCode::from(2));
    }
    Ok(ExitCode::SUCCESS)
}
