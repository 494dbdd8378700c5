//! The platform console: read-only HTML pages on the read API's listener that answer, per
//! construct, who uses which version, what a move to the newest version would need, and the
//! contract diff between two versions. Server-rendered (askama templates, every value
//! escaped), no script, no external asset. The pages show what `covenant status`, `covenant
//! upgrade` and `covenant diff --context` compute, through the same functions: the usage
//! picture of `usage::usage`, the plans of `upgrade`, the diff of the contract
//! door (`contract::between_published`) and its markdown rendering.

use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use serde_json::Value;

use super::state::AppState;

/// The console's routes, merged into the read API's router.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/platform", get(|| async { Redirect::permanent("/platform/") }))
        .route("/platform/", get(index))
        .route("/platform/{kind}/{name}", get(construct))
        .route("/platform/{kind}/{name}/compare", get(compare))
}

/// The most consumers a construct page plans a move for; the rest are counted.
const PLANNED_CONSUMERS: usize = 200;

/// What a path segment or query value keeps as it is: RFC 3986's unreserved characters.
const RESERVED: &percent_encoding::AsciiSet =
    &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');

/// A path segment or query value, percent-encoded for a URL (the template escapes it again
/// for HTML).
fn encoded(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, RESERVED).to_string()
}

/// The stable URL of a construct's page.
fn construct_href(kind: &str, namespace: Option<&str>, name: &str) -> String {
    let mut href = format!("/platform/{}/{}", encoded(kind), encoded(name));
    if let Some(ns) = namespace {
        href.push_str(&format!("?namespace={}", encoded(ns)));
    }
    href
}

/// The stable URL of a compare page.
fn compare_href(kind: &str, namespace: Option<&str>, name: &str, from: &str, to: &str) -> String {
    let mut href = format!(
        "/platform/{}/{}/compare?from_version={}&to={}",
        encoded(kind),
        encoded(name),
        encoded(from),
        encoded(to)
    );
    if let Some(ns) = namespace {
        href.push_str(&format!("&namespace={}", encoded(ns)));
    }
    href
}

/// A page: HTML with headers that keep it plain (no script may run, no frame may hold it).
fn page(status: StatusCode, template: &impl Template) -> Response {
    match template.render() {
        Ok(html) => {
            let mut response = (status, html).into_response();
            let headers = response.headers_mut();
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
            headers.insert(
                header::CONTENT_SECURITY_POLICY,
                HeaderValue::from_static(
                    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; frame-ancestors 'none'; form-action 'self'",
                ),
            );
            headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
            headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
            response
        }
        Err(e) => {
            tracing::error!(error = %e, "cannot render a console page");
            (StatusCode::INTERNAL_SERVER_ERROR, "cannot render the page\n").into_response()
        }
    }
}

/// A page that says what went wrong, with the status it went wrong with.
#[derive(Template)]
#[template(path = "console/problem.html")]
struct ProblemPage {
    title: String,
    detail: String,
    back: Option<(String, String)>,
}

fn problem(status: StatusCode, title: &str, detail: String, back: Option<(String, String)>) -> Response {
    page(status, &ProblemPage { title: title.to_string(), detail, back })
}

/// Run a read of the cluster view on the blocking pool (it may list through the API server):
/// its error made a page by `failed`, a job that failed a 500 page.
async fn off_worker<T: Send + 'static, E: Send + 'static>(
    work: impl FnOnce() -> Result<T, E> + Send + 'static,
    failed: impl FnOnce(E) -> Response,
) -> Result<T, Response> {
    match tokio::task::spawn_blocking(work).await {
        Ok(Ok(done)) => Ok(done),
        Ok(Err(e)) => Err(failed(e)),
        Err(e) => Err(problem(StatusCode::INTERNAL_SERVER_ERROR, "Request failed", e.to_string(), None)),
    }
}

/// A cluster view that cannot be read: what is published is unknown, never "nothing".
fn unreadable(e: crate::cluster::Error) -> Response {
    problem(StatusCode::SERVICE_UNAVAILABLE, "Cluster state unavailable", e.to_string(), None)
}

