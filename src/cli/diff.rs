//! `covenant diff`: two versions of a document compared, each change classified and judged by
//! the family's stability policy.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context as _};
use clap::{Args, ValueEnum};

use super::{load_config, parse_documents, refuse_repeated_keys, warn_ambiguous};
use crate::cluster::OfflineCluster;
use crate::contract::Outline;
use crate::schema::openapi::Keep;

/// Output formats of `covenant diff`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum DiffOutput {
    /// A table.
    Text,
    /// The JSON contract.
    Json,
    /// A pull-request body; `md` means the same.
    #[value(alias = "md")]
    Markdown,
}

/// `covenant diff`
#[derive(Debug, Args)]
pub struct DiffArgs {
    /// The old version: a file (`-` for stdin); with --context, the construct's logical name.
    pub old: PathBuf,
    /// The new version: a file (`-` for stdin); with --context, the version to compare from.
    pub new: PathBuf,
    /// With --context: the version to compare to.
    pub to: Option<String>,
    /// Published constructs (YAML/JSON files): `covenant diff --context DIR NAME FROM TO`
    /// compares two published versions of one construct by logical name and version.
    #[arg(long, conflicts_with = "cluster")]
    pub context: Option<PathBuf>,
    /// As --context, from a live cluster: the kubeconfig context named (the current one
    /// without a name): `covenant diff --cluster NAME FROM TO`.
    #[arg(long, value_name = "CONTEXT", num_args = 0..=1, default_missing_value = "", requires = "to")]
    pub cluster: Option<String>,
    /// Config file (its stability policies decide what is refused); default: the embedded default.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DiffOutput::Text)]
    pub output: DiffOutput,
    /// Also exit 1 when any change is at least this bump, whatever the policy and the declared
    /// version say (a CI gate on MAJOR changes, say).
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOn>,
    /// Leave out of the table the changes to descriptions, titles and examples (PATCH: they
    /// change no contract); how many were left out is said.
    #[arg(long)]
    pub ignore_descriptions: bool,
}

/// The bump at and above which `diff --fail-on` fails.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum FailOn {
    /// A breaking change.
    #[value(name = "MAJOR", alias = "major")]
    Major,
    /// An addition or a breaking change.
    #[value(name = "MINOR", alias = "minor")]
    Minor,
    /// Any change.
    #[value(name = "PATCH", alias = "patch")]
    Patch,
}

impl FailOn {
    fn bump(self) -> crate::versioning::Bump {
        match self {
            FailOn::Major => crate::versioning::Bump::Major,
            FailOn::Minor => crate::versioning::Bump::Minor,
            FailOn::Patch => crate::versioning::Bump::Patch,
        }
    }
}

/// A document `diff` compares. A file of JSON text is kept as text, so a CRD's version schemas
/// are read straight from it into the model, as the webhook reads a review (and a schema two
/// versions or both sides share is read once); anything else is read as YAML, into a tree.
enum Compared {
    Text(String),
    Tree(serde_json::Value),
}

impl Compared {
    /// The one document of a file, a pipe (`<(git show main:crd.yaml)`) or stdin (`-`).
    fn read(path: &Path) -> anyhow::Result<Compared> {
        let name = path.display().to_string();
        if path.is_dir() {
            bail!(
                "{name} is a directory; covenant diff compares two documents, or two folders (both \
                 directories: each object paired by identity)"
            );
        }
        let mut text = if path == Path::new("-") {
            crate::source::read_bounded(std::io::stdin(), "stdin")
                .and_then(crate::source::text_of)
                .context("cannot read stdin")?
        } else {
            crate::source::read_text(path).with_context(|| format!("cannot read {name}"))?
        };
        if text.starts_with('\u{feff}') {
            text.drain(..'\u{feff}'.len_utf8());
        }
        if text.trim_start().starts_with('{') {
            // A repeated key is refused, read as YAML or (this way) as JSON. Text that is not
            // JSON (a YAML flow mapping) is read as YAML below.
            match crate::source::refuse_repeated_keys(&text) {
                // A list (`kubectl get crds -o json`) is read as a tree, for its item.
                Ok(()) if is_list(&text) => {
                    let list = serde_json::from_str(&text).with_context(|| format!("cannot read {name}"))?;
                    return Ok(Compared::Tree(only_item(&name, list)?));
                }
                Ok(()) => return Ok(Compared::Text(text)),
                Err(e) if e.classify() == serde_json::error::Category::Data => bail!("{name}: {e}"),
                Err(_) => {}
            }
        }
        match <[_; 1]>::try_from(parse_documents(&name, &text)?) {
            Ok([doc]) => {
                refuse_repeated_keys(&name, &doc)?;
                warn_ambiguous(doc.ambiguous.iter().map(|a| (name.as_str(), a)), "covenant diff");
                Ok(Compared::Tree(only_item(&name, doc.value)?))
            }
            Err(docs) if docs.is_empty() => {
                bail!("{name}: holds no document (it is empty, or only comments and `---`); expected one")
            }
            Err(docs) => bail!("{name}: expected one document, found {}", docs.len()),
        }
    }

