//! Bad input over the wire: a real TLS server on loopback takes truncated bodies, a wrong JSON
//! type in every member of the review envelope, deeply nested JSON, a 10 MB body, clients that
//! send their headers or body a byte at a time, clients that never finish the TLS handshake
//! or never send a byte after it, idle HTTP/2 connections, more connections than the cap,
//! schemas of 2^40 paths through shared definitions, reviews that outlast their deadline or
//! the in-flight limit, and SIGTERM mid-review. Every refusal is a problem document, nothing is
//! a 500, and throughout the server keeps answering everyone else.

use crate::common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{post, Setup, TestServer};
use serde_json::{json, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn sample() -> Value {
    let text =
        std::fs::read_to_string(common::fixtures().join("admission/kube-rs/v1-create-pod-gke.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// The server still answers a well-formed review, promptly.
async fn still_answers(server: &TestServer) {
    let started = Instant::now();
    let resp = post(&server.h2(), &server.url("/api/v0/validate"), sample().to_string()).await;
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["response"]["uid"], sample()["request"]["uid"]);
    assert!(started.elapsed() < Duration::from_secs(5), "answered in {:?}", started.elapsed());
}

/// A refusal: a problem document with a 4xx status; returns (status, detail).
async fn refusal(resp: reqwest::Response) -> (u16, String) {
    let status = resp.status().as_u16();
    assert!((400..500).contains(&status), "status {status}");
    assert_eq!(resp.headers()["content-type"], "application/problem+json");
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["status"], status);
    (status, body["detail"].as_str().unwrap_or_default().to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn truncated_reviews_are_refused_as_400_and_name_where_they_end() {
    let server = TestServer::start().await;
    let c = server.h1();
    let url = server.url("/api/v0/validate");
    for path in common::corpus_reviews() {
        let bytes = std::fs::read(&path).unwrap();
        let len = bytes.len();
        for cut in [1, len / 7, len / 3, len / 2, len - len / 5, len - 2] {
            let resp = post(&c, &url, bytes[..cut].to_vec()).await;
            let (status, detail) = refusal(resp).await;
            assert_eq!(status, 400, "{} cut at {cut}", path.display());
            assert!(detail.contains("line") || detail.contains("EOF"), "{}: {detail}", path.display());
        }
    }
    still_answers(&server).await;
}

/// Every member of the envelope (outside the objects it carries) with its JSON pointer.
fn envelope_members(v: &Value, at: String, out: &mut Vec<String>) {
    if let Value::Object(map) = v {
        for (k, child) in map {
            let here = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
            // The objects under review, and the options, are the apiserver's to shape.
            if ["/request/object", "/request/oldObject", "/request/options"].contains(&here.as_str()) {
                continue;
            }
            out.push(here.clone());
            envelope_members(child, here, out);
        }
    }
}

fn same_type(a: &Value, b: &Value) -> bool {
    std::mem::discriminant(a) == std::mem::discriminant(b)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrong_json_type_in_any_envelope_member_is_a_400_naming_it() {
    let server = TestServer::start().await;
    let c = server.h2();
    let url = server.url("/api/v0/validate");
    let original = sample();
    let mut members = Vec::new();
    envelope_members(&original, String::new(), &mut members);
    assert!(members.len() >= 20, "{members:?}");
    let wrong = [json!(5), json!(true), json!(["x"]), json!({"x": 1}), json!("x")];
    let mut refused = 0;
    for member in &members {
        let found = original.pointer(member).unwrap();
        for value in wrong.iter().filter(|w| !same_type(w, found)) {
            let mut review = original.clone();
            *review.pointer_mut(member).unwrap() = value.clone();
            let resp = post(&c, &url, review.to_string()).await;
            let (status, detail) = refusal(resp).await;
            assert_eq!(status, 400, "{member} = {value}");
            let last = member.rsplit('/').next().unwrap().replace("~1", "/").replace("~0", "~");
            assert!(detail.contains(&last), "{member} = {value}: {detail}");
            refused += 1;
        }
    }
    assert!(refused >= 80, "{refused}");
    still_answers(&server).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn deep_nesting_is_refused_and_shallow_nesting_is_judged() {
    let server = TestServer::start().await;
    let c = server.h1();
    let url = server.url("/api/v0/validate");
    // 100 000 levels as the body: not an object, refused at the first byte. Inside the object
    // under review: the parser's depth limit refuses it before anything recurses further.
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let (status, detail) = refusal(post(&c, &url, deep.clone()).await).await;
    assert_eq!(status, 400);
    assert!(detail.contains("expected a JSON object"), "{detail}");
    // Inside an object no rule concerns: never parsed, so answered.
    let mut review = sample();
    review["request"]["object"]["deep"] = json!("PLACEHOLDER");
    let review = review.to_string().replacen("\"PLACEHOLDER\"", &deep, 1);
    let resp = post(&c, &url, review).await;
    assert_eq!(resp.status(), 200);
    // Inside an object a family judges: parsing it meets the depth limit, and the object is
    // refused for it (CVN-109), not passed unjudged.
    let component = json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Component",
        "metadata": {"name": "deep", "namespace": "default"}, "spec": "PLACEHOLDER"});
    let mut review = common::review("deep", "openchoreo.dev", "Component", component);
    review["request"]["kind"]["version"] = json!("v1alpha1");
    let review = review.to_string().replacen("\"PLACEHOLDER\"", &deep, 1);
    let resp = post(&c, &url, review).await;
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["response"]["allowed"], false, "{body}");
    let cause = &body["response"]["status"]["details"]["causes"][0];
    assert_eq!(cause["reason"], "CVN-109", "{body}");
    assert!(cause["message"].as_str().unwrap().contains("recursion limit"), "{body}");
    // 100 levels inside a judged object (a CRD's schema, walked by the schema loader): judged.
    let mut schema = json!({"type": "string"});
    for _ in 0..100 {
        schema = json!({"type": "object", "properties": {"a": schema}});
    }
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": schema}}}}]}});
    let review = common::review("deep-crd", "apiextensions.k8s.io", "CustomResourceDefinition", crd);
    let resp = post(&c, &url, review.to_string()).await;
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["response"]["uid"], "deep-crd");
    still_answers(&server).await;
}

/// A body over the limit is refused with a 413. Over HTTP/2 the stream is reset and the 413
/// always arrives. Over HTTP/1.1 the server answers and closes while the client is still
/// writing, so the client may see the pipe break before it reads the 413 (as the apiserver
/// would): then the failure must be the write, never a timeout.
async fn too_large(sent: reqwest::Result<reqwest::Response>, h2: bool, declared: bool) {
    match sent {
        Ok(resp) => {
            let (status, detail) = refusal(resp).await;
            assert_eq!(status, 413, "{detail}");
            if declared {
                assert!(detail.contains("bodyLimitBytes"), "{detail}");
            }
        }
        Err(e) if !h2 => assert!(e.is_request() && !e.is_timeout(), "{e}"),
        Err(e) => panic!("HTTP/2 must always receive the 413: {e}"),
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_10_mb_body_is_refused_declared_or_streamed() {
    let server = TestServer::start().await;
    let url = server.url("/api/v0/validate");
    let mut review = sample();
    review["request"]["object"]["padding"] = json!("x".repeat(10 * 1024 * 1024));
    let body = review.to_string();
    assert!(body.len() > 10 * 1024 * 1024);
    for (c, h2) in [(server.h1(), false), (server.h2(), true)] {
        // Declared: refused on the Content-Length alone.
        let sent = c.post(&url).header("content-type", "application/json").body(body.clone()).send().await;
        too_large(sent, h2, true).await;
        // Streamed without a length: refused when the limit is crossed.
        let chunks: Vec<Result<Vec<u8>, std::io::Error>> =
            body.as_bytes().chunks(64 * 1024).map(|c| Ok(c.to_vec())).collect();
        let stream = reqwest::Body::wrap_stream(futures_util::stream::iter(chunks));
        let sent = c.post(&url).header("content-type", "application/json").body(stream).send().await;
        too_large(sent, h2, false).await;
    }
    still_answers(&server).await;
}

/// A body that sends one byte every `gap`, `total` bytes in all.
fn trickle(total: usize, gap: Duration) -> reqwest::Body {
    let stream = futures_util::stream::unfold(0usize, move |sent| async move {
        if sent == total {
            return None;
        }
        tokio::time::sleep(gap).await;
        Some((Ok::<_, std::io::Error>(vec![b' ']), sent + 1))
    });
    reqwest::Body::wrap_stream(stream)
}

/// A review body of 200 bytes that takes 20 s to send.
async fn post_slowly(client: &reqwest::Client, url: &str) -> reqwest::Result<reqwest::Response> {
    client
        .post(url)
        .header("content-type", "application/json")
        .header("content-length", "200")
        .body(trickle(200, Duration::from_millis(100)))
        .send()
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn slow_bodies_are_cut_off_at_the_read_timeout_while_others_are_answered() {
    let server =
        Arc::new(TestServer::with(Setup { read_timeout: Duration::from_secs(1), ..Setup::default() }).await);
    let url = server.url("/api/v0/validate");
    // Twenty slow clients over both protocols, each of which would take 20 s to finish.
    let mut slow = Vec::new();
    for i in 0..20 {
        let c = if i % 2 == 0 { server.h1() } else { server.h2() };
        let url = url.clone();
        slow.push(tokio::spawn(async move {
            let started = Instant::now();
            let resp = post_slowly(&c, &url).await;
            (resp, started.elapsed())
        }));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    still_answers(&server).await;
    for task in slow {
        let (resp, took) = task.await.unwrap();
        assert!(took < Duration::from_secs(10), "a slow client held on for {took:?}");
        // The server answers 408; a client still writing may see the connection end instead.
        if let Ok(resp) = resp {
            let (status, detail) = refusal(resp).await;
            assert_eq!(status, 408, "{detail}");
            assert!(detail.contains("--read-timeout"), "{detail}");
        }
    }
    still_answers(&server).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn streams_of_one_http2_connection_are_answered_while_another_waits_for_its_body() {
    // A connection's streams are run by its own task: one waiting for its body must not hold
    // up the others on that connection, nor they it.
    let server =
        Arc::new(TestServer::with(Setup { read_timeout: Duration::from_secs(3), ..Setup::default() }).await);
    let (client, url) = (server.h2(), server.url("/api/v0/validate"));
    assert_eq!(post(&client, &url, sample().to_string()).await.status(), 200);
    let slow: Vec<_> = (0..4)
        .map(|_| {
            let (client, url) = (client.clone(), url.clone());
            tokio::spawn(async move { refusal(post_slowly(&client, &url).await.unwrap()).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let started = Instant::now();
    let quick: Vec<_> = (0..32)
        .map(|i| {
            let (client, url) = (client.clone(), url.clone());
            let mut review = sample();
            review["request"]["uid"] = json!(format!("quick-{i}"));
            tokio::spawn(async move {
                post(&client, &url, review.to_string()).await.json::<Value>().await.unwrap()
            })
        })
        .collect();
    for (i, task) in quick.into_iter().enumerate() {
        assert_eq!(task.await.unwrap()["response"]["uid"], format!("quick-{i}"));
    }
    assert!(started.elapsed() < Duration::from_secs(2), "answered in {:?}", started.elapsed());
    assert!(slow.iter().all(|t| !t.is_finished()), "the slow streams are still sending");
    for task in slow {
        let (status, detail) = task.await.unwrap();
        assert_eq!(status, 408, "{detail}");
    }
    // All of it went over the one connection.
    let metrics = server.metrics().await;
    assert!(metrics.contains(r#"covenant_connections_open{listener="webhook"} 1"#), "{metrics}");
}

/// A TLS connection to the server, handshake done, for writing raw HTTP/1.1.
async fn raw_tls(server: &TestServer) -> tokio_rustls::client::TlsStream<TcpStream> {
    common::tls_to(server.webhook, &server.ca_pem, Vec::new()).await
}

/// Whether the server closed the connection within `within` (a read sees the end or an error).
async fn closed_within<S: tokio::io::AsyncRead + Unpin>(stream: &mut S, within: Duration) -> bool {
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return true,
            Ok(Ok(_)) => continue, // an answer (such as a 408) before the close
            Err(_) => return false,
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn slow_headers_are_cut_off_at_the_idle_timeout() {
    let server = TestServer::with(Setup { idle_timeout: Duration::from_secs(1), ..Setup::default() }).await;
    let mut clients = Vec::new();
    for _ in 0..20 {
        let mut s = raw_tls(&server).await;
        // Half a request head, then nothing.
        s.write_all(b"POST /api/v0/validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: appl")
            .await
            .unwrap();
        s.flush().await.unwrap();
        clients.push(s);
    }
    still_answers(&server).await;
    for mut s in clients {
        assert!(closed_within(&mut s, Duration::from_secs(10)).await, "a slow head was waited for");
    }
    still_answers(&server).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn clients_that_never_finish_the_handshake_are_dropped_and_others_served() {
    let server =
        TestServer::with(Setup { handshake_timeout: Duration::from_secs(1), ..Setup::default() }).await;
    let mut stalled = Vec::new();
    for i in 0..50 {
        let mut tcp = TcpStream::connect(server.webhook).await.unwrap();
        if i % 2 == 0 {
            // The first bytes of a ClientHello record, and no more.
            tcp.write_all(&[0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00]).await.unwrap();
        }
        stalled.push(tcp);
    }
    still_answers(&server).await;
    for mut tcp in stalled {
        assert!(closed_within(&mut tcp, Duration::from_secs(10)).await, "a stalled handshake was kept");
    }
    still_answers(&server).await;
}

/// `request.object` and `request.oldObject` that are present but not JSON objects are a 400
/// naming the member, for every family's kinds; never judged on a made-up value.
#[tokio::test(flavor = "multi_thread")]
async fn an_object_that_is_not_a_json_object_is_a_400_for_every_family() {
    let server = TestServer::start().await;
    let c = server.h2();
    let url = server.url("/api/v0/validate");
    let kinds = [
        ("", "Pod"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
        ("apiextensions.crossplane.io", "CompositeResourceDefinition"),
        ("openchoreo.dev", "Component"),
        ("openchoreo.dev", "ClusterComponentType"),
        ("launcher.gokure.dev", "Application"),
    ];
    for (group, kind) in kinds {
        for (member, value) in [("object", json!([1])), ("object", json!("x")), ("oldObject", json!(3))] {
            let mut review = common::review("u", group, kind, json!({"metadata": {"name": "x"}}));
            review["request"]["operation"] = json!("UPDATE");
            review["request"]["oldObject"] = json!({"metadata": {"name": "x"}});
            review["request"][member] = value.clone();
            let (status, detail) = refusal(post(&c, &url, review.to_string()).await).await;
            assert_eq!(status, 400, "{kind} {member} = {value}");
            assert!(detail.contains(&format!("request.{member}")), "{kind}: {detail}");
        }
    }
    still_answers(&server).await;
}

/// The `group` and `kind` labels of the request metrics come from the kinds a family claims:
/// made-up values from a client are counted as `other`, so /metrics cannot grow without bound.
#[tokio::test(flavor = "multi_thread")]
async fn metric_labels_stay_bounded_whatever_kinds_a_client_sends() {
    let server = TestServer::start().await;
    let c = server.h1();
    let url = server.url("/api/v0/validate");
    for i in 0..50 {
        let body = common::review(
            "u",
            &format!("group{i}.example.com"),
            &format!("Kind{i}"),
            json!({"metadata": {"name": "x"}}),
        );
        assert_eq!(post(&c, &url, body.to_string()).await.status(), 200);
        let body =
            common::review("u", "openchoreo.dev", &format!("Made{i}"), json!({"metadata": {"name": "x"}}));
        assert_eq!(post(&c, &url, body.to_string()).await.status(), 200);
    }
    let component = common::review("c", "openchoreo.dev", "Component", json!({"metadata": {"name": "x"}}));
    post(&c, &url, component.to_string()).await;
    let metrics = server.metrics().await;
    assert!(
        !metrics.contains("Kind7") && !metrics.contains("group7") && !metrics.contains("Made7"),
        "{metrics}"
    );
    assert!(metrics.contains(r#"group="other",kind="other""#), "{metrics}");
    assert!(metrics.contains(r#"group="openchoreo.dev",kind="other""#), "{metrics}");
    assert!(metrics.contains(r#"group="openchoreo.dev",kind="Component""#), "{metrics}");
    let series = metrics.lines().filter(|l| l.starts_with("covenant_admission_requests_total{")).count();
    assert!(series <= 4, "{series} series:\n{metrics}");
}

/// A JSON Schema of `depth` levels of definitions where every level references the next
/// twice, three ways: `tree` through two properties (2^depth paths through objects), `choice`
/// through `anyOf` and `every` through `allOf` (2^depth branches tried on one value). Under
/// 3 KB at depth 10, some 8 KB at depth 40; inlined, the tree alone would be 2^depth nodes.
fn doubling_schema(depth: usize, leaf: &[&str]) -> Value {
    let mut defs = serde_json::Map::new();
    for i in 0..depth {
        let next = |p: &str| json!({"$ref": format!("#/$defs/{p}{}", i + 1)});
        defs.insert(
            format!("T{i}"),
            json!({"type": "object", "properties": {"a": next("T"), "b": next("T")}}),
        );
        defs.insert(format!("C{i}"), json!({"anyOf": [next("C"), next("C")]}));
        defs.insert(format!("A{i}"), json!({"allOf": [next("A"), next("A")]}));
    }
    defs.insert(format!("T{depth}"), json!({"type": "string", "enum": leaf}));
    defs.insert(format!("C{depth}"), json!({"type": "integer", "minimum": 0}));
    defs.insert(format!("A{depth}"), json!({"type": "integer", "maximum": 5}));
    json!({
        "type": "object",
        "$defs": defs,
        "properties": {
            "tree": {"$ref": "#/$defs/T0"},
            "choice": {"$ref": "#/$defs/C0"},
            "every": {"$ref": "#/$defs/A0"},
        }
    })
}

fn construct_with(schema: Value, version: &str) -> Value {
    json!({
        "apiVersion": "openchoreo.dev/v1alpha1",
        "kind": "ClusterComponentType",
        "metadata": {
            "name": "doubling-v1",
            "labels": {"openchoreo.dev/name": "doubling", "openchoreo.dev/version": version},
            "annotations": {"openchoreo.dev/version": version}
        },
        "spec": {"workloadType": "deployment", "parameters": {"openAPIV3Schema": schema}, "resources": []}
    })
}

/// Shared definitions stay shared: a schema whose definitions reference the next level twice
/// at each of 40 levels (2^40 paths, some 8 KB of text) is loaded, diffed and answered — an
/// inlining loader would never finish. The leaf change is found, once per path it is reached
/// by (capped), and classified MAJOR.
#[tokio::test(flavor = "multi_thread")]
async fn an_exponential_ref_schema_is_loaded_and_diffed_once_per_definition() {
    let server = TestServer::start().await;
    let c = server.h2();
    let old = construct_with(doubling_schema(40, &["x", "y"]), "1.0.0");
    let new = construct_with(doubling_schema(40, &["x"]), "1.0.1");
    assert!(old.to_string().len() < 10_000, "{} bytes", old.to_string().len());
    let mut review = common::review("exp", "openchoreo.dev", "ClusterComponentType", new);
    review["request"]["operation"] = json!("UPDATE");
    review["request"]["oldObject"] = old;
    let resp = post(&c, &server.url("/api/v0/validate"), review.to_string()).await;
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.unwrap();
    assert_eq!(body["response"]["allowed"], false, "{body}");
    let message = body["response"]["status"]["message"].as_str().unwrap();
    assert!(message.contains("CVN-212") && message.contains("parameters.tree.a.a"), "{message}");
    still_answers(&server).await;
}

/// `covenant check --context` of a Component pinned to a construct of `schema`, with these
/// parameters.
fn check_component(schema: Value, parameters: Value) -> (tempfile::TempDir, assert_cmd::Command) {
    let temp = tempfile::tempdir().unwrap();
    let dir = temp.path();
    let construct = construct_with(schema, "1.0.0");
    std::fs::write(dir.join("construct.json"), construct.to_string()).unwrap();
    let component = json!({
        "apiVersion": "openchoreo.dev/v1alpha1",
        "kind": "Component",
        "metadata": {"name": "web", "namespace": "shop"},
        "spec": {
            "owner": {"projectName": "shop"},
            "componentType": {"kind": "ClusterComponentType", "name": "deployment/doubling", "version": "1"},
            "parameters": parameters
        }
    });
    std::fs::write(dir.join("component.json"), component.to_string()).unwrap();
    let mut cmd = assert_cmd::Command::cargo_bin("covenant").unwrap();
    cmd.args(["check", "--context"]).arg(dir.join("construct.json")).arg(dir.join("component.json"));
    (temp, cmd)
}

/// Parameters validated against the doubling schema: a value every `anyOf` branch refuses
/// and one every `allOf` member refuses are each reported, having tried each definition once
/// per value rather than 2^40 times.
#[test]
fn parameters_are_validated_against_an_exponential_schema_once_per_definition() {
    let (_dir, mut cmd) = check_component(
        doubling_schema(40, &["x", "y"]),
        json!({"choice": -1, "every": 10, "tree": {"a": {"b": {}}}}),
    );
    let out = cmd.timeout(Duration::from_secs(60)).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("/spec/parameters/choice") && text.contains("anyOf"), "{text}");
    assert!(text.contains("/spec/parameters/every") && text.contains("at most 5"), "{text}");
}

/// The backstop: a schema that builds more nodes than covenant reads (a 1,000-property
/// definition referenced with a keyword beside `$ref` from 300 places) is CVN-109 naming
/// the limit, in well under the text's square.
#[test]
fn a_schema_over_the_node_limit_is_cvn_109_naming_the_limit() {
    let wide: serde_json::Map<String, Value> =
        (0..1000).map(|i| (format!("p{i}"), json!({"type": "string"}))).collect();
    let sites: serde_json::Map<String, Value> = (0..300)
        .map(|i| (format!("s{i}"), json!({"$ref": "#/$defs/Wide", "description": format!("site {i}")})))
        .collect();
    let schema = json!({"type": "object", "$defs": {"Wide": {"type": "object", "properties": wide}}, "properties": sites});
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("construct.json");
    std::fs::write(&input, construct_with(schema, "1.0.0").to_string()).unwrap();
    let out = assert_cmd::Command::cargo_bin("covenant")
        .unwrap()
        .arg("check")
        .arg(&input)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("CVN-109") && text.contains("200000 schema nodes"), "{text}");
}

/// What covenant cannot read is said: a consumer of a construct whose schema nests
/// definitions deeper than covenant reads gets a CVN-107 warning that its values were not
/// checked, never a silent pass.
#[test]
fn values_against_a_schema_covenant_cannot_read_are_reported_unchecked() {
    let (_dir, mut cmd) = check_component(doubling_schema(70, &["x"]), json!({"choice": 1}));
    let out = cmd.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("warning[CVN-107]") && text.contains("not checked"), "{text}");
    assert!(text.contains("more than 64 deep"), "{text}");
}

/// Cluster state that takes `delay` to answer every list (a slow or overloaded apiserver
/// behind a lookup that cannot be served from a cache), counting lists begun and ended.
struct SlowCluster {
    delay: Duration,
    begun: std::sync::atomic::AtomicUsize,
    ended: std::sync::atomic::AtomicUsize,
}

impl SlowCluster {
    fn new(delay: Duration) -> Arc<SlowCluster> {
        Arc::new(SlowCluster { delay, begun: Default::default(), ended: Default::default() })
    }

    fn ended(&self) -> usize {
        self.ended.load(std::sync::atomic::Ordering::SeqCst)
    }
}

impl covenant::cluster::ClusterView for SlowCluster {
    fn list(
        &self,
        _: &str,
        _: &str,
        _: Option<&str>,
        _: Option<Duration>,
    ) -> Result<Vec<Arc<Value>>, covenant::cluster::Error> {
        self.begun.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        std::thread::sleep(self.delay);
        self.ended.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Ok(Vec::new())
    }
}

/// A Component whose pin must be resolved against cluster state: a review that looks up.
fn pinned_component(uid: &str) -> Value {
    common::review(
        uid,
        "openchoreo.dev",
        "Component",
        json!({"apiVersion": "openchoreo.dev/v1alpha1", "kind": "Component",
               "metadata": {"name": "web", "namespace": "shop"},
               "spec": {"owner": {"projectName": "shop"},
                        "componentType": {"kind": "ComponentType", "name": "deployment/web-service", "version": "1"}}}),
    )
}

async fn slow_server(
    cluster: &Arc<SlowCluster>,
    edit: impl FnOnce(&mut covenant::config::Config),
) -> TestServer {
    let mut setup = Setup { cluster: Some(cluster.clone()), ..Setup::default() };
    edit(&mut setup.config);
    TestServer::with(setup).await
}

/// Reviews are judged off the workers that serve connections: while more reviews than there
/// are workers wait on a slow lookup, probes, /metrics and a review that looks nothing up are
/// all answered — before any of the slow lookups has returned.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_reviews_never_stall_probes_or_other_reviews() {
    let cluster = SlowCluster::new(Duration::from_secs(4));
    let server = slow_server(&cluster, |_| {}).await;
    let c = server.h2();
    let url = server.url("/api/v0/validate");
    let slow: Vec<_> = (0..6)
        .map(|i| {
            let (c, url) = (c.clone(), url.clone());
            tokio::spawn(
                async move { post(&c, &url, pinned_component(&format!("slow-{i}")).to_string()).await },
            )
        })
        .collect();
    while cluster.begun.load(std::sync::atomic::Ordering::SeqCst) < 6 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let admin = format!("http://{}", server.admin);
    for path in ["/livez", "/readyz", "/metrics"] {
        let resp = reqwest::get(format!("{admin}{path}")).await.unwrap();
        assert_eq!(resp.status(), 200, "{path}");
    }
    let resp = post(&c, &url, sample().to_string()).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(cluster.ended(), 0, "answered only after a slow lookup returned");
    for s in slow {
        assert_eq!(s.await.unwrap().status(), 200);
    }
}

/// A pinned Component over the size decoded where it is read (64 KiB): read and judged on the
/// blocking pool in one hand-off.
fn large_pinned_component(uid: &str) -> Value {
    let mut review = pinned_component(uid);
    review["request"]["object"]["metadata"]["annotations"] = json!({"note": "x".repeat(96 * 1024)});
    review
}

/// A review whose lookup outlasts the request's deadline is answered at the deadline, per the
/// failure policy, saying so — not when the lookup returns. A large review, read on the
/// blocking pool, is answered the same way, naming its uid.
#[tokio::test(flavor = "multi_thread")]
async fn a_review_not_judged_by_its_deadline_is_answered_per_the_failure_policy() {
    for (allow, large) in [(false, false), (true, false), (false, true), (true, true)] {
        let cluster = SlowCluster::new(Duration::from_secs(4));
        let server = slow_server(&cluster, |c| {
            if allow {
                c.failure_policy = covenant::config::FailurePolicy::Allow;
            }
        })
        .await;
        let url = server.url("/api/v0/validate?timeout=1s");
        let review = if large { large_pinned_component("late") } else { pinned_component("late") };
        let resp = post(&server.h2(), &url, review.to_string()).await;
        assert_eq!(resp.status(), 200);
        let body: Value = resp.json().await.unwrap();
        assert_eq!(cluster.ended(), 0, "answered only after the lookup returned");
        let r = &body["response"];
        assert_eq!(r["uid"], "late");
        assert_eq!(r["allowed"], allow, "{body}");
        let said = if allow { r["warnings"][0].as_str() } else { r["status"]["message"].as_str() };
        let said = said.unwrap_or_default();
        assert!(
            said.contains("could not judge this Component within the request's deadline of 1s"),
            "{said}"
        );
        if !allow {
            assert_eq!(r["status"]["code"], 503);
        }
        assert!(server.metrics().await.contains(r#"decision="unjudged""#));
        still_answers(&server).await;
    }
}

/// An operation no rule judges is admitted with a warning that says no rule ran, whether the
/// review is small or large (read on the blocking pool).
#[tokio::test(flavor = "multi_thread")]
async fn an_operation_no_rule_judges_is_admitted_saying_so_at_any_size() {
    let cluster = SlowCluster::new(Duration::from_secs(4));
    let server = slow_server(&cluster, |_| {}).await;
    for large in [false, true] {
        let mut review = if large { large_pinned_component("odd") } else { pinned_component("odd") };
        review["request"]["operation"] = json!("PATCH");
        let resp = post(&server.h2(), &server.url("/api/v0/validate"), review.to_string()).await;
        assert_eq!(resp.status(), 200);
        let body: Value = resp.json().await.unwrap();
        let r = &body["response"];
        assert_eq!((&r["uid"], &r["allowed"]), (&json!("odd"), &json!(true)), "{body}");
        let warning = r["warnings"][0].as_str().unwrap_or_default();
        assert!(warning.contains(r#"operation "PATCH" is not one of"#), "{warning}");
        assert_eq!(cluster.begun.load(std::sync::atomic::Ordering::SeqCst), 0, "a rule looked something up");
    }
}

/// Past `server.maxReviewsInFlight`, a review waits for a turn until its deadline and is then
/// answered 429 with Retry-After; the review holding the turn is answered as usual.
#[tokio::test(flavor = "multi_thread")]
async fn reviews_past_the_in_flight_limit_wait_then_get_429() {
    let cluster = SlowCluster::new(Duration::from_secs(3));
    let server = slow_server(&cluster, |c| c.reviews_in_flight = 1).await;
    let c = server.h2();
    let first = {
        let (c, url) = (c.clone(), server.url("/api/v0/validate"));
        tokio::spawn(async move { post(&c, &url, pinned_component("first").to_string()).await })
    };
    while cluster.begun.load(std::sync::atomic::Ordering::SeqCst) < 1 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let resp = post(&c, &server.url("/api/v0/validate?timeout=1s"), sample().to_string()).await;
    assert_eq!(resp.headers()["retry-after"], "1");
    let (status, detail) = refusal(resp).await;
    assert_eq!(status, 429);
    assert!(detail.contains("server.maxReviewsInFlight"), "{detail}");
    assert_eq!(first.await.unwrap().status(), 200);
    still_answers(&server).await;
}

/// A TLS connection with ALPN `h2`, handshake done.
async fn h2_tls(addr: std::net::SocketAddr, ca_pem: &str) -> tokio_rustls::client::TlsStream<TcpStream> {
    common::tls_h2(addr, ca_pem).await
}

/// `--idle-timeout` holds for every connection: a TLS connection that sends nothing after
/// the handshake, an HTTP/2 connection that stays idle while answering the server's pings
/// (and pinging itself), and a half-sent request on the admin port are all closed.
#[tokio::test(flavor = "multi_thread")]
async fn silent_and_idle_connections_are_closed_after_the_idle_timeout() {
    let server = TestServer::with(Setup { idle_timeout: Duration::from_secs(1), ..Setup::default() }).await;
    let mut silent = raw_tls(&server).await;
    let mut idle_h1 = raw_tls(&server).await;
    let body = sample().to_string();
    let head = format!(
        "POST /api/v0/validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    idle_h1.write_all(format!("{head}{body}").as_bytes()).await.unwrap();
    let mut answer = [0u8; 12];
    idle_h1.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"HTTP/1.1 200");

    let io = hyper_util::rt::TokioIo::new(h2_tls(server.webhook, &server.ca_pem).await);
    let (mut sender, conn) = hyper::client::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
        .timer(hyper_util::rt::TokioTimer::new())
        .keep_alive_interval(Duration::from_millis(200))
        .keep_alive_while_idle(true)
        .handshake::<_, String>(io)
        .await
        .unwrap();
    let idle_h2 = tokio::spawn(conn);
    let request = http::Request::post(server.url("/api/v0/validate"))
        .header("content-type", "application/json")
        .body(sample().to_string())
        .unwrap();
    assert_eq!(sender.send_request(request).await.unwrap().status(), 200);

    let mut admin = TcpStream::connect(server.admin).await.unwrap();
    admin.write_all(b"GET /livez HTTP/1.1\r\nHost: x\r\nAcc").await.unwrap();

    assert!(
        closed_cleanly(&mut silent).await,
        "a silent TLS connection was kept, or closed without close_notify"
    );
    assert!(
        closed_cleanly(&mut idle_h1).await,
        "an idle HTTP/1.1 connection was kept, or closed without close_notify"
    );
    assert!(closed_within(&mut admin, Duration::from_secs(10)).await, "a half-sent admin request was kept");
    let ended = tokio::time::timeout(Duration::from_secs(10), idle_h2).await;
    assert!(ended.is_ok(), "an idle HTTP/2 connection answering pings was kept");
    let metrics = server.metrics().await;
    let closed = metrics
        .lines()
        .find(|l| {
            l.starts_with(r#"covenant_connection_events_total{event="idle_closed",listener="webhook"}"#)
        })
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|n| n.parse::<u64>().ok());
    assert!(closed.is_some_and(|n| n >= 2), "{metrics}");
    still_answers(&server).await;
}

/// The idle timeout counts from a connection's last request: an HTTP/2 connection that sends
/// a review every 400 ms for longer than the timeout (1 s) is served on the same connection
/// throughout, and once it stops it is closed about one timeout after its last answer.
#[tokio::test(flavor = "multi_thread")]
async fn the_idle_timeout_counts_from_the_last_request() {
    let server = TestServer::with(Setup { idle_timeout: Duration::from_secs(1), ..Setup::default() }).await;
    let io = hyper_util::rt::TokioIo::new(h2_tls(server.webhook, &server.ca_pem).await);
    let (mut sender, conn) = hyper::client::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
        .handshake::<_, String>(io)
        .await
        .unwrap();
    let conn = tokio::spawn(conn);
    for _ in 0..7 {
        let request = http::Request::post(server.url("/api/v0/validate"))
            .header("content-type", "application/json")
            .body(sample().to_string())
            .unwrap();
        let answer = sender.send_request(request).await.expect("closed while in use");
        assert_eq!(answer.status(), 200);
        tokio::time::sleep(Duration::from_millis(400)).await;
    }
    let last = Instant::now() - Duration::from_millis(400);
    let ended = tokio::time::timeout(Duration::from_secs(10), conn).await;
    assert!(ended.is_ok(), "an idle HTTP/2 connection was kept");
    let after = last.elapsed();
    assert!(after >= Duration::from_millis(900), "closed {after:?} after its last answer");
}

/// Whether the server ends the TLS stream within 10 s with a close_notify (a clean end of
/// stream; an abrupt close reads as an error).
async fn closed_cleanly(stream: &mut tokio_rustls::client::TlsStream<TcpStream>) -> bool {
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Ok(Ok(0)) => return true,
            Ok(Ok(_)) => continue,
            Ok(Err(_)) | Err(_) => return false,
        }
    }
}

/// At `--max-connections`, a new connection is not left waiting behind idle ones: the one idle
/// the longest is closed to make room (the oldest of the held), and no more than the cap are
/// ever open.
#[tokio::test(flavor = "multi_thread")]
async fn connections_past_the_cap_take_the_place_of_the_idlest() {
    let server = TestServer::with(Setup { max_connections: 3, ..Setup::default() }).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(raw_tls(&server).await);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let stream = tokio::time::timeout(Duration::from_secs(3), h2_tls(server.webhook, &server.ca_pem)).await;
    assert!(stream.is_ok(), "the connection past the cap was never served");
    let mut oldest = held.remove(0);
    assert!(closed_within(&mut oldest, Duration::from_secs(2)).await, "the idlest connection was kept");
    let open = server.metrics().await;
    assert!(open.contains(r#"covenant_connections_open{listener="webhook"} 3"#), "{open}");
}

/// Draining: an HTTP/1.1 answer carries `Connection: close` and an HTTP/2 connection gets a
/// GOAWAY (its client sees the connection end once its streams are done), while the drain
/// delay keeps the listener serving.
#[tokio::test(flavor = "multi_thread")]
async fn draining_connections_are_told_to_go_elsewhere() {
    let mut server =
        TestServer::with(Setup { drain_delay: Duration::from_secs(3), ..Setup::default() }).await;
    let h1 = server.h1();
    let url = server.url("/api/v0/validate");
    assert_eq!(post(&h1, &url, sample().to_string()).await.status(), 200);

    let io = hyper_util::rt::TokioIo::new(h2_tls(server.webhook, &server.ca_pem).await);
    let (mut sender, conn) =
        hyper::client::conn::http2::handshake::<_, _, String>(hyper_util::rt::TokioExecutor::new(), io)
            .await
            .unwrap();
    let h2 = tokio::spawn(conn);
    let request =
        http::Request::post(&url).header("content-type", "application/json").body(sample().to_string());
    assert_eq!(sender.send_request(request.unwrap()).await.unwrap().status(), 200);

    let stopped = server.shutdown();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let resp = post(&h1, &url, sample().to_string()).await;
    assert_eq!(resp.status(), 200);
    assert_eq!(resp.headers().get("connection").map(|v| v.to_str().unwrap()), Some("close"));
    let ended = tokio::time::timeout(Duration::from_secs(2), h2).await;
    assert!(ended.is_ok(), "the HTTP/2 connection got no GOAWAY during the drain delay");
    assert!(!stopped.is_finished(), "the drain delay was not kept");
    stopped.await.unwrap();
}

/// A refusal decided before the body is read reaches the client whole, over both protocols,
/// while the client is still sending a 168 KB body: a wrong Content-Type (415) and a bad
/// `?timeout=` (400).
#[tokio::test(flavor = "multi_thread")]
async fn early_refusals_of_a_large_body_reach_the_client() {
    let server = TestServer::start().await;
    let mut review = sample();
    review["request"]["object"]["padding"] = json!("x".repeat(168 * 1024));
    let body = review.to_string();
    for c in [server.h1(), server.h2()] {
        for _ in 0..5 {
            for (query, content_type, expected) in
                [("", "text/plain", 415), ("?timeout=soon", "application/json", 400)]
            {
                let sent = c
                    .post(server.url(&format!("/api/v0/validate{query}")))
                    .header("content-type", content_type)
                    .body(body.clone())
                    .send()
                    .await
                    .unwrap_or_else(|e| panic!("the {expected} was lost to a reset: {e}"));
                let (status, detail) = refusal(sent).await;
                assert_eq!(status, expected, "{detail}");
            }
        }
    }
    still_answers(&server).await;
}

/// SIGTERM is acted on at once while a review is being judged: readiness drops before the
/// review's slow lookup returns, and the review is still answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_is_acted_on_at_once_while_a_review_runs() {
    let cluster = SlowCluster::new(Duration::from_secs(3));
    let mut server = slow_server(&cluster, |_| {}).await;
    let review = {
        let (c, url) = (server.h2(), server.url("/api/v0/validate"));
        tokio::spawn(async move { post(&c, &url, pinned_component("during").to_string()).await })
    };
    while cluster.begun.load(std::sync::atomic::Ordering::SeqCst) < 1 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let stopped = server.shutdown();
    let readyz = format!("http://{}/readyz", server.admin);
    let mut dropped = false;
    for _ in 0..100 {
        let r = reqwest::get(&readyz).await.unwrap();
        if r.status() == 503 {
            dropped = r.text().await.unwrap().contains("draining");
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(dropped, "readiness did not drop");
    assert_eq!(cluster.ended(), 0, "readiness dropped only after the review's lookup returned");
    assert_eq!(review.await.unwrap().status(), 200);
    stopped.await.unwrap();
}

/// A webhook without cluster state (`--offline`, `--dev`) says in its answer what it could
/// not check.
#[tokio::test(flavor = "multi_thread")]
async fn an_offline_webhook_says_what_it_could_not_check() {
    let server = TestServer::start().await;
    let resp = post(&server.h2(), &server.url("/api/v0/validate"), pinned_component("off").to_string()).await;
    let body: Value = resp.json().await.unwrap();
    let warnings = body["response"]["warnings"].to_string();
    assert!(warnings.contains("CVN-406 not checked: no cluster state"), "{body}");
}

/// The webhook's `status.message` carries the did-you-mean hint `check` prints in its help:
/// the demo review of a launcher Application with `replicaz`.
#[tokio::test(flavor = "multi_thread")]
async fn the_webhook_message_carries_the_did_you_mean_hint() {
    let server = TestServer::start().await;
    let review = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/reviews/denied-application.json"),
    )
    .unwrap();
    let body: Value = post(&server.h2(), &server.url("/api/v0/validate"), review).await.json().await.unwrap();
    let message = body["response"]["status"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("replicaz") && message.contains("did you mean \"replicas\"?"), "{body}");
}

/// A review's turn is taken once its body is in: one HTTP/2 connection opening 40 streams that
/// declare a body and send none (a couple of KB sent in all) held all 32 turns for the
/// read timeout, and every other review was answered 429. Now the stalled streams hold
/// nothing, others are judged at once, and each stalled one is answered by its own deadline.
#[tokio::test(flavor = "multi_thread")]
async fn streams_that_declare_a_body_and_send_none_take_no_turn() {
    let server = Arc::new(TestServer::start().await);
    let stalled_client = server.h2();
    let stalled_url = format!("{}?timeout=3s", server.url("/api/v0/validate"));
    let started = Instant::now();
    let stalled: Vec<_> = (0..40)
        .map(|_| {
            let (client, url) = (stalled_client.clone(), stalled_url.clone());
            tokio::spawn(async move {
                let never = futures_util::stream::pending::<Result<Vec<u8>, std::io::Error>>();
                let resp = client
                    .post(&url)
                    .header("content-type", "application/json")
                    .header("content-length", "1000")
                    .body(reqwest::Body::wrap_stream(never))
                    .send()
                    .await;
                (resp.map(|r| r.status().as_u16()), started.elapsed())
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (client, url) = (server.h2(), server.url("/api/v0/validate"));
    let quick = Instant::now();
    for i in 0..8 {
        let mut review = sample();
        review["request"]["uid"] = json!(format!("quick-{i}"));
        let resp = post(&client, &url, review.to_string()).await;
        assert_eq!(resp.status(), 200, "a review beside the stalled streams");
    }
    assert!(quick.elapsed() < Duration::from_secs(2), "answered in {:?}", quick.elapsed());
    for task in stalled {
        let (status, took) = task.await.unwrap();
        assert!(took < Duration::from_secs(8), "a stalled stream was held {took:?}");
        if let Ok(status) = status {
            assert_eq!(status, 408, "a stalled stream is told its body did not arrive");
        }
    }
}

/// Probes can never be starved: 64 idle TCP connections to the admin listener (its cap), and
/// as many slow request heads, made /livez and /readyz unreachable for 120 s. At the cap the
/// connection idle the longest is closed for the new one, so a probe is answered at once;
/// a connection that never sends a byte is closed within seconds. The webhook's slots are
/// reclaimed the same way from silent TLS clients.
#[tokio::test(flavor = "multi_thread")]
async fn idle_connections_cannot_keep_probes_or_reviews_out() {
    let server = TestServer::with(Setup { max_connections: 8, ..Setup::default() }).await;
    let mut idle = Vec::new();
    for i in 0..128 {
        let mut tcp = TcpStream::connect(server.admin).await.unwrap();
        if i % 2 == 1 {
            tcp.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n").await.unwrap();
        }
        idle.push(tcp);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let probes = reqwest::Client::builder().timeout(Duration::from_secs(1)).build().unwrap();
    for path in ["/livez", "/readyz", "/livez"] {
        let resp = probes.get(format!("http://{}{path}", server.admin)).send().await;
        assert_eq!(resp.map(|r| r.status().as_u16()).ok(), Some(200), "{path} beside 128 idle connections");
    }
    // A connection that sends nothing is closed within seconds, not at the idle timeout.
    let mut silent = TcpStream::connect(server.admin).await.unwrap();
    assert!(closed_within(&mut silent, Duration::from_secs(8)).await, "a silent connection was kept");

    // The webhook: its 8 slots held by clients that finished the handshake and sent nothing.
    let mut silent_tls = Vec::new();
    for _ in 0..8 {
        silent_tls.push(raw_tls(&server).await);
    }
    let started = Instant::now();
    still_answers(&server).await;
    assert!(started.elapsed() < Duration::from_secs(2), "a review waited {:?} for a slot", started.elapsed());
    let metrics = server.metrics().await;
    assert!(metrics.contains(r#"event="reclaimed""#), "{metrics}");
}

/// Answers cannot pile up in memory: an HTTP/2 client that sets its stream window to 0 and
/// never reads pinned every answer it asked for (1,250 answers, 272 MB). Past 4 MiB of
/// answers a connection's client has not taken, the connection is closed and they are freed;
/// others are served throughout.
#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_never_reads_its_answers_is_cut_off() {
    let server = TestServer::with(Setup { config: common::versioned_config(), ..Setup::default() }).await;
    // A review whose answer is about 100 KB: 150 undeclared members with long names, each a
    // denial (causes capped at 100 of 1 KB).
    let mut doc = json!({"schema": "shop.app", "version": "1", "name": "web"});
    for i in 0..150 {
        doc[format!("member-{i}-{}", "x".repeat(1000))] = json!(i);
    }
    let body = common::review("big", "shop.example.com", "App", doc).to_string();
    // Each answer is large enough that 100 of them (the streams a connection may open) are
    // well past the 4 MiB a connection may hold unsent.
    let answer =
        post(&server.h2(), &server.url("/api/v0/validate"), body.clone()).await.bytes().await.unwrap();
    assert!(answer.len() * 100 > 6 << 20, "an answer of {} bytes", answer.len());
    let io = hyper_util::rt::TokioIo::new(h2_tls(server.webhook, &server.ca_pem).await);
    let (sender, conn) = hyper::client::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
        .initial_stream_window_size(0)
        .handshake::<_, String>(io)
        .await
        .unwrap();
    let connection = tokio::spawn(conn);
    let url = format!("{}?timeout=30s", server.url("/api/v0/validate"));
    let asked: Vec<_> = (0..100)
        .map(|_| {
            let mut sender = sender.clone();
            let request = http::Request::post(&url)
                .header("content-type", "application/json")
                .body(body.clone())
                .unwrap();
            // The answer is kept and never read: dropping it would reset its stream.
            tokio::spawn(async move { sender.send_request(request).await })
        })
        .collect();
    let mut kept = Vec::new();
    for task in asked {
        if let Ok(Ok(answer)) = task.await {
            kept.push(answer);
        }
    }
    // The server closes the connection; the client's side of it ends.
    let ended = tokio::time::timeout(Duration::from_secs(90), connection).await;
    drop(kept);
    assert!(
        ended.is_ok(),
        "a connection pinning its answers was kept open: {}",
        server
            .metrics()
            .await
            .lines()
            .filter(|l| l.contains("connection_events") || l.contains("admission_requests_total"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    let metrics = server.metrics().await;
    assert!(metrics.contains(r#"event="unread_closed""#), "{metrics}");
    still_answers(&server).await;
}

/// Readiness says when covenant cannot take a connection: with every webhook slot serving a
/// request (none idle to close), a new connection waits and /readyz answers 503 naming why,
/// until a slot is free again.
#[tokio::test(flavor = "multi_thread")]
async fn readiness_drops_while_every_connection_slot_serves_a_request() {
    let server = Arc::new(
        TestServer::with(Setup {
            max_connections: 2,
            read_timeout: Duration::from_secs(4),
            ..Setup::default()
        })
        .await,
    );
    let url = server.url("/api/v0/validate");
    let busy: Vec<_> = (0..2)
        .map(|_| {
            // A client of its own each: two connections, each serving a slow request.
            let (client, url) = (server.h1(), url.clone());
            tokio::spawn(async move { post_slowly(&client, &url).await.map(|r| r.status().as_u16()) })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let waiting = TcpStream::connect(server.webhook).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let ready = reqwest::get(format!("http://{}/readyz", server.admin)).await.unwrap();
    assert_eq!(ready.status(), 503);
    assert!(ready.text().await.unwrap().contains("connection slot"));
    for b in busy {
        let _ = b.await;
    }
    drop(waiting);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let ready = reqwest::get(format!("http://{}/readyz", server.admin)).await.unwrap();
    assert_eq!(ready.status(), 200);
}