/// The usage picture.
async fn usage(state: &AppState) -> Result<Value, Response> {
    let (cluster, kinds) = (state.cluster.clone(), state.kinds.clone());
    off_worker(move || crate::usage::usage(cluster.as_ref(), &kinds.0, &kinds.1), unreadable).await
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or("-").to_string()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_string).collect()
}

/// One published version as the pages show it.
struct Version {
    version: String,
    object: String,
    default: bool,
    supported: bool,
    /// Whether the object declares a version (else it is part of the upgrade gap).
    declared: bool,
    pinned: Vec<String>,
    floating: Vec<String>,
    frozen: Vec<String>,
    /// Live consumers (pinned and floating): "Used by N".
    used_by: usize,
    /// The compare page from this version to the newest, below the newest.
    compare: Option<String>,
}

/// One unresolved reference.
struct Unresolved {
    consumer: String,
    pin: String,
    reason: String,
}

/// One construct of the usage picture.
struct Construct {
    kind: String,
    namespace: Option<String>,
    name: String,
    href: String,
    default: String,
    newest: String,
    window: String,
    versions: Vec<Version>,
    below_newest: u64,
    outside_window: u64,
    unresolved: Vec<Unresolved>,
    /// Consumers on versions outside the support window (borrowed time).
    borrowed: Vec<(String, String)>,
}

impl Construct {
    fn of(c: &Value) -> Construct {
        let (kind, name) = (text(&c["kind"]), text(&c["name"]));
        let namespace = c["namespace"].as_str().map(str::to_string);
        let newest = c["newest"].as_str().map(str::to_string);
        let versions: Vec<Version> = c["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|v| {
                let consumers = &v["consumers"];
                let (pinned, floating) = (strings(&consumers["pinned"]), strings(&consumers["floating"]));
                let version = text(&v["version"]);
                let declared = semver::Version::parse(&version).is_ok();
                let compare = newest
                    .as_deref()
                    .filter(|n| *n != version && declared)
                    .map(|n| compare_href(&kind, namespace.as_deref(), &name, &version, n));
                Version {
                    declared,
                    used_by: pinned.len() + floating.len(),
                    object: text(&v["object"]),
                    default: v["default"] == true,
                    supported: v["supported"] == true,
                    frozen: strings(&consumers["frozen"]),
                    pinned,
                    floating,
                    compare,
                    version,
                }
            })
            .collect();
        let borrowed = versions
            .iter()
            .filter(|v| v.declared && !v.supported)
            .flat_map(|v| v.pinned.iter().chain(&v.floating).map(|who| (who.clone(), v.version.clone())))
            .collect();
        let unresolved = c["unresolved"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|u| Unresolved {
                consumer: text(&u["consumer"]),
                pin: text(&u["pin"]),
                reason: text(&u["reason"]),
            })
            .collect();
        Construct {
            href: construct_href(&kind, namespace.as_deref(), &name),
            default: text(&c["default"]),
            newest: newest.unwrap_or_else(|| "-".into()),
            window: text(&c["window"]),
            below_newest: c["belowNewest"].as_u64().unwrap_or(0),
            outside_window: c["outsideWindow"].as_u64().unwrap_or(0),
            kind,
            namespace,
            name,
            versions,
            unresolved,
            borrowed,
        }
    }

    /// Whether some published version declares none (part of the upgrade gap).
    fn unversioned(&self) -> bool {
        self.versions.iter().any(|v| !v.declared)
    }
}

#[derive(Template)]
#[template(path = "console/index.html")]
struct IndexPage {
    constructs: Vec<Construct>,
    upgrade_gap: u64,
    consumers: usize,
    borrowed: usize,
    unresolved: usize,
    behind: u64,
}

