//! `covenant check`: documents read one at a time and judged, with the launcher's build
//! inputs, a base to compare with (a directory or a git ref), baselines and `--fix`.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{bail, Context as _};
use clap::{Args, ValueEnum};

use super::{load_cluster, load_config, read_documents, read_files, refuse_repeated_keys};
use crate::check::Input;
use crate::engine::Engine;
use crate::engine::Inputs;

/// Output formats of `covenant check`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum CheckOutput {
    /// file:line:column lines.
    Text,
    /// The JSON contract.
    Json,
    /// SARIF 2.1.0, for code scanning.
    Sarif,
    /// JUnit XML, one test case per document.
    Junit,
    /// GitHub Actions workflow commands (pull-request annotations).
    Github,
}

/// `covenant check`
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Files or directories (recursively *.yaml, *.yml, *.json, skipping .git); `-` reads
    /// stdin.
    #[arg(required_unless_present_any = ["registries", "dialects"])]
    pub paths: Vec<PathBuf>,
    /// Leave out files and directories whose path below a given directory, or whose name,
    /// matches this glob (`charts/**`, `*.tmpl.yaml`); repeatable.
    #[arg(long, value_name = "GLOB")]
    pub exclude: Vec<String>,
    /// Skip documents that name none of apiVersion, kind and schema (a CI workflow, a Helm
    /// values file, a package.json: a version alone does not count) instead of reporting
    /// each as CVN-109; they are counted in the summary and listed in JSON output. A
    /// document naming only some of them is still judged.
    #[arg(long)]
    pub skip_unidentified: bool,
    /// Config file; default: the embedded default.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Objects (YAML/JSON files) standing in for the cluster's state, beside the objects
    /// of the checked files themselves (published constructs, their consumers and releases
    /// among the checked paths are context without it).
    #[arg(long)]
    pub context: Option<PathBuf>,
    /// Fail (exit 1) when a judgement needed cluster state that neither the checked files
    /// nor `--context` hold (each is said in a note either way).
    #[arg(long)]
    pub require_context: bool,
    /// The launcher release line Applications are judged for: v0.2 (the later line, the
    /// default) or v0.1.0-alpha.22; overrides the config's `launcher.version`.
    #[arg(long, value_name = "LINE", value_parser = launcher_line)]
    pub launcher_version: Option<crate::config::LauncherLine>,
    /// A live cluster as the context: the kubeconfig context named (the current one without a
    /// name), read as the server reads it (constructs, consumers and releases listed and
    /// watched; live objects of a tightened CRD listed in pages).
    #[arg(long, value_name = "CONTEXT", num_args = 0..=1, default_missing_value = "", conflicts_with = "context")]
    pub cluster: Option<String>,
    /// The previous versions: a directory or file, or a git ref whose files under the same
    /// paths are read (`origin/main`; with stdin, its whole tree). Each document is judged as
    /// an update of the base document with the same group, kind, namespace and name, so the
    /// evolution rules run; a base document the checked files lack was deleted.
    #[arg(long, value_name = "DIR|FILE|GIT-REF")]
    pub base: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = CheckOutput::Text)]
    pub output: CheckOutput,
    /// A launcher ClusterProfile (cluster.yaml): its capability renderings are merged into
    /// trait properties before nested required keys are checked.
    #[arg(long, value_name = "FILE")]
    pub profile: Option<PathBuf>,
    /// A launcher CapabilityDefinition file or directory (repeatable): declares custom trait
    /// types, whose handler-owned properties are then left unchecked.
    #[arg(long = "capability-def", value_name = "PATH")]
    pub capability_defs: Vec<PathBuf>,
    /// A launcher Package (kurel.yaml): its parameter defaults fill `${...}` placeholders.
    #[arg(long, value_name = "FILE")]
    pub package: Option<PathBuf>,
    /// Parameter values (a mapping of names to values) over the package's defaults
    /// (repeatable; later files win). Placeholders are substituted before type checks.
    #[arg(long, value_name = "FILE")]
    pub values: Vec<PathBuf>,
    /// Ignore the findings a baseline file records (matched by rule id and fingerprint).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Write the findings of this run as a baseline file (then exit 0).
    #[arg(long, value_name = "FILE")]
    pub write_baseline: Option<PathBuf>,
    /// Write the version stamps and labels the mutating webhook would write (CVN-501,
    /// CVN-502) into the YAML files, leaving every other byte as it was; then check the
    /// fixed files.
    #[arg(long)]
    pub fix: bool,
    /// A `kind: Registry` file, or a directory of them (repeatable): its types join the
    /// namespace Applications are checked against, and the file itself is checked against the
    /// type-name covenant.
    #[arg(long = "registry", value_name = "PATH")]
    pub registries: Vec<PathBuf>,
    /// A `kind: Dialect` declaration, or a directory of them (repeatable): its reserved,
    /// shadowed and custom types join the namespace, and the declaration itself is checked.
    #[arg(long = "dialect", value_name = "PATH")]
    pub dialects: Vec<PathBuf>,
}

