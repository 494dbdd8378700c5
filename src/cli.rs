//! The command line: clap definitions and the glue that runs each command. Exit codes: 0
//! clean (warnings allowed), 1 a deny-level finding, 2 a usage, config or input error.

use std::io::Read;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context as _};
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::cluster::{ClusterView, EmptyCluster, OfflineCluster};
use crate::config::Config;
use crate::engine::Engine;
use crate::families::launcher::Inputs;
use crate::families::schema_bearing::Outline;
use crate::pointer::At;
use crate::report::Input;
use crate::rules::{Status, CATALOG};
use crate::schema::openapi::Keep;
use crate::telemetry::LogFormat;

/// covenant: admission webhook and offline checker for the versioning discipline of
/// platform documents.
#[derive(Debug, Parser)]
#[command(name = "covenant", version, about, disable_help_subcommand = true)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run the admission webhook (HTTPS) and the admin listener (HTTP).
    Serve(Box<ServeArgs>),
    /// Check documents offline with the same engine the webhook runs.
    Check(CheckArgs),
    /// The contract diff of two versions of a CRD, an XRD or an OpenAPI schema: every change,
    /// its bump and rule, implied vs declared, and the verdict. Exit 1 when the verdict is not
    /// ok or the family's stability policy refuses a change.
    Diff(DiffArgs),
    /// Who uses which construct version: every logical construct's published versions, the
    /// default, and its consumers per version (pinned, floating, frozen in releases), from the
    /// objects in --context, resolved as the webhook resolves them.
    Status(StatusArgs),
    /// Will these manifests still apply on the newest supported version? For every consumer
    /// pinned below it (or below --to): the pin move, the contract diff, and whether the
    /// consumer validates against the target; --write moves the pins of those that would.
    Upgrade(UpgradeArgs),
    /// Print one rule's documentation.
    Explain {
        /// A rule id such as CVN-101.
        id: String,
    },
    /// List the rule catalogue.
    Rules {
        /// Output format.
        #[arg(long, value_enum, default_value_t = RulesOutput::Text)]
        output: RulesOutput,
    },
    /// Configuration helpers.
    Config {
        /// The helper.
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// Make a development CA and serving certificate and print the caBundle.
    Certs(CertsArgs),
    /// Print the version.
    Version,
}

/// `covenant status`.
#[derive(Debug, clap::Args)]
pub struct StatusArgs {
    /// Objects (YAML/JSON files) standing in for the cluster: constructs, consumers, releases.
    #[arg(long)]
    pub context: PathBuf,
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
    #[arg(long)]
    pub context: PathBuf,
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
}

/// `covenant config …`
#[derive(Debug, Subcommand)]
pub enum ConfigCommand {
    /// Print the whole default config, commented.
    PrintDefault,
    /// Validate a config file and report every problem.
    Check {
        /// The file.
        file: PathBuf,
    },
}

/// Output formats of `covenant rules`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum RulesOutput {
    /// A table.
    Text,
    /// JSON.
    Json,
    /// Markdown (what docs/rules.md holds); `markdown` means the same.
    #[value(alias = "markdown")]
    Md,
}

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

