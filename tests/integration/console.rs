//! The platform console (`/platform/…` on the read API's listener): what each page answers,
//! that object-supplied strings are shown as text, that its markdown is the bytes `covenant
//! diff` and `covenant upgrade` print — and, with Debian's chromium and chromedriver, what a
//! person sees in a real browser (`make console-test`, which `.ci/run` runs).

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use covenant::cluster::OfflineCluster;

use crate::common;

fn platform() -> std::path::PathBuf {
    common::fixtures().join("console")
}

/// What `covenant ARGS` prints, asserting it exits `code`.
fn covenant(args: &[&str], code: i32) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_covenant")).args(args).output().unwrap();
    assert_eq!(out.status.code(), Some(code), "covenant {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// The text of an HTML fragment the templates escaped (they write `&#NN;` for `& < > " '`).
fn unescaped(html: &str) -> String {
    html.replace("&#60;", "<")
        .replace("&#62;", ">")
        .replace("&#34;", "\"")
        .replace("&#39;", "'")
        .replace("&#38;", "&")
}

/// The pull-request body a compare page offers: its textarea's text.
fn offered_markdown(page: &str) -> String {
    let start = page.find("<textarea id=\"markdown\"").expect("no markdown on the page");
    let body = &page[start..];
    let body = &body[body.find('>').unwrap() + 1..body.find("</textarea>").unwrap()];
    unescaped(body)
}

/// What `covenant diff --context … ruby-service 1.1.0 2.1.0 --output markdown` prints.
fn diff_markdown() -> String {
    let context = platform();
    covenant(
        &[
            "diff",
            "--context",
            context.to_str().unwrap(),
            "ruby-service",
            "1.1.0",
            "2.1.0",
            "--output",
            "markdown",
        ],
        0,
    )
}

async fn get(url: &str) -> (u16, String, reqwest::header::HeaderMap) {
    let r = reqwest::get(url).await.unwrap();
    let (status, headers) = (r.status().as_u16(), r.headers().clone());
    (status, r.text().await.unwrap(), headers)
}

/// Each page over the fixtures' platform: the counts of `covenant status`, consumers per
/// version, the moves, the diff; strings that hold markup shown as text; bad requests a page
/// with a 4xx that says what is published.
#[tokio::test]
async fn the_console_pages_answer_from_the_same_functions_as_the_cli() {
    let cluster: Arc<dyn covenant::cluster::ClusterView> =
        Arc::new(OfflineCluster::load_dir(&platform()).unwrap());
    let server =
        common::TestServer::with(common::Setup { cluster: Some(cluster), ..common::Setup::default() }).await;
    let base = format!("http://{}", server.api);

    let (status, index, headers) = get(&format!("{base}/platform/")).await;
    assert_eq!(status, 200, "{index}");
    assert_eq!(headers["content-type"], "text/html; charset=utf-8");
    assert!(headers["content-security-policy"].to_str().unwrap().starts_with("default-src 'none'"));
    // The figures `covenant status` gives for the same folder.
    let usage: serde_json::Value = serde_json::from_str(&covenant(
        &["status", "--output", "json", "--context", platform().to_str().unwrap()],
        0,
    ))
    .unwrap();
    assert_eq!(usage["upgradeGap"], 1);
    for (id, value) in [
        ("constructs", "3"),
        ("consumers", "4"),
        ("behind", "3"),
        ("borrowed", "3"),
        ("unresolved", "2"),
        ("upgrade-gap", "1"),
    ] {
        assert!(index.contains(&format!("<dd id=\"{id}\">{value}</dd>")), "{id} = {value}: {index}");
    }
    // Markup in a name and a pin is text, never markup.
    assert!(!index.contains("<script>") && !index.contains("<em>legacy"), "{index}");
    assert!(index.contains("&#60;em&#62;legacy&#60;/em&#62;-sidecar"), "{index}");
    assert!(index.contains("<code>&#60;script&#62;alert(1)&#60;/script&#62;</code>"), "{index}");
    assert!(index.contains("href=\"/platform/ClusterTrait/%3Cem%3Elegacy%3C%2Fem%3E-sidecar\""), "{index}");
    assert!(
        index.contains("<a href=\"/platform/ClusterComponentType/ruby-service\">ruby-service</a>"),
        "{index}"
    );

    let (status, page, _) = get(&format!("{base}/platform/ClusterComponentType/ruby-service")).await;
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("<td class=\"used-by\">1</td>") && page.contains("<td class=\"used-by\">3</td>"),
        "{page}"
    );
    assert!(page.contains("Component bakery/web (pin &#34;2&#34;)"), "{page}");
    assert!(page.contains("ComponentRelease chess/chess-render-7449b895f4"), "{page}");
    // The moves `covenant upgrade` plans for the same consumers: oven's would not apply.
    let upgrade = covenant(
        &[
            "upgrade",
            "--output",
            "json",
            "--context",
            platform().to_str().unwrap(),
            platform().join("apps.yaml").to_str().unwrap(),
            "--skip-unplannable",
        ],
        0,
    );
    let plans: serde_json::Value = serde_json::from_str(&upgrade).unwrap();
    let oven = plans.as_array().unwrap().iter().find(|p| p["consumer"] == "Component bakery/oven").unwrap();
    assert_eq!(oven["applies"], false);
    let moves = &page[page.find("id=\"moves-table\"").expect("no moves table")..];
    let row = &moves[moves.find("Component bakery/oven").unwrap()..];
    let row = &row[..row.find("</tr>").unwrap()];
    assert!(
        row.contains("<span class=\"no\">no</span>") && row.contains("CVN-107 /spec/parameters/sizeClass"),
        "{row}"
    );
    for applies in ["Component bakery/api", "Component bakery/jobs"] {
        let row = &moves[moves.find(applies).unwrap()..];
        assert!(row[..row.find("</tr>").unwrap()].contains("<span class=\"yes\">yes</span>"), "{applies}");
    }

    // The compare page offers the bytes `covenant diff --context` prints, which are the
    // diff in the upgrade pull-request body and what /api/v0/compare answers.
    let (status, page, _) = get(&format!(
        "{base}/platform/ClusterComponentType/ruby-service/compare?from_version=1.1.0&to=2.1.0"
    ))
    .await;
    assert_eq!(status, 200, "{page}");
    assert!(
        page.contains("<dd id=\"implied\">MAJOR</dd>") && page.contains("<dd id=\"declared\">MAJOR</dd>")
    );
    assert!(
        page.contains("template (implementation) of &#34;rendered.deployment&#34; changed"),
        "implementation rows shown"
    );
    let markdown = offered_markdown(&page);
    let cli = diff_markdown();
    assert_eq!(markdown, cli);
    let pull_request = covenant(
        &[
            "upgrade",
            "--output",
            "markdown",
            "--context",
            platform().to_str().unwrap(),
            platform().join("apps.yaml").to_str().unwrap(),
            "--skip-unplannable",
        ],
        0,
    );
    assert!(pull_request.contains(&format!("\n{cli}")), "{pull_request}");
    let (_, api, _) =
        get(&format!("{base}/api/v0/compare?name=ruby-service&from=1.1.0&to=2.1.0&output=markdown")).await;
    assert_eq!(api, cli);

    // Requests that name nothing published: a page naming what is, with a 4xx status.
    for (path, status, says) in [
        (
            "ClusterComponentType/ruby-service/compare?from_version=1.1.0&to=3.0.0",
            404,
            "published: 1.1.0, 2.1.0",
        ),
        ("ClusterComponentType/ruby-service/compare?from_version=1.1.0", 400, "names two published versions"),
        ("Deployment/ruby-service/compare?from_version=1.1.0&to=2.1.0", 400, "is not a construct kind"),
        ("ClusterComponentType/no-such", 404, "published: ClusterComponentType ruby-service"),
        ("ClusterComponentType/ruby-service?color=red", 400, "unknown field"),
    ] {
        let (code, page, headers) = get(&format!("{base}/platform/{path}")).await;
        assert_eq!(code, status, "{path}: {page}");
        assert!(unescaped(&page).contains(says) || page.contains(says), "{path}: {page}");
        if code != 400 || !path.contains("color") {
            assert_eq!(headers["content-type"], "text/html; charset=utf-8", "{path}");
        }
    }
    let r = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let r = r.get(format!("{base}/platform")).send().await.unwrap();
    assert_eq!((r.status().as_u16(), r.headers()["location"].to_str().unwrap()), (308, "/platform/"));
}