/// The launcher build inputs `check` was given.
fn launcher_inputs(args: &CheckArgs) -> anyhow::Result<Inputs> {
    let mut inputs = Inputs::default();
    if let Some(path) = &args.profile {
        for (name, doc) in read_documents(path)? {
            inputs.add_profile(&name, &doc)?;
        }
    }
    for path in &args.capability_defs {
        for (name, doc) in read_documents(path)? {
            inputs.add_capability_definition(&name, &doc)?;
        }
    }
    if let Some(path) = &args.package {
        for (name, doc) in read_documents(path)? {
            inputs.add_package(&name, &doc)?;
        }
    }
    // Values are data, never checked as documents: a repeated key is refused as they are read.
    for path in &args.values {
        for (name, docs) in read_files(path)? {
            for doc in docs {
                refuse_repeated_keys(&name, &doc)?;
                inputs.add_values(&name, &doc.value)?;
            }
        }
    }
    Ok(inputs)
}

/// `--launcher-version`: a line by name, or what the names are.
fn launcher_line(text: &str) -> Result<crate::config::LauncherLine, String> {
    crate::config::LauncherLine::parse(text)
        .ok_or_else(|| format!("expected one of {}", crate::config::LauncherLine::names().join(", ")))
}

pub(super) fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let mut config = load_config(args.config.as_ref())?;
    if let Some(line) = args.launcher_version {
        config.launcher_line = line;
    }
    // Registries and dialects join the namespace, and are checked as documents themselves.
    let mut declaration_files = Vec::new();
    for (path, kind) in
        args.registries.iter().map(|p| (p, "Registry")).chain(args.dialects.iter().map(|p| (p, "Dialect")))
    {
        // Each file read and parsed once here (it is checked as a document later, with the
        // rest): a directory's files each join.
        for (name, docs) in read_files(path)? {
            for doc in &docs {
                let found = doc.value.get("kind").and_then(serde_json::Value::as_str).unwrap_or("(none)");
                if found != kind {
                    bail!(
                        "{name}: --{} expects kind: {kind} documents, found kind {found}",
                        kind.to_ascii_lowercase()
                    );
                }
            }
            config.registry.add_documents(&name, docs)?;
        }
        declaration_files.push(path.clone());
    }
    let inputs = launcher_inputs(&args)?;
    // The build inputs are launcher documents too, held to the same strictness: a misspelled
    // key in a cluster profile is a finding at its line, never a binding silently dropped.
    declaration_files.extend(args.profile.iter().chain(&args.capability_defs).chain(&args.package).cloned());
    let engine = Engine::with_inputs(&config, inputs.clone());
    let cluster = match &args.cluster {
        Some(context) => super::live_cluster(context, &config, definitions(&config))?,
        None => load_cluster(args.context.as_ref())?,
    };
    // Files are read when their turn comes and dropped after, so a run holds one file's text.
    let mut queued: Vec<Input> = Vec::new();
    let mut walk_notes = Vec::new();
    let exclude = {
        let mut set = globset::GlobSetBuilder::new();
        for pattern in &args.exclude {
            set.add(globset::Glob::new(pattern).with_context(|| format!("--exclude {pattern}: not a glob"))?);
        }
        set.build().context("--exclude")?
    };
    for path in args.paths.iter().chain(&declaration_files) {
        if path.as_os_str() == "-" {
            let bytes =
                crate::source::read_bounded(std::io::stdin(), "stdin").context("cannot read stdin")?;
            let text = crate::source::text_of(bytes).context("cannot read stdin")?;
            queued.push(Input::Read(crate::check::Source { name: "-".into(), text }));
            continue;
        }
        if crate::source::is_stream(path) {
            // A pipe is read once, whole, as stdin is: it cannot be read again.
            let name = path.display().to_string();
            let text = crate::source::read_text(path).with_context(|| format!("cannot read {name}"))?;
            queued.push(Input::Read(crate::check::Source { name, text }));
            continue;
        }
        let walked =
            crate::source::walk(path, &exclude).with_context(|| format!("cannot read {}", path.display()))?;
        if walked.files.is_empty() {
            // What the walk left out may be why (`DEPLOY.YAML`).
            let why = walked.left_out("\n  note: ");
            bail!("{}: {}{why}", path.display(), crate::source::NO_DOCUMENT_FILES);
        }
        walk_notes.extend(walked.notes);
        queued.extend(walked.files.into_iter().map(Input::File));
    }
    // A file named twice (`check la la`, `check platform/ --dialect platform/dialects/`) is
    // read and counted once, in the place it was first named.
    let mut named = std::collections::HashSet::new();
    queued.retain(|input| match input {
        Input::File(file) => named.insert(std::fs::canonicalize(file).unwrap_or_else(|_| file.clone())),
        Input::Read(_) => true,
    });
    // The registries among the checked files declare one decoder per format between them,
    // as `--registry` given twice must: the later never silently wins.
    let mut registries = Vec::new();
    for input in &queued {
        let (name, text) = match input {
            Input::Read(source) if source.text.contains("Registry") => {
                (source.name.clone(), std::borrow::Cow::Borrowed(source.text.as_str()))
            }
            // Streamed for the word first: a file without it is not held whole.
            Input::File(file)
                if crate::source::oversized(file).is_none() && crate::check::mentions(file, b"Registry") =>
            {
                match std::fs::read(file) {
                    Ok(bytes) => {
                        (file.display().to_string(), String::from_utf8_lossy(&bytes).into_owned().into())
                    }
                    Err(_) => continue,
                }
            }
            Input::Read(_) | Input::File(_) => continue,
        };
        let docs = crate::source::parse_stream(&text).0;
        registries.extend(docs.into_iter().map(|d| (name.clone(), d.value)));
    }
    if let Some(why) = config.registry.second_decoder_among(registries.iter().map(|(n, v)| (n.as_str(), v))) {
        bail!("the checked registries disagree: {why}");
    }
    drop(registries);
    let cluster = tree_context(&config, &queued, cluster);
    if args.fix {
        let mut fixing = config.clone();
        fixing.rules = fixing.rules.with_mutation();
        let fixer = Engine::with_inputs(&fixing, inputs.clone());
        // Text read from stdin or a pipe that the fix would change is refused before any file
        // is written: there is nowhere to write its fix, and "0 file(s)" would pass in silence.
        for source in queued.iter().filter_map(|i| match i {
            Input::Read(source) => Some(source),
            Input::File(_) => None,
        }) {
            if crate::check::fix::fix_text(&source.name, &source.text, &fixer, cluster.as_ref())?.is_some() {
                let what = if source.name == "-" {
                    "stdin (-)".to_string()
                } else {
                    format!("{} (a pipe)", source.name)
                };
                bail!(
                    "--fix edits YAML files in place, and {what} holds documents it would change but \
                     cannot be written into: save it to a file and fix that, or check it without --fix"
                );
            }
        }
        let mut fixed = 0;
        for file in queued.iter().filter_map(|i| match i {
            Input::File(f) => Some(f),
            Input::Read(_) => None,
        }) {
            // A file that is not text was reported; there is nothing in it to write into.
            let Ok(text) = crate::source::read_text(file) else { continue };
            let name = file.display().to_string();
            if let Some(text) = crate::check::fix::fix_text(&name, &text, &fixer, cluster.as_ref())? {
                crate::source::write_text(file, &text).with_context(|| format!("cannot write {name}"))?;
                fixed += 1;
            }
        }
        eprintln!("covenant: --fix wrote stamps and labels into {fixed} file(s)");
    }
    // An overlay's patches, a generator's files: read by a kustomization among the checked
    // files, applied by none as written. Said, not judged as manifests.
    let read_by_kustomize = crate::check::kustomize::take_read_by_kustomize(&mut queued);
    let base = match &args.base {
        Some(base) => {
            let paths: Vec<PathBuf> = args.paths.iter().chain(&declaration_files).cloned().collect();
            // The base is read as the checked files are: what `--exclude` leaves out, and what
            // kustomize reads as other than a manifest, is no previous version of anything.
            let kustomized: std::collections::HashSet<PathBuf> =
                read_by_kustomize.iter().filter_map(|k| std::fs::canonicalize(&k.file).ok()).collect();
            let leave_out = |root: &Path, file: &Path| {
                crate::source::excluded_below(root, file, &exclude)
                    || std::fs::canonicalize(file).is_ok_and(|c| kustomized.contains(&c))
            };
            Some(read_base(base, &paths, &leave_out)?)
        }
        None => None,
    };
    let named = queued.len() + read_by_kustomize.len();
    let mut report =
        crate::check::check_each(&engine, cluster.as_ref(), queued, base.as_ref(), args.skip_unidentified);
    report.kustomize = read_by_kustomize;
    // Inputs were named and none held a document: a gate that checked nothing does not pass
    // (as a directory without documents does not). The build inputs are still checked and
    // the report printed, so what they hold is said in the same run.
    // Files kustomize reads are not manifests: a run of only those checked nothing either.
    let nothing = (named > 0 && report.documents == 0 && report.skipped.is_empty()).then(|| {
        let kustomized = report.kustomize.iter().map(|k| {
            format!(
                "{}: {} of the kustomization in {}, not a manifest; check what `kustomize build {}` writes",
                k.file, k.role, k.kustomization, k.kustomization
            )
        });
        report.empty_notes().chain(kustomized).collect::<Vec<_>>().join("; ")
    });
    report.notes.extend(walk_notes);
    if let Some(path) = &args.profile {
        let traits: Vec<String> = config
            .registry
            .declarations
            .iter()
            .filter(|t| t.category == crate::registry::TypeCategory::Trait)
            .map(|t| t.name.clone())
            .collect();
        for (file, text) in super::read_all(path)? {
            crate::check::check_profile(
                &mut report,
                &engine,
                &file.display().to_string(),
                &text,
                &inputs,
                &traits,
            );
        }
    }
    for path in &args.values {
        for (file, text) in super::read_all(path)? {
            crate::check::check_values(&mut report, &engine, &file.display().to_string(), &text, &inputs);
        }
    }
    if let (Some(empty), Some(_)) = (&nothing, &args.write_baseline) {
        bail!("nothing to check, so no baseline written: {empty}");
    }
    if let Some(path) = &args.write_baseline {
        let baseline = crate::report::render_baseline(&report, &path.display().to_string());
        std::fs::write(path, format!("{baseline:#}\n"))
            .with_context(|| format!("cannot write {}", path.display()))?;
        eprintln!("covenant: wrote a baseline of {} finding(s) to {}", report.entries.len(), path.display());
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(path) = &args.baseline {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
        let dropped = crate::report::apply_baseline(&mut report, &path.display().to_string(), &text)?;
        eprintln!("covenant: {dropped} finding(s) recorded in the baseline were left out");
    }
    match args.output {
        CheckOutput::Text => print!("{}", crate::report::render_text(&report)),
        CheckOutput::Json => write_json(&crate::report::render_json(&report), false)?,
        CheckOutput::Sarif => write_json(&crate::report::render_sarif(&report), true)?,
        CheckOutput::Junit => print!("{}", crate::report::render_junit(&report)),
        CheckOutput::Github => print!("{}", crate::report::render_github(&report)),
    }
    if let Some(empty) = nothing {
        bail!("nothing to check: {empty}");
    }
    if args.require_context && report.unchecked > 0 {
        eprintln!(
            "error: {} judgement(s) needed cluster state that neither the checked files nor --context hold (each note above names it); --require-context makes that a failure",
            report.unchecked
        );
        return Ok(ExitCode::from(1));
    }
    Ok(if report.denied() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The definitions custom resources are validated against, when `check` validates them.
fn definitions(config: &crate::config::Config) -> Vec<(String, String)> {
    if config.custom_resources.check {
        config.definition_kinds()
    } else {
        Vec::new()
    }
}

/// The checked files as context: the objects of the kinds the cluster view follows
/// (constructs, consumers, releases) and the CRDs and XRDs among them, over `--context` (or no cluster state).
/// A file is read for them only when it names the kinds' API group.
fn tree_context(
    config: &crate::config::Config,
    queued: &[Input],
    under: std::sync::Arc<dyn crate::cluster::ClusterView>,
) -> std::sync::Arc<dyn crate::cluster::ClusterView> {
    let followed: std::collections::BTreeSet<(String, String)> =
        config.cluster_kinds().into_iter().chain(definitions(config)).collect();
    let groups: std::collections::BTreeSet<&str> = followed.iter().map(|(g, _)| g.as_str()).collect();
    let keep = |g: &str, k: &str| followed.contains(&(g.to_string(), k.to_string()));
    let mut objects = Vec::new();
    for input in queued {
        match input {
            Input::Read(source) => {
                if groups.iter().any(|g| source.text.contains(g)) {
                    objects.extend(crate::cluster::TreeCluster::objects_in(&source.text, keep));
                }
            }
            Input::File(file) => {
                if crate::source::oversized(file).is_some()
                    || !groups.iter().any(|g| crate::check::mentions(file, g.as_bytes()))
                {
                    continue;
                }
                if let Ok(text) = crate::source::read_text(file) {
                    objects.extend(crate::cluster::TreeCluster::objects_in(&text, keep));
                }
            }
        }
    }
    if objects.is_empty() {
        return under;
    }
    std::sync::Arc::new(crate::cluster::TreeCluster::over(objects, under))
}

/// The previous versions for `check --base`: a directory's documents, or every document file
/// the git ref holds under the checked paths. Either way the base is complete: a document it
/// holds that the checked set does not was deleted, and is judged as a DELETE.
/// `leave_out(root, file)` says which files below a checked path (or, for a directory base,
/// below the base) are not read.
fn read_base(
    base: &str,
    paths: &[PathBuf],
    leave_out: &dyn Fn(&Path, &Path) -> bool,
) -> anyhow::Result<crate::check::Base> {
    let path = Path::new(base);
    if path.exists() {
        // An empty directory is an error, not a base that holds nothing: against it every
        // document would be judged new, and no change judged at all.
        let docs: Vec<crate::check::Source> = super::read_all(path)
            .context("--base")?
            .into_iter()
            .filter(|(file, _)| !leave_out(path, file))
            .map(|(file, text)| crate::check::Source { name: file.display().to_string(), text })
            .collect();
        return Ok(base_of(&docs)?.complete());
    }
    let git = |args: &[&str]| std::process::Command::new("git").args(args).output();
    let verify = git(&["rev-parse", "--verify", "--quiet", &format!("{base}^{{commit}}")])
        .context("--base: cannot run git")?;
    if !verify.status.success() {
        // CI checks out one commit by default: the base branch is not there to read.
        let shallow = git(&["rev-parse", "--is-shallow-repository"])
            .is_ok_and(|out| out.status.success() && out.stdout.starts_with(b"true"));
        let inside = git(&["rev-parse", "--is-inside-work-tree"]).is_ok_and(|out| out.status.success());
        let why = if !inside {
            " (no git repository here: run covenant in the checkout)".to_string()
        } else if shallow {
            " (this clone is shallow, so it holds little history: fetch the base first, \
             `git fetch origin <branch>`, or check out with full history, as actions/checkout's \
             `fetch-depth: 0` does; docs/ci.md)"
                .to_string()
        } else {
            " (`git branch -a` lists the refs here; a remote branch needs `git fetch` first)".to_string()
        };
        bail!("--base {base}: not a directory, and not a git ref of the repository here{why}");
    }
    // What git printed, or an error naming what it could not do, in its own words.
    let printed = |args: &[&str], what: &str| -> anyhow::Result<Vec<u8>> {
        let out = git(args).context("--base: cannot run git")?;
        if !out.status.success() {
            bail!("--base {base}: git cannot {what}: {}", String::from_utf8_lossy(&out.stderr).trim());
        }
        Ok(out.stdout)
    };
    let stdout = |args: &[&str], what: &str| -> anyhow::Result<String> {
        Ok(String::from_utf8_lossy(&printed(args, what)?).into_owned())
    };
    // A file's text as a checked file's is read (UTF-8, or UTF-16 with its mark), never
    // mended: a base read with its bytes replaced would be compared as it never was.
    let show = |spec: String, name: &str| -> anyhow::Result<String> {
        crate::source::text_of(printed(&["show", &spec], &format!("show {name}"))?)
            .with_context(|| format!("--base {base}: cannot read {name}"))
    };
    let mut docs = Vec::new();
    if paths.iter().any(|p| p.as_os_str() == "-") {
        // What stdin carries (`kustomize build | covenant check - --base origin/main`) lives
        // nowhere in particular: its objects are paired with the ref's documents wherever
        // they are in the tree. Nothing is judged deleted: the stream need not be all of it.
        let names = stdout(&["ls-tree", "-r", "-z", "--full-tree", "--name-only", base], "list its tree")?;
        let read = |n: &&str| {
            crate::source::is_document_file(Path::new(n)) && !leave_out(Path::new(""), Path::new(n))
        };
        for name in names.split('\0').filter(read) {
            let text = show(format!("{base}:{name}"), name)?;
            docs.push(crate::check::Source { name: format!("{base}:{name}"), text });
        }
        return base_of(&docs);
    }
    for path in paths.iter().filter(|p| p.as_os_str() != "-") {
        let shown = path.to_string_lossy();
        // Paths relative to here, as the checked paths are; `-z` keeps odd names whole.
        let names =
            stdout(&["ls-tree", "-r", "-z", "--name-only", base, "--", &shown], &format!("list {shown}"))?;
        let read = |n: &&str| crate::source::is_document_file(Path::new(n)) && !leave_out(path, Path::new(n));
        for name in names.split('\0').filter(read) {
            let text = show(format!("{base}:./{name}"), name)?;
            docs.push(crate::check::Source { name: format!("{base}:{name}"), text });
        }
    }
    Ok(base_of(&docs)?.complete())
}

/// The base read from its documents; one that is not YAML stops the check, named (read in
/// part, its later documents would be judged as new without a word).
fn base_of(docs: &[crate::check::Source]) -> anyhow::Result<crate::check::Base> {
    let base = crate::check::Base::from_sources(docs).map_err(|e| {
        anyhow::anyhow!(
            "--base: cannot read the previous version of {e} (a file that is not a manifest, such as \
             a chart's template, is left out of the base by the same --exclude as of the checked files)"
        )
    })?;
    super::warn_ambiguous(base.ambiguous.iter().map(|(name, a)| (name.as_str(), a)), "covenant check --base");
    Ok(base)
}

/// A JSON answer written to stdout as it is serialized, and a newline after it.
fn write_json(answer: &impl serde::Serialize, pretty: bool) -> anyhow::Result<()> {
    use std::io::Write as _;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if pretty {
        serde_json::to_writer_pretty(&mut out, answer)?;
    } else {
        serde_json::to_writer(&mut out, answer)?;
    }
    writeln!(out)?;
    out.flush().context("cannot write to stdout")
}
