//! covenant's configuration: `covenant.yaml` decoded strictly (`config/file.rs`), then
//! resolved into typed values. Every problem is collected and reported together; unknown
//! rule ids suggest the closest ids. Parsing has no side effects.

mod file;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use globset::{Glob, GlobMatcher};

use crate::openchoreo;
use crate::pointer::At;
use crate::registry::{self, Registry};
use crate::rules::evolution::Stability;
use crate::rules::select::{quote_list, Selector};
use crate::rules::{Action, Category, RuleSet};
use crate::source::{parse_stream, Positions};
use crate::strict::{self, Problem};

/// The embedded default config, with its comments; `covenant config print-default` prints it.
pub const DEFAULT_YAML: &str = include_str!("config/default.yaml");

/// Every family name covenant knows, built or not; config refuses any other. The engine
/// builds the families a config turns on by these names.
pub const FAMILY_NAMES: &[(&str, bool)] = &[
    ("launcher", true),
    ("crd", true),
    ("xrd", true),
    ("construct", true),
    ("consumer", true),
    ("versioned", true),
];

/// A configured exemption: subjects it matches are let through unjudged.
#[derive(Clone, Debug)]
pub struct Exemption {
    /// Namespaces matched exactly; empty matches any.
    pub namespaces: Vec<String>,
    /// Name globs; empty matches any.
    pub names: Vec<GlobMatcher>,
    /// Users matched exactly; empty matches any.
    pub users: Vec<String>,
    /// Groups matched exactly (any of the requester's); empty matches any.
    pub groups: Vec<String>,
    /// Only findings of these rules (ids or categories) are exempted; empty: the whole
    /// subject goes through unjudged.
    pub rules: Vec<Selector>,
    /// Why, stated in config; reported with the verdict.
    pub reason: String,
    /// After this instant the exemption no longer applies.
    pub expires: Option<SystemTime>,
}

impl Exemption {
    /// Compile a name glob.
    pub fn glob(pattern: &str) -> Result<GlobMatcher, String> {
        Glob::new(pattern).map(|g| g.compile_matcher()).map_err(|e| e.to_string())
    }
}

/// What a failing rule lookup does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailurePolicy {
    /// Refuse the object (CVN-901 at deny).
    Deny,
    /// Let it through with a warning.
    Allow,
}

/// The validated configuration.
#[derive(Clone, Debug)]
pub struct Config {
    /// Where it came from: a path, or `embedded default`.
    pub source: String,
    /// Rule selection and actions.
    pub rules: RuleSet,
    /// Enabled families.
    pub families: BTreeSet<String>,
    /// Stability policy per family; a family not listed has its default.
    pub stability: BTreeMap<String, Stability>,
    /// Which CRDs and XRDs have their evolution enforced; every other one is advisory.
    pub enforcement: Enforcement,
    /// The kinds the `construct` family judges.
    pub construct_kinds: Vec<String>,
    /// The kinds the `consumer` family judges.
    pub consumer_kinds: Vec<String>,
    /// The built-in registries plus the configured ones.
    pub registry: Registry,
    /// Exemptions.
    pub exemptions: Vec<Exemption>,
    /// Budget for cluster lookups within one request.
    pub lookup_budget: Duration,
    /// What a failing lookup does.
    pub failure_policy: FailurePolicy,
    /// How long the API server keeps each of the live view's watches open before it ends
    /// them and the view watches again from where it was (whole seconds, 1 s to 290 s).
    pub watch_timeout: Duration,
    /// Whether the mutating route writes patches.
    pub mutation_enabled: bool,
    /// The labels that name the release a rendered object came from (name, namespace).
    pub release_labels: (String, String),
    /// The largest AdmissionReview body accepted.
    pub body_limit: usize,
    /// How many reviews are read and judged at once; more wait for a turn.
    pub reviews_in_flight: usize,
    /// How many bytes of review bodies are held at once (each review counts its declared
    /// length, or the body limit when it declares none); more wait for a turn.
    pub buffered_bytes: usize,
    /// Where custom resources are validated against their CRD or XRD.
    pub custom_resources: CustomResources,
    /// Whether `covenant check` holds Kubernetes' own kinds to the schemas covenant carries.
    pub kubernetes_kinds: bool,
    /// The launcher release line documents are judged for.
    pub launcher_line: LauncherLine,
}