async fn index(State(state): State<AppState>) -> Response {
    let usage = match usage(&state).await {
        Ok(u) => u,
        Err(failed) => return failed,
    };
    let constructs: Vec<Construct> =
        usage["constructs"].as_array().into_iter().flatten().map(Construct::of).collect();
    let page_data = IndexPage {
        upgrade_gap: usage["upgradeGap"].as_u64().unwrap_or(0),
        consumers: constructs.iter().flat_map(|c| &c.versions).map(|v| v.used_by).sum(),
        borrowed: constructs.iter().map(|c| c.borrowed.len()).sum(),
        unresolved: constructs.iter().map(|c| c.unresolved.len()).sum(),
        behind: constructs.iter().map(|c| c.below_newest).sum(),
        constructs,
    };
    page(StatusCode::OK, &page_data)
}

/// `?namespace=` of a construct page.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Scope {
    #[serde(default)]
    namespace: Option<String>,
}

/// A consumer's move to the newest supported version, as the construct page shows it.
struct Move {
    consumer: String,
    pointer: String,
    pin: String,
    from: String,
    to: String,
    new_pin: String,
    implied: String,
    applies: bool,
    /// What stops it (or warns): `CVN-101 /spec/parameters/x: …`.
    findings: Vec<String>,
    compare: String,
}

#[derive(Template)]
#[template(path = "console/construct.html")]
struct ConstructPage {
    construct: Construct,
    moves: Vec<Move>,
    /// Consumers whose plan could not be made, and why.
    unplanned: Vec<(String, String)>,
    /// Consumers past the planning cap.
    more: usize,
    /// Consumers already at the newest (or with nothing to move).
    current: usize,
}

async fn construct(
    State(state): State<AppState>,
    Path((kind, name)): Path<(String, String)>,
    Query(scope): Query<Scope>,
) -> Response {
    let usage = match usage(&state).await {
        Ok(u) => u,
        Err(failed) => return failed,
    };
    let found = usage["constructs"].as_array().into_iter().flatten().find(|c| {
        c["kind"] == kind.as_str()
            && c["name"] == name.as_str()
            && (scope.namespace.is_none() || c["namespace"].as_str() == scope.namespace.as_deref())
    });
    let Some(construct) = found.map(Construct::of) else {
        let known: Vec<String> = usage["constructs"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| format!("{} {}", text(&c["kind"]), text(&c["name"])))
            .collect();
        let detail = if known.is_empty() {
            format!("no {kind} named \"{name}\" is published; nothing is published here")
        } else {
            format!("no {kind} named \"{name}\" is published; published: {}", known.join(", "))
        };
        return problem(
            StatusCode::NOT_FOUND,
            "Not published",
            detail,
            Some(("/platform/".into(), "All constructs".into())),
        );
    };
    let (cluster, engine, kinds) = (state.cluster.clone(), state.engine.clone(), state.kinds.clone());
    let (k, ns, n) = (construct.kind.clone(), construct.namespace.clone(), construct.name.clone());
    let planned = off_worker(
        move || {
            crate::upgrade::of_construct(
                &engine,
                cluster.as_ref(),
                &kinds.1,
                &k,
                ns.as_deref(),
                &n,
                PLANNED_CONSUMERS,
            )
        },
        unreadable,
    )
    .await;
    let (consumers, more) = match planned {
        Ok(planned) => planned,
        Err(page) => return page,
    };
    let (mut moves, mut unplanned, mut current) = (Vec::new(), Vec::new(), 0);
    for (who, plans) in consumers {
        if plans.is_empty() {
            current += 1;
        }
        for plan in plans {
            match plan {
                Ok(p) => moves.push(Move {
                    consumer: who.clone(),
                    compare: compare_href(
                        &construct.kind,
                        construct.namespace.as_deref(),
                        &construct.name,
                        &p.from.to_string(),
                        &p.to.to_string(),
                    ),
                    pointer: p.pointer.clone(),
                    pin: if p.pin.is_empty() { "(floating)".into() } else { format!("\"{}\"", p.pin) },
                    from: p.from.to_string(),
                    to: p.to.to_string(),
                    new_pin: p.new_pin.clone(),
                    implied: p.diff.implied().as_str().to_string(),
                    applies: p.applies(),
                    findings: p
                        .findings
                        .iter()
                        .map(|f| (String::new(), f))
                        .chain(
                            p.bindings
                                .iter()
                                .flat_map(|(b, fs)| fs.iter().map(move |f| (format!("{b}: "), f))),
                        )
                        .map(|(binding, f)| {
                            format!(
                                "{binding}{} {} {}: {}",
                                f.action.as_str(),
                                f.rule.id,
                                f.pointer,
                                f.message
                            )
                        })
                        .collect(),
                }),
                Err(why) => unplanned.push((who.clone(), why)),
            }
        }
    }
    page(StatusCode::OK, &ConstructPage { construct, moves, unplanned, more, current })
}