/// `covenant serve`
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Config file; default: the embedded default.
    #[arg(long, env = "COVENANT_CONFIG")]
    pub config: Option<PathBuf>,
    /// Webhook (HTTPS) address [default: 0.0.0.0:8443, or 127.0.0.1:8443 with --dev].
    #[arg(long, env = "COVENANT_LISTEN")]
    pub listen: Option<SocketAddr>,
    /// Admin (HTTP) address [default: 0.0.0.0:8080, or 127.0.0.1:8080 with --dev].
    #[arg(long, env = "COVENANT_ADMIN_LISTEN")]
    pub admin_listen: Option<SocketAddr>,
    /// Serving certificate (PEM chain); reloaded when it changes.
    #[arg(long, env = "COVENANT_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// Serving key (PEM); reloaded when it changes.
    #[arg(long, env = "COVENANT_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Require apiserver client certificates chained to this CA (PEM).
    #[arg(long, env = "COVENANT_CLIENT_CA")]
    pub client_ca: Option<PathBuf>,
    /// Development mode: embedded config, a generated CA and certificate, loopback only,
    /// and a printed curl command that sends a sample review.
    #[arg(long, conflicts_with_all = ["tls_cert", "tls_key"])]
    pub dev: bool,
    /// With --dev: where to write the generated certificates [default: a temp directory].
    #[arg(long, requires = "dev")]
    pub dev_cert_dir: Option<PathBuf>,
    /// Use no cluster state: rules that need it say they could not look (the default with
    /// --dev). Without it the server watches the cluster it runs in (or the kubeconfig's).
    #[arg(long)]
    pub offline: bool,
    /// Objects (YAML/JSON files) to use as the cluster's state instead of a live cluster.
    #[arg(long)]
    pub context: Option<PathBuf>,
    /// How often to check the certificate files for a change.
    #[arg(long, default_value = "2s", value_parser = humantime::parse_duration)]
    pub tls_reload_interval: Duration,
    /// After SIGTERM, keep serving this long with readiness down.
    #[arg(long, default_value = "0s", value_parser = humantime::parse_duration)]
    pub drain_delay: Duration,
    /// How long in-flight requests may take to finish at shutdown.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub shutdown_grace: Duration,
    /// How long a client may take to send a request's body (a slow one is answered 408).
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub read_timeout: Duration,
    /// How long a connection (HTTP/1.1 or HTTP/2, either listener) may sit without a request,
    /// or take to send a request head, before it is closed; keep it above the apiserver's
    /// 90 s idle timeout.
    #[arg(long, default_value = "120s", value_parser = humantime::parse_duration)]
    pub idle_timeout: Duration,
    /// Webhook connections open at once, at most (further ones wait in the kernel's backlog);
    /// lowered to fit the open-file limit.
    #[arg(long, default_value_t = 1024)]
    pub max_connections: usize,
    /// Worker threads [default: one per core].
    #[arg(long, env = "COVENANT_THREADS")]
    pub threads: Option<usize>,
    /// Log format.
    #[arg(long, value_enum, default_value_t = LogFormat::Plain, env = "COVENANT_LOG_FORMAT")]
    pub log_format: LogFormat,
    /// Log level or filter (RUST_LOG overrides).
    #[arg(long, default_value = "info", env = "COVENANT_LOG_LEVEL")]
    pub log_level: String,
    /// Re-check the objects already in the cluster this often (such as `10m`), with the
    /// webhook's engine; findings go to `covenant_audit_findings` and `/api/v0/audit` on the
    /// admin listener. Off unless set.
    #[arg(long, value_parser = humantime::parse_duration, env = "COVENANT_AUDIT_INTERVAL")]
    pub audit_interval: Option<Duration>,
    /// Objects the audit fetches and judges per page.
    #[arg(long, default_value_t = 100, requires = "audit_interval")]
    pub audit_page_size: usize,
    /// Objects the audit judges per second at most (0: no limit).
    #[arg(long, default_value_t = 50.0, requires = "audit_interval")]
    pub audit_rate: f64,
    /// Findings `/api/v0/audit` lists in full (its counts always cover all of them).
    #[arg(long, default_value_t = 100, requires = "audit_interval")]
    pub audit_summary_limit: usize,
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
    /// Skip documents that name none of apiVersion, kind, schema and version (a CI
    /// workflow, a Helm values file) instead of reporting each as CVN-109; they are counted
    /// in the summary and listed in JSON output. A document naming only some of them is
    /// still judged.
    #[arg(long)]
    pub skip_unidentified: bool,
    /// Config file; default: the embedded default.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Objects (YAML/JSON files) standing in for the cluster's state.
    #[arg(long)]
    pub context: Option<PathBuf>,
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
    /// A `kind: Registry` file (repeatable): its types join the namespace Applications are
    /// checked against, and the file itself is checked against the type-name covenant.
    #[arg(long = "registry", value_name = "FILE")]
    pub registries: Vec<PathBuf>,
    /// A `kind: Dialect` declaration (repeatable): its reserved, shadowed and custom types
    /// join the namespace, and the declaration itself is checked.
    #[arg(long = "dialect", value_name = "FILE")]
    pub dialects: Vec<PathBuf>,
}

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
    /// The old version: a file; with --context, the construct's logical name.
    pub old: PathBuf,
    /// The new version: a file; with --context, the version to compare from.
    pub new: PathBuf,
    /// With --context: the version to compare to.
    pub to: Option<String>,
    /// Published constructs (YAML/JSON files): `covenant diff --context DIR NAME FROM TO`
    /// compares two published versions of one construct by logical name and version.
    #[arg(long)]
    pub context: Option<PathBuf>,
    /// Config file (its stability policies decide what is refused); default: the embedded default.
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DiffOutput::Text)]
    pub output: DiffOutput,
}

/// `covenant certs`
#[derive(Debug, Args)]
pub struct CertsArgs {
    /// DNS names (or IPs) of the serving certificate, such as covenant.covenant-system.svc.
    #[arg(long = "dns", required = true)]
    pub names: Vec<String>,
    /// Directory to write ca.crt, tls.crt and tls.key into.
    #[arg(long, default_value = "certs/out")]
    pub out: PathBuf,
    /// Validity in days.
    #[arg(long, default_value_t = 365)]
    pub days: i64,
}

