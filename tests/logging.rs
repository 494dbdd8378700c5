//! What covenant logs never carries what it judges: every log line of a server answering
//! real traffic is captured at TRACE (covenant's and its dependencies': hyper, h2, rustls) —
//! reviews allowed, denied and patched, malformed and truncated bodies, wrong envelope types,
//! a refused body — and no line holds a Secret's data at any level, nor any object's
//! contents at info level or above.
//!
//! One test in its own binary: the capture is the process's global subscriber.

#[path = "integration/common/mod.rs"]
mod common;

use std::io::Write;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tracing_subscriber::fmt::MakeWriter;

/// Every line written, with the level it was written at.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Capture {
    type Writer = Capture;
    fn make_writer(&'a self) -> Capture {
        self.clone()
    }
}

const SECRET_VALUE: &str = "hunter2-sentinel-secret";
const SECRET_B64: &str = "aHVudGVyMi1zZW50aW5lbC1zZWNyZXQ=";
const OBJECT_VALUE: &str = "object-content-sentinel";

#[tokio::test(flavor = "multi_thread")]
async fn no_secret_at_any_level_and_no_object_content_at_info() {
    let capture = Capture::default();
    tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(capture.clone())
        .with_ansi(false)
        .json()
        .init();

    let server = common::TestServer::with(common::Setup {
        config: covenant::config::Config::from_text(
            "c.yaml",
            "apiVersion: covenant.dev/v1alpha1\nkind: Config\nrules:\n  actions: {CVN-501: mutate, CVN-502: mutate}\n",
            None,
        )
        .unwrap(),
        ..common::Setup::default()
    })
    .await;
    let url = |route: &str| server.url(route);
    let secret = json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "db", "namespace": "default", "annotations": {"note": SECRET_VALUE}},
        "data": {"password": SECRET_B64}, "stringData": {"token": SECRET_VALUE}});
    let secret_review = common::review("s-1", "", "Secret", secret.clone());
    // A Workload whose floating image is denied (CVN-407): the finding quotes the image.
    let component = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Workload",
        "metadata": {"name": "web", "namespace": "default", "labels": {"sentinel": OBJECT_VALUE}},
        "spec": {"owner": {"projectName": "p", "componentName": "web"},
                 "container": {"image": format!("ghcr.io/acme/{OBJECT_VALUE}:latest")}}});
    let mut component_review = common::review("c-1", "openchoreo.dev", "Workload", component);
    component_review["request"]["kind"]["version"] = json!("v1alpha1");

    let mut bodies: Vec<(String, String)> = Vec::new();
    for review in [&secret_review, &component_review] {
        let text = review.to_string();
        for route in ["/api/v0/validate", "/api/v0/mutate"] {
            bodies.push((route.into(), text.clone()));
            // Truncated inside the object.
            let cut = text.find(OBJECT_VALUE).or_else(|| text.find(SECRET_VALUE)).unwrap() + 6;
            bodies.push((route.into(), text[..cut].to_string()));
        }
        // An undeclared envelope member, and a wrong type next to the object.
        let mut v: Value = review.clone();
        v["request"]["surprise"] = json!(SECRET_VALUE);
        bodies.push(("/api/v0/validate".into(), v.to_string()));
        let mut v: Value = review.clone();
        v["request"]["dryRun"] = json!(SECRET_VALUE);
        bodies.push(("/api/v0/validate".into(), v.to_string()));
    }
    let mut answered = 0;
    for (route, body) in &bodies {
        for client in [server.h1(), server.h2()] {
            let resp = common::post(&client, &url(route), body.clone()).await;
            assert!(resp.status().as_u16() < 500);
            answered += 1;
        }
    }
    assert_eq!(answered, 24);
    // Denied: the answer carries the finding and its quote, the log does not.
    let resp = common::post(&server.h2(), &url("/api/v0/validate"), component_review.to_string()).await;
    let got: Value = resp.json().await.unwrap();
    assert_eq!(got["response"]["allowed"], false, "{got}");
    assert!(got["response"]["status"]["message"].as_str().unwrap().contains(OBJECT_VALUE), "{got}");

    let text = String::from_utf8(capture.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert!(lines.len() > 50, "the capture holds the traffic's log: {} lines", lines.len());
    assert!(
        lines.iter().any(
            |l| l["level"] == "TRACE" && l["target"].as_str().is_some_and(|t| !t.starts_with("covenant"))
        ),
        "dependencies' trace lines are captured too"
    );
    assert!(
        lines.iter().any(|l| l["fields"]["message"] == "review answered"),
        "covenant's own lines are captured"
    );
    // A review gets its line at info when it drew a finding, at debug when it drew none.
    let answered: Vec<&Value> = lines
        .iter()
        .filter(|l| l["fields"]["message"] == "review answered" && l["fields"]["webhook"] == "validate")
        .collect();
    let clean = |l: &Value| l["fields"]["rules"] == "[]" && l["fields"]["audited"] == 0;
    assert!(answered.iter().any(|l| l["level"] == "INFO" && l["fields"]["allowed"] == false), "{answered:?}");
    assert!(answered.iter().any(|l| l["level"] == "DEBUG"), "{answered:?}");
    for l in &answered {
        assert_eq!(l["level"] == "DEBUG", clean(l), "{l}");
    }
    for line in &lines {
        let raw = line.to_string();
        for s in [SECRET_VALUE, SECRET_B64] {
            assert!(!raw.contains(s), "a Secret's data was logged: {raw}");
        }
        if matches!(line["level"].as_str(), Some("INFO" | "WARN" | "ERROR")) {
            assert!(!raw.contains(OBJECT_VALUE), "object contents logged at {}: {raw}", line["level"]);
        }
    }
}