    /// The document's outline, its version schemas read in the same pass (as `diff` reads
    /// them: whole), beside the document before it when there is one.
    fn outline<'a>(&'a self, path: &Path, before: Option<&Outline<'a>>) -> anyhow::Result<Outline<'a>> {
        match self {
            Compared::Text(text) => Outline::of_text_reading(text, Keep::ALL, before)
                .map_err(|e| anyhow::anyhow!("{}: not a JSON document: {e}", path.display())),
            Compared::Tree(doc) => Ok(Outline::of_value(doc)),
        }
    }
}

/// Whether a JSON text (one already read as JSON) is a list document: its kind ends in
/// `List` and it has `items`. Only its top-level members are looked at, and a document that
/// names another kind first (a CRD, `apiVersion` and `kind` leading) is done with there.
fn is_list(text: &str) -> bool {
    let mut r = crate::source::json::Reader::of_text(text);
    let (mut first, mut kind, mut items) = (true, false, false);
    if !r.enter_map() {
        return false;
    }
    while let Ok(Some(key)) = r.key(&mut first) {
        match &*key.0 {
            "kind" => match r.string() {
                Ok(k) if k.0.ends_with("List") => kind = true,
                _ => return false,
            },
            member => {
                items |= member == "items";
                if r.skip().is_err() {
                    return false;
                }
            }
        }
        if kind && items {
            return true;
        }
    }
    false
}

/// A document, or the one item of a list document (`kubectl get crd -l … -o yaml`); a list
/// of any other number of items is refused, naming how to compare lists.
fn only_item(name: &str, mut doc: serde_json::Value) -> anyhow::Result<serde_json::Value> {
    let kind = doc.get("kind").and_then(serde_json::Value::as_str).unwrap_or_default().to_string();
    match crate::subject::list_items(&mut doc) {
        None => Ok(doc),
        Some(Err((at, e))) => bail!("{name}: {at}: {e}"),
        Some(Ok(items)) => match <[_; 1]>::try_from(items) {
            Ok([(_, item)]) => Ok(item),
            Err(items) => bail!(
                "{name}: a {kind} of {} items; covenant diff compares two documents (to compare \
                 lists item by item, run covenant check NEW --base OLD)",
                items.len()
            ),
        },
    }
}