/// chromedriver on a free port, stopped when dropped.
struct Driver {
    child: std::process::Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn chromedriver() -> Driver {
    let binary = std::env::var("CHROMEDRIVER").unwrap_or_else(|_| "/usr/bin/chromedriver".into());
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let child = Command::new(&binary)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot start {binary} ({e}): install Debian's chromium and chromium-driver")
        });
    let url = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < deadline, "chromedriver did not listen on {port}");
        std::thread::sleep(Duration::from_millis(50));
    }
    Driver { child, url }
}

/// chromedriver's record of the page's console (`goog:loggingPrefs` asks it to keep one).
#[derive(Debug)]
struct BrowserLog;

impl fantoccini::wd::WebDriverCompatibleCommand for BrowserLog {
    fn endpoint(&self, base: &url::Url, session: Option<&str>) -> Result<url::Url, url::ParseError> {
        base.join(&format!("session/{}/se/log", session.unwrap_or_default()))
    }

    fn method_and_body(&self, _: &url::Url) -> (http::Method, Option<String>) {
        (http::Method::POST, Some(r#"{"type":"browser"}"#.to_string()))
    }
}

/// Whatever the page logged at warning or above since the last ask.
async fn console_errors(browser: &fantoccini::Client) -> Vec<String> {
    let log = browser.issue_cmd(BrowserLog).await.unwrap();
    log.as_array()
        .into_iter()
        .flatten()
        .filter(|e| matches!(e["level"].as_str(), Some("SEVERE" | "WARNING")))
        .map(|e| e["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Where the screenshots go: CI keeps them as artefacts.
fn screenshots() -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/console-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Load the page at `url` as a person would at desktop and phone width: no console error, no
/// sideways scrolling at phone width, a screenshot of each.
async fn look(browser: &fantoccini::Client, url: &str, name: &str) {
    for (width, height, suffix) in [(1280, 900, ""), (390, 844, "-phone")] {
        browser.set_window_size(width, height).await.unwrap();
        browser.goto(url).await.unwrap();
        // What reaches past the right edge (a table scrolls inside its own box, not the page).
        let wide = browser
            .execute(
                "const w = document.documentElement.clientWidth; return [...document.querySelectorAll('body *')].filter(e => !(e.parentElement && e.parentElement.closest('.scroll')) && e.getBoundingClientRect().right > w + 1).map(e => e.tagName + (e.id ? '#' + e.id : ''));",
                vec![],
            )
            .await
            .unwrap();
        assert_eq!(wide, serde_json::json!([]), "{name} scrolls sideways at {width} px");
        let png = browser.screenshot().await.unwrap();
        std::fs::write(screenshots().join(format!("{name}{suffix}.png")), png).unwrap();
        assert_eq!(console_errors(browser).await, Vec::<String>::new(), "{name} at {width} px");
    }
    browser.set_window_size(1280, 900).await.unwrap();
    browser.goto(url).await.unwrap();
}

async fn text_of(browser: &fantoccini::Client, css: &str) -> String {
    browser
        .find(fantoccini::Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
        .text()
        .await
        .unwrap()
}

/// The console in Debian's chromium, headless, driven through chromedriver: the counts and
/// rows a person reads, links followed by clicking, markup shown as text, the markdown offered
/// for copying byte-identical to `covenant diff`, readable at phone width, no console error.
#[tokio::test]
#[ignore = "needs Debian's chromium and chromium-driver: make console-test (CI runs it)"]
async fn a_person_reads_the_console_in_a_real_browser() {
    let certs = tempfile::tempdir().unwrap();
    let served =
        crate::common::dev::DevServer::start(certs.path(), &["--context", platform().to_str().unwrap()]);
    let console = format!("http://{}/platform/", served.addr("console"));
    let driver = chromedriver();
    let profile = tempfile::tempdir().unwrap();
    let mut caps = serde_json::Map::new();
    let binary = std::env::var("CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".into());
    caps.insert(
        "goog:chromeOptions".into(),
        serde_json::json!({"binary": binary, "args": [
            "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
            format!("--user-data-dir={}", profile.path().display())]}),
    );
    caps.insert("goog:loggingPrefs".into(), serde_json::json!({"browser": "ALL"}));
    let browser = fantoccini::ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
        .capabilities(caps)
        .connect(&driver.url)
        .await
        .expect("chromedriver started no session");

    look(&browser, &console, "platform").await;
    assert_eq!(text_of(&browser, "h1").await, "Platform constructs");
    for (id, value) in [
        ("constructs", "3"),
        ("consumers", "4"),
        ("borrowed", "3"),
        ("unresolved", "2"),
        ("upgrade-gap", "1"),
    ] {
        assert_eq!(text_of(&browser, &format!("#{id}")).await, value, "#{id}");
    }
    let table = text_of(&browser, "#constructs-table").await;
    assert!(table.contains("<em>legacy</em>-sidecar"), "markup is shown as text: {table}");
    let marked = browser.find_all(fantoccini::Locator::Css("main em, main script")).await.unwrap();
    assert!(marked.is_empty(), "object-supplied markup became elements");
    assert!(text_of(&browser, "#unresolved-pins + div").await.contains("<script>alert(1)</script>"));

    // Follow the links a person would click: the construct, then its compare link.
    browser.find(fantoccini::Locator::LinkText("ruby-service")).await.unwrap().click().await.unwrap();
    let here = browser.current_url().await.unwrap();
    assert_eq!(here.path(), "/platform/ClusterComponentType/ruby-service");
    look(&browser, here.as_str(), "construct").await;
    assert_eq!(text_of(&browser, "h1").await, "ClusterComponentType ruby-service");
    assert_eq!(text_of(&browser, "#v-2\\.1\\.0 .used-by").await, "1");
    assert_eq!(text_of(&browser, "#v-1\\.1\\.0 .used-by").await, "3");
    let moves = text_of(&browser, "#moves-table").await;
    assert!(moves.contains("Component bakery/oven") && moves.contains("CVN-107"), "{moves}");

    browser.find(fantoccini::Locator::Css("#v-1\\.1\\.0 a")).await.unwrap().click().await.unwrap();
    let here = browser.current_url().await.unwrap();
    assert_eq!(here.path(), "/platform/ClusterComponentType/ruby-service/compare");
    look(&browser, here.as_str(), "compare").await;
    assert_eq!(text_of(&browser, "h1").await, "ruby-service: 1.1.0 → 2.1.0");
    assert_eq!(text_of(&browser, "#implied").await, "MAJOR");
    assert_eq!(text_of(&browser, "#declared").await, "MAJOR");
    let offered =
        browser.find(fantoccini::Locator::Css("#markdown")).await.unwrap().prop("value").await.unwrap();
    let cli = diff_markdown();
    assert_eq!(offered.as_deref(), Some(cli.as_str()), "the markdown offered is the CLI's, byte for byte");

    // A version that is not published: the page says what is.
    let bad = format!("{console}ClusterComponentType/ruby-service/compare?from_version=1.1.0&to=9.9.9");
    browser.goto(&bad).await.unwrap();
    assert!(text_of(&browser, "#detail").await.contains("published: 1.1.0, 2.1.0"));
    // A document answered 404 is logged to the console as an error: the check above sees
    // what the browser logs (it is not reading an empty record).
    let logged = console_errors(&browser).await;
    assert!(logged.iter().any(|m| m.contains("404")), "the 404 was not logged: {logged:?}");
    browser
        .find(fantoccini::Locator::LinkText("ClusterComponentType ruby-service"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    assert_eq!(browser.current_url().await.unwrap().path(), "/platform/ClusterComponentType/ruby-service");
    browser.close().await.unwrap();
    drop(driver);
    drop(served);
}
