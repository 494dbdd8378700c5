//! The command line: clap definitions and the glue that runs each command. Exit codes: 0
//! clean (warnings allowed), 1 a deny-level finding, 2 a usage, config or input error.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::bail;
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::cluster::{ClusterView, EmptyCluster, OfflineCluster};
use crate::config::Config;

mod catalogue;
mod check;
mod diff;
mod serve;
mod upgrade;

pub use catalogue::{explain_page, rules_listing};
pub use check::{CheckArgs, CheckOutput};
pub use diff::{DiffArgs, DiffOutput};
pub use serve::{open_files_raised, ServeArgs};
pub use upgrade::{status_table, StatusArgs, UpgradeArgs};

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
    Check(Box<CheckArgs>),
    /// The contract diff of two versions of a CRD, an XRD or an OpenAPI schema: every change,
    /// its bump and rule, implied vs declared, and the verdict. Exit 1 where `check --base` and
    /// the webhook deny the pair: a declared bump too small, or a change the family's stability
    /// policy refuses (a bump too large is a warning, as there).
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
    /// Print ValidatingAdmissionPolicies for the rules the API server can enforce itself
    /// (CVN-407, CVN-402), so they hold while covenant is down.
    Vap {
        /// The break-glass group the policies skip, as the webhooks do.
        #[arg(long, default_value = "covenant:break-glass")]
        break_glass_group: String,
    },
    /// Print the version.
    Version,
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

/// `covenant certs`
#[derive(Debug, Args)]
pub struct CertsArgs {
    /// DNS names (or IPs) of the serving certificate, such as covenant.covenant-system.svc
    /// [default with --kustomize: the shipped Service's two names].
    #[arg(long = "dns", required_unless_present = "kustomize")]
    pub names: Vec<String>,
    /// Directory to write ca.crt, tls.crt and tls.key into.
    #[arg(long, default_value = "certs/out", conflicts_with = "kustomize")]
    pub out: PathBuf,
    /// Write a kustomize overlay into DIR that installs covenant without cert-manager: the
    /// pair as the covenant-tls Secret, the CA as every webhook's caBundle (then
    /// `kubectl apply --server-side -k DIR`).
    #[arg(long, value_name = "DIR")]
    pub kustomize: Option<PathBuf>,
    /// The kustomize base the overlay installs (covenant's deploy/ folder).
    #[arg(long, value_name = "DIR", default_value = "deploy", requires = "kustomize")]
    pub base: PathBuf,
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
        Command::Serve(args) => serve::serve(*args),
        Command::Check(args) => check::check(*args),
        Command::Diff(args) => diff::diff(args),
        Command::Status(args) => upgrade::status(args),
        Command::Upgrade(args) => upgrade::upgrade(args),
        Command::Explain { id } => catalogue::explain(&id),
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
            let mut names = args.names.clone();
            if names.is_empty() {
                names = crate::certs::SERVICE_NAMES.iter().map(|n| n.to_string()).collect();
            }
            let certs = crate::certs::DevCerts::generate(&names, args.days)?;
            if let Some(dir) = &args.kustomize {
                if !args.base.join("kustomization.yaml").is_file() {
                    anyhow::bail!(
                        "--base {}: no kustomization.yaml there; expected covenant's deploy/ folder",
                        args.base.display()
                    );
                }
                certs.write_kustomize(dir, &args.base)?;
                eprintln!(
                    "wrote a kustomize overlay to {dir} (covenant without cert-manager, certificate valid {days} days); apply it with:\n  kubectl apply --server-side -k {dir}",
                    dir = dir.display(),
                    days = args.days
                );
                return Ok(ExitCode::SUCCESS);
            }
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
        Command::Vap { break_glass_group } => {
            print!("{}", crate::vap::render(&break_glass_group));
            Ok(ExitCode::SUCCESS)
        }
        Command::Version => {
            println!("covenant {}", env!("CARGO_PKG_VERSION"));
            Ok(ExitCode::SUCCESS)
        }
    }
}

fn load_config(path: Option<&PathBuf>) -> anyhow::Result<Config> {
    Ok(match path {
        Some(p) => Config::load(p)?,
        None => Config::embedded()?,
    })
}