/// `?from_version=&to=&namespace=` of a compare page.
#[derive(Debug, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CompareQuery {
    #[serde(default)]
    from_version: Option<String>,
    #[serde(default)]
    to: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
}

/// One row of the diff table.
struct DiffRow {
    version: String,
    bump: String,
    rule: String,
    change: String,
    field: String,
    what: String,
    refused: bool,
}

#[derive(Template)]
#[template(path = "console/compare.html")]
struct ComparePage {
    kind: String,
    name: String,
    back: String,
    from: String,
    to: String,
    title: String,
    implied: String,
    declared: String,
    verdict: String,
    policy: String,
    advisory: Option<String>,
    notes: Vec<(String, String, bool)>,
    rows: Vec<DiffRow>,
    /// The pull-request body: `covenant diff --context … --output markdown`'s bytes.
    markdown: String,
}

async fn compare(
    State(state): State<AppState>,
    Path((kind, name)): Path<(String, String)>,
    Query(q): Query<CompareQuery>,
) -> Response {
    let back = construct_href(&kind, q.namespace.as_deref(), &name);
    let (Some(from), Some(to)) = (q.from_version.clone(), q.to.clone()) else {
        let detail = "a comparison names two published versions: ?from_version=1.1.0&to=2.0.0".to_string();
        return problem(
            StatusCode::BAD_REQUEST,
            "Two versions needed",
            detail,
            Some((back, format!("{kind} {name}"))),
        );
    };
    let (cluster, engine) = (state.cluster.clone(), state.engine.clone());
    let (k, n, ns) = (kind.clone(), name.clone(), q.namespace.clone());
    let (f, t) = (from.clone(), to.clone());
    let not_compared = {
        let back = (back.clone(), format!("{kind} {name}"));
        move |why| {
            let p = super::problem::Problem::uncompared(why);
            let status = StatusCode::from_u16(p.status).unwrap_or(StatusCode::BAD_REQUEST);
            problem(status, p.title, p.detail, Some(back))
        }
    };
    let diff = off_worker(
        move || {
            crate::contract::between_published(
                cluster.as_ref(),
                engine.policy(),
                Some(&k),
                ns.as_deref(),
                &n,
                &f,
                &t,
            )
        },
        not_compared,
    )
    .await;
    let d = match diff {
        Ok(d) => d,
        Err(page) => return page,
    };
    let rows = d
        .rows
        .iter()
        .map(|r| DiffRow {
            version: r.version.clone().unwrap_or_else(|| "-".into()),
            bump: r.judged.bump.as_str().to_string(),
            rule: r.judged.rule.unwrap_or("-").to_string(),
            change: r.judged.change.kind.as_str().to_string(),
            field: crate::rules::evolution::readable(&r.judged.change.pointer),
            what: r.judged.message(),
            refused: r.refused,
        })
        .collect();
    let page_data = ComparePage {
        back,
        title: d.title.clone(),
        implied: d.implied().as_str().to_string(),
        declared: d.declared.map(|b| b.as_str().to_string()).unwrap_or_else(|| "none".into()),
        verdict: d.verdict().to_string(),
        policy: d.policy.as_str().to_string(),
        advisory: d.advisory.clone(),
        notes: d.notes.iter().map(|n| (n.rule.to_string(), n.message.clone(), n.refused)).collect(),
        rows,
        markdown: crate::report::diff::render_markdown(&d),
        kind,
        name,
        from,
        to,
    };
    page(StatusCode::OK, &page_data)
}