pub(super) fn diff(args: DiffArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(args.config.as_ref())?;
    if args.context.is_none() && args.cluster.is_none() && args.old.is_dir() && args.new.is_dir() {
        return diff_folders(&args, &config);
    }
    let published: Option<std::sync::Arc<dyn crate::cluster::ClusterView>> =
        match (&args.context, &args.cluster) {
            (Some(dir), _) => Some(std::sync::Arc::new(OfflineCluster::load_dir(dir)?)),
            (None, Some(context)) => Some(super::live_cluster(context, &config, Vec::new())?),
            (None, None) => None,
        };
    let policy = crate::contract::Policy::of(&config);
    let mut d = match &published {
        None => {
            if args.to.is_some() {
                bail!("covenant diff takes OLD NEW files, or --context DIR NAME FROM TO");
            }
            if args.old == Path::new("-") && args.new == Path::new("-") {
                bail!("covenant diff reads one of OLD and NEW from stdin (`-`), not both");
            }
            let (old, new) = (Compared::read(&args.old)?, Compared::read(&args.new)?);
            let old_outline = old.outline(&args.old, None)?;
            let new_outline = new.outline(&args.new, Some(&old_outline))?;
            crate::contract::compute(&old_outline, &new_outline, &policy)
                .map_err(|e| anyhow::anyhow!("{} → {}: {e}", args.old.display(), args.new.display()))?
        }
        Some(cluster) => {
            let Some(to) = &args.to else { bail!("covenant diff --context DIR takes NAME FROM TO") };
            let (name, from) = (args.old.to_string_lossy(), args.new.to_string_lossy());
            crate::contract::between_published(cluster.as_ref(), &policy, None, None, &name, &from, to)?
        }
    };
    let fails = judged(&mut d, &args, &policy);
    match args.output {
        DiffOutput::Text => print!("{}", crate::report::diff::render_text(&d)),
        DiffOutput::Json => println!("{}", crate::report::diff::render_json(&d)),
        DiffOutput::Markdown => print!("{}", crate::report::diff::render_markdown(&d)),
    }
    Ok(if fails { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// Whether a diff fails the run — its verdict, or `--fail-on` — with the description rows
/// left out when asked (they are PATCH: leaving them out changes no verdict).
fn judged(d: &mut crate::contract::ContractDiff, args: &DiffArgs, policy: &crate::contract::Policy) -> bool {
    if args.ignore_descriptions {
        use crate::schema::diff::ChangeKind::{DescriptionChanged, ExampleChanged, TitleChanged};
        let before = d.rows.len();
        d.rows
            .retain(|r| !matches!(r.judged.change.kind, DescriptionChanged | TitleChanged | ExampleChanged));
        d.omitted = before - d.rows.len();
    }
    // The largest bump of any change shown (no change: none, so `--fail-on PATCH` passes it).
    let largest = d.rows.iter().map(|r| r.judged.bump).chain(d.notes.iter().filter_map(|n| n.bump)).max();
    let gated = args.fail_on.filter(|f| largest.is_some_and(|b| b >= f.bump()));
    if let (Some(f), Some(b)) = (gated, largest) {
        eprintln!(
            "covenant diff: {}: a {} change, at or above --fail-on {}",
            d.title,
            b.as_str(),
            f.bump().as_str()
        );
    }
    d.fails(policy) || gated.is_some()
}

/// `covenant diff OLD_DIR NEW_DIR`: every document of the new folder paired with the one of
/// the old folder that has its identity (group, kind, namespace, name) and diffed; what only
/// one side holds is said (added, removed), never skipped in silence.
fn diff_folders(args: &DiffArgs, config: &crate::config::Config) -> anyhow::Result<ExitCode> {
    use std::collections::BTreeMap;
    let identity = |v: &serde_json::Value| {
        let s = |p: &str| {
            crate::pointer::At::at(v, p).and_then(serde_json::Value::as_str).unwrap_or("").to_string()
        };
        let group = s("/apiVersion").rsplit_once('/').map(|(g, _)| g.to_string()).unwrap_or_default();
        let name = format!(
            "{} {}",
            s("/kind"),
            if s("/metadata/namespace").is_empty() {
                s("/metadata/name")
            } else {
                format!("{}/{}", s("/metadata/namespace"), s("/metadata/name"))
            }
        );
        (group, name)
    };
    let side = |dir: &Path| -> anyhow::Result<BTreeMap<(String, String), (String, serde_json::Value)>> {
        let mut out = BTreeMap::new();
        for (file, doc) in super::read_documents(dir)? {
            let key = identity(&doc);
            if let Some((first, _)) = out.get(&key) {
                bail!("{file}: {} is also in {first}; a folder holds each object once", key.1);
            }
            out.insert(key, (file, doc));
        }
        Ok(out)
    };
    let (old, new) = (side(&args.old)?, side(&args.new)?);
    let policy = crate::contract::Policy::of(config);
    let (mut fails, mut json, mut text) = (false, Vec::new(), String::new());
    for (key, (file, doc)) in &new {
        let Some((old_file, old_doc)) = old.get(key) else {
            text.push_str(&format!("{}: added ({file})\n\n", key.1));
            json.push(serde_json::json!({"subject": key.1, "added": file}));
            continue;
        };
        let computed =
            crate::contract::compute(&Outline::of_value(old_doc), &Outline::of_value(doc), &policy);
        match computed {
            Ok(mut d) => {
                fails |= judged(&mut d, args, &policy);
                match args.output {
                    DiffOutput::Markdown => text.push_str(&crate::report::diff::render_markdown(&d)),
                    _ => text.push_str(&crate::report::diff::render_text(&d)),
                }
                text.push('\n');
                json.push(serde_json::from_str(&crate::report::diff::render_json(&d))?);
            }
            // A pair diff does not compare (two ConfigMaps): said, never a failure.
            Err(e) => {
                text.push_str(&format!("{}: not compared ({old_file} → {file}): {e}\n\n", key.1));
                json.push(serde_json::json!({"subject": key.1, "notCompared": e.to_string()}));
            }
        }
    }
    for (key, (file, _)) in old.iter().filter(|(k, _)| !new.contains_key(*k)) {
        text.push_str(&format!("{}: removed (was in {file})\n\n", key.1));
        json.push(serde_json::json!({"subject": key.1, "removed": file}));
    }
    if new.is_empty() && old.is_empty() {
        bail!("{} and {}: neither folder holds a document", args.old.display(), args.new.display());
    }
    match args.output {
        DiffOutput::Json => println!("{}", serde_json::Value::Array(json)),
        _ => print!("{}", text.trim_end_matches('\n').to_string() + "\n"),
    }
    Ok(if fails { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