/// The live cluster a kubeconfig context names (empty: the current context), read with the
/// same kinds and the same least privilege as the server's view (and `more`: the definitions
/// `check` validates custom resources against); its caches synced before any judgement, so
/// nothing is judged against a half-listed cluster.
fn live_cluster(
    context: &str,
    config: &Config,
    more: Vec<(String, String)>,
) -> anyhow::Result<Arc<dyn ClusterView>> {
    use anyhow::Context as _;
    let options = kube::config::KubeConfigOptions {
        context: (!context.is_empty()).then(|| context.to_string()),
        ..Default::default()
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let kube_config =
        runtime.block_on(kube::Config::from_kubeconfig(&options)).with_context(|| match context {
            "" => "--cluster: cannot read the kubeconfig's current context".to_string(),
            c => format!("--cluster {c}: cannot read that kubeconfig context"),
        })?;
    drop(runtime);
    let view = crate::cluster::live::LiveCluster::connect(
        kube_config,
        [config.cluster_kinds(), more].concat(),
        Default::default(),
    )?;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !view.synced() {
        if std::time::Instant::now() > deadline {
            anyhow::bail!("--cluster: the cluster's constructs and consumers were not listed within 60 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    Ok(Arc::new(view))
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
    let files = read_files(path)?;
    Ok(files
        .into_iter()
        .flat_map(|(name, docs)| docs.into_iter().map(move |d| (name.clone(), d.value)))
        .collect())
}

/// The documents of the text of `name`; text that is not YAML is an input error naming the
/// file and where it stops.
fn parse_documents(name: &str, text: &str) -> anyhow::Result<Vec<crate::source::SourceDocument>> {
    let (docs, syntax) = crate::source::parse_stream(text);
    if let Some(e) = syntax {
        bail!("{name}:{}:{}: {}", e.at.line, e.at.column, e.what());
    }
    Ok(docs)
}

/// Refuse a document read as an input that repeats a key in one mapping
/// (`DuplicateKey::refusal`), at the key repeated.
fn refuse_repeated_keys(name: &str, doc: &crate::source::SourceDocument) -> anyhow::Result<()> {
    match doc.duplicates.first() {
        None => Ok(()),
        Some(d) => bail!("{name}:{}:{}: {}", d.again.line, d.again.column, d.refusal()),
    }
}

/// How many ambiguous scalars of what a comparison reads are named; the rest are counted.
const AMBIGUOUS_NAMED: usize = 10;

/// Say, on stderr, where a document a comparison reads (`diff`'s two, `check --base`'s base)
/// holds plain scalars that kubectl reads as another value than covenant does, in the words
/// `check` reports them with (CVN-110's `on`, `no`, `yes`…; CVN-109's infinity kubectl cannot
/// write as JSON): `by` compares covenant's reading, so a change kubectl would see there
/// (`"on"` → `on` is text → boolean to kubectl) is one it does not show.
fn warn_ambiguous<'a>(
    ambiguous: impl Iterator<Item = (&'a str, &'a crate::source::AmbiguousScalar)>,
    by: &str,
) {
    let mut more = 0usize;
    for (n, (name, a)) in ambiguous.enumerate() {
        if n >= AMBIGUOUS_NAMED {
            more += 1;
            continue;
        }
        let (id, args) = crate::check::ambiguity(a);
        let Some(rule) = crate::rules::lookup(id) else { continue };
        let f = crate::rules::Finding::new(rule, crate::rules::Action::Warn, a.pointer.as_str(), args);
        eprintln!(
            "{name}:{}:{}: warning[{id}] {}: {}; {by} compares the string",
            a.at.line, a.at.column, f.pointer, f.message
        );
        if let Some(help) = &f.help {
            eprintln!("  = help: {help} (covenant explain {id})");
        }
    }
    if more > 0 {
        eprintln!("covenant: warning[CVN-110] {more} more such scalar(s) in what {by} compares");
    }
}

/// `source::read_all`, its error naming the path it is about.
fn read_all(path: &Path) -> anyhow::Result<Vec<(std::path::PathBuf, String)>> {
    crate::source::read_all(path)
        .map_err(|(file, e)| anyhow::Error::new(e).context(format!("cannot read {}", file.display())))
}

/// Every document file at `path` (a file, or a directory's files), each read and parsed once,
/// with its documents' positions; a file that is not YAML stops the read, named with where.
fn read_files(path: &Path) -> anyhow::Result<Vec<(String, Vec<crate::source::SourceDocument>)>> {
    let mut out = Vec::new();
    for (file, text) in read_all(path)? {
        let name = file.display().to_string();
        let docs = parse_documents(&name, &text)?;
        out.push((name, docs));
    }
    Ok(out)
}