/// A launcher release line: which types it registers, which schemas their properties have,
/// and whether the launcher itself refuses what the schemas do not declare.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LauncherLine {
    /// v0.1.0-alpha.22: eleven component and sixteen trait types; `helmchart` the composite
    /// (source, values, delivery); authored properties are not validated by the launcher.
    Alpha22,
    /// The later line (v0.2.0-alpha on): its type registry, `helmchart` the Flux HelmChart
    /// source, authored properties validated.
    #[default]
    Later,
}

impl LauncherLine {
    /// Every line, as configs and flags spell them.
    pub const ALL: [LauncherLine; 2] = [LauncherLine::Alpha22, LauncherLine::Later];

    /// `v0.1.0-alpha.22`, `v0.2`.
    pub fn as_str(self) -> &'static str {
        match self {
            LauncherLine::Alpha22 => "v0.1.0-alpha.22",
            LauncherLine::Later => "v0.2",
        }
    }

    /// Every line's name, as `as_str` spells it.
    pub fn names() -> Vec<&'static str> {
        LauncherLine::ALL.iter().map(|l| l.as_str()).collect()
    }

    /// A line by its name, with or without the `v`; the later line also as `latest`.
    pub fn parse(text: &str) -> Option<LauncherLine> {
        if text == "latest" {
            return Some(LauncherLine::Later);
        }
        match text.strip_prefix('v').unwrap_or(text) {
            "0.1.0-alpha.22" | "0.1" => Some(LauncherLine::Alpha22),
            "0.2" | "0.2.0" => Some(LauncherLine::Later),
            _ => None,
        }
    }
}

/// Where custom resources (and Crossplane composites and claims) are validated against the
/// served version of their CRD or XRD, as the API server validates them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CustomResources {
    /// In `covenant check`, against the definitions among the checked files, `--context` or
    /// `--cluster` (on by default).
    pub check: bool,
    /// At admission (off by default: the API server validates the custom resources it
    /// serves). On, the live view follows CRDs and XRDs.
    pub admission: bool,
}

/// Which CRDs and XRDs the platform owns: their evolution findings deny per the stability
/// policy. Every other CRD (another project's, upgraded by its own installer) gets the same
/// findings as warnings, so a third-party upgrade is never blocked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Enforcement {
    /// A CRD or XRD labelled `<label>: enforce` is enforced.
    pub label: String,
    /// CRDs and XRDs of these API groups (`spec.group`) are enforced; `*` enforces every one
    /// (a CI check of a repository that holds only the platform's own CRDs).
    pub groups: Vec<String>,
    /// API groups whose objects are held to the names their definition declares it derives.
    pub composite_groups: Vec<String>,
}

/// The shortest time the API server keeps one of the live view's watches open, unless
/// `cluster.watchTimeout` says otherwise: each kind's watches last a time picked at random
/// between this and twice this, as client-go's reflectors do (5 to 10 minutes), so the watches
/// of many kinds and replicas do not all end and reopen together. Each watch that ends
/// resumes from the resourceVersion it reached (bookmarks keep it fresh): no list, no lost
/// event. A shutting-down API server ends its own shutdown after 60 s whatever watches are
/// open, as it does for every controller, so a long watch costs it nothing.
pub const WATCH_TIMEOUT: Duration = Duration::from_secs(300);

/// The label that opts a CRD or XRD in to enforced evolution (value `enforce`).
pub const ENFORCE_LABEL: &str = "covenant.dev/evolution";

impl Default for Enforcement {
    fn default() -> Self {
        Enforcement { label: ENFORCE_LABEL.to_string(), groups: Vec::new(), composite_groups: Vec::new() }
    }
}

impl Enforcement {
    /// Whether a CRD or XRD (as it will be stored) is enforced.
    pub fn enforces(&self, doc: &serde_json::Value) -> bool {
        let labelled =
            doc.at("/metadata/labels").and_then(|l| l.get(&self.label)).and_then(serde_json::Value::as_str)
                == Some("enforce");
        let group = doc.at("/spec/group").and_then(serde_json::Value::as_str).unwrap_or_default();
        labelled || self.groups.iter().any(|g| g == group || g == "*")
    }
}