/// Command spellings that have moved, and what replaced them.
pub const RENAMED: &[(&str, &str)] =
    &[("validate", "check"), ("print-default-config", "config print-default")];

/// If `args` starts with a moved command spelling, the refusal naming the new one.
pub fn renamed(args: &[String]) -> Option<String> {
    let first = args.iter().skip(1).find(|a| !a.starts_with('-'))?;
    RENAMED
        .iter()
        .find(|(old, _)| old == first)
        .map(|(old, new)| format!("error: `covenant {old}` was renamed; use `covenant {new}`"))
}

/// Run a parsed command line.
pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Serve(args) => serve(*args),
        Command::Check(args) => check(args),
        Command::Diff(args) => diff(args),
        Command::Status(args) => status(args),
        Command::Upgrade(args) => upgrade(args),
        Command::Explain { id } => explain(&id),
        Command::Rules { output } => {
            print!("{}", rules_listing(output));
            Ok(ExitCode::SUCCESS)
        }
        Command::Config { command: ConfigCommand::PrintDefault } => {
            print!("{}", crate::config::DEFAULT_YAML);
            Ok(ExitCode::SUCCESS)
        }
        Command::Config { command: ConfigCommand::Check { file } } => {
            let config = Config::load(&file)?;
            println!("{}: valid ({} families enabled)", config.source, config.families.len());
            Ok(ExitCode::SUCCESS)
        }
        Command::Certs(args) => {
            let certs = crate::certs::DevCerts::generate(&args.names, args.days)?;
            let written = certs.write(&args.out)?;
            eprintln!(
                "wrote {}, {} and {}",
                written.ca.display(),
                written.cert.display(),
                written.key.display()
            );
            eprintln!("caBundle for the webhook configurations:");
            println!("{}", certs.ca_bundle());
            Ok(ExitCode::SUCCESS)
        }
        Command::Version => {
            println!("covenant {}", env!("CARGO_PKG_VERSION"));
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn status(args: StatusArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(args.config.as_ref())?;
    let cluster = crate::cluster::OfflineCluster::load_dir(&args.context)?;
    let usage = crate::families::consumer::usage(&cluster, &config.construct_kinds, &config.consumer_kinds)?;
    match args.output {
        RulesOutput::Json => println!("{usage:#}"),
        RulesOutput::Text | RulesOutput::Md => print!("{}", status_table(&usage)),
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

fn upgrade(args: UpgradeArgs) -> anyhow::Result<ExitCode> {
    use std::fmt::Write;
    let config = load_config(args.config.as_ref())?;
    let engine = Engine::new(&config);
    let cluster = OfflineCluster::load_dir(&args.context)?;
    let to = match &args.to {
        Some(v) => Some(
            semver::Version::parse(v)
                .with_context(|| format!("--to {v}: not a MAJOR.MINOR.PATCH version"))?,
        ),
        None => None,
    };
    let (mut text, mut markdown, mut json) = (String::new(), String::new(), Vec::new());
    let mut wrote = 0;
    // Every document first: a Component's ReleaseBindings may sit in another file.
    let mut files = Vec::new();
    for path in &args.paths {
        for file in
            crate::source::discover(path).with_context(|| format!("cannot read {}", path.display()))?
        {
            let source =
                std::fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))?;
            let docs = crate::source::parse_stream(&source).0;
            files.push((file, source, docs));
        }
    }
    let siblings: Vec<serde_json::Value> =
        files.iter().flat_map(|(_, _, docs)| docs.iter().map(|d| d.value.clone())).collect();
    for (file, mut source, docs) in files {
        let name = file.display().to_string();
        for doc in docs {
            let kind =
                doc.value.get("kind").and_then(serde_json::Value::as_str).unwrap_or_default().to_string();
            let ns = doc.value.at("/metadata/namespace").and_then(serde_json::Value::as_str);
            let obj = doc.value.at("/metadata/name").and_then(serde_json::Value::as_str).unwrap_or("?");
            let who = ns.map_or_else(|| format!("{kind} {obj}"), |n| format!("{kind} {n}/{obj}"));
            for plan in crate::upgrade::plan(&engine, &cluster, &doc.value, to.as_ref(), &siblings) {
                let plan = match plan {
                    Ok(p) => p,
                    Err(why) => {
                        let _ = writeln!(text, "{name}: {who}: cannot plan: {why}");
                        json.push(serde_json::json!({"file": name, "consumer": who, "error": why}));
                        continue;
                    }
                };
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
                if args.write && plan.applies() {
                    match crate::upgrade::write_pin(&source, doc.index, &plan.pointer, &plan.new_pin) {
                        Some(updated) => {
                            source = updated;
                            std::fs::write(&file, &source).with_context(|| format!("cannot write {name}"))?;
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
            println!("{} upgrade(s) planned", json.len());
            if args.write {
                println!("{wrote} pin(s) written");
            }
        }
        DiffOutput::Json => println!("{:#}", serde_json::Value::Array(json)),
        DiffOutput::Markdown => print!("{markdown}"),
    }
    Ok(ExitCode::SUCCESS)
}

fn load_config(path: Option<&PathBuf>) -> anyhow::Result<Config> {
    Ok(match path {
        Some(p) => Config::load(p)?,
        None => Config::embedded()?,
    })
}

fn load_cluster(context: Option<&PathBuf>) -> anyhow::Result<Arc<dyn ClusterView>> {
    Ok(match context {
        Some(dir) => Arc::new(OfflineCluster::load_dir(dir)?),
        None => Arc::new(EmptyCluster),
    })
}

/// Every document of the YAML/JSON files under `path`, each with its file name; a file that
/// does not parse is an input error.
fn read_documents(path: &Path) -> anyhow::Result<Vec<(String, serde_json::Value)>> {
    let files = crate::source::discover(path).with_context(|| format!("cannot read {}", path.display()))?;
    if files.is_empty() {
        bail!("{}: no *.yaml, *.yml or *.json files found", path.display());
    }
    let mut out = Vec::new();
    for file in files {
        let name = file.display().to_string();
        let text = std::fs::read_to_string(&file).with_context(|| format!("cannot read {name}"))?;
        let (docs, syntax) = crate::source::parse_stream(&text);
        if let Some(e) = syntax {
            bail!("{name}:{}:{}: {}", e.at.line, e.at.column, e.reason);
        }
        out.extend(docs.into_iter().map(|d| (name.clone(), d.value)));
    }
    Ok(out)
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
    for path in &args.values {
        for (name, doc) in read_documents(path)? {
            inputs.add_values(&name, &doc)?;
        }
    }
    Ok(inputs)
}

fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let mut config = load_config(args.config.as_ref())?;
    // Registries and dialects join the namespace, and are checked as documents themselves.
    let mut declaration_files = Vec::new();
    for (path, kind) in
        args.registries.iter().map(|p| (p, "Registry")).chain(args.dialects.iter().map(|p| (p, "Dialect")))
    {
        for (name, doc) in read_documents(path)? {
            let found = doc.get("kind").and_then(serde_json::Value::as_str).unwrap_or("(none)");
            if found != kind {
                bail!(
                    "{name}: --{} expects kind: {kind} documents, found kind {found}",
                    kind.to_ascii_lowercase()
                );
            }
        }
        config.registry.add_file(path)?;
        declaration_files.push(path.clone());
    }
    let inputs = launcher_inputs(&args)?;
    // The build inputs are launcher documents too, held to the same strictness: a misspelled
    // key in a cluster profile is a finding at its line, never a binding silently dropped.
    declaration_files.extend(args.profile.iter().chain(&args.capability_defs).chain(&args.package).cloned());
    let engine = Engine::with_inputs(&config, inputs.clone());
    let cluster = load_cluster(args.context.as_ref())?;
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
            let mut text = String::new();
            std::io::stdin().read_to_string(&mut text).context("cannot read stdin")?;
            queued.push(Input::Read(crate::report::Source { name: "-".into(), text }));
            continue;
        }
        let walked =
            crate::source::walk(path, &exclude).with_context(|| format!("cannot read {}", path.display()))?;
        walk_notes.extend(walked.notes);
        if walked.files.is_empty() {
            bail!("{}: no *.yaml, *.yml or *.json files found", path.display());
        }
        queued.extend(walked.files.into_iter().map(Input::File));
    }
    if args.fix {
        let mut fixing = config.clone();
        fixing.rules = fixing.rules.with_mutation();
        let fixer = Engine::with_inputs(&fixing, inputs.clone());
        let mut fixed = 0;
        for file in queued.iter().filter_map(|i| match i {
            Input::File(f) => Some(f),
            Input::Read(_) => None,
        }) {
            let Ok(text) = std::fs::read_to_string(file) else { continue };
            let name = file.display().to_string();
            if let Some(text) = crate::report::fix::fix_text(&name, &text, &fixer, cluster.as_ref())? {
                std::fs::write(file, &text).with_context(|| format!("cannot write {name}"))?;
                fixed += 1;
            }
        }
        eprintln!("covenant: --fix wrote stamps and labels into {fixed} file(s)");
    }
    let base = match &args.base {
        Some(base) => {
            let paths: Vec<PathBuf> = args.paths.iter().chain(&declaration_files).cloned().collect();
            Some(read_base(base, &paths)?)
        }
        None => None,
    };
    let named = queued.len();
    let mut report =
        crate::report::check_each(&engine, cluster.as_ref(), queued, base.as_ref(), args.skip_unidentified);
    // Inputs were named and none held a document: a gate that checked nothing does not pass
    // (as a directory without documents does not).
    if named > 0 && report.documents == 0 && report.skipped.is_empty() {
        let empty: Vec<&String> =
            report.notes.iter().filter(|n| n.ends_with(crate::report::NO_DOCUMENT)).collect();
        bail!("nothing to check: {}", empty.iter().map(|n| n.as_str()).collect::<Vec<_>>().join("; "));
    }
    report.notes.extend(walk_notes);
    if let Some(path) = &args.profile {
        let traits: Vec<String> = config
            .registry
            .declarations
            .iter()
            .filter(|t| t.category == crate::registry::TypeCategory::Trait)
            .map(|t| t.name.clone())
            .collect();
        for file in
            crate::source::discover(path).with_context(|| format!("cannot read {}", path.display()))?
        {
            let text =
                std::fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))?;
            crate::report::check_profile(
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
        for file in
            crate::source::discover(path).with_context(|| format!("cannot read {}", path.display()))?
        {
            let text =
                std::fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))?;
            crate::report::check_values(&mut report, &engine, &file.display().to_string(), &text, &inputs);
        }
    }
    if let Some(path) = &args.write_baseline {
        let baseline = crate::report::render_baseline(&report);
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
        CheckOutput::Json => println!("{}", crate::report::render_json(&report)),
        CheckOutput::Sarif => println!("{:#}", crate::report::render_sarif(&report)),
        CheckOutput::Junit => print!("{}", crate::report::render_junit(&report)),
        CheckOutput::Github => print!("{}", crate::report::render_github(&report)),
    }
    Ok(if report.denied() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

/// The previous versions for `check --base`: a directory's documents, or every document file
/// the git ref holds under the checked paths. Either way the base is complete: a document it
/// holds that the checked set does not was deleted, and is judged as a DELETE.
fn read_base(base: &str, paths: &[PathBuf]) -> anyhow::Result<crate::report::Base> {
    let path = Path::new(base);
    if path.is_dir() || path.is_file() {
        let mut docs = Vec::new();
        for file in crate::source::discover(path).with_context(|| format!("cannot read {base}"))? {
            let text =
                std::fs::read_to_string(&file).with_context(|| format!("cannot read {}", file.display()))?;
            docs.push(crate::report::Source { name: file.display().to_string(), text });
        }
        return Ok(base_of(&docs)?.complete());
    }
    let git = |args: &[&str]| std::process::Command::new("git").args(args).output();
    let verify = git(&["rev-parse", "--verify", "--quiet", &format!("{base}^{{commit}}")])
        .context("--base: cannot run git")?;
    if !verify.status.success() {
        bail!("--base {base}: not a directory, and not a git ref of the repository here");
    }
    // What git printed, or an error naming what it could not do, in its own words.
    let stdout = |args: &[&str], what: &str| -> anyhow::Result<String> {
        let out = git(args).context("--base: cannot run git")?;
        if !out.status.success() {
            bail!("--base {base}: git cannot {what}: {}", String::from_utf8_lossy(&out.stderr).trim());
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    };
    let mut docs = Vec::new();
    if paths.iter().any(|p| p.as_os_str() == "-") {
        // What stdin carries (`kustomize build | covenant check - --base origin/main`) lives
        // nowhere in particular: its objects are paired with the ref's documents wherever
        // they are in the tree. Nothing is judged deleted: the stream need not be all of it.
        let names = stdout(&["ls-tree", "-r", "-z", "--full-tree", "--name-only", base], "list its tree")?;
        for name in names.split('\0').filter(|n| crate::source::is_document_file(Path::new(n))) {
            let text = stdout(&["show", &format!("{base}:{name}")], &format!("show {name}"))?;
            docs.push(crate::report::Source { name: format!("{base}:{name}"), text });
        }
        return base_of(&docs);
    }
    for path in paths.iter().filter(|p| p.as_os_str() != "-") {
        let shown = path.to_string_lossy();
        // Paths relative to here, as the checked paths are; `-z` keeps odd names whole.
        let names =
            stdout(&["ls-tree", "-r", "-z", "--name-only", base, "--", &shown], &format!("list {shown}"))?;
        for name in names.split('\0').filter(|n| crate::source::is_document_file(Path::new(n))) {
            let text = stdout(&["show", &format!("{base}:./{name}")], &format!("show {name}"))?;
            docs.push(crate::report::Source { name: format!("{base}:{name}"), text });
        }
    }
    Ok(base_of(&docs)?.complete())
}

/// The base read from its documents; one that is not YAML stops the check, named.
fn base_of(docs: &[crate::report::Source]) -> anyhow::Result<crate::report::Base> {
    crate::report::Base::from_sources(docs)
        .map_err(|e| anyhow::anyhow!("--base: cannot read the previous version of {e}"))
}

/// A document `diff` compares. A file of JSON text is kept as text, so a CRD's version schemas
/// are read straight from it into the model, as the webhook reads a review (and a schema two
/// versions or both sides share is read once); anything else is read as YAML, into a tree.
enum Compared {
    Text(String),
    Tree(serde_json::Value),
}

impl Compared {
    fn read(path: &Path) -> anyhow::Result<Compared> {
        if path.is_file() {
            let mut text =
                std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
            if text.starts_with('\u{feff}') {
                text.drain(..'\u{feff}'.len_utf8());
            }
            if text.trim_start().starts_with('{') {
                // The YAML reader refuses a repeated key; so does JSON read this way. Text that
                // is not JSON (a YAML flow mapping) is read as YAML below.
                match crate::source::refuse_repeated_keys(&text) {
                    Ok(()) => return Ok(Compared::Text(text)),
                    Err(e) if e.classify() == serde_json::error::Category::Data => {
                        bail!("{}: {e}", path.display())
                    }
                    Err(_) => {}
                }
            }
        }
        let docs = read_documents(path)?;
        match <[_; 1]>::try_from(docs) {
            Ok([(_, doc)]) => Ok(Compared::Tree(doc)),
            Err(docs) => bail!("{}: expected one document, found {}", path.display(), docs.len()),
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

fn diff(args: DiffArgs) -> anyhow::Result<ExitCode> {
    let config = load_config(args.config.as_ref())?;
    let (old, new) = match &args.context {
        None => {
            if args.to.is_some() {
                bail!("covenant diff takes OLD NEW files, or --context DIR NAME FROM TO");
            }
            (Compared::read(&args.old)?, Compared::read(&args.new)?)
        }
        Some(dir) => {
            let Some(to) = &args.to else { bail!("covenant diff --context DIR takes NAME FROM TO") };
            let name = args.old.to_string_lossy().into_owned();
            let from = args.new.to_string_lossy().into_owned();
            let cluster = OfflineCluster::load_dir(dir)?;
            let at = |v: &str| crate::families::construct::published_at(&cluster, None, &name, v);
            (
                Compared::Tree(at(&from).map_err(anyhow::Error::msg)?),
                Compared::Tree(at(to).map_err(anyhow::Error::msg)?),
            )
        }
    };
    let policy = |family: &str| {
        config.stability.get(family).copied().unwrap_or(crate::rules::evolution::Stability::Always)
    };
    let old_outline = old.outline(&args.old, None)?;
    let new_outline = new.outline(&args.new, Some(&old_outline))?;
    let d = crate::report::diff::compute(&old_outline, &new_outline, policy)
        .map_err(|e| anyhow::anyhow!("{} → {}: {e}", args.old.display(), args.new.display()))?;
    match args.output {
        DiffOutput::Text => print!("{}", crate::report::diff::render_text(&d)),
        DiffOutput::Json => println!("{}", crate::report::diff::render_json(&d)),
        DiffOutput::Markdown => print!("{}", crate::report::diff::render_markdown(&d)),
    }
    Ok(if d.fails() { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

fn explain(id: &str) -> anyhow::Result<ExitCode> {
    // A rule is named by its id (`CVN-101`, any case) or its slug (`unknown-field`).
    let by_slug = CATALOG.iter().find(|r| r.slug == id || r.id.eq_ignore_ascii_case(id)).map(|r| r.id);
    let Some(rule) = crate::rules::lookup(by_slug.unwrap_or(id)) else {
        let near = crate::suggest::closest(id, CATALOG.iter().flat_map(|r| [r.id, r.slug]));
        let hint = near.first().map(|n| format!("; did you mean {n}?")).unwrap_or_default();
        bail!("unknown rule \"{id}\"{hint} (`covenant rules` lists ids and slugs)");
    };
    print!("{}", explain_page(rule));
    Ok(ExitCode::SUCCESS)
}

/// The page `covenant explain` prints for a rule.
pub fn explain_page(rule: &crate::rules::RuleMeta) -> String {
    let mut out = format!(
        "# {} {}\n\ncategory: {} · default action: {} · status: {}\n\n{}\n\n",
        rule.id,
        rule.slug,
        rule.category.as_str(),
        rule.default_action,
        rule.status.as_str(),
        rule.summary
    );
    match rule.status {
        Status::Live => out.push_str(rule.docs),
        Status::Planned => out.push_str(
            "This rule is planned: its id is reserved and config may name it, but it is not built \
             yet, so selecting it has no effect.\n",
        ),
    }
    out
}

/// The columns a catalogue row shows in the text and markdown listings.
fn columns(r: &crate::rules::RuleMeta) -> [&'static str; 6] {
    [r.id, r.slug, r.category.as_str(), r.default_action.as_str(), r.status.as_str(), r.summary]
}

/// The catalogue in one of the `rules` formats.
pub fn rules_listing(output: RulesOutput) -> String {
    match output {
        RulesOutput::Text => {
            let line = |c: [&str; 6]| {
                format!("{:<8} {:<30} {:<11} {:<7} {:<8} {}\n", c[0], c[1], c[2], c[3], c[4], c[5])
            };
            let mut out = line(["ID", "SLUG", "CATEGORY", "ACTION", "STATUS", "SUMMARY"]);
            CATALOG.iter().for_each(|r| out.push_str(&line(columns(r))));
            let live = CATALOG.iter().filter(|r| r.status == Status::Live).count();
            out.push_str(&format!(
                "{} rules: {} live, {} planned\n",
                CATALOG.len(),
                live,
                CATALOG.len() - live
            ));
            out
        }
        RulesOutput::Json => {
            let rows: Vec<_> = CATALOG
                .iter()
                .map(|r| {
                    serde_json::json!({
                        "id": r.id, "slug": r.slug, "category": r.category.as_str(),
                        "defaultAction": r.default_action.as_str(), "status": r.status.as_str(),
                        "summary": r.summary, "message": r.message,
                    })
                })
                .collect();
            format!("{}\n", serde_json::Value::Array(rows))
        }
        RulesOutput::Md => {
            let mut out = String::from(
                "# covenant rules\n\nGenerated by `covenant rules --output md` (`make docs`); do not edit.\n\n\
                 | id | slug | category | default | status | summary |\n|---|---|---|---|---|---|\n",
            );
            for r in CATALOG {
                out.push_str(&format!("| {} |\n", columns(r).join(" | ")));
            }
            out
        }
    }
}

/// Descriptors kept for everything but webhook connections: the admin listener's
/// connections, the certificate files, the API server's, the log.
const RESERVED_FILES: usize = 256;

/// The open-file limit as the binary found and raised it at start: (soft before, soft
/// after, hard). The library forbids `unsafe`, so the binary makes the system calls.
static OPEN_FILES: std::sync::OnceLock<(u64, u64, u64)> = std::sync::OnceLock::new();

/// Record the open-file limit the binary set (see `OPEN_FILES`).
pub fn open_files_raised(before: u64, soft: u64, hard: u64) {
    let _ = OPEN_FILES.set((before, soft, hard));
}

/// The soft open-file limit, logged with how it was raised.
fn raise_open_files() -> Option<(u64, u64)> {
    let (before, soft, hard) = *OPEN_FILES.get()?;
    tracing::info!(soft_before = before, soft, hard, "open-file limit raised to the hard limit");
    Some((soft, hard))
}

/// The connection cap, lowered so that webhook connections can never take the descriptors
/// probes and lookups need.
fn fit_connections(wanted: usize) -> usize {
    match raise_open_files() {
        Some((soft, _)) => {
            let room = usize::try_from(soft).unwrap_or(usize::MAX).saturating_sub(RESERVED_FILES).max(16);
            if room < wanted {
                tracing::warn!(wanted, cap = room, "--max-connections lowered to fit the open-file limit");
            }
            wanted.min(room)
        }
        None => wanted,
    }
}

fn serve(args: ServeArgs) -> anyhow::Result<ExitCode> {
    crate::telemetry::init(args.log_format, &args.log_level);
    let mut runtime = tokio::runtime::Builder::new_multi_thread();
    runtime.enable_all();
    if let Some(n) = args.threads {
        runtime.worker_threads(n.max(1));
    }
    let runtime = runtime.build().context("cannot start the async runtime")?;
    runtime.block_on(serve_async(args))?;
    Ok(ExitCode::SUCCESS)
}

const SAMPLE_REVIEW: &str = include_str!("../tests/fixtures/admission/kube-rs/v1-create-pod-gke.json");
/// A review covenant refuses: a launcher Application applied as a custom resource, with
/// `replicaz` where its component type declares `replicas` (CVN-102).
const DENIED_REVIEW: &str = include_str!("../examples/reviews/denied-application.json");

async fn serve_async(args: ServeArgs) -> anyhow::Result<()> {
    let config = load_config(args.config.as_ref())?;
    let (listen, admin_listen) = if args.dev {
        (
            args.listen.unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8443))),
            args.admin_listen.unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8080))),
        )
    } else {
        (
            args.listen.unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 8443))),
            args.admin_listen.unwrap_or_else(|| SocketAddr::from(([0, 0, 0, 0], 8080))),
        )
    };
    let (cert, dev_dir) = if args.dev {
        let dir = args.dev_cert_dir.clone().unwrap_or_else(|| std::env::temp_dir().join("covenant-dev"));
        let names = vec!["localhost".to_string(), listen.ip().to_string()];
        let certs = crate::certs::DevCerts::generate(&names, 30)?;
        let written = certs.write(&dir)?;
        for (file, text) in [("sample-review.json", SAMPLE_REVIEW), ("denied-review.json", DENIED_REVIEW)] {
            std::fs::write(dir.join(file), text)
                .with_context(|| format!("cannot write {}", dir.display()))?;
        }
        (crate::server::CertPaths { cert: written.cert, key: written.key }, Some(dir))
    } else {
        match (&args.tls_cert, &args.tls_key) {
            (Some(c), Some(k)) => (crate::server::CertPaths { cert: c.clone(), key: k.clone() }, None),
            _ => bail!("--tls-cert and --tls-key must be set (or run with --dev)"),
        }
    };
    let cluster: Arc<dyn ClusterView> = match (&args.context, args.offline || args.dev) {
        (Some(dir), _) => load_cluster(Some(dir))?,
        (None, true) => {
            if args.dev && !args.offline {
                tracing::info!(
                    "--dev serves without cluster state (as --offline); rules that need it say so"
                );
            }
            load_cluster(None)?
        }
        (None, false) => {
            let kube_config = kube::Config::infer().await.context(
                "no cluster to watch (neither in-cluster nor a kubeconfig); run with --offline to serve without cluster state",
            )?;
            let following =
                crate::cluster::live::Following { watch_timeout: config.watch_timeout, ..Default::default() };
            Arc::new(crate::cluster::live::LiveCluster::connect(
                kube_config,
                config.cluster_kinds(),
                following,
            )?)
        }
    };

    let mut state =
        crate::server::AppState::new(&config, cluster.clone()).context("cannot register metrics")?;
    let audit = match args.audit_interval {
        Some(interval) => {
            let options = crate::audit::Options {
                interval,
                page_size: args.audit_page_size.max(1),
                rate: args.audit_rate.max(0.0),
                summary_limit: args.audit_summary_limit,
                kinds: config.cluster_kinds(),
                lookup_budget: config.lookup_budget,
            };
            let auditor = crate::audit::Auditor::new(
                state.engine.clone(),
                state.cluster.clone(),
                state.metrics.clone(),
                options,
            );
            state.audit = Some(auditor.status());
            Some(auditor.spawn().context("cannot start the audit")?)
        }
        None => None,
    };
    let options = crate::server::Options {
        listen,
        admin_listen,
        cert,
        client_ca: args.client_ca.clone(),
        reload_interval: args.tls_reload_interval,
        drain_delay: args.drain_delay,
        shutdown_grace: args.shutdown_grace,
        read_timeout: args.read_timeout,
        idle_timeout: args.idle_timeout,
        handshake_timeout: Duration::from_secs(10),
        max_connections: fit_connections(args.max_connections),
    };
    let bound = crate::server::bind(options, state).await?;
    tracing::info!(config = %config.source, "config loaded");
    if let Some(dir) = dev_dir {
        println!("covenant {} (dev) serving", env!("CARGO_PKG_VERSION"));
        println!("  webhook  https://{}/api/v0/validate", bound.webhook_addr);
        println!("  admin    http://{}/readyz  /metrics", bound.admin_addr);
        println!("  certificates in {}", dir.display());
        let curl = |file: &str| {
            format!(
                "curl -s --cacert {ca} -H 'Content-Type: application/json' --data @{sample} 'https://localhost:{port}/api/v0/validate?timeout=10s'",
                ca = dir.join("ca.crt").display(),
                sample = dir.join(file).display(),
                port = bound.webhook_addr.port()
            )
        };
        println!();
        println!("send a review it allows (a Pod: no rule concerns it, so it is not even parsed):");
        println!("  {}", curl("sample-review.json"));
        println!();
        println!("send a review it refuses (a launcher Application whose component says `replicaz`):");
        println!("  {}", curl("denied-review.json"));
        println!();
        println!("the answer is an AdmissionReview with \"allowed\": false; kubectl would print its");
        println!("status.message, one line per finding:");
        println!(
            "  CVN-102 /spec/components/0/properties/replicaz: property \"replicaz\" is not declared by"
        );
        println!("  component \"web\" (type \"webservice\"); expected one of: … replicas …");
        println!("status.details.causes holds each finding with its field path; `covenant explain CVN-102`");
        println!("says what the rule checks and how to fix it; `covenant check FILE` gives the same verdict");
        println!("offline, in CI.");
    }
    bound.run(crate::server::shutdown_signal()).await;
    if let Some(audit) = audit {
        // The walk stops between pages; joining waits at most for one object's lookups.
        tokio::task::spawn_blocking(move || audit.stop()).await.ok();
    }
    Ok(())
}