/// A config that could not be loaded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The file could not be read.
    #[error("cannot read config {path}: {source}")]
    Read {
        /// The path.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is invalid; every problem is listed.
    #[error("invalid config {path}: {} problem(s)\n{}", problems.len(), list(problems))]
    Invalid {
        /// The path.
        path: String,
        /// Every problem.
        problems: Vec<Problem>,
    },
    /// A registry the config names is invalid.
    #[error(transparent)]
    Registry(#[from] registry::Error),
}

fn list(problems: &[Problem]) -> String {
    problems.iter().map(|p| format!("  {p}")).collect::<Vec<_>>().join("\n")
}

impl Config {
    /// The kinds the rules read from the cluster on every request — the construct and
    /// consumer kinds, and the releases a binding froze — as (group, kind): what the live
    /// view watches and the background audit re-checks.
    pub fn cluster_kinds(&self) -> Vec<(String, String)> {
        let group = openchoreo::GROUP;
        self.construct_kinds
            .iter()
            .chain(&self.consumer_kinds)
            .map(String::as_str)
            .chain(["ComponentRelease"])
            .map(|k| (group.to_string(), k.to_string()))
            .collect()
    }

    /// The definitions (CRDs, XRDs) custom resources are validated against, as (group, kind):
    /// what `check` takes from the checked files and `--cluster`, and what the live view also
    /// follows when `customResources.admission` is on.
    pub fn definition_kinds(&self) -> Vec<(String, String)> {
        [
            ("apiextensions.k8s.io", "CustomResourceDefinition"),
            ("apiextensions.crossplane.io", "CompositeResourceDefinition"),
        ]
        .iter()
        .map(|(g, k)| (g.to_string(), k.to_string()))
        .collect()
    }

    /// The embedded default.
    pub fn embedded() -> Result<Config, Error> {
        Config::from_text("embedded default", DEFAULT_YAML, None)
    }

    /// Load a file.
    pub fn load(path: &Path) -> Result<Config, Error> {
        let text = crate::source::read_text(path)
            .map_err(|source| Error::Read { path: path.display().to_string(), source })?;
        Config::from_text(&path.display().to_string(), &text, path.parent())
    }

    /// Parse a config text. Relative registry paths are read from `base`.
    pub fn from_text(name: &str, text: &str, base: Option<&Path>) -> Result<Config, Error> {
        let invalid = |problems| Error::Invalid { path: name.to_string(), problems };
        let (docs, syntax) = parse_stream(text);
        if let Some(e) = syntax {
            return Err(invalid(vec![Problem { pointer: String::new(), at: Some(e.at), message: e.what() }]));
        }
        let [doc] = docs.as_slice() else {
            let message = format!("expected one Config document, found {}", docs.len());
            return Err(invalid(vec![Problem { pointer: String::new(), at: None, message }]));
        };
        let mut problems: Vec<Problem> = doc
            .duplicates
            .iter()
            .map(|d| Problem {
                pointer: d.pointer.clone(),
                at: Some(d.again),
                message: format!("key \"{}\" appears twice (first at line {})", d.key, d.first.line),
            })
            .collect();
        let (file, mut decode_problems) =
            strict::decode_all::<file::ConfigFile>(&doc.value, "Config", Some(&doc.positions));
        suggest_members(&mut decode_problems);
        problems.extend(decode_problems);
        let Some(file) = file else {
            return Err(invalid(problems));
        };
        let (mut config, registry_paths) = resolve(file, &doc.positions, base, &mut problems);
        if !problems.is_empty() {
            problems.sort_by(|a, b| a.at.cmp(&b.at).then_with(|| a.pointer.cmp(&b.pointer)));
            return Err(invalid(problems));
        }
        config.source = name.to_string();
        for path in registry_paths {
            config.registry.add_file(&path)?;
        }
        Ok(config)
    }
}

/// An undeclared member gets the nearest member the default config declares at the same
/// place: `maxReviewsInFlite` → did you mean "maxReviewsInFlight"?
fn suggest_members(problems: &mut [Problem]) {
    let Some(defaults) = parse_stream(DEFAULT_YAML).0.into_iter().next().map(|d| d.value) else { return };
    for p in problems.iter_mut().filter(|p| p.message.contains("is not declared")) {
        let (parent, member) = p.pointer.rsplit_once('/').unwrap_or(("", &p.pointer));
        let known = defaults.at(parent).and_then(serde_json::Value::as_object);
        let member = crate::pointer::unescape(member);
        if let Some(near) = known
            .and_then(|k| crate::suggest::closest(&member, k.keys().map(String::as_str)).first().cloned())
        {
            p.message.push_str(&format!("; did you mean \"{near}\"?"));
        }
    }
}

/// A duration as the config spells it (`2s`, `1m`), or what was expected, naming `example`.
fn duration(text: &str, example: &str) -> Result<Duration, String> {
    humantime::parse_duration(text)
        .map_err(|err| format!("expected a duration such as \"{example}\", found \"{text}\": {err}"))
}

fn resolve(
    file: file::ConfigFile,
    positions: &Positions,
    base: Option<&Path>,
    problems: &mut Vec<Problem>,
) -> (Config, Vec<PathBuf>) {
    let mut problem = |pointer: String, message: String| {
        problems.push(Problem { at: Some(positions.locate(&pointer)), pointer, message });
    };

    let selectors = |words: &[String], at: &str, problem: &mut dyn FnMut(String, String)| {
        words
            .iter()
            .enumerate()
            .filter_map(|(i, w)| Selector::parse(w).map_err(|e| problem(format!("{at}/{i}"), e)).ok())
            .collect::<Vec<_>>()
    };
    let select = selectors(&file.rules.select, "/rules/select", &mut problem);
    let ignore = selectors(&file.rules.ignore, "/rules/ignore", &mut problem);
    let mut actions = Vec::new();
    for (key, value) in &file.rules.actions {
        let pointer = format!("/rules/actions/{}", crate::pointer::escape(key));
        let selector = match Selector::parse(key) {
            Ok(s) => s,
            Err(e) => {
                problem(pointer, e);
                continue;
            }
        };
        let Ok(action) = value.parse::<Action>() else {
            let all: Vec<_> = Action::ALL.iter().map(|a| a.as_str()).collect();
            problem(pointer, format!("unknown action \"{value}\"; expected one of {}", quote_list(&all)));
            continue;
        };
        let is_mutation = match selector {
            Selector::Rule(r) => r.category == Category::Mutation,
            Selector::Category(c) => c == Category::Mutation,
        };
        match (is_mutation, action) {
            (true, Action::Mutate | Action::Off)
            | (false, Action::Deny | Action::Warn | Action::Audit | Action::Off) => {
                actions.push((selector, action))
            }
            (true, _) => {
                problem(pointer, format!("mutation rules take \"mutate\" or \"off\", found \"{value}\""))
            }
            (false, _) => problem(
                pointer,
                format!("\"mutate\" applies to mutation rules only; {key} takes deny, warn, audit or off"),
            ),
        }
    }

    let known: Vec<&str> = FAMILY_NAMES.iter().map(|(n, _)| *n).collect();
    let families: BTreeSet<String> = match &file.families {
        None => known.iter().map(|s| s.to_string()).collect(),
        Some(list) => list
            .iter()
            .enumerate()
            .filter_map(|(i, f)| {
                if known.contains(&f.as_str()) {
                    Some(f.clone())
                } else {
                    let hint = crate::suggest::hint(f, known.iter().copied());
                    problem(
                        format!("/families/{i}"),
                        format!("unknown family \"{f}\"{hint} (known: {})", quote_list(&known)),
                    );
                    None
                }
            })
            .collect(),
    };

    let mut exemptions = Vec::new();
    for (i, e) in file.exemptions.iter().enumerate() {
        let at = format!("/exemptions/{i}");
        let reason = match e.reason.as_deref().map(str::trim) {
            Some(r) if !r.is_empty() => r.to_string(),
            _ => {
                problem(at.clone(), "an exemption needs a \"reason\"".into());
                String::new()
            }
        };
        if e.namespaces.is_empty() && e.names.is_empty() && e.users.is_empty() && e.groups.is_empty() {
            problem(
                at.clone(),
                "an exemption must name namespaces, names, users or groups; an empty one would exempt everything"
                    .into(),
            );
        }
        let rules: Vec<Selector> = e
            .rules
            .iter()
            .enumerate()
            .filter_map(|(j, w)| {
                Selector::parse(w).map_err(|err| problem(format!("{at}/rules/{j}"), err)).ok()
            })
            .collect();
        let names = e
            .names
            .iter()
            .enumerate()
            .filter_map(|(j, n)| {
                Exemption::glob(n)
                    .map_err(|err| problem(format!("{at}/names/{j}"), format!("invalid glob \"{n}\": {err}")))
                    .ok()
            })
            .collect();
        let expires = e.expires.as_deref().and_then(|x| {
            humantime::parse_rfc3339_weak(x)
                .map_err(|err| {
                    problem(
                        format!("{at}/expires"),
                        format!(
                            "expected an RFC 3339 instant such as 2027-03-01T00:00:00Z, found \"{x}\": {err}"
                        ),
                    )
                })
                .ok()
        });
        exemptions.push(Exemption {
            namespaces: e.namespaces.clone(),
            names,
            users: e.users.clone(),
            groups: e.groups.clone(),
            rules,
            reason,
            expires,
        });
    }

    let mut stability: BTreeMap<String, Stability> = [
        ("crd", Stability::Always),
        ("xrd", Stability::Always),
        ("launcher", Stability::FromGa),
        ("construct", Stability::DeclaredBump),
    ]
    .into_iter()
    .map(|(f, p)| (f.to_string(), p))
    .collect();
    for (family, policy) in &file.stability {
        let at = format!("/stability/{}", crate::pointer::escape(family));
        if !FAMILY_NAMES.iter().any(|(f, _)| f == family) {
            let names: Vec<&str> = FAMILY_NAMES.iter().map(|(f, _)| *f).collect();
            problem(at.clone(), format!("unknown family \"{family}\"; families: {}", names.join(", ")));
            continue;
        }
        match Stability::parse(policy) {
            Some(p) => {
                stability.insert(family.clone(), p);
            }
            None => {
                let all: Vec<&str> = Stability::ALL.iter().map(|p| p.as_str()).collect();
                problem(at, format!("expected one of {}, found \"{policy}\"", all.join(", ")));
            }
        }
    }

    let default_kinds = |list: &[&str]| list.iter().map(|k| k.to_string()).collect::<Vec<_>>();
    let mut construct_kinds = default_kinds(&openchoreo::CONSTRUCT_KINDS);
    let mut consumer_kinds = default_kinds(&openchoreo::CONSUMER_KINDS);
    for (family, kinds) in &file.kinds {
        match family.as_str() {
            "construct" => construct_kinds = kinds.clone(),
            "consumer" => consumer_kinds = kinds.clone(),
            other => problem(
                format!("/kinds/{}", crate::pointer::escape(other)),
                format!(
                    "the kinds of family \"{other}\" are not configurable; expected construct or consumer"
                ),
            ),
        }
    }

    let lookup_budget = match file.cluster.lookup_budget.as_deref() {
        None => Duration::from_secs(2),
        Some(s) => duration(s, "2s").unwrap_or_else(|expected| {
            problem("/cluster/lookupBudget".into(), expected);
            Duration::ZERO
        }),
    };
    let failure_policy = match file.cluster.failure_policy.as_deref() {
        None | Some("deny") => FailurePolicy::Deny,
        Some("allow") => FailurePolicy::Allow,
        Some(other) => {
            problem(
                "/cluster/failurePolicy".into(),
                format!("expected \"deny\" or \"allow\", found \"{other}\""),
            );
            FailurePolicy::Deny
        }
    };
    let watch_timeout = match file.cluster.watch_timeout.as_deref() {
        None => WATCH_TIMEOUT,
        Some(s) => {
            let whole = duration(s, "5s").and_then(|d| {
                (d.subsec_nanos() == 0 && (1..=1800).contains(&d.as_secs()))
                    .then_some(d)
                    .ok_or_else(|| format!("expected whole seconds from 1s to 30m, found \"{s}\""))
            });
            whole.unwrap_or_else(|expected| {
                problem("/cluster/watchTimeout".into(), expected);
                WATCH_TIMEOUT
            })
        }
    };
    let body_limit = file.server.body_limit_bytes.unwrap_or(7 * 1024 * 1024);
    if body_limit < 1024 {
        problem("/server/bodyLimitBytes".into(), format!("expected at least 1024 bytes, found {body_limit}"));
    }
    let reviews_in_flight = file.server.max_reviews_in_flight.unwrap_or(32);
    if reviews_in_flight == 0 {
        problem("/server/maxReviewsInFlight".into(), "expected at least 1, found 0".to_string());
    }
    let buffered_bytes = file.server.max_buffered_bytes.unwrap_or(48 * 1024 * 1024);
    if buffered_bytes < body_limit {
        problem(
            "/server/maxBufferedBytes".into(),
            format!("expected at least server.bodyLimitBytes ({body_limit}), found {buffered_bytes}: a review of the largest accepted size could never be read"),
        );
    }

    let launcher_line = match file.launcher.version.as_deref() {
        None => LauncherLine::default(),
        Some(text) => LauncherLine::parse(text).unwrap_or_else(|| {
            problem(
                "/launcher/version".into(),
                format!("expected one of {}, found \"{text}\"", quote_list(&LauncherLine::names())),
            );
            LauncherLine::default()
        }),
    };

    let registry_paths: Vec<PathBuf> = file
        .registries
        .iter()
        .map(|r| match base {
            Some(b) if Path::new(r).is_relative() => b.join(r),
            _ => PathBuf::from(r),
        })
        .collect();
    let registry = match Registry::builtin() {
        Ok(r) => r,
        Err(e) => {
            problem(String::new(), e.to_string());
            Registry::default()
        }
    };
    (
        Config {
            source: String::new(),
            rules: RuleSet::build(&select, &ignore, &actions),
            families,
            stability,
            enforcement: Enforcement {
                label: file.evolution.enforce_label.clone().unwrap_or_else(|| ENFORCE_LABEL.to_string()),
                groups: file.evolution.enforce_groups.clone(),
                composite_groups: file.evolution.composite_groups.clone(),
            },
            construct_kinds,
            consumer_kinds,
            registry,
            exemptions,
            lookup_budget,
            failure_policy,
            watch_timeout,
            mutation_enabled: file.mutation.enabled.unwrap_or(true),
            release_labels: (
                file.mutation
                    .release_name_label
                    .clone()
                    .unwrap_or_else(|| openchoreo::RELEASE_LABELS.0.into()),
                file.mutation
                    .release_namespace_label
                    .clone()
                    .unwrap_or_else(|| openchoreo::RELEASE_LABELS.1.into()),
            ),
            body_limit,
            custom_resources: CustomResources {
                check: file.custom_resources.check.unwrap_or(true),
                admission: file.custom_resources.admission.unwrap_or(false),
            },
            kubernetes_kinds: file.kubernetes_kinds.check.unwrap_or(true),
            launcher_line,
            reviews_in_flight,
            buffered_bytes,
        },
        registry_paths,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::lookup;

    #[test]
    fn embedded_default_parses() {
        let c = Config::embedded().unwrap();
        assert!(c.families.contains("versioned"));
        assert_eq!(c.rules.action(lookup("CVN-213").unwrap()), Action::Warn);
    }

    #[test]
    fn all_problems_are_reported_together_with_suggestions() {
        let text = "apiVersion: covenant.dev/v1alpha1\nkind: Config\nrules:\n  select: [CVN-1O1]\n  actions:\n    CVN-102: block\n    CVN-501: deny\nfamilies: [versoned]\ncluster:\n  failurePolicy: maybe\n";
        let err = Config::from_text("c.yaml", text, None).unwrap_err().to_string();
        assert!(err.contains("4 problem(s)") || err.contains("5 problem(s)"), "{err}");
        assert!(err.contains("did you mean \"CVN-101\""), "{err}");
        assert!(err.contains("unknown action \"block\""), "{err}");
        assert!(err.contains("mutation rules take"), "{err}");
        assert!(err.contains("did you mean \"versioned\""), "{err}");
        assert!(err.contains("\"maybe\""), "{err}");
    }

    #[test]
    fn undeclared_members_are_refused_with_position() {
        let text = "apiVersion: covenant.dev/v1alpha1\nkind: Config\nrulez: {}\nserver:\n  bodyLimit: 5\n";
        let err = Config::from_text("c.yaml", text, None).unwrap_err().to_string();
        assert!(err.contains("3:1: /rulez: member \"rulez\" is not declared"), "{err}");
        assert!(err.contains("5:3: /server/bodyLimit"), "{err}");
    }

    #[test]
    fn another_config_version_is_refused_naming_both() {
        let err = Config::from_text("c.yaml", "apiVersion: covenant.dev/v1\nkind: Config\n", None)
            .unwrap_err()
            .to_string();
        assert!(err.contains("apiVersion \"covenant.dev/v1\" is not supported"), "{err}");
        assert!(err.contains("covenant.dev/v1alpha1"), "{err}");
    }

    #[test]
    fn exemption_without_reason_is_refused() {
        let text = "apiVersion: covenant.dev/v1alpha1\nkind: Config\nexemptions:\n  - namespaces: [a]\n";
        let err = Config::from_text("c.yaml", text, None).unwrap_err().to_string();
        assert!(err.contains("needs a \"reason\""), "{err}");
    }
}
